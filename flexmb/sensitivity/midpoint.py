"""Direct differentiation of mid-point runs, joints included (issue 33, pieces P5 and P6;
used by :func:`~flexmb.sensitivity.transient_sensitivity`).

A mid-point step (:class:`~flexmb.integrators.schemes.MidPoint`) from the state ``x_n = (u_n, v_n,
s_n)`` (displacements, velocities, and at the rotations of cubic-mass beam nodes D the director
stretch rates s_n, ``State.stretch``) solves ``g(u_n, v_n, s_n, u_{n+1}; p)[free] = 0`` for the free
DOFs of u_{n+1}, and then sets the end rates explicitly (``MidPoint._motion``; the step reads
nothing else of its start: the acceleration a_n is an output)::

    v_{n+1} = 2 (u_{n+1} - u_n) / dt - v_n                           (rows off D)
    omega_{n+1} = 2/dt sin dth - omega_n cos dth + s_n sin dth        (at D, dth = u_{n+1} - u_n there)
    s_{n+1} = 2/dt (1 - cos dth) - s_n cos dth - omega_n sin dth

(:func:`~flexmb.elements.hermite_mass2d.reference_director_rates`; v = omega at D). The derivative of
the converged step with respect to a design parameter p (implicit-function theorem, plan section
1.2) is, for the columns ``U = du/dp``, ``V = dv/dp``, ``S = ds/dp`` (n_dof, n_p) of all parameters
at once::

    A U_{n+1}[free] = -(g_u U_n + g_v V_n + g_s S_n + g_p)[free],     U_{n+1}[prescribed] = 0
    V_{n+1} = 2/dt (U_{n+1} - U_n) - V_n                              (rows off D)
    V_{n+1}[D] = d omega_{n+1}/d dth  dU - cos dth V_n + sin dth S_n      (dU = U_{n+1} - U_n at D)
    S_{n+1}[D] = ((2/dt + s_n) sin dth - omega_n cos dth) dU - sin dth V_n - cos dth S_n

with ``A = dg_free/du_{n+1,free}`` the step's Jacobian at its solution, re-evaluated and factorised
once per step (:func:`~flexmb.sensitivity.transient.step_jacobian`; Newton's last matrix is stale
under modified Newton), the start derivatives g_u of the force terms
(:class:`~flexmb.sensitivity.matrices.StartDerivatives`) and of the inertia terms with g_v and g_s
(:class:`~flexmb.sensitivity.inertia.InertiaDerivatives`), and ``g_p`` of each parameter
(:meth:`~flexmb.sensitivity.parameters.TransientParameter.residual_derivative`). The kinematics do
not depend on p (no parameter enters the end-rate rules), and the prescribed DOFs' values follow
their drives, which depend on no parameter yet: their U is zero, and their V follows the rule above
as their velocities do. The start state does not depend on p (dx_0/dp = 0: initial conditions are
not parameters yet). No matrix beyond A is assembled: the start derivatives act as element blocks.

**Joints** (planar models). The step then solves the augmented system ``R = [g + G_m^T
lambda_{n+1}; Phi(u_{n+1}, t_{n+1})] = 0`` for ``y = (u_{n+1}[free], lambda_{n+1})``
(:mod:`flexmb.sensitivity.transient`: ``A = dR/dy`` in these physical unknowns, its scalings
undone by :meth:`~flexmb.sensitivity.transient.StepJacobian.solve`), and the recursion is, with
``L = dlambda_{n+1}/dp`` (n_c, n_p)::

    A [U_{n+1}[free]; L] = -[(g_u U_n + g_v V_n + g_s S_n + g_p + J_u U_n + J_p)[free]; Phi_p]

with ``J_u = d(G_m^T lambda_{n+1})/du_n`` (the reversed step's tangent,
:meth:`~flexmb.sensitivity.constraints.ConstraintStartDerivatives.force`; ``dPhi/du_n = 0``) and, of
a joint drive's amplitude (:class:`~flexmb.sensitivity.constraints.DriveAmplitude`), ``Phi_p =
dPhi/dp`` at the step's end and ``J_p = d(G_m^T lambda)/dp`` (zero for planar drives: a right-hand
side). The residual does not depend on the start's multipliers (``dR/dlambda_n = 0``), so the
multipliers' derivatives are an output of each solve, recorded per state (a state's multipliers
are those of the solve that ended in it; the start's are zero and do not depend on p): responses
on multipliers and joint reactions have gradients. The start state is given (u0, v0), so it does
not depend on a drive's amplitude either: the derivative is that of the run from that state.

A composed mid-point step (:class:`~flexmb.integrators.schemes.ComposedMidPoint`) is five such steps
of (p, p, 1 - 4p, p, p) dt, the third backward, and a cut-back step its halves: the recursion runs
through each Newton solve (:func:`~flexmb.sensitivity.transient.sub_steps`) in turn, each with its
own factorisation, so both are covered by the same code.

:func:`direct_sensitivities` runs the recursion over a run recorded by
:func:`~flexmb.sensitivity.transient.record` and returns the states and their derivatives at every step
(:class:`DirectSensitivities`); :meth:`DirectSensitivities.gradient` turns a response of
:mod:`flexmb.sensitivity.responses` (evaluated on :meth:`DirectSensitivities.trajectory`) into dF/dp.

Cost per step: one residual with its tangent and one factorisation (A at the solution), one swapped
tangent call per element group (g_u of the forces), the inertia's start derivatives (cubic masses:
closed-form rate columns and one reversed tangent), one residual-sized evaluation
per parameter (g_p) and a solve with n_p right-hand sides; with joints, one evaluation of the
joints' terms for the reversed step (J_u) and of each drive amplitude's rows. Steps of one Newton
solve whose end state the run kept are not recomputed; the others are replayed from the state
before (bit for bit as the run took them).

**Spatial (3D) rotations** (rigid bodies, Beam3D, Shell3, the frames of 3D modal bodies; joints
too). There the derivative of the state is a spin, ``dR/dp = hat(U) R`` with U (3,) rad per unit
of p at the node's three rotation rows of U, and V there is d omega/dp of the spatial angular
velocity (:mod:`flexmb.sensitivity.rotations`: the convention, and how responses at points read
it). The step's unknown at a rotating node is its Cayley parameters w (``R_{n+1} = cay(w) R_n``),
the Jacobian A is w.r.t. w at fixed R_n and the start derivatives are w.r.t. spins of R_n at fixed
R_{n+1}, so the solve above gives the changes z of w, and the end's spins and angular velocities
are ``U_{n+1} = T_c(w) z`` and ``V_{n+1} = (d omega_{n+1}/dw) (z + (dw/dtheta_n) U_n) + (d
omega_{n+1}/d omega_n) V_n`` (:class:`~flexmb.sensitivity.rotations.StepRotations`; ordinary nodes
and modal frames have their own end-rate rules). A node's three rotations must be all free or all
prescribed (a spin mixes them).

Not covered (refused with a :class:`~flexmb.checks.ModelError` naming the reason): ties of nodes
to modal bodies (their rows are not in the joints' start derivatives); nodes with some of their
spatial rotations prescribed; the
energy-decaying and the dissipative schemes (pieces P9, P10); the amplitude of a prescribed motion
(its DOF's end value enters g through the tangent's prescribed columns, which the step Jacobian
does not hold) and initial conditions as parameters (P11). The adjoint:
:mod:`flexmb.sensitivity.adjoint`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from flexmb.assembly import Assembly
from flexmb.checks import ModelError
from flexmb.elements.hermite_mass2d import director_step
from flexmb.integrators.schemes import ComposedMidPoint, MidPoint, State
from flexmb.sensitivity.constraints import ConstraintStartDerivatives, DriveAmplitude
from flexmb.sensitivity.inertia import InertiaDerivatives, InertiaStart
from flexmb.sensitivity.matrices import StartDerivatives, StartMatrix
from flexmb.sensitivity.parameters import TransientParameter
from flexmb.sensitivity.responses import ResponseValue, Trajectory
from flexmb.sensitivity.rotations import StepRotations
from flexmb.sensitivity.transient import RecordedRun, Step, step_jacobian, sub_steps

#: the schemes whose discrete map this module differentiates (exact types: the energy-decaying
#: schemes derive from MidPoint but add the chords' dissipative force and their own end rates)
SCHEMES = (MidPoint, ComposedMidPoint)


@dataclass
class DirectSensitivities:
    """A run's states at every step n = 0 .. N and their derivatives with respect to the parameters.

    ``t`` (N+1,) s; ``u``, ``v`` (N+1, n_dof) in m, rad and m/s, rad/s; ``stretch`` (N+1, n_dof) the
    director stretch rates (1/s; None without cubic-mass nodes); ``multipliers`` (N+1, n_c) the
    joints' multipliers of the solve that ended in each state (N, N m; zero at the start; None
    without joints); ``du``, ``dv``, ``dstretch`` (N+1, n_dof, n_p) and ``dmultipliers`` (N+1, n_c,
    n_p): their derivatives, in the state's unit per unit of each parameter (``parameters[j].unit``;
    spins, rad, at spatial rotations: module docstring);
    ``asm`` the run's assembly."""

    parameters: list[TransientParameter | DriveAmplitude]
    asm: Assembly
    t: np.ndarray
    u: np.ndarray
    v: np.ndarray
    du: np.ndarray
    dv: np.ndarray
    stretch: np.ndarray | None = None
    dstretch: np.ndarray | None = None
    multipliers: np.ndarray | None = None
    dmultipliers: np.ndarray | None = None

    def trajectory(self) -> Trajectory:
        """The states as a :class:`~flexmb.sensitivity.responses.Trajectory`, for the response
        functionals whose :meth:`gradient` is wanted."""
        return Trajectory(self.t, self.u, self.v, self.asm, self.stretch, self.multipliers)

    def gradient(self, response: ResponseValue) -> np.ndarray:
        """dF/dp (n_p,) of a response evaluated on :meth:`trajectory`: its state derivatives times the
        states' derivatives, ``sum_n dF/dx_n . dx_n/dp``, plus its explicit partials at fixed states
        (``response.parameter_gradient``, when it was evaluated with these parameters). Unit: the
        response's per unit of each parameter."""
        n_p = len(self.parameters)
        series = {"u": self.du, "v": self.dv, "stretch": self.dstretch, "multipliers": self.dmultipliers}
        grad = response.gradient
        if grad.steps.size and (grad.steps.min() < 0 or grad.steps.max() >= self.t.size):
            raise ModelError(f"gradient: the response names step {int(grad.steps.max())}, the run has steps "
                             f"0 .. {self.t.size - 1}; evaluate it on this run's trajectory()")
        out = np.zeros(n_p)
        for name, (dofs, values) in grad.parts.items():
            if series.get(name) is None:
                raise ModelError(f"gradient: the response depends on the run's {name}, which this run has no "
                                 "derivatives of (multipliers: the model has no joints; stretch rates: it has no "
                                 "cubic-mass nodes)")
            out += np.einsum("mk,mkp->p", values, series[name][grad.steps][:, dofs])
        explicit = np.asarray(response.parameter_gradient, dtype=float)
        if explicit.size:
            if explicit.size != n_p:
                raise ModelError(f"gradient: the response holds explicit partials of {explicit.size} parameters, "
                                 f"the sensitivities are of {n_p}; evaluate it with the same parameters")
            out += explicit
        return out


