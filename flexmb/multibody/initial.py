"""Initial conditions consistent with the joints: a check with clear errors, and a projection.

Positions must satisfy ``Phi(u0, t0) = 0`` and velocities ``C v0 + dPhi/dt = 0``.
:func:`consistent_initial_state` moves a user's guess onto both: positions by Gauss-Newton with
the minimum-norm correction of the free DOFs, velocities by the smallest change in the
kinetic-energy metric while keeping the velocity components the user holds (DOF velocities,
bodies, joint angle and slide rates) exactly. By default (``start="rigid"``) the elastic
deformation rates of the flexible parts are kept too, those of the guess (zero without one), so
that a driven mechanism starts in its rigid motion instead of with an impact.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from flexmb.checks import (FlexmbWarning, check_consistent_initial_state, float_array, keywords_listed, node_index,
                           real)
from flexmb.elements.beam2d import Beam2D
from flexmb.elements.beam3d import Beam3D
from flexmb.elements.shell3 import Shell3
from flexmb.elements.truss import Truss
from flexmb.model import ROTATION_NAMES, Model, ModelError
from flexmb.multibody.joints import Joint, RigidBody, refuse_skew_supports
from flexmb.rotations import exp_map, skew

#: tolerances of the check, relative to the model size (positions) and to the largest speed
#: (at least the model size per second)
POSITION_TOL = 1e-8
VELOCITY_TOL = 1e-8


def refuse_joints(asm, analysis: str) -> None:
    """ModelError for an analysis that does not take joints or ties (linear_buckling): say so and
    name the analyses that do, instead of ignoring them."""
    refuse_skew_supports(asm.model.joints, analysis, "use the analyses that take joints (fm.load_control, "
                         "fm.arc_length, fm.integrate, fm.natural_modes)")
    if asm.constraints is not None:
        items = [f"joint {j.name!r}" for j in asm.model.joints] + [t.label for t in asm.model.ties]
        raise ModelError(f"{analysis}: the model has joints or ties ({', '.join(items)}); "
                         f"{analysis} does not take them; fm.integrate, fm.load_control, fm.arc_length, "
                         "fm.natural_modes and fm.linearize do")


def _worst(asm, values: np.ndarray) -> str:
    cs = asm.constraints
    row = int(np.argmax(np.abs(values)))
    return f"{cs.owner(row)} (equation {row - cs.owner_rows(row).start})"


def check_redundancy(asm, u0: np.ndarray, t0: float) -> None:
    """Raise ModelError naming a joint whose equations repeat others' (or fix prescribed DOFs),
    found by a pivoted QR of the joints' Jacobian on the free DOFs at the start state."""
    import scipy.linalg as sla  # imported here: a run that never needs it skips its import

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


#: what ``start`` of :func:`consistent_initial_state` takes
START_CHOICES = ("rigid", "least-kinetic-energy")

#: what ``hold`` of :func:`consistent_initial_state` takes
HOLD_FORMS = ("(node, dof) or (RigidBody, dof): the velocity of that DOF (m/s, rad/s)",
              "RigidBody: all its DOF velocities in DOF order (2D ux uy rz, 3D ux uy uz rx ry rz)",
              ("Joint or its name: a revolute joint's relative angle rate (rad/s) or a prismatic "
               "joint's slide rate (m/s), the rates of the quantities a drive of that joint prescribes"))


