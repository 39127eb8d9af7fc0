"""The ``flexmb`` command.

    flexmb [--traceback] validate [CASE ...] [--quick] [--out DIR] [--report DIR] [--cases-dir DIR] [--jobs N]
    flexmb validate --list
    flexmb --version
    flexmb info RESULT                       what a result file holds, and its run log
    flexmb render RESULT [--out FILE] [--step K | --steps A:B:C] [--color Q] [--cmap MAP] [--every N] [--fps F] [--force]
    flexmb plot RESULT QUANTITY [...] [--x Q] [--out FILE] [--force]
    flexmb export RESULT [--vtu DIR] [--xdmf FILE] [--every N] [--force]
    flexmb study SCRIPT.py [--workers N] [--scheduler ADDR] [--out DIR] [--resume] [--serial] [--quick]
    flexmb compile [--only SET ...] [--jit-only]   fill numba's kernel cache and build the ahead-of-time kernels
                                             (flexmb.warm_up, flexmb.aot)
    flexmb run MODEL --t-end T --dt DT [--out RESULT] [--scheme S] [--force]

RESULT is a result file written by flexmb (``integrate(..., save_to="run.h5")``, ``save``).
MODEL is a model file (``Model.save("model.h5")``) or a result file that carries its model; ``run``
integrates it (``fm.integrate`` with its defaults) and writes the result file (default
MODEL-result.h5 beside it).
SCRIPT.py defines ``STUDY = flexmb.studies.Study(...)`` (see :mod:`flexmb.studies`).

Exit status: 0 done; 1 a validation case (or a study variant) failed; 2 bad input (a missing or unreadable file, an
option value out of range, an output that exists or is the input), reported in one line
``flexmb COMMAND: message`` on stderr; 3 an unexpected error (one line with its type; rerun
with ``--traceback`` or ``FLEXMB_TRACEBACK=1`` for the traceback); 130 interrupted (Ctrl-C);
141 the reader of the output went away (``flexmb info run.h5 | head -1``), quietly, as a
program stopped by SIGPIPE.

No command writes over its input file, nor over an existing output without ``--force``.
"""
from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flexmb.results import Result

#: exit codes (see the module docstring)
EXIT_FAILED, EXIT_USAGE, EXIT_UNEXPECTED, EXIT_INTERRUPTED, EXIT_PIPE = 1, 2, 3, 130, 141
#: allowed picture sizes (--size), pixels per side
MIN_PIXELS, MAX_PIXELS = 16, 8192
TRACEBACK_VARIABLE = "FLEXMB_TRACEBACK"


class CommandError(Exception):
    """Bad input to a command, reported as one line and exit status 2."""


class UsageError(CommandError):
    """Command-line syntax that argparse rejects (unknown option, a value of the wrong type);
    ``prog`` is the (sub)command that rejected it, e.g. "flexmb render"."""

    def __init__(self, message: str, prog: str) -> None:
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:                  # argparse would print its usage too
        raise UsageError(f"{message} (see {self.prog} --help)", self.prog)


# ------------------------------------------------------------------ option values
def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive finite number, got {text!r}")
    return value


