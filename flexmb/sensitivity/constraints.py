"""Derivatives of the joints' terms of a step with respect to its start state, to time and to the
amplitude of a drive (issue 33, piece P6).

With joints the mid-point step solves ``R = [g + G_m^T lambda; Phi(u_{n+1}, t_{n+1})] = 0``
(``time_stepping._sub_step``, scaled there by kappa and the multipliers' scale: see
:mod:`flexmb.sensitivity.transient`), with the discrete gradient ``G_m(u_n, u_{n+1}, d)`` of
:meth:`~flexmb.multibody.constraints.ConstraintSystem.evaluate` (``G_m d = Phi_{n+1} - Phi_n``, d the
step increment). Direct differentiation and the adjoint need, besides the step Jacobian, the
derivatives of these rows w.r.t. the start state u_n at fixed u_{n+1} and lambda:

* **Constraint force** ``G_m^T lambda``: symmetric in the step's ends. G_m takes averages of the two
  ends' vectors (``P_m``, ``r_m``), the averaged scales of timed terms and, per rotating vector, the
  map ``[I, -hat(r_m)]`` (3D, Cayley) or ``[I, sigma(dtheta) k x r_m]`` (2D, sigma even); the
  reversed step (ends, times and increment swapped: d' = ``cayley_increment(u_{n+1}, u_n)``, -d
  at translations and planar angles, -w at 3D rotations) gives the same force to round-off (tested).
  So ``d(G_m^T lambda)/du_n`` is the evaluate's tangent K of the reversed step,
  ``evaluate(u_n, t_n, lambda, u0=u_{n+1}, d=d', t0=t_{n+1}).K`` -- w.r.t. the reversed step's
  increment: u_n itself at translations and planar angles, w' at 3D rotations, brought to spins of
  R_n by the column maps T_c(w')^{-1} of :mod:`flexmb.sensitivity.matrices` (the same maps as the
  force terms' :class:`~flexmb.sensitivity.matrices.StartMatrix`, so the two add).
* **Constraint values** ``Phi(u_{n+1}, t_{n+1})`` do not depend on u_n: ``dPhi/du_n = 0``.
* **End-point form** (Newmark, generalized-alpha): ``C(u_{n+1})^T lambda_{n+1}`` does not depend on
  u_n either; generalized-alpha's start term ``alpha_hat C(u_n)^T lambda_n`` is the end-point terms at
  the start state (:meth:`ConstraintStartDerivatives.end_point`: K w.r.t. spins, and C).

**Time.** :meth:`ConstraintStartDerivatives.time_derivative` gives dPhi/dt at fixed u of rheonomic
joints (drives: right-hand sides f(t) and, of 3D driven revolute joints, the scales -sin f(t), cos f(t)) by a
complex step in t of each drive's function (exact to round-off when the function takes complex
time, as numpy expressions do); a drive that does not (a table lookup, ``float()``) falls back to
the central difference of :meth:`~flexmb.multibody.constraints.ConstraintSystem.time_derivative`.

**Drive amplitudes.** flexmb's drives are functions f(t) (``Model.add_joint(..., drive=f)``,
``Model.prescribe(node, dof, f)``) without a separate amplitude, so the parameter here
(:class:`DriveAmplitude`) is a multiplier p of the whole function, ``f_p(t) = p f(t)`` (baseline 1):
``apply`` wraps the function, the derivatives are taken at p = 1. A driven joint's rows:
``dPhi/dp = -f(t)`` for a right-hand side (2D revolute and prismatic, 3D prismatic), and for the
scales of a 3D revolute ``ds/dp = f(t) ds/df`` times ``P_a . P_b``; the mid-point force depends on p
through the averaged scales (3D revolute only), linearly, so ``d(G_m^T lambda)/dp`` is the force with
those scales replaced by their derivatives. The scales' and right-hand sides' derivatives are complex
steps in p (exact). A prescribed motion (``prescribe``) is not a joint: its DOF takes
``u_p(t) = p f(t)``, so ``du_p/dp = f(t)`` and the mid-point rate recurrence carries dv_p
(:meth:`DriveAmplitude.prescribed_derivative`). A separate amplitude in the model API
(``drive=(A, f)``) would make the parameter an amplitude proper; it is not needed for the derivatives.

Not covered (ModelError naming it): ties of nodes to modal bodies (their rows are not written in
the joints' terms and their symmetry is not checked).
"""
from __future__ import annotations

import copy
import dataclasses
import warnings
from dataclasses import dataclass

import numpy as np

