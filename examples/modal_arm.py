"""A two-link planar arm whose outer link is a modal (reduced) flexible body
=========================================================================

The shoulder link is rigid (0.5 m, 2 kg), driven from the ground; the forearm is a slender beam
(L = 2 m, EI = 400 N m^2, rho A = 1 kg/m; first cantilever frequency 17.58 rad/s) reduced to three
cantilever modes on a floating frame at its root (:class:`flexmb.cms.ModalBodyData`,
:meth:`flexmb.Model.add_modal_body`), hinged to the shoulder's tip by a driven revolute joint.
Both joints turn rest-to-rest (shoulder +90 deg, elbow -60 deg in 1.2 s); then the arm holds still and
the forearm rings at its first frequency. Mid-point scheme; the modal body's energy-consistent
inertia and geometric stiffening (on by default).

Then the forearm's Campbell diagram: the same modal body on a hub turning at Omega, linearized in
the rotating frame (:func:`flexmb.campbell`, first two in-plane modes, tracked). The in-plane (lag)
frequency of a rotating cantilever rises at low speed as omega^2 = omega_0^2 + (K_1 - 1) Omega^2
(Southwell's K_1 = 1.193). The linear modal body (no stiffening, :func:`flexmb.linearize` at each
speed) softens by Omega^2 instead: its first frequency falls to zero at Omega = omega_0, beyond which
it diverges (a positive real eigenvalue), the failure Kane, Ryan & Banerjee (1987) showed.

Writes, in the output folder: ``modal_arm.png`` (joint angles, tip deflection, energy balance, the
Campbell diagram), ``modal_arm.gif`` (the moving arm, deformation magnified) and
``modal_arm_forearm.vtu`` (the forearm's recovered FE mesh at the end, for ParaView).

    python examples/modal_arm.py [--quick] [--out DIR]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.cms import ModalBody, ModalBodyData

SHOULDER, SHOULDER_MASS = 0.5, 2.0           # m, kg
LENGTH, EI, RHO_A = 2.0, 400.0, 1.0          # forearm: m, N m^2, kg/m
N_FE, N_MODES = 20, 3
MOVE = 1.2                                   # s, rest-to-rest
DT = 0.005                                   # s
T_END = 4.0                                  # s (quick: 1.5 s)


def rest_to_rest(angle: float):
    """Joint angle f(t) (rad): a smooth (cycloidal) move by ``angle`` in MOVE seconds, then hold."""
    def f(t: float) -> float:
        s = min(max(t / MOVE, 0.0), 1.0)
        return angle * (s - np.sin(2.0 * np.pi * s) / (2.0 * np.pi))
    return f


def forearm() -> ModalBodyData:
    """The forearm's FE model (along x from the origin) reduced with its root as the frame."""
    beam = fm.Model(dim=2)
    x = np.linspace(0.0, LENGTH, N_FE + 1)
    nodes = beam.add_nodes(np.c_[x, np.zeros_like(x)])
    beam.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=EI, rho_A=RHO_A, mass="consistent")
    return ModalBodyData.from_model(beam, frame_node=0, n_modes=N_MODES, name="forearm")


def arm(data: ModalBodyData, stiffening: bool = True) -> tuple[fm.Model, ModalBody]:
    """The two-link arm: shoulder along x from the origin, the forearm beyond it."""
    model = fm.Model(dim=2)
    shoulder = model.add_rigid_body([0.5 * SHOULDER, 0.0], SHOULDER_MASS, SHOULDER_MASS * SHOULDER**2 / 12)
    elbow = model.add_node([SHOULDER, 0.0])
    body = model.add_modal_body(data, node=elbow, stiffening=stiffening, name="forearm")
    model.add_joint("revolute", None, shoulder, at=[0.0, 0.0], drive=rest_to_rest(np.pi / 2), name="shoulder")
    model.add_joint("revolute", shoulder, elbow, drive=rest_to_rest(-np.pi / 3), name="elbow")
    return model, body


def on_hub(data: ModalBodyData, stiffening: bool):
    """Model factory for the Campbell diagram: the forearm's frame driven at Omega about the origin."""
    def build(speed: float) -> fm.Model:
        model = fm.Model(dim=2)
        body = model.add_modal_body(data, stiffening=stiffening, name="forearm")
        frame = int(body.connectivity[0, 0])
        model.fix(frame, ["ux", "uy"])
        model.prescribe(frame, "rz", lambda t: speed * t)
        return model
    return build


