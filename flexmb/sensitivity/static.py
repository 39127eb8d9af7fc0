"""Sensitivities of static responses and of linearized eigenvalues (issue 33, piece P17).

Statics. At a converged point of a load-control run (:func:`~flexmb.analysis.statics.load_control`)
the equations of :mod:`flexmb.analysis.static_system` hold,
``R(x; p) = [g_free + (C^T lambda)_free ; kappa Phi] = 0`` with ``g = q(u; p) - lam f(u; p)`` and
unknowns ``x = (u_free, lambda / lambda_s)`` (``x = u_free`` without joints). By the implicit-function
theorem, with ``J = dR/dx`` the Newton matrix at the solution (the tangent K_T on the free DOFs
without joints),

    direct:   J dx/dp = -dR/dp,            dF/dp = w . du/dp        (one solve per parameter)
    adjoint:  J^T psi = (w_free, 0),       dF/dp = -psi . dR/dp     (one solve per response)

for linear responses ``F = w . u`` (a DOF's value: w a unit vector; any weights (n_dof,)); the adjoint
solve uses the same factorisation transposed (:meth:`~flexmb.integrators.newton.Factorization.solve`).
``dR/dp`` is exact: every :class:`~flexmb.sensitivity.parameters.TransientParameter` enters ``g``
linearly, so its derivative is the static force of the part of the model p carries (the pieces of
:mod:`flexmb.sensitivity.parameters`): the internal force of a stiffness or spring part at u, and
minus lam times the weight of a mass part (constant mass ``M g``, a cubic mass's weight at u; rotary
inertia has none). Damping kinds have no static force (zero derivative). Drives and prescribed values
do not depend on p, so ``dPhi/dp = 0`` and the prescribed DOFs' derivatives are zero; 3D rotations
are differentiated in spins, as Newton corrects them. :func:`load_scale` is a multiplier on the
external loads at the analysed level (``dR/dp = -lam f(u)``): all stiffness times a and all loads
times s enter only as s/a, so ``sum_stiffness a dF/da = -s dF/ds`` holds exactly on nonlinear paths
(and ``= -F`` where the response is linear in the load).

Linearized eigenvalues. For a simple eigenvalue s of the linearized system
``(s^2 M + s C + K) x = 0`` (:mod:`flexmb.analysis.linearized`, reduced coordinates) with left
eigenvector y (``y^H (s^2 M + s C + K) = 0``),

    ds/dp = -y^H (s^2 dM + s dC + dK) x / y^H (2 s M + C) x,

the quadratic form of the first-order formula ``ds = y^H (dA - s dB) z / y^H B z`` (Fox & Kapoor for
the symmetric case, :mod:`flexmb.cms.sensitivity`). x and y are the right and left singular vectors
of the smallest singular value of ``s^2 M + s C + K`` (dense; up to
:data:`flexmb.analysis.linearized.DENSE_LIMIT` coordinates). The matrix derivatives:

* about a given state (no ``spin``): u, v, a are held fixed (the partial derivative at that state).
  There M, C, K are linear in every parameter (the residual is, and so are its state derivatives
  and the least-squares multipliers), so the central difference of the linearized matrices of
  ``apply(model, p -+ h)`` is their exact derivative for any h (up to round-off; h = ``LINEAR_STEP``
  times p, or an absolute ``LINEAR_STEP`` for a zero baseline).
* about the relative equilibrium of a steady spin: the equilibrium u moves with p, and its change
  (centrifugal stiffening) is included: ``dA/dp = dA/dp|_u + dA/du . du/dp``. The first term is exact
  as above; ``du/dp = -K_r^-1 dr/dp`` is exact (K_r, the relative equilibrium's Jacobian, is the
  linearized stiffness in the rotating frame, with the cubic masses' part by central differences as
  ``linearize`` forms it; dr/dp by linearity); only the matrices' directional
  derivative along du/dp is a *central difference* (the geometric and centrifugal parts: the element
  kernels have no second derivatives), of step ``step`` times p along du/dp (truncation O(step^2);
  step 1e-3 and 1e-4 agree to 6e-12 on a spinning blade). The eigen part stays exact (no eigenvalue
  re-analysis). Models with joints are refused there (the constraint basis would move).

Repeated eigenvalues (another within ``DEGENERATE_RTOL`` of s, conjugates and the real pairs +-sigma
included) have no unique derivative: refused with a ModelError naming the mode.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from flexmb.analysis.linearized import DENSE_LIMIT, linearize, relative_equilibrium, residual, steady_motion
from flexmb.analysis.statics import static_system
from flexmb.assembly import Assembly
from flexmb.checks import ModelError, keywords_listed, methods_keywords_listed, real
from flexmb.cms.sensitivity import DEGENERATE_RTOL
from flexmb.integrators.newton import Factorization
from flexmb.model import Model
from flexmb.results.static_path import StaticPath
from flexmb.sensitivity.parameters import TransientParameter

#: relative step of the matrix differences about a fixed state (exact by linearity for any step)
LINEAR_STEP = 0.5
#: relative step of the matrices' central difference along the relative equilibrium's derivative
SPIN_STEP = 1e-4
#: relative tolerance of the relative equilibrium (du/dp is exact only at an equilibrium)
SPIN_TOLERANCE = 1e-13


@dataclass(eq=False)
class LoadScale:
    """A multiplier s on the external loads at the analysed load level (nodal, follower and
    distributed loads and the weight; prescribed values and user-force groups excluded), baseline
    1, dimensionless; static sensitivities only (module docstring)."""

    name: str = "load scale"
    unit: str = "1"

    def value(self, model: Model) -> float:
        return 1.0


@keywords_listed
def load_scale(name: str = "load scale") -> LoadScale:
    """The :class:`LoadScale` parameter of :func:`static_sensitivity`."""
    return LoadScale(name)


def static_residual_derivative(asm: Assembly, parameter: TransientParameter | LoadScale, u: np.ndarray,
                               load_factor: float) -> np.ndarray:
    """dg/dp (n_dof,) of the static residual ``g = q(u) - lam f(u)`` at the state u (n_dof,) and
    load factor lam, all else fixed: N (N m at rotations) per unit of p (module docstring).
    Prescribed rows hold the reaction's derivative at fixed u."""
    n = asm.n_dof
    if isinstance(parameter, LoadScale):
        return -asm.external_force(load_factor, statics=True, u=u)
    if not isinstance(parameter, TransientParameter):
        raise ModelError(f"static sensitivity: parameters are flexmb.sensitivity parameters or load_scale(), got "
                         f"{parameter!r}")
    gravity = np.zeros(n)
    gravity[asm.dofs.translations()] = asm.model.gravity[None, :]
    g = np.zeros(n)
    for piece in parameter._part(asm):
        ed = piece.ed
        share = np.zeros(ed.shape)                                          # (n_el, ne)
        if piece.stiffness:
            share += piece.group.internal_force(piece.X, u[ed])
        if piece.inertia:
            share -= load_factor * np.einsum("eij,ej->ei", piece.mass, gravity[ed])
            if piece.cubic is not None and np.any(asm.model.gravity):
                share -= load_factor * piece.cubic.gravity_force(u[ed], asm.model.gravity)[0]
        np.add.at(g, ed, share)
    return g


