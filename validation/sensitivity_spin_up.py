"""Transient design sensitivities of Simo & Vu-Quoc's spin-up: the extreme tip deflection differentiated
with respect to the beam's bending stiffness and mass per length, the co-rotational FE beam and the
modal body side by side (issue 33).

Models (the beam of ``spin-up-simo``: L = 10 m, EI = 14000 N m^2, rho_A = 1.2 kg/m, EA = 2.8e7 N,
rho_I = 6e-4 kg m, its parameters read from ``validation/spin_up_simo.py``; the hub angle psi(t)
prescribed, spun up to 6 rad/s in 15 s; no load, start at rest):

* FE: 4 cubic-mass second-order ``Beam2D`` elements (:func:`flexmb.validation.spin_up.build`, the
  ``spin-up-simo`` case's 4-element model);
* modal body: the beam's 20-element FE model (linear consistent mass) reduced to 3 cantilever modes with
  the frame at the hub, geometric stiffening on (:mod:`flexmb.validation.spin_up_modal`, the
  ``spin-up-modal-simo`` case's model).

Mid-point scheme, fixed steps dt = 0.005 s over 20 s (quick: 0.02 s over the first 8 s, which hold the
extreme at t = 6.8 s), Newton to its round-off stop (residual_tol 1e-14, re-runs too: the scaling identity
below measures how well the states zero the step residuals, as in ``sensitivity-slider-crank``).

Responses F (m), on the tip's lag y = -d, d the lateral tip deflection (positive in the sense of
rotation: ``flexmb.validation.spin_up.tip_deflection`` for the FE beam, ``(Phi q)_tip,uy`` in the body
frame for the modal body): the extreme deflection's size ``-min d`` as the first peak of y
(:func:`flexmb.sensitivity.responses.first_peak`: the first local maximum after y passes half its largest
value, refined by the parabola through three samples; it is the run's extreme) and the
Kreisselmeier-Steinhauser aggregate of y over the run (:func:`~flexmb.sensitivity.responses.ks_max`, rho =
1000 1/m). Parameters p (multipliers, baseline 1): the FE beam's EI and rho_A
(``flexmb.cms.section_property``; EA and rho_I too for the identity), the modal body's stiffness scale and
density scale (``flexmb.cms.stiffness_scale`` / ``density_scale`` of the body: K_e, and all its inertia
invariants with the modes held, :mod:`flexmb.sensitivity.parameters`).

Checked, for both models, both responses and each parameter:

(a) the discrete adjoint (:func:`flexmb.sensitivity.adjoint.adjoint_gradient`) against direct
    differentiation (:func:`flexmb.sensitivity.midpoint.direct_sensitivities`) to 1e-8 relative (the
    issue's criterion);
(b) both against central differences of re-runs ``(F(p + h) - F(p - h)) / 2h`` of the changed model over
    the run's step list, to 1e-5 relative (the issue's criterion), at the *most stable step* h* of a step
    study over h = 1e-2 ... 1e-9 (:func:`flexmb.validation.step_study.most_stable_step`, chosen from the
    differences alone); the study's errors against the direct derivative show the truncation branch
    (slope 2) and the round-off branch (slope -1): the JSON, the figure, and ``python
    validation/sensitivity_spin_up.py`` prints them with the peak's sample in each re-run;
(c) the scaling identity, free of differences: the hub motion is prescribed and nothing loads the beam,
    so multiplying all stiffness and all mass by one factor multiplies every step residual by it and
    leaves the discrete solution unchanged. Hence, for the FE beam, ``dF/dp_EA + dF/dp_EI + dF/dp_rhoA +
    dF/dp_rhoI = 0``, and for the modal body ``dF/dp_stiffness + dF/dp_density = 0`` (which also checks
    that the stiffening terms scale with the density), each as ``|sum| / max |term| <= 1e-9``.

Stated, not checked: the FE beam's EI derivative and the modal body's stiffness-scale derivative estimate
the same physical sensitivity (the modal body has bending modes only, so its stiffness scale is its EI's);
they differ by the models' difference (4 cubic elements against 3 modes with second-order stiffening, whose
extremes differ by 0.4 %), in the JSON as ``FE EI vs modal stiffness scale``.

Measured (2026-11-29; quick / full): extremes -0.57421 / -0.57376 m (FE) and -0.57639 / -0.57636 m (modal)
at t = 6.77 s; dF/dp_EI = -0.5699 / -0.5696 m (normalised -0.99), dF/dp_stiffness = -0.5760 / -0.5762 m,
1.1 % / 1.2 % apart. (a) 7e-15 .. 1e-12; (b) 1e-10 .. 3e-8 at h* = 1e-5 (full, FE KS: 1e-4), 300x inside
the tolerance; (c) 2e-14 .. 8e-13. The study's truncation branch has slope 2.0 (KS) and 0.9 .. 2.1 (the
peak: at h = 1e-2 the peak moves by one to three samples, whose vertex carries its own interpolation error,
about 2e-6 of F at h = 1e-3 in the full run, where the peak's margins to its neighbours are 5e-7 m); the
round-off branch's slope is -0.6 .. -2.0 (noise), from 1e-6 (full: the 4000 steps' round-off) or 1e-7.
Quick mode 6.5 s of CPU (most of it the 64 re-runs of the step studies), full 52 s.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.cms import design
from flexmb.integrators.newton import NewtonSettings
from flexmb.sensitivity import parameters as P
from flexmb.sensitivity import responses as R
from flexmb.sensitivity.adjoint import adjoint_gradient, trajectory
from flexmb.sensitivity.midpoint import direct_sensitivities
from flexmb.sensitivity.transient import RecordedRun, record, replay, scheme_for
from flexmb.validation import CaseReport, Check, print_report
from flexmb.validation.registry import load_module
from flexmb.validation.spin_up import T_END, SpinUpBeam, build
from flexmb.validation.spin_up_modal import body_data
from flexmb.validation.step_study import draw_step_study_axes, most_stable_step

CASE = "sensitivity-spin-up"
TITLE = ("Transient sensitivities: Simo's spin-up extreme tip deflection w.r.t. EI and rho_A, co-rotational FE "
         "beam and modal body (direct, adjoint, central differences, scaling identity)")
SOURCE = "exact: central differences of re-runs; scaling identity (model: Simo & Vu-Quoc 1986, Meijaard 1993)"

N_ELEMENTS = 4                              # cubic-mass FE beam
N_MODES = 3                                 # modal body, stiffened
DT = {False: 0.005, True: 0.02}             # s (full, quick)
T_RUN = {False: T_END, True: 8.0}           # s: the quick run holds the extreme (t = 6.8 s)
KS_RHO = 1000.0                             # 1/m: KS lies within ln(n_steps) / rho = 4-9 mm above the peak
FD_STEPS = 10.0 ** -np.arange(2.0, 10.0)    # relative steps of the study, 1e-2 ... 1e-9
ADJOINT_TOL = 1e-8                          # issue 33: direct and adjoint agree to 1e-8 relative
FD_TOL = 1e-5                               # issue 33: both agree with central differences to 1e-5
IDENTITY_TOL = 1e-9                         # scaling identity, relative to its largest term (round-off)
NEWTON = NewtonSettings(residual_tol=1e-14)  # Newton to its round-off stop (module docstring)
RESPONSES = ("extreme", "KS")
#: per model: the identity's parameters (labels) and those checked against central differences
FE_IDENTITY, FE_CHECKED = ("EA", "EI", "rho_A", "rho_I"), ("EI", "rho_A")
MODAL_IDENTITY = MODAL_CHECKED = ("stiffness scale", "density scale")
SRC_DDM = "direct differentiation of the discrete map (flexmb.sensitivity.midpoint)"
SRC_IDENTITY = "exact: scaling identity (prescribed hub motion, no load)"


class FETipLag(R.Signal):
    """The FE beam's tip lag y = -d = x sin psi - y cos psi (m), the tip position (x, y) = X + u and psi
    the hub's rz (prescribed: psi(t) at every state), with its derivative."""

    unit = "m"

    def __init__(self, asm: fm.Assembly, hub: int, tip: int) -> None:
        self.rz = asm.dofs.index(hub, "rz")
        self.trans = asm.dofs.translations()[tip]
        self.X = asm.model.coordinates[tip]

    def evaluate(self, traj: R.Trajectory, steps: np.ndarray) -> tuple[np.ndarray, dict]:
        u = traj.u[steps]
        psi = u[:, self.rz]
        x, y = self.X[0] + u[:, self.trans[0]], self.X[1] + u[:, self.trans[1]]
        s, c = np.sin(psi), np.cos(psi)
        grad = np.c_[s, -c, x * c + y * s]                                    # d/d(ux, uy, psi) (m, 3)
        return x * s - y * c, {"u": (np.r_[self.trans, self.rz], grad)}


