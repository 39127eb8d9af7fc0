"""Asymmetric Jeffcott rotor in rotating coordinates: instability between the two critical speeds
(:func:`flexmb.linearize` with ``spin``, :func:`flexmb.campbell`).

A point mass m on a shaft whose stiffness differs in two directions fixed to the shaft (k_x, k_y),
spinning at Omega. In coordinates (x, y) turning with the shaft (references README, Wave 2 B;
e.g. Genta, Dynamics of Rotating Systems, 2005, sec. 4.7; Crandall & Brosens 1961):

    x'' - 2 Omega y' + (w_x^2 - Omega^2) x = 0,
    y'' + 2 Omega x' + (w_y^2 - Omega^2) y = 0,        w_x^2 = k_x / m,  w_y^2 = k_y / m,

so s^4 + (w_x^2 + w_y^2 + 2 Omega^2) s^2 + (w_x^2 - Omega^2)(w_y^2 - Omega^2) = 0. The product of
the roots s^2 is negative exactly for w_x < Omega < w_y: one positive real root s there (an
unstable, non-oscillating mode), and purely imaginary roots outside.

Model (2D, w_x = 1 rad/s, w_y = sqrt(2) rad/s, m = 1 kg): a rigid hub at the origin driven at
constant speed Omega by a revolute joint; two massless trusses from hub points (a, 0) and (0, a)
(``attach``) to a node at the axis carrying the point mass, their axial stiffnesses EA/a = k_x
and k_y. Unstressed trusses have no transverse stiffness, so each holds the mass along its own
direction only. The mass at the axis feels no centrifugal force: the reference state is the
relative equilibrium. In the frame turning with the hub (``spin=(None, Omega, (0, 0))``) the
drive becomes a fixed constraint and flexmb's M, C = 2 M W, K + M W^2 on the two free
coordinates are the equations above.

Checked:

* the largest real part at Omega = 1.2 rad/s equals the positive root of the quartic,
  sqrt((-(b) + sqrt(b^2 - 4c)) / 2) = 0.20399 1/s, within 1e-6 (issue 16; measured 1e-15);
* a sweep over Omega = 0.3 ... 2.0 with speeds at 3 % inside and outside both critical speeds:
  the stability flag of every speed is the closed form's (stable outside (w_x, w_y));
* real parts and frequencies |Im s| of all speeds against the roots of the quartic (1e-6 of w_y);
* the Campbell diagram (MAC-tracked) is drawn with the closed-form curves.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.validation import CaseReport, Check, print_report

CASE = "jeffcott-asymmetric"
TITLE = "Asymmetric Jeffcott rotor: unstable between the critical speeds (rotating frame)"
SOURCE = "quartic of the asymmetric rotor in rotating coordinates, exact (Crandall & Brosens 1961)"

MASS = 1.0                                   # kg
W_X, W_Y = 1.0, np.sqrt(2.0)                 # rad/s
ARM = 0.5                                    # m, distance of the truss anchors from the axis
HUB_MASS, HUB_INERTIA = 2.0, 0.1             # kg, kg m^2 (eliminated by the drive)
OMEGA_CHECK = 1.2                            # rad/s
REAL_PART_BOUND = 1e-6                       # issue 16
SWEEP_BOUND = 1e-6                           # of w_y, every speed's roots
SWEEP = (0.3, 0.6, 0.9, 0.97, 1.03, 1.1, 1.2, 1.3, 1.37, 1.46, 1.6, 2.0)
QUICK_SWEEP = (0.5, 0.97, 1.03, 1.2, 1.37, 1.46, 2.0)
CAMPBELL_SPEEDS = np.linspace(0.0, 2.0, 41)
SRC = "s^4 + (wx^2 + wy^2 + 2 Omega^2) s^2 + (wx^2 - Omega^2)(wy^2 - Omega^2) = 0 (exact)"


def rotor(speed: float) -> fm.Model:
    """The rotor of the module docstring, its hub driven at ``speed`` (rad/s)."""
    model = fm.Model(dim=2)
    hub = model.add_rigid_body([0.0, 0.0], HUB_MASS, HUB_INERTIA, name="hub")
    model.add_joint("revolute", None, hub, at=[0.0, 0.0], drive=lambda t: speed * t, name="drive")
    centre = model.add_node([0.0, 0.0])
    model.add_point_mass(centre, MASS)
    anchors = [model.add_node([ARM, 0.0]), model.add_node([0.0, ARM])]
    for anchor in anchors:
        model.attach(anchor, hub)
    for anchor, w, direction in zip(anchors, (W_X, W_Y), "xy"):
        model.add_truss([[anchor, centre]], EA=MASS * w**2 * ARM, name=f"spring {direction}")   # k = EA / a
    return model


def spin(speed: float) -> tuple[None, float, tuple[float, float]]:
    return (None, speed, (0.0, 0.0))


def exact_roots(speed: float) -> np.ndarray:
    """The four roots s of the quartic (complex)."""
    b = W_X**2 + W_Y**2 + 2.0 * speed**2
    c = (W_X**2 - speed**2) * (W_Y**2 - speed**2)
    return np.roots([1.0, 0.0, b, 0.0, c])


def modes_at(speed: float) -> fm.LinearModes:
    # the mass sits on the axis: the reference state is the relative equilibrium (no centrifugal load)
    return fm.linearize(rotor(speed), spin=spin(speed)).eigen()


def run(quick: bool = False) -> CaseReport:
    report = CaseReport(CASE)
    modes = modes_at(OMEGA_CHECK)
    exact = exact_roots(OMEGA_CHECK)
    report.add(Check.close(f"largest real part at Omega = {OMEGA_CHECK} rad/s (1/s)", float(modes.real_parts.max()),
                           float(exact.real.max()), REAL_PART_BOUND, SRC))
    speeds = np.array(QUICK_SWEEP if quick else SWEEP)
    wrong_flags, worst, sweep = [], 0.0, []
    for speed in speeds:
        m = modes_at(speed)
        roots = exact_roots(speed)
        unstable_exact = W_X < speed < W_Y
        if m.is_stable == unstable_exact:
            wrong_flags.append(float(speed))
        # every returned s (one of each conjugate pair) is a root of the quartic, and every root is
        # one of the returned s up to the symmetries of an undamped gyroscopic system (-s, conj s)
        s = m.eigenvalues
        images = np.r_[s, -s, s.conj(), -s.conj()]
        miss = np.r_[np.abs(s[:, None] - roots[None, :]).min(axis=1),
                     np.abs(roots[:, None] - images[None, :]).min(axis=1)]
        worst = max(worst, float(miss.max()) / W_Y)
        sweep.append({"Omega": float(speed), "stable": bool(m.is_stable), "max_real": float(m.real_parts.max()),
                      "frequencies_hz": m.frequencies_hz.tolist()})
    report.add(Check.at_most("speeds whose stability flag differs from wx < Omega < wy", len(wrong_flags), 0,
                             "unstable exactly for wx < Omega < wy (exact)"))
    report.add(Check.at_most("max |s - s_exact| / wy over the sweep", worst, SWEEP_BOUND, SRC))
    diagram = fm.campbell(rotor, CAMPBELL_SPEEDS[::4] if quick else CAMPBELL_SPEEDS, n_modes=2,
                          spin=(None, (0.0, 0.0)))
    report.n_dof = fm.Assembly(rotor(0.0)).n_dof
    report.n_steps = speeds.size + 1 + len(diagram.speeds)
    report.info.update({"w_x_rad_s": W_X, "w_y_rad_s": W_Y, "mass_kg": MASS, "sweep": sweep,
                        "wrong_flags_at": wrong_flags, "campbell": diagram.to_dict()})
    report.figure = _figure(diagram)
    return report


def _figure(diagram):
    from flexmb.viz.plots import panels

    fig, (ax1, ax2) = panels(2, "Asymmetric Jeffcott rotor, rotating frame (wx = 1, wy = sqrt 2 rad/s)",
                             width=5.5, height=4.0)
    fine = np.linspace(0.0, 2.0, 401)
    exact = np.array([np.sort(np.unique(np.round(np.abs(exact_roots(w).imag), 12)))[-2:] for w in fine])
    real = np.array([exact_roots(w).real.max() for w in fine])
    omega = np.asarray(diagram.speeds)
    freq = np.asarray(diagram.frequencies_hz) * 2.0 * np.pi
    for k in range(freq.shape[1]):
        ax1.plot(omega, freq[:, k], "o", ms=3, mfc="none", label=f"flexmb mode {k + 1} (tracked)")
        ax2.plot(omega, np.asarray(diagram.real_parts)[:, k], "o", ms=3, mfc="none", label=f"flexmb mode {k + 1}")
    ax1.plot(fine, exact, "k-", lw=0.8)
    ax2.plot(fine, real, "k-", lw=0.8, label="quartic, max Re s")
    for ax in (ax1, ax2):
        ax.axvspan(W_X, W_Y, color="C3", alpha=0.08)
        ax.set_xlabel("Omega (rad/s)")
        ax.grid(True, alpha=0.3)
    ax1.set_ylabel("|Im s| (rad/s), rotating frame")
    ax2.set_ylabel("Re s (1/s)")
    ax1.legend(fontsize=7)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
