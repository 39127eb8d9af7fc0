"""Pendulum with a rotational spring-damper at its pivot: small-oscillation frequency and decay.

A rigid body (mass m, moment of inertia J about its centre of mass, centre at the distance d
below the pivot) hangs from the ground by a revolute joint that carries a rotational
spring-damper (``Model.add_joint_spring_damper``: stiffness k on the joint angle, damping c),
under gravity g. For small angles phi (e.g. Meirovitch, Elements of Vibration Analysis, 1986,
ch. 2, with the pendulum's gravity stiffness m g d added to k):

    J_O phi'' + c phi' + (k + m g d) phi = 0,   J_O = J + m d^2,
    omega_n = sqrt((k + m g d) / J_O),   zeta = c / (2 sqrt((k + m g d) J_O)),
    omega_d = omega_n sqrt(1 - zeta^2),   logarithmic decrement 2 pi zeta / sqrt(1 - zeta^2).

m = 2 kg, J = 0.05 kg m^2, d = 0.8 m, k = 30 N m/rad, g = 9.81 m/s^2, c chosen for zeta = 0.04;
released at rest from phi0 = 0.01 rad (the amplitude's own frequency shift, about phi0^2 / 16
times the gravity share, is below 1e-5). Mid-point scheme with the joint's constraint equations
(DAE), 400 steps per damped period, 15 periods (quick: 6).

Checked: the damped frequency from the zero crossings within 1e-3 and the logarithmic decrement
from the peaks within 1 % (mid-point and Newmark); K + V + dissipated constant to 1e-8 of E(0)
(mid-point; the joint spring-damper is linear in the joint angle, so its mid-point form is
exact); ``fm.linearize`` about the hanging state gives omega_d and zeta to 1e-8.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.analysis.signals import logarithmic_decrement, mean_period
from flexmb.validation import CaseReport, Check, print_report

CASE = "pendulum-spring"
TITLE = "Pendulum with a rotational spring-damper at the pivot: frequency and decay"
SOURCE = "J_O phi'' + c phi' + (k + m g d) phi = 0, exact (Meirovitch 1986)"

MASS, INERTIA, ARM, SPRING, GRAVITY, ZETA, PHI0 = 2.0, 0.05, 0.8, 30.0, 9.81, 0.04, 0.01
J_O = INERTIA + MASS * ARM**2                                 # kg m^2 about the pivot
STIFFNESS = SPRING + MASS * GRAVITY * ARM                     # N m/rad, spring plus gravity
DAMPING = 2.0 * ZETA * np.sqrt(STIFFNESS * J_O)               # N m s/rad
OMEGA_N = np.sqrt(STIFFNESS / J_O)
OMEGA_D = OMEGA_N * np.sqrt(1.0 - ZETA**2)
DECREMENT = 2.0 * np.pi * ZETA / np.sqrt(1.0 - ZETA**2)
STEPS_PER_PERIOD = 400
PERIODS, QUICK_PERIODS = 15, 6
FREQUENCY_TOL, DECAY_TOL, BALANCE_TOL, LINEAR_TOL = 1e-3, 1e-2, 1e-8, 1e-8
SRC = "small-oscillation closed form"


def build() -> tuple[fm.Model, fm.RigidBody]:
    model = fm.Model(dim=2)
    body = model.add_rigid_body([0.0, -ARM], MASS, INERTIA, name="pendulum")
    pivot = model.add_joint("revolute", None, body, at=[0.0, 0.0], name="pivot")
    model.add_joint_spring_damper(pivot, k=SPRING, c=DAMPING)
    model.set_gravity([0.0, -GRAVITY])
    return model, body


def initial_state(asm: fm.Assembly, body: fm.RigidBody) -> np.ndarray:
    """Displacements of the pendulum turned by PHI0 about the pivot."""
    u0 = np.zeros(asm.n_dof)
    u0[asm.dofs.index(body.node, "ux")] = ARM * np.sin(PHI0)
    u0[asm.dofs.index(body.node, "uy")] = ARM * (1.0 - np.cos(PHI0))
    u0[asm.dofs.index(body.node, "rz")] = PHI0
    return u0


def run(quick: bool = False) -> CaseReport:
    report = CaseReport(CASE)
    model, body = build()
    asm = fm.Assembly(model)
    rz = asm.dofs.index(body.node, "rz")
    period = 2.0 * np.pi / OMEGA_D
    dt = period / STEPS_PER_PERIOD
    t_end = (QUICK_PERIODS if quick else PERIODS) * period
    u0 = initial_state(asm, body)
    runs = {s: fm.integrate(asm, dt=dt, t_end=t_end, u0=u0, scheme=s) for s in ("mid-point", "newmark")}
    measured = {}
    for scheme, history in runs.items():
        t, phi = np.array(history.t), np.array(history.u)[:, rz]
        omega, delta = 2.0 * np.pi / mean_period(t, phi), logarithmic_decrement(phi)
        report.add(Check.close(f"{scheme}: damped frequency omega_d (rad/s)", omega, OMEGA_D, FREQUENCY_TOL, SRC))
        report.add(Check.close(f"{scheme}: logarithmic decrement", delta, DECREMENT, DECAY_TOL, SRC))
        measured[scheme] = {"omega_d": omega, "decrement": delta, "energy_error": float(history.energy_error().max())}
    history = runs["mid-point"]
    E = np.array(history.kinetic) + np.array(history.strain) - np.array(history.work)
    balance = float(np.abs(E - E[0] + history.dissipated).max() / abs(E[0] - E.min()))
    report.add(Check.at_most("mid-point: max |K + V + dissipated - E(0)| / (E(0) - min E)", balance, BALANCE_TOL,
                             "exact (mid-point, linear joint spring-damper)"))
    modes = fm.linearize(asm).eigen()
    s = modes.eigenvalues[int(np.argmax(np.abs(modes.eigenvalues.imag)))]
    report.add(Check.close("linearize: omega_d (rad/s)", abs(s.imag), OMEGA_D, LINEAR_TOL, SRC))
    report.add(Check.close("linearize: zeta", -s.real / abs(s), ZETA, LINEAR_TOL, SRC))
    report.n_dof = asm.n_dof
    report.n_steps = sum(len(h.t) - 1 for h in runs.values())
    report.info.update({"omega_d_exact": OMEGA_D, "zeta": ZETA, "decrement_exact": DECREMENT, "dt_s": dt,
                        "measured": measured})
    report.figure = _figure(runs, rz)
    return report


def _figure(runs: dict, rz: int):
    from flexmb.viz.plots import panels

    fig, (ax,) = panels(1, "Pendulum with a rotational spring-damper (zeta = 0.04)", width=6.5, height=3.8)
    t = np.array(runs["mid-point"].t)
    fine = np.linspace(0.0, t[-1], 2000)
    decay = np.exp(-ZETA * OMEGA_N * fine)
    phi = PHI0 * decay * (np.cos(OMEGA_D * fine) + ZETA / np.sqrt(1 - ZETA**2) * np.sin(OMEGA_D * fine))
    ax.plot(fine, phi * 1e3, "k-", lw=2.0, alpha=0.35, label="closed form (small angles)")
    ax.plot(fine, PHI0 * decay * 1e3, "k:", lw=0.8, label="decay envelope")
    for k, (scheme, h) in enumerate(runs.items()):
        ax.plot(t, np.array(h.u)[:, rz] * 1e3, "--" if k else "-", lw=0.8, color=f"C{k}", label=f"flexmb {scheme}")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("phi (mrad)")
    ax.legend(fontsize=7, loc="upper right")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