class ModalTipLag(R.Signal):
    """The modal body's tip lag y = -(Phi q)_tip,uy (m), linear in its modal coordinates ``dofs``."""

    unit = "m"

    def __init__(self, dofs: np.ndarray, basis_row: np.ndarray) -> None:
        self.dofs, self.row = np.asarray(dofs), -np.asarray(basis_row, dtype=float)

    def evaluate(self, traj: R.Trajectory, steps: np.ndarray) -> tuple[np.ndarray, dict]:
        return traj.u[steps][:, self.dofs] @ self.row, {"u": (self.dofs, np.tile(self.row, (steps.size, 1)))}


def beam() -> SpinUpBeam:
    """The spin-up-simo case's beam and hub motion."""
    return load_module(Path(__file__).with_name("spin_up_simo.py")).PARAMETERS


def fe_model(spin: SpinUpBeam) -> tuple[fm.Assembly, R.Signal, list[P.TransientParameter]]:
    """The FE beam: assembly, tip lag and the identity's parameters (FE_IDENTITY)."""
    asm, nodes = build(spin, N_ELEMENTS)
    params = [P.parameter(design.section_property("beam", label)) for label in FE_IDENTITY]
    return asm, FETipLag(asm, int(nodes[0]), int(nodes[-1])), params


def modal_model(spin: SpinUpBeam) -> tuple[fm.Assembly, R.Signal, list[P.TransientParameter]]:
    """The stiffened modal body on the hub: assembly, tip lag and its two scales (MODAL_IDENTITY)."""
    data, tip_uy = body_data(spin, N_MODES)
    model = fm.Model(dim=2)
    body = model.add_modal_body(data, stiffening=True, name="beam")
    frame = int(body.connectivity[0, 0])
    model.fix(frame, ["ux", "uy"])
    model.prescribe(frame, "rz", spin.psi)
    asm = fm.Assembly(model)
    params = [P.parameter(design.stiffness_scale("beam")), P.parameter(design.density_scale("beam"))]
    return asm, ModalTipLag(asm.dofs.internal_dofs(body), data.basis[tip_uy]), params


