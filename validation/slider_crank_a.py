"""Flexible slider-crank, case A: 124.8 rad/s, massless slider (Chu & Pan; Meijaard 1993, sec. 4).

Crank r = 0.1524 m, rigid, at the constant speed omega = 124.8 rad/s; connecting rod L = 0.3048 m,
round steel section d = 0.00635 m, rho = 7834.56 kg/m^3, E = 2.06843e11 Pa, no damping; massless
slider. The rod is Meijaard's planar beam element, ``Beam2D(mass="cubic", second_order=True)``
(cubic consistent mass turned with the nodes, second-order strain; axial deformation and rotary
inertia included, EA, EI, rho A, rho I of the round section); the crank pin, the rod's first
node, moves on the crank circle (prescribed ux, uy; rotation free), the slider end keeps uy = 0.
Rigid kinematics (theta = omega t, phi the rod angle):

    sin phi = -(r/L) sin theta,   phi' = -r omega cos theta / (L cos phi).

Initial state: theta = 0 at full speed, rod straight and undeformed with zero deformation rate,
so the rod moves with the rigid-body velocity field v(s) = (0, r omega (1 - s/L)) and every node
turns at phi'(0) = -r omega / L = -62.4 rad/s; the slider is at rest. Mid-point scheme over 8 rad
of crank rotation (0.0641 s), 2560 steps (quick: the first 2.5 rad at the step of 1280 per 8 rad).

Output: lateral deflection of the rod's mid-span node relative to the chord of its end nodes,
divided by L, positive to the left of the chord from crank pin to slider (as in Meijaard's Fig. 1).
Checked: the first maximum with 4 elements within 1 % of 0.00976 and with 2 elements within 1.5 %
of 0.00973 (Meijaard 1993, Table 3; his 2-element model neglects axial and shear deformation and
rotary inertia, which changes ours by ~1e-4, see the JSON), and with 16 elements within 1 % of
the independent converged value 0.009762 (at crank angle 0.690 rad; Exudyn 1.13.6, refs README
item 6). The JSON holds the lumped and linear consistent masses for comparison, the rod
frequencies, run statistics and a time-step study of the mid-point scheme and trapezoidal Newmark
(fixed steps t_end/40 ... t_end/5120, no cut-back: the largest step keeping the 4-element first
maximum within 1 % of Meijaard's value and of the time-converged value; 16 elements against the
converged value; quick mode: t_end/160 and t_end/320 over 2.5 rad).
Model and helpers: :mod:`flexmb.validation.slider_crank`.
"""
from __future__ import annotations

from flexmb.validation import CaseReport, print_report
from flexmb.validation.slider_crank import SliderCrankCase, run_case

CASE = "slider-crank-a"
TITLE = "Flexible slider-crank, 124.8 rad/s, massless slider: first maximum of the rod deflection (Beam2D, cubic mass)"
SOURCE = "Meijaard 1993, sec. 4, Table 3, Fig. 1"

PARAMETERS = SliderCrankCase(
    case=CASE, omega=124.8, slider_mass=0.0,
    reference={4: 0.00976, 2: 0.00973}, tolerance={4: 1e-2, 2: 1.5e-2},
    converged=0.009762, converged_angle=0.690, figure_source="Fig. 1")


def run(quick: bool = False) -> CaseReport:
    return run_case(PARAMETERS, quick, study=True)


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