def main(quick: bool = False, out_dir: str | Path = "example-output") -> dict[str, float]:
    """Run, write the files; returns the energy balance error, the residual tip vibration amplitude
    and the Campbell diagram's first frequency at the top speed with and without stiffening."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = forearm()
    model, body = arm(data)
    asm = fm.Assembly(model)
    history = fm.integrate(asm, DT, 1.5 if quick else T_END)
    t = np.asarray(history.t)
    u = np.asarray(history.u)
    q = u[:, asm.dofs.internal_dofs(body)]
    tip_uy = data.component.assembly.dofs.index(N_FE, "uy")
    deflection = q @ data.basis[tip_uy]                                  # in the forearm's frame, m
    # the drives do work: the balance K + V - W_drives is the check (mid-point: to the Newton tolerance)
    energy_error = float(np.abs(history.energy_error()).max())
    ringing = float(np.ptp(deflection[t > MOVE + 0.1])) / 2.0 if t[-1] > MOVE + 0.1 else float("nan")

    speeds = np.linspace(0.0, 2.0 * data.omega[0], 5 if quick else 13)
    diagram = fm.campbell(on_hub(data, True), speeds, n_modes=2)
    # the linear body: lowest oscillation frequency and largest growth rate per speed, about the
    # undeformed radial state (it has no unique relative equilibrium at Omega = omega_0)
    linear = [fm.linearize(on_hub(data, False)(s), spin=(None, s)).eigen(N_MODES) for s in speeds]
    first = [int(np.argmin(np.abs(m.eigenvalues))) for m in linear]          # the softening mode
    linear_frequency = np.array([m.omega[k] if m.stable[k] else np.nan for m, k in zip(linear, first)])
    linear_growth = np.array([max(m.real_parts.max(), 0.0) for m in linear])

    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    ax = axes[0, 0]
    for name, f in (("shoulder", rest_to_rest(np.pi / 2)), ("elbow", rest_to_rest(-np.pi / 3))):
        ax.plot(t, np.degrees([f(x) for x in t]), label=f"{name} (driven)")
    ax.set(xlabel="time (s)", ylabel="joint angle (deg)", title="rest-to-rest move")
    ax.legend(fontsize=8)
    ax = axes[0, 1]
    ax.plot(t, 1e3 * deflection)
    ax.axvline(MOVE, color="0.5", lw=0.8, ls=":")
    ax.set(xlabel="time (s)", ylabel="tip deflection (mm)", title=f"forearm tip, {N_MODES} modes, stiffened")
    ax = axes[1, 0]
    ax.plot(t, history.kinetic, label="kinetic")
    ax.plot(t, history.strain, label="strain")
    ax.plot(t, history.work, label="work of the drives")
    ax.set(xlabel="time (s)", ylabel="energy (J)", title=f"energy balance error {energy_error:.1e}")
    ax.legend(fontsize=8)
    ax = axes[1, 1]
    tracked = np.asarray(diagram.frequencies_hz) * 2.0 * np.pi
    for k in range(tracked.shape[1]):
        ax.plot(speeds, tracked[:, k], "o-", ms=3, color=f"C{k}", label=f"stiffened, in-plane mode {k + 1}")
    ax.plot(speeds, linear_frequency, "s--", ms=3, mfc="none", color="C3", label="NOT stiffened: mode 1 frequency")
    ax.plot(speeds, linear_growth, "x:", color="C3", label="NOT stiffened: growth rate (1/s)")
    w0 = data.omega[0]
    low = speeds[speeds <= w0]
    ax.plot(low, np.sqrt(w0**2 + 0.1933 * low**2), "k:", lw=1, label="Southwell, low speed")
    ax.set(xlabel="hub speed Omega (rad/s)", ylabel="rad/s", title="Campbell diagram of the forearm on a hub")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "modal_arm.png", dpi=100)
    plt.close(fig)

    _animation(asm, body, history, out / "modal_arm.gif", every=10 if quick else 20)
    _write_forearm(body, asm, u[-1], out / "modal_arm_forearm.vtu")
    print(f"{len(t) - 1} steps: energy balance error {energy_error:.1e}, residual tip amplitude "
          f"{1e3 * ringing:.2f} mm; at Omega = {speeds[-1]:.2f} rad/s the first in-plane mode: stiffened "
          f"{tracked[-1, 0]:.3f} rad/s, not stiffened diverging at {linear_growth[-1]:.3f} 1/s")
    return {"energy_error": energy_error, "ringing_amplitude": ringing, "speeds": speeds,
            "stiffened": tracked[:, 0], "not_stiffened_growth": linear_growth, "omega_0": float(w0)}


def _forearm_points(body: ModalBody, asm: fm.Assembly, u: np.ndarray) -> np.ndarray:
    ed = asm.dofs.element_dofs(body)[0]
    return body.deformed_positions(asm.model.coordinates[body.connectivity[0, 0]], u[ed])


def _animation(asm: fm.Assembly, body: ModalBody, history, path: Path, every: int) -> None:
    """The arm every ``every`` steps (GIF, matplotlib): shoulder and forearm, deformation x 5."""
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation, PillowWriter

    u = np.asarray(history.u)[::every]
    elbow = int(body.connectivity[0, 0])
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.set(xlim=(-2.7, 2.7), ylim=(-1.0, 2.9), aspect="equal", title="modal arm (deformation x 5)")
    shoulder_line, = ax.plot([], [], "o-", color="0.3", lw=4)
    forearm_line, = ax.plot([], [], "-", color="C0", lw=2)
    ed = asm.dofs.element_dofs(body)[0]

    def frame(k: int):
        state = u[k]
        magnified = state[ed].copy()
        magnified[3:] *= 5.0
        x = body.deformed_positions(asm.model.coordinates[elbow], magnified)
        shoulder_line.set_data([0.0, x[0, 0]], [0.0, x[0, 1]])
        forearm_line.set_data(x[:, 0], x[:, 1])
        return shoulder_line, forearm_line

    FuncAnimation(fig, frame, frames=len(u), blit=True).save(path, writer=PillowWriter(fps=15))
    plt.close(fig)


def _write_forearm(body: ModalBody, asm: fm.Assembly, u: np.ndarray, path: Path) -> None:
    """The forearm's deformed FE mesh (lines) at the state u as a VTU file."""
    import meshio

    x = _forearm_points(body, asm, u)
    lines = np.c_[np.arange(len(x) - 1), np.arange(1, len(x))]
    meshio.write(path, meshio.Mesh(np.c_[x, np.zeros(len(x))], [("line", lines)]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (as in the tests)")
    parser.add_argument("--out", default="example-output", help="output folder (default: %(default)s)")
    args = parser.parse_args()
    print(main(args.quick, args.out))
