"""Rigid bodies and joints as model data, and the constraint equations each joint stands for.

A :class:`RigidBody` is a node at its centre of mass carrying rotations, with mass and
inertia (2D: J_z in kg m^2; 3D: the inertia tensor about the centre of mass in the reference
orientation). A :class:`Joint` connects two "sides" A and B, each a node (a body's node or an FE
node) or the ground (None), at a joint point ``at`` with a joint frame ``frame`` (columns
x_j, y_j, z_j; z_j the joint axis), both given in the reference configuration.

Every joint is written with body-fixed vectors ("primitives"): a point of a side
``p = x_node + R_node d`` and a direction ``a = R_node a_0``, d and a_0 in the reference
orientation. The equations are linear or bilinear in these vectors (see :class:`Equation`):

========================  ====================================================  ==========
joint                     equations                                             rows 2D/3D
========================  ====================================================  ==========
revolute                  p_A = p_B; 3D also z_A . x_B = z_A . y_B = 0          2 / 5
spherical                 p_A = p_B                                             - / 3
universal                 p_A = p_B; a_A . b_B = 0 (a = x_j on A, b = y_j on B)  - / 4
cylindrical               (p_B - p_A) . x_A = (p_B - p_A) . y_A = 0; axis rows   - / 4
prismatic                 cylindrical and x_A . y_B = 0 (2D: line and angle)    2 / 5
fixed (weld)              p_A = p_B; x_A . y_B = y_A . z_B = z_A . x_B = 0      3 / 6
                          (2D: theta_B - theta_A = const)
point on line (slider)    (p_B - p_A) . n_A = 0 for the normals of the line     1 / 2
========================  ====================================================  ==========

A driven joint adds one rheonomic equation: revolute (relative angle f(t) about z_j; 2D
theta_B - theta_A = f(t), 3D x_B . (-sin f x_A + cos f y_A) = 0) or prismatic (relative
displacement f(t) along the axis, (p_B - p_A) . z_A = f(t) (2D: along x_j)).
Because the equations are at most bilinear in the body-fixed vectors, the mid-point scheme
gets their exact discrete gradient (see :mod:`flexmb.multibody.constraints`), so constraint
forces do no work over a step and energy is conserved with time-independent joints.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence, Union

import numpy as np

from flexmb.checks import ModelError, direction

#: side of a joint: a node index, a RigidBody, or None for the ground
Side = Union[int, "RigidBody", None]
Drive = Union[Callable[[float], float], None]

JOINT_KINDS = ("revolute", "spherical", "universal", "cylindrical", "prismatic", "fixed", "point-on-line")


@dataclass(frozen=True, eq=False)
class RigidBody:
    """A rigid body: its node (at the centre of mass), mass (kg) and inertia.

    ``inertia``: 2D the polar moment J_z (kg m^2); 3D the tensor (3, 3) about the centre of
    mass in the reference orientation (body axes = global axes at the start). Compared and
    hashed by identity (two bodies with equal data are two bodies; usable as dict keys).
    """

    name: str
    node: int
    mass: float
    inertia: np.ndarray


@dataclass(eq=False)
class Joint:
    """A joint between sides A and B (node indices, -1 for the ground) at the reference point
    ``at`` with the joint frame ``frame`` (3, 3), columns x_j, y_j, z_j (z_j the axis).
    Compared and hashed by identity (usable as dict keys)."""

    kind: str
    name: str
    a: int
    b: int
    at: np.ndarray
    frame: np.ndarray
    drive: Drive = None


@dataclass
class Equation:
    """One scalar constraint equation of a joint,

        Phi = sum_k c_k . P_k + sum_j s_j(t) P_aj . P_bj + sum_i e_i u[dof_i] - f(t) = 0,

    with P body-fixed vectors :class:`Vector` (points or directions). ``linear``: (vector, c (dim,));
    ``bilinear``: (vector a, vector b, s: float or f(t)); ``dofs``: (node, DOF name, e) for raw
    DOF terms (translations, and planar rotations, which add up); ``rhs``: f(t) or a number.
    """

    linear: list[tuple["Vector", np.ndarray]] = field(default_factory=list)
    bilinear: list[tuple["Vector", "Vector", float | Callable[[float], float]]] = field(default_factory=list)
    dofs: list[tuple[int, str, float]] = field(default_factory=list)
    rhs: float | Callable[[float], float] = 0.0


@dataclass(frozen=True)
class Vector:
    """A body-fixed vector of a node: the point ``x_node + R_node d`` (``point=True``) or the
    direction ``R_node d``; node -1 is the ground (the vector is fixed in space)."""

    node: int
    d: tuple[float, ...]
    point: bool


def joint_equations(joint: Joint, coordinates: np.ndarray, dim: int, has_rotations: np.ndarray) -> list[Equation]:
    """The equations of a joint (see the module table) in the reference configuration given by
    the node ``coordinates`` (n_nodes, dim); ``has_rotations`` (n_nodes,) tells whether an
    ``"attach"`` joint welds (node with rotations) or pins (node without)."""
    kind, a, b, at, frame, drive = joint.kind, joint.a, joint.b, joint.at, joint.frame, joint.drive
    if kind == "attach":
        kind = "fixed" if has_rotations[b] else ("revolute" if dim == 2 else "spherical")
    def point(node: int) -> Vector:
        base = np.zeros(dim) if node < 0 else coordinates[node]
        return Vector(node, tuple(at[:dim] - base), True)

    def direction(node: int, column: int) -> Vector:
        return Vector(node, tuple(frame[:dim, column]), False)

    pa, pb = point(a), point(b)
    eqs: list[Equation] = []
    if kind in ("revolute", "spherical", "universal", "fixed"):
        for i in range(dim):                                  # p_A - p_B = 0
            c = np.zeros(dim)
            c[i] = 1.0
            eqs.append(Equation(linear=[(pa, c), (pb, -c)]))
    if dim == 2:
        if kind in ("prismatic", "point-on-line"):
            # the point of B stays on the line through the joint point of A along x_j
            eqs.append(Equation(linear=[], bilinear=[(pb, direction(a, 1), 1.0), (pa, direction(a, 1), -1.0)]))
        if kind in ("prismatic", "fixed"):
            eqs.append(_angle_lock(a, b))
        if drive is not None:
            if kind == "revolute":
                row = _angle_lock(a, b)
                row.rhs = drive
                eqs.append(row)
            else:                                             # prismatic: displacement along x_j
                eqs.append(Equation(bilinear=[(pb, direction(a, 0), 1.0), (pa, direction(a, 0), -1.0)],
                                    rhs=drive))
        return eqs
    x_a, y_a, z_a = (direction(a, k) for k in range(3))
    x_b, y_b, z_b = (direction(b, k) for k in range(3))
    if kind in ("cylindrical", "prismatic", "point-on-line"):
        for n in (x_a, y_a):                                  # (p_B - p_A) . n_A = 0
            eqs.append(Equation(bilinear=[(pb, n, 1.0), (pa, n, -1.0)]))
    if kind in ("revolute", "cylindrical", "prismatic"):
        eqs += [Equation(bilinear=[(z_a, x_b, 1.0)]), Equation(bilinear=[(z_a, y_b, 1.0)])]
    if kind == "universal":
        eqs.append(Equation(bilinear=[(x_a, y_b, 1.0)]))
    if kind == "prismatic":
        eqs.append(Equation(bilinear=[(x_a, y_b, 1.0)]))
    if kind == "fixed":
        eqs += [Equation(bilinear=[(x_a, y_b, 1.0)]), Equation(bilinear=[(y_a, z_b, 1.0)]),
                Equation(bilinear=[(z_a, x_b, 1.0)])]
    if drive is not None:
        if kind == "revolute":                                # x_B . (-sin f x_A + cos f y_A) = 0
            eqs.append(Equation(bilinear=[(x_b, x_a, lambda t: -np.sin(drive(t))),
                                          (x_b, y_a, lambda t: np.cos(drive(t)))]))
        else:                                                 # (p_B - p_A) . z_A = f(t)
            eqs.append(Equation(bilinear=[(pb, z_a, 1.0), (pa, z_a, -1.0)], rhs=drive))
    return eqs


def _angle_lock(a: int, b: int) -> Equation:
    """theta_B - theta_A (minus its reference value 0): planar rotations add up."""
    dofs = [(b, "rz", 1.0)] + ([(a, "rz", -1.0)] if a >= 0 else [])
    return Equation(dofs=dofs)


def joint_frame(dim: int, axis: Sequence[float] | None, x_axis: Sequence[float] | None) -> np.ndarray:
    """Orthonormal joint frame (3, 3), columns x_j, y_j, z_j.

    3D: z_j along ``axis`` (default global z), x_j along ``x_axis`` projected normal to it
    (default: a global axis far from z_j). 2D: z_j is the out-of-plane axis and x_j the
    in-plane direction ``x_axis`` (default global x), e.g. the line of a slider.
    """
    if dim == 2:
        x = np.r_[direction(x_axis, "the joint's x_axis", 2) if x_axis is not None else (1.0, 0.0), 0.0]
        x /= np.linalg.norm(x)
        return np.stack([x, np.cross([0.0, 0.0, 1.0], x), [0.0, 0.0, 1.0]], axis=1)
    z = direction(axis, "the joint axis", 3) if axis is not None else np.array([0.0, 0.0, 1.0])
    z /= np.linalg.norm(z)
    hint = direction(x_axis, "the joint's x_axis", 3) if x_axis is not None else np.eye(3)[int(np.argmin(np.abs(z)))]
    x = hint - (hint @ z) * z
    if np.linalg.norm(x) < 1e-8 * np.linalg.norm(hint):
        raise ModelError(f"the joint's x_axis {hint.tolist()} is parallel to its axis {z.tolist()}")
    x /= np.linalg.norm(x)
    return np.stack([x, np.cross(z, x), z], axis=1)
