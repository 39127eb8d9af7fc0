"""Planar spin-up of an aluminium beam, Kim & Haug's data (Meijaard 1993, sec. 5.1, Fig. 3).

A beam of length L = 8 m, rectangular section 0.03676 m x 0.001986 m with the 0.03676 m side in
the plane of rotation (in-plane bending I = 0.001986 * 0.03676^3 / 12 = 8.2189e-9 m^4; A =
7.3005e-5 m^2), rho = 2766.67 kg/m^3, E = 6.895e10 Pa, is clamped to a hub at the origin whose
angle is prescribed,

    psi(t) = (omega_s / T_s) [t^2 / 2 + (T_s / (2 pi))^2 (cos(2 pi t / T_s) - 1)],  t <= T_s,
    psi(t) = omega_s (t - T_s / 2),  t > T_s,

with omega_s = 4 rad/s, T_s = 15 s. Meijaard's planar beam element, ``Beam2D(mass="cubic",
second_order=True)`` (cubic consistent mass turned with the nodes, second-order strain, axial
deformation and rotary inertia included), with EA = E A, EI = E I, rho_A = rho A, rho_I = rho I;
root node ux = uy = 0, rz = psi(t); starts at rest. Mid-point scheme to t = 20 s, dt = 0.005 s
(quick: 0.02 s, the 16-element mesh 0.01 s).

Output: lateral tip deflection d = x_tip . (-sin psi, cos psi). Checked: the extreme (minimum)
with 4 elements within 1 % of -0.5360 m and with 2 elements within 1 % of -0.5338 m (Meijaard
1993, sec. 5.1 text and Fig. 3; his cubic beam element), and with 16 elements within 1 % of the
independent converged value -0.53377 m (Exudyn 1.13.6, refs README item 6). The JSON holds the
lumped and linear consistent masses for comparison, the cantilever frequencies and run statistics. Model and helpers:
:mod:`flexmb.validation.spin_up`.
"""
from __future__ import annotations

from flexmb.validation import CaseReport, print_report
from flexmb.validation.spin_up import SpinUpBeam, run_case

CASE = "spin-up-kim-haug"
TITLE = "Planar spin-up of a beam, Kim & Haug's data: extreme tip deflection (Beam2D, cubic mass)"
SOURCE = "Meijaard 1993, sec. 5.1, Fig. 3"

LENGTH = 8.0                       # m
WIDTH, THICKNESS = 0.03676, 0.001986   # m: in-plane depth, out-of-plane thickness
RHO, E = 2766.67, 6.895e10         # kg/m^3, Pa
AREA = WIDTH * THICKNESS
INERTIA = THICKNESS * WIDTH**3 / 12.0   # in-plane bending, m^4

PARAMETERS = SpinUpBeam(
    case=CASE, length=LENGTH, EA=E * AREA, EI=E * INERTIA, rho_A=RHO * AREA, rho_I=RHO * INERTIA,
    omega_s=4.0, t_s=15.0, reference={4: -0.5360, 2: -0.5338}, converged=-0.53377, figure_source="Fig. 3")


def run(quick: bool = False) -> CaseReport:
    report = run_case(PARAMETERS, quick)
    report.info["in_plane_I_m4"] = INERTIA
    return report


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
