"""The validation harness: checks, JSON/PNG output, exit codes, the CLI, and the quick cases."""
from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import matplotlib
import pytest

from flexmb.cli import main
from flexmb.validation import Check, discover_cases
from flexmb.validation.registry import load_module

matplotlib.use("Agg")
REPO = Path(__file__).resolve().parents[1]
CASES_DIR = REPO / "validation"
EXPECTED_CASES = {"bathe-pendulum", "free-flying-chain", "roll-up-2d", "roll-up-3d", "buckling-lateral",
                  "buckling-torsion", "von-mises-truss", "flying-beam-3d", "double-pendulum-flexible",
                  "four-bar-rigid", "spin-up-spatial", "slider-crank-a", "slider-crank-b", "spin-up-kim-haug",
                  "spin-up-simo", "pendulum-projective", "four-bar-partitioning", "double-pendulum-singular",
                  "stewart-3leg", "cms-beam", "sensitivity-shares", "modification",
                  "natural-modes-beam"}

FAILING_CASE = '''"""A case that fails one check."""
from flexmb.validation import CaseReport, Check

CASE = "always-off"
TITLE = "deliberately failing"
SOURCE = "test"


def run(quick=False):
    report = CaseReport(CASE, n_dof=1, n_steps=1)
    report.add(Check.close("x", 1.1, 1.0, 0.01, "test"))
    report.add(Check.at_most("y", 0.5, 1.0, "test"))
    return report
'''

CRASHING_CASE = '''"""A case that raises."""
CASE = "crashes"
TITLE = "raises"
SOURCE = "test"


def run(quick=False):
    raise RuntimeError("boom in node 7")
'''


def test_check_criteria() -> None:
    assert Check.close("a", 1.004, 1.0, 5e-3, "s").passed
    assert not Check.close("a", 1.006, 1.0, 5e-3, "s").passed
    assert Check.close("a", -2.0, -2.0, 1e-12, "s").relative_error == 0.0
    assert Check.at_most("b", 1e-9, 1e-8, "s").passed and not Check.at_most("b", 2e-8, 1e-8, "s").passed
    assert Check.at_least("c", 0.2, 0.05, "s").passed and not Check.at_least("c", 0.01, 0.05, "s").passed
    assert not Check.at_most("nan", math.nan, 1.0, "s").passed
    with pytest.raises(ValueError, match="relative check needs"):
        Check("d", 1.0, None, 0.1, "s", "rel")


def test_list_names_all_cases(capsys: pytest.CaptureFixture[str]) -> None:
    assert set(discover_cases(CASES_DIR)) >= EXPECTED_CASES
    assert main(["validate", "--list", "--cases-dir", str(CASES_DIR)]) == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert listed >= EXPECTED_CASES


def test_case_scripts_name_source_and_references() -> None:
    for name, path in discover_cases(CASES_DIR).items():
        module = load_module(path)
        assert module.CASE == name
        assert module.__doc__ and len(module.__doc__) > 200, f"{path.name}: docstring must state the problem"
        assert re.search(r"(19|20)\d\d|exact", module.SOURCE), f"{path.name}: SOURCE must cite a paper or 'exact'"


def test_failing_and_crashing_cases_give_nonzero_exit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "always_off.py").write_text(FAILING_CASE)
    (cases / "crashes.py").write_text(CRASHING_CASE)
    out = tmp_path / "out"
    assert main(["validate", "--cases-dir", str(cases), "--out", str(out), "always-off"]) == 1
    data = json.loads((out / "always-off.json").read_text())
    assert [r["passed"] for r in data["results"]] == [False, True]
    assert main(["validate", "--cases-dir", str(cases), "--out", str(out), "crashes"]) == 1
    assert "boom in node 7" in json.loads((out / "crashes.json").read_text())["info"]["error"]
    assert main(["validate", "--cases-dir", str(cases), "--out", str(out), "no-such-case"]) == 2
    assert "no-such-case" in capsys.readouterr().err


def _quick_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    """Folder and printed table of the quick validation: the report `.ci/run` wrote just before the
    tests (named by FLEXMB_QUICK_REPORT, so that CI does not run the same validation twice), else
    a fresh run into tmp_path."""
    given = os.environ.get("FLEXMB_QUICK_REPORT")
    if given:
        folder = Path(given)
        assert (folder / "index.md").is_file(), f"FLEXMB_QUICK_REPORT={given} holds no quick validation report"
        return folder, (folder / "index.md").read_text()
    code = main(["validate", "--quick", "--cases-dir", str(CASES_DIR), "--report", str(tmp_path)])
    table = capsys.readouterr().out
    assert code == 0, f"validation failed:\n{table}"
    return tmp_path, table


def test_quick_validation_passes_and_writes_json_png_and_report(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    tmp_path, table = _quick_report(tmp_path, capsys)
    for name in EXPECTED_CASES:
        data = json.loads((tmp_path / f"{name}.json").read_text())
        assert data["case"] == name
        assert isinstance(data["n_dof"], int) and data["n_dof"] > 0
        assert isinstance(data["n_steps"], int) and data["n_steps"] > 0
        assert isinstance(data["wall_s"], float)
        assert data["results"], f"{name}: no checked quantities"
        for r in data["results"]:
            assert set(r) >= {"quantity", "value", "reference", "tolerance", "passed", "source"}
            assert isinstance(r["value"], float) and isinstance(r["passed"], bool) and r["source"]
        assert (tmp_path / f"{name}.png").stat().st_size > 10_000
        assert name in table
    # the report index: every case in the summary table, with its checks and its figure
    index = (tmp_path / "index.md").read_text()
    html = (tmp_path / "index.html").read_text()
    assert f"**{len(EXPECTED_CASES)} of {len(EXPECTED_CASES)} case(s) passed.**" in index
    for name in EXPECTED_CASES:
        n_checks = len(json.loads((tmp_path / f"{name}.json").read_text())["results"])
        assert f"| [{name}](#{name}) |" in index and f"| {n_checks}/{n_checks} |" in index, name
        assert f"![{name}]({name}.png)" in index, f"{name}: figure missing from index.md"
        assert f"<img src='{name}.png'" in html and f"id='{name}'" in html, f"{name}: missing from index.html"


def test_report_index_marks_failed_and_crashed_cases(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "always_off.py").write_text(FAILING_CASE)
    (cases / "crashes.py").write_text(CRASHING_CASE)
    report = tmp_path / "report"
    assert main(["validate", "--cases-dir", str(cases), "--out", str(tmp_path / "out"),
                 "--report", str(report)]) == 1
    index = (report / "index.md").read_text()
    assert "**0 of 2 case(s) passed.**" in index
    assert "| [always-off](#always-off) | deliberately failing | 1/2 |" in index
    assert "The case did not complete:** `RuntimeError: boom in node 7`" in index
    assert "<tr class=\"fail\">" in (report / "index.html").read_text()
