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
  Shi (1993) with a strain-based dissipation of the chord stretching of bars, beams (planar and
  spatial) and shell triangles' edges (Kuhl & Ramm 1996, Armero & Romero 2001): the total energy
  decays monotonically for any step (unconditional stability of the nonlinear scheme), linear and
  angular momentum are conserved; first order in the strain rate, so nearly rigid motion is
  hardly affected; the displacement mode's eigenvalue at infinity is -rho_inf, the velocity-flip
  mode's stays -1.
* :class:`EnergyDecayingVelocityMidPoint` (``"energy-decaying-velocity"``): the same with
  dissipation in the kinematics too (as in Armero & Romero's EDMC-1): spectral radius at
  infinity rho_inf in both modes, energy decays, linear momentum conserved, angular momentum not
  exactly; first order for every motion.

Spatial rotations: generalized-alpha composes the rotations on SO(3) with its Newmark
kinematics in the body frame (a Lie-group form after Arnold & Bruls 2007 and Bruls & Cardona
2010); the energy-decaying scheme takes them as the mid-point scheme does; the
velocity-dissipative variant refuses them. What else each supports is in its docstring.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmb.assembly import Assembly
from flexmb.checks import ModelError
from flexmb.elements.corotational import chord
from flexmb.elements.beam2d import Beam2D
from flexmb.elements.beam3d import Beam3D
from flexmb.elements.shell3 import Shell3
from flexmb.elements.truss import Truss
from flexmb.integrators import newton
from flexmb.integrators.newton import MAX_ROTATION_CORRECTION, NewtonLog, NewtonSettings
from flexmb.integrators.schemes import MidPoint, Newmark, State, StepResidual
from flexmb.rotations import exp_map, skew, tangent_operator


#: an empty array for the compiled calls' absent arguments (no joint forces)
_EMPTY = np.zeros(0)
#: element DOFs of a Beam2D's end translations [u1, v1, u2, v2] (its rotations are 2 and 5)
_BEAM2D_TRANSLATIONS = np.array([0, 1, 3, 4])
#: element DOFs of a Beam3D's end translations (6 DOFs per node, translations first)
_BEAM3D_TRANSLATIONS = np.array([0, 1, 2, 6, 7, 8])
#: a Shell3's edges (node pairs) and their ends' element DOFs (6 DOFs per node)
_SHELL3_EDGES = np.array([[0, 1], [1, 2], [2, 0]])
_SHELL3_EDGE_DOFS = (6 * _SHELL3_EDGES[:, :, None] + np.arange(3)).reshape(3, 6)


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
                         "has rotation DOFs; its velocity dissipation moves the rotations off the mid-point "
                         "rule); use 'energy-decaying' or 'generalized-alpha' for them")


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
    """Generalized-alpha scheme (Chung & Hulbert 1993, eqs. 1-3, 17, 20, 25) in the form of Arnold
    & Bruls (2007, eqs. 9-11): equilibrium at the step's end with the true acceleration vdot, and
    an acceleration-like variable ``a`` (the state's acceleration) in the kinematics.

    Newmark's kinematics with beta, gamma of :class:`AlphaParameters`,
    ``u_{n+1} = u_n + dt v_n + dt^2 ((1/2 - beta) a_n + beta a_{n+1})``,
    ``v_{n+1} = v_n + dt ((1 - gamma) a_n + gamma a_{n+1})``, the recursion
    ``(1 - alpha_m) a_{n+1} + alpha_m a_n = (1 - alpha_f) vdot_{n+1} + alpha_f vdot_n`` and
    ``M(u_{n+1}) vdot_{n+1} + F_{n+1} = 0`` with ``F = q - f + G^T lambda - r + (velocity terms of
    the inertia: gyroscopic, the configuration-dependent masses' dp/du v - dT/du)`` and r the
    support reactions. vdot is eliminated with the balance at t_n,
    ``M(u_n) vdot_n = -F_n``, which leaves (divided by 1 - alpha_f)::

        F_{n+1} + M_{n+1} (w a_{n+1} + c a_n) + alpha_f / (1 - alpha_f) (F_n + M_n a_n) = 0,
        w = (1 - alpha_m) / (1 - alpha_f),  c = (alpha_m - alpha_f) / (1 - alpha_f),

    exact for constant masses (it is then Chung & Hulbert's averaged balance, eq. 1 with the
    forces averaged) and with vdot_n replaced by a_n in ``(M_{n+1} - M_n) vdot_n`` for
    configuration-dependent (cubic) masses, an O(dt^2) change that keeps second order (averaging
    ``M a`` and the velocity terms as inertia instead, the former form, is first order: the
    inertia then sits at t_{n+1-alpha_m}, the forces at t_{n+1-alpha_f}). Newton solves for
    u_{n+1}; the residual at prescribed DOFs is the end-of-step reaction r_{n+1}, the multipliers
    are the end-of-step ones; the joints hold at the step's end, Phi(u_{n+1}) = 0, as in
    :class:`~flexmb.integrators.schemes.Newmark`. The start value a_0 is Newmark's consistent
    acceleration (equilibrium at t0).

    Spatial rotations (the Lie-group scheme of Arnold & Bruls 2007 and Bruls & Cardona 2010): the
    rotation is stepped on SO(3), ``R_{n+1} = R_n exp(hat(Theta))``, with the kinematics above in
    the body frame (left-trivialized tangent space, as :class:`Newmark` does for beta = 1/4):
    ``Theta = dt Omega_n + dt^2 ((1/2 - beta) A_n + beta A_{n+1})``,
    ``Omega_{n+1} = Omega_n + dt ((1 - gamma) A_n + gamma A_{n+1})`` (Omega = R^T omega,
    A = R^T a; the state holds omega and a in spatial components). The balance at t_n enters in
    the end-of-step frame: its moments are carried by ``exp(hat(theta)) = R_{n+1} R_n^T``, so
    for rigid rotary inertia ``M_{n+1} A_n = R_{n+1} J A_n`` is exact and the scheme is the
    body-frame Lie-group generalized-alpha; the gyroscopic moment ``R (Omega x J Omega)`` is a
    velocity term of F. Linear momentum is conserved exactly where no external force acts (the
    translations' balance is linear); angular momentum is not conserved by the scheme.

    Second-order accurate for every rho_inf in [0, 1]; rho_inf = 1 is trapezoidal Newmark for
    linear models. Supports what :class:`Newmark` supports: every element group (Beam3D, Shell3,
    3D modal bodies included), rigid bodies, constant and configuration-dependent (cubic) masses,
    point masses, time-dependent and configuration-dependent loads, prescribed motions and joints.

    A model of one planar beam group (Beam2D, any mass) without spatial rotations,
    configuration-dependent loads or damping takes its residual in one compiled call and, without
    joints, its whole Newton solve (:mod:`flexmb.compiled.alpha_group`): the same values bit for
    bit; a 9-DOF slider-crank's step (5.25 iterations) 0.36 -> 0.08 ms.
    """

    name = "generalized-alpha"

    def __init__(self, assembly: Assembly, rho_inf: float = 0.8) -> None:
        super().__init__(assembly)
        self.parameters = AlphaParameters.from_rho_inf(check_rho_inf(rho_inf, self.name))
        #: the start state of the current step, its fixed balance terms and its external force (n_dof,)
        self._start: tuple[State, np.ndarray, np.ndarray] | None = None
        #: the step's constant parts of the kinematics without spatial rotations (see :meth:`_step_kinematics`)
        self._kinematics: tuple | None = None
        #: whether a group has damping forces (the assembly's groups do not change)
        self._damped = bool(assembly.damped_groups)

    @property
    def rho_inf(self) -> float:
        return self.parameters.rho_inf

    def _start_terms(self, s: State) -> tuple[np.ndarray, np.ndarray]:
        """alpha_f / (1 - alpha_f) (F_n + M_n a_n) (n_dof,), the balance at t_n of the step's
        residual (in the start frame at spatial rotations), and f_n (n_dof,), computed once per
        start state."""
        if self._start is not None and self._start[0] is s:
            return self._start[1:]
        asm, p = self.asm, self.parameters
        asm.set_time(s.t)
        f0 = asm.external_force(s.t, u=s.u)
        plan = self._compiled_plan()
        if plan is not None:                    # one compiled call, the same values
            from flexmb.compiled.alpha_group import beam2d_alpha_start

            terms = np.empty(asm.n_dof)
            # the plan's model arguments but the entry map, up to the mass's CSR arrays
            beam2d_alpha_start(*plan[:5], *plan[6:13], s.u, s.v, s.a, f0, s.reaction,
                               _EMPTY if s.constraint_force is None else s.constraint_force,
                               p.alpha_f / (1.0 - p.alpha_f), terms)
            self._start = (s, terms, f0)
            return terms, f0
        total = asm.internal_force(s.u) - f0 - s.reaction + asm.mass_times(s.a)
        if asm.damped_groups:
            total += asm.damping_force(s.u, s.v)
        if s.constraint_force is not None:
            total += s.constraint_force
        f_c = asm.end_point_inertia(s.u, s.v, s.a)[0] if asm.configuration_masses else None
        if f_c is not None:
            total += f_c
        rd = asm.rotation_dofs
        if rd.size:
            # R_n (J A_n + Omega_n x J Omega_n) = J_s a_n + omega_n x J_s omega_n (spatial), in place of M a there
            Js, w = asm.spatial_inertia(s.u), s.v[rd]
            total[rd] += (np.einsum("nij,nj->ni", Js, s.a[rd]) + np.cross(w, np.einsum("nij,nj->ni", Js, w))
                          - asm.mass_times(s.a)[rd])
        terms = p.alpha_f / (1.0 - p.alpha_f) * total
        self._start = (s, terms, f0)
        return terms, f0

    def _step_kinematics(self, s: State, dt: float) -> tuple[np.ndarray, ...]:
        """The terms of the Newmark kinematics (without spatial rotations) that only the step's start
        sets, computed once per step: dt v_n (m), dt^2 (1/2 - beta) a_n (m), (1 - gamma) a_n (m/s^2)
        and c a_n (m/s^2), the start acceleration's share of the mass term (n_dof,) each; so
        ``a_{n+1} = (d - dt v_n - dt^2 (1/2 - beta) a_n) / (beta dt^2)`` and
        ``v_{n+1} = v_n + dt ((1 - gamma) a_n + gamma a_{n+1})`` take the operations (and values)
        of the full form in :meth:`_motion`."""
        k = self._kinematics
        if k is not None and k[0] is s and k[1] is s.u and k[2] is s.v and k[3] is s.a and k[4] == dt:
            return k[5:]
        p = self.parameters
        terms = (dt * s.v, dt**2 * (0.5 - p.beta) * s.a, (1.0 - p.gamma) * s.a,
                 (p.alpha_m - p.alpha_f) / (1.0 - p.alpha_f) * s.a)
        self._kinematics = (s, s.u, s.v, s.a, dt, *terms)
        return terms

    def _motion(self, s: State, dt: float, u1: np.ndarray):
        """v1, a1 (n_dof,) and the rotating nodes' rates (theta and :func:`alpha_body_rates`, or None)."""
        p = self.parameters
        rd = self.asm.rotation_dofs
        if not rd.size:
            dv, da, kept, _ = self._step_kinematics(s, dt)
            a1 = (u1 - s.u - dv - da) / (p.beta * dt**2)
            return s.v + dt * (kept + p.gamma * a1), a1, None
        d = self.increment(s, u1)
        a1 = (d - dt * s.v - dt**2 * (0.5 - p.beta) * s.a) / (p.beta * dt**2)
        v1 = s.v + dt * ((1.0 - p.gamma) * s.a + p.gamma * a1)
        rates = None
        if rd.size:
            theta = d[rd]
            rates = (theta, *alpha_body_rates(s.u[rd], u1[rd], theta, s.v[rd], s.a[rd], dt, p.beta, p.gamma))
            _, _, R1, Om1, A1 = rates
            v1[rd] = np.einsum("nij,nj->ni", R1, Om1)
            a1[rd] = np.einsum("nij,nj->ni", R1, A1)
        return v1, a1, rates

    def _compiled_plan(self) -> tuple | None:
        """The constant arguments of the one-call residual
        (:func:`flexmb.compiled.alpha_group.beam2d_alpha_residual`), or None where it does not
        apply: it takes a model of one planar beam group (the assembly's fused groups) without
        spatial rotations, configuration-dependent loads or damping."""
        if not hasattr(self, "_plan"):
            asm = self.asm
            fused = asm.fused_groups
            self._plan = None
            if (len(fused) == 1 and fused[0] is not None and not asm.rotation_dofs.size and not asm.configuration_loads
                    and not self._damped):
                M = asm.mass
                self._plan = (*fused[0][0], *fused[0][1], M.indptr, M.indices, M.data, asm.mass_data, asm.dofs.free)
        return self._plan

    def _compiled_arguments(self, s: State, dt: float) -> tuple[tuple, np.ndarray]:
        """The step's arguments of the one-call residual after the plan's (u_n, v_n, the kinematics'
        step terms, beta, gamma, w, the balance at t_n, f_{n+1}, the start momentum's norm and dt)
        and the step's mean external force (f_n + f_{n+1}) / 2 (n_dof,), N."""
        asm, p = self.asm, self.parameters
        start_terms, f0 = self._start_terms(s)
        asm.set_time(s.t + dt)
        if s.momentum_norm is None:
            s.momentum_norm = asm.free_norm(asm.mass_times(s.v))
        # without configuration-dependent loads the external force does not depend on the iterate
        f1 = asm.external_force(s.t + dt, u=s.u)
        weight = (1.0 - p.alpha_m) / (1.0 - p.alpha_f)
        return (s.u, s.v, *self._step_kinematics(s, dt), p.beta, p.gamma, weight, start_terms, f1,
                s.momentum_norm, dt), 0.5 * (f0 + f1)

    def _compiled_residual(self, plan: tuple, s: State, dt: float, u1: np.ndarray, tangent: bool) -> StepResidual:
        """:meth:`residual` in one compiled call (:meth:`_compiled_plan`); the same values."""
        from flexmb.compiled.alpha_group import beam2d_alpha_residual

        asm = self.asm
        arguments, f_avg = self._compiled_arguments(s, dt)
        n = u1.size
        g, v1, a1 = np.empty(n), np.empty(n), np.empty(n)
        data = np.empty(asm.nnz if tangent else 0)
        scale = beam2d_alpha_residual(*plan, *arguments, u1, tangent, g, data, v1, a1)
        return StepResidual(g, data if tangent else None, scale, f_avg, velocity=v1, acceleration=a1)

    def solve_step(self, s: State, dt: float, u1: np.ndarray, settings: NewtonSettings, length_scale: float,
                   check_singular: bool = True) -> tuple[NewtonLog, StepResidual] | None:
        """Models of the one-call residual (:meth:`_compiled_plan`) whose Jacobian takes the dense
        LU: the full Newton solve of :func:`~flexmb.integrators.newton.newton_solve` as one
        compiled call (:func:`flexmb.compiled.alpha_group.beam2d_alpha_newton`), the same
        iterates, as :meth:`MidPoint.solve_step <flexmb.integrators.schemes.MidPoint.solve_step>`
        does, with the step's start terms (:meth:`_start_terms`, :meth:`_step_kinematics`) formed in
        the same call (a start pivot the dense test flags but
        :meth:`~flexmb.integrators.newton.Factorization.is_singular` does not confirm: None, and
        newton_solve runs the step)."""
        plan = self._compiled_plan()
        asm = self.asm
        if plan is None or asm.n_free > newton.DENSE_LIMIT:
            return None
        from flexmb.compiled.alpha_group import beam2d_alpha_newton
        from flexmb.compiled.dense_newton import SINGULAR_PIVOT

        if not hasattr(self, "_magnitudes"):
            self._magnitudes = asm.round_off_lengths[asm.dofs.free]
        p = self.parameters
        # the external forces and the set time of _start_terms and _compiled_arguments
        asm.set_time(s.t)
        f0 = asm.external_force(s.t, u=s.u)
        asm.set_time(s.t + dt)
        f1 = asm.external_force(s.t + dt, u=s.u)
        if s.momentum_norm is None:
            s.momentum_norm = asm.free_norm(asm.mass_times(s.v))
        n, nf, m = u1.size, asm.n_free, settings.max_iterations
        g, v1, a1, data = np.empty(n), np.empty(n), np.empty(n), np.empty(asm.nnz)
        residual_norms, force_scales = np.empty(m + 1), np.empty(m + 1)
        increment_norms, smallest_pivots, correction = np.empty(m), np.empty(m), np.empty(nf)
        outcome, k, scale, *counts = beam2d_alpha_newton(
            *plan, s.u, s.v, s.a, f0, s.reaction, _EMPTY if s.constraint_force is None else s.constraint_force,
            p.beta, p.gamma, p.alpha_f / (1.0 - p.alpha_f), (1.0 - p.alpha_m) / (1.0 - p.alpha_f),
            (p.alpha_m - p.alpha_f) / (1.0 - p.alpha_f), f1, s.momentum_norm, dt, asm.pattern_indptr,
            asm.pattern_indices, length_scale, settings.residual_tol, settings.force_tol, settings.increment_tol, m,
            settings.increment_gate, settings.stagnation_tol, settings.round_off_factor, self._magnitudes,
            newton.pivot_tolerance(nf) if check_singular else 0.0, newton.ABSURD_CORRECTION, asm.free_planar_rotations,
            MAX_ROTATION_CORRECTION, u1, g, data, v1, a1, residual_norms, force_scales, increment_norms,
            smallest_pivots, correction)
        if outcome == SINGULAR_PIVOT and not newton.Factorization(asm.free_matrix(data)).is_singular():
            return None
        log = newton.compiled_solve_log(outcome, k, tuple(counts), residual_norms, force_scales,
                                        increment_norms, smallest_pivots, correction,
                                        lambda: asm.free_matrix(data.copy()), settings, length_scale)
        return log, StepResidual(g, data, scale, 0.5 * (f0 + f1), velocity=v1, acceleration=a1)

    def residual(self, s: State, dt: float, u1: np.ndarray, tangent: bool = True) -> StepResidual:
        plan = self._compiled_plan()
        if plan is not None:
            return self._compiled_residual(plan, s, dt, u1, tangent)
        # the separate calls (every model; the specification of the one-call forms)
        asm, p = self.asm, self.parameters
        v1, a1, rates = self._motion(s, dt, u1)
        start_terms, f0 = self._start_terms(s)                  # at t_n (sets the time for user forces)
        asm.set_time(s.t + dt)
        weight = (1.0 - p.alpha_m) / (1.0 - p.alpha_f)          # w of a_{n+1}
        shift = (p.alpha_m - p.alpha_f) / (1.0 - p.alpha_f)     # c of a_n
        da_du, dv_du = 1.0 / (p.beta * dt**2), p.gamma / (p.beta * dt)
        rd = asm.rotation_dofs
        if rd.size:
            # a_n and the balance at t_n carried to the end-of-step frame by exp(hat(theta)) = R_{n+1} R_n^T
            turn = rates[2] @ rates[1].transpose(0, 2, 1)                          # (n_r, 3, 3)
            a0, start_terms = s.a.copy(), start_terms.copy()
            a0[rd] = np.einsum("nij,nj->ni", turn, s.a[rd])
            start_terms[rd] = np.einsum("nij,nj->ni", turn, start_terms[rd])
            mixed = weight * a1 + shift * a0                    # M_{n+1} acts on it
        else:
            mixed = weight * a1 + self._step_kinematics(s, dt)[3]
        if tangent:
            q1, data = asm.force_and_tangent(u1, out=asm.scaled_mass_data(weight * da_du))
        else:
            q1, data = asm.internal_force(u1), None
        f1 = asm.external_force(s.t + dt, u=u1)
        inertia = asm.mass_times(mixed)
        if asm.configuration_loads and tangent:
            data -= asm.load_stiffness_data(u1, s.t + dt)
        if asm.configuration_masses:
            # M(u_{n+1}) (w a_{n+1} + c a_n) plus the velocity terms, with their derivative along the kinematics
            f_c, d_c = asm.end_point_inertia(u1, v1, mixed, dv_du, weight * da_du, tangent)
            inertia = inertia + f_c
            if tangent:
                data += d_c
        if rd.size:
            if not tangent:
                data = np.zeros(asm.nnz)            # the rotary blocks below are added and dropped
            m_a, m_g, d_a, d_g = alpha_rotary_terms(*rates, asm.rotary_inertia, dt, p.beta, p.gamma)
            # R_{n+1} J A_n, a fixed body vector turned with R_{n+1}, as the carried start terms
            m_0 = np.einsum("nij,nj->ni", rates[2] @ asm.rotary_inertia, np.einsum("nji,nj->ni", rates[1], s.a[rd]))
            inertia[rd] = weight * m_a + shift * m_0 + m_g
            if asm.configuration_masses:
                inertia[rd] += f_c[rd]              # the 3D modal bodies' inertia there
            blocks = weight * d_a + d_g - skew(shift * m_0 + start_terms[rd])
            data += asm.rotary_block_data(blocks)
            if not tangent:
                data = None
        g = q1 - f1 + inertia + start_terms
        q_d = None
        if self._damped:
            # damping at the end point, a force of F (its start value is in start_terms);
            # its work is booked by Newmark's trapezoidal rule
            q_d = asm.damping_force(u1, v1, dv_du, data)
            g += q_d
        f_avg = 0.5 * (f0 + f1)                                 # for the trapezoidal work balance
        return StepResidual(g, data, self._scale(s, dt, u1, v1, q1, f1, inertia), f_avg,
                            velocity=v1, acceleration=a1, damping=q_d)


