"""Double pendulum through the aligned configuration theta_1 = theta_2 with the joint-reaction
formulation of Huang et al. (2001), their Fig. 8 (2D rigid bodies, revolute joints).

Model (Huang et al. 2001, Fig. 8): two identical links, m = 14.59 kg, J_z = 1.36 kg m^2 about the
centre of mass, joints at -0.61 m and +0.61 m from it along the link (l = 1.22 m); a revolute
joint to the ground at the top end of link 1 (the origin) and one between the lower end of
link 1 and the top end of link 2; gravity 9.81 m/s^2 along -y; dt = 0.001 s (the paper's).
Angles theta_1, theta_2 are absolute, from the downward vertical, counter-clockwise positive
(the bodies' own angle is theta - pi/2: their x axis runs from the upper to the lower joint).
Initial conditions (chosen here): released at rest with theta_1 = 0.5 rad, theta_2 = -0.5 rad.
The linearized system has modes at 2.449 and 7.101 rad/s (periods 2.57 and 0.885 s; the fast
mode is in anti-phase, theta_2 / theta_1 = -2.15), which makes theta_1 - theta_2 change sign:
the 2.0 s run crosses theta_1 = theta_2 three times (t = 0.29, 0.91, 1.58 s). A longer run would
add no new kind of event while the first-order error of Huang's update grows.

What is singular at theta_1 = theta_2, and what is not:

* singular: the Jacobian of the free end point with respect to the joint angles,
  d(end)/d(theta_1, theta_2) = l [[cos theta_1, cos theta_2], [sin theta_1, sin theta_2]]
  (the brief's l [[-sin, -sin], [cos, cos]] with angles from the horizontal), determinant
  l^2 sin(theta_2 - theta_1): the square Jacobian of Huang's Fig. 1 when the end point is the task
  coordinate. Its smallest singular value l sqrt(2) |sin((theta_1 - theta_2)/2)| is zero there.
* not singular: the joint Jacobian Phi_q (4 x 6) in the absolute coordinates (x, y, theta) of both
  links has rank 4 everywhere (no self-stress: the links cannot carry joint forces in
  equilibrium by themselves); and the Taylor reaction matrix G = (dt^2/2) Phi_q M^-1 Z^T (point
  conditions only, so no velocity terms), whose condition number depends on theta_2 - theta_1
  alone and is *largest* at the alignment, 29.80 (closed form below), nowhere near singular.

Closed form of G (derived here). With k = m a^2 / J (a = 0.61 m), n_i the unit normal of link i
and P_i = n_i n_i^T, in units dt^2 / (2 m) and global components,
G = [[I + k P_1, -(I - k P_1)], [-(I - k P_1), 2 I + k (P_1 + P_2)]]; at P_1 = P_2 it splits into
[[1 + k, k - 1], [k - 1, 2 + 2 k]] along n and [[1, -1], [-1, 2]] across, so
|det G| (2 m / dt^2)^4 = 2 (1 + k)^2 - (1 - k)^2 = 40.886 and cond G = 29.80. Huang et al. print
det = 9 (garbled as "9 dt^2/2"): their matrix (after eq. 38.a) has the lower-right block
"4 sin^2 theta_1 - 4 sin^2 theta_2 ..." = A_1 - A_2 instead of A_1 + A_2, i.e. the force of joint 2
with the same sign on both links, against their own eq. 34; that block gives det 9.

Checked:
1. the run passes theta_1 = theta_2 (number of sign changes of theta_1 - theta_2 >= 1) and completes
   all 2000 steps;
2. cond G at the sampled step closest to each crossing: at most 1e2 (regular: LU loses only two
   digits), and equal to the closed-form 29.80 within 1e-3; |det G| at an exactly aligned state
   against the closed form (1e-10);
3. at the crossings the end-point Jacobian's smallest singular value is below 1e-2 of its largest
   value over the run, while sigma_min(Phi_q) / sigma_max(Phi_q) stays above 0.1 (rank 4);
4. motion against the Lagrange equations in (theta_1, theta_2) integrated by solve_ivp (DOP853,
   rtol 1e-11): Huang's update (v += a dt) is first order and misses 1e-3 rad at dt = 0.001 s
   (about 0.045 rad over the 2 s; measured at dt = 4, 2, 1 ms: the check is on the fitted order,
   1 +- 0.3, and the errors are reported). The 1e-3 rad tolerance is checked for the second-order
   velocity update of flexmb (velocity_update="rattle": RATTLE-type half kicks, same position step
   and reaction matrix) at the paper's dt = 0.001 s; its order is checked as 2 +- 0.3;
5. energy: |E - E0| / K_max reported for both updates (E = K + V); first order for Huang's update,
   so its fitted order is checked, 1 +- 0.3.
6. coordinate partitioning (Blajer, Schiehlen & Schirm 1994) of the same pendulum built as a flexmb
   model in absolute coordinates (x, y, rotation per link; fm.ConstrainedSystem.from_assembly):
   with q_I fixed to the centre of link 2 the dependent block C_D (the Jacobian of that centre
   with respect to the link rotations, det proportional to sin(theta_2 - theta_1)) is singular
   at the alignment, and the run stops flagged singular within 0.2 % of the first crossing time;
   with the projective criterion choosing and switching q_I the run passes all crossings, its
   angles agree with the reference to 1e-6 rad (DOP853, rtol 1e-11) and K + V is conserved to
   1e-8 of K_max.
Sources: Huang et al. 2001 (model, Fig. 8, 9; the reaction matrix); Lagrange equations of the
double pendulum (reference motion); Blajer, Schiehlen & Schirm 1994 (partitioning).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.integrate import solve_ivp

from flexmb.multibody.taylor_reactions import (
    TaylorHistory, TaylorSystem, constraint_jacobian, integrate_taylor, reaction_equations)
from flexmb.validation import CaseReport, Check, print_report

CASE = "double-pendulum-singular"
TITLE = "Double pendulum through theta_1 = theta_2 with Huang's Taylor joint-reaction formulation"
SOURCE = "Huang et al. 2001, Fig. 8; Lagrange equations (DOP853) for the motion"

MASS = 14.59                 # kg, each link
INERTIA = 1.36               # kg m^2, about the centre of mass
HALF = 0.61                  # m, centre of mass to either joint
LENGTH = 2.0 * HALF          # m, joint to joint
GRAVITY = 9.81               # m/s^2, along -y
DT = 0.001                   # s, Huang et al.
T_END = 2.0                  # s
THETA0 = (0.5, -0.5)         # rad, released at rest
STUDY_STEPS = (0.004, 0.002, 0.001)   # s, error against the step size
SRC_BLAJER = "Blajer, Schiehlen & Schirm 1994: coordinate partitioning"
K_RATIO = MASS * HALF**2 / INERTIA
DET_ALIGNED = 2.0 * (1.0 + K_RATIO)**2 - (1.0 - K_RATIO)**2      # |det G| (2 m / dt^2)^4 at theta_1 = theta_2
SRC_HUANG = "Huang et al. 2001, Fig. 8"
SRC_LAGRANGE = "Lagrange eqs. in (theta_1, theta_2), DOP853 rtol 1e-11"


def aligned_matrix_eigenvalues() -> np.ndarray:
    """Singular values of G (2 m / dt^2) at theta_1 = theta_2, from the closed form (docstring)."""
    along = np.array([[1.0 + K_RATIO, K_RATIO - 1.0], [K_RATIO - 1.0, 2.0 + 2.0 * K_RATIO]])
    across = np.array([[1.0, -1.0], [-1.0, 2.0]])
    return np.concatenate([np.linalg.eigvalsh(along), np.linalg.eigvalsh(across)])


COND_ALIGNED = float(aligned_matrix_eigenvalues().max() / aligned_matrix_eigenvalues().min())


def build(theta1: float, theta2: float, omega1: float = 0.0, omega2: float = 0.0) -> TaylorSystem:
    """The double pendulum at the absolute angles theta_i (from the downward vertical) and rates."""
    s = TaylorSystem(2, gravity=[0.0, -GRAVITY])
    along = [np.array([np.sin(t), -np.cos(t)]) for t in (theta1, theta2)]     # upper -> lower joint
    normal = [np.array([np.cos(t), np.sin(t)]) for t in (theta1, theta2)]
    centre1, centre2 = HALF * along[0], LENGTH * along[0] + HALF * along[1]
    velocity1 = HALF * omega1 * normal[0]
    velocity2 = LENGTH * omega1 * normal[0] + HALF * omega2 * normal[1]
    link1 = s.add_body("link 1", MASS, INERTIA, centre1, theta1 - np.pi / 2, velocity1, omega1)
    link2 = s.add_body("link 2", MASS, INERTIA, centre2, theta2 - np.pi / 2, velocity2, omega2)
    s.add_joint("revolute", None, link1, at=[0.0, 0.0], name="J1 ground-link 1")
    s.add_joint("revolute", link1, link2, at=LENGTH * along[0], name="J2 link 1-link 2")
    return s


def lagrange_rhs(_: float, y: np.ndarray) -> list[float]:
    """Lagrange equations of the double pendulum in (theta_1, theta_2, omega_1, omega_2)."""
    t1, t2, w1, w2 = y
    c, s = np.cos(t1 - t2), np.sin(t1 - t2)
    mla = MASS * LENGTH * HALF
    M = np.array([[INERTIA + MASS * (HALF**2 + LENGTH**2), mla * c], [mla * c, INERTIA + MASS * HALF**2]])
    rhs = -np.array([mla * s * w2**2 + MASS * (HALF + LENGTH) * GRAVITY * np.sin(t1),
                     -mla * s * w1**2 + MASS * HALF * GRAVITY * np.sin(t2)])
    return [w1, w2, *np.linalg.solve(M, rhs)]


def reference() -> Callable[[np.ndarray], np.ndarray]:
    """The minimal-coordinate solution: a function of the times t (n,) giving theta_1, theta_2 (n, 2)."""
    sol = solve_ivp(lagrange_rhs, (0.0, T_END), [*THETA0, 0.0, 0.0], method="DOP853", rtol=1e-11, atol=1e-12,
                    dense_output=True)
    return lambda t: sol.sol(t)[:2].T


def angles(h: TaylorHistory) -> np.ndarray:
    """Absolute link angles theta_1, theta_2 (n_out, 2) from the bodies' angles."""
    return h.angle + np.pi / 2


