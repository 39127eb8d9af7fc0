"""Design study: a component-mode-synthesis sweep of one component's density on the lattice tower
==============================================================================================

The lattice tower with its 1.5 t antenna of ``examples/cms_tower_study.py`` on its coarse mesh
(``meshes/tower_lattice_3d_coarse.msh``, 702 unknowns; its builder, sections and components, the
example's own, travel by value to the workers with this script): steel tube Beam3D
elements with the Hermitian mass, feet clamped, three components "lower section", "upper
section" and "platform", each reduced to 12 free-interface modes with residual flexibility
(Hutton & Smith 1993). The parameter ``rho_ratio`` = 0.5 ... 2 scales the density of the upper
section (legs and bracing from 9 to 18 m), 16 levels; the studied mode is the first one, the sway
across the narrower side of the plan (4.074 Hz on this mesh).

Each variant builds the model and its CMS baseline and computes the mode's frequency (Hz) three
ways, the change being alpha = rho_ratio - 1 of the density variable:

* ``frequency_cms``: CMS re-analysis, the upper section re-reduced and the model re-synthesised
  (:func:`flexmb.cms.reanalyse`);
* ``frequency_forward``: forward modification on all baseline reduced modes (linear equivalent,
  T frozen), equal to the CMS re-analysis to round-off: a density scaling of a component leaves
  the span of its reduction basis unchanged;
* ``frequency_full``: re-analysis of the full FE model (cheap on this mesh, so done in every
  variant), with ``cms_error`` = frequency_cms / frequency_full - 1 (2.6e-7 to 3.0e-7 over
  rho_ratio 0.5 ... 2).

The check against inverse modification (see ``inverse_check`` and the tests): the density change
that :func:`flexmb.cms.inverse_modification` finds for a target frequency of the mode
(``TARGET_HZ`` = 3.9 Hz) must lie on the swept CMS curve: interpolating rho_ratio against
1 / f^2 (nearly linear: the Rayleigh quotient of a fixed shape is linear in the mass) through the
neighbouring variants gives the same rho_ratio within ``INVERSE_TOLERANCE``. Measured: the inverse
modification asks for rho_ratio = 1.3620 (achieved 3.9 Hz to 1e-12); the full sweep's curve gives
the same within 3e-8 (cubic through 4 variants), the quick sweep's within 1.2e-5 (quadratic).

    flexmb study examples/studies/cms_density_sweep.py --out study-results/cms-density [--quick]

``--quick``: rho_ratio 1, 1.25, 1.5 (bracketing the inverse-modification result, 1.362).
After a run, ``python examples/studies/cms_density_sweep.py DIR [--figure PNG]`` checks the curve
against the inverse modification and draws the frequency curve with the inverse result on it.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import cloudpickle
import numpy as np

import flexmb as fm
from flexmb.analysis.modes import natural_modes
from flexmb.cms import (
    components_from_groups,
    density_scale,
    forward_modification,
    free_interface,
    inverse_modification,
    reanalyse,
    synthesize,
)
from flexmb.studies import Study, StudyResult, grid, load_study

#: examples/cms_tower_study.py, loaded by its path: the tower's sections, components and builder have one
#: home; registered with cloudpickle to travel by value with this script to workers that cannot import it
_spec = importlib.util.spec_from_file_location("flexmb_example_cms_tower_study",
                                               Path(__file__).resolve().parents[1] / "cms_tower_study.py")
tower = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = tower
_spec.loader.exec_module(tower)
cloudpickle.register_pickle_by_value(tower)

COMPONENTS = tower.COMPONENTS
SWEPT = "upper section"                                      # the component whose density is swept
MODE = 0                                                     # the studied mode (0: the first)
N_MODES = 3                                                  # modes re-analysed
TARGET_HZ = 3.9                                              # inverse-modification target of the mode
INVERSE_TOLERANCE = 1e-4                                     # |rho_ratio(curve) - rho_ratio(inverse)|


def build() -> fm.Model:
    """The tower on its coarse mesh with the antenna (a point mass at the platform's centre)."""
    return tower.build(quick=True)[0]


def baseline(model: fm.Model):
    """The CMS model of the tower: every component reduced to its free-interface modes."""
    return synthesize([free_interface(c, n_elastic_modes=tower.COMPONENT_MODES)
                       for c in components_from_groups(model, COMPONENTS)])


def density_variable():
    """The design variable: the density scale of the swept component (alpha = rho_ratio - 1)."""
    return density_scale(COMPONENTS[SWEPT], name=f"rho {SWEPT}")


def _followed(modified, mode: int) -> float:
    """Frequency (Hz) of the modified mode that follows baseline mode ``mode``."""
    return float(modified.frequencies_hz[int(np.flatnonzero(modified.tracking == mode)[0])])


def run(params: dict) -> dict:
    """The studied mode's frequency (Hz) after the density change, by CMS re-analysis, forward
    modification and full re-analysis."""
    if params["rho_ratio"] <= 0.0:
        raise ValueError(f"rho_ratio must be positive, got {params['rho_ratio']}")
    model = build()
    change = {density_variable(): params["rho_ratio"] - 1.0}
    cms = baseline(model)
    f_cms = _followed(reanalyse(cms, change, n_modes=N_MODES), MODE)
    f_forward = _followed(forward_modification(cms, change, n_modes=N_MODES), MODE)
    assembly = fm.Assembly(model)
    full = natural_modes(assembly, N_MODES)
    f_full = _followed(reanalyse(full, change, n_modes=N_MODES, assembly=assembly), MODE)
    return {"frequency_cms": f_cms, "frequency_forward": f_forward, "frequency_full": f_full,
            "cms_error": f_cms / f_full - 1.0}


def inverse_check(rho_ratio: np.ndarray, frequency: np.ndarray, target_hz: float = TARGET_HZ) -> dict[str, float]:
    """The inverse-modification density for ``target_hz`` on the CMS baseline, and the density
    read off the swept curve (rho_ratio (n,), frequency (n,) Hz of the mode): piecewise-cubic
    (or fewer points) interpolation of rho_ratio against 1 / f^2 through the nearest variants."""
    inverse = inverse_modification(baseline(build()), density_variable(), MODE, target_hz)
    order = np.argsort(1.0 / frequency**2)
    x, y = 1.0 / frequency[order] ** 2, rho_ratio[order]     # (n,), increasing in x
    x_target = 1.0 / target_hz**2
    if not x[0] <= x_target <= x[-1]:
        raise ValueError(f"target {target_hz} Hz is outside the swept frequencies {frequency.min():.4f} ... "
                         f"{frequency.max():.4f} Hz")
    near = np.sort(np.argsort(np.abs(x - x_target))[:4])     # up to 4 nearest variants
    curve = float(np.polyval(np.polyfit(x[near], y[near], len(near) - 1), x_target))
    return {"inverse_rho_ratio": 1.0 + float(inverse.alpha[0]), "curve_rho_ratio": curve,
            "achieved_hz": float(inverse.achieved_hz[0])}


STUDY = Study(
    name="cms-density-sweep", run=run,
    space=grid(rho_ratio=np.linspace(0.5, 2.0, 16)),
    quick_space=grid(rho_ratio=[1.0, 1.25, 1.5]),
    description=(f"Lattice tower with antenna (coarse mesh), CMS with 12 free-interface modes per component: the "
                 f"first mode's frequency (Hz) against the density scale of the {SWEPT} by CMS re-analysis, forward "
                 "modification and full re-analysis, and the relative CMS error."),
    units={"rho_ratio": "-", "frequency_cms": "Hz", "frequency_forward": "Hz", "frequency_full": "Hz",
           "cms_error": "-"})


def figure(result: StudyResult, check: dict[str, float], path: str | Path) -> Path:
    """The mode's frequency against rho_ratio (CMS re-analysis, forward modification, full
    re-analysis) with the inverse-modification result, and the CMS error, in one picture."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = result.table[result.table["error"] == ""].sort_values("rho_ratio")
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    ax.plot(t["rho_ratio"], t["frequency_full"], "-", color="0.6", lw=3, label="full re-analysis")
    ax.plot(t["rho_ratio"], t["frequency_cms"], "o", ms=5, label="CMS re-analysis")
    ax.plot(t["rho_ratio"], t["frequency_forward"], "x", ms=6, color="k", label="forward modification")
    ax.plot(check["inverse_rho_ratio"], check["achieved_hz"], "*", ms=14, color="C3",
            label=f"inverse modification to {TARGET_HZ} Hz: x {check['inverse_rho_ratio']:.4f}")
    ax.axhline(TARGET_HZ, color="C3", lw=0.7, ls=":")
    ax.set_xlabel(f"density scale of the {SWEPT}")
    ax.set_ylabel(f"mode {MODE + 1} frequency (Hz)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax2.plot(t["rho_ratio"], t["cms_error"], "o-", ms=4)
    ax2.set_xlabel(f"density scale of the {SWEPT}")
    ax2.set_ylabel("f_CMS / f_full - 1")
    ax2.grid(alpha=0.3)
    fig.suptitle(f"Lattice tower (coarse mesh): CMS density sweep, {len(t)} variants")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


def main(folder: str | Path, picture: str | Path | None = None) -> dict[str, float]:
    """Check the study in ``folder`` against the inverse modification, print the result and draw
    the picture (default ``folder/density_sweep.png``)."""
    result = load_study(folder)
    t = result.table[result.table["error"] == ""]
    check = inverse_check(t["rho_ratio"].to_numpy(), t["frequency_cms"].to_numpy())
    gap = abs(check["curve_rho_ratio"] - check["inverse_rho_ratio"])
    print(f"inverse modification to {TARGET_HZ} Hz: density x {check['inverse_rho_ratio']:.6f}; swept curve: "
          f"x {check['curve_rho_ratio']:.6f} (difference {gap:.1e}, tolerance {INVERSE_TOLERANCE:g})")
    print(f"picture: {figure(result, check, picture or Path(folder) / 'density_sweep.png')}")
    return check


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="check a finished density sweep against the inverse modification")
    parser.add_argument("folder", help="the study's output folder (flexmb study ... --out DIR)")
    parser.add_argument("--figure", help="picture file (default: DIR/density_sweep.png)")
    args = parser.parse_args()
    main(args.folder, args.figure)
