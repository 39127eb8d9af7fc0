"""The model a user builds: nodes, element groups, supports, prescribed motion, masses and loads.

A :class:`Model` is plain data. It knows nothing about DOF numbering (see :mod:`flexmb.dofs`)
or matrices (see :mod:`flexmb.assembly`); it validates what it is given and says which item
is wrong.

Conventions (also in the README):

* SI units throughout unless a validation case says otherwise.
* DOF names per node: 2D ``ux, uy`` and, on nodes carrying beams, ``rz``;
  3D ``ux, uy, uz`` and ``rx, ry, rz``. Planar rotations add up (any number of turns); a 3D
  node's ``rx, ry, rz`` hold the rotation vector of its rotation (principal value, |psi| <= pi,
  see :mod:`flexmb.rotations`), updated by composition; moments are spatial.
* A value given as a callable is a function of time ``t`` (s) in dynamics and of the load
  factor ``lam`` in statics; a plain number is constant in dynamics and scaled by the load
  factor in statics (proportional loading).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence, Union

import numpy as np

from flexmb.elements.base import ElementGroup
from flexmb.elements.beam2d import Beam2D
from flexmb.elements.beam3d import Beam3D
from flexmb.elements.truss import Truss
from flexmb.multibody.joints import JOINT_KINDS, Drive, Joint, RigidBody, joint_frame

Value = Union[float, Callable[[float], float]]
Vector = Union[Sequence[float], Callable[[float], Sequence[float]]]

TRANSLATION_NAMES = {2: ("ux", "uy"), 3: ("ux", "uy", "uz")}
ROTATION_NAMES = {2: ("rz",), 3: ("rx", "ry", "rz")}


class ModelError(ValueError):
    """Raised for invalid model input; the message names the offending item."""


@dataclass
class NodalValue:
    """A load or a prescribed displacement on one DOF of one node."""

    node: int
    dof: str
    value: Value

    def at(self, t: float, statics: bool = False) -> float:
        """Value at time ``t`` (dynamics) or load factor ``t`` (statics)."""
        if callable(self.value):
            return float(self.value(t))
        return float(self.value) * (t if statics else 1.0)


@dataclass
class NodalVectorLoad:
    """A force or moment vector (3,) on one 3D node whose direction depends on the node's rotation.

    kind ``"follower-force"`` / ``"follower-moment"``: the vector is given in the reference
    orientation and turns with the node (f = R F0). kind ``"semi-tangential-moment"``: a
    conservative moment whose work is ``M . c``, c the Cayley (semi-tangential) rotation vector of
    the node (Argyris et al. 1979); it is spin-conjugate to ``(I + hat(c)/2 + c c^T/4) M``.
    """

    node: int
    kind: str
    value: Vector

    def at(self, t: float, statics: bool = False) -> np.ndarray:
        if callable(self.value):
            return np.asarray(self.value(t), dtype=float)
        return np.asarray(self.value, dtype=float) * (t if statics else 1.0)


@dataclass
class Model:
    """A finite element / multibody model in ``dim`` = 2 or 3 space dimensions."""

    dim: int = 2
    coordinates: np.ndarray = field(init=False)
    groups: list[ElementGroup] = field(default_factory=list, init=False)
    prescribed: dict[tuple[int, str], NodalValue] = field(default_factory=dict, init=False)
    clamped: set[int] = field(default_factory=set, init=False)
    loads: list[NodalValue] = field(default_factory=list, init=False)
    vector_loads: list[NodalVectorLoad] = field(default_factory=list, init=False)
    point_masses: list[tuple[int, float, float]] = field(default_factory=list, init=False)
    bodies: list[RigidBody] = field(default_factory=list, init=False)
    joints: list[Joint] = field(default_factory=list, init=False)
    gravity: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        if self.dim not in (2, 3):
            raise ModelError(f"Model dim must be 2 or 3, got {self.dim!r}")
        self.coordinates = np.zeros((0, self.dim))
        self.gravity = np.zeros(self.dim)

    # ------------------------------------------------------------------ nodes
    @property
    def n_nodes(self) -> int:
        return len(self.coordinates)

    def add_node(self, position: Sequence[float]) -> int:
        """Add one node at ``position`` (m); returns its index."""
        return int(self.add_nodes(np.asarray(position, dtype=float)[None, :])[0])

    def add_nodes(self, positions: np.ndarray) -> np.ndarray:
        """Add nodes at ``positions`` (n, dim) in m; returns their indices (n,)."""
        positions = np.atleast_2d(np.asarray(positions, dtype=float))
        if positions.shape[1] != self.dim:
            raise ModelError(
                f"node positions must have {self.dim} coordinates each, got shape {positions.shape}")
        if not np.all(np.isfinite(positions)):
            bad = int(np.flatnonzero(~np.all(np.isfinite(positions), axis=1))[0])
            raise ModelError(f"node {self.n_nodes + bad} has a non-finite coordinate {positions[bad]}")
        first = self.n_nodes
        self.coordinates = np.vstack([self.coordinates, positions])
        return np.arange(first, self.n_nodes)

    def _check_node(self, node: int, what: str) -> int:
        if not (0 <= int(node) < self.n_nodes):
            raise ModelError(f"{what}: node {node} does not exist (model has {self.n_nodes} nodes)")
        return int(node)

    def dof_names(self, rotations: bool) -> tuple[str, ...]:
        """DOF names of a node with or without rotational DOFs."""
        return TRANSLATION_NAMES[self.dim] + (ROTATION_NAMES[self.dim] if rotations else ())

    def _check_dof(self, dof: str, what: str) -> str:
        if dof not in self.dof_names(True):
            raise ModelError(f"{what}: unknown DOF {dof!r}; a {self.dim}D node has "
                             f"{', '.join(self.dof_names(True))}")
        return dof

    # --------------------------------------------------------------- elements
    def add_group(self, group: ElementGroup) -> ElementGroup:
        """Add an element group; its connectivity must refer to existing nodes."""
        if group.dim != self.dim:
            raise ModelError(f"element group {group.name!r} is {group.dim}D, the model is {self.dim}D")
        conn = group.connectivity
        bad = np.flatnonzero(np.any((conn < 0) | (conn >= self.n_nodes), axis=1))
        if bad.size:
            e = int(bad[0])
            raise ModelError(f"element {e} of group {group.name!r} refers to node(s) "
                             f"{conn[e].tolist()}, the model has nodes 0..{self.n_nodes - 1}")
        X = self.coordinates[conn]                                   # (n_el, nn, dim)
        lengths = np.linalg.norm(X[:, -1] - X[:, 0], axis=-1)
        if np.any(lengths <= 0.0):
            e = int(np.flatnonzero(lengths <= 0.0)[0])
            raise ModelError(f"element {e} of group {group.name!r} has zero length "
                             f"(nodes {conn[e].tolist()} coincide)")
        self.groups.append(group)
        return group

    def add_truss(self, connectivity: np.ndarray, EA: float | np.ndarray, rho_A: float | np.ndarray = 0.0,
                  mass: str = "lumped", name: str = "truss") -> Truss:
        """Add co-rotational bars (n_el, 2): EA in N, rho_A in kg/m."""
        return self.add_group(Truss(connectivity, self.dim, EA, rho_A, mass, name))

    def add_beam2d(self, connectivity: np.ndarray, EA: float | np.ndarray, EI: float | np.ndarray,
                   rho_A: float | np.ndarray = 0.0, rho_I: float | np.ndarray = 0.0,
                   mass: str = "lumped", name: str = "beam2d", second_order: bool = False) -> Beam2D:
        """Add planar co-rotational beams (n_el, 2): EA in N, EI in N m^2, rho_A in kg/m, rho_I in kg m;
        ``mass`` ``"lumped"``, ``"consistent"`` or ``"cubic"``, ``second_order`` the bowing term
        (see :class:`~flexmb.elements.beam2d.Beam2D`)."""
        if self.dim != 2:
            raise ModelError(f"add_beam2d needs a 2D model, this one is {self.dim}D")
        return self.add_group(Beam2D(connectivity, EA, EI, rho_A, rho_I, mass, name, second_order))

    def add_beam3d(self, connectivity: np.ndarray, EA: float | np.ndarray, GJ: float | np.ndarray,
                   EI_y: float | np.ndarray, EI_z: float | np.ndarray, **section) -> Beam3D:
        """Add spatial co-rotational beams (n_el, 2); see :class:`~flexmb.elements.beam3d.Beam3D`.

        EA in N, GJ, EI_y, EI_z in N m^2; keywords ``GA_ky, GA_kz`` (N), ``rho_A`` (kg/m),
        ``rho_I`` (3,) (kg m), ``y_axis``, ``second_order``, ``mass``, ``name``.
        """
        if self.dim != 3:
            raise ModelError(f"add_beam3d needs a 3D model, this one is {self.dim}D")
        group = self.add_group(Beam3D(connectivity, EA, GJ, EI_y, EI_z, **section))
        try:
            group.section_frames(self.coordinates[group.connectivity])
        except ValueError as exc:
            self.groups.pop()
            raise ModelError(str(exc)) from None
        return group

    # ------------------------------------------------------- supports/motion
    def fix(self, node: int, dofs: Sequence[str] | str = "all") -> None:
        """Fix DOFs of ``node``: ``"all"`` (translations and, if the node ends up carrying
        rotations, rotations too), one name such as ``"uy"``, or a list of names."""
        node = self._check_node(node, "fix")
        if dofs == "all":
            self.clamped.add(node)
            return
        for dof in ([dofs] if isinstance(dofs, str) else dofs):
            self.prescribe(node, dof, 0.0)

    def prescribe(self, node: int, dof: str, value: Value) -> None:
        """Prescribe the displacement (m) or rotation (rad) of one DOF; ``value`` may be f(t)."""
        node = self._check_node(node, "prescribe")
        dof = self._check_dof(dof, f"prescribe node {node}")
        self.prescribed[(node, dof)] = NodalValue(node, dof, value)

    # ------------------------------------------------------- masses and loads
    def add_point_mass(self, node: int, mass: float, inertia: float = 0.0) -> None:
        """Add a point mass (kg) and, on nodes with rotations, a rotary inertia (kg m^2)."""
        node = self._check_node(node, "add_point_mass")
        if mass < 0 or inertia < 0:
            raise ModelError(f"point mass at node {node}: mass {mass} and inertia {inertia} "
                             "must be non-negative")
        self.point_masses.append((node, float(mass), float(inertia)))

    def add_load(self, node: int, dof: str, value: Value) -> None:
        """Add a nodal force (N) or moment (N m) on one DOF; ``value`` may be f(t)."""
        node = self._check_node(node, "add_load")
        dof = self._check_dof(dof, f"add_load node {node}")
        self.loads.append(NodalValue(node, dof, value))

    def add_follower_force(self, node: int, force: Vector) -> None:
        """Force (N) given in the node's reference orientation that turns with the node (3D)."""
        self._add_vector_load(node, "follower-force", force)

    def add_follower_moment(self, node: int, moment: Vector) -> None:
        """Moment (N m) given in the node's reference orientation that turns with the node (3D)."""
        self._add_vector_load(node, "follower-moment", moment)

    def add_semi_tangential_moment(self, node: int, moment: Vector) -> None:
        """Conservative semi-tangential end moment (N m), as in Meijaard's shaft buckling (3D)."""
        self._add_vector_load(node, "semi-tangential-moment", moment)

    def _add_vector_load(self, node: int, kind: str, value: Vector) -> None:
        node = self._check_node(node, f"{kind} load")
        if self.dim != 3:
            raise ModelError(f"{kind} load at node {node}: only for 3D models")
        if not callable(value) and np.shape(value) != (3,):
            raise ModelError(f"{kind} load at node {node}: need 3 components, got {np.shape(value)}")
        self.vector_loads.append(NodalVectorLoad(node, kind, value))

    # ------------------------------------------------------- bodies and joints
    def add_rigid_body(self, position: Sequence[float], mass: float, inertia: float | Sequence,
                       name: str | None = None) -> RigidBody:
        """Add a rigid body with its centre of mass at ``position`` (m): mass (kg) and inertia
        about the centre of mass, 2D J_z (kg m^2), 3D the tensor (3, 3) (or its diagonal (3,)) in
        the reference orientation. Its node carries translations and rotations."""
        name = name or f"body {len(self.bodies)}"
        J = np.asarray(inertia, dtype=float)
        if self.dim == 3 and J.shape == (3,):
            J = np.diag(J)
        expected = () if self.dim == 2 else (3, 3)
        if J.shape != expected:
            raise ModelError(f"rigid body {name!r}: inertia must be {'a number' if self.dim == 2 else 'a (3, 3) tensor or its diagonal'}, got shape {J.shape}")
        eig = np.atleast_1d(J) if self.dim == 2 else np.linalg.eigvalsh(0.5 * (J + J.T))
        if not (mass > 0 and np.all(eig >= 0) and (self.dim == 2 or np.allclose(J, J.T))):
            raise ModelError(f"rigid body {name!r}: mass {mass} must be positive and the inertia "
                             "symmetric positive semi-definite")
        body = RigidBody(name, self.add_node(position), float(mass), J)
        self.bodies.append(body)
        return body

    def _side(self, side: int | RigidBody | None, joint: str) -> int:
        if side is None:
            return -1
        if isinstance(side, RigidBody):
            return side.node
        return self._check_node(side, joint)

    def add_joint(self, kind: str, a: int | RigidBody | None, b: int | RigidBody | None,
                  at: Sequence[float] | None = None, axis: Sequence[float] | None = None,
                  x_axis: Sequence[float] | None = None, drive: Drive = None, name: str | None = None) -> Joint:
        """Connect side ``a`` to side ``b`` (a node, a :class:`RigidBody`, or None for the ground).

        ``kind``: one of ``revolute, spherical, universal, cylindrical, prismatic, fixed,
        point-on-line`` (see :mod:`flexmb.multibody.joints`). ``at``: joint point in the
        reference configuration (default: b's node). ``axis`` (3D): the joint axis z_j (revolute,
        cylindrical, prismatic, point-on-line: the line); ``x_axis``: x_j (universal: a's cross
        axis; 2D: the direction of a prismatic or point-on-line joint's line). ``drive``: f(t)
        for a revolute (relative angle, rad) or prismatic (relative displacement, m) joint,
        relative to the reference configuration.
        """
        name = name or f"{kind} {len(self.joints)}"
        if kind not in JOINT_KINDS + ("attach",):
            raise ModelError(f"joint {name!r}: unknown kind {kind!r}; choose one of {', '.join(JOINT_KINDS)}")
        ia, ib = self._side(a, f"joint {name!r}"), self._side(b, f"joint {name!r}")
        if ib < 0 or ia == ib:
            raise ModelError(f"joint {name!r}: side b must be a node or body different from side a "
                             "(put the ground as side a)")
        if self.dim == 2 and kind in ("spherical", "universal", "cylindrical"):
            raise ModelError(f"joint {name!r}: a {kind} joint needs a 3D model")
        if drive is not None and kind not in ("revolute", "prismatic"):
            raise ModelError(f"joint {name!r}: only revolute and prismatic joints can be driven")
        point = self.coordinates[ib] if at is None else np.asarray(at, dtype=float)
        if point.shape != (self.dim,):
            raise ModelError(f"joint {name!r}: the joint point needs {self.dim} coordinates, got {point.tolist()}")
        try:
            frame = joint_frame(self.dim, axis, x_axis)
        except ValueError as exc:
            raise ModelError(f"joint {name!r}: {exc}") from None
        joint = Joint(kind, name, ia, ib, np.r_[point, np.zeros(3 - self.dim)], frame, drive)
        self.joints.append(joint)
        return joint

    def attach(self, node: int, body: int | RigidBody, name: str | None = None) -> Joint:
        """Fix an FE node to a body (or another node) where it is: welded if the node carries
        rotations (a beam node), pinned otherwise."""
        return self.add_joint("attach", body, node, at=self.coordinates[self._check_node(node, "attach")],
                              name=name or f"attach node {node}")

    def set_gravity(self, acceleration: Sequence[float]) -> None:
        """Uniform gravitational acceleration (m/s^2), e.g. ``[0, -9.81]``."""
        g = np.asarray(acceleration, dtype=float)
        if g.shape != (self.dim,):
            raise ModelError(f"gravity must have {self.dim} components, got {g.tolist()}")
        self.gravity = g

    @property
    def characteristic_length(self) -> float:
        """Size of the model's bounding box (m), used to scale Newton tolerances."""
        if self.n_nodes == 0:
            return 1.0
        span = np.ptp(self.coordinates, axis=0).max()
        return float(span) if span > 0 else 1.0
