"""A free-flying L-shaped plate (Shell3): spin about two axes, a brief corner load, then free flight.

An L-shaped steel plate (the square [0, 1 m]^2 without its quadrant x, y > 0.5 m; h = 0.01 m,
E = 210 GPa, nu = 0.3, rho = 7800 kg/m^3), meshed from ``shell_mesh.rectangle`` (8x8 cells, two
triangles each; the 32 triangles of the missing quadrant dropped), lumped mass with the nodal
rotary inertia, no supports. It starts as a rigid body translating at V = (1, 0.5, 0) m/s and
spinning at W = (4, 0, 6) rad/s (about an in-plane axis and about the normal: the plate tumbles,
and its unequal principal inertias make the spin axis wander). During the first free-free
elastic period T1 a transverse force F(t) = F0 sin^2(pi t / T1) along the global z axis
(F0 = 2 kN) acts at the corner (1, 0) and excites bending; then the plate flies free for 30 T1
(quick: 10 T1).

T1 = 2 pi / omega_7 is the period of the lowest elastic mode of the free plate from
:func:`flexmb.natural_modes` (modes 1-6 are its rigid-body motions, omega = 0, checked).

After the load, total energy and angular momentum are exact invariants (Simo & Tarnow 1994 for
shells; Crisfield & Shi 1993 for the co-rotational mid-point scheme): the mid-point scheme with the
energy-conserving Shell3 force must keep both constant to 1e-8, relative to the initial kinetic
energy and angular momentum, at time steps of T1/10 and T1/2. The same errors of trapezoidal
Newmark (body-frame rotations, Simo & Vu-Quoc 1988) at the same steps are reported in the JSON
(and, if a step fails, the time at which it did).

Measured (2026-11-23): T1 = 26.13 ms; mid-point energy and angular momentum errors below 1e-12
at T1/10 and 1e-14 at T1/2; the pulse's largest strain-energy share 7 % (checked >= 1e-4: the
load must bend the plate). Newmark at T1/10 runs through with errors of 1.7e-4 (energy) and
1.2e-4 (momentum); at T1/2 its errors grow steadily, to 0.9 (energy) and 0.5 (momentum) at the
end (with the Newton driver of earlier the same day it stopped at 1.5 T1 with a branch change:
its half steps and full step disagreed).
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.integrators import TimeIntegrationError
from flexmb.io.shell_mesh import rectangle
from flexmb.validation import CaseReport, Check, print_report

CASE = "shell-flying-plate"
TITLE = "Free-flying L-shaped plate (Shell3): spin about two axes, brief corner load, energy and momentum"
SOURCE = "exact invariants of free flight (energy, angular momentum); Simo & Tarnow 1994"

SIDE = 1.0                          # m: the L is the square [0, SIDE]^2 without its upper right quadrant
THICKNESS = 0.01                    # m
E, NU, RHO = 2.1e11, 0.3, 7800.0    # Pa, -, kg/m^3
CELLS = 8                           # cells per side of the square
V0 = np.array([1.0, 0.5, 0.0])      # m/s
W0 = np.array([4.0, 0.0, 6.0])      # rad/s
F0 = 2000.0                         # N
LOADED_CORNER = (SIDE, 0.0)         # m
INVARIANT_BOUND = 1e-8


def l_plate() -> tuple[np.ndarray, np.ndarray]:
    """Node coordinates (n_nodes, 3) and triangles (n_el, 3) of the L: the square's mesh without the
    triangles of the quadrant x, y > SIDE/2 and without the nodes only those used."""
    xyz, triangles = rectangle(SIDE, SIDE, CELLS, CELLS, pattern="right")
    centroid = xyz[triangles].mean(axis=1)                                     # (n_el, 3)
    kept = triangles[~((centroid[:, 0] > 0.5 * SIDE) & (centroid[:, 1] > 0.5 * SIDE))]
    used = np.unique(kept)
    renumber = np.full(xyz.shape[0], -1, dtype=np.int64)
    renumber[used] = np.arange(used.size)
    return xyz[used], renumber[kept]


def build(pulse_period: float | None = None) -> tuple[fm.Assembly, np.ndarray, np.ndarray]:
    """Assembly and the rigid-body initial state u0, v0 (n_dof,). With ``pulse_period`` the corner
    force acts over that time (see :func:`corner_force`); without it the plate is unloaded."""
    xyz, triangles = l_plate()
    model = fm.Model(dim=3)
    nodes = model.add_nodes(xyz)
    model.add_shell(nodes[triangles], E=E, nu=NU, thickness=THICKNESS, rho=RHO, mass="lumped", name="plate")
    if pulse_period is not None:
        corner = int(nodes[np.argmin(np.linalg.norm(xyz[:, :2] - LOADED_CORNER, axis=1))])
        model.add_load(corner, "uz", lambda t: corner_force(t, pulse_period))
    asm = fm.Assembly(model)
    u0, v0 = np.zeros(asm.n_dof), np.zeros(asm.n_dof)
    centre = xyz.mean(axis=0)
    for node in nodes:
        i = asm.dofs.index(node, "ux")
        v0[i:i + 3] = V0 + np.cross(W0, xyz[node] - centre)
        v0[i + 3:i + 6] = W0
    return asm, u0, v0


def corner_force(t: float, period: float) -> float:
    """Transverse corner force (N): one sin^2 pulse over the first elastic period."""
    return F0 * np.sin(np.pi * t / period) ** 2 if t < period else 0.0


def first_elastic_period() -> tuple[float, int, float]:
    """T1 (s) of the free plate, its number of zero-frequency modes, and max |omega| of those / omega_1."""
    asm, _, _ = build()
    modes = fm.natural_modes(asm, 8)
    omega_1 = modes.omega[modes.n_rigid]
    return 2.0 * np.pi / omega_1, modes.n_rigid, float(np.abs(modes.omega[:modes.n_rigid]).max() / omega_1)


def invariant_errors(h: fm.TimeHistory, t_load: float) -> tuple[float, float]:
    """Largest |E - E(t_load)| / K(0) and |L - L(t_load)| / |L(0)| after the load has ended."""
    t = np.array(h.t)
    after = t >= t_load * (1.0 - 1e-12)
    if np.count_nonzero(after) < 2:
        return float("nan"), float("nan")
    E_ = h.total[after]
    L = np.array(h.angular_momentum)[after]
    return (float(np.abs(E_ - E_[0]).max() / h.kinetic[0]),
            float(np.linalg.norm(L - L[0], axis=1).max() / np.linalg.norm(h.angular_momentum[0])))


def run(quick: bool = False) -> CaseReport:
    T1, n_rigid, rigid_omega = first_elastic_period()
    asm, u0, v0 = build(T1)
    periods = 10 if quick else 30
    report = CaseReport(CASE, n_dof=asm.n_dof)
    report.add(Check.close("free plate: number of zero-frequency modes", n_rigid, 6, 0.0,
                           "rigid-body motions of a free body (exact)"))
    report.add(Check.at_most("free plate: max |omega| of the zero modes / omega_1", rigid_omega, 1e-6,
                             "exact: rigid-body motions"))
    runs, info = {}, {"T1_s": T1, "initial_kinetic_energy_J": asm.kinetic_energy(v0, u0),
                      "elements": int(asm.groups[0].n_elements), "simulated_periods_after_load": periods}
    for scheme in ("mid-point", "newmark"):
        for per_period in (10, 2):
            dt = T1 / per_period
            key = f"{scheme} dt=T1/{per_period}"
            try:
                h = fm.integrate(asm, dt, T1 + periods * T1, scheme=scheme, u0=u0, v0=v0, progress=False)
            except TimeIntegrationError as exc:               # Newmark may fail; the report says so
                h = exc.history
                info[key] = {"failed": str(exc).splitlines()[0], "failed_at_t_over_T1": float(h.t[-1] / T1)}
            runs[key] = h
            dE, dL = invariant_errors(h, T1)
            info.setdefault(key, {}).update({"energy_error": dE, "angular_momentum_error": dL,
                                             "steps": len(h.t) - 1, "cutbacks": h.cutbacks,
                                             "newton_iterations_mean": float(np.mean(h.newton_iterations[1:]))})
            if scheme == "mid-point":
                report.add(Check.at_most(f"{key}: max |E - E(t_load)| / K0 after the load", dE, INVARIANT_BOUND,
                                         SOURCE))
                report.add(Check.at_most(f"{key}: max |L - L(t_load)| / |L0| after the load", dL, INVARIANT_BOUND,
                                         SOURCE))
    h = runs["mid-point dt=T1/10"]
    strain_share = float(np.max(np.array(h.strain) / h.total))
    report.add(Check.at_least("mid-point dt=T1/10: largest strain-energy share (the load bends the plate)",
                              strain_share, 1e-4, "the pulse must excite bending"))
    info["largest_strain_energy_share"] = strain_share
    report.n_steps = sum(len(r.t) - 1 for r in runs.values())
    report.info.update(info)
    report.figure = _figure(runs, T1)
    return report


def _figure(runs: dict, T1: float):
    from flexmb.viz.plots import panels

    fig, (ax1, ax2, ax3) = panels(3, f"Free-flying L-shaped plate, Shell3, T1 = {1e3 * T1:.2f} ms "
                                     "(corner load during the first T1)")
    for key, h in runs.items():
        t = np.array(h.t)
        E_ = h.total
        L = np.array(h.angular_momentum)
        style = "-" if key.startswith("mid-point") else "--"
        ax1.semilogy(t / T1, np.maximum(np.abs(E_ - E_[0]) / h.kinetic[0], 1e-17), style, label=key)
        after = t >= T1 * (1.0 - 1e-12)
        ax2.semilogy(t[after] / T1, np.maximum(np.linalg.norm(L[after] - L[after][0], axis=1)
                                              / np.linalg.norm(L[0]), 1e-17), style, label=key)
    h = runs["mid-point dt=T1/10"]
    ax3.plot(np.array(h.t) / T1, np.array(h.strain) / h.kinetic[0])
    ax3.set_title("strain energy / K0 (mid-point, T1/10)", fontsize=9)
    ax1.set_ylabel("|E - E(0)| / K0,  E = K + U - W")
    ax2.set_ylabel("|L - L(T1)| / |L0| after the load")
    for ax in (ax1, ax2, ax3):
        ax.axvline(1.0, color="0.6", lw=0.8)
        ax.set_xlabel("t / T1")
        ax.grid(True, which="both", alpha=0.3)
    ax1.legend(fontsize=7)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
