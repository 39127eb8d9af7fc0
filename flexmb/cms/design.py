"""Design variables: parameters p of a model with their exact derivatives dK/dp and dM/dp.

A design variable names what it changes (element groups by name, nodes by their number in the
parent model) and returns, for a given :class:`~flexmb.assembly.Assembly` — the full model's or a
component's (:class:`~flexmb.cms.component.Component` ``assembly`` with ``nodes`` mapping local to
parent node numbers) — the derivatives of the stiffness and mass matrices on that assembly's free
DOFs, about the reference state (u = 0). Hutton & Smith (1993) call them the design parameters
r of the components, with ``dK_j/dr`` and ``dM_j/dr`` in their sensitivity and modification
equations.

At the reference state the element stiffness is linear in each stiffness property (EA, EI, GJ,
EI_y, EI_z) and the element mass in each mass property (rho_A, rho_I), so every derivative here is
exact: it is the group's matrix assembled from a copy of the group in which only the property
concerned keeps its value (the others set to zero). Models are linear in every variable, so a
change ``p -> p + alpha`` gives exactly ``K + alpha dK/dp`` and ``M + alpha dM/dp``.

Kinds of variables, their value p and its baseline (``DesignVariable.value``):

* :func:`stiffness_scale` — a multiplier on all stiffness of the groups (Young's and shear
  modulus scale), baseline 1; ``dK/dp`` = the groups' stiffness matrix, ``dM/dp = 0``.
* :func:`density_scale` — a multiplier on all mass of the groups (density scale), baseline 1;
  ``dM/dp`` = the groups' mass matrix (translational, rotary, Hermitian), ``dK/dp = 0``.
* :func:`section_property` — a multiplier on one section property of one group (``"EA"``,
  ``"EI"``, ``"GJ"``, ``"EI_y"``, ``"EI_z"``, ``"rho_A"``, ``"rho_I"``), baseline 1: p scales the
  group's per-element values of the property, so ``dK/dp`` (or ``dM/dp``) is the part of the
  group's matrix carried by that property.
* :func:`point_mass` — a point mass (kg) on the translations of one node; ``dM/dm`` = identity on
  the node's translations. Its baseline is the point mass the analysed model already has at the
  node (``Model.add_point_mass``, default 0); the variable is checked against the model when used.
* :func:`spring` — a linear spring (N/m, or N m/rad on a rotation) on one DOF of one node, to the
  ground or to the same DOF of another node; ``dK/dk = e e^T`` with ``e`` the unit vector of the
  DOF (or the difference of the two). Models hold no spring elements, so the baseline stiffness is
  0: a non-zero baseline is refused (it would not be part of the analysed model).

Multipliers make normalised sensitivities (p / lambda) d lambda/dp and the relative changes of
inverse modification dimensionless; point masses and springs change by absolute amounts (kg,
N/m), and their normalised sensitivity is zero at a zero baseline.

References
----------
Hutton, S. G. and Smith, K. S. (1993). Component mode synthesis and structural modification.
"""
from __future__ import annotations

import copy
import weakref
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from flexmb.assembly import Assembly
from flexmb.checks import ModelError, keywords_listed, methods_keywords_listed
from flexmb.elements.base import ElementGroup

#: stiffness and mass properties of each element kind, as named on the element groups
STIFFNESS_PROPERTIES = {"Truss": ("EA",), "Beam2D": ("EA", "EI"),
                        "Beam3D": ("EA", "GJ", "EI_y", "EI_z"), "Shell3": ("E",),
                        "MatrixGroup": (),          # imported matrices (flexmb.cms.imported): whole-group scales only
                        "Solid": ()}                # its elasticity matrix holds E and nu: whole-group scales
MASS_PROPERTIES = {"Truss": ("rho_A",), "Beam2D": ("rho_A", "rho_I"), "Beam3D": ("rho_A", "rho_I"),
                   "Shell3": ("rho",), "MatrixGroup": (), "Solid": ("rho",)}
#: kinds whose value is a multiplier (baseline 1) rather than an absolute amount
MULTIPLIER_KINDS = ("stiffness scale", "density scale", "section property")