def responses(signal: R.Signal, traj: R.Trajectory) -> list[R.ResponseValue]:
    """F: the first peak of the tip lag (the extreme deflection's size) and its KS aggregate."""
    return [R.first_peak(signal, traj, fraction=0.5), R.ks_max(signal, traj, rho=KS_RHO)]


def _rerun(run: RecordedRun, model: fm.Model) -> R.Trajectory:
    """The trajectory of ``model`` (a changed copy) over the run's step list from the run's start."""
    asm = fm.Assembly(model)
    stepper = scheme_for(asm, run.stepper.name)
    s0 = run.states[0]
    start = stepper.initial_state(s0.t, s0.u.copy(), s0.v.copy())
    states = [start] + replay(asm, stepper, start, run.steps, run.settings)
    stretch = None if start.stretch is None else [s.stretch for s in states]
    return R.Trajectory([s.t for s in states], [s.u for s in states], [s.v for s in states], asm, stretch)


def step_study(run: RecordedRun, signal: R.Signal, p: P.TransientParameter, exact: np.ndarray) -> dict:
    """Central differences of both responses over FD_STEPS (p is a multiplier, baseline 1), their errors
    against ``exact`` (n_r,), the peak samples of the re-runs, and per response the most stable step
    with its difference (the reference) and the two branches' slopes."""
    model = run.asm.model
    rows = []
    for h in FD_STEPS:
        plus, minus = (responses(signal, _rerun(run, p.apply(model, 1.0 + s * h))) for s in (1.0, -1.0))
        fd = [(a.value - b.value) / (2.0 * h) for a, b in zip(plus, minus)]
        rows.append({"h": float(h), "fd": fd, "error": [abs(f - e) / abs(e) for f, e in zip(fd, exact)],
                     "peak_samples": (plus[0].info["step"], minus[0].info["step"])})
    out: dict = {"rows": rows}
    for r, name in enumerate(RESPONSES):
        fd = np.array([row["fd"][r] for row in rows])
        errors = np.array([row["error"][r] for row in rows])
        best = most_stable_step(fd)
        out[name] = {"best": best, "h_best": rows[best]["h"], "fd_best": float(fd[best]),
                     "truncation_slope_1e-2_1e-3": float(np.diff(np.log10(errors[:2]))[0]
                                                         / np.diff(np.log10(FD_STEPS[:2]))[0]),
                     # round-off is noise: a least-squares slope over the four smallest steps
                     "round_off_slope_1e-6_1e-9": float(np.polyfit(np.log10(FD_STEPS[-4:]),
                                                                   np.log10(errors[-4:]), 1)[0]),
                     "h_of_smallest_error": float(FD_STEPS[int(np.argmin(errors))])}
    return out


