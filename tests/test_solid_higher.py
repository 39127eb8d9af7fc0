"""20-node hexahedra and 6- and 15-node wedges (issue 32, item 1): shape functions, rules, patch
tests, rigid-body modes, mass, a hex20 cantilever against beam theory, box-beam frequencies against
the converged tet10 reference, VTU/XDMF files and pictures, and the Abaqus and Gmsh node orders.

Independent values: the Kronecker property and the completeness of the shape functions, exact
integrals of monomials, fields that solve elasticity exactly (a uniform strain, pure bending), the
cube's volume, Timoshenko's cantilever, the Richardson-extrapolated tet10 frequencies of
``validation/solid_cantilever_modes.py``, the brick's own surface area and volume, and the node
positions written into hand-made mesh files.
"""
from __future__ import annotations

import importlib.util
from math import factorial
from pathlib import Path

import meshio
import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.elements.solid import STIFFNESS_DEGREE, Solid, elasticity_matrix
from flexmb.elements.solid_shapes import (HEX20_EDGES, NODE_COORDINATES, WEDGE15_EDGES, quadrature,
                                          shape_functions, triangle_rule, wedge_rule)
from flexmb.io.export import write_vtu_series, write_xdmf
from flexmb.io.solid_faces import boundary_faces
from flexmb.io.solid_mesh import box, read_solid_mesh, with_edge_nodes
from flexmb.results import ModelLayout
from flexmb.viz.geometry import centrelines, structure_surface
from test_solid import A_STRAIN, NU, bending   # the linear solids' patch fields

KINDS = ("hex20", "wedge6", "wedge15")
LINEAR = {"hex20": "hex8", "wedge6": "wedge6", "wedge15": "wedge6"}     # the cells the mesh is made of
EDGES = {"hex20": HEX20_EDGES, "wedge15": WEDGE15_EDGES}
CELL_TYPES = {"hex20": "hexahedron20", "wedge6": "wedge", "wedge15": "wedge15"}
E, RHO = 200e9, 7800.0
REPO = Path(__file__).resolve().parents[1]


def random_points(kind: str, n: int, seed: int = 0) -> np.ndarray:
    """n points (n, 3) inside the reference cell of ``kind``."""
    rng = np.random.default_rng(seed)
    if kind.startswith("hex"):
        return rng.uniform(-1.0, 1.0, (n, 3))
    tri = rng.uniform(0.0, 1.0, (n, 2))
    tri[tri.sum(axis=1) > 1] = 1.0 - tri[tri.sum(axis=1) > 1]                # fold into the triangle
    return np.column_stack([tri, rng.uniform(-1.0, 1.0, n)])


