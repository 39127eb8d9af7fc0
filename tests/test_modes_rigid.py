"""Zero-frequency modes of natural_modes: the kinematic null space and the count check (issue 28).

A free structure has a multiple zero eigenvalue (3 in 2D, 6 in 3D, more with mechanisms), and
ARPACK used to return only some of its vectors: a free 10 x 10 m Shell3 plate (10 x 10 cells,
h = 0.05 m, steel) gave 4 or 5 rigid modes for n_modes = 7 .. 20, the elastic modes shifted by one
index, silently. The references here are exact: the number of rigid-body motions a free, pinned or
jointed structure has, and the Euler-Bernoulli free-free beam, omega_n = (beta_n L)^2
sqrt(EI / (rho A L^4)), beta_n L = 4.7300, 7.8532, 10.9956 (references README, Wave 2 A).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
import flexmb.analysis.modes as modes_module
from flexmb.analysis.arpack import start_vector
from flexmb.analysis.modes import ModeCountError, _count_below
from flexmb.io import shell_mesh

E, NU, RHO = 210e9, 0.3, 7800.0                  # steel: Pa, -, kg/m^3
DENSE, SPARSE = 10**6, 0                         # dense_limit forcing each solver path
FREE_FREE = np.array([4.73004074, 7.85320462, 10.99560784])


def free_plate(mass: str, cells: int = 10, side: float = 10.0, rotation: np.ndarray | None = None,
               offset: float = 0.0) -> fm.Model:
    """The issue's free steel plate, side x side m, h = 0.05 m, cells x cells cells of two Shell3."""
    xyz, triangles = shell_mesh.rectangle(side, side, cells, cells)
    if rotation is not None:
        xyz = xyz @ rotation.T
    model = fm.Model(dim=3)
    nodes = model.add_nodes(xyz + offset)
    model.add_shell(nodes[triangles], E=E, nu=NU, thickness=0.05, rho=RHO, mass=mass)
    return model


def free_beam(dim: int, n: int = 20, length: float = 2.0) -> tuple[fm.Model, float]:
    """A free-free Euler-Bernoulli beam along x (3D: equal bending stiffness in y and z, so the
    elastic modes come in exact pairs) with Hermitian mass, and its omega scale sqrt(EI / (rho A L^4))."""
    EI, rho_A = 50.0, 2.0
    m = fm.Model(dim=dim)
    xyz = np.zeros((n + 1, dim))
    xyz[:, 0] = np.linspace(0.0, length, n + 1)
    nodes = m.add_nodes(xyz)
    pairs = np.c_[nodes[:-1], nodes[1:]]
    if dim == 2:
        m.add_beam2d(pairs, EA=1e7, EI=EI, rho_A=rho_A, mass="cubic")
    else:
        m.add_beam3d(pairs, EA=1e7, GJ=40.0, EI_y=EI, EI_z=EI, rho_A=rho_A, rho_I=(2e-9, 1e-9, 1e-9),
                     mass="cubic")                   # rotary inertia too small to lower the bending modes
    return m, np.sqrt(EI / (rho_A * length**4))


# ------------------------------------------------------------------------------ the plate
@pytest.mark.parametrize("mass", ["consistent", "lumped"])
def test_free_plate_has_six_rigid_modes_for_every_mode_count(mass):
    """The issue's plate (726 free DOFs: ARPACK by default): n_modes = 7 .. 20 on the sparse path,
    where the modes were lost, and on the dense path; 6 rigid modes every time and
    the same elastic eigenvalues as the dense solution of 20 modes."""
    asm = fm.Assembly(free_plate(mass))
    reference = fm.natural_modes(asm, 20, dense_limit=DENSE)
    assert reference.n_rigid == 6
    for limit, counts in ((SPARSE, range(7, 21)), (DENSE, range(7, 21))):
        for n_modes in counts:
            modes = fm.natural_modes(asm, n_modes, dense_limit=limit)
            where = f"n_modes = {n_modes}, dense_limit = {limit}"
            assert modes.n_rigid == 6, f"{where}: {modes.n_rigid} rigid modes instead of 6"
            assert np.all(modes.eigenvalues[:6] == 0.0) and np.all(modes.eigenvalues[6:] > 1.0), where
            np.testing.assert_allclose(modes.eigenvalues[6:], reference.eigenvalues[6:n_modes], rtol=1e-9,
                                       err_msg=where)


