"""Natural frequency of a pinned column under axial compression (:func:`flexmb.natural_modes` about
a pre-loaded state).

A simply supported (pinned-pinned) uniform Euler-Bernoulli column of length L under an axial
compressive end force P vibrates in its first bending mode, sin(pi x / L), at

    omega_1^2 = omega_0^2 (1 - P / P_cr),   omega_0^2 = pi^4 EI / (rho A L^4),   P_cr = pi^2 EI / L^2,

because the buckling mode and the vibration mode are the same sine: the geometric stiffness of P
removes the fraction P/P_cr of the bending stiffness (references README, Wave 2 B; e.g. Timoshenko,
Young & Weaver, Vibration Problems in Engineering, 1974; Blevins 1979). The frequency reaches zero
at the buckling load.

Model: L = 1 m, EI = 1 N m^2, rho A = 1 kg/m, slenderness L/r = 1000 (EA = EI / r^2), 20
elements with their Hermitian (cubic) mass; Beam2D, and Beam3D bending in the x-z plane (EI_y =
EI, EI_z = 4 EI, torsion and the axial motion held at x = 0). A reference load of 1 N pushes the
end x = L towards the support. P_cr is the FE model's own, from :func:`flexmb.linear_buckling`
about the unloaded state (Beam3D: within 1e-6 of pi^2 EI/L^2; Beam2D: +0.21 %, its geometric
stiffness is not the consistent one). For P/P_cr = 0.2 ... 0.95 the pre-loaded equilibrium comes
from :func:`flexmb.load_control` and the modes from ``natural_modes(model, u_pre=u, load_factor=P)``
(the tangent at u with the geometric stiffness of the axial force).

Checked:

* omega_1^2 / omega_0^2 within 0.5 % of 1 - P/P_cr at every P (issue 16; measured at most 2e-4,
  at P = 0.95 P_cr where the ratio is 0.05). The miss is the axial shortening, about
  (P_cr / EA) (P/P_cr) / (1 - P/P_cr) with P_cr / EA = 1e-5;
* at P = P_cr the ratio is below 1e-4: zero up to the axial shortening of the column, which the
  linear buckling analysis about the unloaded state leaves out (measured 9.9e-6 = P_cr / EA);
* P_cr within 0.5 % of the Euler load pi^2 EI / L^2 (measured 2.1e-3 for Beam2D, 8e-7 Beam3D);
* omega_0 within 0.1 % of pi^2 sqrt(EI / (rho A L^4)) (measured 4e-7);
* the linearized equations of motion about the same pre-stressed state (:func:`flexmb.linearize`,
  the load P applied in full) give natural_modes' omega_1 at P = 0.6 P_cr to 1e-8.
"""
from __future__ import annotations

import warnings

import numpy as np

import flexmb as fm
from flexmb.validation import CaseReport, Check, print_report

CASE = "prestressed-column"
TITLE = "Pinned column under axial load: omega^2 = omega_0^2 (1 - P/P_cr)"
SOURCE = "Euler column and pinned beam, exact (Timoshenko, Young & Weaver 1974)"

LENGTH, EI, RHO_A = 1.0, 1.0, 1.0                 # m, N m^2, kg/m
RADIUS_SQ = 1e-6                                  # r^2 = I/A (m^2), slenderness L/r = 1000
N_ELEMENTS = 20
RATIOS = (0.2, 0.4, 0.6, 0.8, 0.9, 0.95)          # P / P_cr
QUICK_RATIOS = (0.2, 0.6, 0.95)
FREQUENCY_BOUND = 5e-3                            # issue 16
ZERO_BOUND = 1e-4                                 # omega_1^2 / omega_0^2 at P_cr
EULER_BOUND = 5e-3                                # P_cr against pi^2 EI / L^2
OMEGA0_BOUND = 1e-3                               # as natural-modes-beam
LINEARIZE_RATIO = 0.6                             # P / P_cr of the fm.linearize cross-check
LINEARIZE_BOUND = 1e-8
SRC = "omega^2 = omega_0^2 (1 - P/P_cr), pinned column (Timoshenko, Young & Weaver 1974)"
SRC_EULER = "Euler load pi^2 EI / L^2 (exact)"


def column(dim: int, n: int = N_ELEMENTS, load: float = 1.0) -> fm.Model:
    """Pinned-pinned column along x with a compressive reference load ``load`` (N) at x = L."""
    model = fm.Model(dim=dim)
    x = np.linspace(0.0, LENGTH, n + 1)
    zero = np.zeros_like(x)
    nodes = model.add_nodes(np.c_[x, zero] if dim == 2 else np.c_[x, zero, zero])
    conn = np.c_[nodes[:-1], nodes[1:]]
    first, last = int(nodes[0]), int(nodes[-1])
    if dim == 2:
        model.add_beam2d(conn, EA=EI / RADIUS_SQ, EI=EI, rho_A=RHO_A, mass="cubic")
        model.fix(first, ["ux", "uy"])
        model.fix(last, "uy")
    else:
        # EI_z = 4 EI: the lowest bending (and buckling) mode is in the x-z plane
        model.add_beam3d(conn, EA=EI / RADIUS_SQ, GJ=EI / 1.3, EI_y=EI, EI_z=4.0 * EI, rho_A=RHO_A,
                         rho_I=(2.0 * RHO_A * RADIUS_SQ, 0.0, 0.0), mass="cubic", y_axis=(0.0, 1.0, 0.0))
        model.fix(first, ["ux", "uy", "uz", "rx"])
        model.fix(last, ["uy", "uz"])
    model.add_load(last, "ux", -load)                 # N; with load = 1 the load factor is P in newtons
    return model


