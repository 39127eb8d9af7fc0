"""Restart: ``integrate(..., restart_from=file)`` continues a run from its result file.

Each model runs 0..T in one go and 0..T/2 followed by a restart to T; every series (u, v, a,
reactions, energies, work, multipliers, joint forces) must agree to 1e-12 relative (measured:
bit for bit, since the file holds the scheme's whole state at full precision), the energy
bookkeeping must continue across the restart, and the restarted file must hold every step once,
with the restart in its run log.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from flexmb.io.result_file import ResultWriter

REPO = Path(__file__).resolve().parents[1]
RESTART_TOL = 1e-12


def bathe_pendulum() -> tuple[fm.Assembly, np.ndarray]:
    """Bathe's pendulum of the README (stiff bar, tip mass, fired horizontally); its v0."""
    model = fm.Model(dim=2)
    pivot, tip = model.add_node([0.0, 0.0]), model.add_node([0.0, -3.0443])
    model.add_truss([[pivot, tip]], EA=1e10, name="bar")
    model.add_point_mass(tip, 10.0)
    model.fix(pivot)
    model.set_gravity([0.0, -9.80])
    asm = fm.Assembly(model)
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.index(tip, "ux")] = 7.725
    return asm, v0


def double_pendulum() -> tuple[fm.Assembly, np.ndarray]:
    """Two steel strips (3 Beam2D each) hinged to ground and to each other by revolute joints,
    released horizontal under gravity (validation/double_pendulum_flexible.py, fewer elements)."""
    model = fm.Model(dim=2)
    strips = []
    for k in range(2):
        x = np.linspace(k, k + 1.0, 4)
        nodes = model.add_nodes(np.c_[x, np.zeros_like(x)])
        model.add_beam2d(np.c_[nodes[:-1], nodes[1:]], 1.575e7, 11.81, 0.585, 4.39e-7, name=f"strip {k + 1}")
        strips.append(nodes)
    model.add_joint("revolute", None, strips[0][0], at=[0.0, 0.0], name="ground hinge")
    model.add_joint("revolute", strips[0][-1], strips[1][0], at=[1.0, 0.0], name="middle hinge")
    model.set_gravity([0.0, -9.81])
    asm = fm.Assembly(model)
    return asm, np.zeros(asm.n_dof)


def flying_beam() -> tuple[fm.Assembly, np.ndarray]:
    """A free steel strip of 4 Beam3D elements translating and spinning about two axes, struck
    by a transverse end-force pulse over the first 30 ms (the restart at 20 ms falls inside it) (validation/flying_beam_3d.py, smaller)."""
    model = fm.Model(dim=3)
    x = np.linspace(0.0, 1.0, 5)
    nodes = model.add_nodes(np.c_[x, np.zeros_like(x), np.zeros_like(x)])
    area, i_y, i_z = 4e-4, 4e-4 * 1e-4 / 12.0, 1e-2 * 6.4e-5 / 12.0
    model.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=2.1e11 * area, GJ=8.1e10 * 1.1e-9, EI_y=2.1e11 * i_y,
                     EI_z=2.1e11 * i_z, rho_A=7800.0 * area, rho_I=7800.0 * np.array([i_y + i_z, i_y, i_z]),
                     y_axis=(0.0, 1.0, 0.0), mass="consistent", name="strip")
    model.add_load(nodes[-1], "uz", lambda t: 200.0 * np.sin(np.pi * t / 0.03) ** 2 if t < 0.03 else 0.0)
    asm = fm.Assembly(model)
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.translations()] = np.array([1.0, 0.5, 0.0]) + np.cross([4.0, 0.0, 6.0], model.coordinates - [0.5, 0, 0])
    v0[asm.rotation_dofs] = [4.0, 0.0, 6.0]
    return asm, v0


CASES = {  # name: (builder, dt in s, T in s)
    "bathe-pendulum": (bathe_pendulum, 0.1, 2.0),
    "double-pendulum-joints": (double_pendulum, 0.005, 0.2),
    "flying-beam-3d": (flying_beam, 0.002, 0.04),
}


