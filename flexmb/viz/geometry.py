"""Drawn geometry of a deformed structure, in plain numpy (no pyvista here).

Beams are swept along a smooth centreline: between the current node positions x_p, x_q a cubic
Hermite curve with end tangents ``l0 R_p e_x`` and ``l0 R_q e_x`` (R the nodal rotation matrix
from the reference to the current orientation, e_x the reference element axis, l0 the reference
length), so the drawn beam leaves each node in the direction of the node's section. The section
frames along the element turn from ``R_p E`` to ``R_q E`` (E the reference section frame) through
the relative rotation vector, ``exp(s log(R_q R_p^T)) R_p E``, and are then re-orthogonalised
against the Hermite tangent. Trusses are straight tubes, point masses spheres (scaled by
``point_mass_scale``, hidden at 0), rigid bodies their shapes
(:class:`~flexmb.multibody.body_shapes.BodyShape`, the default a link through their joint points)
moved with their node, x = x_c + R P. Sections are a
box (width along the section y axis, height along z) or a 12-sided tube. Shells are their
mid-surface: one flat triangle per element through the current node positions (elements of a
group share their nodes' points, so shading is smooth across them). Solids are their boundary
surface (:func:`~flexmb.io.solid_faces.boundary_faces`: the faces used by one element only, over
all solid groups together, so faces between two groups are left out): flat triangles through the
current corner nodes (a hexahedron's face as two; a tet10's mid-side nodes are not drawn), each
taking the colour of its element. A modal body is its FE mesh
at the recovered positions (:meth:`~flexmb.results.ModelLayout.modal_mesh_positions`): straight
tubes or boxes along its lines (in 3D a box keeps its reference section frame turned with the
body frame), flat triangles.

2D models are drawn in the plane z = 0: nodal rotations are about z, the section y axis is the
in-plane normal of the element and z the out-of-plane axis.

:func:`structure_surface` returns one :class:`Surface` for the whole structure; all elements of
a group are built at once with array operations.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmb.checks import ModelError
from flexmb.elements.solid_shapes import NODES
from flexmb.io.solid_faces import FACES, boundary_faces, face_triangles
from flexmb.multibody.body_shapes import body_points
from flexmb.results import GroupLayout, ModelLayout
from flexmb.rotations import exp_map, log_map

#: sides of a drawn tube section
TUBE_SIDES = 12
#: sphere radius of the heaviest point mass, as a fraction of the characteristic length
SPHERE_RADIUS = 0.03
#: latitude and longitude subdivisions of a drawn sphere
_SPHERE_LAT, _SPHERE_LON = 8, 12


@dataclass
class Surface:
    """Polygons of the drawn structure, with what is needed to colour them.

    ``faces`` is the flat VTK polygon array ``[k, i_0, ..., i_(k-1), k, ...]``. Every cell comes
    from element ``cell_element`` of group ``cell_group`` (group -1: point mass number
    ``cell_element``; group -2: rigid body number ``cell_element`` of the layout's bodies). Every
    point lies between the nodes ``point_nodes`` (n_points, 2), at the fraction ``point_weight``
    from the first to the second (0 at a point mass's, a body's, a shell's or a solid's node).
    """

    points: np.ndarray            # (n_points, 3), m
    faces: np.ndarray             # (sum of (k + 1) over cells,) int
    cell_group: np.ndarray        # (n_cells,) int
    cell_element: np.ndarray      # (n_cells,) int
    point_nodes: np.ndarray       # (n_points, 2) int
    point_weight: np.ndarray      # (n_points,)

    def cell_values(self, per_group: list[np.ndarray]) -> np.ndarray:
        """(n_cells,) values of the cells from per-element values, one (n_el,) array per group;
        point masses and rigid bodies get NaN."""
        table = np.concatenate([np.asarray(v, dtype=float) for v in per_group] + [[np.nan]])
        offsets = np.concatenate([[0], np.cumsum([len(v) for v in per_group])])
        # point-mass and body cells (groups -1, -2) index the trailing NaN
        index = np.where(self.cell_group >= 0, offsets[self.cell_group] + self.cell_element, len(table) - 1)
        return table[index]

    def point_values(self, per_node: np.ndarray) -> np.ndarray:
        """(n_points,) values of the points, linear between the nodal values (n_nodes + n_modal,):
        the model's nodes, then the modal bodies' FE nodes
        (:attr:`~flexmb.results.ModelLayout.n_modal_points`)."""
        v = np.asarray(per_node, dtype=float)[self.point_nodes]
        return (1.0 - self.point_weight) * v[:, 0] + self.point_weight * v[:, 1]


# ---------------------------------------------------------------- centrelines and frames
def lift(x: np.ndarray) -> np.ndarray:
    """Positions (..., dim) as 3D points (..., 3): 2D models lie in the plane z = 0."""
    x = np.asarray(x, dtype=float)
    if x.shape[-1] == 3:
        return x
    return np.concatenate([x, np.zeros(x.shape[:-1] + (3 - x.shape[-1],))], axis=-1)


def hermite(ends: np.ndarray, tangents: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cubic Hermite curves through ``ends`` (n_el, 2, 3) with end derivatives ``tangents``
    (n_el, 2, 3) (m per unit parameter), at the parameters s (n_s,) in [0, 1].

    Returns positions and derivatives d/ds, (n_el, n_s, 3) each.
    """
    s2, s3 = s**2, s**3
    basis = np.stack([2 * s3 - 3 * s2 + 1, s3 - 2 * s2 + s, -2 * s3 + 3 * s2, s3 - s2], -1)   # (n_s, 4)
    slope = np.stack([6 * s2 - 6 * s, 3 * s2 - 4 * s + 1, -6 * s2 + 6 * s, 3 * s2 - 2 * s], -1)
    coeffs = np.stack([ends[:, 0], tangents[:, 0], ends[:, 1], tangents[:, 1]], 1)         # (n_el, 4, 3)
    return np.einsum("sk,ekd->esd", basis, coeffs), np.einsum("sk,ekd->esd", slope, coeffs)


def orthonormal_frames(tangent: np.ndarray, y_hint: np.ndarray) -> np.ndarray:
    """Frames (..., 3, 3) with columns t, y, z: t along ``tangent`` (..., 3), y the part of
    ``y_hint`` (..., 3) normal to t, z = t x y."""
    t = tangent / np.linalg.norm(tangent, axis=-1, keepdims=True)
    y = y_hint - np.sum(y_hint * t, axis=-1, keepdims=True) * t
    y /= np.linalg.norm(y, axis=-1, keepdims=True)
    return np.stack([t, y, np.cross(t, y)], -1)


def reference_frames(layout: ModelLayout, group: GroupLayout) -> np.ndarray:
    """Reference section frames E (n_el, 3, 3) of a beam group (columns e_x, e_y, e_z).

    Beam3D groups carry theirs; for Beam2D, e_x is the element axis in the plane and e_z the
    out-of-plane axis.
    """
    if group.frames is not None:
        return group.frames
    X = lift(layout.coordinates)[group.connectivity]                   # (n_el, 2, 3)
    ez = np.broadcast_to([0.0, 0.0, 1.0], (group.n_elements, 3))
    return orthonormal_frames(X[:, 1] - X[:, 0], np.cross(ez, X[:, 1] - X[:, 0]))


def chord_frames(ends: np.ndarray) -> np.ndarray:
    """Frames (n_el, 3, 3) of straight elements between ``ends`` (n_el, 2, 3): e_x along the
    chord, e_y normal to it and to z (to y for chords along z), so 2D trusses match 2D beams."""
    chord = ends[:, 1] - ends[:, 0]
    # a zero-length element (a spring or bushing to the ground, drawn at its node) takes the x axis
    chord = np.where(np.linalg.norm(chord, axis=1, keepdims=True) > 0.0, chord, [1.0, 0.0, 0.0])
    t = chord / np.linalg.norm(chord, axis=1, keepdims=True)
    along_z = np.abs(t[:, 2]) > 1.0 - 1e-9
    axis = np.where(along_z[:, None], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0])
    return orthonormal_frames(chord, np.cross(axis, t))


