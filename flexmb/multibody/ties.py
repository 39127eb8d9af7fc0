"""Ties of main-model nodes to interface nodes of modal bodies (issue 16, item 1), 2D and 3D.

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

3D (:class:`TieKinematics3D`; frame DOFs (r, psi), psi the frame's rotation VECTOR, R = exp(hat(psi));
node n's rotation vector psi_n, R_n = exp(hat(psi_n)); both are the identity at u = 0, where the tie holds):

    phi_t = x_n - r - R a(q) = 0                                  (3 rows),  a(q) = X_i + U q + w(q)
    phi_r = axial(skew(R^T R_n)) - psi_i(q) = 0                  (3 rows, weld), psi_i(q) = Psi q + w_r(q)

with U, Psi (3, n_m) the basis rows at node i's translations and rotations, w_a and w_r,a the
second-order displacements of the force cases F_a and moment cases M_a. R^T R_n = exp(hat(theta)) is
node n's rotation relative to the frame (body frame), and axial(skew(.)) = sin|theta| theta/|theta|:
the weld holds the relative rotation at the body node's small modal rotation, one-to-one for relative
rotations below 90 degrees (the modal rotations psi_i are small in the linear modal theory anyway;
the frame and node rotations themselves are unrestricted). With Q(A, B) (3, 3) the linear map
v -> axial(skew(A^T hat(v) B)):

* end-point form (spins dtheta at rotations, ``R <- exp(hat(dtheta)) R``):
  d phi_t = dx_n - dr + hat(R a) dtheta - R a' dq,  d phi_r = Q(R, R_n) (dtheta_n - dtheta) - psi_i' dq;
* mid-point form (Cayley parameters w at rotations, ``R1 = cay(w) R0``, so that R1 - R0 = hat(w) Rbar):

      R1 a1 - R0 a0 = hat(w) Rbar abar + Rbar (a1 - a0),
      R1^T Rn1 - R0^T Rn0 = (R1 - R0)^T Rbar_n + Rbar^T (Rn1 - Rn0) = Rbar^T hat(w_n - w) Rbar_n,

  with Rbar = (R0 + R1)/2, Rbar_n = (Rn0 + Rn1)/2, abar = (a0 + a1)/2: both linear in the step
  increment, so G_m = [I, 0, -I, hat(Rbar abar), -Rbar a'(q_m)] and [0, Q(Rbar, Rbar_n), 0,
  -Q(Rbar, Rbar_n), -psi_i'(q_m)] satisfy G_m d = phi1 - phi0 exactly; the tangent K = d(G_m^T lambda)/dd
  follows from dR1 = G(w) hat(dw) Rbar (G the Cayley resolvent), and the constraint rows of the
  Newton matrix, d phi(u1)/dd = C(u1) T(w), from the spin T(w) dw = (I + hat(w)/2) dw / (1 + |w|^2/4)
  of R1 per change of w (as the joints' rows there).

lambda_t is the force on the body at node i (global axes), lambda_r the body-frame moment there (for
small relative rotations); the moment of a weld on node n is -Q(R, R_n)^T lambda_r (global axes).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from flexmb.checks import ModelError
from flexmb.elements.dof_names import ROTATION_NAMES, TRANSLATION_NAMES
from flexmb.rotations import (
    cayley_between,
    cayley_resolvent,
    exp_map,
    sinc,
    sinc_derivative,
    skew,
)

if TYPE_CHECKING:
    from flexmb.dofs import DofMap
    from flexmb.elements.floating_frame import ModalBody

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


#: Levi-Civita symbol eps_ijk and the matrices hat(e_c) (c = 0, 1, 2)
_EPS = np.zeros((3, 3, 3))
_EPS[0, 1, 2] = _EPS[1, 2, 0] = _EPS[2, 0, 1] = 1.0
_EPS[0, 2, 1] = _EPS[2, 1, 0] = _EPS[1, 0, 2] = -1.0
_HATS = -_EPS.transpose(2, 0, 1)            # _HATS[c] @ v = e_c x v


def _axial_skew(M: np.ndarray) -> np.ndarray:
    """axial(skew(M)) = axial((M - M^T)/2) (3,) of a (3, 3) matrix."""
    return 0.5 * np.array([M[2, 1] - M[1, 2], M[0, 2] - M[2, 0], M[1, 0] - M[0, 1]])


def _relative_map(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Q(A, B) (3, 3) with Q v = axial(skew(A^T hat(v) B)): Q_kl = 1/2 eps_ijk eps_abl A_ai B_bj."""
    return 0.5 * np.einsum("ijk,abl,ai,bj->kl", _EPS, _EPS, A, B)


