"""Planar four-bar with a flexible coupler (the mechanism of ``examples/four_bar_flexible.py``):
converged solution by mesh and step refinement, energy balance, joints, and the rigid-coupler limit.

Mechanism: ground pivots (0, 0) and (0.3, 0) m; rigid crank 0.1 m, 0.2 kg, driven at 2 pi rad/s
from 90 deg; coupler 0.35 m, a steel strip 20 x 5 mm (EA = 21 MN, EI = 43.75 N m^2, rho_A = 0.78
kg/m) of cubic-mass ``Beam2D`` with second-order strains; rigid rocker 0.3 m, 0.5 kg; revolute
joints; gravity -y. Started from its static equilibrium at t = 0 (``fm.equilibrium``: the coupler
sags under its weight) with the rigid-start velocities (``fm.consistent_initial_state(asm,
u0=eq.u)``), mid-point scheme.

No published numbers for a flexible four-bar could be obtained for this session (the planar
flexible four-bars of the literature, e.g. Sutherland's experiment quoted in the NATO ASI 1993
volume, give curves only), so the reference is the converged solution by refinement, and the
checks are the ones that hold exactly:

(1) mesh convergence of the coupler's mid-span deflection (middle node from the chord of its end
nodes) averaged over the run and of its extreme: 4, 8, 16 elements at dt = 0.5 ms; the 8- and
16-element values (after 0.05 s) agree to 2 % of the extreme deflection (cubic elements: the quasi-static sag
of a uniformly loaded beam is exact with two elements up to the axial coupling);
(2) step convergence, 8 elements: dt = 2 and 1 ms against 0.5 ms, the averaged deflection within
2 % of the extreme (the bending vibration about the sag, about 600 rad/s, is resolved: omega dt
<= 1.2);
(3) energy: K + V - work of the drive constant to 1e-8 of the largest kinetic energy (the
mid-point scheme conserves it exactly up to Newton's tolerance); (4) joints: residual below
1e-10 m at every step, and the reactions: the rigid rocker's Newton's law per step, m (v_{n+1} -
v_n) / dt = the step's pin and pivot forces + m g, to 1e-8 of the largest pivot force (measured
5e-12); (5) rigid-coupler limit: the rocker angle stays within 1e-5 rad of the
rigid four-bar's (analytic kinematics; the elastic deformation is about 1e-4 of the coupler's
length) and the coupler's largest axial force after 0.1 s within a factor 2 of the rigid
coupler's.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.validation import CaseReport, Check, print_report

CASE = "four-bar-flexible"
TITLE = "Flexible four-bar: converged by mesh and step refinement; energy, joints and the rigid-coupler limit"
SOURCE = "exact invariants; converged by refinement (no published values obtained, 2026)"


def example():
    """The example module that builds the mechanism (one model for the example and the case)."""
    path = Path(__file__).resolve().parents[1] / "examples" / "four_bar_flexible.py"
    spec = importlib.util.spec_from_file_location("four_bar_flexible_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rocker_angle_rigid(ex, t: np.ndarray) -> np.ndarray:
    """Rocker angle change from the start (rad) of the rigid four-bar at the crank angles 90 deg + omega t."""
    out = []
    O4 = np.array([ex.GROUND, 0.0])
    for tk in t:
        theta2 = np.pi / 2 + ex.OMEGA * tk
        A = ex.CRANK * np.array([np.cos(theta2), np.sin(theta2)])
        d = np.linalg.norm(O4 - A)
        angle = np.arctan2(*(O4 - A)[::-1]) + np.arccos((ex.COUPLER**2 + d**2 - ex.ROCKER**2) / (2 * ex.COUPLER * d))
        B = A + ex.COUPLER * np.array([np.cos(angle), np.sin(angle)])
        out.append(np.arctan2(B[1], B[0] - ex.GROUND))
    out = np.unwrap(np.array(out))
    return out - out[0]


def rocker_balance(ex, asm: fm.Assembly, nodes: np.ndarray, rocker, h: fm.TimeHistory) -> float:
    """Largest violation of the rigid rocker's translational balance over the steps, relative to the
    largest pivot force: m (v_{n+1} - v_n) / dt against the step's joint forces (the mid-point
    scheme's multipliers are the step's average forces; the pin force, given in the frame of the
    coupler's end node, turned to global axes with that node's angle at the step's end) and m g."""
    u, v, t = np.array(h.u), np.array(h.v), np.array(h.t)
    ix = asm.dofs.index(rocker.node, "ux")
    m_a = ex.ROCKER_MASS * (v[1:, ix:ix + 2] - v[:-1, ix:ix + 2]) / np.diff(t)[:, None]
    pin, pivot = h.joint_reaction("rocker pin")[0][1:], h.joint_reaction("rocker pivot")[0][1:]
    turn = u[1:, asm.dofs.index(int(nodes[-1]), "rz")]
    c, s = np.cos(turn), np.sin(turn)
    pin = np.stack([c * pin[:, 0] - s * pin[:, 1], s * pin[:, 0] + c * pin[:, 1]], axis=1)
    gravity = ex.ROCKER_MASS * np.array([0.0, -9.81])
    return float(np.abs(m_a - pin - pivot - gravity).max() / np.abs(pivot).max())


