"""Shared models of the planar mechanism validation cases (slider-crank, spin-up): hub angle,
rigid initial velocity field, output definitions, peak finding and the time-step study bookkeeping;
a short slider-crank run guards Meijaard's element (Beam2D, cubic mass, second-order strain)."""
from __future__ import annotations

import numpy as np
import pytest

from flexmb.validation import slider_crank as sc
from flexmb.validation import spin_up as su

OMEGA_S, T_S = 6.0, 15.0


def test_hub_angle_starts_at_rest():
    h = 1e-3
    assert su.hub_angle(0.0, OMEGA_S, T_S) == 0.0
    assert su.hub_rate(0.0, OMEGA_S, T_S) == 0.0
    # psi ~ t^4 near 0: angle, rate and acceleration vanish at the start
    assert abs(su.hub_angle(h, OMEGA_S, T_S)) < 1e-12
    assert abs(su.hub_rate(h, OMEGA_S, T_S)) < 1e-8


def test_hub_angle_continuous_at_spin_up_time():
    eps = 1e-9
    assert su.hub_angle(T_S, OMEGA_S, T_S) == pytest.approx(OMEGA_S * T_S / 2.0, rel=1e-14)
    assert su.hub_angle(T_S + eps, OMEGA_S, T_S) == pytest.approx(su.hub_angle(T_S - eps, OMEGA_S, T_S), abs=1e-7)
    assert su.hub_rate(T_S, OMEGA_S, T_S) == pytest.approx(OMEGA_S, rel=1e-14)
    assert su.hub_rate(T_S + eps, OMEGA_S, T_S) == pytest.approx(su.hub_rate(T_S - eps, OMEGA_S, T_S), abs=1e-7)
    # the acceleration also vanishes at T_s from the left (smooth end of the spin-up)
    h = 1e-4
    acc_left = (su.hub_rate(T_S, OMEGA_S, T_S) - su.hub_rate(T_S - h, OMEGA_S, T_S)) / h
    assert abs(acc_left) < 1e-4
    assert su.hub_angle(20.0, OMEGA_S, T_S) == pytest.approx(OMEGA_S * (20.0 - T_S / 2.0))


@pytest.mark.parametrize("t", [0.7, 5.0, 7.5, 14.2, 16.0])
def test_hub_rate_is_the_derivative_of_the_angle(t):
    h = 1e-5
    fd = (su.hub_angle(t + h, OMEGA_S, T_S) - su.hub_angle(t - h, OMEGA_S, T_S)) / (2.0 * h)
    assert su.hub_rate(t, OMEGA_S, T_S) == pytest.approx(fd, rel=1e-8, abs=1e-10)


def test_spin_up_model_prescribes_the_hub_angle():
    beam = su.SpinUpBeam("t", 10.0, 2.8e7, 1.4e4, 1.2, 6e-4, OMEGA_S, T_S, {4: -1.0}, -1.0, "Fig. 4")
    asm, nodes = su.build(beam, 4)
    assert asm.n_dof == 15 and len(nodes) == 5
    slot = int(np.searchsorted(asm.dofs.prescribed, asm.dofs.index(nodes[0], "rz")))
    assert asm.prescribed_values(9.0)[slot] == pytest.approx(beam.psi(9.0))
    assert set(asm.dofs.prescribed) == {asm.dofs.index(nodes[0], d) for d in ("ux", "uy", "rz")}


def test_tip_deflection_normal_to_the_rotated_axis():
    beam = su.SpinUpBeam("t", 10.0, 1.0, 1.0, 1.0, 0.0, OMEGA_S, T_S, {4: -1.0}, -1.0, "Fig. 4")
    t = np.array([3.0, 9.0, 18.0])
    psi = np.array([beam.psi(x) for x in t])
    axis = np.c_[np.cos(psi), np.sin(psi)]
    normal = np.c_[-np.sin(psi), np.cos(psi)]
    assert np.allclose(su.tip_deflection(beam, t, 9.9 * axis), 0.0, atol=1e-12)      # shortened, not bent
    assert np.allclose(su.tip_deflection(beam, t, 10.0 * axis - 0.5 * normal), -0.5)  # lagging behind


def test_slider_crank_rigid_kinematics():
    omega, theta, h = 124.8, 0.83, 1e-7
    k = sc.rigid_kinematics(theta, omega)
    assert np.linalg.norm(k["slider"] - k["pin"]) == pytest.approx(sc.ROD, rel=1e-14)
    assert k["slider"][1] == 0.0
    kp, km = sc.rigid_kinematics(theta + h, omega), sc.rigid_kinematics(theta - h, omega)
    for pos, vel in (("pin", "v_pin"), ("slider", "v_slider")):
        fd = (kp[pos] - km[pos]) / (2.0 * h) * omega                 # d/dt = omega d/dtheta
        assert np.allclose(k[vel], fd, rtol=1e-6, atol=1e-6)
    assert k["phi_dot"] == pytest.approx((kp["phi"] - km["phi"]) / (2.0 * h) * omega, rel=1e-6)
    # the rigid velocity field ends at the slider's velocity
    s = np.array([0.0, sc.ROD])
    vel, phi_dot = sc.rigid_rod_velocity(theta, omega, s)
    assert np.allclose(vel[0], k["v_pin"]) and np.allclose(vel[1], k["v_slider"], atol=1e-12)
    assert phi_dot == k["phi_dot"]


