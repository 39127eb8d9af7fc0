"""Tests of the state-space export of a linearized model and its frequency response
(:meth:`flexmb.analysis.linearized.LinearizedSystem.state_space`, :mod:`flexmb.analysis.state_space`).

References: the first-order form of m x'' + c x' + k x = f written by hand for one and two degrees of
freedom; the modal sum of a proportionally damped structure,
H_oi(w) = sum_k phi_ok phi_ik / (w_k^2 - w^2 + i w (alpha + beta w_k^2)) with mass-normalised modes
(any structural dynamics text, e.g. Geradin & Rixen, Mechanical Vibrations, ch. 2); the resolvent
C (i w I - A)^-1 B + D of the state-space form, evaluated by scipy.signal.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.signal as sg

import flexmb as fm
from flexmb.analysis.state_space import StateSpaceModel

M1, K1, C1 = 2.0, 400.0, 3.0                  # kg, N/m, N s/m
M2, K2, C2 = 0.5, 150.0, 1.0


def _oscillator() -> tuple[fm.Model, int]:
    """A point mass M1 on a spring-damper (K1, C1) to the ground, moving along x."""
    m = fm.Model(dim=2)
    n = m.add_node([1.0, 0.0])
    m.add_point_mass(n, M1)
    m.add_spring_damper(None, n, k=K1, c=C1, at_a=[0.0, 0.0])
    m.fix(n, "uy")
    return m, n


def _chain() -> tuple[fm.Model, int, int]:
    """Ground -(K1, C1)- mass M1 -(K2, C2)- mass M2 along x."""
    m = fm.Model(dim=2)
    a = m.add_node([1.0, 0.0])
    b = m.add_node([2.0, 0.0])
    m.add_point_mass(a, M1)
    m.add_point_mass(b, M2)
    m.add_spring_damper(None, a, k=K1, c=C1, at_a=[0.0, 0.0])
    m.add_spring_damper(a, b, k=K2, c=C2)
    m.fix(a, "uy")
    m.fix(b, "uy")
    return m, a, b


def _cantilever(n: int = 4, alpha: float = 2.0, beta: float = 1e-3) -> fm.Model:
    """Planar cantilever (Beam2D, consistent mass) of length 1 m, EI = 100 N m^2, rho A = 1 kg/m,
    clamped at node 0, with Rayleigh damping alpha M + beta K."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, n + 1), np.zeros(n + 1)])
    g = m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e4, EI=100.0, rho_A=1.0, rho_I=1e-4, mass="consistent")
    m.set_rayleigh_damping(g, alpha=alpha, beta=beta)
    m.fix(int(nodes[0]))
    return m


