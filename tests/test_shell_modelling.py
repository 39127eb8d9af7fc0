"""What real shell models need around them (issue 32 item 7): surface loads in a fixed direction,
symmetry planes, node selection that tells coincident nodes apart, and the annulus, sphere zone
and cylinder-part generators."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.io import shell_mesh

E, NU, H, RHO = 70e9, 0.3, 0.005, 2700.0          # Pa, -, m, kg/m^3


def facet_area_vectors(X: np.ndarray, T: np.ndarray) -> np.ndarray:
    """(n_el, 3) A E3 of each triangle, m^2."""
    P = X[T]
    return 0.5 * np.cross(P[:, 1] - P[:, 0], P[:, 2] - P[:, 0])


def shell_model(X: np.ndarray, T: np.ndarray, rho: float = 0.0) -> tuple[fm.Model, fm.Shell3]:
    model = fm.Model(dim=3)
    model.add_nodes(X)
    return model, model.add_shell(T, E=E, nu=NU, thickness=H, rho=rho, name="skin")


def total_load(model: fm.Model, t: float = 1.0, statics: bool = False) -> np.ndarray:
    """Sum of the nodal forces (3,) N of the model's loads at t."""
    asm = fm.Assembly(model)
    return asm.external_force(t, statics)[asm.dofs.translations()].sum(axis=0)


def support_edges(model: fm.Model, X: np.ndarray, edges: list[tuple[int, float]]) -> None:
    """Hinged edges (ux, uy, uz fixed) on the nodes with coordinate ``axis`` = value."""
    for axis, value in edges:
        for node in shell_mesh.nodes_at(X, **{"xyz"[axis]: value}):
            model.fix(int(node), ["ux", "uy", "uz"])


# --------------------------------------------------------------- surface load
def test_surface_load_total_is_traction_times_area_on_a_curved_panel():
    X, T = shell_mesh.cylinder(2.0, 3.0, 1.2, 7, 4, "union-jack", angle_start=0.4)
    model, skin = shell_model(X, T)
    traction = np.array([120.0, -35.0, 60.0])                                     # N/m^2
    model.add_surface_load(skin, traction)
    area = np.linalg.norm(facet_area_vectors(X, T), axis=1).sum()                 # m^2
    got = total_load(model)
    scale = np.abs(traction).max() * area
    assert np.abs(got - traction * area).max() <= 1e-13 * scale, \
        f"total force {got} N, expected {traction * area} N"
    # in statics a constant traction is scaled by the load factor
    np.testing.assert_allclose(total_load(model, 0.25, statics=True), 0.25 * traction * area,
                               rtol=0.0, atol=1e-13 * scale)


def test_surface_load_on_selected_elements_and_as_a_function_of_time():
    X, T = shell_mesh.rectangle(2.0, 1.0, 4, 2)
    model, skin = shell_model(X, T)
    calls = []

    def traction(t):
        calls.append(t)
        return [0.0, 0.0, -10.0 * t]

    model.add_surface_load("skin", traction, elements=[0, 1, 2])                 # three cells of 0.25 m^2 / 2
    asm = fm.Assembly(model)
    calls.clear()
    f = asm.external_force(3.0)[asm.dofs.translations()]
    np.testing.assert_allclose(f.sum(axis=0), [0.0, 0.0, -30.0 * 0.375], rtol=1e-13)
    assert calls == [3.0], "the traction function must be called once per time, not once per node"
    loaded = np.unique(T[:3])
    assert np.all(f[np.setdiff1d(np.arange(len(X)), loaded)] == 0.0), "load on a node of an unloaded element"


def test_surface_load_along_the_normal_deflects_a_plate_like_the_pressure_whatever_the_node_order():
    a, b, q = 1.0, 0.8, 2.0e3                                                      # m, m, Pa
    X, T = shell_mesh.rectangle(a, b, 6, 4, "union-jack")
    centre = int(shell_mesh.nodes_near(X, [0.5, 0.4, 0.0])[0])

    def deflection(load) -> np.ndarray:
        model, skin = shell_model(X, T)
        support_edges(model, X, [(0, 0.0), (0, a), (1, 0.0), (1, b)])
        load(model, skin)
        asm = fm.Assembly(model)
        return fm.linear_static(asm).u[asm.dofs.translations()]

    by_pressure = deflection(lambda m, s: m.add_pressure(s, q))
    by_traction = deflection(lambda m, s: m.add_surface_load(s, [0.0, 0.0, q]))
    assert by_pressure[centre, 2] > 0.0
    np.testing.assert_allclose(by_traction, by_pressure, rtol=0.0, atol=1e-12 * abs(by_pressure[centre, 2]))
    # the traction's direction is its own: triangles numbered the other way round change nothing
    T_flipped = T[:, ::-1]
    model, skin = shell_model(X, T_flipped)
    support_edges(model, X, [(0, 0.0), (0, a), (1, 0.0), (1, b)])
    model.add_surface_load(skin, [0.0, 0.0, q])
    asm = fm.Assembly(model)
    flipped = fm.linear_static(asm).u[asm.dofs.translations()]
    np.testing.assert_allclose(flipped, by_pressure, rtol=0.0, atol=1e-12 * abs(by_pressure[centre, 2]))