def test_free_plate_moved_and_refined():
    """The same frequencies for the plate turned by 0.7 rad about y and moved by 1e4 m; a twice finer
    mesh keeps its 6 rigid modes and converges (first elastic frequency within 2 % of the coarse)."""
    base = fm.natural_modes(free_plate("lumped"), 10, dense_limit=SPARSE)
    c, s = np.cos(0.7), np.sin(0.7)
    turned = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    moved = fm.natural_modes(free_plate("lumped", rotation=turned, offset=1e4), 10, dense_limit=SPARSE)
    assert moved.n_rigid == base.n_rigid == 6
    np.testing.assert_allclose(moved.eigenvalues[6:], base.eigenvalues[6:], rtol=1e-8)
    fine = fm.natural_modes(free_plate("lumped", cells=20), 9)
    assert fine.n_rigid == 6
    assert abs(fine.frequencies_hz[6] / base.frequencies_hz[6] - 1.0) < 0.02


def test_fewer_modes_than_zero_modes_are_the_translations_on_both_paths():
    """n_modes = 3 on the free plate: the first three of the fixed rigid order (translations along
    x, y, z, each carrying the whole mass), the same vectors from either solver."""
    asm = fm.Assembly(free_plate("lumped"))
    dense = fm.natural_modes(asm, 3, dense_limit=DENSE)
    sparse = fm.natural_modes(asm, 3, dense_limit=SPARSE)
    assert dense.n_rigid == sparse.n_rigid == 3
    np.testing.assert_allclose(sparse.effective_masses, np.diag(sparse.total_mass), rtol=1e-10,
                               atol=1e-10 * sparse.total_mass.max())
    np.testing.assert_allclose(sparse.modes, dense.modes, atol=1e-10 * np.abs(dense.modes).max())


# --------------------------------------------------------------------------- beams and mechanisms
@pytest.mark.parametrize("dim, rigid", [(2, 3), (3, 6)])
def test_free_free_beam(dim, rigid):
    """3 rigid modes in 2D, 6 in 3D, then the Euler-Bernoulli bending modes (3D: each twice, in y
    and in z; 20 Hermitian elements, measured error 6.2e-5), both solver paths; the 3D beam lost
    rigid modes on the sparse path before the kinematic null space."""
    model, scale = free_beam(dim)
    n_bending = 3 * (dim - 1)
    expected = np.repeat(FREE_FREE**2 * scale, dim - 1)
    for limit in (DENSE, SPARSE):
        modes = fm.natural_modes(model, rigid + n_bending, dense_limit=limit)
        assert modes.n_rigid == rigid
        error = modes.omega[rigid:] / expected - 1.0
        assert np.abs(error).max() < 1e-4, f"dense_limit {limit}: relative errors {error}"


def test_mechanisms_and_partial_supports():
    """Zero modes that are not rigid-body motions of the whole, and supports that leave some:
    a straight 2D truss of 30 nodes (3 rigid motions and 28 sideways mechanisms of its inner
    nodes), a plate pinned at one corner (the 3 rotations about it), a 3D beam pinned at both
    ends (the rotation about its axis), two unconnected free beams (6 each)."""
    truss = fm.Model(dim=2)
    nodes = truss.add_nodes(np.c_[np.arange(30.0), np.zeros(30)])
    truss.add_truss(np.c_[nodes[:-1], nodes[1:]], EA=1e6, rho_A=1.0)
    pinned = free_plate("lumped")
    pinned.fix(0, ["ux", "uy", "uz"])
    axis, _ = free_beam(3)
    axis.fix(0, ["ux", "uy", "uz"])
    axis.fix(20, ["ux", "uy", "uz"])
    pair = fm.Model(dim=3)
    for y in (0.0, 1.0):
        nodes = pair.add_nodes(np.c_[np.linspace(0.0, 2.0, 11), np.full(11, y), np.zeros(11)])
        pair.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e7, GJ=40.0, EI_y=50.0, EI_z=50.0, rho_A=2.0,
                        rho_I=(2e-3, 1e-3, 1e-3))
    for model, zero in ((truss, 31), (pinned, 3), (axis, 1), (pair, 12)):
        for limit in (DENSE, SPARSE):
            modes = fm.natural_modes(model, zero + 3, dense_limit=limit)
            assert modes.n_rigid == zero, f"{modes.n_rigid} zero modes instead of {zero} (dense_limit {limit})"
            assert np.all(modes.eigenvalues[zero:] > 1.0)