from flexmb.assembly import Assembly
from flexmb.checks import CheckedFunction, ModelError, keywords_listed
from flexmb.model import Model, NodalValue
from flexmb.multibody.constraints import ConstraintSystem, ConstraintTerms
from flexmb.multibody.joints import Joint, joint_equations
from flexmb.rotations import cayley_between
from flexmb.sensitivity.matrices import StartMatrix, cayley_spin_inverse

#: the imaginary step of the complex-step derivatives of drive functions (no difference is
#: taken, so any tiny step is exact to round-off)
_STEP = 1e-30


def triplet_blocks(rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Triplets (nnz,) of a matrix as :class:`StartMatrix` element blocks: DOFs (nnz, 2) ``[row,
    column]`` and blocks (nnz, 2, 2) holding the value at (0, 1), so that gather - einsum - scatter
    applies the matrix and its transpose (duplicates add up)."""
    blocks = np.zeros((values.size, 2, 2))
    blocks[:, 0, 1] = values
    return np.stack([rows, cols], axis=1).astype(np.int64), blocks


class ConstraintStartDerivatives:
    """The joints' terms of a step differentiated w.r.t. its start state, for one assembly (module
    docstring). ModelError for a model without joints or with ties to modal bodies."""

    def __init__(self, asm: Assembly) -> None:
        cs = asm.constraints
        if cs is None:
            raise ModelError("constraint start derivatives: the model has no joints")
        if cs.ties:
            raise ModelError(f"constraint start derivatives: the {cs.ties[0].label} is not covered (ties of nodes "
                             "to modal bodies are not written in the joints' terms); joints only in this version")
        self.asm, self.cs = asm, cs

    def _maps(self, u0: np.ndarray, u1: np.ndarray) -> StartMatrix:
        """An empty start derivative with the step's column maps at spatial rotations, as
        :class:`~flexmb.sensitivity.matrices.StartDerivatives` makes them (so the two add)."""
        rd = self.asm.rotation_dofs
        if not rd.size:
            return StartMatrix(self.asm.n_dof)
        return StartMatrix(self.asm.n_dof, [], rd, cayley_spin_inverse(cayley_between(u1[rd], u0[rd])))

    def reversed_terms(self, u0: np.ndarray, u1: np.ndarray, lam: np.ndarray, t0: float, t1: float
                       ) -> ConstraintTerms:
        """The mid-point terms of the reversed step, from (u1, t1) to (u0, t0) with the same
        multipliers lam (n_c,): its ``force`` equals the forward step's (module docstring), its K
        is the start derivative in the reversed step's increments."""
        d_rev = self.asm.cayley_increment(u1, u0)
        return self.cs.evaluate(u0, t0, lam, u0=u1, d=d_rev, t0=t1)

    def force(self, u0: np.ndarray, u1: np.ndarray, lam: np.ndarray, t0: float, t1: float) -> StartMatrix:
        """d(G_m^T lambda)/du_n (n_dof, n_dof), N/m (N/rad, N m/m, N m/rad), of the mid-point step
        from (u0, t0) to (u1, t1) (s) at fixed u_{n+1} and multipliers lam (n_c,) (N, N m); columns
        w.r.t. spins of R_n at spatial rotations. Rows: all DOFs, as ``ConstraintTerms.force``."""
        out = self._maps(u0, u1)
        ct = self.reversed_terms(u0, u1, lam, t0, t1)
        out.blocks.append(triplet_blocks(*ct.k))
        return out

    def end_point(self, u: np.ndarray, t: float, lam: np.ndarray) -> tuple[StartMatrix, ConstraintTerms]:
        """The end-point terms ``C(u)^T lambda`` at a state (u, t) (generalized-alpha's start term,
        at the step's start): their derivative w.r.t. u (spins at spatial rotations: the end-point
        increments) as a StartMatrix without column maps, and the terms themselves (their C is the
        derivative w.r.t. lambda, their force the term)."""
        ct = self.cs.evaluate(u, t, lam)
        return StartMatrix(self.asm.n_dof, [triplet_blocks(*ct.k)]), ct

    def time_derivative(self, u: np.ndarray, t: float) -> np.ndarray:
        """dPhi/dt (n_c,) at fixed u (n_dof,), m/s or rad/s per row: complex steps in t of the drives
        (module docstring), zero for joints that do not depend on time."""
        cs = self.cs
        out = np.zeros(cs.n)
        if not cs.rheonomic:
            return out
        P = cs.vectors(u)[0]
        for index, joint in enumerate(cs.joints):
            if joint.drive is None:
                continue
            raw = joint.drive.function
            try:
                with warnings.catch_warnings():             # a cast to float drops the imaginary part
                    warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
                    value = raw(t + 1j * _STEP)
                complex_ok = np.iscomplexobj(value) and bool(np.isfinite(value))
            except (TypeError, ValueError):
                complex_ok = False
            if not complex_ok:                    # a function of real time only: central differences
                rows = cs.joint_rows[index]
                out[rows] = cs.time_derivative(u, t)[rows]
                continue
            rhs, scales = _joint_parts(self.asm, joint, lambda s, f=raw: f(s + 1j * _STEP), t)
            out += _rows_times(cs, index, P, rhs, scales)
        return out


