"""Components from external matrices: a component written to Matrix Market files and read back.

The cantilever of ``cms-beam`` (steel, L = 2 m, 30 mm square section, planar Beam2D elements with
consistent mass, cut into 4 components) has each component written with
:func:`flexmb.cms.imported.write_component` (``K.mtx``, ``M.mtx``: Matrix Market coordinate real
symmetric, shortest round-trip decimals; ``component.json``: node labels, coordinates, the node and
DOF of every row, the interface) and read back with :func:`~flexmb.cms.imported.read_component`, which
holds the matrices in one linear superelement group (:class:`~flexmb.cms.imported.MatrixGroup`).

Exact reference: the components before writing. A round trip that loses nothing gives the same
K and M (checked to 1e-14 relative) and hence the same reduced models: the CMS frequencies of
modes 1-5 (free-interface with residual flexibility, 3 modes per component, and Craig-Bampton, 3
fixed-interface modes) agree to 1e-10 relative, all four components imported and two imported
beside two of flexmb's own; the normalised sensitivities of modes 1-3 to the whole-component
stiffness and density scales of an imported component (``stiffness_scale(name)``,
``density_scale(name)``) agree to 1e-10 (absolute, they are of order 0.1). For information the
CMS frequencies are compared with the full FE model (0.05 %, as in ``cms-beam``).

Modal body: the 2 m beam as a modal body (Craig-Bampton, 3 modes, frame at the root) on a hub
driven by the spin-up law of ``spin-up-simo`` (omega_s = 4 rad/s in T_s = 0.5 s), integrated to
T = 0.6 s by the mid-point scheme. The body built from the imported matrices and the one built
from the beam's own FE model are compared array by array, bit for bit (number of differing
entries 0): the basis, the inertia invariants and the simulated displacements and velocities.
Imported matrices carry no element stresses, so their unit geometric stiffness is zero and both
bodies run without stiffening (``stiffening=False``); that the beam's own data has non-zero
geometric stiffness while the imported one has none is checked and reported.
"""
from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.checks import FlexmbWarning
from flexmb.cms import Component, craig_bampton, free_interface, synthesize
from flexmb.cms.design import density_scale, stiffness_scale
from flexmb.cms.imported import imported_modal_body, read_component, write_component
from flexmb.cms.modal_body import ModalBodyData
from flexmb.cms.sensitivity import eigen_sensitivity
from flexmb.validation import CaseReport, Check, print_report
from flexmb.validation.registry import load_module
from flexmb.validation.spin_up import hub_angle

CASE = "imported-component"
TITLE = "Component written to Matrix Market files and read back: CMS, sensitivities, modal body"
SOURCE = "exact: the component before writing (round trip); the full FE model for information"

ELEMENTS_PER_COMPONENT = {False: 20, True: 10}   # by quick mode
KEPT_MODES = 3                                   # free-interface elastic / Craig-Bampton fixed-interface modes
MATRIX_RTOL = 1e-14                              # K, M round trip (issue 32)
FREQUENCY_RTOL = 1e-10                           # CMS frequencies (issue 32)
SENSITIVITY_ATOL = 1e-10                         # normalised sensitivities (dimensionless, order 0.1)
FE_TOLERANCE = 5e-4                              # CMS vs full FE model, as cms-beam (issue 13)
BODY_ELEMENTS = 10
BODY_MODES = 3
OMEGA_S, T_S, T_END = 4.0, 0.5, 0.6              # rad/s, s, s: spin-up of the modal body
DT = {False: 2e-3, True: 5e-3}                   # s


def _beam_case():
    return load_module(Path(__file__).with_name("cms_beam.py"))


def round_trip(components: list[Component], folder: Path, parent: fm.Model) -> list[Component]:
    """Every component written to ``folder/<name>`` and read back on the same parent model."""
    return [read_component(write_component(c, folder / c.name.replace(" ", "_")), parent=parent) for c in components]


def _relative_difference(A, B) -> float:
    return float(abs(A - B).max() / abs(A).max())


