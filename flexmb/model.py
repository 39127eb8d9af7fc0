"""The model a user builds: nodes, element groups, supports, prescribed motion, masses and loads.

A :class:`Model` is plain data. It knows nothing about DOF numbering (see :mod:`flexmb.dofs`)
or matrices (see :mod:`flexmb.assembly`); it validates what it is given and says which item
is wrong.

Conventions (also in the README):

* SI units throughout unless a validation case says otherwise.
* DOF names per node: 2D ``ux, uy`` and, on nodes carrying beams, ``rz``;
  3D ``ux, uy, uz`` and, on nodes carrying beams or shells, ``rx, ry, rz``. Planar rotations
  add up (any number of turns); a 3D node's ``rx, ry, rz`` hold the rotation vector of its rotation (principal value, |psi| <= pi,
  see :mod:`flexmb.rotations`), updated by composition; moments are spatial.
* A value given as a callable is a function of time ``t`` (s) in dynamics and of the load
  factor ``lam`` in statics; a plain number is constant in dynamics and scaled by the load
  factor in statics (proportional loading).
* Distributed loads (:meth:`Model.add_pressure` and :meth:`Model.add_surface_load` on shells,
  :meth:`Model.add_edge_load`) are dead: fixed in direction and size by the reference
  configuration, turned into nodal forces once when they are added.

Every method checks what it is given (:mod:`flexmb.checks`) and raises
:class:`~flexmb.checks.ModelError` naming the item, its value and what is allowed; a function
value that fails while an analysis runs raises :class:`~flexmb.checks.UserFunctionError` naming
the load, prescribed DOF or joint and the time or load factor.
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Callable, Sequence, Union

import numpy as np

from flexmb.checks import (CheckedFunction, FlexmbWarning, ModelError, evaluate_scalar, evaluate_vector,
                           float_array, is_real, item_name, keywords_listed, node_index, one_argument_function,
                           real, real_array)
from flexmb.elements.base import ElementGroup
from flexmb.elements.beam2d import Beam2D
from flexmb.elements.beam3d import Beam3D
from flexmb.elements.dof_names import ROTATION_NAMES, TRANSLATION_NAMES
from flexmb.elements.matrix_group import MatrixGroup
from flexmb.elements.shell3 import Shell3
from flexmb.elements.solid import Solid
from flexmb.elements.truss import Truss
from flexmb.io.shell_mesh import orientation
from flexmb.model_forces import ForceElements
from flexmb.multibody.joints import (JOINT_KINDS, SKEW_SUPPORT, Drive, Joint, RigidBody, joint_frame,
                                     skew_support_conflict, skew_support_dofs, skew_support_frame)
from flexmb.multibody.ties import Tie, default_tie_name
from flexmb.sensors import Sensor, make_sensor

Value = Union[float, Callable[[float], float]]
Vector = Union[Sequence[float], Callable[[float], Sequence[float]]]


@dataclass
class NodalValue:
    """A load (``role`` "load") or a prescribed displacement (``role`` "prescribed") on one DOF
    of one node: a number, or a function of time / load factor."""

    node: int
    dof: str
    value: Value
    role: str = "load"
    #: the distributed load (pressure, edge load) this nodal load is a share of, None for a nodal load
    distributed: str | None = None

    @property
    def label(self) -> str:
        """How errors name it, e.g. ``"load on node 3 uy"``."""
        if self.distributed is not None:
            return f"{self.distributed} at node {self.node} {self.dof}"
        return f"load on node {self.node} {self.dof}" if self.role == "load" else \
            f"prescribed node {self.node} {self.dof}"

    def at(self, t: float, statics: bool = False) -> float:
        """Value at time ``t`` (dynamics) or load factor ``t`` (statics)."""
        if isinstance(self.value, LoadShare):                 # its errors name the distributed load
            return self.value.at(t, statics)
        if callable(self.value):
            return evaluate_scalar(self.value, t, statics, self.label)
        return self.value * (t if statics else 1.0)


class SharedLoadFunction:
    """A user's load function of t (or of the load factor) behind the many nodal shares of a
    distributed load: called once per argument value, its result checked (``size`` finite
    numbers, errors naming ``what``) and kept for the other shares."""

    def __init__(self, function: Callable, what: str, size: int) -> None:
        self.function, self.what, self.size = function, what, size
        self._last: tuple[float, bool, np.ndarray] | None = None

    def at(self, x: float, statics: bool) -> np.ndarray:
        if self._last is None or self._last[:2] != (x, statics):
            if self.size == 1:
                value = np.array([evaluate_scalar(self.function, x, statics, self.what)])
            else:
                value = evaluate_vector(self.function, x, statics, self.what, self.size)
            self._last = (x, statics, value)
        return self._last[2]


class LoadShare:
    """The value of one nodal share of a distributed load given as a function: ``coefficient``
    times component ``component`` of the shared function's value."""

    def __init__(self, shared: SharedLoadFunction, coefficient: float, component: int) -> None:
        self.shared, self.coefficient, self.component = shared, float(coefficient), component

    def at(self, x: float, statics: bool) -> float:
        return self.coefficient * float(self.shared.at(x, statics)[self.component])

    def __call__(self, t: float) -> float:
        return self.at(t, False)


@dataclass
class NodalVectorLoad:
    """A force or moment vector (3,) on one 3D node whose direction depends on the node's rotation.

    kind ``"follower-force"`` / ``"follower-moment"``: the vector is given in the reference
    orientation and turns with the node (f = R F0). kind ``"semi-tangential-moment"``: a
    conservative moment whose work is ``M . c``, c the Cayley (semi-tangential) rotation vector of
    the node (Argyris et al. 1979); it is spin-conjugate to ``(I + hat(c)/2 + c c^T/4) M``.
    """

    node: int
    kind: str
    value: Vector

    def at(self, t: float, statics: bool = False) -> np.ndarray:
        if callable(self.value):
            return evaluate_vector(self.value, t, statics, f"{self.kind} load on node {self.node}", 3)
        return np.asarray(self.value, dtype=float) * (t if statics else 1.0)


