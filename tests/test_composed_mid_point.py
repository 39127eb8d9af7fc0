"""Tests of the composed mid-point scheme (``scheme="composed-mid-point"``, Suzuki's five
sub-steps of the mid-point step): the mid-point step is symmetric, the composition is fourth
order (measured by refinement, with and without joints), it conserves what each sub-step
conserves, it asks drives and loads only inside the step, a linear mode turns by the documented
phase (and so the documented numerical resonance at omega dt = 9.50), and cut-backs and
restarts treat a composed step as one step.
"""
from __future__ import annotations

import numpy as np
import pytest
from models import pendulum_chain, spinning_bar

import flexmb as fm
from flexmb.integrators import NewtonSettings
from flexmb.integrators.schemes import ComposedMidPoint, MidPoint
from flexmb.integrators.time_stepping import _step
from flexmb.results import ModelLayout, TimeHistory
from flexmb.validation.spin_up import SpinUpBeam
from flexmb.validation.spin_up import build as build_spin_up

TIGHT = NewtonSettings(residual_tol=1e-13)
P = 1.0 / (4.0 - 4.0 ** (1.0 / 3.0))


def hinged_pendulum(joint: bool) -> fm.Assembly:
    """Two soft bars (EA = 1e4 N: the axial vibration is resolved) with 1 kg at each further
    node, horizontal under gravity; the first node is fixed, or held by a revolute joint (and
    carries 1 kg)."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    m.add_truss(np.c_[nodes[:-1], nodes[1:]], EA=1e4)
    for node in nodes[1:]:
        m.add_point_mass(node, 1.0)
    if joint:
        m.add_point_mass(nodes[0], 1.0)
        m.add_joint("revolute", None, nodes[0])
    else:
        m.fix(nodes[0])
    m.set_gravity([0.0, -9.81])
    return fm.Assembly(m)


def spin_up_beam() -> fm.Assembly:
    """Simo's spin-up beam (Meijaard 1993, sec. 5.1) with 2 cubic-mass elements: a drive, the
    director form of the cubic mass."""
    beam = SpinUpBeam(case="test", length=10.0, EA=2.8e7, EI=1.4e4, rho_A=1.2, rho_I=6e-4, omega_s=6.0,
                      t_s=15.0, reference={}, converged=np.nan, figure_source="")
    return build_spin_up(beam, 2)[0]


def moving_state(asm: fm.Assembly, v0: np.ndarray | None, t: float, dt: float):
    """The mid-point scheme and its state after a run to t (a generic moving state)."""
    h = fm.integrate(asm, dt, dt, v0=v0)                 # the initial state, prescribed DOFs set
    scheme = MidPoint(asm)
    state = scheme.initial_state(0.0, h.u[0], h.v[0])
    history = TimeHistory("mid-point", dt, ModelLayout.from_assembly(asm))
    for _ in range(round(t / dt)):
        state, _ = _step(scheme, state, dt, TIGHT, history, False)
    return scheme, state


def symmetric_models():
    chain = pendulum_chain(3)
    bar, bar_v0 = spinning_bar()
    return {"2D truss chain": (chain, None, 0.02, 5), "revolute joint": (hinged_pendulum(True), None, 0.02, 5),
            "3D spinning beam": (bar, bar_v0, 0.01, 5), "driven cubic-mass beam": (spin_up_beam(), None, 0.1, 60)}


@pytest.mark.parametrize("name", list(symmetric_models()))
def test_the_mid_point_step_is_symmetric(name):
    """A step of dt followed by a step of -dt returns to the start (the property that makes the
    composition fourth order): displacements, velocities (rotations: spatial angular velocity)
    and the joints' multipliers to 1e-9 of their size (measured 4e-17 .. 5e-15)."""
    asm, v0, dt, n_steps = symmetric_models()[name]
    scheme, s0 = moving_state(asm, v0, n_steps * dt, dt)
    history = TimeHistory("mid-point", dt, ModelLayout.from_assembly(asm))
    s1, _ = _step(scheme, s0, dt, TIGHT, history, False)
    back, _ = _step(scheme, s1, -dt, TIGHT, history, False)
    assert back.t == pytest.approx(s0.t, abs=1e-12)
    moved = np.abs(s1.u - s0.u).max()
    assert moved > 1e-3, f"{name}: the step hardly moves ({moved:.2e})"
    du = np.abs(back.u - s0.u).max() / np.abs(s0.u).max()
    dv = np.abs(back.v - s0.v).max() / np.abs(s0.v).max()
    assert du < 1e-9 and dv < 1e-9, f"{name}: back at u to {du:.2e}, v to {dv:.2e}"
    if s0.lam.size:
        dl = np.abs(s1.lam - back.lam).max()
        assert np.abs(back.lam).max() > 0
        # the multipliers belong to a step, not a state: -dt's equal dt's (same step, reversed)
        assert dl < 1e-9 * np.abs(s1.lam).max(), f"{name}: multipliers of the reversed step differ by {dl:.2e}"


