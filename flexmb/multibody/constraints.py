"""The constraint equations of all joints, batched: values, Jacobians, forces and their tangents.

All equations (:class:`~flexmb.multibody.joints.Equation`) are compiled into arrays over their
terms. With the body-fixed vectors ``P = x_node + R_node d`` (points) or ``R_node d``
(directions), a constraint row is

    Phi = sum c . P  +  sum s(t) P_a . P_b  +  sum e u[dof]  -  f(t).

Derivatives are taken with respect to the Newton increments of the schemes: translations add;
3D rotations take a spin (``R <- exp(hat(theta)) R``: ``dr = -hat(r) theta`` for ``r = R d``) or,
in the mid-point scheme, the step's Cayley parameters w (``R_{n+1} = cay(w) R_n``:
``dr_{n+1} = -G(w) hat(r_m) dw``, G the Cayley resolvent); planar rotations add
(``dr = k x r dtheta``).

Mid-point forces (energy conservation). The constraint force in the mid-point equilibrium is
``G_m^T lambda`` with a discrete gradient ``G_m`` that satisfies ``G_m d = Phi_{n+1} - Phi_n``
exactly for the step increment d (time-independent rows), so constraint forces do no work:

* a linear term changes by ``c . dP`` and a bilinear one by ``P_a,m . dP_b + P_b,m . dP_a``
  (m: the average of the step's end values), exactly;
* a body-fixed vector changes exactly as ``r_{n+1} - r_n = w x r_m`` (3D, Cayley) and
  ``r_{n+1} - r_n = 2 tan(dtheta/2) k x r_m`` (2D);

so ``G_m`` takes, per vector, the map ``E = [I, -hat(r_m)]`` (3D) or
``[I, sigma(dtheta) k x r_m]`` with ``sigma(x) = tan(x/2) / (x/2)`` (2D) in place of the
Jacobian. End-point schemes (Newmark, statics) use the Jacobian C at the end of the step.

Ties of main-model nodes to modal bodies (:mod:`flexmb.multibody.ties`) are not written in these
terms (their body point moves with the modal coordinates): their rows follow the joints' rows,
they are evaluated in numpy, one dense block per tie, and their triplets follow the joints' in
every ConstraintTerms (fixed row and column arrays as well). :meth:`ConstraintSystem.owner` names
the joint or tie of an equation for messages.

Speed: values, vectors, the terms of :meth:`ConstraintSystem.evaluate`, the augmented Newton
matrix and the joint reactions run compiled kernels (:mod:`flexmb.compiled.constraints`); the
numpy ``reference_*`` methods (with the helpers ``_maps`` ... ``_tangent``) are their
specification, kept for ``tests/test_compiled_constraints.py``. The row and column arrays of
the triplets are fixed per model and computed once.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from flexmb.dofs import DofMap
from flexmb.model import ROTATION_NAMES, ModelError
from flexmb.multibody.joints import SKEW_SUPPORT, Joint, Vector, joint_equations, skew_support_conflict
from flexmb.multibody.ties import Tie, TieSystem
from flexmb.rotations import reference_cayley_resolvent, reference_exp_map, skew


Triplets = tuple[np.ndarray, np.ndarray, np.ndarray]        # rows, columns, values of a sparse matrix
#: values of the time functions kept per system (the oldest dropped first): more than the two kinds
#: (scales, right-hand sides) at the step ends of one chunk of a compiled step loop (128 steps), which
#: evaluates them all before the chunk's steps are recorded at the same times
_TIMED_KEPT = 272


@dataclass
class ConstraintTerms:
    """Constraint quantities at one Newton iterate (global DOF numbering).

    ``phi`` (n_c,) values at the end state; ``force`` (n_dof,) the constraint force term
    ``G^T lambda`` of the residual; as (row, column, value) triplets (duplicates add up):
    ``g`` of G (n_c, n_dof), the force's gradient (mid-point: the discrete one), ``c`` of
    C (n_c, n_dof), the Jacobian of phi, and ``k`` of K (n_dof, n_dof) = d(G^T lambda)/d(increment).
    """

    phi: np.ndarray
    force: np.ndarray
    g: Triplets
    c: Triplets
    k: Triplets
    n_dof: int

    @property
    def G(self) -> sp.csr_matrix:
        return sp.csr_matrix((self.g[2], (self.g[0], self.g[1])), shape=(len(self.phi), self.n_dof))

    @property
    def C(self) -> sp.csr_matrix:
        return sp.csr_matrix((self.c[2], (self.c[0], self.c[1])), shape=(len(self.phi), self.n_dof))

    @property
    def K(self) -> sp.csr_matrix:
        return sp.csr_matrix((self.k[2], (self.k[0], self.k[1])), shape=(self.n_dof, self.n_dof))


def _check_skew_support(joint: Joint, dofs: DofMap) -> None:
    """ModelError if a skew support repeats DOFs fixed globally at its node (also when Model.fix came
    after add_skew_support, which checks the other order) or fixes rotations of a node without."""
    node = joint.b
    rotates = bool(dofs.has_rotations[node])
    names = dofs.model.dof_names(rotates)
    fixed = [d for k, d in enumerate(names) if dofs.free_position[dofs.first[node] + k] < 0]
    why = skew_support_conflict(joint, dofs.model.dim, rotates, fixed)
    if why is not None:
        raise ModelError(why)


def _origin(points: np.ndarray, dim: int) -> np.ndarray:
    """The point the joints' points are measured from (dim,), m: the centre of the bounding box of
    ``points`` (n, dim) (the nodes and the joints' points) when it lies farther from the origin
    than the box's size, else the origin (a model around the origin keeps its arithmetic)."""
    if not len(points):
        return np.zeros(dim)
    low, high = points.min(axis=0), points.max(axis=0)
    centre = 0.5 * (low + high)
    return centre if np.linalg.norm(centre) > np.linalg.norm(high - low) else np.zeros(dim)


def _sigma(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sigma(x) = tan(x/2)/(x/2) and its derivative, with series near 0 (part of
    :meth:`ConstraintSystem.reference_evaluate`)."""
    x = np.asarray(x, dtype=float)
    small = np.abs(x) < 1e-4
    xs = np.where(small, 1.0, x)
    t = np.tan(0.5 * xs)
    s = np.where(small, 1.0 + x**2 / 12.0, 2.0 * t / xs)
    ds = np.where(small, x / 6.0, (1.0 + t**2) / xs - 2.0 * t / xs**2)
    return s, ds


class ConstraintSystem:
    """All joints of a model compiled into term arrays (built once by the assembly), and the ties of
    nodes to modal bodies (:mod:`flexmb.multibody.ties`) as the rows after the joints' rows."""

    def __init__(self, joints: list[Joint], dofs: DofMap, ties: Sequence[Tie] = ()) -> None:
        model = dofs.model
        self.dim = dim = model.dim
        self.n_dof = dofs.n_dof
        self.joints = joints
        self.n_rot = len(ROTATION_NAMES[dim])
        vectors: dict[Vector, int] = {}
        lin, bil, dof_terms, rhs_const, rhs_funs = [], [], [], [], []
        self.joint_rows: list[slice] = []
        row = 0
        for joint in joints:
            start = row
            if joint.kind == SKEW_SUPPORT:
                _check_skew_support(joint, dofs)
            for eq in joint_equations(joint, model.coordinates, dim, dofs.has_rotations):
                for v, c in eq.linear:
                    lin.append((row, self._vector_index(v, vectors, dofs, joint), np.asarray(c, dtype=float)))
                for va, vb, s in eq.bilinear:
                    bil.append((row, self._vector_index(va, vectors, dofs, joint),
                                self._vector_index(vb, vectors, dofs, joint), s))
                for node, name, e in eq.dofs:
                    if node >= 0:
                        if not dofs.has_rotations[node] and name in ROTATION_NAMES[dim]:
                            raise ModelError(f"joint {joint.name!r}: node {node} has no rotation DOF "
                                             f"{name!r} (attach a beam or make it a rigid body)")
                        dof_terms.append((row, dofs.index(node, name), float(e)))
                if callable(eq.rhs):
                    rhs_const.append(0.0)
                    rhs_funs.append((row, eq.rhs))
                else:
                    rhs_const.append(float(eq.rhs))
                row += 1
            self.joint_rows.append(slice(start, row))
        #: the ties' equations (evaluated in numpy), rows ``n_joint_rows`` .. n - 1
        self.n_joint_rows = row
        self.tie_system = TieSystem(list(ties), dofs, row)
        self.ties = self.tie_system.ties
        self.tie_rows = self.tie_system.rows
        rhs_const += [0.0] * self.tie_system.n
        self.n = row + self.tie_system.n
        order = sorted(vectors, key=vectors.get)
        self.v_node = np.array([v.node for v in order], dtype=np.int64)                   # (n_v,)
        self.v_d = np.array([v.d for v in order], dtype=float).reshape(-1, dim)         # (n_v, dim)
        self.v_point = np.array([v.point for v in order], dtype=bool)
        nodes = np.maximum(self.v_node, 0)
        ground = self.v_node < 0
        self.v_rotates = ~ground & dofs.has_rotations[nodes]
        # global DOFs of each vector's node: translations (point only), then rotations; -1 none
        cols = dofs.first[nodes][:, None] + np.arange(dim + self.n_rot)[None, :]
        cols[ground] = -1
        cols[~self.v_point, :dim] = -1
        cols[~self.v_rotates, dim:] = -1
        self.v_cols = cols                                                               # (n_v, dim + n_rot)
        # points are taken relative to an origin near the model: every joint equation holds points
        # in differences (p_B - p_A, with the same partner), which the shift leaves unchanged, and
        # their round-off is then that of the model's size, not of its distance from the origin
        # (a pendulum hung 1e4 m away converged by cut-backs, its residual stalled at 2e-10)
        self.origin = _origin(np.concatenate([model.coordinates.reshape(-1, dim)]
                                             + [np.reshape(j.at[:dim], (1, dim)) for j in joints]), dim)  # (dim,) m
        self.v_X = np.where(ground[:, None], 0.0, model.coordinates[nodes] - self.origin)  # (n_v, dim)
        ground_points = ground & self.v_point
        self.v_d[ground_points] -= self.origin
        self.l_row = np.array([t[0] for t in lin], dtype=np.int64)
        self.l_vec = np.array([t[1] for t in lin], dtype=np.int64)
        self.l_c = np.array([t[2] for t in lin], dtype=float).reshape(-1, dim)
        self.b_row = np.array([t[0] for t in bil], dtype=np.int64)
        self.b_a = np.array([t[1] for t in bil], dtype=np.int64)
        self.b_b = np.array([t[2] for t in bil], dtype=np.int64)
        self._b_scale = [t[3] for t in bil]
        self.b_timed = any(callable(s) for s in self._b_scale)
        self.d_row = np.array([t[0] for t in dof_terms], dtype=np.int64)
        self.d_dof = np.array([t[1] for t in dof_terms], dtype=np.int64)
        self.d_c = np.array([t[2] for t in dof_terms], dtype=float)
        self.rhs_const = np.array(rhs_const, dtype=float)
        self._rhs_funs = rhs_funs
        self.rheonomic = bool(rhs_funs) or self.b_timed
        self._constant_scales = None if self.b_timed else self._scale_values(0.0)
        self._timed_values: dict[tuple[str, float], np.ndarray] = {}
        self._pattern()
        self._augmented_cache: tuple | None = None

    def _pattern(self) -> None:
        """Rows and columns of the triplets of G and C (the same) and of K, in the order the
        kernel (and ``reference_evaluate``) produces their values; they do not change."""
        dim = self.dim
        rows = np.concatenate([self.l_row, self.b_row, self.b_row])
        vecs = np.concatenate([self.l_vec, self.b_a, self.b_b])
        cols = self.v_cols[vecs]
        ok = cols >= 0
        self._g_rows = np.concatenate([np.broadcast_to(rows[:, None], cols.shape)[ok], self.d_row])
        self._g_cols = np.concatenate([cols[ok], self.d_dof])
        k_rows, k_cols = [], []
        for va, vb in ((self.b_a, self.b_b), (self.b_b, self.b_a)):
            ca, cb = self.v_cols[va][:, :, None], self.v_cols[vb][:, None, :]
            shape = (len(va), ca.shape[1], cb.shape[2])
            ok = (ca >= 0) & (cb >= 0)
            k_rows.append(np.broadcast_to(ca, shape)[ok])
            k_cols.append(np.broadcast_to(cb, shape)[ok])
        rc = self.v_cols[self.v_rotates, dim:]                                          # (n_rv, n_rot)
        k_rows.append(np.repeat(rc, self.n_rot, axis=1).ravel())
        k_cols.append(np.tile(rc, (1, self.n_rot)).ravel())
        self._k_rows = np.concatenate(k_rows).astype(np.int64)
        self._k_cols = np.concatenate(k_cols).astype(np.int64)
        # the joints' triplets come first (the compiled kernel's output), then the ties'
        self._n_joint_g, self._n_joint_k = self._g_rows.size, self._k_rows.size
        if self.ties:
            ts = self.tie_system
            self._g_rows = np.concatenate([self._g_rows, ts.g_rows])
            self._g_cols = np.concatenate([self._g_cols, ts.g_cols])
            self._k_rows = np.concatenate([self._k_rows, ts.k_rows])
            self._k_cols = np.concatenate([self._k_cols, ts.k_cols])
        self._kernel_arrays = (np.ascontiguousarray(self.v_d), np.ascontiguousarray(self.v_X, dtype=float),
                               np.ascontiguousarray(self.v_cols, dtype=np.int64), self.v_point, self.v_rotates,
                               self.l_row, self.l_vec, np.ascontiguousarray(self.l_c), self.b_row, self.b_a,
                               self.b_b, self.d_row, self.d_dof, self.d_c)

    def _vector_index(self, v: Vector, vectors: dict[Vector, int], dofs: DofMap, joint: Joint) -> int:
        if v.node >= 0 and not dofs.has_rotations[v.node] and (not v.point or np.any(np.abs(v.d) > 0)):
            what = "an offset point" if v.point else "a direction"
            raise ModelError(f"joint {joint.name!r} needs {what} fixed to node {v.node}, which has no "
                             "rotations (connect a rigid body or a beam node, or put the joint at the node)")
        return vectors.setdefault(v, len(vectors))

    # ------------------------------------------------------------------ values
    def scales(self, t: float) -> np.ndarray:
        """Coefficients s(t) of the bilinear terms (n_b,); read-only (kept for the last times
        asked: Newton asks for the same step ends at every iteration)."""
        if self._constant_scales is not None:
            return self._constant_scales
        return self._timed("scales", t, self._scale_values)

    def _scale_values(self, t: float) -> np.ndarray:
        return np.array([s(t) if callable(s) else s for s in self._b_scale], dtype=float)

    def rhs(self, t: float) -> np.ndarray:
        """Right-hand sides f(t) (n_c,); read-only, kept like :meth:`scales`."""
        if not self._rhs_funs:
            return self.rhs_const
        return self._timed("rhs", t, self._rhs_values)

    def _rhs_values(self, t: float) -> np.ndarray:
        out = self.rhs_const.copy()
        for r, f in self._rhs_funs:
            out[r] = float(f(t))
        return out

    def _timed(self, what: str, t: float, compute) -> np.ndarray:
        """Values of the time functions at t, kept for the last :data:`_TIMED_KEPT` times asked (a
        step's two ends in Newton; a chunk's step ends, asked again when its steps are recorded)."""
        key = (what, float(t))
        kept = self._timed_values
        out = kept.get(key)
        if out is None:
            if len(kept) >= _TIMED_KEPT:
                del kept[next(iter(kept))]                 # the oldest (dicts keep their insertion order)
            out = kept[key] = compute(t)
            out.flags.writeable = False
        return out

    def vectors(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Vector values P (n_v, dim) and their body-fixed parts r = R d (n_v, dim) at u."""
        from flexmb.compiled import constraints as kernels, kernel_array

        a = self._kernel_arrays
        return kernels.vectors(kernel_array(u), *a[:5])

    def values(self, u: np.ndarray, t: float) -> np.ndarray:
        """Phi(u, t) (n_c,)."""
        return self._values(u, self.scales(t), self.rhs(t))

    def time_values(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """The bilinear scales s(t) (n_b,) and right-hand sides f(t) (n_c,), read-only (kept like
        :meth:`scales`): what Phi and the joint reactions take of time."""
        return self.scales(t), self.rhs(t)

    def _values(self, u: np.ndarray, s: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        """Phi (n_c,) at u for the scales s (n_b,) and right-hand sides rhs (n_c,) of a time."""
        from flexmb.compiled import constraints as kernels, kernel_array

        u = kernel_array(u)
        a = self._kernel_arrays
        P = kernels.vectors(u, *a[:5])[0]
        phi = kernels.values(P, u, kernel_array(s), kernel_array(rhs), *a[5:])
        if self.ties:
            phi[self.n_joint_rows:] = self.tie_system.values(u)
        return phi

    def time_derivative(self, u: np.ndarray, t: float, h: float = 1e-6) -> np.ndarray:
        """dPhi/dt at fixed u (n_c,), by a central difference of the time functions."""
        if not self.rheonomic:
            return np.zeros(self.n)
        return (self.values(u, t + h) - self.values(u, t - h)) / (2.0 * h)

    def evaluate(self, u1: np.ndarray, t1: float, lam: np.ndarray, u0: np.ndarray | None = None,
                 d: np.ndarray | None = None, t0: float | None = None) -> ConstraintTerms:
        """Constraint terms at the end state u1 for multipliers lam (n_c,), by the compiled kernel
        (:func:`flexmb.compiled.constraints.evaluate`; specification :meth:`reference_evaluate`).

        End-point form (Newmark, statics): ``u0 = None``; increments are spins. Mid-point form:
        the start state u0, the step increment d (n_dof,) of :meth:`MidPoint.increment`
        (Cayley parameters at 3D rotations) and the start time t0.
        """
        s1 = self.scales(t1)
        sm = 0.5 * (self.scales(t0) + s1) if u0 is not None and self.b_timed else s1
        return self._terms(u1, lam, s1, sm, self.rhs(t1), u0, d)

    def _terms(self, u1: np.ndarray, lam: np.ndarray, s1: np.ndarray, sm: np.ndarray, rhs: np.ndarray,
               u0: np.ndarray | None = None, d: np.ndarray | None = None) -> ConstraintTerms:
        """:meth:`evaluate` with the time functions' values given: the bilinear scales s1 at the end
        and sm at mid-step (n_b,) and the right-hand sides (n_c,) at the end."""
        from flexmb.compiled import constraints as kernels, kernel_array

        u1, lam = kernel_array(u1), kernel_array(lam)
        mid = u0 is not None
        if mid:
            P0, r0 = self._start_vectors(u0)
            d = kernel_array(d)
        else:
            P0 = r0 = self._no_vectors
            d = u1
        # the kept time values are read-only: kernel_array keeps the kernel to one compilation
        phi, force, g, c, k = kernels.evaluate(mid, u1, P0, r0, d, lam, kernel_array(s1), kernel_array(sm),
                                               kernel_array(rhs), self.n_dof, self._n_joint_g, self._n_joint_k,
                                               *self._kernel_arrays)
        if self.ties:
            phi, force, g, c, k = self._with_ties((phi, force, g, c, k), u1, lam, u0 if mid else None)
        C = (self._g_rows, self._g_cols, c)
        return ConstraintTerms(phi, force, (self._g_rows, self._g_cols, g) if mid else C, C,
                               (self._k_rows, self._k_cols, k), self.n_dof)

    def _with_ties(self, joint_terms: tuple[np.ndarray, ...], u1: np.ndarray, lam: np.ndarray,
                   u0: np.ndarray | None) -> tuple[np.ndarray, ...]:
        """The joints' (phi, force, g, c, k) values completed by the ties' rows and triplets."""
        phi, force, g, c, k = joint_terms
        tie = self.tie_system.evaluate(u1, lam[self.n_joint_rows:], u0, self.n_dof)
        phi = phi.copy()
        phi[self.n_joint_rows:] = tie[0]
        return (phi, force + tie[1], np.concatenate([g, tie[2]]), np.concatenate([c, tie[3]]),
                np.concatenate([k, tie[4]]))

    def owner(self, row: int) -> str:
        """The joint or tie that constraint equation ``row`` belongs to, as messages name it:
        ``joint 'revolute 0'`` or ``tie of node 7 to modal body 'arm' node 20``."""
        if row >= self.n_joint_rows:
            return next(t.label for t, r in zip(self.ties, self.tie_rows) if r.start <= row < r.stop)
        return next(f"joint {j.name!r}" for j, r in zip(self.joints, self.joint_rows) if r.start <= row < r.stop)

    def owner_rows(self, row: int) -> slice:
        """The rows of the joint or tie that equation ``row`` belongs to."""
        return next(r for r in self.joint_rows + self.tie_rows if r.start <= row < r.stop)

    @property
    def _no_vectors(self) -> np.ndarray:
        return np.zeros((0, self.dim))

    def _start_vectors(self, u0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`vectors` at a step's start state, kept while Newton iterates on the step."""
        key = u0.tobytes()
        if getattr(self, "_start_key", None) != key:
            self._start_key, self._start = key, self.vectors(u0)
        return self._start

    # ------------------------------------------------------- numpy specification
    def reference_rotated(self, u: np.ndarray) -> np.ndarray:
        """Body-fixed parts r = R d of every vector (n_v, dim) at the state u; part of the
        numpy specification (``reference_*``) of the compiled kernels, kept for their tests."""
        r = self.v_d.copy()
        rot = self.v_rotates
        if self.dim == 3:
            if np.any(rot):
                r[rot] = np.einsum("vij,vj->vi", reference_exp_map(u[self.v_cols[rot, 3:]]), self.v_d[rot])
        elif np.any(rot):
            th = u[self.v_cols[rot, 2]]
            c, s = np.cos(th), np.sin(th)
            d = self.v_d[rot]
            r[rot] = np.c_[c * d[:, 0] - s * d[:, 1], s * d[:, 0] + c * d[:, 1]]
        return r

    def reference_vectors(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Specification of :meth:`vectors` (numpy), kept for the tests."""
        r = self.reference_rotated(u)
        x = self.v_X + np.where(self.v_cols[:, :self.dim] >= 0, u[np.maximum(self.v_cols[:, :self.dim], 0)], 0.0)
        return np.where(self.v_point[:, None], x + r, r), r

    def reference_values(self, u: np.ndarray, t: float) -> np.ndarray:
        """Specification of :meth:`values` (numpy), kept for the tests."""
        P = self.reference_vectors(u)[0]
        phi = self._phi(P, u, self.scales(t), t)
        if self.ties:
            phi[self.n_joint_rows:] = self.tie_system.values(u)
        return phi

    def _phi(self, P: np.ndarray, u: np.ndarray, s: np.ndarray, t: float) -> np.ndarray:
        n = self.n
        # (np.bincount of no terms gives integers: start from a float array)
        phi = np.zeros(n)
        phi += np.bincount(self.l_row, np.einsum("ki,ki->k", self.l_c, P[self.l_vec]), minlength=n)
        phi += np.bincount(self.b_row, s * np.einsum("ki,ki->k", P[self.b_a], P[self.b_b]), minlength=n)
        phi += np.bincount(self.d_row, self.d_c * u[self.d_dof], minlength=n)
        return phi - self.rhs(t)

    # ------------------------------------------------------------ derivatives
    def _maps(self, r: np.ndarray, rot_block: np.ndarray) -> np.ndarray:
        """Per vector the (dim, dim + n_rot) map from its node's increment to the vector's change."""
        n_v, dim = r.shape
        M = np.zeros((n_v, dim, dim + self.n_rot))
        M[self.v_point, :, :dim] = np.eye(dim)
        M[:, :, dim:] = rot_block
        return M

    def _rotation_blocks(self, r: np.ndarray) -> np.ndarray:
        """dr / dtheta for spins (3D: -hat(r)) or planar angles (2D: k x r), (n_v, dim, n_rot)."""
        if self.dim == 3:
            return -skew(r)
        return np.stack([-r[:, 1], r[:, 0]], axis=1)[:, :, None]

    def _gradients(self, P: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """dPhi_row/dP_vector for every term: rows (k,), vectors (k,), g (k, dim)."""
        rows = np.concatenate([self.l_row, self.b_row, self.b_row])
        vecs = np.concatenate([self.l_vec, self.b_a, self.b_b])
        g = np.concatenate([self.l_c, s[:, None] * P[self.b_b], s[:, None] * P[self.b_a]]).reshape(-1, self.dim)
        return rows, vecs, g

    def _matrix(self, rows: np.ndarray, vecs: np.ndarray, g: np.ndarray, M: np.ndarray) -> Triplets:
        """Sum over terms of g^T M_vector placed at (row, the vector's node DOFs), plus DOF terms."""
        vals = np.einsum("ki,kij->kj", g, M[vecs])                                  # (k, dim + n_rot)
        cols = self.v_cols[vecs]
        ok = cols >= 0
        r = np.broadcast_to(rows[:, None], cols.shape)[ok]
        return (np.concatenate([r, self.d_row]), np.concatenate([cols[ok], self.d_dof]),
                np.concatenate([vals[ok], self.d_c]))

    def _transpose_times(self, m: Triplets, lam: np.ndarray) -> np.ndarray:
        """M^T lambda (n_dof,) of a matrix given by triplets."""
        return np.bincount(m[1], m[2] * lam[m[0]], minlength=self.n_dof).astype(float)

    def reference_evaluate(self, u1: np.ndarray, t1: float, lam: np.ndarray, u0: np.ndarray | None = None,
                           d: np.ndarray | None = None, t0: float | None = None) -> ConstraintTerms:
        """Specification of :meth:`evaluate` in numpy (with the helpers ``_maps`` ... ``_tangent``
        below), kept for the tests of the compiled kernel; the same arguments and results.
        """
        dim = self.dim
        P1, r1 = self.reference_vectors(u1)
        s1 = self.scales(t1)
        phi = self._phi(P1, u1, s1, t1)
        mid = u0 is not None
        if not mid:
            M = self._maps(r1, self._rotation_blocks(r1))
            rows, vecs, g = self._gradients(P1, s1)
            C = self._matrix(rows, vecs, g, M)
            K = self._tangent(rows, vecs, g, s1, lam, M, M, 1.0, r1, None)
            return self._reference_terms(phi, self._transpose_times(C, lam), C, C, K, u1, lam, None)
        P0, r0 = self.reference_vectors(u0)
        Pm, rm = 0.5 * (P0 + P1), 0.5 * (r0 + r1)
        sm = 0.5 * (self.scales(t0) + s1) if self.b_timed else s1
        rot = self.v_rotates
        if dim == 3:
            w = np.zeros((len(rm), 3))
            w[rot] = d[self.v_cols[rot, 3:]]
            end = np.zeros((len(rm), 3, 3))
            end[rot] = -reference_cayley_resolvent(w[rot]) @ skew(rm[rot])                  # dr_{n+1}/dw
            discrete = -skew(rm)                                                  # r_{n+1} - r_n = w x r_m
            extra = w
        else:
            dth = np.zeros(len(rm))
            dth[rot] = d[self.v_cols[rot, 2]]
            sig, dsig = _sigma(dth)
            k_rm = np.stack([-rm[:, 1], rm[:, 0]], axis=1)
            end = np.stack([-r1[:, 1], r1[:, 0]], axis=1)[:, :, None]
            discrete = (sig[:, None] * k_rm)[:, :, None]
            extra = (sig, dsig, k_rm)
        end[~rot] = 0.0
        discrete = np.where(rot[:, None, None], discrete, 0.0)
        M1 = self._maps(r1, end)
        E = self._maps(rm, discrete)
        rows1, vecs1, g1 = self._gradients(P1, s1)
        C = self._matrix(rows1, vecs1, g1, M1)
        rows, vecs, gm = self._gradients(Pm, sm)
        G = self._matrix(rows, vecs, gm, E)
        K = self._tangent(rows, vecs, gm, sm, lam, E, M1, 0.5, r1, (rm, extra))
        return self._reference_terms(phi, self._transpose_times(G, lam), G, C, K, u1, lam, u0)

    def _reference_terms(self, phi: np.ndarray, force: np.ndarray, G: Triplets, C: Triplets, K: Triplets,
                         u1: np.ndarray, lam: np.ndarray, u0: np.ndarray | None) -> ConstraintTerms:
        """ConstraintTerms of the joints' reference triplets, completed by the ties'."""
        if not self.ties:
            return ConstraintTerms(phi, force, G, C, K, self.n_dof)
        phi, force, g, c, k = self._with_ties((phi, force, G[2], C[2], K[2]), u1, lam, u0)
        ts = self.tie_system
        rows, cols = np.concatenate([G[0], ts.g_rows]), np.concatenate([G[1], ts.g_cols])
        return ConstraintTerms(phi, force, (rows, cols, g), (rows, cols, c),
                               (np.concatenate([K[0], ts.k_rows]), np.concatenate([K[1], ts.k_cols]), k), self.n_dof)

    def _tangent(self, rows: np.ndarray, vecs: np.ndarray, g: np.ndarray, s: np.ndarray, lam: np.ndarray,
                 E: np.ndarray, M: np.ndarray, half: float, r1: np.ndarray, mid) -> Triplets:
        """d(G^T lambda)/d(increment) at fixed lambda, (n_dof, n_dof): the bilinear terms' coupling
        (g_a = s P_b moves with b's increment; P_m moves by half of it in the mid-point form) and
        the change of each vector's rotation map with its node's increment at fixed force f."""
        dim = self.dim
        entries_r, entries_c, entries_v = [], [], []

        def add(cols_a: np.ndarray, cols_b: np.ndarray, blocks: np.ndarray) -> None:
            ok = (cols_a[:, :, None] >= 0) & (cols_b[:, None, :] >= 0)
            entries_r.append(np.broadcast_to(cols_a[:, :, None], blocks.shape)[ok])
            entries_c.append(np.broadcast_to(cols_b[:, None, :], blocks.shape)[ok])
            entries_v.append(blocks[ok])

        if self.b_row.size:
            weight = half * lam[self.b_row] * s
            for va, vb in ((self.b_a, self.b_b), (self.b_b, self.b_a)):
                blocks = weight[:, None, None] * np.einsum("kia,kib->kab", E[va], M[vb])
                add(self.v_cols[va], self.v_cols[vb], blocks)
        # change of the rotation part of E with the node's own increment, at fixed force f
        f = np.zeros((len(self.v_node), dim))
        np.add.at(f, vecs, lam[rows][:, None] * g)
        rot = self.v_rotates
        if np.any(rot):
            cols = self.v_cols[rot, dim:]
            if dim == 3:
                if mid is None:
                    blocks = skew(f[rot]) @ skew(r1[rot])
                else:
                    rm, w = mid
                    blocks = 0.5 * skew(f[rot]) @ reference_cayley_resolvent(w[rot]) @ skew(rm[rot])
            else:
                if mid is None:
                    blocks = -np.einsum("vi,vi->v", f[rot], r1[rot])[:, None, None]
                else:
                    rm, (sig, dsig, k_rm) = mid
                    blocks = (dsig[rot] * np.einsum("vi,vi->v", k_rm[rot], f[rot])
                              - 0.5 * sig[rot] * np.einsum("vi,vi->v", r1[rot], f[rot]))[:, None, None]
            add(cols, cols, blocks)
        if not entries_v:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros(0)
        return np.concatenate(entries_r), np.concatenate(entries_c), np.concatenate(entries_v)

    def augmented(self, ct: ConstraintTerms, jacobian: sp.csc_matrix, free_position: np.ndarray,
                  lam_scale: float, kappa: float) -> sp.csc_matrix:
        """Newton matrix [[J + K, G^T lam_scale], [kappa C, 0]] on the free DOFs and the
        multipliers, from the free-free FE part ``jacobian`` (n_f, n_f).

        Its sparsity pattern and the position of every FE entry and every triplet in its data
        array are computed once (:meth:`_augmented_pattern`); each call only adds the values
        (:func:`flexmb.compiled.constraints.augmented_data`) and puts them into one CSC object
        kept with the pattern, as :meth:`Assembly.jacobian_matrix` does (building a scipy.sparse
        matrix checks its arrays and costs more than the values): the object changes with the
        next call; copy it to keep it.
        """
        from flexmb.compiled import constraints as kernels

        jacobian = jacobian if jacobian.format == "csc" else jacobian.tocsc()
        matrix, fe_pos, k_pos, g_pos, c_pos = self._augmented_pattern(ct, jacobian, free_position)
        matrix.data = kernels.augmented_data(matrix.indices.size, np.ascontiguousarray(jacobian.data, dtype=float),
                                             fe_pos, ct.k[2], k_pos, ct.g[2], g_pos, float(lam_scale), ct.c[2],
                                             c_pos, float(kappa))
        return matrix

    def _augmented_pattern(self, ct: ConstraintTerms, jacobian: sp.csc_matrix, free_position: np.ndarray):
        """The augmented matrix (CSC, values to be filled) and the data positions of the FE
        entries and of the K, G and C triplets (-1 where a triplet's DOF is prescribed); computed
        for the first FE pattern and this system's triplets, then reused while they stay the same."""
        cache = self._augmented_cache
        static = ct.k[0] is self._k_rows and ct.g[0] is self._g_rows and ct.c[0] is self._g_rows
        if static and cache is not None and cache[0] is free_position:
            indptr, indices = cache[1], cache[2]
            if ((indptr is jacobian.indptr and indices is jacobian.indices)
                    or (indptr.shape == jacobian.indptr.shape and indices.shape == jacobian.indices.shape
                        and np.array_equal(indptr, jacobian.indptr) and np.array_equal(indices, jacobian.indices))):
                return cache[3]
        nf = jacobian.shape[0]
        n = nf + self.n
        fpos = free_position
        fe_rows = jacobian.indices.astype(np.int64)
        fe_cols = np.repeat(np.arange(nf, dtype=np.int64), np.diff(jacobian.indptr))
        kr, kc = fpos[ct.k[0]], fpos[ct.k[1]]
        k_ok = (kr >= 0) & (kc >= 0)
        gc = fpos[ct.g[1]]
        g_ok = gc >= 0
        cc = fpos[ct.c[1]]
        c_ok = cc >= 0
        rows = np.concatenate([fe_rows, kr[k_ok], gc[g_ok], nf + ct.c[0][c_ok]])
        cols = np.concatenate([fe_cols, kc[k_ok], nf + ct.g[0][g_ok], cc[c_ok]])
        unique, inverse = np.unique(cols * n + rows, return_inverse=True)
        inverse = inverse.ravel().astype(np.int64)
        split = np.cumsum([fe_rows.size, int(k_ok.sum()), int(g_ok.sum())])
        positions = []
        for ok, part in zip((k_ok, g_ok, c_ok), np.split(inverse, split)[1:]):
            pos = np.full(ok.size, -1, dtype=np.int64)
            pos[ok] = part
            positions.append(pos)
        indices = (unique % n).astype(np.int32)
        indptr = np.concatenate([[0], np.cumsum(np.bincount(unique // n, minlength=n))]).astype(np.int32)
        matrix = sp.csc_matrix((np.zeros(indices.size), indices, indptr), shape=(n, n))
        pattern = (matrix, inverse[:split[0]], *positions)
        if static:
            self._augmented_cache = (free_position, jacobian.indptr, jacobian.indices, pattern)
        return pattern

    # ---------------------------------------------------------------- reactions
    def joint_reactions(self, u: np.ndarray, lam: np.ndarray, t: float, dofs: DofMap
                        ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per joint the force (dim,) and moment (3D (3,), 2D (1,)) that the joint exerts on side B
        (on side A, negated, if B is the ground), reduced to the joint point and written in the
        joint frame carried by side A (N, N m), at the state u with the multipliers lam (n_c,).

        In the mid-point scheme the multipliers are the step's average constraint forces (they
        act at the middle of the step); a mechanism without free motion shows them alternating
        about the mid-step value from step to step, so average two steps for the forces at a
        step's end.
        """
        if not self.joints:
            return []
        return list(zip(*self.recorded_reactions(u, lam, self.time_values(t), dofs)[1:]))

    def recorded_reactions(self, u: np.ndarray, lam: np.ndarray, at: tuple[np.ndarray, np.ndarray], dofs: DofMap
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """What a recorded step stores of a model with joints: Phi (n_c,) and the joints' forces
        (n_joints, dim) and moments (n_joints, 3 or 1) of :meth:`joint_reactions`, at the state u
        with the multipliers lam (n_c,) and the time functions' values ``at`` of
        :meth:`time_values` (the same values as :meth:`values` and :meth:`joint_reactions` at that
        time); without ties Phi is the one the reactions' constraint terms hold (the same kernel)."""
        from flexmb.compiled import constraints as kernels, kernel_array

        row_joint, node, sign, first, width, lever0, frames, start_b, start_a = self._reaction_layout(dofs)
        s, rhs = at
        terms = self._terms(u, np.zeros(self.n), s, s, rhs)
        rows, cols, vals = (a[:self._n_joint_g] for a in terms.c)
        forces, moments = kernels.joint_reactions(rows, cols, vals, kernel_array(lam), kernel_array(u), row_joint,
                                                  first, width, sign, lever0, frames, start_b, start_a)
        # with ties the terms' tie rows come from the ties' terms, values' from their values
        return (self._values(u, s, rhs) if self.ties else terms.phi), forces, moments

    def tie_reactions(self, lam: np.ndarray, u: np.ndarray | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per tie the force (dim,) and moment ((1,) 2D or (3,) 3D for a weld, (0,) for a pin) that it
        exerts on its node n, global axes (N, N m), from the multipliers lam (n,) (the body gets the
        opposite; the mid-point multipliers are the step's averages, as in :meth:`joint_reactions`).
        The state u is needed for 3D welds (:meth:`~flexmb.multibody.ties.TieSystem.reactions`)."""
        return self.tie_system.reactions(lam[self.n_joint_rows:], u)

    def reference_joint_reactions(self, u: np.ndarray, lam: np.ndarray, t: float, dofs: DofMap
                                  ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Specification of :meth:`joint_reactions` (numpy), kept for the tests."""
        dim, n_rot = self.dim, self.n_rot
        row_joint, node, sign, first, width, lever0, frames = self._reaction_layout(dofs)[:7]
        rows, cols, vals = (a[:self._n_joint_g] for a in self.reference_evaluate(u, t, np.zeros(self.n)).c)
        # generalized force of each joint on its side's node DOFs: -(C^T lambda) there
        joint_of = row_joint[rows]
        local = cols - first[joint_of]
        ok = (local >= 0) & (local < width[joint_of])
        out = np.zeros((len(self.joints), dim + n_rot))
        np.add.at(out, (joint_of[ok], local[ok]), -vals[ok] * lam[rows][ok])
        out *= sign[:, None]
        f, m = out[:, :dim], out[:, dim:]
        lever = np.einsum("jik,jk->ji", self._reference_node_rotations(u, node, dofs), lever0)  # (n_j, dim)
        carried = self._reference_node_rotations(u, np.array([j.a for j in self.joints]), dofs) @ frames
        if dim == 3:
            m = np.einsum("jik,ji->jk", carried, m - np.cross(lever, f))
        else:
            m = m - (lever[:, 0] * f[:, 1] - lever[:, 1] * f[:, 0])[:, None]
        f = np.einsum("jik,ji->jk", carried, f)
        return list(zip(f, m))

    def _reaction_layout(self, dofs: DofMap) -> tuple[np.ndarray, ...]:
        """Per constraint row its joint; per joint the node of the side the reaction acts on, the
        sign (-1: side A, B being the ground), that node's first DOF and DOF count, the lever
        from the node to the joint point in the reference orientation, the joint frame, and the
        first rotation DOF of the side's node and of side A's node (-1: none, or the ground)."""
        if getattr(self, "_reactions", None) is None:
            dim = self.dim
            row_joint = np.repeat(np.arange(len(self.joints)), [r.stop - r.start for r in self.joint_rows])
            node = np.array([j.b if j.b >= 0 else j.a for j in self.joints], dtype=np.int64)
            sign = np.array([1.0 if j.b >= 0 else -1.0 for j in self.joints])
            width = dim + self.n_rot * dofs.has_rotations[node]
            lever0 = np.array([j.at[:dim] for j in self.joints]).reshape(-1, dim) - dofs.model.coordinates[node]
            frames = np.array([j.frame[:dim, :dim] for j in self.joints]).reshape(-1, dim, dim)
            def rotation_start(nodes: np.ndarray) -> np.ndarray:
                turns = (nodes >= 0) & dofs.has_rotations[np.maximum(nodes, 0)]
                return np.where(turns, dofs.first[np.maximum(nodes, 0)] + dim, -1).astype(np.int64)

            a = np.array([j.a for j in self.joints], dtype=np.int64)
            self._reactions = (row_joint, node, sign, dofs.first[node].astype(np.int64), width.astype(np.int64),
                               np.ascontiguousarray(lever0, dtype=float), np.ascontiguousarray(frames, dtype=float),
                               rotation_start(node), rotation_start(a))
        return self._reactions

    def _reference_node_rotations(self, u: np.ndarray, nodes: np.ndarray, dofs: DofMap) -> np.ndarray:
        """Rotation matrices (n, dim, dim) of nodes (n,) (identity without rotations or for -1,
        the ground); part of :meth:`reference_joint_reactions`."""
        dim = self.dim
        R = np.tile(np.eye(dim), (len(nodes), 1, 1))
        turns = (nodes >= 0) & dofs.has_rotations[np.maximum(nodes, 0)]
        start = dofs.first[nodes[turns]] + dim
        if dim == 3:
            R[turns] = reference_exp_map(u[start[:, None] + np.arange(3)])
        else:
            c, s = np.cos(u[start]), np.sin(u[start])
            R[turns] = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)
        return R
