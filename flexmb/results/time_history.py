"""Dynamics results: :class:`TimeHistory`, steps in time."""
from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING

import numpy as np

from flexmb.checks import ModelError, deprecated_alias, methods_keywords_listed
from flexmb.elements.beam2d import Beam2D
from flexmb.elements.beam3d import Beam3D
from flexmb.elements.floating_frame import ModalBody
from flexmb.elements.modal_body_data import ModalBodyArrays
from flexmb.elements.truss import Truss
from flexmb.io.records import ModelLayout
from flexmb.results.base import Result, _reference
from flexmb.sensors import Snapshot

if TYPE_CHECKING:
    from flexmb.assembly import Assembly
    from flexmb.integrators.schemes import State


#: element groups whose outputs and strain energy are functions of the reference coordinates and
#: the DOFs alone (no time, load factor or other state a scheme sets on a group during a step),
#: so that they can be computed from a stored step after the run (a modal body's: its modal
#: coordinates and forces, from its data's modal stiffness)
_STATELESS_OUTPUTS = (Truss, Beam2D, Beam3D, ModalBody)
#: the empty joint series of a model without joints
_NONE = np.zeros(0)


def _frozen(group):
    """A copy of an element group whose array attributes are copies too, and so its modal body data's."""
    frozen = copy.copy(group)
    for name, value in vars(frozen).items():
        if isinstance(value, (np.ndarray, ModalBodyArrays)):
            setattr(frozen, name, value.copy() if isinstance(value, np.ndarray) else _frozen(value))
    return frozen


def _largest_magnitude(values: np.ndarray) -> float:
    """max |values| (0 if empty; NaN if any is NaN), as ``np.abs(values).max(initial=0.0)`` gives it:
    in Python for the few constraints of a small model, where numpy's calls cost more than the loop."""
    if values.size > 32:
        return float(np.abs(values).max(initial=0.0))
    listed = values.tolist()
    return math.nan if any(v != v for v in listed) else max(map(abs, listed), default=0.0)


class Deferred:
    """The values a run recorded without computing them, computed from the stored steps when first
    read: per step the kinetic energy, angular momentum, strain energy and the element outputs of
    the groups in :data:`_STATELESS_OUTPUTS` (the other groups' outputs and energies are computed
    when the step is recorded, the energies kept here), and with joints the constraint residual and
    the joint reactions (from the values of the joints' time functions kept at the step). It holds
    the run's assembly and copies of those groups with their arrays, so a section property changed
    after the run, replaced or in place, does not change them."""

    series = ("kinetic", "strain", "angular_momentum", "constraint_residual", "joint_forces", "joint_moments")

    def __init__(self, asm: Assembly) -> None:
        self.asm = asm
        #: per group: the group itself where its outputs are computed at each step, else None
        self.evaluated_now = [None if type(g) in _STATELESS_OUTPUTS else g for g in asm.groups]
        #: per group: the copy its deferred outputs are computed with, else None
        self.evaluated_later = [_frozen(g) if type(g) in _STATELESS_OUTPUTS else None for g in asm.groups]
        #: step index -> per group the strain energy (J) computed at the step, None where deferred
        self.steps: dict[int, list[float | None]] = {}
        #: step index -> the joints' time functions at the step (ConstraintSystem.time_values)
        self.reactions: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def fill(self, series: dict[str, list], elements: list[dict[str, list]]) -> None:
        """Put the deferred values of every step in ``series`` and ``elements`` (a result's
        lists, whose rows hold None there), as :meth:`TimeHistory.record` would have."""
        asm = self.asm
        for k, energies in self.steps.items():
            u, stretch = series["u"][k], series["stretch"][k]
            series["kinetic"][k], series["angular_momentum"][k] = asm.energy_and_momentum(
                u, series["v"][k], stretch if stretch.size else None)
            later = asm.group_outputs_and_strain_energies(u, self.evaluated_later)
            for store, part in zip(elements, later):
                if part is not None:
                    for name, lst in store.items():
                        lst[k] = np.asarray(part[0][name], dtype=float)
            series["strain"][k] = float(sum(now if part is None else part[1] for now, part in zip(energies, later)))
        for k, at in self.reactions.items():
            phi, series["joint_forces"][k], series["joint_moments"][k] = asm.constraints.recorded_reactions(
                series["u"][k], series["multipliers"][k], at, asm.dofs)
            series["constraint_residual"][k] = _largest_magnitude(phi)
        self.steps, self.reactions = {}, {}


