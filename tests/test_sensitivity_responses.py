"""Response functionals of a run (flexmb.sensitivity.responses): every derivative with respect to
the states against central differences of the response on fixed synthetic states (spins at 3D
rotations), the KS aggregate's bounds, and the peak's derivative."""
import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.sensitivity import responses as R
from flexmb.validation.slider_crank import first_maximum

N_STATES = 9


def _rod():
    """Planar cubic-mass rod (director stretch rates), pinned, with a point sensor at an offset."""
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 5), np.zeros(5)])
    m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e4, EI=20.0, rho_A=3.0, rho_I=0.01, mass="cubic", name="rod",
                 second_order=True)
    m.fix(n[0], ["ux", "uy"])
    m.add_point_mass(n[-1], 0.5)
    m.add_sensor("position", n[-1], offset=[0.1, 0.05], name="tip")
    m.add_sensor("velocity", n[-1], offset=[0.1, 0.05], name="tip_rate")
    return fm.Assembly(m)


def _frame3d():
    """A Beam3D cantilever with a 3D rigid body on its end (spatial rotations, rotary inertia)."""
    m = fm.Model(dim=3)
    n = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 3), np.zeros(3), np.zeros(3)])
    m.add_beam3d(np.c_[n[:-1], n[1:]], EA=1e3, GJ=5.0, EI_y=8.0, EI_z=9.0, rho_A=2.0, rho_I=[0.01, 0.005, 0.005],
                 name="b3")
    box = m.add_rigid_body([1.2, 0.0, 0.0], 3.0, [[0.1, 0.01, 0.0], [0.01, 0.2, 0.0], [0.0, 0.0, 0.25]], name="box")
    m.add_joint("fixed", n[-1], box, at=[1.0, 0.0, 0.0])
    m.fix(n[0], "all")
    m.add_sensor("position", box, offset=[0.2, -0.1, 0.3], name="corner")
    m.add_sensor("velocity", box, offset=[0.2, -0.1, 0.3], name="corner_rate")
    return fm.Assembly(m), box


def _trajectory(asm, seed, n_constraints=3):
    """Synthetic states: random displacements (rotations below 0.6 rad), velocities, stretch rates
    and multipliers at increasing, unequal times."""
    rng = np.random.default_rng(seed)
    n = asm.n_dof
    t = np.cumsum(np.r_[0.0, 0.01 * (1.0 + rng.random(N_STATES - 1))])
    stretch = None
    if asm.director_dofs.size:
        stretch = np.zeros((N_STATES, n))
        stretch[:, asm.director_dofs] = rng.standard_normal((N_STATES, asm.director_dofs.size))
    return R.Trajectory(t, 0.2 * rng.standard_normal((N_STATES, n)), rng.standard_normal((N_STATES, n)), asm,
                        stretch, rng.standard_normal((N_STATES, n_constraints)))


def _perturbed(traj, name, direction, h):
    """The trajectory moved by h * direction in one field; at 3D rotations u moves by spins."""
    out = R.Trajectory(traj.t, traj.u.copy(), traj.v.copy(), traj.asm,
                       None if traj.stretch is None else traj.stretch.copy(),
                       None if traj.multipliers is None else traj.multipliers.copy())
    if name == "u":
        out.u = np.array([traj.asm.update(u, h * d) for u, d in zip(traj.u, direction)])
    else:
        setattr(out, name, getattr(traj, name) + h * direction)
    return out


def _check_directional(response, traj, h=1e-6, seed=0, tol=1e-7):
    """dF along random directions of each field: the gradient against central differences."""
    rng = np.random.default_rng(seed)
    value = response(traj)
    n_states = traj.n_states
    for name in R.FIELDS:
        data = getattr(traj, name)
        if data is None:
            continue
        direction = rng.standard_normal(data.shape)
        exact = float(np.sum(value.gradient.dense(name, n_states, data.shape[1]) * direction))
        fd = (response(_perturbed(traj, name, direction, h)).value
              - response(_perturbed(traj, name, direction, -h)).value) / (2.0 * h)
        scale = max(abs(fd), abs(value.value), 1e-300)
        assert abs(exact - fd) <= tol * scale, \
            f"d/d{name}: {exact:.12g} against central difference {fd:.12g} (off by {abs(exact - fd) / scale:.2g} rel.)"
    return value


