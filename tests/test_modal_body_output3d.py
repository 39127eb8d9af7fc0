"""3D modal bodies in results: the FE mesh recovered from the layout with the frame node's rotation
vector, its velocities with the spatial angular velocity, the result file, VTU/XDMF export and
pictures (issue 16, item 1, in 3D).

Independent values: :meth:`~flexmb.cms.floating_frame.ModalBody.deformed_positions` (the body's own
recovery from its FE data) at large rotations, a quarter turn by hand, finite differences of the
positions along a smooth path with omega = axial(Rdot R^T) from finite differences of R(t), and the
motion of a mid-point run (the recovered velocities against the steps' position differences)."""
from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

import flexmb as fm
from flexmb.cms import ModalBodyData
from flexmb.io.export import step_mesh_data, write_vtu_series, write_xdmf
from flexmb.results import ModelLayout
from flexmb.rotations import exp_map

LENGTH, N_FE, N_MODES = 1.0, 5, 4
HUB = np.array([0.2, 0.1, -0.3])                 # m, the frame node's reference position
OTHER = np.array([-0.5, 0.4, 0.2])                # m, a node of the main model with a point mass
# a box section of different width (along e_y, sqrt(12 EI_z/EA)) and height (along e_z)
EA, GJ, EI_Y, EI_Z, RHO_A = 2e4, 1.5, 2.0, 4.5, 0.5
WIDTH, HEIGHT = np.sqrt(12.0 * EI_Z / EA), np.sqrt(12.0 * EI_Y / EA)
DT, STEPS = 0.01, 20


def blade_data() -> ModalBodyData:
    """A uniform 3D cantilever along x (section y axis along y), frame at its root, 4 modes."""
    beam = fm.Model(dim=3)
    x = np.linspace(0.0, LENGTH, N_FE + 1)
    nodes = beam.add_nodes(np.c_[x, np.zeros_like(x), np.zeros_like(x)])
    beam.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=EA, GJ=GJ, EI_y=EI_Y, EI_z=EI_Z, rho_A=RHO_A,
                    rho_I=(1e-4, 0.0, 0.0), mass="consistent", y_axis=(0.0, 1.0, 0.0))
    return ModalBodyData.from_model(beam, frame_node=0, n_modes=N_MODES, name="blade")


def blade_model(data: ModalBodyData) -> tuple[fm.Model, object]:
    """A free 3D modal body on a frame node at HUB, and a point mass on a node of its own (so the
    body's FE points are numbered after two model nodes)."""
    model = fm.Model(dim=3)
    model.add_node(list(OTHER))
    model.add_point_mass(0, 0.3)
    hub = model.add_node(list(HUB))
    body = model.add_modal_body(data, node=hub, stiffening=False, name="blade")
    return model, body


@pytest.fixture(scope="module")
def blade():
    """(assembly, body, layout) of :func:`blade_model`."""
    asm = fm.Assembly(blade_model(blade_data())[0])
    body = next(g for g in asm.model.groups if g.name == "blade")
    return asm, body, ModelLayout.from_assembly(asm)


def random_states(layout: ModelLayout, n: int, seed: int) -> np.ndarray:
    """DOF vectors (n, n_dof): frame translations of 0.5 m, rotation vectors of length up to 3 rad,
    modal coordinates of 0.1 kg^1/2 m."""
    rng = np.random.default_rng(seed)
    u = 0.1 * rng.standard_normal((n, layout.n_dof))
    hub = layout.first[1]
    u[:, hub:hub + 3] = 0.5 * rng.standard_normal((n, 3))
    axis = rng.standard_normal((n, 3))
    u[:, hub + 3:hub + 6] = rng.uniform(0.5, 3.0, (n, 1)) * axis / np.linalg.norm(axis, axis=1, keepdims=True)
    return u


