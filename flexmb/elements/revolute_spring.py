"""Rotational spring-damper about the axis of a spatial revolute joint.

The joint frame's x_j and y_j (reference orientation) are carried by side a (``x_a = R_a x_j``,
``y_a = R_a y_j``; fixed on the ground) and x_j by side b (``x_b = R_b x_j``). With the joint
holding the axes together, the relative angle about z_j is

    phi = atan2(s, c),   c = x_a . x_b,   s = y_a . x_b    (phi = 0 in the reference state,
    |phi| < pi: the angle is read modulo a turn),

with the moment ``sigma = k (phi - rest) + preload + c_d phi'`` about the axis (on b; minus on a).

End-point form: ``dphi = (c ds - s dc) / rho^2``, rho^2 = c^2 + s^2 (1 on the joint), with
``dc = (dpsi_a - dpsi_b) . (x_a x x_b)`` and ``ds = (dpsi_a - dpsi_b) . (y_a x x_b)`` for spins.

Mid-point form (energy-consistent, as the chord angle of :mod:`flexmb.elements.beam2d`): with the
Cayley increments of flexmb's mid-point scheme the bilinear c and s change exactly by
``Dc = (w_a - w_b) . (x_am x x_bm)``, ``Ds = (w_a - w_b) . (y_am x x_bm)`` (m: step means), so
``c_n s_{n+1} - s_n c_{n+1} = c_m Ds - s_m Dc`` exactly and, with gamma = Dphi / sin Dphi,

    Dphi = gamma / (rho_n rho_{n+1}) (w_a - w_b) . (c_m u_m - s_m v_m),   u_m = y_am x x_bm, v_m = x_am x x_bm:

the generalized moment ``sigma_m kappa p`` (kappa = gamma / (rho_n rho_{n+1}), p = c_m u_m - s_m v_m) on
w_a and its negative on w_b does the work sigma_m Dphi exactly: the spring takes
``sigma_m = k ((phi_n + phi_{n+1}) / 2 - rest) + preload`` (work exactly -dV), the damper
``c_d Dphi / dt`` (dissipation c_d Dphi^2 / dt >= 0). Tangents are exact (spins, or the step's
Cayley parameters).
"""
from __future__ import annotations

import numpy as np

from flexmb.elements.base import ElementGroup
from flexmb.elements.beam2d import _sinc_ratio
from flexmb.elements.bushing import _dot
from flexmb.elements.force_elements import JointSpringParameters
from flexmb.rotations import cayley_between, cayley_resolvent, exp_map, skew


def _outer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ni,nj->nij", a, b)


