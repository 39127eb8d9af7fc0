"""Tests of natural modes (:func:`flexmb.natural_modes`, :func:`flexmb.system_matrices`).

References: Euler-Bernoulli beams, omega_n = (beta_n L)^2 sqrt(EI / (rho A L^4)) with the
classical roots (references README, Wave 2 A); a pinned column under an axial load P,
omega_1^2 = omega_0^2 (1 - P / P_cr), P_cr = pi^2 EI / L^2 (references README, Wave 2 B); a
rigid pendulum, omega^2 = m g l / (J + m l^2) (exact).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import flexmb as fm
from flexmb.analysis.modes import NaturalModes, SystemMatrices

L, EI, RHO_A = 2.0, 3.0, 1.5
CANTILEVER = np.array([1.87510407, 4.69409113, 7.85475744, 10.99554073, 14.13716839])


def _beam2d(n: int = 12, support: str = "clamped", mass: str = "cubic", second_order: bool = False,
            axial_load: float = 0.0) -> fm.Model:
    """Beam2D along x: clamped at node 0, pinned-pinned (roller at the end) or free."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, L, n + 1), np.zeros(n + 1)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e5, EI=EI, rho_A=RHO_A, mass=mass,
                 second_order=second_order)
    if support == "clamped":
        m.fix(nodes[0])
    elif support == "pinned":
        m.fix(nodes[0], ["ux", "uy"])
        m.fix(nodes[-1], "uy")
    if axial_load:
        m.add_load(nodes[-1], "ux", axial_load)
    return m


def _frame3d(clamped: bool = True) -> fm.Model:
    """A small spatial portal frame of Beam3D (consistent mass, rotary inertia) with a point mass."""
    m = fm.Model(dim=3)
    pts = np.array([[0, 0, 0], [0, 0, 1], [1, 0, 1], [1, 0, 0], [1, 1, 1], [0, 1, 1]], dtype=float)
    nodes = m.add_nodes(pts)
    m.add_beam3d(np.array([[0, 1], [1, 2], [2, 3], [2, 4], [4, 5], [5, 1]]), EA=2e6, GJ=80.0, EI_y=100.0,
                 EI_z=140.0, rho_A=2.0, rho_I=(2e-3, 1e-3, 1e-3), mass="consistent")
    m.add_point_mass(int(nodes[4]), 0.7)
    if clamped:
        m.fix(int(nodes[0]))
        m.fix(int(nodes[3]))
    return m


def _pendulum(dim: int = 2) -> tuple[fm.Model, float]:
    """Rigid body hanging on a revolute joint under gravity, and its omega^2 (exact)."""
    mass, l, J, g = 2.0, 0.7, 0.05, 9.81
    m = fm.Model(dim=dim)
    if dim == 2:
        body = m.add_rigid_body([0.0, -l], mass, J)
        m.add_joint("revolute", None, body, at=[0.0, 0.0])
        m.set_gravity([0.0, -g])
    else:
        body = m.add_rigid_body([0.0, -l, 0.0], mass, [J, 0.03, J])
        m.add_joint("revolute", None, body, at=[0.0, 0.0, 0.0], axis=[0.0, 0.0, 1.0])
        m.set_gravity([0.0, -g, 0.0])
    return m, mass * g * l / (J + mass * l**2)


