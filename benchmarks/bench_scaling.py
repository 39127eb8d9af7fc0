"""Speed at scale (issue 31): flexmb's time step against the model size, side by side with Exudyn.

1. Simo's spin-up beam (:mod:`flexmb.validation.spin_up`, ``build`` with N cubic-mass ``Beam2D``
   elements, prescribed hub angle), mid-point scheme, dt = 0.01 s, 100 steps from rest, for
   N = 16, 64, 256, 1024, 4096 (``--largest 16384`` adds 16384). Per N: unknowns, seconds per
   step (wall and CPU of one ``flexmb.integrate`` call over the 100 steps, after a three-step
   warm-up call that loads the compiled kernels of a step's first and later iterations),
   Newton iterations per step, seconds per iteration,
   microseconds per unknown per step, and where the CPU time goes per step:

   * ``kernels``: the element kernels (mid-point force and tangent of the beam group, the cubic
     mass's mid-point inertia; the residual-only forms for modified Newton's later iterations);
   * ``assembly``: the scatter of their output into the global vector and the CSC data;
   * ``factor``: the LU factorisations (the first of a step with the pivot test);
   * ``solve``: the triangular solves;
   * ``bookkeeping``: the rest of the integrate call (Newton's logic, the step loop, predictor,
     prescribed values, recording every step).

   The parts are timed alone (CPU, median of ``--repeat``) on the state of the run's last step
   and weighted by how often the run used them; ``bookkeeping`` is the total minus the others.
   The small models (up to :data:`~flexmb.integrators.newton.DENSE_LIMIT` unknowns) solve a step
   in one compiled call (kernels, assembly, dense LU and Newton's loop together), printed as
   ``kernels`` with ``-`` for assembly, factor and solve.

   With ``--exudyn PYTHON`` (an interpreter of an environment with Exudyn, e.g. one made by
   ``python3 -m venv /work/exudyn_venv && /work/exudyn_venv/bin/pip install exudyn numpy``; never a
   dependency of flexmb) the peers' script ``spinup_simo.py --element geb2d --elements N --dt 0.01
   --tend 1.0 --newtonatol ATOL`` runs in a child process for the same N (``--peers DIR``, default
   ``/work/shared/peers``); its own ``wall_s`` (``mbs.SolveDynamic`` alone, median of
   ``--exudyn-repeat`` runs), Newton iterations, Jacobians and whether it reached 1 s are printed
   next to flexmb's, with both codes' lateral tip deflection at the end (they agree to 4 digits).
   A failed Exudyn run's time covers only the steps it took. ``--exudyn-atol`` (N, default 1e-3):
   with the peers' default 1e-5 N, Exudyn stops at 0.13 / 0.08 / 0.05 s for 256 / 1024 / 4096
   elements (its residual's round-off floor lies above 1e-5 N there); with 1e-3 N every size
   reaches 1 s with one Jacobian for the run, the same tip deflection at 16-64 elements as with
   1e-5 N to 1e-9 m.

2. flexmb alone on larger models, a few steps each (``--big-steps``, default 2): a grillage of
   ``Beam3D`` elements (a square grid in the x-y plane clamped along x = 0, falling under gravity,
   dt = 1 ms) and the clamped shell plate of ``bench_shell.py`` (``Shell3``), each at about 1e4
   and 1e5 unknowns (``--huge`` adds 1e6: minutes and several GB). Printed as above, with the
   process's peak resident memory after the model (``ru_maxrss``; the sizes grow, so it is
   the largest model's so far).

``--force-tol F`` (N, default 0: Newton to the round-off of the unknowns) gives flexmb an absolute
residual tolerance (``NewtonSettings(force_tol=F)``); with F equal to ``--exudyn-atol`` both codes
stop their Newton iterations on the same absolute test, which compares their steps at equal
settings (the tip deflections printed show what it costs in accuracy).

``--fresh-lu`` starts every step with its own LU (no factorisation kept from the step before,
:class:`~flexmb.integrators.newton.KeptFactorization`), to compare. Run
``python benchmarks/bench_scaling.py [--exudyn /work/exudyn_venv/bin/python] [--skip-big | --skip-spin-up]``.
Prints tables; nothing is asserted.
"""
from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")              # one core, as the solver loop uses it

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    import flexmb as fm
except ModuleNotFoundError:                   # run from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import flexmb as fm

