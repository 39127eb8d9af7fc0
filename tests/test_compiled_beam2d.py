"""The compiled planar beam kernels (:mod:`flexmb.compiled.beam2d`) against their numpy
specification (the ``reference_*`` methods of :class:`flexmb.Beam2D`) and against central
finite differences, and the exact energy increment of the compiled mid-point force.

Random batches (fixed seed) with chords turned by any angle, nodal rotations of several turns,
local rotations up to 1.2 rad, strains up to 20 %, and a different EA and EI for every element;
every test runs with and without the second-order (bowing) term.
"""
from __future__ import annotations

import numpy as np
import pytest

from flexmb import Beam2D

N_EL = 200
TB_MAX = 1.2           # rad, |local rotation| well below pi
REF_TOL = 1e-12        # compiled vs numpy reference, relative per element


def _reference(rng: np.random.Generator, n: int) -> np.ndarray:
    """Reference coordinates X (n, 2, 2): random position, any direction, length 0.5..3 m."""
    X1 = rng.uniform(-2.0, 2.0, (n, 2))
    a = rng.uniform(-np.pi, np.pi, n)
    l0 = rng.uniform(0.5, 3.0, n)
    return np.stack([X1, X1 + l0[:, None] * np.c_[np.cos(a), np.sin(a)]], axis=1)


def _configuration(rng: np.random.Generator, X: np.ndarray, alpha: np.ndarray, turns: np.ndarray) -> np.ndarray:
    """Element DOFs (n, 6) whose chord is turned by ``alpha`` from the reference chord, with nodal
    rotations alpha + tb_i + 2 pi turns_i, |tb_i| <= TB_MAX, and strain within +-20 %."""
    n = len(X)
    X21 = X[:, 1] - X[:, 0]
    l0 = np.linalg.norm(X21, axis=1)
    phi = np.arctan2(X21[:, 1], X21[:, 0]) + alpha
    l = l0 * (1.0 + rng.uniform(-0.2, 0.2, n))
    d1 = rng.uniform(-3.0, 3.0, (n, 2))
    d2 = X[:, 0] + d1 + l[:, None] * np.c_[np.cos(phi), np.sin(phi)] - X[:, 1]
    theta = alpha[:, None] + rng.uniform(-TB_MAX, TB_MAX, (n, 2)) + 2.0 * np.pi * turns
    return np.c_[d1, theta[:, 0], d2, theta[:, 1]]


def _state(rng: np.random.Generator, X: np.ndarray) -> np.ndarray:
    """A large-rotation state: chord turned by up to three turns, nodes by up to three more."""
    n = len(X)
    return _configuration(rng, X, rng.uniform(-6.0 * np.pi, 6.0 * np.pi, n), rng.integers(-3, 4, (n, 2)))


