"""Arc-length statics against closed-form equilibrium paths with limit points and a snap-back.

Closed forms (co-rotational bar, N = EA (l - l0) / l0, exact for any rotation):

* Symmetric two-bar (von Mises) truss, supports at (+-a, 0), apex at (0, h), vertical load P
  down, apex deflection v down, z = h - v, l = sqrt(a^2 + z^2):
  ``P(v) = 2 EA z (1 / l - 1 / l0)``; limit points at z = +-z*, z* = sqrt(l*^2 - a^2),
  l* = (a^2 l0)^(1/3).
* The same truss with a vertical spring bar (stiffness k = EA_s / L_s) standing on the apex and
  the load P on its top node (deflection w down): the spring stays vertical and carries
  ``k (w - v) = P`` exactly, and the apex carries ``P = P(v)``, so the path is
  ``(v, w, P) = (v, v + P(v) / k, P(v))``. Where ``dw/dv = 1 + P'(v) / k < 0`` (most negative
  slope at v = h: ``P'(h) = -2 EA (1/a - 1/l0)``) the top node moves back up while the load drops:
  a snap-back, which displacement control of the top node could not follow either.
"""
from __future__ import annotations

import contextlib

from typing import Callable

import numpy as np
import pytest

import flexmb as fm
from flexmb.analysis import StaticSolveError

A_HALF, RISE, EA_VM, P_REF = 1.0, 0.5, 1e4, 100.0
K_SPRING, L_SPRING = 1e3, 1.0


def truss_load(v: np.ndarray) -> np.ndarray:
    """Apex load P (N, down) in equilibrium with the apex deflection v (m, down)."""
    z = RISE - v
    return 2.0 * EA_VM * z * (1.0 / np.hypot(A_HALF, z) - 1.0 / np.hypot(A_HALF, RISE))


def limit_point() -> tuple[float, float]:
    """Deflection (m) and load (N) at the first limit point."""
    z = np.sqrt((A_HALF**2 * np.hypot(A_HALF, RISE)) ** (2.0 / 3.0) - A_HALF**2)
    return RISE - z, float(truss_load(RISE - z))


def von_mises(spring: bool = False, load: float | Callable[[float], float] = -P_REF
              ) -> tuple[fm.Assembly, int, int]:
    """The truss (apex ux free: symmetry must keep it at zero), optionally with the spring on top.

    Returns the assembly, the apex uy index and the loaded node's uy index.
    """
    m = fm.Model(dim=2)
    left, right, apex = m.add_node([-A_HALF, 0.0]), m.add_node([A_HALF, 0.0]), m.add_node([0.0, RISE])
    m.add_truss([[left, apex], [right, apex]], EA=EA_VM)
    m.fix(left)
    m.fix(right)
    loaded = apex
    if spring:
        loaded = m.add_node([0.0, RISE + L_SPRING])
        m.add_truss([[apex, loaded]], EA=K_SPRING * L_SPRING)
        m.fix(loaded, "ux")                     # a bar end alone has no lateral stiffness
        m.fix(apex, "ux")                       # the compressed spring would push the apex sideways
    m.add_load(loaded, "uy", load)
    asm = fm.Assembly(m)
    return asm, asm.dofs.index(apex, "uy"), asm.dofs.index(loaded, "uy")


def deflections(path: fm.StaticPath, i: int) -> np.ndarray:
    """Downward deflection (m) of global DOF i along the path, (n_points,)."""
    return np.array([-u[i] for u in path.u])


def assert_on_truss_curve(v: np.ndarray, lam: np.ndarray, rtol: float = 1e-8) -> None:
    P_exact = truss_load(v)
    err = np.abs(lam * P_REF - P_exact) / np.abs(P_exact).max()
    k = int(np.argmax(err))
    assert err[k] <= rtol, (f"point {k} (v = {v[k]:.6f} m): P = {lam[k] * P_REF:.10g} N, closed form "
                            f"{P_exact[k]:.10g} N (off by {err[k]:.2e} of max |P|)")