@methods_keywords_listed
@dataclass
class StaticSensitivity:
    """Derivatives of linear static responses ``F = w . u`` at one point of a static path.

    Attributes
    ----------
    parameters : the parameters (n_p).
    load_factor : the path's load factor of the point.
    values : (n_r,) the responses F (their units: m, rad, or the weights' times those).
    gradient : (n_r, n_p) dF/dp, response unit per parameter unit.
    du_dp : (n_dof, n_p) the state's derivative (spins at 3D rotations; zero at prescribed DOFs),
        direct method only (None for the adjoint).
    multipliers_dp : (n_c, n_p) the joint multipliers' derivatives (N per unit p), direct method only.
    baseline : (n_p,) the parameters' values p.
    method : ``"direct"`` or ``"adjoint"``.
    """

    parameters: list
    load_factor: float
    values: np.ndarray
    gradient: np.ndarray
    du_dp: np.ndarray | None
    multipliers_dp: np.ndarray | None
    baseline: np.ndarray
    method: str

    @property
    def normalised(self) -> np.ndarray:
        """(n_r, n_p) ``(p / F) dF/dp`` (dimensionless; 0 where F = 0)."""
        F = self.values[:, None]
        return np.divide(self.baseline[None, :] * self.gradient, F, out=np.zeros(self.gradient.shape),
                         where=F != 0.0)