@methods_keywords_listed
@dataclass(eq=False)
class DesignVariable:
    """One design parameter p (see the module docstring for the kinds).

    Attributes
    ----------
    name : label used in tables and error messages.
    kind : ``"stiffness scale"``, ``"density scale"``, ``"section property"``, ``"point mass"``
        or ``"spring"``.
    value : baseline value of p (1 for multipliers, kg for a point mass, N/m for a spring).
    groups : element group names (group variables).
    prop : the section property (``section_property`` only).
    node, dof, other : node (parent number), DOF name and second node of point masses and springs.

    Variables compare by identity, so they can be keys of a dict of changes.
    """

    name: str
    kind: str
    value: float
    groups: tuple[str, ...] = ()
    prop: str | None = None
    node: int | None = None
    dof: str | None = None
    other: int | None = None
    _checked: set = field(default_factory=set, repr=False)
    #: matrices already built, per Assembly (weakly held) and node map
    _built: weakref.WeakKeyDictionary = field(default_factory=weakref.WeakKeyDictionary, repr=False)

    @property
    def is_multiplier(self) -> bool:
        """True when p multiplies a property (changes are relative, baseline 1)."""
        return self.kind in MULTIPLIER_KINDS

    @property
    def scale(self) -> float:
        """Size that makes a change of p relative: the baseline if non-zero, else 1 (in p's unit)."""
        return abs(self.value) if self.value != 0.0 else 1.0

    @property
    def lower_bound(self) -> float:
        """Smallest physical value of p: 0 (a negative modulus, density, mass or spring is refused)."""
        return 0.0

    # ------------------------------------------------------------------ where
    def applies_to(self, asm: Assembly, nodes: np.ndarray | None = None) -> bool:
        """Whether the variable acts on this assembly (a component may hold none of its items)."""
        names = {g.name for g in asm.model.groups}
        if self.groups:
            return any(g in names for g in self.groups)
        local = _local_nodes(nodes, asm)
        wanted = [self.node] + ([self.other] if self.other is not None else [])
        return all(n in local for n in wanted)

    def matrices(self, asm: Assembly, nodes: np.ndarray | None = None) -> tuple[sp.csc_matrix, sp.csc_matrix]:
        """dK/dp and dM/dp (n_free, n_free) on the free DOFs of ``asm``, about the reference state.

        ``nodes`` (n_local,) gives the parent node number of each node of ``asm``'s model (a
        component); None when ``asm`` is the model the variable refers to. A variable that does
        not act on ``asm`` raises ModelError naming the missing group or node.
        """
        if not isinstance(asm, Assembly):
            raise ModelError(f"design variable {self.name!r}: matrices need an Assembly, got {type(asm).__name__}")
        key = (asm.model.revision, None if nodes is None else np.asarray(nodes).tobytes())
        built = self._built.setdefault(asm, {})
        if key not in built:
            built[key] = self._build(asm, nodes)
        return built[key]

    def _build(self, asm: Assembly, nodes: np.ndarray | None) -> tuple[sp.csc_matrix, sp.csc_matrix]:
        local = _local_nodes(nodes, asm)
        n = asm.dofs.free.size
        zero = sp.csc_matrix((n, n))
        if self.groups:
            present = [g for g in asm.model.groups if g.name in self.groups]
            if not present:
                raise ModelError(f"design variable {self.name!r}: group(s) {', '.join(map(repr, self.groups))} "
                                 f"not in this model (it has {', '.join(repr(g.name) for g in asm.model.groups)})")
            if self.kind == "stiffness scale":
                return _sum(_group_stiffness(asm, g, None) for g in present), zero
            if self.kind == "density scale":
                return zero, _sum(_group_mass(asm, g, None) for g in present)
            group = present[0]
            if self.prop in STIFFNESS_PROPERTIES[type(group).__name__]:
                return _group_stiffness(asm, group, self.prop), zero
            return zero, _group_mass(asm, group, self.prop)
        node = self._local(local, self.node)
        if self.kind == "point mass":
            self._check_baseline_mass(asm, node)
            rows = asm.dofs.translations()[node]
            return zero, _outer(asm, rows, np.ones(rows.size), diagonal=True)
        e_rows = [_dof_index(asm, node, self.dof, self.name)]
        signs = [1.0]
        if self.other is not None:
            e_rows.append(_dof_index(asm, self._local(local, self.other), self.dof, self.name))
            signs.append(-1.0)
        return _outer(asm, np.array(e_rows), np.array(signs)), zero

    def _local(self, local: dict[int, int], parent: int) -> int:
        if parent not in local:
            raise ModelError(f"design variable {self.name!r}: node {parent} is not in this model/component "
                             f"(its nodes are {_range_text(sorted(local))})")
        return local[parent]

    def _check_baseline_mass(self, asm: Assembly, node: int) -> None:
        """The baseline of a point mass must be the model's point mass at the node."""
        key = (id(asm.model), node)
        if key in self._checked:
            return
        present = sum(m for n, m, _ in asm.model.point_masses if n == node)
        if not np.isclose(present, self.value, rtol=1e-12, atol=0.0):
            raise ModelError(f"design variable {self.name!r}: baseline point mass {self.value} kg at node "
                             f"{self.node}, but the analysed model has {present} kg there; the baseline must "
                             "be the model's own point mass")
        self._checked.add(key)


