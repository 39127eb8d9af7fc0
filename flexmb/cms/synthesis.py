"""Synthesis: couple reduced components into one reduced model and recover its modes.

The components' DOFs are stacked, u = [u_1; ...; u_J] (N = sum n_j), with the block-diagonal
K = blockdiag(K_j), M = blockdiag(M_j). Compatibility is S u = 0 with a signed Boolean S: one
row u_a - u_b = 0 per extra component holding a shared DOF (a DOF held by k components gives
k - 1 rows, all tied to the first), and one row u_a = 0 per grounded DOF (a support is an
interface to a rigid ground; a supported node shared by several components is grounded once).

Free-interface bases with residual flexibility (Hutton & Smith 1993, section 2): a component
moves as u_j = Phi_j p_j + G_j f_j with the interface forces f = -S^T lambda. Compatibility
S Phi p - S G S^T lambda = 0 gives lambda and

    u = T p,    T = (I - G S^T (S G S^T)^-1 S) Phi,    S T = 0,

G = blockdiag(G_res,j) (the ground has G = 0), Phi = blockdiag(Phi_j). Any other combination
(Craig-Bampton bases, for which G = 0, free-interface bases without residual flexibility, or a
mix of kinds) uses the general form of the same statement: the admissible displacements are
u = Phi p + G S^T mu with S Phi p + S G S^T mu = 0, so T = [Phi, G S^T] N with N an orthonormal
basis of the null space of [S Phi, S G S^T] (SVD). For Craig-Bampton this is T = Phi N,
N = null(S Phi): the constraint modes of a shared DOF merge into one column.

The interface solve is done with S G S^T scaled to a unit diagonal, and T is finally projected
on the null space of S (:func:`_compatible`), so S T = 0 to machine precision.

The stored T is an orthonormal basis of the span of that transformation (column-pivoted QR of
its unit-length columns; columns whose pivot falls below 1e-9 of the largest are dependent and
dropped, e.g. when a component keeps every mode it has). The Rayleigh-Ritz result depends only
on the span; the paper's columns, however, differ in length by 1e4 and nearly align (a grounded
component's rigid-body modes turn into large static shapes), and K_r, M_r formed from them lose
about 1e-8 of the lowest eigenvalues, enough to break the upper bound. With orthonormal columns
the reduced eigenvalues stay within round-off above the full ones. The reduced coordinates are
therefore coordinates of this basis, not the modal amplitudes p_j.

Reduced matrices K_r = T^T K T, M_r = T^T M T (the residual-flexibility terms are in T, so the
residual mass and stiffness are included). They are Rayleigh-Ritz projections of the assembled
FE model: every CMS eigenvalue is an upper bound of the corresponding full one.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexmb.checks import FlexmbWarning, ModelError, keywords_listed, methods_keywords_listed
from flexmb.cms.component import _few
from flexmb.cms.reduction import ReducedBasis, shifted_eigh
from flexmb.model import Model

#: S G S^T with a smallest eigenvalue below this fraction of its largest is singular
INTERFACE_CONDITION = 1e-12
#: a column of T whose pivoted-QR pivot is below this fraction of the largest is dependent
DEPENDENT_COLUMN = 1e-9


@methods_keywords_listed
@dataclass
class CmsModes:
    """Modes of a synthesised model.

    Attributes
    ----------
    eigenvalues : omega^2 (n,) rad^2/s^2, ascending; rigid-body ones exactly 0.0.
    vectors : xi (n_red, n), reduced modal coordinates with xi^T M_r xi = I.
    rigid : (n,) bool, the rigid-body modes.
    cms : the :class:`CmsModel` they belong to.
    """

    eigenvalues: np.ndarray
    vectors: np.ndarray
    rigid: np.ndarray
    cms: "CmsModel" = field(repr=False)

    @property
    def omega(self) -> np.ndarray:
        """Angular frequencies (n,) rad/s."""
        return np.sqrt(np.maximum(self.eigenvalues, 0.0))

    @property
    def frequencies_hz(self) -> np.ndarray:
        """Frequencies (n,) Hz."""
        return self.omega / (2.0 * np.pi)

    def component_vectors(self, j: int) -> np.ndarray:
        """Displacements of component j's DOFs in every mode, T_j xi (n_j, n)."""
        return self.cms.T[self.cms.component_rows(j)] @ self.vectors

    def full_modes(self) -> np.ndarray:
        """Modes (n, parent n_dof) on the parent model's DOFs, mass-normalised with the parent's
        mass, zero at its supports (as :class:`~flexmb.analysis.modes.NaturalModes` ``.modes``)."""
        return self.cms.recover(self.vectors).T

    @property
    def n_rigid(self) -> int:
        return int(np.count_nonzero(self.rigid))

    def mode_shapes(self):
        """The modes as a :class:`~flexmb.results.ModeShapes` result on the parent model (plots,
        renders and result files, like full-model modes); the values are the frequencies (Hz)."""
        from flexmb.results import ModeShapes

        layout = self.cms.layout
        return ModeShapes.from_modes(layout, self.frequencies_hz, self.full_modes(), np.zeros(layout.n_dof),
                                     "frequency (Hz)")

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the recovered modes to a result file (HDF5, kind "modes"), as full-model modes."""
        return self.mode_shapes().save(path, overwrite)


@methods_keywords_listed
class CmsModel:
    """A synthesised (reduced) model: T, S and the reduced K and M.

    Attributes
    ----------
    bases : the components' :class:`~flexmb.cms.reduction.ReducedBasis`, in order.
    components : their components.
    T : (N, n_red) the synthesis transformation from the reduced coordinates to the stacked
        component DOFs u = [u_1; ...; u_J]; orthonormal columns spanning the paper's T.
    S : scipy.sparse csr (n_c, N), the signed Boolean compatibility matrix (S T = 0).
    constraints : (n_c,) what each row of S ties, e.g. ``"node 4 uy: 'root' = 'tip'"``.
    K, M : (n_red, n_red) reduced stiffness and mass, T^T K T and T^T M T.
    parent : the parent model of the components (None for stand-alone components without one).
    n_rigid : number of rigid-body motions the assembled structure has (0 when grounded).
    """

    def __init__(self, bases: list[ReducedBasis], T: np.ndarray, S: sp.csr_matrix, constraints: list[str],
                 n_rigid: int) -> None:
        self.bases = list(bases)
        self.components = [b.component for b in bases]
        self.parent = self.components[0].parent
        self._offsets = np.concatenate([[0], np.cumsum([c.n_dof for c in self.components])])
        self.T = T
        self.S = S
        self.constraints = constraints
        self.n_rigid = n_rigid
        K = np.zeros((T.shape[1], T.shape[1]))
        M = np.zeros_like(K)
        for j, c in enumerate(self.components):
            Tj = T[self.component_rows(j)]
            K += Tj.T @ (c.K @ Tj)
            M += Tj.T @ (c.M @ Tj)
        self.K = 0.5 * (K + K.T)
        self.M = 0.5 * (M + M.T)

    def __repr__(self) -> str:
        return (f"CmsModel({len(self.components)} components, {self.T.shape[0]} DOFs -> {self.size} "
                f"reduced, {self.S.shape[0]} interface constraints)")

    @property
    def size(self) -> int:
        """n_red, the number of reduced coordinates."""
        return self.T.shape[1]

    def component_rows(self, j: int) -> slice:
        """Rows of T (and of the stacked DOF vector) belonging to component j: T_j = T[rows]."""
        if isinstance(j, bool) or not isinstance(j, (int, np.integer)) or not 0 <= j < len(self.components):
            raise ModelError(f"component index {j!r} does not exist (0..{len(self.components) - 1}: "
                             f"{', '.join(repr(c.name) for c in self.components)})")
        return slice(int(self._offsets[j]), int(self._offsets[j + 1]))

    def component_index(self, name: str) -> int:
        """Position of the component called ``name`` (ModelError naming the known ones)."""
        for j, c in enumerate(self.components):
            if c.name == name:
                return j
        raise ModelError(f"unknown component {name!r}; the components are "
                         f"{', '.join(repr(c.name) for c in self.components)}")

    @cached_property
    def layout(self):
        """The parent model's :class:`~flexmb.results.ModelLayout` (for results on the parent)."""
        from flexmb.assembly import Assembly
        from flexmb.results import ModelLayout

        return ModelLayout.from_assembly(Assembly(self.parent_model()))

    def parent_model(self) -> Model:
        """The parent model, or ModelError for stand-alone components without one."""
        if self.parent is None:
            raise ModelError("the components were made without a parent model (Component.from_model without "
                             "parent=...): there is no model to recover the modes on")
        return self.parent

    def modes(self, n_modes: int | None = None) -> CmsModes:
        """The lowest ``n_modes`` (default: all) modes of (K_r, M_r), by a dense symmetric solve.

        The solve is shifted, eigh(M_r, K_r + sigma M_r) (so a singular K_r with rigid-body modes
        is fine), sigma the lowest elastic eigenvalue found by a first pass; the ``n_rigid``
        lowest eigenvalues (the assembled structure's rigid-body motions, counted from the
        geometry and the supports) are set to exactly 0.0.
        """
        if n_modes is not None and (isinstance(n_modes, bool) or not isinstance(n_modes, (int, np.integer))
                                    or not 1 <= n_modes <= self.size):
            raise ModelError(f"n_modes must be an integer from 1 to the reduced size {self.size}, got {n_modes!r}")
        K, M = self.K, self.M
        trace = float(np.trace(M))
        if trace <= 0.0:
            raise ModelError("the synthesised model has no mass: its modes are not defined")
        sigma = max(float(np.trace(K)) / trace, np.finfo(float).tiny)
        lam, X = shifted_eigh(K, M, sigma)
        if lam.size > self.n_rigid and lam[self.n_rigid] > 1e-8 * sigma:
            # accuracy of the low modes: shift near them (a mechanism's near-zero mode would make
            # K_r + sigma M_r singular: then the first pass stands)
            try:
                lam, X = shifted_eigh(K, M, float(lam[self.n_rigid]))
                sigma = float(lam[self.n_rigid])
            except np.linalg.LinAlgError:
                pass
        n = lam.size if n_modes is None else n_modes
        if n > lam.size:
            raise ModelError(f"{n} modes requested, the synthesised model has only {lam.size} with mass")
        if self.n_rigid and np.any(np.abs(lam[:self.n_rigid]) > 1e-6 * sigma):
            raise ModelError(f"expected {self.n_rigid} rigid-body modes, the lowest eigenvalues are "
                             f"{lam[:self.n_rigid + 1].tolist()}")
        lam = lam[:n].copy()
        rigid = np.arange(n) < self.n_rigid
        lam[rigid] = 0.0
        return CmsModes(lam, X[:, :n], rigid, self)

    def recover(self, xi: np.ndarray) -> np.ndarray:
        """Parent-model DOF vector(s) of reduced coordinates ``xi``: (n_red,) -> (n_dof,),
        (n_red, k) -> (n_dof, k); zero at the parent's supports. A parent DOF held by several
        components takes the value of the first (they agree: S T = 0)."""
        self.parent_model()
        xi = np.asarray(xi, dtype=float)
        if xi.shape[0] != self.size or xi.ndim not in (1, 2):
            raise ModelError(f"recover: reduced coordinates must have shape ({self.size},) or ({self.size}, k), "
                             f"got {xi.shape}")
        source, supported = self._recovery_map()
        out = (self.T @ xi)[source]
        out[supported] = 0.0
        return out

    def _recovery_map(self) -> tuple[np.ndarray, np.ndarray]:
        """Stacked row of each parent DOF (first component holding it) and the parent's supported DOFs."""
        from flexmb.dofs import DofMap

        dofs = DofMap(self.parent)
        source = np.full(dofs.n_dof, -1, dtype=np.int64)
        for j in reversed(range(len(self.components))):         # the first component wins
            source[self.components[j].global_dofs] = self._offsets[j] + np.arange(self.components[j].n_dof)
        if np.any(source < 0):
            missing = int(np.flatnonzero(source < 0)[0])
            raise ModelError(f"recover: parent DOF {dofs.label(missing)} is in no component")
        return source, dofs.prescribed


