"""Rigid bodies in pictures and exports (:mod:`flexmb.multibody.body_shapes`): the default link
through a body's joint points and a user's shape move with the body's node (x = x_c + R P, checked
against rotations about known axes in 2D and 3D, in the drawn surface and the VTU cells), the
four-bar example draws and exports crank and rocker; point-mass glyphs scale and hide; ``show``
falls back to a file off-screen; Campbell plots in one unit with nP lines; trajectories with equal
axes; ``flexmb info`` lists bodies, joints, force elements and damping.
"""
from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import meshio
import numpy as np
import pytest

import flexmb as fm
from flexmb.cli import main
from flexmb.io.export import step_mesh_data, write_vtu_series
from flexmb.multibody.body_shapes import MIN_WIDTH, link_shape
from flexmb.results import ModelLayout
from flexmb.rotations import exp_map
from flexmb.viz import scene
from flexmb.viz.geometry import point_mass_radii, structure_surface

REPO = Path(__file__).resolve().parents[1]
OMEGA = 5.0                   # rad/s, drive speed of the pendulums
TETRA = (np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.1, 0.0], [0.0, 0.0, 0.1]]) - 0.025,
         [[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]])     # a tetrahedron about its centroid, m


def _rot_z(theta: float) -> np.ndarray:
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _driven_pendulum(dim: int, shape=None, axis=None, pivot: float = 0.0) -> tuple[fm.Assembly, fm.TimeHistory]:
    """A rigid bar (1 kg, 1 m, centre 0.5 m from the pivot at (pivot, -pivot, ...)) turned by a
    revolute joint driven at OMEGA rad/s for 0.2 s (1 rad), no gravity."""
    m = fm.Model(dim=dim)
    at = pivot * np.array([1.0, -1.0, 1.0][:dim])
    centre = at + ([0.5, 0.0] if dim == 2 else [0.5, 0.2, -0.1])
    J = 1.0 / 12.0 if dim == 2 else np.diag([0.02, 1.0 / 12.0, 1.0 / 12.0])
    body = m.add_rigid_body(centre, 1.0, J, name="bar", shape=shape)
    m.add_joint("revolute", None, body, at=at, axis=axis, drive=lambda t: OMEGA * t, name="pivot")
    asm = fm.Assembly(m)
    u0, v0 = fm.consistent_initial_state(asm)
    return asm, fm.integrate(asm, 0.02, 0.2, u0=u0, v0=v0, progress=False)


def _body_vertices(result: fm.TimeHistory, step: int, body: int | None = None) -> np.ndarray:
    """The exported points of the cells of body number ``body`` (None: of all bodies), sorted by
    point index, at a step, m."""
    points, cells, _, cell_data = step_mesh_data(result, step)
    ends = np.cumsum([len(block) for _, block in cells])
    mine = cell_data["body"] >= 0 if body is None else cell_data["body"] == body
    chosen = [block[m].ravel() for (_, block), m in zip(cells, np.split(mine, ends[:-1]))]
    return points[np.unique(np.concatenate(chosen))]


@pytest.mark.parametrize("dim, pivot", [(2, 0.0), (3, 0.0), (2, 1e4), (3, 1e4)])
def test_body_cells_turn_with_the_body(dim, pivot, tmp_path):
    """After the drive turned the pendulum by theta, every exported body vertex is R(theta) times its
    reference position about the pivot (2D about z, 3D about a skew axis), also 1e4 m from the origin."""
    axis = None if dim == 2 else np.array([1.0, 2.0, 2.0]) / 3.0
    asm, h = _driven_pendulum(dim, axis=axis, pivot=pivot)
    theta = OMEGA * h.t[-1]
    R = _rot_z(theta) if dim == 2 else exp_map(theta * axis)
    at = pivot * np.array([1.0, -1.0, 1.0 if dim == 3 else 0.0])
    reference, now = _body_vertices(h, 0), _body_vertices(h, -1)
    assert len(reference) == 8, "the default link of a body held at one point is one bar (8 corners)"
    miss = np.abs(now - at - (reference - at) @ R.T).max()
    allowed = 100 * np.finfo(float).eps * (1.0 + pivot)              # round-off of coordinates of size 1 + pivot m
    assert miss < allowed, \
        f"body vertices after {theta:.3f} rad missed the rotation by {miss:.2e} m (allowed {allowed:.1e})"
    # the same in the written file, with the body's index as cell data
    write_vtu_series(h, tmp_path, every=10)
    mesh = meshio.read(tmp_path / "result_00010.vtu")
    body = np.concatenate(mesh.cell_data["body"])
    assert set(body.tolist()) == {0}, "the only cells of a body-only model are those of body 0"
    assert np.abs(np.unique(mesh.points[np.concatenate([b.data for b in mesh.cells]).ravel()], axis=0)
                  - np.unique(now, axis=0)).max() < 1e-12


