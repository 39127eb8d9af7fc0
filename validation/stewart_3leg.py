"""3-leg Stewart platform driven by three constant motor torques, with the joint-reaction
formulation of Huang et al. (2001), their Figs. 10 and 11 (3D rigid bodies; spherical and
revolute joints).

Model (Huang et al. 2001, Fig. 10 (c), (d); z up, SI units). Seven bodies: legs L1-L3 (5 kg,
inertia (0.07, 0.7, 0.7) kg m^2, local x along the leg), motor shafts L4-L6 (1 kg,
(0.01, 0.1, 0.1), local x along the motor axis), platform L7 (10 kg). Joints: J1-J3 spherical
(leg i - platform), J4-J6 revolute (shaft - leg), three motor revolutes (ground - shaft). DOF:
7 x 6 - (6 x 5 + 3 x 3) = 3. Unknown reactions: 3 x 3 + 6 x 5 = 39 (Huang's 45 x 45 system has six
per revolute: three moments with the three-equation cross-product form of eq. 27).

Geometry made exactly consistent (the printed values are rounded, e.g. leg length 0.779 m from
the joints vs 0.782 m from the centres of mass): leg 1 lies in the y-z plane, from
J4 = (0, 0.29, 0) to J1 = (0, 0.61, 0.71), exactly perpendicular to its J4 axis (1, 0, 0); legs 2
and 3 are leg 1 turned by -120 and +120 deg about z. This reproduces the printed J2, J3, J5, J6
positions, the J5, J6 axes (-0.5, -0.866, 0), (-0.5, 0.866, 0) and the leg centres of mass
(0.390, -0.225, 0.355) to the printed digits. The motor axis of leg 1 is the printed direction
(0, -0.97, 0.26) normalised (15.0 deg above the horizontal), through J4 (so the two revolute axes
of each leg meet at J4, like a universal joint) and perpendicular to the J4 axis; the shaft's
centre of mass is the printed (0, 0.337, -0.013) projected on that axis, (0, 0.3371, -0.0126),
which matches to the printed digits; the motor joint point is where the axis meets z = -0.03 m,
(0, 0.402, -0.03) (printed y 0.39: a revolute joint's point can be anywhere on its axis, only the
split of the reported reaction into force and moment depends on it). Turned by -120 deg this
axis is (-0.840, 0.485, 0.26) at (0.348, -0.201, -0.03), turned by +120 deg (0.840, 0.485, 0.26)
at (-0.348, -0.201, -0.03). In the printed joint table the positions and directions of J7 and J8
are swapped: position J8 (0, 0.39) goes with direction J7 (0, -0.97, 0.26) (leg 1), position J7
(0.33, -0.19) with direction J8 (-0.84, 0.48, 0.26) (leg 2), J9 is consistent (leg 3); the motor
joints are named here by their printed positions. Platform: centre of mass (0, 0, 0.71) in the
plane of J1-J3; printed inertia (2.5, 5, 2.5), whose middle value is the sum of the other two,
as the perpendicular-axis theorem gives for a flat plate about its normal: the paper's platform
frame has y normal to the plate, so in the z-up frame J' = diag(2.5, 2.5, 5) kg m^2. Gravity
9.81 m/s^2 along -z. Motors: 10 N m each about its axis direction as listed (counter-clockwise
about it), on the shaft, reaction on the ground. From rest; dt = 0.002 s, 2.0 s.

The motion: the torques lean the legs sideways, the platform turns about z and falls, passes
the plane of the leg-shaft joints (z = 0) at about 1.0 s, turns back at z = -0.71 m at 1.3 s,
rises through z = 0 at about 1.56 s to near its start at about 1.9 s (no contacts are modelled,
as in the paper).

Checked:
1. Huang's scheme runs the 2.0 s: 1000 completed steps;
2. the times of the local minima of the smallest singular value of Phi_q (39 x 42, joint
   conditions in the absolute coordinates [dr, dphi] of the seven bodies) are listed with Huang's
   0.76, 1.32, 1.72 s (where his v_z has kinks); and at those minima cond(G) <= 1e6 (LU keeps at
   least ten digits; G is singular only where Phi_q has a self-stress, which this run does not
   reach). Also listed: the minima of the motor-locked Jacobian (Phi_q with the three shaft
   rotations about their axes as extra rows, 42 x 42), singular where the motors lose control of
   the platform (input-output singularities, the kind Huang's method claims to pass), the
   extrema of v_z, and the platform height at the minima;
3. joint residual: point mismatch and axis misalignment <= 1e-5 (m, rad) at every step (the
   per-step closure error is third order, about |omega|^3 dt^3 l / 6 ~ 1e-6 here, corrected at the
   next step); energy balance W_motor = Delta(K + V): Huang's update is first order, its error
   (about 18 % of the motor work at dt = 2 ms) is checked through its order in dt (dt = 2, 1 ms;
   full mode also 0.5 ms), 1 +- 0.3; with flexmb's second-order velocity update
   (velocity_update="rattle") at dt = 2 ms the balance is checked to 1e-2 of the motor work;
4. an independent solution of the same motion: the platform built as a flexmb model (rigid bodies,
   spherical and revolute joints, the motor torques as nodal moments about the fixed motor axes),
   integrated by coordinate partitioning (Blajer et al. 1994; rotation-vector coordinates,
   projective switching, DOP853 rtol 1e-10; about 90 steps and 8 switches of the independent set)
   and sampled at the Taylor runs' step times: the second-order Taylor run at dt = 2 ms keeps the
   platform height within 5e-3 m of it (measured 2.4e-3 m, 0.3 % of the stroke), and halving dt
   halves that at least by a factor 1.6 (measured 2.08: first order through the near-singular
   passes, where v_z turns sharply). Huang's own update deviates by 0.066 m and 1.2 m/s (reported).
   Along the reference, sigma_min(Phi_q) has its minima at 1.042, 1.312, 1.560 s (reported): the
   times below are properties of the model, not of the Taylor scheme.
Reported: Huang's update shows the alternating velocity mode of v += a dt growing after the
second pass through z = 0 (v_z alternates step by step by about +-0.45 m/s at 2 s, dt = 2 ms;
8 times less at dt = 1 ms, same growth rate); the second-order run has no such mode. Full mode
also runs the literal inertia (2.5, 5, 2.5) to show how the minima times move with that reading.

Results (dt = 2 ms): sigma_min(Phi_q) has its local minima at t = 1.042, 1.306 and 1.550 s
(sigma_min / sigma_max = 0.050, 0.130, 0.050: never near zero, no self-stress is reached), to
compare with Huang's 0.76, 1.32 and 1.72 s. The middle one matches: the platform's lowest point
(z = -0.71 m, the mirror image of the start). The outer two are the passes through the plane of
the leg-shaft joints (platform at z = -0.09 m, legs within 7 deg of horizontal), 0.28 s later and
0.17 s earlier than Huang's; there v_z has its sharp extrema (1.03, 1.57 s) and cond G its peaks
(1.7e4 at the minima, at most 2.0e4 over the run, 2.4e3 at the start). The motor-locked Jacobian
has its minima at 1.106, 1.306, 1.496 and 1.878 s. With the printed inertia order taken literally
the minima move to 0.88, 1.12, 1.33 and 1.92 s (full mode): the times depend on how the tables
are read, and neither reading gives all three of Huang's times.
Source: Huang et al. 2001, Figs. 10, 11.
"""
from __future__ import annotations

