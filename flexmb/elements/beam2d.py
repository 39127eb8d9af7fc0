"""Planar co-rotational Euler-Bernoulli beam (Crisfield 1991, ch. 7; Crisfield & Shi 1993, section 5).

Element DOFs ``p = [u1, v1, theta1, u2, v2, theta2]``. The chord rotates by ``alpha``; the local
(deformational) rotations are ``tb_i = theta_i - alpha`` (their eq. 32), computed robustly as the
angle from the current chord to the rotated reference chord, so any number of turns is fine as
long as each |tb_i| < pi. Local forces (their eq. 34, Kirchhoff beam, no shallow-arch term):

    N = EA (l - l0) / l0,    [M1, M2] = EI / l0 [[4, 2], [2, 4]] [tb1, tb2]

and ``q = B^T [N, M1, M2]`` with rows ``r = [-e, 0, e, 0]`` and ``b_i = z / l + e_theta_i``,
``z = [n, 0, -n, 0]``, e the chord direction and n = e rotated by +90 degrees (their eq. 37).

Second-order strain (``second_order=True``, Meijaard 1993, the planar form of his eq. 16): the
elongation includes the shortening of the chord by the bending of the element,

    e = l - l0 + l0/30 (2 tb1^2 - tb1 tb2 + 2 tb2^2),    N = EA e / l0,

which gives the element its own geometric stiffness ``N l0/30 [[4, -1], [-1, 4]]`` on the local
rotations (centrifugal stiffening of a spinning beam, axial-force effects within an element).
The bending moments are then ``M_eff = M + N l0/30 [[4, -1], [-1, 4]] tb`` in q = N r + M_eff . b.

Mid-point force (averaged-B, their eq. 38): ``q_m = N_av r_m + M_av,1 b_1m + M_av,2 b_2m`` with
end-of-step averages N_av, M_av and B rows chosen so that ``B_m (p_{n+1} - p_n)`` is the exact
increment of (l, tb1, tb2):

* ``r_m = [-x21_m, 0, x21_m, 0] / l_av`` since ``x21_m . dx21 = (l_{n+1}^2 - l_n^2) / 2``;
* ``z_m = gamma / (l_n l_{n+1}) [n*_m, 0, -n*_m, 0]`` with ``n*_m`` = x21_m rotated by +90
  degrees and ``gamma = d_alpha / sin(d_alpha)``, because ``x21_m x dx21 = x21_n x x21_{n+1}
  = l_n l_{n+1} sin(d_alpha)``. This makes ``M_av . d_tb`` the exact change of bending energy
  (the paper's approximate chord-rotation increment, eq. 35, made exact). Energy is therefore
  conserved to the Newton tolerance for any step below a half turn of the chord per step.
  The end-of-step local rotations are taken as ``tb_n + d_theta - d_alpha`` (not re-wrapped), so
  the identity also holds when a node turns by more than pi relative to its chord in one step.
  Angular momentum is conserved only to O(d_alpha^3) per step, through the bending part:
  exact energy and an exactly torque-free averaged B cannot both hold with this chord angle.

Mass: translational ``lumped`` (rho A l0 / 2 per node), ``consistent`` (linear interpolation,
constant under rotation) or ``cubic`` (the Hermitian consistent mass turned with the nodal
rotations, configuration dependent, with its own energy-conserving mid-point inertia: see
:mod:`flexmb.elements.hermite_mass2d`; the accurate choice for few elements per member);
rotary inertia lumped at the nodes, ``rho_I l0 / 2`` each, with ``rho_I`` the mass moment of
inertia per unit length (kg m).

The kernels the Newton loop and the step bookkeeping call (forces, tangents, mid-point force,
strain energy, section forces) run compiled in :mod:`flexmb.compiled.beam2d`; the numpy methods
named ``reference_*`` here are their specification, kept for the tests only.
"""
from __future__ import annotations

import numpy as np

from flexmb.checks import ModelError, flag
from flexmb.elements.base import ElementGroup, median
from flexmb.elements.corotational import Chord, chord
from flexmb.elements.hermite_mass2d import HermiteMass2D

