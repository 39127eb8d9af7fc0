"""The linear flat triangle (flexmb.elements.shell_linear): OPT/ANDES membrane with drilling + DKT plate.

Ranks and rigid modes, membrane and plate patch tests on an irregular patch, OPT in-plane bending
of a slender cantilever against beam theory (CST for contrast), and the plate convergence of a
simply supported and a clamped square plate under uniform load (Timoshenko & Woinowsky-Krieger).
The small global solves are done here with scipy, independently of the Model API.
"""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexmb.checks import ModelError
from flexmb.elements import shell_linear as sl

E_STEEL, NU, H = 210e9, 0.3, 0.01


# ---------------------------------------------------------------------------------------------
# helpers: rotation of the local 18x18 matrices to global axes and a small sparse assembly
# ---------------------------------------------------------------------------------------------
def global_element_matrices(coordinates, triangles, E, nu, h, membrane="opt"):
    """(n_el, 18, 18) stiffness in global axes, DOFs [ux uy uz rx ry rz] per node."""
    E_frames, xy, _ = sl.local_frames(coordinates[triangles])
    K_local = sl.linear_stiffness(xy, E, nu, h, membrane)
    rotation = np.zeros((len(triangles), 18, 18))                      # global <- local
    for block in range(6):
        rotation[:, 3 * block:3 * block + 3, 3 * block:3 * block + 3] = E_frames
    return np.einsum("eij,ejk,elk->eil", rotation, K_local, rotation)


def assemble(coordinates, triangles, E=E_STEEL, nu=NU, h=H, membrane="opt"):
    K_el = global_element_matrices(coordinates, triangles, E, nu, h, membrane)
    dofs = (6 * triangles[:, :, None] + np.arange(6)).reshape(len(triangles), 18)
    rows = np.repeat(dofs, 18, axis=1).ravel()
    cols = np.tile(dofs, (1, 18)).ravel()
    n = 6 * len(coordinates)
    return sp.csr_matrix((K_el.ravel(), (rows, cols)), shape=(n, n))


def solve(K, f, prescribed_dofs, prescribed_values):
    """Solve K d = f with d[prescribed] given; returns d."""
    n = K.shape[0]
    d = np.zeros(n)
    d[prescribed_dofs] = prescribed_values
    free = np.setdiff1d(np.arange(n), prescribed_dofs)
    rhs = f[free] - K[free][:, prescribed_dofs] @ d[prescribed_dofs]
    d[free] = spla.spsolve(K[free][:, free].tocsc(), rhs)
    return d


def patch():
    """MacNeal & Harder's irregular patch (0.24 x 0.12, four interior nodes), 10 triangles."""
    coordinates = np.array([[0.0, 0.0], [0.24, 0.0], [0.24, 0.12], [0.0, 0.12],
                            [0.04, 0.02], [0.18, 0.03], [0.16, 0.08], [0.08, 0.08]])
    quads = [[0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7], [4, 5, 6, 7]]
    triangles = np.array([t for a, b, c, d in quads for t in ([a, b, c], [a, c, d])])
    return np.column_stack([coordinates, np.zeros(len(coordinates))]), triangles


def rectangle(a, b, nx, ny):
    """Plate [0,a] x [0,b] in the x-y plane, two triangles per cell, alternating diagonals."""
    x, y = np.meshgrid(np.linspace(0, a, nx + 1), np.linspace(0, b, ny + 1), indexing="xy")
    coordinates = np.column_stack([x.ravel(), y.ravel(), np.zeros(x.size)])
    triangles = []
    for j in range(ny):
        for i in range(nx):
            n00, n10 = j * (nx + 1) + i, j * (nx + 1) + i + 1
            n01, n11 = n00 + nx + 1, n10 + nx + 1
            if (i + j) % 2 == 0:
                triangles += [[n00, n10, n11], [n00, n11, n01]]
            else:
                triangles += [[n00, n10, n01], [n10, n11, n01]]
    return coordinates, np.array(triangles)


def rank(matrix):
    return np.linalg.matrix_rank(matrix, tol=1e-10 * np.abs(matrix).max())


