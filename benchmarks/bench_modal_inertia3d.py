"""CPU time per call of the 3D modal body's compiled mid-point inertia (issue 31, item 4).

The kernel :func:`flexmb.compiled.floating_frame3d.mid_point_inertia` of the stiffened blade of
``validation/spin_up_modal_spatial.py`` (Simo & Vu-Quoc's spin-up beam, 20 ``Beam3D`` elements reduced
with the frame at the root) with 1, 6 and 20 modes, at a state of a spinning, deflected blade (rotation
1.2 rad, spin 6 rad/s, a step of dt = 0.01 s): with its tangent and the force alone. The compiled
function is called directly with the arguments ``FloatingFrameMass3D.mid_point_inertia`` passes it
(recorded from one call of the method, so that the script times any version of the kernel's
signature); printed are the median over ``--rounds`` rounds of the CPU time per call of ``--calls``
calls (``time.process_time``). Nothing is asserted. Compare two trees by running the script
alternately with each on ``PYTHONPATH``. Run: ``python benchmarks/bench_modal_inertia3d.py [--modes 1 6
20] [--rounds 7] [--calls 200]``
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from flexmb.cms.modal_body import ModalBodyData
from flexmb.elements import floating_frame3d
from flexmb.elements.floating_frame3d import FloatingFrameMass3D
from flexmb.elements.velocity_fields import BodyVelocityFields
from flexmb.rotations import cayley_compose
from flexmb.validation.registry import load_module

CASES = Path(__file__).resolve().parents[1] / "validation"
DT = 0.01                                                                          # s


def kernels(n_modes: int) -> FloatingFrameMass3D:
    """The stiffened blade's inertia kernels with ``n_modes`` modes."""
    case = load_module(CASES / "spin_up_modal_spatial.py")
    beam = load_module(CASES / "spin_up_simo.py").PARAMETERS
    model, nodes = case._beam_model(beam, "consistent")
    data = ModalBodyData.from_model(model, frame_node=int(nodes[0]), n_modes=n_modes, name="blade")
    return FloatingFrameMass3D(BodyVelocityFields(data, True), np.zeros((1, 1, 3)))


def step(n_modes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """u0, u1, v0 (1, 6 + n_modes) of a step of a spinning, deflected blade."""
    rng = np.random.default_rng(1)
    nx = 6 + n_modes
    u0, v0 = np.zeros((1, nx)), np.zeros((1, nx))
    u0[0, 3:6] = (0.2, -0.3, 1.2)                                                  # rad
    u0[0, 6:] = 0.05 * rng.normal(size=n_modes)                                    # kg^1/2 m
    v0[0, 3:6] = (0.1, 0.2, 6.0)                                                   # rad/s, spatial
    v0[0, 6:] = 0.5 * rng.normal(size=n_modes)
    u1 = u0 + DT * v0
    u1[0, 3:6] = cayley_compose(DT * v0[:, 3:6], u0[:, 3:6])[0]
    return u0, u1, v0


def recorded_arguments(k: FloatingFrameMass3D, n_modes: int, tangent: bool) -> tuple:
    """The compiled kernel and the arguments the Python method passes it."""
    compiled = floating_frame3d._kernels3d()
    kernel = compiled.mid_point_inertia
    seen = []
    compiled.mid_point_inertia = lambda *args: seen.append(args)
    try:
        u0, u1, v0 = step(n_modes)
        k.mid_point_inertia(u0, u1, v0, None, DT, tangent)
    finally:
        compiled.mid_point_inertia = kernel
    return kernel, seen[0]


def per_call(kernel, args: tuple, calls: int, rounds: int) -> float:
    """Median CPU microseconds per call."""
    kernel(*args)                                                                  # compile or load
    times = []
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(calls):
            kernel(*args)
        times.append((time.process_time() - start) / calls)
    return 1e6 * float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", type=int, nargs="+", default=[1, 6, 20])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    print(f"{'modes':>5} {'us/call, tangent':>17} {'us/call, force':>15}")
    for n in args.modes:
        k = kernels(n)
        with_tangent = per_call(*recorded_arguments(k, n, True), args.calls, args.rounds)
        alone = per_call(*recorded_arguments(k, n, False), args.calls, args.rounds)
        print(f"{n:>5} {with_tangent:>17.2f} {alone:>15.2f}")


if __name__ == "__main__":
    main()
