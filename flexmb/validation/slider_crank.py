"""Slider-crank mechanism with a flexible connecting rod (Chu & Pan; Meijaard 1993, section 4),
shared by the validation cases ``slider-crank-a`` and ``slider-crank-b``; also the small helpers
the planar mechanism cases share (peak finding, time-step study, lowest natural frequency).

Model (2D). The crank (length r, rigid) turns about the origin at the constant speed omega,
crank angle theta = omega t; the slider moves on the x axis. The connecting rod (length L) is n
equal :class:`~flexmb.elements.beam2d.Beam2D` elements along x, from the crank pin (r, 0) to the
slider (r + L, 0) at theta = 0. The crank pin is the rod's first node, with prescribed motion

    ux(t) = r cos(omega t) - r,    uy(t) = r sin(omega t),    rz free (a pin);

the slider is the last node, uy = 0 (it stays on the slider line), ux and rz free, and in case B
it carries a point mass. Rod properties from the round section of diameter d:
A = pi d^2 / 4, I = pi d^4 / 64, EA, EI, rho_A = rho A and rho_I = rho I.

The element is Meijaard's planar beam: ``Beam2D(mass="cubic", second_order=True)``, the cubic
(Hermitian) consistent translational mass turned with the nodal rotations (energy-conserving
discrete-gradient mid-point inertia, :mod:`flexmb.elements.hermite_mass2d`), rotary inertia
rho_I l0 / 2 lumped at each node (as Meijaard's), and the second-order elongation
l - l0 + l0/30 (2 tb1^2 - tb1 tb2 + 2 tb2^2) that gives the element its own geometric stiffness.
Axial deformation and rotary inertia are included, as in Meijaard's 4-element reference model
("all effects included"); shear deformation is not (Euler-Bernoulli), negligible here:
E I / (G A k L^2) ~ 1e-4. Meijaard's 2-element model neglects normal (axial) and shear
deformation and rotary inertia (4 DOF); ours keeps axial deformation and rotary inertia, and
the JSON (``meijaard_2_element_model``) shows what dropping them changes: rho_I = 0 and a
1000 times larger EA (nearly inextensible), each about 1e-4 of the first maximum.

Rigid slider-crank kinematics (used for the initial velocities):

    sin phi = -(r / L) sin theta,          x_s = r cos theta + L cos phi,
    phi' = -r omega cos theta / (L cos phi),   x_s' = -r omega sin theta - L phi' sin phi,

phi the rod angle, x_s the slider position. The velocity of the rod point at distance s from
the pin is v(s) = v_P + phi' s (-sin phi, cos phi), v_P = r omega (-sin theta, cos theta).

Initial state: the crank at theta = 0 already turning at full speed, the rod straight and
undeformed with zero deformation rate, i.e. its nodes move with the rigid-body velocity field at
theta = 0: v(s) = (0, r omega (1 - s / L)), rotation rates phi' = -r omega / L, slider at rest.

Output: the lateral deflection of the rod's mid-span node relative to the chord between the rod's
end nodes, positive to the left of the chord directed from the crank pin to the slider, divided by
L. With this sign the first maximum is positive, as in Meijaard's Figs. 1-2. The first maximum is
taken as the first local maximum after the deflection has risen above 30 % of its largest value
over the first 2 rad of crank rotation, refined by the parabola through the three samples around it.

Runs: mid-point scheme, 8 rad of crank rotation in 2560 steps (dt = t_end / 2560); quick mode
simulates only the first 2.5 rad (which hold the first maximum, so its value is that of the full
run at the same step) with dt = t_end / 1280. The lumped and linear consistent masses are run
with 2 and 4 elements at the same step for comparison (``mass_comparison``).

References: Meijaard (1993), section 4, Table 3 and text (first maxima with 4 and 2 elements);
independent converged values (Exudyn 1.13.6, refs README item 6): case A 0.009762 at crank angle
0.690 rad, case B 0.013937 at 0.782 rad.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import flexmb as fm
from flexmb.integrators import TimeIntegrationError
from flexmb.validation.report import CaseReport, Check

CRANK = 0.1524            # m
ROD = 0.3048              # m
DIAMETER = 0.00635        # m
RHO = 7834.56             # kg/m^3
E = 2.06843e11            # Pa
AREA = np.pi * DIAMETER**2 / 4.0
INERTIA = np.pi * DIAMETER**4 / 64.0
EA, EI = E * AREA, E * INERTIA
RHO_A, RHO_I = RHO * AREA, RHO * INERTIA
ROD_MASS = RHO_A * ROD
CRANK_TURN = 8.0          # rad of crank rotation simulated
QUICK_TURN = 2.5          # rad simulated in quick mode (the first maximum lies in the first 2 rad)
STEPS = {False: 2560, True: 1280}   # steps per 8 rad (full, quick)
PEAK_WINDOW = 2.0         # rad: the first maximum is sought in the first 2 rad
PEAK_FRACTION = 0.3
FINE_MESH = 16            # elements of the mesh-converged run
MASS = "cubic"            # Meijaard's element; see mass_reason in run_case
OTHER_MASSES = ("lumped", "consistent")
STUDY_CUTBACKS = 0        # time-step study: fixed steps, a step that does not converge ends the run
SOURCE_TABLE = "Meijaard 1993, sec. 4, Table 3"
SOURCE_CONVERGED = "independent converged value (Exudyn, refs README item 6)"


# --------------------------------------------------------------- shared helpers
def parabola_vertex(x: np.ndarray, y: np.ndarray, k: int) -> tuple[float, float]:
    """Abscissa and value of the vertex of the parabola through samples k-1, k, k+1
    (equally spaced); the sample itself at either end of the series."""
    if k <= 0 or k >= len(y) - 1:
        return float(x[k]), float(y[k])
    ym, y0, yp = y[k - 1], y[k], y[k + 1]
    curvature = ym - 2.0 * y0 + yp
    if curvature == 0.0:
        return float(x[k]), float(y0)
    p = 0.5 * (ym - yp) / curvature                                  # in (-1/2, 1/2) at a peak
    return float(x[k] + p * (x[k + 1] - x[k])), float(y0 - 0.25 * (ym - yp) * p)


def first_maximum(x: np.ndarray, y: np.ndarray, window: float = PEAK_WINDOW,
                  fraction: float = PEAK_FRACTION) -> tuple[float, float]:
    """(x, y) of the first local maximum of y(x) after y has risen above ``fraction`` of its
    largest value over x <= x[0] + window, refined by a parabola; (nan, nan) if there is none."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    inside = x <= x[0] + window
    top = y[inside].max()
    if not top > 0.0:
        return float("nan"), float("nan")
    start = int(np.argmax(y >= fraction * top))
    for k in range(max(start, 1), len(y) - 1):
        if y[k] >= y[k - 1] and y[k] > y[k + 1]:
            return parabola_vertex(x, y, k)
    return float("nan"), float("nan")


