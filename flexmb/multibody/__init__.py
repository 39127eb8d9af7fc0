"""Rigid bodies and joints: model data (:mod:`~flexmb.multibody.joints`), the batched constraint
equations with their mid-point discrete gradients (:mod:`~flexmb.multibody.constraints`) and
consistent initial conditions (:mod:`~flexmb.multibody.initial`); constrained systems in
redundant coordinates (:mod:`~flexmb.multibody.constrained_system`), coordinate partitioning
with the projective criterion (:mod:`~flexmb.multibody.partitioning`, integrated by
:mod:`flexmb.integrators.partitioned`), physical reactions (:mod:`~flexmb.multibody.reactions`)
and the singularity-free Taylor reaction formulation (:mod:`~flexmb.multibody.taylor_reactions`)."""
