"""Transient design sensitivities of a rigid mechanism with joints and spring-dampers: a slider on a
prismatic joint held by a spring-damper, alone (linear) and carrying a pendulum on a revolute joint with a
rotational spring-damper (nonlinear), differentiated with respect to the spring rate, the damper rate and
the slider's mass (issue 33).

Model: a rigid slider (mass m = 2 kg, J = 0.02 kg m^2, centre at (1, 0) m) on a prismatic joint to the
ground along x, and a point-to-point spring-damper (``Model.add_spring_damper``: k = 800 N/m, c = 4 N s/m,
zeta = 0.05, rest length its reference length) from the ground point (0, 0) to the slider's centre, along
the joint's line. Released from x0 = 0.02 m at rest. Mid-point scheme, fixed steps dt = 0.005 s (63 per
undamped period), 160 steps (quick: 80). Sub-case *pendulum*: the slider carries a pendulum (0.5 kg, J =
0.01 kg m^2, centre 0.3 m below the pivot) on a revolute joint at the slider's centre with a rotational
spring-damper (2 N m/rad, 0.05 N m s/rad), under gravity -y, released from 0.4 rad with the slider at x0:
two bodies, two joints, two spring-dampers, nonlinear.

Responses F: the slider's displacement x at the last step (m); its time integral over the run (the
trapezoidal rule on the step times, m s); in the pendulum sub-case also the pendulum's angle at the last
step (rad) and the impulse of the pivot's vertical reaction over the run (N s, the reaction in the joint
frame, trapezoidal rule). (The reaction at one step balances the mid-point inertia ``m (v_{n+1} - v_n) /
dt``, whose round-off goes as 1 / dt^2: the re-runs' final reactions carried noise of about 2e-11
relative, and the difference at the most stable step missed the derivative by up to 6e-7 (quick) and
1e-5 (full); the impulse averages that noise out.) Parameters p: the slide's spring rate k (N/m), its
damper rate c (N s/m), the slider's mass m (kg) (:mod:`flexmb.sensitivity.parameters`); the pendulum
sub-case adds the pivot's spring rate (N m/rad).

Reference of the linear sub-case, the **exact discrete recursion**: the joint holds y and the rotation, the
spring stays on its line (length 1 + x), so the mid-point step is the trapezoidal rule on m x'' + c x' +
k x = 0 (the mid-point spring force k (x_n + x_{n+1}) / 2, the damper's c (x_{n+1} - x_n) / dt, the end
rate ``v_{n+1} = 2 (x_{n+1} - x_n) / dt - v_n``)::

    (2 m / dt^2 + c / dt + k / 2) x_{n+1} = (2 m / dt^2 + c / dt - k / 2) x_n + 2 m v_n / dt

a 2x2 linear map of (x, v) written here in numpy (:func:`recursion`), independently of flexmb. Its exact
parameter derivatives come from a complex step (h = 1e-30: no cancellation) of the whole recursion in p.

Checked:

1. The discrete adjoint (:func:`flexmb.sensitivity.adjoint.adjoint_gradient`) against direct
   differentiation (:func:`flexmb.sensitivity.midpoint.direct_sensitivities`), both exact derivatives of
   the discrete map, to 1e-8 relative (the issue's criterion), both sub-cases (measured 4e-16 .. 5e-13).
2. Linear sub-case: the run's x_n against the recursion (1e-10 of x0), and both gradients against the
   recursion's complex-step derivatives, to 1e-8 relative (measured: states 4e-15 .. 1e-14, gradients
   7e-16 .. 2e-13).
3. Both against central differences of re-runs ``(F(p + h) - F(p - h)) / 2h`` of the changed model
   (:meth:`~flexmb.sensitivity.parameters.TransientParameter.apply`) to 1e-5 relative (the issue's
   criterion): a step study over relative steps h = 1e-2 ... 1e-9 whose error falls as h^2 (truncation) and
   rises as eps / h (round-off); the reference is the difference at the *most stable step* h*, the step whose
   difference agrees best with both neighbours' (chosen from the differences alone, as in
   ``sensitivity-slider-crank``). Measured 8e-12 .. 5e-8 at h* (1e-6 .. 1e-4).

Newton iterates to its round-off stop (residual_tol 1e-14), re-runs too. The joint reaction's derivative
with respect to u is a central difference inside the response (``flexmb.sensitivity.responses``); both
gradients share it (the pivot's frame is the slider's, which does not turn). The re-runs evaluate the
impulse from the constraints' reactions directly (:func:`pivot_impulse`, the same sum without the
gradient's central differences); on the baseline states it equals the response's value (the difference,
0, is in the JSON).
"""
from __future__ import annotations

