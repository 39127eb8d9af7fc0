"""Cost of one Newton iteration of a time step against the model size, split into its parts.

Models (mid-point scheme, ``flexmb.integrate``):

* ``spin-up``: Simo's spin-up beam (:mod:`flexmb.validation.spin_up`), 2 cubic-mass ``Beam2D``
  elements, prescribed hub angle, dt = 0.02 s (6 free DOFs);
* ``slider-crank``: Meijaard's slider-crank A (:mod:`flexmb.validation.slider_crank`), 2 cubic-mass
  elements, 2560 steps per 8 rad;
* ``frame N``: a planar frame of ``Beam2D`` elements (steel-like sections, cubic mass unless
  ``--mass`` says otherwise), a square grid of columns and beams with its bottom row clamped,
  falling under gravity with dt = 1e-3 s, with about N DOFs (1e2 ... 1e5).

For each model a run of ``--steps`` steps (at least 50 for the small models and 20 for frames
below 5000 DOFs), after one warm-up step, gives the cost per Newton iteration: the CPU time of
the whole ``integrate`` call (its start checks, every step and the recording of every step)
divided by the iterations, so other processes on a shared machine count less than in wall
time. ``set-up`` is the CPU time of ``integrate`` over one step minus one step's share of the
run: what every call pays once (argument and start checks, the result's layout, the first
record). The parts are then timed on the state of the run's last step, each as the median of
``--repeat`` calls, and weighted by how often a step uses them (per iteration):

* ``newton``: the Newton solves. The small models (one planar beam group, no joints, dense LU)
  solve a step in one compiled call (``MidPoint.solve_step``, kernels, assembly, LU and Newton's
  loop together), timed as such; the others call the element kernels, the assembly and the
  solver from Python's ``newton_solve``, whose parts are timed and printed as ``kernel`` (the
  mid-point force and tangent per group and the cubic mass's mid-point inertia; modified
  Newton's residual-only iterations with the residual-only forms), ``assembly`` (the scatter of
  their output into the global vector and the CSC data) and ``solve`` (the factorisations, the
  first of a step with the pivot test, and the solves); ``newton`` is their sum there;
* ``record``: recording a step (``TimeHistory.record``: energies, angular momentum, section
  forces and the copies of the state);
* ``rest``: the remainder (the step loop: predictor, prescribed values, the end-of-step state and
  work; for the frames also Newton's own logic and the scheme's kinematics around the kernels).

Frames from 200 DOFs on take modified Newton (``MODIFIED_NEWTON_MIN_SIZE``), whose residual-only
iterations need the cubic mass's ``mid_point_inertia(..., tangent=False)``; ``--mass consistent``
measures the loop without the cubic mass.

Run ``python benchmarks/bench_newton_iteration.py [--sizes 1e2 1e3 1e4 1e5] [--steps 3]``
(``--sizes`` with no value: the small models only); ``--solvers`` times the linear solvers alone
(dense compiled LU, SuperLU with each column ordering) on the frames' Jacobians, the measurement
behind ``DENSE_LIMIT`` and ``SPARSE_ORDERING`` in :mod:`flexmb.integrators.newton`. Prints tables;
nothing is asserted.
"""
from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")              # one core, as the solver loop uses it

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

try:
    import flexmb as fm
except ModuleNotFoundError:                   # run from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import flexmb as fm

from flexmb.integrators import newton as newton_module
from flexmb.integrators.newton import Factorization


def cpu_median(call: Callable[[], object], repeat: int) -> float:
    """Median CPU time (s) of one call, over ``repeat`` timings of enough calls to last ~20 ms."""
    call()
    start = time.process_time()
    call()
    once = max(time.process_time() - start, 1e-6)
    inner = max(1, int(0.02 / once))
    times = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(inner):
            call()
        times.append((time.process_time() - start) / inner)
    return statistics.median(times)


# ------------------------------------------------------------------ models
def spin_up_model() -> tuple[fm.Assembly, float, float, dict]:
    from flexmb.validation.spin_up import build

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))
    from spin_up_simo import PARAMETERS

    asm, _ = build(PARAMETERS, 2)
    return asm, 0.02, 0.0, {}


def slider_crank_model() -> tuple[fm.Assembly, float, float, dict]:
    from flexmb.validation.slider_crank import build

    omega = 124.8
    asm, v0, _ = build(2, omega)
    t_end = 8.0 / omega
    return asm, t_end / 2560, 0.0, {"v0": v0}


