"""The compiled SO(3) maps (flexmb.compiled.rotations behind flexmb.rotations) against their numpy
specifications ``reference_*`` to 1e-12, and their derivatives against central differences.

Samples: large rotations (up to pi, and several turns where the map is defined there), tiny ones
(inside the series branches), ones next to the series threshold and next to pi; batches with
leading shapes (2, n) to check the reshaping of the wrappers.
"""
from __future__ import annotations

import numpy as np
import pytest

from flexmb import rotations as rot

TOL = 1e-12


def _vectors(rng: np.random.Generator, n: int, hi: float) -> np.ndarray:
    axes = rng.normal(size=(n, 3))
    axes /= np.linalg.norm(axes, axis=1)[:, None]
    return rng.uniform(0.0, hi, n)[:, None] * axes


def _samples(rng: np.random.Generator, hi: float = np.pi) -> np.ndarray:
    """Rotation vectors (2, 130, 3): large, tiny, around the series threshold, near hi."""
    large = _vectors(rng, 60, hi)
    tiny = _vectors(rng, 20, 1.0) * 10.0 ** rng.uniform(-12.0, -5.0, 20)[:, None]
    edge = _vectors(rng, 30, 1.0)
    edge *= (rot._SMALL * (1.0 + rng.uniform(-1e-3, 1e-3, 30)) / np.linalg.norm(edge, axis=1))[:, None]
    near = _vectors(rng, 20, 1.0)
    near *= ((hi - 10.0 ** rng.uniform(-9.0, -3.0, 20)) / np.linalg.norm(near, axis=1))[:, None]
    return np.concatenate([large, tiny, edge, near]).reshape(2, -1, 3)


def _check(name: str, got: np.ndarray, want: np.ndarray, scale: float = 1.0) -> None:
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    err = np.abs(got - want).max() / max(scale, np.abs(want).max())
    assert err <= TOL, f"{name}: compiled differs from reference_{name} by {err:.2e} (relative; allowed {TOL:g})"


@pytest.mark.parametrize("name", ["exp_map", "tangent_operator", "cayley", "cayley_resolvent"])
def test_vector_maps_equal_their_reference(name):
    rng = np.random.default_rng(1)
    for hi in (np.pi, 3.0 * np.pi):
        psi = _samples(rng, hi)
        _check(name, getattr(rot, name)(psi), getattr(rot, f"reference_{name}")(psi))
        _check(name, getattr(rot, name)(psi[0, 0]), getattr(rot, f"reference_{name}")(psi[0, 0]))


@pytest.mark.parametrize("name", ["log_map", "cayley_from_matrix"])
def test_matrix_maps_equal_their_reference(name):
    rng = np.random.default_rng(2)
    R = rot.reference_exp_map(_samples(rng, np.pi - 1e-6))
    # a few exact matrices too: identity and half turns about the axes (Shepperd's branches)
    special = np.concatenate([np.eye(3)[None], np.diag([1.0, -1.0, -1.0])[None], np.diag([-1.0, 1.0, -1.0])[None]])
    want = getattr(rot, f"reference_{name}")(R)
    _check(name, getattr(rot, name)(R), want)
    if name == "log_map":
        _check(name, rot.log_map(special), rot.reference_log_map(special))


def test_compose_equals_its_reference_and_broadcasts():
    rng = np.random.default_rng(3)
    spin, psi = _samples(rng, 0.5), _samples(rng, np.pi - 1e-3)
    _check("compose", rot.compose(spin, psi), rot.reference_compose(spin, psi))
    _check("compose", rot.compose(spin[0, 3], psi), rot.reference_compose(spin[0, 3], psi))


def test_fused_kernels_equal_the_composition_of_the_reference_maps():
    """cayley_compose, cayley_between and rotated_inertia (R J R^T), which the assembly uses."""
    rng = np.random.default_rng(4)
    psi0 = _samples(rng, np.pi - 1e-2).reshape(-1, 3)
    w = 0.3 * rng.normal(size=psi0.shape)
    want = rot.reference_log_map(rot.reference_cayley(w) @ rot.reference_exp_map(psi0))
    _check("cayley_compose", rot.cayley_compose(w, psi0), want)
    R0, R1 = rot.reference_exp_map(psi0), rot.reference_exp_map(want)
    _check("cayley_between", rot.cayley_between(psi0, want),
           rot.reference_cayley_from_matrix(R1 @ R0.transpose(0, 2, 1)))
    _check("cayley_between", rot.cayley_between(psi0, want), w, scale=1.0)
    A = rng.normal(size=(len(psi0), 3, 3))
    J = A @ A.transpose(0, 2, 1)
    _check("rotated_inertia", rot.rotated_inertia(psi0, J), R0 @ J @ R0.transpose(0, 2, 1))


