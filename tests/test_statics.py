"""Load-control statics against closed-form equilibria, and global equilibrium of the reactions.

Closed forms (co-rotational bar, N = EA (l - l0) / l0, exact for any rotation):

* Bar along its axis: u = F l0 / EA.
* Symmetric two-bar (von Mises) truss, supports at (+-a, 0), apex at (0, h), vertical load P
  down: with apex deflection w, l = sqrt(a^2 + (h - w)^2) and apex equilibrium
  ``P(w) = 2 EA (l0 - l) / l0 * (h - w) / l``, solved for w on the rising branch.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar

import flexmb as fm
from models import truss_bays

A_HALF, RISE, EA_VM = 1.0, 0.5, 1e4


def von_mises_load(w: float) -> float:
    """Apex load P (N, downward) in equilibrium with the apex deflection w (m, downward)."""
    l0 = np.hypot(A_HALF, RISE)
    l = np.hypot(A_HALF, RISE - w)
    return 2.0 * EA_VM * (l0 - l) / l0 * (RISE - w) / l


def von_mises_deflection(P: float) -> float:
    """Apex deflection (m) for the load P (N) below the limit load, from the closed form."""
    w_limit = minimize_scalar(lambda w: -von_mises_load(w), bounds=(0.0, RISE), method="bounded").x
    return brentq(lambda w: von_mises_load(w) - P, 0.0, w_limit, xtol=1e-15, rtol=1e-15)


def von_mises_model(load) -> tuple[fm.Model, int]:
    m = fm.Model(dim=2)
    left, right, apex = m.add_node([-A_HALF, 0.0]), m.add_node([A_HALF, 0.0]), m.add_node([0.0, RISE])
    m.add_truss([[left, apex], [right, apex]], EA=EA_VM)
    m.fix(left)
    m.fix(right)
    m.add_load(apex, "uy", load)
    return m, apex


def test_limit_load_of_closed_form_is_above_the_test_loads():
    w_limit = minimize_scalar(lambda w: -von_mises_load(w), bounds=(0.0, RISE), method="bounded").x
    assert von_mises_load(w_limit) > 200.0, f"limit load {von_mises_load(w_limit):.1f} N below the test load"


def test_von_mises_truss_matches_closed_form():
    P = 150.0
    m, apex = von_mises_model(-P)
    asm = fm.Assembly(m)
    path = fm.load_control(asm, 6)
    iy, ix = asm.dofs.index(apex, "uy"), asm.dofs.index(apex, "ux")
    for lam, u in zip(path.load_factors, path.u):
        w_exact = von_mises_deflection(lam * P)
        w = -u[iy]
        assert abs(w - w_exact) <= 1e-10 * w_exact, \
            f"lam = {lam:.3f}: apex deflection {w:.12g} m, closed form {w_exact:.12g} m (off by {w - w_exact:.3e})"
        assert abs(u[ix]) <= 1e-12, f"lam = {lam:.3f}: symmetric truss moved sideways by {u[ix]:.3e} m"
    # geometric nonlinearity is substantial: linear theory would be far off
    w = -path.u[-1][iy]
    k_lin = 2.0 * EA_VM / np.hypot(A_HALF, RISE) * (RISE / np.hypot(A_HALF, RISE)) ** 2
    assert w > 1.1 * P / k_lin, f"deflection {w:.4f} m is within 10 % of linear {P / k_lin:.4f} m"


def test_von_mises_reactions_match_closed_form():
    P = 150.0
    m, apex = von_mises_model(-P)
    asm = fm.Assembly(m)
    path = fm.load_control(asm, 3)
    w = von_mises_deflection(P)
    l0, l = np.hypot(A_HALF, RISE), np.hypot(A_HALF, RISE - w)
    N = EA_VM * (l - l0) / l0                                          # compression < 0
    R = path.reactions[-1]
    # reaction = force of the support on the structure = q at the support node (no load there);
    # left bar: q_left = -N (a, h - w) / l, i.e. pushed inwards and upwards by the support
    expected = {(0, "ux"): -N * A_HALF / l, (0, "uy"): P / 2.0, (1, "ux"): N * A_HALF / l, (1, "uy"): P / 2.0}
    for (node, dof), value in expected.items():
        got = R[asm.dofs.index(node, dof)]
        assert abs(got - value) <= 1e-9 * P, f"reaction node {node} {dof}: {got:.10g} N, expected {value:.10g} N"


def truss_cantilever() -> fm.Model:
    """Plane truss cantilever (4 square bays of 1 m) under an oblique tip load and a mid load."""
    m, bottom, top = truss_bays(4, EA=1e5, rho_A=2.0)
    m.fix(bottom[0])
    m.fix(top[0], "ux")
    m.prescribe(top[0], "uy", 0.05)                      # the support itself moves (scaled by lam)
    m.add_load(top[-1], "uy", -3e3)
    m.add_load(top[-1], "ux", 1e3)
    m.add_load(bottom[2], "ux", lambda lam: -500.0 * np.sin(np.pi * lam))
    m.set_gravity([0.0, -9.81])
    return m


def test_reactions_balance_applied_loads():
    """Global equilibrium in the deformed configuration: sum of forces and of moments vanish."""
    asm = fm.Assembly(truss_cantilever())
    path = fm.load_control(asm, [0.2, 0.5, 0.8, 1.0])
    T = asm.dofs.translations()                                         # (n_nodes, 2)
    for lam, u, R in zip(path.load_factors, path.u, path.reactions):
        assert np.all(R[asm.dofs.free] == 0.0), "reactions must be zero at free DOFs"
        total = asm.external_force(lam, statics=True) + R               # (n_dof,)
        F = total[T]                                                    # (n_nodes, 2)
        x = asm.positions(u)
        scale = np.abs(asm.external_force(lam, statics=True)).sum()
        force = F.sum(axis=0)
        moment = np.sum(x[:, 0] * F[:, 1] - x[:, 1] * F[:, 0])
        assert np.all(np.abs(force) <= 1e-9 * scale), \
            f"lam = {lam}: loads + reactions sum to {force} N (scale {scale:.3g} N)"
        assert abs(moment) <= 1e-9 * scale * 4.0, f"lam = {lam}: moment of loads + reactions {moment:.3e} N m"
    tip = np.abs(path.u[-1]).max()
    assert tip > 0.1, f"largest displacement {tip:.3g} m: the test is not in the nonlinear range"


def axial_bar() -> tuple[fm.Assembly, int, int]:
    """Bar of 2 m along x; left end ux prescribed as a function, right end on a roller."""
    m = fm.Model(dim=2)
    left, right = m.add_node([0.0, 0.0]), m.add_node([2.0, 0.0])
    m.add_truss([left, right], EA=1e5)
    m.prescribe(left, "ux", lambda lam: 0.01 * lam**2)
    m.fix(left, "uy")
    m.fix(right, "uy")
    m.add_load(right, "ux", 500.0)                                      # constant: scaled by lam
    m.add_load(right, "ux", lambda lam: 300.0 * np.sin(np.pi * lam))    # function: taken as is
    asm = fm.Assembly(m)
    return asm, asm.dofs.index(left, "ux"), asm.dofs.index(right, "ux")


def test_functions_of_load_factor_for_loads_and_prescribed_values():
    asm, i_left, i_right = axial_bar()
    lams = [0.25, 0.5, 0.75, 1.0]
    path = fm.load_control(asm, lams)
    assert np.allclose(path.load_factors, lams)
    for lam, u, R in zip(path.load_factors, path.u, path.reactions):
        F = 500.0 * lam + 300.0 * np.sin(np.pi * lam)
        expected = 0.01 * lam**2 + F * 2.0 / 1e5
        assert u[i_left] == 0.01 * lam**2, f"lam = {lam}: prescribed ux {u[i_left]} != {0.01 * lam**2}"
        assert abs(u[i_right] - expected) <= 1e-12 * abs(expected), \
            f"lam = {lam}: tip ux {u[i_right]:.15g} m, closed form {expected:.15g} m"
        assert abs(R[i_left] + F) <= 1e-9 * F, f"lam = {lam}: support reaction {R[i_left]:.6g} N, expected {-F:.6g} N"


def test_callable_load_on_nonlinear_truss():
    P_max = 180.0
    m, apex = von_mises_model(lambda lam: -P_max * lam**2)
    asm = fm.Assembly(m)
    path = fm.load_control(asm, 4)
    for lam, u in zip(path.load_factors, path.u):
        w_exact = von_mises_deflection(P_max * lam**2)
        w = -u[asm.dofs.index(apex, "uy")]
        assert abs(w - w_exact) <= 1e-10 * w_exact, \
            f"lam = {lam}: deflection {w:.12g} m, closed form {w_exact:.12g} m (off by {w - w_exact:.3e})"


def test_gravity_is_scaled_by_load_factor():
    """Hanging bar (L = 2 m, EA = 1e5 N, 3 kg/m lumped) with a 5 kg tip mass: exact stretch."""
    m = fm.Model(dim=2)
    top, bottom = m.add_node([0.0, 0.0]), m.add_node([0.0, -2.0])
    m.add_truss([top, bottom], EA=1e5, rho_A=3.0)
    m.add_point_mass(bottom, 5.0)
    m.fix(top)
    m.fix(bottom, "ux")                     # without tension the hanging bar is a mechanism at u = 0
    m.set_gravity([0.0, -9.81])
    asm = fm.Assembly(m)
    path = fm.load_control(asm, [0.5, 1.0])
    for lam, u in zip(path.load_factors, path.u):
        expected = -lam * (5.0 + 3.0) * 9.81 * 2.0 / 1e5                 # lumped: half the bar mass at the tip
        got = u[asm.dofs.index(bottom, "uy")]
        assert abs(got - expected) <= 1e-12 * abs(expected), f"lam = {lam}: tip uy {got:.15g}, expected {expected:.15g}"


@pytest.mark.parametrize("n", [np.int64(4), 4])
def test_number_of_equal_steps_may_be_a_numpy_integer(n):
    asm, _, _ = axial_bar()
    path = fm.load_control(asm, n)
    assert np.allclose(path.load_factors, [0.25, 0.5, 0.75, 1.0]), f"load factors {path.load_factors}"

