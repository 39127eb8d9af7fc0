"""Singular systems explained: the null space of a singular tangent or step Jacobian, described
with the model's nodes, DOFs and joints, and the error that reports it.

When is a singular Jacobian met at the start of a step or increment structural, so that a
smaller step cannot help and the run must stop at once (no cut-back)?

* Statics: the tangent at an equilibrium, the start of every load increment, does not depend on
  the increment. It is singular for a model without (enough) supports, a mechanism (an
  unstressed straight string is one too), or an equilibrium exactly at a limit or bifurcation
  point.
* Dynamics: the step Jacobian is ``K + c M`` plus joint terms (c = 2/dt^2 mid-point, 4/dt^2
  Newmark). A smaller step raises c, so a singular Jacobian is structural only when its null
  space carries no mass: a DOF without mass and without stiffness (a rigid body with zero
  inertia free to turn, a massless node between bars in a line) or joint equations that repeat
  each other. :func:`raise_if_structural_in_dynamics` tests exactly that: with the mass term of
  a step dt/2 added, ``J + (6/dt^2) M``, the Jacobian is still singular.

Null space (:func:`null_space`): of the equilibrated matrix ``B = D_r J D_c``
(:func:`flexmb.integrators.newton.equilibrate`), whose singular values are unit-free. Up to
``DENSE_LIMIT`` unknowns by a dense SVD; beyond, by ARPACK in shift-invert mode about a tiny
shift (one sparse LU, a few solves), the eigenvectors of the eigenvalues at round-off level.
A vector v of B's null space is ``z = D_c v`` of J's.

Naming: a DOF (or a joint's multiplier) belongs to the null space when its row of the
orthonormal null basis, in the equilibrated unknowns (unit-free, so translations, rotations and
multipliers compare), is at least ``SIGNIFICANT`` of the largest row. In statics the rigid-body
motions of the whole model that the supports allow are recognised first ("the whole model
moves as a rigid body: translation along x, ...").
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from flexmb.analysis.arpack import start_vector
from flexmb.assembly import Assembly
from flexmb.checks import ModelError
from flexmb.integrators.newton import Factorization, equilibrate, pivot_tolerance

#: unknowns (free DOFs plus joint multipliers) up to which the null space comes from a dense SVD
DENSE_LIMIT = 300
#: null vectors sought at most in large systems (ARPACK)
MAX_MODES = 12
#: a DOF is named when its row of the null basis is at least this fraction of the largest row
SIGNIFICANT = 0.1
#: nodes listed in a message before "... and N more"
SHOWN = 8
#: an (orthonormal, equilibrated) rigid-body motion q counts as unresisted when |B q| is below
#: this fraction of |B|_1: round-off of the assembled tangent, far below any real stiffness
RIGID_TOL = 1e-8


class SingularSystemError(ModelError):
    """A singular tangent or step Jacobian that no smaller step changes: a model without
    supports, a mechanism, DOFs without mass and stiffness in dynamics, or redundant joints.

    A :class:`~flexmb.checks.ModelError` (the model must change), deliberately not a
    ``RuntimeError``: the solvers cut a step back on runtime failures, and this one fails the same
    way at every step size.

    Attributes
    ----------
    analysis : the analysis that met it, e.g. ``"load control"``, ``"mid-point"``.
    at : the load factor (statics) or time (s, dynamics) where it was met.
    dofs : labels of the DOFs in the null space, e.g. ``["node 2 rz"]``.
    joints : names of the joints whose equations are involved (redundant, or at those DOFs).
    modes : (k, n_dof) the null vectors over all DOFs (zero at prescribed DOFs), each scaled
        to a largest component of 1.
    result : the results computed before it (a ``StaticPath`` or ``TimeHistory``) where the
        analysis attaches them, else None.
    """

    def __init__(self, message: str, analysis: str, at: float, dofs: list[str], joints: list[str],
                 modes: np.ndarray) -> None:
        super().__init__(message)
        self.analysis = analysis
        self.at = at
        self.dofs = dofs
        self.joints = joints
        self.modes = modes
        self.result = None


# ------------------------------------------------------------------ null space
def null_space(matrix: sp.spmatrix, direction: np.ndarray | None = None,
               dense_limit: int = DENSE_LIMIT) -> tuple[np.ndarray, np.ndarray]:
    """Null space of a singular square matrix J (n, n).

    Returns ``(Z, V)``: Z (n, k) the null vectors of J, each scaled to a largest component of 1,
    and V (n, k) an orthonormal basis of the same space in the equilibrated unknowns (``z = D_c
    v``, see the module docstring). Singular values (eigenvalues for large n) up to
    ``max(1e3 sigma_min, pivot_tolerance(n)) sigma_max`` count as zero. If none does (a matrix
    only "in effect" singular, whose Newton correction was absurdly long), ``direction`` (n,),
    that correction, stands for the null space; without it the least singular vector does.
    """
    B, _, col_scale = equilibrate(matrix)
    n = B.shape[0]
    dense = n <= dense_limit or n < 3                     # ARPACK needs n > k + 1
    if dense:
        _, sigma, vt = np.linalg.svd(B.toarray())
        threshold = max(1e3 * sigma[-1], pivot_tolerance(n) * sigma[0])
        V = vt[sigma <= threshold].T                                         # (n, k)
    else:
        V = _sparse_null_space(B)
    if V.shape[1] == 0:
        if direction is not None:
            V = (np.asarray(direction, dtype=float) / col_scale)[:, None]
        else:
            V = vt[-1:].T if dense else _sparse_null_space(B, keep_least=True)
    V = np.linalg.qr(V)[0]
    Z = col_scale[:, None] * V
    return Z / np.abs(Z).max(axis=0, keepdims=True), V


def _sparse_null_space(B: sp.csc_matrix, keep_least: bool = False) -> np.ndarray:
    """Null vectors (n, k) of a large equilibrated matrix: eigenvectors of the eigenvalues at
    round-off level, by ARPACK about a tiny negative shift (shift-invert, one sparse LU)."""
    import scipy.sparse.linalg as spla  # imported here: a run that never needs it skips its import

    n = B.shape[0]
    scale = float(spla.norm(B, 1))
    shift = -pivot_tolerance(n) * scale
    try:
        mu, vectors = spla.eigs(B, k=min(MAX_MODES, n - 2), sigma=shift, which="LM", v0=start_vector(n))
    except spla.ArpackNoConvergence as exc:
        mu, vectors = exc.eigenvalues, exc.eigenvectors
    if mu.size == 0:
        return np.zeros((n, 0))
    size = np.abs(mu)
    threshold = max(1e3 * size.min(), pivot_tolerance(n) * scale)
    keep = size <= threshold if not keep_least else size == size.min()
    # eigenvectors of a repeated real eigenvalue may come complex: both parts lie in the space
    parts = np.concatenate([vectors[:, keep].real, vectors[:, keep].imag], axis=1)
    u, sv, _ = np.linalg.svd(parts, full_matrices=False)
    return u[:, sv > 1e-8 * sv.max(initial=0.0)] if sv.size else np.zeros((n, 0))


# ---------------------------------------------------------------- model terms
def inertia_matrix(asm: Assembly, u: np.ndarray) -> sp.csc_matrix:
    """Mass matrix on the free DOFs at the configuration u (n_free, n_free): element and point
    masses, configuration-dependent (cubic) masses and the rotary inertia of 3D nodes."""
    data = asm.mass_data.copy()
    if asm.configuration_masses:
        data = data + asm.configuration_mass_data(u)
    if asm.rotation_nodes.size:
        data = data + asm.rotary_block_data(asm.spatial_inertia(u))
    return asm.free_matrix(data)


def rigid_body_motions(asm: Assembly, u: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """The model's rigid-body motions at configuration u, (n_dof, m) with m = 3 (2D) or 6 (3D),
    and their names: translations along the axes, then rotations (spins) about the axes through
    the centroid of the nodes."""
    dim = asm.model.dim
    x = asm.positions(u)                                                      # (n_nodes, dim)
    arm = np.zeros((x.shape[0], 3))
    arm[:, :dim] = x - x.mean(axis=0)
    tr = asm.dofs.translations()                                              # (n_nodes, dim)
    motions, names = [], []
    for i, axis in enumerate("xyz"[:dim]):
        m = np.zeros(asm.n_dof)
        m[tr[:, i]] = 1.0
        motions.append(m)
        names.append(f"translation along {axis}")
    for i in (range(3) if dim == 3 else [2]):
        spin = np.eye(3)[i]
        m = np.zeros(asm.n_dof)
        m[tr] = np.cross(spin, arm)[:, :dim]
        if dim == 2:
            m[asm.dofs.first[asm.dofs.has_rotations] + 2] = 1.0
        elif asm.rotation_dofs.size:
            m[asm.rotation_dofs] = spin
        motions.append(m)
        names.append(f"rotation about {'xyz'[i]}")
    return np.stack(motions, axis=1), names


def _free_rigid_motions(asm: Assembly, u: np.ndarray, B: sp.csc_matrix, col_scale: np.ndarray, nf: int
                        ) -> tuple[np.ndarray, list[str]]:
    """Rigid-body motions that the supports allow and the tangent does not resist.

    Returns an orthonormal basis (n, r) of them in the equilibrated unknowns (zero at joint
    multipliers) and the names of the translations and rotation axes they contain (a rotation
    counts with any shift of its axis, e.g. about a single pinned node)."""
    import scipy.sparse.linalg as spla  # imported here: a run that never needs it skips its import

    motions, names = rigid_body_motions(asm, u)                                # (n_dof, m)
    presc, free = asm.dofs.prescribed, asm.dofs.free
    n, m = B.shape[0], motions.shape[1]
    allowed = np.eye(m)
    if presc.size:
        _, sv, vt = np.linalg.svd(motions[presc], full_matrices=True)
        rank = int(np.sum(sv > 1e-10 * max(sv.max(initial=0.0), 1.0)))
        allowed = vt[rank:].T                                                 # (m, a) motion coefficients
    if allowed.shape[1] == 0:
        return np.zeros((n, 0)), []
    balanced = np.zeros((n, allowed.shape[1]))
    balanced[:nf] = (motions[free] @ allowed) / col_scale[:nf, None]
    # orthonormal basis Q of the allowed motions (a motion that moves no DOF, such as a bar
    # spinning about its own axis, drops out) and the coefficients of its columns
    q, sq, wq = np.linalg.svd(balanced, full_matrices=False)
    moving = sq > 1e-10 * sq.max(initial=0.0)
    if not moving.any():
        return np.zeros((n, 0)), []
    q, to_coeffs = q[:, moving], allowed @ (wq[moving].T / sq[moving])          # (n, k), (m, k)
    _, sv, wt = np.linalg.svd(B @ q, full_matrices=False)
    null = sv <= RIGID_TOL * float(spla.norm(B, 1))
    if not null.any():
        return np.zeros((n, 0)), []
    basis = q @ wt[null].T                                                    # (n, r)
    span = np.linalg.qr(to_coeffs @ wt[null].T)[0]                            # (m, r) motion coefficients
    dim = asm.model.dim
    found = [names[i] for i in range(dim) if np.linalg.norm(np.eye(m)[i] - span @ span[i]) < 1e-6]
    found += [names[i] for i in range(dim, m) if np.linalg.norm(span[i]) > 1e-6]
    return basis, found


def _node_of(asm: Assembly, dof: int) -> tuple[int, str]:
    label = asm.dofs.label(int(dof))                                          # "node 3 uy"
    _, node, name = label.split()
    return int(node), name


def _node_name(asm: Assembly, node: int) -> str:
    bodies = [b.name for b in asm.model.bodies if b.node == node]
    return f"body {bodies[0]!r} at node {node}" if bodies else f"node {node}"


def describe_dofs(asm: Assembly, dofs: np.ndarray, direction: np.ndarray | None = None) -> str:
    """Global DOFs grouped by node, e.g. ``node 4 (ux, uy), node 7 rz``, at most SHOWN nodes.

    ``direction`` (n_dof,): a single null vector; when the DOFs are several of one node, its
    direction there is added, e.g. ``node 1 (ux, uy) along (0.6, -0.8)``.
    """
    by_node: dict[int, list[str]] = {}
    for i in sorted(int(d) for d in dofs):
        node, name = _node_of(asm, i)
        by_node.setdefault(node, []).append(name)
    parts = [f"{_node_name(asm, node)} " + (names[0] if len(names) == 1 else f"({', '.join(names)})")
             for node, names in by_node.items()]
    if direction is not None and len(by_node) == 1 and len(dofs) > 1:
        along = direction[np.sort(dofs)]
        along = along / np.linalg.norm(along) * np.sign(along[np.argmax(np.abs(along))])
        parts[0] += " along (" + ", ".join(f"{a:.3g}" for a in along + 0.0) + ")"
    more = f" and {len(parts) - SHOWN} more nodes" if len(parts) > SHOWN else ""
    return ", ".join(parts[:SHOWN]) + more


def _ranges(values: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2, 5"``."""
    out, start = [], None
    for k, v in enumerate(values):
        if start is None:
            start = v
        if k + 1 == len(values) or values[k + 1] != v + 1:
            out.append(f"{start}" if start == v else f"{start}-{v}")
            start = None
    return ", ".join(out)