def fitted_peak_abscissa(x: np.ndarray, y: np.ndarray, x_peak: float, half_width: float) -> float:
    """Abscissa of the vertex of the least-squares parabola through the samples within
    ``half_width`` of ``x_peak``: less sensitive to small ripple than the 3-sample vertex."""
    near = np.abs(np.asarray(x) - x_peak) <= half_width
    if near.sum() < 5:
        return float("nan")
    c2, c1, _ = np.polyfit(np.asarray(x)[near] - x_peak, np.asarray(y)[near], 2)
    return float(x_peak - 0.5 * c1 / c2) if c2 < 0 else float("nan")


def lowest_frequency(asm: fm.Assembly) -> float:
    """Lowest natural frequency (rad/s) of the free DOFs about the undeformed state (with the
    configuration-dependent mass, e.g. Beam2D's cubic mass, evaluated there)."""
    from scipy.linalg import eigh

    u = np.zeros(asm.n_dof)
    K = asm.free_matrix(asm.force_and_tangent(u)[1]).toarray()
    M = asm.free_matrix(asm.mass_data + asm.configuration_mass_data(u)).toarray()
    lam = eigh(0.5 * (K + K.T), M, eigvals_only=True)
    return float(np.sqrt(max(lam[0], 0.0)))


@dataclass
class StudyRow:
    """One run of a time-step study."""

    scheme: str
    dt: float
    value: float | None                 # the checked quantity; None if the run failed
    error_vs_reference: float | None    # relative to the study's reference value
    error_vs_finest: float | None       # relative to the finest mid-point step (time-converged)
    newton_iterations_mean: float | None
    cutbacks: int | None
    wall_s: float
    failed: str | None = None
    energy_error_max: float | None = None   # max |E - E(0)| / max K, see run_stats

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items()}


