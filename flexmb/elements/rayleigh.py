"""Rayleigh damping of an element group, ``alpha M + beta K``, written so that the beta part
dissipates nothing in rigid motion, for every element type (Truss, Beam2D with any mass and
with or without second_order, Beam3D, Shell3).

Which K. ``beta K_t v`` with the full tangent of a co-rotational element would damp a rigid spin
of a stressed element (its geometric stiffness does not vanish on rigid velocities), and under
compression it is not even dissipative (K_t indefinite). The beta part here acts on the rates of
the element's own objective generalized strains eps with their constant, positive definite
material stiffness D, the rows B = d eps / du taken at the step's configuration:

    f_beta = beta B^T D eps',   B = d eps / du,   dissipation beta eps' . D eps' >= 0,

that is ``beta T^T K_local T P v``: the element's material stiffness in its co-rotated frame at
the current configuration acting on the deformation rates (P removes the rigid velocity, which
the strains do not see). It is ``beta K_0 v`` about the undeformed state (the geometric part and the
second-order strain terms vanish there), so the modal damping ratios of a structure vibrating about
it are zeta_k = alpha / (2 omega_k) + beta omega_k / 2, and it is zero for any rigid motion. The
alpha part is ``alpha M v`` with the group's constant mass matrix: damping against the inertial
frame (like a surrounding fluid), which by its nature also slows rigid motion; set alpha = 0 for
bodies that move freely. For Beam3D and Shell3 that matrix is translational only: the nodes' rotary
inertia (integrated as rigid bodies) takes no alpha part, so modes with rotary kinetic energy get
slightly less than alpha / (2 omega).

Mid-point form (energy balance exact): the strain increments over the step are those of the
elements' own energy-conserving mid-point forces, eps_{n+1} - eps_n = B_m d exactly (Crisfield &
Shi 1993, eqs. 12, 38; at spatial rotations d holds the Cayley parameters of the nodal rotation
increments, with which the step-averaged triad vectors give exact increments of the bilinear
strains), and the damping force ``beta B_m^T D (eps_{n+1} - eps_n) / dt + alpha M d / dt``
dissipates exactly ``(beta Deps . D Deps + alpha d . M d) / dt >= 0`` per step. B_m rows are
self-equilibrated force systems about the mid-point positions, so the beta part keeps linear and
angular momentum as the elastic mid-point force does. End-point form (Newmark, generalized-alpha):
``beta B^T D B v + alpha M v`` at the step's end, tangent along dv = dv_du du (du with nodal spins
at spatial rotations) including d(B v)/du, the rows' derivative (the geometric stiffness of unit
stresses).

Strains and D: truss the length l (D = EA / l0; the same as a point damper of c = beta EA / l0
between its nodes, :class:`~flexmb.elements.force_elements.PointSpringDamper`); planar beam
(l, tb1, tb2) (D = diag(EA / l0, EI / l0 [[4, 2], [2, 4]]), the local rotations relative to the
chord, see :mod:`flexmb.elements.beam2d`; the bowing term of second_order, quadratic in tb, is
left out of D); spatial beam Meijaard's six strains e (:mod:`flexmb.elements.beam3d`) before the
angle map and the second-order terms, D = S of its eqs. (5)-(6); shell the twelve strains e of
:mod:`flexmb.elements.shell3` before the angle map, D = its strain stiffness S (B^T S B is the linear
triangle at the reference).

Cubic mass of Beam2D (it turns with the nodes, so the constant matrix would miss it): the alpha
part is taken in the Hermite coordinates Q = [x_p, d_p, x_q, d_q] where that mass is the constant
rho_A l0 m (:mod:`flexmb.elements.hermite_mass2d`): mid-point ``alpha Bbar^T (rho_A l0 m) dQ / dt``
with the step's exact secant Bbar (dQ = Bbar d), dissipating exactly ``alpha dQ . (rho_A l0 m) dQ / dt
>= 0``; end-point ``alpha M(q) v``. The cubic mass of Beam3D (a constant matrix in global axes for
linear analyses, refused by the time integrators) takes no alpha part.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from flexmb.checks import ModelError
from flexmb.elements.base import ElementGroup
from flexmb.elements.beam2d import _J, _R90, Beam2D, _sinc_ratio
from flexmb.elements.beam3d import _JL, _NODE, Beam3D, _slot_jacobians, _triad_jacobian
from flexmb.elements.force_elements import PointSpringDamper
from flexmb.elements.hermite_mass2d import HERMITE, HermiteMass2D
from flexmb.elements.shell3 import Shell3
from flexmb.elements.truss import Truss
from flexmb.rotations import cayley_from_matrix, cayley_resolvent, sinc, sinc_derivative, skew


def supports_beta(group: ElementGroup) -> bool:
    """Whether the beta (strain-rate) part is available for the group's element type."""
    return type(group) in (Truss, Beam2D, Beam3D, Shell3)


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

    def _hermite(self, group: ElementGroup, X: np.ndarray) -> HermiteMass2D | None:
        """The cubic mass kernels of a Beam2D group with ``mass="cubic"`` if alpha acts, else None."""
        if "hermite" not in self._cache:
            cubic = self.alpha and type(group) is Beam2D and group.mass == "cubic"
            self._cache["hermite"] = group.configuration_mass(X) if cubic else None
        return self._cache["hermite"]

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
        hermite = self._hermite(group, X)
        if hermite is not None:
            qa, Ka = _cubic_mid_point(hermite, u0, u1, self.alpha / dt, tangent)
            q = q + qa
            K = K + Ka if tangent else None
        if self.beta:
            if type(group) is Truss:
                qb, Kb = self._truss_damper(group, X).mid_point_damping(X, u0, u1, dt, tangent)
            elif type(group) is Beam3D:
                qb, Kb = _beam3d_mid_point(group, X, u0, u1, self.beta / dt, tangent)
            elif type(group) is Shell3:
                qb, Kb = _shell3_kernel(group, X, "mid_point", u0, u1, self.beta / dt, tangent)
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
        hermite = self._hermite(group, X)
        if hermite is not None:
            qa, Ka = _cubic_end_point(hermite, u, v, self.alpha, dv_du, tangent)
            q = q + qa
            K = K + Ka if tangent else None
        if self.beta:
            if type(group) is Truss:
                qb, Kb = self._truss_damper(group, X).damping_force(X, u, v, dv_du, tangent)
            elif type(group) is Beam3D:
                qb, Kb = _beam3d_end_point(group, X, u, v, self.beta, dv_du, tangent)
            elif type(group) is Shell3:
                qb, Kb = _shell3_kernel(group, X, "end_point", u, v, self.beta, dv_du, tangent)
            else:
                qb, Kb = _beam2d_end_point(group, X, u, v, self.beta, dv_du, tangent)
            q = q + qb
            K = K + Kb if tangent else None
        return q, K


