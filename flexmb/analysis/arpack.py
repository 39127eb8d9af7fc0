"""The start vector of every ARPACK call (``scipy.sparse.linalg.eigsh`` / ``eigs``).

ARPACK draws its start vector from a random state that lives in the process and moves on with
every call, so the same eigenproblem solved twice in one process, or in a fresh worker process,
could differ at round-off (1e-14 relative, seen in design studies run serially and on Dask).
A fixed, seeded start vector makes every solve reproducible; being random-like, it is not
orthogonal to any eigenvector in practice.
"""
from __future__ import annotations

import numpy as np

_SEED = 20261123


def start_vector(n: int) -> np.ndarray:
    """The start vector (n,) for an ARPACK problem of size n: the same for every call."""
    return np.random.default_rng(_SEED).standard_normal(n)