def largest_robust_step(rows: list[StudyRow]) -> float | None:
    """Largest dt such that the run at it and at every smaller step of the sequence reached the
    end (no Newton failure); None when even the smallest step failed."""
    best = None
    for row in sorted(rows, key=lambda r: r.dt):
        if row.value is None:
            break
        best = row.dt
    return best


def largest_passing_step(rows: list[StudyRow], key: str, tol: float = 1e-2) -> float | None:
    """Largest dt such that it and every smaller step of the sequence are within ``tol`` (``key``
    names the error column); None when even the smallest step misses."""
    best = None
    for row in sorted(rows, key=lambda r: r.dt):
        err = getattr(row, key)
        if err is None or not err <= tol:
            break
        best = row.dt
    return best


def time_step_study(quantity: Callable[[str, float], tuple[float | None, dict]], steps: list[float],
                    reference: float, schemes: tuple[str, ...] = ("mid-point", "newmark")) -> dict:
    """Run ``quantity(scheme, dt) -> (value or None, stats)`` for each of ``schemes`` (the
    mid-point scheme among them) over ``steps`` (geometric, any order) and tabulate errors
    against ``reference`` and against the mid-point value at the smallest step."""
    rows: list[StudyRow] = []
    for scheme in schemes:
        for dt in sorted(steps, reverse=True):
            start = time.perf_counter()
            value, stats = quantity(scheme, dt)
            rows.append(StudyRow(scheme, dt, value,
                                 None if value is None else abs(value - reference) / abs(reference),
                                 None, stats.get("newton_iterations_mean"), stats.get("cutbacks"),
                                 stats.get("wall_s", time.perf_counter() - start), stats.get("failed"),
                                 stats.get("energy_error_max")))
    finest = min(r.dt for r in rows if r.scheme == "mid-point")
    ref_dt = next(r.value for r in rows if r.scheme == "mid-point" and r.dt == finest)
    for r in rows:
        if r.value is not None and ref_dt is not None:
            r.error_vs_finest = abs(r.value - ref_dt) / abs(ref_dt)
    out = {"steps": sorted(steps, reverse=True), "reference": reference,
           "time_converged_value": ref_dt, "rows": [r.as_dict() for r in rows]}
    for scheme in schemes:
        mine = [r for r in rows if r.scheme == scheme]
        out[f"{scheme}: largest robust step (it and every smaller step run to the end)"] = largest_robust_step(mine)
        out[f"{scheme}: largest step within 1% of the reference"] = largest_passing_step(mine, "error_vs_reference")
        out[f"{scheme}: largest step within 1% of the time-converged value"] = \
            largest_passing_step(mine, "error_vs_finest")
    return out


def run_stats(h: fm.TimeHistory, wall_s: float) -> dict:
    """Newton iterations (mean, max over steps), cut-backs, the wall time and the energy-balance
    error max |E - E(0)| / max K of a run (E includes the work of the reactions on the prescribed
    motion; scaled by the largest kinetic energy, as a run starting at rest has K(0) ~ 0)."""
    its = np.asarray(h.newton_iterations[1:], dtype=float)
    E = h.total
    scale = float(np.max(h.kinetic)) or 1.0
    return {"wall_s": wall_s, "newton_iterations_mean": float(its.mean()) if its.size else 0.0,
            "newton_iterations_max": int(its.max()) if its.size else 0, "cutbacks": int(h.cutbacks),
            "energy_error_max": float(np.abs(E - E[0]).max() / scale)}


