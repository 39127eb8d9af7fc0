"""Spatial two-node beam with generalized strains (Besseling; Meijaard 1993), co-rotational.

Element DOFs ``[x_p (3), theta_p (3), x_q (3), theta_q (3)]``: nodal displacements and spins
(spatial rotation increments, see :mod:`flexmb.rotations`). Each node carries a triad; in the
reference configuration both are the element's section frame ``E = [e_x, e_y, e_z]`` (e_x
along the element, e_y, e_z principal axes of the doubly symmetric section), currently
``e^p = R_p E``, ``e^q = R_q E``. With the chord vector ``l = x_q - x_p`` the six generalized
strains (Meijaard 1993, eq. 2), invariant under rigid motions, are

    e1 = |l| - l0                                   elongation
    e2 = l0 (e_z^p . e_y^q - e_y^p . e_z^q) / 2     torsion
    e3 = -l . e_z^p,   e4 = l . e_z^q               bending in the x-z plane (about y)
    e5 =  l . e_y^p,   e6 = -l . e_y^q              bending in the x-y plane (about z)

and the generalized stresses are ``s = S ebar`` (eqs. 5-6) with ``S = diag(EA/l0, GJ/l0^3,
S_y, S_z)``, ``S_y = EI_y / ((1 + f_z) l0^3) [[4 + f_z, -2 + f_z], [-2 + f_z, 4 + f_z]]``,
``f_z = 12 EI_y / (GA k_z l0^2)`` (shear deformation through the modified bending stiffness,
no shear locking), and ``S_z`` likewise with EI_z and ``f_y = 12 EI_z / (GA k_y l0^2)``.
Bending and torsion enter through angles rather than their sines, ``eh = l0 asin(...)`` (see
:func:`_angle_strains`), so a uniformly bent element is exact at any curvature; the geometric
stiffness about stress states without axial force is unchanged. ``ebar = eh`` for the
first-order element; with ``second_order=True`` the strains of eq. (16), written in eh:

    ebar1 = e1 + (2 e3^2 + e3 e4 + 2 e4^2 + 2 e5^2 + e5 e6 + 2 e6^2) / (30 l0)
    ebar2 = e2 + (-e3 e6 + e4 e5) / l0
    ebar3 = e3 + e2 (e5 + e6) / (6 l0),   ebar4 = e4 - e2 (e5 + e6) / (6 l0)
    ebar5 = e5 - e2 (e3 + e4) / (6 l0),   ebar6 = e6 + e2 (e3 + e4) / (6 l0)

(extra elongation of the bent axis, extra torsion by bending, bending by twist). The strain
energy is ``Phi = ebar . S ebar / 2``; internal force ``q = G^T s~`` with ``G = de/dq`` and
``s~ = dPhi/de = (debar/de)^T s``; tangent ``G^T (ds~/de) G + sum_i s~_i dG_i/dq`` (the second term is
the geometric stiffness, non-symmetric away from equilibrium because spins do not commute).

Energy-conserving mid-point force. Every strain but e1 is a bilinear form ``a . b`` of the
vectors (l, e_y^p, e_z^p, e_y^q, e_z^q). With the step increment ``d = [dx_p, w_p, dx_q, w_q]``,
w the Cayley parameters of ``R_{n+1} R_n^T`` (so that ``de = w x e_m`` exactly), the increment
``d(a . b) = a_m . db + b_m . da`` is exact with the averaged vectors ``a_m = (a_n + a_{n+1})/2``,
and ``d|l| = 2 l_m . dl / (|l_n| + |l_{n+1}|)`` (the truss energy factor). This gives rows
``G_m`` with ``G_m d = e_{n+1} - e_n`` exactly; each row is a self-equilibrated force system
about the mid-point positions, so angular momentum is conserved. The stresses are the average
of the energy gradient along the step, ``s* = int_0^1 s~(e_n + t (e_{n+1} - e_n)) dt`` (four-point
Gauss; where its O(|de|^8) error exceeds round-off, a correction along de in strain space), so
``q_m . d = s* . de = Phi_{n+1} - Phi_n`` exactly: a discrete gradient in strain space (Gonzalez
1996; Simo & Tarnow 1992 for the averaged-stress idea; Crisfield, Galvanetto & Jelenic 1997 for
co-rotational 3D beams). The angle map below makes Phi non-polynomial in e, hence the quadrature.

Mass: translational ``lumped`` or ``consistent`` (linear interpolation, constant), and the rotary
inertia of the cross-sections lumped at the nodes, half per node, as Meijaard does
(:meth:`Beam3D.rotary_inertia`); the nodal rotary inertia is handled by the integrators as
a rigid body (Simo & Wong 1991), not through the constant mass matrix. ``cubic`` is the
Hermitian consistent mass of the reference configuration (cubic transverse, linear axial
interpolation; e.g. Przemieniecki 1968, ch. 11): it couples translations with the bending
rotations and converges at order h^4 in the frequencies instead of h^2, so it is the choice for
natural modes, component mode synthesis and sensitivities about the reference state. It is a
constant matrix in global axes, not objective under large rotations, so the time integrators
refuse it (a co-rotated 3D Hermitian mass with its velocity terms, as ``Beam2D`` has, is not
built yet).

Evaluation: the public kernels call the compiled loops of :mod:`flexmb.compiled.beam3d` (numba,
imported on first use). The numpy implementation here, :meth:`Beam3D.reference_static`,
:meth:`Beam3D.reference_geometric_stiffness` and :meth:`Beam3D.reference_mid_point_force_and_tangent`
with their helpers, is their specification: the tests check the compiled kernels against it to
1e-12 relative. The helpers (vectors, strains, rows and their stiffness) also build the
strain-rate Rayleigh damping of :mod:`flexmb.elements.rayleigh`.
"""
from __future__ import annotations

