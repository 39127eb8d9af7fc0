"""The result commands of the ``flexmb`` CLI: info, plot, render (PNG and GIF), export."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import flexmb as fm
from flexmb.cli import main

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


def picture(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=float)


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
    assert main(["render", str(flying_beam), "--steps", "40:50"]) == 2


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


def test_commands_report_bad_input(flying_beam, tmp_path, capsys):
    assert main(["render", str(tmp_path / "missing.h5")]) == 2
    assert "missing.h5" in capsys.readouterr().err
    assert main(["plot", str(flying_beam), "energy"]) == 2
    assert "unknown quantity 'energy'" in capsys.readouterr().err
    assert main(["render", str(flying_beam), "--out", str(tmp_path / "x.jpg")]) == 2
    assert "use a .png" in capsys.readouterr().err
    assert main(["export", str(flying_beam)]) == 2
    assert "--vtu" in capsys.readouterr().err