from bench_newton_iteration import cpu_median, part_times
from bench_shell import clamped_plate

from flexmb.integrators import newton as newton_module
from flexmb.integrators.schemes import MidPoint

SPIN_UP_SIZES = (16, 64, 256, 1024, 4096)
DT, STEPS = 0.01, 100                          # s, steps of the spin-up runs (t_end = 1 s)


# ------------------------------------------------------------------ models
def spin_up(n_elements: int) -> tuple[fm.Assembly, Callable[[fm.TimeHistory], float]]:
    """Simo's spin-up beam with n cubic-mass Beam2D elements (validation case spin-up-simo) and the
    function giving a history's lateral tip deflection (m) at its end."""
    from flexmb.validation.spin_up import build, tip_deflection

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))
    from spin_up_simo import PARAMETERS

    asm, nodes = build(PARAMETERS, n_elements)
    return asm, lambda h: float(tip_deflection(PARAMETERS, np.array(h.t[-1:]), h.positions()[-1:, nodes[-1]])[0])


def grillage(n_dof: float) -> fm.Assembly:
    """Square grid of steel Beam3D elements (3 m bays) in the x-y plane, its nodes at x = 0
    clamped, under gravity -z: 6 n^2 DOFs for n nodes a side."""
    n = max(2, int(round(np.sqrt(n_dof / 6.0))))
    xy = np.stack(np.meshgrid(np.arange(n) * 3.0, np.arange(n) * 3.0, indexing="xy"), -1).reshape(-1, 2)
    model = fm.Model(dim=3)
    nodes = model.add_nodes(np.c_[xy, np.zeros(len(xy))])
    grid = nodes.reshape(n, n)                                      # [row (y), column (x)]
    along_x = np.c_[grid[:, :-1].ravel(), grid[:, 1:].ravel()]
    along_y = np.c_[grid[:-1, :].ravel(), grid[1:, :].ravel()]
    area, inertia, E, G, rho = 5e-3, 5e-5, 2.1e11, 8.1e10, 7850.0   # m^2, m^4, Pa, Pa, kg/m^3
    model.add_beam3d(along_x, EA=E * area, GJ=G * 2 * inertia, EI_y=E * inertia, EI_z=E * inertia, rho_A=rho * area,
                     rho_I=(rho * 2 * inertia, rho * inertia, rho * inertia), y_axis=(0.0, 1.0, 0.0), name="along x")
    model.add_beam3d(along_y, EA=E * area, GJ=G * 2 * inertia, EI_y=E * inertia, EI_z=E * inertia, rho_A=rho * area,
                     rho_I=(rho * 2 * inertia, rho * inertia, rho * inertia), y_axis=(-1.0, 0.0, 0.0), name="along y")
    for node in grid[:, 0]:
        model.fix(int(node))
    model.set_gravity([0.0, 0.0, -9.81])
    return fm.Assembly(model)


def plate(n_dof: float) -> fm.Assembly:
    """bench_shell.py's clamped Shell3 plate with about n_dof DOFs (6 per node, (c + 1)^2 nodes)."""
    cells = max(2, int(round(np.sqrt(n_dof / 6.0))) - 1)
    return fm.Assembly(clamped_plate(cells))


