"""Simo & Vu-Quoc's spin-up beam as a 3D modal body on a driven revolute joint; its flapwise sag under
gravity at rest and at full speed (issue 16: modal bodies in 3D).

Body: the beam of ``spin-up-simo`` (L = 10 m, EI = 14000 N m^2 about both section axes, EA = 2.8e7 N,
rho_A = 1.2 kg/m, rho_I = 6e-4 kg m about both bending axes and twice that about the beam axis,
GJ = EI) as ``N_FE`` Beam3D elements with the linear consistent mass, reduced with the frame at the
root (:meth:`~flexmb.cms.modal_body.ModalBodyData.from_model`, ``MODES`` cantilever modes: the first
three lag and flap pairs). In the multibody model (:meth:`flexmb.Model.add_modal_body`, 3D) the frame
node is held by a revolute joint about z to the ground, driven by the spin-up angle psi(t) of
``spin-up-simo`` (omega_s = 6 rad/s reached in T_s = 15 s). Mid-point scheme; the frame rotation is a
spatial rotation stepped by its Cayley parameters (:mod:`flexmb.cms.floating_frame3d`).

Checked:

* the extreme lateral (lag) tip deflection, stiffened, within 1 % of the co-rotational FE result
  -0.57384 m (the planar case's converged value; Exudyn, refs README item 6), as the 2D modal body
  (``spin-up-modal-simo``) does (measured -0.57606 m, +0.39 %, dt = 0.01 s);
* the flap coordinates stay at rest (the motion is planar and the body symmetric about its plane):
  largest |flap tip deflection| below 1e-9 of the largest |lag| one (measured 4.7e-14);
* the energy balance K + V - W (W the drive's work) of the mid-point run to 1e-6 of the largest
  kinetic energy (the scheme's discrete energy balance is exact to the Newton tolerance; measured 5e-13);
* flapwise sag under a small gravity g = ``GRAVITY`` m/s^2 along -z (the spin axis), from the
  relative equilibrium of the assembly (``flexmb.relative_equilibrium``): at rest within 1 % of the
  cantilever's q L^4 / (8 EI) (q = rho_A g), and spinning at omega_s within 1 % of the co-rotational FE
  blade (20 Beam3D elements, root on the same driven joint): the centrifugal stiffening of the flap
  modes shrinks the sag (to about a quarter at 6 rad/s); without stiffening the linear modal body's
  flap sag is that at rest (its flap modes feel no centrifugal softening about z either), reported.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.cms.modal_body import ModalBodyData
from flexmb.validation import CaseReport, Check, print_report
from flexmb.validation.registry import load_module
from flexmb.validation.slider_crank import run_stats
from flexmb.validation.spin_up import SOURCE_CONVERGED, T_END, SpinUpBeam, extreme

CASE = "spin-up-modal-spatial"
TITLE = "Spin-up of Simo & Vu-Quoc's beam as a 3D modal body on a driven joint; flapwise sag at speed"
SOURCE = ("co-rotational FE (converged, Exudyn; Simo & Vu-Quoc 1986); cantilever sag q L^4 / (8 EI) (exact); "
          "co-rotational 3D FE blade")

N_FE = 20                          # Beam3D elements of the body's FE model
MODES = 6                          # three lag and three flap modes
DT = {False: 0.01, True: 0.02}     # s (full, quick)
T_QUICK = 12.0                     # s: the quick run ends after the extreme (near t = 10 s)
GRAVITY = 0.5                      # m/s^2 along -z: a sag of 0.5 % of L, linear
EXTREME_BOUND = 1e-2               # issue 16
FLAP_BOUND = 1e-9
ENERGY_BOUND = 1e-6
SAG_BOUND = 1e-2


def _beam_model(beam: SpinUpBeam, mass: str) -> tuple[fm.Model, np.ndarray]:
    model = fm.Model(dim=3)
    x = np.linspace(0.0, beam.length, N_FE + 1)
    zero = np.zeros_like(x)
    nodes = model.add_nodes(np.c_[x, zero, zero])
    model.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=beam.EA, GJ=beam.EI, EI_y=beam.EI, EI_z=beam.EI,
                     rho_A=beam.rho_A, rho_I=(2.0 * beam.rho_I, beam.rho_I, beam.rho_I), mass=mass,
                     y_axis=(0.0, 1.0, 0.0), name="beam")
    return model, nodes


def body_data(beam: SpinUpBeam) -> tuple[ModalBodyData, int, int]:
    """The reduced beam and the indices of its tip's uy and uz in the basis rows."""
    model, nodes = _beam_model(beam, "consistent")
    data = ModalBodyData.from_model(model, frame_node=int(nodes[0]), n_modes=MODES, name=beam.case)
    dofs = data.component.assembly.dofs
    return data, dofs.index(int(nodes[-1]), "uy"), dofs.index(int(nodes[-1]), "uz")


def _on_drive(model: fm.Model, node: int, angle) -> None:
    model.add_joint("revolute", None, node, axis=(0.0, 0.0, 1.0), drive=angle, name="hub drive")


def spin_up(beam: SpinUpBeam, data: ModalBodyData, dt: float, t_end: float) -> tuple[fm.TimeHistory, fm.Assembly,
                                                                                      np.ndarray]:
    model = fm.Model(dim=3)
    body = model.add_modal_body(data, name="beam")
    _on_drive(model, int(body.connectivity[0, 0]), beam.psi)
    asm = fm.Assembly(model)
    h = fm.integrate(asm, dt, t_end, progress=False)
    return h, asm, asm.dofs.internal_dofs(body)


