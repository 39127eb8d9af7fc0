"""Element kernel rates: elements per second on a large batch and the cost of one call on a
small one (issue 14: Beam3D force + tangent >= 3e5 elements/s and mid-point force + tangent
>= 1.5e5/s on 1e5 elements; a Newton iteration on a <= 50-DOF model <= 100 microseconds, to
which the per-call cost at 4 elements is the kernels' share).

For Truss (2D and 3D), Beam2D and Beam3D (each without and with the second-order strains), the
public methods the assembly calls are timed:

* ``force_and_tangent(X, u)``                  -> q (n, ndof_el), K_t (n, ndof_el, ndof_el)
* ``mid_point_force_and_tangent(X, u0, u1)``   -> q_m (n, ndof_el), dq_m/du1 (n, ndof_el, ndof_el)

on ``--n`` random large-rotation elements (default 1e5; best and median of ``--repeat`` calls
after a warm-up call, so a compile on first call is not counted; elements/s = n / time) and on
4 elements (median over ``--small-calls`` calls, microseconds per call). The random states are
those of ``bench_beam2d_kernel.py`` and ``bench_beam3d_kernel.py``. Prints a table; asserts
nothing. Timings depend on the machine and its load: compare runs made in the same minute.

    python benchmarks/bench_kernel_rates.py [--n 100000] [--repeat 5] [--small-calls 2000] [--seed 0]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_beam2d_kernel import deformed, machine_info, random_elements, time_call  # noqa: E402
from bench_beam3d_kernel import random_state  # noqa: E402

try:
    from flexmb import Beam2D, Beam3D, Truss
except ModuleNotFoundError:                   # run from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from flexmb import Beam2D, Beam3D, Truss


def truss_state(n: int, dim: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reference X (n, 2, dim) and two states u0, u1 (n, 2 dim): bars turned and stretched at random."""
    X1 = rng.uniform(-5.0, 5.0, (n, dim))
    axis = rng.normal(size=(n, dim))
    axis /= np.linalg.norm(axis, axis=1)[:, None]
    X = np.stack([X1, X1 + rng.uniform(0.5, 2.0, n)[:, None] * axis], axis=1)      # (n, 2, dim)
    u0 = rng.normal(scale=0.5, size=(n, 2 * dim))                                  # (n, 2 dim)
    u1 = u0 + rng.normal(scale=0.3, size=(n, 2 * dim))
    return X, u0, u1


def kernel_sets(n: int, seed: int) -> dict[str, tuple[object, np.ndarray, np.ndarray, np.ndarray]]:
    """element label -> (element group, X, u0, u1) for n elements."""
    rng = np.random.default_rng(seed)
    conn = np.zeros((n, 2), dtype=np.int64) + [0, 1]
    sets = {}
    for dim in (2, 3):
        X, u0, u1 = truss_state(n, dim, rng)
        sets[f"Truss {dim}D"] = (Truss(conn, dim, EA=1e6, rho_A=1.0), X, u0, u1)
    X, l0 = random_elements(n, rng)
    alpha0 = rng.uniform(-12.0, 12.0, n)                                           # several turns
    u0 = deformed(X, l0, alpha0, rng)
    u1 = deformed(X, l0, alpha0 + rng.uniform(-1.0, 1.0, n), rng)                  # chord turns up to 1 rad
    for second_order in (False, True):
        beam = Beam2D(conn, EA=1e6, EI=1e3, rho_A=1.0, second_order=second_order)
        sets["Beam2D" + (" 2nd order" if second_order else "")] = (beam, X, u0, u1)
    X, u0, u1 = random_state(n, rng)
    for second_order in (False, True):
        beam = Beam3D(conn, EA=1e6, GJ=1e2, EI_y=1e3, EI_z=2e3, GA_ky=1e5, GA_kz=1e5, rho_A=1.0,
                      second_order=second_order)
        sets["Beam3D" + (" 2nd order" if second_order else "")] = (beam, X, u0, u1)
    return sets


def calls(element, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> dict[str, Callable[[], object]]:
    return {"force+tangent": lambda: element.force_and_tangent(X, u1),
            "mid-point force+tangent": lambda: element.mid_point_force_and_tangent(X, u0, u1)}


def per_call_us(fun: Callable[[], object], n_calls: int) -> float:
    """Median over 7 batches of ``n_calls / 7`` calls of the time per call, microseconds."""
    fun()
    batch = max(1, n_calls // 7)
    per = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(batch):
            fun()
        per.append((time.perf_counter() - start) / batch)
    return 1e6 * statistics.median(per)


def main(argv: list[str] | None = None) -> dict[tuple[str, str], dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="elements per call of the large batch")
    parser.add_argument("--repeat", type=int, default=5, help="timed calls on the large batch")
    parser.add_argument("--small-calls", type=int, default=2000, help="calls timed on 4 elements")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    large, small = kernel_sets(args.n, args.seed), kernel_sets(4, args.seed + 1)
    print(f"element kernels: {args.n} elements per call (best / median of {args.repeat} calls after a warm-up "
          f"call) and 4 elements per call (median of 7 batches, {args.small_calls} calls)")
    print(machine_info())
    head = f"{'element':<18s} {'kernel':<24s} {'best [elem/s]':>14s} {'median [elem/s]':>16s} {'4 el. [us/call]':>16s}"
    print(head + "\n" + "-" * len(head))
    results = {}
    for label, (element, X, u0, u1) in large.items():
        small_calls = calls(*small[label])
        for kernel, fun in calls(element, X, u0, u1).items():
            times = time_call(fun, args.repeat)
            best, median = min(times), statistics.median(times)
            small_us = per_call_us(small_calls[kernel], args.small_calls)
            results[(label, kernel)] = {"best_elements_per_s": args.n / best,
                                        "median_elements_per_s": args.n / median, "small_us_per_call": small_us}
            print(f"{label:<18s} {kernel:<24s} {args.n / best:14.3e} {args.n / median:16.3e} {small_us:16.1f}",
                  flush=True)
    return results


if __name__ == "__main__":
    main()
