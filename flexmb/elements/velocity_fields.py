"""The body-frame velocity fields of a modal body (2D and 3D) and their Gram matrix (issue 16): the
kinetic energy of the modal body (:mod:`flexmb.elements.floating_frame` in 2D,
:mod:`flexmb.elements.floating_frame3d` in 3D), T = 1/2 w^T E(q)^T G E(q) w, written over a few fixed nodal
fields Z of the body's FE model (2D module's docstring: the velocity nu = Z zeta, zeta = E(q) w, and the
second-order field w2 of the geometric stiffening).
"""
from __future__ import annotations

import numpy as np

from flexmb.elements.modal_body_data import (
    ModalBodyArrays,
    _load_geometric_stiffness,
    _node_dof_count,
)
from flexmb.rotations import axial

#: eigenvalues of F K^-1 F^T below this fraction of the largest belong to exactly dependent loads
_DEPENDENT_LOADS = 1e-12


class BodyVelocityFields:
    """The body-frame nodal velocity of a modal body as nu = Z zeta, zeta = E(q) w (docstring of
    :mod:`flexmb.elements.floating_frame`),
    with the constant Gram matrix G = Z^T M Z, so that Mt(q) = E(q)^T G E(q).

    Body-frame velocities w = (V, Omega, qdot): n_w = 3 + n_m in 2D (V (2), Omega_z), 6 + n_m in 3D.
    The nodal velocity is nu = L V + Omega x (X + Phi q + w2) + Phi qdot + w2dot on the translations,
    Omega + (Phi q + w2)dot on the rotation DOFs. Columns of Z (n_dof, n_z): L (dim) and Theta_0 (one per
    rotation axis a: e_a x X_i on translations, e_a on rotations), Phi (n_m), Jhat_a Phi (n_m per axis,
    for Omega_a e_a x Phi q; Jhat_a = e_a x on translations, zero on rotations), and with stiffening Q
    and Jhat_a Q (n_y each) for the second-order field w2(q) = Q c(q), c_j(q) = q^T C_j q, Q K-orthonormal
    combinations of the static responses to the loads M U_i, Jhat_a^T M U_i (U = L, Theta_0, Phi).
    E(q) = E0 + q_k E1[k] + q_k q_l E2[k, l]: the coefficients (V, Omega, qdot, Omega_a q, c', Omega_a c)
    of these columns. Also the first moment S(q) = S0 + S1^T q + q S2 q (kg m, (dim,)) of the weight.
    Sizes for 3 modes: n_z = 31 in 2D (9 without stiffening); in 3D 70 for a straight Beam3D cantilever
    (13 of its 36 loads independent; 18 without stiffening).
    """

    def __init__(self, data: ModalBodyArrays, stiffening: bool) -> None:
        comp, n, dim = data.component, data.n_modes, data.dim
        dofs = comp.assembly.dofs
        tr = dofs.translations()                                                       # (n_fe_nodes, dim)
        M = comp.M
        axes = (2,) if dim == 2 else (0, 1, 2)                                         # rotation axes
        self.dim = dim
        self.n_modes = n
        self.mass = float(data.mass[0, 0])
        L = np.zeros((comp.n_dof, dim))
        for a in range(dim):
            L[tr[:, a], a] = 1.0
        X = data.positions[:, :dim]
        theta0 = np.zeros((comp.n_dof, len(axes)))                                     # e_a x X_i, 1 on rotations
        for i, a in enumerate(axes):
            theta0[:, i] = _turned_field(tr, _nodal(tr, comp.n_dof, X), a)[:, 0]
            theta0[dofs.first[dofs.has_rotations] + (2 if dim == 2 else 3 + a), i] = 1.0
        U = np.column_stack([L, theta0, data.basis])                                   # (n_dof, n_w): w at q = 0
        columns = [U] + [_turned_field(tr, data.basis, a) for a in axes]
        mc = data.first_moment0
        # m c~ = L^T M Theta_0 = -hat(m c): the first moment m c from its axial vector
        self.S0 = np.array([mc[1, 2], -mc[0, 2]]) if dim == 2 else -axial(mc)          # (dim,) kg m
        self.S1 = data.translation_coupling[:, :dim].copy()                            # (n_m, dim) kg^1/2
        self.S2 = np.zeros((n, n, dim))
        C = np.zeros((0, n, n))
        if stiffening:
            MU = M @ U
            # M U_i, Jhat_a^T M U_i (Jhat_a^T = -Jhat_a)
            loads = np.concatenate([MU] + [-_turned_field(tr, MU, a) for a in axes], axis=1).T
            KF = _load_geometric_stiffness(comp, data.frame_node, data.basis, loads)
            KF = 0.5 * (KF + np.transpose(KF, (0, 2, 1)))                              # (n_f, n_m, n_m)
            # w2 = Y c in the span of the static responses Y = K^-1 f_i, with f_i . w2 = -1/2 q^T K_G[f_i] q
            # for every load: H c = b, H = F K^-1 F^T. The loads are dependent (Jhat^T M L_x = -M L_y for a
            # lumped mass) and nearly so (the clamped modes nearly contain the rigid rotation: Mt(0) is nearly
            # singular), so w2 is written on the K-orthonormal fields Q = Y V Lambda^-1/2 of H's eigenvectors
            # (coefficients O(1), no cancellation) and the exactly dependent ones (right-hand sides consistent:
            # K_G is linear in the load) are dropped
            Y = _clamped_responses(data, loads)                                        # (n_dof, n_f)
            lam, V = np.linalg.eigh(loads @ Y)
            keep = lam > _DEPENDENT_LOADS * lam.max()
            scale = 1.0 / np.sqrt(lam[keep])
            Q = (Y @ V[:, keep]) * scale                                               # (n_dof, n_y)
            C = -0.5 * scale[:, None, None] * np.einsum("fj,fkl->jkl", V[:, keep], KF)
            columns += [Q] + [_turned_field(tr, Q, a) for a in axes]
            self.S2 = -0.5 * np.stack([KF[a] for a in range(dim)], axis=-1)            # (M L_a) . w2
        Z = np.hstack(columns)                                                         # (n_dof, n_z)
        self.G = Z.T @ (M @ Z)                                                         # (n_z, n_z)
        n_w, n_y, n_r = U.shape[1], C.shape[0], len(axes)
        n_z = Z.shape[1]
        omega = dim + np.arange(n_r)                                                   # Omega_a in w
        self.E0 = np.zeros((n_z, n_w))
        self.E0[np.arange(n_w), np.arange(n_w)] = 1.0
        self.E1 = np.zeros((n, n_z, n_w))
        self.E2 = np.zeros((n, n, n_z, n_w))
        y0 = n_w + n_r * n
        for i in range(n_r):
            self.E1[np.arange(n), n_w + i * n + np.arange(n), omega[i]] = 1.0          # Omega_a q_k
            self.E2[:, :, y0 + n_y * (1 + i):y0 + n_y * (2 + i), omega[i]] = np.transpose(C, (1, 2, 0))  # Omega_a c_j
        self.E1[:, y0:y0 + n_y, dim + n_r:] = 2.0 * np.transpose(C, (1, 0, 2))         # c_j' = 2 q^T C_j q'
        #: E(q) as its nonzero terms for the compiled kernels, E = sum_t value_t e_z e_w^T q_k q_l:
        #: terms_index (n_t, 4) = (z, w, k, l), k = l = -1 for E0's terms, l = -1 for E1's
        z0, w0 = np.nonzero(self.E0)
        k1, z1, w1 = np.nonzero(self.E1)
        k2, l2, z2, w2 = np.nonzero(self.E2)
        absent = np.full(len(z0) + len(z1), -1)
        self.terms_index = np.ascontiguousarray(np.column_stack(
            [np.concatenate([z0, z1, z2]), np.concatenate([w0, w1, w2]),
             np.concatenate([absent[:len(z0)], k1, k2]), np.concatenate([absent, l2])]).astype(np.int64))
        self.terms_value = np.concatenate([self.E0[z0, w0], self.E1[k1, z1, w1], self.E2[k2, l2, z2, w2]])
        #: E1, E2 flattened to (n_z n_w, n_m) and (n_z n_w, n_m^2) for the gradient's products
        self.E1_flat_T = np.ascontiguousarray(self.E1.reshape(n, -1).T)
        self.E2_flat_T = np.ascontiguousarray(self.E2.reshape(n * n, -1).T)