def test_positions_are_the_bodys_own_recovery_at_large_rotations(blade):
    asm, body, layout = blade
    (mesh,) = layout.modal_meshes
    assert (mesh.frame_node, mesh.positions.shape, mesh.basis.shape) == (1, (N_FE + 1, 3), (N_FE + 1, 3, N_MODES))
    assert mesh.lines.shape == (N_FE, 2) and mesh.frames.shape == (N_FE, 3, 3)
    np.testing.assert_array_equal(mesh.dofs, asm.dofs.internal_dofs(body))
    u = random_states(layout, 6, seed=1)
    ed = asm.dofs.element_dofs(body)[0]
    expected = np.array([body.deformed_positions(HUB, ue) for ue in u[:, ed]])     # (6, n_b, 3)
    (batched,) = layout.modal_mesh_positions(u)
    assert batched.shape == expected.shape
    assert np.abs(batched - expected).max() < 1e-12
    (one,) = layout.modal_mesh_positions(u[4])
    assert np.abs(one - expected[4]).max() < 1e-12
    # by hand: a quarter turn about z and no deformation takes the tip (1, 0, 0) to (0, 1, 0)
    quarter = np.zeros(layout.n_dof)
    quarter[layout.index(1, "rz")] = 0.5 * np.pi
    (turned,) = layout.modal_mesh_positions(quarter)
    assert np.abs(turned[-1] - (HUB + [0.0, LENGTH, 0.0])).max() < 1e-14
    assert layout.n_modal_points == N_FE + 1
    assert layout.characteristic_length == pytest.approx(np.ptp(np.r_[[OTHER], HUB + [[0, 0, 0], [LENGTH, 0, 0]]],
                                                                axis=0).max(), rel=1e-12)


def smooth_path(layout: ModelLayout, t: np.ndarray) -> np.ndarray:
    """DOF vectors (n_t, n_dof) along a smooth motion: the frame translating, turning through
    rotation vectors up to 2.6 rad long about a wandering axis, the modes vibrating."""
    t = np.asarray(t, dtype=float)[:, None]
    u = np.zeros((len(t), layout.n_dof))
    hub = layout.first[1]
    u[:, hub:hub + 3] = np.c_[0.3 * np.sin(t), 0.2 * np.cos(2.0 * t), 0.1 * t]
    u[:, hub + 3:hub + 6] = np.c_[1.2 * np.sin(0.7 * t + 0.3), -0.9 * np.cos(1.1 * t), 2.0 * np.sin(0.5 * t) + 0.4]
    k = np.arange(1, N_MODES + 1)
    u[:, layout.modal_meshes[0].dofs] = 0.05 / k * np.sin(3.0 * k * t + k)
    u[:, 1:3] = 0.1 * t                                                  # the other node moves too
    return u


def test_velocities_are_the_derivative_along_a_path_with_the_spatial_angular_velocity(blade):
    _, _, layout = blade
    t = np.array([0.0, 0.7, 1.9, 3.1])
    h = 1e-5
    u, ahead, behind = smooth_path(layout, t), smooth_path(layout, t + h), smooth_path(layout, t - h)
    du = (ahead - behind) / (2.0 * h)                                           # rates of (r, psi, q)
    rot = layout.first[1] + 3 + np.arange(3)
    R_dot = (exp_map(ahead[:, rot]) - exp_map(behind[:, rot])) / (2.0 * h)
    W = R_dot @ np.swapaxes(exp_map(u[:, rot]), 1, 2)                           # hat(omega), spatial
    assert np.abs(W + np.swapaxes(W, 1, 2)).max() < 1e-8
    v = du.copy()
    v[:, rot] = np.c_[W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]]
    assert np.abs(v[:, rot] - du[:, rot]).max() > 0.1                           # omega is not psi's rate here
    (rate,) = layout.modal_mesh_velocities(u, v)                                # batched over the 4 instants
    (plus,), (minus,) = layout.modal_mesh_positions(ahead), layout.modal_mesh_positions(behind)
    fd = (plus - minus) / (2.0 * h)
    assert np.abs(rate - fd).max() < 1e-7 * np.abs(fd).max(), np.abs(rate - fd).max()
    (one,) = layout.modal_mesh_velocities(u[2], v[2])
    np.testing.assert_allclose(one, rate[2], rtol=0.0, atol=1e-14)


