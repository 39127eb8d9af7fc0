"""Meshes in: read nodes and named element / node sets from any file meshio reads, build a Model.

:func:`read_mesh` turns a mesh file (Gmsh ``.msh``, VTU, Abaqus ``.inp``, ...) into a
:class:`Mesh`: the points and, per named set, the 2-node line cells (element sets), the 3-node
triangle cells (triangle sets, for shells) with their cell data, and the points (node sets).
:func:`build_model` makes a :class:`~flexmb.model.Model` from chosen element sets, one element
group per set, and fixes the points of chosen support sets::

    model, node_of_point = build_model("meshes/portal_frame_3d.msh", dim=3,
        groups={"columns": {"element": "beam3d", "EA": 2e9, "GJ": 1e6, "EI_y": 3e6, "EI_z": 3e6},
                "beams": {"element": "beam3d", "EA": 2e9, "GJ": 1e6, "EI_y": 3e6, "EI_z": 3e6}},
        supports={"base": "all"})

Shells take the triangles of a set; a property given as a string is the name of a cell data
field of the file, read per element (VTU cell data; meshio 5.3 does not read Gmsh's
``$ElementData`` reliably)::

    model, node_of_point = build_model("meshes/plate_two_thickness.vtu", dim=3,
        groups={"1": {"element": "shell", "E": 70e9, "nu": 0.3, "thickness": "thickness",
                      "rho": 2700.0, "name": "plate"}},
        supports={"2": "all"})

Per set constants (a thickness per Gmsh physical group or Abaqus ``*ELSET``) need no cell data:
one group per set, each with its own numbers.

Where the sets come from:

* meshio's ``cell_sets``: Gmsh 4 physical groups with names, Abaqus ``*ELSET``, ...;
* the ``gmsh:physical`` cell tags (Gmsh 2.2 files, or a Gmsh mesh converted to VTU by meshio):
  named through ``$PhysicalNames`` when the file has them (meshio's ``field_data``), otherwise
  by the tag number as a string (``"3"``); tags of different dimensions that share a number and
  have no name fall into one set;
* meshio's ``point_sets`` (Abaqus ``*NSET``), node sets only.

Every set's cells also give a node set with all their points, so a set of line elements can be a
support set too. meshio is imported when a mesh is read, never on ``import flexmb``.
"""
from __future__ import annotations

import contextlib
import io
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from flexmb.model import Model, ModelError

if TYPE_CHECKING:
    import meshio

#: element name in ``build_model(groups=...)`` -> Model method adding such a group
ELEMENTS = {"truss": "add_truss", "beam2d": "add_beam2d", "beam3d": "add_beam3d", "shell": "add_shell"}
#: cell data that are bookkeeping of the file formats, not properties
_FORMAT_CELL_DATA = ("gmsh:physical", "gmsh:geometrical")


@dataclass
class Mesh:
    """Points and named sets of a mesh file.

    ``points`` (n_points, 3) in m (2D files padded with z = 0); ``element_sets``: set name ->
    (n_el, 2) point indices of the set's 2-node line cells; ``triangle_sets``: set name ->
    (n_el, 3) point indices of its 3-node triangles; ``triangle_data``: set name -> {cell data
    name -> (n_el,) values of its triangles, in the order of ``triangle_sets``}; ``node_sets``:
    set name -> sorted unique point indices (every point of the set's cells of any type, and
    meshio point sets); ``skipped_cells``: set name -> {cell type: count} of the set's cells
    that are neither 2-node lines nor vertices (triangles, 3-node lines, ...), left out of
    ``element_sets`` (triangles are in ``triangle_sets``).
    """

    path: Path
    points: np.ndarray
    element_sets: dict[str, np.ndarray]
    node_sets: dict[str, np.ndarray]
    skipped_cells: dict[str, dict[str, int]] = field(default_factory=dict)
    triangle_sets: dict[str, np.ndarray] = field(default_factory=dict)
    triangle_data: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)

    @property
    def n_points(self) -> int:
        return len(self.points)

    def describe_sets(self) -> str:
        """One line listing the element and node sets, for error messages."""
        elements = ", ".join([f"{k} ({len(v)} lines)" for k, v in self.element_sets.items()]
                             + [f"{k} ({len(v)} triangles)" for k, v in self.triangle_sets.items()]) or "none"
        nodes = ", ".join(f"{k} ({len(v)} points)" for k, v in self.node_sets.items()) or "none"
        return f"element sets: {elements}; node sets: {nodes}"


