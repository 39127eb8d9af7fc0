"""Transient design sensitivities with spatial rotations: a free-flying Shell3 plate and Simo's spin-up
beam as a 3D modal body (issue 33: "one shell and one 3D modal-body case").

Models:

* **Plate**: the L-shaped steel plate of ``shell-flying-plate`` (the square [0, 1 m]^2 without its
  quadrant x, y > 0.5 m; h = 0.01 m, E = 210 GPa, nu = 0.3, rho = 7800 kg/m^3, lumped mass with the
  nodal rotary inertia, no supports), on a coarse mesh (``PLATE_CELLS`` = 4 cells per side, 24
  triangles), without the corner load: it starts tumbling as that case's rigid body (V = (1, 0.5, 0)
  m/s, W = (4, 0, 6) rad/s) plus a bending rate, the plate's first elastic mode scaled to
  ``BENDING_RATE`` = 1 m/s at its largest translation. ``PLATE_STEPS`` = 40 mid-point steps of T1/10
  (T1 its first elastic period). Parameters: the multipliers of the shell group's E and rho (stiffness
  and density scales, baseline 1). Responses: the z coordinate (m) of the corner (1, 0) at the last
  step, and the time integral of the strain energy (J s; trapezoid over the steps).
* **3D modal body**: the beam of ``spin-up-modal-spatial`` (Simo & Vu-Quoc's spin-up beam, L = 10 m,
  20 consistent-mass Beam3D elements reduced to 6 cantilever modes with the frame at the root, stiffened)
  on a revolute joint about z driven by the spin-up angle of ``spin-up-simo``; ``MODAL_STEPS`` = 40
  mid-point steps of 0.1 s (the first 4 s of the spin-up). Parameters: the body's stiffness and density
  scales. Response: the global y coordinate (m) of the tip at the last step (``ModalPoint``: the frame's
  position and rotation and the tip's modal displacement, r + R (X + Phi q)).

The frame's and the plate nodes' rotations are spatial: the derivatives run through the spin maps of
:mod:`flexmb.sensitivity.rotations` (the state's derivative at a rotation is a spin, and the responses
read the rotations through it).

Checked, each against a reference of another kind:

1. The discrete adjoint (:func:`flexmb.sensitivity.adjoint.adjoint_gradient`) against direct
   differentiation (:func:`flexmb.sensitivity.midpoint.direct_sensitivities`) to 1e-8 relative.
2. Both against central differences of re-runs of the changed model over the same step list, at the
   most stable step h* of a step study h = 1e-2 ... 1e-9 (relative to the baseline 1;
   :mod:`flexmb.validation.step_study`), to 1e-5 relative (the issue's criteria).
3. Exact scaling identities free of differences: nothing loads either model (the plate flies free, the
   beam's hub is driven), and the start states are given, so multiplying all stiffness and all mass by
   one factor multiplies the step residuals by it and leaves every state unchanged. Hence for the
   kinematic responses ``dF/dp_E + dF/dp_rho = 0`` (checked relative to the larger term), and the strain
   energy, which scales with the stiffness at fixed states, has ``dF/dp_E + dF/dp_rho = F``.

Every run (re-runs too) iterates to Newton's round-off stop (residual_tol 1e-15): under the default
(1e-10 of the force scale) the shell's rotations, stiff against their small rotary inertia, stop about
4e-10 rad short of the solution, and central differences of such re-runs miss the derivative of the
discrete map by about 4e-7 whatever h (measured on a smaller plate; the derivative is that of the exact
discrete map, the differences are of Newton's iterates).
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.cms import design
from flexmb.integrators.newton import NewtonSettings
from flexmb.io.shell_mesh import rectangle
from flexmb.rotations import exp_map, skew
from flexmb.sensitivity import parameters as P
from flexmb.sensitivity import responses as R
from flexmb.sensitivity.adjoint import adjoint_gradient, trajectory
from flexmb.sensitivity.midpoint import direct_sensitivities
from flexmb.sensitivity.transient import RecordedRun, record, replay, scheme_for
from flexmb.validation import CaseReport, Check, print_report
from flexmb.validation.registry import load_module
from flexmb.validation.step_study import draw_step_study_axes, most_stable_step

CASE = "sensitivity-shell-modal3d"
TITLE = ("Transient sensitivities with spatial rotations: a free-flying Shell3 plate (E, rho) and the spin-up "
         "beam as a 3D modal body (stiffness, density scale); direct, adjoint, central differences, scaling")
SOURCE = "exact: central differences of re-runs; scaling identities (models: shell-flying-plate, spin-up-modal-spatial)"

PLATE_CELLS = 4                 # cells per side of the square (two triangles each)
BENDING_RATE = 1.0              # m/s: the first elastic mode's largest translation rate at the start
PLATE_STEPS = {False: 40, True: 40}        # steps of T1/10
MODAL_STEPS = {False: 40, True: 20}        # steps of MODAL_DT
MODAL_DT = 0.1                  # s
FD_STEPS = {False: 10.0 ** -np.arange(2.0, 10.0), True: 10.0 ** -np.arange(3.0, 9.0)}
ADJOINT_TOL = 1e-8              # issue 33: direct and adjoint agree to 1e-8 relative
FD_TOL = 1e-5                   # issue 33: both agree with central differences to 1e-5
IDENTITY_TOL = 1e-9             # scaling identities, relative to their largest term (round-off)
NEWTON = NewtonSettings(residual_tol=1e-15)               # to the round-off stop (module docstring)
SRC_DDM = "direct differentiation of the discrete map (flexmb.sensitivity.midpoint)"
SRC_IDENTITY = "exact: scaling identity (no load, given start state)"


class ModalPoint(R.Signal):
    """Global coordinate ``component`` (m) of a point of a 3D modal body, ``r + R (X + Phi q)``: the
    frame's position r and rotation R (its node's DOFs ``frame``: 3 translations then 3 rotations), the
    point's reference position X (3,) in the frame and its mode shapes Phi (3, n_m) at the modal
    coordinates ``modal`` (n_m,). Derivatives: e_c on r, ``-hat(R s)`` row c on the frame's spin
    (s = X + Phi q), ``(R Phi)`` row c on q."""

    unit = "m"

    def __init__(self, frame: np.ndarray, modal: np.ndarray, x0: np.ndarray, X: np.ndarray, Phi: np.ndarray,
                 component: int) -> None:
        self.frame, self.modal, self.x0, self.X, self.Phi, self.c = frame, modal, x0, X, Phi, component

    def evaluate(self, traj, steps):
        u = traj.u[steps]
        R_ = exp_map(u[:, self.frame[3:]])                                  # (m, 3, 3)
        s = self.X[None] + u[:, self.modal] @ self.Phi.T                    # (m, 3)
        Rs = np.einsum("mij,mj->mi", R_, s)
        c = self.c
        y = self.x0[c] + u[:, self.frame[c]] + Rs[:, c]
        values = np.c_[np.ones(steps.size), -skew(Rs)[:, c, :], np.einsum("mj,jk->mk", R_[:, c, :], self.Phi)]
        return y, {"u": (np.r_[self.frame[c], self.frame[3:], self.modal], values)}


def _coarse_l_plate(side: float) -> tuple[np.ndarray, np.ndarray]:
    """Node coordinates and triangles of shell-flying-plate's L on PLATE_CELLS cells per side."""
    xyz, triangles = rectangle(side, side, PLATE_CELLS, PLATE_CELLS, pattern="right")
    centroid = xyz[triangles].mean(axis=1)
    kept = triangles[~((centroid[:, 0] > 0.5 * side) & (centroid[:, 1] > 0.5 * side))]
    used = np.unique(kept)
    renumber = np.full(xyz.shape[0], -1, dtype=np.int64)
    renumber[used] = np.arange(used.size)
    return xyz[used], renumber[kept]


