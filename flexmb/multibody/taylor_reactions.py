"""Joint reactions as the unknowns: the singularity-free formulation of Huang et al. (2001).

Reference: C.-F. Huang, C.-D. Yan, S.-L. Jeng, W.-H. Cheng, *A constrained multibody system
dynamics avoiding kinematic singularities*, JSME International Journal (2001). Equation
numbers below are the paper's.

Bodies and state
----------------
Rigid bodies with mass m, inertia J' (3, 3) about the centre of mass in body axes, position r
of the centre of mass, rotation A (body -> global), velocity v and angular velocity omega, both
in global components (:class:`BodyStates`). A planar system (``dim=2``) is the same thing moving
in the x-y plane: A is a rotation about z, omega = (0, 0, omega_z), and J' = J_z I (in-plane
moments never arise, so only J_z enters; the other entries only keep J' invertible).

Unknowns and the reaction on each body (eqs. 9-11, 34-35)
---------------------------------------------------------
Each joint k connects side i (a body or the ground) and side j (a body). Its unknowns are the
components of the reaction on body j in the joint frame (b_i, c_i, a_i) carried by side i
(a_i: the joint axis; b_i, c_i perpendicular to it); body i receives the opposite force and
moment (eqs. 34-35). The force acts at the joint point p_j of body j on *both* bodies, so each
reaction is an action-reaction pair on one line (for cylindrical and prismatic joints p_j is
also where body j touches body i's axis). Unknowns per kind (all in the frame of side i):

============  =====================  ===========================================  ============
kind          force components       moment components                            conditions
============  =====================  ===========================================  ============
spherical     b_i, c_i, a_i          -                                            3
revolute      b_i, c_i, a_i          b_i, c_i                                     5
cylindrical   b_i, c_i               b_i, c_i                                     4
prismatic     b_i, c_i               b_i, c_i, a_i                                5
revolute 2D   b_i, c_i (in-plane)    -                                            2
============  =====================  ===========================================  ============

A revolute joint may carry a motor torque tau(t) about a_i, on body j, and -tau on body i.

Prediction over a step (eqs. 12-20)
-----------------------------------
With the Newton-Euler accelerations a = F/m, alpha = J^-1 (N - omega x J omega), J = A J' A^T
(eqs. 9-11), a body point with arm d = p - r and a body-fixed direction e move over the step
dt by the second-order Taylor expansion (eqs. 12, 18)

    Delta p = (v + omega x d) dt + (a + alpha x d + omega x (omega x d)) dt^2/2 = U + W Q,
    Delta e = omega x e dt + (alpha x e + omega x (omega x e)) dt^2/2          = P + H Q,

where the reaction-free parts U, P (eqs. 13.a, 19.a) hold the velocities, the applied loads
and the gyroscopic term, and the reaction parts are W Q = (F_Q/m + alpha_Q x d) dt^2/2 and
H Q = alpha_Q x e dt^2/2 with alpha_Q = J^-1 N_Q (eqs. 13.b, 14, 19.b, 20): F_Q and N_Q are the
joint forces on the body and their moments about its centre of mass plus the joint moments.

Joint conditions at t + dt, linearized in Q
-------------------------------------------
Every condition is one of three forms in the predicted points and directions:

* point coincidence, components of p_j - p_i (eqs. 21-23; linear in Q, no term dropped);
* a dot product of two directions, e.g. b_i . a_j (bilinear);
* a dot product of the offset p_j - p_i with a direction of side i (bilinear).

Bilinear forms (x0 + X Q) . (y0 + Y Q) are replaced by x0 . y0 + (x0^T Y + y0^T X) Q, i.e. the
product of the two Q-dependent parts is dropped, as the paper does from eq. 26 to eq. 27.
The conditions per kind:

* spherical: p_j - p_i = 0 (3, eq. 23);
* revolute (3D): p_j - p_i = 0 and b_i . a_j = c_i . a_j = 0. The paper's cross product
  (a_i + Delta a_i) x (a_j + Delta a_j) = 0 (eqs. 25-27) is three equations of rank two; the two
  dot conditions say the same (a_j has no component across a_i) and keep the reaction matrix
  square with the two moment unknowns that a revolute joint can carry;
* cylindrical: the two axis conditions and (p_j - p_i) . b_i = (p_j - p_i) . c_i = 0, the two
  independent components of the paper's a_i x d = 0 (eqs. 28-31);
* prismatic: the cylindrical conditions and the no-twist condition b_i . c_j = 0 (eqs. 32-33,
  h_i = b_i, h_j = c_j, perpendicular at the start);
* revolute (2D): the x and y components of p_j - p_i.

All joints' rows form the square reaction matrix G = d(conditions)/dQ (eqs. 36, 39; the number
of unknowns equals the number of conditions for every kind) and the Q-free part c, which holds
the current mismatch p_j - p_i (eq. 23) so that joint drift is corrected, not accumulated.
G Q = -c is solved by LU (numpy.linalg.solve; for these small dense matrices it is much
faster than scipy's lu_solve).

Update
------
With the solved reactions (Fig. 7): r += v dt + a dt^2/2 and A <- exp(hat(omega dt + alpha dt^2/2)) A
(the exponential map agrees with the second-order expansion of A, eq. 5, to O(dt^3) and keeps A
orthogonal). The joints then close to O(dt^3) per step (third-order motion and the dropped
products), which the next step's c corrects. Velocities by one of two updates
(``velocity_update`` of :func:`integrate_taylor`):

* ``"euler"``, the paper's: v += a dt, omega += alpha dt. First order globally (the
  velocities are explicit Euler). The velocities are not constrained: a joint-velocity mismatch
  e comes back as -e after the next step (the position closure gives the joint point the
  end-of-step velocity -e), so this mode alternates every step; it is neutral to leading order,
  but in fast rotation it grows (a rod spinning at 10 rad/s about its pin: by about 2 % per
  step at dt = 1 ms, whatever the step size).
* ``"rattle"``, added here: half a kick v + a dt/2 before the (unchanged) position step, half a
  kick after it with the loads at t + dt and end-of-step reactions mu that make the rates of
  the joint conditions vanish, Phi_q(q_{n+1}) [v, omega]_{n+1} = 0, as in RATTLE (Andersen,
  J. Comput. Phys. 52, 1983). Second order, no alternating mode; the matrix of mu,
  dt/2 Phi_q M^-1 Z^T, is singular exactly where G is.

At a state with consistent velocities the point conditions close a quadratic in time whose
first derivative is exact, so they return the exact acceleration-level reactions for any dt;
round-off grows like eps |p| / (|a| dt^2) because c compares positions and Q moves them by
a dt^2/2.

Kinematic singularities
-----------------------
A reaction that is in equilibrium on every body by itself (a self-stress, Z^T Q = 0 in the
paper's notation) changes no acceleration, so it is a null vector of G. A self-stress exists
exactly where the joint conditions' Jacobian Phi_q of the absolute coordinates loses rank
(static indeterminacy, the paper's Fig. 1(b), where the paper also has det = 0). Singularities
of a *coordinate choice* (a minimal-coordinate or input-output Jacobian, the paper's Fig. 1(a);
the double pendulum's end-point Jacobian at theta_1 = theta_2, Fig. 8) leave Phi_q of the
absolute coordinates, and G, regular: those are the singularities the formulation avoids.
At a self-stress :func:`solve_reactions` raises :class:`SingularReactionMatrix` naming the joints
that carry it; near one, that component of Q is ill-determined but moves nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from flexmb.checks import keywords_listed
from flexmb.multibody.joints import joint_frame
from flexmb.rotations import exp_map, skew

#: a motor torque (N m) as a function of time (s)
MotorTorque = Callable[[float], float]
#: extra loads: (t, state) -> (forces (n_bodies, dim) at the centres of mass, N; moments: 3D
#: (n_bodies, 3), 2D (n_bodies,), N m), global components
ExternalLoads = Callable[[float, "BodyStates"], tuple[np.ndarray, np.ndarray]]

GROUND = -1

# Condition terms per joint kind: ("offset", k) is component k of p_j - p_i (global axes);
# (u, v) is the dot product of the named vectors. Vectors of side i: b_i, c_i; of side j: a_j, c_j.
_CONDITIONS: dict[str, list[tuple[str, str | int]]] = {
    "spherical": [("offset", 0), ("offset", 1), ("offset", 2)],
    "revolute": [("offset", 0), ("offset", 1), ("offset", 2), ("b_i", "a_j"), ("c_i", "a_j")],
    "cylindrical": [("b_i", "a_j"), ("c_i", "a_j"), ("offset", "b_i"), ("offset", "c_i")],
    "prismatic": [("b_i", "a_j"), ("c_i", "a_j"), ("offset", "b_i"), ("offset", "c_i"), ("b_i", "c_j")],
    "revolute2d": [("offset", 0), ("offset", 1)],
}
# Reaction unknowns per kind: columns (0: b_i, 1: c_i, 2: a_i) of side i's frame for forces, moments.
_UNKNOWNS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "spherical": ((0, 1, 2), ()),
    "revolute": ((0, 1, 2), (0, 1)),
    "cylindrical": ((0, 1), (0, 1)),
    "prismatic": ((0, 1), (0, 1, 2)),
    "revolute2d": ((0, 1), ()),
}
# the directions each kind's conditions use (the others need not be predicted)
_DIRECTIONS = {kind: sorted({n for term in terms for n in term if isinstance(n, str) and n != "offset"})
               for kind, terms in _CONDITIONS.items()}
JOINT_KINDS_3D = ("spherical", "revolute", "cylindrical", "prismatic")
JOINT_KINDS_2D = ("revolute",)


class SingularReactionMatrix(RuntimeError):
    """The reaction matrix G is singular (a self-stress exists: statically indeterminate).

    Raised by :func:`integrate_taylor` with ``history``: the states recorded before the failure.
    """

    history: "TaylorHistory | None" = None


@dataclass(frozen=True)
class Body:
    """A rigid body: name, mass (kg) and inertia J' (3, 3) about the centre of mass, body axes (kg m^2)."""

    name: str
    mass: float
    inertia: np.ndarray


