"""Throughput of the batched planar co-rotational beam kernels (:class:`flexmb.Beam2D`).

What is measured: wall-clock time of one call of each kernel on a batch of ``n`` random
elements (default 1e5), i.e. the cost per Newton iteration of the element part of the
assembly, without the scatter into the global vectors and matrices:

* ``internal_force(X, u)``                      -> q (n, 6)
* ``force_and_tangent(X, u)``                   -> q (n, 6), K_t (n, 6, 6)
* ``mid_point_force_and_tangent(X, u0, u1)``    -> q_m (n, 6), dq_m/du1 (n, 6, 6)

each compiled (:mod:`flexmb.compiled.beam2d`, the public methods) and, for comparison, its numpy
specification (``reference_*``, the implementation before the kernels were compiled), with and
without the second-order term. Then the cost of one call of the compiled
``mid_point_force_and_tangent`` on the small batches of the multibody benchmarks (2-16 elements,
spin-up and slider-crank), where the fixed cost of a call (Python wrapper, numba dispatch, output
allocation) dominates; and the first call in this process (numba import plus loading the cached
machine code, or compiling it after installation).

The elements have random reference position, orientation and length (0.5-2 m), random
rigid rotation of several turns, axial strain within +-5 % and local nodal rotations within
+-0.3 rad; the mid-point kernel gets a second configuration whose chords have turned by up to
1 rad more (a large time step). Each kernel is run ``--repeat`` times after one warm-up call;
the best and the median time are reported, with element evaluations per second (n / time).
Timings depend on the machine and on its load; nothing is asserted.

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
    print(machine_info())
    X, l0 = random_elements(2, rng)
    u = deformed(X, l0, np.zeros(2), rng)
    t0 = time.perf_counter()
    Beam2D(np.array([[0, 1], [0, 1]]), EA=1e6, EI=1e3).force_and_tangent(X, u)
    print(f"first compiled call in this process (numba import, load or compile): "
          f"{time.perf_counter() - t0:.2f} s")

    n = args.n
    X, l0 = random_elements(n, rng)
    alpha0 = rng.uniform(-12.0, 12.0, n)                                # several turns
    u0 = deformed(X, l0, alpha0, rng)
    u1 = deformed(X, l0, alpha0 + rng.uniform(-1.0, 1.0, n), rng)       # chord turns up to 1 rad
    kernels = {}
    for second_order in (False, True):
        beam = Beam2D(np.zeros((n, 2), dtype=np.int64) + [0, 1], EA=1e6, EI=1e3, rho_A=1.0,
                      second_order=second_order)
        tag = " (2nd order)" if second_order else ""
        kernels.update({
            f"internal_force{tag}": lambda b=beam: b.internal_force(X, u1),
            f"force_and_tangent{tag}": lambda b=beam: b.force_and_tangent(X, u1),
            f"mid_point_force_and_tangent{tag}": lambda b=beam: b.mid_point_force_and_tangent(X, u0, u1),
            f"reference_force_and_tangent{tag}": lambda b=beam: b.reference_force_and_tangent(X, u1),
            f"reference_mid_point_f_and_t{tag}": lambda b=beam: b.reference_mid_point_force_and_tangent(X, u0, u1),
        })
    print(f"\nBeam2D kernels, {n} elements per call, best and median of {args.repeat} calls")
    print(f"{'kernel':<44s} {'best [ms]':>10s} {'median [ms]':>12s} {'best [elem/s]':>15s} {'median [elem/s]':>16s}")
    results = {}
    for name, fun in kernels.items():
        t = time_call(fun, args.repeat)
        best, median = min(t), statistics.median(t)
        results[name] = (best, median)
        print(f"{name:<44s} {1e3 * best:10.2f} {1e3 * median:12.2f} {n / best:15.3e} {n / median:16.3e}")

    print(f"\ncompiled mid_point_force_and_tangent on small batches, microseconds per call "
          f"(median of {args.repeat} x 2000 calls)")
    for n_small in (2, 4, 8, 16):
        Xs, u0s, u1s = X[:n_small].copy(), u0[:n_small].copy(), u1[:n_small].copy()
        beam = Beam2D(np.zeros((n_small, 2), dtype=np.int64) + [0, 1], EA=1e6, EI=1e3, second_order=True)
        per_call = [t / 2000 for t in time_call(lambda: [beam.mid_point_force_and_tangent(Xs, u0s, u1s)
                                                         for _ in range(2000)], args.repeat)]
        results[f"small {n_small}"] = (min(per_call), statistics.median(per_call))
        print(f"{n_small:3d} elements: {1e6 * statistics.median(per_call):7.2f} us")
    return results


if __name__ == "__main__":
    main()
