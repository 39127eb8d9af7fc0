"""Modal bodies in results: the FE mesh recovered from the layout (and the result file), exported to
VTU/XDMF and drawn in pictures (issue 16, item 1)."""
from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

import flexmb as fm
from flexmb.cms import ModalBodyData
from flexmb.io.export import step_mesh_data, write_vtu_series, write_xdmf

LENGTH, N_FE, DT, STEPS = 1.2, 6, 0.01, 30
HUB = (0.2, 0.1)


def spun_body() -> tuple[fm.Assembly, object]:
    """A 1.2 m cantilever (2 modes) on a frame node at HUB, spun up by a prescribed rotation
    theta = 3 t^2 rad: the modes ring, so the recovered mesh is bent and turned."""
    beam = fm.Model(dim=2)
    x = np.linspace(0.0, LENGTH, N_FE + 1)
    nodes = beam.add_nodes(np.c_[x, np.zeros_like(x)])
    beam.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=50.0, rho_A=1.0, mass="consistent")
    data = ModalBodyData.from_model(beam, frame_node=0, n_modes=2, name="arm")
    model = fm.Model(dim=2)
    hub = model.add_node(list(HUB))
    body = model.add_modal_body(data, node=hub, name="arm")
    model.fix(hub, ["ux", "uy"])
    model.prescribe(hub, "rz", lambda t: 3.0 * t**2)
    return fm.Assembly(model), body


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """(assembly, body, loaded result, the FE nodes' positions (n_steps, n_b, 2) by ModalBody)."""
    asm, body = spun_body()
    path = tmp_path_factory.mktemp("modal") / "run.h5"
    fm.integrate(asm, DT, STEPS * DT, save_to=path)
    result = fm.load_result(path)
    ed = asm.dofs.element_dofs(body)[0]
    X = asm.model.coordinates[body.connectivity[0, 0]]
    expected = np.array([body.deformed_positions(X, u[ed]) for u in np.asarray(result.u)])
    return asm, body, result, expected


def old_format_copy(path, tmp_path):
    """A copy of the result file without the modal meshes (as written before they were stored)."""
    old = tmp_path / "old.h5"
    old.write_bytes(path.read_bytes())
    with h5py.File(old, "r+") as f:
        for group in f["model/groups"].values():
            if "modal_mesh" in group:
                del group["modal_mesh"]
    return old


def test_layout_recovers_the_modal_mesh_as_the_body_does(run):
    asm, body, result, expected = run
    layout = result.layout
    (mesh,) = layout.modal_meshes
    assert (mesh.frame_node, mesh.n_points, mesh.lines.shape, mesh.triangles.shape) == (0, N_FE + 1, (N_FE, 2), (0, 3))
    np.testing.assert_array_equal(mesh.dofs, asm.dofs.internal_dofs(body))
    in_memory = fm.results.ModelLayout.from_assembly(asm).modal_meshes[0]
    for name in ("positions", "basis", "lines", "triangles", "dofs"):        # the file round trip
        np.testing.assert_array_equal(getattr(mesh, name), getattr(in_memory, name))
    q = np.asarray(result.u)[:, mesh.dofs]
    assert np.abs(q).max() > 1e-3                                           # the modes are excited
    assert np.linalg.norm(np.ptp(expected[:, -1], axis=0)) > 0.2              # and the tip moves
    (all_steps,) = layout.modal_mesh_positions(np.asarray(result.u))          # vectorised over steps
    assert all_steps.shape == expected.shape
    assert np.abs(all_steps - expected).max() < 1e-12
    (one,) = layout.modal_mesh_positions(np.asarray(result.u[7]))
    assert np.abs(one - expected[7]).max() < 1e-12
    assert layout.n_modal_points == N_FE + 1
    assert layout.characteristic_length == pytest.approx(LENGTH, rel=1e-12)   # the frame node alone: 1 m


def test_modal_mesh_velocities_are_the_derivative_of_the_positions(run):
    _, _, result, _ = run
    layout = result.layout
    u = np.asarray(result.u[-1])
    w = np.random.default_rng(3).standard_normal(layout.n_dof)
    eps = 1e-6
    (plus,), (minus,) = layout.modal_mesh_positions(u + eps * w), layout.modal_mesh_positions(u - eps * w)
    (rate,) = layout.modal_mesh_velocities(u, w)
    fd = (plus - minus) / (2.0 * eps)
    assert np.abs(rate - fd).max() < 1e-6 * np.abs(fd).max()


def test_export_writes_the_modal_mesh_after_the_model(run, tmp_path):
    import meshio

    _, _, result, expected = run
    layout = result.layout
    n = layout.n_nodes
    points, cells, point_data, cell_data = step_mesh_data(result, -1)
    assert points.shape == (n + N_FE + 1, 3)
    assert np.abs(points[n:, :2] - expected[-1]).max() < 1e-12 and np.all(points[:, 2] == 0.0)
    reference = np.c_[np.array(HUB) + np.c_[np.linspace(0.0, LENGTH, N_FE + 1), np.zeros(N_FE + 1)],
                      np.zeros(N_FE + 1)]
    np.testing.assert_allclose(point_data["displacement"][n:], points[n:] - reference, atol=1e-14)
    np.testing.assert_allclose(point_data["rotation"][n:, 2], result.u[-1][layout.index(0, "rz")])
    (velocity,) = layout.modal_mesh_velocities(result.u[-1], result.v[-1])
    np.testing.assert_array_equal(point_data["velocity"][n:, :2], velocity)
    # the body group's own (zero-length) cell at the frame node, then the FE mesh's lines
    assert [kind for kind, _ in cells] == ["line"]
    np.testing.assert_array_equal(cells[0][1][1:], n + layout.modal_meshes[0].lines)
    np.testing.assert_array_equal(cell_data["group"], np.zeros(1 + N_FE))
    np.testing.assert_array_equal(cell_data["element"], np.r_[0, np.arange(N_FE)])
    assert np.isfinite(cell_data["q1"][0]) and np.all(np.isnan(cell_data["q1"][1:]))

    pvd = write_vtu_series(result, tmp_path / "vtu", every=STEPS)
    last = meshio.read(sorted(pvd.parent.glob("*.vtu"))[-1])
    assert np.abs(last.points[n:, :2] - expected[-1]).max() < 1e-12
    xdmf = write_xdmf(result, tmp_path / "run.xdmf", every=STEPS)
    with meshio.xdmf.TimeSeriesReader(xdmf) as reader:
        base, _ = reader.read_points_cells()
        steps = [reader.read_data(k) for k in range(reader.num_steps)]
    deformed = base + steps[-1][1]["displacement"]
    assert np.abs(deformed[n:, :2] - expected[-1]).max() < 1e-12


