"""A design study: a pure function of the parameters, run over a parameter space.

``Study(name, run, space)`` pairs a function ``run(params) -> {quantity: value}`` (module
top-level, no side effects: Dask may run a variant twice when a worker dies) with a
:class:`~flexmb.studies.space.Space`. :meth:`Study.run` computes the variants serially or on a
Dask cluster, writes each to ``DIR/study.h5`` as it completes, skips the completed ones of an
earlier run when resuming, and returns the table as a :class:`~flexmb.studies.result.StudyResult`.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from flexmb.checks import ModelError
from flexmb.progress import Progress
from flexmb.studies import execution
from flexmb.studies.result import StudyResult, load_study
from flexmb.studies.space import Space
from flexmb.studies.store import StudyStore

#: default output folder of a study, under the working directory
DEFAULT_FOLDER = "study-results"


class Study:
    """A parameter study (see the module docstring).

    Parameters
    ----------
    name : short name of the study (letters, digits, ``-``, ``_``, ``.``); it names the default
        output folder and is checked when a study file is resumed.
    run : ``run(params: dict) -> dict`` of quantities, each a number or a 1-D array of fixed
        length (e.g. the first five frequencies), defined at module level.
    space : the variants to compute.
    quick_space : a smaller space for ``quick=True`` (tests, CI); default: ``space``.
    quantities : the quantities to keep (each must be returned); default: all returned.
    description : one or two sentences for the summary.
    units : unit of each parameter and quantity by name (e.g. ``{"EI": "N m^2", "deflection": "m"}``),
        written beside the names on the plots' axes and in the summary; names without one are
        shown bare.
    """

    def __init__(self, name: str, run: Callable[[dict], Mapping], space: Space, quick_space: Space | None = None,
                 quantities: Sequence[str] | None = None, description: str = "",
                 units: Mapping[str, str] | None = None) -> None:
        if not (isinstance(name, str) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name)):
            raise ModelError(f"Study name {name!r}: use letters, digits, '-', '_' and '.' (it names a folder)")
        if not callable(run):
            raise ModelError(f"Study {name!r}: run must be a function run(params) -> dict, got {type(run).__name__}")
        for what, s in (("space", space), ("quick_space", quick_space)):
            if s is not None and not isinstance(s, Space):
                raise ModelError(f"Study {name!r}: {what} must be made by grid, latin_hypercube, random_samples "
                                 f"or variants, got {type(s).__name__}")
        if quick_space is not None and quick_space.names != space.names:
            raise ModelError(f"Study {name!r}: quick_space has parameters {list(quick_space.names)}, space has "
                             f"{list(space.names)}")
        if quantities is not None:
            quantities = (quantities,) if isinstance(quantities, str) else tuple(quantities)
            if not quantities or not all(isinstance(q, str) and q.isidentifier() for q in quantities):
                raise ModelError(f"Study {name!r}: quantities must be names (Python identifiers), got {quantities!r}")
        units = dict(units or {})
        for key, unit in units.items():
            if not (isinstance(key, str) and isinstance(unit, str)):
                raise ModelError(f"Study {name!r}: units maps names to unit strings, got {key!r}: {unit!r}")
            if key not in space.names and quantities is not None and key not in quantities:
                raise ModelError(f"Study {name!r}: units names {key!r}, which is neither a parameter "
                                 f"({', '.join(space.names)}) nor a quantity ({', '.join(quantities)})")
        self.name = name
        self.units = units
        self.run_variant = run
        self.space = space
        self.quick_space = quick_space
        self.quantities = quantities
        self.description = description

    def __repr__(self) -> str:
        return f"Study({self.name!r}, {self.space!r})"

    def run(self, out: str | Path | None = None, workers: int | None = None, scheduler: str | None = None,
            serial: bool = False, resume: bool = False, quick: bool = False, progress: bool | None = None,
            retries: int = 2) -> StudyResult:
        """Compute the variants and return the table.

        Parameters
        ----------
        out : output folder for ``study.h5`` (default ``study-results/NAME``).
        workers : processes of the local Dask cluster (default: the number of cores).
        scheduler : address of a running Dask scheduler, ``tcp://host:port`` (default: the
            environment variable ``FLEXMB_SCHEDULER``, else a local cluster).
        serial : run in this process without Dask (debugging; the reference of the others).
        resume : continue the study in ``out``: completed variants are not computed again,
            failed ones are, and so are those whose record in the file is damaged.
        quick : use ``quick_space``.
        progress : show a bar of done/total variants and failures (default: on a terminal).
        retries : how often a variant is re-run after its worker died (local cluster; a running
            scheduler applies its own ``allowed-failures``).

        Raises :class:`~flexmb.studies.store.StudyFileError` when ``study.h5`` cannot be
        written (disk full); the file keeps every variant recorded before.
        """
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise ModelError(f"Study {self.name!r}: workers = {workers!r} must be a positive integer")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ModelError(f"Study {self.name!r}: retries = {retries!r} must be a non-negative integer")
        if serial and (scheduler or workers):
            raise ModelError(f"Study {self.name!r}: serial runs in this process; it takes no scheduler or workers")
        if scheduler and workers:
            raise ModelError(f"Study {self.name!r}: workers sets the size of a local cluster; the cluster of the "
                             f"scheduler {scheduler} has its own workers")
        if not serial:
            scheduler = scheduler or os.environ.get(execution.SCHEDULER_VARIABLE) or None
        space = self.quick_space if quick and self.quick_space is not None else self.space
        folder = Path(out) if out is not None else Path(DEFAULT_FOLDER) / self.name
        with StudyStore(folder, self.name, self.description, space, resume, self.units) as store:
            tasks = [(vid, p) for vid, p in zip(space.ids, space) if vid not in store.done]
            finished, failed = len(space) - len(tasks), 0
            bar = Progress(len(space), self.name, unit="variants", enabled=progress)
            bar.update(finished, failed=failed)

            def done(vid: str, params: dict, record: dict) -> None:
                nonlocal finished, failed
                record["error"] = record["error"] or store.check_shapes(record["values"])
                if record["error"]:
                    record["values"] = {}
                    failed += 1
                store.append(vid, params, record)
                finished += 1
                bar.update(finished, failed=failed)

            try:
                if serial:
                    execution.run_serial(self.run_variant, tasks, self.quantities, done)
                else:
                    execution.run_on_dask(self.run_variant, tasks, self.quantities, done, workers=workers,
                                          scheduler=scheduler, retries=retries)
            finally:
                bar.close()
        return load_study(folder)
