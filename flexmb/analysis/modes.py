"""Natural modes: free vibration about the reference state or a pre-stressed equilibrium.

Small oscillations ``u = u_pre + phi e^{i omega t}`` about an equilibrium u_pre at load factor
lam (statics convention: gravity and nodal loads scale with lam, see
:meth:`~flexmb.assembly.Assembly.external_force`) obey the generalized eigenproblem

    K phi = omega^2 M phi,      C phi = 0,

on the free DOFs, with

* K the tangent at (u_pre, lam): material + geometric stiffness of the elements, the stiffness
  of configuration-dependent loads (:meth:`~flexmb.assembly.Assembly.static_residual`) and, with
  joints, the constraint Hessian term ``d(C^T lambda)/du`` (``sum_i lambda_i d2Phi_i/du2``),
  the multipliers lambda being the least-squares solution of ``C^T lambda = f - q`` at u_pre;
* M the whole mass matrix at u_pre (:meth:`~flexmb.assembly.Assembly.mass_data_at`: constant,
  cubic and spatial rotary inertia);
* C the joints' constraint Jacobian on the free DOFs. The constraints are eliminated, not
  penalised: with B an orthonormal basis of the null space of C, ``phi = B v`` and
  ``B^T K B v = omega^2 B^T M B v``. B comes from a dense SVD of C and is dense (n_free squared
  numbers): models with joints are meant to have up to a few thousand free DOFs.

The default ``load_factor = 0`` with ``u_pre = None`` gives the modes of the unloaded structure.
Gravity stiffens (or softens) only through the load factor: a rigid pendulum has a zero
frequency at load factor 0 and its pendulum frequency at ``load_factor=1``. u_pre must be an
equilibrium at the load factor (after the best joint multipliers), else ModelError names the DOF
with the largest residual force; structures get it from
:func:`~flexmb.analysis.statics.load_control`, mechanisms hanging in their reference
configuration (pendulums, a parallelogram four-bar) are in equilibrium there already.

Solvers. Up to ``dense_limit`` unknowns the dense LAPACK solver is used on the shifted pencil
``M phi = mu (K - sigma M) phi`` (``omega^2 = sigma + 1/mu``), whose "infinite" eigenvalues of
massless DOFs (lumped beams without rotary inertia) come out as harmless mu = 0; larger models
use ARPACK in shift-invert mode on the sparse LU of ``K - sigma M``. The shift
``sigma = -SHIFT * lambda_scale`` is a small negative number, so a singular K (free-free
structures, mechanisms) is factorised without trouble; lambda_scale = max_i K_ii / M_ii over
the DOFs with mass is a Rayleigh-quotient estimate of the largest eigenvalue. A K that is not
symmetric (follower loads; the spin tangent of 3D rotations away from the reference state)
goes to the general (non-symmetric) solvers; complex eigenvalue pairs (flutter) are then not
returned as modes: they are listed in ``complex_eigenvalues`` and a
:class:`~flexmb.checks.FlexmbWarning` names them.

Rigid-body (zero-frequency) modes: an eigenvalue with ``|omega^2| <= RIGID_TOL * lambda_scale``
(RIGID_TOL = 1e-13: |omega| below about 3e-7 of the estimated highest frequency of the mesh)
is round-off of a zero eigenvalue; both solvers give those below 1e-17 lambda_scale (free
beams and frames of 600 to 22 000 DOFs). It is set to exactly 0.0 and marked in ``rigid``;
these modes are M-orthonormalised among themselves. A FlexmbWarning is given when an elastic
eigenvalue lies within a factor 100 of that threshold (rigid and elastic modes not cleanly
separated, e.g. a very soft pendulum on a very stiff, finely meshed structure); a negative
omega^2 (an unstable state: beyond buckling, an inverted pendulum) is kept and warned about.

The zero eigenvalue of a free structure is multiple (6 in 3D), and ARPACK's Krylov space holds
a multiple eigenvalue's vectors only through round-off: it used to return 4 or 5 of the 6 of a
free plate, silently, the elastic modes shifted by one index. The zero modes are therefore not
left to the solver. The kinematics give them (:func:`_rigid_body_modes`): every connected part
of the structure translates and turns rigidly about its centroid, the joints keep the
combinations they allow, and K keeps those it leaves unstrained (supports, pins, pre-stress),
``||K z|| <= RIGID_TOL lambda_scale ||M z||``. ARPACK then searches only their M-orthogonal
complement (every product projected, so the known modes have an infinite eigenvalue there).
Other zero modes (mechanisms: a truss node free to move sideways) are the solver's; the count
check finds any it missed: the number of eigenvalues below a shift tau between the zero band and
the first positive eigenvalue found is the number of negative pivots of the L D L^T
factorisation of K - tau M (Sylvester's law of inertia), and it must equal the number found
below tau. ARPACK searches again past the zero modes it found until the counts agree
(MISSED_ROUNDS searches at most); the dense solver is checked the same way. A solution whose
count still differs raises :class:`ModeCountError`. Fewer modes asked for than there are zero
modes give the first in the order of ``_ordered_rigid_modes`` (translations first), on either
solver.

Normalisation and sign: every mode is mass-normalised, ``phi^T M phi = 1``, and its entry of
largest magnitude is positive (of entries equal in size to 1e-6, the first in DOF order).
Modes of the symmetric problem are M- and K-orthogonal: the computed vectors are finished by a
Rayleigh-Ritz step on their span (about a small shift the shift-invert eigenvalues lose digits
when K is singular; the projected problem's are exact to round-off).

Participation factors (Clough & Penzien, Dynamics of Structures, 1975): ``Gamma_ka = phi_k^T M r_a`` with r_a the unit
translation of every free node along axis a; effective masses ``Gamma_ka^2`` (kg). Summed over
all modes of a model without joints they equal ``r_a^T M r_a``, the mass that moves with the
free DOFs (``total_mass``).
"""
from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
import scipy.sparse.linalg as spla

