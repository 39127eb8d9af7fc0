"""Structured shell meshes (flexmb.io.shell_mesh): counts, orientation, areas, seams, node sets."""
import numpy as np
import pytest

from flexmb.io import shell_mesh


def normals(X, T):
    """(n_el, 3) area-weighted normals (X2 - X1) x (X3 - X1) / 2."""
    P = X[T]
    return 0.5 * np.cross(P[:, 1] - P[:, 0], P[:, 2] - P[:, 0])


def check_conforming(T, n_nodes):
    """Every node used, no repeated triangle, every interior edge shared by exactly two triangles
    running it in opposite directions (consistent orientation)."""
    assert T.dtype == np.int64 and T.shape[1] == 3
    assert np.array_equal(np.unique(T), np.arange(n_nodes)), "unused or missing nodes"
    assert len(np.unique(np.sort(T, axis=1), axis=0)) == len(T), "a triangle appears twice"
    directed = np.concatenate([T[:, [0, 1]], T[:, [1, 2]], T[:, [2, 0]]])
    assert len(np.unique(directed, axis=0)) == len(directed), "an edge runs the same way in two triangles"
    _, counts = np.unique(np.sort(directed, axis=1), axis=0, return_counts=True)
    assert counts.max() <= 2


@pytest.mark.parametrize("pattern, n_el, n_nodes", [("right", 2 * 12, 20), ("left", 2 * 12, 20),
                                                    ("union-jack", 2 * 12, 20), ("cross", 4 * 12, 32)])
def test_rectangle_counts_orientation_and_exact_area(pattern, n_el, n_nodes):
    X, T = shell_mesh.rectangle(3.0, 2.0, 4, 3, pattern=pattern)
    assert X.shape == (n_nodes, 3) and T.shape == (n_el, 3)
    check_conforming(T, n_nodes)
    n = normals(X, T)
    assert np.all(n[:, 2] > 0) and np.allclose(n[:, :2], 0.0), "normals must point along +z"
    assert n[:, 2].sum() == pytest.approx(6.0, rel=1e-14)
    assert np.allclose(X[:, 2], 0.0) and X[:, 0].max() == 3.0 and X[:, 1].max() == 2.0
    # grid node (i, j) is i + j (nx + 1)
    assert np.allclose(X[2 + 1 * 5], [1.5, 2.0 / 3.0, 0.0])


def test_rectangle_patterns_differ_as_documented():
    _, right = shell_mesh.rectangle(1.0, 1.0, 2, 2, "right")
    _, left = shell_mesh.rectangle(1.0, 1.0, 2, 2, "left")
    _, jack = shell_mesh.rectangle(1.0, 1.0, 2, 2, "union-jack")
    # union jack: the four diagonals of the 2x2 block all meet at the centre node 4
    assert all(4 in tri for tri in jack)
    # the diagonal of cell (0, 0) is the edge its two triangles share
    assert set(right[0]) & set(right[1]) == {0, 4}
    assert set(left[0]) & set(left[1]) == {1, 3}


def test_cylinder_panel_orientation_and_area_converges():
    R, L, angle = 2.0, 3.0, np.pi / 3
    errors = []
    for n in (4, 8, 16):
        X, T = shell_mesh.cylinder(R, L, angle, n, 2, axis="x")
        assert X.shape == ((n + 1) * 3, 3)
        check_conforming(T, len(X))
        assert np.allclose(np.hypot(X[:, 1], X[:, 2]), R)
        n_vec = normals(X, T)
        centroid = X[T].mean(axis=1)
        radial = centroid.copy()
        radial[:, 0] = 0.0
        assert np.all(np.einsum("ij,ij->i", n_vec, radial) > 0), "normals must point outwards"
        errors.append(R * angle * L - np.linalg.norm(n_vec, axis=1).sum())
    # chord area error ~ (angle/n)^2: quartered when n doubles
    assert errors[0] > errors[1] > errors[2] > 0 and errors[1] / errors[2] == pytest.approx(4.0, rel=0.02)
    assert errors[2] < 1e-3 * R * angle * L


