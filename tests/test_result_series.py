"""Result series as arrays, the repr of results, energy and momentum errors measured from a
later state, and reading a static path at a load factor."""
import warnings

import numpy as np
import pytest

import flexmb as fm
from flexmb.rotations import exp_map, log_map

PULSE_END = 0.05          # s


def pulsed_oscillator():
    """A mass on a bar spring (k = 1e4 N/m, m = 1 kg, plus a cross bar) pushed by a force pulse
    F(t) = 50 sin(pi t / 0.05) N up to t = 0.05 s, then free."""
    m = fm.Model(dim=2)
    a, b, c = m.add_nodes([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]])
    m.add_truss([[a, b], [b, c]], EA=1e4, rho_A=0.0, name="springs")
    m.add_point_mass(b, 1.0)
    m.fix(a)
    m.fix(c)
    m.add_load(b, "ux", lambda t: 50.0 * np.sin(np.pi * t / PULSE_END) if t < PULSE_END else 0.0)
    return fm.Assembly(m), b


def test_series_are_read_only_arrays_and_repr_says_what_is_in_it(tmp_path):
    asm, _ = pulsed_oscillator()
    h = fm.integrate(asm, dt=0.01, t_end=0.2, progress=False)
    assert isinstance(h.t, np.ndarray) and h.t.shape == (21,)
    assert isinstance(h.u, np.ndarray) and h.u.shape == (21, asm.n_dof)
    assert isinstance(h.kinetic, np.ndarray) and h.angular_momentum.shape == (21, 1)
    with pytest.raises(ValueError, match="read-only"):
        h.u[0, 0] = 1.0
    text = repr(h)
    for part in ("TimeHistory", "mid-point", "dt = 0.01 s", "21 step(s)", "t = 0 .. 0.2", "2D, 3 nodes",
                 "springs (Truss, 2 el.)", "series: t, u, v, a", "element outputs: springs: N", "status: in memory",
                 "0 cut-back(s)"):
        assert part in text, f"{part!r} not in\n{text}"
    saved = fm.integrate(asm, dt=0.01, t_end=0.05, progress=False, save_to=tmp_path / "run.h5")
    assert f"status: finished, written to {tmp_path / 'run.h5'}" in repr(saved), repr(saved)
    assert f"status: finished, read from {tmp_path / 'run.h5'}" in repr(fm.load_result(tmp_path / "run.h5"))
    path = fm.load_control(asm, 4, progress=False)
    assert path.load_factors.shape == (4,) and path.u.shape == (4, asm.n_dof)
    text = repr(path)
    assert "StaticPath: load control, 4 step(s), load factor = 0.25 .. 1" in text, text


def test_energy_error_since_the_end_of_a_load_phase():
    """Measured from the end of the pulse, relative to the kinetic energy there; the mid-point
    scheme conserves K + V - W to round-off (the pulse's work included)."""
    asm, _ = pulsed_oscillator()
    h = fm.integrate(asm, dt=0.005, t_end=0.5, progress=False)
    after = h.energy_error(since=PULSE_END)
    k = int(np.flatnonzero(np.isclose(h.t, PULSE_END))[0])
    assert after.shape == (h.n_steps - k,)
    E = h.total
    assert np.allclose(after, np.abs(E[k:] - E[k]) / h.kinetic[k], rtol=1e-12, atol=0.0)
    assert after.max() < 1e-10, after.max()
    # from the start at rest (K(0) = 0) the scale is the largest kinetic energy
    assert np.allclose(h.energy_error(), np.abs(E - E[0]) / h.kinetic.max(), rtol=1e-12, atol=0.0)
    with pytest.raises(fm.ModelError, match="t = 0.0512 s is not an output time.*nearest is 0.05"):
        h.energy_error(since=0.0512)


