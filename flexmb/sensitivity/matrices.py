"""Derivatives of the mid-point step's force terms with respect to the step's start state u_n.

Direct differentiation and the adjoint of a mid-point step need, besides the step's tangent
(derivatives w.r.t. u_{n+1}), the derivatives of its residual ``g(u_n, u_{n+1})`` w.r.t. u_n.
For the force terms they follow from the schemes' construction, without new kernels:

* **Symmetry of the mid-point forces.** The elements' energy-conserving mid-point forces are
  symmetric in the two ends of the step, ``q_m(u_n, u_{n+1}) = q_m(u_{n+1}, u_n)`` (they are
  discrete gradients of the strain energy: averages of the two ends' stresses along averaged
  rows, Crisfield & Shi 1993), so ``dq_m/du_n (u_n, u_{n+1})`` is the element's tangent kernel
  evaluated with the ends swapped, ``[dq_m/du_{n+1}](u_{n+1}, u_n)``. The same holds for the weight
  of a cubic mass over a step (:meth:`~flexmb.elements.hermite_mass2d.HermiteMass2D.mid_point_gravity`)
  and of a planar modal body (a discrete gradient with a correction that flips with the step).
* **Damping** uses the mean velocity ``(u_{n+1} - u_n) / dt``: ``q_d(u_n, u_{n+1}; dt) =
  q_d(u_{n+1}, u_n; -dt)``, so its start derivative is the damping tangent of the reversed step
  (ends swapped, -dt). One exception: the rotational damper of a 3D bushing between two moving
  sides takes ``C_s(R_a)`` at the step's start (:mod:`flexmb.elements.bushing`); its reversed
  step differs by ``C_s(R_a,n) - C_s(R_a,n+1)`` and the turning of C_s with R_a,n, added here in
  closed form (:func:`_bushing_damper_correction`).
* **The chords' dissipative force** of the energy-decaying schemes
  (:func:`~flexmb.integrators.dissipative.chord_dissipative_force`) is antisymmetric,
  ``q_xi(u_n, u_{n+1}) = -q_xi(u_{n+1}, u_n)``: its start derivative is minus the swapped tangent.

Each identity is checked to round-off, and each derivative against central differences, by
``tests/test_sensitivity_matrices.py`` for every element kind listed in :data:`SYMMETRIC_FORCES`.

Variables. At translations and planar rotations the derivative is the partial one at fixed
u_{n+1}. At spatial rotations (3D nodes with rotations) the kernels' tangents are taken w.r.t.
the Cayley parameters w of the step, ``R_{n+1} = cay(w) R_n``; a swapped call's are w.r.t. w' of
the reversed step, ``R_n = cay(w') R_{n+1}`` (w' = -w). The derivatives here are w.r.t. spins of
R_n at fixed R_{n+1} (``delta R_n = hat(delta theta) R_n``, as :meth:`Assembly.update` moves a
configuration): with the spin of the Cayley map ``delta theta = T_c(w') delta w'``,
``T_c(w) = (I + hat(w)/2) / (1 + |w|^2/4)``, the columns at rotation DOFs are multiplied by
``T_c(w')^{-1} = I - hat(w')/2 + w' w'^T/4`` (:attr:`StartMatrix.spin_maps`). The derivative at a
fixed step increment instead (the Newton variable) adds the ordinary tangent times the increment's
map; that composition belongs with the step derivative of the spatial rotations.

Not covered here: the inertia terms (cubic mass, modal bodies, rigid bodies' rotary terms), the
joints' ``G_m^T lambda`` and the weight of 3D modal bodies (not symmetric in the step's ends); these
and groups of other kinds are refused with a :class:`~flexmb.checks.ModelError` naming the group.

Results are :class:`StartMatrix` objects: element blocks (n_el, ne, ne) per group with their
global DOFs, applied to vectors by gather - einsum - scatter (no sparse matrix is built per step);
:meth:`StartMatrix.matrix` assembles the sparse matrix on all DOFs (n_dof, n_dof) when wanted.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Collection

import numpy as np
import scipy.sparse as sp

from flexmb.assembly import Assembly
from flexmb.checks import ModelError
from flexmb.elements.beam2d import Beam2D
from flexmb.elements.beam3d import Beam3D
from flexmb.elements.body_load import BodyPointLoad
from flexmb.elements.bushing import Bushing
from flexmb.elements.floating_frame import FloatingFrameMass, ModalBody
from flexmb.elements.force_elements import CoordinateSpringDamper, PointSpringDamper
from flexmb.elements.hermite_mass2d import HermiteMass2D
from flexmb.elements.revolute_spring import RevoluteSpring
from flexmb.elements.shell3 import Shell3
from flexmb.elements.solid import Solid
from flexmb.elements.truss import Truss
from flexmb.elements.user_force import UserForce
from flexmb.rotations import cayley_between, exp_map, skew

if TYPE_CHECKING:
    from flexmb.integrators.dissipative import EnergyDecayingMidPoint

#: element group types whose mid-point force and damping are symmetric in the step's ends (each
#: checked by the tests); the 3D bushing's rotational damper gets its closed-form correction
SYMMETRIC_FORCES = (Truss, Beam2D, Beam3D, Shell3, PointSpringDamper, CoordinateSpringDamper, RevoluteSpring,
                    Bushing, Solid, UserForce, BodyPointLoad, ModalBody)
#: configuration-dependent masses whose weight over a step is symmetric in its ends: the cubic
#: Beam2D mass and the planar modal body (the 3D modal body's is not: 9 % apart on a 0.5 rad step)
SYMMETRIC_WEIGHTS = (HermiteMass2D, FloatingFrameMass)


def cayley_spin_inverse(w: np.ndarray) -> np.ndarray:
    """T_c(w)^{-1} = I - hat(w)/2 + w w^T/4 (n, 3, 3) for Cayley parameters w (n, 3): the map from
    the spin of ``cay(w) R`` (R fixed) to the change of w (T_c(w) maps dw to the spin)."""
    return np.eye(3)[None] - 0.5 * skew(w) + 0.25 * np.einsum("ni,nj->nij", w, w)


def _scatter(n_dof: int, dofs: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Sum of element vectors ``values`` (n_el, ne) or (n_el, ne, k) into a global array (n_dof,)
    or (n_dof, k) at the element DOFs ``dofs`` (n_el, ne)."""
    index = dofs.ravel()
    if values.ndim == 2:
        return np.bincount(index, weights=values.ravel(), minlength=n_dof)
    flat = values.reshape(index.size, -1)
    return np.stack([np.bincount(index, weights=flat[:, j], minlength=n_dof) for j in range(flat.shape[1])], axis=1)


