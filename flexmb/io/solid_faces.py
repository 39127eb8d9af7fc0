"""Boundary faces of solid elements, for pictures and for modal bodies' drawn meshes.

The faces of a cell are taken through its corner nodes (VTK order, :mod:`flexmb.elements.solid_shapes`):
a tetrahedron (tet4, and tet10 without its mid-side nodes) has four triangles, a hexahedron (hex8,
hex20) six quadrilaterals, a wedge (wedge6, wedge15) two triangles and three quadrilaterals (a
triangle's fourth entry in :data:`FACES` is -1). Every face is listed counter-clockwise seen from
outside the cell, so that an element of positive volume (which :class:`~flexmb.elements.solid.Solid`
requires) has outward normals ``(x_1 - x_0) x (x_2 - x_0)``. The mid-edge nodes of the quadratic
cells are not drawn: their faces are flat through the corners.

A face lies on the boundary of a mesh when exactly one cell uses it: two cells sharing a face hold
the same corner nodes, in any order and whichever groups they belong to, so the boundary of
several groups glued at their common nodes leaves out the faces between the groups.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: corner faces of each solid kind, outward (counter-clockwise seen from outside), local node indices;
#: (n_faces, 3) for tetrahedra, (n_faces, 4) for the others, -1 in column 3 of a wedge's triangles
FACES = {
    "tet4": np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]),
    "hex8": np.array([[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]]),
    "wedge6": np.array([[0, 2, 1, -1], [3, 4, 5, -1], [0, 1, 4, 3], [1, 2, 5, 4], [2, 0, 3, 5]]),
}
FACES["tet10"] = FACES["tet4"]                  # flat faces through the corners
FACES["hex20"] = FACES["hex8"]
FACES["wedge15"] = FACES["wedge6"]


def boundary_faces(blocks: Sequence[tuple[str, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The faces used by one cell only, over all ``blocks`` together.

    Parameters
    ----------
    blocks : (kind, cells) pairs: kind one of :data:`FACES`' keys, cells (n_el, n_nodes) node
        indices in meshio's (VTK) order.

    Returns
    -------
    faces : (n_f, 4) node indices of the boundary faces, outward; a triangle has -1 in column 3.
    block : (n_f,) index into ``blocks`` of the cell each face belongs to.
    element : (n_f,) index of that cell in its block.
    Faces come in block order, then element order, then the kind's face order.
    """
    faces, block, element = [], [], []
    for b, (kind, cells) in enumerate(blocks):
        local = np.pad(FACES[kind], ((0, 0), (0, 4 - FACES[kind].shape[1])), constant_values=-1)  # (n_fc, 4)
        cells = np.asarray(cells, dtype=np.int64)
        f = np.where(local >= 0, cells[:, local], -1).reshape(-1, 4)       # (n_el * n_fc, 4)
        faces.append(f)
        block.append(np.full(len(f), b, dtype=np.int64))
        element.append(np.repeat(np.arange(len(cells), dtype=np.int64), len(local)))
    if not faces:
        return np.zeros((0, 4), np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    faces, block, element = np.concatenate(faces), np.concatenate(block), np.concatenate(element)
    # a face's key: its sorted nodes (the -1 of a triangle sorts first, so a triangle never meets a
    # quad); equal keys are neighbours once sorted (lexsort: ten times faster than np.unique(axis=0))
    key = np.sort(faces, axis=1)                                          # (n, 4)
    order = np.lexsort(key.T[::-1])                                       # by column 0, then 1, ...
    same = np.all(key[order[1:]] == key[order[:-1]], axis=1)              # (n - 1,) equal to the next
    shared = np.zeros(len(key), dtype=bool)
    shared[order[1:][same]] = True
    shared[order[:-1][same]] = True
    single = ~shared
    return faces[single], block[single], element[single]


def face_triangles(faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Faces (n_f, 4) of :func:`boundary_faces` as triangles: a triangle as it is, a quadrilateral
    (a, b, c, d) as (a, b, c) and (a, c, d), same orientation.

    Returns the triangles (n_t, 3) and the face of each (n_t,), in face order.
    """
    quad = faces[:, 3] >= 0                                               # (n_f,)
    first = faces[:, :3]
    second = faces[quad][:, [0, 2, 3]]
    face = np.concatenate([np.arange(len(faces)), np.flatnonzero(quad)])
    order = np.argsort(face, kind="stable")                               # each quad's two halves together
    return np.concatenate([first, second])[order], face[order]