def relative_differences(one: fm.TimeHistory, other: fm.TimeHistory) -> dict[str, float]:
    """max |one - other| / max |one| per series (0 where both are zero)."""
    out = {}
    a, b = one.arrays(), other.arrays()
    for name, x in a.items():
        assert b[name].shape == x.shape, f"series {name}: {b[name].shape} vs {x.shape}"
        scale = np.abs(x).max(initial=0.0)
        out[name] = float(np.abs(x - b[name]).max(initial=0.0) / scale) if scale > 0 else float(np.abs(b[name]).max(initial=0.0))
    for gi, store in enumerate(one.elements):
        for name, values in store.items():
            x, y = np.array(values), np.array(other.elements[gi][name])
            scale = np.abs(x).max(initial=0.0)
            out[f"{name}@{gi}"] = float(np.abs(x - y).max() / scale) if scale > 0 else float(np.abs(y).max())
    return out


@pytest.mark.parametrize("scheme", ["mid-point", "composed-mid-point", "newmark"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_restart_at_half_time_equals_the_run_in_one_go(tmp_path, case, scheme):
    build, dt, t_end = CASES[case]
    asm, v0 = build()
    one = fm.integrate(asm, dt, t_end, scheme=scheme, v0=v0)
    path = tmp_path / "run.h5"
    first = fm.integrate(asm, dt, t_end / 2, scheme=scheme, v0=v0, save_to=path)
    continued = fm.integrate(build()[0], dt, t_end, scheme=scheme, restart_from=path)
    on_disk = fm.load_result(path)

    for label, result in (("returned", continued), ("file", on_disk)):
        differences = relative_differences(one, result)
        worst = max(differences, key=differences.get)
        print(f"{case} {scheme} {label}: largest relative difference {differences[worst]:.1e} ({worst})")
        assert differences[worst] <= RESTART_TOL, f"{case}, {scheme}, {label}: series {worst} differs by " \
                                                  f"{differences[worst]:.2e} (relative) from the run in one go"
    assert on_disk.n_steps == one.n_steps == round(t_end / dt) + 1, "the file does not hold every step once"
    assert on_disk.meta["status"] == "finished"
    restarts = [e for e in on_disk.events if e.kind == "restart"]
    assert len(restarts) == 1 and restarts[0].at == first.t[-1], on_disk.format_log()
    # the bookkeeping continues: work and total energy step across the restart as in one go
    k = first.n_steps - 1
    jump = np.diff(on_disk.total)[k - 1:k + 1]
    assert np.array_equal(jump, np.diff(one.total)[k - 1:k + 1])
    assert np.array_equal(np.array(on_disk.work[:k + 1]), np.array(first.work)), "steps before the restart changed"


def test_a_run_stopped_by_a_failing_load_continues_from_its_last_step(tmp_path):
    """A load function that raises at t > 0.32 s ends the run (status failed); the same model with a
    working function continues from t = 0.3 s and ends where the uninterrupted run ends."""
    def push(t: float) -> float:
        return 50.0 * np.sin(4.0 * t)

    def flaky_push(t: float) -> float:
        if t > 0.32:
            raise RuntimeError("sensor lost")
        return push(t)

    def pendulum(load) -> fm.Assembly:
        asm, _ = bathe_pendulum()
        asm.model.add_load(1, "ux", load)
        return fm.Assembly(asm.model)

    path = tmp_path / "run.h5"
    with pytest.raises(fm.UserFunctionError, match="sensor lost"):
        fm.integrate(pendulum(flaky_push), 0.05, 1.0, save_to=path)
    stopped = fm.load_result(path)
    assert stopped.meta["status"] == "failed" and np.isclose(stopped.t[-1], 0.3), stopped.t
    with pytest.raises(fm.ModelError, match="differs from the one that wrote the file in its loads"):
        fm.integrate(pendulum(push), 0.05, 1.0, restart_from=path)
    continued = fm.integrate(pendulum(push), 0.05, 1.0, restart_from=path, allow_changed=True)   # the load is fixed
    one = fm.integrate(pendulum(push), 0.05, 1.0)
    differences = relative_differences(one, continued)
    assert max(differences.values()) <= RESTART_TOL, differences
    on_disk = fm.load_result(path)
    assert [e.kind for e in on_disk.events] == ["error", "restart"], on_disk.format_log()
    assert on_disk.meta["status"] == "finished" and on_disk.n_steps == one.n_steps


def test_a_killed_run_continues_from_its_last_flushed_step(tmp_path):
    """SIGKILL inside a step (the file's writer never closes it): a restart continues from the
    last step on disk, and the result equals the run in one go."""
    path = tmp_path / "killed.h5"
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(REPO / "tests")!r})
        import flexmb as fm
        from test_restart import double_pendulum
        asm, v0 = double_pendulum()
        def weight(t):
            if t > 0.1:
                os.kill(os.getpid(), signal.SIGKILL)
            return 0.0
        asm.model.add_load(7, "uy", weight)
        fm.integrate(fm.Assembly(asm.model), 0.005, 0.2, save_to={str(path)!r})
        """)
    env = dict(os.environ, PYTHONPATH=str(REPO), FLEXMB_FLUSH_INTERVAL="0")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, f"the run was not killed: {done.returncode}\n{done.stderr}"
    killed = fm.load_result(path)
    assert killed.meta["status"] == "running" and np.isclose(killed.t[-1], 0.1), killed.t[-3:]

    asm, v0 = double_pendulum()
    asm.model.add_load(7, "uy", 0.0)
    asm = fm.Assembly(asm.model)
    continued = fm.integrate(asm, 0.005, 0.2, restart_from=path, allow_changed=True)   # the killing load is gone
    one = fm.integrate(asm, 0.005, 0.2, v0=v0)
    differences = relative_differences(one, continued)
    assert max(differences.values()) <= RESTART_TOL, differences
    assert fm.load_result(path).meta["status"] == "finished"


def test_a_restart_may_write_all_steps_to_another_file(tmp_path):
    asm, v0 = bathe_pendulum()
    fm.integrate(asm, 0.1, 1.0, v0=v0, save_to=tmp_path / "first.h5")
    fm.integrate(asm, 0.1, 2.0, restart_from=tmp_path / "first.h5", save_to=tmp_path / "all.h5")
    assert fm.load_result(tmp_path / "first.h5").n_steps == 11, "the restarted file must stay as it was"
    both = fm.load_result(tmp_path / "all.h5")
    one = fm.integrate(asm, 0.1, 2.0, v0=v0)
    assert both.n_steps == 21 and max(relative_differences(one, both).values()) <= RESTART_TOL


def test_a_restart_refuses_what_it_cannot_continue(tmp_path):
    asm, v0 = bathe_pendulum()
    path = tmp_path / "run.h5"
    fm.integrate(asm, 0.1, 1.0, v0=v0, save_to=path)
    other, _ = double_pendulum()
    refusals = [
        (dict(model=other), "the model differs from the one that wrote the file.*nodes"),
        (dict(scheme="newmark"), "scheme 'mid-point'.*got 'newmark'"),
        (dict(dt=0.05, t_end=2.0), "dt = 0.1 s; a restart continues with the same step"),
        (dict(t_end=1.0), r"already reaches t = 1 s; ask for a t_end after it"),
        (dict(v0=v0), "do not pass u0 or v0"),
        (dict(t0=0.5), "started at t0 = 0 s"),
    ]
    for change, message in refusals:
        kwargs = dict(model=asm, dt=0.1, t_end=2.0, restart_from=path) | change
        with pytest.raises(fm.ModelError, match=message):
            fm.integrate(kwargs.pop("model"), kwargs.pop("dt"), kwargs.pop("t_end"), **kwargs)
    assert fm.load_result(path).n_steps == 11, "a refused restart must leave the file alone"

    statics = tmp_path / "static.h5"
    m = fm.Model(dim=2)
    n = m.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    m.add_beam2d([n], EA=1e6, EI=1e3)
    m.fix(n[0])
    m.add_load(n[1], "uy", -1.0)
    fm.load_control(m, 2, save_to=statics)
    with pytest.raises(fm.ModelError, match="holds a static result, not a time integration"):
        fm.integrate(asm, 0.1, 2.0, restart_from=statics)

    # a file another run is writing (it holds the write lock) cannot be continued
    history = fm.load_result(path)
    writer = ResultWriter.reopen(path, history)
    try:
        with pytest.raises(fm.results.ResultFileError, match="is being written by another run"):
            fm.integrate(asm, 0.1, 2.0, restart_from=path)
    finally:
        writer.close()


def readme_chain(tip_mass: float = 0.0) -> fm.Model:
    """The README's three links hinged in a chain at the origin, under gravity; optionally a
    point mass at the tip (node 3)."""
    model = fm.Model(dim=2)
    nodes = model.add_nodes([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])
    model.add_truss([[0, 1], [1, 2], [2, 3]], EA=1e7, rho_A=1.0, name="links")
    model.fix(nodes[0])
    model.set_gravity([0.0, -9.81])
    if tip_mass:
        model.add_point_mass(nodes[3], tip_mass)
    return model


def test_a_restart_refuses_a_changed_model_unless_allowed(tmp_path):
    """The file holds a hash of the model's data per part: a restart of the chain that gained a
    5 kg tip mass is refused naming the masses, as are changed properties, nodes, loads and
    gravity; with allow_changed=True it continues, and the total energy jumps at the restart
    by exactly the new mass's kinetic energy, 5 kg |v_tip|^2 / 2 (work and strain continue)."""
    path = tmp_path / "run.h5"
    first = fm.integrate(readme_chain(), 0.01, 0.25, save_to=path)
    before = path.read_bytes()

    def changed(edit) -> fm.Model:
        model = readme_chain()
        edit(model)
        return model

    refusals = {"point masses": changed(lambda m: m.add_point_mass(3, 5.0)),
                "element group 0 \\('links'\\)": changed(lambda m: m.groups[0].EA.__setitem__(1, 2e7)),
                "node coordinates": changed(lambda m: m.coordinates.__setitem__((3, 1), 1e-3)),
                "loads": changed(lambda m: m.add_load(3, "ux", lambda t: 0.1 * t)),
                "gravity": changed(lambda m: m.set_gravity([0.0, -9.80]))}
    for part, model in refusals.items():
        with pytest.raises(fm.ModelError, match=f"differs from the one that wrote the file in its {part}; pass "
                                                "allow_changed=True"):
            fm.integrate(model, 0.01, 0.5, restart_from=path)
    assert path.read_bytes() == before, "a refused restart must leave the file alone"
    fm.integrate(readme_chain(), 0.01, 0.3, restart_from=path, save_to=tmp_path / "same.h5")   # the same model

    heavier = fm.integrate(readme_chain(tip_mass=5.0), 0.01, 0.5, restart_from=path, allow_changed=True)
    k = first.n_steps - 1                                                    # the restart step, t = 0.25 s
    v_tip = np.array([heavier.velocity(3, "ux")[k], heavier.velocity(3, "uy")[k]])
    jump = heavier.total[k + 1] - heavier.total[k]
    expected = 0.5 * 5.0 * v_tip @ v_tip
    print(f"kinetic energy {heavier.kinetic[k]:.3f} -> {heavier.kinetic[k + 1]:.3f} J; total energy jump "
          f"{jump:.6f} J, 5 kg |v|^2 / 2 = {expected:.6f} J")
    assert abs(jump - expected) <= 1e-9 * expected, f"the jump misses 5 kg |v_tip|^2 / 2 by {jump - expected:.2e} J"
    drift = np.abs(heavier.total[k + 1:] - heavier.total[k + 1]).max()
    assert drift <= 1e-9 * expected, f"the changed model's energy drifts by {drift:.2e} J after the restart"


def _drag(t: float, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    return -0.5 * v


def test_a_restart_of_the_same_model_with_a_user_force_and_a_body_load(tmp_path):
    """A user force and a body load carry the time they were last evaluated at (run state the
    assembly sets); it is not model data, so a restart of the same model object continues (it
    was refused as a changed model) and equals the run in one go."""
    m = fm.Model(dim=2)
    body = m.add_rigid_body([1.0, 0.0], mass=1.0, inertia=0.1)
    m.add_joint("revolute", None, body, at=[0.0, 0.0])
    m.add_user_force([body], _drag)
    m.add_body_load(body, force=[0.3, 0.0])
    m.set_gravity([0.0, -9.81])
    whole = fm.integrate(m, 0.01, 0.4, progress=False)
    fm.integrate(m, 0.01, 0.2, progress=False, save_to=tmp_path / "half.h5")
    rest = fm.integrate(m, 0.01, 0.4, progress=False, restart_from=tmp_path / "half.h5")
    assert np.allclose(np.asarray(rest.u)[-1], np.asarray(whole.u)[-1], rtol=0.0, atol=1e-12)
