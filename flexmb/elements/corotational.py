"""Chord kinematics shared by the co-rotational truss and beam kernels.

The stretch ``l - l0`` of a nearly rigid bar is ~1e-8 of its length, so it is computed without
cancellation as ``(2 X21.d21 + d21.d21) / (l + l0)`` (Crisfield & Shi 1993, eq. 11 rearranged).

:func:`chord` is the batched numpy form (the ``reference_*`` kernels and the geometric stiffness
use it); the compiled truss and beam kernels call its per-element twin
:func:`flexmb.compiled.corotational.chord`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Chord:
    """Chord of two-node elements in the reference and current configuration."""

    X21: np.ndarray      # (n_el, dim) reference chord, m
    x21: np.ndarray      # (n_el, dim) current chord, m
    l0: np.ndarray       # (n_el,) reference length, m
    l: np.ndarray        # (n_el,) current length, m
    stretch: np.ndarray  # (n_el,) l - l0 without cancellation, m

    @property
    def e(self) -> np.ndarray:
        """Unit vector along the current chord (n_el, dim)."""
        return self.x21 / self.l[:, None]


def chord(X: np.ndarray, d1: np.ndarray, d2: np.ndarray) -> Chord:
    """Chord from reference node positions X (n_el, 2, dim) and nodal translations d1, d2 (n_el, dim)."""
    X21 = X[:, 1] - X[:, 0]                                           # (n_el, dim)
    d21 = d2 - d1                                                     # (n_el, dim)
    x21 = X21 + d21                                                   # (n_el, dim)
    l0 = np.linalg.norm(X21, axis=1)                                  # (n_el,)
    l = np.linalg.norm(x21, axis=1)                                   # (n_el,)
    stretch = (2.0 * np.einsum("ei,ei->e", X21, d21) + np.einsum("ei,ei->e", d21, d21)) / (l + l0)
    return Chord(X21, x21, l0, l, stretch)
