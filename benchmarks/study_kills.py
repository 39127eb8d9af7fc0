"""Kill running design studies (SIGKILL) and check what their study files keep.

    python benchmarks/study_kills.py [--kills 50] [--variants 200] [--sleep 0.001] [--seed 1]

Each trial runs ``flexmb study SCRIPT --serial --out DIR`` on a study of fast variants (0-2 ms
each, so that writing ``study.h5`` fills much of the run), kills it, then runs ``--resume`` and
kills that too, and finally runs ``--resume`` to the end. Each kill is a SIGKILL at a moment drawn
in one of three ways, in turn:

* ``anytime``: sent by this process, uniformly between the start of the study and 0.1 s after a
  complete run closes its file (measured once, on a reference run);
* ``append``: 0-2 ms after the run starts writing the record of a random variant (of those left) (a record takes
  0.3-0.6 ms to write here; in the format before version 2, 2 ms);
* ``close``: 0-0.2 ms after the start of the first close of an HDF5 file from a random variant's
  append on (the study file's close at the end of the run; before version 2, the file was
  opened and closed in every append).

The last two are sent by a POSIX timer the run arms on itself (``timer_create`` with SIGKILL),
which the kernel fires within microseconds wherever the process is, also inside HDF5's C code; a
signal from another process comes 0.1 ms or more late, after the short window in which the old
format's close left a file HDF5 could not read (5 of 30 such kills).

After every kill the study file must load and hold every variant that had *finished* (its
record written: the run reports it in a log file after ``StudyStore.append`` returns) with its
exact values; the last resume must exit 0 with every variant computed, exact values, and no
temporary file left in the folder. Prints one line per kill and the totals, "N kills, N of N
finished variants survived, resume completed N times of N". Asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

from flexmb.studies.store import FILE_NAME, read_study

STUDY = '''
import time
import numpy as np
from flexmb.studies import Study, grid


def run(p):
    time.sleep({sleep} * (p["x"] % 3))
    return {{"y": p["x"] ** 2 + 0.5, "pair": np.array([p["x"], -2.0 * p["x"]])}}


STUDY = Study("kills", run, grid(x=[float(i) for i in range({n})]))
'''

#: runs the CLI; reports each finished variant in a log file (not stdout: its buffer would mix
#: the lines). For the modes "append" and "close" it arms a POSIX timer (timer_create, through
#: ctypes) that sends the process SIGKILL after FLEXMB_KILL_DELAY seconds: the kernel delivers it
#: within microseconds, wherever the process is, also inside HDF5's C code (a signal from another
#: process arrives 0.1 ms or more late, after the short close of a file)
RUNNER = textwrap.dedent('''
    import ctypes, os, signal, sys, time
    import h5py
    from flexmb.studies import store
    log = os.open(os.environ["FLEXMB_KILL_LOG"], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    mode, at = os.environ["FLEXMB_KILL_MODE"], int(os.environ["FLEXMB_KILL_AT"])
    delay = float(os.environ["FLEXMB_KILL_DELAY"])
    libc = ctypes.CDLL(None, use_errno=True)
    class SigEvent(ctypes.Structure):
        _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int), ("notify", ctypes.c_int),
                    ("pad", ctypes.c_int * 12)]
    class TimeSpec(ctypes.Structure):
        _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]
    timer, armed = ctypes.c_void_p(), [False]
    # CLOCK_MONOTONIC (1), SIGEV_SIGNAL (0)
    if libc.timer_create(1, ctypes.byref(SigEvent(None, signal.SIGKILL, 0)), ctypes.byref(timer)):
        sys.exit("timer_create failed")
    value = (TimeSpec * 2)(TimeSpec(0, 0), TimeSpec(int(delay), max(1, int(delay % 1 * 1e9))))
    def arm():
        if not armed[0]:
            armed[0] = True
            libc.timer_settime(timer, 0, ctypes.byref(value), None)
    append, close, h5close, calls = store.StudyStore.append, store.StudyStore.close, h5py.File.close, [0]
    def reporting_append(self, vid, params, record):
        calls[0] += 1
        if mode == "append" and calls[0] == at:
            arm()
        append(self, vid, params, record)
        os.write(log, f"done {vid}\\n".encode())
    def reporting_close(self, *args):
        close(self, *args)
        os.write(log, f"closed {time.time()!r}\\n".encode())
    def h5_close(self):                    # "close": the first close of an HDF5 file from the j-th append on
        if mode == "close" and calls[0] >= at:
            arm()
        h5close(self)
    store.StudyStore.append, store.StudyStore.close, h5py.File.close = reporting_append, reporting_close, h5_close
    from flexmb.cli import main
    os.write(log, f"start {time.time()!r}\\n".encode())
    sys.exit(main(sys.argv[1:]))
''')
MODES = ("anytime", "append", "close")
#: s: the kill comes this long at most after an append starts (one takes 0.3-0.6 ms here, 2 ms in
#: the format before version 2) or after the start of an HDF5 file's close
APPEND_WINDOW, CLOSE_WINDOW = 0.002, 0.0002


def expected(x: float) -> tuple[float, np.ndarray]:
    return x ** 2 + 0.5, np.array([x, -2.0 * x])


def launch(script: Path, out: Path, log: Path, resume: bool, mode: str = "anytime", at: int = 0,
           delay: float = 0.0) -> subprocess.Popen:
    args = [sys.executable, "-c", RUNNER, "study", str(script), "--serial", "--out", str(out)]
    env = dict(os.environ, FLEXMB_KILL_LOG=str(log), FLEXMB_PROGRESS="0", FLEXMB_KILL_MODE=mode,
               FLEXMB_KILL_AT=str(at), FLEXMB_KILL_DELAY=repr(delay))
    return subprocess.Popen(args + (["--resume"] if resume else []), env=env, cwd=script.parent,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def finished(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [line.split()[1] for line in log.read_text().splitlines() if line.startswith("done ")]


def check_file(out: Path, must_hold: set[str]) -> tuple[int, str]:
    """Variants of ``must_hold`` the file keeps with exact values, and a problem ("" if none)."""
    path = out / FILE_NAME
    if not path.exists():
        return 0, "" if not must_hold else f"no study file, {len(must_hold)} variants had finished"
    try:
        stored = read_study(path)
    except Exception as exc:                                   # noqa: BLE001  any error is the finding
        return 0, f"unreadable: {type(exc).__name__}: {exc}"
    kept = 0
    for vid in must_hold:
        record = stored.records.get(vid)
        if record is None or record["error"]:
            return kept, f"finished variant {vid} lost"
        y, pair = expected(record["parameters"]["x"])
        if record["values"]["y"] != y or not np.array_equal(record["values"]["pair"], pair):
            return kept, f"variant {vid} has other values"
        kept += 1
    return kept, ""


def timed_reference(script: Path, folder: Path) -> tuple[float, float]:
    """Seconds from launch to the study's start and to the close of its file in a complete run."""
    log = folder / "reference.log"
    launched = time.time()
    _, err = launch(script, folder / "reference", log, resume=False).communicate(timeout=300)
    if not log.exists():
        sys.exit(f"the reference run failed:\n{err}")
    marks = dict(line.split() for line in log.read_text().splitlines() if not line.startswith("done"))
    return float(marks["start"]) - launched, float(marks["closed"]) - launched