def modal_sag(data: ModalBodyData, tip_uz: int, speed: float, stiffening: bool) -> float:
    """Flapwise tip sag (m, along -z) of the modal body at the steady spin ``speed`` under gravity."""
    model = fm.Model(dim=3)
    body = model.add_modal_body(data, stiffening=stiffening, name="beam")
    _on_drive(model, int(body.connectivity[0, 0]), lambda t: speed * t)
    model.set_gravity((0.0, 0.0, -GRAVITY))
    asm = fm.Assembly(model)
    u = fm.relative_equilibrium(asm, ((0.0, 0.0, 1.0), speed))
    return -float(data.basis[tip_uz] @ u[asm.dofs.internal_dofs(body)])


def fe_sag(beam: SpinUpBeam, speed: float) -> float:
    """The same for the co-rotational FE blade (its root node on the driven joint)."""
    model, nodes = _beam_model(beam, "consistent")
    _on_drive(model, int(nodes[0]), lambda t: speed * t)
    model.set_gravity((0.0, 0.0, -GRAVITY))
    asm = fm.Assembly(model)
    u = fm.relative_equilibrium(asm, ((0.0, 0.0, 1.0), speed))
    return -float(u[asm.dofs.index(int(nodes[-1]), "uz")])


def run(quick: bool = False) -> CaseReport:
    beam = load_module(Path(__file__).with_name("spin_up_simo.py")).PARAMETERS
    data, tip_uy, tip_uz = body_data(beam)
    dt = DT[quick]
    start = time.perf_counter()
    h, asm, q_dofs = spin_up(beam, data, dt, T_QUICK if quick else T_END)
    wall = time.perf_counter() - start
    t = np.asarray(h.t)
    q = np.asarray(h.u)[:, q_dofs]
    lag, flap = q @ data.basis[tip_uy], q @ data.basis[tip_uz]
    t_ex, d_ex = extreme(t, lag)
    report = CaseReport(CASE, n_dof=asm.n_dof, n_steps=len(t) - 1)
    report.add(Check.close(f"{MODES} modes, stiffened: extreme lateral tip deflection (m)", d_ex, beam.converged,
                           EXTREME_BOUND, f"co-rotational FE, {SOURCE_CONVERGED}"))
    report.add(Check.at_most("largest |flap tip deflection| / largest |lag tip deflection| (planar motion)",
                             float(np.abs(flap).max() / np.abs(lag).max()), FLAP_BOUND,
                             "symmetry of the body about its plane of motion (exact)"))
    report.add(Check.at_most("energy balance max |K + V - W - E0| / K_max", float(h.energy_error().max()),
                             ENERGY_BOUND, "mid-point scheme: exact discrete energy balance"))
    sag_rest = modal_sag(data, tip_uz, 0.0, True)
    closed_form = beam.rho_A * GRAVITY * beam.length**4 / (8.0 * beam.EI)
    report.add(Check.close(f"flapwise sag at rest, g = {GRAVITY:g} m/s^2 (m)", sag_rest, closed_form, SAG_BOUND,
                           "cantilever under uniform load q L^4 / (8 EI) (exact)"))
    sag_fe = fe_sag(beam, beam.omega_s)
    sag_spin = modal_sag(data, tip_uz, beam.omega_s, True)
    report.add(Check.close(f"flapwise sag spinning at {beam.omega_s:g} rad/s, stiffened (m)", sag_spin, sag_fe,
                           SAG_BOUND, f"co-rotational 3D FE blade, {N_FE} Beam3D elements, relative equilibrium"))
    sag_linear = modal_sag(data, tip_uz, beam.omega_s, False)
    report.info.update({
        "body": (f"{N_FE} Beam3D elements (linear consistent mass) reduced to {MODES} modes with the root clamped; "
                 "frame node on a revolute joint about z driven by psi(t); mid-point scheme"),
        "body_frequencies_rad_s": data.omega.tolist(), "dt_s": dt, "t_end_s": float(t[-1]),
        "extreme_m": d_ex, "extreme_time_s": t_ex, "rel_error_vs_FE_converged": abs(d_ex / beam.converged - 1.0),
        "gravity_m_s2": GRAVITY, "sag_rest_m": sag_rest, "sag_closed_form_m": closed_form,
        "sag_spinning_modal_m": sag_spin, "sag_spinning_FE_m": sag_fe, "sag_spinning_linear_modal_m": sag_linear,
        "sag_ratio_spinning_over_rest": sag_spin / sag_rest, **run_stats(h, wall)})
    report.figure = _figure(beam, t, lag, flap, sag_rest, sag_spin, sag_fe, sag_linear)
    return report


def _figure(beam: SpinUpBeam, t: np.ndarray, lag: np.ndarray, flap: np.ndarray, sag_rest: float, sag_spin: float,
            sag_fe: float, sag_linear: float):
    from flexmb.viz.plots import panels

    fig, (ax, ax2) = panels(2, f"{CASE}: 3D modal body ({MODES} modes) on a driven revolute joint")
    ax.plot(t, lag, lw=1.0, label="lag (in-plane) tip deflection")
    ax.plot(t, flap, lw=1.0, label="flap tip deflection (stays 0)")
    ax.axhline(beam.converged, color="k", lw=0.7, ls=":", label=f"converged FE extreme {beam.converged} m")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("tip deflection in the body frame (m)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    labels = ["modal, at rest", f"modal, {beam.omega_s:g} rad/s", f"FE, {beam.omega_s:g} rad/s",
              f"linear modal, {beam.omega_s:g} rad/s"]
    ax2.bar(labels, [sag_rest, sag_spin, sag_fe, sag_linear], color=["C0", "C0", "0.5", "C3"])
    ax2.set_ylabel(f"flapwise tip sag under g = {GRAVITY:g} m/s^2 (m)")
    ax2.set_title("centrifugal stiffening of the flap modes", fontsize=9)
    ax2.tick_params(axis="x", labelsize=7, rotation=15)
    ax2.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