@dataclass
class Model(ForceElements):
    """A finite element / multibody model in ``dim`` = 2 or 3 space dimensions (SI units).

    The modelling vocabulary (each method's help lists its parameters with units; a number
    where an array is allowed means the same value for every element, node or axis):

    Nodes
        :meth:`add_node`, :meth:`add_nodes` (positions in m; 2D ``ux uy`` (+ ``rz``), 3D
        ``ux uy uz`` (+ ``rx ry rz``) on nodes of beams, shells and bodies)
    Elements (co-rotational, one group per call, properties per element or one for all)
        :meth:`add_truss`, :meth:`add_beam2d`, :meth:`add_beam3d`, :meth:`add_shell`,
        :meth:`add_solid` (linear tetrahedra and hexahedra, small strain), :meth:`add_group` (a group
        built by hand)
    Supports and prescribed motion
        :meth:`fix` (all or some DOFs of a node), :meth:`prescribe` (a DOF's value, constant
        or f(t)), :meth:`add_symmetry_plane` (the DOFs a plane of symmetry fixes),
        :meth:`add_skew_support` (DOFs fixed in a local frame: an inclined roller, a skewed edge)
    Masses
        :meth:`add_point_mass` (mass and rotary inertia at a node); element masses come with
        ``rho_A``, ``rho_I``, ``rho``
    Loads (numbers, or functions of t in dynamics / of the load factor in statics)
        :meth:`add_load` (a nodal force or moment on one DOF), :meth:`add_follower_force`,
        :meth:`add_follower_moment`, :meth:`add_semi_tangential_moment` (3D),
        :meth:`add_pressure` (shells), :meth:`add_surface_load` (shells, a fixed direction),
        :meth:`add_edge_load`
    Rigid bodies and joints
        :meth:`add_rigid_body`, :meth:`add_joint` (revolute, spherical, universal,
        cylindrical, prismatic, fixed, point-on-line; optionally driven), :meth:`attach`
        (an FE node welded or pinned to a body)
    Reduced flexible bodies
        :meth:`add_modal_body` (a modal body on a floating frame, from
        :class:`~flexmb.cms.modal_body.ModalBodyData`), :meth:`tie` (a node to a node of a
        modal body: joints and loads act on the body there)
    Springs, dampers and damping (:class:`~flexmb.model_forces.ForceElements`)
        :meth:`add_spring`, :meth:`add_damper`, :meth:`add_spring_damper` (point to point,
        between nodes, bodies with offsets and the ground), :meth:`add_joint_spring_damper`
        (on a revolute joint's angle or a prismatic joint's slide), :meth:`add_bushing`,
        :meth:`set_rayleigh_damping` (alpha M + beta K per element group), :meth:`add_user_force`
        (forces given by a function of the points' positions and velocities), :meth:`add_body_load`
        (a force at any point of a rigid body, constant or f(t), and a moment)
    Gravity
        :meth:`set_gravity`
    Outputs
        :meth:`add_sensor` (positions, velocities, accelerations of points, orientations, joint
        coordinates, element outputs; recorded every step)
    Files
        :meth:`save` (the whole model to an HDF5 model file; ``fm.load_model`` rebuilds it)

    Then ``fm.Assembly(model)`` numbers the DOFs, and the analyses take the model or its
    assembly: ``fm.integrate`` (dynamics; ``fm.consistent_initial_state`` for initial
    velocities), ``fm.load_control``, ``fm.arc_length`` (statics), ``fm.linear_buckling``,
    ``fm.natural_modes``, ``fm.linearize``.
    """

    dim: int = 2
    coordinates: np.ndarray = field(init=False)
    groups: list[ElementGroup] = field(default_factory=list, init=False)
    prescribed: dict[tuple[int, str], NodalValue] = field(default_factory=dict, init=False)
    clamped: set[int] = field(default_factory=set, init=False)
    loads: list[NodalValue] = field(default_factory=list, init=False)
    vector_loads: list[NodalVectorLoad] = field(default_factory=list, init=False)
    point_masses: list[tuple[int, float, float]] = field(default_factory=list, init=False)
    bodies: list[RigidBody] = field(default_factory=list, init=False)
    #: drawn shapes given to rigid bodies, by body node (pictures and exports only)
    body_shapes: dict[int, "flexmb.multibody.body_shapes.BodyShape"] = field(default_factory=dict, init=False,
                                                                             repr=False)
    joints: list[Joint] = field(default_factory=list, init=False)
    ties: list[Tie] = field(default_factory=list, init=False)
    sensors: list[Sensor] = field(default_factory=list, init=False)
    gravity: np.ndarray = field(init=False)
    #: the force-element groups by kind (ground side, rotations), index into ``groups``
    force_groups: dict[tuple, int] = field(default_factory=dict, init=False, repr=False)
    #: counts the changes made through the methods; an Assembly records it when it is built
    #: so that an analysis can refuse an Assembly of an older state of the model
    revision: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.dim, (int, np.integer)) or isinstance(self.dim, bool) or self.dim not in (2, 3):
            raise ModelError(f"Model dim must be 2 or 3 (an integer), got {self.dim!r}")
        self.dim = int(self.dim)
        self.coordinates = np.zeros((0, self.dim))
        self.gravity = np.zeros(self.dim)

    # ------------------------------------------------------------------ nodes
    @property
    def n_nodes(self) -> int:
        return len(self.coordinates)

    @keywords_listed
    def add_node(self, position: Sequence[float]) -> int:
        """Add one node at ``position`` (dim,) in m; returns its index (int)."""
        what = f"add_node: the position of node {self.n_nodes}"
        p = float_array(position, what)
        if p.shape != (self.dim,):
            raise ModelError(f"{what} must have {self.dim} coordinates (m), got {p.tolist()} "
                             f"(shape {p.shape})")
        return int(self.add_nodes(p[None, :])[0])

    @keywords_listed
    def add_nodes(self, positions: np.ndarray) -> np.ndarray:
        """Add nodes at ``positions`` (n, dim) in m (one row per node); returns their indices (n,)."""
        positions = float_array(positions, "add_nodes: the node positions")
        if positions.ndim == 1:
            positions = positions[None, :]
        if positions.ndim != 2 or positions.shape[1] != self.dim:
            raise ModelError(f"add_nodes: node positions must have shape (n, {self.dim}) ({self.dim} "
                             f"coordinates each, m), got shape {positions.shape}")
        if not np.all(np.isfinite(positions)):
            bad = int(np.flatnonzero(~np.all(np.isfinite(positions), axis=1))[0])
            raise ModelError(f"node {self.n_nodes + bad} has a non-finite coordinate {positions[bad].tolist()}")
        first = self.n_nodes
        self.coordinates = np.vstack([self.coordinates, positions])
        self.revision += 1
        return np.arange(first, self.n_nodes)

    def _check_node(self, node: int, what: str) -> int:
        return node_index(node, self.n_nodes, what)

    @keywords_listed
    def dof_names(self, rotations: bool) -> tuple[str, ...]:
        """DOF names of a node with or without rotational DOFs."""
        return TRANSLATION_NAMES[self.dim] + (ROTATION_NAMES[self.dim] if rotations else ())

    def _check_dof(self, dof: str, what: str) -> str:
        if not isinstance(dof, str) or dof not in self.dof_names(True):
            raise ModelError(f"{what}: unknown DOF {dof!r}; a {self.dim}D node has "
                             f"{', '.join(self.dof_names(True))}")
        return dof

    def _value(self, value: Value, what: str) -> Value:
        """A number (checked finite) or a function of one argument (t or lam)."""
        if callable(value):
            return one_argument_function(value, what)
        return real(value, f"{what}: the value")

    # --------------------------------------------------------------- elements
    @keywords_listed
    def add_group(self, group: ElementGroup) -> ElementGroup:
        """Add an element ``group`` built by hand (a :class:`~flexmb.elements.truss.Truss`,
        Beam2D, Beam3D or Shell3); its connectivity must refer to existing nodes, each element
        once. The ``add_truss`` ... ``add_shell`` methods build and add one."""
        if not isinstance(group, ElementGroup):
            raise ModelError("add_group needs an element group (Truss, Beam2D, Beam3D, Shell3), got "
                             f"{type(group).__name__}")
        if any(g is group for g in self.groups):
            raise ModelError(f"element group {group.name!r} is already in the model (added twice)")
        if group.dim != self.dim:
            raise ModelError(f"element group {group.name!r} is {group.dim}D, the model is {self.dim}D")
        if group.n_elements == 0:                # the kernels take empty batches; a model's group is a mistake
            raise ModelError(f"element group {group.name!r}: connectivity is empty; a group needs at least one "
                             f"element, a row of {group.n_nodes} node indices")
        conn = group.connectivity
        bad = np.flatnonzero(np.any((conn < 0) | (conn >= self.n_nodes), axis=1))
        if bad.size:
            e = int(bad[0])
            raise ModelError(f"element {e} of group {group.name!r} refers to node(s) "
                             f"{conn[e].tolist()}, the model has nodes 0..{self.n_nodes - 1}")
        X = self.coordinates[conn]                                   # (n_el, nn, dim)
        if isinstance(group, Shell3):                # the one triangle element (a MatrixGroup of 3 nodes is not)
            _check_triangle_areas(X, conn, group.name)
        elif group.n_nodes == 2 and not isinstance(group, MatrixGroup):     # its [i, i] elements are blocks
            lengths = np.linalg.norm(X[:, -1] - X[:, 0], axis=-1)
            if np.any(lengths <= 0.0):
                e = int(np.flatnonzero(lengths <= 0.0)[0])
                raise ModelError(f"element {e} of group {group.name!r} has zero length "
                                 f"(nodes {conn[e].tolist()} coincide)")
        _check_unique_elements(conn, group.name)
        self.groups.append(group)
        self.revision += 1
        return group

    @keywords_listed
    def add_truss(self, connectivity: np.ndarray, EA: float | np.ndarray, rho_A: float | np.ndarray = 0.0,
                  mass: str = "lumped", name: str = "truss") -> Truss:
        """Add a group of co-rotational bars (:class:`~flexmb.elements.truss.Truss`); returns it.

        Parameters
        ----------
        connectivity : (n_el, 2) node indices of each bar.
        EA : axial stiffness (N), a number or one per element (n_el,).
        rho_A : mass per length (kg/m), a number or one per element; default 0 (massless).
        mass : ``"lumped"`` (default) or ``"consistent"``.
        name : the group's name (results and pictures use it), default ``"truss"``.
        """
        return self.add_group(Truss(connectivity, self.dim, EA, rho_A, mass, name))

    @keywords_listed
    def add_beam2d(self, connectivity: np.ndarray, EA: float | np.ndarray, EI: float | np.ndarray,
                   rho_A: float | np.ndarray = 0.0, rho_I: float | np.ndarray = 0.0,
                   mass: str = "lumped", name: str = "beam2d", second_order: bool = False) -> Beam2D:
        """Add a group of planar co-rotational beams (:class:`~flexmb.elements.beam2d.Beam2D`,
        2D models); returns it.

        Parameters
        ----------
        connectivity : (n_el, 2) node indices of each beam.
        EA : axial stiffness (N), a number or one per element (n_el,).
        EI : bending stiffness (N m^2), a number or one per element.
        rho_A : mass per length (kg/m), a number or one per element; default 0.
        rho_I : rotary inertia per length (kg m), a number or one per element; default 0.
        mass : ``"lumped"`` (default), ``"consistent"`` or ``"cubic"`` (Hermitian, Meijaard's
            element: accurate with few elements per member).
        name : the group's name, default ``"beam2d"``.
        second_order : include the bowing (second-order) term of the axial strain; default False.
        """
        if self.dim != 2:
            raise ModelError(f"add_beam2d needs a 2D model, this one is {self.dim}D")
        return self.add_group(Beam2D(connectivity, EA, EI, rho_A, rho_I, mass, name, second_order))

    @keywords_listed
    def add_beam3d(self, connectivity: np.ndarray, EA: float | np.ndarray, GJ: float | np.ndarray,
                   EI_y: float | np.ndarray, EI_z: float | np.ndarray,
                   GA_ky: float | np.ndarray = np.inf, GA_kz: float | np.ndarray = np.inf,
                   rho_A: float | np.ndarray = 0.0, rho_I: Sequence[float] | np.ndarray = (0.0, 0.0, 0.0),
                   y_axis: Sequence[float] | np.ndarray | None = None, second_order: bool = True,
                   mass: str = "lumped", name: str = "beam3d") -> Beam3D:
        """Add a group of spatial co-rotational beams (:class:`~flexmb.elements.beam3d.Beam3D`,
        Meijaard's generalized strains; 3D models); returns it.

        Parameters
        ----------
        connectivity : (n_el, 2) node indices p, q of each beam.
        EA : axial stiffness (N), a number or one per element (n_el,).
        GJ : torsional stiffness (N m^2), a number or one per element.
        EI_y, EI_z : bending stiffness about the section's y and z axes (N m^2), each a number or
            one per element.
        GA_ky, GA_kz : shear stiffness in y and z (N), a number or one per element; default
            infinite (no shear deformation).
        rho_A : mass per length (kg/m), a number or one per element; default 0.
        rho_I : section mass moments of inertia per length about its x (polar), y and z axes
            (kg m): three numbers (3,) for all elements or one row per element (n_el, 3);
            default zero.
        y_axis : direction of the section's y axis, (3,) for all elements or (n_el, 3),
            projected normal to each element; default ``e_z x e_x`` normalised (the global y
            axis for elements along z).
        second_order : include the second-order terms of the generalized strains; default True.
        mass : ``"lumped"`` (default) or ``"consistent"`` translational mass, or ``"cubic"``
            (Hermitian; linear analyses about the reference state only).
        name : the group's name, default ``"beam3d"``.
        """
        if self.dim != 3:
            raise ModelError(f"add_beam3d needs a 3D model, this one is {self.dim}D")
        group = self.add_group(Beam3D(connectivity, EA, GJ, EI_y, EI_z, GA_ky=GA_ky, GA_kz=GA_kz, rho_A=rho_A,
                                      rho_I=rho_I, y_axis=y_axis, second_order=second_order, mass=mass,
                                      name=name))
        try:
            group.section_frames(self.coordinates[group.connectivity])
        except ValueError as exc:
            self.groups.pop()
            raise ModelError(str(exc)) from None
        return group

    @keywords_listed
    def add_shell(self, connectivity: np.ndarray, E: float | np.ndarray, nu: float | np.ndarray,
                  thickness: float | np.ndarray, rho: float | np.ndarray = 0.0, membrane: str = "opt",
                  mass: str = "lumped", name: str | None = None) -> Shell3:
        """Add a group of co-rotational flat triangular shells
        (:class:`~flexmb.elements.shell3.Shell3`, 3D models); returns it.

        Parameters
        ----------
        connectivity : (n_el, 3) node indices of each triangle.
        E : Young's modulus (Pa), a number or one per element (n_el,).
        nu : Poisson's ratio (-), a number or one per element.
        thickness : thickness (m), a number or one per element.
        rho : density (kg/m^3), a number or one per element; default 0.
        membrane : ``"opt"`` (default, optimal membrane triangle) or ``"cst"`` (constant strain).
        mass : ``"lumped"`` (default) or ``"consistent"``.
        name : the group's name, default ``"shell"``.

        The nodes
        of each triangle in counter-clockwise order about the side the shell's normal E3 points
        to (the generators of :mod:`flexmb.io.shell_mesh` give them so). Shell nodes carry
        ``ux uy uz rx ry rz`` like the nodes of 3D beams, so beams and shells can share nodes.
        """
        if self.dim != 3:
            raise ModelError(f"add_shell needs a 3D model, this one is {self.dim}D")
        name = "shell" if name is None else name
        return self.add_group(Shell3(connectivity, E, nu, thickness, rho=rho, membrane=membrane, mass=mass,
                                     name=name))

    @keywords_listed
    def add_solid(self, cells: np.ndarray, E: float | np.ndarray, nu: float | np.ndarray,
                  rho: float | np.ndarray = 0.0, kind: str | None = None, name: str | None = None) -> Solid:
        """Add a group of isotropic linear elastic solids (:class:`~flexmb.elements.solid.Solid`,
        3D models, small strain); returns it.

        Parameters
        ----------
        cells : (n_el, n_nodes) node indices of each cell in VTK (meshio) order.
        E : Young's modulus (Pa), a number or one per element (n_el,).
        nu : Poisson's ratio (-), in (-1, 0.5), a number or one per element.
        rho : density (kg/m^3), a number or one per element; default 0.
        kind : ``"tet4"``, ``"tet10"``, ``"hex8"``, ``"hex20"``, ``"wedge6"``, ``"wedge15"``; default by nodes/cell.
        name : the group's name, default ``"solid"``.

        Solid nodes carry ``ux uy uz`` only; on nodes shared with beams or shells the rotations
        are those elements' alone. An inverted or degenerate cell is a ModelError naming it.
        """
        if self.dim != 3:
            raise ModelError(f"add_solid needs a 3D model, this one is {self.dim}D")
        group = Solid(cells, E, nu, rho=rho, kind=kind, name="solid" if name is None else name)
        conn = group.connectivity
        if conn.min() >= 0 and conn.max() < self.n_nodes:         # else add_group names the bad node
            group.check_geometry(self.coordinates[conn])
        return self.add_group(group)

    # ------------------------------------------------------- supports/motion
    @keywords_listed
    def fix(self, node: int, dofs: Sequence[str] | str = "all") -> None:
        """Fix (clamp) DOFs of ``node`` (a node index) at zero: ``dofs`` ``"all"`` (default:
        translations and, if the node ends up carrying rotations, rotations too), one DOF name
        such as ``"uy"``, or a list of names."""
        node = self._check_node(node, "fix")
        if isinstance(dofs, str) and dofs == "all":
            self.clamped.add(node)
            self.revision += 1
            return
        names = [dofs] if isinstance(dofs, str) else list(dofs) if isinstance(dofs, Iterable) else None
        if names is None or not all(isinstance(d, str) for d in names):
            raise ModelError(f"fix node {node}: dofs must be \"all\", a DOF name or a list of names such as "
                             f"[\"ux\", \"uy\"] (a {self.dim}D node has {', '.join(self.dof_names(True))}), got "
                             f"{dofs!r}")
        for dof in names:
            self.prescribe(node, dof, 0.0)

    @keywords_listed
    def prescribe(self, node: int, dof: str, value: Value) -> None:
        """Prescribe DOF ``dof`` (e.g. ``"ux"``) of ``node``: its displacement (m) or rotation
        (rad) ``value``, a number or f(t) (f(lam) in statics); non-zero values are planar or
        translational only (3D rotations can only be fixed)."""
        node = self._check_node(node, "prescribe")
        dof = self._check_dof(dof, f"prescribe node {node}")
        value = self._value(value, f"prescribe: node {node} {dof}")
        if self.dim == 3 and dof in ROTATION_NAMES[3] and (callable(value) or value != 0.0):
            # a 3D node's rotation vector is updated by composing spins, not set by value
            raise ModelError(f"prescribe: node {node} {dof}: a spatial rotation can only be fixed (value 0), got "
                             f"{value!r}; turn a node through a driven revolute joint (add_joint(..., drive=f))")
        self.prescribed[(node, dof)] = NodalValue(node, dof, value, "prescribed")
        self.revision += 1

    @keywords_listed
    def add_symmetry_plane(self, nodes: Sequence[int], normal: str) -> None:
        """Symmetry supports on ``nodes`` lying in a coordinate plane (3D) or on a coordinate line (2D).

        ``normal``: ``"x"``, ``"y"`` or ``"z"``, the axis normal to the plane of symmetry. A
        deformation mirror-symmetric about that plane has there no displacement along the normal
        and no rotation about an axis in the plane (a rotation vector is mirrored as an axial
        vector: its in-plane components change sign), so these DOFs are fixed at zero:

        ======  =================  ===========
        normal  3D                 2D
        ======  =================  ===========
        x       ux, ry, rz         ux, rz
        y       uy, rx, rz         uy, rz
        z       uz, rx, ry         (not in 2D)
        ======  =================  ===========

        The rotations are fixed on the nodes that carry rotations when this is called (nodes of
        beams, shells and rigid bodies): add the elements first. ModelError names a node that is
        not in the plane (1e-9 of the model's size) or given twice.
        """
        what = "add_symmetry_plane"
        axes = TRANSLATION_NAMES[self.dim]
        if normal not in ("x", "y", "z")[:self.dim]:
            raise ModelError(f"{what}: normal must be one of {', '.join(repr(a[1]) for a in axes)} (the axis normal "
                             f"to the {'plane' if self.dim == 3 else 'line'} of symmetry), got {normal!r}")
        k = "xyz".index(normal)
        chosen = _indices(nodes, self.n_nodes, f"{what} normal to {normal}: nodes", "node")
        level = self.coordinates[chosen, k]                              # (n,) m
        off = np.abs(level - level[0])
        if np.any(off > 1e-9 * self.characteristic_length):
            bad = int(np.argmax(off))
            raise ModelError(f"{what} normal to {normal}: node {int(chosen[bad])} is at {normal} = {level[bad]:.6g} m, "
                             f"node {int(chosen[0])} at {normal} = {level[0]:.6g} m; the nodes of a symmetry plane "
                             f"share their {normal} coordinate")
        rotating = np.zeros(self.n_nodes, dtype=bool)
        for g in self.groups:
            if g.has_rotations:
                rotating[g.connectivity.ravel()] = True
        rotating[[b.node for b in self.bodies]] = True
        rotations = ROTATION_NAMES[self.dim]
        in_plane = [rotations[j] for j in range(3) if j != k] if self.dim == 3 else list(rotations)
        for node in chosen.tolist():
            for dof in [axes[k]] + (in_plane if rotating[node] else []):
                self.prescribe(node, dof, 0.0)

    @keywords_listed
    def add_skew_support(self, node: int, frame: float | np.ndarray, dofs: Sequence[str] | str,
                         name: str | None = None) -> Joint:
        """Fix DOFs of ``node`` in a local frame: an inclined roller, a node on a skewed plate edge.

        ``frame``: the local axes e_1, e_2, e_3 as the columns of a rotation matrix (3, 3) (2D: the
        angle of e_1 from x in rad, or a (2, 2) matrix); orthonormal and right-handed to 1e-6.
        ``dofs``: the local DOFs held at zero, ``"u1 u2 u3 r1 r2 r3"`` (2D ``"u1 u2 r3"``), a
        space-separated string or a list: u_i the displacement along e_i (m), r_i the rotation
        about e_i. A 3D rotation r_i keeps the turned local axis e_k normal to the fixed axis e_j
        ((i, j, k) cyclic), which to first order is the rotation vector's component along e_i and
        for large rotations a hinge's condition (fixing r1 and r2 leaves rotations about e_3 free).

        The support is a constraint to the ground with Lagrange multipliers (a joint of kind
        ``"skew support"`` in ``model.joints``; :mod:`flexmb.multibody.joints`): it works in statics,
        dynamics, natural modes and ``linearize``; ``history.joint_reaction(name)`` gives its force
        (and moment) on the node in the local frame. Components (CMS, modal bodies) and
        ``linear_buckling`` refuse it. ``name`` for messages and results (default ``"skew support
        node k"``). ModelError for a DOF fixed both ways (with :meth:`fix` too), a second skew
        support on the node, or rotations on a node without them. Returns the joint.
        """
        node = self._check_node(node, "add_skew_support")
        what = f"add_skew_support at node {node}"
        local = skew_support_frame(self.dim, frame, what)
        fixed = skew_support_dofs(self.dim, dofs, what)
        name = item_name(name, f"skew support node {node}", what)
        other = next((j for j in self.joints if j.kind == SKEW_SUPPORT and j.b == node), None)
        if other is not None:
            raise ModelError(f"{what}: node {node} has a skew support already ({other.name!r}); give all its "
                             "local DOFs in one call")
        joint = Joint(SKEW_SUPPORT, name, -1, node, np.r_[self.coordinates[node], np.zeros(3 - self.dim)],
                      local, None, fixed)
        # rotations decided by elements added later are checked again when the DOFs are numbered
        globally = self.dof_names(True) if node in self.clamped else [d for n, d in self.prescribed if n == node]
        why = skew_support_conflict(joint, self.dim, True, globally)
        if why is not None:
            raise ModelError(why)
        self.joints.append(joint)
        self.revision += 1
        return joint

    # ------------------------------------------------------- masses and loads
    @keywords_listed
    def add_point_mass(self, node: int, mass: float, inertia: float = 0.0) -> None:
        """Add a point ``mass`` (kg) at ``node`` and, on nodes with rotations, a rotary
        ``inertia`` (kg m^2; 3D: the same about every axis); default 0."""
        node = self._check_node(node, "add_point_mass")
        mass = real(mass, f"add_point_mass at node {node}: mass (kg)", low=0.0)
        inertia = real(inertia, f"add_point_mass at node {node}: inertia (kg m^2)", low=0.0)
        self.point_masses.append((node, mass, inertia))
        self.revision += 1

    @keywords_listed
    def add_load(self, node: int, dof: str, value: Value) -> None:
        """Add a nodal force (N) or moment (N m) ``value`` on DOF ``dof`` (e.g. ``"uy"``,
        ``"rz"``) of ``node``, in global axes: a number (constant in dynamics, scaled by the load
        factor in statics) or a function f(t) (f(lam) in statics)."""
        node = self._check_node(node, "add_load")
        dof = self._check_dof(dof, f"add_load node {node}")
        self.loads.append(NodalValue(node, dof, self._value(value, f"add_load: load on node {node} {dof}")))
        self.revision += 1

    @keywords_listed
    def add_follower_force(self, node: int, force: Vector) -> None:
        """Add a ``force`` (3,) in N on ``node`` (3D, a node with rotations), given in the node's
        reference orientation and turning with the node; three numbers or f(t) returning them."""
        self._add_vector_load(node, "follower-force", force)

    @keywords_listed
    def add_follower_moment(self, node: int, moment: Vector) -> None:
        """Add a ``moment`` (3,) in N m on ``node`` (3D, a node with rotations), given in the node's
        reference orientation and turning with the node; three numbers or f(t) returning them."""
        self._add_vector_load(node, "follower-moment", moment)

    @keywords_listed
    def add_semi_tangential_moment(self, node: int, moment: Vector) -> None:
        """Add a conservative semi-tangential ``moment`` (3,) in N m on ``node`` (3D), as in
        Meijaard's shaft buckling; three numbers or f(t) returning them."""
        self._add_vector_load(node, "semi-tangential-moment", moment)

    @keywords_listed
    def add_pressure(self, group: Shell3 | str, p: Value | np.ndarray, elements: Sequence[int] | None = None) -> None:
        """Dead pressure p (Pa) on shell elements of ``group`` (the group or its name).

        A dead load: its direction is the reference normal E3 of each element (p > 0 pushes
        along +E3, see :mod:`flexmb.elements.shell3`), its size p times the reference area A;
        neither follows the deformation. Each element's ``p A E3`` goes to its three nodes in
        equal thirds (the consistent load of linear shape functions), as nodal forces of the
        load API (:meth:`add_load`). ``p``: a number, one value per selected element, or a
        function of time t (of the load factor in statics), as other loads. ``elements``: the
        loaded elements of the group (default all).

        The loaded triangles must be oriented consistently (neighbours run their shared edge in
        opposite directions, so that their normals point to the same side): otherwise their
        pressures would push opposite ways and largely cancel. ModelError names the first pair
        that is not; :func:`flexmb.io.shell_mesh.orient` renumbers a mesh consistently. Edges of
        more than two loaded triangles (a stiffener on a skin) cannot be checked: FlexmbWarning.
        """
        what, chosen, conn = self._loaded_shells(group, elements, "add_pressure", "pressure")
        check = orientation(conn)
        unchecked = ""
        if len(check.non_manifold):
            i, j = check.non_manifold[0]
            unchecked = (f"{len(check.non_manifold)} edge(s) are shared by more than two loaded triangles (first: "
                         f"nodes {i}, {j}), across which the orientation is not checked")
        if not check.consistent:
            e1, e2 = chosen[check.conflicts[0]]
            i, j = check.conflict_edges[0]
            raise ModelError(f"{what}: elements {e1} and {e2} are oriented oppositely (both run their shared edge "
                             f"from node {i} to node {j}), so their normals E3 point to opposite sides and the "
                             f"pressure would push them opposite ways ({len(check.conflicts)} such pair(s) of "
                             "neighbours); number the nodes of every triangle counter-clockwise about the same "
                             "side, e.g. with flexmb.io.shell_mesh.orient(triangles) before add_shell"
                             + (f"; also {unchecked}" if unchecked else ""))
        if unchecked:
            warnings.warn(f"{what}: {unchecked}", FlexmbWarning, stacklevel=3)
        X = self.coordinates[conn]                                       # (n_sel, 3, 3)
        area_normal = 0.5 * np.cross(X[:, 1] - X[:, 0], X[:, 2] - X[:, 0])   # A E3, (n_sel, 3)
        if callable(p):
            per_element, function = np.ones(len(chosen)), one_argument_function(p, what)
        else:
            per_element = np.broadcast_to(_per_element_value(p, len(chosen), f"{what}: p (Pa)"), len(chosen))
            function = None
        nodal = np.zeros((self.n_nodes, 3))
        np.add.at(nodal, conn.ravel(), np.repeat((per_element[:, None] * area_normal) / 3.0, 3, axis=0))
        self._add_nodal_forces(nodal, function, 1, what)

    @keywords_listed
    def add_surface_load(self, group: Shell3 | str, traction: Vector, elements: Sequence[int] | None = None) -> None:
        """Dead surface load in a fixed global direction, N/m^2 of reference area, on shell
        elements of ``group`` (the group or its name).

        Unlike :meth:`add_pressure`, the direction does not depend on the element's normal: each
        element carries ``traction A`` (A its reference area, unsigned, so the triangles' node
        order does not matter), going to its three nodes in equal thirds (the consistent load of
        linear shape functions) as nodal forces of the load API (:meth:`add_load`); the total is
        ``traction`` times the loaded area. A shell's self-weight without its mass (a static
        model with ``rho = 0``, or a load step) is ``traction = rho h g`` (rho kg/m^3, h m, g the
        gravity vector m/s^2). ``traction``: three components (3,) in N/m^2, or a function of
        time t (of the load factor in statics) returning them; a number is scaled by the load
        factor in statics, as other loads. ``elements``: the loaded elements of the group
        (default all).
        """
        what, _, conn = self._loaded_shells(group, elements, "add_surface_load", "surface load")
        X = self.coordinates[conn]                                       # (n_sel, 3, 3)
        area = 0.5 * np.linalg.norm(np.cross(X[:, 1] - X[:, 0], X[:, 2] - X[:, 0]), axis=1)   # (n_sel,) m^2
        share = np.zeros(self.n_nodes)
        np.add.at(share, conn.ravel(), np.repeat(area / 3.0, 3))         # (n_nodes,) m^2 per node
        if callable(traction):
            function = one_argument_function(traction, f"{what}: traction")
            self._add_nodal_forces(np.repeat(share[:, None], 3, axis=1), function, 3, what)
        else:
            t = real_array(traction, f"{what}: traction (N/m^2, three components)", (3,))
            self._add_nodal_forces(share[:, None] * t[None, :], None, 1, what)

    @keywords_listed
    def add_edge_load(self, nodes_along_edge: Sequence[int], force_per_length: Vector) -> None:
        """Dead line load (N/m, a vector of the model's dimension) along an edge of the mesh.

        ``nodes_along_edge``: the nodes of the edge in order, consecutive nodes joined by an
        element side (a shell triangle's side or a bar or beam); the load is uniform along the
        reference length and goes to the nodes of each segment of length l in halves, f l / 2
        each (the consistent load of linear interpolation); a closed edge (a ring) ends with its
        first node again. ``force_per_length``: fixed components, or a function of time t (of
        the load factor in statics) returning them.
        """
        what = "add_edge_load"
        nodes = _indices(nodes_along_edge, self.n_nodes, f"{what}: nodes_along_edge", "node", unique=False)
        if nodes.size < 2:
            raise ModelError(f"{what}: nodes_along_edge needs at least 2 nodes in order along the edge, "
                             f"got {nodes.tolist()}")
        segments = np.column_stack([nodes[:-1], nodes[1:]])             # (n_seg, 2)
        joined = _is_element_side(segments, self.groups)
        if not np.all(joined):
            k = int(np.flatnonzero(~joined)[0])
            raise ModelError(f"{what}: nodes {segments[k, 0]} and {segments[k, 1]} (positions {k} and {k + 1} "
                             "of nodes_along_edge) are not joined by the side of an element; give the "
                             "edge's nodes in order along it")
        lengths = np.linalg.norm(self.coordinates[segments[:, 1]] - self.coordinates[segments[:, 0]], axis=1)
        share = np.zeros(self.n_nodes)
        np.add.at(share, segments.ravel(), np.repeat(0.5 * lengths, 2))  # (n_nodes,), m
        if callable(force_per_length):
            function = one_argument_function(force_per_length, f"{what}: force_per_length")
            self._add_nodal_forces(np.repeat(share[:, None], self.dim, axis=1), function, self.dim,
                                   f"edge load along nodes {nodes[0]}..{nodes[-1]}")
        else:
            f = real_array(force_per_length, f"{what}: force_per_length (N/m)", (self.dim,))
            self._add_nodal_forces(share[:, None] * f[None, :], None, 1,
                                   f"edge load along nodes {nodes[0]}..{nodes[-1]}")

    def _shell_group(self, group: Shell3 | str, what: str) -> Shell3:
        """The model's shell group given as the group or its name, else ModelError."""
        shells = [g for g in self.groups if isinstance(g, Shell3)]
        found = [g for g in shells if g is group or (isinstance(group, str) and g.name == group)]
        if not found:
            given = repr(group) if isinstance(group, str) else f"{type(group).__name__} {getattr(group, 'name', '')!r}"
            raise ModelError(f"{what}: {given} is not a shell group of this model; its shell groups: "
                             f"{', '.join(repr(g.name) for g in shells) or 'none'}")
        if len(found) > 1:
            raise ModelError(f"{what}: several shell groups are named {group!r}; pass the group itself")
        return found[0]

    def _loaded_shells(self, group: Shell3 | str, elements: Sequence[int] | None, caller: str, load: str
                       ) -> tuple[str, np.ndarray, np.ndarray]:
        """For ``caller``, the description of a distributed load on shell group ``group`` for
        messages, the indices (n_sel,) of its loaded ``elements`` (default all) in the group and
        their connectivity (n_sel, 3)."""
        shell = self._shell_group(group, caller)
        what = f"{load} on group {shell.name!r}"
        if elements is None:
            chosen = np.arange(shell.n_elements)
        else:
            chosen = _indices(elements, shell.n_elements, f"{what}: elements", "element")
        return what, chosen, shell.connectivity[chosen]

    def _add_nodal_forces(self, nodal: np.ndarray, function: Callable | None, size: int, what: str) -> None:
        """Add the nodal forces (n_nodes, dim) N of the distributed load ``what`` as loads:
        constants, or, with ``function`` (a user's function of t returning ``size`` numbers),
        column k times component k of it (size ``dim``) or times its one value (size 1), the
        function called once per time value. Shares on supported DOFs go into the reactions
        without a warning (a pressure on a clamped edge is normal)."""
        shared = SharedLoadFunction(function, what, size) if function is not None else None
        nodes, axes = np.nonzero(nodal)
        for node, k in zip(nodes.tolist(), axes.tolist()):
            value = nodal[node, k] if shared is None else LoadShare(shared, nodal[node, k], k if size > 1 else 0)
            self.loads.append(NodalValue(node, TRANSLATION_NAMES[self.dim][k], value, distributed=what))
        self.revision += 1

    def _add_vector_load(self, node: int, kind: str, value: Vector) -> None:
        node = self._check_node(node, f"{kind} load")
        what = f"{kind} load at node {node}"
        if self.dim != 3:
            raise ModelError(f"{what}: only for 3D models")
        if callable(value):
            value = one_argument_function(value, what)
        else:
            if np.shape(value) != (3,):
                raise ModelError(f"{what}: need 3 components, got {np.shape(value)}")
            value = real_array(value, what, (3,))
        self.vector_loads.append(NodalVectorLoad(node, kind, value))
        self.revision += 1

    # ------------------------------------------------------- bodies and joints
    @keywords_listed
    def add_rigid_body(self, position: Sequence[float], mass: float, inertia: float | Sequence,
                       name: str | None = None, shape: object = None) -> RigidBody:
        """Add a rigid body with its centre of mass at ``position`` (dim,) in m, ``mass`` (kg)
        and ``inertia`` about the centre of mass: 2D J_z (kg m^2), 3D the tensor (3, 3) (or its
        diagonal (3,)) in the reference orientation; ``name`` for messages and joints (default
        ``"body k"``). Its node carries translations and rotations; returns the
        :class:`~flexmb.multibody.joints.RigidBody` (``body.node`` is its node).

        The inertia must be one a body can have: symmetric, principal moments non-negative and
        each at most the sum of the other two (J1 <= J2 + J3, the triangle inequality).

        ``shape``: how pictures and exports draw the body, a surface in body axes (m, from the
        centre of mass, along the global axes in the reference configuration): a file name of a
        surface mesh meshio reads (.stl, .obj, .vtk, ...), a pyvista surface, a meshio mesh, or
        ``(points, faces)`` (points (n, 3), in 2D also (n, 2); faces: point-index lists); None: a
        link through its joint points, as wide as its inertia says
        (:mod:`flexmb.multibody.body_shapes`)."""
        name = item_name(name, f"body {len(self.bodies)}", "add_rigid_body")
        what = f"rigid body {name!r}"
        position = real_array(position, f"{what}: position (m)", (self.dim,))
        if not (is_real(mass) and 0.0 < float(mass) < np.inf):
            raise ModelError(f"{what}: mass {repr(mass) if isinstance(mass, str) else mass} kg must be a "
                             "finite number > 0")
        mass = float(mass)
        J = _inertia(inertia, self.dim, what)
        from flexmb.multibody.body_shapes import user_shape

        drawn = None if shape is None else user_shape(shape, what)
        body = RigidBody(name, self.add_node(position), mass, J)
        if drawn is not None:
            self.body_shapes[body.node] = drawn
        self.bodies.append(body)
        return body

    @keywords_listed
    def add_modal_body(self, data, node: int | None = None, stiffening: bool = True, name: str | None = None,
                       damping_ratios: float | Sequence[float] | None = None):
        """Add a modal (reduced) flexible body on a floating frame (:mod:`flexmb.cms.floating_frame`).

        ``data``: its :class:`~flexmb.cms.modal_body.ModalBodyData` (the reduced basis and the
        inertia invariants of its FE model, computed once). ``node``: the node of this model that
        carries the body frame (its translations and rotation are the frame's; joints, supports,
        drives and loads at the body's frame act there); None adds a node at the frame node's
        reference position in the body's FE model. The modal coordinates q (kg^1/2 m, mass-normalised
        modes) are DOFs of their own, labelled ``q1, q2, ...``. ``stiffening``: the geometric
        stiffening of the body by its inertia loads and weight (second-order displacements from the
        unit-load geometric stiffness matrices); False gives the classic linear modal body, which
        diverges when spun above its first bending frequency (Kane, Ryan & Banerjee 1987).
        ``damping_ratios``: modal damping, the ratio zeta_k of critical damping of each mode (one
        number for all, or one per mode; None: undamped): the force diag(2 zeta_k omega_k) q' on the
        modal coordinates, booked as dissipated energy. ``name``: the body's name in messages and
        results (default ``modal body k``). Other nodes of
        the body take joints and loads through :meth:`tie`. In 3D the frame node's rotation is a
        spatial rotation (rotation vector DOFs); it must not carry other rotary inertia (a rigid body
        or a beam's rho_I there): connect those through a joint or a tie.
        Returns the body's element group (a :class:`~flexmb.cms.floating_frame.ModalBody`)."""
        from flexmb.elements.floating_frame import ModalBody
        from flexmb.elements.modal_body_data import ModalBodyArrays

        name = name or f"modal body {sum(type(g).__name__ == 'ModalBody' for g in self.groups)}"
        what = f"modal body {name!r}"
        if not isinstance(data, ModalBodyArrays):
            raise ModelError(f"{what}: data must be a ModalBodyData (flexmb.cms.ModalBodyData.from_model), got "
                             f"{type(data).__name__}")
        if data.dim != self.dim:
            raise ModelError(f"{what}: its data are {data.dim}D, the model is {self.dim}D")
        if not isinstance(stiffening, (bool, np.bool_)):
            raise ModelError(f"{what}: stiffening must be True or False, got {stiffening!r}")
        if node is None:
            node = self.add_node(data.component.model.coordinates[data.frame_node])
        node = self._check_node(node, what)
        return self.add_group(ModalBody(data, node, stiffening=bool(stiffening), name=name,
                                        damping_ratios=damping_ratios))

    def _side(self, side: int | RigidBody | None, joint: str) -> int:
        if side is None:
            return -1
        if isinstance(side, RigidBody):
            mine = next((b for b in self.bodies if b.node == side.node), None)
            if mine is None or mine.name != side.name or mine.mass != side.mass:
                raise ModelError(f"{joint}: rigid body {side.name!r} belongs to another model; use the bodies "
                                 "returned by this model's add_rigid_body")
            return side.node
        if isinstance(side, str):
            raise ModelError(f"{joint}: side {side!r} is not a node index, a RigidBody or None (None "
                             "is the ground)")
        return self._check_node(side, joint)

    @keywords_listed
    def add_joint(self, kind: str, a: int | RigidBody | None, b: int | RigidBody | None,
                  at: Sequence[float] | None = None, axis: Sequence[float] | None = None,
                  x_axis: Sequence[float] | None = None, drive: Drive = None, name: str | None = None) -> Joint:
        """Connect side ``a`` to side ``b`` (a node, a :class:`RigidBody`, or None for the ground).

        ``kind``: one of ``revolute, spherical, universal, cylindrical, prismatic, fixed,
        point-on-line`` (see :mod:`flexmb.multibody.joints`). ``at``: joint point in the
        reference configuration (default: b's node). ``axis`` (3D): the joint axis z_j (revolute,
        cylindrical, prismatic, point-on-line: the line); ``x_axis``: x_j (universal: a's cross
        axis; 2D: the direction of a prismatic or point-on-line joint's line). ``drive``: f(t)
        for a revolute (relative angle, rad) or prismatic (relative displacement, m) joint,
        relative to the reference configuration. ``name`` for messages, results
        (``history.joint_reaction(name)``) and initial conditions (default ``"kind k"``).
        Returns the :class:`~flexmb.multibody.joints.Joint`.
        """
        name = item_name(name, f"{kind} {len(self.joints)}", "add_joint")
        what = f"joint {name!r}"
        if kind not in JOINT_KINDS + ("attach",):
            raise ModelError(f"{what}: unknown kind {kind!r}; choose one of {', '.join(JOINT_KINDS)}")
        ia, ib = self._side(a, what), self._side(b, what)
        if ib < 0 or ia == ib:
            raise ModelError(f"{what}: side b must be a node or body different from side a "
                             "(put the ground as side a)")
        if self.dim == 2 and kind in ("spherical", "universal", "cylindrical"):
            raise ModelError(f"{what}: a {kind} joint needs a 3D model")
        if self.dim == 2 and axis is not None:
            raise ModelError(f"{what}: axis is for joints of 3D models (a planar joint turns about the "
                             f"out-of-plane axis; x_axis gives a line's direction), got axis={axis!r}")
        if drive is not None:
            if kind not in ("revolute", "prismatic"):
                raise ModelError(f"{what}: only revolute and prismatic joints can be driven")
            if not callable(drive):
                raise ModelError(f"{what}: drive must be a function of time t (s), or None, got {drive!r}")
            drive = CheckedFunction(drive, f"drive of joint {name!r}")
        if at is None:
            point = self.coordinates[ib]
        else:
            point = float_array(at, f"{what}: the joint point (m)")
            if point.shape != (self.dim,):
                raise ModelError(f"{what}: the joint point needs {self.dim} coordinates, got {np.asarray(at).tolist()}")
            point = real_array(point, f"{what}: the joint point (m)")
        try:
            frame = joint_frame(self.dim, axis, x_axis)
        except ValueError as exc:
            raise ModelError(f"{what}: {exc}") from None
        joint = Joint(kind, name, ia, ib, np.r_[point, np.zeros(3 - self.dim)], frame, drive)
        self.joints.append(joint)
        self.revision += 1
        return joint

    @keywords_listed
    def attach(self, node: int, body: int | RigidBody, name: str | None = None) -> Joint:
        """Fix the FE ``node`` to ``body`` (a RigidBody or another node) where it is: welded if
        the node carries rotations (a beam node), pinned otherwise; ``name`` of the joint this
        makes (default ``"attach node k"``)."""
        node = self._check_node(node, "attach")
        return self.add_joint("attach", body, node, at=self.coordinates[node], name=name or f"attach node {node}")

    # ------------------------------------------------------------------ outputs
    @keywords_listed
    def add_sensor(self, quantity: str, on: int | RigidBody | Joint | ElementGroup | str,
                   offset: Sequence[float] | None = None, element: int | None = None, output: str | None = None,
                   component: int | None = None, name: str | None = None) -> Sensor:
        """Record ``quantity`` of ``on`` at every output step (see :mod:`flexmb.sensors` for the
        quantities, units and angle conventions); returns the :class:`~flexmb.sensors.Sensor`.

        ``quantity``: ``position``, ``velocity``, ``acceleration`` (m, m/s, m/s^2) of the point at
        ``offset`` (dim,) m, in the body frame, from a node or :class:`RigidBody` ``on``;
        ``angle`` (2D, rad), ``angular_velocity`` (rad/s), ``rotation_matrix``, ``cardan``,
        ``euler`` (3D, rad) of a node or body; ``joint_coordinate`` and ``joint_rate`` of a
        revolute (rad, rad/s) or prismatic (m, m/s) :class:`Joint` or joint name;
        ``element_output`` of an element group (the group, its name or index) with ``element``
        (index in the group), ``output`` (e.g. ``"N"``, ``"M2"``) and, for a vector output,
        ``component``. ``name`` (default e.g. ``position_node3``) is how results, files and
        ``flexmb plot`` call it: ``history.sensor("tip")``, ``history.series("tip[y]")``.
        """
        sensor = make_sensor(self, quantity, on, offset, element, output, component, name)
        self.sensors.append(sensor)            # outputs only: an Assembly built before stays valid
        return sensor

    @keywords_listed
    def tie(self, node: int, body, body_node: int, name: str | None = None) -> Tie:
        """Tie ``node`` of this model to node ``body_node`` of the FE model of the modal body ``body``
        (the group returned by :meth:`add_modal_body`): an interface node where joints, attachments,
        supports and loads act on the body (:mod:`flexmb.multibody.ties`, 2D and 3D). Place ``node`` at the
        body node's reference position (the frame node's position plus the body node's offset from the
        body's frame node in its FE model). A node without rotations is pinned to the body node, one
        with rotations (a beam or rigid body there) welded to it (3D: for rotations of the node relative
        to the body frame below 90 degrees). Default name: ``tie of node 7 to modal body 'arm' node 20``;
        ``name`` replaces it."""
        from flexmb.elements.floating_frame import ModalBody

        node = self._check_node(node, "tie")
        if not isinstance(body, ModalBody) or not any(g is body for g in self.groups):
            raise ModelError(f"tie of node {node}: body must be a modal body of this model (the group "
                             f"add_modal_body returned), got {type(body).__name__}")
        what = f"tie of node {node} to modal body {body.name!r}"
        data = body.data
        n_body = data.component.model.n_nodes
        if isinstance(body_node, (bool, np.bool_)) or not isinstance(body_node, (int, np.integer)) \
                or not 0 <= body_node < n_body:
            raise ModelError(f"{what}: body_node must be a node of the body's FE model (0..{n_body - 1}), "
                             f"got {body_node!r}")
        body_node = int(body_node)
        frame = int(body.connectivity[0, 0])
        if body_node == data.frame_node:
            raise ModelError(f"{what}: body node {body_node} is the body's frame node; joints, supports and "
                             f"loads there act on the frame node {frame} directly")
        if node == frame:
            raise ModelError(f"{what}: node {node} is the body's frame node itself; tie another node")
        tied = next((t for t in self.ties if t.node == node), None)
        if tied is not None:
            raise ModelError(f"{what}: node {node} is already tied ({tied.label})")
        expected = self.coordinates[frame] + data.positions[body_node, :self.dim]
        off = float(np.linalg.norm(self.coordinates[node] - expected))
        if off > 1e-9 * max(self.characteristic_length, data.component.model.characteristic_length):
            raise ModelError(f"{what}: node {node} is at {self.coordinates[node].tolist()}, the body node "
                             f"{body_node} at {expected.tolist()} ({off:.3g} m apart); place the node at the "
                             "body node's reference position")
        tie = Tie(name or default_tie_name(node, body, body_node), node, body, body_node)
        self.ties.append(tie)
        self.revision += 1
        return tie

    @keywords_listed
    def set_gravity(self, acceleration: Sequence[float]) -> None:
        """Set the uniform gravitational ``acceleration`` (dim,) in m/s^2, e.g. ``[0, -9.81]``."""
        g = float_array(acceleration, "gravity (m/s^2)")
        if g.shape != (self.dim,):
            raise ModelError(f"gravity must have {self.dim} components, got {g.tolist()}")
        self.gravity = real_array(g, "gravity (m/s^2)")
        self.revision += 1

    @keywords_listed
    def save(self, path: str, overwrite: bool = False) -> "pathlib.Path":
        """Write the model to the HDF5 model file ``path`` (all of it: nodes, groups, loads, bodies,
        joints, sensors, ...; functions by their ``module:qualname``); ``fm.load_model(path)``
        rebuilds it. An existing file is refused unless ``overwrite``; a lambda or nested function
        gets a ModelError naming the part. See :mod:`flexmb.io.model_file`. Returns the path."""
        from flexmb.io.model_file import save_model

        return save_model(self, path, overwrite)

    @property
    def characteristic_length(self) -> float:
        """Size of the model's bounding box (m), used to scale Newton tolerances."""
        if self.n_nodes == 0:
            return 1.0
        span = np.ptp(self.coordinates, axis=0).max()
        return float(span) if span > 0 else 1.0


