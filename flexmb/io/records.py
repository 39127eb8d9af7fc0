"""The plain records a result carries and its file stores beside the step arrays: the model as
post-processing sees it (:class:`ModelLayout`, :class:`GroupLayout`, the modal bodies' :class:`ModalMesh`)
and the run's log (:class:`Event`). They sit in the I/O layer so that the result file reads and writes
them without importing :mod:`flexmb.results`, which builds on them and re-exports them (issue 30).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from flexmb.checks import ModelError
from flexmb.elements.dof_names import ROTATION_NAMES, TRANSLATION_NAMES
from flexmb.elements.solid import Solid
from flexmb.io.solid_faces import boundary_faces, face_triangles
from flexmb.model_digest import model_digest
from flexmb.sensors import Sensor, check_sensors

if TYPE_CHECKING:
    from flexmb.assembly import Assembly
    from flexmb.elements.floating_frame import ModalBody


@dataclass
class GroupLayout:
    """One element group as post-processing sees it.

    ``connectivity`` holds 2 nodes per element for bars and beams (drawn and exported as lines),
    3 for shells (triangles) and 4, 10 or 8 for solids (tetrahedra, hexahedra; VTK order).
    ``section`` describes the drawn cross-section of a line element:
    ``{"shape": "box", "width": b, "height": h}`` (b along the section's y axis, h along z, m) or
    ``{"shape": "tube", "radius": r}``; shells have ``{"shape": "surface"}``, solids
    ``{"shape": "solid", "cell": kind}`` with the solid's kind ``"tet4"``, ``"tet10"`` or ``"hex8"``
    (drawn as their boundary surface, exported as volume cells).
    ``frames`` (n_el, 3, 3) are the reference section frames (columns e_x, e_y, e_z) of 3D
    beams, None otherwise; ``thickness`` (n_el,) in m that of shells, None otherwise. Element
    outputs are (n_el,) per step, or (n_el, k) for vector outputs such as a shell's
    ``membrane_forces``.
    """

    name: str
    kind: str                                   # element class name: Truss, Beam2D, Beam3D, Shell3
    connectivity: np.ndarray                    # (n_el, 2) lines, (n_el, 3) triangles, (n_el, 4|10|8) solids
    section: dict[str, Any]
    frames: np.ndarray | None = None            # (n_el, 3, 3)
    outputs: dict[str, str] = field(default_factory=dict)   # element output name -> unit
    thickness: np.ndarray | None = None         # (n_el,), m, shells only
    modal_mesh: "ModalMesh | None" = None       # modal bodies only: their FE mesh

    @property
    def n_elements(self) -> int:
        return len(self.connectivity)

    @property
    def is_surface(self) -> bool:
        """Whether the elements are triangles (shells) rather than lines (bars, beams) or solids."""
        return self.connectivity.shape[1] == 3 and not self.is_solid

    @property
    def solid_kind(self) -> str | None:
        """The solid's kind (``"tet4"``, ``"tet10"``, ``"hex8"``) of a solid group, else None."""
        return self.section.get("cell") if self.section.get("shape") == "solid" else None

    @property
    def is_solid(self) -> bool:
        """Whether the elements are solids (tetrahedra, hexahedra)."""
        return self.solid_kind is not None


@dataclass
class ModalMesh:
    """The FE mesh of a modal body (:class:`~flexmb.cms.floating_frame.ModalBody`, 2D or 3D), enough
    to recover its deformed node positions x_i = r + R (X_i + Phi_i q) from a DOF vector (r the frame
    node's position, R its rotation: A(theta) in 2D, exp(hat(psi)) of the rotation vector psi in 3D;
    q the body's modal coordinates).

    ``positions`` X_i (n_b, dim) are the body-frame reference positions of its FE nodes (m),
    ``basis`` Phi_i (n_b, dim, n_m) the translation rows of its mode basis (m per kg^1/2 m of q),
    ``lines`` (n_l, 2) and ``triangles`` (n_t, 3) (indices into its nodes) the FE model's
    bars/beams and its shells, then the boundary surface of its solids
    (:func:`~flexmb.io.solid_faces.boundary_faces`, a hexahedron's face as two triangles),
    ``frame_node`` the node of the main model carrying the body frame, ``dofs`` (n_m,) the global
    indices of q, ``section`` the drawn section of its lines.
    ``frames`` (n_l, 3, 3), 3D only, are the lines' reference section frames in body axes (columns
    e_x, e_y, e_z; those of the FE model's 3D beams, NaN for lines without a section frame such as
    trusses), so that a drawn box section turns with the body; None in 2D and in files written
    before they were stored (lines are then drawn with chord frames).
    """

    frame_node: int
    dofs: np.ndarray                            # (n_m,) int64
    positions: np.ndarray                       # (n_b, dim), m
    basis: np.ndarray                           # (n_b, dim, n_m)
    lines: np.ndarray                           # (n_l, 2) int64
    triangles: np.ndarray                       # (n_t, 3) int64
    section: dict[str, Any]                     # as GroupLayout.section, of the first line group
    frames: np.ndarray | None = None            # (n_l, 3, 3), 3D only

    @classmethod
    def from_body(cls, body: ModalBody, dofs: np.ndarray) -> "ModalMesh":
        """The mesh of the modal body ``body`` whose modal coordinates have the global indices ``dofs``."""
        data = body.data
        fe_model, fe_dofs = data.component.model, data.component.assembly.dofs
        dim = fe_model.dim
        # one-node groups of the FE model (springs to the ground) have nothing to draw
        lines = [g for g in fe_model.groups if g.n_nodes == 2]
        triangles = [g.connectivity for g in fe_model.groups if g.n_nodes == 3 and not isinstance(g, Solid)]
        solids = [(g.kind, g.connectivity) for g in fe_model.groups if isinstance(g, Solid)]
        if solids:                          # drawn and exported as their outer surface
            triangles.append(face_triangles(boundary_faces(solids)[0])[0])
        section = lines[0].drawn_section(fe_model.coordinates[lines[0].connectivity],
                                         fe_model.characteristic_length) if lines else {"shape": "surface"}
        frames = None
        if dim == 3:
            frames = np.concatenate([g.section_frames(fe_model.coordinates[g.connectivity])
                                     if hasattr(g, "section_frames") else np.full((g.n_elements, 3, 3), np.nan)
                                     for g in lines]) if lines else np.zeros((0, 3, 3))
        return cls(int(body.connectivity[0, 0]), np.asarray(dofs, dtype=np.int64).copy(),
                   np.array(data.positions[:, :dim], dtype=float), np.array(data.basis[fe_dofs.translations()]),
                   np.concatenate([g.connectivity for g in lines], dtype=np.int64) if lines
                   else np.zeros((0, 2), np.int64),
                   np.concatenate(triangles, dtype=np.int64) if triangles else np.zeros((0, 3), np.int64),
                   section, frames)

    @property
    def n_points(self) -> int:
        return len(self.positions)


@dataclass
class ModelLayout:
    """Nodes, DOF numbering and element groups of a model (no stiffness, no loads)."""

    dim: int
    coordinates: np.ndarray                     # (n_nodes, dim), m
    has_rotations: np.ndarray                   # (n_nodes,) bool
    groups: list[GroupLayout]
    point_masses: np.ndarray                    # (n_pm, 2): node, mass (kg); rigid bodies too
    prescribed: np.ndarray                      # (n_p,) global indices of prescribed DOFs
    joints: list[str] = field(default_factory=list)        # joint names, in model order
    sensors: list[Sensor] = field(default_factory=list)    # recorded outputs (flexmb.sensors)
    #: per joint (pictures mark them): the reference joint point (n_joints, 3) in m, the sides'
    #: nodes (n_joints, 2) (-1: the ground) and the kinds
    joint_points: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    joint_sides: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))
    joint_kinds: list[str] = field(default_factory=list)
    #: DOFs that belong to no node (modal bodies' modal coordinates), numbered after the nodal DOFs
    n_internal: int = 0
    #: the rigid bodies with their drawn shapes (:class:`~flexmb.multibody.body_shapes.BodyLayout`)
    bodies: list = field(default_factory=list)
    #: damped element groups: name -> what damps them (:func:`flexmb.damping_notes.damping_notes`);
    #: None: not known (a file written before damping was recorded)
    damping: dict[str, str] | None = field(default_factory=dict)
    #: hash of the model's data per part (:func:`flexmb.model_digest.model_digest`); empty when
    #: not known (a layout made by hand, a file written before digests) or not made yet (a layout
    #: from :meth:`from_assembly` makes it when a file or a restart asks, :meth:`model_digest`)
    digest: dict[str, str] = field(default_factory=dict)
    #: the model the layout was made from (:meth:`from_assembly`), which result files save
    #: (:mod:`flexmb.io.model_file`); None for a layout read from a file or made by hand
    model: Any = field(default=None, init=False, repr=False, compare=False)

    def __getstate__(self) -> dict:
        """Pickled (and deep-copied) without its model, with its digest: a result sent between
        processes would carry a copy of the model, and a model with a lambda load cannot be pickled
        at all."""
        self.model_digest()
        return {**self.__dict__, "model": None}

    @classmethod
    def from_assembly(cls, asm: Assembly) -> "ModelLayout":
        # a modal body's group is a ModalBody; its module, unimported, means there is none
        floating_frame = sys.modules.get("flexmb.elements.floating_frame")
        model = asm.model
        X = model.coordinates
        groups = []
        for g in model.groups:
            Xe = X[g.connectivity]
            frames = g.section_frames(Xe) if hasattr(g, "section_frames") else None
            if isinstance(g, Solid):                # the kind (hence the cell type) travels in the section
                section, thickness = {"shape": "solid", "cell": g.kind}, None
            elif g.n_nodes == 3:                    # shells: a surface with a thickness
                section, thickness = {"shape": "surface"}, np.broadcast_to(g.thickness, (g.n_elements,)).copy()
            else:
                section, thickness = g.drawn_section(Xe, model.characteristic_length), None
            # a one-node group (springs, bushings to the ground) is drawn and exported as lines of
            # zero length at its nodes: post-processing knows lines, triangles and solids only
            conn = np.repeat(g.connectivity, 2, axis=1) if g.n_nodes == 1 else g.connectivity.copy()
            modal = floating_frame is not None and isinstance(g, floating_frame.ModalBody)
            mesh = ModalMesh.from_body(g, asm.dofs.internal_dofs(g)) if modal else None
            groups.append(GroupLayout(g.name, type(g).__name__, conn, section, frames,
                                      dict(g.output_units), thickness, mesh))
        masses = np.array([(n, m) for n, m, _ in model.point_masses] + [(b.node, b.mass) for b in model.bodies],
                          dtype=float).reshape(-1, 2)
        layout = cls(model.dim, X.copy(), asm.dofs.has_rotations.copy(), groups, masses,
                     asm.dofs.prescribed.copy(), [j.name for j in model.joints])
        layout.sensors = check_sensors(getattr(model, "sensors", []), layout)
        if model.joints:
            layout.joint_points = np.array([j.at for j in model.joints], dtype=float)
            layout.joint_sides = np.array([(j.a, j.b) for j in model.joints], dtype=np.int64)
            layout.joint_kinds = [j.kind for j in model.joints]
        layout.n_internal = asm.dofs.n_dof - asm.dofs.n_node_dofs
        from flexmb.damping_notes import damping_notes
        from flexmb.multibody.body_shapes import body_layouts

        layout.bodies, layout.damping = body_layouts(model), damping_notes(model)
        layout.model = model
        return layout

    def model_digest(self) -> dict[str, str]:
        """:attr:`digest`, made from :attr:`model` first if it is empty and the model is known (a
        run in memory does not hash its model: 0.3 ms of a small mechanism's 4 ms run). A result
        file written after the run hashes the model as it saves it then."""
        if not self.digest and self.model is not None:
            self.digest = model_digest(self.model)
        return self.digest

    def differences(self, other: "ModelLayout") -> list[str]:
        """What differs between this layout and ``other`` (empty if they describe the same
        nodes, DOFs, element groups, prescribed DOFs and joints)."""
        found = []
        if self.dim != other.dim:
            found.append(f"dimension {self.dim} vs {other.dim}")
        if self.n_nodes != other.n_nodes:
            found.append(f"{self.n_nodes} vs {other.n_nodes} nodes")
        elif not np.array_equal(self.coordinates, other.coordinates):
            node = int(np.flatnonzero(np.any(self.coordinates != other.coordinates, axis=1))[0])
            found.append(f"node {node} at {self.coordinates[node].tolist()} vs {other.coordinates[node].tolist()}")
        elif not np.array_equal(self.has_rotations, other.has_rotations):
            node = int(np.flatnonzero(self.has_rotations != other.has_rotations)[0])
            found.append(f"node {node} {'has' if self.has_rotations[node] else 'has no'} rotation DOFs in one")
        if self.n_dof != other.n_dof:
            found.append(f"{self.n_dof} vs {other.n_dof} DOFs")
        if len(self.groups) != len(other.groups):
            found.append(f"{len(self.groups)} vs {len(other.groups)} element groups")
        for i, (a, b) in enumerate(zip(self.groups, other.groups)):
            if (a.name, a.kind) != (b.name, b.kind):
                found.append(f"element group {i}: {a.kind} {a.name!r} vs {b.kind} {b.name!r}")
            elif not np.array_equal(a.connectivity, b.connectivity):
                found.append(f"element group {i} ({a.name!r}): different connectivity")
        if not np.array_equal(self.prescribed, other.prescribed):
            found.append(f"prescribed DOFs {self.prescribed.tolist()} vs {other.prescribed.tolist()}")
        if list(self.joints) != list(other.joints):
            found.append(f"joints {list(self.joints)} vs {list(other.joints)}")
        if list(self.sensors) != list(other.sensors):
            found.append(f"sensors {[s.name for s in self.sensors]} vs {[s.name for s in other.sensors]} "
                         "(or their definitions)")
        return found

    # ------------------------------------------------------------ numbering
    @property
    def n_nodes(self) -> int:
        return len(self.coordinates)

    @property
    def dofs_per_node(self) -> np.ndarray:
        """(n_nodes,) number of DOFs of each node."""
        return self.dim + len(ROTATION_NAMES[self.dim]) * self.has_rotations.astype(int)

    @property
    def first(self) -> np.ndarray:
        """(n_nodes,) global index of each node's first DOF (the numbering of :class:`~flexmb.dofs.DofMap`)."""
        n = self.dofs_per_node
        return np.concatenate([[0], np.cumsum(n)[:-1]]).astype(np.int64)

    @property
    def n_dof(self) -> int:
        return int(self.dofs_per_node.sum()) + self.n_internal

    def dof_names(self, node: int) -> tuple[str, ...]:
        rot = ROTATION_NAMES[self.dim] if self.has_rotations[node] else ()
        return TRANSLATION_NAMES[self.dim] + rot

    def index(self, node: int, dof: str) -> int:
        """Global index of DOF ``dof`` of ``node``."""
        if not 0 <= node < self.n_nodes:
            raise ModelError(f"node {node} does not exist (the model has nodes 0..{self.n_nodes - 1})")
        names = self.dof_names(node)
        if dof not in names:
            raise ModelError(f"node {node} has no DOF {dof!r} (it has {', '.join(names)})")
        return int(self.first[node] + names.index(dof))

    def node_of_dof(self, index: np.ndarray) -> np.ndarray:
        """Node of each global DOF index (...,)."""
        return np.searchsorted(self.first, index, side="right") - 1

    def joint_positions(self, u: np.ndarray) -> np.ndarray:
        """Current joint points (n_joints, dim) at the DOF vector u (n_dof,): the point of side B
        (side A for a joint whose side B is missing), m."""
        if not len(self.joint_points):
            return np.zeros((0, self.dim))
        R = self.rotation_matrices(u)[:, :self.dim, :self.dim]
        x = self.positions(u)
        at = self.joint_points[:, :self.dim]
        node = np.where(self.joint_sides[:, 1] >= 0, self.joint_sides[:, 1], self.joint_sides[:, 0])
        moved = x[node] + np.einsum("jab,jb->ja", R[node], at - self.coordinates[node])
        return np.where((node >= 0)[:, None], moved, at)

    def translations(self) -> np.ndarray:
        """(n_nodes, dim) global indices of the translations."""
        return self.first[:, None] + np.arange(self.dim)[None, :]

    @property
    def rotation_nodes(self) -> np.ndarray:
        return np.flatnonzero(self.has_rotations)

    def rotations(self) -> np.ndarray:
        """(n_rot_nodes, 1 or 3) global indices of the rotation DOFs of nodes that have them."""
        n_r = len(ROTATION_NAMES[self.dim])
        return self.first[self.rotation_nodes][:, None] + self.dim + np.arange(n_r)[None, :]

    @property
    def characteristic_length(self) -> float:
        """Largest extent (m) of the reference nodes, modal bodies' FE nodes included (1 if none)."""
        points = np.concatenate([self.coordinates] + [self.coordinates[m.frame_node] + m.positions
                                                      for m in self.modal_meshes])
        span = float(np.ptp(points, axis=0).max()) if len(points) else 0.0
        return span if span > 0 else 1.0

    def group(self, key: str | int) -> int:
        """Index of the group named ``key`` (or ``key`` itself if it is an index)."""
        if isinstance(key, (int, np.integer)) or (isinstance(key, str) and key.isdigit()):
            i = int(key)
            if not 0 <= i < len(self.groups):
                raise ModelError(f"element group {i} does not exist (the model has {len(self.groups)})")
            return i
        hits = [i for i, g in enumerate(self.groups) if g.name == key]
        if not hits:
            raise ModelError(f"no element group named {key!r}; groups: "
                             + ", ".join(f"{i}: {g.name}" for i, g in enumerate(self.groups)))
        if len(hits) > 1:
            raise ModelError(f"several element groups are named {key!r} (indices {hits}); use the index")
        return hits[0]

    # ----------------------------------------------------------- geometry
    def positions(self, u: np.ndarray) -> np.ndarray:
        """Current nodal positions (..., n_nodes, dim) from DOF vectors (..., n_dof), m."""
        return self.coordinates + u[..., self.translations()]

    @property
    def modal_meshes(self) -> list[ModalMesh]:
        """The FE meshes of the modal bodies, in group order."""
        return [g.modal_mesh for g in self.groups if g.modal_mesh is not None]

    @property
    def n_modal_points(self) -> int:
        """Number of the modal bodies' FE nodes (drawn and exported after the model's nodes)."""
        return sum(mesh.n_points for mesh in self.modal_meshes)

    def _frame_motion(self, mesh: ModalMesh, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The frame node's DOF indices (dim + 1 or 6,), its position r (..., dim) and rotation R
        (..., dim, dim) at DOF vectors u (..., n_dof): A(theta) in 2D, exp(hat(psi)) in 3D."""
        node_dofs = self.first[mesh.frame_node] + np.arange(self.dofs_per_node[mesh.frame_node])
        r = self.coordinates[mesh.frame_node] + u[..., node_dofs[:self.dim]]
        if self.dim == 3:
            from flexmb.rotations import exp_map

            return node_dofs, r, exp_map(u[..., node_dofs[3:]])
        c, s = np.cos(u[..., node_dofs[2]]), np.sin(u[..., node_dofs[2]])
        return node_dofs, r, np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)

    def modal_mesh_positions(self, u: np.ndarray) -> list[np.ndarray]:
        """Current positions of every modal body's FE nodes from DOF vectors u (..., n_dof): one
        (..., n_b, dim) array per modal body (:attr:`modal_meshes` order), m,
        x_i = r + R (X_i + Phi_i q) with R = A(theta) in 2D and exp(hat(psi)) in 3D, as
        :meth:`~flexmb.cms.floating_frame.ModalBody.deformed_positions` (without the stiffening's
        second-order field)."""
        u = np.asarray(u, dtype=float)
        out = []
        for mesh in self.modal_meshes:
            _, r, R = self._frame_motion(mesh, u)                                           # (..., dim), (..., dim, dim)
            local = mesh.positions + np.einsum("bdm,...m->...bd", mesh.basis, u[..., mesh.dofs])  # (..., n_b, dim)
            out.append(r[..., None, :] + np.einsum("...de,...be->...bd", R, local))
        return out

    def modal_mesh_velocities(self, u: np.ndarray, v: np.ndarray) -> list[np.ndarray]:
        """Velocities of every modal body's FE nodes at DOF vectors u (..., n_dof) and DOF velocities
        v (..., n_dof): one (..., n_b, dim) array per modal body, m/s,
        dx_i/dt = dr/dt + omega x (x_i - r) + R Phi_i dq/dt, omega = dtheta/dt e_z in 2D and in 3D
        the spatial angular velocity held at the frame node's rotation DOFs (so that with v a mode
        or a DOF increment, whose 3D rotations are spins composed on the left, this is the
        derivative of the positions along it)."""
        u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
        out = []
        for mesh, x in zip(self.modal_meshes, self.modal_mesh_positions(u)):
            node_dofs, r, R = self._frame_motion(mesh, u)
            arm = x - r[..., None, :]                                                       # (..., n_b, dim)
            rate = np.einsum("bdm,...m->...bd", mesh.basis, v[..., mesh.dofs])              # (..., n_b, dim), body axes
            omega = v[..., node_dofs[self.dim:]]                                            # (..., 1 or 3)
            if self.dim == 3:
                turning = np.cross(omega[..., None, :], arm)
            else:
                turning = omega[..., None, :] * np.stack([-arm[..., 1], arm[..., 0]], -1)
            out.append(v[..., None, node_dofs[:self.dim]] + turning + np.einsum("...de,...be->...bd", R, rate))
        return out

    def rotation_matrices(self, u: np.ndarray) -> np.ndarray:
        """Nodal rotation matrices (n_nodes, 3, 3) of one DOF vector (identity at nodes without rotations).

        In 2D the rotation is about z by ``rz``.
        """
        from flexmb.rotations import exp_map

        R = np.broadcast_to(np.eye(3), (self.n_nodes, 3, 3)).copy()
        rot = self.rotations()
        if self.dim == 3:
            R[self.rotation_nodes] = exp_map(u[rot])
        else:
            c, s = np.cos(u[rot[:, 0]]), np.sin(u[rot[:, 0]])
            R[self.rotation_nodes, 0, 0], R[self.rotation_nodes, 0, 1] = c, -s
            R[self.rotation_nodes, 1, 0], R[self.rotation_nodes, 1, 1] = s, c
        return R


@dataclass
class Event:
    """Something worth knowing about a run: a step cut-back, a warning, the error that ended it,
    a restart."""

    at: float                   # time or load factor
    kind: str                   # "cutback", "warning", "error", "restart", "round-off", "retry"
    message: str
