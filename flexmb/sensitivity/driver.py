"""Transient design sensitivities in one call: :func:`transient_sensitivity` records a run, evaluates
the responses on its states and differentiates them by the chosen method (issue 33, piece P18).

The pieces it calls, in order (each usable on its own):

1. :func:`~flexmb.sensitivity.transient.record` -- the forward run with fixed steps ``dt``, its step
   list and every ``keep_every``-th state;
2. the run's states at every step (the kept ones as kept, the others replayed bit for bit), as a
   :class:`~flexmb.sensitivity.responses.Trajectory` on which each response is evaluated, and as
   the run's :class:`~flexmb.results.TimeHistory` (built last: recording a state sets the
   assembly's time, which the derivatives must not see changed);
3. the gradients: with ``method="adjoint"`` the discrete adjoint of the run,
   :func:`~flexmb.sensitivity.adjoint.adjoint_gradient` (one reverse sweep for all parameters);
   with ``method="direct"`` the direct differentiation of every step,
   :func:`~flexmb.sensitivity.midpoint.direct_sensitivities` (mid-point, composed mid-point) or
   :func:`~flexmb.sensitivity.alpha.direct_sensitivities` (generalized-alpha, Newmark), and each
   response's ``gradient`` from the state derivatives.

**Responses** are functions of the run's trajectory: a functional of
:mod:`flexmb.sensitivity.responses` with its signal and options bound,
``functools.partial(first_peak, signal, window=0.1)``, or any function called as
``f(trajectory, parameters=parameters)`` that returns a
:class:`~flexmb.sensitivity.responses.ResponseValue` (the ``parameters`` give the explicit partials
of responses that depend on the parameters at fixed states, the energies). A mapping names them;
else each is named by its functional.

**Covered**, by scheme and method (the rest refused with a :class:`~flexmb.checks.ModelError`
naming it, before the forward run where the model or the parameters decide it):

==============================  ======================  ==========================================
scheme                          methods                 models
==============================  ======================  ==========================================
mid-point, composed mid-point   adjoint, direct         joints and drives of planar models, and
                                                        spatial (3D) rotations as
                                                        :mod:`flexmb.sensitivity.midpoint` covers
                                                        them; no ties to modal bodies, no
                                                        prescribed-motion amplitudes
generalized-alpha, Newmark      direct                  planar, without joints
energy-decaying (both)          none yet
==============================  ======================  ==========================================

The model checks are the differentiating modules' own (``check_model``), run before the forward run
with their messages; so are the parameters' (a group, node or joint the model lacks).

The run itself takes :func:`~flexmb.integrators.time_stepping.integrate`'s arguments with fixed
steps; error-controlled steps are refused (:mod:`flexmb.sensitivity.transient`).
"""
from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from flexmb.assembly import Assembly
from flexmb.checks import ModelError, keywords_listed, methods_keywords_listed
from flexmb.integrators.newton import NewtonSettings
from flexmb.integrators.schemes import State
from flexmb.io.records import ModelLayout
from flexmb.model import Model
from flexmb.results import TimeHistory
from flexmb.sensitivity import alpha, midpoint
from flexmb.sensitivity.constraints import DriveAmplitude
from flexmb.sensitivity.parameters import TransientParameter
from flexmb.sensitivity.responses import ResponseValue, Signal, Trajectory
from flexmb.sensitivity.transient import RecordedRun, record, scheme_for

#: the methods of :func:`transient_sensitivity`
METHODS = ("adjoint", "direct")
#: a response: a function of the run's trajectory, called as ``f(trajectory, parameters=parameters)``
Response = Callable[..., ResponseValue]