import time

import numpy as np

import flexmb as fm
from flexmb.integrators.newton import NewtonSettings
from flexmb.sensitivity import parameters as P
from flexmb.sensitivity import responses as R
from flexmb.sensitivity.adjoint import adjoint_gradient, trajectory
from flexmb.sensitivity.midpoint import direct_sensitivities
from flexmb.sensitivity.transient import record
from flexmb.validation import CaseReport, Check, print_report
from flexmb.validation.step_study import draw_step_study_axes, most_stable_step

CASE = "sensitivity-spring-damper"
TITLE = ("Transient sensitivities: slider on a prismatic joint with a spring-damper (and a pendulum with a joint "
         "spring-damper) w.r.t. spring rate, damper rate, mass (direct, adjoint, exact recursion, central differences)")
SOURCE = "exact: the trapezoidal rule's 2x2 recursion (linear sub-case); central differences of re-runs"

MASS, INERTIA, SPRING, DAMPER, X0 = 2.0, 0.02, 800.0, 4.0, 0.02     # kg, kg m^2, N/m, N s/m, m
BOB_MASS, BOB_INERTIA, ARM, PHI0 = 0.5, 0.01, 0.3, 0.4               # kg, kg m^2, m, rad
PIVOT_SPRING, PIVOT_DAMPER, GRAVITY = 2.0, 0.05, 9.81                # N m/rad, N m s/rad, m/s^2
DT = 0.005                                                           # s
STEPS = {False: 160, True: 80}                                      # full, quick
FD_STEPS = 10.0 ** -np.arange(2.0, 10.0)    # relative steps of the study, 1e-2 ... 1e-9
ADJOINT_TOL = 1e-8              # issue 33: direct and adjoint agree to 1e-8 relative
EXACT_TOL = 1e-8                # against the recursion's exact derivative
STATE_TOL = 1e-10               # the run's x_n against the recursion, relative to x0
FD_TOL = 1e-5                   # issue 33: both agree with central differences to 1e-5
COMPLEX_STEP = 1e-30
NEWTON = NewtonSettings(residual_tol=1e-14)
SRC_DDM = "direct differentiation of the discrete map (flexmb.sensitivity.midpoint)"
SRC_EXACT = "exact: complex-step derivative of the trapezoidal 2x2 recursion"


def build(pendulum: bool) -> tuple[fm.Model, np.ndarray, dict, dict]:
    """The model, its start displacements u0, its parameters (label: TransientParameter) and the items
    the responses name (``slider`` node, ``bob`` node, ``pivot`` joint)."""
    m = fm.Model(dim=2)
    slider = m.add_rigid_body([1.0, 0.0], MASS, INERTIA, name="slider")
    m.add_joint("prismatic", None, slider, x_axis=[1.0, 0.0], name="slide")
    spring = m.add_spring_damper(None, slider.node, k=SPRING, c=DAMPER, at_a=[0.0, 0.0], name="slide spring")
    params = {"k": P.spring_rate(spring), "c": P.damper_rate(spring), "m": P.body_mass(slider)}
    items = {"slider": slider.node}
    if pendulum:
        bob = m.add_rigid_body([1.0, -ARM], BOB_MASS, BOB_INERTIA, name="pendulum")
        pivot = m.add_joint("revolute", slider, bob, at=[1.0, 0.0], name="pivot")
        rotational = m.add_joint_spring_damper(pivot, k=PIVOT_SPRING, c=PIVOT_DAMPER, name="pivot spring")
        m.set_gravity([0.0, -GRAVITY])
        params["k pivot"] = P.spring_rate(rotational)
        items.update(bob=bob.node, pivot=pivot.name)
    asm = fm.Assembly(m)
    u0 = np.zeros(asm.n_dof)
    u0[asm.dofs.index(slider.node, "ux")] = X0
    if pendulum:
        u0[asm.dofs.index(items["bob"], "ux")] = X0 + ARM * np.sin(PHI0)
        u0[asm.dofs.index(items["bob"], "uy")] = ARM * (1.0 - np.cos(PHI0))
        u0[asm.dofs.index(items["bob"], "rz")] = PHI0
    return m, u0, params, items


