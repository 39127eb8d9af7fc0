"""Time ``import flexmb`` in fresh interpreters (the core import must stay light and fast), and
the first run of a small model, which loads (or, the first time after install, compiles) the
numba kernels.

    python benchmarks/bench_import.py [--repeat N]

Prints the median and the spread of the wall time over interpreter start-up (``python -c "pass"``)
of ``import flexmb`` (names load on first use: nearly nothing), of ``import flexmb`` with what a
dynamics script touches (``fm.Model``, ``fm.Assembly``, ``fm.integrate``: numpy, scipy.sparse and
the core modules) and of every public name (``from flexmb import *``), and which heavy modules
that pulled in (numba must not be among them: the compiled kernels are imported on first use). Then, in fresh
processes, the time of a first and a second short run of a small model (a 2-element cubic-mass
Beam2D cantilever, 3 mid-point steps): with the compiled kernels in numba's cache (the normal
case), and "cold", with an empty cache (``NUMBA_CACHE_DIR`` set to a new folder), as the first
run after installing flexmb, and whether that run announced its compilation (one line on stderr)
and the cached runs did not. Then ``flexmb compile --only beam2d`` with an empty cache and again
with the cache it filled. Last, where the whole process of the issue's two small runs goes (issue 31:
Simo's spin-up with 2 elements, composed mid-point, dt = 0.25 s, 80 steps; slider-crank A with 2
elements, 120 steps per 8 rad, 2.5 rad), phase by phase from the interpreter's start to its exit,
and how much of it the cyclic garbage collector took; ``--phases-only`` prints only that. These
runs use numba's kernels (``FLEXMB_AOT=0``); where ``flexmb compile`` built the ahead-of-time
kernels for these sources (``flexmb/aot.py``), the same two scripts' whole processes follow, with
them and with numba, interleaved. flexmb's bytecode is written first, as pip's install does
(``bytecode.py``).
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bytecode import write_bytecode

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("pyvista", "vtk", "meshio", "h5py", "matplotlib", "tqdm", "numba")   # numba: compiled kernels load lazily
IMPORTS = {"import flexmb": "import flexmb",
           "with Model, Assembly, integrate": "import flexmb as fm; fm.Model, fm.Assembly, fm.integrate",
           "every public name": "from flexmb import *"}


#: a fresh process: import flexmb, then a first and a second short run of a small model; prints the three times
FIRST_RUN = """
import time
start = time.perf_counter()
import numpy as np
import flexmb as fm
imported = time.perf_counter()

def run():
    model = fm.Model(dim=2)
    nodes = model.add_nodes(np.c_[np.linspace(0.0, 1.0, 3), np.zeros(3)])
    model.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=1e2, rho_A=1.0, rho_I=1e-4, mass="cubic",
                     second_order=True)
    model.fix(nodes[0])
    model.set_gravity([0.0, -9.81])
    fm.integrate(fm.Assembly(model), 1e-3, 3e-3, progress=False)

