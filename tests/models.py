"""Small models shared by several test files."""
from __future__ import annotations

import numpy as np

import flexmb as fm


def truss_bays(n_bays: int = 4, EA: float = 1e5, rho_A: float = 0.0):
    """Plane truss cantilever geometry: square 1 m bays with diagonals, no supports or loads.

    Returns (model, bottom node indices, top node indices).
    """
    m = fm.Model(dim=2)
    bottom = m.add_nodes(np.c_[np.arange(n_bays + 1.0), np.zeros(n_bays + 1)])
    top = m.add_nodes(np.c_[np.arange(n_bays + 1.0), np.ones(n_bays + 1)])
    bars = ([[bottom[i], bottom[i + 1]] for i in range(n_bays)]
            + [[top[i], top[i + 1]] for i in range(n_bays)]
            + [[bottom[i], top[i]] for i in range(1, n_bays + 1)]
            + [[bottom[i], top[i + 1]] for i in range(n_bays)])
    m.add_truss(np.array(bars), EA=EA, rho_A=rho_A)
    return m, bottom, top
