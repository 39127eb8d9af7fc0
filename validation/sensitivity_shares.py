"""Normalised eigen-sensitivities of a cantilever cut into quarters (Hutton & Smith 1993).

A uniform cantilever (EI = 1 N m^2, rho A = 1 kg/m, L = 1 m, EA = 1e4 N so that the axial modes
lie above the third bending mode) of planar Beam2D elements with the consistent (Hermitian,
``mass="cubic"``) mass is cut into four equal quarters q1 (root) .. q4 (tip). For each quarter j
the design variables are its Young's modulus scale E_j and its density scale rho_j (multipliers,
baseline 1), and the normalised sensitivities of bending mode n

    s_E,j = (E_j / lambda) d lambda / d E_j,        s_rho,j = (rho_j / lambda) d lambda / d rho_j

are computed with Fox-Kapoor on the full FE model, d lambda/dp = phi^T (dK/dp - lambda dM/dp) phi.

Checked:

* sum rules (Euler homogeneity: lambda is of degree +1 in the stiffness, -1 in the mass): the
  four E shares of each of modes 1-3 sum to +1, the rho shares to -1, to 1e-8;
* the shares match the Euler-Bernoulli closed form (exact integrals of the continuous modes,
  references README "Wave 2" A, derived) within 1e-3 absolute per share:
  mode 1 s_E = 0.69589 0.25335 0.04878 0.00198, mode 2 0.28168 0.27703 0.39838 0.04292,
  mode 3 0.23648 0.25644 0.33605 0.17103, and s_rho,j = -s_E,(5-j);
* Fox-Kapoor equals central finite differences of a re-analysis of the changed model (E or rho
  of the quarter scaled in the model itself, Richardson-extrapolated central differences,
  step 1e-2) within 1e-6 relative (relative to the largest derivative of the mode).

Beside them, for information and with the same sum-rule check, the shares of the CMS model
(free-interface modes with residual flexibility, 3 elastic modes per quarter) with T frozen.
Hutton & Smith's telescope (normalised sensitivities of its mode 10, e.g. chopping mechanism
density -0.424) cannot be rebuilt (no geometry); the case checks the method on a structure with
a closed form.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.analysis.modes import natural_modes
from flexmb.cms import components_from_groups, density_scale, eigen_sensitivity, free_interface, stiffness_scale
from flexmb.cms import synthesize
from flexmb.validation import CaseReport, Check, print_report

CASE = "sensitivity-shares"
TITLE = "Normalised E and rho shares of a cantilever in quarters"
SOURCE = "exact: Euler-Bernoulli integrals (references README, Wave 2 A), derived"

EI, EA, RHO_A, LENGTH = 1.0, 1.0e4, 1.0, 1.0      # N m^2, N, kg/m, m
ELEMENTS = {False: 40, True: 24}                  # by quick mode
QUARTERS = ("q1", "q2", "q3", "q4")
MODES = (0, 1, 2)
#: s_E,j of modes 1-3 for quarters root .. tip [derived, exact EB integrals]
SHARES_E = np.array([[0.69589, 0.25335, 0.04878, 0.00198],
                     [0.28168, 0.27703, 0.39838, 0.04292],
                     [0.23648, 0.25644, 0.33605, 0.17103]])
SHARE_TOL = 1e-3            # absolute per share (the table has 5 decimals)
SUM_TOL = 1e-8
FD_TOL = 1e-6
FD_STEP = 1e-2


def build(n_el: int, scale: dict[str, tuple[float, float]] | None = None) -> fm.Model:
    """The cantilever along x with groups q1 .. q4; ``scale`` maps a quarter to (E, rho) multipliers."""
    scale = scale or {}
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[np.linspace(0.0, LENGTH, n_el + 1), np.zeros(n_el + 1)])
    q = n_el // 4
    for j, name in enumerate(QUARTERS):
        e, r = scale.get(name, (1.0, 1.0))
        s = slice(j * q, (j + 1) * q)
        m.add_beam2d(np.c_[n[:-1][s], n[1:][s]], EA=EA * e, EI=EI * e, rho_A=RHO_A * r, mass="cubic", name=name)
    m.fix(0)
    return m


def finite_differences(n_el: int) -> np.ndarray:
    """d lambda / d p of modes 1-3 for the 8 variables (E q1..q4, rho q1..q4) by Richardson-
    extrapolated central differences of re-analyses of the changed model, (3, 8)."""
    def eigenvalues(name: str, which: int, t: float) -> np.ndarray:
        factors = [1.0, 1.0]
        factors[which] += t
        return natural_modes(build(n_el, {name: tuple(factors)}), 3).eigenvalues[list(MODES)]

    out = []
    for which in (0, 1):
        for name in QUARTERS:
            h = FD_STEP
            d1 = (eigenvalues(name, which, h) - eigenvalues(name, which, -h)) / (2 * h)
            d2 = (eigenvalues(name, which, 2 * h) - eigenvalues(name, which, -2 * h)) / (4 * h)
            out.append((4 * d1 - d2) / 3)
    return np.array(out).T


def run(quick: bool = False) -> CaseReport:
    n_el = ELEMENTS[quick]
    model = build(n_el)
    asm = fm.Assembly(model)
    modes = natural_modes(asm, 6)
    variables = [stiffness_scale(q, name=f"E {q}") for q in QUARTERS] + \
                [density_scale(q, name=f"rho {q}") for q in QUARTERS]
    full = eigen_sensitivity(modes, variables, list(MODES), assembly=asm)
    comps = components_from_groups(model, {q: [q] for q in QUARTERS})
    cms = synthesize([free_interface(c, n_elastic_modes=3) for c in comps])
    frozen = eigen_sensitivity(cms, variables, list(MODES))
    fd = finite_differences(n_el)

    report = CaseReport(CASE, n_dof=asm.n_dof, n_steps=1)
    s_E, s_rho = full.normalised[:, :4], full.normalised[:, 4:]
    ref_rho = -SHARES_E[:, ::-1]
    for k in MODES:
        report.add(Check.at_most(f"mode {k + 1}: |sum s_E - 1|", abs(s_E[k].sum() - 1.0), SUM_TOL,
                                 "exact: Euler homogeneity"))
        report.add(Check.at_most(f"mode {k + 1}: |sum s_rho + 1|", abs(s_rho[k].sum() + 1.0), SUM_TOL,
                                 "exact: Euler homogeneity"))
        report.add(Check.at_most(f"mode {k + 1}: max |s_E - closed form| over quarters",
                                 np.abs(s_E[k] - SHARES_E[k]).max(), SHARE_TOL, SOURCE))
        report.add(Check.at_most(f"mode {k + 1}: max |s_rho - closed form| over quarters",
                                 np.abs(s_rho[k] - ref_rho[k]).max(), SHARE_TOL, SOURCE))
        err = np.abs(full.derivatives[k] - fd[k]).max() / np.abs(fd[k]).max()
        report.add(Check.at_most(f"mode {k + 1}: Fox-Kapoor vs central FD of a re-analysis (rel.)", err, FD_TOL,
                                 "exact: derivative of the FE eigenvalue"))
        c = frozen.normalised[k]
        report.add(Check.at_most(f"mode {k + 1}: CMS (T frozen) |sum s_E - 1| + |sum s_rho + 1|",
                                 abs(c[:4].sum() - 1.0) + abs(c[4:].sum() + 1.0), SUM_TOL, "exact: Euler homogeneity"))
    report.info.update({
        "elements": n_el,
        "frequencies_hz": modes.frequencies_hz[list(MODES)].tolist(),
        "s_E_full": s_E.tolist(), "s_rho_full": s_rho.tolist(),
        "s_E_cms_T_frozen": frozen.normalised[:, :4].tolist(), "s_rho_cms_T_frozen": frozen.normalised[:, 4:].tolist(),
        "s_E_closed_form": SHARES_E.tolist(),
        "max_share_error_full": float(max(np.abs(s_E - SHARES_E).max(), np.abs(s_rho - ref_rho).max())),
        "max_share_error_cms": float(max(np.abs(frozen.normalised[:, :4] - SHARES_E).max(),
                                         np.abs(frozen.normalised[:, 4:] - ref_rho).max())),
        "ranking_mode_1": full.table(0),
    })
    report.figure = _figure(s_E, s_rho, frozen.normalised)
    return report


def _figure(s_E: np.ndarray, s_rho: np.ndarray, cms: np.ndarray):
    from flexmb.viz.plots import panels

    fig, axes = panels(len(MODES), "Normalised sensitivities of a cantilever in quarters (root q1 .. tip q4)",
                       width=4.6)
    x = np.arange(4)
    for k, ax in zip(MODES, axes):
        ax.bar(x - 0.2, s_E[k], 0.4, color="tab:blue", label="s_E, FE (Fox-Kapoor)")
        ax.bar(x + 0.2, s_rho[k], 0.4, color="tab:orange", label="s_rho, FE (Fox-Kapoor)")
        ax.plot(x - 0.2, cms[k, :4], "k^", ms=5, mfc="none", label="CMS, T frozen")
        ax.plot(x + 0.2, cms[k, 4:], "k^", ms=5, mfc="none")
        ax.plot(x - 0.2, SHARES_E[k], "r_", ms=16, mew=2, label="closed form (EB)")
        ax.plot(x + 0.2, -SHARES_E[k, ::-1], "r_", ms=16, mew=2)
        ax.axhline(0.0, color="0.4", lw=0.6)
        ax.set_xticks(x, QUARTERS)
        ax.set_title(f"mode {k + 1}", fontsize=9)
        ax.set_ylabel("(p / lambda) d lambda / dp")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
