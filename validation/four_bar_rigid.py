"""Rigid planar four-bar driven by its crank at constant speed: joint reactions against a
hand-derived Newton-Euler balance (2D rigid bodies, revolute joints, a driven revolute joint).

Mechanism (chosen here): ground pivots O2 = (0, 0) and O4 = (d, 0); crank O2-A of length
a = 0.10 m, coupler A-B of b = 0.35 m, rocker O4-B of c = 0.30 m, ground d = 0.30 m. Grashof:
s + l = a + b = 0.45 <= p + q = c + d = 0.60 and the shortest link is the crank: a crank-rocker,
the crank turns fully. The links are uniform steel bars 20 mm x 10 mm (rho = 7800 kg/m^3, so
1.56 kg/m): masses m_i = 1.56 L_i kg, centres of mass at mid-length, slender-bar inertias
J_i = m_i L_i^2 / 12. Gravity g = 9.81 m/s^2 along -y (the mechanism stands in a vertical
plane). The crank is driven by the ground joint at theta_2 = omega t, omega = 10 rad/s, from the
reference configuration theta_2 = 0 (the coupler above the ground line). Joints: "crank pivot"
(ground, crank at O2; driven), "crank-coupler" (crank, coupler at A), "coupler-rocker" (coupler,
rocker at B), "rocker pivot" (ground, rocker at O4).

Analytic kinematics (independent of the simulation). With complex numbers e_i = exp(i theta_i),
the loop a e_2 + b e_3 - c e_4 - d = 0 gives theta_3 from the triangle A-B-O4 (law of cosines,
B above the line A-O4), theta_4 = arg(B - O4); its time derivatives

    a w2 i e_2 + b w3 i e_3 - c w4 i e_4 = 0,
    a (i al2 - w2^2) e_2 + b (i al3 - w3^2) e_3 - c (i al4 - w4^2) e_4 = 0

are linear in (w3, w4) and (al3, al4). The centre-of-mass accelerations follow by
differentiating r_2 = a e_2 / 2, r_3 = a e_2 + b e_3 / 2, r_4 = d + c e_4 / 2.

Hand-derived reactions. With F1, F2, F3, F4 the forces that the joints exert on their side B
(crank, coupler, rocker, rocker) and tau the driving torque on the crank, Newton-Euler for each
body (moments about its centre of mass c_i, r x F = r_x F_y - r_y F_x):

    crank:    m2 a2 = F1 - F2 + m2 g,   J2 al2 = tau + (O2 - c2) x F1 - (A - c2) x F2
    coupler:  m3 a3 = F2 - F3 + m3 g,   J3 al3 = (A - c3) x F2 - (B - c3) x F3
    rocker:   m4 a4 = F3 + F4 + m4 g,   J4 al4 = (B - c4) x F3 + (O4 - c4) x F4

nine linear equations for the nine unknowns, solved here with numpy.

What flexmb reports. ``joint_reaction`` gives each joint's force on side B in the joint frame
carried by side A: the ground frame for the pivots, the crank's and the coupler's rotated frames
for the moving joints (rotated back here with the bodies' simulated angles). In the mid-point
scheme a step's multipliers are the step's average forces (about t_{n+1/2}); and because the
mechanism has no degree of freedom left, the scheme's velocity recursion v_{n+1} = 2 (u_{n+1} -
u_n)/dt - v_n carries an undamped alternating error (-1)^n of O(dt^2) from the start, so a single
step's reaction has an alternating O(omega dt) error (about 1e-3 at dt = 1e-4 s, measured). The
average of two consecutive steps' reactions, assigned to the step time between them, cancels
it, leaving O((omega dt)^2).

Checked: (1) at the crank angle 120 deg, a run of two steps of dt = 1e-4 s started from the
exact state: the step-averaged force magnitudes of all four joints and the driving torque agree
with the hand-derived values to 1e-6 (relative; truncation (omega dt)^2 = 1e-6 times a factor
below one, round-off of accelerations ~1e-16 m / dt^2 below it), and the largest component
error over all joints is below 1e-6 of the largest force; (2) over one revolution at dt = T/720
(also in quick mode: the case takes about 3 s) the step-averaged reactions against the
hand-derived ones at every step time, within 1e-4 of the largest force, O((omega dt)^2); (3) the joint residual below
1e-10 (m, rad) at every step; (4) the drive's work sum_n tau_{n+1/2} omega dt (from the
reported torque) equals the change of kinetic plus potential energy, Delta(K + V) with
V = -sum m_i g . x_i, to 1e-8 of the largest |Delta(K + V)|, and the library's total energy
K - W (W: work of gravity and drive) stays constant to 1e-8 of the largest K.
Source: Newton-Euler equations of rigid bodies; four-bar loop kinematics (e.g. Norton, Design
of Machinery, ch. 4, 7, 11).
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.validation import CaseReport, Check, print_report

CASE = "four-bar-rigid"
TITLE = "Rigid four-bar at constant crank speed: joint reactions vs hand-derived Newton-Euler balance"
SOURCE = "exact: rigid-body Newton-Euler equations with analytic four-bar kinematics"

CRANK, COUPLER, ROCKER, GROUND = 0.10, 0.35, 0.30, 0.30     # m
LINE_MASS = 7800.0 * 0.020 * 0.010                           # kg/m, steel bar 20 x 10 mm
LENGTHS = np.array([CRANK, COUPLER, ROCKER])
MASSES = LINE_MASS * LENGTHS                                 # kg
INERTIAS = MASSES * LENGTHS**2 / 12.0                        # kg m^2 about the centres of mass
OMEGA = 10.0                                                 # rad/s
GRAVITY = 9.81                                               # m/s^2, along -y
PERIOD = 2.0 * np.pi / OMEGA
CHECK_ANGLE = np.deg2rad(120.0)                              # crank angle of the tight check
DT_CHECK = 1e-4                                              # s
JOINTS = ("crank pivot", "crank-coupler", "coupler-rocker", "rocker pivot")
SRC_NE = "Newton-Euler with analytic kinematics"


def kinematics(theta2: float, omega2: float = OMEGA, alpha2: float = 0.0) -> dict[str, np.ndarray]:
    """Exact state of the four-bar for the crank angle theta2 (rad), speed and acceleration.

    Returns (complex numbers for points and vectors in the plane): ``theta, omega, alpha`` (3,)
    of crank, coupler, rocker; ``A``, ``B``; centres of mass ``com``, their velocities ``vel``
    and accelerations ``acc`` (3,) complex.
    """
    e2 = np.exp(1j * theta2)
    A = CRANK * e2
    to_o4 = GROUND - A
    length, phi = abs(to_o4), np.angle(to_o4)
    cos_beta = (COUPLER**2 + length**2 - ROCKER**2) / (2.0 * COUPLER * length)
    theta3 = phi + np.arccos(np.clip(cos_beta, -1.0, 1.0))   # B above the line A-O4
    B = A + COUPLER * np.exp(1j * theta3)
    theta4 = np.angle(B - GROUND)
    e3, e4 = np.exp(1j * theta3), np.exp(1j * theta4)
    M = np.array([[(1j * COUPLER * e3).real, (-1j * ROCKER * e4).real],
                  [(1j * COUPLER * e3).imag, (-1j * ROCKER * e4).imag]])
    rhs = -1j * CRANK * omega2 * e2
    omega3, omega4 = np.linalg.solve(M, [rhs.real, rhs.imag])
    rhs = -(CRANK * (1j * alpha2 - omega2**2) * e2 - COUPLER * omega3**2 * e3 + ROCKER * omega4**2 * e4)
    alpha3, alpha4 = np.linalg.solve(M, [rhs.real, rhs.imag])
    vA, aA = 1j * omega2 * A, (1j * alpha2 - omega2**2) * A
    com = np.array([0.5 * A, A + 0.5 * COUPLER * e3, GROUND + 0.5 * ROCKER * e4])
    vel = np.array([0.5 * vA, vA + 0.5j * COUPLER * omega3 * e3, 0.5j * ROCKER * omega4 * e4])
    acc = np.array([0.5 * aA, aA + 0.5 * COUPLER * (1j * alpha3 - omega3**2) * e3,
                    0.5 * ROCKER * (1j * alpha4 - omega4**2) * e4])
    return {"theta": np.array([theta2, theta3, theta4]), "omega": np.array([omega2, omega3, omega4]),
            "alpha": np.array([alpha2, alpha3, alpha4]), "A": A, "B": B, "com": com, "vel": vel, "acc": acc}


def hand_reactions(theta2: float) -> np.ndarray:
    """Newton-Euler solution at crank angle theta2 (constant speed OMEGA):
    [F1x, F1y, F2x, F2y, F3x, F3y, F4x, F4y, tau] (N, N m), F_k the force of joint k on its side B."""
    k = kinematics(theta2)
    A, B, com = k["A"], k["B"], k["com"]
    O2, O4 = 0j, GROUND + 0j
    # per body: (joint index, sign of its force on this body, point of application)
    loads = [[(0, 1.0, O2), (1, -1.0, A)], [(1, 1.0, A), (2, -1.0, B)], [(2, 1.0, B), (3, 1.0, O4)]]
    K, rhs = np.zeros((9, 9)), np.zeros(9)
    for body, forces in enumerate(loads):
        row = 3 * body
        for joint, sign, point in forces:
            r = point - com[body]
            K[row, 2 * joint] += sign
            K[row + 1, 2 * joint + 1] += sign
            K[row + 2, 2 * joint] -= sign * r.imag
            K[row + 2, 2 * joint + 1] += sign * r.real
        inertial = MASSES[body] * k["acc"][body] + MASSES[body] * GRAVITY * 1j      # m a - m g
        rhs[row:row + 3] = inertial.real, inertial.imag, INERTIAS[body] * k["alpha"][body]
    K[2, 8] = 1.0                                                                   # tau on the crank
    return np.linalg.solve(K, rhs)


def build() -> tuple[fm.Assembly, list[fm.RigidBody]]:
    """The four-bar in its reference configuration (crank angle 0), driven at OMEGA."""
    k = kinematics(0.0)
    model = fm.Model(dim=2)
    bodies = [model.add_rigid_body([c.real, c.imag], m, J, name=name)
              for c, m, J, name in zip(k["com"], MASSES, INERTIAS, ("crank", "coupler", "rocker"))]
    A, B = k["A"], k["B"]
    model.add_joint("revolute", None, bodies[0], at=[0.0, 0.0], drive=lambda t: OMEGA * t, name=JOINTS[0])
    model.add_joint("revolute", bodies[0], bodies[1], at=[A.real, A.imag], name=JOINTS[1])
    model.add_joint("revolute", bodies[1], bodies[2], at=[B.real, B.imag], name=JOINTS[2])
    model.add_joint("revolute", None, bodies[2], at=[GROUND, 0.0], name=JOINTS[3])
    model.set_gravity([0.0, -GRAVITY])
    return fm.Assembly(model), bodies


def exact_state(asm: fm.Assembly, bodies: list[fm.RigidBody], t: float) -> tuple[np.ndarray, np.ndarray]:
    """Displacements from the reference configuration and velocities (n_dof,) at time t."""
    ref, now = kinematics(0.0), kinematics(OMEGA * t)
    u, v = np.zeros(asm.n_dof), np.zeros(asm.n_dof)
    for i, body in enumerate(bodies):
        j = asm.dofs.index(body.node, "ux")
        shift = now["com"][i] - ref["com"][i]
        u[j:j + 3] = shift.real, shift.imag, now["theta"][i] - ref["theta"][i]
        v[j:j + 3] = now["vel"][i].real, now["vel"][i].imag, now["omega"][i]
    return u, v


def simulated_reactions(asm: fm.Assembly, bodies: list[fm.RigidBody], h: fm.TimeHistory) -> np.ndarray:
    """Reported reactions as [F1, F2, F3, F4 (global x, y), tau] per output step (n_out, 9): the
    moving joints' forces are rotated from the frame carried by side A to global axes."""
    u = np.array(h.u)
    out = np.zeros((len(h.t), 9))
    for k, name in enumerate(JOINTS):
        force, moment = h.joint_reaction(name)
        side_a = (None, bodies[0], bodies[1], None)[k]
        if side_a is not None:
            angle = u[:, asm.dofs.index(side_a.node, "rz")]
            c, s = np.cos(angle), np.sin(angle)
            force = np.stack([c * force[:, 0] - s * force[:, 1], s * force[:, 0] + c * force[:, 1]], axis=1)
        out[:, 2 * k:2 * k + 2] = force
        if k == 0:
            out[:, 8] = moment[:, 0]
    return out


