"""Speed of the co-rotational triangular shell (:class:`flexmb.elements.shell3.Shell3`, issue 15).

1. Kernel rates on ``--n`` random triangles (default 1e5), the element part of a Newton
   iteration without the scatter (best and median of ``--repeat`` calls after a warm-up call, so
   compilation or loading the cached machine code is not counted; elements/s = n / time):

   * ``force_and_tangent(X, u)``                  -> q (n, 18), K_t (n, 18, 18)   (target >= 1e5/s)
   * ``mid_point_force_and_tangent(X, u0, u1)``   -> q_m (n, 18), dq_m/du1 (n, 18, 18)
   * ``mid_point_force(X, u0, u1)``               -> q_m (n, 18)  (modified Newton's residual-only iterations:
     the start state u0 kept by the group from the call before, as a step's later iterations find it)
   * ``mid_point_force, new start``               -> the same with the start state computed in the call
     (a step's first force-only call when no recording of u0 came before it)

   The triangles have random position, orientation and shape (edges 0.5-2 m, angles kept away
   from 0), a random rigid rotation of up to 3 rad with small straining on top, and for the
   mid-point kernels a second configuration turned by up to 0.5 rad more. Measured 2026-11-29
   (load about 1.2): ``mid_point_force`` 4.2e5 elements/s before the start state was kept and the
   force alone skipped the second derivatives of the angle map, 7.2e5/s after (4.4e5/s with a new
   start state); ``mid_point_force_and_tangent`` 1.5e5-1.6e5/s, ``force_and_tangent`` 2.6e5/s.

2. One implicit mid-point step (``flexmb.integrate``) of a clamped square plate of
   ``--cells`` x ``--cells`` cells (default 130: 131^2 nodes, 102 966 DOFs, 33 800 triangles;
   1.3 m side, h = 5 mm steel, falling under gravity from rest, dt = 1 ms), target under 5 s.
   Printed: the Assembly's construction, the first step (wall and CPU time; a small plate's
   step before it compiled or loaded the kernels), a second step from the first's end state,
   its Newton iterations and factorisations, and where the time goes: the parts timed alone
   on the second step's start state (median of ``--repeat`` calls), weighted by how often the
   step used them --

   * ``element kernels``: the Shell3 group's mid-point force and tangent (force alone for
     residual-only iterations, with the start state the group keeps, as in a step);
   * ``assembly + inertia``: the rest of the scheme's residual and Jacobian data (gather, scatter
     into the CSC data, mass and rotary-inertia terms, loads);
   * ``LU``: the sparse LU of the Jacobian (:class:`flexmb.integrators.newton.Factorization`:
     equilibrated, with the pivot test, on a step's first factorisation; plain on modified
     Newton's later ones) and ``solve`` its triangular solves;
   * ``other``: the rest of the measured step (Newton's bookkeeping, the predictor, recording).

   ``--parts-only`` times the parts (LU: the equilibrated one) at the start state without
   running a step. Measured 2026-11-23 on the 2-core machine under load from other jobs
   (130 x 130 cells): kernel force + tangent 0.22 s, residual + Jacobian data 0.25 s, equilibrated
   LU 2.5-2.8 s (3.7e7 factor entries), solve 0.04 s; a step takes 4 modified Newton iterations
   with 2 factorisations. The plain LU of the later factorisations is not equilibrated, and the
   shell's small rotation rows then make SuperLU's threshold pivoting leave the fill-reducing
   ordering: at 40 x 40 cells (10 086 DOFs) it took 54 s against 0.16 s equilibrated (the step
   74 s against 0.3 s); at 130 x 130 cells the step does not finish in minutes. With every
   factorisation equilibrated the 130 x 130 step took 8.1-8.4 s (LU about 70 %).

Prints tables; asserts nothing. One BLAS thread, as the solver loop uses it. Timings depend on
the machine and its load: compare runs made in the same minute.

    python benchmarks/bench_shell.py [--n 100000] [--repeat 5] [--cells 130] [--skip-kernels] [--skip-step]
"""
from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_beam2d_kernel import machine_info, time_call

try:
    import flexmb as fm
except ModuleNotFoundError:                   # run from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import flexmb as fm

from flexmb.elements.shell3 import Shell3
from flexmb.integrators.newton import Factorization
from flexmb.integrators.schemes import MidPoint
from flexmb.io.shell_mesh import rectangle
from flexmb.rotations import compose, exp_map

E, NU, RHO = 2.1e11, 0.3, 7800.0               # Pa, -, kg/m^3