# -------------------------------------------------------------- measuring
def measure(label: str, asm: fm.Assembly, dt: float, steps: int, repeat: int,
            tip: Callable[[fm.TimeHistory], float] | None = None, force_tol: float = 0.0) -> dict:
    """Run ``steps`` steps from rest after a three-step warm-up; the totals and the split (s per step);
    with ``tip``, the run's tip deflection at its end (m); ``force_tol`` (N): NewtonSettings'."""
    settings = fm.NewtonSettings(force_tol=force_tol)
    kw = dict(progress=False, newton=settings)
    # warm-up: the kernels compiled or loaded (a first step's and the later steps' paths, the kept LU)
    fm.integrate(asm, dt, 3 * dt, **kw)
    # timed as a user runs it: without Newton logs (a small model's steps then run in one compiled
    # loop, which keeping every step's log switches off); the logs from the same run again
    wall, cpu = time.perf_counter(), time.process_time()
    h = fm.integrate(asm, dt, steps * dt, **kw)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    logs = fm.integrate(asm, dt, steps * dt, keep_newton_logs=True, **kw).newton_logs
    iterations = sum(log.iterations for log in logs)
    factorizations = sum(log.factorizations for log in logs)
    modified = factorizations < iterations
    tangent_evals = factorizations if modified else iterations + len(logs)
    residual_evals = iterations + len(logs) - tangent_evals if modified else 0
    per = 1.0 / len(logs)
    row = {"model": label, "unknowns": asm.n_free, "steps": len(logs), "wall": wall * per, "cpu": cpu * per,
           "its": iterations * per, "LU": factorizations * per,
           "maxrss_MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}
    if tip is not None:
        row["tip"] = tip(h)

    scheme = MidPoint(asm)
    s = scheme.initial_state(h.t[-2], h.u[-2], h.v[-2])
    s.stretch = h.stretch[-2] if np.size(h.stretch[-2]) else None
    u1 = scheme.predict(s, dt)                                      # the last step's start point
    u1[asm.dofs.prescribed] = asm.prescribed_values(s.t + dt)
    if scheme.solve_step(s, dt, u1.copy(), settings, asm.characteristic_length) is not None:
        row["kernels"] = cpu_median(lambda: scheme.solve_step(s, dt, u1.copy(), settings,
                                                              asm.characteristic_length), repeat)
        row["bookkeeping"] = row["cpu"] - row["kernels"]
        return row

    t_kt, t_kr, t_as, t_fp, t_ff, t_so = part_times(asm, s, u1, dt, modified, repeat)
    if scheme._compiled_plan() is not None:
        # the one-call residual: kernels and their scatter in one call, the start-of-step part
        # computed at a step's first call (made here first) and kept for its later ones
        scheme.residual(s, dt, u1, True)
        t_kt = cpu_median(lambda: scheme.residual(s, dt, u1, True), repeat)
        t_kr = cpu_median(lambda: scheme.residual(s, dt, u1, False), repeat)
    else:
        row["assembly"] = (tangent_evals + residual_evals) * t_as * per       # residual-only: over-estimate
    row["kernels"] = (tangent_evals * t_kt + residual_evals * t_kr) * per
    tested = sum(np.isfinite(log.smallest_pivots).sum() for log in logs)    # the LUs with the pivot test
    row["factor"] = (tested * t_fp + (factorizations - tested) * t_ff) * per
    row["solve"] = iterations * t_so * per
    row["bookkeeping"] = row["cpu"] - row["kernels"] - row.get("assembly", 0.0) - row["factor"] - row["solve"]
    return row


def exudyn(python: str, peers: Path, n_elements: int, repeat: int, atol: float) -> dict:
    """The peers' Exudyn spin-up (geb2d, dt 0.01 s, 1 s, Newton's absolute residual tolerance
    ``atol`` in N): median wall_s of ``repeat`` child runs."""
    runs = []
    for _ in range(repeat):
        out = subprocess.run([python, str(peers / "spinup_simo.py"), "--element", "geb2d", "--elements",
                              str(n_elements), "--dt", str(DT), "--tend", str(DT * STEPS), "--newtonatol", str(atol)],
                             capture_output=True, text=True, cwd=peers, check=False)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))      # the last line is the JSON
    last = runs[-1]
    return {"wall": statistics.median(r["wall_s"] for r in runs), "success": last["success"],
            "t_reached": last.get("t_reached", DT * STEPS), "iterations": last["newton_iterations"],
            "jacobians": last["jacobians"], "dof": last["dof"], "tip": last["tip_deflection_end"]}


# --------------------------------------------------------------- printing
PARTS = ("kernels", "assembly", "factor", "solve", "bookkeeping")