def test_angular_momentum_error_since_and_a_reference_at_rest():
    """A free body kicked by a moment pulse: L changes during the pulse and is constant after;
    from a reference at rest (t = 0, L = 0) the error is scaled by the largest |L|."""
    m = fm.Model(dim=2)
    body = m.add_rigid_body([0.3, 0.0], 2.0, 0.05)
    m.add_load(body.node, "rz", lambda t: 1.0 if t < 0.1 else 0.0)
    m.add_load(body.node, "ux", lambda t: 3.0 if t < 0.1 else 0.0)
    h = fm.integrate(fm.Assembly(m), dt=0.01, t_end=0.5, progress=False)
    assert h.angular_momentum_error(since=0.1).max() < 1e-12
    from_rest = h.angular_momentum_error()
    L = np.linalg.norm(h.angular_momentum, axis=1)
    assert np.allclose(from_rest, L / L.max(), rtol=1e-12)          # L(0) = 0: relative to max |L|
    assert from_rest[-1] == pytest.approx(1.0, rel=1e-12)


def cantilever_path(load_factors):
    """3D cantilever (8 Beam3D elements) rolled up by an end moment about z: the tip turns by
    2 pi lam about z (exact elastica, reproduced by the element to round-off)."""
    m = fm.Model(dim=3)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 9), np.zeros(9), np.zeros(9)])
    m.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e7, GJ=8e2, EI_y=1e3, EI_z=1e3, second_order=True)
    m.fix(nodes[0])
    m.add_load(nodes[-1], "rz", 2.0 * np.pi * 1e3)
    asm = fm.Assembly(m)
    return asm, int(nodes[-1]), fm.load_control(asm, load_factors, progress=False)


def test_static_path_at_a_load_factor():
    asm, tip, path = cantilever_path([0.25, 0.45, 0.55])
    rot = [asm.dofs.index(tip, d) for d in ("rx", "ry", "rz")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")                                # a computed point: no warning
        exact = path.at(0.45)
    assert exact.steps == (1, 1) and not exact.interpolated
    assert np.array_equal(exact.u, path.u[1]) and np.array_equal(exact.reactions, path.reactions[1])
    # between 0.45 and 0.55 the tip turns through pi: its rotation vector jumps from +0.9 pi to
    # -0.9 pi (principal values); interpolated along the rotation it is pi, as computed directly
    with pytest.warns(fm.FlexmbWarning, match=r"interpolated linearly between the computed points 1 \(load "
                                                r"factor 0.45\) and 2 \(0.55\)"):
        half = path.at(0.5)
    assert half.steps == (1, 2) and half.weight == pytest.approx(0.5)
    _, _, direct = cantilever_path([0.25, 0.5])
    miss = np.linalg.norm(log_map(exp_map(half.u[rot]).T @ exp_map(direct.u[-1][rot])))
    assert miss < 1e-6, f"interpolated tip rotation off the computed one by {miss:.2e} rad"
    ix = asm.dofs.index(tip, "ux")
    expected = (1.0 - half.weight) * path.u[1][ix:ix + 3] + half.weight * path.u[2][ix:ix + 3]
    assert np.allclose(half.u[ix:ix + 3], expected, rtol=1e-14, atol=0.0)      # translations linearly
    with pytest.raises(fm.ModelError, match=r"load factor 0.7 is not on this path \(it covers 0.25 .. 0.55"):
        path.at(0.7)


def test_static_path_passing_a_load_factor_twice():
    """A path whose load factor goes up and down (as arc length past a limit point): each
    passage can be read."""
    _, _, path = cantilever_path([0.2, 0.4, 0.3])
    with pytest.warns(fm.FlexmbWarning):
        first = path.at(0.35)
    with pytest.warns(fm.FlexmbWarning):
        second = path.at(0.35, occurrence=1)
    assert first.steps == (0, 1) and second.steps == (1, 2)
    with pytest.raises(fm.ModelError, match="passes load factor 0.35 2 time"):
        path.at(0.35, occurrence=2)