from flexmb.analysis.arpack import start_vector
from flexmb.assembly import Assembly
from flexmb.checks import (FlexmbWarning, _check_assembly, _state_vector, integer, keywords_listed,
                           methods_keywords_listed, real)
from flexmb.integrators import sparse_lu
from flexmb.model import Model, ModelError
from flexmb.results import ModelLayout, ModeShapes

#: shift of the shift-invert solvers, -SHIFT * lambda_scale (see the module docstring): small, so
#: that the lowest modes stay well separated after the inversion, but not tiny, because the
#: vectors of a free-free model lose about eps / SHIFT to the near-singular K - sigma M (a free
#: frame: 1e-7 at 1e-10, 7e-12 at 1e-6; the first 20 modes of the benchmark tower, whose lowest
#: omega^2 is 1e-9 lambda_scale, took 10 s at 1e-10 and 12 s at 1e-6)
SHIFT = 1e-6
#: eigenvalues with |omega^2| <= RIGID_TOL * lambda_scale are zero (rigid-body or mechanism modes)
RIGID_TOL = 1e-13
#: an eigenvalue above INFINITE * lambda_scale is the "infinite" one of a massless DOF
INFINITE = 1e6
#: residual of the equilibrium at u_pre (relative to the force scale) accepted as round-off
EQUILIBRIUM_TOL = 1e-7
#: searches of the sparse solver, each past the zero modes found by the one before, until the count
#: of eigenvalues below the zero band agrees (:func:`_count_check`)
MISSED_ROUNDS = 3
#: kinematic candidates (dim + rotations per connected part) formed at most; a model of more
#: unconnected parts leaves its zero modes to the eigensolver (the candidates are dense, n_free each)
MAX_CANDIDATES = 600


class ModeCountError(RuntimeError):
    """An eigen-solution that fails the count check: the number of eigenvalues it found below a
    shift differs from the count of the factorisation (Sylvester's law of inertia)."""


@methods_keywords_listed
@dataclass
class SystemMatrices:
    """Stiffness and mass of small oscillations about (u_pre, load_factor), on the free DOFs.

    ``K`` (tangent incl. geometric and load stiffness and the constraint Hessian term) and ``M``
    are csc (n_free, n_free), ``free`` the global DOF index of each row (``asm.dofs.free``);
    ``basis`` is None without joints, else the orthonormal null-space basis (n_free, n_free - r)
    of the constraint Jacobian C[:, free] (r its rank); ``lagrange`` the joint multipliers (n_c,)
    (empty without joints).
    """

    K: sp.csc_matrix
    M: sp.csc_matrix
    free: np.ndarray
    basis: np.ndarray | None = None
    lagrange: np.ndarray = field(default_factory=lambda: np.zeros(0))
    u_pre: np.ndarray | None = None
    load_factor: float = 0.0

    @property
    def n_unknowns(self) -> int:
        """Number of independent coordinates: n_free, or the null-space dimension with joints."""
        return self.K.shape[0] if self.basis is None else self.basis.shape[1]

    def reduced(self) -> tuple[np.ndarray | sp.csc_matrix, np.ndarray | sp.csc_matrix]:
        """(B^T K B, B^T M B) on the constraint null space (dense), or (K, M) without joints."""
        if self.basis is None:
            return self.K, self.M
        B = self.basis
        return B.T @ (self.K @ B), B.T @ (self.M @ B)


@keywords_listed(renamed={"asm": "model"})
def system_matrices(model: Model | Assembly, u_pre: np.ndarray | None = None, load_factor: float = 0.0
                    ) -> SystemMatrices:
    """K, M (and the constraint null space) of small oscillations about (u_pre, load_factor); see
    the module docstring. ``model`` is a Model (assembled here) or its Assembly.

    Raises ModelError if u_pre is not an equilibrium at load_factor: after the best (least
    squares) joint multipliers the residual must be round-off (EQUILIBRIUM_TOL relative to the
    force scale); the message names the DOF with the largest residual.
    """
    asm = Assembly(model) if isinstance(model, Model) else model
    if not isinstance(asm, Assembly):
        raise ModelError(f"system_matrices: need a flexmb.Model or Assembly, got {type(asm).__name__}")
    _check_assembly(asm, "system_matrices")
    u = _state_vector(asm, u_pre, "system_matrices: u_pre")
    u = np.zeros(asm.n_dof) if u is None else u.copy()
    factor = real(load_factor, "system_matrices: load_factor")
    free = asm.dofs.free
    r, k_data, scale = asm.static_residual(u, factor)
    K = asm.free_matrix(k_data)
    M = asm.free_matrix(asm.mass_data_at(u))
    residual = r[free]
    basis, lagrange = None, np.zeros(0)
    if asm.constraints is not None:
        ct = asm.constraints.evaluate(u, factor, np.zeros(asm.constraints.n))
        C = ct.C.tocsc()[:, free]
        _check_constraints(asm, ct.phi, factor)
        # C^T lambda = f - q = -r on the free DOFs, in the least-squares sense
        lagrange = np.linalg.lstsq(C.T.toarray(), -residual, rcond=None)[0]
        residual = residual + C.T @ lagrange
        scale = max(scale, float(np.linalg.norm(C.T @ lagrange)))
        K = K + asm.constraints.evaluate(u, factor, lagrange).K.tocsc()[free][:, free]
        basis = sla.null_space(C.toarray()) if C.shape[0] else np.eye(free.size)
    # the unloaded reference state is an equilibrium: its residual q(0) is round-off with no force scale to
    # compare it with (inclined 3D beams give ~1e-9 N), so only a given u_pre or a load factor is checked
    if u_pre is not None or factor != 0.0:
        _check_equilibrium(asm, residual, scale, factor, asm.constraints is not None)
    return SystemMatrices(K.tocsc(), M.tocsc(), free, basis, lagrange, u, factor)


