"""Write ``plate_two_thickness.msh``, ``.vtu`` and ``.inp``: one triangle mesh of a plate with two
thickness regions, in the three formats flexmb reads shells from (through meshio).

Run ``python meshes/make_plate_two_thickness.py`` (from anywhere); the files are written next
to this script. No mesher is needed: the triangles come from
:func:`flexmb.io.shell_mesh.rectangle` and meshio writes the files.

The plate (m): [0, 0.4] x [0, 0.2] in the plane z = 0, 8 x 4 cells cut by the "right"
diagonal (45 nodes, 64 triangles, normals along +z), clamped along x = 0. The half x < 0.2 is
2 mm thick ("thin"), the half x > 0.2 is 4 mm thick ("thick"). What each file holds:

======================  ======================================================================
plate_two_thickness.msh Gmsh 2.2 ASCII; physical groups "thin", "thick" (triangles, dimension 2)
                        and "clamped" (the 4 lines along x = 0, dimension 1); no element data
                        (meshio 5.3 cannot read back the $ElementData it writes): a thickness
                        per physical group
plate_two_thickness.vtu VTU; the Gmsh tags "gmsh:physical" 1 on all triangles and 2 on the
                        clamped lines (VTU keeps no names, so the sets are "1" and "2"), and the
                        thickness per triangle as cell data "thickness" (m; lines 0)
plate_two_thickness.inp Abaqus; element sets THIN, THICK and the node set CLAMPED (no cell data:
                        a thickness per element set)
======================  ======================================================================
"""
from __future__ import annotations

from pathlib import Path

import meshio
import numpy as np

from flexmb.io.shell_mesh import nodes_at, rectangle

SIZE = (0.4, 0.2)                          # a, b in m
CELLS = (8, 4)                             # nx, ny
THICKNESS = {"thin": 0.002, "thick": 0.004}  # m
TAGS = {"thin": 1, "thick": 2, "clamped": 3}
FOLDER = Path(__file__).parent
STEM = "plate_two_thickness"


def plate() -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """Points (45, 3), the triangles of each region (name -> (32, 3)) and the clamped edge's
    lines (4, 2), in order along the edge."""
    points, triangles = rectangle(*SIZE, *CELLS)
    centroid_x = points[triangles, 0].mean(axis=1)
    regions = {"thin": triangles[centroid_x < 0.5 * SIZE[0]], "thick": triangles[centroid_x > 0.5 * SIZE[0]]}
    edge = nodes_at(points, x=0.0)
    return points, regions, np.column_stack([edge[:-1], edge[1:]])


def meshes() -> dict[str, meshio.Mesh]:
    """The meshio mesh of each file, by suffix."""
    points, regions, clamped = plate()
    triangles = np.concatenate([regions["thin"], regions["thick"]])
    thickness = np.repeat([THICKNESS["thin"], THICKNESS["thick"]], [len(regions["thin"]), len(regions["thick"])])
    tags = [np.repeat([TAGS["thin"], TAGS["thick"]], [len(regions["thin"]), len(regions["thick"])]),
            np.full(len(clamped), TAGS["clamped"])]
    cells = [("triangle", triangles), ("line", clamped)]
    gmsh = meshio.Mesh(points, cells,
                       cell_data={"gmsh:physical": tags, "gmsh:geometrical": tags},
                       field_data={name: np.array([tag, 1 if name == "clamped" else 2]) for name, tag in TAGS.items()})
    vtu = meshio.Mesh(points, cells, cell_data={"gmsh:physical": [np.ones(len(triangles), dtype=int),
                                                                  np.full(len(clamped), 2)],
                                                "thickness": [thickness, np.zeros(len(clamped))]})
    n_thin = len(regions["thin"])
    abaqus = meshio.Mesh(points, [("triangle", triangles)],
                         cell_sets={"THIN": [np.arange(n_thin)], "THICK": [np.arange(n_thin, len(triangles))]},
                         point_sets={"CLAMPED": nodes_at(points, x=0.0)})
    return {".msh": gmsh, ".vtu": vtu, ".inp": abaqus}


def main() -> None:
    for suffix, mesh in meshes().items():
        path = FOLDER / f"{STEM}{suffix}"
        if suffix == ".msh":
            meshio.write(path, mesh, file_format="gmsh22", binary=False)
        else:
            meshio.write(path, mesh)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
