"""Solid meshes: read tetrahedra and hexahedra through meshio, or generate a structured box.

:func:`read_solid_mesh` reads any file meshio reads (Gmsh ``.msh``, Abaqus ``.inp``, VTU, ...)
into a :class:`SolidMesh`: the points and, per named cell set (Gmsh physical group, Abaqus
``*ELSET``, or ``gmsh:physical`` tag named through ``$PhysicalNames``), its 4-node tetrahedra,
10-node tetrahedra and 8-node hexahedra, each in VTK node order ready for
:meth:`flexmb.model.Model.add_solid`::

    mesh = read_solid_mesh("part.msh")
    model = fm.Model(dim=3)
    model.add_nodes(mesh.points)
    kind, cells = mesh.blocks["steel"]
    model.add_solid(cells, E=210e9, nu=0.3, rho=7850.0, kind=kind, name="steel")

Gmsh numbers the last two mid-side nodes of a 10-node tetrahedron (edges (2,3) and (1,3))
the other way round from VTK; meshio's Gmsh reader swaps them back, so the cells of a ``.msh``
file come out in VTK order like those of the other formats (a test reads a hand-written Gmsh
file to check it). A file without named sets gives one block per kind, named after the kind.

:func:`box` makes the structured meshes of a brick that the tests and examples use.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from flexmb.checks import ModelError
from flexmb.elements.solid_shapes import HEX8_CORNERS, NODES, TET10_EDGES

#: meshio cell type -> solid kind
MESHIO_KINDS = {"tetra": "tet4", "tetra10": "tet10", "hexahedron": "hex8"}


@dataclass
class SolidMesh:
    """Points and named solid cell blocks of a mesh file.

    ``points`` (n_points, 3) in m; ``blocks``: name -> (kind, (n_el, n_nodes) int64 point indices)
    with kind ``"tet4"``, ``"tet10"`` or ``"hex8"``; a set holding cells of several kinds gives
    one block per kind, named ``"<set>/<kind>"``. ``node_sets``: set name -> sorted point indices
    of the set's cells of any type and of the file's point sets (Abaqus ``*NSET``).
    """

    path: Path
    points: np.ndarray
    blocks: dict[str, tuple[str, np.ndarray]]
    node_sets: dict[str, np.ndarray]


def read_solid_mesh(path: str | Path) -> SolidMesh:
    """Read the points and named solid cell blocks of a mesh file (see the module docstring).

    Raises FileNotFoundError if ``path`` does not exist and ModelError naming the file if meshio
    cannot read it or it holds no tetrahedra or hexahedra.
    """
    from flexmb.io.mesh import _cell_sets, read_with_meshio

    raw = read_with_meshio(path, "read_solid_mesh")
    path = Path(path)
    points = np.zeros((len(raw.points), 3))
    points[:, :raw.points.shape[1]] = raw.points
    sets = _cell_sets(raw) or {"": [(b, np.arange(len(block.data))) for b, block in enumerate(raw.cells)]}
    blocks: dict[str, tuple[str, np.ndarray]] = {}
    node_sets: dict[str, np.ndarray] = {}
    for name, members in sets.items():
        by_kind: dict[str, list[np.ndarray]] = {}
        for b, idx in members:
            kind = MESHIO_KINDS.get(raw.cells[b].type)
            if kind is not None:
                by_kind.setdefault(kind, []).append(raw.cells[b].data[idx])
        for kind, parts in by_kind.items():
            label = kind if not name else name if len(by_kind) == 1 else f"{name}/{kind}"
            blocks[label] = (kind, np.concatenate(parts).astype(np.int64))
        if name:
            node_sets[name] = np.unique(np.concatenate([raw.cells[b].data[idx].ravel() for b, idx in members]))
    for name, idx in raw.point_sets.items():
        node_sets[name] = np.union1d(node_sets.get(name, np.zeros(0, np.int64)), np.asarray(idx, np.int64))
    if not blocks:
        types = sorted({block.type for block in raw.cells})
        raise ModelError(f"mesh file {path} holds no solid cells (tetra, tetra10, hexahedron); it has {types}")
    return SolidMesh(path, points, blocks, node_sets)


def box(lx: float, ly: float, lz: float, nx: int, ny: int, nz: int, kind: str = "hex8"
        ) -> tuple[np.ndarray, np.ndarray]:
    """A structured mesh of the brick [0, lx] x [0, ly] x [0, lz] (m), nx x ny x nz cells.

    ``kind`` ``"hex8"`` gives one hexahedron per cell; ``"tet4"`` cuts each cell into six
    tetrahedra around its diagonal from (0,0,0) to (1,1,1) (Kuhn's subdivision, conforming across
    cells); ``"tet10"`` adds a node at the middle of every edge of those. Returns coordinates
    (n_nodes, 3) and cells (n_el, n_nodes_per_cell) int64, VTK order, positive volumes; grid
    point (i, j, k) at (i lx/nx, j ly/ny, k lz/nz) is node ``i + (nx + 1) (j + (ny + 1) k)``.
    """
    if kind not in NODES:
        raise ModelError(f"box: kind must be one of {sorted(NODES)}, got {kind!r}")
    counts = np.array([nx, ny, nz])
    if not all(isinstance(n, (int, np.integer)) and n >= 1 for n in counts.tolist()):
        raise ModelError(f"box: nx, ny, nz must be integers >= 1, got {nx}, {ny}, {nz}")
    if not all(np.isfinite(v) and v > 0 for v in (lx, ly, lz)):
        raise ModelError(f"box: lx, ly, lz must be positive (m), got {lx}, {ly}, {lz}")
    axes = [np.linspace(0.0, length, n + 1) for length, n in zip((lx, ly, lz), counts)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)            # (nx+1, ny+1, nz+1, 3)
    coordinates = grid.transpose(2, 1, 0, 3).reshape(-1, 3)                # x fastest
    ijk = np.stack(np.meshgrid(*[np.arange(n) for n in counts], indexing="ij"), axis=-1).reshape(-1, 3)

    def node(offset: np.ndarray) -> np.ndarray:
        p = ijk + offset                                                   # (n_cells, 3)
        return p[:, 0] + (nx + 1) * (p[:, 1] + (ny + 1) * p[:, 2])

    corners = ((HEX8_CORNERS + 1) / 2).astype(int)                         # (8, 3) in {0, 1}
    hexes = np.stack([node(c) for c in corners], axis=1)                   # (n_cells, 8)
    if kind == "hex8":
        return coordinates, hexes
    # Kuhn: for each order of the axes, the path (0,0,0) -> +e_a -> +e_b -> (1,1,1)
    tets = []
    for order in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)):
        path = np.zeros((4, 3), dtype=int)
        for step, axis in enumerate(order):
            path[step + 1:, axis] = 1
        tets.append(np.stack([node(p) for p in path], axis=1))
    tets = np.concatenate(tets)                                            # (6 n_cells, 4)
    X = coordinates[tets]
    volume = np.einsum("ei,ei->e", np.cross(X[:, 1] - X[:, 0], X[:, 2] - X[:, 0]), X[:, 3] - X[:, 0])
    tets[volume < 0] = tets[volume < 0][:, [0, 2, 1, 3]]                   # odd permutations
    if kind == "tet4":
        return coordinates, tets
    return quadratic_tetrahedra(coordinates, tets)


def quadratic_tetrahedra(coordinates: np.ndarray, tets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """10-node tetrahedra from 4-node ones: a new node at the middle of every edge (shared by the
    cells around it). Returns the coordinates (n_nodes + n_edges, 3) and the cells (n_el, 10),
    VTK order."""
    edges = np.sort(tets[:, TET10_EDGES], axis=2)                          # (n_el, 6, 2)
    unique, inverse = np.unique(edges.reshape(-1, 2), axis=0, return_inverse=True)
    middles = 0.5 * (coordinates[unique[:, 0]] + coordinates[unique[:, 1]])
    cells = np.concatenate([tets, len(coordinates) + inverse.reshape(-1, 6)], axis=1)
    return np.vstack([coordinates, middles]), cells.astype(np.int64)
