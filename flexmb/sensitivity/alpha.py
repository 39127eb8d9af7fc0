"""Direct differentiation of generalized-alpha and Newmark runs without joints (issue 33, piece P9;
used by :func:`~flexmb.sensitivity.transient_sensitivity`).

A step of :class:`~flexmb.integrators.dissipative.GeneralizedAlpha` (or of trapezoidal
:class:`~flexmb.integrators.schemes.Newmark`: alpha_m = alpha_f = 0, beta = 1/4, gamma = 1/2) from
the state ``x_n = (u_n, v_n, a_n)`` solves ``g(u_{n+1}; x_n, p)[free] = 0`` for the free DOFs of
u_{n+1}, with the Newmark kinematics and the end-point balance of the scheme::

    a_{n+1} = (u_{n+1} - u_n - dt v_n - dt^2 (1/2 - beta) a_n) / (beta dt^2)
    v_{n+1} = v_n + dt ((1 - gamma) a_n + gamma a_{n+1}),      m = w a_{n+1} + c a_n
    g = E(u_{n+1}, v_{n+1}, m) + alpha_hat (E(u_n, v_n, a_n) - r_n)
    E(u, v, a) = q(u) - f(t, u) + M a + f_c(u, v, a) + q_d(u, v)

(w = (1 - alpha_m) / (1 - alpha_f), c = (alpha_m - alpha_f) / (1 - alpha_f), alpha_hat = alpha_f /
(1 - alpha_f); f_c the configuration-dependent (cubic) masses' Lagrange inertia, q_d the damping, f
the loads and the weight; ``GeneralizedAlpha._start_terms`` is alpha_hat (E_n - r_n)). The start
reaction r_n is zero on the free rows, so the free equations read the start through (u_n, v_n, a_n)
only. With the partial derivatives ``E_u`` (the tangent at fixed rates), ``E_v`` and ``E_a = M +
df_c/da`` of the balance, each the assembly's tangent along a scheme's kinematics with unit rate
factors (``df_c/du + dv_du df_c/dv + da_du df_c/da`` is linear in dv_du, da_du), the step's Jacobian
is ``A = E_u(1) + gamma / (beta dt) E_v(1) + w / (beta dt^2) E_a(1)`` and its start derivatives are
(free rows and columns; (1) at the step's end (u_{n+1}, v_{n+1}, m), (n) at its start)::

    g_u = alpha_hat E_u(n) - gamma / (beta dt) E_v(1) - w / (beta dt^2) E_a(1)
    g_v = (1 - gamma / beta) E_v(1) - w / (beta dt) E_a(1) + alpha_hat E_v(n)
    g_a = dt (1 - gamma / (2 beta)) E_v(1) + (c - w (1/2 - beta) / beta) E_a(1) + alpha_hat E_a(n)

all exact (element tangents and the mass; no difference quotient). E_v and E_a do not depend on the
acceleration, so the end's are the next step's start's. Every parameter kind of
:mod:`flexmb.sensitivity.parameters` enters E linearly, so ``dg/dp = E_p(u_{n+1}, v_{n+1}, m) +
alpha_hat E_p(u_n, v_n, a_n)`` with ``E_p`` the balance of the part of the model p carries (the
parameter's pieces: internal and damping forces of the group copies, their mass times a, the cubic
masses' inertia, minus their weight) -- :func:`balance_derivative`. The derivative of the converged
step (implicit-function theorem; columns ``U, V, Ac`` = du/dp, dv/dp, da/dp, (n_dof, n_p))::

    A U_{n+1}[free] = -(g_u U_n + g_v V_n + g_a Ac_n + g_p)[free],     U_{n+1}[prescribed] = 0
    Ac_{n+1} = (U_{n+1} - U_n - dt V_n - dt^2 (1/2 - beta) Ac_n) / (beta dt^2)
    V_{n+1} = V_n + dt ((1 - gamma) Ac_n + gamma Ac_{n+1})

The prescribed DOFs' values follow drives that depend on no parameter and their start acceleration
is zero (``Newmark.initial_state``), so their U, V and Ac stay zero, and the columns of the
prescribed DOFs drop out of the products. The start acceleration is the consistent one,
``M(u_0) a_0 = -(E(u_0, v_0, 0))`` on the free DOFs, so ``M(u_0) Ac_0 = -E_p(u_0, v_0, a_0)`` (zero
at massless DOFs, where the scheme sets a_0 = 0); u_0 and v_0 do not depend on p.

Cost per step: the step's Jacobian at its solution and its factorisation
(:func:`~flexmb.sensitivity.transient.step_jacobian`), E_u at the start (one tangent call, and one
inertia or damping tangent call with cubic masses or dampers; not for Newmark), E_v and E_a at the end
(three inertia tangent calls with cubic masses, two damping tangent calls with dampers; the next step
reuses them), one balance evaluation of each parameter's part at both ends, three sparse products and
a solve with n_p right-hand sides. Measured (CPU, one BLAS thread, a loaded machine): slider-crank A,
40 steps, 0.27 ms a step for three parameters (0.21 ms for one) against the forward run's 0.05 ms
(compiled step loop) and 0.07 ms (Python step); the damped truss of the tests 1.0 ms against 0.61 ms,
the damped cubic-mass cantilever 5.0 ms against 3.6 ms.

Not covered (refused with a :class:`~flexmb.checks.ModelError` naming the reason): joints and ties;
spatial (3D) rotations (the Lie-group kinematics in the body frame: piece P9b); derivatives of the
support reactions (the start terms' prescribed rows); the adjoint.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from flexmb.assembly import Assembly
from flexmb.checks import ModelError
from flexmb.integrators.dissipative import GeneralizedAlpha
from flexmb.integrators.schemes import Newmark, State
from flexmb.sensitivity.midpoint import DirectSensitivities, _solves
from flexmb.sensitivity.parameters import TransientParameter
from flexmb.sensitivity.transient import RecordedRun, step_jacobian

#: the schemes whose discrete map this module differentiates (exact types)
SCHEMES = (GeneralizedAlpha, Newmark)


@dataclass
class AlphaSensitivities(DirectSensitivities):
    """:class:`~flexmb.sensitivity.midpoint.DirectSensitivities` of a generalized-alpha or Newmark
    run, with the scheme's acceleration-like variable ``a`` (N+1, n_dof) (m/s^2, rad/s^2; the
    state's ``a``) and its derivatives ``da`` (N+1, n_dof, n_p)."""

    a: np.ndarray | None = None
    da: np.ndarray | None = None