def test_box_sections_turn_with_the_body(blade):
    """Twisted a quarter turn about its axis x, the drawn blade's section width (along e_y) lies
    along z: the lines carry their reference section frames, turned by the frame's rotation."""
    from flexmb.viz.geometry import structure_surface

    _, _, layout = blade
    n = layout.n_nodes
    for twist, (along_y, along_z) in ((0.0, (WIDTH, HEIGHT)), (0.5 * np.pi, (HEIGHT, WIDTH))):
        u = np.zeros(layout.n_dof)
        u[layout.index(1, "rx")] = twist
        surface = structure_surface(layout, u)
        on_body = surface.point_nodes[:, 0] >= n                                 # the swept blade's points
        extent = np.ptp(surface.points[on_body], axis=0)
        assert extent[0] == pytest.approx(LENGTH, rel=1e-12)
        assert extent[1:] == pytest.approx([along_y, along_z], rel=1e-9), (twist, extent)


@pytest.fixture(scope="module")
def run(tmp_path_factory, blade):
    """A free blade tumbling and vibrating for STEPS mid-point steps, written to a file and loaded:
    (assembly, body, loaded result, its path)."""
    asm, body, layout = blade
    v0 = np.zeros(asm.n_dof)
    hub = layout.first[1]
    v0[hub:hub + 3] = (0.3, -0.2, 0.1)
    v0[hub + 3:hub + 6] = (1.5, -2.0, 4.0)                          # rad/s, spatial
    v0[asm.dofs.internal_dofs(body)] = 0.2
    path = tmp_path_factory.mktemp("modal3d") / "run.h5"
    fm.integrate(asm, DT, STEPS * DT, v0=v0, save_to=path, progress=False)
    return asm, body, fm.load_result(path), path


def test_result_file_stores_the_3d_mesh(run, blade):
    _, _, result, path = run
    (mesh,) = result.layout.modal_meshes
    (in_memory,) = blade[2].modal_meshes
    for name in ("positions", "basis", "lines", "triangles", "dofs", "frames"):
        np.testing.assert_array_equal(getattr(mesh, name), getattr(in_memory, name))
    assert mesh.section == in_memory.section and mesh.section["shape"] == "box"
    u = np.asarray(result.u)
    hub = result.layout.first[1]
    assert np.linalg.norm(u[:, hub + 3:hub + 6], axis=1).max() > 0.5      # it turned (rad)
    assert np.abs(u[:, mesh.dofs]).max() > 1e-3                          # and vibrated
    # a file written before the section frames were stored: lines drawn with chord frames
    from flexmb.viz.geometry import structure_surface

    old = path.parent / "old.h5"
    old.write_bytes(path.read_bytes())
    with h5py.File(old, "r+") as f:
        del f[f"model/groups/{result.layout.group('blade')}/modal_mesh/frames"]
    loaded = fm.load_result(old)
    assert loaded.layout.modal_meshes[0].frames is None
    assert np.isfinite(structure_surface(loaded.layout, u[-1]).points).all()


def test_recovered_velocities_match_the_motion_of_the_run(run):
    """The velocities from the stored spatial angular velocity against the position differences
    of consecutive steps: the mid-point rule's (x1 - x0)/dt is the mean of the end velocities up to
    the curvature of the path (measured 5.0e-3 of the largest speed at dt = 0.01 s, 1.8e-3 at
    0.005 s; taking the stored omega as body-frame gives 0.59)."""
    _, _, result, _ = run
    layout = result.layout
    (x,) = layout.modal_mesh_positions(np.asarray(result.u))
    (xdot,) = layout.modal_mesh_velocities(np.asarray(result.u), np.asarray(result.v))
    secant = np.diff(x, axis=0) / DT
    mean = 0.5 * (xdot[1:] + xdot[:-1])
    miss = np.abs(secant - mean).max() / np.abs(mean).max()
    assert miss < 2e-2, miss


