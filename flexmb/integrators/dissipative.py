"""Schemes with controllable high-frequency dissipation, set by the spectral radius at infinite
frequency ``rho_inf`` in [0, 1]: generalized-alpha and two energy-decaying mid-point schemes.

They damp the unresolved high frequencies (the axial chatter of stiff co-rotational bars stepped
over) and leave the resolved motion nearly untouched; ``rho_inf = 1`` is no dissipation,
``rho_inf = 0`` removes the highest modes in one step.

* :class:`GeneralizedAlpha` (``"generalized-alpha"``, Chung & Hulbert 1993): second-order
  accurate for any rho_inf, the scheme Exudyn, Chrono and most FE codes offer; the energy is
  neither conserved nor bounded by construction in nonlinear problems (unconditional stability
  holds for linear ones only).
* :class:`EnergyDecayingMidPoint` (``"energy-decaying"``): the mid-point scheme of Crisfield &
  Shi (1993) with a strain-based dissipation of the bars' (and planar beams') chord stretching (Kuhl & Ramm 1996,
  Armero & Romero 2001): the total energy decays monotonically for any step (unconditional
  stability of the nonlinear scheme), linear and angular momentum are conserved; first order
  in the strain rate, so nearly rigid motion is hardly affected; the displacement mode's
  eigenvalue at infinity is -rho_inf, the velocity-flip mode's stays -1.
* :class:`EnergyDecayingVelocityMidPoint` (``"energy-decaying-velocity"``): the same with
  dissipation in the kinematics too (as in Armero & Romero's EDMC-1): spectral radius at
  infinity rho_inf in both modes, energy decays, linear momentum conserved, angular momentum not
  exactly; first order for every motion.

Spatial rotations are refused by all three (a Lie-group generalized-alpha, Arnold & Bruls 2007,
is not implemented); what else each supports is in its docstring.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmb.assembly import Assembly
from flexmb.checks import ModelError
from flexmb.elements.corotational import chord
from flexmb.elements.beam2d import Beam2D
from flexmb.elements.truss import Truss
from flexmb.integrators.newton import NewtonSettings
from flexmb.integrators.schemes import MidPoint, Newmark, State, StepResidual


#: element DOFs of a Beam2D's end translations [u1, v1, u2, v2] (its rotations are 2 and 5)
_BEAM2D_TRANSLATIONS = np.array([0, 1, 3, 4])


def check_rho_inf(rho_inf: float, scheme: str) -> float:
    """rho_inf as a float in [0, 1], else a ModelError naming the scheme and the value."""
    try:
        value = float(rho_inf)
    except (TypeError, ValueError):
        raise ModelError(f"scheme {scheme!r}: rho_inf must be a number in [0, 1], got {rho_inf!r}") from None
    if not 0.0 <= value <= 1.0:
        raise ModelError(f"scheme {scheme!r}: rho_inf must lie in [0, 1] (spectral radius at infinite "
                         f"frequency), got {rho_inf!r}")
    return value


def _refuse_spatial_rotations(asm: Assembly, scheme: str) -> None:
    if asm.rotation_dofs.size:
        node = int(asm.rotation_nodes[0])
        raise ModelError(f"scheme {scheme!r}: models with spatial (3D) rotations are not supported (node {node} "
                         "has rotation DOFs; a Lie-group form, Arnold & Bruls 2007, is not implemented); use "
                         "'mid-point' or 'newmark' for them")


@dataclass(frozen=True)
class AlphaParameters:
    """alpha_m, alpha_f, gamma, beta of generalized-alpha for a spectral radius at infinity rho_inf
    (Chung & Hulbert 1993, eqs. 25, 17, 20)."""

    rho_inf: float
    alpha_m: float
    alpha_f: float
    gamma: float
    beta: float

    @classmethod
    def from_rho_inf(cls, rho_inf: float) -> "AlphaParameters":
        alpha_m = (2.0 * rho_inf - 1.0) / (rho_inf + 1.0)        # eq. 25
        alpha_f = rho_inf / (rho_inf + 1.0)                      # eq. 25
        gamma = 0.5 - alpha_m + alpha_f                          # eq. 17: second order
        beta = 0.25 * (1.0 - alpha_m + alpha_f) ** 2             # eq. 20: high-frequency dissipation maximal
        return cls(rho_inf, alpha_m, alpha_f, gamma, beta)


class GeneralizedAlpha(Newmark):
    """Generalized-alpha scheme (Chung & Hulbert 1993, eqs. 1-3, 17, 20, 25).

    Newmark's kinematics with beta, gamma of :class:`AlphaParameters`,
    ``u_{n+1} = u_n + dt v_n + dt^2 ((1/2 - beta) a_n + beta a_{n+1})``,
    ``v_{n+1} = v_n + dt ((1 - gamma) a_n + gamma a_{n+1})``, and the balance at shifted points
    (their eq. 1 with the forces averaged, the usual nonlinear form)
    ``(1 - alpha_m) I_{n+1} + alpha_m I_n + (1 - alpha_f) (q_{n+1} - f_{n+1} + G_{n+1}^T lambda_{n+1}
    - r_{n+1}) + alpha_f (q_n - f_n + G_n^T lambda_n - r_n) = 0`` with the inertia
    ``I = M a`` (plus the configuration-dependent masses' Lagrange inertia) and r the support
    reactions. Newton solves it divided by (1 - alpha_f), so that the residual at prescribed DOFs is
    the end-of-step reaction r_{n+1} and the multipliers are the end-of-step ones; the joints hold
    at the step's end, Phi(u_{n+1}) = 0, as in :class:`~flexmb.integrators.schemes.Newmark`.
    ``a`` is the true acceleration; its start value is Newmark's consistent one (equilibrium at t0).

    Second-order accurate for every rho_inf in [0, 1]; rho_inf = 1 is trapezoidal Newmark for
    linear models. Supports what Newmark supports without spatial rotations: every element group
    of 2D models and 3D trusses, constant and configuration-dependent (cubic) masses, point masses,
    time-dependent and configuration-dependent loads, prescribed motions and joints.
    """

    name = "generalized-alpha"

    def __init__(self, assembly: Assembly, rho_inf: float = 0.8) -> None:
        super().__init__(assembly)
        _refuse_spatial_rotations(assembly, self.name)
        self.parameters = AlphaParameters.from_rho_inf(check_rho_inf(rho_inf, self.name))
        #: the start state of the current step, its fixed balance terms and its external force (n_dof,)
        self._start: tuple[State, np.ndarray, np.ndarray] | None = None

    @property
    def rho_inf(self) -> float:
        return self.parameters.rho_inf

    def _start_terms(self, s: State) -> tuple[np.ndarray, np.ndarray]:
        """(alpha_f (q_n - f_n + G_n^T lambda_n - r_n) + alpha_m I_n) / (1 - alpha_f) (n_dof,), the
        step's fixed part of the balance, and f_n (n_dof,), computed once per start state."""
        if self._start is not None and self._start[0] is s:
            return self._start[1:]
        asm, p = self.asm, self.parameters
        asm.set_time(s.t)
        f0 = asm.external_force(s.t, u=s.u)
        force = asm.internal_force(s.u) - f0 - s.reaction
        if asm.damped_groups:
            force = force + asm.damping_force(s.u, s.v)
        if s.constraint_force is not None:
            force = force + s.constraint_force
        inertia = asm.mass_times(s.a)
        if asm.configuration_masses:
            inertia += asm.end_point_inertia(s.u, s.v, s.a)[0]
        terms = (p.alpha_f * force + p.alpha_m * inertia) / (1.0 - p.alpha_f)
        self._start = (s, terms, f0)
        return terms, f0

    def _motion(self, s: State, dt: float, u1: np.ndarray):
        p = self.parameters
        d = u1 - s.u
        a1 = (d - dt * s.v - dt**2 * (0.5 - p.beta) * s.a) / (p.beta * dt**2)
        v1 = s.v + dt * ((1.0 - p.gamma) * s.a + p.gamma * a1)
        return v1, a1, None

    def residual(self, s: State, dt: float, u1: np.ndarray, tangent: bool = True) -> StepResidual:
        asm, p = self.asm, self.parameters
        v1, a1, _ = self._motion(s, dt, u1)
        start_terms, f0 = self._start_terms(s)                  # at t_n (sets the time for user forces)
        asm.set_time(s.t + dt)
        weight = (1.0 - p.alpha_m) / (1.0 - p.alpha_f)          # of I_{n+1} against q_{n+1}
        da_du, dv_du = 1.0 / (p.beta * dt**2), p.gamma / (p.beta * dt)
        if tangent:
            q1, data = asm.force_and_tangent(u1, out=asm.scaled_mass_data(weight * da_du))
        else:
            q1, data = asm.internal_force(u1), None
        f1 = asm.external_force(s.t + dt, u=u1)
        inertia = asm.mass_times(a1)
        if asm.configuration_loads and tangent:
            data -= asm.load_stiffness_data(u1, s.t + dt)
        if asm.configuration_masses:
            f_c, d_c = asm.end_point_inertia(u1, v1, a1, dv_du, da_du, tangent)
            inertia = inertia + f_c
            if tangent:
                data += weight * d_c
        g = q1 - f1 + weight * inertia + start_terms
        q_d = None
        if asm.damped_groups:
            # damping at the end point, weighted like the internal force (its start value is in start_terms);
            # its work is booked by Newmark's trapezoidal rule
            q_d = asm.damping_force(u1, v1, dv_du, data)
            g += q_d
        f_avg = 0.5 * (f0 + f1)                                 # for the trapezoidal work balance
        return StepResidual(g, data, self._scale(s, dt, u1, v1, q1, f1, inertia), f_avg,
                            velocity=v1, acceleration=a1, damping=q_d)


def energy_decaying_parameter(rho_inf: float) -> float:
    """The dissipation parameter xi = (1 - rho_inf) / (2 (1 + rho_inf)) of the energy-decaying
    schemes (xi in [0, 1/2]): the eigenvalue at infinite frequency of the modes it damps is
    -(1/2 - xi) / (1/2 + xi) = -rho_inf."""
    return (1.0 - rho_inf) / (2.0 * (1.0 + rho_inf))


def chord_dissipative_force(X: np.ndarray, u0: np.ndarray, u1: np.ndarray, EA: np.ndarray, xi: float,
                            tangent: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """Dissipative mid-point force of co-rotational chords (bars, and the chords of planar beams)
    and its derivative w.r.t. u1.

    ``q_d = c_d x21_m [-1; 1]`` with ``c_d = 2 xi (N_{n+1} - N_n) / (l_n + l_{n+1})`` and the chord
    force ``N = EA (l - l0) / l0``: the axial force ``xi (N_{n+1} - N_n)`` along the mid-point chord,
    in the form of the energy-conserving force (Crisfield & Shi 1993, eq. 20) so that, since
    ``x21_m . dx21 = (l_{n+1}^2 - l_n^2) / 2``,
    ``q_d . (d_{n+1} - d_n) = xi (N_{n+1} - N_n)(l_{n+1} - l_n) = xi EA/l0 (l_{n+1} - l_n)^2 >= 0``
    (the strain-based dissipation of Armero & Romero 2001 and Kuhl & Ramm 1996's shifted stress).
    Along the mid-point chord it has no resultant and no moment about the mid-point
    configuration: it changes neither momentum.

    X (n_el, 2, dim) reference nodes (m), u0, u1 (n_el, 2 dim) the chord ends' translations, EA
    (n_el,) N.
    Returns q_d (n_el, 2 dim), N, and with ``tangent`` dq_d/du1 (n_el, 2 dim, 2 dim), else None.
    """
    dim = X.shape[2]
    c0 = chord(X, u0[:, :dim], u0[:, dim:])
    c1 = chord(X, u1[:, :dim], u1[:, dim:])
    N0, N1 = EA * c0.stretch / c0.l0, EA * c1.stretch / c1.l0          # (n_el,)
    l_sum = c0.l + c1.l                                                # (n_el,)
    coef = 2.0 * xi * (N1 - N0) / l_sum                                # (n_el,)
    x21m = 0.5 * (c0.x21 + c1.x21)                                     # (n_el, dim)
    f2 = coef[:, None] * x21m
    q = np.concatenate([-f2, f2], axis=1)
    if not tangent:
        return q, None
    # d coef / d x21_{n+1} = (2 xi EA/l0 - coef) e_{n+1} / (l_n + l_{n+1}); d x21_m = dx21 / 2
    g = ((2.0 * xi * EA / c1.l0 - coef) / l_sum)[:, None] * c1.e       # (n_el, dim)
    block = np.einsum("ei,ej->eij", x21m, g) + 0.5 * coef[:, None, None] * np.eye(dim)[None]
    return q, np.block([[block, -block], [-block, block]])


class EnergyDecayingMidPoint(MidPoint):
    """Energy-decaying mid-point scheme: Crisfield & Shi's energy-conserving scheme with a
    strain-based numerical dissipation xi = :func:`energy_decaying_parameter` (rho_inf) (the
    shifted-stress dissipation of Kuhl & Ramm 1996 and Armero & Romero 2001, EDMC-1, written in
    Crisfield & Shi's co-rotational mid-point form).

    Kinematics ``u_{n+1} - u_n = dt ((1/2 + chi) v_{n+1} + (1/2 - chi) v_n)`` and balance
    ``M (v_{n+1} - v_n) / dt + q_m + q_d - f_m = 0`` with the elements' energy-conserving mid-point
    force q_m and the chords' dissipative force q_d (:func:`chord_dissipative_force`); chi = 0 here
    (the conserving scheme's kinematics), chi = xi in :class:`EnergyDecayingVelocityMidPoint`.
    With ``dv = v_{n+1} - v_n``, exactly (for any step, to the Newton tolerance)::

        K_{n+1} + Phi_{n+1} - (K_n + Phi_n) = W - chi dv^T M dv - sum_elements xi EA/l0 (l_{n+1} - l_n)^2

    where W is the work of loads and supports over the step (the mid-point's): the total energy
    of a conservative model decays monotonically for any step, so the nonlinear scheme is
    unconditionally stable. q_d lies along the mid-point chords, so linear and angular momentum
    are conserved as in the conserving scheme.

    On a linear oscillator (a bar stretched along its axis) the amplification matrix tends, as
    omega dt -> infinity, to eigenvalues ``-(1/2 - xi) / (1/2 + xi) = -rho_inf`` (the displacement,
    i.e. strain and axial force, mode) and ``-(1/2 - chi) / (1/2 + chi)`` (the velocity mode, in
    which the velocity flips sign every step at constant displacement): -1 here, so unresolved
    stretching is removed but a velocity flip of the conserving scheme is kept (its energy is
    then kinetic; it moves no node). The dissipation is O(dt) in the strain rate: first-order
    accurate for rho_inf < 1, but a motion without stretching (rigid, or nearly rigid stiff bars)
    is hardly affected. rho_inf = 1 is the energy-conserving mid-point scheme.

    Supports models whose element groups are co-rotational trusses (2D or 3D) and planar beams
    (Beam2D with lumped or consistent mass; the dissipation acts on their chord length, i.e. the
    axial vibration, not on bending, whose unresolved modes stay undamped as in the conserving
    scheme), with point masses, loads, prescribed motions and joints (the mid-point's
    discrete-gradient joints, which do no work). Other element groups (their dissipation would
    need its own strain-based form) and configuration-dependent (cubic) masses are refused.
    """

    name = "energy-decaying"
    #: dissipation in the kinematics as well (chi = xi)
    velocity_dissipation = False

    def __init__(self, assembly: Assembly, rho_inf: float = 0.8) -> None:
        super().__init__(assembly)
        for group in assembly.groups:
            if type(group) not in (Truss, Beam2D):
                raise ModelError(f"scheme {self.name!r}: element group {group.name!r} is a {type(group).__name__}; "
                                 "the energy-decaying mid-point scheme supports truss and Beam2D groups only (its "
                                 "dissipation is strain-based per element type); use 'generalized-alpha'")
        _refuse_spatial_rotations(assembly, self.name)
        if assembly.configuration_masses:
            group = assembly.groups[assembly.configuration_masses[0][0]]
            raise ModelError(f"scheme {self.name!r}: element group {group.name!r} has mass='cubic' (configuration-"
                             "dependent); the energy-decaying schemes take lumped or consistent masses only")
        self.rho_inf = check_rho_inf(rho_inf, self.name)
        self.xi = energy_decaying_parameter(self.rho_inf)
        self.chi = self.xi if self.velocity_dissipation else 0.0
        self._reference = [assembly.model.coordinates[g.connectivity] for g in assembly.groups]  # (n_el, 2, dim)
        #: per group, the element DOFs of the chord's end translations (a bar's all, a beam's but the rotations)
        self._chord_dofs = [np.arange(2 * g.dim) if type(g) is Truss else _BEAM2D_TRANSLATIONS
                            for g in assembly.groups]

    def _motion(self, s: State, dt: float, u1: np.ndarray):
        d = u1 - s.u
        v1 = (d / dt - (0.5 - self.chi) * s.v) / (0.5 + self.chi)
        return v1, (v1 - s.v) / dt, d, None, None

    def _dissipative_force(self, u0: np.ndarray, u1: np.ndarray, data: np.ndarray | None) -> np.ndarray:
        """q_d (n_dof,) of all groups' chords; with ``data`` (nnz,) dq_d/du1 added into it."""
        asm = self.asm
        forces, tangents = [], []
        for g, X, c, a, b in zip(asm.groups, self._reference, self._chord_dofs, asm.gather(u0), asm.gather(u1)):
            q_chord, K_chord = chord_dissipative_force(X, a[:, c], b[:, c], g.EA, self.xi, data is not None)
            q = np.zeros_like(a)                                          # (n_el, ne)
            q[:, c] = q_chord
            forces.append(q)
            if data is not None:
                K = np.zeros((*a.shape, a.shape[1]))                      # (n_el, ne, ne)
                K[:, c[:, None], c[None, :]] = K_chord
                tangents.append(K)
        if data is not None:
            asm.matrix_data(tangents, out=data)
        return asm.vector(forces)

    def residual(self, s: State, dt: float, u1: np.ndarray, tangent: bool = True) -> StepResidual:
        asm = self.asm
        v1, a_m, d, _, _ = self._motion(s, dt, u1)
        asm.set_time(s.t + 0.5 * dt)
        # d a_m / du1 = 1 / ((1/2 + chi) dt^2): the mass term of the Jacobian
        data = asm.scaled_mass_data(1.0 / ((0.5 + self.chi) * dt**2)) if tangent else None
        q = asm.mid_point_forces_and_inertia(s.u, u1, s.v, None, dt, data)[0] + self._dissipative_force(s.u, u1, data)
        # physical damping (dampers, Rayleigh) as in the conserving scheme, booked apart from the numerical decay
        q_d = asm.mid_point_damping(s.u, u1, dt, data) if asm.damped_groups else None
        f_m, f_data = asm.mid_point_external_force(s.t, s.t + dt, s.u, u1)
        if f_data is not None and tangent:
            data -= f_data
        inertia = asm.mass_times(a_m)
        g = q - f_m + inertia + (0.0 if q_d is None else q_d)
        return StepResidual(g, data, self._scale(s, dt, u1, v1, q, f_m, inertia), f_m, d, v1, a_m,
                            damping=q_d)

    def solve_step(self, s: State, dt: float, u1: np.ndarray, settings: NewtonSettings, length_scale: float,
                   check_singular: bool = True) -> None:
        return None                 # the one-call compiled solve is the conserving scheme's


class EnergyDecayingVelocityMidPoint(EnergyDecayingMidPoint):
    """:class:`EnergyDecayingMidPoint` with the dissipation in the kinematics too, chi = xi (after
    Armero & Romero 2001, EDMC-1, whose dissipation enters both equations): both eigenvalues of
    the amplification matrix tend to -rho_inf as omega dt -> infinity, so the spectral radius at
    infinity is rho_inf, and energy decays by ``xi dv^T M dv`` more per step. The price: the
    kinematic term moves the nodes along ``v_{n+1/2} + xi dv`` instead of v_{n+1/2}, which changes
    the angular momentum by ``xi dt sum_i m_i dv_i x v_{i,n+1/2}`` per step (linear momentum stays
    conserved) and damps every accelerated motion, rigid ones included, at first order."""

    name = "energy-decaying-velocity"
    velocity_dissipation = True


#: the schemes of this module by name, with their keyword (added to
#: :data:`flexmb.integrators.schemes.SCHEMES` by :mod:`flexmb.integrators.time_stepping`)
DISSIPATIVE_SCHEMES = {"generalized-alpha": GeneralizedAlpha, "energy-decaying": EnergyDecayingMidPoint,
                       "energy-decaying-velocity": EnergyDecayingVelocityMidPoint}
