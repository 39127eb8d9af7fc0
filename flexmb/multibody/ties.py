"""Ties of main-model nodes to interface nodes of modal bodies (issue 16, item 1), 2D.

A tie makes a node n of the main model move with FE node i of a modal body
(:class:`~flexmb.cms.floating_frame.ModalBody`, frame node f with the DOFs (r, theta) and the modal
coordinates q): joints, attachments, supports and loads then act at the body's interface node
through n. The node is placed at the body node's reference position, x_n = X_f + X_i at u = 0.
Equations (body frame -> global by A(theta), the frame's rotation):

    phi_t = x_n - r - A(theta) a(q) = 0                (2 rows),   a(q) = X_i + U q + w(q)
    phi_r = theta_n - theta - psi(q) = 0              (1 row, if node n carries a rotation DOF)

with U (2, n_m) and Psi (n_m,) the rows of the body's basis Phi at node i's translations and
rotation, psi(q) = Psi q + w_r(q), and the second-order displacements of the interface-force cases
(:func:`~flexmb.cms.modal_body.interface_geometric_stiffness`, with the body's ``stiffening``)

    w_a(q) = -1/2 q^T K_F,a q     (a = x, y, and the rotation r),

so that the tie force does the work lambda . A w(q) and puts the run-time scaled interface-force
geometric stiffness (A^T lambda)_a K_F,a q into the modal equations. A node without a rotation
DOF is pinned to the body node (no moment passes), a node with one (a beam or rigid body there)
is welded to it (the body node must then have a rotation DOF), as :meth:`Model.attach` does.

Multipliers lambda = (lambda_t, lambda_r); the tie force on node n is -lambda (global axes), the
force on the body is +lambda at node i (body frame: A^T lambda_t).

End-point form (Newmark, statics, linearization): the Jacobian C = d phi/du and
K = d(C^T lambda)/du at fixed lambda (symmetric). Mid-point form (energy conservation with
multipliers): a discrete gradient G_m with G_m d = phi(u1) - phi(u0) exactly for the step increment
d = u1 - u0 (2D: all DOFs additive), from

    A1 a1 - A0 a0 = Abar (a1 - a0) + (A1 - A0) abar,    Abar = (A0 + A1)/2, abar = (a0 + a1)/2,
    A1 - A0 = s(dtheta) dtheta A'(theta_m),             s(x) = sin(x/2)/(x/2), theta_m = (theta0 + theta1)/2,
    w(q1) - w(q0) = w'(q_m) dq                          (w quadratic, q_m = (q0 + q1)/2),

so the tie force G_m^T lambda does no work over a step whose both ends satisfy the tie; its
tangent K = d(G_m^T lambda)/du1 (non-symmetric). All ties are evaluated in numpy, one dense block
per tie (a handful of rows); the row and column arrays are fixed per model.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from flexmb.checks import ModelError
from flexmb.rotations import sinc, sinc_derivative

if TYPE_CHECKING:
    from flexmb.cms.floating_frame import ModalBody
    from flexmb.dofs import DofMap

#: turns a planar vector by +90 degrees: J a = e_z x a, and A'(theta) = J A(theta)
_J = np.array([[0.0, -1.0], [1.0, 0.0]])


@dataclass(frozen=True, eq=False)
class Tie:
    """Node ``node`` of the main model tied to node ``body_node`` of the FE model of the modal body
    ``body`` (the group returned by :meth:`~flexmb.model.Model.add_modal_body`)."""

    name: str
    node: int
    body: ModalBody
    body_node: int

    @property
    def frame_node(self) -> int:
        """The main-model node carrying the body's frame."""
        return int(self.body.connectivity[0, 0])

    @property
    def label(self) -> str:
        """How messages name the tie, e.g. ``tie of node 7 to modal body 'arm' node 20``."""
        where = f"node {self.node} to modal body {self.body.name!r} node {self.body_node}"
        return f"tie of {where}" if self.name == default_tie_name(self.node, self.body, self.body_node) \
            else f"tie {self.name!r} ({where})"


