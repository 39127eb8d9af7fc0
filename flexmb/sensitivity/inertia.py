"""Derivatives of the mid-point step's inertia terms with respect to the step's start state.

The residual of :class:`~flexmb.integrators.schemes.MidPoint` holds the inertia (at spatial rotations the
rotary terms replace M a_m: see below)

    inertia = M a_m  (rows off the director DOFs D),   a_m = (v_{n+1} - v_n) / dt,
              v_{n+1} = 2 (u_{n+1} - u_n) / dt - v_n,
    inertia[D] = F_D(dtheta, omega_n, s_n)   (nodes of cubic-mass beams, director form),
    inertia += f_c(u_n, u_{n+1}, v_n, s_n)   (configuration-dependent masses),

which depends on the start state ``(u_n, v_n, s_n)`` (s_n = ``State.stretch``, the director stretch
rates at D, 1/s). This module gives, per kind, the derivative of its contribution w.r.t. u_n, v_n
and s_n at fixed u_{n+1}:

* **Constant mass** (closed form): ``-2 M / dt^2`` and ``-2 M / dt`` on the rows off D (M does not
  couple D with other DOFs: :class:`~flexmb.assembly.Assembly` refuses such a mass).
* **Director form** of a node's rotary inertia J (:func:`~flexmb.elements.hermite_mass2d.director_step`,
  ``F_D = 2 J / dt [(1 - cos dtheta) / dtheta (2 / dt + s_n) - omega_n sinc(dtheta)]``): diagonal,
  ``dF_D/du_n = -dF_D/d dtheta``, ``dF_D/d omega_n = -2 J / dt sinc(dtheta)``,
  ``dF_D/ds_n = 2 J / dt (1 - cos dtheta) / dtheta``.
* **Cubic masses** (:class:`~flexmb.elements.hermite_mass2d.HermiteMass2D`): the director form's
  inertia ``F = Bbar^T (P_{n+1} - P_n) / dt`` is affine in the start rates at fixed ends (the
  directors follow the mid-point rule, ``Qdot_{n+1} = 2 (Q_{n+1} - Q_n) / dt - Qdot_n``), and each
  start rate moves ``Qdot_{n+1} - Qdot_n`` by -2 times its own velocity at t_n, so ``dF/dv_n`` and
  ``dF/ds_n`` are closed forms (:meth:`InertiaDerivatives._rate_coefficients`). The step is
  time-reversible, ``F(u_n, u_{n+1}, v_n, s_n; dt) =
  F(u_{n+1}, u_n, v_{n+1}, s_{n+1}; -dt)`` with the end rates of the director rule, hence
  ``dF/du_n = J_rev + A_v dv_{n+1}/du_n + A_s ds_{n+1}/du_n``: J_rev the kernel's tangent of the
  reversed step, A_v, A_s its rate coefficients (from the forward step's by the same reversal: the end
  rates take the start rates by -I at translations and by minus a turn through dtheta of
  (omega_n, s_n) at the angles) and the director rule's derivatives ``dv_{n+1}/du_n = -2/dt``
  (translations), ``-d omega_{n+1}/d dtheta`` and ``ds_{n+1}/du_n = -((2/dt + s_n) sin dtheta -
  omega_n cos dtheta)`` (angles).
* **Planar modal bodies** (:class:`~flexmb.elements.floating_frame.FloatingFrameMass`): the inertia has
  quadratic velocity terms (not affine); d/dv_n is a complex step of the force's numpy specification
  along v_n (all 3 + n_m directions in one batched call; exact to round-off: no difference is taken).
  The step is reversible, ``F(u_n, u_{n+1}, v_n; dt) = F(u_{n+1}, u_n, v_{n+1}; -dt)`` (tested), and
  v_{n+1} = 2 (u_{n+1} - u_n) / dt - v_n, so ``dF/du_n = J_rev + (2 / dt) dF/dv_n`` with J_rev the
  compiled tangent of the reversed step.
* **3D modal bodies** (:class:`~flexmb.elements.floating_frame3d.FloatingFrameMass3D`): complex steps of
  the force's chart form along spins of the frame's R_n at fixed R_{n+1} (:meth:`InertiaDerivatives._modal_body_3d`)
  and along v_n. The 3D step is **not** reversible (8 % of the force on a 0.3 rad step of the test body:
  the chart is the start's), so there is no reversal shortcut there.

* **Rotary terms** at spatial rotations (rigid bodies, point inertias, beams' and shells' rho_I:
  ``(pi_{n+1} - pi_n) / dt`` in place of M a_m there, :meth:`InertiaDerivatives.rotary_terms`): closed
  forms, a 3 x 3 block per node for the spin of R_n and for omega_n.

At spatial rotations the derivatives w.r.t. u_n are w.r.t. spins of R_n at fixed R_{n+1}
(``delta R_n = hat(delta theta) R_n``, as :meth:`Assembly.update` moves a configuration), with the
column maps of :mod:`flexmb.sensitivity.matrices` (the blocks are kept in the reversed step's Cayley
parameters w', R_n = cay(w') R_{n+1}, and the maps bring them back to spins).

Each identity is checked to round-off and each derivative against central differences of the
scheme's residual by ``tests/test_sensitivity_inertia.py``.

Not covered (refused with a :class:`~flexmb.checks.ModelError` naming the group or node): a constant
mass at spatial rotations (no flexmb element makes one: their rotary inertia is the rotary terms') and
configuration-dependent masses of other kinds.

Results are :class:`InertiaMatrix` objects (a :class:`~flexmb.sensitivity.matrices.StartMatrix` with
a constant sparse part for M, built once per assembly): they add to the force terms' start
derivatives, and apply to vectors and their transposes without building a matrix per step.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from flexmb.assembly import Assembly
from flexmb.checks import ModelError
from flexmb.elements.floating_frame import _STEP, FloatingFrameMass
from flexmb.elements.floating_frame3d import FloatingFrameMass3D
from flexmb.elements.hermite_mass2d import HERMITE, HermiteMass2D, director_step
from flexmb.rotations import cayley, cayley_between, exp_map, sinc, skew
from flexmb.sensitivity.matrices import StartMatrix, cayley_spin_inverse, same_maps

#: the configuration-dependent mass kernels covered
INERTIA_KINDS = (HermiteMass2D, FloatingFrameMass, FloatingFrameMass3D)
#: the Hermite slot [x_1, d_1, x_2, d_2] each rate column moves (v of the 6 DOFs, then s of the 2 nodes)
_RATE_SLOTS = np.array([0, 0, 1, 2, 2, 3, 1, 3])
_SERIES = 2e-4                                     # rad: below, sinc of dtheta or dtheta/2 takes its series


def _cayley_differential(w: np.ndarray) -> np.ndarray:
    """T_c(w) = (I + hat(w)/2) / (1 + |w|^2/4) (n, 3, 3), the spin of ``cay(w) R`` per dw (R fixed),
    for w (n, 3): times it, derivatives w.r.t. spins become derivatives w.r.t. w."""
    return (np.eye(3)[None] + 0.5 * skew(w)) / (1.0 + 0.25 * np.einsum("ni,ni->n", w, w))[:, None, None]


@dataclass
class InertiaMatrix(StartMatrix):
    """A start derivative (n_dof, n_dof) kept as element blocks plus constant sparse matrices with
    a factor each, ``D = sum blocks + sum_k c_k S_k`` (the constant mass: S_k are built once per
    assembly, the step sets c_k). Adds to a :class:`StartMatrix` from either side."""

    sparse: list[tuple[float, sp.csr_matrix]] = field(default_factory=list)

    def _combine(self, other: StartMatrix) -> InertiaMatrix:
        # the column maps of the operands with blocks or maps; a term without either (the constant
        # mass, which has no columns at spatial rotations) takes the other's
        mapped = [m for m in (self, other) if m.blocks or m.rotation_dofs.size]
        if other.n_dof != self.n_dof or (len(mapped) == 2 and not same_maps(self, other)):
            raise ValueError("InertiaMatrix: the two derivatives belong to different models or steps")
        ref = mapped[0] if mapped else self
        return InertiaMatrix(self.n_dof, self.blocks + other.blocks, ref.rotation_dofs, ref.spin_maps,
                             sparse=self.sparse + getattr(other, "sparse", []))

    def __add__(self, other: StartMatrix) -> InertiaMatrix:
        return self._combine(other)

    def __radd__(self, other: StartMatrix) -> InertiaMatrix:
        return self._combine(other)

    def matvec(self, x: np.ndarray) -> np.ndarray:
        """D x (n_dof,) or (n_dof, k)."""
        out = super().matvec(x)
        for c, S in self.sparse:
            out += c * (S @ np.asarray(x, dtype=float))
        return out

    def rmatvec(self, y: np.ndarray) -> np.ndarray:
        """D^T y (n_dof,) or (n_dof, k)."""
        out = super().rmatvec(y)
        for c, S in self.sparse:
            out += c * (S.T @ np.asarray(y, dtype=float))
        return out

    def matrix(self) -> sp.csr_matrix:
        """D as a sparse matrix on all DOFs (for tests and small models)."""
        D = super().matrix()
        for c, S in self.sparse:
            D = D + c * S
        return D.tocsr()


@dataclass
class InertiaStart:
    """The derivatives of inertia terms of one step w.r.t. the start displacements u_n (N/m, N m/rad,
    ...), velocities v_n (N s/m, ...) and director stretch rates s_n (N s, N m s: columns at the
    director DOFs only), each (n_dof, n_dof) on all DOFs."""

    u: InertiaMatrix
    v: InertiaMatrix
    stretch: InertiaMatrix

    def __add__(self, other: InertiaStart) -> InertiaStart:
        return InertiaStart(self.u + other.u, self.v + other.v, self.stretch + other.stretch)


class InertiaDerivatives:
    """The start derivatives of the mid-point residual's inertia terms for one assembly (module
    docstring). Each method takes the step from ``u0`` = u_n to ``u1`` = u_{n+1} with the start
    rates ``v0`` = v_n and ``stretch0`` = s_n (n_dof,) each (stretch0 None without director DOFs)
    and the step dt (s), and returns an :class:`InertiaStart` of its terms (the sign of the
    residual ``g = ... + inertia``)."""

    def __init__(self, asm: Assembly) -> None:
        self.asm = asm
        for i, kernels in asm.configuration_masses:
            if type(kernels) not in INERTIA_KINDS:
                raise ModelError(f"start derivative of the inertia: element group {asm.groups[i].name!r} has a "
                                 f"{type(kernels).__name__} mass; covered are "
                                 + ", ".join(t.__name__ for t in INERTIA_KINDS))
        rd = asm.rotation_dofs
        if rd.size:
            # the rotary terms replace M a_m at spatial rotations: a constant mass there (none of
            # flexmb's elements puts one: their rotary inertia is asm.rotary_inertia) is not covered
            held = np.asarray(abs(asm.mass[:, rd.ravel()]).sum(axis=0)).reshape(len(rd), 3).max(axis=1) > 0.0
            if held.any():
                node = int(asm.rotation_nodes[np.flatnonzero(held)[0]])
                groups = [g.name for g in asm.groups if np.isin(g.connectivity, node).any()]
                where = f"element group {groups[0]!r} at node {node}" if groups else f"node {node}"
                raise ModelError(f"start derivative of the inertia: {where} has a constant mass at spatial "
                                 "rotations; covered is rotary inertia in the rotary terms only")
        self._edofs = {i: asm.dofs.element_dofs(asm.groups[i]) for i, _ in asm.configuration_masses}
        # the constant mass on the rows off the director DOFs, where M a_m stays in the residual
        keep = np.ones(asm.n_dof)
        keep[asm.director_dofs] = 0.0
        self._mass = (sp.diags(keep) @ asm.mass).tocsr()
        #: the director DOFs as the element DOFs (n_d, 1) of their diagonal blocks (one array per run:
        #: the adjoint keeps its scatter index by the array)
        self._director_column = asm.director_dofs[:, None]
        #: the cubic-mass groups: (group index, kernels)
        self._cubic = [(i, k) for i, k in asm.configuration_masses if type(k) is HermiteMass2D]
        #: per cubic-mass group: the rows of its elements' angle DOFs among the director DOFs (n_el, 2)
        self._angle_rows: dict[int, np.ndarray] = {}

    def _spin_maps(self, u0: np.ndarray, u1: np.ndarray) -> dict:
        """The column maps of a derivative w.r.t. u_n at spatial rotations, as
        :class:`~flexmb.sensitivity.matrices.StartDerivatives` sets them (empty without)."""
        rd = self.asm.rotation_dofs
        if not rd.size:
            return {}
        return {"rotation_dofs": rd, "spin_maps": cayley_spin_inverse(cayley_between(u1[rd], u0[rd]))}

    def _director_rates(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, stretch0: np.ndarray, dt: float
                        ) -> tuple[np.ndarray, np.ndarray, tuple]:
        """v_{n+1} (n_dof,) (the mid-point rule, the director rule at D), s_{n+1} (n_dof,) and the
        director step's five arrays (n_d,) (:func:`director_step`)."""
        dd, asm = self.asm.director_dofs, self.asm
        v1 = 2.0 * (u1 - u0) / dt - v0
        s1 = np.zeros(asm.n_dof)
        step = director_step(u1[dd] - u0[dd], v0[dd], stretch0[dd], asm.director_inertia, dt)
        v1[dd], s1[dd] = step[0], step[1]
        return v1, s1, step

    def _start(self, u0: np.ndarray, u1: np.ndarray, *terms: tuple[list, list, list, list, list]) -> InertiaStart:
        """The :class:`InertiaStart` of terms, each (blocks of d/du_n, of d/dv_n, of d/ds_n, sparse parts
        of d/du_n, of d/dv_n), blocks (element DOFs (n_el, ne), (n_el, ne, ne)) and (factor, matrix)."""
        n = self.asm.n_dof
        parts: list[list] = [[], [], [], [], []]
        for t in terms:
            for k in range(5):
                parts[k] += t[k]
        return InertiaStart(InertiaMatrix(n, parts[0], **self._spin_maps(u0, u1), sparse=parts[3]),
                            InertiaMatrix(n, parts[1], sparse=parts[4]), InertiaMatrix(n, parts[2]))

    def _constant_terms(self, dt: float) -> tuple[list, list, list, list, list]:
        """The terms (:meth:`_start`) of :meth:`constant_mass`; so the other ``_*_terms`` of their methods."""
        return [], [], [], [(-2.0 / dt**2, self._mass)], [(-2.0 / dt, self._mass)]

    def constant_mass(self, u0: np.ndarray, u1: np.ndarray, dt: float) -> InertiaStart:
        """M a_m on the rows off D: d/du_n = -2 M / dt^2, d/dv_n = -2 M / dt, d/ds_n = 0 (u0, u1 set
        the column maps at spatial rotations only)."""
        return self._start(u0, u1, self._constant_terms(dt))

    def _director_terms(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, stretch0: np.ndarray, dt: float,
                        step: tuple) -> tuple[list, list, list, list, list]:
        dd = self.asm.director_dofs
        if not dd.size:
            return [], [], [], [], []
        dth, J = u1[dd] - u0[dd], self.asm.director_inertia
        half = 0.5 * dth
        du = -step[4]                                                       # -dF_D/d dtheta
        if np.abs(dth).min() >= _SERIES:             # no series needed: the closed forms, fewer calls than sinc's
            sin_half = np.sin(half)
            sinc_dth, one_minus_cos = np.sin(dth) / dth, sin_half * sin_half / half
        else:
            both = sinc(np.concatenate([dth, half]))                       # one call: it costs more than its size
            sinc_dth, one_minus_cos = both[:dd.size], half * both[dd.size:] ** 2
        dv = -2.0 * J / dt * sinc_dth
        ds = 2.0 * J / dt * one_minus_cos                                   # (1 - cos dtheta) / dtheta
        dofs = self._director_column
        return [(dofs, du[:, None, None])], [(dofs, dv[:, None, None])], [(dofs, ds[:, None, None])], [], []

    def directors(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, stretch0: np.ndarray | None,
                  dt: float) -> InertiaStart:
        """F_D of the director DOFs' constant rotary inertia J (diagonal, closed forms)."""
        stretch0 = self._stretch(stretch0)
        rates = self._director_rates(u0, u1, v0, stretch0, dt)
        return self._start(u0, u1, self._director_terms(u0, u1, v0, stretch0, dt, rates[2]))

    def _stretch(self, stretch0: np.ndarray | None) -> np.ndarray:
        if stretch0 is None:
            if self.asm.director_dofs.size:
                raise ValueError("start derivative of the inertia: the model has cubic-mass nodes; give the "
                                 "start state's director stretch rates (State.stretch)")
            return np.zeros(self.asm.n_dof)
        return stretch0

    @staticmethod
    def _rate_coefficients(k: HermiteMass2D, u0: np.ndarray, u1: np.ndarray, dt: float
                           ) -> tuple[np.ndarray, np.ndarray]:
        """dF/dv0 (n_el, 6, 6) and dF/ds0 (n_el, 6, 2) of a cubic-mass group's step at fixed ends u0, u1
        (n_el, 6), in closed form: F = Bbar^T m H (Qdot_{n+1} - Qdot_n) / dt is affine in (v0, s0), and
        each start rate moves Qdot_{n+1} - Qdot_n by -2 times its own velocity at t_n -- a translation
        rate by its unit vector, omega_n by l0 n(phi_n), s_n by l0 e(phi_n) -- since the director rule
        gives d(omega_{n+1} n_{n+1} + s_{n+1} e_{n+1}) = -(d omega_n n_n + d s_n e_n) (its rates turn the
        start's through dtheta: d omega_{n+1} = -cos dtheta d omega_n + sin dtheta d s_n, d s_{n+1} =
        -sin dtheta d omega_n - cos dtheta d s_n); Bbar's director rows are b = l0 sinc(dtheta/2)
        n(phi_m). (Differences F(unit rate) - F(0) give the same to round-off of F's size, which on a
        large increment is several digits of the columns'.)"""
        phi0 = k.alpha0[:, None] + u0[:, 2::3]                                # (n_el, 2) rad
        half = 0.5 * (u1[:, 2::3] - u0[:, 2::3])
        l0 = k.l0[:, None]
        e0, n0 = np.stack([np.cos(phi0), np.sin(phi0)], axis=-1), np.stack([-np.sin(phi0), np.cos(phi0)], axis=-1)
        b = (l0 * sinc(half))[..., None] * np.stack([-np.sin(phi0 + half), np.cos(phi0 + half)], axis=-1)
        # the start velocity each rate column moves, (n_el, 8, 2): v of the 6 DOFs, then s of the 2 nodes
        delta = np.zeros((len(u0), 8, 2))
        delta[:, [0, 3], 0] = delta[:, [1, 4], 1] = 1.0
        delta[:, [2, 5]] = l0[..., None] * n0
        delta[:, [6, 7]] = l0[..., None] * e0
        dP = (-2.0 * k.mass / dt)[:, None, None, None] * HERMITE[:, _RATE_SLOTS][None, :, :, None] * delta[:, None]
        columns = np.empty((len(u0), 6, 8))                                  # dP (n_el, 4 slots, 8, 2)
        columns[:, [0, 1]] = dP[:, 0].transpose(0, 2, 1)
        columns[:, [3, 4]] = dP[:, 2].transpose(0, 2, 1)
        columns[:, 2] = np.einsum("ejc,ec->ej", dP[:, 1], b[:, 0])
        columns[:, 5] = np.einsum("ejc,ec->ej", dP[:, 3], b[:, 1])
        return columns[:, :, :6], columns[:, :, 6:]

    def _cubic_terms(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, stretch0: np.ndarray, dt: float,
                     rates: tuple) -> tuple[list, list, list, list, list]:
        asm = self.asm
        out = ([], [], [], [], [])
        cubic = self._cubic
        if not cubic:
            return out
        dd = asm.director_dofs
        v1, s1, step = rates
        dth = u1[dd] - u0[dd]
        # the director rule's derivatives w.r.t. u_n at D (-d/d dtheta) and of the end rates w.r.t. the
        # start rates, d(omega1, s1)/d(omega0, s0) = [[-cos, sin], [-sin, -cos]] per node
        c, sn = np.cos(dth), np.sin(dth)                                    # (n_d,) each
        dw1 = -step[2]
        ds1 = -((2.0 / dt + stretch0[dd]) * sn - v0[dd] * c)
        # the reversed step's rate columns at the angles (below) times these, per node: (2, n_d)
        turned = np.stack([c * dw1 + sn * ds1, sn * dw1 - c * ds1])
        angles = slice(2, 6, 3)                                              # the two angles, as a view
        for i, k in cubic:
            ed = self._edofs[i]
            a0, a1, nodes = u0[ed], u1[ed], ed[:, angles]
            if i not in self._angle_rows:                # the rows of the element's two angles in D (n_el, 2)
                rows = np.full(asm.n_dof, -1)
                rows[dd] = np.arange(dd.size)
                self._angle_rows[i] = rows[nodes]
            at = self._angle_rows[i]
            Av, As = self._rate_coefficients(k, a0, a1, dt)
            # the reversed step (u1 -> u0 over -dt from the end rates): its tangent, and its rate columns
            # [Rv, Rs] from the forward ones by the reversal, [Av, As] = [Rv, Rs] d(end rates)/d(start rates):
            # Rv = -Av at translations, and at the angles the inverse of the 2 x 2 map,
            # Rv = -cos Av + sin As, Rs = -sin Av - cos As; du = J_rev + Rv dv1/du_n + Rs ds1/du_n with
            # dv1/du_n = -2/dt (translations), dw1 and ds1 (angles), so at the angles
            # du = J_rev - Av (cos dw1 + sin ds1) + As (sin dw1 - cos ds1)
            J_rev = k.mid_point_inertia(a1, a0, v1[ed], s1[nodes], -dt, True)[1]
            alpha, beta = turned[:, at][:, :, None, :]                      # (n_el, 1, 2) each
            du = J_rev + (2.0 / dt) * Av
            du[:, :, angles] = J_rev[:, :, angles] - Av[:, :, angles] * alpha + As * beta
            ds = np.zeros(du.shape)
            ds[:, :, angles] = As
            out[0].append((ed, du))
            out[1].append((ed, Av))
            out[2].append((ed, ds))
        return out

    def cubic_masses(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, stretch0: np.ndarray | None,
                     dt: float) -> InertiaStart:
        """f_c of the cubic-mass groups: rate columns by unit calls, d/du_n by the reversal (module
        docstring)."""
        stretch0 = self._stretch(stretch0)
        rates = self._director_rates(u0, u1, v0, stretch0, dt)
        return self._start(u0, u1, self._cubic_terms(u0, u1, v0, stretch0, dt, rates))

    def _modal_terms(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, dt: float
                     ) -> tuple[list, list, list, list, list]:
        out = ([], [], [], [], [])
        for i, k in self.asm.configuration_masses:
            ed = self._edofs[i]
            if type(k) is FloatingFrameMass:
                n_el, n = ed.shape
                # dF/dv_n: complex steps along the n directions of v_n, one row per element and direction
                a0, a1 = (np.repeat(x[ed], n, axis=0) for x in (u0, u1))
                b0 = np.repeat(v0[ed], n, axis=0) + 1j * _STEP * np.tile(np.eye(n), (n_el, 1))
                F = k._mid_point_inertia_force(a0, a1, b0, dt).imag.reshape(n_el, n, n)     # [e, direction, i]
                dv = np.transpose(F, (0, 2, 1)) / _STEP
                # dF/du_n by the reversal F(u0, u1, v0; dt) = F(u1, u0, v1; -dt), v1 = 2 (u1 - u0)/dt - v0:
                # the reversed step's tangent plus its rate columns (-dv) times dv1/du0 = -2/dt
                v1 = 2.0 * (u1[ed] - u0[ed]) / dt - v0[ed]
                du = k.mid_point_inertia(u1[ed], u0[ed], v1, None, -dt, True)[1] + (2.0 / dt) * dv
            elif type(k) is FloatingFrameMass3D:
                du, dv = self._modal_body_3d(k, u0[ed], u1[ed], v0[ed], dt)
            else:
                continue
            out[0].append((ed, du))
            out[1].append((ed, dv))
        return out

    def modal_bodies(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, dt: float) -> InertiaStart:
        """f_c of the modal bodies: complex steps of the force's specification along u_n and v_n (in 3D
        along spins of the frame's R_n at fixed R_{n+1}: :meth:`_modal_body_3d`)."""
        return self._start(u0, u1, self._modal_terms(u0, u1, v0, dt))

    def _rotary_terms(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, dt: float
                      ) -> tuple[list, list, list, list, list]:
        rd = self.asm.rotation_dofs
        J = self.asm.rotary_inertia
        if not rd.size or not np.any(J):
            return [], [], [], [], []
        R0, R1 = exp_map(u0[rd]), exp_map(u1[rd])                           # (n_r, 3, 3)
        w, omega0 = cayley_between(u0[rd], u1[rd]), v0[rd]                  # (n_r, 3) rad, rad/s
        a = 2.0 / dt * w - omega0                                           # R_n Omega_{n+1}
        R0T = np.transpose(R0, (0, 2, 1))
        I0 = R0 @ J @ R0T                                                   # spatial inertia at t_n
        pi0 = np.einsum("nij,nj->ni", I0, omega0)
        B = R1 @ J @ R0T                                                    # d pi_{n+1} / d(R_n Omega_{n+1})
        # a spin d theta of R_n at fixed R_{n+1} moves w by -T_c(w)^{-1} cay(w) d theta
        dw = -cayley_spin_inverse(w) @ cayley(w)
        d_theta = (B @ (skew(a) + (2.0 / dt) * dw) + skew(pi0) - I0 @ skew(omega0)) / dt
        d_omega = -(B + I0) / dt
        # spin columns -> the reversed step's w' (the column maps of StartMatrix)
        return [(rd, d_theta @ _cayley_differential(cayley_between(u1[rd], u0[rd])))], [(rd, d_omega)], [], [], []

    def rotary_terms(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, dt: float) -> InertiaStart:
        """The rotary terms ``(pi_{n+1} - pi_n) / dt`` at spatial rotations (n_r nodes, in place of M a_m
        there), ``pi_{n+1} = R_{n+1} J Omega_{n+1}``, ``Omega_{n+1} = R_n^T (2 w / dt - omega_n)``,
        ``pi_n = R_n J R_n^T omega_n``, ``R_{n+1} = cay(w) R_n`` (closed forms, 3 x 3 per node): w.r.t. a
        spin d theta of R_n at fixed R_{n+1} (dR_n = hat(d theta) R_n, dw = -T_c(w)^{-1} cay(w) d theta)

            [R_{n+1} J R_n^T (hat(a) + 2/dt dw/d theta) + hat(pi_n) - R_n J R_n^T hat(omega_n)] / dt,

        a = 2 w / dt - omega_n, and w.r.t. omega_n ``-(R_{n+1} J R_n^T + R_n J R_n^T) / dt``."""
        return self._start(u0, u1, self._rotary_terms(u0, u1, v0, dt))

    def residual(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, stretch0: np.ndarray | None,
                 dt: float, motion: tuple | None = None) -> InertiaStart:
        """All inertia terms of the mid-point residual: :meth:`constant_mass` + :meth:`directors` +
        :meth:`cubic_masses` + :meth:`modal_bodies` + :meth:`rotary_terms`, the director rule evaluated
        once; ``motion``: the step's kinematics as :meth:`MidPoint._motion` gives them, when the caller
        has them (planar models: then the director rule is not evaluated here)."""
        terms = [self._constant_terms(dt)]
        if self.asm.director_dofs.size:
            stretch0 = self._stretch(stretch0)
            if motion is not None and motion[3] is None and motion[4] is not None:
                s1 = np.zeros(self.asm.n_dof)
                s1[self.asm.director_dofs] = motion[4][1]
                rates = (motion[0], s1, motion[4])
            else:
                rates = self._director_rates(u0, u1, v0, stretch0, dt)
            terms += [self._director_terms(u0, u1, v0, stretch0, dt, rates[2]),
                      self._cubic_terms(u0, u1, v0, stretch0, dt, rates)]
        if self.asm.configuration_masses:
            terms.append(self._modal_terms(u0, u1, v0, dt))
        terms.append(self._rotary_terms(u0, u1, v0, dt))
        return self._start(u0, u1, *terms)

    @staticmethod
    def _modal_body_3d(k: FloatingFrameMass3D, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, dt: float
                       ) -> tuple[np.ndarray, np.ndarray]:
        """dF/du_n, dF/dv_n (n_el, n_x, n_x) of 3D modal bodies' step inertia, u_n (n_el, n_x) moved as
        :meth:`Assembly.update` moves it (spins of R_n) at fixed u_{n+1}, by complex steps of the
        force's chart form: a spin e_j moves R_n to (I + i h hat(e_j)) R_n (exact to first order, all a
        complex step sees) and the chart's Cayley parameters w of ``R_{n+1} = cay(w) R_n`` by
        ``-T_c(w)^{-1} cay(w) e_j`` (:func:`cayley_spin_inverse`); r_n and q_n move the chart's r and q by
        minus their step. The step is not reversible in 3D (the chart is the start's), hence no reversal.
        The rotation columns of dF/du_n are returned in the reversed step's Cayley parameters w' (times
        ``T_c(w')``), the columns of :class:`StartMatrix` whose maps bring them back to spins."""
        n_el, n = u0.shape
        R0, z1 = exp_map(u0[:, 3:6]), k.chart_increment(u0, u1)
        w = z1[:, 3:6]
        dw = -cayley_spin_inverse(w) @ cayley(w)                            # (n_el, 3, 3): dw/d spin of R_n
        rows = 2 * n                                                        # per element: u_n, then v_n
        R0_rows = np.repeat(R0, rows, axis=0).astype(complex)
        q0_rows, z1_rows, v0_rows = (np.repeat(x, rows, axis=0).astype(complex) for x in (u0[:, 6:], z1, v0))
        step = 1j * _STEP
        for j in range(n):
            at_u, at_v = np.arange(n_el) * rows + j, np.arange(n_el) * rows + n + j
            v0_rows[at_v, j] += step
            if 3 <= j < 6:
                spin = np.zeros((n_el, 3))
                spin[:, j - 3] = 1.0
                R0_rows[at_u] += step * (skew(spin) @ R0)
                z1_rows[at_u, 3:6] += step * dw[:, :, j - 3]
            else:
                z1_rows[at_u, j] -= step
                if j >= 6:
                    q0_rows[at_u, j - 6] += step
        F = k._mid_point_inertia_force(R0_rows, q0_rows, v0_rows, z1_rows, dt).imag / _STEP
        D = np.transpose(F.reshape(n_el, 2, n, n), (0, 1, 3, 2))            # [e, arg, component, direction]
        du = D[:, 0].copy()
        # spin columns -> the reversed step's w' (R_n = cay(w') R_{n+1}): times T_c(w')
        du[:, :, 3:6] = du[:, :, 3:6] @ _cayley_differential(cayley_between(u1[:, 3:6], u0[:, 3:6]))
        return du, D[:, 1]