# ------------------------------------------------------------------ the model
@dataclass(frozen=True)
class SliderCrankCase:
    """One of Meijaard's two slider-crank cases with its reference values."""

    case: str
    omega: float                     # crank speed, rad/s
    slider_mass: float               # kg
    reference: dict[int, float]      # elements -> Meijaard's first maximum
    tolerance: dict[int, float]      # elements -> relative tolerance of the check
    converged: float                 # independent converged first maximum
    converged_angle: float           # rad
    figure_source: str               # Meijaard's figure

    @property
    def t_end(self) -> float:
        return CRANK_TURN / self.omega


def rigid_kinematics(theta: float, omega: float) -> dict[str, float | np.ndarray]:
    """Rigid slider-crank at crank angle theta: rod angle phi and rate phi', crank pin and slider
    positions and velocities (2,)."""
    s_phi = -CRANK * np.sin(theta) / ROD
    c_phi = np.sqrt(1.0 - s_phi**2)
    phi_dot = -CRANK * omega * np.cos(theta) / (ROD * c_phi)
    pin = CRANK * np.array([np.cos(theta), np.sin(theta)])
    v_pin = CRANK * omega * np.array([-np.sin(theta), np.cos(theta)])
    slider = np.array([CRANK * np.cos(theta) + ROD * c_phi, 0.0])
    v_slider = np.array([-CRANK * omega * np.sin(theta) - ROD * phi_dot * s_phi, 0.0])
    return {"phi": float(np.arcsin(s_phi)), "phi_dot": float(phi_dot), "pin": pin, "v_pin": v_pin,
            "slider": slider, "v_slider": v_slider}


def rigid_rod_velocity(theta: float, omega: float, s: np.ndarray) -> tuple[np.ndarray, float]:
    """Velocities (n, 2) of the rod points at distances s (n,) from the crank pin and the rod's
    angular velocity, for the rigid mechanism at crank angle theta."""
    k = rigid_kinematics(theta, omega)
    normal = np.array([-np.sin(k["phi"]), np.cos(k["phi"])])
    return k["v_pin"][None, :] + k["phi_dot"] * np.asarray(s, dtype=float)[:, None] * normal[None, :], k["phi_dot"]


def build(n_elements: int, omega: float, slider_mass: float = 0.0, mass: str = MASS, rho_I: float = RHO_I,
          ea: float = EA, ei: float = EI) -> tuple[fm.Assembly, np.ndarray, np.ndarray]:
    """Assembly, initial velocities v0 (n_dof,) and the rod's node indices (n_elements + 1,);
    ``rho_I``, ``ea`` and ``ei`` (N m^2) only to vary the model (Meijaard's 2-element
    simplifications, design studies)."""
    model = fm.Model(dim=2)
    s = np.linspace(0.0, ROD, n_elements + 1)
    nodes = model.add_nodes(np.c_[CRANK + s, np.zeros_like(s)])
    model.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=ea, EI=ei, rho_A=RHO_A, rho_I=rho_I, mass=mass,
                     name="rod", second_order=True)
    model.prescribe(nodes[0], "ux", lambda t: CRANK * (np.cos(omega * t) - 1.0))
    model.prescribe(nodes[0], "uy", lambda t: CRANK * np.sin(omega * t))
    model.fix(nodes[-1], "uy")
    if slider_mass > 0.0:
        model.add_point_mass(nodes[-1], slider_mass)
    asm = fm.Assembly(model)
    v0 = np.zeros(asm.n_dof)
    vel, phi_dot = rigid_rod_velocity(0.0, omega, s)
    for node, v in zip(nodes, vel):
        v0[asm.dofs.index(node, "ux")], v0[asm.dofs.index(node, "uy")] = v
        v0[asm.dofs.index(node, "rz")] = phi_dot
    return asm, v0, nodes


