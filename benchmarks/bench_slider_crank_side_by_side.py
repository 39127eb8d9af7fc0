"""Slider-crank A over 8 rad of crank rotation, solver time to 1 %, flexmb and Exudyn side by side
(issue 31).

flexmb: 2 cubic-mass ``Beam2D`` elements (``flexmb.validation.slider_crank.build``), generalized-alpha
with 40 steps and mid-point with 120 steps (the fewest steps of each that meet 1 % of 0.009762);
the least CPU time of ``--calls`` warm ``integrate`` calls, each after ``gc.collect()`` (the garbage
of the calls before is not the call's). Exudyn (``--exudyn PYTHON``, an interpreter of an
environment with Exudyn; never a dependency of flexmb): the peers' ``slidercrank_flex.py --case A
--elements 2 --element geb2d-quad`` with 40 steps, its own ``wall_s`` of ``SolveDynamic``. The
three runs alternate ``--pairs`` times; printed: medians and ranges in ms, the first maximum of the
mid-span deflection / L and its error. One BLAS thread. Asserts nothing.

    python benchmarks/bench_slider_crank_side_by_side.py [--exudyn /work/exudyn_venv/bin/python] [--pairs 5]
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.validation.slider_crank import build, first_maximum, midspan_deflection

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))
from slider_crank_a import PARAMETERS as CASE  # noqa: E402

CONVERGED = 0.009762                                   # the case's converged first maximum


def flexmb_run(scheme: str, steps: int, calls: int) -> tuple[float, float]:
    """(least CPU s of ``calls`` warm runs over 8 rad, first maximum of mid-span deflection / L)."""
    asm, v0, _ = build(2, CASE.omega, CASE.slider_mass, "cubic")
    dt = CASE.t_end / steps
    kw = dict(scheme=scheme, v0=v0, progress=False, max_cutbacks=0)
    fm.integrate(asm, dt, 3 * dt, **kw)                        # kernels loaded
    best = np.inf
    for _ in range(calls):
        gc.collect()
        start = time.process_time()
        h = fm.integrate(asm, dt, CASE.t_end, **kw)
        best = min(best, time.process_time() - start)
    return best, first_maximum(CASE.omega * np.asarray(h.t), midspan_deflection(h.positions()))[1]


def exudyn_run(python: str, peers: Path, steps: int) -> tuple[float, float]:
    """(Exudyn's wall_s of SolveDynamic, first maximum / L) for 2 quadratic elements."""
    out = subprocess.run([python, str(peers / "slidercrank_flex.py"), "--case", "A", "--elements", "2",
                          "--element", "geb2d-quad", "--dt", repr(8.0 / CASE.omega / steps)],
                         capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["wall_s"], result["first_peak_w_mid_over_L"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exudyn", default=None, help="python of an environment with Exudyn")
    parser.add_argument("--peers", type=Path, default=Path("/work/shared/peers"))
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=5)
    args = parser.parse_args()
    rows: dict[str, list[tuple[float, float]]] = {"flexmb generalized-alpha, 40 steps": [],
                                                  "flexmb mid-point, 120 steps": []}
    if args.exudyn:
        rows["Exudyn geb2d-quad, 40 steps"] = []
    for _ in range(args.pairs):
        rows["flexmb generalized-alpha, 40 steps"].append(flexmb_run("generalized-alpha", 40, args.calls))
        rows["flexmb mid-point, 120 steps"].append(flexmb_run("mid-point", 120, args.calls))
        if args.exudyn:
            rows["Exudyn geb2d-quad, 40 steps"].append(exudyn_run(args.exudyn, args.peers, 40))
    print(f"load average {os.getloadavg()[0]:.2f}; ms, median (range) of {args.pairs} alternating runs")
    for label, runs in rows.items():
        ms = [1e3 * t for t, _ in runs]
        peak = runs[0][1]
        print(f"{label:36s} {statistics.median(ms):7.2f} ({min(ms):.2f}-{max(ms):.2f})   first maximum "
              f"{peak:.7f} ({100.0 * (peak / CONVERGED - 1.0):+.2f} %)")


if __name__ == "__main__":
    main()