import numpy as np
from scipy.signal import find_peaks

from flexmb.multibody.taylor_reactions import TaylorHistory, TaylorSystem, constraint_jacobian, integrate_taylor
from flexmb.validation import CaseReport, Check, print_report

CASE = "stewart-3leg"
TITLE = "3-leg Stewart platform, three 10 N m motors, through near-singular configurations (Huang's Fig. 11)"
SOURCE = "Huang et al. 2001, Figs. 10, 11"

GRAVITY = 9.81                                   # m/s^2, along -z
MOTOR_TORQUE = 10.0                              # N m
DT = 0.002                                       # s, Huang et al.
T_END = 2.0                                      # s
HUANG_TIMES = (0.76, 1.32, 1.72)                 # s, kinks of v_z in Huang's Fig. 11
LEG_MASS, LEG_INERTIA = 5.0, (0.07, 0.7, 0.7)
SHAFT_MASS, SHAFT_INERTIA = 1.0, (0.01, 0.1, 0.1)
PLATFORM_MASS, PLATFORM_CENTRE = 10.0, (0.0, 0.0, 0.71)
PLATFORM_INERTIA = (2.5, 2.5, 5.0)               # z-up frame (printed (2.5, 5, 2.5), y normal)
PLATFORM_INERTIA_LITERAL = (2.5, 5.0, 2.5)       # the printed order taken literally
# leg 1, printed (Fig. 10 (c), (d)); legs 2, 3 are turned by -120, +120 deg about z
SPHERICAL_1 = np.array([0.0, 0.61, 0.71])        # J1
LEG_SHAFT_1 = np.array([0.0, 0.29, 0.0])         # J4
LEG_SHAFT_AXIS_1 = np.array([1.0, 0.0, 0.0])     # J4 axis
MOTOR_AXIS_1 = np.array([0.0, -0.97, 0.26])      # printed under J7, belongs to leg 1
SHAFT_CENTRE_1 = np.array([0.0, 0.337, -0.013])  # L4, projected on the motor axis
MOTOR_Z = -0.03                                  # m, height of the motor joint points
TURNS = (0.0, -2.0 * np.pi / 3.0, 2.0 * np.pi / 3.0)
MOTOR_LABELS = ("J8", "J7", "J9")                # printed labels of the motor positions, legs 1-3
SRC = "Huang et al. 2001, Fig. 11"
SRC_BLAJER = "independent solution: coordinate partitioning, Blajer et al. 1994"


