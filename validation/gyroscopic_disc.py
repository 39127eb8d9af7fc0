"""Spinning rigid disc on a rotational spring: forward and backward whirl (:func:`flexmb.linearize`
about a steady spin, :func:`flexmb.campbell`).

A rigid disc (transverse moment of inertia J_t, polar J_p = 2 J_t) spins at constant speed Omega
about its axis z, which is held at the disc's centre by a rotational spring of stiffness k about
both transverse axes. Small tilts (theta_x, theta_y) obey J_t theta'' + J_p Omega hat(e_z) theta' +
k theta = 0; with theta_x + i theta_y ~ e^{i w t} the whirl frequencies are the positive roots of

    J_t w^2 -+ J_p Omega w - k = 0,
    w_f,b = (+- J_p Omega + sqrt(J_p^2 Omega^2 + 4 J_t k)) / (2 J_t),    w_f w_b = k / J_t,

forward whirl (with the spin) rising with Omega, backward falling (references README, Wave 2 B;
e.g. Genta, Dynamics of Rotating Systems, 2005, ch. 3; Lalanne & Ferraris 1998).

Model (3D): a massless Beam3D of length l along z, clamped at ground at its root, its tip held
in place (translations and the rotation about z fixed, as a spherical joint at the tip plus a
torsion stop would) so that it is a pure rotational spring k = 4 EI / l about x and y; the disc
(a RigidBody, centre at the tip) is joined to the tip by a revolute joint about z driven at
constant speed, angle Omega t. J_t = 0.5 kg m^2, J_p = 1 kg m^2, k = 2 N m/rad (sqrt(k / J_t) =
2 rad/s). The linearization is taken in the inertial frame about the steady spin at t = 0
(``linearize(model, v=v0)`` with the disc's angular velocity Omega e_z in v0): the disc is
axisymmetric, so the linearized equations do not change as it turns; the gyroscopic matrix comes
from the disc's rigid-body terms, not from a rotating frame.

Checked at Omega = 0.5, 1, 2, 5, 10 rad/s (quick: 1 and 5): forward and backward whirl within
1e-8 of the closed form and their product within 1e-8 of k / J_t (issue 16; measured 4e-15);
the same model linearized in the frame spinning with the disc (``spin=(e_z, Omega, 0)``, the
isotropic massless spring is the same whether it turns or not) has its whirls at w_f - Omega and
w_b + Omega, to 1e-8; the Campbell diagram (Omega = 0 ... 10 rad/s) against the closed form at
every speed (1e-8 of the lowest whirl frequency), drawn with the closed-form curves.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.validation import CaseReport, Check, print_report

CASE = "gyroscopic-disc"
TITLE = "Spinning disc on a rotational spring: forward and backward whirl"
SOURCE = "J_t w^2 -+ J_p Omega w - k = 0, exact (Genta 2005)"

J_T, J_P = 0.5, 1.0                       # kg m^2, transverse and polar (J_p = 2 J_t: a thin disc)
DISC_MASS = 3.0                           # kg (the centre is held: the mass does not enter)
SPRING_LENGTH = 0.1                       # m, l of the spring beam
SPRING = 2.0                              # N m/rad, k = 4 EI / l
EI = SPRING * SPRING_LENGTH / 4.0         # N m^2
SPEEDS = (0.5, 1.0, 2.0, 5.0, 10.0)       # rad/s
QUICK_SPEEDS = (1.0, 5.0)
CAMPBELL_SPEEDS = np.linspace(0.0, 10.0, 26)
BOUND = 1e-8                              # issue 16
SRC = "J_t w^2 -+ J_p Omega w - k = 0 (exact)"


def disc_on_spring(speed: float) -> tuple[fm.Model, fm.RigidBody]:
    """The model of the module docstring with the disc driven at ``speed`` (rad/s), and the disc."""
    model = fm.Model(dim=3)
    root, tip = model.add_nodes(np.array([[0.0, 0.0, 0.0], [0.0, 0.0, SPRING_LENGTH]]))
    # massless spring beam; EA and GJ only keep its unused directions stiff
    model.add_beam3d([[root, tip]], EA=1e3 * EI / SPRING_LENGTH**2, GJ=EI, EI_y=EI, EI_z=EI,
                     y_axis=(0.0, 1.0, 0.0), name="spring")
    model.fix(root)
    model.fix(tip, ["ux", "uy", "uz", "rz"])
    disc = model.add_rigid_body([0.0, 0.0, SPRING_LENGTH], DISC_MASS, [J_T, J_T, J_P], name="disc")
    model.add_joint("revolute", tip, disc, axis=[0.0, 0.0, 1.0], drive=lambda t: speed * t, name="spin")
    return model, disc


def linearized(speed: float) -> fm.LinearizedSystem:
    """Linearization about the steady spin at t = 0: at rest in the reference configuration but for
    the disc's angular velocity."""
    model, disc = disc_on_spring(speed)
    asm = fm.Assembly(model)
    v = np.zeros(asm.n_dof)
    v[asm.dofs.index(disc.node, "rz")] = speed
    return fm.linearize(asm, v=v)


