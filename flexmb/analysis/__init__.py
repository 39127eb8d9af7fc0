"""Analyses built on the assembly and the Newton driver."""
from flexmb.analysis.statics import StaticPath, StaticSolveError, load_control

__all__ = ["StaticPath", "StaticSolveError", "load_control"]
