"""Structured triangle meshes for shells: plates, annuli, cylinder parts, spherical caps and zones, node sets.

Every generator returns ``(coordinates, triangles)``: ``coordinates`` (n_nodes, 3) float in m and
``triangles`` (n_el, 3) int64 node indices, ready for :meth:`flexmb.model.Model.add_nodes` and
:meth:`flexmb.model.Model.add_shell`. The triangles are oriented consistently: the normal
``(X2 - X1) x (X3 - X1)`` (the shell's local E3, the direction of positive pressure) points

* along +z for :func:`rectangle`,
* along +z for :func:`annulus`,
* outwards, away from the axis, for :func:`cylinder`,
* outwards, away from the centre, for :func:`spherical_cap` and :func:`spherical_zone`.

Meshes from elsewhere (Gmsh, Abaqus, hand-made) may mix the two senses, and then pressures on
neighbouring triangles push opposite ways (:meth:`~flexmb.model.Model.add_pressure` refuses such
a mesh): :func:`orientation` finds the pairs of neighbours that run their shared edge the same
way, :func:`orient` renumbers the triangles consistently, patch by patch.

Nodes are numbered along the first parameter fastest (x of a plate, the angle of a cylinder,
annulus or zone, the sector of a cap ring), so the nodes of a straight edge or of a ring come out
of :func:`nodes_at` / :func:`node_set` in order along the edge, as
:meth:`~flexmb.model.Model.add_edge_load` wants them. The "cross" pattern adds one node at
the centre of every cell after the grid nodes. All three node selections take ``elements``:
only nodes of those elements are chosen, which tells apart coincident nodes of different
elements (the two lips of a slit); :func:`nodes_near` also selects along any line or plane.

Diagonal patterns of a structured grid of cells (i along the first parameter, j along the second):

=============  ==============================================================================
"right"        every cell cut by the diagonal from its corner (i, j) to (i+1, j+1)
"left"         every cell cut by the diagonal from (i+1, j) to (i, j+1)
"union-jack"   "right" and "left" alternating like a chess board ((i + j) even: "right"), so
               the diagonals of each 2x2 block of cells meet at its centre node
"cross"        both diagonals: four triangles per cell around a node at the cell centre
=============  ==============================================================================
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

#: the diagonal patterns :func:`rectangle` and :func:`cylinder` accept
PATTERNS = ("right", "left", "union-jack", "cross")


def rectangle(a: float, b: float, nx: int, ny: int, pattern: str = "right") -> tuple[np.ndarray, np.ndarray]:
    """A flat plate [0, a] x [0, b] in the x-y plane (z = 0), nx x ny cells cut into triangles.

    Parameters
    ----------
    a, b : side lengths along x and y, m (> 0).
    nx, ny : number of cells along x and y (>= 1).
    pattern : one of :data:`PATTERNS` (see the module docstring).

    Returns
    -------
    coordinates : (n_nodes, 3) with n_nodes = (nx + 1)(ny + 1), plus nx ny cell centres for
        "cross"; grid node (i, j) at (i a/nx, j b/ny, 0) is node ``i + j (nx + 1)``.
    triangles : (n_el, 3) int64, 2 nx ny triangles (4 nx ny for "cross"), normals along +z.
    """
    a, b = _positive("a", a), _positive("b", b)
    nx, ny = _count("nx", nx), _count("ny", ny)
    u, v = np.meshgrid(np.linspace(0.0, a, nx + 1), np.linspace(0.0, b, ny + 1))  # (ny + 1, nx + 1)
    grid = np.column_stack([u.ravel(), v.ravel()])                                   # (n_grid, 2)
    triangles, centre_of = _grid_triangles(nx, ny, pattern, closed=False)
    uv = np.vstack([grid, _cell_centres(grid, nx, ny)]) if centre_of else grid
    coordinates = np.column_stack([uv, np.zeros(len(uv))])
    return coordinates, triangles


def cylinder(radius: float, length: float, angle: float, n_circ: int, n_axial: int,
             pattern: str = "right", axis: str = "x", angle_start: float = 0.0,
             axial_start: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """A cylindrical panel (or a closed cylinder) of its mid-surface, axis through the origin.

    The surface is parametrised by the angle theta in [angle_start, angle_start + angle] and the
    axial coordinate s in [axial_start, axial_start + length], so any part of a cylinder bounded
    by two generators and two circles is one call. With (e_axis, e_a, e_b) the cyclic order of
    the axes starting at ``axis`` ((x, y, z), (y, z, x) or (z, x, y)), point (theta, s) is
    ``s e_axis + radius (cos theta e_a + sin theta e_b)``; e.g. for ``axis="x"`` it is
    (s, R cos theta, R sin theta).

    Parameters
    ----------
    radius, length : m (> 0).
    angle : opening angle of the panel in rad, 0 < angle <= 2 pi; ``2 pi`` (to 1e-12) makes a
        closed cylinder whose seam nodes are not duplicated (the cells of the last column
        connect to the nodes at theta = angle_start).
    n_circ, n_axial : number of cells around (>= 1, >= 3 when closed) and along the axis (>= 1).
    pattern : one of :data:`PATTERNS`; the "first parameter" is theta.
    axis : "x", "y" or "z".
    angle_start : theta of the first generator, rad; default 0.
    axial_start : s of the first circle, m; default 0.

    Returns
    -------
    coordinates : (n_nodes, 3); grid node (i, j) at theta = angle_start + i angle/n_circ,
        s = axial_start + j length/n_axial is node ``i + j m`` with m = n_circ + 1 nodes around
        (n_circ when closed); "cross" cell centres (on the cylinder) follow.
    triangles : (n_el, 3) int64, normals pointing outwards (away from the axis).
    """
    radius, length = _positive("radius", radius), _positive("length", length)
    theta_0 = _finite("cylinder: angle_start (rad)", angle_start)
    s_0 = _finite("cylinder: axial_start (m)", axial_start)
    e_axis, e_a, e_b = _cyclic_axes(axis)
    n_axial = _count("n_axial", n_axial)
    theta, s, triangles = _periodic_grid("cylinder", theta_0, angle, n_circ, "n_circ",
                                         np.linspace(s_0, s_0 + length, n_axial + 1), pattern)
    coordinates = s[:, None] * e_axis + radius * (np.cos(theta)[:, None] * e_a + np.sin(theta)[:, None] * e_b)
    return coordinates, triangles


def annulus(inner_radius: float, outer_radius: float, n_circ: int, n_radial: int, angle: float = 2.0 * np.pi,
            pattern: str = "right", angle_start: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """A flat annulus (or an annular sector) in the x-y plane (z = 0), centred at the origin.

    Point (theta, r) is (r cos theta, r sin theta, 0) for theta in [angle_start,
    angle_start + angle] and r in [inner_radius, outer_radius]; every node lies exactly on its
    circle, so the area of the mesh is that of the inscribed polygons and converges to
    ``angle (R_o^2 - R_i^2) / 2`` as n_circ^-2.

    Parameters
    ----------
    inner_radius, outer_radius : m, 0 < inner_radius < outer_radius (a full disc has a centre
        node: use :func:`spherical_cap`'s fan or a mesh from Gmsh).
    n_circ, n_radial : number of cells around (>= 1, >= 3 when closed) and across (>= 1).
    angle : opening angle of the sector in rad, 0 < angle <= 2 pi (default ``2 pi``: a closed
        annulus, its seam nodes not duplicated).
    pattern : one of :data:`PATTERNS`; the "first parameter" is theta.
    angle_start : theta of the first radial edge, rad; default 0.

    Returns
    -------
    coordinates : (n_nodes, 3); grid node (i, j) at theta = angle_start + i angle/n_circ,
        r = inner_radius + j (outer_radius - inner_radius)/n_radial is node ``i + j m`` with
        m = n_circ + 1 (n_circ when closed): the inner circle comes first, the outer last;
        "cross" cell centres follow.
    triangles : (n_el, 3) int64, normals along +z.
    """
    r_i, r_o = _positive("annulus: inner_radius", inner_radius), _positive("annulus: outer_radius", outer_radius)
    if not r_i < r_o:
        raise ValueError(f"annulus: inner_radius {r_i!r} m must be smaller than outer_radius {r_o!r} m")
    theta_0 = _finite("annulus: angle_start (rad)", angle_start)
    n_radial = _count("n_radial", n_radial)
    theta, r, triangles = _periodic_grid("annulus", theta_0, angle, n_circ, "n_circ",
                                         np.linspace(r_i, r_o, n_radial + 1), pattern)
    coordinates = np.column_stack([r * np.cos(theta), r * np.sin(theta), np.zeros(len(r))])
    # e_theta x e_r = -e_z: the grid's counter-clockwise triangles face down, hence reversed
    return coordinates, triangles[:, ::-1].copy()


def spherical_zone(radius: float, polar_start: float, polar_end: float, n_circ: int, n_polar: int,
                   angle: float = 2.0 * np.pi, pattern: str = "right",
                   angle_start: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """A zone of a sphere centred at the origin between two polar angles (a cap with a hole,
    a band, or a part of one), polar axis +z.

    Point (psi, phi) is radius (sin phi cos psi, sin phi sin psi, cos phi): phi the polar angle
    from +z in [polar_start, polar_end], psi the azimuth in [angle_start, angle_start + angle].
    Every node lies on the sphere; the mesh's area converges to
    ``angle radius^2 (cos polar_start - cos polar_end)`` as the cells shrink.

    Parameters
    ----------
    radius : m (> 0).
    polar_start, polar_end : polar angles of the two circles bounding the zone, rad,
        0 < polar_start < polar_end < pi (a cap without hole: :func:`spherical_cap`).
    n_circ, n_polar : number of cells around (>= 1, >= 3 when closed) and from circle to
        circle (>= 1).
    angle : azimuthal span in rad, 0 < angle <= 2 pi (default ``2 pi``: closed around the axis,
        its seam nodes not duplicated).
    pattern : one of :data:`PATTERNS`; the "first parameter" is psi.
    angle_start : azimuth of the first meridian edge, rad; default 0.

    Returns
    -------
    coordinates : (n_nodes, 3); grid node (i, j) at psi = angle_start + i angle/n_circ,
        phi = polar_start + j (polar_end - polar_start)/n_polar is node ``i + j m`` with
        m = n_circ + 1 (n_circ when closed); "cross" cell centres (on the sphere) follow.
    triangles : (n_el, 3) int64, normals pointing outwards (away from the centre).
    """
    radius = _positive("spherical_zone: radius", radius)
    phi_1 = _finite("spherical_zone: polar_start (rad)", polar_start)
    phi_2 = _finite("spherical_zone: polar_end (rad)", polar_end)
    if not 0.0 < phi_1 < phi_2 < np.pi:
        raise ValueError(f"spherical_zone: need 0 < polar_start < polar_end < pi rad, got polar_start = {phi_1!r}, "
                         f"polar_end = {phi_2!r}")
    psi_0 = _finite("spherical_zone: angle_start (rad)", angle_start)
    n_polar = _count("n_polar", n_polar)
    psi, phi, triangles = _periodic_grid("spherical_zone", psi_0, angle, n_circ, "n_circ",
                                         np.linspace(phi_1, phi_2, n_polar + 1), pattern)
    coordinates = radius * np.column_stack([np.sin(phi) * np.cos(psi), np.sin(phi) * np.sin(psi), np.cos(phi)])
    # e_psi x e_phi = -e_r: the grid's counter-clockwise triangles face inwards, hence reversed
    return coordinates, triangles[:, ::-1].copy()


def spherical_cap(radius: float, opening_angle: float, n_rings: int, n_sectors: int) -> tuple[np.ndarray, np.ndarray]:
    """A spherical cap centred at the origin around +z, apex at (0, 0, radius).

    Parameters
    ----------
    radius : m (> 0).
    opening_angle : polar angle phi_0 of the rim, measured from the apex at the centre of the
        sphere, rad, 0 < phi_0 < pi (pi / 2 is a hemisphere).
    n_rings : number of node rings besides the apex (>= 1); ring k (k = 1..n_rings) lies at
        polar angle phi = k phi_0 / n_rings, the last ring is the rim.
    n_sectors : nodes per ring (>= 3); node l of a ring at azimuth 2 pi l / n_sectors.

    Returns
    -------
    coordinates : (1 + n_rings n_sectors, 3); node 0 is the apex, node ``1 + (k - 1) n_sectors + l``
        is node l of ring k, so the rim is the last n_sectors nodes.
    triangles : (n_sectors (2 n_rings - 1), 3) int64: a fan of triangles around the apex, then
        each band between rings cut as the "right" pattern; normals point outwards.
    """
    radius = _positive("radius", radius)
    phi_0 = float(opening_angle)
    if not (0.0 < phi_0 < np.pi):
        raise ValueError(f"spherical_cap: opening_angle must be in (0, pi) rad, got {opening_angle!r}")
    n_rings = _count("n_rings", n_rings)
    n_sectors = _count("n_sectors", n_sectors)
    if n_sectors < 3:
        raise ValueError(f"spherical_cap: n_sectors must be >= 3, got {n_sectors}")
    phi = np.arange(1, n_rings + 1) * (phi_0 / n_rings)                        # (n_rings,)
    psi = np.arange(n_sectors) * (2.0 * np.pi / n_sectors)                     # (n_sectors,)
    ph, ps = np.meshgrid(phi, psi, indexing="ij")                              # (n_rings, n_sectors)
    ring_nodes = radius * np.column_stack([(np.sin(ph) * np.cos(ps)).ravel(),
                                           (np.sin(ph) * np.sin(ps)).ravel(), np.cos(ph).ravel()])
    coordinates = np.vstack([[0.0, 0.0, radius], ring_nodes])

    # apex fan: (apex, ring-1 node l, ring-1 node l+1) is counter-clockwise seen from outside
    l = np.arange(n_sectors)
    fan = np.column_stack([np.zeros(n_sectors, dtype=np.int64), 1 + l, 1 + (l + 1) % n_sectors])
    # bands between rings k and k+1: the grid of cells in (azimuth, ring) with the azimuth
    # periodic; e_psi x e_phi = -e_r, so the grid's counter-clockwise triangles face inwards
    # and are reversed
    band, _ = _grid_triangles(n_sectors, n_rings - 1, "right", closed=True)
    triangles = np.vstack([fan, 1 + band[:, ::-1]]) if n_rings > 1 else fan
    return coordinates, triangles.astype(np.int64)


def node_set(coordinates: np.ndarray, predicate: Callable[[np.ndarray], np.ndarray],
             name: str = "node set", elements: np.ndarray | None = None) -> np.ndarray:
    """Indices of the nodes whose coordinates satisfy ``predicate``, in increasing order.

    ``predicate`` takes the (n_nodes, 3) coordinates and returns a boolean (n_nodes,) array, e.g.
    ``lambda X: np.isclose(X[:, 0], 0.0)``. ``elements``: connectivity rows (n_el, k) of the
    elements whose nodes may be chosen (default all nodes); nodes at the same place that belong
    to different elements, such as the two lips of a slit, are told apart so. Raises ValueError
    (naming ``name``) if the predicate returns something else or nothing is selected.
    """
    X = np.asarray(coordinates, dtype=float)
    mask = np.asarray(predicate(X))
    if mask.shape != (len(X),) or mask.dtype != bool:
        raise ValueError(f"{name}: the predicate must return a boolean array of shape ({len(X)},), "
                         f"got {mask.dtype} {mask.shape}")
    used = _used_by(elements, len(X), name)
    nodes = np.flatnonzero(mask & used).astype(np.int64)
    if nodes.size == 0:
        among = "" if elements is None else f" among the {int(used.sum())} nodes of the given elements"
        raise ValueError(f"{name}: the predicate selects no node{among} (coordinates span "
                         f"{X.min(axis=0).tolist()} to {X.max(axis=0).tolist()})")
    return nodes


def nodes_at(coordinates: np.ndarray, x: float | None = None, y: float | None = None,
             z: float | None = None, tol: float | None = None, elements: np.ndarray | None = None) -> np.ndarray:
    """Nodes whose given coordinates equal the given values, e.g. ``nodes_at(X, x=0.0)`` (an edge).

    ``tol`` (m) defaults to 1e-9 times the size of the mesh. ``elements``: connectivity rows
    (n_el, k) of the elements whose nodes may be chosen (see :func:`node_set`). Returns
    increasing node indices (for the generators above: ordered along a straight edge);
    ValueError if no node matches.
    """
    X = np.asarray(coordinates, dtype=float)
    wanted = {axis: value for axis, value in zip("xyz", (x, y, z)) if value is not None}
    if not wanted:
        raise ValueError("nodes_at: give at least one of x, y, z")
    if tol is None:
        tol = _default_tol(X)
    mask = np.ones(len(X), dtype=bool)
    for axis, value in wanted.items():
        mask &= np.abs(X[:, "xyz".index(axis)] - float(value)) <= tol
    test = ", ".join(f"{axis} = {value:g}" for axis, value in wanted.items())
    return node_set(X, lambda _: mask, name=f"nodes at {test}", elements=elements)


def nodes_near(coordinates: np.ndarray, point: Sequence[float], direction: Sequence[float] | None = None,
               normal: Sequence[float] | None = None, elements: np.ndarray | None = None,
               tol: float | None = None) -> np.ndarray:
    """Nodes at a point, on a straight line or on a plane, optionally only those of given elements.

    Parameters
    ----------
    coordinates : (n_nodes, 3) node positions, m.
    point : (3,) m: the point itself (neither ``direction`` nor ``normal`` given), a point of
        the line, or a point of the plane.
    direction : (3,) the line's direction (any length): the nodes within ``tol`` of the line.
    normal : (3,) the plane's normal (any length): the nodes within ``tol`` of the plane.
    elements : connectivity rows (n_el, k) of the elements whose nodes may be chosen, default
        all; e.g. ``triangles[left]`` picks one lip of a slit whose two lips have coincident
        nodes in different elements.
    tol : distance tolerance, m; default 1e-9 times the size of the mesh.

    Returns
    -------
    (n,) int64 node indices: on a line ordered along ``direction`` (as
    :meth:`~flexmb.model.Model.add_edge_load` wants them), otherwise increasing. ValueError if
    none is found, or for a zero ``direction``/``normal`` or both given.
    """
    X = np.asarray(coordinates, dtype=float)
    if X.ndim != 2 or X.shape[1] != 3:
        raise ValueError(f"nodes_near: coordinates must have shape (n_nodes, 3), got {X.shape}")
    p = _vector3("nodes_near: point", point)
    if direction is not None and normal is not None:
        raise ValueError("nodes_near: give a line's direction or a plane's normal, not both")
    tol = _default_tol(X) if tol is None else _positive("nodes_near: tol", tol)
    offset = X - p                                                                  # (n_nodes, 3)
    if direction is not None:
        d = _unit("nodes_near: direction", direction)
        distance = np.linalg.norm(offset - np.outer(offset @ d, d), axis=1)
        where = f"on the line through {p.tolist()} along {d.tolist()}"
    elif normal is not None:
        n = _unit("nodes_near: normal", normal)
        distance = np.abs(offset @ n)
        where = f"on the plane through {p.tolist()} normal to {n.tolist()}"
    else:
        distance = np.linalg.norm(offset, axis=1)
        where = f"at {p.tolist()}"
    nodes = node_set(X, lambda _: distance <= tol, name=f"nodes {where} (tol {tol:.3g} m)", elements=elements)
    if direction is not None:
        nodes = nodes[np.argsort(offset[nodes] @ d, kind="stable")]
    return nodes


def _used_by(elements: np.ndarray | None, n_nodes: int, name: str) -> np.ndarray:
    """(n_nodes,) whether each node is used by the elements (connectivity rows), all True for None."""
    if elements is None:
        return np.ones(n_nodes, dtype=bool)
    E = np.asarray(elements)
    if E.ndim != 2 or E.size == 0 or not np.issubdtype(E.dtype, np.integer):
        raise ValueError(f"{name}: elements must be connectivity rows (n_el, k) of node indices (integers), "
                         f"got {E.dtype} {E.shape}")
    if E.min() < 0 or E.max() >= n_nodes:
        bad = int(E[(E < 0) | (E >= n_nodes)][0])
        raise ValueError(f"{name}: elements refer to node {bad}, the mesh has nodes 0..{n_nodes - 1}")
    used = np.zeros(n_nodes, dtype=bool)
    used[E.ravel()] = True
    return used


def _default_tol(X: np.ndarray) -> float:
    """1e-9 times the size of the mesh X (n_nodes, 3), m (1e-9 m for a mesh of one point)."""
    return 1e-9 * max(float(np.ptp(X, axis=0).max()), 1.0) if len(X) else 1e-9


def _vector3(name: str, value: Sequence[float]) -> np.ndarray:
    v = np.asarray(value, dtype=float)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be 3 finite numbers, got {value!r}")
    return v


def _unit(name: str, value: Sequence[float]) -> np.ndarray:
    v = _vector3(name, value)
    length = float(np.linalg.norm(v))
    if length == 0.0:
        raise ValueError(f"{name} must not be zero")
    return v / length


def boundary_edges(triangles: np.ndarray) -> np.ndarray:
    """(n_edges, 2) node pairs of the edges used by one triangle only (the mesh boundary).

    Each pair is ordered as in its triangle, so for a consistently oriented mesh the boundary is
    run counter-clockwise around the normal.
    """
    T = np.asarray(triangles, dtype=np.int64)
    edges = np.concatenate([T[:, [0, 1]], T[:, [1, 2]], T[:, [2, 0]]])           # (3 n_el, 2)
    _, inverse, counts = np.unique(np.sort(edges, axis=1), axis=0, return_inverse=True, return_counts=True)
    return edges[counts[inverse.ravel()] == 1]


@dataclass(frozen=True)
class Orientation:
    """How the triangles of a mesh are oriented against their neighbours (:func:`orientation`).

    Two triangles sharing an edge are consistently oriented when they run that edge in opposite
    directions (their normals ``(X2 - X1) x (X3 - X1)`` then point to the same side of the surface).

    Attributes
    ----------
    conflicts : (n, 2) int64 element pairs (lower index first, rows sorted) that run their shared
        edge in the same direction: their normals point to opposite sides.
    conflict_edges : (n, 2) int64 the node pairs of those edges, as the first element of the pair runs it.
    non_manifold : (m, 2) int64 node pairs (lower first, rows sorted) of the edges shared by more
        than two triangles, across which orientation is not defined and not checked.
    """

    conflicts: np.ndarray
    conflict_edges: np.ndarray
    non_manifold: np.ndarray

    @property
    def consistent(self) -> bool:
        """Whether no two neighbours across an edge of two triangles are oriented oppositely."""
        return len(self.conflicts) == 0


def orientation(triangles: np.ndarray) -> Orientation:
    """Check that neighbouring triangles are oriented consistently (see :class:`Orientation`).

    The edges are matched by sorting their node pairs, so open surfaces (boundary edges, one
    triangle), several unconnected patches and edges of more than two triangles (reported in
    ``non_manifold``) need no special care. ``triangles`` (n_el, 3) node indices.
    """
    T = _triangles(triangles, "orientation")
    pairs, same, non_manifold = _edge_neighbours(T)
    first, second = pairs[same, 0], pairs[same, 1]                                  # half-edge indices
    n_el = len(T)
    elements = np.sort(np.column_stack([first % n_el, second % n_el]), axis=1)      # (n, 2)
    order = np.lexsort((elements[:, 1], elements[:, 0]))
    edges = _half_edges(T)[np.where(first % n_el == elements[:, 0], first, second)]
    return Orientation(elements[order], edges[order], non_manifold)


def orient(triangles: np.ndarray) -> np.ndarray:
    """Triangles (n_el, 3) renumbered so that neighbours are consistently oriented.

    Within each patch (triangles connected across edges of exactly two triangles) the triangle
    of lowest index keeps its node order and every other one is reversed where needed (its
    second and third nodes swapped, so its first node stays first). Which side the normals of a
    patch then point to is that first triangle's choice: check it (a pressure acts along the
    normal) and reverse a whole patch with ``triangles[:, [0, 2, 1]]``. Patches meeting only at
    edges of more than two triangles are oriented independently. Raises ValueError, naming two
    elements, for a patch that cannot be oriented (a Moebius strip).
    """
    T = _triangles(triangles, "orient")
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import breadth_first_order, connected_components

    n_el = len(T)
    pairs, same, _ = _edge_neighbours(T)
    a, b = pairs[:, 0] % n_el, pairs[:, 1] % n_el                                   # neighbour elements
    graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(n_el, n_el)).tocsr()
    n_patches, patch = connected_components(graph, directed=False)
    seeds = np.unique(patch, return_index=True)[1]                                  # lowest element per patch
    # one tree over all patches: a virtual root (index n_el) above each patch's seed; the flip of a
    # triangle is the parity of the conflicts along its path to the root
    root = n_el
    rows = np.concatenate([a, b, np.full(n_patches, root), seeds])
    cols = np.concatenate([b, a, seeds, np.full(n_patches, root)])
    flag = np.concatenate([same, same, np.zeros(2 * n_patches, dtype=bool)]) + 1.0  # 2: conflict, 1: not
    relation = coo_matrix((flag, (rows, cols)), shape=(n_el + 1, n_el + 1)).tocsr()
    _, parent = breadth_first_order(relation, root, directed=False, return_predecessors=True)
    parent[root] = root
    nodes = np.arange(n_el + 1)
    parity = np.asarray(relation[nodes, parent]).ravel() == 2.0                    # (n_el + 1,) against the parent
    parity[root] = False
    while np.any(parent != root):                                                   # pointer jumping, log(depth) passes
        parity, parent = parity ^ parity[parent], parent[parent]
    oriented = T.copy()
    flip = parity[:n_el]
    oriented[flip] = T[flip][:, [0, 2, 1]]
    left = orientation(oriented)
    if not left.consistent:
        e1, e2 = left.conflicts[0]
        raise ValueError(f"orient: the surface of elements {e1} and {e2} (patch of element {seeds[patch[e1]]}) "
                         "cannot be oriented consistently (a Moebius strip): no side of it is the outside")
    return oriented


def _triangles(triangles: np.ndarray, what: str) -> np.ndarray:
    """Triangles as an (n_el, 3) int64 array, else ValueError naming ``what``."""
    T = np.asarray(triangles)
    if T.ndim != 2 or T.shape[1] != 3 or not np.issubdtype(T.dtype, np.integer):
        raise ValueError(f"{what}: triangles must be node indices (integers) of shape (n_el, 3), "
                         f"got {T.dtype} {T.shape}")
    return T.astype(np.int64)


def _half_edges(T: np.ndarray) -> np.ndarray:
    """(3 n_el, 2) the directed edges of triangles T (n_el, 3): row ``k n_el + e`` is side k of element e."""
    return np.concatenate([T[:, [0, 1]], T[:, [1, 2]], T[:, [2, 0]]])


def _edge_neighbours(T: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The edges of exactly two triangles, by sorting the node pairs: their half-edge indices
    (n, 2) (element = index mod n_el), whether both run the edge the same way (n,), and the node
    pairs (m, 2) of the edges of more than two triangles."""
    he = _half_edges(T)                                                             # (3 n_el, 2)
    key = np.sort(he, axis=1)
    edges, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    order = np.argsort(inverse.ravel(), kind="stable")                              # half-edges grouped by edge
    start = np.cumsum(counts) - counts                                              # (n_edges,)
    two = start[counts == 2]
    pairs = np.column_stack([order[two], order[two + 1]])                           # (n, 2)
    forward = he[:, 0] < he[:, 1]
    return pairs, forward[pairs[:, 0]] == forward[pairs[:, 1]], edges[counts > 2]


