"""Natural modes of uniform beams (Euler-Bernoulli), free-free rigid modes, a rigid pendulum and a
parallelogram four-bar (:func:`flexmb.natural_modes`).

Beams. Length L = 1 m, EI = 1 N m^2, rho A = 1 kg/m, slenderness L/r = 1000 (EA = EI/r^2, so
the axial modes lie far above the first five bending ones), no rotary inertia of bending (the
Euler-Bernoulli model), 20 elements; supports cantilever (clamped at x = 0), free-free and
pinned-pinned (the axial and, in 3D, the torsional rigid motion held at x = 0). Reference:
omega_n = (beta_n L)^2 sqrt(EI / (rho A L^4)) with the classical roots beta_n L (cantilever
1.87510407 ..., free-free 4.73004074 ..., pinned-pinned n pi; references README, Wave 2 A).

* Beam2D with ``mass="cubic"``, the Hermitian consistent mass (Beam2D's ``"consistent"`` is the
  linear-interpolation mass): modes 1-5 within 0.1 % (the issue's bound; measured up to
  3.7e-4, free-free mode 5).
* Beam3D with ``mass="cubic"`` (its Hermitian mass of the reference configuration), bending in
  the x-z plane (EI_y = EI, EI_z = 4 EI; the modes are picked by their displacement direction,
  more than 90 % of the squared translations along z): modes 1-5 within 0.1 %, and the same
  frequencies as Beam2D with its Hermitian mass to 1e-8 (the spatial element and the 3D mode
  path reproduce the planar ones).
* Free-free: the 2D beam returns exactly 3 zero-frequency modes and the 3D beam (with polar
  rotary inertia, so that the rotation about its axis has mass) exactly 6, with omega = 0.0
  below 1e-6 omega_1 and the next mode elastic (its raw Rayleigh quotients are listed in info).

Mechanisms under gravity g = 9.81 m/s^2, at ``load_factor=1`` (the statics convention: gravity
scales with the load factor; at 0 they have a zero frequency):

* rigid pendulum (2D and 3D, revolute joint at the origin): mass m = 2 kg at l = 0.7 m below the
  pivot, J = 0.05 kg m^2 about its centre: omega^2 = m g l / (J + m l^2) [exact];
* parallelogram four-bar hanging from pivots (0, 0) and (d, 0), d = 1.2 m: two uniform cranks of
  mass m_r = 1.5 kg and length L = 0.8 m (J = m_r L^2 / 12), coupler of mass m_c = 3 kg between
  their lower ends. The coupler translates on a circle of radius L, so with the crank angle
  theta: T = (2 m_r L^2 / 3 + m_c L^2) theta'^2 / 2, V = -(m_r + m_c) g L cos theta, and
  omega^2 = g (m_r + m_c) / (L (2 m_r / 3 + m_c)) [exact, derived here].

Both within 1e-6 (relative). Source: classical Euler-Bernoulli beam theory (e.g. Blevins,
Formulas for Natural Frequency and Mode Shape, 1979, table 8-1) and exact rigid-body dynamics.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.validation import CaseReport, Check, print_report

CASE = "natural-modes-beam"
TITLE = "Natural modes: Euler-Bernoulli beams, free-free rigid modes, pendulum and four-bar"
SOURCE = "Euler-Bernoulli roots beta_n L (Blevins 1979) and exact small-oscillation closed forms"

LENGTH, EI, RHO_A = 1.0, 1.0, 1.0                 # m, N m^2, kg/m
RADIUS_SQ = 1e-6                                  # r^2 = I/A (m^2), slenderness L/r = 1000
N_ELEMENTS = 20
ROOTS = {"cantilever": np.array([1.87510407, 4.69409113, 7.85475744, 10.99554073, 14.13716839]),
         "free-free": np.array([4.73004074, 7.85320462, 10.99560784, 14.13716549, 17.27875966]),
         "pinned-pinned": np.pi * np.arange(1, 6)}
BEAM_BOUND = 1e-3
MECHANISM_BOUND = 1e-6
GRAVITY = 9.81                                    # m/s^2
SRC_EB = "Euler-Bernoulli, (beta_n L)^2 sqrt(EI/(rho A L^4)), roots in the references README (Blevins 1979)"


def beam(dim: int, support: str, n: int = N_ELEMENTS, mass: str = "cubic") -> fm.Model:
    """A uniform beam along x (see the module docstring); 3D: ``mass`` is Beam3D's, y_axis = y."""
    model = fm.Model(dim=dim)
    x = np.linspace(0.0, LENGTH, n + 1)
    zero = np.zeros_like(x)
    nodes = model.add_nodes(np.c_[x, zero] if dim == 2 else np.c_[x, zero, zero])
    conn = np.c_[nodes[:-1], nodes[1:]]
    if dim == 2:
        model.add_beam2d(conn, EA=EI / RADIUS_SQ, EI=EI, rho_A=RHO_A, mass=mass)
    else:
        model.add_beam3d(conn, EA=EI / RADIUS_SQ, GJ=EI / 1.3, EI_y=EI, EI_z=4.0 * EI, rho_A=RHO_A,
                         rho_I=(2.0 * RHO_A * RADIUS_SQ, 0.0, 0.0), mass=mass, y_axis=(0.0, 1.0, 0.0))
    first, last = int(nodes[0]), int(nodes[-1])
    if support == "cantilever":
        model.fix(first)
    elif support == "pinned-pinned":
        model.fix(first, ["ux", "uy"] if dim == 2 else ["ux", "uy", "uz", "rx"])
        model.fix(last, "uy" if dim == 2 else ["uy", "uz"])
    return model


