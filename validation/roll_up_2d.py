"""Roll-up of a cantilever into a full circle by an end moment (planar co-rotational beam).

A straight cantilever of length L, clamped at x = 0, loaded by a tip moment M = lam 2 pi EI / L.
Exact solution (Euler-Bernoulli, inextensible): a circular arc of radius rho = EI / M at every
load level, tip rotation 2 pi lam, tip at (rho sin(L/rho), rho (1 - cos(L/rho))); at lam = 1 the
beam closes into a full circle and the tip returns to the root. A classic test of co-rotational
formulations (e.g. Crisfield 1991, vol. 1, ch. 7; Simo & Vu-Quoc 1986).

Checked with 20 elements (load control): at full load the tip is within 1e-3 L of the root and
its rotation is 2 pi; at quarter, half and three-quarter load the tip lies within 0.5 % of L of the
exact arc's tip. The chord polygon of 20 equal elements is inscribed in a circle slightly larger
than the exact one, which is the size of the remaining error (about 0.4 % of rho).
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.validation import CaseReport, Check, print_report

CASE = "roll-up-2d"
TITLE = "Cantilever rolled up into a circle by an end moment (Beam2D)"
SOURCE = "exact circular arc, rho = EI/M"

LENGTH = 1.0          # m
EI = 1.0e3            # N m^2
EA = 1.0e7            # N
N_ELEMENTS = 20
CHECK_LEVELS = (0.25, 0.5, 0.75)


def build(n_elements: int = N_ELEMENTS) -> tuple[fm.Assembly, int]:
    model = fm.Model(dim=2)
    x = np.linspace(0.0, LENGTH, n_elements + 1)
    nodes = model.add_nodes(np.c_[x, np.zeros_like(x)])
    model.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=EA, EI=EI)
    model.fix(nodes[0])
    model.add_load(nodes[-1], "rz", 2.0 * np.pi * EI / LENGTH)   # scaled by the load factor
    return fm.Assembly(model), int(nodes[-1])


def exact_tip(lam: float) -> np.ndarray:
    """Exact tip position (2,) at load factor lam > 0."""
    phi = 2.0 * np.pi * lam                                         # L / rho
    rho = LENGTH / phi
    return np.array([rho * np.sin(phi), rho * (1.0 - np.cos(phi))])


def run(quick: bool = False) -> CaseReport:
    asm, tip = build()
    n_inc = 20 if quick else 40
    path = fm.load_control(asm, n_inc)
    lams = np.array(path.load_factors)
    ix, iy, ir = (asm.dofs.index(tip, d) for d in ("ux", "uy", "rz"))
    tip_xy = np.array([[u[ix] + LENGTH, u[iy]] for u in path.u])      # (n_steps, 2)
    report = CaseReport(CASE, n_dof=asm.n_dof, n_steps=len(lams))
    for lam in CHECK_LEVELS:
        k = int(np.argmin(np.abs(lams - lam)))
        err = np.linalg.norm(tip_xy[k] - exact_tip(lam)) / LENGTH
        report.add(Check.at_most(f"lam={lam}: |tip - exact arc tip| / L", err, 5e-3, SOURCE))
    report.add(Check.at_most("lam=1: |tip - root| / L", np.linalg.norm(tip_xy[-1]) / LENGTH, 1e-3,
                             "exact: closed circle"))
    report.add(Check.close("lam=1: tip rotation (rad)", path.u[-1][ir], 2.0 * np.pi, 1e-6,
                           "exact: theta = M L / EI"))
    report.info.update({
        "newton_iterations": [log.iterations for log in path.newton_logs],
        "cutbacks": path.cutbacks,
        "last_increment_residual_history": path.newton_logs[-1].residual_norms,
    })
    report.figure = _figure(asm, path, lams)
    return report


def _figure(asm: fm.Assembly, path: fm.StaticPath, lams: np.ndarray):
    from flexmb.viz.plots import panels

    fig, (ax, ax2) = panels(2, f"Roll-up of a cantilever, {N_ELEMENTS} co-rotational beam elements")
    s = np.linspace(0.0, LENGTH, 200)
    for lam in CHECK_LEVELS + (1.0,):
        k = int(np.argmin(np.abs(lams - lam)))
        xy = asm.positions(path.u[k])
        line, = ax.plot(xy[:, 0], xy[:, 1], "o-", ms=3, label=f"lam = {lam}")
        rho = LENGTH / (2.0 * np.pi * lam)
        ax.plot(rho * np.sin(s / rho), rho * (1.0 - np.cos(s / rho)), "--", color=line.get_color(), lw=1)
    ax.plot([0.0, LENGTH], [0.0, 0.0], "k:", lw=1, label="undeformed")
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.legend(fontsize=8, title="flexmb (dots), exact (dashed)")
    for log, lam in zip(path.newton_logs, lams):
        if abs(lam - 1.0) < 1e-12 or abs(lam - 0.5) < 1e-12:
            r = np.array(log.residual_norms) / log.force_scale
            ax2.semilogy(np.arange(r.size), np.maximum(r, 1e-18), "o-", label=f"increment to lam = {lam}")
    ax2.set_xlabel("Newton iteration")
    ax2.set_ylabel("|r| / force scale")
    ax2.grid(True, which="both", alpha=0.3)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
