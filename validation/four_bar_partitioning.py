"""The four-bar of Blajer, Schiehlen & Schirm (1993 Fig. 2, 1994 Fig. 2) cut at the joint O4 and
described by the relative angles q = [alpha1, alpha2, alpha3]: coordinate partitioning with
the projective criterion, explicit closing conditions, physical reactions at O4.

Mechanism. Ground pivots O1 = (0, 0) and O4 = (0, l0); link 1 (O1 -> O2) at the absolute angle
alpha1 from the x axis, link 2 (O2 -> O3) at alpha1 + alpha2, link 3 (O3 -> O4') at
alpha1 + alpha2 + alpha3; the loop is closed by O4' = O4 (two equations):

    Phi(q) = l1 e(th1) + l2 e(th2) + l3 e(th3) - O4 = 0,   e(th) = (cos th, sin th).

With this placement |O2 O4|^2 = l0^2 + l1^2 - 2 l0 l1 sin alpha1 = l2^2 + l3^2 + 2 l2 l3 cos alpha3,
the papers' eq. (16), and their closing conditions and velocity relations (1993 eqs. 17-23,
1994 eqs. 40-43) hold as printed (checked below against the Jacobian; 1993 eq. (19b) must read
sin alpha3 as in (22b), not cos alpha3). The papers give no link data. Chosen here so that, as
in their Fig. 3, alpha1 is never singular and alpha3 is singular at alpha1 = pi/2, 3 pi/2:
l0 = 1.0, l1 = 0.3, l2 = 1.0, l3 = 0.8 m (the crank l1 turns fully; cos alpha3 stays in
[-0.72, 0.03], so sin alpha3 never vanishes). Links are uniform bars of 2 kg/m, masses
0.6, 2.0, 1.6 kg, J = m l^2 / 12 about their centres; gravity 9.81 m/s^2 along -y; no other
load, so K + V is conserved. Start: alpha1 = 0 (assembly branch alpha3 > 0) with
alpha1' = 12 rad/s, enough for the crank to keep turning (its speed stays between about 7
and 16 rad/s).

Modes compared. (a) Compact coordinate partitioning (1994 eqs. 9, 12, all of q and v_I
integrated, no position solve), independent coordinate chosen by the projective criterion
(23a) with automatic switching (switch when the current coordinate's cos^2 alpha falls below
90 % of the best, so that the run follows the best coordinate as the papers suggest; the
library's default is 50 %); also with LU (Wehage-Haug) and SVD choices (full run only), and with
position correction.
(b) Closing conditions, variants a (q_I = alpha1: eqs. 17a, 18, 19a, 21a, 23a) and
b (q_I = alpha3: eqs. 17b, 18, 19b, 21b, 23b), started in variant b so that it must switch to
a before alpha1 = pi/2. (c) The same partitioned run with the independent coordinate fixed to
alpha3.

Checked (DOP853, rtol 1e-12, atol 1e-13, 5 crank revolutions; quick: the same, it is cheap):
- partitioned, projective switching: 5 full revolutions, max |Phi| < 1e-8 m, and
  max |E - E0| / K_max < 1e-7 (K_max the largest kinetic energy; E = K + V);
- closing conditions: max |Phi| < 1e-12 m and the same energy bound, with at least one variant
  switch before alpha1 reaches pi/2;
- fixed alpha3: the run stops as singular (or the solver fails) within 0.05 rad of
  alpha1 = pi/2, the predicted singular angle;
- the reaction at O4 (the force of the ground on link 3's end, x and y components), from
  schemes (35), (37) and (38) with B the Jacobian of the end point O4' (virtual work), agree
  to 1e-9 relative to max |f| over the run, and equal the Lagrange multipliers of Phi (this
  Phi is the position of O4', so C = B and lambda = f);
- cos^2 alpha over a revolution is plotted like the papers' Fig. 3; along it the criterion
  of alpha3 vanishes at alpha1 = pi/2 and 3 pi/2 (checked to 1e-10) and alpha1 is never
  singular (min cos^2 alpha1 reported and checked > 0.01).
Reported: switch log (times, sets, criterion values), solver steps and right-hand-side
evaluations, the effect of position correction (residual with and without, mean correction),
LU and SVD choices' switch counts.
Sources: Blajer, Schiehlen & Schirm 1993 (Mech. Mach. Theory 28) and 1994 (Arch. Appl. Mech.);
conservation of energy of the conservative system.
"""
from __future__ import annotations

import numpy as np

