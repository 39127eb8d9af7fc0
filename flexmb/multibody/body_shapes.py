"""Drawn shapes of rigid bodies, for pictures and exports only (no mass, no contact).

A body's shape is a surface fixed in the body: points P (n_v, 3) in m, measured from the centre
of mass along the body axes (the global axes in the reference configuration), and polygon faces.
At a state with the body's node at x_c and turned by R (2D: about z by ``rz``), the shape's points
are x = x_c + R P; 2D models draw and export the shape with its z coordinates as given.

A shape is given by the user (:meth:`~flexmb.model.Model.add_rigid_body` ``shape=``: a surface
file meshio reads, a pyvista surface, a meshio mesh, or points and faces), or by default
(:func:`link_shape`) a link: one bar from the centre of mass to each point where a joint holds
the body (so a crank with its centre between pivot and pin is one bar from pivot to pin; a body
held at one point is a bar through that point symmetric about the centre, a uniform bar pivoted
at its end), with a square section of width w from the mass m and the moment of inertia J about
an axis normal to the bar: a bar of length L and width w has J = m (L^2 + w^2) / 12, so
w = sqrt(12 J / m - L^2), kept between :data:`MIN_WIDTH` L (a slender bar, J = m L^2 / 12) and
L. A body held at no point away from its centre is a cube of side a with the same J = m a^2 / 6.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from flexmb.checks import ModelError

#: narrowest drawn link, as a fraction of its length
MIN_WIDTH = 0.08
#: corners (8, 3) of the unit cube [0, 1]^3 and its faces (6, 4), outward (counter-clockwise seen from outside)
_CUBE = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
_CUBE_FACES = np.array([[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]])


@dataclass
class BodyShape:
    """A surface in body axes: ``points`` (n_v, 3) m from the centre of mass, ``faces`` one
    (n_f, k) array of point indices per polygon size k (triangles, quads, ...), each face's
    points counter-clockwise seen from outside."""

    points: np.ndarray
    faces: list[np.ndarray]

    @property
    def n_faces(self) -> int:
        return sum(len(block) for block in self.faces)

    def triangles(self) -> np.ndarray:
        """The faces cut into triangles (n_t, 3), each polygon as a fan from its first point."""
        fans = [block[:, [0, j, j + 1]] for block in self.faces for j in range(1, block.shape[1] - 1)]
        return np.concatenate(fans).astype(np.int64) if fans else np.zeros((0, 3), np.int64)

    def triangle_faces(self) -> np.ndarray:
        """(n_t,) index of the face (in block order) each triangle of :meth:`triangles` comes from."""
        starts = np.concatenate([[0], np.cumsum([len(block) for block in self.faces])])
        return np.concatenate([start + np.arange(len(block)) for block, start in zip(self.faces, starts)
                               for _ in range(1, block.shape[1] - 1)] or [np.zeros(0, np.int64)]).astype(np.int64)

    def flat_faces(self) -> np.ndarray:
        """The faces as one VTK polygon array ``[k, i_0, ..., i_(k-1), k, ...]`` (int64)."""
        rows = [np.hstack([np.full((len(b), 1), b.shape[1]), b]).ravel() for b in self.faces]
        return np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, np.int64)

    @classmethod
    def from_flat(cls, points: np.ndarray, flat: np.ndarray, what: str) -> "BodyShape":
        """A shape from points (n_v, 2 or 3) and a VTK polygon array (see :meth:`flat_faces`)."""
        flat = np.asarray(flat, dtype=np.int64).ravel()
        faces, i = [], 0
        while i < len(flat):                       # a ragged array: its sizes are read one by one
            k = int(flat[i])
            if k < 3 or i + 1 + k > len(flat):
                raise ModelError(f"{what}: the face array is broken at entry {i} (a face of {k} points; "
                                 "expected [k, i_0, ..., i_(k-1), ...] with k >= 3)")
            faces.append(flat[i + 1:i + 1 + k])
            i += 1 + k
        return _checked(points, faces, what)


@dataclass
class BodyLayout:
    """What pictures and exports know of a rigid body: its ``name``, ``node``, ``mass`` (kg),
    ``inertia`` (3, 3) kg m^2 about the centre of mass in body axes (2D: J_z at [2, 2]) and
    drawn ``shape``; ``given`` tells a user's shape from the default link."""

    name: str
    node: int
    mass: float
    inertia: np.ndarray
    shape: BodyShape
    given: bool = False


