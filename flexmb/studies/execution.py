"""Running the variants of a study: in this process (serial) or as tasks on a Dask cluster.

Both paths call :func:`evaluate` on each variant and hand every record to a callback as soon as
it is done (the store writes it at once). On Dask each variant is one pure task; the user's
``run`` travels as cloudpickle bytes inside the task, so that a function defined in a study
script (not importable by the workers) reaches them by value. A worker that dies during a task
is replaced by its nanny and the scheduler re-runs its tasks elsewhere; a variant whose worker
died more than ``retries`` times is recorded as failed. An exception raised by ``run`` is part
of the variant's result (the record's error text): ``run`` is pure, so re-running it would
raise again.
"""
from __future__ import annotations

import functools
import logging
import math
import os
import socket
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

import numpy as np

from flexmb.checks import ModelError

#: environment variable naming a running Dask scheduler (``tcp://host:port``)
SCHEDULER_VARIABLE = "FLEXMB_SCHEDULER"
#: one compute thread per worker process: the cluster's parallelism is its processes
THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "NUMBA_NUM_THREADS": "1"}

#: a task of the study: (variant id, parameters)
Task = tuple[str, dict]
#: what a finished variant reports: values (name -> float or 1-D array), seconds, worker, error
Record = dict


def worker_name() -> str:
    """``host:pid`` of the process running a variant (a restarted worker gets a new pid)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def quantities_of(output: object, selected: Sequence[str] | None, run: str = "run") -> dict:
    """The quantities a ``run`` (its name, for errors) returned, each a float or a 1-D float
    array; only ``selected`` ones (all when None), every selected one required, at least one."""
    if not isinstance(output, Mapping) or not output:
        got = ("an empty dict" if isinstance(output, Mapping) else "None" if output is None
               else f"a {type(output).__name__}")
        raise ModelError(f"{run} returned no quantity ({got}): a study's run must return a dict of quantities "
                         "(name -> number or 1-D array), e.g. {'f1': modes.frequencies_hz[0]}")
    names = list(output) if selected is None else list(selected)
    missing = [name for name in names if name not in output]
    if missing:
        raise ModelError(f"{run} returned no {', '.join(map(repr, missing))} (it returned {sorted(output)})")
    values = {}
    for name in names:
        if not (isinstance(name, str) and name.isidentifier()):
            raise ModelError(f"run returned a quantity named {name!r}: names must be Python identifiers")
        try:
            value = np.asarray(output[name], dtype=float)
        except (TypeError, ValueError):
            raise ModelError(f"quantity {name!r} = {output[name]!r} is not a number or an array of numbers") from None
        if value.ndim > 1:
            raise ModelError(f"quantity {name!r} has shape {value.shape}: a quantity is a number or a 1-D array")
        values[name] = float(value) if value.ndim == 0 else value.copy()
    return values


def evaluate(run: Callable[[dict], Mapping] | bytes, params: dict, selected: Sequence[str] | None,
             vid: str = "") -> Record:
    """Run one variant (``vid``, its id); ``run`` may be cloudpickle bytes (a Dask task). An
    exception is recorded as the variant's error text, with the innermost frame of its traceback."""
    function = _unpickled(run) if isinstance(run, bytes) else run
    start = time.perf_counter()
    name = f"run function {getattr(function, '__qualname__', type(function).__name__)!r} for variant {vid} {params}"
    try:
        values, error = quantities_of(function(dict(params)), selected, name), ""
    except Exception as exc:                               # noqa: BLE001  the variant's result
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        values = {}
        error = f"{type(exc).__name__}: {exc} ({os.path.basename(frame.filename)}, line {frame.lineno})"
    return {"values": values, "seconds": time.perf_counter() - start, "worker": worker_name(), "error": error}


@functools.lru_cache(maxsize=4)
def _unpickled(payload: bytes) -> Callable:
    import cloudpickle

    return cloudpickle.loads(payload)


def run_serial(run: Callable, tasks: Sequence[Task], selected: Sequence[str] | None,
               done: Callable[[str, dict, Record], None]) -> None:
    """Every task in this process, in order (no Dask: for debugging, and the reference)."""
    for vid, params in tasks:
        done(vid, params, evaluate(run, params, selected, vid))


def run_on_dask(run: Callable, tasks: Sequence[Task], selected: Sequence[str] | None,
                done: Callable[[str, dict, Record], None], *, workers: int | None, scheduler: str | None,
                retries: int) -> None:
    """Every task on a Dask cluster, records handed to ``done`` as they complete: a running
    scheduler at ``scheduler`` (an address), else a local cluster of ``workers`` processes
    (default: the number of cores) with one thread each."""
    import cloudpickle
    from distributed import as_completed

    if not tasks:
        return
    payload = cloudpickle.dumps(run)
    with _client(scheduler, workers, retries, len(tasks)) as client:
        run_token = uuid.uuid4().hex[:8]                  # keys unique to this run on a shared scheduler
        futures = {client.submit(evaluate, payload, params, selected, vid, key=f"flexmb-variant-{vid}-{run_token}"):
                   (vid, params) for vid, params in tasks}
        for future in as_completed(futures):
            vid, params = futures[future]
            try:
                record = future.result()
            except Exception as exc:  # noqa: BLE001  e.g. KilledWorker: its workers died too often
                record = {"values": {}, "seconds": math.nan, "worker": "",
                          "error": f"{type(exc).__name__}: {exc}"}
            done(vid, params, record)
            future.release()


@contextmanager
def _client(scheduler: str | None, workers: int | None, retries: int, n_tasks: int) -> Iterator:
    import dask
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            client = Client(scheduler)
        except (OSError, TimeoutError, ValueError) as exc:       # ValueError: not an address
            raise ModelError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        with client:
            yield client
        return
    n = min(workers or os.cpu_count() or 1, n_tasks)
    # the workers' statistical profiler samples the running thread's stack every 10 ms (measured: 17 %
    # more CPU per variant of the spin-up benchmark with it) and every process polls its event loop,
    # memory and system load several times a second: on a laptop's few cores these compete with the
    # variants, and a study has no use for them at that rate
    with dask.config.set({"distributed.scheduler.allowed-failures": retries,
                          "distributed.worker.profile.enabled": False,
                          "distributed.admin.tick.interval": "200ms",
                          "distributed.admin.system-monitor.interval": "2s",
                          "distributed.admin.system-monitor.gil.enabled": False,
                          "distributed.worker.memory.monitor-interval": "1s"}):
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                               env=THREAD_ENV, silence_logs=logging.ERROR)
    with cluster, Client(cluster) as client:
        yield client
