"""Design studies on Dask: speed-up of 2 local workers over the serial run, and per-task overhead.

1. 32 variants of Simo's spin-up beam (Meijaard 1993, sec. 5.1; 8 ``Beam2D`` elements, mid-point,
   20 s at dt = 1.25 ms, about 2.7 s each), EI and rho A within +-5 % (Latin hypercube): wall time
   serially and on a 2-worker local cluster (its start-up included), the speed-up, and whether the
   two tables are identical.
2. Per-task overhead: studies of N ~0-s variants on the 2-worker cluster and serially; the
   overhead per variant is the slope of wall time over N (start-up, the HDF5 file and the tables
   are the same for both N), i.e. the scheduler, transfer and the file write of one variant.

Prints figures, asserts nothing. ``python benchmarks/bench_studies.py [--variants 32] [--dt 0.00125]``
(about 2.5 minutes on 2 cores). The machine's load (printed) lowers the speed-up.
"""
from __future__ import annotations

import argparse
import functools
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from flexmb.studies import Study, grid, latin_hypercube

N_ELEMENTS = 8
EI, RHO_A = 1.4e4, 1.2                      # N m^2, kg/m: Simo's beam
DT = 0.00125                                # s (--dt; a whole number of steps in 20 s)


def spin_up(p: dict, dt: float) -> dict:
    """Extreme tip deflection (m) and residual vibration amplitude (m) of the spin-up beam, and
    the CPU time of the run (s: unlike wall time, not stretched by other processes on the cores)."""
    from flexmb.validation.spin_up import SpinUpBeam, simulate

    cpu = time.process_time()

    beam = SpinUpBeam(case="simo", length=10.0, EA=2.8e7, EI=p["EI"], rho_A=p["rho_A"], rho_I=6e-4,
                      omega_s=6.0, t_s=15.0, reference={}, converged=np.nan, figure_source="")
    run = simulate(beam, N_ELEMENTS, dt)
    return {"extreme": run.extreme, "amplitude": run.amplitude, "cpu": time.process_time() - cpu}


def nothing(p: dict) -> dict:
    return {"x": p["x"]}


def _wall(study: Study, folder: Path, **options) -> tuple[float, object]:
    start = time.perf_counter()
    result = study.run(out=folder, progress=False, **options)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", type=int, default=32)
    parser.add_argument("--dt", type=float, default=DT)
    parser.add_argument("--tasks", type=int, nargs=2, default=(20, 400), metavar=("N1", "N2"))
    args = parser.parse_args()
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.2f} (other processes slow the runs)")
    spin_up({"EI": EI, "rho_A": RHO_A}, dt=0.02)          # numba's kernels compiled / cached once
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        space = latin_hypercube({"EI": (0.95 * EI, 1.05 * EI), "rho_A": (0.95 * RHO_A, 1.05 * RHO_A)},
                                n=args.variants, seed=1)
        study = Study("spin-up-bench", functools.partial(spin_up, dt=args.dt), space)
        serial_s, serial = _wall(study, tmp / "serial", serial=True)
        dask_s, dask = _wall(study, tmp / "dask", workers=2)
        for result in (serial, dask):
            if len(result.failures):
                print(f"failed: {result.failures['error'].iloc[0]}")
        q = ["extreme", "amplitude"]
        same = serial.table[q].equals(dask.table[q])
        per = serial.table["seconds"]
        print(f"\n{args.variants} spin-up variants, {per.mean():.2f} s each serially (min {per.min():.2f}, "
              f"max {per.max():.2f}); load average now {os.getloadavg()[0]:.2f}")
        print(f"  serial            {serial_s:7.1f} s")
        print(f"  2 Dask workers    {dask_s:7.1f} s  (cluster start-up included)   speed-up {serial_s / dask_s:.2f}x")
        on_workers = dask.table.groupby("worker")["seconds"]
        print(f"  on the workers: {dask.table['seconds'].mean():.2f} s per variant (CPU {dask.table['cpu'].mean():.2f} s),"
              " busy " + ", ".join(f"{s:.1f} s" for s in on_workers.sum()) + " of the wall time; first variant of each "
              + ", ".join(f"{s:.2f} s" for s in on_workers.first()) + " (imports, numba cache)")
        print(f"  workers busy {on_workers.sum().sum() / (2 * dask_s):.1%} of 2 x the wall time (the rest: start-up, "
              "scheduling, the last variant alone)")
        print(f"  CPU time of the variants: serial {serial.table['cpu'].sum():.1f} s, on Dask {dask.table['cpu'].sum():.1f} s;"
              f" wall time per variant serial {per.mean():.2f} s, on Dask {dask.table['seconds'].mean():.2f} s"
              " (a difference is other load on the cores)")
        print(f"  tables identical: {same}; failures {len(serial.failures)} / {len(dask.failures)}")
        print(f"  extreme tip deflection {serial.table['extreme'].min():.5f} .. {serial.table['extreme'].max():.5f} m")

        print("\nper-task overhead (variants that do nothing)")
        for label, options in (("serial", {"serial": True}), ("2 Dask workers", {"workers": 2})):
            walls = []
            for n in args.tasks:
                s = Study(f"nothing-{n}", nothing, grid(x=[float(i) for i in range(n)]))
                walls.append(_wall(s, tmp / f"{label}-{n}", **options)[0])
            slope = (walls[1] - walls[0]) / (args.tasks[1] - args.tasks[0])
            print(f"  {label:15s} {args.tasks[0]} tasks {walls[0]:6.2f} s, {args.tasks[1]} tasks {walls[1]:6.2f} s:"
                  f" {1e3 * slope:6.2f} ms per variant")


if __name__ == "__main__":
    main()
