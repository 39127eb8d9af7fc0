"""Solid meshes: read tetrahedra, hexahedra and wedges through meshio, or generate a structured box.

:func:`read_solid_mesh` reads any file meshio reads (Gmsh ``.msh``, Abaqus ``.inp``, VTU, ...)
into a :class:`SolidMesh`: the points and, per named cell set (Gmsh physical group, Abaqus
``*ELSET``, or ``gmsh:physical`` tag named through ``$PhysicalNames``), its 4- and 10-node
tetrahedra, 8- and 20-node hexahedra and 6- and 15-node wedges (meshio's ``tetra``, ``tetra10``,
``hexahedron``, ``hexahedron20``, ``wedge``, ``wedge15``; Abaqus C3D4, C3D10, C3D8, C3D20 and
C3D20R, C3D6, C3D15), each in meshio's node order ready for :meth:`flexmb.model.Model.add_solid`::

    mesh = read_solid_mesh("part.msh")
    model = fm.Model(dim=3)
    model.add_nodes(mesh.points)
    kind, cells = mesh.blocks["steel"]
    model.add_solid(cells, E=210e9, nu=0.3, rho=7850.0, kind=kind, name="steel")

Gmsh numbers the last two mid-side nodes of a 10-node tetrahedron (edges (2,3) and (1,3))
the other way round from VTK; meshio's Gmsh reader swaps them back, so the cells of a ``.msh``
file come out in VTK order like those of the other formats (a test reads a hand-written Gmsh
file to check it); it reorders Gmsh's hex20 and wedge15 mid-edge nodes likewise. Abaqus numbers
C3D20 and C3D15 like VTK and meshio reads them as they are (tests read hand-written files).
meshio's ``wedge`` is Gmsh's and Abaqus's (base (0,1,2) counter-clockwise seen from the top); it
swaps the base when it writes a VTU file and back when it reads one (so VTK 9 itself reads those
wedges inverted: :mod:`flexmb.elements.solid_shapes`). meshio reads C3D20R (and
C3D8R) as the fully integrated cell: flexmb integrates them fully. A file without named sets gives
one block per kind, named after the kind.

:func:`box` makes the structured meshes of a brick that the tests and examples use.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from flexmb.checks import ModelError
from flexmb.elements.solid_shapes import HEX8_CORNERS, HEX20_EDGES, NODES, TET10_EDGES, WEDGE15_EDGES

#: meshio cell type -> solid kind
MESHIO_KINDS = {"tetra": "tet4", "tetra10": "tet10", "hexahedron": "hex8", "hexahedron20": "hex20",
                "wedge": "wedge6", "wedge15": "wedge15"}


def meshio_knows_solids() -> None:
    """Let meshio create, read and write meshes of every cell type of :data:`MESHIO_KINDS`.

    meshio 5.3.5 (the version installed here) lists no topological dimension for ``wedge15`` and raises
    KeyError on any mesh holding 15-node wedges (nschloe/meshio issues 1247 and 1505); this adds the
    missing entry, 3, to meshio's table and changes nothing else. The solid readers and writers of
    flexmb call it before they hand cells to meshio.
    """
    from meshio import _mesh

    for cell_type in MESHIO_KINDS:
        _mesh.topological_dimension.setdefault(cell_type, 3)


@dataclass
class SolidMesh:
    """Points and named solid cell blocks of a mesh file.

    ``points`` (n_points, 3) in m; ``blocks``: name -> (kind, (n_el, n_nodes) int64 point indices)
    with kind one of :data:`MESHIO_KINDS`' values; a set holding cells of several kinds gives
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
    cannot read it or it holds no solid cells (tetrahedra, hexahedra or wedges).
    """
    from flexmb.io.mesh import _cell_sets, read_with_meshio

    meshio_knows_solids()
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
        raise ModelError(f"mesh file {path} holds no solid cells ({', '.join(MESHIO_KINDS)}); it has {types}")
    return SolidMesh(path, points, blocks, node_sets)


def box(lx: float, ly: float, lz: float, nx: int, ny: int, nz: int, kind: str = "hex8"
        ) -> tuple[np.ndarray, np.ndarray]:
    """A structured mesh of the brick [0, lx] x [0, ly] x [0, lz] (m), nx x ny x nz cells.

    ``kind`` ``"hex8"`` gives one hexahedron per cell; ``"tet4"`` cuts each cell into six
    tetrahedra around its diagonal from (0,0,0) to (1,1,1) (Kuhn's subdivision, conforming across
    cells); ``"wedge6"`` cuts each cell into two wedges along z by the plane through its diagonal
    from (0,0) to (1,1) in x, y (conforming: every cell is cut alike); ``"tet10"``, ``"hex20"`` and
    ``"wedge15"`` add a node at the middle of every edge of the tet4, hex8 or wedge6 cells. Returns
    coordinates (n_nodes, 3) and cells (n_el, n_nodes_per_cell) int64 in meshio's (VTK) order,
    positive volumes; grid point (i, j, k) at (i lx/nx, j ly/ny, k lz/nz) is node
    ``i + (nx + 1) (j + (ny + 1) k)``, the mid-edge nodes come after the grid points.
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
    if kind == "hex20":
        return with_edge_nodes(coordinates, hexes, HEX20_EDGES)
    if kind in ("wedge6", "wedge15"):
        # bases (0,1,2) and (0,2,3) of the hexahedron's bottom, counter-clockwise seen from its top
        wedges = np.concatenate([hexes[:, [0, 1, 2, 4, 5, 6]], hexes[:, [0, 2, 3, 4, 6, 7]]])
        return (coordinates, wedges) if kind == "wedge6" else with_edge_nodes(coordinates, wedges, WEDGE15_EDGES)
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
    return with_edge_nodes(coordinates, tets, TET10_EDGES)


def with_edge_nodes(coordinates: np.ndarray, cells: np.ndarray, edges: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Quadratic cells from linear ones: a new node at the middle of every edge, shared by the cells
    around it, appended to each cell in the order of ``edges`` (n_edges, 2) local corner pairs
    (``TET10_EDGES``, ``HEX20_EDGES`` or ``WEDGE15_EDGES`` of :mod:`flexmb.elements.solid_shapes`).
    Returns the coordinates (n_nodes + n_new, 3), m, and the cells (n_el, n_corners + n_edges)."""
    pairs = np.sort(cells[:, edges], axis=2)                               # (n_el, n_edges, 2)
    unique, inverse = np.unique(pairs.reshape(-1, 2), axis=0, return_inverse=True)
    middles = 0.5 * (coordinates[unique[:, 0]] + coordinates[unique[:, 1]])
    quadratic = np.concatenate([cells, len(coordinates) + inverse.reshape(len(cells), -1)], axis=1)
    return np.vstack([coordinates, middles]), quadratic.astype(np.int64)
