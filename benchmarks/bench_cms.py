"""Time the component mode synthesis of the example study against its full model.

The model is the lattice tower of ``examples/cms_tower_study.py`` (``meshes/tower_lattice_3d.msh``:
333 nodes, 1974 free DOFs; ``--quick`` the coarse mesh, 678), cut into its three components
(lower section, upper section, platform) with ``--component-modes`` free-interface modes each
plus residual flexibility. Timed, best of ``--repeat`` runs, wall clock:

* natural modes of the full model, :func:`flexmb.natural_modes`, forced dense (LAPACK) and
  sparse (ARPACK shift-invert, the default above 500 unknowns);
* the CMS: components from the element groups, the reductions (forced dense, and sparse ARPACK),
  the synthesis and the modes of the reduced model, each step and their total;
* sensitivities of the first mode to the 7 design variables of the study: CMS with T frozen
  against Fox-Kapoor on the full model;
* the study's forward modification (lower legs +40 % stiffness and mass, antenna +300 kg): the
  linear-equivalent prediction on the CMS modes against a CMS re-analysis (re-reduced changed
  components) and a full re-analysis (:func:`~flexmb.cms.modification.reanalyse`, dense up to
  500 unknowns).

Nothing is asserted. Run: ``python benchmarks/bench_cms.py [--quick] [--modes 6] [--repeat 3]``
"""
from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import flexmb as fm
from flexmb.cms import (components_from_groups, density_scale, eigen_sensitivity, forward_modification,
                        free_interface, reanalyse, stiffness_scale, synthesize)

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cms_tower_study.py"


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("cms_tower_study", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Shortest wall time (s) of ``repeat`` calls, and the last result."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the coarse mesh of the study's quick mode")
    parser.add_argument("--modes", type=int, default=6, help="global modes (default: %(default)s)")
    parser.add_argument("--component-modes", type=int, default=None,
                        help="elastic modes per component (default: the example's)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (default: %(default)s)")
    args = parser.parse_args(argv)
    example = load_example()
    kept = example.COMPONENT_MODES if args.component_modes is None else args.component_modes
    model, antenna = example.build(args.quick)
    asm = fm.Assembly(model)
    n, r = args.modes, args.repeat

    rows: list[tuple[str, float]] = []
    t, full = best(lambda: fm.natural_modes(asm, n, dense_limit=asm.n_free), r)
    rows.append((f"full model: natural_modes, dense ({asm.n_free} free DOFs)", t))
    t, sparse = best(lambda: fm.natural_modes(asm, n, dense_limit=0), r)
    rows.append(("full model: natural_modes, sparse ARPACK", t))

    t_parts, parts = best(lambda: components_from_groups(model, example.COMPONENTS), r)
    t_reduce, bases = best(lambda: [free_interface(c, n_elastic_modes=kept, dense_limit=c.n_dof) for c in parts], r)
    t_sparse, _ = best(lambda: [free_interface(c, n_elastic_modes=kept, dense_limit=0) for c in parts], r)
    t_synth, cms = best(lambda: synthesize(bases), r)
    t_modes, cms_modes = best(lambda: cms.modes(n), r)
    rows += [("CMS: components_from_groups", t_parts),
             (f"CMS: free_interface x {len(parts)} ({kept} modes each, residual flexibility), dense", t_reduce),
             ("CMS: the same, sparse ARPACK (dense_limit=0)", t_sparse),
             (f"CMS: synthesize ({cms.size} reduced coordinates)", t_synth),
             ("CMS: modes of the reduced model", t_modes),
             ("CMS: total (dense reductions)", t_parts + t_reduce + t_synth + t_modes),
             ("CMS: total (sparse reductions)", t_parts + t_sparse + t_synth + t_modes)]

    variables = list(example.design_variables(antenna).values())
    t, _ = best(lambda: eigen_sensitivity(cms, variables, modes=[0]), r)
    rows.append((f"sensitivity of mode 1 to {len(variables)} variables: CMS, T frozen", t))
    t, _ = best(lambda: eigen_sensitivity(full, variables, modes=[0], assembly=asm), r)
    rows.append(("sensitivity: full model (Fox-Kapoor)", t))

    changes = {stiffness_scale("lower_legs"): 0.4, density_scale("lower_legs"): 0.4,
               example.design_variables(antenna)["antenna mass"]: 300.0}
    t, forward = best(lambda: forward_modification(cms, changes, n_modes=n), r)
    rows.append(("forward modification: linear equivalent on the CMS modes", t))
    t, again = best(lambda: reanalyse(cms, changes, n_modes=n), r)
    rows.append(("forward modification: CMS re-analysis", t))
    t, full_again = best(lambda: reanalyse(full, changes, n_modes=n, assembly=asm), r)
    rows.append(("forward modification: full re-analysis", t))

    width = max(len(name) for name, _ in rows)
    print(f"lattice tower, {'coarse' if args.quick else 'full'} mesh: {asm.n_free} free DOFs, {n} modes, "
          f"best of {r}")
    print(f"{'step':<{width}}  {'time (s)':>9}")
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds:>9.4f}")
    error = cms_modes.frequencies_hz / full.frequencies_hz - 1.0
    print(f"CMS frequency errors f_CMS/f_full - 1: {error.min():.1e} .. {error.max():.1e}; dense vs sparse full "
          f"modes differ by {np.abs(sparse.frequencies_hz / full.frequencies_hz - 1.0).max():.1e}")
    print(f"mode 1 after the change: linear equivalent {forward.frequencies_hz[0]:.5f} Hz, CMS re-analysis "
          f"{again.frequencies_hz[0]:.5f} Hz, full re-analysis {full_again.frequencies_hz[0]:.5f} Hz")
    return dict(rows)


if __name__ == "__main__":
    main()