def _weights(asm: Assembly, responses: Sequence[Any] | None) -> np.ndarray:
    """Response weights (n_r, n_dof): a (node, dof) pair is that DOF's value, an array (n_dof,) a
    linear functional."""
    if responses is None or not len(responses):
        raise ModelError("static_sensitivity: give at least one response ((node, dof) or weights (n_dof,))")
    rows = []
    for k, item in enumerate(responses):
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str):
            w = np.zeros(asm.n_dof)
            w[asm.dofs.index(int(item[0]), item[1])] = 1.0
        else:
            w = np.asarray(item, dtype=float)
            if w.shape != (asm.n_dof,) or not np.all(np.isfinite(w)):
                raise ModelError(f"static_sensitivity: response {k} must be (node, dof) or {asm.n_dof} finite "
                                 f"weights, got {item!r}")
        rows.append(w)
    return np.array(rows)


def _point(path: StaticPath, load_factor: float | None) -> int:
    """Index of the computed point of ``path`` at ``load_factor`` (default the last)."""
    if not isinstance(path, StaticPath) or not path.n_steps:
        raise ModelError(f"static_sensitivity: need a StaticPath with converged points (load_control's result), "
                         f"got {path!r}")
    lams = np.asarray(path.load_factors)
    if load_factor is None:
        return lams.size - 1
    target = real(load_factor, "static_sensitivity: load_factor")
    tol = StaticPath.AT_TOLERANCE * max(float(np.abs(lams).max()), 1.0)
    hits = np.flatnonzero(np.abs(lams - target) <= tol)
    if not hits.size:
        raise ModelError(f"static_sensitivity: load factor {target:g} is not a computed point of the path "
                         f"(points {', '.join(f'{x:g}' for x in lams)}); derivatives need a converged state")
    return int(hits[0])


@keywords_listed
def static_sensitivity(model: Model | Assembly, path: StaticPath, parameters: Sequence[Any],
                       responses: Sequence[Any], load_factor: float | None = None, method: str = "direct",
                       t: float = 0.0) -> StaticSensitivity:
    """dF/dp of linear responses at a converged point of a load-control run (module docstring).

    Parameters
    ----------
    model : the model (or its Assembly) the path was computed on.
    path : :func:`~flexmb.analysis.statics.load_control`'s StaticPath.
    parameters : :mod:`flexmb.sensitivity.parameters` parameters and :func:`load_scale`.
    responses : each ``(node, dof)`` (that DOF's value) or weights w (n_dof,) of ``F = w . u``.
    load_factor : the computed point's load factor (default the path's last point).
    method : ``"direct"`` (a solve per parameter) or ``"adjoint"`` (a transposed solve per response).
    t : the time at which drives were held in the run (s).
    """
    asm = model if isinstance(model, Assembly) else Assembly(model)
    if method not in ("direct", "adjoint"):
        raise ModelError(f"static_sensitivity: method must be 'direct' or 'adjoint', got {method!r}")
    parameters = list(parameters)
    if not parameters:
        raise ModelError("static_sensitivity: no parameters given")
    W = _weights(asm, responses)                                        # (n_r, n_dof)
    k = _point(path, load_factor)
    lam, u = float(path.load_factors[k]), np.array(path.u[k], dtype=float)
    if u.shape != (asm.n_dof,):
        raise ModelError(f"static_sensitivity: the path's states have {u.size} DOFs, the model {asm.n_dof}")
    system = static_system(asm, t)
    system.load = lam
    multipliers = np.asarray(path.multipliers[k], dtype=float) if system.n_c else None
    x = system.start(u, multipliers)
    J = system.matrix(x)
    try:
        lu = Factorization(J)
    except RuntimeError:
        lu = None
    if lu is None or lu.is_singular():
        raise ModelError(f"static_sensitivity: the tangent at load factor {lam:g} is singular (a limit or "
                         "bifurcation point, or a free motion): the static response has no derivative there")
    free, nf = asm.dofs.free, system.nf
    dR = np.zeros((system.n, len(parameters)))                          # (n, n_p), zero constraint rows
    for j, par in enumerate(parameters):
        dR[:nf, j] = static_residual_derivative(asm, par, u, lam)[free]
    values = W @ u
    du_dp = dlam_dp = None
    if method == "direct":
        dx = -lu.solve(dR)                                              # (n, n_p)
        du_dp = np.zeros((asm.n_dof, len(parameters)))
        du_dp[free] = dx[:nf]
        dlam_dp = dx[nf:] * (system.lam_scale or 1.0)
        gradient = W @ du_dp
    else:
        rhs = np.zeros((system.n, W.shape[0]))
        rhs[:nf] = W[:, free].T
        psi = lu.solve(rhs, transpose=True)                             # (n, n_r)
        gradient = -psi.T @ dR
    baseline = np.array([p.value(asm.model) for p in parameters])
    return StaticSensitivity(parameters, lam, values, gradient, du_dp, dlam_dp, baseline, method)