@dataclass(frozen=True)
class Joint:
    """A joint between side i (body index or GROUND) and body j.

    ``point_i``, ``point_j`` (3,): the joint point on each side, in body axes from the centre of
    mass (the ground: global coordinates). ``frame_i``, ``frame_j`` (3, 3): columns b, c, a (a the
    joint axis), in body axes (the ground: global), equal in space at the start.
    """

    kind: str                              # key of _CONDITIONS ("revolute2d" for planar revolutes)
    name: str
    body_i: int
    body_j: int
    point_i: np.ndarray
    point_j: np.ndarray
    frame_i: np.ndarray
    frame_j: np.ndarray
    motor: MotorTorque | None = None

    @property
    def n_conditions(self) -> int:
        return len(_CONDITIONS[self.kind])


@dataclass
class BodyStates:
    """State of all bodies, global components: ``position`` (n, 3) m, ``rotation`` (n, 3, 3) body ->
    global, ``velocity`` (n, 3) m/s, ``angular_velocity`` (n, 3) rad/s."""

    position: np.ndarray
    rotation: np.ndarray
    velocity: np.ndarray
    angular_velocity: np.ndarray

    def copy(self) -> "BodyStates":
        return BodyStates(self.position.copy(), self.rotation.copy(), self.velocity.copy(),
                          self.angular_velocity.copy())