run()
first = time.perf_counter()
run()
print(imported - start, first - imported, time.perf_counter() - first)
"""

#: the issue's two small runs (issue 31; the configurations benchmarks/time_to_accuracy_*.py find for 1 %),
#: each a user's script: Simo's spin-up (2 cubic-mass elements, composed mid-point, dt = 0.25 s, 80 steps) and
#: slider-crank A (2 elements, mid-point, 120 steps per 8 rad: 38 steps over 2.5 rad)
RUNS = {
    "spin-up": ("from flexmb.validation.spin_up import T_END, build, extreme, tip_deflection\n"
                "from spin_up_simo import PARAMETERS as beam",
                "asm, nodes = build(beam, 2, 'cubic')",
                "h = fm.integrate(asm, 0.25, T_END, scheme='composed-mid-point', progress=False, max_cutbacks=0)",
                "t = np.asarray(h.t); value = extreme(t, tip_deflection(beam, t, h.positions()[:, nodes[-1]]))[1]"),
    "slider-crank A": ("from flexmb.validation.slider_crank import (CRANK_TURN, build, first_maximum,\n"
                       "                                          midspan_deflection)\n"
                       "from slider_crank_a import PARAMETERS as case",
                       "asm, v0, _ = build(2, case.omega, case.slider_mass, 'cubic')",
                       "dt = case.t_end / 120\n"
                       "h = fm.integrate(asm, dt, round(120 * 2.5 / CRANK_TURN) * dt, v0=v0, progress=False, "
                       "max_cutbacks=0)",
                       "value = first_maximum(case.omega * np.asarray(h.t), midspan_deflection(h.positions()))[1]"),
}

#: a fresh process of one run, timing each phase: the imports (scipy.linalg is imported by numba's
#: first compiled call, its BLAS check), the build and the steps twice (the second time without the
#: first calls of the compiled kernels: numba fills its registries and loads the cached kernels),
#: the time the cyclic garbage collector took; prints the phases and the wall-clock time at its end
#: (the parent measures the exit from there)
PHASES = """
import gc, time
collecting = []                                  # -start, +stop of every garbage collection: their sum is its time
gc.callbacks.append(lambda phase, info: collecting.append(time.perf_counter() * (1 if phase == "stop" else -1)))
marks = [time.perf_counter()]
import numpy as np
marks.append(time.perf_counter())
import scipy.sparse
marks.append(time.perf_counter())
import scipy.linalg
marks.append(time.perf_counter())
import numba
marks.append(time.perf_counter())
import flexmb as fm
{imports}
fm.integrate, fm.Assembly
marks.append(time.perf_counter())
{build}
marks.append(time.perf_counter())
{steps}
marks.append(time.perf_counter())
{build}
marks.append(time.perf_counter())
{steps}
marks.append(time.perf_counter())
{extract}
marks.append(time.perf_counter())
print(*(b - a for a, b in zip(marks, marks[1:])), sum(collecting), time.time())
"""
#: one run as a user's script in a fresh process, timing its phases; prints them, whether numba was
#: imported and the wall-clock time at its end (the parent measures the exit from there)
SCRIPT = """
import sys, time
marks = [time.perf_counter()]
import numpy as np
import flexmb as fm
{imports}
fm.integrate, fm.Assembly
marks.append(time.perf_counter())
{build}
marks.append(time.perf_counter())
{steps}
marks.append(time.perf_counter())
{extract}
marks.append(time.perf_counter())
print(*(b - a for a, b in zip(marks, marks[1:])), int("numba" in sys.modules), time.time())
"""
SCRIPT_PHASES = ("imports (numpy, flexmb, the script's)", "build", "steps (with the first kernel calls)", "extract",
                 "exit")
PHASE_NAMES = ("numpy", "scipy.sparse", "scipy.linalg", "numba import", "flexmb's modules",
               "first kernel calls (cache loads)", "build", "steps", "extract", "exit")


def wall(code: str, env: dict[str, str] | None = None) -> float:
    env = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def first_runs(repeat: int, env: dict[str, str] | None = None) -> tuple[list[tuple[float, ...]], int]:
    """(import, first run, second run) seconds in ``repeat`` fresh processes, and how many of them
    announced a first-run compilation."""
    from flexmb.compiled import FIRST_RUN_MESSAGE

    times, announced = [], 0
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-c", FIRST_RUN], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=str(REPO), **(env or {})))
        if done.returncode:
            raise RuntimeError(f"the small-model run failed:\n{done.stderr}")
        times.append(tuple(float(x) for x in done.stdout.split()))
        announced += FIRST_RUN_MESSAGE in done.stderr
    return times, announced


def compile_command(cache: str) -> float:
    """Wall time (s) of ``flexmb compile --only beam2d`` with numba's cache in ``cache``."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "flexmb.cli", "compile", "--only", "beam2d"], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=str(REPO), NUMBA_CACHE_DIR=cache))
    return time.perf_counter() - start


