"""Planar spin-up of Kim & Haug's beam as a modal body, with and without geometric stiffening.

The beam of ``spin-up-kim-haug`` (L = 8 m, spun to omega_s = 4 rad/s in T_s = 15 s, first bending
frequency 2.91 rad/s; its parameters are read from
``validation/spin_up_kim_haug.py``) as a modal body on a floating frame fixed to the hub
(:mod:`flexmb.validation.spin_up_modal`). Checked: with stiffening and 3 modes the extreme lateral
tip deflection within 1 % of the co-rotational FE result -0.53377 m (independent converged value,
Exudyn, refs README item 6; flexmb's FE case gives the same); without stiffening the run diverges or its
deflection exceeds 10x the FE extreme (Kane, Ryan & Banerjee 1987). Issue 16.
"""
from __future__ import annotations

from pathlib import Path

from flexmb.validation import CaseReport, print_report
from flexmb.validation.registry import load_module
from flexmb.validation.spin_up_modal import run_case

CASE = "spin-up-modal-kim-haug"
TITLE = "Spin-up of Kim & Haug's beam as a modal body: geometric stiffening on and off"
SOURCE = "co-rotational FE (converged, Exudyn); Meijaard 1993, Fig. 3; Kane, Ryan & Banerjee 1987"


def run(quick: bool = False) -> CaseReport:
    beam = load_module(Path(__file__).with_name("spin_up_kim_haug.py")).PARAMETERS
    return run_case(beam, quick, CASE)


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
