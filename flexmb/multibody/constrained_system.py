"""A constrained mechanical system in redundant coordinates, the data of Blajer, Schiehlen &
Schirm (1994), eqs. (1)-(4):

    M(q, t) q'' = h(q', q, t) + C^T(q, t) lambda,      Phi(q, t) = 0,
    Phi' = C q' + a = 0,                              Phi'' = C q'' + b = 0,

with ``C = dPhi/dq`` (m x n), ``a = dPhi/dt`` and ``b = C' q' + a'``. A system is either written
directly by the user as functions (relative coordinates, as the papers' four-bar cut at O4) or
taken from a planar flexmb assembly of rigid bodies, elements and joints
(:meth:`ConstrainedSystem.from_assembly`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

Array = np.ndarray


class ConstrainedSystem:
    """q (n,), M(q, t), h(q, q', t), Phi(q, t) (m,), C(q, t) (m, n), a(q, t), b(q, q', t).

    Parameters
    ----------
    n: number of coordinates.
    mass_matrix: ``M(q, t)`` (n, n), symmetric positive definite.
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
    """

    def __init__(self, n: int, mass_matrix: Callable[[Array, float], Array],
                 forces: Callable[[Array, Array, float], Array],
                 constraints: Callable[[Array, float], Array], jacobian: Callable[[Array, float], Array], *,
                 constraint_rate: Callable[[Array, float], Array] | None = None,
                 acceleration_rhs: Callable[[Array, Array, float], Array] | None = None,
                 potential_energy: Callable[[Array, float], float] | None = None,
                 names: list[str] | None = None) -> None:
        self.n = int(n)
        self._M, self._h, self._phi, self._C = mass_matrix, forces, constraints, jacobian
        self._a, self._b, self._V = constraint_rate, acceleration_rhs, potential_energy
        self._m: int | None = None                  # number of constraints, found on first use
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

    def potential_energy(self, q: Array, t: float) -> float:
        """V(q, t); raises when the system was built without one."""
        if self._V is None:
            raise ValueError("this ConstrainedSystem has no potential_energy function")
        return float(self._V(q, t))

    @property
    def has_potential(self) -> bool:
        return self._V is not None

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
        """The planar flexmb assembly ``asm`` as a constrained system in its free DOFs.

        q are the free DOFs (x, y, rotation per node; planar rotations add, so q' = v), M the
        assembly's mass matrix, h = f_ext(t) - f_int(q) and Phi the joints' equations (the
        constraint multipliers of :func:`flexmb.integrate` and this lambda have the same
        meaning). With gravity as the only load the potential energy is U_strain - f_g . u.
        Planar models with constant mass only: spatial rotations are not additive
        coordinates and configuration-dependent masses have velocity terms not carried here.
        """
        model, dofs = asm.model, asm.dofs
        if model.dim != 2:
            raise ValueError("ConstrainedSystem.from_assembly: only planar models (dim = 2); spatial "
                             "rotations are not additive coordinates")
        if asm.constraints is None:
            raise ValueError("ConstrainedSystem.from_assembly: the model has no joints")
        if asm.configuration_masses:
            raise ValueError("ConstrainedSystem.from_assembly: configuration-dependent masses (mass='cubic') "
                             "are not supported; use lumped or consistent mass")
        free = dofs.free
        if any(callable(pv.value) or pv.value != 0.0 for pv in model.prescribed.values()):
            raise ValueError("ConstrainedSystem.from_assembly: prescribed DOFs are not supported (fixed "
                             "supports are); prescribe motion with a joint drive")
        M = asm.mass.toarray()[np.ix_(free, free)]
        cons = asm.constraints
        n_dof = asm.n_dof

        def full(q: Array) -> Array:
            u = np.zeros(n_dof)
            u[free] = q
            return u

        def forces(q: Array, qd: Array, t: float) -> Array:
            u = full(q)
            return (asm.external_force(t, u=u) - asm.internal_force(u))[free]

        def jacobian(q: Array, t: float) -> Array:
            terms = cons.evaluate(full(q), t, np.zeros(cons.n))
            return terms.C.toarray()[:, free]

        gravity_force = asm.external_force(0.0)

        def potential(q: Array, t: float) -> float:
            u = full(q)
            return asm.strain_energy(u) - float(gravity_force @ u)

        return cls(free.size, lambda q, t: M, forces, lambda q, t: cons.values(full(q), t), jacobian,
                   constraint_rate=(lambda q, t: cons.time_derivative(full(q), t)) if cons.rheonomic else None,
                   potential_energy=potential if not (model.loads or model.vector_loads) else None, names=[dofs.label(i) for i in free])