from flexmb.integrators.partitioned import ClosingVariant, integrate_closing, integrate_partitioned
from flexmb.multibody.constrained_system import ConstrainedSystem
from flexmb.multibody.partitioning import accelerations, partition, projective_criterion
from flexmb.multibody.reactions import physical_reactions
from flexmb.validation import CaseReport, Check, print_report

CASE = "four-bar-partitioning"
TITLE = "Four-bar cut at O4 (Blajer et al.): projective criterion, closing conditions, physical reactions"
SOURCE = "Blajer, Schiehlen & Schirm 1993, 1994 (four-bar, eqs. 16-23, 35-38, Fig. 3)"
SRC = "Blajer, Schiehlen & Schirm 1994"

L0, L1, L2, L3 = 1.0, 0.3, 1.0, 0.8            # m: ground O1-O4, links 1-3
LINKS = np.array([L1, L2, L3])
LINE_DENSITY = 2.0                             # kg/m
MASSES = LINE_DENSITY * LINKS                   # kg
INERTIAS = MASSES * LINKS**2 / 12.0             # kg m^2 about the centres
GRAVITY = 9.81                                  # m/s^2 along -y
O4 = np.array([0.0, L0])
OMEGA0 = 12.0                                   # rad/s, initial crank speed
REVOLUTIONS = 5
RTOL, ATOL = 1e-12, 1e-13
SWITCH = 0.9            # switch when the coordinate in use is 10 % below the best (follow Fig. 3)
# absolute link angles th = ABS @ q
ABS = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])


def _e(th: np.ndarray) -> np.ndarray:
    return np.array([np.cos(th), np.sin(th)])


def _e_perp(th: np.ndarray) -> np.ndarray:
    return np.array([-np.sin(th), np.cos(th)])


def _arm(i: int, j: int) -> float:
    """Length along link j of the path from O1 to the centre of link i (j <= i)."""
    return LINKS[j] if j < i else 0.5 * LINKS[i]


def centre_jacobians(q: np.ndarray) -> list[np.ndarray]:
    """d(centre of link i)/dq, (2, 3) each."""
    th = ABS @ q
    return [sum(_arm(i, j) * np.outer(_e_perp(th[j]), ABS[j]) for j in range(i + 1)) for i in range(3)]


def mass_matrix(q: np.ndarray, t: float) -> np.ndarray:
    Jc = centre_jacobians(q)
    return (sum(m * J.T @ J for m, J in zip(MASSES, Jc))
            + sum(Ji * np.outer(ABS[i], ABS[i]) for i, Ji in enumerate(INERTIAS)))


def forces(q: np.ndarray, qd: np.ndarray, t: float) -> np.ndarray:
    """h = sum_i J_i^T m_i (g - J_i' q'): gravity and the centripetal terms of the centres."""
    th, w = ABS @ q, ABS @ qd
    h = np.zeros(3)
    for i, J in enumerate(centre_jacobians(q)):
        centripetal = -sum(_arm(i, j) * w[j] ** 2 * _e(th[j]) for j in range(i + 1))
        h += MASSES[i] * J.T @ (np.array([0.0, -GRAVITY]) - centripetal)
    return h


def potential_energy(q: np.ndarray, t: float) -> float:
    th = ABS @ q
    return float(sum(MASSES[i] * GRAVITY * sum(_arm(i, j) * np.sin(th[j]) for j in range(i + 1))
                     for i in range(3)))


def loop(q: np.ndarray, t: float) -> np.ndarray:
    """Phi = O4' - O4 (m), the cut joint's position error."""
    th = ABS @ q
    return sum(LINKS[j] * _e(th[j]) for j in range(3)) - O4


def loop_jacobian(q: np.ndarray, t: float) -> np.ndarray:
    """C = dPhi/dq, also the distribution matrix B of the reaction at O4 (virtual work)."""
    th = ABS @ q
    return sum(LINKS[j] * np.outer(_e_perp(th[j]), ABS[j]) for j in range(3))


def loop_acceleration_rhs(q: np.ndarray, qd: np.ndarray, t: float) -> np.ndarray:
    """b = C' q' (eq. 4)."""
    th, w = ABS @ q, ABS @ qd
    return -sum(LINKS[j] * w[j] ** 2 * _e(th[j]) for j in range(3))


def build() -> ConstrainedSystem:
    return ConstrainedSystem(3, mass_matrix, forces, loop, loop_jacobian,
                             acceleration_rhs=loop_acceleration_rhs, potential_energy=potential_energy,
                             names=["alpha1", "alpha2", "alpha3"])


