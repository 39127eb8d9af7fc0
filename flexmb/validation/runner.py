"""Running validation cases: table on stdout, ``DIR/CASE.json`` and ``DIR/CASE.png`` per case,
and optionally the report index (:mod:`flexmb.validation.index`).

Cases run one after the other in this process, or with ``jobs > 1`` in that many worker
processes (:func:`run_cases`). Either way a case's outcome (its table rows, JSON record and
figure) is made by the same function, :func:`run_case_file`, and printed in the order of the
selection, so the table, the JSON files and the report do not depend on ``jobs`` (only the
measured ``wall_s`` does).
"""
from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Sequence, TextIO

from flexmb.validation.index import IndexEntry, write_index
from flexmb.validation.registry import discover_cases, load_module
from flexmb.validation.report import CaseReport, Check

_COLUMNS = ("case", "quantity", "flexmb", "reference", "source", "rel. error", "pass")
_WIDTHS = (28, 50, 11, 12, 36, 10, 4)
#: modules the worker processes' fork server imports once, so that each worker starts ready
_WORKER_PRELOAD = ["numpy", "scipy.sparse", "scipy.linalg", "matplotlib", "flexmb", "flexmb.validation"]


def _json_default(obj):
    """numpy scalars and arrays in a case's ``info``."""
    return obj.tolist() if hasattr(obj, "tolist") else str(obj)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.5g}"


def _row(cells: Sequence[str]) -> str:
    """The cells padded to their column widths; long cells are cut with "~", except the case name,
    which is never cut (it is what a reader searches the table for) and widens its row instead."""
    return "  ".join((c if len(c) <= w or k == 0 else c[:w - 1] + "~").ljust(w)
                     for k, (c, w) in enumerate(zip(cells, _WIDTHS)))


def table_row(case: str, check: Check) -> str:
    """One line of the results table."""
    if check.criterion == "rel":
        ref = _fmt(check.reference)
        err = f"{check.relative_error:.2e}" + ("" if check.passed else f">{check.tolerance:g}")
    else:
        ref = f"{check.criterion} {check.tolerance:.3g}"
        err = "-"
    return _row((case, check.quantity, _fmt(check.value), ref, check.source, err,
                 "ok" if check.passed else "FAIL"))


def print_report(report: CaseReport, stream: TextIO | None = None) -> None:
    """The table rows of one case (for running a case script on its own)."""
    stream = stream or sys.stdout
    print(_row(_COLUMNS), file=stream)
    for check in report.checks:
        print(table_row(report.case, check), file=stream)


@dataclass
class CaseOutcome:
    """What running one case leaves: its table rows, its JSON record (as written to CASE.json,
    plain JSON types), its figure file and, if it crashed, the traceback text."""

    name: str
    title: str
    source: str
    rows: list[str]
    record: dict[str, Any]
    figure: str | None
    passed: bool
    traceback: str | None = None

    def entry(self) -> IndexEntry:
        return IndexEntry(self.name, self.title, self.source, self.record,
                          None if self.figure is None else Path(self.figure))


