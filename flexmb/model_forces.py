"""The force-element vocabulary of a :class:`~flexmb.model.Model`: point-to-point springs and
dampers, joint spring-dampers, bushings and Rayleigh damping of element groups.

A mix-in of :class:`~flexmb.model.Model` (kept apart so that the model's core, nodes, elements,
bodies, joints and loads, stays readable). Each method checks its input, raises
:class:`~flexmb.checks.ModelError` naming the item and its value, and adds the element to the
model's batched group of its kind (one group per kind: a new spring grows that group, so the
step loop makes one call per kind, not per spring). The groups are element groups like the FE
ones (:mod:`flexmb.elements.force_elements`, :mod:`flexmb.elements.bushing`): assembly, statics,
modes, buckling, linearization and the schemes see them without special cases; their damping
goes through the damping hook of :class:`~flexmb.elements.base.ElementGroup`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from flexmb.checks import (ModelError, evaluate_vector, float_array, item_name, keywords_listed,
                           one_argument_function, real, real_array)
from flexmb.elements.base import ElementGroup
from flexmb.elements.body_load import BodyPointLoad
from flexmb.elements.bushing import Bushing
from flexmb.elements.force_elements import CoordinateSpringDamper, PointSpringDamper
from flexmb.elements.revolute_spring import RevoluteSpring
from flexmb.multibody.joints import Joint, RigidBody

#: the element groups that hold springs, dampers, bushings and body loads (made by the add_spring ... methods)
FORCE_ELEMENT_GROUPS = (PointSpringDamper, CoordinateSpringDamper, Bushing, RevoluteSpring, BodyPointLoad)


@dataclass(frozen=True)
class ForceElement:
    """A spring or damper of a model: its ``name``, the element ``group`` (name) that holds it
    and its ``index`` in that group; e.g. ``history.element(s.group, "force")[:, s.index]``."""

    name: str
    group: str
    index: int


class ForceElements:
    """Springs, dampers, bushings and Rayleigh damping of a :class:`~flexmb.model.Model`."""

    #: the force-element groups by kind, index into ``groups`` (set by the Model)
    force_groups: dict[tuple, int]

    @keywords_listed
    def add_spring(self, a: int | RigidBody | None, b: int | RigidBody | None, k: float | None = None,
                   rest_length: float | None = None, preload: float = 0.0, at_a: Sequence[float] | None = None,
                   at_b: Sequence[float] | None = None, name: str | None = None, curve: Callable | None = None,
                   curve_slope: Callable | None = None) -> "ForceElement":
        """A point-to-point spring between side ``a`` and side ``b`` (a node, a
        :class:`RigidBody`, or None for the ground): force ``F = k (l - rest_length) + preload``
        along the line of its points, tension positive; or, with ``curve`` instead of k, the
        user's force curve ``F = curve(l)`` (a function of the lengths, an array in m, returning
        one force per length in N; ``curve_slope``, its derivative in N/m, optional: else a
        central difference). A curve's potential is zero at ``rest_length``; its mid-point force
        is the mean of the curve over the step's lengths (4-point Gauss), exactly
        energy-consistent for curves up to cubic. Springs sharing one curve function are batched.

        k in N/m (>= 0); rest_length in m (default: the distance of the points in the reference
        configuration); preload in N (the force at the rest length); ``at_a``, ``at_b``: the
        attachment points in the reference configuration (m, global axes; default: the node or
        the body's centre of mass; on the ground side required): a point off a node turns with
        it, so it needs a node with rotations (a rigid body or a beam node). Energy-consistent in
        the mid-point scheme (see :mod:`flexmb.elements.force_elements`); seen by statics, modes,
        buckling and linearization. ``name``: its name (default: by kind and number). Returns a
        :class:`ForceElement` naming its group and index (its outputs ``force`` and ``length`` are
        element outputs of that group).
        """
        what = "add_spring" if name is None else f"spring {name!r}"
        if (k is None) == (curve is None):
            raise ModelError(f"{what}: give either k (N/m, a linear spring) or curve (a force curve F(l)), got "
                             f"k={k!r}, curve={curve!r}")
        if curve is not None:
            if not callable(curve) or (curve_slope is not None and not callable(curve_slope)):
                raise ModelError(f"{what}: curve and curve_slope must be functions of the length (m), got "
                                 f"{curve!r}, {curve_slope!r}")
            if preload:
                raise ModelError(f"{what}: a force curve includes any preload (F at rest_length); got "
                                 f"preload={preload!r} with a curve")
            return self._add_spring_damper("spring", a, b, 0.0, 0.0, rest_length, 0.0, at_a, at_b, name,
                                           (curve, curve_slope))
        return self._add_spring_damper("spring", a, b, k, 0.0, rest_length, preload, at_a, at_b, name)

    @keywords_listed
    def add_damper(self, a: int | RigidBody | None, b: int | RigidBody | None, c: float,
                   at_a: Sequence[float] | None = None, at_b: Sequence[float] | None = None,
                   name: str | None = None) -> "ForceElement":
        """A linear point-to-point damper: force ``c dl/dt`` (N) along the line of its points,
        c in N s/m (>= 0); sides ``a``, ``b``, points ``at_a``, ``at_b`` and ``name`` as
        :meth:`add_spring`. The energy it dissipates is booked in ``TimeHistory.dissipated``."""
        return self._add_spring_damper("damper", a, b, 0.0, c, None, 0.0, at_a, at_b, name)

    @keywords_listed
    def add_spring_damper(self, a: int | RigidBody | None, b: int | RigidBody | None, k: float, c: float,
                          rest_length: float | None = None, preload: float = 0.0,
                          at_a: Sequence[float] | None = None, at_b: Sequence[float] | None = None,
                          name: str | None = None) -> "ForceElement":
        """A spring (:meth:`add_spring`) and a damper (:meth:`add_damper`) in parallel between the
        same points: ``F = k (l - rest_length) + preload + c dl/dt``; k in N/m, c in N s/m; sides
        ``a``, ``b``, points ``at_a``, ``at_b``, ``rest_length``, ``preload`` and ``name`` as
        :meth:`add_spring`."""
        return self._add_spring_damper("spring-damper", a, b, k, c, rest_length, preload, at_a, at_b, name)

    @keywords_listed
    def add_joint_spring_damper(self, joint: Joint, k: float = 0.0, c: float = 0.0, rest: float = 0.0,
                                preload: float = 0.0, name: str | None = None) -> "ForceElement":
        """A spring-damper on a joint's coordinate q, relative to the reference configuration:
        the relative angle (rad) of a revolute joint (2D ``theta_B - theta_A``; 3D the angle about
        the joint axis, read modulo a turn, |q| < pi), or the slide along the line (m) of a
        prismatic joint whose side A is the ground (2D along its x_axis, 3D along its axis).
        Moment or force ``k (q - rest) + preload + c dq/dt`` on the sides: k in N m/rad or N/m, c
        in N m s/rad or N s/m, rest in rad or m, preload in N m or N. Energy-consistent in the
        mid-point scheme (see :mod:`flexmb.elements.force_elements` and, for 3D revolute joints,
        :mod:`flexmb.elements.revolute_spring`). ``joint``: the Joint returned by
        :meth:`add_joint`; ``name``: its name (default: by kind and number)."""
        if not isinstance(joint, Joint) or not any(j is joint for j in self.joints):
            raise ModelError(f"add_joint_spring_damper: {joint!r} is not a joint of this model (use the Joint "
                             "returned by add_joint)")
        what = f"spring-damper of joint {joint.name!r}"
        name = item_name(name, what, "add_joint_spring_damper")
        k = real(k, f"{what}: k", low=0.0)
        c = real(c, f"{what}: c", low=0.0)
        rest, preload = real(rest, f"{what}: rest"), real(preload, f"{what}: preload")
        if joint.kind == "revolute" and self.dim == 3:
            return self._add_revolute_spring(joint, k, c, rest, preload, name, what)
        if joint.kind == "revolute" and self.dim == 2:
            nodes = [n for n in (joint.a, joint.b) if n >= 0]
            plain = [n for n in nodes if not self._node_rotates(n)]
            if plain:
                raise ModelError(f"{what}: node {plain[0]} has no rotation (a pinned FE node); the relative "
                                 "angle needs rotating sides (rigid bodies or beam nodes)")
            b = np.array([0.0, 0.0, 1.0]) if len(nodes) == 1 else np.array([0.0, 0.0, -1.0, 0.0, 0.0, 1.0])
            rotations = True
        elif joint.kind == "prismatic" and joint.a < 0:
            nodes = [joint.b]
            b = joint.frame[:2, 0] if self.dim == 2 else joint.frame[:, 2]
            rotations = False
        else:
            raise ModelError(f"{what}: only planar revolute joints and prismatic joints on the ground take a "
                             f"spring-damper in this version, got a {self.dim}D {joint.kind} joint"
                             + (" between two moving sides" if joint.kind == "prismatic" else ""))
        key = ("joint", len(nodes), rotations)
        group_name = "joint springs" + {1: " (ground)", 2: ""}[len(nodes)] + ("" if rotations else " (slides)")
        columns = dict(connectivity=[nodes], b=[b], k=[k], c=[c], rest=[rest], preload=[preload])
        labels = [what]
        if key in self.force_groups:
            old = self.groups[self.force_groups[key]]
            columns = {f: np.concatenate([getattr(old, f) if f != "connectivity" else old.connectivity,
                                          np.asarray(v, dtype=float if f != "connectivity" else np.int64)])
                       for f, v in columns.items()}
            labels = old.labels + labels
        group = CoordinateSpringDamper(np.asarray(columns["connectivity"], dtype=np.int64), self.dim, columns["b"],
                                       columns["k"], columns["c"], columns["rest"], columns["preload"], rotations,
                                       group_name, labels)
        return self._place_force_group(key, group, name)

    def _add_revolute_spring(self, joint: Joint, k: float, c: float, rest: float, preload: float, name: str,
                             what: str) -> "ForceElement":
        """The 3D revolute joint's spring-damper (:class:`~flexmb.elements.revolute_spring.RevoluteSpring`)."""
        nodes = [n for n in (joint.a, joint.b) if n >= 0]
        plain = [n for n in nodes if not self._node_rotates(n)]
        if plain:
            raise ModelError(f"{what}: node {plain[0]} has no rotations; the joint angle needs rotating sides "
                             "(rigid bodies or beam nodes)")
        key = ("joint3d", len(nodes))
        columns = dict(connectivity=np.array([nodes]), frames=joint.frame[None], k=np.array([k]), c=np.array([c]),
                       rest=np.array([rest]), preload=np.array([preload]))
        labels = [what]
        if key in self.force_groups:
            old = self.groups[self.force_groups[key]]
            columns = {f: np.concatenate([getattr(old, f) if f != "connectivity" else old.connectivity, v])
                       for f, v in columns.items()}
            labels = old.labels + labels
        group = RevoluteSpring(columns["connectivity"], columns["frames"], columns["k"], columns["c"], columns["rest"],
                               columns["preload"], "joint springs (3D" + (", ground)" if len(nodes) == 1 else ")"),
                               labels)
        return self._place_force_group(key, group, name)

    def _place_force_group(self, key: tuple, group: ElementGroup, name: str) -> "ForceElement":
        """Put the grown force-element group of kind ``key`` into the model (replacing the old)."""
        if key in self.force_groups:
            self.groups[self.force_groups[key]] = group
        else:
            self.force_groups[key] = len(self.groups)
            self.groups.append(group)
        self.revision += 1
        return ForceElement(name, group.name, group.n_elements - 1)

    @keywords_listed
    def add_bushing(self, a: int | RigidBody | None, b: int | RigidBody | None, k: float | Sequence[float],
                    k_rot: float | Sequence[float], c: float | Sequence[float] = 0.0,
                    c_rot: float | Sequence[float] = 0.0, at: Sequence[float] | None = None,
                    axes: Sequence[Sequence[float]] | None = None, name: str | None = None) -> "ForceElement":
        """A bushing: a linear spring-damper between two frames at the point ``at`` (m, reference
        configuration; default b's node) with the axes ``axes`` (columns, default the global
        axes), both carried by each side. Sides: rigid bodies or beam nodes (they need rotations),
        or None for the ground.

        ``k`` (N/m) and ``c`` (N s/m): translational stiffness and damping along the axes (one value
        or one per axis) on the deflection of b's point in a's axes; ``k_rot`` (N m/rad) and
        ``c_rot`` (N m s/rad): about the axes (2D one value; 3D one or three), on the relative
        rotation (2D the relative angle; 3D, for large relative rotations, the trigonometric form
        of :mod:`flexmb.elements.bushing`). Energy-consistent in the mid-point scheme. ``name``: its
        name (default: by kind and number)."""
        count = sum(self.groups[i].n_elements for kind, i in self.force_groups.items() if kind[0] == "bushing")
        name = item_name(name, f"bushing {count}", "add_bushing")
        what = f"bushing {name!r}"
        n_rot = 1 if self.dim == 2 else 3
        values = {}
        for label, value, size, unit in (("k", k, self.dim, "N/m"), ("c", c, self.dim, "N s/m"),
                                         ("k_rot", k_rot, n_rot, "N m/rad"), ("c_rot", c_rot, n_rot, "N m s/rad")):
            arr = float_array(value, f"{what}: {label} ({unit})")
            if arr.shape not in ((), (size,)):
                raise ModelError(f"{what}: {label} ({unit}) must be one value or {size} (one per axis), got shape "
                                 f"{arr.shape}")
            arr = real_array(np.broadcast_to(arr, (size,)).copy(), f"{what}: {label} ({unit})")
            if np.any(arr < 0):
                raise ModelError(f"{what}: {label} ({unit}) must be >= 0, got {arr.tolist()}")
            values[label] = arr
        E = np.eye(self.dim) if axes is None else real_array(axes, f"{what}: axes", (self.dim, self.dim))
        if not np.allclose(E.T @ E, np.eye(self.dim), atol=1e-10) or np.linalg.det(E) < 0:
            raise ModelError(f"{what}: axes must be a right-handed orthonormal frame (columns), got {E.tolist()}")
        sides = [self._side(a, what), self._side(b, what)]
        if sides[0] < 0 and sides[1] < 0:
            raise ModelError(f"{what}: both sides are the ground")
        if sides[1] < 0:                                           # the ground is side a of the group
            sides.reverse()
        nodes = [n for n in sides if n >= 0]
        plain = [n for n in nodes if not self._node_rotates(n)]
        if plain:
            raise ModelError(f"{what}: node {plain[0]} has no rotations; a bushing joins rigid bodies or beam nodes")
        point = self.coordinates[nodes[-1]] if at is None else real_array(at, f"{what}: at (m)", (self.dim,))
        key = ("bushing", len(nodes))
        new = dict(connectivity=np.array([nodes]), offsets=(point - self.coordinates[nodes])[None],
                   anchor=point[None] if len(nodes) == 1 else None, axes=E[None], k_t=values["k"][None],
                   c_t=values["c"][None], k_r=values["k_rot"][None] if self.dim == 3 else values["k_rot"],
                   c_r=values["c_rot"][None] if self.dim == 3 else values["c_rot"])
        labels = [what]
        if key in self.force_groups:
            old = self.groups[self.force_groups[key]]
            new = {f: None if v is None else np.concatenate([getattr(old, f), v]) for f, v in new.items()}
            labels = old.labels + labels
        group = Bushing(new["connectivity"], self.dim, new["offsets"], new["anchor"], new["axes"], new["k_t"],
                        new["c_t"], new["k_r"], new["c_r"], "bushings" + (" (ground)" if len(nodes) == 1 else ""),
                        labels)
        return self._place_force_group(key, group, name)

    @keywords_listed
    def add_user_force(self, on: Sequence[int | RigidBody], force: Callable, jacobian: Callable | None = None,
                       name: str | None = None) -> "ForceElement":
        """A force given by the user's function of the state of some points, e.g. an aerodynamic
        drag or a controller: ``force(t, x, v) -> F``, with t the time (s; in statics the load
        factor), x (m) and v (m/s) the positions and
        velocities of the points ``on`` as arrays (n, dim) in global axes, and F (n, dim) the forces
        on them (N, global axes). ``on``: a list of nodes (ints) and/or rigid bodies (the force acts
        at the body's node, its centre of mass; translations only, no moments).

        ``jacobian``: optional ``jacobian(t, x, v) -> (dF/dx, dF/dv)``, (n dim, n dim) each in N/m and
        N s/m, rows and columns point by point as ``F.reshape(-1)``; without it, central differences
        of ``force`` (4 n dim calls per tangent; steps 1e-6 of the model size in m and of
        max(model size / 1 s, max |v|) in m/s). ``name``: its name (default ``user force <number>``).

        Mid-point scheme: F at the step's mid-point state (t_m, x_m, v_m = (x_{n+1} - x_n) / dt); the
        energy it takes out of the system, minus its work, is booked in ``TimeHistory.dissipated``
        (so the energy balance stays closed). Statics, modes, buckling: F(t, x, 0) with t the load
        factor (not scaled by it otherwise). Newmark: F(t, x, v) at the end point (balance not
        closed for position-dependent forces). See
        :mod:`flexmb.elements.user_force`. A function that raises or returns a wrong shape or
        non-finite values raises :class:`~flexmb.checks.UserFunctionError` naming the user force
        and the state. Returns a :class:`ForceElement`.
        """
        from flexmb.elements.user_force import UserForce

        count = sum(1 for kind in self.force_groups if kind[0] == "user")
        name = item_name(name, f"user force {count}", "add_user_force")
        what = f"user force {name!r}"
        if not callable(force) or (jacobian is not None and not callable(jacobian)):
            raise ModelError(f"{what}: force and jacobian must be functions of (t, x, v), got {force!r}, {jacobian!r}")
        if isinstance(on, (int, np.integer, RigidBody)):
            on = [on]
        nodes = [self._side(point, what) if point is not None else None for point in on]
        if not nodes or None in nodes:
            raise ModelError(f"{what}: on must list nodes and/or rigid bodies (not the ground), got {on!r}")
        if len(set(nodes)) != len(nodes):
            raise ModelError(f"{what}: a node appears twice in on: {nodes}")
        group = UserForce(nodes, self.dim, force, jacobian, self.characteristic_length, name)
        # checked once here, at the reference configuration at rest, so that a broken function fails where given
        x = self.coordinates[nodes]
        group.evaluate(x, np.zeros_like(x))
        if jacobian is not None:
            group.derivatives(x, np.zeros_like(x))
        return self._place_force_group(("user", count), group, name)

    @keywords_listed
    def add_body_load(self, body: int | RigidBody, force: Sequence[float] | Callable | None = None,
                      at: Sequence[float] | None = None, moment: float | Sequence[float] | None = None,
                      name: str | None = None) -> "ForceElement | None":
        """A force ``force`` in N, global axes, at the point ``at`` (m, given in the reference
        configuration, global axes; default the body's node) of a rigid body (or a beam node),
        and/or a constant ``moment`` (N m; 2D one value, 3D three, as :meth:`add_load` on the
        node's rotation DOFs). ``force``: dim numbers (constant), or a function f(t) returning
        them (in statics f(load factor)).

        The force is F at the node plus the moment (R s) x F, s the point's offset in the body frame:
        configuration dependent, with its load stiffness and an exactly energy-consistent
        mid-point form (:mod:`flexmb.elements.body_load`): a constant force has the potential
        -F . (p - p_ref) (in ``strain``) and statics scales it by the load factor, as nodal loads
        and gravity; a time function's work is booked in ``dissipated`` (minus
        it). ``name``: its name (default ``body load <number>``). Returns the
        :class:`ForceElement` of the force (None for a moment only)."""
        count = sum(self.groups[i].n_elements for kind, i in self.force_groups.items() if kind[0] == "body load")
        name = item_name(name, f"body load {count}", "add_body_load")
        what = f"body load {name!r}"
        if body is None:
            raise ModelError(f"{what}: body is the ground; give a rigid body or a beam node")
        node = self._side(body, what)
        if not self._node_rotates(node):
            raise ModelError(f"{what}: node {node} has no rotations to carry a point off it; load a rigid body "
                             "or a beam node (or use add_load on the node)")
        if force is None and moment is None:
            raise ModelError(f"{what}: give a force (N) and/or a moment (N m)")
        if moment is not None:
            labels = ("rz",) if self.dim == 2 else ("rx", "ry", "rz")
            M = real_array(np.reshape(float_array(moment, f"{what}: moment (N m)"), -1), f"{what}: moment (N m)",
                           (len(labels),))
            for dof, value in zip(labels, M):
                if value:
                    self.add_load(node, dof, float(value))
        if force is None:
            return None
        timed = callable(force)
        if timed:
            one_argument_function(force, f"{what}: force")
            evaluate_vector(force, 0.0, False, f"{what}: force (N)", self.dim)   # a broken function fails here
        F = np.zeros(self.dim) if timed else real_array(force, f"{what}: force (N)", (self.dim,))
        point = self.coordinates[node] if at is None else real_array(at, f"{what}: at (m)", (self.dim,))
        key = ("body load", "timed") if timed else ("body load",)
        new_conn, new_force, new_off = np.array([[node]]), F[None], (point - self.coordinates[node])[None]
        labels, functions = [what], [force] if timed else None
        if key in self.force_groups:
            old = self.groups[self.force_groups[key]]
            new_conn = np.vstack([old.connectivity, new_conn])
            new_force, new_off = np.vstack([old.force, new_force]), np.vstack([old.offsets, new_off])
            labels = old.labels + labels
            functions = old.functions + functions if timed else None
        group = BodyPointLoad(new_conn, self.dim, new_force, new_off, "body loads" + (" (timed)" if timed else ""),
                              labels, functions)
        return self._place_force_group(key, group, name)

    @keywords_listed
    def set_rayleigh_damping(self, group: ElementGroup | str, alpha: float = 0.0, beta: float = 0.0) -> None:
        """Rayleigh damping ``alpha M + beta K`` of an element group (the group or its name):
        alpha in 1/s on the group's mass (damping against the inertial frame, so it also slows
        rigid motion), beta in s on the rates of the elements' own strains with their material
        stiffness (objective: nothing in rigid motion; every element type); modal damping
        ratios about the undeformed state zeta_k = alpha / (2 omega_k) + beta omega_k / 2. See
        :mod:`flexmb.elements.rayleigh`. alpha = beta = 0 removes it."""
        from flexmb.elements.rayleigh import RayleighDamping, check_rayleigh

        found = [g for g in self.groups if g is group or (isinstance(group, str) and g.name == group)]
        if len(found) != 1:
            names = ", ".join(repr(g.name) for g in self.groups) or "none"
            raise ModelError(f"set_rayleigh_damping: {group!r} is not {'one' if found else 'a'} group of this model "
                             f"(its groups: {names}; pass the group itself if names repeat)")
        target = found[0]
        if isinstance(target, FORCE_ELEMENT_GROUPS):
            raise ModelError(f"set_rayleigh_damping: group {target.name!r} holds springs; give them a damper (c)")
        alpha = real(alpha, f"set_rayleigh_damping of group {target.name!r}: alpha (1/s)", low=0.0)
        beta = real(beta, f"set_rayleigh_damping of group {target.name!r}: beta (s)", low=0.0)
        check_rayleigh(target, alpha, beta)
        target.rayleigh = RayleighDamping(alpha, beta) if alpha or beta else None
        self.revision += 1

    def _node_rotates(self, node: int) -> bool:
        """Whether the node carries rotations (a rigid body's node or a node of a beam or shell)."""
        return any(b.node == node for b in self.bodies) or any(
            g.has_rotations and node in g.connectivity for g in self.groups
            if not isinstance(g, FORCE_ELEMENT_GROUPS))

    def _add_spring_damper(self, kind: str, a, b, k, c, rest_length, preload, at_a, at_b, name,
                           curve: tuple[Callable, Callable | None] | None = None) -> "ForceElement":
        name = item_name(name, f"{kind} {sum(self.groups[i].n_elements for i in self.force_groups.values())}",
                         f"add_{kind.replace('-', '_')}")
        what = f"{kind} {name!r}"
        k = real(k, f"{what}: k (N/m)", low=0.0)
        c = real(c, f"{what}: c (N s/m)", low=0.0)
        preload = real(preload, f"{what}: preload (N)")
        sides = []
        for side, at, label in ((a, at_a, "a"), (b, at_b, "b")):
            node = self._side(side, what)
            if node < 0:
                if at is None:
                    raise ModelError(f"{what}: side {label} is the ground; give its fixed point at_{label} (m)")
                sides.append((None, real_array(at, f"{what}: at_{label} (m)", (self.dim,))))
                continue
            point = self.coordinates[node] if at is None else real_array(at, f"{what}: at_{label} (m)", (self.dim,))
            if not np.allclose(point, self.coordinates[node], rtol=0.0, atol=1e-12 * self.characteristic_length) \
                    and not self._node_rotates(node):
                raise ModelError(f"{what}: at_{label} = {point.tolist()} is off node {node} at "
                                 f"{self.coordinates[node].tolist()}, which has no rotations to carry it; "
                                 "attach at the node or to a rigid body / beam node")
            sides.append((node, point))
        if sides[0][0] is None and sides[1][0] is None:
            raise ModelError(f"{what}: both sides are the ground")
        if sides[1][0] is None:                                   # the ground is side a of the group
            sides.reverse()
        length = float(np.linalg.norm(sides[1][1] - sides[0][1]))
        if length <= 1e-12 * self.characteristic_length:
            raise ModelError(f"{what}: its two points coincide at {sides[0][1].tolist()} in the reference "
                             "configuration; the direction of its force would be undefined")
        rest = length if rest_length is None else real(rest_length, f"{what}: rest_length (m)", low=0.0)
        nodes = [n for n, _ in sides if n is not None]
        offsets = [p - self.coordinates[n] for n, p in sides if n is not None]
        rotations = any(np.any(o) for o in offsets)
        if rotations and not all(self._node_rotates(n) for n in nodes):
            plain = next(n for n in nodes if not self._node_rotates(n))
            raise ModelError(f"{what}: a point off a body needs rotations at both sides; node {plain} has none "
                             "(a spring from a body's offset point to a plain node is not supported yet: "
                             "attach it to a body or beam node)")
        ground = sides[0][0] is None
        key = (ground, rotations) if curve is None else (ground, rotations, "curve", id(curve[0]), id(curve[1]))
        new = dict(connectivity=[nodes], k=[k], rest_length=[rest], preload=[preload], c=[c],
                   offsets=[offsets], anchor=[sides[0][1]] if ground else None, labels=[what])
        if key in self.force_groups:
            old = self.groups[self.force_groups[key]]
            new = dict(connectivity=np.vstack([old.connectivity, new["connectivity"]]),
                       k=np.append(old.k, k), rest_length=np.append(old.rest_length, rest),
                       preload=np.append(old.preload, preload), c=np.append(old.c, c),
                       offsets=np.concatenate([old.offsets, new["offsets"]]),
                       anchor=np.vstack([old.anchor, new["anchor"]]) if ground else None,
                       labels=old.labels + [what])
        group_name = "springs" + {(False, False): "", (False, True): " (bodies)", (True, False): " (ground)",
                                  (True, True): " (ground, bodies)"}[key[:2]]
        if curve is not None:                                     # one group per curve function
            group_name = self.groups[self.force_groups[key]].name if key in self.force_groups else \
                f"{group_name} (curve {sum(len(kind) > 2 for kind in self.force_groups)})"
        group = PointSpringDamper(np.asarray(new["connectivity"], dtype=np.int64), self.dim, new["k"],
                                  new["rest_length"], new["preload"], new["c"], np.asarray(new["offsets"], float),
                                  None if new["anchor"] is None else np.asarray(new["anchor"], float), rotations,
                                  group_name, new["labels"], *(curve or (None, None)))
        if curve is not None:
            # checked once here, at the reference length, so that a broken curve fails where it is given
            group.spring_force(np.linalg.norm(np.diff([p for _, p in sides], axis=0), axis=1)
                               .repeat(group.n_elements))
        return self._place_force_group(key, group, name)