def _nodal(tr: np.ndarray, n_dof: int, X: np.ndarray) -> np.ndarray:
    """Nodal vectors X (n_fe_nodes, dim) as a field (n_dof, 1) on the translations, rotation rows zero."""
    out = np.zeros((n_dof, 1))
    out[tr.ravel(), 0] = X.ravel()
    return out


def _turned_field(tr: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    """Jhat_a y (n_dof, k): the translations of nodal vectors y (n_dof, k) turned by e_a x (a = ``axis``;
    in 2D only a = z, a turn by +90 deg), rotation rows zero."""
    b, c = (axis + 1) % 3, (axis + 2) % 3                                             # e_a x y = y_b e_c - y_c e_b
    out = np.zeros_like(y)
    out[tr[:, c]], out[tr[:, b]] = y[tr[:, b]], -y[tr[:, c]]
    return out


def _clamped_responses(data: ModalBodyArrays, loads: np.ndarray) -> np.ndarray:
    """Static responses K^-1 f (n_dof, n_f) of the body's FE model clamped at the frame node."""
    import scipy.sparse.linalg as spla     # not at the top: results import this module, dense runs stay without it

    comp = data.component
    dofs = comp.assembly.dofs
    node = data.frame_node
    at_frame = dofs.first[node] + np.arange(_node_dof_count(dofs, node))
    free = np.setdiff1d(np.arange(comp.n_dof), at_frame)
    out = np.zeros((comp.n_dof, len(loads)))
    out[free] = spla.splu(comp.K[free][:, free].tocsc()).solve(np.ascontiguousarray(loads[:, free].T))
    return out