def print_rows(rows: list[dict], peers: dict[int, dict] | None = None, memory: bool = False) -> None:
    head = (f"{'model':>18s} {'unknowns':>9s} {'s/step':>9s} {'CPU/step':>9s} {'its/step':>8s} {'LU/step':>7s} "
            f"{'s/it':>9s} {'us/unk/step':>11s} | CPU ms/step: " + " ".join(f"{p:>11s}" for p in PARTS))
    if peers:
        head += " | Exudyn: s/step  its  jac  reached  ratio | tip at end (m): flexmb     Exudyn"
    if memory:
        head += " | maxrss MB"
    print(head)
    for r in rows:
        parts = " ".join(f"{1e3 * r[p]:11.3f}" if p in r else f"{'-':>11s}" for p in PARTS)
        line = (f"{r['model']:>18s} {r['unknowns']:9d} {r['wall']:9.2e} {r['cpu']:9.2e} {r['its']:8.2f} "
                f"{r['LU']:7.2f} {r['cpu'] / r['its']:9.2e} {1e6 * r['cpu'] / r['unknowns']:11.3f} | "
                f"{' ' * 13}{parts}")
        if peers and r.get("n") in peers:
            e = peers[r["n"]]
            steps = max(1, round(e["t_reached"] / DT))
            line += (f" | {' ' * 7}{e['wall'] / steps:9.2e} {e['iterations']:4d} {e['jacobians']:4d} "
                     f"{e['t_reached']:6.2f} s {r['wall'] / (e['wall'] / steps):6.2f} | "
                     f"{' ' * 15}{r.get('tip', math.nan):11.4e} {e['tip']:11.4e}")
        if memory:
            line += f" | {r['maxrss_MB']:9.0f}"
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SPIN_UP_SIZES), help="spin-up elements")
    parser.add_argument("--largest", type=int, default=None, help="add this many elements (e.g. 16384)")
    parser.add_argument("--exudyn", default=None, help="python of an environment with Exudyn")
    parser.add_argument("--peers", type=Path, default=Path("/work/shared/peers"))
    parser.add_argument("--exudyn-repeat", type=int, default=3)
    parser.add_argument("--exudyn-atol", type=float, default=1e-3,
                        help="Exudyn's absolute Newton tolerance (N); its default 1e-5 fails from 256 elements")
    parser.add_argument("--force-tol", type=float, default=0.0,
                        help="flexmb's absolute Newton tolerance (N); 0: to the round-off of the unknowns")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--big-sizes", type=float, nargs="*", default=[1e4, 1e5])
    parser.add_argument("--huge", action="store_true", help="add 1e6 unknowns to the Beam3D and shell models")
    parser.add_argument("--big-steps", type=int, default=2)
    parser.add_argument("--skip-big", action="store_true", help="the spin-up table only")
    parser.add_argument("--skip-spin-up", action="store_true", help="the larger models only")
    parser.add_argument("--fresh-lu", action="store_true",
                        help="every step starts with its own LU (no factorisation kept across steps), to compare")
    args = parser.parse_args()
    if args.fresh_lu:
        newton_module.KeptFactorization.take = lambda self, key: (None, None)
    load = os.getloadavg()[0]
    print(f"load average {load:.2f} at start; {os.cpu_count()} cores; CPU and wall per step, "
          f"spin-up: dt = {DT} s, {STEPS} steps; flexmb's force_tol {args.force_tol:g} N"
          + (f", Exudyn's absoluteTolerance {args.exudyn_atol:g} N" if args.exudyn else ""))
    sizes = [] if args.skip_spin_up else args.sizes + ([args.largest] if args.largest else [])
    rows, peers = [], {}
    for n in sizes:
        asm, tip = spin_up(n)
        row = measure(f"spin-up {n}", asm, DT, STEPS, args.repeat, tip, args.force_tol)
        row["n"] = n
        rows.append(row)
        if args.exudyn:
            peers[n] = exudyn(args.exudyn, args.peers, n, args.exudyn_repeat, args.exudyn_atol)
    if rows:
        print_rows(rows, peers if args.exudyn else None)
    print("s/step, s/it, us/unk/step: wall (s/it and us from CPU); parts: CPU, timed alone on the last step's state "
          "and weighted by their use; '-': inside the compiled one-call Newton step (kernels column)."
          + ("\nExudyn: wall_s of mbs.SolveDynamic per step taken (median of runs), Newton iterations and Jacobians "
             "of the run, time reached (a run short of 1 s failed), flexmb's wall per step over Exudyn's."
             if args.exudyn else ""))
    if args.skip_big:
        return
    print(f"\nlarger models, {args.big_steps} steps of dt = 1 ms from rest under gravity")
    big_sizes = args.big_sizes + ([1e6] if args.huge else [])
    rows = []
    for label, build in (("beam3d", grillage), ("shell", plate)):
        for size in big_sizes:
            rows.append(measure(f"{label} {size:.0e}", build(size), 1e-3, args.big_steps, max(1, args.repeat // 2)))
            print_rows(rows[-1:], memory=True)
    print(f"DENSE_LIMIT {newton_module.DENSE_LIMIT}, sparse LU: SuperLU ({newton_module.SPARSE_ORDERING}); "
          f"maxrss: the process's peak so far")


if __name__ == "__main__":
    main()
