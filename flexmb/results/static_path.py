"""Statics results: :class:`StaticPath`, steps in load factor, and :class:`PathPoint`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from flexmb.checks import ModelError, keywords_listed, methods_keywords_listed
from flexmb.io.records import ModelLayout
from flexmb.results.base import Result
from flexmb.results.time_history import TimeHistory
from flexmb.sensors import Snapshot

if TYPE_CHECKING:
    from flexmb.assembly import Assembly
    from flexmb.integrators.newton import NewtonLog


@methods_keywords_listed
class StaticPath(Result):
    """Equilibrium states along a load path: ``load_factors`` (n_steps,), ``u`` and ``reactions``
    (n_steps, n_dof); with joints or ties the Lagrange multipliers (n_steps, n_c) and per joint the
    force and moment it exerts on its side B (:meth:`joint_reaction`, as a TimeHistory's);
    :meth:`at` reads the path at a load factor."""

    #: distance (relative to the largest ``|load factor|`` of the path, at least 1) within which a
    #: computed point counts as "at" a requested load factor: closer, no interpolation warning
    AT_TOLERANCE = 1e-9

    kind = "static"
    parameter_name = "load factor"
    SERIES = ("load_factors", "u", "reactions", "multipliers", "joint_forces", "joint_moments")

    def __init__(self, layout: ModelLayout | None = None, method: str = "load control") -> None:
        super().__init__(layout, method=method)

    @keywords_listed(renamed={"lam": "load_factor"})
    def record(self, asm: Assembly, load_factor: float, u: np.ndarray, reaction: np.ndarray,
               log: NewtonLog | None = None, multipliers: np.ndarray | None = None, t: float = 0.0) -> None:
        """Append the equilibrium state u at ``load_factor`` with its reactions, element outputs and,
        with joints, the multipliers (n_c,) and the joint reactions (drives evaluated at time t, s)."""
        outputs = asm.element_outputs(u)
        sensors = self._sensor_values(Snapshot(self.layout, u, None, None, outputs, asm))
        lam_c = np.zeros(0) if multipliers is None else np.asarray(multipliers, dtype=float)
        forces = moments = np.zeros(0)
        if asm.constraints is not None and lam_c.size:
            reactions = asm.constraints.joint_reactions(u, lam_c, t, asm.dofs)
            forces, moments = np.array([f for f, _ in reactions]), np.array([m for _, m in reactions])
        self._append({"load_factors": float(load_factor), "u": u, "reactions": reaction, "multipliers": lam_c,
                      "joint_forces": forces, "joint_moments": moments}, outputs, sensors)
        if log is not None:
            self.newton_logs.append(log)

    #: the same reading as a time history's (one row per load step)
    joint_reaction = TimeHistory.joint_reaction

    def _derived_series(self) -> dict[str, np.ndarray]:
        return {"load_factor": self.parameter}

    def _summary(self) -> str:
        return f"{self.meta.get('method', 'static')}, {super()._summary()}"

    def at(self, load_factor: float, occurrence: int = 0) -> "PathPoint":
        """The state at ``load_factor``: a computed point when one lies within
        :attr:`AT_TOLERANCE`, else the linear interpolation between the two computed points
        that bracket it (translations, planar rotations and reactions linearly; spatial rotations
        along the rotation between the two, R = exp(w log(R_1 R_0^T)) R_0), with a FlexmbWarning
        that names them: the interpolation error is of the order of the path's curvature times
        the step squared, and no equilibrium is solved. A path that passes the load factor
        several times (arc length past a limit point) gives its first passage, or passage number
        ``occurrence`` (0, 1, ...). A load factor the path does not reach raises ModelError."""
        import warnings

        from flexmb.checks import FlexmbWarning

        lam = np.asarray(self.parameter)
        if not lam.size:
            raise ModelError("this static path has no steps")
        target = float(load_factor)
        tol = self.AT_TOLERANCE * max(float(np.abs(lam).max()), 1.0)
        # passages: computed points within tol, and segments whose ends bracket the target
        hits: list[tuple[int, float]] = []
        for k in range(lam.size):
            if abs(lam[k] - target) <= tol:
                if not hits or hits[-1] != (k - 1, 1.0):              # not the end of the last segment
                    hits.append((k, 0.0))
            elif k + 1 < lam.size and abs(lam[k + 1] - target) > tol and (lam[k] - target) * (lam[k + 1] - target) < 0:
                hits.append((k, (target - lam[k]) / (lam[k + 1] - lam[k])))
        if not hits:
            raise ModelError(f"load factor {target:g} is not on this path (it covers {lam.min():g} .. "
                             f"{lam.max():g} in {lam.size} points); run it further")
        if not 0 <= occurrence < len(hits):
            raise ModelError(f"the path passes load factor {target:g} {len(hits)} time(s); occurrence "
                             f"{occurrence} does not exist")
        k, w = hits[occurrence]
        if w == 0.0:
            return PathPoint(float(lam[k]), self.u[k].copy(), self.reactions[k].copy(), (k, k), 0.0)
        warnings.warn(f"StaticPath.at({target:g}): interpolated linearly between the computed points "
                      f"{k} (load factor {lam[k]:.6g}) and {k + 1} ({lam[k + 1]:.6g}), weight {w:.3f}; not "
                      "an equilibrium state", FlexmbWarning, stacklevel=2)
        u0, u1 = self.u[k], self.u[k + 1]
        u = (1.0 - w) * u0 + w * u1
        layout = self.layout
        if layout is not None and layout.dim == 3 and layout.rotation_nodes.size:
            from flexmb.rotations import compose, exp_map, log_map

            rot = layout.rotations()
            between = log_map(exp_map(u1[rot]) @ np.swapaxes(exp_map(u0[rot]), 1, 2))   # (n_r, 3)
            u[rot] = compose(w * between, u0[rot])
        reactions = (1.0 - w) * self.reactions[k] + w * self.reactions[k + 1]
        return PathPoint(target, u, reactions, (k, k + 1), float(w))


@dataclass
class PathPoint:
    """A state read from a :class:`StaticPath` by :meth:`StaticPath.at`: ``load_factor``, ``u``
    and ``reactions`` (n_dof,), the computed points ``steps`` it comes from (k, k) or (k, k + 1)
    and the interpolation ``weight`` w (0: the computed point k)."""

    load_factor: float
    u: np.ndarray
    reactions: np.ndarray
    steps: tuple[int, int]
    weight: float

    @property
    def interpolated(self) -> bool:
        return self.steps[0] != self.steps[1]