@keywords_listed
def synthesize(bases: list[ReducedBasis], allow_partial: bool = False) -> CmsModel:
    """Couple reduced components (interface compatibility and equilibrium, supports as
    interfaces to ground) into a :class:`CmsModel`.

    Parameters
    ----------
    bases : the components' reduced bases (:func:`~flexmb.cms.reduction.free_interface`,
        :func:`~flexmb.cms.reduction.craig_bampton`).
    allow_partial : synthesise components that do not make up their parent model. By default
        that is refused: a structure without some of its parts has other modes (the root half of
        a cantilever alone has four times the first frequency of the whole), and recovering on
        the parent would fail at the nodes left out.

    Raises ModelError: no bases, components of different models or dimensions, two components
    with one name, a shared node that is an interface node of only one component or sits at
    different positions, an interface whose S G S^T is singular (named), components that leave
    element groups or nodes of their parent out (named; unless ``allow_partial``), or kept modes
    too few for the interface constraints (the constraints leave no motion; the components that
    keep fewer modes than interface DOFs are named). A free-interface basis without residual
    flexibility that keeps fewer columns than its component has interface DOFs locks part of the
    interface (the frequencies come out high): a FlexmbWarning names it.
    """
    if not isinstance(bases, (list, tuple)) or not bases or not all(isinstance(b, ReducedBasis) for b in bases):
        raise ModelError(f"synthesize needs a non-empty list of ReducedBasis (from free_interface or "
                         f"craig_bampton), got {bases!r}")
    components = [b.component for b in bases]
    _check_components(components)
    if not allow_partial:
        _check_whole(components)
    offsets = np.concatenate([[0], np.cumsum([c.n_dof for c in components])])
    S, constraints = _compatibility(components, offsets)
    Phi = sla.block_diag(*[b.vectors for b in bases])                 # (N, m)
    residual = [_has_residual_flexibility(b) for b in bases]
    GSt = _flexibility_times_St(bases, S, offsets) if any(residual) else None   # (N, n_c)
    if S.shape[0] == 0:
        T = Phi
    elif all(residual):
        H = np.asarray(S @ GSt)                                        # S G S^T (n_c, n_c)
        scale = _interface_scaling(H, constraints)
        Hs = scale[:, None] * (0.5 * (H + H.T)) * scale[None, :]
        _check_interface(Hs, constraints)
        T = Phi - GSt @ (scale[:, None] * sla.solve(Hs, scale[:, None] * np.asarray(S @ Phi), assume_a="sym"))
    else:
        A = np.asarray(S @ Phi)
        extended = Phi
        if GSt is not None:
            A = np.hstack([A, np.asarray(S @ GSt)])
            extended = np.hstack([Phi, GSt])
        T = extended @ sla.null_space(A, rcond=1e-12)
    if S.shape[0]:
        T = _compatible(T, S)
    if T.shape[1] == 0 or not np.any(T):
        _too_few_modes(bases, S)
    _warn_locked(bases)
    return CmsModel(bases, _orthonormal_basis(T), S, constraints, _rigid_count(components, S, offsets))