# ------------------------------------------------------------------ linearized eigenvalues
@methods_keywords_listed
@dataclass
class EigenSensitivity:
    """Derivatives of simple eigenvalues of a linearized (moving) system.

    Attributes
    ----------
    parameters : the parameters (n_p).
    modes : (n_m,) indices into the :class:`~flexmb.analysis.linearized.LinearModes` order.
    eigenvalues : (n_m,) s, complex, 1/s.
    derivatives : (n_m, n_p) ds/dp, complex, 1/s per unit of p.
    baseline : (n_p,) the parameters' values.
    matrices : how dM, dC, dK were formed (module docstring): exact at a fixed state, or with spin
        the state's change along du/dp by central differences (the text names the step).
    """

    parameters: list
    modes: np.ndarray
    eigenvalues: np.ndarray
    derivatives: np.ndarray
    baseline: np.ndarray
    matrices: str

    @property
    def omega_derivatives(self) -> np.ndarray:
        """(n_m, n_p) d ``|Im s|`` /dp, rad/s per unit of p."""
        return np.sign(self.eigenvalues.imag)[:, None] * self.derivatives.imag

    @property
    def normalised(self) -> np.ndarray:
        """(n_m, n_p) ``(p / s) ds/dp`` (complex, dimensionless)."""
        return self.baseline[None, :] * self.derivatives / self.eigenvalues[:, None]


def _dense(X: Any) -> np.ndarray:
    return X if isinstance(X, np.ndarray) else X.toarray()


def _matrices(model: Model, u, v, a, t: float, spin: Any, check: bool) -> tuple[Any, np.ndarray]:
    """The linearized system of ``model`` about (u, v, a), or about u in the frame of ``spin``, and
    its dense (M, C, K) stacked (3, n_red, n_red)."""
    if spin is not None:
        lin = linearize(model, u=u, t=t, spin=spin, check_equilibrium=check)
    else:
        lin = linearize(model, u=u, v=v, a=a, t=t, check_equilibrium=check)
    return lin, np.array([_dense(lin.M), _dense(lin.C), _dense(lin.K)])


def _steady_residual(model: Model, lin: Any) -> np.ndarray:
    """The relative-equilibrium residual (n_free,) of ``model`` at the state and spin of ``lin``."""
    asm = Assembly(model)
    v, a = steady_motion(asm, lin.u, lin.spin)
    return residual(asm, lin.u, v, a)[asm.dofs.free]


