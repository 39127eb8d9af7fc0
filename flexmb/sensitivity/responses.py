"""Response functionals of a transient run and their derivatives with respect to the states the
run stepped through (issue 33, piece P8).

A response is ``F = sum_n f_n(x_n)`` over the states ``x_n = (u_n, v_n, s_n, lambda_n)``,
n = 0 .. N, of *every* step of the run (not only its output steps): a :class:`Trajectory`.
It is built from a scalar *signal* ``y_n = h(x_n)`` (a DOF, a point of a node or body or a
model's sensor, the deflection from a chord, the kinetic or strain energy, a joint multiplier or
a joint's reaction in its frame) and a *functional* of its series:

===================  =================================================  ===================
functional           F                                                  unit
===================  =================================================  ===================
:func:`at`           y at a step time (linear between two step times)   y's
:func:`final`        y_N                                                y's
:func:`integral`     trapezoidal rule over the step times,              y's times s
                     ``sum_n (t_{n+1} - t_n) (y_n + y_{n+1}) / 2``
:func:`ks_max`       Kreisselmeier-Steinhauser aggregate                y's
                     ``KS = m + ln(sum_n exp(rho (y_n - m))) / rho``,
                     m = max y_n; ``max y <= KS <= max y + ln(n) / rho``
:func:`maximum`      the largest sample y_k (its derivative exists      y's
                     where k is unique: the margin to the others is
                     reported)
:func:`first_peak`   the vertex of the parabola through the samples     y's
                     about the first local maximum (the slider-crank
                     validation's peak)
===================  =================================================  ===================

The integral's rule is the trapezoidal one, the quadrature the mid-point scheme itself applies
over a step to what it averages between the step's ends (loads, ``f_m = (f_n + f_{n+1}) / 2``);
it is exact for y linear over each step. Minima: a functional of :func:`scaled` (y, -1).

Each functional returns a :class:`ResponseValue`: the value F and ``dF/dx_n`` as a
:class:`StateGradient`, non-zero at the steps it names and, per field (``"u"``, ``"v"``,
``"stretch"``, ``"multipliers"``), at the DOFs it names -- what the direct differentiation and the
adjoint consume. Derivatives at spatial (3D) rotation DOFs are with respect to spins
(``delta R = hat(delta theta) R``), the perturbations the 3D schemes use, not with respect to
the stored rotation vector; angular velocities are plain vectors.

Given the design parameters (``parameters=``, :mod:`flexmb.sensitivity.parameters`), a
functional also returns its explicit partials dF/dp at fixed states (``parameter_gradient``):
non-zero for the energies, whose mass and stiffness are parameters, zero for kinematic signals.

Every derivative is exact except a joint reaction's with respect to u, a central difference
(``info["approximate"]``): its frame and lever turn with the sides, and the constraints' second
derivatives are not available. Each response's derivative is checked against central
differences of its value in tests/test_sensitivity_responses.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from flexmb.checks import ModelError, keywords_listed
from flexmb.elements.body_load import BodyPointLoad
from flexmb.elements.hermite_mass2d import HermiteMass2D
from flexmb.elements.user_force import UserForce
from flexmb.model import Model
from flexmb.rotations import exp_map, skew

if TYPE_CHECKING:
    from flexmb.assembly import Assembly
    from flexmb.multibody.joints import Joint
    from flexmb.results import TimeHistory

#: the state fields a response can depend on
FIELDS = ("u", "v", "stretch", "multipliers")
#: complex step of the cubic masses' kinetic energy (exact first derivatives, no cancellation)
_STEP = 1e-30
#: 2D rotation by +90 degrees: d R(theta) / d theta = J R(theta)
_J2 = np.array([[0.0, -1.0], [1.0, 0.0]])


# ---------------------------------------------------------------- containers
@dataclass
class Trajectory:
    """The states of a run at every step, n = 0 .. N: times ``t`` (N+1,) in s, ``u`` and ``v``
    (N+1, n_dof), the director stretch rates ``stretch`` (N+1, n_dof) (mid-point scheme with
    cubic-mass beams, else None) and the joints' ``multipliers`` (N+1, n_c) (else None), with
    the run's assembly ``asm``."""

    t: np.ndarray
    u: np.ndarray
    v: np.ndarray
    asm: object
    stretch: np.ndarray | None = None
    multipliers: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.t = np.asarray(self.t, dtype=float)
        n = self.t.size
        for name in FIELDS:
            value = getattr(self, name)
            if value is not None:
                value = np.asarray(value, dtype=float)
                if value.ndim != 2 or value.shape[0] != n:
                    raise ModelError(f"Trajectory: {name} must have one row per time ({n}), got shape {value.shape}")
                setattr(self, name, value)
        if n < 1 or np.any(np.diff(self.t) <= 0.0):
            raise ModelError("Trajectory: the times must increase and there must be at least one")

    @property
    def n_states(self) -> int:
        return self.t.size

    @classmethod
    def from_history(cls, history: TimeHistory, asm: Assembly) -> Trajectory:
        """The trajectory of a :class:`~flexmb.results.TimeHistory` that recorded every step
        (``output_every=1``); ModelError if steps are missing from it."""
        t = np.asarray(history.t, dtype=float)
        if history.step_sizes.size != t.size - 1:
            raise ModelError(f"Trajectory.from_history: the run took {history.step_sizes.size} steps but recorded "
                             f"{t.size - 1}; responses need every step (integrate with output_every=1)")
        stretch = np.asarray(history.stretch)
        multipliers = np.asarray(history.multipliers)
        return cls(t, history.u, history.v, asm, stretch if stretch.ndim == 2 and stretch.shape[1] else None,
                   multipliers if multipliers.ndim == 2 and multipliers.shape[1] else None)

    def steps_in(self, window: tuple[float, float] | None) -> np.ndarray:
        """Indices of the steps with t in the closed window (t_start, t_end) (s), all without one."""
        if window is None:
            return np.arange(self.n_states)
        lo, hi = (float(w) for w in window)
        tol = 1e-9 * (self.t[-1] - self.t[0] or 1.0)
        steps = np.flatnonzero((self.t >= lo - tol) & (self.t <= hi + tol))
        if not steps.size:
            raise ModelError(f"window ({lo:g}, {hi:g}) s holds no step of the run (t = {self.t[0]:g} .. "
                             f"{self.t[-1]:g} s)")
        return steps


