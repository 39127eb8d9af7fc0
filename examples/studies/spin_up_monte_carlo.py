"""Design study: Monte Carlo of the spin-up beam's residual vibration with uncertain EI and rho A
==============================================================================================

The planar spin-up of Simo & Vu-Quoc's beam (Meijaard 1993, section 5.1, Fig. 4; validation case
``spin-up-simo``, model :mod:`flexmb.validation.spin_up`): L = 10 m, clamped to a hub whose angle
psi(t) takes it from rest to omega_s = 6 rad/s in T_s = 15 s (smooth profile, psi'' =
(omega_s / T_s)(1 - cos(2 pi t / T_s))), Meijaard's beam element ``Beam2D(mass="cubic",
second_order=True)``, mid-point scheme to t = 20 s. Nominal section: EI = 14000 N m^2,
rho A = 1.2 kg/m, EA = 2.8e7 N, rho I = 6e-4 kg m.

Uncertain parameters, independent normal, 5 % coefficient of variation, 100 samples (seed 18):
``EI`` (N m^2; the modulus is uncertain, so EA scales with it) and ``rho_A`` (kg/m; the density,
so rho I scales with it). Quantities: ``residual_amplitude`` (m), (max - min) / 2 of the lateral
tip deflection for t > T_s; ``extreme`` (m), its minimum over the run (the largest lag);
``residual_frequency`` (rad/s) of the vibration after T_s.

Mesh and step: 8 elements, dt = 0.01 s (0.6 s a run): at the nominal values the residual amplitude
is 0.00369 m against 0.0037 m (Meijaard, 4 elements) and the converged 0.00365 m, the extreme
-0.57391 m against -0.57384 m. Scaling EI, EA, rho A and rho I by one factor leaves the motion
unchanged (the equations of motion are only divided by it), so only EI / rho A matters. The
residual vibration is the response to the hub's acceleration pulse at the beam's frequency in the
hub frame, omega_r ~ 4.5 rad/s; its amplitude follows the pulse spectrum, which has zeros at
omega = 2 pi k / T_s (k >= 2; k = 11 at 4.61 rad/s): EI 5 % up moves omega_r to 4.59 rad/s and
the amplitude falls from 0.0037 to 0.0014 m, EI 5 % down raises it to 0.0058 m. In the 100
samples the amplitude against omega_r traces that spectrum (a sharp minimum of 0.0014 m at
4.60 rad/s, 0.0061 m at 4.38 rad/s): a 5 % scatter of the section spreads the residual amplitude
over 0.0014 ... 0.0061 m (mean 0.0039 m, c.o.v. 41 %), while the extreme tip deflection
(~ rho A / EI) scatters over -0.69 ... -0.48 m (mean -0.572 m, c.o.v. 6.8 %).

    flexmb study examples/studies/spin_up_monte_carlo.py --out study-results/spin-up [--quick]

``--quick``: 6 samples of the same distributions (seed 18).
"""
from __future__ import annotations

from flexmb.studies import Study, random_samples
from flexmb.validation.spin_up import SpinUpBeam, simulate

EI = 14000.0            # N m^2, Simo & Vu-Quoc's beam (Meijaard 1993, sec. 5.1)
RHO_A = 1.2             # kg/m
EA = 2.8e7              # N
RHO_I = 6e-4            # kg m
COV = 0.05              # coefficient of variation of EI and rho A
SAMPLES, QUICK_SAMPLES, SEED = 100, 6, 18
ELEMENTS = 8
DT = 0.01               # s


def beam(ei: float, rho_a: float) -> SpinUpBeam:
    """Simo & Vu-Quoc's beam with bending stiffness ``ei`` and mass per length ``rho_a``, EA and
    rho I scaled with them (an uncertain modulus and density)."""
    return SpinUpBeam(case="spin-up-monte-carlo", length=10.0, EA=EA * ei / EI, EI=ei, rho_A=rho_a,
                      rho_I=RHO_I * rho_a / RHO_A, omega_s=6.0, t_s=15.0, reference={}, converged=float("nan"),
                      figure_source="Fig. 4")


def run(params: dict) -> dict:
    """Residual amplitude, extreme tip deflection and residual frequency of one sample."""
    if params["EI"] <= 0.0 or params["rho_A"] <= 0.0:
        raise ValueError(f"EI and rho_A must be positive, got {params}")
    r = simulate(beam(params["EI"], params["rho_A"]), ELEMENTS, DT, max_cutbacks=0)
    if r.failed:
        raise RuntimeError(f"spin-up run failed: {r.failed}")
    return {"residual_amplitude": r.amplitude, "extreme": r.extreme, "residual_frequency": r.residual_frequency}


def distributions() -> dict[str, tuple[str, float, float]]:
    """The uncertain parameters: normal, mean the nominal value, std COV times it."""
    return {"EI": ("normal", EI, COV * EI), "rho_A": ("normal", RHO_A, COV * RHO_A)}


STUDY = Study(
    name="spin-up-monte-carlo", run=run,
    space=random_samples(distributions(), n=SAMPLES, seed=SEED),
    quick_space=random_samples(distributions(), n=QUICK_SAMPLES, seed=SEED),
    description=("Spin-up beam (Simo & Vu-Quoc; Meijaard 1993 sec. 5.1): Monte Carlo of the residual vibration "
                 "amplitude (m) after spin-up, the extreme tip deflection (m) and the residual frequency (rad/s) "
                 "with EI and rho A normal, 5 % c.o.v.; 8 Beam2D elements, cubic mass, dt = 0.01 s."),
    units={"EI": "N m^2", "rho_A": "kg/m", "residual_amplitude": "m", "extreme": "m", "residual_frequency": "rad/s"})
