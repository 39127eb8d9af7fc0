"""Design studies on Dask: speed-up of 2 local workers over the serial run, and per-task overhead.

1. 32 variants of Simo's spin-up beam (Meijaard 1993, sec. 5.1; 8 ``Beam2D`` elements, mid-point,
   20 s at dt = 1.25 ms, about 2.8 s each), EI and rho A within +-5 % (Latin hypercube), run as a
   user runs them: each study a fresh process (``python bench_studies.py --one serial|dask``)
   that imports flexmb, (on Dask) starts the 2-worker local cluster, runs every variant, writes
   study.h5 and ends. The speed-up is the serial wall time over the Dask wall time, whole
   processes. The runs go serial, Dask, Dask, serial (``--rounds`` times): the shared host's
   speed drifts by several per cent over minutes, and this order cancels a drift that is linear in
   time. Also printed: each run, where the Dask run's time goes, and whether all tables are equal.
2. Per-task overhead: studies of N ~0-s variants on the 2-worker cluster and serially; the
   overhead per variant is the slope of wall time over N (start-up, the HDF5 file and the tables
   are the same for both N), i.e. the scheduler, transfer and the file write of one variant.

Prints figures, asserts nothing. ``python benchmarks/bench_studies.py [--variants 32] [--dt 0.00125]
[--rounds 1]`` (about 5 minutes on 2 cores per round).
"""
from __future__ import annotations

import argparse
import functools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bytecode import write_bytecode
from flexmb.studies import Study, grid, latin_hypercube, load_study

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


def _spin_up_study(variants: int, dt: float) -> Study:
    space = latin_hypercube({"EI": (0.95 * EI, 1.05 * EI), "rho_A": (0.95 * RHO_A, 1.05 * RHO_A)}, n=variants, seed=1)
    return Study("spin-up-bench", functools.partial(spin_up, dt=dt), space)


def _one_process(mode: str, folder: Path, variants: int, dt: float) -> float:
    """Wall time (s) of a fresh process that runs the spin-up study serially or on 2 Dask workers."""
    command = [sys.executable, __file__, "--one", mode, "--out", str(folder), "--variants", str(variants),
               "--dt", str(dt)]
    start = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - start


def speed_up(variants: int, dt: float, rounds: int, tmp: Path) -> None:
    walls: dict[str, list[float]] = {"serial": [], "dask": []}
    tables = []
    for k, mode in enumerate(["serial", "dask", "dask", "serial"] * rounds):
        folder = tmp / f"{mode}-{k}"
        walls[mode].append(_one_process(mode, folder, variants, dt))
        tables.append((mode, load_study(folder)))
        print(f"  run {k + 1}: {mode:6s} {walls[mode][-1]:6.1f} s   (load average {os.getloadavg()[0]:.2f})")
    serial_s, dask_s = sum(walls["serial"]), sum(walls["dask"])
    serial, dask = next(r for m, r in tables if m == "serial"), next(r for m, r in tables if m == "dask")
    failures = sum(len(r.failures) for _, r in tables)
    q = ["extreme", "amplitude"]
    same = all(r.table[q].equals(serial.table[q]) for _, r in tables)
    per = serial.table["seconds"]
    print(f"\n{variants} spin-up variants, {per.mean():.2f} s each serially (min {per.min():.2f}, max {per.max():.2f});"
          " whole processes (import, cluster start-up, variants, file, exit)")
    print(f"  serial            {serial_s / len(walls['serial']):7.1f} s (mean of {len(walls['serial'])})")
    print(f"  2 Dask workers    {dask_s / len(walls['dask']):7.1f} s (mean of {len(walls['dask'])})"
          f"   speed-up {serial_s / dask_s:.2f}x")
    on_workers = dask.table.groupby("worker")["seconds"]
    wall = walls["dask"][0]
    print(f"  first Dask run: {dask.table['seconds'].mean():.2f} s per variant (CPU {dask.table['cpu'].mean():.2f} s), "
          "workers busy " + ", ".join(f"{x:.1f} s" for x in on_workers.sum()) + f" of its {wall:.1f} s; first "
          "variant of each " + ", ".join(f"{x:.2f} s" for x in on_workers.first()) + " (imports, numba's first call)")
    print(f"  workers busy {on_workers.sum().sum() / (2 * wall):.1%} of 2 x the wall time (the rest: imports, start-up, "
          "scheduling, the last variant alone, exit)")
    print(f"  CPU time of the variants: serial {serial.table['cpu'].sum():.1f} s, on Dask {dask.table['cpu'].sum():.1f} s")
    print(f"  tables identical (all {len(tables)} runs): {same}; failures {failures}")
    print(f"  extreme tip deflection {serial.table['extreme'].min():.5f} .. {serial.table['extreme'].max():.5f} m")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", type=int, default=32)
    parser.add_argument("--dt", type=float, default=DT)
    parser.add_argument("--rounds", type=int, default=1, help="rounds of serial, Dask, Dask, serial")
    parser.add_argument("--tasks", type=int, nargs=2, default=(20, 400), metavar=("N1", "N2"))
    parser.add_argument("--one", choices=("serial", "dask"), help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        options = {"serial": True} if args.one == "serial" else {"workers": 2}
        _spin_up_study(args.variants, args.dt).run(out=args.out, progress=False, **options)
        return
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.2f} (other processes slow the runs)")
    write_bytecode()                                        # as an installed flexmb has it
    spin_up({"EI": EI, "rho_A": RHO_A}, dt=0.02)          # numba's kernels compiled / cached once
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        speed_up(args.variants, args.dt, args.rounds, tmp)

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
