"""Sparse LU backends of the Newton matrix (:mod:`flexmb.integrators.sparse_lu`), per model and step.

1. ``--parts``: the linear algebra alone on the equilibrated Jacobian of each model's first step
   (Simo's spin-up beam of ``--sizes`` cubic-mass Beam2D elements at dt = 0.01 s, the clamped
   Shell3 plate of bench_shell.py at ``--cells``): per backend the first factorisation of a
   pattern (with its ordering or symbolic analysis), a later one (numeric only: SuperLU with the
   pattern's kept ordering, PARDISO on its kept analysis) and a solve; wall and CPU, median of
   ``--repeat``.
2. Whole runs per backend (``NewtonSettings(solver=...)``), interleaved, ``--repeat`` times, medians:
   the spin-up beam 100 steps (after a one-step warm-up run), and ``--shell-steps`` steps of the
   plate from rest (dt = 1 ms; ``--grillage``: bench_scaling.py's Beam3D grillages too); ms per
   step wall and CPU, Newton iterations and LUs per step. The
   plate's first LU includes the analysis of its pattern (a fresh pattern per run: the plate is
   rebuilt). ``--head DIR``: a checkout of another flexmb version (without the ``solver`` setting)
   runs the same in a child process with PYTHONPATH=DIR, for a before/after table.

MKL's threads: ``--threads`` (default 1, as the other benchmarks; CPU time then ~ wall time on an
idle machine). Prints tables; asserts nothing.

    python benchmarks/bench_solvers.py [--sizes 256 1024 4096] [--cells 130] [--repeat 3] [--parts] [--head DIR]
"""
from __future__ import annotations

import argparse
import os
import sys

_threads = "1"
if "--threads" in sys.argv:
    _threads = sys.argv[sys.argv.index("--threads") + 1]
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = _threads

import dataclasses
import json
import statistics
import subprocess
import time
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import flexmb as fm
from bench_scaling import grillage, spin_up
from bench_shell import clamped_plate

from flexmb.integrators import newton


def has_solver_setting() -> bool:
    return any(f.name == "solver" for f in dataclasses.fields(fm.NewtonSettings))


def backends() -> list[str]:
    if not has_solver_setting():
        return ["default"]
    from flexmb.integrators import sparse_lu

    return list(sparse_lu.available())


def models(sizes: list[int], cells: int, grillages: list[float] = ()) -> list[tuple[str, Callable, float, int]]:
    """(label, builder of a fresh Assembly, dt, steps; 0: the plate's and grillage's ``--shell-steps``)."""
    out = [(f"spin-up {n}", lambda n=n: spin_up(n)[0], 0.01, 100) for n in sizes]
    out += [(f"grillage {g:.0e}", lambda g=g: grillage(g), 1e-3, 0) for g in grillages]
    if cells:
        out.append((f"shell {cells}x{cells}", lambda: fm.Assembly(clamped_plate(cells)), 1e-3, 0))
    return out


def run(build, dt: float, steps: int, solver: str, warm: bool) -> dict:
    """One run; wall and CPU s per step."""
    asm = build()
    kw = dict(progress=False, keep_newton_logs=True)
    if solver != "default":
        kw["newton"] = fm.NewtonSettings(solver=solver)
    if warm:
        fm.integrate(asm, dt, dt, **kw)                    # kernels loaded, pattern analysed
    wall, cpu = time.perf_counter(), time.process_time()
    h = fm.integrate(asm, dt, steps * dt, **kw)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    logs = h.newton_logs
    return {"n": asm.n_free, "wall": wall / len(logs), "cpu": cpu / len(logs),
            "its": sum(g.iterations for g in logs) / len(logs), "LU": sum(g.factorizations for g in logs) / len(logs),
            "u_end": float(np.linalg.norm(h.u[-1]))}


