"""Structural modification: forward (predict the modes of a changed design) and inverse (find the
change that puts a mode at a target frequency), after Hutton & Smith (1993).

Changes are given per design variable (:mod:`flexmb.cms.design`) as the amount ``alpha_i`` added to
its value p_i: a relative change for multipliers (``alpha = 0.37`` makes a density 1.37 times
the baseline), kg for point masses and N/m for springs. The model is linear in every variable,
so the modified matrices are exactly ``K + sum_i alpha_i K_i`` and ``M + sum_i alpha_i M_i`` with
``K_i = dK/dp_i``, ``M_i = dM/dp_i``.

Forward modification (linear equivalent, Hutton & Smith): hold the baseline reduced modes Z
(Z^T M Z = I, Z^T K Z = Lambda) and solve the small eigenproblem

    (Lambda + Z^T T^T dK T Z) c = lambda* (I + Z^T T^T dM T Z) c,    u* = T Z c

(T = I for a full model). For a CMS model Z defaults to *all* its reduced modes, so the result is
the eigen-solution of the CMS model with T frozen. A uniform density change of one component
leaves span(T) unchanged (its free-interface modes are only rescaled and its residual
flexibility is unchanged), so the prediction then equals a CMS re-analysis to round-off; a
stiffness change alters the component's modes and residual flexibility, so the prediction is
close but not exact. For a full-model base Z is the set of modes computed (a Ritz
approximation). :func:`reanalyse` gives the comparison: the changed components re-reduced with
the same number of modes and re-synthesised, or the full FE model solved again.

Inverse modification with one variable and one target lambda* of mode k: on the baseline modes
the modified problem is ``(Lambda - lambda* I) c = alpha (lambda* B - A) c`` with
``A = Z^T T^T K_1 T Z``, ``B = Z^T T^T M_1 T Z``: a generalised eigenproblem in alpha. Its real roots
(1/alpha from ``(lambda* B - A) c = (1/alpha) (Lambda - lambda* I) c``) are all reported; the one
chosen is the physically admissible root (p + alpha >= 0) whose eigenvector c is most dominated by
the target mode, |c_k|^2 / |c|^2 largest and at least 1/2 (mode tracking; a root whose mode is
mostly another mode moves that mode, not the target). This is the one-shot linear-equivalent
alpha. Refinement (``refine=True``): Newton on the re-analysed eigenvalue,
``alpha <- alpha - (lambda_k(alpha) - lambda*) / (d lambda_k/d alpha)``, the derivative from the
sensitivity of the re-analysed model, the mode followed by its shape (largest MAC with the
previous iterate), until the re-analysed frequency is within ``rtol`` of the target.

Several variables and targets: equal counts -> Newton on the eigenvalues (first on the
linear-equivalent model, then refined by re-analysis). More variables than targets ->
minimum-norm Gauss-Newton: of all changes that reach the targets, the one with the least
weighted norm of the relative changes, ``min sum_i (w_i alpha_i / s_i)^2`` (s_i the variable's
:attr:`~flexmb.cms.design.DesignVariable.scale`: its baseline, or 1 at a zero baseline; weights
w_i default 1), by the iteration ``alpha <- W^-1 (J W^-1)^+ (lambda* - lambda(alpha) + J alpha)``,
``W = diag(w_i / s_i)``, J = d lambda/d alpha. Its fixed points satisfy the targets and the
first-order optimality condition ``W^2 alpha = J^T nu`` of the minimum-norm problem. Unreachable
targets (no real root, or only roots that need a negative modulus, density, mass or spring;
Newton not converging) raise :class:`~flexmb.checks.ModelError`.

References
----------
Hutton, S. G. and Smith, K. S. (1993). Component mode synthesis and structural modification.
"""
from __future__ import annotations

import copy
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexmb.analysis.arpack import start_vector
from flexmb.assembly import Assembly
from flexmb.checks import ModelError, keywords_listed, methods_keywords_listed
from flexmb.cms.design import DesignVariable
from flexmb.cms.reduction import shifted_eigh
from flexmb.cms.sensitivity import ModalBase
from flexmb.results import ModelLayout, ModeShapes

