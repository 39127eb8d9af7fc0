"""flexmb: flexible multibody dynamics with co-rotational finite elements.

Public API. Importing flexmb is light: matplotlib, meshio and pyvista are imported only inside
the plotting and I/O functions that need them.
"""
from flexmb.analysis.arc_length import arc_length
from flexmb.analysis.buckling import BucklingResult, linear_buckling
from flexmb.analysis.diagnostics import SingularSystemError
from flexmb.analysis.linearized import CampbellDiagram, LinearizedSystem, LinearModes, campbell, linearize
from flexmb.analysis.linearized import relative_equilibrium
from flexmb.analysis.modes import NaturalModes, natural_modes, system_matrices
from flexmb.analysis.statics import StaticPath, load_control
from flexmb.assembly import Assembly
from flexmb.checks import FlexmbWarning, UserFunctionError
from flexmb.dofs import DofMap
from flexmb.elements import Beam2D, Beam3D, ElementGroup, Truss
from flexmb.elements.shell3 import Shell3
from flexmb.integrators import BranchChangeError, NewtonSettings, TimeHistory, TimeIntegrationError, integrate
from flexmb.integrators.partitioned import ClosingVariant, PartitionedRun, integrate_closing, integrate_partitioned
from flexmb.model import Model, ModelError
from flexmb.multibody.constrained_system import ConstrainedSystem
from flexmb.multibody.initial import consistent_initial_state
from flexmb.multibody.joints import Joint, RigidBody
from flexmb.multibody.reactions import physical_reactions
from flexmb.multibody.taylor_reactions import SingularReactionMatrix, TaylorSystem, integrate_taylor
from flexmb.results import ModelLayout, ModeShapes, Result, ResultFileError, load_result

__version__ = "0.1.0"

__all__ = ["Assembly", "Beam2D", "Beam3D", "BranchChangeError", "BucklingResult", "CampbellDiagram", "ClosingVariant",
           "ConstrainedSystem", "DofMap", "ElementGroup", "FlexmbWarning", "Joint", "LinearModes", "LinearizedSystem",
           "Model", "ModelError", "ModeShapes", "ModelLayout", "NaturalModes", "NewtonSettings", "PartitionedRun",
           "Result", "ResultFileError", "RigidBody", "Shell3", "SingularReactionMatrix", "SingularSystemError",
           "StaticPath", "TaylorSystem", "TimeHistory", "TimeIntegrationError", "Truss", "UserFunctionError",
           "arc_length", "campbell", "consistent_initial_state", "integrate", "integrate_closing",
           "integrate_partitioned", "integrate_taylor", "linear_buckling", "linearize", "load_control", "load_result",
           "natural_modes", "physical_reactions", "relative_equilibrium", "system_matrices"]
