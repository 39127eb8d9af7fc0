"""Design sensitivities of transient responses (issue 33, under construction).

The pieces land one by one, each tested on its own; the package exports nothing until the driver
(direct differentiation and the discrete adjoint through the time schemes) uses them:

* :mod:`flexmb.sensitivity.parameters` -- transient design parameters and their residual and mass
  derivatives;
* :mod:`flexmb.sensitivity.responses` -- response functionals of a run and their derivatives;
* :mod:`flexmb.sensitivity.matrices` -- the derivatives of the schemes' element forces with respect
  to the step's start state.
"""
