"""The maps of spatial (3D) rotations that the derivative of a mid-point step needs (issue 33, piece
P3c).

**Convention.** At a node with spatial rotations the state holds the rotation vector psi
(``R = exp(hat(psi))``) and the spatial angular velocity omega (``State.v``). A derivative of the
state at such a node is a **spin**: ``dR/dp = hat(theta) R`` with theta (3,) in rad per unit of p,
the perturbation :meth:`~flexmb.assembly.Assembly.update` applies to a configuration; omega is a
plain vector, so dv/dp there is d omega/dp (rad/s per unit of p). A response that reads the rotation
vector itself gets ``dpsi/dp = T(psi)^-1 theta`` (:func:`rotation_vector_derivative`); one that reads
a point at an offset d from the node, ``x = x_node + R d``, gets ``dx/dp = dx_node/dp - hat(R d)
theta``; translations are plain. Central differences of re-runs compare with a spin through
:func:`spin_difference`, ``log(R(p + h) R(p - h)^T) / (2 h)``, never through differences of rotation
vectors.

**The step.** A mid-point step (:class:`~flexmb.integrators.schemes.MidPoint`) moves a rotating node
by the Cayley parameters w of ``R_{n+1} = cay(w) R_n`` (Newton's unknown there), so

    theta_{n+1} = T_c(w) dw + cay(w) theta_n,      T_c(w) = (I + hat(w)/2) / (1 + |w|^2/4)

(:func:`cayley_spin`; at fixed R_n a change dw of the unknown is the spin T_c(w) dw of R_{n+1}), and
the step's residual g, whose Jacobian A is taken w.r.t. w at fixed R_n, has ``dg/dtheta_{n+1} = A
T_c(w)^-1`` at fixed R_n. With the start derivatives of :mod:`flexmb.sensitivity.matrices` and
:mod:`flexmb.sensitivity.inertia` (w.r.t. spins of R_n at fixed R_{n+1}), the step's derivative
solves ``A z = -(...)`` and its end spin is ``theta_{n+1} = T_c(w) z`` (:func:`end_spins`); the
increment moves by ``dw = T_c(w)^-1 (theta_{n+1} - cay(w) theta_n)`` (:func:`increment_maps`).

The end angular velocity follows from w and the start's omega_n by the node's rule
(``MidPoint._motion``): ``omega_{n+1} = cay(w) a`` at ordinary rotating nodes (rigid bodies, beams,
shells, point inertias: ``R_{n+1} Omega_{n+1}`` with ``Omega_{n+1} = R_n^T a``) and ``omega_{n+1} =
T_c(w) a`` at the frames of 3D modal bodies (their chart's rule,
:meth:`~flexmb.elements.floating_frame3d.FloatingFrameMass3D.mid_point_velocity`), ``a = 2 w / dt -
omega_n``; :func:`end_rate_maps` gives d omega_{n+1}/dw and d omega_{n+1}/d omega_n of both.

The rotary terms' start derivatives (w.r.t. the spin of R_n and omega_n) are
:meth:`flexmb.sensitivity.inertia.InertiaDerivatives.rotary_terms`. Each map here is checked by central
differences in the tangent space by ``tests/test_sensitivity_rotations.py``.
"""
from __future__ import annotations

import numpy as np

from flexmb.assembly import Assembly
from flexmb.rotations import cayley, cayley_between, exp_map, log_map, skew, tangent_operator
from flexmb.sensitivity.matrices import cayley_spin_inverse


def cayley_spin(w: np.ndarray) -> np.ndarray:
    """T_c(w) = (I + hat(w)/2) / (1 + |w|^2/4) (n, 3, 3) for Cayley parameters w (n, 3) (rad): the spin
    of ``cay(w) R`` per change of w at fixed R."""
    scale = 1.0 / (1.0 + 0.25 * np.einsum("ni,ni->n", w, w))
    return (np.eye(3)[None] + 0.5 * skew(w)) * scale[:, None, None]


