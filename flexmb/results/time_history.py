"""Dynamics results: :class:`TimeHistory`, steps in time."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from flexmb.checks import ModelError, deprecated_alias, methods_keywords_listed
from flexmb.io.records import ModelLayout
from flexmb.results.base import Result, _reference
from flexmb.sensors import Snapshot

if TYPE_CHECKING:
    from flexmb.assembly import Assembly
    from flexmb.integrators.schemes import State


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
        """Append state ``s`` with its energies, momentum and element outputs."""
        cs = asm.constraints
        residual, forces, moments, constraint_force = 0.0, np.zeros((0,)), np.zeros((0,)), np.zeros((0,))
        if cs is not None:
            residual = float(np.abs(cs.values(s.u, s.t)).max(initial=0.0))
            reactions = cs.joint_reactions(s.u, s.lam, s.t, asm.dofs)
            forces = np.array([f for f, _ in reactions])
            moments = np.array([m for _, m in reactions])
            constraint_force = s.constraint_force
        kinetic, momentum = asm.energy_and_momentum(s.u, s.v, s.stretch)
        outputs, strain = asm.outputs_and_strain_energy(s.u)
        sensors = self._sensor_values(Snapshot(self.layout, s.u, s.v, s.a, outputs, asm))
        self._append({"t": s.t, "u": s.u, "v": s.v, "a": s.a, "reactions": s.reaction,
                      "kinetic": kinetic, "strain": strain,
                      "work": s.work, "angular_momentum": momentum,
                      "newton_iterations": iterations, "multipliers": s.lam, "constraint_force": constraint_force,
                      "constraint_residual": residual, "joint_forces": forces, "joint_moments": moments,
                      "stretch": np.zeros(0) if s.stretch is None else s.stretch, "dissipated": s.dissipated,
                      "joint_work": s.joint_work},
                     outputs, sensors)

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