class TaylorSystem:
    """Rigid bodies, joints and gravity for :func:`integrate_taylor` (2D or 3D, SI units).

    Build with :meth:`add_body` and :meth:`add_joint`; the bodies' initial state is given with
    them. Planar systems (``dim=2``) accept revolute joints only.
    """

    def __init__(self, dim: int = 3, gravity: np.ndarray | None = None) -> None:
        if dim not in (2, 3):
            raise ValueError(f"TaylorSystem: dim must be 2 or 3, got {dim}")
        self.dim = dim
        g = np.zeros(3)
        if gravity is not None:
            gravity = np.asarray(gravity, dtype=float)
            if gravity.shape != (dim,):
                raise ValueError(f"TaylorSystem: gravity needs {dim} components, got shape {gravity.shape}")
            g[:dim] = gravity
        self.gravity = g                                          # (3,) m/s^2
        self.bodies: list[Body] = []
        self.joints: list[Joint] = []
        self._initial: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self._initial_angles: list[float] = []                    # 2D: the angles as given

    @classmethod
    def from_model(cls, model, u: np.ndarray | None = None, v: np.ndarray | None = None) -> "TaylorSystem":
        """The rigid bodies, joints and gravity of a flexmb Model (or Assembly) with the state of
        the DOF vectors u, v (see :mod:`flexmb.multibody.taylor_model`)."""
        from flexmb.multibody.taylor_model import taylor_system_from_model

        return taylor_system_from_model(model, u, v)

    # ------------------------------------------------------------------ building
    def add_body(self, name: str, mass: float, inertia, position, orientation=None, velocity=None,
                 angular_velocity=None) -> int:
        """Add a body and its initial state; returns its index.

        2D: ``inertia`` J_z (kg m^2), ``position`` (2,), ``orientation`` the angle of the body axes
        (rad), ``velocity`` (2,), ``angular_velocity`` omega_z (rad/s). 3D: ``inertia`` (3, 3) or
        principal values (3,) in body axes, ``position`` (3,), ``orientation`` the rotation matrix
        A (3, 3) body -> global, ``velocity`` (3,) and ``angular_velocity`` (3,) global.
        """
        if not mass > 0.0:
            raise ValueError(f"body {name!r}: mass must be positive, got {mass}")
        d = self.dim
        r, v = np.zeros(3), np.zeros(3)
        r[:d] = _vector(position, d, f"body {name!r}: position")
        if velocity is not None:
            v[:d] = _vector(velocity, d, f"body {name!r}: velocity")
        if d == 2:
            J = float(inertia)
            if not J > 0.0:
                raise ValueError(f"body {name!r}: inertia J_z must be positive, got {inertia}")
            Jp = J * np.eye(3)
            angle = 0.0 if orientation is None else float(orientation)
            A = exp_map(np.array([0.0, 0.0, angle]))
            w = np.array([0.0, 0.0, 0.0 if angular_velocity is None else float(angular_velocity)])
            self._initial_angles.append(angle)
        else:
            Jp = np.asarray(inertia, dtype=float)
            Jp = np.diag(Jp) if Jp.shape == (3,) else Jp
            if Jp.shape != (3, 3) or not np.allclose(Jp, Jp.T) or np.linalg.eigvalsh(Jp).min() <= 0.0:
                raise ValueError(f"body {name!r}: inertia must be symmetric positive definite (3, 3) "
                                 f"or three positive principal values, got {inertia}")
            A = np.eye(3) if orientation is None else np.asarray(orientation, dtype=float)
            if A.shape != (3, 3) or not np.allclose(A.T @ A, np.eye(3), atol=1e-10) or np.linalg.det(A) < 0:
                raise ValueError(f"body {name!r}: orientation must be a rotation matrix (3, 3)")
            w = np.zeros(3) if angular_velocity is None else _vector(angular_velocity, 3,
                                                                      f"body {name!r}: angular_velocity")
        self.bodies.append(Body(name, float(mass), Jp))
        self._initial.append((r, A, v, w))
        return len(self.bodies) - 1

    def add_joint(self, kind: str, body_i: int | None, body_j: int, at, axis=None,
                  motor: MotorTorque | None = None, name: str | None = None) -> int:
        """Add a joint between ``body_i`` (None: the ground) and ``body_j`` at the point ``at``
        (global, initial configuration) with the axis ``axis`` (global; 3D only, required for
        revolute, cylindrical and prismatic joints). ``motor``: torque tau(t) (N m) about the axis
        on body j (-tau on body i), revolute joints only. Returns the joint index."""
        name = name if name is not None else f"{kind} {len(self.joints)}"
        allowed = JOINT_KINDS_2D if self.dim == 2 else JOINT_KINDS_3D
        if kind not in allowed:
            raise ValueError(f"joint {name!r}: kind {kind!r} is not supported in {self.dim}D "
                             f"(supported: {', '.join(allowed)})")
        side_i = GROUND if body_i is None else self._body_index(body_i, name, "body_i")
        side_j = self._body_index(body_j, name, "body_j")
        if side_i == side_j:
            raise ValueError(f"joint {name!r}: connects body {side_j} to itself")
        if motor is not None and kind != "revolute":
            raise ValueError(f"joint {name!r}: a motor needs a revolute joint, not {kind!r}")
        point = np.zeros(3)
        point[:self.dim] = _vector(at, self.dim, f"joint {name!r}: at")
        if self.dim == 2:
            if axis is not None:
                raise ValueError(f"joint {name!r}: a planar revolute joint's axis is z; do not give one")
            frame, kind = np.eye(3), "revolute2d"
        elif axis is None:
            if kind != "spherical":
                raise ValueError(f"joint {name!r}: a {kind} joint needs an axis")
            frame = np.eye(3)
        else:
            axis = _vector(axis, 3, f"joint {name!r}: axis")
            if not np.linalg.norm(axis) > 1e-12:
                raise ValueError(f"joint {name!r}: the axis {axis} has zero length")
            # columns b, c, a: a along the axis, b from the global axis least aligned with it
            frame = joint_frame(3, axis, None)
        point_i, frame_i = self._to_side(side_i, point, frame)
        point_j, frame_j = self._to_side(side_j, point, frame)
        self.joints.append(Joint(kind, name, side_i, side_j, point_i, point_j, frame_i, frame_j, motor))
        return len(self.joints) - 1

    def _body_index(self, body: int, joint: str, which: str) -> int:
        if not isinstance(body, (int, np.integer)) or not 0 <= body < len(self.bodies):
            raise ValueError(f"joint {joint!r}: {which} = {body!r} is not a body index "
                             f"(the system has {len(self.bodies)} bodies: 0..{len(self.bodies) - 1})")
        return int(body)

    def _to_side(self, side: int, point: np.ndarray, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A global point and frame in the body axes of ``side`` (unchanged for the ground)."""
        if side == GROUND:
            return point.copy(), frame.copy()
        r, A, _, _ = self._initial[side]
        return A.T @ (point - r), A.T @ frame

    # ------------------------------------------------------------------ queries
    @property
    def n_bodies(self) -> int:
        return len(self.bodies)

    @property
    def n_unknowns(self) -> int:
        """Number of reaction components (= number of joint conditions)."""
        return sum(j.n_conditions for j in self.joints)

    def unknown_slices(self) -> list[slice]:
        """Each joint's slice of the unknown vector Q (and of the condition rows)."""
        sizes = np.cumsum([0] + [j.n_conditions for j in self.joints])
        return [slice(int(a), int(b)) for a, b in zip(sizes[:-1], sizes[1:])]

    def initial_state(self) -> BodyStates:
        """The bodies' state as given to :meth:`add_body`."""
        r, A, v, w = (np.array(x, dtype=float).reshape(-1, *s) for x, s in
                      zip(zip(*self._initial), ((3,), (3, 3), (3,), (3,))))
        return BodyStates(r, A, v, w)

    @property
    def masses(self) -> np.ndarray:
        return np.array([b.mass for b in self.bodies])

    def inverse_inertia(self, state: BodyStates) -> np.ndarray:
        """J^-1 = A J'^-1 A^T in global axes, (n_bodies, 3, 3)."""
        Jp_inv = np.linalg.inv(np.array([b.inertia for b in self.bodies]))
        return state.rotation @ Jp_inv @ np.swapaxes(state.rotation, 1, 2)

    def inertia(self, state: BodyStates) -> np.ndarray:
        """J = A J' A^T in global axes, (n_bodies, 3, 3)."""
        Jp = np.array([b.inertia for b in self.bodies])
        return state.rotation @ Jp @ np.swapaxes(state.rotation, 1, 2)


def _vector(x, n: int, what: str) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.shape != (n,):
        raise ValueError(f"{what} needs {n} components, got shape {x.shape}")
    return x


# ---------------------------------------------------------------------- joint geometry at t
@dataclass
class _SideGeometry:
    """Current global geometry of one side of a joint: joint point, its arm from the centre of
    mass (zero for the ground), and the frame columns b, c, a."""

    body: int
    point: np.ndarray           # (3,)
    arm: np.ndarray             # (3,)
    frame: np.ndarray           # (3, 3)


def _side(state: BodyStates, body: int, point: np.ndarray, frame: np.ndarray) -> _SideGeometry:
    if body == GROUND:
        return _SideGeometry(body, point, np.zeros(3), frame)
    A = state.rotation[body]
    arm = A @ point
    return _SideGeometry(body, state.position[body] + arm, arm, A @ frame)


def _sides(state: BodyStates, joint: Joint) -> tuple[_SideGeometry, _SideGeometry]:
    return (_side(state, joint.body_i, joint.point_i, joint.frame_i),
            _side(state, joint.body_j, joint.point_j, joint.frame_j))


def _named_directions(kind: str, side_i: _SideGeometry, side_j: _SideGeometry) -> dict[str, tuple[_SideGeometry, int]]:
    """The directions that the conditions of ``kind`` use: name -> (side, column of its frame)."""
    where = {"b_i": (side_i, 0), "c_i": (side_i, 1), "a_j": (side_j, 2), "c_j": (side_j, 1)}
    return {name: where[name] for name in _DIRECTIONS[kind]}


def _cross(u: np.ndarray, w: np.ndarray) -> np.ndarray:
    """u x w for single 3-vectors (np.cross is slow on tiny arrays)."""
    return np.array([u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]])