def _signals_2d(asm):
    n_last = asm.model.n_nodes - 1
    return {"dof": R.dof(asm, 2, "uy"), "dof rate": R.dof(asm, 2, "rz", rate=True),
            "sensor position": R.sensor(asm, "tip", 1), "sensor velocity": R.sensor(asm, "tip_rate", 0),
            "chord deflection": R.chord_deflection(asm, 0, 2, n_last, scale=1.0),
            "kinetic energy": R.kinetic_energy(asm), "strain energy": R.strain_energy(asm),
            "multiplier": R.multiplier(1), "squared": R.squared(R.point(asm, 3, 0, offset=[0.0, 0.2]), 2.0)}


def _signals_3d(asm, box):
    return {"corner": R.sensor(asm, "corner", 2), "corner_rate": R.sensor(asm, "corner_rate", 1),
            "beam node": R.point(asm, 1, 1, offset=[0.0, 0.1, 0.1]),
            "kinetic energy": R.kinetic_energy(asm), "strain energy": R.strain_energy(asm),
            "spin rate": R.dof(asm, box.node, "ry", rate=True)}


@pytest.mark.parametrize("label", ["dof", "dof rate", "sensor position", "sensor velocity", "chord deflection",
                                   "kinetic energy", "strain energy", "multiplier", "squared"])
def test_planar_signal_derivatives(label):
    asm = _rod()
    traj = _trajectory(asm, 1)
    signal = _signals_2d(asm)[label]
    _check_directional(lambda tr: R.integral(signal, tr), traj)
    _check_directional(lambda tr: R.at(signal, tr, step=4), traj, seed=1)


@pytest.mark.parametrize("label", ["corner", "corner_rate", "beam node", "kinetic energy", "strain energy",
                                   "spin rate"])
def test_spatial_signal_derivatives_in_spins(label):
    asm, box = _frame3d()
    traj = _trajectory(asm, 2)
    signal = _signals_3d(asm, box)[label]
    _check_directional(lambda tr: R.integral(signal, tr), traj)


def test_signal_values_are_the_recorded_ones():
    """The signals' values are those the model's own sensors, energies and chord deflection give."""
    asm = _rod()
    traj = _trajectory(asm, 3)
    tip = R.sensor(asm, "tip", 1).evaluate(traj, np.arange(N_STATES))[0]
    R_th = traj.u[:, asm.dofs.index(4, "rz")]
    expected = (asm.model.coordinates[4, 1] + traj.u[:, asm.dofs.index(4, "uy")]
                + np.sin(R_th) * 0.1 + np.cos(R_th) * 0.05)
    np.testing.assert_allclose(tip, expected, rtol=1e-14, atol=1e-15)
    kinetic = R.kinetic_energy(asm).evaluate(traj, np.arange(N_STATES))[0]
    np.testing.assert_allclose(kinetic, [asm.kinetic_energy(v, u, s) for u, v, s in zip(traj.u, traj.v, traj.stretch)],
                               rtol=1e-14)
    from flexmb.validation.slider_crank import midspan_deflection

    positions = asm.model.coordinates[None] + traj.u[:, asm.dofs.translations()]
    deflection = R.chord_deflection(asm, 0, 2, 4, scale=0.37).evaluate(traj, np.arange(N_STATES))[0]
    np.testing.assert_allclose(deflection, midspan_deflection(positions) * (1.0 / 0.37) *
                               __import__("flexmb.validation.slider_crank", fromlist=["ROD"]).ROD, rtol=1e-12)


