"""The modal body's velocity fields, moved to :mod:`flexmb.elements.velocity_fields` (issue 30): this
module keeps the old import path working."""
from flexmb.elements.velocity_fields import (  # noqa: F401  (re-exported)
    BodyVelocityFields,
)

__all__ = ["BodyVelocityFields"]
