"""A time step is recorded cheaply: the energies, the angular momentum and the element outputs of
bars and beams are computed from the stored states when first read (flexmb.results.time_history,
``Deferred``), with the values a step-by-step evaluation gives; a run written to a file, or read
by an element-output sensor, is evaluated at each step as before."""
import copy
import pickle

import numpy as np
import pytest

import flexmb as fm
from flexmb.elements.beam2d import Beam2D

DT, T_END = 0.01, 0.12


def mechanism():
    """A cubic-mass Beam2D cantilever with a bar stay, a rigid body on a revolute joint at its tip,
    a spring from the beam to the body and a time-varying body load (a group whose outputs depend
    on the time, so it is evaluated at each step), under gravity."""
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 5), np.zeros(5)])
    m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e5, EI=10.0, rho_A=1.0, rho_I=1e-3, mass="cubic", name="beam")
    m.add_truss([[n[0], n[2]]], EA=1e3, rho_A=0.1, name="stay")
    body = m.add_rigid_body([1.5, 0.0], 1.0, 0.1)
    m.add_joint("revolute", n[-1], body)
    m.fix(n[0], "ux")
    m.fix(n[0], "uy")
    m.add_spring(n[2], body, k=50.0)
    m.add_body_load(body, pulse)
    m.set_gravity([0.0, -9.81])
    return fm.Assembly(m)


def pulse(t: float) -> list[float]:
    return [0.0, -3.0 * np.sin(5.0 * t)]


def spinning_beam3d():
    """A free Beam3D with rotary inertia, spinning about two axes (3D energy and momentum)."""
    m = fm.Model(dim=3)
    n = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 4), np.zeros(4), np.zeros(4)])
    m.add_beam3d(np.c_[n[:-1], n[1:]], EA=1e6, GJ=50.0, EI_y=80.0, EI_z=120.0, rho_A=2.0,
                 rho_I=(2e-3, 1e-3, 1e-3), y_axis=(0.0, 1.0, 0.0))
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    w = np.array([0.0, 2.0, 5.0])
    for node in n:
        i = asm.dofs.index(node, "ux")
        v0[i:i + 3] = np.cross(w, m.coordinates[node] - [0.5, 0.0, 0.0])
        v0[i + 3:i + 6] = w
    return asm, v0


def assert_same_history(a: fm.TimeHistory, b: fm.TimeHistory) -> None:
    """Every series and element output of b equals a's, to round-off of its own scale."""
    for name in ("kinetic", "strain", "angular_momentum", "total", "constraint_residual", "joint_forces"):
        x, y = np.asarray(getattr(a, name), dtype=float), np.asarray(getattr(b, name), dtype=float)
        scale = np.abs(x).max(initial=0.0) + 1e-300
        assert x.shape == y.shape and np.abs(x - y).max(initial=0.0) <= 1e-13 * scale, (name, x, y)
    for gi, store in enumerate(a.elements):
        for name in store:
            x, y = a.element(gi, name), b.element(gi, name)
            scale = np.abs(x).max(initial=0.0) + 1e-300
            assert x.shape == y.shape and np.abs(x - y).max() <= 1e-13 * scale, (gi, name)


def test_a_step_computes_no_beam_outputs_until_they_are_read(monkeypatch):
    calls = []
    evaluate = Beam2D.outputs_and_strain_energy

    def counted(self, X, u):
        calls.append(len(u))
        return evaluate(self, X, u)
    monkeypatch.setattr(Beam2D, "outputs_and_strain_energy", counted)
    asm = mechanism()
    h = fm.integrate(asm, DT, T_END, progress=False)
    assert calls == [], f"recording evaluated the beams {len(calls)} times during the run"
    u = np.array(h.u)                                       # the stored states: nothing to compute
    assert calls == []
    strain = h.strain                                       # the first read computes every step, once
    assert len(calls) == h.n_steps
    expected = [asm.outputs_and_strain_energy(uk) for uk in u]
    assert np.allclose(strain, [V for _, V in expected], rtol=1e-13, atol=0.0)
    N = h.element("beam", "N")
    assert np.allclose(N, [outputs[0]["N"] for outputs, _ in expected], rtol=1e-13, atol=1e-12 * np.abs(N).max())
    assert len(calls) == 2 * h.n_steps                      # the expected values above; nothing recomputed