def _peaked(asm, seed=4):
    """A trajectory whose node-2 uy rises to a clear peak and falls (the first peak after a rise)."""
    traj = _trajectory(asm, seed)
    t = np.linspace(0.0, 1.0, 41)
    rng = np.random.default_rng(seed)
    u = 0.05 * rng.standard_normal((t.size, asm.n_dof))
    u[:, asm.dofs.index(2, "uy")] = np.sin(2.0 * np.pi * 1.3 * t) * np.exp(-t) + 0.3 * np.sin(2.0 * np.pi * 3.1 * t)
    v = rng.standard_normal((t.size, asm.n_dof))
    stretch = np.zeros_like(u)
    stretch[:, asm.director_dofs] = rng.standard_normal((t.size, asm.director_dofs.size))
    return R.Trajectory(t, u, v, asm, stretch, None), traj


def test_functional_derivatives():
    asm = _rod()
    traj, _ = _peaked(asm)
    y = R.dof(asm, 2, "uy")
    tip = R.sensor(asm, "tip", 1)
    for name, response in {
            "at t between steps": lambda tr: R.at(tip, tr, t=0.3333),
            "final": lambda tr: R.final(R.kinetic_energy(asm), tr),
            "integral in a window": lambda tr: R.integral(tip, tr, window=(0.1, 0.6)),
            "ks_max": lambda tr: R.ks_max(y, tr, rho=30.0),
            "ks_max of the minimum": lambda tr: R.ks_max(R.scaled(tip, -1.0), tr, rho=50.0, window=(0.0, 0.5)),
            "maximum": lambda tr: R.maximum(y, tr),
            "first peak": lambda tr: R.first_peak(y, tr, window=0.5)}.items():
        try:
            _check_directional(response, traj, h=1e-7)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None


def test_integral_is_the_trapezoidal_rule():
    asm = _rod()
    traj, _ = _peaked(asm)
    i = asm.dofs.index(2, "uy")
    value = R.integral(R.dof(asm, 2, "uy"), traj).value
    assert value == pytest.approx(np.trapezoid(traj.u[:, i], traj.t), rel=1e-13)
    interpolated = R.at(R.dof(asm, 2, "uy"), traj, t=0.3333).value
    assert interpolated == pytest.approx(np.interp(0.3333, traj.t, traj.u[:, i]), rel=1e-13)


def test_ks_bounds():
    """max <= KS <= max + ln(n)/rho for every rho; the weights sum to 1 and KS tends to the max."""
    asm = _rod()
    traj, _ = _peaked(asm)
    y = R.dof(asm, 2, "uy")
    top = traj.u[:, asm.dofs.index(2, "uy")].max()
    previous = np.inf
    for rho in (1.0, 10.0, 100.0, 1e4, 1e7):
        ks = R.ks_max(y, traj, rho=rho)
        assert top <= ks.value <= top + np.log(traj.n_states) / rho * (1.0 + 1e-12), f"rho {rho}: KS {ks.value}"
        assert ks.info["maximum"] == top and ks.info["upper_bound"] == pytest.approx(top + np.log(traj.n_states) / rho)
        assert ks.value <= previous
        previous = ks.value
        weights = ks.gradient.dense("u", traj.n_states, asm.n_dof)[:, asm.dofs.index(2, "uy")]
        assert weights.sum() == pytest.approx(1.0, rel=1e-12)
    assert previous - top <= 1e-6 * abs(top)


