"""The ``flexmb`` command.

    flexmb validate [CASE ...] [--quick] [--out DIR] [--report DIR] [--cases-dir DIR]
    flexmb validate --list
    flexmb info RESULT                       what a result file holds, and its run log
    flexmb render RESULT [--out FILE] [--step K | --steps A:B:C] [--color Q] [--every N] [--fps F]
    flexmb plot RESULT QUANTITY [...] [--x Q] [--out FILE]
    flexmb export RESULT [--vtu DIR] [--xdmf FILE] [--every N]

RESULT is a result file written by flexmb (``integrate(..., save_to="run.h5")``, ``save``).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence


def _validate(args: argparse.Namespace) -> int:
    import matplotlib
    matplotlib.use("Agg")                                   # files only, no display needed
    from flexmb.validation import discover_cases, run_cases
    from flexmb.validation.registry import load_module

    try:
        if args.list:
            for name, path in discover_cases(args.cases_dir).items():
                module = load_module(path)
                print(f"{name:20s} {module.TITLE}  [{module.SOURCE}]")
            return 0
        out = args.out or args.report or "validation-results"
        failed = run_cases(args.cases, quick=args.quick, out_dir=out, cases_dir=args.cases_dir,
                           report_dir=args.report)
    except (FileNotFoundError, KeyError) as exc:
        print(f"flexmb validate: {exc.args[0]}", file=sys.stderr)
        return 2
    return 1 if failed else 0


def _load(path: str):
    from flexmb.results import load_result

    return load_result(path)


def _info(args: argparse.Namespace) -> int:
    r = _load(args.result)
    layout = r.layout
    p = r.parameter
    print(f"{args.result}: {r.kind} result, {r.n_steps} step(s), status {r.meta.get('status')}")
    details = {k: v for k, v in r.meta.items() if k not in ("file", "status")}
    if details:
        print("  " + ", ".join(f"{k} = {v}" for k, v in details.items()))
    if r.n_steps:
        print(f"  {r.parameter_name}: {p[0]:.6g} .. {p[-1]:.6g}")
    if layout is not None:
        print(f"  model: {layout.dim}D, {layout.n_nodes} nodes, {layout.n_dof} DOFs, "
              f"{len(layout.point_masses)} point mass(es)")
        for i, g in enumerate(layout.groups):
            print(f"  group {i} {g.name!r}: {g.n_elements} {g.kind} element(s); outputs "
                  + ", ".join(f"{n} ({u})" for n, u in g.outputs.items()))
    print(f"  cut-backs: {r.cutbacks}\nrun log:\n" + "\n".join("  " + line for line in r.format_log().splitlines()))
    return 0


def _render(args: argparse.Namespace) -> int:
    from flexmb.viz import scene

    r = _load(args.result)
    out = Path(args.out or Path(args.result).with_suffix(".png"))
    size = tuple(int(v) for v in args.size.lower().split("x"))
    if out.suffix.lower() in (".gif", ".mp4"):
        written = scene.animate(r, out, every=args.every, fps=args.fps, color=args.color, window_size=size)
    elif args.steps is not None:
        if out.suffix.lower() != ".png":
            raise ValueError(f"--steps draws one picture: use a .png file, not {out.name}")
        scene.render_sequence(r, out, _step_range(args.steps, r.n_steps), color=args.color, window_size=size)
        written = out
    elif r.kind == "modes" and args.step is None:
        scene.render_modes(r, out, n=min(4, r.n_steps), scale=args.scale, window_size=size)
        written = out
    elif out.suffix.lower() == ".png":
        scene.render(r, out, step=-1 if args.step is None else args.step, color=args.color,
                     window_size=size, scale=args.scale)
        written = out
    else:
        raise ValueError(f"--out {out}: use a .png (picture), .gif or .mp4 (animation) file")
    print(f"wrote {written}")
    return 0


def _step_range(text: str, n_steps: int) -> list[int]:
    """Steps of a slice ``start:stop:step`` (Python rules, e.g. ``0:241:20`` or ``::10``)."""
    try:
        parts = [int(p) if p.strip() else None for p in text.split(":")]
        if len(parts) > 3:
            raise ValueError
    except ValueError:
        raise ValueError(f"--steps {text!r}: expected start:stop:step, e.g. 0:100:10") from None
    steps = list(range(n_steps))[slice(*parts)]
    if not steps:
        raise ValueError(f"--steps {text!r} selects none of the {n_steps} steps")
    return steps


def _plot(args: argparse.Namespace) -> int:
    import matplotlib
    matplotlib.use("Agg")
    from flexmb.viz.plots import plot_history

    r = _load(args.result)
    fig = plot_history(r, args.quantities, x=args.x)
    out = Path(args.out or Path(args.result).with_suffix(".history.png"))
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from flexmb.io import export

    if not (args.vtu or args.xdmf):
        raise ValueError("flexmb export: give --vtu DIR and/or --xdmf FILE")
    r = _load(args.result)
    if args.vtu:
        print(f"wrote {export.write_vtu_series(r, args.vtu, Path(args.result).stem, every=args.every)}")
    if args.xdmf:
        print(f"wrote {export.write_xdmf(r, args.xdmf, every=args.every)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="flexmb", description="Flexible multibody dynamics with finite elements.")
    sub = parser.add_subparsers(dest="command", required=True)

    val = sub.add_parser("validate", help="run literature benchmarks and compare with reference values")
    val.add_argument("cases", nargs="*", metavar="CASE", help="case names (default: all)")
    val.add_argument("--quick", action="store_true", help="shorter runs where a case offers them (for CI)")
    val.add_argument("--out", default=None, metavar="DIR",
                     help="folder for CASE.json and CASE.png (default: the --report folder, else validation-results)")
    val.add_argument("--report", default=None, metavar="DIR",
                     help="also write DIR/index.md and DIR/index.html with the summary and every figure")
    val.add_argument("--list", action="store_true", help="list the available cases and exit")
    val.add_argument("--cases-dir", default=None, metavar="DIR", help="folder with the case scripts")
    val.set_defaults(func=_validate)

    info = sub.add_parser("info", help="summary and run log of a result file")
    info.add_argument("result", metavar="RESULT")
    info.set_defaults(func=_info)

    ren = sub.add_parser("render", help="picture (.png) or animation (.gif, .mp4) of a result, off-screen")
    ren.add_argument("result", metavar="RESULT")
    ren.add_argument("--out", default=None, metavar="FILE", help="output file (default: RESULT with .png)")
    ren.add_argument("--step", type=int, default=None,
                     help="step to draw (default: the last; for modes: all of the first four in a grid)")
    ren.add_argument("--steps", default=None, metavar="A:B:C",
                     help="several steps in one picture (a slice, e.g. 0:241:20): a stroboscopic view")
    ren.add_argument("--color", default=None, metavar="Q",
                     help="colour by an element output (N, My1, axial_strain, ...), displacement or velocity")
    ren.add_argument("--every", type=int, default=1, help="animation: draw every N-th step")
    ren.add_argument("--fps", type=float, default=15.0, help="animation: frames per second")
    ren.add_argument("--scale", type=float, default=None, help="modes: largest mode displacement drawn (m)")
    ren.add_argument("--size", default="1200x800", help="image size WxH in pixels (default: %(default)s)")
    ren.set_defaults(func=_render)

    plo = sub.add_parser("plot", help="matplotlib plot of histories from a result file")
    plo.add_argument("result", metavar="RESULT")
    plo.add_argument("quantities", nargs="+", metavar="QUANTITY",
                     help="uy@12 (DOF at node), vel:uy@12, reac:ux@0, kinetic, strain, total, Lz, N@group:element")
    plo.add_argument("--x", default="parameter", help="quantity on the horizontal axis (default: time or load factor)")
    plo.add_argument("--out", default=None, metavar="FILE", help="output file (default: RESULT.history.png)")
    plo.set_defaults(func=_plot)

    exp = sub.add_parser("export", help="VTU series (.pvd) and/or XDMF time series for ParaView")
    exp.add_argument("result", metavar="RESULT")
    exp.add_argument("--vtu", default=None, metavar="DIR", help="folder for RESULT_00000.vtu ... and RESULT.pvd")
    exp.add_argument("--xdmf", default=None, metavar="FILE", help="XDMF file (with its .h5 heavy data)")
    exp.add_argument("--every", type=int, default=1, help="write every N-th step")
    exp.set_defaults(func=_export)

    args = parser.parse_args(argv)
    if args.command == "validate":
        return args.func(args)
    try:
        return args.func(args)
    except (FileNotFoundError, ValueError, ImportError) as exc:
        print(f"flexmb {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