def read_with_meshio(path: str | Path, caller: str) -> "meshio.Mesh":
    """The meshio mesh of the file ``path``, read for the function named ``caller`` (its error
    messages name both). Raises FileNotFoundError if ``path`` does not exist and ModelError (a
    ValueError) naming the file if it is a folder, empty, or a file meshio cannot read (with
    meshio's reason); what meshio prints while reading becomes one warning."""
    if not isinstance(path, (str, Path)):
        raise ModelError(f"{caller}: path must be the name of a mesh file (str or pathlib.Path), got {path!r} "
                         f"({type(path).__name__})")
    path = Path(path)
    if path.is_dir():
        raise ModelError(f"mesh file {path} is a folder, not a file; name the mesh file in it")
    if not path.is_file():
        raise FileNotFoundError(f"mesh file {path} does not exist")
    if path.stat().st_size == 0:
        raise ModelError(f"mesh file {path} is empty (0 bytes)")
    import meshio

    chatter = io.StringIO()
    try:
        # meshio's Gmsh reader prints (blank lines) to stdout; keep a script's output clean. A
        # file it cannot read in the format(s) of its suffix makes meshio 5.3 print the readers'
        # reasons and call sys.exit(1): caught, so that a bad mesh file cannot end the program.
        with contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
            raw = meshio.read(path)
    # meshio reports malformed files through many exception types (ReadError, KeyError,
    # ValueError, IndexError, ...); all of them mean "cannot read", so say which file and why.
    except (Exception, SystemExit) as exc:
        said = " ".join(chatter.getvalue().split())
        reason = said if isinstance(exc, SystemExit) else f"{type(exc).__name__}: {exc}"
        raise ModelError(f"mesh file {path}: meshio cannot read it ({reason})") from exc
    if chatter.getvalue().strip():
        warnings.warn(f"meshio reading {path}: {chatter.getvalue().strip()}", stacklevel=3)
    return raw


def read_mesh(path: str | Path) -> Mesh:
    """Read the points and named sets of a mesh file through meshio (see the module docstring).

    Raises FileNotFoundError if ``path`` does not exist and ModelError (a ValueError) naming the
    file if it is a folder, empty, or a file meshio cannot read (with meshio's reason).
    """
    raw = read_with_meshio(path, "read_mesh")
    path = Path(path)
    points = np.zeros((len(raw.points), 3))
    points[:, :raw.points.shape[1]] = raw.points

    element_sets: dict[str, np.ndarray] = {}
    triangle_sets: dict[str, np.ndarray] = {}
    triangle_data: dict[str, dict[str, np.ndarray]] = {}
    node_sets: dict[str, np.ndarray] = {}
    skipped: dict[str, dict[str, int]] = {}
    fields = {name: per_block for name, per_block in raw.cell_data.items() if name not in _FORMAT_CELL_DATA}
    for name, members in _cell_sets(raw).items():
        blocks = [(raw.cells[b].type, raw.cells[b].data[idx]) for b, idx in members]
        lines = [data for kind, data in blocks if kind == "line"]
        if lines:
            element_sets[name] = np.concatenate(lines).astype(np.int64)
        triangles = [(b, idx) for b, idx in members if raw.cells[b].type == "triangle"]
        if triangles:
            triangle_sets[name] = np.concatenate([raw.cells[b].data[idx] for b, idx in triangles]).astype(np.int64)
            triangle_data[name] = _set_cell_data(path, name, fields, triangles)
        node_sets[name] = np.unique(np.concatenate([data.ravel() for _, data in blocks])).astype(np.int64)
        other = {kind: len(data) for kind, data in blocks if kind not in ("line", "vertex")}
        if other:
            skipped[name] = other
    for name, idx in raw.point_sets.items():
        previous = node_sets.get(name, np.zeros(0, dtype=np.int64))
        node_sets[name] = np.union1d(previous, np.asarray(idx, dtype=np.int64))
    return Mesh(path, points, element_sets, node_sets, skipped, triangle_sets, triangle_data)


