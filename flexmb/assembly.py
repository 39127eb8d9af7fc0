"""Sparse assembly: the only place that knows the DOF map.

The sparsity pattern of the free-free block (CSC) is computed once per model, with the
position of every element-matrix entry in its data array; each Newton iteration then only
refills the values, one compiled scatter per element group (:mod:`flexmb.compiled.scatter`),
and the Jacobian handed to Newton is one CSC matrix object whose data array is swapped
(:meth:`Assembly.jacobian_matrix`), not a new scipy.sparse object per iteration. Vectors are
assembled over all DOFs, so reactions at prescribed DOFs come out of the same residual.

Spatial rotations (3D nodes with rotations): the DOF vector holds each node's rotation vector;
increments are spins composed on the left (:meth:`Assembly.update`), or Cayley parameters for
the mid-point scheme (:meth:`Assembly.cayley_update`). Their rotary inertia is kept per node as
a tensor in the reference orientation (``rotary_inertia``), outside the constant mass matrix,
because it turns with the node.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np
import scipy.sparse as sp

from flexmb.checks import check_joint_only_nodes
from flexmb.dofs import DofMap
from flexmb.model import ROTATION_NAMES, LoadShare, Model, ModelError, SharedLoadFunction
from flexmb.multibody.constraints import ConstraintSystem
from flexmb.rotations import (cayley_between, cayley_compose, cayley_from_matrix, compose, exp_map, rotated_inertia,
                              skew)


#: the compiled scatter, sparse products and cubic-mass sums (:mod:`flexmb.compiled.scatter`,
#: :mod:`flexmb.compiled.sparse_ops`, :mod:`flexmb.compiled.hermite_mass2d`): imported with the
#: first Assembly, so that ``import flexmb`` does not import numba and the methods called per
#: Newton iteration find them without an import
_scatter = _sparse_ops = _hermite_mass = None
#: an empty float array: the unused arguments of compiled calls
_EMPTY = np.zeros(0)


def _import_compiled() -> None:
    global _scatter, _sparse_ops, _hermite_mass
    if _scatter is None:
        from flexmb.compiled import hermite_mass2d, scatter, sparse_ops

        _scatter, _sparse_ops, _hermite_mass = scatter, sparse_ops, hermite_mass2d


def _node_blocks(first: np.ndarray, per_node: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Global (row, column) index pairs of every node's own DOF block, flattened."""
    rows, cols = [], []
    for k in np.unique(per_node):                   # a few distinct block sizes
        nodes = np.flatnonzero(per_node == k)
        idx = first[nodes][:, None] + np.arange(k)[None, :]                  # (n, k)
        rows.append(np.repeat(idx, k, axis=1).ravel())
        cols.append(np.tile(idx, (1, k)).ravel())
    return np.concatenate(rows or [np.zeros(0, np.int64)]), np.concatenate(cols or [np.zeros(0, np.int64)])


def _outputs_and_energy_sum(group, X: np.ndarray, ue: np.ndarray) -> tuple[dict[str, np.ndarray], float]:
    """A group's element outputs and the sum of its elements' strain energies (J)."""
    outputs, energy = group.outputs_and_strain_energy(X, ue)
    return outputs, energy.sum()


