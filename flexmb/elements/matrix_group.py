"""A linear superelement given by its stiffness and mass matrices (:class:`MatrixGroup`): the
element group of a component imported from external K and M (:mod:`flexmb.cms.imported`).
"""
from __future__ import annotations

import numpy as np

from flexmb.checks import ModelError
from flexmb.elements.base import ElementGroup


class MatrixGroup(ElementGroup):
    """One linear superelement over all nodes of a model, its stiffness and mass given as matrices.

    Parameters
    ----------
    K, M : (n, n) symmetric stiffness and mass over the element DOFs, in the element order: node
        0's DOFs (translations, then rotations if ``rotations``), node 1's, ... (n = n_nodes * DOFs per node).
    n_nodes : number of nodes; the connectivity is ``[[0, 1, ..., n_nodes - 1]]``.
    dim : 2 or 3.
    rotations : whether every node carries rotational DOFs.
    name : the group's name (the component's name).

    Internal force K u, tangent K, mass M; the mid-point force K (u0 + u1)/2 conserves the quadratic
    strain energy exactly. There are no stresses, so no geometric stiffness (zero arrays).
    """

    output_units = {"U": "J"}

    def __init__(self, K: np.ndarray, M: np.ndarray, n_nodes: int, dim: int, rotations: bool, name: str) -> None:
        self.n_nodes = int(n_nodes)            # one element over all nodes: set before the base checks it
        self.has_rotations = bool(rotations)
        super().__init__(np.arange(self.n_nodes)[None, :], dim, name)
        self.K = np.asarray(K, dtype=float)                                           # (n, n)
        self.M = np.asarray(M, dtype=float)                                           # (n, n)
        if self.K.shape != (self.ndof, self.ndof) or self.M.shape != self.K.shape:
            raise ModelError(f"element group {name!r}: K {self.K.shape} and M {self.M.shape} must both be "
                             f"({self.ndof}, {self.ndof}) for {self.n_nodes} nodes of {self.dofs_per_node} DOFs")

    def _forces(self, u: np.ndarray) -> np.ndarray:
        return np.einsum("ij,ej->ei", self.K, u)                                     # (1, n)

    def element_outputs(self, X: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        """Strain energy ``U`` (J), (1,): the superelement has no section forces."""
        return {"U": self.strain_energy(X, u)}

    def internal_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self._forces(u)

    def force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._forces(u), np.broadcast_to(self.K, (len(u),) + self.K.shape).copy()

    def generalized_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return np.zeros((self.n_elements, 0))

    def geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        return np.zeros((self.n_elements, self.ndof, self.ndof))

    def strain_energy(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return 0.5 * np.einsum("ei,ei->e", u, self._forces(u))

    def axial_strain(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return np.zeros(self.n_elements)

    def mass_matrix(self, X: np.ndarray) -> np.ndarray:
        return self.M[None].copy()                                                   # (1, n, n)

    def mid_point_force(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        return self._forces(0.5 * (u0 + u1))

    def mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        return self.mid_point_force(X, u0, u1), np.broadcast_to(0.5 * self.K, (len(u0),) + self.K.shape).copy()
