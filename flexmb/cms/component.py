"""Components for component mode synthesis: free sub-models with their interface DOFs.

A :class:`Component` is a part of a structure that is reduced on its own (Hutton & Smith 1993,
section 2): a sub-model *without supports* (free-free), its stiffness ``K`` and mass ``M`` about
the reference state over all of its DOFs, and the DOFs through which it meets the rest of the
structure:

* **interface DOFs**: DOFs shared with another component (same parent node, same DOF name);
* **grounded DOFs**: DOFs held by a support of the parent model (a fixed or zero prescribed
  DOF). A support is treated as an interface to a rigid ground (flexibility zero), so the
  grounded DOFs are interface DOFs too.

Two ways to make components:

* :func:`components_from_groups` cuts a model into named sets of its element groups; every
  group belongs to exactly one component, nodes shared by components are the interface nodes,
  and the parent's supports become grounded DOFs.
* :func:`components_by_region` cuts a model by geometry or by named sets: each component is a
  :class:`Box` (axis-aligned), a :class:`HalfSpace` (point and outward normal), a :class:`NodeSet`
  (the elements whose nodes all lie in a named node set), an :class:`ElementSet` (element indices
  per group) or a list of whole element groups. An element of a geometric region belongs to the
  region that holds its *centroid* (the mean of its node positions), so a group can be split
  between components; interface nodes are again the nodes shared by components.
* :meth:`Component.from_model` wraps a stand-alone sub-model. Its interface is declared
  explicitly by local node numbers, and its nodes are identified with those of the other
  components by an explicit node mapping (``nodes``: the label -- a parent node number -- of each
  local node). Two components meet where their interface nodes carry the same label; the DOFs
  coupled there are those both nodes have (a truss node meeting a beam node couples the
  translations only).

When a node carries rotations in one component and not in the other (a truss meets a beam),
only the common DOFs (the translations) are coupled; the rotation stays an internal DOF of the
beam component.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Iterable, Union

import numpy as np

from flexmb.assembly import Assembly
from flexmb.checks import keywords_listed, methods_keywords_listed
from flexmb.dofs import DofMap
from flexmb.elements.base import ElementGroup
from flexmb.model import Model, ModelError
from flexmb.multibody.joints import refuse_skew_supports


@methods_keywords_listed
class Component:
    """A free sub-model with its interface, and its matrices about the reference state.

    Attributes
    ----------
    name : the component's name (used in every error message).
    model : the free sub-model (no supports, loads or gravity); its element groups are copies of
        the parent's, keeping their names and section properties, with local node numbers.
    assembly : the sub-model's :class:`~flexmb.assembly.Assembly` (all DOFs are free).
    nodes : (n_nodes,) label of each local node: its node number in the parent model.
    parent : the model the component was cut from, or None (a stand-alone component whose
        labels refer to no model).
    K, M : scipy.sparse csc (n_j, n_j), stiffness (N/m, ...) and mass (kg, ...) over all local
        DOFs about the reference state (free-free), M including point masses and rotary inertia.
    n_dof : n_j, the number of local DOFs.
    dof_nodes : (n_j,) parent node label of each local DOF.
    dof_names : (n_j,) DOF name of each local DOF (``"ux"``, ``"rz"``, ...).
    global_dofs : (n_j,) index of each local DOF in the parent model's DOF map, or None without
        a parent.
    grounded : (k,) sorted local DOF indices tied to the ground (the parent's supports).
    interface_nodes : (n_b_nodes,) sorted parent labels of the nodes shared with other components.
    interface_dofs : (n_b,) sorted local DOF indices shared with other components or grounded.
    """

    def __init__(self, name: str, model: Model, nodes: np.ndarray, parent: Model | None,
                 grounded: np.ndarray, interface_nodes: np.ndarray, interface_dofs: np.ndarray) -> None:
        self.name = name
        self.model = model
        self.assembly = Assembly(model)
        self.nodes = np.asarray(nodes, dtype=np.int64)
        self.parent = parent
        asm = self.assembly
        self.n_dof = asm.n_dof
        self.K = asm.free_matrix(asm.force_and_tangent(np.zeros(asm.n_dof))[1]).tocsc()
        self.M = asm.free_matrix(asm.mass_data_at()).tocsc()
        local_node = np.searchsorted(asm.dofs.first, np.arange(self.n_dof), side="right") - 1
        offset = np.arange(self.n_dof) - asm.dofs.first[local_node]
        self.dof_nodes = self.nodes[local_node]
        names = [model.dof_names(True)[k] for k in offset]
        self.dof_names = np.array(names, dtype=object)
        self.global_dofs = None if parent is None else DofMap(parent).first[self.dof_nodes] + offset
        self.grounded = np.unique(np.asarray(grounded, dtype=np.int64))
        self.interface_nodes = np.unique(np.asarray(interface_nodes, dtype=np.int64))
        self.interface_dofs = np.unique(np.concatenate([np.asarray(interface_dofs, dtype=np.int64),
                                                        self.grounded]))
        self._local = {int(n): i for i, n in enumerate(self.nodes)}

    def __repr__(self) -> str:
        return (f"Component({self.name!r}: {len(self.nodes)} nodes, {self.n_dof} DOFs, "
                f"{self.interface_dofs.size} interface DOFs of which {self.grounded.size} grounded)")

    def local_node(self, parent_node: int) -> int:
        """Local node number of the parent's node ``parent_node`` (ModelError if not in the component)."""
        try:
            return self._local[int(parent_node)]
        except (KeyError, TypeError, ValueError):
            raise ModelError(f"node {parent_node!r} is not in component {self.name!r} (its nodes are "
                             f"{_few(self.nodes)})") from None

    def local_dof(self, parent_node: int, dof: str) -> int:
        """Local index of DOF ``dof`` (e.g. ``"uy"``) of the parent's node ``parent_node``."""
        local = self.local_node(parent_node)
        try:
            return self.assembly.dofs.index(local, dof)
        except ModelError:
            raise ModelError(f"component {self.name!r}: node {parent_node} has no DOF {dof!r} in this "
                             "component") from None

    def rigid_motions(self) -> np.ndarray:
        """Infinitesimal rigid-body motions of the reference geometry (n_j, 3 in 2D / 6 in 3D).

        Columns: unit translations along the axes, then unit rotations about the axes through the
        origin (u = w x X, rotation DOFs = w). They span the rigid-body motions of any component
        (columns may be dependent, e.g. the rotation of a straight truss about its own axis).
        """
        dofs = self.assembly.dofs
        dim = self.model.dim
        X = self.model.coordinates
        trans = dofs.translations()                                  # (n_nodes, dim)
        rot_nodes = np.flatnonzero(dofs.has_rotations)
        if dim == 2:
            R = np.zeros((self.n_dof, 3))
            for a in range(2):
                R[trans[:, a], a] = 1.0
            R[trans[:, 0], 2] = -X[:, 1]
            R[trans[:, 1], 2] = X[:, 0]
            R[dofs.first[rot_nodes] + 2, 2] = 1.0
            return R
        R = np.zeros((self.n_dof, 6))
        for a in range(3):
            R[trans[:, a], a] = 1.0
            w = np.zeros(3)
            w[a] = 1.0
            R[trans, 3 + a] = np.cross(w, X)                          # (n_nodes, 3)
            R[dofs.first[rot_nodes] + 3 + a, 3 + a] = 1.0
        return R

    @classmethod
    def from_model(cls, model: Model, interface_nodes: Iterable[int], name: str = "component",
                   nodes: Iterable[int] | None = None, parent: Model | None = None) -> "Component":
        """A stand-alone component from a sub-model.

        Parameters
        ----------
        model : a model of element groups and point masses (no joints or rigid bodies). Its
            fixed DOFs (``fix``, or ``prescribe`` with the value 0) become grounded DOFs; the
            component itself keeps copies of its groups and masses and has no supports.
        interface_nodes : local node numbers (of ``model``) through which the component meets the
            others.
        name : the component's name.
        nodes : (model.n_nodes,) label of each node of ``model`` in the assembled structure
            (distinct integers); components are coupled where their interface nodes carry the same
            label. Default: the node numbers of ``model``.
        parent : optional model of the assembled structure that the labels number; when given,
            the node positions must agree with it, the component gets ``global_dofs`` and the
            parent's supports at its nodes are grounded too, and the synthesised modes can be
            recovered on the parent.
        """
        what = f"component {name!r}"
        _refuse_bodies_and_joints(model, what)
        labels = np.arange(model.n_nodes) if nodes is None else np.asarray(list(nodes))
        if labels.shape != (model.n_nodes,) or not np.issubdtype(labels.dtype, np.integer):
            raise ModelError(f"{what}: nodes must give one integer label per node of the model "
                             f"({model.n_nodes}), got {np.asarray(labels).tolist()!r}")
        if np.unique(labels).size != labels.size:
            raise ModelError(f"{what}: the node labels must be distinct, got {labels.tolist()}")
        interface = []
        for node in interface_nodes:
            if isinstance(node, (bool, np.bool_)) or not isinstance(node, (int, np.integer)) \
                    or not 0 <= node < model.n_nodes:
                raise ModelError(f"interface node {node!r} is not in {what} (its model has nodes 0.."
                                 f"{model.n_nodes - 1})")
            interface.append(int(node))
        local_model = _copy_model(model, np.arange(model.n_nodes), list(model.groups),
                                  [(n, m, j) for n, m, j in model.point_masses])
        grounded_keys = _supports(model, what)
        if parent is not None:
            if np.any(labels < 0) or np.any(labels >= parent.n_nodes):
                raise ModelError(f"{what}: node labels must be nodes of the parent model (0.."
                                 f"{parent.n_nodes - 1}), got {labels.tolist()}")
            moved = np.flatnonzero(np.any(np.abs(parent.coordinates[labels] - model.coordinates)
                                          > 1e-9 * model.characteristic_length, axis=1))
            if moved.size:
                k = int(moved[0])
                raise ModelError(f"{what}: node {k} at {model.coordinates[k].tolist()} is not where parent "
                                 f"node {int(labels[k])} is ({parent.coordinates[labels[k]].tolist()})")
            local_of = {int(p): i for i, p in enumerate(labels)}
            grounded_keys |= {(local_of[n], d) for n, d in _supports(parent, "the parent model")
                              if n in local_of}
        dofs = DofMap(local_model)
        grounded = [dofs.index(n, d) for n, d in grounded_keys if _has_dof(dofs, local_model, n, d)]
        at_interface = np.isin(np.searchsorted(dofs.first, np.arange(dofs.n_dof), side="right") - 1, interface)
        return cls(name, local_model, labels, parent, np.array(grounded, dtype=np.int64),
                   labels[interface] if interface else np.zeros(0, np.int64), np.flatnonzero(at_interface))


@keywords_listed
def components_from_groups(model: Model, groups: dict[str, list[str | ElementGroup]]) -> list[Component]:
    """Cut ``model`` into components, each a named set of its element groups.

    Parameters
    ----------
    model : the parent model: element groups, point masses, supports (fixed DOFs). Joints,
        rigid bodies and prescribed non-zero motions are refused (a component is a linear
        elastic structure about its reference state).
    groups : component name -> its element groups, by name or as the model's group objects.
        Every group of the model must belong to exactly one component.

    Returns
    -------
    The components in the order of ``groups``. Interface nodes are the nodes shared by
    components; a DOF is an interface DOF where two components both have it. The parent's
    supports at a component's nodes become its grounded DOFs. A point mass goes to the first
    component holding its node.
    """
    if not isinstance(groups, dict) or not groups:
        raise ModelError("components_from_groups: groups must be a non-empty dict mapping component names "
                         f"to lists of element groups, got {groups!r}")
    _refuse_bodies_and_joints(model, "components_from_groups")
    if not model.groups:
        raise ModelError("components_from_groups: the model has no element groups")
    owner: dict[int, str] = {}                       # group position in the model -> component name
    for name, members in groups.items():
        if isinstance(members, (str, ElementGroup)):
            members = [members]
        if not isinstance(name, str) or not isinstance(members, (list, tuple)) or not members:
            raise ModelError(f"component {name!r}: give a name (str) and a non-empty list of element groups, "
                             f"got {members!r}")
        for member in members:
            i = _group_position(model, member, name)
            if i in owner:
                raise ModelError(f"element group {model.groups[i].name!r} is in two components, "
                                 f"{owner[i]!r} and {name!r}; each group belongs to exactly one")
            owner[i] = name
    missing = [g.name for i, g in enumerate(model.groups) if i not in owner]
    if missing:
        raise ModelError(f"element group(s) {', '.join(map(repr, missing))} belong to no component; every "
                         "group of the model must be in exactly one")
    members = {name: [model.groups[i] for i in sorted(i for i, o in owner.items() if o == name)]
               for name in groups}
    return _cut(model, members)


# ---------------------------------------------------------------------------- regions
@dataclass(frozen=True)
class Box:
    """The closed axis-aligned box ``lower <= x <= upper`` (m, each (3,) or (2,) in 2D)."""

    lower: tuple[float, ...]
    upper: tuple[float, ...]

    def holds(self, points: np.ndarray) -> np.ndarray:
        """(n,) bool: which of ``points`` (n, dim) lie in the box."""
        lower, upper = _vector(self.lower, points, self, "lower"), _vector(self.upper, points, self, "upper")
        if np.any(lower > upper):
            raise ModelError(f"{self}: lower corner above upper corner along an axis")
        return np.all((points >= lower) & (points <= upper), axis=1)


@dataclass(frozen=True)
class HalfSpace:
    """The closed half-space ``dot(x - point, normal) >= 0`` (point in m; the normal points into it)."""

    point: tuple[float, ...]
    normal: tuple[float, ...]

    def holds(self, points: np.ndarray) -> np.ndarray:
        """(n,) bool: which of ``points`` (n, dim) lie in the half-space."""
        normal = _vector(self.normal, points, self, "normal")
        length = np.linalg.norm(normal)
        if not length > 0.0:
            raise ModelError(f"{self}: the normal must be non-zero")
        return (points - _vector(self.point, points, self, "point")) @ (normal / length) >= 0.0


@dataclass(frozen=True)
class NodeSet:
    """The elements whose nodes all lie in a set of parent nodes (e.g. a mesh file's named node set,
    :attr:`flexmb.io.solid_mesh.SolidMesh.node_sets`)."""

    nodes: tuple[int, ...]


@dataclass(frozen=True)
class ElementSet:
    """Chosen elements by group: group name -> element indices within that group."""

    elements: dict[str, tuple[int, ...]]


#: what a component of :func:`components_by_region` may be
Region = Union[Box, HalfSpace, NodeSet, ElementSet, list, tuple, str, ElementGroup]


@keywords_listed
def components_by_region(model: Model, regions: dict[str, Region]) -> list[Component]:
    """Cut ``model`` into components by geometry, by named sets or by element groups.

    Parameters
    ----------
    model : the parent model, as for :func:`components_from_groups` (element groups, point
        masses, fixed DOFs; no joints or rigid bodies).
    regions : component name -> its region, one of

        * :class:`Box` or :class:`HalfSpace`: the elements whose centroid (the mean of the
          element's node positions, m) lies in the closed region;
        * :class:`NodeSet`: the elements whose nodes all lie in the set;
        * :class:`ElementSet`: the listed elements of the named groups;
        * an element group (name or object) or a list of them: all their elements.

    Every element of the model must fall in exactly one region. A group whose elements fall in
    several regions is split: each component gets a copy of the group (same name and properties)
    holding its elements only.

    Returns
    -------
    The components in the order of ``regions``: the same :class:`Component` objects as
    :func:`components_from_groups` gives (interface nodes: those shared by components; the
    parent's supports become grounded DOFs; a point mass goes to the first component holding its
    node).

    Raises
    ------
    ModelError naming the region (component) for a region that holds no element, naming the
    element (group, index, centroid) for an element in no region or in two regions, and naming
    the group or node for an unknown group, element index or node.
    """
    if not isinstance(regions, dict) or not regions:
        raise ModelError("components_by_region: regions must be a non-empty dict mapping component names to "
                         f"regions (Box, HalfSpace, NodeSet, ElementSet or element groups), got {regions!r}")
    _refuse_bodies_and_joints(model, "components_by_region")
    if not model.groups:
        raise ModelError("components_by_region: the model has no element groups")
    names = list(regions)
    # owner[g][e]: position in ``names`` of the component holding element e of group g (-1: none yet)
    owner = [np.full(g.n_elements, -1, dtype=np.int64) for g in model.groups]
    centroids = [model.coordinates[g.connectivity].mean(axis=1) for g in model.groups]     # (n_el, dim) m
    for k, name in enumerate(names):
        if not isinstance(name, str):
            raise ModelError(f"component names must be strings, got {name!r}")
        held = _region_members(model, regions[name], name, centroids)
        if not any(h.any() for h in held):
            region = regions[name]
            shown = repr(region) if isinstance(region, (Box, HalfSpace)) else type(region).__name__
            raise ModelError(f"component {name!r}: its region ({shown}) holds no element")
        for g, (group, h) in enumerate(zip(model.groups, held)):
            twice = np.flatnonzero(h & (owner[g] >= 0))
            if twice.size:
                e = int(twice[0])
                raise ModelError(f"regions of components {names[owner[g][e]]!r} and {name!r} overlap: both hold "
                                 f"element {e} of group {group.name!r} (centroid {centroids[g][e].tolist()}); "
                                 "every element belongs to exactly one")
            owner[g][h] = k
    for g, group in enumerate(model.groups):
        loose = np.flatnonzero(owner[g] < 0)
        if loose.size:
            e = int(loose[0])
            raise ModelError(f"element {e} of group {group.name!r} (centroid {centroids[g][e].tolist()}) lies in "
                             f"no region ({loose.size} element(s) of that group in all); every element belongs "
                             "to exactly one component")
    members: dict[str, list[ElementGroup]] = {name: [] for name in names}
    for g, group in enumerate(model.groups):
        for k in np.unique(owner[g]):
            chosen = owner[g] == k
            members[names[k]].append(group if chosen.all() else _element_subset(group, np.flatnonzero(chosen)))
    return _cut(model, members)


def _region_members(model: Model, region: Region, name: str, centroids: list[np.ndarray]) -> list[np.ndarray]:
    """Per group of ``model``, (n_el,) bool: the elements in ``region`` of component ``name``."""
    if isinstance(region, (Box, HalfSpace)):
        return [region.holds(c) for c in centroids]
    if isinstance(region, NodeSet):
        nodes = np.asarray(region.nodes)
        if nodes.ndim != 1 or not np.issubdtype(nodes.dtype, np.integer) or \
                np.any((nodes < 0) | (nodes >= model.n_nodes)):
            raise ModelError(f"component {name!r}: a NodeSet holds node numbers of the model (0.."
                             f"{model.n_nodes - 1}), got {_few(nodes.ravel()) if nodes.size else nodes.tolist()}")
        inside = np.zeros(model.n_nodes, dtype=bool)
        inside[nodes] = True
        return [inside[g.connectivity].all(axis=1) for g in model.groups]
    if isinstance(region, ElementSet):
        held = [np.zeros(g.n_elements, dtype=bool) for g in model.groups]
        for member, elements in region.elements.items():
            i = _group_position(model, member, name)
            idx = np.asarray(elements)
            n_el = model.groups[i].n_elements
            if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer) or np.any((idx < 0) | (idx >= n_el)):
                raise ModelError(f"component {name!r}: elements of group {model.groups[i].name!r} are indices "
                                 f"0..{n_el - 1}, got {np.asarray(elements).tolist()!r}")
            held[i][idx] = True
        return held
    members = [region] if isinstance(region, (str, ElementGroup)) else region
    if not isinstance(members, (list, tuple)) or not members:
        raise ModelError(f"component {name!r}: a region is a Box, HalfSpace, NodeSet, ElementSet or a non-empty "
                         f"list of element groups, got {region!r}")
    held = [np.zeros(g.n_elements, dtype=bool) for g in model.groups]
    for member in members:
        held[_group_position(model, member, name)][:] = True
    return held