def plate() -> tuple[fm.Model, np.ndarray, float, int]:
    """The plate model, its start velocities (n_dof,), T1 (s) and the corner node (1, 0)."""
    flying = load_module(Path(__file__).with_name("shell_flying_plate.py"))
    xyz, triangles = _coarse_l_plate(flying.SIDE)
    model = fm.Model(dim=3)
    nodes = model.add_nodes(xyz)
    model.add_shell(nodes[triangles], E=flying.E, nu=flying.NU, thickness=flying.THICKNESS, rho=flying.RHO,
                    mass="lumped", name="plate")
    asm = fm.Assembly(model)
    modes = fm.natural_modes(asm, 8)
    bending = modes.modes[modes.n_rigid]                                    # (n_dof,) the first elastic mode
    bending = bending * BENDING_RATE / np.abs(bending[asm.dofs.translations()]).max()
    v0 = bending.copy()
    centre = xyz.mean(axis=0)
    for node in nodes:
        i = asm.dofs.index(node, "ux")
        v0[i:i + 3] += flying.V0 + np.cross(flying.W0, xyz[node] - centre)
        v0[i + 3:i + 6] += flying.W0
    corner = int(nodes[np.argmin(np.linalg.norm(xyz[:, :2] - flying.LOADED_CORNER, axis=1))])
    return model, v0, 2.0 * np.pi / modes.omega[modes.n_rigid], corner