@dataclass
class StateGradient:
    """dF/dx_n, non-zero only at ``steps`` (m,): per field (``"u"``, ``"v"``, ``"stretch"``,
    ``"multipliers"``) the DOF (or multiplier) indices (k,) and the values (m, k) there."""

    steps: np.ndarray
    parts: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def dense(self, name: str, n_states: int, size: int) -> np.ndarray:
        """The derivative with respect to field ``name`` of every state, (n_states, size)."""
        out = np.zeros((n_states, size))
        if name in self.parts:
            dofs, values = self.parts[name]
            np.add.at(out, (self.steps[:, None], dofs[None, :]), values)
        return out


@dataclass
class ResponseValue:
    """A response's value F, its derivative ``gradient`` with respect to the states, its unit,
    what the functional reports beside (``info``: the peak's step and margin, KS bounds) and
    ``parameter_gradient`` (n_p,): its explicit partials dF/dp at fixed states for the
    parameters the functional was given (an energy depends on the masses and stiffnesses; the
    kinematic signals on none), in the response's unit per parameter unit."""

    value: float
    gradient: StateGradient
    unit: str
    info: dict = field(default_factory=dict)
    parameter_gradient: np.ndarray = field(default_factory=lambda: np.zeros(0))


# ------------------------------------------------------------------- signals
def _assembly(model: Model | Assembly) -> Assembly:
    """The Assembly of a Model (numbered as the run's: the DOF map depends on the model alone), or
    the Assembly given; energies are evaluated on it."""
    from flexmb.assembly import Assembly

    if isinstance(model, Assembly):
        return model
    if isinstance(model, Model):
        return Assembly(model)
    raise ModelError(f"response signal: expected a Model or its Assembly, got {type(model).__name__}")


class Signal:
    """A scalar y_n = h(x_n) per state, with its derivative: :meth:`evaluate` returns y at the
    given steps (m,) and per field the indices (k,) and dy/dx there (m, k)."""

    unit = ""
    #: whether a part of its derivative is a difference quotient (else all exact)
    approximate = False

    def evaluate(self, traj: Trajectory, steps: np.ndarray) -> tuple[np.ndarray, dict]:
        raise NotImplementedError

    def parameter_partials(self, traj: Trajectory, steps: np.ndarray, parameters: Sequence) -> np.ndarray:
        """dy/dp at fixed states (m, n_p) for the given parameters
        (:class:`~flexmb.sensitivity.parameters.TransientParameter`): zero for kinematic signals."""
        return np.zeros((steps.size, len(parameters)))


