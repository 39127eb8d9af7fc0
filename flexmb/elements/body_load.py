"""Constant forces at points of rigid bodies (or beam nodes): a load off the node.

Geometry as in :mod:`flexmb.elements.force_elements`: the loaded point of a node with rotations is
``p = X + u + R s``, s its offset from the node in the body frame (the reference orientation), R
the node's rotation (2D ``A(theta)``, 3D ``exp(hat(psi))``). A constant global force F (N) at p
has the potential ``V = -F . (p - p_ref)`` (J); the element's internal force is ``q = -G^T F``
with G = dp/du (n_el, dim, ne), rotation columns w.r.t. spins (2D ``J R s``, 3D ``-hat(R s)``),
i.e. F at the node plus the moment ``(R s) x F``; its tangent (the load stiffness) is the turning
of R s under F.

Mid-point form: the displacement of the point over a step is exactly ``p_{n+1} - p_n = G_m d``
(d the step's increments; 2D ``G_m = [I, sinc(dth/2) J A(th_m) s]``, 3D with the Cayley update
``G_m = [I, -hat(s_m)]``, s_m = (R0 + R1) s / 2), so ``q_m = -G_m^T F`` does the work
``F . (p_{n+1} - p_n)`` exactly: the discrete energy ``K + V`` is conserved to round-off.

Forces given as functions of time F(t) (a group of their own, ``functions``): no potential; in the
mid-point scheme ``q_m = -G_m^T F(t_m)`` goes through the damping hook (as a user force, the
assembly sets :attr:`BodyPointLoad.time`), so its work ``F(t_m) . (p_{n+1} - p_n)`` is booked in
``TimeHistory.dissipated`` (with the minus sign) and the energy balance stays closed; end-point
schemes and statics take ``-G^T F(t)`` (in statics t is the load factor). Statics scales constant
forces by its load factor, as it scales nodal loads.

Element DOFs: one node per element, ``ux uy rz`` (2D) or ``ux uy uz rx ry rz`` (3D).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from flexmb.checks import evaluate_vector
from flexmb.elements.base import ElementGroup
from flexmb.elements.force_elements import _J, _planar
from flexmb.rotations import cayley_between, cayley_resolvent, exp_map, sinc, sinc_derivative, skew


class BodyPointLoad(ElementGroup):
    """Group of constant global forces at offset points of nodes with rotations.

    Parameters
    ----------
    connectivity : (n_el, 1) the loaded nodes (rigid bodies' nodes or beam nodes).
    dim : 2 or 3.
    force : (n_el, dim) the constant forces in global axes, N.
    offsets : (n_el, dim) the loaded points relative to their nodes in the body frame (the
        reference orientation), m.
    name : the group's name.
    labels : the loads' names, for messages.
    functions : for a group of time-dependent loads, per element ``F(t) -> (dim,)`` in N (then
        ``force`` is unused).
    """

    n_nodes = 1
    has_rotations = True

    def __init__(self, connectivity: np.ndarray, dim: int, force: np.ndarray, offsets: np.ndarray,
                 name: str = "body loads", labels: list[str] | None = None,
                 functions: list[Callable[[float], np.ndarray]] | None = None) -> None:
        super().__init__(np.asarray(connectivity, dtype=np.int64).reshape(-1, 1), dim, name)
        n = self.n_elements
        self.force = np.asarray(force, dtype=float).reshape(n, dim).copy()
        self.offsets = np.asarray(offsets, dtype=float).reshape(n, dim).copy()
        self.labels = labels or [f"element {e} of group {name!r}" for e in range(n)]
        self.functions = None if functions is None else list(functions)
        #: forces that are functions of time are evaluated at it (s; statics: the load factor), set by the assembly
        self.time_dependent = functions is not None
        self.time = 0.0
        #: constant forces are applied loads: statics scales them by its load factor (set by the assembly)
        self.proportional_load = functions is None
        self.load_factor = 1.0

    def forces(self) -> np.ndarray:
        """The forces (n_el, dim) in N, global axes: constant ones times :attr:`load_factor`, time
        functions at :attr:`time`."""
        if self.functions is None:
            return self.load_factor * self.force
        return np.array([evaluate_vector(f, self.time, False, label, self.dim)
                         for f, label in zip(self.functions, self.labels)])

    def _rotated(self, u: np.ndarray) -> np.ndarray:
        """R s (n_el, dim), m."""
        R = _planar(u[:, 2]) if self.dim == 2 else exp_map(u[:, 3:6])
        return np.einsum("nij,nj->ni", R, self.offsets)

    def _jacobian(self, Rs: np.ndarray) -> np.ndarray:
        """G = dp/du (n_el, dim, ne), rotation columns w.r.t. spins."""
        d = self.dim
        G = np.zeros((self.n_elements, d, self.ndof))
        G[:, :, :d] = np.eye(d)
        if d == 2:
            G[:, :, 2] = Rs @ _J.T                                        # J R s
        else:
            G[:, :, 3:6] = -skew(Rs)                                      # -hat(R s)
        return G

    # ------------------------------------------------------------ end-point
    def force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """q = -G^T F (n_el, ne) and dq/du (n_el, ne, ne) (spins at 3D rotations)."""
        Rs = self._rotated(u)
        f = -self.forces()                                                # internal-force sign
        q = np.einsum("nai,na->ni", self._jacobian(Rs), f)
        K = np.zeros((self.n_elements, self.ndof, self.ndof))
        if self.dim == 2:
            # q_th = (J R s) . f, d/dth = (J J R s) . f = -(R s) . f
            K[:, 2, 2] = -np.einsum("ni,ni->n", Rs, f)
        else:
            # q_rot = (R s) x f; d(R s) = dphi x R s -> (R s f^T - (R s . f) I) dphi
            K[:, 3:6, 3:6] = np.einsum("ni,nj->nij", Rs, f) - np.einsum("ni,ni->n", Rs, f)[:, None, None] * np.eye(3)
        return q, K

    def internal_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self.force_and_tangent(X, u)[0]

    def strain_energy(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """V = -F . (p - p_ref) (n_el,), J; zero for time functions (their work is booked instead)."""
        d = self.dim
        if self.functions is not None:
            return np.zeros(self.n_elements)
        moved = u[:, :d] + self._rotated(u) - self.offsets
        return -np.einsum("ni,ni->n", self.forces(), moved)

    def generalized_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The forces (n_el, dim), N."""
        return self.forces().copy()

    def geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        """The load stiffness is the whole tangent (linear in the forces)."""
        return self.force_and_tangent(X, u)[1]

    def axial_strain(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Zero (n_el,): a load has no strain."""
        return np.zeros(self.n_elements)

    output_units = {"force": "N"}

    def element_outputs(self, X: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        """``force``: the size of each load |F| (n_el,), N."""
        return {"force": np.linalg.norm(self.forces(), axis=1)}

    def mass_matrix(self, X: np.ndarray) -> np.ndarray:
        """Massless: zeros (n_el, ne, ne)."""
        return np.zeros((self.n_elements, self.ndof, self.ndof))

    # ------------------------------------------------------------ mid-point
    def _mid_point(self, u0: np.ndarray, u1: np.ndarray, tangent: bool):
        d = self.dim
        f = -self.forces()
        s = self.offsets
        Gm = np.zeros((self.n_elements, d, self.ndof))
        Gm[:, :, :d] = np.eye(d)
        K = np.zeros((self.n_elements, self.ndof, self.ndof))
        if d == 2:
            dth = u1[:, 2] - u0[:, 2]
            Am_s = np.einsum("nij,nj->ni", _planar(0.5 * (u0[:, 2] + u1[:, 2])), s)
            JAm_s = Am_s @ _J.T
            sc = sinc(0.5 * dth)
            Gm[:, :, 2] = sc[:, None] * JAm_s
            if tangent:
                # q_th = sinc(h) (J A_m s) . f, h = dth / 2, A_m turning by dth / 2
                K[:, 2, 2] = 0.5 * (sinc_derivative(0.5 * dth) * np.einsum("ni,ni->n", JAm_s, f)
                                    - sc * np.einsum("ni,ni->n", Am_s, f))
        else:
            a0 = np.einsum("nij,nj->ni", exp_map(u0[:, 3:6]), s)
            a1 = np.einsum("nij,nj->ni", exp_map(u1[:, 3:6]), s)
            s_m = 0.5 * (a0 + a1)
            Gm[:, :, 3:6] = -skew(s_m)
            if tangent:
                w = cayley_between(u0[:, 3:6], u1[:, 3:6])
                # q_rot = s_m x f, ds_m/dw = -res hat(s_m) / 2
                K[:, 3:6, 3:6] = 0.5 * skew(f) @ cayley_resolvent(w) @ skew(s_m)
        return np.einsum("nai,na->ni", Gm, f), K

    def mid_point_force(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        """The discrete gradient of V (n_el, ne); zero for time functions (they use the damping hook)."""
        if self.functions is not None:
            return np.zeros((self.n_elements, self.ndof))
        return self._mid_point(u0, u1, False)[0]

    def mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        if self.functions is not None:
            return np.zeros((self.n_elements, self.ndof)), np.zeros((self.n_elements, self.ndof, self.ndof))
        return self._mid_point(u0, u1, True)

    # ------------------------------------------------------------ time functions: the damping hook
    @property
    def damped(self) -> bool:
        return self.functions is not None

    def mid_point_damping(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray, dt: float, tangent: bool
                          ) -> tuple[np.ndarray, np.ndarray | None]:
        """-G_m^T F(t_m) (n_el, ne) and its derivative w.r.t. the increment (time functions only)."""
        q, K = self._mid_point(u0, u1, tangent)
        return q, K if tangent else None

    def damping_force(self, X: np.ndarray, u: np.ndarray, v: np.ndarray, dv_du: float, tangent: bool
                      ) -> tuple[np.ndarray, np.ndarray | None]:
        """Zero: end-point schemes take the whole load in :meth:`force_and_tangent`."""
        zero = np.zeros((self.n_elements, self.ndof))
        return zero, np.zeros((self.n_elements, self.ndof, self.ndof)) if tangent else None