def modal_body() -> tuple[fm.Model, ModalPoint]:
    """The spin-up beam as a 3D modal body on its driven joint, and its tip's global y."""
    spatial = load_module(Path(__file__).with_name("spin_up_modal_spatial.py"))
    beam = load_module(Path(__file__).with_name("spin_up_simo.py")).PARAMETERS
    data, tip_uy, tip_uz = spatial.body_data(beam)
    model = fm.Model(dim=3)
    body = model.add_modal_body(data, name="beam")
    frame = int(body.connectivity[0, 0])
    spatial._on_drive(model, frame, beam.psi)
    asm = fm.Assembly(model)
    Phi = data.basis[[tip_uy - 1, tip_uy, tip_uz]]                      # the tip's ux, uy, uz rows (consecutive)
    first = asm.dofs.first[frame]
    tip = ModalPoint(first + np.arange(6), asm.dofs.internal_dofs(body), model.coordinates[frame],
                     np.array([beam.length, 0.0, 0.0]), Phi, 1)
    return model, tip


def _rerun(run: RecordedRun, model: fm.Model) -> R.Trajectory:
    """The trajectory of a changed copy of the model from the run's start over its step list."""
    asm = fm.Assembly(model)
    stepper = scheme_for(asm, run.stepper.name)
    s0 = run.states[0]
    start = stepper.initial_state(s0.t, s0.u.copy(), s0.v.copy())
    states = [start] + replay(asm, stepper, start, run.steps, run.settings)
    return R.Trajectory([s.t for s in states], [s.u for s in states], [s.v for s in states], asm)


def step_study(run: RecordedRun, responses, p: P.TransientParameter, exact: np.ndarray, steps: np.ndarray
               ) -> list[dict]:
    """Per response (``responses(traj)`` returns their values), the central differences over the
    relative steps, their errors against ``exact`` (n_r,) and the most stable step with its difference."""
    model = run.asm.model
    rows = []
    for h in steps:
        plus, minus = (np.array(responses(_rerun(run, p.apply(model, 1.0 + s * h)))) for s in (1.0, -1.0))
        rows.append((plus - minus) / (2.0 * h))
    fd = np.array(rows)                                                     # (n_h, n_r)
    out = []
    for r in range(fd.shape[1]):
        best = most_stable_step(fd[:, r])
        errors = np.abs(fd[:, r] - exact[r]) / abs(exact[r])
        out.append({"h": steps.tolist(), "fd": fd[:, r].tolist(), "error": errors.tolist(), "best": best,
                    "h_best": float(steps[best]), "fd_best": float(fd[best, r])})
    return out


