"""The ``flexmb`` CLI: info, plot, render (PNG and GIF), export; one-line errors with exit codes,
option checks, outputs that never replace the input, closed pipes and tracebacks."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import h5py
import meshio
import numpy as np
import pytest
from PIL import Image

import flexmb as fm
import flexmb.cli as cli
from flexmb.cli import main
from flexmb.results import ModelLayout
from models import kicked_pendulum

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def flying_beam(tmp_path_factory) -> Path:
    """Result file of the flying 3D beam example over three bending periods (30 steps)."""
    spec = importlib.util.spec_from_file_location("example_flying_beam", REPO / "examples" / "flying_beam_3d.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    asm, v0 = example.build()
    path = tmp_path_factory.mktemp("cli") / "flying_beam.h5"
    fm.integrate(asm, example.T1 / 10, 3 * example.T1, v0=v0, save_to=path)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """Small inputs: a pendulum run (11 steps), a result without steps, a text file, an HDF5
    file that is no result, a result file without its parts, and buckling modes (3)."""
    folder = tmp_path_factory.mktemp("inputs")
    asm = kicked_pendulum()
    pendulum = folder / "pendulum.h5"
    fm.integrate(asm, 0.05, 0.5, progress=False, save_to=pendulum)
    empty = fm.StaticPath(ModelLayout.from_assembly(asm)).save(folder / "empty.h5")
    text = folder / "notes.txt"
    text.write_text("not a result\n")
    foreign = folder / "foreign.h5"
    with h5py.File(foreign, "w") as f:
        f["x"] = np.arange(3.0)
    incomplete = folder / "incomplete.h5"
    with h5py.File(incomplete, "w") as f:
        f.attrs.update({"format": "flexmb-result", "format_version": 1, "kind": "dynamic", "meta": "{}"})
    m = fm.Model(dim=3)
    n = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 4), np.zeros(4), np.zeros(4)])
    m.add_beam3d(np.c_[n[:-1], n[1:]], EA=5.25e6, GJ=1.69, EI_y=2.19e3, EI_z=0.219, y_axis=(0.0, 1.0, 0.0))
    m.fix(n[0])
    m.add_load(n[-1], "uz", 1.0)
    modes = fm.linear_buckling(m, n_modes=3).mode_shapes().save(folder / "modes.h5")
    return {"pendulum": pendulum, "empty": Path(empty), "text": text, "foreign": foreign, "incomplete": incomplete,
            "modes": Path(modes)}


def picture(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=float)


def one_line_error(capsys, command: str) -> str:
    """The stderr of the last call: exactly one line starting with ``flexmb COMMAND:``."""
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{captured.err}"
    assert lines[0].startswith(f"flexmb {command}: "), lines[0]
    assert "Traceback" not in captured.err
    return lines[0]


# ------------------------------------------------------------------ what the commands make
def test_render_shows_the_beam_moving(flying_beam, tmp_path, capsys):
    first, last = tmp_path / "first.png", tmp_path / "last.png"
    assert main(["render", str(flying_beam), "--step", "0", "--out", str(first), "--size", "640x480"]) == 0
    assert main(["render", str(flying_beam), "--out", str(last), "--color", "My1", "--size", "640x480"]) == 0
    assert f"wrote {last}" in capsys.readouterr().out
    a, b = picture(first), picture(last)
    assert a.shape == b.shape == (480, 640, 3)
    for name, img in (("step 0", a), ("last step", b)):
        background = img[0, 0]
        drawn = np.any(np.abs(img - background) > 30, axis=2).mean()
        assert drawn > 0.01, f"{name}: only {100 * drawn:.2f} % of the pixels show something"
    changed = np.any(np.abs(a - b) > 30, axis=2).mean()
    assert changed > 0.01, f"the pictures of step 0 and the last step differ in {100 * changed:.2f} % of the pixels"


def test_render_several_steps_in_one_picture(flying_beam, tmp_path):
    from flexmb.viz import scene

    r = fm.load_result(flying_beam)
    size = (480, 360)
    alone = scene.render(r, step=10, window_size=size, title="x")
    assert np.array_equal(scene.render_sequence(r, steps=[10], window_size=size, title="x"), alone), \
        "a sequence of one step must be the picture of that step"
    strobe = tmp_path / "strobe.png"
    assert main(["render", str(flying_beam), "--steps", "0:31:10", "--out", str(strobe), "--size", "480x360"]) == 0
    changed = np.any(np.abs(picture(strobe) - alone) > 30, axis=2).mean()
    assert changed > 0.01, f"four steps drawn together differ from one step in {100 * changed:.2f} % of the pixels"


def test_render_animation_gif(flying_beam, tmp_path):
    gif = tmp_path / "beam.gif"
    assert main(["render", str(flying_beam), "--out", str(gif), "--every", "3", "--size", "320x240"]) == 0
    with Image.open(gif) as im:
        assert im.n_frames == len(range(0, 31, 3)), f"{im.n_frames} frames for 31 steps drawn every 3rd"


def test_info_plot_and_export(flying_beam, tmp_path, capsys):
    assert main(["info", str(flying_beam)]) == 0
    text = capsys.readouterr().out
    assert "dynamic result, 31 step(s), status finished" in text and "'strip': 20 Beam3D" in text
    png = tmp_path / "history.png"
    assert main(["plot", str(flying_beam), "uz@20", "total", "--out", str(png)]) == 0
    assert png.stat().st_size > 10_000
    assert main(["export", str(flying_beam), "--vtu", str(tmp_path / "vtu"), "--xdmf", str(tmp_path / "r.xdmf"),
                 "--every", "10"]) == 0
    assert len(list((tmp_path / "vtu").glob("*.vtu"))) == 4
    assert (tmp_path / "vtu" / "flying_beam.pvd").exists() and (tmp_path / "r.xdmf").exists()
    assert (tmp_path / "r.xdmf.h5").exists()


# ------------------------------------------------------------------ export keeps its input
def test_export_next_to_its_input_leaves_it_intact(files, tmp_path, monkeypatch, capsys):
    """`flexmb export run.h5 --vtu d/ --xdmf run.xdmf` once wrote the XDMF heavy data into run.h5."""
    monkeypatch.chdir(tmp_path)
    Path("run.h5").write_bytes(files["pendulum"].read_bytes())
    before = Path("run.h5").read_bytes()
    assert main(["export", "run.h5", "--vtu", "d/", "--xdmf", "run.xdmf"]) == 0
    assert Path("run.h5").read_bytes() == before, "export changed its input file"
    assert main(["info", "run.h5"]) == 0
    assert "dynamic result, 11 step(s), status finished" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "run.h5", "run.xdmf", "run.xdmf.h5"]
    with meshio.xdmf.TimeSeriesReader("run.xdmf") as reader:
        points, _ = reader.read_points_cells()
        assert reader.num_steps == 11
        _, point_data, _ = reader.read_data(10)
    r = fm.load_result("run.h5")
    np.testing.assert_allclose(point_data["displacement"][1, :2], r.u[10][2:4], rtol=0, atol=1e-12)
    assert len(list(Path("d").glob("run_*.vtu"))) == 11 and Path("d/run.pvd").is_file()

    # a second export refuses to replace the first unless --force, and never touches run.h5
    assert main(["export", "run.h5", "--xdmf", "run.xdmf"]) == 2
    assert "run.xdmf exists; add --force to replace it" in one_line_error(capsys, "export")
    assert main(["export", "run.h5", "--vtu", "d", "--xdmf", "run.xdmf", "--force"]) == 0
    assert Path("run.h5").read_bytes() == before


def test_export_refuses_outputs_that_are_its_input(files, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    # a result file named like the heavy data of run.xdmf
    Path("run.xdmf.h5").write_bytes(files["pendulum"].read_bytes())
    before = Path("run.xdmf.h5").read_bytes()
    assert main(["export", "run.xdmf.h5", "--xdmf", "run.xdmf", "--force"]) == 2
    assert "--xdmf run.xdmf.h5 is the input result file" in one_line_error(capsys, "export")
    # a result file with the name of a VTU series' collection
    Path("out").mkdir()
    Path("out/s.pvd").write_bytes(before)
    assert main(["export", "out/s.pvd", "--vtu", "out", "--force"]) == 2
    assert "s.pvd is the input result file" in one_line_error(capsys, "export")
    assert Path("run.xdmf.h5").read_bytes() == before and Path("out/s.pvd").read_bytes() == before
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["out", "run.xdmf.h5", "s.pvd"]


def test_render_and_plot_refuse_their_input_and_existing_files(files, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("pic.png").write_bytes(files["pendulum"].read_bytes())      # a result file with a picture's name
    os.symlink("pic.png", "link.png")
    before = Path("pic.png").read_bytes()
    assert main(["render", "pic.png"]) == 2                           # default --out: RESULT with .png
    assert "--out pic.png is the input result file pic.png" in one_line_error(capsys, "render")
    assert main(["plot", "pic.png", "uy@1", "--out", "link.png", "--force"]) == 2
    assert "--out link.png is the input result file" in one_line_error(capsys, "plot")
    assert Path("pic.png").read_bytes() == before

    Path("h.png").write_bytes(b"mine")
    assert main(["plot", "pic.png", "uy@1", "--out", "h.png"]) == 2
    assert "--out h.png exists; add --force to replace it" in one_line_error(capsys, "plot")
    assert Path("h.png").read_bytes() == b"mine"
    assert main(["plot", "pic.png", "uy@1", "--out", "h.png", "--force"]) == 0
    assert Path("h.png").stat().st_size > 10_000
    Path("folder.png").mkdir()
    assert main(["plot", "pic.png", "uy@1", "--out", "folder.png", "--force"]) == 2
    assert "folder.png is a folder" in one_line_error(capsys, "plot")


# ------------------------------------------------------------------ one-line errors
BAD_INPUT = [
    # (command line with {name} for the input files, the message it must print)
    ("info {missing}", "result file {missing} does not exist"),
    ("info {text}", "is not a readable HDF5 result file"),
    ("info {foreign}", "is not a flexmb result file"),
    ("info {folder}", "is a folder, not a result file"),
    ("plot {empty} uy@1", "holds no steps (a static result, status finished): nothing to plot"),
    ("render {empty}", "holds no steps (a static result, status finished): nothing to render"),
    ("export {empty} --vtu {out}", "holds no steps (a static result, status finished): nothing to export"),
    ("render {pendulum} --size 0x100", "argument --size: '0x100': width and height must be 16 to 8192 pixels"),
    ("render {pendulum} --size 12000x800", "argument --size: '12000x800': width and height must be 16 to 8192"),
    ("render {pendulum} --size big", "argument --size: expected WIDTHxHEIGHT in pixels, e.g. 1200x800, got 'big'"),
    ("render {pendulum} --size=-5x10", "argument --size: expected WIDTHxHEIGHT in pixels, e.g. 1200x800, got '-5x10'"),
    ("render {pendulum} --step 11", "--step 11: the dynamic result has 11 steps (0..10, or -1..-11 from the end)"),
    ("render {pendulum} --step -12", "--step -12: the dynamic result has 11 steps"),
    ("render {modes} --step 3", "--step 3: the modes result has 3 modes"),
    ("render {pendulum} --steps 40:50", "--steps '40:50' selects none of the 11 steps (0..10)"),
    ("render {pendulum} --steps a:b", "--steps 'a:b': expected start:stop:step with a non-zero step"),
    ("render {pendulum} --steps ::0", "--steps '::0': expected start:stop:step with a non-zero step"),
    ("render {pendulum} --step 1 --steps 0:2", "argument --steps: not allowed with argument --step"),
    ("render {pendulum} --every 0", "argument --every: expected a positive integer, got '0'"),
    ("render {pendulum} --every 2.5", "argument --every: expected a positive integer, got '2.5'"),
    ("render {pendulum} --fps 0", "argument --fps: expected a positive finite number, got '0'"),
    ("render {pendulum} --fps nan", "argument --fps: expected a positive finite number, got 'nan'"),
    ("render {pendulum} --scale -1", "argument --scale: expected a positive finite number, got '-1'"),
    ("render {pendulum} --out {out}/x.bmp", "--out {out}/x.bmp: unknown suffix '.bmp'; use .png, .jpg, .jpeg"),
    ("render {pendulum} --out {out}/x.gif --step 3", "--step and --steps choose pictures"),
    ("render {pendulum} --color Q", "unknown colour quantity 'Q'"),
    ("plot {pendulum} energy", "QUANTITY 'energy': unknown quantity 'energy'; this result has: t, kinetic"),
    ("plot {pendulum} uy@99", "QUANTITY 'uy@99': node 99 does not exist (the model has nodes 0..1)"),
    ("plot {pendulum} uy@1 --x bogus", "--x 'bogus': unknown quantity 'bogus'"),
    ("plot {pendulum} uy@1 --out {out}/h.xyz", "--out {out}/h.xyz: unknown suffix '.xyz'; use one of"),
    ("export {pendulum}", "give --vtu DIR and/or --xdmf FILE"),
    ("export {pendulum} --xdmf {out}/r.h5", "--xdmf {out}/r.h5: an XDMF file needs the suffix .xdmf (or .xmf)"),
    ("export {pendulum} --vtu {text}", "--vtu {text}: is a file, not a folder"),
    ("export {pendulum} --vtu {out} --every 0", "argument --every: expected a positive integer, got '0'"),
    ("validate no-such-case --cases-dir {cases}", "unknown validation case(s) no-such-case; available:"),
    ("validate --cases-dir {out}", "cases folder {out}: no such folder"),
    ("validate --cases-dir {folder}", "cases folder {folder}: holds no validation case scripts"),
    ("info", "the following arguments are required: RESULT (see flexmb info --help)"),
    ("info {pendulum} --bogus", "unrecognized arguments: --bogus"),
]


@pytest.mark.parametrize("command_line, message", BAD_INPUT, ids=[c for c, _ in BAD_INPUT])
def test_bad_input_is_one_line_and_exit_2(command_line, message, files, tmp_path, capsys):
    names = {name: str(path) for name, path in files.items()}
    names.update(missing=str(tmp_path / "missing.h5"), folder=str(tmp_path), out=str(tmp_path / "out"),
                 cases=str(REPO / "validation"))
    argv = [word.format(**names) for word in command_line.split()]
    assert main(argv) == 2
    assert message.format(**names) in one_line_error(capsys, argv[0])
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir()), "an output was written"


def test_incomplete_files_and_unknown_commands_are_one_line(files, capsys):
    assert main(["info", str(files["incomplete"])]) == 2
    assert str(files["incomplete"]) in one_line_error(capsys, "info")
    assert main(["frobnicate"]) == 2
    line = capsys.readouterr().err.strip()
    assert line.startswith("flexmb: argument COMMAND: invalid choice: 'frobnicate'") and "\n" not in line
    assert main([]) == 2
    assert capsys.readouterr().err == "flexmb: the following arguments are required: COMMAND (see flexmb --help)\n"


def test_results_without_steps_are_described(files, capsys):
    assert main(["info", str(files["empty"])]) == 0
    out = capsys.readouterr().out
    assert "static result, 0 step(s), status finished" in out
    assert "no steps: the file holds no state to plot, render or export" in out


def test_a_crash_is_one_line_with_a_hint(files, monkeypatch, capsys):
    def crash(args):
        raise ZeroDivisionError("float division by zero\nin step 3")

    monkeypatch.setattr(cli, "_info", crash)
    assert main(["info", str(files["pendulum"])]) == 3
    assert one_line_error(capsys, "info") == (
        "flexmb info: unexpected ZeroDivisionError: float division by zero; in step 3 "
        "(rerun with --traceback, or set FLEXMB_TRACEBACK=1, for the traceback)")
    with pytest.raises(ZeroDivisionError):
        main(["--traceback", "info", str(files["pendulum"])])
    with pytest.raises(ZeroDivisionError):
        main(["info", str(files["pendulum"]), "--traceback"])
    monkeypatch.setenv("FLEXMB_TRACEBACK", "1")
    with pytest.raises(ZeroDivisionError):
        main(["info", str(files["pendulum"])])


def test_interrupt_is_one_line_and_exit_130(files, monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_render", interrupted)
    assert main(["render", str(files["pendulum"])]) == 130
    assert one_line_error(capsys, "render") == "flexmb render: interrupted"


def test_validation_harness_crash_is_one_line(monkeypatch, tmp_path, capsys):
    import flexmb.validation

    taken = tmp_path / "taken"
    taken.write_text("a file where the results folder should go")
    assert main(["validate", "roll-up-2d", "--cases-dir", str(REPO / "validation"), "--out", str(taken)]) == 2
    assert str(taken) in one_line_error(capsys, "validate")

    def broken(*args, **kwargs):
        raise RuntimeError("report writer broke")

    monkeypatch.setattr(flexmb.validation, "run_cases", broken)
    assert main(["validate", "--out", str(tmp_path / "v")]) == 3
    assert "unexpected RuntimeError: report writer broke (rerun with --traceback" in one_line_error(capsys, "validate")


# ------------------------------------------------------------------ a real process
def flexmb_process(*args: str, env: dict[str, str] | None = None, closed_stdout: bool = False,
                   code: str | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m flexmb.cli ARGS`` (or ``python -c CODE``); with ``closed_stdout`` its
    stdout is a pipe whose reading end is closed before the process starts."""
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "flexmb.cli", *args]
    environment = {k: v for k, v in os.environ.items() if k != "FLEXMB_TRACEBACK"}
    environment.update(env or {})
    if not closed_stdout:
        return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=120)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(command, stdout=write_end, stderr=subprocess.PIPE, text=True, env=environment,
                              timeout=120)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("command", ["validate", "info"])