def test_body_point_velocity_and_displacement():
    """Exported point data on the shape of a pendulum driven at OMEGA about its fixed pivot: velocity
    v_c + omega x (x - x_c) from the node's, and OMEGA e_z x (x - pivot) up to the scheme's chord
    velocity error O((OMEGA dt)^2); displacement x - X, rotation the body's angle."""
    _, h = _driven_pendulum(2)
    points, _, point_data, _ = step_mesh_data(h, -1)
    reference = step_mesh_data(h, 0)[0]
    body = slice(h.layout.n_nodes, None)
    v = np.asarray(h.v[-1])                                            # (ux', uy', rz') of the body's node
    x_c = np.r_[h.layout.positions(np.asarray(h.u[-1]))[0], 0.0]
    rigid = np.r_[v[:2], 0.0] + v[2] * np.c_[-(points[body, 1] - x_c[1]), points[body, 0] - x_c[0], 0 * points[body, 2]]
    assert np.abs(point_data["velocity"][body] - rigid).max() < 1e-12 * OMEGA
    expected = OMEGA * np.c_[-points[body, 1], points[body, 0], np.zeros(len(points) - h.layout.n_nodes)]
    miss = np.abs(point_data["velocity"][body] - expected).max()
    allowed = (OMEGA * 0.02) ** 2 * OMEGA * 1.1                        # (omega dt)^2 omega r, r <= 1.1 m
    assert miss < allowed, f"body point velocities miss omega x r by {miss:.2e} m/s (allowed {allowed:.1e})"
    assert np.allclose(point_data["displacement"][body], points[body] - reference[body], atol=1e-15)
    assert np.allclose(point_data["rotation"][body, 2], OMEGA * h.t[-1], atol=1e-9)


def test_default_link_spans_the_joints_and_its_width_follows_the_inertia():
    """A bar held at pivot and pin 0.4 m apart, centre between: one bar from 1/2 w before the pivot
    to 1/2 w past the pin; w = sqrt(12 J / m - L^2) for a plate-like J, MIN_WIDTH L for a slender one."""
    arms = np.array([[-0.2, 0.0, 0.0], [0.2, 0.0, 0.0]])
    L, m = 0.4, 2.0
    for w_expected, J in [(0.1, m * (L**2 + 0.1**2) / 12.0), (MIN_WIDTH * L, m * L**2 / 12.0)]:
        shape = link_shape(2, arms, m, np.diag([0.0, 0.0, J]), 0.05)
        extent = np.ptp(shape.points, axis=0)
        assert np.allclose(extent[:2], [L + w_expected, w_expected], atol=1e-12), \
            f"link extent {extent[:2]} for J = {J:.4g}, expected {[L + w_expected, w_expected]}"
    cube = link_shape(3, np.zeros((0, 3)), m, np.eye(3) * m * 0.3**2 / 6.0, 0.05)   # held nowhere: J = m a^2 / 6
    assert np.allclose(np.ptp(cube.points, axis=0), 0.3)


def test_user_shape_moves_with_its_node(tmp_path):
    """A tetrahedron given as (points, faces) and the same read from an OBJ file: drawn and exported
    at x_c + R P after the 3D pendulum turned."""
    path = tmp_path / "tetra.obj"
    meshio.write_points_cells(path, TETRA[0], [("triangle", np.array(TETRA[1]))])
    axis = np.array([0.0, 0.6, 0.8])
    for shape in (TETRA, str(path)):
        asm, h = _driven_pendulum(3, shape=shape, axis=axis)
        layout = h.layout
        (body,) = layout.bodies
        assert body.given and len(body.shape.points) == 4
        u = np.asarray(h.u[-1])
        R = exp_map(OMEGA * h.t[-1] * axis)
        centre = layout.positions(u)[body.node]
        expected = centre + TETRA[0] @ R.T
        # (a file may list the points in its own order)
        assert _distance(structure_surface(layout, u).points, expected) < 1e-12
        assert _distance(_body_vertices(h, -1), expected) < 1e-12
        assert np.allclose(centre, R @ np.array([0.5, 0.2, -0.1]), atol=1e-9), "the body did not turn about the pivot"


