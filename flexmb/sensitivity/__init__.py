"""Design sensitivities of transient responses (issue 33, under construction).

The pieces land one by one, each tested on its own; the package exports nothing until the driver
(direct differentiation and the discrete adjoint through the time schemes) uses them:

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
