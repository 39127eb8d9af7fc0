"""The Newton loop's linear algebra and its lean parts: the dense and sparse paths of
:class:`~flexmb.integrators.newton.Factorization` agree (solution, smallest equilibrated pivot,
determinant sign, exact singularity), modified Newton reaches the same solution with fewer
factorisations and asks for no tangent while it reuses one, and a time integration gives the
same result with modified Newton, with constant drives taken out of the step loop.
"""
from __future__ import annotations


import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from flexmb.integrators import newton, time_stepping
from flexmb.integrators.newton import Factorization, SingularJacobian, newton_solve, pivot_tolerance


@pytest.fixture(params=["dense", "sparse"])
def path(request, monkeypatch):
    """Run the test with every matrix on the dense path, or every matrix on SuperLU."""
    monkeypatch.setattr(newton, "DENSE_LIMIT", 10**9 if request.param == "dense" else 0)
    return request.param


def _banded(rng: np.random.Generator, n: int) -> sp.csc_matrix:
    """Non-symmetric banded matrix with rows of very different magnitude (units)."""
    A = sp.diags([rng.standard_normal(n - 2), rng.standard_normal(n - 1), 4.0 + rng.random(n),
                  rng.standard_normal(n - 1)], [-2, -1, 0, 1])
    return (sp.diags(10.0 ** rng.uniform(-6, 9, n)) @ A).tocsc()


def test_dense_and_sparse_paths_agree(rng, monkeypatch):
    A = _banded(rng, 40)
    b = rng.standard_normal((40, 2))
    found = {}
    for limit, name in ((10**9, "dense"), (0, "sparse")):
        monkeypatch.setattr(newton, "DENSE_LIMIT", limit)
        lu = Factorization(A)
        assert lu.dense == (name == "dense")
        found[name] = (lu.solve(b), lu.solve(b[:, 0]), lu.smallest_pivot, lu.determinant_sign)
        x = found[name][0]
        assert np.abs(A @ x - b).max() <= 1e-9 * np.abs(b).max() * 1e9, f"{name}: A x != b"
        assert np.allclose(found[name][1], x[:, 0], rtol=1e-12, atol=0.0)
    assert np.allclose(found["dense"][0], found["sparse"][0], rtol=1e-9, atol=0.0)
    assert found["dense"][3] == found["sparse"][3] == np.linalg.slogdet(A.toarray())[0]
    # the pivots depend on the pivot order, but both are O(1) for this well-conditioned matrix
    assert 1e-3 < found["dense"][2] <= 1.0 and 1e-3 < found["sparse"][2] <= 1.0


def test_singularity_is_told_on_both_paths(path):
    exact = sp.csc_matrix(np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1e9]]))
    with pytest.raises(RuntimeError, match="exactly singular"):
        Factorization(exact)
    # condition number 4 / eps (a power-of-two scale leaves the perturbation of one ulp as it is)
    near = sp.csc_matrix(2.0**23 * np.array([[1.0, 1.0], [1.0, 1.0 + np.finfo(float).eps]]))
    assert Factorization(near).is_singular(), f"{path}: pivot {Factorization(near).smallest_pivot:.1e}"
    regular = sp.csc_matrix(1e7 * np.array([[1.0, 1.0], [1.0, 1.0 + 1e-9]]))
    lu = Factorization(regular)
    assert not lu.is_singular() and lu.smallest_pivot > 1e3 * pivot_tolerance(2)
    assert np.isnan(Factorization(regular, pivots=False).smallest_pivot)


def _stiffening_system(calls: list[bool]):
    """r = K x + c x^3 - f (20 unknowns, mildly nonlinear: the first Jacobian contracts well);
    records whether each call wanted J."""
    n = 20
    K = sp.diags([-np.ones(n - 1), 2.0 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1]).tocsc() * 1e3
    f = np.linspace(1.0, 2.0, n) * 50.0

    def residual(x, tangent=True):
        calls.append(tangent)
        r = K @ x + 0.03 * x**3 - f
        J = (K + sp.diags(0.09 * x**2)).tocsc() if tangent else None
        return r, J, float(np.linalg.norm(f))

    return residual, n


def test_modified_newton_reaches_the_full_newton_solution_with_fewer_factorisations():
    full_calls, modified_calls = [], []
    residual, n = _stiffening_system(full_calls)
    x_full, log_full = newton_solve(residual, np.zeros(n), 1.0)
    residual, _ = _stiffening_system(modified_calls)
    x_mod, log_mod = newton_solve(residual, np.zeros(n), 1.0, modified=True)
    assert log_full.converged and log_mod.converged
    assert np.allclose(x_mod, x_full, rtol=1e-9, atol=0.0), np.abs(x_mod - x_full).max()
    assert log_full.factorizations == log_full.iterations
    assert log_mod.factorizations < log_mod.iterations, (log_mod.factorizations, log_mod.iterations)
    assert modified_calls.count(True) == log_mod.factorizations, "a tangent was evaluated and not factorised"
    assert all(full_calls), "full Newton must ask for the tangent every time"