@pytest.mark.parametrize("axis", ["x", "y", "z"])
@pytest.mark.parametrize("pattern", shell_mesh.PATTERNS)
def test_closed_cylinder_has_no_seam_duplicates(axis, pattern):
    n_circ, n_axial = 12, 3
    X, T = shell_mesh.cylinder(1.0, 2.0, 2 * np.pi, n_circ, n_axial, pattern=pattern, axis=axis)
    n_grid = n_circ * (n_axial + 1)
    assert len(X) == n_grid + (n_circ * n_axial if pattern == "cross" else 0)
    check_conforming(T, len(X))
    # no two nodes at the same place
    d = np.linalg.norm(X[:, None] - X[None], axis=2) + np.eye(len(X))
    assert d.min() > 1e-6
    # closed: every edge is shared except those on the two end rings
    boundary = shell_mesh.boundary_edges(T)
    assert len(boundary) == 2 * n_circ
    k = "xyz".index(axis)
    assert np.all(np.isin(X[boundary][..., k], [0.0, 2.0]))
    # outward normals
    centroid = X[T].mean(axis=1)
    radial = centroid.copy()
    radial[:, k] = 0.0
    n_vec = normals(X, T)
    assert np.all(np.einsum("ij,ij->i", n_vec, radial) > 0)
    if pattern != "cross":
        # flat facets: area = perimeter of the inscribed n-gon times the length
        exact = n_circ * 2 * np.sin(np.pi / n_circ) * 2.0
        assert np.linalg.norm(n_vec, axis=1).sum() == pytest.approx(exact, rel=1e-12)


def test_spherical_cap_orientation_counts_and_area():
    R, phi0 = 2.0, np.pi / 2
    exact = 2 * np.pi * R**2 * (1 - np.cos(phi0))
    errors = []
    for n_rings, n_sectors in ((4, 8), (8, 16), (16, 32)):
        X, T = shell_mesh.spherical_cap(R, phi0, n_rings, n_sectors)
        assert X.shape == (1 + n_rings * n_sectors, 3) and len(T) == n_sectors * (2 * n_rings - 1)
        check_conforming(T, len(X))
        assert np.allclose(np.linalg.norm(X, axis=1), R)
        n_vec = normals(X, T)
        assert np.all(np.einsum("ij,ij->i", n_vec, X[T].mean(axis=1)) > 0), "normals must point outwards"
        errors.append(exact - np.linalg.norm(n_vec, axis=1).sum())
        rim = np.arange(len(X) - n_sectors, len(X))
        assert np.allclose(X[rim, 2], R * np.cos(phi0), atol=1e-12)
    assert errors[0] > errors[1] > errors[2] > 0
    assert errors[1] / errors[2] == pytest.approx(4.0, rel=0.05)


def test_single_ring_cap_is_a_fan():
    _, T = shell_mesh.spherical_cap(1.0, 0.3, 1, 5)
    assert T.shape == (5, 3) and np.all(T[:, 0] == 0)


def test_node_sets_select_edges_in_order():
    X, _ = shell_mesh.rectangle(2.0, 1.0, 4, 2)
    left = shell_mesh.nodes_at(X, x=0.0)
    assert np.array_equal(left, [0, 5, 10])
    bottom = shell_mesh.nodes_at(X, y=0.0)
    assert np.array_equal(bottom, [0, 1, 2, 3, 4]) and np.all(np.diff(X[bottom, 0]) > 0)
    assert np.array_equal(shell_mesh.nodes_at(X, x=2.0, y=1.0), [14])
    diagonal = shell_mesh.node_set(X, lambda P: np.isclose(P[:, 0], 2 * P[:, 1]))
    assert np.array_equal(diagonal, [0, 7, 14])
    # a closed cylinder's end ring comes out in the order around
    Xc, _ = shell_mesh.cylinder(1.0, 1.0, 2 * np.pi, 8, 2, axis="z")
    ring = shell_mesh.nodes_at(Xc, z=1.0)
    angles = np.unwrap(np.arctan2(Xc[ring, 1], Xc[ring, 0]))
    assert len(ring) == 8 and np.all(np.diff(angles) > 0)


def test_bad_input_is_named():
    X, _ = shell_mesh.rectangle(1.0, 1.0, 2, 2)
    with pytest.raises(ValueError, match="unknown mesh pattern 'diagonal'"):
        shell_mesh.rectangle(1.0, 1.0, 2, 2, pattern="diagonal")
    with pytest.raises(ValueError, match="nx must be a whole number"):
        shell_mesh.rectangle(1.0, 1.0, 0, 2)
    with pytest.raises(ValueError, match="b must be a positive length"):
        shell_mesh.rectangle(1.0, -1.0, 2, 2)
    with pytest.raises(ValueError, match="angle must be in"):
        shell_mesh.cylinder(1.0, 1.0, 7.0, 4, 2)
    with pytest.raises(ValueError, match="n_circ >= 3"):
        shell_mesh.cylinder(1.0, 1.0, 2 * np.pi, 2, 2)
    with pytest.raises(ValueError, match="axis must be"):
        shell_mesh.cylinder(1.0, 1.0, 1.0, 4, 2, axis="r")
    with pytest.raises(ValueError, match="opening_angle"):
        shell_mesh.spherical_cap(1.0, np.pi, 2, 6)
    with pytest.raises(ValueError, match=r"nodes at x = 3: the predicate selects no node"):
        shell_mesh.nodes_at(X, x=3.0)
    with pytest.raises(ValueError, match="boolean array"):
        shell_mesh.node_set(X, lambda P: P[:, 0])
