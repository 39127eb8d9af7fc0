"""The planar spin-up beams of :mod:`flexmb.validation.spin_up` as modal bodies, with and without
geometric stiffening (issue 16; Kane, Ryan & Banerjee 1987), shared by the validation cases
``spin-up-modal-simo`` and ``spin-up-modal-kim-haug``.

Body: the beam's FE model (``N_FE`` planar Beam2D elements, linear consistent mass) reduced by
:meth:`~flexmb.cms.modal_body.ModalBodyData.from_model` with the frame at the root node (the
root clamped in the basis: the coordinates are the cantilever's modes, the frame is the hub's
clamp). The model (:meth:`flexmb.Model.add_modal_body`) has one node, the frame, with ux = uy = 0
and the hub angle rz = psi(t) prescribed, plus the modal coordinates. Mid-point scheme, as the
co-rotational FE runs of :mod:`flexmb.validation.spin_up`.

With stiffening the body carries the second-order displacement field of its modes, whose work
against the unit inertia loads is the unit-load geometric stiffness
(:mod:`flexmb.cms.floating_frame`): the centrifugal load then stiffens the bending modes, and the
lateral tip deflection follows the co-rotational FE solution. Without it the classic linear
modal body softens by Omega^2 (the centrifugal softening of the modal mass), which exceeds its
first bending frequency squared (3.80 and 2.91 rad/s against omega_s = 6 and 4 rad/s): its
deflection grows without bound once the hub turns faster than that frequency.

Output: the lateral tip deflection, the tip's displacement along the body frame's y axis (the
frame turns with the hub exactly): d = (Phi q)_{tip, uy}.

Measured (full runs, dt = 0.005 s): the stiffened extremes lie 0.28-0.44 % (Simo) and 0.45-0.57 %
(Kim & Haug) beyond the co-rotational FE values with 2, 3 and 4 modes alike, so the offset is not
modal truncation but the stiffening's linearization (second order in the modal coordinates, against
the FE model's exact kinematics at a deflection of 5-7 % of the length); the issue's 1 % holds with
that margin.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

import flexmb as fm
from flexmb.cms.modal_body import ModalBodyData
from flexmb.integrators import TimeIntegrationError
from flexmb.validation.report import CaseReport, Check
from flexmb.validation.slider_crank import run_stats
from flexmb.validation.spin_up import (SOURCE_CONVERGED, T_END, SpinUpBeam, extreme, residual_amplitude,
                                       simulate)

N_FE = 20                          # elements of the body's FE model (its modes are mesh-converged)
MODES = (2, 3, 4)                  # modal coordinates of the stiffened runs; 3 is the checked one
CHECKED_MODES = 3
DT = {False: 0.005, True: 0.02}    # s (full, quick)
FE_ELEMENTS = 16                   # the co-rotational FE run drawn for comparison (quick: 4)
DIVERGENCE_FACTOR = 10.0           # "the deflection exceeds 10x" (issue 16)


def body_data(beam: SpinUpBeam, n_modes: int) -> tuple[ModalBodyData, int]:
    """The reduced beam and the index of its tip's uy in the basis rows."""
    body = fm.Model(dim=2)
    x = np.linspace(0.0, beam.length, N_FE + 1)
    nodes = body.add_nodes(np.c_[x, np.zeros_like(x)])
    body.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=beam.EA, EI=beam.EI, rho_A=beam.rho_A, rho_I=beam.rho_I,
                    mass="consistent", name="beam")
    data = ModalBodyData.from_model(body, frame_node=int(nodes[0]), n_modes=n_modes, name=beam.case)
    return data, data.component.assembly.dofs.index(int(nodes[-1]), "uy")


@dataclass
class ModalRun:
    """One modal-body simulation."""

    n_modes: int
    stiffening: bool
    dt: float
    t: np.ndarray = field(repr=False)
    deflection: np.ndarray = field(repr=False)
    extreme: float
    extreme_time: float
    amplitude: float
    stats: dict
    frequencies_rad_s: list[float]
    failed: str | None = None


def simulate_modal(beam: SpinUpBeam, n_modes: int, stiffening: bool, dt: float, max_cutbacks: int = 6) -> ModalRun:
    """Integrate the modal body to T_END; a run that fails keeps what it computed."""
    data, tip_uy = body_data(beam, n_modes)
    model = fm.Model(dim=2)
    body = model.add_modal_body(data, stiffening=stiffening, name="beam")
    frame = int(body.connectivity[0, 0])
    model.fix(frame, ["ux", "uy"])
    model.prescribe(frame, "rz", beam.psi)
    asm = fm.Assembly(model)
    q_dofs = asm.dofs.internal_dofs(body)
    failed = None
    start = time.perf_counter()
    try:
        h = fm.integrate(asm, dt, T_END, progress=False, max_cutbacks=max_cutbacks)
    except TimeIntegrationError as exc:
        h, failed = exc.history, str(exc).splitlines()[0]
    t = np.array(h.t)
    d = np.asarray(h.u)[:, q_dofs] @ data.basis[tip_uy]
    if failed is None and np.all(np.isfinite(d)):
        t_ex, d_ex = extreme(t, d)
        amp = residual_amplitude(beam, t, d)
    else:
        k = int(np.nanargmax(np.abs(d))) if d.size else 0
        t_ex, d_ex, amp = (float(t[k]), float(d[k]), float("nan")) if d.size else (np.nan, np.nan, np.nan)
    return ModalRun(n_modes, stiffening, dt, t, d, d_ex, t_ex, amp, run_stats(h, time.perf_counter() - start),
                    data.omega.tolist(), failed)


