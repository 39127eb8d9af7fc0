"""Linear elastic solids (tet4, tet10, hex8): patch tests, rigid-body modes, mass, a solid cantilever
against beam theory, invariance, bad input and the mesh reader."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.cms import components_from_groups, craig_bampton, free_interface, synthesize
from flexmb.elements.solid import Solid, elasticity_matrix
from flexmb.elements.solid_shapes import TET10_EDGES
from flexmb.io.solid_mesh import box, quadratic_tetrahedra, read_solid_mesh

KINDS = ("tet4", "tet10", "hex8")
E, NU, RHO = 200e9, 0.3, 7800.0


def distorted_box(kind: str, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The unit cube in 3 x 3 x 3 cells with its interior grid points moved at random by up to 0.15
    of a cell (the boundary stays the cube); tet10 edges stay straight. Returns coordinates, cells
    and the mask of boundary nodes."""
    x, cells = box(1.0, 1.0, 1.0, 3, 3, 3, "tet4" if kind == "tet10" else kind)
    inside = np.all((x > 1e-9) & (x < 1 - 1e-9), axis=1)
    x[inside] += np.random.default_rng(seed).uniform(-0.05, 0.05, (inside.sum(), 3))
    if kind == "tet10":
        x, cells = quadratic_tetrahedra(x, cells)
    boundary = np.any((x < 1e-9) | (x > 1 - 1e-9), axis=1)
    return x, cells, boundary


def global_stiffness(group: Solid, x: np.ndarray) -> np.ndarray:
    """Dense K (3 n, 3 n) of one group, nodes node-major."""
    dofs = (3 * group.connectivity[:, :, None] + np.arange(3)).reshape(len(group.connectivity), -1)
    K = np.zeros((3 * len(x), 3 * len(x)))
    Ke = group.stiffness_matrix(x[group.connectivity])
    for d, k in zip(dofs, Ke):
        K[np.ix_(d, d)] += k
    return K


def patch_solution(kind: str, field) -> tuple[np.ndarray, np.ndarray]:
    """Interior displacements solved with the boundary ones set to ``field``: (computed, exact)."""
    x, cells, boundary = distorted_box(kind)
    K = global_stiffness(Solid(cells, E, NU), x)
    exact = field(x).ravel()
    fixed = np.repeat(boundary, 3)
    u = exact.copy()
    u[~fixed] = np.linalg.solve(K[np.ix_(~fixed, ~fixed)], -K[np.ix_(~fixed, fixed)] @ exact[fixed])
    return u, exact


A_STRAIN = np.array([[1.0, 0.4, -0.3], [0.2, -0.5, 0.6], [0.1, 0.7, 0.8]]) * 1e-3


def bending(x: np.ndarray, kappa: float = 1e-3) -> np.ndarray:
    """Pure bending about y (sigma_xx = -E kappa z, all else zero): equilibrium without body force,
    strains linear in z."""
    X, Y, Z = x.T
    return np.column_stack([-kappa * X * Z, NU * kappa * Y * Z, 0.5 * kappa * (X**2 + NU * (Z**2 - Y**2))])


@pytest.mark.parametrize("kind", KINDS)
def test_constant_strain_patch(kind):
    u, exact = patch_solution(kind, lambda x: x @ A_STRAIN.T)
    err = np.abs(u - exact).max() / np.abs(exact).max()
    assert err < 1e-10, f"{kind}: constant-strain patch missed by {err:.2e} (relative)"
    x, cells, _ = distorted_box(kind)
    group = Solid(cells, E, NU)
    sigma = group.point_stresses(x[cells], exact.reshape(-1, 3)[cells].reshape(len(cells), -1))
    eps = 0.5 * (A_STRAIN + A_STRAIN.T)
    expected = elasticity_matrix(np.array([E]), np.array([NU]))[0] @ np.r_[np.diag(eps), 2 * eps[1, 2],
                                                                         2 * eps[0, 2], 2 * eps[0, 1]]
    assert np.abs(sigma - expected).max() < 1e-9 * np.abs(expected).max()


def test_tet10_linear_strain_patch():
    u, exact = patch_solution("tet10", bending)
    err = np.abs(u - exact).max() / np.abs(exact).max()
    assert err < 1e-10, f"tet10: pure-bending (linear strain) patch missed by {err:.2e}"
    # the linear elements cannot represent it: the test can fail
    u4, exact4 = patch_solution("tet4", bending)
    assert np.abs(u4 - exact4).max() / np.abs(exact4).max() > 1e-3


