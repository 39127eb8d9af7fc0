"""The compiled truss kernels (:mod:`flexmb.compiled.truss`, 2D and 3D) against their numpy
specification (the ``reference_*`` methods of :class:`flexmb.Truss`) and against central finite
differences, and the exact energy increment of the compiled mid-point force.

Random batches (fixed seed): any chord direction, large translations, strains up to 30 %, a
different EA for every element, and step pairs whose chords differ by any rotation.
"""
from __future__ import annotations

import numpy as np
import pytest

from flexmb import Truss

N_EL = 200
REF_TOL = 1e-12        # compiled vs numpy reference, relative per element
DIMS = [2, 3]


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.normal(size=(n, dim))
    return v / np.linalg.norm(v, axis=1)[:, None]                      # (n, dim)


def _reference(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """Reference coordinates X (n, 2, dim): random position and direction, length 0.5..3 m."""
    X1 = rng.uniform(-2.0, 2.0, (n, dim))
    return np.stack([X1, X1 + rng.uniform(0.5, 3.0, n)[:, None] * _unit(rng, n, dim)], axis=1)


def _state(rng: np.random.Generator, X: np.ndarray) -> np.ndarray:
    """Element DOFs (n, 2 dim): any chord direction, large translation, strain within +-30 %."""
    n, _, dim = X.shape
    l = np.linalg.norm(X[:, 1] - X[:, 0], axis=1) * (1.0 + rng.uniform(-0.3, 0.3, n))
    d1 = rng.uniform(-3.0, 3.0, (n, dim))
    return np.concatenate([d1, X[:, 0] + d1 + l[:, None] * _unit(rng, n, dim) - X[:, 1]], axis=1)


def _group(rng: np.random.Generator, n: int, dim: int) -> Truss:
    return Truss(np.zeros((n, 2), dtype=int), dim, EA=10.0 ** rng.uniform(3.0, 7.0, n))


def _assert_equal_to_reference(got: np.ndarray, ref: np.ndarray, what: str, relative_error) -> None:
    err = relative_error(got, ref)
    worst = int(np.argmax(err))
    assert err[worst] < REF_TOL, f"compiled {what} differs from its reference at element {worst} by {err[worst]:.2e}"


# ------------------------------------------------------------------ compiled == reference
@pytest.mark.parametrize("dim", DIMS)
def test_static_kernels_equal_the_reference(dim, rng, relative_error):
    X = _reference(rng, N_EL, dim)
    u = _state(rng, X)
    el = _group(rng, N_EL, dim)
    q_ref, K_ref = el.reference_force_and_tangent(X, u)
    q, K = el.force_and_tangent(X, u)
    _assert_equal_to_reference(q, q_ref, f"{dim}D force (force_and_tangent)", relative_error)
    _assert_equal_to_reference(K, K_ref, f"{dim}D tangent", relative_error)
    _assert_equal_to_reference(el.internal_force(X, u), q_ref, f"{dim}D internal_force", relative_error)
    strain, N, energy = el.reference_section_state(X, u).T
    for what, got, ref in (("axial strain", el.axial_strain(X, u), strain),
                           ("axial force", el.axial_force(X, u), N),
                           ("output axial strain", el.element_outputs(X, u)["axial_strain"], strain),
                           ("output N", el.element_outputs(X, u)["N"], N),
                           ("stresses", el.generalized_stresses(X, u)[:, 0], N),
                           ("strain energy", el.strain_energy(X, u), energy)):
        _assert_equal_to_reference(got[:, None], ref[:, None], f"{dim}D {what}", relative_error)


@pytest.mark.parametrize("dim", DIMS)
def test_mid_point_kernels_equal_the_reference(dim, rng, relative_error):
    X = _reference(rng, N_EL, dim)
    u0, u1 = _state(rng, X), _state(rng, X)                         # independent: any rotation between
    el = _group(rng, N_EL, dim)
    q_ref, K_ref = el.reference_mid_point_force_and_tangent(X, u0, u1)
    q, K = el.mid_point_force_and_tangent(X, u0, u1)
    _assert_equal_to_reference(q, q_ref, f"{dim}D mid-point force", relative_error)
    _assert_equal_to_reference(K, K_ref, f"{dim}D mid-point tangent", relative_error)
    _assert_equal_to_reference(el.mid_point_force(X, u0, u1), q_ref, f"{dim}D mid_point_force", relative_error)


# ----------------------------------------------------------------- finite differences
@pytest.mark.parametrize("dim", DIMS)
def test_compiled_tangents_match_central_fd(dim, rng, assert_tangent_matches_fd):
    X = _reference(rng, N_EL, dim)
    u0, u1 = _state(rng, X), _state(rng, X)
    el = _group(rng, N_EL, dim)
    assert_tangent_matches_fd(el.force_and_tangent(X, u1)[1], lambda v: el.internal_force(X, v), u1,
                              f"compiled {dim}D truss tangent")
    assert_tangent_matches_fd(el.mid_point_force_and_tangent(X, u0, u1)[1],
                              lambda v: el.mid_point_force(X, u0, v), u1, f"compiled {dim}D mid-point tangent")


# ------------------------------------------------------------------------------ energy
@pytest.mark.parametrize("dim", DIMS)
def test_compiled_mid_point_force_gives_the_exact_energy_increment(dim, rng):
    X = _reference(rng, N_EL, dim)
    u0, u1 = _state(rng, X), _state(rng, X)
    el = _group(rng, N_EL, dim)
    work = np.einsum("ei,ei->e", el.mid_point_force(X, u0, u1), u1 - u0)
    phi0, phi1 = el.strain_energy(X, u0), el.strain_energy(X, u1)
    err = np.abs(work - (phi1 - phi0)) / (phi0 + phi1)
    worst = int(np.argmax(err))
    assert err[worst] < 1e-12, (f"compiled {dim}D mid-point force: q_m.(u1 - u0) misses Phi(u1) - Phi(u0) "
                                f"at element {worst} by {err[worst]:.2e} of the energy scale")
