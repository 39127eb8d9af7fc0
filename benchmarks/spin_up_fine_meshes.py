"""Simo's spin-up beam on fine meshes: every run must finish with fixed steps and no cut-back,
and the extreme tip deflection must converge with the mesh (issue 28).

N cubic-mass ``Beam2D`` elements (the ``spin-up-simo`` case's model), mid-point scheme, dt = 0.01
and 0.04 s, to t = 20 s, ``max_cutbacks=0`` (a step that does not converge ends the run). For
each run: whether it finished, the steps Newton solved only from its second start (the
acceleration predictor, run log kind "retry"), the Newton iterations per step (mean, max), how the
solves ended (the convergence criteria), the extreme tip deflection (refined by a parabola) and its
difference from the finest mesh of the same dt, the energy-balance error, the wall time.

    python benchmarks/spin_up_fine_meshes.py                 # N = 64 ... 16384, both steps
    python benchmarks/spin_up_fine_meshes.py --elements 64 256 --dt 0.04 --t-end 5

Prints one line per run as it finishes and a Markdown table at the end. Fine meshes take long:
16384 elements (49 152 unknowns) about 20 minutes at dt = 0.01 s on the CI machine.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.validation.spin_up import build, extreme, tip_deflection
from flexmb.validation.slider_crank import run_stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))
from spin_up_simo import PARAMETERS as BEAM  # noqa: E402  (the case script holds the beam's data)


def run(n_elements: int, dt: float, t_end: float) -> dict:
    """One fixed-step run; a failure is reported, not raised."""
    asm, nodes = build(BEAM, n_elements)
    start = time.perf_counter()
    try:
        h = fm.integrate(asm, dt, t_end, progress=False, max_cutbacks=0, keep_newton_logs=True)
        failed = ""
    except fm.TimeIntegrationError as exc:
        h, failed = exc.history, str(exc).splitlines()[0]
    wall = time.perf_counter() - start
    t = np.array(h.t)
    d = tip_deflection(BEAM, t, h.positions()[:, nodes[-1]])
    t_ex, d_ex = extreme(t, d) if not failed else (float("nan"), float("nan"))
    stats = run_stats(h, wall)
    criteria = Counter(log.criterion for log in h.newton_logs)
    retries = sum(e.kind == "retry" for e in h.events)
    return {"N": n_elements, "dt": dt, "unknowns": asm.n_free, "reached": float(t[-1]), "failed": failed,
            "extreme": d_ex, "extreme_time": t_ex, "criteria": dict(criteria), "retries": retries, **stats}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, nargs="+", default=[64, 256, 1024, 4096, 16384])
    parser.add_argument("--dt", type=float, nargs="+", default=[0.01, 0.04])
    parser.add_argument("--t-end", type=float, default=20.0)
    args = parser.parse_args(argv)
    rows = []
    for dt in args.dt:
        for n in args.elements:
            row = run(n, dt, args.t_end)
            rows.append(row)
            print(f"N = {n:6d}, dt = {dt:g} s: reached t = {row['reached']:g} s, cut-backs {row['cutbacks']}, "
                  f"second starts {row['retries']}, "
                  f"Newton {row['newton_iterations_mean']:.2f} / {row['newton_iterations_max']} per step "
                  f"{row['criteria']}, extreme {row['extreme']:.7f} m at {row['extreme_time']:.3f} s, "
                  f"energy error {row['energy_error_max']:.1e}, {row['wall_s']:.1f} s {row['failed']}", flush=True)
    print("\n| N | unknowns | dt (s) | finished | cut-backs | second starts | Newton mean / max | ended by "
          "| extreme (m) | minus finest mesh (m) | energy error | wall (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        finest = [r for r in rows if r["dt"] == row["dt"] and not r["failed"]]
        reference = max(finest, key=lambda r: r["N"])["extreme"] if finest else float("nan")
        ended = ", ".join(f"{k} {v}" for k, v in sorted(row["criteria"].items()))
        finished = "no: " + row["failed"] if row["failed"] else "yes"
        print(f"| {row['N']} | {row['unknowns']} | {row['dt']:g} | {finished} | {row['cutbacks']} | {row['retries']} "
              f"| {row['newton_iterations_mean']:.2f} / {row['newton_iterations_max']} | {ended} "
              f"| {row['extreme']:.6f} | {row['extreme'] - reference:+.1e} | {row['energy_error_max']:.1e} "
              f"| {row['wall_s']:.0f} |")


if __name__ == "__main__":
    main()