def _close(actual: np.ndarray, expected: np.ndarray, rtol: float, what: str) -> None:
    """|actual - expected| <= rtol * max|expected| (a floor scaled by the matrix), with the miss in the message."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    miss = float(np.abs(actual - expected).max()) / max(float(np.abs(expected).max()), 1e-300)
    assert miss <= rtol, f"{what}: off by {miss:.3g} (relative to its largest entry), tolerance {rtol:g}"


def _resolvent(ss: StateSpaceModel, f: np.ndarray) -> np.ndarray:
    """C (i w I - A)^-1 B + D (n_freq, n_out, n_in) from the first-order matrices."""
    eye = np.eye(ss.A.shape[0])
    return np.stack([ss.C @ np.linalg.solve(1j * w * eye - ss.A, ss.B) + ss.D for w in 2.0 * np.pi * f])


def test_one_dof_matrices_by_hand():
    m, n = _oscillator()
    ss = fm.linearize(m).state_space([(n, "ux")], [(n, "ux"), (n, "ux", "velocity"), "node 0 ux acceleration"])
    k, c = K1 / M1, C1 / M1
    _close(ss.A, np.array([[0.0, 1.0], [-k, -c]]), 1e-12, "A")
    _close(ss.B, np.array([[0.0], [1.0 / M1]]), 1e-12, "B")
    _close(ss.C, np.array([[1.0, 0.0], [0.0, 1.0], [-k, -c]]), 1e-12, "C")
    _close(ss.D, np.array([[0.0], [0.0], [1.0 / M1]]), 1e-12, "D")
    assert ss.inputs == ("node 0 ux",)
    assert ss.outputs == ("node 0 ux", "node 0 ux velocity", "node 0 ux acceleration")
    # the FRF of the direct solve is the closed form 1 / (k - m w^2 + i c w), times (1, i w, -w^2)
    f = np.array([0.5, 2.25, 3.18, 10.0])
    w = 2.0 * np.pi * f
    h = 1.0 / (K1 - M1 * w**2 + 1j * C1 * w)
    expected = np.stack([h, 1j * w * h, -w**2 * h], axis=1)[:, :, None]
    _close(ss.frequency_response(f).values, expected, 1e-12, "1-DOF FRF")


def test_two_dof_matrices_by_hand():
    m, a, b = _chain()
    ss = fm.linearize(m).state_space([(b, "ux"), f"node {a} ux"], [(a, "ux"), (b, "ux", "acceleration")])
    # M^-1 K and M^-1 C of the chain, row by row
    MiK = np.array([[(K1 + K2) / M1, -K2 / M1], [-K2 / M2, K2 / M2]])
    MiC = np.array([[(C1 + C2) / M1, -C2 / M1], [-C2 / M2, C2 / M2]])
    _close(ss.A, np.block([[np.zeros((2, 2)), np.eye(2)], [-MiK, -MiC]]), 1e-12, "A")
    _close(ss.B, np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 1.0 / M1], [1.0 / M2, 0.0]]), 1e-12, "B")
    _close(ss.C, np.array([[1.0, 0.0, 0.0, 0.0], [K2 / M2, -K2 / M2, C2 / M2, -C2 / M2]]), 1e-12, "C")
    _close(ss.D, np.array([[0.0, 0.0], [1.0 / M2, 0.0]]), 1e-12, "D")
    f = np.array([0.3, 2.0, 3.9, 7.5])
    _close(ss.frequency_response(f).values, _resolvent(ss, f), 1e-10, "2-DOF FRF against the resolvent")


def test_cantilever_frf_equals_modal_sum_and_scipy_freqresp():
    alpha, beta = 2.0, 1e-3
    lin = fm.linearize(_cantilever(alpha=alpha, beta=beta))
    M, C, K = (X.toarray() for X in (lin.M, lin.C, lin.K))
    # Rayleigh damping about the undeformed state is alpha M + beta K (the premise of the modal sum)
    _close(C, alpha * M + beta * K, 1e-12, "Rayleigh C")
    tip = 4
    ss = lin.state_space([(tip, "uy"), (2, "rz")], [(tip, "uy"), (2, "uy", "velocity")])
    lam, phi = sla.eigh(K, M)                                          # mass-normalised, (n,), (n, n)
    rows = [int(lin.assembly.dofs.free_position[lin.assembly.dofs.index(*x)]) for x in ((tip, "uy"), (2, "uy"))]
    cols = [int(lin.assembly.dofs.free_position[lin.assembly.dofs.index(*x)]) for x in ((tip, "uy"), (2, "rz"))]
    f = np.array([0.7, 5.6, 9.0, 35.0, 120.0])                        # first mode at 5.6 Hz
    w = 2.0 * np.pi * f
    modal = 1.0 / (lam[None, :] - w[:, None] ** 2 + 1j * w[:, None] * (alpha + beta * lam[None, :]))   # (n_f, n)
    H = np.einsum("ok,ik,fk->foi", phi[rows], phi[cols], modal)
    H[:, 1] *= 1j * w[:, None]                                        # the velocity output
    _close(ss.frequency_response(f).values, H, 1e-9, "cantilever FRF against the modal sum")
    # scipy's StateSpace, one input and one output (freqresp is SISO), against the direct solve
    one = lin.state_space([(tip, "uy")], [(tip, "uy")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                                # scipy's badly conditioned tf warning
        _, h = sg.freqresp(one.to_scipy(), w)
    _close(h, one.frequency_response(f).values[:, 0, 0], 1e-7, "scipy freqresp against the direct solve")
    _close(_resolvent(ss, f), ss.frequency_response(f).values, 1e-9, "resolvent against the direct solve")


def _rotor(speed: float, hub: bool) -> tuple[fm.Model, int]:
    """A cantilever on the spin axis, root driven at ``speed`` (prescribed angle, or welded to a hub
    on a driven revolute joint: the dense joint basis), beta damping only."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 5), np.zeros(5)])
    g = m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e4, EI=100.0, rho_A=1.0, rho_I=1e-4, mass="consistent")
    m.set_rayleigh_damping(g, beta=5e-3)
    if hub:
        body = m.add_rigid_body([0.0, 0.0], 1.0, 1.0, name="hub")
        m.add_joint("revolute", None, body, at=[0.0, 0.0], drive=lambda t: speed * t)
        m.attach(int(nodes[0]), body)
    else:
        m.fix(int(nodes[0]), ["ux", "uy"])
        m.prescribe(int(nodes[0]), "rz", lambda t: speed * t)
    return m, int(nodes[-1])


