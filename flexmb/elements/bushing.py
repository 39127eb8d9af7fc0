"""Bushing: a linear spring-damper between two frames, 3 components in 2D and 6 in 3D.

Side a and side b (rigid bodies or beam nodes, or the ground as side a) carry a common bushing
point P and bushing axes E (columns, the reference orientation), both fixed in each side.
Translational deflection in the axes carried by side a,

    delta = E^T R_a^T (p_b - p_a),   p = x_node + R_node s (s: P relative to the node),

with stiffness K_t = diag(k_t) and damping C_t = diag(c_t): V_t = delta . K_t delta / 2, damping
force C_t delta'. Rotation: 2D the relative angle phi = theta_b - theta_a, V_r = k_r phi^2 / 2,
damping c_r phi'. 3D the bilinear measure

    V_r = sum_j g_j (1 - e_j^a . e_j^b),   e_j^x = R_x E_j,   g_j = (k_1 + k_2 + k_3) / 2 - k_j,

which for small relative rotations theta (in the bushing axes) is sum_i k_i theta_i^2 / 2 (each
term 1 - e^a . e^b = (theta_k^2 + theta_l^2) / 2 for the two other axes); its moment is
``m = sum_j g_j e_j^a x e_j^b`` on b (and -m on a). Rotational damping: the moment
``C_s (omega_b - omega_a)`` with ``C_s = R_a E diag(c_r) E^T R_a^T``.

Mid-point form (energy-consistent, the construction of :mod:`flexmb.elements.force_elements`):
every quantity is bilinear in vectors whose step increments are exactly linear in the step's
increments d (Cayley parameters w at 3D rotations: ``R1 - R0 = hat(w) R_m``, R_m the mean
matrix; 2D: ``A1 - A0 = sinc(dth/2) dth J A(th_m)``), so with ``a1 b1 - a0 b0 = a_m db + da b_m``

* ``delta_{n+1} - delta_n = G_m d`` exactly; the spring acts as ``G_m^T K_t (delta_n + delta_{n+1}) / 2``
  (work exactly -dV_t), the damper as ``G_m^T C_t (delta_{n+1} - delta_n) / dt`` (dissipation
  ``Ddelta . C_t Ddelta / dt >= 0``);
* 3D rotation: ``D(e^a . e^b) = w_a . (e^a_m x e^b_m) + w_b . (e^b_m x e^a_m)``: the moment
  ``sum_j g_j e_jm^a x e_jm^b`` does work exactly -dV_r; the rotational damper
  ``C_s(R_a,n) (w_b - w_a) / dt`` dissipates ``Dw . C_s Dw / dt >= 0``. 2D rotation: linear.

Tangents are exact, with respect to spins (end-point forms: statics, Newmark, linearize; the
end-point dampers include the change of the deflection rate with the configuration at fixed
velocities and the turning of C_s with R_a) or to the step increment (mid-point).
"""
from __future__ import annotations

import numpy as np

from flexmb.elements.base import ElementGroup
from flexmb.elements.force_elements import _J, _planar, reference_chord
from flexmb.rotations import cayley, cayley_between, cayley_resolvent, exp_map, sinc, sinc_derivative, skew


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("...i,...i->...", a, b)


