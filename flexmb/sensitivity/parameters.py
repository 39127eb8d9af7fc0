"""Design parameters of transient analyses and the exact derivatives of the mid-point step
with respect to them (issue 33, piece P4).

A :class:`TransientParameter` names one number p of a model and gives

* :meth:`~TransientParameter.value` -- its value in a model (its baseline);
* :meth:`~TransientParameter.apply` -- a copy of a model with p set to another value (finite
  difference re-runs, and a design's next model); the model itself is not changed;
* :meth:`~TransientParameter.residual_derivative` -- ``dg/dp`` (n_dof,) of the mid-point
  residual ``g(u_n, v_n, s_n, u_{n+1}; p)`` of :class:`~flexmb.integrators.schemes.MidPoint`
  (internal, damping, inertia and weight terms; constraint forces are not in g) at given step
  ends, all other arguments fixed;
* :meth:`~TransientParameter.residual_shares` -- the same element by element (n_el, ne) per
  group: the element-level vectors with which an adjoint forms ``psi . dg/dp`` of many
  per-element parameters of one property in one evaluation;
* :meth:`~TransientParameter.mass_derivative` -- ``dM/dp`` (n_dof, n_dof) of the whole mass
  about a state u, as :meth:`flexmb.assembly.Assembly.mass_data_at` assembles it (constant
  mass, cubic masses at u, spatial rotary inertia ``R J R^T``).

Every supported kind enters the residual linearly: the internal forces of bars, beams and shells
are sums of terms each carrying one section property (Beam2D ``N = EA (...)``, ``M = EI (...)``;
Shell3 linear in E at fixed nu), masses enter through ``M a``, the director and cubic inertia,
the rotary terms and the weight, all linear in the mass properties, and springs, dampers and
Rayleigh damping are linear in k, c, alpha and beta. So ``dg/dp`` is exactly the residual
contribution of the part of the model that p carries: it is evaluated with copies of the groups
holding that part alone (the others zero), as ``flexmb.cms.design._only`` does for the matrices
of modal sensitivities, and no difference quotient is involved. Not linear, and refused
with a ModelError naming the parameter: a shell's thickness (membrane forces go as h, bending as
h^3: the kernel's two parts are needed apart), a Beam3D's EI_y / EI_z with a finite shear
stiffness, a spring given by a force curve.

Kinds, their value p and unit:

==========================  ==================================  =========================
kind (factory)              p                                   unit
==========================  ==================================  =========================
``stiffness scale``         multiplier of all stiffness of      1 (baseline 1)
                            groups (E and G, GA included)
``density scale``           multiplier of all mass of groups    1 (baseline 1)
``stiffness scale`` of a    multiplier of its modal stiffness   1 (baseline 1)
modal body                  K_e (the FE model's E and G)
``density scale`` of a      multiplier of all its inertia       1 (baseline 1)
modal body                  invariants, the modes held
``section property``        multiplier of one property          1 (baseline 1)
                            (EA, EI, GJ, EI_y, EI_z, E, rho_A,
                            rho_I, rho) of one group, or of
                            some of its elements
                            (:func:`element_property`)
``thickness``               multiplier of a shell group's h     1 (derivatives refused)
``point mass``              point mass at a node                kg
``spring rate``             k of one spring-damper              N/m, or N m/rad
``damper rate``             c of one spring-damper              N s/m, or N m s/rad
``body mass``               mass of a rigid body                kg
``body inertia``            one inertia component of a body     kg m^2
``rayleigh alpha``          alpha of a group's Rayleigh         1/s
``rayleigh beta``           beta of a group's Rayleigh          s
==========================  ==================================  =========================

The first three and ``point mass`` are the :mod:`flexmb.cms.design` variables, taken as they
are (:func:`parameter`); multipliers are relative to the model the derivatives are evaluated on
(``apply(model, 1.0)`` is a copy of it). A point mass's ``apply`` replaces the point masses at
the node by one of the given mass (keeping their rotary inertia); values below zero are allowed
there and for the rates (a central difference about a zero baseline), not as a design.

Modal bodies (:class:`~flexmb.elements.floating_frame.ModalBody`, planar and 3D; their group name in
:func:`flexmb.cms.stiffness_scale` / :func:`flexmb.cms.density_scale`): the FE model's stiffness
times s leaves its modes and their stresses under unit loads unchanged, so only ``K_e q`` scales (the
geometric stiffening's K_G comes from the loads, not from K). Its mass times r is taken with the FE
modes *held*, not renormalised (the modal mass becomes r I, q keeps its meaning): then every inertia
invariant, the first moments of the weight and the unit-load geometric stiffness (loads r M U) are r
times the baseline's, and the second-order field of the stiffening (the static responses to r M U,
made K-orthonormal) is unchanged, so the velocity fields' Gram matrix G = Z^T (r M) Z and the first
moments scale while the fields and their coefficients E(q) do not: the body's inertia and weight are
exactly linear in r (tests/test_sensitivity_parameters.py re-derives the fields from r M). Its modal
damping ``diag(2 zeta_k omega_k)`` is held at either scale; Rayleigh damping and section properties
do not apply to a modal body (refused).
"""
from __future__ import annotations

import copy
import dataclasses
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np
import scipy.sparse as sp