def first_omega_sq(model: fm.Model, load: float) -> float:
    """omega_1^2 (rad^2/s^2) about the equilibrium under the axial load P = ``load`` (N)."""
    if load == 0.0:
        return float(fm.natural_modes(model, 1).eigenvalues[0])
    u = fm.load_control(model, [load]).u[-1]
    return float(fm.natural_modes(model, 1, u_pre=u, load_factor=load).eigenvalues[0])


def run(quick: bool = False) -> CaseReport:
    report = CaseReport(CASE)
    ratios = np.array(QUICK_RATIOS if quick else RATIOS)
    omega0_exact = np.pi**2 * np.sqrt(EI / (RHO_A * LENGTH**4))
    curves: dict[str, np.ndarray] = {}
    info: dict[str, dict] = {}
    for dim, name in ((2, "Beam2D"), (3, "Beam3D")):
        model = column(dim)
        p_cr = fm.linear_buckling(model, 1).critical
        w0_sq = first_omega_sq(model, 0.0)
        report.add(Check.close(f"{name}: P_cr (N), linear buckling", p_cr, np.pi**2 * EI / LENGTH**2,
                               EULER_BOUND, SRC_EULER))
        report.add(Check.close(f"{name}: omega_0 (rad/s), unloaded", np.sqrt(w0_sq), omega0_exact, OMEGA0_BOUND,
                               "pi^2 sqrt(EI / (rho A L^4)), exact"))
        ratio_sq = np.array([first_omega_sq(model, r * p_cr) / w0_sq for r in ratios])
        for r, value in zip(ratios, ratio_sq):
            report.add(Check.close(f"{name}: omega_1^2 / omega_0^2 at P = {r:g} P_cr", value, 1.0 - r,
                                   FREQUENCY_BOUND, SRC))
        # a straight column at its buckling load is in (neutral) equilibrium: the mode softens to zero
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fm.FlexmbWarning)       # "close to the zero level": expected here
            at_cr = first_omega_sq(model, p_cr) / w0_sq
        report.add(Check.at_most(f"{name}: |omega_1^2 / omega_0^2| at P = P_cr", abs(at_cr), ZERO_BOUND,
                                 "zero at the buckling load (exact); axial shortening P_cr/EA = 1e-5 remains"))
        # the same pre-stressed state through the linearized equations of motion (the load in full, as in
        # dynamics): fm.linearize must give natural_modes' frequency
        loaded = column(dim, load=LINEARIZE_RATIO * p_cr)
        u = fm.load_control(loaded, [1.0]).u[-1]
        w_lin = float(fm.linearize(loaded, u=u).eigen(1).omega[0])
        w_modes = float(np.sqrt(ratio_sq[list(ratios).index(LINEARIZE_RATIO)] * w0_sq))
        report.add(Check.close(f"{name}: omega_1 (rad/s) by fm.linearize at P = {LINEARIZE_RATIO:g} P_cr", w_lin,
                               w_modes, LINEARIZE_BOUND, "fm.natural_modes about the same state (exact)"))
        curves[name] = ratio_sq
        info[name] = {"P_cr_N": p_cr, "omega_0_rad_s": float(np.sqrt(w0_sq)), "P_over_P_cr": ratios.tolist(),
                      "omega_sq_ratio": ratio_sq.tolist(), "omega_sq_ratio_at_P_cr": at_cr}
        report.n_dof = max(report.n_dof, fm.Assembly(model).n_dof)
        report.n_steps += ratios.size + 3
    report.info.update(info)
    report.info["column"] = {"L_m": LENGTH, "EI_Nm2": EI, "rho_A_kg_per_m": RHO_A, "slenderness_L_over_r": 1000,
                             "elements": N_ELEMENTS, "mass": "cubic (Hermitian)"}
    report.figure = _figure(ratios, curves)
    return report


def _figure(ratios: np.ndarray, curves: dict[str, np.ndarray]):
    from flexmb.viz.plots import panels

    fig, (ax1, ax2) = panels(2, "Pinned column under axial load, 20 elements", width=5.5, height=4.0)
    line = np.linspace(0.0, 1.0, 50)
    ax1.plot(line, 1.0 - line, "k-", lw=1, label="1 - P/P_cr (exact)")
    for (name, values), marker in zip(curves.items(), ("o", "s")):
        ax1.plot(ratios, values, marker, ms=5, mfc="none", label=f"flexmb {name}")
        ax2.semilogy(ratios, np.abs(values / (1.0 - ratios) - 1.0), marker + "-", ms=4, lw=1, label=name)
    ax1.set_xlabel("P / P_cr")
    ax1.set_ylabel("omega_1^2 / omega_0^2")
    ax1.grid(True, alpha=0.3)
    ax1.legend(fontsize=8)
    ax2.axhline(FREQUENCY_BOUND, color="k", lw=1, label="0.5 % bound")
    ax2.set_xlabel("P / P_cr")
    ax2.set_ylabel("relative error of omega_1^2")
    ax2.grid(True, which="both", alpha=0.3)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