@keywords_listed
def linearized_eigen_sensitivity(model: Model, parameters: Sequence[TransientParameter],
                                 modes: int | Sequence[int] | None = None, u: np.ndarray | None = None,
                                 v: np.ndarray | None = None, a: np.ndarray | None = None, t: float = 0.0,
                                 spin: Any = None, step: float = SPIN_STEP,
                                 check_equilibrium: bool = True) -> EigenSensitivity:
    """ds/dp of simple eigenvalues of :func:`~flexmb.analysis.linearized.linearize` (module docstring).

    Parameters
    ----------
    model : the model (parameters' ``apply`` makes the perturbed copies).
    parameters : :mod:`flexmb.sensitivity.parameters` parameters.
    modes : indices into the LinearModes order (default all modes).
    u, v, a, t, check_equilibrium : the state about which to linearize (as ``linearize``; held fixed).
    spin : (axis, speed, centre): linearize about the relative equilibrium of the steady spin, solved
        from u and again for every perturbed model.
    step : relative step (of p) of the matrices' central difference along du/dp with ``spin``.
    """
    if not isinstance(model, Model):
        raise ModelError(f"linearized_eigen_sensitivity: need a flexmb.Model (the parameters copy it), got "
                         f"{type(model).__name__}")
    parameters = list(parameters)
    if not parameters or not all(isinstance(p, TransientParameter) for p in parameters):
        raise ModelError("linearized_eigen_sensitivity: give flexmb.sensitivity parameters (one or more)")
    step = real(step, "linearized_eigen_sensitivity: step", 0.0, low_open=True)
    if spin is not None and (model.joints or model.ties):
        raise ModelError("linearized_eigen_sensitivity: with spin and joints the constraint basis moves with the "
                         "re-solved equilibrium; linearize about a given state instead")
    if spin is not None:
        u = relative_equilibrium(model, spin, u0=u, t=t, tolerance=SPIN_TOLERANCE)
    lin, base = _matrices(model, u, v, a, t, spin, check_equilibrium)
    M, C, K = base
    n = M.shape[0]
    if n > DENSE_LIMIT:
        raise ModelError(f"linearized_eigen_sensitivity: {n} reduced coordinates; the dense left/right vectors are "
                         f"for up to {DENSE_LIMIT}")
    spectrum = lin.eigen()
    s_all = spectrum.eigenvalues
    idx = np.arange(s_all.size) if modes is None else np.atleast_1d(np.asarray(modes))
    if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer) or np.any((idx < 0) | (idx >= s_all.size)):
        raise ModelError(f"linearized_eigen_sensitivity: modes must be indices 0..{s_all.size - 1}, got {modes!r}")
    every = np.concatenate([s_all, s_all.conj(), -s_all[np.abs(s_all.imag) == 0.0]])
    for i in idx:
        s = s_all[i]
        near = np.abs(every - s) <= DEGENERATE_RTOL * max(abs(s), spectrum.scale * 1e-12)
        # s itself, and a real s once more as its own conjugate
        if np.count_nonzero(near) > (1 if s.imag else 2):
            raise ModelError(f"linearized_eigen_sensitivity: mode {int(i)} (s = {s:.6g}) is a repeated eigenvalue; "
                             "its derivative is not unique")
    dQ = np.zeros((len(parameters), 3, n, n))                          # (n_p, M C K, n, n)
    free = lin.assembly.dofs.free
    for j, par in enumerate(parameters):
        p = par.value(model)
        h = LINEAR_STEP * (abs(p) if p else 1.0)
        up, down = par.apply(model, p + h), par.apply(model, p - h)
        # at the fixed state the matrices are linear in p: the difference is exact for any h
        dQ[j] = (_matrices(up, lin.u, v, a, t, spin, False)[1] - _matrices(down, lin.u, v, a, t, spin, False)[1]) \
            / (2.0 * h)
        if spin is None:
            continue
        # the relative equilibrium moves with p: K_r du/dp = -dr/dp (dr/dp exact by linearity), and the
        # matrices' change along du/dp by central differences of step eps in p
        dr = (_steady_residual(up, lin) - _steady_residual(down, lin)) / (2.0 * h)     # (n_free,)
        du = np.zeros(lin.assembly.n_dof)
        du[free] = -np.linalg.solve(K, dr)
        eps = step * (abs(p) if p else 1.0)
        plus = _matrices(model, lin.assembly.update(lin.u, eps * du), None, None, t, spin, False)[1]
        minus = _matrices(model, lin.assembly.update(lin.u, -eps * du), None, None, t, spin, False)[1]
        dQ[j] += (plus - minus) / (2.0 * eps)
    derivatives = np.zeros((idx.size, len(parameters)), dtype=complex)
    for r, i in enumerate(idx):
        s = s_all[i]
        U, _, Vh = np.linalg.svd(s * s * M + s * C + K)
        y, x = U[:, -1], Vh[-1].conj()                                  # left and right null vectors
        denominator = y.conj() @ ((2.0 * s * M + C) @ x)
        for j in range(len(parameters)):
            dM, dC, dK = dQ[j]
            derivatives[r, j] = -(y.conj() @ ((s * s * dM + s * dC + dK) @ x)) / denominator
    label = ("exact (linear at a fixed state)" if spin is None else "exact at the state, plus the state's change "
             f"du/dp (exact) times the matrices' derivative along it by central differences (relative step {step:g})")
    baseline = np.array([p.value(model) for p in parameters])
    return EigenSensitivity(parameters, idx, s_all[idx], derivatives, baseline, label)