def whirl_exact(speed: float) -> tuple[float, float]:
    """(forward, backward) whirl frequencies (rad/s) of the closed form."""
    root = np.sqrt((J_P * speed) ** 2 + 4.0 * J_T * SPRING)
    return (J_P * speed + root) / (2.0 * J_T), (-J_P * speed + root) / (2.0 * J_T)


def run(quick: bool = False) -> CaseReport:
    report = CaseReport(CASE)
    speeds = QUICK_SPEEDS if quick else SPEEDS
    measured = {}
    for speed in speeds:
        modes = linearized(speed).eigen()
        if modes.eigenvalues.size != 2:
            raise RuntimeError(f"expected the two whirl modes at Omega = {speed}, got s = {modes.eigenvalues}")
        backward, forward = np.sort(modes.omega)
        fwd_ref, bwd_ref = whirl_exact(speed)
        report.add(Check.close(f"forward whirl at Omega = {speed:g} rad/s (rad/s)", forward, fwd_ref, BOUND, SRC))
        report.add(Check.close(f"backward whirl at Omega = {speed:g} rad/s (rad/s)", backward, bwd_ref, BOUND, SRC))
        report.add(Check.close(f"w_f w_b at Omega = {speed:g} rad/s (rad^2/s^2)", forward * backward,
                               SPRING / J_T, BOUND, "w_f w_b = k / J_t (exact)"))
        # the same disc seen from a frame spinning with it: the whirls shift by -+ Omega (a double pair when
        # J_p = 2 J_t); checks the rotating-frame path (spin=...) of a rigid body against the inertial one
        model, _ = disc_on_spring(speed)
        frame = ([0.0, 0.0, 1.0], speed, (0.0, 0.0, 0.0))
        rotating = np.sort(fm.linearize(model, u=fm.relative_equilibrium(model, frame), spin=frame)
                           .eigen().omega)
        shift = float(np.abs(rotating - np.array([fwd_ref - speed, bwd_ref + speed])).max()) / bwd_ref
        report.add(Check.at_most(f"rotating frame at Omega = {speed:g}: max |w_r - (w_f - Omega, w_b + Omega)| / w_b",
                                 shift, BOUND, "whirl seen from the spinning frame (exact)"))
        measured[f"{speed:g}"] = {"forward_rad_s": forward, "backward_rad_s": backward,
                                  "max_real_part": float(np.abs(modes.real_parts).max()),
                                  "rotating_frame_rad_s": rotating.tolist()}
    diagram = fm.campbell(linearized, CAMPBELL_SPEEDS[::5] if quick else CAMPBELL_SPEEDS, n_modes=2)
    exact = np.array([sorted(whirl_exact(w)) for w in diagram.speeds])                   # (n_speeds, 2)
    campbell_error = float(np.abs(np.sort(np.asarray(diagram.frequencies_hz) * 2.0 * np.pi, axis=1)
                                  - exact).max() / exact.min())
    report.add(Check.at_most("Campbell diagram: max |w - w_exact| / min w_exact over its speeds", campbell_error,
                             BOUND, SRC))
    # speeds at which campbell's mode 1 is on the forward branch: tracking by the state-shape MAC keeps
    # it on one branch at every speed but the first, degenerate one (at rest the two whirls coincide)
    tracked = np.asarray(diagram.frequencies_hz)[:, 0] * 2.0 * np.pi
    forward_speeds = [float(w) for w, f, e in zip(diagram.speeds, tracked, exact) if w > 0 and f > e.mean()]
    spinning = int(np.count_nonzero(diagram.speeds > 0))
    same_branch = max(len(forward_speeds), spinning - len(forward_speeds)) / spinning
    report.add(Check.at_least("Campbell diagram: share of spinning speeds with tracked mode 1 on one whirl branch",
                              same_branch, 1.0, "forward and backward whirl are different modes"))
    report.n_dof = fm.Assembly(disc_on_spring(0.0)[0]).n_dof
    report.n_steps = len(speeds) + len(diagram.speeds)
    report.info.update({"J_t_kg_m2": J_T, "J_p_kg_m2": J_P, "k_N_m_per_rad": SPRING, "whirl": measured,
                        "campbell": diagram.to_dict(), "campbell_mode_1_forward_at": forward_speeds})
    report.figure = _figure(diagram)
    return report


def _figure(diagram):
    from flexmb.viz.plots import panels

    fig, (ax,) = panels(1, "Spinning disc on a rotational spring (J_p = 2 J_t)", width=6.0, height=4.2)
    fine = np.linspace(0.0, 10.0, 201)
    exact = np.array([whirl_exact(w) for w in fine])
    ax.plot(fine, exact[:, 0], "k-", lw=0.8, label="closed form: forward")
    ax.plot(fine, exact[:, 1], "k--", lw=0.8, label="closed form: backward")
    freq = np.asarray(diagram.frequencies_hz) * 2.0 * np.pi
    for k, marker in enumerate("os"):
        ax.plot(diagram.speeds, freq[:, k], marker, ms=4, mfc="none", color=f"C{k}",
                label=f"flexmb, fm.campbell, tracked mode {k + 1}")
    ax.plot(fine, fine, ":", color="grey", lw=0.8, label="w = Omega")
    ax.set_xlabel("Omega (rad/s)")
    ax.set_ylabel("whirl frequency (rad/s)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
