"""Cantilever strip rolled up into a full circle by an end moment, with shell triangles
(Sze, Liu & Lo 2004, problem 3.2).

A flat strip L = 12, b = 1, h = 0.1 (E = 1.2e6, nu = 0; consistent units, EI = E b h^3 / 12 =
100), clamped at x = 0, carries at its free end x = L a dead moment M about -y (spread
uniformly over the tip edge) growing to M_max = 2 pi EI / L = 50 pi / 3. With nu = 0 the strip
bends like an inextensible elastica into a circular arc of radius EI / M: with t = 2 pi M / M_max,
the tip has moved u = L (1 - sin t / t) towards the root and w = L (1 - cos t) / t up (+z); at
M_max the strip closes into a full circle and the tip is back at the root.

Model: N_LONG x N_WIDE cells, two triangles each with the diagonals alternating ("union-jack";
Shell3, ANDES membrane + DKT bending), load control in 40 equal increments (quick mode: 8 with
cut-backs; every increment is solved to equilibrium, so the states at the checked levels are
the same).

Checked (the issue's criteria): at M / M_max = 1/4, 1/2, 3/4 every tip node within 0.5 % of L
of the exact arc; at M_max every tip node within 1e-2 L of its root position. Measured
(2026-11-23, JSON ``tip_errors_over_L``): 3.6e-4, 1.0e-3, 1.1e-3 L at 1/4, 1/2, 3/4 and 5e-5 L
at M_max. The diagonal pattern matters: with all diagonals one way ("right") the strip drifts
sideways and twists a little as it rolls up (out-of-plane rotation 1.8e-4 rad at 1/4), giving
2.0e-3 L at 3/4 and 3.3e-3 L at M_max (32x1: 4.1e-4 and 6.1e-4 L); four triangles per cell
("cross", centre nodes) give 1.2e-2 L at 3/4, beyond the tolerance; 16x2 "union-jack" gives
the same as 16x1.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.validation import CaseReport, Check, print_report
from flexmb.validation.shell_cases import edge_weights, strip

CASE = "shell-strip-moment"
TITLE = "Cantilever strip rolled into a circle by an end moment, shell triangles (Sze 3.2)"
SOURCE = "Sze, Liu & Lo 2004, problem 3.2; exact elastica"

LENGTH, WIDTH, THICKNESS = 12.0, 1.0, 0.1
E, NU = 1.2e6, 0.0
EI = E * WIDTH * THICKNESS**3 / 12.0
M_MAX = 2.0 * np.pi * EI / LENGTH                    # = 50 pi / 3
N_LONG, N_WIDE, PATTERN = 16, 1, "union-jack"
CHECK_LEVELS = (0.25, 0.5, 0.75)
ARC_TOLERANCE = 5e-3                                 # of L, at the checked levels
CLOSURE_TOLERANCE = 1e-2                             # of L, at M_max


def build() -> tuple[fm.Assembly, np.ndarray]:
    """The loaded strip's assembly and its tip nodes."""
    s = strip(LENGTH, WIDTH, N_LONG, N_WIDE, E, NU, THICKNESS, PATTERN)
    for node, share in zip(s.tip, edge_weights(s.model.coordinates, s.tip)):
        s.model.add_load(int(node), "ry", float(-M_MAX * share))      # dead moment about -y
    return fm.Assembly(s.model), s.tip


def exact_tip(level: float, y: np.ndarray) -> np.ndarray:
    """Exact positions (n, 3) of the tip points at (L, y, 0) at M / M_max = level > 0."""
    t = 2.0 * np.pi * level
    x = LENGTH * np.sin(t) / t
    z = LENGTH * (1.0 - np.cos(t)) / t
    return np.column_stack([np.full(len(y), x), y, np.full(len(y), z)])


def run(quick: bool = False) -> CaseReport:
    asm, tip = build()
    path = fm.load_control(asm, 8 if quick else 40)
    lams = np.array(path.load_factors)
    y_tip = asm.model.coordinates[tip, 1]
    tip_x = np.array([asm.positions(u)[tip] for u in path.u])                  # (n_steps, n_tip, 3)

    report = CaseReport(CASE, n_dof=asm.n_dof, n_steps=len(lams))
    errors = {}
    for level in CHECK_LEVELS:
        k = int(np.argmin(np.abs(lams - level)))
        err = np.linalg.norm(tip_x[k] - exact_tip(level, y_tip), axis=1).max() / LENGTH
        errors[level] = float(err)
        report.add(Check.at_most(f"M/M_max={level}: max |tip - exact arc| / L", err, ARC_TOLERANCE, SOURCE))
    root = asm.model.coordinates[tip] - np.array([LENGTH, 0.0, 0.0])
    closure = np.linalg.norm(tip_x[-1] - root, axis=1).max() / LENGTH
    errors[1.0] = float(closure)
    report.add(Check.at_most("M/M_max=1: max |tip - root| / L", closure, CLOSURE_TOLERANCE,
                             "exact: closed circle"))
    report.info.update({
        "mesh": f"{N_LONG}x{N_WIDE} cells, pattern {PATTERN!r}",
        "tip_errors_over_L": errors,
        "newton_iterations": [log.iterations for log in path.newton_logs],
        "cutbacks": path.cutbacks,
    })
    report.figure = _figure(asm, path, lams)
    return report


def _figure(asm: fm.Assembly, path: fm.StaticPath, lams: np.ndarray):
    from flexmb.viz.plots import panels

    fig, (ax,) = panels(1, f"Strip rolled up by an end moment (Sze 3.2), {N_LONG}x{N_WIDE} cells, Shell3",
                        width=7.0, height=4.2)
    edge = asm.model.coordinates[:, 1] == 0.0                     # the nodes of the edge y = 0
    order = np.argsort(asm.model.coordinates[edge, 0])
    for level in CHECK_LEVELS + (1.0,):
        k = int(np.argmin(np.abs(lams - level)))
        x = asm.positions(path.u[k])[edge][order]
        line, = ax.plot(x[:, 0], x[:, 2], "o-", ms=3, label=f"M/M_max = {level}")
        radius = LENGTH / (2.0 * np.pi * level)
        s = np.linspace(0.0, LENGTH, 200)
        ax.plot(radius * np.sin(s / radius), radius * (1.0 - np.cos(s / radius)), "--", lw=1,
                color=line.get_color())
    ax.set_aspect("equal")
    ax.set_xlim(-3.0, 17.0)                                   # room for the legend
    ax.set_xlabel("x")
    ax.set_ylabel("z")
    ax.legend(fontsize=8, title="edge y = 0: flexmb (dots), exact (dashed)", title_fontsize=8,
              loc="upper right")
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