def _cut(model: Model, members: dict[str, list[ElementGroup]]) -> list[Component]:
    """Components from their element groups (each an element group of ``model`` or a subset of
    one, together covering every element once)."""
    supports = _supports(model, "the parent model")
    parent_dofs = DofMap(model)

    node_sets = {name: (groups, np.unique(np.concatenate([g.connectivity.ravel() for g in groups])))
                 for name, groups in members.items()}
    count = np.zeros(model.n_nodes, dtype=np.int64)
    for _, node_set in node_sets.values():
        count[node_set] += 1
    masses: dict[str, list] = {name: [] for name in members}
    for node, mass, inertia in model.point_masses:
        holder = next((name for name, (_, ns) in node_sets.items() if node in ns), None)
        if holder is None:
            raise ModelError(f"the point mass at node {node} is on a node of no element group, so of no component")
        masses[holder].append((node, mass, inertia))

    # which parent DOFs are held by more than one component (interface DOFs)
    holders = np.zeros(parent_dofs.n_dof, dtype=np.int64)
    local_models = {}
    for name, (groups, node_set) in node_sets.items():
        local_models[name] = _copy_model(model, node_set, groups, masses[name])
        local_dofs = DofMap(local_models[name])
        holders[_global_dofs(parent_dofs, local_dofs, node_set)] += 1
    components = []
    for name, (_, node_set) in node_sets.items():
        local_dofs = DofMap(local_models[name])
        gdofs = _global_dofs(parent_dofs, local_dofs, node_set)
        local_of = {int(p): i for i, p in enumerate(node_set)}
        grounded = [local_dofs.index(local_of[n], d) for n, d in supports
                    if n in local_of and _has_dof(local_dofs, local_models[name], local_of[n], d)]
        components.append(Component(name, local_models[name], node_set, model, np.array(grounded, np.int64),
                                    node_set[count[node_set] > 1], np.flatnonzero(holders[gdofs] > 1)))
    return components