def _grid_triangles(n_u: int, n_v: int, pattern: str, closed: bool) -> tuple[np.ndarray, bool]:
    """Triangles of an n_u x n_v grid of cells; grid node (i, j) is i + j m (m nodes per row).

    ``closed``: the node column i = n_u is column 0 (periodic in u). For "cross" the centre node
    of cell (i, j) is numbered n_grid + i + j n_u. Returns (triangles, whether centres are used).
    """
    if pattern not in PATTERNS:
        raise ValueError(f"unknown mesh pattern {pattern!r}; choose one of {', '.join(PATTERNS)}")
    m = n_u if closed else n_u + 1
    i, j = np.meshgrid(np.arange(n_u), np.arange(n_v))
    i, j = i.ravel(), j.ravel()                                                      # (n_cells,)
    c00 = i + j * m
    c10 = (i + 1) % m + j * m
    c01 = i + (j + 1) * m
    c11 = (i + 1) % m + (j + 1) * m
    # counter-clockwise in the (u, v) plane for both diagonals
    right = np.stack([np.column_stack([c00, c10, c11]), np.column_stack([c00, c11, c01])], axis=1)
    left = np.stack([np.column_stack([c00, c10, c01]), np.column_stack([c10, c11, c01])], axis=1)
    if pattern == "right":
        cells = right
    elif pattern == "left":
        cells = left
    elif pattern == "union-jack":
        cells = np.where(((i + j) % 2 == 0)[:, None, None], right, left)
    else:  # "cross"
        centre = m * (n_v + 1) + i + j * n_u
        cells = np.stack([np.column_stack([c00, c10, centre]), np.column_stack([c10, c11, centre]),
                          np.column_stack([c11, c01, centre]), np.column_stack([c01, c00, centre])], axis=1)
    return cells.reshape(-1, 3).astype(np.int64), pattern == "cross"


