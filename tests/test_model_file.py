"""Model files (:mod:`flexmb.io.model_file`): ``Model.save`` and ``fm.load_model`` rebuild a model
that runs bit for bit like the original (several element kinds, bodies, joints with drives, force
elements, a modal body); functions travel by ``module:qualname`` and a lambda is refused by name;
a result file carries its model; ``flexmb run`` runs a model file."""
from __future__ import annotations

import functools
import os
import pickle
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import flexmb as fm
from flexmb.cli import main
from flexmb.io.model_file import MODEL_GROUP
from flexmb.io.solid_mesh import box
from flexmb.model_digest import model_digest
from models import cantilever_body_3d

#: the series a run's bit-for-bit comparison covers
SERIES = ("t", "u", "v", "a", "kinetic", "strain", "work", "multipliers", "dissipated")


def crank_drive(t: float) -> float:
    """The joint's drive angle (rad) at time t (s): from rest, smoothly up to 2 rad/s."""
    return 2.0 * t - np.sin(4.0 * t) / 2.0


def swirl(t: float, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A user force (N) on the points: linear drag with a sideways part."""
    return -0.3 * v + 0.1 * v[:, ::-1]


def pressure_ramp(t: float) -> float:
    return 50.0 * min(t / 0.01, 1.0)


class Ramp:
    """A load of t as a callable object (not savable: its class is not flexmb's)."""

    def __call__(self, t: float) -> float:
        return 10.0 * t


def beam_crank(drive=crank_drive) -> fm.Model:
    """2D: a clamped flexible beam, a rigid body on its tip through a driven revolute joint, a spring
    to the ground, a damper, a user force, a load of t (numpy's sin), gravity, Rayleigh damping, a sensor."""
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 5), np.zeros(5)])
    beam = m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e6, EI=50.0, rho_A=1.0, rho_I=1e-3, name="arm")
    m.fix(n[0])
    body = m.add_rigid_body([1.2, 0.0], mass=0.5, inertia=0.01)
    m.add_joint("revolute", n[-1], body, at=[1.0, 0.0], drive=drive, name="crank")
    m.add_spring(None, body, k=200.0, at_a=[1.2, -0.5])
    m.add_damper(n[2], None, c=0.5, at_b=[0.5, -1.0])
    m.add_user_force([n[3]], swirl)
    m.add_load(n[2], "uy", np.sin)
    m.set_gravity([0.0, -9.81])
    m.set_rayleigh_damping(beam, beta=1e-4)
    m.add_sensor("position", n[-1])
    return m


def pressed_shell() -> fm.Model:
    """3D: a clamped square plate of shell triangles under a ramped pressure."""
    m = fm.Model(dim=3)
    x, y = np.meshgrid(np.linspace(0.0, 1.0, 4), np.linspace(0.0, 1.0, 4))
    m.add_nodes(np.c_[x.ravel(), y.ravel(), np.zeros(16)])
    tri = []
    for j in range(3):
        for i in range(3):
            a = 4 * j + i
            tri += [[a, a + 1, a + 5], [a, a + 5, a + 4]]
    shell = m.add_shell(np.array(tri), E=2e9, nu=0.3, thickness=0.01, rho=1000.0, name="plate")
    m.add_pressure(shell, pressure_ramp)
    for node in np.flatnonzero(x.ravel() == 0.0):
        m.fix(int(node))
    return m


def solid_block() -> fm.Model:
    """3D: a hex8 block clamped at x = 0 with a tip load on its free end, plus a bushing-free point mass."""
    m = fm.Model(dim=3)
    X, cells = box(1.0, 0.2, 0.2, 4, 1, 1, kind="hex8")
    m.add_nodes(X)
    m.add_solid(cells, E=1e7, nu=0.3, rho=100.0)
    for node in np.flatnonzero(X[:, 0] == 0.0):
        m.fix(int(node))
    tip = np.flatnonzero(X[:, 0] == 1.0)
    for node in tip:
        m.add_load(int(node), "uz", -10.0)
    m.add_point_mass(int(tip[0]), 0.2)
    return m


def spun_modal_body() -> fm.Model:
    """3D: a modal (reduced) beam on a floating frame, its frame driven about z by a revolute joint."""
    m = fm.Model(dim=3)
    body = m.add_modal_body(cantilever_body_3d(n_el=4, n_modes=2), name="blade")
    m.add_joint("revolute", None, int(body.connectivity[0, 0]), axis=[0.0, 0.0, 1.0], drive=crank_drive)
    m.set_gravity([0.0, 0.0, -9.81])
    return m


