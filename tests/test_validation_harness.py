"""The validation harness: checks, JSON/PNG output, exit codes, the CLI, and the quick cases."""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
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
                  "natural-modes-beam", "shell-strip-shear", "shell-strip-moment", "shell-cylinder-pullout",
                  "shell-pinched-cylinder", "shell-plate-buckling", "shell-plate-modes", "shell-flying-plate",
                  "prestressed-column", "jeffcott-asymmetric", "gyroscopic-disc", "rotating-cantilever",
                  "spin-up-modal-simo", "spin-up-modal-kim-haug", "pendulum-chain-dissipation",
                  "spring-mass-damper", "pendulum-spring", "rayleigh-beam", "spin-up-modal-spatial",
                  "spin-up-adaptive", "four-bar-flexible", "mechanism-equilibrium-start",
                  "state-space-frf", "imported-component", "solid-cantilever-modes", "solid-modal-body",
                  "sensitivity-spin-up", "sensitivity-shell-modal3d",
                  "sensitivity-slider-crank", "sensitivity-spring-damper", "optimize-slider-crank"}

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


def _quick_report(tmp_path: Path) -> tuple[Path, str]:
    """Folder and printed table of the quick validation, run as the README's main command with
    ``--quick``: the installed ``flexmb`` script, in the repository root, in its own process (the
    validation runs once in CI: here)."""
    script = Path(sys.executable).with_name("flexmb")
    assert script.is_file(), f"the console script {script} is missing: is flexmb installed (pip install -e .)?"
    done = subprocess.run([str(script), "validate", "--quick", "--report", str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, f"validation failed:\n{done.stdout}\n{done.stderr}"
    return tmp_path, done.stdout


def test_quick_validation_passes_and_writes_json_png_and_report(tmp_path: Path) -> None:
    tmp_path, table = _quick_report(tmp_path)
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


# ------------------------------------------------------------------ --jobs: cases in worker processes
KILLED_CASE = '''"""A case whose process dies (as by a segmentation fault or the out-of-memory killer)."""
import os
import signal

CASE = "killed"
TITLE = "its process dies"
SOURCE = "test"


def run(quick=False):
    os.kill(os.getpid(), signal.SIGKILL)
'''

SLEEPING_CASE = '''"""A case that writes its process id to {marker} and sleeps."""
import os
import time
from pathlib import Path

CASE = "sleeps-{i}"
TITLE = "sleeps"
SOURCE = "test"


def run(quick=False):
    Path({marker!r}).write_text(str(os.getpid()))
    time.sleep(60)
'''


def _without_wall_time(folder: Path) -> dict[str, dict]:
    records = {}
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text())
        assert isinstance(record.pop("wall_s"), float) and isinstance(record.pop("cpu_s"), float)
        records[path.name] = record
    return records


def test_jobs_give_the_same_table_json_and_report_as_serial(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    cheap = ["roll-up-2d", "buckling-torsion"]
    tables = {}
    for jobs in (1, 2):
        folder = tmp_path / f"jobs{jobs}"
        assert main(["validate", *cheap, "--cases-dir", str(CASES_DIR), "--report", str(folder),
                     "--jobs", str(jobs)]) == 0
        tables[jobs] = capsys.readouterr().out.replace(str(folder.resolve()), "FOLDER")
    assert tables[1] == tables[2]
    assert tables[1].index("roll-up-2d ") < tables[1].index("buckling-torsion "), "selection order kept"
    assert _without_wall_time(tmp_path / "jobs1") == _without_wall_time(tmp_path / "jobs2")
    for jobs in (1, 2):                                     # the same index but for the date and the wall times
        index = (tmp_path / f"jobs{jobs}" / "index.md").read_text().splitlines()
        tables[jobs] = [re.sub(r"\| [0-9.]+ \| [0-9.]+ \| pass \|$", "| pass |", line) for line in index[3:]]
    assert tables[1] == tables[2]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_jobs_a_crash_or_a_dying_worker_fails_only_its_case(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "always_off.py").write_text(FAILING_CASE)
    (cases / "crashes.py").write_text(CRASHING_CASE)
    (cases / "killed.py").write_text(KILLED_CASE)
    (cases / "roll_up_2d.py").write_text((CASES_DIR / "roll_up_2d.py").read_text())
    out = tmp_path / "out"
    assert main(["validate", "--cases-dir", str(cases), "--report", str(out), "--jobs", "2"]) == 1
    captured = capsys.readouterr()
    assert "RuntimeError: boom in node 7" in captured.err, "the crashing case's traceback is shown"
    table = captured.out
    assert re.search(r"^killed +case did not complete .* FAIL$", table, re.M), table
    assert "1 of 4 case(s) passed" in table
    assert "killed by SIGKILL" in json.loads((out / "killed.json").read_text())["info"]["error"]
    assert "boom in node 7" in json.loads((out / "crashes.json").read_text())["info"]["error"]
    assert all(r["passed"] for r in json.loads((out / "roll-up-2d.json").read_text())["results"])
    assert "**1 of 4 case(s) passed.**" in (out / "index.md").read_text()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and process groups")
def test_jobs_interrupt_ends_the_workers_and_exits_130(tmp_path: Path) -> None:
    import signal
    import subprocess
    import time

    cases = tmp_path / "cases"
    cases.mkdir()
    markers = [tmp_path / f"pid{i}" for i in range(2)]
    for i, marker in enumerate(markers):
        (cases / f"sleeps_{i}.py").write_text(SLEEPING_CASE.format(i=i, marker=str(marker)))
    process = subprocess.Popen([sys.executable, "-m", "flexmb.cli", "validate", "--cases-dir", str(cases),
                                "--out", str(tmp_path / "out"), "--jobs", "2"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60.0
        while not all(m.exists() and m.read_text() for m in markers):
            assert time.monotonic() < deadline and process.poll() is None, "the workers did not start"
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGINT)                # Ctrl-C reaches the whole process group
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, err
    assert err.strip() == "flexmb validate: interrupted", err
    assert "case(s) passed" not in out
    for marker in markers:                                   # gone, or a zombie waiting for its reaper
        status = Path(f"/proc/{marker.read_text()}/status")
        assert not status.exists() or "\nState:\tZ" in status.read_text(), "a worker outlived the run"