from flexmb.assembly import Assembly
from flexmb.checks import ModelError, keywords_listed, real
from flexmb.cms.design import MASS_PROPERTIES, STIFFNESS_PROPERTIES, DesignVariable
from flexmb.elements.base import ElementGroup
from flexmb.elements.force_elements import CoordinateSpringDamper, PointSpringDamper
from flexmb.elements.hermite_mass2d import HermiteMass2D, director_step
from flexmb.elements.rayleigh import RayleighDamping
from flexmb.elements.revolute_spring import RevoluteSpring
from flexmb.model import Model
from flexmb.multibody.joints import RigidBody
from flexmb.rotations import rotated_inertia

if TYPE_CHECKING:
    from flexmb.integrators.schemes import MidPoint, State
    from flexmb.model_forces import ForceElement

#: the groups whose section properties are parameters (their names in flexmb.cms.design)
SECTION_GROUPS = ("Truss", "Beam2D", "Beam3D", "Shell3")
#: spring-damper groups whose k and c are parameters (per element)
SPRING_GROUPS = (PointSpringDamper, CoordinateSpringDamper, RevoluteSpring)
#: inertia components of a 3D body, as (row, column) of the tensor
_COMPONENTS = {"xx": (0, 0), "yy": (1, 1), "zz": (2, 2), "xy": (0, 1), "xz": (0, 2), "yz": (1, 2)}
#: shear stiffnesses that a stiffness scale multiplies with the moduli (Beam3D, where finite)
_SHEAR = ("GA_ky", "GA_kz")
#: the kinds that take modal bodies (:class:`~flexmb.elements.floating_frame.ModalBody` groups, known by
#: name: flexmb.elements.floating_frame imports scipy.sparse.linalg, which this module needs not load)
MODAL_KINDS = ("stiffness scale", "density scale")
#: a modal body's data that a density scale multiplies (the modes held: module docstring)
_MODAL_MASS_ARRAYS = ("modal_mass", "mass", "first_moment0", "first_moment1", "inertia0", "inertia1", "inertia2",
                      "translation_coupling", "rotation_coupling0", "rotation_coupling1", "geometric_stiffness")


@dataclass
class _Piece:
    """Elements carrying a part of p per unit p: a copy of a group holding that part alone (its
    kernels), or a nodal mass (``group`` None); their global DOFs ``ed`` (n_el, ne), constant
    mass (n_el, ne, ne), the rotary inertia (n_el, n_rn, 3, 3) of their spatially rotating nodes
    with those nodes' rows in ``Assembly.rotation_nodes`` (n_el, n_rn) and element columns
    (n_rn, 3), the cubic mass kernels, and which terms carry p."""

    ed: np.ndarray
    group: ElementGroup | None = None
    X: np.ndarray | None = None
    source: ElementGroup | None = None          # the model's group the copy is of
    mass: np.ndarray | None = None
    rotary: np.ndarray | None = None
    rotary_rows: np.ndarray | None = None
    rotary_columns: np.ndarray | None = None
    cubic: object = None
    constants: tuple | None = None             # :func:`_inertia_constants`, formed at first use
    stiffness: bool = False        # the mid-point internal force of the copy
    damping: bool = False          # its mid-point damping force
    inertia: bool = False          # its inertia and weight


