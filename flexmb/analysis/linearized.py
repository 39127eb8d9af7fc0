"""Linearized equations of motion about a (moving) state, their eigenvalues, Campbell diagrams.

About a state (u, v, a) with joint multipliers lambda, the continuous-time residual

    r(u, v, a, lambda, t) = M a + g(u, v, a) + q(u) - f(t, u) + G(u)^T lambda,      Phi(u, t) = 0,

(M the constant mass; g the rigid-body terms ``J_s w' + w x J_s w`` of rotating 3D nodes and bodies,
J_s = R J R^T with the spatial angular velocity w, and the Lagrange inertia of configuration-dependent
masses, :meth:`~flexmb.assembly.Assembly.end_point_inertia`) is linearized to

    M_l dq'' + C_l dq' + K_l dq = 0,        G dq = 0,

on the free DOFs. The partial derivatives are M_a = dr/da (:meth:`~flexmb.assembly.Assembly.mass_data_at`),
C_v = dr/dv (``skew(w) J_s - skew(J_s w)`` at rotating nodes) and K_u = dr/du: the elements' tangent
(material and geometric stiffness of the stresses at u), the stiffness of configuration-dependent loads,
the multipliers' term ``sum_i lambda_i d2Phi_i/du2`` and the configuration dependence of J_s (the
configuration-dependent masses' C_v and K_u by central differences). Spatial rotations are perturbed by
spins, ``R = exp(hat(dtheta)) R_0`` (as Newton's corrections); the angular velocity then follows the spin
rate as ``dw = dtheta' - w_0 x dtheta`` (from R' R^T = hat(w)), so with A = -hat(w_0) on the rotation
DOFs (0 elsewhere)

    M_l = M_a,    C_l = C_v + M_a A,    K_l = K_u + C_v A + M_a A',     A' = -hat(w_0').

Steady rotation (``spin = (axis, Omega, centre)``). In the frame rotating at Omega about the axis
through the centre the relative equilibrium is at rest; inertial and rotating perturbations agree at
the instant the frames coincide and differ in their rates by W (block-diagonal hat(Omega) on
translations and spins, zero on planar rotations): dq' = dq_r' + W dq_r, dq'' = dq_r'' + 2 W dq_r' +
W^2 dq_r. Hence (the non-symmetric eigenproblem of moving systems: Doan, Geradin & Kill; Li & Gontier;
references README, Wave 2 B)

    M_r = M_l,    C_r = C_l + 2 M_l W,    K_r = K_l + C_l W + M_l W^2,

with M_l, C_l, K_l taken about the steady motion u_0, v_0 = W (x_0 - c) (translations; Omega at the
rotation DOFs), a_0 = W^2 (x_0 - c). The matrices are time-invariant when the model is invariant under
the rotation (isotropic masses; gravity along the axis or none). Driven joints at constant speed are
fixed constraints in that frame, and so are fixed and prescribed DOFs (supports turn with the frame, as
if on a hub driven at Omega: they must be invariant under the rotation, and gravity must be along the
axis, else ModelError). C_r is gyroscopic (skew part), K_r holds the centrifugal softening and the
stiffening of the centrifugal stresses (the geometric stiffness at the relative equilibrium, which
:func:`relative_equilibrium` computes; co-rotational beams need ``second_order=True`` for the
stress-stiffening of bending: a planar cantilever's lead-lag Southwell coefficient comes out as
0.1933 with it and about 0.15-0.19 without); neither is symmetrised.

Constraint elimination: B an orthonormal basis of the null space of G on the free DOFs,
dq = B x, ``B^T M B x'' + B^T C B x' + B^T K B x = 0``. Multipliers not given come from the equilibrium
equations (least squares on G^T lambda = -r).

Eigenvalues: the quadratic problem in first-order form, ``[[I, 0], [0, M]] z' = [[0, I], [-K, -C]] z``
with z = (x, x'), by dense LAPACK (QZ) up to DENSE_LIMIT coordinates, above by ARPACK in shift-invert mode
(sparse LU of A - sigma B). Without joints the matrices stay sparse on the free DOFs; joints are eliminated
with a dense null-space basis (as in :mod:`flexmb.analysis.modes`), for up to a few thousand free DOFs.
Configuration-dependent (cubic) masses are differentiated column by column (2 n_free evaluations each for
C and K), fine for the small planar models that use them. Infinite eigenvalues of massless DOFs are
dropped; of each conjugate pair the one with Im s > 0 is kept, and of the real eigenvalues the larger half (a
divergence pair +-sigma keeps +sigma, so the kept set has the largest real part of the whole
spectrum). A mode is stable if Re s <= STABLE_TOL * max|s|.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexmb.analysis.arpack import start_vector
from flexmb.assembly import Assembly
from flexmb.checks import (_check_assembly, _state_vector, deprecated_alias, direction, integer, is_real,
                            keywords_listed, methods_keywords_listed, real)
from flexmb.model import Model, ModelError
from flexmb.rotations import skew

if TYPE_CHECKING:
    from flexmb.analysis.state_space import StateSpaceModel

#: a mode is stable if Re s <= STABLE_TOL * max|s| (round-off of a conservative system's zero real parts)
STABLE_TOL = 1e-8
#: an eigenvalue is real if |Im s| <= REAL_TOL * max|s|
REAL_TOL = 1e-9
#: |s| above INFINITE times the bound of the finite ones (LinearizedSystem.eigen) is the infinite eigenvalue
#: of a massless DOF
INFINITE = 1e6
#: above this many reduced coordinates LinearizedSystem.eigen uses sparse shift-invert (ARPACK)
DENSE_LIMIT = 400
#: shift of the sparse solver, -SHIFT times the bound of |s| (a singular K factorises)
SHIFT = 1e-4
#: equilibrium residual (relative to the force scale) accepted as round-off
EQUILIBRIUM_TOL = 1e-7


def _assembly(model: Model | Assembly, what: str) -> Assembly:
    if isinstance(model, Model):
        return Assembly(model)
    if not isinstance(model, Assembly):
        raise ModelError(f"{what}: need a flexmb.Model or Assembly, got {type(model).__name__}")
    _check_assembly(model, what)
    return model


@dataclass(frozen=True)
class Spin:
    """Steady rotation at ``speed`` (rad/s) about ``axis`` (unit (3,); (0, 0, 1) in 2D) through ``centre`` (dim,)."""

    axis: np.ndarray
    speed: float
    centre: np.ndarray

    @property
    def omega(self) -> np.ndarray:
        """Angular velocity vector (3,), rad/s."""
        return self.speed * self.axis


def _spin(asm: Assembly, spin: Any, what: str) -> Spin | None:
    """Check ``spin = (axis, speed, centre)`` (centre optional, default the origin; 2D: axis None = e_z)."""
    if spin is None:
        return None
    if isinstance(spin, Spin):
        return spin
    dim = asm.model.dim
    if not isinstance(spin, (tuple, list)) or len(spin) not in (2, 3):
        raise ModelError(f"{what}: spin must be (axis, speed) or (axis, speed, centre), got {spin!r}")
    axis, speed = spin[0], real(spin[1], f"{what}: spin speed")
    if dim == 2 and axis is None:
        axis = np.array([0.0, 0.0, 1.0])
    elif axis is None:
        raise ModelError(f"{what}: a 3D model needs the spin axis (3,), got None")
    else:
        axis = direction(axis, f"{what}: spin axis", 3)
        axis = axis / np.linalg.norm(axis)
        if dim == 2 and (axis[0] or axis[1]):
            raise ModelError(f"{what}: a 2D model spins about the out-of-plane axis; pass axis None (or "
                             f"(0, 0, +-1)), got {spin[0]!r}")
    centre = np.zeros(dim) if len(spin) == 2 or spin[2] is None else np.asarray(spin[2], dtype=float)
    if centre.shape != (dim,) or not np.all(np.isfinite(centre)):
        raise ModelError(f"{what}: spin centre must be {dim} finite numbers, got {spin[2]!r}")
    return Spin(axis, speed, centre)


def _blocks(asm: Assembly, dofs: np.ndarray, blocks: np.ndarray) -> sp.csr_matrix:
    """Block-diagonal matrix (n_dof, n_dof) with ``blocks`` (k, m, m) at the DOF sets ``dofs`` (k, m)."""
    rows = np.broadcast_to(dofs[:, :, None], blocks.shape).ravel()
    cols = np.broadcast_to(dofs[:, None, :], blocks.shape).ravel()
    return sp.csr_matrix((blocks.ravel(), (rows, cols)), shape=(asm.n_dof, asm.n_dof))


def _free(asm: Assembly, X: sp.spmatrix) -> sp.csc_matrix:
    """The free-free block (n_free, n_free) of X (n_dof, n_dof)."""
    free = asm.dofs.free
    return X.tocsr()[free][:, free].tocsc()


def _frame_rate(asm: Assembly, spin: Spin) -> sp.csr_matrix:
    """W (n_dof, n_dof): hat(Omega) on every node's translations and on 3D spins; 0 on planar rotations."""
    dim = asm.model.dim
    t = asm.dofs.translations()                                         # (n_nodes, dim)
    Om = np.broadcast_to(skew(spin.omega)[:dim, :dim], (t.shape[0], dim, dim))
    W = _blocks(asm, t, Om)
    if dim == 3 and asm.rotation_dofs.size:
        rd = asm.rotation_dofs
        W = W + _blocks(asm, rd, np.broadcast_to(skew(spin.omega), (rd.shape[0], 3, 3)))
    return W


