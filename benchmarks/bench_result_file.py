"""Time the result-file writer: milliseconds per step of a 1200-DOF model, by block size.

    python benchmarks/bench_result_file.py [--steps N] [--repeat R]

A planar beam of 399 Beam2D elements (400 nodes, 1200 DOFs, 15 series and 3 element outputs
per step) is integrated for a few steps; its recorded steps are then written again and again
to a fresh result file through :meth:`flexmb.results.Result.recording`, as a run records them:

* every step written and flushed at once (``FLEXMB_FLUSH_INTERVAL=0``),
* blocks of 10 steps (a run whose steps take 20 ms, at the default interval of 0.2 s),
* one block of all steps (a fast run, or ``Result.save``).

Prints the median writer time per step (append and flush, and the final close spread over the
steps) and the file size. Only the writer is timed, not the integration.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import flexmb as fm


def recorded_history() -> fm.TimeHistory:
    m = fm.Model(dim=2)
    x = np.linspace(0.0, 4.0, 400)
    nodes = m.add_nodes(np.c_[x, np.zeros_like(x)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=1e2, rho_A=1.0, rho_I=1e-4, name="beam")
    m.fix(nodes[0])
    m.set_gravity([0.0, -9.81])
    return fm.integrate(fm.Assembly(m), 1e-3, 0.01, progress=False)


def write_time(h: fm.TimeHistory, n_steps: int, block: int | None, folder: Path) -> tuple[float, int]:
    """Seconds per step to write n_steps steps in blocks of ``block`` (None: one block), file size."""
    result = fm.TimeHistory(h.scheme, h.dt, h.layout)
    path = folder / f"run{time.perf_counter_ns()}.h5"
    records = [({name: getattr(h, name)[k] for name in h.SERIES},
                [{name: values[k] for name, values in store.items()} for store in h.elements])
               for k in range(h.n_steps)]
    start = time.perf_counter()
    with result.recording(path):
        writer = result._file
        writer.flush_interval = 0.0 if block == 1 else float("inf")
        for k in range(n_steps):
            result._append(*records[k % len(records)])
            if block not in (None, 1) and (k + 1) % block == 0:
                writer.write_pending()
    return (time.perf_counter() - start) / n_steps, path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400, help="steps written per file (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=3, help="files per block size (default: %(default)s)")
    args = parser.parse_args()
    h = recorded_history()
    n_series = sum(np.size(getattr(h, name)[0]) > 0 for name in h.SERIES) + sum(len(s) for s in h.elements)
    print(f"{h.layout.n_dof} DOFs, {n_series} datasets per step, {args.steps} steps per file")
    with tempfile.TemporaryDirectory() as folder:
        for label, block in (("every step flushed (FLEXMB_FLUSH_INTERVAL=0)", 1), ("blocks of 10 steps", 10),
                             ("one block", None)):
            times, size = zip(*(write_time(h, args.steps, block, Path(folder)) for _ in range(args.repeat)))
            per_step = statistics.median(times)
            print(f"{label:46s} {1e3 * per_step:7.3f} ms per step ({1e3 * per_step / n_series:.3f} ms per "
                  f"dataset), file {size[0] / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