# ------------------------------------------------------------------ kernels
def random_triangles(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reference X (n, 3, 3) and two element DOF states u0, u1 (n, 18), see the module docstring."""
    side = rng.uniform(0.5, 2.0, n)                                                 # (n,)
    angle = rng.uniform(0.4, 2.2, n)                                                # (n,) angle at node 1
    local = np.zeros((n, 3, 3))                                                     # (n, 3 nodes, 3)
    local[:, 1, 0] = side
    local[:, 2, 0] = rng.uniform(0.5, 2.0, n) * np.cos(angle)
    local[:, 2, 1] = rng.uniform(0.5, 2.0, n) * np.sin(angle)
    R0 = exp_map(rng.normal(size=(n, 3)))                                           # (n, 3, 3) orientation
    X = rng.uniform(-5.0, 5.0, (n, 1, 3)) + np.einsum("nij,nkj->nki", R0, local)   # (n, 3, 3)

    def state(psi: np.ndarray) -> np.ndarray:
        """Rigid rotation psi (n, 3) about node 1, a random translation, small straining."""
        R = exp_map(psi)                                                            # (n, 3, 3)
        rel = X - X[:, :1]                                                          # (n, 3, 3)
        moved = np.einsum("nij,nkj->nki", R, rel) - rel + rng.normal(scale=0.5, size=(n, 1, 3))
        moved += 0.01 * rng.normal(size=(n, 3, 3))                                  # strains ~ 1 %
        spins = compose(0.05 * rng.normal(size=(n, 3, 3)), np.repeat(psi[:, None], 3, axis=1))   # (n, 3, 3)
        return np.concatenate([moved, spins], axis=2).reshape(n, 18)                # node-major [u, psi]

    psi0 = rng.normal(size=(n, 3))
    psi0 *= (rng.uniform(0.0, 3.0, n) / np.linalg.norm(psi0, axis=1))[:, None]
    turn = rng.normal(size=(n, 3))
    turn *= (rng.uniform(0.0, 0.5, n) / np.linalg.norm(turn, axis=1))[:, None]
    return X, state(psi0), state(compose(turn, psi0))


def kernel_rates(n: int, repeat: int, seed: int) -> None:
    X, u0, u1 = random_triangles(n, np.random.default_rng(seed))
    conn = np.zeros((n, 3), dtype=np.int64) + [0, 1, 2]
    start = time.perf_counter()
    small = Shell3(conn[:2], E=E, nu=NU, thickness=0.01, rho=RHO)
    small.force_and_tangent(X[:2], u1[:2])
    small.mid_point_force_and_tangent(X[:2], u0[:2], u1[:2])
    small.mid_point_force(X[:2], u0[:2], u1[:2])
    print(f"first Shell3 kernel calls in this process (numba import, cached machine code or compilation): "
          f"{time.perf_counter() - start:.2f} s")
    shell = Shell3(conn, E=E, nu=NU, thickness=0.01, rho=RHO)

    def new_start() -> np.ndarray:
        shell._kept_start = None                # drop the start state the group keeps
        return shell.mid_point_force(X, u0, u1)

    calls = {"force_and_tangent": lambda: shell.force_and_tangent(X, u1),
             "mid_point_force_and_tangent": lambda: shell.mid_point_force_and_tangent(X, u0, u1),
             "mid_point_force": lambda: shell.mid_point_force(X, u0, u1),
             "mid_point_force, new start": new_start}
    print(f"\nShell3 kernels, {n} random triangles per call, best and median of {repeat} calls after a warm-up call")
    head = f"{'kernel':<30s} {'best [ms]':>10s} {'median [ms]':>12s} {'best [elem/s]':>15s} {'median [elem/s]':>16s}"
    print(head + "\n" + "-" * len(head))
    for name, fun in calls.items():
        times = time_call(fun, repeat)
        best, median = min(times), statistics.median(times)
        print(f"{name:<30s} {1e3 * best:10.1f} {1e3 * median:12.1f} {n / best:15.3e} {n / median:16.3e}", flush=True)


# ---------------------------------------------------------- one time step
def clamped_plate(cells: int) -> fm.Model:
    """Square plate of cells x cells cells (1 cm each), h = 5 mm, clamped along x = 0, gravity -z."""
    side = 0.01 * cells
    xyz, triangles = rectangle(side, side, cells, cells, pattern="right")
    model = fm.Model(dim=3)
    nodes = model.add_nodes(xyz)
    model.add_shell(nodes[triangles], E=E, nu=NU, thickness=0.005, rho=RHO, name="plate")
    for node in nodes[np.abs(xyz[:, 0]) < 1e-9 * side]:
        model.fix(int(node))
    model.set_gravity([0.0, 0.0, -9.81])
    return model


def median_wall(call: Callable[[], object], repeat: int) -> float:
    """Median wall time (s) of ``repeat`` calls after a warm-up call."""
    return statistics.median(time_call(call, repeat))


def one_step(cells: int, repeat: int, run_steps: bool = True) -> None:
    dt = 1e-3
    start = time.perf_counter()
    fm.integrate(clamped_plate(4), dt, dt, progress=False)          # compile or load the kernels
    print(f"\nsmall plate's step (4x4 cells: compiling or loading the kernels): {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    model = clamped_plate(cells)
    built = time.perf_counter()
    asm = fm.Assembly(model)
    assembled = time.perf_counter()
    print(f"plate {cells}x{cells} cells: {asm.n_dof} DOFs ({asm.n_free} free), {asm.groups[0].n_elements} triangles, "
          f"{asm.nnz} stored Jacobian entries; model {built - start:.2f} s, Assembly {assembled - built:.2f} s")
    scheme = MidPoint(asm)
    if run_steps:
        def timed_step(t0: float, u0: np.ndarray | None, v0: np.ndarray | None):
            wall, cpu = time.perf_counter(), time.process_time()
            h = fm.integrate(asm, dt, t0 + dt, t0=t0, u0=u0, v0=v0, progress=False, keep_newton_logs=True)
            return h, time.perf_counter() - wall, time.process_time() - cpu

        h1, wall1, cpu1 = timed_step(0.0, None, None)
        h2, wall2, cpu2 = timed_step(dt, h1.u[-1], h1.v[-1])
        log = h2.newton_logs[-1]
        iterations, factorizations = log.iterations, log.factorizations
        print(f"first step {wall1:.2f} s wall ({cpu1:.2f} s CPU); second step {wall2:.2f} s wall ({cpu2:.2f} s CPU), "
              f"{iterations} Newton iterations, {factorizations} factorisations "
              f"({'modified' if factorizations < iterations else 'full'} Newton); target: under 5 s")
        s = scheme.initial_state(h1.t[-1], h1.u[-1], h1.v[-1])      # the second step's start
    else:
        s = scheme.initial_state(0.0, np.zeros(asm.n_dof), np.zeros(asm.n_dof))
    u1 = scheme.predict(s, dt)
    group = asm.groups[0]
    X = model.coordinates[group.connectivity]                                       # (n_el, 3, 3)
    edofs = asm.dofs.element_dofs(group)                                            # (n_el, 18)
    ue0, ue1 = s.u[edofs], u1[edofs]
    res = scheme.residual(s, dt, u1, tangent=True)
    J = asm.jacobian_matrix(res.jacobian_data)
    b = np.ones(J.shape[0])
    lu = Factorization(J, pivots=True)
    t = {"kernel F+T": median_wall(lambda: group.mid_point_force_and_tangent(X, ue0, ue1), repeat),
         "kernel F": median_wall(lambda: group.mid_point_force(X, ue0, ue1), repeat),
         "residual+Jacobian data": median_wall(lambda: scheme.residual(s, dt, u1, tangent=True), repeat),
         "residual": median_wall(lambda: scheme.residual(s, dt, u1, tangent=False), repeat),
         "Jacobian matrix": median_wall(lambda: asm.jacobian_matrix(res.jacobian_data), repeat),
         "LU with pivot test": median_wall(lambda: Factorization(J, pivots=True), repeat),
         "solve": median_wall(lambda: lu.solve(b), repeat)}
    if run_steps:       # the plain LU of modified Newton's later factorisations (no equilibration)
        t["LU plain"] = median_wall(lambda: Factorization(J, pivots=False), repeat)
    print("\nparts, median wall time of one call (s): " + ", ".join(f"{k} {v:.3f}" for k, v in t.items()))
    if not run_steps:
        return
    # full Newton evaluates residual and Jacobian at the predictor and after every iteration;
    # modified Newton the Jacobian once per factorisation and the residual alone after every iteration
    modified = factorizations < iterations
    tangent_evals = factorizations if modified else iterations + 1
    residual_evals = iterations if modified else 0
    parts = {"element kernels": tangent_evals * t["kernel F+T"] + residual_evals * t["kernel F"],
             "assembly + inertia": tangent_evals * (t["residual+Jacobian data"] - t["kernel F+T"] + t["Jacobian matrix"])
             + residual_evals * (t["residual"] - t["kernel F"]),
             "LU": t["LU with pivot test"] + (factorizations - 1) * t["LU plain"],
             "solve": iterations * t["solve"]}
    parts["other"] = wall2 - sum(parts.values())
    print(f"\nsecond step, {wall2:.2f} s wall, where it goes (estimate: part times x use counts):")
    for name, value in parts.items():
        print(f"  {name:<20s} {value:7.2f} s  {100.0 * value / wall2:5.1f} %")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="triangles per kernel call")
    parser.add_argument("--repeat", type=int, default=5, help="timed calls per kernel or part")
    parser.add_argument("--cells", type=int, default=130, help="cells per side of the time-step plate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-kernels", action="store_true", help="only the time step")
    parser.add_argument("--skip-step", action="store_true", help="only the kernel rates")
    parser.add_argument("--parts-only", action="store_true",
                        help="time the step's parts at the start state without running steps")
    args = parser.parse_args(argv)
    print(machine_info())
    if not args.skip_kernels:
        kernel_rates(args.n, args.repeat, args.seed)
    if not args.skip_step:
        one_step(args.cells, args.repeat, not args.parts_only)


if __name__ == "__main__":
    main()
