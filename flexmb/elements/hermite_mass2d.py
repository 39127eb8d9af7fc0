"""Cubic (Hermitian) consistent mass of planar co-rotational beams, with energy-conserving inertia.

The centre line of an element is interpolated with cubic Hermite functions of the nodal
positions and the nodal "directors" ``d_i = l0 R(theta_i) e0`` (e0 the reference axis, so the
director turns with the node and the interpolation is exact for rigid motions):

    x(xi) = H1 x_p + H2 d_p + H3 x_q + H4 d_q,    xi in [0, 1],

and the kinetic energy ``T = 1/2 rho_A l0 sum_ab m_ab Qdot_a . Qdot_b`` with the Hermite
coefficients ``m = [[156, 22, 54, -13], [22, 4, 13, -3], [54, 13, 156, -22], [-13, -3, -22, 4]] / 420``
over ``Q = [x_p, d_p, x_q, d_q]``: a constant mass in these coordinates. In the element DOFs
``q = [x_p, theta_p, x_q, theta_q]``, with ``ddot_i = thetadot_i k x d_i``, this is
``T = 1/2 qdot^T M(q) qdot`` with a mass matrix that depends on the nodal angles: the cubic
consistent mass of the classic beam element, turned with the nodes (Meijaard 1993 uses this
inertia; linear or lumped mass misses the element's own bending under distributed inertia,
4/384 instead of 5/384 q L^4/EI for a pinned rod).

Mid-point scheme: the director form (energy and momentum conserving, stable for large steps).
The inertia is integrated in Q, where the mass is constant, as for rotationless director
formulations (Betsch & Steinmann 2001, 2002): the directors obey the mid-point rule of the
translations, ``d_{n+1} - d_n = dt (ddot_n + ddot_{n+1}) / 2``, and the director velocities may
carry a component along the director, ``ddot_i = (s_i + omega_i k x) d_i``: the director's
stretch rate s_i (1/s), zero in the continuum and O(dt^2) in the scheme, is the reaction of the
constraint |d_i| = l0 on the velocity level. In complex notation (d = l0 e^{i phi}, z = s + i omega)
the step relation is

    z_{n+1} = 2 (1 - e^{-i dtheta}) / dt - z_n e^{-i dtheta},      dtheta = theta_{n+1} - theta_n,

the same for every element at a node (:func:`reference_director_rates`). The inertia force of the step is
``F = Bbar^T (P_{n+1} - P_n) / dt`` with the Q momenta ``P = rho_A l0 m Qdot`` and
``Bbar = dQ / dq`` of the step (identity on translations, ``(d_{n+1} - d_n) / dtheta`` on angles),
whose radial part (the director constraint's reaction) drops out. Then

    F . (q_{n+1} - q_n) = (P_{n+1} - P_n) . Qdot_m = T_{n+1} - T_n     exactly,

T counting the stretch rates, and the angular momentum ``sum_a Q_a x P_a`` changes only by the
torque of the other forces. Why not the plain mid-point rule on q: with ``thetadot`` alone the
Q velocities of the step do not average to ``(Q_{n+1} - Q_n) / dt``; an exact discrete gradient
then restores energy, but a stiff element spinning at omega dt = 0.48 has a step amplification
of 1.25 in a velocity mode (measured), and the spin-up failed at t = 11-14 s for any dt >= 0.04 s.
A node's own rotary inertia J takes the same form (:func:`reference_rotary_inertia_force`), so the whole
kinetic energy of the node is ``J (s^2 + omega^2) / 2``. End-point schemes (Newmark) use
``F = M a + (dp/dq) qdot - dT/dq`` at the end of the step.

Gravity. The element's weight acts on the same cubic centre line, so a uniform field g has the
potential ``V = -rho_A int g . x ds = -m g . (x_p/2 + d_p/12 + x_q/2 - d_q/12)`` (m = rho_A l0; the
integrals of the Hermite functions over [0, 1] are 1/2, 1/12, 1/2, -1/12): half the weight at each
node and the end moments ``+-(m l0 / 12) g . n(phi_i)``, in the reference configuration the
classic consistent moments ``-+q l0^2 / 12``, turning with the nodes (a configuration-dependent dead
load with its own load stiffness). The mid-point scheme uses its exact discrete gradient,
``(m l0 / 12) sinc(dphi/2) g . n(phi_m)``, so the work of gravity over a step is exactly -dV.

Tangents: analytic (mid-point inertia and gravity), or complex-step differentiation (the end-point
force of Newmark); all checked against finite differences in the tests. The mid-point inertia runs
as a compiled kernel (:mod:`flexmb.compiled.hermite_mass2d`); :func:`reference_mid_point_inertia` here
is its specification, as the other ``reference_`` functions are of the kernels :func:`director_step` calls.
"""
from __future__ import annotations

