"""Rayleigh damping of an element group, ``alpha M + beta K``, written so that the beta part
dissipates nothing in rigid motion.

``beta K v`` with the tangent K of a co-rotational element damps a rigid spin of a stressed
element (its geometric stiffness does not vanish on rigid velocities), and with the tangent at
the current state it is not even dissipative in general. The beta part here acts on the rates of
the element's own (objective) generalized strains eps with their material stiffness D:

    f_beta = beta B^T D eps',   B = d eps / du,   dissipation beta eps' . D eps' >= 0,

which is ``beta K_0 v`` about the undeformed state (so the modal damping ratios of a structure
vibrating about it are zeta_k = alpha / (2 omega_k) + beta omega_k / 2) and zero for any rigid
motion. The alpha part is ``alpha M v`` with the group's constant mass matrix: damping against
the inertial frame (like a surrounding fluid), which by its nature also slows rigid motion; set
alpha = 0 for bodies that move freely.

Mid-point form (energy balance exact): the strain increments over the step are those of the
elements' own energy-conserving mid-point forces, eps_{n+1} - eps_n = B_m d exactly (Crisfield &
Shi 1993, eqs. 12, 38), and the damping force ``beta B_m^T D (eps_{n+1} - eps_n) / dt +
alpha M d / dt`` dissipates exactly ``(beta Deps . D Deps + alpha d . M d) / dt >= 0`` per step.

Strains: truss the length l (D = EA / l0; the same as a point damper of c = beta EA / l0 between
its nodes, :class:`~flexmb.elements.force_elements.PointSpringDamper`); planar beam (l, tb1, tb2)
(D = diag(EA / l0, EI / l0 [[4, 2], [2, 4]]), the local rotations relative to the chord, see
:mod:`flexmb.elements.beam2d`). Other element types take the alpha part only.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from flexmb.checks import ModelError
from flexmb.elements.base import ElementGroup
from flexmb.elements.beam2d import _J, _R90, Beam2D, _sinc_ratio
from flexmb.elements.force_elements import PointSpringDamper
from flexmb.elements.truss import Truss


def supports_beta(group: ElementGroup) -> bool:
    """Whether the beta (strain-rate) part is available for the group's element type."""
    return type(group) is Truss or (type(group) is Beam2D and not group.second_order)


