"""The discrete adjoint of mid-point runs, joints included (issue 33, piece P7; used by
:func:`~flexmb.sensitivity.transient_sensitivity`).

The run is the chain of Newton solves of :mod:`flexmb.sensitivity.midpoint` (its docstring gives the
step map and its direct differentiation): per solve, from the start ``x_n = (u_n, v_n, s_n)``,

    A U_{n+1}[free] = -(g_u U_n + g_v V_n + g_s S_n + g_p)[free],   U_{n+1}[prescribed] = 0,
    V_{n+1} = 2/dt (U_{n+1} - U_n) - V_n   (rows off D; at D the director rule's partials),

a linear map of (U_n, V_n, S_n) and of the parameters. A response ``F = sum_n f_n(x_n)``
(:mod:`flexmb.sensitivity.responses`) has ``dF/dp = sum_n df_n/dx_n . X_n + explicit``; the adjoint
carries ``mu = (mu_u, mu_v, mu_s) = dF/dx`` backwards instead, one solve at a time. With mu at the
solve's end, ``w = mu_u + (dV_{n+1}/dU_{n+1})^T mu_v + (dS_{n+1}/dU_{n+1})^T mu_s`` (``2/dt mu_v`` off
D; ``domega/ddth mu_v + ds/ddth mu_s`` at D), one transposed solve ``A^T psi = w[free]`` (psi zero on
the prescribed rows) gives

    mu_u <- -(w - mu_u) - g_u^T psi,                       (plus df/du_n of the responses)
    mu_v <- -mu_v - g_v^T psi            (at D: -cos dth mu_v - sin dth mu_s - g_v^T psi),
    mu_s <- sin dth mu_v - cos dth mu_s - g_s^T psi      (at D; zero elsewhere),
    dF/dp += -psi . g_p,

and the start state does not depend on p (dx_0/dp = 0), so the sum of ``-psi . g_p`` over all
solves plus the responses' explicit partials is the gradient: the same number as the direct
differentiation, to round-off. Several responses are columns of mu and psi (one factorisation per
solve, one transposed solve with a right-hand side per response).

**Joints** (planar). The solve's unknowns are ``(u_{n+1}[free], lambda_{n+1})`` and its rows
``(g + G_m^T lambda, Phi)`` (:mod:`flexmb.sensitivity.midpoint`); the multipliers are an output of
the solve that ends in a state, not an input of the next (``dR/dlambda_n = 0``). So a response's
derivative with respect to a state's multipliers, ``mu_lambda``, joins the transposed solve's
right-hand side, ``A^T [psi_g; psi_Phi] = [w[free]; mu_lambda]``, and is then spent (zero before
the solve); ``g_u`` gains the joint force's start derivative ``J_u``, and a joint drive's amplitude
adds ``-(psi_g . J_p + psi_Phi . dPhi/dp)`` to dF/dp.

**Cost** per solve: as the direct differentiation's (one residual with tangent and one
factorisation at the solution, the start derivatives' element blocks, applied here transposed, the
three derivatives' (w.r.t. u_n, v_n, s_n) products scattered in one pass; the step's kinematics
evaluated once for the director rule, the start derivatives and the parameter terms), and
``psi . g_p`` for all parameters from one evaluation of each distinct parameter *part*: the section
properties of a group are evaluated one by one over the whole group (a stiffness or density scale
is the sum of its properties' parts; parameters on some elements of one
property, :func:`~flexmb.sensitivity.parameters.element_property`, take their elements' shares,
:meth:`~flexmb.sensitivity.parameters.TransientParameter.residual_shares`), psi is gathered to the
elements once per group of elements, and a weight matrix (elements x parameters) formed once per
run spreads the element products to the parameters. So the cost does not grow with the number of
section parameters; other kinds cost one residual-sized evaluation each (measured against one
forward run by ``benchmarks/bench_sensitivity.py``).

**Compiled planar beams.** On a small model that work is mostly Python and numpy calls over small
arrays. Models without spatial rotations whose configuration-dependent masses are all cubic
``Beam2D`` masses (:meth:`_CompiledBeams.covers`) take the solve's elementwise steps (w, the new mu
with the director rule's turns), the transposed start products of their ``Beam2D`` groups, of the
constant mass and of the director DOFs, and (without gravity; groups without Rayleigh damping) the
four section properties' element products of each ``Beam2D`` group by compiled kernels
(:mod:`flexmb.compiled.adjoint_beam2d`), one call per group and per step of the solve, without
forming the start derivatives' blocks; point masses and planar bodies' mass and inertia (off the
director DOFs) are one product each. Other groups' forces, damping, weight and joints keep their
start matrices, other parameters their residual shares. The numpy path (``_COMPILED_BEAMS =
False``) is the kernels' specification; they agree to round-off (tests/test_sensitivity_compiled.py).

**Checkpointing** (two levels). The forward run (:func:`~flexmb.sensitivity.transient.record`)
keeps every ``keep_every``-th state and the last; the reverse sweep takes the segments between kept
states last to first, recomputes each segment's states from its first one (bit for bit, as the run
took them: :func:`~flexmb.sensitivity.transient.sub_steps`) and runs its solves' adjoints backwards.
Held at once: the kept states, ``ceil(N / k) + 1``, and one segment's solves' end states (k steps
times the scheme's stages and cut-back pieces); each state holds u, v, a, the reactions and the
stretch rates, n_dof floats each (:attr:`AdjointGradient.memory_bytes` counts them). Recomputed:
each Newton solve whose end the run did not keep, once (``k - 1`` of every k steps, and every stage
of a composed step: the run keeps no stages); ``keep_every = 1`` recomputes nothing for mid-point.

The responses are :class:`~flexmb.sensitivity.responses.ResponseValue` objects evaluated on the
run's states (:func:`trajectory`), and hold their state derivatives dF/dx_n at the steps they name,
at the DOFs their signal reads (small, except for signals on every DOF such as the energies).
:func:`trajectory` itself holds every state: it is the response evaluation's, not the sweep's,
memory (a response evaluated during the forward run would not need it; not yet).

Not covered (refused with a :class:`~flexmb.checks.ModelError` naming the reason): what the direct
differentiation of :mod:`flexmb.sensitivity.midpoint` refuses (ties to modal bodies, partly
prescribed spatial rotations, other schemes, a prescribed motion's amplitude). At spatial rotations
the adjoint carries the transposed maps of the step's spins and angular velocities
(:meth:`~flexmb.sensitivity.rotations.StepRotations.transpose`).
"""
from __future__ import annotations