def end_point_jacobian_singular_values(theta: np.ndarray) -> np.ndarray:
    """Singular values (n, 2) of l [[cos t1, cos t2], [sin t1, sin t2]], largest first."""
    half_gap = 0.5 * (theta[:, 0] - theta[:, 1])
    return LENGTH * np.sqrt(2.0) * np.column_stack([np.abs(np.cos(half_gap)), np.abs(np.sin(half_gap))])


def partitioned_runs():
    """The same pendulum as a flexmb model (two rigid bodies, two revolute joints) in absolute
    coordinates q = (x, y, rotation) per link from the start configuration, integrated by
    coordinate partitioning (Blajer et al. 1994) with q_I fixed to the centre of link 2, and
    with the projective criterion choosing and switching q_I."""
    import flexmb as fm

    def down(th: float) -> np.ndarray:
        return np.array([np.sin(th), -np.cos(th)])

    elbow = LENGTH * down(THETA0[0])
    model = fm.Model(dim=2)
    link1 = model.add_rigid_body(HALF * down(THETA0[0]), MASS, INERTIA, name="link 1")
    link2 = model.add_rigid_body(elbow + HALF * down(THETA0[1]), MASS, INERTIA, name="link 2")
    model.add_joint("revolute", None, link1, at=[0.0, 0.0], name="pivot")
    model.add_joint("revolute", link1, link2, at=elbow, name="elbow")
    model.set_gravity([0.0, -GRAVITY])
    system = fm.ConstrainedSystem.from_assembly(fm.Assembly(model))
    q0 = np.zeros(6)
    fixed = fm.integrate_partitioned(system, q0, q0, T_END, rtol=1e-11, atol=1e-12, independent=[3, 4])
    auto = fm.integrate_partitioned(system, q0, q0, T_END, rtol=1e-11, atol=1e-12)
    return fixed, auto, system


