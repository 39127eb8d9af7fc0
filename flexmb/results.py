"""Results of an analysis: histories over output steps, with what post-processing needs of the model.

Every analysis returns a :class:`Result`: :class:`TimeHistory` (dynamics, steps in time),
:class:`StaticPath` (statics, steps in load factor) or :class:`ModeShapes` (buckling or
natural modes, one "step" per mode). A result holds, per output step, the DOF vector ``u``
(n_dof,), the support reactions, and per element group the element outputs of
:meth:`~flexmb.elements.base.ElementGroup.element_outputs` (section forces and strains), plus
the series of its kind (velocities and energies in dynamics). Each series reads as a numpy
array with one row per output step (``history.u`` (n_steps, n_dof), ``history.kinetic``
(n_steps,)), stacked on first use after a step is recorded and read-only (copy it to change
it); :meth:`Result.arrays` gives them all. The :class:`ModelLayout` (nodes, DOF
numbering, element connectivity, section shapes, the FE meshes of modal bodies as
:class:`ModalMesh`) travels with the result, so a saved result can be plotted, rendered and
exported without the script that made it.

A result attached to a file (``integrate(..., save_to=...)``, :meth:`Result.attach_file`) writes
every step as it is recorded (HDF5, see :mod:`flexmb.io.result_file`); :func:`load_result` reads
it back, also while another process is still writing it. An existing file is replaced only with
``overwrite=True``; a file that cannot be written (disk full, no permission) ends the run with a
:class:`ResultFileError` and keeps every step written before.

Quantity names used by :meth:`Result.series`, the ``flexmb plot`` command and plots:

* ``uy@12``: DOF ``uy`` of node 12 (any DOF name: ``ux uy uz rx ry rz``);
  ``vel:uy@12`` its velocity, ``reac:uy@0`` the support reaction on it;
* ``kinetic``, ``strain``, ``work``, ``potential`` = strain - work (the potential energy when
  loads are conservative, gravity included), ``total`` = kinetic + potential (energies, J),
  ``Lz`` / ``Lx`` ... (angular
  momentum), ``newton_iterations``, ``parameter`` (t or the load factor);
* ``N@beams:4``: element output ``N`` of element 4 of the group named ``beams`` (or group
  index ``N@0:4``); component k of a vector output as ``membrane_forces[k]@plate:4``;
* ``tip[y]`` or ``tip[1]``: a component of the sensor named ``tip`` (``tip`` alone for a scalar
  sensor; plots take ``tip`` for all its components), see :mod:`flexmb.sensors`.
"""
from __future__ import annotations

import logging
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from flexmb.model import ROTATION_NAMES, TRANSLATION_NAMES, ModelError
from flexmb.model_digest import model_digest
from flexmb.sensors import Sensor, Snapshot, check_sensors, evaluate_sensors, sensor_components, sensor_unit

logger = logging.getLogger("flexmb")

if TYPE_CHECKING:
    from flexmb.assembly import Assembly
    from flexmb.cms.floating_frame import ModalBody
    from flexmb.integrators.newton import NewtonLog
    from flexmb.integrators.schemes import State


@dataclass
class GroupLayout:
    """One element group as post-processing sees it.

    ``connectivity`` holds 2 nodes per element for bars and beams (drawn and exported as lines)
    and 3 for shells (triangles). ``section`` describes the drawn cross-section of a line
    element: ``{"shape": "box", "width": b, "height": h}`` (b along the section's y axis, h along
    z, m) or ``{"shape": "tube", "radius": r}``; shells have ``{"shape": "surface"}``.
    ``frames`` (n_el, 3, 3) are the reference section frames (columns e_x, e_y, e_z) of 3D
    beams, None otherwise; ``thickness`` (n_el,) in m that of shells, None otherwise. Element
    outputs are (n_el,) per step, or (n_el, k) for vector outputs such as a shell's
    ``membrane_forces``.
    """

    name: str
    kind: str                                   # element class name: Truss, Beam2D, Beam3D, Shell3
    connectivity: np.ndarray                    # (n_el, 2) lines or (n_el, 3) triangles
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
        """Whether the elements are triangles (shells) rather than lines (bars, beams)."""
        return self.connectivity.shape[1] == 3


