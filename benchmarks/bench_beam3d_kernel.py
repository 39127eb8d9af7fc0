"""Throughput of the batched spatial beam kernels (:class:`flexmb.Beam3D`).

What is measured: wall-clock time of one call of each kernel on a batch of ``n`` random
elements (default 1e5), the element part of one Newton iteration without the scatter:

* ``force_and_tangent(X, u)``                   -> q (n, 12), K_t (n, 12, 12)
* ``mid_point_force_and_tangent(X, u0, u1)``    -> q_m (n, 12), dq_m/dd (n, 12, 12)

for the element with and without the second-order strains, each compiled
(:mod:`flexmb.compiled.beam3d`, the public methods) and, with ``--reference``, its numpy
specification (``reference_*``, the implementation before the kernels were compiled). Then the
cost of one call of the compiled kernels on the small batches of 3D multibody models (1-10
elements), where the fixed cost of a call (Python wrapper, numba dispatch, output allocation)
dominates; and the first call in this process (numba import plus loading the cached machine
code, or compiling it after installation).

The elements have random reference position, orientation and length (0.5-2 m), random nodal
rotation vectors of up to 3 rad, and translations that stretch and bend them moderately; the
mid-point kernel gets a second configuration turned by up to 0.5 rad more (a large time step).
Each kernel is run ``--repeat`` times after a warm-up call; best and median times and element
evaluations per second are printed. Nothing is asserted; timings depend on the machine and on
its load.

Run: ``python benchmarks/bench_beam3d_kernel.py [--n 100000] [--repeat 5] [--seed 0] [--reference]``
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_beam2d_kernel import machine_info, time_call  # noqa: E402

try:
    from flexmb import Beam3D
    from flexmb.rotations import compose
except ModuleNotFoundError:                   # run from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from flexmb import Beam3D
    from flexmb.rotations import compose


def random_state(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reference X (n, 2, 3) and two element DOF states u0, u1 (n, 12)."""
    X1 = rng.uniform(-5.0, 5.0, (n, 3))
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=1)[:, None]
    X = np.stack([X1, X1 + rng.uniform(0.5, 2.0, n)[:, None] * axis], axis=1)
    psi = rng.normal(size=(n, 2, 3))
    psi *= (rng.uniform(0.0, 3.0, (n, 2)) / np.linalg.norm(psi, axis=2))[:, :, None]
    u0 = np.zeros((n, 12))
    u0[:, [3, 4, 5, 9, 10, 11]] = psi.reshape(n, 6)
    u0[:, [0, 1, 2, 6, 7, 8]] = 0.05 * rng.normal(size=(n, 6))
    u1 = u0.copy()
    for s in (slice(3, 6), slice(9, 12)):
        u1[:, s] = compose(0.3 * rng.normal(size=(n, 3)), u0[:, s])
    u1[:, [0, 1, 2, 6, 7, 8]] += 0.05 * rng.normal(size=(n, 6))
    return X, u0, u1


def main(argv: list[str] | None = None) -> dict[str, tuple[float, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="number of elements per call")
    parser.add_argument("--repeat", type=int, default=5, help="timed calls per kernel")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random elements")
    parser.add_argument("--reference", action="store_true",
                        help="time the numpy specifications too (slow: about 2-10 s per call at 1e5)")
    args = parser.parse_args(argv)
    n = args.n
    X, u0, u1 = random_state(n, np.random.default_rng(args.seed))
    conn = np.zeros((n, 2), dtype=np.int64) + [0, 1]
    print(machine_info())
    t0 = time.perf_counter()
    first = Beam3D(conn[:2], EA=1e6, GJ=1e2, EI_y=1e3, EI_z=2e3)
    first.force_and_tangent(X[:2], u1[:2])
    first.mid_point_force_and_tangent(X[:2], u0[:2], u1[:2])
    print(f"first Beam3D kernel calls in this process (load the cached machine code or compile it; "
          f"numba import if not yet done): {time.perf_counter() - t0:.2f} s")
    print(f"\nBeam3D kernels, {n} elements per call, best and median of {args.repeat} calls")
    print(f"{'kernel':<44s} {'best [ms]':>10s} {'median [ms]':>12s} {'best [elem/s]':>15s} {'median [elem/s]':>16s}")
    results = {}
    for second_order in (False, True):
        beam = Beam3D(conn, EA=1e6, GJ=1e2, EI_y=1e3, EI_z=2e3, GA_ky=1e5, GA_kz=1e5, rho_A=1.0,
                      second_order=second_order)
        kernels = {"force_and_tangent": lambda: beam.force_and_tangent(X, u1),
                   "mid_point_force_and_tangent": lambda: beam.mid_point_force_and_tangent(X, u0, u1)}
        if args.reference:
            kernels.update({"reference_static": lambda: beam.reference_static(X, u1),
                            "reference_mid_point_f_and_t":
                                lambda: beam.reference_mid_point_force_and_tangent(X, u0, u1)})
        for name, fun in kernels.items():
            label = f"{name}{' (2nd order)' if second_order else ''}"
            t = time_call(fun, args.repeat)
            best, median = min(t), statistics.median(t)
            results[label] = (best, median)
            print(f"{label:<44s} {1e3 * best:10.2f} {1e3 * median:12.2f} {n / best:15.3e} {n / median:16.3e}")

    print(f"\ncompiled kernels (2nd order) on small batches, microseconds per call "
          f"(median of {args.repeat} x 2000 calls)")
    print(f"{'elements':>8s} {'force_and_tangent':>18s} {'mid_point_f_and_t':>18s} {'strain_energy':>14s}")
    for n_small in (1, 2, 5, 10):
        Xs, u0s, u1s = X[:n_small].copy(), u0[:n_small].copy(), u1[:n_small].copy()
        beam = Beam3D(conn[:n_small], EA=1e6, GJ=1e2, EI_y=1e3, EI_z=2e3, GA_ky=1e5, GA_kz=1e5)
        row = []
        for name, fun in (("force_and_tangent", lambda: beam.force_and_tangent(Xs, u1s)),
                          ("mid_point_force_and_tangent", lambda: beam.mid_point_force_and_tangent(Xs, u0s, u1s)),
                          ("strain_energy", lambda: beam.strain_energy(Xs, u1s))):
            per_call = [t / 2000 for t in time_call(lambda: [fun() for _ in range(2000)], args.repeat)]
            results[f"small {n_small} {name}"] = (min(per_call), statistics.median(per_call))
            row.append(1e6 * statistics.median(per_call))
        print(f"{n_small:8d} {row[0]:18.2f} {row[1]:18.2f} {row[2]:14.2f}")
    return results


if __name__ == "__main__":
    main()
