"""Components from external stiffness and mass matrices (issue 32, item 2).

A component whose K and M come from another FE program (or from a flexmb component written with
:func:`write_component`) is held as a flexmb :class:`~flexmb.cms.component.Component` whose model
has the component's nodes and one element group, a
:class:`~flexmb.elements.matrix_group.MatrixGroup`: a linear "superelement" over all nodes whose
stiffness and mass are the imported matrices, kept sparse (one element per coupled node pair: the
cost grows with the non-zeros; a 24 000-DOF Nastran beam reads in 3.3 s). Everything
built on components therefore works unchanged: free-interface and Craig-Bampton reduction,
synthesis with flexmb's own components (nodes meet by label), sensitivities and modification with
``stiffness_scale(name)`` / ``density_scale(name)`` of the group (a whole-component scale), and
modal bodies without geometric stiffening (:func:`imported_modal_body`).

File layout of a component folder (:func:`read_component`, :func:`write_component`)::

    K.mtx            stiffness (N/m, N/rad, N m/rad), Matrix Market coordinate real symmetric
    M.mtx            mass (kg, kg m, kg m^2), same format and size
    component.json   the DOF map and the interface (below)

``component.json`` (all keys required unless marked optional)::

    {"format": "flexmb-component", "version": 1,
     "name": "part 1",                       # the component's name
     "dim": 2,                                # 2 (planar) or 3
     "nodes": [3, 4, 5],                      # node labels (integers; components meet by label)
     "coordinates": [[0.5, 0.0], ...],        # (n_nodes, dim) reference positions, m
     "dofs": [[3, "ux"], [3, "uy"], ...],     # one [label, DOF name] per matrix row, in row order
     "interface": [3, 5],                     # labels of the nodes shared with other components
     "grounded": [[3, "ux"], ...]}            # optional: DOFs tied to the ground (supports)

DOF names are flexmb's (``ux uy rz`` in 2D, ``ux uy uz rx ry rz`` in 3D). Every node carries the
same DOFs: the translations, or the translations and the rotations (a component of beams or
shells). Every matrix row is one nodal DOF: rows of modal or other generalised coordinates (a
superelement already reduced elsewhere) are not supported.

Abaqus matrix output written with node labels (``*MATRIX GENERATE`` and ``*MATRIX OUTPUT``: lines
``node, DOF, node, DOF, value``, one triangle or both) is read by :func:`read_abaqus_component`.
Nastran OP4 files and DMIG cards are read by :func:`flexmb.io.nastran.read_nastran_component`.

The imported group is linear about the reference state: it is meant for component mode synthesis,
modification and modal bodies (whose large motion is the floating frame's), not for a
large-rotation simulation of the raw matrices.
"""
from __future__ import annotations

import json
import warnings
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from flexmb.checks import FlexmbWarning, ModelError, keywords_listed
from flexmb.cms.component import Component
from flexmb.elements.dof_names import ROTATION_NAMES, TRANSLATION_NAMES
from flexmb.elements.matrix_group import MatrixGroup
from flexmb.model import Model

__all__ = ["MatrixGroup", "imported_component", "read_component", "write_component", "read_abaqus_component",
           "imported_modal_body"]

FORMAT = "flexmb-component"
VERSION = 1
#: relative asymmetry max|K - K^T| / max|K| above which a matrix is refused
SYMMETRY_RTOL = 1e-12
#: Abaqus DOF numbers 1..6 -> flexmb names (3D); 2D: 1, 2 translations and 6 the in-plane rotation
_ABAQUS_DOFS = {3: {1: "ux", 2: "uy", 3: "uz", 4: "rx", 5: "ry", 6: "rz"}, 2: {1: "ux", 2: "uy", 6: "rz"}}


