"""The configuration-mass kernels of a 3D modal body on a floating frame (issue 16, item 1 in 3D).

The body is the 2D modal body's (:mod:`flexmb.elements.floating_frame`, whose docstring gives the kinetic
energy, the geometric stiffening and the Gonzalez discrete gradient) with a spatial frame rotation.
Element DOF vector u (n_x = 6 + n_m): the frame node's displacement (3), its rotation vector psi (total
rotation R = exp(hat(psi)), body axes = global axes at psi = 0) and the modal coordinates q (kg^1/2 m).
Velocities v = (rdot (global), omega (SPATIAL angular velocity, = R Omega), qdot). X (n_el, 1, 3) the
frame nodes' reference positions, frame origin r = X + u[:3].

Kinetic energy. Body-frame quasi-velocities w = P(R) v = (R^T rdot, R^T omega, qdot), P =
blockdiag(R^T, R^T, I), and T = 1/2 w^T Mt(q) w with the exact Gram form Mt = E(q)^T G E(q) of the FE
velocity field (:class:`~flexmb.elements.velocity_fields.BodyVelocityFields`). The momenta p = P^T Mt w are
the global linear momentum, the spatial angular momentum R p_Omega about the frame origin and the
modal momenta.

End-point inertia (Lagrange's equations with a spatial spin eta, delta R = hat(eta) R, for which
delta Omega = R^T eta' and delta V = R^T (delta r' + rdot x eta)):

    F = (d/dt p_r,  d/dt (R p_Omega) + rdot x p_r,  d/dt p_q - dT/dq),

in body terms P^T [Mt w' + (dMt/dq . qdot) w + (Omega x p_V, Omega x p_Omega + V x p_V, -1/2 w dMt w)]
with w' = (R^T (rddot - omega x rdot), R^T omegadot, qddot) (ModalBodyData.quadratic_velocity). At the
rotation DOFs F is the spatial moment conjugate to a spin; its tangent is w.r.t. a spin of R at fixed
v, a (the Newmark and static schemes' update), by complex steps R <- (I + i h hat(e_j)) R (exact to
first order, all a complex step sees).

Mid-point inertia (a chart per step). About the start configuration, z = (dr, w, dq) with r = r0 + dr,
R(z) = cay(w) R0 (Cayley parameters, spatial) and q = q0 + dq; the end of the step is z1 = (u1 - u0 on
r and q, the Cayley parameters between psi0 and psi1), the mid-point scheme's Newton increment. The
chart velocity zdot = (rdot, wdot, qdot) gives the spatial angular velocity omega = D(w) wdot with the
spatial differential of the Cayley map, d cay(w) cay(w)^T = hat(D(w) dw),

    D(w) = (I + hat(w)/2) / (1 + w.w/4) = (I - hat(w)/2 + w w^T/4)^-1

(not the resolvent (I - hat(w)/2)^-1, which differs from it by w w^T/4 / (1 + w.w/4): checked by
finite differences of cay), so that

    T = 1/2 zdot^T Mz(z) zdot,    Mz(z) = P(z)^T Mt(q) P(z),    P(z) = blockdiag(R^T, R^T D(w), I),

and the body is an ordinary Lagrangian system in z. With the mid-point kinematics zdot1 = 2 z1/dt -
zdot0 (zdot0 = v0: D(0) = I) the 2D construction applies unchanged:

    F = (Mz(z1) zdot1 - Mz(0) zdot0)/dt - gbar,    z1 . gbar = 1/2 zdot0^T (Mz(z1) - Mz(0)) zdot1,

gbar = 1/2 grad_z(zdot0^T Mz zdot1) at z1/2 plus Gonzalez's (1996) correction c W z1 / (z1^T W z1),
W = diag(0, 0, 0, J0_xx, J0_yy, J0_zz, diag M_e); so F . z1 = T1 - T0 exactly, with the body's end
velocity v1 = (rdot1, D(w1) wdot1, qdot1) (:meth:`FloatingFrameMass3D.mid_point_velocity`; it differs
from the scheme's rule for other rotating nodes), and F_r = (p_r1 - p_r0)/dt (W and Mz do not see r):
the linear momentum is exact. The tangent dF/dz1 is exact, derived by hand (its expressions in
:mod:`flexmb.compiled.floating_frame3d`, as the end-point inertia's); the numpy specification takes
both by complex steps. The
weight V = -g . (m r + R S(q)) uses the same chart and discrete gradient (F . z1 = V0 - V1 exactly).

Speed (issue 31): the mid-point and end-point inertia, both weights and the recorded energy and
angular momentum run as compiled kernels (:mod:`flexmb.compiled.floating_frame3d`; the inertia with
exact tangents in real arithmetic, the weights with complex-step tangents inside the kernel); the numpy
methods ``reference_*`` are their specification (tested to 1e-12). The 6-mode body of the spin-up blade
(``benchmarks/bench_modal_body3d.py``, 20 Beam3D elements, dt = 0.01 s) took 6.6 ms per step in numpy,
1.24 ms compiled with complex steps (155 us per call of the mid-point inertia with its tangent, three
calls per step) and 0.82 ms with the exact tangent (53 us per call), against 0.95 ms for the
20-element Beam3D model: the rest of the step is the generic scheme, constraint and Newton path. The
mid-point inertia then took E on its nonzero entries and the constant products of E's coefficients
with G, formed once here (:func:`_entry_polynomials`, :func:`_gram_products`): 38 us per call with the
tangent, 16 us without (54 and 24 us before; CPU medians, 2026-11-29); with the quadratic coefficients
kept on the entries that have them, 34 and 14 us (320 and 77 us for 20 modes, were 490 and 190 us).

Limits: the angular momentum is not conserved exactly (the correction is not rotation-invariant), as
in 2D.
"""
from __future__ import annotations