import copy
import dataclasses
import weakref
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from flexmb.assembly import Assembly
from flexmb.checks import ModelError
from flexmb.cms.design import MASS_PROPERTIES, STIFFNESS_PROPERTIES
from flexmb.elements.beam2d import Beam2D
from flexmb.elements.hermite_mass2d import HermiteMass2D
from flexmb.integrators.schemes import MidPoint, State
from flexmb.sensitivity.constraints import DriveAmplitude
from flexmb.sensitivity.inertia import InertiaMatrix, InertiaStart
from flexmb.sensitivity.matrices import StartMatrix
from flexmb.sensitivity.midpoint import StepDerivative, _solves, check_model, check_parameters
from flexmb.sensitivity.parameters import _SHEAR, SECTION_GROUPS, TransientParameter, _director_unit
from flexmb.sensitivity.responses import ResponseValue, Trajectory
from flexmb.sensitivity.transient import RecordedRun, step_jacobian

#: the state fields a response of a run can depend on
_FIELDS = ("u", "v", "stretch", "multipliers")
#: take the compiled kernels of planar Beam2D groups where they apply (:class:`_CompiledBeams`); False
#: takes the numpy path everywhere (their specification: the tests compare the two)
_COMPILED_BEAMS = True


@dataclass
class AdjointGradient:
    """dF/dp of responses by the adjoint of a recorded run.

    ``gradient`` (n_r, n_p): per response (rows, in the order given) and parameter, in the
    response's unit per parameter unit; ``values`` (n_r,) the responses' values;
    ``solves`` the Newton solves the sweep went through, ``recomputed`` those it recomputed
    (their end states were not kept); ``states_held`` the largest number of states held at once
    (kept states plus one segment's) and ``memory_bytes`` their arrays then (u, v, a, the
    reactions and the stretch rates: n_dof floats of 8 bytes each)."""

    parameters: list[TransientParameter | DriveAmplitude]
    gradient: np.ndarray
    values: np.ndarray
    solves: int = 0
    recomputed: int = 0
    states_held: int = 0
    memory_bytes: int = 0


def trajectory(run: RecordedRun) -> Trajectory:
    """The states of every step of a recorded run (kept ones as kept, the others replayed), for
    evaluating responses on; holds all N+1 states (the adjoint sweep itself holds fewer)."""
    states = [run.states[0]]
    for k in range(len(run.steps)):
        states.append(run.states[k + 1] if k + 1 in run.states else _solves(run, k, states[-1])[-1][2])
    stretch = None if states[0].stretch is None else [s.stretch for s in states]
    multipliers = [s.lam for s in states] if run.asm.constraints is not None else None
    return Trajectory([s.t for s in states], [s.u for s in states], [s.v for s in states], run.asm, stretch,
                      multipliers)