class _Dof(Signal):
    """Entry ``index`` of the state field ``state_field`` (one of :data:`FIELDS`)."""

    def __init__(self, index: int, state_field: str, unit: str) -> None:
        self.index, self.state_field, self.unit = index, state_field, unit

    def evaluate(self, traj, steps):
        data = getattr(traj, self.state_field)
        if data is None or not 0 <= self.index < data.shape[1]:
            raise ModelError(f"dof signal: the trajectory has no {self.state_field}[{self.index}]")
        return data[steps, self.index], {self.state_field: (np.array([self.index]), np.ones((steps.size, 1)))}


@keywords_listed
def dof(model: Model | Assembly, node: int, name: str, rate: bool = False) -> Signal:
    """The value (or with ``rate`` the velocity) of DOF ``name`` (``"ux"``, ``"rz"``, ...) of
    ``node``: m or rad (m/s or rad/s). A 3D rotation's value is refused (its rotation vector is no
    state coordinate: take a point with an offset)."""
    asm = _assembly(model)
    index = asm.dofs.index(node, name)
    if not rate and np.isin(index, asm.rotation_dofs):
        raise ModelError(f"dof signal: {name} of node {node} is a spatial rotation; its rotation vector has no "
                         "derivative in spins here (use point() with an offset)")
    rotation = name.startswith("r")
    unit = ("rad" if rotation else "m") + ("/s" if rate else "")
    return _Dof(index, "v" if rate else "u", unit)


@keywords_listed
def multiplier(index: int, unit: str = "N") -> Signal:
    """Lagrange multiplier ``index`` of the joints' constraints (N or N m, as its equation
    scales it) of the step that ends at the state: the mid-point multipliers belong to the step."""
    return _Dof(int(index), "multipliers", unit)


class _Point(Signal):
    """Position (``rate`` False) or velocity of a point at ``offset`` (body frame) of ``node``."""

    def __init__(self, asm, node: int, component: int, offset, rate: bool) -> None:
        dim = asm.model.dim
        self.dim, self.rate, self.component = dim, rate, component
        if not 0 <= component < dim:
            raise ModelError(f"point signal of node {node}: component {component} is not one of 0..{dim - 1}")
        self.trans = asm.dofs.translations()[node]
        self.offset = np.zeros(dim) if offset is None else np.asarray(offset, dtype=float).reshape(dim)
        self.x0 = asm.model.coordinates[node]
        turns = bool(np.any(self.offset))
        if turns and not asm.dofs.has_rotations[node]:
            raise ModelError(f"point signal of node {node}: an offset needs a node with rotations")
        self.rot = (np.array([asm.dofs.index(node, "rz")]) if dim == 2 else
                    asm.dofs.first[node] + 3 + np.arange(3)) if turns else np.zeros(0, dtype=int)
        self.unit = "m/s" if rate else "m"

    def evaluate(self, traj, steps):
        m, c = steps.size, self.component
        e = np.zeros(self.dim)
        e[c] = 1.0
        parts: dict = {}
        field_t = "v" if self.rate else "u"
        if not self.rot.size:
            y = getattr(traj, field_t)[steps][:, self.trans[c]] + (0.0 if self.rate else self.x0[c])
            return y, {field_t: (self.trans[[c]], np.ones((m, 1)))}
        u = traj.u[steps]
        if self.dim == 2:
            th = u[:, self.rot[0]]
            cos, sin = np.cos(th), np.sin(th)
            Rd = np.c_[cos * self.offset[0] - sin * self.offset[1], sin * self.offset[0] + cos * self.offset[1]]
            JRd = Rd @ _J2.T                                                  # (m, 2): d(R d)/d theta
            if not self.rate:
                y = self.x0[c] + u[:, self.trans[c]] + Rd[:, c]
                return y, {"u": (np.r_[self.trans[c], self.rot], np.c_[np.ones(m), JRd[:, c]])}
            w = traj.v[steps][:, self.rot[0]]
            y = traj.v[steps][:, self.trans[c]] + w * JRd[:, c]
            # v_p = v + omega J R d: d/d theta = -omega R d, d/d omega = J R d
            return y, {"u": (self.rot, (-w * Rd[:, c])[:, None]),
                       "v": (np.r_[self.trans[c], self.rot], np.c_[np.ones(m), JRd[:, c]])}
        Rd = np.einsum("nij,j->ni", exp_map(u[:, self.rot]), self.offset)        # (m, 3)
        dspin = -skew(Rd)[:, c, :]                                            # (m, 3): d(R d)/d spin, row c
        if not self.rate:
            y = self.x0[c] + u[:, self.trans[c]] + Rd[:, c]
            return y, {"u": (np.r_[self.trans[c], self.rot], np.c_[np.ones(m), dspin])}
        w = traj.v[steps][:, self.rot]
        y = traj.v[steps][:, self.trans[c]] + np.cross(w, Rd)[:, c]
        # v_p = v + omega x R d: d/d omega = -hat(R d), d/d spin = -hat(omega) hat(R d)
        parts["u"] = (self.rot, -np.einsum("nij,njk->nik", skew(w), skew(Rd))[:, c, :])
        parts["v"] = (np.r_[self.trans[c], self.rot], np.c_[np.ones(m), dspin])
        return y, parts


