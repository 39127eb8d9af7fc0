"""Analyses built on the assembly and the Newton driver."""
from flexmb.analysis.arc_length import arc_length
from flexmb.analysis.buckling import BucklingResult, linear_buckling
from flexmb.analysis.statics import StaticPath, StaticSolveError, load_control

__all__ = ["BucklingResult", "linear_buckling", "StaticPath", "StaticSolveError", "arc_length", "load_control"]
