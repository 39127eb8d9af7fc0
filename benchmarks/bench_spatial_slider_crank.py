"""Wall time of a 3-body spatial slider-crank at 1 ms steps (issue 14: faster than real time).

The mechanism (SI units, z up, gravity 9.81 m/s^2 along -z), after the spatial slider-crank of
Haug (1989, Sec. 9.2) with its own dimensions:

* crank: turns about the global x axis through O = (0, 0.1, 0.12) (revolute joint to the ground,
  driven at the constant speed ``OMEGA``); its pin A is 0.08 m from O, at (0, 0.1, 0.2) at t = 0;
* connecting rod, 0.3 m long, from A (spherical joint to the crank) to B = (0.2, 0, 0)
  (universal joint to the slider, cross axes normal to the rod: the rod cannot spin about itself);
* slider: on the global x axis (prismatic joint to the ground).

3 x 6 coordinates - (5 + 1 + 3 + 4 + 5) joint equations = 0 DOF: the drive moves the whole
mechanism (A stays 0.076 .. 0.236 m from the slider's line, always less than the rod: no dead
centre). Consistent initial velocities come from :func:`flexmb.consistent_initial_state`.
Scheme: mid-point (energy conserving), dt = 1 ms, 1 s of motion (1000 steps).

Printed: wall time of ``fm.integrate`` (median and best of ``--repeat`` runs on one assembly,
after one warm-up run that also compiles or loads the compiled kernels) and its CPU time, the
whole process
(interpreter start to exit, measured by the caller's ``time``; here: from the start of this
module to the end of the last run), steps/s, the real-time factor, ms per step and per Newton
iteration, and a cProfile breakdown of one run (``--profile N`` rows, by own time).

Run: ``python benchmarks/bench_spatial_slider_crank.py [--repeat 5] [--t-end 1.0] [--profile 25]``
"""
from __future__ import annotations

import time

PROCESS_START = time.perf_counter()

import argparse  # noqa: E402
import cProfile  # noqa: E402
import io  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

try:
    import flexmb as fm
except ModuleNotFoundError:                   # run from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import flexmb as fm

OMEGA = 2.0 * np.pi                            # rad/s, crank speed (one turn per second)
DT = 1e-3                                      # s
T_END = 1.0                                    # s
CRANK_PIVOT = np.array([0.0, 0.1, 0.12])       # O, m
CRANK_PIN = np.array([0.0, 0.1, 0.2])          # A at t = 0, m
SLIDER = np.array([0.2, 0.0, 0.0])             # B at t = 0, m (|AB| = 0.3 m)
CRANK_MASS, CRANK_INERTIA = 0.12, (1.0e-4, 1.0e-4, 2.0e-5)        # kg, kg m^2 (about its centre)
ROD_MASS, ROD_INERTIA = 0.5, (4.0e-3, 4.0e-3, 1.0e-4)             # along the rod: the small one
SLIDER_MASS, SLIDER_INERTIA = 2.0, (1.0e-3, 1.0e-3, 1.0e-3)


def rod_inertia() -> np.ndarray:
    """Inertia tensor (3, 3) of the rod in the reference orientation: ROD_INERTIA in a frame
    whose third axis runs along the rod from B to A."""
    e3 = (CRANK_PIN - SLIDER) / np.linalg.norm(CRANK_PIN - SLIDER)
    e1 = np.cross(e3, [0.0, 0.0, 1.0])
    e1 /= np.linalg.norm(e1)
    frame = np.column_stack([e1, np.cross(e3, e1), e3])
    return frame @ np.diag(ROD_INERTIA) @ frame.T


def build() -> tuple[fm.Assembly, np.ndarray, np.ndarray]:
    """The mechanism's assembly and consistent initial displacements and velocities (n_dof,)."""
    m = fm.Model(3)
    m.set_gravity([0.0, 0.0, -9.81])
    crank = m.add_rigid_body(0.5 * (CRANK_PIVOT + CRANK_PIN), CRANK_MASS, CRANK_INERTIA, name="crank")
    rod = m.add_rigid_body(0.5 * (CRANK_PIN + SLIDER), ROD_MASS, rod_inertia(), name="rod")
    slider = m.add_rigid_body(SLIDER, SLIDER_MASS, SLIDER_INERTIA, name="slider")
    along_rod = CRANK_PIN - SLIDER
    m.add_joint("revolute", None, crank, at=CRANK_PIVOT, axis=[1.0, 0.0, 0.0], drive=lambda t: OMEGA * t,
                name="motor")
    m.add_joint("spherical", crank, rod, at=CRANK_PIN, name="crank pin")
    m.add_joint("universal", rod, slider, at=SLIDER, axis=along_rod, x_axis=[0.0, 0.0, 1.0], name="cross")
    m.add_joint("prismatic", None, slider, at=SLIDER, axis=[1.0, 0.0, 0.0], name="slide")
    asm = fm.Assembly(m)
    u0, v0 = fm.consistent_initial_state(asm)
    return asm, u0, v0


def run(asm: fm.Assembly, u0: np.ndarray, v0: np.ndarray, t_end: float) -> fm.TimeHistory:
    return fm.integrate(asm, DT, t_end, scheme="mid-point", u0=u0, v0=v0, progress=False)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs")
    parser.add_argument("--t-end", type=float, default=T_END, help="simulated time per run (s)")
    parser.add_argument("--profile", type=int, default=25, help="profile rows to print (0: no profile)")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    asm, u0, v0 = build()
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    history = run(asm, u0, v0, args.t_end)                         # warm-up: loads compiled kernels
    t_first = time.perf_counter() - t0
    walls, cpus = [], []
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        history = run(asm, u0, v0, args.t_end)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    n_steps = history.n_steps - 1
    iterations = int(np.sum(history.newton_iterations))
    wall = statistics.median(walls)
    slider_x = np.asarray(history.u)[:, asm.dofs.index(asm.model.bodies[2].node, "ux")]
    print(f"3-body spatial slider-crank, mid-point, dt = {DT * 1e3:g} ms, {args.t_end:g} s: {n_steps} steps, "
          f"{iterations} Newton iterations ({iterations / n_steps:.2f} per step)")
    print(f"  slider travel {np.ptp(slider_x) * 1e3:.6f} mm; final u[slider x] = {slider_x[-1]:.15e} m")
    print(f"  model build + consistent start  {t_build:8.3f} s")
    print(f"  first run (with kernel loading) {t_first:8.3f} s")
    print(f"  integrate: median {wall:.3f} s, best {min(walls):.3f} s of {args.repeat} "
          f"({', '.join(f'{w:.3f}' for w in walls)})")
    print(f"  CPU time of this process: median {statistics.median(cpus):.3f} s (on a shared machine the wall "
          "time exceeds it by the time the other processes held the cores)")
    print(f"  {n_steps / wall:8.0f} steps/s   real-time factor {args.t_end / wall:.2f} "
          f"(> 1: faster than real time)")
    print(f"  {1e3 * wall / n_steps:8.3f} ms per step   {1e6 * wall / iterations:8.1f} us per Newton iteration")
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        run(asm, u0, v0, args.t_end)
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(args.profile)
        print("profile of one run (own time):")
        print("\n".join(line for line in out.getvalue().splitlines()[4:] if line.strip()))
    whole = time.perf_counter() - PROCESS_START
    print(f"  whole process (from module start, without interpreter start): {whole:.3f} s")
    return {"wall": wall, "steps_per_s": n_steps / wall, "whole": whole}


if __name__ == "__main__":
    main()
