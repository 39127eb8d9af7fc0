"""Initial conditions consistent with the joints: a check with clear errors, and a projection.

Positions must satisfy ``Phi(u0, t0) = 0`` and velocities ``C v0 + dPhi/dt = 0``.
:func:`consistent_initial_state` moves a user's guess onto both: positions by Gauss-Newton with
the minimum-norm correction of the free DOFs, velocities by the smallest change in the
kinetic-energy metric while keeping the velocity components the user holds (DOF velocities,
bodies, joint angle and slide rates) exactly.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexmb.checks import check_consistent_initial_state, float_array, node_index, real
from flexmb.model import ROTATION_NAMES, ModelError
from flexmb.multibody.joints import Joint, RigidBody
from flexmb.rotations import exp_map

#: tolerances of the check, relative to the model size (positions) and to the largest speed
#: (at least the model size per second)
POSITION_TOL = 1e-8
VELOCITY_TOL = 1e-8


def refuse_joints(asm, analysis: str) -> None:
    """Joints are solved in time integration only so far: say so instead of ignoring them."""
    if asm.constraints is not None:
        items = [f"joint {j.name!r}" for j in asm.model.joints] + [t.label for t in asm.model.ties]
        raise ModelError(f"{analysis}: the model has joints or ties ({', '.join(items)}); "
                         "joints are supported in time integration (fm.integrate) only so far, ties too")


def _worst(asm, values: np.ndarray) -> str:
    cs = asm.constraints
    row = int(np.argmax(np.abs(values)))
    return f"{cs.owner(row)} (equation {row - cs.owner_rows(row).start})"


def check_redundancy(asm, u0: np.ndarray, t0: float) -> None:
    """Raise ModelError naming a joint whose equations repeat others' (or fix prescribed DOFs),
    found by a pivoted QR of the joints' Jacobian on the free DOFs at the start state."""
    cs = asm.constraints
    C = cs.evaluate(u0, t0, np.zeros(cs.n)).C[:, asm.dofs.free].toarray()            # (n_c, n_f)
    if cs.n == 0 or cs.n > 3000:                  # dense QR; larger systems are left to Newton
        return
    _, R, order = sla.qr(C.T, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    rank = int(np.sum(diag > 1e-10 * max(diag.max(initial=0.0), np.finfo(float).tiny)))
    if rank < cs.n:
        names = sorted({cs.owner(int(r)) for r in order[rank:]})
        raise ModelError(f"the joints' equations are redundant at the start ({cs.n - rank} of {cs.n} "
                         f"depend on the others), e.g. in {', '.join(names)}: remove "
                         "duplicated joints (a driven joint already includes its undriven equations) or "
                         "joints on prescribed DOFs")


def check_initial_state(asm, u0: np.ndarray, v0: np.ndarray, t0: float) -> None:
    """Raise ModelError naming the joint whose position or velocity equation the state violates,
    or the joints whose equations are redundant."""
    cs = asm.constraints
    if cs is None:
        return
    check_redundancy(asm, u0, t0)
    length = asm.model.characteristic_length
    phi = cs.values(u0, t0)
    if np.abs(phi).max(initial=0.0) > POSITION_TOL * length:
        raise ModelError(f"initial positions violate {_worst(asm, phi)} by {np.abs(phi).max():.3g} "
                         f"(tolerance {POSITION_TOL * length:.3g}); flexmb.consistent_initial_state "
                         "projects a guess onto the joints")
    rate = cs.evaluate(u0, t0, np.zeros(cs.n)).C @ v0 + cs.time_derivative(u0, t0)
    # speeds relative to the largest one, but at least the model size per second: a drive that
    # starts from rest has a difference-quotient rate of round-off size
    speed = max(float(np.abs(v0).max(initial=0.0)), float(np.abs(cs.time_derivative(u0, t0)).max(initial=0.0)),
                length)
    if np.abs(rate).max(initial=0.0) > VELOCITY_TOL * speed:
        raise ModelError(f"initial velocities violate {_worst(asm, rate)}: C v0 + dPhi/dt = "
                         f"{np.abs(rate).max():.3g} (speeds up to {speed:.3g}); "
                         "flexmb.consistent_initial_state projects them onto the joints")


#: what ``hold`` of :func:`consistent_initial_state` takes
HOLD_FORMS = ("(node, dof) or (RigidBody, dof): the velocity of that DOF (m/s, rad/s)",
              "RigidBody: all its DOF velocities in DOF order (2D ux uy rz, 3D ux uy uz rx ry rz)",
              ("Joint or its name: a revolute joint's relative angle rate (rad/s) or a prismatic "
               "joint's slide rate (m/s), the rates of the quantities a drive of that joint prescribes"))


def consistent_initial_state(asm, u0: np.ndarray | None = None, v0: np.ndarray | None = None,
                             t0: float = 0.0, iterations: int = 30,
                             hold: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities (n_dof,) near ``u0, v0`` that satisfy the joints at t0.

    Positions: Gauss-Newton on ``Phi(u, t0) = 0`` with the minimum-norm correction of the free
    DOFs. Velocities: the held components (``hold``) are kept exactly and the rest are the
    smallest change of the guess in the kinetic-energy metric,

        min (v - v0)^T M (v - v0)   subject to   C v + dPhi/dt = 0,   held components given,

    i.e. the velocity an ideal impulsive joint reaction C^T mu would leave
    (M (v - v0) = C^T mu): independent of units and of where the origin is, unlike the
    unweighted minimum-norm change, which trades m/s against rad/s. DOFs without mass (beam
    rotations with lumped mass) change by the smallest Euclidean amount the joints need (they
    get the weight 1e-10 max(diag M) in the metric).

    ``hold``: velocity components to keep, a dict whose keys are

    * ``(node, dof)`` or ``(body, dof)`` -> the velocity of that DOF, e.g. ``{(crank, "rz"): 150.0}``;
    * a :class:`~flexmb.multibody.joints.RigidBody` -> all its DOF velocities (ux, uy, rz in 2D;
      ux, uy, uz, rx, ry, rz in 3D, rotations as the spatial angular velocity);
    * a joint (or its name) -> a revolute joint's relative angle rate (rad/s) or a prismatic joint's
      slide rate (m/s) (side b relative to side a, about / along the axis of a drive of that joint).

    A held set that the joints cannot satisfy (two speeds of a one-DOF mechanism that do not
    agree, a held component the joints fix to another value) raises ModelError naming the held
    items, how many velocity components the joints leave free and the mismatch; held items that
    repeat what the joints and the other held items already give consistently are accepted.
    Prescribed DOFs take their prescribed values and velocities (holding one at another value
    is refused). The joints' velocity equations hold to round-off (about 1e-15 of the speeds).
    """
    check_consistent_initial_state(asm, u0, v0, t0, iterations)
    cs = asm.constraints
    n = asm.n_dof
    u = np.zeros(n) if u0 is None else np.array(u0, dtype=float)
    v = np.zeros(n) if v0 is None else np.array(v0, dtype=float)
    presc = asm.dofs.prescribed
    u[presc] = asm.prescribed_values(t0)
    v[presc] = asm.prescribed_velocities(t0)
    if cs is not None:
        u = _project_positions(asm, u, t0, iterations)
    held_dofs, held_rows = _held_velocities(asm, u, v, hold or {})
    for dof, (_, value) in held_dofs.items():
        v[dof] = value
    if cs is None and not held_rows:
        return u, v
    return u, _project_velocities(asm, u, v, t0, held_dofs, held_rows)


def _project_positions(asm, u: np.ndarray, t0: float, iterations: int) -> np.ndarray:
    """Gauss-Newton with minimum-norm corrections of the free DOFs onto Phi(u, t0) = 0."""
    cs, free, n = asm.constraints, asm.dofs.free, asm.n_dof
    tol = 1e-12 * asm.model.characteristic_length
    for _ in range(iterations):
        phi = cs.values(u, t0)
        if np.abs(phi).max(initial=0.0) <= tol:
            return u
        C = cs.evaluate(u, t0, np.zeros(cs.n)).C[:, free]
        du = np.zeros(n)
        du[free] = spla.lsqr(C, -phi, atol=1e-14, btol=1e-14)[0]
        u = asm.update(u, du)
    raise ModelError(f"no configuration satisfying the joints found near the guess: {_worst(asm, phi)} "
                     f"is still off by {np.abs(phi).max():.3g}")


def _held_velocities(asm, u: np.ndarray, v: np.ndarray, hold: dict
                     ) -> tuple[dict[int, tuple[str, float]], list[tuple[str, np.ndarray, float]]]:
    """``hold`` as held DOFs {global DOF: (name, value)} and held rows [(name, h (n_dof,), value)]
    with h . v = value (joint rates). Held prescribed DOFs are checked against their prescribed
    velocity and left out."""
    if not isinstance(hold, dict):
        raise ModelError(f"consistent_initial_state: hold must be a dict, got {type(hold).__name__}; it takes "
                         + "; ".join(HOLD_FORMS))
    model, dofs = asm.model, asm.dofs
    held: dict[int, tuple[str, float]] = {}
    rows: list[tuple[str, np.ndarray, float]] = []

    def add_dof(node: int, dof: str, value, name: str) -> None:
        value = real(value, f"consistent_initial_state: hold[{name}] (m/s or rad/s)")
        try:
            i = dofs.index(node, dof)
        except ModelError as exc:
            raise ModelError(f"consistent_initial_state: hold[{name}]: {exc}") from None
        if i in held:
            raise ModelError(f"consistent_initial_state: hold gives {dofs.label(i)} twice ({held[i][0]} and {name})")
        if dofs.free_position[i] < 0:
            if abs(value - v[i]) > 1e-12 * max(abs(value), abs(v[i]), 1.0):
                raise ModelError(f"consistent_initial_state: hold[{name}] = {value:g} but {dofs.label(i)} is "
                                 f"prescribed (fixed) with velocity {v[i]:g}")
            return
        held[i] = (name, value)

    for key, value in hold.items():
        if isinstance(key, RigidBody):
            node = _body_node(model, key)
            names = model.dof_names(True)
            values = float_array(value, f"consistent_initial_state: hold[body {key.name!r}]")
            if values.shape != (len(names),):
                raise ModelError(f"consistent_initial_state: hold[body {key.name!r}] needs {len(names)} velocities "
                                 f"({', '.join(names)}), got shape {values.shape}")
            for dof, x in zip(names, values):
                add_dof(node, dof, x, f"body {key.name!r} {dof}")
        elif isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str):
            node = _body_node(model, key[0]) if isinstance(key[0], RigidBody) else \
                node_index(key[0], model.n_nodes, f"consistent_initial_state: hold key {key!r}")
            label = f"body {key[0].name!r} {key[1]}" if isinstance(key[0], RigidBody) else f"node {node} {key[1]}"
            add_dof(node, key[1], value, label)
        elif isinstance(key, (Joint, str)):
            joint = _model_joint(model, key)
            name = f"joint {joint.name!r}"
            rows.append((name, _joint_rate_row(asm, u, joint), real(value, f"consistent_initial_state: hold[{name}]")))
        else:
            raise ModelError(f"consistent_initial_state: hold key {key!r} is not understood; hold takes "
                             + "; ".join(HOLD_FORMS))
    return held, rows


def _body_node(model, body: RigidBody) -> int:
    if not any(b is body or (b.node == body.node and b.name == body.name) for b in model.bodies):
        raise ModelError(f"consistent_initial_state: rigid body {body.name!r} is not a body of this model")
    return body.node


def _model_joint(model, key: Joint | str) -> Joint:
    found = [j for j in model.joints if j is key or (isinstance(key, str) and j.name == key)]
    if not found:
        raise ModelError(f"consistent_initial_state: hold key {getattr(key, 'name', key)!r} is not a joint of "
                         f"this model (its joints: {', '.join(repr(j.name) for j in model.joints) or 'none'})")
    return found[0]


def _joint_rate_row(asm, u: np.ndarray, joint: Joint) -> np.ndarray:
    """h (n_dof,) with h . v the joint's relative rate: revolute d(theta_B - theta_A)/dt =
    (omega_B - omega_A) . z_A (2D: the rz rates), prismatic d/dt [(p_B - p_A) . e_A] with e_A the
    axis (2D x_j, 3D z_j) turning with side A and p = x + R d the joint point of each side:
    (p_B' - p_A') . e_A + (p_B - p_A) . (omega_A x e_A)."""
    model, dofs, dim = asm.model, asm.dofs, asm.model.dim
    name = f"consistent_initial_state: hold[joint {joint.name!r}]"
    if joint.kind not in ("revolute", "prismatic"):
        raise ModelError(f"{name}: a held joint rate needs a revolute (angle rate) or prismatic (slide "
                         f"rate) joint, this one is {joint.kind}")
    rot_names = ROTATION_NAMES[dim]
    h = np.zeros(asm.n_dof)

    def rotation(node: int) -> np.ndarray:
        if node < 0 or not dofs.has_rotations[node]:
            return np.eye(dim)
        if dim == 2:
            c, s = np.cos(u[dofs.index(node, "rz")]), np.sin(u[dofs.index(node, "rz")])
            return np.array([[c, -s], [s, c]])
        return exp_map(u[[dofs.index(node, r) for r in rot_names]])

    def rotation_dofs(node: int) -> list[int] | None:
        if node < 0:
            return None
        if not dofs.has_rotations[node]:
            raise ModelError(f"{name}: node {node} of the joint has no rotation DOFs, so the joint's "
                             "angle rate is not defined; hold its nodes' velocities instead")
        return [dofs.index(node, r) for r in rot_names]

    R_a = rotation(joint.a)
    if joint.kind == "revolute":
        axis = (R_a @ joint.frame[:dim, 2]) if dim == 3 else np.ones(1)
        for node, sign in ((joint.b, 1.0), (joint.a, -1.0)):
            cols = rotation_dofs(node)
            if cols is not None:
                h[cols] += sign * axis
        return h
    e = R_a @ joint.frame[:dim, 0 if dim == 2 else 2]                    # (dim,) the slide axis

    def point(node: int) -> tuple[np.ndarray, np.ndarray]:
        """The joint point p of a side and its arm r = R d from the node."""
        X = np.zeros(dim) if node < 0 else model.coordinates[node]
        r = rotation(node) @ (joint.at[:dim] - X)
        x = X + (0.0 if node < 0 else u[dofs.translations()[node]])
        return x + r, r

    p_b, r_b = point(joint.b)
    p_a, r_a = point(joint.a)
    for node, sign, r in ((joint.b, 1.0, r_b), (joint.a, -1.0, r_a)):
        if node < 0:
            continue
        h[dofs.translations()[node]] += sign * e
        if dofs.has_rotations[node]:                   # omega x r . e = omega . (r x e)
            h[rotation_dofs(node)] += sign * _cross(r, e)
    if joint.a >= 0 and dofs.has_rotations[joint.a]:   # the axis turns with side A
        h[rotation_dofs(joint.a)] += _cross(e, p_b - p_a)
    return h


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b (3,), or its z component (1,) for planar vectors."""
    return np.cross(a, b) if a.size == 3 else np.array([a[0] * b[1] - a[1] * b[0]])


def _project_velocities(asm, u: np.ndarray, v: np.ndarray, t0: float, held_dofs: dict[int, tuple[str, float]],
                        held_rows: list[tuple[str, np.ndarray, float]]) -> np.ndarray:
    """v with the held DOFs as given and the other free DOFs changed by the least kinetic energy
    (see :func:`consistent_initial_state`) so that C v + dPhi/dt = 0 and the held rows hold."""
    cs, dofs = asm.constraints, asm.dofs
    n = asm.n_dof
    if cs is not None:
        C = cs.evaluate(u, t0, np.zeros(cs.n)).C.toarray()                         # (n_c, n)
        a = cs.time_derivative(u, t0)
    else:
        C, a = np.zeros((0, n)), np.zeros(0)
    A = np.vstack([C] + [h[None, :] for _, h, _ in held_rows])                    # (m, n)
    b = np.concatenate([-a, [value for _, _, value in held_rows]])                 # (m,)
    known = np.zeros(n, dtype=bool)
    known[dofs.prescribed] = True
    known[list(held_dofs)] = True
    other = np.flatnonzero(~known)
    A_o = A[:, other]                                                               # (m, n_o)
    b_o = b - A[:, known] @ v[known]
    speed = max(float(np.abs(v).max(initial=0.0)), float(np.abs(b).max(initial=0.0)),
                asm.model.characteristic_length)
    tol = 1e-10 * speed
    # independent rows by a pivoted QR of A_o^T; dependent ones must agree with the others
    rank, order = _row_rank(A_o)
    if rank < A_o.shape[0]:
        best = np.linalg.lstsq(A_o, b_o, rcond=None)[0] if other.size else np.zeros(0)
        mismatch = float(np.abs(A_o @ best - b_o).max())
        if mismatch > tol:
            raise _inconsistent_hold(asm, u, t0, C, held_dofs, held_rows, mismatch)
    rows = np.sort(order[:rank])
    v_o = v[other] + _least_kinetic_change(asm, u, other, A_o[rows], b_o[rows] - A_o[rows] @ v[other])
    # round-off clean-up: the remaining residual by the minimum-norm correction
    residual = b_o[rows] - A_o[rows] @ v_o
    if residual.size:
        v_o += np.linalg.lstsq(A_o[rows], residual, rcond=None)[0]
    v = v.copy()
    v[other] = v_o
    return v


def _row_rank(A: np.ndarray) -> tuple[int, np.ndarray]:
    """Numerical rank of A (m, n) and its rows ordered independent-first (pivoted QR of A^T)."""
    if A.shape[0] == 0:
        return 0, np.zeros(0, dtype=np.int64)
    if A.shape[1] == 0:
        return 0, np.arange(A.shape[0])
    _, R, order = sla.qr(A.T, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    rank = int(np.sum(diag > 1e-10 * max(diag.max(initial=0.0), np.finfo(float).tiny)))
    return rank, order


def _least_kinetic_change(asm, u: np.ndarray, other: np.ndarray, A: np.ndarray, r: np.ndarray) -> np.ndarray:
    """dv (n_o,) minimising dv^T W dv with A dv = r (A full row rank), W the mass matrix of the
    DOFs ``other`` about u, with 1e-10 of its largest diagonal entry added on the DOFs without
    mass: the KKT system [W A^T; A 0] [dv; mu] = [0; r], sparse LU."""
    if A.shape[0] == 0:
        return np.zeros(other.size)
    M = asm.free_matrix(asm.mass_data_at(u)).tocsr()                            # (n_f, n_f)
    pos = asm.dofs.free_position[other]
    W = M[pos][:, pos]
    diagonal = np.abs(W.diagonal())
    largest = max(float(diagonal.max(initial=0.0)), np.finfo(float).tiny)
    # DOFs without (noticeable) mass get a tiny Euclidean weight so that W is regular; the
    # others keep the exact kinetic-energy metric
    W = W + sp.diags(np.where(diagonal <= 1e-8 * largest, 1e-10 * largest, 0.0))
    K = sp.bmat([[W, sp.csr_matrix(A).T], [sp.csr_matrix(A), None]], format="csc")
    x = spla.splu(K).solve(np.concatenate([np.zeros(other.size), r]))
    return x[:other.size]


def _inconsistent_hold(asm, u: np.ndarray, t0: float, C: np.ndarray, held_dofs: dict, held_rows: list,
                       mismatch: float) -> ModelError:
    names = [name for name, _ in held_dofs.values()] + [name for name, _, _ in held_rows]
    free = asm.dofs.free
    joint_rank = _row_rank(C[:, free])[0]
    left = free.size - joint_rank
    if not names:
        return ModelError(f"consistent_initial_state: the joints' velocity equations contradict each other at "
                          f"t0 = {t0:g} s (mismatch {mismatch:.3g}); check the drives of redundant joints")
    return ModelError(f"consistent_initial_state: the held velocities {', '.join(names)} are inconsistent with "
                      f"the joints: the joints leave {left} velocity component(s) free and the {len(names)} held "
                      f"item(s) over-determine them (they disagree by {mismatch:.3g}); hold fewer or "
                      "matching values")
