"""Results out through meshio: VTU series + .pvd and XDMF read back with the result's own values."""
from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from pathlib import Path

import meshio
import numpy as np
import pytest

import flexmb as fm
from models import spinning_bar
from flexmb.io.export import step_mesh_data, write_vtu_series, write_xdmf, xdmf_heavy_data_path
from flexmb.results import ModelLayout, StaticPath


# ------------------------------------------------------------------ results
@pytest.fixture(scope="module")
def spinning_beam() -> fm.TimeHistory:
    """A free 3D beam spinning about a skew axis, 21 steps."""
    asm, v0 = spinning_bar()
    return fm.integrate(asm, 0.005, 0.1, v0=v0)


@pytest.fixture(scope="module")
def guyed_cantilever() -> fm.StaticPath:
    """2D: a clamped beam with a tip load, held by a stay (truss) from a pin above its root."""
    m = fm.Model(dim=2)
    beam = m.add_nodes(np.c_[np.linspace(0, 2, 5), np.zeros(5)])
    anchor = m.add_node([0.0, 1.0])
    m.add_beam2d(np.c_[beam[:-1], beam[1:]], EA=1e7, EI=1e4, name="girder")
    m.add_truss([[anchor, beam[-1]], [anchor, beam[2]]], EA=1e6, name="stays")
    m.fix(beam[0])
    m.fix(anchor)
    m.add_load(beam[-1], "uy", -2e3)
    return fm.load_control(m, 3)


@pytest.fixture(scope="module")
def strip_modes() -> fm.ModeShapes:
    """Lateral-torsional buckling modes of a cantilever strip loaded at its tip."""
    m = fm.Model(dim=3)
    x = np.linspace(0.0, 1.0, 5)
    n = m.add_nodes(np.c_[x, np.zeros(5), np.zeros(5)])
    m.add_beam3d(np.c_[n[:-1], n[1:]], EA=5.25e6, GJ=1.69, EI_y=2.19e3, EI_z=0.219, y_axis=(0.0, 1.0, 0.0))
    m.fix(n[0])
    m.add_load(n[-1], "uz", 1.0)
    return fm.linear_buckling(m, n_modes=3).mode_shapes()


RESULTS = ["spinning_beam", "guyed_cantilever", "strip_modes"]


def expected(result: fm.Result, k: int) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Points, point data and cell data of step k built from the result's public accessors."""
    layout = result.layout
    nodes = range(layout.n_nodes)
    trans = ("ux", "uy", "uz")[:layout.dim]

    def node_array(series, names) -> np.ndarray:
        out = np.zeros((layout.n_nodes, 3))
        for i in nodes:
            for j, d in enumerate(names):
                if d and d in layout.dof_names(i):
                    out[i, j] = series(i, d)[k]
        return out

    rot = ("rx", "ry", "rz") if layout.dim == 3 else (None, None, "rz")
    point_data = {"displacement": node_array(result.dof, trans), "rotation": node_array(result.dof, rot),
                  "reaction": node_array(result.reaction, trans),
                  "reaction_moment": node_array(result.reaction, rot)}
    if result.kind == "dynamic":
        point_data["velocity"] = node_array(result.velocity, trans)
        point_data["angular_velocity"] = node_array(result.velocity, rot)
    X = np.zeros((layout.n_nodes, 3))
    X[:, :layout.dim] = layout.coordinates
    scale = 0.1 * layout.characteristic_length if result.kind == "modes" else 1.0
    points = X + scale * point_data["displacement"]

    # modes carry no section forces: their files have only the group and element indices
    names = {} if result.kind == "modes" else dict.fromkeys(n for g in layout.groups for n in g.outputs)
    cell_data = {name: np.concatenate([result.element(gi, name)[k] if name in g.outputs
                                       else np.full(g.n_elements, np.nan)
                                       for gi, g in enumerate(layout.groups)]) for name in names}
    cell_data["group"] = np.concatenate([np.full(g.n_elements, gi) for gi, g in enumerate(layout.groups)])
    cell_data["element"] = np.concatenate([np.arange(g.n_elements) for g in layout.groups])
    return points, point_data, cell_data