def _checked(points: Any, faces: Any, what: str) -> BodyShape:
    """A BodyShape from points (n_v, 2 or 3) and faces (a sequence of index sequences, or an
    (n_f, k) array), each face checked (>= 3 points, indices in range), else ModelError."""
    p = np.asarray(points, dtype=float)
    if p.ndim != 2 or p.shape[1] not in (2, 3) or not len(p):
        raise ModelError(f"{what}: shape points must be an (n, 3) (or, in 2D, (n, 2)) array in m, got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ModelError(f"{what}: shape points must be finite numbers (m)")
    p = np.c_[p, np.zeros((len(p), 3 - p.shape[1]))]
    rows = [np.asarray(f) for f in (faces if not isinstance(faces, np.ndarray) or faces.ndim != 2 else list(faces))]
    if not rows:
        raise ModelError(f"{what}: the shape has no faces")
    blocks: dict[int, list[np.ndarray]] = {}
    for i, f in enumerate(rows):
        if f.ndim != 1 or len(f) < 3 or f.dtype.kind not in "iu":
            raise ModelError(f"{what}: face {i} must be 3 or more point indices (integers), got {f.tolist()!r:.80}")
        if f.min() < 0 or f.max() >= len(p):
            raise ModelError(f"{what}: face {i} refers to point {int(f.max() if f.max() >= len(p) else f.min())}; "
                             f"the shape has points 0..{len(p) - 1}")
        blocks.setdefault(len(f), []).append(f)
    return BodyShape(p, [np.array(b, dtype=np.int64) for _, b in sorted(blocks.items())])


def user_shape(shape: Any, what: str) -> BodyShape:
    """A user's body shape in body axes (m, from the centre of mass): a file name of a surface
    mesh meshio reads (.stl, .obj, .ply, .vtk, .vtu, ...; its triangle, quad and polygon cells),
    a pyvista PolyData (``points``, ``faces``), a meshio Mesh (``points``, ``cells``), or a pair
    (points (n, 3) or (n, 2), faces: a sequence of point-index sequences or an (n_f, k) array)."""
    if isinstance(shape, (str, Path)):
        path = Path(shape)
        if not path.is_file():
            raise ModelError(f"{what}: shape file {path} does not exist")
        import meshio

        try:
            shape = meshio.read(path)
        except Exception as exc:                   # meshio raises many kinds for unreadable files
            raise ModelError(f"{what}: shape file {path} cannot be read by meshio: {exc}") from None
    if hasattr(shape, "cells") and hasattr(shape, "points"):       # a meshio Mesh
        faces = [f for block in shape.cells if block.type in ("triangle", "quad", "polygon")
                 for f in np.asarray(block.data)]
        if not faces:
            raise ModelError(f"{what}: the shape mesh has no surface cells (triangle, quad, polygon); it has "
                             + (", ".join(b.type for b in shape.cells) or "none"))
        return _checked(shape.points, faces, what)
    if hasattr(shape, "faces") and hasattr(shape, "points"):       # a pyvista PolyData
        return BodyShape.from_flat(np.asarray(shape.points), np.asarray(shape.faces), what)
    if isinstance(shape, (tuple, list)) and len(shape) == 2:
        return _checked(shape[0], shape[1], what)
    raise ModelError(f"{what}: shape must be a surface file name, a pyvista PolyData, a meshio Mesh or "
                     f"(points, faces), got {type(shape).__name__}")


def inertia_tensor(inertia: float | np.ndarray, dim: int) -> np.ndarray:
    """(3, 3) inertia tensor, kg m^2: 2D J_z at [2, 2]; 3D the tensor itself."""
    if dim == 2:
        J = np.zeros((3, 3))
        J[2, 2] = float(inertia)
        return J
    return np.asarray(inertia, dtype=float).reshape(3, 3).copy()


def _box(start: np.ndarray, end: np.ndarray, width: float, normal: np.ndarray) -> np.ndarray:
    """Corners (8, 3) of a bar of square section ``width`` from ``start`` to ``end`` (3,), its
    sides along ``normal`` (3,) (unit, normal to the bar) and the third axis; corner order of _CUBE."""
    e = end - start
    side = np.cross(e / np.linalg.norm(e), normal)
    return start + _CUBE[:, :1] * e + (_CUBE[:, 1:2] - 0.5) * width * normal + (_CUBE[:, 2:] - 0.5) * width * side


def link_shape(dim: int, points: np.ndarray, mass: float, inertia: np.ndarray, size: float) -> BodyShape:
    """Default drawn shape (see the module docstring) of a body held at ``points`` (n, 3), m from
    its centre of mass in body axes, with ``mass`` (kg) and ``inertia`` (3, 3) kg m^2; ``size`` (m)
    is the cube side when neither the points nor the inertia give one."""
    arms = np.unique(np.round(np.asarray(points, dtype=float).reshape(-1, 3), 12), axis=0)
    lengths = np.linalg.norm(arms, axis=1)
    arms = arms[lengths > 1e-9 * max(size, lengths.max(initial=0.0))]
    if not len(arms):
        J = inertia[2, 2] if dim == 2 else np.trace(inertia) / 3.0
        side = np.sqrt(6.0 * J / mass) if J > 0 else size
        return BodyShape(side * (_CUBE - 0.5), [_CUBE_FACES.copy()])
    if len(arms) == 1:                                          # held at one point: a bar symmetric about the centre
        arms = np.vstack([arms, -arms])
    ends = np.vstack([np.zeros(3), arms])                       # the centre and the bar ends
    span = float(np.linalg.norm(ends[:, None] - ends[None], axis=-1).max())
    longest = arms[np.argmax(np.linalg.norm(arms, axis=1))]
    e = longest / np.linalg.norm(longest)
    J = inertia[2, 2] if dim == 2 else 0.5 * (np.trace(inertia) - e @ inertia @ e)   # mean J about the normals of e
    width = float(np.clip(np.sqrt(max(12.0 * J / mass - span**2, 0.0)), MIN_WIDTH * span, span))
    # one bar from the centre to each point; the symmetric bar of a body held at one point is one piece
    opposite = len(arms) == 2 and np.allclose(arms[0], -arms[1])
    bars = [(arms[1], arms[0])] if opposite else [(np.zeros(3), a) for a in arms]
    corners = []
    for start, end in bars:
        d = (end - start) / np.linalg.norm(end - start)
        # 2D: the width in the plane; 3D: the normal to the bar closest to the global z axis
        hint = np.cross([0.0, 0.0, 1.0], d) if dim == 2 or abs(d[2]) < 0.9 else np.cross([1.0, 0.0, 0.0], d)
        normal = hint / np.linalg.norm(hint)
        corners.append(_box(start - 0.5 * width * d, end + 0.5 * width * d, width, normal))
    faces = (_CUBE_FACES[None] + 8 * np.arange(len(bars))[:, None, None]).reshape(-1, 4)
    return BodyShape(np.concatenate(corners), [faces])


def body_layouts(model: Any) -> list[BodyLayout]:
    """The rigid bodies of ``model`` (:class:`~flexmb.model.Model`) as pictures and exports see
    them: user shapes where given (``model.body_shapes``), else the default link through the
    points of the joints that hold the body."""
    out = []
    size = 0.05 * model.characteristic_length
    held: dict[int, list[np.ndarray]] = {}                     # node -> the joint points that hold it
    for j in model.joints:
        for node in {j.a, j.b} - {-1}:
            held.setdefault(node, []).append(j.at)
    for body in model.bodies:
        centre = np.r_[model.coordinates[body.node], np.zeros(3 - model.dim)]
        J = inertia_tensor(body.inertia, model.dim)
        given = getattr(model, "body_shapes", {}).get(body.node)   # models pickled before shapes have none
        if given is None:
            arms = np.array(held.get(body.node, [])).reshape(-1, 3) - centre
            shape = link_shape(model.dim, arms, body.mass, J, size)
        else:
            shape = given
        out.append(BodyLayout(body.name, body.node, body.mass, J, shape, given is not None))
    return out


def body_points(layout: Any, u: np.ndarray) -> list[np.ndarray]:
    """Current points (n_v, 3) of every rigid body's shape at the DOF vector u (n_dof,) of a
    :class:`~flexmb.results.ModelLayout`, one array per body of ``layout.bodies``: x = x_c + R P
    with the body node's position x_c and rotation matrix R, m (2D: z as in the shape)."""
    if not layout.bodies:
        return []
    x, R = layout.positions(u), layout.rotation_matrices(u)                # (n_nodes, dim), (n_nodes, 3, 3)
    centre = np.c_[x, np.zeros((len(x), 3 - x.shape[1]))]
    return [centre[b.node] + b.shape.points @ R[b.node].T for b in layout.bodies]
