"""Shape functions and quadrature rules of the solid elements (reference cells, VTK node order).

Reference cells and node order (as meshio and VTK number them):

* ``"tet4"``: the unit tetrahedron with corners (0,0,0), (1,0,0), (0,1,0), (0,0,1); volume 1/6.
  ``N = [1 - xi - eta - zeta, xi, eta, zeta]`` (the volume coordinates L0 ... L3).
* ``"tet10"``: the same cell, corners ``L_i (2 L_i - 1)`` then the mid-side nodes ``4 L_i L_j``
  of the edges (0,1), (1,2), (0,2), (0,3), (1,3), (2,3) (VTK's ``VTK_QUADRATIC_TETRA``; Gmsh
  swaps the last two, which meshio's reader undoes).
* ``"hex8"``: the cube [-1, 1]^3, nodes (-1,-1,-1), (1,-1,-1), (1,1,-1), (-1,1,-1), then the same
  four at zeta = +1; ``N_a = (1 + xi_a xi)(1 + eta_a eta)(1 + zeta_a zeta) / 8``.
* ``"hex20"``: the same cube and corners, then the mid-edge nodes of the edges (0,1), (1,2), (2,3),
  (3,0), (4,5), (5,6), (6,7), (7,4), (0,4), (1,5), (2,6), (3,7) (VTK's ``VTK_QUADRATIC_HEXAHEDRON``,
  Abaqus C3D20; Gmsh numbers them otherwise, which meshio's reader undoes). Serendipity functions:
  corners ``(1 + xi_a xi)(1 + eta_a eta)(1 + zeta_a zeta)(xi_a xi + eta_a eta + zeta_a zeta - 2) / 8``,
  a mid-edge node with xi_a = 0 ``(1 - xi^2)(1 + eta_a eta)(1 + zeta_a zeta) / 4`` (and likewise).
* ``"wedge6"``: the triangle (xi, eta) >= 0, xi + eta <= 1 times zeta in [-1, 1] (volume 1), nodes
  (0,0,-1), (1,0,-1), (0,1,-1), then the same three at zeta = +1: the base (0,1,2) turns
  counter-clockwise seen from the top (3,4,5), as in Gmsh, Abaqus C3D6, meshio and VTK 9's own
  ``vtkWedge`` (whose documentation says the opposite; meshio's VTU writer swaps the base to match
  that text and its reader swaps it back, so meshio reads its files right while VTK 9.7 finds
  their wedge6 cells inverted). With the triangle's area coordinates L = (1 - xi - eta, xi, eta):
  ``N_a = L_a (1 + zeta_a zeta) / 2``.
* ``"wedge15"``: the same wedge, then the mid-edge nodes of the edges (0,1), (1,2), (2,0), (3,4),
  (4,5), (5,3), (0,3), (1,4), (2,5) (``VTK_QUADRATIC_WEDGE``, Abaqus C3D15; meshio does not swap its
  base). Corners ``L_a (2 L_a - 1)(1 + zeta_a zeta) / 2 - L_a (1 - zeta^2) / 2``, a triangle edge (a, b)
  ``2 L_a L_b (1 + zeta_c zeta)`` at its level zeta_c, an upright edge ``L_a (1 - zeta^2)``.

Rules (points in the reference cell, weights summing to its volume):

* tetrahedra: the centroid (degree 1), the symmetric 4-point rule (degree 2, points at
  volume coordinates (a, b, b, b) with a = (5 + 3 sqrt 5)/20, b = (5 - sqrt 5)/20) and, for
  higher degree, the conical-product rule: Gauss-Legendre in the collapsed coordinates of the
  Duffy map, n points per direction, exact for polynomials of degree 2n - 3 on the tetrahedron
  (the map's Jacobian adds degree 2 in one direction);
* hexahedra: the tensor Gauss-Legendre rule with n points per direction (degree 2n - 1 in each
  coordinate);
* wedges: a triangle rule times Gauss-Legendre along zeta, both of the asked degree: on the triangle
  the centroid (degree 1), the 3-point rule at (1/6, 1/6), (2/3, 1/6), (1/6, 2/3) (degree 2), else
  the conical product (Duffy map of the square, n^2 points, degree 2n - 2).
"""
from __future__ import annotations

import numpy as np

