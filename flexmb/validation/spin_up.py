"""Planar spin-up of a beam with a prescribed hub angle (Meijaard 1993, section 5.1), shared by the
validation cases ``spin-up-kim-haug`` and ``spin-up-simo``.

A straight beam of length L, clamped to a hub at the origin, is accelerated from rest to the
angular velocity omega_s in the time T_s by the prescribed hub angle

    psi(t) = (omega_s / T_s) [t^2 / 2 + (T_s / (2 pi))^2 (cos(2 pi t / T_s) - 1)],   0 <= t <= T_s,
    psi(t) = omega_s (t - T_s / 2),                                                  t > T_s,

so psi' = (omega_s / T_s) [t - (T_s / (2 pi)) sin(2 pi t / T_s)] and
psi'' = (omega_s / T_s) (1 - cos(2 pi t / T_s)): psi, psi', psi'' and psi''' are continuous at
T_s, where psi = omega_s T_s / 2 and psi' = omega_s.

Model (2D): n equal :class:`~flexmb.elements.beam2d.Beam2D` elements along x; the root node has
ux = uy = 0 and the prescribed rotation rz = psi(t) (the clamp turns with the hub); the beam
starts at rest, undeformed (psi, psi' and psi'' vanish at t = 0). The element is Meijaard's
planar beam, ``Beam2D(mass="cubic", second_order=True)``: cubic (Hermitian) consistent
translational mass turned with the nodal rotations (energy-conserving discrete-gradient
mid-point inertia in director form, :mod:`flexmb.elements.hermite_mass2d`), rotary inertia rho_I l0 / 2 lumped at
each node, and the second-order elongation l - l0 + l0/30 (2 tb1^2 - tb1 tb2 + 2 tb2^2), whose
geometric stiffness carries the centrifugal stiffening inside each element. Axial deformation
and rotary inertia are included (rho_I / (rho_A L^2) <= 5e-6, negligible); shear deformation is
not (Euler-Bernoulli; 3 EI / (GA_k L^2) = 4e-5 for Simo's beam). Mid-point scheme to t = 20 s,
dt = 0.005 s (quick: 0.02 s); the lumped and linear consistent masses are run with 2 and 4
elements at the same step for comparison (``mass_comparison``). The large step dt = 0.08 s (0.48
rad of hub per step at the end) must hold with 2 and 4 elements: no Newton failure, no cut-back,
the energy balance exact (``large_step``); the time-step study (``time_step_study``) shows the
largest robust step of the mid-point scheme and of Newmark.

Output: the tip's lateral deflection, the component of the tip position normal to the hub's
rotated axis, d = x_tip . (-sin psi, cos psi) (negative: the tip lags behind). Checked: its
extreme (minimum) over 0-20 s, refined by the parabola through the three samples around the
smallest one, and for Simo's case the residual vibration amplitude (max - min) / 2 for t > T_s.

References: Meijaard (1993), section 5.1, Figs. 3-4 (4 and 2 elements, his cubic beam element);
independent converged values (Exudyn 1.13.6, refs README item 6): Simo's case extreme -0.57384 m,
residual amplitude 0.00365 m; Kim & Haug's case extreme -0.53377 m.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

import flexmb as fm
from flexmb.analysis.signals import mean_period
from flexmb.integrators import TimeIntegrationError
from flexmb.validation.report import CaseReport, Check
from flexmb.validation.slider_crank import _pct, lowest_frequency, parabola_vertex, run_stats, time_step_study

T_END = 20.0              # s
FINE_MESH = 16            # elements of the mesh-converged run
MASS = "cubic"            # Meijaard's element; see mass_reason in run_case
OTHER_MASSES = ("lumped", "consistent")
DT = {False: 0.005, True: 0.02}     # s (full, quick)
FINE_DT = DT                        # s, the 16-element mesh (full, quick)
LARGE_DT = 0.08                     # s: the large step that must hold with 2 and 4 elements
#: schemes run at LARGE_DT and in the time-step study
LARGE_STEP_SCHEMES = ("mid-point", "composed-mid-point")
STUDY_SCHEMES = ("mid-point", "composed-mid-point", "newmark")
STUDY_CUTBACKS = 0        # time-step study: fixed steps, a step that does not converge ends the run
SOURCE_CONVERGED = "independent converged value (Exudyn, refs README item 6)"


def hub_angle(t: float, omega_s: float, t_s: float) -> float:
    """Prescribed hub angle psi(t) (rad); zero before t = 0."""
    if t <= 0.0:
        return 0.0
    if t <= t_s:
        return omega_s / t_s * (0.5 * t**2 + (t_s / (2.0 * np.pi))**2 * (np.cos(2.0 * np.pi * t / t_s) - 1.0))
    return omega_s * (t - 0.5 * t_s)


def hub_rate(t: float, omega_s: float, t_s: float) -> float:
    """psi'(t) (rad/s)."""
    if t <= 0.0:
        return 0.0
    if t <= t_s:
        return omega_s / t_s * (t - t_s / (2.0 * np.pi) * np.sin(2.0 * np.pi * t / t_s))
    return omega_s


