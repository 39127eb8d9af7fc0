"""Tests of the pyvista pictures (:mod:`flexmb.viz.scene`) and their geometry (:mod:`flexmb.viz.geometry`).

Pictures are checked by their pixels against the background colour (taken at a corner): the
drawing must cover a substantial area, move with the structure and show the colour quantity.
The geometry is checked exactly: the bounds of a straight box beam, a rigidly rotated state
(the drawn points rotate with it) and a circular arc (the Hermite centreline follows the arc
far closer than the chords between the nodes).
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import flexmb as fm
from flexmb.results import ModelLayout
from flexmb.rotations import exp_map, log_map
from flexmb.viz import scene
from flexmb.viz.geometry import centrelines, point_mass_radii
from models import spinning_bar, truss_bays

SMALL = (600, 400)             # window size (width, height) of the test pictures, pixels


@pytest.fixture(scope="module")
def spinning_beam() -> fm.TimeHistory:
    """A free 3D bar of 4 Beam3D elements spinning about two axes, 21 steps over 0.1 s."""
    asm, v0 = spinning_bar()
    return fm.integrate(asm, 0.005, 0.1, v0=v0)


def _drawn(image: np.ndarray) -> np.ndarray:
    """(H, W) mask of the pixels that differ from the background (the corner pixel)."""
    return np.abs(image.astype(int) - image[0, 0].astype(int)).max(-1) > 30


def _layout(model: fm.Model) -> ModelLayout:
    return ModelLayout.from_assembly(fm.Assembly(model))


# ----------------------------------------------------------------------- pictures
def test_render_shows_the_beam_and_its_motion(spinning_beam, tmp_path):
    first = scene.render(spinning_beam, tmp_path / "first.png", step=0, window_size=SMALL)
    last = scene.render(spinning_beam, tmp_path / "last.png", step=-1, window_size=SMALL)
    assert first.shape == last.shape == (SMALL[1], SMALL[0], 3) and first.dtype == np.uint8
    for image in (first, last):
        assert _drawn(image).sum() > 1500, "the beam covers too few pixels"
    assert np.array_equal(np.array(Image.open(tmp_path / "last.png").convert("RGB")), last)
    moved = np.abs(first.astype(int) - last.astype(int)).max(-1) > 30
    assert moved.sum() > 2000, "the pictures of the first and the last step hardly differ"


def test_colour_by_normal_force_uses_several_colours(spinning_beam):
    """At the last step the spinning bar pulls hardest in the middle elements: viridis draws
    them yellow and the end elements purple; the uniform colour is unsaturated."""
    def hue_bins(image: np.ndarray) -> np.ndarray:
        # the structure region: below the title, right of the axes triad, left of the colour bar
        region = image[int(0.12 * SMALL[1]):, int(scene.TRIAD_VIEWPORT[2] * SMALL[0]):int(0.8 * SMALL[0])]
        hsv = np.array(Image.fromarray(region).convert("HSV"))
        coloured = _drawn(region) & (hsv[..., 1] > 60)
        return np.bincount(hsv[..., 0][coloured] // 21, minlength=13)     # 12 bins of 30 degrees

    by_n = hue_bins(scene.render(spinning_beam, color="N", window_size=SMALL))
    assert (by_n > 0.05 * by_n.sum()).sum() >= 2, f"one hue only: {by_n}"
    assert hue_bins(scene.render(spinning_beam, window_size=SMALL)).sum() < 50


def test_animate_gif_has_one_frame_per_drawn_step(spinning_beam, tmp_path):
    out = scene.animate(spinning_beam, tmp_path / "spin.gif", every=5, color="velocity", window_size=(320, 240))
    steps = scene.frame_steps(spinning_beam.n_steps, every=5)
    assert list(steps) == [0, 5, 10, 15, 20]
    with Image.open(out) as gif:
        assert gif.n_frames == len(steps)
        frames = []
        for k in (0, gif.n_frames - 1):
            gif.seek(k)
            frames.append(np.array(gif.convert("RGB")).astype(int))
    assert (np.abs(frames[0] - frames[1]).max(-1) > 30).sum() > 500
    thinned = scene.animate(spinning_beam, tmp_path / "thin.gif", max_frames=3, window_size=(160, 120))
    with Image.open(thinned) as gif:
        assert gif.n_frames == 3


def _column() -> fm.Model:
    """Clamped Beam3D column of 4 elements along z under a unit compressive end load."""
    model = fm.Model(dim=3)
    nodes = model.add_nodes(np.c_[np.zeros(5), np.zeros(5), np.linspace(0.0, 2.0, 5)])
    model.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, GJ=50.0, EI_y=10.0, EI_z=25.0,
                     y_axis=(0.0, 1.0, 0.0))
    model.fix(nodes[0])
    model.add_load(nodes[-1], "uz", -1.0)
    return model


def test_render_modes_draws_every_mode(tmp_path):
    modes = fm.linear_buckling(_column()).mode_shapes()
    image = scene.render_modes(modes, tmp_path / "modes.png", n=4, window_size=(700, 450))
    assert image.shape == (450, 700, 3)
    assert np.array_equal(np.array(Image.open(tmp_path / "modes.png").convert("RGB")), image)
    drawn = _drawn(image)
    for quadrant in (drawn[:225, :350], drawn[:225, 350:], drawn[225:, :350], drawn[225:, 350:]):
        assert quadrant.sum() > 300, "a mode subplot is empty"
    single = scene.render(modes, step=1, color="displacement", show_reference=True, window_size=SMALL)
    assert _drawn(single).sum() > 1500


def test_2d_truss_with_point_masses(tmp_path):
    model, bottom, top = truss_bays(4, rho_A=1.0)
    model.add_point_mass(top[-1], 8.0)
    model.add_point_mass(bottom[-1], 1.0)
    model.fix(bottom[0])
    model.fix(top[0])
    model.set_gravity([0.0, -9.81])
    history = fm.integrate(fm.Assembly(model), 0.01, 0.05)
    layout = history.layout
    radii = point_mass_radii(layout)
    assert np.allclose(radii, 0.03 * 4.0 * np.cbrt([1.0, 1.0 / 8.0]))   # size 4 m, heaviest first
    mesh = scene.structure_mesh(layout, history.u[-1], values=np.arange(layout.n_nodes, dtype=float))
    tip = layout.positions(history.u[-1])[top[-1]]
    assert mesh.bounds[1] == pytest.approx(tip[0] + radii[0], abs=1e-9)     # the sphere sticks out
    assert mesh.point_data["values"].min() == 0.0 and mesh.point_data["values"].max() == layout.n_nodes - 1
    image = scene.render(history, tmp_path / "truss.png", color="N", show_reference=True, window_size=SMALL)
    assert _drawn(image).sum() > 5000


# ----------------------------------------------------------------------- geometry
def test_straight_box_beam_bounds_are_element_extent_and_section():
    model = fm.Model(dim=3)
    nodes = model.add_nodes(np.c_[np.linspace(0.5, 2.5, 4), np.full(4, 1.0), np.full(4, -2.0)])
    model.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, GJ=1.0, EI_y=1.0, EI_z=2.0).set_section_shape(
        "box", width=0.1, height=0.04)
    layout = _layout(model)
    mesh = scene.structure_mesh(layout, np.zeros(layout.n_dof))
    assert np.allclose(mesh.bounds, [0.5, 2.5, 0.95, 1.05, -2.02, -1.98], rtol=0, atol=1e-9)
    assert mesh.n_cells == 3 * (7 * 4 + 2)            # 7 segments of 4 sides and 2 caps per element


def _rigidly_moved(layout: ModelLayout, R: np.ndarray) -> np.ndarray:
    """DOF vector (n_dof,) that rotates every node by R (3, 3) about the origin."""
    u = np.zeros(layout.n_dof)
    X = layout.coordinates
    u[layout.translations()] = X @ R[:layout.dim, :layout.dim].T - X
    rot = layout.rotations()
    u[rot] = log_map(R) if layout.dim == 3 else np.arctan2(R[1, 0], R[0, 0])
    return u


def test_rigid_rotation_rotates_the_drawing_3d():
    model = fm.Model(dim=3)
    nodes = model.add_nodes([[0.0, 0.0, 0.0], [1.0, 0.2, 0.1], [1.5, 1.0, 0.4], [1.2, 1.8, 1.0]])
    model.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, GJ=1.0, EI_y=1.0, EI_z=2.0)
    model.add_beam3d([[nodes[0], nodes[3]]], EA=1e6, GJ=1.0, EI_y=1.0, EI_z=2.0).set_section_shape("tube", radius=0.05)
    layout = _layout(model)
    R = exp_map(np.array([0.7, -1.1, 0.4]))
    reference = scene.structure_mesh(layout, np.zeros(layout.n_dof)).points
    rotated = scene.structure_mesh(layout, _rigidly_moved(layout, R)).points
    assert np.allclose(rotated, reference @ R.T, rtol=0, atol=1e-12)


def test_rigid_rotation_rotates_the_drawing_2d():
    model, _, _ = truss_bays(2)
    beam_nodes = model.add_nodes([[0.0, 2.0], [1.0, 2.5], [2.0, 2.0]])
    model.add_beam2d([[beam_nodes[0], beam_nodes[1]], [beam_nodes[1], beam_nodes[2]]], EA=1e6, EI=10.0)
    layout = _layout(model)
    c, s = np.cos(2.5), np.sin(2.5)
    R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    reference = scene.structure_mesh(layout, np.zeros(layout.n_dof)).points
    rotated = scene.structure_mesh(layout, _rigidly_moved(layout, R)).points
    assert np.allclose(rotated, reference @ R.T, rtol=0, atol=1e-12)


@pytest.mark.parametrize("dim", [2, 3])
def test_curved_beam_follows_the_arc(dim):
    """A cantilever of 4 elements bent into a half circle (nodes on the arc, nodal rotations the
    arc's tangent angle): the Hermite centreline stays within 1e-3 of the radius from the exact
    arc, while the chords between the nodes miss it by the sagitta, 7.6 % of the radius."""
    n_el, length = 4, 1.0
    rho = length / np.pi
    s = np.linspace(0.0, length, n_el + 1)
    # the plane of bending: xy in 2D, a tilted plane in 3D
    Q = np.eye(3) if dim == 2 else exp_map(np.array([0.3, 0.5, -0.2]))
    model = fm.Model(dim=dim)
    nodes = model.add_nodes((np.c_[s, np.zeros_like(s), np.zeros_like(s)] @ Q.T)[:, :dim])
    conn = np.c_[nodes[:-1], nodes[1:]]
    group = (model.add_beam2d(conn, EA=1e6, EI=1.0) if dim == 2 else
             model.add_beam3d(conn, EA=1e6, GJ=1.0, EI_y=1.0, EI_z=1.0, y_axis=Q[:, 1]))
    radius = 0.005
    group.set_section_shape("tube", radius=radius)
    layout = _layout(model)
    angle = s / rho
    arc = np.c_[rho * np.sin(angle), rho * (1.0 - np.cos(angle)), np.zeros_like(s)] @ Q.T
    centre = np.array([0.0, rho, 0.0]) @ Q.T
    u = np.zeros(layout.n_dof)
    u[layout.translations()] = arc[:, :dim] - layout.coordinates
    if dim == 2:
        u[layout.rotations()[:, 0]] = angle
    else:
        u[layout.rotations()] = log_map(Q @ exp_map(angle[:, None] * [0.0, 0.0, 1.0]) @ Q.T)

    def radial_error(points: np.ndarray) -> np.ndarray:
        """Distance from the circle of the arc, in its plane (m)."""
        local = (points - centre) @ Q                          # in the bending plane's axes
        return np.abs(np.linalg.norm(local[:, :2], axis=1) - rho)

    curve = centrelines(layout, u, n_sub=17)[0].reshape(-1, 3)
    t = np.linspace(0.0, 1.0, 17)[:, None]
    chords = (arc[:-1, None] + t * (arc[1:, None] - arc[:-1, None])).reshape(-1, 3)
    sagitta = rho * (1.0 - np.cos(np.pi / (2 * n_el)))
    assert radial_error(chords).max() == pytest.approx(sagitta, rel=1e-9)
    assert radial_error(curve).max() < 1e-3 * rho
    mesh_points = np.asarray(scene.structure_mesh(layout, u).points)
    assert radial_error(mesh_points).max() < radius + 1e-3 * rho     # the swept tube follows it too


# ------------------------------------------------------------------------- errors
def test_clear_errors(spinning_beam, tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="unknown colour quantity 'stress'.*N, T, My1.*displacement, velocity"):
        scene.render(spinning_beam, color="stress")
    with pytest.raises(IndexError, match="step 21 is out of range.*21 steps"):
        scene.render(spinning_beam, step=21)
    with pytest.raises(fm.ModelError, match="no model layout"):
        scene.render(fm.TimeHistory("mid-point", 0.1))
    with pytest.raises(ValueError, match="unknown output suffix '.bmp'"):
        scene.render(spinning_beam, tmp_path / "picture.bmp")
    with pytest.raises(ValueError, match="unknown output suffix '.avi'"):
        scene.animate(spinning_beam, tmp_path / "movie.avi")
    modes = fm.linear_buckling(_column()).mode_shapes()
    with pytest.raises(ValueError, match="unknown colour quantity 'N'.*displacement"):
        scene.render(modes, color="N")             # modes carry no section forces
    monkeypatch.setattr(scene.importlib.util, "find_spec", lambda name, *args: None)
    with pytest.raises(ImportError, match="pip install imageio imageio-ffmpeg"):
        scene.animate(spinning_beam, tmp_path / "movie.mp4")


def test_saved_result_renders_like_the_original(spinning_beam, tmp_path):
    loaded = fm.load_result(spinning_beam.save(tmp_path / "spin.h5"))
    a = scene.render(spinning_beam, color="N", window_size=SMALL)
    b = scene.render(loaded, color="N", window_size=SMALL)
    assert np.abs(a.astype(int) - b.astype(int)).mean() < 0.5


def test_import_flexmb_does_not_import_pyvista():
    code = ("import sys, flexmb, flexmb.viz.scene, flexmb.viz.geometry; "
            "print('pyvista' in sys.modules, 'vtk' in sys.modules, 'vtkmodules' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "False"]
