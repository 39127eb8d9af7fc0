"""Central differences of re-runs: the check of :func:`~flexmb.sensitivity.driver.transient_sensitivity`'s
gradients (issue 33, piece P18, stage 2).

For each parameter p (baseline p0) and relative step h, two re-runs of copies of the model with p =
p0 (1 +- h) (``TransientParameter.apply``; an absolute step h at a zero baseline) give

    dF/dp ~ (F(p0 + dp) - F(p0 - dp)) / (2 dp),      dp = h |p0| (h where p0 = 0),

for every response at once. The re-runs take the baseline run's **frozen step list**
(:func:`~flexmb.sensitivity.transient.replay`: the same sizes, and a cut-back's halves where the
baseline cut back), so the differences are those of the same discrete map the exact gradients
differentiate, not of another step sequence. Their start states are the changed models' own
(``start_state``: with generalized-alpha the consistent start acceleration moves with p, as the
direct method's ``da_0/dp`` does).

A difference misses the derivative by its truncation error, which falls as h^2, until round-off,
which grows as eps / h, takes over: a **step study** over several h
(:mod:`flexmb.validation.step_study`) shows both branches, and the difference at the *most stable
step* (the interior step whose difference agrees best with its two neighbours', chosen from the
differences alone) is the estimate :attr:`FiniteDifference.gradient`. Cost: 2 n_h n_p re-runs.

Responses are evaluated on each re-run's trajectory, whose ``asm`` is the changed model's. A signal
built on the baseline model reads that model: right for kinematic signals (DOFs, points, chords,
multipliers, whose indices and reference coordinates no parameter changes), wrong for an energy
differentiated with respect to its own stiffness or mass (the re-run's energy would be evaluated
with the baseline's). Such a response -- a functional bound (``functools.partial``) to a signal
that has explicit partials with respect to a parameter -- is refused with a ModelError naming
both; build its signal on the trajectory's assembly instead, ``lambda traj, parameters:
integral(strain_energy(traj.asm), traj, parameters=parameters)``.
"""
from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from flexmb.assembly import Assembly
from flexmb.checks import ModelError, keywords_listed, methods_keywords_listed
from flexmb.integrators.newton import NewtonFailure, NewtonSettings
from flexmb.integrators.time_stepping import start_state
from flexmb.model import Model
from flexmb.sensitivity.constraints import DriveAmplitude
from flexmb.sensitivity.driver import Response, _checked_responses, _evaluate, _trajectory, run_states
from flexmb.sensitivity.parameters import TransientParameter
from flexmb.sensitivity.responses import Signal
from flexmb.sensitivity.transient import record, replay, scheme_for

#: the default relative steps of the study, 1e-2 ... 1e-9
STEPS = tuple(10.0 ** -np.arange(2.0, 10.0))