def assert_same(actual: dict[str, np.ndarray], wanted: dict[str, np.ndarray], what: str) -> None:
    assert sorted(actual) == sorted(wanted), what
    for name, value in wanted.items():
        np.testing.assert_allclose(np.asarray(actual[name]), value, rtol=1e-12, atol=1e-12,
                                   err_msg=f"{what}: {name}")          # NaN where NaN


def pvd_entries(pvd: Path) -> list[tuple[float, str]]:
    root = ET.parse(pvd).getroot()
    assert root.get("type") == "Collection"
    return [(float(d.get("timestep")), d.get("file")) for d in root.iter("DataSet")]


# ------------------------------------------------------------------ tests
def test_expected_data_covers_every_kind(spinning_beam, guyed_cantilever, strip_modes):
    """The three results exercise 3D rotations and velocities, 2D rotations at some nodes only,
    groups with different outputs (NaN cells), and mode scaling."""
    _, pd, cd = expected(guyed_cantilever, 2)
    assert np.all(np.isnan(cd["M1"][4:])) and np.all(np.isfinite(cd["M1"][:4]))
    assert np.any(pd["rotation"][:5, 2] != 0) and np.all(pd["rotation"][5] == 0)
    assert np.any(expected(spinning_beam, 5)[1]["angular_velocity"] != 0)
    assert np.all(np.diff(strip_modes.parameter) > 0) and strip_modes.n_steps == 3


@pytest.mark.parametrize("name", RESULTS)
def test_step_mesh_data_is_the_result(name, request):
    result = request.getfixturevalue(name)
    for k in range(result.n_steps):
        points, cells, point_data, cell_data = step_mesh_data(result, k)
        X, pd, cd = expected(result, k)
        np.testing.assert_allclose(points, X, rtol=0, atol=1e-12)
        assert len(cells) == 1 and cells[0][0] == "line"
        np.testing.assert_array_equal(cells[0][1], np.concatenate([g.connectivity for g in result.layout.groups]))
        assert_same(point_data, pd, f"{name} step {k} point data")
        assert_same(cell_data, cd, f"{name} step {k} cell data")


@pytest.mark.parametrize("name", RESULTS)
def test_vtu_series_reads_back_with_the_same_values(name, request, tmp_path):
    result = request.getfixturevalue(name)
    pvd = write_vtu_series(result, tmp_path / "out", name=name)
    assert pvd == tmp_path / "out" / f"{name}.pvd"
    entries = pvd_entries(pvd)
    assert entries == [(t, f"{name}_{k:05d}.vtu") for k, t in enumerate(result.parameter)]
    for k, (_, file) in enumerate(entries):
        mesh = meshio.read(pvd.parent / file)
        X, pd, cd = expected(result, k)
        np.testing.assert_allclose(mesh.points, X, rtol=0, atol=1e-12)
        assert [c.type for c in mesh.cells] == ["line"]
        np.testing.assert_array_equal(mesh.cells[0].data, np.concatenate([g.connectivity for g in result.layout.groups]))
        assert_same(mesh.point_data, pd, f"{file} point data")
        assert_same({n: v[0] for n, v in mesh.cell_data.items()}, cd, f"{file} cell data")


@pytest.mark.parametrize("name", RESULTS)
def test_xdmf_reads_back_with_the_same_values(name, request, tmp_path, monkeypatch):
    result = request.getfixturevalue(name)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    path = write_xdmf(result, tmp_path / "out" / f"{name}.xdmf")
    # the heavy data sits next to the .xdmf under its own name, not in the working directory
    # (meshio issue #1442), and no scratch folder is left behind
    assert sorted(p.name for p in path.parent.iterdir()) == [f"{name}.xdmf", f"{name}.xdmf.h5"]
    assert xdmf_heavy_data_path(path) == path.parent / f"{name}.xdmf.h5"
    assert list(elsewhere.iterdir()) == [] and Path.cwd() == elsewhere
    layout = result.layout
    with meshio.xdmf.TimeSeriesReader(path) as reader:
        points, cells = reader.read_points_cells()
        X = np.zeros((layout.n_nodes, 3))
        X[:, :layout.dim] = layout.coordinates
        np.testing.assert_array_equal(points, X)                  # one reference geometry
        np.testing.assert_array_equal(cells[0].data, np.concatenate([g.connectivity for g in layout.groups]))
        assert reader.num_steps == result.n_steps
        for k in range(reader.num_steps):
            t, point_data, cell_data = reader.read_data(k)
            _, pd, cd = expected(result, k)
            assert t == result.parameter[k]
            assert_same(point_data, pd, f"{path.name} step {k} point data")
            assert_same({n: v[0] for n, v in cell_data.items()}, cd, f"{path.name} step {k} cell data")