#: full models with at most this many unknowns are re-analysed by a dense solver (above it
#: ARPACK's shift-invert is faster: 4-9x at 2000 DOFs of a beam frame, benchmarks/bench_cms.py)
DENSE_LIMIT = 500
#: relative frequency error accepted when Newton stagnates there (round-off of the re-analysis)
ROUND_OFF_FLOOR = 1e-7
#: K, M of the reference state per Assembly (re-analyses of one model reuse them)
_SYSTEMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: a root of the single-variable problem follows the target mode k only if |c_k|^2 / |c|^2 >= this
MIN_DOMINANCE = 0.5


# ---------------------------------------------------------------------- results
@methods_keywords_listed
@dataclass
class ModifiedModes:
    """Modes of a modified design.

    Attributes
    ----------
    eigenvalues : (n,) omega^2, rad^2/s^2, ascending.
    modes : (n, n_dof) parent-model DOF vectors, mass-normalised for the modified model (stacked
        component DOFs, T xi, for components without a parent model).
    baseline_eigenvalues : (n,) omega^2 of the baseline modes the modified ones follow (``tracking``).
    tracking : (n,) index of the baseline mode that dominates each modified mode (forward
        modification: largest ``|c_k|``; re-analysis: largest MAC with the baseline shapes).
    method : ``"linear equivalent"``, ``"CMS re-analysis"`` or ``"full re-analysis"``.
    coefficients : (n_Z, n) c on the baseline modes Z (linear equivalent only).
    layout : the parent model's layout (None for components without a parent model).

    Each mode's sign is that of the baseline mode it follows (positive projection on it), so
    before/after pictures do not flip.
    """

    eigenvalues: np.ndarray
    modes: np.ndarray
    baseline_eigenvalues: np.ndarray
    tracking: np.ndarray
    method: str
    coefficients: np.ndarray | None = None
    layout: ModelLayout | None = None

    def mode_shapes(self) -> ModeShapes:
        """The modified modes as a :class:`~flexmb.results.ModeShapes` result labelled by frequency
        (Hz), for pictures, result files and ParaView, like the baseline's."""
        if self.layout is None:
            raise ModelError("ModifiedModes.mode_shapes: the components have no parent model to draw the modes on "
                             "(build them with components_from_groups or Component.from_model(..., parent=))")
        return ModeShapes.from_modes(self.layout, self.frequencies_hz, self.modes, np.zeros(self.layout.n_dof),
                                     "frequency (Hz)")

    @property
    def omega(self) -> np.ndarray:
        """(n,) angular frequencies of the modified modes, rad/s."""
        return np.sqrt(np.maximum(self.eigenvalues, 0.0))

    @property
    def frequencies_hz(self) -> np.ndarray:
        """(n,) frequencies of the modified modes, Hz."""
        return _hz(self.eigenvalues)

    @property
    def baseline_hz(self) -> np.ndarray:
        """(n,) frequencies of the baseline modes they follow, Hz."""
        return _hz(self.baseline_eigenvalues)


