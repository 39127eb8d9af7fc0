"""A linear superelement given by its stiffness and mass matrices (:class:`MatrixGroup`): the
element group of a component imported from external K and M (:mod:`flexmb.cms.imported`).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from flexmb.checks import ModelError
from flexmb.elements.base import ElementGroup


class MatrixGroup(ElementGroup):
    """A linear superelement over all nodes of a model, its stiffness and mass given as matrices,
    kept sparse: one element per pair of nodes that K or M couples, ``[i, i]`` carrying the
    diagonal block of node i and ``[i, j]`` (i < j) the two off-diagonal blocks, so the assembly
    puts every entry of K and M back exactly once (the assembled matrices are K and M to the bit)
    and the cost grows with the matrices' non-zeros, not with the square of their size (as one
    dense element over all DOFs did: 4806 DOFs took 10 s and 185 MB).

    Parameters
    ----------
    K, M : (n, n) symmetric stiffness and mass (dense or sparse) over the nodes' DOFs in node order:
        node 0's DOFs (translations, then rotations if ``rotations``), node 1's, ... (n = n_nodes *
        DOFs per node).
    n_nodes : number of nodes of the superelement (the model's nodes 0 .. n_nodes - 1).
    dim : 2 or 3.
    rotations : whether every node carries rotational DOFs.
    name : the group's name (the component's name).

    Internal force K u, tangent K, mass M; the mid-point force K (u0 + u1)/2 conserves the quadratic
    strain energy exactly. There are no stresses, so no geometric stiffness (zero arrays).
    """

    n_nodes = 2
    output_units = {"U": "J"}

    def __init__(self, K: np.ndarray | sp.spmatrix, M: np.ndarray | sp.spmatrix, n_nodes: int, dim: int,
                 rotations: bool, name: str) -> None:
        self.has_rotations = bool(rotations)
        per = dim + ((1 if dim == 2 else 3) if self.has_rotations else 0)
        n = int(n_nodes) * per
        self.K, self.M = sp.csr_matrix(K, dtype=float), sp.csr_matrix(M, dtype=float)      # (n, n)
        if self.K.shape != (n, n) or self.M.shape != (n, n):
            raise ModelError(f"element group {name!r}: K {self.K.shape} and M {self.M.shape} must both be "
                             f"({n}, {n}) for {int(n_nodes)} nodes of {per} DOFs")
        self.n_superelement_nodes = int(n_nodes)
        coupled = (abs(self.K) + abs(self.M)).tocoo()
        a, b = coupled.row // per, coupled.col // per
        pairs = np.unique(np.c_[np.minimum(a, b), np.maximum(a, b)], axis=0)
        # a node coupled to nothing still needs its (zero) diagonal element for its DOFs to exist
        alone = np.setdiff1d(np.arange(int(n_nodes)), pairs.ravel())
        pairs = np.unique(np.r_[pairs, np.c_[alone, alone]].astype(np.int64), axis=0)
        super().__init__(pairs, dim, name)

    def _element_matrices(self, A: sp.csr_matrix) -> np.ndarray:
        """A split into the elements' matrices (n_el, 2 d, 2 d): node i's diagonal block in element
        [i, i]'s upper-left block, the blocks (i, j) and (j, i) of i < j in element [i, j]'s
        upper-right and lower-left blocks; every entry of A lands in exactly one place."""
        per = self.dofs_per_node
        coo = A.tocoo()
        i, j = coo.row // per, coo.col // per
        keys = self.connectivity[:, 0] * self.n_superelement_nodes + self.connectivity[:, 1]   # sorted (unique)
        e = np.searchsorted(keys, np.minimum(i, j) * self.n_superelement_nodes + np.maximum(i, j))
        rows = coo.row % per + np.where(i > j, per, 0)
        cols = coo.col % per + np.where(i < j, per, 0)
        out = np.zeros((self.n_elements, 2 * per, 2 * per))
        np.add.at(out, (e, rows, cols), coo.data)
        return out

    def _stiffness(self) -> np.ndarray:
        """The elements' stiffness (n_el, 2 d, 2 d), kept (read-only; not saved in model files)."""
        kept = self.__dict__.get("_kept_element_stiffness")
        if kept is None:
            kept = self._element_matrices(self.K)
            kept.flags.writeable = False
            self._kept_element_stiffness = kept
        return kept

    def _forces(self, u: np.ndarray) -> np.ndarray:
        return np.einsum("eij,ej->ei", self._stiffness(), u)                          # (n_el, 2 d)

    def element_outputs(self, X: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        """Strain energy ``U`` (J) of each element (n_el,): the share of its blocks, summing to
        the superelement's; there are no section forces."""
        return {"U": self.strain_energy(X, u)}

    def internal_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self._forces(u)

    def force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._forces(u), self._stiffness().copy()

    def generalized_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return np.zeros((self.n_elements, 0))

    def geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        return np.zeros((self.n_elements, self.ndof, self.ndof))

    def strain_energy(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return 0.5 * np.einsum("ei,ei->e", u, self._forces(u))

    def axial_strain(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        return np.zeros(self.n_elements)

    def mass_matrix(self, X: np.ndarray) -> np.ndarray:
        return self._element_matrices(self.M)                                         # (n_el, 2 d, 2 d)

    def mid_point_force(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        return self._forces(0.5 * (u0 + u1))

    def mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        return self.mid_point_force(X, u0, u1), 0.5 * self._stiffness()