@dataclass
class RayleighDamping:
    """alpha (1/s) and beta (s) of one element group (see the module docstring)."""

    alpha: float
    beta: float
    _cache: dict = field(default_factory=dict, repr=False)

    def _mass(self, group: ElementGroup, X: np.ndarray) -> np.ndarray:
        if "mass" not in self._cache:
            self._cache["mass"] = self.alpha * group.mass_matrix(X)              # (n_el, ne, ne)
        return self._cache["mass"]

    def _truss_damper(self, group: Truss, X: np.ndarray) -> PointSpringDamper:
        if "truss" not in self._cache:
            l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
            self._cache["truss"] = PointSpringDamper(group.connectivity, group.dim, 0.0, l0, 0.0,
                                                     self.beta * group.EA / l0, name=group.name)
        return self._cache["truss"]

    def mid_point_force(self, group: ElementGroup, X: np.ndarray, u0: np.ndarray, u1: np.ndarray, dt: float,
                        tangent: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """Damping force over a mid-point step (n_el, ne) and its derivative w.r.t. the increment."""
        aM = self._mass(group, X)
        q = np.einsum("nij,nj->ni", aM, u1 - u0) / dt
        K = aM / dt if tangent else None
        if self.beta:
            if type(group) is Truss:
                qb, Kb = self._truss_damper(group, X).mid_point_damping(X, u0, u1, dt, tangent)
            else:
                qb, Kb = _beam2d_mid_point(group, X, u0, u1, self.beta / dt, tangent)
            q = q + qb
            K = K + Kb if tangent else None
        return q, K

    def end_point_force(self, group: ElementGroup, X: np.ndarray, u: np.ndarray, v: np.ndarray, dv_du: float,
                        tangent: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """Damping force at (u, v) (n_el, ne) and its derivative along dv = dv_du du."""
        aM = self._mass(group, X)
        q = np.einsum("nij,nj->ni", aM, v)
        K = dv_du * aM if tangent else None
        if self.beta:
            if type(group) is Truss:
                qb, Kb = self._truss_damper(group, X).damping_force(X, u, v, dv_du, tangent)
            else:
                qb, Kb = _beam2d_end_point(group, X, u, v, self.beta, dv_du, tangent)
            q = q + qb
            K = K + Kb if tangent else None
        return q, K


def check_rayleigh(group: ElementGroup, alpha: float, beta: float) -> None:
    """ModelError if the group cannot take the beta part, or the alpha part (a mass that turns
    with the nodes, the cubic mass of Beam2D, is not in the constant mass matrix alpha uses)."""
    if alpha and getattr(group, "mass", None) == "cubic":
        raise ModelError(f"set_rayleigh_damping: group {group.name!r} has the 'cubic' (configuration-dependent) "
                         f"mass, which the alpha part (alpha M v with the constant mass) would miss; got alpha = "
                         f"{alpha:g}: use mass 'consistent' or 'lumped', or beta alone")
    if beta and not supports_beta(group):
        what = "a second_order Beam2D" if type(group) is Beam2D else f"a {type(group).__name__} group"
        raise ModelError(f"set_rayleigh_damping: group {group.name!r} is {what}; the beta (strain-rate) part is "
                         f"available for Truss and Beam2D (without second_order) groups, got beta = {beta:g} "
                         "(alpha alone is available for every group)")


def _beam2d_mid_point(g: Beam2D, X: np.ndarray, u0: np.ndarray, u1: np.ndarray, rate: float, tangent: bool):
    """beta B_m^T D (eps_{n+1} - eps_n) / dt of planar beams (rate = beta / dt) with the exact
    increments of (l, tb1, tb2) of :meth:`Beam2D.reference_mid_point_force_and_tangent`, and its
    derivative w.r.t. u1 (the same rows, with the damping stresses in place of the averaged ones)."""
    c0, tb0, _, _, k = g._local_forces(X, u0)
    c1 = g._chord(X, u1)
    cross01 = c0.x21[:, 0] * c1.x21[:, 1] - c0.x21[:, 1] * c1.x21[:, 0]
    dalpha = np.arctan2(cross01, np.einsum("ei,ei->e", c0.x21, c1.x21))
    dtb = (u1[:, [2, 5]] - u0[:, [2, 5]]) - dalpha[:, None]               # (n_el, 2), exact increment
    N = rate * g.EA / c0.l0 * (c1.l - c0.l)                               # (n_el,) damping stresses
    M = rate * np.einsum("eij,ej->ei", k, dtb)                            # (n_el, 2)
    x21m = 0.5 * (c0.x21 + c1.x21)
    l_av = 0.5 * (c0.l + c1.l)
    r_m = (x21m @ _J) / l_av[:, None]                                     # (n_el, 6)
    gamma, dgamma = _sinc_ratio(dalpha)
    kappa = gamma / (c0.l * c1.l)
    nstar = x21m @ _R90.T
    zm = -((kappa[:, None] * nstar) @ _J)
    b_m = np.repeat(zm[:, None, :], 2, axis=1)
    b_m[:, 0, 2] += 1.0
    b_m[:, 1, 5] += 1.0
    q = N[:, None] * r_m + np.einsum("ei,eij->ej", M, b_m)
    if not tangent:
        return q, None
    r1, b1 = g._b_rows(c1)
    e1 = c1.e
    n1 = e1 @ _R90.T
    Kt = rate * ((g.EA / c0.l0)[:, None, None] * (r_m[:, :, None] * r1[:, None, :])
                 + b_m.transpose(0, 2, 1) @ (k @ b1))
    A = np.eye(2)[None] - np.einsum("ei,ej->eij", x21m, e1) / l_av[:, None, None]
    Kt += (N / (2.0 * l_av))[:, None, None] * (_J.T @ A @ _J)
    gk = (dgamma[:, None] * n1 - gamma[:, None] * e1) / (c0.l * c1.l**2)[:, None]
    dw = np.einsum("ei,ej->eij", nstar, gk) + 0.5 * kappa[:, None, None] * _R90[None]
    Kt -= M.sum(axis=1)[:, None, None] * (_J.T @ dw @ _J)
    return q, Kt


def _beam2d_end_point(g: Beam2D, X: np.ndarray, u: np.ndarray, v: np.ndarray, beta: float, dv_du: float,
                      tangent: bool):
    """beta B^T D B v of planar beams (B = d(l, tb1, tb2)/du) and its derivative along dv = dv_du du."""
    c, _, _, _, k = g._local_forces(X, u)
    r, b = g._b_rows(c)
    B = np.concatenate([r[:, None, :], b], axis=1)                        # (n_el, 3, 6)
    D = np.zeros((g.n_elements, 3, 3))
    D[:, 0, 0] = g.EA / c.l0
    D[:, 1:, 1:] = k
    rates = np.einsum("eij,ej->ei", B, v)                                 # eps' (n_el, 3)
    S = beta * np.einsum("eij,ej->ei", D, rates)                          # damping stresses
    q = np.einsum("eji,ej->ei", B, S)
    if not tangent:
        return q, None
    # d(B v)/du: row i is (H_i v)^T, H_i the Hessian of eps_i (the geometric stiffness of a unit stress)
    ones, zeros = np.ones(g.n_elements), np.zeros(g.n_elements)
    hessians = [g._geometric(c, r, b, ones, np.zeros((g.n_elements, 2))),
                g._geometric(c, r, b, zeros, np.column_stack([ones, zeros])),
                g._geometric(c, r, b, zeros, np.column_stack([zeros, ones]))]
    dBv = np.stack([np.einsum("eij,ej->ei", H, v) for H in hessians], axis=1)   # (n_el, 3, 6)
    K = (beta * B.transpose(0, 2, 1) @ D @ (dv_du * B + dBv)
         + g._geometric(c, r, b, S[:, 0], S[:, 1:]))
    return q, K