def check_rayleigh(group: ElementGroup, alpha: float, beta: float) -> None:
    """ModelError if the group cannot take the beta part, or the alpha part (the cubic mass of
    Beam3D is a constant matrix in global axes that no scheme integrates in large motion)."""
    if alpha and type(group) is Beam3D and group.mass == "cubic":
        raise ModelError(f"set_rayleigh_damping: group {group.name!r} is a Beam3D group with the 'cubic' mass "
                         f"(for linear analyses about the reference only); got alpha = {alpha:g}: use mass "
                         "'consistent' or 'lumped', or beta alone")
    if beta and not supports_beta(group):
        raise ModelError(f"set_rayleigh_damping: group {group.name!r} is a {type(group).__name__} group; the beta "
                         f"(strain-rate) part is available for Truss, Beam2D, Beam3D and Shell3 groups, got beta = "
                         f"{beta:g} (alpha alone is available for every group)")


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


def _beam3d_mid_point(g: Beam3D, X: np.ndarray, u0: np.ndarray, u1: np.ndarray, rate: float, tangent: bool):
    """rate S G_m^T (e_{n+1} - e_n) of spatial beams (rate = beta / dt) with Meijaard's strains e
    (before the angle map and the second-order terms) and the exact mid-point rows G_m of
    :meth:`Beam3D.reference_mid_point_force_and_tangent` (G_m d = e_{n+1} - e_n, d with the Cayley
    parameters of the nodal rotation increments); its derivative w.r.t. d is that method's tangent
    with the damping stresses in place of the averaged ones."""
    E = g.section_frames(X)
    c0, Rp0, Rq0, V0 = g._vectors(X, u0, E)
    c1, Rp1, Rq1, V1 = g._vectors(X, u1, E)
    deps = g._strains(c1, V1) - g._strains(c0, V0)                        # (n_el, 6)
    deps[:, 0] = c1.stretch - c0.stretch
    S = rate * g.stiffness_matrix_S(c0.l0)                                # (n_el, 6, 6)
    sigma = np.einsum("eij,ej->ei", S, deps)                              # damping stresses
    Vm = 0.5 * (V0 + V1)                                                  # (5, n_el, 3)
    Jm = _slot_jacobians(Vm)
    L_sum = c0.l + c1.l
    Gm = g._rows(Vm, Jm, 2.0 / L_sum, c0.l0)                              # (n_el, 6, 12)
    q = np.einsum("eik,ei->ek", Gm, sigma)
    if not tangent:
        return q, None
    resolvent = {"p": cayley_resolvent(cayley_from_matrix(Rp1 @ Rp0.transpose(0, 2, 1))),
                 "q": cayley_resolvent(cayley_from_matrix(Rq1 @ Rq0.transpose(0, 2, 1)))}
    P = [Jm[0]] + [_triad_jacobian(-resolvent[_NODE[s]] @ skew(Vm[s]), _NODE[s]) for s in range(1, 5)]
    E1 = g._rows(V1, P, 1.0 / c1.l, c0.l0)                                # d e_{n+1} / d d
    E1[:, 0] = c1.e @ _JL
    K = Gm.transpose(0, 2, 1) @ S @ E1 + g._pair_stiffness(sigma, Vm, Jm, P, 0.5, c0.l0)
    lm = Vm[0]
    K += sigma[:, 0, None, None] * (_JL.T @ _JL / L_sum[:, None, None]
                                    - 2.0 * np.einsum("ei,ej->eij", lm @ _JL, c1.e @ _JL) / L_sum[:, None, None] ** 2)
    return q, K