@keywords_listed
def imported_component(K, M, coordinates, dofs: Iterable, interface: Iterable[int], nodes: Iterable[int] | None = None,
                       grounded: Iterable = (), name: str = "imported", source: str = "",
                       parent: Model | None = None) -> Component:
    """A :class:`~flexmb.cms.component.Component` from external matrices.

    Parameters
    ----------
    K, M : (n, n) stiffness and mass (dense or scipy.sparse), symmetric, rows in any order.
    coordinates : (n_nodes, dim) reference node positions, m; dim 2 or 3.
    dofs : n pairs (node label, DOF name): which node's which DOF each row is.
    interface : labels of the interface nodes (shared with other components).
    nodes : (n_nodes,) distinct integer labels of the nodes (default 0 .. n_nodes - 1).
    grounded : (label, DOF name) pairs tied to the ground.
    name : the component's name (and its matrix group's).
    source : where the matrices came from (a file), for the error messages.
    parent : optional model whose node numbers the labels are (as for
        :meth:`Component.from_model`): the positions must agree with it, its supports at the
        component's nodes are grounded too, and the component synthesises with the components
        cut from that model (:func:`~flexmb.cms.component.components_from_groups`) and recovers
        its modes on it. Without a parent it synthesises with other parentless components
        (``Component.from_model`` sub-models, other imported ones) by node label.

    Raises ModelError, naming the component and the offending row, node or DOF, for sizes that do
    not match, a non-symmetric or non-finite matrix, a row mapped to an unknown node or DOF, a DOF
    given twice, nodes that do not all carry the same DOFs, or an interface node that is unknown.
    """
    what = f"component {name!r}" + (f" ({source})" if source else "")
    X = np.asarray(coordinates, dtype=float)
    if X.ndim != 2 or X.shape[1] not in (2, 3) or not len(X):
        raise ModelError(f"{what}: coordinates must be (n_nodes, 2 or 3), got shape {X.shape}")
    dim = X.shape[1]
    labels = np.arange(len(X)) if nodes is None else np.asarray(list(nodes))
    if labels.shape != (len(X),) or not np.issubdtype(labels.dtype, np.integer) or np.unique(labels).size != len(X):
        raise ModelError(f"{what}: nodes must be {len(X)} distinct integer labels, one per coordinate row, got "
                         f"{np.asarray(labels).tolist()!r}")
    local_of = {int(v): i for i, v in enumerate(labels)}
    K, M = _square(K, "K", what), _square(M, "M", what)
    if K.shape != M.shape:
        raise ModelError(f"{what}: K is {K.shape[0]} x {K.shape[1]} but M is {M.shape[0]} x {M.shape[1]}")
    dofs = list(dofs)
    if len(dofs) != K.shape[0]:
        raise ModelError(f"{what}: the DOF map names {len(dofs)} rows but the matrices have {K.shape[0]}")
    rotations = _uniform_rotations(dofs, local_of, dim, what)
    per_node = dim + (len(ROTATION_NAMES[dim]) if rotations else 0)
    names = TRANSLATION_NAMES[dim] + (ROTATION_NAMES[dim] if rotations else ())
    # element order of row r: node position * DOFs per node + DOF position
    order = np.array([local_of[int(n)] * per_node + names.index(d) for n, d in dofs], dtype=np.int64)
    perm = np.empty_like(order)
    perm[order] = np.arange(order.size)                  # element DOF k is matrix row perm[k]
    model = Model(dim)
    model.add_nodes(X)
    model.add_group(MatrixGroup(K[perm][:, perm], M[perm][:, perm], len(X), dim, rotations, name))
    interface_local = []
    for node in interface:
        if int(node) not in local_of:
            raise ModelError(f"{what}: interface node {node!r} is not a node of the component (its labels are "
                             f"{_few(labels)})")
        interface_local.append(local_of[int(node)])
    for node, dof in grounded:
        if int(node) not in local_of or dof not in names:
            raise ModelError(f"{what}: grounded DOF ({node!r}, {dof!r}) is not a DOF of the component")
        model.fix(local_of[int(node)], dof)
    return Component.from_model(model, interface_local, name=name, nodes=labels, parent=parent)