def same_maps(a: StartMatrix, b: StartMatrix) -> bool:
    """Whether two start derivatives have the same column maps (both none: planar models)."""
    if not a.rotation_dofs.size and not b.rotation_dofs.size:
        return True
    return np.array_equal(a.rotation_dofs, b.rotation_dofs) and np.array_equal(a.spin_maps, b.spin_maps)


@dataclass
class StartMatrix:
    """A derivative w.r.t. the step's start state u_n, ``D = (sum of element blocks) T``, on all
    DOFs (n_dof, n_dof), kept as element blocks.

    ``blocks``: per element group, its element DOFs (n_el, ne) (global indices) and blocks
    (n_el, ne, ne), in the residual's unit per the DOF's unit (N/m, N/rad, N m/m, N m/rad).
    ``rotation_dofs`` (n_r, 3) and ``spin_maps`` (n_r, 3, 3): T, the identity except the column map
    T_c(w')^{-1} at the spatial rotation DOFs (module docstring); empty without spatial rotations.
    """

    n_dof: int
    blocks: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    rotation_dofs: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int64))
    spin_maps: np.ndarray = field(default_factory=lambda: np.zeros((0, 3, 3)))

    def __add__(self, other: StartMatrix) -> StartMatrix:
        """The sum of two derivatives of the same step (the same column maps)."""
        if other.n_dof != self.n_dof or not same_maps(self, other):
            raise ValueError("StartMatrix: the two derivatives belong to different models or steps")
        return StartMatrix(self.n_dof, self.blocks + other.blocks, self.rotation_dofs, self.spin_maps)

    def matvec(self, x: np.ndarray) -> np.ndarray:
        """D x (n_dof,) or (n_dof, k) for a start-state perturbation x (n_dof,) or (n_dof, k)
        (spins at spatial rotations): gather to the elements, einsum, scatter."""
        x = np.asarray(x, dtype=float)
        rd = self.rotation_dofs
        if rd.size:
            x = x.copy()
            x[rd] = np.einsum("rij,rj...->ri...", self.spin_maps, x[rd])
        out = np.zeros(x.shape)
        for dofs, K in self.blocks:
            out += _scatter(self.n_dof, dofs, np.einsum("eij,ej...->ei...", K, x[dofs]))
        return out

    def rmatvec(self, y: np.ndarray) -> np.ndarray:
        """D^T y (n_dof,) or (n_dof, k) for y (n_dof,) or (n_dof, k) (an adjoint vector on the
        residual's rows)."""
        y = np.asarray(y, dtype=float)
        out = np.zeros(y.shape)
        for dofs, K in self.blocks:
            out += _scatter(self.n_dof, dofs, np.einsum("eji,ej...->ei...", K, y[dofs]))
        rd = self.rotation_dofs
        if rd.size:
            out[rd] = np.einsum("rji,rj...->ri...", self.spin_maps, out[rd])
        return out

    def matrix(self) -> sp.csr_matrix:
        """D as a sparse matrix on all DOFs (n_dof, n_dof) (for tests and small models: the step
        derivative applies :meth:`matvec` and :meth:`rmatvec` instead)."""
        rows = [np.repeat(dofs, dofs.shape[1], axis=1).ravel() for dofs, _ in self.blocks]
        cols = [np.tile(dofs, (1, dofs.shape[1])).ravel() for dofs, _ in self.blocks]
        vals = [K.ravel() for _, K in self.blocks]
        empty = [np.zeros(0, dtype=np.int64)]
        D = sp.coo_matrix((np.concatenate(vals + [np.zeros(0)]), (np.concatenate(rows + empty),
                           np.concatenate(cols + empty))), shape=(self.n_dof, self.n_dof)).tocsr()
        rd = self.rotation_dofs
        if not rd.size:
            return D
        # T: the identity with the 3x3 maps on the rotation DOFs' diagonal blocks
        keep = np.setdiff1d(np.arange(self.n_dof), rd.ravel())
        r = np.concatenate([keep, np.repeat(rd, 3, axis=1).ravel()])
        c = np.concatenate([keep, np.tile(rd, (1, 3)).ravel()])
        v = np.concatenate([np.ones(keep.size), self.spin_maps.ravel()])
        return (D @ sp.csr_matrix((v, (r, c)), shape=(self.n_dof, self.n_dof))).tocsr()