def coefficients(stepper: Newmark) -> tuple[float, float, float, float, float]:
    """(beta, gamma, w, c, alpha_hat) of the scheme's step (module docstring); Newmark's are
    (1/4, 1/2, 1, 0, 0)."""
    if type(stepper) is Newmark:
        return 0.25, 0.5, 1.0, 0.0, 0.0
    p = stepper.parameters
    return (p.beta, p.gamma, (1.0 - p.alpha_m) / (1.0 - p.alpha_f), (p.alpha_m - p.alpha_f) / (1.0 - p.alpha_f),
            p.alpha_f / (1.0 - p.alpha_f))


def balance_stiffness(asm: Assembly, u: np.ndarray, v: np.ndarray, a: np.ndarray, t: float) -> np.ndarray:
    """E_u, the derivative of the end-point balance E(u, v, a) at time t (s) with respect to u at fixed
    rates (module docstring), data (nnz,) of the free-free pattern (N/m, N/rad, N m/m, N m/rad)."""
    asm.set_time(t)
    E_u = asm.force_and_tangent(u)[1]
    if asm.configuration_loads:
        E_u -= asm.load_stiffness_data(u, t)
    if asm.configuration_masses:
        E_u += asm.end_point_inertia(u, v, a, 0.0, 0.0, True)[1]
    if asm.damped_groups:
        asm.damping_force(u, v, 0.0, E_u)
    return E_u