def _checks(report: CaseReport, label: str, names: list[str], params: list, ddm: np.ndarray, adj: np.ndarray,
            studies: dict) -> None:
    for r, name in enumerate(names):
        for j, p in enumerate(params):
            what = f"{label} d({name})/d({p.name})"
            report.add(Check.close(f"{what}: adjoint vs direct", adj[r, j], ddm[r, j], ADJOINT_TOL, SRC_DDM))
            study = studies[p.name][r]
            src = f"central difference of re-runs at the most stable step h* = {study['h_best']:.0e}"
            report.add(Check.close(f"{what}: direct vs FD(h*)", ddm[r, j], study["fd_best"], FD_TOL, src))
            report.add(Check.close(f"{what}: adjoint vs FD(h*)", adj[r, j], study["fd_best"], FD_TOL, src))


def _case(model: fm.Model, v0: np.ndarray | None, dt: float, n_steps: int, params: list, responses,
          fd_steps: np.ndarray, timing: dict, label: str) -> tuple:
    """Record, differentiate both ways and study the steps of one model: (run, traj, values, ddm, adj, adjoint,
    studies)."""
    clock = time.process_time()
    run = record(model, dt, n_steps * dt, v0=v0, newton=NEWTON)
    timing[f"{label}: forward run"] = time.process_time() - clock
    clock = time.process_time()
    traj = trajectory(run)
    values = responses(traj, params)
    adjoint = adjoint_gradient(run, params, values)
    timing[f"{label}: adjoint, {len(params)} parameters"] = time.process_time() - clock
    clock = time.process_time()
    sens = direct_sensitivities(run, params)
    direct = responses(sens.trajectory(), params)
    ddm = np.array([sens.gradient(v) for v in direct])
    timing[f"{label}: direct, {len(params)} parameters"] = time.process_time() - clock
    clock = time.process_time()
    studies = {p.name: step_study(run, lambda t: [v.value for v in responses(t, ())], p, ddm[:, j], fd_steps)
               for j, p in enumerate(params)}
    timing[f"{label}: step studies ({2 * len(fd_steps)} re-runs per parameter)"] = time.process_time() - clock
    return run, traj, np.array([v.value for v in values]), ddm, adjoint.gradient, adjoint, studies


