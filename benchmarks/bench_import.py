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
with the cache it filled. Last, where the time of a whole process goes, phase by phase (Simo's
spin-up, 2 elements, dt = 0.05 s), including its exit. flexmb's bytecode is written first, as pip's install does
(``bytecode.py``).
"""
from __future__ import annotations

import argparse
import os
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

#: a fresh process running Simo's spin-up (2 cubic-mass elements, dt = 0.05 s, 400 steps), timing
#: each phase; prints the phases and the wall-clock time at its end (the parent measures the exit)
PHASES = """
import time
marks = [time.perf_counter()]
import numpy
marks.append(time.perf_counter())
import scipy.sparse, scipy.sparse.linalg
marks.append(time.perf_counter())
import flexmb as fm
from flexmb.validation.spin_up import T_END, build
from spin_up_simo import PARAMETERS
fm.integrate
marks.append(time.perf_counter())
import numba
marks.append(time.perf_counter())
asm, _ = build(PARAMETERS, 2, "cubic")
marks.append(time.perf_counter())
fm.integrate(asm, 0.05, T_END, progress=False, max_cutbacks=0)
marks.append(time.perf_counter())
print(*(b - a for a, b in zip(marks, marks[1:])), time.time())
"""
PHASE_NAMES = ("numpy", "scipy.sparse(.linalg)", "flexmb's modules", "numba import",
               "build (numba's first call, kernels loaded)", "400 steps", "exit")


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


def phases(repeat: int) -> list[list[float]]:
    """Seconds of each phase of :data:`PHASES` and of the exit, in ``repeat`` fresh processes."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join((str(REPO), str(REPO / "validation"))))
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", PHASES], capture_output=True, text=True, env=env)
        ended, total = time.time(), time.perf_counter() - start
        if done.returncode:
            raise RuntimeError(f"the spin-up run failed:\n{done.stderr}")
        values = [float(x) for x in done.stdout.split()]
        times.append(values[:-1] + [ended - values[-1], total])
    return times


def _median_of(times: list[tuple[float, ...]]) -> str:
    imp, first, second = (statistics.median(t[k] for t in times) for k in range(3))
    return f"import {imp:.3f} s, first run {first:.3f} s, second run {second:.3f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    write_bytecode()
    wall(IMPORTS["every public name"])                      # warm the file cache
    base = [wall("pass") for _ in range(args.repeat)]
    for label, code in IMPORTS.items():
        extra = sorted(wall(code) - statistics.median(base) for _ in range(args.repeat))
        print(f"{label}: median {statistics.median(extra):.3f} s over interpreter start-up "
              f"(min {extra[0]:.3f}, max {extra[-1]:.3f}; start-up {statistics.median(base):.3f} s; "
              f"{args.repeat} runs, {os.cpu_count()} cores)")
    probe = "import sys; from flexmb import *; print(' '.join(m for m in %r if m in sys.modules))" % (HEAVY,)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(REPO))).stdout.strip()
    print(f"heavy modules imported by every public name: {out or 'none'}")
    wall(FIRST_RUN)                                         # fill numba's cache if it is empty
    cached, announced = first_runs(args.repeat)
    print(f"small model, kernels cached (median of {args.repeat}): {_median_of(cached)}; "
          f"compilation announced in {announced} of {args.repeat} runs")
    with tempfile.TemporaryDirectory() as cache:
        cold, announced = first_runs(1, {"NUMBA_CACHE_DIR": cache})
    print(f"small model, empty numba cache (first run after install): {_median_of(cold)}; "
          f"compilation announced: {'yes' if announced else 'no'}")
    with tempfile.TemporaryDirectory() as cache:
        empty, filled = compile_command(cache), compile_command(cache)
    print(f"flexmb compile --only beam2d: empty cache {empty:.1f} s, second call {filled:.1f} s")
    spin_up = phases(args.repeat)
    print(f"where a whole spin-up process goes (median of {args.repeat}; whole process "
          f"{statistics.median(t[-1] for t in spin_up):.3f} s, the rest is the interpreter's start):")
    for k, name in enumerate(PHASE_NAMES):
        print(f"  {name:44s} {statistics.median(t[k] for t in spin_up):.3f} s")


if __name__ == "__main__":
    main()
