"""Tests of the time integrators: conservation, accuracy order, prescribed motion and cut-back.

Problems (Crisfield & Shi 1993 for the first two):

* Bathe's pendulum: one nearly rigid bar (EA = 1e10 N, L = 3.0443 m, tip mass 10 kg, g = 9.8),
  fired from the bottom at 7.725 m/s. Energy-conserving mid-point: exact energy for any dt;
  trapezoidal Newmark locks onto axial vibration and gains energy.
* Free-flying four-bar chain: length 400 m, 1 kg/m, EA = 1e10 N, no supports, no gravity,
  initial velocity of a rigid rotation at 1 rad/s about the right end. Energy and angular
  momentum conserved by the mid-point scheme, lumped or consistent mass.
* Free-flying planar beam (4 Beam2D elements) spinning at 5 rad/s with a superposed bending
  velocity; dt such that chords turn 0.5-1 rad per step. Energy is exact; angular momentum
  is conserved only to O(d_alpha^3) per step by design (see :mod:`flexmb.elements.beam2d`).

Energy and angular-momentum errors are the relative measures of :class:`flexmb.TimeHistory`:
|E(t) - E(0)| / K(0) and |L(t) - L(0)| / |L(0)|.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import flexmb as fm
from flexmb.integrators import NewtonSettings
from models import kicked_pendulum

TIGHT = NewtonSettings(residual_tol=1e-12)


# ----------------------------------------------------------------- problems
def pendulum(length: float, EA: float, mass: float, g: float, v0_tip: float) -> tuple[fm.Assembly, np.ndarray]:
    """One bar hanging from a pivot with a tip mass, fired horizontally: assembly and initial velocity."""
    m = fm.Model(dim=2)
    pivot, tip = m.add_node([0.0, 0.0]), m.add_node([0.0, -length])
    m.add_truss([pivot, tip], EA=EA)
    m.add_point_mass(tip, mass)
    m.fix(pivot)
    m.set_gravity([0.0, -g])
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.index(tip, "ux")] = v0_tip
    return asm, v0


def bathe_pendulum(EA: float = 1e10) -> tuple[fm.Assembly, np.ndarray]:
    """Bathe's pendulum (Crisfield & Shi 1993, section 2): assembly and initial velocity."""
    return pendulum(3.0443, EA, 10.0, 9.8, 7.725)


def free_chain(mass: str, n_el: int = 4, length: float = 400.0, EA: float = 1e10,
               omega: float = 1.0) -> tuple[fm.Assembly, np.ndarray]:
    """Free-flying straight truss chain spinning rigidly at omega (rad/s) about its right end."""
    m = fm.Model(dim=2)
    x = np.linspace(0.0, length, n_el + 1)
    nodes = m.add_nodes(np.c_[x, np.zeros_like(x)])
    m.add_truss(np.c_[nodes[:-1], nodes[1:]], EA=EA, rho_A=1.0, mass=mass)
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    for node, xi in zip(nodes, x):
        v0[asm.dofs.index(node, "uy")] = omega * (xi - length)       # omega x (x - x_right)
    return asm, v0


