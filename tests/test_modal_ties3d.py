"""Ties of main-model nodes to interface nodes of a 3D modal body (:class:`flexmb.multibody.ties.TieKinematics3D`).

References: central differences of the tie equations and of the tie force (C, K with spins at the
rotations; the mid-point K with Cayley increments); the exact discrete-gradient identity
G_m d = phi(u1) - phi(u0) at large rotations; the FE cantilever (Beam3D) for a static tip load;
energy conservation of the mid-point scheme with Lagrange multipliers for the dynamics.
"""
from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from test_modal_ties import _static_solve

import flexmb as fm
from flexmb.cms.modal_body import ModalBodyData
from flexmb.model import ModelError
from flexmb.multibody.ties import TieKinematics3D
from flexmb.rotations import cayley_between, cayley_compose, compose, exp_map, log_map

N_FE = 6                     # Beam3D elements of the body's FE model; the tip is node N_FE
EI_Z, EI_Y, EA, GJ, RHO_A = 2.0, 3.0, 2e3, 1.5, 0.5     # N m^2, N m^2, N, N m^2, kg/m; L = 1 m


def _cantilever(fixed: bool = False) -> fm.Model:
    """A uniform Beam3D cantilever along x, L = 1 m, root node 0 (clamped if ``fixed``)."""
    m = fm.Model(dim=3)
    x = np.linspace(0.0, 1.0, N_FE + 1)
    nodes = m.add_nodes(np.c_[x, np.zeros_like(x), np.zeros_like(x)])
    m.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=EA, GJ=GJ, EI_y=EI_Y, EI_z=EI_Z, rho_A=RHO_A,
                 rho_I=(1e-4, 0.0, 0.0), mass="consistent", y_axis=(0.0, 1.0, 0.0))
    if fixed:
        m.fix(0)
    return m


@cache
def _data(n_modes: int = 3) -> ModalBodyData:
    """The cantilever reduced at its root, the tip a Craig-Bampton interface node (its 6 static
    constraint modes plus ``n_modes`` fixed-interface modes)."""
    return ModalBodyData.from_model(_cantilever(), frame_node=0, n_modes=n_modes, interface_nodes=(N_FE,),
                                    name="blade")


# ----------------------------------------------------------------------------------------- kinematics
def _tie(weld: bool, rng: np.random.Generator, n_m: int = 3) -> TieKinematics3D:
    """One tie with random basis rows and random symmetric K_F (all six cases nonzero)."""
    K_F = rng.normal(size=(6, n_m, n_m))
    K_F = K_F + K_F.transpose(0, 2, 1)
    X_f, X_i = np.array([0.1, 0.3, -0.2]), np.array([0.9, -0.1, 0.2])
    return TieKinematics3D(X_f + X_i, X_f, X_i, rng.normal(size=(3, n_m)), rng.normal(size=(3, n_m)), K_F, weld)


def _rotation_slots(tie: TieKinematics3D) -> list[slice]:
    return [tie.i_p, tie.i_nr] if tie.weld else [tie.i_p]


