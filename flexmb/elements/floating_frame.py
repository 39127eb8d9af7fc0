"""A modal (reduced) body on a floating frame in the multibody assembly (issue 16, items 1-3); 2D here.

The body is one element (:class:`ModalBody`) on one node of the main model, the *frame node*:
its DOF vector is u_e = (u_x, u_y, theta, q_1 .. q_n), the frame node's displacement and rotation
(additive in 2D) and the modal coordinates q (kg^1/2 m, mass-normalised modes, DOFs of their own).
Generalized coordinates x = (r, theta, q) with the frame origin r = X + (u_x, u_y) (X the frame node's
reference position in the main model) and the frame rotation A(theta) (body axes = global axes at
theta = 0); velocities xdot = the rates of u_e. All precomputed data are
:class:`~flexmb.elements.modal_body_data.ModalBodyArrays`'s (its docstring: floating frame clamped at the frame
node, inertia invariants, unit-load geometric stiffness matrices K_G,g).

Kinetic energy. With the body-frame quasi-velocities w = P(theta) xdot = (A^T rdot, thetadot, qdot),
P = blockdiag(A^T, 1, I),

    T = 1/2 w^T Mt(q) w = 1/2 xdot^T Mg(theta, q) xdot,      Mg = P^T Mt P,

the exact kinetic energy 1/2 nu^T M nu of the FE model (mass M constant in the body frame) for the
body-frame displacement field u(q) = Phi q [+ w2(q) with stiffening]: the nodal velocities

    nu = L v + omega (Theta_0 + Jhat_t Phi q + Jhat_t w2) + Phi q' + w2'      (Jhat_t: e_z x on translations)

are written nu = Z zeta, zeta = E(q) w, over a few fixed fields Z
(:class:`~flexmb.elements.velocity_fields.BodyVelocityFields`), so that Mt(q) = E(q)^T G E(q) with the
constant Gram matrix G = Z^T M Z. Without stiffening this is ``ModalBodyData.mass_matrix(q)`` (tested).

Geometric stiffening, energy-consistent (issue 16, item 2). A second-order displacement field w2(q)
quadratic in q is added, known through its projections on unit loads: for a load f with stresses
sigma_f of its static response (body clamped at the frame node), f . w2(q) = -1/2 q^T K_G[f] q, the
work of the load on the second-order shortening (K_G[f] = Phi^T k_G(sigma_f) Phi, the unit-load
geometric stiffness; ModalBodyData's K_G,g are those of the d'Alembert loads f_g = -M a_g). The
kinetic energy's terms linear in w2 pair it with the velocity fields of w, i.e. with the loads
M U_i and Jhat_t^T M U_i, U = (L_x, L_y, Theta_0, Phi_k); w2 is taken in the span of their static
responses meeting all these projections (``BodyVelocityFields``). The lead's derivation kept only
the terms linear in w2 with the rigid velocity field,

    T_w = omega (v_y s_x - v_x s_y) + omega q'^T K_alpha q + v_x q'^T K_ax q + v_y q'^T K_ay q
          - 1/2 omega^2 q^T K_ww q,        s(q) = 1/2 (q^T K_ax q, q^T K_ay q),

(checked: these are exactly the rigid-field terms here; their Lagrange q-equation holds
[a_R . (K_ax, K_ay) + alpha K_alpha + omega^2 K_ww] q, a_R = A^T rddot = (v_x' - omega v_y, v_y' + omega v_x):
the unit-load geometric stiffness scaled by the run-time kinematic scalars, Anderson; Melzer;
references README, Wave 2 B). Alone they failed: with a frame clamped at a node the clamped modes
nearly contain the rigid rotation (the first cantilever mode is almost a rotation about the root), so
Mt(0) is nearly singular (smallest eigenvalue 7e-4 of 3.2 for the test beam), T_w perturbs it by O(q)
and Mt lost positive definiteness at q = 0.005 kg^1/2 m (7 mm of tip deflection of a 1 m beam): a free
tumbling body blew up in Newton. Adding the terms of the elastic velocity Phi q' with w2 (loads
M Phi_k, Jhat_t^T M Phi_k) kept it definite up to |q| = 0.1 but not beyond (|q| = 0.2: eigenvalue -0.23),
and Newton still left the definite region from a poor start. The kinetic energy of the whole field
Phi q + w2 (a Gram matrix) is positive definite for every q, at the price of terms of higher order
(|omega x w2 + w2'|^2, (omega x Phi q) . M (omega x w2 + w2')), which do not change the linearization
about q = 0: at a steady spin it is q'' + G q' + K(omega) q with K = K_e - omega^T J_2 omega + omega^2
K_G[Jhat_t^T M Theta_0], ``ModalBodyData.spin_matrices(omega, stiffening=True)`` for a lumped mass
(tested; for a consistent mass, whose translations and rotations are coupled, the centrifugal load
of the FE velocity field Jhat_t^T M Theta_0 differs from ModalBodyData's -M a_ww by the coupling terms:
1.3e-4 relative in K for the test beam's cubic mass). Lagrange's equations of T then contain the
geometric stiffening, the frame equations its reactions, and the energy is conserved.
``stiffening=False`` drops w2 (the classic linear modal body).

Gravity. V = -g . (m r + A(theta) S(q)) with the first moment S(q) = S_0 + C_t^T q [+ s(q)]: S_0 from
the invariant m c at q = 0, the linear part C_t^T q = Phi^T M L q so that the modal gravity load is
the FE model's Phi^T M g (consistent masses' translation-rotation coupling included; the kinetic
energy's m c(q) differs from it by that coupling, zero for lumped masses), and s(q) with stiffening,
so that gravity stiffens the body like a frame acceleration -g does.

Mid-point inertia with exact energy (the frame/modal coupling is treated as one Lagrangian system
in x): with v1 = 2 (u1 - u0)/dt - v0 and p_i = Mg(x_i) v_i,

    F = (p1 - p0)/dt - gbar,   dx . gbar = 1/2 v0^T (Mg(x1) - Mg(x0)) v1     =>   F . dx = T1 - T0

exactly. gbar = 1/2 grad_x(v0^T Mg(x) v1) at x_m plus Gonzalez's (1996) correction c W dx / (dx^T W dx)
with the remainder c; W = diag(0, 0, J_0, diag M_e): zero on r, so Mg being independent of r, the
linear momentum is conserved exactly; the angular momentum is not (the correction is not
rotation-invariant): it drifts by the remainder's moment, O(dt^3) per step. The weight of the body
uses the same discrete gradient (F . dx = V0 - V1 exactly). Tangents w.r.t. u1 (dv1/du1 = 2/dt) and
the Newmark force's derivative along its kinematics: complex-step differentiation of the force
(h = 1e-30, exact to round-off: no difference is taken), all directions in one batched call.

Speed: the mid-point and end-point inertia, the weight and the recorded energy and angular momentum
run as compiled kernels (:mod:`flexmb.compiled.floating_frame`, E(q) as its nonzero terms, complex
steps in complex128 inside the kernel); the numpy methods ``reference_*`` of
:class:`FloatingFrameMass` are their specification (tested to 1e-12). A 3-mode stiffened body of the
spin-up benchmark took 1.7 ms per step with these in numpy, 0.36 ms compiled (0.15 ms for the
4-element co-rotational FE model, which takes a one-call Newton solve; most of the modal body's step
is now the generic assembly and Newton path); ``benchmarks/bench_modal_body.py``.

3D: :mod:`flexmb.elements.floating_frame3d` (the same construction in the chart of the step's Cayley
parameters). Limits: the second-order field w2 enters the kinetic energy and the
weight, not the recovered mesh (:meth:`ModalBody.deformed_positions` is r + A (X_i + Phi_i q)); loads
and joints act at the frame node and at nodes tied to the body (:mod:`flexmb.multibody.ties`, whose
tie forces stiffen it through the interface-force unit cases); the group itself has no geometric
stiffness, so linear buckling sees the body as linear. Modal damping (``damping_ratios``): the force
diag(2 zeta_k omega_k) q' through the schemes' damping hook, booked as dissipated. Free fall
at large steps: the mid-point rule on (r, theta, q) is not invariant under the growing fall speed
(in the continuum a uniform field does not act on the relative motion); the test beam (free-body
frequencies up to 115 rad/s) tumbling in free fall at dt = 0.1 s gained internal energy from the fall
after about 1 s and Newton failed at t = 1.2 s (stiffened) and 2.7 s (linear); at dt = 0.05 s it ran
10 s. A body whose frame node is held by a joint or support (mechanisms) does not fall.
"""
from __future__ import annotations

