"""Shared machinery of the time-to-accuracy benchmarks (``time_to_accuracy_spin_up.py``,
``time_to_accuracy_slider_crank.py``): the robust-step search, a cache of its runs, and the
whole-process timing of the configuration it picks.

A configuration (scheme, mass, elements, step) meets a target *robustly* when the checked quantity
is within the target at that step and at every smaller step of the ladder tried with the same
mesh (a run that fails counts as a miss). Per mesh the ladder is run from the smallest step up and
stops at the first miss of the loosest target: no larger step of that mesh can be robust. Among
the meshes, the cheapest configuration is the one whose run took the least CPU time in this
process; it is then timed as a whole process (a fresh ``python -c`` that imports, builds,
integrates and extracts the quantity), median of ``repeats`` runs.

Runs are cached in a JSON file keyed by the configuration and a fingerprint of flexmb's and the
case's source, so a rerun with unchanged code only redoes the whole-process timings.
"""
from __future__ import annotations

import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

REPO = Path(__file__).resolve().parents[1]
CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "flexmb-benchmarks"


def source_fingerprint(*extra: Path) -> str:
    """sha1 of flexmb's Python source and the given files: a cached run is reused only while
    the code that made it is unchanged."""
    digest = hashlib.sha1()
    for path in sorted((REPO / "flexmb").rglob("*.py")) + sorted(extra):
        digest.update(str(path.relative_to(REPO)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class RunCache:
    """Results of the search's runs, {key: record}, in a JSON file."""

    def __init__(self, path: Path, fingerprint: str, fresh: bool = False) -> None:
        self.path, self.fingerprint = path, fingerprint
        self.records: dict[str, dict] = {}
        if path.is_file() and not fresh:
            stored = json.loads(path.read_text(encoding="utf-8"))
            if stored.get("fingerprint") == fingerprint:
                self.records = stored["runs"]

    def get(self, key: str, compute: Callable[[], dict]) -> dict:
        if key not in self.records:
            self.records[key] = compute()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps({"fingerprint": self.fingerprint, "runs": self.records}, indent=1),
                                 encoding="utf-8")
        return self.records[key]


def timed(solve: Callable[[], float | None]) -> dict:
    """Run ``solve`` once in this process: its value (None: the run failed), CPU and wall time."""
    cpu, wall = time.process_time(), time.perf_counter()
    value = solve()
    return {"value": value, "cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}


@dataclass(frozen=True)
class Target:
    """Relative tolerance ``rtol`` around ``reference``."""

    reference: float
    rtol: float

    def met(self, value: float | None) -> bool:
        return value is not None and abs(value - self.reference) <= self.rtol * abs(self.reference)

    @property
    def label(self) -> str:
        return f"{100 * self.rtol:g} %"


@dataclass
class Candidate:
    """The largest robust step of one mesh for one target, with its run."""

    n_elements: int
    step: float                     # the step parameter (dt in s, or steps per 8 rad)
    value: float
    cpu_s: float                    # CPU time of its run in this process


def search(meshes: Sequence[int], steps_fine_to_coarse: Sequence[float], targets: Sequence[Target],
           run: Callable[[int, float], dict], log=print) -> dict[Target, list[Candidate]]:
    """For every mesh, the largest robust step per target (see the module docstring)."""
    found: dict[Target, list[Candidate]] = {t: [] for t in targets}
    loosest = max(targets, key=lambda t: t.rtol)
    for n in meshes:
        robust: dict[Target, Candidate | None] = {t: None for t in targets}
        holding = set(targets)                              # targets met at every smaller step so far
        for step in steps_fine_to_coarse:
            record = run(n, step)
            value = record["value"]
            log(f"  {n:3d} el., step {step:<8g}: " + ("failed" if value is None else f"{value:.6g}")
                + f"  ({record['cpu_s']:.2f} s CPU)")
            for t in list(holding):
                if t.met(value):
                    robust[t] = Candidate(n, step, value, record["cpu_s"])
                else:
                    holding.discard(t)
            if loosest not in holding:
                break
        for t in targets:
            if robust[t] is not None:
                found[t].append(robust[t])
    return found


def whole_process(code: str, repeats: int) -> dict:
    """Run ``python -c code`` ``repeats`` times from the repository root: medians of the wall
    and CPU time (user + system of the child) and the last line it printed."""
    walls, cpus, printed = [], [], ""
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            raise RuntimeError(f"whole-process run failed:\n{code}\n{done.stderr}")
        printed = done.stdout.strip().splitlines()[-1]
    return {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus),
            "wall_s_all": walls, "printed": printed}


def format_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)
