"""Physical pendulum: the projective criterion of coordinate partitioning against its closed form
(Blajer, Schiehlen & Schirm 1994, section 3, eqs. (24)-(26); benchmark item 8).

A rigid body of mass m and moment of inertia J about its centre of mass G swings about a pin at
the origin, G at distance rho from the pin. Redundant coordinates q = [x, y, gamma] (position of
G and the body's angle), metric M = diag(m, m, J), constraints

    Phi_1 = x - rho cos(gamma) = 0,   Phi_2 = y - rho sin(gamma) = 0,
    C = [[1, 0, rho sin(gamma)], [0, 1, -rho cos(gamma)]]                               (24)

One degree of freedom: q_I is x, y or gamma. The squared cosine of the angle between the unit
vector along q_i' and the tangent subspace, in the metric of M,

    cos^2 alpha_i = D_i^T M_d^{-1} D_i / (M^{-1})_ii                                   (23a)
                  = 1 - (C M^{-1})_i^T M_c^{-1} (C M^{-1})_i / (M^{-1})_ii             (23b)

has the closed form

    cos^2 alpha_x = m rho^2 sin^2(gamma) / (m rho^2 + J),
    cos^2 alpha_y = m rho^2 cos^2(gamma) / (m rho^2 + J),
    cos^2 alpha_gamma = J / (m rho^2 + J)                                               (26)

whichever valid choice produced D (the tangent subspace is a property of the configuration).

Checked, over 100 random pendulums (fixed seed; m log-uniform in [0.1, 100] kg, J log-uniform in
[1e-3, 10] kg m^2, rho log-uniform in [0.05, 5] m, gamma uniform in [0, 2 pi)):
(1) cos^2 alpha of all three coordinates from (23a) with D of each choice q_I = x, y, gamma
where that choice is valid, and from (23b), against (26): the largest absolute error of each
route at most 1e-12 (values lie in [0, 1]; (23a) is exact to a few ulp, (23b) solves with
M_c = C M^{-1} C^T, whose condition grows with m rho^2 / J, and loses digits with it: about 6e-14
at worst over these ranges);
(2) at gamma = 0 the choice q_I = x, and at gamma = pi/2 the choice q_I = y, has cos^2 alpha = 0
(at most 1e-15 over all 100 pendulums, by (23a) and by the set criterion of
``choice_criterion``) and ``partition`` reports it as singular (SingularChoiceError) in every
case; (3) the projective choice (``choose_independent(..., "projective")``) is the coordinate
with the largest cos^2 alpha of (26) in all 100 cases. How often the mass-blind choices (LU
pivoting on C, SVD of C) pick another coordinate is reported, not checked. Quick and full runs
are the same (well under a second).
"""
from __future__ import annotations

import numpy as np

from flexmb.multibody.partitioning import (SingularChoiceError, choice_criterion, choose_independent, partition,
                                           projective_criterion, tangent_gram)
from flexmb.validation import CaseReport, Check, print_report

CASE = "pendulum-projective"
TITLE = "Physical pendulum: projective criterion of coordinate partitioning vs closed form"
SOURCE = "Blajer, Schiehlen & Schirm 1994, eq. (26)"

SEED = 19940101
N_CASES = 100
MASS_RANGE = (0.1, 100.0)          # kg, log-uniform
INERTIA_RANGE = (1e-3, 10.0)       # kg m^2, log-uniform
RHO_RANGE = (0.05, 5.0)            # m, log-uniform
TOL_CLOSED_FORM = 1e-12            # absolute, on cos^2 alpha in [0, 1]
TOL_SINGULAR = 1e-15
NAMES = ["x", "y", "gamma"]
FIGURE_PENDULUM = (1.0, 0.6, 1.0)   # m (kg), J (kg m^2), rho (m) of the figure: each coordinate best somewhere
SRC = "Blajer, Schiehlen & Schirm 1994, eq. (26)"


