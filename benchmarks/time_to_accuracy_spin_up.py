"""Time to accuracy, planar spin-up with Simo & Vu-Quoc's data (issue 14, item 5).

Target: the extreme (minimum) lateral tip deflection over 0-20 s within 1 % and 0.1 % of the
independent converged value -0.57384 m (``validation/spin_up_simo.py``; model, hub motion and
extraction from :mod:`flexmb.validation.spin_up`). For each scheme and mass the script finds the
cheapest configuration (elements, dt) meeting each target robustly, i.e. at that dt and at every
smaller dt of the ladder 0.25 ... 0.01 s (fixed steps, no cut-back: a step that does not converge
fails the run), and times it as a whole process: ``python -c`` importing flexmb, building the model,
integrating to 20 s and extracting the extreme, median of 5 fresh processes (wall and CPU time).
The main configuration is the mid-point scheme with Beam2D's cubic mass; the composed (fourth-order)
mid-point scheme, the lumped and linear consistent masses and Newmark (trapezoidal) are extra
rows. Prints a Markdown table; asserts nothing. Runs of the search are cached (see ``time_to_accuracy.py``).

    python benchmarks/time_to_accuracy_spin_up.py [--repeats 5] [--fresh] [--main-only]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from time_to_accuracy import REPO, Benchmark, Target, run_benchmark  # noqa: E402

CONVERGED = -0.57384                                     # m, Exudyn 1.13.6 (refs README item 6)
TARGETS = (Target(CONVERGED, 1e-2), Target(CONVERGED, 1e-3))
DT_FINE_TO_COARSE = (0.01, 0.0125, 0.02, 0.025, 0.04, 0.05, 0.08, 0.1, 0.16, 0.2, 0.25)    # s, each divides 20 s
#: (scheme, mass) -> meshes searched; the first is the main configuration
GROUPS = {("mid-point", "cubic"): (2, 3, 4, 6, 8),
          ("mid-point", "consistent"): (2, 4, 8, 16),
          ("mid-point", "lumped"): (4, 8, 16, 32),
          ("composed-mid-point", "cubic"): (2, 3, 4),
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


BENCHMARK = Benchmark(
    name="time_to_accuracy_spin_up", description=__doc__.splitlines()[0], case_file=CASE_FILE, targets=TARGETS,
    reference=CONVERGED, groups=GROUPS, steps_fine_to_coarse=DT_FINE_TO_COARSE, solve=solve,
    module="time_to_accuracy_spin_up", step_text=lambda dt: f"dt {dt:g} s",
    step_cells=lambda c: [f"{c.step:g}", str(round(20.0 / c.step)), f"{c.value:.5f}"],
    header=["dt (s)", "steps", "extreme (m)"],
    caption=("Spin-up (Simo), extreme tip deflection vs -0.57384 m; robust: the target holds at dt and at every "
             f"smaller dt down to {DT_FINE_TO_COARSE[0]} s; whole process = python -c import + build + integrate "
             "to 20 s + extract, median of {repeats}"))

if __name__ == "__main__":
    run_benchmark(BENCHMARK)