def _relative_map_tangents(A: np.ndarray, B: np.ndarray, MA: np.ndarray, MB: np.ndarray, lam: np.ndarray
                           ) -> tuple[np.ndarray, np.ndarray]:
    """d(Q(A, B)^T lam) (3, 3) for dA = MA hat(dv) A and for dB = MB hat(dv) B (columns: dv_c)."""
    dA = MA @ _HATS @ A                                                           # (3, 3, 3): c, a, i
    dB = MB @ _HATS @ B
    t_a = 0.5 * np.einsum("ijk,abl,cai,bj,k->lc", _EPS, _EPS, dA, B, lam, optimize=True)
    t_b = 0.5 * np.einsum("ijk,abl,ai,cbj,k->lc", _EPS, _EPS, A, dB, lam, optimize=True)
    return t_a, t_b


class TieKinematics3D:
    """The equations of one 3D tie on its local DOF vector y = (x_n (3), [psi_n (3)], r (3), psi (3),
    q (n_m)), the displacements and rotation vectors of node n and of the frame node and the modal
    coordinates (module docstring). Arguments as :class:`TieKinematics`, with ``U``, ``Psi`` (3, n_m)
    and ``K_F`` (3 or 6, n_m, n_m): the cases F_x, F_y, F_z, then M_x, M_y, M_z.
    """

    def __init__(self, X_n: np.ndarray, X_f: np.ndarray, X_i: np.ndarray, U: np.ndarray, Psi: np.ndarray | None,
                 K_F: np.ndarray, weld: bool) -> None:
        self.X_n, self.X_f, self.X_i = X_n, X_f, X_i
        self.U, self.Psi, self.weld = U, Psi, weld
        self.K_t = K_F[:3]                                                          # (3, n_m, n_m)
        self.K_r = K_F[3:6] if weld else None                                       # (3, n_m, n_m)
        self.n_m = U.shape[1]
        self.n_rows = nn = 6 if weld else 3                 # equations; also node n's DOFs
        self.n_cols = nn + 6 + self.n_m
        # positions in y of node n's translations and rotation, the frame origin's, its rotation and q
        self.i_n, self.i_nr = slice(0, 3), slice(3, nn)
        self.i_f, self.i_p, self.i_q = slice(nn, nn + 3), slice(nn + 3, nn + 6), slice(nn + 6, None)

    def _rotations(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """R and R_n (3, 3) at y (R_n = I without a weld)."""
        psi = np.stack([y[self.i_p], y[self.i_nr] if self.weld else np.zeros(3)])
        R = exp_map(psi)
        return R[0], R[1]

    def point(self, q: np.ndarray) -> np.ndarray:
        """a(q) = X_i + U q + w(q) (3,), body frame, m."""
        return self.X_i + self.U @ q - 0.5 * (self.K_t @ q) @ q

    def point_gradient(self, q: np.ndarray) -> np.ndarray:
        """da/dq = U + w'(q) (3, n_m)."""
        return self.U - self.K_t @ q

    def rotation(self, q: np.ndarray) -> np.ndarray:
        """psi_i(q) = Psi q + w_r(q) (3,), body frame, rad."""
        return self.Psi @ q - 0.5 * (self.K_r @ q) @ q

    def rotation_gradient(self, q: np.ndarray) -> np.ndarray:
        """dpsi_i/dq = Psi + w_r'(q) (3, n_m)."""
        return self.Psi - self.K_r @ q

    def values(self, y: np.ndarray) -> np.ndarray:
        """phi (n_rows,) at the local DOFs y."""
        R, R_n = self._rotations(y)
        q = y[self.i_q]
        phi_t = self.X_n + y[self.i_n] - self.X_f - y[self.i_f] - R @ self.point(q)
        if not self.weld:
            return phi_t
        return np.r_[phi_t, _axial_skew(R.T @ R_n) - self.rotation(q)]

    def _rows(self, ra: np.ndarray, da: np.ndarray, Q: np.ndarray | None, dpsi: np.ndarray | None) -> np.ndarray:
        """A (n_rows, n_cols) matrix from the translation rows' frame-rotation block hat(ra) and q block
        -da, and the rotation rows' relative map Q and q block -dpsi (node and frame columns +-I)."""
        out = np.zeros((self.n_rows, self.n_cols))
        out[:3, self.i_n] = np.eye(3)
        out[:3, self.i_f] = -np.eye(3)
        out[:3, self.i_p], out[:3, self.i_q] = skew(ra), -da
        if self.weld:
            out[3:, self.i_nr], out[3:, self.i_p], out[3:, self.i_q] = Q, -Q, -dpsi
        return out

    def _rotation_tangent(self, K: np.ndarray, A: np.ndarray, B: np.ndarray, MA: np.ndarray, MB: np.ndarray,
                          lam_r: np.ndarray, half: float) -> None:
        """Add the change of the rotation rows' force (Q^T lam_r at psi_n, -Q^T lam_r at psi,
        -psi_i'^T lam_r at q) to K, Q = Q(A, B) with dA = MA hat(dv) A (frame) and dB = MB hat(dv_n) B."""
        t_a, t_b = _relative_map_tangents(A, B, MA, MB, lam_r)
        K[self.i_nr, self.i_p] += t_a
        K[self.i_nr, self.i_nr] += t_b
        K[self.i_p, self.i_p] -= t_a
        K[self.i_p, self.i_nr] -= t_b
        K[self.i_q, self.i_q] += half * np.tensordot(lam_r, self.K_r, axes=1)

    def end_point(self, y: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Jacobian C (n_rows, n_cols) and K = d(C^T lambda)/dy (n_cols, n_cols) at y, with respect to
        spins at the rotations."""
        R, R_n = self._rotations(y)
        q = y[self.i_q]
        Ra, Rda = R @ self.point(q), R @ self.point_gradient(q)
        Q = _relative_map(R, R_n) if self.weld else None
        C = self._rows(Ra, Rda, Q, self.rotation_gradient(q) if self.weld else None)
        lt, hl = lam[:3], skew(lam[:3])
        K = np.zeros((self.n_cols, self.n_cols))
        # frame moment hat(lam) R a: spin -hat(lam) hat(R a); q-force -a'^T R^T lam: spin -a'^T R^T hat(lam)
        K[self.i_p, self.i_p] = -hl @ skew(Ra)
        K[self.i_p, self.i_q] = hl @ Rda
        K[self.i_q, self.i_p] = -Rda.T @ hl
        K[self.i_q, self.i_q] = np.tensordot(R.T @ lt, self.K_t, axes=1)
        if self.weld:
            self._rotation_tangent(K, R, R_n, np.eye(3), np.eye(3), lam[3:], 1.0)
        return C, K

    def mid_point(self, y0: np.ndarray, y1: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Discrete gradient G_m (n_rows, n_cols) with G_m d = phi(y1) - phi(y0) exactly for the step
        increment d (Cayley parameters at the rotations, as
        :meth:`~flexmb.assembly.Assembly.cayley_increment`) and K = d(G_m^T lambda)/dd (n_cols, n_cols)
        at fixed y0, lambda."""
        R0, Rn0 = self._rotations(y0)
        R1, Rn1 = self._rotations(y1)
        q0, q1 = y0[self.i_q], y1[self.i_q]
        qm = 0.5 * (q0 + q1)
        psi0 = np.stack([y0[self.i_p], y0[self.i_nr] if self.weld else np.zeros(3)])
        psi1 = np.stack([y1[self.i_p], y1[self.i_nr] if self.weld else np.zeros(3)])
        Gw = cayley_resolvent(cayley_between(psi0, psi1))                          # frame, node n
        Rbar, Rbar_n = 0.5 * (R0 + R1), 0.5 * (Rn0 + Rn1)
        Ra = Rbar @ (0.5 * (self.point(q0) + self.point(q1)))                       # Rbar abar
        da_m = self.point_gradient(qm)
        Q = _relative_map(Rbar, Rbar_n) if self.weld else None
        G = self._rows(Ra, Rbar @ da_m, Q, self.rotation_gradient(qm) if self.weld else None)
        lt, hl = lam[:3], skew(lam[:3])
        K = np.zeros((self.n_cols, self.n_cols))
        # frame moment hat(lam) Rbar abar, dRbar = G(w) hat(dw) Rbar / 2, dabar/dq1 = a'(q1)/2
        K[self.i_p, self.i_p] = -0.5 * hl @ Gw[0] @ skew(Ra)
        K[self.i_p, self.i_q] = 0.5 * hl @ Rbar @ self.point_gradient(q1)
        # q-force -a'(q_m)^T Rbar^T lam: dRbar^T lam = Rbar^T hat(G^T lam) dw / 2, da'(q_m)/dq1 = -K_t/2
        K[self.i_q, self.i_p] = -0.5 * (Rbar @ da_m).T @ skew(Gw[0].T @ lt)
        K[self.i_q, self.i_q] = 0.5 * np.tensordot(Rbar.T @ lt, self.K_t, axes=1)
        if self.weld:
            self._rotation_tangent(K, Rbar, Rbar_n, 0.5 * Gw[0], 0.5 * Gw[1], lam[3:], 0.5)
        return G, K

    def increment_map(self, y0: np.ndarray, y1: np.ndarray) -> np.ndarray:
        """d(spins at y1)/dd (n_cols, n_cols) over the step y0 -> y1: the identity, and at each rotation
        T(w) = (I + hat(w)/2) / (1 + |w|^2/4), the spin of R1 = cay(w) R0 per unit change of w, so that
        C(y1) T is d phi(y1)/dd, the constraint rows of the mid-point Newton matrix."""
        out = np.eye(self.n_cols)
        slots = [self.i_p, self.i_nr] if self.weld else [self.i_p]
        w = cayley_between(np.stack([y0[sl] for sl in slots]), np.stack([y1[sl] for sl in slots]))
        for sl, wk in zip(slots, w):
            out[sl, sl] = (np.eye(3) + 0.5 * skew(wk)) / (1.0 + 0.25 * wk @ wk)
        return out

    def node_moment(self, y: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """Moment (3,) of a weld on node n at y, global axes (N m): -Q(R, R_n)^T lambda_r."""
        R, R_n = self._rotations(y)
        return -_relative_map(R, R_n).T @ lam[3:]


class TieSystem:
    """All ties of a model: their kinematics, global columns and constraint rows from ``first_row``,
    and the fixed triplet pattern of their (dense) blocks."""

    def __init__(self, ties: list[Tie], dofs: DofMap, first_row: int) -> None:
        from flexmb.elements.modal_body_data import interface_geometric_stiffness

        model = dofs.model
        dim = model.dim
        trans, rots = TRANSLATION_NAMES[dim], ROTATION_NAMES[dim]
        kinematics = TieKinematics if dim == 2 else TieKinematics3D
        self.ties = ties
        self.kinematics: list[TieKinematics | TieKinematics3D] = []
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
            U = data.basis[[body_dofs.index(i, a) for a in trans]]                       # (dim, n_m)
            Psi = None
            if i_rot:
                Psi = data.basis[body_dofs.index(i, "rz")] if dim == 2 else \
                    data.basis[[body_dofs.index(i, a) for a in rots]]                    # (n_m,) or (3, n_m)
            if tie.body.stiffening:
                K_F = interface_geometric_stiffness(data, i)            # (dim [+ rotations], n_m, n_m)
            else:
                K_F = np.zeros((dim + i_rot * len(rots), data.n_modes, data.n_modes))
            self.kinematics.append(kinematics(model.coordinates[n].astype(float), model.coordinates[f].astype(float),
                                              data.positions[i, :dim].copy(), U, Psi, K_F, weld))
            own = [dofs.index(n, a) for a in trans] + ([dofs.index(n, a) for a in rots] if weld else [])
            frame = [dofs.index(f, a) for a in trans + rots]
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

    def reactions(self, lam: np.ndarray, u: np.ndarray | None) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per tie the force and moment on node n (global axes) from the ties' multipliers lam (n,):
        -lambda_t, and -lambda_r (2D weld) or -Q(R, R_n)^T lambda_r at the state u (3D weld)."""
        out = []
        for t, cols, rows in zip(self.kinematics, self.columns, self.rows):
            lam_t = lam[rows.start - self.rows[0].start:rows.stop - self.rows[0].start]
            dim = 2 if isinstance(t, TieKinematics) else 3
            if isinstance(t, TieKinematics3D) and t.weld:
                if u is None:
                    raise ValueError("tie reactions of a 3D weld need the state u (its moment turns with the frame)")
                out.append((-lam_t[:3], t.node_moment(u[cols], lam_t)))
            else:
                out.append((-lam_t[:dim], -lam_t[dim:]))
        return out

    def evaluate(self, u1: np.ndarray, lam: np.ndarray, u0: np.ndarray | None, n_dof: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """phi (n,), the force G^T lambda (n_dof,) and the triplet values of G, C (on ``g_rows``,
        ``g_cols``) and K (on ``k_rows``, ``k_cols``); lam (n,) the ties' multipliers. End-point form
        if u0 is None (G = C), else the mid-point form over the step from u0, where C = d phi(u1)/dd
        (3D: with respect to the step's Cayley increments, as the joints' C there)."""
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
                if isinstance(t, TieKinematics3D):          # C with respect to the step's Cayley increments
                    C = C @ t.increment_map(u0[cols], y1)
            phi.append(t.values(y1))
            force[cols] += G.T @ lam_t                          # (a tie's columns are distinct)
            g.append(G.ravel())
            c.append(C.ravel())
            k.append(K.ravel())
        return np.concatenate(phi), force, np.concatenate(g), np.concatenate(c), np.concatenate(k)