@methods_keywords_listed
@dataclass
class InverseModification:
    """Result of :func:`inverse_modification`.

    Attributes
    ----------
    variables : the design variables (n_v).
    modes : (n_t,) target mode indices (0-based, baseline numbering).
    targets_hz, baseline_hz : (n_t,) target and baseline frequencies (Hz).
    alpha_linear : (n_v,) one-shot change from the linear-equivalent model on the baseline modes.
    alpha : (n_v,) refined change (re-analysis), = alpha_linear without refinement.
    linear_check_hz : (n_t,) re-analysed frequencies at alpha_linear (how good the one shot is).
    achieved_hz : (n_t,) re-analysed frequencies at alpha (the check).
    roots : one variable: every real root of the alpha eigenproblem, dicts with ``alpha``,
        ``dominance`` (``|c_k|^2 / |c|^2`` of the target mode), ``admissible`` and ``chosen``.
    rule : how the solution was chosen (root choice, Newton, or minimum norm).
    iterations : Newton / Gauss-Newton iterations of the refinement.
    """

    variables: list[DesignVariable]
    modes: np.ndarray
    targets_hz: np.ndarray
    baseline_hz: np.ndarray
    alpha_linear: np.ndarray
    alpha: np.ndarray
    linear_check_hz: np.ndarray
    achieved_hz: np.ndarray
    roots: list[dict[str, Any]] = field(default_factory=list)
    rule: str = ""
    iterations: int = 0
    weights: np.ndarray | None = None

    @property
    def changes(self) -> dict[DesignVariable, float]:
        """The refined change as :func:`forward_modification` and :func:`reanalyse` take it: variable ->
        the amount alpha added to its value (in the variable's unit)."""
        return {v: float(a) for v, a in zip(self.variables, self.alpha)}

    @property
    def new_values(self) -> np.ndarray:
        """(n_v,) the variables' values after the change, p + alpha."""
        return np.array([v.value for v in self.variables]) + self.alpha

    def weighted_norm(self, alpha: np.ndarray | None = None) -> float:
        """sqrt(sum_i (w_i alpha_i / s_i)^2), the norm minimised with more variables than targets."""
        a = self.alpha if alpha is None else np.asarray(alpha, dtype=float)
        return float(np.linalg.norm(_weight_matrix(self.variables, self.weights) @ a))

    def summary(self) -> str:
        """Text report: targets, roots, one-shot and refined changes, and the re-analysis check."""
        lines = [f"inverse modification: {self.rule}"]
        for k, t, b, a1, a2 in zip(self.modes, self.targets_hz, self.baseline_hz, self.linear_check_hz,
                                   self.achieved_hz):
            lines.append(f"  mode {k + 1}: baseline {b:.6g} Hz -> target {t:.6g} Hz; re-analysed at one-shot "
                         f"alpha {a1:.6g} Hz, at refined alpha {a2:.6g} Hz")
        for r in self.roots:
            lines.append(f"  root alpha = {r['alpha']:+.6g}: dominance {r['dominance']:.3f}, "
                         f"{'admissible' if r['admissible'] else 'inadmissible'}{' <- chosen' if r['chosen'] else ''}")
        for v, a1, a2 in zip(self.variables, self.alpha_linear, self.alpha):
            lines.append(f"  {v.name}: p = {v.value:.6g}, one-shot alpha = {a1:+.6g}, refined alpha = {a2:+.6g} "
                         f"(new p = {v.value + a2:.6g})")
        return "\n".join(lines)


# ----------------------------------------------------------------- forward
@keywords_listed
def forward_modification(base: Any, changes: dict[DesignVariable, float], n_modes: int | None = None,
                         basis_modes: Sequence[int] | None = None, assembly: Assembly | None = None) -> ModifiedModes:
    """Modes of the modified design by the linear-equivalent method on the baseline modes.

    Parameters
    ----------
    base : :class:`~flexmb.analysis.modes.NaturalModes` or :class:`~flexmb.cms.synthesis.CmsModel`.
    changes : design variable -> change alpha added to its value, p -> p + alpha (module docstring): a
        multiplier's baseline is 1, so "E x 0.5" is alpha = -0.5.
    n_modes : modified modes returned (default: as many as baseline modes held).
    basis_modes : indices of the baseline modes Z held (default: all reduced modes of a CmsModel,
        all computed modes of a NaturalModes).
    assembly : the Assembly of a NaturalModes base.
    """
    mb = ModalBase(base, None, assembly)
    Z = mb.check_modes(basis_modes, "forward_modification", allow_rigid=True) if basis_modes is not None \
        else np.arange(mb.n)
    dK, dM = _changes_reduced(mb, changes, Z)
    A = np.diag(mb.eigenvalues[Z]) + dK
    B = np.eye(Z.size) + dM
    lam, C = _small_eigen(A, B, "forward_modification")
    n = Z.size if n_modes is None else _count(n_modes, Z.size, "forward_modification: n_modes")
    lam, C = lam[:n], C[:, :n]
    dominant = np.argmax(np.abs(C), axis=0)
    C = C * np.sign(C[dominant, np.arange(n)])                              # same sign as the followed mode
    tracking = Z[dominant]
    modes = _full_modes(mb, Z) @ C                                         # (n_dof, n)
    return ModifiedModes(lam, modes.T, mb.eigenvalues[tracking], tracking, "linear equivalent", C, _layout(mb))