def turn_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def geometry() -> list[dict[str, np.ndarray]]:
    """Per leg: spherical joint, leg-shaft joint and axis, motor axis and joint point, centres of
    mass of leg and shaft (global, m)."""
    motor_axis = MOTOR_AXIS_1 / np.linalg.norm(MOTOR_AXIS_1)
    shaft_centre = LEG_SHAFT_1 + ((SHAFT_CENTRE_1 - LEG_SHAFT_1) @ motor_axis) * motor_axis
    motor_point = LEG_SHAFT_1 + (MOTOR_Z - LEG_SHAFT_1[2]) / motor_axis[2] * motor_axis
    legs = []
    for angle in TURNS:
        R = turn_z(angle)
        legs.append({"spherical": R @ SPHERICAL_1, "leg_shaft": R @ LEG_SHAFT_1, "leg_shaft_axis": R @ LEG_SHAFT_AXIS_1,
                     "motor_axis": R @ motor_axis, "motor_point": R @ motor_point,
                     "leg_centre": R @ (0.5 * (SPHERICAL_1 + LEG_SHAFT_1)), "shaft_centre": R @ shaft_centre})
    return legs


def build(platform_inertia: tuple[float, float, float] = PLATFORM_INERTIA) -> tuple[TaylorSystem, dict[str, list[int]]]:
    """The platform at rest in the configuration of Fig. 10; returns the system and the body indices."""
    s = TaylorSystem(3, gravity=[0.0, 0.0, -GRAVITY])
    platform = s.add_body("L7 platform", PLATFORM_MASS, platform_inertia, PLATFORM_CENTRE)
    legs, shafts = [], []
    for k, g in enumerate(geometry()):
        along = (g["spherical"] - g["leg_shaft"]) / np.linalg.norm(g["spherical"] - g["leg_shaft"])
        n = g["leg_shaft_axis"]
        legs.append(s.add_body(f"L{k + 1} leg", LEG_MASS, LEG_INERTIA, g["leg_centre"],
                               np.column_stack([along, n, np.cross(along, n)])))
        m = g["motor_axis"]
        shafts.append(s.add_body(f"L{k + 4} shaft", SHAFT_MASS, SHAFT_INERTIA, g["shaft_centre"],
                                 np.column_stack([m, n, np.cross(m, n)])))
    legs_geometry = geometry()
    for k, g in enumerate(legs_geometry):
        s.add_joint("spherical", legs[k], platform, at=g["spherical"], name=f"J{k + 1} (S, L{k + 1}-L7)")
    for k, g in enumerate(legs_geometry):
        s.add_joint("revolute", shafts[k], legs[k], at=g["leg_shaft"], axis=g["leg_shaft_axis"],
                    name=f"J{k + 4} (R, L{k + 4}-L{k + 1})")
    for k, g in enumerate(legs_geometry):
        s.add_joint("revolute", None, shafts[k], at=g["motor_point"], axis=g["motor_axis"],
                    motor=lambda t: MOTOR_TORQUE, name=f"{MOTOR_LABELS[k]} (motor, ground-L{k + 4})")
    return s, {"platform": [platform], "legs": legs, "shafts": shafts}


