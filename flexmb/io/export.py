"""Results out: the deformed configuration per step as VTU files (+ a ParaView .pvd) or one XDMF series.

Every written step is a mesh of the elements of all groups in group order: a "line" cell per bar or
beam element, a "triangle" cell per shell element (the mid-surface) and a "tetra", "tetra10" or
"hexahedron" cell per solid element (tet4, tet10, hex8; VTK node order), consecutive groups of one
cell type in one cell block, with

* point data, (n_nodes, 3) each, 2D results padded with zeros: ``displacement`` (m),
  ``rotation`` (rad; 3D: the rotation vector, 2D: (0, 0, rz); zero at nodes without rotations),
  ``reaction`` (N) and ``reaction_moment`` (N m) support reactions, and in dynamics
  ``velocity`` (m/s) and ``angular_velocity`` (rad/s, spatial);
* cell data, (n_elements,) each: every element output of any group (``N``, ``M1``, ``My1``,
  ``axial_strain``, ..., units in :attr:`~flexmb.results.GroupLayout.outputs`; (n_elements, 3)
  for the shells' ``membrane_forces`` [N_xx, N_yy, N_xy] in N/m and ``bending_moments``
  [M_xx, M_yy, M_xy] in N m/m, in each element's co-rotated local axes), NaN on the elements of
  groups without that output; ``thickness`` (m) of shell elements when the model has shells
  (NaN on lines); ``group`` (group index) and ``element`` (index in its group, as in the
  quantity name ``N@group:element``).

Modal bodies (:class:`~flexmb.results.ModalMesh`, 2D or 3D): after the model's nodes come the
points of every modal body's FE mesh at their recovered positions x_i = r + R (X_i + Phi_i q)
(R = A(theta) in 2D, exp(hat(psi)) in 3D), and after the model's elements its lines and triangles
(a body of solid elements: the triangles of its boundary surface).
On those points ``displacement`` is x_i minus the reference (frame node + X_i), ``velocity``
dx_i/dt, ``rotation`` / ``angular_velocity`` those of the body frame (2D: (0, 0, theta); 3D: the
rotation vector psi and the spatial angular velocity), the reactions zero; on those cells the
element outputs and ``thickness`` are NaN (the modal coordinates are the body group's element
outputs ``q1``, ``q2``, ...), ``group`` is the body's group and ``element`` the cell's index in the
body's FE mesh (lines, then triangles).

Rigid bodies (:class:`~flexmb.multibody.body_shapes.BodyLayout`: a shape given to
``add_rigid_body``, else a link through the body's joint points): after those come the points of
every body's shape at x = x_c + R P (the body node's position x_c and rotation R, P in body axes)
and after those cells its faces as triangles (polygons cut into fans). On those points
``displacement`` is x minus the reference, ``velocity`` dx/dt = v_c + omega x (x - x_c),
``rotation`` / ``angular_velocity`` those of the body's node, the reactions zero; on those cells
the element outputs and ``thickness`` are NaN, ``group`` is -1, ``element`` the face's index in the
body's shape, and ``body`` the body's index in the layout's bodies (``flexmb info`` lists them by
name; ``body`` is -1 on all other cells).

For buckling modes (kind ``"modes"``) the points are the reference state moved by 0.1 times the
model size along the mode (:meth:`~flexmb.results.ModeShapes.shape_state`), while
``displacement`` and ``rotation`` are the unscaled mode (largest translation 1).

The time value of a step in the .pvd and the XDMF file is the step parameter (time in s, load
factor, critical load factor) when it increases strictly over the written steps; otherwise (an
arc-length path through a limit point, repeated eigenvalues) it is the step index, because
ParaView orders and merges steps by their time value. meshio is imported when a file is
written, never on ``import flexmb``.

Files written: ``folder/name_00000.vtu ...`` and ``folder/name.pvd`` (:func:`write_vtu_series`);
``run.xdmf`` and its HDF5 heavy data ``run.xdmf.h5`` (:func:`write_xdmf`; the XDMF name plus
``.h5``, so it never takes the name of a result file ``run.h5``). Neither function writes over
the result file it exports (the file a loaded result was read from) nor, unless
``overwrite=True``, over any existing file. Both write in a scratch folder and move the files
into place when all are complete: a failed write (disk full) raises :class:`ExportError`
naming the file and leaves no new file (the heavy data goes through the
:class:`~flexmb.io.guarded_file.FaultGuard`, so that HDF5 never meets the error).

Recovered stresses of a reduced component or a modal body
(:class:`~flexmb.cms.stress_recovery.RecoveredStresses`): :func:`write_stress_vtu_series` and
:func:`write_stress_xdmf` write the component's own FE mesh (a modal body's in its body frame) with
point data ``displacement`` (m), ``stress`` (n_nodes, 6) Voigt (Pa) and ``von_mises`` (Pa) and the
recovered element outputs as cell data (:func:`stress_mesh`).
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from xml.etree import ElementTree as ET

import numpy as np

from flexmb.elements.solid_shapes import NODES
from flexmb.io.guarded_file import FaultGuard
from flexmb.io.result_file import failure_reason
from flexmb.io.solid_mesh import MESHIO_KINDS, meshio_knows_solids
from flexmb.model import ModelError
from flexmb.multibody.body_shapes import body_points
from flexmb.results import GroupLayout, ModelLayout, Result

if TYPE_CHECKING:
    from flexmb.cms.stress_recovery import RecoveredStresses


def step_mesh_data(result: Result, step: int) -> tuple[np.ndarray, list[tuple[str, np.ndarray]],
                                                       dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The mesh of one step of a result, as meshio takes it.

    Returns
    -------
    points : (n_nodes, 3) current (deformed) positions, m.
    cells : ``[("line", (n, 2)), ("triangle", (m, 3)), ...]`` node indices of all groups'
        elements in group order, consecutive groups of one cell type in one block (an empty
        list for a model without elements).
    point_data : name -> (n_nodes, 3), see the module docstring.
    cell_data : name -> (n_el_total,) or (n_el_total, k), see the module docstring (one array
        per name over all blocks, not meshio's list per cell block; :func:`split_cell_data`
        makes that).
    """
    layout = _checked_layout(result)
    if not -result.n_steps <= step < result.n_steps:
        raise IndexError(f"step {step} does not exist (the result has {result.n_steps} steps)")
    step = int(step) % result.n_steps                                  # -1: the last step
    u = np.asarray(result.u[step], dtype=float)
    drawn = result.shape_state(step, result.drawn_scale()) if result.kind == "modes" else u
    points = _pad(np.concatenate([layout.positions(drawn), *layout.modal_mesh_positions(drawn)]))
    points = np.concatenate([points, *body_points(layout, drawn)])

    point_data = {}
    point_data["displacement"], point_data["rotation"] = _node_vectors(layout, u)
    point_data["reaction"], point_data["reaction_moment"] = _node_vectors(
        layout, np.asarray(result.reactions[step], dtype=float))
    if "v" in result.SERIES:
        point_data["velocity"], point_data["angular_velocity"] = _node_vectors(
            layout, np.asarray(result.v[step], dtype=float))
    if layout.modal_meshes:
        _add_modal_point_data(result, layout, step, u, point_data)
    if layout.bodies:
        _add_body_point_data(result, layout, step, u, point_data)

    cells = _cells(layout)
    if not cells:
        return points, cells, point_data, {}
    n_el = np.array([g.n_elements for g in layout.groups], dtype=np.int64)
    bounds = np.concatenate([[0], np.cumsum(n_el)])
    body_faces = [b.shape.triangle_faces() for b in layout.bodies]            # face of each triangle
    n_body = sum(len(f) for f in body_faces)
    # the modal meshes' and the bodies' cells come after the groups' elements
    n_modal = sum(len(m.lines) + len(m.triangles) for m in layout.modal_meshes) + n_body
    cell_data = {}
    for name in dict.fromkeys(name for store in result.elements for name in store):
        # a group without this output, or a step recorded without element outputs, stays NaN
        present = {gi: np.asarray(store[name][step], dtype=float) for gi, store in enumerate(result.elements)
                   if name in store and len(store[name]) > step}
        if not present:
            continue
        shapes = {values.shape[1:] for values in present.values()}
        if len(shapes) > 1:
            raise ValueError(f"element output {name!r} has per-element shapes {sorted(shapes)} in different "
                             "groups; one name must have one shape to be exported")
        values = np.full((bounds[-1] + n_modal, *shapes.pop()), np.nan)   # NaN on the modal meshes' cells
        for gi, group_values in present.items():
            values[bounds[gi]:bounds[gi + 1]] = group_values
        cell_data[name] = values
    if any(g.thickness is not None for g in layout.groups):
        cell_data["thickness"] = np.concatenate([np.full(g.n_elements, np.nan) if g.thickness is None
                                                 else g.thickness for g in layout.groups] + [np.full(n_modal, np.nan)])
    # a modal mesh's cells carry its group's index and their index in the body's FE mesh
    modal = [(gi, len(g.modal_mesh.lines) + len(g.modal_mesh.triangles)) for gi, g in enumerate(layout.groups)
             if g.modal_mesh is not None]
    cell_data["group"] = np.concatenate([np.repeat(np.arange(len(n_el), dtype=np.int64), n_el)]
                                        + [np.full(n, gi, dtype=np.int64) for gi, n in modal]
                                        + [np.full(n_body, -1, dtype=np.int64)])
    cell_data["element"] = np.concatenate([np.arange(bounds[-1], dtype=np.int64) - np.repeat(bounds[:-1], n_el)]
                                          + [np.arange(n, dtype=np.int64) for _, n in modal] + body_faces)
    if layout.bodies:
        cell_data["body"] = np.concatenate([np.full(len(cell_data["group"]) - n_body, -1, dtype=np.int64)]
                                           + [np.full(len(f), bi, dtype=np.int64) for bi, f in enumerate(body_faces)])
    return points, cells, point_data, cell_data


