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

from bytecode import write_bytecode

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
    write_bytecode()
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


@dataclass
class Benchmark:
    """What differs between the time-to-accuracy scripts; :func:`run_benchmark` does the rest."""

    name: str                                            # cache file stem
    description: str                                     # the script's one-line purpose (--help)
    case_file: Path
    targets: Sequence[Target]
    reference: float
    groups: dict[tuple[str, str], Sequence[int]]         # (scheme, mass) -> meshes; the first is the main one
    steps_fine_to_coarse: Sequence[float]
    solve: Callable[[int, float, str, str], float | None]
    module: str                                          # the script's module name, for the whole-process runs
    step_text: Callable[[float], str]                    # a step as written in the log ("dt 0.05 s")
    step_cells: Callable[[Candidate], list[str]]         # step, steps run, value cells of a table row
    header: Sequence[str]                                # the step and value columns of the table
    caption: str                                         # printed above the table; {repeats} is filled in


def run_benchmark(b: Benchmark) -> None:
    """Command line (``--repeats``, ``--fresh``, ``--main-only``), the search per (scheme, mass),
    the whole-process timing of each target's cheapest configuration, and the table."""
    import argparse

    parser = argparse.ArgumentParser(description=b.description)
    parser.add_argument("--repeats", type=int, default=5, help="whole-process runs per configuration")
    parser.add_argument("--fresh", action="store_true", help="ignore cached runs of the search")
    parser.add_argument("--main-only", action="store_true", help="only the mid-point scheme with cubic mass")
    args = parser.parse_args()
    cache = RunCache(CACHE_DIR / f"{b.name}.json", source_fingerprint(b.case_file), args.fresh)
    groups = list(b.groups.items())[:1] if args.main_only else list(b.groups.items())
    b.solve(2, b.steps_fine_to_coarse[-1], "mid-point", "cubic")    # imports and first calls, untimed
    rows = []
    for (scheme, mass), meshes in groups:
        print(f"search: {scheme}, {mass} mass, elements {meshes}, {b.step_text(b.steps_fine_to_coarse[0])} ... "
              f"{b.step_text(b.steps_fine_to_coarse[-1])}", flush=True)

        def run(n: int, step: float, scheme=scheme, mass=mass) -> dict:
            return cache.get(f"{scheme}|{mass}|{n}|{step!r}", lambda: timed(lambda: b.solve(n, step, scheme, mass)))

        found = search(meshes, b.steps_fine_to_coarse, b.targets, run)
        for target in b.targets:
            if not found[target]:
                rows.append([target.label, scheme, mass, "none of " + ", ".join(map(str, meshes))]
                            + ["-"] * (len(b.header) + 3))
                continue
            best = min(found[target], key=lambda c: c.cpu_s)
            code = (f"import sys; sys.path.insert(0, 'benchmarks'); from {b.module} import solve; "
                    f"print(repr(solve({best.n_elements}, {best.step!r}, {scheme!r}, {mass!r})))")
            timing = whole_process(code, args.repeats)
            others = ", ".join(f"{c.n_elements} el. {b.step_text(c.step)}" for c in found[target] if c is not best)
            rows.append([target.label, scheme, mass, str(best.n_elements), *b.step_cells(best),
                         f"{abs(best.value / b.reference - 1):.1e}", f"{best.cpu_s:.3f}",
                         f"{timing['wall_s']:.2f} / {timing['cpu_s']:.2f}", others or "-"])
            print(f"  {target.label}: {best.n_elements} el., {b.step_text(best.step)}: whole process "
                  f"{timing['wall_s']:.2f} s wall, {timing['cpu_s']:.2f} s CPU (runs: "
                  + ", ".join(f"{w:.2f}" for w in timing["wall_s_all"]) + f"; printed {timing['printed']})",
                  flush=True)
    print("\n" + b.caption.format(repeats=args.repeats) + "\n")
    print(format_table(["target", "scheme", "mass", "elements", *b.header, "rel. error", "search run CPU (s)",
                        "whole process wall / CPU (s)", "other robust meshes"], rows))