def steady_motion(asm: Assembly, u: np.ndarray, spin: Spin) -> tuple[np.ndarray, np.ndarray]:
    """Velocity and acceleration (n_dof,) of the steady rotation through u: translations
    W (x - c) and W^2 (x - c) with x = X + u; Omega at 3D rotation DOFs (spatial angular velocity)
    and at planar rotation DOFs. Fixed and prescribed DOFs too: they are at rest in the rotating frame
    (supports turn with it, as on a hub driven at Omega), so a body whose frame node's angle is
    prescribed (a modal body on a driven hub) turns at Omega."""
    dim = asm.model.dim
    x = asm.positions(u) - spin.centre                                  # (n_nodes, dim)
    Om = skew(spin.omega)[:dim, :dim]
    v, a = np.zeros(asm.n_dof), np.zeros(asm.n_dof)
    t = asm.dofs.translations()                                         # (n_nodes, dim)
    v[t] = x @ Om.T
    a[t] = x @ (Om @ Om).T
    if dim == 3:
        v[asm.rotation_dofs] = spin.omega
    else:
        rot = asm.dofs.first[asm.dofs.has_rotations] + 2
        v[rot] = spin.speed
    return v, a


def residual(asm: Assembly, u: np.ndarray, v: np.ndarray, a: np.ndarray, t: float = 0.0,
             lam: np.ndarray | None = None) -> np.ndarray:
    """Continuous-time residual r(u, v, a, lambda, t) (n_dof,) of the module docstring, N and N m."""
    asm.set_time(t)
    r = asm.mass_times(a) + _inertia_terms(asm, u, v, a) + asm.internal_force(u) - asm.external_force(t, u=u)
    if asm.constraints is not None and lam is not None:
        r = r + asm.constraints.evaluate(u, t, lam).force
    if asm.damped_groups:
        r = r + asm.damping_force(u, v)
    return r