# ---------------------------------------------------------------------------- helpers
def _check_components(components: list) -> None:
    names = [c.name for c in components]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ModelError(f"component {repeated[0]!r} appears twice in the synthesis (names must be distinct)")
    parents = {id(c.parent) for c in components}
    if len(parents) > 1:
        raise ModelError("the components come from different parent models; synthesise components of one model")
    dims = {c.model.dim for c in components}
    if len(dims) > 1:
        raise ModelError(f"components of different dimensions {sorted(dims)} cannot be synthesised")
    # a node label shared by components must be an interface node of each, at one position
    seen: dict[int, tuple[str, np.ndarray, bool]] = {}
    for c in components:
        interface = set(c.interface_nodes.tolist())
        for local, label in enumerate(c.nodes.tolist()):
            here = (c.name, c.model.coordinates[local], label in interface)
            if label in seen:
                other, position, declared = seen[label]
                if not (declared and here[2]):
                    lacking = c.name if not here[2] else other
                    raise ModelError(f"node {label} is in components {other!r} and {c.name!r} but is not an "
                                     f"interface node of {lacking!r}")
                if not np.allclose(position, here[1], rtol=0.0, atol=1e-9 * c.model.characteristic_length):
                    raise ModelError(f"node {label} is at {position.tolist()} in component {other!r} and at "
                                     f"{here[1].tolist()} in {c.name!r}")
            else:
                seen[label] = here


