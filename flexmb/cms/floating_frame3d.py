"""The 3D modal body's inertia, moved to :mod:`flexmb.elements.floating_frame3d` (issue 30): this
module keeps the old import path working."""
from flexmb.elements.floating_frame3d import (  # noqa: F401  (re-exported)
    FloatingFrameMass3D,
    _cayley_differential,
)

__all__ = ["FloatingFrameMass3D"]