def _distance(a: np.ndarray, b: np.ndarray) -> float:
    """Largest distance from a point of a (n, 3) to the nearest of b (n, 3), and back, m."""
    d = np.linalg.norm(a[:, None] - b[None], axis=-1)
    return float(max(d.min(0).max(), d.min(1).max()))


def test_shape_errors_name_the_body():
    m = fm.Model(dim=3)
    with pytest.raises(fm.ModelError, match="rigid body 'lid'.*face 1 refers to point 7"):
        m.add_rigid_body([0, 0, 0], 1.0, np.eye(3), name="lid", shape=(TETRA[0], [[0, 1, 2], [0, 1, 7]]))
    with pytest.raises(fm.ModelError, match="rigid body 'lid'.*does not exist"):
        m.add_rigid_body([0, 0, 0], 1.0, np.eye(3), name="lid", shape="no-such-file.stl")


def test_body_shape_survives_the_result_file(tmp_path):
    asm, h = _driven_pendulum(3, shape=TETRA, axis=np.array([0.0, 0.0, 1.0]))
    h.save(tmp_path / "r.h5")
    back = fm.load_result(tmp_path / "r.h5").layout.bodies[0]
    assert back.name == "bar" and back.given and np.array_equal(back.shape.points, h.layout.bodies[0].shape.points)
    assert np.array_equal(back.shape.triangles(), h.layout.bodies[0].shape.triangles())


def test_point_mass_glyphs_scale_and_hide():
    m = fm.Model(dim=2)
    m.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    m.add_truss([[0, 1]], EA=1e6)
    m.add_point_mass(1, 2.0)
    layout = ModelLayout.from_assembly(fm.Assembly(m))
    u = np.zeros(layout.n_dof)
    assert np.all(structure_surface(layout, u, point_mass_scale=0.0).cell_group >= 0), "scale 0 must hide point masses"
    surface = structure_surface(layout, u, point_mass_scale=2.0)
    sphere = surface.points[len(structure_surface(layout, u, point_mass_scale=0.0).points):]
    radius = np.linalg.norm(sphere - [1.0, 0.0, 0.0], axis=1)
    assert np.allclose(radius, 2.0 * point_mass_radii(layout)[0], rtol=1e-12), "sphere radius not scaled by 2"
    with pytest.raises(fm.ModelError, match="point_mass_scale"):
        scene.render(fm.natural_modes(fm.Assembly(m), 1), point_mass_scale=-1.0)