def _periodic_grid(what: str, u_0: float, angle: float, n_u: int, n_u_name: str, v: np.ndarray,
                   pattern: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parameters (u, v) of the nodes of a grid in an angle u (rad) over [u_0, u_0 + angle] and
    the given equally spaced v values (n_v + 1,), closed in u when ``angle`` is 2 pi (to 1e-12), and its
    triangles (counter-clockwise in the (u, v) plane). Returns u (n_nodes,), v (n_nodes,),
    triangles (n_el, 3); "cross" centres, at the centre of each cell in (u, v), come last."""
    angle = float(angle)
    if not (0.0 < angle <= 2.0 * np.pi + 1e-12):
        raise ValueError(f"{what}: angle must be in (0, 2 pi] rad, got {angle!r}")
    closed = abs(angle - 2.0 * np.pi) <= 1e-12
    n_u, n_v = _count(n_u_name, n_u), len(v) - 1
    if closed and n_u < 3:
        raise ValueError(f"{what}: a closed surface needs {n_u_name} >= 3 cells around, got {n_u}")
    n_around = n_u if closed else n_u + 1
    uu, vv = np.meshgrid(u_0 + np.arange(n_around) * (angle / n_u), v)             # (n_v + 1, n_around)
    u_nodes, v_nodes = uu.ravel(), vv.ravel()
    triangles, centre_of = _grid_triangles(n_u, n_v, pattern, closed=closed)
    if centre_of:
        # centre of cell (i, j) in parameter space; u of the last column of a closed grid must
        # not be averaged across the seam, hence computed directly
        i, j = np.meshgrid(np.arange(n_u), np.arange(n_v))
        u_nodes = np.concatenate([u_nodes, (u_0 + (i + 0.5) * angle / n_u).ravel()])
        v_nodes = np.concatenate([v_nodes, (v[0] + (j + 0.5) * (v[-1] - v[0]) / n_v).ravel()])
    return u_nodes, v_nodes, triangles


def _cell_centres(grid: np.ndarray, n_u: int, n_v: int) -> np.ndarray:
    """(n_u n_v, d) mean of the four corners of each cell of an open grid, cell (i, j) at i + j n_u."""
    m = n_u + 1
    corners = grid.reshape(n_v + 1, m, -1)
    return (0.25 * (corners[:-1, :-1] + corners[:-1, 1:] + corners[1:, :-1] + corners[1:, 1:])).reshape(n_u * n_v, -1)


def _cyclic_axes(axis: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(e_axis, e_a, e_b): unit vectors in cyclic order starting at ``axis``."""
    if axis not in ("x", "y", "z"):
        raise ValueError(f"cylinder: axis must be 'x', 'y' or 'z', got {axis!r}")
    k = "xyz".index(axis)
    unit = np.eye(3)
    return unit[k], unit[(k + 1) % 3], unit[(k + 2) % 3]


def _positive(name: str, value: float) -> float:
    value = float(value)
    if not (np.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be a positive length, got {value!r}")
    return value


def _finite(name: str, value: float) -> float:
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value


def _count(name: str, value: int) -> int:
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    return int(value)
