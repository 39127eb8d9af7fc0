"""The result of a study: its table, summary and pictures, read from ``DIR/study.h5``.

The table (a pandas DataFrame) has one row per variant of the space, in the space's order:
``variant`` (its id), the parameters, the quantities (an array quantity ``f`` of length 3 as
columns ``f[0] f[1] f[2]``), ``seconds`` (the run's time), ``worker`` (``host:pid``) and
``error`` (empty for a variant that ran; a failed or not yet computed variant has NaN quantities).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from flexmb.io.result_file import failure_reason
from flexmb.studies.store import FILE_NAME, StoredStudy, StudyFileError, read_study

if TYPE_CHECKING:
    import pandas as pd

NOT_COMPUTED = "not computed"
#: rows of the table shown in the text summary
SUMMARY_ROWS = 5


class StudyResult:
    """A study's table with its description (``load_study`` reads one back from a folder)."""

    def __init__(self, stored: StoredStudy) -> None:
        import pandas

        self.name = stored.name
        self.description = stored.description
        #: unit of each parameter and quantity by name (``Study(units=...)``)
        self.units: dict[str, str] = dict(stored.units)
        self.path = stored.path
        self.space = stored.space
        self.parameters: list[str] = list(stored.space.names)
        ran = [stored.records[v] for v in stored.space.ids if v in stored.records and not stored.records[v]["error"]]
        #: quantity name -> its columns in the table (one per array entry)
        self.columns: dict[str, list[str]] = {}
        for record in ran:
            for q, value in record["values"].items():
                self.columns.setdefault(q, [q] if np.ndim(value) == 0 else [f"{q}[{i}]" for i in range(len(value))])
        rows = []
        for vid, params in zip(stored.space.ids, stored.space):
            record = stored.records.get(vid)
            row = {"variant": vid, **params}
            values = record["values"] if record is not None else {}
            for q, columns in self.columns.items():
                row.update(zip(columns, np.atleast_1d(values.get(q, np.full(len(columns), np.nan)))))
            row.update(seconds=record["seconds"] if record else np.nan, worker=record["worker"] if record else "",
                       error=record["error"] if record else NOT_COMPUTED)
            rows.append(row)
        self.table: pd.DataFrame = pandas.DataFrame(rows)

    def label(self, column: str) -> str:
        """A parameter or quantity column with its unit, ``"EI (N m^2)"``; an array quantity's
        column ``"omega[2]"`` takes the unit of ``omega``; a name without a unit stays bare."""
        unit = self.units.get(column.split("[", 1)[0])
        return f"{column} ({unit})" if unit else column

    @property
    def quantity_columns(self) -> list[str]:
        """The table's quantity columns, in order."""
        return [c for columns in self.columns.values() for c in columns]

    @property
    def failures(self) -> pd.DataFrame:
        """Rows of variants that failed or were not computed."""
        return self.table[self.table["error"] != ""]

    def summary(self) -> str:
        """Markdown: the study, the first rows, min/mean/max of each quantity, the failures."""
        t = self.table
        ok = t[t["error"] == ""]
        lines = [f"# Study {self.name}", ""]
        if self.description:
            lines += [self.description, ""]
        counts = (f"{len(t)} variants ({self.space.kind} over {', '.join(self.parameters)}): {len(ok)} computed, "
                  f"{len(self.failures)} failed or not computed; {ok['seconds'].sum():.1f} s of run time, "
                  f"{ok['worker'].nunique()} worker process(es).")
        if self.units:
            counts += " Units: " + ", ".join(f"{n} in {u}" for n, u in self.units.items()) + "."
        lines += [counts, "", f"## First {min(SUMMARY_ROWS, len(t))} rows", "", _markdown(t.head(SUMMARY_ROWS)[["variant", *self.parameters, *self.quantity_columns]]), ""]
        if len(ok):
            stats = ok[self.quantity_columns].agg(["min", "mean", "max"]).T
            stats.insert(0, "quantity", stats.index)
            lines += ["## Quantities", "", _markdown(stats), ""]
        if len(self.failures):
            lines += ["## Failures", "", _markdown(self.failures[["variant", *self.parameters, "error"]]), ""]
        return "\n".join(lines)

    def write(self, folder: str | Path | None = None) -> list[Path]:
        """Write ``summary.csv``, ``summary.md`` and the plots to ``folder`` (default: the study's
        folder; elsewhere ``study.h5`` is copied too); returns the files written. They are written
        in a scratch folder and moved into place together: a failed write (disk full) raises
        :class:`~flexmb.studies.store.StudyFileError` naming the file and leaves the files in
        ``folder`` as they were."""
        from flexmb.studies import plots

        folder = Path(folder) if folder is not None else self.path.parent
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".flexmb-summary-", dir=folder) as scratch:
            scratch = Path(scratch)
            current = FILE_NAME
            try:
                written = []
                if folder.resolve() != self.path.parent.resolve():
                    written.append(Path(shutil.copy2(self.path, scratch / FILE_NAME)))
                current = "summary.csv"
                self.table.to_csv(scratch / current, index=False)
                current = "summary.md"
                (scratch / current).write_text(self.summary() + "\n")
                written += [scratch / "summary.csv", scratch / "summary.md"]
                current = "the plots"
                pictures = plots.write_plots(self, scratch)
                if pictures:
                    current = "summary.md"
                    with open(scratch / current, "a") as f:
                        f.write("\n## Plots\n\n" + "\n".join(f"![{p.stem}]({p.name})" for p in pictures) + "\n")
            except OSError as exc:
                raise StudyFileError(f"cannot write the summary of study {self.name} in {folder}: writing {current} "
                                     f"failed: {failure_reason(exc)}; nothing was written there ({self.path} holds "
                                     "the results)", folder / current, cause=exc) from None
            for staged in written + pictures:
                os.replace(staged, folder / staged.name)
        return [folder / p.name for p in written + pictures]


def load_study(folder: str | Path) -> StudyResult:
    """The result of the study in ``folder`` (its ``study.h5``; a study file's path works too)."""
    path = Path(folder)
    return StudyResult(read_study(path if path.suffix == ".h5" else path / FILE_NAME))


def _markdown(frame) -> str:
    """A DataFrame as a Markdown table (numbers with 6 significant digits), without tabulate."""
    def cell(x) -> str:
        return f"{x:.6g}" if isinstance(x, (float, np.floating)) else str(x).replace("|", "/")

    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "---|" * len(frame.columns)
    return "\n".join([head, rule] + ["| " + " | ".join(cell(x) for x in row) + " |"
                                     for row in frame.itertuples(index=False)])