def crossing_steps(theta: np.ndarray) -> np.ndarray:
    """Indices of the sampled steps closest to each sign change of theta_1 - theta_2."""
    gap = theta[:, 0] - theta[:, 1]
    changes = np.flatnonzero(np.sign(gap[1:]) != np.sign(gap[:-1]))
    return np.array([k if abs(gap[k]) <= abs(gap[k + 1]) else k + 1 for k in changes], dtype=int)


def run(quick: bool = False) -> CaseReport:
    system = build(*THETA0)
    report = CaseReport(CASE, n_dof=6)
    figure_data: dict[str, object] = {}

    # (1)-(3) Huang's scheme at the paper's dt through the alignments
    huang = integrate_taylor(system, DT, T_END)
    report.n_steps = huang.n_steps
    t = huang.t
    theta = angles(huang)
    reference_angles = reference()
    theta_ref = reference_angles(t)
    crossings = crossing_steps(theta)
    report.add(Check.at_least("theta_1 = theta_2 crossings in 2 s", len(crossings), 1, "run passes the alignment"))
    report.add(Check.at_least("completed steps", huang.n_steps, int(round(T_END / DT)), "no failure"))
    cond_at = huang.condition_number[crossings]
    report.add(Check.at_most("max cond(G) at the crossings", cond_at.max(), 1e2,
                             "regular: LU keeps >= 13 digits"))
    report.add(Check.close("cond(G) at the crossings vs closed form at alignment", cond_at.max(), COND_ALIGNED, 1e-3,
                           "closed form (docstring), independent of dt and velocity"))
    aligned = build(0.3, 0.3, 1.0, -2.0)
    G = reaction_equations(aligned, aligned.initial_state(), 0.0, DT).matrix
    det_scaled = abs(np.linalg.det(G)) * (2.0 * MASS / DT**2)**4
    report.add(Check.close("|det G| (2m/dt^2)^4 at theta_1 = theta_2", det_scaled, DET_ALIGNED, 1e-10,
                           "closed form 2(1+k)^2-(1-k)^2 (Huang prints 9)"))
    task = end_point_jacobian_singular_values(theta)
    task_ratio = float(task[crossings, 1].max() / task[:, 1].max())
    report.add(Check.at_most("end-point Jacobian sigma_min at crossings / max over run", task_ratio, 1e-2,
                             "det = l^2 sin(theta_2 - theta_1) = 0"))
    phi_sv = np.array([np.linalg.svd(constraint_jacobian(system, huang.state(k)), compute_uv=False)
                       for k in range(len(t))])
    phi_ratio = phi_sv[:, -1] / phi_sv[:, 0]
    report.add(Check.at_least("Phi_q sigma_min / sigma_max at the crossings", phi_ratio[crossings].min(), 0.1,
                              "absolute coordinates: rank 4 everywhere"))

    # (4)-(5) motion and energy against the minimal-coordinate reference, both velocity updates
    study: dict[str, dict[str, object]] = {}
    runs: dict[str, TaylorHistory] = {}
    for update in ("euler", "rattle"):
        histories = {dt: huang if (update, dt) == ("euler", DT) else
                     integrate_taylor(system, dt, T_END, velocity_update=update) for dt in STUDY_STEPS}
        runs[update] = histories[DT]
        errors = [float(np.abs(angles(h) - reference_angles(h.t)).max()) for h in histories.values()]
        energies = [float(np.abs(h.kinetic + h.potential - h.kinetic[0] - h.potential[0]).max() / h.kinetic.max())
                    for h in histories.values()]
        study[update] = {"dt_s": list(STUDY_STEPS), "max_angle_error_rad": errors, "energy_error_over_K_max": energies,
                         "order_angle": float(np.polyfit(np.log(STUDY_STEPS), np.log(errors), 1)[0]),
                         "order_energy": float(np.polyfit(np.log(STUDY_STEPS), np.log(energies), 1)[0])}
    report.add(Check.close("Huang v += a dt: order of the angle error (dt = 4, 2, 1 ms)",
                           study["euler"]["order_angle"], 1.0, 0.3, "Euler velocity update: first order"))
    report.add(Check.close("Huang v += a dt: order of the energy error", study["euler"]["order_energy"], 1.0, 0.3,
                           "Euler velocity update: first order"))
    report.add(Check.at_most("RATTLE-type update, dt = 1 ms: max |theta - theta_ref| (rad)",
                             study["rattle"]["max_angle_error_rad"][-1], 1e-3, SRC_LAGRANGE))
    report.add(Check.close("RATTLE-type update: order of the angle error", study["rattle"]["order_angle"], 2.0, 0.3,
                           "velocity Verlet: second order"))
    report.info.update({
        "initial_conditions": {"theta1_rad": THETA0[0], "theta2_rad": THETA0[1], "omega_rad_per_s": [0.0, 0.0]},
        "dt_s": DT, "t_end_s": T_END, "k = m a^2 / J": K_RATIO,
        "crossing_times_s": t[crossings], "cond_G_at_crossings": cond_at,
        "cond_G_closed_form_aligned": COND_ALIGNED, "cond_G_range_over_run": [float(huang.condition_number.min()),
                                                                          float(huang.condition_number.max())],
        "det_G_scaled_aligned": {"flexmb": det_scaled, "closed_form": DET_ALIGNED, "Huang_printed": 9.0},
        "end_point_jacobian_sigma_min_at_crossings_m": task[crossings, 1],
        "end_point_jacobian_sigma_min_max_over_run_m": float(task[:, 1].max()),
        "Phi_q_singular_values_at_crossings": phi_sv[crossings],
        "Huang_dt_1ms": {"max_angle_error_rad": study["euler"]["max_angle_error_rad"][-1],
                         "meets_1e-3_rad": study["euler"]["max_angle_error_rad"][-1] <= 1e-3,
                         "energy_error_over_K_max": study["euler"]["energy_error_over_K_max"][-1],
                         "max_joint_residual_m": float(huang.position_residual.max())},
        "error_vs_dt": study,
    })
    # (6) coordinate partitioning of the same pendulum (absolute coordinates, from a flexmb model)
    fixed, auto, system_abs = partitioned_runs()
    theta_fixed = np.array(fixed.q)[:, [2, 5]] + np.array(THETA0)
    theta_auto = np.array(auto.q)[:, [2, 5]] + np.array(THETA0)
    first_crossing = float(t[crossings[0]])
    report.add(Check.at_least("partitioned, fixed q_I = centre of link 2: stopped singular (1 = yes)",
                              float(fixed.status == "singular"), 1.0, SRC_BLAJER))
    report.add(Check.close("partitioned, fixed q_I = centre of link 2: stop time vs first crossing (s)",
                           float(fixed.t[-1]), first_crossing, 2e-3, SRC_BLAJER))
    report.add(Check.at_most("partitioned, projective switching: max |theta - theta_ref| over 2 s (rad)",
                             float(np.abs(theta_auto - reference_angles(np.array(auto.t))).max()), 1e-6,
                             f"{SRC_BLAJER}; DOP853 rtol 1e-11"))
    energy = auto.energy(system_abs)
    kinetic = max(system_abs.kinetic_energy(q, qd, tt) for tt, q, qd in zip(auto.t, auto.q, auto.qd))
    report.add(Check.at_most("partitioned, projective switching: max |E - E0| / K_max",
                             float(np.abs(energy - energy[0]).max() / kinetic), 1e-8, "energy conservation"))
    report.info["partitioned"] = {
        "coordinates": system_abs.names, "fixed_set": [system_abs.names[i] for i in (3, 4)],
        "fixed_status": fixed.status, "fixed_message": fixed.message,
        "fixed_stop_theta_rad": theta_fixed[-1], "switches": auto.switches, "steps": auto.n_steps,
        "max_residual_m": max(auto.constraint_residual)}
    figure_data.update(t=t, theta=theta, theta_ref=theta_ref, crossings=crossings, huang=huang, task=task,
                       phi_sv=phi_sv, rattle=runs["rattle"])
    report.figure = _figure(**figure_data)
    return report


