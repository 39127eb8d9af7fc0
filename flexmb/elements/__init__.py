"""Stateless batched element kernels."""
from flexmb.elements.base import ElementGroup
from flexmb.elements.beam2d import Beam2D
from flexmb.elements.beam3d import Beam3D
from flexmb.elements.shell3 import Shell3
from flexmb.elements.solid import Solid
from flexmb.elements.truss import Truss

__all__ = ["ElementGroup", "Truss", "Beam2D", "Beam3D", "Shell3", "Solid"]
