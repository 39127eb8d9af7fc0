"""Result objects and result files: accessors, element outputs, save/load, runs that stop part-way."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from flexmb.integrators import NewtonSettings
from models import kicked_pendulum, pendulum_chain, spinning_bar

REPO = Path(__file__).resolve().parents[1]


def test_dynamic_result_round_trips_through_the_file(tmp_path):
    asm, v0 = spinning_bar()
    path = tmp_path / "bar.h5"
    h = fm.integrate(asm, 0.005, 0.05, v0=v0, save_to=path)
    r = fm.load_result(path)
    assert isinstance(r, fm.TimeHistory) and r.scheme == "mid-point" and r.dt == 0.005
    assert r.meta["status"] == "finished"
    for name, value in h.arrays().items():
        assert np.array_equal(r.arrays()[name], value), f"series {name} differs after save/load"
    for gi, store in enumerate(h.elements):
        for name, values in store.items():
            assert np.array_equal(np.array(r.elements[gi][name]), np.array(values)), f"element output {name}"
    assert r.layout.n_dof == asm.n_dof and np.array_equal(r.layout.first, asm.dofs.first)
    assert np.array_equal(r.layout.groups[0].frames, asm.model.groups[0].section_frames(
        asm.model.coordinates[asm.model.groups[0].connectivity]))
    assert np.allclose(r.positions(-1), asm.positions(h.u[-1]), rtol=0, atol=1e-15)
    assert np.array_equal(r.series("uy@4"), np.array(h.u)[:, asm.dofs.index(4, "uy")])
    assert np.array_equal(r.series("vel:rz@0"), h.velocity(0, "rz"))
    assert np.array_equal(r.series("N@bar:2"), h.element("bar", "N")[:, 2])
    assert np.array_equal(r.series("Lz"), np.array(h.angular_momentum)[:, 2])


def test_static_path_and_modes_round_trip(tmp_path):
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[np.linspace(0.0, 2.0, 5), np.zeros(5)])
    m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e6, EI=1e3, name="cantilever")
    m.fix(n[0])
    m.add_load(n[-1], "ux", -1.0)
    path = fm.load_control(m, 4, save_to=tmp_path / "static.h5")
    r = fm.load_result(tmp_path / "static.h5")
    assert isinstance(r, fm.StaticPath) and r.meta["method"] == "load control"
    assert np.allclose(r.load_factors, [0.25, 0.5, 0.75, 1.0])
    assert np.array_equal(np.array(r.reactions), np.array(path.reactions))
    # the support reaction balances the tip load at every load factor
    assert np.allclose(r.reaction(0, "ux"), np.array(r.load_factors), rtol=1e-9)
    assert np.allclose(r.element("cantilever", "N"), -np.array(r.load_factors)[:, None], rtol=1e-9)

    buckling = fm.linear_buckling(m, n_modes=2)
    modes = fm.load_result(buckling.save(tmp_path / "modes.h5"))
    assert isinstance(modes, fm.ModeShapes)
    assert modes.elements == [{}], "a mode has no section forces, saved or not"
    assert np.allclose(modes.values, buckling.load_factors, rtol=1e-14)
    trans = modes.layout.translations()
    for k, shape in enumerate(modes.u):
        assert np.isclose(np.linalg.norm(shape[trans], axis=1).max(), 1.0), "mode not scaled to unit translation"
        assert abs(abs(shape @ buckling.modes[k]) / np.linalg.norm(buckling.modes[k]) / np.linalg.norm(shape) - 1) < 1e-12


def test_element_outputs_are_the_section_forces():
    """Truss N = EA strain; the pinned chain at rest under gravity: bar forces from statics."""
    asm = pendulum_chain(3)
    h = fm.integrate(asm, 0.01, 0.02)
    N = h.element("links", "N")[-1]
    eps = h.element("links", "axial_strain")[-1]
    assert np.allclose(N, 1e7 * eps, rtol=1e-12)
    assert N.shape == (3,)
    assert h.layout.groups[0].outputs == {"N": "N", "axial_strain": "-"}


def test_a_run_stopped_by_an_exception_keeps_every_completed_step(tmp_path):
    """A load function that raises at t = 0.35 s: the file holds every step up to 0.3 s."""
    asm = pendulum_chain(3)

    def failing_load(t: float) -> float:
        if t > 0.35:
            raise RuntimeError("sensor script crashed")
        return 0.0

    asm.model.add_load(3, "uy", failing_load)
    asm = fm.Assembly(asm.model)
    path = tmp_path / "stopped.h5"
    with pytest.raises(fm.UserFunctionError, match="sensor script crashed"):
        fm.integrate(asm, 0.05, 1.0, save_to=path)
    r = fm.load_result(path)
    assert np.allclose(r.t, np.arange(0.0, 0.35, 0.05), rtol=0, atol=1e-12), f"file holds t = {r.t}"
    assert r.meta["status"] == "failed"
    assert r.events[-1].kind == "error" and "sensor script crashed" in r.events[-1].message
    reference = fm.integrate(fm.Assembly(pendulum_chain(3).model), 0.05, 0.3)
    assert np.allclose(np.array(r.u), np.array(reference.u), rtol=0, atol=1e-12), \
        "saved steps differ from the same run without the failure"


def test_a_killed_run_leaves_a_readable_file(tmp_path):
    """SIGKILL inside a step (no clean-up at all): the flushed file still loads with every completed
    step (FLEXMB_FLUSH_INTERVAL=0 writes each step at once; by default blocks are 0.2 s apart)."""
    path = tmp_path / "killed.h5"
    script = textwrap.dedent(f"""
        import os, signal, sys
        import numpy as np
        sys.path.insert(0, {str(REPO / "tests")!r})
        from models import pendulum_chain
        import flexmb as fm
        asm = pendulum_chain(3)
        def load(t):
            if t > 0.42:
                os.kill(os.getpid(), signal.SIGKILL)
            return 0.0
        asm.model.add_load(3, "uy", load)
        fm.integrate(fm.Assembly(asm.model), 0.05, 1.0, save_to={str(path)!r})
        """)
    env = dict(os.environ, PYTHONPATH=str(REPO), FLEXMB_FLUSH_INTERVAL="0")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, f"the run was not killed: {done.returncode}\n{done.stderr}"
    r = fm.load_result(path)
    assert r.meta["status"] == "running", "a killed run cannot have closed its file"
    assert np.allclose(r.t, np.arange(0.0, 0.42, 0.05), rtol=0, atol=1e-12), f"file holds t = {r.t}"
    assert len(r.u) == len(r.kinetic) == len(r.element("links", "N")) == r.n_steps


def test_cutbacks_are_in_the_run_log_and_the_file(tmp_path):
    h = fm.integrate(kicked_pendulum(), 0.1, 0.5, newton=NewtonSettings(max_iterations=3), save_to=tmp_path / "cut.h5")
    assert h.cutbacks > 0
    assert sum(e.kind == "cutback" for e in h.events) == h.cutbacks
    r = fm.load_result(tmp_path / "cut.h5")
    assert r.cutbacks == h.cutbacks and [e.message for e in r.events] == [e.message for e in h.events]
    assert "did not converge" in r.format_log()


def test_bad_names_and_files_give_clear_errors(tmp_path):
    asm = pendulum_chain(2)
    h = fm.integrate(asm, 0.01, 0.02)
    with pytest.raises(fm.ModelError, match="node 9 does not exist"):
        h.series("uy@9")
    with pytest.raises(fm.ModelError, match="no element group named 'beams'"):
        h.series("N@beams:0")
    with pytest.raises(fm.ModelError, match="element 5 does not exist"):
        h.series("N@links:5")
    with pytest.raises(fm.ModelError, match="unknown quantity 'energy'"):
        h.series("energy")
    with pytest.raises(ValueError, match="use the suffix .h5"):
        h.save(tmp_path / "run.npz")
    (tmp_path / "junk.h5").write_text("not hdf5")
    with pytest.raises(ValueError, match="junk.h5 is not a readable HDF5 result file"):
        fm.load_result(tmp_path / "junk.h5")
    with pytest.raises(FileNotFoundError, match="missing.h5"):
        fm.load_result(tmp_path / "missing.h5")


def test_import_flexmb_stays_light():
    """``import flexmb`` and its every public name must not pull in pyvista, vtk, meshio, h5py,
    matplotlib or numba (they cost seconds; numba comes with the first compiled kernel a run calls)."""
    code = ("import sys, flexmb; from flexmb import *; from flexmb.analysis import *; from flexmb.cms import *; "
            "heavy = [m for m in ('pyvista', 'vtk', 'meshio', 'h5py', 'matplotlib', 'tqdm', "
            "'numba') if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"import flexmb imported {out.stdout.strip()}"


def test_progress_bar_shows_time_step_and_newton_iterations(capsys, monkeypatch):
    asm = pendulum_chain(2)
    fm.integrate(asm, 0.01, 0.05, progress=True)
    err = capsys.readouterr().err
    assert "mid-point dt=0.01" in err and "newton=" in err and "dt=0.01" in err, err
    assert "0.05/0.05 s" in err, f"the bar does not end at t_end: {err!r}"
    fm.integrate(asm, 0.01, 0.05)                    # stderr is not a terminal under pytest: quiet
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("FLEXMB_PROGRESS", "1")
    m = fm.Model(dim=2)
    n = m.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    m.add_beam2d([n], EA=1e6, EI=1e3)
    m.fix(n[0])
    m.add_load(n[1], "uy", -10.0)
    fm.load_control(m, 2)
    err = capsys.readouterr().err
    assert "load control" in err and "1/1" in err and "newton=" in err, err


def test_energy_error_of_a_run_starting_at_round_off_kinetic_energy():
    """A prescribed hub law starts with K(0) ~ 1e-25 J: the error is scaled by the largest K."""
    h = fm.TimeHistory("mid-point", 0.1)
    h.kinetic, h.strain, h.work = [1e-25, 1.0, 2.0], [0.0, 0.0, 0.0], [0.0, 1.0, 2.0 + 1e-9]
    assert np.allclose(h.energy_error(), [0.0, 0.0, 0.5e-9], atol=1e-20)