@keywords_listed
def point(model: Model | Assembly, node: int, component: int, offset: Sequence[float] | np.ndarray | None = None
          ) -> Signal:
    """Position component ``component`` (0 = x, 1 = y, 2 = z) of the point at ``offset`` d (m, body
    frame = global axes of the reference configuration; default the node) of ``node``, m:
    ``p = X + u + R d`` (X the node's reference position), the sensors' ``position``."""
    return _Point(_assembly(model), node, component, offset, False)


@keywords_listed
def point_velocity(model: Model | Assembly, node: int, component: int,
                   offset: Sequence[float] | np.ndarray | None = None) -> Signal:
    """Velocity component of the point at ``offset`` of ``node`` (m/s): ``v + omega x R d``, the
    sensors' ``velocity``."""
    return _Point(_assembly(model), node, component, offset, True)


@keywords_listed
def sensor(model: Model | Assembly, name: str, component: int = 0) -> Signal:
    """The signal of the model's sensor ``name`` (``model.add_sensor``), component ``component``
    for vectors: ``position``, ``velocity`` (points of nodes and bodies), ``angle`` and
    ``angular_velocity`` (2D: the node's rz); the other quantities are refused."""
    asm = _assembly(model)
    found = [s for s in asm.model.sensors if s.name == name]
    if not found:
        names = ", ".join(repr(s.name) for s in asm.model.sensors) or "none"
        raise ModelError(f"sensor {name!r} is not in the model (its sensors: {names})")
    s = found[0]
    offset = np.array(s.offset) if s.offset else None
    if s.quantity in ("position", "velocity") and s.node >= 0:
        return _Point(asm, s.node, component, offset, s.quantity == "velocity")
    if s.quantity in ("angle", "angular_velocity") and asm.model.dim == 2:
        return dof(asm, s.node, "rz", rate=s.quantity == "angular_velocity")
    raise ModelError(f"sensor {name!r}: its quantity {s.quantity!r} has no state derivative here yet (position, "
                     "velocity, 2D angle and angular_velocity have)")


class _ChordDeflection(Signal):
    def __init__(self, asm, a: int, m: int, b: int, scale: float) -> None:
        if asm.model.dim != 2:
            raise ModelError("chord_deflection: planar models only")
        tr = asm.dofs.translations()
        self.rows = np.r_[tr[a], tr[m], tr[b]]                                # (6,)
        self.X = asm.model.coordinates[[a, m, b]]                             # (3, 2)
        self.scale = float(scale)
        self.unit = "m" if self.scale == 1.0 else f"m/{self.scale:g} m"

    def evaluate(self, traj, steps):
        x = self.X[None] + traj.u[steps][:, self.rows].reshape(-1, 3, 2)     # (m, 3, 2)
        c, r = x[:, 2] - x[:, 0], x[:, 1] - x[:, 0]                           # chord, arm (m, 2)
        length = np.linalg.norm(c, axis=1)
        cross = c[:, 0] * r[:, 1] - c[:, 1] * r[:, 0]
        y = cross / length / self.scale
        # d cross/dc = (r_y, -r_x), d cross/dr = (-c_y, c_x); d length/dc = c / length
        dc = (np.c_[r[:, 1], -r[:, 0]] - (cross / length**2)[:, None] * c) / length[:, None]
        dr = np.c_[-c[:, 1], c[:, 0]] / length[:, None]
        grad = np.concatenate([-dc - dr, dr, dc], axis=1) / self.scale        # (m, 6) for a, m, b
        return y, {"u": (self.rows, grad)}


@keywords_listed
def chord_deflection(model: Model | Assembly, a: int, m: int, b: int, scale: float = 1.0) -> Signal:
    """Distance of node m from the chord of nodes a -> b (2D), positive to the chord's left,
    divided by ``scale`` (m, or dimensionless with a length): the slider-crank's mid-span
    deflection (``flexmb.validation.slider_crank.midspan_deflection`` with ``scale`` the rod length)."""
    return _ChordDeflection(_assembly(model), a, m, b, scale)


