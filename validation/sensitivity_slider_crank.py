"""Transient design sensitivities of the flexible slider-crank: the first peak of the rod's mid-span
deflection differentiated with respect to the rod's EI, its rho_A and the slider mass (issue 33).

Model: slider-crank A of Meijaard (1993, sec. 4) as ``slider-crank-a`` builds it
(:func:`flexmb.validation.slider_crank.build`): crank r = 0.1524 m turning at omega = 124.8 rad/s
(prescribed crank pin), rod L = 0.3048 m of 2 cubic-mass second-order ``Beam2D`` elements (round steel
section d = 6.35 mm), slider on the line uy = 0, rod straight and undeformed at the start on the rigid
velocity field. The slider carries case B's mass m_s = 0.0378126 kg (half the rod's) instead of case A's
zero, so that the slider-mass term of the scaling identity below, m_s dF/dm_s, is not zero by
construction. Mid-point scheme with fixed steps of 8 rad / omega / 2560 over 8 rad (the benchmark's full
run); quick mode 8 rad / omega / 2048 over the first 2.5 rad, which hold the first peak. (At the
benchmark's quick step, 1/1280 of 8 rad, the peak lies nearly halfway between two samples -- margins
4e-8 against 5e-6 of L -- and perturbations of 1e-3 already move it to the next sample; at 1/2048 it
lies near one, margins 7e-7 and 1e-6, and only the study's largest relative step, 1e-2 of EI or rho_A,
moves it by one sample either way: the parabola's vertex keeps F continuous there, but that difference
carries the vertex's interpolation error besides the truncation. The peak samples of every re-run are
in the JSON.)

Response F: the first peak of the mid-span deflection / L (:func:`flexmb.sensitivity.responses.first_peak`
of :func:`~flexmb.sensitivity.responses.chord_deflection`, the benchmark's definition: the first local
maximum after the deflection passes 30 % of its largest value over the first 2 rad, refined by the
parabola through the three samples about it). Parameters p: multipliers of the rod's EI and rho_A
(baseline 1) and the slider's point mass (kg) (:mod:`flexmb.sensitivity.parameters`).

Checked, each against a reference of another kind:

1. The discrete adjoint (:func:`flexmb.sensitivity.adjoint.adjoint_gradient`) against direct
   differentiation (:func:`flexmb.sensitivity.midpoint.direct_sensitivities`), both exact derivatives of
   the discrete map, to 1e-8 relative (the issue's criterion; measured 4e-14 to 3e-13).
2. Both against central differences of re-runs ``(F(p + h) - F(p - h)) / 2h`` of the changed model
   (:meth:`~flexmb.sensitivity.parameters.TransientParameter.apply`) over the same step list
   (:func:`~flexmb.sensitivity.transient.replay`), to 1e-5 relative (the issue's criterion). The
   differences are taken for h = 1e-2 ... 1e-9 (relative to the baseline: to 1 for the multipliers, to
   m_s for the slider mass); their error falls as h^2 (truncation) and rises as eps / h (round-off). The
   reference is the difference at the *most stable step* h*: the step whose difference agrees best with
   both of its neighbours' (chosen from the differences alone, not by their distance to the derivatives).
   The study (difference, error against the DDM, the peak's sample) is in the JSON and the figure, and
   ``python validation/sensitivity_slider_crank.py`` prints it. Measured: 4e-10 to 2e-7 at h*, the
   smallest errors at h = 1e-4 or 1e-5.
3. An exact identity free of differences: the crank's motion is prescribed, the start state is given and
   nothing else loads the mechanism, so multiplying all stiffness and all mass (the rod's EA, EI, rho_A,
   rho_I and the slider mass) by one factor multiplies the step residual by it and leaves the discrete
   solution unchanged. Hence ``dF/dp_EA + dF/dp_EI + dF/dp_rhoA + dF/dp_rhoI + m_s dF/dm_s = 0``, checked
   as ``|sum| / max |term| <= 1e-9`` ("scaling identity, sum / max term"), for the adjoint and for the
   direct differentiation. The identity holds for the exact discrete solution; the sum measures how
   well the computed states zero the step residuals. With Newton's default residual_tol (1e-10 of the
   force scale) it measured 5e-13 (quick) and 7e-11 (full: some steps stop at that tolerance, and F
   itself moves by 1e-10 relative), too near any honest tolerance; so every run of this case (re-runs
   too) iterates to Newton's round-off stop (residual_tol 1e-14), where it measures 6e-14 to 4e-13.
4. The same model on generalized-alpha (rho_inf = 0.8, same steps): its direct differentiation
   (:func:`flexmb.sensitivity.alpha.direct_sensitivities`) against its own re-runs' central differences
   (most stable step, 1e-5) and its scaling identity (the consistent start acceleration scales too).
"""
from __future__ import annotations