def test_every_writes_every_nth_step(spinning_beam, tmp_path):
    pvd = write_vtu_series(spinning_beam, tmp_path, every=4)
    steps = np.arange(0, 21, 4)
    assert pvd_entries(pvd) == [(spinning_beam.t[k], f"result_{k:05d}.vtu") for k in steps]
    assert sorted(p.name for p in tmp_path.glob("*.vtu")) == [f"result_{k:05d}.vtu" for k in steps]
    with meshio.xdmf.TimeSeriesReader(write_xdmf(spinning_beam, tmp_path / "r.xdmf", every=4)) as reader:
        reader.read_points_cells()
        times = [reader.read_data(i)[0] for i in range(reader.num_steps)]
        np.testing.assert_allclose(reader.read_data(2)[1]["velocity"], expected(spinning_beam, 8)[1]["velocity"],
                                   rtol=0, atol=1e-12)
    assert times == [spinning_beam.t[k] for k in steps]


def test_parameter_that_does_not_increase_is_replaced_by_the_step_index(guyed_cantilever, tmp_path):
    path = copy.deepcopy(guyed_cantilever)
    lam = path.load_factors.copy()
    lam[2] = lam[1]                                              # as at a limit point of an arc-length path
    path.load_factors = lam                                      # series are read-only arrays: replace it
    assert [t for t, _ in pvd_entries(write_vtu_series(path, tmp_path))] == [0.0, 1.0, 2.0]
    with meshio.xdmf.TimeSeriesReader(write_xdmf(path, tmp_path / "r.xdmf")) as reader:
        reader.read_points_cells()
        assert [reader.read_data(i)[0] for i in range(3)] == [0.0, 1.0, 2.0]


def test_files_open_in_vtk_readers(spinning_beam, tmp_path):
    """VTK's .pvd and XDMF readers (those of ParaView, through pyvista) see the time series."""
    import pyvista as pv

    reader = pv.get_reader(str(write_vtu_series(spinning_beam, tmp_path, every=10)))
    assert reader.time_values == [spinning_beam.t[k] for k in (0, 10, 20)]
    reader.set_active_time_value(spinning_beam.t[10])
    grid = reader.read()[0]
    assert grid.n_cells == 4 and "N" in grid.cell_data
    np.testing.assert_allclose(grid.points, expected(spinning_beam, 10)[0], rtol=0, atol=1e-12)
    reader = pv.get_reader(str(write_xdmf(spinning_beam, tmp_path / "r.xdmf", every=10)))
    assert reader.time_values == [spinning_beam.t[k] for k in (0, 10, 20)]
    reader.set_active_time_value(spinning_beam.t[20])
    # meshio's temporal collection; its reference grid "mesh" comes as a second, static block
    grid = reader.read()["TimeSeries_meshio"]
    assert grid.n_cells == 4 and "N" in grid.cell_data
    np.testing.assert_allclose(grid.point_data["displacement"], expected(spinning_beam, 20)[1]["displacement"],
                               rtol=0, atol=1e-12)


# ------------------------------------------------------------------ errors
def test_nothing_to_write_is_an_error(guyed_cantilever, tmp_path):
    empty = StaticPath(guyed_cantilever.layout)
    with pytest.raises(ValueError, match="static result: it has no steps"):
        write_vtu_series(empty, tmp_path)
    with pytest.raises(ValueError, match="static result: it has no steps"):
        write_xdmf(empty, tmp_path / "r.xdmf")
    bare = copy.copy(guyed_cantilever)
    bare.layout = None
    with pytest.raises(fm.ModelError, match="carries no model layout"):
        write_xdmf(bare, tmp_path / "r.xdmf")
    with pytest.raises(fm.ModelError, match="carries no model layout"):
        step_mesh_data(bare, 0)
    with pytest.raises(ValueError, match="every must be a positive integer, got 0"):
        write_vtu_series(guyed_cantilever, tmp_path, every=0)
    with pytest.raises(ValueError, match=r"r\.h5: an XDMF file needs the suffix \.xdmf"):
        write_xdmf(guyed_cantilever, tmp_path / "r.h5")
    with pytest.raises(IndexError, match="step 3 does not exist"):
        step_mesh_data(guyed_cantilever, 3)
    assert not list(tmp_path.iterdir())
    assert isinstance(guyed_cantilever.layout, ModelLayout)          # the copy left the fixture intact