@methods_keywords_listed
class TimeHistory(Result):
    """Response at the output times of a time integration.

    Series (arrays, one row per output step): ``t`` (s), ``u``, ``v`` and ``a`` (n_dof,; ``a`` is
    the scheme's acceleration: the step's mean (v_{n+1} - v_n) / dt for the mid-point scheme,
    the end-of-step acceleration for Newmark; m/s^2, rad/s^2), ``reactions``
    (n_dof,), energies in J: ``kinetic``, ``strain``, ``work`` (of loads and support reactions
    since t0), ``dissipated`` (by damping forces since t0) and
    ``total = kinetic + strain + dissipated - work`` (constant for an exact solution),
    ``joint_work`` (the part of ``work`` done by joint and tie forces: the drives' work, zero to
    round-off for joints that do not depend on time),
    ``angular_momentum`` (1,) in 2D or (3,) in 3D, ``newton_iterations``; with
    cubic-mass beams in the mid-point scheme the director stretch rates ``stretch`` (n_dof,, in
    1/s, see :mod:`flexmb.elements.hermite_mass2d`; their kinetic energy is in ``kinetic``); with
    joints the Lagrange multipliers (n_c,), their force on the DOFs ``constraint_force``
    (n_dof,), ``constraint_residual`` max ``|Phi|`` (m or rad), and
    per joint the force (n_joints, dim) and moment (n_joints, 3 or 1) it exerts on its side B
    at the joint point, in the joint frame carried by side A (:meth:`joint_reaction`).
    Each step holds the scheme's whole state, so a run continues exactly from any output step
    (``integrate(..., restart_from=file)``).
    """

    kind = "dynamic"
    parameter_name = "t"
    SERIES = ("t", "u", "v", "a", "reactions", "kinetic", "strain", "work", "angular_momentum",
              "newton_iterations", "multipliers", "constraint_force", "constraint_residual", "joint_forces",
              "joint_moments", "stretch", "dissipated", "joint_work")

    def __init__(self, scheme: str, dt: float, layout: ModelLayout | None = None) -> None:
        super().__init__(layout, scheme=scheme, dt=float(dt))
        self.scheme = scheme
        self.dt = float(dt)

    def note_step(self, dt: float) -> None:
        """Enter an accepted time step of dt (s) in :attr:`step_sizes` (after the steps between the
        output times already held, those of a file a run continues)."""
        if "_step_sizes" not in self.__dict__:
            self.__dict__["_step_sizes"] = list(np.diff(self.parameter))
        self.__dict__["_step_sizes"].append(float(dt))

    @property
    def step_sizes(self) -> np.ndarray:
        """Every time step the run took (s), in order, (n_taken,): error-controlled steps vary
        (``meta["rtol"]``), a cut-back's half steps count as their step. Not stored in result
        files: a history read from a file gives the differences of its output times (the steps
        when every step was an output)."""
        taken = self.__dict__.get("_step_sizes")
        return np.array(taken, dtype=float) if taken is not None else np.diff(self.parameter)

    def record(self, asm: Assembly, s: State, iterations: int) -> None:
        """Append state ``s`` with its energies, momentum and element outputs.

        Without a result file to write the step to and without sensors reading element outputs,
        the kinetic energy, angular momentum, strain energy, the outputs of groups whose outputs
        depend on u alone, the constraint residual and the joint reactions are computed from the
        stored state when first read (one pass over the steps recorded so far,
        ``flexmb.results.time_history.Deferred``), with the same values.
        """
        # time-dependent groups (loads that are functions of time) at the state's time: a step's
        # last residual left them at its mid-point, an earlier run at its end
        asm.set_time(s.t)
        deferred = self._deferred_for(asm)
        cs = asm.constraints
        residual, forces, moments, constraint_force = 0.0, _NONE, _NONE, _NONE       # (copied when appended)
        if cs is not None:
            constraint_force = s.constraint_force
            if not cs.joints:
                residual = _largest_magnitude(cs.values(s.u, s.t))
            elif deferred is None:
                phi, forces, moments = cs.recorded_reactions(s.u, s.lam, cs.time_values(s.t), asm.dofs)
                residual = _largest_magnitude(phi)
            else:
                residual = forces = moments = None
                deferred.reactions[self.n_steps] = cs.time_values(s.t)
        if deferred is None:
            kinetic, momentum = asm.energy_and_momentum(s.u, s.v, s.stretch)
            parts = asm.group_outputs_and_strain_energies(s.u, asm.groups)
            strain = float(sum(energy for _, energy in parts))
        else:
            kinetic = strain = momentum = None
            parts = asm.group_outputs_and_strain_energies(s.u, deferred.evaluated_now)
            deferred.steps[self.n_steps] = [None if part is None else part[1] for part in parts]
        outputs = [None if part is None else part[0] for part in parts]
        sensors = (self._sensor_values(Snapshot(self.layout, s.u, s.v, s.a, outputs, asm))
                   if self.layout is not None and self.layout.sensors else None)
        self._append({"t": s.t, "u": s.u, "v": s.v, "a": s.a, "reactions": s.reaction,
                      "kinetic": kinetic, "strain": strain,
                      "work": s.work, "angular_momentum": momentum,
                      "newton_iterations": iterations, "multipliers": s.lam, "constraint_force": constraint_force,
                      "constraint_residual": residual, "joint_forces": forces, "joint_moments": moments,
                      "stretch": np.zeros(0) if s.stretch is None else s.stretch, "dissipated": s.dissipated,
                      "joint_work": s.joint_work},
                     outputs, sensors)

    def _deferred_for(self, asm: Assembly) -> Deferred | None:
        """Where this step's deferred values go, None to compute them now: a step written to a
        file, or read by an element-output sensor, is complete when recorded."""
        if self._file is not None or (self.layout is not None and any(
                sensor.quantity == "element_output" for sensor in self.layout.sensors)):
            self._complete()
            return None
        if self._deferred is not None and self._deferred.asm is not asm:
            self._complete()
        if self._deferred is None:
            self._deferred = Deferred(asm)
        return self._deferred

    def joint_reaction(self, joint: str | int) -> tuple[np.ndarray, np.ndarray]:
        """Force (n_steps, dim) in N and moment (n_steps, 3 or 1) in N m that a joint exerts on
        its side B at the joint point, in the joint frame carried by side A."""
        names = self._layout().joints
        k = names.index(joint) if isinstance(joint, str) and joint in names else joint
        if not isinstance(k, (int, np.integer)) or not 0 <= k < len(names):
            raise ModelError(f"no joint {joint!r}; joints: {', '.join(names) or 'none'}")
        return np.array(self.joint_forces)[:, k], np.array(self.joint_moments)[:, k]

    def arrays(self) -> dict[str, np.ndarray]:
        a = super().arrays()
        a["total"] = self.total
        return a

    @property
    def dissipated(self) -> np.ndarray:
        """Energy dissipated by damping since t0 (n_out,), J (zero for files without it)."""
        return self._energy_series("dissipated")

    @property
    def joint_work(self) -> np.ndarray:
        """Work of the joint and tie forces since t0 (n_out,), J, included in ``work`` (zero for files
        without it)."""
        return self._energy_series("joint_work")

    @property
    def total(self) -> np.ndarray:
        """K + V + dissipated - work (n_out,), J: constant for an exact solution."""
        return np.array(self.kinetic) + np.array(self.strain) + self.dissipated - np.array(self.work)

    def _energy_series(self, name: str) -> np.ndarray:
        """A recorded energy series (n_out,), J; zeros for files written before it was recorded."""
        raw = self._series[name]
        if len(raw) != len(self.kinetic) or any(np.size(x) != 1 for x in raw):
            return np.zeros(len(self.kinetic))
        return np.array(raw, dtype=float)

    dissipated_energy = deprecated_alias("dissipated", "TimeHistory.dissipated_energy")
    joint_work_done = deprecated_alias("joint_work", "TimeHistory.joint_work_done")
    total_energy = deprecated_alias("total", "TimeHistory.total_energy")

    def velocity(self, node: int, dof: str) -> np.ndarray:
        """(n_steps,) velocity history of one DOF (m/s, or rad/s)."""
        return np.array(self.v)[:, self._layout().index(node, dof)]

    def _summary(self) -> str:
        if "rtol" in self.meta:
            return f"{self.scheme} scheme, error-controlled steps (rtol = {self.meta['rtol']:g}), {super()._summary()}"
        return f"{self.scheme} scheme, dt = {self.dt:g} s, {super()._summary()}"

    def step_at(self, t: float) -> int:
        """Index of the output step at time t (s): the nearest output time, which must lie within
        1e-6 dt of t (else ModelError naming the nearest output times)."""
        times = self.parameter
        if not times.size:
            raise ModelError("this time history has no steps")
        t = float(t)
        k = int(np.argmin(np.abs(times - t)))
        if not abs(times[k] - t) <= 1e-6 * self.dt:
            raise ModelError(f"t = {t:g} s is not an output time of this history (t = {times[0]:g} .. "
                             f"{times[-1]:g} s, every {self.dt:g} s); the nearest is {times[k]:.10g} s")
        return k

    def energy_error(self, since: float | None = None) -> np.ndarray:
        """``|E(t) - E(t_s)|`` / K(t_s) for the output steps from t_s on (n_out - k_s,), with
        E = K + V - W the total energy (:attr:`total`) and t_s = ``since`` (s; default the
        first output step; it must be an output time, see :meth:`step_at`), e.g. the end of a
        load phase after which the motion is free. A reference state at rest (K(t_s) below 1e-8
        of the largest K from t_s on) is measured relative to that largest kinetic energy
        instead, the energy scale the run reaches; a run at rest throughout gives ``|E - E(t_s)|``
        in J."""
        k = 0 if since is None else self.step_at(since)
        E, K = self.total[k:], np.asarray(self.kinetic, dtype=float)[k:]
        return np.abs(E - E[0]) / _reference(K[0], K.max())

    def angular_momentum_error(self, since: float | None = None) -> np.ndarray:
        """``|L(t) - L(t_s)|`` / ``|L(t_s)|`` for the output steps from t_s = ``since`` on (as
        :meth:`energy_error`); a reference with L = 0 (below 1e-8 of the largest ``|L|`` from t_s on)
        is measured relative to that largest ``|L|``, a run with L = 0 throughout in kg m^2/s."""
        k = 0 if since is None else self.step_at(since)
        L = np.asarray(self.angular_momentum, dtype=float)[k:]
        norms = np.linalg.norm(L, axis=1)
        return np.linalg.norm(L - L[0], axis=1) / _reference(norms[0], norms.max())

    def _derived_series(self) -> dict[str, np.ndarray]:
        out = {"t": self.parameter, "kinetic": np.array(self.kinetic), "strain": np.array(self.strain),
               "work": np.array(self.work), "potential": np.array(self.strain) - np.array(self.work),
               "dissipated": self.dissipated, "total": self.total,
               "newton_iterations": np.array(self.newton_iterations, dtype=float),
               "constraint_residual": np.array(self.constraint_residual, dtype=float)}
        L = np.array(self.angular_momentum)
        for i, axis in enumerate("xyz" if L.ndim == 2 and L.shape[1] == 3 else "z"):
            out[f"L{axis}"] = L[:, i]
        return out
