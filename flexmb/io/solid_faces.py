"""Boundary faces of solid elements, for pictures and for modal bodies' drawn meshes.

The faces of a cell are taken through its corner nodes (VTK order, :mod:`flexmb.elements.solid_shapes`):
a tetrahedron (tet4, and tet10 without its mid-side nodes) has four triangles, a hexahedron six
quadrilaterals. Every face is listed counter-clockwise seen from outside the cell, so that an element
of positive volume (which :class:`~flexmb.elements.solid.Solid` requires) has outward normals
``(x_1 - x_0) x (x_2 - x_0)``.

A face lies on the boundary of a mesh when exactly one cell uses it: two cells sharing a face hold
the same corner nodes, in any order and whichever groups they belong to, so the boundary of
several groups glued at their common nodes leaves out the faces between the groups.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: corner faces of each solid kind, outward (counter-clockwise seen from outside), local node indices
FACES = {
    "tet4": np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]),
    "hex8": np.array([[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]]),
}
FACES["tet10"] = FACES["tet4"]                  # flat faces through the corners


def boundary_faces(blocks: Sequence[tuple[str, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The faces used by one cell only, over all ``blocks`` together.

    Parameters
    ----------
    blocks : (kind, cells) pairs: kind ``"tet4"``, ``"tet10"`` or ``"hex8"``, cells (n_el, n_nodes)
        node indices in VTK order.

    Returns
    -------
    faces : (n_f, 4) node indices of the boundary faces, outward; a triangle has -1 in column 3.
    block : (n_f,) index into ``blocks`` of the cell each face belongs to.
    element : (n_f,) index of that cell in its block.
    Faces come in block order, then element order, then the kind's face order.
    """
    faces, block, element = [], [], []
    for b, (kind, cells) in enumerate(blocks):
        local = FACES[kind]                                               # (n_fc, 3 or 4)
        cells = np.asarray(cells, dtype=np.int64)
        f = cells[:, local].reshape(-1, local.shape[1])                   # (n_el * n_fc, 3 or 4)
        faces.append(np.pad(f, ((0, 0), (0, 4 - local.shape[1])), constant_values=-1))
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
