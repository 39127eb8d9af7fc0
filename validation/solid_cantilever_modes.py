"""Natural modes of a solid cantilever (tet10 and hex8) and its component mode synthesis in four
components cut by geometry.

A slender steel box beam, L = 1 m along x, section B = 0.08 m (y) x H = 0.05 m (z), E = 210 GPa,
nu = 0.3, rho = 7850 kg/m^3, clamped at x = 0 (every node of the face x = 0 fixed), meshed by
:func:`flexmb.io.solid_mesh.box` with 10-node tetrahedra and with 8-node hexahedra (consistent mass,
full integration). Its first five modes are the bending modes about y and z, the second bending
mode about y, the second about z and the first torsion mode.

Reference (converged): Richardson extrapolation (L. F. Richardson, Phil. Trans. R. Soc. A 210, 1911)
of tet10 mesh refinement. Three tet10 meshes,
(10, 2, 1), (20, 4, 2) and (40, 8, 4) cells along (x, y, z), each halving every cell size; for
each mode the observed order p = log2((f_1 - f_2) / (f_2 - f_3)) (measured 2.0, 1.6, 2.4, 2.0 and
2.7: about 2 rather than the 4 of smooth fields, as the clamped edges make the field singular)
gives f_ref = f_3 - (f_2 - f_3) / (2^p - 1). The full run recomputes it and checks it against the
stored ``REFERENCE_HZ`` (from that run on 2026-11-29), which the quick run uses. The finest tet10
mesh is within 0.13 % of it, so the extrapolation moves the reference by about that much.

Checked:

* the first five frequencies of the tet10 mesh (24, 6, 3) within 1 % of the reference (issue 32;
  measured at most 0.29 %, the torsion mode); the full run adds the tet10 mesh (40, 8, 4) (0.13 %)
  and the hex8 mesh (200, 10, 8) (0.56 %: the fully integrated hex8 needs short elements along x
  against shear locking in bending and a fine section for torsion), both within 1 %. The quick run
  checks the coarser hex8 mesh (120, 8, 6) within 2 % (``HEX8_QUICK_TOLERANCE``; measured 0.90 %,
  torsion): it shows the element converging, the 1 % claim rests on the meshes above;
* component mode synthesis: each mesh cut into 4 components by boxes along x (each element goes to
  the box holding its centroid, :func:`flexmb.cms.component.components_by_region`), reduced
  free-free with free-interface modes and residual flexibility (Hutton & Smith 1993; ``KEPT_FREE``
  elastic modes per component) and by Craig-Bampton (Craig & Bampton 1968; ``KEPT_CB``
  fixed-interface modes), synthesised, against the
  full model of the same mesh solved whole (``fm.natural_modes``): modes 1-5 within
  ``CMS_TOLERANCE`` (both reductions are Rayleigh-Ritz projections of it, so also no CMS frequency
  below the full one beyond round-off). The tolerances, 5e-7 (free-interface) and 2e-3
  (Craig-Bampton), are about 10 times the largest errors measured on 2026-11-29 on the quick and full
  meshes, 3.1e-8 and 2.1e-4 (listed in ``info``): with as many modes per component, the residual
  flexibility makes the free-interface basis far more accurate than Craig-Bampton's.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.cms import craig_bampton, free_interface, synthesize
from flexmb.cms.component import Box, components_by_region
from flexmb.io.solid_mesh import box
from flexmb.validation import CaseReport, Check, print_report

CASE = "solid-cantilever-modes"
TITLE = "Solid cantilever (tet10, hex8): first five modes and CMS in 4 components cut by boxes"
SOURCE = ("converged reference: Richardson (1911) extrapolation of tet10 refinement; CMS (Hutton & Smith 1993, "
          "Craig & Bampton 1968) against the full FE model")

LENGTH, WIDTH, HEIGHT = 1.0, 0.08, 0.05          # m: x, y, z
E, NU, RHO = 2.1e11, 0.3, 7850.0                 # Pa, -, kg/m^3
N_MODES = 5
REFINEMENT = ((10, 2, 1), (20, 4, 2), (40, 8, 4))  # tet10 cells along x, y, z; each halves the last
#: Richardson extrapolation of REFINEMENT (full run of 2026-11-29), Hz; the full run re-checks it
REFERENCE_HZ = np.array([41.8467, 66.6767, 259.2831, 406.1186, 667.7986])
REFERENCE_CHECK = 1e-4                           # relative: stored vs recomputed reference
FREQUENCY_TOLERANCE = 1e-2                       # relative (issue 32)
HEX8_QUICK_TOLERANCE = 2e-2                      # relative, the quick run's coarse hex8 mesh (module docstring)
MESHES = {False: {"tet10": (24, 6, 3), "hex8": (200, 10, 8)},      # by quick mode
          True: {"tet10": (24, 6, 3), "hex8": (120, 8, 6)}}
CMS_MESHES = {False: {"tet10": (20, 4, 2), "hex8": (40, 6, 4)},  # by quick mode
              True: {"tet10": (12, 2, 1), "hex8": (32, 4, 2)}}
N_COMPONENTS = 4
KEPT_FREE, KEPT_CB = 6, 6                        # modes per component
#: relative, modes 1-5; measured 2026-11-29 at most 3.1e-8 (free-interface) and 2.1e-4 (Craig-Bampton)
CMS_TOLERANCE = {"free-interface": 5e-7, "Craig-Bampton": 2e-3}
ROUND_OFF = 1e-8                                 # relative allowance below the full model (Ritz bound)
SRC_REF = "Richardson extrapolation of tet10 refinement (10,2,1)-(20,4,2)-(40,8,4), observed order per mode"


def build(kind: str, cells_xyz: tuple[int, int, int]) -> fm.Model:
    """The clamped beam meshed by ``box`` with ``cells_xyz`` cells of ``kind``."""
    x, cells = box(LENGTH, WIDTH, HEIGHT, *cells_xyz, kind)
    model = fm.Model(dim=3)
    model.add_nodes(x)
    model.add_solid(cells, E=E, nu=NU, rho=RHO, name=kind)
    for i in np.flatnonzero(x[:, 0] < 1e-12):
        model.fix(int(i))
    return model


def richardson(f: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Extrapolated frequencies and observed orders p from three meshes, each half the last's size."""
    ratio = (f[0] - f[1]) / (f[1] - f[2])
    p = np.log2(ratio)
    return f[2] - (f[1] - f[2]) / (ratio - 1.0), p