@dataclass(eq=False)
class TransientParameter:
    """One design parameter p of a transient analysis (kinds: the module docstring).

    Attributes
    ----------
    name : label for tables and messages.
    kind : one of the kinds of the module docstring.
    unit : p's unit (``"1"`` for multipliers).
    groups : element group names (group kinds).
    prop : the section property (``section property``), or the inertia component (``body inertia``).
    element : the spring-damper's index in its group (``spring rate``, ``damper rate``).
    elements : the elements (indices in the group) a section property multiplier acts on, None
        for all of them.
    node : the node of a point mass or of a body.

    Parameters compare by identity (dict keys of a design).
    """

    name: str
    kind: str
    unit: str
    groups: tuple[str, ...] = ()
    prop: str | None = None
    element: int | None = None
    elements: tuple[int, ...] | None = None
    node: int | None = None
    _parts: weakref.WeakKeyDictionary = field(default_factory=weakref.WeakKeyDictionary, repr=False)

    @property
    def is_multiplier(self) -> bool:
        """True when p multiplies properties of the model (baseline 1, dimensionless)."""
        return self.unit == "1"

    # ---------------------------------------------------------------- value
    def value(self, model: Model) -> float:
        """p in ``model`` (1 for a multiplier; else in :attr:`unit`)."""
        if self.is_multiplier:
            self._groups(model)                       # the groups must exist
            return 1.0
        if self.kind in ("spring rate", "damper rate"):
            group = self._groups(model)[0]
            return float((group.k if self.kind == "spring rate" else group.c)[self.element])
        if self.kind == "point mass":
            self._check_node(model)
            return float(sum(m for n, m, _ in model.point_masses if n == self.node))
        if self.kind in ("body mass", "body inertia"):
            body = self._body(model)
            if self.kind == "body mass":
                return float(body.mass)
            return float(body.inertia if model.dim == 2 else body.inertia[_COMPONENTS[self.prop]])
        group = self._groups(model)[0]                # rayleigh alpha / beta
        return 0.0 if group.rayleigh is None else float(getattr(group.rayleigh, self.kind.split()[1]))

    def apply(self, model: Model, value: float) -> Model:
        """A copy of ``model`` with p = ``value`` (multipliers: relative to ``model``'s own
        properties); ``model`` is not changed. Its assemblies are built afresh from it."""
        value = real(value, f"parameter {self.name!r}: value")
        new = copy.deepcopy(model)
        if self.kind in ("stiffness scale", "density scale", "section property", "thickness"):
            for group in self._groups(new):
                kind = type(group).__name__
                if kind == "ModalBody":
                    _scale_modal_body(group, self.kind, value)
                    continue
                if self.kind == "stiffness scale":
                    props = STIFFNESS_PROPERTIES[kind] + tuple(p for p in _SHEAR if hasattr(group, p))
                elif self.kind == "density scale":
                    props = MASS_PROPERTIES[kind]
                elif self.kind == "thickness":
                    props = ("thickness",)
                else:
                    props = (self.prop,)
                factor = self._element_factor(group, value)
                for prop in props:
                    old = getattr(group, prop)
                    # an infinite shear stiffness (Euler-Bernoulli) stays infinite at any scale
                    scaled = np.where(np.isfinite(old), factor.reshape((-1,) + (1,) * (old.ndim - 1)) * old, old)
                    setattr(group, prop, scaled)
                _refresh(group)
        elif self.kind in ("spring rate", "damper rate"):
            group = self._groups(new)[0]
            name = "k" if self.kind == "spring rate" else "c"
            values = getattr(group, name).copy()
            values[self.element] = value
            setattr(group, name, values)
        elif self.kind == "point mass":
            self._check_node(new)
            inertia = sum(j for n, _, j in new.point_masses if n == self.node)
            new.point_masses = [pm for pm in new.point_masses if pm[0] != self.node] + [(self.node, value, inertia)]
        elif self.kind in ("body mass", "body inertia"):
            body = self._body(new)
            if self.kind == "body mass":
                changed = dataclasses.replace(body, mass=value)
            elif new.dim == 2:
                changed = dataclasses.replace(body, inertia=value)
            else:
                J = np.array(body.inertia, dtype=float)
                i, j = _COMPONENTS[self.prop]
                J[i, j] = J[j, i] = value
                changed = dataclasses.replace(body, inertia=J)
            # bodies are frozen; joints, sensors and shapes refer to the body's node
            new.bodies = [changed if b is body else b for b in new.bodies]
        else:                                          # rayleigh alpha / beta
            group = self._groups(new)[0]
            old = group.rayleigh or RayleighDamping(0.0, 0.0)
            alpha, beta = (value, old.beta) if self.kind == "rayleigh alpha" else (old.alpha, value)
            group.rayleigh = RayleighDamping(alpha, beta) if alpha or beta else None
        new.revision += 1
        return new

    # ----------------------------------------------------------- derivatives
    def residual_derivative(self, scheme: MidPoint, s: State, dt: float, u1: np.ndarray) -> np.ndarray:
        """dg/dp (n_dof,) of the mid-point residual of ``scheme`` (a
        :class:`~flexmb.integrators.schemes.MidPoint` on the model's assembly) for the step of dt
        (s) from the :class:`~flexmb.integrators.schemes.State` ``s`` (its u, v and director
        stretch rates) to the end displacements ``u1`` (n_dof,), at fixed ``s``, dt and u1. Unit:
        N (N m at rotations) per unit of p. Prescribed rows hold the reaction's derivative, as
        ``g`` holds the reaction. The sum of :meth:`residual_shares`."""
        g = np.zeros(scheme.asm.n_dof)
        for ed, share in self.residual_shares(scheme, s, dt, u1):
            np.add.at(g, ed, share)
        return g

    def residual_shares(self, scheme: MidPoint, s: State, dt: float, u1: np.ndarray, kinematics: dict | None = None
                        ) -> list[tuple[np.ndarray, np.ndarray]]:
        """dg/dp element by element: per group (or nodal mass) p acts on, its global DOFs
        (n_el, ne) and each element's share of dg/dp there (n_el, ne) (arguments as
        :meth:`residual_derivative`). A group multiplier's share of element e is e's own
        derivative: parameters on single elements of one property (:func:`element_property`)
        weigh these shares, so their transposed products ``psi . dg/dp`` cost one evaluation of
        the property for all of them. ``kinematics``: a dict the caller keeps for this step
        only, so that several parameters' shares evaluate the step's kinematics once (filled
        here)."""
        asm = scheme.asm
        out = []
        kinematics = {} if kinematics is None else kinematics
        for piece in self._part(asm):
            ed = piece.ed
            share = np.zeros(ed.shape)
            if piece.stiffness:
                share += piece.group.mid_point_force(piece.X, s.u[ed], u1[ed])
            if piece.damping:
                share += piece.group.mid_point_damping(piece.X, s.u[ed], u1[ed], dt, False)[0]
            if piece.inertia:
                share += _inertia_share(asm, piece, scheme, s, dt, u1, kinematics)
            out.append((ed, share))
        return out

    def mass_derivative(self, asm: Assembly, u: np.ndarray | None = None) -> sp.csr_matrix:
        """dM/dp (n_dof, n_dof) about the state u (default the reference state), the derivative of
        the whole mass :meth:`~flexmb.assembly.Assembly.mass_data_at` assembles: constant mass,
        cubic masses at u, spatial rotary inertia ``R J R^T``; kg (kg m, kg m^2) per unit of p.
        Zero for stiffness, spring and damping kinds."""
        n = asm.n_dof
        u = np.zeros(n) if u is None else np.asarray(u, dtype=float)
        blocks = []
        for piece in self._part(asm):
            if not piece.inertia:
                continue
            blocks.append((piece.ed, piece.mass))
            if piece.cubic is not None:
                blocks.append((piece.ed, piece.cubic.mass_matrix(u[piece.ed])))
            if piece.rotary is not None:
                rot = piece.ed[:, piece.rotary_columns].reshape(-1, 3)            # (n_el n_rn, 3)
                blocks.append((rot, rotated_inertia(u[rot], piece.rotary.reshape(-1, 3, 3))))
        return _assemble(blocks, n).tocsr()

    def energy_derivatives(self, asm: Assembly, u: np.ndarray, v: np.ndarray, stretch: np.ndarray | None = None
                           ) -> tuple[float, float]:
        """(dT/dp, dV/dp) at the state (u, v, director stretch rates): the parameter's part of
        :meth:`~flexmb.assembly.Assembly.kinetic_energy` and of
        :meth:`~flexmb.assembly.Assembly.strain_energy` (both linear in p), J per unit of p; what a
        response on an energy depends on besides the state."""
        dT = dV = 0.0
        for piece in self._part(asm):
            ed = piece.ed
            if piece.stiffness:
                dV += _strain_energy_share(piece, u[ed])
            if not piece.inertia:
                continue
            dT += 0.5 * float(np.einsum("ei,eij,ej->", v[ed], piece.mass, v[ed]))
            dd = asm.director_dofs
            if stretch is not None and dd.size:               # the director stretch rates' share, J s^2 / 2
                at = np.isin(ed, dd)
                dT += 0.5 * float((np.diagonal(piece.mass, axis1=1, axis2=2) * stretch[ed] ** 2)[at].sum())
            if isinstance(piece.cubic, HermiteMass2D):
                se = None if stretch is None else stretch[ed[:, [2, 5]]]
                dT += float(piece.cubic.kinetic_energy(u[ed], v[ed], se).sum())
            elif piece.cubic is not None:                      # a modal body's configuration mass
                dT += float(piece.cubic.kinetic_energy(u[ed], v[ed]).sum())
            if piece.rotary is not None:
                rot = ed[:, piece.rotary_columns].reshape(-1, 3)                  # (n_el n_rn, 3)
                J = rotated_inertia(u[rot], piece.rotary.reshape(-1, 3, 3))
                dT += 0.5 * float(np.einsum("ni,nij,nj->", v[rot], J, v[rot]))
        return dT, dV

    # ------------------------------------------------------------ the part
    def _part(self, asm: Assembly) -> list[_Piece]:
        """The pieces of ``asm``'s model that carry p, built once per assembly."""
        if not isinstance(asm, Assembly):
            raise ModelError(f"parameter {self.name!r}: derivatives need an Assembly, got {type(asm).__name__}")
        kept = self._parts.get(asm)
        if kept is None or kept[0] != asm.model.revision:
            kept = (asm.model.revision, self._build(asm))
            self._parts[asm] = kept
        return kept[1]

    def _build(self, asm: Assembly) -> list[_Piece]:
        model = asm.model
        if self.kind == "thickness":
            raise ModelError(f"parameter {self.name!r}: the residual of a shell is not linear in its thickness "
                             "(membrane forces go as h, bending as h^3, the mass as h); its derivative needs the "
                             "shell kernel's membrane and bending parts apart (not yet); apply() and finite "
                             "differences of re-runs work")
        if self.kind in ("point mass", "body mass", "body inertia"):
            node = self._check_node(model) if self.kind == "point mass" else self._body(model).node
            if self.kind != "body inertia":                # a unit mass on the node's translations
                ed = asm.dofs.translations()[node][None]
                return [_Piece(ed, mass=np.eye(ed.shape[1])[None], inertia=True)]
            if model.dim == 2:                            # a unit polar inertia on rz
                return [_Piece(np.array([[asm.dofs.index(node, "rz")]]), mass=np.ones((1, 1, 1)), inertia=True)]
            i, j = _COMPONENTS[self.prop]
            J = np.zeros((1, 1, 3, 3))
            J[0, 0, i, j] = J[0, 0, j, i] = 1.0
            row = np.searchsorted(asm.rotation_nodes, node)
            return [_Piece(asm.rotation_dofs[row][None], mass=np.zeros((1, 3, 3)), rotary=J,
                           rotary_rows=np.array([[row]]), rotary_columns=np.arange(3)[None], inertia=True)]
        pieces = []
        for group in self._groups(model):
            part, terms = self._part_group(group)
            X = model.coordinates[group.connectivity]
            piece = _Piece(asm.dofs.element_dofs(group), part, X, group, stiffness="stiffness" in terms,
                           damping="damping" in terms, inertia="mass" in terms)
            if piece.inertia:
                piece.mass = part.mass_matrix(X)
                piece.cubic = part.configuration_mass(X)
                if hasattr(part, "rotary_inertia") and asm.rotation_nodes.size:
                    piece.rotary = part.rotary_inertia(X)                        # (n_el, nn, 3, 3)
                    piece.rotary_rows = np.searchsorted(asm.rotation_nodes, group.connectivity)
                    piece.rotary_columns = group.dofs_per_node * np.arange(group.n_nodes)[:, None] + model.dim \
                        + np.arange(3)[None, :]
            pieces.append(piece)
        return pieces

    def _part_group(self, group: ElementGroup) -> tuple[ElementGroup, set[str]]:
        """A copy of ``group`` holding the part p carries per unit p, and which of its terms
        (stiffness, damping, mass) carry it."""
        part = copy.copy(group)
        kind = type(group).__name__
        rayleigh = group.rayleigh
        if self.kind in ("spring rate", "damper rate"):
            unit = np.zeros(group.n_elements)
            unit[self.element] = 1.0
            spring = self.kind == "spring rate"
            part.k, part.c = (unit, np.zeros_like(unit)) if spring else (np.zeros_like(unit), unit)
            part.preload = np.zeros(group.n_elements)
            return part, {"stiffness" if spring else "damping"}
        if self.kind in ("rayleigh alpha", "rayleigh beta"):
            alpha = self.kind == "rayleigh alpha"
            part.rayleigh = RayleighDamping(1.0 if alpha else 0.0, 0.0 if alpha else 1.0)
            return part, {"damping"}
        if kind == "ModalBody":
            # K_e q carries all its stiffness and the configuration mass all its inertia and weight, each
            # linear in its scale (module docstring); its modal damping is held
            return part, {"stiffness"} if self.kind == "stiffness scale" else {"mass"}
        stiff, mass = STIFFNESS_PROPERTIES[kind], MASS_PROPERTIES[kind]
        if self.kind == "stiffness scale":
            keep = set(stiff)
        elif self.kind == "density scale":
            keep = set(mass)
        else:
            keep = {self.prop}
            if self.prop in ("EI_y", "EI_z") and np.any(np.isfinite(group.GA_kz if self.prop == "EI_y"
                                                                     else group.GA_ky)):
                raise ModelError(f"parameter {self.name!r}: with a finite shear stiffness the bending of group "
                                 f"{group.name!r} is not linear in {self.prop}; use a stiffness scale of the group")
        for prop in stiff + mass:
            if prop not in keep:
                setattr(part, prop, np.zeros_like(getattr(group, prop)))
            elif self.elements is not None:                # the other elements' share is not p's
                value = getattr(group, prop)
                setattr(part, prop, self._element_factor(group, 1.0, 0.0).reshape((-1,) + (1,) * (value.ndim - 1))
                        * value)
        is_stiff = bool(keep & set(stiff))
        terms = {"stiffness"} if is_stiff else {"mass"}
        # Rayleigh damping alpha M + beta K: the part's share is beta K_part or alpha M_part (a fresh
        # object: RayleighDamping keeps the group's matrices once computed)
        part.rayleigh = None
        if rayleigh is not None and (rayleigh.beta if is_stiff else rayleigh.alpha):
            part.rayleigh = RayleighDamping(0.0, rayleigh.beta) if is_stiff else RayleighDamping(rayleigh.alpha, 0.0)
            terms.add("damping")
        return part, terms

    def _element_factor(self, group: ElementGroup, inside: float, outside: float = 1.0) -> np.ndarray:
        """Per element of ``group`` (n_el,): ``inside`` on the parameter's elements, ``outside`` on the
        others (all elements are the parameter's without :attr:`elements`)."""
        if self.elements is None:
            return np.full(group.n_elements, inside)
        factor = np.full(group.n_elements, outside)
        factor[list(self.elements)] = inside
        return factor

    # ------------------------------------------------------------- lookups
    def _groups(self, model: Model) -> list[ElementGroup]:
        found = [g for g in model.groups if g.name in self.groups]
        missing = [name for name in self.groups if not any(g.name == name for g in found)]
        if missing:
            raise ModelError(f"parameter {self.name!r}: group {missing[0]!r} is not in this model (its groups: "
                             f"{', '.join(repr(g.name) for g in model.groups) or 'none'})")
        for group in found:
            self._check_group(group)
        return found

    def _check_group(self, group: ElementGroup) -> None:
        kind = type(group).__name__
        if self.kind in ("spring rate", "damper rate"):
            if not isinstance(group, SPRING_GROUPS):
                raise ModelError(f"parameter {self.name!r}: group {group.name!r} ({kind}) holds no spring-dampers "
                                 "with a rate k and c")
            if not 0 <= self.element < group.n_elements:
                raise ModelError(f"parameter {self.name!r}: group {group.name!r} has {group.n_elements} elements, "
                                 f"no element {self.element}")
            if self.kind == "spring rate" and getattr(group, "curve", None) is not None:
                raise ModelError(f"parameter {self.name!r}: the springs of group {group.name!r} follow a force "
                                 "curve, which has no rate k")
            return
        if kind == "ModalBody":
            if self.kind not in MODAL_KINDS:
                raise ModelError(f"parameter {self.name!r}: group {group.name!r} is a modal body; its parameters are "
                                 f"its {' and '.join(MODAL_KINDS)}, not a {self.kind}")
            return
        if kind not in SECTION_GROUPS:
            raise ModelError(f"parameter {self.name!r}: group {group.name!r} is a {kind}; transient parameters "
                             f"take the properties of {', '.join(SECTION_GROUPS)} groups")
        if self.kind == "section property" and self.prop not in STIFFNESS_PROPERTIES[kind] + MASS_PROPERTIES[kind]:
            raise ModelError(f"parameter {self.name!r}: {self.prop!r} is not a property of group {group.name!r} "
                             f"({kind} has {', '.join(STIFFNESS_PROPERTIES[kind] + MASS_PROPERTIES[kind])})")
        if self.elements is not None and not all(0 <= e < group.n_elements for e in self.elements):
            raise ModelError(f"parameter {self.name!r}: group {group.name!r} has {group.n_elements} elements, not "
                             f"all of {list(self.elements)}")
        if self.kind == "thickness" and kind != "Shell3":
            raise ModelError(f"parameter {self.name!r}: group {group.name!r} is a {kind}, not a shell")

    def _check_node(self, model: Model) -> int:
        if not 0 <= self.node < model.n_nodes:
            raise ModelError(f"parameter {self.name!r}: node {self.node} is not in this model "
                             f"(it has {model.n_nodes} nodes)")
        return self.node

    def _body(self, model: Model) -> RigidBody:
        for body in model.bodies:
            if body.node == self.node:
                return body
        raise ModelError(f"parameter {self.name!r}: no rigid body at node {self.node} in this model")


