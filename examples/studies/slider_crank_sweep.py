"""Design study: the flexible slider-crank's rod stiffness and slider mass against the rod's deflection
====================================================================================================

The slider-crank of Meijaard (1993, section 4; Chu & Pan), case A geometry and crank speed
(omega = 124.8 rad/s, crank r = 0.1524 m, steel rod L = 0.3048 m of round section d = 6.35 mm),
model and output as in :mod:`flexmb.validation.slider_crank`: the rod is Meijaard's planar beam
``Beam2D(mass="cubic", second_order=True)``, the crank pin moves on the crank circle, the slider
end keeps uy = 0 and carries the point mass m_s; the rod starts straight, moving with the rigid
mechanism. Two design parameters (a 9 x 5 grid, 45 variants):

* ``EI_ratio`` = EI / EI_A, the rod's bending stiffness against case A's (0.5 ... 2, geometric
  steps; EA, rho A and rho I are case A's, as for a section of another shape and the same area);
* ``slider_mass`` m_s = 0 ... 2 m_ref (kg), m_ref = 0.0378126 kg (half the rod mass, case B's).

Quantities: ``peak``, the first maximum of the mid-span deflection relative to the chord of the
rod's ends, divided by L (sign and peak finding as in the validation case), and ``peak_time``,
its time (s). The mesh and step are those the validation case checks against the converged
value 0.009762 (16 elements, 2560 steps per 8 rad of crank rotation), simulating only the first
2.5 rad, which hold the first maximum. The rod's first bending period (7.3 ms at EI_A, pinned
ends) is a seventh of the crank period (50 ms): the response is not quasi-static, and the peak
falls faster than 1 / EI (quick grid, massless slider: 0.0224, 0.00975, 0.00394 at EI_ratio 0.5,
1, 2); a heavier slider lowers it a little (-7 % at m_ref, EI_A).

    flexmb study examples/studies/slider_crank_sweep.py --out study-results/slider-crank [--quick]

``--quick``: 3 x 2 variants (EI_ratio 0.5, 1, 2; m_s 0 and m_ref).
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.studies import Study, grid
from flexmb.validation.slider_crank import EI, build, first_maximum, midspan_deflection

OMEGA = 124.8                 # rad/s, case A crank speed
ELEMENTS = 16                 # the validation case's mesh-converged run
STEPS_PER_8_RAD = 2560        # the validation case's step, dt = (8 rad / omega) / 2560
TURN = 2.5                    # rad of crank rotation simulated (the first maximum lies in the first 2 rad)
REFERENCE_SLIDER_MASS = 0.0378126   # kg, half the rod mass (Meijaard's case B)


def run(params: dict) -> dict:
    """First maximum of the mid-span deflection / L and its time for one variant."""
    if params["EI_ratio"] <= 0.0 or params["slider_mass"] < 0.0:
        raise ValueError(f"EI_ratio must be positive and slider_mass non-negative, got {params}")
    asm, v0, _ = build(ELEMENTS, OMEGA, params["slider_mass"], ei=params["EI_ratio"] * EI)
    dt = 8.0 / OMEGA / STEPS_PER_8_RAD
    t_end = round(STEPS_PER_8_RAD * TURN / 8.0) * dt
    h = fm.integrate(asm, dt, t_end, scheme="mid-point", v0=v0, progress=False)
    angle = OMEGA * np.array(h.t)
    peak_angle, peak = first_maximum(angle, midspan_deflection(h.positions()))
    return {"peak": peak, "peak_time": peak_angle / OMEGA}


STUDY = Study(
    name="slider-crank-sweep", run=run,
    space=grid(EI_ratio=2.0 ** np.linspace(-1.0, 1.0, 9), slider_mass=REFERENCE_SLIDER_MASS * np.linspace(0, 2, 5)),
    quick_space=grid(EI_ratio=[0.5, 1.0, 2.0], slider_mass=[0.0, REFERENCE_SLIDER_MASS]),
    description=("Flexible slider-crank (Meijaard 1993 case A, 124.8 rad/s): first maximum of the rod's mid-span "
                 "deflection / L and its time against the rod's bending stiffness EI / EI_A and the slider mass "
                 "(kg); 16 Beam2D elements, cubic mass, mid-point scheme."),
    units={"EI_ratio": "-", "slider_mass": "kg", "peak": "m/m", "peak_time": "s"})
