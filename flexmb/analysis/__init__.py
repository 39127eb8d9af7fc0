"""Analyses built on the assembly and the Newton driver."""
from flexmb.analysis.arc_length import arc_length
from flexmb.analysis.buckling import BucklingResult, linear_buckling
from flexmb.analysis.linearized import CampbellDiagram, LinearizedSystem, LinearModes, campbell, linearize
from flexmb.analysis.linearized import relative_equilibrium
from flexmb.analysis.statics import StaticSolveError, load_control
from flexmb.results import StaticPath

__all__ = ["BucklingResult", "CampbellDiagram", "LinearModes", "LinearizedSystem", "campbell", "linear_buckling",
           "linearize", "relative_equilibrium", "StaticPath", "StaticSolveError", "arc_length", "load_control"]