def recursion(k: complex, c: complex, m: complex, n_steps: int) -> tuple[np.ndarray, np.ndarray]:
    """x_n (m) and v_n (m/s), n = 0 .. n_steps, of the trapezoidal rule on m x'' + c x' + k x = 0 from
    (X0, 0) with steps DT (module docstring); complex arguments carry a complex step through it."""
    a = 2.0 * m / DT**2 + c / DT
    x, v = np.zeros(n_steps + 1, dtype=complex), np.zeros(n_steps + 1, dtype=complex)
    x[0] = X0
    for n in range(n_steps):
        x[n + 1] = ((a - 0.5 * k) * x[n] + 2.0 * m * v[n] / DT) / (a + 0.5 * k)
        v[n + 1] = 2.0 * (x[n + 1] - x[n]) / DT - v[n]
    return x, v


def recursion_responses(k: complex, c: complex, m: complex, n_steps: int) -> np.ndarray:
    """The linear sub-case's responses by the recursion: x at the last step and its trapezoidal integral."""
    x = recursion(k, c, m, n_steps)[0]
    return np.array([x[-1], DT * (x.sum() - 0.5 * (x[0] + x[-1]))])


def recursion_gradient(n_steps: int) -> np.ndarray:
    """d(responses)/d(k, c, m) (2, 3) of the recursion by a complex step (exact to round-off)."""
    base = np.array([SPRING, DAMPER, MASS], dtype=complex)
    out = np.zeros((2, 3))
    for j in range(3):
        p = base.copy()
        p[j] += 1j * COMPLEX_STEP
        out[:, j] = recursion_responses(*p, n_steps).imag / COMPLEX_STEP
    return out


def _responses(traj: R.Trajectory, items: dict) -> dict[str, R.ResponseValue]:
    """The responses F (module docstring) on a trajectory, by label."""
    asm, slider = traj.asm, items["slider"]
    out = {"x(T)": R.final(R.dof(asm, slider, "ux"), traj), "int x dt": R.integral(R.dof(asm, slider, "ux"), traj)}
    if "bob" in items:
        out["phi(T)"] = R.final(R.dof(asm, items["bob"], "rz"), traj)
        out["pivot impulse y"] = R.integral(R.joint_reaction(asm, items["pivot"], 1), traj)
    return out


def pivot_impulse(traj: R.Trajectory, items: dict) -> float:
    """The pivot's vertical reaction integrated over the run (N s) by the trapezoidal rule, from the
    constraints' reactions directly: the re-runs' value of the response ``pivot impulse y`` without the
    signal's u-derivatives (central differences at every step, which only the gradient needs)."""
    asm = traj.asm
    index = [j.name for j in asm.model.joints].index(items["pivot"])
    y = np.array([asm.constraints.joint_reactions(u, lam, t, asm.dofs)[index][0][1]
                  for u, lam, t in zip(traj.u, traj.multipliers, traj.t)])
    return float(np.sum(np.diff(traj.t) * (y[1:] + y[:-1])) / 2.0)


def _rerun(model: fm.Model, u0: np.ndarray, n_steps: int, items: dict) -> np.ndarray:
    """The responses' values of a run of ``model`` (a changed copy) over the same steps."""
    traj = trajectory(record(fm.Assembly(model), DT, n_steps * DT, u0=u0, newton=NEWTON))
    asm, slider = traj.asm, items["slider"]
    values = [R.final(R.dof(asm, slider, "ux"), traj).value, R.integral(R.dof(asm, slider, "ux"), traj).value]
    if "bob" in items:
        values += [R.final(R.dof(asm, items["bob"], "rz"), traj).value, pivot_impulse(traj, items)]
    return np.array(values)