def _check_constraints(asm: Assembly, phi: np.ndarray, factor: float) -> None:
    """ModelError if u_pre violates a joint's constraint equations."""
    size = asm.model.characteristic_length
    if phi.size and np.abs(phi).max() > 1e-6 * size:
        i = int(np.argmax(np.abs(phi)))
        cs = asm.constraints
        raise ModelError(f"natural modes: u_pre violates {cs.owner(i)} at load factor {factor:.6g} (its "
                         f"constraint equation is off by {phi[i]:.3g} m or rad); start from a state that "
                         "satisfies the joints (flexmb.consistent_initial_state) or from the reference state")


def _check_equilibrium(asm: Assembly, residual: np.ndarray, scale: float, factor: float, joints: bool) -> None:
    """ModelError naming the worst DOF if the residual is above round-off."""
    if residual.size == 0:
        return
    worst = int(np.argmax(np.abs(residual)))
    if abs(residual[worst]) <= EQUILIBRIUM_TOL * scale or not np.any(residual):
        return
    dof = asm.dofs.label(int(asm.dofs.free[worst]))
    with_joints = " after the best joint multipliers" if joints else ""
    remedy = ("pass an equilibrium state of the mechanism at this load factor" if joints else
              f"compute u_pre with flexmb.load_control(..., [{factor:.6g}]) at this load factor")
    raise ModelError(f"natural modes: u_pre is not an equilibrium at load factor {factor:.6g}: the residual "
                     f"force{with_joints} is {residual[worst]:.3g} at {dof} (force scale {scale:.3g}); "
                     f"{remedy}, or take the modes of the unloaded structure (load_factor=0, u_pre=None)")


