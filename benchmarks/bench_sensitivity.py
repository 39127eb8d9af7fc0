"""Cost of transient sensitivities against one forward run (issue 33: the adjoint with 50 parameters
at most 5x one forward run; memory stated).

Model: slider-crank A (``flexmb.validation.slider_crank.build``: a cubic-mass ``Beam2D`` rod driven
at 124.8 rad/s, case B's slider mass 0.0378 kg at its end) with 16, 25 and 64 rod elements, the
mid-point scheme at dt = 8 rad / 124.8 rad/s / 1280, 400 steps (2.5 rad of crank: the first peak).
Response: the first peak of the mid-span deflection / L (``responses.first_peak`` of
``chord_deflection``, the slider-crank validation's). Parameters (50): the rod's rho_I multiplier,
stiffness scale and density scale, the slider mass (kg), and 46 multipliers on segments of the rod
(``element_property``): EI, then rho_A, then EA, each on min(n_el, 23) segments, until 46.

Timed (CPU seconds, ``time.process_time``, median of ``--repeat`` interleaved rounds after a warm-up
round; OPENBLAS_NUM_THREADS=1 is set here):

* forward: ``flexmb.integrate`` as a user runs it (the compiled step loop);
* record: ``sensitivity.transient.record`` of the same run (also the compiled loop), keeping every
  state (``--keep-every 1``, default) or every k-th;
* response: the run's trajectory (kept states; the others replayed) and the first peak on it;
* adjoint: ``adjoint.adjoint_gradient`` of the 50 parameters;
* direct: ``midpoint.direct_sensitivities`` of 5 of them (rho_I, stiffness, density, slider mass,
  the first EI segment) and the response's gradient from it.

Printed per model: unknowns, the times, the ratio (record + response + adjoint) / forward, the
adjoint sweep's split (recomputing the states between kept ones, the step Jacobians with their
factorisation, the start derivatives and their transposed products -- the numpy path -- or in their
place the compiled start products of planar beams, the parameter terms, the rest),
the kept states' memory (bytes, ``AdjointGradient.memory_bytes``) and their count. Nothing is
asserted. Run: ``python benchmarks/bench_sensitivity.py [--elements 16 25 64] [--repeat 5]
[--keep-every 1] [--split]`` (about 1 minute).
"""
from __future__ import annotations

import argparse
import functools
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import flexmb as fm  # noqa: E402
from flexmb.cms import design  # noqa: E402
from flexmb.sensitivity import adjoint, midpoint, transient  # noqa: E402
from flexmb.sensitivity import parameters as P  # noqa: E402
from flexmb.sensitivity import responses as R  # noqa: E402
from flexmb.validation.slider_crank import CRANK_TURN, PEAK_FRACTION, PEAK_WINDOW, ROD, build  # noqa: E402

OMEGA = 124.8                   # rad/s, case A
SLIDER_MASS = 0.0378126         # kg, case B's slider
STEPS_PER_TURN = 1280           # steps per 8 rad of crank
N_STEPS = 400                   # 2.5 rad: the first peak
N_PARAMETERS = 50
SEGMENTS = 23                   # at most this many segments per property


