"""Singular systems are diagnosed before any cut-back, with the nodes, DOFs and joints named;
load control reports the limit points it cannot pass or jumps through.

Models: a truss triangle without supports and a four-bar linkage of bars (statics); a massless
node between two bars in a line, a rod-like rigid body on a ball joint at its centre of mass
(dynamics); duplicated revolute joints; a long braced truss beyond the dense null-space limit;
the von Mises truss (h / a = 0.2) past its limit load. Stiff but regular models (Bathe's
pendulum at dt = 0.5 s, beams with massless rotations) must not be flagged.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from flexmb.analysis import StaticSolveError, diagnostics
from flexmb.integrators.newton import (Factorization, NewtonFailure, NewtonSettings, SingularJacobian,
                                       newton_solve, pivot_tolerance)


def _no_cutbacks(result) -> None:
    assert result is not None, "the error carries no result"
    kinds = [event.kind for event in result.events]
    assert result.cutbacks == 0 and "cutback" not in kinds, \
        f"{result.cutbacks} cut-backs before the error; run log: {kinds}"


# -------------------------------------------------------------- statics
def _triangle(supported: bool) -> fm.Model:
    m = fm.Model(dim=2)
    a, b, c = m.add_nodes(np.array([[0.0, 0.0], [1.0, 0.2], [0.4, 0.9]]))
    m.add_truss([[a, b], [b, c], [c, a]], EA=1e6)
    if supported:
        m.fix(a)
        m.fix(b, "uy")
    m.add_load(c, "ux", 10.0)
    return m


def test_support_free_static_model_stops_before_any_cutback_naming_its_rigid_motions():
    with pytest.raises(fm.SingularSystemError) as info:
        fm.load_control(_triangle(supported=False), 4)
    error = info.value
    message = str(error)
    for part in ("mechanism / not supported", "load control at load factor 0", "no supports",
                 "translation along x", "translation along y", "rotation about z", "nodes 0-2", "add supports"):
        assert part in message, f"{part!r} missing from: {message}"
    assert {"node 0 ux", "node 1 uy", "node 2 ux"} <= set(error.dofs), f"DOFs named: {error.dofs}"
    assert error.modes.shape == (3, 6), f"expected the 3 rigid-body modes, got {error.modes.shape}"
    _no_cutbacks(error.result)
    assert error.result.events[-1].kind == "error", "the error is not in the run log"


def test_supported_triangle_is_not_flagged():
    path = fm.load_control(_triangle(supported=True), 4)
    assert path.cutbacks == 0 and len(path.load_factors) == 4


def _four_bar() -> tuple[fm.Model, np.ndarray]:
    """Three bars between two pinned supports: one degree of freedom."""
    X = np.array([[0.0, 0.0], [0.2, 1.0], [1.3, 1.1], [1.5, 0.1]])
    m = fm.Model(dim=2)
    a, b, c, d = m.add_nodes(X)
    m.add_truss([[a, b], [b, c], [c, d]], EA=1e6)
    m.fix(a)
    m.fix(d)
    m.add_load(b, "ux", 1.0)
    return m, X


def test_mechanism_in_statics_names_the_moving_nodes_and_its_mode():
    model, X = _four_bar()
    with pytest.raises(fm.SingularSystemError) as info:
        fm.load_control(model, 4)
    error = info.value
    assert "free motion of node 1 (ux, uy), node 2 (ux, uy)" in str(error), str(error)
    assert sorted(error.dofs) == ["node 1 ux", "node 1 uy", "node 2 ux", "node 2 uy"], error.dofs
    _no_cutbacks(error.result)
    # the mode is the linkage's motion: node 1 turns about node 0, node 2 about node 3, and the
    # coupler keeps its length
    mode = error.modes[0].reshape(4, 2)
    for moving, pivot in ((1, 0), (2, 3)):
        along = mode[moving] @ (X[moving] - X[pivot]) / np.linalg.norm(X[moving] - X[pivot])
        assert abs(along) < 1e-9 * np.abs(mode).max(), f"node {moving} moves along its bar by {along:.2e}"
    stretch = (mode[2] - mode[1]) @ (X[2] - X[1])
    assert abs(stretch) < 1e-9, f"the coupler stretches by {stretch:.2e}"


def test_arc_length_on_a_mechanism_stops_at_the_first_step():
    model, _ = _four_bar()
    with pytest.raises(fm.SingularSystemError, match=r"arc length at load factor 0.*node 1 \(ux, uy\)") as info:
        fm.arc_length(model, 0.01)
    _no_cutbacks(info.value.result)


def test_linear_buckling_of_a_free_model_names_the_rigid_motions():
    with pytest.raises(fm.SingularSystemError, match="linear buckling.*no supports.*rotation about z"):
        fm.linear_buckling(_triangle(supported=False))


def _braced_beam(n_bays: int, supported: bool) -> fm.Model:
    """Plane truss of square bays (1 m) with diagonals: 2 (n_bays + 1) nodes."""
    m = fm.Model(dim=2)
    x = np.arange(n_bays + 1, dtype=float)
    bottom = m.add_nodes(np.c_[x, np.zeros_like(x)])
    top = m.add_nodes(np.c_[x, np.ones_like(x)])
    bars = [[bottom[i], bottom[i + 1]] for i in range(n_bays)] + [[top[i], top[i + 1]] for i in range(n_bays)]
    bars += [[bottom[i], top[i]] for i in range(n_bays + 1)] + [[bottom[i], top[i + 1]] for i in range(n_bays)]
    m.add_truss(bars, EA=1e7)
    if supported:
        m.fix(bottom[0])
        m.fix(top[0])
    m.add_load(top[-1], "uy", -1.0)
    return m


def test_large_model_takes_the_sparse_null_space_path_and_is_named():
    n_bays = 400                                            # 1604 free DOFs
    model = _braced_beam(n_bays, supported=False)
    asm = fm.Assembly(model)
    assert asm.dofs.free.size > diagnostics.DENSE_LIMIT, "the model must be beyond the dense limit"
    with pytest.raises(fm.SingularSystemError) as info:
        fm.load_control(asm, 2)
    message = str(info.value)
    assert f"no supports: the whole model moves as a rigid body (translation along x, translation along y, " \
           f"rotation about z; nodes 0-{2 * n_bays + 1})" in message, message
    _no_cutbacks(info.value.result)


def test_sparse_null_space_spans_the_dense_one():
    """The fast path (ARPACK shift-invert) against the dense SVD on the same matrix."""
    asm = fm.Assembly(_braced_beam(60, supported=False))
    K = asm.free_matrix(asm.static_residual(np.zeros(asm.n_dof), 0.0)[1])
    _, dense = diagnostics.null_space(K, dense_limit=10**6)
    _, sparse = diagnostics.null_space(K, dense_limit=10)
    assert dense.shape[1] == sparse.shape[1] == 3, \
        f"null spaces of dimension {dense.shape[1]} and {sparse.shape[1]}"
    cosines = np.linalg.svd(dense.T @ sparse, compute_uv=False)        # of the principal angles
    assert cosines.min() > 1 - 1e-8, f"the spaces differ: smallest principal cosine {cosines.min():.3e}"


# ------------------------------------------------------------- dynamics
def test_massless_node_without_transverse_stiffness_fails_before_the_first_cutback():
    """Node 1 sits between two bars in a line (inclined, so its mass and stiffness diagonals
    are not zero): nothing resists or inertia-loads its motion across the bars."""
    m = fm.Model(dim=2)
    a, b, c = m.add_nodes(np.array([[0.0, 0.0], [0.6, 0.8], [1.2, 1.6]]))
    m.add_truss([[a, b], [b, c]], EA=1e6)
    m.add_point_mass(c, 1.0)
    m.fix(a)
    m.set_gravity([0.0, -9.81])
    with pytest.raises(fm.SingularSystemError) as info:
        fm.integrate(m, 0.01, 0.1)
    error = info.value
    assert "node 1 (ux, uy) along (0.8, -0.6) has no mass and no stiffness" in str(error), str(error)
    assert "mid-point step from t = 0 s" in str(error)
    mode = error.modes[0]
    assert abs(mode[2:4] @ np.array([0.6, 0.8])) < 1e-12 and np.abs(mode[[0, 1, 4, 5]]).max() < 1e-12, \
        f"the null vector is not node 1 moving across the bars: {mode}"
    _no_cutbacks(error.result)


def test_body_without_inertia_and_no_constraint_is_refused_before_the_first_step():
    """The simplest case (a zero diagonal) is refused at the door, also naming the DOF."""
    m = fm.Model(dim=2)
    ground = m.add_node([0.0, 0.0])
    puck = m.add_rigid_body([1.0, 0.0], 2.0, 0.0, name="puck")
    m.add_truss([[ground, puck.node]], EA=1e5)
    m.fix(ground)
    m.set_gravity([0.0, -9.81])
    with pytest.raises(fm.ModelError, match="node 1 rz"):
        fm.integrate(m, 0.01, 0.1)


def test_rod_on_a_ball_joint_at_its_centre_names_the_free_rotation_and_the_joint():
    """A rigid rod along (1, 1, 0) has no inertia about its own axis; a ball joint at its centre
    of mass does not hold that rotation (its inertia diagonal is not zero, so the door passes it)."""
    inertia = np.array([[0.2, -0.2, 0.0], [-0.2, 0.2, 0.0], [0.0, 0.0, 0.4]])  # kg m^2, eigenvalues 0, 0.4, 0.4
    m = fm.Model(dim=3)
    rod = m.add_rigid_body([0.0, 0.0, 1.0], 2.0, inertia, name="rod")
    m.add_joint("spherical", None, rod, at=[0.0, 0.0, 1.0], name="ball")
    m.set_gravity([0.0, 0.0, -9.81])
    with pytest.raises(fm.SingularSystemError) as info:
        fm.integrate(m, 0.01, 0.05)
    error = info.value
    assert "body 'rod' at node 0 (rx, ry) along (0.707, 0.707) has no mass in that direction" in str(error), \
        str(error)
    assert error.joints == ["ball"] and "joint(s) 'ball' leave it free" in str(error), str(error)
    _no_cutbacks(error.result)


def test_redundant_joints_missed_at_the_door_are_named_by_the_step(monkeypatch):
    """The start-up rank check is dense and skipped for very large joint sets; Newton's singular
    step Jacobian then names the joints (the check is switched off here to reach that path)."""
    import flexmb.multibody.initial as initial

    monkeypatch.setattr(initial, "check_redundancy", lambda *args, **kwargs: None)
    m = fm.Model(dim=2)
    arm = m.add_rigid_body([1.0, 0.0], 2.0, 0.1, name="arm")
    m.add_joint("revolute", None, arm, at=[0.0, 0.0], name="pin A")
    m.add_joint("revolute", None, arm, at=[0.0, 0.0], name="pin B")
    m.set_gravity([0.0, -9.81])
    with pytest.raises(fm.SingularSystemError, match="^redundant joints") as info:
        fm.integrate(m, 0.01, 0.1)
    assert info.value.joints == ["pin A", "pin B"], info.value.joints
    _no_cutbacks(info.value.result)


def test_stiff_but_regular_pendulum_is_not_flagged():
    """Bathe's pendulum (EA = 1e10 N, 10 kg, dt = 0.5 s): the step Jacobian's smallest
    equilibrated pivot stays far above the singularity tolerance."""
    m = fm.Model(dim=2)
    pivot, tip = m.add_node([0.0, 0.0]), m.add_node([0.0, -3.0443])
    m.add_truss([[pivot, tip]], EA=1e10)
    m.add_point_mass(tip, 10.0)
    m.fix(pivot)
    m.set_gravity([0.0, -9.80])
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.index(tip, "ux")] = 7.725
    history = fm.integrate(asm, dt=0.5, t_end=20.0, v0=v0, keep_newton_logs=True)
    assert history.cutbacks == 0
    smallest = min(p for log in history.newton_logs for p in log.smallest_pivots)
    assert smallest > 1e3 * pivot_tolerance(2), f"smallest pivot {smallest:.2e} is near the tolerance"


def test_beams_with_massless_rotations_held_by_bending_still_run():
    m = fm.Model(dim=2)
    m.add_nodes(np.c_[np.linspace(0.0, 1.0, 5), np.zeros(5)])
    m.add_beam2d([[i, i + 1] for i in range(4)], EA=1e7, EI=1e3, rho_A=1.0)       # rho_I = 0
    m.fix(0)
    m.set_gravity([0.0, -9.81])
    history = fm.integrate(m, 0.01, 0.1)
    assert history.cutbacks == 0 and np.all(np.isfinite(history.u[-1]))


# ----------------------------------------------------------- limit points
A_HALF, RISE, EA_VM, P_REF = 1.0, 0.2, 1.0e7, 1.0e4          # m, m, N, N


def _von_mises() -> fm.Model:
    m = fm.Model(dim=2)
    left, right, apex = m.add_node([-A_HALF, 0.0]), m.add_node([A_HALF, 0.0]), m.add_node([0.0, RISE])
    m.add_truss([[left, apex], [right, apex]], EA=EA_VM)
    m.fix(left)
    m.fix(right)
    m.fix(apex, "ux")
    m.add_load(apex, "uy", -P_REF)
    return m


def _limit_load_factor() -> float:
    """P_max / P_REF of the co-rotational truss (closed form, see validation/von_mises_truss.py)."""
    l0 = np.hypot(A_HALF, RISE)
    z = np.sqrt((A_HALF**2 * l0) ** (2.0 / 3.0) - A_HALF**2)
    return 2.0 * EA_VM * z * (1.0 / np.hypot(A_HALF, z) - 1.0 / l0) / P_REF


def test_load_control_that_cannot_pass_the_limit_point_says_so():
    lam_max = _limit_load_factor()
    with pytest.raises(StaticSolveError) as info:
        fm.load_control(_von_mises(), list(np.linspace(0.5, 4.0, 8)), newton=NewtonSettings(max_iterations=8))
    message, path = str(info.value), info.value.path
    assert "limit point (a load maximum)" in message and "fm.arc_length" in message, message
    reached = path.load_factors[-1]
    assert lam_max * 0.95 < reached < lam_max, f"stopped at {reached:.4g}, limit load factor {lam_max:.4g}"
    assert "last Newton iteration: 8 iterations" in message, "the failed iteration is not summarised"


def test_load_control_jumping_through_the_limit_point_is_warned():
    lam_max = _limit_load_factor()
    below, beyond = 0.95 * lam_max, 1.1 * lam_max
    with pytest.warns(fm.FlexmbWarning, match=f"jumped through a limit point between load factors "
                                              f"{below:.6g} and {beyond:.6g}") as record:
        path = fm.load_control(_von_mises(), [0.5 * lam_max, below, beyond])
    jumps = [str(w.message) for w in record if issubclass(w.category, fm.FlexmbWarning)]
    assert len(jumps) == 1, jumps
    warned = [event for event in path.events if event.kind == "warning"]
    assert len(warned) == 1 and warned[0].at == beyond, f"run log: {path.events}"


def test_load_control_below_the_limit_point_gives_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", fm.FlexmbWarning)
        path = fm.load_control(_von_mises(), list(np.linspace(0.1, 0.95, 10) * _limit_load_factor()))
    assert not [event for event in path.events if event.kind == "warning"]


# ------------------------------------------------------- Newton driver
@pytest.mark.parametrize("scale", [2.0**-20, 1.0, 2.0**30])
def test_pivot_test_is_independent_of_units(scale):
    """diag(1e10, 1e-6) is regular; [[1, 1], [1, 1 + d]] is singular to round-off for d = eps (its
    condition number 4 / eps), regular for d = 1e-9, whatever its scale (powers of two, so that
    scaling leaves d as it is)."""
    assert not Factorization(sp.diags([1e10, 1e-6])).is_singular()
    for d, singular in ((np.finfo(float).eps, True), (1e-9, False)):
        lu = Factorization(sp.csc_matrix(scale * np.array([[1.0, 1.0], [1.0, 1.0 + d]])))
        assert lu.is_singular() == singular, \
            f"d = {d:g}: smallest pivot {lu.smallest_pivot:.2e}, tolerance {pivot_tolerance(2):.2e}"


def test_determinant_sign_matches_numpy(rng):
    for n in (1, 2, 5, 30):
        for _ in range(10):
            A = rng.standard_normal((n, n))
            expected = np.linalg.slogdet(A)[0]
            assert Factorization(sp.csc_matrix(A)).determinant_sign == expected


def test_singular_jacobian_reports_the_iteration_it_met():
    """Singular at iteration 1 (a passing singularity): the caller may cut back."""
    def residual(x):
        r = x - 2.0 if x[0] < 1.0 else x - 3.0                # the first step lands on x = 2
        return r, sp.csc_matrix([[0.0 if x[0] == 2.0 else 1.0]]), 1.0

    with pytest.raises(SingularJacobian) as info:
        newton_solve(residual, np.array([0.0]), 1.0)
    assert info.value.iteration == 1 and info.value.smallest_pivot == 0.0
    assert isinstance(info.value, NewtonFailure)
    assert not issubclass(fm.SingularSystemError, (NewtonFailure, RuntimeError)), \
        "the cut-back loops catch NewtonFailure: a structural error must not be one"


def test_newton_failure_summary_names_iterations_and_trend():
    def residual(x):                                          # Newton cycles 0 -> 1 -> 0 on x^3 - 2x + 2
        return x**3 - 2.0 * x + 2.0, sp.csc_matrix([[3.0 * x[0] ** 2 - 2.0]]), 2.0

    with pytest.raises(NewtonFailure) as info:
        newton_solve(residual, np.array([0.0]), 1.0, NewtonSettings(max_iterations=6))
    summary = info.value.log.summary()
    assert summary.startswith("6 iterations, |r|/F 1.00e+00 -> 1.00e+00"), summary
    assert summary.endswith("oscillating"), summary