def _evaluate(terms, vectors: dict[str, np.ndarray]) -> np.ndarray:
    """Condition values from the primitive vectors (3,) by name."""
    return np.array([vectors[u][v] if isinstance(v, int) else vectors[u] @ vectors[v] for u, v in terms])


def _linearize(terms, vectors: dict[str, np.ndarray],
               jacobians: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Values and rows of the conditions for primitives x0 + X z (values (3,), jacobians (3, n)):
    (x0 + X z) . (y0 + Y z) ~ x0 . y0 + (x0^T Y + y0^T X) z, the product of the z parts dropped."""
    rows = [jacobians[u][v] if isinstance(v, int) else vectors[u] @ jacobians[v] + vectors[v] @ jacobians[u]
            for u, v in terms]
    return _evaluate(terms, vectors), np.array(rows)


# ---------------------------------------------------------------------- loads and reaction map
def applied_loads(system: TaylorSystem, state: BodyStates, t: float,
                  external_loads: ExternalLoads | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Gravity, motor torques and external loads on every body: forces at the centres of mass and
    moments, global components, (n_bodies, 3) each (N, N m)."""
    forces = system.masses[:, None] * system.gravity[None, :]
    moments = np.zeros((system.n_bodies, 3))
    for joint in system.joints:
        if joint.motor is not None:
            side_i, _ = _sides(state, joint)
            torque = joint.motor(t) * side_i.frame[:, 2]
            moments[joint.body_j] += torque
            if joint.body_i != GROUND:
                moments[joint.body_i] -= torque
    if external_loads is not None:
        f, n = external_loads(t, state)
        f, n = np.asarray(f, dtype=float), np.asarray(n, dtype=float)
        d = system.dim
        if f.shape != (system.n_bodies, d) or n.shape != ((system.n_bodies, 3) if d == 3 else (system.n_bodies,)):
            raise ValueError(f"external_loads returned forces {f.shape} and moments {n.shape}; expected "
                             f"({system.n_bodies}, {d}) and " + ("(n_bodies, 3)" if d == 3 else "(n_bodies,)"))
        forces[:, :d] += f
        moments[:, 2 if d == 2 else slice(None)] += n
    return forces, moments


def reaction_wrench_map(system: TaylorSystem, state: BodyStates) -> np.ndarray:
    """The map Q -> reaction forces and moments (about the centres of mass) on every body,
    (n_bodies, 6, n_unknowns): rows 0-2 force, 3-5 moment, global components (the paper's Z^T,
    eqs. 11, 34-35). The force of joint k acts at the joint point of body j on both sides."""
    wrench = np.zeros((system.n_bodies, 6, system.n_unknowns))
    for joint, cols in zip(system.joints, system.unknown_slices()):
        side_i, side_j = _sides(state, joint)
        force_dirs, moment_dirs = _UNKNOWNS[joint.kind]
        f = slice(cols.start, cols.start + len(force_dirs))
        m = slice(f.stop, cols.stop)
        E_f = side_i.frame[:, list(force_dirs)]                 # (3, n_f)
        E_m = side_i.frame[:, list(moment_dirs)]                # (3, n_m)
        for body, sign in ((joint.body_j, 1.0), (joint.body_i, -1.0)):
            if body == GROUND:
                continue
            arm = side_j.point - state.position[body]           # the force acts at p_j
            wrench[body, :3, f] += sign * E_f
            wrench[body, 3:, f] += sign * skew(arm) @ E_f
            wrench[body, 3:, m] += sign * E_m
    return wrench


def reaction_vectors(system: TaylorSystem, state: BodyStates, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each joint's reaction force and moment on its body j, global components, (n_joints, 3) each."""
    forces, moments = np.zeros((len(system.joints), 3)), np.zeros((len(system.joints), 3))
    for k, (joint, cols) in enumerate(zip(system.joints, system.unknown_slices())):
        side_i, _ = _sides(state, joint)
        force_dirs, moment_dirs = _UNKNOWNS[joint.kind]
        q = Q[cols]
        forces[k] = side_i.frame[:, list(force_dirs)] @ q[:len(force_dirs)]
        moments[k] = side_i.frame[:, list(moment_dirs)] @ q[len(force_dirs):]
    return forces, moments


# ---------------------------------------------------------------------- the Taylor prediction
def _taylor_point(state: BodyStates, body: int, point: np.ndarray, arm: np.ndarray, acc: np.ndarray,
                  ang_acc: np.ndarray, dt: float) -> np.ndarray:
    """p + Delta p with Delta p = (v + w x d) dt + (a + alpha x d + w x (w x d)) dt^2/2 (eqs. 7, 8, 12)."""
    if body == GROUND:
        return point
    v, w = state.velocity[body], state.angular_velocity[body]
    w_d = _cross(w, arm)
    return point + (v + w_d) * dt + (acc + _cross(ang_acc, arm) + _cross(w, w_d)) * (0.5 * dt**2)


def _taylor_direction(state: BodyStates, body: int, e: np.ndarray, ang_acc: np.ndarray, dt: float) -> np.ndarray:
    """e + Delta e with Delta e = w x e dt + (alpha x e + w x (w x e)) dt^2/2 (eqs. 16-18)."""
    if body == GROUND:
        return e
    w = state.angular_velocity[body]
    w_e = _cross(w, e)
    return e + w_e * dt + (_cross(ang_acc, e) + _cross(w, w_e)) * (0.5 * dt**2)


def free_accelerations(system: TaylorSystem, state: BodyStates, forces: np.ndarray,
                       moments: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Newton-Euler accelerations a = F/m, alpha = J^-1 (N - w x J w) (eqs. 9-10), (n_bodies, 3) each."""
    w = state.angular_velocity
    Jw = np.einsum("bij,bj->bi", system.inertia(state), w)                      # (n_b, 3)
    alpha = np.einsum("bij,bj->bi", system.inverse_inertia(state), moments - np.cross(w, Jw))
    return forces / system.masses[:, None], alpha


@dataclass
class ReactionEquations:
    """The linearized joint conditions at t + dt, ``constant + matrix @ Q ~ 0`` (eq. 36), and the
    parts of the bodies' accelerations: a = a0 + acceleration_map @ Q, alpha likewise."""

    matrix: np.ndarray                     # (n, n) G = d(conditions)/dQ
    constant: np.ndarray                   # (n,) conditions at the predicted configuration, Q = 0
    acceleration: np.ndarray               # (n_bodies, 3) a0, m/s^2
    angular_acceleration: np.ndarray       # (n_bodies, 3) alpha0 (with the gyroscopic term), rad/s^2
    acceleration_map: np.ndarray           # (n_bodies, 3, n) dF_Q/dQ / m
    angular_acceleration_map: np.ndarray   # (n_bodies, 3, n) J^-1 dN_Q/dQ
    forces: np.ndarray                     # (n_bodies, 3) applied forces (gravity, external), N
    moments: np.ndarray                    # (n_bodies, 3) applied moments (motors, external), N m

    def accelerations(self, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Total accelerations (n_bodies, 3) each with the reactions Q."""
        return (self.acceleration + self.acceleration_map @ Q,
                self.angular_acceleration + self.angular_acceleration_map @ Q)


def reaction_equations(system: TaylorSystem, state: BodyStates, t: float, dt: float,
                       external_loads: ExternalLoads | None = None) -> ReactionEquations:
    """Assemble G and c of the joint conditions at t + dt (eqs. 22-23, 27, 31, 33, 36).

    For a point with arm d on body b: U from the reaction-free accelerations, W = dt^2/2
    (dF/dQ / m - hat(d) J^-1 dN/dQ) (eq. 14); for a direction e: H = -dt^2/2 hat(e) J^-1 dN/dQ (eq. 20).
    """
    forces, moments = applied_loads(system, state, t, external_loads)
    a0, alpha0 = free_accelerations(system, state, forces, moments)
    wrench = reaction_wrench_map(system, state)                                  # (n_b, 6, n)
    acc_map = wrench[:, :3] / system.masses[:, None, None]                       # (n_b, 3, n)
    ang_map = system.inverse_inertia(state) @ wrench[:, 3:]                      # (n_b, 3, n)
    n = system.n_unknowns
    half_dt2 = 0.5 * dt**2
    matrix, constant = np.zeros((n, n)), np.zeros(n)

    def point(side: _SideGeometry) -> tuple[np.ndarray, np.ndarray]:
        if side.body == GROUND:
            return side.point, np.zeros((3, n))
        b = side.body
        value = _taylor_point(state, b, side.point, side.arm, a0[b], alpha0[b], dt)
        return value, half_dt2 * (acc_map[b] - skew(side.arm) @ ang_map[b])

    def direction(side: _SideGeometry, column: int) -> tuple[np.ndarray, np.ndarray]:
        e = side.frame[:, column]
        if side.body == GROUND:
            return e, np.zeros((3, n))
        b = side.body
        return _taylor_direction(state, b, e, alpha0[b], dt), -half_dt2 * skew(e) @ ang_map[b]

    for joint, rows in zip(system.joints, system.unknown_slices()):
        side_i, side_j = _sides(state, joint)
        (p_i, W_i), (p_j, W_j) = point(side_i), point(side_j)
        vectors, jacobians = {"offset": p_j - p_i}, {"offset": W_j - W_i}
        for name, (side, column) in _named_directions(joint.kind, side_i, side_j).items():
            vectors[name], jacobians[name] = direction(side, column)
        constant[rows], matrix[rows] = _linearize(_CONDITIONS[joint.kind], vectors, jacobians)
    return ReactionEquations(matrix, constant, a0, alpha0, acc_map, ang_map, forces, moments)


def predicted_conditions(system: TaylorSystem, state: BodyStates, t: float, dt: float, Q: np.ndarray,
                         external_loads: ExternalLoads | None = None) -> np.ndarray:
    """The joint conditions at the Taylor-predicted configuration for given reactions Q, nothing
    linearized (n,): the bodies' accelerations from all loads and Q (eqs. 9-11), each joint point
    and direction moved by its own second-order expansion (eqs. 12, 18), the conditions evaluated
    exactly. The slow reference of :func:`reaction_equations`."""
    forces, moments = applied_loads(system, state, t, external_loads)
    wrench = reaction_wrench_map(system, state) @ Q                              # (n_b, 6)
    acc, ang_acc = free_accelerations(system, state, forces + wrench[:, :3], moments + wrench[:, 3:])
    values = []
    for joint in system.joints:
        sides = _sides(state, joint)
        moved = [(_taylor_point(state, s.body, s.point, s.arm, acc[s.body], ang_acc[s.body], dt), s) for s in sides]
        vectors = {"offset": moved[1][0] - moved[0][0]}
        for name, (side, column) in _named_directions(joint.kind, *sides).items():
            vectors[name] = _taylor_direction(state, side.body, side.frame[:, column], ang_acc[side.body], dt)
        values.append(_evaluate(_CONDITIONS[joint.kind], vectors))
    return np.concatenate(values) if values else np.zeros(0)


# ---------------------------------------------------------------------- Lagrange Jacobian, residuals
def constraint_jacobian(system: TaylorSystem, state: BodyStates) -> np.ndarray:
    """Phi_q of all joint conditions (the same conditions, at the current configuration) with
    respect to the bodies' coordinate increments: 3D [dx, dy, dz, dphi_x, dphi_y, dphi_z] per
    body (dphi a global small rotation, A <- exp(hat(dphi)) A), 2D [dx, dy, dtheta] per body;
    (n_conditions, 6 n_bodies) or (n_conditions, 3 n_bodies). The Jacobian of the Lagrange
    multiplier method (eq. 1); Phi_q @ [v, omega] is the rate of the conditions."""
    Phi_q = _spatial_constraint_jacobian(system, state)
    if system.dim == 2:
        keep = (6 * np.arange(system.n_bodies)[:, None] + np.array([0, 1, 5])).ravel()
        Phi_q = Phi_q[:, keep]
    return Phi_q


def _spatial_constraint_jacobian(system: TaylorSystem, state: BodyStates) -> np.ndarray:
    """Phi_q with 6 columns per body, [dr, dphi], for 2D systems too, (n_conditions, 6 n_bodies)."""
    nb = system.n_bodies
    rows = []
    for joint in system.joints:
        side_i, side_j = _sides(state, joint)

        def jac_point(side: _SideGeometry) -> np.ndarray:
            J = np.zeros((3, 6 * nb))
            if side.body != GROUND:
                J[:, 6 * side.body:6 * side.body + 3] = np.eye(3)
                J[:, 6 * side.body + 3:6 * side.body + 6] = -skew(side.arm)     # d(phi x arm)
            return J

        vectors, jacobians = {"offset": side_j.point - side_i.point}, {"offset": jac_point(side_j) - jac_point(side_i)}
        for name, (side, column) in _named_directions(joint.kind, side_i, side_j).items():
            e = side.frame[:, column]
            J = np.zeros((3, 6 * nb))
            if side.body != GROUND:
                J[:, 6 * side.body + 3:6 * side.body + 6] = -skew(e)
            vectors[name], jacobians[name] = e, J
        rows.append(_linearize(_CONDITIONS[joint.kind], vectors, jacobians)[1])
    return np.vstack(rows) if rows else np.zeros((0, 6 * nb))


def joint_conditions(system: TaylorSystem, state: BodyStates) -> np.ndarray:
    """The joint conditions at the current configuration (n_conditions,): m for point and offset
    terms, the sine of the misalignment for direction terms."""
    values = []
    for joint in system.joints:
        side_i, side_j = _sides(state, joint)
        vectors = {"offset": side_j.point - side_i.point}
        for name, (side, column) in _named_directions(joint.kind, side_i, side_j).items():
            vectors[name] = side.frame[:, column]
        values.append(_evaluate(_CONDITIONS[joint.kind], vectors))
    return np.concatenate(values) if values else np.zeros(0)


def joint_residuals(system: TaylorSystem, state: BodyStates) -> tuple[np.ndarray, np.ndarray]:
    """Per joint: point/offset mismatch (m) and axis/twist misalignment (rad), (n_joints,) each."""
    values = joint_conditions(system, state)
    position, angle = np.zeros(len(system.joints)), np.zeros(len(system.joints))
    for k, (joint, rows) in enumerate(zip(system.joints, system.unknown_slices())):
        is_length = np.array(["offset" in term for term in _CONDITIONS[joint.kind]])
        position[k] = np.linalg.norm(values[rows][is_length])
        angle[k] = np.arcsin(min(1.0, np.linalg.norm(values[rows][~is_length])))
    return position, angle


def energy(system: TaylorSystem, state: BodyStates) -> tuple[float, float]:
    """Kinetic and potential energy (gravity, V = -sum m g . r), J."""
    m, v, w = system.masses, state.velocity, state.angular_velocity
    Jw = np.einsum("bij,bj->bi", system.inertia(state), w)
    kinetic = 0.5 * float(np.sum(m * np.sum(v * v, 1)) + np.sum(w * Jw))
    return kinetic, -float(np.sum(m * (state.position @ system.gravity)))


# ---------------------------------------------------------------------- time stepping
@dataclass
class TaylorHistory:
    """Recorded steps of :func:`integrate_taylor`. States at t[k]; reactions and condition number
    of the step that starts at t[k] (at the last record: of the step that would follow). Shapes with n_out records, n bodies, n_j joints; 2D systems give planar arrays.

    ``position`` (n_out, n, dim) m; ``rotation`` (n_out, n, 3, 3); ``angle`` (n_out, n) rad (2D only,
    continuous in time, the multiple of 2 pi taken from the angles given to ``add_body``);
    ``velocity`` (n_out, n, dim); ``angular_velocity`` (n_out, n, 3) or (n_out, n) (2D);
    ``reaction_force`` (n_out, n_j, dim) N and ``reaction_moment`` (n_out, n_j, 3) N m (3D only),
    on body j, global; ``reactions`` (n_out, n_unknowns) the raw Q; ``condition_number`` (n_out,)
    2-norm condition number of G; ``position_residual`` (n_out, n_j) m, ``angle_residual``
    (n_out, n_j) rad; ``kinetic``, ``potential``, ``work`` (n_out,) J, the work of motors and
    external loads done since t[0].
    """

    dim: int
    dt: float
    t: np.ndarray
    position: np.ndarray
    rotation: np.ndarray
    velocity: np.ndarray
    angular_velocity: np.ndarray
    reactions: np.ndarray
    reaction_force: np.ndarray
    reaction_moment: np.ndarray
    condition_number: np.ndarray
    position_residual: np.ndarray
    angle_residual: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    work: np.ndarray
    angle: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def n_steps(self) -> int:
        """Number of completed steps."""
        return int(round((self.t[-1] - self.t[0]) / self.dt))

    @property
    def energy_balance(self) -> np.ndarray:
        """K + V - W (n_out,), J: constant for the exact motion."""
        return self.kinetic + self.potential - self.work

    def state(self, k: int) -> BodyStates:
        """The 3D state of record k (for :func:`constraint_jacobian` and the like)."""
        r = np.zeros(self.position.shape[1:-1] + (3,))
        v = np.zeros_like(r)
        r[:, :self.dim], v[:, :self.dim] = self.position[k], self.velocity[k]
        w = self.angular_velocity[k]
        if self.dim == 2:
            w = np.column_stack([np.zeros((len(w), 2)), w])
        return BodyStates(r, self.rotation[k].copy(), v, np.array(w, dtype=float))


VELOCITY_UPDATES = ("euler", "rattle")


def advance(state: BodyStates, acc: np.ndarray, ang_acc: np.ndarray, dt: float) -> tuple[BodyStates, np.ndarray]:
    """Huang's update (Fig. 7) with the step's accelerations: r += v dt + a dt^2/2, v += a dt,
    A <- exp(hat(theta)) A with theta = w dt + alpha dt^2/2, w += alpha dt. Returns the new state
    and the rotation increments theta (n_bodies, 3) rad."""
    theta = state.angular_velocity * dt + 0.5 * dt**2 * ang_acc
    new = BodyStates(state.position + state.velocity * dt + 0.5 * dt**2 * acc, exp_map(theta) @ state.rotation,
                     state.velocity + acc * dt, state.angular_velocity + ang_acc * dt)
    return new, theta


def _solve(system: TaylorSystem, matrix: np.ndarray, rhs: np.ndarray, t: float, max_condition: float,
           what: str) -> tuple[np.ndarray, float]:
    """LU solve with a singularity check (2-norm condition number); names the joints that carry
    the null vector."""
    if matrix.size == 0:
        return np.zeros(0), 1.0
    cond = float(np.linalg.cond(matrix))
    if not cond <= max_condition:
        null = np.abs(np.linalg.svd(matrix)[2][-1])
        involved = [j.name for j, cols in zip(system.joints, system.unknown_slices())
                    if null[cols].max() > 0.1 * null.max()]
        raise SingularReactionMatrix(f"t = {t:.6g} s: the {what} is singular, condition number {cond:.3e} > "
                                     f"{max_condition:.1e}; its null vector (a self-stress) involves the "
                                     f"joint(s) {', '.join(repr(n) for n in involved)}")
    return np.linalg.solve(matrix, rhs), cond


def solve_reactions(system: TaylorSystem, equations: ReactionEquations, t: float,
                    max_condition: float = 1e12) -> tuple[np.ndarray, float]:
    """Q from G Q = -c by LU (eq. 36), and cond(G) (2-norm). Raises :class:`SingularReactionMatrix`
    with the time, the condition number and the joints that carry the null vector (a self-stress)
    when cond(G) exceeds ``max_condition``."""
    return _solve(system, equations.matrix, -equations.constant, t, max_condition, "reaction matrix")


def rattle_velocities(system: TaylorSystem, start: BodyStates, new: BodyStates, acc: np.ndarray,
                      ang_acc: np.ndarray, t_end: float, dt: float, external_loads: ExternalLoads | None = None,
                      max_condition: float = 1e12) -> tuple[BodyStates, np.ndarray, np.ndarray]:
    """Second-order velocities at the end of a step, in the manner of RATTLE (Andersen 1983)
    instead of Huang's v += a dt: half a kick with the step's accelerations, half a kick with the
    loads at t + dt (gyroscopic term with the half-step omega) and end-of-step reactions mu that
    make the joint conditions' rates vanish, Phi_q(q_{n+1}) [v, omega]_{n+1} = 0. The matrix
    dt/2 Phi_q M^-1 Z^T of mu is singular where G is (a self-stress) and regular elsewhere.

    ``new``: the configuration after :func:`advance`. Returns the state with the new velocities
    and the applied forces and moments at t + dt, (n_bodies, 3) each.
    """
    half = BodyStates(new.position, new.rotation, start.velocity + 0.5 * dt * acc,
                      start.angular_velocity + 0.5 * dt * ang_acc)
    forces, moments = applied_loads(system, half, t_end, external_loads)
    acc_end, ang_end = free_accelerations(system, half, forces, moments)
    wrench = reaction_wrench_map(system, half)                                   # (n_b, 6, n)
    velocity_map = 0.5 * dt * np.concatenate([wrench[:, :3] / system.masses[:, None, None],
                                              system.inverse_inertia(half) @ wrench[:, 3:]], axis=1)
    velocity_map = velocity_map.reshape(6 * system.n_bodies, -1)                 # (6 n_b, n)
    kicked = np.concatenate([half.velocity + 0.5 * dt * acc_end,
                             half.angular_velocity + 0.5 * dt * ang_end], axis=1).ravel()
    Phi_q = _spatial_constraint_jacobian(system, half)
    mu, _ = _solve(system, Phi_q @ velocity_map, -Phi_q @ kicked, t_end, max_condition, "velocity reaction matrix")
    velocities = (kicked + velocity_map @ mu).reshape(-1, 6)
    return BodyStates(new.position, new.rotation, velocities[:, :3], velocities[:, 3:]), forces, moments


def _load_work(system: TaylorSystem, forces: np.ndarray, moments: np.ndarray, displacement: np.ndarray,
               theta: np.ndarray) -> float:
    """Work of the applied loads other than gravity (motors, external) over the increments."""
    non_gravity = forces - system.masses[:, None] * system.gravity[None, :]
    return float(np.sum(non_gravity * displacement) + np.sum(moments * theta))


@keywords_listed(renamed={'record_every': 'output_every'})
def integrate_taylor(system: TaylorSystem, dt: float, t_end: float, state: BodyStates | None = None,
                     t0: float = 0.0, external_loads: ExternalLoads | None = None, output_every: int = 1,
                     velocity_update: str = "euler", max_condition: float = 1e12) -> TaylorHistory:
    """Integrate from ``state`` (default: the system's initial state) at t0 to t_end with steps dt:
    per step assemble G and c (:func:`reaction_equations`), solve for the reactions, move the
    bodies (:func:`advance`). Records every ``output_every``-th state, always the first and last.

    ``velocity_update``: ``"euler"`` is Huang's v += a dt: first order, and its alternating mode
    (the joint-velocity mismatch changes sign every step) can grow in fast rotation;
    ``"rattle"`` replaces it by :func:`rattle_velocities`: second order, no alternating mode, one
    more linear solve per step. The work of motors and external loads is summed with the loads
    at the start of the step (``"euler"``) or the mean of start and end (``"rattle"``).
    """
    if not dt > 0.0:
        raise ValueError(f"integrate_taylor: dt must be positive, got {dt}")
    if velocity_update not in VELOCITY_UPDATES:
        raise ValueError(f"integrate_taylor: velocity_update must be one of {VELOCITY_UPDATES}, "
                         f"got {velocity_update!r}")
    if system.n_bodies == 0:
        raise ValueError("integrate_taylor: the system has no bodies")
    n_steps = int(round((t_end - t0) / dt))
    if n_steps < 1 or abs(n_steps * dt - (t_end - t0)) > 1e-9 * max(1.0, abs(t_end)):
        raise ValueError(f"integrate_taylor: t_end - t0 = {t_end - t0} s is not a positive multiple of dt = {dt} s")
    state = (system.initial_state() if state is None else state).copy()
    records: dict[str, list] = {k: [] for k in ("t", "r", "A", "v", "w", "Q", "F", "M", "cond", "res_p", "res_a",
                                                "K", "V", "W")}
    work = 0.0
    for k in range(n_steps + 1):
        t = t0 + k * dt
        equations = reaction_equations(system, state, t, dt, external_loads)
        try:
            Q, cond = solve_reactions(system, equations, t, max_condition)
        except SingularReactionMatrix as err:
            # keep what was computed: the caller gets the history up to the failing step
            if records["t"]:
                err.history = _history(system, dt, {key: np.array(value) for key, value in records.items()})
            raise
        if k % output_every == 0 or k == n_steps:
            F, M = reaction_vectors(system, state, Q)
            res_p, res_a = joint_residuals(system, state)
            K, V = energy(system, state)
            for key, value in zip(records, (t, state.position, state.rotation, state.velocity,
                                            state.angular_velocity, Q, F, M, cond, res_p, res_a, K, V, work)):
                records[key].append(np.copy(value))
        if k == n_steps:
            break
        acc, ang_acc = equations.accelerations(Q)
        new, theta = advance(state, acc, ang_acc, dt)
        displacement = new.position - state.position
        step_work = _load_work(system, equations.forces, equations.moments, displacement, theta)
        if velocity_update == "rattle":
            try:
                new, forces, moments = rattle_velocities(system, state, new, acc, ang_acc, t + dt, dt,
                                                         external_loads, max_condition)
            except SingularReactionMatrix as err:
                err.history = _history(system, dt, {key: np.array(value) for key, value in records.items()})
                raise
            step_work = 0.5 * (step_work + _load_work(system, forces, moments, displacement, theta))
        work += step_work
        state = new
    return _history(system, dt, {key: np.array(value) for key, value in records.items()})


def _history(system: TaylorSystem, dt: float, rec: dict[str, np.ndarray]) -> TaylorHistory:
    d = system.dim
    n_joints = len(system.joints)
    angle = np.zeros(0)
    w = rec["w"]
    if d == 2:
        raw = np.unwrap(np.arctan2(rec["A"][:, :, 1, 0], rec["A"][:, :, 0, 0]), axis=0)
        turns = np.round((np.array(system._initial_angles) - raw[0]) / (2.0 * np.pi))
        angle, w = raw + 2.0 * np.pi * turns, w[:, :, 2]
    return TaylorHistory(d, dt, rec["t"], rec["r"][:, :, :d], rec["A"], rec["v"][:, :, :d], w, rec["Q"],
                         rec["F"][:, :, :d].reshape(len(rec["t"]), n_joints, d), rec["M"], rec["cond"],
                         rec["res_p"], rec["res_a"], rec["K"], rec["V"], rec["W"], angle)