# ------------------------------------------------------------------ files kept safe
def test_xdmf_beside_its_result_file_leaves_it_intact(guyed_cantilever, tmp_path):
    """The heavy data of run.xdmf is run.xdmf.h5: it once was run.h5, the result file itself."""
    source = guyed_cantilever.save(tmp_path / "run.h5")
    before = source.read_bytes()
    path = write_xdmf(fm.load_result(source), tmp_path / "run.xdmf")
    assert source.read_bytes() == before
    assert fm.load_result(source).n_steps == guyed_cantilever.n_steps
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.h5", "run.xdmf", "run.xdmf.h5"]
    with meshio.xdmf.TimeSeriesReader(path) as reader:
        reader.read_points_cells()
        assert reader.num_steps == guyed_cantilever.n_steps


def test_exports_refuse_the_file_they_export(guyed_cantilever, tmp_path):
    named_like_heavy_data = guyed_cantilever.save(tmp_path / "r.xdmf.h5")
    with pytest.raises(ValueError, match=r"r\.xdmf\.h5 is the input result file .*choose another name"):
        write_xdmf(fm.load_result(named_like_heavy_data), tmp_path / "r.xdmf", overwrite=True)
    named_like_collection = guyed_cantilever.save(tmp_path / "s.pvd")
    with pytest.raises(ValueError, match=r"s\.pvd is the input result file"):
        write_vtu_series(fm.load_result(named_like_collection), tmp_path, name="s", overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.xdmf.h5", "s.pvd"]


def test_existing_files_are_replaced_only_when_asked(guyed_cantilever, tmp_path):
    write_xdmf(guyed_cantilever, tmp_path / "r.xdmf")
    (tmp_path / "r.xdmf").unlink()                   # the heavy data left alone is still protected
    with pytest.raises(FileExistsError, match=r"r\.xdmf\.h5 exists; pass overwrite=True to replace it"):
        write_xdmf(guyed_cantilever, tmp_path / "r.xdmf")
    assert not (tmp_path / "r.xdmf").exists()
    write_xdmf(guyed_cantilever, tmp_path / "r.xdmf", overwrite=True)
    pvd = write_vtu_series(guyed_cantilever, tmp_path / "vtu", every=2)
    pvd.unlink()
    (tmp_path / "vtu" / "result_00000.vtu").unlink()     # every file of the series is checked
    with pytest.raises(FileExistsError, match=r"result_00002\.vtu exists"):
        write_vtu_series(guyed_cantilever, tmp_path / "vtu", every=2)
    assert write_vtu_series(guyed_cantilever, tmp_path / "vtu", every=2, overwrite=True) == pvd
    (tmp_path / "folder.xdmf").mkdir()
    with pytest.raises(IsADirectoryError, match=r"folder\.xdmf is a folder"):
        write_xdmf(guyed_cantilever, tmp_path / "folder.xdmf", overwrite=True)
    with pytest.raises(NotADirectoryError, match=r"r\.xdmf is a file, not a folder for the VTU series"):
        write_vtu_series(guyed_cantilever, tmp_path / "r.xdmf")


def test_failed_xdmf_export_leaves_no_file(guyed_cantilever, tmp_path, monkeypatch):
    import flexmb.io.export as export

    real = export.step_mesh_data

    def fails_at_step_2(result, step):
        if step == 2:
            raise RuntimeError("disk trouble at step 2")
        return real(result, step)

    monkeypatch.setattr(export, "step_mesh_data", fails_at_step_2)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RuntimeError, match="disk trouble at step 2"):
        write_xdmf(guyed_cantilever, tmp_path / "out" / "r.xdmf")
    assert Path.cwd() == tmp_path
    assert list((tmp_path / "out").iterdir()) == [], "a half-written export or its scratch folder was left"