def _spun(tie: TieKinematics3D, y: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """y moved by dy: translations and q add, rotations take the spin (R <- exp(hat(dy)) R)."""
    out = y + dy
    for s in _rotation_slots(tie):
        out[s] = compose(dy[s][None], y[s][None])[0]
    return out


def _stepped(tie: TieKinematics3D, y0: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The end of a step with increment d: rotations R1 = cay(d) R0."""
    out = y0 + d
    for s in _rotation_slots(tie):
        out[s] = cayley_compose(d[s][None], y0[s][None])[0]
    return out


def _increment(tie: TieKinematics3D, y0: np.ndarray, y1: np.ndarray) -> np.ndarray:
    d = y1 - y0
    for s in _rotation_slots(tie):
        d[s] = cayley_between(y0[s][None], y1[s][None])[0]
    return d


def _large_state(tie: TieKinematics3D, rng: np.random.Generator) -> np.ndarray:
    """Random y with rotation vectors of length ~2 rad and modal coordinates ~0.1."""
    y = rng.normal(size=tie.n_cols)
    for s in _rotation_slots(tie):
        y[s] *= 2.0 / np.linalg.norm(y[s])
    y[tie.i_q] *= 0.1
    return y


def _central(f, y: np.ndarray, move, n: int, eps: float = 1e-6) -> np.ndarray:
    """Central differences of f along the n unit increments applied by move(y, dy)."""
    return np.column_stack([(f(move(y, eps * e)) - f(move(y, -eps * e))) / (2 * eps) for e in np.eye(n)])


def _assert_close(exact: np.ndarray, approx: np.ndarray, what: str, tol: float = 1e-6) -> None:
    miss = np.abs(exact - approx).max() / np.abs(approx).max()
    assert miss < tol, f"{what} off by {miss:.2e}"


@pytest.mark.parametrize("weld", [False, True])
def test_tie_holds_at_reference_and_jacobians_match_central_differences(weld: bool) -> None:
    """phi = 0 at y = 0; at a state with ~2 rad rotations C = dphi/d(spin) and K = d(C^T lambda)/d(spin)
    against central differences (< 1e-6)."""
    rng = np.random.default_rng(11)
    tie = _tie(weld, rng)
    assert tie.n_rows == (6 if weld else 3)
    assert np.abs(tie.values(np.zeros(tie.n_cols))).max() < 1e-15
    y, lam = _large_state(tie, rng), rng.normal(size=tie.n_rows)
    C, K = tie.end_point(y, lam)
    move = lambda x, dx: _spun(tie, x, dx)
    _assert_close(C, _central(tie.values, y, move, tie.n_cols), "C")
    _assert_close(K, _central(lambda x: tie.end_point(x, lam)[0].T @ lam, y, move, tie.n_cols), "K")


@pytest.mark.parametrize("weld", [False, True])
def test_mid_point_discrete_gradient_is_exact_at_large_rotations(weld: bool) -> None:
    """From states with |psi| ~ 2 rad, steps with Cayley parameters |w| ~ 1 (and up to 3) at the frame and
    node rotations: G_m d = phi1 - phi0 to round-off, and the mid-point K = d(G_m^T lambda)/dd and
    d phi(y1)/dd against central differences in d."""
    rng = np.random.default_rng(12)
    tie = _tie(weld, rng)
    for size in (1e-5, 1.0, 3.0):
        y0 = _large_state(tie, rng)
        d = rng.normal(size=tie.n_cols)
        for s in _rotation_slots(tie):
            d[s] *= size / np.linalg.norm(d[s])
        d[tie.i_q] *= 0.1
        y1 = _stepped(tie, y0, d)
        np.testing.assert_allclose(_increment(tie, y0, y1), d, rtol=1e-10, atol=1e-14)
        lam = rng.normal(size=tie.n_rows)
        G, K = tie.mid_point(y0, y1, lam)
        change = tie.values(y1) - tie.values(y0)
        miss = np.abs(G @ d - change).max() / np.abs(change).max()
        assert miss < 1e-12, f"|w| = {size}: G_m d misses phi1 - phi0 by {miss:.2e}"
        def force(dd: np.ndarray, y0: np.ndarray = y0, lam: np.ndarray = lam) -> np.ndarray:
            return tie.mid_point(y0, _stepped(tie, y0, dd), lam)[0].T @ lam

        _assert_close(K, _central(force, d, lambda x, dx: x + dx, tie.n_cols), f"|w| = {size}: mid-point K")
        # the Newton matrix's constraint rows: d phi(y1)/dd = C(y1) T(w)
        C1 = tie.end_point(y1, lam)[0] @ tie.increment_map(y0, y1)
        _assert_close(C1, _central(lambda dd, y0=y0: tie.values(_stepped(tie, y0, dd)), d, lambda x, dx: x + dx,
                                   tie.n_cols), f"|w| = {size}: d phi1/dd")


def _on_tie(tie: TieKinematics3D, rng: np.random.Generator) -> np.ndarray:
    """A random state satisfying the tie: frame at ~2 rad, node n placed and turned to the body node."""
    y = _large_state(tie, rng)
    R = exp_map(y[tie.i_p][None])[0]
    q = y[tie.i_q]
    y[tie.i_n] = tie.X_f + y[tie.i_f] + R @ tie.point(q) - tie.X_n
    if tie.weld:
        p = tie.rotation(q)                                    # = sin|theta| theta/|theta|, |p| < 1
        theta = np.arcsin(np.linalg.norm(p)) * p / np.linalg.norm(p)
        y[tie.i_nr] = log_map((R @ exp_map(theta[None])[0])[None])[0]
    return y


@pytest.mark.parametrize("weld", [False, True])
def test_tie_force_does_no_work_over_a_step_between_tied_states(weld: bool) -> None:
    """Both ends on the tie (large frame turn between them): the mid-point tie force G_m^T lambda does
    no work over the step, (G_m^T lambda) . d = lambda . (phi1 - phi0) = 0 (to round-off)."""
    rng = np.random.default_rng(13)
    tie = _tie(weld, rng)
    y0, y1 = _on_tie(tie, rng), _on_tie(tie, rng)
    assert np.abs(tie.values(y0)).max() < 1e-12 and np.abs(tie.values(y1)).max() < 1e-12
    lam = rng.normal(size=tie.n_rows)
    G, _ = tie.mid_point(y0, y1, lam)
    force = G.T @ lam
    d = _increment(tie, y0, y1)
    work = force @ d
    assert abs(work) < 1e-12 * np.abs(force).max() * np.abs(d).max(), f"tie work {work:.2e} J"


# ----------------------------------------------------------------------------------------- in a model
def _swinging_model(weld: bool) -> tuple[fm.Model, int, int]:
    """The body on a spherical joint at its frame node, its tip tied to a 0.3 kg point mass or to a
    small rigid body, under gravity; returns the model, the frame node and the tied node."""
    model = fm.Model(dim=3)
    body = model.add_modal_body(_data(2), name="blade")
    frame = int(body.connectivity[0, 0])
    model.add_joint("spherical", None, frame)
    if weld:
        tip = model.add_rigid_body([1.0, 0.0, 0.0], 0.3, (2e-3, 1e-3, 1e-3)).node
    else:
        tip = model.add_node([1.0, 0.0, 0.0])
        model.add_point_mass(tip, 0.3)
    model.tie(tip, body, N_FE)
    model.set_gravity((0.0, 0.0, -9.81))
    return model, frame, tip


@pytest.mark.parametrize("weld", [False, True])
def test_constraint_system_mid_point_terms_against_central_differences(weld: bool) -> None:
    """Through the assembled constraint system (spherical joint and tie rows): over a step with Cayley
    increments ~0.5 rad, G d = phi1 - phi0, and the force's K and the Newton rows C = d phi1/dd against
    central differences in the step increment d (end of step ``Assembly.cayley_update(u0, d)``)."""
    model, _, _ = _swinging_model(weld)
    asm = fm.Assembly(model)
    cs = asm.constraints
    rng = np.random.default_rng(21)
    u0, d = rng.normal(scale=0.5, size=asm.n_dof), rng.normal(scale=0.5, size=asm.n_dof)
    lam = rng.normal(size=cs.n)
    u1 = asm.cayley_update(u0, d)
    ct = cs.evaluate(u1, 0.0, lam, u0=u0, d=d, t0=0.0)
    change = cs.values(u1, 0.0) - cs.values(u0, 0.0)
    assert np.abs(ct.G @ d - change).max() < 1e-12 * np.abs(change).max()
    terms = lambda dd: cs.evaluate(asm.cayley_update(u0, dd), 0.0, lam, u0=u0, d=dd, t0=0.0)
    plus = lambda x, dx: x + dx
    _assert_close(ct.K.toarray(), _central(lambda dd: terms(dd).force, d, plus, asm.n_dof), "K")
    _assert_close(ct.C.toarray(), _central(lambda dd: terms(dd).phi, d, plus, asm.n_dof), "C")


def test_tie_refuses_a_node_away_from_the_body_node() -> None:
    model = fm.Model(dim=3)
    body = model.add_modal_body(_data(), name="blade")
    off = model.add_node([1.0, 0.01, 0.0])
    with pytest.raises(ModelError, match="place the node at the body node's reference position"):
        model.tie(off, body, N_FE)


@pytest.mark.parametrize("weld", [False, True])
def test_static_tip_load_through_tied_node_matches_fe(weld: bool) -> None:
    """Root clamped, a small tip load (F_y, F_z) = (1e-4, -2e-4) N (and a torque 1e-4 N m with a weld)
    through the node tied to the tip: the tip displacement equals the FE cantilever's within 1e-6
    relative (measured 5e-10 pinned, 4e-9 welded: the Craig-Bampton basis with the tip as interface holds the exact
    static response to tip loads, so only the geometric nonlinearity of the tiny load separates them);
    the tie passes the load (its force on the node is minus the load)."""
    load = {"uy": 1e-4, "uz": -2e-4} | ({"rx": 1e-4} if weld else {})
    fe = _cantilever(fixed=True)
    for dof, value in load.items():
        fe.add_load(N_FE, dof, value)
    u_fe = fm.load_control(fe, 1).u[-1]
    dofs_fe = fm.Assembly(fe).dofs
    tip_fe = np.array([u_fe[dofs_fe.index(N_FE, a)] for a in ("ux", "uy", "uz", "rx", "ry", "rz")])
    model = fm.Model(dim=3)
    frame = model.add_node([0.0, 0.0, 0.0])
    body = model.add_modal_body(_data(), node=frame, name="blade")
    model.fix(frame)
    node = model.add_rigid_body([1.0, 0.0, 0.0], 0.1, (1e-3, 1e-3, 1e-3)).node if weld \
        else model.add_node([1.0, 0.0, 0.0])
    model.tie(node, body, N_FE)
    for dof, value in load.items():
        model.add_load(node, dof, value)
    asm = fm.Assembly(model)
    u, lam = _static_solve(asm)
    names = ("ux", "uy", "uz") + (("rx", "ry", "rz") if weld else ())
    tip = np.array([u[asm.dofs.index(node, a)] for a in names])
    miss = np.abs(tip - tip_fe[:tip.size]).max() / np.abs(tip_fe).max()
    assert miss < 1e-6, f"tip {tip} vs FE {tip_fe[:tip.size]}, off by {miss:.2e}"
    force, moment = asm.constraints.tie_reactions(lam, u)[0]
    applied = np.array([0.0, load["uy"], load["uz"]])
    assert np.abs(force + applied).max() < 1e-12, f"tie force on the node {force}"
    if weld:
        assert np.abs(moment + [load["rx"], 0.0, 0.0]).max() < 1e-9, f"tie moment on the node {moment}"
    else:
        assert moment.size == 0


@pytest.mark.parametrize("weld", [False, True])
def test_swinging_body_with_tied_tip_conserves_energy(weld: bool) -> None:
    """The body's frame node held by a spherical joint to the ground, its tip tied to a 0.3 kg point
    mass (pin) or a small rigid body (weld), released horizontal under gravity turning about its axis
    and the vertical, 0.6 s in 120 steps: the mid-point scheme keeps K + V to 1e-8 of the kinetic energy
    scale (issue 16; measured <= 4e-12) and the ties and joint on within 1e-10 m every step."""
    model, frame, tip = _swinging_model(weld)
    asm = fm.Assembly(model)
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.index(frame, "rx")] = 2.0                   # rad/s about the blade's axis
    v0[asm.dofs.index(frame, "rz")] = 1.0
    v0[asm.dofs.index(tip, "uy")] = 1.0                     # the tip moves with the frame's turn: rz x (1, 0, 0)
    if weld:
        v0[asm.dofs.index(tip, "rx")], v0[asm.dofs.index(tip, "rz")] = 2.0, 1.0
    h = fm.integrate(asm, 0.005, 0.6, v0=v0, progress=False)
    error = h.energy_error().max()
    assert error < 1e-8, f"energy error {error:.2e}"
    residual = np.max(h.constraint_residual)
    assert residual < 1e-10, f"tie/joint residual {residual:.2e} m"
    lowest = np.array(h.u)[:, asm.dofs.index(tip, "uz")].min()
    assert lowest < -0.5, f"the blade must swing down, the tip went down only {-lowest:.3f} m"
    q = asm.dofs.internal_dofs(model.ties[0].body)
    assert np.abs(np.array(h.u)[:, q]).max() > 1e-4, "the blade must bend as it swings"
