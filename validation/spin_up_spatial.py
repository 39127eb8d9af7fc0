"""Spatial spin-up of a beam with a channel part: rigid part, tube, and channel with an eccentric
shear centre (Meijaard 1993, section 5.2; Kane, Ryan & Banerjee 1987 geometry).

Data (Meijaard 1993, sec. 5.2; refs README item 7): a 16 m beam of an 8 m rigid part, a 2.5 m
doubly symmetric tube and a 5.5 m channel, aluminium rho = 2766.67 kg/m^3, E = 6.895e10 Pa,
G = 2.6519e10 Pa; tube A = 3.84e-4 m^2, I = 1.5e-7 m^4, S_t = 5834.18 N m^2; channel
A = 7.3e-4 m^2, I_y = 4.8146e-8 m^4, I_z = 8.2181e-8 m^4, S_t = 0.645207 N m^2, warping constant
Gamma = 5.0156e-12 m^6 (as printed), shear-centre offset z0 = -0.01875 m. The beam lies along
the global X axis, the shaft along Z; it is spun up about Z by the prescribed angle

    psi(t) = (w_s/T_s) [t^2/2 + (T_s/(2 pi))^2 (cos(2 pi t/T_s) - 1)]  (t <= T_s),
    psi(t) = w_s (t - T_s/2)  (t > T_s),      w_s = 6 rad/s, T_s = 15 s.

Model, as Meijaard describes it:

* the rigid part is a rigid body (centre of mass at X = 4 m; its mass, 8.5 kg, and inertia, those
  of an 8 m bar of the tube's section, are not given in the paper and only change the driving
  torque), driven by a revolute joint about Z at the origin with the relative angle psi(t);
* one Beam3D element for the tube (X = 8 ... 10.5 m), its root node welded to the rigid body
  (``attach``); EI = E I, GJ = S_t, rho A, section rotary inertia rho (2I, I, I);
* the channel as four equal pairs of parallel Beam3D elements (1.375 m each): a centroid line on
  the X axis that starts at the tube's end node (the tube and channel centroids coincide) and
  carries the mass (rho A, rotary inertia rho (I_y + I_z, I_y, I_z)) and the normal stiffness EA,
  with 1e-6 of the bending and torsional stiffnesses (nothing real: they only keep every element
  stiffness well defined); and a shear-centre line at Z = z0 with the torsional and flexural
  rigidities (GJ_eff, E I_y, E I_z), 1e-6 of EA and no mass. At each of the five stations the
  centroid node is welded to the shear-centre node by a ``fixed`` joint at the shear-centre node
  (a rigid eccentric connection; a separate node line is needed because a Beam3D element has no
  offset of its own). Section axes: y along global Y (in the plane of rotation), z along Z;
* constrained warping at the root (the channel's welded end) by the effective torsional
  stiffness that gives the same end rotation under a torque. Meijaard: "effective length of the
  beam, L_f = L - (E Gamma / S_t)^(1/2)", the end-zone length a = (E Gamma / S_t)^(1/2) being
  the exact large-L result for warping restrained at one end (phi = T (L - a tanh(L/a)) / S_t).
  Implemented with L = 5.5 m, the whole channel: a = 0.7321 m, L_f = 4.7679 m and
  S_t,eff = S_t L / L_f = 0.74428 N m^2 for every shear-centre element;
* shear deformation not included (GA infinite, the Beam3D default); axial deformation: the real
  EA. The centrifugal axial strain stays below 3e-4 (about 1 mm at the tip); a 100 times stiffer
  EA changes the tip deflections by less than 1e-4 m up to t = 5 s, but Newton then diverges near
  t = 7.7 s at dt = 0.02 s (without cut-backs), so the real EA is kept;
* all Beam3D elements are one element group with per-element properties (three groups cost
  about 2.5 times as much per step, the per-group overhead of Beam3D dominating).

Outputs. Deflections of the tip centroid in the rotating frame of the rigid part (rotation R_h
of its node): x' = R_h^T x_tip, u_y = y' (in-plane), u_z = z' (out-of-plane; positive along +Z).
Total twist of the beam: with R = R_h^T R_tip the tip section's rotation relative to the rigid
part, phi = atan2(R_32 - R_23, R_22 + R_33), exact when R is a bending rotation about y or z
followed by a twist about x (R = R_b R_x(phi)). Like Meijaard's Figs. 5-6.

Checks. Qualitative (Meijaard 1993, sec. 5.2: "u_z ... returns to zero when the beam rotates at
a constant angular velocity"): after T_s the out-of-plane deflection oscillates about zero:
|mean u_z| over t > T_s at most 5 % and mean |u_z| over t > T_s at most 25 % of the largest
|u_z| during the spin-up. Exact: the joint residual max |Phi| below 1e-10 (m, and unit-vector
products) at every step; total energy K + U - W, with W the work of the drive, constant to 1e-8
of the largest kinetic energy (the mid-point scheme with the exact discrete gradient of the
joints). Full mode also runs dt = 0.02 s and checks the extremes of u_y and of the twist agree
with those at dt = 0.01 s within 1 %. Extremes of u_y, u_z and the twist, the effective
torsional stiffness and the run statistics are in the JSON. Full: dt = 0.01 s to t = 20 s;
quick: dt = 0.02 s to t = 18 s (at dt = 0.025 s Newton needs up to 35 iterations, at 0.04 s
hundreds of cut-backs: the large twist, up to 1.7 rad, makes larger steps hard).
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.rotations import exp_map
from flexmb.validation import CaseReport, Check, print_report
from flexmb.validation.spin_up import hub_angle

CASE = "spin-up-spatial"
TITLE = "Spatial spin-up of a rigid-tube-channel beam: tip deflections and twist (Beam3D, joints)"
SOURCE = "Meijaard 1993, sec. 5.2, Figs. 5-6"

RHO, E, G = 2766.67, 6.895e10, 2.6519e10          # kg/m^3, Pa, Pa
L_RIGID, L_TUBE, L_CHANNEL = 8.0, 2.5, 5.5         # m
TUBE_A, TUBE_I, TUBE_ST = 3.84e-4, 1.5e-7, 5834.18
CH_A, CH_IY, CH_IZ, CH_ST = 7.3e-4, 4.8146e-8, 8.2181e-8, 0.645207
CH_GAMMA, CH_Z0 = 5.0156e-12, -0.01875             # m^6, m
OMEGA_S, T_S = 6.0, 15.0                           # rad/s, s
T_END = 20.0                                       # s
N_CHANNEL = 4                                      # element pairs
TINY = 1e-6                                        # fraction of a stiffness that a line does not carry
WARPING_LENGTH = np.sqrt(E * CH_GAMMA / CH_ST)     # m, (E Gamma / S_t)^(1/2)
EFFECTIVE_LENGTH = L_CHANNEL - WARPING_LENGTH      # m, L_f
CH_ST_EFF = CH_ST * L_CHANNEL / EFFECTIVE_LENGTH   # N m^2
RIGID_MASS = RHO * TUBE_A * L_RIGID                # kg (not in the paper)
SRC_Q = "Meijaard 1993, sec. 5.2 (qualitative)"


def psi(t: float) -> float:
    return hub_angle(t, OMEGA_S, T_S)


def build() -> tuple[fm.Assembly, fm.RigidBody, int]:
    """Assembly, the rigid part and the tip centroid node."""
    model = fm.Model(dim=3)
    hub = model.add_rigid_body([0.5 * L_RIGID, 0.0, 0.0], RIGID_MASS,
                               [RHO * 2 * TUBE_I * L_RIGID] + 2 * [RIGID_MASS * L_RIGID**2 / 12.0],
                               name="rigid part")
    model.add_joint("revolute", None, hub, at=[0.0, 0.0, 0.0], axis=[0.0, 0.0, 1.0], drive=psi, name="drive")
    root = model.add_node([L_RIGID, 0.0, 0.0])
    x = L_RIGID + L_TUBE + np.linspace(0.0, L_CHANNEL, N_CHANNEL + 1)
    centroids = model.add_nodes(np.c_[x, np.zeros_like(x), np.zeros_like(x)])     # [0]: the tube's end
    shear = model.add_nodes(np.c_[x, np.zeros_like(x), np.full_like(x, CH_Z0)])
    n = N_CHANNEL
    conn = np.r_[[[root, centroids[0]]], np.c_[centroids[:-1], centroids[1:]], np.c_[shear[:-1], shear[1:]]]
    ones = np.ones(n)
    tube_rot = RHO * np.array([2 * TUBE_I, TUBE_I, TUBE_I])
    channel_rot = RHO * np.array([CH_IY + CH_IZ, CH_IY, CH_IZ])
    model.add_beam3d(conn,
                     EA=np.r_[E * TUBE_A, E * CH_A * ones, TINY * E * CH_A * ones],
                     GJ=np.r_[TUBE_ST, TINY * CH_ST_EFF * ones, CH_ST_EFF * ones],
                     EI_y=np.r_[E * TUBE_I, TINY * E * CH_IY * ones, E * CH_IY * ones],
                     EI_z=np.r_[E * TUBE_I, TINY * E * CH_IZ * ones, E * CH_IZ * ones],
                     rho_A=np.r_[RHO * TUBE_A, RHO * CH_A * ones, 0.0 * ones],
                     rho_I=np.r_[[tube_rot], np.tile(channel_rot, (n, 1)), np.zeros((n, 3))],
                     y_axis=(0.0, 1.0, 0.0), name="tube, channel centroid and shear-centre lines")
    model.attach(root, hub, name="tube weld")
    for k in range(n + 1):
        model.add_joint("fixed", centroids[k], shear[k], name=f"eccentric link {k}")
    return fm.Assembly(model), hub, int(centroids[-1])


def rotating_frame_outputs(asm: fm.Assembly, hub: fm.RigidBody, tip: int, h: fm.TimeHistory
                           ) -> tuple[np.ndarray, np.ndarray]:
    """Tip centroid displacement in the rotating frame (n_out, 3) and total twist phi (n_out,)."""
    u = np.array(h.u)
    R_hub = exp_map(u[:, asm.dofs.index(hub.node, "rx"):][:, :3])
    R_tip = exp_map(u[:, asm.dofs.index(tip, "rx"):][:, :3])
    x_tip = np.array([asm.positions(uk)[tip] for uk in u])
    local = np.einsum("tji,tj->ti", R_hub, x_tip) - [L_RIGID + L_TUBE + L_CHANNEL, 0.0, 0.0]
    R = np.einsum("tji,tjk->tik", R_hub, R_tip)
    twist = np.arctan2(R[:, 2, 1] - R[:, 1, 2], R[:, 1, 1] + R[:, 2, 2])
    return local, twist


def simulate(asm: fm.Assembly, hub: fm.RigidBody, tip: int, dt: float, t_end: float = T_END) -> dict:
    # psi(t) is flat at t = 0, but flexmb's central difference of the drive (h = 1e-6 s) sees
    # round-off of about 3e-11 rad/s, which its velocity check rejects from rest: project
    u0, v0 = fm.consistent_initial_state(asm)
    h = fm.integrate(asm, dt, t_end, u0=u0, v0=v0, progress=False)
    local, twist = rotating_frame_outputs(asm, hub, tip, h)
    return {"h": h, "t": np.array(h.t), "uy": local[:, 1], "uz": local[:, 2], "ux": local[:, 0], "twist": twist,
            "dt": dt}


def extremes(r: dict) -> dict:
    t = r["t"]
    out = {}
    for key in ("uy", "uz", "twist"):
        y = r[key]
        kmin, kmax = int(np.argmin(y)), int(np.argmax(y))
        out[key] = {"min": float(y[kmin]), "t_min_s": float(t[kmin]), "max": float(y[kmax]), "t_max_s": float(t[kmax])}
    return out


def run(quick: bool = False) -> CaseReport:
    asm, hub, tip = build()
    base = simulate(asm, hub, tip, 0.02, 18.0) if quick else simulate(asm, hub, tip, 0.01)
    runs = [base] if quick else [base, simulate(asm, hub, tip, 0.02)]
    h, t = base["h"], base["t"]
    report = CaseReport(CASE, n_dof=asm.n_dof, n_steps=sum(len(r["t"]) - 1 for r in runs))
    during, after = t <= T_S, t > T_S
    uz_peak = float(np.abs(base["uz"][during]).max())
    mean_after = float(base["uz"][after].mean())
    mean_abs_after = float(np.abs(base["uz"][after]).mean())
    dt = base["dt"]
    report.add(Check.at_most(f"dt={dt:g}: |mean u_z| for t > T_s / max |u_z| for t <= T_s", abs(mean_after) / uz_peak,
                             0.05, SRC_Q))
    report.add(Check.at_most(f"dt={dt:g}: mean |u_z| for t > T_s / max |u_z| for t <= T_s", mean_abs_after / uz_peak,
                             0.25, SRC_Q))
    report.add(Check.at_most(f"dt={dt:g}: max joint residual |Phi|, every step", max(h.constraint_residual), 1e-10,
                             "joint equations hold exactly"))
    k_max = float(max(h.kinetic))
    energy = float(np.abs(h.total - h.total[0]).max() / k_max)
    report.add(Check.at_most(f"dt={dt:g}: max |K + U - W_drive - E0| / K_max", energy, 1e-8,
                             "energy balance (mid-point scheme, Crisfield & Shi 1993)"))
    info = {"effective_torsion": {"warping_length_m": WARPING_LENGTH, "L_f_m": EFFECTIVE_LENGTH,
                                  "S_t_eff_Nm2": CH_ST_EFF, "S_t_Nm2": CH_ST},
            "rigid_part_mass_kg (not in the paper)": RIGID_MASS,
            "extremes": extremes(base),
            "uz_after_Ts": {"mean_m": mean_after, "mean_abs_m": mean_abs_after,
                            "amplitude_m": float(0.5 * np.ptp(base["uz"][after]))},
            "uy_after_Ts": {"mean_m": float(base["uy"][after].mean()),
                            "amplitude_m": float(0.5 * np.ptp(base["uy"][after]))},
            "twist_after_Ts": {"mean_rad": float(base["twist"][after].mean()),
                               "amplitude_rad": float(0.5 * np.ptp(base["twist"][after]))},
            "largest_kinetic_energy_J": k_max, "drive_work_at_end_J": float(h.work[-1]),
            "largest_tip_shortening_ux_m (bending foreshortening)": float(base["ux"].min())}
    for r in runs:
        hr = r["h"]
        info[f"dt={r['dt']:g}"] = {"steps": len(r["t"]) - 1, "newton_iterations_mean": float(np.mean(hr.newton_iterations[1:])),
                                   "newton_iterations_max": int(np.max(hr.newton_iterations[1:])),
                                   "cutbacks": int(hr.cutbacks)}
    if not quick:
        coarse = runs[1]
        fine_x, coarse_x = extremes(base), extremes(coarse)
        info["dt=0.02 extremes"] = coarse_x
        report.add(Check.close("min u_y: dt=0.02 vs dt=0.01 (m)", coarse_x["uy"]["min"], fine_x["uy"]["min"], 0.01,
                               "time-step convergence"))
        report.add(Check.close("max twist: dt=0.02 vs dt=0.01 (rad)", coarse_x["twist"]["max"],
                               fine_x["twist"]["max"], 0.01, "time-step convergence"))
    report.info.update(info)
    report.figure = _figure(runs)
    return report


def _figure(runs: list[dict]):
    from flexmb.viz.plots import panels

    fig, axes = panels(4, "Spatial spin-up (Meijaard 1993, sec. 5.2): rigid 8 m + tube 2.5 m + channel 5.5 m, "
                          "w_s = 6 rad/s, T_s = 15 s", width=4.3)
    for r in runs:
        label = f"dt = {r['dt']:g} s"
        axes[0].plot(r["t"], r["uy"], lw=1, label=label)
        axes[1].plot(r["t"], r["uz"], lw=1, label=label)
        axes[2].plot(r["t"], r["twist"], lw=1, label=label)
        h = r["h"]
        axes[3].semilogy(r["t"], np.maximum(np.abs(h.total - h.total[0]) / max(h.kinetic), 1e-17),
                         lw=1, label=f"energy, {label}")
        axes[3].semilogy(r["t"], np.maximum(h.constraint_residual, 1e-17), lw=1, ls="--", label=f"|Phi|, {label}")
    axes[0].set_ylabel("in-plane tip deflection u_y (m)")
    axes[1].set_ylabel("out-of-plane tip deflection u_z (m)")
    axes[2].set_ylabel("total twist (rad)")
    axes[3].set_ylabel("|E - E0| / K_max;  max |Phi|")
    for ax in axes:
        ax.axvline(T_S, color="k", lw=0.6, ls=":")
        ax.set_xlabel("time (s)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