def distorted_box(kind: str, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The unit cube in 3 x 3 x 3 cells of ``kind`` with its interior grid points moved at random by
    up to 0.05 (the boundary stays the cube; the edges stay straight, mid-edge nodes in the middle).
    Returns coordinates, cells and the mask of boundary nodes."""
    x, cells = box(1.0, 1.0, 1.0, 3, 3, 3, LINEAR[kind])
    inside = np.all((x > 1e-9) & (x < 1 - 1e-9), axis=1)
    x[inside] += np.random.default_rng(seed).uniform(-0.05, 0.05, (inside.sum(), 3))
    if kind in EDGES:
        x, cells = with_edge_nodes(x, cells, EDGES[kind])
    boundary = np.any((x < 1e-9) | (x > 1 - 1e-9), axis=1)
    return x, cells, boundary


def affine_box(kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cube in 3 x 3 x 3 cells of unequal sizes (grid lines at 0, 0.25, 0.7, 1 in each direction),
    then sheared and stretched by one affine map: every cell an affine image of the reference cell.
    Returns coordinates, cells and the boundary mask."""
    x, cells = box(1.0, 1.0, 1.0, 3, 3, 3, kind)
    boundary = np.any((x < 1e-9) | (x > 1 - 1e-9), axis=1)
    graded = np.interp(x, [0.0, 1 / 3, 2 / 3, 1.0], [0.0, 0.25, 0.7, 1.0])     # linear within each cell
    A = np.array([[1.2, 0.3, -0.1], [0.0, 0.9, 0.2], [0.1, 0.0, 1.1]])          # det > 0
    return graded @ A.T + [0.4, -0.2, 0.1], cells, boundary


def global_stiffness(group: Solid, x: np.ndarray) -> np.ndarray:
    """Dense K (3 n, 3 n) of one group, nodes node-major."""
    dofs = (3 * group.connectivity[:, :, None] + np.arange(3)).reshape(len(group.connectivity), -1)
    K = np.zeros((3 * len(x), 3 * len(x)))
    for d, k in zip(dofs, group.stiffness_matrix(x[group.connectivity])):
        K[np.ix_(d, d)] += k
    return K


def patch_error(kind: str, mesh, field) -> float:
    """Largest relative error of the interior displacements solved with the boundary ones set to
    ``field`` (no body force: the field must satisfy equilibrium)."""
    x, cells, boundary = mesh(kind)
    K = global_stiffness(Solid(cells, E, NU, kind=kind), x)
    exact = field(x).ravel()
    fixed = np.repeat(boundary, 3)
    u = exact.copy()
    u[~fixed] = np.linalg.solve(K[np.ix_(~fixed, ~fixed)], -K[np.ix_(~fixed, fixed)] @ exact[fixed])
    return float(np.abs(u - exact).max() / np.abs(exact).max())


# ------------------------------------------------------------------ shape functions and rules
@pytest.mark.parametrize("kind", KINDS)
def test_shape_functions(kind):
    nodes = NODE_COORDINATES[kind]
    N, _ = shape_functions(kind, nodes)
    assert np.abs(N - np.eye(len(nodes))).max() < 1e-14, f"{kind}: N_a(x_b) is not the Kronecker delta"
    p = random_points(kind, 20)
    N, dN = shape_functions(kind, p)
    assert np.abs(N.sum(axis=1) - 1).max() < 1e-14 and np.abs(dN.sum(axis=1)).max() < 1e-13
    # the element reproduces its reference coordinates and, quadratic ones, every quadratic polynomial
    assert np.abs(N @ nodes - p).max() < 1e-14
    np.testing.assert_allclose(np.einsum("pak,ai->pik", dN, nodes), np.broadcast_to(np.eye(3), (20, 3, 3)),
                               rtol=0, atol=1e-13)
    if kind != "wedge6":
        q = lambda y: y[:, 0] ** 2 - 2 * y[:, 1] * y[:, 2] + y[:, 2] ** 2 + y[:, 0] * y[:, 1]  # noqa: E731
        assert np.abs(N @ q(nodes) - q(p)).max() < 1e-13, f"{kind} misses a quadratic polynomial"
    h = 1e-6
    fd = np.stack([(shape_functions(kind, p + h * e)[0] - shape_functions(kind, p - h * e)[0]) / (2 * h)
                   for e in np.eye(3)], axis=2)
    assert np.abs(fd - dN).max() < 1e-8, f"{kind}: dN/dxi off the central differences by {np.abs(fd - dN).max():.2e}"


@pytest.mark.parametrize("degree", range(1, 8))
def test_triangle_and_wedge_rules_are_exact(degree):
    """int xi^a eta^b over the unit triangle = a! b! / (a + b + 2)!, times int zeta^c over [-1, 1]."""
    tri, w_tri = triangle_rule(degree)
    points, weights = wedge_rule(degree)
    assert np.all(w_tri > 0) and np.all(weights > 0)
    for a in range(degree + 1):
        for b in range(degree + 1 - a):
            exact = factorial(a) * factorial(b) / factorial(a + b + 2)
            assert w_tri @ (tri[:, 0] ** a * tri[:, 1] ** b) == pytest.approx(exact, rel=1e-13, abs=1e-16)
            for c in range(degree + 1):
                along = 2.0 / (c + 1) if c % 2 == 0 else 0.0
                value = weights @ (points[:, 0] ** a * points[:, 1] ** b * points[:, 2] ** c)
                assert value == pytest.approx(exact * along, rel=1e-13, abs=1e-15)
    assert len(quadrature("hex20", 4)[1]) == 27                       # 3 x 3 x 3 Gauss for the hex20


# ------------------------------------------------------------------ patch tests
@pytest.mark.parametrize("kind", KINDS)
def test_constant_strain_patch(kind):
    err = patch_error(kind, distorted_box, lambda x: x @ A_STRAIN.T)
    assert err < 1e-10, f"{kind}: constant-strain patch missed by {err:.2e} (relative)"
    x, cells, _ = distorted_box(kind)
    u = (x @ A_STRAIN.T)[cells].reshape(len(cells), -1)
    sigma = Solid(cells, E, NU, kind=kind).point_stresses(x[cells], u)
    eps = 0.5 * (A_STRAIN + A_STRAIN.T)
    expected = elasticity_matrix(np.array([E]), np.array([NU]))[0] @ np.r_[np.diag(eps), 2 * eps[1, 2],
                                                                         2 * eps[0, 2], 2 * eps[0, 1]]
    assert np.abs(sigma - expected).max() < 1e-9 * np.abs(expected).max()


def stiffness_point_z(kind: str, x: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """z (n_el, n_q) of the stiffness quadrature points of the cells, m."""
    N, _ = shape_functions(kind, quadrature(kind, STIFFNESS_DEGREE[kind])[0])
    return np.einsum("qa,ea->eq", N, x[cells][:, :, 2])


@pytest.mark.parametrize("kind, linear", [("hex20", "hex8"), ("wedge15", "wedge6")])
def test_linear_strain_patch(kind, linear):
    """Pure bending (a quadratic displacement field) is exact on affine cells of the quadratic
    elements, displacements and stresses; the linear elements' stresses miss it (the test can fail;
    their nodal displacements come out right or nearly so on this small patch: hex8 exactly, wedge6
    to 3e-4)."""
    for field in (bending, lambda x: bending(x[:, [2, 0, 1]])[:, [1, 2, 0]]):     # about y, then about x
        err = patch_error(kind, affine_box, field)
        assert err < 1e-10, f"{kind}: linear-strain patch missed by {err:.2e} (relative)"
    # the stresses of the nodal values: sigma_xx = -E kappa z, the rest zero, at every point
    for k, expected_exact in ((kind, True), (linear, False)):
        x, cells, _ = affine_box(k)
        sigma = Solid(cells, E, NU, kind=k).point_stresses(x[cells], bending(x)[cells].reshape(len(cells), -1))
        exact = np.zeros_like(sigma)
        exact[..., 0] = -E * 1e-3 * stiffness_point_z(k, x, cells)
        err = np.abs(sigma - exact).max() / np.abs(exact).max()
        assert (err < 1e-9) == expected_exact, f"{k}: stresses of pure bending off by {err:.2e} (relative)"


def mixed_patch(field) -> float:
    """Relative patch error of a cube of 3 x 3 x 3 cells, hex20 for x < 1/3 and two wedge15 per cell
    beyond, sharing the mid-edge nodes of their common faces, graded and sheared like
    :func:`affine_box`."""
    x, hexes = box(1.0, 1.0, 1.0, 3, 3, 3, "hex8")
    left = x[hexes].mean(axis=1)[:, 0] < 1 / 3
    wedges = np.concatenate([hexes[~left][:, [0, 1, 2, 4, 5, 6]], hexes[~left][:, [0, 2, 3, 4, 6, 7]]])
    pairs = np.concatenate([hexes[left][:, HEX20_EDGES].reshape(-1, 2), wedges[:, WEDGE15_EDGES].reshape(-1, 2)])
    unique, inverse = np.unique(np.sort(pairs, axis=1), axis=0, return_inverse=True)
    new = len(x) + inverse.ravel()
    n_hex = left.sum() * len(HEX20_EDGES)
    hex20 = np.hstack([hexes[left], new[:n_hex].reshape(-1, 12)])
    wedge15 = np.hstack([wedges, new[n_hex:].reshape(-1, 9)])
    x = np.vstack([x, x[unique].mean(axis=1)])
    boundary = np.any((x < 1e-9) | (x > 1 - 1e-9), axis=1)
    x = np.interp(x, [0.0, 1 / 3, 2 / 3, 1.0], [0.0, 0.25, 0.7, 1.0]) @ np.array([[1.2, 0.3, -0.1], [0.0, 0.9, 0.2],
                                                                                 [0.1, 0.0, 1.1]]).T
    K = global_stiffness(Solid(hex20, E, NU), x) + global_stiffness(Solid(wedge15, E, NU), x)
    exact = field(x).ravel()
    fixed = np.repeat(boundary, 3)
    u = exact.copy()
    u[~fixed] = np.linalg.solve(K[np.ix_(~fixed, ~fixed)], -K[np.ix_(~fixed, fixed)] @ exact[fixed])
    return float(np.abs(u - exact).max() / np.abs(exact).max())


def test_hex20_and_wedge15_meshed_together():
    """The hex20's faces and the wedge15's quadrilateral faces carry the same quadratic field: one
    mesh of both passes the constant- and the linear-strain patch test."""
    for name, field in (("constant strain", lambda x: x @ A_STRAIN.T), ("pure bending", bending)):
        err = mixed_patch(field)
        assert err < 1e-10, f"hex20 + wedge15, {name}: patch missed by {err:.2e} (relative)"


# ------------------------------------------------------------------ rigid motion, mass
@pytest.mark.parametrize("kind", KINDS)
def test_rigid_motion_gives_no_force(kind):
    x, cells, _ = distorted_box(kind)
    K = global_stiffness(Solid(cells, E, NU, kind=kind), x)
    scale = np.abs(K).max()
    assert np.abs(K - K.T).max() < 1e-12 * scale
    omega = np.array([0.3, -0.2, 0.5])
    for u in (np.tile([1.0, -2.0, 0.5], len(x)), np.cross(omega, x - 0.4).ravel()):
        assert np.abs(K @ u).max() < 1e-12 * scale * np.abs(u).max()
    # one element, fully integrated: the six rigid-body modes and no other zero-energy mode
    single = Solid(cells[:1], E, NU, kind=kind).stiffness_matrix(x[cells[:1]])[0]
    values = np.linalg.eigvalsh(single)
    assert np.sum(values < 1e-10 * values.max()) == 6, f"{kind}: {np.sum(values < 1e-10 * values.max())} zero modes"


@pytest.mark.parametrize("kind", KINDS)
def test_mass_sums_to_rho_v(kind):
    x, cells, _ = distorted_box(kind)
    group = Solid(cells, E, NU, rho=RHO, kind=kind)
    assert group.volumes(x[cells]).sum() == pytest.approx(1.0, rel=1e-12)   # the unit cube
    M = group.mass_matrix(x[cells])
    for d in range(3):
        Md = M[:, d::3, d::3]
        assert np.sum(Md) == pytest.approx(RHO, rel=1e-12)
        first = np.einsum("eab,eb->", Md, x[cells][:, :, 1])
        assert first == pytest.approx(RHO * 0.5, rel=1e-12)               # centroid y = 0.5
    assert np.all(M[:, 0::3, 1::3] == 0.0)


# ------------------------------------------------------------------ a cantilever, box-beam modes
L, B, H, P = 1.0, 0.05, 0.05, 1000.0


def tip_shares(x: np.ndarray, cells: np.ndarray, kind: str) -> np.ndarray:
    """Each node's share (n_nodes,) of a uniform traction on the end face x = L of a box of hex8 or
    hex20 cells: consistent nodal weights (3 x 3 Gauss on each face), summing to 1."""
    g, w = np.polynomial.legendre.leggauss(3)
    face = np.array([[1.0, a, b] for a in g for b in g])                  # xi = +1: the cell's face at larger x
    N, dN = shape_functions(kind, face)
    f = np.zeros(len(x))
    for cell in cells[np.abs(x[cells][:, :, 0].max(axis=1) - L) < 1e-12]:
        J = np.einsum("ai,qak->qik", x[cell], dN)                          # (9, 3, 3)
        dA = np.linalg.norm(np.cross(J[:, :, 1], J[:, :, 2]), axis=1)
        f[cell] += (np.outer(w, w).ravel() * dA) @ N
    return f / f.sum()


def clamped_beam(kind: str, n: tuple[int, int, int], nu: float, load: str, resultant: float
                 ) -> tuple[fm.Model, np.ndarray]:
    """The beam L x B x H of ``kind`` cells clamped at x = 0, a force ``resultant`` (N) along ``load``
    spread uniformly over the end x = L; returns the model and the coordinates."""
    x, cells = box(L, B, H, *n, kind)
    model = fm.Model(dim=3)
    model.add_nodes(x)
    model.add_solid(cells, E=E, nu=nu)
    for i in np.flatnonzero(x[:, 0] < 1e-12):
        model.fix(int(i))
    f = resultant * tip_shares(x, cells, kind)
    for i in np.flatnonzero(f):
        model.add_load(int(i), load, float(f[i]))
    return model, x


def tip_deflection(kind: str, n: tuple[int, int, int]) -> float:
    """Mean z-deflection of the tip face of the cantilever (L/H = 20, nu = 0) under a uniform shear
    traction of resultant P on it, m."""
    model, x = clamped_beam(kind, n, 0.0, "uz", P)
    u = fm.linear_static(model).u[fm.Assembly(model).dofs.translations()]
    return float(u[np.abs(x[:, 0] - L) < 1e-12, 2].mean())


def test_hex20_cantilever_tip_deflection():
    """10 x 1 x 1 hex20: within 0.5 % of Timoshenko (shear adds 0.15 % to Euler-Bernoulli here; with
    nu = 0 Cowper's kappa is 5/6); the hex8 on the same mesh locks."""
    I, G = B * H**3 / 12, E / 2
    reference = P * L**3 / (3 * E * I) + P * L / (5.0 / 6.0 * G * B * H)
    w = tip_deflection("hex20", (10, 1, 1))
    assert abs(w / reference - 1) < 5e-3, f"hex20 tip deflection {w:.6e} m vs Timoshenko {reference:.6e} m"
    locked = tip_deflection("hex8", (10, 1, 1))
    assert locked < 0.5 * reference, f"hex8 {locked:.3e} m: expected shear locking, Timoshenko {reference:.3e} m"


def test_hex20_column_buckling():
    """The geometric stiffness of the hex20: the clamped-free column under end compression within 2 %
    of Euler's load on 10 x 1 x 1 cells (measured 2026-11-29: +1.04 %; +0.46 % on 20 x 1 x 1)."""
    euler = np.pi**2 * E * B * H**3 / 12 / (4 * L**2)
    critical = fm.linear_buckling(clamped_beam("hex20", (10, 1, 1), 0.3, "ux", -1.0)[0], 1).load_factors[0]
    assert abs(critical / euler - 1) < 0.02, f"critical load {critical:.5g} N vs Euler {euler:.5g} N"


def load_case():
    spec = importlib.util.spec_from_file_location("solid_cantilever_modes_case",
                                                  REPO / "validation" / "solid_cantilever_modes.py")
    case = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(case)
    return case


@pytest.mark.parametrize("kind", ["hex20", "wedge15"])
def test_box_beam_frequencies_against_the_tet10_reference(kind):
    """The clamped box beam of the validation case in 20 x 4 x 2 cells: its first five frequencies
    within 0.5 % of the Richardson-extrapolated tet10 reference (measured 2026-11-29: hex20 0.20 ...
    0.42 %, wedge15 0.23 ... 0.45 %, the torsion mode last) and above it (a conforming element with
    consistent mass converges from above; 1e-3 allows for the reference's own error)."""
    case = load_case()
    f = fm.natural_modes(case.build(kind, (20, 4, 2)), case.N_MODES).frequencies_hz
    error = f / case.REFERENCE_HZ - 1
    assert np.abs(error).max() < 5e-3, f"{kind}: {f} Hz vs reference {case.REFERENCE_HZ} Hz ({error})"
    assert error.min() > -1e-3, f"{kind}: below the reference by {-error.min():.2%}"


# ------------------------------------------------------------------ files and pictures
def bricks(kinds: tuple[str, ...]) -> fm.Model:
    """Bricks side by side along y, one per kind, each clamped at x = 0, under gravity."""
    model = fm.Model(dim=3)
    for k, kind in enumerate(kinds):
        x, cells = box(0.3, 0.1, 0.05, 3, 1, 1, kind)
        nodes = model.add_nodes(x + [0.0, 0.2 * k, 0.0])
        model.add_solid(nodes[cells], E=2e11, nu=0.3, rho=7850.0, name=kind)
        for node in nodes[x[:, 0] < 1e-12]:
            model.fix(int(node))
    model.set_gravity([0.0, 0.0, -9.81])
    return model


def moved(result: fm.TimeHistory) -> np.ndarray:
    """The last step's nodal displacements (n_nodes, 3), m, checked non-zero."""
    u = np.asarray(result.u[-1])[result.layout.translations()]
    assert np.abs(u).max() > 1e-12
    return u


def test_vtu_holds_the_new_cells(tmp_path):
    """One VTU with the three kinds, read back with meshio: cell types, node order, displacements,
    and positive volumes of the cells as read."""
    result = fm.integrate(bricks(KINDS), 1e-4, 3e-4, progress=False)
    u = moved(result)
    mesh = meshio.read(sorted(write_vtu_series(result, tmp_path).parent.glob("*.vtu"))[-1])
    assert [c.type for c in mesh.cells] == [CELL_TYPES[kind] for kind in KINDS]
    for block, group in zip(mesh.cells, result.layout.groups):
        np.testing.assert_array_equal(block.data, group.connectivity)
        X = result.layout.coordinates[block.data]
        assert Solid(block.data, E, NU, kind=group.solid_kind).volumes(X).min() > 0
    np.testing.assert_allclose(mesh.point_data["displacement"], u, rtol=0, atol=1e-12 * np.abs(u).max())


@pytest.mark.parametrize("kind", KINDS)
def test_xdmf_holds_the_new_cells(kind, tmp_path):
    """One kind per file: meshio's XDMF reader cannot read quadratic cells in a Mixed topology."""
    result = fm.integrate(bricks((kind,)), 1e-4, 2e-4, progress=False)
    u = moved(result)
    with meshio.xdmf.TimeSeriesReader(write_xdmf(result, tmp_path / "r.xdmf")) as reader:
        _, cells = reader.read_points_cells()
        _, point_data, _ = reader.read_data(reader.num_steps - 1)
    assert [c.type for c in cells] == [CELL_TYPES[kind]]
    np.testing.assert_array_equal(cells[0].data, result.layout.groups[0].connectivity)
    np.testing.assert_allclose(point_data["displacement"], u, rtol=0, atol=1e-12 * np.abs(u).max())


@pytest.mark.parametrize("kind, n_faces, n_triangles", [("hex20", 24, 48), ("wedge6", 32, 48), ("wedge15", 32, 48)])
def test_picture_faces(kind, n_faces, n_triangles):
    """2 x 2 x 2 cells: a hex20 brick shows 4 quads per side; a wedge brick 4 quads on each side
    face and 8 triangles on the top and the bottom. The drawn triangles cover the brick's surface
    outwards (they enclose its volume), and each wedge outline runs through its own face's corners."""
    LX, LY, LZ = 0.4, 0.1, 0.05
    X, cells = box(LX, LY, LZ, 2, 2, 2, kind)
    faces, _, element = boundary_faces([(kind, cells)])
    assert len(faces) == n_faces
    assert all(set(f[f >= 0]) <= set(cells[e]) for f, e in zip(faces, element))
    model = fm.Model(dim=3)
    model.add_nodes(X + [1e4, -2e4, 3e4])                                  # far from the origin
    model.add_solid(cells, E=1e9, nu=0.3, name="brick")
    layout = ModelLayout.from_assembly(fm.Assembly(model))
    surface = structure_surface(layout, np.zeros(layout.n_dof))
    faces3 = surface.faces.reshape(-1, 4)
    assert len(faces3) == n_triangles and np.all(faces3[:, 0] == 3)
    tri = surface.points[faces3[:, 1:]] - [1e4, -2e4, 3e4]
    area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1).sum()
    volume = np.einsum("ti,ti->", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])) / 6.0
    assert area == pytest.approx(2.0 * (LX * LY + LY * LZ + LZ * LX), rel=1e-9)
    assert volume == pytest.approx(LX * LY * LZ, rel=1e-9), f"enclosed volume {volume} (negative: inward)"
    outline = centrelines(layout, np.zeros(layout.n_dof))[0]               # (n_f, 5, 3)
    assert outline.shape == (n_faces, 5, 3)
    corners = np.where(faces >= 0, faces, faces[:, :1])
    np.testing.assert_array_equal(outline[:, :4], layout.coordinates[corners])