def _significant(V: np.ndarray) -> np.ndarray:
    """Rows of an orthonormal basis (n, k) at least SIGNIFICANT of the largest row norm."""
    weight = np.linalg.norm(V, axis=1)
    return np.flatnonzero(weight >= SIGNIFICANT * weight.max(initial=0.0)) if V.size else np.zeros(0, int)


def _joint_names(asm: Assembly, rows: np.ndarray, nodes: set[int]) -> tuple[list[str], list[str]]:
    """Joints (and ties to modal bodies) whose multiplier rows are given, and the other joints and
    ties at the given nodes."""
    cs = asm.constraints
    if cs is None:
        return [], []
    items = [(j.name, r, {j.a, j.b}) for j, r in zip(cs.joints, cs.joint_rows)]
    items += [(t.name, r, {t.node, t.frame_node}) for t, r in zip(cs.ties, cs.tie_rows)]
    redundant = [name for name, r, _ in items if np.any((rows >= r.start) & (rows < r.stop))]
    attached = [name for name, _, ends in items if name not in redundant and (ends & nodes)]
    return redundant, attached


def _modes(asm: Assembly, Z: np.ndarray, nf: int) -> np.ndarray:
    """Null vectors (n, k) over free DOFs and multipliers -> (k, n_dof) over all DOFs."""
    modes = np.zeros((Z.shape[1], asm.n_dof))
    modes[:, asm.dofs.free] = Z[:nf].T
    peak = np.abs(modes).max(axis=1, keepdims=True)
    return modes / np.where(peak > 0.0, peak, 1.0)


