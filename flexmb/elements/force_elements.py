"""Point-to-point spring-dampers: a linear spring with its own rest length and preload in
parallel with a linear damper, between two points, each on a node, on a rigid body (or a beam
node) at an offset, or fixed in space (the ground).

Geometry. Attachment point P of a side: ``p = X + u + R s``, s the offset in the body frame
(the reference orientation), R the side's rotation (2D ``A(theta)``, 3D ``exp(hat(psi))``; R = I
and s = 0 on a node without rotations; p fixed on the ground). Chord ``r = p_b - p_a``,
length l = |r|, direction e = r / l. The chord is formed as its reference value plus the
displacements' part, ``r = r_ref + sum_sides +-(u + R s - s)``, never from absolute positions,
so its round-off is that of the displacements and offsets wherever the model lies (a pendulum
hung 1e6 m from the origin converges as at the origin). Spring force (tension positive)
``F(l) = k (l - L0) + F_pre``, potential ``V(l) = k (l - L0)^2 / 2 + F_pre (l - L0)``; damper
force ``F_d = c ldot``.

End-point form (statics, Newmark, modes): ``q = G^T (F e)`` with G = dr/du (n_el, dim, ne), the
rotation columns with respect to spins (2D ``J A s``, 3D ``-hat(R s)``), and its exact tangent.

Mid-point form (energy-consistent, as the truss of Crisfield & Shi 1993, eqs. 8-20): the
displacement of an offset point over a step is exactly linear in the step's increments d,
``p_{n+1} - p_n = G_m d``:

* 2D: ``A(th1) s - A(th0) s = sinc(dth/2) dth J A(th_m) s`` (th_m the mean angle);
* 3D with the Cayley update ``R1 = cay(w) R0`` of flexmb's mid-point scheme:
  ``(R1 - R0) s = hat(w) (R0 + R1) s / 2 = -hat(s_m) w``, s_m = (R0 + R1) s / 2.

With ``r_m = (r_n + r_{n+1}) / 2``, ``r_m . (r_{n+1} - r_n) = (l_{n+1}^2 - l_n^2) / 2``, so the
force ``f_m = Phi * 2 r_m / (l_n + l_{n+1})`` on the chord does the work ``Phi (l_{n+1} - l_n)``
exactly. The spring takes the discrete gradient ``Phi = (V(l_{n+1}) - V(l_n)) / (l_{n+1} - l_n)
= k ((l_n + l_{n+1}) / 2 - L0) + F_pre`` (no l'Hopital limit needed for a linear spring): its
work is exactly minus the change of V. The damper takes ``Phi = c (l_{n+1} - l_n) / dt``: it
dissipates exactly ``c (l_{n+1} - l_n)^2 / dt >= 0`` per step, the mid-point rule of the
integral of c ldot^2. ``q_m = G_m^T f_m``; its derivative is taken with respect to the Newton
variable of the mid-point scheme, the increment d (Cayley parameters w at 3D rotations).

Element DOFs: the nodes' translations, with ``has_rotations`` also their rotations
(``ux uy rz`` / ``ux uy uz rx ry rz`` per node); a group of ground springs has one node per
element (side b), its side a being the fixed ``anchor``.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from flexmb.checks import ModelError, UserFunctionError
from flexmb.elements.base import ElementGroup
from flexmb.rotations import cayley_between, cayley_resolvent, exp_map, sinc, sinc_derivative, skew

#: 4-point Gauss-Legendre rule on [0, 1]: the mean of a force curve over a length interval
_GAUSS_POINTS = 0.5 + 0.5 * np.array([-0.8611363115940526, -0.3399810435848563, 0.3399810435848563,
                                      0.8611363115940526])
_GAUSS_WEIGHTS = 0.5 * np.array([0.3478548451374538, 0.6521451548625461, 0.6521451548625461, 0.3478548451374538])
#: 90 degree rotation in the plane: d A(theta) / d theta = J A(theta)
_J = np.array([[0.0, -1.0], [1.0, 0.0]])


def _planar(th: np.ndarray) -> np.ndarray:
    """A(theta) (n, 2, 2) for angles theta (n,)."""
    c, s = np.cos(th), np.sin(th)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)


def reference_chord(X: np.ndarray, offsets: np.ndarray, anchor: np.ndarray | None,
                    sides: list[tuple[int, int, float]]) -> np.ndarray:
    """p_b - p_a in the reference configuration (n_el, dim), a new array, for elements with points
    at ``offsets`` (n_el, n_nodes, dim) from their nodes X (n_el, n_nodes, dim), the ground side at
    ``anchor`` (n_el, dim) or None, and ``sides`` (offset index, first DOF, sign) as the groups give
    them: the difference of the reference positions first (exact for nearby points), then the
    offsets. A chord formed so plus the displacements' part has the round-off of the model's size,
    not of its distance from the origin."""
    r = np.zeros((len(X), X.shape[-1])) if anchor is None else -anchor
    for end, _, sign in sides:
        r = r + sign * X[:, end]
    for end, _, sign in sides:
        r += sign * offsets[:, end]
    return r


class PointSpringDamper(ElementGroup):
    """Group of point-to-point spring-dampers (see the module docstring).

    Parameters
    ----------
    connectivity : (n_el, 2) nodes of sides a and b, or (n_el, 1) the node of side b when side
        a is the ground (then ``anchor`` gives its fixed point).
    dim : 2 or 3.
    k : stiffness (N/m), scalar or (n_el,), >= 0.
    rest_length : L0 (m), scalar or (n_el,), >= 0.
    preload : F_pre, the spring force at the rest length (N, tension positive), scalar or (n_el,).
    c : damping coefficient (N s/m), scalar or (n_el,), >= 0.
    offsets : (n_el, n_nodes, dim) attachment points relative to the nodes in the body frame
        (the reference orientation), m; nonzero only with ``has_rotations``.
    anchor : (n_el, dim) the fixed points of ground sides, m (connectivity (n_el, 1) only).
    has_rotations : whether the nodes carry rotation DOFs (rigid bodies, beam nodes), needed
        for offsets.
    labels : names of the elements, for error messages.
    curve : optional user force curve F(l) (N, tension positive) in place of the linear law,
        called with the lengths (n,) in m and returning (n,) forces; ``rest_length`` is then the
        length at which its potential V(l) = integral of F from rest_length to l is zero, and k,
        preload are unused. ``curve_slope``: its derivative dF/dl (N/m), else a central difference.
    """

    def __init__(self, connectivity: np.ndarray, dim: int, k: float | np.ndarray, rest_length: float | np.ndarray,
                 preload: float | np.ndarray, c: float | np.ndarray, offsets: np.ndarray | None = None,
                 anchor: np.ndarray | None = None, has_rotations: bool = False, name: str = "springs",
                 labels: list[str] | None = None, curve: Callable | None = None,
                 curve_slope: Callable | None = None) -> None:
        self.n_nodes = int(np.shape(np.atleast_2d(connectivity))[1])
        self.has_rotations = bool(has_rotations)
        super().__init__(connectivity, dim, name)
        n = self.n_elements
        self.k = self._per_element(k, n, "k (N/m)", name, positive=False)
        self.rest_length = self._per_element(rest_length, n, "rest_length (m)", name, positive=False)
        self.preload = self._broadcast(preload, n, f"element group {name!r}: preload (N)")
        self.c = self._per_element(c, n, "c (N s/m)", name, positive=False)
        self.offsets = np.zeros((n, self.n_nodes, dim)) if offsets is None else np.asarray(offsets, float).copy()
        if self.n_nodes == 1 and anchor is None:
            raise ModelError(f"element group {name!r}: ground springs (one node each) need anchor points")
        self.anchor = None if anchor is None else np.asarray(anchor, dtype=float).reshape(n, dim).copy()
        if not self.has_rotations and np.any(self.offsets):
            raise ModelError(f"element group {name!r}: offsets need nodes with rotations")
        self.labels = labels or [f"element {e} of group {name!r}" for e in range(n)]
        self.curve, self.curve_slope = curve, curve_slope

    # -------------------------------------------------------------- force law
    def _curve(self, function: Callable, lengths: np.ndarray, what: str) -> np.ndarray:
        """function(lengths) checked: (n_el,) finite numbers, else UserFunctionError naming the spring."""
        try:
            value = np.asarray(function(lengths.copy()), dtype=float)
        except Exception as exc:                                  # the user's code: anything can happen
            raise UserFunctionError(f"{what} of {self._named()} raised "
                                    f"{type(exc).__name__}: {exc} at lengths {lengths.tolist()} m") from exc
        if value.shape != lengths.shape or not np.all(np.isfinite(value)):
            raise UserFunctionError(f"{what} of {self._named()} returned "
                                    f"{value.tolist()} for lengths {lengths.tolist()} m; it must return one finite "
                                    "force per length")
        return value

    def _named(self) -> str:
        """The springs of the group, for errors: their names (the first three) and the group."""
        shown = ", ".join(self.labels[:3]) + (" ..." if len(self.labels) > 3 else "")
        return f"{shown} (group {self.name!r})"

    def spring_force(self, length: np.ndarray) -> np.ndarray:
        """F(l) (n_el,), N, tension positive, for lengths l (n_el,): k (l - L0) + F_pre, or the curve."""
        if self.curve is not None:
            return self._curve(self.curve, length, "the force curve")
        return self.k * (length - self.rest_length) + self.preload

    def spring_slope(self, length: np.ndarray) -> np.ndarray:
        """dF/dl (n_el,), N/m: k, or the curve's slope (its derivative or a central difference)."""
        if self.curve is None:
            return self.k
        if self.curve_slope is not None:
            return self._curve(self.curve_slope, length, "the force curve's slope")
        h = 1e-6 * np.maximum(length, 1e-3)
        return (self.spring_force(length + h) - self.spring_force(length - h)) / (2.0 * h)

    def _discrete_gradient(self, l0: np.ndarray, l1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(V(l1) - V(l0)) / (l1 - l0) and its derivative w.r.t. l1 (n_el,): exactly
        k ((l0 + l1) / 2 - L0) + F_pre and k / 2 for the linear law; for a curve the mean of F
        over [l0, l1] by 4-point Gauss-Legendre (exact for cubic and lower curves, the value F(l0)
        when l1 = l0: no 0/0)."""
        if self.curve is None:
            return self.k * (0.5 * (l0 + l1) - self.rest_length) + self.preload, 0.5 * self.k
        dl = l1 - l0
        phi, dphi = np.zeros_like(l0), np.zeros_like(l0)
        for xi, weight in zip(_GAUSS_POINTS, _GAUSS_WEIGHTS):
            at = l0 + xi * dl
            phi += weight * self.spring_force(at)
            dphi += weight * xi * self.spring_slope(at)
        return phi, dphi

    # -------------------------------------------------------------- geometry
    @property
    def damped(self) -> bool:
        return bool(np.any(self.c))

    def _slots(self) -> list[tuple[int, int, float]]:
        """(end index in offsets, first element DOF, sign) of every side on a node: side b is
        +, side a is - (the chord r = p_b - p_a)."""
        per = self.dofs_per_node
        if self.n_nodes == 1:
            return [(0, 0, 1.0)]
        return [(0, 0, -1.0), (1, per, 1.0)]

    def _rotations(self, u: np.ndarray, first: int) -> np.ndarray:
        """Rotation matrices (n_el, dim, dim) of the node whose DOFs start at ``first``."""
        if self.dim == 2:
            return _planar(u[:, first + 2])
        return exp_map(u[:, first + 3:first + 6])

    def _reference_chord(self, X: np.ndarray) -> np.ndarray:
        return reference_chord(X, self.offsets, self.anchor, self._slots())

    def _chord(self, X: np.ndarray, u: np.ndarray):
        """Chord r (n_el, dim), G = dr/du (n_el, dim, ne) (spins at rotations), rotated offsets."""
        d = self.dim
        r = self._reference_chord(X)
        G = np.zeros((self.n_elements, d, self.ndof))
        rotated = []
        for end, first, sign in self._slots():
            r += sign * u[:, first:first + d]
            G[:, :, first:first + d] += sign * np.eye(d)
            Rs = None
            if self.has_rotations:
                Rs = np.einsum("nij,nj->ni", self._rotations(u, first), self.offsets[:, end])   # (n_el, dim)
                r += sign * (Rs - self.offsets[:, end])
                if d == 2:
                    G[:, :, first + 2] += sign * Rs @ _J.T                       # J R s
                else:
                    G[:, :, first + 3:first + 6] -= sign * skew(Rs)              # -hat(R s)
            rotated.append(Rs)
        return r, G, rotated

    def _geometric(self, rotated: list[np.ndarray | None], f: np.ndarray) -> np.ndarray:
        """d(G^T)/du . f at fixed f (n_el, dim): the offsets turning under a given point force,
        (n_el, ne, ne)."""
        K = np.zeros((self.n_elements, self.ndof, self.ndof))
        if not self.has_rotations:
            return K
        for (end, first, sign), Rs in zip(self._slots(), rotated):
            if self.dim == 2:
                # q_th = sign (J R s) . f, d/dth = sign (J J R s) . f = -sign (R s) . f
                K[:, first + 2, first + 2] -= sign * np.einsum("ni,ni->n", Rs, f)
            else:
                # q_rot = sign (R s) x f; d(R s) = dphi x R s -> sign (R s f^T - (R s . f) I) dphi
                rot = slice(first + 3, first + 6)
                K[:, rot, rot] += sign * (np.einsum("ni,nj->nij", Rs, f)
                                          - np.einsum("ni,ni->n", Rs, f)[:, None, None] * np.eye(3))
        return K

    # ------------------------------------------------------------ end-point
    def lengths(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Current length l (n_el,), m."""
        return np.linalg.norm(self._chord(X, u)[0], axis=1)

    def _direction(self, r: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
        length = np.linalg.norm(r, axis=1)
        if np.any(length == 0.0):
            e = int(np.flatnonzero(length == 0.0)[0])
            raise ModelError(f"spring-damper {self.labels[e]}: its two points coincide ({what}); the direction "
                             "of its force is undefined")
        return length, r / length[:, None]

    def force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r, G, rotated = self._chord(X, u)
        length, e = self._direction(r, "end-point form")
        F = self.spring_force(length)
        f = F[:, None] * e                                                # (n_el, dim) force on b's point
        ee = np.einsum("ni,nj->nij", e, e)
        D = self.spring_slope(length)[:, None, None] * ee + (F / length)[:, None, None] * (np.eye(self.dim) - ee)
        K = np.einsum("nai,nab,nbj->nij", G, D, G) + self._geometric(rotated, f)
        return np.einsum("nai,na->ni", G, f), K

    def internal_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self.force_and_tangent(X, u)[0]

    def damping_force(self, X: np.ndarray, u: np.ndarray, v: np.ndarray, dv_du: float, tangent: bool
                      ) -> tuple[np.ndarray, np.ndarray | None]:
        """Damper force ``G^T c ldot e`` (n_el, ne), ldot = e . G v, at the state (u, v) (spatial
        angular velocities at 3D rotations) and, with ``tangent``, its derivative along a scheme
        whose velocity moves as ``dv = dv_du du`` (n_el, ne, ne)."""
        r, G, rotated = self._chord(X, u)
        length, e = self._direction(r, "damper")
        w = np.einsum("nij,nj->ni", G, v)                                 # relative point velocity
        ldot = np.einsum("ni,ni->n", e, w)
        f = (self.c * ldot)[:, None] * e
        q = np.einsum("nai,na->ni", G, f)
        if not tangent:
            return q, None
        P = np.eye(self.dim) - np.einsum("ni,nj->nij", e, e)
        ee = np.einsum("ni,nj->nij", e, e)
        # through e: c (ldot P / l + e w^T P / l) G
        De = (self.c / length)[:, None, None] * (ldot[:, None, None] * P + np.einsum("ni,nj,njk->nik", e, w, P))
        K = np.einsum("nai,nab,nbj->nij", G, De, G) + self._geometric(rotated, f)
        # through the point velocities at fixed v: d(G v)/du (the offsets turning)
        dW = np.zeros((self.n_elements, self.dim, self.ndof))
        if self.has_rotations:
            for (end, first, sign), Rs in zip(self._slots(), rotated):
                if self.dim == 2:
                    dW[:, :, first + 2] -= sign * v[:, first + 2, None] * Rs        # th' J J R s
                else:
                    om = v[:, first + 3:first + 6]
                    # d(om x R s)/dphi = (om . R s) I - R s om^T
                    dW[:, :, first + 3:first + 6] += sign * (np.einsum("ni,ni->n", om, Rs)[:, None, None] * np.eye(3)
                                                             - np.einsum("ni,nj->nij", Rs, om))
        K += np.einsum("nai,nab,nbj->nij", G, self.c[:, None, None] * ee, dW + dv_du * G)
        return q, K

    # ------------------------------------------------------------ mid-point
    def _mid_point(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray, dt: float | None, tangent: bool):
        """Mid-point force (n_el, ne) of the spring (dt None) or of the damper, and its
        derivative w.r.t. the step increment d (n_el, ne, ne)."""
        d = self.dim
        n = self.n_elements
        r0 = self._reference_chord(X)
        r1 = r0.copy()
        Gm = np.zeros((n, d, self.ndof))                                  # r1 - r0 = Gm d
        G1 = np.zeros((n, d, self.ndof))                                  # dr1/dd
        sides = []
        for end, first, sign in self._slots():
            t = slice(first, first + d)
            r0 += sign * u0[:, t]
            r1 += sign * u1[:, t]
            Gm[:, :, t] += sign * np.eye(d)
            G1[:, :, t] += sign * np.eye(d)
            if not self.has_rotations:
                continue
            s = self.offsets[:, end]
            R0, R1 = self._rotations(u0, first), self._rotations(u1, first)
            a0, a1 = np.einsum("nij,nj->ni", R0, s), np.einsum("nij,nj->ni", R1, s)
            r0 += sign * (a0 - s)
            r1 += sign * (a1 - s)
            if d == 2:
                dth = u1[:, first + 2] - u0[:, first + 2]
                thm = 0.5 * (u0[:, first + 2] + u1[:, first + 2])
                Am_s = np.einsum("nij,nj->ni", _planar(thm), s)
                JAm_s = Am_s @ _J.T
                sc, dsc = sinc(0.5 * dth), sinc_derivative(0.5 * dth)
                Gm[:, :, first + 2] += sign * sc[:, None] * JAm_s
                G1[:, :, first + 2] += sign * a1 @ _J.T
                sides.append((first, sign, JAm_s, Am_s, sc, dsc))
            else:
                w = cayley_between(u0[:, first + 3:first + 6], u1[:, first + 3:first + 6])
                s_m = 0.5 * (a0 + a1)
                Gm[:, :, first + 3:first + 6] -= sign * skew(s_m)
                res = cayley_resolvent(w)                                 # (I - hat(w)/2)^-1
                G1[:, :, first + 3:first + 6] -= sign * res @ skew(s_m)
                sides.append((first, sign, s_m, res))
        l0, l1 = np.linalg.norm(r0, axis=1), np.linalg.norm(r1, axis=1)
        if np.any(l0 + l1 == 0.0):
            e = int(np.flatnonzero(l0 + l1 == 0.0)[0])
            raise ModelError(f"spring-damper {self.labels[e]}: its two points coincide over a whole step")
        kappa = 2.0 / (l0 + l1)
        rm = 0.5 * (r0 + r1)
        if dt is None:
            phi, dphi = self._discrete_gradient(l0, l1)
        else:
            phi = self.c * (l1 - l0) / dt
            dphi = self.c / dt
        f = (phi * kappa)[:, None] * rm                                   # (n_el, dim)
        q = np.einsum("nai,na->ni", Gm, f)
        if not tangent:
            return q, None
        safe = np.where(l1 > 0.0, l1, 1.0)
        e1 = r1 / safe[:, None]
        coef = kappa * dphi - 0.5 * phi * kappa**2                        # (n_el,)
        df = np.einsum("na,nb,nbj->naj", coef[:, None] * rm, e1, G1) + (0.5 * phi * kappa)[:, None, None] * G1
        K = np.einsum("nai,naj->nij", Gm, df)
        for side in sides:
            if d == 2:
                first, sign, JAm_s, Am_s, sc, dsc = side
                # q_th = sign sinc(h) (J A_m s) . f, h = dth/2: d/d(dth) at fixed f
                K[:, first + 2, first + 2] += sign * 0.5 * (dsc * np.einsum("ni,ni->n", JAm_s, f)
                                                            - sc * np.einsum("ni,ni->n", Am_s, f))
            else:
                first, sign, s_m, res = side
                # q_rot = sign s_m x f, ds_m/dw = -res hat(s_m) / 2
                rot = slice(first + 3, first + 6)
                K[:, rot, rot] += sign * 0.5 * skew(f) @ res @ skew(s_m)
        return q, K

    def mid_point_force(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        return self._mid_point(X, u0, u1, None, False)[0]

    def mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        return self._mid_point(X, u0, u1, None, True)

    def mid_point_damping(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray, dt: float, tangent: bool
                          ) -> tuple[np.ndarray, np.ndarray | None]:
        return self._mid_point(X, u0, u1, dt, tangent)

    # ------------------------------------------------------------ outputs, energy
    output_units = {"force": "N", "length": "m"}

    def element_outputs(self, X: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        """Spring ``force`` F(l) (N, tension positive; the damper's share is not included) and
        ``length`` l (m), (n_el,) each."""
        length = self.lengths(X, u)
        return {"force": self.spring_force(length), "length": length}

    def generalized_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Spring force (n_el, 1), N."""
        return self.spring_force(self.lengths(X, u))[:, None]

    def geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        """The part of the tangent linear in given spring forces (n_el, 1)."""
        r, G, rotated = self._chord(X, u)
        length, e = self._direction(r, "geometric stiffness")
        F = stresses[:, 0]
        P = np.eye(self.dim) - np.einsum("ni,nj->nij", e, e)
        return (np.einsum("nai,nab,nbj->nij", G, (F / length)[:, None, None] * P, G)
                + self._geometric(rotated, F[:, None] * e))

    def strain_energy(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """V(l) = k (l - L0)^2 / 2 + F_pre (l - L0) (n_el,), J; for a curve the integral of F from
        L0 to l by the rule of :meth:`_discrete_gradient` (so the mid-point identity is exact for
        curves up to cubic)."""
        length = self.lengths(X, u)
        stretch = length - self.rest_length
        if self.curve is not None:
            return stretch * self._discrete_gradient(self.rest_length, length)[0]
        return 0.5 * self.k * stretch**2 + self.preload * stretch

    def axial_strain(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """(l - L0) / L0 (n_el,), 0 where L0 = 0."""
        L0 = self.rest_length
        return np.where(L0 > 0, (self.lengths(X, u) - L0) / np.where(L0 > 0, L0, 1.0), 0.0)

    def mass_matrix(self, X: np.ndarray) -> np.ndarray:
        """Massless: zeros (n_el, ne, ne)."""
        return np.zeros((self.n_elements, self.ndof, self.ndof))

    def _default_section(self, X: np.ndarray, length: float) -> dict[str, float | str]:
        return {"shape": "tube", "radius": 0.005 * length}


class JointSpringParameters:
    """The parameters of a spring-damper on a joint coordinate q, per element: k, c, rest and preload
    (the force or moment k (q - rest) + preload + c q'), and the elements' names for messages."""

    def _set_spring_damper(self, k: float | np.ndarray, c: float | np.ndarray, rest: float | np.ndarray,
                           preload: float | np.ndarray, labels: list[str] | None) -> None:
        n, name = self.n_elements, self.name
        self.k = self._per_element(k, n, "k", name, positive=False)
        self.c = self._per_element(c, n, "c", name, positive=False)
        self.rest = self._broadcast(rest, n, f"element group {name!r}: rest")
        self.preload = self._broadcast(preload, n, f"element group {name!r}: preload")
        self.labels = labels or [f"element {e} of group {name!r}" for e in range(n)]

    @property
    def damped(self) -> bool:
        return bool(np.any(self.c))


class CoordinateSpringDamper(JointSpringParameters, ElementGroup):
    """Group of spring-dampers on a joint coordinate that is linear in the element DOFs,
    ``q = b . u_e`` (relative to the reference configuration): the relative angle
    ``theta_B - theta_A`` of a planar revolute joint, the slide ``z . u_B`` of a prismatic joint
    on the ground. Generalized force ``(k (q - q_rest) + preload + c qdot) b``; being linear, the
    mid-point form is exact: ``q_m = (q_n + q_{n+1}) / 2`` makes the spring's work exactly
    ``-dV`` and ``qdot = (q_{n+1} - q_n) / dt`` makes the damper dissipate
    ``c (q_{n+1} - q_n)^2 / dt`` (Crisfield & Shi 1993, eq. 21 for a linear element).

    Parameters
    ----------
    connectivity : (n_el, n_nodes) nodes (1 or 2 per element).
    dim : 2 or 3.
    b : (n_el, ndof_el) the coordinate's coefficients on the element DOFs.
    k : stiffness (N/m or N m/rad), c : damping (N s/m or N m s/rad), each >= 0.
    rest : q at which the spring force is ``preload`` (m or rad); preload in N or N m.
    has_rotations : whether the element DOFs include the nodes' rotations.
    """

    def __init__(self, connectivity: np.ndarray, dim: int, b: np.ndarray, k: float | np.ndarray,
                 c: float | np.ndarray, rest: float | np.ndarray, preload: float | np.ndarray,
                 has_rotations: bool, name: str = "joint springs", labels: list[str] | None = None) -> None:
        self.n_nodes = int(np.shape(np.atleast_2d(connectivity))[1])
        self.has_rotations = bool(has_rotations)
        super().__init__(connectivity, dim, name)
        self.b = np.asarray(b, dtype=float).reshape(self.n_elements, self.ndof).copy()
        self._set_spring_damper(k, c, rest, preload, labels)

    def coordinate(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """q = b . u_e (n_el,), m or rad."""
        return np.einsum("ni,ni->n", self.b, u)

    def spring_force(self, q: np.ndarray) -> np.ndarray:
        """k (q - rest) + preload (n_el,), N or N m."""
        return self.k * (q - self.rest) + self.preload

    def _bb(self, factor: np.ndarray | float) -> np.ndarray:
        return np.asarray(factor)[..., None, None] * np.einsum("ni,nj->nij", self.b, self.b)

    def force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.internal_force(X, u), self._bb(self.k)

    def internal_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self.spring_force(self.coordinate(X, u))[:, None] * self.b

    def mid_point_force(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        return self.internal_force(X, 0.5 * (u0 + u1))

    def mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        return self.mid_point_force(X, u0, u1), self._bb(0.5 * self.k)

    def mid_point_damping(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray, dt: float, tangent: bool
                          ) -> tuple[np.ndarray, np.ndarray | None]:
        rate = (self.coordinate(X, u1) - self.coordinate(X, u0)) / dt
        return (self.c * rate)[:, None] * self.b, self._bb(self.c / dt) if tangent else None

    def damping_force(self, X: np.ndarray, u: np.ndarray, v: np.ndarray, dv_du: float, tangent: bool
                      ) -> tuple[np.ndarray, np.ndarray | None]:
        return (self.c * self.coordinate(X, v))[:, None] * self.b, self._bb(self.c * dv_du) if tangent else None

    output_units = {"force": "N or N m", "coordinate": "m or rad"}

    def element_outputs(self, X: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        """Spring ``force`` (N or N m; without the damper's share) and the joint ``coordinate``
        q (m or rad), (n_el,) each."""
        q = self.coordinate(X, u)
        return {"force": self.spring_force(q), "coordinate": q}

    def generalized_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self.spring_force(self.coordinate(X, u))[:, None]

    def geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        """Zero: the coordinate is linear in the DOFs."""
        return np.zeros((self.n_elements, self.ndof, self.ndof))

    def strain_energy(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """k (q - rest)^2 / 2 + preload (q - rest) (n_el,), J."""
        s = self.coordinate(X, u) - self.rest
        return 0.5 * self.k * s**2 + self.preload * s

    def axial_strain(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Zeros (n_el,): no axial strain."""
        return np.zeros(self.n_elements)

    def mass_matrix(self, X: np.ndarray) -> np.ndarray:
        return np.zeros((self.n_elements, self.ndof, self.ndof))
