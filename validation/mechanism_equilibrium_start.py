"""Mechanisms started from their static equilibrium (``fm.equilibrium``): at rest they stay at
rest to round-off, and a driven one starts without a transient beyond the drive's.

(a) A chain hanging from a ground pivot: two flexible links (steel strips 0.5 m, 20 x 5 mm, 4
``Beam2D`` each) and a rigid tip body (1 kg) on revolute joints, gravity -y, a horizontal force of
2 N on the tip body's lower end (``Model.add_body_load``). Started from ``fm.equilibrium(asm)``
(u0 = its displacements, v0 = 0), the mid-point scheme runs 1 s at dt = 1 ms: the largest speed
stays at the level the equilibrium's Newton tolerance leaves (below 1e-8 of the speeds of the same
chain started hanging straight, which swings at about 3 m/s), and so does the drift of the
displacements from the equilibrium (below 1e-8 of the released chain's largest displacement). The equilibrium of the same chain with rigid links (the hand-derived
tan(theta_k) = 2 P / (W_k + W_{k+1}), W_k the weight below joint k: a link's end forces are
(-P, W_k) and (P, -W_{k+1}), their moments about its centre vanish) is checked to 1e-10 rad.

(b) A slider-crank standing in a vertical plane: rigid crank (0.1 m, 1 kg) driven by
phi(t) = phi_0 + (1 - cos(pi t / T)) / 2 rad (T = 1 s: the drive starts from rest), a flexible rod
(0.3 m, 4 consistent-mass ``Beam2D``, EI = 50 N m^2: first bending frequency about 300 rad/s),
slider 0.5 kg on a horizontal prismatic joint, gravity -y. Transient measure: the rod's mid-span
deflection relative to its chord against its quasi-static value (``fm.equilibrium`` at the same
time with the drive there, started from the run's state), over the run, relative to the static
sag. Started from the equilibrium at t = 0 the difference is the slow drive's inertia only
(below 5 % of the sag); started undeformed, the rod vibrates with an amplitude of the sag itself
(above 50 %).
Source: exact statics (hand-derived equilibrium), energy conservation of the mid-point scheme.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.validation import CaseReport, Check, print_report

CASE = "mechanism-equilibrium-start"
TITLE = "Mechanisms started from static equilibrium: at rest to round-off, no start transient"
SOURCE = "exact: hand-derived statics; the mid-point scheme's discrete energy conservation"

G = 9.81                                                  # m/s^2
STRIP = dict(E=210e9, b=0.02, h=0.005, rho=7800.0)        # steel strip, SI
PUSH = 2.0                                                # N, horizontal on the tip body
SRC = "exact statics (hand-derived)"


def strip_beam(m: fm.Model, nodes: np.ndarray, name: str) -> None:
    E, b, h, rho = STRIP["E"], STRIP["b"], STRIP["h"], STRIP["rho"]
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=E * b * h, EI=E * b * h**3 / 12, rho_A=rho * b * h,
                 rho_I=rho * b * h**3 / 12, mass="consistent", name=name)


def hanging_chain(flexible: bool) -> tuple[fm.Assembly, list]:
    """Two links of 0.5 m (flexible strips or rigid bars of the same mass) and a 1 kg tip body."""
    m = fm.Model(dim=2)
    mass = STRIP["rho"] * STRIP["b"] * STRIP["h"] * 0.5
    parts = []
    for k in range(2):
        top, bottom = np.array([0.0, -0.5 * k]), np.array([0.0, -0.5 * (k + 1)])
        if flexible:
            nodes = m.add_nodes(top + np.linspace(0.0, 1.0, 5)[:, None] * (bottom - top))
            strip_beam(m, nodes, f"link {k}")
            parts.append((int(nodes[0]), int(nodes[-1])))
        else:
            body = m.add_rigid_body((top + bottom) / 2, mass, mass * 0.25 / 12, name=f"link {k}")
            parts.append((body, body))
    tip = m.add_rigid_body([0.0, -1.1], 1.0, 1.0 * 0.2**2 / 12, name="tip")
    m.add_joint("revolute", None, parts[0][0], at=[0.0, 0.0], name="pivot")
    m.add_joint("revolute", parts[0][1], parts[1][0], at=[0.0, -0.5], name="knee")
    m.add_joint("revolute", parts[1][1], tip, at=[0.0, -1.0], name="ankle")
    m.add_body_load(tip, force=[PUSH, 0.0], at=[0.0, -1.2])
    m.set_gravity([0.0, -G])
    return fm.Assembly(m), [p[0] for p in parts] + [tip]


def slider_crank(period: float = 1.0) -> tuple[fm.Assembly, np.ndarray]:
    r, l, phi0 = 0.1, 0.3, np.pi / 3
    A = r * np.array([np.cos(phi0), np.sin(phi0)])
    B = np.array([A[0] + np.sqrt(l**2 - A[1] ** 2), 0.0])
    m = fm.Model(dim=2)
    crank = m.add_rigid_body(A / 2, 1.0, 1.0 * r**2 / 12, name="crank")
    slider = m.add_rigid_body(B, 0.5, 1e-3, name="slider")
    nodes = m.add_nodes(A + np.linspace(0.0, 1.0, 5)[:, None] * (B - A))
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e7, EI=50.0, rho_A=2.0 / l, mass="consistent", name="rod")
    m.add_joint("revolute", None, crank, at=[0.0, 0.0], name="motor",
                drive=lambda t: 0.5 * (1.0 - np.cos(np.pi * t / period)))
    m.add_joint("revolute", crank, int(nodes[0]), at=A, name="crank pin")
    m.add_joint("revolute", int(nodes[-1]), slider, at=B, name="wrist pin")
    m.add_joint("prismatic", None, slider, x_axis=[1.0, 0.0], name="slide")
    m.set_gravity([0.0, -G])
    return fm.Assembly(m), nodes


def mid_deflection(asm: fm.Assembly, nodes: np.ndarray, u: np.ndarray) -> float:
    """Distance (m, signed) of the rod's middle node from the chord of its end nodes."""
    x = asm.positions(u)[nodes]
    chord = x[-1] - x[0]
    rel = x[len(nodes) // 2] - x[0]
    return float((chord[0] * rel[1] - chord[1] * rel[0]) / np.linalg.norm(chord))


def run(quick: bool = False) -> CaseReport:
    report = CaseReport(CASE)
    # (a) hand-derived rigid chain
    asm, bodies = hanging_chain(flexible=False)
    eq = fm.equilibrium(asm)
    mass = STRIP["rho"] * STRIP["b"] * STRIP["h"] * 0.5
    weights = [G * (2 * mass + 1.0), G * (mass + 1.0), G * 1.0, 0.0]
    # the tip body's force acts 0.1 m below its centre: its moment balance about the ankle gives its angle
    for k in range(2):
        theta = eq.u[asm.dofs.index(bodies[k].node, "rz")]
        report.add(Check.at_most(f"rigid chain: |theta_{k} - atan(2P / (W_{k} + W_{k + 1}))| (rad)",
                                 abs(theta - np.arctan(2 * PUSH / (weights[k] + weights[k + 1]))), 1e-10, SRC))
    # (a) the flexible chain at rest
    asm, _ = hanging_chain(flexible=True)
    eq = fm.equilibrium(asm)
    t_end = 0.3 if quick else 1.0
    rest = fm.integrate(asm, 1e-3, t_end, u0=eq.u, progress=False)
    report.n_steps = len(rest.t) - 1
    released = fm.integrate(asm, 1e-3, t_end, progress=False)
    still = float(np.abs(np.array(rest.v)).max())
    swing = float(np.abs(np.array(released.v)).max())
    drift = float(np.abs(np.array(rest.u) - eq.u).max())
    travel = float(np.abs(np.array(released.u)).max())
    # at rest to the Newton tolerance of the equilibrium (|r| <= 1e-10 F): relative to the swing's speed
    report.add(Check.at_most("flexible chain from equilibrium: max speed / max speed released", still / swing, 1e-8,
                             "exact: a state of equilibrium does not move"))
    report.add(Check.at_most("flexible chain from equilibrium: max |u - u_eq| / max |u| released", drift / travel,
                             1e-8, "exact: a state of equilibrium does not move"))
    report.add(Check.at_least("flexible chain hanging straight: max speed (m/s, rad/s), for contrast", swing, 1e-2,
                              "exact: out of equilibrium it swings"))
    report.n_dof = asm.n_dof
    # (b) the driven slider-crank: transient against the quasi-static deflection
    asm, nodes = slider_crank()
    eq = fm.equilibrium(asm)
    sag = abs(mid_deflection(asm, nodes, eq.u))
    t_end = 0.3 if quick else 0.6
    transients, curves = {}, {}
    for label, u0 in (("equilibrium", eq.u), ("undeformed", None)):
        u_start, v_start = fm.consistent_initial_state(asm, u0=u0)
        h = fm.integrate(asm, 1e-3, t_end, u0=u_start, v0=v_start, progress=False)
        report.n_steps += len(h.t) - 1
        worst, samples = 0.0, []
        for k in range(10, len(h.t), 25):
            quasi = fm.equilibrium(asm, t=float(h.t[k]), u0=h.u[k])
            samples.append((float(h.t[k]), mid_deflection(asm, nodes, quasi.u)))
            worst = max(worst, abs(mid_deflection(asm, nodes, h.u[k]) - samples[-1][1]))
        transients[label] = worst / sag
        curves[label] = (np.array(h.t), np.array([mid_deflection(asm, nodes, u) for u in h.u]), np.array(samples))
    report.add(Check.at_most("driven slider-crank from equilibrium: max |deflection - quasi-static| / sag",
                             transients["equilibrium"], 0.05, "exact statics; slow drive (T = 1 s)"))
    report.add(Check.at_least("driven slider-crank started undeformed: the same, for contrast",
                              transients["undeformed"], 0.5, "exact statics"))
    report.figure = _figure(curves, rest, released)
    report.note = (f"rod sag {sag:.3e} m; transient/sag {transients['equilibrium']:.2e} from equilibrium, "
                   f"{transients['undeformed']:.2f} undeformed; chain max speed {still:.1e} from equilibrium, "
                   f"{swing:.2f} released; drift {drift:.1e} m or rad from equilibrium, travel {travel:.2f} released")
    return report


def _figure(curves: dict, rest, released):
    from flexmb.viz.plots import panels

    fig, (ax1, ax2) = panels(2, "Mechanisms started from static equilibrium")
    for label, (t, d, samples) in curves.items():
        ax1.plot(t, 1e6 * d, lw=1, label=f"started {label}")
    ax1.plot(samples[:, 0], 1e6 * samples[:, 1], "ko", ms=3.5, label="quasi-static (fm.equilibrium at t)")
    ax1.set_ylabel("slider-crank rod mid-span deflection (um)")
    for label, h in (("from equilibrium", rest), ("hanging straight", released)):
        speed = np.abs(np.array(h.v)).max(axis=1)
        ax2.semilogy(h.t, np.maximum(speed, 1e-18), lw=1, label=f"chain {label}")
    ax2.set_ylabel("largest speed (m/s, rad/s)")
    for ax in (ax1, ax2):
        ax.set_xlabel("t (s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