def vtu_series_paths(result: Result, folder: str | Path, name: str = "result", every: int = 1) -> list[Path]:
    """The files :func:`write_vtu_series` writes: one .vtu per written step, then the .pvd."""
    steps = _written_steps(result, every)
    folder = Path(folder)
    width = max(5, len(str(steps[-1])))
    return [folder / f"{name}_{k:0{width}d}.vtu" for k in steps] + [folder / f"{name}.pvd"]


def write_vtu_series(result: Result, folder: str | Path, name: str = "result", every: int = 1,
                     overwrite: bool = False) -> Path:
    """Write steps 0, every, 2 every, ... as ``folder/name_00000.vtu``, ... (deformed points, the
    number is the step index) and the ParaView collection ``folder/name.pvd`` listing them with
    their time values; returns the path of the .pvd (open it in ParaView).

    Refuses (before writing anything) a file that is the result's own file, and existing files
    unless ``overwrite``. The files are written in a scratch folder inside ``folder`` and moved
    into place when all are written: a failed export (disk full) raises :class:`ExportError`
    naming the file, and leaves no new file and the files already in ``folder`` as they were.
    """
    steps = _written_steps(result, every)
    _cells(result.layout)                       # an element group it cannot write: nothing is written
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{folder} is a file, not a folder for the VTU series")
    paths = vtu_series_paths(result, folder, name, every)
    check_outputs(paths, result, overwrite)
    return _write_pvd_series(paths, _time_values(result, steps), lambda i: step_mesh_data(result, steps[i]))