#: nodes per cell of each solid kind
NODES = {"tet4": 4, "tet10": 10, "hex8": 8, "hex20": 20, "wedge6": 6, "wedge15": 15}
#: the kind of solid of each number of nodes per cell
KIND_OF_NODES = {n: kind for kind, n in NODES.items()}
#: edges of the tetrahedron in the order of the tet10 mid-side nodes 4 ... 9 (VTK)
TET10_EDGES = np.array([[0, 1], [1, 2], [0, 2], [0, 3], [1, 3], [2, 3]])
#: natural coordinates of the hex8 nodes (8, 3)
HEX8_CORNERS = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                         [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float)
#: edges of the hexahedron in the order of the hex20 mid-edge nodes 8 ... 19 (VTK)
HEX20_EDGES = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4],
                        [0, 4], [1, 5], [2, 6], [3, 7]])
#: edges of the wedge in the order of the wedge15 mid-edge nodes 6 ... 14 (VTK)
WEDGE15_EDGES = np.array([[0, 1], [1, 2], [2, 0], [3, 4], [4, 5], [5, 3], [0, 3], [1, 4], [2, 5]])
#: natural coordinates (xi, eta, zeta) of the wedge6 nodes (6, 3)
WEDGE6_CORNERS = np.array([[0, 0, -1], [1, 0, -1], [0, 1, -1], [0, 0, 1], [1, 0, 1], [0, 1, 1]], dtype=float)
#: natural coordinates of every kind's nodes, (n_nodes, 3)
NODE_COORDINATES = {
    "tet4": np.vstack([np.zeros(3), np.eye(3)]),
    "hex8": HEX8_CORNERS,
    "wedge6": WEDGE6_CORNERS,
}
NODE_COORDINATES["tet10"] = np.vstack([NODE_COORDINATES["tet4"], NODE_COORDINATES["tet4"][TET10_EDGES].mean(axis=1)])
NODE_COORDINATES["hex20"] = np.vstack([HEX8_CORNERS, HEX8_CORNERS[HEX20_EDGES].mean(axis=1)])
NODE_COORDINATES["wedge15"] = np.vstack([WEDGE6_CORNERS, WEDGE6_CORNERS[WEDGE15_EDGES].mean(axis=1)])