import numpy as np

from flexmb.checks import ModelError, flag, float_array
from flexmb.elements.base import ElementGroup, median
from flexmb.elements.corotational import chord
from flexmb.rotations import cayley_from_matrix, cayley_resolvent, exp_map, skew

_compiled = None                  # flexmb.compiled.beam3d, imported on first use (it imports numba)


def _kernels():
    """The compiled kernels module (importing numba on the first call only)."""
    global _compiled
    if _compiled is None:
        from flexmb.compiled import beam3d
        _compiled = beam3d
    return _compiled


_NO_Y_AXIS = np.zeros((0, 3))     # y_axis argument of the kernels for the default section axes
_NO_STRESSES = np.zeros((0, 6))   # stresses argument of the kernels: the element's own

_ROT = {"p": slice(3, 6), "q": slice(9, 12)}
# vector slots: 0 = l, 1 = e_y^p, 2 = e_z^p, 3 = e_y^q, 4 = e_z^q; node of each triad slot
_NODE = {1: "p", 2: "p", 3: "q", 4: "q"}
# strain i = sum over its terms of coefficient * (slot a . slot b); e2's coefficients are times l0
_PAIRS = ((2, 3, 0.5, 1), (1, 4, -0.5, 1), (0, 2, -1.0, 2), (0, 4, 1.0, 3), (0, 1, 1.0, 4),
          (0, 3, -1.0, 5))
# J_l: dl/dq = [-I, 0, I, 0]
_JL = np.zeros((3, 12))
_JL[:, 0:3], _JL[:, 6:9] = -np.eye(3), np.eye(3)
# four-point Gauss rule on [0, 1]
_GAUSS_X, _GAUSS_WX = np.polynomial.legendre.leggauss(4)
_GAUSS_T, _GAUSS_W = 0.5 * (_GAUSS_X + 1.0), 0.5 * _GAUSS_WX


def _second_order_tensor() -> np.ndarray:
    """C (6, 6, 6) with ebar_k - e_k = e . C_k e / (2 l0) (Meijaard 1993, eq. 16)."""
    C = np.zeros((6, 6, 6))

    def put(k: int, i: int, j: int, value: float) -> None:        # term value * e_i e_j in ebar_k
        if i == j:
            C[k, i, i] += 2.0 * value
        else:
            C[k, i, j] += value
            C[k, j, i] += value
    for i, j, v in ((2, 2, 2), (2, 3, 1), (3, 3, 2), (4, 4, 2), (4, 5, 1), (5, 5, 2)):
        put(0, i, j, v / 30.0)
    put(1, 2, 5, -1.0)
    put(1, 3, 4, 1.0)
    for k, sign in ((2, 1.0), (3, -1.0)):
        put(k, 1, 4, sign / 6.0)
        put(k, 1, 5, sign / 6.0)
    for k, sign in ((4, -1.0), (5, 1.0)):
        put(k, 1, 2, sign / 6.0)
        put(k, 1, 3, sign / 6.0)
    return C


_C2 = _second_order_tensor()


