"""Solid elements in result files and pictures (issue 32): VTU and XDMF volume cells read back with
meshio, the drawn boundary surface (counted, its area and enclosed volume against the brick's, its
normals outward), its colours, a picture that shows the solid, and modal bodies made of solids.

Independent values: the brick's own surface area 2 (ab + bc + ca) and volume abc, the counts of a
structured mesh's boundary faces (4 n^2 squares per brick side: 2 triangles each), the result's
own DOF and element-output series."""
from __future__ import annotations

import copy
import dataclasses

import meshio
import numpy as np
import pytest

import flexmb as fm
from flexmb.cms import ModalBodyData
from flexmb.checks import ModelError
from flexmb.io.export import step_mesh_data, write_vtu_series, write_xdmf
from flexmb.io.solid_faces import boundary_faces, face_triangles
from flexmb.io.solid_mesh import box
from flexmb.results import ModelLayout
from flexmb.viz.geometry import centrelines, structure_surface

LX, LY, LZ = 0.4, 0.1, 0.05                     # m, the bar
CELL_TYPES = {"hex8": "hexahedron", "tet10": "tetra10", "tet4": "tetra"}


def bar(kind: str, n: tuple[int, int, int] = (4, 1, 1)) -> tuple[fm.Model, np.ndarray, np.ndarray]:
    """A steel bar clamped at x = 0 under gravity along -z (model, coordinates, cells)."""
    X, cells = box(LX, LY, LZ, *n, kind)
    model = fm.Model(dim=3)
    nodes = model.add_nodes(X)
    model.add_solid(cells, E=2e11, nu=0.3, rho=7850.0, name="bar")
    for node in nodes[np.isclose(X[:, 0], 0.0)]:
        model.fix(int(node))
    model.set_gravity([0.0, 0.0, -9.81])
    return model, X, cells


@pytest.fixture(scope="module", params=["hex8", "tet10"])
def swinging(request) -> tuple[str, fm.TimeHistory]:
    """(kind, 5 mid-point steps of the bar released under gravity)."""
    return request.param, fm.integrate(bar(request.param)[0], 1e-4, 5e-4, progress=False)


def tip(result: fm.TimeHistory) -> tuple[int, np.ndarray]:
    """The node that moved most at the last step and its displacement (3,), m."""
    u = np.asarray(result.u[-1])[result.layout.translations()]                 # (n_nodes, 3)
    node = int(np.argmax(np.linalg.norm(u, axis=1)))
    return node, u[node]


# ------------------------------------------------------------------------ files
def test_vtu_holds_the_solid_cells(swinging, tmp_path):
    kind, result = swinging
    layout = result.layout
    pvd = write_vtu_series(result, tmp_path)
    mesh = meshio.read(sorted(pvd.parent.glob("*.vtu"))[-1])
    assert [(c.type, c.data.shape) for c in mesh.cells] == [(CELL_TYPES[kind], layout.groups[0].connectivity.shape)]
    np.testing.assert_array_equal(mesh.cells[0].data, layout.groups[0].connectivity)
    assert len(mesh.points) == layout.n_nodes
    node, u = tip(result)
    assert np.linalg.norm(u) > 1e-9                                            # the bar moved
    np.testing.assert_allclose(mesh.point_data["displacement"][node], u, rtol=0, atol=1e-12 * np.abs(u).max())
    np.testing.assert_allclose(mesh.points[node], layout.coordinates[node] + u, rtol=0, atol=1e-12 * LX)
    s_xx = np.asarray(result.elements[0]["s_xx"][-1])
    assert np.abs(s_xx).max() > 0.0
    np.testing.assert_allclose(mesh.cell_data["s_xx"][0], s_xx, rtol=0, atol=1e-12 * np.abs(s_xx).max())
    np.testing.assert_array_equal(mesh.cell_data["element"][0], np.arange(len(s_xx)))