def _mv(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.einsum("...ij,...j->...i", A, x)


class Bushing(ElementGroup):
    """Group of bushings (see the module docstring).

    Parameters
    ----------
    connectivity : (n_el, 2) nodes of sides a and b, or (n_el, 1) the node of side b with the
        ground as side a.
    dim : 2 or 3.
    offsets : (n_el, n_nodes, dim) the bushing point relative to each node, m.
    anchor : (n_el, dim) the bushing point (ground side a), m.
    axes : (n_el, dim, dim) the bushing axes E (columns) in the reference configuration.
    k_t, c_t : (n_el, dim) translational stiffness (N/m) and damping (N s/m) along the axes.
    k_r, c_r : rotational stiffness (N m/rad) and damping (N m s/rad): (n_el,) in 2D, (n_el, 3)
        about the axes in 3D.
    """

    has_rotations = True

    def __init__(self, connectivity: np.ndarray, dim: int, offsets: np.ndarray, anchor: np.ndarray | None,
                 axes: np.ndarray, k_t: np.ndarray, c_t: np.ndarray, k_r: np.ndarray, c_r: np.ndarray,
                 name: str = "bushings", labels: list[str] | None = None) -> None:
        self.n_nodes = int(np.shape(np.atleast_2d(connectivity))[1])
        super().__init__(connectivity, dim, name)
        n = self.n_elements
        self.offsets = np.asarray(offsets, dtype=float).reshape(n, self.n_nodes, dim).copy()
        self.anchor = None if anchor is None else np.asarray(anchor, dtype=float).reshape(n, dim).copy()
        self.axes = np.asarray(axes, dtype=float).reshape(n, dim, dim).copy()
        self.k_t = np.asarray(k_t, dtype=float).reshape(n, dim).copy()
        self.c_t = np.asarray(c_t, dtype=float).reshape(n, dim).copy()
        shape = (n,) if dim == 2 else (n, 3)
        self.k_r = np.asarray(k_r, dtype=float).reshape(shape).copy()
        self.c_r = np.asarray(c_r, dtype=float).reshape(shape).copy()
        self.labels = labels or [f"element {e} of group {name!r}" for e in range(n)]
        if dim == 3:
            # g_j of the bilinear rotational energy (module docstring)
            self._g = 0.5 * self.k_r.sum(axis=1)[:, None] - self.k_r

    @property
    def damped(self) -> bool:
        return bool(np.any(self.c_t) or np.any(self.c_r))

    # ----------------------------------------------------------- kinematics
    def _sides(self) -> list[tuple[int, int, float]]:
        """(offset index, first element DOF, sign) per node side (a: -, b: +)."""
        per = self.dofs_per_node
        return [(0, 0, 1.0)] if self.n_nodes == 1 else [(0, 0, -1.0), (1, per, 1.0)]

    def _rot(self, first: int) -> slice:
        return slice(first + 2, first + 3) if self.dim == 2 else slice(first + 3, first + 6)

    def _R(self, u: np.ndarray, first: int) -> np.ndarray:
        return _planar(u[:, first + 2]) if self.dim == 2 else exp_map(u[:, first + 3:first + 6])

    def _side_a_rotation(self, u: np.ndarray) -> np.ndarray:
        """R_a (n_el, dim, dim); identity on the ground."""
        if self.n_nodes == 1:
            return np.broadcast_to(np.eye(self.dim), (self.n_elements, self.dim, self.dim))
        return self._R(u, 0)

    def _reference_chord(self, X: np.ndarray) -> np.ndarray:
        """p_b - p_a in the reference configuration (n_el, dim), zero up to round-off (both sides
        carry the bushing point): :func:`~flexmb.elements.force_elements.reference_chord`."""
        return reference_chord(X, self.offsets, self.anchor, self._sides())

    def _chord(self, X: np.ndarray, u: np.ndarray):
        """r = p_b - p_a (n_el, dim), G_r = dr/du (spins) (n_el, dim, ne), rotated offsets per side."""
        d, n = self.dim, self.n_elements
        r = self._reference_chord(X)
        G = np.zeros((n, d, self.ndof))
        rotated = []
        for end, first, sign in self._sides():
            Rs = _mv(self._R(u, first), self.offsets[:, end])
            r += sign * (u[:, first:first + d] + (Rs - self.offsets[:, end]))
            G[:, :, first:first + d] += sign * np.eye(d)
            if d == 2:
                G[:, :, first + 2] += sign * Rs @ _J.T
            else:
                G[:, :, first + 3:first + 6] -= sign * skew(Rs)
            rotated.append(Rs)
        return r, G, rotated

    def _a_column(self, Ra: np.ndarray, r: np.ndarray) -> np.ndarray:
        """d(R_a^T r)/d(rotation of a) at fixed r (spins): 2D -A^T J r (n_el, 2, 1), 3D R^T hat(r)."""
        if self.dim == 2:
            return -_mv(Ra.transpose(0, 2, 1), r @ _J.T)[:, :, None]
        return Ra.transpose(0, 2, 1) @ skew(r)

    def _deflection(self, X: np.ndarray, u: np.ndarray):
        """delta (n_el, dim), B = d delta / du (n_el, dim, ne), and r, G_r, R_a, rotated offsets."""
        r, G, rotated = self._chord(X, u)
        Ra = self._side_a_rotation(u)
        ET = self.axes.transpose(0, 2, 1)
        B = Ra.transpose(0, 2, 1) @ G
        if self.n_nodes == 2:
            B[:, :, self._rot(0)] += self._a_column(Ra, r)
        return _mv(ET, _mv(Ra.transpose(0, 2, 1), r)), ET @ B, r, G, Ra, rotated

    def _turning_offsets(self, rotated: list[np.ndarray], f: np.ndarray) -> np.ndarray:
        """d(G_r^T)/du . f at fixed f (n_el, dim): the end-point geometric term of the offsets."""
        K = np.zeros((self.n_elements, self.ndof, self.ndof))
        for (end, first, sign), Rs in zip(self._sides(), rotated):
            if self.dim == 2:
                K[:, first + 2, first + 2] -= sign * _dot(Rs, f)
            else:
                rot = slice(first + 3, first + 6)
                K[:, rot, rot] += sign * (np.einsum("ni,nj->nij", Rs, f) - _dot(Rs, f)[:, None, None] * np.eye(3))
        return K

    def _geometric(self, r: np.ndarray, G: np.ndarray, Ra: np.ndarray, rotated: list, sigma: np.ndarray) -> np.ndarray:
        """d(B^T sigma)/du at fixed sigma (n_el, dim) (spins)."""
        tau = _mv(self.axes, sigma)                                   # E sigma
        Rt = _mv(Ra, tau)                                             # R_a E sigma
        K = self._turning_offsets(rotated, Rt)
        if self.n_nodes == 2:
            ra = self._rot(0)
            if self.dim == 2:
                # G_r^T (A tau): d(A tau)/dth_a = J A tau; col_a . tau = -(J r) . (A tau)
                JRt = Rt @ _J.T
                K[:, :, 0 + 2] += np.einsum("nai,na->ni", G, JRt)
                K[:, 2, 2] -= _dot(r, Rt)
                K[:, 2, :] += np.einsum("na,naj->nj", JRt, G)
            else:
                # G_r^T (R tau): d(R tau) = -hat(R tau) dphi_a; (R tau) x r: hat(r) hat(R tau) dphi_a + hat(R tau) dr
                K[:, :, ra] -= np.einsum("nai,nab->nib", G, skew(Rt))
                K[:, ra, ra] += skew(r) @ skew(Rt)
                K[:, ra, :] += skew(Rt) @ G
        return K

    # ---------------------------------------------------------- end-point
    def _rotation_terms(self, u: np.ndarray):
        """3D: e_j^a, e_j^b (n_el, 3 axes, 3)."""
        Ra = self._side_a_rotation(u)
        Rb = self._R(u, self._sides()[-1][1])
        ea = np.einsum("nij,njk->nki", Ra, self.axes)                # row k: R_a E_k
        eb = np.einsum("nij,njk->nki", Rb, self.axes)
        return ea, eb

    def force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        delta, B, r, G, Ra, rotated = self._deflection(X, u)
        sigma = self.k_t * delta
        q = np.einsum("nai,na->ni", B, sigma)
        K = np.einsum("nai,na,naj->nij", B, self.k_t, B) + self._geometric(r, G, Ra, rotated, sigma)
        sb = self._rot(self._sides()[-1][1])
        if self.dim == 2:
            phi = u[:, sb.start] - (u[:, 2] if self.n_nodes == 2 else 0.0)
            for first, sign in self._rotation_sides():
                q[:, first + 2] += sign * self.k_r * phi
                for first2, sign2 in self._rotation_sides():
                    K[:, first + 2, first2 + 2] += sign * sign2 * self.k_r
            return q, K
        ea, eb = self._rotation_terms(u)
        m = np.einsum("nk,nki->ni", self._g, np.cross(ea, eb))       # moment on b
        q[:, sb] += m
        ab = _dot(ea, eb)                                            # (n_el, 3)
        # dm/dphi_b = sum g [(a.b) I - b a^T], dm/dphi_a = sum g [a b^T - (a.b) I]
        I3 = np.eye(3)
        Kbb = np.einsum("nk,nkij->nij", self._g, ab[:, :, None, None] * I3 - np.einsum("nki,nkj->nkij", eb, ea))
        K[:, sb, sb] += Kbb
        if self.n_nodes == 2:
            Kba = np.einsum("nk,nkij->nij", self._g, np.einsum("nki,nkj->nkij", ea, eb) - ab[:, :, None, None] * I3)
            ra = self._rot(0)
            q[:, ra] -= m
            K[:, sb, ra] += Kba
            K[:, ra, sb] -= Kbb
            K[:, ra, ra] -= Kba
        return q, K

    def _rotation_sides(self) -> list[tuple[int, float]]:
        return [(first, sign) for _, first, sign in self._sides()]

    def internal_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self.force_and_tangent(X, u)[0]

    def damping_force(self, X: np.ndarray, u: np.ndarray, v: np.ndarray, dv_du: float, tangent: bool
                      ) -> tuple[np.ndarray, np.ndarray | None]:
        delta, B, r, G, Ra, rotated = self._deflection(X, u)
        rate = _mv(B, v)
        sigma = self.c_t * rate
        q = np.einsum("nai,na->ni", B, sigma)
        K = None
        if tangent:
            K = dv_du * np.einsum("nai,na,naj->nij", B, self.c_t, B) + self._geometric(r, G, Ra, rotated, sigma)
            K += np.einsum("nai,na,naj->nij", B, self.c_t, self._rate_change(v, r, G, Ra, rotated))
        rb = self._rot(self._sides()[-1][1])
        ra = self._rot(0)
        wa = v[:, ra] if self.n_nodes == 2 else np.zeros_like(v[:, rb])
        if self.dim == 2:
            tq = self.c_r * (v[:, rb.start] - wa[:, 0])
            for first, sign in self._rotation_sides():
                q[:, first + 2] += sign * tq
                if tangent:
                    for first2, sign2 in self._rotation_sides():
                        K[:, first + 2, first2 + 2] += sign * sign2 * self.c_r * dv_du
            return q, K
        E = Ra @ self.axes
        Cs = E @ (self.c_r[:, :, None] * E.transpose(0, 2, 1))       # R_a E diag(c_r) E^T R_a^T
        omega = v[:, rb] - wa
        tq = _mv(Cs, omega)
        q[:, rb] += tq
        if self.n_nodes == 2:
            q[:, ra] -= tq
        if tangent:
            K[:, rb, rb] += dv_du * Cs
            if self.n_nodes == 2:
                K[:, rb, ra] -= dv_du * Cs
                K[:, ra, rb] -= dv_du * Cs
                K[:, ra, ra] += dv_du * Cs
                turn = -skew(tq) + Cs @ skew(omega)                  # dC_s/dphi_a omega
                K[:, rb, ra] += turn
                K[:, ra, ra] -= turn
        return q, K

    def _rate_change(self, v: np.ndarray, r: np.ndarray, G: np.ndarray, Ra: np.ndarray, rotated: list) -> np.ndarray:
        """d(B v)/du at fixed v (n_el, dim, ne): delta' = E^T R_a^T (r' - omega_a x r)."""
        d = self.dim
        n = self.n_elements
        rdot = _mv(G, v)
        dy = np.zeros((n, d, self.ndof))                              # d(r' - w_a x r)/du
        for (end, first, sign), Rs in zip(self._sides(), rotated):
            if d == 2:
                dy[:, :, first + 2] -= sign * v[:, first + 2, None] * Rs
            else:
                om = v[:, first + 3:first + 6]
                dy[:, :, first + 3:first + 6] += sign * (_dot(om, Rs)[:, None, None] * np.eye(3)
                                                         - np.einsum("ni,nj->nij", Rs, om))
        if self.n_nodes == 2:
            if d == 2:
                wa = v[:, 2]
                y = rdot - wa[:, None] * (r @ _J.T)
                dy -= wa[:, None, None] * (_J @ G)
            else:
                wa = v[:, 3:6]
                y = rdot - np.cross(wa, r)
                dy -= skew(wa) @ G
        else:
            y = rdot
        out = Ra.transpose(0, 2, 1) @ dy
        if self.n_nodes == 2:
            out[:, :, self._rot(0)] += self._a_column(Ra, y)
        return self.axes.transpose(0, 2, 1) @ out

    # ---------------------------------------------------------- mid-point
    def _mid_point(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray, dt: float | None, tangent: bool):
        """Mid-point force of the springs (dt None) or of the dampers (n_el, ne) and its derivative
        w.r.t. the step increment d (n_el, ne, ne)."""
        d, n, ne = self.dim, self.n_elements, self.ndof
        r0 = self._reference_chord(X)
        r1 = r0.copy()
        Gm, G1 = np.zeros((n, d, ne)), np.zeros((n, d, ne))
        sides = []
        for end, first, sign in self._sides():
            s = self.offsets[:, end]
            R0, R1 = self._R(u0, first), self._R(u1, first)
            a0, a1 = _mv(R0, s), _mv(R1, s)
            r0 += sign * (u0[:, first:first + d] + (a0 - s))
            r1 += sign * (u1[:, first:first + d] + (a1 - s))
            Gm[:, :, first:first + d] += sign * np.eye(d)
            G1[:, :, first:first + d] += sign * np.eye(d)
            if d == 2:
                dth = u1[:, first + 2] - u0[:, first + 2]
                thm = 0.5 * (u0[:, first + 2] + u1[:, first + 2])
                Am = _planar(thm)
                sc, dsc = sinc(0.5 * dth), sinc_derivative(0.5 * dth)
                JAs = _mv(Am, s) @ _J.T
                Gm[:, :, first + 2] += sign * sc[:, None] * JAs
                G1[:, :, first + 2] += sign * a1 @ _J.T
                sides.append(dict(first=first, sign=sign, R0=R0, R1=R1, Am=Am, sc=sc, dsc=dsc, As=_mv(Am, s), JAs=JAs))
            else:
                w = cayley_between(u0[:, first + 3:first + 6], u1[:, first + 3:first + 6])
                res = cayley_resolvent(w)
                s_m = 0.5 * (a0 + a1)
                Gm[:, :, first + 3:first + 6] -= sign * skew(s_m)
                G1[:, :, first + 3:first + 6] -= sign * res @ skew(s_m)
                sides.append(dict(first=first, sign=sign, R0=R0, R1=R1, w=w, res=res, s_m=s_m))
        rm = 0.5 * (r0 + r1)
        ET = self.axes.transpose(0, 2, 1)
        a = sides[0] if self.n_nodes == 2 else None
        if a is None:
            Ra0 = Ra1 = np.broadcast_to(np.eye(d), (n, d, d))
        else:
            Ra0, Ra1 = a["R0"], a["R1"]
        Ram = 0.5 * (Ra0 + Ra1)
        delta0 = _mv(ET, _mv(Ra0.transpose(0, 2, 1), r0))
        delta1 = _mv(ET, _mv(Ra1.transpose(0, 2, 1), r1))
        # G_dm: delta1 - delta0 = G_dm d;  B1 = d delta1 / d d
        Gd = Ram.transpose(0, 2, 1) @ Gm
        B1 = Ra1.transpose(0, 2, 1) @ G1
        if a is not None:
            ra = self._rot(0)
            if d == 2:
                Gd[:, :, 2] += a["sc"][:, None] * _mv(a["Am"].transpose(0, 2, 1), -(rm @ _J.T))
                B1[:, :, 2] += -_mv(Ra1.transpose(0, 2, 1), r1 @ _J.T)
            else:
                Gd[:, :, ra] += Ram.transpose(0, 2, 1) @ skew(rm)
                # d(R1^T r1)/dw at fixed r1 = R0^T G(-w) hat((r1 + cay(-w) r1) / 2)
                back = _mv(cayley(-a["w"]), r1)
                B1[:, :, ra] += Ra0.transpose(0, 2, 1) @ cayley_resolvent(-a["w"]) @ skew(0.5 * (r1 + back))
        Gd, B1 = ET @ Gd, ET @ B1
        if dt is None:
            sigma = 0.5 * self.k_t * (delta0 + delta1)
            dsigma = 0.5 * self.k_t
        else:
            sigma = self.c_t * (delta1 - delta0) / dt
            dsigma = self.c_t / dt
        q = np.einsum("nai,na->ni", Gd, sigma)
        K = np.einsum("nai,na,naj->nij", Gd, dsigma, B1) if tangent else None
        if tangent:
            K += self._mid_geometric(sides, a, rm, Gm, G1, Ram, sigma)
        self._mid_point_rotation(u0, u1, dt, sides, q, K)
        return q, K

    def _mid_geometric(self, sides: list, a: dict | None, rm: np.ndarray, Gm: np.ndarray, G1: np.ndarray,
                       Ram: np.ndarray, sigma: np.ndarray) -> np.ndarray:
        """d(G_dm^T sigma)/dd at fixed sigma; Gm, G1 (n_el, dim, ne): the chord's exact increment map
        and end-of-step Jacobian."""
        d, n = self.dim, self.n_elements
        K = np.zeros((n, self.ndof, self.ndof))
        tau = _mv(self.axes, sigma)
        f = _mv(Ram, tau)                                             # R_am E sigma: the force on the chord
        for side in sides:                                            # the offsets turning (as the point spring)
            first, sign = side["first"], side["sign"]
            if d == 2:
                K[:, first + 2, first + 2] += sign * 0.5 * (side["dsc"] * _dot(side["JAs"], f)
                                                            - side["sc"] * _dot(side["As"], f))
            else:
                rot = slice(first + 3, first + 6)
                K[:, rot, rot] += sign * 0.5 * skew(f) @ side["res"] @ skew(side["s_m"])
        if a is None:
            return K
        # G_rm^T (R_am tau): R_am moves with the rotation of a (half of R_a1's change)
        if d == 2:
            K[:, :, 2] += 0.5 * np.einsum("nai,na->ni", Gm, _mv(a["R1"], tau) @ _J.T)
            # col_a . tau = sinc(h) r_m . (J A_m tau); h and th_m move by half of dth_a, r_m by half of dr1
            JAt = _mv(a["Am"], tau) @ _J.T
            K[:, 2, 2] += 0.5 * (a["dsc"] * _dot(rm, JAt) - a["sc"] * _dot(rm, _mv(a["Am"], tau)))
            K[:, 2, :] += 0.5 * a["sc"][:, None] * np.einsum("na,naj->nj", JAt, G1)
        else:
            ra = self._rot(0)
            v = f
            K[:, :, ra] += -0.5 * np.einsum("nai,nab->nib", Gm, a["res"] @ skew(v))
            # q_wa += v x r_m: through r_m 1/2 hat(v) G1, through v 1/2 hat(r_m) G hat(v)
            K[:, ra, :] += 0.5 * skew(v) @ G1
            K[:, ra, ra] += 0.5 * skew(rm) @ a["res"] @ skew(v)
        return K

    def _mid_point_rotation(self, u0, u1, dt, sides, q, K) -> None:
        """Add the rotational spring (dt None) or damper of the mid-point form into q and K."""
        b = sides[-1]
        rb = self._rot(b["first"])
        two = self.n_nodes == 2
        ra = self._rot(0)
        if self.dim == 2:
            dphi_b = u1[:, rb.start] - u0[:, rb.start]
            dphi_a = u1[:, 2] - u0[:, 2] if two else 0.0
            if dt is None:
                phi_m = 0.5 * (u0[:, rb.start] + u1[:, rb.start]) - (0.5 * (u0[:, 2] + u1[:, 2]) if two else 0.0)
                moment, stiff = self.k_r * phi_m, 0.5 * self.k_r
            else:
                moment, stiff = self.c_r * (dphi_b - dphi_a) / dt, self.c_r / dt
            for first, sign in self._rotation_sides():
                q[:, first + 2] += sign * moment
                if K is not None:
                    for first2, sign2 in self._rotation_sides():
                        K[:, first + 2, first2 + 2] += sign * sign2 * stiff
            return
        if dt is not None:
            Ra0 = sides[0]["R0"] if two else np.broadcast_to(np.eye(3), (self.n_elements, 3, 3))
            E = Ra0 @ self.axes
            Cs = E @ (self.c_r[:, :, None] * E.transpose(0, 2, 1))
            dw = b["w"] - (sides[0]["w"] if two else 0.0)
            tq = _mv(Cs, dw) / dt
            q[:, rb] += tq
            if two:
                q[:, ra] -= tq
            if K is not None:
                K[:, rb, rb] += Cs / dt
                if two:
                    K[:, rb, ra] -= Cs / dt
                    K[:, ra, rb] -= Cs / dt
                    K[:, ra, ra] += Cs / dt
            return
        # spring: m_m = sum g_j e_jm^a x e_jm^b
        eb = 0.5 * (np.einsum("nij,njk->nki", b["R0"], self.axes) + np.einsum("nij,njk->nki", b["R1"], self.axes))
        if two:
            ea = 0.5 * (np.einsum("nij,njk->nki", sides[0]["R0"], self.axes)
                        + np.einsum("nij,njk->nki", sides[0]["R1"], self.axes))
        else:
            ea = self.axes.transpose(0, 2, 1).copy()
        m = np.einsum("nk,nki->ni", self._g, np.cross(ea, eb))
        q[:, rb] += m
        if two:
            q[:, ra] -= m
        if K is None:
            return
        # d(a_m x b_m)/dw_b = -1/2 hat(a_m) G_b hat(b_m);  /dw_a = 1/2 hat(b_m) G_a hat(a_m)
        Kb = -0.5 * np.einsum("nk,nkij->nij", self._g, skew(ea) @ b["res"][:, None] @ skew(eb))
        K[:, rb, rb] += Kb
        if two:
            Ka = 0.5 * np.einsum("nk,nkij->nij", self._g, skew(eb) @ sides[0]["res"][:, None] @ skew(ea))
            K[:, rb, ra] += Ka
            K[:, ra, rb] -= Kb
            K[:, ra, ra] -= Ka

    def mid_point_force(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        return self.mid_point_force_and_tangent(X, u0, u1)[0]

    def mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        return self._mid_point(X, u0, u1, None, True)

    def mid_point_damping(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray, dt: float, tangent: bool
                          ) -> tuple[np.ndarray, np.ndarray | None]:
        return self._mid_point(X, u0, u1, dt, tangent)

    # ---------------------------------------------------------- energy, outputs
    def strain_energy(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """V_t + V_r (n_el,), J."""
        delta = self._deflection(X, u)[0]
        V = 0.5 * _dot(delta, self.k_t * delta)
        if self.dim == 2:
            phi = u[:, self._rot(self._sides()[-1][1]).start] - (u[:, 2] if self.n_nodes == 2 else 0.0)
            return V + 0.5 * self.k_r * phi**2
        ea, eb = self._rotation_terms(u)
        return V + np.einsum("nk,nk->n", self._g, 1.0 - _dot(ea, eb))

    output_units = {"deflection": "m"}

    def element_outputs(self, X: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        """``deflection``: delta in the bushing axes of side a (n_el, dim), m."""
        return {"deflection": self._deflection(X, u)[0]}

    def generalized_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The translational spring forces K_t delta (n_el, dim), N."""
        return self.k_t * self._deflection(X, u)[0]

    def geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        """The part of the tangent linear in given translational forces (n_el, dim)."""
        _, _, r, G, Ra, rotated = self._deflection(X, u)
        return self._geometric(r, G, Ra, rotated, stresses)

    def axial_strain(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return np.zeros(self.n_elements)

    def mass_matrix(self, X: np.ndarray) -> np.ndarray:
        return np.zeros((self.n_elements, self.ndof, self.ndof))
