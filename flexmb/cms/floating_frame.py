"""The modal body's element group, moved to :mod:`flexmb.elements.floating_frame` (issue 30): this
module keeps the old import path working."""
from flexmb.elements.floating_frame import (  # noqa: F401  (re-exported)
    FloatingFrameMass,
    ModalBody,
)

__all__ = ["FloatingFrameMass", "ModalBody"]