def cut(model: fm.Model):
    """Four components, boxes of equal length along x (margins far outside the section)."""
    far = 10.0 * LENGTH
    step = LENGTH / N_COMPONENTS
    return components_by_region(model, {f"part {k + 1}": Box((k * step, -far, -far), ((k + 1) * step, far, far))
                                        for k in range(N_COMPONENTS)})


def run(quick: bool = False) -> CaseReport:
    report = CaseReport(CASE)
    reference = REFERENCE_HZ
    n_dof, n_steps = 0, 0
    if not quick:
        refined = [fm.natural_modes(build("tet10", c), N_MODES).frequencies_hz for c in REFINEMENT]
        reference, order = richardson(refined)
        n_steps += len(REFINEMENT)
        report.add(Check.at_most("max |stored reference / recomputed Richardson extrapolation - 1|, modes 1-5",
                                 float(np.abs(REFERENCE_HZ / reference - 1).max()), REFERENCE_CHECK, SRC_REF))
        report.info["refinement_hz"] = {str(c): f.tolist() for c, f in zip(REFINEMENT, refined)}
        report.info["observed_orders"] = order.tolist()
    report.info["reference_hz"] = np.asarray(reference).tolist()

    meshes = dict(MESHES[quick])
    if not quick:
        meshes["tet10 fine"] = REFINEMENT[-1]
    errors = {}
    for label, cells_xyz in meshes.items():
        kind = label.split()[0]
        model = build(kind, cells_xyz)
        if label == "tet10 fine":
            f = np.array(report.info["refinement_hz"][str(cells_xyz)])
        else:
            f = fm.natural_modes(model, N_MODES).frequencies_hz
            n_steps += 1
        n_dof = max(n_dof, fm.Assembly(model).n_free)
        errors[label] = f / reference - 1.0
        report.info[f"{label} {cells_xyz} hz"] = f.tolist()
        for k in range(N_MODES):
            coarse = quick and kind == "hex8"
            report.add(Check.close(f"{label} {cells_xyz}: mode {k + 1} frequency (Hz)", f[k], reference[k],
                                   HEX8_QUICK_TOLERANCE if coarse else FREQUENCY_TOLERANCE,
                                   SRC_REF + (" (coarse hex8: 2 %)" if coarse else " (issue 32: 1 %)")))

    cms_errors = {}
    for kind, cells_xyz in CMS_MESHES[quick].items():
        model = build(kind, cells_xyz)
        full = fm.natural_modes(model, N_MODES).frequencies_hz
        components = cut(model)
        report.info[f"{kind} components"] = [f"{c.name}: {c.model.groups[0].n_elements} elements, "
                                             f"{c.interface_nodes.size} interface nodes" for c in components]
        for method, reduce in (("free-interface", lambda c: free_interface(c, n_elastic_modes=KEPT_FREE)),
                               ("Craig-Bampton", lambda c: craig_bampton(c, n_modes=KEPT_CB))):
            cms = synthesize([reduce(c) for c in components])
            err = cms.modes(N_MODES).frequencies_hz / full - 1.0
            cms_errors[f"{kind} {method}"] = err.tolist()
            report.add(Check.at_most(f"{kind} {cells_xyz}, 4 components (boxes), {method}: max |f_CMS / f_full - 1|, "
                                     "modes 1-5", float(np.abs(err).max()), CMS_TOLERANCE[method],
                                     "full FE model of the same mesh; tolerance ~10x the largest error "
                                     "measured 2026-11-29"))
            report.add(Check.at_least(f"{kind}, {method}: min (f_CMS / f_full - 1), modes 1-5", float(err.min()),
                                      -ROUND_OFF, "Rayleigh-Ritz upper bound"))
        n_steps += 3
    report.n_dof, report.n_steps = n_dof, n_steps
    report.info["frequency_errors"] = {k: v.tolist() for k, v in errors.items()}
    report.info["cms_errors"] = cms_errors
    report.figure = _figure(errors, cms_errors)
    return report


def _figure(errors: dict[str, np.ndarray], cms_errors: dict[str, list[float]]):
    from flexmb.viz.plots import panels

    fig, (ax, ax2) = panels(2, "Solid cantilever: first five modes")
    modes = np.arange(1, N_MODES + 1)
    for label, err in errors.items():
        ax.plot(modes, 100 * err, "o-", label=label)
    ax.axhline(100 * FREQUENCY_TOLERANCE, color="k", ls=":", lw=0.8, label="1 %")
    ax.set_xticks(modes)
    ax.set_xlabel("mode")
    ax.set_ylabel("f / f_ref - 1 (%), ref: Richardson (tet10)")
    ax.legend(fontsize=7)
    for label, err in cms_errors.items():
        ax2.semilogy(modes, np.maximum(np.abs(err), 1e-16), "o-", label=label)
    ax2.set_xticks(modes)
    ax2.set_xlabel("mode")
    ax2.set_ylabel("|f_CMS / f_full - 1|, 4 components")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