import numbers

import numpy as np

from flexmb.checks import ModelError
from flexmb.elements.base import ElementGroup
from flexmb.elements.modal_body_data import ModalBodyArrays
from flexmb.elements.velocity_fields import BodyVelocityFields
from flexmb.rotations import exp_map

_STEP = 1e-30                    # complex step (no cancellation: any tiny step is exact to round-off)
#: the discrete-gradient correction is skipped when dx^T W dx is below this fraction of J_0 (rad^2):
#: a step of 1e-8 rad of the frame, where the remainder c = O(|dx|^3) is at round-off and dividing
#: its round-off by dx^T W dx would only make a spurious force growing like 1/|dx|
_CORRECTION_FLOOR = 1e-16
_compiled = None                 # flexmb.compiled.floating_frame, imported on first use (it imports numba)


def _kernels():
    """flexmb.compiled.floating_frame, imported on first use (numba stays out of ``import flexmb``)."""
    global _compiled
    if _compiled is None:
        from flexmb.compiled import floating_frame
        _compiled = floating_frame
    return _compiled


def _rotate(c: np.ndarray, s: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A(theta) y for y (B, 2), cos/sin (B,)."""
    return np.stack([c * y[:, 0] - s * y[:, 1], s * y[:, 0] + c * y[:, 1]], axis=1)


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b; complex operands (complex steps) as real products: numpy's complex and mixed
    complex-real matrix products ran 20x slower than real ones here (measured)."""
    a_complex, b_complex = np.iscomplexobj(a), np.iscomplexobj(b)
    if not (a_complex or b_complex):
        return a @ b
    if not b_complex:
        return (a.real @ b) + 1j * (a.imag @ b)
    if not a_complex:
        return (a @ b.real) + 1j * (a @ b.imag)
    return (a.real @ b.real - a.imag @ b.imag) + 1j * (a.real @ b.imag + a.imag @ b.real)


def _turned(w: np.ndarray) -> np.ndarray:
    """d(P(theta) xdot)/dtheta = (w_y, -w_x, 0, ..) for body-frame velocities w (B, n_w)."""
    out = np.zeros_like(w)
    out[:, 0], out[:, 1] = w[:, 1], -w[:, 0]
    return out


def _floats(a: np.ndarray) -> np.ndarray:
    """a as a C-contiguous float array (the one argument type the compiled kernels are built for)."""
    return np.ascontiguousarray(a, dtype=np.float64)


def _outputs(u: np.ndarray, tangent: bool) -> tuple[np.ndarray, np.ndarray]:
    """Empty force (n_el, n_x) and tangent (n_el, n_x, n_x) arrays for a compiled kernel to fill, the
    tangent of no element without ``tangent``."""
    n_el, n = u.shape
    return np.empty((n_el, n)), np.empty((n_el if tangent else 0, n, n))


def _complex_step(fun, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Value (B, n) and Jacobian (B, n, n) of a function of u (B, n) by complex steps along the n unit
    directions at once: ``fun`` takes the perturbations i h e_j, one row per direction and batch entry
    (B*n, n), so that it can move several arguments along them (the end-point kinematics)."""
    B, n = u.shape
    dz = 1j * _STEP * np.tile(np.eye(n), (B, 1))                                      # (B*n, n)
    out = fun(dz).reshape(B, n, -1)                                                  # [b, direction, component]
    return out[:, 0].real, np.transpose(out.imag, (0, 2, 1)) / _STEP


class FloatingFrameMass:
    """Configuration-mass kernels of modal bodies (the contract of
    :class:`~flexmb.elements.hermite_mass2d.HermiteMass2D`): batched over elements, DOF vectors
    u (n_el, 3 + n_m) = (u_x, u_y, theta, q); X (n_el, 1, 2) the frame nodes' reference positions."""

    def __init__(self, fields: BodyVelocityFields, X: np.ndarray) -> None:
        self.fields = fields
        self.X = np.ascontiguousarray(X[:, 0, :], dtype=np.float64)                   # (n_el, 2) m
        self.mass = fields.mass                                                       # kg
        self.S0, self.S1, self.S2 = fields.S0, fields.S1, fields.S2
        #: Gonzalez weights W (n_x,): zero on r (linear momentum exact), the reference mass diagonal else
        self.weights = np.concatenate([[0.0, 0.0], np.diag(self.body_mass(np.zeros((1, fields.n_modes)))[0])[2:]])
        self._correction_floor = _CORRECTION_FLOOR * self.weights[2]

    # ------------------------------------------------------------ body-frame mass
    def _coefficients(self, q: np.ndarray) -> np.ndarray:
        """E(q) (B, n_z, n_w), zeta = E(q) w (:class:`BodyVelocityFields`)."""
        f = self.fields
        B, n = q.shape
        qq = (q[:, :, None] * q[:, None, :]).reshape(B, n * n)
        return f.E0 + (_product(q, f.E1.reshape(n, -1)) + _product(qq, f.E2.reshape(n * n, -1))
                        ).reshape((B,) + f.E0.shape)

    def _coefficient_derivative(self, q: np.ndarray) -> np.ndarray:
        """dE/dq_k (B, n_m, n_z, n_w) (E2 is symmetric in k, l)."""
        f = self.fields
        B, n = q.shape
        return f.E1 + 2.0 * _product(q, f.E2.reshape(n, -1)).reshape((B,) + f.E1.shape)

    def body_mass(self, q: np.ndarray) -> np.ndarray:
        """Mt(q) = E^T G E (B, n_w, n_w) of the body-frame velocities w."""
        E = self._coefficients(q)
        return _product(np.transpose(E, (0, 2, 1)), _product(self.fields.G, E))

    def body_mass_derivative(self, q: np.ndarray) -> np.ndarray:
        """dMt/dq_k = dE_k^T G E + E^T G dE_k (B, n_m, n_w, n_w)."""
        GE = _product(self.fields.G, self._coefficients(q))                           # (B, n_z, n_w)
        half = _product(np.transpose(self._coefficient_derivative(q), (0, 1, 3, 2)), GE[:, None])
        return half + np.transpose(half, (0, 1, 3, 2))

    @staticmethod
    def _frame(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """cos theta, sin theta (B,)."""
        return np.cos(u[:, 2]), np.sin(u[:, 2])

    @staticmethod
    def body_velocity(c: np.ndarray, s: np.ndarray, v: np.ndarray) -> np.ndarray:
        """w = P(theta) v (B, n_w): (A^T v_r, v_theta, v_q)."""
        w = v.astype(np.result_type(c, v))                                             # a copy
        w[:, 0] = c * v[:, 0] + s * v[:, 1]
        w[:, 1] = -s * v[:, 0] + c * v[:, 1]
        return w

    @staticmethod
    def _to_global(c: np.ndarray, s: np.ndarray, y: np.ndarray) -> np.ndarray:
        """P(theta)^T y (B, n_x) for body-frame components y (B, n_w)."""
        out = y.copy()
        out[:, :2] = _rotate(c, s, y[:, :2])
        return out

    # --------------------------------------------------------- energy, momentum
    def mass_matrix(self, u: np.ndarray) -> np.ndarray:
        """Mg(theta, q) = P^T Mt P (n_el, n_x, n_x)."""
        c, s = self._frame(u)
        P = np.zeros(u.shape + (u.shape[1],), dtype=u.dtype)
        P[:, 0, 0], P[:, 0, 1], P[:, 1, 0], P[:, 1, 1] = c, s, -s, c
        idx = np.arange(2, u.shape[1])
        P[:, idx, idx] = 1.0
        return np.transpose(P, (0, 2, 1)) @ self.body_mass(u[:, 3:]) @ P

    def momentum(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """p = Mg(x) xdot (n_el, n_x): linear momentum (global), then the angular momentum about the
        frame origin, then the modal momenta."""
        c, s = self._frame(u)
        w = self.body_velocity(c, s, v)
        return self._to_global(c, s, np.einsum("bij,bj->bi", self.body_mass(u[:, 3:]), w))

    def kinetic_energy(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """T (n_el,), J."""
        c, s = self._frame(u)
        w = self.body_velocity(c, s, v)
        return 0.5 * np.einsum("bi,bij,bj->b", w, self.body_mass(u[:, 3:]), w)

    def energy_and_angular_momentum(self, u: np.ndarray, v: np.ndarray, stretch: np.ndarray | None = None
                                    ) -> tuple[float, float]:
        """Sums over the elements of T (J) and of the angular momentum about the global origin,
        L = p_theta + r_x p_ry - r_y p_rx (kg m^2/s); ``stretch`` is not used (no directors).
        Compiled kernel; :meth:`reference_energy_and_angular_momentum` is its specification."""
        f = self.fields
        return _kernels().energy_and_angular_momentum(f.G, f.terms_index, f.terms_value, self.X, _floats(u),
                                                      _floats(v))

    def reference_energy_and_angular_momentum(self, u: np.ndarray, v: np.ndarray) -> tuple[float, float]:
        """Specification of :meth:`energy_and_angular_momentum` (numpy)."""
        p = self.momentum(u, v)
        r = self.X + u[:, :2]
        L = p[:, 2] + r[:, 0] * p[:, 1] - r[:, 1] * p[:, 0]
        return float(0.5 * np.einsum("bi,bi->", p, v)), float(L.sum())

    # --------------------------------------------------------------- mid-point
    def _velocity_form(self, u: np.ndarray, va: np.ndarray, vb: np.ndarray, gradient: bool
                       ) -> tuple[np.ndarray, np.ndarray | None]:
        """phi = va^T Mg(x) vb = zeta_a^T G zeta_b (B,) and, with ``gradient``, d phi/dx (B, n_x)
        (zero on r), worked in zeta = E(q) P(theta) v."""
        c, s = self._frame(u)
        q = u[:, 3:]
        wa, wb = self.body_velocity(c, s, va), self.body_velocity(c, s, vb)
        E = self._coefficients(q)                                                      # (B, n_z, n_w)
        za, zb = np.einsum("bzw,bw->bz", E, wa), np.einsum("bzw,bw->bz", E, wb)          # (B, n_z)
        Gza, Gzb = _product(za, self.fields.G), _product(zb, self.fields.G)            # G symmetric
        phi = np.einsum("bi,bi->b", za, Gzb)
        if not gradient:
            return phi, None
        grad = np.zeros(u.shape, dtype=phi.dtype)
        grad[:, 2] = (np.einsum("bzw,bw,bz->b", E, _turned(wa), Gzb)
                      + np.einsum("bzw,bw,bz->b", E, _turned(wb), Gza))
        # d phi/dq_k = (G zeta_b) . dE_k w_a + (G zeta_a) . dE_k w_b, dE_k = E1[k] + 2 q_l E2[k, l]:
        # contracted with the flattened E1, E2 as two matrix products
        B, n = q.shape
        outer = (Gzb[:, :, None] * wa[:, None, :] + Gza[:, :, None] * wb[:, None, :]).reshape(B, -1)
        second = _product(outer, self.fields.E2_flat_T).reshape(B, n, n)
        grad[:, 3:] = _product(outer, self.fields.E1_flat_T) + 2.0 * np.einsum("bkl,bl->bk", second, q)
        return phi, grad

    def _correction(self, remainder: np.ndarray, dx: np.ndarray) -> np.ndarray:
        """Gonzalez's correction remainder * W dx / (dx^T W dx) (B, n_x), zero below the floor."""
        Wdx = self.weights * dx
        norm = np.einsum("bi,bi->b", dx, Wdx)
        active = norm.real > self._correction_floor
        factor = np.where(active, remainder / np.where(active, norm, 1.0), 0.0)
        return factor[:, None] * Wdx

    def _mid_point_inertia_force(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, dt: float) -> np.ndarray:
        """F = (p1 - p0)/dt - gbar (B, n_x) (module docstring)."""
        dx = u1 - u0
        v1 = 2.0 * dx / dt - v0
        phi0 = self._velocity_form(u0, v0, v1, False)[0]
        phi1 = self._velocity_form(u1, v0, v1, False)[0]
        half_grad = 0.5 * self._velocity_form(0.5 * (u0 + u1), v0, v1, True)[1]
        remainder = 0.5 * (phi1 - phi0) - np.einsum("bi,bi->b", dx, half_grad)
        gbar = half_grad + self._correction(remainder, dx)
        return (self.momentum(u1, v1) - self.momentum(u0, v0)) / dt - gbar

    def mid_point_inertia(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, stretch0: np.ndarray | None,
                          dt: float, tangent: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Inertia force of the step F (n_el, n_x) with F . (u1 - u0) = T1 - T0 exactly, and dF/du1
        (n_el, n_x, n_x) (None without ``tangent``); ``stretch0`` is not used (no directors).
        Compiled kernel; :meth:`reference_mid_point_inertia` is its specification."""
        f = self.fields
        F, J = _outputs(u1, tangent)
        _kernels().mid_point_inertia(f.G, f.terms_index, f.terms_value, self.weights, self._correction_floor,
                                     _floats(u0), _floats(u1), _floats(v0), float(dt), F, J, tangent)
        return F, (J if tangent else None)

    def reference_mid_point_inertia(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, dt: float,
                                    tangent: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Specification of :meth:`mid_point_inertia` (numpy)."""
        if not tangent:
            return self._mid_point_inertia_force(u0, u1, v0, dt), None
        n = u1.shape[1]
        u0_rows, u1_rows, v0_rows = (np.repeat(a, n, axis=0) for a in (u0, u1, v0))

        def force(dz: np.ndarray) -> np.ndarray:
            return self._mid_point_inertia_force(u0_rows, u1_rows + dz, v0_rows, dt)

        return _complex_step(force, u1)

    # ---------------------------------------------------------------- end point
    def _end_point_force(self, u: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Lagrange's inertia force Mg a + (dMg/dx . v) v - 1/2 v^T dMg/dx v (B, n_x), in body terms:
        P^T [Mt P a + v_theta Jhat Mt w + (dMt . q') w + v_theta Mt w_theta] - dT/dx with
        w_theta = dP/dtheta v, Jhat y = (-y_y, y_x, 0, ..) and dT/dx = (0, (Mt w)_t . w_theta, 1/2 w dMt w)."""
        c, s = self._frame(u)
        q = u[:, 3:]
        w, wa = self.body_velocity(c, s, v), self.body_velocity(c, s, a)
        Mt, dMt = self.body_mass(q), self.body_mass_derivative(q)
        p = np.einsum("bij,bj->bi", Mt, w)                                             # body-frame momenta
        w_theta = _turned(w)
        body = (np.einsum("bij,bj->bi", Mt, wa + v[:, 2:3] * w_theta)
                + np.einsum("bk,bkij,bj->bi", v[:, 3:], dMt, w))
        body[:, 0] -= v[:, 2] * p[:, 1]                                                # v_theta Jhat p
        body[:, 1] += v[:, 2] * p[:, 0]
        F = self._to_global(c, s, body)
        F[:, 2] -= np.einsum("bi,bi->b", p[:, :2], w_theta[:, :2])
        F[:, 3:] -= 0.5 * np.einsum("bi,bkij,bj->bk", w, dMt, w)
        return F

    def end_point_inertia(self, u: np.ndarray, v: np.ndarray, a: np.ndarray, dv_du: float = 0.0, da_du: float = 0.0,
                          tangent: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Lagrange inertia force (n_el, n_x) at one state and its derivative along an end-point
        scheme's kinematics, dF/du + dv_du dF/dv + da_du dF/da (n_el, n_x, n_x), or None.
        Compiled kernel; :meth:`reference_end_point_inertia` is its specification."""
        f = self.fields
        F, J = _outputs(u, tangent)
        _kernels().end_point_inertia(f.G, f.terms_index, f.terms_value, _floats(u), _floats(v), _floats(a),
                                     float(dv_du), float(da_du), F, J, tangent)
        return F, (J if tangent else None)

    def reference_end_point_inertia(self, u: np.ndarray, v: np.ndarray, a: np.ndarray, dv_du: float = 0.0,
                                    da_du: float = 0.0, tangent: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Specification of :meth:`end_point_inertia` (numpy)."""
        if not tangent:
            return self._end_point_force(u, v, a), None
        n = u.shape[1]
        u_rows, v_rows, a_rows = (np.repeat(x, n, axis=0) for x in (u, v, a))

        def force(dz: np.ndarray) -> np.ndarray:
            return self._end_point_force(u_rows + dz, v_rows + dv_du * dz, a_rows + da_du * dz)

        return _complex_step(force, u)

    # ------------------------------------------------------------------ gravity
    def _first_moment(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """S(q) (B, 2) kg m and dS/dq (B, n_m, 2)."""
        B, n = q.shape
        qS2 = (q @ self.S2.reshape(n, 2 * n)).reshape(B, n, 2)                         # sum_k q_k S2[k, l, :]
        S = self.S0 + q @ self.S1 + np.einsum("bl,blj->bj", q, qS2)
        return S, self.S1 + 2.0 * qS2

    def gravity_potential(self, u: np.ndarray, g: np.ndarray) -> np.ndarray:
        """V = -g . (m r + A S(q)) (n_el,), J, of the uniform field g (2,) m/s^2."""
        c, s = self._frame(u)
        S, _ = self._first_moment(u[:, 3:])
        return -(self.mass * (self.X + u[:, :2]) + _rotate(c, s, S)) @ g

    def _gravity_gradient(self, u: np.ndarray, g: np.ndarray) -> np.ndarray:
        """-dV/dx (B, n_x), with the body-frame field g_b = A^T g: (m g, g_b . Jhat S, dS/dq g_b)."""
        c, s = self._frame(u)
        S, dS = self._first_moment(u[:, 3:])
        gb = np.stack([c * g[0] + s * g[1], -s * g[0] + c * g[1]], axis=1)               # (B, 2)
        F = np.empty(u.shape, dtype=gb.dtype)
        F[:, :2] = self.mass * g
        F[:, 2] = gb[:, 1] * S[:, 0] - gb[:, 0] * S[:, 1]
        F[:, 3:] = (dS @ gb[..., None])[..., 0]
        return F

    def gravity_force(self, u: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """F = -dV/dx (n_el, n_x), N, N m, and dF/dx (n_el, n_x, n_x). Compiled kernel;
        :meth:`reference_gravity_force` is its specification."""
        F, J = _outputs(u, True)
        _kernels().gravity_force(self.mass, self.S0, self.S1, self.S2, _floats(u), _floats(g), F, J)
        return F, J

    def reference_gravity_force(self, u: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Specification of :meth:`gravity_force` (numpy)."""
        n = u.shape[1]
        return _complex_step(lambda dz: self._gravity_gradient(np.repeat(u, n, axis=0) + dz, g), u)

    def _mid_point_gravity_force(self, u0: np.ndarray, u1: np.ndarray, g: np.ndarray) -> np.ndarray:
        """-grad V(x_m) plus the correction making F . dx = V0 - V1 exact (B, n_x)."""
        dx = u1 - u0
        F = self._gravity_gradient(0.5 * (u0 + u1), g)
        remainder = (self.gravity_potential(u0, g) - self.gravity_potential(u1, g)
                     - np.einsum("bi,bi->b", dx, F))
        return F + self._correction(remainder, dx)

    def mid_point_gravity(self, u0: np.ndarray, u1: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gravity force over a step (n_el, n_x) with F . (u1 - u0) = V(u0) - V(u1) exactly, and its
        derivative w.r.t. u1 (n_el, n_x, n_x). Compiled kernel; :meth:`reference_mid_point_gravity`
        is its specification."""
        F, J = _outputs(u1, True)
        _kernels().mid_point_gravity(self.mass, self.X, self.S0, self.S1, self.S2, self.weights,
                                     self._correction_floor, _floats(u0), _floats(u1), _floats(g), F, J)
        return F, J

    def reference_mid_point_gravity(self, u0: np.ndarray, u1: np.ndarray, g: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        """Specification of :meth:`mid_point_gravity` (numpy)."""
        n = u1.shape[1]
        return _complex_step(lambda dz: self._mid_point_gravity_force(np.repeat(u0, n, axis=0),
                                                                      np.repeat(u1, n, axis=0) + dz, g), u1)


class ModalBody(ElementGroup):
    """A modal body on the frame node ``frame_node`` of the main model: one element with the DOFs
    (u_x, u_y, theta, q_1 .. q_n) in 2D (module docstring) and (u_x, u_y, u_z, psi_x, psi_y, psi_z,
    q_1 .. q_n) in 3D (the frame node's rotation vector psi; :mod:`flexmb.elements.floating_frame3d`). Its
    elastic force is K_e q; all its inertia and weight are configuration-dependent
    (:meth:`configuration_mass`)."""

    n_nodes = 1
    has_rotations = True

    def __init__(self, data: ModalBodyArrays, frame_node: int, stiffening: bool = True,
                 name: str = "modal body", damping_ratios: float | np.ndarray | None = None) -> None:
        what = f"modal body {name!r}"
        if not isinstance(data, ModalBodyArrays):
            raise ModelError(f"{what}: data must be a ModalBodyData (ModalBodyData.from_model), got "
                             f"{type(data).__name__}")
        if data.n_modes == 0:
            raise ModelError(f"{what}: its data have no modes (n_modes = 0); use a rigid body instead")
        if not isinstance(stiffening, (bool, np.bool_)):
            raise ModelError(f"{what}: stiffening must be True or False, got {stiffening!r}")
        if isinstance(frame_node, (bool, np.bool_)) or not isinstance(frame_node, numbers.Integral) or frame_node < 0:
            raise ModelError(f"{what}: frame_node must be a node index (int >= 0), got {frame_node!r}")
        dim = data.dim
        m = data.mass[:dim, :dim]
        if not np.allclose(m, m[0, 0] * np.eye(dim), rtol=1e-10, atol=0.0) or not m[0, 0] > 0.0:
            raise ModelError(f"{what}: its translational mass must be m I with m > 0 (a translation-invariant "
                             f"FE mass), got {m.tolist()}")
        self.n_internal_dofs = data.n_modes
        super().__init__(np.array([[int(frame_node)]]), dim, name)
        self.data = data
        self.stiffening = bool(stiffening)
        #: the frame node's DOFs in the element DOF vector (3 in 2D, 6 in 3D); q follows them
        self.n_frame_dofs = data.n_rigid
        #: the body's velocity fields and their Gram matrix, computed once per data and stiffening and
        #: kept with the data (``_kept_`` values are not saved in model files): every body and model
        #: made from the same data shares them (a tet10 blade of 960 elements, 17 modes: 19 s each)
        kept = data.__dict__.setdefault("_kept_velocity_fields", {})
        if self.stiffening not in kept:
            kept[self.stiffening] = BodyVelocityFields(data, self.stiffening)
        self.velocity_fields = kept[self.stiffening]
        n_f = self.n_frame_dofs
        #: the element stiffness blockdiag(0, K_e) (ndof, ndof), 1/s^2 (mass-normalised modes), constant
        self._element_stiffness = np.zeros((self.ndof, self.ndof))
        self._element_stiffness[n_f:, n_f:] = data.modal_stiffness
        #: modal damping C = diag(2 zeta_k omega_k) (n_m,), 1/s, or None
        self.modal_damping = None if damping_ratios is None else \
            2.0 * _damping_ratios(damping_ratios, data.n_modes, what) * data.omega
        modes = [f"q{k + 1}" for k in range(data.n_modes)]
        self.output_units = {**{k: "kg^1/2 m" for k in modes}, **{"Q" + k[1:]: "N kg^-1/2" for k in modes}}

    # ----------------------------------------------------------- elastic force
    def _modal_force(self, u: np.ndarray) -> np.ndarray:
        """K_e q (n_el, n_m)."""
        return u[:, self.n_frame_dofs:] @ self.data.modal_stiffness.T

    def _stiffness(self, n_el: int, factor: float = 1.0) -> np.ndarray:
        """blockdiag(0, factor K_e) (n_el, ndof, ndof), a new array."""
        return np.repeat(factor * self._element_stiffness[None], n_el, axis=0)

    def internal_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """(0 on the frame DOFs, K_e q) (n_el, ndof)."""
        return u @ self._element_stiffness.T

    def force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.internal_force(X, u), self._stiffness(len(u))

    def strain_energy(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """1/2 q^T K_e q (n_el,), J."""
        return 0.5 * np.einsum("ek,ek->e", u[:, self.n_frame_dofs:], self._modal_force(u))

    def mid_point_force(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        """K_e (q0 + q1)/2: the exact discrete gradient of the quadratic strain energy (the frame
        DOFs, rotation vectors in 3D included, take no part)."""
        return (0.5 * (u0 + u1)) @ self._element_stiffness.T

    def mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        return self.mid_point_force(X, u0, u1), self._stiffness(len(u1), 0.5)

    # ----------------------------------------------------------- stresses, outputs
    def generalized_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The modal forces K_e q (n_el, n_m), N kg^-1/2."""
        return self._modal_force(u)

    def geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        """Zero (n_el, ndof, ndof): the modal forces are linear in q, so no part of the tangent is
        linear in them; the body's stiffening comes from its inertia and weight (configuration mass),
        stiffening by interface forces is not built (linear buckling sees the body as linear)."""
        return np.zeros((len(u), self.ndof, self.ndof))

    def axial_strain(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """NaN (n_el,): a modal body has no single axial strain (its strains live in its FE mesh)."""
        return np.full(len(u), np.nan)

    def element_outputs(self, X: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        """The modal coordinates ``q1..`` (kg^1/2 m) and modal forces ``Q1..`` = K_e q (N kg^-1/2), (n_el,) each."""
        Q = self._modal_force(u)
        out = {f"q{k + 1}": u[:, self.n_frame_dofs + k].copy() for k in range(self.data.n_modes)}
        out.update({f"Q{k + 1}": Q[:, k] for k in range(self.data.n_modes)})
        return out

    # ----------------------------------------------------------- modal damping
    @property
    def damped(self) -> bool:
        return self.modal_damping is not None or self.rayleigh is not None

    def _check_rayleigh(self) -> None:
        if self.rayleigh is not None:
            # its alpha M would act on the (empty) constant mass and beta on no strain rate: no effect
            raise ModelError(f"modal body {self.name!r}: Rayleigh damping does not apply to a modal body; give "
                             "damping_ratios to add_modal_body (modal damping)")

    def mid_point_damping(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray, dt: float, tangent: bool
                          ) -> tuple[np.ndarray, np.ndarray | None]:
        """Modal damping over a mid-point step: C (q1 - q0) / dt on the modal coordinates, C =
        diag(2 zeta_k omega_k) (the modes are mass-normalised); it dissipates (dq . C dq) / dt >= 0 over
        the step. The modal coordinates are body-frame quantities, so the frame's rigid motion is not
        damped. With ``tangent`` also its derivative C / dt."""
        n_f = self.n_frame_dofs
        return self._modal_damping_force((u1[:, n_f:] - u0[:, n_f:]) / dt, 1.0 / dt, tangent)

    def damping_force(self, X: np.ndarray, u: np.ndarray, v: np.ndarray, dv_du: float, tangent: bool
                      ) -> tuple[np.ndarray, np.ndarray | None]:
        """Modal damping C q' at the state (u, v) and its derivative dv_du C along the scheme."""
        return self._modal_damping_force(v[:, self.n_frame_dofs:], dv_du, tangent)

    def _modal_damping_force(self, rate: np.ndarray, factor: float, tangent: bool
                             ) -> tuple[np.ndarray, np.ndarray | None]:
        self._check_rayleigh()
        c, n_f = self.modal_damping, self.n_frame_dofs
        force = np.zeros((rate.shape[0], self.ndof))
        force[:, n_f:] = rate * c
        if not tangent:
            return force, None
        K = np.zeros((rate.shape[0], self.ndof, self.ndof))
        K[:, n_f + np.arange(c.size), n_f + np.arange(c.size)] = factor * c
        return force, K

    # ---------------------------------------------------------------- inertia
    def mass_matrix(self, X: np.ndarray) -> np.ndarray:
        """Zeros (n_el, ndof, ndof): all the body's inertia depends on the configuration."""
        return np.zeros((self.n_elements, self.ndof, self.ndof))

    def configuration_mass(self, X: np.ndarray):
        """The body's inertia and weight kernels (:class:`FloatingFrameMass` in 2D,
        :class:`~flexmb.elements.floating_frame3d.FloatingFrameMass3D` in 3D); X (n_el, 1, dim) the frame
        node's reference position."""
        if self.dim == 2:
            return FloatingFrameMass(self.velocity_fields, X)
        from flexmb.elements.floating_frame3d import FloatingFrameMass3D

        return FloatingFrameMass3D(self.velocity_fields, X)

    # ---------------------------------------------------------- mesh recovery
    def deformed_positions(self, X: np.ndarray, u_e: np.ndarray) -> np.ndarray:
        """Positions (n_fe_nodes, dim), m, of the body's FE nodes, r + A (X_i + Phi_i q), from the
        frame node's reference position X (dim,) and the element DOF vector u_e (ndof,); A is the
        frame's rotation (A(theta) in 2D, exp(hat(psi)) in 3D). The second-order displacement field of
        the stiffening is not added (it is known only through its projections on the unit loads)."""
        u_e = np.asarray(u_e, dtype=float)
        data, dim, n_f = self.data, self.dim, self.n_frame_dofs
        tr = data.component.assembly.dofs.translations()                               # (n_fe_nodes, dim)
        local = data.positions[:, :dim] + (data.basis @ u_e[n_f:])[tr]                 # (n_fe_nodes, dim)
        if dim == 2:
            c, s = np.cos(u_e[2]), np.sin(u_e[2])
            A = np.array([[c, -s], [s, c]])
        else:
            A = exp_map(u_e[3:6])
        return np.asarray(X, dtype=float) + u_e[:dim] + local @ A.T

    def node_rotations(self, u_e: np.ndarray) -> np.ndarray:
        """Rotations (n_fe_nodes,), rad, of the body's FE nodes (2D): theta plus the modal rotation at
        the nodes that have a rotation DOF, theta at the others."""
        if self.dim != 2:
            raise ModelError(f"modal body {self.name!r}: node_rotations gives planar angles, the body is 3D")
        u_e = np.asarray(u_e, dtype=float)
        dofs = self.data.component.assembly.dofs
        out = np.full(len(dofs.first), u_e[2])
        nodes = np.flatnonzero(dofs.has_rotations)
        out[nodes] += (self.data.basis @ u_e[3:])[dofs.first[nodes] + 2]
        return out


def _damping_ratios(value: float | np.ndarray, n_modes: int, what: str) -> np.ndarray:
    """Modal damping ratios (n_m,) from one value or one per mode, each finite and >= 0."""
    try:
        zeta = np.broadcast_to(np.asarray(value, dtype=float), (n_modes,)).copy()
    except (TypeError, ValueError):
        raise ModelError(f"{what}: damping_ratios must be one number or one per mode ({n_modes}), got "
                         f"{value!r}") from None
    if not np.all(np.isfinite(zeta)) or np.any(zeta < 0.0):
        raise ModelError(f"{what}: damping_ratios must be finite and >= 0, got {zeta.tolist()}")
    return zeta