@dataclass(frozen=True)
class SpinUpBeam:
    """A beam of Meijaard's section 5.1 with its reference values."""

    case: str
    length: float                    # m
    EA: float                        # N
    EI: float                        # N m^2
    rho_A: float                     # kg/m
    rho_I: float                     # kg m
    omega_s: float                   # rad/s
    t_s: float                       # s
    reference: dict[int, float]      # elements -> Meijaard's extreme tip deflection (m)
    converged: float                 # independent converged extreme (m)
    figure_source: str
    residual_amplitude: float | None = None            # Meijaard (m)
    converged_residual_amplitude: float | None = None  # independent (m)

    def psi(self, t: float) -> float:
        return hub_angle(t, self.omega_s, self.t_s)


def build(beam: SpinUpBeam, n_elements: int, mass: str = MASS) -> tuple[fm.Assembly, np.ndarray]:
    """Assembly and the beam's node indices (root first)."""
    model = fm.Model(dim=2)
    x = np.linspace(0.0, beam.length, n_elements + 1)
    nodes = model.add_nodes(np.c_[x, np.zeros_like(x)])
    model.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=beam.EA, EI=beam.EI, rho_A=beam.rho_A, rho_I=beam.rho_I,
                     mass=mass, name="beam", second_order=True)
    model.fix(nodes[0], ["ux", "uy"])
    model.prescribe(nodes[0], "rz", beam.psi)
    return fm.Assembly(model), nodes


def tip_deflection(beam: SpinUpBeam, t: np.ndarray, tip: np.ndarray) -> np.ndarray:
    """Lateral tip deflection (n,) from times (n,) and tip positions (n, 2): the component normal
    to the hub's rotated axis, positive in the direction of rotation."""
    psi = np.array([beam.psi(x) for x in t])
    return -tip[:, 0] * np.sin(psi) + tip[:, 1] * np.cos(psi)


def extreme(t: np.ndarray, d: np.ndarray) -> tuple[float, float]:
    """(t, d) of the smallest deflection, refined by a parabola through three samples."""
    k = int(np.argmin(d))
    tk, dk = parabola_vertex(t, -d, k)
    return tk, -dk


def residual_amplitude(beam: SpinUpBeam, t: np.ndarray, d: np.ndarray) -> float:
    """(max - min) / 2 of the deflection for t > T_s (m)."""
    after = t > beam.t_s
    return float(0.5 * (d[after].max() - d[after].min())) if after.any() else float("nan")


@dataclass
class SpinRun:
    """One simulation: time and tip-deflection series, extreme, residual amplitude, statistics."""

    n_elements: int
    mass: str
    scheme: str
    dt: float
    t: np.ndarray = field(repr=False)
    deflection: np.ndarray = field(repr=False)
    extreme: float
    extreme_time: float
    amplitude: float
    residual_frequency: float        # rad/s, of the vibration after T_s (zero crossings)
    stats: dict
    n_dof: int
    failed: str | None = None


def simulate(beam: SpinUpBeam, n_elements: int, dt: float, scheme: str = "mid-point", mass: str = MASS,
             max_cutbacks: int = 6) -> SpinRun:
    """Integrate to T_END; a failed run keeps what it computed (extreme and amplitude NaN)."""
    asm, nodes = build(beam, n_elements, mass)
    failed = None
    start = time.perf_counter()
    try:
        h = fm.integrate(asm, dt, T_END, scheme=scheme, progress=False, max_cutbacks=max_cutbacks)
    except TimeIntegrationError as exc:
        h, failed = exc.history, str(exc).splitlines()[0]
    t = np.array(h.t)
    d = tip_deflection(beam, t, h.positions()[:, nodes[-1]])
    t_ex, d_ex = extreme(t, d) if failed is None else (float("nan"), float("nan"))
    amp = residual_amplitude(beam, t, d) if failed is None else float("nan")
    after = t > beam.t_s
    freq = 2.0 * np.pi / mean_period(t[after], d[after] - d[after].mean()) if failed is None else float("nan")
    return SpinRun(n_elements, mass, scheme, dt, t, d, d_ex, t_ex, amp, freq,
                   run_stats(h, time.perf_counter() - start), asm.n_dof, failed)