# ------------------------------------------------------------------ node orders of mesh files
def abaqus_file(path: Path) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """An Abaqus input with one C3D20R brick, one C3D15 and one C3D6 wedge (nodes numbered in the
    Abaqus element library's order: corners, then the mid-edge nodes of the bottom edges, the top
    edges and the upright edges); returns the points and each set's cells (0-based, written order)."""
    hex_corners = (NODE_COORDINATES["hex8"] + 1) / 2                        # the unit cube
    wedge_corners = (NODE_COORDINATES["wedge6"] + [0, 0, 1]) / [1, 1, 2] + [2, 0, 0]
    abaqus_hex_edges = [(1, 2), (2, 3), (3, 4), (4, 1), (5, 6), (6, 7), (7, 8), (8, 5), (1, 5), (2, 6), (3, 7),
                        (4, 8)]
    abaqus_wedge_edges = [(1, 2), (2, 3), (3, 1), (4, 5), (5, 6), (6, 4), (1, 4), (2, 5), (3, 6)]
    points, sets = [], {}
    for name, corners, edges in (("brick", hex_corners, abaqus_hex_edges),
                                 ("wedge15", wedge_corners, abaqus_wedge_edges),
                                 ("wedge6", wedge_corners + [0, 2, 0], [])):
        start = len(points)
        points += list(corners) + [0.5 * (corners[a - 1] + corners[b - 1]) for a, b in edges]
        sets[name] = np.arange(start, len(points))[None]
    lines = ["*NODE"] + [f"{i + 1}, {p[0]:.6f}, {p[1]:.6f}, {p[2]:.6f}" for i, p in enumerate(points)]
    for k, (name, etype) in enumerate((("brick", "C3D20R"), ("wedge15", "C3D15"), ("wedge6", "C3D6"))):
        ids = [str(i + 1) for i in sets[name][0]]
        lines += [f"*ELEMENT, TYPE={etype}, ELSET={name}", ", ".join([str(k + 1)] + ids[:15])]
        if len(ids) > 15:
            lines.append(", ".join(ids[15:]))                               # Abaqus: 16 entries a line
    path.write_text("\n".join(lines) + "\n")
    return np.array(points), sets