def run(quick: bool = False) -> CaseReport:
    beam = _beam_case()
    model = beam.build(ELEMENTS_PER_COMPONENT[quick])
    own = beam.split(model)
    report = CaseReport(CASE, n_dof=fm.Assembly(model).n_free, n_steps=1)
    with tempfile.TemporaryDirectory() as tmp:
        imported = round_trip(own, Path(tmp), model)
        files = sorted(p.name for p in (Path(tmp) / own[0].name.replace(" ", "_")).iterdir())
        matrix_error = max(max(_relative_difference(a.K, b.K), _relative_difference(a.M, b.M))
                           for a, b in zip(own, imported))
        report.add(Check.at_most("max relative difference of K and M after the round trip", matrix_error, MATRIX_RTOL,
                                 "exact: the written component (issue 32: 1e-14)"))
        reductions = {"free-interface + residual": lambda c: free_interface(c, n_elastic_modes=KEPT_MODES),
                      "Craig-Bampton": lambda c: craig_bampton(c, n_modes=KEPT_MODES)}
        frequencies = {}
        for label, reduce in reductions.items():
            reference = synthesize([reduce(c) for c in own]).modes(5).frequencies_hz
            for which, parts in (("all imported", imported), ("2 imported + 2 own", own[:2] + imported[2:])):
                f = synthesize([reduce(c) for c in parts]).modes(5).frequencies_hz
                report.add(Check.at_most(f"{label}, {which}: max |f / f_own - 1|, modes 1-5",
                                         float(np.abs(f / reference - 1.0).max()), FREQUENCY_RTOL,
                                         "exact: the components before writing (issue 32: 1e-10)"))
                frequencies[f"{label}, {which}"] = f.tolist()
            frequencies[f"{label}, own"] = reference.tolist()
        full = fm.natural_modes(model, 5, dense_limit=0).frequencies_hz
        fi = np.asarray(frequencies["free-interface + residual, all imported"])
        report.add(Check.at_most("free-interface, all imported: max |f / f_FE - 1|, modes 1-5 (information)",
                                 float(np.abs(fi / full - 1.0).max()), FE_TOLERANCE, "full FE model (issue 13)"))

        name = own[2].name
        variables = [stiffness_scale(name), density_scale(name)]
        s_own = eigen_sensitivity(synthesize([free_interface(c, n_elastic_modes=KEPT_MODES) for c in own]),
                                  variables).normalised[:3]
        s_imp = eigen_sensitivity(synthesize([free_interface(c, n_elastic_modes=KEPT_MODES) for c in imported]),
                                  variables).normalised[:3]
        report.add(Check.at_most(f"whole-component stiffness and density scale of {name!r}: max |s_imported - "
                                 "s_own|, modes 1-3", float(np.abs(s_imp - s_own).max()), SENSITIVITY_ATOL,
                                 "exact: the components before writing"))

        body_checks, body_info, curves = _modal_body(Path(tmp), quick)
    for check in body_checks:
        report.add(check)
    report.info.update({"files": files, "max_matrix_relative_difference": matrix_error,
                        "fe_frequencies_hz": full.tolist(), "cms_frequencies_hz": frequencies,
                        "normalised_sensitivities": {"own": s_own.tolist(), "imported": s_imp.tolist(),
                                                     "columns": ["stiffness scale", "density scale"]},
                        "modal_body": body_info})
    report.figure = _figure(frequencies, full, curves)
    return report


