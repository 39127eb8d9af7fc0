"""Compiled start value of a time step for models without spatial rotations
(:meth:`flexmb.integrators.schemes.Scheme.predict` explains the rule; its numpy form of the
spatial case and of the second start ``rigid=False`` uses the same operations in the same order).
A small model's step spent 20-30 us in the numpy form's dozen array operations.
"""
from __future__ import annotations

import math

import numba
import numpy as np


@numba.njit(cache=True)
def planar_rigid_prediction(u: np.ndarray, v: np.ndarray, a: np.ndarray, dt: float, rz: np.ndarray) -> np.ndarray:
    """u_{n+1} start value (n_dof,) from u, v, a (n_dof,): every DOF extrapolated with the last
    acceleration, ``u + (dt v + dt^2 / 2 a)``, except the nodes with a planar rotation, DOFs
    rz (n_r,) with their translations at rz - 2, rz - 1: they move as if rigidly attached to their
    rotation, ``dx = dt T(dt omega) v`` with ``T(theta) = (sin theta / theta) I
    + ((1 - cos theta) / theta) J``, and turn by dt omega."""
    half_dt2 = 0.5 * dt**2
    out = np.empty(u.size)
    for k in range(u.size):
        out[k] = u[k] + (dt * v[k] + half_dt2 * a[k])
    for r in rz:
        theta = dt * v[r]
        if abs(theta) < 1e-4:
            along, across = 1.0 - theta**2 / 6.0, 0.5 * theta
        else:
            along, across = math.sin(theta) / theta, (1.0 - math.cos(theta)) / theta
        vx, vy = v[r - 2], v[r - 1]
        out[r - 2] = u[r - 2] + dt * (along * vx - across * vy)
        out[r - 1] = u[r - 1] + dt * (across * vx + along * vy)
        out[r] = u[r] + theta
    return out