@pytest.mark.parametrize("kind", KINDS)
def test_rigid_body_modes_strain_free(kind):
    x, cells, _ = distorted_box(kind)
    group = Solid(cells, E, NU)
    K = global_stiffness(group, x)
    scale = np.abs(K).max()
    omega = np.array([0.3, -0.2, 0.5])
    for u in (np.tile([1.0, -2.0, 0.5], len(x)), np.cross(omega, x - 0.4).ravel()):
        assert np.abs(K @ u).max() < 1e-12 * scale * np.abs(u).max()
    translation = np.tile([1e-3, -2e-3, 5e-4], (len(cells), cells.shape[1]))
    energy = group.strain_energy(x[cells], translation)
    stretched = group.strain_energy(x[cells], (x[cells] @ A_STRAIN.T).reshape(len(cells), -1))
    assert np.abs(energy).max() < 1e-12 * stretched.max()


@pytest.mark.parametrize("kind", KINDS)
def test_tangent_and_mid_point_force(kind):
    x, cells, _ = distorted_box(kind)
    group = Solid(cells[:5], E, NU)
    X = x[cells[:5]]
    rng = np.random.default_rng(3)
    u0, u1 = rng.normal(size=(2, 5, group.ndof)) * 1e-4
    q, K = group.force_and_tangent(X, u1)
    h = 1e-7
    fd = np.stack([(group.internal_force(X, u1 + h * e) - group.internal_force(X, u1 - h * e)) / (2 * h)
                   for e in np.eye(group.ndof)], axis=2)
    assert np.abs(fd - K).max() < 1e-6 * np.abs(K).max()
    assert np.allclose(K, np.swapaxes(K, 1, 2), rtol=0, atol=1e-12 * np.abs(K).max())
    work = np.einsum("ea,ea->e", group.mid_point_force(X, u0, u1), u1 - u0)
    change = group.strain_energy(X, u1) - group.strain_energy(X, u0)
    assert np.allclose(work, change, rtol=1e-10, atol=1e-12 * np.abs(change).max())


@pytest.mark.parametrize("kind", KINDS)
def test_mass_total_and_first_moments(kind):
    x, cells, _ = distorted_box(kind)
    group = Solid(cells, E, NU, rho=RHO)
    M = group.mass_matrix(x[cells])                                       # (n_el, 3nn, 3nn)
    ones = np.ones(cells.shape[1])
    for d in range(3):
        Md = M[:, d::3, d::3]
        assert np.sum(Md) == pytest.approx(RHO, rel=1e-12)               # the unit cube
        first = np.einsum("a,eab,eb->", ones, Md, x[cells][:, :, 0])
        assert first == pytest.approx(RHO * 0.5, rel=1e-12)             # centroid x = 0.5
    assert np.all(M[:, 0::3, 1::3] == 0.0)


# ------------------------------------------------------------------ cantilever
L, B, H, P = 1.0, 0.05, 0.05, 1000.0


def cantilever(n: int, m: int, nu: float = 0.0) -> tuple[fm.Model, np.ndarray, np.ndarray]:
    """Slender square cantilever (L/H = 20) of tet10, n cells along, m across, clamped at x = 0."""
    x, cells = box(L, B, H, n, m, m, "tet10")
    model = fm.Model(dim=3)
    model.add_nodes(x)
    model.add_solid(cells, E=E, nu=nu, rho=RHO)
    for i in np.flatnonzero(x[:, 0] < 1e-12):
        model.fix(int(i))
    return model, x, cells