def _indices(values: Sequence[int], n: int, what: str, item: str, unique: bool = True) -> np.ndarray:
    """Integer indices in 0..n-1 (each once if ``unique``), else ModelError naming the first bad one."""
    idx = np.asarray(values)
    if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
        raise ModelError(f"{what} must be a non-empty sequence of {item} indices (integers), got {values!r}")
    bad = np.flatnonzero((idx < 0) | (idx >= n))
    if bad.size:
        raise ModelError(f"{what}: {item} {int(idx[bad[0]])} does not exist (there are {item}s 0..{n - 1})")
    if unique and np.unique(idx).size != idx.size:
        values_, counts = np.unique(idx, return_counts=True)
        raise ModelError(f"{what}: {item} {int(values_[counts > 1][0])} is given more than once")
    return idx.astype(np.int64)


def _per_element_value(value: float | np.ndarray, n: int, what: str) -> np.ndarray:
    """A finite number or n finite numbers as an array, else ModelError."""
    arr = float_array(value, what)
    if arr.shape not in ((), (n,)):
        raise ModelError(f"{what} must be a number, one value per element ({n}) or a function of t, "
                         f"got shape {arr.shape}")
    return real_array(arr, what)


def _is_element_side(pairs: np.ndarray, groups: list[ElementGroup]) -> np.ndarray:
    """(n_pairs,) whether each node pair (n_pairs, 2) is a side of an element of the groups
    (the two nodes of a bar or beam, a side of a triangle)."""
    sides = [g.connectivity[:, [a, b]] for g in groups
             for a, b in ((0, 1), (1, 2), (2, 0))[:3 if g.n_nodes == 3 else 1]]
    if not sides:
        return np.zeros(len(pairs), dtype=bool)
    known = np.unique(np.sort(np.concatenate(sides), axis=1), axis=0)         # (n_sides, 2)
    wanted = np.sort(pairs, axis=1)
    n = int(max(known.max(), wanted.max())) + 1
    known_keys, wanted_keys = known[:, 0] * n + known[:, 1], wanted[:, 0] * n + wanted[:, 1]
    return np.isin(wanted_keys, known_keys)