def bending_modes(modes: fm.NaturalModes, axis: int, count: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """omega (count,) and indices of the first elastic modes whose squared nodal translations lie
    more than 90 % along ``axis``."""
    shapes = modes.modes[:, np.asarray(modes.layout.translations())]            # (n, nodes, dim)
    along = (shapes[:, :, axis] ** 2).sum(axis=1) / (shapes ** 2).sum(axis=(1, 2))
    picked = np.flatnonzero(~modes.rigid & (along > 0.9))[:count]
    if picked.size < count:
        raise RuntimeError(f"only {picked.size} bending modes along axis {axis} among {modes.eigenvalues.size}")
    return modes.omega[picked], picked


def reference_omega(support: str) -> np.ndarray:
    return ROOTS[support] ** 2 * np.sqrt(EI / (RHO_A * LENGTH**4))


def pendulum(dim: int) -> tuple[fm.Model, float]:
    """Rigid pendulum (module docstring) and its omega^2."""
    mass, arm, inertia = 2.0, 0.7, 0.05
    model = fm.Model(dim=dim)
    if dim == 2:
        body = model.add_rigid_body([0.0, -arm], mass, inertia)
        model.add_joint("revolute", None, body, at=[0.0, 0.0], name="pivot")
        model.set_gravity([0.0, -GRAVITY])
    else:
        body = model.add_rigid_body([0.0, -arm, 0.0], mass, [inertia, 0.03, inertia])
        model.add_joint("revolute", None, body, at=[0.0, 0.0, 0.0], axis=[0.0, 0.0, 1.0], name="pivot")
        model.set_gravity([0.0, -GRAVITY, 0.0])
    return model, mass * GRAVITY * arm / (inertia + mass * arm**2)


def four_bar() -> tuple[fm.Model, float]:
    """Hanging parallelogram four-bar (module docstring) and its omega^2."""
    m_r, m_c, crank, span = 1.5, 3.0, 0.8, 1.2
    model = fm.Model(dim=2)
    left = model.add_rigid_body([0.0, -crank / 2], m_r, m_r * crank**2 / 12, name="left crank")
    right = model.add_rigid_body([span, -crank / 2], m_r, m_r * crank**2 / 12, name="right crank")
    coupler = model.add_rigid_body([span / 2, -crank], m_c, m_c * span**2 / 12, name="coupler")
    model.add_joint("revolute", None, left, at=[0.0, 0.0], name="left pivot")
    model.add_joint("revolute", None, right, at=[span, 0.0], name="right pivot")
    model.add_joint("revolute", left, coupler, at=[0.0, -crank], name="left elbow")
    model.add_joint("revolute", right, coupler, at=[span, -crank], name="right elbow")
    model.set_gravity([0.0, -GRAVITY])
    return model, GRAVITY * (m_r + m_c) / (crank * (2.0 * m_r / 3.0 + m_c))


def run(quick: bool = False) -> CaseReport:
    report = CaseReport(CASE)
    errors: dict[str, np.ndarray] = {}
    n_dof = 0
    for support in ROOTS:
        ref = reference_omega(support)
        model2 = beam(2, support)
        modes2 = fm.natural_modes(model2, 12)
        omega2, _ = bending_modes(modes2, 1)
        errors[f"Beam2D {support}"] = omega2 / ref - 1.0
        for k in range(5):
            report.add(Check.close(f"Beam2D {support}: omega_{k + 1} (rad/s)", omega2[k], ref[k], BEAM_BOUND, SRC_EB))
        modes3 = fm.natural_modes(beam(3, support), 30)
        omega3, _ = bending_modes(modes3, 2)
        n_dof = max(n_dof, modes3.modes.shape[1])
        errors[f"Beam3D {support}"] = omega3 / ref - 1.0
        for k in range(5):
            report.add(Check.close(f"Beam3D {support}: omega_{k + 1} (rad/s)", omega3[k], ref[k], BEAM_BOUND, SRC_EB))
        report.add(Check.at_most(f"Beam3D {support}: max |omega_3D / omega_2D - 1|, modes 1-5, Hermitian mass",
                                 np.abs(omega3 / omega2 - 1.0).max(), 1e-8,
                                 "same discretisation in the plane (exact)"))

    rigid_info = {}
    for dim, count in ((2, 3), (3, 6)):
        model = beam(dim, "free-free")
        modes = fm.natural_modes(model, count + 2)
        report.add(Check.close(f"free-free {dim}D beam: number of zero-frequency modes", modes.n_rigid, count, 0.0,
                               "rigid-body motions of a free body (exact)"))
        omega_1 = modes.omega[count]
        report.add(Check.at_most(f"free-free {dim}D beam: max |omega| of the zero modes / omega_1",
                                 np.abs(modes.omega[:count]).max() / omega_1, 1e-6, "exact: rigid-body motions"))
        first_elastic, picked = bending_modes(modes, 1 if dim == 2 else 2, 1)
        report.add(Check.close(f"free-free {dim}D beam: mode {count + 1} is the first bending mode",
                               picked[0] + 1, count + 1, 0.0, SRC_EB))
        system = fm.system_matrices(fm.Assembly(model))
        phi = modes.modes[:count][:, system.free].T
        raw = np.einsum("ik,ik->k", phi, system.K @ phi)
        rigid_info[f"{dim}D"] = {"raw_rayleigh_quotients_of_zero_modes": raw.tolist(),
                                 "omega_1_squared": float(omega_1**2)}

    mechanisms = {}
    for name, (model, omega_sq) in (("pendulum 2D", pendulum(2)), ("pendulum 3D", pendulum(3)),
                                    ("four-bar", four_bar())):
        modes = fm.natural_modes(model, 1, load_factor=1.0)
        unloaded = fm.natural_modes(model, 1)
        mechanisms[name] = (float(modes.eigenvalues[0]), omega_sq, bool(unloaded.rigid[0]))
        report.add(Check.close(f"{name}: omega^2 (rad^2/s^2) under gravity (load_factor=1)", modes.eigenvalues[0],
                               omega_sq, MECHANISM_BOUND, "exact small-oscillation closed form"))
        report.add(Check.close(f"{name}: zero-frequency modes at load_factor=0 (no gravity)",
                               int(unloaded.rigid[0]), 1, 0.0, "exact: a mechanism without gravity"))
    report.n_dof = n_dof
    report.n_steps = 2 * len(ROOTS) + len(rigid_info) + 2 * len(mechanisms)     # eigen analyses
    report.info.update({
        "relative_frequency_errors_modes_1_5": {k: v.tolist() for k, v in errors.items()},
        "free_free": rigid_info,
        "mechanisms [omega^2 flexmb, closed form, zero at load factor 0]": mechanisms,
        "beam": {"L_m": LENGTH, "EI_Nm2": EI, "rho_A_kg_per_m": RHO_A, "slenderness_L_over_r": 1000,
                 "elements": N_ELEMENTS},
    })
    report.figure = _figure(errors)
    return report


def _cantilever_shape(beta_l: float, x: np.ndarray) -> np.ndarray:
    """Euler-Bernoulli cantilever mode shape, clamped at x = 0 (L = 1)."""
    b = beta_l * x
    sigma = (np.cosh(beta_l) + np.cos(beta_l)) / (np.sinh(beta_l) + np.sin(beta_l))
    return np.cosh(b) - np.cos(b) - sigma * (np.sinh(b) - np.sin(b))


def _figure(errors: dict[str, np.ndarray]):
    from flexmb.viz.plots import panels

    fig, (ax1, ax2) = panels(2, "Natural modes of uniform beams, 20 elements (Euler-Bernoulli reference)",
                             width=6.0, height=4.2)
    mode = np.arange(1, 6)
    colours = dict(zip(ROOTS, ("C0", "C1", "C2")))
    for name, err in errors.items():
        style = "--" if "Beam3D" in name else "-"
        colour = next(c for support, c in colours.items() if support in name)
        ax1.semilogy(mode, np.maximum(np.abs(err), 1e-12), style, color=colour, marker="o", ms=3, lw=1, label=name)
    ax1.axhline(BEAM_BOUND, color="k", lw=1, label="0.1 % bound")
    ax1.set_xlabel("bending mode")
    ax1.set_ylabel("|omega / omega_EB - 1|")
    ax1.set_xticks(mode)
    ax1.grid(True, which="both", alpha=0.3)
    ax1.legend(fontsize=6, ncol=2)
    modes = fm.natural_modes(beam(2, "cantilever"), 3)
    x = np.linspace(0.0, LENGTH, N_ELEMENTS + 1)
    fine = np.linspace(0.0, LENGTH, 200)
    uy = modes.modes[:, np.asarray(modes.layout.translations())[:, 1]]
    for k in range(3):
        exact = _cantilever_shape(ROOTS["cantilever"][k], fine)
        shape = uy[k] / uy[k, -1] * exact[-1]
        line, = ax2.plot(x, shape, "o", ms=3, label=f"flexmb mode {k + 1}, {modes.frequencies_hz[k]:.4g} Hz")
        ax2.plot(fine, exact, "-", lw=1, color=line.get_color())
    ax2.set_xlabel("x (m)")
    ax2.set_ylabel("uy (scaled to the analytic tip value)")
    ax2.set_title("cantilever, Beam2D: dots flexmb, lines Euler-Bernoulli", fontsize=9)
    ax2.grid(True, alpha=0.3)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