def run_case(ex, n: int, dt: float, t_end: float):
    model, nodes = ex.build(True, n)
    asm = fm.Assembly(model)
    eq = fm.equilibrium(asm, t=0.0)
    u0, v0 = fm.consistent_initial_state(asm, u0=eq.u)
    h = fm.integrate(asm, dt, t_end, u0=u0, v0=v0, progress=False)
    return model, asm, nodes, h


def run(quick: bool = False) -> CaseReport:
    ex = example()
    t_end = 0.25 if quick else 1.0
    report = CaseReport(CASE)
    runs = {}
    for n, dt in ((4, 5e-4), (8, 5e-4), (16, 5e-4), (8, 1e-3), (8, 2e-3)):
        runs[n, dt] = run_case(ex, n, dt, t_end)
    stats = {}
    for key, (_, asm, nodes, h) in runs.items():
        d = ex.mid_span_deflection(asm, nodes, h)[np.array(h.t) > 0.05]        # after the start's sag
        stats[key] = (float(np.mean(d)), float(np.abs(d).max()))
    extreme = stats[16, 5e-4][1]
    report.add(Check.at_most("mesh: |mean deflection 8 el. - 16 el.| / extreme", abs(stats[8, 5e-4][0] - stats[16, 5e-4][0])
                             / extreme, 0.02, "converged by refinement"))
    report.add(Check.at_most("mesh: |extreme 8 el. - 16 el.| / extreme", abs(stats[8, 5e-4][1] - extreme) / extreme,
                             0.02, "converged by refinement"))
    for dt in (2e-3, 1e-3):
        report.add(Check.at_most(f"step: |mean deflection dt {1e3 * dt:g} ms - 0.5 ms| / extreme (8 el.)",
                                 abs(stats[8, dt][0] - stats[8, 5e-4][0]) / extreme, 0.02, "converged by refinement"))
    model, asm, nodes, h = runs[8, 5e-4]
    report.n_dof, report.n_steps = asm.n_dof, len(h.t) - 1
    energy = float(h.energy_error().max())
    report.add(Check.at_most("energy: max |K + V - W - E0| / max K", energy, 1e-8, "exact: mid-point scheme"))
    residual = float(np.max(np.array(h.constraint_residual)))
    report.add(Check.at_most("joints: largest residual over the run (m)", residual, 1e-10, "exact"))
    rocker = next(b for b in model.bodies if b.name == "rocker")
    t = np.array(h.t)
    report.add(Check.at_most("rocker Newton-Euler: max |m a - F_pin - F_pivot - m g| / max |F_pivot|",
                             rocker_balance(ex, asm, nodes, rocker, h), 1e-8, "exact: Newton's law per step"))
    angle = np.array(h.u)[:, asm.dofs.index(rocker.node, "rz")]
    report.add(Check.at_most("rocker angle - rigid four-bar's (rad)", float(np.abs(angle - rocker_angle_rigid(ex, t)).max()),
                             1e-5, "rigid-coupler limit (analytic kinematics)"))
    rasm, crank, coupler, hr = ex.run_rigid(t_end, 5e-4)
    rigid = float(np.abs(ex.rigid_axial_force(rasm, crank, coupler, hr)[np.array(hr.t) > 0.1]).max())
    flexible = float(np.abs(np.array(h.element("coupler", "N"))[t > 0.1]).max())
    report.add(Check.at_most("largest axial force after 0.1 s / rigid coupler's", flexible / rigid, 2.0,
                             "rigid-coupler limit"))
    report.figure = _figure(ex, runs, hr, rasm, crank, coupler)
    report.note = (f"mean / extreme mid-span deflection (um): " + ", ".join(
        f"{n} el. dt {1e3 * dt:g} ms: {1e6 * m:.3f} / {1e6 * e:.3f}" for (n, dt), (m, e) in stats.items())
        + f"; axial force flexible {flexible:.3f} N, rigid {rigid:.3f} N")
    return report


def _figure(ex, runs: dict, hr, rasm, crank, coupler):
    from flexmb.viz.plots import panels

    fig, (ax1, ax2) = panels(2, "Flexible four-bar (coupler: steel strip 0.35 m, 20 x 5 mm), crank at 2 pi rad/s, "
                                "started from equilibrium")
    for (n, dt), (_, asm, nodes, h) in runs.items():
        ax1.plot(h.t, 1e6 * ex.mid_span_deflection(asm, nodes, h), lw=1, label=f"{n} el., dt = {1e3 * dt:g} ms")
    ax1.set_ylabel("coupler mid-span deflection (um)")
    _, asm, nodes, h = runs[8, 5e-4]
    ax2.plot(h.t, np.array(h.element("coupler", "N"))[:, 4], lw=1, label="flexible (8 el., middle element)")
    ax2.plot(hr.t, ex.rigid_axial_force(rasm, crank, coupler, hr), "k--", lw=1, label="rigid coupler (crank pin)")
    ax2.set_ylabel("coupler axial force (N)")
    for ax in (ax1, ax2):
        ax.set_xlabel("t (s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run("--quick" in sys.argv))


if __name__ == "__main__":
    main()
