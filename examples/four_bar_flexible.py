"""A planar four-bar with a flexible coupler
=========================================

Run with flexmb's default settings, against the same mechanism with a rigid coupler.

Ground pivots O2 = (0, 0) and O4 = (0.3, 0) m; rigid crank O2-A (0.1 m, 0.2 kg) driven at 2 pi
rad/s from 90 deg; coupler A-B (0.35 m) a steel strip 20 x 5 mm (E = 210 GPa, rho = 7800 kg/m^3)
of 8 cubic-mass ``Beam2D`` with second-order strains; rigid rocker O4-B (0.3 m, 0.5 kg); revolute
joints; gravity 9.81 m/s^2 along -y. The run is what a new user writes:
``fm.consistent_initial_state(asm)`` (the rigid start: the coupler starts moving as if rigid) and
``fm.integrate(asm, dt=1e-3, t_end=2.0)``.

Plotted (``four_bar_flexible.png``): the coupler's mid-span deflection (its middle node's distance
from the chord of its end nodes) and its axial force (middle element), with the rigid coupler's
axial force (the component along A-B of the force of the crank pin on the coupler, from
``history.joint_reaction``).

    python examples/four_bar_flexible.py [--quick] [--out DIR]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import flexmb as fm

CRANK, COUPLER, ROCKER, GROUND = 0.10, 0.35, 0.30, 0.30      # m
CRANK_MASS, ROCKER_MASS = 0.2, 0.5                           # kg
OMEGA = 2.0 * np.pi                                          # rad/s
E, WIDTH, THICKNESS, RHO = 210e9, 0.020, 0.005, 7800.0       # Pa, m, m, kg/m^3
N_ELEMENTS = 8
DT, T_END = 1e-3, 2.0                                        # s (quick: 0.5 s)


def pin_positions() -> tuple[np.ndarray, np.ndarray]:
    """The crank pin A (crank at 90 deg) and the rocker pin B (above the line A-O4), m."""
    A, O4 = np.array([0.0, CRANK]), np.array([GROUND, 0.0])
    d = np.linalg.norm(O4 - A)
    angle = np.arctan2(*(O4 - A)[::-1]) + np.arccos((COUPLER**2 + d**2 - ROCKER**2) / (2.0 * COUPLER * d))
    return A, A + COUPLER * np.array([np.cos(angle), np.sin(angle)])


def build(flexible: bool = True, n_elements: int = N_ELEMENTS) -> tuple[fm.Model, np.ndarray | fm.RigidBody]:
    """The mechanism; returns the model and the coupler's nodes (flexible) or its body (rigid)."""
    A, B = pin_positions()
    O4 = np.array([GROUND, 0.0])
    m = fm.Model(dim=2)
    crank = m.add_rigid_body(A / 2, CRANK_MASS, CRANK_MASS * CRANK**2 / 12, name="crank")
    rocker = m.add_rigid_body((B + O4) / 2, ROCKER_MASS, ROCKER_MASS * ROCKER**2 / 12, name="rocker")
    rho_A, EA, EI = RHO * WIDTH * THICKNESS, E * WIDTH * THICKNESS, E * WIDTH * THICKNESS**3 / 12
    if flexible:
        coupler = m.add_nodes(A + np.linspace(0.0, 1.0, n_elements + 1)[:, None] * (B - A))
        m.add_beam2d(np.c_[coupler[:-1], coupler[1:]], EA=EA, EI=EI, rho_A=rho_A, rho_I=rho_A * THICKNESS**2 / 12,
                     mass="cubic", second_order=True, name="coupler")
        a_side, b_side = int(coupler[0]), int(coupler[-1])
    else:
        mass = rho_A * COUPLER
        coupler = m.add_rigid_body((A + B) / 2, mass, mass * COUPLER**2 / 12, name="coupler")
        a_side = b_side = coupler
    m.add_joint("revolute", None, crank, at=[0.0, 0.0], drive=lambda t: OMEGA * t, name="crank pivot")
    m.add_joint("revolute", crank, a_side, at=A, name="crank pin")
    m.add_joint("revolute", b_side, rocker, at=B, name="rocker pin")
    m.add_joint("revolute", None, rocker, at=O4, name="rocker pivot")
    m.set_gravity([0.0, -9.81])
    return m, coupler