# ------------------------------------------------------------ closing conditions
def _nearest(angle: np.ndarray, reference: float) -> float:
    """The candidate angle(s), shifted by multiples of 2 pi, closest to reference."""
    a = np.atleast_1d(angle)
    a = a + 2.0 * np.pi * np.round((reference - a) / (2.0 * np.pi))
    return float(a[np.argmin(np.abs(a - reference))])


def alpha3_of_alpha1(a1: float) -> float:
    """1993 eq. (17a), branch alpha3 > 0."""
    c3 = (L0**2 + L1**2 - L2**2 - L3**2 - 2.0 * L0 * L1 * np.sin(a1)) / (2.0 * L2 * L3)
    return float(np.arccos(np.clip(c3, -1.0, 1.0)))


def alpha1_of_alpha3(a3: float, reference: float) -> float:
    """1993 eq. (17b), the branch and turn nearest the previous alpha1."""
    c = (L0**2 + L1**2 - L2**2 - L3**2 - 2.0 * L2 * L3 * np.cos(a3)) / (2.0 * L0 * L1)
    r = np.arccos(np.clip(c, -1.0, 1.0))
    return _nearest(np.array([0.5 * np.pi + r, 0.5 * np.pi - r]), reference)


def alpha2_of(a1: float, a3: float, reference: float) -> float:
    """1993 eq. (18): sin and cos of alpha2 from alpha1, alpha3 (turn nearest reference)."""
    den = L0**2 + L1**2 - 2.0 * L0 * L1 * np.sin(a1)
    s2 = (L0 * L2 * np.cos(a1) + L0 * L3 * np.cos(a1 + a3) + L1 * L3 * np.sin(a3)) / den
    c2 = (L0 * L2 * np.sin(a1) + L0 * L3 * np.sin(a1 + a3) - L1 * L3 * np.cos(a3) - L1 * L2) / den
    return _nearest(np.arctan2(s2, c2), reference)


def variant_a() -> ClosingVariant:
    """q_I = alpha1, q_D = [alpha2, alpha3]: eqs. (17a), (18), (19a), (21a), (23a) of 1993."""
    def closing(qI, t, ref):
        a3 = alpha3_of_alpha1(qI[0])
        return np.array([alpha2_of(qI[0], a3, ref[1]), a3])

    def A(q, t):
        a1, a2, a3 = q
        den = L2 * L3 * np.sin(a3)
        return np.array([[-(L0 * L1 * np.cos(a1) + L0 * L2 * np.cos(a1 + a2)) / den],
                         [L0 * L1 * np.cos(a1) / den]])

    def xi(q, qd, t):
        a1, a2, a3 = q
        d1, d2, d3 = qd
        K1 = L0 * L1 * (d1 * np.sin(a1) * np.sin(a3) + d3 * np.cos(a1) * np.cos(a3))
        K2 = L0 * L2 * ((d1 + d2) * np.sin(a1 + a2) * np.sin(a3) + d3 * np.cos(a1 + a2) * np.cos(a3))
        L1s = L2 * L3 * np.sin(a3) ** 2
        return d1 * np.array([(K1 + K2) / L1s, -K1 / L1s])

    return ClosingVariant((0,), closing, A, xi, name="a (alpha1)")


def variant_b() -> ClosingVariant:
    """q_I = alpha3, q_D = [alpha1, alpha2]: eqs. (17b), (18), (19b), (21b), (23b) of 1993."""
    def closing(qI, t, ref):
        a1 = alpha1_of_alpha3(qI[0], ref[0])
        return np.array([a1, alpha2_of(a1, qI[0], ref[1])])

    def A(q, t):
        a1, a2, a3 = q
        return np.array([[L2 * L3 * np.sin(a3) / (L0 * L1 * np.cos(a1))],
                         [-(L2 * np.cos(a1 + a2) / (L1 * np.cos(a1)) + 1.0)]])

    def xi(q, qd, t):
        a1, a2, a3 = q
        d1, d2, d3 = qd
        K3 = L2 * L3 * (d3 * np.cos(a3) * np.cos(a1) + d1 * np.sin(a3) * np.sin(a1))
        K4 = L0 * L2 * (d1 * np.sin(a2) + d2 * np.sin(a1 + a2) * np.cos(a1))
        L2s = L0 * L1 * np.cos(a1) ** 2
        return d3 * np.array([K3 / L2s, K4 / L2s])

    return ClosingVariant((2,), closing, A, xi, name="b (alpha3)")