def build_flexmb_model():
    """The same platform as a flexmb model (rigid bodies, spherical and revolute joints, the motor
    torques as constant nodal moments about the fixed motor axes); returns the assembly and the
    platform's body."""
    import flexmb as fm

    def inertia(frame: np.ndarray, principal: tuple[float, float, float]) -> np.ndarray:
        return frame @ np.diag(principal) @ frame.T

    model = fm.Model(dim=3)
    platform = model.add_rigid_body(PLATFORM_CENTRE, PLATFORM_MASS, np.diag(PLATFORM_INERTIA), name="L7 platform")
    legs, shafts = [], []
    legs_geometry = geometry()
    for k, g in enumerate(legs_geometry):
        along = (g["spherical"] - g["leg_shaft"]) / np.linalg.norm(g["spherical"] - g["leg_shaft"])
        n, m = g["leg_shaft_axis"], g["motor_axis"]
        legs.append(model.add_rigid_body(g["leg_centre"], LEG_MASS,
                                         inertia(np.column_stack([along, n, np.cross(along, n)]), LEG_INERTIA),
                                         name=f"L{k + 1} leg"))
        shafts.append(model.add_rigid_body(g["shaft_centre"], SHAFT_MASS,
                                           inertia(np.column_stack([m, n, np.cross(m, n)]), SHAFT_INERTIA),
                                           name=f"L{k + 4} shaft"))
    for k, g in enumerate(legs_geometry):
        model.add_joint("spherical", legs[k], platform, at=g["spherical"], name=f"J{k + 1}")
    for k, g in enumerate(legs_geometry):
        model.add_joint("revolute", shafts[k], legs[k], at=g["leg_shaft"], axis=g["leg_shaft_axis"], name=f"J{k + 4}")
    for k, g in enumerate(legs_geometry):
        model.add_joint("revolute", None, shafts[k], at=g["motor_point"], axis=g["motor_axis"], name=MOTOR_LABELS[k])
        for dof, component in zip(("rx", "ry", "rz"), g["motor_axis"]):
            model.add_load(shafts[k].node, dof, MOTOR_TORQUE * component)
    model.set_gravity([0.0, 0.0, -GRAVITY])
    return fm.Assembly(model), platform


def partitioned_reference(times: np.ndarray):
    """The flexmb model integrated by coordinate partitioning (Blajer et al. 1994; rotation-vector
    coordinates, projective switching, DOP853 rtol 1e-10) and recorded at ``times``: an
    independent formulation and integrator for the same motion."""
    import flexmb as fm

    asm, platform = build_flexmb_model()
    system = fm.ConstrainedSystem.from_assembly(asm)
    zero = np.zeros(system.n)
    run = fm.integrate_partitioned(system, zero, zero, T_END, rtol=1e-10, atol=1e-12, t_eval=times)
    z_slot = system.names.index(f"node {platform.node} uz")
    A = run.arrays()
    return run, system, A["q"][:, z_slot] + PLATFORM_CENTRE[2], A["qd"][:, z_slot]