def test_self_weight_as_surface_load_equals_gravity_on_the_mass_in_statics():
    X, T = shell_mesh.spherical_zone(1.5, 0.4, 1.1, 12, 3)
    g = np.array([0.0, 0.0, -9.81])
    weighed, skin = shell_model(X, T, rho=RHO)
    weighed.set_gravity(g)
    loaded, skin = shell_model(X, T)
    loaded.add_surface_load(skin, RHO * H * g)
    expected = total_load(weighed, 1.0, statics=True)
    got = total_load(loaded, 1.0, statics=True)
    np.testing.assert_allclose(got, expected, rtol=0.0, atol=1e-12 * np.abs(expected).max())


def test_surface_load_bad_input_is_named():
    X, T = shell_mesh.rectangle(1.0, 1.0, 2, 2)
    model, skin = shell_model(X, T)
    with pytest.raises(fm.ModelError, match="surface load on group 'skin'.*traction"):
        model.add_surface_load(skin, [1.0, 2.0])
    with pytest.raises(fm.ModelError, match="surface load on group 'skin': elements.*element 8 does not exist"):
        model.add_surface_load(skin, [0.0, 0.0, 1.0], elements=[0, 8])
    with pytest.raises(fm.ModelError, match="add_surface_load: 'hull' is not a shell group.*'skin'"):
        model.add_surface_load("hull", [0.0, 0.0, 1.0])


