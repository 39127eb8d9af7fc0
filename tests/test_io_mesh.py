"""Meshes in through meshio: sets of meshes/portal_frame_3d.msh, models built from them, errors."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import meshio
import numpy as np
import pytest

import flexmb as fm
from flexmb.io.mesh import Mesh, build_model, read_mesh

ROOT = Path(__file__).resolve().parents[1]
FRAME = ROOT / "meshes" / "portal_frame_3d.msh"
EI = 3e6                                                    # N m^2, columns and beams
SECTION = {"element": "beam3d", "EA": 2e9, "GJ": 1e6, "EI_y": EI, "EI_z": EI, "rho_A": 78.5}


@pytest.fixture(scope="module")
def frame() -> Mesh:
    return read_mesh(FRAME)


def test_portal_frame_file_has_the_named_sets(frame):
    assert frame.points.shape == (60, 3)
    assert {k: v.shape for k, v in frame.element_sets.items()} == {"columns": (32, 2), "beams": (32, 2)}
    assert set(frame.node_sets) == {"base", "roof", "columns", "beams"}
    assert frame.skipped_cells == {}
    corners = {(0.0, 0.0), (4.0, 0.0), (4.0, 3.0), (0.0, 3.0)}
    for name, z in (("base", 0.0), ("roof", 7.0)):
        P = frame.points[frame.node_sets[name]]
        assert set(map(tuple, P[:, :2])) == corners and np.all(P[:, 2] == z), name
    d = np.diff(frame.points[frame.element_sets["columns"]], axis=1)[:, 0]      # (32, 3)
    np.testing.assert_allclose(d, np.tile([0.0, 0.0, 3.5 / 4], (32, 1)), atol=1e-12)
    d = np.abs(np.diff(frame.points[frame.element_sets["beams"]], axis=1)[:, 0])
    assert np.all(d[:, 2] == 0.0)
    assert sorted(np.round(d.sum(axis=1), 12)) == [0.75] * 16 + [1.0] * 16
    assert len(frame.node_sets["columns"]) == 12 + 8 * 3 and len(frame.node_sets["beams"]) == 8 + 8 * 3


def test_portal_frame_file_is_what_its_generator_writes(assert_same_text_up_to_round_off):
    spec = importlib.util.spec_from_file_location("make_portal_frame", ROOT / "meshes" / "make_portal_frame.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    assert_same_text_up_to_round_off(FRAME.read_text(), generator.msh_text(), FRAME.name)


def test_portal_frame_buckles_between_the_euler_bounds_of_its_columns(frame):
    model, node_of_point = build_model(frame, 3, {"columns": SECTION, "beams": {**SECTION, "name": "floors"}},
                                       supports={"base": "all"})
    assert model.n_nodes == 60 and np.array_equal(np.sort(node_of_point), np.arange(60))
    assert [(g.name, g.n_elements) for g in model.groups] == [("columns", 32), ("floors", 32)]
    assert model.clamped == set(node_of_point[frame.node_sets["base"]].tolist())
    np.testing.assert_array_equal(model.coordinates, frame.points[np.argsort(node_of_point)])
    for p in frame.node_sets["roof"]:
        model.add_load(int(node_of_point[p]), "uz", -1e3)
    critical = fm.linear_buckling(model, n_modes=2).critical
    # each column carries 1 kN: its critical load lies between a 7 m cantilever and a storey
    # of 3.5 m with both ends clamped against rotation
    assert np.pi**2 * EI / (4 * 7.0**2) / 1e3 < critical < np.pi**2 * EI / 3.5**2 / 1e3


def test_model_from_some_sets_numbers_only_their_points(frame):
    model, node_of_point = build_model(frame, 3, {"beams": SECTION}, supports={"roof": ["ux", "uy", "uz"]})
    used = frame.node_sets["beams"]
    assert model.n_nodes == 32 and np.array_equal(node_of_point[used], np.arange(32))
    assert np.all(np.delete(node_of_point, used) == -1)
    assert {(int(n), d) for n, d in model.prescribed} == {
        (int(node_of_point[p]), d) for p in frame.node_sets["roof"] for d in ("ux", "uy", "uz")}


def test_gmsh22_file_names_its_tags_through_physical_names(frame, tmp_path):
    meshio.write(tmp_path / "frame22.msh", meshio.read(FRAME), file_format="gmsh22", binary=False)
    old = read_mesh(tmp_path / "frame22.msh")
    assert list(old.element_sets) == list(frame.element_sets)
    for name in frame.element_sets:
        np.testing.assert_array_equal(old.element_sets[name], frame.element_sets[name])
    for name in frame.node_sets:
        np.testing.assert_array_equal(old.node_sets[name], frame.node_sets[name])


def _plane_truss() -> meshio.Mesh:
    """Chord 0-1-2, web lines to point 3 above, a triangle, z = 0."""
    points = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0], [1, 1, 0]])
    cells = [("line", np.array([[0, 1], [1, 2]])), ("line", np.array([[0, 3], [3, 2], [1, 3]])),
             ("triangle", np.array([[0, 1, 3]]))]
    return meshio.Mesh(points, cells)


def test_abaqus_sets_build_a_plane_model_that_carries_load(tmp_path):
    mesh = _plane_truss()
    none = np.zeros(0, dtype=int)
    mesh.cell_sets = {"chord": [np.arange(2), none, none], "web": [none, np.arange(3), none],
                      "skin": [none, none, np.arange(1)]}
    mesh.point_sets = {"pinned": np.array([0]), "roller": np.array([2])}
    meshio.write(tmp_path / "truss.inp", mesh)
    read = read_mesh(tmp_path / "truss.inp")
    np.testing.assert_array_equal(read.element_sets["web"], [[0, 3], [3, 2], [1, 3]])
    assert read.skipped_cells == {"skin": {"triangle": 1}}
    assert read.node_sets["roller"].tolist() == [2] and read.node_sets["skin"].tolist() == [0, 1, 3]

    model, node_of_point = build_model(read, 2, {"chord": {"element": "beam2d", "EA": 1e7, "EI": 1e4},
                                                 "web": {"element": "truss", "EA": 1e6}},
                                       supports={"pinned": ["ux", "uy"], "roller": "uy"})
    assert model.coordinates.shape == (4, 2) and [g.n_elements for g in model.groups] == [2, 3]
    model.add_load(int(node_of_point[3]), "uy", -1e3)
    path = fm.load_control(model, 2)
    # global equilibrium of the simply supported span: the load at mid-span shares equally
    for p in (0, 2):
        np.testing.assert_allclose(path.reaction(int(node_of_point[p]), "uy")[-1], 500.0, rtol=1e-3)
    assert np.all(path.element("web", "N")[-1, :2] < 0.0)                # diagonals in compression


def test_unnamed_gmsh_tags_in_vtu_become_sets_named_by_number(tmp_path):
    mesh = _plane_truss()
    mesh.cell_data = {"gmsh:physical": [np.array([7, 7]), np.array([8, 8, 7]), np.array([9])]}
    meshio.write(tmp_path / "tags.vtu", mesh)
    read = read_mesh(tmp_path / "tags.vtu")
    assert read.element_sets["7"].tolist() == [[0, 1], [1, 2], [1, 3]]
    assert read.element_sets["8"].tolist() == [[0, 3], [3, 2]]
    assert read.skipped_cells == {"9": {"triangle": 1}}


# ------------------------------------------------------------------ errors
def test_unknown_set_lists_the_available_sets_and_the_file(frame):
    with pytest.raises(fm.ModelError, match=r"portal_frame_3d\.msh has no set named 'walls'.*columns.*beams"):
        build_model(frame, 3, {"walls": SECTION})
    with pytest.raises(fm.ModelError, match=r"no set named 'foundation' for supports.*base"):
        build_model(frame, 3, {"columns": SECTION}, supports={"foundation": "all"})


def test_point_set_is_no_element_set(frame):
    with pytest.raises(fm.ModelError, match=r"set 'base' holds only points"):
        build_model(frame, 3, {"base": SECTION})


def test_support_points_outside_the_model_are_named(frame):
    with pytest.raises(fm.ModelError, match=r"support set 'base': point 0 at \[0\.0, 0\.0, 0\.0\] is not"):
        build_model(frame, 3, {"beams": SECTION}, supports={"base": "all"})


def test_2d_model_needs_points_at_z_zero(frame):
    with pytest.raises(fm.ModelError, match=r"2D model needs every point at z = 0; point 4 has z = 3\.5"):
        build_model(frame, 2, {"columns": {"element": "truss", "EA": 1e6}})


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nowhere\.msh"):
        read_mesh(tmp_path / "nowhere.msh")
    (tmp_path / "broken.msh").write_text("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 2\n")
    with pytest.raises(ValueError, match=r"broken\.msh: meshio cannot read it"):
        read_mesh(tmp_path / "broken.msh")


def test_bad_group_descriptions_name_the_set(frame):
    with pytest.raises(fm.ModelError, match=r"set 'columns': needs a dict with 'element' one of truss"):
        build_model(frame, 3, {"columns": {"element": "cable", "EA": 1.0}})
    with pytest.raises(fm.ModelError, match=r"set 'beams'.*EI_z"):
        build_model(frame, 3, {"beams": {"element": "beam3d", "EA": 1.0, "GJ": 1.0, "EI_y": 1.0}})
    with pytest.raises(fm.ModelError, match=r"set 'beams'.*add_beam2d needs a 2D model"):
        build_model(frame, 3, {"beams": {"element": "beam2d", "EA": 1.0, "EI": 1.0}})
    with pytest.raises(fm.ModelError, match=r"support set 'base'.*unknown DOF 'uw'"):
        build_model(frame, 3, {"columns": SECTION}, supports={"base": ["ux", "uw"]})


def test_a_line_in_two_chosen_sets_is_refused(tmp_path):
    mesh = _plane_truss()
    mesh.cell_data = {"gmsh:physical": [np.array([1, 1]), np.array([2, 2, 2]), np.array([3])]}
    meshio.write(tmp_path / "tags.vtu", mesh)
    read = read_mesh(tmp_path / "tags.vtu")
    read.element_sets["all"] = np.concatenate([read.element_sets["1"], read.element_sets["2"]])
    with pytest.raises(fm.ModelError, match=r"line between points 0 and 3 appears more than once.*2, all"):
        build_model(read, 2, {"2": {"element": "truss", "EA": 1.0}, "all": {"element": "truss", "EA": 1.0}})


def test_sets_without_two_node_lines_are_explained(tmp_path):
    points = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0], [1, 1, 0]])
    mesh = meshio.Mesh(points, [("line3", np.array([[0, 2, 1]])), ("triangle", np.array([[0, 1, 3]]))],
                       cell_data={"gmsh:physical": [np.array([5]), np.array([6])]})
    meshio.write(tmp_path / "curved.vtu", mesh)
    read = read_mesh(tmp_path / "curved.vtu")
    with pytest.raises(fm.ModelError, match=r"set '5' holds higher-order line cells \(line3: 1\)"):
        build_model(read, 2, {"5": {"element": "truss", "EA": 1.0}})
    with pytest.raises(fm.ModelError, match=r"set '6' has no 2-node line cells \(triangle: 1\)"):
        build_model(read, 2, {"6": {"element": "truss", "EA": 1.0}})


def test_io_modules_do_not_import_meshio():
    code = "import sys, flexmb.io.mesh, flexmb.io.export; print('meshio' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"