def _energy_partials(parameter, asm: Assembly, u: np.ndarray, v: np.ndarray, stretch: np.ndarray | None = None
                     ) -> tuple[float, float]:
    """(dT/dp, dV/dp) at fixed state of a parameter (J per unit p): its ``energy_derivatives``, zero
    for a drive amplitude (the energies do not depend on a drive at fixed states)."""
    partials = getattr(parameter, "energy_derivatives", None)
    return (0.0, 0.0) if partials is None else partials(asm, u, v, stretch)


class _StrainEnergy(Signal):
    unit = "J"

    def __init__(self, asm) -> None:
        odd = [g.name for g in asm.groups if isinstance(g, (UserForce, BodyPointLoad))]
        if odd:
            raise ModelError(f"strain_energy: group {odd[0]!r} applies forces that have no strain energy; its "
                             "internal force is no gradient of the model's strain energy")
        self.asm = asm

    def parameter_partials(self, traj, steps, parameters):
        return np.array([[_energy_partials(p, self.asm, traj.u[n], traj.v[n])[1] for p in parameters]
                         for n in steps]).reshape(steps.size, len(parameters))

    def evaluate(self, traj, steps):
        y = np.array([self.asm.strain_energy(traj.u[n]) for n in steps])
        grad = np.array([self.asm.internal_force(traj.u[n]) for n in steps])    # dV/du (spins at 3D rotations)
        return y, {"u": (np.arange(self.asm.n_dof), grad)}


@keywords_listed
def strain_energy(model: Model | Assembly) -> Signal:
    """Strain energy of the model (J), ``asm.strain_energy(u)``; dV/du is the internal force."""
    return _StrainEnergy(_assembly(model))


class _KineticEnergy(Signal):
    unit = "J"

    def __init__(self, asm) -> None:
        other = [asm.groups[i].name for i, k in asm.configuration_masses if type(k) is not HermiteMass2D]
        if other:
            raise ModelError(f"kinetic_energy: the configuration-dependent mass of group {other[0]!r} (a modal "
                             "body) has no state derivative here yet")
        self.asm = asm

    def parameter_partials(self, traj, steps, parameters):
        stretch = [None] * traj.n_states if traj.stretch is None else traj.stretch
        return np.array([[_energy_partials(p, self.asm, traj.u[n], traj.v[n], stretch[n])[0] for p in parameters]
                         for n in steps]).reshape(steps.size, len(parameters))

    def evaluate(self, traj, steps):
        asm = self.asm
        n_dof = asm.n_dof
        y, du, dv, ds = (np.zeros(steps.size), np.zeros((steps.size, n_dof)), np.zeros((steps.size, n_dof)),
                         np.zeros((steps.size, n_dof)))
        rd, dd = asm.rotation_dofs, asm.director_dofs
        for row, n in enumerate(steps):
            u, v = traj.u[n], traj.v[n]
            stretch = None if traj.stretch is None else traj.stretch[n]
            y[row] = asm.kinetic_energy(v, u, stretch)
            dv[row] = asm.mass_times(v)                                      # dT/dv of the constant mass
            if rd.size:
                w = v[rd]
                Iw = np.einsum("nij,nj->ni", asm.spatial_inertia(u), w)       # (n_r, 3)
                dv[row, rd] += Iw
                du[row, rd] = np.cross(Iw, w)                               # d(w.R J R^T w/2)/d spin
            if stretch is not None and dd.size:
                ds[row, dd] = asm.director_inertia * stretch[dd]
            for i, kernels in asm.configuration_masses:
                ed = asm.dofs.element_dofs(asm.groups[i])
                cols = ed[:, [2, 5]]
                se = np.zeros(cols.shape) if stretch is None else stretch[cols]
                np.add.at(dv[row], ed, kernels.momentum(u[ed], v[ed], se))
                # the cubic mass's T depends on u through its nodes' angles only, and on the stretch rates:
                # complex steps along each of the two per element give the exact partials
                for j, col in enumerate((2, 5)):
                    ue = u[ed].astype(complex)
                    ue[:, col] += 1j * _STEP
                    np.add.at(du[row], ed[:, col], kernels.kinetic_energy(ue, v[ed], se).imag / _STEP)
                    sz = se.astype(complex)
                    sz[:, j] += 1j * _STEP
                    np.add.at(ds[row], cols[:, j], kernels.kinetic_energy(u[ed], v[ed], sz).imag / _STEP)
        every = np.arange(n_dof)
        parts = {"u": (every, du), "v": (every, dv)}
        if traj.stretch is not None:
            parts["stretch"] = (every, ds)
        return y, parts