def step_study(model: fm.Model, u0: np.ndarray, n_steps: int, items: dict, p: P.TransientParameter,
               exact: np.ndarray) -> list[dict]:
    """Per response: central differences over FD_STEPS (relative to p's baseline), their errors against
    ``exact`` (n_r,) and the most stable step (module docstring) with its difference, the reference."""
    p0 = p.value(model)
    fds = []
    for h in FD_STEPS:
        plus, minus = (_rerun(p.apply(model, p0 * (1.0 + s * h)), u0, n_steps, items) for s in (1.0, -1.0))
        fds.append((plus - minus) / (2.0 * h * p0))
    fds = np.array(fds)                                          # (n_h, n_r)
    studies = []
    for r in range(fds.shape[1]):
        fd = fds[:, r]
        errors = np.abs(fd - exact[r]) / abs(exact[r])
        best = most_stable_step(fd)
        studies.append({"h": FD_STEPS.tolist(), "fd": fd.tolist(), "error": errors.tolist(), "best": best,
                        "h_best": float(FD_STEPS[best]), "fd_best": float(fd[best]),
                        "truncation_slope_1e-2_1e-3": float(np.log10(errors[0] / errors[1])),
                        "h_of_smallest_error": float(FD_STEPS[int(np.argmin(errors))])})
    return studies


def _sub_case(report: CaseReport, pendulum: bool, n_steps: int, timing: dict) -> dict:
    """Build, run and differentiate one sub-case, add its checks; returns its record for the JSON."""
    tag = "pendulum" if pendulum else "slider"
    model, u0, params, items = build(pendulum)
    plist, labels = list(params.values()), list(params)
    clock = time.process_time()
    run = record(fm.Assembly(model), DT, n_steps * DT, u0=u0, newton=NEWTON)
    timing[f"{tag}: forward run"] = time.process_time() - clock
    clock = time.process_time()
    sens = direct_sensitivities(run, plist)
    values = _responses(sens.trajectory(), items)
    ddm = np.array([sens.gradient(v) for v in values.values()])
    timing[f"{tag}: direct differentiation, {len(plist)} parameters"] = time.process_time() - clock
    clock = time.process_time()
    adj = adjoint_gradient(run, plist, list(_responses(trajectory(run), items).values())).gradient
    timing[f"{tag}: adjoint (with the trajectory)"] = time.process_time() - clock
    names = list(values)
    for r, name in enumerate(names):
        for j, label in enumerate(labels):
            report.add(Check.close(f"{tag} d[{name}]/d{label}: adjoint vs direct", adj[r, j], ddm[r, j],
                                   ADJOINT_TOL, SRC_DDM))
    out = {"responses": {name: v.value for name, v in values.items()},
           "gradient_direct": {name: dict(zip(labels, ddm[r].tolist())) for r, name in enumerate(names)},
           "gradient_adjoint": {name: dict(zip(labels, adj[r].tolist())) for r, name in enumerate(names)}}
    if pendulum:      # the re-runs' value of the impulse against the response's, on the same states
        out["pivot_impulse_direct_sum_minus_response"] = pivot_impulse(sens.trajectory(), items) - \
            values["pivot impulse y"].value
    if not pendulum:
        x_ref = recursion(SPRING, DAMPER, MASS, n_steps)[0].real
        x = sens.u[:, run.asm.dofs.index(items["slider"], "ux")]
        report.add(Check.at_most("slider: max |x_n - recursion| / x0", float(np.abs(x - x_ref).max() / X0),
                                 STATE_TOL, "exact: the trapezoidal 2x2 recursion"))
        exact = recursion_gradient(n_steps)
        for r, name in enumerate(names):
            for j, label in enumerate(labels):
                report.add(Check.close(f"slider d[{name}]/d{label}: direct vs recursion", ddm[r, j], exact[r, j],
                                       EXACT_TOL, SRC_EXACT))
                report.add(Check.close(f"slider d[{name}]/d{label}: adjoint vs recursion", adj[r, j], exact[r, j],
                                       EXACT_TOL, SRC_EXACT))
        out["gradient_recursion"] = {name: dict(zip(labels, exact[r].tolist())) for r, name in enumerate(names)}
    clock = time.process_time()
    studies = {label: step_study(model, u0, n_steps, items, p, ddm[:, j])
               for j, (label, p) in enumerate(params.items())}
    timing[f"{tag}: step studies ({2 * FD_STEPS.size} re-runs per parameter)"] = time.process_time() - clock
    for label, per_response in studies.items():
        j = labels.index(label)
        for r, (name, study) in enumerate(zip(names, per_response)):
            src = f"central difference of re-runs at the most stable step h* = {study['h_best']:.0e}"
            report.add(Check.close(f"{tag} d[{name}]/d{label}: direct vs FD(h*)", ddm[r, j], study["fd_best"],
                                   FD_TOL, src))
            report.add(Check.close(f"{tag} d[{name}]/d{label}: adjoint vs FD(h*)", adj[r, j], study["fd_best"],
                                   FD_TOL, src))
    out["step_study"] = {label: dict(zip(names, per_response)) for label, per_response in studies.items()}
    out["units"] = {label: p.unit for label, p in params.items()}
    out["n_dof"], out["steps"] = run.asm.n_dof, n_steps
    out["_plot"] = (sens.t, sens.u[:, run.asm.dofs.index(items["slider"], "ux")])
    report.n_steps += (2 + 2 * FD_STEPS.size * len(plist)) * n_steps
    return out