# ------------------------------------------------------------------ factories
@keywords_listed
def stiffness_scale(groups: str | ElementGroup | Sequence[str | ElementGroup], name: str | None = None
                    ) -> DesignVariable:
    """Multiplier on all stiffness of the groups (E and G scale), baseline 1; dK/dp = their stiffness."""
    names = _group_names(groups, "stiffness_scale")
    return DesignVariable(name or f"E scale {'+'.join(names)}", "stiffness scale", 1.0, names)


@keywords_listed
def density_scale(groups: str | ElementGroup | Sequence[str | ElementGroup], name: str | None = None
                  ) -> DesignVariable:
    """Multiplier on all mass of the groups (density scale), baseline 1; dM/dp = their mass."""
    names = _group_names(groups, "density_scale")
    return DesignVariable(name or f"rho scale {'+'.join(names)}", "density scale", 1.0, names)


@keywords_listed
def section_property(group: str | ElementGroup, prop: str, name: str | None = None) -> DesignVariable:
    """Multiplier on one section property ``prop`` of one group, baseline 1.

    Stiffness properties: ``EA`` (Truss, Beam2D, Beam3D), ``EI`` (Beam2D), ``GJ``, ``EI_y``,
    ``EI_z`` (Beam3D), ``E`` (Shell3); mass properties: ``rho_A`` (bars and beams), ``rho_I``
    (beams; all three components of a Beam3D's rho_I together), ``rho`` (Shell3). A Beam3D's
    bending stiffness is not linear in EI_y / EI_z when its shear stiffness is finite; such a
    variable is refused when used (scale the whole group with :func:`stiffness_scale` instead).
    """
    names = _group_names(group, "section_property")
    if len(names) != 1:
        raise ModelError(f"section_property: one group, got {list(names)}")
    known = sorted({p for props in (*STIFFNESS_PROPERTIES.values(), *MASS_PROPERTIES.values()) for p in props})
    if prop not in known:
        raise ModelError(f"section_property of group {names[0]!r}: unknown property {prop!r} "
                         f"(known: {', '.join(known)})")
    return DesignVariable(name or f"{prop} scale {names[0]}", "section property", 1.0, names, prop=prop)


@keywords_listed
def point_mass(node: int, mass: float = 0.0, name: str | None = None) -> DesignVariable:
    """Point mass m (kg) on the translations of ``node`` (parent number); dM/dm = I there.

    ``mass`` is the baseline: the point mass the analysed model already holds at the node
    (0 if none). It is not added to the model; a mismatch with the model raises ModelError.
    """
    node = _node_number(node, "point_mass")
    mass = _real(mass, f"point_mass at node {node}: mass (kg)")
    if mass < 0.0:
        raise ModelError(f"point_mass at node {node}: baseline mass must be >= 0 kg, got {mass}")
    return DesignVariable(name or f"point mass node {node}", "point mass", mass, node=node)