def _write_json(path: Path, record: dict[str, Any]) -> None:
    """Write via a temporary file, so that an interrupted run leaves no half-written record."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(record, indent=2, default=_json_default), encoding="utf-8")
    os.replace(partial, path)


def _record(report: CaseReport, wall: float, cpu: float | None) -> dict[str, Any]:
    """A case's JSON record: the report with its wall time and the CPU time of the process that
    ran it (None when unknown; on a busy machine the CPU time is the steadier measure)."""
    record = report.as_dict(wall)
    return {**{k: v for k, v in record.items() if k != "info"}, "cpu_s": cpu, "info": record["info"]}


def _failed_outcome(name: str, title: str, source: str, error: str, out: Path, wall: float, cpu: float | None,
                    trace: str | None) -> CaseOutcome:
    """The outcome of a case that did not complete (it raised, or its worker process died)."""
    record = _record(CaseReport(name, info={"error": error}), wall, cpu)
    _write_json(out / f"{name}.json", record)
    row = _row((name, "case did not complete", "-", "-", error, "-", "FAIL"))
    return CaseOutcome(name, title, source, [row], json.loads(json.dumps(record, default=_json_default)), None,
                       False, trace)


def run_case_file(name: str, path: str | Path, quick: bool, out: str | Path) -> CaseOutcome:
    """Run one case script; write ``out/NAME.json`` and ``out/NAME.png``. A case that raises is a
    failed case (the outcome carries the error and its traceback), not an error of the run."""
    out = Path(out)
    start, cpu_start = time.perf_counter(), time.process_time()
    title, source = name, ""
    try:
        module = load_module(Path(path))
        title, source = module.TITLE, module.SOURCE
        report: CaseReport = module.run(quick=quick)
    except Exception as exc:                               # a crashing case is a failed case, not a crash
        return _failed_outcome(name, title, source, f"{type(exc).__name__}: {exc}", out,
                               time.perf_counter() - start, time.process_time() - cpu_start,
                               traceback.format_exc())
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    rows = [table_row(name, check) for check in report.checks]
    if not report.checks:
        rows.append(_row((name, "case did not complete", "-", "-", report.info.get("error", ""), "-", "FAIL")))
    record = _record(report, wall, cpu)
    _write_json(out / f"{name}.json", record)
    figure = None
    if report.figure is not None:
        figure = out / f"{name}.png"
        report.figure.savefig(figure, dpi=110)
        import matplotlib.pyplot as plt
        plt.close(report.figure)
    return CaseOutcome(name, title, source, rows, json.loads(json.dumps(record, default=_json_default)),
                       None if figure is None else str(figure), report.passed)


def default_jobs() -> int:
    """Worker processes used when none are asked for: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:                                  # no sched_getaffinity (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def run_cases(names: Sequence[str] | None = None, quick: bool = False, out_dir: str | Path = "validation-results",
              cases_dir: str | Path | None = None, stream: TextIO | None = None,
              report_dir: str | Path | None = None, jobs: int = 1) -> int:
    """Run the named cases (all if None); returns the number of failed cases.

    With ``report_dir`` the report index (``index.md``, ``index.html``) is written there. With
    ``jobs > 1`` the cases run in up to ``jobs`` worker processes, the longest first (as long as
    the case took in the ``out_dir`` of an earlier run); the table is still printed in the order
    of the selection, each case as soon as it and the cases before it are done. A worker process
    that dies (e.g. a segmentation fault) fails its case only; an interrupt (Ctrl-C) ends the
    workers and raises KeyboardInterrupt.
    """
    stream = stream or sys.stdout
    available = discover_cases(cases_dir)
    selected = list(names) if names else list(available)
    unknown = [n for n in selected if n not in available]
    if unknown:
        raise KeyError(f"unknown validation case(s) {', '.join(unknown)}; "
                       f"available: {', '.join(available)}")
    if jobs < 1:
        raise ValueError(f"jobs = {jobs}: expected at least 1 worker process")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    print(_row(_COLUMNS), file=stream)
    print("-" * (sum(_WIDTHS) + 2 * (len(_WIDTHS) - 1)), file=stream)
    outcomes: list[CaseOutcome] = []

    def emit(outcome: CaseOutcome) -> None:
        if outcome.traceback:
            print(outcome.traceback, end="", file=sys.stderr)
        for row in outcome.rows:
            print(row, file=stream)
        stream.flush()
        outcomes.append(outcome)

    if min(jobs, len(selected)) <= 1:
        for name in selected:
            emit(run_case_file(name, available[name], quick, out))
    else:
        _run_in_workers(selected, available, quick, out, min(jobs, len(selected)), emit)
    failed = sum(not o.passed for o in outcomes)
    print(f"\n{len(selected) - failed} of {len(selected)} case(s) passed; results in {out.resolve()}",
          file=stream)
    if report_dir is not None:
        md, html_index = write_index(report_dir, [o.entry() for o in outcomes], quick)
        print(f"report: {md.resolve()} and {html_index.name}", file=stream)
    return failed


