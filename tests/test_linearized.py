"""Tests of the linearized equations of motion (:func:`flexmb.linearize`, :func:`flexmb.relative_equilibrium`,
:func:`flexmb.campbell`).

References: the Jeffcott rotor with unequal stiffnesses in rotating coordinates, characteristic
equation s^4 + (wx^2 + wy^2 + 2 W^2) s^2 + (wx^2 - W^2)(wy^2 - W^2) = 0 (unstable for wx < W < wy);
a spinning axisymmetric disc on a tilt spring k, whirl frequencies J_t w^2 -+ J_p W w - k = 0, product
k / J_t; a pinned column under an axial load,
omega_1^2 = omega_0^2 (1 - P / P_cr); the lead-lag Southwell coefficient K_1 - 1 = 0.1933 (all from the
references README, Wave 2 B); a spinning mass on a spring, r = k r_0 / (k - m W^2) (exact).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

import flexmb as fm
from flexmb.analysis.linearized import (
    LinearizedSystem,
    _full_matrices,
    _spin,
    partials,
    residual,
    steady_motion,
)


def _jeffcott(kx: float = 100.0, ky: float = 400.0, mass: float = 1.0) -> fm.Model:
    """Point mass at the centre of a hub, held by two orthogonal trusses (stiffness kx, ky) whose far ends
    are fixed: in the rotating frame the supports turn with the hub."""
    m = fm.Model(dim=2)
    c = m.add_node([0.0, 0.0])
    a = m.add_node([1.0, 0.0])
    b = m.add_node([0.0, 1.0])
    m.add_truss([[c, a]], EA=kx)
    m.add_truss([[c, b]], EA=ky)
    m.add_point_mass(c, mass)
    m.fix(a)
    m.fix(b)
    return m


def _jeffcott_roots(wx2: float, wy2: float, W: float) -> np.ndarray:
    p = np.roots([1.0, wx2 + wy2 + 2.0 * W**2, (wx2 - W**2) * (wy2 - W**2)]).astype(complex)
    s = np.sqrt(p)
    return np.concatenate([s, -s])


DISC = {"L": 0.5, "EI": 2.0, "GJ": 3.0, "Jt": 0.2, "Jp": 0.3}


def _disc() -> tuple[fm.Model, fm.RigidBody]:
    """Rigid disc (J_t, J_t, J_p about z) at the origin, translations held, on a massless Beam3D
    clamped at (0, 0, -L): tilt stiffness k = 4 EI / L, torsion GJ / L."""
    p = DISC
    m = fm.Model(dim=3)
    base = m.add_node([0.0, 0.0, -p["L"]])
    body = m.add_rigid_body([0.0, 0.0, 0.0], 1.0, [p["Jt"], p["Jt"], p["Jp"]])
    m.add_beam3d([[base, body.node]], EA=1e3, GJ=p["GJ"], EI_y=p["EI"], EI_z=p["EI"])
    m.fix(base)
    m.fix(body.node, ["ux", "uy", "uz"])
    return m, body


def _rotor_beam(speed: float, n: int = 6, mass: str = "consistent") -> fm.Model:
    """Planar cantilever (Beam2D, second-order strains) welded to a hub driven at ``speed``."""
    m = fm.Model(dim=2)
    hub = m.add_rigid_body([0.0, 0.0], 1.0, 1.0)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, n + 1), np.zeros(n + 1)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=1.0, rho_A=1.0, rho_I=1e-3, mass=mass, second_order=True)
    m.add_joint("revolute", None, hub, at=[0.0, 0.0], drive=lambda t: speed * t)
    m.attach(int(nodes[0]), hub)
    return m


def test_spring_mass_at_rest_equals_natural_modes():
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 1.5], [3.0, 1.2]]))
    m.add_truss(np.array([[0, 2], [1, 2], [1, 3], [2, 3]]), EA=[300.0, 200.0, 150.0, 400.0])
    m.add_point_mass(int(nodes[2]), 2.0)
    m.add_point_mass(int(nodes[3]), 0.5)
    m.fix(int(nodes[0]))
    m.fix(int(nodes[1]))
    modes = fm.linearize(m).eigen()
    reference = fm.natural_modes(m, n_modes=4).omega
    assert modes.eigenvalues.size == 4
    assert np.allclose(modes.real_parts, 0.0, atol=1e-10 * reference.max())
    err = np.abs(modes.omega - reference).max() / reference.max()
    assert err < 1e-12, f"linearize vs natural_modes: relative error {err:.2e}"
    assert modes.is_stable and np.allclose(modes.damping_ratios, 0.0, atol=1e-12)
    # shapes: full DOF vectors, zero at the supports, largest entry 1, K phi = omega^2 M phi
    assert modes.shapes.shape == (fm.Assembly(m).n_dof, 4)
    assert np.allclose(np.abs(modes.shapes).max(axis=0), 1.0)


def test_prestressed_pinned_column_frequency_drops_with_the_load():
    L, EI, n = 2.0, 3.0, 16
    P_cr = np.pi**2 * EI / L**2

    def column(P: float) -> fm.Model:
        m = fm.Model(dim=2)
        nodes = m.add_nodes(np.c_[np.linspace(0.0, L, n + 1), np.zeros(n + 1)])
        m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e5, EI=EI, rho_A=1.5, mass="consistent",
                     second_order=True)
        m.fix(int(nodes[0]), ["ux", "uy"])
        m.fix(int(nodes[-1]), "uy")
        if P:
            m.add_load(int(nodes[-1]), "ux", -P)
        return m

    w0 = fm.linearize(column(0.0)).eigen(1).omega[0]
    for ratio in (0.3, 0.6):
        model = column(ratio * P_cr)
        u = fm.load_control(model, 4).u[-1]
        w = fm.linearize(model, u=u).eigen(1).omega[0]
        expected = w0**2 * (1.0 - ratio)
        assert abs(w**2 / expected - 1.0) < 5e-3, f"P/P_cr = {ratio}: omega^2 off by {w**2 / expected - 1:.2e}"


@pytest.mark.parametrize("speed", [0.0, 5.0, 9.9, 10.1, 12.0, 15.0, 19.9, 20.1, 25.0])
def test_jeffcott_rotor_unstable_between_its_two_frequencies(speed):
    wx2, wy2 = 100.0, 400.0
    modes = fm.linearize(_jeffcott(wx2, wy2), spin=(None, speed)).eigen()
    roots = _jeffcott_roots(wx2, wy2, speed)
    expected_real = roots.real.max()
    assert abs(modes.real_parts.max() - expected_real) <= 1e-6 * max(1.0, expected_real), \
        f"largest real part {modes.real_parts.max():.9g}, closed form {expected_real:.9g}"
    # the kept eigenvalues are the closed-form roots with Im s >= 0 (one of each pair)
    kept = np.sort_complex(modes.eigenvalues)
    assert np.allclose(np.sort(np.abs(kept.imag)), np.sort(np.abs(roots.imag))[::2], atol=1e-8)
    assert modes.is_stable == (not 10.0 < speed < 20.0)


def test_spinning_disc_whirl_frequencies_inertial_and_rotating_frame():
    p = DISC
    model, body = _disc()
    asm = fm.Assembly(model)
    k = 4.0 * p["EI"] / p["L"]
    W = 7.0
    v = np.zeros(asm.n_dof)
    v[asm.rotation_dofs[list(asm.rotation_nodes).index(body.node)]] = [0.0, 0.0, W]
    inertial = fm.linearize(asm, v=v).eigen()
    # forward and backward whirl: J_t w^2 -+ J_p W w - k = 0; torsion sqrt(GJ / (L J_p))
    forward = max(np.roots([p["Jt"], -p["Jp"] * W, -k]).real)
    backward = max(np.roots([p["Jt"], p["Jp"] * W, -k]).real)
    torsion = np.sqrt(p["GJ"] / p["L"] / p["Jp"])
    assert np.allclose(np.sort(inertial.omega), np.sort([torsion, backward, forward]), rtol=1e-10)
    whirl = np.sort(inertial.omega)[1:]
    assert abs(whirl.prod() / (k / p["Jt"]) - 1.0) < 1e-10
    # the same disc seen from a frame spinning with it: the whirls shift by -+ W, the torsion stays
    rotating = fm.linearize(asm, spin=([0.0, 0.0, 2.0], W)).eigen()        # the axis need not be a unit vector
    assert np.allclose(np.sort(rotating.omega), np.sort([torsion, forward - W, backward + W]),
                       rtol=1e-10)
    assert rotating.is_stable and inertial.is_stable


def _fd_partials(asm, u, v, a, t, lam, h=1e-6):
    n = asm.n_dof
    M, C, K = (np.zeros((n, n)) for _ in range(3))
    for j in asm.dofs.free:
        e = np.zeros(n)
        e[j] = h
        M[:, j] = (residual(asm, u, v, a + e, t, lam) - residual(asm, u, v, a - e, t, lam)) / (2 * h)
        C[:, j] = (residual(asm, u, v + e, a, t, lam) - residual(asm, u, v - e, a, t, lam)) / (2 * h)
        K[:, j] = (residual(asm, asm.update(u, e), v, a, t, lam)
                   - residual(asm, asm.update(u, -e), v, a, t, lam)) / (2 * h)
    free = asm.dofs.free
    return [X[np.ix_(free, free)] for X in (M, C, K)]


def _spatial_model() -> fm.Model:
    """Beams with rotary inertia (consistent mass), a rigid body on a revolute joint, a follower load."""
    m = fm.Model(dim=3)
    nodes = m.add_nodes(np.array([[0.0, 0.0, 0.0], [0.6, 0.1, 0.0], [1.1, 0.3, 0.4]]))
    m.add_beam3d(np.array([[0, 1], [1, 2]]), EA=500.0, GJ=20.0, EI_y=30.0, EI_z=40.0, rho_A=2.0,
                 rho_I=(2e-2, 1e-2, 1e-2), mass="consistent")
    body = m.add_rigid_body([1.1, 0.6, 0.4], 1.5, [0.3, 0.2, 0.25])
    m.add_joint("revolute", int(nodes[2]), body, at=[1.1, 0.3, 0.4], axis=[0.0, 1.0, 0.0])
    m.add_follower_force(int(nodes[1]), [0.0, 3.0, 1.0])
    m.fix(int(nodes[0]))
    return m


@pytest.mark.parametrize("kind", ["spatial", "cubic"])
def test_partials_match_finite_differences_of_the_residual(kind):
    rng = np.random.default_rng(3)
    if kind == "spatial":
        model = _spatial_model()
    else:
        model = fm.Model(dim=2)
        nodes = model.add_nodes(np.c_[np.linspace(0.0, 1.0, 4), 0.1 * np.arange(4)])
        model.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e3, EI=2.0, rho_A=1.0, rho_I=0.01, mass="cubic")
        model.fix(int(nodes[0]))
        model.set_gravity([0.0, -9.81])
    asm = fm.Assembly(model)
    free = asm.dofs.free
    u, v, a = (np.zeros(asm.n_dof) for _ in range(3))
    u[free] = 0.05 * rng.standard_normal(free.size)
    v[free] = rng.standard_normal(free.size)
    a[free] = rng.standard_normal(free.size)
    lam = rng.standard_normal(asm.constraints.n) if asm.constraints is not None else None
    analytic = [X.toarray() for X in partials(asm, u, v, a, 0.0, lam)]          # on the free DOFs
    numeric = _fd_partials(asm, u, v, a, 0.0, lam)
    for name, X, Y in zip("MCK", analytic, numeric):
        err = np.abs(X - Y).max() / max(np.abs(Y).max(), 1e-12)
        assert err < 1e-6, f"{kind}: d r / d{ {'M': 'a', 'C': 'v', 'K': 'u'}[name] } off by {err:.2e} (relative)"


@pytest.mark.parametrize("mass", ["consistent", "cubic"])
def test_rotating_frame_stiffness_is_the_jacobian_of_the_relative_equilibrium(mass):
    """K_r on the free DOFs equals the derivative of r(u, W (x - c), W^2 (x - c)) (the steady motion
    moves with u), here for a spinning cantilever away from its equilibrium."""
    model = _rotor_beam(4.0, n=3, mass=mass)
    asm = fm.Assembly(model)
    frame = _spin(asm, (None, 4.0, [0.1, -0.2]), "test")
    rng = np.random.default_rng(1)
    free = asm.dofs.free
    u = np.zeros(asm.n_dof)
    u[free] = 0.02 * rng.standard_normal(free.size)
    lam = rng.standard_normal(asm.constraints.n)

    def R(x: np.ndarray) -> np.ndarray:
        v, a = steady_motion(asm, x, frame)
        return residual(asm, x, v, a, 0.0, lam)[free]

    v, a = steady_motion(asm, u, frame)
    K = _full_matrices(asm, u, v, a, 0.0, lam, frame)[2].toarray()
    h = 1e-6
    J = np.column_stack([(R(u + e) - R(u - e)) / (2 * h) for e in h * np.eye(asm.n_dof)[free]])
    assert np.abs(K - J).max() < 1e-6 * np.abs(J).max()


def test_relative_equilibrium_of_a_spinning_mass_on_a_spring():
    k, r0, mass, W = 200.0, 1.5, 2.0, 6.0
    m = fm.Model(dim=2)
    hub = m.add_node([0.0, 0.0])
    tip = m.add_node([r0, 0.0])
    m.add_truss([[hub, tip]], EA=k * r0)
    m.add_point_mass(tip, mass)
    m.fix(hub)
    u = fm.relative_equilibrium(m, (None, W))
    r = r0 + u[fm.Assembly(m).dofs.index(tip, "ux")]
    # the truss's axial force is EA (r - r0) / r0 = k (r - r0) = m W^2 r
    assert abs(r / (k * r0 / (k - mass * W**2)) - 1.0) < 1e-10
    # about it, in the rotating frame: det [[m s^2 + k - m W^2, -2 m W s], [2 m W s, m s^2]] = 0 (the
    # tension N / r = m W^2 cancels the centrifugal softening across the spring): s = 0 (the free turn
    # about the hub) and s^2 = -(k / m + 3 W^2)
    modes = fm.linearize(m, u=u, spin=(None, W)).eigen()
    assert np.allclose(modes.eigenvalues, [0.0, 1j * np.sqrt(k / mass + 3.0 * W**2)], atol=1e-9)
    assert modes.is_stable


def test_rotating_cantilever_southwell_and_campbell_tracking():
    w0 = fm.linearize(_rotor_beam(0.0)).eigen(1).omega[0]
    W = 0.3
    model = _rotor_beam(W)
    u = fm.relative_equilibrium(model, (None, W))
    w = fm.linearize(model, u=u, spin=(None, W)).eigen(1).omega[0]
    # in-plane (lead-lag) bending: omega^2 = omega_0^2 + (K_1 - 1) W^2, K_1 = 1.193 (Southwell)
    assert abs((w**2 - w0**2) / W**2 - 0.193) < 0.01
    diagram = fm.campbell(_rotor_beam, [0.0, 2.0, 4.0], n_modes=2)
    assert diagram.frequencies_hz.shape == (3, 2)
    assert np.all(np.diff(diagram.frequencies_hz, axis=0) > 0)       # centrifugal stiffening
    assert diagram.mac.min() > 0.9
    json.dumps(diagram.to_dict())


def _crossing(speed: float) -> LinearizedSystem:
    """Two weakly coupled oscillators whose frequencies 1 + speed and 3 - speed cross at speed 1;
    their shapes stay close to the unit vectors."""
    K = np.array([[(1.0 + speed) ** 2, 1e-4], [1e-4, (3.0 - speed) ** 2]])
    return LinearizedSystem(np.eye(2), np.zeros((2, 2)), K, np.eye(2))


def test_campbell_follows_crossing_modes_by_mac():
    speeds = np.linspace(0.0, 2.0, 8)                            # 1.0, the crossing, not among them
    diagram = fm.campbell(_crossing, speeds, n_modes=2)
    w = 2.0 * np.pi * diagram.frequencies_hz
    assert np.allclose(w[:, 0], 1.0 + speeds, atol=1e-3), "mode 1 did not follow 1 + speed through the crossing"
    assert np.allclose(w[:, 1], 3.0 - speeds, atol=1e-3)
    # sorted by frequency instead, mode 1 would jump to the other branch after the crossing
    assert np.any(np.abs(w[:, 0] - np.minimum(1.0 + speeds, 3.0 - speeds)) > 0.5)


def test_campbell_plot():
    import matplotlib

    matplotlib.use("Agg")
    diagram = fm.campbell(_crossing, [0.0, 0.5], n_modes=2)
    ax = diagram.plot(kind="real")
    assert len(ax.lines) == 2
    with pytest.raises(fm.ModelError, match="kind"):
        diagram.plot(kind="imag")


def test_bad_input_errors():
    model = _jeffcott()
    with pytest.raises(fm.ModelError, match="axis None"):
        fm.linearize(model, spin=([1.0, 0.0, 0.0], 3.0))
    # (0, 0, -1) is the same axis turned round: the same rotor spinning the other way
    minus = fm.linearize(model, spin=([0.0, 0.0, -1.0], 3.0)).eigen().eigenvalues
    assert np.allclose(minus, fm.linearize(model, spin=(None, -3.0)).eigen().eigenvalues)
    with pytest.raises(fm.ModelError, match="spin must be"):
        fm.linearize(model, spin=3.0)
    with pytest.raises(fm.ModelError, match="do not pass v"):
        fm.linearize(model, v=np.zeros(6), spin=(None, 1.0))
    with pytest.raises(fm.ModelError, match="shape"):
        fm.linearize(model, u=np.zeros(3))
    with pytest.raises(fm.ModelError, match="not an equilibrium.*node 0"):
        u = np.zeros(6)
        u[0] = 0.1
        fm.linearize(model, u=u)
    # a support fixed in x only, off the axis: the rotation would carry it into its free y
    m = fm.Model(dim=2)
    a = m.add_node([0.0, 0.0])
    b = m.add_node([1.0, 0.0])
    m.add_truss([[a, b]], EA=1.0)
    m.add_point_mass(b, 1.0)
    m.fix(a)
    m.fix(b, "ux")
    with pytest.raises(fm.ModelError, match="node 1.*fixed"):
        fm.linearize(m, spin=(None, 1.0))
    with pytest.raises(fm.ModelError, match="returned str"):
        fm.campbell(lambda s: "model", [0.0])
    with pytest.raises(fm.ModelError, match="speeds"):
        fm.campbell(_crossing, [])
    with pytest.raises(fm.ModelError, match="multipliers must be"):
        fm.linearize(_rotor_beam(0.0, n=2), multipliers=np.zeros(2))
    with pytest.raises(fm.ModelError, match="unknown|unexpected|keyword"):
        fm.linearize(model, speed=3.0)


def test_massless_rotations_dropped_and_free_top_nutation():
    # lumped Beam2D without rotary inertia: the rotations' infinite eigenvalues are dropped, the rest
    # are the natural modes
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 2.0, 9), np.zeros(9)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e5, EI=3.0, rho_A=1.5, mass="lumped")
    m.fix(int(nodes[0]))
    modes = fm.linearize(m).eigen()
    assert modes.eigenvalues.size == 16                                  # the 16 translations
    reference = fm.natural_modes(m, n_modes=5).omega
    assert np.allclose(modes.omega[:5], reference, rtol=1e-10)
    # a free spinning body (no spring, so no stiffness scale): nutation at J_p W / J_t, two zero modes
    m = fm.Model(dim=3)
    body = m.add_rigid_body([0.0, 0.0, 0.0], 1.0, [0.2, 0.2, 0.3])
    m.fix(body.node, ["ux", "uy", "uz"])
    asm = fm.Assembly(m)
    v = np.zeros(asm.n_dof)
    v[asm.rotation_dofs[0]] = [0.0, 0.0, 10.0]
    s = fm.linearize(asm, v=v).eigen().eigenvalues
    assert np.allclose(s, [0.0, 0.0, 15.0j], atol=1e-12)


def test_campbell_of_one_model_through_the_jeffcott_instability():
    """The same model re-linearized at every speed: the slow mode is followed through the divergence
    zone (frequency 0, real s) and out again; both curves on the closed form."""
    speeds = np.linspace(0.5, 29.5, 30)
    diagram = fm.campbell(_jeffcott(), speeds, n_modes=2)
    for k, W in enumerate(speeds):
        roots = _jeffcott_roots(100.0, 400.0, W)
        slow, fast = np.sort(np.abs(roots.imag))[::2]
        assert np.allclose(np.abs(diagram.eigenvalues[k].imag), [slow, fast], atol=1e-9), f"speed {W}"
        assert abs(diagram.real_parts[k].max() - roots.real.max()) < 1e-9
    # the state-shape MAC halves where the slow mode turns from oscillation (s = i omega) into
    # divergence (s real) and back: at the first speed inside and the first one outside the zone
    turning = (speeds > 10.0) & (speeds < 21.0) & ((speeds < 11.0) | (speeds > 20.0))
    assert diagram.mac[~turning].min() > 0.95
    assert 0.4 < diagram.mac[turning, 0].min() <= 0.5
    with pytest.raises(fm.ModelError, match="needs the spin axis"):
        fm.campbell(_disc()[0], [1.0])


def test_sparse_shift_invert_equals_dense_qz():
    """A spinning 3D cantilever (sparse matrices, no joints) and the planar rotor (dense, joints):
    ARPACK's lowest modes equal those of the whole dense spectrum."""
    m = fm.Model(dim=3)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 11), np.zeros(11), np.zeros(11)])
    m.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e4, GJ=0.8, EI_y=1.0, EI_z=1.5, rho_A=1.0,
                 rho_I=(2e-3, 1e-3, 1e-3), mass="consistent", second_order=True)
    m.fix(int(nodes[0]))
    spin = ([0.0, 0.0, 1.0], 3.0)
    rotor = _rotor_beam(3.0, n=12)
    for model, frame in ((m, spin), (rotor, (None, 3.0))):
        lin = fm.linearize(model, u=fm.relative_equilibrium(model, frame), spin=frame)
        dense, sparse = lin.eigen(5), lin.eigen(5, dense_limit=0)
        assert np.abs(dense.eigenvalues - sparse.eigenvalues).max() < 1e-8 * np.abs(dense.eigenvalues).max()
        overlap = np.abs(np.sum(dense.shapes.conj() * sparse.shapes, axis=0))
        assert np.allclose(overlap / np.linalg.norm(dense.shapes, axis=0) / np.linalg.norm(sparse.shapes, axis=0),
                           1.0, atol=1e-8)