def reference_spin_jacobian(system, run, k: int) -> np.ndarray:
    """Phi_q with respect to translations and spins (the form of :func:`constraint_jacobian`) at
    record k of the partitioned reference (rotation-vector coordinates: C = C_s T)."""
    from flexmb.rotations import tangent_operator

    q = np.asarray(run.q[k])
    T = np.eye(q.size)
    for body in range(q.size // 6):
        rows = slice(6 * body + 3, 6 * body + 6)
        T[rows, rows] = tangent_operator(q[rows])
    return system.C(q, run.t[k]) @ np.linalg.inv(T)


def jacobian_minima(system: TaylorSystem, shafts: list[int], h: TaylorHistory) -> dict[str, np.ndarray]:
    """Per record: sigma_min and sigma_max of Phi_q (39 x 42) and sigma_min / sigma_max of the
    motor-locked Jacobian (Phi_q and the rows dphi_shaft . motor axis, 42 x 42)."""
    out = {"phi_min": [], "phi_max": [], "locked_ratio": []}
    for k in range(len(h.t)):
        state = h.state(k)
        Phi_q = constraint_jacobian(system, state)
        sv = np.linalg.svd(Phi_q, compute_uv=False)
        locked = np.zeros((len(shafts), Phi_q.shape[1]))
        for row, body in enumerate(shafts):
            locked[row, 6 * body + 3:6 * body + 6] = state.rotation[body][:, 0]     # shaft x = motor axis
        sv_locked = np.linalg.svd(np.vstack([Phi_q, locked]), compute_uv=False)
        out["phi_min"].append(sv[-1])
        out["phi_max"].append(sv[0])
        out["locked_ratio"].append(sv_locked[-1] / sv_locked[0])
    return {key: np.array(value) for key, value in out.items()}


def local_minima(x: np.ndarray) -> np.ndarray:
    """Indices of the interior local minima of a sampled curve that stand out by at least 10 % of
    its range (prominence), so that round-off ripples on a plateau do not count."""
    return find_peaks(-x, prominence=0.1 * (x.max() - x.min()))[0]


def energy_balance_error(h: TaylorHistory) -> float:
    """max |W_motor - Delta(K + V)| over the run (J)."""
    return float(np.abs(h.energy_balance - h.energy_balance[0]).max())


def alternating_amplitude(x: np.ndarray) -> np.ndarray:
    """Step-to-step alternating part |x[k+1] - 2 x[k] + x[k-1]| / 4 (smooth parts give O(dt^2))."""
    return np.abs(x[2:] - 2.0 * x[1:-1] + x[:-2]) / 4.0


def run(quick: bool = False) -> CaseReport:
    system, bodies = build()
    platform, shafts = bodies["platform"][0], bodies["shafts"]
    report = CaseReport(CASE, n_dof=6 * system.n_bodies)

    # (1)-(2) Huang's scheme at the paper's step
    huang = integrate_taylor(system, DT, T_END)
    report.n_steps = huang.n_steps
    report.add(Check.at_least("completed steps (dt = 2 ms, 2.0 s)", huang.n_steps, 1000, "runs through, no failure"))
    t = huang.t
    sv = jacobian_minima(system, shafts, huang)
    minima = local_minima(sv["phi_min"])
    locked_minima = local_minima(sv["locked_ratio"])
    cond_at_minima = huang.condition_number[minima]
    report.add(Check.at_most("max cond(G) at the minima of sigma_min(Phi_q)", cond_at_minima.max(), 1e6,
                             "regular (LU keeps >= 10 digits)"))
    vz = huang.velocity[:, platform, 2]

    # (3) joints and energy
    report.add(Check.at_most("max joint point mismatch (m), every step", huang.position_residual.max(), 1e-5,
                             "third-order closure error, corrected"))
    report.add(Check.at_most("max joint axis misalignment (rad), every step", huang.angle_residual.max(), 1e-5,
                             "third-order closure error, corrected"))
    steps = (DT, DT / 2) if quick else (DT, DT / 2, DT / 4)
    balance = [energy_balance_error(huang)] + [energy_balance_error(integrate_taylor(system, dt, T_END,
                                                                                     output_every=int(DT / dt)))
                                               for dt in steps[1:]]
    order = float(np.polyfit(np.log(steps), np.log(balance), 1)[0])
    report.add(Check.close("Huang v += a dt: order of the energy-balance error", order, 1.0, 0.3,
                           "Euler velocity update: first order"))
    second_order = integrate_taylor(system, DT, T_END, velocity_update="rattle")
    motor_work = float(np.abs(huang.work).max())
    balance_rattle = energy_balance_error(second_order) / float(np.abs(second_order.work).max())
    report.add(Check.at_most("RATTLE-type update, dt = 2 ms: |W_motor - Delta(K+V)| / W_max", balance_rattle, 1e-2,
                             "work-energy theorem, second order"))
    sv_rattle = jacobian_minima(system, shafts, second_order)
    vz_rattle = second_order.velocity[:, platform, 2]

    # (4) the motion against an independent solution: coordinate partitioning of a flexmb model
    reference, reference_system, z_ref, vz_ref = partitioned_reference(t)
    report.add(Check.at_least("partitioned reference: finished 2.0 s (1 = yes)", float(reference.status == "finished"),
                              1.0, SRC_BLAJER))
    halved = integrate_taylor(system, DT / 2, T_END, velocity_update="rattle", output_every=2)
    deviation = {}
    for label, h in (("Huang v += a dt, dt = 2 ms", huang), ("second order, dt = 2 ms", second_order),
                     ("second order, dt = 1 ms", halved)):
        deviation[label] = {"max_abs_z_m": float(np.abs(h.position[:, platform, 2] - z_ref).max()),
                            "max_abs_vz_m_per_s": float(np.abs(h.velocity[:, platform, 2] - vz_ref).max())}
    z_dev = deviation["second order, dt = 2 ms"]["max_abs_z_m"]
    report.add(Check.at_most("second order, dt = 2 ms: max |z - z_ref| of the platform (m)", z_dev, 5e-3,
                             f"{SRC_BLAJER} (DOP853, rtol 1e-10); 0.7 % of the 0.71 m stroke"))
    report.add(Check.at_least("second order: |z - z_ref| ratio dt = 2 ms / 1 ms", z_dev
                              / deviation["second order, dt = 1 ms"]["max_abs_z_m"], 1.6,
                              "converges to the reference (first order through the near-singular passes)"))
    sv_ref = np.array([np.linalg.svd(jacobian, compute_uv=False)[[-1, 0]] for jacobian in
                       (reference_spin_jacobian(reference_system, reference, k) for k in range(len(reference.t)))])
    report.info["partitioned_reference"] = {
        "steps": reference.n_steps, "rhs_evaluations": reference.n_rhs, "switches": len(reference.switches),
        "switch_times_s": [sw["t"] for sw in reference.switches], "max_residual": max(reference.constraint_residual),
        "deviation_of_the_Taylor_runs": deviation,
        "sigma_min_minima_t_s (spin-form Phi_q along the reference)": t[local_minima(sv_ref[:, 0])]}
    report.info.update({
        "Huang_kink_times_s": HUANG_TIMES,
        "sigma_min_Phi_q_minima": {"t_s": t[minima], "sigma_min": sv["phi_min"][minima],
                                   "sigma_min_over_sigma_max": sv["phi_min"][minima] / sv["phi_max"][minima],
                                   "cond_G": cond_at_minima, "platform_z_m": huang.position[minima, platform, 2],
                                   "minus_Huang_time_in_order_s": [float(t[k] - x)
                                                                   for k, x in zip(minima, HUANG_TIMES)]},
        "sigma_min_Phi_q_at_start": float(sv["phi_min"][0]),
        "motor_locked_jacobian_minima": {"t_s": t[locked_minima],
                                         "sigma_min_over_sigma_max": sv["locked_ratio"][locked_minima]},
        "second_order_run_sigma_min_Phi_q_minima_t_s": t[local_minima(sv_rattle["phi_min"])],
        "v_z_extrema_t_s (second-order run)": np.sort(t[np.concatenate([local_minima(vz_rattle),
                                                                         local_minima(-vz_rattle)])]),
        "cond_G_range": [float(huang.condition_number.min()), float(huang.condition_number.max())],
        "cond_G_max_at_t_s": float(t[np.argmax(huang.condition_number)]),
        "max_joint_residual": {"m": float(huang.position_residual.max()), "rad": float(huang.angle_residual.max())},
        "energy_balance": {"dt_s": steps, "max_error_J": balance, "order": order, "motor_work_max_J": motor_work,
                           "second_order_dt_2ms_error_over_W_max": balance_rattle},
        "Huang_alternating_vz_amplitude_m_per_s": {
            f"t <= {x} s": float(alternating_amplitude(vz)[:int(round(x / DT)) - 1].max())
            for x in (1.0, 1.5, 1.7, 2.0)},
        "v_z_at_2s_m_per_s": {"Huang": float(vz[-1]), "second_order": float(vz_rattle[-1])},
        "reaction_unknowns": system.n_unknowns, "dof": 6 * system.n_bodies - system.n_unknowns,
    })
    if not quick:
        literal, literal_bodies = build(PLATFORM_INERTIA_LITERAL)
        h = integrate_taylor(literal, DT, T_END, velocity_update="rattle")
        sv_literal = jacobian_minima(literal, literal_bodies["shafts"], h)
        report.info["literal_inertia_(2.5,5,2.5)_sigma_min_Phi_q_minima_t_s"] = h.t[local_minima(sv_literal["phi_min"])]
    report.figure = _figure(t, vz, vz_rattle, vz_ref, sv, huang, second_order, minima)
    return report


def _figure(t, vz, vz_rattle, vz_ref, sv, huang, second_order, minima):
    from flexmb.viz.plots import panels

    fig, (ax1, ax2, ax3) = panels(3, "3-leg Stewart platform (Huang et al. 2001, Figs. 10-11), motors 10 N m, "
                                     "dt = 2 ms; dotted: Huang's 0.76, 1.32, 1.72 s", width=5.2)
    ax1.plot(t, vz, lw=0.8, label="Huang v += a dt")
    ax1.plot(t, vz_rattle, "k--", lw=1.0, label="second-order update")
    ax1.plot(t, vz_ref, "C2:", lw=1.2, label="coordinate partitioning (reference)")
    ax1.set_ylabel("platform (L7) v_z (m/s)")
    ax2.semilogy(t, sv["phi_min"] / sv["phi_max"], label="Phi_q (39 x 42): sigma_min / sigma_max")
    ax2.semilogy(t, sv["locked_ratio"], label="motor-locked (42 x 42): sigma_min / sigma_max")
    ax2.plot(t[minima], (sv["phi_min"] / sv["phi_max"])[minima], "rv", ms=5, label="minima of sigma_min(Phi_q)")
    ax2.set_ylabel("singular value ratio")
    twin = ax2.twinx()
    twin.semilogy(t, huang.condition_number, "C3", lw=0.8)
    twin.set_ylabel("cond G (red line)")
    for label, h in (("Huang v += a dt", huang), ("second-order update", second_order)):
        ax3.plot(h.t, h.kinetic + h.potential - h.kinetic[0] - h.potential[0], label=f"Delta(K + V), {label}")
    ax3.plot(huang.t, huang.work, "k:", label="motor work")
    ax3.set_ylabel("J")
    for ax in (ax1, ax2, ax3):
        for x in HUANG_TIMES:
            ax.axvline(x, color="k", ls=":", lw=0.8)
        ax.set_xlabel("time (s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
