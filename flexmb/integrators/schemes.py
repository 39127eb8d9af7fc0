"""Time integration schemes: the energy-conserving mid-point scheme and trapezoidal Newmark.

A scheme knows how the end-of-step velocity and acceleration follow from the end-of-step
displacement, and which residual and Jacobian Newton has to zero. It does not loop over time
(:mod:`flexmb.integrators.time_stepping` does) and does not solve (:mod:`.newton` does).

Residual sign convention: ``g = q_int - f_ext + M a`` (internal minus external plus inertia).
At prescribed DOFs ``g`` is the reaction the supports exert on the structure.

Spatial rotations (3D nodes with rotations): ``v`` holds the spatial angular velocity omega and
``a`` the spatial angular acceleration at those DOFs; the rotary inertia J (reference
orientation) acts through the angular momentum ``pi = R J R^T omega``. Newton iterates on the
end-of-step configuration with the scheme's own correction rule (:meth:`Scheme.update`).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from flexmb.assembly import Assembly
from flexmb.elements.hermite_mass2d import director_step
from flexmb.integrators import newton
from flexmb.integrators.newton import MAX_ROTATION_CORRECTION, NewtonLog, NewtonSettings
from flexmb.model import ModelError
from flexmb.multibody.constraints import ConstraintTerms
from flexmb.rotations import (exp_map, log_map, reference_cayley_resolvent, reference_exp_map,
                              reference_tangent_operator, skew, tangent_operator)


@dataclass
class State:
    """Displacements, velocities, accelerations (n_dof,) and support reactions at time t; with
    joints also their multipliers (n_c,) and constraint force G^T lambda (n_dof,)."""

    t: float
    u: np.ndarray
    v: np.ndarray
    a: np.ndarray
    reaction: np.ndarray
    work: float = 0.0        # work of loads, reactions and driven joints since the start, J
    lam: np.ndarray = field(default_factory=lambda: np.zeros(0))
    constraint_force: np.ndarray | None = None
    #: ``|p|`` of the momenta over the free DOFs (kg m/s), kept by :meth:`Scheme._scale` for the
    #: iterations of the step that starts here
    momentum_norm: float | None = field(default=None, repr=False, compare=False)
    #: mid-point scheme with cubic-mass beams: the director stretch rates (n_dof,), 1/s, at the
    #: rotation DOFs of their nodes (:attr:`Assembly.director_dofs`), zero elsewhere; else None
    stretch: np.ndarray | None = None
    #: energy dissipated by damping forces since the start, J (>= 0)
    dissipated: float = 0.0
    #: work of the joints' (and ties') forces since the start, J, a part of ``work``: the drives'
    #: work; zero to round-off for joints that do not depend on time (a check of their discrete
    #: gradient, which the energy balance alone cannot see)
    joint_work: float = 0.0


#: an empty float array: the unused arguments of compiled calls
_EMPTY = np.zeros(0)


@dataclass
class StepResidual:
    """What Newton needs at one iterate, plus what the step bookkeeping needs afterwards."""

    g: np.ndarray            # (n_dof,) residual over all DOFs, N
    jacobian_data: np.ndarray | None  # (nnz,) values of dg_free/du1_free on the assembly pattern (None: not asked)
    force_scale: float       # N
    f_ext: np.ndarray        # (n_dof,) external force acting over the step (scheme's average), N
    increment: np.ndarray | None = None   # (n_dof,) the step increment d of the scheme
    velocity: np.ndarray | None = None    # (n_dof,) end-of-step velocity implied by the iterate
    acceleration: np.ndarray | None = None  # (n_dof,) the scheme's acceleration implied by it
    #: mid-point scheme with cubic-mass beams: the director nodes' step at the iterate, (5, n_d)
    #: as :func:`~flexmb.elements.hermite_mass2d.director_step` returns it (its row 1: s_{n+1})
    director: np.ndarray | None = None
    #: (n_dof,) the damping forces in g (:meth:`Assembly.mid_point_damping`, end-point for
    #: Newmark), None without damped groups
    damping: np.ndarray | None = None


class Scheme(ABC):
    """A one-step implicit scheme for M a + q(u) = f(t)."""

    name: str = ""
    #: a step of dt is taken as sub-steps of these fractions of dt, in order (they add up to 1)
    stages: tuple[float, ...] = (1.0,)

    def __init__(self, assembly: Assembly) -> None:
        self.asm = assembly
        #: modified Newton's last factorisation, kept from one step to the next of the same dt
        #: (:class:`~flexmb.integrators.newton.KeptFactorization`)
        self.kept_factorization = newton.KeptFactorization()

    @cached_property
    def regular_inertia(self) -> bool:
        """Whether the step Jacobian, ``dq/du + c M`` with the scheme's c of order 1/dt^2, cannot
        be singular by the model's structure: no joints or ties, and inertia at every free DOF
        (the diagonal of the mass on the free DOFs, cubic and rotary inertia included, positive).
        A near-zero pivot of such a Jacobian is the conditioning of a fine mesh (the element
        stiffness of 16384 Euler-Bernoulli elements over the mass term of dt = 0.04 s: 1e15),
        not a mechanism (see :func:`flexmb.integrators.newton.newton_solve`'s ``check_singular``)."""
        return self.asm.constraints is None and self.asm.inertia_at_every_free_dof

    def initial_state(self, t0: float, u0: np.ndarray, v0: np.ndarray) -> State:
        n_c = self.asm.constraints.n if self.asm.constraints else 0
        return State(t0, u0.copy(), v0.copy(), np.zeros_like(u0), np.zeros_like(u0), lam=np.zeros(n_c),
                     constraint_force=np.zeros_like(u0))

    @abstractmethod
    def constraint_terms(self, s: State, dt: float, u1: np.ndarray, lam: np.ndarray,
                         res: StepResidual | None = None) -> ConstraintTerms:
        """The joints' values, force and derivatives at the end state u1 (scheme's increments);
        ``res`` is the residual at u1 (it carries the step increment)."""

    @abstractmethod
    def constraint_work(self, s: State, force1: np.ndarray, u1: np.ndarray) -> float:
        """Work (J) of the constraint forces over the step (zero for time-independent joints)."""

    def predict(self, s: State, dt: float, rigid: bool = True) -> np.ndarray:
        """Start value of u_{n+1} for Newton (``rigid=False``: every node extrapolated with the
        last acceleration, the second start a failed step gets before a cut-back).

        Nodes with rotations (spatial, or planar with rz) move as if rigidly attached to their own
        rotation, ``dx = dt T(dt omega) v`` (T as in :func:`flexmb.rotations.tangent_operator`; in
        the plane ``T(theta) = (sin theta / theta) I + ((1 - cos theta) / theta) J`` with J the
        quarter turn): for any rigid motion this is exact up to a translation common to all nodes,
        so stiff spinning members are not stretched by O((omega dt)^2) and Newton does not start
        from huge axial and bending forces. Other nodes extrapolate with the last acceleration.
        Measured on Simo's spin-up beam of 1024 planar elements at dt = 0.04 s, t = 8 s: the
        predicted bending deformation (node rotation less chord angle) misses the step's solution
        by 3e-6 rad, the strain by 4.5e-5; extrapolated with the accelerations, by 1.1e-3 rad and
        4.5e-4, forces that derailed Newton on fine meshes (4096 elements, t = 11.4 s).
        """
        asm = self.asm
        rd = asm.rotation_dofs
        if rigid and not rd.size:
            # planar rotations (or none) in one compiled call: a small model's step spent 20-30 us in numpy here
            return self._planar_predictor()(s.u, s.v, s.a, dt, asm.planar_rotations)
        d = dt * s.v + 0.5 * dt**2 * s.a
        if rigid:                                # spatial rotations
            tr = rd - 3                          # (n_r, 3): a 3D node's translations precede its rotations
            d[tr] = dt * np.einsum("nij,nj->ni", tangent_operator(dt * s.v[rd]), s.v[tr])
            d[rd] = dt * s.v[rd]
        return asm.update(s.u, d)

    def _planar_predictor(self):
        """:func:`flexmb.compiled.predictor.planar_rigid_prediction`, imported once (2 us a call)."""
        if not hasattr(self, "_planar_prediction"):
            from flexmb.compiled.predictor import planar_rigid_prediction

            self._planar_prediction = planar_rigid_prediction
        return self._planar_prediction

    @abstractmethod
    def increment(self, s: State, u1: np.ndarray) -> np.ndarray:
        """Step increment d (n_dof,) from u_n to u1 in the scheme's rotation parameters."""

    def end_stretch(self, s: State, u1: np.ndarray, dt: float, res: StepResidual | None = None) -> np.ndarray | None:
        """Director stretch rates (n_dof,) at the end of the step to u1 (schemes with a director
        form of the cubic mass), else None; ``res``, the residual at u1, may carry them."""
        return None

    @abstractmethod
    def update(self, s: State, u1: np.ndarray, du: np.ndarray) -> np.ndarray:
        """Iterate u1 corrected by a Newton correction du (the Jacobian's variable)."""

    def solve_step(self, s: State, dt: float, u1: np.ndarray, settings: NewtonSettings, length_scale: float,
                   check_singular: bool = True) -> tuple[NewtonLog, StepResidual] | None:
        """The step's full Newton solve (without joints) in one compiled call where the scheme has
        one for the model: u1 (n_dof,), the start value, receives the solution; returns the log and
        the residual at the solution, or raises as :func:`~flexmb.integrators.newton.newton_solve`
        (``check_singular`` as there). None: no compiled solve applies (the caller runs
        newton_solve)."""
        return None

    def solve_joint_step(self, s: State, dt: float, u1: np.ndarray, lam0: np.ndarray, lam_scale: float,
                         idle_scale: float, settings: NewtonSettings, length_scale: float, check_singular: bool = True
                         ) -> tuple[NewtonLog, StepResidual, ConstraintTerms, np.ndarray] | None:
        """:meth:`solve_step` of a model with joints: the Newton solve of the step's augmented system
        (:func:`~flexmb.integrators.time_stepping._sub_step`; Newton's unknowns x = (u1[free],
        lambda / lam_scale), from u1 and lam0 (n_c,)) in one compiled call where the scheme has one
        for the model. Returns the log, the residual (with the joints' force) and the constraint
        terms at the solution and x, or raises as newton_solve; None: the caller runs newton_solve."""
        return None

    @abstractmethod
    def kinematics(self, s: State, dt: float, u1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """End-of-step velocity and acceleration (n_dof,) implied by u1."""

    @abstractmethod
    def residual(self, s: State, dt: float, u1: np.ndarray, tangent: bool = True) -> StepResidual:
        """Residual and Jacobian data at the iterate u1; without ``tangent`` (modified Newton
        reusing a factorisation) the element kernels' residual-only forms run and the Jacobian
        data is None."""

    def reaction(self, res: StepResidual) -> np.ndarray:
        """Support reactions (n_dof,), zero at free DOFs, from a converged residual."""
        r = np.zeros_like(res.g)
        p = self.asm.dofs.prescribed
        r[p] = res.g[p]
        return r

    @abstractmethod
    def work_increment(self, s: State, res: StepResidual, u1: np.ndarray, reaction: np.ndarray | None = None) -> float:
        """Work of loads and support reactions over the step (J), consistent with the scheme;
        ``reaction``: :meth:`reaction` of res if already computed."""

    def dissipation_increment(self, s: State, res: StepResidual, u1: np.ndarray) -> float:
        """Energy dissipated by the damping forces over the step (J): their work against the
        step's increment, ``q_d . d`` in the mid-point scheme (exactly what its energy balance
        loses to them)."""
        if res.damping is None:
            if self.asm.damped_groups:
                # a scheme that leaves the damping forces out would run an undamped model silently
                raise ModelError(f"the {self.name} scheme does not apply damping forces (dampers, Rayleigh "
                                 "damping) yet; use the mid-point or Newmark scheme")
            return 0.0
        d = res.increment if res.increment is not None else self.increment(s, u1)
        return newton.dot_product(res.damping, d)

    def _scale(self, s: State, dt: float, u1: np.ndarray, v1: np.ndarray, *terms: np.ndarray) -> float:
        """Force scale of the residual (N): the largest of its terms and of the momenta / dt.

        The momenta matter when every force vanishes (a torque-free spin about a principal
        axis): the residual is then round-off of momenta, not of forces.
        """
        asm = self.asm
        if s.momentum_norm is None:
            p0 = asm.mass_times(s.v)
            rd = asm.rotation_dofs
            if rd.size:
                p0[rd] = np.einsum("nij,nj->ni", asm.spatial_inertia(s.u), s.v[rd])
            s.momentum_norm = asm.free_norm(p0)
        if not asm.rotation_dofs.size and len(terms) == 3:
            from flexmb.compiled import kernel_array
            from flexmb.compiled.sparse_ops import residual_scale

            M = asm.mass
            return residual_scale(M.indptr, M.indices, M.data, v1, asm.dofs.free, s.momentum_norm, dt,
                                  *map(kernel_array, terms))                  # (f_m may be a kept, read-only one)
        p1 = asm.mass_times(v1)
        rd = asm.rotation_dofs
        if rd.size:
            p1[rd] = np.einsum("nij,nj->ni", asm.spatial_inertia(u1), v1[rd])
        return max(max(s.momentum_norm, asm.free_norm(p1)) / abs(dt), *(asm.free_norm(t) for t in terms))


class MidPoint(Scheme):
    """Energy-conserving mid-point scheme (Crisfield & Shi 1993, eqs. 1, 6-9, 38-40).

    ``u_{n+1} = u_n + dt (v_n + v_{n+1}) / 2``, ``a_m = (v_{n+1} - v_n) / dt`` and mid-point
    equilibrium ``g_m = q_m - f_m + M a_m = 0`` with the elements' averaged (energy-conserving)
    internal force q_m and ``f_m = (f_n + f_{n+1}) / 2`` (the weight of a cubic mass, which turns
    with the nodes, by its exact discrete gradient). Then
    ``dK + dPhi - f_m . du = du . g_m`` (their eq. 21/43): with constant loads the total energy is
    conserved to the Newton tolerance for any dt. Jacobian ``dq_m/du_{n+1} + 2 M / dt^2``
    (their eq. 23) is non-symmetric.

    Spatial rotations (Simo & Wong 1991): ``R_{n+1} = cay(w) R_n`` with the step's Cayley
    parameters ``w = dt R_n (Omega_n + Omega_{n+1}) / 2`` (Omega = R^T omega, body angular
    velocity) and the momentum balance ``(pi_{n+1} - pi_n) / dt + m_int - m_ext = 0``. Since
    ``w . (pi_{n+1} - pi_n) = dt (T_{n+1} - T_n)`` exactly, and the elements' mid-point forces
    satisfy ``q_m . d = Phi_{n+1} - Phi_n`` with the same w, energy and angular momentum are
    conserved for any step with less than a half turn per node.
    """

    name = "mid-point"

    def initial_state(self, t0: float, u0: np.ndarray, v0: np.ndarray) -> State:
        state = super().initial_state(t0, u0, v0)
        if self.asm.director_dofs.size:
            state.stretch = np.zeros_like(u0)
        return state

    def increment(self, s: State, u1: np.ndarray) -> np.ndarray:
        return self.asm.cayley_increment(s.u, u1)

    def end_stretch(self, s: State, u1: np.ndarray, dt: float, res: StepResidual | None = None) -> np.ndarray | None:
        dd = self.asm.director_dofs
        if not dd.size:
            return None
        out = np.zeros_like(u1)
        if res is not None and res.director is not None:
            out[dd] = res.director[1]
        else:
            out[dd] = director_step(u1[dd] - s.u[dd], s.v[dd], s.stretch[dd], self.asm.director_inertia, dt)[1]
        return out

    def update(self, s: State, u1: np.ndarray, du: np.ndarray) -> np.ndarray:
        if not self.asm.rotation_dofs.size:
            return u1 + du
        return self.asm.cayley_update(s.u, self.increment(s, u1) + du)

    def _body_rates(self, s: State, dt: float, u1: np.ndarray, d: np.ndarray):
        """R_n, R_{n+1} (n_r, 3, 3), Omega_{n+1} (n_r, 3) of the rotating 3D nodes (compiled;
        specification :func:`reference_mid_point_body_rates`)."""
        from flexmb.compiled.rigid import mid_point_body_rates

        rd = self.asm.rotation_dofs
        return mid_point_body_rates(s.u[rd], u1[rd], d[rd], s.v[rd], dt)

    def _motion(self, s: State, dt: float, u1: np.ndarray):
        """v1, a_m (n_dof,), the increment d, the rotating nodes' rates (or None) and the director
        nodes' step (:func:`~flexmb.elements.hermite_mass2d.director_step`, or None)."""
        asm = self.asm
        if not asm.rotation_dofs.size:
            # the same in one compiled call (a small model's step spends more in numpy calls)
            from flexmb.compiled.mid_point_group import director_motion

            n, dd = u1.size, asm.director_dofs
            d, v1, a_m, director = np.empty(n), np.empty(n), np.empty(n), np.empty((5, dd.size))
            director_motion(s.u, u1, s.v, _EMPTY if s.stretch is None else s.stretch, dd, asm.director_inertia, dt,
                            d, v1, a_m, director)
            return v1, a_m, d, None, (director if dd.size else None)
        d = self.increment(s, u1)
        v1 = 2.0 * d / dt - s.v
        dd = self.asm.director_dofs
        director = None
        if dd.size:                             # cubic-mass nodes: omega_{n+1} from the director rule
            director = director_step(d[dd], s.v[dd], s.stretch[dd], self.asm.director_inertia, dt)
            v1[dd] = director[0]
        rd = self.asm.rotation_dofs
        rates = None
        if rd.size:
            rates = self._body_rates(s, dt, u1, d)
            v1[rd] = np.einsum("nij,nj->ni", rates[1], rates[2])
            if asm.modal_frames:
                asm.set_modal_frame_velocities(s.u, u1, s.v, dt, v1)
        return v1, (v1 - s.v) / dt, d, rates, director

    def kinematics(self, s: State, dt: float, u1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._motion(s, dt, u1)[:2]

    def _compiled_plan(self) -> tuple | None:
        """The constant arguments of the one-call residual
        (:func:`flexmb.compiled.mid_point_group.beam2d_mid_point_residual`), or None where it does
        not apply: it takes a model of one planar beam group (the assembly's fused groups) without
        spatial rotations and without configuration-dependent loads."""
        if not hasattr(self, "_plan"):
            asm = self.asm
            fused = asm.fused_groups
            self._plan = None
            if (len(fused) == 1 and fused[0] is not None and not asm.rotation_dofs.size and not asm.configuration_loads
                    and not asm.damped_groups):
                # the kernel is kept with its arguments: an import per call costs 2 us
                from flexmb.compiled.mid_point_group import beam2d_mid_point_residual, new_start

                M = asm.mass
                edofs, cubic = fused[0][0][4], fused[0][1][0]
                # the director index of each element node: the director step's rates serve the inertia
                director_index = np.full(asm.n_dof, -1)
                director_index[asm.director_dofs] = np.arange(asm.director_dofs.size)
                # C order (fancy indexing gives an F-ordered array, another type for the kernel)
                node_director = (np.ascontiguousarray(director_index[edofs[:, [2, 5]]]) if cubic
                                 else np.zeros((0, 2), dtype=np.int64))
                self._plan = (beam2d_mid_point_residual,
                              (*fused[0][0], *fused[0][1], M.indptr, M.indices, M.data, asm.mass_data, asm.dofs.free,
                               asm.director_dofs, asm.director_inertia, asm.director_diagonal, asm.director_free,
                               node_director),
                              new_start(edofs.shape[0], cubic))
                self._start_of = None           # the (State, u, v, stretch) the start quantities are of
        return self._plan

    def residual(self, s: State, dt: float, u1: np.ndarray, tangent: bool = True) -> StepResidual:
        asm = self.asm
        plan = self._compiled_plan()
        if plan is not None:
            return self._compiled_residual(plan, s, dt, u1, tangent)
        v1, a_m, d, rates, director = self._motion(s, dt, u1)
        asm.set_time(s.t + 0.5 * dt)
        # dq_m/du1 + 2 M / dt^2 (eq. 23): the element tangents are scattered onto the mass term;
        # the cubic masses' inertia f_c and its derivative d_c come from the same group calls
        data = asm.scaled_mass_data(2.0 / dt**2) if tangent else None
        q_m, f_c, d_c = asm.mid_point_forces_and_inertia(s.u, u1, s.v, s.stretch, dt, data)
        f_m, f_data = asm.mid_point_external_force(s.t, s.t + dt, s.u, u1)
        # damping with the step's mean velocity d / dt; its derivative goes onto the Jacobian
        q_d = asm.mid_point_damping(s.u, u1, dt, data) if asm.damped_groups else None
        inertia = asm.mass_times(a_m)
        if f_data is not None and tangent:
            data -= f_data
        if director is not None:
            # cubic-mass nodes: their inertia in director form, the rotary inertia's replacing J a_m
            dd = asm.director_dofs
            inertia[dd] = director[3]
            if tangent:
                asm.add_director_diagonal(data, director[4] - 2.0 / dt**2 * asm.director_inertia)
        if asm.configuration_masses:
            inertia += f_c
            if tangent:
                data += d_c
        rd = asm.rotation_dofs
        if rd.size:
            from flexmb.compiled.rigid import mid_point_rotary_terms

            # (pi_{n+1} - pi_n) / dt and its derivative w.r.t. w (reference_mid_point_rotary_terms), in
            # place of M a_m there; configuration-dependent masses keep their inertia there (3D modal bodies)
            inertia[rd], blocks = mid_point_rotary_terms(*rates, asm.rotary_inertia, s.v[rd], d[rd], dt)
            if asm.configuration_masses:
                inertia[rd] += f_c[rd]
            if tangent:                         # residual-only calls (modified Newton) skip the blocks
                data = data + asm.rotary_block_data(blocks)
        g = q_m - f_m + inertia
        if q_d is not None:
            g += q_d
        return StepResidual(g, data if tangent else None, self._scale(s, dt, u1, v1, q_m, f_m, inertia), f_m, d,
                            v1, a_m, None if director is None else np.asarray(director), q_d)

    def _compiled_residual(self, plan: tuple, s: State, dt: float, u1: np.ndarray, tangent: bool) -> StepResidual:
        """:meth:`residual` in one compiled call (:meth:`_compiled_plan`); the same values. What it
        takes from the start of the step alone (the plan's start arrays) is computed at a step's
        first call and reused by its later ones (its iterations, and cut-backs, which change dt
        only): the step is its State with its arrays, which no one changes in place (as
        ``momentum_norm``)."""
        from flexmb.compiled import kernel_array

        kernel, arguments, start = plan
        asm = self.asm
        kept = self._start_of
        refresh = (kept is None or s is not kept[0] or s.u is not kept[1] or s.v is not kept[2]
                   or s.stretch is not kept[3])
        if s.momentum_norm is None:
            s.momentum_norm = asm.free_norm(asm.mass_times(s.v))
        f_m = kernel_array(asm.mid_point_external_force(s.t, s.t + dt, s.u, u1)[0])     # (a kept, read-only one)
        n = u1.size
        g, d, v1, a_m = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
        data = np.empty(asm.nnz) if tangent else _EMPTY
        director = np.empty((5, asm.director_dofs.size))
        scale = kernel(*arguments, s.u, s.v, _EMPTY if s.stretch is None else s.stretch, start, refresh,
                       s.momentum_norm, dt, 2.0 / dt**2, f_m, u1, tangent, g, data, d, v1, a_m, director)
        if refresh:
            self._start_of = (s, s.u, s.v, s.stretch)
        return StepResidual(g, data if tangent else None, scale, f_m, d, v1, a_m, director if director.size else None)

    def solve_step(self, s: State, dt: float, u1: np.ndarray, settings: NewtonSettings, length_scale: float,
                   check_singular: bool = True) -> tuple[NewtonLog, StepResidual] | None:
        """Models of the one-call residual (:meth:`_compiled_plan`) whose Jacobian takes the dense
        LU (:data:`~flexmb.integrators.newton.DENSE_LIMIT`): the full Newton solve of
        :func:`~flexmb.integrators.newton.newton_solve` as one compiled call
        (:func:`flexmb.compiled.mid_point_group.beam2d_mid_point_newton`), the same iterates.
        The compiled call tests the start point's pivots only; a pivot that
        :meth:`~flexmb.integrators.newton.Factorization.is_singular` does not confirm returns None,
        and newton_solve runs the step from its start instead (the compiled call stopped before
        its first correction). Spatial models of :meth:`_spatial_plan` take its solve, without
        multipliers."""
        if self._spatial_plan() is not None:
            solved = self.solve_joint_step(s, dt, u1, _EMPTY, 1.0, 0.0, settings, length_scale, check_singular)
            return None if solved is None else solved[:2]
        plan = self._compiled_plan()
        asm = self.asm
        if plan is None or asm.n_free > newton.DENSE_LIMIT:
            return None
        if not hasattr(self, "_newton_kernel"):
            from flexmb.compiled.dense_newton import SINGULAR_PIVOT
            from flexmb.compiled.mid_point_group import beam2d_mid_point_newton

            self._newton_kernel, self._singular_pivot = beam2d_mid_point_newton, SINGULAR_PIVOT
        from flexmb.compiled import kernel_array

        if s.momentum_norm is None:
            s.momentum_norm = asm.free_norm(asm.mass_times(s.v))
        f_m = kernel_array(asm.mid_point_external_force(s.t, s.t + dt, s.u, u1)[0])
        n, nf, m = u1.size, asm.n_free, settings.max_iterations
        g, d, v1, a_m = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
        data, director = np.empty(asm.nnz), np.empty((5, asm.director_dofs.size))
        residual_norms, force_scales = np.empty(m + 1), np.empty(m + 1)
        increment_norms, smallest_pivots, correction = np.empty(m), np.empty(m), np.empty(nf)
        outcome, k, scale, *counts = self._newton_kernel(
            *plan[1], s.u, s.v, _EMPTY if s.stretch is None else s.stretch, s.momentum_norm, dt, 2.0 / dt**2, f_m,
            asm.pattern_indptr, asm.pattern_indices, length_scale, settings.residual_tol, settings.force_tol,
            settings.increment_tol, m,
            settings.increment_gate, settings.stagnation_tol, settings.round_off_factor,
            asm.round_off_lengths[asm.dofs.free], newton.pivot_tolerance(nf) if check_singular else 0.0,
            newton.ABSURD_CORRECTION, asm.free_planar_rotations, MAX_ROTATION_CORRECTION,
            u1, g, data, d, v1, a_m, director, residual_norms, force_scales, increment_norms, smallest_pivots,
            correction)
        if outcome == self._singular_pivot and not newton.Factorization(asm.free_matrix(data)).is_singular():
            return None
        log = newton.compiled_solve_log(outcome, k, tuple(counts), residual_norms, force_scales,
                                        increment_norms, smallest_pivots, correction,
                                        lambda: asm.free_matrix(data.copy()), settings, length_scale)
        return log, StepResidual(g, data, scale, f_m, d, v1, a_m, director if director.size else None)

    def _spatial_plan(self) -> tuple | None:
        """The constant arguments of the one-call spatial step (:mod:`flexmb.compiled.spatial_group`),
        or None where it does not apply: it takes a model with spatial rotations whose element groups
        are at most one 3D modal body (its other masses constant: rigid bodies, point masses), with
        or without joints, without ties, damping or configuration-dependent loads."""
        if not hasattr(self, "_spatial"):
            asm = self.asm
            cs = asm.constraints
            groups = asm.groups
            self._spatial = None
            if not asm.rotation_dofs.size:     # (a planar model's start does not import the modal bodies)
                return None
            from flexmb.elements.floating_frame import ModalBody

            if ((cs is None or not cs.ties) and len(groups) <= 1
                    and len(asm.modal_frames) == len(asm.configuration_masses) == len(groups)
                    and all(type(g) is ModalBody for g in groups) and not asm.configuration_loads
                    and not asm.damped_groups):
                self._spatial = self._new_spatial_plan()
        return self._spatial

    def _new_spatial_plan(self) -> tuple:
        """:meth:`_spatial_plan`'s arguments: the FE part's (:func:`~flexmb.compiled.spatial_group.
        spatial_mid_point_residual`), the joints', the augmented Jacobian's pattern (its data positions,
        found once as :meth:`~flexmb.multibody.constraints.ConstraintSystem.augmented` finds them, and its
        CSC arrays), the free rotations' positions among Newton's unknowns and their magnitudes."""
        asm = self.asm
        cs = asm.constraints
        n = asm.n_dof
        M = asm.mass
        asm.rotary_block_data(np.zeros(asm.rotary_inertia.shape))      # finds the blocks' data positions once
        positions, entries = asm._rotary_slots
        whole = np.ascontiguousarray
        body = None                                                     # rigid bodies only
        if asm.modal_frames:
            # the inertia kernel's arguments as FloatingFrameMass3D.mid_point_inertia passes them
            i, kernels, rotations = asm.modal_frames[0]
            body = (*(whole(a, dtype=np.int64) for a in (asm._edofs[i], asm._entry_maps[i])),
                    whole(asm.groups[i]._element_stiffness, dtype=float), whole(rotations, dtype=np.int64),
                    (kernels.fields.G, *kernels._terms[2:], kernels.weights, float(kernels._correction_floor)),
                    tuple(kernels._entry_products))
        fe = (asm.dofs.free, asm.rotation_dofs, whole(asm.rotary_inertia), M.indptr, M.indices, M.data,
              asm.mass_data, whole(positions, dtype=np.int64), whole(entries, dtype=np.int64), body)
        free_rotations = asm.dofs.free_position[asm.rotation_dofs.ravel()]
        free_rotations = free_rotations[free_rotations >= 0]
        magnitudes = asm.round_off_lengths[asm.dofs.free]
        if cs is None:            # no joints: no vectors, terms or rows; the Jacobian is the FE one
            ints, floats = np.zeros(0, dtype=np.int64), np.zeros((0, 3))
            joints = (n, 0, 0, (floats, floats, np.zeros((0, 6), dtype=np.int64), np.zeros(0, dtype=bool),
                                np.zeros(0, dtype=bool), ints, ints, floats, ints, ints, ints, ints, ints, np.zeros(0)))
            return (fe, joints, (asm.nnz, np.arange(asm.nnz), ints, ints, ints),
                    (asm.pattern_indptr, asm.pattern_indices), free_rotations, magnitudes)
        terms = self._joint_terms(np.zeros(cs.n), np.zeros(n), np.zeros(cs._n_joint_g), np.zeros(cs._n_joint_g),
                                  np.zeros(cs._n_joint_k))                # the system's triplet rows and columns
        matrix, *at = cs._augmented_pattern(terms, asm.free_matrix(asm.mass_data.copy()), asm.dofs.free_position)
        return (fe, (n, cs._n_joint_g, cs._n_joint_k, cs._kernel_arrays),
                (matrix.indices.size, *(whole(a, dtype=np.int64) for a in at)), (matrix.indptr, matrix.indices),
                free_rotations, np.concatenate([magnitudes, np.ones(cs.n)]))

    def _spatial_step(self, s: State, dt: float, u1: np.ndarray) -> tuple:
        """The step's arguments of the spatial one-call step: u0, v0, ``|p|`` of the start (kept in
        s.momentum_norm), dt, 2/dt^2, the external force f_m, the joints' start vectors, bilinear
        scales at t_{n+1} and mid-step and right-hand sides at t_{n+1}."""
        from flexmb.compiled import kernel_array
        from flexmb.compiled.spatial_group import momentum_norm

        asm = self.asm
        cs = asm.constraints
        fe = self._spatial[0]
        if s.momentum_norm is None:
            s.momentum_norm = float(momentum_norm(*fe[3:6], fe[0], fe[1], fe[2], s.u, s.v))
        # the kept force and time values are read-only: kernel_array keeps the kernels to one compilation
        f_m = kernel_array(asm.mid_point_external_force(s.t, s.t + dt, s.u, u1)[0])
        if cs is None:
            return (s.u, s.v, s.momentum_norm, dt, 2.0 / dt**2, f_m, np.zeros((0, 3)), np.zeros((0, 3)), _EMPTY,
                    _EMPTY, _EMPTY)
        s1 = cs.scales(s.t + dt)
        return (s.u, s.v, s.momentum_norm, dt, 2.0 / dt**2, f_m, *cs._start_vectors(s.u), kernel_array(s1),
                kernel_array(0.5 * (cs.scales(s.t) + s1) if cs.b_timed else s1), kernel_array(cs.rhs(s.t + dt)))

    def _joint_terms(self, phi: np.ndarray, force: np.ndarray, g: np.ndarray, c: np.ndarray, k: np.ndarray
                     ) -> ConstraintTerms:
        """The joints' ConstraintTerms from the spatial one-call step's values (the system's fixed
        triplet rows and columns, as :meth:`~flexmb.multibody.constraints.ConstraintSystem.evaluate`)."""
        cs = self.asm.constraints
        return ConstraintTerms(phi, force, (cs._g_rows, cs._g_cols, g), (cs._g_rows, cs._g_cols, c),
                               (cs._k_rows, cs._k_cols, k), self.asm.n_dof)

    def _joint_residual(self, s: State, dt: float, u1: np.ndarray, y: np.ndarray, lam_scale: float,
                        idle_scale: float, tangent: bool = True
                        ) -> tuple[StepResidual, ConstraintTerms, np.ndarray, sp.csc_matrix | None, float]:
        """The step loop's augmented residual in one compiled call (models of :meth:`_spatial_plan`;
        :func:`flexmb.compiled.spatial_group.spatial_joint_residual`): at u1 (n_dof,) and the scaled
        multipliers y = lambda / lam_scale (n_c,), the residual (its g with the joints' force G^T
        lambda), the joints' terms, the augmented residual [g_free; kappa Phi] (n_free + n_c,), with
        ``tangent`` the augmented Jacobian (CSC, a new object; else None) and its force scale (N)."""
        from flexmb.compiled import kernel_array
        from flexmb.compiled.spatial_group import body_start_momenta, spatial_joint_residual

        fe, joints, augmented, (indptr, indices) = self._spatial_plan()[:4]
        asm = self.asm
        step = self._spatial_step(s, dt, u1)
        n = u1.size
        g, d, v1, a_m = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
        data = np.empty(asm.nnz) if tangent else _EMPTY
        r = np.empty(asm.n_free + y.size)
        jacobian = np.empty(augmented[0]) if tangent else _EMPTY
        u0, v0, *rest = step
        fe_scale, scale, *terms = spatial_joint_residual(*fe, joints, augmented, u0, v0,
                                                         body_start_momenta(fe[9], u0, v0), *rest, float(lam_scale),
                                                         float(idle_scale), asm.characteristic_length,
                                                         kernel_array(u1), kernel_array(y), bool(tangent),
                                                         bool(tangent), g, data, d, v1, a_m, r, jacobian)
        matrix = sp.csc_matrix((jacobian, indices, indptr), shape=(r.size, r.size)) if tangent else None
        terms = self._joint_terms(*terms) if asm.constraints is not None else None
        return StepResidual(g, data if tangent else None, fe_scale, step[5], d, v1, a_m), terms, r, matrix, scale

    def solve_joint_step(self, s: State, dt: float, u1: np.ndarray, lam0: np.ndarray, lam_scale: float,
                         idle_scale: float, settings: NewtonSettings, length_scale: float, check_singular: bool = True
                         ) -> tuple[NewtonLog, StepResidual, ConstraintTerms, np.ndarray] | None:
        """Models of :meth:`_spatial_plan` whose augmented Jacobian takes the dense LU: the step's
        Newton solve (``_sub_step``'s newton_solve around its augmented residual) as one compiled call
        (:func:`flexmb.compiled.spatial_group.spatial_mid_point_newton`), the same iterates to
        round-off. A start point's pivot that :meth:`~flexmb.integrators.newton.Factorization.is_singular`
        does not confirm returns None, as :meth:`solve_step` does. A model without joints (its
        :meth:`solve_step`: lam0 empty) gets the log and the residual only. The residual's
        jacobian_data is None where the solve's last pass converged without forming it."""
        plan = self._spatial_plan()
        asm = self.asm
        if plan is None or asm.n_free + lam0.size > newton.DENSE_LIMIT:
            return None
        from flexmb.compiled.dense_newton import SINGULAR_PIVOT
        from flexmb.compiled.spatial_group import spatial_mid_point_newton

        fe, joints, augmented, (indptr, indices), capped, magnitudes = plan
        step = self._spatial_step(s, dt, u1)
        x = np.concatenate([u1[asm.dofs.free], lam0])
        n, m = u1.size, settings.max_iterations
        g, d, v1, a_m, force = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
        data, r, jacobian, phi = np.empty(asm.nnz), np.empty(x.size), np.empty(augmented[0]), np.empty(lam0.size)
        g_values, c_values, k_values = np.empty(joints[1]), np.empty(joints[1]), np.empty(joints[2])
        residual_norms, force_scales = np.empty(m + 1), np.empty(m + 1)
        increment_norms, smallest_pivots, correction = np.empty(m), np.empty(m), np.empty(x.size)
        outcome, k, scale, *counts, fe_scale, formed = spatial_mid_point_newton(
            *fe, joints, augmented, *step, float(lam_scale), float(idle_scale), indptr, indices, length_scale,
            settings.residual_tol, settings.force_tol, settings.increment_tol, m, settings.increment_gate,
            settings.stagnation_tol, settings.round_off_factor, magnitudes,
            newton.pivot_tolerance(x.size) if check_singular else 0.0, newton.ABSURD_CORRECTION, capped,
            MAX_ROTATION_CORRECTION, x, u1, g, data, d, v1, a_m, r, jacobian, phi, force, g_values, c_values, k_values,
            residual_norms, force_scales, increment_norms, smallest_pivots, correction)

        def matrix() -> sp.csc_matrix:
            return sp.csc_matrix((jacobian.copy(), indices, indptr), shape=(x.size, x.size))

        if outcome == SINGULAR_PIVOT and not newton.Factorization(matrix()).is_singular():
            return None
        log = newton.compiled_solve_log(outcome, k, tuple(counts), residual_norms, force_scales, increment_norms,
                                        smallest_pivots, correction, matrix, settings, length_scale)
        res = StepResidual(g, data if formed else None, fe_scale, step[5], d, v1, a_m)
        if asm.constraints is None:
            return log, res
        return log, res, self._joint_terms(phi, force, g_values, c_values, k_values), x

    def work_increment(self, s: State, res: StepResidual, u1: np.ndarray, reaction: np.ndarray | None = None) -> float:
        d = res.increment if res.increment is not None else self.increment(s, u1)    # res is at u1
        return newton.dot_product(res.f_ext + (self.reaction(res) if reaction is None else reaction), d)

    def constraint_terms(self, s: State, dt: float, u1: np.ndarray, lam: np.ndarray,
                         res: StepResidual | None = None) -> ConstraintTerms:
        """Mid-point form: the discrete gradient G_m, so that G_m d = Phi_{n+1} - Phi_n."""
        d = res.increment if res is not None and res.increment is not None else self.increment(s, u1)
        return self.asm.constraints.evaluate(u1, s.t + dt, lam, u0=s.u, d=d, t0=s.t)

    def constraint_work(self, s: State, force1: np.ndarray, u1: np.ndarray) -> float:
        return -newton.dot_product(force1, self.increment(s, u1))


class Newmark(Scheme):
    """Trapezoidal Newmark (average acceleration, beta = 1/4, gamma = 1/2), end-point equilibrium.

    ``a_{n+1} = 4 (u_{n+1} - u_n) / dt^2 - 4 v_n / dt - a_n``, ``v_{n+1} = v_n + dt (a_n + a_{n+1}) / 2``,
    ``q(u_{n+1}) - f_{n+1} + M a_{n+1} = 0``. Unconditionally stable for linear problems only: with
    stiff co-rotational bars it can lock onto axial vibration (Crisfield & Shi 1993, Figs. 2-4).

    Spatial rotations: Newmark in the body frame (Simo & Vu-Quoc 1988): the material rotation
    increment ``Theta = R_n^T theta`` (``R_{n+1} = exp(hat(theta)) R_n``) plays the role of the
    displacement increment for the body angular velocity and acceleration, and the end-point
    balance is ``R_{n+1} (J A_{n+1} + Omega_{n+1} x J Omega_{n+1}) + m_int - m_ext = 0``.
    """

    name = "newmark"

    def increment(self, s: State, u1: np.ndarray) -> np.ndarray:
        d = u1 - s.u
        rd = self.asm.rotation_dofs
        if rd.size:
            d[rd] = log_map(exp_map(u1[rd]) @ exp_map(s.u[rd]).transpose(0, 2, 1))
        return d

    def update(self, s: State, u1: np.ndarray, du: np.ndarray) -> np.ndarray:
        return self.asm.update(u1, du)

    def initial_state(self, t0: float, u0: np.ndarray, v0: np.ndarray) -> State:
        """Initial acceleration from equilibrium at t0 (prescribed DOFs start with zero acceleration)."""
        import scipy.sparse.linalg as spla          # here only: the mid-point scheme never needs it (start-up)

        asm = self.asm
        free = asm.dofs.free
        asm.set_time(t0)
        rhs = asm.external_force(t0, u=u0) - asm.internal_force(u0)
        if asm.damped_groups:
            rhs -= asm.damping_force(u0, v0)
        data = asm.mass_data
        if asm.configuration_masses:
            rhs -= asm.end_point_inertia(u0, v0, np.zeros_like(u0))[0]
            data = data + asm.configuration_mass_data(u0)
        rd = asm.rotation_dofs
        if rd.size:
            Js = asm.spatial_inertia(u0)
            w = v0[rd]
            rhs[rd] -= np.cross(w, np.einsum("nij,nj->ni", Js, w))   # gyroscopic term
            data = data + asm.rotary_block_data(Js)
        a0 = np.zeros_like(u0)
        M = asm.free_matrix(data)
        # a DOF without mass (the rotation of a beam with rho_I = 0, a massless node held by elements)
        # has no acceleration of its own; its start value only seeds the predictor, since its inertia
        # is zero: a placeholder mass with no force gives a0 = 0 there (without joints) and keeps M regular
        massless = np.bincount(M.indices, np.abs(M.data), M.shape[0]) == 0.0      # (scipy's abs and sum: 20 us)
        rhs_free = rhs[free]
        if massless.any():
            M = M + sp.diags(massless * max(float(np.abs(M.diagonal()).max(initial=0.0)), 1.0))
            rhs_free = np.where(massless, 0.0, rhs_free)
        cs = asm.constraints
        if cs is None:
            a0[free] = spla.splu(M.tocsc()).solve(rhs_free)
            reaction = self._mass_times(u0, a0) - rhs
            reaction[free] = 0.0
            return State(t0, u0.copy(), v0.copy(), a0, reaction, lam=np.zeros(0), constraint_force=np.zeros_like(u0))
        # with joints: [[M, C^T], [C, 0]] [a; lambda] = [f - q; -kappa], kappa = d^2 Phi / dt^2 at
        # zero acceleration (velocity-squared and time terms), by a central difference along the
        # path u0 moved with v0 (spins at 3D rotations)
        C = cs.evaluate(u0, t0, np.zeros(cs.n)).C
        vmax = float(np.abs(v0).max(initial=0.0))
        h = min(1e-3, 1e-3 * asm.model.characteristic_length / vmax) if vmax > 0 else 1e-3
        kappa = (cs.values(asm.update(u0, h * v0), t0 + h) - 2.0 * cs.values(u0, t0)
                 + cs.values(asm.update(u0, -h * v0), t0 - h)) / h**2
        nf = free.size
        A = sp.bmat([[M, C[:, free].T], [C[:, free], None]], format="csc")
        sol = spla.splu(A).solve(np.concatenate([rhs_free, -kappa]))
        a0[free], lam = sol[:nf], sol[nf:]
        force = C.T @ lam
        reaction = self._mass_times(u0, a0) - rhs + force
        reaction[free] = 0.0
        return State(t0, u0.copy(), v0.copy(), a0, reaction, lam=lam, constraint_force=force)

    def _mass_times(self, u: np.ndarray, a: np.ndarray) -> np.ndarray:
        """M(u) a (n_dof,) with the constant and the configuration-dependent masses."""
        out = self.asm.mass_times(a)
        if self.asm.configuration_masses:
            zero = np.zeros_like(a)
            out += self.asm.end_point_inertia(u, zero, a)[0]
        return out

    def _body_rates(self, s: State, dt: float, u1: np.ndarray, d: np.ndarray):
        """theta (n_r, 3), R_n, R_{n+1}, Omega_{n+1}, A_{n+1} (body frame) of the rotating 3D nodes
        (compiled; specification :func:`reference_newmark_body_rates`)."""
        from flexmb.compiled.rigid import newmark_body_rates

        rd = self.asm.rotation_dofs
        theta = d[rd]
        return (theta, *newmark_body_rates(s.u[rd], u1[rd], theta, s.v[rd], s.a[rd], dt))

    def _motion(self, s: State, dt: float, u1: np.ndarray):
        """v1, a1 (n_dof,) and the rotating nodes' rates (or None)."""
        d = self.increment(s, u1)
        a1 = 4.0 * d / dt**2 - 4.0 * s.v / dt - s.a
        v1 = s.v + 0.5 * dt * (s.a + a1)
        rd = self.asm.rotation_dofs
        rates = None
        if rd.size:
            rates = self._body_rates(s, dt, u1, d)
            _, _, R1, Om1, A1 = rates
            v1[rd] = np.einsum("nij,nj->ni", R1, Om1)
            a1[rd] = np.einsum("nij,nj->ni", R1, A1)
        return v1, a1, rates

    def kinematics(self, s: State, dt: float, u1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._motion(s, dt, u1)[:2]

    def residual(self, s: State, dt: float, u1: np.ndarray, tangent: bool = True) -> StepResidual:
        asm = self.asm
        v1, a1, rates = self._motion(s, dt, u1)
        asm.set_time(s.t + dt)
        if tangent:
            q1, data = asm.force_and_tangent(u1, out=asm.scaled_mass_data(4.0 / dt**2))
        else:
            q1, data = asm.internal_force(u1), None
        f1 = asm.external_force(s.t + dt, u=u1)
        inertia = asm.mass_times(a1)
        if asm.configuration_loads and tangent:
            data -= asm.load_stiffness_data(u1, s.t + dt)
        if asm.configuration_masses:
            f_c, d_c = asm.end_point_inertia(u1, v1, a1, 2.0 / dt, 4.0 / dt**2, tangent)
            inertia = inertia + f_c
            if tangent:
                data += d_c
        rd = asm.rotation_dofs
        if rd.size:
            from flexmb.compiled.rigid import newmark_rotary_terms

            # R_{n+1} (J A + Omega x J Omega) and its derivative w.r.t. a spin of R_{n+1}
            # (reference_newmark_rotary_terms)
            inertia[rd], blocks = newmark_rotary_terms(*rates, asm.rotary_inertia, dt)
            if asm.configuration_masses:
                inertia[rd] += f_c[rd]              # configuration-dependent masses' inertia there (3D modal bodies)
            if tangent:                         # residual-only calls (modified Newton) skip the blocks
                data = data + asm.rotary_block_data(blocks)
        g = q1 - f1 + inertia
        q_d = None
        if asm.damped_groups:
            # end-point damping; v1 moves with u1 as 2/dt (exact at translations and planar
            # rotations, the small-step value at 3D rotations)
            q_d = asm.damping_force(u1, v1, 2.0 / dt, data if tangent else None)
            g += q_d
        # external force over the step for the work balance: trapezoidal average
        f_avg = 0.5 * (asm.external_force(s.t, u=s.u) + f1)
        return StepResidual(g, data if tangent else None, self._scale(s, dt, u1, v1, q1, f1, inertia), f_avg,
                            velocity=v1, acceleration=a1, damping=q_d)

    def dissipation_increment(self, s: State, res: StepResidual, u1: np.ndarray) -> float:
        """Trapezoidal work of the damping forces over the step, as :meth:`work_increment` books loads."""
        if res.damping is None:
            return super().dissipation_increment(s, res, u1)
        self.asm.set_time(s.t)
        return newton.dot_product(0.5 * (self.asm.damping_force(s.u, s.v) + res.damping), self.increment(s, u1))

    def work_increment(self, s: State, res: StepResidual, u1: np.ndarray, reaction: np.ndarray | None = None) -> float:
        reaction = self.reaction(res) if reaction is None else reaction
        return newton.dot_product(res.f_ext + 0.5 * (s.reaction + reaction), self.increment(s, u1))

    def constraint_terms(self, s: State, dt: float, u1: np.ndarray, lam: np.ndarray,
                         res: StepResidual | None = None) -> ConstraintTerms:
        """End-point form: C(u_{n+1})^T lambda."""
        return self.asm.constraints.evaluate(u1, s.t + dt, lam)

    def constraint_work(self, s: State, force1: np.ndarray, u1: np.ndarray) -> float:
        return -newton.dot_product(0.5 * (s.constraint_force + force1), self.increment(s, u1))


def _suzuki_fractions() -> tuple[float, ...]:
    """Suzuki's (1990) five sub-steps (p, p, 1 - 4p, p, p), p = 1 / (4 - 4^(1/3))."""
    p = 1.0 / (4.0 - 4.0 ** (1.0 / 3.0))
    return (p, p, 1.0 - 4.0 * p, p, p)


class ComposedMidPoint(MidPoint):
    """The mid-point scheme composed to fourth order: each step is five mid-point sub-steps of
    dt (p, p, 1 - 4p, p, p), p = 1 / (4 - 4^(1/3)) = 0.4145 (Suzuki 1990; the order conditions
    sum(c) = 1, sum(c^3) = 0 of Yoshida 1990).

    The mid-point step is symmetric (a step of dt followed by one of -dt returns to its start),
    so the composition's local error is O(dt^5) (Hairer, Lubich & Wanner 2006, sec. II.4): fourth
    order. The middle sub-step runs backwards (-0.658 dt), but the sub-steps' times stay in
    [t_n, t_{n+1}] (0.41, 0.83, 0.17, 0.59, 1 of the step), so drives and loads are never asked for
    outside the step. Each sub-step is a mid-point step with its exact energy balance and
    momentum conservation, so the composed step keeps them. It costs five sub-steps of up to
    0.66 dt: it pays where the mid-point scheme's O(dt^2) phase error, not its robustness,
    limits the step (a spin-up at 0.5 rad of hub rotation per step: 1.4 % error at dt = 0.08 s,
    the composed scheme 0.02 %). Reactions, multipliers and accelerations reported at a step
    are the last sub-step's.

    A linear mode of frequency omega turns per step by the phase
    ``Theta = 8 atan(p z / 2) - 2 atan((4p - 1) z / 2)``, z = omega dt (the mid-point scheme's
    ``2 atan(z / 2)``): within 0.1 % of z for z <= 1 (mid-point: 7 %), rising monotonically to
    3 pi. It passes 2 pi at z = 9.50: a mode near omega dt = 9.5 turns by almost nothing per step
    and appears as a slow mode, which slow loads and drives excite (a numerical resonance; the
    spin-up's third bending mode at dt = 0.04 s adds 1.5e-4 m to the tip, against the mid-point
    scheme's time error of 4e-3 m). Energy stays bounded; choose dt away from 9.5 / omega of
    the modes a load can excite.
    """

    name = "composed-mid-point"
    stages = _suzuki_fractions()


SCHEMES = {"mid-point": MidPoint, "composed-mid-point": ComposedMidPoint, "newmark": Newmark}


# ------------------------------------------------- numpy specifications of compiled kernels
def reference_mid_point_body_rates(psi0: np.ndarray, psi1: np.ndarray, w: np.ndarray, omega0: np.ndarray,
                                   dt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """R_n, R_{n+1} (n_r, 3, 3) and ``Omega_{n+1} = 2/dt R_n^T w - R_n^T omega_n`` (n_r, 3) from the
    rotation vectors psi0, psi1, the Cayley parameters w and the angular velocity omega0 (n_r, 3).
    Specification of :func:`flexmb.compiled.rigid.mid_point_body_rates` (MidPoint._body_rates),
    kept for its tests."""
    R0, R1 = reference_exp_map(psi0), reference_exp_map(psi1)
    R0T = R0.transpose(0, 2, 1)
    return R0, R1, 2.0 / dt * np.einsum("nij,nj->ni", R0T, w) - np.einsum("nij,nj->ni", R0T, omega0)


def reference_mid_point_rotary_terms(R0: np.ndarray, R1: np.ndarray, Om1: np.ndarray, J: np.ndarray,
                                     omega0: np.ndarray, w: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """Inertia term ``(pi_{n+1} - pi_n) / dt`` (n_r, 3) of the mid-point momentum balance and its
    derivative w.r.t. the Cayley parameters w, ``(-G(w) hat(y_m) + 2/dt R_{n+1} J R_n^T) / dt``
    (n_r, 3, 3). Specification of :func:`flexmb.compiled.rigid.mid_point_rotary_terms`, kept for
    its tests."""
    JOm1 = np.einsum("nij,nj->ni", J, Om1)
    y0 = np.einsum("nij,nj->ni", R0, JOm1)                        # R_n J Omega_{n+1}
    y1 = np.einsum("nij,nj->ni", R1, JOm1)                        # pi_{n+1}
    pi0 = np.einsum("nij,nj->ni", R0 @ J @ R0.transpose(0, 2, 1), omega0)
    blocks = (-reference_cayley_resolvent(w) @ skew(0.5 * (y0 + y1))
              + (2.0 / dt) * R1 @ J @ R0.transpose(0, 2, 1)) / dt
    return (y1 - pi0) / dt, blocks


def reference_newmark_body_rates(psi0: np.ndarray, psi1: np.ndarray, theta: np.ndarray, omega0: np.ndarray,
                                 alpha0: np.ndarray, dt: float) -> tuple[np.ndarray, ...]:
    """R_n, R_{n+1} (n_r, 3, 3), Omega_{n+1} and A_{n+1} (n_r, 3) of Newmark in the body frame from
    the rotation vectors, the spin increment theta and the spatial angular velocity and
    acceleration at the step's start. Specification of
    :func:`flexmb.compiled.rigid.newmark_body_rates` (Newmark._body_rates), kept for its tests."""
    R0, R1 = reference_exp_map(psi0), reference_exp_map(psi1)
    R0T = R0.transpose(0, 2, 1)
    Th = np.einsum("nij,nj->ni", R0T, theta)
    Om0 = np.einsum("nij,nj->ni", R0T, omega0)
    A0 = np.einsum("nij,nj->ni", R0T, alpha0)
    A1 = 4.0 * (Th - dt * Om0) / dt**2 - A0
    Om1 = Om0 + 0.5 * dt * (A0 + A1)
    return R0, R1, Om1, A1


def reference_newmark_rotary_terms(theta: np.ndarray, R0: np.ndarray, R1: np.ndarray, Om1: np.ndarray,
                                   A1: np.ndarray, J: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """Newmark's inertia moment ``R_{n+1} (J A_{n+1} + Omega_{n+1} x J Omega_{n+1})`` (n_r, 3) and
    its derivative w.r.t. a spin of R_{n+1} (n_r, 3, 3): d theta = T(theta)^-1 dspin,
    dA = R_n^T dtheta 4/dt^2, dOmega = dA dt/2. Specification of
    :func:`flexmb.compiled.rigid.newmark_rotary_terms`, kept for its tests."""
    JOm = np.einsum("nij,nj->ni", J, Om1)
    y = np.einsum("nij,nj->ni", J, A1) + np.cross(Om1, JOm)
    Ry = np.einsum("nij,nj->ni", R1, y)
    dy = 4.0 / dt**2 * J + 2.0 / dt * (skew(Om1) @ J - skew(JOm))
    blocks = -skew(Ry) + R1 @ dy @ R0.transpose(0, 2, 1) @ np.linalg.inv(reference_tangent_operator(theta))
    return Ry, blocks
