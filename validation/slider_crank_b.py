"""Flexible slider-crank, case B: 150 rad/s, slider mass 0.0378126 kg (Meijaard 1993, sec. 4).

The mechanism of case A (crank r = 0.1524 m rigid at constant speed, rod L = 0.3048 m, round steel
section d = 0.00635 m, rho = 7834.56 kg/m^3, E = 2.06843e11 Pa, no damping), run faster,
omega = 150 rad/s, with a slider of half the rod mass, 0.0378126 kg, where the coupling of the
gross motion and the deformation matters more. Meijaard's planar beam element for the rod,
``Beam2D(mass="cubic", second_order=True)`` (cubic consistent mass turned with the nodes,
second-order strain, axial deformation and rotary inertia included), crank pin prescribed on the
crank circle (rotation free), slider on the line uy = 0 with a point mass. Rigid kinematics
(theta = omega t, phi the rod angle): sin phi = -(r/L) sin theta, phi' = -r omega cos theta /
(L cos phi).

Initial state: theta = 0 at full speed, rod straight and undeformed with zero deformation rate,
i.e. rigid-body velocities v(s) = (0, r omega (1 - s/L)), nodal rotation rates
phi'(0) = -r omega / L = -75 rad/s, slider at rest. Mid-point scheme over 8 rad (0.0533 s), 2560
steps (quick: the first 2.5 rad at the step of 1280 per 8 rad).

Output: lateral mid-span deflection of the rod relative to its end chord / L, positive to the
left of the chord from crank pin to slider (Meijaard's Fig. 2). Checked: the first maximum with
4 elements within 1 % of 0.01394 and with 2 elements within 1.5 % of 0.01391 (Meijaard 1993,
sec. 4 text, Fig. 2), and with 16 elements within 1 % of the independent converged value
0.013937 (at crank angle 0.782 rad; Exudyn 1.13.6, refs README item 6). The JSON holds the
lumped and linear consistent masses for comparison and the effect of Meijaard's 2-element
simplifications. Model and helpers: :mod:`flexmb.validation.slider_crank`.
"""
from __future__ import annotations

from flexmb.validation import CaseReport, print_report
from flexmb.validation.slider_crank import ROD_MASS, SliderCrankCase, run_case

CASE = "slider-crank-b"
TITLE = ("Flexible slider-crank, 150 rad/s, slider of half the rod mass: first maximum of the rod deflection "
         "(Beam2D, cubic mass)")
SOURCE = "Meijaard 1993, sec. 4, Fig. 2"

SLIDER_MASS = 0.0378126          # kg, half the rod mass (0.5 * ROD_MASS = 0.037815)
PARAMETERS = SliderCrankCase(
    case=CASE, omega=150.0, slider_mass=SLIDER_MASS,
    reference={4: 0.01394, 2: 0.01391}, tolerance={4: 1e-2, 2: 1.5e-2},
    converged=0.013937, converged_angle=0.782, figure_source="Fig. 2")


def run(quick: bool = False) -> CaseReport:
    report = run_case(PARAMETERS, quick)
    report.info["slider_mass_over_half_rod_mass"] = SLIDER_MASS / (0.5 * ROD_MASS)
    return report


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
