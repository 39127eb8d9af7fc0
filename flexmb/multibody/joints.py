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
skew support              per fixed local DOF: (p_A - p_B) . e_i = 0 (u_i);     1-3 / 1-6
                          e_j . R_B e_k = 0 (r_i, ijk cyclic; 2D theta_B = 0)
========================  ====================================================  ==========

A skew support (:meth:`flexmb.model.Model.add_skew_support`) is a joint from the ground (side A,
the local frame e_1 e_2 e_3 = the joint frame) to a node B at the node: its translation rows are
linear in the displacement, so they hold exactly. Its 3D rotation row for r_i keeps the node's
turned local axis R_B e_k normal to the fixed axis e_j, i.e. the (j, k) entry of the node's
rotation written in the local frame stays zero: to first order this is the local component
theta . e_i of the rotation vector (e_j . (theta x e_k) = -theta . e_i); for large rotations it is
the holonomic constraint of a hinge (r1 and r2 fixed leave any rotation about e_3 free, like a
revolute joint).

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

from flexmb.checks import ModelError, direction, is_real
from flexmb.elements.dof_names import ROTATION_NAMES, TRANSLATION_NAMES

#: side of a joint: a node index, a RigidBody, or None for the ground
Side = Union[int, "RigidBody", None]
Drive = Union[Callable[[float], float], None]

JOINT_KINDS = ("revolute", "spherical", "universal", "cylindrical", "prismatic", "fixed", "point-on-line")
#: the joint kind of a skew support (made by Model.add_skew_support, not by add_joint)
SKEW_SUPPORT = "skew support"
#: local DOF names of a skew support per dimension: translations along and rotations about e_1 e_2 e_3
SKEW_DOF_NAMES = {2: ("u1", "u2", "r3"), 3: ("u1", "u2", "u3", "r1", "r2", "r3")}


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
    #: the local DOFs a skew support fixes (names of :data:`SKEW_DOF_NAMES`); empty for other kinds
    fixed: tuple[str, ...] = ()


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
    if kind == SKEW_SUPPORT:
        return _skew_support_equations(joint, coordinates, dim)
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


def _skew_support_equations(joint: Joint, coordinates: np.ndarray, dim: int) -> list[Equation]:
    """The rows of a skew support (see the module table), in the order of ``joint.fixed``."""
    b = joint.b
    ground = Vector(-1, tuple(joint.at[:dim]), True)
    node = Vector(b, tuple(joint.at[:dim] - coordinates[b]), True)
    eqs = []
    for name in joint.fixed:
        i = int(name[1]) - 1
        if name[0] == "u":                                    # (p_A - p_B) . e_i = 0
            e = joint.frame[:dim, i]
            eqs.append(Equation(linear=[(ground, e), (node, -e)]))
        elif dim == 2:                                        # r3: planar rotations add up
            eqs.append(_angle_lock(-1, b))
        else:                                                 # e_j . R_B e_k = 0, (i, j, k) cyclic
            j, k = (i + 1) % 3, (i + 2) % 3
            eqs.append(Equation(bilinear=[(Vector(-1, tuple(joint.frame[:, j]), False),
                                           Vector(b, tuple(joint.frame[:, k]), False), 1.0)]))
    return eqs


def skew_support_frame(dim: int, frame, what: str) -> np.ndarray:
    """The local frame of a skew support as a joint frame (3, 3), columns e_1 e_2 e_3.

    ``frame``: 3D a rotation matrix (3, 3) whose columns are the local axes; 2D an angle (rad,
    e_1 turned from x towards y) or a rotation matrix (2, 2). A matrix must be orthonormal with
    determinant +1 to 1e-6 (typed decimals such as 0.7071 pass) and is then made orthonormal to
    round-off by its polar factor, so the local DOFs are exactly independent.
    """
    if dim == 2 and is_real(frame) and np.isfinite(float(frame)):
        c, s = np.cos(float(frame)), np.sin(float(frame))
        return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    try:
        R = np.array(frame, dtype=float)
    except (TypeError, ValueError):
        R = None
    if R is None or R.shape != (dim, dim) or not np.all(np.isfinite(R)):
        shape = "an angle (rad) or a rotation matrix (2, 2)" if dim == 2 else "a rotation matrix (3, 3)"
        raise ModelError(f"{what}: frame must be {shape} whose columns are the local axes, got {frame!r:.120}")
    off = float(np.abs(R.T @ R - np.eye(dim)).max())
    if off > 1e-6 or np.linalg.det(R) < 0.0:
        why = f"R^T R differs from I by {off:.3g}" if off > 1e-6 else "its determinant is -1 (a reflection)"
        raise ModelError(f"{what}: frame is not a rotation matrix ({why}); its columns must be orthonormal "
                         f"local axes e_1, e_2{', e_3' if dim == 3 else ''} forming a right-handed frame, got "
                         f"{R.tolist()}")
    U, _, Vt = np.linalg.svd(R)
    R = U @ Vt                                                # nearest rotation (polar factor)
    out = np.eye(3)
    out[:dim, :dim] = R
    return out