def default_tie_name(node: int, body: ModalBody, body_node: int) -> str:
    """The name of a tie the user did not name."""
    return f"tie of node {node} to modal body {body.name!r} node {body_node}"


def _rotation(theta: float) -> np.ndarray:
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s], [s, c]])


class TieKinematics:
    """The equations of one tie on its local DOF vector y = (x_n (2), [theta_n], r (2), theta, q (n_m)),
    the displacements of node n and of the frame node and the modal coordinates (module docstring).

    ``X_n``, ``X_f`` (2,) reference positions of node n and of the frame node (m); ``X_i`` (2,) node i
    relative to the frame node; ``U`` (2, n_m), ``Psi`` (n_m,) or None the basis rows at node i;
    ``K_F`` (n_c, n_m, n_m) the interface unit-load geometric stiffness (zeros without stiffening);
    ``weld``: node n carries a rotation DOF (third row).
    """

    def __init__(self, X_n: np.ndarray, X_f: np.ndarray, X_i: np.ndarray, U: np.ndarray, Psi: np.ndarray | None,
                 K_F: np.ndarray, weld: bool) -> None:
        self.X_n, self.X_f, self.X_i = X_n, X_f, X_i
        self.U, self.Psi, self.weld = U, Psi, weld
        self.K_t = K_F[:2]                                                          # (2, n_m, n_m)
        self.K_r = K_F[2] if weld else None                                         # (n_m, n_m)
        self.n_m = U.shape[1]
        self.n_rows = nn = 3 if weld else 2                 # equations; also node n's DOFs
        self.n_cols = nn + 3 + self.n_m
        # positions in y of node n's translations, the frame origin's, the frame angle and q
        self.i_n, self.i_f, self.i_th, self.i_q = slice(0, 2), slice(nn, nn + 2), nn + 2, slice(nn + 3, None)

    def _split(self, y: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, float, np.ndarray]:
        return y[self.i_n], (y[2] if self.weld else 0.0), y[self.i_f], y[self.i_th], y[self.i_q]

    def point(self, q: np.ndarray) -> np.ndarray:
        """a(q) = X_i + U q + w(q) (2,), body frame, m."""
        return self.X_i + self.U @ q - 0.5 * (self.K_t @ q) @ q

    def point_gradient(self, q: np.ndarray) -> np.ndarray:
        """da/dq = U + w'(q) (2, n_m)."""
        return self.U - self.K_t @ q

    def rotation_gradient(self, q: np.ndarray) -> np.ndarray:
        """dpsi/dq = Psi + w_r'(q) (n_m,)."""
        return self.Psi - self.K_r @ q

    def values(self, y: np.ndarray) -> np.ndarray:
        """phi (n_rows,) at the local DOFs y."""
        x_n, th_n, r, th, q = self._split(y)
        phi_t = self.X_n + x_n - self.X_f - r - _rotation(th) @ self.point(q)
        if not self.weld:
            return phi_t
        return np.r_[phi_t, th_n - th - self.Psi @ q + 0.5 * q @ self.K_r @ q]

    def _rows(self, blocks_t: tuple[np.ndarray, np.ndarray], grad_r: np.ndarray | None) -> np.ndarray:
        """A (n_rows, n_cols) matrix from the translation rows' theta column and q block and the
        rotation row's q part (the node and frame columns are +-I and +-1)."""
        out = np.zeros((self.n_rows, self.n_cols))
        out[:2, self.i_n] = np.eye(2)
        out[:2, self.i_f] = -np.eye(2)
        out[:2, self.i_th], out[:2, self.i_q] = blocks_t
        if self.weld:
            out[2, 2], out[2, self.i_th], out[2, self.i_q] = 1.0, -1.0, -grad_r
        return out

    def end_point(self, y: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Jacobian C (n_rows, n_cols) and K = d(C^T lambda)/dy (n_cols, n_cols) at y."""
        q, th = y[self.i_q], y[self.i_th]
        A = _rotation(th)
        JAa = _J @ A @ self.point(q)                                                # (2,)
        JAda = _J @ A @ self.point_gradient(q)                                      # (2, n_m)
        C = self._rows((-JAa, -A @ self.point_gradient(q)), self.rotation_gradient(q) if self.weld else None)
        lt = lam[:2]
        K = np.zeros((self.n_cols, self.n_cols))
        K[self.i_th, self.i_th] = lt @ (A @ self.point(q))                          # -lam . J J A a
        K[self.i_th, self.i_q] = -lt @ JAda
        K[self.i_q, self.i_th] = -lt @ JAda
        mu = A.T @ lt                                                               # body-frame force
        Kqq = mu[0] * self.K_t[0] + mu[1] * self.K_t[1]
        if self.weld:
            Kqq = Kqq + lam[2] * self.K_r
        K[self.i_q, self.i_q] = Kqq
        return C, K

    def mid_point(self, y0: np.ndarray, y1: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Discrete gradient G_m (n_rows, n_cols) with G_m (y1 - y0) = phi(y1) - phi(y0) exactly and
        K = d(G_m^T lambda)/dy1 (n_cols, n_cols) at fixed y0, lambda."""
        q0, q1, th0, th1 = y0[self.i_q], y1[self.i_q], y0[self.i_th], y1[self.i_th]
        dth, qm = th1 - th0, 0.5 * (q0 + q1)
        s, ds = float(sinc(0.5 * dth)), 0.5 * float(sinc_derivative(0.5 * dth))     # s(dth), ds/d(dth)
        Am, A1 = _rotation(0.5 * (th0 + th1)), _rotation(th1)
        Abar = np.cos(0.5 * dth) * Am                                               # (A0 + A1)/2
        abar = 0.5 * (self.point(q0) + self.point(q1))
        da_m, da_1 = self.point_gradient(qm), self.point_gradient(q1)               # (2, n_m)
        JAm_abar = _J @ Am @ abar
        G = self._rows((-s * JAm_abar, -Abar @ da_m), self.rotation_gradient(qm) if self.weld else None)
        lt = lam[:2]
        K = np.zeros((self.n_cols, self.n_cols))
        # f_theta = -s lam . J A_m abar; dA_m/dth1 = J A_m / 2, ds/dth1 = ds, dabar/dq1 = da_1 / 2
        K[self.i_th, self.i_th] = -lt @ (ds * JAm_abar - 0.5 * s * (Am @ abar))
        K[self.i_th, self.i_q] = -0.5 * s * lt @ (_J @ Am @ da_1)
        # f_q = -da_m^T Abar^T lam: dAbar/dth1 = J A1 / 2, d(da_m)/dq1 = -K_t / 2
        K[self.i_q, self.i_th] = -0.5 * da_m.T @ (_J @ A1).T @ lt
        mu = Abar.T @ lt
        Kqq = 0.5 * (mu[0] * self.K_t[0] + mu[1] * self.K_t[1])
        if self.weld:
            Kqq = Kqq + 0.5 * lam[2] * self.K_r
        K[self.i_q, self.i_q] = Kqq
        return G, K


class TieSystem:
    """All ties of a model: their kinematics, global columns and constraint rows from ``first_row``,
    and the fixed triplet pattern of their (dense) blocks."""

    def __init__(self, ties: list[Tie], dofs: DofMap, first_row: int) -> None:
        from flexmb.cms.modal_body import interface_geometric_stiffness

        model = dofs.model
        if ties and model.dim != 2:
            raise ModelError(f"{ties[0].label}: ties to modal bodies are 2D for now (3D is a later step)")
        self.ties = ties
        self.kinematics: list[TieKinematics] = []
        self.columns: list[np.ndarray] = []
        self.rows: list[slice] = []
        row = first_row
        for tie in ties:
            data = tie.body.data
            body_dofs = data.component.assembly.dofs
            i, n, f = tie.body_node, tie.node, tie.frame_node
            weld = bool(dofs.has_rotations[n])
            i_rot = bool(body_dofs.has_rotations[i])
            if weld and not i_rot:
                raise ModelError(f"{tie.label}: node {n} carries a rotation (a beam or body there), so the tie "
                                 f"welds, but the body's node {i} has no rotation DOF; tie a node without "
                                 "rotations (a pin) or use a beam node of the body")
            U = data.basis[[body_dofs.index(i, "ux"), body_dofs.index(i, "uy")]]       # (2, n_m)
            Psi = data.basis[body_dofs.index(i, "rz")] if i_rot else None
            if tie.body.stiffening:
                K_F = interface_geometric_stiffness(data, i)                            # (2 or 3, n_m, n_m)
            else:
                K_F = np.zeros((2 + i_rot, data.n_modes, data.n_modes))
            self.kinematics.append(TieKinematics(model.coordinates[n].astype(float), model.coordinates[f].astype(float),
                                                 data.positions[i, :2].copy(), U, Psi, K_F, weld))
            own = [dofs.index(n, "ux"), dofs.index(n, "uy")] + ([dofs.index(n, "rz")] if weld else [])
            frame = [dofs.index(f, "ux"), dofs.index(f, "uy"), dofs.index(f, "rz")]
            self.columns.append(np.r_[own, frame, dofs.internal_dofs(tie.body)].astype(np.int64))
            k = self.kinematics[-1].n_rows
            self.rows.append(slice(row, row + k))
            row += k
        self.n = row - first_row
        blocks = [(np.arange(r.start, r.stop), c) for r, c in zip(self.rows, self.columns)]
        empty = np.zeros(0, dtype=np.int64)
        #: rows and columns of the G and C triplets, and of the K triplets, in the order of :meth:`evaluate`
        self.g_rows = np.concatenate([np.repeat(r, c.size) for r, c in blocks] or [empty])
        self.g_cols = np.concatenate([np.tile(c, r.size) for r, c in blocks] or [empty])
        self.k_rows = np.concatenate([np.repeat(c, c.size) for _, c in blocks] or [empty])
        self.k_cols = np.concatenate([np.tile(c, c.size) for _, c in blocks] or [empty])

    def values(self, u: np.ndarray) -> np.ndarray:
        """phi (n,) of all ties at the state u."""
        return np.concatenate([t.values(u[c]) for t, c in zip(self.kinematics, self.columns)] or [np.zeros(0)])

    def evaluate(self, u1: np.ndarray, lam: np.ndarray, u0: np.ndarray | None, n_dof: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """phi (n,), the force G^T lambda (n_dof,) and the triplet values of G, C (on ``g_rows``,
        ``g_cols``) and K (on ``k_rows``, ``k_cols``); lam (n,) the ties' multipliers. End-point form
        if u0 is None (G = C), else the mid-point form over the step from u0."""
        phi, g, c, k = [], [], [], []
        force = np.zeros(n_dof)
        for t, cols, rows in zip(self.kinematics, self.columns, self.rows):
            y1 = u1[cols]
            lam_t = lam[rows.start - self.rows[0].start:rows.stop - self.rows[0].start]
            C, K = t.end_point(y1, lam_t)
            if u0 is None:
                G = C
            else:
                G, K = t.mid_point(u0[cols], y1, lam_t)
            phi.append(t.values(y1))
            force[cols] += G.T @ lam_t                          # (a tie's columns are distinct)
            g.append(G.ravel())
            c.append(C.ravel())
            k.append(K.ravel())
        return np.concatenate(phi), force, np.concatenate(g), np.concatenate(c), np.concatenate(k)