def _joint_parts(asm: Assembly, joint: Joint, drive, t: float) -> tuple[np.ndarray, np.ndarray]:
    """Imaginary parts / _STEP of the right-hand sides (n_rows,) and of the bilinear scales
    (n_terms,) of ``joint``'s equations with its drive replaced by the complex function ``drive``
    (rows and terms in the order ConstraintSystem numbers them); zero where they do not depend on it."""
    model = asm.model
    eqs = joint_equations(dataclasses.replace(joint, drive=drive), model.coordinates, model.dim,
                          asm.dofs.has_rotations)
    rhs = np.array([np.imag(e.rhs(t)) / _STEP if callable(e.rhs) else 0.0 for e in eqs])
    scales = np.array([np.imag(s(t)) / _STEP if callable(s) else 0.0 for e in eqs for _, _, s in e.bilinear])
    return rhs, scales


def _joint_terms(cs: ConstraintSystem, index: int) -> np.ndarray:
    """Positions (n_terms,) of joint ``index``'s bilinear terms in the system's term arrays."""
    rows = cs.joint_rows[index]
    return np.flatnonzero((cs.b_row >= rows.start) & (cs.b_row < rows.stop))


def _rows_times(cs: ConstraintSystem, index: int, P: np.ndarray, rhs: np.ndarray, scales: np.ndarray
                ) -> np.ndarray:
    """The change of Phi (n_c,) for changes ``rhs`` of joint ``index``'s right-hand sides and
    ``scales`` of its bilinear terms, at the vectors P (n_v, dim)."""
    out = np.zeros(cs.n)
    rows = cs.joint_rows[index]
    out[rows] -= rhs
    terms = _joint_terms(cs, index)
    np.add.at(out, cs.b_row[terms], scales * np.einsum("ki,ki->k", P[cs.b_a[terms]], P[cs.b_b[terms]]))
    return out


