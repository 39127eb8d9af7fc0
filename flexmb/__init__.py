"""flexmb: flexible multibody dynamics with co-rotational finite elements.

Public API. ``import flexmb`` imports no other module of flexmb (nor numpy): each name below is
imported from its module when it is first used (PEP 562, :mod:`flexmb.lazy_exports`), so a script
pays start-up only for the parts it uses (a planar dynamics script skips the eigen-, buckling,
arc-length and reaction modules). matplotlib, meshio, pyvista, h5py and numba are imported only
inside the functions that need them. ``flexmb.__version__`` is looked up on first use too (the
installed distribution's version: importing importlib.metadata takes ten times as long as flexmb).
"""
from __future__ import annotations

from flexmb.lazy_exports import lazy_exports

#: module -> the public names it provides
_PROVIDERS: dict[str, tuple[str, ...]] = {
    "flexmb.analysis.arc_length": ("arc_length",),
    "flexmb.analysis.buckling": ("BucklingResult", "linear_buckling"),
    "flexmb.analysis.diagnostics": ("SingularSystemError",),
    "flexmb.analysis.equilibrium": ("Equilibrium", "EquilibriumError", "equilibrium", "linear_static"),
    "flexmb.analysis.linearized": ("CampbellDiagram", "LinearModes", "LinearizedSystem", "campbell", "linearize",
                                   "relative_equilibrium"),
    "flexmb.analysis.modes": ("ModeCountError", "NaturalModes", "natural_modes", "system_matrices"),
    "flexmb.analysis.state_space": ("FrequencyResponse", "StateSpaceModel"),
    "flexmb.analysis.statics": ("StaticPath", "load_control"),
    "flexmb.assembly": ("Assembly",),
    "flexmb.checks": ("FlexmbWarning", "KeywordError", "UserFunctionError"),
    "flexmb.dofs": ("DofMap",),
    "flexmb.elements": ("Beam2D", "Beam3D", "ElementGroup", "Shell3", "Solid", "Truss"),
    "flexmb.integrators": ("BranchChangeError", "NewtonSettings", "TimeHistory", "TimeIntegrationError", "integrate"),
    "flexmb.integrators.partitioned": ("ClosingVariant", "PartitionedRun", "integrate_closing",
                                       "integrate_partitioned"),
    "flexmb.io.model_file": ("load_model",),
    "flexmb.model": ("Model", "ModelError"),
    "flexmb.multibody.constrained_system": ("ConstrainedSystem",),
    "flexmb.multibody.initial": ("consistent_initial_state",),
    "flexmb.multibody.joints": ("Joint", "RigidBody"),
    "flexmb.multibody.reactions": ("physical_reactions",),
    "flexmb.multibody.taylor_reactions": ("SingularReactionMatrix", "TaylorSystem", "integrate_taylor"),
    "flexmb.results": ("ModeShapes", "ModelLayout", "Result", "ResultFileError", "load_result"),
}

_exported, __dir__, __all__ = lazy_exports(__name__, _PROVIDERS)


def __getattr__(name: str) -> object:
    if name == "__version__":
        globals()[name] = _version()                # later look-ups do not come here
        return globals()[name]
    return _exported(name)


def _version() -> str:
    """The version of the installed distribution; in a source tree without its metadata (flexmb on
    PYTHONPATH, never installed), the one written in the tree's pyproject.toml."""
    import re
    from importlib.metadata import PackageNotFoundError, version
    from pathlib import Path

    try:
        return version("flexmb")
    except PackageNotFoundError:
        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        found = re.search(r'^version\s*=\s*"([^"]+)"', pyproject.read_text(encoding="utf-8"), re.MULTILINE) \
            if pyproject.is_file() else None
        return found[1] if found else "0+unknown"
