"""The compiled spatial beam kernels (:mod:`flexmb.compiled.beam3d`) against their numpy
specification (``Beam3D.reference_*``) and against finite differences.

Random batches (fixed seed) of anisotropic sections (EI_y != EI_z, random y axes or the default
axes), with and without shear deformation and second-order strains. States: nodal rotation
vectors of several turns (|psi| up to 6 pi, not principal values), random translations of metres
and local deformation up to 0.8 rad and 30 % stretch; mid-point steps turn by up to 2 rad. The
kernels must equal the reference to 1e-12 relative (per element, Frobenius norm); their
derivatives are checked by central differences of spins (static) and Cayley parameters
(mid-point), as in ``test_beam3d.py``, and the mid-point force must give the energy increment to
round-off. The kernels are also called on single elements and on an empty batch, as multibody
models do every Newton iteration.
"""
from __future__ import annotations

import numpy as np
import pytest
from spin_steps import cayley_increment, cayley_update, spin_update

from flexmb.checks import ModelError
from flexmb.elements.beam3d import Beam3D
from flexmb.rotations import exp_map, log_map

N_EL = 200
N_FD = 40
ROT = (slice(3, 6), slice(9, 12))
SECTIONS = [pytest.param(so, shear, axes,
                         id=f"{'2nd' if so else '1st'}-order-{'shear' if shear else 'rigid-shear'}-{axes}")
            for so, shear, axes in ((False, False, "given"), (False, True, "default"), (True, False, "default"),
                                    (True, True, "given"))]
REFERENCE_TOL = 1e-12


# ------------------------------------------------------------------------------ helpers
def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=1)[:, None]                      # (n, 3)


def _group(rng: np.random.Generator, n: int, second_order: bool, shear: bool, axes: str) -> Beam3D:
    ga = (lambda: 10.0 ** rng.uniform(2.0, 4.0, n)) if shear else (lambda: np.inf)
    return Beam3D(np.zeros((n, 2), dtype=int), EA=10.0 ** rng.uniform(3.0, 5.0, n),
                  GJ=10.0 ** rng.uniform(1.0, 3.0, n), EI_y=10.0 ** rng.uniform(1.0, 3.0, n),
                  EI_z=10.0 ** rng.uniform(1.0, 3.0, n), GA_ky=ga(), GA_kz=ga(),
                  y_axis=_unit(rng, n) if axes == "given" else None, second_order=second_order)


def _reference(rng: np.random.Generator, n: int) -> np.ndarray:
    """X (n, 2, 3): random position and direction (a few exactly along z), length 0.5..3 m."""
    X1 = rng.uniform(-2.0, 2.0, (n, 3))
    axis = _unit(rng, n)
    axis[:3] = [[0.0, 0.0, 1.0], [0.0, 0.0, -1.0], [0.0, 0.0, 1.0]]    # default y axis: the global y
    return np.stack([X1, X1 + rng.uniform(0.5, 3.0, n)[:, None] * axis], axis=1)


def _several_turns(rng: np.random.Generator, psi: np.ndarray) -> np.ndarray:
    """The same rotations (n, 3) as rotation vectors lengthened by 0..2 whole turns."""
    t = np.linalg.norm(psi, axis=1)
    return psi * ((t + 2.0 * np.pi * rng.integers(0, 3, len(psi))) / t)[:, None]


def _state(rng: np.random.Generator, X: np.ndarray, Q: np.ndarray, local: float, strain: float) -> np.ndarray:
    """Element DOFs (n, 12): rigid rotation Q (n, 3, 3), chord tilted by local/2 and stretched by
    +-strain, nodal rotations Q followed by up to ``local`` rad each, written with several turns."""
    n = len(X)
    X21 = X[:, 1] - X[:, 0]
    tilt = exp_map(rng.uniform(0.0, 0.5 * local, n)[:, None] * _unit(rng, n))
    chord = np.einsum("eij,ej->ei", tilt @ Q, X21)
    length = np.linalg.norm(X21, axis=1) * (1.0 + rng.uniform(-strain, strain, n))
    chord *= (length / np.linalg.norm(chord, axis=1))[:, None]
    d_p = rng.uniform(-3.0, 3.0, (n, 3))
    d_q = X[:, 0] + d_p + chord - X[:, 1]
    psi = [_several_turns(rng, log_map(exp_map(rng.uniform(0.0, local, n)[:, None] * _unit(rng, n)) @ Q))
           for _ in range(2)]
    return np.concatenate([d_p, psi[0], d_q, psi[1]], axis=1)