@pytest.mark.parametrize("hub", [False, True])
def test_rotating_frame_gyroscopic_frf(hub):
    speed = 12.0
    m, tip = _rotor(speed, hub)
    spin = (None, speed)
    lin = fm.linearize(m, u=fm.relative_equilibrium(m, spin), spin=spin)
    C = lin.C.toarray() if hasattr(lin.C, "toarray") else lin.C
    skew = 0.5 * (C - C.T)
    assert np.abs(skew).max() > 1.0 * speed * 1e-3, "the rotating frame's C has no gyroscopic (skew) part"
    ss = lin.state_space([(tip, "uy")], [(tip, "uy"), (tip, "ux"), (tip, "ux", "velocity")])
    f = np.array([1.0, 6.0, 20.0])
    H = ss.frequency_response(f).values
    _close(_resolvent(ss, f), H, 1e-9, "rotating-frame resolvent against the direct solve")
    # the Coriolis force couples the lag force into the axial motion; without the spin it does not
    assert np.all(np.abs(H[:, 1, 0]) > 1e-4 * np.abs(H[:, 0, 0]))
    at_rest = fm.linearize(_rotor(0.0, hub)[0]).state_space([(tip, "uy")], [(tip, "ux")])
    assert np.all(np.abs(at_rest.frequency_response(f).values) <= 1e-10 * np.abs(H[:, 0, 0])[:, None, None])


def test_body_input_and_sensor_outputs():
    """A force on a rigid body equals the force on its node; a position sensor at an offset d on a beam
    node reads uy + d rz (small rotation), a velocity sensor the same on the rates."""
    m = fm.Model(dim=2)
    body = m.add_rigid_body([1.0, 0.0], 2.0, 0.1, name="tip mass")
    root = m.add_node([0.0, 0.0])
    m.add_beam2d([[root, body.node]], EA=1e4, EI=100.0, rho_A=1.0, rho_I=1e-4, mass="consistent")
    m.fix(root)
    m.add_sensor("position", body, offset=[0.5, 0.0], name="p")
    m.add_sensor("velocity", body, offset=[0.5, 0.0], name="pv")
    lin = fm.linearize(m)
    f = np.array([1.0, 4.0])
    ss = lin.state_space([(body, "uy"), ("tip mass", "rz")], ["p", "pv", (body.node, "uy"), (body, "rz")])
    assert ss.inputs == ("body 'tip mass' uy", "body 'tip mass' rz")
    assert ss.outputs == ("p[x]", "p[y]", "pv[x]", "pv[y]", f"node {body.node} uy", "body 'tip mass' rz")
    by_node = lin.state_space([(body.node, "uy"), (body.node, "rz")], [(body.node, "uy")])
    H = ss.frequency_response(f).values
    _close(H[:, 4:5], by_node.frequency_response(f).values, 1e-12, "body input against node input")
    _close(H[:, 1], H[:, 4] + 0.5 * H[:, 5], 1e-6, "position sensor p_y = uy + d rz")
    _close(H[:, 3], 1j * 2.0 * np.pi * f[:, None] * H[:, 1], 1e-6, "velocity sensor = i w position")