@dataclass
class ModalMesh:
    """The FE mesh of a modal body (:class:`~flexmb.cms.floating_frame.ModalBody`, 2D or 3D), enough
    to recover its deformed node positions x_i = r + R (X_i + Phi_i q) from a DOF vector (r the frame
    node's position, R its rotation: A(theta) in 2D, exp(hat(psi)) of the rotation vector psi in 3D;
    q the body's modal coordinates).

    ``positions`` X_i (n_b, dim) are the body-frame reference positions of its FE nodes (m),
    ``basis`` Phi_i (n_b, dim, n_m) the translation rows of its mode basis (m per kg^1/2 m of q),
    ``lines`` (n_l, 2) and ``triangles`` (n_t, 3) the FE model's bars/beams and shells (indices
    into its nodes), ``frame_node`` the node of the main model carrying the body frame,
    ``dofs`` (n_m,) the global indices of q, ``section`` the drawn section of its lines.
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
        triangles = [g.connectivity for g in fe_model.groups if g.n_nodes == 3]
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
    #: hash of the model's data per part (:func:`flexmb.model_digest.model_digest`); empty when
    #: not known (a layout made by hand, a file written before digests)
    digest: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_assembly(cls, asm: Assembly) -> "ModelLayout":
        # a modal body's group is a ModalBody; its module, unimported, means there is none
        floating_frame = sys.modules.get("flexmb.cms.floating_frame")
        model = asm.model
        X = model.coordinates
        groups = []
        for g in model.groups:
            Xe = X[g.connectivity]
            frames = g.section_frames(Xe) if hasattr(g, "section_frames") else None
            if g.n_nodes == 3:                      # shells: a surface with a thickness
                section, thickness = {"shape": "surface"}, np.broadcast_to(g.thickness, (g.n_elements,)).copy()
            else:
                section, thickness = g.drawn_section(Xe, model.characteristic_length), None
            # a one-node group (springs, bushings to the ground) is drawn and exported as lines of
            # zero length at its nodes: post-processing knows lines and triangles only
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
        layout.digest = model_digest(model)
        return layout

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


class ResultFileError(OSError):
    """A result file could not be created, written or continued.

    ``path`` is the file, ``steps_on_disk`` the number of steps it holds intact (None when not
    known), ``cause`` the operating system's error, and ``result`` the result in memory with every
    step computed (set when a run ends with this error).
    """

    def __init__(self, message: str, path: str | Path, steps_on_disk: int | None = None,
                 cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.path = Path(path)
        self.steps_on_disk = steps_on_disk
        self.cause = cause
        self.result: Result | None = None


class Result:
    """Base of all results: per-step series named in ``SERIES`` (numpy arrays, one row per
    output step), element outputs and a run log."""

    kind = "result"
    #: name of the step parameter series (time, load factor, ...)
    parameter_name = "parameter"
    #: per-step series kept as list attributes
    SERIES: tuple[str, ...] = ("u", "reactions")

    def __init__(self, layout: ModelLayout | None = None, **meta: Any) -> None:
        self.layout = layout
        self.meta: dict[str, Any] = dict(meta)
        # each series is recorded into a list (cheap appends while a run goes on) and read as
        # one array, stacked once per change (see __getattr__)
        self._series: dict[str, list] = {name: [] for name in self.SERIES}
        self._stacked: dict[str, np.ndarray] = {}
        #: per group: output name -> list of (n_el,) arrays ((n_el, k) for vector outputs)
        self.elements: list[dict[str, list[np.ndarray]]] = [
            {name: [] for name in g.outputs} for g in layout.groups] if layout is not None else []
        #: sensor name -> list of (k,) values per step (see :mod:`flexmb.sensors`)
        self.sensor_values: dict[str, list[np.ndarray]] = {
            sensor.name: [] for sensor in layout.sensors} if layout is not None else {}
        self.events: list[Event] = []
        self.cutbacks = 0
        self.newton_logs: list[NewtonLog] = []
        self._file = None
        #: (path, status) of the file this result last wrote and closed, for the repr
        self._closed_file: tuple[str, str] | None = None

    # ------------------------------------------------------------- series
    def __getattr__(self, name: str) -> np.ndarray:
        """A series (see ``SERIES``) as an array (n_steps, ...), read-only."""
        series = self.__dict__.get("_series")
        if series is None or name not in series:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        stacked = self._stacked.get(name)
        if stacked is None:
            stacked = np.array(series[name]) if series[name] else np.zeros(0)
            stacked.setflags(write=False)
            self._stacked[name] = stacked
        return stacked

    def __setattr__(self, name: str, value: Any) -> None:
        series = self.__dict__.get("_series")
        if series is not None and name in series:            # a whole series replaced (file reader)
            series[name] = list(value)
            self._stacked.pop(name, None)
        else:
            super().__setattr__(name, value)

    # ------------------------------------------------------------ recording
    def _append(self, values: dict[str, Any], element_outputs: list[dict[str, np.ndarray]] | None,
                sensor_values: dict[str, np.ndarray] | None = None) -> None:
        for name, value in (sensor_values or {}).items():
            self.sensor_values[name].append(value)
        for name in self.SERIES:
            v = values[name]
            self._series[name].append(v.copy() if isinstance(v, np.ndarray) else v)
            self._stacked.pop(name, None)
        if element_outputs is not None and self.layout is not None:
            for store, out in zip(self.elements, element_outputs):
                for name, lst in store.items():
                    lst.append(np.asarray(out[name], dtype=float))
        if self._file is not None:
            self._to_file(self._file.append, self._step_record(self.n_steps - 1))

    def _step_record(self, k: int) -> dict[str, np.ndarray]:
        rec = {name: np.asarray(self._series[name][k], dtype=float) for name in self.SERIES}
        for gi, store in enumerate(self.elements):
            for name, lst in store.items():
                if len(lst) > k:
                    rec[f"elements/{gi}/{name}"] = lst[k]
        for name, lst in self.sensor_values.items():
            if len(lst) > k:
                rec[f"sensors/{name}"] = lst[k]
        return rec

    def _sensor_values(self, snapshot: Snapshot) -> dict[str, np.ndarray]:
        """The layout's sensors at one step, continuing angles from the steps recorded so far."""
        if self.layout is None or not self.layout.sensors:
            return {}
        return evaluate_sensors(self.layout, snapshot, self.sensor_values)

    def log_event(self, at: float, kind: str, message: str) -> None:
        """Add an entry to the run log (written to the result file at once)."""
        event = Event(float(at), kind, message)
        self.events.append(event)
        if self._file is not None:
            self._to_file(self._file.event, event)

    def note_round_off(self, at: float, log: NewtonLog) -> None:
        """Enter in the run log the first solve that ended at the residual's round-off floor
        (:meth:`flexmb.integrators.newton.NewtonLog.round_off_note`); later ones are not logged."""
        if log.criterion in ("round-off", "stagnation") and not any(e.kind == "round-off" for e in self.events):
            self.log_event(at, "round-off", log.round_off_note())

    def format_log(self) -> str:
        """The run log as text, one line per event."""
        if not self.events:
            return "(no events)"
        return "\n".join(f"{self.parameter_name} = {e.at:.6g}: {e.kind}: {e.message}" for e in self.events)

    # ----------------------------------------------------------------- file
    def attach_file(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the result to ``path`` (HDF5) now and every step recorded from now on.

        An existing file is refused unless ``overwrite`` is true, and a file that another run is
        writing or that this process has open for reading is always refused.
        """
        from flexmb.io.result_file import ResultWriter

        self.close_file()
        self._file = ResultWriter(path, self, overwrite=overwrite)
        for k in range(self.n_steps):
            self._to_file(self._file.append, self._step_record(k))
        for event in self.events:
            self._to_file(self._file.event, event)
        return self._file.path

    def resume_file(self, path: str | Path) -> Path:
        """Continue the file this result was loaded from (:func:`load_result`): its steps past
        ``n_steps`` and log entries past ``events`` are dropped, and steps recorded from now on are
        appended."""
        from flexmb.io.result_file import ResultWriter

        self.close_file()
        self._file = ResultWriter.reopen(path, self)
        self.meta.pop("status", None)                    # the loaded status no longer describes the file
        return self._file.path

    def close_file(self, status: str = "finished") -> None:
        """Finish the attached file; ``status`` ("finished" or "failed") is stored in it."""
        if self._file is not None:
            writer, self._file = self._file, None
            writer.close(status)
            self._closed_file = (str(writer.path), status)

    def _to_file(self, write: Callable[..., None], *args: Any) -> None:
        """Call a writer method; a write that failed has closed the file, so detach it."""
        try:
            write(*args)
        except ResultFileError:
            self._file = None
            raise

    @contextmanager
    def recording(self, path: str | Path | None, overwrite: bool = False,
                  resume: bool = False) -> Iterator["Result"]:
        """Context of a run writing to ``path`` (nothing if None): the file receives every step
        recorded inside and is completed with status "finished", or "failed" when the run
        raises, after an "error" event naming the exception (unless the run logged its own).

        ``overwrite`` allows replacing an existing file; ``resume`` continues the file this result
        was loaded from instead (:meth:`resume_file`). A :class:`ResultFileError` (the file could
        not be written) carries this result in its ``result``.
        """
        if path is not None:
            if resume:
                self.resume_file(path)
            else:
                self.attach_file(path, overwrite)
        try:
            yield self
        except BaseException as exc:
            if isinstance(exc, ResultFileError):
                exc.result = self
            if not self.events or self.events[-1].kind != "error":
                at = float(self.parameter[-1]) if self.n_steps else float("nan")
                try:
                    self.log_event(at, "error", f"run stopped by {type(exc).__name__}: {exc}")
                except ResultFileError as file_error:    # exc is the error to report; say this one too
                    logger.error("%s", file_error)
            try:
                self.close_file("failed")
            except ResultFileError as file_error:
                logger.error("%s", file_error)
            raise
        try:
            self.close_file()
        except ResultFileError as exc:
            exc.result = self
            raise

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the whole result to one HDF5 file (see :mod:`flexmb.io.result_file`); an existing
        file is replaced only with ``overwrite=True``. The file is complete or not there: a
        failed write (disk full) raises :class:`ResultFileError` and leaves an existing file as it was."""
        from flexmb.io.result_file import save_result

        written = save_result(self, path, overwrite)
        self._closed_file = (str(written), "finished")
        return written

    # ------------------------------------------------------------ accessors
    @property
    def n_steps(self) -> int:
        return len(self._series[self.SERIES[0]])

    @property
    def parameter(self) -> np.ndarray:
        """(n_steps,) the step parameter (time in s, load factor, ...)."""
        return np.array(self._series[self.SERIES[0]], dtype=float)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every per-step series stacked, (n_steps, ...) (copies)."""
        return {name: np.array(getattr(self, name)) for name in self.SERIES}

    def __repr__(self) -> str:
        """What is in it: kind, steps and their range, model size, series, run status."""
        lines = [f"{type(self).__name__}: {self._summary()}"]
        if self.layout is not None:
            layout = self.layout
            groups = ", ".join(f"{g.name} ({g.kind}, {g.n_elements} el.)" for g in layout.groups) or "none"
            lines.append(f"  model: {layout.dim}D, {layout.n_nodes} nodes, {layout.n_dof} DOFs; groups: {groups}"
                         + (f"; joints: {', '.join(layout.joints)}" if layout.joints else ""))
        present = [name for name in self.SERIES if any(np.size(x) for x in self._series[name])]
        lines.append(f"  series: {', '.join(present) or 'none'}")
        outputs = [f"{g.name}: {', '.join(store)}" for g, store in
                   zip(self.layout.groups if self.layout is not None else [], self.elements) if store]
        if outputs:
            lines.append(f"  element outputs: {'; '.join(outputs)}")
        if self._file is not None:
            status = f"running, writing to {self._file.path}"
        elif self._closed_file is not None:
            status = f"{self._closed_file[1]}, written to {self._closed_file[0]}"
        elif "status" in self.meta:
            status = f"{self.meta['status']}, read from {self.meta.get('file', 'a file')}"
        else:
            status = "in memory"
        lines.append(f"  status: {status}; {self.cutbacks} cut-back(s), {len(self.events)} event(s)"
                     + (f", last: {self.events[-1].kind}: {self.events[-1].message[:80]}" if self.events else ""))
        return "\n".join(lines)

    def _summary(self) -> str:
        """The first line of the repr: the steps and their range."""
        p = self.parameter
        span = f", {self.parameter_name} = {p[0]:.6g} .. {p[-1]:.6g}" if p.size else ""
        return f"{self.n_steps} step(s){span}"

    def _layout(self) -> ModelLayout:
        if self.layout is None:
            raise ModelError("this result carries no model layout (it was built by hand)")
        return self.layout

    def dof(self, node: int, dof: str) -> np.ndarray:
        """(n_steps,) history of one DOF (m or rad)."""
        return np.array(self.u)[:, self._layout().index(node, dof)]

    def reaction(self, node: int, dof: str) -> np.ndarray:
        """(n_steps,) support reaction on one DOF (N or N m); zero at free DOFs."""
        return np.array(self.reactions)[:, self._layout().index(node, dof)]

    def positions(self, step: int | None = None) -> np.ndarray:
        """Nodal positions (n_steps, n_nodes, dim), or (n_nodes, dim) at one step, m."""
        u = np.array(self.u) if step is None else np.asarray(self.u[step])
        return self._layout().positions(u)

    def element(self, group: str | int, name: str) -> np.ndarray:
        """(n_steps, n_el) history of element output ``name`` (e.g. ``"N"``) of a group,
        (n_steps, n_el, k) for a vector output (a shell's ``"membrane_forces"``)."""
        gi = self._layout().group(group)
        store = self.elements[gi]
        if name not in store:
            raise ModelError(f"group {self.layout.groups[gi].name!r} has no element output {name!r}; "
                             f"it has {', '.join(store)}")
        return np.array(store[name])

    def series(self, spec: str) -> np.ndarray:
        """(n_steps,) history named by ``spec`` (see the module docstring for the names)."""
        spec = spec.strip()
        if spec == "parameter":
            return self.parameter
        sensor, component = self._sensor_spec(spec)
        if sensor is not None:
            values = self.sensor(sensor)
            return values if component is None else values[:, component]
        if "@" in spec:
            what, where = spec.split("@", 1)
            if ":" in where:                                         # element output
                group, el = where.rsplit(":", 1)
                name, component = _component(what, spec)
                values = self.element(group, name)
                if not el.isdigit() or int(el) >= values.shape[1]:
                    raise ModelError(f"{spec!r}: element {el} does not exist in group {group!r} "
                                     f"({values.shape[1]} elements)")
                values = values[:, int(el)]
                if (component is None) != (values.ndim == 1):
                    size = values.shape[1] if values.ndim == 2 else 0
                    raise ModelError(f"{spec!r}: element output {name!r} has " + (
                        f"{size} components; name one as {name}[0]..{name}[{size - 1}]" if size
                        else "one value per element; give it without [component]"))
                if component is not None:
                    if component >= values.shape[1]:
                        raise ModelError(f"{spec!r}: element output {name!r} has components 0..{values.shape[1] - 1}")
                    values = values[:, component]
                return values
            if not where.isdigit():
                raise ModelError(f"{spec!r}: expected a node number after '@'")
            prefix, _, dof = what.rpartition(":")
            source = {"": "u", "vel": "v", "reac": "reactions"}.get(prefix)
            if source is None or not hasattr(self, source):
                raise ModelError(f"{spec!r}: unknown prefix {prefix!r} for this {self.kind} result "
                                 "(use none, 'vel:' in dynamics, or 'reac:')")
            return np.array(getattr(self, source))[:, self._layout().index(int(where), dof)]
        derived = self._derived_series()
        if spec in derived:
            return derived[spec]
        raise ModelError(f"unknown quantity {spec!r}; this result has: "
                         + ", ".join(list(derived) + ["DOF@node", "vel:DOF@node", "reac:DOF@node",
                                                      "output@group:element"]))

    def _derived_series(self) -> dict[str, np.ndarray]:
        return {}

    def sensor(self, name: str) -> np.ndarray:
        """(n_steps,) history of a scalar sensor, (n_steps, k) of a vector one (a position, a
        rotation matrix row by row); see :mod:`flexmb.sensors`."""
        layout = self._layout()
        sensor = next((s for s in layout.sensors if s.name == name), None)
        if sensor is None:
            raise ModelError(f"no sensor named {name!r}; sensors: " + (", ".join(s.name for s in layout.sensors)
                                                                      or "none (model.add_sensor adds one)"))
        values = self.sensor_values.get(name, [])
        if len(values) != self.n_steps:
            raise ModelError(f"sensor {name!r} ({sensor.quantity}) was not recorded in this {self.kind} result "
                             "(velocities and accelerations exist in dynamics only)")
        values = np.array(values, dtype=float).reshape(self.n_steps, -1)
        return values if sensor_components(sensor, layout.dim) else values[:, 0]

    def sensor_quantities(self, spec: str) -> list[str]:
        """A sensor name expanded to one quantity name per component (``tip`` -> ``tip[x]``,
        ``tip[y]``); any other name as it is."""
        if self.layout is not None:
            sensor = next((s for s in self.layout.sensors if s.name == spec.strip()), None)
            if sensor is not None:
                return [f"{sensor.name}[{c}]" for c in sensor_components(sensor, self.layout.dim)] or [sensor.name]
        return [spec]

    def _sensor_spec(self, spec: str) -> tuple[str | None, int | None]:
        """(sensor name, component index or None) of a quantity name, (None, None) if it names no sensor."""
        if self.layout is None or not self.layout.sensors:
            return None, None
        name, _, index = spec[:-1].partition("[") if spec.endswith("]") else (spec, "", "")
        sensor = next((s for s in self.layout.sensors if s.name == name), None)
        if sensor is None:
            return None, None
        components = sensor_components(sensor, self.layout.dim)
        if not index:
            if components:
                raise ModelError(f"{spec!r}: sensor {name!r} has components {', '.join(components)}; name one as "
                                 f"{name}[{components[0]}] or {name}[0]")
            return name, None
        k = int(index) if index.isdigit() else components.index(index) if index in components else None
        if k is None or k >= len(components):
            raise ModelError(f"{spec!r}: sensor {name!r} has " + (f"components {', '.join(components)} "
                             f"(0..{len(components) - 1})" if components else "one value; give it without [component]"))
        return name, k

    def label(self, spec: str) -> str:
        """Axis label with unit for a quantity name."""
        units = {"kinetic": "J", "strain": "J", "work": "J", "potential": "J", "dissipated": "J", "joint_work": "J", "total": "J", "newton_iterations": "-"}
        sensor = self._sensor_spec(spec)[0]
        if sensor is not None:
            return f"{spec} ({sensor_unit(next(s for s in self.layout.sensors if s.name == sensor), self.layout)})"
        what = spec.split("@", 1)[0]
        if what in units:
            return f"{spec} ({units[what]})"
        if "@" in spec and ":" in spec.split("@", 1)[1] and self.layout is not None:
            group = spec.split("@", 1)[1].rsplit(":", 1)[0]
            unit = self.layout.groups[self.layout.group(group)].outputs.get(what.split("[", 1)[0], "")
            return f"{spec} ({unit})"
        dof = what.rpartition(":")[2]
        if dof in ("ux", "uy", "uz"):
            return f"{spec} ({'m/s' if what.startswith('vel:') else 'N' if what.startswith('reac:') else 'm'})"
        if dof in ("rx", "ry", "rz"):
            return f"{spec} ({'rad/s' if what.startswith('vel:') else 'N m' if what.startswith('reac:') else 'rad'})"
        return spec


class TimeHistory(Result):
    """Response at the output times of a time integration.

    Series (arrays, one row per output step): ``t`` (s), ``u``, ``v`` and ``a`` (n_dof,; ``a`` is
    the scheme's acceleration: the step's mean (v_{n+1} - v_n) / dt for the mid-point scheme,
    the end-of-step acceleration for Newmark; m/s^2, rad/s^2), ``reactions``
    (n_dof,), energies in J: ``kinetic``, ``strain``, ``work`` (of loads and support reactions
    since t0), ``dissipated`` (by damping forces since t0) and
    ``total = kinetic + strain + dissipated - work`` (constant for an exact solution),
    ``joint_work`` (the part of ``work`` done by joint and tie forces: the drives' work, zero to
    round-off for joints that do not depend on time),
    ``angular_momentum`` (1,) in 2D or (3,) in 3D, ``newton_iterations``; with
    cubic-mass beams in the mid-point scheme the director stretch rates ``stretch`` (n_dof,, in
    1/s, see :mod:`flexmb.elements.hermite_mass2d`; their kinetic energy is in ``kinetic``); with
    joints the Lagrange multipliers (n_c,), their force on the DOFs ``constraint_force``
    (n_dof,), ``constraint_residual`` max |Phi| (m or rad), and
    per joint the force (n_joints, dim) and moment (n_joints, 3 or 1) it exerts on its side B
    at the joint point, in the joint frame carried by side A (:meth:`joint_reaction`).
    Each step holds the scheme's whole state, so a run continues exactly from any output step
    (``integrate(..., restart_from=file)``).
    """

    kind = "dynamic"
    parameter_name = "t"
    SERIES = ("t", "u", "v", "a", "reactions", "kinetic", "strain", "work", "angular_momentum",
              "newton_iterations", "multipliers", "constraint_force", "constraint_residual", "joint_forces",
              "joint_moments", "stretch", "dissipated", "joint_work")

    def __init__(self, scheme: str, dt: float, layout: ModelLayout | None = None) -> None:
        super().__init__(layout, scheme=scheme, dt=float(dt))
        self.scheme = scheme
        self.dt = float(dt)

    def note_step(self, dt: float) -> None:
        """Enter an accepted time step of dt (s) in :attr:`step_sizes` (after the steps between the
        output times already held, those of a file a run continues)."""
        if "_step_sizes" not in self.__dict__:
            self.__dict__["_step_sizes"] = list(np.diff(self.parameter))
        self.__dict__["_step_sizes"].append(float(dt))

    @property
    def step_sizes(self) -> np.ndarray:
        """Every time step the run took (s), in order, (n_taken,): error-controlled steps vary
        (``meta["rtol"]``), a cut-back's half steps count as their step. Not stored in result
        files: a history read from a file gives the differences of its output times (the steps
        when every step was an output)."""
        taken = self.__dict__.get("_step_sizes")
        return np.array(taken, dtype=float) if taken is not None else np.diff(self.parameter)

    def record(self, asm: Assembly, s: State, iterations: int) -> None:
        """Append state ``s`` with its energies, momentum and element outputs."""
        cs = asm.constraints
        residual, forces, moments, constraint_force = 0.0, np.zeros((0,)), np.zeros((0,)), np.zeros((0,))
        if cs is not None:
            residual = float(np.abs(cs.values(s.u, s.t)).max(initial=0.0))
            reactions = cs.joint_reactions(s.u, s.lam, s.t, asm.dofs)
            forces = np.array([f for f, _ in reactions])
            moments = np.array([m for _, m in reactions])
            constraint_force = s.constraint_force
        kinetic, momentum = asm.energy_and_momentum(s.u, s.v, s.stretch)
        outputs = asm.element_outputs(s.u)
        sensors = self._sensor_values(Snapshot(self.layout, s.u, s.v, s.a, outputs, asm))
        self._append({"t": s.t, "u": s.u, "v": s.v, "a": s.a, "reactions": s.reaction,
                      "kinetic": kinetic, "strain": asm.strain_energy(s.u),
                      "work": s.work, "angular_momentum": momentum,
                      "newton_iterations": iterations, "multipliers": s.lam, "constraint_force": constraint_force,
                      "constraint_residual": residual, "joint_forces": forces, "joint_moments": moments,
                      "stretch": np.zeros(0) if s.stretch is None else s.stretch, "dissipated": s.dissipated,
                      "joint_work": s.joint_work},
                     outputs, sensors)

    def joint_reaction(self, joint: str | int) -> tuple[np.ndarray, np.ndarray]:
        """Force (n_steps, dim) in N and moment (n_steps, 3 or 1) in N m that a joint exerts on
        its side B at the joint point, in the joint frame carried by side A."""
        names = self._layout().joints
        k = names.index(joint) if isinstance(joint, str) and joint in names else joint
        if not isinstance(k, (int, np.integer)) or not 0 <= k < len(names):
            raise ModelError(f"no joint {joint!r}; joints: {', '.join(names) or 'none'}")
        return np.array(self.joint_forces)[:, k], np.array(self.joint_moments)[:, k]

    def arrays(self) -> dict[str, np.ndarray]:
        a = super().arrays()
        a["total"] = self.total_energy
        return a

    @property
    def dissipated_energy(self) -> np.ndarray:
        """Energy dissipated by damping since t0 (n_out,), J (zero for files without it)."""
        if len(self.dissipated) != len(self.kinetic) or any(np.size(x) != 1 for x in self.dissipated):
            return np.zeros(len(self.kinetic))                     # written before damping was booked
        return np.array(self.dissipated, dtype=float)

    @property
    def joint_work_done(self) -> np.ndarray:
        """Work of the joint and tie forces since t0 (n_out,), J, included in ``work`` (zero for files
        without it)."""
        if len(self.joint_work) != len(self.kinetic) or any(np.size(x) != 1 for x in self.joint_work):
            return np.zeros(len(self.kinetic))                     # written before it was recorded
        return np.array(self.joint_work, dtype=float)

    @property
    def total_energy(self) -> np.ndarray:
        """K + V + dissipated - work (n_out,), J: constant for an exact solution."""
        return np.array(self.kinetic) + np.array(self.strain) + self.dissipated_energy - np.array(self.work)

    def velocity(self, node: int, dof: str) -> np.ndarray:
        """(n_steps,) velocity history of one DOF (m/s, or rad/s)."""
        return np.array(self.v)[:, self._layout().index(node, dof)]

    def _summary(self) -> str:
        if "rtol" in self.meta:
            return f"{self.scheme} scheme, error-controlled steps (rtol = {self.meta['rtol']:g}), {super()._summary()}"
        return f"{self.scheme} scheme, dt = {self.dt:g} s, {super()._summary()}"

    def step_at(self, t: float) -> int:
        """Index of the output step at time t (s): the nearest output time, which must lie within
        1e-6 dt of t (else ModelError naming the nearest output times)."""
        times = self.parameter
        if not times.size:
            raise ModelError("this time history has no steps")
        t = float(t)
        k = int(np.argmin(np.abs(times - t)))
        if not abs(times[k] - t) <= 1e-6 * self.dt:
            raise ModelError(f"t = {t:g} s is not an output time of this history (t = {times[0]:g} .. "
                             f"{times[-1]:g} s, every {self.dt:g} s); the nearest is {times[k]:.10g} s")
        return k

    def energy_error(self, since: float | None = None) -> np.ndarray:
        """|E(t) - E(t_s)| / K(t_s) for the output steps from t_s on (n_out - k_s,), with
        E = K + V - W the total energy (:attr:`total_energy`) and t_s = ``since`` (s; default the
        first output step; it must be an output time, see :meth:`step_at`), e.g. the end of a
        load phase after which the motion is free. A reference state at rest (K(t_s) below 1e-8
        of the largest K from t_s on) is measured relative to that largest kinetic energy
        instead, the energy scale the run reaches; a run at rest throughout gives |E - E(t_s)|
        in J."""
        k = 0 if since is None else self.step_at(since)
        E, K = self.total_energy[k:], np.asarray(self.kinetic, dtype=float)[k:]
        return np.abs(E - E[0]) / _reference(K[0], K.max())

    def angular_momentum_error(self, since: float | None = None) -> np.ndarray:
        """|L(t) - L(t_s)| / |L(t_s)| for the output steps from t_s = ``since`` on (as
        :meth:`energy_error`); a reference with L = 0 (below 1e-8 of the largest |L| from t_s on)
        is measured relative to that largest |L|, a run with L = 0 throughout in kg m^2/s."""
        k = 0 if since is None else self.step_at(since)
        L = np.asarray(self.angular_momentum, dtype=float)[k:]
        norms = np.linalg.norm(L, axis=1)
        return np.linalg.norm(L - L[0], axis=1) / _reference(norms[0], norms.max())

    def _derived_series(self) -> dict[str, np.ndarray]:
        out = {"t": self.parameter, "kinetic": np.array(self.kinetic), "strain": np.array(self.strain),
               "work": np.array(self.work), "potential": np.array(self.strain) - np.array(self.work),
               "dissipated": self.dissipated_energy, "total": self.total_energy,
               "newton_iterations": np.array(self.newton_iterations, dtype=float),
               "constraint_residual": np.array(self.constraint_residual, dtype=float)}
        L = np.array(self.angular_momentum)
        for i, axis in enumerate("xyz" if L.ndim == 2 and L.shape[1] == 3 else "z"):
            out[f"L{axis}"] = L[:, i]
        return out


class StaticPath(Result):
    """Equilibrium states along a load path: ``load_factors`` (n_steps,), ``u`` and ``reactions``
    (n_steps, n_dof); with joints or ties the Lagrange multipliers (n_steps, n_c) and per joint the
    force and moment it exerts on its side B (:meth:`joint_reaction`, as a TimeHistory's);
    :meth:`at` reads the path at a load factor."""

    #: distance (relative to the largest |load factor| of the path, at least 1) within which a
    #: computed point counts as "at" a requested load factor: closer, no interpolation warning
    AT_TOLERANCE = 1e-9

    kind = "static"
    parameter_name = "load factor"
    SERIES = ("load_factors", "u", "reactions", "multipliers", "joint_forces", "joint_moments")

    def __init__(self, layout: ModelLayout | None = None, method: str = "load control") -> None:
        super().__init__(layout, method=method)

    def record(self, asm: Assembly, lam: float, u: np.ndarray, reaction: np.ndarray,
               log: NewtonLog | None = None, multipliers: np.ndarray | None = None, t: float = 0.0) -> None:
        """Append the equilibrium state u at load factor lam with its reactions, element outputs and,
        with joints, the multipliers (n_c,) and the joint reactions (drives evaluated at time t, s)."""
        outputs = asm.element_outputs(u)
        sensors = self._sensor_values(Snapshot(self.layout, u, None, None, outputs, asm))
        lam_c = np.zeros(0) if multipliers is None else np.asarray(multipliers, dtype=float)
        forces = moments = np.zeros(0)
        if asm.constraints is not None and lam_c.size:
            reactions = asm.constraints.joint_reactions(u, lam_c, t, asm.dofs)
            forces, moments = np.array([f for f, _ in reactions]), np.array([m for _, m in reactions])
        self._append({"load_factors": float(lam), "u": u, "reactions": reaction, "multipliers": lam_c,
                      "joint_forces": forces, "joint_moments": moments}, outputs, sensors)
        if log is not None:
            self.newton_logs.append(log)

    #: the same reading as a time history's (one row per load step)
    joint_reaction = TimeHistory.joint_reaction

    def _derived_series(self) -> dict[str, np.ndarray]:
        return {"load_factor": self.parameter}

    def _summary(self) -> str:
        return f"{self.meta.get('method', 'static')}, {super()._summary()}"

    def at(self, load_factor: float, occurrence: int = 0) -> "PathPoint":
        """The state at ``load_factor``: a computed point when one lies within
        :attr:`AT_TOLERANCE`, else the linear interpolation between the two computed points
        that bracket it (translations, planar rotations and reactions linearly; spatial rotations
        along the rotation between the two, R = exp(w log(R_1 R_0^T)) R_0), with a FlexmbWarning
        that names them: the interpolation error is of the order of the path's curvature times
        the step squared, and no equilibrium is solved. A path that passes the load factor
        several times (arc length past a limit point) gives its first passage, or passage number
        ``occurrence`` (0, 1, ...). A load factor the path does not reach raises ModelError."""
        import warnings

        from flexmb.checks import FlexmbWarning

        lam = np.asarray(self.parameter)
        if not lam.size:
            raise ModelError("this static path has no steps")
        target = float(load_factor)
        tol = self.AT_TOLERANCE * max(float(np.abs(lam).max()), 1.0)
        # passages: computed points within tol, and segments whose ends bracket the target
        hits: list[tuple[int, float]] = []
        for k in range(lam.size):
            if abs(lam[k] - target) <= tol:
                if not hits or hits[-1] != (k - 1, 1.0):              # not the end of the last segment
                    hits.append((k, 0.0))
            elif k + 1 < lam.size and abs(lam[k + 1] - target) > tol and (lam[k] - target) * (lam[k + 1] - target) < 0:
                hits.append((k, (target - lam[k]) / (lam[k + 1] - lam[k])))
        if not hits:
            raise ModelError(f"load factor {target:g} is not on this path (it covers {lam.min():g} .. "
                             f"{lam.max():g} in {lam.size} points); run it further")
        if not 0 <= occurrence < len(hits):
            raise ModelError(f"the path passes load factor {target:g} {len(hits)} time(s); occurrence "
                             f"{occurrence} does not exist")
        k, w = hits[occurrence]
        if w == 0.0:
            return PathPoint(float(lam[k]), self.u[k].copy(), self.reactions[k].copy(), (k, k), 0.0)
        warnings.warn(f"StaticPath.at({target:g}): interpolated linearly between the computed points "
                      f"{k} (load factor {lam[k]:.6g}) and {k + 1} ({lam[k + 1]:.6g}), weight {w:.3f}; not "
                      "an equilibrium state", FlexmbWarning, stacklevel=2)
        u0, u1 = self.u[k], self.u[k + 1]
        u = (1.0 - w) * u0 + w * u1
        layout = self.layout
        if layout is not None and layout.dim == 3 and layout.rotation_nodes.size:
            from flexmb.rotations import compose, exp_map, log_map

            rot = layout.rotations()
            between = log_map(exp_map(u1[rot]) @ np.swapaxes(exp_map(u0[rot]), 1, 2))   # (n_r, 3)
            u[rot] = compose(w * between, u0[rot])
        reactions = (1.0 - w) * self.reactions[k] + w * self.reactions[k + 1]
        return PathPoint(target, u, reactions, (k, k + 1), float(w))


@dataclass
class PathPoint:
    """A state read from a :class:`StaticPath` by :meth:`StaticPath.at`: ``load_factor``, ``u``
    and ``reactions`` (n_dof,), the computed points ``steps`` it comes from (k, k) or (k, k + 1)
    and the interpolation ``weight`` w (0: the computed point k)."""

    load_factor: float
    u: np.ndarray
    reactions: np.ndarray
    steps: tuple[int, int]
    weight: float

    @property
    def interpolated(self) -> bool:
        return self.steps[0] != self.steps[1]


class ModeShapes(Result):
    """Buckling or vibration modes as a result, one "step" per mode, for plots and files.

    ``values`` are the modes' values, named by ``meta["what"]``: critical load factors of
    buckling modes (:func:`~flexmb.analysis.buckling.linear_buckling`, "critical load factor") or
    frequencies in Hz of natural modes (:func:`~flexmb.analysis.modes.natural_modes`,
    "frequency (Hz)"); ``u`` the mode shapes (n_dof,) scaled to a largest translation of 1,
    ``reference`` the state the modes are taken about.
    """

    kind = "modes"
    parameter_name = "mode value"
    SERIES = ("values", "u", "reactions")
    #: largest mode translation drawn or exported by default, as a fraction of the model size
    DRAWN_FRACTION = 0.1

    def __init__(self, layout: ModelLayout | None = None, reference: np.ndarray | None = None,
                 what: str = "critical load factor") -> None:
        super().__init__(layout, what=what)
        self.reference = reference
        self.elements = [{} for _ in self.elements]          # a mode has no section forces
        self.sensor_values = {}                                # nor sensor histories

    def drawn_scale(self) -> float:
        """Default size (m) of the largest mode translation in pictures and exported files."""
        return self.DRAWN_FRACTION * self._layout().characteristic_length

    @classmethod
    def from_modes(cls, layout: ModelLayout, values: np.ndarray, modes: np.ndarray,
                   reference: np.ndarray, what: str) -> "ModeShapes":
        """Modes (n, n_dof) with their eigenvalues (n,) about the state ``reference`` (n_dof,)."""
        result = cls(layout, np.asarray(reference, dtype=float), what)
        trans = layout.translations().ravel()
        for value, mode in zip(values, modes):
            size = np.linalg.norm(mode[trans].reshape(-1, layout.dim), axis=1).max(initial=0.0)
            size = size if size > 0 else np.abs(mode).max(initial=1.0)
            result._append({"values": float(value), "u": mode / size, "reactions": np.zeros_like(mode)}, None)
        return result

    def shape_state(self, k: int, scale: float) -> np.ndarray:
        """DOF vector (n_dof,) of the reference state moved by ``scale`` times mode k; spatial
        rotations are composed, ``R = exp(scale hat(phi)) R_ref``."""
        layout = self._layout()
        ref = np.zeros(layout.n_dof) if self.reference is None else self.reference
        u = ref + scale * np.asarray(self.u[k])
        if layout.dim == 3 and layout.rotation_nodes.size:
            from flexmb.rotations import compose

            rot = layout.rotations()
            u[rot] = compose(scale * np.asarray(self.u[k])[rot], ref[rot])
        return u

    def _derived_series(self) -> dict[str, np.ndarray]:
        return {"values": self.parameter}


def _component(what: str, spec: str) -> tuple[str, int | None]:
    """Split an element output name ``membrane_forces[1]`` into the name and the component."""
    if not what.endswith("]"):
        return what, None
    name, _, index = what[:-1].partition("[")
    if not index.isdigit():
        raise ModelError(f"{spec!r}: a component is a number in brackets, e.g. {name}[0]")
    return name, int(index)


def _reference(initial: float, largest: float) -> float:
    """Normalising value: the initial one, else (a start at rest, or at round-off level, as a
    prescribed motion's difference-quotient velocity gives) the largest, else 1 (all zero)."""
    if initial > 1e-8 * largest:
        return initial
    return largest if largest > 0 else 1.0


RESULT_KINDS: dict[str, type[Result]] = {cls.kind: cls for cls in (TimeHistory, StaticPath, ModeShapes)}


def load_result(path: str | Path) -> Result:
    """Read a result file written by flexmb (see :mod:`flexmb.io.result_file`)."""
    from flexmb.io.result_file import read_result

    return read_result(path)