import time

import numpy as np

import flexmb as fm
from flexmb.cms import design
from flexmb.integrators.newton import NewtonSettings
from flexmb.sensitivity import alpha
from flexmb.sensitivity import parameters as P
from flexmb.sensitivity import responses as R
from flexmb.sensitivity.adjoint import adjoint_gradient, trajectory
from flexmb.sensitivity.midpoint import direct_sensitivities
from flexmb.sensitivity.transient import RecordedRun, record, replay, scheme_for
from flexmb.validation import CaseReport, Check, print_report
from flexmb.validation.step_study import draw_step_study_axes, most_stable_step
from flexmb.validation.slider_crank import (CRANK_TURN, PEAK_FRACTION, PEAK_WINDOW, QUICK_TURN, ROD, ROD_MASS,
                                            build, first_maximum, midspan_deflection)

CASE = "sensitivity-slider-crank"
TITLE = ("Transient sensitivities: slider-crank A's first peak of mid-span deflection w.r.t. the rod's EI, rho_A "
         "and the slider mass (direct, adjoint, central differences, scaling identity)")
SOURCE = "exact: central differences of re-runs; scaling identity (model: Meijaard 1993, sec. 4)"

OMEGA = 124.8                   # rad/s, case A
SLIDER_MASS = 0.0378126         # kg, case B's slider (half the rod's mass)
N_ELEMENTS = 2
STEPS = {False: 2560, True: 2048}          # steps per 8 rad of crank rotation (full, quick)
TURN = {False: CRANK_TURN, True: QUICK_TURN}
RHO_INF = 0.8                   # generalized-alpha's spectral radius at infinity
FD_STEPS = 10.0 ** -np.arange(2.0, 10.0)   # relative steps of the study, 1e-2 ... 1e-9
ADJOINT_TOL = 1e-8              # issue 33: direct and adjoint agree to 1e-8 relative
FD_TOL = 1e-5                   # issue 33: both agree with central differences to 1e-5
IDENTITY_TOL = 1e-9             # scaling identity, relative to its largest term (round-off)
#: Newton to its round-off stop (module docstring: the default residual_tol 1e-10 shows in the identity)
NEWTON = NewtonSettings(residual_tol=1e-14)
#: the checked parameters, and the identity's (labels of design_parameters)
CHECKED = ("EI", "rho_A", "slider mass")
IDENTITY = ("EA", "EI", "rho_A", "rho_I", "slider mass")
SRC_DDM = "direct differentiation of the discrete map (flexmb.sensitivity.midpoint)"
SRC_IDENTITY = "exact: scaling identity (prescribed motion, no load)"


def design_parameters(node: int, labels: tuple[str, ...]) -> list[P.TransientParameter]:
    """The transient parameters of ``labels``: the rod's section property multipliers and the point
    mass at the slider ``node`` (kg, baseline SLIDER_MASS)."""
    return [P.parameter(design.point_mass(node, SLIDER_MASS)) if label == "slider mass"
            else P.parameter(design.section_property("rod", label)) for label in labels]