def _figure(frequencies: dict, full: np.ndarray, curves: dict[str, np.ndarray]):
    from flexmb.viz.plots import panels

    fig, (ax, ax2) = panels(2, "Components read back from Matrix Market files")
    modes = np.arange(1, 6)
    for label, marker in (("free-interface + residual", "o"), ("Craig-Bampton", "s")):
        own = np.asarray(frequencies[f"{label}, own"])
        ax.semilogy(modes, np.abs(own / full - 1.0), marker + "-", label=f"{label}: own components")
        for which, style in (("all imported", "x"), ("2 imported + 2 own", "+")):
            f = np.asarray(frequencies[f"{label}, {which}"])
            ax.semilogy(modes, np.abs(f / full - 1.0), style, ms=10, label=f"{label}: {which}")
    ax.set_xlabel("mode")
    ax.set_ylabel("|f_CMS / f_FE - 1| (imported on top of own)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    ax2.plot(curves["t"], 1e3 * curves["own"], "-", lw=2, label="beam's own modal body")
    ax2.plot(curves["t"], 1e3 * curves["imported"], "--", lw=1, label="from K.mtx, M.mtx (bit for bit)")
    ax2.set_xlabel("t (s)")
    ax2.set_ylabel("tip deflection in the body frame (mm), no stiffening")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return fig


def _body_model(beam) -> fm.Model:
    """The 2 m beam of cms-beam alone, free, root at node 0."""
    body = fm.Model(dim=2)
    x = np.linspace(0.0, beam.LENGTH, BODY_ELEMENTS + 1)
    nodes = body.add_nodes(np.c_[x, np.zeros_like(x)])
    body.add_beam2d(np.c_[nodes[:-1], nodes[1:]], beam.E * beam.AREA, beam.E * beam.INERTIA, beam.RHO * beam.AREA,
                    beam.RHO * beam.INERTIA, mass="consistent", name="beam")
    return body


def _spin_up(data: ModalBodyData, dt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Times (n,), displacements and velocities (n, n_dof) of the modal body on the driven hub (no
    stiffening), and the DOF indices of its modal coordinates."""
    model = fm.Model(dim=2)
    body = model.add_modal_body(data, stiffening=False, name="beam")
    frame = int(body.connectivity[0, 0])
    model.fix(frame, ["ux", "uy"])
    model.prescribe(frame, "rz", lambda t: hub_angle(t, OMEGA_S, T_S))
    asm = fm.Assembly(model)
    h = fm.integrate(asm, dt, T_END, progress=False)
    return np.asarray(h.t), np.asarray(h.u), np.asarray(h.v), asm.dofs.internal_dofs(body)


def _modal_body(folder: Path, quick: bool) -> tuple[list[Check], dict, dict[str, np.ndarray]]:
    body = _body_model(_beam_case())
    own = ModalBodyData.from_model(body, frame_node=0, n_modes=BODY_MODES, name="beam")
    imported = read_component(write_component(Component.from_model(body, [0], name="beam"), folder / "body"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FlexmbWarning)          # the documented absence of stiffening
        data = imported_modal_body(imported, frame_node=0, n_modes=BODY_MODES)
    fields = ["basis", "modal_stiffness", "modal_mass", "mass", "first_moment0", "first_moment1", "inertia0",
              "inertia1", "inertia2", "translation_coupling", "rotation_coupling0", "rotation_coupling1"]
    differing_data = sum(int(np.count_nonzero(getattr(own, f) != getattr(data, f))) for f in fields)
    t0, u0, v0, q = _spin_up(own, DT[quick])
    t1, u1, v1, _ = _spin_up(data, DT[quick])
    tip_row = imported.local_dof(BODY_ELEMENTS, "uy")                    # tip deflection in the body frame
    curves = {"t": t0, "own": u0[:, q] @ own.basis[tip_row], "imported": u1[:, q] @ data.basis[tip_row]}
    same_shape = u0.shape == u1.shape and v0.shape == v1.shape and t0.shape == t1.shape
    differing_run = (int(np.count_nonzero(u0 != u1) + np.count_nonzero(v0 != v1) + np.count_nonzero(t0 != t1))
                     if same_shape else -1)
    source = "exact: the beam's own modal body (bit for bit, issue 32)"
    checks = [Check.at_most("modal body data: entries differing from the beam's own (basis, invariants)",
                            differing_data, 0, source),
              Check.at_most("modal body spin-up (no stiffening): entries of t, u, v differing from the beam's own",
                            differing_run if differing_run >= 0 else np.inf, 0, source),
              Check.at_least("max |q| over the spin-up (kg^1/2 m): the run moves the modes",
                             float(np.abs(u0[:, q]).max()), 1e-9, "non-trivial response"),
              Check.at_most("imported body: max |unit geometric stiffness| (no stresses, none)",
                            float(np.abs(data.geometric_stiffness).max()), 0.0, "documented limitation")]
    info = {"steps": int(t0.size - 1), "dt": DT[quick], "own_geometric_stiffness_max": float(
        np.abs(own.geometric_stiffness).max()), "omega_rad_s": own.omega.tolist(),
        "max_abs_modal_coordinate": float(np.abs(u0[:, q]).max())}
    return checks, info, curves


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