def study_model(name: str, asm: fm.Assembly, signal: R.Signal, params: list[P.TransientParameter],
                labels: tuple[str, ...], checked: tuple[str, ...], quick: bool, report: CaseReport) -> dict:
    """Run one model: forward run, adjoint and direct gradients of both responses for all its parameters,
    step studies of the checked ones; add checks (a), (b), (c) to the report; return its figures."""
    timing: dict[str, float] = {}
    dt, n_steps = DT[quick], int(round(T_RUN[quick] / DT[quick]))
    clock = time.process_time()
    run = record(asm, dt, n_steps * dt, newton=NEWTON)
    timing["forward run"] = time.process_time() - clock
    clock = time.process_time()
    traj = trajectory(run)
    values = responses(signal, traj)
    adj = adjoint_gradient(run, params, values)
    timing[f"adjoint, {len(params)} parameters, 2 responses"] = time.process_time() - clock
    clock = time.process_time()
    sens = direct_sensitivities(run, params)
    ddm = np.array([sens.gradient(v) for v in responses(signal, sens.trajectory())])     # (n_r, n_p)
    timing[f"direct differentiation, {len(params)} parameters"] = time.process_time() - clock
    grad = adj.gradient
    for label in checked:
        j = labels.index(label)
        for r, response in enumerate(RESPONSES):
            report.add(Check.close(f"{name} d{response}/dp {label}: adjoint vs direct", grad[r, j], ddm[r, j],
                                   ADJOINT_TOL, SRC_DDM))
    clock = time.process_time()
    studies = {label: step_study(run, signal, params[labels.index(label)], ddm[:, labels.index(label)])
               for label in checked}
    timing[f"step studies ({2 * len(FD_STEPS)} re-runs per parameter)"] = time.process_time() - clock
    for label, study in studies.items():
        j = labels.index(label)
        for r, response in enumerate(RESPONSES):
            s = study[response]
            src = f"central difference of re-runs at the most stable step h* = {s['h_best']:.0e}"
            for method, g in (("direct", ddm), ("adjoint", grad)):
                report.add(Check.close(f"{name} d{response}/dp {label}: {method} vs FD(h*)", g[r, j], s["fd_best"],
                                       FD_TOL, src))
    for r, response in enumerate(RESPONSES):
        for method, g in (("adjoint", grad), ("direct", ddm)):
            report.add(Check.at_most(f"{name} {method} d{response}/dp: scaling identity, sum / max term",
                                     abs(g[r].sum()) / np.abs(g[r]).max(), IDENTITY_TOL, SRC_IDENTITY))
    peak = values[0]
    return {"run": run, "traj": traj, "signal": signal, "peak": peak, "studies": studies, "info": {
        "dt_s": dt, "steps": n_steps, "n_dof": asm.n_dof,
        "extreme_deflection_m": -peak.value, "extreme_time_s": peak.info["t"], "peak_sample": peak.info["step"],
        "peak_margins_to_neighbours_m": peak.info["margins"], "KS_m": values[1].value,
        "KS_bounds_m": (values[1].info["maximum"], values[1].info["upper_bound"]),
        "gradient": {label: {response: {"direct": float(ddm[r, j]), "adjoint": float(grad[r, j]),
                                        "normalised_p_over_F": float(ddm[r, j] / values[r].value)}
                             for r, response in enumerate(RESPONSES)} for j, label in enumerate(labels)},
        "step_study": studies,
        "adjoint": {"solves": adj.solves, "recomputed": adj.recomputed, "states_held": adj.states_held,
                    "memory_bytes": adj.memory_bytes},
        "cpu_s": timing}}