class RevoluteSpring(JointSpringParameters, ElementGroup):
    """Group of rotational spring-dampers in spatial revolute joints (see the module docstring).

    Parameters
    ----------
    connectivity : (n_el, 2) nodes of sides a and b, or (n_el, 1) side b's node (side a the ground).
    frames : (n_el, 3, 3) the joint frames (columns x_j, y_j, z_j) in the reference configuration.
    k (N m/rad), c (N m s/rad), rest (rad), preload (N m) : (n_el,) each.
    """

    has_rotations = True

    def __init__(self, connectivity: np.ndarray, frames: np.ndarray, k: np.ndarray, c: np.ndarray,
                 rest: np.ndarray, preload: np.ndarray, name: str = "joint springs (3D)",
                 labels: list[str] | None = None) -> None:
        self.n_nodes = int(np.shape(np.atleast_2d(connectivity))[1])
        super().__init__(connectivity, 3, name)
        self.frames = np.asarray(frames, dtype=float).reshape(self.n_elements, 3, 3).copy()
        self._set_spring_damper(k, c, rest, preload, labels)

    def _rot_b(self) -> slice:
        return slice(3, 6) if self.n_nodes == 1 else slice(9, 12)

    def _vectors(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """x_a, y_a, x_b (n_el, 3) at the state u."""
        xj, yj = self.frames[:, :, 0], self.frames[:, :, 1]
        if self.n_nodes == 1:
            xa, ya = xj, yj
        else:
            Ra = exp_map(u[:, 3:6])
            xa, ya = np.einsum("nij,nj->ni", Ra, xj), np.einsum("nij,nj->ni", Ra, yj)
        xb = np.einsum("nij,nj->ni", exp_map(u[:, self._rot_b()]), xj)
        return xa, ya, xb

    def angle(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """phi (n_el,), rad, in (-pi, pi]."""
        xa, ya, xb = self._vectors(u)
        return np.arctan2(_dot(ya, xb), _dot(xa, xb))

    def _place(self, K: np.ndarray, block_a: np.ndarray, block_b: np.ndarray, row_sign: float) -> None:
        """Add a row block (n_el, 3, 3) pair: rows of a (row_sign) or b (-row_sign), columns a and b."""
        rb = self._rot_b()
        rows = ([slice(3, 6)] if self.n_nodes == 2 else []) + [rb]
        signs = ([row_sign] if self.n_nodes == 2 else []) + [-row_sign]
        for r, sign in zip(rows, signs):
            if self.n_nodes == 2:
                K[:, r, 3:6] += sign * block_a
            K[:, r, rb] += sign * block_b

    def _moment(self, q: np.ndarray, value: np.ndarray) -> None:
        """q += value (n_el, 3) on a's rotation, -value on b's."""
        if self.n_nodes == 2:
            q[:, 3:6] += value
        q[:, self._rot_b()] -= value

    # ---------------------------------------------------------- end-point
    def _end_point(self, u: np.ndarray):
        """phi, n (dphi = -n . (dpsi_a - dpsi_b)... see code), and the derivative blocks of n."""
        xa, ya, xb = self._vectors(u)
        c, s = _dot(xa, xb), _dot(ya, xb)
        rho2 = c**2 + s**2
        u_, v_ = np.cross(ya, xb), np.cross(xa, xb)
        # dphi = (dpsi_a - dpsi_b) . g, g = (c u - s v) / rho^2
        g = (c[:, None] * u_ - s[:, None] * v_) / rho2[:, None]
        I3 = np.eye(3)
        # d/dpsi_a and d/dpsi_b of c, s (row vectors) and of u, v (matrices)
        dc = (v_, -v_)
        ds = (u_, -u_)
        du = (_outer(ya, xb) - s[:, None, None] * I3, s[:, None, None] * I3 - _outer(xb, ya))
        dv = (_outer(xa, xb) - c[:, None, None] * I3, c[:, None, None] * I3 - _outer(xb, xa))
        dg = []
        for side in range(2):
            drho2 = 2.0 * (c[:, None] * dc[side] + s[:, None] * ds[side])
            block = (_outer(u_, dc[side]) + c[:, None, None] * du[side] - _outer(v_, ds[side])
                     - s[:, None, None] * dv[side] - _outer(g, drho2)) / rho2[:, None, None]
            dg.append(block)
        return np.arctan2(s, c), g, dg

    def _end_point_tangent(self, g: np.ndarray, dg: list, sigma: np.ndarray, dsigma: np.ndarray) -> np.ndarray:
        """d(sigma g on a, -sigma g on b)/dpsi with dsigma = dsigma/dphi."""
        K = np.zeros((self.n_elements, self.ndof, self.ndof))
        blocks = [dsigma[:, None, None] * _outer(g, g * sign) + sigma[:, None, None] * dg[side]
                  for side, sign in ((0, 1.0), (1, -1.0))]
        self._place(K, blocks[0], blocks[1], 1.0)
        return K

    def force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        phi, g, dg = self._end_point(u)
        sigma = self.k * (phi - self.rest) + self.preload
        q = np.zeros((self.n_elements, self.ndof))
        self._moment(q, sigma[:, None] * g)
        return q, self._end_point_tangent(g, dg, sigma, self.k)

    def internal_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self.force_and_tangent(X, u)[0]

    def damping_force(self, X: np.ndarray, u: np.ndarray, v: np.ndarray, dv_du: float, tangent: bool
                      ) -> tuple[np.ndarray, np.ndarray | None]:
        phi, g, dg = self._end_point(u)
        wa = v[:, 3:6] if self.n_nodes == 2 else 0.0
        rate = _dot(wa - v[:, self._rot_b()], g)                        # phi'
        sigma = self.c * rate
        q = np.zeros((self.n_elements, self.ndof))
        self._moment(q, sigma[:, None] * g)
        if not tangent:
            return q, None
        K = self._end_point_tangent(g, dg, sigma, self.c * dv_du)
        # phi' = (w_a - w_b) . g(u): its change with u at fixed v
        rel = wa - v[:, self._rot_b()]
        drate = [np.einsum("ni,nij->nj", rel, dg[side]) for side in range(2)]
        self._place(K, self.c[:, None, None] * _outer(g, drate[0]), self.c[:, None, None] * _outer(g, drate[1]), 1.0)
        return q, K

    # ---------------------------------------------------------- mid-point
    def _mid_point(self, u0: np.ndarray, u1: np.ndarray, dt: float | None, tangent: bool):
        xa0, ya0, xb0 = self._vectors(u0)
        xa1, ya1, xb1 = self._vectors(u1)
        xam, yam, xbm = 0.5 * (xa0 + xa1), 0.5 * (ya0 + ya1), 0.5 * (xb0 + xb1)
        c0, s0, c1, s1 = _dot(xa0, xb0), _dot(ya0, xb0), _dot(xa1, xb1), _dot(ya1, xb1)
        cm, sm = 0.5 * (c0 + c1), 0.5 * (s0 + s1)
        rho0, rho1 = np.hypot(c0, s0), np.hypot(c1, s1)
        dphi = np.arctan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
        gamma, dgamma = _sinc_ratio(dphi)
        kappa = gamma / (rho0 * rho1)
        um, vm = np.cross(yam, xbm), np.cross(xam, xbm)
        p = cm[:, None] * um - sm[:, None] * vm
        phi0 = np.arctan2(s0, c0)
        if dt is None:
            sigma, dsigma = self.k * (phi0 + 0.5 * dphi - self.rest) + self.preload, 0.5 * self.k
        else:
            sigma, dsigma = self.c * dphi / dt, self.c / dt
        q = np.zeros((self.n_elements, self.ndof))
        self._moment(q, (sigma * kappa)[:, None] * p)
        if not tangent:
            return q, None
        rb = self._rot_b()
        Gb = cayley_resolvent(cayley_between(u0[:, rb], u1[:, rb]))
        dxb1 = -Gb @ skew(xbm)                                            # d x_b1 / d w_b
        zero = np.zeros((self.n_elements, 3, 3))
        if self.n_nodes == 2:
            Ga = cayley_resolvent(cayley_between(u0[:, 3:6], u1[:, 3:6]))
            dxa1, dya1 = -Ga @ skew(xam), -Ga @ skew(yam)
        else:
            dxa1 = dya1 = zero
        # derivatives w.r.t. (w_a, w_b) of c1, s1 (rows) and of u_m, v_m (matrices)
        dc1 = (np.einsum("ni,nij->nj", xb1, dxa1), np.einsum("ni,nij->nj", xa1, dxb1))
        ds1 = (np.einsum("ni,nij->nj", xb1, dya1), np.einsum("ni,nij->nj", ya1, dxb1))
        dum = (-0.5 * skew(xbm) @ dya1, 0.5 * skew(yam) @ dxb1)
        dvm = (-0.5 * skew(xbm) @ dxa1, 0.5 * skew(xam) @ dxb1)
        blocks = []
        for side in range(2):
            dphi1 = (c1[:, None] * ds1[side] - s1[:, None] * dc1[side]) / rho1[:, None] ** 2
            drho1 = (c1[:, None] * dc1[side] + s1[:, None] * ds1[side]) / rho1[:, None]
            dkappa = (dgamma / (rho0 * rho1))[:, None] * dphi1 - (kappa / rho1)[:, None] * drho1
            dp = (0.5 * _outer(um, dc1[side]) + cm[:, None, None] * dum[side]
                  - 0.5 * _outer(vm, ds1[side]) - sm[:, None, None] * dvm[side])
            blocks.append(_outer(p, (dsigma * kappa)[:, None] * dphi1 + sigma[:, None] * dkappa)
                          + (sigma * kappa)[:, None, None] * dp)
        K = np.zeros((self.n_elements, self.ndof, self.ndof))
        self._place(K, blocks[0], blocks[1], 1.0)
        return q, K

    def mid_point_force(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        return self._mid_point(u0, u1, None, False)[0]

    def mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        return self._mid_point(u0, u1, None, True)

    def mid_point_damping(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray, dt: float, tangent: bool
                          ) -> tuple[np.ndarray, np.ndarray | None]:
        return self._mid_point(u0, u1, dt, tangent)

    # ---------------------------------------------------------- energy, outputs
    def strain_energy(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """k (phi - rest)^2 / 2 + preload (phi - rest) (n_el,), J."""
        s = self.angle(X, u) - self.rest
        return 0.5 * self.k * s**2 + self.preload * s

    output_units = {"moment": "N m", "angle": "rad"}

    def element_outputs(self, X: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        """Spring ``moment`` (N m; without the damper's share) and the joint ``angle`` phi (rad)."""
        phi = self.angle(X, u)
        return {"moment": self.k * (phi - self.rest) + self.preload, "angle": phi}

    def generalized_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return (self.k * (self.angle(X, u) - self.rest) + self.preload)[:, None]

    def geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        """The part of the tangent linear in given moments (n_el, 1)."""
        _, g, dg = self._end_point(u)
        return self._end_point_tangent(g, dg, stresses[:, 0], np.zeros(self.n_elements))

    def axial_strain(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return np.zeros(self.n_elements)

    def mass_matrix(self, X: np.ndarray) -> np.ndarray:
        return np.zeros((self.n_elements, self.ndof, self.ndof))
