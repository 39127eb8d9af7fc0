"""Design sensitivities: exact gradients of transient responses by direct differentiation and by the
discrete adjoint through the time schemes, and of static responses and linearized eigenvalues (issue 33).

``from flexmb import sensitivity as fs`` (or ``fm.sensitivity``); the names below are imported on first
use (:mod:`flexmb.lazy_exports`), so ``import flexmb`` loads none of them.

* :func:`transient_sensitivity` -- a run of fixed steps, its responses and their gradient (n_r, n_p)
  by the adjoint or the direct method, in a :class:`TransientSensitivity` (values, normalised
  gradient, the run's history, memory and CPU times, a printed table);
  :func:`finite_difference` -- the same gradients by central differences of re-runs over the run's
  frozen step list, for checking them (a step study);
* parameters (:mod:`flexmb.sensitivity.parameters`, :mod:`flexmb.sensitivity.constraints`):
  :func:`parameter` (of a :mod:`flexmb.cms` design variable: stiffness and density scales, section
  properties, point masses), :func:`element_property`, :func:`spring_rate`, :func:`damper_rate`,
  :func:`body_mass`, :func:`body_inertia`, :func:`rayleigh`, :func:`thickness` (re-runs only) and
  :func:`drive_amplitude` (a joint drive's);
* responses (:mod:`flexmb.sensitivity.responses`): signals :func:`dof`, :func:`point`,
  :func:`point_velocity`, :func:`sensor`, :func:`chord_deflection`, :func:`strain_energy`,
  :func:`kinetic_energy`, :func:`joint_reaction`, :func:`multiplier`, :func:`scaled`,
  :func:`squared`, and the functionals of their series :func:`at`, :func:`final`,
  :func:`integral`, :func:`ks_max`, :func:`maximum`, :func:`first_peak`;
* statics and modes (:mod:`flexmb.sensitivity.static`): :func:`static_sensitivity` (with
  :func:`load_scale`) and :func:`linearized_eigen_sensitivity`.

Covered: the mid-point and composed mid-point schemes by both methods, planar models with joints
and drives (spatial rotations as :mod:`flexmb.sensitivity.midpoint` states); generalized-alpha and
Newmark by the direct method, planar models without joints. Refused with a
:class:`~flexmb.checks.ModelError` naming the item: ties to modal bodies, the energy-decaying
schemes, the adjoint of generalized-alpha and Newmark, prescribed-motion amplitudes, a shell's
thickness (derivatives), error-controlled steps.

The modules, each with its equations in its docstring:

* :mod:`flexmb.sensitivity.driver` -- :func:`transient_sensitivity`;
* :mod:`flexmb.sensitivity.finite_difference` -- :func:`finite_difference`;
* :mod:`flexmb.sensitivity.parameters` -- transient design parameters and their residual and mass
  derivatives;
* :mod:`flexmb.sensitivity.responses` -- response functionals of a run and their derivatives;
* :mod:`flexmb.sensitivity.matrices` -- the derivatives of the schemes' element forces with respect
  to the step's start state;
* :mod:`flexmb.sensitivity.inertia` -- the same for the inertia terms (constant, cubic and director
  masses, modal bodies, rotary terms), with respect to the start displacements, rates and stretch rates;
* :mod:`flexmb.sensitivity.constraints` -- the joints' terms: the start derivative of the mid-point
  joint force, the end-point form's start terms, exact time derivatives and a drive-amplitude
  parameter;
* :mod:`flexmb.sensitivity.midpoint` -- direct differentiation of mid-point and composed mid-point
  runs of planar models, joints included: the state and multiplier derivatives of every step and
  response gradients;
* :mod:`flexmb.sensitivity.adjoint` -- the discrete adjoint of those mid-point runs: a reverse sweep
  with the transposed step Jacobians, its cost independent of the number of parameters, the states
  recomputed between kept ones;
* :mod:`flexmb.sensitivity.alpha` -- direct differentiation of generalized-alpha and Newmark runs of
  planar models without joints;
* :mod:`flexmb.sensitivity.static` -- static responses at a load level of a load-control path (direct
  and adjoint) and simple eigenvalues of the linearized system;
* :mod:`flexmb.sensitivity.transient` -- a run's step list recorded and replayed bit for bit, and
  each step's Jacobian at its solution with its scalings, factorised for direct and transposed solves.
"""
from flexmb.lazy_exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "flexmb.sensitivity.driver": ("TransientSensitivity", "transient_sensitivity"),
    "flexmb.sensitivity.finite_difference": ("FiniteDifference", "finite_difference"),
    "flexmb.sensitivity.parameters": ("TransientParameter", "body_inertia", "body_mass", "damper_rate",
                                      "element_property", "parameter", "rayleigh", "spring_rate", "thickness"),
    "flexmb.sensitivity.constraints": ("DriveAmplitude", "drive_amplitude"),
    "flexmb.sensitivity.responses": ("ResponseValue", "Trajectory", "at", "chord_deflection", "dof", "final",
                                     "first_peak", "integral", "joint_reaction", "kinetic_energy", "ks_max",
                                     "maximum", "multiplier", "point", "point_velocity", "scaled", "sensor",
                                     "squared", "strain_energy"),
    "flexmb.sensitivity.static": ("EigenSensitivity", "LoadScale", "StaticSensitivity", "linearized_eigen_sensitivity",
                                  "load_scale", "static_sensitivity"),
})