def run_case(beam: SpinUpBeam, quick: bool, case: str) -> CaseReport:
    """Stiffened runs with 2, 3 and 4 modes, the unstiffened run with 3, the co-rotational FE run;
    checks, information, figure."""
    dt = DT[quick]
    stiff = {n: simulate_modal(beam, n, True, dt) for n in ((CHECKED_MODES,) if quick else MODES)}
    # the unstiffened body diverges: cut-backs would only chase it (1 is enough to tell a step failure)
    linear = simulate_modal(beam, CHECKED_MODES, False, dt, max_cutbacks=1)
    fe_elements = 4 if quick else FE_ELEMENTS
    fe = simulate(beam, fe_elements, dt)
    n_steps = sum(len(r.t) - 1 for r in (*stiff.values(), linear))
    checked = stiff[CHECKED_MODES]
    report = CaseReport(case, n_dof=3 + CHECKED_MODES, n_steps=n_steps)
    report.add(Check.close(f"{CHECKED_MODES} modes, stiffened: extreme tip deflection (m)", checked.extreme,
                           beam.converged, 1e-2, f"co-rotational FE, {SOURCE_CONVERGED}"))
    if beam.residual_amplitude is not None:
        report.add(Check.close(f"{CHECKED_MODES} modes, stiffened: residual amplitude t > {beam.t_s:g} s (m)",
                               checked.amplitude, beam.residual_amplitude, 0.2, "Meijaard 1993, sec. 5.1, Fig. 4"))
    # diverged (a failed run) or a deflection beyond 10x: both count as Kane, Ryan & Banerjee's failure
    blow_up = float("inf") if linear.failed else float(np.nanmax(np.abs(linear.deflection)))
    report.add(Check.at_least(f"{CHECKED_MODES} modes, NOT stiffened: largest |deflection| / |FE extreme|",
                              blow_up / abs(beam.converged), DIVERGENCE_FACTOR,
                              "Kane, Ryan & Banerjee 1987: the linear modal body diverges above its first "
                              "bending frequency"))
    report.info.update({
        "body": (f"{N_FE} Beam2D elements (linear consistent mass) reduced with the root clamped (frame at the "
                 "root, the hub's clamp); mid-point scheme"),
        "dt_s": dt, "t_end_s": T_END, "omega_s_rad_s": beam.omega_s,
        "first_bending_frequency_rad_s": checked.frequencies_rad_s[0],
        "stiffened": {f"{n} modes": {"extreme_m": r.extreme, "extreme_time_s": r.extreme_time,
                                     "rel_error_vs_FE_converged": abs(r.extreme / beam.converged - 1.0),
                                     "residual_amplitude_m": r.amplitude, "body_frequencies_rad_s":
                                     r.frequencies_rad_s, "failed": r.failed, **r.stats}
                      for n, r in stiff.items()},
        "not_stiffened": {"modes": CHECKED_MODES, "failed": linear.failed, "time_reached_s": float(linear.t[-1]),
                          "largest_abs_deflection_m": float(np.nanmax(np.abs(linear.deflection))), **linear.stats},
        "co_rotational_FE": {"elements": fe_elements, "extreme_m": fe.extreme, "wall_s": fe.stats["wall_s"],
                             "modal_wall_s": checked.stats["wall_s"]},
    })
    report.figure = _figure(beam, case, stiff, linear, fe)
    return report


def _figure(beam: SpinUpBeam, case: str, stiff: dict[int, ModalRun], linear: ModalRun, fe):
    from flexmb.viz.plots import panels

    fig, axes = panels(2, f"{case}: spun to {beam.omega_s:g} rad/s in {beam.t_s:g} s, first bending "
                       f"frequency {stiff[CHECKED_MODES].frequencies_rad_s[0]:.2f} rad/s")
    ax, ax2 = axes
    ax.plot(fe.t, fe.deflection, color="0.3", lw=2.5, alpha=0.5, label=f"co-rotational FE, {fe.n_elements} el.",
            zorder=1)
    for n, r in stiff.items():
        ax.plot(r.t, r.deflection, lw=1.0, ls="-" if n == CHECKED_MODES else "--",
                label=f"modal body, {n} modes, stiffened", zorder=3)
    ax.axhline(beam.converged, color="k", lw=0.7, ls=":", label=f"converged FE extreme {beam.converged} m")
    ax.set_ylim(1.6 * beam.converged, -0.6 * beam.converged)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("lateral tip deflection (m)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    ax2.plot(fe.t, fe.deflection, color="0.3", lw=2.5, alpha=0.5, label="co-rotational FE")
    ax2.plot(stiff[CHECKED_MODES].t, stiff[CHECKED_MODES].deflection, lw=1.0, label="stiffened")
    ax2.plot(linear.t, linear.deflection, color="C3", lw=1.0,
             label="NOT stiffened" + (f" (failed at t = {linear.t[-1]:.2f} s)" if linear.failed else ""))
    ax2.set_yscale("symlog", linthresh=abs(beam.converged))
    ax2.set_xlabel("time (s)")
    ax2.set_ylabel("lateral tip deflection (m, symlog)")
    ax2.set_title("NOT stiffened: diverges (Kane, Ryan & Banerjee 1987)", fontsize=9)
    ax2.grid(True, alpha=0.3)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return fig
