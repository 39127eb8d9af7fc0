"""Time ``import flexmb`` in fresh interpreters (the core import must stay light and fast).

    python benchmarks/bench_import.py [--repeat N]

Prints the median and the spread of the wall time of ``python -c "import flexmb"`` minus that
of ``python -c "pass"`` (interpreter start-up), and which heavy modules the import pulled in.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("pyvista", "vtk", "meshio", "h5py", "matplotlib", "tqdm")


def wall(code: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - start


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


if __name__ == "__main__":
    main()