def cantilever_frequency(beam: SpinUpBeam, n_elements: int, mass: str) -> float:
    """Lowest bending frequency (rad/s) of the non-rotating cantilever model."""
    asm, _ = build(beam, n_elements, mass)
    return lowest_frequency(asm)


def run_case(beam: SpinUpBeam, quick: bool, study: bool = False) -> CaseReport:
    """Runs with 2, 4 and 16 elements (cubic mass), the other two masses with 2 and 4 elements,
    checks, information, figure; with ``study`` the time-step study (full: dt = 0.16 ... 0.005 s;
    quick: 0.04 and 0.02 s)."""
    dt, fine_dt = DT[quick], FINE_DT[quick]
    runs = {n: simulate(beam, n, dt) for n in (2, 4)}
    runs[FINE_MESH] = simulate(beam, FINE_MESH, fine_dt)
    other_runs = {(m, n): simulate(beam, n, dt, mass=m) for m in OTHER_MASSES for n in (2, 4)}
    n_steps = int(round(T_END / dt)) * (len(runs) - 1 + len(other_runs)) + int(round(T_END / fine_dt))
    report = CaseReport(beam.case, n_dof=runs[FINE_MESH].n_dof, n_steps=n_steps)
    src = f"Meijaard 1993, sec. 5.1, {beam.figure_source}"
    for n in (4, 2):
        report.add(Check.close(f"{n} el.: extreme tip deflection (m)", runs[n].extreme, beam.reference[n], 1e-2, src))
    if beam.residual_amplitude is not None:
        report.add(Check.close(f"4 el.: residual amplitude t > {beam.t_s:g} s (m)", runs[4].amplitude,
                               beam.residual_amplitude, 0.2, src))
    fine = runs[FINE_MESH]
    report.add(Check.close(f"{FINE_MESH} el.: extreme tip deflection (mesh converged) (m)", fine.extreme,
                           beam.converged, 1e-2, SOURCE_CONVERGED))
    if beam.converged_residual_amplitude is not None:
        report.add(Check.close(f"{FINE_MESH} el.: residual amplitude (mesh converged) (m)", fine.amplitude,
                               beam.converged_residual_amplitude, 0.2, SOURCE_CONVERGED))
    large = {(scheme, n): simulate(beam, n, LARGE_DT, scheme, max_cutbacks=0)
             for scheme in LARGE_STEP_SCHEMES for n in (2, 4)}
    report.n_steps += len(large) * int(round(T_END / LARGE_DT))
    for (scheme, n), r in large.items():
        report.add(Check.at_least(f"{n} el., {scheme}, dt = {LARGE_DT:g} s: time reached, no cut-back (s)",
                                  float(r.t[-1]), T_END - 0.5 * LARGE_DT,
                                  "large steps must hold (energy-conserving scheme)"))
        # the mid-point scheme's own time error at 0.48 rad per step: 1.2-1.4 %, as with linear mass;
        # composed to fourth order it is below 0.2 % (the rest is the mesh's error)
        report.add(Check.close(f"{n} el., {scheme}, dt = {LARGE_DT:g} s: extreme tip deflection (m)", r.extreme,
                               beam.converged, 2e-2 if scheme == "mid-point" else 1e-2, SOURCE_CONVERGED))
    length = beam.length
    exact_frequency = 1.8751**2 * np.sqrt(beam.EI / (beam.rho_A * length**4))
    ref = beam.reference
    lumped, linear = other_runs[("lumped", 2)], other_runs[("consistent", 2)]
    info: dict = {
        "EA_N": beam.EA, "EI_N_m2": beam.EI, "rho_A_kg_m": beam.rho_A, "rho_I_kg_m": beam.rho_I,
        "length_m": length, "omega_s_rad_s": beam.omega_s, "T_s_s": beam.t_s,
        "initial_state": "at rest, undeformed (psi, psi', psi'' are zero at t = 0)",
        "scheme": "mid-point", "dt_s": dt, f"dt_s_{FINE_MESH}_elements": fine_dt, "t_end_s": T_END,
        "element": "Beam2D(mass='cubic', second_order=True): Meijaard's planar beam element",
        "mass": MASS,
        "mass_reason": ("Meijaard's element has the cubic (Hermitian) consistent mass: the distributed inertia "
                        "load of the spin-up reaches the nodes with the end moments of the cubic shape, so each "
                        "element bends under it as a beam does, and its rigid-motion kinetic energy is exact; "
                        "Beam2D's cubic mass is turned with the nodes and integrated in director form, energy "
                        "conserving (energy_error_max) and stable at large steps (large_step)"),
        "extreme": {f"{n} el., {MASS}": {"value_m": r.extreme, "time_s": r.extreme_time,
                                          "residual_amplitude_m": r.amplitude,
                                          "residual_frequency_rad_s": r.residual_frequency,
                                          "rel_error_vs_converged": abs(r.extreme / beam.converged - 1.0),
                                          **({"rel_error_vs_Meijaard": abs(r.extreme / ref[n] - 1.0)}
                                             if n in ref else {}), **r.stats}
                    for n, r in runs.items()},
        "mass_comparison": {
            "explanation": (
                f"same runs with the lumped and the linear consistent translational mass: extreme with 2 "
                f"elements {lumped.extreme:.4f} m ({_pct(lumped.extreme, ref[2])}) and {linear.extreme:.4f} m "
                f"({_pct(linear.extreme, ref[2])}) against Meijaard's {ref[2]} m, with 4 elements "
                f"{other_runs[('lumped', 4)].extreme:.4f} m ({_pct(other_runs[('lumped', 4)].extreme, ref[4])}) "
                f"and {other_runs[('consistent', 4)].extreme:.4f} m "
                f"({_pct(other_runs[('consistent', 4)].extreme, ref[4])}); the cubic mass gives "
                f"{runs[2].extreme:.4f} m ({_pct(runs[2].extreme, ref[2])}) and {runs[4].extreme:.4f} m "
                f"({_pct(runs[4].extreme, ref[4])}). Lumped and linear mass load the nodes without the "
                "element's bending shape, and the lumped mass moves half of the last element's mass to the "
                "tip: the coarse meshes deflect too much and converge O(h^2) to the converged value; "
                "Meijaard's element, like Beam2D's cubic mass, is accurate with 2-4 elements"),
            **{f"{n} el., {m}": {"value_m": r.extreme, "residual_amplitude_m": r.amplitude,
                                 "residual_frequency_rad_s": r.residual_frequency,
                                 "rel_error_vs_Meijaard": abs(r.extreme / ref[n] - 1.0), "wall_s": r.stats["wall_s"]}
               for (m, n), r in [*(((MASS, n), runs[n]) for n in (2, 4)), *other_runs.items()]}},
        "residual_amplitude_note": ("the vibration after T_s is the response to the hub acceleration pulse at "
                                    "the beam's first frequency in the hub frame (residual_frequency_rad_s); "
                                    "its amplitude follows the pulse spectrum |F(omega)| / omega^2, "
                                    "F(omega) = int_0^T_s psi''(t) exp(-i omega t) dt, which falls steeply "
                                    "there, so a few per cent of frequency error (mesh, or the mid-point "
                                    "scheme's period elongation at large steps) changes it by tens of per cent"),
        "cantilever_frequency_rad_s": {"exact (not rotating)": exact_frequency,
                                       **{f"{n} el., {m}": cantilever_frequency(beam, n, m)
                                          for n in (2, 4, FINE_MESH) for m in (MASS, *OTHER_MASSES)}},
        "Meijaard_reference_m": {f"{n} el.": v for n, v in ref.items()},
        "converged_reference_m": {"extreme": beam.converged, "residual_amplitude": beam.converged_residual_amplitude,
                                  "source": SOURCE_CONVERGED},
        "large_step": {
            "dt_s": LARGE_DT, "max_cutbacks": 0,
            "note": ("the hub turns by up to 0.48 rad per step; the error of the extreme is the mid-point "
                     "scheme's time error (the linear-mass beam has the same 1.4 % at this step), not a "
                     "failure of the cubic mass. The composed mid-point scheme (fourth order, five sub-steps "
                     "per step) removes that time error at the same step; what remains is the mesh's error "
                     "(2 el.: 0.2 %)"),
            **{f"{n} el., {scheme}": {"value_m": r.extreme,
                                      "rel_error_vs_converged": abs(r.extreme / beam.converged - 1.0),
                                      "failed": r.failed, **r.stats} for (scheme, n), r in large.items()}},
    }
    if study:
        info["time_step_study"] = _study(beam, quick, {(4, "mid-point", round(dt, 12)): runs[4],
                                                       (FINE_MESH, "mid-point", round(fine_dt, 12)): runs[FINE_MESH]})
    report.info.update(info)
    report.figure = _figure(beam, runs, other_runs, info.get("time_step_study"))
    return report


