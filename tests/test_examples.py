"""The scripts in examples/ run in quick mode, write their files and get their physics right."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
from PIL import Image

REPO = Path(__file__).resolve().parents[1]


def load_example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", REPO / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_animation(path: Path, min_frames: int = 3) -> None:
    with Image.open(path) as gif:
        assert gif.n_frames >= min_frames, f"{path.name} has {gif.n_frames} frame(s)"
        gif.seek(0)
        first = np.asarray(gif.convert("RGB"), dtype=float)
        gif.seek(gif.n_frames - 1)
        last = np.asarray(gif.convert("RGB"), dtype=float)
    assert np.abs(first - last).mean() > 0.5, f"{path.name}: first and last frames are the same picture"


def test_pendulum_chain(tmp_path):
    out = load_example("pendulum_chain").main(quick=True, out_dir=tmp_path)
    # mid-point scheme at 2.5 x the bars' axial period: energy constant to the Newton tolerance
    assert out["energy_error"] < 1e-8, f"energy error {out['energy_error']:.2e}"
    assert out["lowest_tip_height"] < -0.5, "the chain did not fall"
    assert (tmp_path / "pendulum_chain_history.png").stat().st_size > 10_000
    assert_animation(tmp_path / "pendulum_chain.gif")
    import flexmb as fm
    assert fm.load_result(tmp_path / "pendulum_chain.h5").meta["status"] == "finished"


def test_flying_beam_3d(tmp_path):
    out = load_example("flying_beam_3d").main(quick=True, out_dir=tmp_path)
    assert out["energy_error"] < 1e-8 and out["momentum_error"] < 1e-8, out
    assert (tmp_path / "flying_beam.png").stat().st_size > 10_000
    assert_animation(tmp_path / "flying_beam.gif")


def test_frame_buckling(tmp_path):
    example = load_example("frame_buckling")
    out = example.main(quick=True, out_dir=tmp_path)
    assert out["lower_bound"] < out["critical"] < out["upper_bound"], out
    assert (tmp_path / "frame_modes.png").stat().st_size > 10_000
    # the mesh route gives the same critical load as the same frame built node by node
    import flexmb as fm
    model, _ = example.build()
    direct = fm.Model(dim=3)
    direct.add_nodes(model.coordinates)
    for g in model.groups:
        direct.add_beam3d(g.connectivity, g.EA, g.GJ, g.EI_y, g.EI_z, y_axis=g.y_axis, name=g.name)
    base = np.flatnonzero(np.isclose(model.coordinates[:, 2], 0.0))
    x, y, z = model.coordinates.T
    corner = (np.isclose(x, 0.0) | np.isclose(x, 4.0)) & (np.isclose(y, 0.0) | np.isclose(y, 3.0))
    roof = np.flatnonzero(corner & np.isclose(z, example.H))
    assert base.size == 4 and roof.size == 4
    for node in base:
        direct.fix(int(node))
    for node in roof:
        direct.add_load(int(node), "uz", -example.P)
    assert np.isclose(fm.linear_buckling(direct, n_modes=1).critical, out["critical"], rtol=1e-10)


def test_modal_arm(tmp_path):
    out = load_example("modal_arm").main(quick=True, out_dir=tmp_path)
    # driven joints: K + V - W_drives constant to the Newton tolerance (mid-point scheme, modal body)
    assert out["energy_error"] < 1e-8, f"energy balance error {out['energy_error']:.2e}"
    assert 1e-3 < out["ringing_amplitude"] < 0.2, out["ringing_amplitude"]
    speeds, w0 = out["speeds"], out["omega_0"]
    # stiffened: Southwell at the first speed (Omega = omega_0 / 2, low speed: within 0.5 %), rising
    assert abs(out["stiffened"][1] ** 2 / (w0**2 + 0.1933 * speeds[1] ** 2) - 1.0) < 5e-3, out["stiffened"]
    assert np.all(np.diff(out["stiffened"]) > 0.0), out["stiffened"]
    # not stiffened: diverges beyond omega_0 at the rate sqrt(Omega^2 - omega_0^2) (its modes do not couple in-plane)
    beyond = speeds > 1.01 * w0
    assert np.allclose(out["not_stiffened_growth"][beyond], np.sqrt(speeds[beyond] ** 2 - w0**2), rtol=1e-6)
    assert (tmp_path / "modal_arm.png").stat().st_size > 10_000
    assert_animation(tmp_path / "modal_arm.gif")
    import meshio
    assert meshio.read(tmp_path / "modal_arm_forearm.vtu").points.shape == (21, 3)


def test_slider_crank_spring_damper(tmp_path):
    out = load_example("slider_crank_spring_damper").main(quick=True, out_dir=tmp_path)
    # mid-point scheme: K + V + dissipated constant to the Newton tolerance (measured 3e-13)
    assert out["energy_error"] < 1e-8, f"energy balance off by {out['energy_error']:.2e}"
    # the damper takes most of the energy within 0.3 s (measured 87 %)
    assert out["dissipated"] > 0.5 * out["kinetic0"], out
    assert (tmp_path / "slider_crank_spring_damper.png").stat().st_size > 10_000


def test_four_bar_flexible(tmp_path):
    out = load_example("four_bar_flexible").main(quick=True, out_dir=tmp_path)
    # the rigid start: the coupler's axial force stays near the rigid coupler's (measured 1.15 times;
    # from the least-kinetic-energy start it chattered at 4.7 kN, 700 times)
    assert out["max_axial_flexible"] < 2.0 * out["max_axial_rigid"], out
    assert out["max_axial_rigid"] > 1.0                                   # N: the mechanism is loaded
    assert out["energy_error"] < 1e-8, out
    assert (tmp_path / "four_bar_flexible.png").stat().st_size > 10_000