def alpha_body_rates(psi0: np.ndarray, psi1: np.ndarray, theta: np.ndarray, omega0: np.ndarray,
                     alpha0: np.ndarray, dt: float, beta: float, gamma: float) -> tuple[np.ndarray, ...]:
    """R_n, R_{n+1} (n_r, 3, 3), Omega_{n+1} and A_{n+1} (n_r, 3) of the Newmark kinematics in the
    body frame with parameters beta, gamma (:class:`GeneralizedAlpha`), from the rotation vectors
    psi0, psi1, the spatial rotation increment theta (``R_{n+1} = exp(hat(theta)) R_n``, so the
    body one is ``Theta = R_n^T theta``) and the spatial angular velocity and acceleration at t_n
    (rad/s, rad/s^2). :class:`~flexmb.integrators.schemes.Newmark`'s rule for beta = 1/4,
    gamma = 1/2."""
    R0, R1 = exp_map(psi0), exp_map(psi1)
    R0T = R0.transpose(0, 2, 1)
    Th, Om0, A0 = (np.einsum("nij,nj->ni", R0T, x) for x in (theta, omega0, alpha0))   # (n_r, 3) each
    A1 = (Th - dt * Om0 - dt**2 * (0.5 - beta) * A0) / (beta * dt**2)
    Om1 = Om0 + dt * ((1.0 - gamma) * A0 + gamma * A1)
    return R0, R1, Om1, A1