@pytest.mark.parametrize("n_elements", [2, 4])
def test_slider_crank_initial_velocities_are_rigid(n_elements):
    omega = 150.0
    asm, v0, nodes = sc.build(n_elements, omega, slider_mass=0.0378126)
    group = asm.model.groups[0]
    X = asm.model.coordinates[group.connectivity]
    eps = 1e-7
    (up,), (um,) = asm.gather(eps * v0), asm.gather(-eps * v0)
    strain_rate = (group.axial_strain(X, up) - group.axial_strain(X, um)) / (2.0 * eps)
    bending_rate = (group.local_rotations(X, up) - group.local_rotations(X, um)) / (2.0 * eps)
    assert np.abs(strain_rate).max() < 1e-6 * omega
    assert np.abs(bending_rate).max() < 1e-6 * omega
    # crank pin: the prescribed motion's velocity; slider: on its line, at rest at theta = 0
    pin = [asm.dofs.index(nodes[0], d) for d in ("ux", "uy")]
    slots = np.searchsorted(asm.dofs.prescribed, pin)
    assert np.allclose(v0[pin], asm.prescribed_velocities(0.0)[slots], rtol=1e-6, atol=1e-6)
    assert np.allclose(v0[pin], [0.0, sc.CRANK * omega])
    assert v0[asm.dofs.index(nodes[-1], "uy")] == 0.0 and v0[asm.dofs.index(nodes[-1], "ux")] == 0.0
    assert asm.dofs.index(nodes[-1], "uy") in asm.dofs.prescribed
    rz = [asm.dofs.index(n, "rz") for n in nodes]
    assert np.allclose(v0[rz], -sc.CRANK * omega / sc.ROD)
    assert asm.dofs.index(nodes[0], "rz") not in asm.dofs.prescribed            # a pin


def test_midspan_deflection_sign_and_scale():
    chord = np.array([[0.0, 0.0], [0.1, 0.0], [0.2, 0.0], [0.3, 0.0], [0.4, 0.0]])
    bent = chord.copy()
    bent[2, 1] = 0.003                                   # to the left of the chord pin -> slider
    out = sc.midspan_deflection(np.stack([chord, bent, bent[::-1]]))
    assert out == pytest.approx([0.0, 0.003 / sc.ROD, -0.003 / sc.ROD])


def test_parabola_vertex_is_exact_for_a_parabola():
    x = np.arange(0.0, 1.0, 0.1)
    y = 2.0 - 3.0 * (x - 0.33) ** 2
    k = int(np.argmax(y))
    assert sc.parabola_vertex(x, y, k) == pytest.approx((0.33, 2.0), rel=1e-12)


def test_first_maximum_skips_small_early_bumps():
    x = np.linspace(0.0, 8.0, 4001)
    y = np.exp(-(x - 1.0) ** 2 / 0.1) + 0.005 * np.sin(30.0 * x) + 1.2 * np.exp(-(x - 5.0) ** 2)
    xp, yp = sc.first_maximum(x, y)
    assert xp == pytest.approx(1.0, abs=0.01)
    assert yp == pytest.approx(1.0, abs=0.006)
    # the same with a sine: the first peak at pi/4 with value 1
    xp, yp = sc.first_maximum(x, np.sin(2.0 * x))
    assert xp == pytest.approx(np.pi / 4.0, abs=1e-6) and yp == pytest.approx(1.0, abs=1e-8)
    assert np.isnan(sc.first_maximum(x, -x)[0])


def test_time_step_study_bookkeeping():
    def quantity(scheme, dt):
        if scheme == "newmark" and dt > 0.05:
            return None, {"failed": "diverged"}
        return 1.0 + (3.0 if scheme == "newmark" else 0.9) * dt**2, {"cutbacks": 0}

    study = sc.time_step_study(quantity, [0.2, 0.1, 0.05, 0.025], reference=1.0)
    assert study["mid-point: largest step within 1% of the reference"] == 0.1
    assert study["newmark: largest step within 1% of the reference"] == 0.05
    assert study["time_converged_value"] == pytest.approx(1.0 + 0.9 * 0.025**2)
    assert len(study["rows"]) == 8
    assert sc.largest_passing_step([], "error_vs_reference") is None


def test_cubic_mass_two_element_slider_crank_first_maximum():
    """Guards Beam2D(mass="cubic", second_order=True): Meijaard's 2-element first maximum of case A
    (Table 3, 0.00973) within 1.5 % from a short coarse run (first 1.5 rad, 320 steps per 8 rad);
    the linear and lumped masses miss it by 20-30 %."""
    case = sc.SliderCrankCase("a", omega=124.8, slider_mass=0.0, reference={2: 0.00973}, tolerance={2: 1.5e-2},
                              converged=0.009762, converged_angle=0.690, figure_source="Fig. 1")
    run = sc.simulate(case, 2, 320, turn=1.5)
    assert run.failed is None and run.mass == "cubic"
    assert run.angle[-1] == pytest.approx(1.5, abs=0.03)
    assert run.peak == pytest.approx(0.00973, rel=1.5e-2)
    assert run.peak_angle == pytest.approx(0.69, abs=0.03)
    assert run.stats["energy_error_max"] < 1e-8


def test_lowest_frequency_includes_the_cubic_mass():
    exact = np.pi**2 * np.sqrt(sc.EI / (sc.RHO_A * sc.ROD**4))
    assert sc.rod_frequency(2, "cubic") == pytest.approx(exact, rel=5e-3)
    assert sc.rod_frequency(2, "consistent") > 1.15 * exact           # linear mass keeps mass at the pins
