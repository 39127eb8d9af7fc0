"""The public API of transient sensitivities (issue 33, piece P18): flexmb.sensitivity.transient_sensitivity
gives the pieces' gradients bit for bit (record -> responses -> adjoint_gradient, or direct_sensitivities),
the adjoint and the direct method agree through it, the homogeneity of a linear oscillator's discrete map
holds for its gradient, finite_difference meets it, every unsupported combination is refused naming the
item, and the package's names are lazy exports with the keyword check."""
from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from flexmb import sensitivity as fs
from flexmb.checks import KeywordError, ModelError
from flexmb.cms import design
from flexmb.sensitivity import parameters as P
from flexmb.sensitivity import responses as R
from flexmb.sensitivity.adjoint import adjoint_gradient, trajectory
from flexmb.sensitivity.alpha import direct_sensitivities as alpha_direct
from flexmb.sensitivity.midpoint import direct_sensitivities
from flexmb.sensitivity.transient import record
from models import damped_truss
from test_sensitivity_midpoint import JOINT_DT, _jointed_mechanism

REPO = Path(__file__).resolve().parents[1]
#: direct and adjoint agree through the driver (relative to each response's largest entry)
TOL = 1e-10
STEPS = 12


def _jointed_responses(asm: fm.Assembly) -> dict:
    """The double pendulum's responses as functions of the trajectory: the lower link's vertical
    displacement at the end, the pivot's vertical reaction at a third of the run, the time integral
    of the upper link's tip rotation and of the kinetic energy (explicit partials in the masses)."""
    tip = int(asm.model.bodies[0].node)
    return {"uy(T)": partial(R.final, R.dof(asm, tip, "uy")),
            "pivot y": partial(R.at, R.joint_reaction(asm, "pivot", 1), step=STEPS // 3),
            "int rz": partial(R.integral, R.dof(asm, 2, "rz")),
            "int T": partial(R.integral, R.kinetic_energy(asm))}


@pytest.mark.parametrize("keep_every", [1, 5])
def test_driver_gives_the_pieces_gradients_bit_for_bit(keep_every):
    """Adjoint and direct method on the jointed double pendulum (a drive amplitude among the
    parameters): the driver's values and gradients equal record -> trajectory -> responses ->
    adjoint_gradient and record -> direct_sensitivities -> gradient, to the bit; with every 5th state
    kept the states between are replayed as the pieces replay them."""
    model, params = _jointed_mechanism()
    plist = list(params.values())
    asm = fm.Assembly(model)
    funcs = _jointed_responses(asm)
    run = record(fm.Assembly(model), JOINT_DT, STEPS * JOINT_DT, keep_every=keep_every)
    traj = trajectory(run)
    values = [f(traj, parameters=plist) for f in funcs.values()]
    pieces = adjoint_gradient(run, plist, values)
    sens = fs.transient_sensitivity(model, plist, funcs, dt=JOINT_DT, t_end=STEPS * JOINT_DT, keep_every=keep_every)
    assert np.array_equal(sens.gradient, pieces.gradient)
    assert np.array_equal(sens.values, pieces.values)
    assert np.array_equal(sens.trajectory.u, traj.u) and np.array_equal(sens.trajectory.multipliers, traj.multipliers)
    assert sens.memory_bytes == pieces.memory_bytes > 0
    assert sens.details.recomputed == pieces.recomputed == (0 if keep_every == 1 else STEPS + 1 - len(run.states))

    ddm = direct_sensitivities(record(fm.Assembly(model), JOINT_DT, STEPS * JOINT_DT, keep_every=keep_every), plist)
    on_ddm = [f(ddm.trajectory(), parameters=plist) for f in funcs.values()]
    direct = fs.transient_sensitivity(model, plist, funcs, dt=JOINT_DT, t_end=STEPS * JOINT_DT, method="direct",
                                      keep_every=keep_every)
    assert np.array_equal(direct.gradient, np.array([ddm.gradient(v) for v in on_ddm]))
    assert direct.memory_bytes == ddm.du.nbytes + ddm.dv.nbytes + ddm.dmultipliers.nbytes
    # and the two methods agree to round-off
    scale = np.abs(direct.gradient).max(axis=1, keepdims=True)
    err = np.abs(sens.gradient - direct.gradient) / scale
    assert err.max() < TOL, f"adjoint against direct through the driver: {err.max():.2e}"


def test_generalized_alpha_direct_through_the_driver_and_its_adjoint_refused():
    """The damped truss on generalized-alpha: the driver's direct gradient is alpha.direct_sensitivities'
    bit for bit and meets central differences of re-runs (their start accelerations the changed models'
    own) to 1e-6 at the study's most stable step; the adjoint is refused naming the scheme, before any
    run."""
    model = damped_truss()
    params = [P.parameter(design.stiffness_scale("truss")), P.parameter(design.density_scale("truss")),
              P.rayleigh("truss", "beta")]
    signal = R.dof(model, 7, "uy")
    funcs = [partial(R.final, signal), partial(R.integral, R.squared(signal))]
    sens = fs.transient_sensitivity(model, params, funcs, dt=2e-3, t_end=0.04, scheme="generalized-alpha",
                                    rho_inf=0.8, method="direct")
    run = record(fm.Assembly(model), 2e-3, 0.04, scheme="generalized-alpha", rho_inf=0.8)
    ddm = alpha_direct(run, params)
    expected = [ddm.gradient(f(ddm.trajectory(), parameters=params)) for f in funcs]
    assert np.array_equal(sens.gradient, np.array(expected))
    assert sens.names == ["final of Dof", "integral of Scaled"]
    assert sens.scheme == "generalized-alpha" and sens.history.meta["rho_inf"] == 0.8
    fd = fs.finite_difference(model, params, funcs, dt=2e-3, t_end=0.04, scheme="generalized-alpha", rho_inf=0.8,
                              steps=10.0 ** -np.arange(3.0, 7.0))
    best = fd.errors(sens.gradient)[fd.best, np.arange(2)[:, None], np.arange(3)]
    assert best.max() < 1e-6, f"central differences against the direct gradient: {best}"
    with pytest.raises(ModelError, match="scheme 'generalized-alpha' has no adjoint yet; use method='direct'"):
        fs.transient_sensitivity(model, params, funcs, dt=2e-3, t_end=0.04, scheme="generalized-alpha")
    with pytest.raises(ModelError, match="scheme 'newmark' has no adjoint"):
        fs.transient_sensitivity(model, params, funcs, dt=2e-3, t_end=0.04, scheme="newmark")


# ------------------------------------------------------------------ a linear oscillator
MASS, INERTIA, SPRING, DAMPER, X0, DT, N = 2.0, 0.02, 800.0, 4.0, 0.02, 0.005, 60


def _slider() -> tuple[fm.Model, np.ndarray, list, int]:
    """A rigid slider on a prismatic joint held by a spring-damper, started at x0: its model, u0,
    parameters (spring and damper rate, body mass and inertia) and node."""
    m = fm.Model(dim=2)
    body = m.add_rigid_body([1.0, 0.0], MASS, INERTIA, name="slider")
    m.add_joint("prismatic", None, body, x_axis=[1.0, 0.0], name="slide")
    spring = m.add_spring_damper(None, body.node, k=SPRING, c=DAMPER, at_a=[0.0, 0.0], name="slide spring")
    asm = fm.Assembly(m)
    u0 = np.zeros(asm.n_dof)
    u0[asm.dofs.index(body.node, "ux")] = X0
    return m, u0, [P.spring_rate(spring), P.damper_rate(spring), P.body_mass(body), P.body_inertia(body)], body.node


def test_homogeneity_of_the_oscillator_and_units_shapes_and_summary():
    """m x'' + c x' + k x = 0 (and the body's J) scaled by one factor keeps every step of the trapezoidal
    map: sum_j p_j dF/dp_j = 0 for x(T) and its time integral, and = F for the kinetic energy's integral,
    of degree 1 in the factor (its explicit partial in m, which the driver passes on, makes it so). The
    result's shapes, units, normalised gradient, history and the printed table (numbers parsed) follow."""
    model, u0, params, node = _slider()
    funcs = {"x(T)": partial(R.final, R.dof(model, node, "ux")), "int x": partial(R.integral, R.dof(model, node, "ux")),
             "int T": partial(R.integral, R.kinetic_energy(model))}
    sens = fs.transient_sensitivity(model, params, funcs, dt=DT, t_end=N * DT, u0=u0)
    assert sens.values.shape == (3,) and sens.gradient.shape == (3, 4)
    np.testing.assert_array_equal(sens.baseline, [SPRING, DAMPER, MASS, INERTIA])
    weighted = sens.gradient * sens.baseline
    for r, (name, degree) in enumerate(zip(sens.names, (0, 0, 1))):
        miss = abs(weighted[r].sum() - degree * sens.values[r]) / np.abs(weighted[r]).max()
        assert miss < 1e-10, f"{name}: sum p dF/dp misses zero by {miss:.1e} of its largest term"
    assert np.abs(weighted[:, 3]).max() < 1e-12 * np.abs(weighted).max()     # the prismatic joint holds J still
    np.testing.assert_allclose(sens.normalised, weighted / sens.values[:, None], rtol=1e-15)
    assert sens.units == ["m", "m s", "J s"]
    assert [sens.gradient_unit(0, j) for j in range(4)] == ["m per N/m", "m per N s/m", "m/kg", "m per kg m^2"]
    # the history holds every state of the run
    assert sens.history.n_steps == N + 1 and np.array_equal(sens.history.u, sens.trajectory.u)
    np.testing.assert_allclose(sens.history.step_sizes, DT, rtol=1e-9)
    assert set(sens.timings) == {"forward", "responses", "sweep", "history"}
    # the table: each parameter row gives p and dF/dp (8 digits) and (p/F) dF/dp (6 digits)
    text = str(sens)
    assert text == sens.summary()
    for r, name in enumerate(sens.names):
        block = text.split(f"\n{name} = ")[1].split("\n\n")[0].splitlines()
        assert float(block[0].split()[0]) == pytest.approx(sens.values[r], rel=1e-7)
        for j, p in enumerate(params):
            row = block[2 + j]
            assert row.strip().startswith(p.name)
            columns = re.split(r"\s{2,}", row.strip())     # name, p, unit, dF/dp, its unit, (p/F) dF/dp
            assert columns[0] == p.name and columns[2] == p.unit and columns[4] == sens.gradient_unit(r, j)
            p_value, gradient, normalised = float(columns[1]), float(columns[3]), float(columns[5])
            assert p_value == pytest.approx(sens.baseline[j], rel=1e-5)
            assert gradient == pytest.approx(sens.gradient[r, j], rel=1e-8)
            assert normalised == pytest.approx(sens.normalised[r, j], rel=1e-5, abs=1e-12)


def test_finite_difference_step_study_meets_the_adjoint():
    """Central differences of re-runs on the frozen step list: at the most stable step they meet the
    adjoint to 1e-6, and the study shows the truncation branch (h = 1e-2 misses by more)."""
    model, u0, params, node = _slider()
    funcs = {"x(T)": partial(R.final, R.dof(model, node, "ux"))}
    sens = fs.transient_sensitivity(model, params[:3], funcs, dt=DT, t_end=N * DT / 2, u0=u0)
    fd = fs.finite_difference(model, params[:3], funcs, dt=DT, t_end=N * DT / 2, u0=u0,
                              steps=10.0 ** -np.arange(2.0, 6.0))
    errors = fd.errors(sens.gradient)
    assert errors.shape == (4, 1, 3) and fd.re_runs == 24
    best = errors[fd.best[0], 0, np.arange(3)]
    assert best.max() < 1e-6, f"FD at the most stable step against the adjoint: {best}"
    assert np.all(errors[0, 0] > 10.0 * best), "the largest step should show its truncation error"
    np.testing.assert_array_equal(fd.values, sens.values)


def test_finite_difference_refuses_an_energy_bound_to_the_baseline_model():
    """The kinetic energy built on the baseline model reads its mass in the re-runs too: refused, naming
    the response and the parameter; built on the trajectory's assembly it is right."""
    model, u0, params, node = _slider()
    bound = {"int T": partial(R.integral, R.kinetic_energy(model))}
    with pytest.raises(ModelError, match="response 'int T' depends on parameter 'mass of slider'"):
        fs.finite_difference(model, params[2:3], bound, dt=DT, t_end=10 * DT, u0=u0, steps=[1e-5])
    rebuilt = {"int T": lambda traj, parameters: R.integral(R.kinetic_energy(traj.asm), traj, parameters=parameters)}
    sens = fs.transient_sensitivity(model, params[2:3], rebuilt, dt=DT, t_end=10 * DT, u0=u0)
    fd = fs.finite_difference(model, params[2:3], rebuilt, dt=DT, t_end=10 * DT, u0=u0, steps=[1e-5])
    assert fd.gradient[0, 0] == pytest.approx(sens.gradient[0, 0], rel=1e-6)


# ------------------------------------------------------------------ beyond the case
def _arm(offset=(0.0, 0.0), angle: float = 0.0) -> fs.TransientSensitivity:
    """The README's falling arm (two Beam2D elements pinned at one end, a tip mass, gravity), moved by
    ``offset`` (m) and turned by ``angle`` (rad) with its gravity: the first peak of its sag and the
    time integral of its strain energy w.r.t. EI, the tip mass and the arm's density."""
    c, s = np.cos(angle), np.sin(angle)
    turn = np.array([[c, -s], [s, c]])
    model = fm.Model(dim=2)
    pin, mid, tip = model.add_nodes(np.array([[0.0, 0.0], [0.5, 0.0], [1.0, 0.0]]) @ turn.T + offset)
    model.add_beam2d([[pin, mid], [mid, tip]], EA=1e7, EI=50.0, rho_A=2.0, name="arm")
    model.add_point_mass(tip, 0.5)
    model.fix(pin, ["ux", "uy"])
    model.set_gravity(turn @ [0.0, -9.81])
    params = [fs.parameter(design.section_property("arm", "EI")), fs.parameter(design.point_mass(tip, 0.5)),
              fs.parameter(design.density_scale("arm"))]
    sag = fs.scaled(fs.chord_deflection(model, pin, mid, tip), -1.0)
    funcs = [partial(fs.first_peak, sag), partial(fs.integral, fs.strain_energy(model))]
    return fs.transient_sensitivity(model, params, funcs, dt=2e-3, t_end=0.1)


def test_gradients_do_not_depend_on_where_the_model_stands():
    """Moved by 1e4 m or turned (with its gravity), the arm's responses and gradients stay (measured:
    1e-9 of each response's largest entry moved by 1e4 m, 5e-14 turned)."""
    base = _arm()
    assert 0.5 < -base.normalised[0, 0] < 1.5          # the peak sag goes about as 1 / EI
    for offset, angle in [((1e4, -1e4), 0.0), ((0.0, 0.0), 2.0), ((3e3, 5e3), -0.7)]:
        other = _arm(offset, angle)
        np.testing.assert_allclose(other.values, base.values, rtol=1e-8)
        miss = np.abs(other.gradient - base.gradient) / np.abs(base.gradient).max(axis=1, keepdims=True)
        assert miss.max() < 1e-7, f"moved by {offset} m, turned by {angle} rad: gradients miss by {miss.max():.1e}"


# ------------------------------------------------------------------ refusals
def _rigid_3d() -> tuple[fm.Model, list]:
    m = fm.Model(dim=3)
    body = m.add_rigid_body([0.0, 0.0, 0.0], 1.0, np.diag([1.0, 2.0, 3.0]), name="top")
    return m, [P.body_mass(body)]


def test_refusals_name_the_item():
    model, u0, params, node = _slider()
    x = {"x": partial(R.final, R.dof(model, node, "ux"))}
    run = dict(dt=DT, t_end=4 * DT, u0=u0)
    cases = [
        (dict(method="reverse"), "method must be one of 'adjoint', 'direct', got 'reverse'"),
        (dict(scheme="energy-decaying"), "scheme 'energy-decaying' is not differentiated yet"),
        (dict(scheme="leapfrog"), "unknown scheme 'leapfrog'"),
        (dict(scheme="mid-point", rho_inf=0.5), "rho_inf = 0.5 is a parameter of"),
    ]
    for options, message in cases:
        with pytest.raises(ModelError, match=re.escape(message)):
            fs.transient_sensitivity(model, params, x, **{**run, **options})
    with pytest.raises(ModelError, match="error-controlled steps"):
        fs.transient_sensitivity(model, params, x, dt=None, t_end=4 * DT)
    with pytest.raises(ModelError, match=r"response 'signal' is a _Dof, not a function of the run's trajectory"):
        fs.transient_sensitivity(model, params, {"signal": R.dof(model, node, "ux")}, **run)
    with pytest.raises(ModelError, match="response 'plain' does not take the keyword 'parameters'"):
        fs.transient_sensitivity(model, params, {"plain": lambda traj: None}, **run)
    with pytest.raises(ModelError, match="response 'wrong' returned a float, not a ResponseValue"):
        fs.transient_sensitivity(model, params, {"wrong": lambda traj, parameters: 1.0}, **run)
    with pytest.raises(ModelError, match="give at least one response"):
        fs.transient_sensitivity(model, params, {}, **run)
    with pytest.raises(ModelError, match="transient_sensitivity: give at least one parameter"):
        fs.transient_sensitivity(model, [], x, **run)
    with pytest.raises(ModelError, match="expected flexmb.sensitivity.parameters parameters or drive amplitudes"):
        fs.transient_sensitivity(model, [fs.load_scale()], x, **run)
    with pytest.raises(ModelError, match="group 'rod' is not in this model"):
        fs.transient_sensitivity(model, [P.parameter(design.section_property("rod", "EI"))], x, **run)
    # the model: spatial rotations on Newmark (the module's own message, before the run)
    model3, params3 = _rigid_3d()
    with pytest.raises(ModelError, match="node 0 has spatial \\(3D\\) rotations"):
        fs.transient_sensitivity(model3, params3, {"x": partial(R.final, R.point(model3, 0, 0))}, dt=DT, t_end=DT,
                                 scheme="newmark", method="direct")
    # a drive amplitude with generalized-alpha; joints with generalized-alpha (the module's message)
    truss = damped_truss()
    with pytest.raises(ModelError, match="parameter 'amplitude of node 0 ux': drive amplitudes are differentiated "
                                         "on mid-point runs only"):
        fs.transient_sensitivity(truss, [fs.drive_amplitude(node=0, dof="ux")], {"y": partial(R.final, R.dof(
            truss, 7, "uy"))}, dt=DT, t_end=DT, scheme="newmark", method="direct")
    with pytest.raises(ModelError, match="joint 'slide': models with joints or ties are not covered yet"):
        fs.transient_sensitivity(model, params, x, **run, scheme="newmark", method="direct")
    # a prescribed motion's amplitude on the mid-point scheme (midpoint.check_parameters' message)
    with pytest.raises(ModelError, match="the amplitude of a prescribed motion is not covered yet"):
        fs.transient_sensitivity(model, [fs.drive_amplitude(node=node, dof="ux")], x, **run)
    with pytest.raises(KeywordError, match="did you mean 't_end'"):
        fs.transient_sensitivity(model, params, x, dt=DT, tend=1.0)


# ------------------------------------------------------------------ exports
def test_every_exported_name_resolves_and_public_functions_check_their_keywords():
    assert fm.sensitivity is fs and "sensitivity" in dir(fm)
    assert fs.__all__ == sorted(set(fs.__all__))
    unchecked = []
    for name in fs.__all__:
        value = getattr(fs, name)
        assert getattr(sys.modules[value.__module__], name) is value, name
        if inspect.isfunction(value):
            if not hasattr(value, "renamed_keywords"):
                unchecked.append(name)
                continue
            first = next(iter(inspect.signature(value).parameters))
            with pytest.raises(KeywordError, match=f"did you mean {first!r}" if len(first) > 1 else "unexpected"):
                value(**{first + first[-1]: 1.0})
    assert not unchecked, f"public functions of flexmb.sensitivity without the keyword check: {unchecked}"
    for name in ("summary", "gradient_unit"):
        assert hasattr(getattr(fs.TransientSensitivity, name), "renamed_keywords"), name


def test_importing_the_package_loads_neither_its_modules_nor_sparse_linear_algebra():
    code = ("import sys, flexmb as fm; fm.sensitivity; import flexmb.sensitivity; "
            "print(sorted(m for m in sys.modules if m.startswith(('flexmb.', 'numba', 'scipy'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['flexmb.lazy_exports', 'flexmb.sensitivity']"
