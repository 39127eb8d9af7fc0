"""The rigid-motion predictor of a step (:meth:`flexmb.integrators.schemes.Scheme.predict`) on
planar models, compiled (:mod:`flexmb.compiled.predictor`): a node with a rotation that turns
rigidly about the origin lands exactly on its turned position, for small (series) and large
turns, and nodes without rotations extrapolate with the last acceleration."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.integrators.schemes import MidPoint


def _frame_and_truss() -> fm.Assembly:
    model = fm.Model(dim=2)
    beam = model.add_nodes([[1.0, 0.5], [2.0, 0.7], [3.0, 0.4]])
    model.add_beam2d([[beam[0], beam[1]], [beam[1], beam[2]]], EA=1e6, EI=1e3, rho_A=1.0)
    bar = model.add_nodes([[0.0, 2.0], [1.5, 3.0]])
    model.add_truss([[bar[0], bar[1]]], EA=1e5, rho_A=1.0)
    return fm.Assembly(model)


@pytest.mark.parametrize("turn", [3e-6, 0.3, 2.5])
def test_rigid_turn_about_the_origin_is_predicted_exactly(turn):
    asm = _frame_and_truss()
    dt, omega = 0.01, turn / 0.01                               # the step turns by ``turn`` rad
    rng = np.random.default_rng(3)
    u = np.zeros(asm.n_dof)
    u[asm.dofs.first[:3] + 2] = 0.2                             # any node rotation: a rigid body's
    x = asm.model.coordinates + rng.normal(0.0, 0.1, asm.model.coordinates.shape)   # the current positions
    first = asm.dofs.first
    u[first[:, None] + np.arange(2)] = x - asm.model.coordinates
    v = np.zeros(asm.n_dof)
    v[first[:, None] + np.arange(2)] = omega * np.c_[-x[:, 1], x[:, 0]]
    v[first[:3] + 2] = omega
    a = rng.normal(size=asm.n_dof)                              # extrapolated at the truss nodes only
    scheme = MidPoint(asm)
    s = scheme.initial_state(0.0, u, v)
    s.a = a
    u1 = scheme.predict(s, dt)
    c, s_ = np.cos(turn), np.sin(turn)
    turned = x[:3] @ np.array([[c, s_], [-s_, c]])
    nodes_with_rotation = asm.model.coordinates[:3] + u1[first[:3, None] + np.arange(2)]
    assert np.abs(nodes_with_rotation - turned).max() < 1e-14 * (1.0 + turn)
    assert np.allclose(u1[first[:3] + 2], u[first[:3] + 2] + turn, rtol=0.0, atol=1e-15)
    bar = (first[3:, None] + np.arange(2)).ravel()
    assert np.array_equal(u1[bar], u[bar] + (dt * v[bar] + 0.5 * dt**2 * a[bar]))