def test_von_mises_path_passes_both_limit_points_on_the_closed_form():
    asm, iv, _ = von_mises()
    path = fm.arc_length(asm, 0.05, n_steps=200, max_displacement=2.2 * RISE)
    v, lam = deflections(path, iv), np.array(path.load_factors)
    assert_on_truss_curve(v, lam)
    ux = max(abs(u[asm.dofs.index(2, "ux")]) for u in path.u)
    assert ux <= 1e-12, f"symmetric truss: apex moved sideways by {ux:.3e} m"
    assert np.all(np.diff(v) > 0.0), "the apex must keep moving down along the whole path"
    k = int(np.argmax(np.where(v < RISE, lam, -np.inf)))
    v_lim, P_lim = limit_point()
    assert 0 < k < len(lam) - 1 and abs(v[k] - v_lim) <= 0.05, \
        f"largest lam at v = {v[k]:.4f} m (point {k}), closed-form limit point at v = {v_lim:.4f} m"
    assert P_lim >= lam[k] * P_REF >= 0.99 * P_lim, \
        f"peak load {lam[k] * P_REF:.4f} N, closed-form limit load {P_lim:.4f} N"
    j = int(np.argmin(lam))
    assert np.all(np.diff(lam[k:j + 1]) < 0.0) and np.all(np.diff(lam[j:]) > 0.0), \
        f"lam must fall from the first limit point (point {k}) to the second (point {j}), then rise"
    assert -P_lim <= lam[j] * P_REF <= -0.99 * P_lim and j < len(lam) - 1, \
        f"second limit point: lam = {lam[j]:.4f} at point {j} of {len(lam)}, closed form {-P_lim / P_REF:.4f}"
    assert v[-1] > 2.2 * RISE >= v[-2], f"stopped at v = {v[-1]:.4f} m, after {v[-2]:.4f} m"
    # point 20 is the stress-free inverted state v = 2h (q = 0, lam = 0): it must converge as is
    assert path.cutbacks == 0, f"{path.cutbacks} cut-backs on a smooth path"
    # the supports carry the load: vertical reactions sum to P (up) in every state
    uy = [asm.dofs.index(n, "uy") for n in (0, 1)]
    for l, R in zip(lam, path.reactions):
        assert abs(R[uy].sum() - l * P_REF) <= 1e-9 * P_REF * max(1.0, abs(l)), \
            f"lam = {l:.4f}: vertical reactions sum to {R[uy].sum():.10g} N, the load is {l * P_REF:.10g} N"


@pytest.mark.parametrize("psi", [0.0, 3e-4])
def test_every_step_has_the_arc_length(psi):
    """|du|^2 + psi^2 dlam^2 |f|^2 = dl^2 for every step (no cut-backs, so dl is the user's)."""
    asm, iv, _ = von_mises()
    dl = 0.04
    path = fm.arc_length(asm, dl, n_steps=12, psi=psi)
    assert path.cutbacks == 0 and len(path.u) == 12, f"{len(path.u)} steps, {path.cutbacks} cut-backs"
    f = np.linalg.norm(asm.external_force(1.0, statics=True))
    u = np.vstack([np.zeros(asm.n_dof), path.u])[:, asm.dofs.free]
    lam = np.r_[0.0, path.load_factors]
    lengths = np.sqrt(np.sum(np.diff(u, axis=0) ** 2, axis=1) + (psi * f * np.diff(lam)) ** 2)
    assert np.allclose(lengths, dl, rtol=1e-12, atol=0.0), f"step lengths {lengths} m, arc length {dl} m"
    assert_on_truss_curve(deflections(path, iv), lam[1:])


def test_snap_back_of_the_truss_with_a_spring_on_top():
    asm, iv, iw = von_mises(spring=True)
    assert 1.0 - 2.0 * EA_VM * (1.0 / A_HALF - 1.0 / np.hypot(A_HALF, RISE)) / K_SPRING < 0.0, \
        "test premise: the spring is too stiff for a snap-back"
    path = fm.arc_length(asm, 0.05, n_steps=200, max_displacement=1.5)
    v, w, lam = deflections(path, iv), deflections(path, iw), np.array(path.load_factors)
    assert_on_truss_curve(v, lam)
    spring = np.abs(w - v - lam * P_REF / K_SPRING).max()
    assert spring <= 1e-12, f"top deflection off the closed form w = v + P / k by {spring:.2e} m"
    back = np.flatnonzero((np.diff(w) < 0.0) & (np.diff(lam) < 0.0))
    assert back.size >= 5, f"only {back.size} steps with the top moving up while the load drops"
    assert w[back[0]] > w[back[-1] + 1] + 0.1, \
        f"snap-back of the top from w = {w[back[0]]:.4f} m only to {w[back[-1] + 1]:.4f} m"
    assert lam.min() < 0.0 < lam[-1] and w[-1] > 1.4, "the path must reach the stiffening branch"