def test_xdmf_holds_the_solid_cells(swinging, tmp_path):
    kind, result = swinging
    layout = result.layout
    with meshio.xdmf.TimeSeriesReader(write_xdmf(result, tmp_path / "r.xdmf")) as reader:
        points, cells = reader.read_points_cells()
        assert [(c.type, c.data.shape) for c in cells] == [(CELL_TYPES[kind], layout.groups[0].connectivity.shape)]
        np.testing.assert_array_equal(cells[0].data, layout.groups[0].connectivity)
        np.testing.assert_array_equal(points, layout.coordinates)              # the reference geometry
        assert reader.num_steps == result.n_steps
        _, point_data, cell_data = reader.read_data(reader.num_steps - 1)
    node, u = tip(result)
    np.testing.assert_allclose(point_data["displacement"][node], u, rtol=0, atol=1e-12 * np.abs(u).max())
    von_mises = np.asarray(result.elements[0]["von_mises"][-1])
    np.testing.assert_allclose(cell_data["von_mises"][0], von_mises, rtol=0, atol=1e-12 * von_mises.max())


def test_solids_beside_lines_in_a_mixed_topology(tmp_path):
    """A tet4 bar with a truss stay and a hex8 block: line, tetra and hexahedron cells in one XDMF
    Mixed topology and one VTU, each with its element outputs (NaN on the other groups)."""
    model, X, cells = bar("tet4", (2, 1, 1))
    far = model.add_node([LX, 0.0, 0.3])
    model.fix(far)
    model.add_truss([[far, int(np.argmin(np.linalg.norm(X - [LX, 0.0, LZ], axis=1)))]], EA=1e6, rho_A=1.0,
                    name="stay")
    Xb, hexes = box(0.1, 0.1, 0.1, 1, 1, 1, "hex8")
    block = model.add_nodes(Xb + [0.0, 1.0, 0.0])
    model.add_solid(block[hexes], E=1e9, nu=0.2, rho=1000.0, name="block")
    result = fm.integrate(model, 1e-4, 3e-4, progress=False)
    expected = [("tetra", len(cells)), ("line", 1), ("hexahedron", 1)]
    mesh = meshio.read(sorted(write_vtu_series(result, tmp_path).parent.glob("*.vtu"))[-1])
    assert [(c.type, len(c.data)) for c in mesh.cells] == expected
    with meshio.xdmf.TimeSeriesReader(write_xdmf(result, tmp_path / "r.xdmf")) as reader:
        _, xdmf_cells = reader.read_points_cells()
        _, point_data, cell_data = reader.read_data(reader.num_steps - 1)
    assert [(c.type, len(c.data)) for c in xdmf_cells] == expected
    np.testing.assert_array_equal(xdmf_cells[2].data, block[hexes])
    N = float(result.elements[1]["N"][-1][0])
    assert N != 0.0
    for read in (mesh.cell_data, cell_data):
        assert np.isnan(read["N"][0]).all() and np.isnan(read["N"][2]).all()
        assert read["N"][1][0] == pytest.approx(N, rel=1e-12)
        assert np.isnan(read["s_xx"][1]).all() and np.isfinite(read["s_xx"][2]).all()
    u = np.asarray(result.u[-1])[result.layout.translations()]
    np.testing.assert_allclose(point_data["displacement"], u, rtol=0, atol=1e-12 * np.abs(u).max())


def test_solid_kind_survives_the_result_file(tmp_path):
    result = fm.integrate(bar("tet10", (1, 1, 1))[0], 1e-4, 2e-4, progress=False)
    result.save(tmp_path / "run.h5")
    loaded = fm.load_result(tmp_path / "run.h5")
    assert loaded.layout.groups[0].solid_kind == "tet10"
    mesh = meshio.read(sorted(write_vtu_series(loaded, tmp_path / "vtu").parent.glob("*.vtu"))[-1])
    assert [c.type for c in mesh.cells] == ["tetra10"]


def test_group_of_unknown_cells_is_refused(swinging, tmp_path):
    """A layout whose group the exporter cannot name (a solid kind with the wrong width, a 5-node
    group) is refused naming the group, before any file is written."""
    _, result = swinging
    layout = result.layout
    good = layout.groups[0]
    for group in (dataclasses.replace(good, section={"shape": "solid", "cell": "tet4"}),
                  dataclasses.replace(good, section={"shape": "tube", "radius": 0.01},
                                      connectivity=good.connectivity[:, :5])):
        broken = copy.copy(result)
        broken.layout = dataclasses.replace(layout, groups=[group])
        with pytest.raises(ModelError, match="element group 'bar'"):
            write_vtu_series(broken, tmp_path / "vtu")
        with pytest.raises(ModelError, match="element group 'bar'"):
            write_xdmf(broken, tmp_path / "r.xdmf")
        with pytest.raises(ModelError, match="element group 'bar'"):
            step_mesh_data(broken, -1)
        if group.is_solid:                                          # a picture refuses it too
            with pytest.raises(ModelError, match="element group 'bar'"):
                structure_surface(broken.layout, np.zeros(layout.n_dof))
        assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------- surfaces