def test_errors_name_the_item():
    m, n = _oscillator()
    lin = fm.linearize(m)
    with pytest.raises(fm.ModelError, match="node 7 does not exist"):
        lin.state_space([(7, "ux")], [(n, "ux")])
    with pytest.raises(fm.ModelError, match="no DOF 'rz'"):
        lin.state_space([(n, "ux")], [(n, "rz")])
    with pytest.raises(fm.ModelError, match="'hub' is not a rigid body"):
        lin.state_space([("hub", "ux")], [(n, "ux")])
    with pytest.raises(fm.ModelError, match="'tip' is no sensor"):
        lin.state_space([(n, "ux")], ["tip"])
    with pytest.raises(fm.ModelError, match="input node 0 uy is on a fixed or prescribed DOF"):
        lin.state_space([(n, "uy")], [(n, "ux")])
    with pytest.raises(fm.ModelError, match="kind 'jerk'"):
        lin.state_space([(n, "ux")], [(n, "ux", "jerk")])
    with pytest.raises(fm.ModelError, match="frequencies must be"):
        lin.state_space([(n, "ux")], [(n, "ux")]).frequency_response([-1.0])
    # lumped beam mass without rotary inertia: massless rotations are refused, the DOF named
    beam = fm.Model(dim=2)
    beam.add_beam2d([[beam.add_node([0.0, 0.0]), beam.add_node([1.0, 0.0])]], EA=1.0, EI=1.0, rho_A=1.0)
    beam.fix(0)
    with pytest.raises(fm.ModelError, match=r"singular \(a massless coordinate, mostly node 1 rz"):
        fm.linearize(beam).state_space([(1, "uy")], [(1, "uy")])
    # a velocity sensor is not linear about a spinning state
    rotor, tip = _rotor(5.0, False)
    rotor.add_sensor("velocity", tip, name="v_tip")
    spin = (None, 5.0)
    moving = fm.linearize(rotor, u=fm.relative_equilibrium(rotor, spin), spin=spin)
    with pytest.raises(fm.ModelError, match="sensor 'v_tip' reads velocities"):
        moving.state_space([(tip, "uy")], ["v_tip"])


def test_frequency_response_plot():
    import matplotlib

    matplotlib.use("Agg")
    m, a, b = _chain()
    frf = fm.linearize(m).state_space([(b, "ux")], [(a, "ux"), (b, "ux")]).frequency_response(np.linspace(0.1, 5.0, 50))
    ax_mag, ax_phase = frf.plot()
    assert len(ax_mag.lines) == 2 and len(ax_phase.lines) == 2
    assert ax_phase.get_xlabel() == "frequency (Hz)"
    _close(ax_mag.lines[1].get_ydata(), frf.magnitude[:, 1, 0], 1e-14, "plotted magnitude")
    with pytest.raises(fm.ModelError, match=r"pair \(2, 0\) does not exist"):
        frf.plot(pairs=[(2, 0)])


@pytest.mark.parametrize("shift", [0.0, 1e4])
def test_finer_and_translated_cantilever(shift):
    """Beyond the case: a cantilever of 64 beams, moved 1e4 m from the origin, with a tip position sensor:
    its static compliance (FRF at 0 Hz) is L^3 / 3 EI, the sensor's equals the tip DOF's."""
    n, EI = 64, 100.0
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, n + 1) + shift, np.full(n + 1, shift)])
    g = m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e4, EI=EI, rho_A=1.0, rho_I=1e-4, mass="consistent")
    m.set_rayleigh_damping(g, alpha=2.0, beta=1e-4)
    m.fix(int(nodes[0]))
    tip = int(nodes[-1])
    m.add_sensor("position", tip, name="tip")
    ss = fm.linearize(m).state_space([(tip, "uy")], [(tip, "uy"), "tip"])
    H = ss.frequency_response([0.0, 3.0]).values
    static = 1.0 / (3.0 * EI)
    miss = H[0, 0, 0].real / static - 1.0
    assert abs(miss) <= 1e-6, f"static compliance off by {miss:.2e}"
    _close(H[:, 2, 0], H[:, 0, 0], 1e-6, "sensor p_y against the tip DOF")