# ------------------------------------------------------------------ worker processes
def _worker_main(conn: Connection, quick: bool, out: str) -> None:
    """A worker process: run the cases it is sent, one at a time, until it is sent None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)           # Ctrl-C is the parent's to handle
    import matplotlib
    matplotlib.use("Agg")
    while True:
        task = conn.recv()
        if task is None:
            return
        name, path = task
        conn.send(run_case_file(name, path, quick, out))


def _previous_wall_time(out: Path, name: str) -> float:
    """The case's wall time in an earlier run's record in ``out`` (0 when there is none)."""
    try:
        return float(json.loads((out / f"{name}.json").read_text(encoding="utf-8"))["wall_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0


def _context() -> multiprocessing.context.BaseContext:
    """A fork server where there is one (workers start as forks of a process that has imported
    flexmb once, without the threads and state of this one), else fresh interpreters."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(_WORKER_PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


@dataclass
class _Worker:
    process: multiprocessing.process.BaseProcess
    conn: Connection
    case: str | None = None                                 # the case it is running


def _run_in_workers(selected: list[str], available: dict[str, Path], quick: bool, out: Path, jobs: int,
                    emit) -> None:
    """Run ``selected`` in ``jobs`` worker processes; ``emit`` each outcome in selection order."""
    ctx = _context()
    queue = sorted(selected, key=lambda n: -_previous_wall_time(out, n))    # stable: ties keep their order
    done: dict[str, CaseOutcome] = {}
    started: dict[str, float] = {}
    workers: list[_Worker] = []
    next_to_emit = 0

    def start_worker() -> _Worker:
        parent_end, child_end = ctx.Pipe(duplex=True)
        process = ctx.Process(target=_worker_main, args=(child_end, quick, str(out)), daemon=True,
                              name="flexmb-validate-worker")
        process.start()
        child_end.close()
        worker = _Worker(process, parent_end)
        workers.append(worker)
        return worker

    def assign(worker: _Worker) -> None:
        name = queue.pop(0)
        worker.case, started[name] = name, time.perf_counter()
        worker.conn.send((name, str(available[name])))

    try:
        for _ in range(jobs):
            assign(start_worker())
        while len(done) < len(selected):
            busy = [w for w in workers if w.case is not None]
            for conn in wait([w.conn for w in busy]):
                worker = next(w for w in busy if w.conn is conn)
                name, worker.case = worker.case, None
                try:
                    done[name] = conn.recv()
                except (EOFError, OSError):                 # the worker died while running the case
                    worker.process.join()
                    done[name] = _failed_outcome(name, name, "", _death(worker.process.exitcode),
                                                 out, time.perf_counter() - started[name], None, None)
                    conn.close()
                    workers.remove(worker)
                    if queue:
                        worker = start_worker()
                if queue:
                    assign(worker)
            while next_to_emit < len(selected) and selected[next_to_emit] in done:
                emit(done[selected[next_to_emit]])
                next_to_emit += 1
        for worker in workers:
            worker.conn.send(None)
        for worker in workers:
            worker.process.join()
    finally:                                                # Ctrl-C or an error here: no worker outlives the run
        for worker in workers:
            if worker.process.is_alive():
                worker.process.terminate()
        for worker in workers:
            worker.process.join()
            worker.conn.close()


def _death(exitcode: int | None) -> str:
    """Why a worker process ended, for the failed case's record."""
    if exitcode is not None and exitcode < 0:
        try:
            return f"the worker process running the case was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            pass
    return f"the worker process running the case ended with exit code {exitcode}"
