"""Lateral buckling (tipping) of a cantilever strip by an end force (Meijaard 1993, Table 1).

A clamped-free beam of narrow rectangular section is loaded at its free end by a transverse
force in the plane of its larger flexural rigidity. Theory (Prandtl; Timoshenko & Gere):
F_th = 4.0126 sqrt(EI_weak GJ) / l^2 for an infinitely stiff plane of loading. Linear buckling
about the unloaded state with 1, 2, 4 Beam3D elements, without and with the second-order
strain terms of Meijaard's eq. (16); Meijaard's F_cr / F_th:

    elements        1         2        4
    without         infinite  1.2180   1.0459
    with            1.4951    1.0690   1.0153

Checked: each ratio within 1 % of the table; "infinite" means no lateral-torsional mode at all
(the single element without second-order terms has none; its only eigenvalues are in-plane
stretching-bending modes at loads proportional to EA, reported in the JSON); with 8 and 16
elements both variants approach theory (ratio - 1 below 1.5 % and 0.5 % at 16 elements).
The strip: l = 1 m, 50 mm x 0.5 mm steel, EI_strong / EI_weak = 1e4.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.validation import CaseReport, print_report
from flexmb.validation.cantilever_buckling import table_study

CASE = "buckling-lateral"
TITLE = "Lateral buckling of a cantilever strip by an end force (Beam3D)"
SOURCE = "Meijaard 1993, Table 1"

LENGTH = 1.0                      # m
DEPTH, THICKNESS = 0.05, 0.0005   # m, depth in the plane of loading (z)
E, G = 2.1e11, 8.1e10             # Pa
EI_WEAK = E * DEPTH * THICKNESS**3 / 12.0     # bending about z (lateral deflection uy)
EI_STRONG = E * THICKNESS * DEPTH**3 / 12.0   # bending about y (in the plane of loading)
GJ = G * DEPTH * THICKNESS**3 / 3.0
EA = E * DEPTH * THICKNESS
F_TH = 4.0126 * np.sqrt(EI_WEAK * GJ) / LENGTH**2
TABLE = {(1, False): np.inf, (2, False): 1.2180, (4, False): 1.0459,
         (1, True): 1.4951, (2, True): 1.0690, (4, True): 1.0153}


def build(n_elements: int, second_order: bool) -> fm.Model:
    model = fm.Model(dim=3)
    x = np.linspace(0.0, LENGTH, n_elements + 1)
    nodes = model.add_nodes(np.c_[x, np.zeros_like(x), np.zeros_like(x)])
    model.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=EA, GJ=GJ, EI_y=EI_STRONG, EI_z=EI_WEAK,
                     y_axis=(0.0, 1.0, 0.0), second_order=second_order)
    model.fix(nodes[0])
    model.add_load(nodes[-1], "uz", 1.0)                  # reference load 1 N, in the stiff plane
    return model


def run(quick: bool = False) -> CaseReport:
    counts = (1, 2, 4, 8) if quick else (1, 2, 4, 8, 16)
    bounds = {False: 6e-2, True: 1e-2} if quick else {False: 1.5e-2, True: 5e-3}
    report = table_study(CASE, build, ("uy", "rx", "rz"), F_TH, "F_cr/F_th", TABLE, SOURCE, counts, bounds,
                         "converges to theory 4.0126 sqrt(EI GJ)/l^2")
    report.info["EI_strong_over_EI_weak"] = EI_STRONG / EI_WEAK
    return report


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
