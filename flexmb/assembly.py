"""Sparse assembly: the only place that knows the DOF map.

The sparsity pattern of the free-free block (CSC) is computed once per model, with the
position of every element-matrix entry in its data array; each Newton iteration then only
refills the values with one ``np.bincount`` per element group. Vectors are assembled over all
DOFs, so reactions at prescribed DOFs come out of the same residual.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from flexmb.dofs import DofMap
from flexmb.model import Model


class Assembly:
    """Model -> DOF map -> batched kernels -> global vectors and sparse matrices."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.dofs = DofMap(model)
        self.groups = list(model.groups)
        self.n_dof = self.dofs.n_dof
        self._X = [model.coordinates[g.connectivity] for g in self.groups]   # (n_el, nn, dim) each
        self._edofs = [self.dofs.element_dofs(g) for g in self.groups]       # (n_el, ne) each
        self._build_pattern()
        self._build_mass()
        self._prescribed_slots = [(int(np.searchsorted(self.dofs.prescribed, self.dofs.index(n, d))), pv)
                                  for (n, d), pv in model.prescribed.items()]
        self._load_slots = [(self.dofs.index(ld.node, ld.dof), ld) for ld in model.loads]
        self._gravity_field = np.zeros(self.n_dof)
        self._gravity_field[self.dofs.translations()] = model.gravity[None, :]

    # ----------------------------------------------------------------- pattern
    def _build_pattern(self) -> None:
        fpos = self.dofs.free_position
        nf = self.dofs.free.size
        keys, sources = [], []
        for ed in self._edofs:
            fp = fpos[ed]                                                  # (n_el, ne)
            rows = np.broadcast_to(fp[:, :, None], fp.shape + fp.shape[1:]).ravel()
            cols = np.broadcast_to(fp[:, None, :], fp.shape + fp.shape[1:]).ravel()
            valid = (rows >= 0) & (cols >= 0)
            keys.append(cols[valid] * nf + rows[valid])
            sources.append(np.flatnonzero(valid))
        diag = np.arange(nf, dtype=np.int64)
        all_keys = np.concatenate(keys + [diag * nf + diag])
        unique, inverse = np.unique(all_keys, return_inverse=True)
        splits = np.cumsum([k.size for k in keys])
        self._entry_positions = np.split(inverse, splits)[:-1]             # data index per valid entry
        self._entry_sources = sources                                      # flat index into (n_el, ne, ne)
        self._diag_positions = inverse[splits[-1]:] if len(splits) else inverse
        self.nnz = unique.size
        self._indices = (unique % nf).astype(np.int32)
        self._indptr = np.concatenate([[0], np.cumsum(np.bincount(unique // nf, minlength=nf))]).astype(np.int32)
        self.n_free = nf

    def matrix_data(self, element_matrices: list[np.ndarray]) -> np.ndarray:
        """Values (nnz,) of the free-free block from element matrices (n_el, ne, ne) per group."""
        data = np.zeros(self.nnz)
        for Ke, pos, src in zip(element_matrices, self._entry_positions, self._entry_sources):
            data += np.bincount(pos, weights=Ke.reshape(-1)[src], minlength=self.nnz)
        return data

    def free_matrix(self, data: np.ndarray) -> sp.csc_matrix:
        """Free-free sparse matrix on the fixed pattern."""
        return sp.csc_matrix((data, self._indices, self._indptr), shape=(self.n_free, self.n_free))

    def vector(self, element_vectors: list[np.ndarray]) -> np.ndarray:
        """Global vector (n_dof,) from element vectors (n_el, ne) per group."""
        out = np.zeros(self.n_dof)
        for fe, ed in zip(element_vectors, self._edofs):
            out += np.bincount(ed.ravel(), weights=fe.ravel(), minlength=self.n_dof)
        return out

    def update(self, u: np.ndarray, du: np.ndarray) -> np.ndarray:
        """Configuration ``u`` moved by the increment ``du`` (n_dof,), as Newton's ``x + dx``.

        Translations and planar rotations add; spatial rotations compose (see :mod:`flexmb.rotations`).
        """
        return u + du

    def gather(self, u: np.ndarray) -> list[np.ndarray]:
        """Element DOF vectors (n_el, ne) per group from a global vector (n_dof,)."""
        return [u[ed] for ed in self._edofs]

    # -------------------------------------------------------------------- mass
    def _build_mass(self) -> None:
        rows, cols, vals = [], [], []
        element_masses = [g.mass_matrix(X) for g, X in zip(self.groups, self._X)]  # (n_el, ne, ne) each
        for Me, ed in zip(element_masses, self._edofs):
            rows.append(np.repeat(ed, ed.shape[1], axis=1).ravel())
            cols.append(np.tile(ed, (1, ed.shape[1])).ravel())
            vals.append(Me.ravel())
        point = np.zeros(self.n_dof)
        for node, mass, inertia in self.model.point_masses:
            point[self.dofs.translations()[node]] += mass
            if self.dofs.has_rotations[node]:
                first_rot = self.dofs.first[node] + self.model.dim
                n_rot = 1 if self.model.dim == 2 else 3
                point[first_rot:first_rot + n_rot] += inertia
        nd = self.n_dof
        self.mass = (sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                                   shape=(nd, nd)) + sp.diags(point)).tocsr()
        self.mass_data = self.matrix_data(element_masses)
        self.mass_data[self._diag_positions] += point[self.dofs.free]

    # ----------------------------------------------------------------- physics
    def internal_force(self, u: np.ndarray) -> np.ndarray:
        """Internal force q(u) (n_dof,)."""
        return self.vector([g.internal_force(X, ue) for g, X, ue in zip(self.groups, self._X, self.gather(u))])

    def force_and_tangent(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Internal force (n_dof,) and tangent data (nnz,) of the free-free block."""
        out = [g.force_and_tangent(X, ue) for g, X, ue in zip(self.groups, self._X, self.gather(u))]
        return self.vector([o[0] for o in out]), self.matrix_data([o[1] for o in out])

    def mid_point_force_and_tangent(self, u0: np.ndarray, u1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Energy-conserving mid-point force (n_dof,) and its derivative w.r.t. u1 (nnz,)."""
        out = [g.mid_point_force_and_tangent(X, a, b)
               for g, X, a, b in zip(self.groups, self._X, self.gather(u0), self.gather(u1))]
        return self.vector([o[0] for o in out]), self.matrix_data([o[1] for o in out])

    def strain_energy(self, u: np.ndarray) -> float:
        """Total strain energy (J)."""
        return float(sum(g.strain_energy(X, ue).sum() for g, X, ue in zip(self.groups, self._X, self.gather(u))))

    def axial_strains(self, u: np.ndarray) -> np.ndarray:
        """Axial strains of all elements of all groups, concatenated (n_el_total,)."""
        return np.concatenate([g.axial_strain(X, ue) for g, X, ue in zip(self.groups, self._X, self.gather(u))])

    def external_force(self, t: float, statics: bool = False) -> np.ndarray:
        """Nodal loads and gravity at time t (or load factor t in statics), (n_dof,)."""
        f = self.mass @ self._gravity_field * (t if statics else 1.0)
        for i, load in self._load_slots:
            f[i] += load.at(t, statics)
        return f

    def prescribed_values(self, t: float, statics: bool = False) -> np.ndarray:
        """Values of the prescribed DOFs (n_p,) in the order of ``dofs.prescribed``."""
        values = np.zeros(self.dofs.prescribed.size)
        for i, pv in self._prescribed_slots:
            values[i] = pv.at(t, statics)
        return values

    def prescribed_velocities(self, t: float, h: float = 1e-6) -> np.ndarray:
        """Velocities of the prescribed DOFs (n_p,) by a central difference of their functions (m/s)."""
        return (self.prescribed_values(t + h) - self.prescribed_values(t - h)) / (2.0 * h)

    # ------------------------------------------------------ energy, momentum
    def kinetic_energy(self, v: np.ndarray) -> float:
        return 0.5 * float(v @ (self.mass @ v))

    def positions(self, u: np.ndarray) -> np.ndarray:
        """Current nodal positions (n_nodes, dim)."""
        return self.model.coordinates + u[self.dofs.translations()]

    def angular_momentum(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Angular momentum about the origin: (1,) in 2D, (3,) in 3D, kg m^2/s."""
        p = self.mass @ v
        x = self.positions(u)
        pt = p[self.dofs.translations()]                                   # (n_nodes, dim)
        rot = self.dofs.first[self.dofs.has_rotations] + self.model.dim
        if self.model.dim == 2:
            L = np.array([np.sum(x[:, 0] * pt[:, 1] - x[:, 1] * pt[:, 0]) + p[rot].sum()])
        else:
            L = np.cross(x, pt).sum(axis=0)
            for k in range(3):
                L[k] += p[rot + k].sum()
        return L