def _check_whole(components: list) -> None:
    """ModelError naming the parent's element groups and nodes that no component holds.

    Nodes are compared by label; element groups by name, when every group of the components
    bears the name of a parent group (components cut by :func:`components_from_groups`, which
    keeps the names; stand-alone sub-models may name theirs freely). Components without a parent
    are not checked: there is no whole to compare with."""
    parent = components[0].parent
    if parent is None:
        return
    held = np.unique(np.concatenate([c.nodes for c in components]))
    missing_nodes = np.setdiff1d(np.arange(parent.n_nodes), held)
    parent_groups = [g.name for g in parent.groups]
    used = {g.name for c in components for g in c.model.groups}
    missing_groups = [n for n in parent_groups if n not in used] if used <= set(parent_groups) else []
    if not missing_nodes.size and not missing_groups:
        return
    left_out = []
    if missing_groups:
        left_out.append(f"element group(s) {', '.join(map(repr, missing_groups))}")
    if missing_nodes.size:
        left_out.append(f"{missing_nodes.size} node(s) ({_few(missing_nodes)})")
    raise ModelError(f"synthesize: the components {', '.join(repr(c.name) for c in components)} are only part "
                     f"of their parent model: {' and '.join(left_out)} are in none of them. A part has other "
                     "modes than the whole; pass the bases of every component, or allow_partial=True to "
                     "synthesise the part alone")


