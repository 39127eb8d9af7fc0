"""Physical reaction forces of constraints and closing conditions (Blajer, Schiehlen & Schirm
1994, section 5).

The multipliers lambda of ``C^T lambda`` (or hat-lambda of the closing conditions) have no
physical meaning in general. With a distribution matrix B (m x n) of the physical reactions f,
``C^T lambda = B^T f`` (eq. 32), B obtained by virtual work (the Jacobian of the constrained
point along the directions of f), the reactions follow from the motion by any of

    (35)  f = (B M^{-1} B^T)^{-1} B ([0; xi] - M^{-1} h)
    (37)  [f; 0] = (T_bd M)^{-T} (M q'' - h),   T_bd M = [B; D M]
    (38)  B^T f = M q'' - h   (least squares; the residual is zero for the exact q'')

which give the same f (appendix B) when q'' satisfies the minimal equations.
"""
from __future__ import annotations

import numpy as np

from flexmb.checks import keywords_listed

Array = np.ndarray

SCHEMES = ("35", "37", "38")


@keywords_listed
def physical_reactions(scheme: str, M: Array, h: Array, B: Array, *, qdd: Array | None = None,
                       D: Array | None = None, xi_full: Array | None = None) -> Array:
    """Reactions f (m,) by scheme "35" (needs xi_full = [0; xi]), "37" (needs qdd and D) or
    "38" (needs qdd)."""
    M, h, B = np.asarray(M, float), np.asarray(h, float), np.atleast_2d(np.asarray(B, float))
    if scheme == "35":
        if xi_full is None:
            raise ValueError("scheme (35) needs xi_full = [0; xi]")
        Mi_Bt = np.linalg.solve(M, B.T)
        return np.linalg.solve(B @ Mi_Bt, B @ (xi_full - np.linalg.solve(M, h)))
    if qdd is None:
        raise ValueError(f"scheme ({scheme}) needs the accelerations qdd")
    rhs = M @ qdd - h
    if scheme == "37":
        if D is None:
            raise ValueError("scheme (37) needs D")
        T = np.vstack([B, D @ M])                     # T_bd M, eq. (36)
        return np.linalg.solve(T.T, rhs)[:B.shape[0]]
    if scheme == "38":
        return np.linalg.lstsq(B.T, rhs, rcond=None)[0]
    raise ValueError(f"reaction scheme must be one of {SCHEMES}, got {scheme!r}")