def _set_cell_data(path: Path, set_name: str, fields: dict[str, list[np.ndarray]],
                   members: list[tuple[int, np.ndarray]]) -> dict[str, np.ndarray]:
    """Cell data name -> (n,) values of the cells ``members`` [(block, cell indices)] of a set;
    fields with more than one value per cell (vectors) are left out."""
    out = {}
    for name, per_block in fields.items():
        values = [np.asarray(per_block[b]) for b, _ in members]
        if any(v.ndim != 1 for v in values):
            continue
        try:
            out[name] = np.concatenate([v[idx] for v, (_, idx) in zip(values, members)]).astype(float)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"mesh file {path}: cell data {name!r} of set {set_name!r} is not numeric "
                             f"({exc})") from None
    return out


def _cell_sets(raw: meshio.Mesh) -> dict[str, list[tuple[int, np.ndarray]]]:
    """Set name -> [(cell block index, cell indices in the block)] from cell_sets and gmsh tags."""
    sets: dict[str, list[tuple[int, np.ndarray]]] = {}
    for name, per_block in raw.cell_sets.items():
        # meshio stores Gmsh bookkeeping (bounding entities) in cell_sets under "gmsh:" names
        if name.startswith("gmsh:"):
            continue
        members = [(b, np.asarray(idx, dtype=np.int64)) for b, idx in enumerate(per_block)
                   if idx is not None and len(idx)]
        if members:
            sets[name] = members
    tags = raw.cell_data.get("gmsh:physical")
    if tags is None:
        return sets
    names = {(int(v[0]), int(v[1])): k for k, v in raw.field_data.items() if np.size(v) == 2}
    from_tags: dict[str, list[tuple[int, np.ndarray]]] = {}
    for b, (block, block_tags) in enumerate(zip(raw.cells, tags)):
        block_tags = np.asarray(block_tags, dtype=np.int64)
        for tag in np.unique(block_tags):
            name = names.get((int(tag), block.dim), str(int(tag)))
            # Gmsh 4 files give named groups both as cell_sets and as tags: keep one copy
            if name not in sets:
                from_tags.setdefault(name, []).append((b, np.flatnonzero(block_tags == tag)))
    return sets | from_tags


