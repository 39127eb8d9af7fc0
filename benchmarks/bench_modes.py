"""Natural modes of a ~1e5-DOF spatial frame (:func:`flexmb.natural_modes`, sparse path).

The model: a lattice tower of Beam3D members (steel tubes, consistent mass with rotary
inertia), ``--plan`` x ``--plan`` columns on a 1 m grid, ``--levels`` storeys of 1 m, beams in
both plan directions at every level, clamped at the ground; 6 DOFs per node. The default
8 x 8 columns x 260 storeys has 16 704 nodes and 99 840 free DOFs.

What is measured (wall clock, one run each): building the model and its Assembly; the system
matrices (tangent and mass assembly, :func:`flexmb.system_matrices`); the sparse LU of
``K - sigma M`` (SuperLU, the ordering natural_modes uses), timed on its own; the eigensolver
(ARPACK shift-invert, the first ``--modes`` modes), i.e. the rest of :func:`flexmb.natural_modes`;
and the total of ``natural_modes``. Nothing is asserted; the issue's target is the first 20
modes in under 30 s on the project machine (2 cores).

Run: ``python benchmarks/bench_modes.py [--plan 8] [--levels 260] [--modes 20]``
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse.linalg as spla

try:
    import flexmb as fm
except ModuleNotFoundError:                   # run from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import flexmb as fm
from flexmb.analysis.modes import SHIFT, eigenvalue_scale  # noqa: E402

E, G, RHO = 2.1e11, 8.1e10, 7850.0            # steel, Pa and kg/m^3
OUTER, WALL = 0.1, 0.005                      # tube, m


def tower(plan: int, levels: int) -> fm.Model:
    """The lattice tower described in the module docstring."""
    r_o, r_i = OUTER / 2, OUTER / 2 - WALL
    area = np.pi * (r_o**2 - r_i**2)
    inertia = np.pi / 4 * (r_o**4 - r_i**4)
    model = fm.Model(dim=3)
    i, j, k = np.meshgrid(np.arange(plan), np.arange(plan), np.arange(levels + 1), indexing="ij")
    nodes = model.add_nodes(np.c_[i.ravel(), j.ravel(), k.ravel()].astype(float)).reshape(i.shape)
    members = [np.c_[nodes[:, :, :-1].ravel(), nodes[:, :, 1:].ravel()],                # columns
               np.c_[nodes[:-1, :, 1:].ravel(), nodes[1:, :, 1:].ravel()],              # beams along x
               np.c_[nodes[:, :-1, 1:].ravel(), nodes[:, 1:, 1:].ravel()]]              # beams along y
    axes = [(1.0, 0.0, 0.0), (0.0, 0.0, 1.0), (0.0, 0.0, 1.0)]
    for name, conn, y_axis in zip(("columns", "beams x", "beams y"), members, axes):
        model.add_beam3d(conn, EA=E * area, GJ=G * 2 * inertia, EI_y=E * inertia, EI_z=E * inertia,
                         rho_A=RHO * area, rho_I=RHO * inertia * np.array([2.0, 1.0, 1.0]),
                         y_axis=y_axis, mass="consistent", name=name)
    for node in nodes[:, :, 0].ravel():
        model.fix(int(node))
    return model


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", type=int, default=8, help="columns per plan direction")
    parser.add_argument("--levels", type=int, default=260, help="storeys")
    parser.add_argument("--modes", type=int, default=20, help="number of modes")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    model = tower(args.plan, args.levels)
    asm = fm.Assembly(model)
    t_build = time.perf_counter() - t0

    t0 = time.perf_counter()
    system = fm.system_matrices(asm)
    t_matrices = time.perf_counter() - t0

    # the factorisation natural_modes does, timed on its own (same matrix, same ordering)
    scale = eigenvalue_scale(system.K, system.M)
    t0 = time.perf_counter()
    spla.splu((system.K + SHIFT * scale * system.M).tocsc(), permc_spec="MMD_AT_PLUS_A")
    t_factor = time.perf_counter() - t0

    t0 = time.perf_counter()
    modes = fm.natural_modes(asm, args.modes, dense_limit=2000)
    t_total = time.perf_counter() - t0
    times = {"build model + Assembly": t_build, "system matrices (assembly of K, M)": t_matrices,
             "factorisation of K - sigma M (SuperLU, timed separately)": t_factor,
             "eigensolver (ARPACK, the rest of natural_modes)": t_total - t_matrices - t_factor,
             "natural_modes total": t_total}

    print(f"tower {args.plan} x {args.plan} columns x {args.levels} storeys: {model.n_nodes} nodes, "
          f"{asm.n_free} free DOFs, {sum(g.n_elements for g in model.groups)} Beam3D elements")
    for name, value in times.items():
        print(f"  {name:<64s} {value:8.2f} s")
    print(f"first {args.modes} frequencies (Hz): " + ", ".join(f"{f:.4g}" for f in modes.frequencies_hz))
    return times


if __name__ == "__main__":
    main()
