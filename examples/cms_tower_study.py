"""A structural modification study of a lattice tower with a payload, by component mode synthesis
==============================================================================================

The tower (``meshes/tower_lattice_3d.msh``, made by ``meshes/make_tower.py``): 18 m of steel
tube lattice on a 3 m x 2.4 m base tapering to 1.6 m x 1.2 m, legs spliced at 9 m, X bracing
and rings in every 3 m panel, and a 3 m x 3 m platform at the top carrying a 1.5 t antenna
(a point mass, translations only, so that the densities and the antenna mass make up all the
mass) at its centre; the four feet are clamped. Steel
tubes (E = 210 GPa, G = 81 GPa, rho = 7850 kg/m^3): lower legs CHS 168.3 x 8, upper legs
CHS 139.7 x 6.3, bracing and rings CHS 76.1 x 4, platform CHS 114.3 x 6.3; Beam3D elements with
the Hermitian ("cubic") mass, the accurate one for modes about the reference state.

Three components meet at the splice and at the leg tops: "lower section" (legs and bracing
below 9 m), "upper section" and "platform" (with the antenna). The study, in the order of
Hutton & Smith (1993):

1. natural modes of the full model and of the component model (free-interface modes with
   residual flexibility), with the CMS errors;
2. sensitivities of the first mode (sway in y, across the narrower side of the plan; 4.07 Hz)
   to each component's Young's modulus and density and to the antenna mass, normalised
   (p / lambda) d lambda / dp and ranked;
3. a forward modification -- lower legs one size up (stiffness and mass of the lower legs
   +40 %) and a 300 kg heavier antenna -- from the baseline reduced modes, against a full
   re-analysis;
4. two inverse modifications: the stiffness of the lower section, or else the antenna mass,
   that moves the first mode to the target frequency (4.4 Hz), each checked by a full
   re-analysis;
5. pictures (components, baseline modes, sensitivity chart, the first mode before and after),
   the numbers in ``study.h5`` and the report ``report.md`` / ``report.html``.

``--quick`` uses the coarse mesh (``tower_lattice_3d_coarse.msh``, half the elements per member)
and smaller pictures, as the tests do.

    python examples/cms_tower_study.py [--quick] [--out DIR]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.cms import DesignVariable, density_scale, point_mass, stiffness_scale
from flexmb.cms.study import run_study, write_study
from flexmb.io.mesh import build_model, read_mesh

MESHES = Path(__file__).resolve().parents[1] / "meshes"
E, G, RHO = 2.1e11, 8.1e10, 7850.0                           # Pa, Pa, kg/m^3
TUBES = {"lower_legs": (0.1683, 0.008), "upper_legs": (0.1397, 0.0063),    # CHS outer diameter, wall, m
         "lower_bracing": (0.0761, 0.004), "upper_bracing": (0.0761, 0.004),
         "platform": (0.1143, 0.0063)}
ANTENNA_MASS = 1500.0                                        # kg
COMPONENTS = {"lower section": ["lower_legs", "lower_bracing"],
              "upper section": ["upper_legs", "upper_bracing"],
              "platform": ["platform"]}
COMPONENT_MODES = 12                                         # kept elastic modes per component
MODE = 0                                                     # the studied mode (index: 0 is the first)
TARGET_HZ = 4.4                                              # wanted frequency of that mode


def tube(outer: float, wall: float) -> dict[str, object]:
    """Beam3D properties of a steel circular hollow section (outer diameter, wall in m)."""
    inner = outer - 2.0 * wall
    A = np.pi * (outer**2 - inner**2) / 4.0                  # m^2
    I = np.pi * (outer**4 - inner**4) / 64.0                 # m^4, about any diameter
    return {"element": "beam3d", "EA": E * A, "GJ": G * 2.0 * I, "EI_y": E * I, "EI_z": E * I,
            "rho_A": RHO * A, "rho_I": (RHO * 2.0 * I, RHO * I, RHO * I), "mass": "cubic"}


def build(quick: bool = False) -> tuple[fm.Model, int]:
    """The tower model with its antenna; returns the model and the antenna's node."""
    mesh = read_mesh(MESHES / ("tower_lattice_3d_coarse.msh" if quick else "tower_lattice_3d.msh"))
    model, node_of_point = build_model(mesh, dim=3, groups={name: tube(*d) for name, d in TUBES.items()},
                                       supports={"base": "all"})
    for group in model.groups:                                # drawn at their true size
        group.set_section_shape("tube", radius=TUBES[group.name][0] / 2.0)
    antenna = int(node_of_point[mesh.node_sets["payload"][0]])
    model.add_point_mass(antenna, ANTENNA_MASS)
    return model, antenna


def design_variables(antenna: int) -> dict[str, DesignVariable]:
    """Young's modulus and density scale of every component, and the antenna mass (kg)."""
    variables = {}
    for name, groups in COMPONENTS.items():
        variables[f"E {name}"] = stiffness_scale(groups, name=f"E {name}")
        variables[f"rho {name}"] = density_scale(groups, name=f"rho {name}")
    variables["antenna mass"] = point_mass(antenna, ANTENNA_MASS, name="antenna mass")
    return variables


def main(quick: bool = False, out_dir: str | Path = "example-output/cms_tower_study") -> dict[str, float]:
    """Run the study, write its files into ``out_dir``, print a summary; returns its numbers."""
    model, antenna = build(quick)
    variables = design_variables(antenna)
    heavier_legs = {stiffness_scale("lower_legs", name="E lower legs"): 0.4,
                    density_scale("lower_legs", name="rho lower legs"): 0.4,
                    variables["antenna mass"]: 300.0}
    study = run_study(model, COMPONENTS, list(variables.values()), MODE, TARGET_HZ, heavier_legs,
                      [variables["E lower section"], variables["antenna mass"]],
                      component_modes=COMPONENT_MODES, n_modes=6,
                      title="Lattice tower with antenna: modification study")
    files = write_study(study, out_dir, window_size=(1000, 640) if quick else (1400, 900))
    numbers = study.summary()
    print(study.mode_table().markdown())
    print()
    print(study.sensitivity.table(MODE))
    print()
    for check in study.inverse:
        change = ", ".join(f"{v.name} {a:+.4g}" for v, a in zip(check.result.variables, check.result.alpha))
        print(f"mode {MODE + 1} to {TARGET_HZ} Hz: {change}; full re-analysis {check.full_hz:.6f} Hz "
              f"({check.full_error:+.1e} from the target)")
    print(f"report: {files['report_html']}")
    return numbers


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="coarse mesh, smaller pictures (as in the tests)")
    parser.add_argument("--out", default="example-output/cms_tower_study", help="output folder (default: %(default)s)")
    args = parser.parse_args()
    main(args.quick, args.out)