def test_rigid_bodies_and_joints():
    """A free rigid body in 3D (6 zero modes); a free chain of three rigid bodies on two revolute
    joints in 2D (3 rigid motions and 2 joint angles: 5)."""
    body = fm.Model(dim=3)
    body.add_rigid_body([1.0, 2.0, 3.0], 2.0, [0.1, 0.2, 0.3])
    assert fm.natural_modes(body, 6).n_rigid == 6
    chain = fm.Model(dim=2)
    links = [chain.add_rigid_body([i + 0.5, 0.0], 1.0, 0.1) for i in range(3)]
    for i in range(2):
        chain.add_joint("revolute", links[i], links[i + 1], at=[i + 1.0, 0.0])
    modes = fm.natural_modes(chain, 5)
    assert modes.n_rigid == 5
    # the first two are the translations, carrying the whole mass (3 kg)
    np.testing.assert_allclose(modes.effective_masses[:2], 3.0 * np.eye(2), atol=1e-10)


# ------------------------------------------------------------------------------- the count check
def test_count_check_recovers_or_raises_when_the_solver_misses_zero_modes(monkeypatch):
    """Without the kinematic null space the plate's six zero modes are left to ARPACK, which misses
    some of them depending on the BLAS kernel (4 or 5 found, or all 6); here its first search is
    made to miss one more for certain. The count check sees the miss, the search past the zero modes
    found recovers it, and with that search switched off the solution is refused."""
    monkeypatch.setattr(modes_module, "_rigid_body_modes", lambda asm, system, K, M, scale: np.zeros((K.shape[0], 0)))
    eigsh = modes_module.spla.eigsh
    searches = []

    def first_search_misses_a_zero_mode(*args, **kwargs):
        """eigsh; in the first search (its start vector not yet projected on the complement of
        zero modes found) without the zero mode of least |omega^2| it returns."""
        values, vectors = eigsh(*args, **kwargs)
        first = np.array_equal(kwargs["v0"], start_vector(vectors.shape[0]))
        searches.append(first)
        if not first:
            return values, vectors
        keep = np.arange(values.size) != int(np.argmin(np.abs(values)))
        return values[keep], vectors[:, keep]

    monkeypatch.setattr(modes_module.spla, "eigsh", first_search_misses_a_zero_mode)
    asm = fm.Assembly(free_plate("consistent"))
    modes = fm.natural_modes(asm, 10, dense_limit=SPARSE)
    assert modes.n_rigid == 6 and not all(searches)                  # recovered by a later search
    monkeypatch.setattr(modes_module, "MISSED_ROUNDS", 1)
    with pytest.raises(ModeCountError, match=r"ARPACK found [0-5] eigenvalue.* counts 6"):
        fm.natural_modes(asm, 10, dense_limit=SPARSE)


def test_count_below_is_the_number_of_eigenvalues_below_the_shift():
    """The L D L^T inertia count against the eigenvalues, sparse (SuperLU, diagonal pivots) and
    dense (Bunch-Kaufman, 2x2 blocks: a pencil with a zero diagonal in K - tau M)."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((40, 40))
    K = A @ np.diag(np.r_[np.zeros(5), np.linspace(1.0, 50.0, 35)]) @ A.T    # 5 zero eigenvalues
    M = np.diag(rng.uniform(0.5, 2.0, 40))
    lam = np.sort(np.linalg.eigvals(np.linalg.solve(M, K)).real)
    for tau in (-1.0, 1e-6 * lam[-1], 0.5 * (lam[10] + lam[11]), 1.5 * lam[-1]):
        expected = int(np.count_nonzero(lam < tau))
        assert _count_below(K, M, tau) == expected
        assert _count_below(sp.csc_matrix(K), sp.csc_matrix(M), tau) == expected
    swap = np.array([[0.0, 1.0], [1.0, 0.0]])                    # eigenvalues -1 and 1, no usable 1x1 pivot
    assert _count_below(np.kron(np.eye(3), swap), np.zeros((6, 6)), 0.0) == 3
