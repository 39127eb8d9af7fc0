"""Time ``import flexmb`` in fresh interpreters (the core import must stay light and fast), and
the first run of a small model, which loads (or, the first time after install, compiles) the
numba kernels.

    python benchmarks/bench_import.py [--repeat N]

Prints the median and the spread of the wall time of ``python -c "import flexmb"`` minus that
of ``python -c "pass"`` (interpreter start-up), and which heavy modules the import pulled in
(numba must not be among them: the compiled kernels are imported on first use). Then, in fresh
processes, the time of a first and a second short run of a small model (a 2-element cubic-mass
Beam2D cantilever, 3 mid-point steps): with the compiled kernels in numba's cache (the normal
case), and "cold", with an empty cache (``NUMBA_CACHE_DIR`` set to a new folder), as the first
run after installing flexmb.
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

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("pyvista", "vtk", "meshio", "h5py", "matplotlib", "tqdm", "numba")   # numba: compiled kernels load lazily


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


def wall(code: str, env: dict[str, str] | None = None) -> float:
    env = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def first_runs(repeat: int, env: dict[str, str] | None = None) -> list[tuple[float, ...]]:
    """(import, first run, second run) seconds in ``repeat`` fresh processes."""
    times = []
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-c", FIRST_RUN], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=str(REPO), **(env or {})))
        if done.returncode:
            raise RuntimeError(f"the small-model run failed:\n{done.stderr}")
        times.append(tuple(float(x) for x in done.stdout.split()))
    return times


def _median_of(times: list[tuple[float, ...]]) -> str:
    imp, first, second = (statistics.median(t[k] for t in times) for k in range(3))
    return f"import {imp:.3f} s, first run {first:.3f} s, second run {second:.3f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    wall("import flexmb")                                   # warm the file cache
    base = [wall("pass") for _ in range(args.repeat)]
    full = [wall("import flexmb") for _ in range(args.repeat)]
    extra = sorted(f - statistics.median(base) for f in full)
    print(f"import flexmb: median {statistics.median(extra):.3f} s over interpreter start-up "
          f"(min {extra[0]:.3f}, max {extra[-1]:.3f}; start-up {statistics.median(base):.3f} s; "
          f"{args.repeat} runs, {os.cpu_count()} cores)")
    probe = "import sys, flexmb; print(' '.join(m for m in %r if m in sys.modules))" % (HEAVY,)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(REPO))).stdout.strip()
    print(f"heavy modules imported: {out or 'none'}")
    wall(FIRST_RUN)                                         # fill numba's cache if it is empty
    print(f"small model, kernels cached (median of {args.repeat}): {_median_of(first_runs(args.repeat))}")
    with tempfile.TemporaryDirectory() as cache:
        cold = first_runs(1, {"NUMBA_CACHE_DIR": cache})
    print(f"small model, empty numba cache (first run after install): {_median_of(cold)}")


if __name__ == "__main__":
    main()