def _beam3d_end_point(g: Beam3D, X: np.ndarray, u: np.ndarray, v: np.ndarray, beta: float, dv_du: float,
                      tangent: bool):
    """beta G^T S G v of spatial beams (G = de/dq, q with nodal spins, v with the spatial angular
    velocities) and its derivative along dv = dv_du du (du with nodal spins)."""
    E = g.section_frames(X)
    c, _, _, V = g._vectors(X, u, E)
    J = _slot_jacobians(V)
    G = g._rows(V, J, 1.0 / c.l, c.l0)                                    # (n_el, 6, 12)
    S = beta * g.stiffness_matrix_S(c.l0)
    sigma = np.einsum("eij,ej->ei", S, np.einsum("eij,ej->ei", G, v))    # damping stresses
    q = np.einsum("eik,ei->ek", G, sigma)
    if not tangent:
        return q, None
    # d(G v)/dq: row i is v^T H_i, H_i = dG_i/dq the row stiffness of a unit stress i
    unit = np.eye(6)
    dGv = np.stack([np.einsum("eab,ea->eb", g._row_stiffness(np.broadcast_to(unit[i], (g.n_elements, 6)), c, V, J),
                              v) for i in range(6)], axis=1)              # (n_el, 6, 12)
    K = G.transpose(0, 2, 1) @ S @ (dv_du * G + dGv) + g._row_stiffness(sigma, c, V, J)
    return q, K


def _shell3_kernel(g: Shell3, X: np.ndarray, form: str, *args) -> tuple[np.ndarray, np.ndarray | None]:
    """The compiled strain-rate damping of triangular shells, ``rayleigh_mid_point`` (args u0, u1,
    beta / dt, tangent) or ``rayleigh_end_point`` (args u, v, beta, dv_du, tangent) of
    :mod:`flexmb.compiled.shell3`, with the twelve strains e and the strain stiffness S of
    :class:`Shell3` (B^T S B = the linear triangle's stiffness at the reference)."""
    from flexmb.compiled import shell3
    X = np.asarray(X, dtype=float)
    ref = g.reference(X)
    a, b = (np.ascontiguousarray(x, dtype=float) for x in args[:2])
    kernel = shell3.rayleigh_mid_point if form == "mid_point" else shell3.rayleigh_end_point
    q, K = kernel(X, a, b, ref.directors, ref.S, *args[2:])
    return q, K if args[-1] else None


def _cubic_steps(hm: HermiteMass2D, u0: np.ndarray, u1: np.ndarray):
    """Increments dQ (n_el, 4, 2) of the Hermite coordinates Q = [x_p, d_p, x_q, d_q] over a step
    and the director columns of its exact secant dQ/dq, l0 sinc(dtheta/2) n(phi_m) (n_el, 2, 2)
    (d_{n+1} - d_n = 2 l0 sin(dtheta/2) n(phi_m)), with dtheta (n_el, 2) and phi_m (n_el, 2)."""
    phi0 = hm.alpha0[:, None] + u0[:, [2, 5]]
    phi1 = hm.alpha0[:, None] + u1[:, [2, 5]]
    dtheta, phi_m = phi1 - phi0, 0.5 * (phi0 + phi1)
    l0 = hm.l0[:, None, None]
    dd = l0 * (np.stack([np.cos(phi1), np.sin(phi1)], axis=-1) - np.stack([np.cos(phi0), np.sin(phi0)], axis=-1))
    dx = u1[:, [[0, 1], [3, 4]]] - u0[:, [[0, 1], [3, 4]]]                # (n_el, 2, 2)
    dQ = np.stack([dx[:, 0], dd[:, 0], dx[:, 1], dd[:, 1]], axis=1)        # (n_el, 4, 2)
    normal = np.stack([-np.sin(phi_m), np.cos(phi_m)], axis=-1)
    columns = l0 * sinc(0.5 * dtheta)[..., None] * normal                # (n_el, 2, 2)
    return dQ, columns, dtheta, phi_m, phi1