class Assembly:
    """Model -> DOF map -> batched kernels -> global vectors and sparse matrices."""

    def __init__(self, model: Model) -> None:
        _import_compiled()
        self.model = model
        self.dofs = DofMap(model)
        self.groups = list(model.groups)
        self.n_dof = self.dofs.n_dof
        self._X = [model.coordinates[g.connectivity] for g in self.groups]   # (n_el, nn, dim) each
        self._edofs = [self.dofs.element_dofs(g) for g in self.groups]       # (n_el, ne) each
        self._build_pattern()
        self._setup_rotations()
        self._build_mass()
        # prescribed values and loads: the constant ones are summed once here, only functions of
        # time are called per step (a clamp or a constant force costs nothing in the step loop)
        slots = [(int(np.searchsorted(self.dofs.prescribed, self.dofs.index(n, d))), pv)
                 for (n, d), pv in model.prescribed.items()]
        self._prescribed_functions = [(i, pv) for i, pv in slots if callable(pv.value)]
        self._prescribed_constants = np.zeros(self.dofs.prescribed.size)     # (n_p,) at load factor / time 1
        for i, pv in slots:
            if not callable(pv.value):
                self._prescribed_constants[i] = pv.at(1.0, statics=True)
        load_slots = [(self.dofs.index(ld.node, ld.dof), ld) for ld in model.loads]
        # the shares of a distributed load given as one function (a pressure p(t)) are added as one
        # vector per call of that function, not one Python call per node
        shared: dict[int, tuple[SharedLoadFunction, list[int], list[float], list[int]]] = {}
        for i, ld in load_slots:
            if isinstance(ld.value, LoadShare):
                group = shared.setdefault(id(ld.value.shared), (ld.value.shared, [], [], []))
                group[1].append(i)
                group[2].append(ld.value.coefficient)
                group[3].append(ld.value.component)
        #: (function, DOFs, coefficients, components) of each distributed load given as a function
        self._shared_loads = [(fn, np.array(rows, dtype=np.int64), np.array(coefs), np.array(comps, dtype=np.int64))
                              for fn, rows, coefs, comps in shared.values()]
        self._load_functions = [(i, ld) for i, ld in load_slots
                                if callable(ld.value) and not isinstance(ld.value, LoadShare)]
        gravity_field = np.zeros(self.n_dof)
        gravity_field[self.dofs.translations()] = model.gravity[None, :]
        #: the constant dead loads (n_dof,): the weight of the constant mass M g and the constant
        #: nodal loads, N and N m (in statics at load factor 1)
        self._constant_loads = self.mass @ gravity_field
        for i, ld in load_slots:
            if not callable(ld.value):
                self._constant_loads[i] += ld.at(1.0, statics=True)
        self._mid_point_dead_loads: tuple[tuple[float, float], np.ndarray] | None = None
        #: mask (n_p,) of the prescribed DOFs that a time step sets to their prescribed value: all
        #: but spatial rotations, which can only be fixed and stay so through zero spins
        self.prescribed_by_value = ~np.isin(self.dofs.prescribed, self.rotation_dofs)
        #: the model's characteristic length (m), the length scale of Newton's tolerances
        self.characteristic_length = model.characteristic_length
        #: the joints' constraint equations, None without joints
        self.constraints = ConstraintSystem(model.joints, self.dofs, model.ties) if model.joints or model.ties else None
        check_joint_only_nodes(self)
        #: (group index, kernels) of the groups with a configuration-dependent mass
        self.configuration_masses = [(i, k) for i, (g, X) in enumerate(zip(self.groups, self._X))
                                     if (k := g.configuration_mass(X)) is not None]
        # their weight is not in the constant mass matrix: it is a configuration-dependent load
        self._weighed_configuration_masses = bool(self.configuration_masses) and bool(np.any(model.gravity))
        self._reference_configuration_mass: np.ndarray | None = None    # configuration_mass_data at u = 0
        self._setup_directors()
        self._setup_modal_frames()
        self._setup_fused_groups()
        #: the rotation DOFs (rz) of the planar nodes that have one (n_r,), empty in 3D
        self.planar_rotations = (self.dofs.first[self.dofs.has_rotations] + 2 if model.dim == 2
                                 else np.zeros(0, dtype=np.int64))

    def set_time(self, t: float, statics: bool = False) -> None:
        """Set the time (s; in statics the load factor) at which the groups whose forces depend on it
        (:attr:`ElementGroup.time_dependent`: user forces) are evaluated next: the element kernels
        take no time, so the schemes, statics and linearization set it before they evaluate the model.
        With ``statics`` t is a load factor that also scales the constant applied loads inside
        element groups (:attr:`ElementGroup.proportional_load`), as it scales nodal loads."""
        for g in self.groups:
            if g.time_dependent:
                g.time = float(t)
            if g.proportional_load:
                g.load_factor = float(t) if statics else 1.0

    @property
    def damped_groups(self) -> list[int]:
        """Indices of the groups with damping forces (:attr:`ElementGroup.damped`)."""
        return [i for i, g in enumerate(self.groups) if g.damped]

    def mid_point_damping(self, u0: np.ndarray, u1: np.ndarray, dt: float, data: np.ndarray | None = None
                          ) -> np.ndarray:
        """Damping force over a mid-point step (n_dof,) (:meth:`ElementGroup.mid_point_damping`);
        with ``data`` (nnz,) its derivative w.r.t. the step increment is added into it."""
        q = np.zeros(self.n_dof)
        for i in self.damped_groups:
            ed = self._edofs[i]
            f, K = self.groups[i].mid_point_damping(self._X[i], u0[ed], u1[ed], dt, data is not None)
            self._add_group_vector(q, i, f)
            if data is not None:
                self._add_group_matrix_data(data, i, K)
        return q

    def damping_force(self, u: np.ndarray, v: np.ndarray, dv_du: float = 0.0, data: np.ndarray | None = None
                      ) -> np.ndarray:
        """Damping force at the state (u, v) (n_dof,); with ``data`` (nnz,) its derivative along a
        scheme with dv = dv_du du is added into it (:meth:`ElementGroup.damping_force`)."""
        q = np.zeros(self.n_dof)
        for i in self.damped_groups:
            ed = self._edofs[i]
            f, K = self.groups[i].damping_force(self._X[i], u[ed], v[ed], dv_du, data is not None)
            self._add_group_vector(q, i, f)
            if data is not None:
                self._add_group_matrix_data(data, i, K)
        return q

    @property
    def configuration_loads(self) -> bool:
        """Whether a load depends on the configuration: follower and semi-tangential loads, or the
        weight of a configuration-dependent (cubic) mass."""
        return bool(self._vector_loads) or self._weighed_configuration_masses

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
        # every node's own block (rigid bodies' rotary inertia couples a node's rotations
        # without any element at the node)
        per_node = np.diff(np.append(self.dofs.first, self.dofs.n_node_dofs))
        r, c = _node_blocks(self.dofs.first, per_node)
        fr, fc = fpos[r], fpos[c]
        ok = (fr >= 0) & (fc >= 0)
        all_keys = np.concatenate(keys + [diag * nf + diag, fc[ok] * nf + fr[ok]])
        unique, inverse = np.unique(all_keys, return_inverse=True)
        splits = np.cumsum([k.size for k in keys])
        #: per group: the data index of every element-matrix entry, (n_el, ne, ne), -1 where its
        #: row or column is prescribed (the compiled scatter's map)
        self._entry_maps = []
        for ed, src, pos in zip(self._edofs, sources, np.split(inverse, splits)[:-1]):
            entry_map = np.full(ed.shape[0] * ed.shape[1] ** 2, -1, dtype=np.int64)
            entry_map[src] = pos
            self._entry_maps.append(entry_map.reshape(ed.shape + ed.shape[1:]))
        first_diag = splits[-1] if len(splits) else 0
        self._diag_positions = inverse[first_diag:first_diag + nf]
        self.nnz = unique.size
        self._keys = unique
        self._indices = (unique % nf).astype(np.int32)
        self._indptr = np.concatenate([[0], np.cumsum(np.bincount(unique // nf, minlength=nf))]).astype(np.int32)
        #: the CSC pattern of the free-free block: column pointers (n_free + 1,) and row indices (nnz,)
        self.pattern_indptr, self.pattern_indices = self._indptr, self._indices
        self.n_free = nf
        self._jacobian: sp.csc_matrix | None = None

    def matrix_data(self, element_matrices: list[np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
        """Values (nnz,) of the free-free block from element matrices (n_el, ne, ne) per group;
        with ``out`` (nnz,) they are added into it (e.g. onto a scheme's mass term), which is
        returned."""
        data = np.zeros(self.nnz) if out is None else out
        for Ke, entry_map in zip(element_matrices, self._entry_maps):
            _scatter.scatter_matrix(data, Ke, entry_map)
        return data

    def reference_matrix_data(self, element_matrices: list[np.ndarray]) -> np.ndarray:
        """Reference of :meth:`matrix_data` (the specification the compiled scatter is tested
        against): one ``np.bincount`` per group over the entries that lie in the pattern."""
        data = np.zeros(self.nnz)
        for Ke, entry_map in zip(element_matrices, self._entry_maps):
            valid = entry_map.ravel() >= 0
            data += np.bincount(entry_map.ravel()[valid], weights=Ke.reshape(-1)[valid], minlength=self.nnz)
        return data

    def block_data(self, rows: np.ndarray, cols: np.ndarray, blocks: np.ndarray) -> np.ndarray:
        """Values (nnz,) from blocks (k, a, b) at global DOFs rows (k, a) x cols (k, b).

        Entries at prescribed DOFs are dropped; every other entry must lie in the pattern
        (blocks coupling DOFs of the same element).
        """
        fpos = self.dofs.free_position
        r = np.broadcast_to(fpos[rows][:, :, None], blocks.shape).ravel()
        c = np.broadcast_to(fpos[cols][:, None, :], blocks.shape).ravel()
        valid = (r >= 0) & (c >= 0)
        keys = c[valid] * self.n_free + r[valid]
        pos = np.searchsorted(self._keys, keys)
        if np.any(self._keys[np.minimum(pos, self.nnz - 1)] != keys):
            raise ValueError("block_data: an entry lies outside the sparsity pattern")
        return np.bincount(pos, weights=blocks.ravel()[valid], minlength=self.nnz)

    def add_director_diagonal(self, data: np.ndarray, values: np.ndarray) -> None:
        """Add ``values`` (n_d,) to the diagonal entries of the director DOFs (:attr:`director_dofs`)
        in the data array (nnz,), prescribed ones dropped."""
        data[self.director_diagonal] += values[self.director_free]

    def free_matrix(self, data: np.ndarray) -> sp.csc_matrix:
        """Free-free sparse matrix on the fixed pattern (a new object)."""
        return sp.csc_matrix((data, self._indices, self._indptr), shape=(self.n_free, self.n_free))

    def jacobian_matrix(self, data: np.ndarray) -> sp.csc_matrix:
        """The free-free matrix with values ``data`` (nnz,) as one CSC object kept by the
        assembly: only its data array is replaced (building a scipy.sparse matrix checks its
        arrays and costs more than a small model's whole Newton iteration). The object changes
        with the next call; copy it to keep it."""
        if self._jacobian is None:
            self._jacobian = self.free_matrix(data)
        self._jacobian.data = data
        return self._jacobian

    def vector(self, element_vectors: list[np.ndarray]) -> np.ndarray:
        """Global vector (n_dof,) from element vectors (n_el, ne) per group."""
        out = np.zeros(self.n_dof)
        for fe, ed in zip(element_vectors, self._edofs):
            _scatter.scatter_vector(out, fe, ed)
        return out

    # -------------------------------------------------------- spatial rotations
    def _setup_rotations(self) -> None:
        model = self.model
        nodes = np.flatnonzero(self.dofs.has_rotations) if model.dim == 3 else np.zeros(0, dtype=np.int64)
        #: nodes with spatial rotations (n_r,) and their rotation DOFs (n_r, 3)
        self.rotation_nodes = nodes
        self.rotation_dofs = (self.dofs.first[nodes][:, None] + 3 + np.arange(3)[None, :]).astype(np.int64)
        row = np.full(model.n_nodes, -1)
        row[nodes] = np.arange(nodes.size)
        self._rotation_row = row
        for (node, dof), pv in model.prescribed.items():
            if model.dim == 3 and dof in ROTATION_NAMES[3] and (callable(pv.value) or pv.value != 0.0):
                raise ModelError(f"prescribed rotation {dof} of node {node}: spatial rotations can only "
                                 "be fixed (value 0) in this version")
        self._vector_loads = []
        for load in model.vector_loads:
            if row[load.node] < 0:
                raise ModelError(f"{load.kind} load at node {load.node}: the node has no rotation to "
                                 "follow (attach a beam to it)")
            self._vector_loads.append(load)

    def update(self, u: np.ndarray, du: np.ndarray) -> np.ndarray:
        """Configuration ``u`` moved by the increment ``du`` (n_dof,), as Newton's ``x + dx``.

        Translations and planar rotations add; spatial rotations compose with ``du`` as a spin,
        ``R <- exp(hat(du)) R`` (tangents are derivatives with respect to spins).
        """
        out = u + du
        rd = self.rotation_dofs
        if rd.size:
            out[rd] = compose(du[rd], u[rd])
        return out

    def cayley_update(self, u0: np.ndarray, d: np.ndarray) -> np.ndarray:
        """End-of-step configuration from the step increment d: ``R_{n+1} = cay(d_rot) R_n``."""
        out = u0 + d
        rd = self.rotation_dofs
        if rd.size:
            out[rd] = cayley_compose(d[rd], u0[rd])
        return out

    def cayley_increment(self, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        """Step increment d with ``u1 = cayley_update(u0, d)`` (rotation steps below a half turn)."""
        d = u1 - u0
        rd = self.rotation_dofs
        if rd.size:
            d[rd] = cayley_between(u0[rd], u1[rd])
        return d

    def rotation_matrices(self, u: np.ndarray) -> np.ndarray:
        """Rotation matrices (n_r, 3, 3) of the nodes with spatial rotations."""
        return exp_map(u[self.rotation_dofs])

    def rotary_block_data(self, blocks: np.ndarray) -> np.ndarray:
        """Values (nnz,) of 3x3 blocks (n_r, 3, 3) on the rotation DOFs of each rotating node."""
        rd = self.rotation_dofs
        if not rd.size:
            return np.zeros(self.nnz)
        if getattr(self, "_rotary_slots", None) is None:
            # data position of every kept block entry, found once as in :meth:`block_data`
            fpos = self.dofs.free_position
            r = np.broadcast_to(fpos[rd][:, :, None], blocks.shape).ravel()
            c = np.broadcast_to(fpos[rd][:, None, :], blocks.shape).ravel()
            entries = np.flatnonzero((r >= 0) & (c >= 0))
            self._rotary_slots = (np.searchsorted(self._keys, c[entries] * self.n_free + r[entries]), entries)
        positions, entries = self._rotary_slots
        return np.bincount(positions, weights=blocks.ravel()[entries], minlength=self.nnz)

    def gather(self, u: np.ndarray) -> list[np.ndarray]:
        """Element DOF vectors (n_el, ne) per group from a global vector (n_dof,)."""
        return [u[ed] for ed in self._edofs]

    def _setup_modal_frames(self) -> None:
        """The groups whose kernels own the velocity rule of their nodes' spatial rotations (3D modal
        bodies: :meth:`~flexmb.cms.floating_frame3d.FloatingFrameMass3D.mid_point_velocity`), with
        those rotation DOFs (n_el, 3) each. Their inertia is the kernels' alone: another rotary
        inertia at such a node (a rigid body, a beam's rho_I) would follow the rule of ordinary
        rotating nodes, and the step's kinetic energy balance would not close."""
        #: (group index, kernels, rotation DOFs (n_el, 3)) of the 3D modal bodies
        self.modal_frames = []
        for i, kernels in self.configuration_masses:
            if not hasattr(kernels, "mid_point_velocity"):
                continue
            nodes = self.groups[i].connectivity[:, 0]
            J = self.rotary_inertia[self._rotation_row[nodes]]
            if np.any(J):
                node = int(nodes[np.flatnonzero(np.abs(J).reshape(len(nodes), -1).max(axis=1))[0]])
                raise ModelError(f"node {node}: it carries the frame of the 3D modal body {self.groups[i].name!r} and "
                                 "rotary inertia (a rigid body, a point inertia or a beam's rho_I there); connect "
                                 "that to the body through a joint at another node, or to its frame node without "
                                 "rotary inertia")
            self.modal_frames.append((i, kernels, self.dofs.first[nodes][:, None] + 3 + np.arange(3)))

    def set_modal_frame_velocities(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, dt: float,
                                   v1: np.ndarray) -> None:
        """Overwrite the mid-point end velocities v1 (n_dof,) at the frame rotations of 3D modal bodies
        with their own rule (:meth:`_setup_modal_frames`)."""
        for i, kernels, rot in self.modal_frames:
            ed = self._edofs[i]
            v1[rot] = kernels.mid_point_velocity(u0[ed], u1[ed], v0[ed], dt)[:, 3:6]

    def _setup_directors(self) -> None:
        """Rotation DOFs of the nodes of cubic-mass (director) elements and their constant rotary
        inertia: the mid-point scheme integrates their inertia in director form, with a stretch
        rate per DOF (:mod:`flexmb.elements.hermite_mass2d`)."""
        from flexmb.elements.hermite_mass2d import HermiteMass2D

        cubic = [i for i, k in self.configuration_masses if type(k) is HermiteMass2D]
        nodes = np.unique(np.concatenate([self.groups[i].connectivity.ravel() for i in cubic]
                                         or [np.zeros(0, dtype=np.int64)]))
        #: rotation DOFs of the nodes of cubic-mass elements (n_d,)
        self.director_dofs = (self.dofs.first[nodes] + 2).astype(np.int64)
        M = self.mass[self.director_dofs] if nodes.size else None
        if M is not None and M.nnz != np.count_nonzero(M[:, self.director_dofs].diagonal()):
            raise ModelError("a mass couples the rotation of a node of a cubic-mass beam with other DOFs; "
                             "the director form of the mid-point inertia needs a diagonal rotary inertia there")
        #: their constant rotary inertia (n_d,), kg m^2 (beams' rho_I, point inertias, bodies)
        self.director_inertia = self.mass.diagonal()[self.director_dofs]
        fp = self.dofs.free_position[self.director_dofs]
        #: which director DOFs are free (n_d,), and the data positions (n_df,) of their diagonal entries
        self.director_free = fp >= 0
        self.director_diagonal = self._diag_positions[fp[self.director_free]]
        # per cubic-mass group: the rotation DOFs of its elements' nodes (n_el, 2)
        self._director_columns = {i: self._edofs[i][:, [2, 5]] for i in cubic}

    # -------------------------------------------------------------------- mass
    def _build_mass(self) -> None:
        rows, cols, vals = [], [], []
        element_masses = [g.mass_matrix(X) for g, X in zip(self.groups, self._X)]  # (n_el, ne, ne) each
        for Me, ed in zip(element_masses, self._edofs):
            rows.append(np.repeat(ed, ed.shape[1], axis=1).ravel())
            cols.append(np.tile(ed, (1, ed.shape[1])).ravel())
            vals.append(Me.ravel())
        point = np.zeros(self.n_dof)
        #: rotary inertia of the rotating 3D nodes in their reference orientation (n_r, 3, 3), kg m^2
        self.rotary_inertia = np.zeros((self.rotation_nodes.size, 3, 3))
        for g, X in zip(self.groups, self._X):
            if hasattr(g, "rotary_inertia"):
                np.add.at(self.rotary_inertia, self._rotation_row[g.connectivity], g.rotary_inertia(X))
        masses = [(node, mass, inertia * (np.eye(3) if self.model.dim == 3 else 1.0))
                  for node, mass, inertia in self.model.point_masses]
        masses += [(b.node, b.mass, b.inertia) for b in self.model.bodies]
        for node, mass, inertia in masses:
            point[self.dofs.translations()[node]] += mass
            if self.dofs.has_rotations[node]:
                if self.model.dim == 2:
                    point[self.dofs.first[node] + 2] += inertia
                else:
                    self.rotary_inertia[self._rotation_row[node]] += inertia
        nd = self.n_dof
        empty = [np.zeros(0, dtype=np.int64)]                              # a model of bodies only
        self.mass = (sp.coo_matrix((np.concatenate(vals + empty), (np.concatenate(rows + empty),
                                    np.concatenate(cols + empty))), shape=(nd, nd)) + sp.diags(point)).tocsr()
        self.mass_data = self.matrix_data(element_masses)
        self.mass_data[self._diag_positions] += point[self.dofs.free]

    @cached_property
    def round_off_lengths(self) -> np.ndarray:
        """Size of every DOF beyond its value (n_dof,; m at translations, rad at rotations): the
        largest extent of the elements at the node (the largest distance between two nodes of one
        of them) at its translations, 1 rad at rotations, zero at internal DOFs. Element kernels
        form their strains from edge vectors, whose round-off is eps times these lengths; Newton's
        round-off test (:func:`flexmb.integrators.newton.at_round_off`) compares its corrections
        with them. Translation-invariant, and independent of where the model sits."""
        lengths = np.zeros(self.dofs.n_dof)
        extent = np.zeros(self.model.n_nodes)                                  # (n_nodes,), m
        for g, X in zip(self.groups, self._X):
            if X.shape[1] < 2:
                continue
            span = np.linalg.norm(X[:, :, None, :] - X[:, None, :, :], axis=-1).max(axis=(1, 2))   # (n_el,)
            np.maximum.at(extent, g.connectivity, span[:, None])
        lengths[:self.dofs.n_node_dofs] = 1.0                    # the nodes' rotations; translations next
        lengths[self.dofs.translations()] = extent[:, None]
        return lengths

    @cached_property
    def free_planar_rotations(self) -> np.ndarray:
        """The positions among the free DOFs (Newton's unknowns) of the free planar rotations
        (n,): the corrections a time step caps (``MAX_ROTATION_CORRECTION``)."""
        at = self.dofs.free_position[self.planar_rotations]
        return at[at >= 0]

    @cached_property
    def inertia_at_every_free_dof(self) -> bool:
        """Whether every free DOF has inertia of its own at the reference state u = 0: the diagonal
        of the mass on the free DOFs (the constant, the configuration-dependent and the rotary
        inertia, as :func:`flexmb.analysis.diagnostics.inertia_matrix` sums them) is positive.
        Computed once: every time integration asks at its start."""
        zero = np.zeros(self.n_dof)
        data = self.mass_data.copy()
        if self.configuration_masses:
            data = data + self.configuration_mass_data(zero)
        if self.rotation_nodes.size:
            data = data + self.rotary_block_data(self.spatial_inertia(zero))
        return bool(np.all(data[self._diag_positions] > 0.0))

    @cached_property
    def inertia_scale(self) -> float:
        """The largest nodal mass, or rotary inertia over the characteristic length squared (kg);
        1 for a massless model: a model at rest under no force has the force scale of this times
        L / dt^2 (see :func:`flexmb.integrators.time_stepping._step`)."""
        L = self.characteristic_length
        largest = max(float(np.abs(self.mass.diagonal()).max(initial=0.0)),
                      float(np.abs(self.rotary_inertia).max(initial=0.0)) / L**2)
        # a modal body's mass is all configuration-dependent: its reference translational mass counts
        dim = self.model.dim
        for i, kernels in self.configuration_masses:
            if i not in self._director_columns:
                M0 = kernels.mass_matrix(np.zeros(self._edofs[i].shape))
                largest = max(largest, float(np.abs(np.diagonal(M0[:, :dim, :dim], axis1=1, axis2=2)).max()))
        return largest or 1.0

    def mass_times(self, v: np.ndarray) -> np.ndarray:
        """M v (n_dof,) with the constant mass matrix, v (n_dof,) (compiled CSR product)."""
        return _sparse_ops.csr_matvec(self.mass.indptr, self.mass.indices, self.mass.data, v)

    def free_norm(self, x: np.ndarray) -> float:
        """Euclidean norm of x (n_dof,) over the free DOFs."""
        from flexmb.compiled import kernel_array

        return float(_sparse_ops.free_norm(kernel_array(x), self.dofs.free))      # (x may be a kept, read-only one)

    def scaled_mass_data(self, factor: float) -> np.ndarray:
        """factor times the constant mass data (nnz,), a new array (a scheme's Jacobian starts
        from it and the element tangents are scattered onto it)."""
        return factor * self.mass_data

    # ----------------------------------------------------------------- physics
    def internal_force(self, u: np.ndarray) -> np.ndarray:
        """Internal force q(u) (n_dof,)."""
        return self.vector([g.internal_force(X, ue) for g, X, ue in zip(self.groups, self._X, self.gather(u))])

    def force_and_tangent(self, u: np.ndarray, out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Internal force (n_dof,) and tangent data (nnz,) of the free-free block (added into
        ``out`` (nnz,) if given)."""
        res = [g.force_and_tangent(X, ue) for g, X, ue in zip(self.groups, self._X, self.gather(u))]
        return self.vector([o[0] for o in res]), self.matrix_data([o[1] for o in res], out)

    def mid_point_force(self, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        """Energy-conserving mid-point force (n_dof,) alone (the elements' residual-only kernels)."""
        return self.vector([g.mid_point_force(X, a, b)
                            for g, X, a, b in zip(self.groups, self._X, self.gather(u0), self.gather(u1))])

    def mid_point_force_and_tangent(self, u0: np.ndarray, u1: np.ndarray, out: np.ndarray | None = None
                                    ) -> tuple[np.ndarray, np.ndarray]:
        """Energy-conserving mid-point force (n_dof,) and its derivative w.r.t. u1 (nnz,) (added
        into ``out`` (nnz,) if given)."""
        res = [g.mid_point_force_and_tangent(X, a, b)
               for g, X, a, b in zip(self.groups, self._X, self.gather(u0), self.gather(u1))]
        return self.vector([o[0] for o in res]), self.matrix_data([o[1] for o in res], out)

    def static_residual(self, u: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray, float]:
        """Statics at load factor lam: ``r = q(u) - f(lam, u)`` (n_dof,), dr/du data (nnz,) and the
        force scale max(``|q_free|``, ``|f_free|``) (N); includes the stiffness of follower loads."""
        self.set_time(lam, statics=True)
        q, k_data = self.force_and_tangent(u)
        f = self.external_force(lam, statics=True, u=u)
        if self.configuration_loads:
            k_data = k_data - self.load_stiffness_data(u, lam, statics=True)
        free = self.dofs.free
        scale = max(float(np.linalg.norm(q[free])), float(np.linalg.norm(f[free])))
        # user forces are inside q: at equilibrium they cancel the elastic forces there, so their own
        # size is a force scale too (a model loaded by user forces alone has q -> 0)
        applied = [i for i, g in enumerate(self.groups) if g.time_dependent or g.proportional_load]
        if applied:
            q_user = np.zeros(self.n_dof)
            for i in applied:
                self._add_group_vector(q_user, i, self.groups[i].internal_force(self._X[i], u[self._edofs[i]]))
            scale = max(scale, float(np.linalg.norm(q_user[free])))
        return q - f, k_data, scale

    def stresses(self, u: np.ndarray) -> list[np.ndarray]:
        """Generalized stresses per group, (n_el, n_s) each (see each element's docstring)."""
        return [g.generalized_stresses(X, ue) for g, X, ue in zip(self.groups, self._X, self.gather(u))]

    def element_outputs(self, u: np.ndarray) -> list[dict[str, np.ndarray]]:
        """Section forces and strains per group (name -> (n_el,)), see ``element_outputs`` of each element."""
        return [g.element_outputs(X, ue) for g, X, ue in zip(self.groups, self._X, self.gather(u))]

    def geometric_stiffness_data(self, u: np.ndarray, stresses: list[np.ndarray]) -> np.ndarray:
        """Free-free data (nnz,) of the geometric stiffness at u for given stresses per group."""
        return self.matrix_data([g.geometric_stiffness(X, ue, s) for g, X, ue, s
                                 in zip(self.groups, self._X, self.gather(u), stresses)])

    def outputs_and_strain_energy(self, u: np.ndarray) -> tuple[list[dict[str, np.ndarray]], float]:
        """:meth:`element_outputs` and :meth:`strain_energy` at once, each group's section state
        computed once (what a time step records); the same values and sum."""
        both = self.group_outputs_and_strain_energies(u, self.groups)
        return [outputs for outputs, _ in both], float(sum(energy for _, energy in both))

    def group_outputs_and_strain_energies(self, u: np.ndarray, groups: list
                                          ) -> list[tuple[dict[str, np.ndarray], float] | None]:
        """Per group its element outputs (name -> (n_el,)) and strain energy (J) at u (n_dof,),
        evaluated with ``groups[i]`` in the place of group i (the group itself, or a copy that
        keeps the section properties a finished run had); None for a group given as None. The
        strain energy of the model is the sum of the energies in group order."""
        return [None if g is None else _outputs_and_energy_sum(g, X, u[ed])
                for g, X, ed in zip(groups, self._X, self._edofs)]

    def strain_energy(self, u: np.ndarray) -> float:
        """Total strain energy (J)."""
        return float(sum(g.strain_energy(X, ue).sum() for g, X, ue in zip(self.groups, self._X, self.gather(u))))

    def axial_strains(self, u: np.ndarray) -> np.ndarray:
        """Axial strains of all elements of all groups, concatenated (n_el_total,)."""
        return np.concatenate([g.axial_strain(X, ue) for g, X, ue in zip(self.groups, self._X, self.gather(u))])

    def external_force(self, t: float, statics: bool = False, u: np.ndarray | None = None) -> np.ndarray:
        """Nodal loads and gravity at time t (or load factor t in statics), (n_dof,).

        Loads that depend on the configuration (:attr:`configuration_loads`) need u.
        """
        f = self._dead_loads(t, statics)
        if self.configuration_loads:
            if u is None:
                raise ModelError("the model has configuration-dependent loads (follower or semi-tangential "
                                 "loads, or the weight of a cubic mass): external_force needs u")
            if self._weighed_configuration_masses:
                f += (t if statics else 1.0) * self._configuration_weight(u)
            for load, rows, _, value in self._vector_load_terms(u, t, statics):
                f[rows] += value
        return f

    def _dead_loads(self, t: float, statics: bool) -> np.ndarray:
        """Nodal loads and the weight of the constant mass (n_dof,), N and N m."""
        f = self._constant_loads * (t if statics else 1.0)
        for i, load in self._load_functions:
            f[i] += load.at(t, statics)
        for function, rows, coefficients, components in self._shared_loads:
            f[rows] += coefficients * function.at(t, statics)[components]      # one share per DOF
        return f

    def _configuration_weight(self, u: np.ndarray, tangent: bool = False):
        """Weight of the configuration-dependent masses at u (n_dof,), with ``tangent`` also its
        derivative w.r.t. u, data (nnz,)."""
        g = self.model.gravity
        f, data = np.zeros(self.n_dof), np.zeros(self.nnz)
        for i, kernels in self.configuration_masses:
            F, dF = kernels.gravity_force(u[self._edofs[i]], g)
            self._add_group_vector(f, i, F)
            if tangent:
                self._add_group_matrix_data(data, i, dF)
        return (f, data) if tangent else f

    def mid_point_external_force(self, t0: float, t1: float, u0: np.ndarray, u1: np.ndarray
                                 ) -> tuple[np.ndarray, np.ndarray | None]:
        """External force acting over a mid-point step (n_dof,): the average of the dead loads at
        t0 and t1 plus the exact discrete gradient of the weight of configuration-dependent masses
        (so its work over the step is exactly minus the change of their potential); and the latter's
        derivative w.r.t. u1, data (nnz,), or None when no load depends on the configuration."""
        if self._vector_loads:
            load = self._vector_loads[0]
            raise ModelError(f"{load.kind} load at node {load.node}: configuration-dependent nodal loads "
                             "are supported in statics and buckling only, not yet in time integration")
        # the same for every Newton iteration of a step: kept (read-only) for the step
        if self._mid_point_dead_loads is None or self._mid_point_dead_loads[0] != (t0, t1):
            dead = 0.5 * (self._dead_loads(t0, False) + self._dead_loads(t1, False))
            dead.flags.writeable = False
            self._mid_point_dead_loads = ((t0, t1), dead)
        f = self._mid_point_dead_loads[1]
        if not self._weighed_configuration_masses:
            return f, None
        f = f.copy()
        data = np.zeros(self.nnz)
        for i, kernels in self.configuration_masses:
            ed = self._edofs[i]
            F, dF = kernels.mid_point_gravity(u0[ed], u1[ed], self.model.gravity)
            self._add_group_vector(f, i, F)
            self._add_group_matrix_data(data, i, dF)
        return f, data

    def _vector_load_terms(self, u: np.ndarray, t: float, statics: bool):
        """(load, rows (3,), rotation DOFs (3,), spin-conjugate load vector (3,)) per vector load."""
        for load in self._vector_loads:
            rot = self.rotation_dofs[self._rotation_row[load.node]]
            R = exp_map(u[rot])
            v = load.at(t, statics)
            if load.kind == "follower-force":
                yield load, self.dofs.translations()[load.node], rot, R @ v
            elif load.kind == "follower-moment":
                yield load, rot, rot, R @ v
            else:
                c = cayley_from_matrix(R)
                yield load, rot, rot, v + 0.5 * np.cross(c, v) + 0.25 * c * (c @ v)

    def load_stiffness_data(self, u: np.ndarray, t: float, statics: bool = False) -> np.ndarray:
        """Derivative of the configuration-dependent loads w.r.t. u (spins at 3D rotations), data
        (nnz,): follower and semi-tangential loads, the weight of cubic masses."""
        data = np.zeros(self.nnz)
        if self._weighed_configuration_masses:
            data += (t if statics else 1.0) * self._configuration_weight(u, tangent=True)[1]
        rows, cols, blocks = [], [], []
        for load, r, rot, value in self._vector_load_terms(u, t, statics):
            if load.kind == "semi-tangential-moment":
                M = load.at(t, statics)
                c = cayley_from_matrix(exp_map(u[rot]))
                dc = np.eye(3) - 0.5 * skew(c) + 0.25 * np.outer(c, c)         # dc / dspin
                block = (-0.5 * skew(M) + 0.25 * (np.outer(c, M) + (c @ M) * np.eye(3))) @ dc
            else:
                block = -skew(value)                                           # d(R v)/dspin
            rows.append(r)
            cols.append(rot)
            blocks.append(block)
        if not blocks:
            return data
        return data + self.block_data(np.array(rows), np.array(cols), np.array(blocks))

    def prescribed_values(self, t: float, statics: bool = False) -> np.ndarray:
        """Values of the prescribed DOFs (n_p,) in the order of ``dofs.prescribed``."""
        values = self._prescribed_constants * (t if statics else 1.0)
        for i, pv in self._prescribed_functions:
            values[i] = pv.at(t, statics)
        return values

    def prescribed_velocities(self, t: float, h: float = 1e-6) -> np.ndarray:
        """Velocities of the prescribed DOFs (n_p,) by a central difference of their functions (m/s)."""
        return (self.prescribed_values(t + h) - self.prescribed_values(t - h)) / (2.0 * h)

    # ------------------------------------------------------ energy, momentum
    def spatial_inertia(self, u: np.ndarray) -> np.ndarray:
        """Rotary inertia of the rotating 3D nodes in the current orientation, R J R^T (n_r, 3, 3)."""
        return rotated_inertia(u[self.rotation_dofs], self.rotary_inertia)

    # ------------------------------------------- configuration-dependent mass
    def _add_group_vector(self, out: np.ndarray, i: int, fe: np.ndarray) -> None:
        """out (n_dof,) += the element vectors fe (n_el, ne) of group i."""
        _scatter.scatter_vector(out, fe, self._edofs[i])

    def _add_group_matrix_data(self, data: np.ndarray, i: int, Ke: np.ndarray) -> None:
        """data (nnz,) += the element matrices Ke (n_el, ne, ne) of group i."""
        _scatter.scatter_matrix(data, Ke, self._entry_maps[i])

    def _setup_fused_groups(self) -> None:
        """Per group, the constant arguments of its fused mid-point call
        (:func:`flexmb.compiled.mid_point_group.beam2d_mid_point`: planar beams, with their cubic
        mass), or None for the groups that take their own kernels."""
        from flexmb.elements.beam2d import Beam2D
        from flexmb.elements.hermite_mass2d import HermiteMass2D

        cubic = self._cubic_kernels = dict(self.configuration_masses)
        #: every configuration-dependent mass is a planar cubic mass (no spatial rotations): the
        #: recorded energy and momentum call its compiled sums directly
        self._planar_cubic = not self.rotation_nodes.size and bool(cubic) and all(
            type(k) is HermiteMass2D for k in cubic.values())
        #: per group: ((X, EA, EI, second_order, element DOFs, entry map), (cubic, alpha0, l0, mass))
        #: for the fused call, or None
        self.fused_groups: list[tuple | None] = []
        for i, (g, X) in enumerate(zip(self.groups, self._X)):
            k = cubic.get(i)
            if type(g) is not Beam2D or (k is not None and type(k) is not HermiteMass2D):
                self.fused_groups.append(None)
                continue
            mass_terms = (True, k.alpha0, k.l0, k.mass) if k is not None else (False, *(np.zeros(0),) * 3)
            self.fused_groups.append(((X, g.EA, g.EI, g.second_order, self._edofs[i], self._entry_maps[i]),
                                       mass_terms))

    def mid_point_forces_and_inertia(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray,
                                     stretch0: np.ndarray | None, dt: float, data: np.ndarray | None = None
                                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """:meth:`mid_point_force_and_tangent` and :meth:`mid_point_inertia` together, one compiled
        call per planar beam group (:mod:`flexmb.compiled.mid_point_group`): the mid-point force
        q_m (n_dof,), the inertia of the configuration-dependent masses f_c (n_dof,) and, with
        ``data`` (nnz,), dq_m/du1 added into data and df_c/du1 as a new array (nnz,) (else None).
        The sums run in the order of the separate methods, so the results are the same."""
        from flexmb.compiled.mid_point_group import beam2d_mid_point

        tangent = data is not None
        q_m, f_c = np.zeros(self.n_dof), np.zeros(self.n_dof)
        d_c = np.zeros(self.nnz) if tangent else None
        matrix_out = data if tangent else _EMPTY
        inertia_out = d_c if tangent else _EMPTY
        v0_in = _EMPTY if v0 is None else v0
        stretch_in = _EMPTY if stretch0 is None else stretch0
        cubic = self._cubic_kernels
        for i, fused in enumerate(self.fused_groups):
            if fused is not None:
                beam2d_mid_point(*fused[0], u0, u1, tangent, q_m, matrix_out, *fused[1], v0_in, stretch_in, dt,
                                 f_c, inertia_out)
                continue
            g, X, ed = self.groups[i], self._X[i], self._edofs[i]
            if tangent:
                q, K = g.mid_point_force_and_tangent(X, u0[ed], u1[ed])
                self._add_group_matrix_data(data, i, K)
            else:
                q = g.mid_point_force(X, u0[ed], u1[ed])
            self._add_group_vector(q_m, i, q)
            if i in cubic:
                F, J = cubic[i].mid_point_inertia(u0[ed], u1[ed], v0[ed], self._element_stretch(i, stretch0), dt,
                                                  tangent)
                if tangent:
                    self._add_group_matrix_data(d_c, i, J)
                self._add_group_vector(f_c, i, F)
        return q_m, f_c, d_c

    def _element_stretch(self, i: int, stretch: np.ndarray | None) -> np.ndarray | None:
        """The director stretch rates (n_el, 2) of cubic-mass group i from a global vector, None for
        other configuration-dependent masses (a modal body) or without ``stretch``."""
        columns = self._director_columns.get(i)
        return None if stretch is None or columns is None else stretch[columns]

    def mid_point_inertia(self, u0: np.ndarray, u1: np.ndarray, v0: np.ndarray, stretch0: np.ndarray, dt: float,
                          tangent: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Energy-conserving inertia force (n_dof,) of the configuration-dependent masses over a
        step (director form, with the stretch rates ``stretch0`` (n_dof,) at t_n, see
        :mod:`flexmb.elements.hermite_mass2d`) and its derivative w.r.t. u1, data (nnz,) (None
        without ``tangent``)."""
        f = np.zeros(self.n_dof)
        data = np.zeros(self.nnz) if tangent else None
        for i, kernels in self.configuration_masses:
            ed = self._edofs[i]
            F, J = kernels.mid_point_inertia(u0[ed], u1[ed], v0[ed], self._element_stretch(i, stretch0), dt, tangent)
            if tangent:
                self._add_group_matrix_data(data, i, J)
            self._add_group_vector(f, i, F)
        return f, data

    def end_point_inertia(self, u: np.ndarray, v: np.ndarray, a: np.ndarray, dv_du: float = 0.0, da_du: float = 0.0,
                          tangent: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
        """Lagrange inertia force M(u) a + (dp/du) v - dT/du (n_dof,) of the configuration-dependent
        masses and, with ``tangent``, its derivative along a scheme's kinematics (v, a moving with u
        at the rates dv_du, da_du), data (nnz,) (else None)."""
        f = np.zeros(self.n_dof)
        data = np.zeros(self.nnz) if tangent else None
        for i, kernels in self.configuration_masses:
            ed = self._edofs[i]
            F, J = kernels.end_point_inertia(u[ed], v[ed], a[ed], dv_du, da_du, tangent)
            self._add_group_vector(f, i, F)
            if tangent:
                self._add_group_matrix_data(data, i, J)
        return f, data

    def configuration_mass_data(self, u: np.ndarray) -> np.ndarray:
        """M(u) of the configuration-dependent masses, data (nnz,) (a new array). The one at the
        reference state u = 0, which every time integration's start check asks for, is computed
        once (the cubic mass's numpy matrix costs about 1 ms, a small model's whole run is 100 ms)."""
        reference = not u.any()
        if reference and self._reference_configuration_mass is not None:
            return self._reference_configuration_mass.copy()
        data = np.zeros(self.nnz)
        for i, kernels in self.configuration_masses:
            self._add_group_matrix_data(data, i, kernels.mass_matrix(u[self._edofs[i]]))
        if reference:
            self._reference_configuration_mass = data.copy()
        return data

    def mass_data_at(self, u: np.ndarray | None = None) -> np.ndarray:
        """The whole mass matrix about the state u (default: the reference state), data (nnz,) of
        the free-free block: the constant mass, the configuration-dependent (cubic) masses at u and
        the spatial rotary inertia R J R^T of the rotating 3D nodes (kg, kg m, kg m^2)."""
        u = np.zeros(self.n_dof) if u is None else u
        data = self.mass_data + self.configuration_mass_data(u)
        if self.rotation_nodes.size and np.any(self.rotary_inertia):
            data = data + self.rotary_block_data(self.spatial_inertia(u))
        return data

    def kinetic_energy(self, v: np.ndarray, u: np.ndarray | None = None, stretch: np.ndarray | None = None
                       ) -> float:
        """Kinetic energy (J); u is needed when 3D nodes carry rotary inertia or a mass depends
        on the configuration. ``stretch`` (n_dof,): the director stretch rates of the mid-point
        scheme's state (:attr:`director_dofs`), whose kinetic energy counts too."""
        rotary = bool(self.rotation_nodes.size and np.any(self.rotary_inertia))
        if u is None and self.configuration_masses:
            raise ValueError("kinetic_energy: the model has configuration-dependent masses, pass u")
        if u is None and rotary:
            raise ValueError("kinetic_energy: the model has spatial rotary inertia, pass u")
        return self._kinetic(v, stretch, *self._momentum_parts(u, v, stretch, rotary))

    def _momentum_parts(self, u: np.ndarray | None, v: np.ndarray, stretch: np.ndarray | None, rotary: bool
                        ) -> tuple[np.ndarray, list[tuple[float, np.ndarray]], np.ndarray | None]:
        """What the kinetic energy and the angular momentum share: the momenta M v (n_dof,), per
        configuration-dependent mass its kinetic energy (J) and angular momentum, and with
        ``rotary`` the spatial rotary inertia (n_r, 3, 3), else None."""
        masses = [k.energy_and_angular_momentum(u[ed], v[ed], self._element_stretch(i, stretch))
                  for i, k in self.configuration_masses for ed in (self._edofs[i],)]
        return self.mass_times(v), masses, self.spatial_inertia(u) if rotary else None

    def _kinetic(self, v: np.ndarray, stretch: np.ndarray | None, p: np.ndarray,
                 masses: list[tuple[float, np.ndarray]], inertia: np.ndarray | None) -> float:
        """Kinetic energy (J) from :meth:`_momentum_parts`."""
        T = 0.5 * float(v @ p)
        if self.configuration_masses:
            for T_k, _ in masses:
                T += T_k
            if stretch is not None:
                T += 0.5 * float(self.director_inertia @ stretch[self.director_dofs]**2)
        if self.rotation_nodes.size and np.any(self.rotary_inertia):
            w = v[self.rotation_dofs]
            T += 0.5 * float(np.einsum("ni,nij,nj->", w, inertia, w))
        return T

    def energy_and_momentum(self, u: np.ndarray, v: np.ndarray, stretch: np.ndarray | None = None
                            ) -> tuple[float, np.ndarray]:
        """:meth:`kinetic_energy` and :meth:`angular_momentum` together (recorded every step): the
        momenta M v and the cubic masses' sums are computed once for both; the same values."""
        if not self._planar_cubic:
            parts = self._momentum_parts(u, v, stretch, bool(self.rotation_nodes.size))
            return self._kinetic(v, stretch, *parts), self._angular(u, v, *parts)
        # ndarray.dot: the same products and sums as ``@`` of 1-D arrays (one dot kernel), without
        # the generalized ufunc's set-up, which costs more than these products
        p = self.mass_times(v)
        T = 0.5 * float(v.dot(p))
        tr = self.dofs.translations()
        x = self.model.coordinates + u[tr]
        pt = p[tr]                                                         # (n_nodes, 2)
        L = np.array([x[:, 0].dot(pt[:, 1]) - x[:, 1].dot(pt[:, 0]) + p[self.planar_rotations].sum()])
        for i, k in self.configuration_masses:
            # HermiteMass2D.energy_and_angular_momentum's kernel, called without its wrapper's import
            ed = self._edofs[i]
            s = np.zeros((len(ed), 2)) if stretch is None else stretch[self._director_columns[i]]
            T_k, L_k = _hermite_mass.energy_and_momentum(k.X, k.alpha0, k.l0, k.mass, u[ed], v[ed], s)
            T += T_k
            L += L_k
        if stretch is not None:
            T += 0.5 * float(self.director_inertia.dot(stretch[self.director_dofs]**2))
        return T, L

    def positions(self, u: np.ndarray) -> np.ndarray:
        """Current nodal positions (n_nodes, dim)."""
        return self.model.coordinates + u[self.dofs.translations()]

    def angular_momentum(self, u: np.ndarray, v: np.ndarray, stretch: np.ndarray | None = None) -> np.ndarray:
        """Angular momentum about the origin: (1,) in 2D, (3,) in 3D, kg m^2/s (``stretch`` as in
        :meth:`kinetic_energy`)."""
        return self._angular(u, v, *self._momentum_parts(u, v, stretch, bool(self.rotation_nodes.size)))

    def _angular(self, u: np.ndarray, v: np.ndarray, p: np.ndarray, masses: list[tuple[float, np.ndarray]],
                 inertia: np.ndarray | None) -> np.ndarray:
        """Angular momentum (1,) or (3,) from :meth:`_momentum_parts` (with the spatial inertia
        where 3D nodes rotate)."""
        tr = self.dofs.translations()
        x = self.model.coordinates + u[tr]
        pt = p[tr]                                                         # (n_nodes, dim)
        if self.model.dim == 2:
            L = np.array([x[:, 0] @ pt[:, 1] - x[:, 1] @ pt[:, 0] + p[self.planar_rotations].sum()])
        else:
            # sum of x x p, written out (np.cross costs more than the rest of this method)
            L = np.array([x[:, 1] @ pt[:, 2] - x[:, 2] @ pt[:, 1], x[:, 2] @ pt[:, 0] - x[:, 0] @ pt[:, 2],
                          x[:, 0] @ pt[:, 1] - x[:, 1] @ pt[:, 0]])
            if self.rotation_nodes.size:
                L += np.einsum("nij,nj->i", inertia, v[self.rotation_dofs])
        for _, L_k in masses:
            L += L_k
        return L