def _figure(t, theta, theta_ref, crossings, huang, task, phi_sv, rattle):
    from flexmb.viz.plots import panels

    fig, (ax1, ax2, ax3, ax4) = panels(4, "Double pendulum (Huang et al. 2001, Fig. 8) through theta_1 = theta_2, "
                                          "dt = 1 ms", width=4.6)
    for i, colour in enumerate(("C0", "C1")):
        ax1.plot(t, theta[:, i], colour, lw=1.2, label=f"theta_{i + 1}, Huang v += a dt")
        ax1.plot(t, theta_ref[:, i], "k--", lw=0.8, label="Lagrange (DOP853)" if i == 0 else None)
    ax1.set_ylabel("absolute angle (rad)")
    ax2.semilogy(t, np.abs(theta - theta_ref).max(1), label="Huang v += a dt")
    ax2.semilogy(rattle.t, np.abs(angles(rattle) - theta_ref).max(1), label="RATTLE-type update")
    ax2.axhline(1e-3, color="k", ls=":", lw=0.8, label="1e-3 rad")
    ax2.set_ylabel("max_i |theta_i - theta_i,ref| (rad)")
    ax3.plot(t, huang.condition_number, label="cond G (Taylor reaction matrix)")
    ax3.axhline(COND_ALIGNED, color="k", ls=":", lw=0.8, label="closed form at alignment")
    ax3.set_ylabel("condition number")
    ax4.semilogy(t, task[:, 1], label="end-point Jacobian sigma_min (m)")
    ax4.semilogy(t, task[:, 0], label="end-point Jacobian sigma_max (m)")
    ax4.semilogy(t, phi_sv[:, -1], label="Phi_q sigma_min (4 x 6)")
    ax4.set_ylabel("singular value")
    for ax in (ax1, ax2, ax3, ax4):
        for k in crossings:
            ax.axvline(t[k], color="r", lw=0.6, alpha=0.5)
        ax.set_xlabel("time (s); red: theta_1 = theta_2")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