def triangles_of(surface) -> np.ndarray:
    """(n_cells, 3, 3) corner points of a Surface made of triangles only, m."""
    faces = surface.faces.reshape(-1, 4)
    assert np.all(faces[:, 0] == 3)
    return surface.points[faces[:, 1:]]


def area_and_volume(tri: np.ndarray) -> tuple[float, float]:
    """Area (m^2) of triangles (n, 3, 3) and the volume (m^3) they enclose if oriented outwards
    (divergence theorem: sum of x0 . (x1 x x2) / 6)."""
    area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1).sum()
    volume = np.einsum("ti,ti->", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])) / 6.0
    return float(area), float(volume)


@pytest.mark.parametrize("kind, n_faces, n_triangles", [("hex8", 24, 48), ("tet4", 48, 48), ("tet10", 48, 48)])
def test_boundary_surface_of_a_box(kind, n_faces, n_triangles):
    """2 x 2 x 2 cells: 4 squares on each of the 6 sides, a square one quad or two triangles;
    the triangles cover the brick's surface, outwards (they enclose its volume, not minus it)."""
    X, cells = box(LX, LY, LZ, 2, 2, 2, kind)
    faces, block, element = boundary_faces([(kind, cells)])
    assert len(faces) == n_faces
    n_per_cell = {"hex8": 6, "tet4": 4, "tet10": 4}[kind]
    # every other face is shared by two cells
    assert (len(cells) * n_per_cell - n_faces) % 2 == 0
    model = fm.Model(dim=3)
    model.add_nodes(X + [1e4, -2e4, 3e4])                      # far from the origin: volume by differences
    model.add_solid(cells, E=1e9, nu=0.3, name="brick")
    layout = ModelLayout.from_assembly(fm.Assembly(model))
    surface = structure_surface(layout, np.zeros(layout.n_dof))
    assert len(surface.cell_group) == n_triangles and np.all(surface.cell_group == 0)
    area, volume = area_and_volume(triangles_of(surface) - [1e4, -2e4, 3e4])
    # the points carry the round-off of coordinates near 3e4 m, 3e4 eps ~ 7e-12 m: 1e-10 of the sides
    area_exact = 2.0 * (LX * LY + LY * LZ + LZ * LX)
    assert area == pytest.approx(area_exact, rel=1e-9), f"area off by {area - area_exact:.3g} m^2"
    assert volume == pytest.approx(LX * LY * LZ, rel=1e-9), f"enclosed volume {volume} (negative: inward)"
    # each drawn triangle belongs to the element it is coloured by
    corners = np.sort(surface.point_nodes[:, 0][surface.faces.reshape(-1, 4)[:, 1:]], axis=1)
    assert all(set(c) <= set(cells[e]) for c, e in zip(corners, surface.cell_element))
    owner = surface.cell_values([np.arange(len(cells), dtype=float)])
    np.testing.assert_array_equal(owner, surface.cell_element)


def test_faces_between_groups_are_inside():
    """A tet4 brick split into two groups by element draws the same boundary as in one group."""
    X, cells = box(LX, LY, LZ, 2, 2, 2, "tet4")
    model = fm.Model(dim=3)
    model.add_nodes(X)
    left = X[cells].mean(axis=1)[:, 0] < 0.5 * LX
    model.add_solid(cells[left], E=1e9, nu=0.3, name="left")
    model.add_solid(cells[~left], E=2e9, nu=0.3, name="right")
    layout = ModelLayout.from_assembly(fm.Assembly(model))
    surface = structure_surface(layout, np.zeros(layout.n_dof))
    assert len(surface.cell_group) == 48
    assert set(surface.cell_group) == {0, 1}
    assert area_and_volume(triangles_of(surface))[1] == pytest.approx(LX * LY * LZ, rel=1e-12)
    outlines = centrelines(layout, np.zeros(layout.n_dof))         # the reference wireframe
    assert sum(len(c) for c in outlines) == 48 and all(c.shape[1:] == (4, 3) for c in outlines)