def _strain_energy_share(piece: _Piece, ue: np.ndarray) -> float:
    """The strain energy (J) the piece's part carries per unit p at the element DOFs ue (n_el, ne).
    A copy that keeps all the group's stiffness gives it directly; one with a property zeroed may
    not (a beam's energy is N^2 l0 / (2 EA)): then, by linearity, the energy of the group with the
    part added once more minus the group's own."""
    part, source = piece.group, piece.source
    stiff = STIFFNESS_PROPERTIES.get(type(source).__name__, ())
    if not stiff or all(np.array_equal(getattr(part, prop), getattr(source, prop)) for prop in stiff):
        return float(part.strain_energy(piece.X, ue).sum())
    bumped = copy.copy(source)
    for prop in stiff:
        setattr(bumped, prop, getattr(source, prop) + getattr(part, prop))
    _refresh(bumped)
    return float((bumped.strain_energy(piece.X, ue) - source.strain_energy(piece.X, ue)).sum())


def _inertia_constants(asm: Assembly, piece: _Piece) -> tuple:
    """What :func:`_inertia_share` takes from a piece at every step: where its DOFs are director
    DOFs (n_el, ne) bool and its mass's diagonal there (None without), where they are spatial
    rotations (n_el, ne) bool (None without), and its constant mass's weight ``M g`` (n_el, ne),
    N (None without gravity), and whether it holds a cubic mass that is not zero (a cubic-mass
    beam's rho_I part holds one of zero rho_A: its forces are zero)."""
    ed = piece.ed
    at_director = np.isin(ed, asm.director_dofs) if asm.director_dofs.size else None
    if at_director is not None and not at_director.any():
        at_director = None
    director_mass = None if at_director is None else np.diagonal(piece.mass, axis1=1, axis2=2)[at_director]
    at_rotation = np.isin(ed, asm.rotation_dofs) if asm.rotation_dofs.size else None
    weight = None
    if np.any(asm.model.gravity):
        gravity = np.zeros(asm.n_dof)
        gravity[asm.dofs.translations()] = asm.model.gravity[None, :]
        weight = np.einsum("eij,ej->ei", piece.mass, gravity[ed])
    cubic = piece.cubic is not None and not (isinstance(piece.cubic, HermiteMass2D) and not np.any(piece.cubic.mass))
    return at_director, director_mass, at_rotation, weight, cubic


