"""Study files under faults: SIGKILL at chosen writes (while variants are recorded, while the
file is made and inside its close), damaged bytes, a full disk.

A killed run is a subprocess that kills itself (SIGKILL) at its K-th write to the study file
(the writes HDF5 makes through the file's :class:`~flexmb.io.guarded_file.FaultGuard`), so that
the kill falls between two writes of one flush, as a kill at a random moment can. The full disk
is a file size limit (``RLIMIT_FSIZE``, SIGXFSZ ignored so that a write fails with EFBIG as on a
full disk with ENOSPC) in a subprocess. The random kills of whole runs, 50 of them, are in
``benchmarks/study_kills.py``.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import h5py
import numpy as np
import pytest

from flexmb.checks import FlexmbWarning, ModelError
from flexmb.studies import Study, grid, load_study, load_study_script
from flexmb.studies.store import FILE_NAME, read_study

REPO = Path(__file__).resolve().parents[1]

SCRIPT = '''
import numpy as np
from flexmb.studies import Study, grid


def run(p):
    return {"y": p["x"] ** 2 + 0.5, "pair": np.array([p["x"], -2.0 * p["x"]])}


STUDY = Study("faults", run, grid(x=[float(i) for i in range(N)]))
'''

#: runs the study of argv[1] into argv[2] (resumed if argv[3] == "resume"), killing itself at
#: the KILL_AT-th write to the study file (0: never); logs every variant whose record was
#: written (after StudyStore.append returns) to LOG, and prints the number of writes made
#: before the study file's close began and in all
CHILD = textwrap.dedent('''
    import os, signal, sys
    from flexmb.io.guarded_file import FaultGuard
    from flexmb.studies import load_study_script, store
    kill_at, writes, before_close = int(os.environ["KILL_AT"]), [0], [0]
    write = FaultGuard.write
    def counted_write(self, buffer):
        writes[0] += 1
        if writes[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return write(self, buffer)
    FaultGuard.write = counted_write
    close = store.StudyWriter.close
    def counted_close(self, *args):
        before_close[0] = writes[0]
        close(self, *args)
    store.StudyWriter.close = counted_close
    log = open(os.environ["LOG"], "a", buffering=1)
    append = store.StudyStore.append
    def logged_append(self, vid, params, record):
        append(self, vid, params, record)
        log.write(vid + "\\n")
    store.StudyStore.append = logged_append
    study = load_study_script(sys.argv[1])
    study.run(out=sys.argv[2], serial=True, progress=False, resume=sys.argv[3] == "resume")
    print("writes", before_close[0], writes[0])
''')


def study_script(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "faults.py"
    path.write_text(SCRIPT.replace("N", str(n)))
    return path


def expected(x: float) -> tuple[float, np.ndarray]:
    return x ** 2 + 0.5, np.array([x, -2.0 * x])


def run_child(script: Path, out: Path, log: Path, kill_at: int, resume: bool = False) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), KILL_AT=str(kill_at), LOG=str(log))
    return subprocess.run([sys.executable, "-c", CHILD, str(script), str(out), "resume" if resume else "new"],
                          env=env, capture_output=True, text=True, timeout=120)


def assert_holds(out: Path, finished: set[str], what: str) -> None:
    """The study file in ``out`` loads and holds every variant of ``finished`` with exact values."""
    records = read_study(out / FILE_NAME).records
    for vid in finished:
        assert vid in records and not records[vid]["error"], f"{what}: finished variant {vid} was lost"
        y, pair = expected(records[vid]["parameters"]["x"])
        assert records[vid]["values"]["y"] == y and np.array_equal(records[vid]["values"]["pair"], pair), vid


def assert_complete(result, n: int) -> None:
    t = result.table
    assert len(t) == n and (t["error"] == "").all(), t[t["error"] != ""]
    assert np.array_equal(t["y"], t["x"] ** 2 + 0.5) and np.array_equal(t["pair[1]"], -2.0 * t["x"])
    assert not [p.name for p in result.path.parent.iterdir() if p.name.endswith(".tmp")], "a temporary file was left"


def logged(log: Path) -> set[str]:
    return set(log.read_text().split()) if log.exists() else set()


def test_a_study_killed_at_any_write_keeps_every_finished_variant_and_resumes(tmp_path):
    n = 12
    script = study_script(tmp_path, n)
    reference = run_child(script, tmp_path / "reference", tmp_path / "reference.log", 0)
    assert reference.returncode == 0, reference.stderr
    before_close, total = (int(x) for x in re.search(r"writes (\d+) (\d+)", reference.stdout).groups())
    assert 0 < before_close < total, reference.stdout
    study = load_study_script(script)
    # while the file is made, while variants are recorded, in the close, at its very last write
    for kill_at in (3, (before_close + 3) // 2, before_close + 1, total):
        out, log = tmp_path / f"killed-{kill_at}", tmp_path / f"killed-{kill_at}.log"
        killed = run_child(script, out, log, kill_at)
        assert killed.returncode == -signal.SIGKILL, f"write {kill_at} of {total}: {killed.returncode} {killed.stderr}"
        finished = logged(log)
        if (out / FILE_NAME).exists():
            assert_holds(out, finished, f"killed at write {kill_at} of {total}")
        else:
            assert not finished, f"killed at write {kill_at}: no study file, but variants had finished"
        if kill_at > before_close:
            assert len(finished) == n, "a kill in the close comes after every variant"
        resumed = study.run(out=out, serial=True, progress=False, resume=True)
        assert_complete(resumed, n)
        assert read_study(out / FILE_NAME).status == "finished"

    # a resumed run killed while it makes the new file: the old file is untouched, resume again
    out, log = tmp_path / "twice", tmp_path / "twice.log"
    assert run_child(script, out, log, (before_close + 3) // 2).returncode == -signal.SIGKILL
    before = (out / FILE_NAME).read_bytes()
    assert run_child(script, out, log, 3, resume=True).returncode == -signal.SIGKILL
    assert (out / FILE_NAME).read_bytes() == before, "a killed resume changed the file it resumes"
    assert_holds(out, logged(log), "killed twice")
    assert_complete(study.run(out=out, serial=True, progress=False, resume=True), n)


CALLS: list[float] = []                          # variants counted_run computed


def counted_run(p: dict) -> dict:
    CALLS.append(p["x"])
    y, pair = expected(p["x"])
    return {"y": y, "pair": pair}


def test_a_damaged_record_is_named_and_computed_again_on_resume(tmp_path):
    """One flipped bit in the stored values of variant 5 and one in the text of variant 9: loading
    names exactly those two (their neighbours in the same HDF5 chunks still load), resume
    computes only them."""
    study = Study("damaged", counted_run, grid(x=[float(i) for i in range(12)]))
    first = study.run(out=tmp_path, serial=True, progress=False)
    path = tmp_path / FILE_NAME
    with h5py.File(path, "r") as f:
        ends = f["records/end"][()]                               # (n, 2) text and value ends
        ids = [v.decode() for v in f["records/id"][()]]
        places = {name: f[f"records/{name}"].id.get_chunk_info(0).byte_offset for name in ("text", "values")}
    assert ends[-1, 1] <= 512 and ends[-1, 0] <= 4096, "the test wants every record in one chunk"
    flips = {ids[5]: places["values"] + 8 * int(ends[4, 1]) + 3,  # a byte of variant 5's y
             ids[9]: places["text"] + int(ends[8, 0]) + 20}     # a byte of variant 9's text
    with open(path, "r+b") as raw:
        for offset in flips.values():
            raw.seek(offset)
            byte = raw.read(1)[0]
            raw.seek(offset)
            raw.write(bytes([byte ^ 0x10]))
    with pytest.raises(ModelError) as error:
        load_study(tmp_path)
    message = str(error.value)
    assert str(path) in message and f"variants {ids[5]}, {ids[9]} are damaged" in message, message
    assert "resume the study" in message
    CALLS.clear()
    with pytest.warns(FlexmbWarning, match=f"{ids[5]}, {ids[9]} are damaged .* computed again"):
        resumed = study.run(out=tmp_path, serial=True, progress=False, resume=True)
    assert sorted(CALLS) == [5.0, 9.0], f"resume computed {CALLS}, not only the damaged variants"
    assert resumed.table[["x", "y", "pair[0]", "pair[1]"]].equals(first.table[["x", "y", "pair[0]", "pair[1]"]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")                        # the new file is whole
        assert_complete(load_study(tmp_path), 12)


def run_with_size_limit(script: Path, out: Path, limit: int, resume: bool = False) -> subprocess.CompletedProcess:
    code = textwrap.dedent(f"""
        import resource, signal, sys
        from flexmb.studies import StudyFileError, load_study_script
        study = load_study_script({str(script)!r})
        import h5py, pandas                                      # imported before the limit
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)           # the write fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
        try:
            study.run(out={str(out)!r}, serial=True, progress=False, resume={resume})
        except StudyFileError as exc:
            print(exc, file=sys.stderr)
            sys.exit(1)
        """)
    return subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(REPO)),
                          capture_output=True, text=True, timeout=120)


def test_a_full_disk_stops_the_study_with_one_line_and_keeps_every_written_variant(tmp_path):
    n = 60
    script = study_script(tmp_path, n)
    study = load_study_script(script)
    complete = study.run(out=tmp_path / "room", serial=True, progress=False)
    size = (tmp_path / "room" / FILE_NAME).stat().st_size
    out = tmp_path / "full"
    done = run_with_size_limit(script, out, size - 8192)         # the last chunks do not fit
    assert done.returncode == 1, f"not a clean exit ({done.returncode}):\n{done.stderr}"
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    match = re.fullmatch(rf"study file {re.escape(str(out / FILE_NAME))}: writing failed: File too large \[EFBIG\]; "
                         r"the file keeps the (\d+) variant records written before, status failed \(resume the "
                         r"study once there is room\)", lines[0])
    assert match, lines[0]
    kept = int(match.group(1))
    assert 0 < kept < n, kept
    stored = read_study(out / FILE_NAME)
    assert len(stored.records) == kept and stored.status == "failed"
    assert_holds(out, set(stored.records), "full disk")
    # a resume with no room to make its new file leaves the old one as it was
    before = (out / FILE_NAME).read_bytes()
    again = run_with_size_limit(script, out, 4096, resume=True)
    assert again.returncode == 1 and re.search(r"cannot write it: File too large \[EFBIG\]; .*study.h5 is as it was "
                                               "before", again.stderr), again.stderr
    assert (out / FILE_NAME).read_bytes() == before
    resumed = study.run(out=out, serial=True, progress=False, resume=True)
    assert_complete(resumed, n)
    assert resumed.table[["x", "y"]].equals(complete.table[["x", "y"]])
    # no room at all: no file is made, and none is left behind
    nothing = run_with_size_limit(script, tmp_path / "none", 4096)
    assert nothing.returncode == 1 and "no study file was made" in nothing.stderr, nothing.stderr
    assert sorted(p.name for p in (tmp_path / "none").iterdir()) == ["study.lock"]


def test_a_summary_that_does_not_fit_names_its_file_and_writes_nothing(tmp_path):
    script = study_script(tmp_path, 20)
    load_study_script(script).run(out=tmp_path / "room", serial=True, progress=False)
    code = textwrap.dedent(f"""
        import resource, signal, sys
        import matplotlib.pyplot, pandas
        from flexmb.studies import StudyFileError, load_study
        result = load_study({str(tmp_path / "room")!r})
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))   # the tables fit, the plots do not
        try:
            result.write({str(tmp_path / "summary")!r})
        except StudyFileError as exc:
            print(exc, file=sys.stderr)
            sys.exit(1)
        """)
    done = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(REPO)),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert re.fullmatch(rf"cannot write the summary of study faults in {re.escape(str(tmp_path / 'summary'))}: "
                        r"writing (study.h5|the plots) failed: File too large \[EFBIG\]; nothing was written there "
                        r"\(.*study.h5 holds the results\)\n", done.stderr), done.stderr
    assert list((tmp_path / "summary").iterdir()) == [], "a failed summary left files behind"


def test_a_format_1_study_file_is_read_and_resumed_into_format_2(tmp_path):
    """The layout before version 2 (one group per variant, written in place): read as it was, and a
    resume copies its records into a new file of the current format."""
    study = Study("old", counted_run, grid(x=[0.0, 1.0, 2.0]))
    with h5py.File(tmp_path / FILE_NAME, "w") as f:
        f.attrs.update({"format": "flexmb-study-1", "name": "old", "description": "", "parameters": '["x"]',
                        "kind": "grid"})
        f["space/values"] = study.space.values
        f["space/ids"] = np.array(study.space.ids, dtype="S12")
        for vid, params in list(zip(study.space.ids, study.space))[:2]:
            g = f.create_group(f"variants/{vid}")
            g.attrs.update({"parameters": f'{{"x": {params["x"]}}}', "seconds": 0.1, "worker": "old:1", "error": ""})
            g["y"], g["pair"] = expected(params["x"])
    old = load_study(tmp_path).table
    assert list(old["error"]) == ["", "", "not computed"] and list(old["y"][:2]) == [0.5, 1.5]
    CALLS.clear()
    resumed = study.run(out=tmp_path, serial=True, progress=False, resume=True)
    assert CALLS == [2.0], CALLS
    assert_complete(resumed, 3)
    with h5py.File(tmp_path / FILE_NAME, "r") as f:
        assert f.attrs["format"] == "flexmb-study" and f.attrs["format_version"] == 2