def run(model: fm.Model, **kwargs) -> fm.TimeHistory:
    return fm.integrate(model, dt=1e-3, t_end=5e-3, progress=False, **kwargs)


def assert_same_run(a: fm.TimeHistory, b: fm.TimeHistory) -> None:
    for name in SERIES:
        x, y = getattr(a, name), getattr(b, name)
        assert np.asarray(x).shape == np.asarray(y).shape, name
        assert np.array_equal(x, y), f"{name} differs by up to {np.max(np.abs(np.subtract(x, y))):.3g}"


@pytest.mark.parametrize("build", [beam_crank, pressed_shell, solid_block, spun_modal_body])
def test_a_rebuilt_model_runs_bit_for_bit(build, tmp_path):
    original = build()
    path = original.save(tmp_path / "model.h5")
    rebuilt = fm.load_model(path)
    assert rebuilt is not original
    assert model_digest(rebuilt) == model_digest(original)
    first = run(original)
    assert np.max(np.abs(first.u[-1])) > 0.0, "the run must move something for the comparison to mean anything"
    assert_same_run(first, run(rebuilt))


def test_functions_and_shared_parts_come_back(tmp_path):
    """Functions are imported again (the same objects); a body shared by a joint and a spring stays shared."""
    original = beam_crank()
    rebuilt = fm.load_model(original.save(tmp_path / "model.h5"))
    assert rebuilt.joints[0].drive.function is crank_drive
    assert rebuilt.loads[0].value is np.sin
    assert rebuilt.groups[2].force is swirl
    assert type(rebuilt.clamped) is set and type(rebuilt.dim) is int
    assert rebuilt.coordinates.dtype == original.coordinates.dtype


def test_a_partial_of_a_module_function_is_saved(tmp_path):
    """functools.partial fixes a function's parameters without a closure: saved as the function and
    its arguments, it runs like the original."""
    m = solid_block()
    m.add_load(m.n_nodes - 1, "ux", functools.partial(np.multiply, 400.0))      # 400 t (N)
    rebuilt = fm.load_model(m.save(tmp_path / "model.h5"))
    share = rebuilt.loads[-1].value
    assert type(share) is functools.partial and share.func is np.multiply and share.args == (400.0,)
    assert_same_run(run(m), run(rebuilt))


def test_a_lambda_drive_is_refused_by_name(tmp_path):
    m = beam_crank(drive=lambda t: 0.5 * t)
    with pytest.raises(fm.ModelError, match=r"joint 0 \('crank'\)'s drive .*lambda.*module level"):
        m.save(tmp_path / "model.h5")
    assert not list(tmp_path.iterdir()), "a refused model leaves no file"


def test_a_nested_function_and_a_foreign_object_are_refused(tmp_path):
    def local_force(t, x, v):
        return -v

    m = beam_crank()
    m.groups[2].force = local_force
    with pytest.raises(fm.ModelError, match=r"element group 2 .*force .*inside another function"):
        m.save(tmp_path / "a.h5")
    m = beam_crank()
    m.add_load(1, "uy", Ramp())                    # callable, but an object of a class outside flexmb
    with pytest.raises(fm.ModelError, match=r"load 1's value is a test_model_file.Ramp object.*plain function"):
        m.save(tmp_path / "b.h5")


def test_files_that_hold_no_model_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.h5 does not exist"):
        fm.load_model(tmp_path / "missing.h5")
    (tmp_path / "text.h5").write_text("no")
    with pytest.raises(fm.ModelError, match="not a flexmb model file"):
        fm.load_model(tmp_path / "text.h5")
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["x"] = np.arange(3)
    with pytest.raises(fm.ModelError, match="not a flexmb model file"):
        fm.load_model(tmp_path / "other.h5")
    path = solid_block().save(tmp_path / "model.h5")
    with h5py.File(path, "r+") as f:
        f[MODEL_GROUP].attrs["model_format_version"] = 99
    with pytest.raises(fm.ModelError, match="model format version 99"):
        fm.load_model(path)
    with pytest.raises(FileExistsError):
        solid_block().save(path)