def _glyph_scale(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0 (0 hides the point masses), got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0 (0 hides the point masses), got {text!r}")
    return value


def _window_size(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if match is None:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT in pixels, e.g. 1200x800, got {text!r}")
    width, height = int(match[1]), int(match[2])
    if not (MIN_PIXELS <= width <= MAX_PIXELS and MIN_PIXELS <= height <= MAX_PIXELS):
        raise argparse.ArgumentTypeError(f"{text!r}: width and height must be {MIN_PIXELS} to {MAX_PIXELS} pixels")
    return width, height


# ------------------------------------------------------------------ files
def _load(path_text: str) -> Result:
    """The result in file RESULT, with errors naming the file."""
    from flexmb.results import load_result

    path = Path(path_text)
    if not path.exists():
        raise CommandError(f"result file {path} does not exist")
    if path.is_dir():
        raise CommandError(f"{path} is a folder, not a result file")
    try:
        return load_result(path)
    except ValueError:                                       # read_result's messages name the file
        raise
    except Exception as exc:                                 # e.g. a damaged dataset
        raise CommandError(f"cannot read result file {path}: {_describe(exc)}") from exc


def _require_steps(result: Result, path: str, what: str) -> None:
    if result.n_steps == 0:
        raise CommandError(f"{path} holds no steps (a {result.kind} result, status "
                           f"{result.meta.get('status')}): nothing to {what}")


def _check_outputs(args: argparse.Namespace, option: str, paths: Sequence[Path]) -> None:
    """Refuse outputs that are the input file or folders, and existing ones without --force."""
    from flexmb.io.export import check_outputs

    try:
        check_outputs(paths, overwrite=args.force, inputs=[args.result], overwrite_hint="add --force")
    except (ValueError, OSError) as exc:
        raise CommandError(f"{option} {exc}") from None


def _check_step(option: str, step: int, result: Result) -> int:
    n = result.n_steps
    if not -n <= step < n:
        what = "modes" if result.kind == "modes" else "steps"
        raise CommandError(f"{option} {step}: the {result.kind} result has {n} {what} "
                           f"(0..{n - 1}, or -1..-{n} from the end)")
    return step


def _step_range(text: str, n_steps: int) -> list[int]:
    """Steps of a slice ``start:stop:step`` (Python rules, e.g. ``0:241:20`` or ``::10``)."""
    try:
        parts = [int(p) if p.strip() else None for p in text.split(":")]
        if len(parts) > 3 or (len(parts) == 3 and parts[2] == 0):
            raise ValueError
    except ValueError:
        raise CommandError(f"--steps {text!r}: expected start:stop:step with a non-zero step, "
                           "e.g. 0:100:10") from None
    steps = list(range(n_steps))[slice(*parts)]
    if not steps:
        raise CommandError(f"--steps {text!r} selects none of the {n_steps} steps (0..{n_steps - 1})")
    return steps


# ------------------------------------------------------------------ commands
def _validate(args: argparse.Namespace) -> int:
    import matplotlib
    matplotlib.use("Agg")                                   # files only, no display needed
    from flexmb.validation import discover_cases, run_cases
    from flexmb.validation.registry import load_module
    from flexmb.validation.runner import default_jobs

    try:
        if args.list:
            for name, path in discover_cases(args.cases_dir).items():
                module = load_module(path)
                print(f"{name:20s} {module.TITLE}  [{module.SOURCE}]")
            return 0
        out = args.out or args.report or "validation-results"
        failed = run_cases(args.cases, quick=args.quick, out_dir=out, cases_dir=args.cases_dir,
                           report_dir=args.report, jobs=args.jobs or default_jobs())
    except KeyError as exc:                                 # unknown case names
        raise CommandError(exc.args[0]) from None
    return EXIT_FAILED if failed else 0


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
    else:
        print("  no steps: the file holds no state to plot, render or export")
    if layout is not None:
        print(f"  model: {layout.dim}D, {layout.n_nodes} nodes, {layout.n_dof} DOFs, "
              f"{len(layout.point_masses) - len(layout.bodies)} point mass(es)"
              + (f", {len(layout.bodies)} rigid bod{'y' if len(layout.bodies) == 1 else 'ies'}"
                 if layout.bodies else ""))
        for i, g in enumerate(layout.groups):
            print(f"  group {i} {g.name!r}: {g.n_elements} {g.kind} element(s); outputs "
                  + ", ".join(f"{n} ({u})" for n, u in g.outputs.items()))
        _print_mechanism(layout)
        for s in layout.sensors:                            # plotted by name: flexmb plot RESULT NAME
            parts = r.sensor_quantities(s.name)
            print(f"  sensor {s.name!r}: {s.quantity} ({r.label(parts[0]).rsplit('(', 1)[-1]}"
                  + (f", components {' '.join(parts)}" if len(parts) > 1 else ""))
    print(f"  cut-backs: {r.cutbacks}\nrun log:\n" + "\n".join("  " + line for line in r.format_log().splitlines()))
    return 0


def _print_mechanism(layout) -> None:
    """The rigid bodies, joints, force elements and damping of a result's model layout."""
    from flexmb.model_forces import FORCE_ELEMENT_GROUPS

    bodies = {b.node: b.name for b in layout.bodies}
    for b in layout.bodies:
        print(f"  body {b.name!r}: node {b.node}, mass {b.mass:.6g} kg, drawn as "
              + ("the given shape" if b.given else "a link through its joint points"))

    def side(node: int) -> str:
        return "the ground" if node < 0 else f"body {bodies[node]!r}" if node in bodies else f"node {node}"

    for name, kind, (a, b) in zip(layout.joints, layout.joint_kinds, layout.joint_sides):
        print(f"  joint {name!r}: {kind}, {side(int(a))} to {side(int(b))}")
    force_kinds = {cls.__name__ for cls in FORCE_ELEMENT_GROUPS}
    for g in layout.groups:
        if g.kind in force_kinds:
            print(f"  force elements {g.name!r}: {g.n_elements} {g.kind}")
    if layout.damping is None:
        print("  damping: not recorded (a file written before flexmb recorded it)")
        return
    for name, what in layout.damping.items():
        print(f"  damping of {name!r}: {what}")
    if not layout.damping:
        print("  damping: none")


def _render(args: argparse.Namespace) -> int:
    from flexmb.viz.scene import IMAGE_SUFFIXES, MOVIE_SUFFIXES

    out = Path(args.out or Path(args.result).with_suffix(".png"))
    suffix = out.suffix.lower()
    if suffix not in IMAGE_SUFFIXES + MOVIE_SUFFIXES:
        raise CommandError(f"--out {out}: unknown suffix {out.suffix!r}; use {', '.join(IMAGE_SUFFIXES)} "
                           f"(picture) or {', '.join(MOVIE_SUFFIXES)} (animation)")
    animation = suffix in MOVIE_SUFFIXES
    if animation and (args.step is not None or args.steps is not None):
        raise CommandError(f"--step and --steps choose pictures; the animation {out.name} shows every "
                           "--every-th step (use a .png file for chosen steps)")
    r = _load(args.result)
    _require_steps(r, args.result, "render")
    _check_outputs(args, "--out", [out])
    from flexmb.viz import scene

    size = args.size
    if animation:
        scene.animate(r, out, every=args.every, fps=args.fps, color=args.color, window_size=size, cmap=args.cmap,
                      point_mass_scale=args.point_mass_scale)
    elif args.steps is not None:
        scene.render_sequence(r, out, _step_range(args.steps, r.n_steps), color=args.color, window_size=size,
                              cmap=args.cmap, point_mass_scale=args.point_mass_scale)
    elif r.kind == "modes" and args.step is None:
        scene.render_modes(r, out, n=min(4, r.n_steps), scale=args.scale, window_size=size)
    else:
        step = -1 if args.step is None else _check_step("--step", args.step, r)
        scene.render(r, out, step=step, color=args.color, window_size=size, scale=args.scale, cmap=args.cmap,
                     point_mass_scale=args.point_mass_scale)
    print(f"wrote {out}")
    return 0


def _plot(args: argparse.Namespace) -> int:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    out = Path(args.out or Path(args.result).with_suffix(".history.png"))
    formats = FigureCanvasAgg.get_supported_filetypes()
    if out.suffix.lower().lstrip(".") not in formats:
        raise CommandError(f"--out {out}: unknown suffix {out.suffix!r}; use one of "
                           + ", ".join("." + f for f in sorted(formats)))
    r = _load(args.result)
    _require_steps(r, args.result, "plot")
    _check_outputs(args, "--out", [out])
    for option, quantity in [("--x", args.x)] + [("QUANTITY", q) for q in args.quantities]:
        try:
            for name in r.sensor_quantities(quantity):          # a vector sensor: each component
                r.series(name)
        except (ValueError, IndexError) as exc:
            raise CommandError(f"{option} {quantity!r}: {exc}") from None
    from flexmb.viz.plots import plot_history

    fig = plot_history(r, args.quantities, x=args.x)
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from flexmb.io import export

    if not (args.vtu or args.xdmf):
        raise CommandError("give --vtu DIR and/or --xdmf FILE")
    if args.xdmf and Path(args.xdmf).suffix.lower() not in (".xdmf", ".xmf"):
        raise CommandError(f"--xdmf {args.xdmf}: an XDMF file needs the suffix .xdmf (or .xmf)")
    if args.vtu and Path(args.vtu).exists() and not Path(args.vtu).is_dir():
        raise CommandError(f"--vtu {args.vtu}: is a file, not a folder")
    r = _load(args.result)
    _require_steps(r, args.result, "export")
    name = Path(args.result).stem
    # every output checked before anything is written
    if args.vtu:
        _check_outputs(args, "--vtu", export.vtu_series_paths(r, args.vtu, name, every=args.every))
    if args.xdmf:
        _check_outputs(args, "--xdmf", [Path(args.xdmf), export.xdmf_heavy_data_path(args.xdmf)])
    if args.vtu:
        print(f"wrote {export.write_vtu_series(r, args.vtu, name, every=args.every, overwrite=args.force)}")
    if args.xdmf:
        path = export.write_xdmf(r, args.xdmf, every=args.every, overwrite=args.force)
        print(f"wrote {path} (heavy data {export.xdmf_heavy_data_path(path).name})")
    return 0


def _study(args: argparse.Namespace) -> int:
    from flexmb.studies import load_study_script

    study = load_study_script(args.script)
    out = Path(args.out) if args.out else None
    result = study.run(out=out, workers=args.workers, scheduler=args.scheduler, serial=args.serial,
                       resume=args.resume, quick=args.quick)
    written = result.write()
    print(result.summary())
    print(f"\nwrote {result.path} and, in {result.path.parent}: " + ", ".join(p.name for p in written))
    return EXIT_FAILED if len(result.failures) else 0


def _compile(args: argparse.Namespace) -> int:
    import time

    from flexmb.warm_up import KERNEL_SETS, build_ahead_of_time, cache_folders, compile_kernels

    if args.only:
        unknown = [name for name in args.only if name not in KERNEL_SETS]
        if unknown:
            raise CommandError(f"--only {unknown[0]}: unknown kernel set; choose from {', '.join(KERNEL_SETS)}")
    start = time.perf_counter()

    def report(done) -> None:
        print(f"{done.name:7s} {done.compiled:3d} kernels compiled, {done.loaded:3d} loaded from the cache, "
              f"{done.seconds:5.1f} s  ({KERNEL_SETS[done.name][0]})", flush=True)

    reports = compile_kernels(args.only, report)
    compiled = sum(r.compiled for r in reports)
    state = "everything was cached already" if compiled == 0 else f"{compiled} kernels compiled"
    print(f"done in {time.perf_counter() - start:.1f} s: {state}; numba's cache: {', '.join(cache_folders())}")
    if not args.jit_only:
        print(build_ahead_of_time(args.only)[1])
    return 0


def _run(args: argparse.Namespace) -> int:
    import flexmb as fm

    path = Path(args.model)
    if not path.exists():
        raise CommandError(f"model file {path} does not exist")
    if path.is_dir():
        raise CommandError(f"{path} is a folder, not a model file")
    out = Path(args.out) if args.out else path.with_name(f"{path.stem}-result.h5")
    if out.resolve() == path.resolve():                 # check_outputs would call it a result file
        raise CommandError(f"--out {out}: is the model file itself; name another file")
    from flexmb.io.export import check_outputs

    try:
        check_outputs([out], overwrite=args.force, inputs=[path], overwrite_hint="add --force")
    except (ValueError, OSError) as exc:
        raise CommandError(f"--out {exc}") from None
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())             # the user's functions may live beside the model, as with python -m
    model = fm.load_model(path)
    history = fm.integrate(model, dt=args.dt, t_end=args.t_end, scheme=args.scheme, save_to=out,
                           overwrite=args.force)
    print(f"wrote {out}: {history.n_steps} steps to t = {history.t[-1]:.6g} s ({args.scheme})")
    return 0


# ------------------------------------------------------------------ the command
def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``flexmb`` (its errors raise :class:`UsageError`)."""
    from flexmb import __version__

    parser = _Parser(prog="flexmb", description="Flexible multibody dynamics with finite elements.")
    trace_help = (f"show the Python traceback of an error (also: environment variable {TRACEBACK_VARIABLE}=1)")
    parser.add_argument("--traceback", action="store_true", help=trace_help)
    parser.add_argument("--version", action="version", version=f"flexmb {__version__}",
                        help="print the version of flexmb and exit")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS, help=trace_help)
    writes = argparse.ArgumentParser(add_help=False)
    writes.add_argument("--force", action="store_true", help="overwrite existing output files")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    val = sub.add_parser("validate", parents=[common],
                         help="run literature benchmarks and compare with reference values")
    val.add_argument("cases", nargs="*", metavar="CASE", help="case names (default: all)")
    val.add_argument("--quick", action="store_true", help="shorter runs where a case offers them (for CI)")
    val.add_argument("--out", default=None, metavar="DIR",
                     help="folder for CASE.json and CASE.png (default: the --report folder, else validation-results)")
    val.add_argument("--report", default=None, metavar="DIR",
                     help="also write DIR/index.md and DIR/index.html with the summary and every figure")
    val.add_argument("--list", action="store_true", help="list the available cases and exit")
    val.add_argument("--cases-dir", default=None, metavar="DIR", help="folder with the case scripts")
    val.add_argument("--jobs", "-j", type=_positive_int, default=None, metavar="N",
                     help="run the cases in N worker processes (default: the number of cores; 1: one after "
                          "the other in this process); the table and the report are the same for every N")
    val.set_defaults(func=_validate)

    info = sub.add_parser("info", parents=[common], help="summary and run log of a result file")
    info.add_argument("result", metavar="RESULT")
    info.set_defaults(func=_info)

    ren = sub.add_parser("render", parents=[common, writes],
                         help="picture (.png) or animation (.gif, .mp4) of a result, off-screen")
    ren.add_argument("result", metavar="RESULT")
    ren.add_argument("--out", default=None, metavar="FILE", help="output file (default: RESULT with .png)")
    chosen = ren.add_mutually_exclusive_group()
    chosen.add_argument("--step", type=int, default=None,
                        help="step to draw (default: the last; for modes: all of the first four in a grid)")
    chosen.add_argument("--steps", default=None, metavar="A:B:C",
                        help="several steps in one picture (a slice, e.g. 0:241:20): a stroboscopic view")
    ren.add_argument("--color", default=None, metavar="Q",
                     help="colour by an element output (N, My1, axial_strain, ...), displacement or velocity")
    ren.add_argument("--cmap", default=None, metavar="MAP",
                     help="colour map: diverging (symmetric about 0), sequential, or a matplotlib name (default: "
                          "diverging for element outputs of both signs, else sequential)")
    ren.add_argument("--point-mass-scale", type=_glyph_scale, default=1.0, metavar="S",
                     help="point-mass sphere size factor, 0 hides them (rigid bodies keep their shapes)")
    ren.add_argument("--every", type=_positive_int, default=1, metavar="N", help="animation: draw every N-th step")
    ren.add_argument("--fps", type=_positive_float, default=15.0, metavar="F", help="animation: frames per second")
    ren.add_argument("--scale", type=_positive_float, default=None, metavar="S",
                     help="modes: largest mode displacement drawn (m)")
    ren.add_argument("--size", type=_window_size, default=(1200, 800), metavar="WxH",
                     help=f"image size in pixels, {MIN_PIXELS} to {MAX_PIXELS} each (default: 1200x800)")
    ren.set_defaults(func=_render)

    plo = sub.add_parser("plot", parents=[common, writes], help="matplotlib plot of histories from a result file")
    plo.add_argument("result", metavar="RESULT")
    plo.add_argument("quantities", nargs="+", metavar="QUANTITY",
                     help="uy@12 (DOF at node), vel:uy@12, reac:ux@0, kinetic, strain, total, Lz, N@group:element, "
                          "a sensor's name (all its components) or one component, tip[y]")
    plo.add_argument("--x", default="parameter", help="quantity on the horizontal axis (default: time or load factor)")
    plo.add_argument("--out", default=None, metavar="FILE", help="output file (default: RESULT.history.png)")
    plo.set_defaults(func=_plot)

    exp = sub.add_parser("export", parents=[common, writes], help="VTU series (.pvd) and/or XDMF time series for ParaView")
    exp.add_argument("result", metavar="RESULT")
    exp.add_argument("--vtu", default=None, metavar="DIR", help="folder for RESULT_00000.vtu ... and RESULT.pvd")
    exp.add_argument("--xdmf", default=None, metavar="FILE",
                     help="XDMF file; its heavy data goes to FILE.h5 (run.xdmf -> run.xdmf.h5)")
    exp.add_argument("--every", type=_positive_int, default=1, metavar="N", help="write every N-th step")
    exp.set_defaults(func=_export)

    stu = sub.add_parser("study", parents=[common],
                         help="run a design study (parameter sweep, Monte Carlo) serially or on Dask")
    stu.add_argument("script", metavar="SCRIPT.py", help="Python file that defines STUDY = Study(...)")
    stu.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                     help="processes of the local Dask cluster (default: the number of cores)")
    stu.add_argument("--scheduler", default=None, metavar="ADDR",
                     help="address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: the "
                          "environment variable FLEXMB_SCHEDULER, else a local cluster)")
    stu.add_argument("--out", default=None, metavar="DIR",
                     help="folder for study.h5, summary.md, summary.csv and plots (default: study-results/NAME)")
    stu.add_argument("--resume", action="store_true",
                     help="continue the study in DIR: compute only the variants not yet done (and failed ones)")
    stu.add_argument("--serial", action="store_true", help="run in this process without Dask (debugging)")
    stu.add_argument("--quick", action="store_true", help="the study's quick_space (a few variants, for CI)")
    stu.set_defaults(func=_study)

    com = sub.add_parser("compile", parents=[common],
                         help="compile the numerical kernels into numba's cache ahead of time (the first run "
                              "after install does it otherwise) and, with a C compiler, into a module that later "
                              "runs load without importing numba")
    com.add_argument("--only", nargs="+", default=None, metavar="SET",
                     help="only these kernel sets: truss, beam2d, beam3d, shell, bodies, modal (default: all)")
    com.add_argument("--jit-only", action="store_true",
                     help="only fill numba's cache: no ahead-of-time module of the kernels (see flexmb.aot)")
    com.set_defaults(func=_compile)

    run = sub.add_parser("run", parents=[common, writes],
                         help="integrate a model file (Model.save) in time and write its result file")
    run.add_argument("model", metavar="MODEL", help="model file (or a result file that carries its model)")
    run.add_argument("--t-end", type=_positive_float, required=True, metavar="T", help="end time of the run (s)")
    run.add_argument("--dt", type=_positive_float, required=True, metavar="DT",
                     help="time step (s), a whole fraction of T")
    run.add_argument("--out", default=None, metavar="RESULT",
                     help="result file to write (default: MODEL-result.h5 beside MODEL)")
    run.add_argument("--scheme", default="mid-point", metavar="S",
                     help="time scheme of flexmb.integrate: mid-point (default), composed-mid-point, newmark, "
                          "generalized-alpha, energy-decaying, energy-decaying-velocity")
    run.set_defaults(func=_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``flexmb`` with the arguments ``argv`` (default: the command line); returns the exit
    status. Errors are one line on stderr (see the module docstring)."""
    command = "flexmb"
    show_traceback = os.environ.get(TRACEBACK_VARIABLE, "") not in ("", "0")
    try:
        try:
            args, unknown = build_parser().parse_known_args(argv)
        except SystemExit as done:                          # --help
            return done.code if isinstance(done.code, int) else 0
        command = f"flexmb {args.command}"
        if unknown:
            raise UsageError(f"unrecognized arguments: {' '.join(unknown)} (see {command} --help)", command)
        show_traceback = show_traceback or args.traceback
        status = args.func(args)
        sys.stdout.flush()                    # a closed pipe shows up here, not at interpreter exit
        return status
    except BrokenPipeError:
        # the reader went away (`| head`): further output, and Python's flush at exit, go nowhere
        _discard_stdout()
        return EXIT_PIPE
    except KeyboardInterrupt:
        if show_traceback:
            raise
        print(f"{command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        if show_traceback and not isinstance(exc, UsageError):
            raise
        if _expected(exc):
            prefix = exc.prog if isinstance(exc, UsageError) else command
            print(f"{prefix}: {_one_line(_describe(exc))}", file=sys.stderr)
            return EXIT_USAGE
        print(f"{command}: unexpected {type(exc).__name__}: {_one_line(_describe(exc))} (rerun with "
              f"--traceback, or set {TRACEBACK_VARIABLE}=1, for the traceback)", file=sys.stderr)
        return EXIT_UNEXPECTED


def _expected(exc: BaseException) -> bool:
    """Errors that report bad input: the command's own, flexmb's, and the standard ones for bad
    values, missing files or modules (flexmb raises ValueError subclasses for bad input)."""
    return (isinstance(exc, (CommandError, ValueError, OSError, ImportError))
            or type(exc).__module__.split(".")[0] == "flexmb")


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        return f"{exc.filename}: {exc.strerror}"
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        return str(exc.args[0])                              # without the quotes of KeyError's str
    return str(exc) or type(exc).__name__


def _one_line(text: str) -> str:
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def _discard_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):                            # no real file descriptor (captured output)
        pass


if __name__ == "__main__":
    sys.exit(main())
