"""Cost per step of a 3D modal body against the co-rotational Beam3D model it reduces (issue 31, item 4).

The blade of ``validation/spin_up_modal_spatial.py`` (Simo & Vu-Quoc's spin-up beam, L = 10 m, 20
``Beam3D`` elements, linear consistent mass) on a revolute joint about z driven by the spin-up angle
psi(t), integrated by the mid-point scheme at dt = 0.01 s for ``--t-end`` seconds:

* as a stiffened 3D modal body with 6 modes (three lag and three flap pairs), its basis from the
  20-element model (the reduction's time printed apart);
* as the 20-element co-rotational ``Beam3D`` model itself, its root node on the same joint.

Printed per model: unknowns, Newton iterations per step, wall and CPU time per step (median of
``--repeat`` runs, interleaved, after a warm-up run that compiles the kernels), and the ratio of
the two; then where each model's step goes (``--split``: CPU per step of the element and inertia
kernels with their scatter, the rest of the scheme's residual, the joint's constraint terms, the
dense LU and solve, the recording, and the rest: Newton's and the time stepper's bookkeeping; timed
by wrappers around the methods they run in, one run each) and a cProfile of the modal body's run
(``--profile N``: the N costliest functions by their own time). Nothing is asserted. Run:
``python benchmarks/bench_modal_body3d.py [--t-end 2] [--repeat 5] [--split] [--profile 15]``
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.validation.registry import load_module

CASES = Path(__file__).resolve().parents[1] / "validation"
DT = 0.01


def models():
    """(name, assembly) of the modal body and of the FE blade, and the reduction's wall time (s)."""
    case = load_module(CASES / "spin_up_modal_spatial.py")
    beam = load_module(CASES / "spin_up_simo.py").PARAMETERS
    start = time.perf_counter()
    data, _, _ = case.body_data(beam)
    reduction = time.perf_counter() - start
    modal = fm.Model(dim=3)
    body = modal.add_modal_body(data, name="beam")
    case._on_drive(modal, int(body.connectivity[0, 0]), beam.psi)
    fe, nodes = case._beam_model(beam, "consistent")
    case._on_drive(fe, int(nodes[0]), beam.psi)
    return [(f"modal body, {case.MODES} modes", fm.Assembly(modal)),
            (f"Beam3D, {case.N_FE} elements", fm.Assembly(fe))], reduction


def timed(asm, t_end: float) -> tuple[float, float, int, int]:
    """(wall s, CPU s, steps, Newton iterations) of one run."""
    wall, cpu = time.perf_counter(), time.process_time()
    h = fm.integrate(asm, DT, t_end, progress=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu, len(h.t) - 1, int(np.sum(h.newton_iterations))


def split(asm, t_end: float) -> dict[str, float]:
    """CPU ms per step of one run's parts (module docstring), by timing wrappers put around the methods
    they run in and taken off afterwards; the kernels' time is taken off the scheme's residual, which
    calls them."""
    from flexmb.integrators import newton, schemes
    from flexmb.multibody.constraints import ConstraintSystem
    from flexmb.results.time_history import TimeHistory

    parts = {"element and inertia kernels": [(fm.Assembly, "mid_point_forces_and_inertia")],
             "scheme residual, the rest": [(schemes.MidPoint, "residual")],
             "joint constraint terms": [(schemes.MidPoint, "constraint_terms"), (ConstraintSystem, "augmented")],
             "dense LU and solve": [(newton, "_factorize"), (newton, "_correction")],
             "recording": [(TimeHistory, "record")]}
    spent = dict.fromkeys(parts, 0.0)
    originals = []

    def timer(part: str, method):
        def timed_method(*args, **kwargs):
            start = time.process_time()
            try:
                return method(*args, **kwargs)
            finally:
                spent[part] += time.process_time() - start
        return timed_method

    for part, methods in parts.items():
        for owner, name in methods:
            originals.append((owner, name, getattr(owner, name)))
            setattr(owner, name, timer(part, getattr(owner, name)))
    try:
        cpu = time.process_time()
        steps = len(fm.integrate(asm, DT, t_end, progress=False).t) - 1
        cpu = time.process_time() - cpu
    finally:
        for owner, name, method in originals:
            setattr(owner, name, method)
    spent["scheme residual, the rest"] -= spent["element and inertia kernels"]
    spent["Newton and time stepper, the rest"] = cpu - sum(spent.values())
    return {part: 1e3 * t / steps for part, t in spent.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=2.0, help="simulated time per run (s)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per model (median)")
    parser.add_argument("--split", action="store_true", help="CPU per step of each model's parts")
    parser.add_argument("--profile", type=int, default=15, help="functions of the modal body's profile (0: none)")
    args = parser.parse_args()
    runs, reduction = models()
    print(f"reduction (ModalBodyData.from_model): {reduction:.2f} s")
    for _, asm in runs:
        fm.integrate(asm, DT, 5 * DT, progress=False)                        # warm-up: compile
    samples = {name: [] for name, _ in runs}
    for _ in range(args.repeat):                                             # interleaved
        for name, asm in runs:
            samples[name].append(timed(asm, args.t_end))
    print(f"mid-point, dt = {DT} s, {args.t_end:g} s simulated, median of {args.repeat} runs")
    print(f"{'model':<24} {'unknowns':>8} {'Newton/step':>11} {'ms/step wall':>12} {'ms/step CPU':>11}")
    per_step = {}
    for name, asm in runs:
        wall, cpu, steps, newton = (np.median([s[i] for s in samples[name]]) for i in range(4))
        per_step[name] = (1e3 * wall / steps, 1e3 * cpu / steps)
        wall_ms, cpu_ms = per_step[name]
        print(f"{name:<24} {asm.n_dof:>8} {newton / steps:>11.2f} {wall_ms:>12.3f} {cpu_ms:>11.3f}")
    (modal_name, modal_asm), (fe_name, _) = runs
    wall_ratio = per_step[fe_name][0] / per_step[modal_name][0]
    cpu_ratio = per_step[fe_name][1] / per_step[modal_name][1]
    print(f"Beam3D / modal body time per step: {wall_ratio:.2f} (wall), {cpu_ratio:.2f} (CPU); > 1: the modal "
          "body is faster")
    if args.split:
        splits = {name: split(asm, args.t_end) for name, asm in runs}
        print(f"\nCPU ms per step by part (one run each) {'':<8}" + "".join(f"{name:>24}" for name in splits))
        for part in next(iter(splits.values())):
            print(f"{part:<46}" + "".join(f"{s[part]:>24.3f}" for s in splits.values()))
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        fm.integrate(modal_asm, DT, args.t_end, progress=False)
        profile.disable()
        print(f"\nprofile of the modal body's run ({args.t_end:g} s), by own time:")
        pstats.Stats(profile).sort_stats("tottime").print_stats(args.profile)


if __name__ == "__main__":
    main()