def test_modified_newton_turns_to_full_newton_when_the_contraction_is_poor():
    """A strongly nonlinear start (x^3 = 8 from x = 1): the first correction overshoots, the
    kept Jacobian would contract slowly, so the solve evaluates the tangent again at once and
    goes on as full Newton."""
    calls = []

    def residual(x, tangent=True):
        calls.append(tangent)
        r = np.array([x[0] ** 3 - 8.0, x[1] + x[0] ** 2 - 1.0])
        J = sp.csc_matrix([[3.0 * x[0] ** 2, 0.0], [2.0 * x[0], 1.0]]) if tangent else None
        return r, J, 8.0

    x, log = newton_solve(residual, np.array([1.0, 0.0]), 1.0, modified=True)
    assert log.converged and np.allclose(x, [2.0, -3.0], rtol=1e-9)
    assert log.residual_norms[1] > newton.REUSE_CONTRACTION * log.residual_norms[0], "the start contracts well"
    assert calls[:3] == [True, False, True], f"tangent requests {calls}"
    assert all(calls[2:]) and log.factorizations == log.iterations, (calls, log.factorizations, log.iterations)


def test_singular_jacobian_keeps_its_own_copy_of_the_matrix():
    """The time stepper hands Newton one CSC object whose data it swaps per iteration: the matrix
    a SingularJacobian carries must not change with later evaluations."""
    shared = sp.csc_matrix(np.array([[1.0, 1.0], [1.0, 1.0]]))

    def residual(x):
        return x - 1.0, shared, 1.0

    with pytest.raises(SingularJacobian) as info:
        newton_solve(residual, np.zeros(2), 1.0)
    shared.data = np.full(shared.nnz, 7.0)
    assert np.array_equal(info.value.matrix.toarray(), np.ones((2, 2)))


def _driven_beam(mass: str = "consistent") -> tuple[fm.Model, int]:
    """A cantilever whose root is driven (a prescribed rotation and a clamp), with a constant tip
    load and gravity: constant and time-dependent drives together."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 2.0, 6), np.zeros(6)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=50.0, rho_A=1.0, rho_I=1e-4, mass=mass,
                 second_order=True)
    m.fix(nodes[0], ["ux", "uy"])
    m.prescribe(nodes[0], "rz", lambda t: 0.5 * t**2)
    m.add_load(nodes[-1], "uy", -2.0)
    m.add_load(nodes[-2], "ux", lambda t: np.sin(t))
    m.set_gravity([0.0, -9.81])
    return m, nodes[-1]


@pytest.mark.parametrize("scheme", ["mid-point", "newmark"])
def test_integration_with_modified_newton_gives_the_same_motion(monkeypatch, scheme):
    model, tip = _driven_beam()
    full = fm.integrate(model, 0.02, 0.6, scheme=scheme, keep_newton_logs=True)
    monkeypatch.setattr(time_stepping, "MODIFIED_NEWTON_MIN_SIZE", 0)
    modified = fm.integrate(model, 0.02, 0.6, scheme=scheme, keep_newton_logs=True)
    assert sum(log.factorizations for log in modified.newton_logs) < sum(modified.newton_iterations)
    difference = np.abs(np.array(modified.u) - np.array(full.u)).max()
    assert difference < 1e-8 * np.abs(np.array(full.u)).max(), f"the motions differ by {difference:.1e}"
    assert np.allclose(modified.total, full.total, rtol=1e-8, atol=1e-10)
    assert modified.events == full.events


def test_cubic_mass_residual_only_iterations(monkeypatch):
    model, _ = _driven_beam("cubic")
    full = fm.integrate(model, 0.02, 0.3)
    monkeypatch.setattr(time_stepping, "MODIFIED_NEWTON_MIN_SIZE", 0)
    modified = fm.integrate(model, 0.02, 0.3)
    assert np.abs(np.array(modified.u) - np.array(full.u)).max() < 1e-8 * np.abs(np.array(full.u)).max()


def test_constant_drives_and_loads_are_summed_once():
    """Prescribed values and dead loads with constants taken out of the step loop equal the
    per-item evaluation of every NodalValue."""
    model, _ = _driven_beam()
    model.prescribe(1, "uy", 0.003)
    asm = fm.Assembly(model)
    for t, statics in ((0.0, False), (0.37, False), (0.37, True)):
        expected = np.zeros(asm.dofs.prescribed.size)
        for (node, dof), pv in model.prescribed.items():
            expected[np.searchsorted(asm.dofs.prescribed, asm.dofs.index(node, dof))] = pv.at(t, statics)
        assert np.array_equal(asm.prescribed_values(t, statics), expected)
        weight = np.zeros(asm.n_dof)
        weight[asm.dofs.translations()] = model.gravity
        f = asm.mass @ weight * (t if statics else 1.0)
        for load in model.loads:
            f[asm.dofs.index(load.node, load.dof)] += load.at(t, statics)
        assert np.allclose(asm.external_force(t, statics), f, rtol=1e-14, atol=1e-14)
    f0, f1 = asm.external_force(0.2), asm.external_force(0.22)
    fm_, _ = asm.mid_point_external_force(0.2, 0.22, np.zeros(asm.n_dof), np.zeros(asm.n_dof))
    assert np.allclose(fm_, 0.5 * (f0 + f1), rtol=1e-14, atol=1e-14)
    with pytest.raises(ValueError):                     # the step's cached loads are read-only
        fm_[0] = 1.0
