"""Construction of a modal body's data by reduction: :meth:`ModalBodyData.from_model` reduces the
body's FE model (Craig-Bampton or free-interface, :mod:`flexmb.cms.reduction`) and computes the inertia
invariants and the unit-load geometric stiffness matrices of
:class:`~flexmb.elements.modal_body_data.ModalBodyArrays`, whose module docstring gives the floating
frame, the symbols and the equations. The arrays and the interface-force stiffness sit in
:mod:`flexmb.elements` with the modal body's element group; they are imported here too, so the
names of this module before issue 30 keep working.
"""
from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property

import numpy as np
import scipy.linalg as sla
import scipy.sparse.linalg as spla

from flexmb.checks import ModelError, integer, methods_keywords_listed, node_index
from flexmb.cms.component import Component
from flexmb.cms.reduction import craig_bampton
from flexmb.cms.stress_recovery import ModalStresses, modal_stresses
from flexmb.elements.modal_body_data import (
    _AXES,
    ModalBodyArrays,
    _load_geometric_stiffness,
    _node_dof_count,
    interface_geometric_stiffness,
)
from flexmb.model import Model

__all__ = ["ModalBodyData", "interface_geometric_stiffness"]


def _load_case_names(dim: int) -> list[str]:
    """Names of the unit inertia load cases: frame acceleration, angular acceleration, omega products."""
    if dim == 2:
        return ["a_x", "a_y", "alpha_z", "ww_zz"]
    pairs = [(j, k) for j in range(3) for k in range(j, 3)]
    return ([f"a_{c}" for c in _AXES] + [f"alpha_{c}" for c in _AXES]
            + [f"ww_{_AXES[j]}{_AXES[k]}" for j, k in pairs])


