"""Planar spin-up of a beam, Simo & Vu-Quoc's data, with error-controlled time steps.

The model of ``spin-up-simo`` (Meijaard 1993, sec. 5.1, Fig. 4; :mod:`flexmb.validation.spin_up`):
a beam of L = 10 m (EA = 2.8e7 N, EI = 14000 N m^2, rho_A = 1.2 kg/m) clamped to a hub whose angle
is prescribed, psi(t) = (omega_s / T_s) [t^2 / 2 + (T_s / (2 pi))^2 (cos(2 pi t / T_s) - 1)] for
t <= T_s, then omega_s (t - T_s / 2), omega_s = 6 rad/s, T_s = 15 s; 16 ``Beam2D(mass="cubic",
second_order=True)`` elements (the mesh-converged run of that case), mid-point scheme to t = 20 s.

The steps are chosen by ``integrate(asm, t_end=20, rtol=...)`` (:mod:`flexmb.integrators.step_control`:
step doubling, each step's error relative to its motion) at rtol = 1e-3 and 1e-4. Checked: the
extreme (minimum) lateral tip deflection d = x_tip . (-sin psi, cos psi) within 1 % (rtol 1e-3) and
0.1 % (rtol 1e-4) of the independent converged value -0.57384 m (Exudyn 1.13.6, refs README item 6),
and fewer steps than a fixed-step run at the smallest step the run needed (T / dt_min; at most 0.9
of it: the steps follow the hub's speed).
Reported: the steps each run took, the rejected pairs, and the fixed steps of the same mesh that
meet the same tolerances (largest of dt = 0.1, 0.08, 0.0625, 0.05, 0.04, 0.025, 0.02, 0.0125, 0.01 s)
with their number of steps. Quick mode runs the same (each run takes well under a second).
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.validation import CaseReport, Check, print_report
from flexmb.validation.registry import load_module
from flexmb.validation.spin_up import (FINE_MESH, SOURCE_CONVERGED, T_END, SpinUpBeam, build, extreme,
                                       tip_deflection)

CASE = "spin-up-adaptive"
TITLE = "Simo's spin-up with error-controlled time steps: extreme tip deflection and the steps it took"
SOURCE = "Meijaard 1993, sec. 5.1, Fig. 4; converged value: Exudyn (refs README item 6)"

#: rtol -> relative tolerance of the extreme against the converged value
TOLERANCES = {1e-3: 1e-2, 1e-4: 1e-3}
#: fixed steps compared (s): each divides T_END
FIXED_STEPS = (0.1, 0.08, 0.0625, 0.05, 0.04, 0.025, 0.02, 0.0125, 0.01)


def extreme_of(b: SpinUpBeam, h: fm.TimeHistory, tip: int) -> float:
    """The extreme tip deflection (m) of a run, refined by a parabola through three samples."""
    t = np.array(h.t)
    return extreme(t, tip_deflection(b, t, h.positions()[:, tip]))[1]


def run(quick: bool = False) -> CaseReport:
    b: SpinUpBeam = load_module(Path(__file__).with_name("spin_up_simo.py")).PARAMETERS
    asm, nodes = build(b, FINE_MESH)
    tip = int(nodes[-1])
    adaptive, fixed, series = {}, {}, {}
    for rtol in TOLERANCES:
        start = time.perf_counter()
        h = fm.integrate(asm, t_end=T_END, rtol=rtol, progress=False)
        rejected = sum(e.kind == "rejected" for e in h.events)
        t = np.array(h.t)
        series[rtol] = (t, tip_deflection(b, t, h.positions()[:, tip]), h.step_sizes)
        adaptive[rtol] = {"extreme_m": extreme_of(b, h, tip), "steps": len(h.step_sizes),
                          "rejected_pairs": rejected,
                          # step doubling: three solves per pair of steps, rejected pairs included
                          "solves": int(1.5 * len(h.step_sizes)) + 3 * rejected,
                          "dt_min_s": float(h.step_sizes.min()), "dt_max_s": float(h.step_sizes.max()),
                          "wall_s": time.perf_counter() - start}
    for dt in FIXED_STEPS:
        h = fm.integrate(asm, dt, T_END, progress=False)
        fixed[dt] = extreme_of(b, h, tip)
    report = CaseReport(CASE, n_dof=asm.n_dof,
                        n_steps=sum(r["steps"] for r in adaptive.values())
                        + sum(int(round(T_END / dt)) for dt in FIXED_STEPS))
    for rtol, tol in TOLERANCES.items():
        report.add(Check.close(f"rtol = {rtol:g}: extreme tip deflection (m), {adaptive[rtol]['steps']} steps",
                               adaptive[rtol]["extreme_m"], b.converged, tol, SOURCE_CONVERGED))
    for rtol in TOLERANCES:
        # what the error control saves: a fixed run needs the smallest step the run needed, throughout
        at_smallest = int(np.ceil(T_END / adaptive[rtol]["dt_min_s"]))
        report.add(Check.at_most(f"rtol = {rtol:g}: steps / steps of a fixed run at its smallest step "
                                 f"({adaptive[rtol]['steps']} / {at_smallest})",
                                 adaptive[rtol]["steps"] / at_smallest, 0.9,
                                 "required: fewer steps than a fixed run at the smallest step"))
    comparison = {}
    for rtol, tol in TOLERANCES.items():
        meeting = [dt for dt in FIXED_STEPS if abs(fixed[dt] / b.converged - 1.0) <= tol]
        largest = max(meeting) if meeting else None
        comparison[f"rtol {rtol:g} (tolerance {tol:g})"] = {
            "adaptive_steps": adaptive[rtol]["steps"], "adaptive_solves": adaptive[rtol]["solves"],
            "largest_fixed_dt_s": largest, "fixed_steps": None if largest is None else int(round(T_END / largest))}
    report.info.update({
        "elements": FINE_MESH, "scheme": "mid-point", "t_end_s": T_END,
        "adaptive": {f"rtol {r:g}": dict(v, rel_error_vs_converged=abs(v["extreme_m"] / b.converged - 1.0))
                     for r, v in adaptive.items()},
        "fixed": {f"dt {dt:g} s": {"extreme_m": v, "rel_error_vs_converged": abs(v / b.converged - 1.0)}
                  for dt, v in fixed.items()},
        "steps_against_fixed": comparison,
        "note": ("rtol bounds each pair of steps' error relative to its motion (step doubling), over the whole "
                 "run: the steps follow the hub (about 0.07 s while it is slow, 0.012 s at 6 rad/s at rtol 1e-3). "
                 "The extreme (t = 6.8 s) is set by the first 7 s only, and the error-controlled run spends most "
                 "of its steps after it; measured 2026-11-28 against dt = 0.0025 s, the largest tip-deflection error "
                 "over the whole run is 5.5e-3 of the largest deflection at rtol 1e-3 (1076 steps; fixed dt = "
                 "0.025 s: 3.4e-3 with 800 steps) and 1.9e-4 at rtol 1e-4 (3146 steps; as many fixed steps: "
                 "1.9e-4). The late steps are needed: with 0.025 s up to t = 7 s and 0.05 s (0.1 s) after, the "
                 "error over 7-15 s is 2.5e-2 (1.2e-1) of the largest deflection, while the deflection falls from "
                 "0.54 m (t = 8 s) to 3e-3 m (t = 16 s); with 0.025 s throughout, 3.4e-3. On the extreme alone the "
                 "fixed step meeting the same tolerance takes fewer steps (steps_against_fixed): it is not held "
                 "to the accuracy after the extreme that the error-controlled run keeps"),
    })
    report.figure = _figure(b, series)
    return report


def _figure(b: SpinUpBeam, series: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]]):
    """Tip deflection and the steps taken against time, per rtol."""
    from flexmb.viz.plots import COMPUTED_ALPHA, panels

    fig, (ax, ax2) = panels(2, f"Spin-up, Simo's beam ({FINE_MESH} Beam2D, cubic mass), error-controlled steps")
    for rtol, (t, d, steps) in series.items():
        ax.plot(t, d, alpha=COMPUTED_ALPHA, label=f"rtol = {rtol:g} ({steps.size} steps)")
        ax2.semilogy(0.5 * (t[:-1] + t[1:]), steps, label=f"rtol = {rtol:g}")      # every step is an output
    ax.axhline(b.converged, color="k", lw=0.8, ls="-.", label=f"converged extreme {b.converged} m")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("lateral tip deflection (m)")
    ax2.set_xlabel("time (s)")
    ax2.set_ylabel("step (s)")
    for a in (ax, ax2):
        a.grid(True, alpha=0.3)
        a.legend(fontsize=8)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