def test_export_of_triangles_in_a_modal_mesh(run):
    _, _, result, expected = run
    layout = result.layout
    mesh = layout.modal_meshes[0]
    saved = mesh.lines, mesh.triangles
    try:                                    # 2D has no triangle elements yet: the mesh is edited
        mesh.lines, mesh.triangles = mesh.lines[:2], np.array([[0, 1, 6], [1, 2, 6]])
        points, cells, _, cell_data = step_mesh_data(result, -1)
        assert [kind for kind, _ in cells] == ["line", "triangle"]
        np.testing.assert_array_equal(cells[1][1], layout.n_nodes + mesh.triangles)
        np.testing.assert_array_equal(cell_data["element"], [0, 0, 1, 2, 3])
        from flexmb.viz.geometry import structure_surface

        surface = structure_surface(layout, np.asarray(result.u[-1]))
        assert np.abs(surface.points[-(N_FE + 1):, :2] - expected[-1]).max() < 1e-12   # the triangles' points
    finally:
        mesh.lines, mesh.triangles = saved


def test_pictures_draw_the_modal_body(run, tmp_path):
    from flexmb.viz.scene import _plotter, draw_scene, render

    _, body, result, expected = run
    tip = expected[-1, -1]
    plotter = _plotter((600, 400))
    try:
        draw_scene(plotter, result, color="displacement")
        bounds = np.array(plotter.actors["structure"].GetBounds())
        values = plotter.actors["structure"].mapper.dataset.point_data["values"]
    finally:
        plotter.close()
    half = 0.5 * max(v for k, v in result.layout.modal_meshes[0].section.items() if k != "shape")
    assert bounds[0] <= tip[0] <= bounds[1] and bounds[2] <= tip[1] <= bounds[3]
    assert tip[0] >= bounds[1] - half and tip[1] >= bounds[3] - half                 # the tip is the far end
    tip_moved = np.linalg.norm(expected[-1, -1] - (np.array(HUB) + [LENGTH, 0.0]))
    assert np.nanmax(values) == pytest.approx(tip_moved, rel=1e-12)                  # coloured by the FE nodes
    # one frame for both pictures: the body drawn, and the same file without its mesh (the frame
    # node alone); the tip's pixel column is drawn in the first only
    box = (0.0, 1.6, -0.5, 1.1, -0.1, 0.1)
    image = render(result, tmp_path / "arm.png", window_size=(300, 300), plotter_bounds=box, title="")
    bare = render(fm.load_result(old_format_copy(Path(result.meta["file"]), tmp_path)), window_size=(300, 300),
                  plotter_bounds=box, title="")
    drawn = [np.any(im < 200, axis=-1) for im in (image, bare)]                     # non-white pixels
    assert drawn[0].sum() > 1.5 * drawn[1].sum()                                  # measured 6.0 times
    columns = [np.flatnonzero(d.any(axis=0)).max() for d in drawn]                 # rightmost drawn pixel
    assert columns[0] > columns[1] + 50                                            # measured 177 pixels


def test_old_result_files_without_modal_meshes_still_load(run, tmp_path):
    _, _, result, _ = run
    old = fm.load_result(old_format_copy(Path(result.meta["file"]), tmp_path))
    assert old.layout.modal_meshes == [] and old.layout.n_modal_points == 0
    assert old.layout.n_dof == result.layout.n_dof
    np.testing.assert_array_equal(np.asarray(old.u), np.asarray(result.u))
    points, cells, _, _ = step_mesh_data(old, -1)
    assert points.shape == (old.layout.n_nodes, 3) and [len(c) for _, c in cells] == [1]


def test_natural_mode_of_a_modal_body_exports_its_mesh_displacement():
    asm, body = spun_body()
    modes = fm.natural_modes(asm, n_modes=2).mode_shapes()
    mesh = modes.layout.modal_meshes[0]
    # the frame is held (rz prescribed): mode k is the body's own mode k, of frequency omega_k
    assert modes.parameter[0] * 2.0 * np.pi == pytest.approx(body.data.omega[0], rel=1e-9)
    for k in range(2):
        mode = np.asarray(modes.u[k])
        points, _, point_data, _ = step_mesh_data(modes, k)
        n = modes.layout.n_nodes
        np.testing.assert_allclose(point_data["displacement"][n:, :2], mesh.basis @ mode[mesh.dofs], atol=1e-14)
        (drawn,) = modes.layout.modal_mesh_positions(modes.shape_state(k, modes.drawn_scale()))
        np.testing.assert_array_equal(points[n:, :2], drawn)
        assert np.abs(drawn[-1] - (np.array(HUB) + [LENGTH, 0.0])).max() > 1e-3 * LENGTH   # the tip moves