def _check_triangle_areas(X: np.ndarray, conn: np.ndarray, name: str) -> None:
    """ModelError naming the first triangle (X (n_el, 3, 3)) of zero area (coincident or collinear
    nodes); the test is relative to the square of its longest side."""
    doubled = np.linalg.norm(np.cross(X[:, 1] - X[:, 0], X[:, 2] - X[:, 0]), axis=-1)   # 2 A, (n_el,)
    longest = np.max(np.linalg.norm(X - np.roll(X, 1, axis=1), axis=-1), axis=1)      # (n_el,)
    bad = np.flatnonzero(doubled <= 1e-12 * longest**2)
    if bad.size:
        e = int(bad[0])
        raise ModelError(f"element {e} of group {name!r} has zero area (nodes {conn[e].tolist()} at "
                         f"{X[e].tolist()} coincide or lie on one line)")


def _check_unique_elements(conn: np.ndarray, name: str) -> None:
    """ModelError if two elements of a group join the same nodes (in any order)."""
    key = np.sort(conn, axis=1)                                      # (n_el, nn), [1, 0] == [0, 1]
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    repeated = np.flatnonzero(first[inverse] != np.arange(len(conn)))
    if repeated.size:
        e2 = int(repeated[0])
        e1 = int(first[inverse[e2]])
        raise ModelError(f"element group {name!r}: elements {e1} and {e2} join the same nodes "
                         f"({conn[e1].tolist()} and {conn[e2].tolist()}); give each element once")