def _step(rng: np.random.Generator, X: np.ndarray, max_dalpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of a step whose chord turns by up to ``max_dalpha`` rad (same turn counts)."""
    n = len(X)
    alpha0 = rng.uniform(-6.0 * np.pi, 6.0 * np.pi, n)
    turns = rng.integers(-3, 4, (n, 2))
    dalpha = rng.uniform(-max_dalpha, max_dalpha, n)
    return _configuration(rng, X, alpha0, turns), _configuration(rng, X, alpha0 + dalpha, turns)


def _group(rng: np.random.Generator, n: int, second_order: bool) -> Beam2D:
    return Beam2D(np.zeros((n, 2), dtype=int), EA=10.0 ** rng.uniform(3.0, 6.0, n),
                  EI=10.0 ** rng.uniform(1.0, 4.0, n), second_order=second_order)


def _assert_equal_to_reference(got: np.ndarray, ref: np.ndarray, what: str, relative_error) -> None:
    err = relative_error(got, ref)
    worst = int(np.argmax(err))
    assert err[worst] < REF_TOL, f"compiled {what} differs from its reference at element {worst} by {err[worst]:.2e}"


SECOND_ORDER = [pytest.param(False, id="first-order"), pytest.param(True, id="second-order")]


# ------------------------------------------------------------------ compiled == reference
@pytest.mark.parametrize("second_order", SECOND_ORDER)
def test_static_kernels_equal_the_reference(second_order, rng, relative_error):
    X = _reference(rng, N_EL)
    u = _state(rng, X)
    el = _group(rng, N_EL, second_order)
    q_ref, K_ref = el.reference_force_and_tangent(X, u)
    q, K = el.force_and_tangent(X, u)
    _assert_equal_to_reference(q, q_ref, "force (force_and_tangent)", relative_error)
    _assert_equal_to_reference(K, K_ref, "tangent", relative_error)
    _assert_equal_to_reference(el.internal_force(X, u), q_ref, "internal_force", relative_error)
    # the states are what the test claims: several turns and large local rotations
    assert np.ptp(u[:, [2, 5]]) > 6.0 * np.pi and np.abs(el.local_rotations(X, u)).max() > 1.0


@pytest.mark.parametrize("second_order", SECOND_ORDER)
def test_section_outputs_equal_the_reference(second_order, rng):
    """Axial strain, local rotations, N, end moments (element outputs) and strain energy, which
    the time integration records every step."""
    X = _reference(rng, N_EL)
    u = _state(rng, X)
    el = _group(rng, N_EL, second_order)
    ref = el.reference_section_state(X, u)                           # (n, 7)
    out = el.element_outputs(X, u)
    got = np.column_stack([el.axial_strain(X, u), el.local_rotations(X, u), el.generalized_stresses(X, u),
                           el.strain_energy(X, u)])
    np.testing.assert_array_equal(got, np.column_stack([out["axial_strain"], el.local_rotations(X, u),
                                                        out["N"], out["M1"], out["M2"], el.strain_energy(X, u)]))
    scale = np.abs(ref).max(axis=0)                                  # per quantity
    err = (np.abs(got - ref) / scale).max(axis=0)
    names = ["axial strain", "tb1", "tb2", "N", "M1", "M2", "strain energy"]
    assert err.max() < REF_TOL, f"compiled {names[int(np.argmax(err))]} differs from its reference by {err.max():.2e}"


@pytest.mark.parametrize("second_order", SECOND_ORDER)
@pytest.mark.parametrize("max_dalpha", [2.0, 1e-3, 0.0])
def test_mid_point_kernels_equal_the_reference(second_order, max_dalpha, rng, relative_error):
    """Large chord-rotation steps, small ones (series branch of d_alpha / sin d_alpha), and none."""
    X = _reference(rng, N_EL)
    u0, u1 = _step(rng, X, max_dalpha)
    el = _group(rng, N_EL, second_order)
    q_ref, K_ref = el.reference_mid_point_force_and_tangent(X, u0, u1)
    q, K = el.mid_point_force_and_tangent(X, u0, u1)
    _assert_equal_to_reference(q, q_ref, f"mid-point force (|d_alpha| <= {max_dalpha})", relative_error)
    _assert_equal_to_reference(K, K_ref, f"mid-point tangent (|d_alpha| <= {max_dalpha})", relative_error)
    _assert_equal_to_reference(el.mid_point_force(X, u0, u1), q_ref, "mid_point_force", relative_error)


def test_empty_and_single_element_batches(rng):
    X = _reference(rng, 1)
    u0, u1 = _step(rng, X, 1.0)
    el = _group(rng, 1, True)
    q, K = el.mid_point_force_and_tangent(X, u0, u1)
    assert q.shape == (1, 6) and K.shape == (1, 6, 6)
    np.testing.assert_allclose(K, el.reference_mid_point_force_and_tangent(X, u0, u1)[1], rtol=1e-12, atol=0)
    empty = Beam2D(np.zeros((0, 2), dtype=int), EA=1.0, EI=1.0)
    q, K = empty.force_and_tangent(np.zeros((0, 2, 2)), np.zeros((0, 6)))
    assert q.shape == (0, 6) and K.shape == (0, 6, 6) and empty.strain_energy(np.zeros((0, 2, 2)),
                                                                               np.zeros((0, 6))).shape == (0,)


# ----------------------------------------------------------------- finite differences
@pytest.mark.parametrize("second_order", SECOND_ORDER)
def test_compiled_tangent_matches_central_fd(second_order, rng, assert_tangent_matches_fd, central_fd,
                                             relative_error):
    X = _reference(rng, N_EL)
    u = _state(rng, X)
    el = _group(rng, N_EL, second_order)
    q, K = el.force_and_tangent(X, u)
    assert_tangent_matches_fd(K, lambda v: el.internal_force(X, v), u, f"compiled tangent ({second_order=})")
    q_fd = central_fd(lambda v: el.strain_energy(X, v)[:, None], u, 1e-6)[:, 0, :]
    err = relative_error(q, q_fd).max()
    assert err < 1e-6, f"compiled force vs FD of the compiled strain energy: {err:.2e}"


@pytest.mark.parametrize("second_order", SECOND_ORDER)
@pytest.mark.parametrize("max_dalpha", [2.0, 1e-3])
def test_compiled_mid_point_tangent_matches_central_fd(second_order, max_dalpha, rng, assert_tangent_matches_fd):
    X = _reference(rng, N_EL)
    u0, u1 = _step(rng, X, max_dalpha)
    el = _group(rng, N_EL, second_order)
    K = el.mid_point_force_and_tangent(X, u0, u1)[1]
    assert_tangent_matches_fd(K, lambda v: el.mid_point_force(X, u0, v), u1,
                              f"compiled mid-point tangent ({second_order=}, |d_alpha| <= {max_dalpha})")


# ------------------------------------------------------------------------------ energy
@pytest.mark.parametrize("second_order", SECOND_ORDER)
@pytest.mark.parametrize("max_dalpha", [2.0, 1e-3])
def test_compiled_mid_point_force_gives_the_exact_energy_increment(second_order, max_dalpha, rng):
    """q_m . (u1 - u0) = Phi(u1) - Phi(u0) to round-off, also when a node turns by more than pi
    relative to its chord within the step."""
    X = _reference(rng, N_EL)
    u0, u1 = _step(rng, X, max_dalpha)
    quarter = slice(0, N_EL // 4)                                    # node 1 turns by up to 4.4 rad
    u0[quarter, 2] -= 1.0                                            # relative to its chord, |tb| < 2.2
    u1[quarter, 2] += 1.0
    el = _group(rng, N_EL, second_order)
    work = np.einsum("ei,ei->e", el.mid_point_force(X, u0, u1), u1 - u0)
    phi0, phi1 = el.strain_energy(X, u0), el.strain_energy(X, u1)
    err = np.abs(work - (phi1 - phi0)) / (phi0 + phi1)
    worst = int(np.argmax(err))
    assert err[worst] < 1e-12, (f"compiled mid-point force ({second_order=}, |d_alpha| <= {max_dalpha}): "
                                f"q_m.(u1 - u0) misses Phi(u1) - Phi(u0) at element {worst} by {err[worst]:.2e}")