def test_a_result_file_carries_its_model(tmp_path):
    original = beam_crank()
    digest = model_digest(original)            # before the run: it sets the user force's evaluation time
    history = run(original, save_to=tmp_path / "run.h5")
    rebuilt = fm.load_model(tmp_path / "run.h5")
    assert model_digest(rebuilt) == digest
    assert_same_run(history, run(rebuilt))
    assert fm.load_result(tmp_path / "run.h5").n_steps == history.n_steps


def test_a_result_file_without_a_savable_model_still_works(tmp_path):
    m = solid_block()
    m.add_load(m.n_nodes - 1, "ux", lambda t: 0.0)
    with pytest.warns(fm.FlexmbWarning, match="model is not stored.*lambda"):
        history = run(m, save_to=tmp_path / "run.h5")
    loaded = fm.load_result(tmp_path / "run.h5")
    assert np.array_equal(loaded.u, history.u)
    with pytest.raises(fm.ModelError, match="carries no model"):
        fm.load_model(tmp_path / "run.h5")


def test_flexmb_run_writes_the_result_of_a_model_file(tmp_path, capsys):
    model = solid_block()
    model_path = model.save(tmp_path / "block.h5")
    out = tmp_path / "out.h5"
    assert main(["run", str(model_path), "--t-end", "0.005", "--dt", "0.001", "--out", str(out)]) == 0
    assert str(out) in capsys.readouterr().out
    result = fm.load_result(out)
    assert_same_run(result, run(model))
    assert main(["run", str(tmp_path / "none.h5"), "--t-end", "1", "--dt", "0.1"]) == 2
    assert "none.h5 does not exist" in capsys.readouterr().err


def test_flexmb_run_finds_functions_in_a_module_beside_the_model(tmp_path, monkeypatch):
    """A user's drive in ``crank.py`` next to the model: the command (a new process, started in that
    folder) imports it by its reference and runs the model as this process does."""
    (tmp_path / "crank.py").write_text("def angle(t):\n    return 0.5 * t * t\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from crank import angle

    model = fm.Model(dim=2)
    model.add_nodes([[0.0, 0.0], [0.5, 0.0], [1.0, 0.0]])
    model.add_beam2d([[0, 1], [1, 2]], EA=1e6, EI=10.0, rho_A=1.0)
    model.add_joint("revolute", None, 0, drive=angle, name="crank")
    model.save(tmp_path / "crank.h5")
    command = Path(sys.executable).with_name("flexmb")
    done = subprocess.run([str(command), "run", "crank.h5", "--t-end", "0.005", "--dt", "0.001"], cwd=tmp_path,
                          capture_output=True, text=True, env={**os.environ, "FLEXMB_PROGRESS": "0"})
    assert done.returncode == 0, done.stderr
    assert_same_run(fm.load_result(tmp_path / "crank-result.h5"), run(model))


def test_a_result_pickles_without_its_model():
    """The layout keeps its model for the result file only: a result still pickles (to another
    process) when its model has a lambda, which no pickle can hold."""
    model = solid_block()
    model.add_load(model.n_nodes - 1, "ux", lambda t: 0.0)
    history = run(model)
    assert history.layout.model is model
    copied = pickle.loads(pickle.dumps(history))
    assert copied.layout.model is None and np.array_equal(copied.u, history.u)


def test_a_solid_groups_kept_stiffness_is_not_saved(tmp_path):
    """The stiffness a solid group keeps for its last geometry (``_kept_stiffness``) is recomputed
    when missing, so the file does not carry it and the rebuilt model gives the same forces."""
    from flexmb.io.solid_mesh import box

    X, cells = box(1.0, 0.2, 0.2, 4, 1, 1, "tet10")
    model = fm.Model(dim=3)
    model.add_nodes(X)
    group = model.add_solid(cells, E=2e11, nu=0.3, rho=7800.0)
    asm = fm.Assembly(model)
    u = np.linspace(0.0, 1e-4, asm.n_dof)
    q = asm.force_and_tangent(u)[0]
    assert "_kept_stiffness" in vars(group)
    model.save(tmp_path / "solid.h5")
    rebuilt = fm.load_model(tmp_path / "solid.h5")
    assert "_kept_stiffness" not in vars(rebuilt.groups[0])
    assert np.array_equal(fm.Assembly(rebuilt).force_and_tangent(u)[0], q)