def frame_model(n_dof: float, mass: str) -> tuple[fm.Assembly, float, float, dict]:
    """Square grid frame with about n_dof DOFs: side nodes n, 3 n^2 DOFs, 2 n (n - 1) elements."""
    n = max(2, int(round(np.sqrt(n_dof / 3.0))))
    spacing = 3.0                                                   # m
    xy = np.stack(np.meshgrid(np.arange(n) * spacing, np.arange(n) * spacing, indexing="xy"), -1).reshape(-1, 2)
    model = fm.Model(dim=2)
    nodes = model.add_nodes(xy)
    grid = nodes.reshape(n, n)                                      # [row (height), column]
    beams = np.c_[grid[:, :-1].ravel(), grid[:, 1:].ravel()]
    columns = np.c_[grid[:-1, :].ravel(), grid[1:, :].ravel()]
    model.add_beam2d(np.r_[beams, columns], EA=2.1e11 * 5e-3, EI=2.1e11 * 5e-5, rho_A=7850 * 5e-3,
                     rho_I=7850 * 5e-5, mass=mass, name="frame")
    for node in grid[0]:
        model.fix(node)
    model.set_gravity([0.0, -9.81])
    return fm.Assembly(model), 1e-3, 0.0, {}


# -------------------------------------------------------------- measuring
def part_times(asm: fm.Assembly, s, u1: np.ndarray, dt: float, residual_only: bool, repeat: int,
               solver: str = "auto") -> tuple[float, float, float, float, float, float]:
    """CPU seconds of one mid-point Newton iteration's parts from state ``s`` to the end-point guess
    u1: element and inertia kernels with tangent, without (``residual_only``, else 0), assembly,
    LU with and without the pivot test by the sparse ``solver`` (NewtonSettings'), and one solve
    (medians of ``repeat``)."""
    X, ue0, ue1 = asm._X, asm.gather(s.u), asm.gather(u1)
    ed = asm._edofs
    stretch = s.stretch if s.stretch is not None else np.zeros_like(s.u)

    def kernels(tangent: bool):
        out = [g.mid_point_force_and_tangent(x, a, b) if tangent else g.mid_point_force(x, a, b)
               for g, x, a, b in zip(asm.groups, X, ue0, ue1)]
        inertia = [k.mid_point_inertia(s.u[ed[i]], u1[ed[i]], s.v[ed[i]], stretch[ed[i][:, [2, 5]]], dt,
                                       tangent=tangent) for i, k in asm.configuration_masses]
        return out, inertia

    out, inertia = kernels(True)

    def assembly():
        f = asm.vector([o[0] for o in out] + [F for F, _ in inertia])
        data = asm.matrix_data([o[1] for o in out] + [J for _, J in inertia])
        return f, data + (2.0 / dt**2) * asm.mass_data

    J = asm.free_matrix(assembly()[1]).tocsc()
    b = np.ones(J.shape[0])
    times = (cpu_median(lambda: kernels(True), repeat),
             cpu_median(lambda: kernels(False), repeat) if residual_only else 0.0,
             cpu_median(assembly, repeat),
             cpu_median(lambda: Factorization(J, pivots=True, solver=solver), repeat),
             cpu_median(lambda: Factorization(J, pivots=False, solver=solver), repeat))
    # made after the others: PARDISO solves with the latest factorisation of a pattern only
    lu = Factorization(J, pivots=False, solver=solver)
    return (*times, cpu_median(lambda: lu.solve(b), repeat))


def measure(label: str, asm: fm.Assembly, dt: float, t0: float, extra: dict, steps: int, repeat: int) -> dict:
    t_start = t0
    kw = dict(v0=extra.get("v0"), t0=t_start, progress=False, keep_newton_logs=True)
    fm.integrate(asm, dt, t_start + dt, **kw)                        # warm-up (compilation, caches)
    cpu = time.process_time()
    h = fm.integrate(asm, dt, t_start + steps * dt, **kw)
    cpu = time.process_time() - cpu
    one_step = statistics.median(_cpu(lambda: fm.integrate(asm, dt, t_start + dt, **kw)) for _ in range(repeat))
    logs = h.newton_logs
    iterations = sum(log.iterations for log in logs)
    factorizations = sum(getattr(log, "factorizations", log.iterations) for log in logs)
    # residual evaluations: full Newton evaluates residual and tangent iterations + 1 times per
    # step; modified Newton the tangent once per factorisation and the residual alone otherwise
    modified = any(getattr(log, "factorizations", log.iterations) < log.iterations for log in logs)
    tangent_evals = factorizations if modified else iterations + len(logs)
    residual_evals = iterations if modified else 0
    per = 1.0 / iterations

    # the parts, at the last state of the run and the next step's predictor
    from flexmb.integrators.schemes import MidPoint

    scheme = MidPoint(asm)
    s = scheme.initial_state(h.t[-1], h.u[-1], h.v[-1])
    s.stretch = h.stretch[-1] if np.size(h.stretch[-1]) else None
    u1 = scheme.predict(s, dt)
    u1[asm.dofs.prescribed] = asm.prescribed_values(s.t + dt)
    history = fm.TimeHistory("mid-point", dt, fm.ModelLayout.from_assembly(asm))
    record = cpu_median(lambda: history.record(asm, s, 2), repeat) * len(logs) * per
    row = {"model": label, "dof": asm.n_free, "elements": sum(g.n_elements for g in asm.groups),
           "its/step": iterations / len(logs), "LU/step": factorizations / len(logs), "total": cpu * per,
           "set-up": one_step - cpu / steps, "record": record}
    settings = fm.NewtonSettings()
    if scheme.solve_step(s, dt, u1.copy(), settings, asm.characteristic_length) is not None:
        row["newton"] = cpu_median(lambda: scheme.solve_step(s, dt, u1.copy(), settings, asm.characteristic_length),
                                   repeat) * len(logs) * per
        row["rest"] = row["total"] - row["newton"] - record
        return row

    t_kt, t_kr, t_as, t_fp, t_ff, t_so = part_times(asm, s, u1, dt, modified, repeat)
    row["kernel"] = (tangent_evals * t_kt + residual_evals * t_kr) * per
    row["assembly"] = (tangent_evals + residual_evals) * t_as * per          # residual-only: over-estimate
    row["solve"] = (len(logs) * t_fp + (factorizations - len(logs)) * t_ff + iterations * t_so) * per
    row["newton"] = row["kernel"] + row["assembly"] + row["solve"]
    row["rest"] = row["total"] - row["newton"] - record
    return row