def run(quick: bool = False) -> CaseReport:
    spin = beam()
    report = CaseReport(CASE, n_dof=0)
    fe = study_model("FE", *fe_model(spin), FE_IDENTITY, FE_CHECKED, quick, report)
    modal = study_model("modal", *modal_model(spin), MODAL_IDENTITY, MODAL_CHECKED, quick, report)
    report.n_dof = fe["info"]["n_dof"] + modal["info"]["n_dof"]
    n_runs = 1 + 2 * len(FD_STEPS) * len(FE_CHECKED), 1 + 2 * len(FD_STEPS) * len(MODAL_CHECKED)
    report.n_steps = (n_runs[0] + n_runs[1]) * fe["info"]["steps"]
    fe_ei = fe["info"]["gradient"]["EI"]
    modal_k = modal["info"]["gradient"]["stiffness scale"]
    report.info.update({
        "models": {"FE": f"{N_ELEMENTS} cubic-mass second-order Beam2D elements (spin-up-simo)",
                   "modal": (f"{N_MODES} stiffened modes of a 20-element consistent-mass Beam2D beam, frame at the hub "
                             "(spin-up-modal-simo)")},
        "scheme": "mid-point, fixed steps", "t_end_s": T_RUN[quick],
        "newton": "residual_tol 1e-14: iterations to the round-off stop (defaults otherwise)",
        "responses": {"extreme": "first peak of the tip lag -d (m): the size of the extreme tip deflection",
                      "KS": f"KS aggregate of the tip lag, rho = {KS_RHO:g} 1/m"},
        "unit": "m per unit multiplier",
        "FE": fe["info"], "modal": modal["info"],
        # stated, not a pass criterion (module docstring)
        "FE EI vs modal stiffness scale": {
            response: {"FE_EI": fe_ei[response]["direct"], "modal_stiffness_scale": modal_k[response]["direct"],
                       "relative_difference": abs(modal_k[response]["direct"] / fe_ei[response]["direct"] - 1.0)}
            for response in RESPONSES},
    })
    report.figure = _figure(fe, modal)
    return report


def _figure(fe: dict, modal: dict):
    from flexmb.viz.plots import COMPUTED_ALPHA, legend_outside, panels

    fig, (ax, ax2) = panels(2, "Spin-up (Simo & Vu-Quoc): extreme tip deflection sensitivities, FE and modal body")
    for name, m in (("FE, 4 cubic elements", fe), (f"modal body, {N_MODES} modes", modal)):
        traj, peak = m["traj"], m["peak"]
        y = m["signal"].evaluate(traj, np.arange(traj.n_states))[0]
        ax.plot(traj.t, -y, alpha=COMPUTED_ALPHA, label=name)
        ax.plot(peak.info["t"], -peak.value, "k*", ms=8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("lateral tip deflection d (m); *: the extreme")
    ax.grid(True, alpha=0.3)
    legend_outside(ax, 7)
    k = 0
    for name, m in (("FE", fe), ("modal", modal)):
        for label, study in m["studies"].items():
            for r, response in enumerate(RESPONSES):
                errors = [max(row["error"][r], 1e-16) for row in study["rows"]]
                ax2.loglog(FD_STEPS, errors, "o-" if r == 0 else "s--", color=f"C{k}", ms=4,
                           label=f"{name} d{response}/d {label}")
                ax2.plot(study[response]["h_best"], errors[study[response]["best"]], "k+", ms=10)
            k += 1
    draw_step_study_axes(ax2, FD_TOL)
    legend_outside(ax2, 7, ncol=2)
    fig.tight_layout()
    return fig


def print_study(report: CaseReport) -> None:
    """The step studies as text: h, the central differences, their errors against the direct
    derivatives and the peak's samples in the two re-runs; then the FE EI / modal stiffness comparison."""
    for name in ("FE", "modal"):
        for label, study in report.info[name]["step_study"].items():
            slopes = ", ".join(f"{r}: h* = {study[r]['h_best']:.0e}, truncation "
                               f"{study[r]['truncation_slope_1e-2_1e-3']:.2f}, round-off "
                               f"{study[r]['round_off_slope_1e-6_1e-9']:.2f}" for r in RESPONSES)
            print(f"\n{name}, dF/dp {label} ({slopes})")
            print(f"{'h':>8} {'FD extreme':>20} {'error':>10} {'FD KS':>20} {'error':>10} {'peak samples':>14}")
            for row in study["rows"]:
                print(f"{row['h']:8.0e} {row['fd'][0]:20.12e} {row['error'][0]:10.2e} {row['fd'][1]:20.12e} "
                      f"{row['error'][1]:10.2e} {str(row['peak_samples']):>14}")
    for response, c in report.info["FE EI vs modal stiffness scale"].items():
        print(f"\n{response}: FE dF/dEI {c['FE_EI']:.6e} m, modal dF/d(stiffness scale) "
              f"{c['modal_stiffness_scale']:.6e} m (relative difference {c['relative_difference']:.2e}; stated, "
              "not checked)")


def main() -> None:
    report = run()
    print_report(report)
    print_study(report)


if __name__ == "__main__":
    main()