@methods_keywords_listed
class ModalBodyData(ModalBodyArrays):
    """The data of a modal body (:class:`~flexmb.elements.modal_body_data.ModalBodyArrays`: fields,
    symbols, methods) with its construction from the body's FE model, :meth:`from_model`."""

    @classmethod
    def from_model(cls, model: Model, frame_node: int, n_modes: int, basis: str = "craig-bampton",
                   interface_nodes: Iterable[int] = (), name: str = "modal body") -> ModalBodyData:
        """Reduce the FE model of one body and compute its invariants and unit geometric stiffness.

        Parameters
        ----------
        model : the body's FE model (element groups and point masses, no supports, joints or bodies).
        frame_node : the node carrying the body frame; its DOFs are clamped in the basis.
        n_modes : number of fixed-interface (``"craig-bampton"``) or frame-clamped (``"free-interface"``)
            normal modes.
        basis : ``"craig-bampton"``: the static constraint modes of ``interface_nodes`` (joint and
            attachment nodes, held in the modes) plus the normal modes with those nodes fixed;
            ``"free-interface"``: the normal modes with only the frame node clamped (the other nodes free).
        interface_nodes : the body's other joint/attachment nodes (Craig-Bampton only).

        The basis is orthonormalised on the reduced problem, Phi <- Phi X with X^T Phi^T K Phi X
        diagonal and X^T Phi^T M Phi X = I, so the coordinates are the body's (Ritz) modes.
        """
        if not isinstance(model, Model):
            raise ModelError(f"{name}: model must be a flexmb Model (the body's FE model), got {type(model).__name__}")
        frame_node = node_index(frame_node, model.n_nodes, f"{name}: frame_node")
        extra = [node_index(n, model.n_nodes, f"{name}: interface_nodes") for n in interface_nodes]
        n_modes = integer(n_modes, f"{name}: n_modes", low=0)
        if n_modes == 0 and not extra:
            raise ModelError(f"{name}: n_modes = 0 and no interface nodes leave the body without modal "
                             "coordinates (a rigid body); keep at least one mode (n_modes >= 1), or model it "
                             "with Model.add_rigid_body")
        if basis == "free-interface":
            if extra:
                raise ModelError(f"{name}: free-interface keeps only the frame node clamped; interface nodes "
                                 f"{extra} need basis='craig-bampton'")
        elif basis != "craig-bampton":
            raise ModelError(f"{name}: basis must be 'craig-bampton' or 'free-interface', got {basis!r}")
        if frame_node in extra:
            raise ModelError(f"{name}: the frame node {frame_node} cannot be an interface node too")
        comp = Component.from_model(model, [int(frame_node)] + extra, name=name)
        if comp.grounded.size:
            raise ModelError(f"{name}: the body's model must have no supports (the frame node holds it)")
        reduced = craig_bampton(comp, n_modes=n_modes)
        dofs = comp.assembly.dofs
        at_frame = dofs.first[frame_node] + np.arange(_node_dof_count(dofs, frame_node))
        b = comp.interface_dofs
        keep = np.concatenate([np.flatnonzero(~np.isin(b, at_frame)), b.size + np.arange(reduced.eigenvalues.size)])
        Phi = reduced.vectors[:, keep]                                            # (n_dof, n_m)
        K, M = comp.K, comp.M
        lam, Xr = sla.eigh(Phi.T @ (K @ Phi), Phi.T @ (M @ Phi))
        Phi = Phi @ Xr
        return cls._with_basis(comp, int(frame_node), Phi, lam)

    @classmethod
    def _with_basis(cls, comp: Component, frame_node: int, Phi: np.ndarray, lam: np.ndarray) -> ModalBodyData:
        model = comp.model
        dim = model.dim
        X = np.zeros((model.n_nodes, 3))
        X[:, :dim] = model.coordinates - model.coordinates[frame_node]
        L, Lam, node_of = _selectors(comp, dim)
        M = comp.M
        Theta0 = _theta(L, Lam, X[node_of])                                         # (n_dof, 3)
        shapes = _nodal_translations(Phi, L, node_of, model.n_nodes)                # (n_m, n_nodes, 3)
        Theta1 = np.stack([_theta(L, None, s[node_of]) for s in shapes])           # (n_m, n_dof, 3)
        MTheta0 = M @ Theta0                                                        # (n_dof, 3)
        MTheta1 = np.stack([M @ t for t in Theta1])                                 # (n_m, n_dof, 3)
        KG = _unit_geometric_stiffness(comp, frame_node, Phi, L, Theta0, X[node_of], dim)
        return cls(component=comp, frame_node=frame_node, dim=dim, positions=X, basis=Phi,
                   modal_stiffness=np.diag(lam), modal_mass=Phi.T @ (M @ Phi), mass=L.T @ (M @ L),
                   first_moment0=L.T @ MTheta0, first_moment1=np.einsum("ia,kib->kab", L, MTheta1),
                   inertia0=Theta0.T @ MTheta0, inertia1=np.einsum("ia,kib->kab", Theta0, MTheta1),
                   inertia2=np.einsum("kia,lib->klab", Theta1, MTheta1),
                   translation_coupling=Phi.T @ (M @ L), rotation_coupling0=Phi.T @ MTheta0,
                   rotation_coupling1=np.einsum("il,kia->lka", Phi, MTheta1),
                   load_cases=_load_case_names(dim), geometric_stiffness=KG)

    @cached_property
    def modal_stresses(self) -> ModalStresses | None:
        """The stresses of the body's modes (:class:`~flexmb.cms.stress_recovery.ModalStresses`, per
        unit q_k, body-frame axes), computed on first use and kept: nodal Voigt stress of the solids,
        linearised element outputs (beams' section forces, shells' resultants), and for each unit
        inertia load case of ``load_cases`` the stress of its *residual* static field
        u_g - Phi K_e^-1 Phi^T K u_g (u_g: the static response with the frame node and the interface
        nodes held), which :meth:`ModalStresses.recover` adds with ``load_scalars`` (the centrifugal
        pre-stress: :mod:`flexmb.cms.stress_recovery`). None for a body whose FE model has no element
        groups with stresses (imported matrices only)."""
        stresses = modal_stresses(self.component, self.basis)
        if stresses is None:
            return None
        comp, dim = self.component, self.dim
        L, Lam, node_of = _selectors(comp, dim)
        r = self.positions[node_of]                                                # (n_dof, 3)
        loads = -(comp.M @ _unit_acceleration_fields(L, _theta(L, Lam, r), r, dim).T)   # (n_dof, n_cases)
        # held: the frame node and the interface nodes (whose motion the basis's constraint modes carry);
        # a solid held at its frame node alone could still turn about it
        free = np.setdiff1d(np.arange(comp.n_dof), comp.interface_dofs)
        u = np.zeros_like(loads)
        u[free] = spla.spsolve(comp.K[free][:, free].tocsc(), loads[free]).reshape(free.size, -1)
        # the part the modal coordinates carry themselves, the K-orthogonal projection on the basis
        # (Phi^T K u = Phi^T f when only the frame node is held: the quasi-static q = K_e^-1 Phi^T f)
        in_basis = self.basis @ np.linalg.solve(self.modal_stiffness, self.basis.T @ (comp.K @ u))
        return stresses.with_static_cases(self.load_cases, u - in_basis)