def test_show_without_display_saves_a_picture(tmp_path, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    _, h = _driven_pendulum(2)
    with pytest.warns(fm.FlexmbWarning, match="no display"):
        out = scene.show(h, fallback=tmp_path / "shown.png", window_size=(300, 200))
    assert out == tmp_path / "shown.png" and out.stat().st_size > 1000
    with pytest.raises(RuntimeError, match="no display"):
        scene.show(h, fallback=None)


def test_four_bar_picture_and_vtu_show_crank_and_rocker(tmp_path):
    """The done-when of issue 30: crank and rocker are bodies in the picture and cells in the VTU."""
    spec = importlib.util.spec_from_file_location("four_bar_flexible", REPO / "examples" / "four_bar_flexible.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    asm, nodes, h = example.run_flexible(0.05)
    assert [b.name for b in h.layout.bodies] == ["crank", "rocker"]
    u = np.asarray(h.u[-1])
    x = h.layout.positions(u)
    for bi, (b, length) in enumerate(zip(h.layout.bodies, [example.CRANK, example.ROCKER])):
        corners = _body_vertices(h, -1, bi)
        # the link reaches from pivot to pin: its corners' extent along the current link axis
        theta = u[asm.dofs.index(b.node, "rz")]
        pins = [np.r_[p, 0.0] for p in (example.pin_positions()[0], np.zeros(2))] if bi == 0 else \
            [np.r_[example.pin_positions()[1], 0.0], np.array([example.GROUND, 0.0, 0.0])]
        axis = _rot_z(theta) @ (pins[0] - pins[1]) / length
        along = (corners - np.r_[x[b.node], 0.0]) @ axis
        width = np.ptp(corners @ np.cross([0.0, 0.0, 1.0], axis))
        assert width == pytest.approx(MIN_WIDTH * length, rel=1e-9), f"{b.name}: a slender bar (J = m L^2/12)"
        assert np.ptp(along) == pytest.approx(length + width, rel=1e-9), f"{b.name} does not span its joints"
        assert np.abs(along.max() + along.min()) < 1e-12, f"{b.name}: the link is not centred on its centre of mass"
    image = scene.render(h, tmp_path / "four_bar.png", window_size=(600, 400))
    hidden = scene.render(h, window_size=(600, 400), point_mass_scale=0.0)
    assert np.array_equal(image, hidden), "the bodies are drawn as links, not point-mass spheres"
    no_bodies = scene.render(_without_bodies(h), window_size=(600, 400))
    drawn = np.abs(image.astype(int) - image[0, 0]).max(-1) > 30
    bare = np.abs(no_bodies.astype(int) - no_bodies[0, 0]).max(-1) > 30
    assert drawn.sum() > 1.5 * bare.sum(), "the links add little to the picture"


def _without_bodies(h: fm.TimeHistory) -> fm.TimeHistory:
    """The result with its layout's bodies removed (an old file's layout: spheres at the centres)."""
    import copy

    old = copy.copy(h)
    layout = copy.copy(h.layout)
    layout.bodies = []
    object.__setattr__(old, "layout", layout)
    return old


def test_campbell_plot_in_one_unit_with_np_lines():
    import matplotlib

    matplotlib.use("Agg")
    speeds = np.linspace(0.0, 100.0, 5)                                # rad/s
    omega = np.c_[20.0 + 0.1 * speeds, 60.0 - 0.2 * speeds]            # rad/s
    diagram = fm.CampbellDiagram(speeds, -0.01 + 1j * omega, np.ones_like(omega))
    for unit, factor in [("Hz", 1 / (2 * np.pi)), ("rad/s", 1.0), ("rpm", 30 / np.pi)]:
        ax = diagram.plot(unit=unit, orders=(1, 3))
        assert ax.get_xlabel() == f"rotation speed ({unit})" and ax.get_ylabel() == f"frequency ({unit})"
        lines = {line.get_label(): line for line in ax.lines}
        assert np.allclose(lines["mode 2"].get_xdata(), factor * speeds)
        assert np.allclose(lines["mode 2"].get_ydata(), factor * omega[:, 1])
        for n in (1, 3):
            x, y = (np.asarray(v, dtype=float) for v in lines[f"{n}P"].get_data())
            slope = np.diff(y) / np.diff(x)
            assert np.allclose(slope, n, rtol=1e-12), f"{n}P slope {slope} in {unit}, expected {n}"
            assert x.max() == pytest.approx(factor * speeds.max())
    with pytest.raises(fm.ModelError, match="unit"):
        diagram.plot(unit="kHz")


def test_trajectory_plot_has_equal_axes():
    import matplotlib

    matplotlib.use("Agg")
    from flexmb.viz.plots import plot_history

    _, h = _driven_pendulum(2)
    fig = plot_history(h, ["uy@0"], x="ux@0")
    assert fig.axes[0].get_aspect() == 1.0
    fig = plot_history(h, ["uy@0"])                                    # against time: free aspect
    assert fig.axes[0].get_aspect() == "auto"


def test_info_lists_bodies_joints_force_elements_and_damping(tmp_path, capsys):
    m = fm.Model(dim=2)
    body = m.add_rigid_body([0.5, 0.0], 1.0, 1.0 / 12.0, name="arm")
    m.add_joint("revolute", None, body, at=[0.0, 0.0], name="hinge")
    m.add_spring_damper(None, body, k=100.0, c=0.5, at_a=[1.0, 1.0], at_b=[1.0, 0.0], name="shock")
    m.add_nodes([[1.0, 0.0], [2.0, 0.0]])
    beam = m.add_beam2d([[1, 2]], EA=1e6, EI=10.0, rho_A=1.0, name="tip beam")
    m.attach(1, body)
    m.set_rayleigh_damping(beam, alpha=0.0, beta=1e-3)
    path = tmp_path / "run.h5"
    fm.integrate(fm.Assembly(m), 0.01, 0.02, save_to=path, progress=False)
    assert main(["info", str(path)]) == 0
    text = capsys.readouterr().out
    assert "1 rigid body" in text and "body 'arm': node 0, mass 1 kg" in text
    assert "joint 'hinge': revolute, the ground to body 'arm'" in text
    assert "force elements" in text and "PointSpringDamper" in text
    assert "damping of 'tip beam': Beam2D: Rayleigh alpha = 0 1/s, beta = 0.001 s" in text
    assert "dampers c = 0.5 on 1 of 1 element(s)" in text