def _cubic_mid_point(hm: HermiteMass2D, u0: np.ndarray, u1: np.ndarray, rate: float, tangent: bool):
    """alpha times the cubic mass over a mid-point step (rate = alpha / dt), in the Hermite
    coordinates where that mass is the constant rho_A l0 m (:mod:`flexmb.elements.hermite_mass2d`):
    ``F = rate Bbar^T (rho_A l0 m dQ)`` with the step's exact secant Bbar (dQ = Bbar d), so
    ``F . d = rate dQ . (rho_A l0 m) dQ >= 0`` exactly; about a state, ``alpha M(q) v``. With
    ``tangent`` also dF/du1 (n_el, 6, 6)."""
    dQ, columns, dtheta, phi_m, phi1 = _cubic_steps(hm, u0, u1)
    P = rate * hm.mass[:, None, None] * np.einsum("ab,ebi->eai", HERMITE, dQ)   # (n_el, 4, 2)
    F = np.empty(u0.shape)
    F[:, 0:2], F[:, 3:5] = P[:, 0], P[:, 2]
    F[:, 2] = np.einsum("ei,ei->e", columns[:, 0], P[:, 1])
    F[:, 5] = np.einsum("ei,ei->e", columns[:, 1], P[:, 3])
    if not tangent:
        return F, None
    n = len(u0)
    dQdu = np.zeros((n, 4, 2, 6))                                         # d dQ / d u1
    dQdu[:, 0, :, 0:2] = dQdu[:, 2, :, 3:5] = np.eye(2)
    n1 = hm.l0[:, None, None] * np.stack([-np.sin(phi1), np.cos(phi1)], axis=-1)   # d d_{n+1} / d theta
    dQdu[:, 1, :, 2], dQdu[:, 3, :, 5] = n1[:, 0], n1[:, 1]
    dP = rate * hm.mass[:, None, None, None] * np.einsum("ab,ebij->eaij", HERMITE, dQdu)   # (n_el, 4, 2, 6)
    K = np.zeros((n, 6, 6))
    K[:, 0:2], K[:, 3:5] = dP[:, 0], dP[:, 2]
    K[:, 2] = np.einsum("ei,eij->ej", columns[:, 0], dP[:, 1])
    K[:, 5] = np.einsum("ei,eij->ej", columns[:, 1], dP[:, 3])
    # the secant columns turn with theta_{n+1}: d/dtheta1 of l0 sinc(dtheta/2) n(phi_m)
    half = 0.5 * dtheta
    tangent_dir = -np.stack([np.cos(phi_m), np.sin(phi_m)], axis=-1)    # d n / d phi
    normal = np.stack([-np.sin(phi_m), np.cos(phi_m)], axis=-1)
    dcol = 0.5 * hm.l0[:, None, None] * (sinc_derivative(half)[..., None] * normal
                                         + sinc(half)[..., None] * tangent_dir)   # (n_el, 2, 2)
    K[:, 2, 2] += np.einsum("ei,ei->e", dcol[:, 0], P[:, 1])
    K[:, 5, 5] += np.einsum("ei,ei->e", dcol[:, 1], P[:, 3])
    return F, K


def _cubic_end_point(hm: HermiteMass2D, u: np.ndarray, v: np.ndarray, alpha: float, dv_du: float, tangent: bool):
    """alpha M(q) v of the cubic mass (its momentum times alpha) and its derivative along
    dv = dv_du du; the configuration part d(M(q) v)/dq by complex steps (exact to round-off)."""
    F = alpha * hm.momentum(u, v)
    if not tangent:
        return F, None
    step = 1e-30
    columns = [hm.momentum(u + 1j * step * np.eye(6)[j], v).imag / step for j in range(6)]
    return F, alpha * (dv_du * hm.mass_matrix(u) + np.stack(columns, axis=2))
