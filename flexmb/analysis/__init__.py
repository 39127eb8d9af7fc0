"""Analyses built on the assembly and the Newton driver (names imported on first use,
:mod:`flexmb.lazy_exports`)."""
# arc_length is both a module and its function: imported here, the function is what
# ``flexmb.analysis.arc_length`` names (imported lazily, a direct import of the module would win)
from flexmb.analysis.arc_length import arc_length
from flexmb.lazy_exports import lazy_exports

__getattr__, __dir__, _lazy_names = lazy_exports(__name__, {
    "flexmb.analysis.buckling": ("BucklingResult", "linear_buckling"),
    "flexmb.analysis.linearized": ("CampbellDiagram", "LinearModes", "LinearizedSystem", "campbell", "linearize",
                                   "relative_equilibrium"),
    "flexmb.analysis.state_space": ("FrequencyResponse", "StateSpaceModel"),
    "flexmb.analysis.statics": ("StaticSolveError", "load_control"),
    "flexmb.results": ("StaticPath",),
})
__all__ = sorted(_lazy_names + ["arc_length"])