import numpy as np

from flexmb.rotations import sinc, sinc_derivative

#: Hermite mass coefficients over [x_p, d_p, x_q, d_q] (multiply by rho_A l0)
HERMITE = np.array([[156.0, 22.0, 54.0, -13.0], [22.0, 4.0, 13.0, -3.0],
                    [54.0, 13.0, 156.0, -22.0], [-13.0, -3.0, -22.0, 4.0]]) / 420.0
_STEP = 1e-30                                     # complex step


def _normal(phi: np.ndarray) -> np.ndarray:
    """n(phi) = (-sin phi, cos phi), (..., 2)."""
    return np.stack([-np.sin(phi), np.cos(phi)], axis=-1)


def director_step(dtheta: np.ndarray, omega0: np.ndarray, stretch0: np.ndarray, J: np.ndarray, dt: float
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The step of director nodes (arrays (n,)): end-of-step angular velocity omega_{n+1},
    stretch rate s_{n+1}, d omega_{n+1} / d dtheta (:func:`reference_director_rates`) and the
    inertia force of their constant rotary inertia J with its derivative w.r.t. dtheta
    (:func:`reference_rotary_inertia_force`), from the compiled kernel."""
    from flexmb.compiled import hermite_mass2d as compiled

    out = np.empty((5,) + dtheta.shape)
    compiled.director_step(dtheta, omega0, stretch0, J, dt, out[0], out[1], out[2], out[3], out[4])
    return out[0], out[1], out[2], out[3], out[4]


def reference_director_rates(dtheta: np.ndarray, omega0: np.ndarray, stretch0: np.ndarray, dt: float
                             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """End-of-step angular velocity omega_{n+1}, director stretch rate s_{n+1} and
    d omega_{n+1} / d dtheta of director nodes (arrays of any shape), from
    ``z_{n+1} = 2 (1 - e^{-i dtheta}) / dt - z_n e^{-i dtheta}``, z = s + i omega (module docstring)."""
    c, s = np.cos(dtheta), np.sin(dtheta)
    omega1 = 2.0 / dt * s - omega0 * c + stretch0 * s
    stretch1 = 2.0 / dt * (1.0 - c) - stretch0 * c - omega0 * s
    return omega1, stretch1, 2.0 / dt * c + omega0 * s + stretch0 * c


def reference_rotary_inertia_force(J: np.ndarray, dtheta: np.ndarray, omega0: np.ndarray, stretch0: np.ndarray,
                                   dt: float) -> tuple[np.ndarray, np.ndarray]:
    """Inertia force (N m) of a constant rotary inertia J (kg m^2) at director nodes over a step,
    and its derivative w.r.t. dtheta: ``F = bhat . J (Vhat_{n+1} - Vhat_n) / dt`` for a unit
    director (so ``F dtheta = J (|z_{n+1}|^2 - |z_n|^2) / 2``),

        F = (2 J / dt) [(1 - cos dtheta) / dtheta (2 / dt + s_n) - omega_n sin(dtheta) / dtheta],

    which tends to ``J (omega_{n+1} - omega_n) / dt`` of the additive rule for small dtheta."""
    half = 0.5 * dtheta
    sc = sinc(half)
    one_minus_cos = half * sc**2                          # (1 - cos dtheta) / dtheta
    d_one_minus_cos = 0.5 * sc**2 + half * sc * sinc_derivative(half)
    F = 2.0 * J / dt * (one_minus_cos * (2.0 / dt + stretch0) - omega0 * sinc(dtheta))
    dF = 2.0 * J / dt * (d_one_minus_cos * (2.0 / dt + stretch0) - omega0 * sinc_derivative(dtheta))
    return F, dF


class HermiteMass2D:
    """Batched kernels for elements with reference axes of angle ``alpha0`` (n_el,), lengths
    ``l0`` (n_el,) and mass per length ``rho_A`` (n_el,). DOF vectors are (n_el, 6):
    [ux_p, uy_p, theta_p, ux_q, uy_q, theta_q]; X (n_el, 2, 2) reference node positions.
    Director stretch rates ``stretch`` are (n_el, 2) (nodes p, q), zero by default."""

    def __init__(self, X: np.ndarray, rho_A: np.ndarray) -> None:
        X21 = X[:, 1] - X[:, 0]
        self.X = X
        self.l0 = np.linalg.norm(X21, axis=1)
        self.alpha0 = np.arctan2(X21[:, 1], X21[:, 0])
        self.mass = rho_A * self.l0                                           # (n_el,) kg

    def _hermite_velocities(self, u: np.ndarray, v: np.ndarray, stretch: np.ndarray | None = None):
        """Q (n_el, 4, 2), Qdot (n_el, 4, 2) and the unit normals n_i (n_el, 2, 2) at (u, v)."""
        x = self.X + u[:, [[0, 1], [3, 4]]]                                     # (n_el, 2, 2)
        phi = self.alpha0[:, None] + u[:, [2, 5]]                              # (n_el, 2)
        n = _normal(phi)                                                       # (n_el, 2, 2)
        d = self.l0[:, None, None] * np.stack([np.cos(phi), np.sin(phi)], axis=-1)
        ddot = self.l0[:, None, None] * v[:, [2, 5]][..., None] * n
        if stretch is not None:
            ddot = ddot + stretch[..., None] * d
        Q = np.stack([x[:, 0], d[:, 0], x[:, 1], d[:, 1]], axis=1)
        Qdot = np.stack([v[:, 0:2], ddot[:, 0], v[:, 3:5], ddot[:, 1]], axis=1)
        return Q, Qdot, n

    def momentum(self, u: np.ndarray, v: np.ndarray, stretch: np.ndarray | None = None) -> np.ndarray:
        """p = M(q) qdot (n_el, 6): dT/dqdot (the stretch rates add their director momentum)."""
        _, Qdot, n = self._hermite_velocities(u, v, stretch)
        P = self.mass[:, None, None] * np.einsum("ab,ebi->eai", HERMITE, Qdot)  # (n_el, 4, 2)
        p = np.empty(u.shape, dtype=P.dtype)
        p[:, 0:2], p[:, 3:5] = P[:, 0], P[:, 2]
        p[:, 2] = self.l0 * np.einsum("ei,ei->e", n[:, 0], P[:, 1])
        p[:, 5] = self.l0 * np.einsum("ei,ei->e", n[:, 1], P[:, 3])
        return p

    def kinetic_energy(self, u: np.ndarray, v: np.ndarray, stretch: np.ndarray | None = None) -> np.ndarray:
        """T (n_el,), J: 1/2 rho_A l0 Qdot^T m Qdot."""
        _, Qdot, _ = self._hermite_velocities(u, v, stretch)
        return 0.5 * self.mass * np.einsum("ab,eai,ebi->e", HERMITE, Qdot, Qdot)

    def angular_momentum(self, u: np.ndarray, v: np.ndarray, stretch: np.ndarray | None = None) -> np.ndarray:
        """Angular momentum about the origin (n_el,), kg m^2/s: rho_A l0 sum m_ab Q_a x Qdot_b."""
        Q, Qdot, _ = self._hermite_velocities(u, v, stretch)
        cross = Q[:, :, None, 0] * Qdot[:, None, :, 1] - Q[:, :, None, 1] * Qdot[:, None, :, 0]
        return self.mass * np.einsum("ab,eab->e", HERMITE, cross)

    def energy_and_angular_momentum(self, u: np.ndarray, v: np.ndarray, stretch: np.ndarray | None = None
                                    ) -> tuple[float, float]:
        """The sums over the elements of :meth:`kinetic_energy` (J) and :meth:`angular_momentum`
        (kg m^2/s), by a compiled kernel (recorded every step); real arrays only (the per-element
        methods serve the complex-step derivatives)."""
        from flexmb.compiled import hermite_mass2d as compiled

        stretch = np.zeros((len(u), 2)) if stretch is None else stretch
        return compiled.energy_and_momentum(self.X, self.alpha0, self.l0, self.mass, u, v, stretch)

    def mass_matrix(self, u: np.ndarray) -> np.ndarray:
        """M(q) (n_el, 6, 6): p is linear in qdot."""
        cols = [self.momentum(u, np.broadcast_to(np.eye(6)[j], u.shape)) for j in range(6)]
        return np.stack(cols, axis=2)

    # ------------------------------------------------------------ mid-point
    def mid_point_inertia(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, stretch0: np.ndarray,
                          dt: float, tangent: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Inertia force F (n_el, 6) of the step (director form, module docstring) and dF/du1
        (n_el, 6, 6), or None without ``tangent``; stretch0 (n_el, 2) the stretch rates at t_n."""
        from flexmb.compiled import hermite_mass2d as compiled

        n = len(u0)
        F = np.empty((n, 6))
        J = np.empty((n, 6, 6)) if tangent else np.empty((0, 6, 6))
        compiled.mid_point_inertia(self.alpha0, self.l0, self.mass, u0, u1, v0, stretch0, dt, F, J, tangent)
        return F, (J if tangent else None)

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
        s, ds = sinc(0.5 * dphi), 0.5 * sinc_derivative(0.5 * dphi)
        moment = s * self._end_moment(phi_m, g)
        F = np.zeros(u1.shape)
        F[:, [0, 1]] = F[:, [3, 4]] = 0.5 * self.mass[:, None] * g[None, :]
        F[:, 2], F[:, 5] = moment[:, 0], -moment[:, 1]
        slope = ds * self._end_moment(phi_m, g) + 0.5 * s * self._end_moment(phi_m + 0.5 * np.pi, g)
        dF = np.zeros(u1.shape + (6,))
        dF[:, 2, 2], dF[:, 5, 5] = slope[:, 0], -slope[:, 1]
        return F, dF

    # ------------------------------------------------------------ end point
    def end_point_inertia(self, u: np.ndarray, v: np.ndarray, a: np.ndarray, dv_du: float = 0.0, da_du: float = 0.0,
                          tangent: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """The Lagrange inertia force at one state (n_el, 6), in Q form ``Bbar^T rho_A l0 m Qddot``
        (the terms of dBbar/dt and dT/dq cancel for directors of constant length), and its
        derivative along an end-point scheme's kinematics (v, a moving with u at the rates dv_du,
        da_du), ``dF/du + dv_du dF/dv + da_du dF/da`` (n_el, 6, 6), or None without ``tangent``.
        Compiled kernel; :meth:`end_point_force` is its specification."""
        from flexmb.compiled import hermite_mass2d as compiled

        F = np.empty(u.shape)
        J = np.empty(u.shape + (6,)) if tangent else np.empty((0, 6, 6))
        compiled.end_point_inertia(self.alpha0, self.l0, self.mass, u, v, a, dv_du, da_du, F, J, tangent)
        return F, (J if tangent else None)

    def end_point_force(self, u: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """M a + (dp/dq) qdot - dT/dq (n_el, 6) at one state: the Lagrange inertia force, by complex
        steps of :meth:`momentum` and :meth:`kinetic_energy` (the specification of
        :meth:`end_point_inertia`)."""
        F = self.momentum(u, a)                                                # M(q) a
        uc = u.astype(complex)
        # (dp/dq) qdot: directional complex-step derivative of p along qdot
        F = F + self.momentum(uc + 1j * _STEP * v, v).imag / _STEP
        for j in (2, 5):                                                       # T depends on the angles only
            uc[:, j] += 1j * _STEP
            F[:, j] -= self.kinetic_energy(uc, v).imag / _STEP
            uc[:, j] -= 1j * _STEP
        return F


def reference_mid_point_inertia(kernels: HermiteMass2D, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray,
                                stretch0: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """Specification of :meth:`HermiteMass2D.mid_point_inertia` (numpy; the tests check the
    compiled kernel against it): F = Bbar^T (P_{n+1} - P_n) / dt and its derivative w.r.t. u1."""
    l0, m = kernels.l0, kernels.mass
    dtheta = u1[:, [2, 5]] - u0[:, [2, 5]]                                      # (n_el, 2)
    omega1, stretch1, _ = reference_director_rates(dtheta, v0[:, [2, 5]], stretch0, dt)
    v1 = 2.0 * (u1 - u0) / dt - v0
    v1[:, [2, 5]] = omega1
    _, Qdot0, _ = kernels._hermite_velocities(u0, v0, stretch0)
    _, Qdot1, _ = kernels._hermite_velocities(u1, v1, stretch1)
    dP = m[:, None, None] * np.einsum("ab,ebi->eai", HERMITE, Qdot1 - Qdot0)    # (n_el, 4, 2)
    phi_m = kernels.alpha0[:, None] + 0.5 * (u0[:, [2, 5]] + u1[:, [2, 5]])
    sc, dsc = sinc(0.5 * dtheta), sinc_derivative(0.5 * dtheta)
    b = (l0[:, None] * sc)[..., None] * _normal(phi_m)                          # (d_1 - d_0) / dtheta
    e_m = np.stack([np.cos(phi_m), np.sin(phi_m)], axis=-1)
    db = 0.5 * l0[:, None, None] * (dsc[..., None] * _normal(phi_m) - sc[..., None] * e_m)
    F = np.empty_like(u1)
    F[:, 0:2], F[:, 3:5] = dP[:, 0] / dt, dP[:, 2] / dt
    F[:, 2] = np.einsum("ei,ei->e", b[:, 0], dP[:, 1]) / dt
    F[:, 5] = np.einsum("ei,ei->e", b[:, 1], dP[:, 3]) / dt
    # dQdot1 / du1: translations 2/dt, director i along its angle (2/dt) l0 n(phi1_i)
    n1 = _normal(kernels.alpha0[:, None] + u1[:, [2, 5]])                       # (n_el, 2, 2)
    dQ = np.zeros((len(u1), 4, 2, 6))                                           # slot, component, DOF
    dQ[:, 0, 0, 0] = dQ[:, 0, 1, 1] = dQ[:, 2, 0, 3] = dQ[:, 2, 1, 4] = 2.0 / dt
    dQ[:, 1, :, 2] = (2.0 / dt) * l0[:, None] * n1[:, 0]
    dQ[:, 3, :, 5] = (2.0 / dt) * l0[:, None] * n1[:, 1]
    dPdu = m[:, None, None, None] * np.einsum("ab,ebij->eaij", HERMITE, dQ)       # (n_el, 4, 2, 6)
    J = np.empty(u1.shape + (6,))
    J[:, 0:2], J[:, 3:5] = dPdu[:, 0] / dt, dPdu[:, 2] / dt
    J[:, 2] = np.einsum("ei,eij->ej", b[:, 0], dPdu[:, 1]) / dt
    J[:, 5] = np.einsum("ei,eij->ej", b[:, 1], dPdu[:, 3]) / dt
    J[:, 2, 2] += np.einsum("ei,ei->e", db[:, 0], dP[:, 1]) / dt
    J[:, 5, 5] += np.einsum("ei,ei->e", db[:, 1], dP[:, 3]) / dt
    return F, J