def test_load_control_jumps_over_the_unstable_branch_that_arc_length_traces():
    """Past the limit load, load control lands on the remote stiffening branch (v > 2h): a bar
    truss has an equilibrium there at every load, so with enough iterations Newton converges to
    it instead of failing, and none of the falling branch between the limit points is visited."""
    asm, iv, _ = von_mises()
    v_lim, P_lim = limit_point()
    v_lim2 = 2.0 * RISE - v_lim
    lam_lim = P_lim / P_REF
    with pytest.warns(fm.FlexmbWarning, match="load control jumped through a limit point"):
        path = fm.load_control(asm, lam_lim * np.array([0.5, 0.9, 0.99, 1.05]))
    v_lc = deflections(path, iv)
    assert np.all((v_lc < v_lim) | (v_lc > v_lim2)), f"load control visited v = {v_lc} m"
    assert v_lc[-2] < v_lim and v_lc[-1] > 2.0 * RISE, f"no jump past the limit load: v = {v_lc} m"
    arc = fm.arc_length(asm, 0.05, max_displacement=v_lim2)
    v_al, lam_al = deflections(arc, iv), np.array(arc.load_factors)
    unstable = (v_al > v_lim) & (v_al < v_lim2)
    assert unstable.sum() >= 5 and np.all(np.diff(lam_al[unstable]) < 0.0), \
        f"arc length: {unstable.sum()} points on the falling branch, lam there {lam_al[unstable]}"


def test_load_control_fails_at_the_limit_point_that_arc_length_passes():
    """Same Newton budget (6 iterations, no cut-backs): load control cannot step over the limit
    load (the jump to the remote branch needs more iterations) and raises; arc length passes."""
    asm, iv, _ = von_mises()
    lam_lim = limit_point()[1] / P_REF
    settings = fm.NewtonSettings(max_iterations=6)
    with pytest.raises(StaticSolveError, match="load control") as info:
        fm.load_control(asm, lam_lim * np.array([0.5, 0.8, 0.95, 1.02]), newton=settings, max_cutbacks=0)
    assert len(info.value.path.u) == 3, f"{len(info.value.path.u)} states before the limit load"
    arc = fm.arc_length(asm, 0.05, max_displacement=RISE, newton=settings, max_cutbacks=0)
    lam = np.array(arc.load_factors)
    assert lam.max() > 0.99 * lam_lim and lam[-1] < 0.5 * lam_lim, f"arc length lam {lam}"


def test_continues_a_load_control_path_from_its_last_state():
    asm, iv, _ = von_mises()
    lam_lim = limit_point()[1] / P_REF
    start = fm.load_control(asm, [0.6 * lam_lim])
    path = fm.arc_length(asm, 0.05, n_steps=100, max_load_factor=1.2 * lam_lim,
                         u0=start.u[-1], load_factor0=start.load_factors[-1])
    v, lam = deflections(path, iv), np.array(path.load_factors)
    assert_on_truss_curve(v, lam)
    assert lam[0] > 0.6 * lam_lim and v[0] > -start.u[-1][iv], "the first step must load further"
    assert lam.min() < -0.99 * lam_lim, f"the second limit point was not passed: lam >= {lam.min():.4f}"
    assert lam[-1] > 1.2 * lam_lim >= lam[-2], f"max_load_factor stop: last load factors {lam[-2:]}"


