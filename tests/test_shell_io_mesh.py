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


# ------------------------------------------------------------------ orientation
def _reversed(T, elements):
    """T with the given triangles reversed (second and third nodes swapped)."""
    out = T.copy()
    out[elements] = T[elements][:, [0, 2, 1]]
    return out


def _neighbours(T, e):
    """Elements sharing an edge (two nodes) with element e, ascending."""
    shared = (T[:, :, None] == T[e][None, None, :]).any(axis=2).sum(axis=1)
    return np.flatnonzero(shared == 2)


@pytest.mark.parametrize("mesh", ["rectangle", "cylinder", "closed cylinder", "cap"])
def test_generated_meshes_are_consistently_oriented(mesh):
    X, T = {"rectangle": lambda: shell_mesh.rectangle(2.0, 1.0, 4, 3, "cross"),
            "cylinder": lambda: shell_mesh.cylinder(1.0, 2.0, 1.0, 5, 3, "union-jack"),
            "closed cylinder": lambda: shell_mesh.cylinder(1.0, 2.0, 2 * np.pi, 6, 3, "left"),
            "cap": lambda: shell_mesh.spherical_cap(1.0, 1.0, 3, 7)}[mesh]()
    check = shell_mesh.orientation(T)
    assert check.consistent and check.conflicts.shape == (0, 2) and check.non_manifold.shape == (0, 2)


def test_orientation_names_each_pair_that_runs_its_edge_the_same_way():
    _, T = shell_mesh.rectangle(3.0, 2.0, 3, 2, "union-jack")
    flipped = 8                                                         # three neighbours
    check = shell_mesh.orientation(_reversed(T, [flipped]))
    around = _neighbours(T, flipped)
    assert len(around) == 3
    expected = np.sort(np.column_stack([np.full(len(around), flipped), around]), axis=1)
    np.testing.assert_array_equal(check.conflicts, expected[np.lexsort((expected[:, 1], expected[:, 0]))])
    for (e1, e2), (i, j) in zip(check.conflicts, check.conflict_edges):
        shared = set(T[e1]) & set(T[e2])
        assert {int(i), int(j)} == shared, f"edge {i}-{j} is not the one elements {e1} and {e2} share"
        a, b, c = _reversed(T, [flipped])[e1]
        runs = {(int(a), int(b)), (int(b), int(c)), (int(c), int(a))}
        assert (i, j) in runs, f"edge {i}-{j} is not run that way by element {e1}"


def test_orient_repairs_randomly_flipped_patches_each_from_its_first_triangle(rng):
    """A plate and, numbered after it, a separate closed cylinder: every patch comes back as the
    generator made it, or wholly reversed, as its lowest-index triangle decides."""
    Xp, Tp = shell_mesh.rectangle(2.0, 1.0, 6, 4, "union-jack")
    Xc, Tc = shell_mesh.cylinder(1.0, 2.0, 2 * np.pi, 8, 4, "right")
    T = np.vstack([Tp, Tc + len(Xp)])
    X = np.vstack([Xp, Xc + [5.0, 0.0, 0.0]])
    flips = np.flatnonzero(rng.random(len(T)) < 0.5)
    flips = np.union1d(flips, [len(Tp)])                                # the cylinder's first triangle too
    broken = _reversed(T, flips)
    assert len(shell_mesh.orientation(broken).conflicts) > 10
    fixed = shell_mesh.orient(broken)
    assert shell_mesh.orientation(fixed).consistent
    np.testing.assert_array_equal(fixed[0], broken[0])                 # the seeds keep their order
    np.testing.assert_array_equal(fixed[len(Tp)], broken[len(Tp)])
    np.testing.assert_array_equal(fixed[:, 0], T[:, 0])                 # first nodes stay first
    plate = normals(X, fixed[:len(Tp)])[:, 2]
    assert np.all(plate * np.sign(plate[0]) > 0), "the plate's normals must all point to one side"
    np.testing.assert_array_equal(fixed[len(Tp):], _reversed(T, np.arange(len(Tp), len(T)))[len(Tp):])


def test_orient_refuses_a_moebius_strip():
    n = 8                                                               # a band of n quads, its ends joined twisted
    top, bottom = 2 * np.arange(n), 2 * np.arange(n) + 1
    next_top, next_bottom = np.roll(top, -1), np.roll(bottom, -1)
    next_top[-1], next_bottom[-1] = bottom[0], top[0]
    T = np.vstack([np.column_stack([top, bottom, next_top]), np.column_stack([bottom, next_bottom, next_top])])
    assert not shell_mesh.orientation(T).consistent
    with pytest.raises(ValueError, match="cannot be oriented consistently"):
        shell_mesh.orient(T)


def test_edges_of_more_than_two_triangles_are_reported_not_judged():
    """A web standing on a plate along the plate's middle line y = 1 (nodes 5..9 of the 4 x 2
    plate): each edge of that line belongs to two plate triangles and one web triangle."""
    _, T = shell_mesh.rectangle(4.0, 2.0, 4, 2, "right")
    k = np.arange(4)                                                    # web cells: nodes 5 + k, 6 + k below,
    foot, top = 5 + k, 15 + k                                           # 16 + k, 15 + k above
    web = np.vstack([np.column_stack([foot, foot + 1, top + 1]), np.column_stack([foot, top + 1, top])])
    check = shell_mesh.orientation(np.vstack([T, web]))
    np.testing.assert_array_equal(check.non_manifold, [[5, 6], [6, 7], [7, 8], [8, 9]])
    assert check.consistent
    fixed = shell_mesh.orient(np.vstack([T, _reversed(web, [1, 2])]))
    assert shell_mesh.orientation(fixed).consistent, "the web is a patch of its own, oriented by itself"


def test_orientation_bad_input_is_named():
    with pytest.raises(ValueError, match=r"orient: triangles must be node indices \(integers\) of shape"):
        shell_mesh.orient(np.zeros((2, 4), dtype=int))
    with pytest.raises(ValueError, match="orientation: triangles must be node indices"):
        shell_mesh.orientation(np.zeros((2, 3)))
