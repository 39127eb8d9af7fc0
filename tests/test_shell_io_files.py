"""Shell files: triangle meshes in (Gmsh, VTU, Abaqus through meshio), results out (VTU series,
XDMF, with triangles mixed with beam lines), and pictures of shell surfaces.

The three files of meshes/plate_two_thickness.* hold one plate with two thickness regions, given
per set (Gmsh physical groups, Abaqus element sets) or per element (VTU cell data): all three
must make the same model, which the test checks by its tip deflection.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import meshio
import numpy as np
import pytest

import flexmb as fm
from flexmb.io import shell_mesh
from flexmb.io.export import step_mesh_data, write_vtu_series, write_xdmf
from flexmb.io.mesh import build_model, read_mesh

ROOT = Path(__file__).resolve().parents[1]
PLATE = ROOT / "meshes" / "plate_two_thickness"
MATERIAL = {"element": "shell", "E": 70e9, "nu": 0.3, "rho": 2700.0}
THIN, THICK = 0.002, 0.004


# ------------------------------------------------------------------ meshes in
def _plate_from(suffix: str) -> tuple[fm.Model, np.ndarray]:
    """The plate model built from one of the three files, clamped along x = 0."""
    path = PLATE.with_suffix(suffix)
    if suffix == ".msh":
        return build_model(path, 3, {"thin": {**MATERIAL, "thickness": THIN},
                                     "thick": {**MATERIAL, "thickness": THICK}}, supports={"clamped": "all"})
    if suffix == ".vtu":
        return build_model(path, 3, {"1": {**MATERIAL, "thickness": "thickness", "name": "plate"}},
                           supports={"2": "all"})
    return build_model(path, 3, {"THIN": {**MATERIAL, "thickness": THIN}, "THICK": {**MATERIAL, "thickness": THICK}},
                       supports={"CLAMPED": "all"})


def _tip_deflection(model: fm.Model) -> float:
    """uz of the corner (0.4, 0.2) under a line load of 10 N/m along the free edge x = 0.4."""
    edge = shell_mesh.nodes_at(model.coordinates, x=0.4)
    model.add_edge_load(edge[np.argsort(model.coordinates[edge, 1])], [0.0, 0.0, 10.0])
    path = fm.load_control(model, 1)
    return float(path.dof(int(shell_mesh.nodes_at(model.coordinates, x=0.4, y=0.2)[0]), "uz")[-1])


def test_three_formats_give_the_same_plate():
    deflections = []
    for suffix in (".msh", ".vtu", ".inp"):
        model, _ = _plate_from(suffix)
        assert model.n_nodes == 45 and sum(g.n_elements for g in model.groups) == 64, suffix
        thickness = np.concatenate([g.thickness for g in model.groups])
        centroid_x = np.concatenate([model.coordinates[g.connectivity, 0].mean(axis=1) for g in model.groups])
        np.testing.assert_array_equal(thickness, np.where(centroid_x < 0.2, THIN, THICK), err_msg=suffix)
        assert len(model.clamped) == 5 and all(model.coordinates[n, 0] == 0.0 for n in model.clamped)
        deflections.append(_tip_deflection(model))
    # a stiffer outer half: between the plates of 2 mm and of 4 mm throughout (beam: w ~ 1/h^3)
    assert np.allclose(deflections, deflections[0], rtol=1e-9), deflections
    clamped_beam = 10.0 * 0.4**3 / (3 * 70e9 * THIN**3 / 12)
    assert clamped_beam / 8 < deflections[0] < clamped_beam


def test_plate_files_are_what_their_script_writes():
    spec = importlib.util.spec_from_file_location("make_plate", ROOT / "meshes" / "make_plate_two_thickness.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for suffix, made in script.meshes().items():
        stored = meshio.read(PLATE.with_suffix(suffix))
        np.testing.assert_allclose(stored.points, made.points, err_msg=suffix)
        assert [(c.type, c.data.tolist()) for c in stored.cells] == [(c.type, c.data.tolist()) for c in made.cells]


def _mixed_file(tmp_path: Path, name: str, cells: list, **data) -> Path:
    points = np.array([[0.0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 0.5, 0], [0.5, 0, 0]])
    path = tmp_path / name
    meshio.write(path, meshio.Mesh(points, cells, **data))
    return path


def test_bad_triangle_sets_name_the_file_and_the_set(tmp_path):
    path = _mixed_file(tmp_path, "mixed.vtu",
                       [("triangle", np.array([[0, 1, 4], [1, 2, 4]])), ("quad", np.array([[0, 1, 2, 3]])),
                        ("line", np.array([[0, 3]])), ("triangle6", np.array([[0, 1, 2, 5, 4, 4]]))],
                       cell_data={"gmsh:physical": [np.array([1, 1]), np.array([2]), np.array([3]), np.array([4])],
                                  "h": [np.array([0.01, np.nan]), np.zeros(1), np.zeros(1), np.zeros(1)]})
    mesh = read_mesh(path)
    with pytest.raises(fm.ModelError, match=r"mixed\.vtu: set '2' holds cells other than 3-node triangles \(quad: 1\)"):
        build_model(mesh, 3, {"2": {**MATERIAL, "thickness": 0.01}})
    with pytest.raises(fm.ModelError, match=r"set '4' holds cells other than 3-node triangles \(triangle6: 1\).*"
                                            r"-order 1"):
        build_model(mesh, 3, {"4": {**MATERIAL, "thickness": 0.01}})
    with pytest.raises(fm.ModelError, match=r"set '3' holds 2-node lines, no triangles"):
        build_model(mesh, 3, {"3": {**MATERIAL, "thickness": 0.01}})
    with pytest.raises(fm.ModelError, match=r"set '1': thickness = 'thick' names no cell data of the set's "
                                            r"triangles \(cell data: h\)"):
        build_model(mesh, 3, {"1": {**MATERIAL, "thickness": "thick"}})
    with pytest.raises(fm.ModelError, match=r"set '1': cell data 'h' \(thickness\) is nan on triangle 1"):
        build_model(mesh, 3, {"1": {**MATERIAL, "thickness": "h"}})
    with pytest.raises(fm.ModelError, match=r"set '1'.*add_shell needs a 3D model"):
        build_model(mesh, 2, {"1": {**MATERIAL, "thickness": 0.01}})
    with pytest.raises(fm.ModelError, match=r"set '1' has no 2-node line cells \(triangle: 2\); .*element 'shell'"):
        build_model(mesh, 3, {"1": {"element": "truss", "EA": 1.0}})
    mesh.triangle_sets["again"] = mesh.triangle_sets["1"][::-1]
    with pytest.raises(fm.ModelError, match=r"the triangle of points 0, 1, 4 appears more than once in the chosen "
                                            r"sets \(1, again\)"):
        build_model(mesh, 3, {"1": {**MATERIAL, "thickness": 0.01}, "again": {**MATERIAL, "thickness": 0.01}})


# ------------------------------------------------------------------ results out
@pytest.fixture(scope="module")
def stiffened_panel() -> fm.StaticPath:
    """A clamped plate under pressure with a beam along one edge (triangles and lines)."""
    X, T = shell_mesh.rectangle(1.0, 0.5, 4, 2)
    model = fm.Model(dim=3)
    model.add_nodes(X)
    plate = model.add_shell(T, E=70e9, nu=0.3, thickness=np.linspace(0.004, 0.006, len(T)), rho=2700.0,
                            name="plate")
    edge = shell_mesh.nodes_at(X, y=0.0)
    model.add_beam3d(np.column_stack([edge[:-1], edge[1:]]), EA=1e7, GJ=1e3, EI_y=1e3, EI_z=1e3, rho_A=1.0,
                     name="rib")
    for node in shell_mesh.nodes_at(X, x=0.0):
        model.fix(int(node))
    model.add_pressure(plate, 1e3)
    return fm.load_control(model, 2)


def _check_step(mesh: meshio.Mesh, result: fm.StaticPath, step: int) -> None:
    assert [(c.type, len(c.data)) for c in mesh.cells] == [("triangle", 16), ("line", 4)]
    np.testing.assert_array_equal(mesh.cells[0].data, result.layout.groups[0].connectivity)
    membrane = mesh.cell_data["membrane_forces"]
    np.testing.assert_allclose(membrane[0], result.element("plate", "membrane_forces")[step])
    assert membrane[1].shape == (4, 3) and np.all(np.isnan(membrane[1]))
    np.testing.assert_allclose(mesh.cell_data["bending_moments"][0], result.element("plate", "bending_moments")[step])
    np.testing.assert_allclose(mesh.cell_data["thickness"][0], result.layout.groups[0].thickness)
    assert np.all(np.isnan(mesh.cell_data["thickness"][1]))
    np.testing.assert_allclose(mesh.cell_data["N"][1], result.element("rib", "N")[step])
    assert np.all(np.isnan(mesh.cell_data["N"][0]))


def test_vtu_series_has_triangles_and_lines_with_cell_data(stiffened_panel, tmp_path):
    write_vtu_series(stiffened_panel, tmp_path)
    for k in range(2):
        mesh = meshio.read(tmp_path / f"result_{k:05d}.vtu")
        _check_step(mesh, stiffened_panel, k)
        points, *_ = step_mesh_data(stiffened_panel, k)
        np.testing.assert_allclose(mesh.points, points)


def test_xdmf_series_with_mixed_cells_reads_back(stiffened_panel, tmp_path):
    path = write_xdmf(stiffened_panel, tmp_path / "panel.xdmf")
    with meshio.xdmf.TimeSeriesReader(path) as reader:
        points, cells = reader.read_points_cells()
        for k in range(reader.num_steps):
            t, point_data, cell_data = reader.read_data(k)
            assert t == stiffened_panel.parameter[k]
            _check_step(meshio.Mesh(points, cells, point_data=point_data, cell_data=cell_data), stiffened_panel, k)
            np.testing.assert_allclose(points + point_data["displacement"], step_mesh_data(stiffened_panel, k)[0])


def test_modes_of_a_shell_export(tmp_path):
    X, T = shell_mesh.rectangle(1.0, 0.5, 4, 2)
    model = fm.Model(dim=3)
    model.add_nodes(X)
    model.add_shell(T, E=70e9, nu=0.3, thickness=0.005, rho=2700.0)
    modes = fm.natural_modes(model, 8).mode_shapes()
    write_vtu_series(modes, tmp_path)
    mesh = meshio.read(tmp_path / "result_00007.vtu")
    assert [c.type for c in mesh.cells] == ["triangle"] and set(mesh.cell_data) == {"thickness", "group", "element"}
    np.testing.assert_allclose(np.abs(mesh.point_data["displacement"]).max(), 1.0, rtol=1e-12)


# ------------------------------------------------------------------ pictures
def _drawn(image: np.ndarray) -> np.ndarray:
    """(H, W) mask of the pixels that differ from the background (the corner pixel)."""
    return np.abs(image.astype(int) - image[0, 0].astype(int)).max(-1) > 30


def test_render_shell_surface_coloured_by_a_stress_resultant(stiffened_panel, tmp_path):
    from flexmb.viz import scene

    assert {"membrane_forces[0]", "bending_moments[2]", "N", "displacement"} <= set(scene.quantities(stiffened_panel))
    image = scene.render(stiffened_panel, tmp_path / "panel.png", color="bending_moments[0]",
                         window_size=(300, 200), show_reference=True)
    assert (tmp_path / "panel.png").stat().st_size > 0 and image.shape == (200, 300, 3)
    drawn = _drawn(image)
    assert drawn.mean() > 0.1, f"only {drawn.mean():.1%} of the picture is drawn"
    colours = {tuple(c) for c in image[drawn][::7] // 32}
    assert len(colours) > 5, "a stress resultant of both signs must show several colours"
    # seen from the side in one frame (tip deflection 0.06 m), the plate drawn with 5 times its
    # deflection covers more of the picture
    side = {"color": "displacement", "window_size": (300, 200), "camera": "xz",
            "plotter_bounds": (0.0, 1.0, 0.0, 0.5, -0.05, 0.35)}
    plain, magnified = scene.render(stiffened_panel, **side), scene.render(stiffened_panel, scale=5.0, **side)

    def height(image: np.ndarray) -> int:
        """Rows spanned by the drawing below the title, right of the axes triad and left of the
        colour bar (pixels)."""
        rows = np.flatnonzero(_drawn(image)[45:, int(scene.TRIAD_VIEWPORT[2] * 300):230].any(axis=1))
        return int(rows.max() - rows.min())

    assert height(magnified) > 2 * height(plain), (height(magnified), height(plain))
    with pytest.raises(ValueError, match=r"unknown colour quantity 'membrane_forces'.*membrane_forces\[0\]"):
        scene.render(stiffened_panel, color="membrane_forces", window_size=(300, 200))


def test_surface_geometry_is_the_deformed_mid_surface(stiffened_panel):
    from flexmb.viz.geometry import centrelines, structure_surface

    layout = stiffened_panel.layout
    u = np.asarray(stiffened_panel.u[-1])
    surface = structure_surface(layout, u)
    plate = surface.cell_group == 0
    assert plate.sum() == 16
    x = layout.positions(u)
    # the plate's points are exactly the deformed nodes of its triangles
    nodes = np.unique(layout.groups[0].connectivity)
    np.testing.assert_allclose(surface.points[:len(nodes)], x[nodes])
    outline = centrelines(layout, u)[0]
    assert outline.shape == (16, 4, 3) and np.array_equal(outline[:, 0], outline[:, 3])
