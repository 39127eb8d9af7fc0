"""Throughput of the batched planar co-rotational beam kernels (:class:`flexmb.Beam2D`).

What is measured: wall-clock time of one call of each kernel on a batch of ``n`` random
elements (default 1e5), i.e. the cost per Newton iteration of the element part of the
assembly, without the scatter into the global vectors and matrices:

* ``internal_force(X, u)``                      -> q (n, 6)
* ``force_and_tangent(X, u)``                   -> q (n, 6), K_t (n, 6, 6)
* ``mid_point_force_and_tangent(X, u0, u1)``    -> q_m (n, 6), dq_m/du1 (n, 6, 6)

The elements have random reference position, orientation and length (0.5-2 m), random
rigid rotation of several turns, axial strain within +-5 % and local nodal rotations within
+-0.3 rad; the mid-point kernel gets a second configuration whose chords have turned by up to
1 rad more (a large time step). Each kernel is run ``--repeat`` times after one warm-up call;
the best and the median time are reported, with element evaluations per second (n / time).
Timings depend on the machine and on the BLAS/threads numpy uses; nothing is asserted.

Run: ``python benchmarks/bench_beam2d_kernel.py [--n 100000] [--repeat 7] [--seed 0]``
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

try:
    from flexmb import Beam2D
except ModuleNotFoundError:                   # run from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from flexmb import Beam2D


def random_elements(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Reference coordinates X (n, 2, 2) and end displacements x1 - X1 as chords (n, 2), m."""
    X1 = rng.uniform(-5.0, 5.0, (n, 2))                                 # (n, 2)
    phi0 = rng.uniform(-np.pi, np.pi, n)                                # (n,)
    l0 = rng.uniform(0.5, 2.0, n)                                       # (n,)
    X = np.stack([X1, X1 + l0[:, None] * np.c_[np.cos(phi0), np.sin(phi0)]], axis=1)
    return X, l0


def deformed(X: np.ndarray, l0: np.ndarray, alpha: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Element DOFs u (n, 6) with chord rotation alpha (n,), random stretch and local rotations."""
    n = len(X)
    phi0 = np.arctan2(X[:, 1, 1] - X[:, 0, 1], X[:, 1, 0] - X[:, 0, 0])
    l = l0 * (1.0 + rng.uniform(-0.05, 0.05, n))                        # (n,)
    d1 = rng.uniform(-1.0, 1.0, (n, 2))                                 # (n, 2)
    x2 = X[:, 0] + d1 + l[:, None] * np.c_[np.cos(phi0 + alpha), np.sin(phi0 + alpha)]
    d2 = x2 - X[:, 1]                                                   # (n, 2)
    theta = alpha[:, None] + rng.uniform(-0.3, 0.3, (n, 2))             # (n, 2)
    return np.c_[d1, theta[:, 0], d2, theta[:, 1]]                      # (n, 6)


def time_call(fun: Callable[[], object], repeat: int) -> list[float]:
    """Wall-clock seconds of ``repeat`` calls after one warm-up call."""
    fun()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fun()
        times.append(time.perf_counter() - t0)
    return times


def machine_info() -> str:
    return (f"python {platform.python_version()}, numpy {np.__version__}, "
            f"{platform.machine()} {platform.processor() or ''}".rstrip()
            + f", {os.cpu_count()} CPUs, {platform.system()} {platform.release()}")


def main(argv: list[str] | None = None) -> dict[str, tuple[float, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="number of elements per call")
    parser.add_argument("--repeat", type=int, default=7, help="timed calls per kernel")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random elements")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    n = args.n
    X, l0 = random_elements(n, rng)
    alpha0 = rng.uniform(-12.0, 12.0, n)                                # several turns
    u0 = deformed(X, l0, alpha0, rng)
    u1 = deformed(X, l0, alpha0 + rng.uniform(-1.0, 1.0, n), rng)       # chord turns up to 1 rad
    beam = Beam2D(np.zeros((n, 2), dtype=np.int64) + [0, 1], EA=1e6, EI=1e3, rho_A=1.0)

    kernels = {
        "internal_force": lambda: beam.internal_force(X, u1),
        "force_and_tangent": lambda: beam.force_and_tangent(X, u1),
        "mid_point_force_and_tangent": lambda: beam.mid_point_force_and_tangent(X, u0, u1),
    }
    print(f"Beam2D kernels, {n} elements per call, best and median of {args.repeat} calls")
    print(machine_info())
    print(f"{'kernel':<30s} {'best [ms]':>10s} {'median [ms]':>12s} {'best [elem/s]':>15s} {'median [elem/s]':>16s}")
    results = {}
    for name, fun in kernels.items():
        t = time_call(fun, args.repeat)
        best, median = min(t), statistics.median(t)
        results[name] = (best, median)
        print(f"{name:<30s} {1e3 * best:10.2f} {1e3 * median:12.2f} {n / best:15.3e} {n / median:16.3e}")
    return results


if __name__ == "__main__":
    main()
