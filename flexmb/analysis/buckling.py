"""Linear buckling: critical load factors and modes from the geometric stiffness.

About a pre-loaded equilibrium state u_p at load factor lam_p (default: the unloaded reference
state), the reference load f_ref (the loads of the model at load factor 1) causes the stress
increment s_ref, obtained from the linear response du = K_t(u_p)^-1 f_ref. Buckling is the
generalized eigenproblem

    (K_t(u_p) + mu (K_g(u_p; s_ref) - K_L,ref)) phi = 0,     lam_cr = lam_p + mu,

with K_t the tangent at u_p (material + geometric + load stiffness), K_g the part of the tangent
linear in the stresses (:meth:`~flexmb.elements.base.ElementGroup.geometric_stiffness`) and
K_L,ref the stiffness of the reference follower/semi-tangential loads. About the reference state
this is the classical ``(K_0 + lam K_g) phi = 0``. The matrices are not symmetrised: the
general eigenproblem is solved (dense LAPACK for up to ``dense_limit`` free DOFs, otherwise
ARPACK in shift-invert form on the sparse LU of K_t). A tangent singular at the pre-load state,
exactly or to round-off (:class:`~flexmb.integrators.newton.Factorization`), raises a
:class:`~flexmb.analysis.diagnostics.SingularSystemError` naming the nodes and DOFs that move
freely (no supports, a mechanism).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.linalg as sla
import scipy.sparse.linalg as spla

from flexmb.analysis.arpack import start_vector
from flexmb.analysis.diagnostics import statics_error
from flexmb.assembly import Assembly
from flexmb.checks import check_linear_buckling, deprecated_alias, keywords_listed, methods_keywords_listed
from flexmb.integrators.newton import Factorization
from flexmb.model import Model, ModelError
from flexmb.multibody.initial import refuse_joints
from flexmb.results import ModelLayout, ModeShapes


@methods_keywords_listed
@dataclass
class BucklingResult:
    """Critical load factors ``load_factors`` (n,), ascending, positive ones only, and mode shapes
    ``modes`` (n, n_dof), about the pre-loaded state ``u_pre`` (n_dof,) at load factor ``load_factor``."""

    load_factors: np.ndarray
    modes: np.ndarray
    load_factor: float
    u_pre: np.ndarray
    layout: ModelLayout | None = None

    load_factor_pre = deprecated_alias("load_factor", "BucklingResult.load_factor_pre")

    @property
    def critical(self) -> float:
        """Lowest positive critical load factor, ``inf`` if the model does not buckle."""
        return float(self.load_factors[0]) if self.load_factors.size else np.inf

    def mode_shapes(self) -> ModeShapes:
        """The modes as a :class:`~flexmb.results.ModeShapes` result (for plots, renders, files)."""
        return ModeShapes.from_modes(self.layout, self.load_factors, self.modes, self.u_pre,
                                     "critical load factor")

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the modes to a result file (HDF5, kind "modes"); an existing file only with ``overwrite``."""
        return self.mode_shapes().save(path, overwrite)


