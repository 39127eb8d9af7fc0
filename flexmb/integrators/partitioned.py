"""Integration of the minimal equations of a constrained system with scipy's ODE solvers.

Two modes (Blajer, Schiehlen & Schirm 1993, 1994):

- :func:`integrate_partitioned`, the compact coordinate-partitioning form (1994, end of
  section 2): the state is all of q and the independent velocities v_I, with
  ``q' = D^T v_I + [0; eta]`` (eq. 9) and ``M_d v_I' = h_d`` (eq. 12). No position solve of the
  constraints is made; the constraints drift only by the integration error. The independent
  coordinates are chosen by the projective criterion, LU pivoting or the SVD
  (:mod:`flexmb.multibody.partitioning`); after every step the current set's criterion is
  compared with the best set's and the set is switched when it falls below
  ``switch_threshold`` times the best (every switch is logged). A fixed set (``independent=``)
  is never switched; the run stops with status ``"singular"`` when its criterion falls below
  ``singular_tol``. An optional position correction projects q_D back onto Phi = 0 after
  every step (off by default; its size is recorded).
- :func:`integrate_closing`, the closing-condition form (1993 eqs. 5-12; 1994 eq. 28): the
  user supplies, per variant of independent coordinates, q_D = g(q_I, t), A, eta and xi; the
  state is (q_I, v_I) and the constraints hold to round-off. The variant is switched by the
  same criterion before the current one turns singular.

Both return a :class:`PartitionedRun`. A solver failure ends the run with status ``"failed"``
and the steps computed so far kept; nothing is raised unless ``raise_on_failure``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from flexmb.checks import keywords_listed, methods_keywords_listed
from flexmb.multibody.constrained_system import ConstrainedSystem
from flexmb.multibody.partitioning import (SingularChoiceError, choice_criterion, choose_independent, partition,
                                           reduced_dynamics, tangent_gram)
from flexmb.progress import Progress

Array = np.ndarray

#: scipy.integrate solvers by name (imported on first use: scipy.integrate is slow to import)
SOLVERS = ("DOP853", "RK45", "Radau", "BDF", "LSODA")


class IntegrationFailed(RuntimeError):
    """A partitioned run ended early; ``result`` holds what was computed."""

    def __init__(self, message: str, result: "PartitionedRun") -> None:
        super().__init__(message)
        self.result = result


@methods_keywords_listed
@dataclass
class PartitionedRun:
    """Recorded states of a partitioned or closing-condition run.

    Per record: time ``t``, coordinates ``q`` and velocities ``qd`` (all n), the independent
    set in use, that set's criterion value, cos^2 alpha of every coordinate, ``|Phi|_inf``.
    ``switches``: one dict per change of the independent set (time, old, new, criterion of
    both); ``events``: singular choices and failures; ``corrections``: ``|Delta q|`` of each
    position correction.
    """

    names: list[str]
    t: list[float] = field(default_factory=list)
    q: list[Array] = field(default_factory=list)
    qd: list[Array] = field(default_factory=list)
    independent: list[tuple[int, ...]] = field(default_factory=list)
    criterion: list[float] = field(default_factory=list)
    cos2: list[Array] = field(default_factory=list)
    constraint_residual: list[float] = field(default_factory=list)
    switches: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    corrections: list[float] = field(default_factory=list)
    status: str = "running"
    message: str = ""
    n_steps: int = 0
    n_rhs: int = 0

    def record(self, system: ConstrainedSystem, t: float, q: Array, qd: Array, independent: Array,
               criterion: float, S: Array) -> None:
        """Append one state: the set in use, its criterion, cos^2 alpha = diag S, ``|Phi|``."""
        phi = system.phi(q, t)
        self.t.append(float(t))
        self.q.append(q.copy())
        self.qd.append(qd.copy())
        self.independent.append(tuple(int(i) for i in independent))
        self.criterion.append(float(criterion))
        self.cos2.append(np.clip(np.diag(S), 0.0, 1.0))
        self.constraint_residual.append(float(np.abs(phi).max()) if phi.size else 0.0)

    def arrays(self) -> dict[str, Array]:
        """The records as arrays: t (N,), q (N, n), qd (N, n), criterion (N,), cos2 (N, n)."""
        return {"t": np.array(self.t), "q": np.array(self.q), "qd": np.array(self.qd),
                "criterion": np.array(self.criterion), "cos2": np.array(self.cos2),
                "constraint_residual": np.array(self.constraint_residual)}

    def energy(self, system: ConstrainedSystem) -> Array:
        """Kinetic plus potential energy at every record (the system needs potential_energy)."""
        return np.array([system.kinetic_energy(q, qd, t) + system.potential_energy(q, t)
                         for t, q, qd in zip(self.t, self.q, self.qd)])


def _check_initial(system: ConstrainedSystem, q0: Array, qd0: Array, t0: float, tol: float) -> None:
    phi = system.phi(q0, t0)
    rate = system.C(q0, t0) @ qd0 + system.a(q0, t0)
    scale_q = max(1.0, float(np.abs(q0).max(initial=0.0)))
    scale_v = max(1.0, float(np.abs(qd0).max(initial=0.0)))
    if phi.size and np.abs(phi).max() > tol * scale_q:
        i = int(np.argmax(np.abs(phi)))
        raise ValueError(f"initial coordinates violate constraint {i}: |Phi_{i}| = {abs(phi[i]):.3g}")
    if rate.size and np.abs(rate).max() > tol * scale_v:
        i = int(np.argmax(np.abs(rate)))
        raise ValueError(f"initial velocities violate constraint {i}: |C q' + a|_{i} = {abs(rate[i]):.3g}")


def _solver(method: str):
    if method not in SOLVERS:
        raise ValueError(f"ODE method must be one of {SOLVERS}, got {method!r}")
    import scipy.integrate

    return getattr(scipy.integrate, method)


def _output_times(t_eval: Sequence[float] | None, t0: float, t_end: float) -> Array | None:
    if t_eval is None:
        return None
    times = np.asarray(t_eval, dtype=float).ravel()
    if times.size and (np.any(np.diff(times) <= 0.0) or times[0] < t0 or times[-1] > t_end):
        raise ValueError(f"t_eval must be increasing and within [t0, t_end] = [{t0}, {t_end}]")
    return times


def _drive(run: PartitionedRun, rhs: Callable[[float, Array], Array], start: Callable[[], Array],
           accept: Callable[[float, Array], tuple[bool, bool, str]], t0: float, t_end: float, method: str,
           rtol: float, atol: float, max_step: float, label: str, progress: bool | None,
           raise_on_failure: bool, t_eval: Array | None = None,
           sample: Callable[[float, Array], None] | None = None) -> PartitionedRun:
    """The step loop shared by both modes. ``start()`` gives the state vector for a (re)start;
    ``accept(t, y)`` handles an accepted step and returns (restart, stop, progress text). A
    restart (new independent set, corrected positions) begins a new solver at the old one's
    proposed step size. With ``t_eval``, ``sample(t_k, y_k)`` receives the solver's dense output
    at the output times inside each step, before ``accept`` may change coordinates."""
    solver_cls = _solver(method)
    t, first_step = t0, None
    bar = Progress(t_end - t0, label, enabled=progress)
    try:
        while t < t_end:
            solver = solver_cls(rhs, t, start(), t_end, rtol=rtol, atol=atol, max_step=max_step,
                                **({"first_step": min(first_step, t_end - t)} if first_step else {}))
            restart = False
            while solver.status == "running" and not restart:
                try:
                    message = solver.step()
                except (SingularChoiceError, np.linalg.LinAlgError, FloatingPointError) as err:
                    solver.status, message = "failed", str(err)
                if solver.status == "failed":
                    run.status, run.message = "failed", f"t = {solver.t:.6g} s: {message}"
                    run.events.append({"t": float(solver.t), "event": "failed", "message": str(message)})
                    raise IntegrationFailed(run.message, run)
                run.n_steps += 1
                if t_eval is not None and sample is not None:
                    inside = t_eval[(t_eval > solver.t_old) & (t_eval <= solver.t)]
                    if inside.size:
                        dense = solver.dense_output()
                        for tk in inside:
                            sample(float(tk), solver.y if tk == solver.t else dense(tk))
                t = solver.t
                restart, stop, text = accept(t, solver.y)
                if stop:
                    return run
                bar.update(t - t0, steps=run.n_steps, set=text)
            # the solver's proposal for its next step (RK and implicit solvers keep it in h_abs)
            first_step = getattr(solver, "h_abs", None) or solver.step_size or None
        run.status = "finished"
    except IntegrationFailed:
        if raise_on_failure:
            raise
    finally:
        bar.close()
    return run


def _stop_singular(run: PartitionedRun, t: float, independent: list[int], criterion: float, message: str) -> None:
    run.events.append({"t": float(t), "event": "singular", "set": independent, "criterion": criterion,
                       "message": message})
    run.status, run.message = "singular", f"t = {t:.6g} s: {message}"


@keywords_listed(renamed={'record_every': 'output_every'})
def integrate_partitioned(system: ConstrainedSystem, q0: Sequence[float], qd0: Sequence[float], t_end: float, *,
                          t0: float = 0.0, method: str = "DOP853", rtol: float = 1e-10, atol: float = 1e-12,
                          max_step: float = np.inf, choice: str = "projective",
                          independent: Sequence[int] | None = None, switch_threshold: float = 0.5,
                          singular_tol: float = 1e-6, position_correction: bool = False,
                          output_every: int = 1, t_eval: Sequence[float] | None = None,
                          progress: bool | None = None, raise_on_failure: bool = False,
                          initial_tol: float = 1e-8) -> PartitionedRun:
    """Integrate the compact partitioned equations from (q0, qd0) at t0 to t_end.

    ``choice``: "projective" | "lu" | "svd" (ignored with a fixed ``independent`` set).
    ``switch_threshold``: switch when the current set's criterion < threshold x that of the
    set the choice method picks now. The criterion compared and logged is always the projective
    one (smallest eigenvalue of S_II, cos^2 alpha for one coordinate); "lu" and "svd" only decide
    which set to switch to.
    ``singular_tol``: a fixed set whose criterion falls below it ends the run ("singular").
    ``output_every``: record every N-th accepted step (the last is always recorded);
    ``t_eval``: record instead at these times (the solver's dense output), plus where a run stops.
    """
    q = np.array(q0, dtype=float)
    qd = np.array(qd0, dtype=float)
    _check_initial(system, q, qd, t0, initial_tol)
    times = _output_times(t_eval, t0, t_end)
    n = system.n
    run = PartitionedRun(system.names)
    fixed = independent is not None
    M, C = system.M(q, t0), system.C(q, t0)
    state = {"set": np.sort(np.asarray(independent, dtype=np.int64)) if fixed
             else choose_independent(M, C, choice, names=system.names), "q": q, "qd": qd}
    S = tangent_gram(M, partition(C, state["set"], system.a(q, t0), system.names).D, system.names)
    if times is None or (times.size and times[0] == t0):
        run.record(system, t0, q, qd, state["set"], choice_criterion(S, state["set"]), S)

    def rhs(t: float, y: Array) -> Array:
        run.n_rhs += 1
        qq, vI = y[:n], y[n:]
        M, C = system.M(qq, t), system.C(qq, t)
        p = partition(C, state["set"], system.a(qq, t), system.names)
        qdot = p.velocities(vI)
        Md, hd, _ = reduced_dynamics(M, system.h(qq, qdot, t), p, system.b(qq, qdot, t))
        return np.concatenate([qdot, np.linalg.solve(Md, hd)])

    def start() -> Array:
        return np.concatenate([state["q"], state["qd"][state["set"]]])

    def sample(t: float, y: Array) -> None:
        qq = y[:n]
        M, C = system.M(qq, t), system.C(qq, t)
        part = partition(C, state["set"], system.a(qq, t), system.names)
        S = tangent_gram(M, part.D, system.names)
        run.record(system, t, qq, part.velocities(y[n:]), state["set"], choice_criterion(S, state["set"]), S)

    def accept(t: float, y: Array) -> tuple[bool, bool, str]:
        current = state["set"]
        names = [system.names[i] for i in current]
        q, vI = y[:n].copy(), y[n:]
        M, C = system.M(q, t), system.C(q, t)
        try:
            part = partition(C, current, system.a(q, t), system.names)
        except SingularChoiceError as err:
            _stop_singular(run, t, current.tolist(), 0.0, str(err))
            return False, True, ""
        qd = part.velocities(vI)
        S = tangent_gram(M, part.D, system.names)
        crit = choice_criterion(S, current)
        restart = False
        if position_correction:
            q, qd = _correct_positions(system, q, vI, current, t, run)
            restart = True
        recharted = system.rechart(q, qd, t)
        if recharted is not None:
            q, qd = recharted
            M, C = system.M(q, t), system.C(q, t)
            S = tangent_gram(M, partition(C, current, system.a(q, t), system.names).D, system.names)
            crit = choice_criterion(S, current)
            restart = True
        if fixed and crit < singular_tol:
            run.record(system, t, q, qd, current, crit, S)
            _stop_singular(run, t, current.tolist(), crit,
                           f"the fixed independent set {names} turns singular (criterion {crit:.3g})")
            return False, True, ""
        if not fixed:
            new = choose_independent(M, C, choice, gram=S)
            crit_new = choice_criterion(S, new)
            if not np.array_equal(new, current) and crit < switch_threshold * crit_new:
                run.switches.append({"t": float(t), "old": names, "new": [system.names[i] for i in new],
                                     "criterion_old": crit, "criterion_new": crit_new,
                                     "cos2": np.clip(np.diag(S), 0.0, 1.0).tolist()})
                current, crit, restart = new, crit_new, True
                qd = partition(C, current, system.a(q, t), system.names).velocities(qd[current])
        state.update({"set": current, "q": q, "qd": qd})
        if times is None and (run.n_steps % output_every == 0 or t >= t_end):
            run.record(system, t, q, qd, current, crit, S)
        return restart, False, ",".join(system.names[i] for i in current)

    return _drive(run, rhs, start, accept, t0, t_end, method, rtol, atol, max_step, "partitioned", progress,
                  raise_on_failure, times, sample)


def _correct_positions(system: ConstrainedSystem, q: Array, v_independent: Array, independent: Array, t: float,
                       run: PartitionedRun, max_iter: int = 4) -> tuple[Array, Array]:
    """Newton on q_D for Phi(q_I, q_D) = 0 at fixed q_I, until |Phi| stops decreasing;
    velocities from v_I (eq. 9)."""
    dependent = np.setdiff1d(np.arange(q.size), independent)
    best, best_norm = q.copy(), float(np.abs(system.phi(q, t)).max(initial=0.0))
    for _ in range(max_iter):
        if best_norm == 0.0:
            break
        trial = best.copy()
        trial[dependent] -= np.linalg.solve(system.C(best, t)[:, dependent], system.phi(best, t))
        norm = float(np.abs(system.phi(trial, t)).max())
        if norm >= best_norm:
            break
        best, best_norm = trial, norm
    run.corrections.append(float(np.abs(best - q).max()))
    p = partition(system.C(best, t), independent, system.a(best, t), system.names)
    return best, p.velocities(v_independent)


# ----------------------------------------------------------- closing conditions
@dataclass(frozen=True)
class ClosingVariant:
    """Explicit closing conditions for one choice of independent coordinates (1993 eqs. 5-7).

    Attributes
    ----------
    independent : indices of q_I (in the order the functions expect q_I).
    closing : ``g(q_I, t, q_ref) -> q_D`` (the dependent coordinates, in increasing index
        order); q_ref is the full q of the last accepted step, for picking the assembly branch
        and unwrapping angles.
    velocity_matrix : ``A(q, t)`` (m, k) with q_D' = A q_I' + eta (eq. 6), q the full coordinates.
    acceleration_shift : ``xi(q, qd, t)`` (m,) with q_D'' = A q_I'' + xi (eq. 7).
    velocity_shift : ``eta(q, t)`` (m,), zero when omitted (closing conditions without time).
    name : for logs.
    """

    independent: tuple[int, ...]
    closing: Callable[[Array, float, Array], Array]
    velocity_matrix: Callable[[Array, float], Array]
    acceleration_shift: Callable[[Array, Array, float], Array]
    velocity_shift: Callable[[Array, float], Array] | None = None
    name: str = ""


class _Variant:
    """A ClosingVariant bound to the coordinate count: assembles q, q', D, xi."""

    def __init__(self, spec: ClosingVariant, n: int) -> None:
        self.spec = spec
        self.independent = np.asarray(spec.independent, dtype=np.int64)
        self.dependent = np.setdiff1d(np.arange(n), self.independent)
        if self.independent.size + self.dependent.size != n or np.unique(self.independent).size != len(spec.independent):
            raise ValueError(f"closing variant {spec.name!r}: independent {spec.independent} are not distinct "
                             f"coordinates of 0..{n - 1}")
        self.n = n
        self.name = spec.name or str(list(spec.independent))

    def coordinates(self, qI: Array, t: float, q_ref: Array) -> Array:
        q = np.empty(self.n)
        q[self.independent] = qI
        q[self.dependent] = self.spec.closing(qI, t, q_ref)
        return q

    def D(self, q: Array, t: float) -> Array:
        A = np.atleast_2d(self.spec.velocity_matrix(q, t))
        D = np.zeros((self.independent.size, self.n))
        D[:, self.independent] = np.eye(self.independent.size)
        D[:, self.dependent] = A.T
        return D

    def velocities(self, q: Array, vI: Array, t: float) -> Array:
        qd = self.D(q, t).T @ vI
        if self.spec.velocity_shift is not None:
            qd[self.dependent] += self.spec.velocity_shift(q, t)
        return qd

    def xi_full(self, q: Array, qd: Array, t: float) -> Array:
        out = np.zeros(self.n)
        out[self.dependent] = self.spec.acceleration_shift(q, qd, t)
        return out


@keywords_listed(renamed={'record_every': 'output_every'})
def integrate_closing(system: ConstrainedSystem, variants: Sequence[ClosingVariant], q0: Sequence[float],
                      qd0: Sequence[float], t_end: float, *, t0: float = 0.0, method: str = "DOP853",
                      rtol: float = 1e-10, atol: float = 1e-12, max_step: float = np.inf,
                      variant: int | None = None, switch_threshold: float = 0.5, singular_tol: float = 1e-6,
                      output_every: int = 1, t_eval: Sequence[float] | None = None,
                      progress: bool | None = None, raise_on_failure: bool = False) -> PartitionedRun:
    """Integrate the minimal equations (1994 eq. 28) with explicit closing conditions.

    Starts with ``variant`` (index; the best by the projective criterion when None); after every
    step the criterion of each variant's set is computed from the current variant's D and the
    run switches when the current set's value falls below ``switch_threshold`` x the best
    variant's. With a single variant the run stops with status ``"singular"`` when its
    criterion falls below ``singular_tol``. ``output_every`` and ``t_eval`` as in
    :func:`integrate_partitioned`.
    """
    n = system.n
    times = _output_times(t_eval, t0, t_end)
    bound = [_Variant(v, n) for v in variants]
    if not bound:
        raise ValueError("integrate_closing needs at least one ClosingVariant")
    q = np.array(q0, dtype=float)
    qd = np.array(qd0, dtype=float)
    run = PartitionedRun(system.names)

    def gram(v: _Variant, qq: Array, t: float) -> Array:
        return tangent_gram(system.M(qq, t), v.D(qq, t), system.names)

    if variant is None:
        # each variant's own D is valid only away from its singularity: compare the values of
        # the variants that are regular here
        values = []
        for v in bound:
            with np.errstate(divide="ignore", invalid="ignore"):
                S = gram(v, q, t0)
            values.append(choice_criterion(S, v.independent) if np.all(np.isfinite(S)) else -1.0)
        variant = int(np.argmax(values))
    cur = bound[int(variant)]
    # start on the closing conditions: q from q_I, q' from v_I
    q = cur.coordinates(q[cur.independent], t0, q)
    qd = cur.velocities(q, qd[cur.independent], t0)
    state = {"variant": cur, "q": q, "qd": qd}
    S = gram(cur, q, t0)
    if times is None or (times.size and times[0] == t0):
        run.record(system, t0, q, qd, cur.independent, choice_criterion(S, cur.independent), S)

    def rhs(t: float, y: Array) -> Array:
        run.n_rhs += 1
        v = state["variant"]
        k = v.independent.size
        qq = v.coordinates(y[:k], t, state["q"])
        D = v.D(qq, t)
        qdot = v.velocities(qq, y[k:], t)
        M = system.M(qq, t)
        hd = D @ (system.h(qq, qdot, t) - M @ v.xi_full(qq, qdot, t))
        return np.concatenate([y[k:], np.linalg.solve(D @ M @ D.T, hd)])

    def start() -> Array:
        ind = state["variant"].independent
        return np.concatenate([state["q"][ind], state["qd"][ind]])

    def sample(t: float, y: Array) -> None:
        v = state["variant"]
        k = v.independent.size
        qq = v.coordinates(y[:k], t, state["q"])
        S = gram(v, qq, t)
        run.record(system, t, qq, v.velocities(qq, y[k:], t), v.independent, choice_criterion(S, v.independent), S)

    def accept(t: float, y: Array) -> tuple[bool, bool, str]:
        v = state["variant"]
        k = v.independent.size
        q = v.coordinates(y[:k], t, state["q"])
        qd = v.velocities(q, y[k:], t)
        S = gram(v, q, t)
        crit = choice_criterion(S, v.independent)
        if len(bound) == 1 and crit < singular_tol:
            run.record(system, t, q, qd, v.independent, crit, S)
            _stop_singular(run, t, v.independent.tolist(), crit,
                           f"variant {v.name} turns singular (criterion {crit:.3g})")
            return False, True, ""
        values = [choice_criterion(S, w.independent) for w in bound]
        best = int(np.argmax(values))
        restart = False
        if bound[best] is not v and crit < switch_threshold * values[best]:
            run.switches.append({"t": float(t), "old": v.name, "new": bound[best].name, "criterion_old": crit,
                                 "criterion_new": values[best], "cos2": np.clip(np.diag(S), 0.0, 1.0).tolist()})
            v, crit, restart = bound[best], values[best], True
            q = v.coordinates(q[v.independent], t, q)
            qd = v.velocities(q, qd[v.independent], t)
        state.update({"variant": v, "q": q, "qd": qd})
        if times is None and (run.n_steps % output_every == 0 or t >= t_end):
            run.record(system, t, q, qd, v.independent, crit, S)
        return restart, False, v.name

    return _drive(run, rhs, start, accept, t0, t_end, method, rtol, atol, max_step, "closing conditions",
                  progress, raise_on_failure, times, sample)