import numpy as np

from flexmb.checks import ModelError
from flexmb.elements.floating_frame import (
    _CORRECTION_FLOOR,
    FloatingFrameMass,
    _complex_step,
    _floats,
    _outputs,
    _product,
)
from flexmb.elements.velocity_fields import BodyVelocityFields
from flexmb.rotations import cayley_between, exp_map


_compiled = None                 # flexmb.compiled.floating_frame3d, imported on first use (it imports numba)


def _kernels3d():
    """flexmb.compiled.floating_frame3d, imported on first use (numba stays out of ``import flexmb``)."""
    global _compiled
    if _compiled is None:
        from flexmb.compiled import floating_frame3d
        _compiled = floating_frame3d
    return _compiled


def _hat(v: np.ndarray) -> np.ndarray:
    """hat(v) (B, 3, 3) with hat(v) a = v x a, for real or complex v (B, 3)."""
    S = np.zeros(v.shape + (3,), dtype=v.dtype)
    S[:, 0, 1], S[:, 0, 2], S[:, 1, 2] = -v[:, 2], v[:, 1], -v[:, 0]
    S[:, 1, 0], S[:, 2, 0], S[:, 2, 1] = v[:, 2], -v[:, 1], v[:, 0]
    return S


def _cayley(w: np.ndarray) -> np.ndarray:
    """cay(w) = I + 4/(4 + w.w) (hat(w) + hat(w)^2/2) (B, 3, 3), for real or complex w (B, 3)."""
    S = _hat(w)
    return np.eye(3) + (4.0 / (4.0 + np.einsum("bi,bi->b", w, w)))[:, None, None] * (S + 0.5 * S @ S)


def _cayley_scale(w: np.ndarray) -> np.ndarray:
    """s(w) = 1 / (1 + w.w/4) (B,), real or complex."""
    return 1.0 / (1.0 + 0.25 * np.einsum("bi,bi->b", w, w))


def _cayley_differential(w: np.ndarray) -> np.ndarray:
    """D(w) = s(w) (I + hat(w)/2) (B, 3, 3) with d cay(w) cay(w)^T = hat(D(w) dw), real or complex w."""
    return _cayley_scale(w)[:, None, None] * (np.eye(3) + 0.5 * _hat(w))