@keywords_listed
def read_component(folder: str | Path, name: str | None = None, parent: Model | None = None) -> Component:
    """Read a component folder (``K.mtx``, ``M.mtx``, ``component.json``; module docstring).

    ``name`` overrides the name stored in the file; ``parent`` as in :func:`imported_component`.
    ModelError names the folder and the file for a missing file, a malformed companion file and
    everything :func:`imported_component` refuses.
    """
    folder = Path(folder)
    paths = {key: folder / f for key, f in (("K", "K.mtx"), ("M", "M.mtx"), ("map", "component.json"))}
    for path in paths.values():
        if not path.is_file():
            raise ModelError(f"reading component {str(folder)!r}: file {str(path)!r} does not exist (a component "
                             "folder holds K.mtx, M.mtx and component.json)")
    try:
        info = json.loads(paths["map"].read_text())
    except (OSError, ValueError) as exc:
        raise ModelError(f"reading component: {str(paths['map'])!r} is not valid JSON ({exc})") from None
    required = ("format", "name", "dim", "nodes", "coordinates", "dofs", "interface")
    missing = [k for k in required if not isinstance(info, dict) or k not in info]
    if missing or info.get("format") != FORMAT:
        raise ModelError(f"reading component: {str(paths['map'])!r} must be a {FORMAT!r} JSON object with keys "
                         f"{', '.join(required)}; missing {missing or ['format = ' + repr(FORMAT)]}")
    X = np.asarray(info["coordinates"], dtype=float)
    if X.ndim != 2 or X.shape[1] != info["dim"]:
        raise ModelError(f"reading component: {str(paths['map'])!r}: coordinates of shape {X.shape} do not match "
                         f"dim = {info['dim']}")
    matrices = {}
    for key in ("K", "M"):
        try:
            matrices[key] = scipy.io.mmread(str(paths[key]))
        except (OSError, ValueError, TypeError) as exc:
            raise ModelError(f"reading component: {str(paths[key])!r} is not a Matrix Market file ({exc})") from None
    return imported_component(matrices["K"], matrices["M"], X, [tuple(d) for d in info["dofs"]], info["interface"],
                              nodes=info["nodes"], grounded=[tuple(g) for g in info.get("grounded", [])],
                              name=info["name"] if name is None else name, source=str(folder), parent=parent)


