"""Models and helpers of the multibody validation cases (flexible double pendulum, rigid four-bar,
spatial spin-up): the four-bar's analytic kinematics and hand-derived reactions, the output
definitions, and short runs of each model that must keep the joints closed."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import flexmb as fm
from flexmb.rotations import exp_map, log_map
from flexmb.validation.registry import load_module

CASES = Path(__file__).resolve().parents[1] / "validation"
fb = load_module(CASES / "four_bar_rigid.py")
dp = load_module(CASES / "double_pendulum_flexible.py")
su = load_module(CASES / "spin_up_spatial.py")


# ------------------------------------------------------------------ four-bar
@pytest.mark.parametrize("theta2", [0.0, 0.7, 2.1, 3.5, 5.9])
def test_four_bar_kinematics_closes_the_loop_and_matches_finite_differences(theta2):
    k = fb.kinematics(theta2)
    # the loop closes: |B - A| = b, |B - O4| = c
    assert abs(abs(k["B"] - k["A"]) - fb.COUPLER) < 1e-14
    assert abs(abs(k["B"] - fb.GROUND) - fb.ROCKER) < 1e-14
    assert k["B"].imag > 0                                  # the branch of the reference configuration
    h = 1e-6 / fb.OMEGA                                     # time step of the finite differences
    kp, km = fb.kinematics(theta2 + fb.OMEGA * h), fb.kinematics(theta2 - fb.OMEGA * h)
    assert np.allclose((kp["theta"] - km["theta"]) / (2 * h), k["omega"], rtol=1e-7, atol=1e-7)
    assert np.allclose((kp["omega"] - km["omega"]) / (2 * h), k["alpha"], rtol=1e-6, atol=1e-5)
    assert np.allclose((kp["com"] - km["com"]) / (2 * h), k["vel"], rtol=1e-7, atol=1e-8)
    assert np.allclose((kp["vel"] - km["vel"]) / (2 * h), k["acc"], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("theta2", [0.3, 1.9, 4.4])
def test_four_bar_hand_reactions_balance_the_whole_mechanism_and_its_power(theta2):
    k = fb.kinematics(theta2)
    x = fb.hand_reactions(theta2)
    F1, F4, tau = x[0:2], x[6:8], x[8]
    g = np.array([0.0, -fb.GRAVITY])
    acc = np.c_[k["acc"].real, k["acc"].imag]
    vel = np.c_[k["vel"].real, k["vel"].imag]
    # internal joint forces cancel: the ground pivots carry sum m (a - g)
    assert np.allclose(F1 + F4, (fb.MASSES[:, None] * (acc - g)).sum(axis=0), rtol=1e-12, atol=1e-12)
    # the driving torque's power is the rate of kinetic plus potential energy
    rate = (np.sum(fb.MASSES * np.einsum("bi,bi->b", vel, acc - g))
            + np.sum(fb.INERTIAS * k["omega"] * k["alpha"]))
    assert tau * fb.OMEGA == pytest.approx(rate, rel=1e-10, abs=1e-12)


def test_four_bar_run_keeps_the_joints_and_matches_the_hand_reactions():
    asm, bodies = fb.build()
    t0, dt = 0.3, 1e-4
    u, v = fb.exact_state(asm, bodies, t0)
    assert np.abs(asm.constraints.values(u, t0)).max() < 1e-14           # exact state closes the loop
    h = fm.integrate(asm, dt, t0 + 4 * dt, t0=t0, u0=u, v0=v, progress=False)
    assert max(h.constraint_residual) < 1e-10
    sim = fb.simulated_reactions(asm, bodies, h)
    averaged = 0.5 * (sim[1] + sim[2])                                   # at t0 + dt
    hand = fb.hand_reactions(fb.OMEGA * (t0 + dt))
    assert np.abs(averaged - hand).max() < 1e-6 * np.abs(hand).max()


# ------------------------------------------------------- double pendulum
def test_double_pendulum_short_run_conserves_energy_and_keeps_the_hinges():
    asm, strip1, strip2 = dp.build()
    assert len(strip1) == len(strip2) == dp.N_ELEMENTS + 1
    assert len(asm.constraints.joints) == 2 and asm.constraints.n == 4
    h = fm.integrate(asm, dp.DT, 0.1, progress=False)
    assert max(h.constraint_residual) < 1e-10
    assert np.abs(h.total - h.total[0]).max() < 1e-8 * max(h.kinetic)
    x = h.positions(-1)
    assert np.allclose(x[strip1[-1]], x[strip2[0]], atol=1e-12)           # the middle hinge holds
    assert np.allclose(x[strip1[0]], [0.0, 0.0], atol=1e-12)
    deflection = dp.chord_deflection(asm, h, strip2)
    assert deflection[0] == 0.0 and 0.0 < deflection[-1] < 0.05


# ---------------------------------------------------------- spatial spin-up
def test_spin_up_effective_torsional_stiffness():
    a = np.sqrt(su.E * su.CH_GAMMA / su.CH_ST)
    assert a == pytest.approx(0.73211, rel=1e-4)
    assert su.EFFECTIVE_LENGTH == pytest.approx(5.5 - a)
    assert su.CH_ST_EFF == pytest.approx(0.645207 * 5.5 / (5.5 - a))
    assert su.CH_ST_EFF == pytest.approx(0.74428, rel=1e-4)


def rigid_state(asm: fm.Assembly, angle: float, tip: int | None = None, twist: float = 0.0) -> np.ndarray:
    """Every node turned rigidly by ``angle`` about Z; optionally the tip also twisted about its X."""
    R = exp_map(np.array([0.0, 0.0, angle]))
    u = np.zeros(asm.n_dof)
    X = asm.model.coordinates
    for node in range(len(X)):
        i = asm.dofs.index(node, "ux")
        u[i:i + 3] = R @ X[node] - X[node]
        u[i + 3:i + 6] = [0.0, 0.0, angle]
        if node == tip:
            u[i + 3:i + 6] = log_map(R @ exp_map(np.array([twist, 0.0, 0.0])))
    return u


def test_spin_up_outputs_vanish_for_a_rigid_rotation_and_measure_a_tip_twist():
    asm, hub, tip = su.build()
    u = rigid_state(asm, 0.8)
    assert np.abs(asm.constraints.values(u, 0.0)[6:]).max() < 1e-12     # all but the drive hold
    local, twist = su.rotating_frame_outputs(asm, hub, tip, SimpleNamespace(u=[u]))
    assert np.abs(local).max() < 1e-12 and abs(twist[0]) < 1e-12
    u = rigid_state(asm, 0.8, tip, twist=0.3)
    local, twist = su.rotating_frame_outputs(asm, hub, tip, SimpleNamespace(u=[u]))
    assert twist[0] == pytest.approx(0.3, abs=1e-12)


def test_spin_up_short_run_keeps_the_joints_and_the_energy_balance():
    asm, hub, tip = su.build()
    assert asm.constraints.n == 6 + 6 + 6 * (su.N_CHANNEL + 1)
    r = su.simulate(asm, hub, tip, 0.05, t_end=1.0)
    h = r["h"]
    assert max(h.constraint_residual) < 1e-10
    assert np.abs(h.total - h.total[0]).max() < 1e-8 * max(h.kinetic)
    # the rigid part follows the drive; the tip lags behind (u_y < 0) and twists (phi > 0)
    u = np.array(h.u)
    rz = u[:, asm.dofs.index(hub.node, "rz")]
    assert np.allclose(rz, [su.psi(t) for t in r["t"]], atol=1e-10)
    assert r["uy"][-1] < 0.0 and r["twist"][-1] > 0.0
