"""DOF map: DOF layout per node, element-to-global index arrays, free/prescribed split.

Global DOFs are numbered node by node. A node carries the translations of the model's
dimension and, if a rotational element (beam) is attached to it, the rotations; the order is
the one of :data:`flexmb.model.TRANSLATION_NAMES` followed by :data:`flexmb.model.ROTATION_NAMES`.
After all nodal DOFs come the DOFs that belong to no node, element by element of the groups that
have them (:attr:`~flexmb.elements.base.ElementGroup.n_internal_dofs`: a modal body's modal
coordinates); an element's DOF vector lists its nodal DOFs, then its internal ones.
"""
from __future__ import annotations

import numpy as np

from flexmb.checks import check_model_contents, node_index
from flexmb.elements.base import ElementGroup
from flexmb.model import ROTATION_NAMES, Model, ModelError


class DofMap:
    """Numbering of the model's DOFs.

    Attributes
    ----------
    n_dof : number of global DOFs.
    first : (n_nodes,) index of each node's first DOF.
    has_rotations : (n_nodes,) whether the node carries rotational DOFs.
    n_node_dofs : number of nodal DOFs (the internal DOFs are numbered from here on).
    internal_first : per group (in model order) the first internal DOF of each element (n_el,),
        empty for groups without internal DOFs.
    prescribed : (n_p,) sorted global indices of fixed or prescribed DOFs.
    free : (n_f,) sorted global indices of the remaining DOFs.
    model_revision : the model's :attr:`~flexmb.model.Model.revision` when the map was built;
        the analyses refuse a map (an Assembly) of a model changed since.
    """

    def __init__(self, model: Model) -> None:
        if not isinstance(model, Model):
            raise ModelError(f"numbering the DOFs (flexmb.Assembly, or an analysis given a model) needs a "
                             f"flexmb.Model, got {model!r:.80} ({type(model).__name__}); the analyses take a Model "
                             "or its Assembly (a mesh file becomes a Model with flexmb.io.mesh.build_model, a "
                             "result file is read with flexmb.load_result)")
        self.model = model
        self.model_revision = model.revision
        dim = model.dim
        n_rot = len(ROTATION_NAMES[dim])
        has_rot = np.zeros(model.n_nodes, dtype=bool)
        used = np.zeros(model.n_nodes, dtype=bool)
        for g in model.groups:
            used[g.connectivity.ravel()] = True
            if g.has_rotations:
                has_rot[g.connectivity.ravel()] = True
        for node, _, _ in model.point_masses:
            used[node] = True
        for body in model.bodies:
            used[body.node] = has_rot[body.node] = True
        for tie in model.ties:                          # held by a modal body
            used[tie.node] = True
        # a node on joints only (no element, no mass): its DOFs are carried by the joints' equations;
        # whether they determine it is checked where the constraints are assembled
        bare = ~used.copy()
        for joint in model.joints:
            used[[n for n in (joint.a, joint.b) if n >= 0]] = True
        self.joint_only_nodes = np.flatnonzero(bare & used)
        check_model_contents(model, used)
        _check_rotation_names(model, has_rot)
        ndof = dim + n_rot * has_rot
        self.has_rotations = has_rot
        self.first = np.concatenate([[0], np.cumsum(ndof)[:-1]]).astype(np.int64)
        self.n_node_dofs = int(ndof.sum())
        self.internal_first: list[np.ndarray] = []
        n = self.n_node_dofs
        for g in model.groups:
            k = g.n_internal_dofs
            self.internal_first.append(n + k * np.arange(g.n_elements if k else 0, dtype=np.int64))
            n += k * g.n_elements
        self.n_dof = n
        self._translations: np.ndarray | None = None
        self._names = [model.dof_names(bool(r)) for r in has_rot]

        explicit = {self.index(n, d) for n, d in model.prescribed}
        clamped = {int(self.first[n]) + k for n in model.clamped for k in range(ndof[n])}
        p = np.array(sorted(explicit | clamped), dtype=np.int64)
        self.prescribed = p
        mask = np.ones(self.n_dof, dtype=bool)
        mask[p] = False
        self.free = np.flatnonzero(mask)
        #: global -> free position, -1 for prescribed DOFs
        self.free_position = np.full(self.n_dof, -1, dtype=np.int64)
        self.free_position[self.free] = np.arange(self.free.size)

    def index(self, node: int, dof: str) -> int:
        """Global index of ``dof`` (e.g. ``"uy"``) of ``node``."""
        names = self._names[node_index(node, len(self._names), "dofs.index")]
        if dof not in names:
            raise ModelError(f"node {node} has no DOF {dof!r} (it has {', '.join(names)}; "
                             "rotations exist only on nodes with beam elements)")
        return int(self.first[node] + names.index(dof))

    def label(self, i: int) -> str:
        """Human-readable name of global DOF ``i``, e.g. ``"node 3 uy"`` or
        ``"modal body 'blade' q2"`` (internal DOF 2 of that group's element; counted from 1)."""
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.n_dof:
            raise ModelError(f"dofs.label: DOF {i!r} does not exist; the model has {self.n_dof} DOFs "
                             f"(0..{self.n_dof - 1})")
        if i >= self.n_node_dofs:
            for g, first in zip(self.model.groups, self.internal_first):
                hit = np.flatnonzero((first <= i) & (i < first + g.n_internal_dofs))
                if hit.size:
                    e = int(hit[0])
                    where = f" element {e}" if g.n_elements > 1 else ""
                    return f"{type(g).__name__} {g.name!r}{where} q{i - int(first[e]) + 1}"
        node = int(np.searchsorted(self.first, i, side="right") - 1)
        return f"node {node} {self._names[node][i - self.first[node]]}"

    def element_dofs(self, group: ElementGroup) -> np.ndarray:
        """Global DOF indices of every element of ``group`` (n_el, ndof_el)."""
        per_node = group.dofs_per_node                                 # translations (+ rotations)
        idx = self.first[group.connectivity][:, :, None] + np.arange(per_node)[None, None, :]
        idx = idx.reshape(group.n_elements, -1)                        # (n_el, nn * per_node)
        if not group.n_internal_dofs:
            return idx
        first = self.internal_first[self._group_position(group)]
        return np.hstack([idx, first[:, None] + np.arange(group.n_internal_dofs)[None, :]])

    def internal_dofs(self, group: ElementGroup, element: int = 0) -> np.ndarray:
        """Global indices of the internal DOFs (a modal body's modal coordinates) of ``element``
        of ``group``."""
        first = self.internal_first[self._group_position(group)]
        if not group.n_internal_dofs:
            raise ModelError(f"element group {group.name!r} has no internal DOFs")
        return int(first[element]) + np.arange(group.n_internal_dofs)

    def _group_position(self, group: ElementGroup) -> int:
        for i, g in enumerate(self.model.groups):
            if g is group:
                return i
        raise ModelError(f"element group {group.name!r} is not in this model")

    def translations(self) -> np.ndarray:
        """Global indices of the translations, (n_nodes, dim) (read-only, computed once: it is
        asked for at every recorded step)."""
        if self._translations is None:
            self._translations = self.first[:, None] + np.arange(self.model.dim)[None, :]
            self._translations.setflags(write=False)
        return self._translations


def _check_rotation_names(model: Model, has_rot: np.ndarray) -> None:
    """ModelError naming the first load or prescribed value on a rotation of a node that has none
    (``has_rot`` (n_nodes,)): a valid DOF name when it was given, since the elements added later
    decide which nodes rotate."""
    rotations = set(ROTATION_NAMES[model.dim])
    for item in (*model.prescribed.values(), *model.loads):
        if item.dof in rotations and not has_rot[item.node]:
            kind = "fix or prescribe" if item.role == "prescribed" else "add_load"
            raise ModelError(f"{item.label} ({kind}): node {item.node} has no DOF {item.dof!r} (it has "
                             f"{', '.join(model.dof_names(False))}; rotations exist only on nodes of beams, shells "
                             "and rigid bodies)")
