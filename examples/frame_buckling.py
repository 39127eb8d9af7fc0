"""Linear buckling of a two-storey steel frame read from a Gmsh mesh, with mode pictures
=====================================================================================

The frame (``meshes/portal_frame_3d.msh``: 4 columns on a 4 m x 3 m plan, two storeys of 3.5 m,
floor beams along the plan edges, 4 elements per member) is read through meshio; its physical
groups become element groups ("columns", "beams") and supports ("base", clamped). Columns are
HEB 200, beams IPE 300 (steel, E = 210 GPa, G = 81 GPa; section values from the usual tables).
A vertical load P = 100 kN acts on every roof corner. :func:`flexmb.linear_buckling` solves
(K_0 + lam K_g) phi = 0 with the geometric stiffness of the co-rotational Beam3D elements.

Physics check (printed): the critical load of a column must lie between that of a free-standing
cantilever of the full height H = 7 m (beams without stiffness, pi^2 EI / (4 H^2)) and that of a
storey column with rigid floors (sway of a fixed-fixed column of height h = 3.5 m, pi^2 EI / h^2),
EI being the column's weaker bending stiffness.

Writes ``frame_modes.h5`` (the modes as a result file) and ``frame_modes.png`` (first modes,
rendered with pyvista) in the output folder.

    python examples/frame_buckling.py [--quick] [--out DIR]
    flexmb render example-output/frame_modes.h5 --out modes.png
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.io.mesh import build_model, read_mesh

MESH = Path(__file__).resolve().parents[1] / "meshes" / "portal_frame_3d.msh"
E, G = 2.1e11, 8.1e10                                      # Pa
COLUMN = {"A": 7.81e-3, "I_y": 5.696e-5, "I_z": 2.003e-5, "J": 5.93e-7}   # HEB 200, m^2 and m^4
BEAM = {"A": 5.38e-3, "I_y": 8.356e-5, "I_z": 6.04e-6, "J": 2.01e-7}      # IPE 300
RHO = 7850.0                                               # kg/m^3
P = 1.0e5                                                  # N per roof corner
H, STOREY = 7.0, 3.5                                       # m


def section(s: dict[str, float], y_axis: tuple[float, float, float]) -> dict:
    return {"element": "beam3d", "EA": E * s["A"], "GJ": G * s["J"], "EI_y": E * s["I_y"],
            "EI_z": E * s["I_z"], "rho_A": RHO * s["A"], "y_axis": y_axis}


def build() -> tuple[fm.Model, np.ndarray]:
    """The frame with its roof loads; returns the model and the model nodes of the roof corners."""
    model, node_of_point = build_model(
        MESH, dim=3,
        groups={"columns": section(COLUMN, (1.0, 0.0, 0.0)),        # strong axis along x
                "beams": section(BEAM, (0.0, 0.0, 1.0))},           # web vertical
        supports={"base": "all"})
    mesh = read_mesh(MESH)
    roof = node_of_point[mesh.node_sets["roof"]]
    for node in roof:
        model.add_load(int(node), "uz", -P)
    return model, roof


def main(quick: bool = False, out_dir: str | Path = "example-output") -> dict[str, float]:
    """Buckling factors and mode pictures; returns the critical factor and the two bounds."""
    from flexmb.viz import scene

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model, _ = build()
    result = fm.linear_buckling(model, n_modes=2 if quick else 4)
    EI = E * min(COLUMN["I_y"], COLUMN["I_z"])
    lower, upper = np.pi**2 * EI / (4 * H**2) / P, np.pi**2 * EI / STOREY**2 / P
    for k, lam in enumerate(result.load_factors):
        print(f"mode {k + 1}: critical load factor {lam:.4f}  (column load {lam * P / 1e3:.0f} kN)")
    print(f"bounds from single columns: {lower:.3f} (cantilever, H = {H} m) < lambda < "
          f"{upper:.3f} (rigid floors, h = {STOREY} m)")
    modes = result.mode_shapes()
    modes.save(out / "frame_modes.h5", overwrite=True)      # re-written on every run
    scene.render_modes(modes, out / "frame_modes.png", n=len(result.load_factors),
                       window_size=(900, 600) if quick else (1400, 900))
    return {"critical": result.critical, "lower_bound": lower, "upper_bound": upper}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer modes, smaller picture (as in the tests)")
    parser.add_argument("--out", default="example-output", help="output folder (default: %(default)s)")
    args = parser.parse_args()
    print(main(args.quick, args.out))