def _warn_locked(bases: list[ReducedBasis]) -> None:
    """FlexmbWarning for free-interface bases without residual flexibility that keep fewer columns
    than their component has interface DOFs: compatibility then holds part of the interface."""
    locked = [b for b in bases if b.kind == "free-interface" and b.residual_flexibility is None
              and b.size < b.component.interface_dofs.size]
    if locked:
        which = ", ".join(f"{b.component.name!r} keeps {b.size} modes for {b.component.interface_dofs.size} "
                          "interface DOFs" for b in locked)
        warnings.warn(f"synthesize: free-interface bases without residual flexibility ({which}): the interface "
                      "constraints lock part of their interface motion and the synthesised frequencies come out "
                      "high; keep more modes, keep the residual flexibility (residual=True) or use craig_bampton",
                      FlexmbWarning, stacklevel=3)


def _too_few_modes(bases: list[ReducedBasis], S: sp.csr_matrix) -> None:
    """ModelError: the kept modes are too few for the interface constraints, naming the counts."""
    short = [f"{b.component.name!r} keeps {b.size} modes for {b.component.interface_dofs.size} interface DOFs"
             for b in bases if b.residual_flexibility is None and b.kind == "free-interface"
             and b.size <= b.component.interface_dofs.size]
    raise ModelError(f"synthesize: too few modes for the interface constraints: the {S.shape[0]} compatibility and "
                     f"support constraints leave no motion of the {sum(b.size for b in bases)} kept modes"
                     + (f" (free-interface bases without residual flexibility: {', '.join(short)})" if short else "")
                     + "; keep more modes (n_modes), keep the residual flexibility (free_interface(..., "
                     "residual=True)) or use craig_bampton")


def _compatibility(components: list, offsets: np.ndarray) -> tuple[sp.csr_matrix, list[str]]:
    """Signed Boolean S (n_c, N) and a description of each row."""
    holders: dict[tuple[int, str], list[tuple[int, int]]] = {}
    grounded: set[tuple[int, str]] = set()
    for j, c in enumerate(components):
        for d in c.interface_dofs.tolist():
            key = (int(c.dof_nodes[d]), str(c.dof_names[d]))
            holders.setdefault(key, []).append((j, d))
        grounded |= {(int(c.dof_nodes[d]), str(c.dof_names[d])) for d in c.grounded.tolist()}
    rows, cols, vals, names = [], [], [], []
    for key in sorted(holders):
        (j0, d0), *others = holders[key]
        label = f"node {key[0]} {key[1]}"
        for j, d in others:
            r = len(names)
            rows += [r, r]
            cols += [offsets[j0] + d0, offsets[j] + d]
            vals += [1.0, -1.0]
            names.append(f"{label}: {components[j0].name!r} = {components[j].name!r}")
        if key in grounded:
            rows.append(len(names))
            cols.append(offsets[j0] + d0)
            vals.append(1.0)
            names.append(f"{label}: {components[j0].name!r} grounded")
    S = sp.csr_matrix((vals, (rows, cols)), shape=(len(names), int(offsets[-1])))
    return S, names


def _has_residual_flexibility(basis: ReducedBasis) -> bool:
    """Whether the basis carries a residual flexibility that is not zero by construction: one whose
    kept modes span the whole component leaves none (what it holds is round-off, and S G S^T of
    such bases is a matrix of round-off, singular in a direction that changes with the BLAS)."""
    return basis.residual_flexibility is not None and basis.size < basis.component.n_dof