def _inertia(inertia: float | Sequence, dim: int, what: str) -> float | np.ndarray:
    """A rigid body's inertia checked: 2D J_z >= 0 (kg m^2); 3D a symmetric (3, 3) tensor (or
    its diagonal) whose principal moments are >= 0 and satisfy the triangle inequality."""
    J = float_array(inertia, f"{what}: inertia")
    if dim == 2:
        if J.shape != ():
            raise ModelError(f"{what}: inertia must be a number (J_z, kg m^2) in 2D, got shape {J.shape}")
        return real(float(J), f"{what}: inertia J_z (kg m^2)", low=0.0)
    if J.shape == (3,):
        J = np.diag(J)
    if J.shape != (3, 3):
        raise ModelError(f"{what}: inertia must be a (3, 3) tensor or its diagonal, got shape {J.shape}")
    J = real_array(J, f"{what}: inertia (kg m^2)")
    scale = max(float(np.abs(J).max()), np.finfo(float).tiny)
    if not np.allclose(J, J.T, rtol=0.0, atol=1e-12 * scale):
        raise ModelError(f"{what}: the inertia tensor must be symmetric, got {J.tolist()}")
    moments = np.linalg.eigvalsh(0.5 * (J + J.T))                  # ascending
    shown = "[" + ", ".join(f"{m:.6g}" for m in moments) + "]"
    if moments[0] < -1e-12 * scale:
        raise ModelError(f"{what}: principal moments of inertia {shown} kg m^2 must be non-negative")
    if moments[2] > moments[0] + moments[1] + 1e-9 * scale:
        raise ModelError(f"{what}: principal moments of inertia {shown} kg m^2 violate the triangle "
                         f"inequality J1 <= J2 + J3 ({moments[2]:.6g} > {moments[0]:.6g} + {moments[1]:.6g}); "
                         "no body has them")
    return J
