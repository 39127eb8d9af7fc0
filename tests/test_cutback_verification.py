"""A cut-back must not change the solution: its half steps are checked against the full step.

Regression (2026-11-23): Simo's spin-up (Meijaard 1993, sec. 5.1) with 2 cubic-mass elements at
dt = 0.04 s needed 202 cut-backs from t = 14.04 s on and reported success with an extreme tip
deflection of -8.62 m instead of -0.574 m: the half steps carried on along a motion into which
the hub drive kept pumping energy. Now the first cut-back whose half steps and full step take in
different work stops the run. (The mid-point scheme itself now runs that spin-up at any step up
to 0.16 s, see tests/test_cubic_mass_director.py; the trapezoidal Newmark baseline still fails
there, so it serves as the case of a step that does not resolve the motion.)
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from flexmb.integrators.time_stepping import BranchChangeError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))
from spin_up_simo import PARAMETERS as SIMO  # noqa: E402

from flexmb.validation.spin_up import build, tip_deflection  # noqa: E402


def test_spin_up_at_a_too_large_step_stops_with_a_branch_change():
    asm, nodes = build(SIMO, 2)
    with pytest.raises(BranchChangeError, match=r"branch change detected .* t = [\d.]+ \.\. [\d.]+ s") as info:
        fm.integrate(asm, 0.04, 20.0, scheme="newmark", progress=False)
    start = float(re.search(r"step t = ([\d.]+) \.\.", str(info.value)).group(1))
    assert 11.0 < start < 12.0, "Newmark blows up at t ~ 11.4 s in this spin-up"
    h = info.value.history
    # the history ends with the last output step before the step that needed the cut-back
    assert start - 0.04 - 1e-9 < h.t[-1] <= start + 1e-9
    assert h.events[-1].kind == "error" and "branch change" in h.events[-1].message
    # what was computed before stays: the extreme of the spin-up phase (t ~ 6.8 s) is within 2 %
    t = np.array(h.t)
    d = tip_deflection(SIMO, t, h.positions()[:, nodes[-1]])
    assert abs(d[t < 10.0].min() / SIMO.converged - 1.0) < 2e-2


def test_warn_carries_on_and_logs_the_branch_change():
    asm, _ = build(SIMO, 2)
    with pytest.warns(fm.FlexmbWarning, match="branch change detected"):
        h = fm.integrate(asm, 0.04, 11.8, scheme="newmark", progress=False, cutback_check="warn")
    warnings = [e for e in h.events if e.kind == "warning" and "branch change" in e.message]
    assert warnings and 11.0 < warnings[0].at < 11.8
    assert h.t[-1] == pytest.approx(11.8)
    quiet = fm.integrate(asm, 0.04, 11.8, scheme="newmark", progress=False, cutback_check="off")
    assert quiet.cutbacks == h.cutbacks and not [e for e in quiet.events if e.kind == "warning"]
    with pytest.raises(fm.ModelError, match="cutback_check must be one of 'error', 'warn', 'off', got 'yes'"):
        fm.integrate(asm, 0.04, 11.8, progress=False, cutback_check="yes")


def test_conservative_large_step_cut_backs_are_confirmed():
    """A free beam spinning at about 1 rad of chord rotation per step (dt = 0.2 s) needs cut-backs
    (7, the first at t = 1.6 s; at dt = 0.1 s the rigid-motion predictor needs none): its half
    steps and the full step resolve the bending differently, but in a closed conservative system
    both keep K + U exactly, so every cut-back is confirmed and the run ends normally with the
    energy conserved."""
    m = fm.Model(dim=2)
    x = np.linspace(0.0, 1.0, 5)
    nodes = m.add_nodes(np.c_[x, np.zeros_like(x)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=10.0, rho_A=1.0, rho_I=1e-3)
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    for node, s in zip(nodes, x - 0.5):
        v0[asm.dofs.index(node, "uy")] = 5.0 * s + np.cos(2.0 * np.pi * s)
        v0[asm.dofs.index(node, "rz")] = 5.0
    h = fm.integrate(asm, 0.2, 10.0, v0=v0, newton=fm.NewtonSettings(residual_tol=1e-12), progress=False)
    assert h.cutbacks > 0, "the test needs a cut-back"
    assert not [e for e in h.events if e.kind in ("warning", "error")], h.format_log()
    assert h.energy_error().max() < 1e-9