# ---------------------------------------------------------------------------------------------
# frames, ranks and rigid modes
# ---------------------------------------------------------------------------------------------
def test_local_frame_convention():
    X = np.array([[[1.0, 1.0, 1.0], [1.0, 3.0, 1.0], [0.0, 2.0, 1.0]]])   # normal +z
    E, xy, area = sl.local_frames(X)
    np.testing.assert_allclose(E[0], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)
    np.testing.assert_allclose(xy[0], [[0, 0], [2, 0], [1, 1]], atol=1e-15)
    assert area[0] == pytest.approx(1.0)


def random_triangles(n, seed=1):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 3, 3))


def test_ranks_symmetry_and_rigid_modes_in_3d():
    X = random_triangles(5)
    _, xy, _ = sl.local_frames(X)
    for kind in ("opt", "cst"):
        K_membrane = sl.membrane_stiffness(xy, E_STEEL, NU, H, kind)
        assert [rank(k) for k in K_membrane] == [6] * 5
    K_bending = sl.bending_stiffness(xy, E_STEEL, NU, H)
    assert [rank(k) for k in K_bending] == [6] * 5
    for kind in ("opt", "cst"):
        K_global = global_element_matrices(X.reshape(-1, 3), np.arange(15).reshape(5, 3), E_STEEL, NU,
                                           H, kind)
        for e in range(5):
            K = K_global[e]
            assert rank(K) == 12, kind
            np.testing.assert_allclose(K, K.T, rtol=0, atol=1e-12 * np.abs(K).max())
            # the six rigid modes u = a + omega x X, theta = omega span the null space
            modes = np.zeros((18, 6))
            for m in range(3):
                modes[m::6, m] = 1.0                                   # translations
                omega = np.eye(3)[m]
                modes[:, 3 + m] = np.concatenate(
                    [np.concatenate([np.cross(omega, X[e, n]), omega]) for n in range(3)])
            assert np.abs(K @ modes).max() < 1e-9 * np.abs(K).max(), kind
            assert np.linalg.matrix_rank(modes) == 6


def test_per_element_properties_match_scalar_ones():
    _, xy, _ = sl.local_frames(random_triangles(3))
    E, nu, h = np.array([1.0e9, 2.0e9, 3.0e9]), np.array([0.0, 0.3, -0.2]), np.array([0.01, 0.02, 0.03])
    for membrane in ("opt", "cst"):
        K = sl.linear_stiffness(xy, E, nu, h, membrane)
        for e in range(3):
            np.testing.assert_allclose(K[e], sl.linear_stiffness(xy[e:e + 1], E[e], nu[e], h[e], membrane)[0],
                                       rtol=1e-14, atol=0)


def test_membrane_drilling_is_the_in_plane_rotation():
    """The in-plane rigid rotation costs no energy only when theta_z equals it."""
    _, xy, _ = sl.local_frames(random_triangles(1))
    K = sl.membrane_stiffness(xy, E_STEEL, NU, H)[0]
    rotation = np.zeros(9)
    rotation[0::3], rotation[1::3], rotation[2::3] = -xy[0, :, 1], xy[0, :, 0], 1.0
    assert np.abs(K @ rotation).max() < 1e-9 * np.abs(K).max()
    rotation[2::3] = 0.0                                               # drilling left behind
    assert rotation @ K @ rotation > 1e-3 * np.abs(K).max()


# ---------------------------------------------------------------------------------------------
# patch tests on the irregular patch
# ---------------------------------------------------------------------------------------------
BOUNDARY, INTERIOR = np.arange(4), np.arange(4, 8)


def voigt_in_local_axes(E_frames, tensor):
    """(n_el, 3) [t_xx, t_yy, 2 t_xy] of a global 2x2 tensor in each element's local axes."""
    R2 = E_frames[:, :2, :2]                                           # (n_el, 2, 2) local axes
    local = np.einsum("eai,ab,ebj->eij", R2, tensor, R2)
    return np.column_stack([local[:, 0, 0], local[:, 1, 1], 2 * local[:, 0, 1]])


def local_dofs(E_frames, d_global, triangles):
    """(n_el, 18) local DOFs from global nodal [u (3), theta (3)]."""
    nodal = d_global.reshape(-1, 2, 3)[triangles]                      # (n_el, 3, 2, 3)
    return np.einsum("eai,enka->enki", E_frames, nodal).reshape(len(triangles), 18)



