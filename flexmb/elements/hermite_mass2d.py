"""Cubic (Hermitian) consistent mass of planar co-rotational beams, with energy-conserving inertia.

The centre line of an element is interpolated with cubic Hermite functions of the nodal
positions and the nodal "directors" ``d_i = l0 R(theta_i) e0`` (e0 the reference axis, so the
director turns with the node and the interpolation is exact for rigid motions):

    x(xi) = H1 x_p + H2 d_p + H3 x_q + H4 d_q,    xi in [0, 1],

and the kinetic energy ``T = 1/2 rho_A l0 sum_ab m_ab Qdot_a . Qdot_b`` with the Hermite
coefficients ``m = [[156, 22, 54, -13], [22, 4, 13, -3], [54, 13, 156, -22], [-13, -3, -22, 4]] / 420``
over ``Q = [x_p, d_p, x_q, d_q]`` and ``ddot_i = thetadot_i k x d_i``. In the element DOFs
``q = [x_p, theta_p, x_q, theta_q]`` this is ``T = 1/2 qdot^T M(q) qdot`` with a mass matrix that
depends on the nodal angles: the cubic consistent mass of the classic beam element, turned
with the nodes (Meijaard 1993 uses this inertia; linear or lumped mass misses the element's own
bending under distributed inertia, 4/384 instead of 5/384 q L^4/EI for a pinned rod).

Mid-point scheme (energy conserving). With ``p = M(q) qdot`` and ``dq = dt (qdot_n + qdot_{n+1}) / 2``
the inertia force of the step is

    F = (p_{n+1} - p_n) / dt - D,    D = 1/2 grad_bar f,   f(q) = qdot_n^T M(q) qdot_{n+1},

with grad_bar an exact discrete gradient (``grad_bar f . dq = f(q_{n+1}) - f(q_n)``). Then
``F . dq = T_{n+1} - T_n`` exactly, because
``qdot_m . (M_1 qdot_1 - M_0 qdot_0) = T_1 - T_0 + 1/2 qdot_0^T (M_1 - M_0) qdot_1``. f depends on
the angles through ``n(phi_i) = k x d_i / l0`` (phi_i = alpha0 + theta_i), whose divided
difference is ``sinc(dphi/2) n'(phi_m)``, and through ``cos(theta_p - theta_q)``, whose divided
difference is ``-sinc(dpsi/2) sin(psi_m)``; both are exact. End-point schemes (Newmark) use
``F = M a + (dp/dq) qdot - dT/dq`` at the end of the step.

Gravity. The element's weight acts on the same cubic centre line, so a uniform field g has the
potential ``V = -rho_A int g . x ds = -m g . (x_p/2 + d_p/12 + x_q/2 - d_q/12)`` (m = rho_A l0; the
integrals of the Hermite functions over [0, 1] are 1/2, 1/12, 1/2, -1/12): half the weight at each
node and the end moments ``+-(m l0 / 12) g . n(phi_i)``, in the reference configuration the
classic consistent moments ``-+q l0^2 / 12``, turning with the nodes (a configuration-dependent dead
load with its own load stiffness). The mid-point scheme uses its exact discrete gradient,
``(m l0 / 12) sinc(dphi/2) g . n(phi_m)``, so the work of gravity over a step is exactly -dV.

Tangents of the inertia are taken by complex-step differentiation of these (analytic) kernels:
exact to round-off and checked against finite differences in the tests; the gravity tangents are
analytic.
"""
from __future__ import annotations

import numpy as np

#: Hermite mass coefficients over [x_p, d_p, x_q, d_q] (multiply by rho_A l0)
HERMITE = np.array([[156.0, 22.0, 54.0, -13.0], [22.0, 4.0, 13.0, -3.0],
                    [54.0, 13.0, 156.0, -22.0], [-13.0, -3.0, -22.0, 4.0]]) / 420.0
_STEP = 1e-30                                     # complex step