def _inertia_terms(asm: Assembly, u: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Configuration-dependent inertia (n_dof,): J_s w' + w x J_s w at rotating 3D nodes and the
    Lagrange inertia of configuration-dependent masses."""
    g = np.zeros(asm.n_dof)
    rd = asm.rotation_dofs
    if rd.size and np.any(asm.rotary_inertia):
        Js = asm.spatial_inertia(u)                                     # (n_r, 3, 3)
        w, dw = v[rd], a[rd]                                            # (n_r, 3)
        g[rd] = np.einsum("nij,nj->ni", Js, dw) + np.cross(w, np.einsum("nij,nj->ni", Js, w))
    if asm.configuration_masses:
        g += asm.end_point_inertia(u, v, a)[0]
    return g


def partials(asm: Assembly, u: np.ndarray, v: np.ndarray, a: np.ndarray, t: float = 0.0,
             lam: np.ndarray | None = None) -> tuple[sp.csc_matrix, sp.csc_matrix, sp.csc_matrix]:
    """dr/da, dr/dv, dr/du of :func:`residual` on the free DOFs (sparse (n_free, n_free)); u perturbed by
    spins at 3D rotations (:meth:`~flexmb.assembly.Assembly.update`)."""
    free = asm.dofs.free
    asm.set_time(t)
    _, k_data = asm.force_and_tangent(u)
    if asm.configuration_loads:
        k_data = k_data - asm.load_stiffness_data(u, t)
    c_data = np.zeros(asm.nnz)
    if asm.damped_groups:
        # damping forces (dampers, Rayleigh): dr/du at fixed v, and dr/dv as the difference of their
        # tangents along dv = 1 du and dv = 0
        at_fixed_v, along_v = np.zeros(asm.nnz), np.zeros(asm.nnz)
        asm.damping_force(u, v, 0.0, at_fixed_v)
        asm.damping_force(u, v, 1.0, along_v)
        k_data = k_data + at_fixed_v
        c_data += along_v - at_fixed_v
    rd = asm.rotation_dofs
    if rd.size and np.any(asm.rotary_inertia):
        J = asm.spatial_inertia(u)                                      # (n_r, 3, 3)
        w, dw = v[rd], a[rd]                                            # (n_r, 3)
        Jw, Jdw = np.einsum("nij,nj->ni", J, w), np.einsum("nij,nj->ni", J, dw)
        c_data += asm.rotary_block_data(skew(w) @ J - skew(Jw))         # d(w x J w)/dw
        # d(J_s x)/dtheta = -hat(J_s x) + J_s hat(x) for J_s = E J_s E^T, E = exp(hat(dtheta))
        k_data = k_data + asm.rotary_block_data(-skew(Jdw) + J @ skew(dw) + skew(w) @ (-skew(Jw) + J @ skew(w)))
    Ma, Cv, Ku = asm.free_matrix(asm.mass_data_at(u)), asm.free_matrix(c_data), asm.free_matrix(k_data)
    if asm.configuration_masses:
        # the Lagrange inertia of cubic masses: its v- and u-derivatives by central differences
        # (quadratic in v: the v-difference is exact to round-off)
        Cv = Cv + sp.csc_matrix(_central(lambda dv: asm.end_point_inertia(u, v + dv, a)[0], asm.n_dof, free, 1e-6))
        Ku = Ku + sp.csc_matrix(_central(lambda du: asm.end_point_inertia(asm.update(u, du), v, a)[0], asm.n_dof,
                                         free, 1e-7))
    if asm.constraints is not None and lam is not None and lam.size:
        Ku = Ku + _free(asm, asm.constraints.evaluate(u, t, lam).K)
    return Ma.tocsc(), Cv.tocsc(), Ku.tocsc()


def _central(fun: Callable[[np.ndarray], np.ndarray], n: int, cols: np.ndarray, h: float) -> np.ndarray:
    """Central-difference Jacobian (n_free, n_free) of fun (n,) -> (n,) at 0 on the DOFs ``cols``."""
    out = np.zeros((cols.size, cols.size))
    for k, j in enumerate(cols):
        e = np.zeros(n)
        e[j] = h
        out[:, k] = ((fun(e) - fun(-e)) / (2.0 * h))[cols]
    return out


@methods_keywords_listed
@dataclass
class LinearModes:
    """Eigen-solution of a :class:`LinearizedSystem`, one eigenvalue per mode (see the module docstring).

    eigenvalues : s (n,) complex, 1/s, sorted by ``|Im s|`` then Re s, Im s >= 0.
    shapes : (n_dof, n) complex full-DOF shapes, largest entry 1 (real).
    reduced_shapes : (n_red, n) the same on the reduced coordinates.
    """

    eigenvalues: np.ndarray
    shapes: np.ndarray
    reduced_shapes: np.ndarray
    scale: float

    @property
    def omega(self) -> np.ndarray:
        """Damped angular frequencies ``|Im s|`` (n,), rad/s."""
        return np.abs(self.eigenvalues.imag)

    @property
    def frequencies_hz(self) -> np.ndarray:
        """Damped frequencies ``|Im s|`` / (2 pi) (n,), Hz."""
        return self.omega / (2.0 * np.pi)

    damped_frequencies = deprecated_alias("omega", "LinearModes.damped_frequencies")

    @property
    def real_parts(self) -> np.ndarray:
        """Re s (n,), 1/s (positive: growing)."""
        return self.eigenvalues.real

    @property
    def damping_ratios(self) -> np.ndarray:
        """-Re s / ``|s|`` (n,) (0 for s = 0)."""
        mag = np.abs(self.eigenvalues)
        return np.divide(-self.eigenvalues.real, mag, out=np.zeros(mag.shape), where=mag > 0)

    @property
    def stable(self) -> np.ndarray:
        """Per mode (n,): Re s <= STABLE_TOL * ``max|s|`` over the whole spectrum."""
        return self.eigenvalues.real <= STABLE_TOL * self.scale

    @property
    def is_stable(self) -> bool:
        """Every mode stable (a divergence or flutter anywhere makes it False)."""
        return bool(np.all(self.stable))


@methods_keywords_listed
@dataclass
class LinearizedSystem:
    """M x'' + C x' + K x = 0 on the reduced coordinates x ((n_red, n_red) each: sparse csc on the free DOFs
    without joints, dense on the constraint null space with them), dq = basis x.

    basis : (n_dof, n_red) reduced -> full DOFs (sparse selection of the free DOFs, or dense with joints).
    u, v, a : the state linearized about (n_dof,); multipliers : its joint multipliers (n_c,); spin : the
    rotating frame or None; assembly : the model's Assembly (names the DOFs of :meth:`state_space`).
    """

    M: np.ndarray
    C: np.ndarray
    K: np.ndarray
    basis: np.ndarray
    u: np.ndarray | None = None
    v: np.ndarray | None = None
    a: np.ndarray | None = None
    multipliers: np.ndarray = field(default_factory=lambda: np.zeros(0))
    spin: Spin | None = None
    assembly: Assembly | None = field(default=None, repr=False)

    lam = deprecated_alias("multipliers", "LinearizedSystem.lam")

    def state_space(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> StateSpaceModel:
        """First-order model z' = A z + B w, y = C z + D w, z = (x, x'), for named inputs (forces and
        moments on node DOFs or rigid bodies) and outputs (node DOF displacements, velocities,
        accelerations; sensors): :class:`~flexmb.analysis.state_space.StateSpaceModel`, see
        :func:`flexmb.analysis.state_space.state_space`."""
        from flexmb.analysis.state_space import state_space

        return state_space(self, inputs, outputs)

    def eigen(self, n_modes: int | None = None, dense_limit: int = DENSE_LIMIT) -> LinearModes:
        """The n_modes first modes (all by default) by the ordering of :class:`LinearModes`.

        Up to ``dense_limit`` coordinates (or when all modes are asked) the whole spectrum comes from
        dense QZ; above, ARPACK in shift-invert mode finds the 2 n_modes + 20 eigenvalues nearest a small
        negative shift (the lowest ``|s|``, which are the lowest frequencies unless a mode is far more
        damped or divergent than it oscillates).
        """
        n = self.M.shape[0]
        if n == 0:
            raise ModelError("eigen: the linearized system has no free coordinates (every DOF fixed or constrained)")
        n_modes = n if n_modes is None else integer(n_modes, "eigen: n_modes", 1, n)
        dense_limit = integer(dense_limit, "eigen: dense_limit", 0)
        M, C, K = (X if isinstance(X, np.ndarray) else X.tocsc() for X in (self.M, self.C, self.K))
        # bound of the finite |s| (Gershgorin on M^-1 K, M^-1 C with the lightest DOF's mass); QZ puts the
        # infinite eigenvalues of massless DOFs at ~|K| / (eps |M|) or at inf, far above it
        dm = np.abs(M.diagonal())
        m_min = float(dm[dm > 0].min()) if np.any(dm > 0) else 1.0
        bound = max(np.sqrt(float(abs(K).sum(axis=1).max()) / m_min), float(abs(C).sum(axis=1).max()) / m_min)
        if n <= dense_limit or n_modes == n or 2 * n_modes + 22 >= 2 * n:
            dense = [X if isinstance(X, np.ndarray) else X.toarray() for X in (M, C, K)]
            I, Z = np.eye(n), np.zeros((n, n))
            A = np.block([[Z, I], [-dense[2], -dense[1]]])
            B = np.block([[I, Z], [Z, dense[0]]])
            s, vecs = sla.eig(A, B)                                     # (2n,), (2n, 2n)
        else:
            I, Z = sp.identity(n, format="csc"), sp.csc_matrix((n, n))
            A = sp.bmat([[Z, I], [-sp.csc_matrix(K), -sp.csc_matrix(C)]], format="csc")
            B = sp.bmat([[I, None], [None, sp.csc_matrix(M)]], format="csc")
            sigma = -SHIFT * bound
            lu = spla.splu((A - sigma * B).tocsc())
            op = spla.LinearOperator(A.shape, matvec=lambda x: lu.solve(B @ x), dtype=float)
            mu, vecs = spla.eigs(op, k=2 * n_modes + 20, v0=start_vector(op.shape[0]))   # mu = 1 / (s - sigma)
            keep = np.abs(mu) > 0                                       # mu = 0: infinite s of massless DOFs
            s, vecs = sigma + 1.0 / mu[keep], vecs[:, keep]
        finite = np.isfinite(s) & (np.abs(s) <= INFINITE * bound)
        return _modes(s[finite], vecs[:n, finite], self.basis, n_modes)


def _modes(s: np.ndarray, x: np.ndarray, basis: Any, n_modes: int) -> LinearModes:
    """LinearModes from finite eigenvalues s (k,) and their reduced vectors x (n_red, k): one of each
    conjugate pair, the larger half of the real ones (module docstring), sorted and normalised."""
    scale = float(np.abs(s).max(initial=0.0)) or 1.0
    real = np.abs(s.imag) <= REAL_TOL * scale
    s = np.where(real, s.real + 0j, s)
    upper = np.flatnonzero(~real & (s.imag > 0))
    reals = np.flatnonzero(real)
    reals = reals[np.argsort(-s[reals].real, kind="stable")][:(reals.size + 1) // 2]
    keep = np.concatenate([upper, reals])
    keep = keep[np.lexsort((s[keep].real, np.abs(s[keep].imag)))][:n_modes]
    x = x[:, keep]                                                      # (n_red, n_kept)
    shapes = basis @ x                                                  # (n_dof, n_kept)
    big = shapes[np.argmax(np.abs(shapes), axis=0), np.arange(keep.size)]
    # largest full-DOF entry 1: a real, comparable scale for plots and MAC
    return LinearModes(s[keep], shapes / big, x / big, scale)


@keywords_listed(renamed={"lam": "multipliers"})
def linearize(model: Model | Assembly, u: np.ndarray | None = None, v: np.ndarray | None = None,
              multipliers: np.ndarray | None = None, t: float = 0.0, spin: Any = None, a: np.ndarray | None = None,
              check_equilibrium: bool = True) -> LinearizedSystem:
    """Linearize the equations of motion about the state (u, v, a) at time t (module docstring).

    Parameters
    ----------
    model : the model or its Assembly.
    u, v, a : state (n_dof,) (default the reference state at rest; with ``spin`` v and a are the steady
        motion's and must not be given).
    multipliers : joint multipliers (n_c,), N or N m; default: least squares of the equilibrium equations.
    spin : (axis (3,) or None in 2D, speed (rad/s), centre (dim,)): the rotating frame.
    check_equilibrium : the state must satisfy r = 0 up to round-off (after the multipliers), else ModelError
        naming the worst DOF; switch it off to linearize about a non-equilibrium state of a time history.
    """
    asm = _assembly(model, "linearize")
    frame = _spin(asm, spin, "linearize")
    u = _state_vector(asm, u, "linearize: u")
    u = np.zeros(asm.n_dof) if u is None else u.copy()
    if frame is not None:
        if v is not None or a is not None:
            raise ModelError("linearize: with spin the velocity and acceleration are those of the steady "
                             "rotation; do not pass v or a")
        _check_frame(asm, frame)
        v, a = steady_motion(asm, u, frame)
    else:
        v = _state_vector(asm, v, "linearize: v")
        a = _state_vector(asm, a, "linearize: a")
        v = np.zeros(asm.n_dof) if v is None else v
        a = np.zeros(asm.n_dof) if a is None else a
    t = real(t, "linearize: t")
    free = asm.dofs.free
    G, lam = _joint_terms(asm, u, v, a, t, multipliers, "linearize")
    r = residual(asm, u, v, a, t, lam)
    if check_equilibrium:
        _check_equilibrium(asm, r, u, v, a, t, frame)
    M, C, K = _full_matrices(asm, u, v, a, t, lam, frame)
    select = sp.csr_matrix((np.ones(free.size), (free, np.arange(free.size))), shape=(asm.n_dof, free.size))
    if not G.shape[0]:
        return LinearizedSystem(M, C, K, select, u, v, a, lam, frame, asm)
    N = sla.null_space(G)                                               # (n_free, n_red), dense
    return LinearizedSystem(N.T @ (M @ N), N.T @ (C @ N), N.T @ (K @ N), select @ N, u, v, a, lam, frame, asm)


def _full_matrices(asm: Assembly, u: np.ndarray, v: np.ndarray, a: np.ndarray, t: float, lam: np.ndarray,
                   frame: Spin | None) -> tuple[sp.csc_matrix, sp.csc_matrix, sp.csc_matrix]:
    """M_l, C_l, K_l (or M_r, C_r, K_r with a frame) on the free DOFs, (n_free, n_free) sparse each,
    before constraint elimination."""
    Ma, Cv, Ku = partials(asm, u, v, a, t, lam)
    M, C, K = Ma, Cv, Ku
    rd = asm.rotation_dofs
    if rd.size:
        # spins: dw = dtheta' + A dtheta, A = -hat(w_0) (module docstring)
        A = -_free(asm, _blocks(asm, rd, skew(v[rd])))
        Adot = -_free(asm, _blocks(asm, rd, skew(a[rd])))
        C, K = Cv + Ma @ A, Ku + Cv @ A + Ma @ Adot
    if frame is not None:
        W = _free(asm, _frame_rate(asm, frame))
        C, K = C + 2.0 * M @ W, K + C @ W + M @ W @ W
    return M.tocsc(), C.tocsc(), K.tocsc()


def _joint_terms(asm: Assembly, u: np.ndarray, v: np.ndarray, a: np.ndarray, t: float, lam: Any, what: str
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Constraint Jacobian G (n_c, n_free) at u and the multipliers: ``lam`` checked, or the least-squares
    solution of G^T lambda = -r(u, v, a) on the free DOFs. ModelError if u violates a joint."""
    free = asm.dofs.free
    if asm.constraints is None:
        return np.zeros((0, free.size)), np.zeros(0)
    ct = asm.constraints.evaluate(u, t, np.zeros(asm.constraints.n))
    G = ct.C.toarray()[:, free]
    if ct.phi.size and np.abs(ct.phi).max() > 1e-6 * asm.model.characteristic_length:
        i = int(np.argmax(np.abs(ct.phi)))
        raise ModelError(f"{what}: u violates the joint constraints at t = {t:.6g} (equation {i} is off "
                         f"by {ct.phi[i]:.3g} m or rad, {asm.constraints.owner(i)})")
    if lam is None:
        return G, np.linalg.lstsq(G.T, -residual(asm, u, v, a, t)[free], rcond=None)[0]
    lam = np.asarray(lam, dtype=float)
    if lam.shape != (asm.constraints.n,) or not np.all(np.isfinite(lam)):
        raise ModelError(f"{what}: multipliers must be {asm.constraints.n} finite numbers (one per constraint "
                         f"equation), got shape {lam.shape}")
    return G, lam


def _check_frame(asm: Assembly, frame: Spin) -> None:
    """What the rotating frame needs: supports invariant under the spin (W may not couple a fixed DOF
    with a free one) and gravity along the axis (else the relative equilibrium is not steady)."""
    W = _frame_rate(asm, frame)
    fixed = np.ones(asm.n_dof, dtype=bool)
    fixed[asm.dofs.free] = False
    coupled = np.flatnonzero(fixed & (abs(W[:, ~fixed]).sum(axis=1).A1 > 0.0))
    if coupled.size:
        raise ModelError(f"spin: {asm.dofs.label(int(coupled[0]))} is fixed but the rotation about "
                         f"{frame.axis} moves it into free DOFs; supports must be invariant under the spin "
                         "(fix all translations across the axis, or put the node on the axis)")
    g = np.r_[asm.model.gravity, np.zeros(3 - asm.model.dim)]
    if np.linalg.norm(np.cross(g, frame.axis)) > 1e-12 * max(np.linalg.norm(g), 1.0):
        raise ModelError(f"spin: gravity {asm.model.gravity.tolist()} is not along the spin axis "
                         f"{frame.axis.tolist()}; in the rotating frame it would turn, and a steady state "
                         "(relative equilibrium) does not exist: remove it or spin about the vertical")


def _check_equilibrium(asm: Assembly, r: np.ndarray, u: np.ndarray, v: np.ndarray, a: np.ndarray, t: float,
                       frame: Spin | None) -> None:
    free = asm.dofs.free
    res = r[free]
    if not res.size:
        return
    # the inertia force over all DOFs: a body turning on a prescribed hub or a driven joint may have none
    # on its free DOFs (a straight modal blade), while the hub or the joint carries its centrifugal pull
    scale = max(float(np.linalg.norm(asm.internal_force(u)[free])),
                float(np.linalg.norm(asm.external_force(t, u=u)[free])),
                float(np.linalg.norm(asm.mass_times(a) + _inertia_terms(asm, u, v, a))), 1e-300)
    worst = int(np.argmax(np.abs(res)))
    if abs(res[worst]) <= EQUILIBRIUM_TOL * scale or not np.any(res):
        return
    what = "a relative equilibrium of the spin" if frame is not None else "an equilibrium"
    remedy = ("flexmb.relative_equilibrium(model, spin)" if frame is not None else
              "flexmb.load_control or pass a (with check_equilibrium=False for a state of a time history)")
    raise ModelError(f"linearize: the state is not {what}: residual {res[worst]:.3g} at "
                     f"{asm.dofs.label(int(free[worst]))} (force scale {scale:.3g}); use {remedy}")


@keywords_listed
def relative_equilibrium(model: Model | Assembly, spin: Any, u0: np.ndarray | None = None, t: float = 0.0,
                         tolerance: float = 1e-10, max_iterations: int = 50) -> np.ndarray:
    """The steady deformed state u (n_dof,) of the model rotating as ``spin`` = (axis, speed, centre):
    r(u, W (x - c), W^2 (x - c)) + G^T lambda = 0 and Phi(u, t) = 0 on the free DOFs (centrifugal
    stretching, the joints' reactions), solved by Newton's method from u0 (default the reference
    state). The Jacobian of the relative-equilibrium residual is K_r of the rotating frame (module
    docstring), so the iteration converges quadratically.

    Raises ModelError if the residual is not below ``tolerance`` times the force scale after
    max_iterations (the speed above a divergence speed where no nearby equilibrium exists).
    """
    asm = _assembly(model, "relative_equilibrium")
    frame = _spin(asm, spin, "relative_equilibrium")
    if frame is None:
        raise ModelError("relative_equilibrium: spin must be given as (axis, speed, centre)")
    _check_frame(asm, frame)
    u = _state_vector(asm, u0, "relative_equilibrium: u0")
    u = np.zeros(asm.n_dof) if u is None else u.copy()
    t = real(t, "relative_equilibrium: t")
    tolerance = real(tolerance, "relative_equilibrium: tolerance", 0.0, low_open=True)
    max_iterations = integer(max_iterations, "relative_equilibrium: max_iterations", 1)
    free, n_c = asm.dofs.free, 0 if asm.constraints is None else asm.constraints.n
    lam = np.zeros(n_c)
    size = asm.model.characteristic_length
    for _ in range(max_iterations):
        v, a = steady_motion(asm, u, frame)
        r = residual(asm, u, v, a, t, lam)[free]
        phi = asm.constraints.evaluate(u, t, lam).phi if n_c else np.zeros(0)
        inertia = asm.mass_times(a) + _inertia_terms(asm, u, v, a)
        scale = max(float(np.linalg.norm(inertia)), float(np.linalg.norm(asm.internal_force(u)[free])),
                    float(np.linalg.norm(asm.external_force(t, u=u)[free])), 1e-300)
        if np.linalg.norm(r) <= tolerance * scale and (not n_c or np.abs(phi).max() <= tolerance * size):
            return u
        J = _full_matrices(asm, u, v, a, t, lam, frame)[2].toarray()
        if n_c:
            G = asm.constraints.evaluate(u, t, lam).C.toarray()[:, free]
            J = np.block([[J, G.T], [G, np.zeros((n_c, n_c))]])
        # least squares: a free rigid rotation about the axis (no support against it) is a null direction
        step = np.linalg.lstsq(J, -np.concatenate([r, phi]), rcond=None)[0]
        du = np.zeros(asm.n_dof)
        du[free] = step[:free.size]
        u = asm.update(u, du)
        lam = lam + step[free.size:]
    raise ModelError(f"relative_equilibrium: no steady state found at speed {frame.speed:.6g} rad/s after "
                     f"{max_iterations} Newton iterations (residual {np.linalg.norm(r):.3g}, force scale "
                     f"{scale:.3g}); the speed may be beyond a divergence (centrifugal) instability")


def _mac(a: np.ndarray, b: np.ndarray, sa: np.ndarray, sb: np.ndarray) -> np.ndarray:
    """Modal assurance criterion (n_a, n_b) of the first-order state shapes ``[phi; s^ phi]`` of
    modes with shapes a (n, n_a), b (n, n_b) and eigenvalues sa (n_a,), sb (n_b,), s^ = s / |s|:
    ``|a^H b|^2 |1 + conj(s^_a) s^_b|^2 / (4 |a|^2 |b|^2)``. Invariant under complex scaling; the
    velocity half tells a forward whirl (theta_x + i theta_y, +i omega_f) from the conjugate member
    of a backward one, whose displacement shapes are the same (their MAC is then 0)."""
    na = np.sum(np.abs(a) ** 2, axis=0)
    nb = np.sum(np.abs(b) ** 2, axis=0)
    ua, ub = (np.where(s == 0.0, 1.0, s / np.where(s == 0.0, 1.0, np.abs(s))) for s in (sa, sb))
    phase = np.abs(1.0 + np.outer(ua.conj(), ub)) ** 2 / 4.0
    return np.abs(a.conj().T @ b) ** 2 * phase / np.outer(na, nb)


@methods_keywords_listed
@dataclass
class CampbellDiagram:
    """Eigenvalues against speed, modes tracked by MAC (see :func:`campbell`).

    speeds : (n_speeds,) rad/s; eigenvalues : (n_speeds, n_modes) complex (a tracked whirl whose
    frequency has passed through zero continues as the conjugate member, Im s < 0; the frequencies are
    ``|Im s|``); mac : (n_speeds, n_modes) MAC
    of each tracked mode with its shape at the previous speed (1 at the first speed).
    """

    speeds: np.ndarray
    eigenvalues: np.ndarray
    mac: np.ndarray

    @property
    def omega(self) -> np.ndarray:
        """Damped angular frequencies ``|Im s|`` (n_speeds, n_modes), rad/s."""
        return np.abs(self.eigenvalues.imag)

    @property
    def frequencies_hz(self) -> np.ndarray:
        """Damped frequencies ``|Im s|`` / (2 pi) (n_speeds, n_modes), Hz."""
        return self.omega / (2.0 * np.pi)

    @property
    def real_parts(self) -> np.ndarray:
        """Re s (n_speeds, n_modes), 1/s."""
        return self.eigenvalues.real

    def plot(self, ax: Any = None, kind: str = "frequency", unit: str = "Hz", orders: Sequence[int] = (1, 2)) -> Any:
        """Frequencies or real parts (1/s) against speed, one line per tracked mode, speed and
        frequency in one ``unit`` ("Hz", "rad/s", "rpm"), with the 1P, 2P, ... lines of ``orders``
        (:func:`flexmb.viz.plots.campbell_plot`). Returns the axes."""
        from flexmb.viz.plots import campbell_plot

        return campbell_plot(self, ax, kind, unit, orders)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready lists: speeds, frequencies_hz, real_parts, mac."""
        return {"speeds": self.speeds.tolist(), "frequencies_hz": self.frequencies_hz.tolist(),
                "real_parts": self.real_parts.tolist(), "mac": self.mac.tolist()}


def _campbell_spin(spin: Any) -> tuple[Any, Any]:
    """campbell's ``spin`` as (axis, centre): an axis alone (3 numbers) or None has its centre at the origin."""
    if spin is None:
        return None, None
    if isinstance(spin, (tuple, list)) and len(spin) == 2 and (spin[0] is None or np.shape(spin[0]) == (3,)):
        return spin[0], spin[1]
    if isinstance(spin, (tuple, list, np.ndarray)) and len(spin) == 3 and all(is_real(x) for x in spin):
        return spin, None
    raise ModelError(f"campbell: spin must be (axis, centre) or the axis alone (the speeds are swept), got {spin!r}")


@keywords_listed(renamed={"spin_axis": "spin", "centre": "spin"})
def campbell(build: Callable[[float], Any] | Model | Assembly, speeds: Any, n_modes: int = 6,
             spin: Any = None, equilibrium: bool = True, t: float = 0.0) -> CampbellDiagram:
    """Campbell diagram: eigenvalues at every speed, each mode followed by MAC from one speed to the next.

    Parameters
    ----------
    build : ``build(speed)`` returning a Model or Assembly (linearized with ``spin = (axis, speed,
        centre)`` about its relative equilibrium if ``equilibrium``, else about its reference state),
        or a :class:`LinearizedSystem` used as it is; or one Model/Assembly re-linearized at every speed.
    speeds : (n_speeds,) spin speeds, rad/s.
    n_modes : modes tracked, the first n_modes of the first speed.
    spin : the spin of :func:`linearize` without its speed, which ``speeds`` sweeps: ``(axis, centre)``
        or the axis alone (centre the origin); None: the z axis through the origin (2D only).

    Tracking: at each speed every mode and its conjugate are compared with the tracked modes of the
    previous speed by the MAC of their first-order state shapes (:func:`_mac`, on the reduced
    coordinates: the same layout at every speed is needed) and assigned one to one maximising the
    summed MAC (Hungarian algorithm), so modes whose frequencies cross keep their identity, forward
    and backward whirls stay apart and a whirl whose frequency passes through zero is followed. Where
    a mode turns from oscillation into divergence (s real) its MAC halves.
    """
    from scipy.optimize import linear_sum_assignment

    speeds = np.asarray(speeds, dtype=float).ravel()
    if speeds.size == 0 or not np.all(np.isfinite(speeds)):
        raise ModelError(f"campbell: speeds must be one or more finite numbers (rad/s), got {speeds!r}")
    n_modes = integer(n_modes, "campbell: n_modes", 1)
    if not (callable(build) or isinstance(build, (Model, Assembly))):
        raise ModelError(f"campbell: build must be a function of the speed or a Model/Assembly, got "
                         f"{type(build).__name__}")
    spin_axis, centre = _campbell_spin(spin)
    fixed = None if callable(build) else _assembly(build, "campbell")
    eigenvalues = np.zeros((speeds.size, n_modes), dtype=complex)
    mac = np.ones((speeds.size, n_modes))
    previous = None
    for i, speed in enumerate(speeds):
        item = fixed if fixed is not None else build(float(speed))
        if isinstance(item, LinearizedSystem):
            lin = item
        elif isinstance(item, (Model, Assembly)):
            frame = (spin_axis, float(speed), centre)
            u = relative_equilibrium(item, frame, t=t) if equilibrium else None
            lin = linearize(item, u=u, t=t, spin=frame)
        else:
            raise ModelError(f"campbell: build({speed:.6g}) returned {type(item).__name__}; it must return a "
                             "Model, Assembly or LinearizedSystem")
        modes = lin.eigen()
        if modes.eigenvalues.size < n_modes:
            raise ModelError(f"campbell: only {modes.eigenvalues.size} modes at speed {speed:.6g}, "
                             f"n_modes = {n_modes} asked")
        shapes = modes.reduced_shapes
        if previous is None:
            values, candidates, pick = modes.eigenvalues, shapes, np.arange(n_modes)
        else:
            if shapes.shape[0] != previous.shape[0]:
                raise ModelError(f"campbell: the model at speed {speed:.6g} has {shapes.shape[0]} coordinates, "
                                 f"the previous one {previous.shape[0]}; tracking needs the same layout")
            # candidates: every eigenvalue with Im s >= 0 and its conjugate, so that a whirl whose
            # frequency passes through zero between two speeds (its kept member swaps to the conjugate)
            # is followed; the state-shape MAC keeps forward and backward whirls apart
            candidates = np.concatenate([shapes, shapes.conj()], axis=1)
            values = np.concatenate([modes.eigenvalues, modes.eigenvalues.conj()])
            score = _mac(previous, candidates, eigenvalues[i - 1], values)  # (n_modes, 2 n_all)
            _, pick = linear_sum_assignment(-score)
            mac[i] = score[np.arange(n_modes), pick]
        eigenvalues[i] = values[pick]
        previous = candidates[:, pick]
    return CampbellDiagram(speeds, eigenvalues, mac)