def _quoted(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names)


# ---------------------------------------------------------------------- errors
def statics_error(asm: Assembly, tangent: sp.spmatrix, analysis: str, lam: float, u: np.ndarray, context: str = "",
                  equilibrium_reached: bool = False, direction: np.ndarray | None = None) -> SingularSystemError:
    """The error for a singular tangent (n_free, n_free), or with joints the matrix on the free DOFs
    and the multipliers (:mod:`flexmb.analysis.static_system`), at a static state u (n_dof,) at load
    factor lam.

    ``context`` adds to the place (e.g. "the start of the increment to 0.2");
    ``equilibrium_reached``: the state is a converged equilibrium under load, so the tangent
    may also be singular at a limit or bifurcation point, which the advice then mentions;
    ``direction``: see :func:`null_space`.
    """
    nf = asm.dofs.free.size
    B, _, col_scale = equilibrate(tangent)
    Z, V = null_space(tangent, direction)
    rigid, rigid_names = _free_rigid_motions(asm, u, B, col_scale, nf)
    rest = V - rigid @ (rigid.T @ V) if rigid.size else V
    u_rest, sv, _ = np.linalg.svd(rest, full_matrices=False) if rest.size else (rest, np.zeros(0), None)
    rest = u_rest[:, sv > 1e-6] if sv.size else rest
    where = f"{analysis} at load factor {lam:.6g}" + (f", {context}" if context else "")
    parts, dofs = [], []
    if rigid.shape[1]:
        moved = np.linalg.norm(rigid[:nf], axis=1) > 1e-6 * np.abs(rigid).max()
        nodes = sorted({_node_of(asm, d)[0] for d in asm.dofs.free[moved]})
        grounded = [j.name for j in asm.model.joints if min(j.a, j.b) < 0]       # joints to the ground
        what = ("the model has no supports: the whole model" if asm.dofs.prescribed.size == 0 and not grounded else
                f"the supports{' and joints to the ground' if grounded else ''} leave a rigid-body motion free: "
                "the whole model")
        parts.append(f"{what} moves as a rigid body ({', '.join(rigid_names)}; nodes {_ranges(nodes)}); "
                     "add supports")
        dofs += [asm.dofs.label(int(d)) for d in asm.dofs.free[moved]]
    if rest.shape[1]:
        rows = _significant(rest)
        free_dofs = asm.dofs.free[rows[rows < nf]]             # rows past nf: joint multipliers
        single = _modes(asm, col_scale[:, None] * rest, nf)[0] if rest.shape[1] == 1 else None
        parts.append(f"free motion of {describe_dofs(asm, free_dofs, single)} (a mechanism, or a straight "
                     "unstressed string or cable; add supports or bracing, or pre-stress it)")
        dofs += [asm.dofs.label(int(d)) for d in free_dofs]
    if equilibrium_reached:
        parts.append("if the model carried the load up to here, this equilibrium is a limit or bifurcation "
                     "point: follow the path with fm.arc_length or perturb the model")
    message = f"mechanism / not supported: the tangent is singular ({where}): " + "; ".join(parts)
    return SingularSystemError(message, analysis, lam, dofs, [], _modes(asm, Z, nf))


