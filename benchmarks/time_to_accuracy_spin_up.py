"""Time to accuracy, planar spin-up with Simo & Vu-Quoc's data (issue 14, item 5).

Target: the extreme (minimum) lateral tip deflection over 0-20 s within 1 % and 0.1 % of the
independent converged value -0.57384 m (``validation/spin_up_simo.py``; model, hub motion and
extraction from :mod:`flexmb.validation.spin_up`). For each scheme and mass the script finds the
cheapest configuration (elements, dt) meeting each target robustly, i.e. at that dt and at every
smaller dt of the ladder 0.16 ... 0.01 s (fixed steps, no cut-back: a step that does not converge
fails the run), and times it as a whole process: ``python -c`` importing flexmb, building the model,
integrating to 20 s and extracting the extreme, median of 5 fresh processes (wall and CPU time).
The main configuration is the mid-point scheme with Beam2D's cubic mass; the lumped and linear
consistent masses and Newmark (trapezoidal) are extra rows. Prints a Markdown table; asserts
nothing. Runs of the search are cached (see ``time_to_accuracy.py``).

    python benchmarks/time_to_accuracy_spin_up.py [--repeats 5] [--fresh] [--main-only]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from time_to_accuracy import CACHE_DIR, REPO, RunCache, Target, format_table, search, source_fingerprint, \
    timed, whole_process  # noqa: E402

CONVERGED = -0.57384                                     # m, Exudyn 1.13.6 (refs README item 6)
TARGETS = (Target(CONVERGED, 1e-2), Target(CONVERGED, 1e-3))
DT_FINE_TO_COARSE = (0.01, 0.0125, 0.02, 0.025, 0.04, 0.05, 0.08, 0.1, 0.16)    # s, each divides 20 s
#: (scheme, mass) -> meshes searched; the first is the main configuration
GROUPS = {("mid-point", "cubic"): (2, 3, 4, 6, 8),
          ("mid-point", "consistent"): (2, 4, 8, 16),
          ("mid-point", "lumped"): (4, 8, 16, 32),
          ("newmark", "cubic"): (2, 3, 4)}
CASE_FILE = REPO / "validation" / "spin_up_simo.py"


def solve(n_elements: int, dt: float, scheme: str = "mid-point", mass: str = "cubic") -> float | None:
    """Extreme lateral tip deflection (m) of the spin-up, or None when a step does not converge."""
    sys.path.insert(0, str(CASE_FILE.parent))
    import numpy as np

    import flexmb as fm
    from flexmb.integrators import TimeIntegrationError
    from flexmb.validation.spin_up import T_END, build, extreme, tip_deflection
    from spin_up_simo import PARAMETERS as beam

    asm, nodes = build(beam, n_elements, mass)
    try:
        h = fm.integrate(asm, dt, T_END, scheme=scheme, progress=False, max_cutbacks=0)
    except TimeIntegrationError:
        return None
    t = np.asarray(h.t)
    return extreme(t, tip_deflection(beam, t, h.positions()[:, nodes[-1]]))[1]


def whole_process_code(n_elements: int, dt: float, scheme: str, mass: str) -> str:
    return (f"import sys; sys.path.insert(0, 'benchmarks'); from time_to_accuracy_spin_up import solve; "
            f"print(repr(solve({n_elements}, {dt!r}, {scheme!r}, {mass!r})))")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="whole-process runs per configuration")
    parser.add_argument("--fresh", action="store_true", help="ignore cached runs of the search")
    parser.add_argument("--main-only", action="store_true", help="only the mid-point scheme with cubic mass")
    args = parser.parse_args()
    cache = RunCache(CACHE_DIR / "time_to_accuracy_spin_up.json", source_fingerprint(CASE_FILE), args.fresh)
    groups = list(GROUPS.items())[:1] if args.main_only else list(GROUPS.items())
    solve(2, DT_FINE_TO_COARSE[-1])                          # imports and first calls, outside the search's timings
    rows = []
    for (scheme, mass), meshes in groups:
        print(f"search: {scheme}, {mass} mass, elements {meshes}, dt {DT_FINE_TO_COARSE[0]} ... "
              f"{DT_FINE_TO_COARSE[-1]} s", flush=True)

        def run(n: int, dt: float, scheme=scheme, mass=mass) -> dict:
            return cache.get(f"{scheme}|{mass}|{n}|{dt!r}", lambda: timed(lambda: solve(n, dt, scheme, mass)))

        found = search(meshes, DT_FINE_TO_COARSE, TARGETS, run)
        for target in TARGETS:
            if not found[target]:
                rows.append([target.label, scheme, mass, "none of " + ", ".join(map(str, meshes))] + ["-"] * 7)
                continue
            best = min(found[target], key=lambda c: c.cpu_s)
            timing = whole_process(whole_process_code(best.n_elements, best.step, scheme, mass), args.repeats)
            others = ", ".join(f"{c.n_elements} el. {c.step:g} s" for c in found[target] if c is not best)
            rows.append([target.label, scheme, mass, str(best.n_elements), f"{best.step:g}",
                         str(round(20.0 / best.step)), f"{best.value:.5f}",
                         f"{abs(best.value / CONVERGED - 1):.1e}", f"{best.cpu_s:.2f}",
                         f"{timing['wall_s']:.2f} / {timing['cpu_s']:.2f}", others or "-"])
            print(f"  {target.label}: {best.n_elements} el., dt {best.step:g} s: whole process "
                  f"{timing['wall_s']:.2f} s wall, {timing['cpu_s']:.2f} s CPU (runs: "
                  + ", ".join(f"{w:.2f}" for w in timing["wall_s_all"]) + f"; printed {timing['printed']})",
                  flush=True)
    print("\nSpin-up (Simo), extreme tip deflection vs -0.57384 m; robust: the target holds at dt and at every "
          f"smaller dt down to {DT_FINE_TO_COARSE[0]} s; whole process = python -c import + build + integrate "
          f"to 20 s + extract, median of {args.repeats}\n")
    print(format_table(["target", "scheme", "mass", "elements", "dt (s)", "steps", "extreme (m)", "rel. error",
                        "search run CPU (s)", "whole process wall / CPU (s)", "other robust meshes"], rows))


if __name__ == "__main__":
    main()