def phases(code: str) -> list[float]:
    """Seconds of each phase of :data:`PHASE_NAMES` in a fresh process running ``code`` (a
    :data:`PHASES`), then the garbage collector's seconds, the whole process's wall and CPU time."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join((str(REPO), str(REPO / "validation"))), FLEXMB_AOT="0")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    ended, total = time.time(), time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"the run failed:\n{done.stderr}")
    (numpy, sparse, linalg, numba, modules, build_1, steps_1, build_2, steps_2, extract, collecting,
     end) = (float(x) for x in done.stdout.split())
    first_calls = build_1 - build_2 + steps_1 - steps_2
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return [numpy, sparse, linalg, numba, modules, first_calls, build_2, steps_2, extract, ended - end,
            collecting, total - (build_2 + steps_2), cpu - (build_2 + steps_2)]


def _median_of(times: list[tuple[float, ...]]) -> str:
    imp, first, second = (statistics.median(t[k] for t in times) for k in range(3))
    return f"import {imp:.3f} s, first run {first:.3f} s, second run {second:.3f} s"


def imports_and_first_runs(repeat: int) -> None:
    """The import times, the first and second small-model runs with a filled and an empty cache,
    and ``flexmb compile``."""
    wall(IMPORTS["every public name"])                      # warm the file cache
    base = [wall("pass") for _ in range(repeat)]
    for label, code in IMPORTS.items():
        extra = sorted(wall(code) - statistics.median(base) for _ in range(repeat))
        print(f"{label}: median {statistics.median(extra):.3f} s over interpreter start-up "
              f"(min {extra[0]:.3f}, max {extra[-1]:.3f}; start-up {statistics.median(base):.3f} s; "
              f"{repeat} runs, {os.cpu_count()} cores)")
    probe = "import sys; from flexmb import *; print(' '.join(m for m in %r if m in sys.modules))" % (HEAVY,)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(REPO))).stdout.strip()
    print(f"heavy modules imported by every public name: {out or 'none'}")
    wall(FIRST_RUN)                                         # fill numba's cache if it is empty
    cached, announced = first_runs(repeat)
    print(f"small model, kernels cached (median of {repeat}): {_median_of(cached)}; "
          f"compilation announced in {announced} of {repeat} runs")
    with tempfile.TemporaryDirectory() as cache:
        cold, announced = first_runs(1, {"NUMBA_CACHE_DIR": cache})
    print(f"small model, empty numba cache (first run after install): {_median_of(cold)}; "
          f"compilation announced: {'yes' if announced else 'no'}")
    with tempfile.TemporaryDirectory() as cache:
        empty, filled = compile_command(cache), compile_command(cache)
    print(f"flexmb compile --only beam2d: empty cache {empty:.1f} s, second call {filled:.1f} s")


def whole_processes(repeat: int) -> None:
    """Where the whole process of each of :data:`RUNS` goes (:func:`phases`), medians of ``repeat``
    interleaved processes."""
    start_up = statistics.median(wall("pass") for _ in range(repeat))
    codes = {name: PHASES.format(imports=i, build=b, steps=st, extract=e) for name, (i, b, st, e) in RUNS.items()}
    times: dict[str, list[list[float]]] = {name: [] for name in RUNS}
    for _ in range(repeat):                            # interleaved
        for name, code in codes.items():
            times[name].append(phases(code))
    print(f"where the whole process of each small run goes (median of {repeat} interleaved; seconds; the "
          f"build and steps timed once more after the first kernel calls; load {os.getloadavg()[0]:.1f}):")
    print(f"  {'phase':40s}" + "".join(f"{name:>16s}" for name in RUNS))
    rows = (("interpreter start (python -c pass)", None),) + tuple((n, k) for k, n in enumerate(PHASE_NAMES)) + (
        ("of all these: cyclic garbage collection", len(PHASE_NAMES)),
        ("whole process, wall", len(PHASE_NAMES) + 1), ("whole process, CPU", len(PHASE_NAMES) + 2))
    for label, k in rows:
        print(f"  {label:40s}" + "".join(f"{start_up if k is None else statistics.median(t[k] for t in times[n]):16.3f}"
                                         for n in RUNS))
    print("  (whole process: without the second build and steps, i.e. a user's script)")


def script_process(code: str, aot: bool) -> list[float]:
    """A fresh process running ``code`` (a :data:`SCRIPT`) with the ahead-of-time kernels or
    without (``FLEXMB_AOT=0``): the seconds of :data:`SCRIPT_PHASES`, 1 if it imported numba, the
    whole process's wall and CPU seconds."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join((str(REPO), str(REPO / "validation"))),
               FLEXMB_AOT="1" if aot else "0")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    ended, total = time.time(), time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"the run failed:\n{done.stderr}")
    *phase, numba, end = (float(x) for x in done.stdout.split())
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return [*phase, ended - end, numba, total, cpu]


def ahead_of_time(repeat: int) -> None:
    """The whole process of each of :data:`RUNS` with the ahead-of-time kernels and with numba's,
    medians of ``repeat`` interleaved processes (if ``flexmb compile`` built them)."""
    found = subprocess.run([sys.executable, "-c", "import flexmb.compiled as c; print(c.AOT_MODULE or '')"],
                           capture_output=True, text=True, check=True,
                           env=dict(os.environ, PYTHONPATH=str(REPO))).stdout.strip()
    if not found:
        print("no ahead-of-time kernels for these sources (flexmb compile builds them): not compared")
        return
    codes = {name: SCRIPT.format(imports=i, build=b, steps=st, extract=e) for name, (i, b, st, e) in RUNS.items()}
    cases = [(name, aot) for name in RUNS for aot in (True, False)]
    times: dict[tuple[str, bool], list[list[float]]] = {case: [] for case in cases}
    for _ in range(repeat):                            # interleaved
        for name, aot in cases:
            times[name, aot].append(script_process(codes[name], aot))
    print(f"whole process with the ahead-of-time kernels ({Path(found).name}) and with numba's "
          f"(FLEXMB_AOT=0), median of {repeat} interleaved; seconds; load {os.getloadavg()[0]:.1f}:")
    print(f"  {'phase':40s}" + "".join(f"{name[:14] + (' aot' if aot else ' numba'):>22s}" for name, aot in cases))
    rows = [*SCRIPT_PHASES, "processes that imported numba", "whole process, wall", "whole process, CPU"]
    for k, label in enumerate(rows):
        values = [sum(t[k] for t in times[case]) if k == len(SCRIPT_PHASES) else
                  statistics.median(t[k] for t in times[case]) for case in cases]
        print(f"  {label:40s}" + "".join(f"{v:22.0f}" if k == len(SCRIPT_PHASES) else f"{v:22.3f}" for v in values))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--phases-only", action="store_true", help="only where the two small runs' processes go")
    args = parser.parse_args()
    write_bytecode()
    if not args.phases_only:
        imports_and_first_runs(args.repeat)
    whole_processes(args.repeat)
    ahead_of_time(args.repeat)


if __name__ == "__main__":
    main()