def metric_and_jacobian(m: float, J: float, rho: float, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """M = diag(m, m, J) (3, 3) and C of eq. (24) (2, 3) at the angle gamma (rad)."""
    M = np.diag([m, m, J])
    C = np.array([[1.0, 0.0, rho * np.sin(gamma)],
                  [0.0, 1.0, -rho * np.cos(gamma)]])
    return M, C


def closed_form(m: float, J: float, rho: float, gamma: float) -> np.ndarray:
    """cos^2 alpha of (x, y, gamma), eq. (26) (3,)."""
    inertia = m * rho**2 + J                          # about the pin
    return np.array([m * rho**2 * np.sin(gamma)**2, m * rho**2 * np.cos(gamma)**2, J]) / inertia


def random_pendulums(rng: np.random.Generator, count: int) -> np.ndarray:
    """(count, 4) rows of (m, J, rho, gamma) drawn from the ranges above."""
    def log_uniform(bounds: tuple[float, float]) -> np.ndarray:
        return 10.0 ** rng.uniform(np.log10(bounds[0]), np.log10(bounds[1]), count)

    return np.c_[log_uniform(MASS_RANGE), log_uniform(INERTIA_RANGE), log_uniform(RHO_RANGE),
                 rng.uniform(0.0, 2.0 * np.pi, count)]


def criterion_by_choice(M: np.ndarray, C: np.ndarray) -> dict[str, np.ndarray | None]:
    """cos^2 alpha (3,) from (23a) with D of each single-coordinate choice (None where that
    choice is singular) and from (23b)."""
    out: dict[str, np.ndarray | None] = {}
    for i, name in enumerate(NAMES):
        try:
            out[f"23a, q_I = {name}"] = projective_criterion(M, C, partition(C, [i], names=NAMES).D)
        except SingularChoiceError:
            out[f"23a, q_I = {name}"] = None
    out["23b"] = projective_criterion(M, C, form="23b")
    return out


def singular_choice(m: float, J: float, rho: float, gamma: float, coordinate: int) -> tuple[float, bool]:
    """At a configuration where ``coordinate`` is a singular choice: its largest criterion value
    (23a with D of the gamma choice, and the set criterion) and whether partition raised."""
    M, C = metric_and_jacobian(m, J, rho, gamma)
    D = partition(C, [2]).D                           # gamma is never singular here
    value = max(projective_criterion(M, C, D)[coordinate], choice_criterion(tangent_gram(M, D), [coordinate]))
    try:
        partition(C, [coordinate], names=NAMES)
    except SingularChoiceError:
        return value, True
    return value, False


def run(quick: bool = False) -> CaseReport:
    # no time stepping: the "steps" are the configurations evaluated
    report = CaseReport(CASE, n_dof=3, n_steps=N_CASES)
    params = random_pendulums(np.random.default_rng(SEED), N_CASES)

    # (1) every route against eq. (26)
    errors: dict[str, np.ndarray] = {}              # route -> (N_CASES,) abs error, NaN where singular
    picks = {"projective": [], "lu": [], "svd": []}
    best = []
    for k, (m, J, rho, gamma) in enumerate(params):
        M, C = metric_and_jacobian(m, J, rho, gamma)
        exact = closed_form(m, J, rho, gamma)
        for route, cos2 in criterion_by_choice(M, C).items():
            errors.setdefault(route, np.full(N_CASES, np.nan))[k] = (np.nan if cos2 is None
                                                                      else np.abs(cos2 - exact).max())
        for method in picks:
            picks[method].append(int(choose_independent(M, C, method)[0]))
        best.append(int(np.argmax(exact)))
    for route, err in errors.items():
        valid = ~np.isnan(err)
        report.add(Check.at_most(f"max |cos^2 alpha - eq. (26)|, {route} ({valid.sum()} of {N_CASES} valid)",
                                 float(np.max(err[valid])), TOL_CLOSED_FORM, SRC))

    # (2) the singular choices: x at gamma = 0, y at gamma = pi/2
    singular = [singular_choice(m, J, rho, gamma, i) for m, J, rho, _ in params
                for gamma, i in ((0.0, 0), (0.5 * np.pi, 1))]
    values = np.array([v for v, _ in singular])
    raised = np.array([r for _, r in singular])
    report.add(Check.at_most("max cos^2 alpha of q_I = x at gamma = 0 and q_I = y at gamma = pi/2",
                             float(values.max()), TOL_SINGULAR, SRC))
    report.add(Check.at_least("fraction of these singular choices rejected by partition (SingularChoiceError)",
                              float(raised.mean()), 1.0, "C_D singular exactly where eq. (26) vanishes"))

    # (3) the projective choice is the coordinate with the largest cos^2 alpha
    agree = np.array(picks["projective"]) == np.array(best)
    report.add(Check.at_least("fraction of cases where the projective choice has the largest cos^2 of eq. (26)",
                              float(agree.mean()), 1.0, SRC))

    report.info.update({
        "seed": SEED, "cases": N_CASES,
        "ranges": {"m_kg (log-uniform)": MASS_RANGE, "J_kg_m2 (log-uniform)": INERTIA_RANGE,
                   "rho_m (log-uniform)": RHO_RANGE, "gamma_rad (uniform)": (0.0, 2.0 * np.pi)},
        "max_abs_error_by_route": {route: float(np.nanmax(err)) for route, err in errors.items()},
        "valid_choices": {route: int((~np.isnan(err)).sum()) for route, err in errors.items()},
        "chosen_coordinate_counts": {method: {name: picks[method].count(i) for i, name in enumerate(NAMES)}
                                     for method in picks},
        "cases where LU pivoting picks another coordinate than the projective criterion":
            int(np.sum(np.array(picks["lu"]) != np.array(picks["projective"]))),
        "cases where the SVD choice picks another coordinate than the projective criterion":
            int(np.sum(np.array(picks["svd"]) != np.array(picks["projective"]))),
    })
    report.figure = _figure(errors)
    return report


def _figure(errors: dict[str, np.ndarray]):
    from flexmb.viz.plots import panels

    m, J, rho = FIGURE_PENDULUM
    fig, (ax1, ax2) = panels(2, f"Physical pendulum, projective criterion (m = {m:g} kg, J = {J:g} kg m^2, "
                                f"rho = {rho:g} m)")
    gamma = np.linspace(0.0, 2.0 * np.pi, 361)
    exact = np.array([closed_form(m, J, rho, g) for g in gamma])
    markers = np.linspace(0.0, 2.0 * np.pi, 37)
    computed = []
    for g in markers:                                 # (23a) with D of the projective choice
        M, C = metric_and_jacobian(m, J, rho, g)
        computed.append(projective_criterion(M, C, partition(C, choose_independent(M, C)).D))
    computed = np.array(computed)
    for i, name in enumerate(NAMES):
        line, = ax1.plot(np.rad2deg(gamma), exact[:, i], lw=1.2, label=name)
        ax1.plot(np.rad2deg(markers), computed[:, i], "o", ms=3.5, color=line.get_color())
    ax1.set_xlabel("gamma (deg)")
    ax1.set_ylabel("cos^2 alpha")
    ax1.set_title("lines: eq. (26); dots: eq. (23a), D of the projective choice", fontsize=9)
    ax1.set_xticks(np.arange(0, 361, 45))
    ax1.set_ylim(0.0, 1.0)
    ax1.legend(fontsize=8, loc="upper center", ncol=3, title="cos^2 alpha of", title_fontsize=8)
    for route, err in errors.items():
        ax2.semilogy(np.arange(err.size), np.maximum(err, 1e-19), ".", ms=4, label=route)
    ax2.axhline(TOL_CLOSED_FORM, color="k", ls="--", lw=1, label="tolerance")
    ax2.set_xlabel("random pendulum")
    ax2.set_ylabel("max abs error vs eq. (26)")
    ax2.set_title("per random pendulum; exact zeros shown at 1e-19", fontsize=9)
    ax2.legend(fontsize=7)
    for ax in (ax1, ax2):
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