def kill(script: Path, out: Path, log: Path, resume: bool, mode: str, window: tuple[float, float],
         n_left: int, rng: random.Random) -> tuple[str, int | None]:
    """Run the study and SIGKILL it at a moment drawn as ``mode`` says; (when, exit code)."""
    if mode == "anytime":
        delay = rng.uniform(*window)
        process = launch(script, out, log, resume)
        try:
            process.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            process.kill()
        process.wait()
        return f"at {delay:5.2f} s", process.returncode
    at = rng.randint(1, max(1, n_left))
    delay = rng.uniform(0.0, APPEND_WINDOW if mode == "append" else CLOSE_WINDOW)
    process = launch(script, out, log, resume, mode, at, delay)
    process.wait()
    where = (f"into the append of variant {at}" if mode == "append" else
             f"into the first HDF5 file close from the append of variant {at} on")
    return f"{delay * 1e3:.3f} ms {where}", process.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--variants", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sleep", type=float, default=0.001,
                        help="a variant sleeps 0, 1 or 2 times this (s): short, so that writes fill the run")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        script = folder / "kills.py"
        script.write_text(STUDY.format(n=args.variants, sleep=args.sleep))
        start, end = timed_reference(script, folder)
        print(f"reference run: the study starts {start:.2f} s after launch and closes its file at {end:.2f} s")
        window = (start, end + 0.1)
        kills = survived = total = completed = problems = trial = runs = 0
        by_mode = dict.fromkeys(MODES, 0)
        while kills < args.kills:
            trial += 1
            out, log = folder / f"trial{trial}", folder / f"trial{trial}.log"
            for resume in (False, True):
                if kills == args.kills:
                    break
                mode = MODES[runs % len(MODES)]
                runs += 1
                n_left = args.variants - len(set(finished(log)))
                what, code = kill(script, out, log, resume, mode, window, n_left, rng)
                must_hold = set(finished(log))
                kept, problem = check_file(out, must_hold)
                killed = code == -signal.SIGKILL
                kills += killed
                by_mode[mode] += killed
                survived += kept if killed else 0
                total += len(must_hold) if killed else 0
                problems += bool(problem)
                print(f"trial {trial:2d} {'resume' if resume else 'first '}: killed {what} (exit {code}), "
                      f"{len(must_hold):3d} variants finished, {kept:3d} kept"
                      + (f"  PROBLEM: {problem}" if problem else ""))
            last = launch(script, out, log, resume=True)
            _, err = last.communicate(timeout=300)
            try:
                table = read_study(out / FILE_NAME).records
                values_ok = all(not r["error"] and r["values"]["y"] == expected(r["parameters"]["x"])[0]
                                for r in table.values())
                ok = last.returncode == 0 and len(table) == args.variants and values_ok
            except Exception as exc:                           # noqa: BLE001  any error is the finding
                ok, err = False, f"{type(exc).__name__}: {exc}"
            leftovers = [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
            ok = ok and not leftovers
            completed += ok
            problems += not ok
            if not ok:
                print(f"trial {trial}: resume did not complete (exit {last.returncode}, leftovers {leftovers}): "
                      f"{_last_line(err)}")
        print(f"{kills} kills ({', '.join(f'{n} {m}' for m, n in by_mode.items())}), {survived} of {total} finished "
              f"variants survived, resume completed {completed} times of {trial}; problems: {problems}")


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


if __name__ == "__main__":
    main()
