"""Error-controlled time steps (``integrate(..., dt=None, rtol=...)``, flexmb.integrators.step_control).

A linear oscillator (a point mass on a bar, omega = 20 rad/s) has the exact solution
x0 cos(omega t); the mid-point scheme's step-doubling estimate is O(dt^3), so the number of steps
grows as rtol^(-1/3) and the error falls with rtol. Simo's spin-up (Meijaard 1993, sec. 5.1) has a
slow start and a fast end: the steps follow the hub. A free spinning beam carries its axial modes
(2 sqrt(EA / rho_A) / l, far above 1 / dt) at round-off level only: they must not shrink the step.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from flexmb.integrators import TimeIntegrationError
from flexmb.integrators.time_stepping import ALL_SCHEMES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))
from spin_up_simo import PARAMETERS as SIMO  # noqa: E402

from flexmb.validation.spin_up import build, extreme, tip_deflection  # noqa: E402

OMEGA = 20.0          # rad/s, the oscillator's frequency
X0 = 0.01             # m, its initial displacement


def oscillator() -> tuple[fm.Assembly, int, np.ndarray]:
    """A 1 kg point mass on a bar of stiffness 400 N/m, moving along x only; u0 holds x0."""
    model = fm.Model(dim=2)
    a, b = model.add_node([0.0, 0.0]), model.add_node([1.0, 0.0])
    model.add_truss([[a, b]], EA=OMEGA**2)
    model.add_point_mass(b, 1.0)
    model.fix(a)
    model.fix(b, "uy")
    asm = fm.Assembly(model)
    u0 = np.zeros(asm.n_dof)
    u0[asm.dofs.index(b, "ux")] = X0
    return asm, asm.dofs.index(b, "ux"), u0


def oscillator_error(h: fm.TimeHistory, dof: int) -> float:
    t = np.array(h.t)
    return float(np.abs(h.u[:, dof] - X0 * np.cos(OMEGA * t)).max() / X0)


def test_steps_and_error_follow_rtol_on_an_oscillator():
    asm, dof, u0 = oscillator()
    runs = {rtol: fm.integrate(asm, t_end=1.0, rtol=rtol, u0=u0, progress=False) for rtol in (1e-3, 1e-4)}
    steps = {r: len(h.step_sizes) for r, h in runs.items()}
    errors = {r: oscillator_error(h, dof) for r, h in runs.items()}
    # the estimate is O(dt^3): ten times tighter, 10^(1/3) = 2.15 times the steps
    ratio = steps[1e-4] / steps[1e-3]
    assert 1.8 < ratio < 2.6, f"steps {steps}: ratio {ratio:.2f}, expected about 2.15"
    # a second-order scheme: the error falls as dt^2, 10^(2/3) = 4.6 times
    assert errors[1e-4] < errors[1e-3] / 3.0, f"errors {errors}"
    assert errors[1e-3] < 0.1, f"error at rtol 1e-3: {errors[1e-3]:.3g} of the amplitude"
    for h in runs.values():
        assert h.t[-1] == 1.0 and h.step_sizes.sum() == pytest.approx(1.0, rel=1e-12)
        assert h.meta["rtol"] in runs


@pytest.mark.parametrize("scheme", list(ALL_SCHEMES))
def test_every_scheme_runs_with_error_control(scheme):
    asm, dof, u0 = oscillator()
    h = fm.integrate(asm, t_end=1.0, rtol=1e-3, u0=u0, scheme=scheme, progress=False)
    fixed = fm.integrate(asm, 1.0 / len(h.step_sizes), 1.0, u0=u0, scheme=scheme, progress=False)
    # about as accurate as as many fixed steps: measured 0.97-1.1 times their error, and 3.1 times
    # for the fourth-order composed scheme, whose error grows fastest in the larger steps
    assert oscillator_error(h, dof) < 4.0 * oscillator_error(fixed, dof), scheme


def test_a_too_large_first_step_is_rejected_and_logged():
    asm, dof, u0 = oscillator()
    h = fm.integrate(asm, 0.1, 1.0, rtol=1e-3, u0=u0, progress=False)    # 2 rad per step
    rejected = [e for e in h.events if e.kind == "rejected"]
    assert rejected and rejected[0].at == 0.0 and "local error" in rejected[0].message
    assert h.step_sizes[0] < 0.05
    assert oscillator_error(h, dof) < 0.1


def test_spin_up_steps_follow_the_hub_and_meet_the_extreme():
    asm, nodes = build(SIMO, 4)
    h = fm.integrate(asm, t_end=20.0, rtol=1e-3, progress=False)
    t = np.array(h.t)
    steps = h.step_sizes
    mid = 0.5 * (t[:-1] + t[1:])
    slow, fast = steps[mid < 3.0].mean(), steps[mid > 16.0].mean()
    # the hub turns at 0.1-0.5 rad/s in the first 3 s and at 6 rad/s after 16 s
    assert slow > 3.0 * fast, f"mean steps {slow:.3g} s (t < 3 s) and {fast:.3g} s (t > 16 s)"
    d = tip_deflection(SIMO, t, h.positions()[:, nodes[-1]])
    assert abs(extreme(t, d)[1] / SIMO.converged - 1.0) < 1e-2


def test_flexible_four_bar_takes_fewer_steps_than_a_fixed_run_at_its_smallest_step():
    # the four-bar of examples/four_bar_flexible.py (8 cubic Beam2D, second-order strains, crank at 1 rev/s),
    # rigid start: the coupler's bending vibration varies the step (measured 902 steps, 0.62 of 0.1 s / dt_min)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    import four_bar_flexible as example

    model, _ = example.build()
    asm = fm.Assembly(model)
    u0, v0 = fm.consistent_initial_state(asm)
    rtol, t_end = 1e-4, 0.1
    h = fm.integrate(asm, t_end=t_end, rtol=rtol, u0=u0, v0=v0, progress=False)
    at_smallest = np.ceil(t_end / h.step_sizes.min())
    assert h.step_sizes.size < 0.9 * at_smallest, f"{h.step_sizes.size} steps, {at_smallest:.0f} at dt_min"
    # against fixed steps of half the smallest: the rocker's angle within rtol of its motion (measured 1.6e-8)
    rocker = asm.dofs.index(next(b for b in model.bodies if b.name == "rocker").node, "rz")
    n = int(np.ceil(2 * t_end / h.step_sizes.min()))
    fine = fm.integrate(asm, t_end / n, t_end, u0=u0, v0=v0, progress=False)
    turned = abs(fine.u[-1][rocker] - u0[rocker])
    assert abs(h.u[-1][rocker] - fine.u[-1][rocker]) < rtol * turned


def test_round_off_axial_modes_do_not_shrink_the_step():
    """A free planar beam (steel strip, 1 m, 4 elements) spinning at 2 rad/s: its axial modes reach
    2 sqrt(EA / rho_A) / l = 4.1e4 rad/s but carry round-off only; the step stays set by the spin."""
    model = fm.Model(dim=2)
    nodes = model.add_nodes(np.c_[np.linspace(0.0, 1.0, 5), np.zeros(5)])
    EA, rho_A = 210e9 * 1e-4, 7800 * 1e-4
    model.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=EA, EI=210e9 * 1e-4 * 1e-4 / 12, rho_A=rho_A,
                     rho_I=rho_A * 1e-4 / 12, name="strip")
    asm = fm.Assembly(model)
    spin = 2.0
    v0 = np.zeros(asm.n_dof)
    for k, x in zip(nodes, np.linspace(0.0, 1.0, 5)):
        v0[asm.dofs.index(int(k), "uy")] = spin * (x - 0.5)
        v0[asm.dofs.index(int(k), "rz")] = spin
    h = fm.integrate(asm, t_end=1.0, rtol=1e-4, v0=v0, progress=False)
    omega_axial = 2.0 * np.sqrt(EA / rho_A) / 0.25
    # after the first steps (from 1e-3 of the run, doubling) none resolves the axial modes
    settled = h.step_sizes[10:]
    assert settled.min() > 100.0 / omega_axial, f"smallest step {settled.min():.3g} s"
    assert len(h.step_sizes) < 400
    # the rigid spin is kept: the end rotation of the strip is spin * t_end
    rz = h.u[-1, asm.dofs.index(int(nodes[0]), "rz")]
    assert rz == pytest.approx(spin * 1.0, rel=1e-3)


def test_fixed_steps_stay_the_default_with_dt():
    asm, dof, u0 = oscillator()
    h = fm.integrate(asm, 0.01, 0.5, u0=u0, progress=False)
    assert np.all(h.step_sizes == 0.01) and len(h.step_sizes) == 50
    assert "rtol" not in h.meta and np.allclose(np.diff(h.t), 0.01)
    # without dt, the steps are error-controlled at rtol 1e-3
    assert fm.integrate(asm, t_end=0.5, u0=u0, progress=False).meta["rtol"] == 1e-3


def test_output_every_and_result_file(tmp_path):
    asm, dof, u0 = oscillator()
    h = fm.integrate(asm, t_end=0.5, rtol=1e-3, u0=u0, output_every=3, progress=False,
                     save_to=tmp_path / "run.h5")
    n = len(h.step_sizes)
    assert h.n_steps == 1 + n // 3 + (n % 3 != 0)
    assert h.t[-1] == 0.5
    back = fm.load_result(tmp_path / "run.h5")
    np.testing.assert_array_equal(back.t, h.t)
    assert back.meta["rtol"] == 1e-3
    np.testing.assert_allclose(back.step_sizes, np.diff(h.t))
    # a fixed-step restart cannot continue error-controlled steps
    with pytest.raises(fm.ModelError, match="took error-controlled steps .rtol = 0.001.; a restart continues fixed"):
        fm.integrate(asm, h.dt, 1.0, restart_from=tmp_path / "run.h5", progress=False)


def test_bad_arguments_are_refused():
    asm, dof, u0 = oscillator()
    with pytest.raises(fm.ModelError, match="t_end .* is required"):
        fm.integrate(asm, 0.01)
    with pytest.raises(fm.ModelError, match="rtol"):
        fm.integrate(asm, t_end=1.0, rtol=0.5)
    with pytest.raises(fm.ModelError, match="dt_min = 0.1 s is larger than dt_max = 0.01 s"):
        fm.integrate(asm, t_end=1.0, dt_min=0.1, dt_max=0.01)
    with pytest.raises(fm.ModelError, match="dt_min bounds error-controlled steps"):
        fm.integrate(asm, 0.01, 1.0, dt_min=1e-4)
    with pytest.raises(fm.ModelError, match="first step dt = 0.5 s must lie within"):
        fm.integrate(asm, 0.5, 1.0, rtol=1e-3, dt_max=0.1)
    with pytest.raises(fm.ModelError, match="restart continues fixed steps only"):
        fm.integrate(asm, t_end=1.0, rtol=1e-3, restart_from="run.h5")


def test_step_limits_end_the_run_with_advice():
    asm, dof, u0 = oscillator()
    with pytest.raises(TimeIntegrationError, match=r"dt_min = 0\.02 s") as info:
        fm.integrate(asm, t_end=1.0, rtol=1e-4, dt_min=0.02, u0=u0, progress=False)
    assert "remedies:" in str(info.value) and info.value.history.n_steps >= 1
    with pytest.raises(TimeIntegrationError, match="10 steps .max_steps. reached"):
        fm.integrate(asm, t_end=1.0, rtol=1e-3, max_steps=10, u0=u0, progress=False)