class StartDerivatives:
    """The start derivatives of the mid-point residual's force terms for one assembly.

    Each method returns the derivative of that term's contribution to the residual
    ``g = ... + q_m + q_d - f_m (+ q_xi)`` of :class:`~flexmb.integrators.schemes.MidPoint`
    (its sign as there) w.r.t. u_n, at the step from u0 = u_n to u1 = u_{n+1} (n_dof,) each.
    """

    def __init__(self, asm: Assembly) -> None:
        self.asm = asm
        model = asm.model
        #: per group: reference coordinates (n_el, nodes, dim) and element DOFs (n_el, ne)
        self._X = [model.coordinates[g.connectivity] for g in asm.groups]
        self._edofs = [asm.dofs.element_dofs(g) for g in asm.groups]

    def _empty(self, u0: np.ndarray, u1: np.ndarray) -> StartMatrix:
        """A derivative without blocks, with the step's column maps at spatial rotations."""
        rd = self.asm.rotation_dofs
        if not rd.size:
            return StartMatrix(self.asm.n_dof)
        # w' of the reversed step: R_n = cay(w') R_{n+1}
        return StartMatrix(self.asm.n_dof, [], rd, cayley_spin_inverse(cayley_between(u1[rd], u0[rd])))

    def _check(self, i: int) -> None:
        g = self.asm.groups[i]
        if type(g) not in SYMMETRIC_FORCES:
            raise ModelError(f"start derivative: element group {g.name!r} is a {type(g).__name__} group; the "
                             "derivative w.r.t. the step's start is available for "
                             + ", ".join(t.__name__ for t in SYMMETRIC_FORCES) + " groups in this version")

    def forces(self, u0: np.ndarray, u1: np.ndarray, skip: Collection[int] = ()) -> StartMatrix:
        """d q_m / d u_n of the elements' mid-point forces (the force part of
        :meth:`Assembly.mid_point_forces_and_inertia`; every group, the fused planar beams included):
        each group's tangent kernel with the ends swapped. ``skip``: indices of groups left out (their
        terms formed elsewhere: the adjoint's compiled planar beams)."""
        out = self._empty(u0, u1)
        for i, g in enumerate(self.asm.groups):
            if i in skip:
                continue
            self._check(i)
            ed = self._edofs[i]
            out.blocks.append((ed, g.mid_point_force_and_tangent(self._X[i], u1[ed], u0[ed])[1]))
        return out

    def damping(self, u0: np.ndarray, u1: np.ndarray, dt: float) -> StartMatrix:
        """d q_d / d u_n of the damping forces over the step of length dt (s)
        (:meth:`Assembly.mid_point_damping`): each damped group's damping tangent of the reversed
        step (ends swapped, -dt), plus the 3D bushings' correction."""
        out = self._empty(u0, u1)
        for i in self.asm.damped_groups:
            self._check(i)
            g, X, ed = self.asm.groups[i], self._X[i], self._edofs[i]
            K = g.mid_point_damping(X, u1[ed], u0[ed], -dt, True)[1]
            if type(g) is Bushing and g.dim == 3 and g.n_nodes == 2:
                K = K + _bushing_damper_correction(g, u0[ed], u1[ed], dt)
            out.blocks.append((ed, K))
        return out

    def external(self, u0: np.ndarray, u1: np.ndarray) -> StartMatrix:
        """-d f_m / d u_n of the external force over the step (:meth:`Assembly.mid_point_external_force`):
        the dead loads do not depend on u; the weight of cubic masses and planar modal bodies takes its
        swapped tangent."""
        out = self._empty(u0, u1)
        gravity = self.asm.model.gravity
        if not np.any(gravity):
            return out
        for i, kernels in self.asm.configuration_masses:
            if type(kernels) not in SYMMETRIC_WEIGHTS:
                raise ModelError(f"start derivative: the weight of element group {self.asm.groups[i].name!r} "
                                 f"({type(kernels).__name__}) over a step has no start derivative in this version "
                                 "(cubic Beam2D masses and planar modal bodies only)")
            ed = self._edofs[i]
            out.blocks.append((ed, -kernels.mid_point_gravity(u1[ed], u0[ed], gravity)[1]))
        return out

    def chords(self, scheme: EnergyDecayingMidPoint, u0: np.ndarray, u1: np.ndarray) -> StartMatrix:
        """d q_xi / d u_n of the chords' dissipative force of an energy-decaying scheme
        (:class:`~flexmb.integrators.dissipative.EnergyDecayingMidPoint` or its velocity variant, on
        this assembly): antisymmetric in the ends, so minus the swapped chord tangent. The chords
        join translations only."""
        from flexmb.integrators.dissipative import chord_dissipative_force

        if scheme.asm is not self.asm:
            raise ValueError("start derivative: the scheme belongs to another assembly")
        out = self._empty(u0, u1)
        for i, Xc, dofs, EA in scheme._chords:
            ed = self._edofs[i]
            n_el, n_c, m = ed.shape[0], dofs.shape[0], dofs.shape[1]
            ends = [u[ed][:, dofs].reshape(n_el * n_c, m) for u in (u1, u0)]       # swapped: (u1, u0)
            K = -chord_dissipative_force(Xc, ends[0], ends[1], EA, scheme.xi, True)[1].reshape(n_el, n_c, m, m)
            blocks = np.zeros((n_el, ed.shape[1], ed.shape[1]))
            for c in range(n_c):                                   # a shell's three edges share nodes
                blocks[:, dofs[c][:, None], dofs[c][None, :]] += K[:, c]
            out.blocks.append((ed, blocks))
        return out

    def residual(self, u0: np.ndarray, u1: np.ndarray, dt: float, scheme: object = None) -> StartMatrix:
        """All force terms of the mid-point residual: :meth:`forces` + :meth:`damping` +
        :meth:`external`, and :meth:`chords` when ``scheme`` is an energy-decaying one."""
        out = self.forces(u0, u1) + self.damping(u0, u1, dt) + self.external(u0, u1)
        if scheme is not None and getattr(scheme, "_chords", None):
            out = out + self.chords(scheme, u0, u1)
        return out