def test_closed_pipe_exits_quietly(command, files):
    args = {"validate": ["validate", "--list", "--cases-dir", str(REPO / "validation")],
            "info": ["info", str(files["pendulum"])]}[command]
    done = flexmb_process(*args, closed_stdout=True)
    assert done.returncode == 141, done.stderr
    assert done.stderr == "", f"a closed pipe made noise:\n{done.stderr}"


def test_head_of_a_listing_is_quiet():
    done = subprocess.run(f"'{sys.executable}' -m flexmb.cli validate --list --cases-dir '{REPO / 'validation'}'"
                          " | head -1", shell=True, capture_output=True, text=True, timeout=120)
    assert len(done.stdout.splitlines()) == 1 and done.stderr == "", done.stderr


def test_process_errors_and_tracebacks(files, tmp_path):
    missing = str(tmp_path / "missing.h5")
    done = flexmb_process("info", missing)
    assert (done.returncode, done.stderr) == (2, f"flexmb info: result file {missing} does not exist\n")
    done = flexmb_process("--traceback", "info", missing)
    assert done.returncode == 1 and "Traceback (most recent call last)" in done.stderr
    assert done.stderr.rstrip().splitlines()[-1].endswith(f"CommandError: result file {missing} does not exist")
    crash = ("import sys, flexmb.cli as cli\n"
             "def crash(args): raise TypeError('bad operand')\n"
             "cli._info = crash\n"
             f"sys.exit(cli.main(['info', {str(files['pendulum'])!r}]))")
    done = flexmb_process(code=crash)
    assert done.returncode == 3 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("flexmb info: unexpected TypeError: bad operand (rerun with --traceback")
    done = flexmb_process(code=crash, env={"FLEXMB_TRACEBACK": "1"})
    assert done.returncode == 1 and done.stderr.rstrip().endswith("TypeError: bad operand")
    assert "Traceback (most recent call last)" in done.stderr