def midspan_deflection(positions: np.ndarray) -> np.ndarray:
    """Lateral deflection / L of the middle node relative to the end nodes' chord, positive to the
    left of the chord from the crank pin to the slider; positions (n_out, n_nodes, 2)."""
    a, c = positions[:, 0], positions[:, -1]
    b = positions[:, (positions.shape[1] - 1) // 2]
    e = (c - a) / np.linalg.norm(c - a, axis=1)[:, None]
    normal = np.c_[-e[:, 1], e[:, 0]]
    return np.einsum("ij,ij->i", b - 0.5 * (a + c), normal) / ROD


@dataclass
class CrankRun:
    """One simulation: crank angle and deflection series, the first maximum and run statistics."""

    n_elements: int
    mass: str
    scheme: str
    dt: float
    angle: np.ndarray = field(repr=False)
    deflection: np.ndarray = field(repr=False)
    peak: float
    peak_angle: float
    stats: dict
    n_dof: int
    failed: str | None = None


def simulate(case: SliderCrankCase, n_elements: int, n_steps: int, scheme: str = "mid-point",
             mass: str = MASS, max_cutbacks: int = 6, turn: float = CRANK_TURN, rho_I: float = RHO_I,
             ea: float = EA) -> CrankRun:
    """Integrate ``turn`` rad of crank rotation with the step dt = t_end / n_steps (n_steps per
    8 rad); a failed run keeps what it computed."""
    if n_elements % 2:
        raise ValueError("the mid-span deflection needs an even number of elements")
    asm, v0, _ = build(n_elements, case.omega, case.slider_mass, mass, rho_I, ea)
    dt = case.t_end / n_steps
    t_end = max(1, int(round(n_steps * turn / CRANK_TURN))) * dt
    failed = None
    start = time.perf_counter()
    try:
        h = fm.integrate(asm, dt, t_end, scheme=scheme, v0=v0, progress=False, max_cutbacks=max_cutbacks)
    except TimeIntegrationError as exc:
        h, failed = exc.history, str(exc).splitlines()[0]
    angle = case.omega * np.array(h.t)
    defl = midspan_deflection(h.positions())
    peak_angle, peak = first_maximum(angle, defl) if failed is None else (float("nan"), float("nan"))
    stats = run_stats(h, time.perf_counter() - start)
    return CrankRun(n_elements, mass, scheme, dt, angle, defl, peak, peak_angle, stats, asm.n_dof, failed)


def rod_frequency(n_elements: int, mass: str) -> float:
    """Lowest bending frequency (rad/s) of the rod alone, pinned at both ends, not rotating."""
    model = fm.Model(dim=2)
    s = np.linspace(0.0, ROD, n_elements + 1)
    nodes = model.add_nodes(np.c_[s, np.zeros_like(s)])
    model.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=EA, EI=EI, rho_A=RHO_A, rho_I=RHO_I, mass=mass)
    model.fix(nodes[0], ["ux", "uy"])
    model.fix(nodes[-1], ["ux", "uy"])
    return lowest_frequency(fm.Assembly(model))


# ------------------------------------------------------------------- the case
def _pct(value: float, reference: float) -> str:
    return f"{100.0 * (value / reference - 1.0):+.2f} %"


