"""A failed step names the likely causes it can see and flexmb's remedies (flexmb.integrators.advice).

Each cause is triggered by a model that has it and is absent from one that has not: a spin-up
hub turning 3.7 rad per step (Simo's beam, Meijaard 1993, sec. 5.1, at dt = 2 s), undamped axial
modes at omega dt = 77 (the same beam in trapezoidal Newmark at dt = 0.04 s, which ends in a branch
change), and a flexible strip whose start velocities stretch it (a rigid spin does not).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from flexmb.integrators import TimeIntegrationError
from flexmb.integrators.advice import diagnose
from flexmb.integrators.schemes import State
from flexmb.integrators.time_stepping import BranchChangeError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))
from spin_up_simo import PARAMETERS as SIMO  # noqa: E402

from flexmb.validation.spin_up import build  # noqa: E402


def test_a_drive_too_fast_for_the_step_is_named():
    asm, _ = build(SIMO, 2)
    with pytest.raises(TimeIntegrationError) as info:
        fm.integrate(asm, 2.0, 20.0, progress=False, max_cutbacks=0)
    text = str(info.value)
    # the hub's rate at the last complete state (t = 6 s) is 1.84 rad/s: 3.7 rad per step of 2 s
    assert "drive too fast for the step: prescribed node 0 rz turns 3.68 rad per step" in text
    assert "integrate(asm, t_end=..., dt=None, rtol=1e-3)" in text
    assert "reduce dt" in text and "fm.consistent_initial_state(asm)" in text
    assert info.value.history.events[-1].kind == "error" and "drive too fast" in info.value.history.events[-1].message


def test_undamped_axial_modes_are_named_in_a_branch_change():
    asm, _ = build(SIMO, 2)
    with pytest.raises(BranchChangeError) as info:
        fm.integrate(asm, 0.04, 20.0, scheme="newmark", progress=False)
    text = str(info.value)
    # 2 sqrt(EA / rho_A) / l = 2 sqrt(2.8e7 / 1.2) / 5 = 1932 rad/s: 77 rad per step
    assert "undamped high-frequency axial modes: group 'beam' reaches 1.93e+03 rad/s" in text
    assert "omega dt = 77.3" in text and "scheme='generalized-alpha'" in text and "Rayleigh" in text


def test_dissipative_schemes_and_resolved_steps_have_no_frequency_cause():
    asm, _ = build(SIMO, 2)
    state = State(0.0, np.zeros(asm.n_dof), np.zeros(asm.n_dof), np.zeros(asm.n_dof), np.zeros(asm.n_dof))
    assert "undamped high-frequency" in diagnose(asm, "mid-point", state, state, 0.04)
    assert "undamped high-frequency" not in diagnose(asm, "generalized-alpha", state, state, 0.04)
    assert "undamped high-frequency" not in diagnose(asm, "mid-point", state, state, 1e-4)   # omega dt = 0.19


def strip() -> tuple[fm.Assembly, np.ndarray, np.ndarray]:
    """A free steel strip of 4 planar beams along x from 0 to 1 m; returns the assembly, its nodes
    and their x."""
    model = fm.Model(dim=2)
    x = np.linspace(0.0, 1.0, 5)
    nodes = model.add_nodes(np.c_[x, np.zeros(5)])
    model.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=2.1e7, EI=1.75, rho_A=0.78, rho_I=6.5e-6, name="strip")
    return fm.Assembly(model), nodes, x


def test_a_start_that_stretches_the_flexible_parts_is_named():
    asm, nodes, x = strip()
    rigid, stretched = np.zeros(asm.n_dof), np.zeros(asm.n_dof)
    for k, xk in zip(nodes, x):
        k = int(k)
        # a rigid motion: translation plus a spin of 3 rad/s about the strip's middle
        rigid[asm.dofs.index(k, "ux")] = 0.5
        rigid[asm.dofs.index(k, "uy")] = 3.0 * (xk - 0.5)
        rigid[asm.dofs.index(k, "rz")] = 3.0
        # the same with the last node pulled away at 0.01 m/s
        stretched[asm.dofs.index(k, "ux")] = 0.5 + (0.01 if k == nodes[-1] else 0.0)
        stretched[asm.dofs.index(k, "uy")] = 3.0 * (xk - 0.5)
        stretched[asm.dofs.index(k, "rz")] = 3.0
    zero = np.zeros(asm.n_dof)

    def advice(v: np.ndarray) -> str:
        start = State(0.0, zero.copy(), v, zero.copy(), zero.copy())
        return diagnose(asm, "mid-point", start, start, 1e-6)

    assert "inconsistent start" not in advice(rigid)
    text = advice(stretched)
    # impedance sqrt(EA rho_A) / 2 = sqrt(2.1e7 * 0.78) / 2 = 2024 N s/m times 0.01 m/s
    assert "inconsistent start: element 3 of group 'strip' stretches at 0.01 m/s" in text
    assert "forces of about 20.2 N" in text and "(rigid start)" in text


def test_a_revolute_drive_too_fast_for_the_step_is_named():
    model = fm.Model(dim=2)
    arm = model.add_rigid_body([0.5, 0.0], 1.0, 1.0 / 12, name="arm")
    model.add_joint("revolute", None, arm, at=[0.0, 0.0], drive=lambda t: 10.0 * t, name="motor")
    asm = fm.Assembly(model)
    zero = np.zeros(asm.n_dof)
    state = State(0.0, zero, zero, zero, zero)
    assert "joint 'motor' turns 1 rad per step (10 rad/s" in diagnose(asm, "mid-point", state, state, 0.1)
    assert "drive too fast" not in diagnose(asm, "mid-point", state, state, 0.01)     # 0.1 rad per step