@dataclass(eq=False)
class DriveAmplitude:
    """A multiplier p of a drive function (baseline 1): of joint ``joint``'s drive (a joint name),
    or of the prescribed motion of ``node``'s DOF ``dof`` (module docstring). Unit ``"1"``.
    Parameters compare by identity."""

    name: str
    joint: str | None = None
    node: int | None = None
    dof: str | None = None
    kind: str = "drive amplitude"
    unit: str = "1"

    def value(self, model: Model) -> float:
        """p in ``model``: 1 (the model's own drive); ModelError if the drive does not exist."""
        self._source(model)
        return 1.0

    def apply(self, model: Model, value: float) -> Model:
        """A copy of ``model`` whose drive is ``value`` times the model's; ``model`` is not changed."""
        value = float(value)
        if not np.isfinite(value):
            raise ModelError(f"parameter {self.name!r}: value must be finite, got {value!r}")
        new = copy.deepcopy(model)
        source = self._source(new)
        if isinstance(source, Joint):
            raw = source.drive.function
            source.drive = CheckedFunction(lambda t, f=raw: value * f(t), f"drive of joint {source.name!r}")
        else:
            f = source.value
            scaled = (lambda t, f=f: value * f(t)) if callable(f) else value * float(f)
            new.prescribed[(self.node, self.dof)] = NodalValue(self.node, self.dof, scaled, "prescribed")
        new.revision += 1
        return new

    def _source(self, model: Model) -> Joint | NodalValue:
        if self.joint is not None:
            joint = next((j for j in model.joints if j.name == self.joint), None)
            if joint is None:
                raise ModelError(f"parameter {self.name!r}: the model has no joint {self.joint!r}")
            if joint.drive is None:
                raise ModelError(f"parameter {self.name!r}: joint {self.joint!r} is not driven")
            return joint
        entry = model.prescribed.get((self.node, self.dof))
        if entry is None:
            raise ModelError(f"parameter {self.name!r}: node {self.node} DOF {self.dof!r} is not prescribed")
        return entry

    def _joint_index(self, asm: Assembly) -> int:
        joint = self._source(asm.model)
        if not isinstance(joint, Joint):
            raise ModelError(f"parameter {self.name!r}: a prescribed motion has no constraint rows "
                             "(prescribed_derivative gives its DOF's derivative)")
        return next(i for i, j in enumerate(asm.constraints.joints) if j is joint)

    def _parts(self, asm: Assembly, t: float) -> tuple[int, np.ndarray, np.ndarray]:
        """Joint index and d(right-hand sides)/dp, d(scales)/dp at time t (p = 1)."""
        index = self._joint_index(asm)
        raw = asm.constraints.joints[index].drive.function
        rhs, scales = _joint_parts(asm, asm.constraints.joints[index],
                                   lambda s, f=raw: (1.0 + 1j * _STEP) * f(s), t)
        return index, rhs, scales

    def constraint_derivative(self, asm: Assembly, u: np.ndarray, t: float) -> np.ndarray:
        """dPhi/dp (n_c,) at the state u (n_dof,) and time t (s): m or rad per unit p (the step's
        constraint rows, at its end)."""
        cs = asm.constraints
        index, rhs, scales = self._parts(asm, t)
        return _rows_times(cs, index, cs.vectors(u)[0], rhs, scales)

    def force_derivative(self, asm: Assembly, u1: np.ndarray, t1: float, lam: np.ndarray,
                         u0: np.ndarray | None = None, d: np.ndarray | None = None, t0: float | None = None
                         ) -> np.ndarray:
        """d(G^T lambda)/dp (n_dof,), N (N m) per unit p, at the arguments of
        :meth:`~flexmb.multibody.constraints.ConstraintSystem.evaluate` (mid-point form with u0, d,
        t0; end-point form without): the force with the joint's scales replaced by their derivatives
        (the force is linear in them), zero unless the drive turns a 3D revolute joint."""
        from flexmb.compiled import constraints as kernels, kernel_array

        cs = asm.constraints
        mid = u0 is not None
        index, _, ds = self._parts(asm, t1)
        if mid:
            ds = 0.5 * (self._parts(asm, t0)[2] + ds)
        if not np.any(ds):
            return np.zeros(asm.n_dof)
        scales = np.zeros(cs.b_row.size)
        scales[_joint_terms(cs, index)] = ds
        if mid:
            P0, r0 = cs.vectors(u0)
            d = kernel_array(d)
        else:
            P0 = r0 = np.zeros((0, cs.dim))
            d = kernel_array(u1)
        u1, lam, rhs = kernel_array(u1), kernel_array(lam), kernel_array(cs.rhs(t1))
        # the force is linear in the bilinear scales: with them all zero only the linear and DOF
        # terms remain, which do not depend on p
        out = [kernels.evaluate(mid, u1, P0, r0, d, lam, s, s, rhs, cs.n_dof, cs._n_joint_g, cs._n_joint_k,
                                *cs._kernel_arrays)[1] for s in (scales, np.zeros_like(scales))]
        return out[0] - out[1]

    def prescribed_derivative(self, asm: Assembly, t: float) -> np.ndarray:
        """du/dp (n_dof,) at time t (s): f(t) at the prescribed DOF, zero elsewhere (m or rad)."""
        source = self._source(asm.model)
        if isinstance(source, Joint):
            return np.zeros(asm.n_dof)
        out = np.zeros(asm.n_dof)
        f = source.value
        out[asm.dofs.index(self.node, self.dof)] = float(f(t)) if callable(f) else float(f)
        return out


@keywords_listed
def drive_amplitude(joint: Joint | str | None = None, node: int | None = None, dof: str | None = None,
                    name: str | None = None) -> DriveAmplitude:
    """A :class:`DriveAmplitude`: the multiplier of ``joint``'s drive (a Joint or its name), or of
    the prescribed motion of ``node``'s ``dof``."""
    if (joint is None) == (node is None or dof is None):
        raise ModelError("drive_amplitude: give a driven joint, or a node and the DOF of its prescribed motion")
    if joint is not None:
        joint_name = joint.name if isinstance(joint, Joint) else str(joint)
        return DriveAmplitude(name or f"amplitude of the drive of joint {joint_name!r}", joint=joint_name)
    return DriveAmplitude(name or f"amplitude of node {node} {dof}", node=int(node), dof=str(dof))