def run_case(case: SliderCrankCase, quick: bool, study: bool = False) -> CaseReport:
    """Runs with 2, 4 and 16 elements (mid-point, cubic mass), the other two masses with 2 and 4
    elements, Meijaard's 2-element simplifications, checks, information, figure; with ``study``
    the time-step study (full: steps t_end/40 ... t_end/5120; quick: t_end/160 and t_end/320)."""
    n_steps = STEPS[quick]
    turn = QUICK_TURN if quick else CRANK_TURN
    runs = {n: simulate(case, n, n_steps, turn=turn) for n in (2, 4, FINE_MESH)}
    other_runs = {(m, n): simulate(case, n, n_steps, mass=m, turn=turn) for m in OTHER_MASSES for n in (2, 4)}
    variants = {"rho_I = 0": dict(rho_I=0.0), "rho_I = 0, EA x 1000": dict(rho_I=0.0, ea=1e3 * EA)}
    variant_runs = {k: simulate(case, 2, n_steps, turn=min(turn, QUICK_TURN), **kw) for k, kw in variants.items()}
    steps_run = sum(len(r.angle) - 1 for r in (*runs.values(), *other_runs.values(), *variant_runs.values()))
    report = CaseReport(case.case, n_dof=runs[FINE_MESH].n_dof, n_steps=steps_run)
    for n in (4, 2):
        r = runs[n]
        report.add(Check.close(f"{n} el.: first maximum of mid-span deflection / L", r.peak, case.reference[n],
                               case.tolerance[n], SOURCE_TABLE if case.case.endswith("a") else
                               f"Meijaard 1993, sec. 4 ({case.figure_source})"))
    fine = runs[FINE_MESH]
    report.add(Check.close(f"{FINE_MESH} el.: first maximum (mesh converged)", fine.peak, case.converged, 1e-2,
                           SOURCE_CONVERGED))
    exact_frequency = np.pi**2 * np.sqrt(EI / (RHO_A * ROD**4))
    ref = case.reference
    lumped, linear = other_runs[("lumped", 2)], other_runs[("consistent", 2)]
    info: dict = {
        "initial_state": ("crank at angle 0 turning at full speed; rod straight, undeformed, zero "
                          "deformation rate: nodes on the rigid-body velocity field v(s) = "
                          "(0, r omega (1 - s/L)), nodal rotation rates = rod angular velocity"),
        "crank_speed_rad_s": case.omega, "slider_mass_kg": case.slider_mass, "rod_mass_kg": ROD_MASS,
        "initial_rod_angular_velocity_rad_s": rigid_kinematics(0.0, case.omega)["phi_dot"],
        "initial_crank_pin_velocity_m_s": rigid_kinematics(0.0, case.omega)["v_pin"],
        "initial_slider_velocity_m_s": rigid_kinematics(0.0, case.omega)["v_slider"][0],
        "EA_N": EA, "EI_N_m2": EI, "rho_A_kg_m": RHO_A, "rho_I_kg_m": RHO_I,
        "scheme": "mid-point", "dt_s": case.t_end / n_steps, "crank_turn_simulated_rad": turn,
        "element": "Beam2D(mass='cubic', second_order=True): Meijaard's planar beam element",
        "mass": MASS,
        "mass_reason": ("Meijaard's element has the cubic (Hermitian) consistent mass: the rod's distributed "
                        "lateral inertia load reaches the nodes with the end moments of the cubic shape, so "
                        "each element bends under it as a beam does (pinned rod under a uniform load: "
                        "5/384 q L^4/EI with 2 elements, exact), where lumped or linear mass gives nodal "
                        "forces only (4/384, -20 %); Beam2D's cubic mass is turned with the nodes and "
                        "integrated in director form, energy conserving (energy_error_max)"),
        "first_maximum": {f"{n} el., {MASS}": {"value": r.peak, "crank_angle_rad": r.peak_angle,
                                                "crank_angle_rad_fit": fitted_peak_abscissa(r.angle, r.deflection,
                                                                                            r.peak_angle, 0.1),
                                                "rel_error_vs_converged": abs(r.peak / case.converged - 1.0),
                                                **({"rel_error_vs_Meijaard": abs(r.peak / ref[n] - 1.0)}
                                                   if n in ref else {}), **r.stats}
                          for n, r in runs.items()},
        "first_maximum_angle_note": ("crank_angle_rad: vertex of the parabola through 3 samples (shifted by "
                                     "the small high-frequency ripple on the broad peak); crank_angle_rad_fit: "
                                     "least-squares parabola over +-0.1 rad"),
        "mass_comparison": {
            "explanation": (
                f"same runs with the lumped and the linear consistent translational mass: with 2 elements "
                f"{lumped.peak:.5f} ({_pct(lumped.peak, ref[2])}) and {linear.peak:.5f} "
                f"({_pct(linear.peak, ref[2])}) against Meijaard's {ref[2]}, with 4 elements "
                f"{other_runs[('lumped', 4)].peak:.5f} ({_pct(other_runs[('lumped', 4)].peak, ref[4])}) and "
                f"{other_runs[('consistent', 4)].peak:.5f} ({_pct(other_runs[('consistent', 4)].peak, ref[4])}); "
                f"the cubic mass gives {runs[2].peak:.5f} ({_pct(runs[2].peak, ref[2])}) and {runs[4].peak:.5f} "
                f"({_pct(runs[4].peak, ref[4])}). Lumped and linear mass put the inertia load on the nodes "
                "without the element's bending shape and underestimate the deflection (O(h^2) from below); "
                "the linear mass also keeps mass at the pinned ends, so its rod frequency is too high and its "
                "maximum comes early (crank_angle_rad; rod_bending_frequency_rad_s). Meijaard's element, "
                "like Beam2D's cubic mass, is accurate with 2-4 elements"),
            **{f"{n} el., {m}": {"value": r.peak, "crank_angle_rad": r.peak_angle,
                                 "rel_error_vs_Meijaard": abs(r.peak / ref[n] - 1.0),
                                 "wall_s": r.stats["wall_s"]}
               for (m, n), r in [*(((MASS, n), runs[n]) for n in (2, 4)), *other_runs.items()]}},
        "meijaard_2_element_model": {
            "note": ("Meijaard's 2-element model neglects normal (axial) and shear deformation and rotary "
                     "inertia (4 DOF), his 4-element model includes all effects. Beam2D has no shear "
                     "deformation (E I / (G A k L^2) ~ 1e-4 here) but axial deformation and rotary "
                     "inertia; the 2-element first maximum without rotary inertia and with a 1000 times "
                     "larger EA (nearly inextensible), same step, first 2.5 rad"),
            "2 el., all effects": runs[2].peak,
            **{f"2 el., {k}": {"value": r.peak, "change_vs_all_effects": r.peak / runs[2].peak - 1.0,
                               "rel_error_vs_Meijaard": abs(r.peak / ref[2] - 1.0),
                               "newton_iterations_mean": r.stats["newton_iterations_mean"]}
               for k, r in variant_runs.items()}},
        "rod_bending_frequency_rad_s": {"exact pinned-pinned": exact_frequency,
                                        **{f"{n} el., {m}": rod_frequency(n, m) for n in (2, 4, FINE_MESH)
                                           for m in (MASS, *OTHER_MASSES)}},
        "converged_reference": {"value": case.converged, "crank_angle_rad": case.converged_angle,
                                "source": SOURCE_CONVERGED},
        "Meijaard_reference": {f"{n} el.": v for n, v in ref.items()},
        "deflection_sign": "positive to the left of the chord from crank pin to slider (Meijaard Figs. 1-2)",
    }
    if study:
        info["time_step_study"] = _study(case, quick, {(4, "mid-point", n_steps): runs[4],
                                                       (FINE_MESH, "mid-point", n_steps): runs[FINE_MESH]})
    report.info.update(info)
    report.figure = _figure(case, runs, other_runs, info.get("time_step_study"))
    return report


