"""Running validation cases: table on stdout, ``DIR/CASE.json`` and ``DIR/CASE.png`` per case,
and optionally the report index (:mod:`flexmb.validation.index`)."""
from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path
from typing import Sequence, TextIO

from flexmb.validation.index import IndexEntry, write_index
from flexmb.validation.registry import discover_cases, load_module
from flexmb.validation.report import CaseReport, Check

_COLUMNS = ("case", "quantity", "flexmb", "reference", "source", "rel. error", "pass")
_WIDTHS = (24, 50, 11, 12, 36, 10, 4)


def _json_default(obj):
    """numpy scalars and arrays in a case's ``info``."""
    return obj.tolist() if hasattr(obj, "tolist") else str(obj)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.5g}"


def _row(cells: Sequence[str]) -> str:
    return "  ".join((c if len(c) <= w else c[:w - 1] + "~").ljust(w) for c, w in zip(cells, _WIDTHS))


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


def run_cases(names: Sequence[str] | None = None, quick: bool = False, out_dir: str | Path = "validation-results",
              cases_dir: str | Path | None = None, stream: TextIO | None = None,
              report_dir: str | Path | None = None) -> int:
    """Run the named cases (all if None); returns the number of failed cases.

    With ``report_dir`` the report index (``index.md``, ``index.html``) is written there.
    """
    stream = stream or sys.stdout
    available = discover_cases(cases_dir)
    selected = list(names) if names else list(available)
    unknown = [n for n in selected if n not in available]
    if unknown:
        raise KeyError(f"unknown validation case(s) {', '.join(unknown)}; "
                       f"available: {', '.join(available)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    print(_row(_COLUMNS), file=stream)
    print("-" * (sum(_WIDTHS) + 2 * (len(_WIDTHS) - 1)), file=stream)
    failed = 0
    entries: list[IndexEntry] = []
    for name in selected:
        start = time.perf_counter()
        title, source = name, ""
        try:
            module = load_module(available[name])
            title, source = module.TITLE, module.SOURCE
            report: CaseReport = module.run(quick=quick)
        except Exception as exc:                           # a crashing case is a failed case, not a crash
            traceback.print_exc()
            report = CaseReport(name, info={"error": f"{type(exc).__name__}: {exc}"})
        wall = time.perf_counter() - start
        for check in report.checks:
            print(table_row(name, check), file=stream)
        if not report.checks:
            print(_row((name, "case did not complete", "-", "-", report.info.get("error", ""), "-", "FAIL")),
                  file=stream)
        record = report.as_dict(wall)
        (out / f"{name}.json").write_text(json.dumps(record, indent=2, default=_json_default), encoding="utf-8")
        figure = None
        if report.figure is not None:
            figure = out / f"{name}.png"
            report.figure.savefig(figure, dpi=110)
            import matplotlib.pyplot as plt
            plt.close(report.figure)
        entries.append(IndexEntry(name, title, source, json.loads(json.dumps(record, default=_json_default)),
                                  figure))
        failed += not report.passed
        stream.flush()
    print(f"\n{len(selected) - failed} of {len(selected)} case(s) passed; results in {out.resolve()}",
          file=stream)
    if report_dir is not None:
        md, html_index = write_index(report_dir, entries, quick)
        print(f"report: {md.resolve()} and {html_index.name}", file=stream)
    return failed