def _inertia_share(asm: Assembly, piece: _Piece, scheme, s, dt: float, u1: np.ndarray, kinematics: dict
                   ) -> np.ndarray:
    """The piece's inertia minus its weight (n_el, ne), as :meth:`MidPoint.residual` forms the
    whole model's: ``M a_m``; at the rotations of cubic-mass nodes the director form, linear in
    the rotary inertia J (the element's J times that of J = 1); at spatial rotations the rotary
    terms ``(pi_{n+1} - pi_n) / dt`` of the element's J in place of ``M a_m``; the cubic masses'
    inertia; the weight ``M g`` and the cubic masses' discrete gradient of theirs. ``kinematics``:
    the step's (:meth:`TransientParameter.residual_shares`)."""
    if "motion" not in kinematics:              # the scheme's own kinematics of the step: a_m, d, body rates
        kinematics["motion"] = scheme._motion(s, dt, u1)
    _, a_m, d, rates, _ = kinematics["motion"]
    ed = piece.ed
    if piece.constants is None:
        piece.constants = _inertia_constants(asm, piece)
    at_director, director_mass, at_rotation, weight, cubic = piece.constants
    share = np.matmul(piece.mass, a_m[ed][:, :, None])[:, :, 0]                    # (n_el, ne)
    if at_director is not None:
        share[at_director] = director_mass * _director_unit(asm, s, dt, kinematics)[ed[at_director]]
    rd = asm.rotation_dofs
    if rd.size:
        share[at_rotation] = 0.0
        if piece.rotary is not None:
            from flexmb.compiled.rigid import mid_point_rotary_terms

            R0, R1, Om1 = rates
            rows = piece.rotary_rows.ravel()
            terms = mid_point_rotary_terms(R0[rows], R1[rows], Om1[rows], piece.rotary.reshape(-1, 3, 3),
                                           s.v[rd][rows], d[rd][rows], dt)[0]      # (n_el n_rn, 3)
            share[:, piece.rotary_columns.ravel()] = terms.reshape(ed.shape[0], -1)
    if weight is not None:
        share -= weight
    if cubic:
        # the director stretch rates at the nodes' rotations: cubic-mass beams only (modal bodies read none)
        stretch = s.stretch[ed[:, 2::3]] if s.stretch is not None and isinstance(piece.cubic, HermiteMass2D) \
            else None                                                              # the two angles' rates
        share += piece.cubic.mid_point_inertia(s.u[ed], u1[ed], s.v[ed], stretch, dt, False)[0]
        if weight is not None:                                                     # gravity
            share -= piece.cubic.mid_point_gravity(s.u[ed], u1[ed], asm.model.gravity)[0]
    return share