class StepDerivative:
    """The derivative of mid-point steps of one assembly (module docstring): the start
    derivatives' evaluators, kept for the run."""

    def __init__(self, asm: Assembly, parameters: Sequence[TransientParameter | DriveAmplitude]) -> None:
        check_model(asm)
        self.asm = asm
        self.parameters = list(parameters)
        self.forces = StartDerivatives(asm)
        self.inertia = InertiaDerivatives(asm)
        self.joints = None if asm.constraints is None else ConstraintStartDerivatives(asm)
        self.rotations = StepRotations(asm) if asm.rotation_dofs.size else None

    def start_matrix(self, start: State, dt: float, end: State) -> tuple[StartMatrix, InertiaStart]:
        """The start derivatives of the solve of dt (s) from ``start`` to ``end``: ``(g_u + J_u,
        inertia)`` -- the force and joint terms' d/du_n plus the inertia's, and the inertia's own
        (:class:`~flexmb.sensitivity.inertia.InertiaDerivatives` result: its ``v`` and ``stretch``)."""
        u0, u1 = start.u, end.u
        inertia = self.inertia.residual(u0, u1, start.v, start.stretch, dt)
        forces = self.forces.residual(u0, u1, dt)
        if self.joints is not None:
            forces = forces + self.joints.force(u0, u1, end.lam, start.t, start.t + dt)
        return forces + inertia.u, inertia

    def parameter_terms(self, stepper: MidPoint, start: State, dt: float, end: State,
                        p: TransientParameter | DriveAmplitude) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(dg/dp (n_dof,) with the joint force's d(G_m^T lambda)/dp, dPhi/dp (n_c,)) of one
        parameter for the solve of dt (s) from ``start`` to ``end``; None for a zero part."""
        u1 = end.u
        if isinstance(p, DriveAmplitude):
            asm, t1 = self.asm, start.t + dt
            force = p.force_derivative(asm, u1, t1, end.lam, u0=start.u, d=asm.cayley_increment(start.u, u1),
                                       t0=start.t)
            return (force if force.any() else None), p.constraint_derivative(asm, u1, t1)
        return p.residual_derivative(stepper, start, dt, u1), None

    def __call__(self, stepper: MidPoint, start: State, dt: float, end: State, U: np.ndarray, V: np.ndarray,
                 S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(U, V, S, L) at the end of the Newton solve of size dt (s) from ``start`` to ``end``, given
        (U, V, S) at its start, each (n_dof, n_p) (S zero off the director DOFs, and without them);
        L (n_c, n_p) the derivatives of the solve's multipliers ((0, n_p) without joints)."""
        asm = self.asm
        free, dd = asm.dofs.free, asm.director_dofs
        u0, u1 = start.u, end.u
        n_c = end.lam.size if asm.constraints is not None else 0
        jac = step_jacobian(stepper, start, dt, end)
        D, inertia = self.start_matrix(start, dt, end)
        rhs = D.matvec(U) + inertia.v.matvec(V)
        if dd.size:
            rhs += inertia.stretch.matvec(S)
        rows = np.zeros((n_c, U.shape[1]))
        for j, p in enumerate(self.parameters):
            g_p, phi_p = self.parameter_terms(stepper, start, dt, end, p)
            if g_p is not None:
                rhs[:, j] += g_p
            if phi_p is not None:
                rows[:, j] = phi_p
        U1 = np.zeros_like(U)
        L1 = np.zeros((n_c, U.shape[1]))
        if free.size or n_c:
            Y = -jac.solve(np.concatenate([rhs[free], rows]))
            U1[free], L1 = Y[:free.size], Y[free.size:]
        V1 = 2.0 / dt * (U1 - U) - V
        if self.rotations is not None:
            # the solve's changes of the Cayley parameters -> end spins and angular velocities
            rd = asm.rotation_dofs
            U1[rd], V1[rd] = self.rotations.forward(self.rotations.maps(u0, u1, start.v, dt), U1[rd], U[rd], V[rd])
        S1 = np.zeros_like(S)
        if dd.size:
            dth, w0, s0 = u1[dd] - u0[dd], start.v[dd], start.stretch[dd]
            c, s = np.cos(dth)[:, None], np.sin(dth)[:, None]
            dw_dth = director_step(dth, w0, s0, asm.director_inertia, dt)[2][:, None]
            ds_dth = ((2.0 / dt + s0) * np.sin(dth) - w0 * np.cos(dth))[:, None]
            dU = U1[dd] - U[dd]
            V1[dd] = dw_dth * dU - c * V[dd] + s * S[dd]
            S1[dd] = ds_dth * dU - s * V[dd] - c * S[dd]
        return U1, V1, S1, L1


def check_model(asm: Assembly, scheme: object = None) -> None:
    """ModelError unless the direct differentiation of this module covers the model (and the scheme
    object, if given): the mid-point or composed mid-point scheme, no ties to modal bodies, no node
    with some of its spatial rotations prescribed and some free (module docstring)."""
    if scheme is not None and type(scheme) not in SCHEMES:
        raise ModelError(f"direct sensitivities: scheme {getattr(scheme, 'name', type(scheme).__name__)!r} is not "
                         f"covered yet; this version differentiates {', '.join(s.name for s in SCHEMES)} runs")
    if asm.constraints is not None and asm.constraints.ties:
        raise ModelError(f"direct sensitivities: the {asm.constraints.ties[0].label}: ties of nodes to modal bodies "
                         "are not covered yet (their rows are not in the joints' start derivatives)")
    rd = asm.rotation_dofs
    if rd.size:
        # a node's spin is one 3-vector: its rotations are all free or all prescribed
        free = asm.dofs.free_position[rd] >= 0
        mixed = free.any(axis=1) & ~free.all(axis=1)
        if mixed.any():
            node = int(asm.rotation_nodes[np.flatnonzero(mixed)[0]])
            raise ModelError(f"direct sensitivities: node {node} has some of its spatial rotations prescribed and "
                             "some free; the derivative in spins needs all three free or all three prescribed")


def check_parameters(asm: Assembly, parameters: Sequence, who: str) -> list:
    """The parameters as a list; ModelError (``who`` names the caller) for none, for objects that
    are not parameters, and for drive amplitudes this module does not differentiate (a prescribed
    motion's: module docstring)."""
    parameters = list(parameters)
    if not parameters:
        raise ModelError(f"{who}: give at least one parameter")
    for p in parameters:
        if isinstance(p, DriveAmplitude):
            if p.joint is None:
                raise ModelError(f"{who}: parameter {p.name!r}: the amplitude of a prescribed motion is not covered "
                                 "yet (its DOF's end value enters the residual through the tangent's prescribed "
                                 "columns); a joint drive's amplitude is")
            p._joint_index(asm)                      # the driven joint must be the model's
        elif not isinstance(p, TransientParameter):
            raise ModelError(f"{who}: expected flexmb.sensitivity.parameters parameters or drive amplitudes, "
                             f"got {p!r}")
    return parameters


def direct_sensitivities(run: RecordedRun, parameters: Sequence[TransientParameter | DriveAmplitude]
                         ) -> DirectSensitivities:
    """The derivatives of every state of a recorded run (:func:`~flexmb.sensitivity.transient.record`,
    mid-point or composed mid-point, joints and spatial rotations included) with respect to
    the parameters, by direct differentiation of each step's converged discrete map (module
    docstring): ``du_n/dp``, ``dv_n/dp`` (and the director stretch rates'), (N+1, n_dof, n_p), and
    of the joints' multipliers, (N+1, n_c, n_p)."""
    stepper, asm = run.stepper, run.asm
    check_model(asm, stepper)
    parameters = check_parameters(asm, parameters, "direct sensitivities")
    derivative = StepDerivative(asm, parameters)
    n, n_p, N = asm.n_dof, len(parameters), len(run.steps)
    directors = bool(asm.director_dofs.size)
    t, u, v = np.zeros(N + 1), np.zeros((N + 1, n)), np.zeros((N + 1, n))
    du, dv = np.zeros((N + 1, n, n_p)), np.zeros((N + 1, n, n_p))
    stretch = np.zeros((N + 1, n)) if directors else None
    dstretch = np.zeros((N + 1, n, n_p)) if directors else None
    n_c = asm.constraints.n if asm.constraints is not None else 0
    lam = np.zeros((N + 1, n_c)) if n_c else None
    dlam = np.zeros((N + 1, n_c, n_p)) if n_c else None
    U, V, S = np.zeros((n, n_p)), np.zeros((n, n_p)), np.zeros((n, n_p))
    L = np.zeros((n_c, n_p))
    state = run.states[0]
    for k in range(N + 1):
        if k:
            for start, dt, end in _solves(run, k - 1, state):
                U, V, S, L = derivative(stepper, start, dt, end, U, V, S)
            state = end
        t[k], u[k], v[k], du[k], dv[k] = state.t, state.u, state.v, U, V
        if directors:
            stretch[k], dstretch[k] = state.stretch, S
        if n_c:
            lam[k], dlam[k] = state.lam, L
    return DirectSensitivities(parameters, asm, t, u, v, du, dv, stretch, dstretch, lam, dlam)


def _solves(run: RecordedRun, k: int, state: State) -> list[tuple[State, float, State]]:
    """The Newton solves (start, size (s), end) of step k of the run from ``state`` (the state
    after step k): the kept end state for a single solve, else recomputed
    (:func:`~flexmb.sensitivity.transient.sub_steps`). The recomputed steps are taken in the run's
    order on its scheme object, as modified Newton needs (its iterates depend on the factorisation
    the step before kept): a step is taken from a kept end state only where the next step is
    :attr:`~flexmb.sensitivity.transient.Step.fresh` (the run starts afresh after every kept state)."""
    step: Step = run.steps[k]
    single = len(step.sizes) == 1 and len(run.stepper.stages) == 1
    if single and k + 1 in run.states:
        return [(state, step.sizes[0], run.states[k + 1])]
    return sub_steps(run.stepper, state, step, run.settings)