def build_model(mesh: Mesh | str | Path, dim: int, groups: dict[str, dict[str, Any]],
                supports: dict[str, str | list[str]] | None = None) -> tuple[Model, np.ndarray]:
    """A Model with one element group per chosen element set of a mesh.

    Parameters
    ----------
    mesh : a :class:`Mesh` or the path of a mesh file (read with :func:`read_mesh`).
    dim : 2 or 3. A 2D model takes the points' x, y; their z must be 0 (to 1e-9 of the size
        of the used part of the mesh).
    groups : element set name -> ``{"element": "truss" | "beam2d" | "beam3d" | "shell",
        **properties}``; the properties are the keywords of :meth:`~flexmb.model.Model.add_truss`,
        :meth:`~flexmb.model.Model.add_beam2d`, :meth:`~flexmb.model.Model.add_beam3d` or
        :meth:`~flexmb.model.Model.add_shell` (SI units, e.g. ``EA`` in N, ``EI_y`` in N m^2,
        ``rho_A`` in kg/m, ``thickness`` in m); ``"name"`` names the group (default: the set
        name). Shells take the set's 3-node triangles, the others its 2-node lines. A shell
        property given as a string names a cell data field of the file (one value per
        triangle, see :attr:`Mesh.triangle_data`). Groups are added in the order of the dict.
    supports : node set (or element set) name -> DOFs fixed at each of its points: ``"all"``,
        one DOF name such as ``"uz"``, or a list of names (see :meth:`~flexmb.model.Model.fix`).

    Returns
    -------
    model : nodes are the points used by the chosen element sets, in increasing point index.
    node_of_point : (n_points,) int, the model node of each mesh point, -1 for unused points.
    """
    if not isinstance(mesh, Mesh):
        mesh = read_mesh(mesh)
    model = Model(dim=dim)
    for argument, value in (("groups", groups), ("supports", supports)):
        if not isinstance(value, dict) and value is not None:
            raise ModelError(f"mesh {mesh.path}: {argument} must be a dict (set name -> "
                             + ("{'element': ..., properties}" if argument == "groups" else "DOFs fixed")
                             + f"), got {value!r:.80} ({type(value).__name__}); {mesh.describe_sets()}")
    if not groups:
        raise ModelError(f"mesh {mesh.path}: no element set chosen; {mesh.describe_sets()}")
    for set_name, spec in groups.items():
        if not isinstance(spec, dict) or spec.get("element") not in ELEMENTS:
            given = spec.get("element") if isinstance(spec, dict) else spec
            raise ModelError(f"mesh {mesh.path}: group for set {set_name!r}: needs a dict with 'element' one of "
                             f"{', '.join(ELEMENTS)}, got {given!r}")
    connectivity = {name: (_triangle_set(mesh, name) if spec["element"] == "shell" else _element_set(mesh, name))
                    for name, spec in groups.items()}
    _check_unique_elements(mesh, {k: c for k, c in connectivity.items() if c.shape[1] == 2})
    _check_unique_elements(mesh, {k: c for k, c in connectivity.items() if c.shape[1] == 3})

    used = np.unique(np.concatenate([c.ravel() for c in connectivity.values()]))
    node_of_point = np.full(mesh.n_points, -1, dtype=np.int64)
    node_of_point[used] = np.arange(used.size)
    X = mesh.points[used]
    if dim == 2:
        span = float(np.ptp(X, axis=0).max())
        off_plane = np.flatnonzero(np.abs(X[:, 2]) > 1e-9 * (span if span > 0 else 1.0))
        if off_plane.size:
            p = int(used[off_plane[0]])
            raise ModelError(f"mesh {mesh.path}: a 2D model needs every point at z = 0; point {p} "
                             f"has z = {mesh.points[p, 2]:.6g} ({off_plane.size} such point(s))")
    model.add_nodes(X[:, :dim])

    for set_name, spec in groups.items():
        _add_group(model, mesh, set_name, spec, node_of_point[connectivity[set_name]])
    for set_name, dofs in (supports or {}).items():
        _fix_set(model, mesh, set_name, dofs, node_of_point)
    return model, node_of_point


def _element_set(mesh: Mesh, name: str) -> np.ndarray:
    """(n_el, 2) point indices of element set ``name``, or a ModelError saying why it is not one."""
    skipped = mesh.skipped_cells.get(name, {})
    found = ", ".join(f"{kind}: {count}" for kind, count in skipped.items())
    if any(kind.startswith("line") for kind in skipped):
        raise ModelError(f"mesh {mesh.path}: set {name!r} holds higher-order line cells ({found}); "
                         "flexmb elements are 2-node lines (mesh with first-order elements, "
                         "e.g. gmsh -order 1)")
    if name in mesh.element_sets:
        return mesh.element_sets[name]
    if skipped:
        hint = " (its triangles make shells: element 'shell')" if name in mesh.triangle_sets else ""
        raise ModelError(f"mesh {mesh.path}: set {name!r} has no 2-node line cells ({found}); "
                         f"flexmb bars and beams are 2-node lines{hint}")
    if name in mesh.node_sets:
        raise ModelError(f"mesh {mesh.path}: set {name!r} holds only points, no line elements; "
                         f"{mesh.describe_sets()}")
    raise ModelError(f"mesh {mesh.path} has no set named {name!r}; {mesh.describe_sets()}")


def _triangle_set(mesh: Mesh, name: str) -> np.ndarray:
    """(n_el, 3) point indices of the triangles of set ``name``, or a ModelError saying why there
    are none (other cell types, only points, no such set)."""
    skipped = {kind: count for kind, count in mesh.skipped_cells.get(name, {}).items() if kind != "triangle"}
    found = ", ".join(f"{kind}: {count}" for kind, count in skipped.items())
    if skipped:
        raise ModelError(f"mesh {mesh.path}: set {name!r} holds cells other than 3-node triangles ({found}); "
                         "flexmb shells are 3-node triangles (mesh with first-order triangles, e.g. gmsh "
                         "-order 1 without recombination into quadrangles)")
    if name in mesh.triangle_sets:
        return mesh.triangle_sets[name]
    if name in mesh.element_sets:
        raise ModelError(f"mesh {mesh.path}: set {name!r} holds 2-node lines, no triangles, so it cannot "
                         f"make shells; {mesh.describe_sets()}")
    if name in mesh.node_sets:
        raise ModelError(f"mesh {mesh.path}: set {name!r} holds only points, no triangles; "
                         f"{mesh.describe_sets()}")
    raise ModelError(f"mesh {mesh.path} has no set named {name!r}; {mesh.describe_sets()}")