def balance_rates(asm: Assembly, u: np.ndarray, v: np.ndarray, a: np.ndarray, t: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(E_v, E_a), the derivatives of the end-point balance E(u, v, a) at time t (s) with respect to v
    and a (module docstring), data (nnz,) of the free-free pattern (N s/m, kg; N m s/rad, kg m^2 at
    rotations). Neither depends on a."""
    E_v, E_a = np.zeros(asm.nnz), asm.mass_data.copy()
    asm.set_time(t)
    if asm.configuration_masses:
        # the tangent along kinematics is linear in the rate factors: unit factors give the partials
        base = asm.end_point_inertia(u, v, a, 0.0, 0.0, True)[1]
        E_v += asm.end_point_inertia(u, v, a, 1.0, 0.0, True)[1] - base
        E_a += asm.end_point_inertia(u, v, a, 0.0, 1.0, True)[1] - base
    if asm.damped_groups:
        base, unit = np.zeros(asm.nnz), np.zeros(asm.nnz)
        asm.damping_force(u, v, 0.0, base)
        asm.damping_force(u, v, 1.0, unit)
        E_v += unit - base
    return E_v, E_a


def balance_derivative(parameter: TransientParameter, asm: Assembly, u: np.ndarray, v: np.ndarray, a: np.ndarray
                       ) -> np.ndarray:
    """dE/dp (n_dof,) of the end-point balance ``E(u, v, a) = q - f + M a + f_c + q_d`` at the state
    (u, v, a) (n_dof,) each, at fixed state: the balance of the part of the model the parameter
    carries per unit p (module docstring). N (N m at rotations) per unit of p; the prescribed rows
    hold the reaction's share."""
    gravity = np.zeros(asm.n_dof)
    gravity[asm.dofs.translations()] = asm.model.gravity[None, :]
    weighed = bool(np.any(asm.model.gravity))
    out = np.zeros(asm.n_dof)
    for piece in parameter._part(asm):
        ed = piece.ed
        share = np.zeros(ed.shape)
        if piece.stiffness:
            share += piece.group.internal_force(piece.X, u[ed])
        if piece.damping:
            share += piece.group.damping_force(piece.X, u[ed], v[ed], 0.0, False)[0]
        if piece.inertia:
            if piece.rotary is not None:
                raise ModelError(f"parameter {parameter.name!r}: spatial rotary inertia is not covered by the "
                                 "generalized-alpha derivatives yet")
            share += np.einsum("eij,ej->ei", piece.mass, a[ed] - gravity[ed])
            if piece.cubic is not None:
                share += piece.cubic.end_point_inertia(u[ed], v[ed], a[ed], 0.0, 0.0, False)[0]
                if weighed:
                    share -= piece.cubic.gravity_force(u[ed], asm.model.gravity)[0]
        np.add.at(out, ed, share)
    return out


class StepDerivative:
    """The derivative of generalized-alpha or Newmark steps of one assembly (module docstring)."""

    def __init__(self, asm: Assembly, parameters: Sequence[TransientParameter]) -> None:
        check_model(asm)
        self.asm = asm
        self.parameters = list(parameters)
        #: (u, v, E_v, E_a) of the last step's end: the next step's start rates' partials
        self._end: tuple | None = None
        #: a free-free matrix on the assembly's pattern whose data the products replace (building a
        #: scipy.sparse matrix per product costs as much as a small model's step)
        self._matrix = asm.free_matrix(np.zeros(asm.nnz))

    def _product(self, data: np.ndarray, X: np.ndarray) -> np.ndarray:
        """The free-free matrix of ``data`` (nnz,) times X (n_free, n_p)."""
        self._matrix.data = data
        return self._matrix @ X

    def _rates(self, u: np.ndarray, v: np.ndarray, a: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
        """E_v, E_a (nnz,) at (u, v), kept for the next step's start (they do not depend on a)."""
        kept = self._end
        if kept is not None and np.array_equal(kept[0], u) and np.array_equal(kept[1], v):
            return kept[2], kept[3]
        E_v, E_a = balance_rates(self.asm, u, v, a, t)
        self._end = (u.copy(), v.copy(), E_v, E_a)
        return E_v, E_a

    def __call__(self, stepper: Newmark, start: State, dt: float, end: State, U: np.ndarray, V: np.ndarray,
                 Ac: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(U, V, Ac) at the end of the Newton solve of size dt (s) from ``start`` to ``end``, given
        them at its start, each (n_dof, n_p)."""
        asm = self.asm
        free = asm.dofs.free
        beta, gamma, w, c, ah = coefficients(stepper)
        jac = step_jacobian(stepper, start, dt, end)
        mixed = w * end.a + c * start.a
        Ev0, Ea0 = self._rates(start.u, start.v, start.a, start.t) if ah else (None, None)
        Ev1, Ea1 = self._rates(end.u, end.v, mixed, start.t + dt)
        g_u = -gamma / (beta * dt) * Ev1 - w / (beta * dt**2) * Ea1
        g_v = (1.0 - gamma / beta) * Ev1 - w / (beta * dt) * Ea1
        g_a = dt * (1.0 - 0.5 * gamma / beta) * Ev1 + (c - w * (0.5 - beta) / beta) * Ea1
        if ah:
            g_u = g_u + ah * balance_stiffness(asm, start.u, start.v, start.a, start.t)
            g_v = g_v + ah * Ev0
            g_a = g_a + ah * Ea0
        rhs = self._product(g_u, U[free]) + self._product(g_v, V[free]) + self._product(g_a, Ac[free])
        for j, p in enumerate(self.parameters):
            g_p = balance_derivative(p, asm, end.u, end.v, mixed)
            if ah:
                g_p += ah * balance_derivative(p, asm, start.u, start.v, start.a)
            rhs[:, j] += g_p[free]
        U1 = np.zeros_like(U)
        if free.size:
            U1[free] = -jac.solve(rhs)
        A1 = (U1 - U - dt * V - dt**2 * (0.5 - beta) * Ac) / (beta * dt**2)
        V1 = V + dt * ((1.0 - gamma) * Ac + gamma * A1)
        return U1, V1, A1

    def start(self, s: State) -> np.ndarray:
        """d a_0/dp (n_dof, n_p) of the consistent start acceleration (module docstring): zero at the
        prescribed and the massless DOFs."""
        import scipy.sparse.linalg as spla          # here only, as in Newmark.initial_state

        asm = self.asm
        free = asm.dofs.free
        out = np.zeros((asm.n_dof, len(self.parameters)))
        if not free.size:
            return out
        data = asm.mass_data
        if asm.configuration_masses:
            data = data + asm.configuration_mass_data(s.u)
        M = asm.free_matrix(data)
        # Newmark.initial_state's placeholder at massless DOFs (a_0 = 0 there whatever p)
        massless = np.bincount(M.indices, np.abs(M.data), M.shape[0]) == 0.0
        if massless.any():
            M = M + sp.diags(massless * 1.0)
        asm.set_time(s.t)
        rhs = np.stack([-balance_derivative(p, asm, s.u, s.v, s.a)[free] for p in self.parameters], axis=1)
        rhs[massless] = 0.0
        out[free] = spla.splu(sp.csc_matrix(M)).solve(rhs)
        return out


def check_model(asm: Assembly, scheme: object = None) -> None:
    """ModelError unless this module covers the model (and the scheme object, if given): the
    generalized-alpha or Newmark scheme, no joints or ties, no spatial rotations."""
    if scheme is not None and type(scheme) not in SCHEMES:
        raise ModelError(f"generalized-alpha sensitivities: scheme {getattr(scheme, 'name', type(scheme).__name__)!r} "
                         f"is not one of {', '.join(s.name for s in SCHEMES)}")
    if asm.constraints is not None:
        joints = [j.name for j in asm.model.joints]
        where = f"joint {joints[0]!r}" if joints else "the model's ties"
        raise ModelError(f"generalized-alpha sensitivities: {where}: models with joints or ties are not covered yet "
                         "(their multipliers' derivatives)")
    if asm.rotation_dofs.size:
        node = int(asm.rotation_nodes[0])
        raise ModelError(f"generalized-alpha sensitivities: node {node} has spatial (3D) rotations, which are not "
                         "covered yet (the Lie-group kinematics in the body frame); planar models only")


def direct_sensitivities(run: RecordedRun, parameters: Sequence[TransientParameter]) -> AlphaSensitivities:
    """The derivatives of every state of a recorded generalized-alpha or Newmark run
    (:func:`~flexmb.sensitivity.transient.record`, without joints and spatial rotations) with respect
    to the parameters, by direct differentiation of each step's converged discrete map (module
    docstring): ``du_n/dp``, ``dv_n/dp``, ``da_n/dp`` (N+1, n_dof, n_p)."""
    stepper, asm = run.stepper, run.asm
    check_model(asm, stepper)
    parameters = list(parameters)
    if not parameters:
        raise ModelError("generalized-alpha sensitivities: give at least one parameter")
    for p in parameters:
        if not isinstance(p, TransientParameter):
            raise ModelError("generalized-alpha sensitivities: expected flexmb.sensitivity.parameters parameters, "
                             f"got {p!r}")
    derivative = StepDerivative(asm, parameters)
    n, n_p, N = asm.n_dof, len(parameters), len(run.steps)
    t, u, v, a = np.zeros(N + 1), np.zeros((N + 1, n)), np.zeros((N + 1, n)), np.zeros((N + 1, n))
    du, dv, da = (np.zeros((N + 1, n, n_p)) for _ in range(3))
    state = run.states[0]
    U, V, Ac = np.zeros((n, n_p)), np.zeros((n, n_p)), derivative.start(state)
    for k in range(N + 1):
        if k:
            for start, dt, end in _solves(run, k - 1, state):
                U, V, Ac = derivative(stepper, start, dt, end, U, V, Ac)
            state = end
        t[k], u[k], v[k], a[k], du[k], dv[k], da[k] = state.t, state.u, state.v, state.a, U, V, Ac
    return AlphaSensitivities(parameters, asm, t, u, v, du, dv, a=a, da=da)