def _write_pvd_series(paths: list[Path], times: Sequence[float],
                      mesh: Callable[[int], tuple[np.ndarray, list, dict, dict]]) -> Path:
    """The VTU files ``paths[:-1]`` (the i-th from ``mesh(i)``: points, cells, point data, cell data)
    and the ParaView collection ``paths[-1]`` listing them at ``times``, written in a scratch folder
    and moved into place when all are written (:func:`_staged`); returns the .pvd's path."""
    import meshio

    pvd = paths[-1]
    with _staged(paths, pvd, "vtu") as staged:
        collection = ET.Element("VTKFile", type="Collection", version="0.1", byte_order="LittleEndian")
        datasets = ET.SubElement(collection, "Collection")
        for i, (t, file) in enumerate(zip(times, staged)):
            points, cells, point_data, cell_data = mesh(i)
            _written(file, paths, lambda: meshio.write(file, meshio.Mesh(
                points, cells, point_data=point_data, cell_data=split_cell_data(cell_data, cells))))
            ET.SubElement(datasets, "DataSet", timestep=repr(t), group="", part="0", file=file.name)
        ET.indent(collection)
        _written(staged[-1], paths, lambda: ET.ElementTree(collection).write(staged[-1], encoding="utf-8",
                                                                              xml_declaration=True))
    return pvd


def xdmf_heavy_data_path(path: str | Path) -> Path:
    """The HDF5 heavy-data file of the XDMF file ``path``: its full name plus ``.h5``
    (``run.xdmf`` -> ``run.xdmf.h5``), never the name of a result file ``run.h5``."""
    path = Path(path)
    return path.with_name(path.name + ".h5")


