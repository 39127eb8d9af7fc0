"""Initial conditions consistent with the joints: a check with clear errors, and a projection.

Positions must satisfy ``Phi(u0, t0) = 0`` and velocities ``C v0 + dPhi/dt = 0``.
:func:`consistent_initial_state` moves a user's guess onto both by the smallest change of the
free DOFs (Gauss-Newton with the minimum-norm correction for positions, one minimum-norm
projection for velocities).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as spla

from flexmb.checks import check_consistent_initial_state
from flexmb.model import ModelError

#: tolerances of the check, relative to the model size (positions) and to the largest speed
#: (at least the model size per second)
POSITION_TOL = 1e-8
VELOCITY_TOL = 1e-8


def refuse_joints(asm, analysis: str) -> None:
    """Joints are solved in time integration only so far: say so instead of ignoring them."""
    if asm.constraints is not None:
        items = [f"joint {j.name!r}" for j in asm.model.joints] + [t.label for t in asm.model.ties]
        raise ModelError(f"{analysis}: the model has joints or ties ({', '.join(items)}); "
                         "joints are supported in time integration (fm.integrate) only so far, ties too")


def _worst(asm, values: np.ndarray) -> str:
    cs = asm.constraints
    row = int(np.argmax(np.abs(values)))
    return f"{cs.owner(row)} (equation {row - cs.owner_rows(row).start})"


def check_redundancy(asm, u0: np.ndarray, t0: float) -> None:
    """Raise ModelError naming a joint whose equations repeat others' (or fix prescribed DOFs),
    found by a pivoted QR of the joints' Jacobian on the free DOFs at the start state."""
    import scipy.linalg as sla

    cs = asm.constraints
    C = cs.evaluate(u0, t0, np.zeros(cs.n)).C[:, asm.dofs.free].toarray()            # (n_c, n_f)
    if cs.n == 0 or cs.n > 3000:                  # dense QR; larger systems are left to Newton
        return
    _, R, order = sla.qr(C.T, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    rank = int(np.sum(diag > 1e-10 * max(diag.max(initial=0.0), np.finfo(float).tiny)))
    if rank < cs.n:
        names = sorted({cs.owner(int(r)) for r in order[rank:]})
        raise ModelError(f"the joints' equations are redundant at the start ({cs.n - rank} of {cs.n} "
                         f"depend on the others), e.g. in {', '.join(names)}: remove "
                         "duplicated joints (a driven joint already includes its undriven equations) or "
                         "joints on prescribed DOFs")


def check_initial_state(asm, u0: np.ndarray, v0: np.ndarray, t0: float) -> None:
    """Raise ModelError naming the joint whose position or velocity equation the state violates,
    or the joints whose equations are redundant."""
    cs = asm.constraints
    if cs is None:
        return
    check_redundancy(asm, u0, t0)
    length = asm.model.characteristic_length
    phi = cs.values(u0, t0)
    if np.abs(phi).max(initial=0.0) > POSITION_TOL * length:
        raise ModelError(f"initial positions violate {_worst(asm, phi)} by {np.abs(phi).max():.3g} "
                         f"(tolerance {POSITION_TOL * length:.3g}); flexmb.consistent_initial_state "
                         "projects a guess onto the joints")
    rate = cs.evaluate(u0, t0, np.zeros(cs.n)).C @ v0 + cs.time_derivative(u0, t0)
    # speeds relative to the largest one, but at least the model size per second: a drive that
    # starts from rest has a difference-quotient rate of round-off size
    speed = max(float(np.abs(v0).max(initial=0.0)), float(np.abs(cs.time_derivative(u0, t0)).max(initial=0.0)),
                length)
    if np.abs(rate).max(initial=0.0) > VELOCITY_TOL * speed:
        raise ModelError(f"initial velocities violate {_worst(asm, rate)}: C v0 + dPhi/dt = "
                         f"{np.abs(rate).max():.3g} (speeds up to {speed:.3g}); "
                         "flexmb.consistent_initial_state projects them onto the joints")


def consistent_initial_state(asm, u0: np.ndarray | None = None, v0: np.ndarray | None = None,
                             t0: float = 0.0, iterations: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities (n_dof,) near ``u0, v0`` that satisfy the joints at t0.

    Only free DOFs move; prescribed DOFs take their prescribed values and velocities.
    """
    check_consistent_initial_state(asm, u0, v0, t0, iterations)
    cs = asm.constraints
    n = asm.n_dof
    u = np.zeros(n) if u0 is None else np.array(u0, dtype=float)
    v = np.zeros(n) if v0 is None else np.array(v0, dtype=float)
    presc, free = asm.dofs.prescribed, asm.dofs.free
    u[presc] = asm.prescribed_values(t0)
    v[presc] = asm.prescribed_velocities(t0)
    if cs is None:
        return u, v
    tol = 1e-12 * asm.model.characteristic_length
    for _ in range(iterations):
        phi = cs.values(u, t0)
        if np.abs(phi).max(initial=0.0) <= tol:
            break
        C = cs.evaluate(u, t0, np.zeros(cs.n)).C[:, free]
        du = np.zeros(n)
        du[free] = spla.lsqr(C, -phi, atol=1e-14, btol=1e-14)[0]
        u = asm.update(u, du)
    else:
        raise ModelError(f"no configuration satisfying the joints found near the guess: {_worst(asm, phi)} "
                         f"is still off by {np.abs(phi).max():.3g}")
    C = cs.evaluate(u, t0, np.zeros(cs.n)).C
    rate = C @ v + cs.time_derivative(u, t0)
    v[free] -= spla.lsqr(C[:, free], rate, atol=1e-14, btol=1e-14)[0]
    return u, v