@methods_keywords_listed
@dataclass
class TransientSensitivity:
    """Responses of a transient run and their derivatives with respect to design parameters.

    Attributes
    ----------
    parameters : the parameters (n_p), :mod:`flexmb.sensitivity.parameters` parameters and drive
        amplitudes.
    names : (n_r,) the responses' names.
    values : (n_r,) the responses F, each in its unit (``units``).
    units : (n_r,) the responses' units.
    gradient : (n_r, n_p) dF/dp, in the response's unit per unit of the parameter (``p.unit``;
        multipliers are dimensionless, baseline 1).
    baseline : (n_p,) the parameters' values p in the model (1 for multipliers).
    responses : (n_r,) the :class:`~flexmb.sensitivity.responses.ResponseValue` objects (their
        ``info``: a peak's step and margins, KS bounds).
    history : the forward run's :class:`~flexmb.results.TimeHistory`, every step recorded (None
        with ``history=False``; its ``newton_iterations`` are zero: the recorded run does not keep
        them).
    trajectory : the run's states at every step, on which the responses were evaluated.
    method : ``"adjoint"`` or ``"direct"``; ``scheme`` the scheme's name.
    memory_bytes : adjoint: the largest memory of the states the reverse sweep held at once (the
        kept states and one segment's, :class:`~flexmb.sensitivity.adjoint.AdjointGradient`);
        direct: the state derivatives held (n_steps + 1 times n_dof (and n_c) times n_p floats per
        field). Neither counts the trajectory and the history, which hold every state.
    timings : CPU seconds (``time.process_time``) of ``"forward"`` (the recorded run),
        ``"responses"`` (the states replayed where not kept and the responses evaluated),
        ``"sweep"`` (the adjoint's reverse sweep or the direct differentiation) and ``"history"``.
    details : the method's own result: :class:`~flexmb.sensitivity.adjoint.AdjointGradient` (solves,
        recomputed solves, states held) or the direct method's state derivatives
        (:class:`~flexmb.sensitivity.midpoint.DirectSensitivities`).
    """

    parameters: list
    names: list[str]
    values: np.ndarray
    units: list[str]
    gradient: np.ndarray
    baseline: np.ndarray
    responses: list[ResponseValue]
    history: TimeHistory | None
    trajectory: Trajectory
    method: str
    scheme: str
    memory_bytes: int
    timings: dict[str, float] = field(default_factory=dict)
    details: object = None

    @property
    def normalised(self) -> np.ndarray:
        """(n_r, n_p) ``(p / F) dF/dp``, dimensionless: the relative change of F per relative
        change of p; NaN where F = 0 (undefined), 0 at a zero baseline p."""
        F = self.values[:, None]
        return np.divide(self.baseline[None, :] * self.gradient, F, out=np.full(self.gradient.shape, np.nan),
                         where=F != 0.0)

    def gradient_unit(self, response: int, parameter: int) -> str:
        """The unit of ``gradient[response, parameter]``: the response's per the parameter's
        (``"m/kg"``; ``"m per N/m"`` where a slash would be ambiguous)."""
        unit, per = self.units[response] or "1", self.parameters[parameter].unit
        if per == "1":
            return unit
        return f"{unit}/{per}" if not any(c in unit + per for c in " /") else f"{unit} per {per}"

    def summary(self) -> str:
        """A table per response: its value, and per parameter its name, value p and unit, dF/dp
        with its unit and ``(p / F) dF/dp``."""
        steps = self.trajectory.n_states - 1
        t = self.trajectory.t
        cpu = ", ".join(f"{k} {v:.3g} s" for k, v in self.timings.items())
        lines = [f"transient sensitivities: {self.scheme}, {self.method} method, {steps} steps, t = {t[0]:.6g} .. "
                 f"{t[-1]:.6g} s; {len(self.parameters)} parameter(s), {len(self.names)} response(s)",
                 f"CPU: {cpu}; {'sweep' if self.method == 'adjoint' else 'derivative'} memory "
                 f"{self.memory_bytes / 1e6:.3g} MB"]
        width = max(len("parameter"), *(len(p.name) for p in self.parameters))
        normalised = self.normalised
        for r, name in enumerate(self.names):
            lines += ["", f"{name} = {self.values[r]:.8g} {self.units[r]}".rstrip(),
                      f"  {'parameter':<{width}}  {'p':>12}  {'unit':<10}  {'dF/dp':>15}  {'unit':<14}  "
                      f"{'(p/F) dF/dp':>12}"]
            for j, p in enumerate(self.parameters):
                lines.append(f"  {p.name:<{width}}  {self.baseline[j]:>12.6g}  {p.unit:<10}  "
                             f"{self.gradient[r, j]:>15.8e}  {self.gradient_unit(r, j):<14}  "
                             f"{normalised[r, j]:>12.6g}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


@keywords_listed
def transient_sensitivity(model: Model | Assembly, parameters: Sequence[TransientParameter | DriveAmplitude],
                          responses: Sequence[Response] | Mapping[str, Response],
                          *, dt: float, t_end: float, scheme: str = "mid-point", method: str = "adjoint",
                          u0: np.ndarray | None = None, v0: np.ndarray | None = None, t0: float = 0.0,
                          newton: NewtonSettings | None = None, max_cutbacks: int = 6, cutback_check: str = "error",
                          rho_inf: float | None = None, keep_every: int = 1, history: bool = True
                          ) -> TransientSensitivity:
    """Responses of a run of fixed steps and their gradients with respect to the parameters: the run
    recorded (:func:`~flexmb.sensitivity.transient.record`), the responses evaluated on its states and
    differentiated by the discrete adjoint or by direct differentiation of every step
    (:mod:`flexmb.sensitivity.driver` gives the pieces called). Covered: the mid-point and composed
    mid-point schemes by both methods (joints and drives of planar models); generalized-alpha and
    Newmark by the direct method (planar, without joints). What is not covered is refused with a
    ModelError naming it, before the run where the model or the parameters decide it.

    Parameters
    ----------
    model : the model (or its Assembly).
    parameters : :mod:`flexmb.sensitivity.parameters` parameters (:func:`~flexmb.sensitivity.parameters.parameter`
        of a :mod:`flexmb.cms` design variable, :func:`~flexmb.sensitivity.parameters.spring_rate`,
        :func:`~flexmb.sensitivity.parameters.body_mass`, ...) and joint drive amplitudes
        (:func:`~flexmb.sensitivity.constraints.drive_amplitude`).
    responses : functions of the run's trajectory, each called as ``f(trajectory, parameters=parameters)``
        and returning a :class:`~flexmb.sensitivity.responses.ResponseValue`: a functional of
        :mod:`flexmb.sensitivity.responses` bound to its signal and options,
        ``functools.partial(first_peak, signal, window=0.1)``, or a function of your own. A sequence
        (each named by its functional and signal) or a mapping name -> function.
    dt, t_end : the fixed step and the end time (s).
    scheme : ``"mid-point"``, ``"composed-mid-point"``, ``"generalized-alpha"`` or ``"newmark"``.
    method : ``"adjoint"`` (a reverse sweep, its cost independent of the number of parameters;
        mid-point schemes) or ``"direct"`` (every state's derivative, cost growing with the number of
        parameters).
    u0, v0, t0, newton, max_cutbacks, cutback_check, rho_inf : as :func:`~flexmb.integrators.integrate`
        takes them.
    keep_every : the run keeps every k-th state (and its start and last); the others are recomputed
        (bit for bit) when needed: fewer states held by the adjoint's sweep, at the cost of
        recomputed steps.
    history : record the run's :class:`~flexmb.results.TimeHistory` (energies, reactions, sensors)
        of every step.

    Returns
    -------
    TransientSensitivity : values (n_r,), gradient (n_r, n_p), normalised gradient, the history,
        memory and timings; ``print`` it for a table.
    """
    asm = model if isinstance(model, Assembly) else Assembly(model)
    if method not in METHODS:
        raise ModelError(f"transient_sensitivity: method must be one of {', '.join(map(repr, METHODS))}, "
                         f"got {method!r}")
    stepper = scheme_for(asm, scheme, rho_inf)
    if type(stepper) in midpoint.SCHEMES:
        module = midpoint
    elif type(stepper) in alpha.SCHEMES:
        module = alpha
        if method == "adjoint":
            raise ModelError(f"transient_sensitivity: scheme {stepper.name!r} has no adjoint yet; use "
                             "method='direct' (or the mid-point scheme for the adjoint)")
    else:
        covered = ", ".join(s.name for s in midpoint.SCHEMES + alpha.SCHEMES)
        raise ModelError(f"transient_sensitivity: scheme {stepper.name!r} is not differentiated yet; the "
                         f"sensitivities cover {covered}")
    module.check_model(asm, stepper)
    parameters = _checked_parameters(asm, parameters, module)
    named = _checked_responses(responses)
    baseline = np.array([p.value(asm.model) for p in parameters])

    clock = time.process_time()
    run = record(asm, dt, t_end, stepper, u0=u0, v0=v0, t0=t0, newton=newton, max_cutbacks=max_cutbacks,
                 cutback_check=cutback_check, keep_every=keep_every)
    timings = {"forward": time.process_time() - clock}

    clock = time.process_time()
    states = run_states(run)
    traj = _trajectory(run, states)
    values = [_evaluate(name, f, traj, parameters) for name, f in named.items()]
    timings["responses"] = time.process_time() - clock

    clock = time.process_time()
    if method == "adjoint":
        from flexmb.sensitivity.adjoint import adjoint_gradient

        details = adjoint_gradient(run, parameters, values)
        gradient, memory = details.gradient, details.memory_bytes
    else:
        details = module.direct_sensitivities(run, parameters)
        gradient = np.array([details.gradient(v) for v in values]).reshape(len(values), len(parameters))
        held = (details.du, details.dv, details.dstretch, details.dmultipliers, getattr(details, "da", None))
        memory = sum(a.nbytes for a in held if a is not None)
    timings["sweep"] = time.process_time() - clock

    clock = time.process_time()
    recorded = _history(run, states, dt) if history else None
    timings["history"] = time.process_time() - clock
    return TransientSensitivity(parameters, list(named), np.array([v.value for v in values]), [v.unit for v in values],
                                gradient, baseline, values, recorded, traj, method, stepper.name, int(memory),
                                timings, details)


def run_states(run: RecordedRun) -> list[State]:
    """The states of every step of a recorded run, n = 0 .. N: the kept ones as kept, the others
    recomputed as the run took them (the same as :func:`flexmb.sensitivity.adjoint.trajectory`'s)."""
    states = [run.states[0]]
    for k in range(len(run.steps)):
        states.append(run.states[k + 1] if k + 1 in run.states else midpoint._solves(run, k, states[-1])[-1][2])
    return states


def _trajectory(run: RecordedRun, states: list[State]) -> Trajectory:
    """The states as the responses' Trajectory (with the stretch rates and multipliers the run has)."""
    stretch = None if states[0].stretch is None else [s.stretch for s in states]
    multipliers = [s.lam for s in states] if run.asm.constraints is not None else None
    return Trajectory([s.t for s in states], [s.u for s in states], [s.v for s in states], run.asm, stretch,
                      multipliers)


def _history(run: RecordedRun, states: list[State], dt: float) -> TimeHistory:
    """The run's TimeHistory of every state, with the run log's events and cut-backs (Newton's
    iterations are not recorded by :func:`~flexmb.sensitivity.transient.record`: zero)."""
    asm, log = run.asm, run.log
    out = TimeHistory(run.stepper.name, dt, ModelLayout.from_assembly(asm))
    out.meta["t0"] = float(states[0].t)
    rho_inf = getattr(run.stepper, "rho_inf", None)
    if rho_inf is not None:
        out.meta["rho_inf"] = rho_inf
    out.record(asm, states[0], 0)
    for before, s in zip(states[:-1], states[1:]):
        out.note_step(s.t - before.t)
        out.record(asm, s, 0)
    out.events, out.cutbacks = list(log.events), log.cutbacks
    return out


def _checked_parameters(asm: Assembly, parameters: Sequence, module: object) -> list:
    """The parameters as a list, refused as the differentiating module refuses them (mid-point: its
    ``check_parameters``; generalized-alpha: transient parameters only), before the run."""
    if module is midpoint:
        return midpoint.check_parameters(asm, parameters, "transient_sensitivity")
    parameters = list(parameters)
    if not parameters:
        raise ModelError("transient_sensitivity: give at least one parameter")
    for p in parameters:
        if isinstance(p, DriveAmplitude):
            raise ModelError(f"transient_sensitivity: parameter {p.name!r}: drive amplitudes are differentiated "
                             "on mid-point runs only (the generalized-alpha and Newmark derivatives cover no "
                             "joints nor drives)")
        if not isinstance(p, TransientParameter):
            raise ModelError(f"transient_sensitivity: expected flexmb.sensitivity.parameters parameters, got {p!r}")
    return parameters


def _checked_responses(responses: Sequence | Mapping) -> dict[str, Callable]:
    """name -> response function; ModelError naming a response that is not a function of the
    trajectory taking ``parameters=`` (a signal or a ResponseValue given instead, say)."""
    if isinstance(responses, Mapping):
        named = {str(k): f for k, f in responses.items()}
    else:
        named = {}
        for f in (responses,) if callable(responses) else responses:
            base = _name(f)
            name, k = base, 2
            while name in named:
                name, k = f"{base} ({k})", k + 1
            named[name] = f
    if not named:
        raise ModelError("transient_sensitivity: give at least one response")
    for name, f in named.items():
        if isinstance(f, (Signal, ResponseValue)) or not callable(f):
            raise ModelError(f"transient_sensitivity: response {name!r} is a {type(f).__name__}, not a function of "
                             "the run's trajectory; bind a functional to its signal, e.g. "
                             "functools.partial(flexmb.sensitivity.final, signal)")
        try:
            signature = inspect.signature(f)
        except (TypeError, ValueError):
            continue                                  # a builtin without a signature: called as documented
        takes = signature.parameters
        if "parameters" not in takes and not any(p.kind == p.VAR_KEYWORD for p in takes.values()):
            raise ModelError(f"transient_sensitivity: response {name!r} does not take the keyword 'parameters'; "
                             "a response is called as f(trajectory, parameters=parameters) (the explicit partials "
                             "of energies need them)")
    return named


def _name(f: object) -> str:
    """A response function's default name: its functional's (and its signal's class)."""
    if isinstance(f, functools.partial):
        signal = next((a for a in f.args if isinstance(a, Signal)), None)
        inner = _name(f.func)
        return inner if signal is None else f"{inner} of {type(signal).__name__.strip('_')}"
    return getattr(f, "__name__", type(f).__name__)


def _evaluate(name: str, f: Callable, traj: Trajectory, parameters: list) -> ResponseValue:
    """The response's value on the trajectory; ModelError naming it if it is not a ResponseValue."""
    value = f(traj, parameters=parameters)
    if not isinstance(value, ResponseValue):
        raise ModelError(f"transient_sensitivity: response {name!r} returned a {type(value).__name__}, not a "
                         "ResponseValue of flexmb.sensitivity.responses")
    return value
