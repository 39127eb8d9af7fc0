"""Pictures people read: the axes triad and the support and joint markers of the pyvista scenes,
the choice of colour map, the energy panel of history plots and the reference curves and legends
of validation figures (flexmb/viz/scene.py, flexmb/viz/plots.py)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import flexmb as fm
from flexmb.viz import scene
from flexmb.viz.plots import REFERENCE_STYLE, dynamics_overview, plot_history

SMALL = (500, 360)


def two_link_pendulum() -> tuple[fm.Model, fm.Joint]:
    """Two rigid links hinged to the ground and to each other, and a fixed truss bar beside them."""
    model = fm.Model(dim=2)
    a = model.add_rigid_body([0.5, 0.0], 1.0, 1.0 / 12, name="a")
    b = model.add_rigid_body([1.5, 0.0], 1.0, 1.0 / 12, name="b")
    model.add_joint("revolute", None, a, at=[0.0, 0.0], name="ground")
    elbow = model.add_joint("revolute", a, b, at=[1.0, 0.0], name="elbow")
    n0, n1 = model.add_node([0.0, -1.0]), model.add_node([2.0, -1.0])
    model.add_truss([[n0, n1]], EA=1e6, rho_A=1.0, name="bar")
    model.fix(n0)
    model.fix(n1)
    model.set_gravity([0.0, -9.81])
    model.add_sensor("position", b, offset=[-0.5, 0.0], name="elbow_point")
    return model, elbow


@pytest.fixture(scope="module")
def run_file(tmp_path_factory):
    return tmp_path_factory.mktemp("run") / "run.h5"


@pytest.fixture(scope="module")
def swinging(run_file) -> fm.TimeHistory:
    model, _ = two_link_pendulum()
    return fm.integrate(model, dt=0.02, t_end=0.4, save_to=run_file)


def test_markers_sit_on_supports_and_follow_the_joints(swinging):
    layout = swinging.layout
    assert scene.support_nodes(layout).tolist() == [2, 3]             # the truss bar's fixed ends
    u = np.asarray(swinging.u[-1])
    joints = layout.joint_positions(u)
    # the elbow moves with the links: the joint point is the point of link b at the elbow (a sensor)
    assert np.abs(joints[1] - swinging.sensor("elbow_point")[-1]).max() < 1e-12
    assert np.abs(joints[1] - [1.0, 0.0]).max() > 0.05, "the elbow should have moved"
    marks = scene.marker_meshes(layout, u)
    size = scene.MARKER_FRACTION * layout.characteristic_length
    # three cones (two fixed nodes, the hinge to the ground), their tips at the points (+y up)
    assert marks["supports"].n_cells > 0
    tips = np.array([[0.0, -1.0], [2.0, -1.0], [0.0, 0.0]])
    for tip in tips:
        near = np.linalg.norm(marks["supports"].points[:, :2] - tip, axis=1) < 1.01 * size
        assert near.any() and marks["supports"].points[near, 1].max() == pytest.approx(tip[1], abs=1e-9)
    centres = [marks["joints"].extract_points(np.flatnonzero(
        np.linalg.norm(marks["joints"].points[:, :2] - p, axis=1) < size), adjacent_cells=False).center for p in joints]
    assert np.abs(np.array(centres)[:, :2] - joints).max() < 1e-3 * size


def test_scene_holds_triad_markers_and_structure(swinging, run_file, tmp_path):
    plotter = scene._plotter(SMALL)
    try:
        scene.draw_scene(plotter, swinging, color="N")
        assert {"structure", "supports", "joints", "title"} <= set(plotter.renderer.actors)
        assert plotter.renderer.axes_actor is not None, "no axes triad"
    finally:
        plotter.close()
    # the same from the result file, whose layout carries the joints
    reread = fm.load_result(run_file)
    assert reread.layout.joint_kinds == ["revolute", "revolute"]
    assert np.array_equal(reread.layout.joint_sides, [[-1, 0], [0, 1]])
    out = tmp_path / "scene.png"
    scene.render(reread, out, window_size=SMALL)
    assert out.stat().st_size > 5_000


def test_diverging_colour_map_only_for_signed_data():
    signed = [np.array([-3.0, 1.0, 2.0])]
    assert scene._colour_scale(signed, "N") == ((-3.0, 3.0), scene.DIVERGING_MAP)
    # round-off of a one-signed quantity (1e-6 of the largest) keeps the sequential map
    assert scene._colour_scale([np.array([-1e-6, 1.0, 2.0])], "N") == ((-1e-6, 2.0), scene.SEQUENTIAL_MAP)
    assert scene._colour_scale([np.array([-3.0, 1.0])], "displacement")[1] == scene.SEQUENTIAL_MAP
    # by choice
    assert scene._colour_scale([np.array([0.5, 2.0])], "N", "diverging") == ((-2.0, 2.0), scene.DIVERGING_MAP)
    assert scene._colour_scale(signed, "N", "sequential") == ((-3.0, 2.0), scene.SEQUENTIAL_MAP)
    assert scene._colour_scale(signed, "N", "magma") == ((-3.0, 2.0), "magma")
    with pytest.raises(ValueError, match="unknown colour map 'nope'"):
        scene._colour_scale(signed, "N", "nope")


def test_energy_panel_shows_the_balance_on_a_second_axis(swinging, tmp_path):
    potential = swinging.series("potential")
    assert np.allclose(potential, np.array(swinging.strain) - np.array(swinging.work), rtol=0, atol=0)
    fig = plot_history(swinging, ["elbow_point", "kinetic", "potential", "total"])
    energy_axes = [ax for ax in fig.axes if any(line.get_label() == "kinetic" for line in ax.get_lines())]
    twins = [ax for ax in fig.axes if ax.get_ylabel() == "total - total(0) (J)"]
    assert len(energy_axes) == 1 and len(twins) == 1
    change = twins[0].get_lines()[0].get_ydata()
    total = swinging.series("total")
    assert np.array_equal(change, total - total[0])
    fig.canvas.draw()
    for ax in (fig.axes[0], energy_axes[0]):                 # legends below the axes, off the data
        legend = ax.get_legend()
        assert legend is not None
        assert legend.get_window_extent().y1 <= ax.get_window_extent().y0
    labels = [t.get_text() for t in energy_axes[0].get_legend().get_texts()]
    assert labels == ["kinetic", "potential", "total", "total - total(0)"]
    out = tmp_path / "history.png"
    fig.savefig(out, dpi=80)
    assert out.stat().st_size > 10_000


def test_validation_figure_keeps_the_reference_on_top(swinging):
    t = np.array(swinging.t)
    fig = dynamics_overview("check", {"mid-point": swinging}, lambda h: np.array(h.u)[:, 0], "ux (m)",
                            lambda h: np.ones(len(h.t)), "one", exact=(t, np.zeros_like(t)))
    ax = fig.axes[0]
    reference = next(line for line in ax.get_lines() if line.get_label() == "exact")
    computed = [line for line in ax.get_lines() if line is not reference]
    assert reference.get_zorder() == REFERENCE_STYLE["zorder"] > max(line.get_zorder() for line in computed)
    assert reference.get_linestyle() == "--" and all(line.get_alpha() < 1 for line in computed)
    fig.canvas.draw()
    for axis in fig.axes:
        assert axis.get_legend().get_window_extent().y1 <= axis.get_window_extent().y0


def test_command_line_chooses_the_colour_map(run_file, swinging, tmp_path):
    import subprocess
    import sys

    out = tmp_path / "seq.png"
    command = [sys.executable, "-m", "flexmb.cli", "render", str(run_file), "--color", "N", "--size", "400x300"]
    done = subprocess.run(command + ["--cmap", "sequential", "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 3_000
    bad = subprocess.run(command + ["--cmap", "nope", "--out", str(tmp_path / "bad.png")], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown colour map 'nope'" in bad.stderr