def test_export_writes_the_3d_modal_mesh(run, tmp_path):
    import meshio

    _, _, result, _ = run
    layout = result.layout
    n, (mesh,) = layout.n_nodes, layout.modal_meshes
    u, v = np.asarray(result.u[-1]), np.asarray(result.v[-1])
    (expected,) = layout.modal_mesh_positions(u)
    points, cells, point_data, cell_data = step_mesh_data(result, -1)
    assert points.shape == (n + N_FE + 1, 3)
    assert np.abs(points[n:] - expected).max() < 1e-12
    reference = HUB + np.c_[np.linspace(0.0, LENGTH, N_FE + 1), np.zeros((N_FE + 1, 2))]
    np.testing.assert_allclose(point_data["displacement"][n:], points[n:] - reference, atol=1e-14)
    hub = layout.first[1]
    np.testing.assert_array_equal(point_data["rotation"][n:], np.broadcast_to(u[hub + 3:hub + 6], (N_FE + 1, 3)))
    np.testing.assert_array_equal(point_data["angular_velocity"][n:],
                                  np.broadcast_to(v[hub + 3:hub + 6], (N_FE + 1, 3)))
    (velocity,) = layout.modal_mesh_velocities(u, v)
    np.testing.assert_array_equal(point_data["velocity"][n:], velocity)
    assert np.all(point_data["reaction"][n:] == 0.0)
    # the body group's own (zero-length) cell at the frame node, then the FE mesh's lines
    assert [kind for kind, _ in cells] == ["line"]
    np.testing.assert_array_equal(cells[0][1][-N_FE:], n + mesh.lines)
    np.testing.assert_array_equal(cell_data["group"][-N_FE:], np.full(N_FE, layout.group("blade")))
    np.testing.assert_array_equal(cell_data["element"][-N_FE:], np.arange(N_FE))

    pvd = write_vtu_series(result, tmp_path / "vtu", every=STEPS)
    last = meshio.read(max(pvd.parent.glob("*.vtu")))
    assert np.abs(last.points[n:] - expected).max() < 1e-12
    assert len(last.cells_dict["line"]) == len(cells[0][1])
    xdmf = write_xdmf(result, tmp_path / "run.xdmf", every=STEPS)
    with meshio.xdmf.TimeSeriesReader(xdmf) as reader:
        base, _ = reader.read_points_cells()
        steps = [reader.read_data(k) for k in range(reader.num_steps)]
    assert np.abs(base[n:] - reference).max() < 1e-14
    assert np.abs(base[n:] + steps[-1][1]["displacement"][n:] - expected).max() < 1e-12


def test_picture_draws_the_3d_modal_body(run, tmp_path):
    from flexmb.viz.scene import render

    _, _, result, path = run
    bare_file = tmp_path / "bare.h5"
    bare_file.write_bytes(Path(path).read_bytes())
    with h5py.File(bare_file, "r+") as f:                                # the same run without its mesh
        del f[f"model/groups/{result.layout.group('blade')}/modal_mesh"]
    # seen from +z, the blade (x from 0.45 to 1.07 m at the last step) is the rightmost item; the
    # bottom rows hold the axes triad
    box = (-0.6, 1.2, -0.2, 1.2, -0.6, 0.4)
    images = [render(r, window_size=(300, 300), plotter_bounds=box, title="", camera="xy")
              for r in (result, fm.load_result(bare_file))]
    drawn = [np.any(im[:240] < 200, axis=-1) for im in images]              # non-white pixels
    assert drawn[0].sum() > 10 * drawn[1].sum(), [d.sum() for d in drawn]   # measured 1251 vs 28
    columns = [np.flatnonzero(d.any(axis=0)).max() for d in drawn]          # rightmost drawn pixel
    assert columns[0] > columns[1] + 100, columns                            # measured 271 vs 46


def test_natural_mode_of_a_held_3d_body_exports_its_mesh_displacement():
    data = blade_data()
    model, _ = blade_model(data)
    model.fix(0, ["ux", "uy", "uz"])
    model.fix(1, ["ux", "uy", "uz", "rx", "ry", "rz"])
    modes = fm.natural_modes(model, n_modes=2).mode_shapes()
    layout, n = modes.layout, modes.layout.n_nodes
    (mesh,) = layout.modal_meshes
    # the frame held: mode k is the body's own mode k, its mesh moving by Phi q_k (R = I)
    np.testing.assert_allclose(2.0 * np.pi * np.asarray(modes.parameter), data.omega[:2], rtol=1e-9)
    for k in range(2):
        mode = np.asarray(modes.u[k])
        points, _, point_data, _ = step_mesh_data(modes, k)
        moved = mesh.basis @ mode[mesh.dofs]
        np.testing.assert_allclose(point_data["displacement"][n:], moved, atol=1e-14)
        assert np.abs(moved).max() > 0.1                                       # the blade bends
        (drawn,) = layout.modal_mesh_positions(modes.shape_state(k, modes.drawn_scale()))
        np.testing.assert_array_equal(points[n:], drawn)