def _bushing_damper_correction(g: Bushing, u0: np.ndarray, u1: np.ndarray, dt: float) -> np.ndarray:
    """What the reversed step's damping tangent misses for 3D bushings between two moving sides,
    (n_el, 12, 12), in the reversed step's Cayley parameters w' (columns):

    the rotational damper is ``C_s(R_a,n) h`` on b's rotation (minus on a's), ``h = (w_b - w_a) / dt``
    (h is symmetric under the reversal), while the reversed step takes ``C_s(R_a,n+1)``. With
    w' = -w: ``d(C_s h)/dw'_b = -C_s / dt``, ``d(C_s h)/dw'_a = C_s / dt + (-hat(C_s h) + C_s hat(h)) T_c(w'_a)``
    (``delta C_s = hat(dtheta) C_s - C_s hat(dtheta)`` for a spin dtheta of R_a,n); the reversed
    step's tangent has C_s(R_a,n+1) in place of C_s and no turning term."""
    ra, rb = g._rot(0), g._rot(g.dofs_per_node)
    w_a, w_b = cayley_between(u0[:, ra], u1[:, ra]), cayley_between(u0[:, rb], u1[:, rb])
    h = (w_b - w_a) / dt                                                    # (n_el, 3) rad/s
    C = []
    for u in (u0, u1):
        E = exp_map(u[:, ra]) @ g.axes                                       # (n_el, 3, 3)
        C.append(E @ (g.c_r[:, :, None] * E.transpose(0, 2, 1)))             # C_s (n_el, 3, 3)
    dC = C[0] - C[1]
    Ch = np.einsum("nij,nj->ni", C[0], h)
    # T_c(w'_a) = (I + hat(w'_a)/2) / (1 + |w'_a|^2/4), w'_a = -w_a
    Tc = (np.eye(3)[None] - 0.5 * skew(w_a)) / (1.0 + 0.25 * np.einsum("ni,ni->n", w_a, w_a))[:, None, None]
    turning = (-skew(Ch) + C[0] @ skew(h)) @ Tc
    K = np.zeros((g.n_elements, g.ndof, g.ndof))
    K[:, rb, rb] = -dC / dt
    K[:, rb, ra] = dC / dt + turning
    K[:, ra, rb] = dC / dt
    K[:, ra, ra] = -(dC / dt + turning)
    return K