def test_compiled_derivatives_match_central_differences():
    """T(psi): d exp(psi) exp(psi)^T = hat(T dpsi); G(w): e_1 = cay(w) e_0 moves by
    d e_1 = -G(w) hat(e_m) dw, e_m = (e_0 + e_1) / 2."""
    rng = np.random.default_rng(5)
    psi = _vectors(rng, 40, 3.0)
    e0 = rng.normal(size=(40, 3))
    h = 1e-6
    T, G = rot.tangent_operator(psi), rot.cayley_resolvent(psi)
    em = 0.5 * (e0 + np.einsum("nij,nj->ni", rot.cayley(psi), e0))
    dcay = -G @ rot.skew(em)                                                  # (n, 3, 3)
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        dR = (rot.exp_map(psi + e) - rot.exp_map(psi - e)) / (2.0 * h) @ rot.exp_map(psi).transpose(0, 2, 1)
        err = np.abs(rot.axial(dR) - T[:, :, j]).max() / np.abs(T).max()
        assert err < 1e-6, f"tangent_operator: column {j} misses central differences by {err:.2e}"
        de1 = np.einsum("nij,nj->ni", (rot.cayley(psi + e) - rot.cayley(psi - e)) / (2.0 * h), e0)
        err = np.abs(de1 - dcay[:, :, j]).max() / np.abs(dcay).max()
        assert err < 1e-6, f"cayley_resolvent: column {j} misses central differences by {err:.2e}"


def test_mid_point_rotary_inertia_equals_its_reference_and_its_derivative():
    """flexmb.compiled.rigid (MidPoint's rotating nodes): Omega_{n+1}, the inertia term
    (pi_{n+1} - pi_n)/dt and its derivative w.r.t. the step's Cayley parameters w."""
    from flexmb.compiled.rigid import mid_point_body_rates, mid_point_rotary_terms
    from flexmb.integrators.schemes import reference_mid_point_body_rates, reference_mid_point_rotary_terms

    rng = np.random.default_rng(6)
    n, dt = 30, 0.01
    psi0 = _vectors(rng, n, 3.0)
    w = 0.4 * rng.normal(size=(n, 3))
    omega0 = 20.0 * rng.normal(size=(n, 3))
    A = rng.normal(size=(n, 3, 3))
    J = A @ A.transpose(0, 2, 1) + np.eye(3)
    psi1 = rot.cayley_compose(w, psi0)
    rates = mid_point_body_rates(psi0, psi1, w, omega0, dt)
    for name, got, want in zip(("R_n", "R_n+1", "Omega_n+1"), rates,
                               reference_mid_point_body_rates(psi0, psi1, w, omega0, dt)):
        _check(name, got, want)
    inertia, blocks = mid_point_rotary_terms(*rates, J, omega0, w, dt)
    want_inertia, want_blocks = reference_mid_point_rotary_terms(*rates, J, omega0, w, dt)
    _check("rotary inertia", inertia, want_inertia)
    _check("rotary inertia tangent", blocks, want_blocks)

    def term(w_: np.ndarray) -> np.ndarray:
        rates_ = mid_point_body_rates(psi0, rot.cayley_compose(w_, psi0), w_, omega0, dt)
        return mid_point_rotary_terms(*rates_, J, omega0, w_, dt)[0]

    h = 1e-7
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        fd = (term(w + e) - term(w - e)) / (2.0 * h)
        err = np.abs(fd - blocks[:, :, j]).max() / np.abs(blocks).max()
        assert err < 1e-6, f"rotary inertia tangent: column {j} misses central differences by {err:.2e}"


def test_newmark_rotary_inertia_equals_its_reference_and_its_derivative():
    """flexmb.compiled.rigid (Newmark's rotating nodes): body rates, the inertia moment
    R_{n+1} (J A + Omega x J Omega) and its derivative w.r.t. a spin of R_{n+1}."""
    from flexmb.compiled.rigid import newmark_body_rates, newmark_rotary_terms
    from flexmb.integrators.schemes import reference_newmark_body_rates, reference_newmark_rotary_terms

    rng = np.random.default_rng(7)
    n, dt = 30, 0.01
    psi0 = _vectors(rng, n, 3.0)
    omega0, alpha0 = 20.0 * rng.normal(size=(n, 3)), 500.0 * rng.normal(size=(n, 3))
    A = rng.normal(size=(n, 3, 3))
    J = A @ A.transpose(0, 2, 1) + np.eye(3)
    theta = 0.4 * rng.normal(size=(n, 3))

    def terms(th: np.ndarray):
        psi1 = rot.compose(th, psi0)
        rates = newmark_body_rates(psi0, psi1, th, omega0, alpha0, dt)
        return rates, newmark_rotary_terms(th, *rates, J, dt)

    rates, (inertia, blocks) = terms(theta)
    for name, got, want in zip(("R_n", "R_n+1", "Omega_n+1", "A_n+1"), rates,
                               reference_newmark_body_rates(psi0, rot.compose(theta, psi0), theta, omega0, alpha0, dt)):
        _check(name, got, want)
    want_inertia, want_blocks = reference_newmark_rotary_terms(theta, *rates, J, dt)
    _check("Newmark rotary inertia", inertia, want_inertia)
    _check("Newmark rotary inertia tangent", blocks, want_blocks)
    # derivative w.r.t. a spin s of R_{n+1}: theta(s) = log(exp(s) exp(theta))
    h = 1e-7
    for j in range(3):
        e = np.zeros((n, 3))
        e[:, j] = h
        plus = terms(rot.compose(e, theta))[1][0]
        minus = terms(rot.compose(-e, theta))[1][0]
        fd = (plus - minus) / (2.0 * h)
        err = np.abs(fd - blocks[:, :, j]).max() / np.abs(blocks).max()
        assert err < 1e-6, f"Newmark rotary inertia tangent: column {j} misses central differences by {err:.2e}"
