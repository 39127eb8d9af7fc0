"""Ties of main-model nodes to interface nodes of a modal body (:mod:`flexmb.multibody.ties`) and the
interface-force unit-load geometric stiffness (:func:`flexmb.cms.modal_body.interface_geometric_stiffness`).

References: central differences of the tie equations and of the tie force (C, K); the exact
discrete-gradient identity G_m (u1 - u0) = phi(u1) - phi(u0) of the mid-point form; the co-rotational
FE cantilever (20 Beam2D elements, second-order strains) as the reference of the prestressed
frequencies and of the geometrically nonlinear static tip deflection; energy conservation of the
mid-point scheme with Lagrange multipliers (Crisfield & Shi 1993) for the dynamics.
"""
from __future__ import annotations

from functools import cache

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import flexmb as fm
from flexmb.cms.floating_frame import ModalBody
from flexmb.cms.modal_body import ModalBodyData, interface_geometric_stiffness
from flexmb.model import ModelError
from flexmb.multibody.ties import TieKinematics

TIP = 20                     # tip node of the 20-element cantilever


def _cantilever(n: int = 20, fixed: bool = False, EI: float = 1.0) -> fm.Model:
    """Uniform beam along x, L = 1 m, EI = 1 N m^2 (default), EA = 1e6 EI, rho A = 1 kg/m (Euler-Bernoulli
    omega_1 = 3.516 sqrt(EI) rad/s)."""
    m = fm.Model(dim=2)
    x = np.linspace(0.0, 1.0, n + 1)
    nodes = m.add_nodes(np.c_[x, np.zeros(n + 1)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6 * EI, EI=EI, rho_A=1.0, mass="cubic", second_order=True)
    if fixed:
        m.fix(0)
    return m


@cache
def _data(interface: bool, n_modes: int = 4, EI: float = 1.0) -> ModalBodyData:
    """The cantilever reduced at its root (node 0): frame-clamped modes, with the tip as a
    Craig-Bampton interface node if ``interface``."""
    return ModalBodyData.from_model(_cantilever(EI=EI), frame_node=0, n_modes=n_modes,
                                    interface_nodes=(TIP,) if interface else ())


def _tied_model(weld: bool, stiffening: bool = True) -> tuple[fm.Model, ModalBody, int]:
    """The modal cantilever on a frame node at (0.3, -0.2) with its tip tied to a node: a plain node
    (a pin) or a rigid body's node (a weld)."""
    model = fm.Model(dim=2)
    frame = model.add_node([0.3, -0.2])
    body = model.add_modal_body(_data(True), node=frame, stiffening=stiffening, name="arm")
    if weld:
        node = model.add_rigid_body([1.3, -0.2], 0.4, 0.01).node
    else:
        node = model.add_node([1.3, -0.2])
        model.add_point_mass(node, 0.4)
    model.tie(node, body, TIP)
    return model, body, node


def _random_state(asm: fm.Assembly, rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    """Displacements of order ``scale`` m / rad and modal coordinates of order 0.05 scale."""
    u = rng.normal(scale=scale, size=asm.n_dof)
    u[asm.dofs.n_node_dofs:] *= 0.05
    return u


@pytest.mark.parametrize("weld", [False, True])
def test_tie_jacobian_and_tangent_against_central_differences(weld: bool) -> None:
    """End-point form: C = dphi/du and K = d(C^T lambda)/du against central differences (< 1e-6)."""
    model, _, _ = _tied_model(weld)
    asm = fm.Assembly(model)
    cs = asm.constraints
    assert cs.n == (3 if weld else 2)
    rng = np.random.default_rng(5)
    u, lam = _random_state(asm, rng), rng.normal(size=cs.n)
    ct = cs.evaluate(u, 0.0, lam)
    eps = 1e-6
    eye = np.eye(asm.n_dof)
    C_fd = np.column_stack([(cs.values(u + eps * e, 0.0) - cs.values(u - eps * e, 0.0)) / (2 * eps) for e in eye])
    miss_C = np.abs(ct.C.toarray() - C_fd).max() / np.abs(C_fd).max()
    assert miss_C < 1e-6, f"C off by {miss_C:.2e}"
    force = lambda x: cs.evaluate(x, 0.0, lam).force
    K_fd = np.column_stack([(force(u + eps * e) - force(u - eps * e)) / (2 * eps) for e in eye])
    miss_K = np.abs(ct.K.toarray() - K_fd).max() / np.abs(K_fd).max()
    assert miss_K < 1e-6, f"K off by {miss_K:.2e}"
    assert np.abs(ct.force - ct.C.T @ lam).max() < 1e-12 * np.abs(ct.force).max()


@pytest.mark.parametrize("weld", [False, True])
def test_mid_point_discrete_gradient_is_exact_for_large_steps(weld: bool) -> None:
    """G_m (u1 - u0) = phi(u1) - phi(u0) to round-off for steps of up to 2.5 rad of the frame and large
    modal increments (so the tie force does no work over a step), and K = d(G_m^T lambda)/du1
    against central differences."""
    model, _, _ = _tied_model(weld)
    asm = fm.Assembly(model)
    cs = asm.constraints
    rng = np.random.default_rng(8)
    frame_rz = asm.dofs.index(int(model.groups[0].connectivity[0, 0]), "rz")
    for turn in (1e-6, 0.3, 2.5):
        u0 = _random_state(asm, rng)
        u1 = u0 + _random_state(asm, rng)
        u1[frame_rz] = u0[frame_rz] + turn
        lam = rng.normal(size=cs.n)
        ct = cs.evaluate(u1, 0.0, lam, u0=u0, d=u1 - u0, t0=0.0)
        change = cs.values(u1, 0.0) - cs.values(u0, 0.0)
        miss = np.abs(ct.G @ (u1 - u0) - change).max() / np.abs(change).max()
        assert miss < 1e-13, f"dtheta = {turn}: G_m d misses phi1 - phi0 by {miss:.2e}"
        def force(x: np.ndarray, lam: np.ndarray = lam, u0: np.ndarray = u0) -> np.ndarray:
            return cs.evaluate(x, 0.0, lam, u0=u0, d=x - u0, t0=0.0).force

        eps = 1e-6
        K_fd = np.column_stack([(force(u1 + eps * e) - force(u1 - eps * e)) / (2 * eps) for e in np.eye(asm.n_dof)])
        miss_K = np.abs(ct.K.toarray() - K_fd).max() / np.abs(K_fd).max()
        assert miss_K < 1e-6, f"dtheta = {turn}: mid-point K off by {miss_K:.2e}"


@pytest.mark.parametrize("weld", [False, True])
def test_tie_kinematics_with_general_interface_stiffness(weld: bool) -> None:
    """The equations of one tie with random basis rows and random symmetric K_F,x, K_F,y, K_F,r (a beam's
    tip moment case is zero, so the rotation row's second-order term is checked here): C, K, the
    mid-point identity and the mid-point K against central differences."""
    rng = np.random.default_rng(3)
    n_m = 3
    K_F = rng.normal(size=(3, n_m, n_m))
    K_F = K_F + K_F.transpose(0, 2, 1)
    tie = TieKinematics(np.array([1.0, 0.2]), np.array([0.1, 0.3]), np.array([0.9, -0.1]), rng.normal(size=(2, n_m)),
                        rng.normal(size=n_m), K_F, weld)
    y0 = rng.normal(size=tie.n_cols)
    y1 = y0 + rng.normal(size=tie.n_cols)
    lam = rng.normal(size=tie.n_rows)
    eps, eye = 1e-6, np.eye(tie.n_cols)

    def fd(f, y):
        return np.column_stack([(f(y + eps * e) - f(y - eps * e)) / (2 * eps) for e in eye])

    C, K = tie.end_point(y1, lam)
    G, K_m = tie.mid_point(y0, y1, lam)
    checks = {"C": (C, fd(tie.values, y1)),
              "K": (K, fd(lambda y: tie.end_point(y, lam)[0].T @ lam, y1)),
              "mid-point K": (K_m, fd(lambda y: tie.mid_point(y0, y, lam)[0].T @ lam, y1))}
    for what, (exact, approx) in checks.items():
        miss = np.abs(exact - approx).max() / np.abs(approx).max()
        assert miss < 1e-6, f"{what} off by {miss:.2e}"
    change = tie.values(y1) - tie.values(y0)
    assert np.abs(G @ (y1 - y0) - change).max() < 1e-13 * np.abs(change).max()


@pytest.mark.parametrize("F", [2.0, -1.0])
def test_interface_force_case_matches_prestressed_fe(F: float) -> None:
    """An axial tip force F on the cantilever (tension 2 N; compression 1 N = 0.41 of the Euler load
    pi^2 EI / (4 L^2)): the first two frequencies of K_e + F K_F,x within 0.1 % of the FE natural modes
    about the pre-loaded state (measured <= 1.1e-4 with 4 modes)."""
    data = _data(False)
    K_F = interface_geometric_stiffness(data, TIP)
    assert K_F.shape == (3, data.n_modes, data.n_modes)
    model = _cantilever(fixed=True)
    model.add_load(TIP, "ux", F)
    path = fm.load_control(model, 4)
    fe = fm.natural_modes(model, 2, u_pre=path.u[-1], load_factor=1.0).frequencies_hz * 2.0 * np.pi
    modal = np.sqrt(np.linalg.eigvalsh(data.modal_stiffness + F * K_F[0]))[:2]
    miss = np.abs(modal / fe - 1.0).max()
    assert miss < 1e-3, f"F = {F}: modal {modal} vs FE {fe}, off by {miss:.2e}"
    bare = data.omega[0]
    assert (modal[0] - bare) * F > 0.1 * abs(F), f"omega_1 {modal[0]:.4f} must move from {bare:.4f} with the load"


def _static_solve(asm: fm.Assembly) -> tuple[np.ndarray, np.ndarray]:
    """Newton on the end-point equilibrium with the ties' multipliers (statics refuses joints and ties
    so far): r(u) + C^T lambda = 0 on the free DOFs, phi(u) = 0, with the constraint system's augmented
    matrix."""
    cs, free = asm.constraints, asm.dofs.free
    u, lam = np.zeros(asm.n_dof), np.zeros(cs.n)
    for _ in range(30):
        r, k_data, _ = asm.static_residual(u, 1.0)
        ct = cs.evaluate(u, 1.0, lam)
        R = np.r_[(r + ct.force)[free], ct.phi]
        if np.abs(R).max() < 1e-12:
            return u, lam
        x = spla.spsolve(cs.augmented(ct, asm.free_matrix(k_data), asm.dofs.free_position, 1.0, 1.0).tocsc(), -R)
        du = np.zeros(asm.n_dof)
        du[free] = x[:free.size]
        u = asm.update(u, du)                           # spins at 3D rotations (tests/test_modal_ties3d.py)
        lam += x[free.size:]
    raise AssertionError(f"static Newton did not converge: |R| = {np.abs(R).max():.2e}")


def test_static_tip_load_through_tied_node_matches_nonlinear_fe() -> None:
    """Root clamped, a tip load (-P, F) = (-1, 0.01) N through the tied node (compression 0.41 of the
    Euler load: the P-delta effect amplifies the deflection by 1.67): with the interface stiffening the
    tip deflection within 1e-3 of the co-rotational FE solution (measured 4e-5), the tip's axial
    displacement (second-order shortening) within 1e-3 (measured 6e-5); without it the deflection is
    the linear one, 40 % short; the tie passes the load: its force on the node is minus the load."""
    P, F = 1.0, 0.01
    fe = _cantilever(fixed=True)
    fe.add_load(TIP, "ux", -P)
    fe.add_load(TIP, "uy", F)
    u_fe = fm.load_control(fe, 10).u[-1]
    dofs_fe = fm.Assembly(fe).dofs
    ux_fe, uy_fe = u_fe[dofs_fe.index(TIP, "ux")], u_fe[dofs_fe.index(TIP, "uy")]
    for stiffening in (True, False):
        model, body, node = _tied_model(weld=False, stiffening=stiffening)
        model.fix(int(body.connectivity[0, 0]))
        model.add_load(node, "ux", -P)
        model.add_load(node, "uy", F)
        asm = fm.Assembly(model)
        u, lam = _static_solve(asm)
        ux, uy = u[asm.dofs.index(node, "ux")], u[asm.dofs.index(node, "uy")]
        if stiffening:
            assert abs(uy / uy_fe - 1.0) < 1e-3, f"tip deflection {uy:.6e} vs FE {uy_fe:.6e}"
            assert abs(ux / ux_fe - 1.0) < 1e-3, f"tip shortening {ux:.6e} vs FE {ux_fe:.6e}"
        else:
            assert abs(uy / (F / 3.0) - 1.0) < 1e-3, f"unstiffened deflection {uy:.6e} vs linear {F / 3.0:.6e}"
            assert uy / uy_fe - 1.0 < -0.3, "without stiffening the P-delta amplification must be missing"
        force, moment = asm.constraints.tie_reactions(lam)[0]
        assert np.abs(force - [P, -F]).max() < 1e-12 and moment.size == 0, f"tie force on the node {force}"


def _tip_mass_roots(mu: float, brackets: tuple[tuple[float, float], ...]) -> np.ndarray:
    """beta L of a cantilever with a tip mass mu rho A L: 1 + cos cosh + mu bL (cos sinh - sin cosh) = 0
    (Euler-Bernoulli; Blevins 1979, table 8-8)."""
    from scipy.optimize import brentq

    f = lambda b: 1.0 + np.cos(b) * np.cosh(b) + mu * b * (np.cos(b) * np.sinh(b) - np.sin(b) * np.cosh(b))
    return np.array([brentq(f, *ab) for ab in brackets])


def test_tied_tip_mass_frequencies_match_closed_form() -> None:
    """Root clamped, a 0.5 kg point mass on the node tied to the tip (mass ratio 0.5): the natural modes
    of the constrained system (on the ties' null space) give the first two bending frequencies of the
    Euler-Bernoulli cantilever with a tip mass within 1e-4 (measured 6e-7 and 2.2e-6)."""
    model = fm.Model(dim=2)
    body = model.add_modal_body(_data(True), name="arm")
    model.fix(int(body.connectivity[0, 0]))
    tip = model.add_node([1.0, 0.0])
    model.tie(tip, body, TIP)
    model.add_point_mass(tip, 0.5)
    f = fm.natural_modes(model, 2).frequencies_hz
    exact = _tip_mass_roots(0.5, ((0.5, 1.87), (2.0, 4.69))) ** 2 / (2.0 * np.pi)      # EI = rho A = L = 1
    miss = np.abs(f / exact - 1.0).max()
    assert miss < 1e-4, f"tied tip mass: {f} Hz vs closed form {exact} Hz, off by {miss:.2e}"


def _pendulum(hinged_body: bool) -> fm.Assembly:
    """The modal cantilever (EI = 100 N m^2: static sag under its weight 1 % of L; tip interface modes,
    stiffened) pinned to ground at its frame node, under gravity, with a 0.3 kg point mass tied at
    its tip or a rigid bar (0.3 kg, 0.5 m) hinged at the tip through a tied node."""
    model = fm.Model(dim=2)
    body = model.add_modal_body(_data(True, 3, EI=100.0), name="arm")
    model.add_joint("revolute", None, int(body.connectivity[0, 0]))
    tip = model.add_node([1.0, 0.0])
    model.tie(tip, body, TIP)
    if hinged_body:
        bar = model.add_rigid_body([1.0, -0.25], 0.3, 0.3 * 0.5**2 / 12.0)
        model.add_joint("revolute", tip, bar, at=[1.0, 0.0])
    else:
        model.add_point_mass(tip, 0.3)
    model.set_gravity([0.0, -9.81])
    return fm.Assembly(model)


@pytest.mark.parametrize("hinged_body", [False, True])
def test_pendulum_with_tied_tip_conserves_energy(hinged_body: bool) -> None:
    """Released horizontal, 3 s in 60 steps (dt = 0.05 s = 1.8 / omega_1 of the body, whose modes are not
    resolved: the scheme stays stable and conservative with large steps): the
    mid-point scheme keeps E = T + V constant to 1e-8 of the largest T (measured <= 1e-11) and the tie and joints on
    within 1e-10 m every step (measured 5e-13)."""
    asm = _pendulum(hinged_body)
    history = fm.integrate(asm, dt=0.05, t_end=3.0)
    # the recorded work includes the constraint forces' (for driven joints): take it out, so that E is
    # K + V alone and a tie force doing work shows (an end-point G in the mid-point form: 0.5 K_max)
    u, force = np.array(history.u), np.array(history.constraint_force)
    constraint_work = np.r_[0.0, np.cumsum(-np.einsum("ki,ki->k", force[1:], np.diff(u, axis=0)))]
    energy = history.total + constraint_work
    error = np.abs(energy - energy[0]).max() / max(history.kinetic)
    assert error < 1e-8, f"energy error {error:.2e}"
    residual = np.max(history.constraint_residual)
    assert residual < 1e-10, f"tie/joint residual {residual:.2e} m"
    tip = asm.model.ties[0].node
    lowest = np.array(history.u)[:, asm.dofs.index(tip, "uy")].min()
    assert lowest < -0.9, f"the arm must swing through the bottom, the tip went down only {-lowest:.3f} m"


def test_bad_ties_are_refused() -> None:
    model, body, node = _tied_model(weld=False)
    free = model.add_node([1.3, -0.2])
    with pytest.raises(ModelError, match=r"body_node must be a node of the body's FE model \(0..20\), got 21"):
        model.tie(free, body, 21)
    with pytest.raises(ModelError, match="body node 0 is the body's frame node"):
        model.tie(free, body, 0)
    with pytest.raises(ModelError, match="node 0 is the body's frame node itself"):
        model.tie(0, body, 10)
    with pytest.raises(ModelError, match=r"node 2 is at \[1.3, -0.2\], the body node 10 at \[0.8, -0.2\]"):
        model.tie(free, body, 10)
    with pytest.raises(ModelError, match="already tied"):
        model.tie(node, body, TIP)
    with pytest.raises(ModelError, match="must be a modal body of this model"):
        model.tie(free, model.groups[0].name, TIP)
    with pytest.raises(ModelError, match="is the frame node"):
        interface_geometric_stiffness(_data(True), 0)


def test_weld_needs_a_rotation_at_the_body_node() -> None:
    """A truss-only node of the body (no rotation DOF) cannot take a welded (rotating) node."""
    fe = _cantilever()
    extra = fe.add_node([0.9, 0.1])
    fe.add_truss([[18, extra], [TIP, extra]], EA=1e4, rho_A=0.1)
    data = ModalBodyData.from_model(fe, frame_node=0, n_modes=3)
    model = fm.Model(dim=2)
    body = model.add_modal_body(data, name="arm")
    bar = model.add_rigid_body([0.9, 0.1], 0.3, 0.01)
    tie = model.tie(bar.node, body, extra)
    assert tie.label == f"tie of node {bar.node} to modal body 'arm' node {extra}"
    with pytest.raises(ModelError, match=f"the body's node {extra} has no rotation DOF"):
        fm.Assembly(model)


def test_violated_tie_is_named() -> None:
    """A start state that moves the tied node off the body node: the initial-state check names the tie."""
    model, _, node = _tied_model(weld=False)
    asm = fm.Assembly(model)
    u0 = np.zeros(asm.n_dof)
    u0[asm.dofs.index(node, "uy")] = 1e-3
    with pytest.raises(ModelError, match=r"initial positions violate tie of node 1 to modal body 'arm' node 20 "
                                         r"\(equation 1\) by 0.001"):
        fm.integrate(asm, dt=0.01, t_end=0.02, u0=u0)


def test_redundant_ties_are_named() -> None:
    """Two nodes tied to the same body node and both fixed, with the frame fixed: the ties' equations repeat
    each other, and the redundancy check at the start names a tie."""
    model, body, node = _tied_model(weld=False)
    other = model.add_node([1.3, -0.2])
    model.tie(other, body, TIP)
    for n in (int(body.connectivity[0, 0]), node, other):
        model.fix(n)
    with pytest.raises(ModelError, match=r"redundant at the start \(2 of 4 .* e.g. in tie of node [12] to modal "
                                         r"body 'arm' node 20"):
        fm.integrate(fm.Assembly(model), dt=0.01, t_end=0.02)
