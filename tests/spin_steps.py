"""Rotation steps on element DOF arrays of spatial elements with six DOFs per node
``[x (3), psi (3)]`` (Beam3D, Shell3), shared by their kernel tests: a Newton correction (spins)
and a mid-point step increment (Cayley parameters)."""
from __future__ import annotations

import numpy as np

from flexmb.rotations import cayley, cayley_from_matrix, compose, exp_map, log_map


def rotation_slices(n_dof: int) -> tuple[slice, ...]:
    """The rotation columns of each node of an element array with n_dof = 6 x nodes columns."""
    return tuple(slice(6 * k + 3, 6 * k + 6) for k in range(n_dof // 6))


def spin_update(u: np.ndarray, du: np.ndarray) -> np.ndarray:
    """u (n, 6 k) moved by du: translations add, rotations compose with du as a spatial spin."""
    out = u + du
    for s in rotation_slices(u.shape[1]):
        out[:, s] = compose(du[:, s], u[:, s])
    return out


def cayley_update(u0: np.ndarray, d: np.ndarray) -> np.ndarray:
    """End-of-step DOFs from the step increment d: translations add, R1 = cay(w) R0."""
    out = u0 + d
    for s in rotation_slices(u0.shape[1]):
        out[:, s] = log_map(cayley(d[:, s]) @ exp_map(u0[:, s]))
    return out


def cayley_increment(u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
    """Step increment d with u1 = cayley_update(u0, d) (rotation steps below a half turn)."""
    d = u1 - u0
    for s in rotation_slices(u0.shape[1]):
        d[:, s] = cayley_from_matrix(exp_map(u1[:, s]) @ exp_map(u0[:, s]).transpose(0, 2, 1))
    return d