def _sinc(x: np.ndarray) -> np.ndarray:
    """sin(x)/x, analytic (also for complex arguments of tiny imaginary part)."""
    small = np.abs(np.real(x)) < 1e-4
    xs = np.where(small, 1.0, x)
    return np.where(small, 1.0 - x**2 / 6.0 + x**4 / 120.0, np.sin(xs) / xs)


def _sinc_derivative(x: np.ndarray) -> np.ndarray:
    """d/dx (sin(x)/x) = (cos x - sinc x) / x, with its series near x = 0."""
    small = np.abs(x) < 1e-4
    xs = np.where(small, 1.0, x)
    return np.where(small, -x / 3.0 + x**3 / 30.0, (np.cos(xs) - np.sin(xs) / xs) / xs)


def _normal(phi: np.ndarray) -> np.ndarray:
    """n(phi) = (-sin phi, cos phi), (..., 2)."""
    return np.stack([-np.sin(phi), np.cos(phi)], axis=-1)


class HermiteMass2D:
    """Batched kernels for elements with reference axes of angle ``alpha0`` (n_el,), lengths
    ``l0`` (n_el,) and mass per length ``rho_A`` (n_el,). DOF vectors are (n_el, 6):
    [ux_p, uy_p, theta_p, ux_q, uy_q, theta_q]; X (n_el, 2, 2) reference node positions."""

    def __init__(self, X: np.ndarray, rho_A: np.ndarray) -> None:
        X21 = X[:, 1] - X[:, 0]
        self.X = X
        self.l0 = np.linalg.norm(X21, axis=1)
        self.alpha0 = np.arctan2(X21[:, 1], X21[:, 0])
        self.mass = rho_A * self.l0                                           # (n_el,) kg
        self._rho_A = rho_A
        self._stacked: HermiteMass2D | None = None

    def _six_copies(self) -> "HermiteMass2D":
        """The same elements six times over (for all complex-step directions in one call)."""
        if self._stacked is None:
            self._stacked = HermiteMass2D(np.tile(self.X, (6, 1, 1)), np.tile(self._rho_A, 6))
        return self._stacked

    def _hermite_velocities(self, u: np.ndarray, v: np.ndarray):
        """Q (n_el, 4, 2), Qdot (n_el, 4, 2) and the unit normals n_i (n_el, 2, 2) at (u, v)."""
        x = self.X + u[:, [[0, 1], [3, 4]]]                                     # (n_el, 2, 2)
        phi = self.alpha0[:, None] + u[:, [2, 5]]                              # (n_el, 2)
        n = _normal(phi)                                                       # (n_el, 2, 2)
        d = self.l0[:, None, None] * np.stack([np.cos(phi), np.sin(phi)], axis=-1)
        ddot = self.l0[:, None, None] * v[:, [2, 5]][..., None] * n
        Q = np.stack([x[:, 0], d[:, 0], x[:, 1], d[:, 1]], axis=1)
        Qdot = np.stack([v[:, 0:2], ddot[:, 0], v[:, 3:5], ddot[:, 1]], axis=1)
        return Q, Qdot, n

    def momentum(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """p = M(q) qdot (n_el, 6): dT/dqdot."""
        _, Qdot, n = self._hermite_velocities(u, v)
        P = self.mass[:, None, None] * np.einsum("ab,ebi->eai", HERMITE, Qdot)  # (n_el, 4, 2)
        p = np.empty(u.shape, dtype=P.dtype)
        p[:, 0:2], p[:, 3:5] = P[:, 0], P[:, 2]
        p[:, 2] = self.l0 * np.einsum("ei,ei->e", n[:, 0], P[:, 1])
        p[:, 5] = self.l0 * np.einsum("ei,ei->e", n[:, 1], P[:, 3])
        return p

    def kinetic_energy(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """T (n_el,), J."""
        return 0.5 * np.einsum("ej,ej->e", v, self.momentum(u, v))

    def angular_momentum(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Angular momentum about the origin (n_el,), kg m^2/s: rho_A l0 sum m_ab Q_a x Qdot_b."""
        Q, Qdot, _ = self._hermite_velocities(u, v)
        cross = Q[:, :, None, 0] * Qdot[:, None, :, 1] - Q[:, :, None, 1] * Qdot[:, None, :, 0]
        return self.mass * np.einsum("ab,eab->e", HERMITE, cross)

    def mass_matrix(self, u: np.ndarray) -> np.ndarray:
        """M(q) (n_el, 6, 6): p is linear in qdot."""
        cols = [self.momentum(u, np.broadcast_to(np.eye(6)[j], u.shape)) for j in range(6)]
        return np.stack(cols, axis=2)

    # ------------------------------------------------------------ mid-point
    def _mid_point_force(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, dt: float) -> np.ndarray:
        v1 = 2.0 * (u1 - u0) / dt - v0
        F = (self.momentum(u1, v1) - self.momentum(u0, v0)) / dt
        # D = 1/2 grad_bar f, f(q) = qdot_0^T M(q) qdot_1 = A . n_p + B . n_q + C cos(psi) + const
        m, l0 = self.mass, self.l0
        A = (m * l0)[:, None] * (v0[:, 2, None] * (HERMITE[1, 0] * v1[:, 0:2] + HERMITE[1, 2] * v1[:, 3:5])
                                 + v1[:, 2, None] * (HERMITE[0, 1] * v0[:, 0:2] + HERMITE[2, 1] * v0[:, 3:5]))
        B = (m * l0)[:, None] * (v0[:, 5, None] * (HERMITE[3, 0] * v1[:, 0:2] + HERMITE[3, 2] * v1[:, 3:5])
                                 + v1[:, 5, None] * (HERMITE[0, 3] * v0[:, 0:2] + HERMITE[2, 3] * v0[:, 3:5]))
        C = m * l0**2 * HERMITE[1, 3] * (v0[:, 2] * v1[:, 5] + v0[:, 5] * v1[:, 2])
        dphi = u1[:, [2, 5]] - u0[:, [2, 5]]                                   # (n_el, 2)
        phi_m = self.alpha0[:, None] + 0.5 * (u0[:, [2, 5]] + u1[:, [2, 5]])
        dn = _sinc(0.5 * dphi)[..., None] * np.stack([-np.cos(phi_m), -np.sin(phi_m)], axis=-1)
        dpsi = dphi[:, 0] - dphi[:, 1]
        psi_m = phi_m[:, 0] - phi_m[:, 1]
        dcos = -_sinc(0.5 * dpsi) * np.sin(psi_m)
        F[:, 2] = F[:, 2] - 0.5 * (np.einsum("ei,ei->e", A, dn[:, 0]) + C * dcos)
        F[:, 5] = F[:, 5] - 0.5 * (np.einsum("ei,ei->e", B, dn[:, 1]) - C * dcos)
        return F

    def mid_point_inertia(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, dt: float
                          ) -> tuple[np.ndarray, np.ndarray]:
        """Inertia force F (n_el, 6) of the step and dF/du1 (n_el, 6, 6) (v1 = 2 (u1 - u0)/dt - v0)."""
        F = self._mid_point_force(u0, u1, v0, dt)
        n = len(u1)
        # all six complex-step directions at once: copy j of the elements moves DOF j
        u1c = np.tile(u1, (6, 1)).astype(complex)                             # (6 n_el, 6)
        u1c[np.arange(6 * n), np.repeat(np.arange(6), n)] += 1j * _STEP
        dF = self._six_copies()._mid_point_force(np.tile(u0, (6, 1)), u1c, np.tile(v0, (6, 1)), dt)
        J = (dF.imag / _STEP).reshape(6, n, 6).transpose(1, 2, 0)             # (n_el, 6, 6)
        return F, J

    # -------------------------------------------------------------- gravity
    def gravity_potential(self, u: np.ndarray, g: np.ndarray) -> np.ndarray:
        """V (n_el,), J, of the uniform field g (2,) in m/s^2."""
        x = self.X + u[:, [[0, 1], [3, 4]]]                                     # (n_el, 2, 2)
        phi = self.alpha0[:, None] + u[:, [2, 5]]                              # (n_el, 2)
        d = self.l0[:, None, None] * np.stack([np.cos(phi), np.sin(phi)], axis=-1)
        centroid = 0.5 * (x[:, 0] + x[:, 1]) + (d[:, 0] - d[:, 1]) / 12.0       # (n_el, 2)
        return -self.mass * (centroid @ g)

    def _end_moment(self, phi: np.ndarray, g: np.ndarray) -> np.ndarray:
        """(m l0 / 12) g . n(phi) (n_el, 2): the gravity moment at node p (sign + at p, - at q)."""
        return (self.mass * self.l0 / 12.0)[:, None] * (_normal(phi) @ g)

    def gravity_force(self, u: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Generalized gravity force F = -dV/dq (n_el, 6), N and N m, and its derivative dF/dq
        (n_el, 6, 6) (only the angles enter: dF_theta/dtheta = -(m l0 / 12) g . e(phi))."""
        phi = self.alpha0[:, None] + u[:, [2, 5]]                              # (n_el, 2)
        F = np.zeros(u.shape)
        F[:, [0, 1]] = F[:, [3, 4]] = 0.5 * self.mass[:, None] * g[None, :]
        moment = self._end_moment(phi, g)
        F[:, 2], F[:, 5] = moment[:, 0], -moment[:, 1]
        # d n(phi)/dphi = -e(phi) = n(phi + pi/2)
        slope = self._end_moment(phi + 0.5 * np.pi, g)
        dF = np.zeros(u.shape + (6,))
        dF[:, 2, 2], dF[:, 5, 5] = slope[:, 0], -slope[:, 1]
        return F, dF

    def mid_point_gravity(self, u0: np.ndarray, u1: np.ndarray, g: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray]:
        """Gravity force over a step (n_el, 6) with ``F . (u1 - u0) = V(u0) - V(u1)`` exactly, and
        its derivative w.r.t. u1 (n_el, 6, 6)."""
        dphi = u1[:, [2, 5]] - u0[:, [2, 5]]                                   # (n_el, 2)
        phi_m = self.alpha0[:, None] + 0.5 * (u0[:, [2, 5]] + u1[:, [2, 5]])
        s, ds = _sinc(0.5 * dphi), 0.5 * _sinc_derivative(0.5 * dphi)
        moment = s * self._end_moment(phi_m, g)
        F = np.zeros(u1.shape)
        F[:, [0, 1]] = F[:, [3, 4]] = 0.5 * self.mass[:, None] * g[None, :]
        F[:, 2], F[:, 5] = moment[:, 0], -moment[:, 1]
        slope = ds * self._end_moment(phi_m, g) + 0.5 * s * self._end_moment(phi_m + 0.5 * np.pi, g)
        dF = np.zeros(u1.shape + (6,))
        dF[:, 2, 2], dF[:, 5, 5] = slope[:, 0], -slope[:, 1]
        return F, dF

    # ------------------------------------------------------------ end point
    def end_point_force(self, u: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """M a + (dp/dq) qdot - dT/dq (n_el, 6) at one state: the Lagrange inertia force."""
        F = self.momentum(u, a)                                                # M(q) a
        uc = u.astype(complex)
        # (dp/dq) qdot: directional complex-step derivative of p along qdot
        F = F + self.momentum(uc + 1j * _STEP * v, v).imag / _STEP
        for j in (2, 5):                                                       # T depends on the angles only
            uc[:, j] += 1j * _STEP
            F[:, j] -= self.kinetic_energy(uc, v).imag / _STEP
            uc[:, j] -= 1j * _STEP
        return F
