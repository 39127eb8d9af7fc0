"""A constrained mechanical system in redundant coordinates, the data of Blajer, Schiehlen &
Schirm (1994), eqs. (1)-(4):

    M(q, t) q'' = h(q', q, t) + C^T(q, t) lambda,      Phi(q, t) = 0,
    Phi' = C q' + a = 0,                              Phi'' = C q'' + b = 0,

with ``C = dPhi/dq`` (m x n), ``a = dPhi/dt`` and ``b = C' q' + a'``. A system is either written
directly by the user as functions (relative coordinates, as the papers' four-bar cut at O4) or
taken from a flexmb assembly of rigid bodies, elements and joints, planar or spatial
(:meth:`ConstrainedSystem.from_assembly`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from flexmb.checks import refuse_reference_masses
from flexmb.rotations import tangent_operator

Array = np.ndarray


class ConstrainedSystem:
    """q (n,), M(q, t), h(q, q', t), Phi(q, t) (m,), C(q, t) (m, n), a(q, t), b(q, q', t).

    Parameters
    ----------
    n: number of coordinates.
    mass_matrix: ``M(q, t)`` (n, n), symmetric positive semi-definite: massless coordinates (zero rows)
        are allowed where the constraints carry them (the reduced mass D M D^T must be regular).
    forces: ``h(q, qd, t)`` (n,): applied forces and gyroscopic/velocity terms.
    constraints: ``Phi(q, t)`` (m,).
    jacobian: ``C(q, t)`` (m, n).
    constraint_rate: ``a(q, t) = dPhi/dt`` (m,); zero (scleronomic) when omitted.
    acceleration_rhs: ``b(q, qd, t) = C' qd + a'`` (m,) of eq. (4); when omitted it is the
        central difference of ``C(q + s qd, t + s) qd + a`` in s (accurate to about 1e-10 of
        its size for coordinates of order one; give it analytically when tighter accelerations
        are needed).
    potential_energy: ``V(q, t)`` of the conservative part of h, for energy checks (optional).
    names: coordinate names for messages and logs (default ``q0, q1, ...``).
    rechart: ``(q, qd, t) -> (q, qd) | None``: an equivalent state in better coordinates (for
        rotation vectors nearing their singularity), or None; integrate_partitioned calls it after
        every accepted step.
    """

    def __init__(self, n: int, mass_matrix: Callable[[Array, float], Array],
                 forces: Callable[[Array, Array, float], Array],
                 constraints: Callable[[Array, float], Array], jacobian: Callable[[Array, float], Array], *,
                 constraint_rate: Callable[[Array, float], Array] | None = None,
                 acceleration_rhs: Callable[[Array, Array, float], Array] | None = None,
                 potential_energy: Callable[[Array, float], float] | None = None,
                 names: list[str] | None = None,
                 rechart: Callable[[Array, Array, float], tuple[Array, Array] | None] | None = None) -> None:
        self.n = int(n)
        self._M, self._h, self._phi, self._C = mass_matrix, forces, constraints, jacobian
        self._a, self._b, self._V = constraint_rate, acceleration_rhs, potential_energy
        self._m: int | None = None                  # number of constraints, found on first use
        self._rechart = rechart
        self.names = list(names) if names is not None else [f"q{i}" for i in range(self.n)]
        if len(self.names) != self.n:
            raise ValueError(f"{len(self.names)} coordinate names for {self.n} coordinates")

    # ------------------------------------------------------------------ data
    def M(self, q: Array, t: float) -> Array:
        """Mass matrix (n, n)."""
        return self._check(np.asarray(self._M(q, t), dtype=float), (self.n, self.n), "mass_matrix")

    def h(self, q: Array, qd: Array, t: float) -> Array:
        """Force vector (n,)."""
        return self._check(np.asarray(self._h(q, qd, t), dtype=float), (self.n,), "forces")

    def phi(self, q: Array, t: float) -> Array:
        """Constraint values (m,)."""
        return np.atleast_1d(np.asarray(self._phi(q, t), dtype=float))

    def C(self, q: Array, t: float) -> Array:
        """Constraint Jacobian (m, n)."""
        C = np.atleast_2d(np.asarray(self._C(q, t), dtype=float))
        if C.shape[1] != self.n:
            raise ValueError(f"jacobian returned shape {C.shape}, expected (m, {self.n})")
        return C

    def a(self, q: Array, t: float) -> Array:
        """dPhi/dt at fixed q (m,)."""
        if self._a is None:
            if self._m is None:
                self._m = self.phi(q, t).size
            return np.zeros(self._m)
        return np.atleast_1d(np.asarray(self._a(q, t), dtype=float))

    def b(self, q: Array, qd: Array, t: float) -> Array:
        """C' q' + a' (m,) of eq. (4)."""
        if self._b is not None:
            return np.atleast_1d(np.asarray(self._b(q, qd, t), dtype=float))
        # a time step that moves q by at most 1e-5 (in its own units): not scaled by |q|, which
        # grows without bound for spinning angles and far-away bodies
        s = 1e-5 / max(float(np.abs(qd).max(initial=0.0)), 1.0)

        def rate(e: float) -> Array:
            return self.C(q + e * qd, t + e) @ qd + self.a(q + e * qd, t + e)

        return (rate(s) - rate(-s)) / (2.0 * s)

    def rechart(self, q: Array, qd: Array, t: float) -> tuple[Array, Array] | None:
        """An equivalent state in better coordinates, or None (see ``rechart`` above)."""
        return None if self._rechart is None else self._rechart(q, qd, t)

    def potential_energy(self, q: Array, t: float) -> float:
        """V(q, t); raises when the system was built without one."""
        if self._V is None:
            raise ValueError("this ConstrainedSystem has no potential_energy function")
        return float(self._V(q, t))

    def _check(self, value: Array, shape: tuple[int, ...], what: str) -> Array:
        if value.shape != shape:
            raise ValueError(f"{what} returned shape {value.shape}, expected {shape}")
        return value

    # ------------------------------------------------ Lagrange-multiplier form
    def lagrange_accelerations(self, q: Array, qd: Array, t: float) -> tuple[Array, Array]:
        """q'' and lambda from the full system [M -C^T; C 0] [q''; lambda] = [h; -b]."""
        M, C = self.M(q, t), self.C(q, t)
        m = C.shape[0]
        K = np.block([[M, -C.T], [C, np.zeros((m, m))]])
        x = np.linalg.solve(K, np.concatenate([self.h(q, qd, t), -self.b(q, qd, t)]))
        return x[:self.n], x[self.n:]

    def kinetic_energy(self, q: Array, qd: Array, t: float) -> float:
        return 0.5 * float(qd @ self.M(q, t) @ qd)

    # ------------------------------------------------------ from an assembly
    @classmethod
    def from_assembly(cls, asm) -> "ConstrainedSystem":
        """The flexmb assembly ``asm`` (rigid bodies, elements, joints) as a constrained system in
        its free DOFs.

        q are the free DOFs: translations, planar rotations (additive, q' = v) and, in 3D, the
        nodes' rotation vectors psi, whose rates give the spatial angular velocity
        omega = T(psi) psi' (T: :func:`flexmb.rotations.tangent_operator`). With the spin-form
        mass M_s (the assembly's mass plus the rotary inertia R J R^T) and spin-form forces
        f = f_ext(t) - f_int(q):

            M(q) = T^T M_s T,   h = T^T (f - omega x (R J R^T) omega - M_s T' psi'),
            C = C_s T,

        (T block-diagonal over the rotating nodes, identity elsewhere; C_s the joints' Jacobian
        with respect to spins). T is singular at ``|psi|`` = 2 pi, so a rotation vector past
        1.25 pi is replaced by its equivalent of the other sense (``rechart``; the integrators
        restart there). The multipliers lambda are those of :func:`flexmb.integrate`. With
        gravity as the only load the potential energy is U_strain - f_g . u. Constant masses
        only (configuration-dependent masses, mass='cubic', have velocity terms not carried here).
        """
        model, dofs = asm.model, asm.dofs
        if asm.constraints is None:
            raise ValueError("ConstrainedSystem.from_assembly: the model has no joints")
        refuse_reference_masses(asm, "ConstrainedSystem.from_assembly")
        if asm.configuration_masses:
            raise ValueError("ConstrainedSystem.from_assembly: configuration-dependent masses (mass='cubic') "
                             "are not supported; use lumped or consistent mass")
        if any(callable(pv.value) or pv.value != 0.0 for pv in model.prescribed.values()):
            raise ValueError("ConstrainedSystem.from_assembly: prescribed DOFs are not supported (fixed "
                             "supports are); prescribe motion with a joint drive")
        free = dofs.free
        n_dof, cons = asm.n_dof, asm.constraints
        M_const = asm.mass.toarray()
        # rotating 3D nodes with all three rotations free: rows into q of their rotation vectors
        rd = asm.rotation_dofs if model.dim == 3 else np.zeros((0, 3), dtype=np.int64)
        slot = dofs.free_position[rd] if rd.size else np.zeros((0, 3), dtype=np.int64)
        partly = np.flatnonzero((slot >= 0).any(axis=1) & (slot < 0).any(axis=1))
        if partly.size:
            raise ValueError(f"ConstrainedSystem.from_assembly: node {int(asm.rotation_nodes[partly[0]])} has some "
                             "rotations fixed and others free; fix all or none (or use a joint)")
        rotating = (slot >= 0).all(axis=1)
        r_slots = slot[rotating]                                 # (n_r, 3) positions in q
        r_rows = np.flatnonzero(rotating)                        # rows into asm.rotary_inertia

        def full(q: Array) -> Array:
            u = np.zeros(n_dof)
            u[free] = q
            return u

        # (n_r, 3, 3) index arrays of the rotating nodes' 3x3 blocks in q
        block_rows, block_cols = r_slots[:, :, None], r_slots[:, None, :]
        M_free = M_const[np.ix_(free, free)]

        def tangent(q: Array) -> Array:
            T = np.eye(free.size)
            if r_slots.size:
                T[block_rows, block_cols] = tangent_operator(q[r_slots])
            return T

        def spin_mass(u: Array) -> Array:
            Ms = M_free.copy()
            if r_slots.size:
                Ms[block_rows, block_cols] += asm.spatial_inertia(u)[r_rows]
            return Ms

        def mass_matrix(q: Array, t: float) -> Array:
            if not r_slots.size:
                return M_free
            T = tangent(q)
            return T.T @ spin_mass(full(q)) @ T

        def forces(q: Array, qd: Array, t: float) -> Array:
            u = full(q)
            asm.set_time(t)
            f = (asm.external_force(t, u=u) - asm.internal_force(u))[free]
            if asm.damped_groups:                # dampers and Rayleigh damping (spatial omega = T psi')
                f -= asm.damping_force(u, full(tangent(q) @ qd if r_slots.size else qd))[free]
            if not r_slots.size:
                return f
            T = tangent(q)
            w = T @ qd
            # T' psi' by a central difference of T along psi' (T is smooth away from 2 pi)
            e = 1e-6 / max(float(np.abs(qd).max()), 1.0)
            Tdot_qd = (tangent(q + e * qd) - tangent(q - e * qd)) @ qd / (2.0 * e)
            omega = w[r_slots]
            Js = asm.spatial_inertia(u)[r_rows]
            f[r_slots] -= np.cross(omega, np.einsum("kij,kj->ki", Js, omega))
            return T.T @ (f - spin_mass(u) @ Tdot_qd)

        def jacobian(q: Array, t: float) -> Array:
            C = cons.evaluate(full(q), t, np.zeros(cons.n)).C.toarray()[:, free]
            return C @ tangent(q) if r_slots.size else C

        def rechart(q: Array, qd: Array, t: float) -> tuple[Array, Array] | None:
            psi = q[r_slots]
            angle = np.linalg.norm(psi, axis=1)
            far = angle > 1.25 * np.pi
            if not far.any():
                return None
            q_new = q.copy()
            q_new[r_slots[far]] = psi[far] * (1.0 - 2.0 * np.pi / angle[far])[:, None]
            qd_new = np.linalg.solve(tangent(q_new), tangent(q) @ qd)       # the same omega
            return q_new, qd_new

        gravity_force = asm.external_force(0.0)

        def potential(q: Array, t: float) -> float:
            u = full(q)
            return asm.strain_energy(u) - float(gravity_force @ u)

        return cls(free.size, mass_matrix, forces, lambda q, t: cons.values(full(q), t), jacobian,
                   constraint_rate=(lambda q, t: cons.time_derivative(full(q), t)) if cons.rheonomic else None,
                   potential_energy=potential if not (model.loads or model.vector_loads) else None,
                   names=[dofs.label(i) for i in free], rechart=rechart if r_slots.size else None)