def mid_span_deflection(asm: fm.Assembly, nodes: np.ndarray, h: fm.TimeHistory) -> np.ndarray:
    """Distance (m, signed, left of A->B positive) of the coupler's middle node from its chord (n_out,)."""
    x = np.array([asm.positions(u)[nodes] for u in h.u])                  # (n_out, n_nodes, 2)
    chord = x[:, -1] - x[:, 0]
    rel = x[:, len(nodes) // 2] - x[:, 0]
    return (chord[:, 0] * rel[:, 1] - chord[:, 1] * rel[:, 0]) / np.linalg.norm(chord, axis=1)


def rigid_axial_force(asm: fm.Assembly, crank: fm.RigidBody, coupler: fm.RigidBody, h: fm.TimeHistory) -> np.ndarray:
    """Tension (N) of the rigid coupler: the crank pin's force on it along A->B (n_out,). The
    reaction is given in the crank's frame; the coupler's axis turns with the coupler."""
    force = h.joint_reaction("crank pin")[0]                              # (n_out, 2), crank frame
    u = np.array(h.u)
    crank_turn = u[:, asm.dofs.index(crank.node, "rz")]
    c, s = np.cos(crank_turn), np.sin(crank_turn)
    global_force = np.stack([c * force[:, 0] - s * force[:, 1], s * force[:, 0] + c * force[:, 1]], axis=1)
    A, B = pin_positions()
    axis0 = (B - A) / COUPLER
    turn = u[:, asm.dofs.index(coupler.node, "rz")]
    axis = np.stack([np.cos(turn) * axis0[0] - np.sin(turn) * axis0[1],
                     np.sin(turn) * axis0[0] + np.cos(turn) * axis0[1]], axis=1)
    return -np.einsum("ni,ni->n", global_force, axis)                     # pulling A-wards is tension


def run_flexible(t_end: float, dt: float = DT, n_elements: int = N_ELEMENTS):
    model, nodes = build(True, n_elements)
    asm = fm.Assembly(model)
    u0, v0 = fm.consistent_initial_state(asm)
    h = fm.integrate(asm, dt, t_end, u0=u0, v0=v0, progress=False)
    return asm, nodes, h


def run_rigid(t_end: float, dt: float = DT):
    model, coupler = build(False)
    asm = fm.Assembly(model)
    u0, v0 = fm.consistent_initial_state(asm)
    h = fm.integrate(asm, dt, t_end, u0=u0, v0=v0, progress=False)
    crank = next(b for b in model.bodies if b.name == "crank")
    return asm, crank, coupler, h


def main(quick: bool = False, out_dir: str | Path = "example-output") -> dict[str, float]:
    """Run both mechanisms, plot, and return the largest axial forces after 0.1 s (N), the largest
    mid-span deflection (m) and the flexible run's energy balance error."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t_end = 0.5 if quick else T_END
    asm, nodes, h = run_flexible(t_end)
    rasm, crank, coupler, hr = run_rigid(t_end)
    t = np.array(h.t)
    deflection = mid_span_deflection(asm, nodes, h)
    axial = np.array(h.element("coupler", "N"))[:, N_ELEMENTS // 2]
    rigid_axial = rigid_axial_force(rasm, crank, coupler, hr)
    late = t > 0.1
    result = {"max_axial_flexible": float(np.abs(np.array(h.element("coupler", "N"))[late]).max()),
              "max_axial_rigid": float(np.abs(rigid_axial[late]).max()),
              "max_deflection": float(np.abs(deflection).max()),
              "energy_error": float(h.energy_error().max())}
    print(f"largest coupler axial force after 0.1 s: flexible {result['max_axial_flexible']:.2f} N, rigid "
          f"{result['max_axial_rigid']:.2f} N; mid-span deflection up to {1e6 * result['max_deflection']:.1f} um")
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    ax1.plot(t, 1e6 * deflection, lw=1)
    ax1.set_ylabel("mid-span deflection (um)")
    ax1.set_title("four-bar, flexible coupler (8 Beam2D), default start and dt = 1 ms", fontsize=10)
    ax2.plot(t, axial, lw=1, label="flexible coupler (middle element)")
    ax2.plot(np.array(hr.t), rigid_axial, "k--", lw=1, label="rigid coupler")
    ax2.set_ylabel("axial force (N)")
    ax2.set_xlabel("t (s)")
    ax2.legend(fontsize=8)
    for ax in (ax1, ax2):
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "four_bar_flexible.png", dpi=110)
    plt.close(fig)
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (as in the tests)")
    parser.add_argument("--out", default="example-output", help="output folder (default: %(default)s)")
    args = parser.parse_args()
    print(main(args.quick, args.out))