_TRANS = np.array([0, 1, 3, 4])
_R90 = np.array([[0.0, -1.0], [1.0, 0.0]])
# J maps the element DOFs to the chord increment: dx21 = J dp, shape (2, 6)
_J = np.zeros((2, 6))
_J[0, 0], _J[1, 1], _J[0, 3], _J[1, 4] = -1.0, -1.0, 1.0, 1.0

_compiled = None


def _kernels():
    """flexmb.compiled.beam2d, imported on first use (numba stays out of ``import flexmb``)."""
    global _compiled
    if _compiled is None:
        from flexmb.compiled import beam2d
        _compiled = beam2d
    return _compiled


def _sinc_ratio(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """gamma(a) = a / sin(a) and its derivative, with series near a = 0."""
    small = np.abs(a) < 1e-3
    a_s = np.where(small, 1.0, a)                          # avoid 0/0 in the unused branch
    s, c = np.sin(a_s), np.cos(a_s)
    gamma = np.where(small, 1.0 + a**2 / 6.0 + 7.0 * a**4 / 360.0, a_s / s)
    dgamma = np.where(small, a / 3.0 + 7.0 * a**3 / 90.0, (s - a_s * c) / s**2)
    return gamma, dgamma


class Beam2D(ElementGroup):
    """Group of planar two-node co-rotational Euler-Bernoulli beams.

    Parameters
    ----------
    connectivity : (n_el, 2) node indices.
    EA : axial stiffness (N); EI : bending stiffness (N m^2).
    rho_A : mass per length (kg/m); rho_I : rotary inertia per length (kg m), default 0.
    mass : ``"lumped"``, ``"consistent"`` or ``"cubic"`` translational mass (see module docstring).
    second_order : include the second-order (bowing) term of the elongation (module docstring).
    """

    has_rotations = True

    def __init__(self, connectivity: np.ndarray, EA: float | np.ndarray, EI: float | np.ndarray,
                 rho_A: float | np.ndarray = 0.0, rho_I: float | np.ndarray = 0.0,
                 mass: str = "lumped", name: str = "beam2d", second_order: bool = False) -> None:
        super().__init__(connectivity, 2, name)
        n = self.n_elements
        self.EA = self._per_element(EA, n, "EA", name)
        self.EI = self._per_element(EI, n, "EI", name)
        self.rho_A = self._per_element(rho_A, n, "rho_A", name, positive=False)
        self.rho_I = self._per_element(rho_I, n, "rho_I", name, positive=False)
        if mass not in ("lumped", "consistent", "cubic"):
            raise ModelError(f"element group {name!r}: mass must be 'lumped', 'consistent' or 'cubic', "
                             f"got {mass!r}")
        self.mass = mass
        self.second_order = flag(second_order, f"element group {name!r}: second_order")

    # -------------------------------------------------------------- kinematics
    @staticmethod
    def _chord(X: np.ndarray, u: np.ndarray) -> Chord:
        return chord(X, u[:, 0:2], u[:, 3:5])

    @staticmethod
    def _local_rotations(c: Chord, u: np.ndarray) -> np.ndarray:
        """tb_i = theta_i - alpha (n_el, 2), as the angle from the chord to the rotated reference chord."""
        e0 = c.X21 / c.l0[:, None]                                       # (n_el, 2)
        e = c.e                                                          # (n_el, 2)
        th = u[:, [2, 5]]                                                # (n_el, 2)
        cos_t, sin_t = np.cos(th), np.sin(th)
        # rotated reference chord d_i = R(theta_i) e0, (n_el, 2 nodes, 2)
        d = np.stack([cos_t * e0[:, None, 0] - sin_t * e0[:, None, 1],
                      sin_t * e0[:, None, 0] + cos_t * e0[:, None, 1]], axis=-1)
        cross = e[:, None, 0] * d[..., 1] - e[:, None, 1] * d[..., 0]
        dot = np.einsum("ei,eni->en", e, d)
        return np.arctan2(cross, dot)                                    # (n_el, 2)

    def _bowing(self, l0: np.ndarray, tb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Second-order elongation l0/30 (2 tb1^2 - tb1 tb2 + 2 tb2^2) (n_el,), its gradient
        (n_el, 2) and Hessian (n_el, 2, 2) in tb; zero without the second-order term."""
        if not self.second_order:
            z = np.zeros(len(l0))
            return z, np.zeros_like(tb), np.zeros((len(l0), 2, 2))
        H = (l0 / 30.0)[:, None, None] * np.array([[4.0, -1.0], [-1.0, 4.0]])
        grad = np.einsum("eij,ej->ei", H, tb)
        return 0.5 * np.einsum("ei,ei->e", tb, grad), grad, H

    def _local_forces(self, X: np.ndarray, u: np.ndarray):
        """Chord, local rotations tb (n_el, 2), N (n_el,), bending moments M = k tb (n_el, 2), k."""
        c = self._chord(X, u)
        tb = self._local_rotations(c, u)
        N = self.EA * (c.stretch + self._bowing(c.l0, tb)[0]) / c.l0    # (n_el,)
        k = (self.EI / c.l0)[:, None, None] * np.array([[4.0, 2.0], [2.0, 4.0]])  # (n_el, 2, 2)
        M = np.einsum("eij,ej->ei", k, tb)                               # (n_el, 2)
        return c, tb, N, M, k

    @staticmethod
    def _b_rows(c: Chord) -> tuple[np.ndarray, np.ndarray]:
        """r (n_el, 6) and the bending rows [b1, b2] (n_el, 2, 6) at one configuration."""
        e = c.e
        n = e @ _R90.T                                                   # (n_el, 2), e rotated +90 deg
        r = e @ _J                                                       # [-e, 0, e, 0]
        z = -(n @ _J) / c.l[:, None]                                     # [n, 0, -n, 0] / l
        b = np.repeat(z[:, None, :], 2, axis=1)
        b[:, 0, 2] += 1.0
        b[:, 1, 5] += 1.0
        return r, b

    # ---------------------------------------------------------- static kernels
    def axial_strain(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self._section_state(X, u)[:, 0]

    def local_rotations(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Deformational nodal rotations tb_1, tb_2 relative to the chord (n_el, 2), rad."""
        return self._section_state(X, u)[:, 1:3]

    def _section_state(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """[axial strain, tb1, tb2, N, M1, M2, strain energy] (n_el, 7), compiled; its
        specification is :meth:`reference_section_state`."""
        return _kernels().section_state(X, u, self.EA, self.EI, self.second_order)

    def reference_section_state(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Specification (numpy, for the tests) of the compiled section state behind
        :meth:`axial_strain`, :meth:`local_rotations`, :meth:`element_outputs`,
        :meth:`generalized_stresses` and :meth:`strain_energy`: (l - l0)/l0, tb1, tb2 (rad),
        N (N), M1, M2 (N m) and the strain energy N^2 l0 / (2 EA) + tb . M / 2 (J), (n_el, 7)."""
        c, tb, N, M, _ = self._local_forces(X, u)
        energy = 0.5 * N**2 * c.l0 / self.EA + 0.5 * np.einsum("ei,ei->e", tb, M)
        return np.column_stack([c.stretch / c.l0, tb, N, M, energy])

    def internal_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return _kernels().forces(X, u, self.EA, self.EI, self.second_order, False)[0]

    def force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _kernels().forces(X, u, self.EA, self.EI, self.second_order, True)

    def reference_force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Specification (numpy, for the tests) of the compiled :meth:`internal_force` and
        :meth:`force_and_tangent`: q = N r + M_eff . b (n_el, 6) and K_t = dq/du (n_el, 6, 6)."""
        c, tb, N, M, k = self._local_forces(X, u)
        _, grad, H = self._bowing(c.l0, tb)
        r, b = self._b_rows(c)
        M_eff = M + N[:, None] * grad                                    # (n_el, 2)
        q = N[:, None] * r + np.einsum("ei,eij->ej", M_eff, b)          # (n_el, 6)
        a = r + np.einsum("ei,eij->ej", grad, b)                         # de/dp
        material = ((self.EA / c.l0)[:, None, None] * (a[:, :, None] * a[:, None, :])
                    + b.transpose(0, 2, 1) @ ((k + N[:, None, None] * H) @ b))
        return q, material + self._geometric(c, r, b, N, M_eff)

    @staticmethod
    def _geometric(c: Chord, r: np.ndarray, b: np.ndarray, N: np.ndarray, M: np.ndarray) -> np.ndarray:
        """N dr/dp = N/l z z^T and (M1 + M2) d(z/l)/dp = -(M1 + M2)/l^2 (r z^T + z r^T)."""
        zl = b[:, 0] * c.l[:, None]                                      # z, (n_el, 6)
        zl[:, 2] = 0.0
        rz = r[:, :, None] * zl[:, None, :]
        return ((N / c.l)[:, None, None] * (zl[:, :, None] * zl[:, None, :])
                - (M.sum(axis=1) / c.l**2)[:, None, None] * (rz + rz.transpose(0, 2, 1)))

    output_units = {"N": "N", "M1": "N m", "M2": "N m", "axial_strain": "-"}

    def element_outputs(self, X: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        """Axial force ``N`` (tension positive), end moments ``M1, M2`` (counter-clockwise on the
        element's nodes) and ``axial_strain``, (n_el,) each."""
        return self.outputs_and_strain_energy(X, u)[0]

    def outputs_and_strain_energy(self, X: np.ndarray, u: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        state = self._section_state(X, u)
        return {"N": state[:, 3], "M1": state[:, 4], "M2": state[:, 5], "axial_strain": state[:, 0]}, state[:, 6]

    def _default_section(self, X: np.ndarray, length: float) -> dict[str, float | str]:
        """The solid square whose radius of gyration sqrt(I/A) matches sqrt(EI/EA)."""
        h = median(np.sqrt(12.0 * self.EI / self.EA))
        return {"shape": "box", "width": min(h, 0.1 * length), "height": min(h, 0.1 * length)}

    def generalized_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """[N, M1, M2] (n_el, 3): axial force (N) and end moments (N m)."""
        return self._section_state(X, u)[:, 3:6]

    def geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        """Part of the tangent linear in given stresses [N, M1, M2] (n_el, 3): (n_el, 6, 6)."""
        c = self._chord(X, u)
        tb = self._local_rotations(c, u)
        _, grad, H = self._bowing(c.l0, tb)
        r, b = self._b_rows(c)
        N = stresses[:, 0]
        M_eff = stresses[:, 1:] + N[:, None] * grad
        return (self._geometric(c, r, b, N, M_eff)
                + N[:, None, None] * (b.transpose(0, 2, 1) @ H @ b))

    def strain_energy(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self._section_state(X, u)[:, 6]

    def mass_matrix(self, X: np.ndarray) -> np.ndarray:
        """Constant mass (n_el, 6, 6): translational (none for ``cubic``) and lumped rotary inertia."""
        l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
        m = self.rho_A * l0                                              # (n_el,) kg
        Me = np.zeros((self.n_elements, 6, 6))
        if self.mass != "cubic":
            pattern = np.diag([0.5, 0.5]) if self.mass == "lumped" else np.array([[2.0, 1.0], [1.0, 2.0]]) / 6.0
            Me[:, _TRANS[:, None], _TRANS[None, :]] = m[:, None, None] * np.kron(pattern, np.eye(2))[None]
        Me[:, 2, 2] = Me[:, 5, 5] = 0.5 * self.rho_I * l0
        return Me

    def configuration_mass(self, X: np.ndarray) -> HermiteMass2D | None:
        """Kernels of the configuration-dependent (``cubic``) translational mass, else None."""
        return HermiteMass2D(X, self.rho_A) if self.mass == "cubic" else None

    # ------------------------------------------------------- mid-point kernels
    def mid_point_force(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        return _kernels().mid_point_forces(X, u0, u1, self.EA, self.EI, self.second_order, False)[0]

    def mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        return _kernels().mid_point_forces(X, u0, u1, self.EA, self.EI, self.second_order, True)

    def reference_mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                              ) -> tuple[np.ndarray, np.ndarray]:
        """Specification (numpy, for the tests) of the compiled :meth:`mid_point_force` and
        :meth:`mid_point_force_and_tangent`: q_m (n_el, 6) and dq_m/du1 (n_el, 6, 6)."""
        c0, tb0, N0, M0, k = self._local_forces(X, u0)
        c1 = self._chord(X, u1)
        # exact chord-rotation increment d_alpha = gamma * (x21_m x dx21) / (l_n l_{n+1})
        cross01 = c0.x21[:, 0] * c1.x21[:, 1] - c0.x21[:, 1] * c1.x21[:, 0]
        dalpha = np.arctan2(cross01, np.einsum("ei,ei->e", c0.x21, c1.x21))
        # End-of-step local rotations continue the start-of-step ones by the exact increment
        # instead of being wrapped into (-pi, pi] again: with wrapping, an iterate whose node
        # lags the chord by a full turn would be a (spurious, energy-violating) solution.
        tb1 = tb0 + (u1[:, [2, 5]] - u0[:, [2, 5]]) - dalpha[:, None]   # (n_el, 2)
        bow1, grad1, H = self._bowing(c1.l0, tb1)
        N1 = self.EA * (c1.stretch + bow1) / c1.l0
        M1 = np.einsum("eij,ej->ei", k, tb1)
        N_av = 0.5 * (N0 + N1)                                           # (n_el,)
        # the bowing term is quadratic in tb: its gradient at the mid-point is its exact
        # discrete gradient, so N_av (r_m + b_m^T grad_m) . dp is the exact energy increment
        grad_m = self._bowing(c1.l0, 0.5 * (tb0 + tb1))[1]
        M_av = 0.5 * (M0 + M1) + N_av[:, None] * grad_m                  # (n_el, 2), effective
        x21m = 0.5 * (c0.x21 + c1.x21)                                   # (n_el, 2)
        l_av = 0.5 * (c0.l + c1.l)                                       # (n_el,)
        r_m = (x21m @ _J) / l_av[:, None]                                # (n_el, 6)
        gamma, dgamma = _sinc_ratio(dalpha)
        kappa = gamma / (c0.l * c1.l)                                    # (n_el,)
        nstar = x21m @ _R90.T                                            # (n_el, 2)
        w = kappa[:, None] * nstar                                       # d_alpha = w . dx21
        zm = -(w @ _J)                                                   # [w, 0, -w, 0]
        b_m = np.repeat(zm[:, None, :], 2, axis=1)
        b_m[:, 0, 2] += 1.0
        b_m[:, 1, 5] += 1.0
        q = N_av[:, None] * r_m + np.einsum("ei,eij->ej", M_av, b_m)
        r1, b1 = self._b_rows(c1)
        e1 = c1.e
        n1 = e1 @ _R90.T
        # averaged forces: d N_av = EA/(2 l0) a1 dp with a = de/dp = r + b^T grad,
        # d M_av = (k + N_av H)/2 b1 dp; the force rows are a_m = r_m + b_m^T grad_m
        a1 = r1 + np.einsum("ei,eij->ej", grad1, b1)
        a_m = r_m + np.einsum("ei,eij->ej", grad_m, b_m)
        Kt = (0.5 * (self.EA / c1.l0)[:, None, None] * (a_m[:, :, None] * a1[:, None, :])
              + 0.5 * b_m.transpose(0, 2, 1) @ ((k + N_av[:, None, None] * H) @ b1))
        # d r_m = J^T [I - x21_m e1^T / l_av] J dp / (2 l_av)
        A = np.eye(2)[None] - np.einsum("ei,ej->eij", x21m, e1) / l_av[:, None, None]
        Kt += (N_av / (2.0 * l_av))[:, None, None] * (_J.T @ A @ _J)
        # d w / d x21 = n*_m g^T + kappa/2 R90,  g = (gamma' n1 - gamma e1) / (l_n l1^2)
        g = (dgamma[:, None] * n1 - gamma[:, None] * e1) / (c0.l * c1.l**2)[:, None]
        dw = np.einsum("ei,ej->eij", nstar, g) + 0.5 * kappa[:, None, None] * _R90[None]
        # z_m = -J^T w, so its contribution is -(M_av,1 + M_av,2) J^T dw J
        Kt -= M_av.sum(axis=1)[:, None, None] * (_J.T @ dw @ _J)
        return q, Kt