# ----------------------------------------------------------- symmetry planes
def plate_with_supports(a: float, b: float, n: int, quarter: bool,
                        shift: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> tuple[fm.Model, int]:
    """A hinged rectangular plate 2a x 2b (n x n cells per quarter, union-jack, mirror-symmetric
    about its centre lines), or its quarter [0, a] x [0, b] with symmetry planes at x = a and
    y = b; uniform self-weight-like load; the whole moved by ``shift`` (m). Returns the model and
    its centre node."""
    m = 1 if quarter else 2
    X, T = shell_mesh.rectangle(m * a, m * b, m * n, m * n, "union-jack")
    X = X + np.asarray(shift)
    x0, y0, _ = shift
    model, skin = shell_model(X, T, rho=RHO)
    if quarter:
        support_edges(model, X, [(0, x0), (1, y0)])
        model.add_symmetry_plane(shell_mesh.nodes_at(X, x=x0 + a), "x")
        model.add_symmetry_plane(shell_mesh.nodes_at(X, y=y0 + b), "y")
    else:
        support_edges(model, X, [(0, x0), (0, x0 + 2 * a), (1, y0), (1, y0 + 2 * b)])
    model.add_surface_load(skin, [0.0, 0.0, -RHO * H * 9.81])
    return model, int(shell_mesh.nodes_near(X, np.asarray(shift) + [a, b, 0.0])[0])


@pytest.mark.parametrize("shift", [(0.0, 0.0, 0.0), (1e4, -3e3, 50.0)])
def test_quarter_plate_with_two_symmetry_planes_matches_the_full_plate(shift):
    a, b, n = 0.5, 0.4, 4
    full, c_full = plate_with_supports(a, b, n, quarter=False)
    quarter, c_quarter = plate_with_supports(a, b, n, quarter=True, shift=shift)
    w = []
    for model, centre in ((full, c_full), (quarter, c_quarter)):
        asm = fm.Assembly(model)
        w.append(fm.linear_static(asm).u[asm.dofs.index(centre, "uz")])
    assert w[0] < 0.0
    assert abs(w[1] - w[0]) <= 1e-8 * abs(w[0]), f"quarter plate centre deflection {w[1]:.12g} m, full {w[0]:.12g} m"
    f_full = fm.natural_modes(full, n_modes=1).frequencies_hz[0]
    f_quarter = fm.natural_modes(quarter, n_modes=1).frequencies_hz[0]
    assert abs(f_quarter - f_full) <= 1e-8 * f_full, f"first frequency {f_quarter:.12g} Hz, full plate {f_full:.12g} Hz"


def test_symmetry_plane_fixes_the_normal_translation_and_in_plane_rotations():
    X, T = shell_mesh.rectangle(1.0, 1.0, 2, 2)
    model, _ = shell_model(X, T)
    bar = model.add_node([2.0, 0.0, 0.0])
    model.add_truss([[int(shell_mesh.nodes_at(X, x=1.0, y=0.0)[0]), bar]], EA=1.0)
    model.add_node([2.0, 1.0, 0.0])
    model.add_truss([[bar, model.n_nodes - 1]], EA=1.0)
    model.add_symmetry_plane([int(shell_mesh.nodes_at(X, x=1.0, y=1.0)[0])], "x")
    model.add_symmetry_plane([bar, model.n_nodes - 1], "x")           # truss nodes: no rotations
    top = int(shell_mesh.nodes_at(X, x=1.0, y=1.0)[0])
    assert {dof for node, dof in model.prescribed if node == top} == {"ux", "ry", "rz"}
    assert {dof for node, dof in model.prescribed if node == bar} == {"ux"}
    plane_z = fm.Model(dim=3)
    plane_z.add_nodes(X)
    plane_z.add_shell(T, E=E, nu=NU, thickness=H)
    plane_z.add_symmetry_plane(np.arange(len(X)), "z")
    assert {dof for node, dof in plane_z.prescribed if node == 4} == {"uz", "rx", "ry"}
    planar = fm.Model(dim=2)
    planar.add_nodes([[0.0, 0.0], [0.0, 1.0]])
    planar.add_beam2d([[0, 1]], EA=1.0, EI=1.0)
    planar.add_symmetry_plane([0, 1], "x")
    assert set(planar.prescribed) == {(0, "ux"), (0, "rz"), (1, "ux"), (1, "rz")}


def test_symmetry_plane_bad_input_is_named():
    X, T = shell_mesh.rectangle(1.0, 1.0, 2, 2)
    model, _ = shell_model(X, T)
    with pytest.raises(fm.ModelError, match="node 4 is at x = 0.5 m.*node 0 at x = 0 m"):
        model.add_symmetry_plane([0, 3, 4], "x")
    with pytest.raises(fm.ModelError, match="normal must be one of 'x', 'y', 'z'.*'r'"):
        model.add_symmetry_plane([0], "r")
    with pytest.raises(fm.ModelError, match="node 12 does not exist"):
        model.add_symmetry_plane([0, 12], "y")
    planar = fm.Model(dim=2)
    planar.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    with pytest.raises(fm.ModelError, match="normal must be one of 'x', 'y'.*'z'"):
        planar.add_symmetry_plane([0, 1], "z")


# ---------------------------------------------------- coincident nodes (a slit)
def slit_plate() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A plate [0, 2] x [0, 1] (8 x 4 cells) cut along x = 1 from y = 0 to the tip at y = 0.5: the
    nodes of the cut below the tip are doubled, the copies used by the cells right of the cut.
    Returns X, T, the elements left and right of the cut."""
    X, T = shell_mesh.rectangle(2.0, 1.0, 8, 4)
    lip = shell_mesh.nodes_near(X, [1.0, 0.0, 0.0], direction=[0.0, 1.0, 0.0])
    lip = lip[X[lip, 1] < 0.5 - 1e-9]                                              # the tip stays shared
    copies = np.arange(len(X), len(X) + len(lip))
    centroid = X[T].mean(axis=1)
    right = np.flatnonzero(centroid[:, 0] > 1.0)
    left = np.flatnonzero(centroid[:, 0] < 1.0)
    renumber = np.arange(len(X))
    renumber[lip] = copies
    T = T.copy()
    low = right[centroid[right, 1] < 0.5]
    T[low] = renumber[T[low]]
    return np.vstack([X, X[lip]]), T, left, right


def test_node_selection_tells_the_lips_of_a_slit_apart():
    X, T, left, right = slit_plate()
    assert shell_mesh.orientation(T).consistent
    both = shell_mesh.nodes_near(X, [1.0, 0.25, 0.0])
    assert len(both) == 2, "a lip node and its copy are at (1, 0.25)"
    on_left = shell_mesh.nodes_near(X, [1.0, 0.25, 0.0], elements=T[left])
    on_right = shell_mesh.nodes_near(X, [1.0, 0.25, 0.0], elements=T[right])
    assert len(on_left) == len(on_right) == 1 and on_left[0] != on_right[0]
    assert set(both) == {int(on_left[0]), int(on_right[0])}
    # the right lip along the cut, ordered along the line: two copies, then the shared tip and above
    line = shell_mesh.nodes_near(X, [1.0, 0.0, 0.0], direction=[0.0, 1.0, 0.0], elements=T[right])
    np.testing.assert_allclose(X[line, 1], [0.0, 0.25, 0.5, 0.75, 1.0], atol=1e-12)
    assert np.all(line[:2] >= 45) and np.all(line[2:] < 45), "the right lip must use the copies below the tip"
    left_line = shell_mesh.nodes_at(X, x=1.0, elements=T[left])
    assert np.all(left_line < 45) and len(left_line) == 5
    # the elements decide: pulling the right lip's nodes opens the slit, the left lip stays
    model, _ = shell_model(X, T)
    support_edges(model, X, [(0, 0.0)])
    for node in shell_mesh.nodes_at(X, x=2.0):
        model.prescribe(int(node), "ux", 1e-4)
    asm = fm.Assembly(model)
    u = fm.linear_static(asm).u[asm.dofs.translations()]
    opening = u[on_right[0], 0] - u[on_left[0], 0]
    assert opening > 0.1 * 1e-4, f"the slit opens by {opening:.3g} m only"
    # a plane selection with elements: the left lip's nodes of the plane x = 1
    plane = shell_mesh.nodes_near(X, [1.0, 0.0, 0.0], normal=[1.0, 0.0, 0.0], elements=T[left])
    assert np.array_equal(plane, left_line)


def test_node_selection_bad_input_is_named():
    X, T, left, _ = slit_plate()
    with pytest.raises(ValueError, match=r"nodes at \[5.0, 0.0, 0.0\].*selects no node"):
        shell_mesh.nodes_near(X, [5.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="among the .* nodes of the given elements"):
        shell_mesh.nodes_at(X, x=2.0, elements=T[left])
    with pytest.raises(ValueError, match="direction must not be zero"):
        shell_mesh.nodes_near(X, [1.0, 0.0, 0.0], direction=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="not both"):
        shell_mesh.nodes_near(X, [1.0, 0.0, 0.0], direction=[0.0, 1.0, 0.0], normal=[1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="elements refer to node 99"):
        shell_mesh.nodes_at(X, x=1.0, elements=np.array([[0, 1, 99]]))


# ------------------------------------------------------------------- generators
def convergence_rate(sizes: list[int], errors: list[float]) -> float:
    return -np.polyfit(np.log(sizes), np.log(errors), 1)[0]


@pytest.mark.parametrize("pattern", shell_mesh.PATTERNS)
@pytest.mark.parametrize("angle", [2 * np.pi, 1.0])
def test_annulus_counts_orientation_radii_and_exact_polygon_area(pattern, angle):
    r_i, r_o, n_circ, n_radial = 0.3, 1.1, 12, 3
    X, T = shell_mesh.annulus(r_i, r_o, n_circ, n_radial, angle=angle, pattern=pattern, angle_start=0.7)
    closed = angle == 2 * np.pi
    m = n_circ if closed else n_circ + 1
    n_grid = m * (n_radial + 1)
    cross = pattern == "cross"
    assert X.shape == (n_grid + (n_circ * n_radial if cross else 0), 3)
    assert T.shape == ((4 if cross else 2) * n_circ * n_radial, 3)
    assert shell_mesh.orientation(T).consistent
    A = facet_area_vectors(X, T)
    assert np.all(A[:, 2] > 0.0) and np.allclose(A[:, :2], 0.0), "annulus normals must point along +z"
    r = np.hypot(X[:n_grid, 0], X[:n_grid, 1])
    np.testing.assert_allclose(r[:m], r_i, rtol=1e-15)
    np.testing.assert_allclose(r[-m:], r_o, rtol=1e-15)
    theta = np.arctan2(X[:m, 1], X[:m, 0]) % (2 * np.pi)
    np.testing.assert_allclose(theta[0], 0.7, rtol=1e-14)
    # the triangles tile the ring between the inscribed polygons exactly
    sector = angle / n_circ
    polygon = 0.5 * n_circ * np.sin(sector) * (r_o**2 - r_i**2)
    assert A[:, 2].sum() == pytest.approx(polygon, rel=1e-13)


def test_annulus_area_converges_quadratically():
    r_i, r_o, angle = 0.5, 2.0, 2.5
    exact = 0.5 * angle * (r_o**2 - r_i**2)
    sizes = [8, 16, 32, 64]
    errors = [abs(facet_area_vectors(*shell_mesh.annulus(r_i, r_o, n, 2, angle=angle))[:, 2].sum() - exact)
              for n in sizes]
    rate = convergence_rate(sizes, errors)
    assert rate == pytest.approx(2.0, abs=0.05), f"area converges at rate {rate:.3f}, expected 2"


@pytest.mark.parametrize("pattern", shell_mesh.PATTERNS)
def test_spherical_zone_orientation_radii_counts_and_area_convergence(pattern):
    R, phi_1, phi_2 = 1.5, 0.35, 1.9
    exact = 2 * np.pi * R**2 * (np.cos(phi_1) - np.cos(phi_2))
    sizes, errors = [8, 16, 32, 64], []
    for n in sizes:
        X, T = shell_mesh.spherical_zone(R, phi_1, phi_2, 2 * n, n, pattern=pattern)
        assert T.shape == ((4 if pattern == "cross" else 2) * 2 * n * n, 3)
        assert X.shape == (2 * n * (n + 1) + (2 * n * n if pattern == "cross" else 0), 3)
        assert shell_mesh.orientation(T).consistent
        np.testing.assert_allclose(np.linalg.norm(X, axis=1), R, rtol=1e-14)
        polar = np.arccos(X[:2 * n * (n + 1), 2] / R)
        np.testing.assert_allclose([polar.min(), polar.max()], [phi_1, phi_2], rtol=1e-12)
        A = facet_area_vectors(X, T)
        assert np.all(np.einsum("ij,ij->i", A, X[T].mean(axis=1)) > 0.0), "normals must point outwards"
        errors.append(abs(np.linalg.norm(A, axis=1).sum() - exact))
        # the hole: its rim is a boundary of n_circ edges
        assert len(shell_mesh.boundary_edges(T)) == 4 * n
    rate = convergence_rate(sizes, errors)
    assert rate == pytest.approx(2.0, abs=0.1), f"area converges at rate {rate:.3f}, expected 2"


def test_spherical_zone_sector_and_bad_input():
    R, angle = 2.0, 1.3
    X, T = shell_mesh.spherical_zone(R, 0.5, 1.0, 6, 2, angle=angle, angle_start=-0.4)
    assert X.shape == (7 * 3, 3) and shell_mesh.orientation(T).consistent
    psi = np.arctan2(X[:, 1], X[:, 0])
    np.testing.assert_allclose([psi.min(), psi.max()], [-0.4, -0.4 + angle], rtol=1e-13)
    with pytest.raises(ValueError, match="0 < polar_start < polar_end < pi"):
        shell_mesh.spherical_zone(R, 1.0, 0.5, 6, 2)
    with pytest.raises(ValueError, match="0 < polar_start < polar_end < pi"):
        shell_mesh.spherical_zone(R, 0.0, 0.5, 6, 2)
    with pytest.raises(ValueError, match="n_polar must be a whole number"):
        shell_mesh.spherical_zone(R, 0.2, 0.5, 6, 0)
    with pytest.raises(ValueError, match="annulus: inner_radius 2.0 m must be smaller"):
        shell_mesh.annulus(2.0, 1.0, 6, 2)
    with pytest.raises(ValueError, match="closed surface needs n_circ >= 3"):
        shell_mesh.annulus(1.0, 2.0, 2, 2)


def test_cylinder_part_between_any_generators_and_circles():
    R, L, angle = 1.2, 0.9, 2.0
    X, T = shell_mesh.cylinder(R, L, angle, 10, 3, axis="z", angle_start=-2.5, axial_start=4.0)
    assert X.shape == (11 * 4, 3) and shell_mesh.orientation(T).consistent
    np.testing.assert_allclose(np.hypot(X[:, 0], X[:, 1]), R, rtol=1e-15)
    np.testing.assert_allclose([X[:, 2].min(), X[:, 2].max()], [4.0, 4.9], rtol=1e-15)
    theta = np.arctan2(X[:11, 1], X[:11, 0])
    np.testing.assert_allclose(theta, np.linspace(-2.5, -0.5, 11), rtol=1e-13)
    A = facet_area_vectors(X, T)
    centroid = X[T].mean(axis=1)
    assert np.all(A[:, 0] * centroid[:, 0] + A[:, 1] * centroid[:, 1] > 0.0), "normals must point outwards"
    chord = 10 * 2 * R * np.sin(angle / 20)                                         # the inscribed polygon
    assert np.linalg.norm(A, axis=1).sum() == pytest.approx(chord * L, rel=1e-13)