def _study(beam: SpinUpBeam, quick: bool, done: dict[tuple[int, str, float], SpinRun]) -> dict:
    """Time-step study of the 4-element extreme against Meijaard's 4-element value, and (full mode)
    of the 16-element one against the independent converged value."""
    steps = [0.16, 0.08, 0.04, 0.02] if quick else [0.16 / 2**k for k in range(6)]
    meshes = [(4, beam.reference[4], f"Meijaard 1993, sec. 5.1, {beam.figure_source}")]
    if not quick:
        meshes.append((FINE_MESH, beam.converged, SOURCE_CONVERGED))
    out = {"quantity": "extreme (minimum) tip deflection over 0-20 s (m)", "mass": MASS,
           "max_cutbacks": STUDY_CUTBACKS,
           "note": ("fixed steps without cut-back: a step that does not converge ends the run (value None, "
                    "'failed'); Newmark (trapezoidal, end-point) takes the cubic mass's inertia tangent by "
                    "finite differences. Newmark fails late in the spin-up (t ~ 10-12 s, hub at 4-5 rad/s) at "
                    "large steps, by its known energy growth in co-rotational dynamics (also with linear mass); "
                    "the mid-point scheme runs every step of the study (director form of the cubic mass; "
                    "before it, 2-4 elements failed at t = 11-14 s for dt >= 0.04 s), and so does the composed "
                    "mid-point scheme (fourth order), whose time error is below the mesh's from dt = 0.16 s")}
    for n, ref, src in meshes:
        def quantity(scheme: str, dt: float, n=n) -> tuple[float | None, dict]:
            r = done.get((n, scheme, round(dt, 12))) or simulate(beam, n, dt, scheme, max_cutbacks=STUDY_CUTBACKS)
            stats = dict(r.stats, failed=r.failed, residual_amplitude_m=r.amplitude)
            return (None if r.failed else r.extreme), stats

        table = time_step_study(quantity, steps, ref, STUDY_SCHEMES)
        table["reference_source"] = src
        out[f"{n} elements"] = table
    return out