@keywords_listed
def kinetic_energy(model: Model | Assembly) -> Signal:
    """Kinetic energy of the model (J), ``asm.kinetic_energy(v, u, stretch)``: constant mass,
    spatial rotary inertia, cubic masses and the director stretch rates' share (modal bodies
    refused)."""
    return _KineticEnergy(_assembly(model))


class _JointReaction(Signal):
    """A component of the force (or moment) a joint exerts on its side B, in the joint frame
    carried by side A (:meth:`~flexmb.multibody.constraints.ConstraintSystem.joint_reactions`)."""

    def __init__(self, asm, joint, component: int, moment: bool) -> None:
        model = asm.model
        names = [j.name for j in model.joints]
        index = next((k for k, j in enumerate(model.joints) if j is joint or j.name == joint), None)
        if index is None:
            raise ModelError(f"joint_reaction: {joint!r} is not a joint of the model (its joints: "
                             f"{', '.join(map(repr, names)) or 'none'})")
        size = (3 if model.dim == 3 else 1) if moment else model.dim
        if not 0 <= component < size:
            raise ModelError(f"joint_reaction of {names[index]!r}: component {component} is not one of 0..{size - 1}")
        self.asm, self.index, self.component, self.moment = asm, index, component, moment
        j = model.joints[index]
        dofs = []
        for node in (j.a, j.b):                      # the DOFs of its sides, which move the frame and the lever
            if node >= 0:
                n_dof = model.dim + ((1 if model.dim == 2 else 3) if asm.dofs.has_rotations[node] else 0)
                dofs.append(asm.dofs.first[node] + np.arange(n_dof))
        self.dofs = np.concatenate(dofs)
        self.unit = "N m" if moment else "N"
        # the derivative with respect to u is a central difference (the constraints' second
        # derivatives are not available); the one with respect to the multipliers is exact
        self.approximate = True

    def _value(self, u: np.ndarray, lam: np.ndarray, t: float) -> float:
        force, moment = self.asm.constraints.joint_reactions(u, lam, t, self.asm.dofs)[self.index]
        return float((moment if self.moment else force)[self.component])

    def evaluate(self, traj, steps):
        asm = self.asm
        if traj.multipliers is None:
            raise ModelError("joint_reaction: the trajectory holds no multipliers")
        n_c = traj.multipliers.shape[1]
        h = 1e-6 * asm.characteristic_length
        y, du, dlam = np.zeros(steps.size), np.zeros((steps.size, self.dofs.size)), np.zeros((steps.size, n_c))
        for row, n in enumerate(steps):
            u, lam, t = traj.u[n], traj.multipliers[n], traj.t[n]
            y[row] = self._value(u, lam, t)
            for k in range(n_c):                     # linear in the multipliers: exact unit responses
                dlam[row, k] = self._value(u, np.eye(1, n_c, k)[0], t)
            for col, i in enumerate(self.dofs):      # central difference in u (spins at 3D rotations)
                e = np.zeros(asm.n_dof)
                e[i] = h
                plus, minus = self._value(asm.update(u, e), lam, t), self._value(asm.update(u, -e), lam, t)
                du[row, col] = (plus - minus) / (2.0 * h)
        return y, {"u": (self.dofs, du), "multipliers": (np.arange(n_c), dlam)}


@keywords_listed
def joint_reaction(model: Model | Assembly, joint: Joint | str, component: int = 0, moment: bool = False) -> Signal:
    """Component of the force (N; with ``moment`` the moment, N m) that ``joint`` (a Joint or its
    name) exerts on its side B at the joint point, in the joint frame carried by side A: the
    history's ``joint_reaction``, of the multipliers of the step that ends at the state. Its
    derivative with respect to the multipliers is exact (the reaction is linear in them); with
    respect to u it is a central difference of step 1e-6 times the model's length (the
    signal's ``approximate``): good to about 1e-9 relative, not for validation."""
    return _JointReaction(_assembly(model), joint, component, moment)


class _Scaled(Signal):
    def __init__(self, signal: Signal, factor: float, power: int) -> None:
        self.signal, self.factor, self.power = signal, float(factor), power
        self.approximate = signal.approximate
        self.unit = signal.unit if power == 1 else f"({signal.unit})^2"

    def _slope(self, y: np.ndarray) -> np.ndarray:
        """d(factor y^power)/dy (m,)."""
        return self.factor * (np.ones_like(y) if self.power == 1 else 2.0 * y)

    def evaluate(self, traj, steps):
        y, parts = self.signal.evaluate(traj, steps)
        slope = self._slope(y)
        return self.factor * y**self.power, {k: (i, slope[:, None] * d) for k, (i, d) in parts.items()}

    def parameter_partials(self, traj, steps, parameters):
        inner = self.signal.parameter_partials(traj, steps, parameters)
        if not inner.any():
            return inner
        return self._slope(self.signal.evaluate(traj, steps)[0])[:, None] * inner