def _director_unit(asm: Assembly, s: State, dt: float, kinematics: dict) -> np.ndarray:
    """The director form of the rotary inertia per unit J (n_dof,), zero off the director DOFs
    (rad/s^2), of the step of dt (s) from s with the step's ``kinematics`` (a dict holding the
    scheme's ``motion``; the result is kept there): the rotary share of an inertia J is J times it."""
    if "director unit" not in kinematics:
        _, _, d, _, director = kinematics["motion"]
        dd = asm.director_dofs
        unit = kinematics["director unit"] = np.zeros(asm.n_dof)
        J = asm.director_inertia
        if director is not None and np.all(J != 0.0):      # linear in J: the step's own divided by J
            unit[dd] = director[3] / J
        else:
            unit[dd] = director_step(d[dd], s.v[dd], s.stretch[dd], np.ones(dd.size), dt)[3]
    return kinematics["director unit"]


# ---------------------------------------------------------------- factories
@keywords_listed
def parameter(variable: DesignVariable) -> TransientParameter:
    """The transient parameter of a :mod:`flexmb.cms.design` variable (stiffness scale, density
    scale, section property, point mass). Its ``spring`` (a spring added to the model at zero
    baseline) has no element in a transient model: refused (give the model a spring with
    ``add_spring`` and take :func:`spring_rate`)."""
    if not isinstance(variable, DesignVariable):
        raise ModelError(f"parameter: expected a flexmb.cms design variable, got {type(variable).__name__}")
    if variable.kind == "spring":
        raise ModelError(f"parameter {variable.name!r}: a flexmb.cms spring is not an element of the model; add a "
                         "spring to the model and take spring_rate of it")
    if variable.kind == "point mass":
        return TransientParameter(variable.name, "point mass", "kg", node=variable.node)
    return TransientParameter(variable.name, variable.kind, "1", variable.groups, variable.prop)


