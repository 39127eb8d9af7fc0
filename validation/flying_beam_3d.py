"""A free-flying 3D beam: spin about two axes, a brief end load, then free flight (Beam3D).

A free-free steel bar (L = 1 m, 40 mm x 10 mm, rho = 7800 kg/m^3, E = 210 GPa, G = 81 GPa),
20 Beam3D elements with consistent translational mass and lumped section rotary inertia, starts
as a rigid body translating at V = (1, 0.5, 0) m/s and spinning at W = (4, 0, 6) rad/s (about
its own axis and about a transverse axis: it twists and tumbles). During the first bending
period T1 a transverse end force F(t) = F0 sin^2(pi t / T1) (F0 = 200 N, along the global z axis)
excites bending; then the beam flies free for 30 T1 (quick: 15 T1), turning by about 4 rad.

After the load, total energy and angular momentum are exact invariants. Crisfield & Shi's
mid-point scheme with the energy-conserving Beam3D force and the Simo-Wong rotary inertia must
keep both constant to 1e-8, relative to the initial kinetic energy and angular momentum, at
time steps of T1/10 and T1/2, where T1 = 2 pi / (4.7300^2 sqrt(EI_weak / (rho A L^4))) is the
first free-free bending period (Euler-Bernoulli). The same errors for trapezoidal Newmark
(body-frame rotations, Simo & Vu-Quoc 1988) at the same steps are reported in the JSON.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.integrators import TimeIntegrationError
from flexmb.validation import CaseReport, Check, print_report

CASE = "flying-beam-3d"
TITLE = "Free-flying 3D beam: spin about two axes, brief end load, energy and momentum"
SOURCE = "exact invariants of free flight (energy, angular momentum)"

LENGTH = 1.0                        # m
WIDTH, THICKNESS = 0.04, 0.01       # m: section y (width) and z (thickness)
RHO, E, G = 7800.0, 2.1e11, 8.1e10  # kg/m^3, Pa, Pa
N_ELEMENTS = 20
V0 = np.array([1.0, 0.5, 0.0])      # m/s
W0 = np.array([4.0, 0.0, 6.0])      # rad/s
F0 = 200.0                          # N

AREA = WIDTH * THICKNESS
I_Y = WIDTH * THICKNESS**3 / 12.0   # about y: bending in z, the weak direction
I_Z = THICKNESS * WIDTH**3 / 12.0
J_T = WIDTH * THICKNESS**3 / 3.0 * (1.0 - 0.63 * THICKNESS / WIDTH)
T1 = 2.0 * np.pi / (4.7300**2 * np.sqrt(E * I_Y / (RHO * AREA * LENGTH**4)))   # s
T_LOAD = T1


def end_force(t: float) -> float:
    """Transverse end force (N): one sin^2 pulse over the first bending period."""
    return F0 * np.sin(np.pi * t / T_LOAD) ** 2 if t < T_LOAD else 0.0


def build() -> tuple[fm.Assembly, np.ndarray, np.ndarray]:
    """Assembly and the rigid-body initial state u0, v0 (n_dof,)."""
    model = fm.Model(dim=3)
    x = np.linspace(0.0, LENGTH, N_ELEMENTS + 1)
    nodes = model.add_nodes(np.c_[x, np.zeros_like(x), np.zeros_like(x)])
    model.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=E * AREA, GJ=G * J_T, EI_y=E * I_Y, EI_z=E * I_Z,
                     rho_A=RHO * AREA, rho_I=RHO * np.array([I_Y + I_Z, I_Y, I_Z]), y_axis=(0.0, 1.0, 0.0),
                     mass="consistent")
    model.add_load(nodes[-1], "uz", end_force)
    asm = fm.Assembly(model)
    u0, v0 = np.zeros(asm.n_dof), np.zeros(asm.n_dof)
    centre = np.array([0.5 * LENGTH, 0.0, 0.0])
    for node in nodes:
        i = asm.dofs.index(node, "ux")
        v0[i:i + 3] = V0 + np.cross(W0, model.coordinates[node] - centre)
        v0[i + 3:i + 6] = W0
    return asm, u0, v0


def invariant_errors(h: fm.TimeHistory) -> tuple[float, float]:
    """Largest |E - E(t_load)| / K(0) and |L - L(t_load)| / |L(0)| after the load has ended."""
    t = np.array(h.t)
    after = t >= T_LOAD - 1e-12 * T1
    E_ = h.total[after]
    L = np.array(h.angular_momentum)[after]
    return (float(np.abs(E_ - E_[0]).max() / h.kinetic[0]),
            float(np.linalg.norm(L - L[0], axis=1).max() / np.linalg.norm(h.angular_momentum[0])))


def run(quick: bool = False) -> CaseReport:
    asm, u0, v0 = build()
    periods = 15 if quick else 30
    report = CaseReport(CASE, n_dof=asm.n_dof)
    runs, info = {}, {"T1_s": T1, "initial_kinetic_energy_J": asm.kinetic_energy(v0, u0)}
    for scheme in ("mid-point", "newmark"):
        for per_period in (10, 2):
            dt = T1 / per_period
            key = f"{scheme} dt=T1/{per_period}"
            try:
                h = fm.integrate(asm, dt, T_LOAD + periods * T1, scheme=scheme, u0=u0, v0=v0)
            except TimeIntegrationError as exc:               # Newmark may fail; the report says so
                info[key] = {"failed": str(exc).splitlines()[0]}
                h = exc.history
            runs[key] = h
            dE, dL = invariant_errors(h)
            info.setdefault(key, {}).update({"energy_error": dE, "angular_momentum_error": dL,
                                             "steps": len(h.t) - 1, "cutbacks": h.cutbacks,
                                             "newton_iterations_mean": float(np.mean(h.newton_iterations[1:]))})
            if scheme == "mid-point":
                report.add(Check.at_most(f"{key}: max |E - E(t_load)| / K0 after the load", dE, 1e-8, SOURCE))
                report.add(Check.at_most(f"{key}: max |L - L(t_load)| / |L0| after the load", dL, 1e-8, SOURCE))
    h = runs["mid-point dt=T1/10"]
    strain_share = float(np.max(np.array(h.strain) / h.total))
    report.add(Check.at_least("mid-point dt=T1/10: largest strain-energy share (the load bends the beam)",
                              strain_share, 1e-4, "the pulse must excite bending"))
    info["largest_strain_energy_share"] = strain_share
    report.n_steps = sum(len(r.t) - 1 for r in runs.values())
    report.info.update(info)
    report.figure = _figure(asm, runs)
    return report


def _figure(asm: fm.Assembly, runs: dict):
    from flexmb.viz.plots import panels

    fig, (ax1, ax2, ax3) = panels(3, f"Free-flying 3D beam, {N_ELEMENTS} Beam3D elements, T1 = {T1:.4f} s")
    for key, h in runs.items():
        t = np.array(h.t)
        after = t >= T_LOAD - 1e-12 * T1
        E_ = h.total
        L = np.array(h.angular_momentum)
        ax1.semilogy(t[after] / T1, np.maximum(np.abs(E_[after] - E_[after][0]) / h.kinetic[0], 1e-17), label=key)
        ax2.semilogy(t[after] / T1, np.maximum(np.linalg.norm(L[after] - L[after][0], axis=1)
                                              / np.linalg.norm(L[0]), 1e-17), label=key)
    h = runs["mid-point dt=T1/10"]
    x = np.array([asm.positions(u) for u in h.u])                    # (n_out, n_nodes, 3)
    centre = x.mean(axis=1)
    rel = x[:, -1] - centre                                          # tip relative to the mean point
    ax3.plot(np.array(h.t) / T1, rel[:, 0], label="x")
    ax3.plot(np.array(h.t) / T1, rel[:, 1], label="y")
    ax3.plot(np.array(h.t) / T1, rel[:, 2], label="z")
    ax3.set_title("tip relative to the nodes' mean (mid-point, T1/10)", fontsize=9)
    ax1.set_ylabel("|E - E(t_load)| / K0")
    ax2.set_ylabel("|L - L(t_load)| / |L0|")
    ax3.set_ylabel("m")
    for ax in (ax1, ax2, ax3):
        ax.set_xlabel("t / T1")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