def _full_matrices(modes: NaturalModes, model: fm.Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Free-DOF mode matrix (n_free, n) and dense K, M of the model about its reference state."""
    s = fm.system_matrices(fm.Assembly(model))
    return modes.modes[:, s.free].T, s.K.toarray(), s.M.toarray()


# ----------------------------------------------------------------- orthogonality
@pytest.mark.parametrize("model", [_beam2d(), _frame3d(), _frame3d(clamped=False)], ids=["beam2d", "frame3d",
                                                                                      "free-frame3d"])
def test_modes_are_mass_normalised_and_d_orthogonal(model):
    modes = fm.natural_modes(model, 10)
    Phi, K, M = _full_matrices(modes, model)
    np.testing.assert_allclose(Phi.T @ M @ Phi, np.eye(10), atol=1e-9)
    scale = np.abs(modes.eigenvalues).max()
    np.testing.assert_allclose(Phi.T @ K @ Phi, np.diag(modes.eigenvalues), atol=1e-8 * scale)
    # eigen-equation residual, relative to the largest eigenvalue's force level
    residual = K @ Phi - M @ Phi * modes.eigenvalues
    assert np.abs(residual).max() < 1e-7 * scale * np.abs(M @ Phi).max()
    # sign convention: the entry of largest magnitude of each mode (the first of those equal to
    # 1e-6) is positive
    size = np.abs(modes.modes)
    top = np.argmax(size >= (1.0 - 1e-6) * size.max(axis=1, keepdims=True), axis=1)
    assert np.all(modes.modes[np.arange(10), top] > 0)


def test_dense_and_sparse_paths_agree():
    model = _frame3d(clamped=False)
    dense = fm.natural_modes(model, 12, dense_limit=10_000)
    sparse = fm.natural_modes(model, 12, dense_limit=0)
    assert dense.n_rigid == sparse.n_rigid == 6
    np.testing.assert_allclose(sparse.eigenvalues, dense.eigenvalues, rtol=1e-9, atol=0.0)
    # the same modes up to round-off, the rigid ones too (they are put in a fixed order and sign)
    np.testing.assert_allclose(sparse.modes, dense.modes, atol=1e-9)


def test_cantilever_frequencies_and_lumped_mass_without_rotary_inertia():
    """Beam2D cantilever, 12 elements (Hermitian mass: measured errors 4e-7 .. 1.3e-3 for modes
    1-5); a lumped mass without rho_I leaves the rotations massless (infinite eigenvalues) and
    still works."""
    omega_ref = CANTILEVER**2 * np.sqrt(EI / (RHO_A * L**4))
    cubic = fm.natural_modes(_beam2d(), 5)
    np.testing.assert_allclose(cubic.omega, omega_ref, rtol=1.5e-2)
    assert abs(cubic.omega[0] / omega_ref[0] - 1.0) < 1e-5
    # lumped: mode 1 is 0.32 % low with 12 elements (checked to 3 %); both solver paths agree
    dense = fm.natural_modes(_beam2d(mass="lumped"), 5, dense_limit=10_000)
    sparse = fm.natural_modes(_beam2d(mass="lumped"), 5, dense_limit=0)
    assert abs(dense.omega[0] / omega_ref[0] - 1.0) < 3e-2
    np.testing.assert_allclose(sparse.eigenvalues, dense.eigenvalues, rtol=1e-10)
    np.testing.assert_allclose(sparse.modes, dense.modes, atol=1e-8)


# -------------------------------------------------------------------- pre-stress
@pytest.mark.parametrize("ratio", [0.3, 0.8])
def test_pinned_column_under_axial_load(ratio):
    """omega_1^2 = omega_0^2 (1 - P/P_cr); 20 Beam2D elements with second-order strains (their
    consistent geometric stiffness) and Hermitian mass: measured |omega_1^2 / omega_0^2 - (1 - P/P_cr)|
    4e-5 (P = 0.3 P_cr) and 7e-5 (0.8 P_cr)."""
    p_cr = np.pi**2 * EI / L**2
    omega0_sq = fm.natural_modes(_beam2d(20, "pinned", second_order=True), 1).eigenvalues[0]
    asm = fm.Assembly(_beam2d(20, "pinned", second_order=True, axial_load=-ratio * p_cr))
    u_pre = fm.load_control(asm, [0.5, 1.0]).u[-1]
    loaded = fm.natural_modes(asm, 2, u_pre=u_pre, load_factor=1.0)
    assert abs(loaded.eigenvalues[0] / omega0_sq - (1.0 - ratio)) < 1e-3
    # the same state at load factor 0 (the loads off) is not an equilibrium
    with pytest.raises(fm.ModelError, match=r"not an equilibrium.*node 20 ux.*load_control"):
        fm.natural_modes(asm, 2, u_pre=u_pre, load_factor=0.0)


# -------------------------------------------------------------------- rigid modes
@pytest.mark.parametrize("model, count", [(_beam2d(support="free"), 3), (_frame3d(clamped=False), 6),
                                          (_beam2d(), 0), (_frame3d(), 0)], ids=["2d", "3d", "2d-held", "3d-held"])
def test_rigid_mode_counts(model, count):
    modes = fm.natural_modes(model, count + 3)
    assert modes.n_rigid == count
    assert np.all(modes.eigenvalues[:count] == 0.0) and np.all(modes.rigid[:count])
    assert np.all(modes.eigenvalues[count:] > 1.0)              # the first elastic modes are well above
    if count:
        # ordered: the first rigid modes are the translations along x, y (, z), carrying all the mass
        dim = model.dim
        np.testing.assert_allclose(modes.effective_masses[:dim], np.diag(modes.total_mass),
                                   atol=1e-10 * modes.total_mass.max())
        assert np.all(modes.effective_masses[dim:count] < 1e-10 * modes.total_mass.max())


def test_pendulum_needs_gravity_through_the_load_factor():
    model, omega_sq = _pendulum()
    unloaded = fm.natural_modes(model, 1)
    assert unloaded.rigid[0] and unloaded.eigenvalues[0] == 0.0
    for dim in (2, 3):
        model, omega_sq = _pendulum(dim)
        hanging = fm.natural_modes(model, 1, load_factor=1.0)
        assert abs(hanging.eigenvalues[0] / omega_sq - 1.0) < 1e-10
        s = fm.system_matrices(fm.Assembly(model), load_factor=1.0)
        assert s.basis.shape == (s.K.shape[0], 1)
        np.testing.assert_allclose(s.basis.T @ s.basis, np.eye(1), atol=1e-12)


def test_flexible_model_with_joints_dense_and_sparse():
    """A Beam2D hanging from a revolute joint, a rigid body welded to its end: one zero mode (the
    swing, no gravity at load factor 0), the constraints eliminated on their null space."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.zeros(11), -np.linspace(0.0, 1.0, 11)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e5, EI=2.0, rho_A=1.0, rho_I=1e-3, mass="consistent")
    m.add_joint("revolute", None, int(nodes[0]), at=[0.0, 0.0])
    body = m.add_rigid_body([0.3, -1.0], 1.0, 0.01)
    m.attach(int(nodes[-1]), body)
    asm = fm.Assembly(m)
    s = fm.system_matrices(asm)
    assert s.basis.shape == (asm.n_free, asm.n_free - 5)                # revolute 2 + weld 3 equations
    dense = fm.natural_modes(asm, 6, dense_limit=10_000)
    sparse = fm.natural_modes(asm, 6, dense_limit=0)
    assert dense.n_rigid == sparse.n_rigid == 1
    np.testing.assert_allclose(sparse.eigenvalues, dense.eigenvalues, rtol=1e-9)
    np.testing.assert_allclose(np.abs(sparse.modes[1:]), np.abs(dense.modes[1:]), atol=1e-7)
    # the modes satisfy the linearised joints and are M-orthonormal
    C = asm.constraints.evaluate(np.zeros(asm.n_dof), 0.0, np.zeros(asm.constraints.n)).C.toarray()
    assert np.abs(C @ dense.modes.T).max() < 1e-10
    Phi = dense.modes[:, s.free].T
    np.testing.assert_allclose(Phi.T @ s.M @ Phi, np.eye(6), atol=1e-9)
    u = np.zeros(asm.n_dof)
    u[asm.dofs.index(int(nodes[-1]), "ux")] = 0.1
    with pytest.raises(fm.ModelError, match="u_pre violates joint 'attach node 10'"):
        fm.natural_modes(asm, 2, u_pre=u)


def test_unstable_state_gives_a_negative_eigenvalue_and_a_warning():
    """A straight pinned column at 1.5 P_cr: omega_1^2 = omega_0^2 (1 - 1.5) < 0, both solver paths
    (measured deviation 6e-5)."""
    p_cr = np.pi**2 * EI / L**2
    omega0_sq = fm.natural_modes(_beam2d(20, "pinned", second_order=True), 1).eigenvalues[0]
    asm = fm.Assembly(_beam2d(20, "pinned", second_order=True, axial_load=-1.5 * p_cr))
    u = np.zeros(asm.n_dof)
    u[asm.dofs.translations()[:, 0]] = -1.5 * p_cr * asm.model.coordinates[:, 0] / 1e5   # straight, shortened
    for limit in (10_000, 0):
        with pytest.warns(fm.FlexmbWarning, match="mode 1 has omega.2 = .* < 0"):
            modes = fm.natural_modes(asm, 2, u_pre=u, load_factor=1.0, dense_limit=limit)
        assert abs(modes.eigenvalues[0] / omega0_sq + 0.5) < 1e-3 and modes.omega[0] < 0


# ------------------------------------------------------------ participation
def test_effective_masses_sum_to_the_total_mass():
    """Sum over all modes of Gamma_ka^2 = r_a^T M r_a (a truss with diagonals and point masses)."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.array([[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 1]], dtype=float))
    m.add_truss(np.array([[0, 1], [1, 2], [3, 4], [4, 5], [0, 4], [1, 5], [1, 4], [2, 5], [3, 1]]),
                EA=1e5, rho_A=2.0, mass="consistent")
    m.add_point_mass(int(nodes[5]), 3.0)
    m.fix(int(nodes[0]))
    m.fix(int(nodes[3]), "ux")
    asm = fm.Assembly(m)
    modes = fm.natural_modes(asm, asm.n_free)
    np.testing.assert_allclose(modes.effective_masses.sum(axis=0), modes.total_mass, rtol=1e-10)
    # r_a^T M r_a by hand: a consistent bar of mass m adds m along an axis if both ends move along
    # it, m/3 if one end is held; node 0 is held in x and y, node 3 in x, and bars [0,1], [0,4]
    # touch node 0, bars [3,4], [3,1] node 3 (2 + 2 sqrt 2 kg each pair)
    total = 2.0 * (6.0 + 3.0 * np.sqrt(2.0)) + 3.0
    pair = 2.0 + 2.0 * np.sqrt(2.0)
    np.testing.assert_allclose(modes.total_mass, [total - 2.0 / 3.0 * 2 * pair, total - 2.0 / 3.0 * pair],
                               rtol=1e-12)
    # modal masses of the drawn shapes (largest translation 1): phi^T M phi
    drawn = modes.mode_shapes()
    for k in (0, 3):
        phi = np.asarray(drawn.u[k])[asm.dofs.free]
        M = fm.system_matrices(asm).M
        assert abs(phi @ (M @ phi) / modes.modal_masses[k] - 1.0) < 1e-10


# -------------------------------------------------------------- result file
def test_mode_shapes_save_and_load(tmp_path):
    modes = fm.natural_modes(_frame3d(), 4)
    path = modes.save(tmp_path / "modes.h5")
    loaded = fm.load_result(path)
    assert loaded.kind == "modes" and loaded.meta["what"] == "frequency (Hz)"
    np.testing.assert_allclose(loaded.parameter, modes.frequencies_hz)
    with pytest.raises(Exception, match="exists"):
        modes.save(path)


def test_saved_natural_modes_plot_render_and_export_from_the_command_line(tmp_path):
    from flexmb.cli import main

    path = fm.natural_modes(_frame3d(), 4).save(tmp_path / "modes.h5")
    png, history, vtu = tmp_path / "modes.png", tmp_path / "uz.png", tmp_path / "vtu"
    assert main(["render", str(path), "--out", str(png), "--size", "480x360"]) == 0
    assert main(["plot", str(path), "uz@4", "--out", str(history)]) == 0
    assert main(["export", str(path), "--vtu", str(vtu)]) == 0
    assert png.stat().st_size > 0 and history.stat().st_size > 0
    assert len(list(vtu.glob("*.vtu"))) == 4 and (vtu / "modes.pvd").exists()


# ---------------------------------------------------------------- follower load
def test_follower_load_flutter_is_reported():
    """Beck's column (cantilever, tangential tip force): flutter at P = 20.05 EI/L^2 [classical];
    at 25 EI/L^2 a complex pair of omega^2 is reported with a warning."""
    m = fm.Model(dim=3)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 9), np.zeros(9), np.zeros(9)])
    m.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, GJ=1.0, EI_y=1.0, EI_z=1.3, rho_A=1.0,
                 rho_I=(1e-4, 5e-5, 5e-5), mass="consistent", second_order=True)
    m.fix(int(nodes[0]))
    m.add_follower_force(int(nodes[-1]), [-25.0, 0.0, 0.0])
    asm = fm.Assembly(m)
    u_pre = fm.load_control(asm, 2).u[-1]
    for limit in (10_000, 0):
        with pytest.warns(fm.FlexmbWarning, match="complex pair"):
            modes = fm.natural_modes(asm, 3, u_pre=u_pre, load_factor=1.0, dense_limit=limit)
        assert modes.complex_eigenvalues.size == 1 and modes.complex_eigenvalues[0].imag > 0
        assert modes.eigenvalues.size == 3


# ---------------------------------------------------------------- bad input
def test_bad_input_gives_clear_errors():
    model = _beam2d(4)
    asm = fm.Assembly(model)
    n_free = asm.n_free
    with pytest.raises(fm.ModelError, match="n_modes"):
        fm.natural_modes(asm, 0)
    with pytest.raises(fm.ModelError, match=f"n_modes = {n_free + 1} is more than the model's {n_free} free DOFs"):
        fm.natural_modes(asm, n_free + 1)
    with pytest.raises(fm.ModelError, match=r"u_pre must have shape"):
        fm.natural_modes(asm, 2, u_pre=np.zeros(3))
    u = np.zeros(asm.n_dof)
    u[asm.dofs.index(2, "uy")] = np.nan
    with pytest.raises(fm.ModelError, match="node 2 uy"):
        fm.natural_modes(asm, 2, u_pre=u)
    with pytest.raises(fm.ModelError, match="natural_modes: load_factor"):
        fm.natural_modes(asm, 2, load_factor=np.inf)
    with pytest.raises(fm.ModelError, match="natural_modes: dense_limit"):
        fm.natural_modes(asm, 2, dense_limit=-1)
    with pytest.raises(fm.ModelError, match=r"natural_modes\(\) got an unexpected keyword 'n_mode'; "
                                            r"did you mean 'n_modes'"):
        fm.natural_modes(asm, n_mode=2)
    with pytest.raises(fm.ModelError, match="unexpected keyword 'loadfactor'"):
        fm.system_matrices(asm, loadfactor=1.0)
    model.add_point_mass(2, 1.0)                                  # the Assembly is now stale
    with pytest.raises(fm.ModelError, match="changed after its Assembly was built"):
        fm.natural_modes(asm, 2)

    massless = fm.Model(dim=2)
    nodes = massless.add_nodes(np.array([[0.0, 0.0], [1.0, 0.0]]))
    massless.add_truss([[0, 1]], EA=1.0)
    massless.fix(int(nodes[0]))
    with pytest.raises(fm.ModelError, match="no mass on its free DOFs"):
        fm.natural_modes(massless, 1)
    held = fm.Model(dim=2)
    held.add_nodes(np.array([[0.0, 0.0], [1.0, 0.0]]))
    held.add_truss([[0, 1]], EA=1.0, rho_A=1.0)
    held.fix(0)
    held.fix(1)
    with pytest.raises(fm.ModelError, match="no free DOF"):
        fm.natural_modes(held, 1)

    pendulum, _ = _pendulum()
    with pytest.raises(fm.ModelError, match="more than the model's 1 independent coordinates"):
        fm.natural_modes(pendulum, 2, load_factor=1.0)
    # a lumped beam without rotary inertia: only the translations have finite frequencies
    lumped = _beam2d(3, mass="lumped")
    with pytest.raises(fm.ModelError, match="only 6 modes have a finite frequency"):
        fm.natural_modes(lumped, 8)


def test_system_matrices_contract():
    model, _ = _pendulum()
    s = fm.system_matrices(fm.Assembly(model), load_factor=1.0)
    assert isinstance(s, SystemMatrices)
    assert s.K.format == "csc" and s.M.format == "csc" and s.K.shape == s.M.shape == (3, 3)
    np.testing.assert_allclose(s.basis.T @ s.basis, np.eye(s.basis.shape[1]), atol=1e-12)
    assert s.lagrange.shape == (2,)
    beam = fm.system_matrices(fm.Assembly(_beam2d(4)))
    assert beam.basis is None and beam.lagrange.size == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fm.natural_modes(_frame3d(), 3)                            # no warning on a plain model