@keywords_listed
def element_property(group: ElementGroup | str, prop: str, elements: int | Sequence[int],
                     name: str | None = None) -> TransientParameter:
    """Multiplier (baseline 1) on the section property ``prop`` (as
    :func:`flexmb.cms.section_property`) of some elements of a group only: ``elements`` their
    indices in the group (a segment of a beam, one element of a tapered design)."""
    group_name = _group_name(group, "element_property")
    chosen = tuple(sorted({int(e) for e in np.atleast_1d(elements)}))
    if not chosen:
        raise ModelError(f"element_property of group {group_name!r}: give at least one element")
    label = name or f"{prop} scale {group_name} elements {','.join(map(str, chosen))}"
    return TransientParameter(label, "section property", "1", (group_name,), prop, elements=chosen)


@keywords_listed
def thickness(group: ElementGroup | str, name: str | None = None) -> TransientParameter:
    """Multiplier on a shell group's thickness (baseline 1). ``apply`` works (finite differences);
    its derivatives are refused: the shell's forces are not linear in h (module docstring)."""
    group_name = _group_name(group, "thickness")
    return TransientParameter(name or f"thickness scale {group_name}", "thickness", "1", (group_name,))


@keywords_listed
def spring_rate(element: ForceElement, name: str | None = None) -> TransientParameter:
    """Rate k of one spring-damper: ``element`` is the
    :class:`~flexmb.model_forces.ForceElement` that ``add_spring``, ``add_spring_damper`` or
    ``add_joint_spring_damper`` returned. N/m (N m/rad on a joint angle)."""
    return _rate(element, "spring rate", name)


@keywords_listed
def damper_rate(element: ForceElement, name: str | None = None) -> TransientParameter:
    """Rate c of one spring-damper (as :func:`spring_rate`). N s/m (N m s/rad on a joint angle)."""
    return _rate(element, "damper rate", name)


@keywords_listed
def body_mass(body: RigidBody, name: str | None = None) -> TransientParameter:
    """Mass (kg) of a rigid body."""
    if not isinstance(body, RigidBody):
        raise ModelError(f"body_mass: expected a RigidBody (add_rigid_body returns it), got {body!r}")
    return TransientParameter(name or f"mass of {body.name}", "body mass", "kg", node=body.node)