def potential_energy(asm: fm.Assembly, bodies: list[fm.RigidBody], h: fm.TimeHistory) -> np.ndarray:
    """V = sum m_i g y_i (J) per output step."""
    x = np.array([asm.positions(u) for u in h.u])
    return sum(m * GRAVITY * x[:, b.node, 1] for m, b in zip(MASSES, bodies))


def run(quick: bool = False) -> CaseReport:
    asm, bodies = build()
    report = CaseReport(CASE, n_dof=asm.n_dof)
    # (1) the tight check: two steps around the crank angle CHECK_ANGLE from the exact state
    t_star = CHECK_ANGLE / OMEGA
    u, v = exact_state(asm, bodies, t_star - DT_CHECK)
    short = fm.integrate(asm, DT_CHECK, t_star + DT_CHECK, t0=t_star - DT_CHECK, u0=u, v0=v, progress=False)
    sim = simulated_reactions(asm, bodies, short)
    averaged = 0.5 * (sim[1] + sim[2])                       # steps ending at t* and t* + dt
    hand = hand_reactions(CHECK_ANGLE)
    for k, name in enumerate(JOINTS):
        report.add(Check.close(f"120 deg: |force| of joint '{name}' (N)", np.linalg.norm(averaged[2 * k:2 * k + 2]),
                               np.linalg.norm(hand[2 * k:2 * k + 2]), 1e-6, SRC_NE))
    report.add(Check.close("120 deg: driving torque (N m)", averaged[8], hand[8], 1e-6, SRC_NE))
    component_error = float(np.abs(averaged[:8] - hand[:8]).max() / np.abs(hand[:8]).max())
    report.add(Check.at_most("120 deg: max force component error / max |F|", component_error, 1e-6, SRC_NE))
    single_step_error = float(np.abs(sim[1] - hand).max() / np.abs(hand[:8]).max())

    # (2)-(4) one revolution from the reference configuration
    per_rev = 720                                             # cheap: the same in quick mode
    dt = PERIOD / per_rev
    u0, v0 = fm.consistent_initial_state(asm, *exact_state(asm, bodies, 0.0))
    h = fm.integrate(asm, dt, PERIOD, u0=u0, v0=v0, progress=False)
    report.n_steps = len(h.t) - 1 + len(short.t) - 1
    t = np.array(h.t)
    sim = simulated_reactions(asm, bodies, h)
    mid = 0.5 * (sim[1:-1] + sim[2:])                         # at the step times t_1 ... t_{n-1}
    hand_rev = np.array([hand_reactions(OMEGA * tk) for tk in t[1:-1]])
    scale = np.abs(hand_rev[:, :8]).max()
    rev_error = float(np.abs(mid - hand_rev).max() / scale)
    report.add(Check.at_most(f"revolution, dt = T/{per_rev}: max |reaction - hand| / max |F|", rev_error, 1e-4,
                             f"{SRC_NE}, O((omega dt)^2)"))
    residual = max(max(h.constraint_residual), max(short.constraint_residual))
    report.add(Check.at_most("max joint residual |Phi| (m, rad), every step", residual, 1e-10,
                             "joint equations hold exactly"))
    K, V = np.array(h.kinetic), potential_energy(asm, bodies, h)
    change = (K + V) - (K[0] + V[0])
    drive_work = np.concatenate([[0.0], np.cumsum(sim[1:, 8] * OMEGA * dt)])
    work_error = float(np.abs(drive_work - change).max() / np.abs(change).max())
    report.add(Check.at_most("revolution: max |W_drive - Delta(K + V)| / max |Delta(K + V)|", work_error, 1e-8,
                             "work-energy theorem"))
    energy = float(np.abs(h.total - h.total[0]).max() / max(h.kinetic))
    report.add(Check.at_most("revolution: max |E - E0| / K_max (E = K - W_gravity - W_drive)", energy, 1e-8,
                             "work-energy theorem"))
    report.info.update({
        "links_m": {"crank": CRANK, "coupler": COUPLER, "rocker": ROCKER, "ground": GROUND},
        "masses_kg": MASSES, "inertias_kg_m2": INERTIAS, "omega_rad_per_s": OMEGA, "gravity_m_per_s2": GRAVITY,
        "check_angle_deg": 120.0, "check_dt_s": DT_CHECK,
        "hand_reactions_at_120deg [F1x,F1y,F2x,F2y,F3x,F3y,F4x,F4y,tau]": hand,
        "flexmb_two_step_average_at_120deg": averaged,
        "single_step_error_at_120deg (alternating O(omega dt))": single_step_error,
        "revolution": {"dt_s": dt, "steps": len(t) - 1, "max_error_two_step_average": rev_error,
                       "max_error_single_step_at_step_time":
                           float(np.abs(sim[1:-1] - hand_rev).max() / scale),
                       "newton_iterations_mean": float(np.mean(h.newton_iterations[1:])),
                       "cutbacks": int(h.cutbacks), "max_drive_torque_Nm": float(np.abs(sim[:, 8]).max()),
                       "max_drive_work_J": float(np.abs(drive_work).max())},
    })
    report.figure = _figure(t, sim, mid, drive_work, change)
    return report


