"""Time to accuracy, flexible slider-crank case A (issue 14, item 5).

Target: the quantity the case ``slider-crank-a`` checks, the first maximum of the rod's mid-span
deflection / L, within 1 % and 0.1 % of the independent converged value 0.009762
(``validation/slider_crank_a.py``; model, initial state and extraction from
:mod:`flexmb.validation.slider_crank`). The run covers the first 2.5 rad of crank rotation, which
hold the first maximum (the case's quick mode does the same; the value equals that of the full
8-rad run at the same step). The step is t_end / N with N steps per 8 rad (as the case counts
them); robust means the target holds at that step and at every smaller step of the ladder
N = 40 ... 1280 (fixed steps, no cut-back). For each scheme and mass the cheapest configuration
(elements, N) is timed as a whole process: ``python -c`` importing flexmb, building the model,
integrating 2.5 rad and extracting the maximum, median of 5 fresh processes (wall and CPU time).
The main configuration is the mid-point scheme with Beam2D's cubic mass; the lumped and linear
consistent masses and Newmark (trapezoidal) are extra rows. Prints a Markdown table; asserts
nothing. Runs of the search are cached (see ``time_to_accuracy.py``).

    python benchmarks/time_to_accuracy_slider_crank.py [--repeats 5] [--fresh] [--main-only]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from time_to_accuracy import REPO, Benchmark, Target, run_benchmark  # noqa: E402

CONVERGED = 0.009762                                     # Exudyn 1.13.6 (refs README item 6)
TARGETS = (Target(CONVERGED, 1e-2), Target(CONVERGED, 1e-3))
TURN = 2.5                                               # rad of crank rotation simulated
#: steps per 8 rad of crank rotation, smallest step first
STEPS_FINE_TO_COARSE = (1280, 960, 640, 480, 320, 240, 160, 120, 80, 60, 40)
#: (scheme, mass) -> meshes searched (even: the mid-span is a node); the first is the main configuration
GROUPS = {("mid-point", "cubic"): (2, 4, 6, 8),
          ("mid-point", "consistent"): (2, 4, 8, 16),
          ("mid-point", "lumped"): (4, 8, 16, 32),
          ("newmark", "cubic"): (2, 4, 6)}
CASE_FILE = REPO / "validation" / "slider_crank_a.py"


def solve(n_elements: int, steps_per_8_rad: int, scheme: str = "mid-point", mass: str = "cubic") -> float | None:
    """First maximum of the mid-span deflection / L, or None when a step does not converge or
    there is no maximum."""
    sys.path.insert(0, str(CASE_FILE.parent))
    import numpy as np

    import flexmb as fm
    from flexmb.integrators import TimeIntegrationError
    from flexmb.validation.slider_crank import CRANK_TURN, build, first_maximum, midspan_deflection
    from slider_crank_a import PARAMETERS as case

    asm, v0, _ = build(n_elements, case.omega, case.slider_mass, mass)
    dt = case.t_end / steps_per_8_rad
    t_end = round(steps_per_8_rad * TURN / CRANK_TURN) * dt
    try:
        h = fm.integrate(asm, dt, t_end, scheme=scheme, v0=v0, progress=False, max_cutbacks=0)
    except TimeIntegrationError:
        return None
    peak = first_maximum(case.omega * np.asarray(h.t), midspan_deflection(h.positions()))[1]
    return peak if np.isfinite(peak) else None


BENCHMARK = Benchmark(
    name="time_to_accuracy_slider_crank", description=__doc__.splitlines()[0], case_file=CASE_FILE,
    targets=TARGETS, reference=CONVERGED, groups=GROUPS, steps_fine_to_coarse=STEPS_FINE_TO_COARSE, solve=solve,
    module="time_to_accuracy_slider_crank", step_text=lambda steps: f"{int(steps)} steps per 8 rad",
    step_cells=lambda c: [str(int(c.step)), str(round(c.step * TURN / 8.0)), f"{c.value:.6f}"],
    header=["steps per 8 rad", f"steps run ({TURN} rad)", "first maximum"],
    caption=(f"Slider-crank A, first maximum of mid-span deflection / L vs 0.009762; {TURN} rad simulated; robust: "
             f"the target holds at that step and at every smaller one down to t_end / {STEPS_FINE_TO_COARSE[0]}; "
             "whole process = python -c import + build + integrate + extract, median of {repeats}"))

if __name__ == "__main__":
    run_benchmark(BENCHMARK)