def test_beam_path_points_are_the_load_control_equilibria():
    """Rotational DOFs (default scaling by the characteristic length): every arc-length point of
    a cantilever under a tip load is the state load control finds at the same load factor."""
    m = fm.Model(dim=2)
    x = np.linspace(0.0, 1.0, 5)
    nodes = m.add_nodes(np.c_[x, np.zeros_like(x)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=10.0)
    m.fix(nodes[0])
    m.add_load(nodes[-1], "uy", -50.0)
    asm = fm.Assembly(m)
    arc = fm.arc_length(asm, 0.15, n_steps=10)
    ref = fm.load_control(asm, arc.load_factors)
    for lam, u_arc, u_lc in zip(arc.load_factors, arc.u, ref.u):
        err = np.abs(u_arc - u_lc).max()
        assert err <= 1e-9, f"lam = {lam:.4f}: arc-length state differs from load control by {err:.2e}"
    tip_rotation = arc.u[-1][asm.dofs.index(int(nodes[-1]), "rz")]
    assert tip_rotation < -0.6, f"tip rotation {tip_rotation:.3f} rad: not in the nonlinear range"


def test_tight_iteration_limit_forces_cut_backs_and_the_arc_length_grows_back():
    asm, iv, iw = von_mises(spring=True)
    dl = 0.3
    path = fm.arc_length(asm, dl, max_displacement=1.5, newton=fm.NewtonSettings(max_iterations=3))
    assert path.cutbacks > 0, "expected cut-backs with 3 corrector iterations and dl = 0.3 m"
    v, w, lam = deflections(path, iv), deflections(path, iw), np.array(path.load_factors)
    assert_on_truss_curve(v, lam)
    assert np.abs(w - v - lam * P_REF / K_SPRING).max() <= 1e-12 and w[-1] > 1.5
    last = np.linalg.norm(path.u[-1][asm.dofs.free] - path.u[-2][asm.dofs.free])
    assert abs(last - dl) <= 1e-12, f"last step {last:.6f} m: the arc length did not grow back to {dl} m"


def test_failed_step_raises_with_the_converged_points():
    asm, iv, _ = von_mises(spring=True)
    with pytest.raises(StaticSolveError, match="arc length: no equilibrium found .* 0 cut-backs") as info:
        fm.arc_length(asm, 0.05, max_displacement=1.5, newton=fm.NewtonSettings(max_iterations=2),
                      max_cutbacks=0)
    done = info.value.path
    assert len(done.u) >= 2 and done.cutbacks == 0, f"{len(done.u)} converged points kept"
    assert_on_truss_curve(deflections(done, iv), np.array(done.load_factors))


def test_non_proportional_loading_is_refused_naming_the_item():
    asm, _, _ = von_mises(load=lambda lam: -P_REF * lam**2)
    with pytest.raises(fm.ModelError, match=r"proportional loading.*load on node 2 uy"):
        fm.arc_length(asm, 0.05)
    model = von_mises()[0].model
    model.prescribe(0, "uy", 0.01)                   # a moving support would not be scaled
    with pytest.raises(fm.ModelError, match=r"node 0 uy has the prescribed value 0\.01"):
        fm.arc_length(model, 0.05)


@pytest.mark.parametrize("where", ["zero value", "on a support"])
def test_zero_reference_load_is_refused(where):
    model = von_mises(load=0.0)[0].model
    if where == "on a support":                      # a load on fixed DOFs never reaches the free ones
        model.add_load(0, "uy", -P_REF)
    with pytest.raises(fm.ModelError, match="reference load .* is zero on every free DOF"), \
            pytest.warns(fm.FlexmbWarning) if where == "on a support" else contextlib.nullcontext():
        fm.arc_length(model, 0.05)


@pytest.mark.parametrize("kwargs", [{"increment": 0.0}, {"increment": 0.1, "psi": -1.0},
                                    {"increment": 0.1, "dof_scale": np.ones(3)}])
def test_invalid_arguments_are_refused(kwargs):
    asm, _, _ = von_mises()
    with pytest.raises(fm.ModelError):
        fm.arc_length(asm, **kwargs)


def test_exactly_singular_tangent_at_the_start_stops_without_cutbacks():
    """A straight, unstressed two-bar string loaded across: K = 0 in the load direction at u = 0,
    so every predictor from there meets a singular factor; no shorter step helps, the run stops
    at once naming the free DOF."""
    m = fm.Model(dim=2)
    left, mid, right = m.add_nodes([[-1.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    m.add_truss([[left, mid], [mid, right]], EA=1e4)
    m.fix(left)
    m.fix(right)
    m.add_load(mid, "uy", -1.0)
    with pytest.raises(fm.SingularSystemError, match="arc length at load factor 0.*node 1 uy") as info:
        fm.arc_length(m, 0.01, max_cutbacks=2)
    assert info.value.result.cutbacks == 0 and info.value.result.n_steps == 0
