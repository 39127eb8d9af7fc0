"""Planar spin-up of a beam, Simo & Vu-Quoc's data (Meijaard 1993, sec. 5.1, Fig. 4).

A beam of length L = 10 m with rho_A = 1.2 kg/m, EI = 14000 N m^2, rho_I = 6e-4 kg m,
EA = 2.8e7 N and GA_k = 1e7 N is clamped to a hub at the origin whose angle is prescribed,

    psi(t) = (omega_s / T_s) [t^2 / 2 + (T_s / (2 pi))^2 (cos(2 pi t / T_s) - 1)],  t <= T_s,
    psi(t) = omega_s (t - T_s / 2),  t > T_s,

with omega_s = 6 rad/s, T_s = 15 s. Meijaard's planar beam element, ``Beam2D(mass="cubic",
second_order=True)`` (cubic consistent mass turned with the nodes, second-order strain, axial
deformation and rotary inertia included). Beam2D (Euler-Bernoulli) has no shear deformation; it
is negligible here: the shear share of a cantilever's tip deflection is about
3 EI / (GA_k L^2) = 3 * 14000 / (1e7 * 100) = 4e-5 (EI / (GA_k L^2) = 1.4e-5; per element of
2.5 m, EI / (GA_k l^2) = 2.2e-4). Root node ux = uy = 0, rz = psi(t); starts at rest. Mid-point
scheme to t = 20 s, dt = 0.005 s (quick: 0.02 s, the 16-element mesh 0.01 s).

Output: lateral tip deflection d = x_tip . (-sin psi, cos psi). Checked: the extreme (minimum)
with 4 elements within 1 % of -0.5739 m and with 2 elements within 1 % of -0.5726 m, and the
residual vibration amplitude (max - min) / 2 for t > 15 s with 4 elements within 20 % of
0.0037 m (Meijaard 1993, sec. 5.1 text and Fig. 4; his cubic beam element); with 16 elements,
the extreme within 1 % of -0.57384 m and the amplitude within 20 % of 0.00365 m, the independent
converged values (Exudyn 1.13.6, refs README item 6). The JSON holds the lumped and linear
consistent masses for comparison, the cantilever frequencies, run statistics and a time-step
study of the mid-point scheme and trapezoidal Newmark (fixed steps, no cut-back: largest dt of
0.16, 0.08, ..., 0.005 s keeping the 4-element extreme within 1 % of Meijaard's value and of the
time-converged value; 16 elements against the converged value; quick mode: dt = 0.04 and 0.02 s).
Model and helpers: :mod:`flexmb.validation.spin_up`.
"""
from __future__ import annotations

from flexmb.validation import CaseReport, print_report
from flexmb.validation.spin_up import SpinUpBeam, run_case

CASE = "spin-up-simo"
TITLE = ("Planar spin-up of a beam, Simo & Vu-Quoc's data: extreme tip deflection, residual vibration "
         "(Beam2D, cubic mass)")
SOURCE = "Meijaard 1993, sec. 5.1, Fig. 4"

LENGTH = 10.0        # m
GA_K = 1.0e7         # N, not modelled (Euler-Bernoulli elements)
EI = 14000.0         # N m^2

PARAMETERS = SpinUpBeam(
    case=CASE, length=LENGTH, EA=2.8e7, EI=EI, rho_A=1.2, rho_I=6e-4, omega_s=6.0, t_s=15.0,
    reference={4: -0.5739, 2: -0.5726}, converged=-0.57384, figure_source="Fig. 4",
    residual_amplitude=0.0037, converged_residual_amplitude=0.00365)


def run(quick: bool = False) -> CaseReport:
    report = run_case(PARAMETERS, quick, study=True)
    report.info["shear_flexibility_EI_over_GAk_L2"] = EI / (GA_K * LENGTH**2)
    return report


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
