"""Rigid bodies and joints: model data (:mod:`~flexmb.multibody.joints`), the batched constraint
equations with their mid-point discrete gradients (:mod:`~flexmb.multibody.constraints`) and
consistent initial conditions (:mod:`~flexmb.multibody.initial`)."""
