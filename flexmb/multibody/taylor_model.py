"""A flexmb :class:`~flexmb.model.Model` of rigid bodies and joints as a
:class:`~flexmb.multibody.taylor_reactions.TaylorSystem` (Huang et al. 2001), so that one model
runs through the DAE mid-point scheme (:func:`flexmb.integrate`), coordinate partitioning
(:meth:`flexmb.ConstrainedSystem.from_assembly`, :func:`flexmb.integrate_partitioned`) and the
Taylor reaction formulation (:func:`flexmb.integrate_taylor`).

The translation is one to one. Body k of the Taylor system is ``model.bodies[k]``: its mass, its
inertia J' in body axes (the model gives it in the reference orientation, where body axes are
the global axes), and its state read from the DOF vectors: position ``X + u[trans]``, rotation
``R = exp(hat(psi))`` (3D, psi the node's rotation vector) or the angle ``u[rz]`` (2D), velocity
``v[trans]`` and angular velocity ``v[rot]`` (the spatial angular velocity in 3D). A joint keeps
its kind, name, sides (side a of the model is side i, the ground included; side b is body j)
and its body-fixed data: the joint point and the joint frame (x_j, y_j, z_j; z_j the axis = the
Taylor frame's b, c, a) in body axes, both taken from the reference configuration. The reactions
of the Taylor system are then the forces and moments the joint exerts on side b, the same
quantities as :meth:`flexmb.TimeHistory.joint_reaction` (there in side a's joint frame, here in
global axes). Gravity is the model's.

What the Taylor formulation does not take is refused with a ModelError naming the item:
element groups and point masses (flexible parts: the formulation is for rigid bodies), supports
and prescribed DOFs (join a body to the ground with a joint instead), nodal loads (pass them to
``integrate_taylor(external_loads=...)``), joint kinds other than revolute (2D) or revolute,
spherical, cylindrical, prismatic (3D), joints on nodes that are not rigid bodies, and driven
joints (a drive prescribes motion; the Taylor formulation takes motor torques,
``TaylorSystem.add_joint(..., motor=tau)``).
"""
from __future__ import annotations

import numpy as np

from flexmb.checks import ModelError
from flexmb.dofs import DofMap
from flexmb.model import Model
from flexmb.multibody.taylor_reactions import GROUND, JOINT_KINDS_2D, JOINT_KINDS_3D, Joint, TaylorSystem
from flexmb.rotations import exp_map


def taylor_system_from_model(model, u: np.ndarray | None = None, v: np.ndarray | None = None) -> TaylorSystem:
    """The TaylorSystem of ``model`` (a Model or its Assembly) with the bodies' initial state taken
    from the DOF vectors ``u`` and ``v`` (n_dof,) (default: the reference configuration at rest);
    give a state that satisfies the joints (:func:`flexmb.consistent_initial_state`)."""
    what = "TaylorSystem.from_model"
    given = model
    if not isinstance(model, Model):                         # an Assembly: its model and DOF map
        model = getattr(given, "model", None)
        if not isinstance(model, Model):
            raise ModelError(f"{what} needs a flexmb Model or Assembly, got {type(given).__name__}")
    _refuse_what_it_cannot_take(model, what)
    dofs = given.dofs if given is not model else DofMap(model)
    n = dofs.n_dof
    u = np.zeros(n) if u is None else np.asarray(u, dtype=float)
    v = np.zeros(n) if v is None else np.asarray(v, dtype=float)
    for name, x in (("u", u), ("v", v)):
        if x.shape != (n,) or not np.all(np.isfinite(x)):
            raise ModelError(f"{what}: {name} must be {n} finite numbers (one per DOF), got shape {x.shape}")
    dim = model.dim
    system = TaylorSystem(dim, model.gravity.copy())
    rot_names = ("rz",) if dim == 2 else ("rx", "ry", "rz")
    for body in model.bodies:
        trans = dofs.translations()[body.node]
        rot = [dofs.index(body.node, r) for r in rot_names]
        where = f"{what}: rigid body {body.name!r}"
        inertia = np.asarray(body.inertia, dtype=float)
        if (dim == 2 and not inertia > 0.0) or (dim == 3 and np.linalg.eigvalsh(inertia).min() <= 0.0):
            raise ModelError(f"{where}: the Taylor formulation needs a positive definite inertia, got "
                             f"{inertia.tolist()} kg m^2")
        if dim == 2:
            system.add_body(body.name, body.mass, float(inertia), model.coordinates[body.node] + u[trans],
                            orientation=float(u[rot[0]]), velocity=v[trans], angular_velocity=float(v[rot[0]]))
        else:
            system.add_body(body.name, body.mass, inertia, model.coordinates[body.node] + u[trans],
                            orientation=exp_map(u[rot]), velocity=v[trans], angular_velocity=v[rot])
    index = {body.node: k for k, body in enumerate(model.bodies)}
    for joint in model.joints:
        sides = []
        for node in (joint.a, joint.b):
            if node < 0:
                sides.append((GROUND, joint.at.copy()))
            elif node in index:
                X = np.zeros(3)
                X[:dim] = model.coordinates[node]
                sides.append((index[node], joint.at - X))           # arm in body axes (reference)
            else:
                raise ModelError(f"{what}: joint {joint.name!r} joins node {node}, which is not a rigid body; "
                                 "the Taylor formulation joins rigid bodies (and the ground)")
        kind = "revolute2d" if dim == 2 else joint.kind
        (body_i, point_i), (body_j, point_j) = sides
        system.joints.append(Joint(kind, joint.name, body_i, body_j, point_i, point_j, joint.frame.copy(),
                                   joint.frame.copy()))
    return system


def _refuse_what_it_cannot_take(model: Model, what: str) -> None:
    """ModelError naming the first item of ``model`` that the Taylor formulation cannot take."""
    if model.groups:
        names = ", ".join(f"{g.name!r} ({type(g).__name__})" for g in model.groups)
        raise ModelError(f"{what}: element groups {names} are flexible parts; the Taylor formulation takes "
                         "rigid bodies and joints only")
    if model.point_masses:
        raise ModelError(f"{what}: point mass at node {model.point_masses[0][0]}: the Taylor formulation takes "
                         "rigid bodies only (make it a rigid body)")
    if not model.bodies:
        raise ModelError(f"{what}: the model has no rigid bodies")
    fixed = sorted(model.clamped) + [node for node, _ in model.prescribed]
    if fixed:
        raise ModelError(f"{what}: node {fixed[0]} is fixed or prescribed; the Taylor formulation moves bodies "
                         "under joints only: join it to the ground with a joint")
    if model.loads or model.vector_loads:
        load = (model.loads or model.vector_loads)[0]
        raise ModelError(f"{what}: the load on node {load.node} is not carried over; pass loads to "
                         "integrate_taylor(external_loads=...)")
    allowed = JOINT_KINDS_2D if model.dim == 2 else JOINT_KINDS_3D
    for joint in model.joints:
        if joint.kind not in allowed:
            raise ModelError(f"{what}: joint {joint.name!r} is {joint.kind}; the Taylor formulation takes "
                             f"{', '.join(allowed)} joints in {model.dim}D")
        if joint.drive is not None:
            raise ModelError(f"{what}: joint {joint.name!r} is driven (prescribed motion); the Taylor "
                             "formulation takes motor torques instead (TaylorSystem.add_joint(..., motor=tau))")