def test_values_read_later_equal_those_written_at_each_step(tmp_path):
    """The same run written to a file (every value computed at its step) and kept in memory."""
    written = fm.integrate(mechanism(), DT, T_END, progress=False, save_to=tmp_path / "run.h5")
    kept = fm.integrate(mechanism(), DT, T_END, progress=False)
    assert kept.strain.max() > 1e-6 and kept.kinetic.max() > 1e-3        # the run moves and bends
    assert_same_history(written, kept)
    assert_same_history(written, fm.load_result(tmp_path / "run.h5"))
    later = fm.integrate(mechanism(), DT, T_END, progress=False)
    later.save(tmp_path / "later.h5")                       # a file written after the run is complete
    assert_same_history(written, fm.load_result(tmp_path / "later.h5"))


def test_a_3d_run_keeps_its_invariants_when_read_later(tmp_path):
    asm, v0 = spinning_beam3d()
    h = fm.integrate(asm, 2e-3, 0.02, v0=v0, progress=False)
    written = fm.integrate(asm, 2e-3, 0.02, v0=v0, progress=False, save_to=tmp_path / "run.h5")
    assert_same_history(written, h)
    L = np.asarray(h.angular_momentum)
    assert np.abs(L - L[0]).max() < 1e-10 * np.linalg.norm(L[0]), "angular momentum of free flight"
    assert h.energy_error().max() < 1e-10
    T, L0 = asm.energy_and_momentum(h.u[0], h.v[0])
    assert T == pytest.approx(asm.kinetic_energy(h.v[0], h.u[0]), rel=1e-14)
    assert np.allclose(L0, asm.angular_momentum(h.u[0], h.v[0]), rtol=1e-14, atol=0.0)


@pytest.mark.parametrize("in_place", [False, True])
def test_a_section_changed_after_the_run_does_not_change_its_history(in_place):
    asm = mechanism()
    h = fm.integrate(asm, DT, T_END, progress=False)
    before = [asm.outputs_and_strain_energy(uk) for uk in h.u]
    beam = asm.groups[0]
    if in_place:
        beam.EI *= 3.0                                       # the same array, stiffer
    else:
        beam.EI = 3.0 * beam.EI                              # a stiffer beam for the next run
    changed = [asm.outputs_and_strain_energy(uk)[1] for uk in h.u]
    assert not np.allclose(changed, [V for _, V in before], rtol=1e-3), "the change must show"
    assert np.allclose(h.strain, [V for _, V in before], rtol=1e-13, atol=0.0)
    M1 = h.element("beam", "M1")
    assert np.allclose(M1, [outputs[0]["M1"] for outputs, _ in before], rtol=1e-13, atol=1e-12 * np.abs(M1).max())


def test_a_copied_or_pickled_history_is_complete_and_keeps_no_assembly():
    h = fm.integrate(mechanism(), DT, T_END, progress=False)
    for other in (pickle.loads(pickle.dumps(h)), copy.deepcopy(h)):
        assert other._deferred is None and h._deferred is None
        assert_same_history(h, other)


def test_element_output_sensors_read_each_step():
    model = mechanism().model
    model.add_sensor("element_output", "beam", element=0, output="M1", name="root_moment")
    h = fm.integrate(fm.Assembly(model), DT, T_END, progress=False)
    assert np.allclose(h.sensor("root_moment"), h.element("beam", "M1")[:, 0], rtol=1e-14, atol=0.0)
    assert np.abs(h.sensor("root_moment")).max() > 1e-3