# ---------------------------------------------------------------------------- helpers
def _few(values: np.ndarray, limit: int = 12) -> str:
    shown = ", ".join(str(int(v)) for v in values[:limit])
    return shown + (f", ... ({len(values)} in all)" if len(values) > limit else "")


def _group_position(model: Model, member: str | ElementGroup, component: str) -> int:
    """Index in ``model.groups`` of a group given by name or object, else ModelError."""
    if isinstance(member, ElementGroup):
        found = [i for i, g in enumerate(model.groups) if g is member]
        if not found:
            raise ModelError(f"component {component!r}: element group {member.name!r} is not a group of the model")
        return found[0]
    if not isinstance(member, str):
        raise ModelError(f"component {component!r}: groups are given by name or as ElementGroup objects, "
                         f"got {member!r}")
    found = [i for i, g in enumerate(model.groups) if g.name == member]
    if not found:
        names = ", ".join(repr(g.name) for g in model.groups)
        raise ModelError(f"component {component!r}: unknown element group {member!r}; the model's groups "
                         f"are {names}")
    if len(found) > 1:
        raise ModelError(f"component {component!r}: {len(found)} element groups are named {member!r}; "
                         "pass the group objects instead of the name")
    return found[0]


def _refuse_bodies_and_joints(model: Model, what: str) -> None:
    refuse_skew_supports(model.joints, what, "for a modal body, give the component without it and put the skew "
                         "support on the main-model node tied to that body node (Model.tie)")
    if model.joints:
        raise ModelError(f"{what}: joint {model.joints[0].name!r} -- components are elastic structures of "
                         "element groups and point masses; joints are not supported in a component")
    if model.bodies:
        raise ModelError(f"{what}: rigid body {model.bodies[0].name!r} -- rigid bodies are not supported in a "
                         "component (model it by stiff beams and point masses)")


