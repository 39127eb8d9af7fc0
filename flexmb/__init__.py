"""flexmb: flexible multibody dynamics with co-rotational finite elements.

Public API. ``import flexmb`` imports no other module of flexmb (nor numpy): each name below is
imported from its module when it is first used (PEP 562, :mod:`flexmb.lazy_exports`), so a script
pays start-up only for the parts it uses (a planar dynamics script skips the eigen-, buckling,
arc-length and reaction modules). matplotlib, meshio, pyvista, h5py and numba are imported only
inside the functions that need them.
"""
from __future__ import annotations

from flexmb.lazy_exports import lazy_exports

__version__ = "0.1.0"

#: module -> the public names it provides
_PROVIDERS: dict[str, tuple[str, ...]] = {
    "flexmb.analysis.arc_length": ("arc_length",),
    "flexmb.analysis.buckling": ("BucklingResult", "linear_buckling"),
    "flexmb.analysis.diagnostics": ("SingularSystemError",),
    "flexmb.analysis.equilibrium": ("Equilibrium", "EquilibriumError", "equilibrium", "linear_static"),
    "flexmb.analysis.linearized": ("CampbellDiagram", "LinearModes", "LinearizedSystem", "campbell", "linearize",
                                   "relative_equilibrium"),
    "flexmb.analysis.modes": ("ModeCountError", "NaturalModes", "natural_modes", "system_matrices"),
    "flexmb.analysis.statics": ("StaticPath", "load_control"),
    "flexmb.assembly": ("Assembly",),
    "flexmb.checks": ("FlexmbWarning", "UserFunctionError"),
    "flexmb.dofs": ("DofMap",),
    "flexmb.elements": ("Beam2D", "Beam3D", "ElementGroup", "Shell3", "Truss"),
    "flexmb.integrators": ("BranchChangeError", "NewtonSettings", "TimeHistory", "TimeIntegrationError", "integrate"),
    "flexmb.integrators.partitioned": ("ClosingVariant", "PartitionedRun", "integrate_closing",
                                       "integrate_partitioned"),
    "flexmb.model": ("Model", "ModelError"),
    "flexmb.multibody.constrained_system": ("ConstrainedSystem",),
    "flexmb.multibody.initial": ("consistent_initial_state",),
    "flexmb.multibody.joints": ("Joint", "RigidBody"),
    "flexmb.multibody.reactions": ("physical_reactions",),
    "flexmb.multibody.taylor_reactions": ("SingularReactionMatrix", "TaylorSystem", "integrate_taylor"),
    "flexmb.results": ("ModeShapes", "ModelLayout", "Result", "ResultFileError", "load_result"),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _PROVIDERS)