def _figure(t: np.ndarray, sim: np.ndarray, mid: np.ndarray, drive_work: np.ndarray, change: np.ndarray):
    from flexmb.viz.plots import panels

    fig, (ax1, ax2, ax3) = panels(3, "Rigid four-bar (crank 0.10, coupler 0.35, rocker 0.30, ground 0.30 m), "
                                     "crank at 10 rad/s, gravity -y")
    angle = np.rad2deg(OMEGA * t)
    points = np.arange(0.0, 360.0, 15.0)
    hand = np.array([hand_reactions(np.deg2rad(p)) for p in points])
    for k, name in enumerate(JOINTS):
        line, = ax1.plot(angle[1:-1], np.linalg.norm(mid[:, 2 * k:2 * k + 2], axis=1), lw=1, label=name)
        ax1.plot(points, np.linalg.norm(hand[:, 2 * k:2 * k + 2], axis=1), "o", ms=3.5, color=line.get_color())
    ax1.set_ylabel("|joint force| (N)")
    ax1.set_title("lines: flexmb (two-step average); dots: hand-derived", fontsize=9)
    ax2.plot(angle[1:-1], mid[:, 8], lw=1, label="flexmb")
    ax2.plot(points, hand[:, 8], "ko", ms=3.5, label="hand-derived")
    ax2.set_ylabel("driving torque on the crank (N m)")
    ax3.plot(angle, drive_work, lw=1.5, label="drive work sum tau omega dt")
    ax3.plot(angle, change, "k--", lw=1, label="Delta(K + V)")
    ax3.set_ylabel("J")
    for ax in (ax1, ax2, ax3):
        ax.set_xlabel("crank angle (deg)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
