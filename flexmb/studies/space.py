"""Parameter spaces of a design study: grids, Latin hypercubes, random samples, explicit lists.

A space is an ordered, immutable sequence of variants; a variant is a dict ``name -> float`` over
the same parameter names. Every variant has a stable id (:func:`variant_id`, a short hash of its
names and values), so that a resumed study recognises the variants it has already computed,
whatever the order or the kind of the space that produced them.

Sampling follows McKay, Beckman & Conover (1979): a Latin hypercube of n samples cuts each
parameter's range into n equal bins and puts exactly one sample in every bin of every parameter,
the bins of different parameters paired by independent random permutations.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from flexmb.checks import ModelError

#: the distributions :func:`random_samples` draws from, with their parameters
DISTRIBUTIONS = {"uniform": ("low", "high"), "normal": ("mean", "std"), "lognormal": ("mean of log", "std of log")}


def variant_id(params: Mapping[str, float]) -> str:
    """A 12-character hex id of a variant: SHA-1 of its names and values (``repr`` of each float,
    which round-trips exactly), sorted by name, so that the same values give the same id in every
    run and process."""
    text = json.dumps([[name, repr(float(params[name]))] for name in sorted(params)])
    return hashlib.sha1(text.encode()).hexdigest()[:12]


class Space(Sequence[dict]):
    """An ordered sequence of variants (dicts ``name -> float``) over :attr:`names`.

    ``kind`` says how it was made ("grid", "latin hypercube", "random", "variants"); the plots
    draw lines through grids and scatter matrices of sampled spaces.
    """

    def __init__(self, names: Sequence[str], values: np.ndarray, kind: str) -> None:
        values = np.asarray(values, dtype=float)                   # (n_variants, n_names)
        if values.ndim != 2 or values.shape[1] != len(names):
            raise ModelError(f"a space needs one value per parameter {list(names)} per variant, got an array "
                             f"of shape {values.shape}")
        if len(values) == 0:
            raise ModelError("a space needs at least one variant")
        bad = np.argwhere(~np.isfinite(values))
        if len(bad):
            i, j = bad[0]
            raise ModelError(f"variant {i}: parameter {names[j]!r} = {values[i, j]} is not a finite number")
        self.names: tuple[str, ...] = tuple(names)
        self.values = values
        self.values.flags.writeable = False
        self.kind = kind
        self.ids: tuple[str, ...] = tuple(variant_id(v) for v in self)
        seen: dict[str, int] = {}
        for i, vid in enumerate(self.ids):
            if vid in seen:
                raise ModelError(f"variants {seen[vid]} and {i} of the {kind} space are the same: "
                                 f"{self[i]} (each variant must differ)")
            seen[vid] = i

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, i):                                       # type: ignore[override]
        if isinstance(i, slice):
            return Space(self.names, self.values[i], self.kind)
        return {name: float(x) for name, x in zip(self.names, self.values[i])}

    def __iter__(self) -> Iterator[dict]:
        for row in self.values:
            yield {name: float(x) for name, x in zip(self.names, row)}

    def __repr__(self) -> str:
        return f"Space({self.kind}, {len(self)} variants of {', '.join(self.names)})"


def _check_names(names: Sequence[str], what: str) -> None:
    if not names:
        raise ModelError(f"{what} needs at least one parameter")
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            raise ModelError(f"{what}: parameter name {name!r} must be a Python identifier (e.g. EI, rho_A)")


def _count(n: int, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ModelError(f"{what}: n = {n!r} must be a positive integer (the number of samples)")
    return int(n)


def grid(**levels: Sequence[float]) -> Space:
    """The Cartesian product of the levels of each parameter, the last parameter varying fastest
    (``grid(a=[1, 2], b=[3, 4])``: (1, 3), (1, 4), (2, 3), (2, 4))."""
    _check_names(list(levels), "grid")
    columns = []
    for name, values in levels.items():
        column = np.atleast_1d(np.asarray(values, dtype=float))
        if column.ndim != 1 or len(column) == 0:
            raise ModelError(f"grid: parameter {name!r} needs a non-empty list of levels, got {values!r}")
        if len(np.unique(column)) != len(column):
            raise ModelError(f"grid: parameter {name!r} repeats a level: {list(column)}")
        columns.append(column)
    rows = np.array(list(itertools.product(*columns)), dtype=float)   # (prod(levels), n_names)
    return Space(list(levels), rows, "grid")


def _ranges(ranges: Mapping[str, tuple[float, float]], what: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    names = list(ranges)
    _check_names(names, what)
    low, high = [], []
    for name, bounds in ranges.items():
        try:
            a, b = (float(x) for x in bounds)
        except (TypeError, ValueError):
            raise ModelError(f"{what}: parameter {name!r} needs a range (low, high), got {bounds!r}") from None
        if not (math.isfinite(a) and math.isfinite(b) and a < b):
            raise ModelError(f"{what}: parameter {name!r} range ({a}, {b}) needs finite low < high")
        low.append(a)
        high.append(b)
    return names, np.array(low), np.array(high)


def latin_hypercube(ranges: Mapping[str, tuple[float, float]], n: int, seed: int | None = 0) -> Space:
    """``n`` samples, uniform over the ranges ``{name: (low, high)}``, one in each of the ``n``
    equal bins of every parameter (McKay et al. 1979); the same ``seed`` gives the same samples."""
    names, low, high = _ranges(ranges, "latin_hypercube")
    n = _count(n, "latin_hypercube")
    rng = np.random.default_rng(seed)
    bins = np.column_stack([rng.permutation(n) for _ in names])          # (n, n_names) bin of each sample
    unit = (bins + rng.random((n, len(names)))) / n                      # (n, n_names) in [0, 1)
    return Space(names, low + unit * (high - low), "latin hypercube")


def random_samples(distributions: Mapping[str, tuple], n: int, seed: int | None = 0) -> Space:
    """``n`` independent samples, each parameter from its distribution ``(kind, a, b)``:
    ``("uniform", low, high)``, ``("normal", mean, std)`` or ``("lognormal", mean, std)`` of
    the logarithm (numpy's ``Generator``, so the same ``seed`` gives the same samples)."""
    names = list(distributions)
    _check_names(names, "random_samples")
    n = _count(n, "random_samples")
    rng = np.random.default_rng(seed)
    columns = []
    for name, spec in distributions.items():
        if not (isinstance(spec, (tuple, list)) and len(spec) == 3 and spec[0] in DISTRIBUTIONS):
            raise ModelError(f"random_samples: parameter {name!r} needs (kind, a, b) with kind one of "
                             f"{', '.join(DISTRIBUTIONS)}, got {spec!r}")
        kind = spec[0]
        try:
            a, b = float(spec[1]), float(spec[2])
        except (TypeError, ValueError):
            raise ModelError(f"random_samples: parameter {name!r}: {kind} needs numbers "
                             f"{' and '.join(DISTRIBUTIONS[kind])}, got {spec[1:]!r}") from None
        if kind == "uniform":
            if not a < b:
                raise ModelError(f"random_samples: parameter {name!r}: uniform needs low < high, got ({a}, {b})")
            columns.append(rng.uniform(a, b, n))
        else:
            if not b > 0:
                raise ModelError(f"random_samples: parameter {name!r}: {kind} needs a positive std, got {b}")
            columns.append(rng.normal(a, b, n) if kind == "normal" else rng.lognormal(a, b, n))
    return Space(names, np.column_stack(columns), "random")


def variants(rows: Sequence[Mapping[str, float]]) -> Space:
    """An explicit list of variants, each a dict over the same parameter names."""
    rows = list(rows)
    if not rows:
        raise ModelError("variants: the list is empty")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ModelError(f"variants: item {i} must be a dict name -> value, got {row!r}")
    names = list(rows[0])
    _check_names(names, "variants")
    table = []
    for i, row in enumerate(rows):
        if set(row) != set(names):
            raise ModelError(f"variants: item {i} has parameters {sorted(row)}, item 0 has {sorted(names)}")
        try:
            table.append([float(row[name]) for name in names])
        except (TypeError, ValueError):
            raise ModelError(f"variants: item {i} has a value that is not a number: {dict(row)}") from None
    return Space(names, np.array(table), "variants")