def test_surface_follows_the_deformation_and_the_nodal_values(swinging):
    kind, result = swinging
    layout = result.layout
    u = np.asarray(result.u[-1])
    surface = structure_surface(layout, 1e3 * u)
    nodes = surface.point_nodes[:, 0]
    x = layout.coordinates + 1e3 * u[layout.translations()]
    np.testing.assert_allclose(surface.points, x[nodes], rtol=0, atol=1e-12 * LX)
    np.testing.assert_array_equal(surface.point_values(np.arange(layout.n_nodes, dtype=float)), nodes)
    # the surface nodes are the corner nodes on the bar's sides (a tet10's mid-side nodes are not drawn)
    X = layout.coordinates
    on_side = (np.isclose(X, 0.0) | np.isclose(X, [LX, LY, LZ])).any(axis=1)
    corners = np.unique(layout.groups[0].connectivity[:, :4 if kind == "tet10" else 8])
    assert set(nodes) == set(np.flatnonzero(on_side)) & set(corners)


def test_picture_of_a_solid_shows_it(swinging):
    """The bar covers a good part of the picture in the surface colour (light steel blue: blue
    above red), which supports (grey), the title (black) and the axes triad do not."""
    from flexmb.viz.scene import render, structure_mesh

    _, result = swinging
    # what is drawn is the closed outer surface of the bar, not something inside or beside it
    drawn = structure_mesh(result.layout, np.zeros(result.layout.n_dof)).clean()
    assert drawn.n_open_edges == 0
    assert drawn.volume == pytest.approx(LX * LY * LZ, rel=1e-9)
    image = render(result, window_size=(300, 200), title="").astype(int)
    bluish = (image[..., 2] - image[..., 0] > 15).mean()
    assert bluish > 0.05, f"only {bluish:.1%} of the picture shows the bar"
    coloured = render(result, window_size=(300, 200), title="", color="von_mises").astype(int)
    assert (np.ptp(coloured, axis=2) > 30).mean() > 0.05


# ------------------------------------------------------------------- modal bodies
def test_modal_body_of_solids_draws_and_exports_its_surface(tmp_path):
    """A modal body made of a hex8 block: its mesh is the block's boundary triangles (2 x 2 x 1
    cells: 4 + 4 squares on the z sides, 2 + 2 on the y sides, 2 + 2 on the x sides), drawn and
    exported after the model's own cells (the body group's one element)."""
    block = fm.Model(dim=3)
    Xb, cells = box(LX, LY, LZ, 2, 2, 1, "hex8")
    block.add_nodes(Xb)
    block.add_solid(cells, E=2e11, nu=0.3, rho=7850.0, name="block")
    # solid nodes have no rotations: three corners besides the frame node hold the fixed-interface modes
    held = [int(np.argmin(np.linalg.norm(Xb - p, axis=1))) for p in ([LX, 0, 0], [0, LY, 0], [0, 0, LZ])]
    data = ModalBodyData.from_model(block, frame_node=0, n_modes=3, interface_nodes=held, name="block")
    model = fm.Model(dim=3)
    hub = model.add_node([0.0, 0.0, 0.0])
    model.add_modal_body(data, node=hub, stiffening=False, name="body")
    model.set_gravity([0.0, 0.0, -9.81])
    result = fm.integrate(model, 1e-3, 2e-3, progress=False)
    mesh = result.layout.groups[0].modal_mesh
    assert mesh.triangles.shape == (2 * 16, 3) and len(mesh.lines) == 0
    surface = structure_surface(result.layout, np.zeros(result.layout.n_dof))
    cells, at = [], 0
    while at < len(surface.faces):                              # the body group's own node is a short tube
        k = surface.faces[at]
        cells.append(surface.faces[at + 1:at + 1 + k])
        at += k + 1
    triangles = np.array([c for c in cells if len(c) == 3])
    assert len(triangles) == 32
    assert area_and_volume(surface.points[triangles])[1] == pytest.approx(LX * LY * LZ, rel=1e-12)
    vtu = meshio.read(sorted(write_vtu_series(result, tmp_path).parent.glob("*.vtu"))[-1])
    assert [(c.type, len(c.data)) for c in vtu.cells] == [("line", 1), ("triangle", 32)]   # the body group, its mesh
    assert len(vtu.points) == 1 + len(Xb)
    # the falling body's points move with it
    drop = vtu.point_data["displacement"][1:, 2]
    assert np.all(drop < 0.0)