def _supports(model: Model, what: str) -> set[tuple[int, str]]:
    """(node, DOF name) of the fixed DOFs of ``model``; "all" expands to every DOF name (only
    those a node has are kept later). ModelError for a non-zero or time-dependent prescribed DOF."""
    keys = set()
    for (node, dof), pv in model.prescribed.items():
        if callable(pv.value) or pv.value != 0.0:
            raise ModelError(f"{what}: prescribed node {node} {dof} has a non-zero or time-dependent value; "
                             "component mode synthesis works about the reference state and accepts only "
                             "fixed DOFs (value 0)")
        keys.add((node, dof))
    for node in model.clamped:
        keys |= {(node, d) for d in model.dof_names(True)}
    return keys


def _has_dof(dofs: DofMap, model: Model, local: int, dof: str) -> bool:
    return dof in model.dof_names(bool(dofs.has_rotations[local]))


def _global_dofs(parent: DofMap, local: DofMap, node_set: np.ndarray) -> np.ndarray:
    """Parent DOF index of every local DOF (rotations exist locally only where the parent has them)."""
    local_node = np.searchsorted(local.first, np.arange(local.n_dof), side="right") - 1
    return parent.first[node_set[local_node]] + np.arange(local.n_dof) - local.first[local_node]


def _copy_model(model: Model, node_set: np.ndarray, members: list[ElementGroup],
                masses: list[tuple[int, float, float]]) -> Model:
    """A free sub-model on the parent nodes ``node_set`` (sorted) with copies of ``members``
    (connectivity renumbered, names and properties kept) and the point masses ``masses``."""
    local = Model(model.dim)
    local.add_nodes(model.coordinates[node_set])
    renumber = np.full(model.n_nodes, -1, dtype=np.int64)
    renumber[node_set] = np.arange(node_set.size)
    for group in members:
        copied = copy.deepcopy(group)           # the parent's groups stay untouched
        copied.connectivity = renumber[group.connectivity]
        local.add_group(copied)
    for node, mass, inertia in masses:
        local.add_point_mass(int(renumber[node]), mass, inertia)
    return local



def _vector(value, points: np.ndarray, region, what: str) -> np.ndarray:
    """``value`` as a float vector of the points' dimension, else ModelError naming the region."""
    vector = np.asarray(value, dtype=float)
    if vector.shape != (points.shape[1],) or not np.all(np.isfinite(vector)):
        raise ModelError(f"{region}: {what} must be {points.shape[1]} finite numbers, got {value!r}")
    return vector


def _element_subset(group: ElementGroup, elements: np.ndarray) -> ElementGroup:
    """A copy of ``group`` holding only ``elements`` (sorted indices): every per-element array or
    list (leading length n_el: connectivity, section and material properties, D matrices, axes)
    is cut to those elements; everything else is shared by all elements and kept."""
    if group.n_internal_dofs:
        raise ModelError(f"element group {group.name!r} has DOFs of its own (a modal body) and cannot be split "
                         "between components; give it whole to one region")
    n_el = group.n_elements
    subset = copy.deepcopy(group)
    for key, value in vars(subset).items():
        if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == n_el:
            setattr(subset, key, value[elements].copy())
        elif isinstance(value, list) and len(value) == n_el:
            setattr(subset, key, [value[e] for e in elements])
    return subset
