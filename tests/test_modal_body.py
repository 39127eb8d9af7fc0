"""Tests of the precomputed modal-body data (:mod:`flexmb.cms.modal_body`).

References: the kinetic energy 1/2 nu^T M nu of the FE nodal velocities of the floating-frame
kinematics nu_i = v + omega x (X_i + Phi_i q) + Phi_i q' (rotation DOFs omega + Phi_i q'); the rigid-body
mass, first moment and inertia tensor of segments and point masses (exact integrals); the
co-rotational FE linearization about the relative equilibrium of a spinning cantilever
(:func:`flexmb.relative_equilibrium`, :func:`flexmb.linearize`); the flapwise Southwell coefficient
K_1 = 1.1933 (references README, Wave 2 B [D]; classical 1.193).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import flexmb as fm
from flexmb.cms.modal_body import ModalBodyData
from flexmb.model import ModelError

K1 = 1.1933                     # references README, Wave 2 B [D]
SPIN_BOUND = 1e-2               # issue-16 brief: flap/lag frequencies within 1 % up to lambda = 5


def _frame3d(mass: str = "cubic", rho_I: tuple[float, float, float] = (0.0, 0.0, 0.0),
             point_inertia: float = 0.01) -> fm.Model:
    """A bent 3D frame: 4 elements along x, then 3 along y, then 2 along z, with a point mass and inertia."""
    pts = [(0.25 * i, 0.0, 0.0) for i in range(5)] + [(1.0, 0.2 * j, 0.0) for j in (1, 2, 3)] \
        + [(1.0, 0.6, 0.15 * k) for k in (1, 2)]
    m = fm.Model(dim=3)
    nodes = m.add_nodes(np.array(pts))
    m.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=5e4, GJ=40.0, EI_y=60.0, EI_z=90.0, rho_A=2.0, rho_I=rho_I,
                 mass=mass, y_axis=(0.3, 0.2, 1.0))
    m.add_point_mass(int(nodes[6]), 0.7, point_inertia)
    return m


def _frame2d() -> fm.Model:
    """A bent planar frame: 5 elements along x, 3 along y, a point mass with rotary inertia."""
    pts = [(0.2 * i, 0.0) for i in range(6)] + [(1.0, 0.25 * j) for j in (1, 2, 3)]
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.array(pts))
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=5e4, EI=60.0, rho_A=2.0, rho_I=0.0, mass="cubic")
    m.add_point_mass(int(nodes[7]), 0.7, 0.01)
    return m


def _fe_nodal_velocity(data: ModalBodyData, q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """nu (n_dof,) from the floating-frame kinematics, node by node (independent of the invariants)."""
    comp, dim = data.component, data.dim
    nt, nr = dim, data.n_rigid
    v3, om3 = np.zeros(3), np.zeros(3)
    v3[:nt] = w[:nt]
    if dim == 2:
        om3[2] = w[2]
    else:
        om3[:] = w[3:6]
    u, ud = data.basis @ q, data.basis @ w[nr:]
    dofs = comp.assembly.dofs
    nu = np.zeros(comp.n_dof)
    for node in range(comp.model.n_nodes):
        t_idx = [dofs.index(node, n) for n in ("ux", "uy", "uz")[:dim]]
        r = data.positions[node].copy()
        r[:dim] += u[t_idx]
        nu[t_idx] = (v3 + np.cross(om3, r))[:dim] + ud[t_idx]
        if dofs.has_rotations[node]:
            r_idx = [dofs.index(node, n) for n in (("rz",) if dim == 2 else ("rx", "ry", "rz"))]
            nu[r_idx] = (om3 if dim == 3 else om3[2:]) + ud[r_idx]
    return nu


@pytest.mark.parametrize("dim, basis, interface", [(3, "craig-bampton", (9,)), (3, "free-interface", ()),
                                                    (2, "craig-bampton", (8,)), (2, "free-interface", ())])
def test_kinetic_energy_of_invariants_equals_fe(dim: int, basis: str, interface: tuple[int, ...]) -> None:
    model = _frame3d(rho_I=(1e-3, 5e-4, 5e-4)) if dim == 3 else _frame2d()
    data = ModalBodyData.from_model(model, frame_node=2, n_modes=4, basis=basis, interface_nodes=interface)
    M = data.component.M
    rng = np.random.default_rng(7 + dim)
    n_w = data.n_rigid + data.n_modes
    for _ in range(5):
        q, w = rng.normal(scale=0.05, size=data.n_modes), rng.normal(size=n_w)
        nu = _fe_nodal_velocity(data, q, w)
        T_fe = 0.5 * nu @ (M @ nu)
        T = data.kinetic_energy(q, w)
        assert abs(T / T_fe - 1.0) < 1e-12, f"T = {T!r} vs FE {T_fe!r}: off by {T / T_fe - 1.0:.2e}"
    Phi = data.basis
    at_frame = [data.component.assembly.dofs.index(2, n) for n in model.dof_names(True)]
    assert np.abs(Phi[at_frame]).max() == 0.0
    assert np.abs(Phi.T @ (M @ Phi) - np.eye(data.n_modes)).max() < 1e-10
    Ke = Phi.T @ (data.component.K @ Phi)
    assert np.abs(Ke - data.modal_stiffness).max() < 1e-9 * Ke.max()


def test_rigid_invariants_are_mass_centroid_and_inertia_tensor() -> None:
    """m, m c and J_0 of the bent 3D frame (no section rotary inertia) against exact segment integrals."""
    model = _frame3d()
    frame = 2
    data = ModalBodyData.from_model(model, frame_node=frame, n_modes=2)
    X = model.coordinates - model.coordinates[frame]
    m_tot, mc, J = 0.0, np.zeros(3), np.zeros((3, 3))
    for a, b in itertools.pairwise(X):
        ms = 2.0 * np.linalg.norm(b - a)
        rr = (np.outer(a, a) + np.outer(b, b)) / 3.0 + (np.outer(a, b) + np.outer(b, a)) / 6.0
        m_tot, mc, J = m_tot + ms, mc + ms * (a + b) / 2.0, J + ms * (np.trace(rr) * np.eye(3) - rr)
    p = X[6]
    m_tot, mc, J = m_tot + 0.7, mc + 0.7 * p, J + 0.7 * (p @ p * np.eye(3) - np.outer(p, p)) + 0.01 * np.eye(3)
    skew = np.array([[0.0, -mc[2], mc[1]], [mc[2], 0.0, -mc[0]], [-mc[1], mc[0], 0.0]])
    assert np.abs(data.mass - m_tot * np.eye(3)).max() < 1e-12 * m_tot
    miss_c = np.abs(data.first_moment0 + skew).max() / np.abs(mc).max()
    assert miss_c < 1e-12, f"first moment off by {miss_c:.2e}"
    miss_J = np.abs(data.inertia0 - J).max() / np.abs(J).max()
    assert miss_J < 1e-12, f"inertia tensor off by {miss_J:.2e}"


@pytest.mark.parametrize("dim", [2, 3])
def test_quadratic_velocity_vector_power_and_newton_form(dim: int) -> None:
    """w^T h = 1/2 w^T M' w (kinetic energy balance); with a lumped (isotropic) mass of translations only h
    equals the Newton form B^T (M B' w + omega x (M nu)) of the FE inertia forces in the body frame. (With
    rotary inertia the two differ by the term Phi^T (omega x J psi') of the linearized nodal rotations, a
    kinematic choice: h is the Lagrange form of T = 1/2 nu^T M nu, energy-consistent by construction.)"""
    if dim == 3:
        model = _frame3d(mass="lumped", point_inertia=0.0)
    else:
        model = _frame2d()
        model.groups[0].mass = "lumped"
    data = ModalBodyData.from_model(model, frame_node=0, n_modes=3)
    rng = np.random.default_rng(3)
    n_w, nr = data.n_rigid + data.n_modes, data.n_rigid
    q, w = rng.normal(scale=0.05, size=data.n_modes), rng.normal(size=n_w)
    h = data.quadratic_velocity(q, w)
    eps = 1e-6
    M_dot = (data.mass_matrix(q + eps * w[nr:]) - data.mass_matrix(q - eps * w[nr:])) / (2.0 * eps)
    power = 0.5 * w @ M_dot @ w
    assert abs(w @ h - power) < 1e-8 * np.abs(h).max() * np.abs(w).max(), f"{w @ h!r} vs {power!r}"
    # Newton form: the columns of B(q) are the FE velocities of unit w; B' w is nu(q', (0, omega, 0)) - nu(0, ...)
    M = data.component.M.toarray()
    assert np.count_nonzero(M - np.diag(np.diag(M))) == 0, "the Newton comparison needs a lumped mass"
    B = np.column_stack([_fe_nodal_velocity(data, q, e) for e in np.eye(n_w)])
    frame_only = np.r_[np.zeros(data.dim), w[data.dim:nr], np.zeros(data.n_modes)]
    Bdot_w = _fe_nodal_velocity(data, q + w[nr:], frame_only) - _fe_nodal_velocity(data, q, frame_only)
    p = M @ (B @ w)
    om3 = np.zeros(3)
    om3[2:] = w[2:3] if dim == 2 else 0.0
    if dim == 3:
        om3 = w[3:6]
    omega_x_p = np.zeros_like(p)
    dofs = data.component.assembly.dofs
    for node in range(model.n_nodes):
        idx = [dofs.index(node, n) for n in ("ux", "uy", "uz")[:dim]]
        p3 = np.zeros(3)
        p3[:dim] = p[idx]
        omega_x_p[idx] = np.cross(om3, p3)[:dim]
    h_newton = B.T @ (M @ Bdot_w + omega_x_p)
    miss = np.abs(h - h_newton).max() / np.abs(h).max()
    assert miss < 1e-10, f"h differs from the Newton form by {miss:.2e}"


def test_gyroscopic_and_softening_match_fe_linearization_projected() -> None:
    """Lumped mass, a general spin omega through the frame node, about the unstressed reference: G and
    K_e - omega^T J_2 omega equal Phi^T C_r Phi and Phi^T K_r Phi of the FE linearization in the rotating
    frame (:func:`flexmb.linearize` with ``spin``) to round-off."""
    model = _frame3d(mass="lumped", point_inertia=0.0)
    data = ModalBodyData.from_model(model, frame_node=0, n_modes=5)
    omega = np.array([0.3, -0.5, 0.8])
    model.fix(0)
    asm = fm.Assembly(model)
    speed = float(np.linalg.norm(omega))
    lin = fm.linearize(asm, spin=(omega / speed, speed, (0.0, 0.0, 0.0)), check_equilibrium=False)
    Phi = data.basis[asm.dofs.free]
    G, K = data.spin_matrices(omega, stiffening=False)
    miss_G = np.abs(Phi.T @ (lin.C @ Phi) - G).max() / np.abs(G).max()
    miss_K = np.abs(Phi.T @ (lin.K @ Phi) - K).max() / np.abs(K).max()
    assert miss_G < 1e-12, f"gyroscopic matrix off by {miss_G:.2e}"
    assert miss_K < 1e-12, f"spin-softened stiffness off by {miss_K:.2e}"


@pytest.mark.parametrize("dim", [2, 3])
def test_mass_matrix_derivative_against_central_differences(dim: int) -> None:
    """dM/dq_k = D1[k] + sum_l q_l D2[k, l] against central differences of M(q) (M is quadratic in q,
    so the difference is exact up to round-off)."""
    data = ModalBodyData.from_model(_frame3d() if dim == 3 else _frame2d(), frame_node=4, n_modes=3)
    q = np.random.default_rng(11).normal(scale=0.1, size=data.n_modes)
    D1, D2 = data.mass_matrix_derivative()
    eps = 1e-3
    for k in range(data.n_modes):
        e = np.zeros(data.n_modes)
        e[k] = eps
        fd = (data.mass_matrix(q + e) - data.mass_matrix(q - e)) / (2.0 * eps)
        exact = D1[k] + np.einsum("l,lij->ij", q, D2[k])
        miss = np.abs(fd - exact).max() / np.abs(exact).max()
        assert miss < 1e-9, f"dM/dq_{k} off by {miss:.2e}"


def _cantilever(dim: int, n: int = 20, fixed: bool = False) -> fm.Model:
    """Uniform cantilever along x, L = 1, EI = 1 (both bending planes), rho A = 1 (lambda = Omega), L/r = 1000."""
    m = fm.Model(dim=dim)
    x = np.linspace(0.0, 1.0, n + 1)
    nodes = m.add_nodes(np.c_[x, np.zeros((n + 1, dim - 1))])
    if dim == 3:
        m.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, GJ=1.0 / 1.3, EI_y=1.0, EI_z=1.0, rho_A=1.0,
                     rho_I=(2e-6, 0.0, 0.0), mass="cubic", y_axis=(0.0, 1.0, 0.0), second_order=True)
    else:
        m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=1.0, rho_A=1.0, mass="cubic", second_order=True)
    if fixed:
        m.fix(0)
    return m


def _fe_frequencies(dim: int, speed: float, n: int) -> np.ndarray:
    """Lowest n frequencies (rad/s) of the co-rotational FE cantilever spun about z through its root."""
    asm = fm.Assembly(_cantilever(dim, fixed=True))
    spin = ((0.0, 0.0, 1.0) if dim == 3 else None, speed, np.zeros(dim))
    u = fm.relative_equilibrium(asm, spin)
    return fm.linearize(asm, u=u, spin=spin).eigen(n).omega[:n]


@pytest.mark.parametrize("dim", [2, 3])
def test_stiffened_modal_body_matches_corotational_spin(dim: int) -> None:
    """Lag (2D) or lag and flap (3D) first frequencies within 1 % of the FE linearization up to lambda = 5;
    without the geometric stiffening the flap frequency stays at omega_10 and the lag mode diverges."""
    data = ModalBodyData.from_model(_cantilever(dim), frame_node=0, n_modes=4 if dim == 3 else 2)
    n = 2 if dim == 3 else 1                                     # 3D: lag 1 < flap 1; 2D: lag 1
    for speed in (1.0, 3.0, 5.0):
        modal = data.spin_omega(np.array([0.0, 0.0, speed]))[:n]
        fe = _fe_frequencies(dim, speed, n)
        miss = np.abs(modal / fe - 1.0).max()
        assert miss < SPIN_BOUND, f"lambda = {speed}: modal {modal} vs FE {fe}, off by {miss:.2%}"
    linear = data.spin_omega(np.array([0.0, 0.0, 5.0]), stiffening=False)
    assert linear[0] < 0.0, f"without stiffening the lag mode must diverge at lambda = 5 > 3.516, got {linear}"
    if dim == 3:
        omega10 = data.omega[0]
        assert abs(linear[1] / omega10 - 1.0) < 1e-9, "unstiffened flap frequency must stay omega_10"
        assert linear[1] < 0.6 * fe[1], f"unstiffened flap {linear[1]:.4f} vs FE {fe[1]:.4f}"


def test_southwell_coefficient_of_stiffened_modal_body() -> None:
    """Flap mode 1: omega_1^2 = omega_10^2 + K_1 Omega^2 at low speed, K_1 = 1.1933 within 1 %."""
    data = ModalBodyData.from_model(_cantilever(3), frame_node=0, n_modes=4)
    omega10 = data.omega[0]
    low = np.array([0.25, 0.5])
    # flap is the upper of the first two (lag is softened by Omega^2)
    flap_sq = np.array([data.spin_omega(np.array([0.0, 0.0, s]))[1] ** 2 for s in low]) - omega10**2
    k1 = float(np.polyfit(low**2, flap_sq / low**2, 1)[1])
    assert abs(k1 / K1 - 1.0) < 1e-2, f"K1 = {k1:.5f} vs {K1}: off by {k1 / K1 - 1.0:.2%}"
    assert abs(omega10 / (1.87510407**2) - 1.0) < 1e-3, f"omega_10 = {omega10:.6f} vs Euler-Bernoulli 3.516015"


@pytest.mark.parametrize("g", [3.0, -3.0])
def test_frame_acceleration_case_matches_prestressed_fe(g: float) -> None:
    """A frame accelerating at a = -g e_x is the cantilever under gravity g e_x (hanging: tension, standing:
    compression, g L^3 rho A / EI = 3 of the self-weight buckling value 7.837): the first two frequencies of
    K_e + a K_G,a_x within 0.1 % of the FE natural modes about the pre-loaded state."""
    data = ModalBodyData.from_model(_cantilever(2), frame_node=0, n_modes=3)
    model = _cantilever(2, fixed=True)
    model.set_gravity([g, 0.0])
    path = fm.load_control(model, 4)
    fe = fm.natural_modes(model, 2, u_pre=path.u[-1], load_factor=1.0).frequencies_hz * 2.0 * np.pi
    modal = np.sqrt(np.linalg.eigvalsh(data.modal_stiffness + data.geometric_stiffness_at({"a_x": -g})))[:2]
    miss = np.abs(modal / fe - 1.0).max()
    assert miss < 1e-3, f"g = {g}: modal {modal} vs FE {fe}, off by {miss:.2e}"
    bare = data.omega[0]
    assert (modal[0] - bare) * g > 0.1 * abs(g), f"omega_1 {modal[0]:.4f} must move from {bare:.4f} with the load"


def test_bad_requests_are_refused() -> None:
    model = _cantilever(2)
    with pytest.raises(ModelError, match="basis"):
        ModalBodyData.from_model(model, 0, 2, basis="mean-axis")
    with pytest.raises(ModelError, match="craig-bampton"):
        ModalBodyData.from_model(model, 0, 2, basis="free-interface", interface_nodes=[5])
    data = ModalBodyData.from_model(model, 0, 2)
    with pytest.raises(ModelError, match="unknown load case"):
        data.geometric_stiffness_at({"ww_xy": 1.0})


def test_bodies_made_from_the_same_data_share_their_velocity_fields(tmp_path):
    """The velocity fields of a modal body depend on its data and on stiffening only: bodies and
    models made from the same data share them (computed once), stiffened and plain ones apart;
    a model file does not carry the kept ones, and the rebuilt body computes its own, equal."""
    data = ModalBodyData.from_model(_frame2d(), frame_node=4, n_modes=3)
    bodies = []
    for stiffening in (True, True, False):
        m = fm.Model(dim=2)
        bodies.append(m.add_modal_body(data, stiffening=stiffening))
    assert bodies[0].velocity_fields is bodies[1].velocity_fields
    assert bodies[2].velocity_fields is not bodies[0].velocity_fields
    assert bodies[2].velocity_fields.G.shape[0] < bodies[0].velocity_fields.G.shape[0]
    m.save(tmp_path / "body.h5")
    rebuilt = fm.load_model(tmp_path / "body.h5").groups[0]
    assert "_kept_velocity_fields" not in vars(rebuilt.data)
    assert np.array_equal(rebuilt.velocity_fields.G, bodies[2].velocity_fields.G)