def write_xdmf(result: Result, path: str | Path, every: int = 1, overwrite: bool = False) -> Path:
    """Write steps 0, every, 2 every, ... to one XDMF time series ``path`` (.xdmf or .xmf) with
    its HDF5 heavy data next to it in :func:`xdmf_heavy_data_path` (``run.xdmf`` ->
    ``run.xdmf.h5``), through ``meshio.xdmf.TimeSeriesWriter``.

    XDMF keeps one geometry for the whole series: the points are the reference (undeformed)
    positions, and the deformed shape is the points plus ``displacement`` (ParaView: Warp By
    Vector on ``displacement``; for modes choose the scale). Point and cell data per step as in
    :func:`step_mesh_data`. Both files are written in a scratch folder beside ``path`` and
    moved into place at the end, so a failed export leaves no half-written file (a failed
    write, disk full, raises :class:`ExportError` naming the file). Refuses a
    file that is the result's own file, and existing files unless ``overwrite``. Returns the
    path of the .xdmf file.
    """
    steps = _written_steps(result, every)
    layout = _checked_layout(result)
    cells = _cells(layout)                      # an element group it cannot write: nothing is written
    path = Path(path).resolve()
    if path.suffix.lower() not in (".xdmf", ".xmf"):
        raise ValueError(f"{path}: an XDMF file needs the suffix .xdmf (or .xmf)")
    heavy = xdmf_heavy_data_path(path)
    check_outputs([path, heavy], result, overwrite)
    return _write_xdmf_series(path, _reference_points(layout), cells, _time_values(result, steps),
                              lambda i: step_mesh_data(result, steps[i])[2:])


def _write_xdmf_series(path: Path, points: np.ndarray, cells: list, times: Sequence[float],
                       data: Callable[[int], tuple[dict, dict]]) -> Path:
    """The XDMF time series ``path`` with its heavy data (:func:`xdmf_heavy_data_path`): one
    geometry (points, cells), then at ``times[i]`` the point and cell data ``data(i)``; written in a
    scratch folder and moved into place (:func:`_staged`); returns ``path``."""
    heavy = xdmf_heavy_data_path(path)
    with _staged([path, heavy], path, "xdmf") as (staged, staged_heavy):
        writer = _xdmf_writer(staged, staged_heavy, path)
        try:
            with writer:
                writer.write_points_cells(points, cells)
                writer.check()
                for i, t in enumerate(times):
                    point_data, cell_data = data(i)
                    writer.write_data(t, point_data=point_data, cell_data=split_cell_data(cell_data, cells))
                    writer.check()                        # stop at the first failed write
        except OSError as exc:
            if isinstance(exc, ExportError):
                raise
            raise ExportError(_not_written(path, path, exc), path, exc) from None   # the XML file
    return path


class ExportError(OSError):
    """An export could not be written (disk full, file size limit, ...): ``path`` is the file
    that failed, ``cause`` the operating system's error. Nothing of the export was kept."""

    def __init__(self, message: str, path: Path, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.cause = cause


@contextmanager
def _staged(paths: Sequence[Path], main: Path, kind: str) -> Iterator[list[Path]]:
    """Write ``paths`` (all in one folder) as the same names in a scratch folder beside them
    (yielded), moved into place when the block ends without error; the scratch folder is removed
    in any case."""
    folder = paths[0].parent
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".flexmb-{kind}-", dir=folder) as scratch:
        staged = [Path(scratch) / p.name for p in paths]
        yield staged
        for i, (source, target) in enumerate(zip(staged, paths)):
            try:
                os.replace(source, target)
            except OSError as exc:
                moved = ", ".join(p.name for p in paths[:i]) or "none"
                raise ExportError(f"cannot write {main}: moving {target.name} into place failed: "
                                  f"{failure_reason(exc)}; files moved in before: {moved}", target, exc) from None


def _written(staged: Path, paths: Sequence[Path], write: Callable[[], None]) -> None:
    """Run ``write`` (of the staged file ``staged``); an OSError becomes an ExportError naming the
    file of ``paths`` it was to become."""
    target = next(p for p in paths if p.name == staged.name)
    try:
        write()
    except OSError as exc:
        raise ExportError(_not_written(paths[-1], target, exc), target, exc) from None


def _not_written(main: Path, failed: Path, cause: BaseException) -> str:
    return (f"cannot write {main}: writing {failed} failed: {failure_reason(cause)}; nothing was written "
            "(files already there are as they were)")


