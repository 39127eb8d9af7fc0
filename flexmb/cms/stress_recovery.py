"""Stress recovery in reduced components and modal bodies (issue 32, item 3).

A reduced component or a modal body moves in the span of a basis, u = Phi q (Phi (n_dof, n_m) over
the component's DOFs). The stresses of a linear(ised) structure are linear in u, so each column of
Phi has its *modal stress* sigma_k, computed once per basis (:func:`modal_stresses`), and along a
history

    sigma(t) = sum_k q_k(t) sigma_k          (:meth:`ModalStresses.recover`),

with the von Mises stress taken from the recovered tensor (a sum of modal von Mises stresses would
be wrong: von Mises is not linear).

What a modal stress holds (per unit modal coordinate; a modal body's in its body-frame axes):

* solids: the Voigt stress tensor [s_xx, s_yy, s_zz, s_yz, s_xz, s_xy] at the nodes (Pa). At a node
  each element's own field is *evaluated at the node*, D B(xi_node) u_e (for a straight-sided tet10,
  whose stress is linear, this equals extrapolating its four stiffness points; for a tet4 it is the
  element's constant stress; for a hex8 its field at the corner), then the values of the solid
  elements sharing the node are averaged (plain mean). NaN at nodes without solid elements;
* every element group's linear ``element_outputs`` (beams' section forces N, M1, M2 / N, T, My1 ...,
  trusses' N, shells' membrane_forces and bending_moments (k = 3 per element), solids' element-mean
  s_xx ... s_xy, strains), *linearised about the reference state*: the beams and shells are
  co-rotational, their outputs are taken by a fourth-order central difference along each column
  (step 1e-3 of the model size in translations or 1e-3 rad; truncation ~1e-12 relative), exact for
  the linear solids. Outputs that are not linear (``von_mises``, ``von_mises_max``) are not stored:
  the recovery computes the solids' element ``von_mises`` from the recovered element-mean tensor.
  Imported matrices (a :class:`~flexmb.elements.matrix_group.MatrixGroup`) have no stresses: a
  component of those alone has none (:func:`modal_stresses` returns None).

Static pre-load of a modal body. A stiffened body spun on a hub carries the stress of its inertia
loads (the centrifugal stretch of a blade), whose shape is mostly *not* in the basis (the axial modes
of a blade are far above the kept bending modes). The modal coordinates already hold the
quasi-static response to those loads inside the span (Phi K_e^-1 Phi^T f, the loads enter the modal
equations through the inertia couplings), so adding the full static stress would count that part
twice. :attr:`ModalStresses.static_node_stress` is therefore the stress of the *residual* static
field of each unit inertia load case g (the mode-acceleration correction, Craig & Kurdila,
Fundamentals of Structural Dynamics, sec. 14.4),

    u_g,res = u_g - Phi K_e^-1 Phi^T K u_g,      u_g = K^-1 f_g (frame node and interface nodes held),

(the K-orthogonal part of u_g outside the span; with the frame node alone held Phi^T K u_g = Phi^T f_g,
the modes' quasi-static load),

and :meth:`ModalStresses.recover` adds sum_g s_g sigma(u_g,res) when given the kinematic scalars
s_g (``load_scalars``, the names of :attr:`~flexmb.cms.ModalBodyData.load_cases`; at a steady spin
:func:`steady_spin_scalars`). At a steady state, where q is the quasi-static response, the sum is the
full static stress u_g's to the reduction's accuracy (exactly so for the linear body without K_G).
Without ``load_scalars`` the recovery gives the elastic stress of Phi q alone (the default, since the
scalars are a property of the motion, not of the body).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from flexmb.checks import ModelError, keywords_listed, methods_keywords_listed, real_array
from flexmb.elements.matrix_group import MatrixGroup
from flexmb.elements.solid import Solid, strain_operator, von_mises
from flexmb.elements.solid_shapes import NODE_COORDINATES, shape_functions

if TYPE_CHECKING:
    from flexmb.cms.component import Component
    from flexmb.cms.modal_body import ModalBodyData
    from flexmb.cms.reduction import ReducedBasis
    from flexmb.results import Result

__all__ = ["ModalStresses", "RecoveredStresses", "modal_stresses", "recover_modal_body", "steady_spin_scalars"]

#: step of the central difference, relative to the model size (translations) or in rad (rotations)
_STEP = 1e-3
#: element outputs that are not linear in u (recomputed from the recovered tensor, never summed)
_NOT_LINEAR = frozenset({"von_mises", "von_mises_max"})
#: the solids' element-mean Voigt stress names, in Voigt order
_VOIGT_NAMES = ("s_xx", "s_yy", "s_zz", "s_yz", "s_xz", "s_xy")


@methods_keywords_listed
@dataclass
class ModalStresses:
    """The stresses of each column of a basis Phi (module docstring), computed once per basis.

    Attributes
    ----------
    component : the :class:`~flexmb.cms.component.Component` (its model's nodes and element groups).
    basis : Phi (n_dof, n_m) over the component's DOFs.
    node_stress : (n_m, n_nodes, 6) Voigt stress at the component model's nodes per unit q_k (Pa per
        unit of q_k; a modal body's q in kg^1/2 m), NaN at nodes without solid elements.
    solid_nodes : (n_nodes,) bool, the nodes of solid elements.
    group_names : name of each element group of the component's model.
    elements : per group, output name -> (n_m, n_el) or (n_m, n_el, k) per unit q_k, the linearised
        ``element_outputs`` (units in the group's ``output_units``); empty for imported matrices.
    load_cases : names of the unit inertia load cases with static stresses (modal bodies), else [].
    static_basis : (n_dof, n_cases) residual static displacement u_g,res of each case (m per unit s_g).
    static_node_stress : (n_cases, n_nodes, 6) its nodal Voigt stress (Pa per unit s_g).
    static_elements : per group, output name -> (n_cases, n_el[, k]), its linearised element outputs.
    """

    component: Component
    basis: np.ndarray
    node_stress: np.ndarray
    solid_nodes: np.ndarray
    group_names: list[str]
    elements: list[dict[str, np.ndarray]]
    load_cases: list[str] = field(default_factory=list)
    static_basis: np.ndarray | None = None
    static_node_stress: np.ndarray | None = None
    static_elements: list[dict[str, np.ndarray]] | None = None

    @property
    def n_modes(self) -> int:
        """n_m, the number of basis columns."""
        return self.basis.shape[1]

    @classmethod
    def of_reduced(cls, reduced: ReducedBasis) -> ModalStresses | None:
        """The modal stresses of a :class:`~flexmb.cms.reduction.ReducedBasis`: its ``vectors``,
        then its ``residual_flexibility`` columns if it has them (free-interface with residual
        flexibility: the component moves as vectors q + G_res g, g the interface forces)."""
        Phi = reduced.vectors
        if reduced.residual_flexibility is not None:
            Phi = np.hstack([Phi, reduced.residual_flexibility])
        return modal_stresses(reduced.component, Phi)

    def with_static_cases(self, load_cases: list[str], fields: np.ndarray) -> ModalStresses:
        """A copy that also holds the static residual displacement ``fields`` (n_dof, n_cases) of the
        named load cases and their stresses (used by :attr:`flexmb.cms.ModalBodyData.modal_stresses`)."""
        fields = np.asarray(fields, dtype=float)
        if fields.shape != (self.component.n_dof, len(load_cases)):
            raise ModelError(f"{self.component.name}: static fields must have shape "
                             f"({self.component.n_dof}, {len(load_cases)}), got {fields.shape}")
        static = modal_stresses(self.component, fields)
        return ModalStresses(self.component, self.basis, self.node_stress, self.solid_nodes, self.group_names,
                             self.elements, list(load_cases), fields, static.node_stress, static.elements)

    @keywords_listed
    def recover(self, q: np.ndarray, load_scalars: Mapping[str, float | np.ndarray] | None = None,
                times: np.ndarray | None = None) -> RecoveredStresses:
        """sigma = sum_k q_k sigma_k (+ sum_g s_g sigma_g,res with ``load_scalars``) at every step.

        Parameters
        ----------
        q : (n_m,) or (n_steps, n_m) the basis coordinates (a modal body's q, kg^1/2 m).
        load_scalars : name -> s_g, a number or (n_steps,), for the load cases of :attr:`load_cases`
            (``"ww_zz"`` in rad^2/s^2, ``"a_x"`` in m/s^2, ...): adds the residual static stress of
            the body's inertia loads (module docstring); None: the stress of Phi q alone.
        times : (n_steps,) the time of each step (s), kept with the result; optional.
        """
        what = f"{self.component.name}: stress recovery"
        q = real_array(q, f"{what}: q")
        if q.ndim == 1:
            q = q[None]
        if q.ndim != 2 or q.shape[1] != self.n_modes:
            raise ModelError(f"{what}: q must have shape ({self.n_modes},) or (n_steps, {self.n_modes}), "
                             f"got {q.shape}")
        n_steps = len(q)
        node = np.einsum("tk,kns->tns", q, self.node_stress)                  # (n_steps, n_nodes, 6)
        u = q @ self.basis.T                                                  # (n_steps, n_dof)
        elements = [{name: np.tensordot(q, values, axes=(1, 0)) for name, values in group.items()}
                    for group in self.elements]
        if load_scalars:
            s = self._scalars(load_scalars, n_steps, what)                    # (n_steps, n_cases)
            node = node + np.einsum("tg,gns->tns", s, self.static_node_stress)
            u = u + s @ self.static_basis.T
            for group, static in zip(elements, self.static_elements):
                for name, values in static.items():
                    group[name] = group[name] + np.tensordot(s, values, axes=(1, 0))
        for group in elements:
            if all(name in group for name in _VOIGT_NAMES):
                group["von_mises"] = von_mises(np.stack([group[name] for name in _VOIGT_NAMES], axis=-1))
        if times is not None:
            times = real_array(times, f"{what}: times", (n_steps,))
        return RecoveredStresses(self.component, times, q, node, von_mises(node), elements,
                                 self._translations(u), self.group_names)

    def _scalars(self, load_scalars: Mapping[str, float | np.ndarray], n_steps: int, what: str) -> np.ndarray:
        """(n_steps, n_cases) load-case scalars from the mapping name -> number or (n_steps,)."""
        if self.static_basis is None:
            raise ModelError(f"{what}: load_scalars need the static stresses of a modal body's load cases "
                             "(ModalBodyData.modal_stresses); these modal stresses have none")
        s = np.zeros((n_steps, len(self.load_cases)))
        for name, value in load_scalars.items():
            if name not in self.load_cases:
                raise ModelError(f"{what}: unknown load case {name!r}; this body has {self.load_cases}")
            v = real_array(value, f"{what}: load_scalars[{name!r}]")
            if v.shape not in ((), (n_steps,)):
                raise ModelError(f"{what}: load_scalars[{name!r}] must be a number or have shape ({n_steps},), "
                                 f"got {v.shape}")
            s[:, self.load_cases.index(name)] = v
        return s

    def _translations(self, u: np.ndarray) -> np.ndarray:
        """Nodal translations (n_steps, n_nodes, 3) of DOF vectors u (n_steps, n_dof), z = 0 in 2D."""
        trans = self.component.assembly.dofs.translations()                   # (n_nodes, dim)
        out = np.zeros((len(u), len(trans), 3))
        out[:, :, :trans.shape[1]] = u[:, trans]
        return out


@methods_keywords_listed
@dataclass
class RecoveredStresses:
    """Stresses recovered along a history or for a mode shape (:meth:`ModalStresses.recover`).

    Attributes
    ----------
    component : the :class:`~flexmb.cms.component.Component` (nodes, cells: ``component.model``).
    times : (n_steps,) time of each step (s), or None.
    q : (n_steps, n_m) the basis coordinates.
    node_stress : (n_steps, n_nodes, 6) Voigt stress at the nodes (Pa), NaN off the solids.
    von_mises : (n_steps, n_nodes) von Mises stress of ``node_stress`` (Pa).
    elements : per group, name -> (n_steps, n_el) or (n_steps, n_el, k): the recovered element
        outputs, with the solids' element ``von_mises`` of the recovered element-mean tensor.
    displacement : (n_steps, n_nodes, 3) nodal translations Phi q (m; a modal body's in its frame).
    group_names : name of each element group.
    """

    component: Component
    times: np.ndarray | None
    q: np.ndarray
    node_stress: np.ndarray
    von_mises: np.ndarray
    elements: list[dict[str, np.ndarray]]
    displacement: np.ndarray
    group_names: list[str]

    @property
    def n_steps(self) -> int:
        """Number of recovered steps."""
        return len(self.q)

    def element(self, group: str | int, name: str) -> np.ndarray:
        """(n_steps, n_el) or (n_steps, n_el, k): recovered element output ``name`` of a group
        (its name or index), e.g. ``"N"``, ``"M1"``, ``"s_xx"``, ``"von_mises"``."""
        if isinstance(group, str):
            if group not in self.group_names:
                raise ModelError(f"{self.component.name}: no element group {group!r}; it has {self.group_names}")
            group = self.group_names.index(group)
        if not isinstance(group, (int, np.integer)) or not 0 <= group < len(self.elements):
            raise ModelError(f"{self.component.name}: group must be a name or an index 0..{len(self.elements) - 1}, "
                             f"got {group!r}")
        if name not in self.elements[group]:
            raise ModelError(f"{self.component.name}: group {self.group_names[group]!r} has no recovered output "
                             f"{name!r}; it has {', '.join(self.elements[group]) or 'none'}")
        return self.elements[group][name]


@keywords_listed
def modal_stresses(component: Component, basis: np.ndarray) -> ModalStresses | None:
    """The modal stresses of the columns of ``basis`` Phi (n_dof, n_m) over the DOFs of ``component``
    (module docstring), batched over the columns and the elements; None if the component's model has
    no element group with stresses (only imported matrices)."""
    what = f"component {component.name!r}: modal stresses"
    Phi = real_array(basis, f"{what}: basis")
    if Phi.ndim != 2 or Phi.shape[0] != component.n_dof:
        raise ModelError(f"{what}: basis must have shape ({component.n_dof}, n_m) (the component's DOFs), "
                         f"got {Phi.shape}")
    groups = component.assembly.groups
    if all(isinstance(g, MatrixGroup) for g in groups):
        return None
    node, solid = _node_stresses(component, Phi)
    return ModalStresses(component, Phi, node, solid, [g.name for g in groups], _linearised_outputs(component, Phi))


def _node_stresses(component: Component, Phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nodal Voigt stress (n_m, n_nodes, 6) per column of Phi, averaged over the solids at each node,
    NaN elsewhere, and the (n_nodes,) mask of solid nodes."""
    model = component.model
    n_nodes, n_m = model.n_nodes, Phi.shape[1]
    total = np.zeros((n_m, n_nodes, 6))
    count = np.zeros(n_nodes)
    trans = component.assembly.dofs.translations()                            # (n_nodes, 3)
    for group in component.assembly.groups:
        if not isinstance(group, Solid):
            continue
        conn = group.connectivity                                             # (n_el, nn)
        X = model.coordinates[conn]                                           # (n_el, nn, 3)
        _, dN = shape_functions(group.kind, NODE_COORDINATES[group.kind])     # (nn, nn, 3) at the nodes
        J = np.einsum("eni,qnk->eqik", X, dN)                                 # (n_el, nn, 3, 3)
        G = np.einsum("qnk,eqki->eqni", dN, np.linalg.inv(J))                 # (n_el, nn, nn, 3) 1/m
        DB = group.D[:, None] @ strain_operator(G)                            # (n_el, nn, 6, 3 nn) Pa/m
        U = Phi[trans[conn].reshape(len(conn), -1)]                           # (n_el, 3 nn, n_m)
        sigma = np.einsum("eqsa,eam->mqes", DB, U)                            # (n_m, nn, n_el, 6)
        np.add.at(total, (slice(None), conn.T), sigma)
        count += np.bincount(conn.ravel(), minlength=n_nodes)
    solid = count > 0
    total[:, ~solid] = np.nan
    total[:, solid] /= count[solid, None]
    return total, solid


def _linearised_outputs(component: Component, Phi: np.ndarray) -> list[dict[str, np.ndarray]]:
    """d(element_outputs)/dq_k at the reference state, per group name -> (n_m, n_el[, k]): a
    fourth-order central difference along each column (exact for linear elements)."""
    asm = component.assembly
    trans = asm.dofs.translations().ravel()
    rot = np.setdiff1d(np.arange(asm.n_dof), trans)
    length = component.model.characteristic_length
    zero = np.zeros(asm.n_dof)
    keep = [not isinstance(g, MatrixGroup) for g in asm.groups]
    columns: list[list[dict[str, np.ndarray]]] = []
    for phi in Phi.T:
        size = max(float(np.abs(phi[trans]).max(initial=0.0)) / length,
                   float(np.abs(phi[rot]).max(initial=0.0)))
        h = _STEP / size if size > 0 else 1.0
        at = {c: asm.element_outputs(asm.update(zero, c * h * phi)) for c in (-2, -1, 1, 2)}
        columns.append([{name: (8.0 * (at[1][i][name] - at[-1][i][name]) - (at[2][i][name] - at[-2][i][name]))
                         / (12.0 * h) for name in at[1][i] if name not in _NOT_LINEAR} if keep[i] else {}
                        for i in range(len(asm.groups))])
    if not columns:
        return [{} for _ in asm.groups]
    return [{name: np.stack([col[i][name] for col in columns]) for name in columns[0][i]}
            for i in range(len(asm.groups))]


@keywords_listed
def recover_modal_body(history: Result, body: str | int, data: ModalBodyData,
                       load_scalars: Mapping[str, float | np.ndarray] | None = None) -> RecoveredStresses:
    """The stresses of a modal body along a time history: its modal coordinates q_k(t) (the body
    group's element outputs ``q1``, ``q2``, ...) recovered with ``data.modal_stresses``
    (:meth:`ModalStresses.recover`; ``load_scalars`` there).

    ``history``: the result of a model holding the body; ``body``: the body's group name or index;
    ``data``: the :class:`~flexmb.cms.ModalBodyData` it was added with."""
    stresses = getattr(data, "modal_stresses", None)
    if stresses is None:
        raise ModelError(f"modal body {body!r}: its data have no modal stresses (an imported component "
                         "without element groups, or not a ModalBodyData)")
    n = stresses.n_modes
    try:
        q = np.stack([history.element(body, f"q{k + 1}")[:, 0] for k in range(n)], axis=1)   # (n_steps, n_m)
    except ModelError as error:
        raise ModelError(f"modal body {body!r}: the history has no modal coordinates q1..q{n} of it "
                         f"({error})") from None
    return stresses.recover(q, load_scalars, times=np.asarray(history.parameter, dtype=float))


@keywords_listed
def steady_spin_scalars(data: ModalBodyData, angular_velocity: np.ndarray, offset: np.ndarray | None = None
                        ) -> dict[str, float]:
    """Load-case scalars of a steady spin (for ``load_scalars``): the products omega_j omega_k of the
    body-frame ``angular_velocity`` (3,, rad/s) and, with ``offset`` (the frame node's position from
    a point of the spin axis, body frame, m), the frame's centripetal acceleration
    a_R = omega x (omega x offset) as ``a_x, a_y(, a_z)`` (m/s^2), as
    :meth:`~flexmb.cms.ModalBodyData.spin_matrices` uses them."""
    omega = real_array(angular_velocity, "steady_spin_scalars: angular_velocity (rad/s)", (3,))
    scalars = data.spin_scalars(omega)
    if offset is not None:
        c = real_array(offset, "steady_spin_scalars: offset (m)")
        if c.shape == (2,) and data.dim == 2:
            c = np.r_[c, 0.0]
        if c.shape != (3,):
            raise ModelError(f"steady_spin_scalars: offset must have 3 components (m), got shape {c.shape}")
        a = np.cross(omega, np.cross(omega, c))
        scalars.update({f"a_{'xyz'[i]}": float(a[i]) for i in range(data.dim)})
    return scalars