def _angle_strains(eps: np.ndarray, l0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Angle-based strains eh (n_el, 6), their Jacobian deh/de (n_el, 6, 6) and second
    derivatives (n_el, 6, 6, 6) [k, i, j].

    ``eh2 = l0 asin(e2 / l0)``, ``eh_k = l0 asin(e_k / (l0 + e1))`` for k = 3..6: l0 times the
    angle between the chord and a section axis instead of its sine, so that a uniformly bent
    element carries a moment proportional to its curvature at any rotation (a beam rolled up
    into a circle closes). The map differs from the identity at third order only, apart from a
    bending-stretching term ``-e1 e_k / l0``, so the geometric stiffness about a state without
    axial force, and with it Meijaard's buckling loads, is unchanged.
    """
    n = len(l0)
    eh = eps.copy()
    Ah = np.zeros((n, 6, 6))
    Ah[:, 0, 0] = 1.0
    D2 = np.zeros((n, 6, 6, 6))
    L = l0 + eps[:, 0]                                                   # current chord length
    for k in range(1, 6):
        den = l0 if k == 1 else L
        x = np.clip(eps[:, k] / den, -1.0 + 1e-12, 1.0 - 1e-12)
        a1 = 1.0 / np.sqrt(1.0 - x * x)                                  # asin'
        a2 = x * a1**3                                                   # asin''
        dx = np.zeros((n, 6))
        dx[:, k] = 1.0 / den
        d2x = np.zeros((n, 6, 6))
        if k > 1:
            dx[:, 0] = -eps[:, k] / L**2
            d2x[:, k, 0] = d2x[:, 0, k] = -1.0 / L**2
            d2x[:, 0, 0] = 2.0 * eps[:, k] / L**3
        eh[:, k] = l0 * np.arcsin(x)
        Ah[:, k] = (l0 * a1)[:, None] * dx
        D2[:, k] = l0[:, None, None] * (a2[:, None, None] * dx[:, :, None] * dx[:, None, :]
                                        + a1[:, None, None] * d2x)
    return eh, Ah, D2


def _triad_jacobian(minus_hat: np.ndarray, node: str) -> np.ndarray:
    """(n_el, 3, 12) Jacobian with the 3x3 block ``minus_hat`` at the node's rotation columns."""
    J = np.zeros(minus_hat.shape[:-2] + (3, 12))
    J[..., _ROT[node]] = minus_hat
    return J


def _slot_jacobians(V: np.ndarray) -> list[np.ndarray]:
    """Jacobians (n_el, 3, 12) of the vector slots V (5, n_el, 3): d l = J_l dq and, for triad
    vectors, d e = theta x e = -hat(e) dtheta (spins; in the mid-point form Cayley parameters)."""
    return [np.broadcast_to(_JL, (V.shape[1], 3, 12))] + \
        [_triad_jacobian(-skew(V[s]), _NODE[s]) for s in range(1, 5)]


class Beam3D(ElementGroup):
    """Group of spatial two-node co-rotational beams (Meijaard 1993 generalized strains).

    Parameters
    ----------
    connectivity : (n_el, 2) node indices p, q.
    EA : axial stiffness (N); GJ : torsional stiffness S_t (N m^2);
    EI_y, EI_z : bending stiffness about the section axes y and z (N m^2).
    GA_ky, GA_kz : shear stiffness in y and z (N), default infinite (no shear deformation).
    rho_A : mass per length (kg/m).
    rho_I : mass moments of inertia of the section per length about its x (polar), y and z
        axes (kg m), shape (3,) or (n_el, 3); default zero.
    y_axis : direction of the section's y axis (3,) or (n_el, 3), projected normal to the element;
        default: ``e_z x e_x`` normalised (horizontal for a vertical-z world), or the global y axis
        for elements along z.
    second_order : include the second-order terms of the generalized strains (eq. 16).
    mass : ``"lumped"`` or ``"consistent"`` translational mass, or ``"cubic"`` (Hermitian, for
        linear analyses about the reference state only; see the module docstring).
    """

    has_rotations = True

    def __init__(self, connectivity: np.ndarray, EA: float | np.ndarray, GJ: float | np.ndarray,
                 EI_y: float | np.ndarray, EI_z: float | np.ndarray,
                 GA_ky: float | np.ndarray = np.inf, GA_kz: float | np.ndarray = np.inf,
                 rho_A: float | np.ndarray = 0.0, rho_I: np.ndarray | tuple = (0.0, 0.0, 0.0),
                 y_axis: np.ndarray | None = None, second_order: bool = True,
                 mass: str = "lumped", name: str = "beam3d") -> None:
        super().__init__(connectivity, 3, name)
        n = self.n_elements
        self.EA = self._per_element(EA, n, "EA", name)
        self.GJ = self._per_element(GJ, n, "GJ", name)
        self.EI_y = self._per_element(EI_y, n, "EI_y", name)
        self.EI_z = self._per_element(EI_z, n, "EI_z", name)
        self.GA_ky = self._per_element(GA_ky, n, "GA_ky", name, allow_inf=True)
        self.GA_kz = self._per_element(GA_kz, n, "GA_kz", name, allow_inf=True)
        self.rho_A = self._per_element(rho_A, n, "rho_A", name, positive=False)
        label = f"element group {name!r}"
        self.rho_I = self._per_element_vector(rho_I, n, f"{label}: rho_I")
        bad = np.flatnonzero(np.any(~np.isfinite(self.rho_I) | (self.rho_I < 0), axis=1))
        if bad.size:
            e = int(bad[0])
            raise ModelError(f"{label}: rho_I of element {e} is {self.rho_I[e].tolist()}, must be "
                             "non-negative and finite")
        self.y_axis = None
        if y_axis is not None:
            self.y_axis = self._per_element_vector(y_axis, n, f"{label}: y_axis")
            bad = np.flatnonzero(~np.all(np.isfinite(self.y_axis), axis=1) | ~np.any(self.y_axis, axis=1))
            if bad.size:
                e = int(bad[0])
                raise ModelError(f"{label}: y_axis of element {e} must be a finite, non-zero direction, "
                                 f"got {self.y_axis[e].tolist()}")
        self.second_order = flag(second_order, f"{label}: second_order")
        if mass not in ("lumped", "consistent", "cubic"):
            raise ModelError(f"{label}: mass must be 'lumped', 'consistent' or 'cubic', got {mass!r}")
        self.mass = mass

    @staticmethod
    def _per_element_vector(value: np.ndarray | tuple, n_el: int, what: str) -> np.ndarray:
        """(3,) or (n_el, 3) numbers as (n_el, 3), else ModelError."""
        arr = float_array(value, what)
        if arr.shape not in ((3,), (n_el, 3)):
            raise ModelError(f"{what} must have shape (3,) or ({n_el}, 3), got {arr.shape}")
        return np.broadcast_to(arr, (n_el, 3)).copy()

    # ------------------------------------------------------- reference frame
    def section_frames(self, X: np.ndarray) -> np.ndarray:
        """Reference section frames E (n_el, 3, 3), columns e_x, e_y, e_z."""
        ex = X[:, 1] - X[:, 0]
        ex = ex / np.linalg.norm(ex, axis=1)[:, None]                   # (n_el, 3)
        if self.y_axis is None:
            hint = np.cross([0.0, 0.0, 1.0], ex)
            along_z = np.linalg.norm(hint, axis=1) < 1e-8
            hint[along_z] = [0.0, 1.0, 0.0]
        else:
            hint = self.y_axis
        ey = hint - np.einsum("ei,ei->e", hint, ex)[:, None] * ex
        norm = np.linalg.norm(ey, axis=1)
        bad = np.flatnonzero(norm < 1e-8 * np.maximum(np.linalg.norm(hint, axis=1), 1e-300))
        if bad.size:
            e = int(bad[0])
            raise ModelError(f"element group {self.name!r}: y_axis of element {e} ({hint[e].tolist()}) is "
                             f"parallel to the element axis {ex[e].tolist()}; give a direction normal to it")
        ey = ey / norm[:, None]
        return np.stack([ex, ey, np.cross(ex, ey)], axis=2)              # (n_el, 3, 3)

    def stiffness_matrix_S(self, l0: np.ndarray) -> np.ndarray:
        """Generalized-stress stiffness S (n_el, 6, 6) of Meijaard's eqs. (5)-(6)."""
        S = np.zeros((self.n_elements, 6, 6))
        S[:, 0, 0] = self.EA / l0
        S[:, 1, 1] = self.GJ / l0**3
        for sl, EI, GAk in ((slice(2, 4), self.EI_y, self.GA_kz), (slice(4, 6), self.EI_z, self.GA_ky)):
            f = 12.0 * EI / (GAk * l0**2)                                # 0 for GAk = inf
            block = np.array([[4.0, -2.0], [-2.0, 4.0]])[None] + f[:, None, None]
            S[:, sl, sl] = (EI / ((1.0 + f) * l0**3))[:, None, None] * block
        return S

    # ------------------------------------------------------------ kinematics
    def _vectors(self, X: np.ndarray, u: np.ndarray, E: np.ndarray):
        """Chord, rotation matrices and the vector slots (5, n_el, 3) at one configuration."""
        c = chord(X, u[:, 0:3], u[:, 6:9])
        Rp, Rq = exp_map(u[:, 3:6]), exp_map(u[:, 9:12])                # (n_el, 3, 3)
        ey, ez = E[:, :, 1], E[:, :, 2]
        V = np.stack([c.x21, np.einsum("eij,ej->ei", Rp, ey), np.einsum("eij,ej->ei", Rp, ez),
                      np.einsum("eij,ej->ei", Rq, ey), np.einsum("eij,ej->ei", Rq, ez)])
        return c, Rp, Rq, V

    @staticmethod
    def _strains(c, V: np.ndarray) -> np.ndarray:
        """Generalized strains e (n_el, 6) of eq. (2)."""
        eps = np.zeros((V.shape[1], 6))
        eps[:, 0] = c.stretch
        for a, b, coef, i in _PAIRS:
            k = coef * (c.l0 if i == 1 else 1.0)
            eps[:, i] += k * np.einsum("ei,ei->e", V[a], V[b])
        return eps

    def _energy(self, eps: np.ndarray, l0: np.ndarray, S: np.ndarray, order: int = 2) -> dict:
        """Energy Phi(e) (n_el,), ebar, s = S ebar, and for order >= 1 the gradient s~ = dPhi/de
        (n_el, 6), for order 2 the Hessian (n_el, 6, 6), and what the geometric stiffness needs."""
        eh, Ah, D2 = _angle_strains(eps, l0)
        if self.second_order:
            Ce = np.einsum("kij,ej->eki", _C2, eh) / l0[:, None, None]    # (n_el, 6, 6): C_k eh / l0
            ebar = eh + 0.5 * np.einsum("eki,ei->ek", Ce, eh)
            A = np.eye(6)[None] + Ce
        else:
            ebar, A = eh, np.broadcast_to(np.eye(6), (eps.shape[0], 6, 6))
        sigma = np.einsum("eij,ej->ei", S, ebar)
        out = {"phi": 0.5 * np.einsum("ei,ei->e", ebar, sigma), "ebar": ebar, "sigma": sigma,
               "Ah": Ah, "A": A, "D2": D2}
        if order >= 1:
            out["grad"] = np.einsum("eki,ek->ei", Ah, np.einsum("eki,ek->ei", A, sigma))
        if order >= 2:
            out["hess"] = Ah.transpose(0, 2, 1) @ (A.transpose(0, 2, 1) @ S @ A) @ Ah \
                + self._stress_hessian(sigma, A, Ah, D2, l0)
        return out

    def _stress_hessian(self, sigma: np.ndarray, A: np.ndarray, Ah: np.ndarray, D2: np.ndarray,
                        l0: np.ndarray) -> np.ndarray:
        """Part of d^2 Phi / de^2 linear in the stresses s (n_el, 6, 6)."""
        H = np.einsum("ek,ekij->eij", np.einsum("eki,ek->ei", A, sigma), D2)
        if self.second_order:
            H = H + Ah.transpose(0, 2, 1) @ (np.einsum("ek,kij->eij", sigma, _C2) / l0[:, None, None]) @ Ah
        return H

    @staticmethod
    def _rows(V: np.ndarray, J: list, scale_l: np.ndarray, l0: np.ndarray) -> np.ndarray:
        """Rows G (n_el, 6, 12): row 0 = scale_l * J_l^T l, rows 1-5 from the bilinear pairs."""
        G = np.zeros((V.shape[1], 6, 12))
        G[:, 0] = scale_l[:, None] * (V[0] @ _JL)
        for a, b, coef, i in _PAIRS:
            k = coef * l0 if i == 1 else np.full_like(l0, coef)
            G[:, i] += k[:, None] * (np.einsum("eik,ei->ek", J[a], V[b]) + np.einsum("eik,ei->ek", J[b], V[a]))
        return G

    @staticmethod
    def _pair_stiffness(weights: np.ndarray, V: np.ndarray, J: list, P: list, kappa: float,
                        l0: np.ndarray) -> np.ndarray:
        """sum_i weights_i dG_i/dd over the bilinear strains, (n_el, 12, 12).

        ``V`` are the vectors the rows are built from (current, or averaged), ``J`` their
        Jacobians in the rows, ``P`` the derivatives of the end-of-step vectors and
        ``kappa`` = dV/dV_end (1 in statics, 1/2 for averages).
        """
        K = np.zeros((V.shape[1], 12, 12))
        for a, b, coef, i in _PAIRS:
            w = kappa * coef * weights[:, i] * (l0 if i == 1 else 1.0)      # (n_el,)
            blk = J[a].transpose(0, 2, 1) @ P[b] + J[b].transpose(0, 2, 1) @ P[a]
            for self_slot, partner in ((a, b), (b, a)):
                if self_slot in _NODE:                                 # d(e x y)/de = -hat(y)
                    blk[:, _ROT[_NODE[self_slot]], :] -= skew(V[partner]) @ P[self_slot]
            K += w[:, None, None] * blk
        return K

    def reference_static(self, X: np.ndarray, u: np.ndarray, tangent: bool = True):
        """Specification (numpy, for the tests only) of the compiled static kernels: internal force
        q (n_el, 12), tangent (n_el, 12, 12) or None, and the energy terms (dict with ``phi``,
        ``ebar``, ``sigma``, ...) behind :meth:`strain_energy`, :meth:`strains` and
        :meth:`generalized_stresses`."""
        E = self.section_frames(X)
        c, _, _, V = self._vectors(X, u, E)
        eps = self._strains(c, V)
        S = self.stiffness_matrix_S(c.l0)
        en = self._energy(eps, c.l0, S, order=2 if tangent else 1)
        st = en["grad"]
        J = _slot_jacobians(V)
        G = self._rows(V, J, 1.0 / c.l, c.l0)
        q = np.einsum("eik,ei->ek", G, st)                               # (n_el, 12)
        if not tangent:
            return q, None, en
        K = G.transpose(0, 2, 1) @ en["hess"] @ G + self._row_stiffness(st, c, V, J)
        return q, K, en

    def _row_stiffness(self, weights: np.ndarray, c, V: np.ndarray, J: list) -> np.ndarray:
        """sum_i weights_i dG_i/dq at one configuration (n_el, 12, 12)."""
        K = self._pair_stiffness(weights, V, J, J, 1.0, c.l0)
        n = c.e                                                          # d(J_l^T n)/dq
        Pn = (np.eye(3)[None] - np.einsum("ei,ej->eij", n, n)) / c.l[:, None, None]
        return K + weights[:, 0, None, None] * (_JL.T @ Pn @ _JL)

    # ---------------------------------------------------------- static kernels
    def _section(self) -> tuple:
        """Section arguments of the compiled kernels: EA, GJ, EI_y, EI_z, GA_ky, GA_kz (n_el,)
        each, the y axes (n_el, 3) or (0, 3) for the default, second_order."""
        return (self.EA, self.GJ, self.EI_y, self.EI_z, self.GA_ky, self.GA_kz,
                _NO_Y_AXIS if self.y_axis is None else self.y_axis, self.second_order)

    def _refuse_frame(self, X: np.ndarray) -> None:
        """A kernel found an element whose y axis is parallel to it: raise section_frames' ModelError."""
        self.section_frames(X)

    def _static(self, X: np.ndarray, u: np.ndarray, tangent: bool,
                stresses: np.ndarray = _NO_STRESSES) -> tuple[np.ndarray, np.ndarray]:
        q, K, bad = _kernels().force_and_tangent(X, u, *self._section(), tangent, stresses)
        if bad >= 0:
            self._refuse_frame(X)
        return q, K

    def _strain_state(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, ...]:
        """Strain energy (n_el,), strains ebar (n_el, 6), stresses s (n_el, 6), lengths l0 (n_el,)."""
        phi, ebar, sigma, l0, bad = _kernels().strain_state(X, u, *self._section())
        if bad >= 0:
            self._refuse_frame(X)
        return phi, ebar, sigma, l0

    def internal_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self._static(X, u, False)[0]

    def force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._static(X, u, True)

    def strains(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Generalized strains ebar (n_el, 6), m (l0 times angles for e2..e6)."""
        return self._strain_state(X, u)[1]

    output_units = {"N": "N", "T": "N m", "My1": "N m", "My2": "N m", "Mz1": "N m", "Mz2": "N m",
                    "axial_strain": "-"}

    def element_outputs(self, X: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        """Normal force ``N``, torque ``T`` and bending moments about the section axes y and z at
        the first and second node (``My1, My2, Mz1, Mz2``) from the generalized stresses as in
        Meijaard's eq. (4): T = s2 l0, My = (-s3 l0, s4 l0), Mz = (s5 l0, -s6 l0); and the
        ``axial_strain`` e1/l0. (n_el,) each."""
        return self.outputs_and_strain_energy(X, u)[0]

    def outputs_and_strain_energy(self, X: np.ndarray, u: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        energy, ebar, s, l0 = self._strain_state(X, u)                    # (n_el,), (n_el, 6), (n_el, 6), (n_el,)
        return {"N": s[:, 0], "T": s[:, 1] * l0, "My1": -s[:, 2] * l0, "My2": s[:, 3] * l0,
                "Mz1": s[:, 4] * l0, "Mz2": -s[:, 5] * l0, "axial_strain": ebar[:, 0] / l0}, energy

    def _default_section(self, X: np.ndarray, length: float) -> dict[str, float | str]:
        """The solid rectangle with the radii of gyration sqrt(EI_z/EA) along y and sqrt(EI_y/EA) along z."""
        width = median(np.sqrt(12.0 * self.EI_z / self.EA))
        height = median(np.sqrt(12.0 * self.EI_y / self.EA))
        return {"shape": "box", "width": min(width, 0.1 * length), "height": min(height, 0.1 * length)}

    def generalized_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """s = S ebar (n_el, 6): normal force N (N), then torque and bending moments divided by l0 (N).

        At small strains ``s2 l0`` is the torque, ``-s3 l0, s4 l0`` the bending moments about y at
        p and q, ``s5 l0, -s6 l0`` those about z (Meijaard 1993, eq. 4).
        """
        return self._strain_state(X, u)[2]

    def geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        """Part of the tangent linear in given generalized stresses s (n_el, 6): (n_el, 12, 12)."""
        return self._static(X, u, True, np.ascontiguousarray(stresses, dtype=float))[1]

    def reference_geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        """Specification (numpy, for the tests only) of :meth:`geometric_stiffness`."""
        E = self.section_frames(X)
        c, _, _, V = self._vectors(X, u, E)
        en = self._energy(self._strains(c, V), c.l0, self.stiffness_matrix_S(c.l0), order=0)
        J = _slot_jacobians(V)
        G = self._rows(V, J, 1.0 / c.l, c.l0)
        weights = np.einsum("eki,ek->ei", en["Ah"], np.einsum("eki,ek->ei", en["A"], stresses))
        return (G.transpose(0, 2, 1) @ self._stress_hessian(stresses, en["A"], en["Ah"], en["D2"], c.l0) @ G
                + self._row_stiffness(weights, c, V, J))

    def strain_energy(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self._strain_state(X, u)[0]

    def axial_strain(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        c = chord(X, u[:, 0:3], u[:, 6:9])
        return c.stretch / c.l0

    def mass_matrix(self, X: np.ndarray) -> np.ndarray:
        """Translational mass (n_el, 12, 12) in global axes; the rotational blocks are zero (see
        rotary_inertia) except for ``cubic``, whose Hermitian mass couples translations with the
        bending rotations (:meth:`hermitian_mass`)."""
        l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
        m = self.rho_A * l0
        if self.mass == "cubic":
            return self.hermitian_mass(X)
        pattern = np.diag([0.5, 0.5]) if self.mass == "lumped" else np.array([[2.0, 1.0], [1.0, 2.0]]) / 6.0
        trans = np.r_[0:3, 6:9]
        Me = np.zeros((self.n_elements, 12, 12))
        Me[:, trans[:, None], trans[None, :]] = m[:, None, None] * np.kron(pattern, np.eye(3))[None]
        return Me

    def hermitian_mass(self, X: np.ndarray) -> np.ndarray:
        """Hermitian consistent mass of the reference configuration (n_el, 12, 12), global axes.

        In the section frame (local DOFs u, v, w, theta_x, theta_y, theta_z per node) the
        transverse displacements are cubic Hermite polynomials of the end translations and the
        bending rotations (v' = theta_z, w' = -theta_y) and the axial one is linear:
        ``m l / 420 [[156, 22 l, 54, -13 l], ...]`` for (v1, theta_z1, v2, theta_z2), the same with
        the coupling signs flipped for (w, theta_y), ``m l / 6 [[2, 1], [1, 2]]`` axially.
        """
        l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
        n = self.n_elements
        m = (self.rho_A * l0)[:, None, None]
        l = l0[:, None, None]
        one = np.ones((n, 1, 1))
        bend = lambda s: np.concatenate([                                       # noqa: E731
            np.concatenate([156 * one, s * 22 * l, 54 * one, -s * 13 * l], axis=2),
            np.concatenate([s * 22 * l, 4 * l**2, s * 13 * l, -3 * l**2], axis=2),
            np.concatenate([54 * one, s * 13 * l, 156 * one, -s * 22 * l], axis=2),
            np.concatenate([-s * 13 * l, -3 * l**2, -s * 22 * l, 4 * l**2], axis=2)], axis=1) * (m / 420.0)
        local = np.zeros((n, 12, 12))
        for dofs, block in (([0, 6], m * np.array([[2.0, 1.0], [1.0, 2.0]]) / 6.0),
                            ([1, 5, 7, 11], bend(1.0)),                           # v, theta_z
                            ([2, 4, 8, 10], bend(-1.0))):                         # w, theta_y
            idx = np.array(dofs)
            local[:, idx[:, None], idx[None, :]] = block
        T = np.zeros((n, 12, 12))
        Et = self.section_frames(X).transpose(0, 2, 1)                          # global -> local
        for k in range(4):
            T[:, 3 * k:3 * k + 3, 3 * k:3 * k + 3] = Et
        return T.transpose(0, 2, 1) @ local @ T

    def rotary_inertia(self, X: np.ndarray) -> np.ndarray:
        """Nodal rotary inertia tensors in the reference orientation (n_el, 2, 3, 3), kg m^2.

        Half of the element's section inertia ``l0 diag(rho_I)`` at each node, in the section frame.
        """
        E = self.section_frames(X)
        l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
        J = E @ (self.rho_I[:, :, None] * E.transpose(0, 2, 1)) * (0.5 * l0)[:, None, None]
        return np.stack([J, J], axis=1)

    # ------------------------------------------------------- mid-point kernels
    def mid_point_force(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        return self._mid_point(X, u0, u1, False)[0]

    def mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        """Energy-conserving mid-point force (n_el, 12) and its derivative (n_el, 12, 12) w.r.t.
        the step increment d.

        ``d = [x1_p - x0_p, w_p, x1_q - x0_q, w_q]`` with w the Cayley parameters of the nodal
        rotation increments ``R_{n+1} R_n^T`` (each below a half turn).
        """
        return self._mid_point(X, u0, u1, True)

    def _mid_point(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray, tangent: bool
                   ) -> tuple[np.ndarray, np.ndarray]:
        q, K, bad = _kernels().mid_point_force_and_tangent(X, u0, u1, *self._section(), tangent)
        if bad >= 0:
            self._refuse_frame(X)
        return q, K

    def reference_mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray,
                                              tangent: bool = True):
        """Specification (numpy, for the tests only) of :meth:`mid_point_force_and_tangent`;
        with ``tangent=False`` the tangent is None."""
        E = self.section_frames(X)
        c0, Rp0, Rq0, V0 = self._vectors(X, u0, E)
        c1, Rp1, Rq1, V1 = self._vectors(X, u1, E)
        n_el = len(c0.l0)
        eps0, eps1 = self._strains(c0, V0), self._strains(c1, V1)
        deps = eps1 - eps0
        deps[:, 0] = c1.stretch - c0.stretch
        S = self.stiffness_matrix_S(c0.l0)
        st_star = np.zeros((n_el, 6))
        dst_star = np.zeros((n_el, 6, 6))
        for t, wt in zip(_GAUSS_T, _GAUSS_W):                            # s* = int_0^1 s~(e(t)) dt
            en = self._energy(eps0 + t * deps, c0.l0, S, order=2 if tangent else 1)
            st_star += wt * en["grad"]
            if tangent:
                dst_star += wt * t * en["hess"]
        # Four Gauss points leave an error of order |de|^8 (the angle map is not polynomial); where
        # it exceeds round-off, a discrete-gradient correction along de makes s* . de = dPhi exact
        phi0 = self._energy(eps0, c0.l0, S, order=0)["phi"]
        end = self._energy(eps1, c0.l0, S, order=1)
        miss = (end["phi"] - phi0) - np.einsum("ei,ei->e", st_star, deps)
        fix = np.abs(miss) > 64.0 * np.finfo(float).eps * (np.abs(phi0) + np.abs(end["phi"]))
        if np.any(fix):
            de = deps[fix]
            dd = np.einsum("ei,ei->e", de, de)
            cf = miss[fix] / dd
            st_star[fix] += cf[:, None] * de
            if tangent:
                dmiss = end["grad"][fix] - (st_star[fix] - cf[:, None] * de) \
                    - np.einsum("eji,ej->ei", dst_star[fix], de)
                dcf = dmiss / dd[:, None] - (2.0 * cf / dd)[:, None] * de
                dst_star[fix] += de[:, :, None] * dcf[:, None, :] + cf[:, None, None] * np.eye(6)
        Vm = 0.5 * (V0 + V1)
        Jm = _slot_jacobians(Vm)
        L_sum = c0.l + c1.l
        Gm = self._rows(Vm, Jm, 2.0 / L_sum, c0.l0)
        q = np.einsum("eik,ei->ek", Gm, st_star)
        if not tangent:
            return q, None
        Gres = {"p": cayley_resolvent(cayley_from_matrix(Rp1 @ Rp0.transpose(0, 2, 1))),
                "q": cayley_resolvent(cayley_from_matrix(Rq1 @ Rq0.transpose(0, 2, 1)))}
        P = [Jm[0]] + [_triad_jacobian(-Gres[_NODE[s]] @ skew(Vm[s]), _NODE[s]) for s in range(1, 5)]
        E1 = self._rows(V1, P, 1.0 / c1.l, c0.l0)                        # d e_{n+1} / d d
        E1[:, 0] = c1.e @ _JL
        K = Gm.transpose(0, 2, 1) @ dst_star @ E1
        K += self._pair_stiffness(st_star, Vm, Jm, P, 0.5, c0.l0)
        lm = Vm[0]
        # row 0 = 2 J_l^T l_m / (|l_n| + |l_{n+1}|)
        K += st_star[:, 0, None, None] * (_JL.T @ _JL / L_sum[:, None, None]
                                          - 2.0 * np.einsum("ei,ej->eij", lm @ _JL, c1.e @ _JL)
                                          / L_sum[:, None, None] ** 2)
        return q, K
