"""Buckling of a cantilever shaft by a semi-tangential end torque (Meijaard 1993, Table 2).

A clamped-free circular shaft is loaded at its free end by a semi-tangential torque about its
axis (conservative; Argyris et al. 1979). Theory: M_th = pi EI / l. Linear buckling about the
unloaded state with 1, 2, 4 Beam3D elements, without and with the second-order strain terms of
Meijaard's eq. (16); Meijaard's M_cr / M_th:

    elements        1         2        4
    without         infinite  1.2732   1.0548
    with            1.1027    1.0075   1.0005

Checked: each ratio within 1 % of the table ("infinite": no buckling mode at all); with 8 and
16 elements both variants approach theory (second order: the paper's fourth-order
convergence). Shaft: l = 1 m, EI = 1 N m^2, GJ = 0.77 N m^2 (irrelevant to M_th), EA = 1e6 N.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.validation import CaseReport, print_report
from flexmb.validation.cantilever_buckling import table_study

CASE = "buckling-torsion"
TITLE = "Buckling of a cantilever shaft by a semi-tangential end torque (Beam3D)"
SOURCE = "Meijaard 1993, Table 2"

LENGTH = 1.0          # m
EI = 1.0              # N m^2
GJ = 0.77             # N m^2
EA = 1.0e6            # N
M_TH = np.pi * EI / LENGTH
TABLE = {(1, False): np.inf, (2, False): 1.2732, (4, False): 1.0548,
         (1, True): 1.1027, (2, True): 1.0075, (4, True): 1.0005}


def build(n_elements: int, second_order: bool) -> fm.Model:
    model = fm.Model(dim=3)
    x = np.linspace(0.0, LENGTH, n_elements + 1)
    nodes = model.add_nodes(np.c_[x, np.zeros_like(x), np.zeros_like(x)])
    model.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=EA, GJ=GJ, EI_y=EI, EI_z=EI, second_order=second_order)
    model.fix(nodes[0])
    model.add_semi_tangential_moment(nodes[-1], (1.0, 0.0, 0.0))    # reference torque 1 N m
    return model


def run(quick: bool = False) -> CaseReport:
    counts = (1, 2, 4, 8) if quick else (1, 2, 4, 8, 16)
    return table_study(CASE, build, ("uy", "uz", "ry", "rz"), M_TH, "M_cr/M_th", TABLE, SOURCE, counts,
                       {False: 2e-2, True: 1e-4}, "converges to theory pi EI / l")


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
