"""The names of a node's DOFs, per model dimension: translations first, then rotations (the order of
a node's DOFs in the DOF map, :mod:`flexmb.dofs`). They sit below the model so that the element and
multibody layers it builds on (ties, modal bodies) read the same names without importing the model."""
from __future__ import annotations

#: translation DOF names of a node, per model dimension (displacements, m)
TRANSLATION_NAMES: dict[int, tuple[str, ...]] = {2: ("ux", "uy"), 3: ("ux", "uy", "uz")}
#: rotation DOF names of a node, per model dimension (rotation angle in 2D, rotation vector in 3D, rad)
ROTATION_NAMES: dict[int, tuple[str, ...]] = {2: ("rz",), 3: ("rx", "ry", "rz")}
