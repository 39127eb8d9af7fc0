"""Gradient-based design of a flexible mechanism on discrete-adjoint gradients: the slider-crank rod's
diameter chosen for minimum mass with its first peak of mid-span deflection bounded (issue 33).

Model: slider-crank A of Meijaard (1993, sec. 4) as ``slider-crank-a`` builds it
(:func:`flexmb.validation.slider_crank.build`, slider mass zero): crank r = 0.1524 m at omega = 124.8 rad/s
(prescribed crank pin), rod L = 0.3048 m of 2 cubic-mass second-order ``Beam2D`` elements (round steel
section d = 6.35 mm), mid-point scheme with fixed steps of 8 rad / omega / 2048 (``sensitivity-slider-crank``'s
quick step, whose first peak lies near a sample) over the first 2.5 rad, which hold the first peak; Newton to
its round-off stop (residual_tol 1e-14) as in that case, so that F is a smooth function of the design to
well below the optimizer's tolerance. Quick and full mode run the same optimisation (it is the check).

Design variable: the rod's diameter scale s (baseline 1). A round section scales its area as s^2 and its
second moment as s^4, so the rod's EA and rho_A multipliers are s^2 and its EI and rho_I multipliers s^4
(:func:`flexmb.cms.design.section_property`, applied by
:meth:`~flexmb.sensitivity.parameters.TransientParameter.apply`). The adjoint gives dF/dp for the four
multipliers p_k relative to the model it ran (baseline 1 there), so with p_k = s^(e_k) / s_run^(e_k):
``dF/ds = sum_k e_k dF/dp_k / s``.

Problem: minimise the rod mass ratio m(s) / m(1) = s^2 subject to c(s) = 1 - F(s) / F_max >= 0, with F the first
peak of the mid-span deflection / L (:func:`flexmb.sensitivity.responses.first_peak` of
:func:`~flexmb.sensitivity.responses.chord_deflection`, the benchmark's definition) and F_max = 80 % of the
baseline's F(1). A thicker rod deflects less (inertia load ~ s^2, bending stiffness ~ s^4), so the optimum lies
where the constraint is active: s* > 1, interior to the bounds [0.5, 2]. Solved by ``scipy.optimize.minimize``
(SLSQP, ftol 1e-12) twice from s = 1:

* with the adjoint gradients (:func:`flexmb.sensitivity.adjoint.adjoint_gradient`): each new design is one
  recorded forward run (:func:`flexmb.sensitivity.transient.record`), and each constraint gradient one adjoint
  sweep over it;
* with central differences of re-runs, ``(F(s + h) - F(s - h)) / 2h`` at h = 1e-5 (the step study of
  ``sensitivity-slider-crank``: the smallest errors at 1e-4 or 1e-5 relative), two extra forward runs per
  variable per gradient; run serially, and again with each gradient's two re-runs as tasks on a local
  threaded Dask client (``Client(processes=False)``, which starts in about 10 ms; a process cluster would
  load flexmb and its numba kernels in every worker first). A forward run here is a few hundredths of a second,
  so the client does not pay off on this small problem (its wall time is in the JSON); the re-runs of many
  design variables would map onto it the same way.

Measured: s* = 1.091808 (rod mass +19.2 %), SLSQP 6 iterations either way; the adjoint optimisation used 7 forward
runs and 6 adjoint sweeps, the FD study 19 forward runs (the baseline counted in both). The adjoint's advantage
here is in the count of runs, not in CPU time: with one variable an adjoint sweep cost 0.39 s CPU against
0.026 s per forward run (about 15 forward runs; JSON ``cpu_s_per_run``), so the FD study is the cheaper one on
this problem; the adjoint's cost does not grow with the number of design variables, the FD study's does.

Checked: both optimizers converged (SLSQP's success); the KKT conditions at the optimum -- with one variable and
one active constraint stationarity ``m'(s*) - lambda c'(s*) = 0`` is met by lambda = m' / c', so the residual
stated is SLSQP's own multiplier's ``|m' - lambda c'| / |m'|``, the multiplier's sign (lambda > 0: the bound is
what stops the mass falling) and the constraint's activity ``|c(s*)|``; the optimum's constraint value
reproduced by a plain re-run (``flexmb.integrate`` of the applied design, its states' peak found by the
benchmark's own :func:`~flexmb.validation.slider_crank.first_maximum`) to 1e-9 relative; both optimizers reach
the same s*; and the forward runs used (adjoint: forward runs, of which some also ran an adjoint sweep; FD:
forward runs including the difference re-runs), the adjoint's count being no larger than the FD study's.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np
from dask.distributed import Client
from scipy.optimize import minimize

import flexmb as fm
from flexmb.cms import design
from flexmb.integrators.newton import NewtonSettings
from flexmb.sensitivity import parameters as P
from flexmb.sensitivity import responses as R
from flexmb.sensitivity.adjoint import adjoint_gradient, trajectory
from flexmb.sensitivity.transient import record
from flexmb.validation import CaseReport, Check, print_report
from flexmb.validation.slider_crank import (CRANK_TURN, PEAK_FRACTION, PEAK_WINDOW, QUICK_TURN, ROD, ROD_MASS,
                                            build, first_maximum, midspan_deflection)

CASE = "optimize-slider-crank"
TITLE = ("Design on adjoint gradients: slider-crank A's rod diameter for minimum mass with its first peak of "
         "mid-span deflection bounded (SLSQP; against a central-difference study)")
SOURCE = "exact: KKT conditions, a plain re-run of the optimum, the FD-gradient optimisation"

OMEGA = 124.8                   # rad/s, case A
N_ELEMENTS = 2
STEPS = 2048                    # steps per 8 rad of crank rotation (sensitivity-slider-crank's quick step)
BOUND_FRACTION = 0.8            # F_max / F(1)
S_BOUNDS = (0.5, 2.0)           # diameter scale's bounds
FD_STEP = 1e-5                  # central-difference step of s
FTOL = 1e-12                    # SLSQP's tolerance on the objective
KKT_TOL = 1e-6                  # stationarity residual / objective gradient
ACTIVE_TOL = 1e-9               # |c(s*)| at the optimum (the constraint is active)
RERUN_TOL = 1e-9                # re-run's constraint value, relative
SAME_TOL = 1e-6                 # s* of the two optimisations, relative
DASK_TOL = 1e-12                # the Dask FD study runs the same designs: the same s*
NEWTON = NewtonSettings(residual_tol=1e-14)   # as sensitivity-slider-crank: F smooth in the design
#: section property multipliers and their exponents in s (area ~ s^2, second moment ~ s^4)
EXPONENTS = {"EA": 2.0, "rho_A": 2.0, "EI": 4.0, "rho_I": 4.0}


class Design:
    """Forward runs (and adjoint sweeps) of the designs s, each run once and cached by s. (A plain class:
    the case loader runs this file without registering it as a module, which ``dataclass`` needs.)"""

    def __init__(self, asm: fm.Assembly, v0: np.ndarray, signal: R.Signal, dt: float, n_steps: int,
                 client: Any = None) -> None:
        self.asm, self.v0, self.signal, self.dt, self.n_steps = asm, v0, signal, dt, n_steps
        self.client = client                              # dask.distributed.Client for the FD re-runs
        self.runs: dict[float, tuple] = {}                # s -> (recorded run, its ResponseValue F)
        self.values: dict[float, float] = {}              # s -> F
        self.gradients: dict[float, float] = {}           # s -> dF/ds
        self.forward = self.adjoint = 0                   # forward runs, adjoint sweeps
        self.cpu = {"forward": 0.0, "adjoint": 0.0}       # their CPU s

    @classmethod
    def baseline(cls) -> "Design":
        """Slider-crank A at s = 1 with the run's steps (module docstring)."""
        asm, v0, nodes = build(N_ELEMENTS, OMEGA, 0.0, "cubic")
        rod = [int(n) for n in nodes]
        signal = R.chord_deflection(asm, rod[0], rod[N_ELEMENTS // 2], rod[-1], scale=ROD)
        return cls(asm, v0, signal, CRANK_TURN / OMEGA / STEPS, int(round(STEPS * QUICK_TURN / CRANK_TURN)))

    def model(self, s: float) -> fm.Model:
        """The model with the rod's diameter scaled by s."""
        model = self.asm.model
        for label, e in EXPONENTS.items():
            model = P.parameter(design.section_property("rod", label)).apply(model, s ** e)
        return model

    def _store(self, s: float, value: float, cpu: float) -> None:
        self.values[s] = value
        self.forward += 1
        self.cpu["forward"] += cpu

    def peak(self, s: float) -> float:
        """F(s): the first peak of the mid-span deflection / L (one forward run per new s)."""
        if s not in self.values:
            clock = time.thread_time()
            run = record(fm.Assembly(self.model(s)), self.dt, self.n_steps * self.dt, v0=self.v0, newton=NEWTON)
            self.runs[s] = run, _response(self.signal, trajectory(run))
            self._store(s, self.runs[s][1].value, time.thread_time() - clock)
        return self.values[s]

    def gradient(self, s: float) -> float:
        """dF/ds by one adjoint sweep over the run of s (chain rule of the module docstring)."""
        if s not in self.gradients:
            self.peak(s)
            run, value = self.runs[s]
            clock = time.thread_time()
            params = [P.parameter(design.section_property("rod", label)) for label in EXPONENTS]
            g = adjoint_gradient(run, params, [value]).gradient[0]
            self.adjoint += 1
            self.gradients[s] = float(np.dot(list(EXPONENTS.values()), g) / s)
            self.cpu["adjoint"] += time.thread_time() - clock
        return self.gradients[s]

    def fd_gradient(self, s: float) -> float:
        """dF/ds by the central difference of two re-runs (counted as forward runs), run as tasks on the
        Dask ``client`` side by side if there is one."""
        points = (s + FD_STEP, s - FD_STEP)
        new = [x for x in points if x not in self.values]
        if self.client is not None and new:
            for x, (value, cpu) in zip(new, self.client.gather(self.client.map(_peak_task, new, pure=False))):
                self._store(x, value, cpu)
        return (self.peak(points[0]) - self.peak(points[1])) / (2.0 * FD_STEP)


def _peak_task(s: float) -> tuple[float, float]:
    """F(s) and the CPU s of its forward run, from a model built afresh: a Dask task's only input is s."""
    problem = Design.baseline()
    return problem.peak(s), problem.cpu["forward"]


def _response(signal: R.Signal, traj: R.Trajectory) -> R.ResponseValue:
    """F: the first peak of the signal, as the benchmark finds it (its window and fraction)."""
    return R.first_peak(signal, traj, window=PEAK_WINDOW / OMEGA, fraction=PEAK_FRACTION)


def optimise(problem: Design, f_max: float, gradient) -> dict:
    """SLSQP from s = 1 on mass ratio s^2 with c(s) = 1 - F(s) / f_max >= 0; ``gradient(s)`` gives dF/ds."""
    clock, wall = time.process_time(), time.perf_counter()
    start = problem.forward, problem.adjoint
    res = minimize(lambda x: x[0] ** 2, [1.0], jac=lambda x: np.array([2.0 * x[0]]), method="SLSQP",
                   bounds=[S_BOUNDS], options={"ftol": FTOL, "maxiter": 50},
                   constraints=[{"type": "ineq", "fun": lambda x: np.array([1.0 - problem.peak(float(x[0])) / f_max]),
                                 "jac": lambda x: np.array([[-gradient(float(x[0])) / f_max]])}])
    s = float(res.x[0])
    dm, dc = 2.0 * s, -gradient(s) / f_max
    lam = float(res.multipliers[0])                   # SLSQP's multiplier of the constraint
    return {"success": bool(res.success), "message": str(res.message), "s": s, "mass_ratio": s * s,
            "F": problem.peak(s), "c": 1.0 - problem.peak(s) / f_max, "lambda": lam,
            "kkt_stationarity": abs(dm - lam * dc) / abs(dm), "iterations": int(res.nit),
            "evaluations": {"function": int(res.nfev), "gradient": int(res.njev)},
            "forward_runs": problem.forward - start[0], "adjoint_sweeps": problem.adjoint - start[1],
            "cpu_s": time.process_time() - clock, "wall_s": time.perf_counter() - wall,
            "cpu_s_forward_runs": problem.cpu["forward"], "cpu_s_adjoint_sweeps": problem.cpu["adjoint"]}


def rerun_peak(problem: Design, s: float) -> float:
    """F(s) by a plain ``flexmb.integrate`` of the applied design, its peak by the benchmark's finder."""
    asm = fm.Assembly(problem.model(s))
    h = fm.integrate(asm, problem.dt, problem.n_steps * problem.dt, v0=problem.v0, newton=NEWTON, progress=False)
    return first_maximum(OMEGA * np.array(h.t), midspan_deflection(h.positions()))[1]


def run(quick: bool = False) -> CaseReport:
    adj_problem = Design.baseline()
    asm, n_steps = adj_problem.asm, adj_problem.n_steps
    report = CaseReport(CASE, n_dof=asm.n_dof)
    f_max = BOUND_FRACTION * adj_problem.peak(1.0)
    adj = optimise(adj_problem, f_max, adj_problem.gradient)
    adj["forward_runs"] += 1                          # the baseline run that set the bound
    fd_problem = Design.baseline()
    fd_problem.values[1.0] = f_max / BOUND_FRACTION   # the same baseline (counted above, and below)
    fd = optimise(fd_problem, f_max, fd_problem.fd_gradient)
    fd["forward_runs"] += 1
    # the same FD study with each gradient's two re-runs side by side on a local (threaded) Dask client
    with Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as client:
        dask_problem = Design.baseline()
        dask_problem.client, dask_problem.values[1.0] = client, f_max / BOUND_FRACTION
        dask_fd = optimise(dask_problem, f_max, dask_problem.fd_gradient)
    dask_fd["forward_runs"] += 1
    clock = time.process_time()
    rerun = rerun_peak(adj_problem, adj["s"])
    rerun_cpu = time.process_time() - clock

    for name, res in (("adjoint", adj), ("FD", fd)):
        report.add(Check.at_least(f"{name} gradients: SLSQP converged (success = 1)", float(res["success"]), 1.0,
                                  f"scipy SLSQP: {res['message']}"))
    report.add(Check.at_most("adjoint optimum: KKT stationarity |m' - lambda c'| / |m'|", adj["kkt_stationarity"],
                             KKT_TOL, "exact: KKT conditions (SLSQP's multiplier lambda)"))
    report.add(Check.at_least("adjoint optimum: multiplier lambda >= 0 (dual feasibility)", adj["lambda"], 0.0,
                              "exact: KKT conditions"))
    report.add(Check.at_most("adjoint optimum: constraint |1 - F(s*) / F_max|", abs(adj["c"]), ACTIVE_TOL,
                             "exact: KKT conditions (active bound)"))
    report.add(Check.close("adjoint optimum: F(s*) / L, re-run by flexmb.integrate", rerun, adj["F"], RERUN_TOL,
                           "plain forward run of the applied design, benchmark's peak finder"))
    report.add(Check.close("adjoint optimum s* vs FD-gradient optimum s*", adj["s"], fd["s"], SAME_TOL,
                           f"SLSQP on central differences of re-runs (h = {FD_STEP:.0e})"))
    report.add(Check.close("FD optimum s*: Dask client vs serial", dask_fd["s"], fd["s"], DASK_TOL,
                           "the serial FD-gradient optimisation (same runs, other order)"))
    report.add(Check.at_most("forward runs: adjoint optimisation (each <= 1 adjoint sweep)",
                             float(adj["forward_runs"]), float(fd["forward_runs"]),
                             "forward runs of the FD-gradient optimisation (bound)"))

    report.n_steps = (adj["forward_runs"] + 2 * fd["forward_runs"] - 1) * n_steps
    report.info.update({
        "model": f"slider-crank A (omega = {OMEGA} rad/s, {N_ELEMENTS} cubic-mass second-order Beam2D elements)",
        "scheme": "mid-point", "dt_s": adj_problem.dt, "steps": n_steps, "crank_turn_simulated_rad": QUICK_TURN,
        "newton": "residual_tol 1e-14 (round-off stop)", "rod_mass_kg_at_s_1": ROD_MASS,
        "design": "diameter scale s: EA, rho_A x s^2; EI, rho_I x s^4", "bounds_s": S_BOUNDS,
        "constraint": f"F(s) <= F_max = {BOUND_FRACTION} F(1)", "F_1": f_max / BOUND_FRACTION, "F_max": f_max,
        "adjoint": adj, "finite_differences": {**fd, "step_h": FD_STEP},
        "finite_differences_dask": {**dask_fd, "client": "dask.distributed.Client(processes=False, n_workers=1, "
                                    "threads_per_worker=2)"}, "rerun_F": rerun, "rerun_cpu_s": rerun_cpu,
        "rod_mass_kg_at_optimum": ROD_MASS * adj["mass_ratio"],
        "cpu_s_per_run": {"forward (adjoint optimisation)": adj_problem.cpu["forward"] / adj["forward_runs"],
                          "adjoint sweep": adj_problem.cpu["adjoint"] / adj["adjoint_sweeps"],
                          "forward (FD optimisation)": fd_problem.cpu["forward"] / (fd["forward_runs"] - 1)},
        "forward_run_counts": {"adjoint": f"{adj['forward_runs']} forward + {adj['adjoint_sweeps']} adjoint sweeps",
                               "finite_differences": f"{fd['forward_runs']} forward (serial)"},
    })
    report.figure = _figure(adj_problem, fd_problem, adj, fd, f_max)
    return report


def _figure(adj_problem: Design, fd_problem: Design, adj: dict, fd: dict, f_max: float):
    from flexmb.viz.plots import legend_outside, panels

    fig, (ax, ax2) = panels(2, "Slider-crank A: rod diameter for minimum mass, first peak of mid-span deflection "
                            f"<= {BOUND_FRACTION} x baseline")
    for problem, marker, label in ((fd_problem, "x", "designs run, FD study (with re-runs)"),
                                   (adj_problem, "o", "designs run, adjoint")):
        s = np.array(sorted(problem.values))
        ax.plot(s, [problem.values[x] / f_max for x in s], marker, ms=6, mfc="none", label=label)
    ax.axhline(1.0, color="k", lw=0.7, ls=":", label="bound F_max")
    ax.axvline(adj["s"], color="C3", lw=0.8, label=f"optimum s* = {adj['s']:.6f}")
    ax.set_xlabel("rod diameter scale s")
    ax.set_ylabel("first peak F(s) / F_max")
    ax.grid(True, alpha=0.3)
    legend_outside(ax, 7)
    ax2.bar(["adjoint", "finite differences"], [adj["forward_runs"], fd["forward_runs"]], color=["C0", "C1"],
            label="forward runs")
    ax2.bar(["adjoint"], [adj["adjoint_sweeps"]], bottom=[adj["forward_runs"]], color="C2", label="adjoint sweeps")
    ax2.set_ylabel("runs to the optimum")
    ax2.grid(True, axis="y", alpha=0.3)
    legend_outside(ax2, 7)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
