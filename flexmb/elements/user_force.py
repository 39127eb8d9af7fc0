"""A user force: forces on a set of points given by the user's function of their state.

The user gives ``force(t, x, v) -> F`` with t the time (s; in statics the load factor) and x, v
(n, dim) the current positions (m) and velocities (m/s) of the n points (nodes; a rigid body's node is its centre of mass) in global axes, and F
(n, dim) the forces on them (N, global axes); optionally ``jacobian(t, x, v) -> (dF/dx, dF/dv)``,
each (n dim, n dim) in N/m and N s/m, the rows and columns ordered point by point
(``x0 y0 [z0] x1 y1 ...``, as ``F.reshape(-1)``). Without it both are central differences of the
whole function, 4 n dim calls, with the steps ``h_x = 1e-6 L`` (L the model's characteristic
length) and ``h_v = 1e-6 max(L / 1 s, max |v|)``. Only translations: the force acts at the
point; a moment needs an offset point on a body (not offered).

How the schemes see it (element DOFs: the points' translations; the residual takes -F as the
internal-force-like term):

* mid-point scheme (Crisfield & Shi 1993): ``F_m = F(t_m, x_m, v_m)`` at the step's mid-point state
  ``t_m = t_n + dt / 2``, ``x_m = (x_n + x_{n+1}) / 2``, ``v_m = (x_{n+1} - x_n) / dt``, all of it through the damping
  hook (:meth:`~flexmb.elements.base.ElementGroup.mid_point_damping`), tangent
  ``-(dF/dx / 2 + dF/dv / dt)``. Its work over the step is exactly ``F_m . (x_{n+1} - x_n)``;
  the energy balance books minus that in ``TimeHistory.dissipated`` (energy taken out of the
  system by the user force: positive for a drag, it can be negative for a driving force).
* statics, modes and buckling: the position part ``F(t, x, 0)`` as an internal force with the
  tangent ``-dF/dx`` (:meth:`force_and_tangent`); in statics t is the load factor (F is not scaled
  by it otherwise), and the user forces' size counts in the force scale of the convergence test.
* Newmark / end-point schemes: ``F(t, x, 0)`` as above plus ``F(t, x, v) - F(t, x, 0)`` through the
  end-point damping hook (:meth:`damping_force`): the motion is that of F(x, v) at the end point,
  but only the velocity part's work is booked (the user force has no potential), so their
  energy balance is not closed for a position-dependent user force; use the mid-point scheme.

The time: the element kernels are called without it, so the assembly sets :attr:`UserForce.time`
(:meth:`~flexmb.assembly.Assembly.set_time`) where a scheme, statics or a linearization evaluates
the model at a time.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from flexmb.checks import UserFunctionError
from flexmb.elements.base import ElementGroup


class UserForce(ElementGroup):
    """One user force on the nodes ``nodes`` (see the module docstring).

    Parameters
    ----------
    nodes : the n nodes the force acts on (their translations).
    dim : 2 or 3.
    force : ``force(t, x, v) -> F``, t in s, x in m, v in m/s, F in N, each (n, dim).
    jacobian : optional ``jacobian(t, x, v) -> (dF/dx, dF/dv)``, (n dim, n dim) each, N/m and N s/m.
    length : the model's characteristic length L (m), the scale of the finite-difference steps.
    name : the user force's name, for error messages.
    """

    time_dependent = True

    def __init__(self, nodes: list[int], dim: int, force: Callable, jacobian: Callable | None, length: float,
                 name: str) -> None:
        self.n_nodes = len(nodes)
        super().__init__(np.asarray([nodes], dtype=np.int64), dim, name)
        self.force, self.jacobian, self.length = force, jacobian, float(length)
        self.labels = [name]
        #: the time (s) or load factor at which the force is evaluated, set by the assembly
        self.time = 0.0

    # ------------------------------------------------------------ the user's function, checked
    def _call(self, function: Callable, x: np.ndarray, v: np.ndarray, what: str):
        try:
            return function(self.time, x.copy(), v.copy())
        except Exception as exc:                                  # the user's code: anything can happen
            raise UserFunctionError(f"{what} of user force {self.name!r} raised {type(exc).__name__}: {exc} at "
                                    f"t = {self.time:g}, x = {x.tolist()} m, v = {v.tolist()} m/s") from exc

    def _checked(self, value, shape: tuple[int, ...], what: str, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            arr = None
        if arr is None or arr.shape != shape or not np.all(np.isfinite(arr)):
            if arr is None:
                got = repr(value)
            elif arr.shape != shape:
                got = f"shape {arr.shape}"
            else:
                got = f"non-finite values {arr.tolist()}"
            raise UserFunctionError(f"{what} of user force {self.name!r} returned {got} at t = {self.time:g}, "
                                    f"x = {x.tolist()} m, v = {v.tolist()} m/s; it must return finite numbers of "
                                    f"shape {shape}")
        return arr

    def evaluate(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """F(t, x, v) (n, dim), N, checked (t = :attr:`time`)."""
        return self._checked(self._call(self.force, x, v, "the force function"), x.shape, "the force function", x, v)

    def derivatives(self, x: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """dF/dx (N/m) and dF/dv (N s/m), (n dim, n dim) each: the user's jacobian, else central
        differences with the steps of the module docstring."""
        m = x.size
        if self.jacobian is not None:
            value = self._call(self.jacobian, x, v, "the jacobian function")
            if not isinstance(value, (tuple, list)) or len(value) != 2:
                raise UserFunctionError(f"the jacobian function of user force {self.name!r} returned "
                                        f"{type(value).__name__}; it must return the pair (dF/dx, dF/dv)")
            return (self._checked(value[0], (m, m), "the jacobian function (dF/dx)", x, v),
                    self._checked(value[1], (m, m), "the jacobian function (dF/dv)", x, v))
        h_x = 1e-6 * self.length
        h_v = 1e-6 * max(self.length, float(np.max(np.abs(v), initial=0.0)))
        dF_dx, dF_dv = np.empty((m, m)), np.empty((m, m))
        for j in range(m):
            e = np.zeros(m)
            e[j] = 1.0
            e = e.reshape(x.shape)
            dF_dx[:, j] = (self.evaluate(x + h_x * e, v) - self.evaluate(x - h_x * e, v)).reshape(-1) / (2.0 * h_x)
            dF_dv[:, j] = (self.evaluate(x, v + h_v * e) - self.evaluate(x, v - h_v * e)).reshape(-1) / (2.0 * h_v)
        return dF_dx, dF_dv

    def _points(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Positions (n, dim) of the points: reference X plus the translations of u (1, ne)."""
        return X[0] + u[0].reshape(self.n_nodes, self.dim)

    # ------------------------------------------------------------ statics: the position part
    def internal_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """-F(x, 0) (1, ne), N."""
        x = self._points(X, u)
        return -self.evaluate(x, np.zeros_like(x)).reshape(1, -1)

    def force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """-F(x, 0) and -dF/dx (1, ne, ne)."""
        x = self._points(X, u)
        v = np.zeros_like(x)
        return -self.evaluate(x, v).reshape(1, -1), -self.derivatives(x, v)[0][None]

    def generalized_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """None: (1, 0)."""
        return np.zeros((1, 0))

    def geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        """Zeros: the user force has no stresses."""
        return np.zeros((1, self.ndof, self.ndof))

    def strain_energy(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Zero (1,): the user force has no potential; its work is booked as dissipated."""
        return np.zeros(1)

    def axial_strain(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return np.zeros(1)

    def element_outputs(self, X: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        return {}

    def mass_matrix(self, X: np.ndarray) -> np.ndarray:
        """Massless: zeros (1, ne, ne)."""
        return np.zeros((1, self.ndof, self.ndof))

    # ------------------------------------------------------------ mid-point: all through the damping hook
    def mid_point_force(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        """Zero: in the mid-point scheme the whole force is in :meth:`mid_point_damping`."""
        return np.zeros((1, self.ndof))

    def mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros((1, self.ndof)), np.zeros((1, self.ndof, self.ndof))

    @property
    def damped(self) -> bool:
        return True

    def mid_point_damping(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray, dt: float, tangent: bool
                          ) -> tuple[np.ndarray, np.ndarray | None]:
        """-F(x_m, v_m) (1, ne) and its derivative w.r.t. u1, -(dF/dx / 2 + dF/dv / dt)."""
        x = X[0] + 0.5 * (u0[0] + u1[0]).reshape(self.n_nodes, self.dim)
        v = (u1[0] - u0[0]).reshape(self.n_nodes, self.dim) / dt
        q = -self.evaluate(x, v).reshape(1, -1)
        if not tangent:
            return q, None
        dF_dx, dF_dv = self.derivatives(x, v)
        return q, -(0.5 * dF_dx + dF_dv / dt)[None]

    def damping_force(self, X: np.ndarray, u: np.ndarray, v: np.ndarray, dv_du: float, tangent: bool
                      ) -> tuple[np.ndarray, np.ndarray | None]:
        """The velocity part -(F(x, v) - F(x, 0)) (1, ne) and its derivative along dv = dv_du du."""
        x = self._points(X, u)
        vel = v[0].reshape(self.n_nodes, self.dim)
        rest = np.zeros_like(vel)
        q = -(self.evaluate(x, vel) - self.evaluate(x, rest)).reshape(1, -1)
        if not tangent:
            return q, None
        dF_dx, dF_dv = self.derivatives(x, vel)
        return q, -(dF_dx - self.derivatives(x, rest)[0] + dv_du * dF_dv)[None]