@pytest.mark.parametrize("kind", ["opt", "cst"])
def test_membrane_patch_test(kind):
    coordinates, triangles = patch()
    K = assemble(coordinates, triangles, membrane=kind)
    gradient = np.array([[1.0e-3, 0.4e-3], [-0.2e-3, 0.7e-3]])        # du_i/dx_j, constant strain
    rotation = 0.5 * (gradient[1, 0] - gradient[0, 1])
    exact = np.zeros((8, 6))
    exact[:, :2] = coordinates[:, :2] @ gradient.T
    exact[:, 5] = rotation
    # boundary: all six DOFs prescribed to the field; interior: the plate DOFs held, the membrane
    # DOFs (including the drilling rotation) free
    prescribed = [6 * n + c for n in BOUNDARY for c in range(6)] + \
                 [6 * n + c for n in INTERIOR for c in (2, 3, 4)]
    prescribed = np.array(prescribed)
    d = solve(K, np.zeros(K.shape[0]), prescribed, exact.ravel()[prescribed])
    error = np.abs(d.reshape(8, 6)[INTERIOR] - exact[INTERIOR]).max() / np.abs(exact).max()
    assert error < 1e-10, f"{kind}: interior nodes off the linear field by {error:.2e} (relative)"
    # uniform stresses N = h D e in every element
    E_frames, xy, _ = sl.local_frames(coordinates[triangles])
    strains = np.einsum("eij,ej->ei", sl.centroid_operators(xy, kind)[0],
                        local_dofs(E_frames, d, triangles))
    expected = voigt_in_local_axes(E_frames, 0.5 * (gradient + gradient.T))
    np.testing.assert_allclose(strains, expected, rtol=0, atol=1e-15)


def test_plate_patch_test_constant_curvature():
    """w = (a x^2 + b y^2 + c x y)/2 with theta_x = w_y, theta_y = -w_x: exact, moments uniform."""
    coordinates, triangles = patch()
    K = assemble(coordinates, triangles)
    a, b, c = 2.0e-3, -1.0e-3, 1.5e-3
    x, y = coordinates[:, 0], coordinates[:, 1]
    exact = np.zeros((8, 6))
    exact[:, 2] = (a * x ** 2 + b * y ** 2 + c * x * y) / 2
    exact[:, 3] = b * y + c * x / 2                                    # w_y
    exact[:, 4] = -(a * x + c * y / 2)                                 # -w_x
    prescribed = np.array([6 * n + k for n in BOUNDARY for k in range(6)]
                          + [6 * n + k for n in INTERIOR for k in (0, 1, 5)])
    d = solve(K, np.zeros(K.shape[0]), prescribed, exact.ravel()[prescribed])
    error = np.abs(d.reshape(8, 6)[INTERIOR] - exact[INTERIOR]).max() / np.abs(exact).max()
    assert error < 1e-10, f"interior nodes off the quadratic w field by {error:.2e} (relative)"
    E_frames, xy, _ = sl.local_frames(coordinates[triangles])
    curvatures = np.einsum("eij,ej->ei", sl.centroid_operators(xy)[1], local_dofs(E_frames, d, triangles))
    # k = [-w_xx, -w_yy, -2 w_xy]
    expected = voigt_in_local_axes(E_frames, -np.array([[a, c / 2], [c / 2, b]]))
    np.testing.assert_allclose(curvatures, expected, rtol=0, atol=1e-12)


