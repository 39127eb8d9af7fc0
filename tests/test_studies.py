"""Design studies (flexmb.studies): spaces, serial against Dask, a killed worker, resume, a real
scheduler with separate worker processes, the CLI and its errors."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.cli import main
from flexmb.studies import (
    Study,
    grid,
    latin_hypercube,
    load_study,
    load_study_script,
    random_samples,
    variant_id,
    variants,
)
from flexmb.studies.plots import sensitivity, write_plots

SLEEP = 0.3                                     # s per variant of the worker-kill study


# ------------------------------------------------------------------ run functions (module level)
def beam_run(p: dict) -> dict:
    """A cheap formula and the two lowest frequencies of a 2-element cantilever (1 m)."""
    m = fm.Model(dim=2)
    m.add_nodes(np.c_[np.linspace(0.0, 1.0, 3), np.zeros(3)])
    m.add_beam2d([[0, 1], [1, 2]], EA=1e6, EI=p["EI"], rho_A=p["rhoA"], mass="cubic")
    m.fix(0)
    modes = fm.natural_modes(m, n_modes=2)
    return {"cheap": np.sqrt(p["EI"]) * np.sin(p["rhoA"]), "frequencies": modes.frequencies_hz[:2]}


def slow_run(p: dict) -> dict:
    """Marks which process started the variant, then sleeps (a kill lands during the sleep)."""
    Path(os.environ["FLEXMB_TEST_MARKS"], f"{os.getpid()}-{int(p['i'])}").touch()
    time.sleep(SLEEP)
    return {"y": 2.0 * p["i"]}


def _script(path: Path, body: str) -> Path:
    path.write_text("import os\nimport signal\nimport numpy as np\n"
                    "from flexmb.studies import Study, grid\n\n" + body)
    return path


COUNTING_STUDY = '''
SCALE = 3.0                                       # a module global: reaches the workers by value


def run(p):
    calls = os.environ["FLEXMB_TEST_CALLS"]
    with open(calls, "a") as f:
        f.write(f"{p['x']}\\n")
    with open(calls) as f:
        n = len(f.readlines())
    if n == int(os.environ.get("FLEXMB_TEST_STOP_AT", "0")):
        os.kill(os.getpid(), signal.SIGKILL)      # the study is killed during its 5th variant
    return {"y": SCALE * p["x"] ** 2, "pair": np.array([p["x"], -p["x"]])}


STUDY = Study("counting", run, grid(x=[float(i) for i in range(10)]), quick_space=grid(x=[0.0, 1.0]))
'''


# ------------------------------------------------------------------ spaces
def test_grid_order_and_ids():
    space = grid(a=[1.0, 2.0], b=[3.0, 4.0, 5.0])
    assert len(space) == 6 and space.names == ("a", "b") and space.kind == "grid"
    assert [tuple(v.values()) for v in space] == [(1, 3), (1, 4), (1, 5), (2, 3), (2, 4), (2, 5)]
    assert space[4] == {"a": 2.0, "b": 4.0}
    assert space.ids[4] == variant_id({"b": 4.0, "a": 2.0})           # order of names does not matter
    assert len(set(space.ids)) == 6 and all(len(i) == 12 for i in space.ids)
    assert variants(list(space)).ids == space.ids                   # same values, same ids


def test_latin_hypercube_stratified_and_reproducible():
    n, ranges = 50, {"EI": (0.9, 1.1), "rhoA": (1.1, 1.3), "c": (-2.0, 5.0)}
    space = latin_hypercube(ranges, n=n, seed=1)
    for j, (low, high) in enumerate(ranges.values()):
        bins = np.floor((space.values[:, j] - low) / (high - low) * n).astype(int)
        assert sorted(bins) == list(range(n)), f"parameter {j}: bins hit {np.bincount(bins, minlength=n)}"
    assert np.array_equal(latin_hypercube(ranges, n=n, seed=1).values, space.values)
    assert not np.array_equal(latin_hypercube(ranges, n=n, seed=2).values, space.values)


def test_random_samples_reproducible_and_distributed():
    spec = {"EI": ("normal", 1.0, 0.05), "rhoA": ("uniform", 1.1, 1.3), "k": ("lognormal", 0.0, 0.1)}
    space = random_samples(spec, n=4000, seed=1)
    assert np.array_equal(random_samples(spec, n=4000, seed=1).values, space.values)
    ei, rho, k = space.values.T
    assert abs(ei.mean() - 1.0) < 4 * 0.05 / np.sqrt(4000) and abs(ei.std() / 0.05 - 1) < 0.05
    assert rho.min() >= 1.1 and rho.max() < 1.3 and abs(rho.mean() - 1.2) < 0.005
    assert abs(np.log(k).std() / 0.1 - 1) < 0.05


@pytest.mark.parametrize("make, match", [
    (lambda: grid(), "at least one parameter"),
    (lambda: grid(a=[]), "'a' needs a non-empty list"),
    (lambda: grid(a=[1.0, 1.0]), "'a' repeats a level"),
    (lambda: grid(a=[1.0, float("nan")]), "'a' = nan is not a finite number"),
    (lambda: latin_hypercube({"a": (1.0, 0.0)}, n=4), "'a' range .* low < high"),
    (lambda: latin_hypercube({"a": (0.0, 1.0)}, n=0), "n = 0 must be a positive integer"),
    (lambda: latin_hypercube({"a": 3.0}, n=3), "'a' needs a range"),
    (lambda: random_samples({"a": ("beta", 1.0, 2.0)}, n=3), "'a' needs \\(kind, a, b\\)"),
    (lambda: random_samples({"a": ("normal", 1.0, -2.0)}, n=3), "'a': normal needs a positive std"),
    (lambda: variants([{"a": 1.0}, {"b": 2.0}]), "item 1 has parameters \\['b'\\]"),
    (lambda: variants([{"a": 1.0}, {"a": 1.0}]), "variants 0 and 1 .* are the same"),
    (lambda: variants([{"a b": 1.0}]), "'a b' must be a Python identifier"),
    (lambda: Study("x y", beam_run, grid(a=[1.0])), "name 'x y'"),
    (lambda: Study("s", 3.0, grid(a=[1.0])), "run must be a function"),
    (lambda: Study("s", beam_run, [{"a": 1.0}]), "space must be made by grid"),
    (lambda: Study("s", beam_run, grid(a=[1.0]), quick_space=grid(b=[1.0])), "quick_space has parameters"),
])
def test_bad_input_names_the_item(make, match):
    with pytest.raises(ModelError, match=match):
        make()


def test_sensitivity_of_a_linear_response(tmp_path):
    """y = 2 a - 3 b + 0 c: standardised coefficients 2 s_a / s_y, -3 s_b / s_y, 0 (exact fit)."""
    study = Study("linear", lambda p: {"y": 2 * p["a"] - 3 * p["b"]},
                  latin_hypercube({"a": (0.0, 1.0), "b": (0.0, 2.0), "c": (5.0, 6.0)}, n=40, seed=3))
    result = study.run(out=tmp_path, serial=True, progress=False)
    s = sensitivity(result).loc["y"].to_numpy()
    a, b = result.table["a"], result.table["b"]
    y = 2 * a - 3 * b
    expected = [2 * a.std(ddof=0) / y.std(ddof=0), -3 * b.std(ddof=0) / y.std(ddof=0), 0.0]
    assert np.allclose(s, expected, atol=1e-12), f"{s} != {expected}"


# ------------------------------------------------------------------ execution
CALLS: list[float] = []                          # variants flaky_run computed (serial: this process)
BROKEN = {2.0}                                   # values of x for which flaky_run raises


def test_units_label_the_plots_and_survive_the_study_file(tmp_path, monkeypatch):
    import matplotlib.figure

    units = {"EI": "N m^2", "rhoA": "kg/m", "frequencies": "Hz"}
    study = Study("units", beam_run, grid(EI=[1.0, 2.0], rhoA=[1.0, 2.0]), units=units)
    result = study.run(out=tmp_path, serial=True, progress=False)
    again = load_study(tmp_path)
    assert again.units == units
    assert again.label("frequencies[1]") == "frequencies[1] (Hz)" and again.label("cheap") == "cheap"
    # frequencies of the same beam scale as sqrt(EI / rhoA): the table is the physics, the labels its units
    row = again.table.set_index(["EI", "rhoA"])
    ratio = row.loc[(2.0, 1.0), "frequencies[0]"] / row.loc[(1.0, 1.0), "frequencies[0]"]
    assert ratio == pytest.approx(np.sqrt(2.0), rel=1e-10)
    result.write(tmp_path / "out")
    assert "Units: EI in N m^2" in (tmp_path / "out" / "summary.md").read_text()
    drawn = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, *a, **k: drawn.append(fig))
    write_plots(again, tmp_path)
    labels = {ax.get_xlabel() for fig in drawn for ax in fig.axes} | {ax.get_ylabel() for fig in drawn for ax in fig.axes}
    assert {"EI (N m^2)", "rhoA (kg/m)", "frequencies[0] (Hz)", "cheap"} <= labels, labels
    with pytest.raises(ModelError, match="'mass'.*neither a parameter"):
        Study("units", beam_run, grid(EI=[1.0]), quantities=["cheap"], units={"mass": "kg"})


def flaky_run(p: dict) -> dict:
    CALLS.append(p["x"])
    if p["x"] in BROKEN:
        raise RuntimeError(f"no convergence at x = {p['x']}")
    return {"y": p["x"] + 1.0, "v": np.arange(3.0 if p["x"] != 3.0 else 2.0)}


def test_failed_variants_are_recorded_and_rerun_on_resume(tmp_path):
    study = Study("flaky", flaky_run, grid(x=[0.0, 1.0, 2.0, 3.0, 4.0]))
    CALLS.clear()
    first = study.run(out=tmp_path, serial=True, progress=False)
    errors = dict(zip(first.table["x"], first.table["error"]))
    assert errors[2.0].startswith("RuntimeError: no convergence at x = 2.0 (test_studies.py, line ")
    assert errors[3.0].startswith("quantity 'v' has shape (2,), earlier variants (3,)")
    assert [errors[x] for x in (0.0, 1.0, 4.0)] == ["", "", ""] and CALLS == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert first.table.loc[first.failures.index, ["y", "v[0]"]].isna().all().all()
    assert "## Failures" in first.summary() and "no convergence at x = 2.0" in first.summary()
    BROKEN.clear()
    CALLS.clear()
    try:
        second = study.run(out=tmp_path, serial=True, resume=True, progress=False)
    finally:
        BROKEN.add(2.0)
    assert sorted(CALLS) == [2.0, 3.0]                                    # only the failed ones
    assert list(second.table["error"] != "") == [False, False, False, True, False]


def test_chosen_quantities(tmp_path):
    only_y = Study("flaky", flaky_run, grid(x=[0.0, 1.0]), quantities="y").run(out=tmp_path / "a", serial=True,
                                                                                 progress=False)
    assert list(only_y.table.columns) == ["variant", "x", "y", "seconds", "worker", "error"]
    missing = Study("flaky", flaky_run, grid(x=[0.0]), quantities=("y", "z")).run(out=tmp_path / "b", serial=True,
                                                                                    progress=False)
    vid = missing.table["variant"][0]
    assert missing.table["error"][0].startswith(f"ModelError: run function 'flaky_run' for variant {vid} {{'x': 0.0}} "
                                                "returned no 'z' (it returned ['v', 'y'])")


def returns_nothing(p: dict) -> dict | None:
    """A run that forgot its quantities for x >= 1: {} for x = 1, None (no return) for x = 2."""
    if p["x"] == 0.0:
        return {"y": 1.0}
    return {} if p["x"] == 1.0 else None


def test_a_run_that_returns_no_quantity_fails_its_variant_naming_it(tmp_path):
    result = Study("forgetful", returns_nothing, grid(x=[0.0, 1.0, 2.0])).run(out=tmp_path, serial=True,
                                                                            progress=False)
    t = result.table
    assert list(t["error"] == "") == [True, False, False], t[["x", "error"]]
    for row, got in ((1, "an empty dict"), (2, "None")):
        assert t["error"][row].startswith(f"ModelError: run function 'returns_nothing' for variant {t['variant'][row]} "
                                          f"{{'x': {float(row)}}} returned no quantity ({got})"), t["error"][row]
    assert np.isnan(t["y"][1]) and np.isnan(t["y"][2]) and t["y"][0] == 1.0


def test_one_run_per_folder_and_study_names_checked(tmp_path):
    from flexmb.studies.store import StudyStore

    space = grid(x=[1.0, 2.0])
    holder = StudyStore(tmp_path, "flaky", "", space, resume=False)
    try:
        with pytest.raises(ModelError, match="being written by another study run"):
            Study("flaky", flaky_run, space).run(out=tmp_path, serial=True, resume=True, progress=False)
    finally:
        holder.close()
    with pytest.raises(ModelError, match="holds the study 'flaky', not 'other'"):
        Study("other", flaky_run, space).run(out=tmp_path, serial=True, resume=True, progress=False)


def test_serial_and_local_cluster_give_identical_tables(tmp_path):
    """32 variants (a formula and a real modal analysis each): serial and on 2 Dask workers."""
    space = grid(EI=list(np.linspace(1.0, 2.4, 8)), rhoA=[0.5, 1.0, 1.5, 2.0])
    study = Study("beam-sweep", beam_run, space, description="first frequencies of a 2-element cantilever")
    serial = study.run(out=tmp_path / "serial", serial=True, progress=False)
    dask = study.run(out=tmp_path / "dask", workers=2, progress=False)
    columns = ["variant", "EI", "rhoA", "cheap", "frequencies[0]", "frequencies[1]"]
    assert list(serial.table.columns) == columns + ["seconds", "worker", "error"]
    assert len(dask.table) == 32 and (dask.table["error"] == "").all(), dask.failures
    assert serial.table[columns].equals(dask.table[columns])                       # bitwise, same order
    assert serial.table["worker"].nunique() == 1 and set(serial.table["worker"]).isdisjoint(dask.table["worker"])
    # Euler-Bernoulli: f1 = 1.8751^2 / (2 pi) sqrt(EI / rhoA) (two cubic elements: within 0.5 %)
    t = serial.table
    exact = 1.875104**2 / (2 * np.pi) * np.sqrt(t["EI"] / t["rhoA"])
    assert np.allclose(t["frequencies[0]"], exact, rtol=5e-3), f"{(t['frequencies[0]'] / exact - 1).abs().max():.1e}"
    back = load_study(tmp_path / "dask")
    assert back.table.equals(dask.table)


def test_killed_worker_loses_no_variant(tmp_path, monkeypatch):
    """A worker killed (SIGKILL) during a variant: the scheduler re-runs it on the other worker,
    the nanny restarts the dead one, and the table ends complete."""
    from distributed import Client, LocalCluster

    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("FLEXMB_TEST_MARKS", str(marks))               # inherited by the workers
    study = Study("kill", slow_run, grid(i=[float(i) for i in range(12)]))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=50) as cluster, Client(cluster) as client:
        victim = min(client.run(os.getpid).values())
        killed = []

        def kill_when_victim_starts() -> None:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if any(p.name.startswith(f"{victim}-") for p in marks.iterdir()):
                    os.kill(victim, signal.SIGKILL)                    # during its SLEEP
                    killed.append(victim)
                    return
                time.sleep(0.01)

        killer = threading.Thread(target=kill_when_victim_starts)
        killer.start()
        result = study.run(out=tmp_path / "out", scheduler=cluster.scheduler_address, progress=False)
        killer.join()
    t = result.table
    assert killed == [victim]
    assert (t["error"] == "").all(), t[["i", "error"]]
    assert np.array_equal(t["y"], 2.0 * t["i"])
    interrupted = [int(p.name.split("-")[1]) for p in marks.iterdir() if p.name.startswith(f"{victim}-")]
    rerun = t[t["i"].isin(interrupted) & (t["worker"].str.split(":").str[1] != str(victim))]
    assert len(rerun) >= 1, "no variant of the killed worker was re-run elsewhere"


def _run_cli(args: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flexmb.cli", *args], env={**os.environ, **env}, cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def test_interrupted_study_resumes_only_missing_variants(tmp_path):
    """The CLI is killed during the 5th of 10 variants; --resume on a 2-worker local cluster (the
    script's run reaching the workers by value) computes only the 6 missing ones."""
    script = _script(tmp_path / "counting.py", COUNTING_STUDY)
    calls = tmp_path / "calls.txt"
    out = tmp_path / "out"
    first = _run_cli(["study", str(script), "--serial", "--out", str(out)],
                     {"FLEXMB_TEST_CALLS": str(calls), "FLEXMB_TEST_STOP_AT": "5"}, tmp_path)
    assert first.returncode == -signal.SIGKILL, first.stderr
    stopped = load_study(out)
    assert (stopped.table["error"] == "").sum() == 4 and (stopped.table["error"] == "not computed").sum() == 6
    second = _run_cli(["study", str(script), "--resume", "--workers", "2", "--out", str(out)],
                      {"FLEXMB_TEST_CALLS": str(calls), "FLEXMB_PROGRESS": "0"}, tmp_path)
    assert second.returncode == 0, second.stderr
    made = [float(x) for x in calls.read_text().split()]
    assert made[:5] == [0.0, 1.0, 2.0, 3.0, 4.0] and sorted(made[5:]) == [4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    t = load_study(out).table
    assert (t["error"] == "").all() and np.array_equal(t["y"], 3.0 * t["x"] ** 2)
    assert np.array_equal(t["pair[1]"], -t["x"])
    assert {"summary.md", "summary.csv", "responses.png", "sensitivity.png"} <= {p.name for p in out.iterdir()}
    assert "10 computed, 0 failed" in second.stdout
    # the same folder without --resume, or for a study with other parameters, is refused
    again = _run_cli(["study", str(script), "--serial", "--out", str(out)], {"FLEXMB_TEST_CALLS": str(calls)},
                     tmp_path)
    assert again.returncode == 2 and "study.h5 exists: resume the study" in again.stderr
    other = _script(tmp_path / "other.py", COUNTING_STUDY.replace(
        "grid(x=[float(i) for i in range(10)]), quick_space=grid(x=[0.0, 1.0])", "grid(x=[1.0], z=[2.0])"))
    changed = _run_cli(["study", str(other), "--serial", "--resume", "--out", str(out)],
                       {"FLEXMB_TEST_CALLS": str(calls)}, tmp_path)
    assert changed.returncode == 2 and "with parameters ['x'], the space now has ['x', 'z']" in changed.stderr


def test_running_scheduler_and_separate_workers(tmp_path, monkeypatch):
    """`dask scheduler` and `dask worker` as processes of their own; a study by address and by
    FLEXMB_SCHEDULER gives the serial numbers; then the cluster is shut down."""
    from distributed import Client

    dask_cli = Path(sys.executable).with_name("dask")
    info = tmp_path / "scheduler.json"
    logs = open(tmp_path / "dask.log", "w")                                    # noqa: SIM115  outlives the processes
    scheduler = subprocess.Popen([dask_cli, "scheduler", "--scheduler-file", info, "--port", "0",
                                  "--no-dashboard", "--host", "127.0.0.1"], stdout=logs, stderr=logs)
    worker = None
    try:
        deadline = time.monotonic() + 60
        while not (info.exists() and info.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(info.read_text())["address"]
        worker = subprocess.Popen([dask_cli, "worker", address, "--nworkers", "2", "--nthreads", "1",
                                   "--no-dashboard", "--host", "127.0.0.1"], stdout=logs, stderr=logs,
                                  env={**os.environ, "FLEXMB_TEST_CALLS": str(tmp_path / "calls.txt")})
        with Client(address) as client:
            client.wait_for_workers(2, timeout=60)
            study = load_study_script(_script(tmp_path / "remote.py", COUNTING_STUDY))
            monkeypatch.setenv("FLEXMB_TEST_CALLS", str(tmp_path / "serial-calls.txt"))
            serial = study.run(out=tmp_path / "serial", serial=True, progress=False)
            by_address = study.run(out=tmp_path / "address", scheduler=address, progress=False)
            monkeypatch.setenv("FLEXMB_SCHEDULER", address)
            by_variable = study.run(out=tmp_path / "variable", progress=False)
            pids = set(client.run(os.getpid).values())
            client.shutdown()                                   # scheduler and workers end
        assert scheduler.wait(timeout=30) == 0 and worker.wait(timeout=30) == 0
    finally:
        for process in (scheduler, worker):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
        logs.close()
    for result in (by_address, by_variable):
        assert (result.table["error"] == "").all(), result.failures
        assert result.table[["x", "y", "pair[0]", "pair[1]"]].equals(serial.table[["x", "y", "pair[0]", "pair[1]"]])
        assert {int(w.split(":")[1]) for w in result.table["worker"]} <= pids


# ------------------------------------------------------------------ the command
def test_cli_serial_quick_writes_summary_and_plots(tmp_path, capsys):
    script = _script(tmp_path / "counting.py", COUNTING_STUDY)
    os.environ["FLEXMB_TEST_CALLS"] = str(tmp_path / "calls.txt")
    try:
        status = main(["study", str(script), "--serial", "--quick", "--out", str(tmp_path / "q")])
    finally:
        del os.environ["FLEXMB_TEST_CALLS"]
    out = capsys.readouterr().out
    assert status == 0
    assert "2 variants (grid over x): 2 computed, 0 failed" in out and "| y | 0 | 1.5 | 3 |" in out
    assert {"study.h5", "summary.md", "summary.csv", "responses.png"} <= {p.name for p in (tmp_path / "q").iterdir()}


def test_cli_errors(tmp_path, capsys, monkeypatch):
    cases = [
        (["study", str(tmp_path / "missing.py")], "study script .*missing.py does not exist"),
        ([_script(tmp_path / "none.py", "x = 1\n")], "defines no STUDY"),
        ([_script(tmp_path / "wrong.py", "STUDY = 3\n")], "STUDY is a int, not a flexmb.studies.Study"),
        ([_script(tmp_path / "notcallable.py", "STUDY = Study('s', 3, grid(a=[1.0]))\n")], "run must be a function"),
        ([_script(tmp_path / "badspace.py", "STUDY = Study('s', print, grid(a=[2.0, 2.0]))\n")], "repeats a level"),
        ([_script(tmp_path / "ok.py", COUNTING_STUDY), "--scheduler", "tcp://127.0.0.1:9"],
         "cannot reach the Dask scheduler at tcp://127.0.0.1:9"),
        ([tmp_path / "ok.py", "--scheduler", "tcp://127.0.0.1:9"], "cannot reach"),   # o/study.h5 holds no variant
        ([_script(tmp_path / "ok.py", COUNTING_STUDY), "--serial", "--workers", "2"], "serial runs in this process"),
    ]
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "1s")
    import dask

    dask.config.refresh()
    try:
        for args, message in cases:
            args = args if args[0] == "study" else ["study", str(args[0]), *args[1:]]
            assert main([*args, "--out", str(tmp_path / "o")]) == 2, args
            err = capsys.readouterr().err
            assert err.startswith("flexmb study: ") and len(err.splitlines()) == 1, err
            assert __import__("re").search(message, err), f"{message!r} not in {err!r}"
    finally:
        monkeypatch.delenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT")
        dask.config.refresh()


def test_import_flexmb_stays_light():
    code = "import sys, flexmb; print(sorted(m for m in ('dask', 'distributed', 'pandas') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