def test_read_abaqus_quadratic_bricks_and_wedges(tmp_path):
    points, sets = abaqus_file(tmp_path / "parts.inp")
    mesh = read_solid_mesh(tmp_path / "parts.inp")
    kinds = {"brick": "hex20", "wedge15": "wedge15", "wedge6": "wedge6"}
    assert {name: kind for name, (kind, _) in mesh.blocks.items()} == kinds
    for name, kind in kinds.items():
        cells = mesh.blocks[name][1]
        np.testing.assert_array_equal(cells, sets[name])                  # meshio keeps Abaqus's order
        p = mesh.points[cells[0]]
        if kind in EDGES:                                                  # mid-edge nodes on VTK's edges
            n_corners = cells.shape[1] - len(EDGES[kind])
            np.testing.assert_allclose(p[n_corners:], p[EDGES[kind]].mean(axis=1), rtol=0, atol=1e-12)
        volume = Solid(cells, E, NU, kind=kind).volumes(p[None])[0]          # > 0: the base turns as ours
        assert volume == pytest.approx(1.0 if kind == "hex20" else 0.5, rel=1e-12)


GMSH_EDGES_HEX20 = [(0, 1), (0, 3), (0, 4), (1, 2), (1, 5), (2, 3), (2, 6), (3, 7), (4, 5), (4, 7), (5, 6), (6, 7)]