def initial_state(system: ConstrainedSystem) -> tuple[np.ndarray, np.ndarray]:
    a3 = alpha3_of_alpha1(0.0)
    q0 = np.array([0.0, alpha2_of(0.0, a3, 0.0), a3])
    qd0 = partition(system.C(q0, 0.0), [0]).velocities(np.array([OMEGA0]))
    return q0, qd0


def revolution_criterion(system: ConstrainedSystem, n: int = 721) -> tuple[np.ndarray, np.ndarray]:
    """cos^2 alpha_i (23a) over alpha1 in [0, 2 pi] (Fig. 3 of 1994)."""
    a1 = np.linspace(0.0, 2.0 * np.pi, n)
    out, ref = [], np.zeros(3)
    for x in a1:
        q = np.array([x, 0.0, alpha3_of_alpha1(x)])
        q[1] = alpha2_of(x, q[2], ref[1])
        ref = q
        out.append(projective_criterion(system.M(q, 0.0), system.C(q, 0.0)))
    return a1, np.array(out)


def reactions_over(system: ConstrainedSystem, run, every: int = 1) -> dict[str, np.ndarray]:
    """Reaction at O4 by schemes (35), (37), (38) and the Lagrange multipliers at the records."""
    out: dict[str, list] = {"35": [], "37": [], "38": [], "lagrange": []}
    for t, q, qd, ind in list(zip(run.t, run.q, run.qd, run.independent))[::every]:
        M, h, B = system.M(q, t), system.h(q, qd, t), loop_jacobian(q, t)
        part = partition(system.C(q, t), ind)
        xi_full = part.scatter_dependent(part.xi(system.b(q, qd, t)))
        qdd = accelerations(system, q, qd, t, ind)[1]
        out["35"].append(physical_reactions("35", M, h, B, xi_full=xi_full))
        out["37"].append(physical_reactions("37", M, h, B, qdd=qdd, D=part.D))
        out["38"].append(physical_reactions("38", M, h, B, qdd=qdd))
        out["lagrange"].append(system.lagrange_accelerations(q, qd, t)[1])
    return {k: np.array(v) for k, v in out.items()}


def _energy_error(system: ConstrainedSystem, run) -> float:
    E = run.energy(system)
    K = np.array([system.kinetic_energy(q, qd, t) for t, q, qd in zip(run.t, run.q, run.qd)])
    return float(np.abs(E - E[0]).max() / K.max())


def _revolutions(run) -> float:
    return float((run.q[-1][0] - run.q[0][0]) / (2.0 * np.pi))


