"""Co-rotational truss in 2D and 3D (Crisfield & Shi 1993, section 3).

Element DOFs: ``[d1 (dim), d2 (dim)]``. Axial force N = EA (l - l0) / l0 (tension positive),
internal force q = N [-e; e] with e the current chord direction (their eq. 4).

Mid-point force (their eqs. 8, 9, 12, 20): with x21_m = (x21_n + x21_{n+1}) / 2,
``N_m e_m = beta (N_n + N_{n+1}) / 2 * x21_m / l_m`` and the energy factor
``beta = 2 l_m / (l_n + l_{n+1})``, i.e. ``q_m = c x21_m [-1; 1]`` with
``c = (N_n + N_{n+1}) / (l_n + l_{n+1})``. Because ``x21_m . dx21 = (l_{n+1}^2 - l_n^2) / 2``,
``q_m . (d_{n+1} - d_n)`` equals the exact change of strain energy for any step.

The kernels the Newton loop and the step bookkeeping call (forces, tangents, mid-point force,
strain energy, axial strain) run compiled in :mod:`flexmb.compiled.truss`; the numpy methods
named ``reference_*`` here are their specification, kept for the tests only.
"""
from __future__ import annotations

import numpy as np

from flexmb.checks import ModelError
from flexmb.elements.base import ElementGroup
from flexmb.elements.corotational import chord

_compiled = None


def _kernels():
    """flexmb.compiled.truss, imported on first use (numba stays out of ``import flexmb``)."""
    global _compiled
    if _compiled is None:
        from flexmb.compiled import truss
        _compiled = truss
    return _compiled