def run(quick: bool = False) -> CaseReport:
    timing: dict[str, float] = {}
    fd_steps = FD_STEPS[quick]

    # ---- the plate
    model, v0, T1, corner = plate()
    asm = fm.Assembly(model)
    params = [P.parameter(design.stiffness_scale("plate")), P.parameter(design.density_scale("plate"))]
    corner_z = R.point(asm, corner, 2)

    def plate_responses(traj, parameters):
        # the strain energy of the trajectory's own model (a re-run's changed stiffness included)
        return [R.final(corner_z, traj, parameters=parameters),
                R.integral(R.strain_energy(traj.asm), traj, parameters=parameters)]

    names = ["corner z (m)", "integral of strain energy (J s)"]
    dt = T1 / 10.0
    p_run, p_traj, p_values, p_ddm, p_adj, p_adjoint, p_studies = _case(
        model, v0, dt, PLATE_STEPS[quick], params, plate_responses, fd_steps, timing, "plate")
    report = CaseReport(CASE, n_dof=asm.n_dof)
    _checks(report, "plate", names, params, p_ddm, p_adj, p_studies)
    for name, grad in (("adjoint", p_adj), ("direct", p_ddm)):
        report.add(Check.at_most(f"plate {name}: corner z, |dF/dE + dF/drho| / max term",
                                 abs(grad[0].sum()) / np.abs(grad[0]).max(), IDENTITY_TOL, SRC_IDENTITY))
        report.add(Check.at_most(f"plate {name}: strain energy integral, |dF/dE + dF/drho - F| / F",
                                 abs(grad[1].sum() - p_values[1]) / p_values[1], IDENTITY_TOL, SRC_IDENTITY))
    rd = asm.rotation_dofs
    rotation = float(np.linalg.norm(p_traj.u[-1][rd], axis=1).max())

    # ---- the 3D modal body
    m_model, tip = modal_body()
    m_params = [P.parameter(design.stiffness_scale("beam")), P.parameter(design.density_scale("beam"))]

    def modal_responses(traj, parameters):
        return [R.final(tip, traj, parameters=parameters)]

    m_run, m_traj, m_values, m_ddm, m_adj, m_adjoint, m_studies = _case(
        m_model, None, MODAL_DT, MODAL_STEPS[quick], m_params, modal_responses, fd_steps, timing, "modal body")
    _checks(report, "modal body", ["tip y (m)"], m_params, m_ddm, m_adj, m_studies)
    for name, grad in (("adjoint", m_adj), ("direct", m_ddm)):
        report.add(Check.at_most(f"modal body {name}: tip y, |dF/dk + dF/drho| / max term",
                                 abs(grad[0].sum()) / np.abs(grad[0]).max(), IDENTITY_TOL, SRC_IDENTITY))

    n_runs = 1 + 2 * len(fd_steps) * 2
    report.n_steps = n_runs * (PLATE_STEPS[quick] + MODAL_STEPS[quick])
    report.info.update({
        "plate": {"model": f"coarse L plate of shell-flying-plate, {asm.groups[0].n_elements} Shell3, lumped mass, "
                           f"free, tumbling plus a bending rate of {BENDING_RATE} m/s (first elastic mode)",
                  "T1_s": T1, "dt_s": dt, "steps": PLATE_STEPS[quick], "largest_rotation_rad": rotation,
                  "values": dict(zip(names, p_values.tolist())),
                  "gradient": {n: {p.name: {"direct": float(p_ddm[r, j]), "adjoint": float(p_adj[r, j])}
                                   for j, p in enumerate(params)} for r, n in enumerate(names)},
                  "step_study": p_studies,
                  "adjoint": {"solves": p_adjoint.solves, "states_held": p_adjoint.states_held,
                              "memory_bytes": p_adjoint.memory_bytes}},
        "modal_body": {"model": "spin-up beam (L = 10 m) as a 3D modal body, 6 stiffened modes, driven revolute hub",
                       "dt_s": MODAL_DT, "steps": MODAL_STEPS[quick], "tip_y_m": float(m_values[0]),
                       "gradient": {p.name: {"direct": float(m_ddm[0, j]), "adjoint": float(m_adj[0, j])}
                                    for j, p in enumerate(m_params)},
                       "step_study": m_studies,
                       "adjoint": {"solves": m_adjoint.solves, "states_held": m_adjoint.states_held,
                                   "memory_bytes": m_adjoint.memory_bytes}},
        "newton": "residual_tol 1e-15: iterations to the round-off stop (defaults otherwise)",
        "unit": "response unit per unit multiplier",
        "cpu_s": timing,
    })
    report.figure = _figure(p_studies, m_studies, names, fd_steps)
    return report


def _figure(p_studies: dict, m_studies: dict, names: list[str], fd_steps: np.ndarray):
    from flexmb.viz.plots import legend_outside, panels

    fig, (ax,) = panels(1, "Shell3 plate and 3D modal body: step studies", width=8.0, height=6.0)
    k = 0
    for label, studies, rows in (("plate", p_studies, names), ("modal body", m_studies, ["tip y"])):
        for pname, study in studies.items():
            for r, row in enumerate(study):
                errors = np.maximum(row["error"], 1e-16)
                ax.loglog(fd_steps, errors, "o-", color=f"C{k}", ms=4, label=f"{label}: {rows[r]}, {pname}")
                ax.plot(row["h_best"], errors[row["best"]], "k+", ms=10)
                k += 1
    draw_step_study_axes(ax, FD_TOL)
    legend_outside(ax, 7, ncol=1)
    fig.tight_layout()
    return fig


def main() -> None:
    report = run()
    print_report(report)


if __name__ == "__main__":
    main()