def end_spins(w: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The spins of R_{n+1} (n, 3) or (n, 3, k) of changes z (n, 3) or (n, 3, k) of the step's Cayley
    parameters w (n, 3) at fixed R_n: ``T_c(w) z``."""
    return np.einsum("nij,nj...->ni...", cayley_spin(w), z)


def increment_maps(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dw/dtheta_{n+1}, dw/dtheta_n) (n, 3, 3) each of the Cayley parameters w (n, 3) of a step, w.r.t.
    the spins of its end and start rotations: ``T_c(w)^-1`` and ``-T_c(w)^-1 cay(w)``."""
    inverse = cayley_spin_inverse(w)
    return inverse, -inverse @ cayley(w)


def end_rate_maps(w: np.ndarray, omega0: np.ndarray, dt: float, frames: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(d omega_{n+1}/dw, d omega_{n+1}/d omega_n) (n, 3, 3) each of the end angular velocity of a
    mid-point step of dt (s) with Cayley parameters w (n, 3) (rad) and start angular velocity omega0
    (n, 3) (rad/s): ``omega_{n+1} = cay(w) a`` at ordinary rotating nodes, ``T_c(w) a`` at the nodes
    where ``frames`` (n,) bool is set (3D modal bodies' frames), ``a = 2 w / dt - omega_n`` (module
    docstring). Units: rad/s per rad, and 1."""
    a = 2.0 / dt * w - omega0                                                 # (n, 3) rad/s
    C, T = cayley(w), cayley_spin(w)
    # cay(w + dw) = exp(hat(T_c dw)) cay(w): d(cay(w) a) = -hat(cay(w) a) T_c dw at fixed a
    d_w = -skew(np.einsum("nij,nj->ni", C, a)) @ T + (2.0 / dt) * C
    d_omega = -C
    if frames is not None and frames.any():
        f = np.flatnonzero(frames)
        wf, af, Tf = w[f], a[f], T[f]
        scale = 1.0 / (1.0 + 0.25 * np.einsum("ni,ni->n", wf, wf))
        # T_c(w) a = s (a + w x a / 2), s = 1 / (1 + |w|^2 / 4), ds/dw = -s^2 w^T / 2
        inner = af + 0.5 * np.cross(wf, af)                                   # (n_f, 3)
        d_w[f] = (-0.5 * scale[:, None, None] ** 2 * np.einsum("ni,nj->nij", inner, wf)
                  - 0.5 * scale[:, None, None] * skew(af) + (2.0 / dt) * Tf)
        d_omega[f] = -Tf
    return d_w, d_omega


def rotation_vector_derivative(psi: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """d psi/dp (n, 3) or (n, 3, k) of rotation vectors psi (n, 3) whose rotations move by the spins
    theta (n, 3) or (n, 3, k): ``T(psi)^-1 theta`` (:func:`flexmb.rotations.tangent_operator`; below a
    half turn)."""
    T = tangent_operator(psi)                                                 # (n, 3, 3)
    return np.linalg.solve(T, theta[..., None])[..., 0] if theta.ndim == 2 else np.linalg.solve(T, theta)


def spin_difference(psi_plus: np.ndarray, psi_minus: np.ndarray, h: float) -> np.ndarray:
    """The central difference in the tangent space (n, 3) (rad per unit of p) of rotation vectors
    (n, 3) at p + h and p - h: ``log(R(p + h) R(p - h)^T) / (2 h)``, to compare with spins."""
    R_plus, R_minus = exp_map(psi_plus), exp_map(psi_minus)
    return log_map(R_plus @ np.transpose(R_minus, (0, 2, 1))) / (2.0 * h)


class StepRotations:
    """The spatial rotations' part of a mid-point step's derivative for one assembly (module
    docstring): from the changes z (n_r, 3, k) of the step's Cayley parameters that the step's solve
    returns and the start's spins and angular-velocity derivatives, the end's (:meth:`forward`), and
    the transposed map of the adjoint (:meth:`transpose`). Rows follow ``Assembly.rotation_dofs``."""

    def __init__(self, asm: Assembly) -> None:
        self.asm = asm
        rd = asm.rotation_dofs
        frame_dofs = [rot[:, 0] for _, _, rot in asm.modal_frames]
        #: (n_r,) bool: the node is the frame of a 3D modal body (its own end-rate rule)
        self.frames = np.isin(rd[:, 0], np.concatenate(frame_dofs)) if frame_dofs else np.zeros(len(rd), bool)

    def maps(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, dt: float) -> tuple[np.ndarray, ...]:
        """The step's maps (n_r, 3, 3) each: T_c(w), dw/dtheta_n, d omega_{n+1}/dw, d omega_{n+1}/d omega_n,
        for the step of dt (s) from (u0, v0) to u1 (n_dof,) each."""
        rd = self.asm.rotation_dofs
        w = cayley_between(u0[rd], u1[rd])
        d_start = increment_maps(w)[1]
        return (cayley_spin(w), d_start) + end_rate_maps(w, v0[rd], dt, self.frames)

    @staticmethod
    def forward(maps: tuple[np.ndarray, ...], z: np.ndarray, theta0: np.ndarray, omega0: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
        """(theta_{n+1}, d omega_{n+1}) (n_r, 3, k) from the changes z of w (at fixed R_n), the start's spins
        theta0 and angular velocity changes omega0 (n_r, 3, k) each: ``theta_{n+1} = T_c z`` and
        ``d omega_{n+1} = (d omega/dw) (z + (dw/dtheta_n) theta_n) + (d omega/d omega_n) omega_n``."""
        T, d_start, d_w, d_omega = maps
        dw = z + np.einsum("nij,njk->nik", d_start, theta0)
        return (np.einsum("nij,njk->nik", T, z),
                np.einsum("nij,njk->nik", d_w, dw) + np.einsum("nij,njk->nik", d_omega, omega0))

    @staticmethod
    def transpose(maps: tuple[np.ndarray, ...], mu_theta: np.ndarray, mu_omega: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The transpose of :meth:`forward`: for adjoint vectors mu_theta, mu_omega (n_r, 3, k) of the end's
        spins and angular velocities, those of z, of the start's spins and of its angular velocities."""
        T, d_start, d_w, d_omega = maps
        on_w = np.einsum("nji,njk->nik", d_w, mu_omega)
        return (np.einsum("nji,njk->nik", T, mu_theta) + on_w, np.einsum("nji,njk->nik", d_start, on_w),
                np.einsum("nji,njk->nik", d_omega, mu_omega))