def raise_if_structural_in_dynamics(asm: Assembly, jacobian: sp.spmatrix, scheme: str, t: float, dt: float,
                                    u: np.ndarray) -> None:
    """Raise SingularSystemError if the step Jacobian (free DOFs, then joint multipliers) that
    Newton met singular at the start of the step from t (s) with step dt (s), at the
    configuration u (n_dof,), stays singular with the mass term of a step dt/2 (see the module
    docstring); return if more mass regularises it (a smaller step may pass)."""
    J = sp.csc_matrix(jacobian)
    nf = asm.dofs.free.size
    mass = sp.block_diag([inertia_matrix(asm, u), sp.csc_matrix((J.shape[0] - nf, J.shape[0] - nf))])
    stiffened = sp.csc_matrix(J + (6.0 / dt**2) * mass)
    try:
        if not Factorization(stiffened).is_singular():
            return
    except RuntimeError:                                  # SuperLU: "Factor is exactly singular"
        pass
    Z, V = null_space(stiffened)
    rows = _significant(V)
    free_dofs = asm.dofs.free[rows[rows < nf]]
    nodes = {_node_of(asm, d)[0] for d in free_dofs}
    redundant, attached = _joint_names(asm, rows[rows >= nf] - nf, nodes)
    where = f"{scheme} step from t = {t:.6g} s, dt = {dt:.4g} s; no smaller step changes it"
    parts = []
    if free_dofs.size:
        diagonal = inertia_matrix(asm, u).diagonal()
        massless = all(diagonal[asm.dofs.free_position[d]] == 0.0 for d in free_dofs)
        verb = "has" if len(nodes) == 1 else "have"
        single = _modes(asm, Z, nf)[0] if Z.shape[1] == 1 else None
        text = (f"{describe_dofs(asm, free_dofs, single)} {verb} no mass"
                f"{'' if massless else ' in that direction'} and no stiffness")
        if attached:
            text += f", and joint(s) {_quoted(attached)} leave {'it' if len(nodes) == 1 else 'them'} free"
        parts.append(text + ": give the node or body a mass or inertia, connect it to an element or joint, "
                            "or fix the DOF")
    if redundant:
        parts.append(f"the equations of joint(s) {_quoted(redundant)} depend on each other or on fixed DOFs: "
                     "remove the duplicated joint or the repeated equations")
    headline = "mechanism / not supported" if free_dofs.size else "redundant joints"
    message = f"{headline}: the step Jacobian is singular ({where}): " + "; ".join(parts)
    raise SingularSystemError(message, scheme, t, [asm.dofs.label(int(d)) for d in free_dofs],
                              redundant + attached, _modes(asm, Z, nf))