class _ParameterTerms:
    """psi . dg/dp (n_r, n_p) of all parameters at one solve, at a cost that does not grow with
    the number of section-property parameters: each distinct *part* is evaluated once per solve --
    a section group's properties one by one (a stiffness or density scale of such a group is the
    sum of its properties' parts, each property entering linearly and apart: parameters module
    docstring), other kinds each on its own -- and its element shares are dotted with psi gathered
    to the elements (one row-wise product per part) and spread to the parameters by a weight
    matrix (n_el, n_p) formed once per run: 1 where the parameter multiplies the part on the
    element."""

    def __init__(self, asm: Assembly, parameters: list[TransientParameter | DriveAmplitude]) -> None:
        self.n_p = len(parameters)
        #: (column, drive amplitude): evaluated by the step derivative's parameter_terms
        self.drives: list[tuple[int, DriveAmplitude]] = []
        #: (part evaluated, [(column, elements or None)])
        self.parts: list[tuple[TransientParameter, list[tuple[int, tuple[int, ...] | None]]]] = []
        shared: dict[tuple[str, str], int] = {}
        #: per constant sparse matrix (id): (the matrix, (rows, columns, values, transpose))
        self._coo_kept: dict[int, tuple] = {}
        #: (id of an index array, k) -> (the array, its flattened entries + k n_dof)
        self._offsets: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        for j, p in enumerate(parameters):
            if isinstance(p, DriveAmplitude):
                self.drives.append((j, p))
                continue
            for group, prop in _property_parts(asm, p):
                if prop is None:                     # not split: the parameter's own part on this group
                    own = p if group is None else dataclasses.replace(p, groups=(group,),
                                                                      _parts=weakref.WeakKeyDictionary())
                    self.parts.append((own, [(j, None)]))
                    continue
                key = (group, prop)
                if key not in shared:
                    whole = TransientParameter(f"{prop} of {group}", "section property", "1", (group,), prop)
                    shared[key] = len(self.parts)
                    self.parts.append((whole, []))
                self.parts[shared[key]][1].append((j, p.elements))
        #: the section properties of planar Beam2D groups, evaluated by one compiled call per group
        #: (:meth:`_beam_products`): (kernel arguments, the properties' masses, weights (n_el 4, n_p))
        self.beams: list[tuple[tuple, np.ndarray, np.ndarray]] = []
        compiled = self._compiled_parts(asm, shared)
        self._at_director = np.zeros(asm.n_dof, dtype=bool)
        self._at_director[asm.director_dofs] = True
        #: nodal masses (point masses, 2D bodies' mass and inertia) off the director DOFs, without
        #: gravity and spatial rotations: (column, DOFs (ne,), mass (ne, ne)); their share is M a_m
        self.nodal: list[tuple[int, np.ndarray, np.ndarray]] = []
        if _COMPILED_BEAMS and not asm.rotation_dofs.size and not np.any(asm.model.gravity):
            for i, (p, columns) in enumerate(self.parts):
                pieces = p._part(asm) if p.kind in ("point mass", "body mass", "body inertia") else []
                if len(pieces) == 1 and len(columns) == 1 and pieces[0].group is None \
                        and not self._at_director[pieces[0].ed].any():
                    self.nodal.append((columns[0][0], pieces[0].ed[0], pieces[0].mass[0]))
                    compiled.add(i)
        #: the parts evaluated by their residual shares (the others are the compiled and nodal ones)
        self.general = [i for i in range(len(self.parts)) if i not in compiled]
        # the parts' pieces grouped by their elements' DOFs (n_el, ne): per group one gather of psi and
        # one product with the weights (k n_el, n_p) of its k pieces
        groups: list[tuple[np.ndarray, list[tuple[int, int]]]] = []
        for i in self.general:
            for k, piece in enumerate(self.parts[i][0]._part(asm)):
                same = (g for g in groups if g[0].shape == piece.ed.shape and np.array_equal(g[0], piece.ed))
                found = next(same, None)
                if found is None:
                    groups.append((piece.ed, [(i, k)]))
                else:
                    found[1].append((i, k))
        # the weights' rows element-major, (n_el k, n_p), as the products (n_el, k, n_r) are laid out
        self.blocks = [(ed, pieces, np.stack([self._weights(i, ed.shape[0]) for i, _ in pieces], axis=1)
                        .reshape(-1, self.n_p)) for ed, pieces in groups]

    def _compiled_parts(self, asm: Assembly, shared: dict[tuple[str, str], int]) -> set[int]:
        """Fill :attr:`beams` with the section-property parts of the planar Beam2D groups that the
        compiled kernel evaluates (models without spatial rotations and gravity, groups without
        Rayleigh damping: the kernel forms neither weight nor damping shares); returns those parts."""
        compiled: set[int] = set()
        if not _COMPILED_BEAMS or asm.rotation_dofs.size or np.any(asm.model.gravity):
            return compiled
        cubic = dict(asm.configuration_masses)
        for index, group in enumerate(asm.groups):
            if type(group) is not Beam2D or group.rayleigh is not None:
                continue
            properties = beam_kernels().PROPERTIES
            found = [(k, shared[(group.name, prop)]) for k, prop in enumerate(properties)
                     if (group.name, prop) in shared]
            if not found:
                continue
            n_el = group.n_elements
            W = np.zeros((n_el, len(properties), self.n_p))
            for k, i in found:
                W[:, k] = self._weights(i, n_el)
                compiled.add(i)
            # the constant masses of rho_A alone and of rho_I alone (the other property zero)
            X = asm.model.coordinates[group.connectivity]
            masses = []
            for zero in ("rho_I", "rho_A"):
                alone = copy.copy(group)
                setattr(alone, zero, np.zeros_like(getattr(group, zero)))
                masses.append(alone.mass_matrix(X))
            self.beams.append((_beam_arguments(asm, index, cubic.get(index)), np.stack(masses),
                               W.reshape(-1, self.n_p)))
        return compiled

    def transposed(self, inertia: InertiaStart, D: InertiaMatrix, y: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(D^T y, inertia.v^T y, inertia.stretch^T y), each (n_dof, n_r), for y (n_dof, n_r) on the
        residual's rows. Planar models in one pass: the three matrices' element products, and their
        constant sparse parts' products, are scattered to the stacked rows (3 n_dof) by one bincount
        per response (applying each matrix on its own costs a scatter per block and an array per
        matrix, which on small models is the cost). At spatial rotations (column maps) each matrix
        by :meth:`StartMatrix.rmatvec`."""
        mats = (D, inertia.v, inertia.stretch)
        if D.rotation_dofs.size:
            out = [StartMatrix.rmatvec(M, y) for M in mats]
            for k, M in enumerate(mats):
                for c, S in M.sparse:
                    out[k] += c * (self._coo(S)[3] @ y)
            return out[0], out[1], out[2]
        n, n_r = y.shape
        index, weights = [], []
        for k, M in enumerate(mats):
            for ed, K in M.blocks:
                index.append(self._offset(ed, k, n))
                weights.append(np.matmul(K.transpose(0, 2, 1), y[ed]).reshape(-1, n_r))
            # the constant sparse parts: (S^T y)[j] = sum_i S_ij y_i
            for c, S in M.sparse:
                rows, cols, values, _ = self._coo(S)
                index.append(self._offset(cols, k, n))
                weights.append((c * values)[:, None] * y[rows])
        index, weights = np.concatenate(index), np.concatenate(weights)
        if n_r == 1:
            flat = np.bincount(index, weights=weights[:, 0], minlength=3 * n)[:, None]
        else:
            flat = np.stack([np.bincount(index, weights=weights[:, r], minlength=3 * n) for r in range(n_r)], axis=1)
        return flat[:n], flat[n:2 * n], flat[2 * n:]

    def _coo(self, S: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray, sp.csr_matrix]:
        """S's rows, columns and values (nnz,) and its transpose (CSR), formed once per run (the
        constant mass: scipy's transpose and product cost more than the product's flops on small
        models)."""
        kept = self._coo_kept.get(id(S))
        if kept is None or kept[0] is not S:
            coo = S.tocoo()
            kept = self._coo_kept[id(S)] = (S, (coo.row, coo.col, coo.data, sp.csr_matrix(S.T)))
        return kept[1]

    def _offset(self, dofs: np.ndarray, k: int, n: int) -> np.ndarray:
        """dofs (any shape) + k n, flattened: the rows of the k-th of the stacked products (kept per
        run for arrays the derivatives keep)."""
        key = (id(dofs), k)
        kept = self._offsets.get(key)
        if kept is None or kept[0] is not dofs:
            if len(self._offsets) > 64:              # arrays formed per step (the joints' blocks): not kept
                self._offsets.clear()
            kept = self._offsets[key] = (dofs, dofs.ravel() + k * n)   # holds dofs: its id is not reused
        return kept[1]

    def __call__(self, derivative: StepDerivative, stepper: MidPoint, start: State, dt: float, end: State,
                 psi: np.ndarray, psi_phi: np.ndarray, kinematics: dict) -> np.ndarray:
        """psi . dg/dp + psi_phi . dPhi/dp (n_r, n_p) for the adjoint vectors psi (n_dof, n_r) on the
        residual's rows and psi_phi (n_c, n_r) on the constraint rows; ``kinematics`` the step's, kept
        by the caller for this step (:meth:`TransientParameter.residual_shares`)."""
        u1 = end.u
        out = np.zeros((psi.shape[1], self.n_p))
        for j, p in self.drives:
            g_p, phi_p = derivative.parameter_terms(stepper, start, dt, end, p)
            out[:, j] = phi_p @ psi_phi
            if g_p is not None:
                out[:, j] += g_p @ psi
        shares = {i: self.parts[i][0].residual_shares(stepper, start, dt, u1, kinematics) for i in self.general}
        for ed, pieces, W in self.blocks:
            S = np.stack([shares[i][k][1] for i, k in pieces], axis=1)             # (n_el, k, ne)
            # each element's psi . share, (n_el k, n_r), summed over each parameter's elements
            out += np.matmul(S, psi[ed]).reshape(-1, psi.shape[1]).T @ W
        if self.beams:
            out += self._beam_products(stepper, start, dt, u1, psi, kinematics)
        if self.nodal:
            if "motion" not in kinematics:
                kinematics["motion"] = stepper._motion(start, dt, u1)
            a_m = kinematics["motion"][1]
            for j, dofs, M in self.nodal:
                out[:, j] += (M @ a_m[dofs]) @ psi[dofs]
        return out

    def _beam_products(self, stepper: MidPoint, start: State, dt: float, u1: np.ndarray, psi: np.ndarray,
                       kinematics: dict) -> np.ndarray:
        """psi . dg/dp (n_r, n_p) of the compiled Beam2D groups' section properties: per group one
        kernel call gives each element's psi . share of EA, EI, rho_A and rho_I, (n_el, 4, n_r), which
        the group's weights spread to the parameters."""
        asm = stepper.asm
        if "motion" not in kinematics:
            kinematics["motion"] = stepper._motion(start, dt, u1)
        a_m = kinematics["motion"][1]
        n, n_r = psi.shape
        unit = _director_unit(asm, start, dt, kinematics) if asm.director_dofs.size else np.zeros(n)
        stretch = np.zeros(n) if start.stretch is None else start.stretch
        psi = np.ascontiguousarray(psi)
        out = np.zeros((n_r, self.n_p))
        for arguments, masses, W in self.beams:
            products = np.empty((arguments[0].shape[0], len(beam_kernels().PROPERTIES), n_r))
            beam_kernels().beam2d_parameter_products(*arguments, masses, start.u, u1, start.v, stretch, a_m, unit,
                                                     self._at_director, dt, psi, products)
            out += products.reshape(-1, n_r).T @ W
        return out

    def _weights(self, part: int, n_el: int) -> np.ndarray:
        """(n_el, n_p) of a part's piece: 1 where a parameter multiplies the part on the element."""
        W = np.zeros((n_el, self.n_p))
        for j, elements in self.parts[part][1]:
            W[slice(None) if elements is None else list(elements), j] += 1.0
        return W