def _apply(A: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A y (B, 3) for A (B, 3, 3), y (B, 3)."""
    return np.einsum("bij,bj->bi", A, y)


def _apply_transpose(A: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A^T y (B, 3) for A (B, 3, 3), y (B, 3)."""
    return np.einsum("bji,bj->bi", A, y)


def _entry_terms(index: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, ...]:
    """E(q)'s terms (:attr:`~flexmb.elements.velocity_fields.BodyVelocityFields.terms_index`, values) for
    the compiled kernels: the terms q_k q_l and q_l q_k of an entry merged into one (k <= l), and E's
    nonzero entries (z, w). Returns the merged terms (n_t, 4) and values (n_t,) and the entries' rows
    and columns (n_e,) each: for 6 stiffened modes 1515 terms of 2190 on 165 entries, so that the
    products with E^T G run over E's entries (:func:`flexmb.compiled.floating_frame3d._gram_rows`)."""
    index = index.copy()
    swap = (index[:, 3] >= 0) & (index[:, 3] < index[:, 2])
    index[swap, 2], index[swap, 3] = index[swap, 3], index[swap, 2]
    merged, term = np.unique(index, axis=0, return_inverse=True)
    merged_value = np.bincount(term.ravel(), weights=value, minlength=len(merged))
    entries = np.unique(merged[:, :2], axis=0)
    return (np.ascontiguousarray(merged, dtype=np.int64), np.ascontiguousarray(merged_value),
            np.ascontiguousarray(entries[:, 0], dtype=np.int64), np.ascontiguousarray(entries[:, 1], dtype=np.int64))


def _entry_polynomials(fields: BodyVelocityFields, entry_z: np.ndarray, entry_w: np.ndarray
                       ) -> tuple[np.ndarray, ...]:
    """E(q) on its nonzero entries (entry_z, entry_w) (n_e,) as the polynomial P0 + q_k P1[k] + q_k q_l
    P2[k, l] (sums over k, l) for the compiled mid-point inertia: P0 (n_e,), P1 (n_m, n_e) and P2 (n_m, n_m,
    n_2) symmetric in k, l on the entries quadratic_from ... quadratic_from + n_2 - 1, the shortest run of
    entries holding all E's quadratic terms (the Omega c_j rows: 45 of 165 entries for 6 stiffened modes,
    96 of 822 for 20), so that dE/dq_k = P1[k] + 2 q_l P2[k, l] there and P1[k] elsewhere. Returns P0, P1,
    P2 and quadratic_from."""
    E2 = fields.E2[:, :, entry_z, entry_w]                                           # (n_m, n_m, n_e)
    quadratic = np.flatnonzero(np.abs(E2).sum(axis=(0, 1)))
    first, last = (int(quadratic[0]), int(quadratic[-1]) + 1) if quadratic.size else (0, 0)
    E2 = E2[..., first:last]
    return (np.ascontiguousarray(fields.E0[entry_z, entry_w]), np.ascontiguousarray(fields.E1[:, entry_z, entry_w]),
            np.ascontiguousarray(0.5 * (E2 + E2.transpose(1, 0, 2))), first)


def _gram_products(fields: BodyVelocityFields) -> tuple[np.ndarray, ...]:
    """The constant products of E(q)'s coefficients with G for the compiled mid-point inertia, on the
    columns of E that depend on q: EtG0 = E0^T G (n_x, n_z), E1tG = E1[k]^T G on E1's nonzero columns cols1
    (n_m, n1, n_z) and E2tG = (E2[k, l] + E2[l, k])^T G on E2's nonzero columns cols2 (n_m, n_m, n2, n_z),
    and cols1, cols2. Then dE/dq_k^T G = E1tG[k] + q_l E2tG[k, l] (on cols1, cols2): per call the kernel
    forms E^T G and G dE/dq_k W from these with no product with G itself (for 6 stiffened modes n1 = 9
    (Omega, qdot), n2 = 3 (Omega), 78 kB)."""
    G = fields.G
    cols1 = np.flatnonzero(np.abs(fields.E1).sum(axis=(0, 1)))
    cols2 = np.flatnonzero(np.abs(fields.E2).sum(axis=(0, 1, 2)))
    E2 = fields.E2[..., cols2]
    return (np.ascontiguousarray(fields.E0.T @ G),
            np.ascontiguousarray(np.einsum("kyc,yz->kcz", fields.E1[..., cols1], G)),
            np.ascontiguousarray(np.einsum("klyc,yz->klcz", E2 + E2.transpose(1, 0, 2, 3), G)),
            cols1.astype(np.int64), cols2.astype(np.int64))


class FloatingFrameMass3D:
    """Configuration-mass kernels of 3D modal bodies (module docstring), the methods of
    :class:`~flexmb.elements.floating_frame.FloatingFrameMass`: batched over elements, DOF vectors
    u (n_el, 6 + n_m) = (u_x, u_y, u_z, psi, q), velocities v = (rdot, omega (spatial), qdot);
    X (n_el, 1, 3) the frame nodes' reference positions."""

    def __init__(self, fields: BodyVelocityFields, X: np.ndarray) -> None:
        if fields.dim != 3:
            raise ModelError(f"FloatingFrameMass3D: the velocity fields are of a {fields.dim}D body; use "
                             "FloatingFrameMass for 2D")
        self.fields = fields
        self.X = np.ascontiguousarray(X[:, 0, :], dtype=np.float64)                   # (n_el, 3) m
        self.mass = fields.mass                                                       # kg
        self.S0, self.S1, self.S2 = fields.S0, fields.S1, fields.S2
        diagonal = np.diag(self.body_mass(np.zeros((1, fields.n_modes)))[0])
        #: Gonzalez weights W (n_x,): zero on r (linear momentum exact), J0's diagonal, then M_e's
        self.weights = np.concatenate([np.zeros(3), diagonal[3:]])
        self._correction_floor = _CORRECTION_FLOOR * float(diagonal[3:6].max())
        self._terms = _entry_terms(fields.terms_index, fields.terms_value)
        #: the compiled mid-point inertia's constants: E on its entries and its products with G
        P0, P1, P2, quadratic_from = _entry_polynomials(fields, *self._terms[2:])
        self._entry_products = (P0, P1, P2) + _gram_products(fields) + (quadratic_from,)

    # ------------------------------------------------------------ body-frame mass
    # E(q), Mt(q) = E^T G E and dMt/dq depend on the velocity fields only: the 2D kernels' methods
    _coefficients = FloatingFrameMass._coefficients
    _coefficient_derivative = FloatingFrameMass._coefficient_derivative
    body_mass = FloatingFrameMass.body_mass
    body_mass_derivative = FloatingFrameMass.body_mass_derivative

    def body_momentum(self, q: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Mt(q) w = E^T G (E w) (B, n_w), without forming Mt."""
        E = self._coefficients(q)
        return np.einsum("bzw,bz->bw", E, _product(np.einsum("bzw,bw->bz", E, w), self.fields.G))

    @staticmethod
    def _body(R: np.ndarray, v: np.ndarray) -> np.ndarray:
        """w = (R^T v_r, R^T v_omega, v_q) (B, n_x) for spatial components v (B, n_x)."""
        w = v.astype(np.result_type(R, v))                                             # a copy
        w[:, :3], w[:, 3:6] = _apply_transpose(R, v[:, :3]), _apply_transpose(R, v[:, 3:6])
        return w

    @staticmethod
    def _spatial(R: np.ndarray, y: np.ndarray) -> np.ndarray:
        """P^T y = (R y_V, R y_Omega, y_q) (B, n_x) for body-frame components y (B, n_w)."""
        out = y.copy()
        out[:, :3], out[:, 3:6] = _apply(R, y[:, :3]), _apply(R, y[:, 3:6])
        return out

    # --------------------------------------------------------- energy, momentum
    def mass_matrix(self, u: np.ndarray) -> np.ndarray:
        """Mg(psi, q) = P^T Mt P (n_el, n_x, n_x), P = blockdiag(R^T, R^T, I)."""
        R = exp_map(u[:, 3:6])
        P = np.zeros(u.shape + (u.shape[1],))
        P[:, :3, :3] = P[:, 3:6, 3:6] = np.transpose(R, (0, 2, 1))
        idx = np.arange(6, u.shape[1])
        P[:, idx, idx] = 1.0
        return np.transpose(P, (0, 2, 1)) @ self.body_mass(u[:, 6:]) @ P

    def momentum(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """p = Mg v (n_el, n_x): the global linear momentum (kg m/s), the spatial angular momentum
        R p_Omega about the frame origin (kg m^2/s), the modal momenta."""
        R = exp_map(u[:, 3:6])
        return self._spatial(R, self.body_momentum(u[:, 6:], self._body(R, v)))

    def kinetic_energy(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """T = 1/2 w^T Mt w (n_el,), J."""
        w = self._body(exp_map(u[:, 3:6]), v)
        return 0.5 * np.einsum("bi,bi->b", w, self.body_momentum(u[:, 6:], w))

    def energy_and_angular_momentum(self, u: np.ndarray, v: np.ndarray, stretch: np.ndarray | None = None
                                    ) -> tuple[float, np.ndarray]:
        """Sums over the elements of T (J) and of the angular momentum about the global origin,
        L = r x p_r + R p_Omega (3,), kg m^2/s; ``stretch`` is not used (no directors). Compiled kernel;
        :meth:`reference_energy_and_angular_momentum` is its specification."""
        return _kernels3d().energy_and_angular_momentum(self.fields.G, *self._terms[:2], self.X, _floats(u), _floats(v))

    def reference_energy_and_angular_momentum(self, u: np.ndarray, v: np.ndarray) -> tuple[float, np.ndarray]:
        """Specification of :meth:`energy_and_angular_momentum` (numpy)."""
        p = self.momentum(u, v)
        L = np.cross(self.X + u[:, :3], p[:, :3]) + p[:, 3:6]
        return float(0.5 * np.einsum("bi,bi->", p, v)), L.sum(axis=0)

    # ---------------------------------------------------------------- end point
    def _end_point_force(self, R: np.ndarray, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Lagrange's inertia force (B, n_x) at the frame rotation R (B, 3, 3) (module docstring)."""
        acc = a.copy()
        acc[:, :3] = a[:, :3] - np.cross(v[:, 3:6], v[:, :3])                         # R V' = rddot - omega x rdot
        w, wd = self._body(R, v), self._body(R, acc)
        Mt, dMt = self.body_mass(q), self.body_mass_derivative(q)
        p = np.einsum("bij,bj->bi", Mt, w)                                             # body-frame momenta
        body = np.einsum("bij,bj->bi", Mt, wd) + np.einsum("bk,bkij,bj->bi", v[:, 6:], dMt, w)
        body[:, :3] += np.cross(w[:, 3:6], p[:, :3])
        body[:, 3:6] += np.cross(w[:, 3:6], p[:, 3:6]) + np.cross(w[:, :3], p[:, :3])
        body[:, 6:] -= 0.5 * np.einsum("bi,bkij,bj->bk", w, dMt, w)
        return self._spatial(R, body)

    def end_point_inertia(self, u: np.ndarray, v: np.ndarray, a: np.ndarray, dv_du: float = 0.0, da_du: float = 0.0,
                          tangent: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Lagrange inertia force (n_el, n_x) at one state, a = (rddot, omegadot (spatial), qddot), and
        its derivative along an end-point scheme's kinematics, dF/d(u, spin) + dv_du dF/dv + da_du dF/da
        (n_el, n_x, n_x; at the rotations w.r.t. a spin of R at fixed v, a), or None. Compiled kernel;
        :meth:`reference_end_point_inertia` is its specification."""
        F, J = _outputs(u, tangent)
        index, value, entry_z, entry_w = self._terms
        _kernels3d().end_point_inertia(self.fields.G, index, value, entry_z, entry_w, _floats(u), _floats(v),
                                       _floats(a), float(dv_du), float(da_du), F, J, tangent)
        return F, (J if tangent else None)

    def reference_end_point_inertia(self, u: np.ndarray, v: np.ndarray, a: np.ndarray, dv_du: float = 0.0,
                                    da_du: float = 0.0, tangent: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Specification of :meth:`end_point_inertia` (numpy, complex steps)."""
        R = exp_map(u[:, 3:6])
        if not tangent:
            return self._end_point_force(R, u[:, 6:], v, a), None
        n = u.shape[1]
        R_rows, q_rows, v_rows, a_rows = (np.repeat(x, n, axis=0) for x in (R, u[:, 6:], v, a))

        def force(dz: np.ndarray) -> np.ndarray:
            return self._end_point_force(R_rows + _hat(dz[:, 3:6]) @ R_rows, q_rows + dz[:, 6:],
                                         v_rows + dv_du * dz, a_rows + da_du * dz)

        return _complex_step(force, u)

    # --------------------------------------------------------------- mid-point
    @staticmethod
    def chart_increment(u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        """z1 (n_el, n_x): the end of a step in the chart about u0, (u1 - u0 on r and q, the Cayley
        parameters w with exp(hat(psi1)) = cay(w) exp(hat(psi0))), the mid-point scheme's increment."""
        z = u1 - u0
        z[:, 3:6] = cayley_between(u0[:, 3:6], u1[:, 3:6])
        return z

    def mid_point_velocity(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, dt: float) -> np.ndarray:
        """The body's end velocity v1 (n_el, n_x) of a mid-point step: zdot1 = 2 z1/dt - v0 in the chart,
        the spatial angular velocity omega1 = D(w1) wdot1 (compiled: the scheme asks for it at every
        residual)."""
        v1 = np.empty(u1.shape)
        _kernels3d().mid_point_velocity(_floats(u0), _floats(u1), _floats(v0), float(dt), v1)
        return v1

    def _chart_form(self, R0: np.ndarray, q0: np.ndarray, z: np.ndarray, za: np.ndarray, zb: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
        """phi = za^T Mz(z) zb = wa^T Mt wb (B,) and d phi/dz (B, n_x) (zero on r).

        With R = cay(w) R0, dR R^T = hat(D dw) and D = s (I + hat(w)/2), s = 1/(1 + w.w/4):
        d(R^T y)/dw = R^T hat(y) D and d(R^T D wdot)/dw = R^T (hat(omega) D - s hat(wdot)/2 -
        s omega w^T/2), omega = D wdot."""
        w = z[:, 3:6]
        R, D, q = _cayley(w) @ R0, _cayley_differential(w), q0 + z[:, 6:]
        omega_a, omega_b = _apply(D, za[:, 3:6]), _apply(D, zb[:, 3:6])
        wa, wb = za.astype(np.result_type(R, za)), zb.astype(np.result_type(R, zb))
        wa[:, :3], wb[:, :3] = _apply_transpose(R, za[:, :3]), _apply_transpose(R, zb[:, :3])
        wa[:, 3:6], wb[:, 3:6] = _apply_transpose(R, omega_a), _apply_transpose(R, omega_b)
        E = self._coefficients(q)                                                      # (B, n_z, n_w)
        ea, eb = np.einsum("bzw,bw->bz", E, wa), np.einsum("bzw,bw->bz", E, wb)          # zeta (B, n_z)
        Gea, Geb = _product(ea, self.fields.G), _product(eb, self.fields.G)            # G symmetric
        phi = np.einsum("bi,bi->b", ea, Geb)
        pa, pb = np.einsum("bzw,bz->bw", E, Gea), np.einsum("bzw,bz->bw", E, Geb)        # Mt wa, Mt wb
        grad = np.zeros(z.shape, dtype=phi.dtype)
        s = _cayley_scale(w)[:, None]
        for y, wdot, omega, p in ((za[:, :3], za[:, 3:6], omega_a, pb), (zb[:, :3], zb[:, 3:6], omega_b, pa)):
            p_v, p_w = _apply(R, p[:, :3]), _apply(R, p[:, 3:6])                          # spatial
            grad[:, 3:6] += (_apply_transpose(D, np.cross(p_v, y) - np.cross(omega, p_w))
                             + 0.5 * s * (np.cross(wdot, p_w) - w * np.einsum("bi,bi->b", omega, p_w)[:, None]))
        # d phi/dq_k = (G zeta_b) . dE_k w_a + (G zeta_a) . dE_k w_b, dE_k = E1[k] + 2 q_l E2[k, l]
        B, n = q.shape
        outer = (Geb[:, :, None] * wa[:, None, :] + Gea[:, :, None] * wb[:, None, :]).reshape(B, -1)
        second = _product(outer, self.fields.E2_flat_T).reshape(B, n, n)
        grad[:, 6:] = _product(outer, self.fields.E1_flat_T) + 2.0 * np.einsum("bkl,bl->bk", second, q)
        return phi, grad

    def _chart_momentum(self, R0: np.ndarray, q0: np.ndarray, z: np.ndarray, zdot: np.ndarray) -> np.ndarray:
        """Mz(z) zdot = (R p_V, D^T R p_Omega, p_q) (B, n_x), p = Mt(q) P(z) zdot."""
        w = z[:, 3:6]
        R, D = _cayley(w) @ R0, _cayley_differential(w)
        v = zdot.astype(np.result_type(R, zdot))
        v[:, 3:6] = _apply(D, zdot[:, 3:6])
        out = self._spatial(R, self.body_momentum(q0 + z[:, 6:], self._body(R, v)))
        out[:, 3:6] = _apply_transpose(D, out[:, 3:6])
        return out

    _correction = FloatingFrameMass._correction      # Gonzalez's correction, on the chart increment

    def _mid_point_inertia_force(self, R0: np.ndarray, q0: np.ndarray, v0: np.ndarray, z1: np.ndarray,
                                 dt: float) -> np.ndarray:
        """F = (Mz(z1) zdot1 - Mz(0) zdot0)/dt - gbar (B, n_x) (module docstring)."""
        zd1 = 2.0 * z1 / dt - v0
        p0, p1 = self._chart_momentum(R0, q0, np.zeros_like(z1), v0), self._chart_momentum(R0, q0, z1, zd1)
        # zdot0^T Mz zdot1 at both ends from the momenta (Mz symmetric)
        phi0, phi1 = np.einsum("bi,bi->b", p0, zd1), np.einsum("bi,bi->b", v0, p1)
        half_grad = 0.5 * self._chart_form(R0, q0, 0.5 * z1, v0, zd1)[1]
        remainder = 0.5 * (phi1 - phi0) - np.einsum("bi,bi->b", z1, half_grad)
        return (p1 - p0) / dt - half_grad - self._correction(remainder, z1)

    def mid_point_inertia(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, stretch0: np.ndarray | None,
                          dt: float, tangent: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Inertia force of the step F (n_el, n_x), conjugate to the chart increment z1
        (:meth:`chart_increment`), with F . z1 = T1 - T0 exactly (T1 with :meth:`mid_point_velocity`),
        and dF/dz1 (n_el, n_x, n_x) (None without ``tangent``); ``stretch0`` is not used. Compiled
        kernel; :meth:`reference_mid_point_inertia` is its specification."""
        F, J = _outputs(u1, tangent)
        _kernels3d().mid_point_inertia(self.fields.G, *self._terms[2:], self.weights, self._correction_floor,
                                       _floats(u0), _floats(u1), _floats(v0), float(dt), F, J, tangent,
                                       *self._entry_products)
        return F, (J if tangent else None)

    def reference_mid_point_inertia(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, dt: float,
                                    tangent: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Specification of :meth:`mid_point_inertia` (numpy, complex steps)."""
        R0, q0, z1 = exp_map(u0[:, 3:6]), u0[:, 6:], self.chart_increment(u0, u1)
        if not tangent:
            return self._mid_point_inertia_force(R0, q0, v0, z1, dt), None
        n = u1.shape[1]
        R0_rows, q0_rows, v0_rows, z1_rows = (np.repeat(x, n, axis=0) for x in (R0, q0, v0, z1))
        return _complex_step(lambda dz: self._mid_point_inertia_force(R0_rows, q0_rows, v0_rows, z1_rows + dz, dt),
                             z1)

    # ------------------------------------------------------------------ gravity
    def _first_moment(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """S(q) (B, 3) kg m and dS/dq (B, n_m, 3)."""
        B, n = q.shape
        qS2 = _product(q, self.S2.reshape(n, 3 * n)).reshape(B, n, 3)                  # sum_k q_k S2[k, l, :]
        S = self.S0 + _product(q, self.S1) + np.einsum("bl,blj->bj", q, qS2)
        return S, self.S1 + 2.0 * qS2

    def gravity_potential(self, u: np.ndarray, g: np.ndarray) -> np.ndarray:
        """V = -g . (m r + R S(q)) (n_el,), J, of the uniform field g (3,) m/s^2."""
        S, _ = self._first_moment(u[:, 6:])
        return -(self.mass * (self.X + u[:, :3]) + _apply(exp_map(u[:, 3:6]), S)) @ g

    def _gravity_gradient(self, R: np.ndarray, q: np.ndarray, g: np.ndarray) -> np.ndarray:
        """-dV/d(r, spin, q) (B, n_x): (m g, (R S) x g, dS/dq R^T g)."""
        S, dS = self._first_moment(q)
        F = np.empty((len(q), 6 + q.shape[1]), dtype=np.result_type(R, q))
        F[:, :3] = self.mass * g
        F[:, 3:6] = np.cross(_apply(R, S), g)
        F[:, 6:] = np.einsum("bkj,bj->bk", dS, _apply_transpose(R, np.broadcast_to(g, S.shape)))
        return F

    def gravity_force(self, u: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """F = -dV/d(x, spin) (n_el, n_x), N, N m, and dF/d(x, spin) (n_el, n_x, n_x). Compiled kernel;
        :meth:`reference_gravity_force` is its specification."""
        F, J = _outputs(u, True)
        _kernels3d().gravity_force(self.mass, self.S0, self.S1, self.S2, _floats(exp_map(u[:, 3:6])), _floats(u),
                                   _floats(g), F, J)
        return F, J

    def reference_gravity_force(self, u: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Specification of :meth:`gravity_force` (numpy, complex steps)."""
        n = u.shape[1]
        R_rows, q_rows = np.repeat(exp_map(u[:, 3:6]), n, axis=0), np.repeat(u[:, 6:], n, axis=0)
        return _complex_step(lambda dz: self._gravity_gradient(R_rows + _hat(dz[:, 3:6]) @ R_rows,
                                                               q_rows + dz[:, 6:], g), u)

    def _chart_gravity_potential(self, r0: np.ndarray, R0: np.ndarray, q0: np.ndarray, z: np.ndarray,
                                 g: np.ndarray) -> np.ndarray:
        """V(z) = -g . (m (r0 + dr) + cay(w) R0 S(q0 + dq)) (B,)."""
        S, _ = self._first_moment(q0 + z[:, 6:])
        return -(self.mass * (r0 + z[:, :3]) + _apply(_cayley(z[:, 3:6]) @ R0, S)) @ g

    def _mid_point_gravity_force(self, r0: np.ndarray, R0: np.ndarray, q0: np.ndarray, z1: np.ndarray,
                                 g: np.ndarray) -> np.ndarray:
        """-grad_z V(z1/2) plus the correction making F . z1 = V(0) - V(z1) exact (B, n_x); on w,
        -dV/dw = D^T ((R S) x g)."""
        zm = 0.5 * z1
        F = self._gravity_gradient(_cayley(zm[:, 3:6]) @ R0, q0 + zm[:, 6:], g)
        F[:, 3:6] = _apply_transpose(_cayley_differential(zm[:, 3:6]), F[:, 3:6])
        remainder = (self._chart_gravity_potential(r0, R0, q0, np.zeros_like(z1), g)
                     - self._chart_gravity_potential(r0, R0, q0, z1, g) - np.einsum("bi,bi->b", z1, F))
        return F + self._correction(remainder, z1)

    def mid_point_gravity(self, u0: np.ndarray, u1: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gravity force over a step (n_el, n_x), conjugate to the chart increment z1, with F . z1 =
        V(u0) - V(u1) exactly, and its derivative w.r.t. z1 (n_el, n_x, n_x). Compiled kernel;
        :meth:`reference_mid_point_gravity` is its specification."""
        F, J = _outputs(u1, True)
        _kernels3d().mid_point_gravity(self.mass, self.S0, self.S1, self.S2, self.weights, self._correction_floor,
                                       self.X + u0[:, :3], _floats(exp_map(u0[:, 3:6])), _floats(u0[:, 6:]),
                                       _floats(self.chart_increment(u0, u1)), _floats(g), F, J)
        return F, J

    def reference_mid_point_gravity(self, u0: np.ndarray, u1: np.ndarray, g: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        """Specification of :meth:`mid_point_gravity` (numpy, complex steps)."""
        z1 = self.chart_increment(u0, u1)
        n = u1.shape[1]
        r0, R0, q0 = self.X + u0[:, :3], exp_map(u0[:, 3:6]), u0[:, 6:]
        rows = [np.repeat(x, n, axis=0) for x in (r0, R0, q0, z1)]
        return _complex_step(lambda dz: self._mid_point_gravity_force(*rows[:3], rows[3] + dz, g), z1)