@keywords_listed
def spring(node: int, dof: str, other: int | None = None, stiffness: float = 0.0,
           name: str | None = None) -> DesignVariable:
    """Spring stiffness k on ``dof`` of ``node``, to ground or to the same DOF of ``other``.

    Units N/m on a translation, N m/rad on a rotation. The baseline is 0: models hold no springs,
    so a non-zero ``stiffness`` (which would not be in the analysed model) is refused.
    """
    node = _node_number(node, "spring")
    if other is not None:
        other = _node_number(other, f"spring at node {node}: other")
        if other == node:
            raise ModelError(f"spring at node {node}: the other node must differ, got {other}")
    if not isinstance(dof, str) or dof not in ("ux", "uy", "uz", "rx", "ry", "rz"):
        raise ModelError(f"spring at node {node}: unknown DOF {dof!r} (ux, uy, uz, rx, ry, rz)")
    stiffness = _real(stiffness, f"spring at node {node} {dof}: stiffness")
    if stiffness != 0.0:
        raise ModelError(f"spring at node {node} {dof}: baseline stiffness {stiffness} refused; models hold "
                         "no spring elements, so the baseline (analysed) spring is 0 — give the change "
                         "to forward/inverse modification instead")
    label = f"spring node {node}{'-' + str(other) if other is not None else ''} {dof}"
    return DesignVariable(name or label, "spring", 0.0, node=node, dof=dof, other=other)


# -------------------------------------------------------------- assembling
def _group_names(groups, what: str) -> tuple[str, ...]:
    items = [groups] if isinstance(groups, (str, ElementGroup)) else list(groups) if groups is not None else []
    if not items:
        raise ModelError(f"{what}: give at least one element group (name or group)")
    names = []
    for g in items:
        if isinstance(g, ElementGroup):
            names.append(g.name)
        elif isinstance(g, str):
            names.append(g)
        else:
            raise ModelError(f"{what}: a group is a name or an element group, got {g!r}")
    return tuple(dict.fromkeys(names))


def _node_number(node, what: str) -> int:
    if isinstance(node, bool) or not isinstance(node, (int, np.integer)) or node < 0:
        raise ModelError(f"{what}: node must be a non-negative integer (parent node number), got {node!r}")
    return int(node)