def scales(labels: tuple[str, ...]) -> np.ndarray:
    """The parameters' baselines (1 for the multipliers, m_s for the slider mass): the identity's
    weights and the difference steps' scale."""
    return np.array([SLIDER_MASS if label == "slider mass" else 1.0 for label in labels])


def _response(signal: R.Signal, traj: R.Trajectory) -> R.ResponseValue:
    """F: the first peak of the signal, as the benchmark finds it (its window and fraction)."""
    return R.first_peak(signal, traj, window=PEAK_WINDOW / OMEGA, fraction=PEAK_FRACTION)


def _rerun(run: RecordedRun, model: fm.Model) -> R.Trajectory:
    """The trajectory of ``model`` (a changed copy) from the run's start (u_0, v_0; its own start
    quantities) over the run's step list: the same discrete map at the changed parameter."""
    asm = fm.Assembly(model)
    stepper = scheme_for(asm, run.stepper.name, RHO_INF if run.stepper.name == "generalized-alpha" else None)
    s0 = run.states[0]
    start = stepper.initial_state(s0.t, s0.u.copy(), s0.v.copy())
    states = [start] + replay(asm, stepper, start, run.steps, run.settings)
    stretch = None if start.stretch is None else [s.stretch for s in states]
    return R.Trajectory([s.t for s in states], [s.u for s in states], [s.v for s in states], asm, stretch)


def step_study(run: RecordedRun, signal: R.Signal, p: P.TransientParameter, scale: float,
               exact: float) -> dict:
    """Central differences of F over FD_STEPS (times ``scale``), their errors against ``exact`` and
    the most stable step (module docstring) with its difference, the reference."""
    model = run.asm.model
    p0 = p.value(model)
    rows = []
    for h in FD_STEPS:
        plus, minus = (_response(signal, _rerun(run, p.apply(model, p0 + s * h * scale))) for s in (1.0, -1.0))
        fd = (plus.value - minus.value) / (2.0 * h * scale)
        rows.append({"h": float(h), "step": float(h * scale), "fd": fd, "error": abs(fd - exact) / abs(exact),
                     "peak_samples": (plus.info["step"], minus.info["step"])})
    fd = np.array([r["fd"] for r in rows])
    best = most_stable_step(fd)
    errors = np.array([r["error"] for r in rows])
    return {"rows": rows, "best": best, "h_best": rows[best]["h"], "fd_best": rows[best]["fd"],
            "truncation_slope_1e-2_1e-3": float(np.diff(np.log10(errors[:2]))[0] / np.diff(np.log10(FD_STEPS[:2]))[0]),
            # round-off is noise: a least-squares slope over the four smallest steps
            "round_off_slope_1e-6_1e-9": float(np.polyfit(np.log10(FD_STEPS[-4:]), np.log10(errors[-4:]), 1)[0]),
            "h_of_smallest_error": float(FD_STEPS[int(np.argmin(errors))])}