def skew_support_dofs(dim: int, dofs, what: str) -> tuple[str, ...]:
    """The local DOF names ``dofs`` (a name, a space-separated string of names, or a list) of a skew
    support, checked, in the order of :data:`SKEW_DOF_NAMES`."""
    known = SKEW_DOF_NAMES[dim]
    names = dofs.split() if isinstance(dofs, str) else list(dofs) if isinstance(dofs, (list, tuple)) else None
    if not names or not all(isinstance(d, str) for d in names):
        raise ModelError(f"{what}: dofs must name local DOFs to fix, e.g. \"u1\" or [\"u1\", \"r2\"] (a {dim}D "
                         f"node has {', '.join(known)}), got {dofs!r}")
    for d in names:
        if d not in known:
            raise ModelError(f"{what}: unknown local DOF {d!r}; a {dim}D skew support fixes "
                             f"{', '.join(known)} (u_i along, r_i about the local axis e_i)")
    if len(set(names)) < len(names):
        raise ModelError(f"{what}: a local DOF is named twice in {names}")
    return tuple(d for d in known if d in names)


def skew_support_conflict(joint: Joint, dim: int, rotates: bool, fixed_globally: Sequence[str]) -> str | None:
    """Why the skew support ``joint`` cannot hold with the node's DOFs ``fixed_globally`` (global
    names, e.g. ``("ux", "rz")``) and its node carrying rotations or not (``rotates``), or None.

    The local rows act on the node's remaining global DOFs through the local axes with the fixed
    global components removed; they repeat each other (a singular system) when those projected
    axes are linearly dependent, e.g. u1 along x with ux fixed."""
    where = f"skew support {joint.name!r} at node {joint.b}"
    turns = [d for d in joint.fixed if d[0] == "r"]
    if turns and not rotates:
        return (f"{where} fixes {', '.join(turns)}, but node {joint.b} has no rotations (rotations exist "
                "only on nodes of beams, shells and rigid bodies); fix translations only")
    for kind, axes in (("u", TRANSLATION_NAMES[dim]), ("r", ROTATION_NAMES[dim])):
        local = [d for d in joint.fixed if d[0] == kind]
        if not local:
            continue
        if dim == 2 and kind == "r":                          # r3 is rz
            E = np.ones((1, 1))
        else:                                                 # the local axes in global components
            E = joint.frame[:dim, [int(d[1]) - 1 for d in local]].copy()                  # (dim, n_local)
        clamped = [k for k, a in enumerate(axes) if a in fixed_globally]
        E[clamped] = 0.0
        if np.linalg.matrix_rank(E, tol=1e-9) < len(local):
            return (f"{where} fixes local {', '.join(local)}, but {', '.join(axes[k] for k in clamped)} "
                    f"{'is' if len(clamped) == 1 else 'are'} already fixed globally there, so the equations repeat "
                    "each other; fix each direction once: globally (Model.fix) or locally (add_skew_support)")
    return None


def refuse_skew_supports(joints: Sequence[Joint], analysis: str, alternative: str) -> None:
    """ModelError for the first skew support in ``joints``: ``analysis`` eliminates supports through
    the DOF map only, and a skew support is a constraint equation; ``alternative`` says what
    else takes it."""
    skew = next((j for j in joints if j.kind == SKEW_SUPPORT), None)
    if skew is not None:
        raise ModelError(f"{analysis}: skew support {skew.name!r} at node {skew.b} is a constraint equation "
                         f"(add_skew_support), which {analysis} does not take, only supports of global DOFs; "
                         "build the model turned so that the support's local axes are global axes and fix "
                         f"those DOFs with Model.fix, or {alternative}")


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