@methods_keywords_listed
@dataclass
class FiniteDifference:
    """Central differences of re-runs (module docstring).

    Attributes
    ----------
    parameters : the parameters (n_p).
    names, units : (n_r,) the responses' names and units.
    values : (n_r,) the responses F of the baseline run.
    baseline : (n_p,) the parameters' values p0.
    steps : (n_h,) the relative steps h (absolute at a zero baseline).
    differences : (n_h, n_r, n_p) the central differences, response unit per parameter unit.
    best : (n_r, n_p) the index of the most stable step of each (the first step with fewer than
        three).
    re_runs : the number of re-runs; ``cpu_s`` their CPU time with the baseline run's (s).
    """

    parameters: list
    names: list[str]
    units: list[str]
    values: np.ndarray
    baseline: np.ndarray
    steps: np.ndarray
    differences: np.ndarray
    best: np.ndarray
    re_runs: int = 0
    cpu_s: float = 0.0

    @property
    def gradient(self) -> np.ndarray:
        """(n_r, n_p) the difference at each entry's most stable step: the estimate of dF/dp."""
        r, j = np.indices(self.best.shape)
        return self.differences[self.best, r, j]

    def errors(self, reference: np.ndarray) -> np.ndarray:
        """(n_h, n_r, n_p) ``|difference - reference| / |reference|`` against a gradient (n_r, n_p)
        (a transient_sensitivity's): the study's truncation and round-off branches; NaN where the
        reference is zero."""
        reference = np.asarray(reference, dtype=float)
        if reference.shape != self.differences.shape[1:]:
            raise ModelError(f"FiniteDifference.errors: the reference has shape {reference.shape}, the differences "
                             f"{self.differences.shape[1:]} (responses, parameters)")
        scale = np.where(reference != 0.0, np.abs(reference), np.nan)
        return np.abs(self.differences - reference[None]) / scale[None]

    def summary(self) -> str:
        """Per response and parameter: the most stable step and its difference."""
        lines = [f"central differences of re-runs: {len(self.steps)} steps h = {self.steps[0]:.0e} .. "
                 f"{self.steps[-1]:.0e}, {self.re_runs} re-runs, CPU {self.cpu_s:.3g} s"]
        gradient = self.gradient
        for r, name in enumerate(self.names):
            lines.append(f"{name} = {self.values[r]:.8g} {self.units[r]}".rstrip())
            for j, p in enumerate(self.parameters):
                lines.append(f"  {p.name}: dF/dp {gradient[r, j]:.8e} at h = {self.steps[self.best[r, j]]:.0e}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


@keywords_listed
def finite_difference(model: Model | Assembly, parameters: Sequence[TransientParameter | DriveAmplitude],
                      responses: Sequence[Response] | Mapping[str, Response], *, dt: float, t_end: float,
                      steps: Sequence[float] = STEPS, scheme: str = "mid-point", u0: np.ndarray | None = None,
                      v0: np.ndarray | None = None, t0: float = 0.0, newton: NewtonSettings | None = None,
                      max_cutbacks: int = 6, cutback_check: str = "error", rho_inf: float | None = None
                      ) -> FiniteDifference:
    """Central differences of the responses with respect to the parameters from re-runs over the
    baseline run's step list, at each relative step of ``steps`` (module docstring); the other
    arguments as :func:`~flexmb.sensitivity.driver.transient_sensitivity` takes them (any scheme:
    no derivative of the scheme is needed)."""
    from flexmb.validation.step_study import most_stable_step

    asm = model if isinstance(model, Assembly) else Assembly(model)
    base = asm.model
    steps = np.atleast_1d(np.asarray(steps, dtype=float))
    if steps.ndim != 1 or not steps.size or not np.all(np.isfinite(steps)) or np.any(steps <= 0.0):
        raise ModelError(f"finite_difference: steps must be relative steps > 0, got {steps!r}")
    parameters = list(parameters)
    if not parameters:
        raise ModelError("finite_difference: give at least one parameter")
    for p in parameters:
        if not isinstance(p, (TransientParameter, DriveAmplitude)):
            raise ModelError(f"finite_difference: expected flexmb.sensitivity parameters, got {p!r}")
    named = _checked_responses(responses)
    baseline = np.array([p.value(base) for p in parameters])
    clock = time.process_time()
    run = record(asm, dt, t_end, scheme_for(asm, scheme, rho_inf), u0=u0, v0=v0, t0=t0, newton=newton,
                 max_cutbacks=max_cutbacks, cutback_check=cutback_check)
    traj = _trajectory(run, run_states(run))
    values = [_evaluate(name, f, traj, parameters) for name, f in named.items()]
    _refuse_bound_energies(named, values, parameters)
    settings = newton or NewtonSettings()

    def rerun(p: TransientParameter | DriveAmplitude, value: float) -> np.ndarray:
        changed = Assembly(p.apply(base, value))
        stepper = scheme_for(changed, scheme, rho_inf)
        start = start_state(stepper, t0, u0, v0)
        try:
            states = [start] + replay(changed, stepper, start, run.steps, settings)
        except NewtonFailure as exc:
            raise ModelError(f"finite_difference: parameter {p.name!r} = {value:.10g}: the re-run on the frozen step "
                             f"list failed ({exc}); take smaller steps") from exc
        again = _trajectory(run, states)
        again.asm = changed
        return np.array([_evaluate(name, f, again, []).value for name, f in named.items()])

    n_h, n_r, n_p = steps.size, len(named), len(parameters)
    differences = np.zeros((n_h, n_r, n_p))
    for j, p in enumerate(parameters):
        for i, h in enumerate(steps):
            dp = h * abs(baseline[j]) if baseline[j] else h
            differences[i, :, j] = (rerun(p, baseline[j] + dp) - rerun(p, baseline[j] - dp)) / (2.0 * dp)
    best = np.zeros((n_r, n_p), dtype=int)
    if n_h >= 3:
        for r in range(n_r):
            for j in range(n_p):
                best[r, j] = most_stable_step(differences[:, r, j])
    return FiniteDifference(parameters, list(named), [v.unit for v in values], np.array([v.value for v in values]),
                            baseline, steps, differences, best, 2 * n_h * n_p, time.process_time() - clock)


def _refuse_bound_energies(named: dict, values: list, parameters: list) -> None:
    """ModelError for a response bound to a baseline-model signal with explicit partials (module
    docstring): its re-runs would read the baseline's stiffness or mass."""
    for (name, f), value in zip(named.items(), values):
        if not isinstance(f, functools.partial) or not any(isinstance(a, Signal) for a in f.args):
            continue
        explicit = np.asarray(value.parameter_gradient, dtype=float)
        if explicit.size and np.any(explicit):
            j = int(np.flatnonzero(explicit)[0])
            raise ModelError(f"finite_difference: response {name!r} depends on parameter {parameters[j].name!r} at "
                             "fixed states (an energy), but its signal is built on the baseline model, which the "
                             "re-runs do not change; build the signal on the trajectory's assembly: "
                             "lambda traj, parameters: functional(signal(traj.asm), traj, parameters=parameters)")