def _study(case: SliderCrankCase, quick: bool, done: dict[tuple[int, str, int], CrankRun]) -> dict:
    """Time-step study of the 4-element first maximum against Meijaard's 4-element value, and
    (full mode) of the 16-element one against the independent converged value."""
    counts = [160, 320] if quick else [40 * 2**k for k in range(8)]
    turn = QUICK_TURN if quick else CRANK_TURN
    meshes = [(4, case.reference[4], SOURCE_TABLE)]
    if not quick:
        meshes.append((FINE_MESH, case.converged, SOURCE_CONVERGED))
    out = {"quantity": "first maximum of the mid-span deflection / L", "mass": MASS,
           "steps_per_8_rad": counts, "crank_turn_simulated_rad": turn, "max_cutbacks": STUDY_CUTBACKS,
           "note": ("fixed steps without cut-back: a step that does not converge ends the run (value None, "
                    "'failed'); Newmark (trapezoidal, end-point) takes the cubic mass's inertia tangent by "
                    "finite differences")}
    for n, ref, src in meshes:
        def quantity(scheme: str, dt: float, n=n) -> tuple[float | None, dict]:
            steps = int(round(case.t_end / dt))
            r = done.get((n, scheme, steps)) or simulate(case, n, steps, scheme, max_cutbacks=STUDY_CUTBACKS,
                                                         turn=turn)
            stats = dict(r.stats, failed=r.failed)
            return (None if r.failed or not np.isfinite(r.peak) else r.peak), stats

        table = time_step_study(quantity, [case.t_end / c for c in counts], ref)
        table["reference_source"] = src
        out[f"{n} elements"] = table
    return out