def runs(sizes: list[int], cells: int, shell_steps: int, repeat: int, grillages: list[float] = ()) -> list[dict]:
    rows = []
    fm.integrate(clamped_plate(4), 1e-3, 1e-3, progress=False)      # the shell kernels compiled or loaded
    for label, build, dt, steps in models(sizes, cells, grillages):
        spin = steps > 0
        found: dict[str, list[dict]] = {s: [] for s in backends()}
        for _ in range(repeat):                            # interleaved
            for solver in found:
                found[solver].append(run(build, dt, steps if spin else shell_steps, solver, warm=spin))
        for solver, rs in found.items():
            rows.append({"model": label, "solver": solver, "n": rs[0]["n"],
                         **{k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu", "its", "LU")},
                         "u_end": rs[0]["u_end"]})
            print_row(rows[-1])
    return rows


def print_row(r: dict, tag: str = "") -> None:
    print(f"{r['model']:>16s} {r['n']:7d} {tag + r['solver']:>14s} {1e3 * r['wall']:10.2f} {1e3 * r['cpu']:10.2f} "
          f"{r['its']:6.2f} {r['LU']:6.3f}   |u_end| {r['u_end']:.10e}", flush=True)


def parts(sizes: list[int], cells: int, repeat: int, grillages: list[float] = ()) -> None:
    from flexmb.integrators import sparse_lu
    from flexmb.integrators.schemes import MidPoint

    print(f"\n{'model':>16s} {'n':>7s} {'solver':>8s}   first LU wall/CPU ms   later LU wall/CPU ms   "
          f"solve wall/CPU ms")
    for label, build, dt, _ in models(sizes, cells, grillages):
        asm = build()
        h = fm.integrate(asm, dt, dt, progress=False)
        scheme = MidPoint(asm)
        s = scheme.initial_state(h.t[-1], h.u[-1], h.v[-1])
        u1 = scheme.predict(s, dt)
        u1[asm.dofs.prescribed] = asm.prescribed_values(s.t + dt)
        J = asm.jacobian_matrix(scheme.residual(s, dt, u1, tangent=True).jacobian_data)
        B = newton.equilibrate(J)[0]
        b = np.ones(B.shape[0])
        for solver in sparse_lu.available():
            def lu(solver=solver):
                return sparse_lu.factorize(B, solver, newton.SPARSE_ORDERING, newton.DIAGONAL_PIVOT_THRESHOLD, False)

            def fresh(solver=solver):                      # a new pattern object: analysed anew
                C = B.copy()
                C.indices, C.indptr = B.indices.copy(), B.indptr.copy()
                return sparse_lu.factorize(C, solver, newton.SPARSE_ORDERING, newton.DIAGONAL_PIVOT_THRESHOLD, False)

            first, later = timed(fresh, repeat), timed(lu, repeat)
            factor = lu()
            solve = timed(lambda: factor.solve(b), repeat)
            print(f"{label:>16s} {B.shape[0]:7d} {solver:>8s}   {first[0]:9.2f} {first[1]:9.2f}    "
                  f"{later[0]:9.2f} {later[1]:9.2f}    {solve[0]:8.3f} {solve[1]:8.3f}", flush=True)


def timed(call, repeat: int) -> tuple[float, float]:
    """Median wall and CPU ms of ``repeat`` calls."""
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        call()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return 1e3 * statistics.median(walls), 1e3 * statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[256, 1024, 4096])
    parser.add_argument("--cells", type=int, default=130, help="plate cells a side (0: no plate)")
    parser.add_argument("--grillage", type=float, nargs="*", default=[],
                        help="Beam3D grillages of about these unknowns")
    parser.add_argument("--shell-steps", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", default="1", help="MKL / BLAS threads")
    parser.add_argument("--parts", action="store_true", help="the factorisations and solves alone as well")
    parser.add_argument("--head", default=None, help="another flexmb checkout to run the same in, before/after")
    parser.add_argument("--json", action="store_true", help="(child) print the rows as JSON")
    args = parser.parse_args()
    if not args.json:
        print(f"load average {os.getloadavg()[0]:.2f} at start; {os.cpu_count()} cores; MKL/BLAS threads {_threads}; "
              "wall and CPU ms per step, medians of interleaved runs")
        print(f"{'model':>16s} {'n':>7s} {'solver':>14s} {'wall ms':>10s} {'CPU ms':>10s} {'its':>6s} {'LU':>6s}")
    if args.head and not args.json:
        child = [sys.executable, __file__, "--json", "--sizes", *map(str, args.sizes), "--cells", str(args.cells),
                 "--shell-steps", str(args.shell_steps), "--repeat", str(args.repeat), "--threads", _threads,
                 "--grillage", *map(str, args.grillage)]
        env = dict(os.environ, PYTHONPATH=args.head)
        out = subprocess.run(child, env=env, capture_output=True, text=True, check=True, cwd=args.head)
        for row in json.loads(out.stdout.strip().splitlines()[-1]):
            print_row(row, "before: ")
    rows = runs(args.sizes, args.cells, args.shell_steps, args.repeat, args.grillage) if not args.json else None
    if args.json:
        with open(os.devnull, "w") as quiet:
            stdout, sys.stdout = sys.stdout, quiet
            rows = runs(args.sizes, args.cells, args.shell_steps, args.repeat, args.grillage)
            sys.stdout = stdout
        print(json.dumps(rows))
        return
    if args.parts:
        parts(args.sizes, args.cells, args.repeat, args.grillage)


if __name__ == "__main__":
    main()