def _real(value, what: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{what} must be a number, got {value!r}") from None
    if not np.isfinite(x):
        raise ModelError(f"{what} must be finite, got {x}")
    return x


def _range_text(nodes: list[int]) -> str:
    return ", ".join(map(str, nodes)) if len(nodes) <= 12 else f"{nodes[0]}..{nodes[-1]} ({len(nodes)} nodes)"


def _local_nodes(nodes: np.ndarray | None, asm: Assembly) -> dict[int, int]:
    """Parent node number -> local node number."""
    if nodes is None:
        return {i: i for i in range(asm.model.n_nodes)}
    nodes = np.asarray(nodes, dtype=np.int64)
    if nodes.shape != (asm.model.n_nodes,):
        raise ModelError(f"design variable: nodes must give the parent number of each of the "
                         f"{asm.model.n_nodes} local nodes, got shape {nodes.shape}")
    return {int(p): i for i, p in enumerate(nodes)}


def _dof_index(asm: Assembly, node: int, dof: str, name: str) -> int:
    try:
        return asm.dofs.index(node, dof)
    except ModelError as exc:
        raise ModelError(f"design variable {name!r}: {exc}") from None


def _sum(matrices) -> sp.csc_matrix:
    total = None
    for m in matrices:
        total = m if total is None else total + m
    return total.tocsc()


def _outer(asm: Assembly, rows: np.ndarray, e: np.ndarray, diagonal: bool = False) -> sp.csc_matrix:
    """e e^T (or diag(e) with ``diagonal``) on global DOFs ``rows``, restricted to the free DOFs."""
    fpos = asm.dofs.free_position[rows]
    n = asm.dofs.free.size
    keep = fpos >= 0
    r, v = fpos[keep], e[keep]
    if diagonal:
        return sp.csc_matrix((v, (r, r)), shape=(n, n))
    return sp.csc_matrix((np.outer(v, v).ravel(), (np.repeat(r, r.size), np.tile(r, r.size))), shape=(n, n))


def _only(group: ElementGroup, keep: str | None, properties: tuple[str, ...]) -> ElementGroup:
    """A copy of ``group`` in which only the property ``keep`` of ``properties`` is non-zero (all
    of them kept when ``keep`` is None): its matrices are the part carried by that property."""
    part = copy.copy(group)
    for p in properties:
        if keep is not None and p != keep:
            setattr(part, p, np.zeros_like(getattr(group, p)))
    return part


def _scatter(asm: Assembly, group: ElementGroup, Ke: np.ndarray) -> sp.csc_matrix:
    """Element matrices (n_el, ne, ne) of ``group`` as a sparse matrix on asm's free DOFs."""
    fp = asm.dofs.free_position[asm.dofs.element_dofs(group)]                # (n_el, ne)
    rows = np.broadcast_to(fp[:, :, None], Ke.shape).ravel()
    cols = np.broadcast_to(fp[:, None, :], Ke.shape).ravel()
    ok = (rows >= 0) & (cols >= 0)
    n = asm.dofs.free.size
    return sp.csc_matrix((Ke.ravel()[ok], (rows[ok], cols[ok])), shape=(n, n))


def _group_stiffness(asm: Assembly, group: ElementGroup, prop: str | None) -> sp.csc_matrix:
    """Stiffness of ``group`` at the reference state (its ``prop`` part, or all of it)."""
    kind = type(group).__name__
    if prop in ("EI_y", "EI_z") and np.any(np.isfinite(group.GA_kz if prop == "EI_y" else group.GA_ky)):
        raise ModelError(f"section property {prop} of group {group.name!r}: with a finite shear stiffness the "
                         f"bending stiffness is not linear in {prop}; use stiffness_scale of the group")
    if prop is not None and prop not in STIFFNESS_PROPERTIES[kind]:
        raise ModelError(f"section property {prop!r}: not a property of group {group.name!r} ({kind} has "
                         f"{', '.join(STIFFNESS_PROPERTIES[kind] + MASS_PROPERTIES[kind])})")
    part = _only(group, prop, STIFFNESS_PROPERTIES[kind])
    X = asm.model.coordinates[group.connectivity]
    Ke = part.force_and_tangent(X, np.zeros((group.n_elements, group.ndof)))[1]
    return _scatter(asm, group, Ke)


def _group_mass(asm: Assembly, group: ElementGroup, prop: str | None) -> sp.csc_matrix:
    """Mass of ``group`` at the reference state (its ``prop`` part, or all of it): constant mass,
    Hermitian (configuration-dependent) mass at u = 0 and nodal rotary inertia."""
    kind = type(group).__name__
    if prop is not None and prop not in MASS_PROPERTIES[kind]:
        raise ModelError(f"section property {prop!r}: not a property of group {group.name!r} ({kind} has "
                         f"{', '.join(STIFFNESS_PROPERTIES[kind] + MASS_PROPERTIES[kind])})")
    part = _only(group, prop, MASS_PROPERTIES[kind])
    X = asm.model.coordinates[group.connectivity]
    Me = part.mass_matrix(X)                                                 # (n_el, ne, ne)
    hermite = part.configuration_mass(X)
    if hermite is not None:
        Me = Me + hermite.mass_matrix(np.zeros((group.n_elements, group.ndof)))
    if hasattr(part, "rotary_inertia"):                                      # 3D beams, shells: nodal J, u = 0
        J = part.rotary_inertia(X)                                           # (n_el, n_nodes, 3, 3)
        Me = Me.copy()
        for a in range(group.n_nodes):                                       # rotations of node a: 6a + 3 .. 6a + 5
            Me[:, 6 * a + 3:6 * a + 6, 6 * a + 3:6 * a + 6] += J[:, a]
    return _scatter(asm, group, Me)
