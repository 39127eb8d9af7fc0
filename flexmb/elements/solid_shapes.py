"""Shape functions and quadrature rules of the solid elements (reference cells, VTK node order).

Reference cells and node order (as meshio and VTK number them):

* ``"tet4"``: the unit tetrahedron with corners (0,0,0), (1,0,0), (0,1,0), (0,0,1); volume 1/6.
  ``N = [1 - xi - eta - zeta, xi, eta, zeta]`` (the volume coordinates L0 ... L3).
* ``"tet10"``: the same cell, corners ``L_i (2 L_i - 1)`` then the mid-side nodes ``4 L_i L_j``
  of the edges (0,1), (1,2), (0,2), (0,3), (1,3), (2,3) (VTK's ``VTK_QUADRATIC_TETRA``; Gmsh
  swaps the last two, which meshio's reader undoes).
* ``"hex8"``: the cube [-1, 1]^3, nodes (-1,-1,-1), (1,-1,-1), (1,1,-1), (-1,1,-1), then the same
  four at zeta = +1; ``N_a = (1 + xi_a xi)(1 + eta_a eta)(1 + zeta_a zeta) / 8``.

Rules (points in the reference cell, weights summing to its volume):

* tetrahedra: the centroid (degree 1), the symmetric 4-point rule (degree 2, points at
  volume coordinates (a, b, b, b) with a = (5 + 3 sqrt 5)/20, b = (5 - sqrt 5)/20) and, for
  higher degree, the conical-product rule: Gauss-Legendre in the collapsed coordinates of the
  Duffy map, n points per direction, exact for polynomials of degree 2n - 3 on the tetrahedron
  (the map's Jacobian adds degree 2 in one direction);
* hexahedra: the tensor Gauss-Legendre rule with n points per direction (degree 2n - 1 in each
  coordinate).
"""
from __future__ import annotations

import numpy as np

#: nodes per cell of each solid kind
NODES = {"tet4": 4, "tet10": 10, "hex8": 8}
#: the kind of solid of each number of nodes per cell
KIND_OF_NODES = {n: kind for kind, n in NODES.items()}
#: edges of the tetrahedron in the order of the tet10 mid-side nodes 4 ... 9 (VTK)
TET10_EDGES = np.array([[0, 1], [1, 2], [0, 2], [0, 3], [1, 3], [2, 3]])
#: natural coordinates of the hex8 nodes (8, 3)
HEX8_CORNERS = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                         [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float)


def shape_functions(kind: str, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shape functions and their natural derivatives at reference points.

    Parameters
    ----------
    kind : ``"tet4"``, ``"tet10"`` or ``"hex8"``.
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
    tetrahedra, degree in each coordinate on the hexahedron): (n_q, 3) points, (n_q,) weights."""
    if kind == "hex8":
        return gauss_legendre_hex(max(1, (degree + 2) // 2))
    return tetrahedron_rule(degree)