def _check_unique_elements(mesh: Mesh, connectivity: dict[str, np.ndarray]) -> None:
    """Refuse a line (or a triangle) that appears twice among the chosen sets (it would count twice)."""
    if not connectivity:
        return
    names = np.repeat(np.array(list(connectivity), dtype=object), [len(c) for c in connectivity.values()])
    ends = np.sort(np.concatenate(list(connectivity.values())), axis=1)
    _, first, counts = np.unique(ends, axis=0, return_index=True, return_counts=True)
    if np.any(counts > 1):
        nodes = ends[first[np.flatnonzero(counts > 1)[0]]]
        holders = sorted(set(names[np.all(ends == nodes, axis=1)]))
        what = f"line between points {nodes[0]} and {nodes[1]}" if len(nodes) == 2 else \
            f"triangle of points {', '.join(map(str, nodes))}"
        raise ModelError(f"mesh {mesh.path}: the {what} appears more than once in the chosen sets "
                         f"({', '.join(holders)}); each {what.split()[0]} may be one element only")


def _add_group(model: Model, mesh: Mesh, set_name: str, spec: dict[str, Any], conn: np.ndarray) -> None:
    """Add the element group of one set, with errors naming the file and the set."""
    where = f"mesh {mesh.path}: group for set {set_name!r}"
    properties = {k: v for k, v in spec.items() if k not in ("element", "name")}
    if spec["element"] == "shell":
        properties = {k: _cell_values(mesh, set_name, k, v) if isinstance(v, str) and k not in ("membrane", "mass")
                      else v for k, v in properties.items()}
    add = getattr(model, ELEMENTS[spec["element"]])
    try:
        add(conn, name=spec.get("name", set_name), **properties)
    # TypeError: missing or unknown property keywords; ValueError (ModelError included):
    # invalid values, wrong element for the model's dimension, degenerate elements
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{where}: {exc}") from exc


def _cell_values(mesh: Mesh, set_name: str, prop: str, field_name: str) -> np.ndarray:
    """(n_el,) values of shell property ``prop`` from cell data ``field_name`` of the set's triangles."""
    available = mesh.triangle_data.get(set_name, {})
    if field_name not in available:
        raise ModelError(f"mesh {mesh.path}: group for set {set_name!r}: {prop} = {field_name!r} names no cell "
                         f"data of the set's triangles (cell data: {', '.join(available) or 'none'})")
    values = available[field_name]
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise ModelError(f"mesh {mesh.path}: group for set {set_name!r}: cell data {field_name!r} ({prop}) is "
                         f"{values[bad[0]]} on triangle {int(bad[0])} of the set")
    return values


def _fix_set(model: Model, mesh: Mesh, set_name: str, dofs: str | list[str], node_of_point: np.ndarray) -> None:
    """Fix ``dofs`` at every point of support set ``set_name``."""
    if set_name not in mesh.node_sets:
        raise ModelError(f"mesh {mesh.path} has no set named {set_name!r} for supports; "
                         f"{mesh.describe_sets()}")
    points = mesh.node_sets[set_name]
    nodes = node_of_point[points]
    if np.any(nodes < 0):
        p = int(points[np.flatnonzero(nodes < 0)[0]])
        raise ModelError(f"mesh {mesh.path}: support set {set_name!r}: point {p} at "
                         f"{mesh.points[p].tolist()} is not on any chosen element set, so it is "
                         "not a node of the model")
    try:
        for node in nodes:
            model.fix(int(node), dofs)
    except ModelError as exc:
        raise ModelError(f"mesh {mesh.path}: support set {set_name!r}: {exc}") from exc