@keywords_listed
def write_component(component: Component, folder: str | Path) -> Path:
    """Write ``component`` (any flexmb component) as a component folder (module docstring); returns it.

    The matrices are written with full precision (shortest round-trip decimal), so
    :func:`read_component` gives back K and M exactly, with the same DOF order.
    """
    if not isinstance(component, Component):
        raise ModelError(f"write_component: expected a flexmb Component, got {type(component).__name__}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for key, A in (("K", component.K), ("M", component.M)):
        S = sp.coo_matrix(sp.tril(A))                  # a symmetric file stores one triangle
        scipy.io.mmwrite(str(folder / f"{key}.mtx"), S, symmetry="symmetric",
                         comment=f"flexmb component {component.name!r}: {'stiffness' if key == 'K' else 'mass'}")
    info = {"format": FORMAT, "version": VERSION, "name": component.name, "dim": component.model.dim,
            "nodes": [int(n) for n in component.nodes],
            "coordinates": component.model.coordinates.tolist(),
            "dofs": [[int(n), str(d)] for n, d in zip(component.dof_nodes, component.dof_names)],
            "interface": [int(n) for n in component.interface_nodes],
            "grounded": [[int(component.dof_nodes[i]), str(component.dof_names[i])] for i in component.grounded]}
    (folder / "component.json").write_text(json.dumps(info, indent=1))
    return folder


@keywords_listed
def read_abaqus_component(stiffness: str | Path, mass: str | Path, coordinates, interface: Iterable[int],
                          nodes: Iterable[int] | None = None, grounded: Iterable[tuple[int, int]] = (),
                          name: str = "abaqus", parent: Model | None = None) -> Component:
    """A component from the ``jobname_STIFn.mtx`` and ``jobname_MASSn.mtx`` files of an Abaqus
    ``*MATRIX GENERATE, STIFFNESS, MASS`` step with ``*MATRIX OUTPUT, STIFFNESS, MASS`` (the
    node-labelled text format, ``FORMAT=MATRIX INPUT``, the default).

    Each data line is ``row node, row DOF, column node, column DOF, value`` (Abaqus DOF numbers 1-6;
    in 2D 1, 2 and 6), commas and/or blanks between the fields; lines starting with ``*`` or ``**``
    are skipped. A file in which no off-diagonal entry has its mirror holds one triangle (published
    examples show the lower one, column by column) and is mirrored; otherwise the matrix is checked for
    symmetry. The rows are every (node, DOF) pair met in the stiffness file, sorted by node label
    and Abaqus DOF number. ``coordinates`` (n_nodes, dim), m, are the positions of ``nodes`` (labels,
    default 1 .. n_nodes); ``interface`` are node labels; ``grounded`` are (node label, Abaqus DOF)
    pairs tied to the ground (the supports, when the matrices still hold those DOFs);
    ``parent`` as in :func:`imported_component`. Units must be SI (N, m, kg), as everywhere in
    flexmb. Negative node labels (Abaqus' internal nodes, e.g. Lagrange multipliers of hybrid
    elements or connectors) are refused: generate the matrices of a model without them. Written
    from the format's published description; not checked against files written by Abaqus.
    """
    X = np.asarray(coordinates, dtype=float)
    if X.ndim != 2 or X.shape[1] not in (2, 3):
        raise ModelError(f"component {name!r}: coordinates must be (n_nodes, 2 or 3), got shape {X.shape}")
    dim = X.shape[1]
    labels = np.arange(1, len(X) + 1) if nodes is None else np.asarray(list(nodes))
    paths = {"K": Path(stiffness), "M": Path(mass)}
    entries = {key: _abaqus_entries(p, dim) for key, p in paths.items()}
    number = {name: k for k, name in _ABAQUS_DOFS[dim].items()}
    keys = sorted({k for e in entries["K"] for k in (e[0], e[1])}, key=lambda k: (k[0], number[k[1]]))
    row_of = {k: i for i, k in enumerate(keys)}
    mats = {}
    for key, rows in entries.items():
        unknown = [r for e in rows for r in e[:2] if r not in row_of]
        if unknown:
            raise ModelError(f"component {name!r}: {str(paths[key])!r} names node {unknown[0][0]} DOF "
                             f"{number[unknown[0][1]]}, which the stiffness file does not have")
        i = np.array([row_of[e[0]] for e in rows])
        j = np.array([row_of[e[1]] for e in rows])
        v = np.array([e[2] for e in rows])
        A = sp.coo_matrix((v, (i, j)), shape=(len(keys),) * 2).tocsr()
        off = sp.csr_matrix((np.ones(i.size), (i, j)), shape=A.shape)
        off.setdiag(0.0)
        off.eliminate_zeros()
        if off.nnz and off.multiply(off.T).nnz == 0:       # no entry has its mirror: one triangle was written
            A = A + A.T - sp.diags(A.diagonal())
        mats[key] = A
    names = _ABAQUS_DOFS[dim]
    fixed = []
    for node, dof in grounded:
        if int(dof) not in names:
            raise ModelError(f"component {name!r}: grounded DOF ({node!r}, {dof!r}) is not an Abaqus DOF number "
                             f"{sorted(names)} in {dim}D")
        fixed.append((int(node), names[int(dof)]))
    return imported_component(mats["K"], mats["M"], X, keys, interface, nodes=labels, grounded=fixed, name=name,
                              source=str(paths["K"]), parent=parent)


@keywords_listed
def imported_modal_body(component: Component, frame_node: int, n_modes: int, interface_nodes: Iterable[int] = ()):
    """:class:`~flexmb.cms.modal_body.ModalBodyData` of an imported component (Craig-Bampton basis).

    ``frame_node`` and ``interface_nodes`` are node labels. The inertia invariants need only M, K
    and the node positions and are complete; the geometric stiffening needs element stresses, which
    imported matrices do not carry, so its unit matrices are zero (a :class:`~flexmb.checks.FlexmbWarning`
    says so): add the body with ``stiffening=False`` or accept a body without spin stiffening.
    """
    from flexmb.cms.modal_body import ModalBodyData

    frame = component.local_node(frame_node)
    extra = [component.local_node(n) for n in interface_nodes]
    if any(isinstance(g, MatrixGroup) for g in component.model.groups):
        warnings.warn(f"component {component.name!r}: imported matrices carry no element stresses, so the modal "
                      "body has no geometric stiffening (its unit geometric stiffness matrices are zero)",
                      FlexmbWarning, stacklevel=2)
    return ModalBodyData.from_model(component.model, frame, n_modes, interface_nodes=extra, name=component.name)


# ---------------------------------------------------------------------------- helpers
def _few(values, limit: int = 12) -> str:
    values = list(values)
    shown = ", ".join(str(int(v)) for v in values[:limit])
    return shown + (f", ... ({len(values)} in all)" if len(values) > limit else "")


def _square(A, label: str, what: str) -> sp.csr_matrix:
    """A as csr, checked square, finite and symmetric (max|A - A^T| <= SYMMETRY_RTOL max|A|)."""
    A = sp.csr_matrix(A, dtype=float)
    if A.shape[0] != A.shape[1]:
        raise ModelError(f"{what}: {label} must be square, got {A.shape[0]} x {A.shape[1]}")
    if not np.all(np.isfinite(A.data)):
        raise ModelError(f"{what}: {label} has non-finite entries")
    scale = float(np.abs(A.data).max(initial=0.0))
    D = (A - A.T).tocoo()
    if D.nnz and np.abs(D.data).max() > SYMMETRY_RTOL * scale:
        k = int(np.argmax(np.abs(D.data)))
        r, c = int(D.row[k]), int(D.col[k])
        raise ModelError(f"{what}: {label} is not symmetric: {label}[{r}, {c}] = {float(A[r, c])!r} but "
                         f"{label}[{c}, {r}] = {float(A[c, r])!r} (relative tolerance {SYMMETRY_RTOL:g} of "
                         f"max|{label}|)")
    return A


def _uniform_rotations(dofs: list, local_of: dict[int, int], dim: int, what: str) -> bool:
    """Whether the nodes carry rotations; ModelError for an unknown node or DOF, a repeated DOF or
    nodes that do not all carry the same complete set of DOFs."""
    allowed = TRANSLATION_NAMES[dim] + ROTATION_NAMES[dim]
    held: dict[int, set[str]] = {n: set() for n in local_of}
    for row, item in enumerate(dofs):
        if len(item) != 2:
            raise ModelError(f"{what}: DOF map row {row} must be [node label, DOF name], got {item!r}")
        node, dof = item
        if isinstance(node, bool) or not isinstance(node, (int, np.integer)) or int(node) not in local_of:
            raise ModelError(f"{what}: DOF map row {row} names node {node!r}, which is not a node of the component "
                             f"(its labels are {_few(local_of)})")
        if dof not in allowed:
            raise ModelError(f"{what}: DOF map row {row} names DOF {dof!r} of node {node}; {dim}D DOFs are "
                             f"{', '.join(allowed)}")
        if dof in held[int(node)]:
            raise ModelError(f"{what}: DOF map row {row}: node {node} DOF {dof} is given twice")
        held[int(node)].add(dof)
    full, trans = set(allowed), set(TRANSLATION_NAMES[dim])
    kinds = {n: (True if s == full else False if s == trans else None) for n, s in held.items()}
    bad = [n for n, k in kinds.items() if k is None]
    if bad:
        raise ModelError(f"{what}: node {bad[0]} has DOFs {sorted(held[bad[0]])}; every node must carry the "
                         f"translations ({', '.join(sorted(trans))}) or all {len(full)} DOFs")
    if len(set(kinds.values())) > 1:
        raise ModelError(f"{what}: some nodes carry rotations and some do not; an imported component needs the "
                         "same DOFs at every node")
    return next(iter(kinds.values()))


def _abaqus_entries(path: Path, dim: int) -> list[tuple[tuple[int, str], tuple[int, str], float]]:
    """(row (node, DOF name), column (node, DOF name), value) of an Abaqus coordinate-format file."""
    if not path.is_file():
        raise ModelError(f"reading Abaqus matrix: file {str(path)!r} does not exist")
    names = _ABAQUS_DOFS[dim]
    out = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("*"):
            continue
        parts = [p for p in text.replace(",", " ").split()]
        try:
            a, da, b, db = (int(p) for p in parts[:4])
            value = float(parts[4])
            if len(parts) != 5:
                raise ValueError
            out.append(((a, names[da]), (b, names[db]), value))
        except (ValueError, IndexError, KeyError):
            raise ModelError(f"reading Abaqus matrix {str(path)!r}, line {number}: expected 'node, DOF, node, DOF, "
                             f"value' with DOF in {sorted(names)} for {dim}D, got {text!r}") from None
        if a < 0 or b < 0:
            raise ModelError(f"reading Abaqus matrix {str(path)!r}, line {number}: node {min(a, b)} is an Abaqus "
                             "internal node (negative label, e.g. a Lagrange multiplier of a hybrid element or "
                             "connector), not a DOF of the mesh; generate the matrices without such elements")
    return out
