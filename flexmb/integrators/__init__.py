"""Time integration schemes, the shared Newton driver and the time-stepping loop."""
from flexmb.integrators.dissipative import EnergyDecayingMidPoint, EnergyDecayingVelocityMidPoint, GeneralizedAlpha
from flexmb.integrators.newton import NewtonFailure, NewtonLog, NewtonSettings, newton_solve
from flexmb.integrators.schemes import MidPoint, Newmark, Scheme, State
from flexmb.integrators.time_stepping import BranchChangeError, TimeIntegrationError, integrate
from flexmb.results import TimeHistory

__all__ = ["BranchChangeError", "EnergyDecayingMidPoint", "EnergyDecayingVelocityMidPoint", "GeneralizedAlpha",
           "NewtonFailure", "NewtonLog", "NewtonSettings", "newton_solve", "MidPoint", "Newmark", "Scheme", "State",
           "TimeHistory", "TimeIntegrationError", "integrate"]
