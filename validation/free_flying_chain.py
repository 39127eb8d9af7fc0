"""Free-flying four-bar chain (Crisfield & Shi 1993, section 4.1, Figs. 7-9).

Four co-rotational truss elements in a straight line, total length 400 m, EA = 1e10 N,
1 kg/m (lumped), no gravity, no supports. Initial velocity linear along the chain, zero at the
right end, equal to a rigid rotation of 1 rad/s about that end (left end 400 m/s downwards).

Exact (rigid) solution: the centre of mass translates at 200 m/s downwards and the chain spins
at omega = 1 rad/s about it, so the left-tip horizontal displacement is 200 (1 - cos t).

The spin needs centrifugal tension: element tension = sum over the masses outboard of it of
m r omega^2, i.e. strains eps_c = 1e-6 (outer) and 2e-6 (inner elements). Started unstretched
(as in the paper) the chain also vibrates axially about that state, so the exact largest strain
is 2 eps_c,max = 4e-6; started in the stretched relative equilibrium it stays at eps_c.

Checked: at dt = 0.1 the tip follows the rigid solution within 1 % of the chain length for 20 s;
energy |E-E0|/K0 and angular momentum |L-L0|/|L0| constant to 1e-8 at dt = 0.1 and 2.0; at
dt = 2.0 no locking: the largest axial strain equals the exact 2 eps_c = 4e-6 within 0.1 %, the axial strain
energy share below 1e-5, and, from the relative equilibrium, the strain deviates from eps_c by
less than 1e-6; trapezoidal Newmark at dt = 0.1 jumps to a false axial-vibration state.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.validation import CaseReport, Check, print_report

CASE = "free-flying-chain"
TITLE = "Free-flying four-bar chain: rigid spin, energy and momentum"
SOURCE = "Crisfield & Shi 1993, sec. 4.1, Figs. 7-9"

LENGTH = 400.0        # m
N_ELEMENTS = 4
EA = 1e10             # N
RHO_A = 1.0           # kg/m
OMEGA = 1.0           # rad/s
T_END = 20.0          # s


def build() -> tuple[fm.Assembly, np.ndarray]:
    model = fm.Model(dim=2)
    X = np.linspace(0.0, LENGTH, N_ELEMENTS + 1)
    nodes = model.add_nodes(np.c_[X, np.zeros_like(X)])
    model.add_truss(np.c_[nodes[:-1], nodes[1:]], EA=EA, rho_A=RHO_A)
    return fm.Assembly(model), X


def centrifugal_strain(asm: fm.Assembly, x: np.ndarray) -> np.ndarray:
    """Strain per element (n_el,) of a straight chain at nodal abscissae x spinning about its centre."""
    mass = asm.mass.diagonal()[0::2]                      # lumped nodal masses
    pull = mass * np.abs(x - np.average(x, weights=mass)) * OMEGA**2
    outboard = np.minimum(np.cumsum(pull)[:-1], np.cumsum(pull[::-1])[::-1][1:])
    return outboard / EA


def initial_state(asm: fm.Assembly, X: np.ndarray, prestressed: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """u0, v0 (rigid rotation about the right end) and the nodal abscissae x0."""
    x = X.copy()
    if prestressed:                                       # fixed point: strains <-> positions
        for _ in range(3):
            eps = centrifugal_strain(asm, x)
            x = np.concatenate([[0.0], np.cumsum(np.diff(X) * (1.0 + eps))])
            x += X.mean() - x.mean()
    u0, v0 = np.zeros(asm.n_dof), np.zeros(asm.n_dof)
    u0[0::2] = x - X
    v0[1::2] = OMEGA * (x - x[-1])
    return u0, v0, x


def run(quick: bool = False) -> CaseReport:
    asm, X = build()
    u0, v0, x0 = initial_state(asm, X, prestressed=False)
    runs = {(s, dt): fm.integrate(asm, dt, T_END, u0=u0, v0=v0, scheme=s)
            for s, dt in (("mid-point", 0.1), ("mid-point", 2.0), ("newmark", 0.1))}
    u_pre, v_pre, x_pre = initial_state(asm, X, prestressed=True)
    eps_c = centrifugal_strain(asm, x_pre)
    pre = fm.integrate(asm, 2.0, T_END, u0=u_pre, v0=v_pre)
    report = CaseReport(CASE, n_dof=asm.n_dof,
                        n_steps=sum(len(h.t) - 1 for h in runs.values()) + len(pre.t) - 1)
    src = "Crisfield & Shi 1993, sec. 4.1"

    h = runs[("mid-point", 0.1)]
    t = np.array(h.t)
    tip_error = np.abs(np.array(h.u)[:, 0] - rigid_tip_displacement(t))
    report.add(Check.at_most("mid-point dt=0.1: max |tip u_x - rigid| / length", tip_error.max() / LENGTH,
                             0.01, "rigid solution; C&S 1993 Fig. 9"))
    for dt in (0.1, 2.0):
        h = runs[("mid-point", dt)]
        report.add(Check.at_most(f"mid-point dt={dt}: max |E-E0|/K0", h.energy_error().max(), 1e-8, src))
        report.add(Check.at_most(f"mid-point dt={dt}: max |L-L0|/|L0|", h.angular_momentum_error().max(), 1e-8, src))
    h2 = runs[("mid-point", 2.0)]
    strains = _strains(asm, h2)
    # the largest strain of an axial vibration started from zero about eps_c is 2 eps_c: checked as equal to
    # it (measured 7e-6 relative), not as "below 1.01 times it", where the value sat at 99 % of the tolerance
    report.add(Check.close("mid-point dt=2.0: largest axial strain", np.abs(strains).max(),
                           2.0 * eps_c.max(), 1e-3, "exact: 2 eps_c of the unstretched start"))
    report.add(Check.at_most("mid-point dt=2.0: max axial strain-energy share",
                             (np.array(h2.strain) / h2.total).max(), 1e-5, "C&S 1993 (no locking)"))
    report.add(Check.at_most("mid-point dt=2.0 prestressed: max |eps - eps_c|",
                             np.abs(_strains(asm, pre) - eps_c).max(), 1e-6, "relative equilibrium"))
    nm = runs[("newmark", 0.1)]
    report.add(Check.at_least("Newmark dt=0.1: largest axial strain", np.abs(_strains(asm, nm)).max(),
                              1e-4, "C&S 1993 Figs. 7-8 (false state)"))
    report.info.update({
        "centrifugal_strain_per_element": eps_c.tolist(),
        "tip_error_over_length": {f"{s} dt={dt}": float(np.abs(np.array(r.u)[:, 0]
                                                               - rigid_tip_displacement(np.array(r.t))).max() / LENGTH)
                                  for (s, dt), r in runs.items()},
        "newmark_dt0.1_max_energy_error": float(nm.energy_error().max()),
        "newton_iterations_mean": {f"{s} dt={dt}": float(np.mean(r.newton_iterations[1:]))
                                   for (s, dt), r in runs.items()},
        "note": "the issue's literal 'largest axial strain < 1e-6' is below the exact centrifugal "
                "strain 2e-6 of the spinning chain; checked against the exact bound instead",
    })
    report.figure = _figure(asm, runs)
    return report


def rigid_tip_displacement(t: np.ndarray) -> np.ndarray:
    """Left-tip horizontal displacement of the rigid chain (m)."""
    return 0.5 * LENGTH * (1.0 - np.cos(OMEGA * t))


def _strains(asm: fm.Assembly, h: fm.TimeHistory) -> np.ndarray:
    return np.array([asm.axial_strains(u) for u in h.u])                 # (n_out, n_el)


def _figure(asm: fm.Assembly, runs: dict):
    from flexmb.viz.plots import dynamics_overview

    t_fine = np.linspace(0.0, T_END, 400)
    return dynamics_overview("Free-flying four-bar chain (Crisfield & Shi 1993)",
                             {f"{s} dt={dt}": h for (s, dt), h in runs.items()},
                             lambda h: np.array(h.u)[:, 0], "left-tip horizontal displacement (m)",
                             lambda h: np.abs(_strains(asm, h)).max(axis=1), "largest axial strain",
                             exact=(t_fine, rigid_tip_displacement(t_fine)))


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
