"""The validation report: one index (Markdown and HTML) with the summary table and every case's figure.

``flexmb validate --report DIR`` writes ``DIR/index.md`` and ``DIR/index.html`` next to the
cases' ``CASE.json`` and ``CASE.png``; both refer to the figures by relative paths, so the folder
can be zipped and sent as it is.
"""
from __future__ import annotations

import datetime
import html
import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class IndexEntry:
    """One case in the index: its description, its JSON record and its figure (if any)."""

    name: str
    title: str
    source: str
    record: dict[str, Any]                   # the content of CASE.json
    figure: Path | None


def _fmt(x: Any) -> str:
    return "-" if x is None else (f"{x:.5g}" if isinstance(x, float) else str(x))


def _check_row(c: dict[str, Any]) -> list[str]:
    if c["criterion"] == "rel":
        ref, tol = _fmt(c["reference"]), f"rel. {c['tolerance']:.3g}"
    else:
        ref, tol = "-", f"{c['criterion']} {c['tolerance']:.3g}"
    return [c["quantity"], _fmt(c["value"]), ref, tol, c["source"], "pass" if c["passed"] else "FAIL"]


def _summary(e: IndexEntry) -> list[str]:
    checks = e.record.get("results", [])
    passed = sum(c["passed"] for c in checks)
    ok = bool(checks) and passed == len(checks)
    return [e.name, e.title, f"{passed}/{len(checks)}", str(e.record.get("n_dof", "-")),
            str(e.record.get("n_steps", "-")), f"{e.record.get('wall_s', 0.0):.1f}", _fmt_time(e.record.get("cpu_s")),
            "pass" if ok else "FAIL"]


def _fmt_time(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.1f}"


_SUMMARY_HEAD = ["case", "benchmark", "checks passed", "DOFs", "steps", "wall time (s)", "CPU time (s)", "result"]
_CHECK_HEAD = ["quantity", "flexmb", "reference", "tolerance", "source", "result"]


def _header(quick: bool) -> str:
    from flexmb import __version__

    now = datetime.datetime.now().isoformat(sep=" ", timespec="minutes")
    return (f"flexmb {__version__}, {'quick' if quick else 'full'} runs, {now}, "
            f"Python {platform.python_version()} on {platform.machine()} ({os.cpu_count()} cores)")


def write_index(report_dir: str | Path, entries: list[IndexEntry], quick: bool) -> tuple[Path, Path]:
    """Write ``index.md`` and ``index.html`` in ``report_dir``; returns both paths."""
    folder = Path(report_dir)
    folder.mkdir(parents=True, exist_ok=True)
    n_ok = sum(_summary(e)[-1] == "pass" for e in entries)
    head = _header(quick)

    md = ["# flexmb validation report", "", head, "",
          f"**{n_ok} of {len(entries)} case(s) passed.**", "",
          "| " + " | ".join(_SUMMARY_HEAD) + " |", "|" + "---|" * len(_SUMMARY_HEAD)]
    md += ["| " + " | ".join([f"[{r[0]}](#{r[0]})"] + r[1:]) + " |" for r in map(_summary, entries)]
    for e in entries:
        md += ["", f"## {e.name}", "", f"{e.title}. Source: {e.source}.", ""]
        if "error" in e.record.get("info", {}):
            md += [f"**The case did not complete:** `{e.record['info']['error']}`", ""]
        md += ["| " + " | ".join(_CHECK_HEAD) + " |", "|" + "---|" * len(_CHECK_HEAD)]
        md += ["| " + " | ".join(s.replace("|", "\\|") for s in _check_row(c)) + " |"
               for c in e.record.get("results", [])]
        if e.figure is not None:
            md += ["", f"![{e.name}]({_rel(e.figure, folder)})"]
    md_path = folder / "index.md"
    md_path.write_text("\n".join(md) + "\n", encoding="utf-8")

    def table(head: list[str], rows: list[list[str]], link_first: bool = False) -> str:
        cells = "".join(f"<th>{html.escape(h)}</th>" for h in head)
        body = []
        for r in rows:
            cls = ' class="fail"' if r[-1] == "FAIL" else ""
            first = f'<a href="#{html.escape(r[0])}">{html.escape(r[0])}</a>' if link_first else html.escape(r[0])
            body.append(f"<tr{cls}><td>{first}</td>" + "".join(f"<td>{html.escape(c)}</td>" for c in r[1:]) + "</tr>")
        return f"<table><tr>{cells}</tr>{''.join(body)}</table>"

    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>flexmb validation report</title>",
             "<style>body{font-family:sans-serif;max-width:1200px;margin:auto}table{border-collapse:collapse;"
             "margin:0.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;font-size:90%}"
             "tr.fail{background:#fdd}img{max-width:100%}</style></head><body>",
             "<h1>flexmb validation report</h1>", f"<p>{html.escape(head)}</p>",
             f"<p><b>{n_ok} of {len(entries)} case(s) passed.</b></p>",
             table(_SUMMARY_HEAD, [_summary(e) for e in entries], link_first=True)]
    for e in entries:
        parts.append(f"<h2 id='{html.escape(e.name)}'>{html.escape(e.name)}</h2>"
                     f"<p>{html.escape(e.title)}. Source: {html.escape(e.source)}.</p>")
        if "error" in e.record.get("info", {}):
            parts.append(f"<p><b>The case did not complete:</b> <code>{html.escape(e.record['info']['error'])}</code></p>")
        parts.append(table(_CHECK_HEAD, [_check_row(c) for c in e.record.get("results", [])]))
        if e.figure is not None:
            parts.append(f"<img src='{html.escape(_rel(e.figure, folder))}' alt='{html.escape(e.name)}'>")
    parts.append("</body></html>")
    html_path = folder / "index.html"
    html_path.write_text("\n".join(parts), encoding="utf-8")
    return md_path, html_path


def _rel(path: Path, folder: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), folder.resolve())).as_posix()