@keywords_listed
def reanalyse(base: Any, changes: dict[DesignVariable, float], n_modes: int = 6,
              assembly: Assembly | None = None) -> ModifiedModes:
    """Modes of the modified design by re-analysis: for a CmsModel every changed component is
    re-reduced (same kind and number of modes) and the model re-synthesised; for a NaturalModes
    base the full FE model (K + dK, M + dM, on the joints' null space) is solved again."""
    mb = ModalBase(base, None, assembly)
    n_modes = _count(n_modes, None, "reanalyse: n_modes")
    new = _reanalysed_base(mb, changes, n_modes)
    lam = new.eigenvalues
    modes = _full_modes(new, np.arange(new.n)).T                           # (n, n_dof)
    old = _full_modes(mb, np.arange(mb.n)).T
    tracking = np.argmax(_mac(modes, old), axis=1)
    modes = modes * np.where(np.einsum("kd,kd->k", modes, old[tracking]) < 0.0, -1.0, 1.0)[:, None]
    method = "CMS re-analysis" if mb.kind == "cms" else "full re-analysis"
    return ModifiedModes(lam, modes, mb.eigenvalues[tracking], tracking, method, layout=_layout(mb))


# ----------------------------------------------------------------- inverse
@keywords_listed
def inverse_modification(base: Any, variables: DesignVariable | Sequence[DesignVariable],
                         mode: int | Sequence[int], target_hz: float | Sequence[float], refine: bool = True,
                         rtol: float = 1e-10, max_iterations: int = 30, weights: Sequence[float] | None = None,
                         assembly: Assembly | None = None) -> InverseModification:
    """Changes of design variables that put modes at target frequencies (module docstring).

    Parameters
    ----------
    base : NaturalModes or CmsModel (baseline).
    variables : one or several design variables.
    mode, target_hz : target mode index(es) (0-based) and frequency(ies) in Hz, equal counts.
    refine : refine the one-shot linear-equivalent change by re-analysis (Newton).
    rtol : relative tolerance on the re-analysed frequencies; an error below ROUND_OFF_FLOOR at which
        Newton stagnates (the re-analysis' round-off) is accepted too.
    weights : w_i of the minimum-norm rule (more variables than targets), default 1.
    """
    variables = [variables] if isinstance(variables, DesignVariable) else list(variables)
    if not variables or not all(isinstance(v, DesignVariable) for v in variables):
        raise ModelError(f"inverse_modification: give design variables, got {variables!r}")
    modes = np.atleast_1d(np.asarray(mode))
    targets = np.atleast_1d(np.asarray(target_hz, dtype=float))
    if modes.shape != targets.shape or modes.ndim != 1:
        raise ModelError(f"inverse_modification: {modes.size} mode(s) and {targets.size} target(s); give one "
                         "target frequency per mode")
    if np.any(~np.isfinite(targets)) or np.any(targets <= 0):
        raise ModelError("inverse_modification: target frequencies must be positive and finite, got "
                         f"{targets.tolist()}")
    if len(variables) < targets.size:
        raise ModelError(f"inverse_modification: {len(variables)} variable(s) for {targets.size} targets: "
                         "the problem is overdetermined; give at least as many variables as targets")
    w = _weights(weights, len(variables))
    mb = ModalBase(base, None, assembly)
    idx = mb.check_modes(modes, "inverse_modification")
    lam_t = (2.0 * np.pi * targets) ** 2
    Z = np.arange(mb.n)
    reduced = [_projected(mb, v, Z) for v in variables]                  # (A_i, B_i) on the modes
    lam0 = mb.eigenvalues[Z]
    roots: list[dict[str, Any]] = []
    if len(variables) == 1:
        alpha_lin, roots = _single_variable_roots(variables[0], lam0, *reduced[0], idx[0], lam_t[0])
        rule = (f"one variable, one target: generalised eigenproblem in alpha, {len(roots)} real root(s); chosen "
                "the admissible root whose c is most dominated by the target mode")
    else:
        track = {"shapes": np.eye(Z.size)[:, idx]}

        def linear(alpha: np.ndarray):
            A = np.diag(lam0) + sum(a * Ai for a, (Ai, _) in zip(alpha, reduced))
            B = np.eye(Z.size) + sum(a * Bi for a, (_, Bi) in zip(alpha, reduced))
            lam, C = _small_eigen(A, B, "inverse_modification")
            pick = _follow(C.T, track["shapes"].T)
            track["shapes"] = C[:, pick]
            Cp = C[:, pick]
            J = np.array([[c @ (Ai - l * Bi) @ c for Ai, Bi in reduced] for c, l in zip(Cp.T, lam[pick])])
            return lam[pick], J

        alpha_lin, _ = _target_newton(linear, np.zeros(len(variables)), lam_t, variables, w, rtol, max_iterations,
                                      "the linear-equivalent model")
        rule = ("equal numbers of variables and targets: Newton on the eigenvalues" if len(variables) == targets.size
                else "more variables than targets: minimum-norm Gauss-Newton, min sum (w_i alpha_i / s_i)^2 "
                     "subject to the targets")
    _check_admissible(variables, alpha_lin, "the one-shot (linear-equivalent) change")
    check_lin, _ = _reanalysed_targets(mb, variables, alpha_lin, idx)
    alpha, iterations = alpha_lin.copy(), 0
    if refine:
        state = {"shapes": None}

        def reanalysed(alpha: np.ndarray):
            _check_admissible(variables, alpha, "a Newton iterate of the refinement")
            lam, J, shapes = _reanalysed_targets(mb, variables, alpha, idx, state["shapes"], jacobian=True)
            state["shapes"] = shapes
            return lam, J

        alpha, iterations = _target_newton(reanalysed, alpha_lin, lam_t, variables, w, rtol, max_iterations,
                                           "the re-analysed model")
        _check_admissible(variables, alpha, "the refined change")
        rule += "; refined by Newton on the re-analysed model"
    achieved, _ = _reanalysed_targets(mb, variables, alpha, idx)
    return InverseModification(variables, idx, targets, _hz(mb.eigenvalues[idx]), alpha_lin, alpha, _hz(check_lin),
                               _hz(achieved), roots, rule, iterations, w)