def shape_functions(kind: str, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shape functions and their natural derivatives at reference points.

    Parameters
    ----------
    kind : one of :data:`NODES`: ``"tet4"``, ``"tet10"``, ``"hex8"``, ``"hex20"``, ``"wedge6"``,
        ``"wedge15"``.
    points : (n_p, 3) natural coordinates (xi, eta, zeta).

    Returns
    -------
    N : (n_p, n_nodes) values.
    dN : (n_p, n_nodes, 3) derivatives dN_a / dxi_k.
    """
    p = np.atleast_2d(np.asarray(points, dtype=float))
    n_p = p.shape[0]
    if kind == "hex8":
        c = HEX8_CORNERS                                                   # (8, 3)
        f = 1.0 + p[:, None, :] * c[None, :, :]                            # (n_p, 8, 3) the three factors
        N = f.prod(axis=2) / 8.0                                           # (n_p, 8)
        dN = np.empty((n_p, 8, 3))
        for k in range(3):
            others = [j for j in range(3) if j != k]
            dN[:, :, k] = c[None, :, k] * f[:, :, others[0]] * f[:, :, others[1]] / 8.0
        return N, dN
    if kind == "hex20":
        return _hex20(p)
    if kind in ("wedge6", "wedge15"):
        return _wedge(kind, p)
    # volume coordinates L0 ... L3 and their constant derivatives dL_i / dxi_k (4, 3)
    L = np.column_stack([1.0 - p.sum(axis=1), p])                          # (n_p, 4)
    dL = np.vstack([-np.ones(3), np.eye(3)])                               # (4, 3)
    if kind == "tet4":
        return L, np.broadcast_to(dL, (n_p, 4, 3)).copy()
    if kind == "tet10":
        i, j = TET10_EDGES[:, 0], TET10_EDGES[:, 1]
        N = np.concatenate([L * (2.0 * L - 1.0), 4.0 * L[:, i] * L[:, j]], axis=1)          # (n_p, 10)
        dN_corner = (4.0 * L - 1.0)[:, :, None] * dL[None]                                   # (n_p, 4, 3)
        dN_edge = 4.0 * (L[:, i, None] * dL[None, j] + L[:, j, None] * dL[None, i])          # (n_p, 6, 3)
        return N, np.concatenate([dN_corner, dN_edge], axis=1)
    raise ValueError(f"unknown solid kind {kind!r}, expected one of {sorted(NODES)}")


def _hex20(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Serendipity functions of the hex20 (module docstring) at points p (n_p, 3): N (n_p, 20) and
    dN/dxi (n_p, 20, 3)."""
    n_p = p.shape[0]
    c = HEX8_CORNERS                                                       # (8, 3)
    f = 1.0 + p[:, None, :] * c[None, :, :]                                # (n_p, 8, 3) the three factors
    s = np.einsum("pk,ak->pa", p, c) - 2.0                                 # (n_p, 8) xi_a xi + ... - 2
    prod = f.prod(axis=2)                                                  # (n_p, 8)
    N_corner = prod * s / 8.0
    dN_corner = np.empty((n_p, 8, 3))
    for k in range(3):
        others = [j for j in range(3) if j != k]
        dprod = c[None, :, k] * f[:, :, others[0]] * f[:, :, others[1]]   # (n_p, 8) d prod / dxi_k
        dN_corner[:, :, k] = (dprod * s + prod * c[None, :, k]) / 8.0
    # mid-edge nodes: a factor (1 - xi_k^2) along the edge's direction k, (1 + xi_a xi) across it
    m = NODE_COORDINATES["hex20"][8:]                                      # (12, 3), one zero per row
    along = m == 0.0                                                       # (12, 3)
    g = np.where(along[None], 1.0 - p[:, None, :] ** 2, 1.0 + p[:, None, :] * m[None])       # (n_p, 12, 3)
    dg = np.where(along[None], -2.0 * p[:, None, :], np.broadcast_to(m[None], g.shape))      # (n_p, 12, 3)
    N_edge = g.prod(axis=2) / 4.0
    dN_edge = np.empty((n_p, 12, 3))
    for k in range(3):
        others = [j for j in range(3) if j != k]
        dN_edge[:, :, k] = dg[:, :, k] * g[:, :, others[0]] * g[:, :, others[1]] / 4.0
    return np.concatenate([N_corner, N_edge], axis=1), np.concatenate([dN_corner, dN_edge], axis=1)


def _wedge(kind: str, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wedge6 or wedge15 functions (module docstring) at points p (n_p, 3): N (n_p, n_nodes) and
    dN/dxi (n_p, n_nodes, 3)."""
    L = np.column_stack([1.0 - p[:, 0] - p[:, 1], p[:, 0], p[:, 1]])       # (n_p, 3) area coordinates
    dL = np.array([[-1.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])   # (3, 3) dL_i / dxi_k
    z = p[:, 2:3]                                                          # (n_p, 1)
    side = np.array([-1.0, 1.0])                                           # bottom (nodes 0-2), top (3-5)
    Lc = np.tile(L, 2)                                                     # (n_p, 6) L of each corner
    dLc = np.tile(dL, (2, 1))                                              # (6, 3)
    zc = np.repeat(side, 3)                                                # (6,) zeta of each corner
    h = 0.5 * (1.0 + zc * z)                                               # (n_p, 6) linear in zeta
    if kind == "wedge6":
        N = Lc * h
        dN = dLc[None] * h[:, :, None]                                     # (n_p, 6, 3)
        dN[:, :, 2] = 0.5 * Lc * zc
        return N, dN
    bubble = 1.0 - z**2                                                    # (n_p, 1) zero at both ends
    N_corner = Lc * (2.0 * Lc - 1.0) * h - 0.5 * Lc * bubble
    dN_corner = ((4.0 * Lc - 1.0) * h - 0.5 * bubble)[:, :, None] * dLc[None]
    dN_corner[:, :, 2] = 0.5 * Lc * (2.0 * Lc - 1.0) * zc + Lc * z
    # triangle edges at the bottom (6-8) and the top (9-11), at the corners' levels zc:
    # 2 L_a L_b (1 + zeta_c zeta)
    a, b = WEDGE15_EDGES[:6, 0] % 3, WEDGE15_EDGES[:6, 1] % 3              # (6,) triangle corners
    N_tri = 4.0 * L[:, a] * L[:, b] * h
    dN_tri = 4.0 * (L[:, a, None] * dL[None, b] + L[:, b, None] * dL[None, a]) * h[:, :, None]
    dN_tri[:, :, 2] = 2.0 * L[:, a] * L[:, b] * zc
    # upright edges (12-14): L_a (1 - zeta^2)
    N_up = L * bubble
    dN_up = dL[None] * bubble[:, :, None]                                  # (n_p, 3, 3)
    dN_up[:, :, 2] = -2.0 * L * z
    return (np.concatenate([N_corner, N_tri, N_up], axis=1),
            np.concatenate([dN_corner, dN_tri, dN_up], axis=1))


def triangle_rule(degree: int) -> tuple[np.ndarray, np.ndarray]:
    """A rule on the unit triangle (xi, eta >= 0, xi + eta <= 1) exact for polynomials of ``degree``:
    (n_q, 2) points and (n_q,) positive weights summing to 1/2 (see the module docstring)."""
    if degree <= 1:
        return np.full((1, 2), 1.0 / 3.0), np.array([0.5])
    if degree == 2:
        return np.array([[1.0, 1.0], [4.0, 1.0], [1.0, 4.0]]) / 6.0, np.full(3, 1.0 / 6.0)
    n = (degree + 3) // 2                                                  # 2n - 2 >= degree
    x, w = np.polynomial.legendre.leggauss(n)
    s, ws = 0.5 * (x + 1.0), 0.5 * w                                       # Gauss-Legendre on [0, 1]
    u, v = (g.ravel() for g in np.meshgrid(s, s, indexing="ij"))
    # Duffy map of the unit square onto the triangle; its Jacobian is 1 - u
    points = np.column_stack([u, (1.0 - u) * v])
    return points, np.outer(ws, ws).ravel() * (1.0 - u)


def wedge_rule(degree: int) -> tuple[np.ndarray, np.ndarray]:
    """The triangle rule of ``degree`` times Gauss-Legendre along zeta exact for ``degree`` on the
    reference wedge: (n_q, 3) points and (n_q,) weights summing to 1."""
    tri, w_tri = triangle_rule(degree)
    x, w = np.polynomial.legendre.leggauss(max(1, (degree + 2) // 2))
    points = np.column_stack([np.repeat(tri, len(x), axis=0), np.tile(x, len(tri))])
    return points, np.repeat(w_tri, len(x)) * np.tile(w, len(tri))


def gauss_legendre_hex(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Tensor Gauss-Legendre rule on [-1, 1]^3, n points per direction: (n^3, 3) points and (n^3,)
    weights (sum 8)."""
    x, w = np.polynomial.legendre.leggauss(n)
    grid = np.stack(np.meshgrid(x, x, x, indexing="ij"), axis=-1).reshape(-1, 3)
    weights = np.einsum("i,j,k->ijk", w, w, w).ravel()
    return grid, weights


def tetrahedron_rule(degree: int) -> tuple[np.ndarray, np.ndarray]:
    """A rule on the unit tetrahedron exact for polynomials of ``degree``: (n_q, 3) points and
    (n_q,) positive weights summing to 1/6 (see the module docstring for which rule)."""
    if degree <= 1:
        return np.full((1, 3), 0.25), np.array([1.0 / 6.0])
    if degree == 2:
        a, b = (5.0 + 3.0 * np.sqrt(5.0)) / 20.0, (5.0 - np.sqrt(5.0)) / 20.0
        points = np.full((4, 3), b)
        points[1:, :] = b + (a - b) * np.eye(3)                            # rows 1..3: one coordinate a
        return points, np.full(4, 1.0 / 24.0)
    n = (degree + 4) // 2                                                  # 2n - 3 >= degree
    x, w = np.polynomial.legendre.leggauss(n)
    s, ws = 0.5 * (x + 1.0), 0.5 * w                                       # Gauss-Legendre on [0, 1]
    u, v, t = (g.ravel() for g in np.meshgrid(s, s, s, indexing="ij"))
    # Duffy map of the unit cube onto the tetrahedron; its Jacobian is (1 - u)^2 (1 - v)
    points = np.column_stack([u, (1.0 - u) * v, (1.0 - u) * (1.0 - v) * t])
    weights = np.einsum("i,j,k->ijk", ws, ws, ws).ravel() * (1.0 - u) ** 2 * (1.0 - v)
    return points, weights


def quadrature(kind: str, degree: int) -> tuple[np.ndarray, np.ndarray]:
    """A rule for ``kind``'s reference cell exact for polynomials of ``degree`` (total degree on
    tetrahedra, degree in each coordinate on hexahedra, total degree on the triangle and degree in
    zeta on wedges): (n_q, 3) points, (n_q,) weights."""
    if kind in ("hex8", "hex20"):
        return gauss_legendre_hex(max(1, (degree + 2) // 2))
    if kind in ("wedge6", "wedge15"):
        return wedge_rule(degree)
    return tetrahedron_rule(degree)