def test_bending_energy_of_constant_curvature_on_one_element():
    """d^T K d / 2 = A (h^3/12) k.D k / 2 for the constant-curvature nodal values."""
    _, xy, area = sl.local_frames(random_triangles(3, seed=7))
    a, b, c = 0.3, -0.8, 0.5
    x, y = xy[..., 0], xy[..., 1]
    d = np.stack([(a * x ** 2 + b * y ** 2 + c * x * y) / 2, b * y + c * x / 2, -(a * x + c * y / 2)],
                 axis=2).reshape(3, 9)
    K = sl.bending_stiffness(xy, E_STEEL, NU, H)
    k = -np.array([a, b, c])
    D = sl.plane_stress_matrix(E_STEEL, NU)[0]
    np.testing.assert_allclose(np.einsum("ei,eij,ej->e", d, K, d), area * (H ** 3 / 12 * (k @ D @ k)),
                               rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# in-plane bending of a slender cantilever
# ---------------------------------------------------------------------------------------------
def cantilever_tip_deflection(kind, n_cells=10):
    """Cantilever L = 10, depth 1, clamped at x = 0, tip shear P; returns w_tip / beam theory."""
    length, depth, E, nu, h, P = 10.0, 1.0, 1.0e3, 0.0, 0.1, 1.0e-2
    coordinates, triangles = rectangle(length, depth, n_cells, 1)
    K = assemble(coordinates, triangles, E, nu, h, kind)
    nodes = len(coordinates)
    root = np.flatnonzero(coordinates[:, 0] == 0.0)
    tip = np.flatnonzero(coordinates[:, 0] == length)
    plate = [6 * n + k for n in range(nodes) for k in (2, 3, 4)]
    prescribed = np.unique(np.concatenate([plate, [6 * n + k for n in root for k in (0, 1, 5)]]))
    f = np.zeros(6 * nodes)
    f[6 * tip + 1] = P / 2
    d = solve(K, f, prescribed, np.zeros(len(prescribed)))
    I, A, G = h * depth ** 3 / 12, h * depth, E / (2 * (1 + nu))
    beam = P * length ** 3 / (3 * E * I) + P * length / (5 / 6 * G * A)   # Timoshenko
    return d[6 * tip + 1].mean() / beam


def test_opt_pure_bending_energy_ratio_is_one_for_any_aspect_ratio():
    """Felippa (2003), section 5: OPT's optimality. The nodal values of the exact pure-bending field
    of a rectangular mesh unit (two triangles, either diagonal) give exactly the exact energy,
    for any aspect ratio and Poisson's ratio. CST (+ drilling penalty) measured: 3.09 (a = 1/4),
    4.51 (a = 1), 27.1 (a = 4) at nu = 0, independent of the diagonal."""
    for a in (0.25, 1.0, 4.0):
        for nu in (0.0, 0.3):
            for diagonal in (0, 1):
                coordinates = np.array([[0, 0, 0], [a, 0, 0], [a, 1, 0], [0, 1, 0]], dtype=float)
                triangles = np.array([[0, 1, 2], [0, 2, 3]] if diagonal == 0 else [[0, 1, 3], [1, 2, 3]])
                x, y = coordinates[:, 0], coordinates[:, 1] - 0.5
                curvature = 1.0                                        # M = E I curvature about z
                d = np.zeros((4, 6))
                d[:, 0] = -curvature * x * y
                d[:, 1] = curvature * (x ** 2 + nu * y ** 2) / 2
                d[:, 5] = curvature * x                                # in-plane rotation dv/dx
                exact = 0.5 * curvature ** 2 / 12 * a                  # E = h = 1, depth 1
                for kind in ("opt", "cst"):
                    K = assemble(coordinates, triangles, 1.0, nu, 1.0, kind).toarray()
                    ratio = 0.5 * d.ravel() @ K @ d.ravel() / exact
                    if kind == "opt":
                        assert ratio == pytest.approx(1.0, abs=1e-12), (a, nu, diagonal, ratio)
                    else:
                        assert ratio > 3.0, (a, nu, diagonal, ratio)


def test_opt_in_plane_bending_of_slender_cantilever():
    """OPT: 10 x 1 cells within a few % of beam theory; CST locks.

    Measured tip deflection / Timoshenko beam (nu = 0, L/depth = 10), n_x x n_y cells:
    10x1 OPT 1.0033, CST 0.249; 20x2 OPT 1.0003, CST 0.570; 40x4 OPT 1.0000, CST 0.841.
    """
    opt = cantilever_tip_deflection("opt")
    cst = cantilever_tip_deflection("cst")
    assert abs(opt - 1.0) < 0.03, f"OPT tip deflection / beam theory = {opt:.4f}"
    assert cst < 0.5, f"CST tip deflection / beam theory = {cst:.4f}: expected strong shear locking"


# ---------------------------------------------------------------------------------------------
# plate convergence: square plate under uniform load
# ---------------------------------------------------------------------------------------------
def square_plate_centre_deflection(n_cells, support):
    a, E, nu, h, q = 1.0, 1.0e6, 0.3, 0.01, 1.0
    coordinates, triangles = rectangle(a, a, n_cells, n_cells)
    K = assemble(coordinates, triangles, E, nu, h)
    nodes = len(coordinates)
    x, y = coordinates[:, 0], coordinates[:, 1]
    on_x_edge = np.isclose(x, 0) | np.isclose(x, a)                   # edges x = 0, a
    on_y_edge = np.isclose(y, 0) | np.isclose(y, a)
    prescribed = [6 * n + k for n in range(nodes) for k in (0, 1, 5)]  # membrane held
    prescribed += [6 * n + 2 for n in np.flatnonzero(on_x_edge | on_y_edge)]
    if support == "simple":                                            # hard: tangential rotation 0
        prescribed += [6 * n + 3 for n in np.flatnonzero(on_x_edge)]   # w_y = 0 along x = const
        prescribed += [6 * n + 4 for n in np.flatnonzero(on_y_edge)]   # w_x = 0 along y = const
    else:
        prescribed += [6 * n + k for n in np.flatnonzero(on_x_edge | on_y_edge) for k in (3, 4)]
    prescribed = np.unique(prescribed)
    _, _, area = sl.local_frames(coordinates[triangles])
    f = np.zeros(6 * nodes)
    np.add.at(f, 6 * triangles + 2, np.repeat(q * area[:, None] / 3, 3, axis=1))   # dead q A/3
    d = solve(K, f, prescribed, np.zeros(len(prescribed)))
    centre = np.flatnonzero(np.isclose(x, a / 2) & np.isclose(y, a / 2))[0]
    D_plate = E * h ** 3 / (12 * (1 - nu ** 2))
    return d[6 * centre + 2] * D_plate / (q * a ** 4)


@pytest.mark.parametrize("support, reference", [("simple", 0.00406235), ("clamped", 0.00126532)])
def test_square_plate_under_uniform_load_converges(support, reference):
    """Centre deflection / (q a^4/D): Timoshenko & Woinowsky-Krieger 0.00406 (SS), 0.00126 (clamped)."""
    coarse = square_plate_centre_deflection(8, support)
    fine = square_plate_centre_deflection(16, support)
    error_coarse, error_fine = abs(coarse / reference - 1), abs(fine / reference - 1)
    assert error_fine < 0.01, f"{support}: 16x16 gives {fine:.6f}, reference {reference} ({error_fine:.2%})"
    assert error_fine < error_coarse, f"{support}: no convergence ({error_coarse:.2%} -> {error_fine:.2%})"


# ---------------------------------------------------------------------------------------------
# mass helpers and bad input
# ---------------------------------------------------------------------------------------------
def test_lumped_mass_and_rotary_inertia():
    area = np.array([0.5, 2.0])
    np.testing.assert_allclose(sl.lumped_mass(area, 7800.0, 0.01), 7800 * 0.01 * area / 3)
    J = sl.nodal_rotary_inertia(area, 7800.0, 0.01)
    assert J.shape == (2, 3, 3)
    np.testing.assert_allclose(J[:, 0, 0], 7800 * 0.01 ** 3 * area / 36)
    np.testing.assert_allclose(J[:, 2, 2], J[:, 0, 0] + J[:, 1, 1])


def test_bad_input_names_the_element():
    X = random_triangles(3)
    X[1, 2] = X[1, 0] + 2.0 * (X[1, 1] - X[1, 0])                     # collinear
    with pytest.raises(ModelError, match=r"group 'skin', element 1: .*zero area"):
        sl.local_frames(X, group="skin")
    _, xy, _ = sl.local_frames(random_triangles(3))
    with pytest.raises(ModelError, match=r"element 2: Poisson's ratio nu = 0.5 is outside"):
        sl.linear_stiffness(xy, E_STEEL, [0.3, 0.2, 0.5], H)
    with pytest.raises(ModelError, match=r"element 0: thickness must be positive"):
        sl.bending_stiffness(xy, E_STEEL, NU, [0.0, 0.1, 0.1])
    with pytest.raises(ModelError, match=r"membrane kind 'q4'"):
        sl.membrane_stiffness(xy, E_STEEL, NU, H, "q4")