def model(n_el: int):
    """(assembly, v0, dt, the response's signal, the 50 parameters, the 5 of the direct method)."""
    asm, v0, nodes = build(n_el, OMEGA, SLIDER_MASS, "cubic")
    rod = [int(n) for n in nodes]
    params = [P.parameter(design.section_property("rod", "rho_I")), P.parameter(design.stiffness_scale("rod")),
              P.parameter(design.density_scale("rod")), P.parameter(design.point_mass(rod[-1], SLIDER_MASS))]
    left = N_PARAMETERS - len(params)
    for prop in ("EI", "rho_A", "EA"):
        count = min(n_el, left, SEGMENTS)
        params += [P.element_property("rod", prop, segment) for segment in np.array_split(np.arange(n_el), count)]
        left -= count
        if not left:
            break
    signal = R.chord_deflection(asm, rod[0], rod[n_el // 2], rod[-1], scale=ROD)
    return asm, v0, CRANK_TURN / OMEGA / STEPS_PER_TURN, signal, params, params[:5]


def peak(signal, traj, params):
    return R.first_peak(signal, traj, window=PEAK_WINDOW / OMEGA, fraction=PEAK_FRACTION, parameters=params)


#: the adjoint sweep's parts: (owner, method name, label); timed by wrappers (one run, --split)
PARTS = [(adjoint, "_solves", "recompute states"), (adjoint, "step_jacobian", "step Jacobian + LU"),
         (adjoint, "_start_matrix", "start derivatives"),
         (adjoint._ParameterTerms, "transposed", "transposed products"),
         (adjoint._CompiledBeams, "transposed", "compiled start products"),
         (adjoint._ParameterTerms, "__call__", "parameter terms")]


def split(run, params, response) -> dict[str, float]:
    """CPU seconds of the adjoint sweep's parts (wrappers around the functions they run in)."""
    spent: dict[str, float] = {}
    originals = []
    for owner, name, label in PARTS:
        original = getattr(owner, name)
        originals.append((owner, name, original))

        def timed(*args, _f=original, _label=label, **kwargs):
            clock = time.process_time()
            try:
                return _f(*args, **kwargs)
            finally:
                spent[_label] = spent.get(_label, 0.0) + time.process_time() - clock
        setattr(owner, name, functools.wraps(original)(timed))
    try:
        clock = time.process_time()
        adjoint.adjoint_gradient(run, params, [response])
        total = time.process_time() - clock
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)
    spent["rest"] = total - sum(spent.values())
    return spent


def measure(n_el: int, repeat: int, keep_every: int, show_split: bool) -> dict:
    asm, v0, dt, signal, params, few = model(n_el)
    t_end = N_STEPS * dt

    def forward():
        return fm.integrate(asm, dt, t_end, v0=v0, progress=False)

    def sensitivities():
        clock = time.process_time()
        run = transient.record(asm, dt, t_end, v0=v0, keep_every=keep_every)
        times = [time.process_time() - clock]
        clock = time.process_time()
        response = peak(signal, adjoint.trajectory(run), params)
        times.append(time.process_time() - clock)
        clock = time.process_time()
        result = adjoint.adjoint_gradient(run, params, [response])
        times.append(time.process_time() - clock)
        clock = time.process_time()
        sens = midpoint.direct_sensitivities(run, few)
        sens.gradient(peak(signal, sens.trajectory(), few))
        times.append(time.process_time() - clock)
        return times, run, response, result

    forward()
    sensitivities()                                     # warm-up: kernels compiled, caches filled
    rows = []
    for _ in range(repeat):
        clock = time.process_time()
        forward()
        rows.append([time.process_time() - clock] + sensitivities()[0])
    _, run, response, result = sensitivities()
    f, rec, resp, adj, ddm = np.median(np.array(rows), axis=0)
    out = {"n_el": n_el, "n_dof": asm.n_dof, "n_free": asm.n_free, "forward": f, "record": rec, "response": resp,
           "adjoint": adj, "direct5": ddm, "ratio": (rec + resp + adj) / f, "sweep_ratio": adj / f,
           "direct_ratio": (rec + ddm) / f, "memory": result.memory_bytes, "held": result.states_held,
           "kept": len(run.states), "recomputed": result.recomputed, "solves": result.solves,
           "n_p": len(params)}
    if show_split:
        out["split"] = split(run, params, response)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--elements", type=int, nargs="+", default=[16, 25, 64])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep-every", type=int, default=1)
    parser.add_argument("--split", action="store_true", help="the adjoint sweep's split (one more run)")
    args = parser.parse_args()
    print(f"slider-crank A, mid-point, {N_STEPS} steps, {N_PARAMETERS} parameters, keep_every = {args.keep_every}; "
          f"CPU ms, median of {args.repeat}; load {os.getloadavg()[0]:.2f}")
    print("| elements | unknowns | forward | record | response | adjoint (50) | (record + response + adjoint) / "
          "forward | adjoint alone / forward | direct (5) + record / forward | kept states | held at once | "
          "memory (bytes) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    results = [measure(n, args.repeat, args.keep_every, args.split) for n in args.elements]
    for r in results:
        print(f"| {r['n_el']} | {r['n_free']} | {r['forward'] * 1e3:.1f} | {r['record'] * 1e3:.1f} | "
              f"{r['response'] * 1e3:.1f} | {r['adjoint'] * 1e3:.1f} | {r['ratio']:.2f} | {r['sweep_ratio']:.2f} | "
              f"{r['direct_ratio']:.2f} | {r['kept']} | {r['held']} | {r['memory']} |")
    if args.split:
        labels = [label for _, _, label in PARTS] + ["rest"]
        print("\nadjoint sweep's split, CPU us per solve (one run)")
        print("| elements | " + " | ".join(labels) + " |")
        print("|---:|" + "---:|" * len(labels))
        for r in results:
            per_solve = [r["split"].get(k, 0.0) / r["solves"] * 1e6 for k in labels]
            print(f"| {r['n_el']} | " + " | ".join(f"{t:.0f}" for t in per_solve) + " |")


if __name__ == "__main__":
    main()