_KERNELS: list = []


def beam_kernels():
    """The compiled module :mod:`flexmb.compiled.adjoint_beam2d` (imported on first use: numba)."""
    if not _KERNELS:
        from flexmb.compiled import adjoint_beam2d

        _KERNELS.append(adjoint_beam2d)
    return _KERNELS[0]


def _beam_arguments(asm: Assembly, index: int, cubic: HermiteMass2D | None) -> tuple:
    """The kernels' arguments of Beam2D group ``index``: X (n_el, 2, 2), EA, EI, second_order, its
    element DOFs (n_el, 6), and whether it has a cubic mass with that mass's alpha0, l0, mass (n_el,)
    (empty arrays without)."""
    group = asm.groups[index]
    X = np.ascontiguousarray(asm.model.coordinates[group.connectivity], dtype=float)
    constants = (cubic.alpha0, cubic.l0, cubic.mass) if cubic is not None else (np.zeros(0),) * 3
    return (X, np.asarray(group.EA, dtype=float), np.asarray(group.EI, dtype=float), bool(group.second_order),
            np.ascontiguousarray(asm.dofs.element_dofs(group), dtype=np.int64), cubic is not None,
            *(np.ascontiguousarray(c, dtype=float) for c in constants))


class _CompiledBeams:
    """The transposed start products of a reverse solve, ``(D^T psi, (dg/dv_n)^T psi, (dg/ds_n)^T
    psi)``, with the planar Beam2D groups' terms (forces, cubic masses), the constant mass and the
    director DOFs' rotary inertia by compiled kernels (:mod:`flexmb.compiled.adjoint_beam2d`), one
    call per group and one for the model, without forming the start derivatives' blocks; the other
    terms (other groups' forces, damping, weight, joints) by their :class:`StartMatrix`. For models
    without spatial rotations whose configuration-dependent masses are all Beam2D cubic masses
    (:meth:`covers`); the others take :func:`_start_matrix` and :meth:`_ParameterTerms.transposed`."""

    def __init__(self, asm: Assembly) -> None:
        self.asm = asm
        cubic = dict(asm.configuration_masses)
        self.groups = [_beam_arguments(asm, i, cubic.get(i)) for i, g in enumerate(asm.groups) if type(g) is Beam2D]
        #: the groups whose force terms the kernels form
        self.skip = {i for i, g in enumerate(asm.groups) if type(g) is Beam2D}
        # the constant mass on the rows off the director DOFs (as InertiaDerivatives keeps it), CSR
        keep = np.ones(asm.n_dof)
        keep[asm.director_dofs] = 0.0
        S = (sp.diags(keep) @ asm.mass).tocsr()
        S.sort_indices()
        self.mass = (S.indptr.astype(np.int64), S.indices.astype(np.int64), np.asarray(S.data, dtype=float))
        self.director_dofs = np.ascontiguousarray(asm.director_dofs, dtype=np.int64)
        #: the other terms: damping, weight (:meth:`transposed`)
        self.damped, self.gravity = bool(asm.damped_groups), bool(np.any(asm.model.gravity))
        #: stand-ins for a state without stretch rates and a step without director DOFs
        self.zeros, self.no_director = np.zeros(asm.n_dof), np.zeros((5, 0))

    @staticmethod
    def covers(asm: Assembly) -> bool:
        """Whether this path applies: no spatial rotations, Beam2D groups, and every configuration-dependent
        mass a Beam2D group's cubic mass (not a modal body)."""
        if not _COMPILED_BEAMS or asm.rotation_dofs.size or not any(type(g) is Beam2D for g in asm.groups):
            return False
        return all(type(asm.groups[i]) is Beam2D and type(k) is HermiteMass2D for i, k in asm.configuration_masses)

    def transposed(self, derivative: StepDerivative, start: State, dt: float, end: State, motion: tuple,
                   psi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(D^T psi, (dg/dv_n)^T psi, (dg/ds_n)^T psi), each (n_dof, n_r), for psi (n_dof, n_r) on the
        residual's rows, at the solve of dt (s) from ``start`` to ``end`` with its kinematics ``motion``
        (:meth:`MidPoint._motion`: the end rates and the director step)."""
        asm, kernels = self.asm, beam_kernels()
        n, n_r = psi.shape
        psi = np.ascontiguousarray(psi)
        back_u, back_v, back_s = np.zeros((n, n_r)), np.zeros((n, n_r)), np.zeros((n, n_r))
        u0, u1, v0 = start.u, end.u, start.v
        stretch0 = self.zeros if start.stretch is None else start.stretch
        director = motion[4]
        stretch1, domega1 = np.zeros(n), np.zeros(n)
        if director is None:
            director = self.no_director
        else:
            stretch1[self.director_dofs], domega1[self.director_dofs] = director[1], director[2]
        for arguments in self.groups:
            kernels.beam2d_start_transposed(*arguments, u0, u1, v0, stretch0, motion[0], stretch1, domega1, dt, psi,
                                            back_u, back_v, back_s)
        kernels.model_start_transposed(*self.mass, self.director_dofs, asm.director_inertia, director, u0, u1, dt,
                                       psi, back_u, back_v, back_s)
        forces = derivative.forces
        rest = forces.forces(u0, u1, self.skip)
        if self.damped:
            rest = rest + forces.damping(u0, u1, dt)
        if self.gravity:
            rest = rest + forces.external(u0, u1)
        if derivative.joints is not None:
            rest = rest + derivative.joints.force(u0, u1, end.lam, start.t, start.t + dt)
        if rest.blocks:
            back_u += rest.rmatvec(psi)
        return back_u, back_v, back_s


def _property_parts(asm: Assembly, p: TransientParameter) -> list[tuple[str | None, str | None]]:
    """The parts :class:`_ParameterTerms` evaluates for p: (group name, section property) per
    property p multiplies on a section group, (group name, None) for a group whose part is not
    split (a modal body; a Beam3D with a finite shear stiffness, whose bending is not linear in
    EI_y and EI_z apart), (None, None) for p's own part (the other kinds)."""
    if p.kind == "section property":
        return [(group, p.prop) for group in p.groups]
    if p.kind not in ("stiffness scale", "density scale"):
        return [(None, None)]
    out: list[tuple[str | None, str | None]] = []
    for group in p._groups(asm.model):
        kind = type(group).__name__
        finite_shear = p.kind == "stiffness scale" and any(np.any(np.isfinite(getattr(group, name)))
                                                          for name in _SHEAR if hasattr(group, name))
        if kind not in SECTION_GROUPS or finite_shear:
            out.append((group.name, None))
        else:
            props = STIFFNESS_PROPERTIES[kind] if p.kind == "stiffness scale" else MASS_PROPERTIES[kind]
            out += [(group.name, prop) for prop in props]
    return out


def _seeds(responses: Sequence[ResponseValue], n_states: int) -> dict[int, list[tuple[str, int, np.ndarray,
                                                                                       np.ndarray]]]:
    """Per step, the responses' state derivatives there: (field, response, DOFs (k,), values (k,))."""
    out: dict[int, list] = {}
    for r, response in enumerate(responses):
        grad = response.gradient
        if grad.steps.size and (grad.steps.min() < 0 or grad.steps.max() >= n_states):
            raise ModelError(f"adjoint: response {r} names step {int(grad.steps.max())}, the run has steps "
                             f"0 .. {n_states - 1}; evaluate it on this run's trajectory")
        for name, (dofs, values) in grad.parts.items():
            if name not in _FIELDS:
                raise ModelError(f"adjoint: response {r} depends on the run's {name}, which the adjoint does not "
                                 f"carry (it carries {', '.join(_FIELDS)})")
            for m, step in enumerate(grad.steps):
                out.setdefault(int(step), []).append((name, r, np.asarray(dofs), np.asarray(values[m])))
    return out


def adjoint_gradient(run: RecordedRun, parameters: Sequence[TransientParameter | DriveAmplitude],
                     responses: Sequence[ResponseValue]) -> AdjointGradient:
    """dF/dp (n_r, n_p) of the responses (evaluated on the run's states, :func:`trajectory`) with
    respect to the parameters, by the discrete adjoint of the recorded run (mid-point or composed
    mid-point, joints and spatial rotations included): a reverse sweep over its Newton solves with
    the run's kept states as checkpoints (module docstring). Equal to the direct differentiation's
    gradients to round-off; its cost does not grow with the number of element-property parameters."""
    stepper, asm = run.stepper, run.asm
    check_model(asm, stepper)
    parameters, responses = check_parameters(asm, parameters, "adjoint"), list(responses)
    if not responses:
        raise ModelError("adjoint: give at least one response")
    for r in responses:
        if not isinstance(r, ResponseValue):
            raise ModelError(f"adjoint: expected response values of flexmb.sensitivity.responses, got {r!r}")
    n, n_r, N = asm.n_dof, len(responses), len(run.steps)
    derivative = StepDerivative(asm, parameters)
    terms = _ParameterTerms(asm, parameters)
    beams = _CompiledBeams(asm) if _CompiledBeams.covers(asm) else None
    seeds = _seeds(responses, N + 1)
    n_c = asm.constraints.n if asm.constraints is not None else 0
    mu = {name: np.zeros((n_c if name == "multipliers" else n, n_r)) for name in _FIELDS}

    def seed(k: int) -> None:
        for name, r, dofs, values in seeds.get(k, ()):
            np.add.at(mu[name][:, r], dofs, values)

    grad = np.zeros((n_r, len(parameters)))
    kept = sorted(run.states)
    if kept[0] != 0 or kept[-1] != N:
        raise ModelError("adjoint: the run must keep its start and last states (record keeps them)")
    solves = recomputed = held = memory = 0
    seed(N)
    for first, last in zip(kept[-2::-1], kept[:0:-1]):
        # the segment's solves, recomputed from its first kept state as the run took them
        segment, state = [], run.states[first]
        for k in range(first, last):
            pieces = _solves(run, k, state)
            recomputed += len(pieces) - (k + 1 in run.states and pieces[-1][2] is run.states[k + 1])
            segment.append(pieces)
            state = pieces[-1][2]
        count = len(kept) + sum(len(p) for p in segment)
        if count > held:
            held = count
            memory = sum(_nbytes(s) for s in run.states.values()) + sum(_nbytes(p[2]) for ps in segment for p in ps)
        for k in range(last - 1, first - 1, -1):
            for start, dt, end in reversed(segment[k - first]):
                grad -= _solve_adjoint(derivative, terms, beams, stepper, start, dt, end, mu)
                solves += 1
            seed(k)
    explicit = [np.asarray(r.parameter_gradient, dtype=float) for r in responses]
    for r, e in enumerate(explicit):
        if e.size:
            if e.size != len(parameters):
                raise ModelError(f"adjoint: response {r} holds explicit partials of {e.size} parameters, the "
                                 f"gradient is of {len(parameters)}; evaluate it with the same parameters")
            grad[r] += e
    return AdjointGradient(parameters, grad, np.array([r.value for r in responses]), solves, recomputed, held,
                           memory)


def _nbytes(s: State) -> int:
    """The bytes of a state's arrays."""
    arrays = (s.u, s.v, s.a, s.reaction, s.lam, s.constraint_force, s.stretch)
    return sum(a.nbytes for a in arrays if a is not None)


def _solve_adjoint(derivative: StepDerivative, terms: _ParameterTerms, beams: _CompiledBeams | None,
                   stepper: MidPoint, start: State, dt: float, end: State, mu: dict[str, np.ndarray]) -> np.ndarray:
    """One Newton solve's adjoint (module docstring): mu (n_dof, n_r) per field (the multipliers'
    (n_c, n_r)), at the solve's end on entry, replaced by mu at its start; returns psi . dg/dp
    (n_r, n_p). ``beams``: the compiled transposed products where they apply, else None."""
    # the step's kinematics, once for the director rule here, the start derivatives and the parameter terms
    kinematics = {"motion": stepper._motion(start, dt, end.u)}
    if beams is not None:
        return _solve_adjoint_compiled(derivative, terms, beams, stepper, start, dt, end, mu, kinematics)
    asm = derivative.asm
    free, dd = asm.dofs.free, asm.director_dofs
    mu_lam = mu["multipliers"]
    u0, u1 = start.u, end.u
    mu_u, mu_v, mu_s = mu["u"], mu["v"], mu["stretch"]
    # w: mu on U_{n+1} through the end rates
    w = mu_u + (2.0 / dt) * mu_v
    rotations = derivative.rotations
    if rotations is not None:
        # spatial rotations: mu on the solve's Cayley changes and on the start's spins and rates
        rd = asm.rotation_dofs
        w[rd], on_start, on_rates = rotations.transpose(rotations.maps(u0, u1, start.v, dt), mu_u[rd], mu_v[rd])
    if dd.size:
        dth, w0, s0 = u1[dd] - u0[dd], start.v[dd], start.stretch[dd]
        c, s = np.cos(dth)[:, None], np.sin(dth)[:, None]
        dw_dth = kinematics["motion"][4][2][:, None]                         # the director rule's d omega1/d dth
        ds_dth = (2.0 / dt + s0)[:, None] * s - w0[:, None] * c
        mv, ms = mu_v[dd], mu_s[dd]
        w[dd] = mu_u[dd] + dw_dth * mv + ds_dth * ms
    psi = np.zeros_like(mu_u)
    psi_phi = np.zeros_like(mu_lam)
    if free.size or mu_lam.shape[0]:
        y = step_jacobian(stepper, start, dt, end).solve(np.concatenate([w[free], mu_lam]), transpose=True)
        psi[free], psi_phi = y[:free.size], y[free.size:]
    D, inertia = _start_matrix(derivative, start, dt, end, kinematics["motion"])
    back_u, back_v, back_s = terms.transposed(inertia, D, psi)
    new_u = mu_u - w - back_u
    new_v = -mu_v - back_v
    if rotations is not None:
        new_u[rd], new_v[rd] = on_start - back_u[rd], on_rates - back_v[rd]
    new_s = np.zeros_like(mu_s)
    if dd.size:
        new_v[dd] = -c * mv - s * ms - back_v[dd]
        new_s[dd] = s * mv - c * ms - back_s[dd]
    # the solve's multipliers are its output alone: their seeds are spent
    mu["u"], mu["v"], mu["stretch"], mu["multipliers"] = new_u, new_v, new_s, np.zeros_like(mu_lam)
    return terms(derivative, stepper, start, dt, end, psi, psi_phi, kinematics)


def _solve_adjoint_compiled(derivative: StepDerivative, terms: _ParameterTerms, beams: _CompiledBeams,
                            stepper: MidPoint, start: State, dt: float, end: State, mu: dict[str, np.ndarray],
                            kinematics: dict) -> np.ndarray:
    """:func:`_solve_adjoint` of a model :class:`_CompiledBeams` covers (no spatial rotations): the
    same steps, its elementwise ones and the transposed start products by compiled kernels."""
    kernels, free = beam_kernels(), derivative.asm.dofs.free
    mu_u, mu_v, mu_s, mu_lam = mu["u"], mu["v"], mu["stretch"], mu["multipliers"]
    motion = kinematics["motion"]
    stretch0 = beams.zeros if start.stretch is None else start.stretch
    director = beams.no_director if motion[4] is None else motion[4]
    w = np.empty(mu_u.shape)
    kernels.end_weights(mu_u, mu_v, mu_s, beams.director_dofs, director, start.u, end.u, start.v, stretch0, dt, w)
    psi = np.zeros(mu_u.shape)
    psi_phi = np.zeros(mu_lam.shape)
    if free.size or mu_lam.shape[0]:
        y = step_jacobian(stepper, start, dt, end).solve(np.concatenate([w[free], mu_lam]), transpose=True)
        psi[free], psi_phi = y[:free.size], y[free.size:]
    back_u, back_v, back_s = beams.transposed(derivative, start, dt, end, motion, psi)
    kernels.start_adjoint(mu_u, mu_v, mu_s, w, beams.director_dofs, start.u, end.u, back_u, back_v, back_s)
    # the solve's multipliers are its output alone: their seeds are spent
    mu["u"], mu["v"], mu["stretch"], mu["multipliers"] = back_u, back_v, back_s, np.zeros(mu_lam.shape)
    return terms(derivative, stepper, start, dt, end, psi, psi_phi, kinematics)


def _start_matrix(derivative: StepDerivative, start: State, dt: float, end: State, motion: tuple
                  ) -> tuple[InertiaMatrix, InertiaStart]:
    """:meth:`StepDerivative.start_matrix` with the step's kinematics ``motion``
    (:meth:`MidPoint._motion`) given, so that the inertia's director rule is not evaluated again."""
    u0, u1 = start.u, end.u
    inertia = derivative.inertia.residual(u0, u1, start.v, start.stretch, dt, motion)
    forces = derivative.forces.residual(u0, u1, dt)
    if derivative.joints is not None:
        forces = forces + derivative.joints.force(u0, u1, end.lam, start.t, start.t + dt)
    return forces + inertia.u, inertia
