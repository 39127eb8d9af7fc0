"""Precomputed data of a modal (reduced) body on a floating frame: inertia invariants and
unit-load geometric stiffness matrices (issue 16, items 1-2; the integration into the assembly
and the time stepping come later).

Floating frame. The body frame is attached to one node of the FE model, ``frame_node`` (a
reference-node frame, not mean axes): its origin is that node's reference position, its axes are
the global axes at the reference state, and that node's DOFs are *clamped* in the reduced basis
(the deformation vanishes there, rotations included on beam nodes). Body-frame coordinates:
X_i (3,) the reference position of node i relative to the frame node, u_f = Phi q the elastic
displacement (n_dof,) in the body frame, q (n_m,) the modal coordinates.

Kinematics (everything resolved in the body frame; A the frame rotation, R the frame origin):
the generalized velocities are w = (v, omega, q') with v = A^T R' (dim,), omega the body-frame
angular velocity (3 in 3D, omega_z in 2D) and q' (n_m,). The FE nodal velocities are

    translations:  v_i = v + omega x (X_i + u_i) + Phi_i q',      rotations:  v_i = omega + Phi_i q',

i.e. nu = B(q) w with B = [L, Theta(q), Phi]: L selects the translations, Theta(q) holds
(X_i + u_i) x e_a on the translation DOF along e_a and e_a on the rotation DOF about e_a, and
Theta(q) = Theta_0 + sum_k q_k Theta_k is linear in q. The kinetic energy is T = 1/2 nu^T M nu with
the FE mass matrix M about the reference state (point masses, rotary inertia and the beams'
translation-rotation coupling included), so

    M(q) = B(q)^T M B(q) = [[m I, m c~(q), C_t^T], [m c~(q)^T, J(q), C_r(q)^T], [C_t, C_r(q), M_e]]

with the inertia invariants computed once (Wallrapp 1994, "standard input data"; Shabana,
Dynamics of Multibody Systems, ch. 5, "inertia shape integrals"):

* ``mass`` m I: L^T M L (3, 3) (m times the identity for a translation-invariant mass);
* ``first_moment`` m c~(q) = L^T M Theta(q) = ``first_moment0`` + sum_k q_k ``first_moment1[k]``
  (3, 3) each (the skew matrix of the first moment m c, Shabana's I_1 + I_2 q);
* ``inertia`` J(q) = Theta(q)^T M Theta(q) = J_0 + sum_k q_k (J_1k + J_1k^T) + sum_kl q_k q_l J_2kl
  (``inertia0`` (3, 3), ``inertia1`` (n_m, 3, 3), ``inertia2`` (n_m, n_m, 3, 3));
* ``translation_coupling`` C_t = Phi^T M L (n_m, 3) (Wallrapp C_t, Shabana S-bar);
* ``rotation_coupling`` C_r(q) = Phi^T M Theta(q) = C_r0 + sum_k q_k C_r1[:, k] (``rotation_coupling0``
  (n_m, 3), ``rotation_coupling1`` (n_m, n_m, 3));
* ``modal_mass`` M_e = Phi^T M Phi = I and ``modal_stiffness`` K_e = Phi^T K Phi = diag(omega_k^2).

In 2D the arrays are the same, embedded in 3D (z translation absent, rotation about z only); the
generalized velocity uses the planar components (v_x, v_y, omega_z, q').

Equations of motion (Lagrange's equations in quasi-velocities, Euler-Poincare form; T does not
depend on R or A): with p = M(q) w = (p_v, p_omega, p_q),

    d/dt p_v + omega x p_v = Q_v,     d/dt p_omega + omega x p_omega + v x p_v = Q_omega,
    d/dt p_q - dT/dq = Q_q - K_e q,

so M(q) w' + h(q, w) = Q with the quadratic velocity vector
h = (dM/dq . q') w + (omega x p_v, omega x p_omega + v x p_v, -dT/dq); its power is
w^T h = 1/2 w^T M' w, so the kinetic energy balance dT/dt = w^T (Q - (0, 0, K_e q)) holds exactly.

Geometric stiffening (Anderson; Melzer; references README, Wave 2 B). The body-frame inertia load
of a motion of the frame is -M a with the nodal acceleration field a (n_dof,) of the undeformed body,
linear in a few kinematic scalars s_g: the frame's acceleration a_R (``"a_x"``...: a = L e), its angular
acceleration alpha (``"alpha_x"``...: a = Theta_0 e) and the products omega_j omega_k (``"ww_xy"``...:
translations a_i = E_jk X_i, E_jk = d(omega omega^T - |omega|^2 I)/d(omega_j omega_k), rotations 0).
For each unit case the static response of the component clamped at the frame node gives stresses
sigma_g and the modal unit-load geometric stiffness K_G,g = Phi^T k_G(sigma_g) Phi (the element
kernels' geometric stiffness, as in :func:`~flexmb.analysis.buckling.linear_buckling`). At run time
K_G = sum_g s_g K_G,g. At a steady spin omega the linearized modal stiffness is

    K(omega) = K_e + sum_{j<=k} omega_j omega_k K_G,jk - omega^T J_2 omega     (the last: centrifugal softening),

with the gyroscopic matrix G_kl = (C_r1[k, l] - C_r1[l, k]) . omega, for an axis through the frame
node. A frame node at c from the axis (a blade on a hub of radius r = |c|) runs on a circle: the
frame acceleration a_R = omega x (omega x c) adds sum_a (a_R)_a K_G,a_a (``spin_matrices(...,
offset=c)``).

Limits: the centrifugal load of a transverse-linear acceleration field (E_jk with j != k) is applied
through the mass matrix with zero rotation-DOF accelerations (exact for lumped masses and for the
axial fields of a beam spun about an axis normal to it); the rotary inertia's own gyroscopic moment
is left out of the unit loads; the FE mass is constant in the body frame (linear elastic
kinematics, small deformation rotations).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from flexmb.checks import (ModelError, deprecated_alias, deprecated_method, keywords_listed, methods_keywords_listed,
                           real_array)

if TYPE_CHECKING:
    from flexmb.cms.component import Component
    from flexmb.dofs import DofMap

_AXES = "xyz"
_STRESS_STEP = 1e-5          # central-difference step (relative to the model size) for the unit stresses


@methods_keywords_listed
@dataclass
class ModalBodyArrays:
    """Precomputed data of a modal body (module docstring for the symbols): what its element group
    (:class:`~flexmb.elements.floating_frame.ModalBody`) and its ties need. Built by
    :meth:`flexmb.cms.ModalBodyData.from_model` (the reduction lives in :mod:`flexmb.cms`).

    Attributes
    ----------
    component : the :class:`~flexmb.cms.component.Component` of the body's FE model.
    frame_node : node of the FE model the body frame is attached to (its DOFs clamped in Phi).
    dim : 2 or 3.
    positions : X (n_nodes, 3) reference node positions relative to the frame node (m), z = 0 in 2D.
    basis : Phi (n_dof, n_m), mass-normalised (Phi^T M Phi = I), zero at the frame node.
    modal_stiffness : K_e (n_m, n_m) = diag(omega_k^2) (rad^2/s^2).
    modal_mass : M_e (n_m, n_m) = I.
    mass : m I (3, 3) (kg).
    first_moment0, first_moment1 : m c~ = L^T M Theta (3, 3) and (n_m, 3, 3) (kg m).
    inertia0, inertia1, inertia2 : J_0 (3, 3), J_1 (n_m, 3, 3), J_2 (n_m, n_m, 3, 3) (kg m^2).
    translation_coupling : C_t (n_m, 3) (kg^1/2).
    rotation_coupling0, rotation_coupling1 : C_r0 (n_m, 3) (kg^1/2 m), C_r1 (n_m, n_m, 3) (kg^1/2).
    load_cases : names of the unit inertia load cases (``"a_x"``, ``"alpha_z"``, ``"ww_xy"``, ...).
    geometric_stiffness : K_G,g (n_cases, n_m, n_m) per unit s_g (1/s^2 per unit of s_g).
    """

    component: Component
    frame_node: int
    dim: int
    positions: np.ndarray
    basis: np.ndarray
    modal_stiffness: np.ndarray
    modal_mass: np.ndarray
    mass: np.ndarray
    first_moment0: np.ndarray
    first_moment1: np.ndarray
    inertia0: np.ndarray
    inertia1: np.ndarray
    inertia2: np.ndarray
    translation_coupling: np.ndarray
    rotation_coupling0: np.ndarray
    rotation_coupling1: np.ndarray
    load_cases: list[str]
    geometric_stiffness: np.ndarray

    # ---- sizes and selections ------------------------------------------------------------------------------
    @property
    def n_modes(self) -> int:
        """n_m, the number of modal coordinates."""
        return self.basis.shape[1]

    @property
    def omega(self) -> np.ndarray:
        """omega_k (rad/s) of the body modes with the frame node clamped."""
        return np.sqrt(np.maximum(np.diag(self.modal_stiffness), 0.0))

    @property
    def frequencies_hz(self) -> np.ndarray:
        """omega_k / (2 pi) (Hz) of the body modes with the frame node clamped."""
        return self.omega / (2.0 * np.pi)

    frequencies = deprecated_alias("omega", "ModalBodyData.frequencies")

    @property
    def _t(self) -> np.ndarray:
        """Translation components used (2D: x, y)."""
        return np.arange(self.dim)

    @property
    def _r(self) -> np.ndarray:
        """Rotation components used (2D: z)."""
        return np.array([2]) if self.dim == 2 else np.arange(3)

    @property
    def n_rigid(self) -> int:
        """Number of frame coordinates: 3 in 2D, 6 in 3D."""
        return 3 if self.dim == 2 else 6

    # ---- invariants as functions of q ----------------------------------------------------------------------
    def first_moment(self, q: np.ndarray) -> np.ndarray:
        """m c~(q) = L^T M Theta(q) (3, 3) (kg m)."""
        return self.first_moment0 + np.einsum("k,kab->ab", q, self.first_moment1)

    def inertia(self, q: np.ndarray) -> np.ndarray:
        """J(q) = Theta^T M Theta (3, 3) (kg m^2) about the frame origin."""
        J1 = np.einsum("k,kab->ab", q, self.inertia1)
        return self.inertia0 + J1 + J1.T + np.einsum("k,l,klab->ab", q, q, self.inertia2)

    def rotation_coupling(self, q: np.ndarray) -> np.ndarray:
        """C_r(q) = Phi^T M Theta(q) (n_m, 3)."""
        return self.rotation_coupling0 + np.einsum("k,lka->la", q, self.rotation_coupling1)

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """Generalized mass M(q) of w = (v, omega, q') (n_w, n_w), n_w = n_rigid + n_m."""
        t, r = self._t, self._r
        mc, J, Ct, Cr = self.first_moment(q), self.inertia(q), self.translation_coupling, self.rotation_coupling(q)
        return np.block([[self.mass[np.ix_(t, t)], mc[np.ix_(t, r)], Ct[:, t].T],
                         [mc[np.ix_(t, r)].T, J[np.ix_(r, r)], Cr[:, r].T],
                         [Ct[:, t], Cr[:, r], self.modal_mass]])

    def mass_matrix_derivative(self) -> tuple[np.ndarray, np.ndarray]:
        """dM/dq_k: the q-independent part (n_m, n_w, n_w) and the part linear in q,
        d2M/dq_k dq_l (n_m, n_m, n_w, n_w), so that dM/dq_k (q) = D1[k] + sum_l q_l D2[k, l]."""
        t, r, n, nr = self._t, self._r, self.n_modes, self.n_rigid
        nt = t.size
        D1 = np.zeros((n, nr + n, nr + n))
        D2 = np.zeros((n, n, nr + n, nr + n))
        for k in range(n):
            S = self.first_moment1[k][np.ix_(t, r)]
            D1[k, :nt, nt:nr], D1[k, nt:nr, :nt] = S, S.T
            J1 = self.inertia1[k] + self.inertia1[k].T
            D1[k, nt:nr, nt:nr] = J1[np.ix_(r, r)]
            C = self.rotation_coupling1[:, k][:, r]                                # (n_m, n_r)
            D1[k, nr:, nt:nr], D1[k, nt:nr, nr:] = C, C.T
            for l in range(n):
                J2 = self.inertia2[k, l] + self.inertia2[l, k]
                D2[k, l, nt:nr, nt:nr] = J2[np.ix_(r, r)]
        return D1, D2

    def kinetic_energy(self, q: np.ndarray, w: np.ndarray) -> float:
        """T = 1/2 w^T M(q) w (J)."""
        return 0.5 * float(w @ self.mass_matrix(q) @ w)

    def quadratic_velocity(self, q: np.ndarray, w: np.ndarray) -> np.ndarray:
        """h(q, w) (n_w,) of M(q) w' + h = Q (module docstring): (dM/dq . q') w plus the frame terms
        (omega x p_v, omega x p_omega + v x p_v) minus dT/dq."""
        t, r, nr = self._t, self._r, self.n_rigid
        D1, D2 = self.mass_matrix_derivative()
        dM = D1 + np.einsum("l,klij->kij", q, D2)                                  # (n_m, n_w, n_w)
        qd = w[nr:]
        p = self.mass_matrix(q) @ w
        v3, om3, pv3, po3 = (np.zeros(3) for _ in range(4))
        v3[t], pv3[t] = w[:t.size], p[:t.size]
        om3[r], po3[r] = w[t.size:nr], p[t.size:nr]
        h = np.einsum("k,kij,j->i", qd, dM, w)
        h[:t.size] += np.cross(om3, pv3)[t]
        h[t.size:nr] += (np.cross(om3, po3) + np.cross(v3, pv3))[r]
        h[nr:] -= 0.5 * np.einsum("i,kij,j->k", w, dM, w)
        return h

    # ---- geometric stiffening --------------------------------------------------------------------------------
    def geometric_stiffness_at(self, scalars: dict[str, float]) -> np.ndarray:
        """K_G = sum_g s_g K_G,g (n_m, n_m) for the kinematic scalars s_g named as ``load_cases``."""
        out = np.zeros((self.n_modes, self.n_modes))
        for name, s in scalars.items():
            if name not in self.load_cases:
                raise ModelError(f"unknown load case {name!r}; this body has {self.load_cases}")
            out += float(s) * self.geometric_stiffness[self.load_cases.index(name)]
        return out

    def spin_scalars(self, omega: np.ndarray) -> dict[str, float]:
        """The products omega_j omega_k (j <= k) as load-case scalars, omega (3,) (2D: only omega_z used)."""
        omega = np.asarray(omega, dtype=float)
        if self.dim == 2:
            return {"ww_zz": float(omega[2] ** 2)}
        return {f"ww_{_AXES[j]}{_AXES[k]}": float(omega[j] * omega[k]) for j in range(3) for k in range(j, 3)}

    @keywords_listed(renamed={"omega": "angular_velocity"})
    def spin_matrices(self, angular_velocity: np.ndarray, stiffening: bool = True, offset: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
        """Gyroscopic G (n_m, n_m) and stiffness K(omega) (n_m, n_m) of the modal coordinates with the
        frame turning at the constant body-frame angular velocity omega = ``angular_velocity`` (3,,
        rad/s) about an axis through the
        point ``-offset`` of the body frame: K(omega) = K_e [+ K_G(omega) if ``stiffening``] -
        omega^T J_2 omega.

        ``offset`` (m, 3 or dim components, body frame): where the frame node sits relative to a
        point of the spin axis, e.g. ``(r, 0, 0)`` for a blade along x on a hub of radius r spun
        about z. The frame origin then runs on a circle with the centripetal acceleration
        a_R = omega x (omega x offset), whose inertia load -M L a_R stretches the body as well:
        K_G includes sum_a (a_R)_a K_G,a_a (the ``"a_x"``... cases). Default: no offset, the axis
        through the frame node (hub radius 0); a blade on a hub then stiffens too little (flap 6.46
        instead of 7.82 rad/s at r/L = 0.5, Omega = 5 on the tests' cantilever). Without
        ``stiffening`` the offset changes nothing (the classic linear modal body has no K_G).
        """
        omega = real_array(angular_velocity, "spin_matrices: angular_velocity (rad/s)", (3,))
        softening = np.einsum("a,klab,b->kl", omega, self.inertia2, omega)
        Cw = self.rotation_coupling1 @ omega                                       # (n_m, n_m): [l, k]
        K = self.modal_stiffness - 0.5 * (softening + softening.T)
        if stiffening:
            scalars = self.spin_scalars(omega)
            if offset is not None:
                a_frame = np.cross(omega, np.cross(omega, _offset(offset, self.dim)))   # (3,) m/s^2
                scalars.update({f"a_{_AXES[a]}": float(a_frame[a]) for a in self._t})
            K = K + self.geometric_stiffness_at(scalars)
        return Cw - Cw.T, K

    @keywords_listed(renamed={"omega": "angular_velocity"})
    def spin_omega(self, angular_velocity: np.ndarray, stiffening: bool = True, offset: np.ndarray | None = None
                   ) -> np.ndarray:
        """Angular frequencies (rad/s) of q'' + G q' + K(omega) q = 0 with the frame turning at the
        body-frame ``angular_velocity`` omega (3,, rad/s) (:meth:`spin_matrices`: the spin axis
        through the frame node unless ``offset`` places the frame node on a hub of that radius),
        ascending; an unstable (divergent) mode gives a negative value -|Re s|."""
        G, K = self.spin_matrices(angular_velocity, stiffening, offset)
        n = self.n_modes
        A = np.block([[np.zeros((n, n)), np.eye(n)], [-K, -G]])
        s = np.linalg.eigvals(A)
        growing = s.real > 1e-9 * max(1.0, float(np.abs(s).max()))
        out = np.where(growing, -s.real, np.abs(s.imag))
        keep = (s.imag > 0) | growing
        return np.sort(out[keep])[:n]

    spin_frequencies = deprecated_method("spin_omega", "ModalBodyData.spin_frequencies()")


def _offset(value, dim: int) -> np.ndarray:
    """The frame node's offset from the spin axis as (3,) floats (2D: 2 or 3 components, z = 0)."""
    what = "spin_matrices: offset"
    v = real_array(value, what)
    if dim == 2 and v.shape == (2,):
        v = np.r_[v, 0.0]
    if v.shape != (3,):
        raise ModelError(f"{what} must have 3 components{' (or 2 in 2D)' if dim == 2 else ''} (m), got shape "
                         f"{v.shape}")
    return v


def _node_dof_count(dofs: DofMap, node: int) -> int:
    """Number of DOFs of ``node``."""
    last = dofs.first[node + 1] if node + 1 < dofs.first.size else dofs.n_dof
    return int(last - dofs.first[node])


def _load_geometric_stiffness(comp: Component, frame_node: int, Phi: np.ndarray, loads: np.ndarray) -> np.ndarray:
    """Phi^T k_G(sigma(f)) Phi (n_loads, n_m, n_m) for nodal loads f (n_loads, n_dof): the static response of
    the component clamped at the frame node, its stresses by a central difference about the
    reference state, and the element kernels' geometric stiffness of those stresses."""
    asm = comp.assembly
    at_frame = asm.dofs.first[frame_node] + np.arange(_node_dof_count(asm.dofs, frame_node))
    free = np.setdiff1d(np.arange(comp.n_dof), at_frame)
    import scipy.sparse.linalg as spla     # not at the top: results import this module, dense runs stay without it

    K = comp.K[free][:, free].tocsc()
    solve = spla.factorized(K)
    trans = asm.dofs.translations().ravel()
    rot = np.setdiff1d(np.arange(comp.n_dof), trans)
    zero = np.zeros(comp.n_dof)
    out = []
    for f in loads:
        du = np.zeros(comp.n_dof)
        du[free] = solve(f[free])
        size = max(np.abs(du[trans]).max() / comp.model.characteristic_length,
                   np.abs(du[rot]).max() if rot.size else 0.0)
        if size == 0.0:                                     # no load of this kind on the body
            out.append(np.zeros((Phi.shape[1],) * 2))
            continue
        s = _STRESS_STEP / size
        plus, minus = asm.stresses(asm.update(zero, s * du)), asm.stresses(asm.update(zero, -s * du))
        sigma = [(p - m) / (2.0 * s) for p, m in zip(plus, minus)]
        KG = asm.free_matrix(asm.geometric_stiffness_data(zero, sigma))
        out.append(Phi.T @ (KG @ Phi))
    return np.array(out)


def interface_geometric_stiffness(data: ModalBodyArrays, node: int) -> np.ndarray:
    """Unit-load geometric stiffness of the interface force cases of FE node ``node``, (n_c, n_m, n_m):
    one case per DOF of the node, a unit force along each body-frame axis (2D: F_x, F_y), then a
    unit moment about each (2D: M_z) if the node has rotations (issue 16, item 2).

    For a force F (body frame) at the node, K_G = sum_a F_a K_F,a (run-time scaling). The matching
    second-order displacement of the node is w_a(q) = -1/2 q^T K_F,a q along e_a (rotation about e_a
    for the moment cases), so that F . w(q) = -1/2 q^T K_G(F) q: the work of the force on the
    second-order shortening, as for the inertia cases (module docstring). Computed as
    ``geometric_stiffness`` is: static response of the body clamped at the frame node, its stresses,
    the element geometric stiffness projected on Phi; the symmetric part is returned (the quadratic
    form sees no other).
    """
    comp = data.component
    dofs = comp.assembly.dofs
    if isinstance(node, (bool, np.bool_)) or not isinstance(node, (int, np.integer)) \
            or not 0 <= node < comp.model.n_nodes:
        raise ModelError(f"{comp.name}: interface node must be a node of the body's FE model "
                         f"(0..{comp.model.n_nodes - 1}), got {node!r}")
    if node == data.frame_node:
        raise ModelError(f"{comp.name}: node {node} is the frame node (clamped in the basis: no interface "
                         "force stiffens the body there)")
    at_node = dofs.first[node] + np.arange(_node_dof_count(dofs, node))
    loads = np.zeros((at_node.size, comp.n_dof))
    loads[np.arange(at_node.size), at_node] = 1.0
    KG = _load_geometric_stiffness(comp, data.frame_node, data.basis, loads)
    return 0.5 * (KG + np.swapaxes(KG, 1, 2))
