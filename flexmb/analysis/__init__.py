"""Analyses built on the assembly and the Newton driver."""
from flexmb.analysis.arc_length import arc_length
from flexmb.analysis.buckling import BucklingResult, linear_buckling
from flexmb.analysis.statics import StaticSolveError, load_control
from flexmb.results import StaticPath

__all__ = ["BucklingResult", "linear_buckling", "StaticPath", "StaticSolveError", "arc_length", "load_control"]