def _cpu(call: Callable[[], object]) -> float:
    """CPU time (s) of one call."""
    start = time.process_time()
    call()
    return time.process_time() - start


COLUMNS = ("total", "newton", "kernel", "assembly", "solve", "record", "rest")


def print_table(rows: list[dict]) -> None:
    print(f"{'model':>14s} {'DOF':>7s} {'elem':>7s} {'its/step':>8s} {'LU/step':>7s} {'set-up':>8s} | per Newton "
          "iteration (us, CPU): " + " ".join(f"{c:>8s}" for c in COLUMNS))
    for r in rows:
        parts = " ".join(f"{1e6 * r[k]:8.1f}" if k in r else f"{'-':>8s}" for k in COLUMNS)
        print(f"{r['model']:>14s} {r['dof']:7d} {r['elements']:7d} {r['its/step']:8.2f} {r['LU/step']:7.2f} "
              f"{1e3 * r['set-up']:6.2f}ms | {' ' * 21}{parts}")
    print("newton: the Newton solves (one compiled call per step where it applies, '-': its parts are inside it; "
          "else kernel + assembly + solve);\nrecord: recording the steps; rest: the step loop around them (for the "
          "frames also Newton's own logic); set-up: what one integrate call costs besides its steps.")


def solver_table(sizes: list[float], repeat: int) -> None:
    """Dense compiled LU against SuperLU with each column ordering, on frame Jacobians."""
    import scipy.sparse.linalg as spla

    print(f"\n{'DOF':>7s} {'dense LU':>10s} " + " ".join(f"{o:>14s}" for o in ORDERINGS) + "   (ms, CPU: equilibrate + LU + solve)")
    for size in sizes:
        asm, dt, _, _ = frame_model(size, "consistent")
        rng = np.random.default_rng(0)
        u1 = 1e-3 * rng.standard_normal(asm.n_dof)
        data = asm.mid_point_force_and_tangent(np.zeros(asm.n_dof), u1)[1] + (2.0 / dt**2) * asm.mass_data
        J = asm.free_matrix(data).tocsc()
        b = np.ones(J.shape[0])
        row = []
        if J.shape[0] <= 2000:
            limit = newton_module.DENSE_LIMIT
            newton_module.DENSE_LIMIT = J.shape[0]
            row.append(cpu_median(lambda: Factorization(J).solve(b), repeat))
            newton_module.DENSE_LIMIT = limit
        else:
            row.append(float("nan"))
        B = newton_module.equilibrate(J)[0]
        for ordering in ORDERINGS:
            row.append(cpu_median(lambda: spla.splu(B, permc_spec=ordering).solve(b), repeat))
        print(f"{J.shape[0]:7d} " + " ".join(f"{1e3 * t:10.3f}" if i == 0 else f"{1e3 * t:14.3f}"
                                             for i, t in enumerate(row)))


ORDERINGS = ("COLAMD", "MMD_AT_PLUS_A", "MMD_ATA", "NATURAL")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="*", default=[1e2, 1e3, 1e4, 1e5])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--mass", default="cubic", choices=("cubic", "consistent", "lumped"))
    parser.add_argument("--solvers", action="store_true", help="time the linear solvers alone")
    parser.add_argument("--no-small", action="store_true", help="skip the spin-up and slider-crank")
    args = parser.parse_args()
    if args.solvers:
        solver_table(args.sizes, args.repeat)
        return
    rows = []
    if not args.no_small:
        rows.append(measure("spin-up", *spin_up_model(), steps=max(args.steps, 50), repeat=args.repeat))
        rows.append(measure("slider-crank", *slider_crank_model(), steps=max(args.steps, 50), repeat=args.repeat))
    for size in args.sizes:
        asm, dt, t0, extra = frame_model(size, args.mass)
        steps = args.steps if asm.n_dof > 5000 else max(args.steps, 20)
        rows.append(measure(f"frame {size:.0e}", asm, dt, t0, extra, steps, args.repeat))
    print_table(rows)


if __name__ == "__main__":
    main()