def test_peak_derivatives():
    """The plain maximum's derivative is the peak sample's (with its margin); the first peak is the
    validation's parabola vertex, and its three weights sum to 1 (a uniform shift moves it by as much)."""
    asm = _rod()
    traj, _ = _peaked(asm)
    i = asm.dofs.index(2, "uy")
    series = traj.u[:, i]
    top = R.maximum(R.dof(asm, 2, "uy"), traj)
    k = int(np.argmax(series))
    assert top.value == series[k] and top.info["step"] == k
    assert top.info["margin"] == pytest.approx(series[k] - np.sort(series)[-2], rel=1e-14)
    np.testing.assert_array_equal(top.gradient.dense("u", traj.n_states, asm.n_dof)[:, i], np.eye(traj.n_states)[k])
    peak = R.first_peak(R.dof(asm, 2, "uy"), traj, window=0.5)
    t_ref, y_ref = first_maximum(traj.t, series, window=0.5, fraction=0.5)
    assert peak.value == pytest.approx(y_ref, rel=1e-14)
    assert peak.info["t"] == pytest.approx(t_ref, rel=1e-12)
    weights = peak.gradient.dense("u", traj.n_states, asm.n_dof)[:, i]
    assert np.count_nonzero(weights) == 3 and weights.sum() == pytest.approx(1.0, rel=1e-13)
    assert min(peak.info["margins"]) > 0.0


def test_from_history_and_refusals():
    asm = _rod()
    history = fm.integrate(asm, dt=1e-3, t_end=5e-3)
    traj = R.Trajectory.from_history(history, asm)
    assert traj.n_states == 6 and traj.stretch is not None and traj.multipliers is None
    np.testing.assert_array_equal(traj.u, history.u)
    sparse = fm.integrate(asm, dt=1e-3, t_end=4e-3, output_every=2)
    with pytest.raises(ModelError, match="output_every=1"):
        R.Trajectory.from_history(sparse, asm)
    flat = R.Trajectory(np.arange(3.0), np.zeros((3, asm.n_dof)), np.zeros((3, asm.n_dof)), asm)
    with pytest.raises(ModelError, match="two steps"):
        R.maximum(R.dof(asm, 2, "uy"), flat)
    with pytest.raises(ModelError, match="rho"):
        R.ks_max(R.dof(asm, 2, "uy"), flat, rho=0.0)
    with pytest.raises(ModelError, match="outside the run"):
        R.at(R.dof(asm, 2, "uy"), flat, t=5.0)
    spatial, _ = _frame3d()
    with pytest.raises(ModelError, match="spatial rotation"):
        R.dof(spatial, 1, "rx")
    with pytest.raises(ModelError, match="sensor 'nope'"):
        R.sensor(asm, "nope")


def _jointed(dim):
    """A pendulum body on a revolute joint and a slider on a prismatic joint (2D), or a body
    hanging on a revolute joint about a tilted axis (3D), under gravity."""
    m = fm.Model(dim=dim)
    if dim == 2:
        m.set_gravity([0.0, -9.81])
        bob = m.add_rigid_body([0.3, -0.4], 1.5, 0.05, name="bob")
        m.add_joint("revolute", None, bob, at=[0.0, 0.0], name="hinge")
        slider = m.add_rigid_body([1.0, 0.0], 2.0, 0.1, name="slider")
        m.add_joint("prismatic", None, slider, x_axis=[1.0, 0.0], name="slide")
        m.add_spring_damper(None, slider, k=50.0, c=0.7, at_a=[0.0, 0.0])
    else:
        m.set_gravity([0.0, 0.0, -9.81])
        bob = m.add_rigid_body([0.3, 0.1, -0.4], 1.5, np.diag([0.05, 0.06, 0.04]), name="bob")
        m.add_joint("revolute", None, bob, at=[0.0, 0.0, 0.0], axis=[0.2, 1.0, 0.1], name="hinge")
    asm = fm.Assembly(m)
    history = fm.integrate(asm, dt=2e-3, t_end=1e-2)
    return asm, R.Trajectory.from_history(history, asm), history