@keywords_listed(renamed={"asm": "model"})
def consistent_initial_state(model, u0: np.ndarray | None = None, v0: np.ndarray | None = None,
                             t0: float = 0.0, iterations: int = 30,
                             hold: dict | None = None, start: str = "rigid") -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities (n_dof,) near ``u0, v0`` that satisfy the joints at t0, for a
    :class:`~flexmb.model.Model` or its :class:`~flexmb.assembly.Assembly` (``model``).

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

    ``start`` says what the flexible parts do:

    * ``"rigid"`` (default): their elastic deformation rates are those of the guess ``v0`` (zero
      without one): each element of a Truss, Beam2D (any mass), Beam3D or Shell3 group moves
      with its guess's velocity plus a rigid velocity (a translation and an angular velocity w
      about its centre, its nodes' rotation rates changed by w), and the modal coordinate rates of
      modal bodies are the guess's. A driven mechanism with flexible links then starts in the
      motion the drives give it when its links are rigid between the nodes the joints hold, and
      an initial vibration given in ``v0`` is kept. Force elements (springs, dampers, bushings,
      user forces) and rigid bodies add no condition. Among the velocities that keep the
      deformation rates, the joints and the held items, the one with the least kinetic-energy
      change is taken, as above. When the joints and drives force the flexible parts to deform
      (a beam held at both ends by bodies that move apart, a closed loop of flexible links whose
      rigid motion is locked) no such velocity exists: then the velocity with the least
      deformation rate that satisfies the joints is taken (deformation rates weighted by each
      element's mass, rotation rates by its mass times its mean squared node distance from its
      centre), and a FlexmbWarning names the groups that must deform.
    * ``"least-kinetic-energy"``: only the joints and held items constrain the velocity; the
      flexible parts take the least kinetic-energy change of the guess, which in a mechanism
      with flexible links is an impulsive deformation (a violent start, e.g. a beam node
      spinning against its neighbours).

    An undriven model without a guess (no drives, no held items, ``v0`` None) starts at rest
    with either choice. The rigid start is exact to round-off and sparse: the velocity changes
    that keep the deformation rates are spanned by a few columns per cluster of beams and shells
    that share nodes (its translation and angular velocity) and one per other DOF, so a 61,000-DOF
    shell plate takes about 0.1 s; each Truss bar adds a dense row to the rank test of the
    conditions (thousands of bars cost seconds).
    """
    if isinstance(model, Model):
        from flexmb.assembly import Assembly    # multibody sits below the assembly: import on use

        model = Assembly(model)
    asm = model
    check_consistent_initial_state(asm, u0, v0, t0, iterations)
    if not isinstance(start, str) or start not in START_CHOICES:
        raise ModelError(f"consistent_initial_state: start must be one of {', '.join(map(repr, START_CHOICES))}, "
                         f"got {start!r}")
    cs = asm.constraints
    n = asm.n_dof
    u = np.zeros(n) if u0 is None else np.array(u0, dtype=float)
    v = np.zeros(n) if v0 is None else np.array(v0, dtype=float)
    guess = v.copy()                         # its deformation rates are kept by a rigid start
    presc = asm.dofs.prescribed
    u[presc] = asm.prescribed_values(t0)
    v[presc] = asm.prescribed_velocities(t0)
    if cs is not None:
        u = _project_positions(asm, u, t0, iterations)
    held_dofs, held_rows = _held_velocities(asm, u, v, hold or {})
    for dof, (_, value) in held_dofs.items():
        v[dof] = value
    if start == "rigid":
        # without joints or held rates only the prescribed and held DOFs can move the parts
        # away from the guess's deformation rates; where they do not, the guess stands
        if cs is None and not held_rows and np.array_equal(v, guess):
            return u, v
        return u, _project_velocities(asm, u, v, t0, held_dofs, held_rows, _DeformationRates(asm, u), guess)
    if cs is None and not held_rows:
        return u, v
    return u, _project_velocities(asm, u, v, t0, held_dofs, held_rows)


def _project_positions(asm, u: np.ndarray, t0: float, iterations: int) -> np.ndarray:
    """Gauss-Newton with minimum-norm corrections of the free DOFs onto Phi(u, t0) = 0."""
    import scipy.sparse.linalg as spla  # imported here: a run that never needs it skips its import

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
                        held_rows: list[tuple[str, np.ndarray, float]], deformation: _DeformationRates | None = None,
                        guess: np.ndarray | None = None) -> np.ndarray:
    """v with the held DOFs as given and the other free DOFs changed by the least kinetic energy
    (see :func:`consistent_initial_state`) so that C v + dPhi/dt = 0 and the held rows hold; with
    ``deformation``, also keeping the deformation rates of ``guess`` (n_dof,) (rigid start)."""
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
    r = b_o[rows] - A_o[rows] @ v[other]
    if deformation is None or not deformation.flexible:     # no flexible parts: nothing to keep
        v_o = v[other] + _least_kinetic_change(asm, u, other, A_o[rows], r)
    else:
        v_o = v[other] + deformation.least_change(asm, u, other, known, A_o[rows], r, v - guess, speed)
    # round-off clean-up: the remaining residual by the minimum-norm correction
    residual = b_o[rows] - A_o[rows] @ v_o
    if residual.size:
        v_o += np.linalg.lstsq(A_o[rows], residual, rcond=None)[0]
    v = v.copy()
    v[other] = v_o
    return v


def _row_rank(A: np.ndarray) -> tuple[int, np.ndarray]:
    """Numerical rank of A (m, n) and its rows ordered independent-first (pivoted QR of A^T)."""
    import scipy.linalg as sla  # imported here: a run that never needs it skips its import

    if A.shape[0] == 0:
        return 0, np.zeros(0, dtype=np.int64)
    if A.shape[1] == 0:
        return 0, np.arange(A.shape[0])
    _, R, order = sla.qr(A.T, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    rank = int(np.sum(diag > 1e-10 * max(diag.max(initial=0.0), np.finfo(float).tiny)))
    return rank, order


def _kinetic_metric(asm, u: np.ndarray, other: np.ndarray) -> sp.csr_matrix:
    """W (n_o, n_o): the mass matrix of the DOFs ``other`` about u, with 1e-10 of its largest
    diagonal entry added on the DOFs without mass."""
    M = asm.free_matrix(asm.mass_data_at(u)).tocsr()                            # (n_f, n_f)
    pos = asm.dofs.free_position[other]
    W = M[pos][:, pos]
    diagonal = np.abs(W.diagonal())
    largest = max(float(diagonal.max(initial=0.0)), np.finfo(float).tiny)
    # DOFs without (noticeable) mass get a tiny Euclidean weight so that W is regular; the
    # others keep the exact kinetic-energy metric
    return (W + sp.diags(np.where(diagonal <= 1e-8 * largest, 1e-10 * largest, 0.0))).tocsr()


def _least_kinetic_change(asm, u: np.ndarray, other: np.ndarray, A: np.ndarray, r: np.ndarray) -> np.ndarray:
    """dv (n_o,) minimising dv^T W dv with A dv = r (A full row rank), W the mass matrix of the
    DOFs ``other`` about u (:func:`_kinetic_metric`): the KKT system [W A^T; A 0] [dv; mu] = [0; r],
    sparse LU."""
    import scipy.sparse.linalg as spla  # imported here: a run that never needs it skips its import

    if A.shape[0] == 0:
        return np.zeros(other.size)
    W = _kinetic_metric(asm, u, other)
    K = sp.bmat([[W, sp.csr_matrix(A).T], [sp.csr_matrix(A), None]], format="csc")
    x = spla.splu(K).solve(np.concatenate([np.zeros(other.size), r]))
    return x[:other.size]


class _DeformationRates:
    """The elastic deformation rates of the flexible parts at the configuration u.

    Per element of a Truss, Beam2D, Beam3D or Shell3 group with nodal velocities e (ne,): its
    rigid velocities are G z (G (ne, r)): a translation t and an angular velocity w about the
    element's centre c, a node at x moving by t + w x (x - c) and its rotation DOFs (if any) at
    w (the spatial angular velocity in 3D); r = 3 in 2D, 6 in 3D (a 3D truss bar does not see
    the turn about its axis: rank 5). The deformation rate is what remains after the best rigid
    fit in the metric L = diag(m/nn at translations, m l^2/nn at rotations) (m the element's
    translational mass, l^2 the mean squared distance of its nodes from c, nn its node count):

        d = P e,   P = I - G (G^T L G)^+ G^T L,

    and its energy d^T L d = e^T k e with k = L - L G (G^T L G)^+ G^T L (PSD, the rigid
    velocities its null space). For a modal body the deformation rates are its modal coordinate
    rates (mass-normalised modes: weight 1). The element matrices k are assembled into K (n_dof,
    n_dof), the "stiffness" of the deformation rates; K e = 0 exactly when no part deforms.

    A rigid start that exists is found exactly, without P and K, in the basis of the velocity
    changes that keep the rates (:meth:`least_change`); P and K (built when first needed) measure
    and minimise a deformation that the joints force.
    """

    def __init__(self, asm, u: np.ndarray) -> None:
        self._asm, self._u = asm, u
        #: whether the model has flexible parts (element groups with deformation rates)
        self.flexible = any(isinstance(g, (Truss, Beam2D, Beam3D, Shell3)) or g.n_internal_dofs for g in asm.groups)
        self._parts: list | None = None

    @property
    def parts(self) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """Per flexible group: (name, element DOFs (n_el, ne), P (n_el, ne, ne), L (n_el, ne), m (n_el,))."""
        if self._parts is None:
            self._assemble()
        return self._parts

    def _assemble(self) -> None:
        """P, L and the element masses of every flexible group (the class docstring), and K."""
        asm, u = self._asm, self._u
        model, dofs = asm.model, asm.dofs
        dim = model.dim
        config = dict(asm.configuration_masses)
        parts = []
        for i, g in enumerate(asm.groups):
            ed = dofs.element_dofs(g)
            if isinstance(g, (Truss, Beam2D, Beam3D, Shell3)):
                X = model.coordinates[g.connectivity]                                   # (n_el, nn, dim)
                x = X + u[dofs.translations()[g.connectivity]]                          # (n_el, nn, dim)
                Me = g.mass_matrix(X)                                                   # (n_el, ne, ne)
                if i in config:
                    Me = Me + config[i].mass_matrix(u[ed])
                per_node = g.dofs_per_node
                diagonal = np.diagonal(Me, axis1=1, axis2=2).reshape(len(ed), g.n_nodes, per_node)
                mass = diagonal[:, :, :dim].sum(axis=(1, 2)) / dim                     # (n_el,), kg
                parts.append((g.name, ed, *self._rigid_complement(x, g.has_rotations), mass))
            elif g.n_internal_dofs:                    # a modal body: its modal coordinates
                k = g.n_internal_dofs
                n_el = g.n_elements
                mass = np.full(n_el, float(g.data.mass[0, 0]))                         # (n_el,), kg
                # the weight 1 / m: times the floor-free mass below, the modal rates' own energy
                parts.append((g.name, ed[:, -k:], np.broadcast_to(np.eye(k), (n_el, k, k)),
                                   np.ones((n_el, k)) / mass[:, None], mass))
        largest = max((float(p[4].max()) for p in parts), default=0.0)
        # massless elements still keep their deformation rates: they weigh as a light element
        floor = 1e-6 * largest if largest > 0.0 else 1.0
        rows, cols, vals = [], [], []
        for j, (name, ed, P, L, mass) in enumerate(parts):
            mass = np.maximum(mass, floor)
            L = L * mass[:, None]                                                      # (n_el, ne), kg
            parts[j] = (name, ed, P, L, mass)
            k = L[:, :, None] * P                                                      # (n_el, ne, ne)
            ne = ed.shape[1]
            rows.append(np.repeat(ed, ne, axis=1).ravel())
            cols.append(np.tile(ed, (1, ne)).ravel())
            vals.append(k.ravel())
        empty = [np.zeros(0, dtype=np.int64)]
        n = asm.n_dof
        #: K (n_dof, n_dof), kg: e^T K e the deformation-rate energy of the velocity change e (times 2)
        self.K = sp.coo_matrix((np.concatenate(vals + [np.zeros(0)]), (np.concatenate(rows + empty),
                                np.concatenate(cols + empty))), shape=(n, n)).tocsr()
        self._parts = parts

    @staticmethod
    def _rigid_complement(x: np.ndarray, rotations: bool) -> tuple[np.ndarray, np.ndarray]:
        """P (n_el, ne, ne) and the metric's diagonal per unit element mass L / m (n_el, ne) of
        elements with current nodal positions x (n_el, nn, dim) (class docstring)."""
        n_el, nn, dim = x.shape
        n_rot = (1 if dim == 2 else 3) if rotations else 0
        per_node = dim + n_rot
        arm = x - x.mean(axis=1)[:, None, :]                                   # (n_el, nn, dim), m
        n_rigid = 3 if dim == 2 else 6
        G = np.zeros((n_el, nn, per_node, n_rigid))
        G[:, :, np.arange(dim), np.arange(dim)] = 1.0                          # translations
        if dim == 2:
            G[:, :, 0, 2], G[:, :, 1, 2] = -arm[..., 1], arm[..., 0]           # w x (x - c)
        else:
            G[:, :, :3, 3:] = -skew(arm)                                       # w x a = -hat(a) w
        G[:, :, dim:, dim if dim == 2 else 3:] = np.eye(n_rot) if n_rot else 0.0    # rotation rates w
        l2 = np.mean(np.sum(arm**2, axis=-1), axis=1)                          # (n_el,), m^2
        # angular velocities in units of the element size (w l, m/s): G^T L G is then of order 1,
        # not of condition 1/l^2, so P keeps the digits of the speeds
        G[..., dim:] /= np.sqrt(l2)[:, None, None, None]
        G = G.reshape(n_el, nn * per_node, n_rigid)                            # (n_el, ne, r)
        L = np.full((n_el, nn * per_node), 1.0 / nn)                          # (n_el, ne), per kg
        rot = np.tile(np.arange(per_node) >= dim, nn)                          # (ne,) the rotation DOFs
        L[:, rot] *= l2[:, None]                                               # m^2 at rotations
        LG = L[:, :, None] * G                                                 # (n_el, ne, r)
        gram = np.einsum("eai,eaj->eij", G, LG)                                # (n_el, r, r)
        # pseudo-inverse: a 3D bar's turn about its own axis is no velocity
        fit = np.einsum("eij,eaj->eia", np.linalg.pinv(gram, rcond=1e-10, hermitian=True), LG)   # (n_el, r, ne)
        P = np.eye(nn * per_node)[None] - np.einsum("eai,eib->eab", G, fit)   # (n_el, ne, ne)
        return P, L

    def rates(self, e: np.ndarray) -> list[np.ndarray]:
        """Per flexible group the deformation rate of each element under the velocity e (n_dof,),
        as an rms speed sqrt(d^T L d / m) (n_el,), m/s; computed from P e, not from the
        quadratic form, so that it is accurate to round-off of the speeds."""
        out = []
        for _, ed, P, L, mass in self.parts:
            d = np.einsum("eab,eb->ea", P, e[ed])                              # (n_el, ne)
            out.append(np.sqrt(np.einsum("ea,ea->e", L, d**2) / mass))
        return out

    def least_change(self, asm, u: np.ndarray, other: np.ndarray, known: np.ndarray, A: np.ndarray,
                     r: np.ndarray, e: np.ndarray, speed: float) -> np.ndarray:
        """x (n_o,): the change of the velocities ``other`` with A x = r (A full row rank) that keeps
        the deformation rates (K e = 0, e (n_dof,) the velocity minus the guess, known at the mask
        ``known``, x at ``other``) with the least kinetic-energy change x^T W x.

        The velocity changes that keep every deformation rate are spanned exactly by a sparse
        basis B (:meth:`_rigid_basis`): x = B xi. The conditions become the rows E xi = h (the
        joints' and held rows A B, the known DOFs of rigid clusters, the bars' elongation rates),
        and xi the KKT solution of min xi^T B^T W B xi subject to the independent rows. When those
        rows contradict each other the joints force a deformation: then the minimum of
        x^T (W + 1e10 K_oo) x (least deformation, then least kinetic energy) subject to A x = r is
        taken and a FlexmbWarning names the groups that deform."""
        import scipy.sparse.linalg as spla  # imported here: a run that never needs it skips its import

        B, E_full, h = self._rigid_basis(asm, u, other, known, e)
        E = np.vstack([A @ B, E_full])                                          # (m, n_xi)
        rhs = np.concatenate([r, h])
        norms = np.linalg.norm(E, axis=1)
        norms[norms == 0.0] = 1.0
        E, rhs = E / norms[:, None], rhs / norms                               # unit rows: one rank test
        if B.shape[1] == 0:                        # nothing left free: the known DOFs must agree
            if np.abs(rhs).max(initial=0.0) <= 1e-10 * speed:
                return np.zeros(other.size)
            return self._least_deformation(asm, u, other, known, A, r, e, speed)
        rank, order = _row_rank(E)
        rows = np.sort(order[:rank])
        consistent = True
        if rank < E.shape[0]:
            fit = np.linalg.lstsq(E, rhs, rcond=None)[0]
            consistent = float(np.abs(E @ fit - rhs).max()) <= 1e-10 * speed
        if consistent:
            W = _kinetic_metric(asm, u, other)
            W_xi = (B.T @ W @ B).tocsc()                                         # (n_xi, n_xi)
            # a cluster whose DOFs are all known has no mass among ``other``: its rows fix it
            diagonal = np.abs(W_xi.diagonal())
            W_xi = W_xi + sp.diags(np.where(diagonal == 0.0, max(float(diagonal.max(initial=0.0)), 1.0), 0.0))
            E_s = sp.csr_matrix(E[rows])
            kkt = sp.bmat([[W_xi, E_s.T], [E_s, None]], format="csc")
            xi = spla.splu(kkt).solve(np.concatenate([np.zeros(B.shape[1]), rhs[rows]]))[:B.shape[1]]
            return B @ xi
        return self._least_deformation(asm, u, other, known, A, r, e, speed)

    def _rigid_basis(self, asm, u: np.ndarray, other: np.ndarray, known: np.ndarray, e: np.ndarray
                     ) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
        """The velocity changes of the DOFs ``other`` that keep every deformation rate, x = B xi
        (B (n_o, n_xi), sparse), and the rows E xi = h (E dense (k, n_xi)) they must meet.

        Beam2D, Beam3D and Shell3 elements that share nodes move as one rigid cluster (an element
        keeps its rates only by a rigid velocity change, its nodes' rotation rates changed by its
        w, so two elements at a node share t and w): a cluster's DOFs change by G xi_c, a
        translation and an angular velocity (as w l, l the cluster's rms node distance from its
        centre). Its known DOFs (prescribed, held) give the rows G_k xi_c = e_k. Modal coordinate
        rates do not change. Every other unknown DOF has a column of its own; a Truss bar adds
        the row n . (x_b' - x_a') = (its guess's), n its current direction."""
        import scipy.sparse.csgraph as csgraph  # imported here: a run that never needs it skips its import

        model, dofs = asm.model, asm.dofs
        dim, n = model.dim, asm.n_dof
        n_rot = 1 if dim == 2 else 3
        cluster_groups = [g for g in asm.groups if isinstance(g, (Beam2D, Beam3D, Shell3))]
        x_nodes = model.coordinates + u[dofs.translations()]                   # (n_nodes, dim), m
        rows, cols, vals = [], [], []
        in_cluster = np.zeros(n, dtype=bool)
        n_xi = 0
        if cluster_groups:
            conn = [g.connectivity for g in cluster_groups]
            edges = np.concatenate([np.c_[c[:, 0], c[:, k]] for c in conn for k in range(1, c.shape[1])])
            graph = sp.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])),
                                  shape=(model.n_nodes, model.n_nodes))
            _, label = csgraph.connected_components(graph, directed=False)
            members = np.unique(np.concatenate([c.ravel() for c in conn]))
            for c in np.unique(label[members]):
                nodes = members[label[members] == c]
                arm = x_nodes[nodes] - x_nodes[nodes].mean(axis=0)               # (n_c, dim), m
                size = float(np.sqrt(np.mean(np.sum(arm**2, axis=1)))) or 1.0
                first = dofs.first[nodes]
                trans = first[:, None] + np.arange(dim)                          # (n_c, dim)
                rot = first[:, None] + dim + np.arange(n_rot)                    # (n_c, n_rot)
                # translations: t + w x arm (w scaled by the size); rotations: w
                for k in range(dim):
                    rows.append(trans[:, k])
                    cols.append(np.full(nodes.size, n_xi + k))
                    vals.append(np.ones(nodes.size))
                if dim == 2:
                    spin = np.stack([-arm[:, 1], arm[:, 0]], axis=1)[:, :, None] / size     # (n_c, 2, 1)
                else:
                    spin = -skew(arm) / size                                                # (n_c, 3, 3)
                for k in range(dim):
                    for j in range(n_rot):
                        rows.append(trans[:, k])
                        cols.append(np.full(nodes.size, n_xi + dim + j))
                        vals.append(spin[:, k, j])
                for j in range(n_rot):
                    rows.append(rot[:, j])
                    cols.append(np.full(nodes.size, n_xi + dim + j))
                    vals.append(np.full(nodes.size, 1.0 / size))
                in_cluster[trans.ravel()] = in_cluster[rot.ravel()] = True
                n_xi += dim + n_rot
        modal = np.zeros(n, dtype=bool)
        for g in asm.groups:
            if g.n_internal_dofs and not isinstance(g, (Truss, Beam2D, Beam3D, Shell3)):
                modal[dofs.element_dofs(g)[:, -g.n_internal_dofs:].ravel()] = True
        single = np.flatnonzero(~known & ~in_cluster & ~modal)
        rows.append(single)
        cols.append(n_xi + np.arange(single.size))
        vals.append(np.ones(single.size))
        n_xi += single.size
        B_full = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n_xi))
        fixed = np.flatnonzero(known & in_cluster)
        E = [B_full[fixed].toarray()]
        h = [e[fixed]]
        for g in asm.groups:
            if isinstance(g, Truss):
                a, b = g.connectivity[:, 0], g.connectivity[:, 1]
                direction = x_nodes[b] - x_nodes[a]
                direction /= np.linalg.norm(direction, axis=1)[:, None]          # (n_el, dim)
                T = sp.csr_matrix((np.concatenate([direction.ravel(), -direction.ravel()]),
                                   (np.tile(np.repeat(np.arange(len(a)), dim), 2),
                                    np.concatenate([dofs.translations()[b].ravel(), dofs.translations()[a].ravel()]))),
                                  shape=(len(a), n))
                E.append((T[:, np.flatnonzero(~known)] @ B_full[np.flatnonzero(~known)]).toarray())
                h.append(-(T[:, np.flatnonzero(known)] @ e[known]))
        return B_full[other], np.vstack(E), np.concatenate(h)

    def _least_deformation(self, asm, u: np.ndarray, other: np.ndarray, known: np.ndarray, A: np.ndarray,
                           r: np.ndarray, e: np.ndarray, speed: float) -> np.ndarray:
        """The least (mass-weighted) deformation rate with A x = r, then the least kinetic energy:
        min x^T (W + rho K_oo) x + 2 rho x^T K_ok e_k subject to A x = r with rho = 1e10 (its
        error in the deformation rates is of order 1/rho of theirs); warns naming the groups that
        deform."""
        import scipy.sparse.linalg as spla  # imported here: a run that never needs it skips its import

        if self._parts is None:                      # P, L and K, built on first use
            self._assemble()
        W = _kinetic_metric(asm, u, other)
        K_o = self.K[other]
        f = K_o[:, np.flatnonzero(known)] @ e[known]                          # (n_o,)
        A_s = sp.csr_matrix(A)
        kkt = sp.bmat([[W + _PENALTY * K_o[:, other], A_s.T], [A_s, None]], format="csc")
        x = spla.splu(kkt).solve(np.concatenate([-_PENALTY * f, r]))[:other.size]
        e = e.copy()
        e[other] = x
        rates = self.rates(e)
        worst = max(float(d.max()) for d in rates)
        names = [f"{name!r} (up to {float(d.max()):.3g} m/s)" for (name, *_), d in zip(self.parts, rates)
                 if float(d.max()) > 1e-3 * worst]
        warnings.warn(f"consistent_initial_state: the joints and drives force {', '.join(names)} to deform at "
                      f"the start (element deformation rates as rms speeds; the speeds are up to {speed:.3g}), "
                      "so no rigid start exists; the velocity with the least (mass-weighted) deformation rate "
                      "that satisfies the joints is taken", FlexmbWarning, stacklevel=4)
        return x


#: the penalty of :meth:`_DeformationRates._least_deformation` (relative to the kinetic-energy
#: metric, both in kg)
_PENALTY = 1e10


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