def tip_shear(x: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Nodal forces (n_nodes,) of a uniform shear traction of resultant P on the tip face: on each
    6-node face triangle the mid-side nodes take A/3 of it and the corners nothing."""
    f = np.zeros(len(x))
    tip = np.abs(x[:, 0] - L) < 1e-12
    for face in ((0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)):
        mids = [4 + k for k, (i, j) in enumerate(TET10_EDGES) if i in face and j in face]
        for cell in cells[tip[cells[:, face]].all(axis=1)]:
            p = x[cell[list(face)]]
            f[cell[mids]] += 0.5 * np.linalg.norm(np.cross(p[1] - p[0], p[2] - p[0])) / 3.0
    return f * P / (B * H)


def test_cantilever_tip_deflection_timoshenko():
    model, x, cells = cantilever(20, 2)
    f = tip_shear(x, cells)
    for i in np.flatnonzero(f):
        model.add_load(int(i), "uz", float(f[i]))
    u = fm.linear_static(model).u[fm.Assembly(model).dofs.translations()]
    w = u[np.abs(x[:, 0] - L) < 1e-12, 2].mean()
    I, G, kappa = B * H**3 / 12, E / 2, 5.0 / 6.0                         # nu = 0: Cowper's kappa 5/6
    reference = P * L**3 / (3 * E * I) + P * L / (kappa * G * B * H)
    assert abs(w / reference - 1) < 5e-3, f"tip deflection {w:.6e} m vs {reference:.6e} m (Timoshenko)"


def test_cantilever_bending_frequency_converged():
    f = [fm.natural_modes(cantilever(n, m)[0], 2).frequencies_hz for n, m in ((10, 1), (20, 2))]
    # Richardson extrapolation with the rate h^4 of the eigenvalues of quadratic elements
    extrapolated = f[1] + (f[1] - f[0]) / 15.0
    err = np.abs(f[1] / extrapolated - 1).max()
    assert err < 1e-2, f"bending frequencies {f[1]} Hz vs extrapolated {extrapolated} Hz: {err:.2%}"
    # square section: the two bending frequencies agree; Timoshenko effects lower Euler-Bernoulli's
    assert abs(f[1][1] / f[1][0] - 1) < 1e-3
    euler = 1.875104**2 / (2 * np.pi) * np.sqrt(E * H**2 / 12 / (RHO * L**4))
    assert 0.99 * euler < extrapolated[0] < euler, f"{extrapolated[0]:.4f} Hz vs Euler-Bernoulli {euler:.4f} Hz"


@pytest.mark.parametrize("kind, cells_along", [("hex8", (6, 2, 1)), ("hex20", (4, 1, 1)), ("wedge15", (4, 1, 1))])
def test_frequencies_independent_of_placement(kind, cells_along):
    """A clamped strip turned about a skew axis and moved 3e4 m away: the same six frequencies
    (coordinates near 3e4 m carry 3e4 eps ~ 7e-12 m of round-off on cells of 0.1 m)."""
    x, cells = box(1.0, 0.2, 0.1, *cells_along, kind)
    angle = 0.7
    axis = np.array([1.0, 2.0, -0.5]) / np.linalg.norm([1.0, 2.0, -0.5])
    W = np.cross(np.eye(3), axis)                                         # rows e_i x a: W v = a x v
    R = np.eye(3) + np.sin(angle) * W + (1 - np.cos(angle)) * (W @ W)   # Rodrigues
    values = []
    for placed in (x, x @ R.T + [1e4, -2e4, 3e4]):
        model = fm.Model(dim=3)
        model.add_nodes(placed)
        model.add_solid(cells, E=E, nu=NU, rho=RHO)
        for i in np.flatnonzero(x[:, 0] < 1e-12):
            model.fix(int(i))
        values.append(fm.natural_modes(model, 6).frequencies_hz)
    assert np.allclose(values[1], values[0], rtol=1e-8), f"{values[1]} vs {values[0]} Hz"


def test_component_mode_synthesis_of_solids():
    x, cells = box(1.0, 0.05, 0.05, 8, 1, 1, "tet10")
    model = fm.Model(dim=3)
    model.add_nodes(x)
    middle = x[cells].mean(axis=1)[:, 0]
    model.add_solid(cells[middle < 0.5], E=E, nu=NU, rho=RHO, name="left")
    model.add_solid(cells[middle > 0.5], E=E, nu=NU, rho=RHO, name="right")
    for i in np.flatnonzero(x[:, 0] < 1e-12):
        model.fix(int(i))
    full = fm.natural_modes(model, 4).frequencies_hz
    comps = components_from_groups(model, {"left": ["left"], "right": ["right"]})
    for reduce in (lambda c: free_interface(c, n_elastic_modes=12), lambda c: craig_bampton(c, n_modes=12)):
        cms = synthesize([reduce(c) for c in comps]).modes(4).frequencies_hz
        assert np.abs(cms / full - 1).max() < 1e-4, f"{cms} vs full {full} Hz"


def test_column_buckling_with_geometric_stiffness():
    model, x, _ = cantilever(10, 1, nu=0.3)
    tip = np.flatnonzero(np.abs(x[:, 0] - L) < 1e-12)
    for i in tip:
        model.add_load(int(i), "ux", -1.0 / len(tip))
    critical = fm.linear_buckling(model, 1).load_factors[0]
    euler = np.pi**2 * E * B * H**3 / 12 / (4 * L**2)
    # a coarse mesh (10 x 1 x 1 cells): within 2 % of Euler's clamped-free column
    assert abs(critical / euler - 1) < 0.02, f"critical load {critical:.4g} N vs Euler {euler:.4g} N"


# ------------------------------------------------------------------ bad input
def test_bad_input():
    x, cells = box(1.0, 1.0, 1.0, 1, 1, 1, "hex8")
    model = fm.Model(dim=3)
    model.add_nodes(x)
    with pytest.raises(ModelError, match="4 \\(tet4\\), 10 \\(tet10\\), 8 \\(hex8\\), 20 \\(hex20\\)"):
        model.add_solid(cells[:, :5], E=E, nu=NU)
    with pytest.raises(ModelError, match="shape"):
        model.add_solid(cells, E=E, nu=NU, kind="tet10")
    inverted = cells[:, [0, 3, 2, 1, 4, 7, 6, 5]]
    with pytest.raises(ModelError, match="'bad', element 0 .*det J"):
        model.add_solid(np.vstack([inverted]), E=E, nu=NU, name="bad")
    for nu in (0.5, -1.0, 0.7):
        with pytest.raises(ModelError, match="Poisson's ratio nu of element 0"):
            model.add_solid(cells, E=E, nu=nu)
    with pytest.raises(ModelError, match="Young's modulus"):
        model.add_solid(cells, E=-1.0, nu=NU)
    assert not model.groups
    x4, tets = box(1.0, 1.0, 1.0, 1, 1, 1, "tet4")
    group = Solid(tets, E, NU, name="tets")
    flat = x4[tets].copy()
    flat[3, :, 2] = 0.0                                                   # element 3 squashed flat
    with pytest.raises(ModelError, match="'tets', element 3"):
        group.stiffness_matrix(flat)
    with pytest.raises(ModelError, match="3D"):
        fm.Model(dim=2).add_solid(tets, E=E, nu=NU)


# ------------------------------------------------------------------ reader
GMSH_TET10 = """$MeshFormat
2.2 0 8
$EndMeshFormat
$PhysicalNames
1
3 7 "steel"
$EndPhysicalNames
$Nodes
10
1 0 0 0
2 1 0 0
3 0 1 0
4 0 0 1
5 0.5 0 0
6 0.5 0.5 0
7 0 0.5 0
8 0 0 0.5
9 0 0.5 0.5
10 0.5 0 0.5
$EndNodes
$Elements
1
1 11 2 7 1 1 2 3 4 5 6 7 8 9 10
$EndElements
"""


def test_read_gmsh_tet10_in_vtk_order(tmp_path):
    path = tmp_path / "tet.msh"
    path.write_text(GMSH_TET10)          # Gmsh order: node 9 on edge (2, 3), node 10 on edge (1, 3)
    mesh = read_solid_mesh(path)
    kind, cells = mesh.blocks["steel"]
    assert kind == "tet10" and cells.shape == (1, 10)
    p = mesh.points[cells[0]]
    vtk_edges = np.array([[0, 1], [1, 2], [0, 2], [0, 3], [1, 3], [2, 3]])     # VTK_QUADRATIC_TETRA
    middles = 0.5 * (p[vtk_edges[:, 0]] + p[vtk_edges[:, 1]])
    assert np.allclose(p[4:], middles)
    group = Solid(cells, E, NU, rho=RHO)
    assert group.volumes(p[None]).sum() == pytest.approx(1 / 6, rel=1e-12)


def test_read_vtu_sets(tmp_path):
    import meshio
    x, hexes = box(2.0, 1.0, 1.0, 2, 1, 1, "hex8")
    path = tmp_path / "bar.vtu"
    meshio.write(path, meshio.Mesh(x, [("hexahedron", hexes)]))
    mesh = read_solid_mesh(path)
    assert list(mesh.blocks) == ["hex8"]
    assert np.array_equal(mesh.blocks["hex8"][1], hexes) and np.allclose(mesh.points, x)
    inp = tmp_path / "bar.inp"
    meshio.write(inp, meshio.Mesh(x, [("hexahedron", hexes)], cell_sets={"left": [np.array([0])],
                                                                           "right": [np.array([1])]}))
    mesh = read_solid_mesh(inp)
    assert np.array_equal(mesh.blocks["right"][1], hexes[1:]) and mesh.blocks["left"][0] == "hex8"


def test_design_variables_of_a_solid_group_give_exact_eigenvalue_sensitivities():
    """A solid group takes whole-group stiffness and density scales and its density as a section
    property: K and M are linear in them, so p / lambda d lambda / dp is exactly 1 for the
    stiffness scale and -1 for the density (Fox-Kapoor on a tet10 cantilever); its modulus is not
    a section property (the elasticity matrix holds E and nu), which says what it has."""
    from flexmb.cms import density_scale, eigen_sensitivity, section_property, stiffness_scale
    from flexmb.io.solid_mesh import box

    X, cells = box(1.0, 0.1, 0.1, 8, 1, 1, "tet10")
    m = fm.Model(dim=3)
    m.add_nodes(X)
    m.add_solid(cells, E=2.1e11, nu=0.3, rho=7850.0, name="blade")
    for node in np.flatnonzero(X[:, 0] == 0.0):
        m.fix(int(node), ["ux", "uy", "uz"])
    modes = fm.natural_modes(m, 4)
    s = eigen_sensitivity(modes, [stiffness_scale("blade"), density_scale("blade"), section_property("blade", "rho")])
    normalised = s.derivatives / s.eigenvalues[:, None]
    assert np.allclose(normalised, [[1.0, -1.0, -1.0]] * 4, rtol=0.0, atol=1e-9)
    with pytest.raises(fm.ModelError, match="Solid has rho"):
        eigen_sensitivity(modes, [section_property("blade", "E")])