def _figure(case: SliderCrankCase, runs: dict[int, CrankRun], other_runs: dict[tuple[str, int], CrankRun],
            study: dict | None):
    from flexmb.viz.plots import COMPUTED_ALPHA, legend_outside, panels

    n_panels = 3 if study else 2
    fig, axes = panels(n_panels, f"Slider-crank {case.case[-1].upper()} (Meijaard 1993, {case.figure_source}): "
                       f"omega = {case.omega} rad/s, " + (f"slider mass {case.slider_mass} kg" if case.slider_mass
                                                            else "massless slider")
                       + "; Beam2D, cubic mass, second-order strain")
    ax, ax2 = axes[0], axes[1]
    styles = {2: dict(ls="--", color="C0"), 4: dict(ls="-", color="C1"), FINE_MESH: dict(ls="-", color="0.5", lw=0.8)}
    for n, r in runs.items():
        for a in (ax, ax2):
            a.plot(r.angle, r.deflection, label=f"{n} elements, {MASS} mass", alpha=COMPUTED_ALPHA, **styles[n])
        ax2.plot(r.peak_angle, r.peak, "o", color=styles[n]["color"], ms=4)
    for (m, n), r in other_runs.items():
        ax2.plot(r.angle, r.deflection, lw=0.7, color=styles[n]["color"], ls=":" if m == "lumped" else "-.",
                 label=f"{n} el., {m} mass")
    for a in (ax, ax2):
        # the references on top of the curves they are compared with
        a.plot(case.converged_angle, case.converged, "k*", ms=9, label="converged (Exudyn)", zorder=12)
        for n, v in case.reference.items():
            a.axhline(v, color=styles[n]["color"], lw=1.0, ls=(0, (2, 2)), label=f"Meijaard 1993, {n} el.: {v}",
                      zorder=11)
        a.set_xlabel("crank angle (rad)")
        a.set_ylabel("mid-span deflection / rod length")
        a.grid(True, alpha=0.3)
    legend_outside(ax, 7, ncol=2)
    legend_outside(ax2, 6, ncol=2)
    ax2.set_xlim(case.converged_angle - 0.4, case.converged_angle + 0.4)
    ax2.set_ylim(0.6 * case.converged, 1.05 * case.converged)
    ax2.set_title("first maximum (dots: parabola vertex); thin: lumped / linear mass", fontsize=9)
    if study:
        _study_panel(axes[2], study, "first maximum")
    fig.tight_layout()
    return fig


def _study_panel(ax, study: dict, what: str) -> None:
    """Relative error against the reference vs the time step, per mesh and scheme."""
    from flexmb.viz.plots import legend_outside

    for key, table in study.items():
        if not isinstance(table, dict) or "rows" not in table:
            continue
        for scheme, marker in (("mid-point", "o-"), ("composed-mid-point", "^-"), ("newmark", "s--")):
            rows = [r for r in table["rows"] if r["scheme"] == scheme and r["error_vs_reference"] is not None]
            if rows:
                ax.loglog([r["dt"] for r in rows], [max(r["error_vs_reference"], 1e-6) for r in rows], marker,
                          label=f"{key}, {scheme}")
    ax.axhline(1e-2, color="k", lw=0.7, ls=":", label="1 %")
    ax.set_xlabel("time step (s)")
    ax.set_ylabel(f"|{what} / reference - 1|")
    ax.set_title("time-step study: 4 el. vs Meijaard, 16 el. vs converged (failed runs omitted)", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    legend_outside(ax, 7, ncol=2)
