"""Shared helpers of the element and assembly tests: seeded generator, batched finite differences."""
from __future__ import annotations

import os
from typing import Callable

import numpy as np
import pytest

SEED = 20240611

# the suite checks numba's kernels, as CI runs them: a developer's ahead-of-time module (`flexmb compile`)
# would serve them instead (tests/test_aot_kernels.py checks that module in processes of their own)
os.environ.setdefault("FLEXMB_AOT", "0")


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh generator with a fixed seed, so every test sees the same random elements."""
    return np.random.default_rng(SEED)


def _central_fd(fun: Callable[[np.ndarray], np.ndarray], u: np.ndarray, h: float) -> np.ndarray:
    """Central-difference Jacobian of a batched function f(u) (n_el, m) at u (n_el, ne).

    Returns (n_el, m, ne): column j is (f(u + h e_j) - f(u - h e_j)) / (2 h), for all elements at once.
    """
    cols = []
    for j in range(u.shape[1]):
        du = np.zeros_like(u)
        du[:, j] = h
        cols.append((fun(u + du) - fun(u - du)) / (2.0 * h))          # (n_el, m)
    return np.stack(cols, axis=2)                                       # (n_el, m, ne)


def _relative_error(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Per-element ||A - B|| / ||B|| over all axes but the first, (n_el,)."""
    axes = tuple(range(1, A.ndim))
    return np.sqrt(np.sum((A - B) ** 2, axis=axes) / np.sum(B ** 2, axis=axes))


@pytest.fixture
def central_fd() -> Callable[[Callable[[np.ndarray], np.ndarray], np.ndarray, float], np.ndarray]:
    return _central_fd


@pytest.fixture
def relative_error() -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    return _relative_error



def _assert_tangent_matches_fd(K: np.ndarray, force: Callable[[np.ndarray], np.ndarray], u: np.ndarray,
                               label: str, h: float = 1e-6, tol: float = 1e-6) -> None:
    """Assert K (n_el, m, ne) equals the central-difference Jacobian of ``force`` at u, per element."""
    err = _relative_error(K, _central_fd(force, u, h))
    worst = int(np.argmax(err))
    assert err[worst] < tol, f"{label} vs central FD: element {worst} off by {err[worst]:.2e} (relative)"


@pytest.fixture
def assert_tangent_matches_fd() -> Callable[..., None]:
    return _assert_tangent_matches_fd


def _numbers_or_words(text: str) -> list[list[float | str]]:
    """Every line of ``text`` as its whitespace-separated tokens, numbers parsed as floats."""
    def token(word: str) -> float | str:
        try:
            return float(word)
        except ValueError:
            return word
    return [[token(w) for w in line.split()] for line in text.splitlines()]


def _assert_same_text_up_to_round_off(stored: str, made: str, label: str, rtol: float = 1e-12) -> None:
    """Assert two texts hold the same words and the same numbers to ``rtol`` times the largest
    number in them: generated files are compared as numbers, never as bytes, because the last digit
    of computed floats differs between BLAS and LAPACK builds."""
    a, b = _numbers_or_words(stored), _numbers_or_words(made)
    assert len(a) == len(b), f"{label}: {len(a)} lines stored, {len(b)} made"
    scale = max((abs(t) for line in a for t in line if isinstance(t, float)), default=1.0)
    for k, (x, y) in enumerate(zip(a, b)):
        assert len(x) == len(y), f"{label}, line {k + 1}: {len(x)} tokens stored, {len(y)} made"
        for s, m in zip(x, y):
            same = (abs(s - m) <= rtol * scale if isinstance(s, float) and isinstance(m, float) else s == m)
            assert same, f"{label}, line {k + 1}: stored {s!r}, made {m!r} (tolerance {rtol * scale:.1e})"


@pytest.fixture
def assert_same_text_up_to_round_off() -> Callable[..., None]:
    return _assert_same_text_up_to_round_off