def run(quick: bool = False) -> CaseReport:
    report = CaseReport(CASE, n_steps=0)
    timing: dict[str, float] = {}
    cases = {tag: _sub_case(report, tag == "pendulum", STEPS[quick], timing) for tag in ("slider", "pendulum")}
    plots = {tag: case.pop("_plot") for tag, case in cases.items()}
    report.n_dof = cases["pendulum"]["n_dof"]
    report.info.update({
        "model": (f"slider {MASS} kg on a prismatic joint, spring-damper k = {SPRING} N/m, c = {DAMPER} N s/m, "
                  f"x0 = {X0} m; pendulum sub-case: {BOB_MASS} kg at {ARM} m on a revolute joint with "
                  f"{PIVOT_SPRING} N m/rad, {PIVOT_DAMPER} N m s/rad, gravity, phi0 = {PHI0} rad"),
        "scheme": "mid-point", "dt_s": DT, "steps": STEPS[quick],
        "newton": "residual_tol 1e-14: iterations to the round-off stop (defaults otherwise)",
        "sub_cases": cases, "cpu_s": timing})
    report.figure = _figure(plots, cases)
    return report


def _figure(plots: dict, cases: dict):
    from flexmb.viz.plots import COMPUTED_ALPHA, legend_outside, panels

    fig, (ax, ax2) = panels(2, "Slider with a spring-damper (and a pendulum): transient sensitivities")
    for tag, (t, x) in plots.items():
        ax.plot(t, x * 1e3, alpha=COMPUTED_ALPHA, label=f"slider x, {tag} sub-case (mid-point)")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("x (mm)")
    ax.grid(True, alpha=0.3)
    legend_outside(ax, 7)
    k = 0
    for tag, case in cases.items():
        for label, per_response in case["step_study"].items():
            study = per_response["x(T)"]
            errors = np.maximum(study["error"], 1e-16)
            ax2.loglog(FD_STEPS, errors, "o-" if tag == "slider" else "s--", color=f"C{k}", ms=4,
                       label=f"{tag}, dx(T)/d{label}")
            ax2.plot(study["h_best"], errors[study["best"]], "k+", ms=10)
            k += 1
    draw_step_study_axes(ax2, FD_TOL)
    legend_outside(ax2, 7, ncol=2)
    fig.tight_layout()
    return fig


def print_study(report: CaseReport) -> None:
    """The step studies as text: per sub-case, parameter and response, h, the central difference and its
    error against the direct derivative."""
    for tag, case in report.info["sub_cases"].items():
        for label, per_response in case["step_study"].items():
            for name, study in per_response.items():
                print(f"\n{tag}, d[{name}]/d{label} (h* = {study['h_best']:.0e})")
                for h, fd, e in zip(study["h"], study["fd"], study["error"]):
                    print(f"{h:8.0e} {fd:22.13e} {e:10.2e}")


def main() -> None:
    report = run()
    print_report(report)
    print_study(report)


if __name__ == "__main__":
    main()