class Truss(ElementGroup):
    """Group of two-node co-rotational bars.

    Parameters
    ----------
    connectivity : (n_el, 2) node indices.
    dim : 2 or 3.
    EA : axial stiffness (N), scalar or (n_el,).
    rho_A : mass per unit length (kg/m), scalar or (n_el,).
    mass : ``"lumped"`` (half the bar mass at each node) or ``"consistent"``
        (linear interpolation, rho A l0 / 6 [[2, 1], [1, 2]] per direction). Both are constant
        and invariant under rotation, as the mid-point scheme needs.
    """

    has_rotations = False

    def __init__(self, connectivity: np.ndarray, dim: int, EA: float | np.ndarray,
                 rho_A: float | np.ndarray = 0.0, mass: str = "lumped", name: str = "truss") -> None:
        super().__init__(connectivity, dim, name)
        n = self.n_elements
        self.EA = self._per_element(EA, n, "EA", name)
        self.rho_A = self._per_element(rho_A, n, "rho_A", name, positive=False)
        if mass not in ("lumped", "consistent"):
            raise ModelError(f"element group {name!r}: mass must be 'lumped' or 'consistent', got {mass!r}")
        self.mass = mass

    def _chord(self, X: np.ndarray, u: np.ndarray):
        d = self.dim
        return chord(X, u[:, :d], u[:, d:])

    @staticmethod
    def _spread(block: np.ndarray) -> np.ndarray:
        """(n_el, dim, dim) block B -> element matrix [[B, -B], [-B, B]] (n_el, 2dim, 2dim)."""
        return np.block([[block, -block], [-block, block]])

    def axial_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """N = EA (l - l0) / l0 (n_el,), N."""
        return _kernels().section_state(X, u, self.EA)[:, 1]

    def axial_strain(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return _kernels().section_state(X, u, self.EA)[:, 0]

    def reference_section_state(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Specification (numpy, for the tests) of the compiled section state behind
        :meth:`axial_strain`, :meth:`axial_force`, :meth:`element_outputs`,
        :meth:`generalized_stresses` and :meth:`strain_energy`: (l - l0)/l0, N (N) and the
        strain energy EA (l - l0)^2 / (2 l0) (J), (n_el, 3)."""
        c = self._chord(X, u)
        return np.column_stack([c.stretch / c.l0, self.EA * c.stretch / c.l0, 0.5 * self.EA * c.stretch**2 / c.l0])

    def internal_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return _kernels().forces(X, u, self.EA, False)[0]

    def force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _kernels().forces(X, u, self.EA, True)

    def reference_force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Specification (numpy, for the tests) of the compiled :meth:`internal_force` and
        :meth:`force_and_tangent`: q = N [-e; e] (n_el, 2dim), K_t (n_el, 2dim, 2dim)."""
        c = self._chord(X, u)
        N = self.EA * c.stretch / c.l0                                # (n_el,)
        e = c.e                                                       # (n_el, dim)
        f2 = N[:, None] * e
        eeT = np.einsum("ei,ej->eij", e, e)                           # (n_el, dim, dim)
        eye = np.eye(self.dim)[None]
        # material EA/l0 e e^T plus geometric N/l (I - e e^T)
        block = (self.EA / c.l0)[:, None, None] * eeT + (N / c.l)[:, None, None] * (eye - eeT)
        return np.concatenate([-f2, f2], axis=1), self._spread(block)

    output_units = {"N": "N", "axial_strain": "-"}

    def element_outputs(self, X: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        """Axial force ``N`` (tension positive) and ``axial_strain`` (l - l0)/l0, (n_el,) each."""
        return self.outputs_and_strain_energy(X, u)[0]

    def outputs_and_strain_energy(self, X: np.ndarray, u: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        state = _kernels().section_state(X, u, self.EA)
        return {"N": state[:, 1], "axial_strain": state[:, 0]}, state[:, 2]

    def generalized_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Axial force N (n_el, 1), N."""
        return self.axial_force(X, u)[:, None]

    def geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        """N/l (I - e e^T) blocks for given axial forces (n_el, 1): (n_el, 2dim, 2dim)."""
        c = self._chord(X, u)
        e = c.e
        P = np.eye(self.dim)[None] - np.einsum("ei,ej->eij", e, e)
        return self._spread((stresses[:, 0] / c.l)[:, None, None] * P)

    def strain_energy(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return _kernels().section_state(X, u, self.EA)[:, 2]

    def mass_matrix(self, X: np.ndarray) -> np.ndarray:
        l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
        m = self.rho_A * l0                                           # (n_el,) bar mass, kg
        pattern = np.diag([0.5, 0.5]) if self.mass == "lumped" else np.array([[2.0, 1.0], [1.0, 2.0]]) / 6.0
        return m[:, None, None] * np.kron(pattern, np.eye(self.dim))[None]

    def mid_point_force(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        return _kernels().mid_point_forces(X, u0, u1, self.EA, False)[0]

    def mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        return _kernels().mid_point_forces(X, u0, u1, self.EA, True)

    def reference_mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                              ) -> tuple[np.ndarray, np.ndarray]:
        """Specification (numpy, for the tests) of the compiled :meth:`mid_point_force` and
        :meth:`mid_point_force_and_tangent`: q_m (n_el, 2dim) and dq_m/du1 (n_el, 2dim, 2dim)."""
        c0, c1 = self._chord(X, u0), self._chord(X, u1)
        N0 = self.EA * c0.stretch / c0.l0
        N1 = self.EA * c1.stretch / c1.l0
        lsum = c0.l + c1.l                                            # (n_el,)
        coef = (N0 + N1) / lsum                                       # (n_el,) = beta N_av / l_m
        x21m = 0.5 * (c0.x21 + c1.x21)                                # (n_el, dim)
        f2 = coef[:, None] * x21m
        q = np.concatenate([-f2, f2], axis=1)
        # d coef / d x21_{n+1} = (EA/l0 - coef) e_{n+1} / (l_n + l_{n+1}); d x21_m = dx21 / 2
        g = ((self.EA / c1.l0 - coef) / lsum)[:, None] * c1.e         # (n_el, dim)
        block = np.einsum("ei,ej->eij", x21m, g) + 0.5 * coef[:, None, None] * np.eye(self.dim)[None]
        return q, self._spread(block)