@keywords_listed
def body_inertia(body: RigidBody, component: str = "zz", name: str | None = None) -> TransientParameter:
    """One component of a rigid body's inertia about its centre of mass (kg m^2): 2D ``"zz"``;
    3D ``"xx"``, ``"yy"``, ``"zz"`` or a product ``"xy"``, ``"xz"``, ``"yz"`` (both symmetric
    entries move together)."""
    if not isinstance(body, RigidBody):
        raise ModelError(f"body_inertia: expected a RigidBody (add_rigid_body returns it), got {body!r}")
    planar = np.ndim(body.inertia) == 0
    if component not in (("zz",) if planar else tuple(_COMPONENTS)):
        raise ModelError(f"body_inertia of {body.name!r}: component {component!r} unknown (it has "
                         f"{'zz' if planar else ', '.join(_COMPONENTS)})")
    return TransientParameter(name or f"J_{component} of {body.name}", "body inertia", "kg m^2", prop=component,
                              node=body.node)


@keywords_listed
def rayleigh(group: ElementGroup | str, coefficient: str, name: str | None = None) -> TransientParameter:
    """Rayleigh coefficient ``"alpha"`` (1/s, on the mass) or ``"beta"`` (s, on the stiffness)
    of an element group's damping ``alpha M + beta K`` (zero when the group has none)."""
    group_name = _group_name(group, "rayleigh")
    if coefficient not in ("alpha", "beta"):
        raise ModelError(f"rayleigh of group {group_name!r}: coefficient must be 'alpha' or 'beta', "
                         f"got {coefficient!r}")
    return TransientParameter(name or f"Rayleigh {coefficient} {group_name}", f"rayleigh {coefficient}",
                              "1/s" if coefficient == "alpha" else "s", (group_name,))


def _rate(element, kind: str, name: str | None) -> TransientParameter:
    from flexmb.model_forces import ForceElement

    if not isinstance(element, ForceElement):
        raise ModelError(f"{kind.replace(' ', '_')}: expected the ForceElement that add_spring / add_damper / "
                         f"add_spring_damper / add_joint_spring_damper returned, got {element!r}")
    unit = "N/m" if kind == "spring rate" else "N s/m"
    if element.group.startswith("joint springs") and "slides" not in element.group:
        unit = "N m/rad" if kind == "spring rate" else "N m s/rad"
    label = "k" if kind == "spring rate" else "c"
    return TransientParameter(name or f"{label} of {element.name}", kind, unit, (element.group,),
                              element=element.index)


def _group_name(group: ElementGroup | str, what: str) -> str:
    if isinstance(group, ElementGroup):
        return group.name
    if isinstance(group, str):
        return group
    raise ModelError(f"{what}: a group is a name or an element group, got {group!r}")


def _refresh(group: ElementGroup) -> None:
    """Drop what a group computed from its properties (a shell's strain stiffness, a Rayleigh
    damping's matrices), after a property changed in place."""
    if hasattr(group, "_reference"):
        group._reference = None
    if group.rayleigh is not None:
        group.rayleigh = RayleighDamping(group.rayleigh.alpha, group.rayleigh.beta)


def _scale_modal_body(group: ElementGroup, kind: str, value: float) -> None:
    """Multiply a modal body's (a ModalBody group, changed in place) stiffness (``kind`` "stiffness
    scale") or mass ("density scale") by ``value``, its FE modes held (module docstring): its data
    and, for the mass, its velocity fields become scaled copies (the originals are shared by the
    models made from the same data)."""
    data = group.data
    kept = data.__dict__.get("_kept_velocity_fields", {})
    if kind == "stiffness scale":
        scaled = dataclasses.replace(data, modal_stiffness=value * data.modal_stiffness)
        group._element_stiffness = value * group._element_stiffness
    else:
        scaled = dataclasses.replace(data, **{name: value * getattr(data, name) for name in _MODAL_MASS_ARRAYS})
        fields = copy.copy(group.velocity_fields)
        # G = Z^T M Z and the first moment's S0, S1, S2 go with M; the fields Z and coefficients E(q) do
        # not (the second-order field's loads and its geometric stiffness both scale with M)
        for name in ("mass", "G", "S0", "S1", "S2"):
            setattr(fields, name, value * getattr(fields, name))
        kept = {group.stiffening: fields}
        group.velocity_fields = fields
    scaled.__dict__["_kept_velocity_fields"] = kept
    group.data = scaled


def _assemble(blocks: list[tuple[np.ndarray, np.ndarray]], n: int) -> sp.coo_matrix:
    """The sum (n, n) of blocks (m, k, k) on the global DOFs (m, k) of each pair (DOFs, blocks)."""
    rows = [np.repeat(ed, ed.shape[1], axis=1).ravel() for ed, _ in blocks]
    cols = [np.tile(ed, (1, ed.shape[1])).ravel() for ed, _ in blocks]
    vals = [b.ravel() for _, b in blocks]
    empty = [np.zeros(0, dtype=np.int64)]
    return sp.coo_matrix((np.concatenate(vals + [np.zeros(0)]), (np.concatenate(rows + empty),
                          np.concatenate(cols + empty))), shape=(n, n))