def beam_centrelines(layout: ModelLayout, group: GroupLayout, x: np.ndarray, R: np.ndarray,
                     s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centreline points (n_el, n_s, 3) and section frames (n_el, n_s, 3, 3) of a beam group at
    the parameters s (n_s,), from current node positions x (n_nodes, 3) and nodal rotation
    matrices R (n_nodes, 3, 3)."""
    conn = group.connectivity
    X = lift(layout.coordinates)[conn]
    l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)                     # (n_el,)
    E = reference_frames(layout, group)
    A, B = R[conn[:, 0]] @ E, R[conn[:, 1]] @ E                        # current end frames
    centres, d = hermite(x[conn], l0[:, None, None] * np.stack([A[:, :, 0], B[:, :, 0]], 1), s)
    phi = log_map(B @ np.swapaxes(A, 1, 2))                            # (n_el, 3), spatial
    turned = exp_map(s[None, :, None] * phi[:, None, :]) @ A[:, None]  # (n_el, n_s, 3, 3)
    return centres, orthonormal_frames(d, turned[..., 1])


def centrelines(layout: ModelLayout, u: np.ndarray, n_sub: int = 8) -> list[np.ndarray]:
    """Drawn centreline of every group at the DOF vector u (n_dof,): one (n_el, n_s, 3) array per
    group, m; beams with n_s = n_sub points per element, trusses straight (n_s = 2), shells the
    closed outline of each triangle (n_s = 4, the first node repeated), solids the closed outlines
    of their boundary faces (:func:`solid_boundary`; one row per face, n_s = 4 for tetrahedra,
    5 for hexahedra and wedges)."""
    x, R = lift(layout.positions(u)), layout.rotation_matrices(u)
    faces, face_group, _ = solid_boundary(layout)
    out = []
    for gi, g in enumerate(layout.groups):
        if g.is_solid:
            corners = faces[face_group == gi][:, :len(FACES[g.solid_kind][0])]        # (n_f, 3 or 4)
            corners = np.where(corners < 0, corners[:, :1], corners)   # a wedge's triangle: first corner twice
            out.append(x[np.column_stack([corners, corners[:, 0]])])
        elif _is_beam(g):
            out.append(beam_centrelines(layout, g, x, R, np.linspace(0.0, 1.0, n_sub))[0])
        else:
            out.append(x[g.connectivity[:, [0, 1, 2, 0]]] if g.is_surface else x[g.connectivity])
    return out


def solid_boundary(layout: ModelLayout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The boundary faces of all solid groups together (:func:`~flexmb.io.solid_faces.boundary_faces`):
    node indices (n_f, 4) (-1 in column 3 of a triangle), the group (n_f,) and the element in it
    (n_f,) of each face."""
    solid = [gi for gi, g in enumerate(layout.groups) if g.is_solid]
    for gi in solid:
        g = layout.groups[gi]
        if g.solid_kind not in FACES or g.connectivity.shape[1] != NODES[g.solid_kind]:
            raise ModelError(f"element group {g.name!r}: cannot draw solid cells of kind {g.solid_kind!r} with "
                             f"{g.connectivity.shape[1]} nodes each (known: "
                             + ", ".join(f"{k} with {n}" for k, n in NODES.items()) + ")")
    faces, block, element = boundary_faces([(layout.groups[gi].solid_kind, layout.groups[gi].connectivity)
                                            for gi in solid])
    return faces, np.asarray(solid, dtype=np.int64)[block], element


def _is_beam(group: GroupLayout) -> bool:
    return group.kind in ("Beam2D", "Beam3D")


# ------------------------------------------------------------------------- surfaces
def section_outline(section: dict) -> np.ndarray:
    """Corners (n_c, 2) of a drawn section in its (y, z) axes, counter-clockwise, m."""
    if section["shape"] == "box":
        b, h = 0.5 * section["width"], 0.5 * section["height"]
        return np.array([[-b, -h], [b, -h], [b, h], [-b, h]])
    if section["shape"] == "tube":
        angle = 2.0 * np.pi * np.arange(TUBE_SIDES) / TUBE_SIDES
        return section["radius"] * np.c_[np.cos(angle), np.sin(angle)]
    raise ValueError(f"unknown drawn section shape {section['shape']!r} (expected 'box' or 'tube')")


def sweep(centres: np.ndarray, frames: np.ndarray, outline: np.ndarray
          ) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """The section ``outline`` (n_c, 2) swept along centrelines (n_el, n_s, 3) with section
    frames (n_el, n_s, 3, 3), closed by an end cap at each end of every element.

    Returns the points (n_el * n_s * n_c, 3), the cells as blocks of equal size (the side quads
    (n_el * (n_s - 1) * n_c, 4), then the caps (2 n_el, n_c)), and the element of every cell in
    that order. Faces are oriented outwards.
    """
    n_el, n_s = centres.shape[:2]
    n_c = len(outline)
    points = (centres[:, :, None, :] + outline[:, 0, None] * frames[:, :, None, :, 1]
              + outline[:, 1, None] * frames[:, :, None, :, 2])              # (n_el, n_s, n_c, 3)
    idx = np.arange(n_el * n_s * n_c).reshape(n_el, n_s, n_c)
    nxt = np.roll(idx, -1, axis=2)                                          # next corner round the outline
    quads = np.stack([idx[:, :-1], nxt[:, :-1], nxt[:, 1:], idx[:, 1:]], -1).reshape(-1, 4)
    caps = np.concatenate([idx[:, 0, ::-1], idx[:, -1]])                  # first cap faces backwards
    elements = np.concatenate([np.repeat(np.arange(n_el), (n_s - 1) * n_c), np.tile(np.arange(n_el), 2)])
    return points.reshape(-1, 3), [quads, caps], elements


def sphere_template() -> tuple[np.ndarray, list[np.ndarray]]:
    """Unit sphere: points (n_v, 3) and outward cells in blocks (quads, triangles)."""
    theta = np.pi * np.arange(1, _SPHERE_LAT) / _SPHERE_LAT                 # ring colatitudes
    lon = 2.0 * np.pi * np.arange(_SPHERE_LON) / _SPHERE_LON
    rings = np.stack([np.sin(theta)[:, None] * np.cos(lon), np.sin(theta)[:, None] * np.sin(lon),
                      np.broadcast_to(np.cos(theta)[:, None], (len(theta), len(lon)))], -1)
    points = np.concatenate([[[0.0, 0.0, 1.0]], rings.reshape(-1, 3), [[0.0, 0.0, -1.0]]])
    a = 1 + np.arange(rings.shape[0] * _SPHERE_LON).reshape(rings.shape[:2])   # ring point indices
    b = np.roll(a, -1, axis=1)                                              # next longitude
    quads = np.stack([a[:-1], a[1:], b[1:], b[:-1]], -1).reshape(-1, 4)
    south = len(points) - 1
    tris = np.concatenate([np.stack([np.zeros_like(a[0]), a[0], b[0]], -1),
                           np.stack([np.full_like(a[-1], south), b[-1], a[-1]], -1)])
    return points, [quads, tris]


def drawn_point_masses(layout: ModelLayout) -> np.ndarray:
    """(n_pm,) bool: the rows of ``layout.point_masses`` drawn as spheres. The layout lists the
    rigid bodies last (:meth:`~flexmb.results.ModelLayout.from_assembly`); those with a shape in
    ``layout.bodies`` are drawn as that shape instead."""
    n_pm = len(layout.point_masses)
    return np.arange(n_pm) < n_pm - len(layout.bodies)


def point_mass_radii(layout: ModelLayout, scale: float = 1.0) -> np.ndarray:
    """(n_drawn,) sphere radii of the drawn point masses (:func:`drawn_point_masses`): ``scale``
    times 3 % of the characteristic length for the heaviest, by the cube root of the mass ratio for
    the others (equal density), m."""
    mass = layout.point_masses[drawn_point_masses(layout), 1]
    heaviest = mass.max(initial=0.0)
    ratio = mass / heaviest if heaviest > 0 else np.ones_like(mass)
    return scale * SPHERE_RADIUS * layout.characteristic_length * np.cbrt(ratio)



def structure_surface(layout: ModelLayout, u: np.ndarray, n_sub: int = 8, point_mass_scale: float = 1.0) -> Surface:
    """The drawn structure at the DOF vector u (n_dof,): beams as swept sections along their
    Hermite centrelines with ``n_sub`` (>= 2) sections per element, trusses as straight tubes,
    shells as their mid-surface triangles, solids as their boundary surface in triangles
    (:func:`solid_boundary`), point masses as spheres (radii times ``point_mass_scale``; 0 hides
    them), rigid bodies as their shapes."""
    if n_sub < 2:
        raise ValueError(f"n_sub must be at least 2 (sections per element), got {n_sub}")
    x, R = lift(layout.positions(u)), layout.rotation_matrices(u)
    parts = []                  # (points, cell blocks, cell group, cell element, point nodes, weights)
    for gi, g in enumerate(layout.groups):
        if g.is_solid:
            continue                            # all solid groups at once below: faces between them are inside
        if g.is_surface:
            parts.append(_mid_surface(g, x, gi))
            continue
        s = np.linspace(0.0, 1.0, n_sub if _is_beam(g) else 2)
        if _is_beam(g):
            centres, frames = beam_centrelines(layout, g, x, R, s)
        else:
            ends = x[g.connectivity]
            centres = ends[:, None, 0] + s[None, :, None] * (ends[:, None, 1] - ends[:, None, 0])
            frames = np.broadcast_to(chord_frames(ends)[:, None], (g.n_elements, len(s), 3, 3))
        outline = section_outline(g.section)
        points, blocks, elements = sweep(centres, frames, outline)
        # point (e, j, c) lies at the fraction s_j between the element's nodes
        point_el = np.repeat(np.arange(g.n_elements), len(s) * len(outline))
        weight = np.tile(np.repeat(s, len(outline)), g.n_elements)
        parts.append((points, blocks, np.full(len(elements), gi), elements, g.connectivity[point_el], weight))
    if any(g.is_solid for g in layout.groups):
        parts.append(_solid_surface(layout, x))
    modal = [gi for gi, g in enumerate(layout.groups) if g.modal_mesh is not None]
    start = layout.n_nodes
    for gi, x_b in zip(modal, layout.modal_mesh_positions(u)):
        body = layout.groups[gi]
        parts += _modal_mesh_parts(body, lift(x_b), R[body.modal_mesh.frame_node], gi, start)
        start += len(x_b)
    for bi, (body, points) in enumerate(zip(layout.bodies, body_points(layout, u))):
        n_cells = body.shape.n_faces
        parts.append((points, body.shape.faces, np.full(n_cells, -2), np.full(n_cells, bi),
                      np.full((len(points), 2), body.node), np.zeros(len(points))))
    drawn = drawn_point_masses(layout)
    if drawn.any() and point_mass_scale > 0:
        nodes = layout.point_masses[drawn, 0].astype(np.int64)
        unit, blocks = sphere_template()
        n_pm, n_v = len(nodes), len(unit)
        points = (x[nodes, None, :] + point_mass_radii(layout, point_mass_scale)[:, None, None] * unit).reshape(-1, 3)
        shift = (np.arange(n_pm) * n_v)[:, None, None]
        blocks = [(b[None] + shift).reshape(-1, b.shape[1]) for b in blocks]
        elements = np.concatenate([np.repeat(np.arange(n_pm), len(b) // n_pm) for b in blocks])
        parts.append((points, blocks, np.full(len(elements), -1), elements,
                      np.repeat(nodes, n_v)[:, None].repeat(2, axis=1), np.zeros(n_pm * n_v)))
    return _merge(parts)


def _modal_mesh_parts(group: GroupLayout, x_b: np.ndarray, R: np.ndarray, gi: int, start: int) -> list[tuple]:
    """Parts of a Surface for the FE mesh of the modal body ``group`` (number gi) at its recovered
    node positions x_b (n_b, 3) with the frame rotation R (3, 3): its lines as straight swept
    sections (the section of its first line group; in 3D the lines' reference section frames turned
    by R and squared to the current chord, chord frames for lines without one), its triangles flat.
    Their cells belong to the body's one element (element 0 of group gi, so they take its colour);
    their points lie between the mesh's nodes, numbered from ``start`` after the model's nodes as
    in :meth:`Surface.point_values`."""
    mesh = group.modal_mesh
    parts = []
    if len(mesh.lines):
        ends = x_b[mesh.lines]                                          # (n_l, 2, 3)
        frames = chord_frames(ends)                                     # (n_l, 3, 3)
        if mesh.frames is not None:
            framed = ~np.isnan(mesh.frames).any(axis=(1, 2))
            turned_y = mesh.frames[framed, :, 1] @ R.T                      # (n_framed, 3), R e_y
            frames[framed] = orthonormal_frames(ends[framed, 1] - ends[framed, 0], turned_y)
        frames = np.broadcast_to(frames[:, None], (len(ends), 2, 3, 3))
        outline = section_outline(mesh.section)
        points, blocks, elements = sweep(ends, frames, outline)
        point_el = np.repeat(np.arange(len(ends)), 2 * len(outline))
        weight = np.tile(np.repeat([0.0, 1.0], len(outline)), len(ends))
        parts.append((points, blocks, np.full(len(elements), gi), np.zeros(len(elements), np.int64),
                      start + mesh.lines[point_el], weight))
    if len(mesh.triangles):
        nodes = start + np.arange(len(x_b))
        parts.append((x_b, [mesh.triangles], np.full(len(mesh.triangles), gi), np.zeros(len(mesh.triangles), np.int64),
                      np.column_stack([nodes, nodes]), np.zeros(len(x_b))))
    return parts


def modal_mesh_outlines(layout: ModelLayout, u: np.ndarray) -> list[np.ndarray]:
    """The modal bodies' FE meshes at the DOF vector u (n_dof,) as polylines: per body its lines
    (n_l, 2, 3) and the closed outlines of its triangles (n_t, 4, 3), m (empty ones left out)."""
    out = []
    for mesh, x_b in zip(layout.modal_meshes, layout.modal_mesh_positions(u)):
        x_b = lift(x_b)
        out += [c for c in (x_b[mesh.lines], x_b[mesh.triangles[:, [0, 1, 2, 0]]]) if len(c)]
    return out


def _mid_surface(group: GroupLayout, x: np.ndarray, gi: int) -> tuple:
    """Part of a Surface for the shell group ``group`` (number gi) at node positions x
    (n_nodes, 3): a point at each of its nodes, a triangle per element."""
    nodes = np.unique(group.connectivity)                               # (n_p,) sorted
    triangles = np.searchsorted(nodes, group.connectivity)              # (n_el, 3) local points
    return (x[nodes], [triangles], np.full(group.n_elements, gi), np.arange(group.n_elements),
            np.column_stack([nodes, nodes]), np.zeros(len(nodes)))


def _solid_surface(layout: ModelLayout, x: np.ndarray) -> tuple:
    """Part of a Surface for all solid groups at node positions x (n_nodes, 3): a point at each
    node of their boundary faces, the faces as triangles, each cell from the face's element."""
    faces, face_group, face_element = solid_boundary(layout)
    triangles, face = face_triangles(faces)                             # (n_t, 3), (n_t,)
    nodes = np.unique(triangles)                                        # (n_p,) sorted
    return (x[nodes], [np.searchsorted(nodes, triangles)], face_group[face], face_element[face],
            np.column_stack([nodes, nodes]), np.zeros(len(nodes)))


def _merge(parts: list[tuple]) -> Surface:
    """One Surface from the parts' points and cell blocks (point indices local to each part)."""
    if not parts:
        return Surface(np.zeros((0, 3)), np.zeros(0, np.int64), np.zeros(0, np.int64),
                       np.zeros(0, np.int64), np.zeros((0, 2), np.int64), np.zeros(0))
    offsets = np.concatenate([[0], np.cumsum([len(p[0]) for p in parts])]).astype(np.int64)
    faces = [np.hstack([np.full((len(b), 1), b.shape[1]), b + off]).ravel()
             for p, off in zip(parts, offsets) for b in p[1]]
    return Surface(np.concatenate([p[0] for p in parts]), np.concatenate(faces).astype(np.int64),
                   np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts]),
                   np.concatenate([p[4] for p in parts]).astype(np.int64),
                   np.concatenate([p[5] for p in parts]))