def run(quick: bool = False) -> CaseReport:
    asm, v0, nodes = build(N_ELEMENTS, OMEGA, SLIDER_MASS, "cubic")
    rod = [int(n) for n in nodes]
    dt = CRANK_TURN / OMEGA / STEPS[quick]
    n_steps = int(round(STEPS[quick] * TURN[quick] / CRANK_TURN))
    signal = R.chord_deflection(asm, rod[0], rod[N_ELEMENTS // 2], rod[-1], scale=ROD)
    checked, identity = design_parameters(rod[-1], CHECKED), design_parameters(rod[-1], IDENTITY)
    report = CaseReport(CASE, n_dof=asm.n_dof)
    timing: dict[str, float] = {}

    clock = time.process_time()
    midpoint = record(asm, dt, n_steps * dt, v0=v0, newton=NEWTON)
    timing["forward run (compiled step loop)"] = time.process_time() - clock
    clock = time.process_time()
    traj = trajectory(midpoint)
    peak = _response(signal, traj)
    adjoint = adjoint_gradient(midpoint, identity, [peak])
    timing["adjoint, 5 parameters (with the trajectory)"] = time.process_time() - clock
    clock = time.process_time()
    sens = direct_sensitivities(midpoint, identity)
    ddm = sens.gradient(_response(signal, sens.trajectory()))
    timing["direct differentiation, 5 parameters"] = time.process_time() - clock
    adj = adjoint.gradient[0]
    # the benchmark's own peak finder on the same states
    positions = asm.model.coordinates[None] + traj.u[:, asm.dofs.translations()].reshape(traj.n_states, -1, 2)
    bench = first_maximum(OMEGA * traj.t, midspan_deflection(positions))[1]

    where = {label: IDENTITY.index(label) for label in CHECKED}
    for label in CHECKED:
        j = where[label]
        report.add(Check.close(f"mid-point dF/dp {label}: adjoint vs direct", adj[j], ddm[j], ADJOINT_TOL, SRC_DDM))
    clock = time.process_time()
    studies = {label: step_study(midpoint, signal, p, s, ddm[where[label]])
               for label, p, s in zip(CHECKED, checked, scales(CHECKED))}
    timing["mid-point step studies (16 re-runs per parameter)"] = time.process_time() - clock
    for label, study in studies.items():
        j = where[label]
        src = f"central difference of re-runs at the most stable step h* = {study['h_best']:.0e}"
        report.add(Check.close(f"mid-point dF/dp {label}: direct vs FD(h*)", ddm[j], study["fd_best"], FD_TOL, src))
        report.add(Check.close(f"mid-point dF/dp {label}: adjoint vs FD(h*)", adj[j], study["fd_best"], FD_TOL, src))
    w = scales(IDENTITY)
    for name, grad in (("adjoint", adj), ("direct", ddm)):
        terms = w * grad
        report.add(Check.at_most(f"mid-point {name}: scaling identity, sum / max term",
                                 abs(terms.sum()) / np.abs(terms).max(), IDENTITY_TOL, SRC_IDENTITY))

    # generalized-alpha: its own discrete map, its own re-runs
    clock = time.process_time()
    ga = record(asm, dt, n_steps * dt, v0=v0, scheme="generalized-alpha", rho_inf=RHO_INF, newton=NEWTON)
    ga_sens = alpha.direct_sensitivities(ga, identity)
    ga_peak = _response(signal, ga_sens.trajectory())
    ga_ddm = ga_sens.gradient(ga_peak)
    timing["generalized-alpha forward run and direct differentiation, 5 parameters"] = time.process_time() - clock
    clock = time.process_time()
    ga_studies = {label: step_study(ga, signal, p, s, ga_ddm[where[label]])
                  for label, p, s in zip(CHECKED, checked, scales(CHECKED))}
    timing["generalized-alpha step studies"] = time.process_time() - clock
    for label, study in ga_studies.items():
        report.add(Check.close(f"gen-alpha dF/dp {label}: direct vs FD(h*)", ga_ddm[where[label]],
                               study["fd_best"], FD_TOL,
                               f"central difference of re-runs at the most stable step h* = {study['h_best']:.0e}"))
    terms = w * ga_ddm
    report.add(Check.at_most("gen-alpha direct: scaling identity, sum / max term",
                             abs(terms.sum()) / np.abs(terms).max(), IDENTITY_TOL, SRC_IDENTITY))

    runs = 2 + len(FD_STEPS) * 2 * len(CHECKED) * 2
    report.n_steps = runs * n_steps
    report.info.update({
        "model": (f"slider-crank A (omega = {OMEGA} rad/s, {N_ELEMENTS} cubic-mass second-order Beam2D elements) with "
                  f"case B's slider mass {SLIDER_MASS} kg"),
        "scheme": "mid-point; generalized-alpha (rho_inf = 0.8) in rows 4", "dt_s": dt, "steps": n_steps,
        "newton": "residual_tol 1e-14: iterations to the round-off stop (defaults otherwise)",
        "crank_turn_simulated_rad": TURN[quick], "rod_mass_kg": ROD_MASS,
        "response": "first peak of the mid-span deflection / L (first_peak of chord_deflection, the benchmark's)",
        "first_peak": {"mid-point": peak.value, "benchmark_first_maximum_same_states": bench,
                       "crank_angle_rad": OMEGA * peak.info["t"], "sample": peak.info["step"],
                       "margins_to_neighbours": peak.info["margins"],
                       "generalized-alpha": ga_peak.value, "generalized-alpha_margins": ga_peak.info["margins"]},
        "gradient": {label: {"direct": float(ddm[j]), "adjoint": float(adj[j]),
                             "normalised_p_over_F": float(w[j] * ddm[j] / peak.value),
                             "generalized-alpha_direct": float(ga_ddm[j])} for j, label in enumerate(IDENTITY)},
        "unit": "F per unit multiplier (EA, EI, rho_A, rho_I), F per kg (slider mass)",
        "step_study_mid-point": studies, "step_study_generalized-alpha": ga_studies,
        "adjoint": {"solves": adjoint.solves, "recomputed": adjoint.recomputed, "states_held": adjoint.states_held,
                    "memory_bytes": adjoint.memory_bytes},
        "cpu_s": timing,
    })
    report.figure = _figure(traj, signal, peak, studies, ga_studies)
    return report


def _figure(traj: R.Trajectory, signal: R.Signal, peak: R.ResponseValue, studies: dict, ga_studies: dict):
    from flexmb.viz.plots import COMPUTED_ALPHA, legend_outside, panels

    fig, (ax, ax2) = panels(2, f"Slider-crank A (omega = {OMEGA} rad/s, slider {SLIDER_MASS} kg): first peak "
                            "sensitivities")
    y = signal.evaluate(traj, np.arange(traj.n_states))[0]
    ax.plot(OMEGA * traj.t, y, alpha=COMPUTED_ALPHA, label="mid-span deflection / L (mid-point)")
    ax.plot(OMEGA * peak.info["t"], peak.value, "k*", ms=9, label="first peak F")
    ax.set_xlabel("crank angle (rad)")
    ax.set_ylabel("mid-span deflection / rod length")
    ax.grid(True, alpha=0.3)
    legend_outside(ax, 7)
    for (scheme, table), marker in zip((("mid-point", studies), ("generalized-alpha", ga_studies)), ("o-", "s--")):
        for k, (label, study) in enumerate(table.items()):
            errors = [max(r["error"], 1e-16) for r in study["rows"]]
            ax2.loglog(FD_STEPS, errors, marker, color=f"C{k}", ms=4, label=f"{scheme}, {label}")
            ax2.plot(study["h_best"], errors[study["best"]], "k+", ms=10)
    draw_step_study_axes(ax2, FD_TOL)
    legend_outside(ax2, 7, ncol=2)
    fig.tight_layout()
    return fig


def print_study(report: CaseReport) -> None:
    """The step studies as a text table: h, the central difference, its error against the direct
    derivative, and the peak's samples in the two re-runs."""
    for key in ("step_study_mid-point", "step_study_generalized-alpha"):
        for label, study in report.info[key].items():
            print(f"\n{key[11:]}, dF/dp {label} (h* = {study['h_best']:.0e}; slopes: truncation "
                  f"{study['truncation_slope_1e-2_1e-3']:.2f}, round-off {study['round_off_slope_1e-6_1e-9']:.2f})")
            print(f"{'h':>8} {'FD':>20} {'|FD - direct|/|direct|':>24} {'peak samples':>14}")
            for r in study["rows"]:
                print(f"{r['h']:8.0e} {r['fd']:20.12e} {r['error']:24.2e} {str(r['peak_samples']):>14}")


def main() -> None:
    report = run()
    print_report(report)
    print_study(report)


if __name__ == "__main__":
    main()