# ---------------------------------------------------------------- internals
def _hz(lam: np.ndarray) -> np.ndarray:
    """Frequencies (Hz) of eigenvalues omega^2."""
    return np.sqrt(np.maximum(lam, 0.0)) / (2.0 * np.pi)


def _count(n: Any, limit: int | None, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ModelError(f"{what} must be a positive integer, got {n!r}")
    if limit is not None and n > limit:
        raise ModelError(f"{what} = {n} is more than the {limit} baseline modes held")
    return int(n)


def _weights(weights: Sequence[float] | None, n: int) -> np.ndarray:
    if weights is None:
        return np.ones(n)
    w = np.asarray(weights, dtype=float)
    if w.shape != (n,) or np.any(~np.isfinite(w)) or np.any(w <= 0):
        raise ModelError(f"inverse_modification: weights must be {n} positive numbers, got {weights!r}")
    return w


def _weight_matrix(variables: list[DesignVariable], weights: np.ndarray | None) -> np.ndarray:
    w = np.ones(len(variables)) if weights is None else weights
    return np.diag(w / np.array([v.scale for v in variables]))


def _check_changes(changes: dict[DesignVariable, float]) -> list[tuple[DesignVariable, float]]:
    if not isinstance(changes, dict) or not changes:
        raise ModelError(f"modification: changes must be a non-empty dict design variable -> change, got {changes!r}")
    out = []
    for var, a in changes.items():
        if not isinstance(var, DesignVariable):
            raise ModelError(f"modification: {var!r} is not a design variable")
        try:
            a = float(a)
        except (TypeError, ValueError):
            raise ModelError(f"modification: the change of {var.name!r} must be a number, got {a!r}") from None
        if not np.isfinite(a):
            raise ModelError(f"modification: the change of {var.name!r} is {a}")
        out.append((var, a))
    _check_admissible([v for v, _ in out], np.array([a for _, a in out]), "the change")
    return out


def _check_admissible(variables: list[DesignVariable], alpha: np.ndarray, what: str) -> None:
    """ModelError if a variable would become negative (or a multiplier zero)."""
    for v, a in zip(variables, alpha):
        new = v.value + a
        if new < v.lower_bound or (v.is_multiplier and new <= 0.0):
            raise ModelError(f"{what}: {v.name!r} would become {new:.6g} (p = {v.value:g}, alpha = {a:+.6g}); a "
                             f"{v.kind} cannot be {'zero or ' if v.is_multiplier else ''}negative — the target is "
                             "not reachable with this variable")


def _projected(mb: ModalBase, variable: DesignVariable, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Z^T T^T dK T Z, Z^T T^T dM T Z) of one variable (n_Z, n_Z)."""
    dK, dM = mb.reduced_matrices(variable)
    X = mb.vectors[:, Z]
    return X.T @ dK @ X, X.T @ dM @ X


def _changes_reduced(mb: ModalBase, changes: dict[DesignVariable, float], Z: np.ndarray):
    dK = np.zeros((Z.size, Z.size))
    dM = np.zeros((Z.size, Z.size))
    for var, a in _check_changes(changes):
        A, B = _projected(mb, var, Z)
        dK += a * A
        dM += a * B
    return dK, dM


def _small_eigen(A: np.ndarray, B: np.ndarray, what: str, sigma: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Eigenpairs of the symmetric pencil (A, B), ascending, c^T B c = 1 (dense)."""
    return _shifted_eigh(A, B, sigma, what, A.shape[0])


def _shifted_eigh(A: np.ndarray, B: np.ndarray, sigma: float | None, what: str, n: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The n lowest eigenpairs of A x = lambda B x by the shifted problem B x = mu (A + sigma B) x,
    lambda = 1/mu - sigma: the low eigenvalues are then accurate to round-off relative to
    themselves (a plain solve is only accurate relative to the largest one). sigma defaults to
    the smallest positive diagonal ratio A_ii / B_ii, near the lowest elastic eigenvalue."""
    A, B = 0.5 * (A + A.T), 0.5 * (B + B.T)
    if sigma is None:
        ratio = np.diag(A) / np.where(np.diag(B) > 0, np.diag(B), np.inf)
        positive = ratio[ratio > 1e-9 * max(float(ratio.max(initial=0.0)), 1e-300)]
        sigma = float(positive.min()) if positive.size else 1.0
    try:
        lam, X = shifted_eigh(A, B, sigma, n)
    except np.linalg.LinAlgError:
        raise ModelError(f"{what}: the modified stiffness is not positive semi-definite (a modulus or spring "
                         "reduced below zero?)") from None
    if lam.size < n:                                     # a massless direction (infinite lambda) among them
        raise ModelError(f"{what}: only {lam.size} of the {n} modes asked for have mass (massless DOFs, e.g. "
                         "lumped beams without rho_I)")
    return lam, X


def _full_modes(mb: ModalBase, Z: np.ndarray) -> np.ndarray:
    """Baseline modes Z as parent-model DOF vectors (n_dof, n_Z)."""
    if mb.kind == "cms":
        if mb.base.parent is None:                     # stand-alone components: stacked component DOFs
            return np.asarray(mb.base.T @ mb.vectors[:, Z])
        return np.asarray(mb.base.recover(mb.vectors[:, Z]))
    out = np.zeros((mb.assembly.n_dof, Z.size))
    out[mb.assembly.dofs.free] = mb.vectors[:, Z]
    return out


def _layout(mb: ModalBase) -> ModelLayout | None:
    """The layout modes are drawn on: the parent model's (None for stand-alone components)."""
    if mb.kind == "cms":
        return mb.base.layout if mb.base.parent is not None else None
    return mb.base.layout


def _mac(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Modal assurance criterion between rows of a (n, d) and rows of b (m, d): (n, m)."""
    num = (a @ b.T) ** 2
    return num / np.outer(np.einsum("ij,ij->i", a, a), np.einsum("ij,ij->i", b, b))


def _follow(candidates: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """For each previous shape (rows), the candidate (rows) with the largest MAC, all distinct."""
    mac = _mac(candidates, previous)                                     # (n_cand, n_prev)
    pick = np.empty(previous.shape[0], dtype=np.int64)
    taken: set[int] = set()
    for j in np.argsort(-mac.max(axis=0)):
        order = [i for i in np.argsort(-mac[:, j]) if i not in taken]
        pick[j] = order[0]
        taken.add(order[0])
    return pick


def _single_variable_roots(var: DesignVariable, lam0: np.ndarray, A: np.ndarray, B: np.ndarray, k: int,
                           lam_t: float) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Real roots alpha of (Lambda - lam_t I) c = alpha (lam_t B - A) c and the chosen one."""
    D = np.diag(lam0 - lam_t)
    R = lam_t * B - A
    mu, C = sla.eig(R, D)                                 # mu = 1 / alpha; D nonsingular unless lam_t = lam_i
    scale = np.abs(mu).max(initial=0.0)
    roots = []
    for m, c in zip(mu, C.T):
        if not np.isfinite(m) or abs(m.imag) > 1e-8 * max(abs(m), 1e-300) or abs(m) <= 1e-12 * scale:
            continue
        c = c.real / np.linalg.norm(c.real)
        a = 1.0 / m.real
        new = var.value + a
        roots.append({"alpha": float(a), "dominance": float(c[k] ** 2),
                      "admissible": bool(new >= var.lower_bound and not (var.is_multiplier and new <= 0.0)),
                      "chosen": False})
    roots.sort(key=lambda r: r["alpha"])
    good = [r for r in roots if r["admissible"] and r["dominance"] >= MIN_DOMINANCE]
    if not good:
        shown = ", ".join(f"{r['alpha']:+.4g} (dominance {r['dominance']:.2f}, "
                          f"{'admissible' if r['admissible'] else 'p + alpha < 0'})" for r in roots) or "none"
        raise ModelError(f"inverse_modification: the target is not reachable with {var.name!r}: no admissible real "
                         f"root alpha whose mode is mostly mode {k} (real roots: {shown})")
    best = max(good, key=lambda r: (r["dominance"], -abs(r["alpha"])))
    best["chosen"] = True
    return np.array([best["alpha"]]), roots


def _target_newton(evaluate: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], alpha0: np.ndarray,
                   lam_t: np.ndarray, variables: list[DesignVariable], weights: np.ndarray, rtol: float,
                   max_iterations: int, what: str) -> tuple[np.ndarray, int]:
    """Newton (square) / minimum-norm Gauss-Newton on lambda(alpha) = lam_t (module docstring)."""
    W = _weight_matrix(variables, weights)
    Winv = np.linalg.inv(W)
    square = len(variables) == lam_t.size
    alpha = np.array(alpha0, dtype=float)
    step = np.inf                   # weighted size of the last step: the minimum norm needs it small
    worst = previous = np.inf
    for it in range(max_iterations + 1):
        lam, J = evaluate(alpha)
        worst = float(np.max(np.abs(np.sqrt(np.maximum(lam, 0.0) / lam_t) - 1.0)))   # relative in frequency
        # an error below ROUND_OFF_FLOOR that no longer halves is the re-analysis' round-off (eps times
        # the eigenproblem's condition, 2e-10 for a 40-element cantilever): Newton cannot do better
        reached = worst <= rtol or (worst <= ROUND_OFF_FLOOR and worst > 0.5 * previous)
        if reached and (square or step <= 1e-6 * max(np.linalg.norm(W @ alpha), 1.0)):
            return alpha, it
        previous = worst
        if it == max_iterations:
            break
        new = Winv @ np.linalg.lstsq(J @ Winv, lam_t - lam + J @ alpha, rcond=None)[0]
        step = float(np.linalg.norm(W @ (new - alpha)))
        alpha = new
    raise ModelError(f"inverse_modification: Newton on {what} did not reach the targets in {max_iterations} "
                     f"iterations (relative frequency error {worst:.3g}); the target may be unreachable with "
                     "these variables")


def _reanalysed_base(mb: ModalBase, changes: dict[DesignVariable, float], n_modes: int) -> ModalBase:
    """The modified design re-analysed, as a ModalBase (see :func:`reanalyse`)."""
    items = _check_changes(changes)
    if mb.kind == "cms":
        from flexmb.cms.reduction import craig_bampton, free_interface
        from flexmb.cms.synthesis import synthesize

        bases = []
        for j, basis in enumerate(mb.base.bases):
            dK = dM = None
            for var, a in items:
                for jj, K_i, M_i in mb.part_matrices(var):
                    if jj == j:
                        dK = a * K_i if dK is None else dK + a * K_i
                        dM = a * M_i if dM is None else dM + a * M_i
            if dK is None:
                bases.append(basis)
                continue
            comp = copy.copy(basis.component)
            comp.K = (comp.K + dK).tocsc()
            comp.M = (comp.M + dM).tocsc()
            if basis.kind == "free-interface":
                bases.append(free_interface(comp, n_elastic_modes=basis.size - basis.n_rigid,
                                            residual=basis.residual_flexibility is not None))
            else:
                bases.append(craig_bampton(comp, n_modes=basis.size - comp.interface_dofs.size))
        cms = synthesize(bases, allow_partial=True)      # the same components as the base, which was accepted
        return ModalBase(cms, min(n_modes, np.asarray(cms.K).shape[0]))
    from flexmb.analysis.modes import system_matrices

    asm = mb.assembly
    revision, system = _SYSTEMS.get(asm, (None, None))
    if revision != asm.model.revision:
        system = system_matrices(asm)
        _SYSTEMS[asm] = (asm.model.revision, system)
    K, M = system.K.copy(), system.M.copy()
    for var, a in items:
        K_i, M_i = var.matrices(asm)
        K, M = K + a * K_i, M + a * M_i
    if system.basis is not None:
        Bn = system.basis
        K, M = Bn.T @ (K @ Bn), Bn.T @ (M @ Bn)
    elastic = mb.eigenvalues[~mb.rigid]
    lam, V = _lowest(K, M, n_modes, float(elastic[0]) if elastic.size else 1.0)
    if system.basis is not None:
        V = system.basis @ V
    modes = np.zeros((lam.size, asm.n_dof))
    modes[:, asm.dofs.free] = V.T
    scale = max(float(np.abs(lam).max(initial=0.0)), 1e-300)
    rigid = np.abs(lam) <= 1e-9 * scale
    return ModalBase(_PlainModes(np.where(rigid, 0.0, lam), modes, rigid), None, asm)


@dataclass
class _PlainModes:
    """Eigenvalues and full mode vectors of a re-analysed full model (what ModalBase reads)."""

    eigenvalues: np.ndarray
    modes: np.ndarray
    rigid: np.ndarray


def _lowest(K, M, n: int, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """The n lowest eigenpairs of the symmetric pencil (K, M), mass-normalised."""
    size = K.shape[0]
    n = min(n, size)
    if size <= DENSE_LIMIT:
        Kd = K.toarray() if sp.issparse(K) else np.asarray(K)
        Md = M.toarray() if sp.issparse(M) else np.asarray(M)
        return _shifted_eigh(Kd, Md, sigma, "re-analysis", n)
    K, M = sp.csc_matrix(K), sp.csc_matrix(M)
    # a tiny negative shift (as natural_modes): K may be singular (free-free), K - shift M is not
    m = M.diagonal()
    shift = -1e-10 * float(np.max(np.abs(K.diagonal()[m > 0]) / m[m > 0], initial=sigma))
    lam, V = spla.eigsh(K, k=n, M=M, sigma=shift, which="LM", v0=start_vector(K.shape[0]))
    order = np.argsort(lam)
    V = V[:, order]
    V /= np.sqrt(np.einsum("ik,ik->k", V, M @ V))
    return lam[order], V


def _reanalysed_targets(mb: ModalBase, variables: list[DesignVariable], alpha: np.ndarray, idx: np.ndarray,
                        previous: np.ndarray | None = None, jacobian: bool = False):
    """Re-analysed eigenvalues of the target modes at alpha (followed by shape), their Jacobian
    d lambda/d alpha (sensitivity of the re-analysed model) and shapes (n_t, n_dof)."""
    changes = {v: a for v, a in zip(variables, alpha) if a != 0.0}
    n_modes = int(idx.max()) + 4
    if not changes:
        new = mb
    else:
        new = _reanalysed_base(mb, changes, n_modes)
    shapes = _full_modes(new, np.arange(min(new.n, n_modes))).T
    ref = _full_modes(mb, idx).T if previous is None else previous
    pick = _follow(shapes, ref)
    lam = new.eigenvalues[pick]
    if not jacobian:
        return lam, None
    J = np.zeros((idx.size, len(variables)))
    X = new.vectors[:, pick]
    for i, var in enumerate(variables):
        dK, dM = new.reduced_matrices(var)
        J[:, i] = np.einsum("im,im->m", X, dK @ X) - lam * np.einsum("im,im->m", X, dM @ X)
    return lam, J, shapes[pick]