@keywords_listed
def scaled(signal: Signal, factor: float) -> Signal:
    """factor times a signal (``scaled(y, -1)``: the minimum as a maximum)."""
    return _Scaled(signal, factor, 1)


@keywords_listed
def squared(signal: Signal, factor: float = 1.0) -> Signal:
    """factor times the square of a signal (an integral of y^2, a mean-square response)."""
    return _Scaled(signal, factor, 2)


# --------------------------------------------------------------- functionals
def _response(signal: Signal, traj: Trajectory, parameters: Sequence, value: float, steps: np.ndarray,
              weights: np.ndarray, parts: dict, unit: str, info: dict | None = None) -> ResponseValue:
    """The ResponseValue of ``F = sum weights_n y_n`` over ``steps`` (parts: the signal's
    derivatives at those steps); ``info["approximate"]`` says whether a part of the gradient is a
    difference quotient (:func:`joint_reaction`)."""
    gradient = StateGradient(steps, {k: (i, weights[:, None] * d) for k, (i, d) in parts.items()})
    explicit = weights @ signal.parameter_partials(traj, steps, parameters) if parameters else np.zeros(0)
    return ResponseValue(value, gradient, unit, {**(info or {}), "approximate": signal.approximate}, explicit)


@keywords_listed
def at(signal: Signal, traj: Trajectory, t: float | None = None, step: int | None = None,
       parameters: Sequence = ()) -> ResponseValue:
    """y at step ``step`` or at time ``t`` (s): a step time, or linearly between the two steps
    about it (weights 1 - w and w). ``parameters``: the
    :class:`~flexmb.sensitivity.parameters.TransientParameter` whose explicit partials dF/dp at
    fixed states the result holds (``parameter_gradient``), as for every functional."""
    if (t is None) == (step is None):
        raise ModelError("at: give either t (s) or step (an index)")
    if step is not None:
        if not -traj.n_states <= step < traj.n_states:
            raise ModelError(f"at: step {step} is not in the run (0 .. {traj.n_states - 1})")
        steps, weights = np.array([step % traj.n_states]), np.ones(1)
    else:
        t = float(t)
        tol = 1e-9 * (traj.t[-1] - traj.t[0] or 1.0)
        if not traj.t[0] - tol <= t <= traj.t[-1] + tol:
            raise ModelError(f"at: t = {t:g} s is outside the run (t = {traj.t[0]:g} .. {traj.t[-1]:g} s)")
        k = int(np.clip(np.searchsorted(traj.t, t) - 1, 0, max(traj.n_states - 2, 0)))
        if traj.n_states == 1 or abs(traj.t[k] - t) <= tol:
            steps, weights = np.array([k]), np.ones(1)
        elif abs(traj.t[k + 1] - t) <= tol:
            steps, weights = np.array([k + 1]), np.ones(1)
        else:
            w = (t - traj.t[k]) / (traj.t[k + 1] - traj.t[k])
            steps, weights = np.array([k, k + 1]), np.array([1.0 - w, w])
    y, parts = signal.evaluate(traj, steps)
    return _response(signal, traj, parameters, float(weights @ y), steps, weights, parts, signal.unit)


@keywords_listed
def final(signal: Signal, traj: Trajectory, parameters: Sequence = ()) -> ResponseValue:
    """y at the last state of the run."""
    return at(signal, traj, step=traj.n_states - 1, parameters=parameters)


@keywords_listed
def integral(signal: Signal, traj: Trajectory, window: tuple[float, float] | None = None,
             parameters: Sequence = ()) -> ResponseValue:
    """Trapezoidal ``sum (t_{n+1} - t_n) (y_n + y_{n+1}) / 2`` over the steps (in ``window``, s)."""
    steps = traj.steps_in(window)
    h = np.diff(traj.t[steps])
    weights = np.zeros(steps.size)
    weights[:-1] += 0.5 * h
    weights[1:] += 0.5 * h
    y, parts = signal.evaluate(traj, steps)
    return _response(signal, traj, parameters, float(weights @ y), steps, weights, parts, f"{signal.unit} s")


