"""Post-processing of time series."""
from __future__ import annotations

import numpy as np


def upward_crossings(t: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Times where y crosses zero from below, by linear interpolation (n_crossings,)."""
    i = np.flatnonzero((y[:-1] < 0.0) & (y[1:] >= 0.0))
    return t[i] - y[i] * (t[i + 1] - t[i]) / (y[i + 1] - y[i])


def mean_period(t: np.ndarray, y: np.ndarray) -> float:
    """Mean period from the first to the last upward zero crossing; NaN with fewer than two."""
    c = upward_crossings(t, y)
    return float((c[-1] - c[0]) / (c.size - 1)) if c.size >= 2 else float("nan")


def logarithmic_decrement(y: np.ndarray) -> float:
    """Mean logarithmic decrement ln(y_k / y_{k+1}) of successive positive peaks of a sampled
    decaying oscillation y (n,), each peak the vertex of the parabola through its three samples;
    NaN with fewer than two peaks."""
    k = np.flatnonzero((y[1:-1] > y[:-2]) & (y[1:-1] >= y[2:]) & (y[1:-1] > 0.0)) + 1
    if k.size < 2:
        return float("nan")
    a, b, c = y[k - 1], y[k], y[k + 1]
    peaks = b - 0.125 * (c - a) ** 2 / (a - 2.0 * b + c)
    return float(np.mean(np.log(peaks[:-1] / peaks[1:])))
