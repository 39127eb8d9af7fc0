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
from typing import Iterable

import numpy as np

from flexmb.assembly import Assembly
from flexmb.checks import keywords_listed, methods_keywords_listed
from flexmb.dofs import DofMap
from flexmb.elements.base import ElementGroup
from flexmb.model import Model, ModelError


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
    supports = _supports(model, "the parent model")
    parent_dofs = DofMap(model)

    node_sets = {}
    for name in groups:
        members = [model.groups[i] for i in sorted(i for i, o in owner.items() if o == name)]
        node_sets[name] = (members, np.unique(np.concatenate([g.connectivity.ravel() for g in members])))
    count = np.zeros(model.n_nodes, dtype=np.int64)
    for _, node_set in node_sets.values():
        count[node_set] += 1
    masses: dict[str, list] = {name: [] for name in groups}
    for node, mass, inertia in model.point_masses:
        holder = next((name for name, (_, ns) in node_sets.items() if node in ns), None)
        if holder is None:
            raise ModelError(f"the point mass at node {node} is on a node of no element group, so of no component")
        masses[holder].append((node, mass, inertia))

    # which parent DOFs are held by more than one component (interface DOFs)
    holders = np.zeros(parent_dofs.n_dof, dtype=np.int64)
    local_models = {}
    for name, (members, node_set) in node_sets.items():
        local_models[name] = _copy_model(model, node_set, members, masses[name])
        local_dofs = DofMap(local_models[name])
        holders[_global_dofs(parent_dofs, local_dofs, node_set)] += 1
    components = []
    for name, (members, node_set) in node_sets.items():
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