def _selectors(comp: Component, dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """L (n_dof, 3) translation selector, Lambda (n_dof, 3) rotation selector, node of each DOF (n_dof,)."""
    names = comp.dof_names
    n = comp.n_dof
    L, Lam = np.zeros((n, 3)), np.zeros((n, 3))
    for i, name in enumerate(names):
        (L if name[0] == "u" else Lam)[i, _AXES.index(name[1])] = 1.0
    node_of = np.searchsorted(comp.assembly.dofs.first, np.arange(n), side="right") - 1
    return L, Lam, node_of


def _theta(L: np.ndarray, Lam: np.ndarray | None, r: np.ndarray) -> np.ndarray:
    """Theta (n_dof, 3): rows r_i x e_a on translation DOFs along e_a (so omega x r_i = Theta omega),
    e_a on rotation DOFs about e_a (if Lam given)."""
    out = np.cross(r, L)                                                           # (n_dof, 3): r x e_a
    return out if Lam is None else out + Lam


def _nodal_translations(Phi: np.ndarray, L: np.ndarray, node_of: np.ndarray, n_nodes: int) -> np.ndarray:
    """Translation of every node in every mode (n_m, n_nodes, 3)."""
    out = np.zeros((Phi.shape[1], n_nodes, 3))
    for i in np.flatnonzero(L.any(axis=1)):
        out[:, node_of[i], int(np.argmax(L[i]))] = Phi[i]
    return out


def _unit_acceleration_fields(L: np.ndarray, Theta0: np.ndarray, r: np.ndarray, dim: int) -> np.ndarray:
    """Nodal acceleration fields a_g (n_cases, n_dof) of the unit load cases (``_load_case_names``)."""
    fields = []
    trans = [0, 1] if dim == 2 else [0, 1, 2]
    rot = [2] if dim == 2 else [0, 1, 2]
    fields += [L[:, a] for a in trans]
    fields += [Theta0[:, b] for b in rot]
    pairs = [(2, 2)] if dim == 2 else [(j, k) for j in range(3) for k in range(j, 3)]
    for j, k in pairs:
        E = np.zeros((3, 3))
        if j == k:
            E[j, j] = 1.0
            E -= np.eye(3)
        else:
            E[j, k] = E[k, j] = 1.0
        fields.append(np.einsum("ia,ab,ib->i", L, E, r))                           # translations E r, rotations 0
    return np.array(fields)


def _unit_geometric_stiffness(comp: Component, frame_node: int, Phi: np.ndarray, L: np.ndarray,
                              Theta0: np.ndarray, r: np.ndarray, dim: int) -> np.ndarray:
    """Phi^T k_G(sigma_g) Phi (n_cases, n_m, n_m) for the d'Alembert loads -M a_g, the frame node clamped."""
    fields = _unit_acceleration_fields(L, Theta0, r, dim)                          # (n_cases, n_dof)
    return _load_geometric_stiffness(comp, frame_node, Phi, -(comp.M @ fields.T).T)
