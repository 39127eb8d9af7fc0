"""Sensors: named outputs a run records every output step (positions of points on bodies, body
orientations, joint coordinates, element end forces).

A sensor is declared on the model, ``model.add_sensor(quantity, on, ...)``, before the run;
``integrate`` (and ``load_control``/``arc_length`` for the quantities that need no velocity)
records its value at every output step into the result (``history.sensor(name)``, (n_steps,)
or (n_steps, k)) and into the result file (``/steps/sensors/<name>``, the definitions in
``/model`` attribute ``sensors``), so a re-read or a restarted run gives them back. By name they
are quantities of :meth:`flexmb.results.Result.series` and of ``flexmb plot``: ``tip`` (all
components), ``tip[1]`` or ``tip[y]`` (one).

Quantities (``on``: a node index or a :class:`~flexmb.multibody.joints.RigidBody`, unless said):

=====================  =========  ===================================================================
quantity               unit       value
=====================  =========  ===================================================================
``position``           m          p = x + R d of the point at ``offset`` d (body frame), (dim,)
``velocity``           m/s        v_p = v + omega x R d, (dim,)
``acceleration``       m/s^2      a_p = a + alpha x R d + omega x (omega x R d), (dim,)
``angle``              rad        2D: the rotation theta of the node (continuous over turns)
``angular_velocity``   rad/s      omega: 2D scalar, 3D the spatial vector (3,)
``rotation_matrix``    -          3D: R (9,) row by row, R11 R12 R13 R21 ... R33
``cardan``             rad        3D: (phi_x, phi_y, phi_z) with R = R_x(phi_x) R_y(phi_y) R_z(phi_z)
``euler``              rad        3D: (psi, theta, phi) with R = R_z(psi) R_x(theta) R_z(phi)
``joint_coordinate``   rad or m   ``on`` a revolute joint: relative angle of B to A about z_j;
                                  a prismatic joint: slide (p_B - p_A) . e_A along its line
``joint_rate``         rad/s, m/s the time derivative of the joint coordinate
``element_output``     as output  ``on`` an element group, ``element=``, ``output=`` (e.g. ``"N"``,
                                  a beam's end moment ``"M2"``), ``component=`` for vector outputs
=====================  =========  ===================================================================

Conventions: R is the rotation of the node from its reference orientation (bodies: body axes =
global axes at the start); ``offset`` d is given in the body frame, i.e. in global axes of the
reference configuration. omega and alpha are spatial (global components), as the integrators
hold them. The acceleration is built from the scheme's acceleration ``a`` (mid-point: the step's
mean (v_{n+1} - v_n) / dt, zero at t0 before any step; Newmark: the end-of-step value) and the
end-of-step omega and R: at an offset it differs from the exact point acceleration by O(dt) in
the mid-point scheme. The mid-point scheme meets joints exactly at positions and to O(dt^2) at
velocities, so a joint rate (and the velocity of a point on a hinge) carries that error.
Angles are continued from the previous output step (no jump of 2 pi when a body turns on);
Cardan angles are singular at phi_y = +-pi/2 and Euler angles at theta = 0, pi (gimbal lock).
A joint's relative angle and slide are measured from the reference configuration, as a joint
drive is: revolute 2D theta_B - theta_A, 3D atan2(x_B . y_A, x_B . x_A) with x = R x_j, y = R y_j
of each side; rate 2D omega_B - omega_A, 3D z_A . (omega_B - omega_A).

New quantities (a force element's force, say) are added to :data:`QUANTITIES` as a
:class:`Quantity`; its ``evaluate`` receives the :class:`Snapshot` of the step, whose
``assembly`` is the running model's assembly (None when a result is re-evaluated from a file).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from flexmb.checks import ModelError
from flexmb.multibody.joints import Joint, RigidBody

if TYPE_CHECKING:
    from flexmb.results import ModelLayout


@dataclass(frozen=True)
class Sensor:
    """One named output. ``node`` is the node (a body's node) of point and orientation sensors;
    ``offset`` (dim,) the point in the body frame (m); joint sensors carry the joint's geometry
    (``joint_kind``, sides ``a``, ``b`` as node indices, -1 the ground, ``joint_at`` (3,) the
    reference joint point, ``joint_frame`` (9,) the frame x_j y_j z_j as columns, row by row);
    element sensors ``group``, ``element``, ``output`` and ``component`` (-1: a scalar output).
    Plain data: it is written to result files as JSON."""

    name: str
    quantity: str
    node: int = -1
    offset: tuple[float, ...] = ()
    joint: str = ""
    joint_kind: str = ""
    a: int = -1
    b: int = -1
    joint_at: tuple[float, ...] = ()
    joint_frame: tuple[float, ...] = ()
    group: int = -1
    element: int = -1
    output: str = ""
    component: int = -1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Sensor":
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})

    @property
    def definition(self) -> "Quantity":
        """How its quantity is evaluated (:data:`QUANTITIES`)."""
        return QUANTITIES[self.quantity]


@dataclass
class Snapshot:
    """What a sensor reads at one output step: DOF vectors (n_dof,) ``u``, ``v``, ``a`` (``v``
    and ``a`` None in statics), the element outputs per group, and the assembly of a running
    model (None when re-evaluated from a file)."""

    layout: ModelLayout
    u: np.ndarray
    v: np.ndarray | None = None
    a: np.ndarray | None = None
    element_outputs: list[dict[str, np.ndarray]] = field(default_factory=list)
    assembly: Any = None


@dataclass(frozen=True)
class Quantity:
    """How a sensor quantity is declared and evaluated: ``evaluate(sensor, snapshot)`` -> value
    (k,) or scalar, ``components(sensor, dim)`` names its components (() for a scalar),
    ``unit(sensor, layout)``; ``resolve(model, on, options, where, fields)`` checks what
    ``add_sensor`` was given (``options``: the keywords given, of offset, element, output,
    component), puts the :class:`Sensor` fields in ``fields`` and returns a label for the default
    name (a force element would put its index in ``element``); ``needs`` is the highest derivative it reads ("u", "v" or "a"; statics records
    only "u"); ``angles(sensor)``: the values are angles, continued from the previous step; ``check(sensor,
    layout)`` refuses what the DOF map does not allow (a node without rotations); ``dims`` the
    model dimensions it exists in."""

    evaluate: Callable[[Sensor, Snapshot], Any]
    components: Callable[[Sensor, int], tuple[str, ...]]
    unit: Callable[[Sensor, "ModelLayout"], str]
    resolve: Callable[[Any, Any, dict, str, dict], str]
    needs: str = "u"
    angles: Callable[[Sensor], bool] = lambda s: False
    check: Callable[[Sensor, "ModelLayout"], None] | None = None
    dims: tuple[int, ...] = (2, 3)


# ------------------------------------------------------------------ kinematics
def _rotation(layout: ModelLayout, u: np.ndarray, node: int) -> np.ndarray:
    """R (dim, dim) of a node (identity without rotations or for the ground)."""
    dim = layout.dim
    if node < 0 or not layout.has_rotations[node]:
        return np.eye(dim)
    if dim == 2:
        theta = u[layout.index(node, "rz")]
        c, s = np.cos(theta), np.sin(theta)
        return np.array([[c, -s], [s, c]])
    from flexmb.rotations import exp_map

    return exp_map(u[[layout.index(node, r) for r in ("rx", "ry", "rz")]])


def _rates(layout: ModelLayout, w: np.ndarray | None, node: int) -> np.ndarray:
    """omega (or alpha) of a node from a velocity (acceleration) vector: (1,) in 2D, (3,) in 3D."""
    n = 1 if layout.dim == 2 else 3
    if w is None or node < 0 or not layout.has_rotations[node]:
        return np.zeros(n)
    names = ("rz",) if layout.dim == 2 else ("rx", "ry", "rz")
    return w[[layout.index(node, r) for r in names]]


def _translation(layout: ModelLayout, w: np.ndarray | None, node: int) -> np.ndarray:
    if w is None or node < 0:
        return np.zeros(layout.dim)
    return w[layout.first[node] + np.arange(layout.dim)]


def _cross(w: np.ndarray, r: np.ndarray) -> np.ndarray:
    """w x r for a spatial w (3,) or, in 2D, the scalar w (1,) about z: (-w r_y, w r_x)."""
    if r.shape[0] == 2:
        return w[0] * np.array([-r[1], r[0]])
    return np.cross(w, r)


def _point(layout: ModelLayout, snap: Snapshot, node: int, d: np.ndarray, order: int) -> np.ndarray:
    """Position (order 0), velocity (1) or acceleration (2) of the point x_node + R d (ground: d)."""
    if node < 0:
        return d.copy() if order == 0 else np.zeros(layout.dim)
    r = _rotation(layout, snap.u, node) @ d
    if order == 0:
        return layout.coordinates[node] + _translation(layout, snap.u, node) + r
    omega = _rates(layout, snap.v, node)
    if order == 1:
        return _translation(layout, snap.v, node) + _cross(omega, r)
    alpha = _rates(layout, snap.a, node)
    return _translation(layout, snap.a, node) + _cross(alpha, r) + _cross(omega, _cross(omega, r))


def _point_sensor(order: int) -> Callable[[Sensor, Snapshot], np.ndarray]:
    return lambda s, snap: _point(snap.layout, snap, s.node, np.array(s.offset), order)


# ------------------------------------------------------------------ orientation
#: |cos phi_y| (Cardan) or |sin theta| (Euler) below which the angles are taken at gimbal lock
GIMBAL_LOCK = 1e-12


def cardan_angles(R: np.ndarray) -> np.ndarray:
    """(phi_x, phi_y, phi_z) with R = R_x(phi_x) R_y(phi_y) R_z(phi_z); (..., 3, 3) -> (..., 3).
    phi_y in [-pi/2, pi/2], the others in (-pi, pi]."""
    cos_y = np.hypot(R[..., 0, 0], R[..., 0, 1])
    phi_y = np.arctan2(R[..., 0, 2], cos_y)
    phi_x = np.arctan2(-R[..., 1, 2], R[..., 2, 2])
    phi_z = np.arctan2(-R[..., 0, 1], R[..., 0, 0])
    # gimbal lock (phi_y = +-pi/2): only phi_x +- phi_z is defined; take phi_z = 0
    lock = cos_y < GIMBAL_LOCK
    phi_x = np.where(lock, np.arctan2(np.sign(R[..., 0, 2]) * R[..., 1, 0], R[..., 1, 1]), phi_x)
    return np.stack([phi_x, phi_y, np.where(lock, 0.0, phi_z)], -1)


def euler_angles(R: np.ndarray) -> np.ndarray:
    """(psi, theta, phi) with R = R_z(psi) R_x(theta) R_z(phi); (..., 3, 3) -> (..., 3).
    theta in [0, pi], the others in (-pi, pi]."""
    sin_theta = np.hypot(R[..., 0, 2], R[..., 1, 2])
    theta = np.arctan2(sin_theta, R[..., 2, 2])
    psi = np.arctan2(R[..., 0, 2], -R[..., 1, 2])
    phi = np.arctan2(R[..., 2, 0], R[..., 2, 1])
    # gimbal lock (theta = 0 or pi, e.g. the reference orientation): only psi +- phi is defined; take phi = 0
    lock = sin_theta < GIMBAL_LOCK
    return np.stack([np.where(lock, np.arctan2(R[..., 1, 0], R[..., 0, 0]), psi), theta, np.where(lock, 0.0, phi)], -1)


def axis_rotation(axis: int, angle: float) -> np.ndarray:
    """Rotation matrix (3, 3) by ``angle`` (rad) about global axis 0 (x), 1 (y) or 2 (z)."""
    c, s = np.cos(angle), np.sin(angle)
    i, j = (axis + 1) % 3, (axis + 2) % 3                  # cyclic: R_y has +s at (2, 0)
    R = np.eye(3)
    R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
    return R


# ------------------------------------------------------------------ joints
def _joint_vectors(s: Sensor, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """(reference joint point (dim,), frame (dim, 3) with columns x_j y_j z_j)."""
    return np.array(s.joint_at)[:dim], np.array(s.joint_frame).reshape(3, 3)[:dim]


def _side_point(layout: ModelLayout, snap: Snapshot, node: int, at: np.ndarray, order: int) -> np.ndarray:
    d = at if node < 0 else at - layout.coordinates[node]
    return _point(layout, snap, node, d, order)


def _slide_direction(s: Sensor, dim: int) -> np.ndarray:
    """The prismatic joint's line in the reference configuration: 2D x_j, 3D z_j."""
    return _joint_vectors(s, dim)[1][:, 0 if dim == 2 else 2]


def _joint_coordinate(s: Sensor, snap: Snapshot) -> float:
    layout, dim = snap.layout, snap.layout.dim
    if s.joint_kind == "prismatic":
        at = _joint_vectors(s, dim)[0]
        e = _rotation(layout, snap.u, s.a) @ _slide_direction(s, dim)
        gap = _side_point(layout, snap, s.b, at, 0) - _side_point(layout, snap, s.a, at, 0)
        return float(gap @ e)
    if dim == 2:
        angle = lambda node: 0.0 if node < 0 else snap.u[layout.index(node, "rz")]
        return float(angle(s.b) - angle(s.a))
    frame = _joint_vectors(s, dim)[1]
    RA, RB = _rotation(layout, snap.u, s.a), _rotation(layout, snap.u, s.b)
    xB = RB @ frame[:, 0]
    return float(np.arctan2(xB @ (RA @ frame[:, 1]), xB @ (RA @ frame[:, 0])))


def _joint_rate(s: Sensor, snap: Snapshot) -> float:
    layout, dim = snap.layout, snap.layout.dim
    omega_a, omega_b = _rates(layout, snap.v, s.a), _rates(layout, snap.v, s.b)
    if s.joint_kind == "prismatic":
        at = _joint_vectors(s, dim)[0]
        e = _rotation(layout, snap.u, s.a) @ _slide_direction(s, dim)
        gap = _side_point(layout, snap, s.b, at, 0) - _side_point(layout, snap, s.a, at, 0)
        gap_rate = _side_point(layout, snap, s.b, at, 1) - _side_point(layout, snap, s.a, at, 1)
        return float(gap_rate @ e + gap @ _cross(omega_a, e))
    if dim == 2:
        return float(omega_b[0] - omega_a[0])
    z_a = _rotation(layout, snap.u, s.a) @ _joint_vectors(s, dim)[1][:, 2]
    return float(z_a @ (omega_b - omega_a))


# ------------------------------------------------------------------ checks
def _needs_rotations(s: Sensor, layout: ModelLayout) -> None:
    if not layout.has_rotations[s.node]:
        raise ModelError(f"sensor {s.name!r}: {s.quantity} of node {s.node}, which has no rotation DOFs (a truss "
                         "node); put it on a body or a beam node")


def _offset_needs_rotations(s: Sensor, layout: ModelLayout) -> None:
    if np.any(np.array(s.offset) != 0.0) and not layout.has_rotations[s.node]:
        raise ModelError(f"sensor {s.name!r}: offset {list(s.offset)} from node {s.node}, which has no rotation "
                         "DOFs (a truss node), so the point does not move with it; use offset None or a body")


def _joint_sides_rotate(s: Sensor, layout: ModelLayout) -> None:
    needs = [n for n in (s.a, s.b) if n >= 0 and not layout.has_rotations[n]]
    if s.joint_kind == "revolute" and needs:
        raise ModelError(f"sensor {s.name!r}: the relative angle of joint {s.joint!r} needs rotation DOFs at both "
                         f"sides; node {needs[0]} has none (a pinned truss node)")


# ------------------------------------------------------------------ registry
def _always(s: Sensor) -> bool:
    return True


def _xyz(s: Sensor, dim: int) -> tuple[str, ...]:
    return ("x", "y", "z")[:dim]


def _fixed(*names: str) -> Callable[[Sensor, int], tuple[str, ...]]:
    return lambda s, dim: names


def _unit(text: str) -> Callable[[Sensor, Any], str]:
    return lambda s, layout: text


def _joint_unit(rate: bool) -> Callable[[Sensor, Any], str]:
    return lambda s, layout: ("m" if s.joint_kind == "prismatic" else "rad") + ("/s" if rate else "")


def _element_value(s: Sensor, snap: Snapshot) -> float:
    value = np.asarray(snap.element_outputs[s.group][s.output])[s.element]
    size = value.size if value.ndim else 0
    if (s.component < 0) != (size == 0) or s.component >= max(size, 1):
        raise ModelError(f"sensor {s.name!r}: element output {s.output!r} has "
                         + (f"components 0..{size - 1}; give component=" if size else "one value; leave component out")
                         + f" (got component {None if s.component < 0 else s.component})")
    return float(value if s.component < 0 else value[s.component])




# ------------------------------------------------------------------ declaring
def make_sensor(model: Any, quantity: str, on: Any, offset: Sequence[float] | None = None,
                element: int | None = None, output: str | None = None, component: int | None = None,
                name: str | None = None) -> Sensor:
    """Check a sensor declared on ``model`` (see :meth:`flexmb.model.Model.add_sensor`) and build it."""
    if not isinstance(quantity, str) or quantity not in QUANTITIES:
        hint = difflib.get_close_matches(quantity, QUANTITIES, n=1) if isinstance(quantity, str) else []
        raise ModelError(f"add_sensor: unknown quantity {quantity!r}"
                         + (f" (did you mean {hint[0]!r}?)" if hint else "")
                         + f"; choose one of {', '.join(QUANTITIES)}")
    definition = QUANTITIES[quantity]
    where = f"add_sensor({quantity!r})"
    if model.dim not in definition.dims:
        raise ModelError(f"{where}: {quantity!r} is for {definition.dims[0]}D models"
                         + ("; a 3D orientation is 'rotation_matrix', 'cardan' or 'euler'" if quantity == "angle"
                            else "; a planar body's orientation is 'angle'" if quantity in _ONLY_3D else ""))
    options = {key: value for key, value in (("offset", offset), ("element", element), ("output", output),
                                             ("component", component)) if value is not None}
    fields: dict[str, Any] = {}
    label = definition.resolve(model, on, options, where, fields)
    if name is None:
        base = re.sub(r"[^A-Za-z0-9_]+", "_", f"{quantity}_{label}").strip("_")
        taken = {s.name for s in model.sensors}
        name = next(n for n in [base] + [f"{base}_{k}" for k in range(2, len(taken) + 3)] if n not in taken)
    elif not isinstance(name, str) or not _NAME.match(name) or name in RESERVED_NAMES:
        raise ModelError(f"{where}: sensor name {name!r} must start with a letter or _ and hold only letters, digits, "
                         f"_ . - (no '@', '[', ':'), and not be one of {', '.join(sorted(RESERVED_NAMES))}")
    if any(s.name == name for s in model.sensors):
        raise ModelError(f"{where}: the model already has a sensor named {name!r}")
    return Sensor(name, quantity, **fields)


def _only(options: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    extra = [key for key in options if key not in allowed]
    if extra:
        raise ModelError(f"{where}: {extra[0]}={options[extra[0]]!r} is not an option of this quantity"
                         + (f" (it takes {', '.join(allowed)})" if allowed else " (it takes none)"))


def _resolve_point(model: Any, on: Any, options: dict[str, Any], where: str, fields: dict[str, Any]) -> str:
    """A point of a node or body: ``on`` and ``offset`` (dim,) in the body frame."""
    _only(options, ("offset",), where)
    fields["node"], label = _node_of(model, on, where)
    offset = options.get("offset")
    d = np.zeros(model.dim) if offset is None else np.asarray(offset, dtype=float)
    if d.shape != (model.dim,) or not np.all(np.isfinite(d)):
        raise ModelError(f"{where}: offset must be {model.dim} finite numbers (m, body frame), got {offset!r}")
    fields["offset"] = tuple(float(x) for x in d)
    return label


def _resolve_node(model: Any, on: Any, options: dict[str, Any], where: str, fields: dict[str, Any]) -> str:
    _only(options, (), where)
    fields["node"], label = _node_of(model, on, where)
    return label


def _resolve_joint(model: Any, on: Any, options: dict[str, Any], where: str, fields: dict[str, Any]) -> str:
    _only(options, (), where)
    joint = _joint_of(model, on, where)
    if joint.kind not in ("revolute", "prismatic"):
        raise ModelError(f"{where}: joint {joint.name!r} is {joint.kind}; joint coordinates are defined for "
                         "revolute (angle) and prismatic (slide) joints")
    fields.update(joint=joint.name, joint_kind=joint.kind, a=joint.a, b=joint.b,
                  joint_at=tuple(float(x) for x in joint.at),
                  joint_frame=tuple(float(x) for x in np.asarray(joint.frame).ravel()))
    return joint.name


def _node_of(model: Any, on: Any, where: str) -> tuple[int, str]:
    if isinstance(on, RigidBody):
        if not any(b.node == on.node and b.name == on.name for b in model.bodies):
            raise ModelError(f"{where}: rigid body {on.name!r} belongs to another model")
        return on.node, on.name
    if isinstance(on, (int, np.integer)) and not isinstance(on, bool):
        if not 0 <= on < model.n_nodes:
            raise ModelError(f"{where}: node {on} does not exist (the model has nodes 0..{model.n_nodes - 1})")
        return int(on), f"node{int(on)}"
    raise ModelError(f"{where}: on must be a node index or a RigidBody, got {on!r}")


def _joint_of(model: Any, on: Any, where: str) -> Joint:
    for joint in model.joints:
        if joint is on or (isinstance(on, str) and joint.name == on):
            return joint
    raise ModelError(f"{where}: on must be a joint of this model or its name, got {on!r}; joints: "
                     + (", ".join(repr(j.name) for j in model.joints) or "none"))


def _resolve_element(model: Any, on: Any, options: dict[str, Any], where: str, fields: dict[str, Any]) -> str:
    """An element output: ``on`` the group, ``element``, ``output`` and for vector outputs ``component``."""
    _only(options, ("element", "output", "component"), where)
    element, output, component = (options.get(key) for key in ("element", "output", "component"))
    groups = model.groups
    hits = [i for i, g in enumerate(groups) if g is on or (isinstance(on, str) and g.name == on)]
    if isinstance(on, (int, np.integer)) and not isinstance(on, bool) and 0 <= on < len(groups):
        hits = [int(on)]
    if len(hits) != 1:
        raise ModelError(f"{where}: on must be one element group of this model (the group, its name or index), got "
                         f"{on!r}; groups: " + ", ".join(f"{i}: {g.name}" for i, g in enumerate(groups)))
    g = groups[hits[0]]
    if not isinstance(element, (int, np.integer)) or isinstance(element, bool) or not 0 <= element < g.n_elements:
        raise ModelError(f"{where}: element {element!r} of group {g.name!r} does not exist (it has elements "
                         f"0..{g.n_elements - 1})")
    if output not in g.output_units:
        raise ModelError(f"{where}: group {g.name!r} has no element output {output!r}; it has "
                         + ", ".join(g.output_units))
    if component is not None and (not isinstance(component, (int, np.integer)) or component < 0):
        raise ModelError(f"{where}: component must be an index >= 0 of a vector output, got {component!r}")
    fields.update(group=hits[0], element=int(element), output=output,
                  component=-1 if component is None else int(component))
    return f"{output}_{g.name}_{int(element)}"


QUANTITIES: dict[str, Quantity] = {
    "position": Quantity(_point_sensor(0), _xyz, _unit("m"), _resolve_point, "u", check=_offset_needs_rotations),
    "velocity": Quantity(_point_sensor(1), _xyz, _unit("m/s"), _resolve_point, "v", check=_offset_needs_rotations),
    "acceleration": Quantity(_point_sensor(2), _xyz, _unit("m/s^2"), _resolve_point, "a",
                             check=_offset_needs_rotations),
    "angle": Quantity(lambda s, snap: snap.u[snap.layout.index(s.node, "rz")], _fixed(), _unit("rad"), _resolve_node,
                      "u", angles=_always, check=_needs_rotations, dims=(2,)),
    "angular_velocity": Quantity(lambda s, snap: _rates(snap.layout, snap.v, s.node),
                                 lambda s, dim: () if dim == 2 else ("x", "y", "z"), _unit("rad/s"), _resolve_node,
                                 "v", check=_needs_rotations),
    "rotation_matrix": Quantity(lambda s, snap: _rotation(snap.layout, snap.u, s.node).ravel(),
                                _fixed(*(f"R{i}{j}" for i in "123" for j in "123")), _unit("-"), _resolve_node,
                                "u", check=_needs_rotations, dims=(3,)),
    "cardan": Quantity(lambda s, snap: cardan_angles(_rotation(snap.layout, snap.u, s.node)),
                       _fixed("phi_x", "phi_y", "phi_z"), _unit("rad"), _resolve_node, "u", angles=_always,
                       check=_needs_rotations, dims=(3,)),
    "euler": Quantity(lambda s, snap: euler_angles(_rotation(snap.layout, snap.u, s.node)),
                      _fixed("psi", "theta", "phi"), _unit("rad"), _resolve_node, "u", angles=_always,
                      check=_needs_rotations, dims=(3,)),
    "joint_coordinate": Quantity(_joint_coordinate, _fixed(), _joint_unit(False), _resolve_joint, "u",
                                 angles=lambda s: s.joint_kind == "revolute", check=_joint_sides_rotate),
    "joint_rate": Quantity(_joint_rate, _fixed(), _joint_unit(True), _resolve_joint, "v", check=_joint_sides_rotate),
    "element_output": Quantity(_element_value, _fixed(),
                               lambda s, layout: layout.groups[s.group].outputs.get(s.output, ""), _resolve_element,
                               "u"),
}
_ONLY_3D = ("rotation_matrix", "cardan", "euler")
#: names of built-in series a sensor must not shadow (see :meth:`flexmb.results.Result.series`)
RESERVED_NAMES = frozenset({"t", "parameter", "load_factor", "values", "kinetic", "strain", "work", "potential", "total",
                            "newton_iterations", "constraint_residual", "Lx", "Ly", "Lz"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")


def check_sensors(sensors: Sequence[Sensor], layout: ModelLayout) -> list[Sensor]:
    """Refuse what only the DOF map tells (a point offset from, or the angle of, a node without
    rotations); returns the sensors."""
    for s in sensors:
        check = s.definition.check
        if check is not None:
            check(s, layout)
    return list(sensors)


# ------------------------------------------------------------------ recording
def sensor_components(sensor: Sensor, dim: int) -> tuple[str, ...]:
    """Names of the components of a sensor's value (() for a scalar)."""
    return sensor.definition.components(sensor, dim)


def sensor_unit(sensor: Sensor, layout: ModelLayout) -> str:
    """Unit of a sensor's value, e.g. "m/s"."""
    return sensor.definition.unit(sensor, layout)


def evaluate_sensors(layout: ModelLayout, snap: Snapshot,
                     previous: dict[str, list[np.ndarray]] | None = None) -> dict[str, np.ndarray]:
    """Values (k,) of the layout's sensors at one step; sensors that need velocities or
    accelerations are left out when ``snap`` has none (statics). ``previous`` (name -> values
    so far) continues angles across +-pi."""
    order = {"u": 0, "v": 1, "a": 2}
    have = 0 if snap.v is None else 1 if snap.a is None else 2
    values = {}
    for s in layout.sensors:
        kind = s.definition
        if order[kind.needs] > have:
            continue
        value = np.atleast_1d(np.asarray(kind.evaluate(s, snap), dtype=float)).copy()
        before = previous.get(s.name) if previous else None
        if before and kind.angles(s):
            value += 2.0 * np.pi * np.round((before[-1] - value) / (2.0 * np.pi))
        values[s.name] = value
    return values
