"""Time integration schemes, the shared Newton driver and the time-stepping loop (names imported on
first use, :mod:`flexmb.lazy_exports`: importing :mod:`flexmb.integrators.newton` alone, as statics and
the diagnostics do, does not load the time-stepping loop and the results behind it)."""
from flexmb.lazy_exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "flexmb.integrators.dissipative": ("EnergyDecayingMidPoint", "EnergyDecayingVelocityMidPoint", "GeneralizedAlpha"),
    "flexmb.integrators.newton": ("NewtonFailure", "NewtonLog", "NewtonSettings", "newton_solve"),
    "flexmb.integrators.schemes": ("MidPoint", "Newmark", "Scheme", "State"),
    "flexmb.integrators.time_stepping": ("BranchChangeError", "TimeIntegrationError", "integrate"),
    "flexmb.results": ("TimeHistory",),
})