@pytest.mark.parametrize("joint", [False, True])
def test_fourth_order_by_refinement(joint):
    """The soft pendulum falling from the horizontal, the tip at t = 0.6 s against the composed
    scheme at dt = 1.25 ms: fitted order over dt = 40, 20, 10 ms within 0.5 of 4 (measured
    4.20, fixed or held by the joint); the mid-point scheme's is within 0.5 of 2 on the same
    ladder (measured 1.98) and its error at 10 ms is over 100x the composed scheme's (7500x)."""
    asm = hinged_pendulum(joint)
    tip = lambda h: np.array([h.dof(2, "ux")[-1], h.dof(2, "uy")[-1]])
    reference = tip(fm.integrate(asm, 0.00125, 0.6, scheme="composed-mid-point", newton=TIGHT))
    steps = np.array([0.04, 0.02, 0.01])
    errors = {scheme: [np.linalg.norm(tip(fm.integrate(asm, dt, 0.6, scheme=scheme, newton=TIGHT)) - reference)
                       for dt in steps] for scheme in ("composed-mid-point", "mid-point")}
    for scheme, order in (("composed-mid-point", 4.0), ("mid-point", 2.0)):
        slope = np.polyfit(np.log(steps), np.log(errors[scheme]), 1)[0]
        assert abs(slope - order) < 0.5, f"{scheme} (joint {joint}): order {slope:.2f}, expected {order}"
    assert errors["mid-point"][-1] > 100 * errors["composed-mid-point"][-1]


def test_energy_and_momenta_are_conserved_at_large_steps():
    """What every sub-step conserves, the composed step conserves: the tumbling 3D beam at
    dt = 0.02 s (sub-steps of up to 0.66 dt): energy to 1e-9 of K(0) (measured 2e-14) and
    linear momentum to 1e-10; the soft pendulum under gravity on a revolute joint: energy to
    1e-9 (measured 2e-13)."""
    asm, v0 = spinning_bar()
    h = fm.integrate(asm, 0.02, 1.0, scheme="composed-mid-point", v0=v0, newton=TIGHT)
    assert h.energy_error().max() < 1e-9
    tr = asm.dofs.translations()
    P = np.array([asm.mass_times(v)[tr].reshape(-1, 3).sum(axis=0) for v in h.v])
    # the spin is about the centre of mass (P = 0): the scale is the momentum of the motion
    assert np.abs(P - P[0]).max() < 1e-10 * np.abs(asm.mass_times(v0)[tr]).sum()
    pendulum = hinged_pendulum(True)
    h = fm.integrate(pendulum, 0.05, 2.0, scheme="composed-mid-point", newton=TIGHT)
    assert np.max(h.kinetic) > 1.0
    drift = np.abs(h.total - h.total[0]).max() / np.max(h.kinetic)
    assert drift < 1e-9, f"pendulum with a joint: energy drift {drift:.2e}"
    assert np.max(h.constraint_residual) < 1e-9