def _flexibility_times_St(bases: list[ReducedBasis], S: sp.csr_matrix, offsets: np.ndarray) -> np.ndarray:
    """G S^T (N, n_c) with G = blockdiag(G_res,j); G_res,j holds only the interface columns,
    which are the only columns S_j touches (zero for bases without residual flexibility)."""
    out = np.zeros((int(offsets[-1]), S.shape[0]))
    for j, basis in enumerate(bases):
        if not _has_residual_flexibility(basis):
            continue
        b = basis.component.interface_dofs
        S_jb = S[:, offsets[j] + b]                                   # (n_c, n_b)
        out[offsets[j]:offsets[j + 1]] = np.asarray((S_jb @ basis.residual_flexibility.T).T)
    return out


def _interface_scaling(H: np.ndarray, constraints: list[str]) -> np.ndarray:
    """D = diag(H)^-1/2 (n_c,): the interface flexibilities of translations and rotations, axial
    and bending differ by many orders; D H D has a unit diagonal and a modest condition number."""
    diagonal = np.diag(H)
    if np.any(diagonal <= 0.0):
        worst = int(np.argmin(diagonal))
        raise ModelError(f"the interface flexibility S G S^T is singular: no residual flexibility at "
                         f"{constraints[worst]}; keep fewer modes of the components there, or use craig_bampton")
    return 1.0 / np.sqrt(diagonal)


def _check_interface(H: np.ndarray, constraints: list[str]) -> None:
    """ModelError naming the interface DOF where the scaled S G S^T is singular or ill-conditioned."""
    w, V = np.linalg.eigh(H)
    if w[-1] <= 0.0 or w[0] <= INTERFACE_CONDITION * w[-1]:
        worst = int(np.argmax(np.abs(V[:, 0])))
        raise ModelError(f"the interface flexibility S G S^T is singular (eigenvalues {w[0]:.3e} .. {w[-1]:.3e}): "
                         f"no residual flexibility at {constraints[worst]}; keep fewer modes of the components "
                         "there, or use craig_bampton")


def _compatible(T: np.ndarray, S: sp.csr_matrix) -> np.ndarray:
    """T projected onto the null space of S, T - S^T (S S^T)^-1 S T.

    S T is zero in exact arithmetic; this removes the round-off left by the interface solve
    (relative 1e-16 times the condition number of the scaled S G S^T), so that every column is
    compatible to machine precision and the eigenvalues are strict Rayleigh-Ritz upper bounds.
    S S^T of a signed Boolean S is a small-integer, well-conditioned matrix."""
    SSt = (S @ S.T).tocsc()
    return T - S.T @ spla.splu(SSt).solve(np.asarray(S @ T))


def _orthonormal_basis(T: np.ndarray) -> np.ndarray:
    """An orthonormal basis (N, r) of span(T) by a column-pivoted QR, r the numerical rank: the
    unit-length columns whose pivot falls below DEPENDENT_COLUMN of the largest are dependent."""
    norms = np.linalg.norm(T, axis=0)
    if T.shape[1] == 0 or not np.any(norms > 0.0):
        raise ModelError("the synthesised basis is empty: the interfaces and supports leave no motion")
    nonzero = norms > 1e-14 * norms.max()
    Q, r, _ = sla.qr(T[:, nonzero] / norms[nonzero], mode="economic", pivoting=True)
    diagonal = np.abs(np.diag(r))
    return Q[:, :int(np.count_nonzero(diagonal > DEPENDENT_COLUMN * diagonal[0]))]


def _rigid_count(components: list, S: sp.csr_matrix, offsets: np.ndarray) -> int:
    """Rigid-body motions of the assembled structure: rank of the stacked rigid motions minus the
    rank of their values at the grounded DOFs (rigid motions are compatible at shared nodes)."""
    R = np.vstack([c.rigid_motions() for c in components])           # (N, 3|6)
    ground_rows = np.flatnonzero(np.asarray(abs(S).sum(axis=1)).ravel() == 1.0)
    ground_cols = S[ground_rows].indices
    scale = np.linalg.svd(R, compute_uv=False)
    rank = int(np.count_nonzero(scale > 1e-10 * scale[0]))
    if ground_cols.size == 0:
        return rank
    held = np.linalg.svd(R[ground_cols], compute_uv=False)
    return rank - int(np.count_nonzero(held > 1e-10 * scale[0]))