def check_outputs(paths: Sequence[str | Path], result: Result | None = None, overwrite: bool = False,
                  inputs: Sequence[str | Path] = (), overwrite_hint: str = "pass overwrite=True") -> None:
    """Refuse to write ``paths`` when one is an input (the file ``result`` was read from, or one
    of ``inputs``; ValueError) or a folder (IsADirectoryError), or exists while ``overwrite`` is
    False (FileExistsError, whose message ends with ``overwrite_hint`` "to replace it")."""
    sources = [Path(p) for p in inputs]
    if result is not None and result.meta.get("file"):
        sources.append(Path(result.meta["file"]))
    for path in map(Path, paths):
        for source in sources:
            if same_file(path, source):
                raise ValueError(f"{path} is the input result file {source}: writing it would destroy "
                                 "the result; choose another name")
        if path.is_dir():
            raise IsADirectoryError(f"{path} is a folder; an output file cannot replace it")
        if path.exists() and not overwrite:
            raise FileExistsError(f"{path} exists; {overwrite_hint} to replace it")


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name the same file (through links, relative parts and hard links)."""
    a, b = Path(a), Path(b)
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


# ---------------------------------------------------------------- helpers
def _checked_layout(result: Result) -> ModelLayout:
    if result.layout is None:
        raise ModelError(f"cannot export this {result.kind} result: it carries no model layout "
                         "(nodes and elements); results of flexmb's analyses and result files have one")
    return result.layout


def _written_steps(result: Result, every: int) -> np.ndarray:
    """Indices of the steps to write, with clear errors for nothing to write."""
    _checked_layout(result)
    if result.n_steps == 0:
        raise ValueError(f"cannot export this {result.kind} result: it has no steps")
    if not isinstance(every, (int, np.integer)) or every < 1:
        raise ValueError(f"every must be a positive integer, got {every!r}")
    return np.arange(0, result.n_steps, every)


def _time_values(result: Result, steps: np.ndarray) -> list[float]:
    """Time value of each written step (see the module docstring)."""
    parameter = result.parameter[steps]
    if np.all(np.isfinite(parameter)) and np.all(np.diff(parameter) > 0):
        return [float(p) for p in parameter]
    return [float(k) for k in steps]


def _xdmf_writer(path: Path, heavy: Path, target: Path):
    """meshio's XDMF time series writer for ``path`` with its heavy data in ``heavy`` (the name of
    the XDMF file plus ``.h5``; meshio alone would take the stem, in the working directory, meshio
    issue #1442); ``target`` is the XDMF file ``path`` becomes, named in errors.

    The heavy data is written through a :class:`~flexmb.io.guarded_file.FaultGuard`, so that a
    failed write (disk full) never reaches HDF5 (h5py then cannot close the file, and the
    interpreter can crash at exit); ``check`` raises it as an :class:`ExportError`. The writer
    writes a model of several cell types (an XDMF "Mixed" topology) itself: meshio 5.3 fails on
    line cells in a Mixed topology (it tries to put the polyline's node count into the line
    array in place)."""
    import h5py
    import meshio
    from meshio._common import write_xml
    from meshio.xdmf.common import meshio_type_to_xdmf_index

    class MixedTopologyWriter(meshio.xdmf.TimeSeriesWriter):
        def __enter__(self) -> "MixedTopologyWriter":
            self.h5_filename = str(heavy)                     # the XML names its base name
            self.guard = FaultGuard(os.open(heavy, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666))
            try:
                self.h5_file = h5py.File(self.guard, "w")
            except BaseException:
                os.close(self.guard.fd)
                raise
            return self

        def __exit__(self, kind, *_) -> None:
            try:
                self.h5_file.close()
            finally:
                os.close(self.guard.fd)
            if kind is None:
                self.check()
                write_xml(self.filename, self.xdmf_file)

        def check(self) -> None:
            """Raise the first failed write of the heavy data."""
            if self.guard.fault is not None:
                failed = xdmf_heavy_data_path(target)
                raise ExportError(_not_written(target, failed, self.guard.fault), failed, self.guard.fault)

        def cells(self, cells: list[tuple[str, np.ndarray]], grid: ET.Element) -> None:
            if len(cells) == 1:
                super().cells(cells, grid)
                return
            # per cell: the XDMF type number (Polyline 2, followed by its node count 2; Triangle 4;
            # Tetrahedron 6; Hexahedron 9; Tetrahedron_10 38), its nodes
            rows = [np.column_stack([np.full((len(block), 2), 2), block]) if kind == "line"
                    else np.column_stack([np.full(len(block), meshio_type_to_xdmf_index[kind]), block])
                    for kind, block in cells]
            data = np.concatenate([r.ravel() for r in rows]).astype(np.int64)
            topology = ET.SubElement(grid, "Topology", TopologyType="Mixed",
                                     NumberOfElements=str(sum(len(block) for _, block in cells)))
            item = ET.SubElement(topology, "DataItem", DataType="Int", Dimensions=str(data.size),
                                 Format=self.data_format, Precision="8")
            item.text = self.numpy_to_xml_string(data)

    return MixedTopologyWriter(path)


def split_cell_data(cell_data: dict[str, np.ndarray], cells: list[tuple[str, np.ndarray]]
                    ) -> dict[str, list[np.ndarray]]:
    """Cell data over all cells (name -> (n_cells, ...)) as meshio wants it: name -> one array
    per cell block of ``cells``."""
    ends = np.cumsum([len(block) for _, block in cells])[:-1]
    return {name: np.split(values, ends) for name, values in cell_data.items()}


#: meshio cell type of each solid kind (VTK node order in both)
SOLID_CELL_TYPES = {kind: cell_type for cell_type, kind in MESHIO_KINDS.items()}


def _group_cell_type(group: GroupLayout) -> str:
    """meshio cell type of a group's elements: "line" (bars, beams; one-node groups come as
    zero-length lines), "triangle" (shells), "tetra", "tetra10" or "hexahedron" (solids, from
    the solid's kind); ModelError naming the group for anything else."""
    width = group.connectivity.shape[1]
    if group.is_solid:
        cell_type = SOLID_CELL_TYPES.get(group.solid_kind)
        if cell_type is not None and width == NODES[group.solid_kind]:
            return cell_type
        raise ModelError(f"element group {group.name!r} ({group.kind}): cannot export solid cells of kind "
                         f"{group.solid_kind!r} with {width} nodes each (known: "
                         + ", ".join(f"{k} with {NODES[k]}" for k in SOLID_CELL_TYPES) + ")")
    if width in (2, 3):
        return "line" if width == 2 else "triangle"
    raise ModelError(f"element group {group.name!r} ({group.kind}): cannot export elements of {width} nodes "
                     "that are not solids; VTU and XDMF cells are lines (2 nodes), triangles (3) and "
                     "solids (tet4, tet10, hex8)")


def _cells(layout: ModelLayout) -> list[tuple[str, np.ndarray]]:
    """meshio cell blocks of every group's elements in group order (:func:`_group_cell_type`:
    "line" (n, 2) for bars and beams, "triangle" (n, 3) for shells, "tetra" (n, 4), "tetra10"
    (n, 10) or "hexahedron" (n, 8) for solids), then every modal body's FE lines and triangles
    (its points numbered after the model's nodes, :func:`_reference_points`), consecutive parts
    of one type in one block, then every rigid body's faces as triangles (its shape's points
    after the modal meshes'); [] for a model without elements or bodies."""
    meshio_knows_solids()                       # meshio 5.3 cannot make a mesh of wedge15 cells without it
    parts = [(_group_cell_type(g), g.connectivity) for g in layout.groups]
    start = layout.n_nodes
    for mesh in layout.modal_meshes:
        parts += [("line", start + mesh.lines), ("triangle", start + mesh.triangles)]
        start += mesh.n_points
    for body in layout.bodies:
        parts.append(("triangle", start + body.shape.triangles()))
        start += len(body.shape.points)
    blocks: list[tuple[str, list[np.ndarray]]] = []
    for kind, cells in parts:
        if not len(cells):
            continue
        if blocks and blocks[-1][0] == kind:
            blocks[-1][1].append(cells)
        else:
            blocks.append((kind, [cells]))
    return [(kind, np.concatenate(parts).astype(np.int64)) for kind, parts in blocks]


def _reference_points(layout: ModelLayout) -> np.ndarray:
    """(n_points, 3) reference positions of the exported points: the model's nodes, then every
    modal body's FE nodes (frame node's reference position + X_i), then every rigid body's shape, m."""
    zero = np.zeros(layout.n_dof)
    return np.concatenate([_pad(np.concatenate([layout.coordinates, *layout.modal_mesh_positions(zero)])),
                           *body_points(layout, zero)])


def _body_rates(layout: ModelLayout, about: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """(n_body_points, 3) rates of the bodies' shape points at the DOF vector ``about`` (n_dof,)
    for DOF rates ``rate`` (n_dof,): v_c + omega x (x - x_c) with the body node's translation rate
    v_c and rotation rate omega (2D: (0, 0, rz')), m/s for velocities."""
    translation, rotation = _node_vectors(layout, rate)
    centres = _pad(layout.positions(about))
    return np.concatenate([translation[b.node] + np.cross(rotation[b.node], x - centres[b.node])
                           for b, x in zip(layout.bodies, body_points(layout, about))])


def _add_body_point_data(result: Result, layout: ModelLayout, step: int, u: np.ndarray,
                         point_data: dict[str, np.ndarray]) -> None:
    """Append the bodies' shape points to the point data: ``displacement`` x - X (modes: its
    linearisation about the reference state), ``rotation`` and ``angular_velocity`` those of the
    body's node, ``reaction`` and ``reaction_moment`` zero, ``velocity`` dx/dt."""
    node = np.concatenate([np.full(len(b.shape.points), b.node) for b in layout.bodies])
    if result.kind == "modes":
        about = getattr(result, "reference", None)
        moved = _body_rates(layout, np.zeros(layout.n_dof) if about is None else np.asarray(about, dtype=float), u)
    else:
        moved = np.concatenate(body_points(layout, u)) - np.concatenate(body_points(layout, np.zeros(layout.n_dof)))
    extra = {"displacement": moved, "rotation": _node_vectors(layout, u)[1][node],
             "reaction": np.zeros((len(node), 3)), "reaction_moment": np.zeros((len(node), 3))}
    if "velocity" in point_data:
        v = np.asarray(result.v[step], dtype=float)
        extra["velocity"] = _body_rates(layout, u, v)
        extra["angular_velocity"] = _node_vectors(layout, v)[1][node]
    for name, values in extra.items():
        point_data[name] = np.concatenate([point_data[name], values])


def _add_modal_point_data(result: Result, layout: ModelLayout, step: int, u: np.ndarray,
                          point_data: dict[str, np.ndarray]) -> None:
    """Append the modal meshes' points to the point data: ``displacement`` x_i - (X_frame + X_i)
    (modes: its linearisation about the reference state, the mode's own displacement),
    ``rotation`` and ``angular_velocity`` those of the frame (the modes' own rotation at the FE
    nodes is left out), ``reaction`` and ``reaction_moment`` zero, ``velocity`` dx_i/dt."""
    reference = np.concatenate(layout.modal_mesh_positions(np.zeros(layout.n_dof)))
    if result.kind == "modes":
        about = getattr(result, "reference", None)
        about = np.zeros(layout.n_dof) if about is None else np.asarray(about, dtype=float)
        moved = np.concatenate(layout.modal_mesh_velocities(about, u))      # the derivative along the mode
    else:
        moved = np.concatenate(layout.modal_mesh_positions(u)) - reference
    frame = np.concatenate([np.full(m.n_points, m.frame_node) for m in layout.modal_meshes])
    extra = {"displacement": _pad(moved), "rotation": _node_vectors(layout, u)[1][frame],
             "reaction": np.zeros((len(frame), 3)), "reaction_moment": np.zeros((len(frame), 3))}
    if "velocity" in point_data:
        v = np.asarray(result.v[step], dtype=float)
        extra["velocity"] = _pad(np.concatenate(layout.modal_mesh_velocities(u, v)))
        extra["angular_velocity"] = _node_vectors(layout, v)[1][frame]
    for name, values in extra.items():
        point_data[name] = np.concatenate([point_data[name], values])


def _pad(x: np.ndarray) -> np.ndarray:
    """(n, dim) -> (n, 3) with zero z in 2D."""
    out = np.zeros((len(x), 3))
    out[:, :x.shape[1]] = x
    return out


def _node_vectors(layout: ModelLayout, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Translational (n_nodes, 3) and rotational (n_nodes, 3) parts of a DOF vector x (n_dof,).

    2D rotations are about z; nodes without rotation DOFs get zero rotation.
    """
    rotation = np.zeros((layout.n_nodes, 3))
    rot = layout.rotations()
    if layout.dim == 3:
        rotation[layout.rotation_nodes] = x[rot]
    else:
        rotation[layout.rotation_nodes, 2] = x[rot[:, 0]]
    return _pad(x[layout.translations()]), rotation


# ------------------------------------------------------------------ recovered stresses (issue 32, item 3)
def stress_mesh(recovered: RecoveredStresses, step: int) -> tuple[np.ndarray, list[tuple[str, np.ndarray]],
                                                                     dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The mesh of one step of recovered stresses (:class:`~flexmb.cms.stress_recovery.RecoveredStresses`),
    as meshio takes it: points (n_nodes, 3) the component model's *reference* nodes (a modal body's
    body frame, m), cells of its element groups as :func:`step_mesh_data` gives them, point data
    ``displacement`` (n_nodes, 3) m, ``stress`` (n_nodes, 6) Pa (Voigt s_xx, s_yy, s_zz, s_yz, s_xz,
    s_xy), ``von_mises`` (n_nodes,) Pa (NaN off the solids), and cell data every recovered element
    output (NaN on groups without it), ``group`` and ``element``."""
    if not -recovered.n_steps <= step < recovered.n_steps:
        raise IndexError(f"step {step} does not exist ({recovered.n_steps} recovered steps)")
    points, cells, n_el = _stress_geometry(recovered)
    return (points, cells, *_stress_data(recovered, n_el, step))


def _stress_geometry(recovered: RecoveredStresses) -> tuple[np.ndarray, list, np.ndarray]:
    """The reference points (n_nodes, 3), the cells and the element count per group (n_g,) of the
    recovered component's model (the same for every step)."""
    component = recovered.component
    layout = ModelLayout.from_assembly(component.assembly)
    n_el = np.array([g.n_elements for g in layout.groups], dtype=np.int64)
    return _pad(component.model.coordinates), _cells(layout), n_el


def _stress_data(recovered: RecoveredStresses, n_el: np.ndarray, step: int) -> tuple[dict, dict]:
    """Point and cell data of one recovered step (:func:`stress_mesh`); n_el (n_g,) elements per group."""
    point_data = {"displacement": recovered.displacement[step], "stress": recovered.node_stress[step],
                  "von_mises": recovered.von_mises[step]}
    bounds = np.concatenate([[0], np.cumsum(n_el)])
    cell_data = {}
    for name in dict.fromkeys(name for group in recovered.elements for name in group):
        present = {gi: group[name][step] for gi, group in enumerate(recovered.elements) if name in group}
        shapes = {values.shape[1:] for values in present.values()}
        if len(shapes) > 1:
            raise ValueError(f"recovered output {name!r} has per-element shapes {sorted(shapes)} in different "
                             "groups; one name must have one shape to be exported")
        values = np.full((bounds[-1], *shapes.pop()), np.nan)
        for gi, group_values in present.items():
            values[bounds[gi]:bounds[gi + 1]] = group_values
        cell_data[name] = values
    cell_data["group"] = np.repeat(np.arange(len(n_el), dtype=np.int64), n_el)
    cell_data["element"] = np.arange(bounds[-1], dtype=np.int64) - np.repeat(bounds[:-1], n_el)
    return point_data, cell_data


def _stress_times(recovered: RecoveredStresses) -> list[float]:
    """Time value of each recovered step: its time when the times increase strictly, else its index."""
    times = recovered.times
    if times is not None and np.all(np.isfinite(times)) and np.all(np.diff(times) > 0):
        return [float(t) for t in times]
    return [float(k) for k in range(recovered.n_steps)]


def write_stress_vtu_series(recovered: RecoveredStresses, folder: str | Path, name: str = "stress",
                            overwrite: bool = False) -> Path:
    """Write every recovered step as ``folder/name_00000.vtu`` ... (points deformed by
    ``displacement``, the data of :func:`stress_mesh`) and the collection ``folder/name.pvd``
    with their times; returns the .pvd's path. Existing files are refused unless ``overwrite``;
    written in a scratch folder and moved into place as :func:`write_vtu_series` does."""
    if recovered.n_steps == 0:
        raise ValueError("cannot export recovered stresses without steps")
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{folder} is a file, not a folder for the VTU series")
    width = max(5, len(str(recovered.n_steps - 1)))
    paths = [folder / f"{name}_{k:0{width}d}.vtu" for k in range(recovered.n_steps)] + [folder / f"{name}.pvd"]
    check_outputs(paths, None, overwrite)
    points, cells, n_el = _stress_geometry(recovered)

    def deformed(k: int) -> tuple[np.ndarray, list, dict, dict]:
        point_data, cell_data = _stress_data(recovered, n_el, k)
        return points + point_data["displacement"], cells, point_data, cell_data

    return _write_pvd_series(paths, _stress_times(recovered), deformed)


def write_stress_xdmf(recovered: RecoveredStresses, path: str | Path, overwrite: bool = False) -> Path:
    """Write the recovered steps to one XDMF time series ``path`` (.xdmf) with its heavy data in
    :func:`xdmf_heavy_data_path`: the reference points (deformed shape = points + ``displacement``),
    the data of :func:`stress_mesh` per step; refuses existing files unless ``overwrite``; returns
    the path of the .xdmf file."""
    if recovered.n_steps == 0:
        raise ValueError("cannot export recovered stresses without steps")
    path = Path(path).resolve()
    if path.suffix.lower() not in (".xdmf", ".xmf"):
        raise ValueError(f"{path}: an XDMF file needs the suffix .xdmf (or .xmf)")
    heavy = xdmf_heavy_data_path(path)
    check_outputs([path, heavy], None, overwrite)
    points, cells, n_el = _stress_geometry(recovered)
    return _write_xdmf_series(path, points, cells, _stress_times(recovered),
                              lambda k: _stress_data(recovered, n_el, k))