def alpha_rotary_terms(theta: np.ndarray, R0: np.ndarray, R1: np.ndarray, Om1: np.ndarray, A1: np.ndarray,
                       J: np.ndarray, dt: float, beta: float, gamma: float) -> tuple[np.ndarray, ...]:
    """The rotary inertia's moments at t_{n+1}, N m, ``R_{n+1} J A_{n+1}`` (n_r, 3) and the gyroscopic
    ``R_{n+1} (Omega_{n+1} x J Omega_{n+1})`` (n_r, 3), and their derivatives w.r.t. a spin of
    R_{n+1} (n_r, 3, 3) each: ``dtheta = T(theta)^-1 dspin``, ``dA = R_n^T dtheta / (beta dt^2)``,
    ``dOmega = gamma / (beta dt) R_n^T dtheta``. J (n_r, 3, 3) the rotary inertia in the reference
    orientation, kg m^2. Returns (moment of J A, gyroscopic moment, their two derivatives)."""
    JOm = np.einsum("nij,nj->ni", J, Om1)                                             # (n_r, 3)
    m_a = np.einsum("nij,nj->ni", R1, np.einsum("nij,nj->ni", J, A1))
    m_g = np.einsum("nij,nj->ni", R1, np.cross(Om1, JOm))
    dtheta = R0.transpose(0, 2, 1) @ np.linalg.inv(tangent_operator(theta))         # dTheta/dspin (n_r, 3, 3)
    d_a = -skew(m_a) + R1 @ (J / (beta * dt**2)) @ dtheta
    d_g = -skew(m_g) + R1 @ (gamma / (beta * dt) * (skew(Om1) @ J - skew(JOm))) @ dtheta
    return m_a, m_g, d_a, d_g


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
    (the conserving scheme's kinematics, spatial rotations and cubic masses included: the step is
    :class:`~flexmb.integrators.schemes.MidPoint`'s plus q_d), chi = xi in
    :class:`EnergyDecayingVelocityMidPoint`. With ``dv = v_{n+1} - v_n``, exactly (for any step,
    to the Newton tolerance)::

        K_{n+1} + Phi_{n+1} - (K_n + Phi_n) = W - chi dv^T M dv - sum_chords xi EA/l0 (l_{n+1} - l_n)^2

    where W is the work of loads and supports over the step (the mid-point's) and the last sum is
    :meth:`numerical_dissipation`: the total energy of a conservative model decays monotonically
    for any step, so the nonlinear scheme is unconditionally stable. q_d lies along the mid-point
    chords, so linear and angular momentum are conserved as in the conserving scheme.

    On a linear oscillator (a bar stretched along its axis) the amplification matrix tends, as
    omega dt -> infinity, to eigenvalues ``-(1/2 - xi) / (1/2 + xi) = -rho_inf`` (the displacement,
    i.e. strain and axial force, mode) and ``-(1/2 - chi) / (1/2 + chi)`` (the velocity mode, in
    which the velocity flips sign every step at constant displacement): -1 here, so unresolved
    stretching is removed but a velocity flip of the conserving scheme is kept (its energy is
    then kinetic; it moves no node). The dissipation is O(dt) in the strain rate: first-order
    accurate for rho_inf < 1, but a motion without stretching (rigid, or nearly rigid stiff bars)
    is hardly affected. rho_inf = 1 is the energy-conserving mid-point scheme.

    The chords: a truss bar's, a beam's (Beam2D, Beam3D: the axial vibration is damped, bending
    and torsion are not, their unresolved modes stay undamped as in the conserving scheme) and the
    three edges of a shell triangle (Shell3: its membrane vibration), each edge a bar of
    ``EA = E h A / l0`` (A the triangle's area; the three bars of an equilateral triangle have its
    in-plane stiffness for nu = 1/3, otherwise they only set the dissipation's strength, so the
    membrane modes' eigenvalue at infinity is near, not at, -rho_inf). Every other element group
    the mid-point scheme takes (springs, bushings, modal bodies, ...) is integrated as the
    conserving scheme does, without numerical dissipation (a strain-based form per type would be
    needed). Every mass type (lumped, consistent, cubic), rigid bodies and point masses, loads,
    prescribed motions and joints (the mid-point's discrete-gradient joints, which do no work).
    """

    name = "energy-decaying"
    #: dissipation in the kinematics as well (chi = xi)
    velocity_dissipation = False

    def __init__(self, assembly: Assembly, rho_inf: float = 0.8) -> None:
        super().__init__(assembly)
        if self.velocity_dissipation:
            for group in assembly.groups:
                if type(group) not in (Truss, Beam2D):
                    raise ModelError(f"scheme {self.name!r}: element group {group.name!r} is a "
                                     f"{type(group).__name__}; the {self.name} scheme supports Truss and Beam2D "
                                     "groups only; use 'energy-decaying' or 'generalized-alpha'")
        self.rho_inf = check_rho_inf(rho_inf, self.name)
        self.xi = energy_decaying_parameter(self.rho_inf)
        self.chi = self.xi if self.velocity_dissipation else 0.0
        #: per group with chords: (group index, reference chord ends (n_el n_c, 2, dim) in m, their element
        #: DOFs (n_c, 2 dim), EA (n_el n_c,) in N), element-major
        self._chords = []
        for i, g in enumerate(assembly.groups):
            X = assembly.model.coordinates[g.connectivity]                      # (n_el, nodes, dim)
            if type(g) is Truss:
                dofs, ends, EA = np.arange(2 * g.dim)[None], np.array([[0, 1]]), g.EA[:, None]
            elif type(g) is Beam2D:
                dofs, ends, EA = _BEAM2D_TRANSLATIONS[None], np.array([[0, 1]]), g.EA[:, None]
            elif type(g) is Beam3D:
                dofs, ends, EA = _BEAM3D_TRANSLATIONS[None], np.array([[0, 1]]), g.EA[:, None]
            elif type(g) is Shell3:
                Xc = X[:, _SHELL3_EDGES]                                          # (n_el, 3, 2, 3)
                l0 = np.linalg.norm(Xc[:, :, 1] - Xc[:, :, 0], axis=2)             # (n_el, 3)
                area = 0.5 * np.linalg.norm(np.cross(X[:, 1] - X[:, 0], X[:, 2] - X[:, 0]), axis=1)  # (n_el,)
                dofs, ends, EA = _SHELL3_EDGE_DOFS, _SHELL3_EDGES, (g.E * g.thickness * area)[:, None] / l0
            else:
                continue                                                          # no chord: not damped
            self._chords.append((i, X[:, ends].reshape(-1, 2, X.shape[2]), dofs, EA.ravel()))

    def _motion(self, s: State, dt: float, u1: np.ndarray):
        if not self.chi:
            return super()._motion(s, dt, u1)
        d = u1 - s.u
        v1 = (d / dt - (0.5 - self.chi) * s.v) / (0.5 + self.chi)
        return v1, (v1 - s.v) / dt, d, None, None

    def _chord_ends(self, u: np.ndarray) -> list[np.ndarray]:
        """Per chord group, its chords' end translations (n_el n_c, 2 dim) from u (n_dof,)."""
        ue = self.asm.gather(u)
        return [ue[i][:, dofs].reshape(len(X), -1) for i, X, dofs, _ in self._chords]

    def _dissipative_force(self, u0: np.ndarray, u1: np.ndarray, data: np.ndarray | None) -> np.ndarray:
        """q_d (n_dof,) of all groups' chords; with ``data`` (nnz,) dq_d/du1 added into it."""
        asm = self.asm
        forces = [np.zeros_like(x) for x in asm.gather(u0)]                          # (n_el, ne) per group
        tangents = [np.zeros((*x.shape, x.shape[1])) for x in forces] if data is not None else None
        for (i, X, dofs, EA), a, b in zip(self._chords, self._chord_ends(u0), self._chord_ends(u1)):
            q_chord, K_chord = chord_dissipative_force(X, a, b, EA, self.xi, data is not None)
            n_c, m = dofs.shape
            q_chord = q_chord.reshape(-1, n_c, m)                                   # (n_el, n_c, 2 dim)
            for c in range(n_c):                                                     # a shell's edges share nodes
                forces[i][:, dofs[c]] += q_chord[:, c]
                if data is not None:
                    tangents[i][:, dofs[c][:, None], dofs[c][None, :]] += K_chord.reshape(-1, n_c, m, m)[:, c]
        if data is not None:
            asm.matrix_data(tangents, out=data)
        return asm.vector(forces)

    def numerical_dissipation(self, u0: np.ndarray, u1: np.ndarray) -> float:
        """Energy (J, >= 0) the chords' dissipation removes over a step from u0 to u1 (n_dof,):
        ``q_d . d = sum xi EA/l0 (l_{n+1} - l_n)^2`` of the energy identity (plus
        ``chi dv^T M dv`` for :class:`EnergyDecayingVelocityMidPoint`)."""
        total = 0.0
        for (_, X, _, EA), a, b in zip(self._chords, self._chord_ends(u0), self._chord_ends(u1)):
            dim = X.shape[2]
            l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)                          # (n_ch,)
            l_a, l_b = (np.linalg.norm(X[:, 1] + x[:, dim:] - X[:, 0] - x[:, :dim], axis=1) for x in (a, b))
            total += self.xi * float(np.sum(EA / l0 * (l_b - l_a) ** 2))
        return total

    def residual(self, s: State, dt: float, u1: np.ndarray, tangent: bool = True) -> StepResidual:
        asm = self.asm
        if not self.chi:
            # the conserving scheme's step (its rotations, cubic masses, damping) plus the chords' q_d
            res = super().residual(s, dt, u1, tangent)
            res.g = res.g + self._dissipative_force(s.u, u1, res.jacobian_data)
            return res
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
    conserved) and damps every accelerated motion, rigid ones included, at first order.

    Supports truss and Beam2D groups with lumped or consistent masses, point masses, loads,
    prescribed motions and joints. Refused with a ModelError: spatial rotations (its kinematics
    would need their own rule on SO(3) and the rotary inertia's discrete balance), configuration-
    dependent masses (the cubic mass's director form, modal bodies) and other element groups."""

    name = "energy-decaying-velocity"
    velocity_dissipation = True

    def __init__(self, assembly: Assembly, rho_inf: float = 0.8) -> None:
        _refuse_spatial_rotations(assembly, self.name)
        if assembly.configuration_masses:
            group = assembly.groups[assembly.configuration_masses[0][0]]
            raise ModelError(f"scheme {self.name!r}: element group {group.name!r} has a configuration-dependent "
                             "mass (cubic, or a modal body's); the velocity-dissipative kinematics take lumped or "
                             "consistent masses only; use 'energy-decaying' or 'generalized-alpha'")
        super().__init__(assembly, rho_inf)


#: the schemes of this module by name, with their keyword (added to
#: :data:`flexmb.integrators.schemes.SCHEMES` by :mod:`flexmb.integrators.time_stepping`)
DISSIPATIVE_SCHEMES = {"generalized-alpha": GeneralizedAlpha, "energy-decaying": EnergyDecayingMidPoint,
                       "energy-decaying-velocity": EnergyDecayingVelocityMidPoint}