@keywords_listed(renamed={"load_factor_pre": "load_factor"})
def linear_buckling(model: Model | Assembly, n_modes: int = 4, u_pre: np.ndarray | None = None,
                    load_factor: float = 0.0, dense_limit: int = 3000) -> BucklingResult:
    """Critical load factors of the model's loads (see the module docstring).

    Parameters
    ----------
    u_pre, load_factor : pre-loaded equilibrium state (n_dof,) and its load factor, e.g. from
        :func:`~flexmb.analysis.statics.load_control`; default the unloaded reference state.
    n_modes : number of positive critical load factors to return (fewer if fewer exist).
    """
    asm = model if isinstance(model, Assembly) else Assembly(model)
    check_linear_buckling(asm, n_modes, u_pre, load_factor, dense_limit)
    refuse_joints(asm, "linear_buckling")
    free = asm.dofs.free
    lam_p = float(load_factor)
    u_p = np.zeros(asm.n_dof) if u_pre is None else np.array(u_pre, dtype=float)
    _, kt_data, _ = asm.static_residual(u_p, lam_p)
    Kt = asm.free_matrix(kt_data)
    f_ref = asm.external_force(lam_p + 1.0, statics=True, u=u_p) - asm.external_force(lam_p, statics=True, u=u_p)
    if not np.any(f_ref[free]):
        raise ModelError("linear_buckling: the model has no load on its free DOFs")
    try:
        lu = Factorization(Kt)
        singular = lu.is_singular()
    except RuntimeError:                                 # SuperLU: "Factor is exactly singular"
        singular = True
    if singular:                                        # a rigid-body or mechanism mode
        raise statics_error(asm, Kt, "linear buckling", lam_p, u_p, "the pre-load state")
    du = np.zeros(asm.n_dof)
    du[free] = lu.solve(f_ref[free])
    # stress increment of the reference load by a central difference of a tiny linear response
    # (error ~ s^2): exact enough and it needs no linearized stress kernels
    trans = asm.dofs.translations().ravel()
    rot = np.setdiff1d(np.arange(asm.n_dof), trans)
    size = max(np.abs(du[trans]).max() / asm.model.characteristic_length,
               np.abs(du[rot]).max() if rot.size else 0.0)
    s = 1e-5 / size
    plus, minus = asm.stresses(asm.update(u_p, s * du)), asm.stresses(asm.update(u_p, -s * du))
    s_ref = [(a - b) / (2.0 * s) for a, b in zip(plus, minus)]
    kg_data = asm.geometric_stiffness_data(u_p, s_ref)
    if asm.configuration_loads:
        kg_data = kg_data - (asm.load_stiffness_data(u_p, lam_p + 1.0, statics=True)
                             - asm.load_stiffness_data(u_p, lam_p, statics=True))
    Kg = asm.free_matrix(kg_data)
    # geometric stiffness a reference load acting over the model's size would cause (N/m)
    kg_scale = max(spla.norm(Kg), np.linalg.norm(f_ref[free]) / asm.model.characteristic_length)
    mu, phi = _positive_eigenpairs(Kt, Kg, lu, n_modes, dense_limit, kg_scale)
    modes = np.zeros((mu.size, asm.n_dof))
    modes[:, free] = phi.T
    if mu.size:
        modes /= np.abs(modes).max(axis=1, keepdims=True)
    return BucklingResult(lam_p + mu, modes, lam_p, u_p, ModelLayout.from_assembly(asm))


def _positive_eigenpairs(Kt, Kg, lu, n_modes: int, dense_limit: int, kg_scale: float
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Smallest positive real mu with (Kt + mu Kg) phi = 0, ascending, and phi (n_free, k)."""
    n = Kt.shape[0]
    if n <= dense_limit:
        # nu = 1/mu: Kg phi = nu (-Kt) phi; the largest positive nu give the smallest mu > 0
        nu, vec = sla.eig(Kg.toarray(), -Kt.toarray())
    else:
        op = spla.LinearOperator((n, n), matvec=lambda x: -lu.solve(Kg @ x), dtype=float)
        nu, vec = spla.eigs(op, k=min(max(2 * n_modes, 6), n - 2), which="LR", v0=start_vector(n))
    # nu below 1e-6 kg_scale / |Kt| would be a load a million times beyond where the geometric
    # stiffness matters at all: round-off of a structure that does not buckle (Meijaard's "infinite")
    floor = 1e-6 * kg_scale / spla.norm(Kt)
    ok = np.isfinite(nu) & (np.abs(nu.imag) <= 1e-8 * np.abs(nu).max(initial=1e-300)) & (nu.real > floor)
    nu, vec = nu.real[ok], vec[:, ok].real
    order = np.argsort(-nu)[:n_modes]                                  # largest nu = smallest mu
    return 1.0 / nu[order], vec[:, order]