def test_read_gmsh_hex20_in_vtk_order(tmp_path):
    """Gmsh numbers the hex20's mid-edge nodes edge (0,1), (0,3), (0,4), (1,2), ... (Gmsh manual,
    node ordering); meshio's reader turns them into VTK's order."""
    corners = (NODE_COORDINATES["hex8"] + 1) / 2 * [2.0, 1.0, 0.5]
    points = np.vstack([corners, [0.5 * (corners[a] + corners[b]) for a, b in GMSH_EDGES_HEX20]])
    nodes = "\n".join(f"{i + 1} {p[0]} {p[1]} {p[2]}" for i, p in enumerate(points))
    text = (f"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n1\n3 5 \"block\"\n$EndPhysicalNames\n"
            f"$Nodes\n20\n{nodes}\n$EndNodes\n$Elements\n1\n1 17 2 5 1 "
            + " ".join(str(i + 1) for i in range(20)) + "\n$EndElements\n")
    (tmp_path / "block.msh").write_text(text)
    kind, cells = read_solid_mesh(tmp_path / "block.msh").blocks["block"]
    assert kind == "hex20"
    p = points[cells[0]]
    np.testing.assert_allclose(p[8:], p[HEX20_EDGES].mean(axis=1), rtol=0, atol=1e-12)
    assert Solid(cells, E, NU).volumes(p[None])[0] == pytest.approx(1.0, rel=1e-12)


# ------------------------------------------------------------------ bad input
def test_inverted_wedge_and_unknown_kind():
    x, cells = box(1.0, 1.0, 1.0, 1, 1, 1, "wedge15")
    model = fm.Model(dim=3)
    model.add_nodes(x)
    flipped = cells.copy()
    flipped[:, :6] = cells[:, [0, 2, 1, 3, 5, 4]]                          # base clockwise seen from the top
    flipped[:, 6:] = cells[:, [8, 7, 6, 11, 10, 9, 12, 14, 13]]
    with pytest.raises(ModelError, match="'bad', element 0 .*det J"):
        model.add_solid(flipped, E=E, nu=NU, name="bad")
    with pytest.raises(ModelError, match="wedge15"):
        box(1.0, 1.0, 1.0, 1, 1, 1, "wedge18")
    group = model.add_solid(cells, E=E, nu=NU, rho=RHO)
    assert group.kind == "wedge15" and len(model.groups) == 1