def run(quick: bool = False) -> CaseReport:
    system = build()
    q0, qd0 = initial_state(system)
    report = CaseReport(CASE, n_dof=3)
    # duration of REVOLUTIONS turns: the crank speed varies, integrate until alpha1 passes it
    t_end = 1.02 * REVOLUTIONS * 2.0 * np.pi / 11.0
    runs = {}
    runs["projective"] = integrate_partitioned(system, q0, qd0, t_end, rtol=RTOL, atol=ATOL, choice="projective",
                                               switch_threshold=SWITCH)
    runs["corrected"] = integrate_partitioned(system, q0, qd0, t_end, rtol=RTOL, atol=ATOL, choice="projective",
                                              switch_threshold=SWITCH, position_correction=True)
    if not quick:
        for choice in ("lu", "svd"):
            runs[choice] = integrate_partitioned(system, q0, qd0, t_end, rtol=RTOL, atol=ATOL, choice=choice,
                                                 switch_threshold=SWITCH)
    runs["closing"] = integrate_closing(system, [variant_a(), variant_b()], q0, qd0, t_end, rtol=RTOL, atol=ATOL,
                                        variant=1)
    runs["fixed alpha3"] = integrate_partitioned(system, q0, qd0, t_end, rtol=RTOL, atol=ATOL, independent=[2])
    runs["closing b only"] = integrate_closing(system, [variant_b()], q0, qd0, t_end, rtol=RTOL, atol=ATOL)
    # the effect of position correction shows at a loose tolerance
    for label, correct in (("loose rtol 1e-6", False), ("loose rtol 1e-6, corrected", True)):
        runs[label] = integrate_partitioned(system, q0, qd0, t_end, rtol=1e-6, atol=1e-8, choice="projective",
                                            switch_threshold=SWITCH, position_correction=correct)
    report.n_steps = sum(r.n_steps for r in runs.values())

    # (a) partitioned with the projective criterion
    p = runs["projective"]
    report.add(Check.at_least("partitioned (projective): crank revolutions completed", _revolutions(p),
                              REVOLUTIONS, "issue: at least 5 revolutions"))
    report.add(Check.at_most("partitioned (projective): max |Phi| (m)", max(p.constraint_residual), 1e-8,
                             f"{SRC}: compact form, no position solve"))
    report.add(Check.at_most("partitioned (projective): max |E - E0| / K_max", _energy_error(system, p), 1e-7,
                             "energy conservation, rtol 1e-12"))
    report.add(Check.at_least("partitioned (projective): switches of the independent coordinate",
                              len(p.switches), 1, f"{SRC} Fig. 3: alpha1 and alpha2 alternate as the best"))
    # (b) closing conditions
    c = runs["closing"]
    report.add(Check.at_least("closing conditions: crank revolutions completed", _revolutions(c), REVOLUTIONS,
                              "issue: at least 5 revolutions"))
    report.add(Check.at_most("closing conditions: max |Phi| (m)", max(c.constraint_residual), 1e-12,
                             f"{SRC} eq. (29): constraints hold by construction"))
    report.add(Check.at_most("closing conditions: max |E - E0| / K_max", _energy_error(system, c), 1e-7,
                             "energy conservation, rtol 1e-12"))
    first_b_to_a = next((s for s in c.switches if s["old"].startswith("b")), None)
    a1_switch = float(np.interp(first_b_to_a["t"], c.t, np.array(c.q)[:, 0])) if first_b_to_a else np.inf
    report.add(Check.at_most("closing conditions: alpha1 at the first switch b -> a, before pi/2 (rad)",
                             a1_switch, 0.5 * np.pi, "1993 section 4: variant b singular at cos alpha1 = 0"))
    # (c) fixed alpha3
    f = runs["fixed alpha3"]
    a1_stop = float(f.q[-1][0])
    report.add(Check.at_most("fixed alpha3: |alpha1 - pi/2| where the run stops (rad)",
                             abs(a1_stop - 0.5 * np.pi), 0.05, f"{SRC} Fig. 3: alpha3 singular at alpha1 = pi/2"))
    report.add(Check.at_least("fixed alpha3: run flagged singular or failed (1 = yes)",
                              float(f.status in ("singular", "failed")), 1.0, f"{SRC} Fig. 3"))
    # reactions at O4
    reac = reactions_over(system, p)
    scale = np.abs(reac["35"]).max()
    d37 = float(np.abs(reac["37"] - reac["35"]).max() / scale)
    d38 = float(np.abs(reac["38"] - reac["35"]).max() / scale)
    dlam = float(np.abs(reac["lagrange"] - reac["35"]).max() / scale)
    report.add(Check.at_most("reaction at O4: max |f(37) - f(35)| / max |f|", d37, 1e-9, f"{SRC} appendix B"))
    report.add(Check.at_most("reaction at O4: max |f(38) - f(35)| / max |f|", d38, 1e-9, f"{SRC} eq. (38)"))
    report.add(Check.at_most("reaction at O4: max |lambda - f(35)| / max |f| (B = C here)", dlam, 1e-9,
                             f"{SRC} eq. (32)"))
    # Fig. 3: criterion over a revolution
    a1_grid, cos2 = revolution_criterion(system)
    at_singular = [float(projective_criterion(system.M(q, 0.0), system.C(q, 0.0))[2]) for q in
                   (np.array([x, alpha2_of(x, alpha3_of_alpha1(x), 0.0), alpha3_of_alpha1(x)])
                    for x in (0.5 * np.pi, 1.5 * np.pi))]
    report.add(Check.at_most("cos^2 alpha3 at alpha1 = pi/2 and 3 pi/2", max(at_singular), 1e-10,
                             f"{SRC} Fig. 3 / 1993 section 4: singular choice"))
    report.add(Check.at_least("min over a revolution of cos^2 alpha1", float(cos2[:, 0].min()), 0.01,
                              f"{SRC} Fig. 3: alpha1 never singular for these links"))
    # the closing conditions' velocity matrices against the Jacobian's partition
    q_test = np.array(p.q)[len(p.q) // 3]
    A_check = 0.0
    for variant, ind in ((variant_a(), [0]), (variant_b(), [2])):
        A_ref = partition(loop_jacobian(q_test, 0.0), ind).A
        A_check = max(A_check, float(np.abs(variant.velocity_matrix(q_test, 0.0) - A_ref).max()
                                     / np.abs(A_ref).max()))
    report.add(Check.at_most("closing-condition A (eqs. 19, 21) vs -C_D^{-1} C_I (relative)", A_check, 1e-12,
                             "1993 eqs. (19), (21), (22)"))

    corr = runs["corrected"]
    report.info.update({
        "links_m": {"l0": L0, "l1": L1, "l2": L2, "l3": L3}, "masses_kg": MASSES, "inertias_kg_m2": INERTIAS,
        "gravity_m_per_s2": GRAVITY, "initial_crank_speed_rad_per_s": OMEGA0, "t_end_s": t_end,
        "ode": {"method": "DOP853", "rtol": RTOL, "atol": ATOL},
        "runs": {name: {"status": r.status, "message": r.message, "steps": r.n_steps, "rhs_evaluations": r.n_rhs,
                        "revolutions": _revolutions(r), "switches": len(r.switches),
                        "max_residual_m": max(r.constraint_residual)} for name, r in runs.items()},
        "switch_log_projective": p.switches[:12],
        "switch_log_closing": c.switches[:12],
        "position_correction": {"max_residual_without_m": max(p.constraint_residual),
                                "max_residual_with_m": max(corr.constraint_residual),
                                "mean_correction_rad": float(np.mean(corr.corrections)),
                                "max_correction_rad": float(np.max(corr.corrections)),
                                "energy_error_with": _energy_error(system, corr),
                                "loose_rtol_1e-6": {
                                    "max_residual_without_m": max(runs["loose rtol 1e-6"].constraint_residual),
                                    "max_residual_with_m": max(runs["loose rtol 1e-6, corrected"].constraint_residual),
                                    "energy_error_without": _energy_error(system, runs["loose rtol 1e-6"]),
                                    "energy_error_with": _energy_error(system, runs["loose rtol 1e-6, corrected"])}},
        "fixed_alpha3_stop": {"alpha1_rad": a1_stop, "t_s": float(f.t[-1]), "message": f.message},
        "closing_b_only_stop": {"alpha1_rad": float(runs["closing b only"].q[-1][0]),
                                "status": runs["closing b only"].status},
        "reactions_O4": {"max_abs_N": float(scale), "scheme37_vs_35": d37, "scheme38_vs_35": d38,
                         "lagrange_vs_35": dlam},
    })
    report.figure = _figure(a1_grid, cos2, p, c, system)
    return report


def _figure(a1: np.ndarray, cos2: np.ndarray, p, c, system: ConstrainedSystem):
    from flexmb.viz.plots import panels

    fig, (ax1, ax2, ax3) = panels(3, "Four-bar cut at O4 (l0 = 1, l1 = 0.3, l2 = 1, l3 = 0.8 m): projective "
                                     "criterion and integration with switching")
    for i, name in enumerate(("alpha1", "alpha2", "alpha3")):
        ax1.plot(np.rad2deg(a1), cos2[:, i], label=f"cos² {name}")
    ax1.set_xlabel("crank angle alpha1 (deg)")
    ax1.set_ylabel("projective criterion cos² α_i (23a)")
    ax1.set_xticks(np.arange(0, 361, 90))
    ax1.legend()
    ax1.grid(alpha=0.3)
    t = np.array(p.t)
    ax2.plot(t, [s[0] for s in p.independent], lw=1, drawstyle="steps-post", label="partitioned (projective)")
    ax2.plot(np.array(c.t), [s[0] for s in c.independent], lw=1, ls="--", drawstyle="steps-post",
             label="closing conditions")
    ax2.set_yticks([0, 1, 2], ["alpha1", "alpha2", "alpha3"])
    ax2.set_xlabel("time (s)")
    ax2.set_title("independent coordinate in use")
    ax2.legend(fontsize=8)
    for run, label in ((p, "partitioned |Phi|"), (c, "closing conditions |Phi|")):
        ax3.semilogy(run.t, np.maximum(run.constraint_residual, 1e-18), lw=1, label=label)
    E = p.energy(system)
    K = max(system.kinetic_energy(q, qd, tt) for tt, q, qd in zip(p.t, p.q, p.qd))
    ax3.semilogy(t, np.maximum(np.abs(E - E[0]) / K, 1e-18), lw=1, label="partitioned |E - E0| / K_max")
    ax3.set_xlabel("time (s)")
    ax3.legend(fontsize=8)
    ax3.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
