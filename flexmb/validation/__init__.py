"""Validation harness: checks against literature values, the case registry and the runner.

A validation case is a script in the repository's ``validation/`` folder. It defines ``CASE``
(the name used on the command line), ``TITLE``, ``SOURCE`` and ``run(quick: bool) -> CaseReport``
and names, for every checked quantity, its reference value, source and tolerance.
"""
from flexmb.validation.report import CaseReport, Check
from flexmb.validation.registry import discover_cases, find_cases_dir
from flexmb.validation.runner import print_report, run_cases

__all__ = ["CaseReport", "Check", "discover_cases", "find_cases_dir", "print_report", "run_cases"]