def _figure(beam: SpinUpBeam, runs: dict[int, SpinRun], other_runs: dict[tuple[str, int], SpinRun],
            study: dict | None):
    from flexmb.validation.slider_crank import _study_panel
    from flexmb.viz.plots import COMPUTED_ALPHA, legend_outside, panels

    # two lines: the title must fit over two panels (--quick) as well as three
    fig, axes = panels(3 if study else 2, f"Spin-up, {beam.case} (Meijaard 1993, {beam.figure_source}): "
                       f"L = {beam.length:g} m, omega_s = {beam.omega_s:g} rad/s, T_s = {beam.t_s:g} s\n"
                       "Beam2D, cubic mass, second-order strain", height=5.2)
    ax, ax2 = axes[0], axes[1]
    styles = {2: dict(ls="--", color="C0"), 4: dict(ls="-", color="C1"), FINE_MESH: dict(ls="-", color="0.5", lw=0.8)}
    for n, r in runs.items():
        ax.plot(r.t, r.deflection, label=f"{n} elements, {MASS} mass", alpha=COMPUTED_ALPHA, **styles[n])
        ax.plot(r.extreme_time, r.extreme, "o", color=styles[n]["color"], ms=4)
        after = r.t >= beam.t_s - 1.0
        ax2.plot(r.t[after], r.deflection[after], **styles[n])
    for (m, n), r in other_runs.items():
        ax.plot(r.t, r.deflection, lw=0.7, color=styles[n]["color"], ls=":" if m == "lumped" else "-.",
                label=f"{n} el., {m} mass")
    # the references on top of the curves they are compared with
    for n, v in beam.reference.items():
        ax.axhline(v, color=styles[n]["color"], lw=1.0, ls=(0, (2, 2)), label=f"Meijaard 1993, {n} el.: {v} m",
                   zorder=11)
    ax.axhline(beam.converged, color="k", lw=0.8, ls="-.", label=f"converged (Exudyn): {beam.converged} m",
               zorder=11)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("lateral tip deflection (m)")
    ax.grid(True, alpha=0.3)
    legend_outside(ax, 7, ncol=2)
    if beam.residual_amplitude is not None:
        for s in (1.0, -1.0):
            ax2.axhline(s * beam.residual_amplitude, color="C1", lw=1.0, ls=(0, (2, 2)), zorder=11)
    ax2.axvline(beam.t_s, color="k", lw=0.7)
    ax2.set_xlabel("time (s)")
    ax2.set_ylabel("lateral tip deflection (m)")
    ax2.set_title("residual vibration after T_s" + (" (dotted: +-Meijaard's amplitude)"
                                                    if beam.residual_amplitude is not None else ""), fontsize=9)
    ax2.grid(True, alpha=0.3)
    if study:
        _study_panel(axes[2], study, "extreme")
    fig.tight_layout()
    return fig