def free_beam(mass: str = "lumped", n_el: int = 4, omega: float = 5.0, bend: float = 1.0
              ) -> tuple[fm.Assembly, np.ndarray]:
    """Free-flying beam (1 m, EA = 1e6 N, EI = 10 N m^2, 1 kg/m, rho_I = 1e-3 kg m).

    Initial velocity: rigid spin at omega (rad/s) about the midpoint plus a symmetric bending
    velocity profile bend * cos(2 pi s) (m/s), s the distance from the midpoint.
    """
    m = fm.Model(dim=2)
    x = np.linspace(0.0, 1.0, n_el + 1)
    nodes = m.add_nodes(np.c_[x, np.zeros_like(x)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=10.0, rho_A=1.0, rho_I=1e-3, mass=mass)
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    s = x - 0.5
    for node, si in zip(nodes, s):
        v0[asm.dofs.index(node, "uy")] = omega * si + bend * np.cos(2.0 * np.pi * si)
        v0[asm.dofs.index(node, "rz")] = omega
    return asm, v0


def chord_rotation_per_step(asm: fm.Assembly, u: np.ndarray) -> float:
    """Largest chord rotation between consecutive outputs (rad); u is (n_out, n_dof)."""
    conn = asm.groups[0].connectivity
    angles = []
    for uk in u:
        x = asm.positions(uk)                                           # (n_nodes, 2)
        d = x[conn[:, 1]] - x[conn[:, 0]]                               # (n_el, 2)
        angles.append(np.arctan2(d[:, 1], d[:, 0]))
    steps = np.diff(np.array(angles), axis=0)                           # (n_out - 1, n_el)
    steps = (steps + np.pi) % (2.0 * np.pi) - np.pi                     # wrap to (-pi, pi]
    return float(np.abs(steps).max())


# ------------------------------------------------------- energy conservation
@pytest.mark.parametrize("dt", [0.1, 0.5])
def test_midpoint_conserves_energy_of_stiff_pendulum_and_newmark_drifts(dt):
    asm, v0 = bathe_pendulum()
    mid = fm.integrate(asm, dt, 8.0, scheme="mid-point", v0=v0)
    new = fm.integrate(asm, dt, 8.0, scheme="newmark", v0=v0)
    err_mid, err_new = mid.energy_error().max(), new.energy_error().max()
    assert err_mid < 1e-9, f"mid-point energy error {err_mid:.3e} > 1e-9 (dt = {dt})"
    # the bar stays rigid: no spurious axial vibration (strain energy ~ 3e-7 K0 measured)
    locked = max(mid.strain) / mid.kinetic[0]
    assert locked < 1e-5, f"mid-point strain energy reaches {locked:.3e} K0: locked onto axial vibration"
    # baseline: Newmark gains energy (measured 8.8 K0 at dt = 0.1, 4.2 K0 at dt = 0.5)
    assert err_new > 1e-2 and err_new > 1e6 * err_mid, \
        f"Newmark energy error {err_new:.3e} is not much larger than mid-point's {err_mid:.3e}"


@pytest.mark.parametrize("scheme", ["mid-point", "composed-mid-point"])
@pytest.mark.parametrize("mass", ["lumped", "consistent"])
@pytest.mark.parametrize("dt", [0.1, 2.0])
def test_midpoint_conserves_energy_and_angular_momentum_of_free_chain(mass, dt, scheme):
    asm, v0 = free_chain(mass)
    h = fm.integrate(asm, dt, 100 * dt if dt < 1 else 40.0, v0=v0, scheme=scheme)
    e, L = h.energy_error().max(), h.angular_momentum_error().max()
    assert e < 1e-9, f"{mass} mass, dt = {dt}: energy error {e:.3e} > 1e-9"
    assert L < 1e-10, f"{mass} mass, dt = {dt}: angular momentum error {L:.3e} > 1e-10"
    # nearly rigid spin: the centrifugal strain is at most rho w^2 (L/2)^2 / (2 EA) = 2e-6 and,
    # since the chain starts unstretched, oscillates up to about twice that (measured 3.7e-6 to
    # 4.1e-6); Newmark's false axial vibration reaches 4e-3 at dt = 0.1
    strain = max(np.abs(asm.axial_strains(u)).max() for u in h.u)
    assert strain < 1e-5, f"chain strain reaches {strain:.3e} (> 1e-5): spurious axial vibration"


def test_newmark_drifts_on_free_chain():
    asm, v0 = free_chain("lumped")
    h = fm.integrate(asm, 0.1, 10.0, scheme="newmark", v0=v0)
    err = h.energy_error().max()
    assert err > 1e-2, f"Newmark energy error {err:.3e}: expected the known drift (> 1e-2, measured ~1e2)"


def test_midpoint_conserves_energy_of_free_spinning_beam():
    asm, v0 = free_beam()
    h = fm.integrate(asm, 0.1, 10.0, v0=v0, newton=TIGHT)
    rot = chord_rotation_per_step(asm, np.array(h.u))
    assert 0.5 < rot < 1.0, f"chord rotation per step {rot:.3f} rad is outside the intended 0.5-1 rad"
    bending = max(h.strain) / h.kinetic[0]
    assert bending > 1e-2, f"strain energy only {bending:.3e} K0: the beam hardly deforms"
    err = h.energy_error().max()
    assert err < 1e-9, f"beam energy error {err:.3e} > 1e-9 over {len(h.t) - 1} steps"


def test_beam_step_with_a_node_turning_past_its_chord_keeps_energy():
    """Regression (2026-11-21): at dt = 0.2 s, step 37 of this run used to converge to a state
    where node 0 lagged its chord by a full turn (local rotations were re-wrapped into (-pi, pi]),
    and the energy error jumped from 3e-10 to 0.17 K0."""
    asm, v0 = free_beam()
    h = fm.integrate(asm, 0.2, 10.0, v0=v0)
    err = h.energy_error().max()
    assert err < 1e-8, f"energy error {err:.3e} > 1e-8 (first > 1e-6 at step {np.argmax(h.energy_error() > 1e-6)})"


# --------------------------------------------------------- angular momentum
def test_beam_angular_momentum_drift_is_third_order_per_step():
    """Beam2D's mid-point force is not torque-free: |dL| = O(dt^3) per step, O(dt^2) over a fixed time.

    Measured (this problem): one-step rates 2.85, 2.82, 2.86 between dt = 0.02, 0.01, 0.005,
    0.0025 (fit 2.84); over 0.4 s the largest error falls at rates 1.98, 1.97, 1.96 (fit 1.97).
    The tolerances [2.5, 3.5] and [1.8, 2.2] allow for the pre-asymptotic axial vibration
    (EA = 1e6 N, axial frequencies ~ 4000 rad/s are not resolved by these steps).
    """
    asm, v0 = free_beam()
    dts = np.array([0.02, 0.01, 0.005, 0.0025])
    one_step = np.array([fm.integrate(asm, dt, dt, v0=v0, newton=NewtonSettings(residual_tol=1e-13))
                         .angular_momentum_error()[-1] for dt in dts])
    over_time = np.array([fm.integrate(asm, dt, 0.4, v0=v0, newton=NewtonSettings(residual_tol=1e-13))
                          .angular_momentum_error().max() for dt in dts])
    assert one_step[0] > 1e-8, \
        f"one-step angular momentum error {one_step[0]:.3e}: expected a visible O(dt^3) drift by design"
    rate1 = np.polyfit(np.log(dts), np.log(one_step), 1)[0]
    rate2 = np.polyfit(np.log(dts), np.log(over_time), 1)[0]
    assert 2.5 <= rate1 <= 3.5, f"one-step drift rate {rate1:.3f} outside [2.5, 3.5]; errors {one_step}"
    assert 1.8 <= rate2 <= 2.2, f"drift rate over 0.4 s {rate2:.3f} outside [1.8, 2.2]; errors {over_time}"


# ------------------------------------------------------------ order of accuracy
def soft_pendulum() -> tuple[fm.Assembly, np.ndarray]:
    """Elastic pendulum: L = 1 m, tip mass 1 kg, EA = 100 N (axial frequency 10 rad/s), g = 9.81."""
    return pendulum(1.0, 100.0, 1.0, 9.81, 3.0)


@pytest.fixture(scope="module")
def soft_pendulum_reference() -> np.ndarray:
    """Displacements at t = 1 s with dt = 0.005 / 16 (error ~ 1/256 of the finest test step's)."""
    asm, v0 = soft_pendulum()
    return fm.integrate(asm, 0.005 / 16, 1.0, v0=v0, newton=NewtonSettings(residual_tol=1e-13)).u[-1]


@pytest.mark.parametrize("scheme", ["mid-point", "newmark"])
def test_second_order_accuracy(scheme, soft_pendulum_reference):
    """Measured rates: mid-point 1.97 (1.93, 1.98, 2.00), Newmark 1.98 (1.94, 1.99, 2.00)."""
    asm, v0 = soft_pendulum()
    dts = np.array([0.04, 0.02, 0.01, 0.005])
    errors = np.array([np.linalg.norm(fm.integrate(asm, dt, 1.0, scheme=scheme, v0=v0,
                                                   newton=NewtonSettings(residual_tol=1e-13)).u[-1]
                                      - soft_pendulum_reference) for dt in dts])
    rate = np.polyfit(np.log(dts), np.log(errors), 1)[0]
    assert 1.8 <= rate <= 2.2, f"{scheme}: convergence rate {rate:.3f} outside [1.8, 2.2]; errors {errors}"


# ------------------------------------------------------------ prescribed motion
def shaken_pendulum(mass: str) -> tuple[fm.Assembly, np.ndarray, int, Callable[[float], float]]:
    """Double pendulum (bars of 1 m and ~1 m) whose pivot is shaken horizontally, under gravity."""
    A, w = 0.3, 4.0

    def pivot_x(t: float) -> float:
        return A * np.sin(w * t)

    m = fm.Model(dim=2)
    pivot, mid, tip = m.add_nodes([[0.0, 0.0], [0.0, -1.0], [0.2, -2.0]])
    m.add_truss([[pivot, mid], [mid, tip]], EA=1e4, rho_A=0.5, mass=mass)
    m.add_point_mass(tip, 2.0)
    m.prescribe(pivot, "ux", pivot_x)
    m.fix(pivot, "uy")
    m.set_gravity([0.0, -9.81])
    asm = fm.Assembly(m)
    i = asm.dofs.index(pivot, "ux")
    v0 = np.zeros(asm.n_dof)                # the pivot's initial velocity comes from pivot_x
    return asm, v0, i, pivot_x


@pytest.mark.parametrize("mass", ["lumped", "consistent"])
def test_prescribed_motion_is_followed_and_energy_balance_holds(mass):
    asm, v0, i, pivot_x = shaken_pendulum(mass)
    h = fm.integrate(asm, 0.01, 3.0, v0=v0, newton=TIGHT)
    a = h.arrays()
    v_start = a["v"][0, i]
    assert abs(v_start - 0.3 * 4.0) < 1e-8, f"initial pivot velocity {v_start} differs from A w = 1.2 m/s"
    follow = np.abs(a["u"][:, i] - np.array([pivot_x(t) for t in a["t"]])).max()
    assert follow <= 1e-15, f"prescribed DOF misses its motion by {follow:.3e} m"

    K_max = a["kinetic"].max()
    balance = np.abs(a["total"] - a["total"][0]).max() / K_max
    assert balance < 1e-9, f"{mass}: |K + Phi - W - E0| / K_max = {balance:.3e} > 1e-9"
    # the support must do real work, otherwise the balance would not test the reaction work:
    # W = gravity work (f_g . (u - u0), constant load) + support work
    f_gravity = asm.external_force(0.0)
    support_work = a["work"] - (a["u"] - a["u"][0]) @ f_gravity
    assert np.abs(support_work).max() > 0.1 * K_max, \
        f"support work {np.abs(support_work).max():.3e} J is too small to test (K_max = {K_max:.3e} J)"


# ------------------------------------------------------------------ cut-back
def test_cutback_rescues_steps_that_fail_newton():
    asm, v0 = bathe_pendulum()
    h = fm.integrate(asm, 0.1, 1.0, v0=v0, newton=NewtonSettings(max_iterations=3))
    assert h.cutbacks > 0, "expected cut-backs with max_iterations=3 on the stiff pendulum at dt = 0.1"
    t = np.array(h.t)
    assert np.allclose(t, 0.1 * np.arange(11), rtol=0, atol=1e-14), f"output times {t} are not k dt"
    err = h.energy_error().max()
    assert err < 1e-9, f"energy error {err:.3e} after {h.cutbacks} cut-backs"


def test_exhausted_cutback_raises_with_partial_history_and_file(tmp_path):
    asm = kicked_pendulum()
    path = tmp_path / "partial.h5"
    # at rest the steps to 0.1 and 0.2 s converge at once; the kicked step needs more than 3 iterations
    with pytest.raises(fm.TimeIntegrationError, match="cut-backs") as info:
        fm.integrate(asm, 0.1, 1.0, newton=NewtonSettings(max_iterations=3), max_cutbacks=0, save_to=path)
    h = info.value.history
    assert np.allclose(h.t, [0.0, 0.1, 0.2], rtol=0, atol=1e-14), f"history holds t = {h.t}, expected 0, 0.1, 0.2"
    assert len(h.u) == len(h.v) == len(h.kinetic) == 3
    assert str(path) in str(info.value), "the message does not say where the results were written"
    saved = fm.load_result(path)
    assert np.allclose(saved.t, h.t), f"saved t = {saved.t}, history t = {h.t}"
    assert np.array(saved.u).shape == (3, asm.n_dof)
    assert saved.scheme == "mid-point" and saved.meta["status"] == "failed"
    assert [e.kind for e in saved.events] == ["error"], saved.format_log()


def test_newmark_starts_with_massless_rotations():
    """Regression (2026-11-23): Newmark's start acceleration needs M^-1, which failed with "Factor is
    exactly singular" for beams without rotary inertia (rho_I = 0); such DOFs are held by the
    elements' stiffness and now start at zero acceleration. Both schemes agree on the motion."""
    m = fm.Model(dim=2)
    m.add_nodes([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    m.add_beam2d([[0, 1], [1, 2]], EA=1e6, EI=10.0, rho_A=1.0, rho_I=0.0)
    m.fix(0)
    m.set_gravity([0.0, -9.81])
    tips = [fm.integrate(m, 1e-3, 0.1, scheme=s, progress=False).dof(2, "uy")[-1] for s in ("newmark", "mid-point")]
    assert tips[0] < -0.04 and abs(tips[0] / tips[1] - 1.0) < 1e-4, tips