@pytest.mark.parametrize("dim", [2, 3])
def test_joint_reaction(dim):
    """The joint-frame reaction is the history's, exact in the multipliers, and its derivative in u
    (a central difference, flagged approximate) agrees with central differences of the response."""
    asm, traj, history = _jointed(dim)
    force = R.joint_reaction(asm, "hinge", component=1)
    recorded = history.joint_reaction("hinge")[0][:, 1]
    np.testing.assert_allclose(force.evaluate(traj, np.arange(traj.n_states))[0], recorded, rtol=1e-13,
                               atol=1e-13 * np.abs(recorded).max())
    value = _check_directional(lambda tr: R.integral(force, tr), traj, h=1e-6, tol=1e-6)
    assert value.info["approximate"] is True
    moment = R.joint_reaction(asm, "hinge", component=0, moment=True)
    _check_directional(lambda tr: R.final(moment, tr), traj, h=1e-6, tol=1e-6)
    assert not R.final(R.multiplier(0), traj).info["approximate"]
    with pytest.raises(ModelError, match="not a joint"):
        R.joint_reaction(asm, "nope")


def _parameters(label):
    """A model, its assembly and parameters that energies depend on explicitly."""
    from flexmb.cms import design
    from flexmb.sensitivity import parameters as P

    if label == "rod":
        asm = _rod()
        params = [P.parameter(design.section_property("rod", prop)) for prop in ("EA", "EI", "rho_A", "rho_I")]
        return asm, params + [P.parameter(design.point_mass(4, 0.5))]
    if label == "shell":
        from flexmb.io.shell_mesh import rectangle

        xyz, tri = rectangle(1.0, 0.6, 3, 2)
        m = fm.Model(dim=3)
        nodes = m.add_nodes(xyz)
        m.add_shell(nodes[tri], E=2e9, nu=0.3, thickness=0.01, rho=1000.0, name="plate")
        return fm.Assembly(m), [P.parameter(design.section_property("plate", "E")),
                                P.element_property("plate", "E", [0, 5]), P.element_property("plate", "rho", [2])]
    if label == "frame3d":
        asm, box = _frame3d()
        return asm, [P.parameter(design.section_property("b3", "EI_y")), P.parameter(design.density_scale("b3")),
                     P.body_mass(box), P.body_inertia(box, "xy")]
    m = fm.Model(dim=2)
    slider = m.add_rigid_body([1.0, 0.0], 2.0, 0.1, name="slider")
    spring = m.add_spring_damper(None, slider, k=50.0, c=0.7, at_a=[0.0, 0.0])
    return fm.Assembly(m), [P.spring_rate(spring), P.damper_rate(spring), P.body_mass(slider), P.body_inertia(slider)]


@pytest.mark.parametrize("label", ["rod", "shell", "frame3d", "mechanism"])
def test_energy_parameter_partials(label):
    """An energy response's explicit dF/dp at fixed states against central differences of the
    response evaluated on models changed with ``apply`` (linear in p: no truncation error); a
    kinematic signal has none."""
    asm, params = _parameters(label)
    model = asm.model
    traj = _trajectory(asm, 6)
    if label == "shell":                                      # rotations well below a half turn
        traj.u *= 0.2
    for make in (R.kinetic_energy, R.strain_energy, lambda a: R.squared(R.kinetic_energy(a), 0.5)):
        value = R.integral(make(asm), traj, parameters=params)
        assert value.parameter_gradient.shape == (len(params),)
        for j, p in enumerate(params):
            p0 = p.value(model)
            h = 1e-2 * max(abs(p0), 1.0)
            plus, minus = (R.integral(make(fm.Assembly(p.apply(model, p0 + k * h))), traj).value for k in (1, -1))
            fd = (plus - minus) / (2.0 * h)
            err = abs(value.parameter_gradient[j] - fd)
            assert err <= 1e-9 * max(abs(fd), abs(value.value) / max(abs(p0), 1.0)), \
                f"{label}, {p.name}: dF/dp {value.parameter_gradient[j]:.12g} against {fd:.12g}"
    moving = R.final(R.point(asm, model.n_nodes - 1, 0), traj, parameters=params)
    np.testing.assert_array_equal(moving.parameter_gradient, np.zeros(len(params)))