def _random_rotations(rng: np.random.Generator, n: int, max_angle: float = np.pi) -> np.ndarray:
    return exp_map(rng.uniform(0.0, max_angle, n)[:, None] * _unit(rng, n))  # (n, 3, 3)


def _step(rng: np.random.Generator, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """u0, u1 (n, 12): a rigid turn of up to 2 rad and independent local deformations (nodal
    increments below a half turn)."""
    n = len(X)
    Q0 = _random_rotations(rng, n)
    u0 = _state(rng, X, Q0, 0.4, 0.3)
    return u0, _state(rng, X, _random_rotations(rng, n, 2.0) @ Q0, 0.4, 0.3)


def _assert_equal_to_reference(label: str, value: np.ndarray, reference: np.ndarray, relative_error) -> None:
    assert value.shape == reference.shape, f"{label}: shape {value.shape} vs reference {reference.shape}"
    err = relative_error(value.reshape(len(value), -1), reference.reshape(len(reference), -1))
    worst = int(np.argmax(err))
    assert err[worst] < REFERENCE_TOL, \
        f"{label}: element {worst} differs from the reference by {err[worst]:.2e} (relative)"


# ---------------------------------------------------------------------------- reference
@pytest.mark.parametrize("second_order, shear, axes", SECTIONS)
def test_static_kernels_equal_the_reference(second_order, shear, axes, rng, relative_error):
    X = _reference(rng, N_EL)
    el = _group(rng, N_EL, second_order, shear, axes)
    u = _state(rng, X, _random_rotations(rng, N_EL), 0.8, 0.3)
    assert np.linalg.norm(u[:, 3:6], axis=1).max() > 4.0 * np.pi, "the batch should hold rotations of several turns"
    q_ref, K_ref, terms = el.reference_static(X, u)
    q, K = el.force_and_tangent(X, u)
    stresses = rng.normal(size=(N_EL, 6)) * el.EA[:, None]
    for label, value, reference in [
            ("force", q, q_ref), ("tangent", K, K_ref), ("internal_force", el.internal_force(X, u), q_ref),
            ("strain_energy", el.strain_energy(X, u)[:, None], terms["phi"][:, None]),
            ("strains", el.strains(X, u), terms["ebar"]),
            ("generalized_stresses", el.generalized_stresses(X, u), terms["sigma"]),
            ("geometric_stiffness", el.geometric_stiffness(X, u, stresses),
             el.reference_geometric_stiffness(X, u, stresses))]:
        _assert_equal_to_reference(f"{label} (second_order={second_order}, shear={shear}, {axes} axes)",
                                   value, reference, relative_error)


@pytest.mark.parametrize("second_order, shear, axes", SECTIONS)
def test_mid_point_kernels_equal_the_reference(second_order, shear, axes, rng, relative_error):
    X = _reference(rng, N_EL)
    el = _group(rng, N_EL, second_order, shear, axes)
    u0, u1 = _step(rng, X)
    small = cayley_update(u0, rng.uniform(-1e-4, 1e-4, (N_EL, 12)))   # the quadrature alone is exact
    for kind, end in (("large step", u1), ("small step", small), ("zero step", u0)):
        q_ref, K_ref = el.reference_mid_point_force_and_tangent(X, u0, end)
        q, K = el.mid_point_force_and_tangent(X, u0, end)
        label = f"mid-point {{}} ({kind}, second_order={second_order}, shear={shear}, {axes} axes)"
        _assert_equal_to_reference(label.format("force"), q, q_ref, relative_error)
        _assert_equal_to_reference(label.format("tangent"), K, K_ref, relative_error)
        _assert_equal_to_reference(label.format("force alone"), el.mid_point_force(X, u0, end), q_ref, relative_error)


# ------------------------------------------------------------------------- derivatives
@pytest.mark.parametrize("second_order, shear, axes", SECTIONS)
def test_tangent_of_several_turn_states_matches_central_fd(second_order, shear, axes, rng,
                                                           assert_tangent_matches_fd):
    X = _reference(rng, N_FD)
    el = _group(rng, N_FD, second_order, shear, axes)
    u = _state(rng, X, _random_rotations(rng, N_FD), 0.8, 0.3)
    _, K = el.force_and_tangent(X, u)
    assert_tangent_matches_fd(K, lambda du: el.internal_force(X, spin_update(u, du)), np.zeros_like(u),
                              f"compiled beam3d tangent (second_order={second_order}, shear={shear})")


@pytest.mark.parametrize("second_order, shear, axes", SECTIONS)
def test_mid_point_tangent_and_energy_increment_of_large_steps(second_order, shear, axes, rng,
                                                               assert_tangent_matches_fd):
    X = _reference(rng, N_FD)
    el = _group(rng, N_FD, second_order, shear, axes)
    u0, u1 = _step(rng, X)
    d = cayley_increment(u0, u1)
    q, K = el.mid_point_force_and_tangent(X, u0, u1)
    assert_tangent_matches_fd(K, lambda v: el.mid_point_force(X, u0, cayley_update(u0, v)), d,
                              f"compiled beam3d mid-point tangent (second_order={second_order}, shear={shear})")
    phi0, phi1 = el.strain_energy(X, u0), el.strain_energy(X, u1)
    miss = np.abs(np.einsum("ei,ei->e", q, d) - (phi1 - phi0)) / np.maximum(phi0, phi1)
    worst = int(np.argmax(miss))
    assert miss[worst] < 1e-13, f"q_m . d - (Phi1 - Phi0): element {worst} misses by {miss[worst]:.2e} of Phi"


# ------------------------------------------------------------------------- small batches
def test_single_elements_and_empty_batches(rng):
    X = _reference(rng, 5)
    el = _group(rng, 5, True, True, "given")
    u0, u1 = _step(rng, X)
    q, K = el.force_and_tangent(X, u1)
    qm, Km = el.mid_point_force_and_tangent(X, u0, u1)
    for e in range(5):
        one = _group(np.random.default_rng(0), 1, True, True, "given")
        for name in ("EA", "GJ", "EI_y", "EI_z", "GA_ky", "GA_kz", "y_axis"):
            setattr(one, name, getattr(el, name)[e:e + 1].copy())
        q1, K1 = one.force_and_tangent(X[e:e + 1], u1[e:e + 1])
        qm1, Km1 = one.mid_point_force_and_tangent(X[e:e + 1], u0[e:e + 1], u1[e:e + 1])
        for label, a, b in (("force", q1[0], q[e]), ("tangent", K1[0], K[e]), ("mid-point force", qm1[0], qm[e]),
                            ("mid-point tangent", Km1[0], Km[e])):
            np.testing.assert_array_equal(a, b, err_msg=f"{label} of element {e} alone differs from the batch")
    none = Beam3D(np.zeros((0, 2), dtype=int), 1.0, 1.0, 1.0, 1.0)
    X0, u0 = np.zeros((0, 2, 3)), np.zeros((0, 12))
    q0, K0 = none.force_and_tangent(X0, u0)
    assert q0.shape == (0, 12) and K0.shape == (0, 12, 12), f"empty batch gives {q0.shape}, {K0.shape}"
    assert none.mid_point_force_and_tangent(X0, u0, u0)[1].shape == (0, 12, 12)
    assert none.strain_energy(X0, u0).shape == (0,)


def test_kernels_refuse_a_y_axis_parallel_to_the_element():
    X = np.array([[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], [[1.0, 0.0, 0.0], [1.0, 2.0, 0.0]]])
    el = Beam3D(np.array([[0, 1], [1, 2]]), 1.0, 1.0, 1.0, 1.0, y_axis=[[0.0, 0.0, 1.0], [0.0, -3.0, 0.0]])
    u = np.zeros((2, 12))
    for label, call in (("force_and_tangent", lambda: el.force_and_tangent(X, u)),
                        ("mid_point_force", lambda: el.mid_point_force(X, u, u)),
                        ("strain_energy", lambda: el.strain_energy(X, u))):
        with pytest.raises(ModelError, match=r"y_axis of element 1\b.*parallel"):
            call()
