"""Cost per step of a modal body against the co-rotational FE model of the same beam.

Simo & Vu-Quoc's spin-up beam (``validation/spin_up_simo.py``: L = 10 m, spun to 6 rad/s in 15 s),
integrated by the mid-point scheme at dt = 0.01 s for ``--t-end`` seconds:

* as a stiffened modal body (:meth:`flexmb.Model.add_modal_body`) with 2, 3 and 4 modes, its basis
  from a 20-element FE model (the reduction's time printed apart);
* as co-rotational FE models, ``Beam2D(mass="cubic", second_order=True)``, 4 and 16 elements.

Printed per model: unknowns, Newton iterations per step, wall time per step and per Newton
iteration (best of ``--repeat`` runs, after a warm-up run that compiles the kernels), and the
extreme tip deflection reached (the accuracy each buys, against -0.57384 m for the full 20 s).
Nothing is asserted. Run: ``python benchmarks/bench_modal_body.py [--t-end 20] [--repeat 3]``
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.validation.registry import load_module
from flexmb.validation.spin_up import build, tip_deflection
from flexmb.validation.spin_up_modal import body_data

CASE = Path(__file__).resolve().parents[1] / "validation" / "spin_up_simo.py"
DT = 0.01


def modal_assembly(beam, n_modes: int):
    data, tip_uy = body_data(beam, n_modes)
    model = fm.Model(dim=2)
    body = model.add_modal_body(data, name="beam")
    frame = int(body.connectivity[0, 0])
    model.fix(frame, ["ux", "uy"])
    model.prescribe(frame, "rz", beam.psi)
    asm = fm.Assembly(model)
    return asm, lambda h: np.asarray(h.u)[:, asm.dofs.internal_dofs(body)] @ data.basis[tip_uy]


def fe_assembly(beam, n_elements: int):
    asm, nodes = build(beam, n_elements)
    return asm, lambda h: tip_deflection(beam, np.asarray(h.t), h.positions()[:, nodes[-1]])


def timed(asm, deflection, t_end: float, repeat: int) -> tuple[float, int, int, float]:
    """(best wall time, steps, Newton iterations, extreme deflection)."""
    fm.integrate(asm, DT, min(t_end, 10 * DT), progress=False)          # warm-up: compile
    best, h = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        h = fm.integrate(asm, DT, t_end, progress=False)
        best = min(best, time.perf_counter() - start)
    steps = len(h.t) - 1
    return best, steps, int(np.sum(h.newton_iterations)), float(np.min(deflection(h)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    beam = load_module(CASE).PARAMETERS
    start = time.perf_counter()
    body_data(beam, 3)
    print(f"reduction of the 20-element beam to 3 modes (invariants, unit-load stiffness): "
          f"{time.perf_counter() - start:.3f} s")
    rows = [(f"modal body, {n} modes", *modal_assembly(beam, n)) for n in (2, 3, 4)]
    rows += [(f"co-rotational FE, {n} Beam2D", *fe_assembly(beam, n)) for n in (4, 16)]
    print(f"{'model':32s} {'unknowns':>8s} {'iter/step':>9s} {'ms/step':>8s} {'us/iter':>8s} {'extreme (m)':>12s}")
    for name, asm, deflection in rows:
        wall, steps, iterations, extreme = timed(asm, deflection, args.t_end, args.repeat)
        print(f"{name:32s} {asm.n_free:8d} {iterations / steps:9.2f} {1e3 * wall / steps:8.3f} "
              f"{1e6 * wall / iterations:8.1f} {extreme:12.5f}")


if __name__ == "__main__":
    main()