def test_drives_and_loads_are_asked_only_inside_the_step():
    """The sub-steps end at 0.41, 0.83, 0.17, 0.59 and 1 of the step (the middle one runs
    backwards): a load and a drive that refuse any time outside [0, t_end] (but for the 1e-6 s
    of the drive's central difference for its velocity at t0) are never asked for one, and the
    load is asked at those fractions of each step."""
    asked = []

    def load(t: float) -> float:
        assert 0.0 <= t <= 0.5 + 1e-12, f"load asked at t = {t}"
        asked.append(t)
        return 10.0 * np.sin(4.0 * t)

    def drive(t: float) -> float:
        assert -1e-5 <= t <= 0.5 + 1e-5, f"drive asked at t = {t}"
        return 0.01 * t**2

    m = fm.Model(dim=2)
    a, b = m.add_node([0.0, 0.0]), m.add_node([1.0, 0.0])
    m.add_truss([[a, b]], EA=1e4)
    m.add_point_mass(b, 1.0)
    m.fix(a, "uy")
    m.prescribe(a, "ux", drive)
    m.add_load(b, "uy", load)
    h = fm.integrate(fm.Assembly(m), 0.1, 0.5, scheme="composed-mid-point")
    assert h.t[-1] == pytest.approx(0.5)
    fractions = {round((t % 0.1) / 0.1, 6) % 1.0 for t in asked}
    expected = {round(f, 6) % 1.0 for f in np.cumsum([P, P, 1 - 4 * P, P, P])}
    assert expected <= fractions, f"sub-step times at {sorted(fractions)} of the step, expected {sorted(expected)}"


@pytest.mark.parametrize("z", [0.5, 1.0, 3.0, 9.495490015861888, 20.0])
def test_a_linear_mode_turns_by_the_documented_phase(z):
    """A mass on a spring (omega = 2 pi) over one composed step of dt = z / omega: the state
    (u, v / omega) turns by Theta = 8 atan(p z / 2) - 2 atan((4p - 1) z / 2) (ComposedMidPoint's
    docstring) to 1e-9 rad; at z = 9.4955 Theta = 2 pi: the mode stands still (the numerical
    resonance)."""
    omega = 2.0 * np.pi
    m = fm.Model(dim=2)
    a, b = m.add_node([0.0, 0.0]), m.add_node([1.0, 0.0])
    m.add_truss([[a, b]], EA=omega**2)                                   # k = omega^2 for 1 kg, L = 1 m
    m.add_point_mass(b, 1.0)
    m.fix(a)
    m.fix(b, "uy")
    asm = fm.Assembly(m)
    u0 = np.zeros(asm.n_dof)
    k = asm.dofs.index(b, "ux")
    u0[k] = 1e-3
    dt = z / omega
    h = fm.integrate(asm, dt, dt, scheme="composed-mid-point", u0=u0, newton=TIGHT)
    turned = np.arctan2(-h.v[-1][k] / omega, h.u[-1][k])
    theta = 8.0 * np.arctan(P * z / 2.0) - 2.0 * np.arctan((4.0 * P - 1.0) * z / 2.0)
    wrapped = (turned - theta + np.pi) % (2.0 * np.pi) - np.pi
    assert abs(wrapped) < 1e-9, f"z = {z}: turned {turned:.12f}, Theta = {theta:.12f}"
    if z > 9.4 and z < 9.6:
        assert abs(h.u[-1][k] - u0[k]) < 1e-12 and abs(h.v[-1][k]) < 1e-9


def test_a_failing_composed_step_is_cut_back_as_one_step():
    """Simo's spin-up (2 elements) at dt = 0.5 s: composed steps whose sub-steps do not converge
    are halved as a whole (two composed half steps, confirmed by the branch check) and the run
    ends at t_end with its energy balance exact to 1e-8 of the largest K (measured: 29
    cut-backs, 1e-10); the history is the composed scheme's."""
    asm = spin_up_beam()
    h = fm.integrate(asm, 0.5, 20.0, scheme="composed-mid-point")
    assert h.cutbacks > 0
    assert h.t[-1] == pytest.approx(20.0)
    assert h.scheme == "composed-mid-point"
    drift = np.abs(h.total - h.total[0]).max() / np.max(h.kinetic)
    assert drift < 1e-8, f"energy balance (with the drive's work) off by {drift:.2e} of the largest K"


def test_the_scheme_is_registered_with_its_stages():
    """Suzuki's fractions add up to one and cancel the third-order error (sum c^3 = 0)."""
    c = np.array(ComposedMidPoint.stages)
    assert c.size == 5 and abs(c.sum() - 1.0) < 1e-15 and abs((c**3).sum()) < 1e-15
    assert MidPoint.stages == (1.0,)