@methods_keywords_listed
@dataclass
class NaturalModes:
    """Natural modes, lowest first (see the module docstring).

    eigenvalues : omega^2 (n,), rad^2/s^2, ascending; rigid-body ones exactly 0.0.
    modes : (n, n_dof) full DOF vectors, phi^T M phi = 1, zero at fixed and prescribed DOFs.
    rigid : (n,) bool, the zero-frequency (rigid-body or mechanism) modes.
    participation_factors : (n, dim) Gamma_ka = phi_k^T M r_a (kg^1/2).
    total_mass : (dim,) r_a^T M r_a (kg), what the effective masses add up to over all modes.
    complex_eigenvalues : omega^2 of complex pairs (flutter) of a non-symmetric K, not in modes.
    assembly : the Assembly the modes were computed on (not saved with :meth:`save`).
    """

    eigenvalues: np.ndarray
    modes: np.ndarray
    rigid: np.ndarray
    participation_factors: np.ndarray
    total_mass: np.ndarray
    u_pre: np.ndarray
    load_factor: float = 0.0
    layout: ModelLayout | None = None
    complex_eigenvalues: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=complex))
    assembly: Assembly | None = field(default=None, repr=False, compare=False)

    @property
    def omega(self) -> np.ndarray:
        """Circular frequencies (n,), rad/s; a negative omega^2 (an unstable mode) gives ``-sqrt(|omega^2|)``."""
        return np.sign(self.eigenvalues) * np.sqrt(np.abs(self.eigenvalues))

    @property
    def frequencies_hz(self) -> np.ndarray:
        """Frequencies omega / (2 pi) (n,), Hz (negative for unstable modes, as ``omega``)."""
        return self.omega / (2.0 * np.pi)

    @property
    def effective_masses(self) -> np.ndarray:
        """Effective modal masses Gamma_ka^2 (n, dim), kg."""
        return self.participation_factors ** 2

    @property
    def modal_masses(self) -> np.ndarray:
        """Modal masses (n,) of the modes as drawn in :meth:`mode_shapes` (largest nodal translation
        1 m): 1 / s_k^2 with s_k the largest translation of the mass-normalised mode (kg)."""
        layout = self.layout
        trans = layout.translations()
        size = np.linalg.norm(self.modes[:, trans], axis=2).max(axis=1)
        size = np.where(size > 0, size, np.abs(self.modes).max(axis=1))
        return 1.0 / size ** 2

    @property
    def n_rigid(self) -> int:
        return int(np.count_nonzero(self.rigid))

    def mode_shapes(self) -> ModeShapes:
        """The modes as a :class:`~flexmb.results.ModeShapes` result labelled by frequency (Hz),
        for plots, renders, result files and ParaView export; its meta holds the load factor (for
        :func:`~flexmb.cms.sensitivity.eigen_sensitivity` of modes read back)."""
        shapes = ModeShapes.from_modes(self.layout, self.frequencies_hz, self.modes, self.u_pre, "frequency (Hz)")
        shapes.meta["load_factor"] = float(self.load_factor)
        return shapes

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the modes to a result file (HDF5, kind "modes"); an existing file only with ``overwrite``."""
        return self.mode_shapes().save(path, overwrite)

    def table(self) -> str:
        """Text table: mode, frequency (Hz), omega (rad/s), effective masses per axis (kg)."""
        axes = "xyz"[:self.participation_factors.shape[1]]
        head = f"{'mode':>4} {'f (Hz)':>12} {'omega (rad/s)':>14} " + " ".join(
            f"{'m_eff,' + a + ' (kg)':>13}" for a in axes)
        rows = [head]
        for k, (f, w, m) in enumerate(zip(self.frequencies_hz, self.omega, self.effective_masses)):
            tag = " rigid" if self.rigid[k] else ""
            rows.append(f"{k + 1:>4} {f:>12.6g} {w:>14.6g} " + " ".join(f"{x:>13.5g}" for x in m) + tag)
        return "\n".join(rows)


@keywords_listed
def natural_modes(model: Model | Assembly, n_modes: int = 6, u_pre: np.ndarray | None = None,
                  load_factor: float = 0.0, dense_limit: int = 500) -> NaturalModes:
    """The n_modes lowest natural modes of the model (see the module docstring).

    Parameters
    ----------
    model : the model, or its Assembly.
    n_modes : number of modes (>= 1, at most the number of free DOFs, or with joints of
        independent coordinates).
    u_pre, load_factor : the equilibrium state (n_dof,) and its load factor, e.g. the last state
        of :func:`~flexmb.analysis.statics.load_control`; default the unloaded reference state
        (load factor 0: no gravity, no loads). A pendulum or a structure stiffened by its own
        weight needs ``load_factor=1`` (gravity on); u_pre = None is then the reference state,
        which must be an equilibrium (a hanging pendulum is).
    dense_limit : up to this many unknowns the dense LAPACK solver is used, else ARPACK.

    Returns a :class:`NaturalModes`. Raises :class:`~flexmb.model.ModelError` for bad
    arguments, a model without free DOFs or without mass on them, more modes than independent
    coordinates, or a u_pre that is not an equilibrium at load_factor; :class:`ModeCountError`
    if the solver's eigenvalues below the zero band's edge are not all that the model has there
    (module docstring: the count check).
    """
    asm = model if isinstance(model, Assembly) else Assembly(model)
    _check_assembly(asm, "natural_modes")
    n_modes = integer(n_modes, "natural_modes: n_modes", low=1)
    u_pre = _state_vector(asm, u_pre, "natural_modes: u_pre")
    load_factor = real(load_factor, "natural_modes: load_factor")
    dense_limit = integer(dense_limit, "natural_modes: dense_limit", low=0)
    if asm.n_free == 0:
        raise ModelError("natural_modes: the model has no free DOF (every DOF is fixed or prescribed)")
    system = system_matrices(asm, u_pre, load_factor)
    if not np.any(system.M.data):
        raise ModelError("natural_modes: the model has no mass on its free DOFs; give element groups a density "
                         "(rho_A), or add point masses or rigid bodies")
    n = system.n_unknowns
    if n == 0:
        raise ModelError("natural_modes: the joints lock every free DOF (the constraint null space is empty); "
                         "the model cannot vibrate")
    if n_modes > n:
        where = "independent coordinates (free DOFs minus independent joint constraints)" \
            if system.basis is not None else "free DOFs"
        raise ModelError(f"natural_modes: n_modes = {n_modes} is more than the model's {n} {where}")
    K, M = system.reduced()
    scale = eigenvalue_scale(K, M)
    null = _rigid_body_modes(asm, system, K, M, scale)
    # the null-space projection with joints is dense: solve it densely at any size
    dense = n <= dense_limit or not sp.issparse(K)
    values, vectors, complex_values = _lowest_eigenpairs(K, M, n_modes, dense, scale, null)
    if complex_values.size:
        shown = ", ".join(f"{z:.4g}" for z in complex_values[:4])
        warnings.warn(f"natural_modes: the tangent is not symmetric and {complex_values.size} complex pair(s) "
                      f"of omega^2 were found ({shown}): flutter, the state is dynamically unstable; they are "
                      "not returned as modes (see NaturalModes.complex_eigenvalues)", FlexmbWarning, stacklevel=3)
    if values.size < n_modes and complex_values.size == 0:
        raise ModelError(f"natural_modes: only {values.size} modes have a finite frequency, {n_modes} were "
                         "asked for: the other DOFs have no mass (e.g. lumped beams without rho_I)")
    values, vectors = _with_null_space(values, vectors, null, M, scale)
    if system.basis is not None:
        vectors = system.basis @ vectors
    return _natural_modes(asm, system, values, vectors, complex_values, scale, n_modes)


def _natural_modes(asm: Assembly, system: SystemMatrices, values: np.ndarray, vectors: np.ndarray,
                   complex_values: np.ndarray, scale: float, n_modes: int) -> NaturalModes:
    """Classify rigid modes, normalise, keep the n_modes lowest, and fill the result."""
    M = system.M
    rigid = np.abs(values) <= RIGID_TOL * scale
    unsure = ~rigid & (np.abs(values) <= 100.0 * RIGID_TOL * scale)
    if np.any(unsure):
        k = int(np.flatnonzero(unsure)[0])
        warnings.warn(f"natural_modes: mode {k + 1} (omega^2 = {values[k]:.4g}) is close to the round-off level of "
                      f"zero eigenvalues ({RIGID_TOL * scale:.3g}): rigid-body and elastic modes are not cleanly "
                      "separated; it is kept as an elastic mode", FlexmbWarning, stacklevel=4)
    values = np.where(rigid, 0.0, values)
    # mass normalisation (the symmetric solvers' vectors are M-orthonormal already)
    vectors = vectors / np.sqrt(np.einsum("ik,ik->k", vectors, M @ vectors))
    free = system.free
    translations, rotations = _unit_motions(asm)
    Mr = M @ translations[free]
    if np.any(rigid):
        vectors[:, rigid] = _ordered_rigid_modes(_loewdin(vectors[:, rigid], M), Mr, rotations[free])
    # more zero modes than asked for (the whole null space came from the kinematics): the first
    # in the fixed order of _ordered_rigid_modes
    values, vectors, rigid = values[:n_modes], vectors[:, :n_modes], rigid[:n_modes]
    # sign: the entry of largest magnitude positive; of entries equal in size to round-off (a
    # symmetric structure) the first in DOF order, so that the sign does not depend on the solver
    size = np.abs(vectors)
    top = np.argmax(size >= (1.0 - 1e-6) * size.max(axis=0), axis=0)
    vectors = vectors * np.sign(vectors[top, np.arange(vectors.shape[1])])
    if np.any(values < 0):
        k = int(np.flatnonzero(values < 0)[0])
        warnings.warn(f"natural_modes: mode {k + 1} has omega^2 = {values[k]:.4g} < 0: the state is unstable "
                      f"(beyond a buckling load, or an inverted pendulum); its omega is reported negative",
                      FlexmbWarning, stacklevel=4)
    modes = np.zeros((values.size, asm.n_dof))
    modes[:, free] = vectors.T
    return NaturalModes(values, modes, rigid, vectors.T @ Mr, np.einsum("ia,ia->a", translations[free], Mr),
                        system.u_pre, system.load_factor, ModelLayout.from_assembly(asm), complex_values, asm)


def _unit_motions(asm: Assembly) -> tuple[np.ndarray, np.ndarray]:
    """Unit translation of every node along each axis (n_dof, dim), and unit rotation of every
    node carrying rotations about each rotation axis (n_dof, 1 in 2D or 3 in 3D)."""
    dim, dofs = asm.model.dim, asm.dofs
    translations = np.zeros((asm.n_dof, dim))
    translations[dofs.translations(), np.arange(dim)] = 1.0
    n_rot = 1 if dim == 2 else 3
    nodes = np.flatnonzero(dofs.has_rotations)
    rotations = np.zeros((asm.n_dof, n_rot))
    rotations[dofs.first[nodes][:, None] + dim + np.arange(n_rot), np.arange(n_rot)] = 1.0
    return translations, rotations


def _rigid_body_modes(asm: Assembly, system: SystemMatrices, K, M, scale: float) -> np.ndarray:
    """The zero modes that the kinematics give, (n_unknowns, r), M-orthonormal; K, M are
    ``system.reduced()``.

    Every connected part of the structure (the free DOFs coupled through K) can move rigidly: a
    translation t and a small rotation w about the part's centroid c move node i by
    t + w x (x_i - c) (x_i its position at u_pre) and turn its rotations by w; internal (modal)
    DOFs stay. With joints only the combinations they allow are kept, z = B B^T z (C z = 0), in the
    coordinates B^T z. Of the span of these candidates the motions that K leaves unstrained,
    ``||K z|| <= RIGID_TOL * lambda_scale * ||M z||``, are returned: the supports, pins (the rotation
    about a pin remains), joints and pre-stress decide which. An exact rigid motion leaves
    round-off (below 1e-17 lambda_scale on free plates and beams of up to 10 000 DOFs); a motion
    that a support or an element resists leaves a residual of the order of the stiffness it meets
    (1e-3 lambda_scale for a pinned beam's translations).
    """
    n = K.shape[0]
    dofs, dim = asm.dofs, asm.model.dim
    n_rot = 1 if dim == 2 else 3
    fields = dim + n_rot                                      # candidates per part: translations, rotations
    n_parts, part = csgraph.connected_components(system.K, directed=False)
    if n_parts * fields > MAX_CANDIDATES:
        return np.zeros((n, 0))
    trans = dofs.translations()                                               # (n_nodes, dim)
    x = asm.model.coordinates + system.u_pre[trans]                           # (n_nodes, dim) m
    at = dofs.free_position[trans]                                            # (n_nodes, dim), -1 if held
    node, axis = np.nonzero(at >= 0)
    row = at[node, axis]                                                      # (n_t,) free translations
    p = part[row]
    centroid = np.zeros((n_parts, dim))
    np.add.at(centroid, p, x[node])
    centroid /= np.maximum(np.bincount(p, minlength=n_parts), 1)[:, None]      # (n_parts, dim) m
    arm = np.zeros((row.size, 3))
    arm[:, :dim] = x[node] - centroid[p]                                      # (n_t, 3)
    rows, cols, vals = [row], [p * fields + axis], [np.ones(row.size)]
    for j, b in enumerate([2] if dim == 2 else range(3)):
        rows.append(row)
        cols.append(p * fields + dim + j)
        vals.append(np.cross(np.eye(3)[b], arm)[np.arange(row.size), axis])    # (e_b x arm) . e_axis
    turning = np.flatnonzero(dofs.has_rotations)
    at = dofs.free_position[dofs.first[turning][:, None] + dim + np.arange(n_rot)]   # (n_turning, n_rot)
    node, axis = np.nonzero(at >= 0)
    row = at[node, axis]
    rows.append(row)
    cols.append(part[row] * fields + dim + axis)
    vals.append(np.ones(row.size))
    Z = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(system.free.size, n_parts * fields))
    if system.basis is not None:
        B, Z = system.basis, Z.toarray()
        Z = Z[:, np.linalg.norm(Z, axis=0) > 0.0]
        Z /= np.linalg.norm(Z, axis=0)
        # the combinations the joints allow: Z y in the span of B (unit columns: round-off is 1e-16)
        _, sv, vt = np.linalg.svd(np.linalg.qr(Z - B @ (B.T @ Z), mode="r"))
        Z = B.T @ (Z @ vt[np.r_[sv, np.zeros(vt.shape[0] - sv.size)] <= 1e-9].T)
    # M-orthonormal candidates; dependent or massless combinations dropped (a straight truss's
    # rotation about its axis, a lone massless rotation)
    G = Z.T @ (M @ Z)
    w, Q = np.linalg.eigh(0.5 * (G + G.T) if not sp.issparse(G) else 0.5 * (G + G.T).toarray())
    keep = w > 1e-12 * w.max(initial=0.0)
    if not np.any(keep):
        return np.zeros((n, 0))
    W = np.asarray(Z @ (Q[:, keep] / np.sqrt(w[keep])))                        # (n, q)
    # ||K W y|| / ||M W y|| over y: the singular values of K W R^-1, M W = Q R
    R = np.linalg.qr(np.asarray(M @ W), mode="r")
    _, sv, vt = np.linalg.svd(sla.solve_triangular(R, np.asarray(K @ W).T, trans="T").T, full_matrices=False)
    null = sv <= RIGID_TOL * scale
    if not np.any(null):
        return np.zeros((n, 0))
    return _loewdin(W @ sla.solve_triangular(R, vt[null].T), M)


def _with_null_space(values: np.ndarray, vectors: np.ndarray, null: np.ndarray, M, scale: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The solver's eigenpairs (ascending) with the kinematic zero modes null (n, r) merged in:
    the zero modes become the span of both, those of null first. The solver's may hold more
    (mechanisms) or, when fewer modes were asked for than there are zero modes, fewer; the dense
    solver's then span an arbitrary part of the null space, null all of it."""
    if null.shape[1] == 0:
        return values, vectors
    zero = np.abs(values) <= RIGID_TOL * scale
    V = vectors[:, zero]
    V = V / np.sqrt(np.einsum("ik,ik->k", V, M @ V))
    extra = V - null @ (null.T @ (M @ V))                       # the part outside span(null)
    S = extra.T @ (M @ extra)
    w, Q = np.linalg.eigh(0.5 * (S + S.T))
    keep = w > 1e-12                                            # M-norm above 1e-6 of a mode's
    zeros = np.hstack([null, extra @ (Q[:, keep] / np.sqrt(w[keep]))])
    negative, positive = values < -RIGID_TOL * scale, values > RIGID_TOL * scale
    return (np.r_[values[negative], np.zeros(zeros.shape[1]), values[positive]],
            np.hstack([vectors[:, negative], zeros, vectors[:, positive]]))


def _ordered_rigid_modes(rigid: np.ndarray, Mr: np.ndarray, rotations: np.ndarray) -> np.ndarray:
    """The zero-frequency modes (n_free, n_r), M-orthonormal, turned within their space so that
    they come in a fixed order: the first moves only along x (it has no participation in y, z),
    the next has no x participation, ... then those without translation participation ordered
    the same way by their nodal rotations. The QR factor Q of G = [Phi_r^T M r_a, Phi_r^T
    rot_b] gives Q^T G upper triangular; Phi_r Q stays M-orthonormal. This makes the result
    independent of the solver (ARPACK's random start) up to sign."""
    G = np.c_[rigid.T @ Mr, rigid.T @ rotations]
    Q = np.linalg.qr(G, mode="complete")[0]
    return rigid @ Q


def eigenvalue_scale(K: np.ndarray | sp.spmatrix, M: np.ndarray | sp.spmatrix) -> float:
    """lambda_scale = max_i K_ii / M_ii over the DOFs with mass (rad^2/s^2): the largest
    Rayleigh quotient of a unit vector, a lower bound of the largest eigenvalue and usually
    within a small factor of it; 1.0 if K has no diagonal (then every mode is a zero mode)."""
    k, m = np.abs(K.diagonal()), M.diagonal()
    massive = m > 0
    ratio = float(np.max(k[massive] / m[massive], initial=0.0))
    return ratio if ratio > 0 else 1.0


def _loewdin(V: np.ndarray, M) -> np.ndarray:
    """M-orthonormal basis V S^-1/2 (S = V^T M V) of the span of V, the closest to V."""
    S = V.T @ (M @ V)
    w, Q = np.linalg.eigh(0.5 * (S + S.T))
    return V @ (Q / np.sqrt(w)) @ Q.T


def _lowest_eigenpairs(K, M, k: int, dense: bool, scale: float, null: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The k lowest finite real eigenpairs of K phi = lambda M phi (ascending), and the complex
    eigenvalues met among them (non-symmetric K); scale is lambda_scale, null (n, r) the
    kinematic zero modes (:func:`_rigid_body_modes`), which the sparse solver leaves out of its
    search (it returns them, all r, with the k - r lowest other pairs). Symmetric problems are
    checked by a count of the eigenvalues below a shift (:func:`_count_check`); the sparse
    solver searches again past the zero modes it found when that count says it missed some."""
    n = K.shape[0]
    sym = _is_symmetric(K)
    M = 0.5 * (M + M.T)
    K = 0.5 * (K + K.T) if sym else K
    shift = -SHIFT * scale
    if dense or k >= n - 1:
        Kd = K.toarray() if sp.issparse(K) else np.asarray(K)
        Md = M.toarray() if sp.issparse(M) else np.asarray(M)
        if sym:
            try:
                mu, V = sla.eigh(Md, Kd - shift * Md, subset_by_index=[max(n - k, 0), n - 1])
            except np.linalg.LinAlgError:                 # K - sigma M not positive definite: K indefinite
                lam, V = sla.eig(Kd, Md)
            else:
                with np.errstate(divide="ignore"):
                    lam = shift + 1.0 / mu
        else:
            lam, V = sla.eig(Kd, Md)
        found = _finite_real(lam, V, k, scale)
        if not sym:
            return found
        found = _rayleigh_ritz(K, M, *found)
        _count_check(K, M, found[0], scale, "the dense solver")
        return found
    if sp.issparse(K):
        K, M = K.tocsc(), M.tocsc()
        shifted = (K - shift * M).tocsc()
        if sparse_lu.backend("auto", K.shape[0]) == "pardiso":
            # 4-5x SuperLU's speed on solids; lasting: its memory goes with it, not kept per pattern
            solve = sparse_lu.PardisoLU(shifted, diagonal=False, lasting=True).solve
        else:
            solve = spla.splu(shifted, permc_spec="MMD_AT_PLUS_A").solve
    else:                       # the dense matrices of a model with joints, on the constraint null space
        solve = functools.partial(sla.lu_solve, sla.lu_factor(K - shift * M))
    if not sym:
        return _shift_invert(K, M, k, shift, scale, solve, null, sym)
    known = null
    for _ in range(MISSED_ROUNDS):
        found = _rayleigh_ritz(K, M, *_shift_invert(K, M, k, shift, scale, solve, known, sym))
        if _count_check(K, M, found[0], scale, "ARPACK", final=False):
            return found
        # ARPACK returned some vectors of a multiple zero eigenvalue and not others (the start vector
        # has no component along them but round-off): leave out all zero modes found and search on
        below = found[0] <= RIGID_TOL * scale
        if np.count_nonzero(below) <= known.shape[1]:
            break
        known = found[1][:, below]
    _count_check(K, M, found[0], scale, "ARPACK")
    return found


def _shift_invert(K, M, k: int, shift: float, scale: float, solve, known: np.ndarray, sym: bool
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ARPACK in shift-invert mode on (K - shift M)^-1 M restricted to the M-orthogonal complement
    of known zero modes (n, r) (M-orthonormal): every product is followed by the projection
    P = I - Z Z^T M, so span(Z) maps to 0 (an infinite eigenvalue, never among the wanted) and
    the other eigenvalues are unchanged. Returns the r known modes (eigenvalue 0) with the
    max(k - r, 0) lowest others, unsorted. A non-symmetric K leaves the complement only in its
    projection: the eigenvector is the complement part x plus Z w, w = Z^T K x / lambda (from
    K Z = 0 and Z^T K phi = lambda Z^T M phi)."""
    n, r = K.shape[0], known.shape[1]
    wanted = k - r
    if wanted <= 0:
        return np.zeros(r), known, np.zeros(0, dtype=complex)

    def project(x: np.ndarray) -> np.ndarray:
        return x - known @ (known.T @ (M @ x)) if r else x

    opinv = spla.LinearOperator((n, n), matvec=lambda b: project(solve(b)), dtype=float)
    solver = spla.eigsh if sym else spla.eigs
    while True:                 # complex pairs (non-symmetric K) take places: ask for more
        lam, V = solver(K, k=min(wanted, n - 2 - r), M=M, sigma=shift, which="LM", OPinv=opinv,
                        v0=project(start_vector(n)))
        lam, V, complex_values = _finite_real(lam, V, k - r, scale)
        if lam.size >= k - r or wanted >= n - 2 - r:
            break
        wanted += 2 * max(complex_values.size, 1)
    if r and not sym:
        V = V + known @ ((known.T @ (K @ V)) / np.where(lam != 0.0, lam, 1.0))
    return np.r_[np.zeros(r), lam], np.hstack([known, V]), complex_values


def _count_check(K, M, values: np.ndarray, scale: float, solver: str, final: bool = True) -> bool:
    """Whether the eigenvalues found below a shift tau are all that the problem has there.

    tau lies between the zero eigenvalues (|omega^2| <= RIGID_TOL lambda_scale) and the lowest
    positive one found above them (their geometric mean). By Sylvester's law of inertia the
    number of eigenvalues of (K, M) below tau is the number of negative pivots of the
    symmetric factorisation L D L^T of K - tau M (:func:`_count_below`); it must equal the number
    of values (ascending) below tau. Nothing to check when every value found is a zero or a
    negative one (more may exist, fewer were asked for). A mismatch raises
    :class:`ModeCountError` if ``final``, else returns False.
    """
    zero = RIGID_TOL * scale
    above = values[values > zero]
    if above.size == 0:
        return True
    tau = np.sqrt(zero * above[0])
    count = _count_below(K, M, tau)
    found = int(np.count_nonzero(values < tau))
    if count is None:
        warnings.warn(f"natural_modes: the factorisation of K - {tau:.3g} M needed off-diagonal or perturbed pivots, so the "
                      f"{found} eigenvalue(s) {solver} found below {tau:.3g} (rad/s)^2 (zero-frequency and unstable "
                      "modes) could not be checked to be all", FlexmbWarning, stacklevel=5)
        return True
    if count == found:
        return True
    if not final:
        return False
    raise ModeCountError(
        f"natural_modes: {solver} found {found} eigenvalue(s) omega^2 below {tau:.3g} (rad/s)^2 (zero-frequency "
        f"and unstable modes), the factorisation of K - {tau:.3g} M counts {count} (Sylvester's law of inertia): "
        + ("modes were missed; a larger dense_limit solves the model densely" if count > found else
           "the eigen-solution is inconsistent") + f"; lambda_scale = {scale:.3g}")


def _count_below(K, M, tau: float) -> int | None:
    """Number of eigenvalues of (K, M) below tau, K and M symmetric: the negative pivots of
    L D L^T = P (K - tau M) P^T. Sparse: SuperLU with diagonal pivots only (then U = D L^T); None
    if it had to pivot off the diagonal (the count is then unknown). Dense: LAPACK's
    Bunch-Kaufman L D L^T, D of 1x1 and 2x2 blocks (a 2x2 block has a negative determinant when
    its two eigenvalues differ in sign). Large sparse matrices, with PARDISO installed (from
    :data:`~flexmb.integrators.sparse_lu.PARDISO_FROM` unknowns): its symmetric indefinite
    L D L^T counts them (:func:`~flexmb.integrators.sparse_lu.symmetric_inertia`; None if it
    perturbed a pivot)."""
    if sp.issparse(K) and sparse_lu.backend("auto", K.shape[0]) == "pardiso":
        inertia = sparse_lu.symmetric_inertia((K - tau * M).tocsc())
        return None if inertia is None else inertia[1]
    if sp.issparse(K):
        lu = spla.splu((K - tau * M).tocsc(), permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                       options={"SymmetricMode": True})
        if not np.array_equal(lu.perm_r, lu.perm_c):
            return None
        return int(np.count_nonzero(lu.U.diagonal() < 0.0))
    _, D, _ = sla.ldl(np.asarray(K - tau * M))
    sub = np.r_[np.diag(D, -1), 0.0]                     # (n,) D[i+1, i], non-zero where a 2x2 block starts
    pairs = sub != 0.0
    single = ~(pairs | np.r_[False, pairs[:-1]])
    d = np.diag(D)
    two = np.flatnonzero(pairs)
    det = d[two] * d[two + 1] - sub[two] ** 2
    trace = d[two] + d[two + 1]
    return int(np.count_nonzero(d[single] < 0.0) + np.count_nonzero(det < 0.0)
               + 2 * np.count_nonzero((det > 0.0) & (trace < 0.0)))


def _rayleigh_ritz(K, M, lam: np.ndarray, V: np.ndarray, complex_values: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Eigenpairs re-solved on the span of the computed vectors: ``(V^T K V) y = lambda (V^T M V) y``,
    ``phi = V y``, ascending.

    About a small shift, ``K - sigma M`` of a free-free model is nearly singular and the
    shift-invert eigenvalues sigma + 1/mu lose digits, and ARPACK's vectors of close
    eigenvalues mix slightly; the projected problem gives the best pairs in their span
    (Rayleigh quotients, exact to round-off, errors quadratic in the vectors' errors) and
    M-orthogonal vectors.
    """
    if V.shape[1] == 0:
        return lam, V, complex_values
    # einsum, not BLAS: right after ARPACK (scipy's OpenBLAS) the tall-skinny products in numpy's
    # OpenBLAS stalled for seconds on a shared 2-core machine (two spinning thread pools)
    Kp, Mp = np.einsum("ik,il->kl", V, K @ V), np.einsum("ik,il->kl", V, M @ V)
    values, Y = sla.eigh(0.5 * (Kp + Kp.T), 0.5 * (Mp + Mp.T))
    return values, np.einsum("ik,kl->il", V, Y), complex_values


def _finite_real(lam: np.ndarray, V: np.ndarray, k: int, scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Drop infinite (massless) eigenvalues, split off complex pairs, sort, keep the k lowest
    real ones and the complex ones (one of each conjugate pair) up to the largest of them."""
    lam = np.asarray(lam)
    finite = np.isfinite(lam) & (np.abs(lam) < INFINITE * scale)
    lam, V = lam[finite], V[:, finite]
    is_complex = np.abs(np.imag(lam)) > 1e-8 * np.maximum(np.abs(lam), RIGID_TOL * scale)
    complex_values = lam[is_complex]
    lam, V = np.real(lam[~is_complex]), np.real(V[:, ~is_complex])
    order = np.argsort(lam)[:k]
    top = np.abs(lam[order]).max(initial=0.0) if order.size == k else np.inf
    complex_values = complex_values[(np.imag(complex_values) > 0) & (np.abs(complex_values) <= top)]
    return lam[order], V[:, order], np.sort_complex(complex_values)


def _is_symmetric(K: Any) -> bool:
    """Symmetric to round-off (relative 1e-10 in the Frobenius norm)."""
    if sp.issparse(K):
        diff, size = spla.norm(K - K.T), spla.norm(K)
    else:
        diff, size = np.linalg.norm(K - K.T), np.linalg.norm(K)
    return bool(diff <= 1e-10 * size)
