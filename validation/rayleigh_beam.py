"""Cantilever with Rayleigh damping in free vibration: modal decay against zeta_k = alpha / (2 omega_k)
+ beta omega_k / 2.

A clamped planar beam (L = 1 m, EI = 1 N m^2, EA = 1e4 N, rho A = 1 kg/m, rho I = 1e-6 kg m, 20
``Beam2D`` elements, consistent translational mass) with Rayleigh damping alpha M + beta K
(``Model.set_rayleigh_damping``; beta acting on the elements' strain rates, see
``flexmb.elements.rayleigh``). With the undamped FE modes (omega_k, phi_k, phi^T M phi = 1) the
damping matrix alpha M + beta K_0 is diagonal in modal coordinates (Rayleigh 1877; e.g. Clough &
Penzien, Dynamics of Structures, 1975, sec. 13-3), so each mode decays on its own:

    q_k'' + 2 zeta_k omega_k q_k' + omega_k^2 q_k = 0,   zeta_k = alpha / (2 omega_k) + beta omega_k / 2,
    omega_d,k = omega_k sqrt(1 - zeta_k^2),   logarithmic decrement 2 pi zeta_k / sqrt(1 - zeta_k^2).

alpha and beta are chosen for zeta_1 = 1 % and zeta_2 = 3 % (from the FE omega_1, omega_2). Two
runs of the mid-point scheme, each released from rest in the shape of one mode (tip deflection
1e-4 L, linear range), 200 steps per damped period of that mode, 5 periods (quick: 3); the modal
coordinate q_k = phi_k^T M u is read at every step.

Checked, per mode: the damped frequency (upward zero crossings of q_k) within 1e-3 of omega_d,k
of the FE modes; zeta from the logarithmic decrement of the peaks within 1 % of zeta_k; the
mid-point energy balance K + V + dissipated constant to 1e-8 of E(0); ``fm.linearize`` (whose
damping matrix holds the Rayleigh terms) gives zeta_k to 1e-8.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.analysis.signals import logarithmic_decrement, mean_period
from flexmb.validation import CaseReport, Check, print_report

CASE = "rayleigh-beam"
TITLE = "Cantilever with Rayleigh damping: modal decay and damped frequencies"
SOURCE = "zeta_k = alpha / (2 omega_k) + beta omega_k / 2, exact (Clough & Penzien 1975)"

LENGTH, EI, EA, RHO_A, RHO_I, N_EL = 1.0, 1.0, 1e4, 1.0, 1e-6, 20
ZETA_TARGET = (0.01, 0.03)
TIP = 1e-4                                  # m, tip deflection of the released mode shape
STEPS_PER_PERIOD = 200
PERIODS, QUICK_PERIODS = 5, 3
FREQUENCY_TOL, DECAY_TOL, BALANCE_TOL, LINEAR_TOL = 1e-3, 1e-2, 1e-8, 1e-8
SRC = "Rayleigh damping in the FE modes"


def build(alpha: float = 0.0, beta: float = 0.0) -> fm.Model:
    model = fm.Model(dim=2)
    nodes = model.add_nodes(np.c_[np.linspace(0.0, LENGTH, N_EL + 1), np.zeros(N_EL + 1)])
    beam = model.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=EA, EI=EI, rho_A=RHO_A, rho_I=RHO_I,
                            mass="consistent", name="cantilever")
    model.fix(nodes[0])
    if alpha or beta:
        model.set_rayleigh_damping(beam, alpha=alpha, beta=beta)
    return model


def rayleigh_coefficients(omega: np.ndarray) -> tuple[float, float]:
    """alpha (1/s), beta (s) for ZETA_TARGET at omega_1, omega_2 (rad/s)."""
    A = np.array([[1.0 / (2.0 * omega[0]), omega[0] / 2.0], [1.0 / (2.0 * omega[1]), omega[1] / 2.0]])
    alpha, beta = np.linalg.solve(A, ZETA_TARGET)
    return float(alpha), float(beta)


def run(quick: bool = False) -> CaseReport:
    report = CaseReport(CASE)
    undamped = fm.natural_modes(build(), 2)
    omega = np.sqrt(undamped.eigenvalues)
    alpha, beta = rayleigh_coefficients(omega)
    zeta = alpha / (2.0 * omega) + beta * omega / 2.0
    omega_d = omega * np.sqrt(1.0 - zeta**2)
    model = build(alpha, beta)
    asm = fm.Assembly(model)
    M = asm.mass
    tip = asm.dofs.index(N_EL, "uy")
    measured, runs = {}, {}
    for k in range(2):
        shape = undamped.modes[k]
        u0 = TIP / shape[tip] * shape
        dt = 2.0 * np.pi / omega_d[k] / STEPS_PER_PERIOD
        t_end = (QUICK_PERIODS if quick else PERIODS) * 2.0 * np.pi / omega_d[k]
        history = fm.integrate(asm, dt=dt, t_end=t_end, u0=u0)
        t = np.array(history.t)
        q = np.array(history.u) @ (M @ shape)                               # modal coordinate (n_steps,)
        w = 2.0 * np.pi / mean_period(t, q)
        delta = logarithmic_decrement(q)
        z = delta / np.sqrt(4.0 * np.pi**2 + delta**2)
        report.add(Check.close(f"mode {k + 1}: damped frequency (rad/s)", w, omega_d[k], FREQUENCY_TOL, SRC))
        report.add(Check.close(f"mode {k + 1}: zeta from the logarithmic decrement", z, zeta[k], DECAY_TOL, SRC))
        E = np.array(history.kinetic) + np.array(history.strain)
        balance = float(np.abs(E + history.dissipated - E[0]).max() / E[0])
        report.add(Check.at_most(f"mode {k + 1}: max |K + V + dissipated - E(0)| / E(0)", balance, BALANCE_TOL,
                                 "exact (mid-point Rayleigh damping)"))
        measured[f"mode {k + 1}"] = {"omega_d": w, "zeta": z, "dt_s": dt, "balance": balance}
        runs[k] = (t, q, history)
    linear = fm.linearize(asm).eigen()
    s = linear.eigenvalues[np.argsort(np.abs(linear.eigenvalues))][:2]
    for k in range(2):
        report.add(Check.close(f"linearize: zeta of mode {k + 1}", -s[k].real / abs(s[k]), zeta[k], LINEAR_TOL, SRC))
    report.n_dof = asm.n_dof
    report.n_steps = sum(len(r[0]) - 1 for r in runs.values())
    report.info.update({"alpha_per_s": alpha, "beta_s": beta, "omega_rad_s": omega.tolist(), "zeta": zeta.tolist(),
                        "measured": measured})
    report.figure = _figure(runs, omega, zeta, omega_d)
    return report


def _figure(runs: dict, omega: np.ndarray, zeta: np.ndarray, omega_d: np.ndarray):
    from flexmb.viz.plots import panels

    fig, axes = panels(2, "Cantilever with Rayleigh damping: modal coordinates", width=5.2, height=3.8)
    for k, ax in enumerate(axes):
        t, q, _ = runs[k]
        fine = np.linspace(0.0, t[-1], 1500)
        decay = np.exp(-zeta[k] * omega[k] * fine)
        exact = q[0] * decay * (np.cos(omega_d[k] * fine) + zeta[k] / np.sqrt(1 - zeta[k] ** 2)
                                * np.sin(omega_d[k] * fine))
        ax.plot(fine, exact, "k-", lw=2.0, alpha=0.35, label=f"closed form, zeta = {zeta[k]:.3f}")
        ax.plot(t, q, "-", lw=0.8, color="C0", label="flexmb mid-point")
        ax.plot(fine, q[0] * decay, "k:", lw=0.8, label="envelope")
        ax.set_xlabel("t (s)")
        ax.set_ylabel(f"q_{k + 1} (kg^1/2 m)")
        ax.set_title(f"mode {k + 1}", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