@keywords_listed
def ks_max(signal: Signal, traj: Trajectory, rho: float, window: tuple[float, float] | None = None,
           parameters: Sequence = ()) -> ResponseValue:
    """Kreisselmeier-Steinhauser aggregate of the samples (in ``window``) with ``rho`` (1/unit of
    y): ``KS = m + ln(sum exp(rho (y_n - m))) / rho`` (m the largest sample: no overflow),
    ``dKS/dy_n = exp(rho (y_n - KS))`` (weights that sum to 1). ``info``: the plain maximum and
    the bound ``max + ln(n) / rho`` between which KS lies."""
    rho = float(rho)
    if not rho > 0.0 or not np.isfinite(rho):
        raise ModelError(f"ks_max: rho must be a finite number > 0 (1/unit of the signal), got {rho}")
    steps = traj.steps_in(window)
    y, parts = signal.evaluate(traj, steps)
    top = float(y.max())
    ks = top + float(np.log(np.exp(rho * (y - top)).sum())) / rho
    weights = np.exp(rho * (y - ks))
    info = {"maximum": top, "upper_bound": top + np.log(y.size) / rho, "rho": rho}
    return _response(signal, traj, parameters, ks, steps, weights, parts, signal.unit, info)


@keywords_listed
def maximum(signal: Signal, traj: Trajectory, window: tuple[float, float] | None = None,
            parameters: Sequence = ()) -> ResponseValue:
    """The largest sample y_k (in ``window``); its derivative is dy_k/dx_k, valid where the
    peak is unique: ``info["margin"]`` = y_k minus the next largest sample (> 0 required; a
    perturbation smaller than the margin keeps the peak at step k)."""
    steps = traj.steps_in(window)
    y, parts = signal.evaluate(traj, steps)
    k = int(np.argmax(y))
    margin = float(y[k] - np.delete(y, k).max()) if y.size > 1 else np.inf
    if not margin > 0.0:
        raise ModelError(f"maximum: the largest value {y[k]:g} is reached at two steps (t = {traj.t[steps[k]]:g} s "
                         "and another); the plain maximum has no derivative there (use ks_max)")
    one = np.array([k])
    info = {"step": int(steps[k]), "t": float(traj.t[steps[k]]), "margin": margin}
    return _response(signal, traj, parameters, float(y[k]), steps[one], np.ones(1),
                     {f: (i, d[one]) for f, (i, d) in parts.items()}, signal.unit, info)


@keywords_listed
def first_peak(signal: Signal, traj: Trajectory, window: float | None = None, fraction: float = 0.5,
               parameters: Sequence = ()) -> ResponseValue:
    """The slider-crank validation's peak (``flexmb.validation.slider_crank.first_maximum``): the
    first local maximum y_k (``y_k >= y_{k-1}``, ``y_k > y_{k+1}``) after y has risen above
    ``fraction`` of its largest value over the first ``window`` s, refined by the vertex of the
    parabola through y_{k-1}, y_k, y_{k+1}: with ``a = y_{k-1} - y_{k+1}``,
    ``c = y_{k-1} - 2 y_k + y_{k+1}``, ``y_v = y_k - a^2 / (8 c)``, whose derivatives with
    respect to the three samples sum to 1. Equal steps about the peak are assumed (as there).
    ``info``: step k, the vertex time and the margins ``y_k - y_{k-1}``, ``y_k - y_{k+1}``."""
    steps = np.arange(traj.n_states)
    y, parts = signal.evaluate(traj, steps)
    inside = traj.t <= traj.t[0] + (np.inf if window is None else float(window))
    top = y[inside].max()
    if not top > 0.0:
        raise ModelError(f"first_peak: the signal does not rise above 0 in the window (largest {top:g})")
    start = int(np.argmax(y >= fraction * top))
    k = next((k for k in range(max(start, 1), y.size - 1) if y[k] >= y[k - 1] and y[k] > y[k + 1]), None)
    if k is None:
        raise ModelError("first_peak: the signal has no local maximum after it rises (run longer)")
    ym, y0, yp = y[k - 1], y[k], y[k + 1]
    a, c = ym - yp, ym - 2.0 * y0 + yp
    value = y0 - a * a / (8.0 * c)
    weights = np.array([-a * (2.0 * c - a), 8.0 * c * c - 2.0 * a * a, a * (2.0 * c + a)]) / (8.0 * c * c)
    three = np.arange(k - 1, k + 2)
    h = traj.t[k + 1] - traj.t[k]
    info = {"step": k, "t": float(traj.t[k] + 0.5 * a / c * h), "margins": (float(y0 - ym), float(y0 - yp))}
    return _response(signal, traj, parameters, float(value), three, weights,
                     {f: (i, d[three]) for f, (i, d) in parts.items()}, signal.unit, info)
