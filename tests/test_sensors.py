"""Sensors (flexmb/sensors.py): values against hand calculations, recording into results and
files, restart, plotting by name and bad input.

Hand calculations used:
* rigid physical pendulum (rod of length L on a revolute joint at the origin, gravity -y,
  theta from the x axis): tip p = L (cos theta, sin theta), v = L theta' (-sin, cos),
  a = L theta'' (-sin, cos) - L theta'^2 (cos, sin) with theta'' = -m g (L/2) cos theta / J_O,
  J_O = m L^2 / 3;
* slider on an inclined frictionless prismatic joint (angle beta): slide s = -g sin(beta) t^2 / 2
  (the mid-point scheme integrates constant acceleration exactly);
* Cardan and Euler angles: rebuilding R from the recorded angles gives the recorded R;
* a driven 3D revolute joint: relative angle = the drive f(t), continued past pi;
* a bar under an end force P: N = P and tip x = L (1 + P / EA) (engineering strain of the
  co-rotational truss).
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import flexmb as fm
from flexmb.sensors import axis_rotation, cardan_angles, euler_angles

G = 9.81


def pendulum(L: float = 1.5, m: float = 2.0) -> tuple[fm.Model, fm.RigidBody, fm.Joint]:
    """Rigid rod, centre of mass at (L/2, 0), hinged to the ground at the origin, horizontal at rest."""
    model = fm.Model(dim=2)
    rod = model.add_rigid_body([L / 2, 0.0], mass=m, inertia=m * L**2 / 12, name="rod")
    hinge = model.add_joint("revolute", None, rod, at=[0.0, 0.0], name="hinge")
    model.set_gravity([0.0, -G])
    model.add_sensor("position", rod, offset=[L / 2, 0.0], name="tip")
    model.add_sensor("velocity", rod, offset=[L / 2, 0.0], name="tip_v")
    model.add_sensor("acceleration", rod, offset=[L / 2, 0.0], name="tip_a")
    model.add_sensor("acceleration", rod, name="centre_a")
    model.add_sensor("angle", rod, name="theta")
    model.add_sensor("angular_velocity", rod, name="omega")
    model.add_sensor("joint_coordinate", hinge, name="q")
    model.add_sensor("joint_rate", "hinge", name="q_rate")
    return model, rod, hinge


def test_point_on_rigid_pendulum_matches_the_angle():
    L = 1.5
    model, _, _ = pendulum(L)
    h = fm.integrate(model, dt=0.01, t_end=1.0)
    theta, omega = h.sensor("theta"), h.sensor("omega")
    c, s = np.cos(theta), np.sin(theta)
    assert theta.min() < -1.5, "the pendulum should swing through the bottom"
    err_p = np.abs(h.sensor("tip") - L * np.c_[c, s]).max() / L
    assert err_p < 1e-12, f"tip position off the hand value by {err_p:.2e} L"
    # rigid-body velocity field from the centre's velocity (the body node's DOFs) and theta'
    centre_v = np.array([h.velocity(0, "ux"), h.velocity(0, "uy")]).T
    hand = centre_v + (L / 2) * omega[:, None] * np.c_[-s, c]
    speed = L * np.abs(omega).max()
    err_v = np.abs(h.sensor("tip_v") - hand).max() / speed
    assert err_v < 1e-12, f"tip velocity off v_c + theta' (L/2) (-sin, cos) by {err_v:.2e}"
    # the mid-point scheme holds the joint at positions and at velocities to O(dt^2): L theta'
    # (-sin, cos) is met to 8.8e-5 of the largest speed at dt = 10 ms (measured)
    err_pivot = np.abs(h.sensor("tip_v") - L * omega[:, None] * np.c_[-s, c]).max() / speed
    assert err_pivot < 3e-4, f"tip velocity off L theta' (-sin, cos) by {err_pivot:.2e}"
    # the ground is side A: the joint's relative angle and rate are the rod's own
    assert np.abs(h.sensor("q") - theta).max() < 1e-14
    assert np.abs(h.sensor("q_rate") - omega).max() < 1e-14


def test_point_acceleration_against_the_equation_of_motion_and_differences_of_velocity():
    """The mid-point scheme's acceleration is the step's mean (v1 - v0)/dt: at the centre of mass
    it equals the backward difference of the recorded velocity exactly. At the tip the sensor
    adds alpha x r + omega x (omega x r) with the end-of-step omega and r to it, so it differs
    from the exact acceleration of the equation of motion, and from the backward difference of the
    tip velocity, by O(dt) (measured: 6.6e-2 g and 3.6e-2 g at dt = 10 ms, half at 5 ms)."""
    L, m = 1.5, 2.0
    errors, differences = [], []
    for dt in (0.01, 0.005):
        model, rod, _ = pendulum(L, m)
        model.add_sensor("velocity", rod, name="centre_v")
        h = fm.integrate(model, dt=dt, t_end=1.0)
        backward = np.diff(h.sensor("centre_v"), axis=0) / dt
        assert np.abs(h.sensor("centre_a")[1:] - backward).max() < 1e-10 * G
        assert np.abs(h.sensor("centre_a")[0]).max() == 0.0           # no step yet at t0: a = 0
        theta, omega = h.sensor("theta"), h.sensor("omega")
        alpha = -m * G * (L / 2) * np.cos(theta) / (m * L**2 / 3)          # J_O theta'' = moment of gravity
        c, s = np.cos(theta), np.sin(theta)
        exact = L * alpha[:, None] * np.c_[-s, c] - L * omega[:, None] ** 2 * np.c_[c, s]
        errors.append(np.abs(h.sensor("tip_a")[1:] - exact[1:]).max() / G)
        backward = np.diff(h.sensor("tip_v"), axis=0) / dt
        differences.append(np.abs(h.sensor("tip_a")[1:] - backward).max() / G)
    assert errors[0] < 0.2, f"tip acceleration off the equation of motion by {errors[0]:.2e} g at dt = 10 ms"
    assert differences[0] < 0.11, f"tip acceleration off differences of its velocity by {differences[0]:.2e} g"
    for name, e in (("equation of motion", errors), ("differences of velocity", differences)):
        order = np.log2(e[0] / e[1])
        assert 0.8 < order < 1.2, f"acceleration against the {name}: order {order:.2f}, expected 1"


def test_relative_angle_of_two_bodies_and_a_prismatic_slide():
    beta = np.radians(30.0)
    model = fm.Model(dim=2)
    a = model.add_rigid_body([0.5, 0.0], 1.0, 0.1, name="a")
    b = model.add_rigid_body([1.5, 0.0], 1.0, 0.1, name="b")
    model.add_joint("revolute", None, a, at=[0.0, 0.0])
    elbow = model.add_joint("revolute", a, b, at=[1.0, 0.0], name="elbow")
    slider = model.add_rigid_body([3.0, 1.0], 0.5, 0.01, name="slider")
    incline = model.add_joint("prismatic", None, slider, x_axis=[np.cos(beta), np.sin(beta)], name="incline")
    model.set_gravity([0.0, -G])
    model.add_sensor("angle", a, name="theta_a")
    model.add_sensor("angle", b, name="theta_b")
    model.add_sensor("joint_coordinate", elbow, name="elbow")
    model.add_sensor("joint_rate", elbow, name="elbow_rate")
    model.add_sensor("angular_velocity", a, name="omega_a")
    model.add_sensor("angular_velocity", b, name="omega_b")
    model.add_sensor("joint_coordinate", incline, name="s")
    model.add_sensor("joint_rate", incline, name="s_rate")
    h = fm.integrate(model, dt=0.01, t_end=0.6)
    assert np.abs(h.sensor("elbow") - (h.sensor("theta_b") - h.sensor("theta_a"))).max() < 1e-14
    assert np.abs(h.sensor("elbow")).max() > 0.1, "the elbow should bend"
    assert np.abs(h.sensor("elbow_rate") - (h.sensor("omega_b") - h.sensor("omega_a"))).max() < 1e-14
    t = h.parameter
    s_exact = -0.5 * G * np.sin(beta) * t**2
    assert np.abs(h.sensor("s") - s_exact).max() < 1e-9 * np.abs(s_exact).max()
    assert np.abs(h.sensor("s_rate") - G * np.sin(beta) * -t).max() < 1e-9 * G * t[-1]


def spinning_body(drive=None) -> tuple[fm.Model, fm.RigidBody]:
    model = fm.Model(dim=3)
    body = model.add_rigid_body([0.0, 0.0, 0.0], 1.0, [1.0, 2.0, 3.0], name="top")
    if drive is not None:
        axis = np.array([1.0, 1.0, 1.0]) / np.sqrt(3.0)
        model.add_joint("revolute", None, body, at=[0.0, 0.0, 0.0], axis=axis, drive=drive, name="shaft")
        model.add_sensor("joint_coordinate", "shaft", name="q")
        model.add_sensor("joint_rate", "shaft", name="q_rate")
    for quantity in ("rotation_matrix", "cardan", "euler", "angular_velocity"):
        model.add_sensor(quantity, body, name=quantity)
    return model, body


def test_cardan_and_euler_angles_rebuild_the_rotation_matrix():
    model, body = spinning_body()
    asm = fm.Assembly(model)
    v0 = np.zeros(asm.n_dof)
    v0[[asm.dofs.index(body.node, r) for r in ("rx", "ry", "rz")]] = [0.7, 2.0, 0.4]   # rad/s, torque free
    h = fm.integrate(asm, dt=0.01, t_end=3.0, v0=v0)
    R = h.sensor("rotation_matrix").reshape(-1, 3, 3)
    assert np.abs(np.einsum("kji,kjl->kil", R, R) - np.eye(3)).max() < 1e-12
    phi = h.sensor("cardan")
    rebuilt = np.array([axis_rotation(0, a) @ axis_rotation(1, b) @ axis_rotation(2, c) for a, b, c in phi])
    assert np.abs(rebuilt - R).max() < 1e-12, "R_x R_y R_z of the Cardan angles is not the rotation matrix"
    psi, theta, ph = h.sensor("euler").T
    rebuilt = np.array([axis_rotation(2, a) @ axis_rotation(0, b) @ axis_rotation(2, c) for a, b, c in zip(psi, theta, ph)])
    assert np.abs(rebuilt - R).max() < 1e-12, "R_z R_x R_z of the Euler angles is not the rotation matrix"
    assert np.abs(h.sensor("angular_velocity") - np.array(h.v)[:, 3:6]).max() == 0.0
    # the functions themselves on a known rotation
    known = axis_rotation(0, 0.3) @ axis_rotation(1, -0.4) @ axis_rotation(2, 2.5)
    assert np.abs(cardan_angles(known) - [0.3, -0.4, 2.5]).max() < 1e-14
    known = axis_rotation(2, -2.0) @ axis_rotation(0, 1.1) @ axis_rotation(2, 0.6)
    assert np.abs(euler_angles(known) - [-2.0, 1.1, 0.6]).max() < 1e-14
    for locked in (axis_rotation(0, 0.3) @ axis_rotation(1, np.pi / 2) @ axis_rotation(2, 0.2),
                   axis_rotation(0, 0.3) @ axis_rotation(1, -np.pi / 2) @ axis_rotation(2, 0.2)):
        a, b, c = cardan_angles(locked)
        assert np.abs(axis_rotation(0, a) @ axis_rotation(1, b) @ axis_rotation(2, c) - locked).max() < 1e-12
    for locked in (axis_rotation(2, 0.7), axis_rotation(2, 0.7) @ axis_rotation(0, np.pi)):
        a, b, c = euler_angles(locked)
        assert np.abs(axis_rotation(2, a) @ axis_rotation(0, b) @ axis_rotation(2, c) - locked).max() < 1e-12


def test_angles_are_continued_past_pi():
    """A body spinning about its principal axis z at 2.5 rad/s (7.5 rad in 3 s): phi_z and
    psi + phi follow the angle of R about z without jumps of 2 pi (numpy's unwrap of
    atan2(R21, R11)); the other angles stay zero."""
    model, body = spinning_body()
    asm = fm.Assembly(model)
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.index(body.node, "rz")] = 2.5
    h = fm.integrate(asm, dt=0.05, t_end=3.0, v0=v0)
    R = h.sensor("rotation_matrix").reshape(-1, 3, 3)
    turned = np.unwrap(np.arctan2(R[:, 1, 0], R[:, 0, 0]))
    assert turned[-1] > 7.0
    zero = np.zeros_like(turned)
    assert np.abs(h.sensor("cardan") - np.c_[zero, zero, turned]).max() < 1e-12
    assert np.abs(h.sensor("euler")[:, 0] + h.sensor("euler")[:, 2] - turned).max() < 1e-12


def test_driven_spatial_revolute_angle_is_the_drive_continued_past_pi():
    rate = 2.5                                                        # rad/s, 7.5 rad over 3 s
    model, _ = spinning_body(drive=lambda t: rate * t)
    asm = fm.Assembly(model)
    v0 = np.zeros(asm.n_dof)
    v0[3:6] = rate * np.array([1.0, 1.0, 1.0]) / np.sqrt(3.0)        # the body's node: spin about the axis
    h = fm.integrate(asm, dt=0.02, t_end=3.0, v0=v0)
    q = h.sensor("q")
    assert np.abs(q - rate * h.parameter).max() < 1e-8, "relative angle differs from the drive"
    # the mid-point scheme meets the joint's velocity equation to O(dt^2): measured 1.0e-3 rad/s
    assert np.abs(h.sensor("q_rate")[1:] - rate).max() < 4e-3
    # the rotation about the axis (1,1,1)/sqrt 3 seen through the Cardan angles: R round trip
    R = h.sensor("rotation_matrix").reshape(-1, 3, 3)
    assert np.abs(np.trace(R, axis1=1, axis2=2) - (1 + 2 * np.cos(q))).max() < 1e-8


def test_element_output_and_position_sensors_in_statics():
    L, EA, P = 2.0, 1e6, 3e3
    model = fm.Model(dim=2)
    n0, n1 = model.add_node([0.0, 0.0]), model.add_node([L, 0.0])
    bar = model.add_truss([[n0, n1]], EA=EA, name="bar")
    model.fix(n0)
    model.fix(n1, "uy")
    model.add_load(n1, "ux", P)
    model.add_sensor("element_output", bar, element=0, output="N", name="N_end")
    model.add_sensor("position", n1, name="end")
    model.add_sensor("velocity", n1, name="end_v")                   # dynamics only: not recorded here
    path = fm.load_control(model, 4)
    assert abs(path.sensor("N_end")[-1] - P) < 1e-9 * P
    assert np.allclose(path.sensor("N_end"), path.element("bar", "N")[:, 0], rtol=0, atol=0)
    assert abs(path.sensor("end")[-1, 0] - L * (1 + P / EA)) < 1e-12 * L
    with pytest.raises(fm.ModelError, match="'end_v'.*not recorded"):
        path.sensor("end_v")


def test_sensors_in_the_result_file_and_through_a_restart(tmp_path):
    model, _, _ = pendulum()
    asm = fm.Assembly(model)
    whole = fm.integrate(asm, dt=0.02, t_end=0.6)
    first = tmp_path / "run.h5"
    fm.integrate(asm, dt=0.02, t_end=0.3, save_to=first)
    assert fm.load_result(first).layout.sensors == model.sensors
    continued = fm.integrate(asm, dt=0.02, t_end=0.6, restart_from=first)
    reread = fm.load_result(first)
    for name in ("tip", "tip_a", "theta", "q_rate"):
        assert np.array_equal(continued.sensor(name), whole.sensor(name)), name
        assert np.array_equal(reread.sensor(name), whole.sensor(name)), name
    # a model whose sensors differ from the file's is not the file's model
    model.add_sensor("position", 0, name="centre")
    with pytest.raises(fm.ModelError, match="sensors"):
        fm.integrate(fm.Assembly(model), dt=0.02, t_end=0.8, restart_from=first)


def test_series_names_labels_and_plot_from_python_and_the_command_line(tmp_path):
    model, _, _ = pendulum()
    h = fm.integrate(model, dt=0.05, t_end=0.5, save_to=tmp_path / "run.h5")
    assert np.array_equal(h.series("tip[y]"), h.sensor("tip")[:, 1])
    assert np.array_equal(h.series("tip[1]"), h.series("tip[y]"))
    assert h.label("tip_a[x]") == "tip_a[x] (m/s^2)" and h.label("q") == "q (rad)"
    assert h.sensor_quantities("tip") == ["tip[x]", "tip[y]"]
    with pytest.raises(fm.ModelError, match="components x, y"):
        h.series("tip")
    with pytest.raises(fm.ModelError, match="no sensor named 'tap'"):
        h.sensor("tap")
    from flexmb.viz.plots import plot_history

    fig = plot_history(h, ["tip", "q"])
    assert [line.get_label() for ax in fig.axes for line in ax.get_lines()] == ["tip[x]", "tip[y]", "q"]
    out = tmp_path / "tip.png"
    done = subprocess.run([sys.executable, "-m", "flexmb.cli", "plot", str(tmp_path / "run.h5"), "tip", "q_rate",
                           "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 10_000
    info = subprocess.run([sys.executable, "-m", "flexmb.cli", "info", str(tmp_path / "run.h5")],
                          capture_output=True, text=True).stdout
    assert "sensor 'tip': position (m), components tip[x] tip[y]" in info


def test_bad_sensors_are_refused_with_the_item_named():
    model, rod, hinge = pendulum()
    truss_node = model.add_node([5.0, 0.0])
    other = model.add_node([6.0, 0.0])
    model.add_truss([[truss_node, other]], EA=1.0, name="link")
    cases = [
        (dict(quantity="speed", on=rod), "unknown quantity 'speed'"),
        (dict(quantity="cardan", on=rod), "'cardan' is for 3D models"),
        (dict(quantity="position", on=99), "node 99 does not exist"),
        (dict(quantity="position", on=rod, offset=[1.0]), r"offset must be 2 finite numbers"),
        (dict(quantity="position", on=rod, name="tip"), "already has a sensor named 'tip'"),
        (dict(quantity="position", on=rod, name="total"), "sensor name 'total'"),
        (dict(quantity="position", on=rod, name="a@b"), "sensor name 'a@b'"),
        (dict(quantity="angle", on=rod, offset=[0.0, 1.0]), r"offset=\[0.0, 1.0\] is not an option"),
        (dict(quantity="position", on=rod, output="N"), r"output='N' is not an option .*takes offset"),
        (dict(quantity="joint_rate", on="elbow"), "got 'elbow'; joints: 'hinge'"),
        (dict(quantity="element_output", on="link", element=3, output="N"), "element 3 of group 'link'"),
        (dict(quantity="element_output", on="link", element=0, output="M2"), "no element output 'M2'"),
    ]
    for kwargs, message in cases:
        with pytest.raises(fm.ModelError, match=message):
            model.add_sensor(**kwargs)
    welded = fm.Model(dim=2)
    fixed = welded.add_joint("fixed", None, welded.add_rigid_body([0.0, 0.0], 1.0, 1.0), name="weld")
    with pytest.raises(fm.ModelError, match="joint 'weld' is fixed"):
        welded.add_sensor("joint_coordinate", fixed)
    with pytest.raises(fm.ModelError, match="did you mean 'offset'"):
        model.add_sensor("position", rod, ofset=[0.0, 0.0])
    # what only the DOF map or the element outputs tell is refused at t0, before any step
    model.add_point_mass(truss_node, 1.0)
    model.add_point_mass(other, 1.0)
    model.add_sensor("element_output", "link", element=0, output="N", component=1, name="N1")
    with pytest.raises(fm.ModelError, match="sensor 'N1': element output 'N' has one value"):
        fm.integrate(model, dt=0.01, t_end=0.02)
    model.sensors.pop()
    model.add_sensor("position", truss_node, offset=[0.0, 0.5], name="beside")
    with pytest.raises(fm.ModelError, match="sensor 'beside'.*node 1, which has no rotation DOFs"):
        fm.integrate(model, dt=0.01, t_end=0.02)
