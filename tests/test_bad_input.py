"""Bad input, as a new user gives it, fails at the door with an error that names the item.

Every case is a row (id, call, expected error or warning type, substrings its message must
contain: the offending item and the value or the allowed range). A case is *clear* when the
call raises (or warns) with that type and every substring; *vague* when it raises something
else or a message without them; *silent* when it runs through. The last test prints how many
cases are clear. Every case runs in well under a second: time integrations here stop in their
first step, and absurd step counts are refused before any step (that refusal is itself a case).
"""
from __future__ import annotations

import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import flexmb as fm
from flexmb.io.mesh import Mesh, build_model, read_mesh
from flexmb.viz import plots, scene

nan, inf = float("nan"), float("inf")
ModelError, UserFunctionError, FlexmbWarning = fm.ModelError, fm.UserFunctionError, fm.FlexmbWarning


# ------------------------------------------------------------------ small models
def bars(rho_A: float = 1.0) -> fm.Model:
    """2D: nodes 0, 1, 2 on the x axis joined by the truss group "bars"; node 0 fixed."""
    m = fm.Model(dim=2)
    m.add_nodes([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    m.add_truss([[0, 1], [1, 2]], EA=1e3, rho_A=rho_A, name="bars")
    m.fix(0)
    return m


def beam() -> fm.Model:
    """2D cantilever: nodes 0, 1, 2, Beam2D group "beam", node 0 clamped (statics is regular)."""
    m = fm.Model(dim=2)
    m.add_nodes([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    m.add_beam2d([[0, 1], [1, 2]], EA=1e4, EI=10.0, rho_A=1.0, name="beam")
    m.fix(0)
    return m


def loaded_beam() -> fm.Model:
    m = beam()
    m.add_load(2, "uy", -1.0)
    return m


def shaft() -> fm.Model:
    """3D cantilever: nodes 0, 1, 2 on the x axis, Beam3D group "shaft", node 0 clamped."""
    m = fm.Model(dim=3)
    m.add_nodes([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    m.add_beam3d([[0, 1], [1, 2]], EA=1e4, GJ=10.0, EI_y=10.0, EI_z=10.0, rho_A=1.0,
                 rho_I=(1e-3, 5e-4, 5e-4), name="shaft")
    m.fix(0)
    return m


def pendulum(**joint) -> fm.Model:
    """2D rigid body "bob" at (1, 0) on the revolute joint "pivot" at the origin, under gravity."""
    m = fm.Model(dim=2)
    bob = m.add_rigid_body([1.0, 0.0], 1.0, 0.1, name="bob")
    m.add_joint("revolute", None, bob, at=[0.0, 0.0], name="pivot", **joint)
    m.set_gravity([0.0, -9.81])
    return m


def top(**joint) -> fm.Model:
    """3D rigid body "top" at (0, 0, 1) on the joint "pin" at the origin (revolute about z by default)."""
    m = fm.Model(dim=3)
    body = m.add_rigid_body([0.0, 0.0, 1.0], 1.0, [0.1, 0.1, 0.05], name="top")
    m.add_joint(joint.pop("kind", "revolute"), None, body, at=[0.0, 0.0, 0.0], name="pin", **joint)
    return m


def model2d(n_nodes: int = 3) -> fm.Model:
    m = fm.Model(dim=2)
    m.add_nodes(np.c_[np.arange(float(n_nodes)), np.zeros(n_nodes)])
    return m


def model3d(n_nodes: int = 3) -> fm.Model:
    m = fm.Model(dim=3)
    m.add_nodes(np.c_[np.arange(float(n_nodes)), np.zeros(n_nodes), np.zeros(n_nodes)])
    return m


def with_(m: fm.Model, change: Callable[[fm.Model], object]) -> fm.Model:
    change(m)
    return m


def one_step(m, **kw):
    """A single time step of 0.01 s."""
    return fm.integrate(m, 0.01, 0.01, **kw)


def other_body() -> fm.RigidBody:
    """A rigid body of another model."""
    return fm.Model(dim=2).add_rigid_body([0.0, 0.0], 1.0, 0.1, name="stranger")


def other_body3d() -> fm.RigidBody:
    return fm.Model(dim=3).add_rigid_body([0.0, 0.0, 0.0], 1.0, [1.0, 1.0, 1.0], name="stranger")


def boom(t):
    return 1.0 / 0.0


# ------------------------------------------------------------------ the table
@dataclass(frozen=True)
class Case:
    id: str
    group: str
    call: Callable[[], object]
    error: type                       # an Exception type, or a Warning type for warning cases
    needles: tuple[str, ...]          # substrings the message must contain
    cause: type | None = None         # expected type of __cause__ (wrapped user-function errors)


CASES: list[Case] = []


def case(group: str, id: str, call: Callable[[], object], error: type, *needles: str,
         cause: type | None = None) -> None:
    CASES.append(Case(id, group, call, error, needles, cause))


# numbers: non-finite or out of range, at the model methods and element groups
g = "numbers"
case(g, "node-nan", lambda: fm.Model(dim=2).add_node([nan, 0.0]), ModelError, "node 0", "nan")
case(g, "node-inf-in-batch", lambda: model2d().add_nodes([[5.0, 0.0], [6.0, inf]]), ModelError, "node 4", "inf")
case(g, "node-string", lambda: model2d().add_node(["a", 0.0]), ModelError, "node 3", "'a'")
case(g, "node-scalar", lambda: model2d().add_node(5.0), ModelError, "node 3", "2 coordinates", "5.0")
case(g, "truss-EA-nan", lambda: model2d().add_truss([[0, 1]], EA=nan, name="bars"), ModelError,
     "'bars'", "EA", "element 0", "nan")
case(g, "truss-EA-negative", lambda: model2d().add_truss([[0, 1], [1, 2]], EA=[1e3, -5.0], name="bars"),
     ModelError, "'bars'", "EA", "element 1", "-5", "positive")
case(g, "truss-EA-zero", lambda: model2d().add_truss([[0, 1]], EA=0.0, name="bars"), ModelError,
     "'bars'", "EA", "element 0", "positive")
case(g, "truss-EA-string", lambda: model2d().add_truss([[0, 1]], EA="1e3", name="bars"), ModelError,
     "'bars'", "EA", "'1e3'", "number")
case(g, "truss-rhoA-negative", lambda: model2d().add_truss([[0, 1]], EA=1.0, rho_A=-1.0, name="bars"),
     ModelError, "'bars'", "rho_A", "-1", "non-negative")
case(g, "truss-rhoA-inf", lambda: model2d().add_truss([[0, 1]], EA=1.0, rho_A=inf, name="bars"),
     ModelError, "'bars'", "rho_A", "inf")
case(g, "beam2d-EI-nan", lambda: model2d().add_beam2d([[0, 1]], EA=1.0, EI=nan, name="beam"), ModelError,
     "'beam'", "EI", "nan")
case(g, "beam2d-EI-negative", lambda: model2d().add_beam2d([[0, 1]], EA=1.0, EI=-2.0, name="beam"),
     ModelError, "'beam'", "EI", "-2", "positive")
case(g, "beam2d-EA-inf", lambda: model2d().add_beam2d([[0, 1]], EA=inf, EI=1.0, name="beam"), ModelError,
     "'beam'", "EA", "inf")
case(g, "beam2d-rhoI-negative", lambda: model2d().add_beam2d([[0, 1]], EA=1.0, EI=1.0, rho_I=-1e-3, name="beam"),
     ModelError, "'beam'", "rho_I", "-0.001", "non-negative")
case(g, "beam2d-second-order-string",
     lambda: model2d().add_beam2d([[0, 1]], EA=1.0, EI=1.0, second_order="no", name="beam"), ModelError,
     "'beam'", "second_order", "'no'", "True or False")


def _beam3d(**kw):
    section = dict(EA=1.0, GJ=1.0, EI_y=1.0, EI_z=1.0, name="shaft")
    section.update(kw)
    return model3d().add_beam3d([[0, 1]], **section)


case(g, "beam3d-GJ-zero", lambda: _beam3d(GJ=0.0), ModelError, "'shaft'", "GJ", "positive")
case(g, "beam3d-EIy-inf", lambda: _beam3d(EI_y=inf), ModelError, "'shaft'", "EI_y", "inf")
case(g, "beam3d-EIz-negative", lambda: _beam3d(EI_z=-3.0), ModelError, "'shaft'", "EI_z", "-3")
case(g, "beam3d-GAky-negative", lambda: _beam3d(GA_ky=-1.0), ModelError, "'shaft'", "GA_ky", "-1")
case(g, "beam3d-GAkz-nan", lambda: _beam3d(GA_kz=nan), ModelError, "'shaft'", "GA_kz", "nan")
case(g, "beam3d-rhoI-negative", lambda: _beam3d(rho_I=(-1.0, 0.0, 0.0)), ModelError, "'shaft'", "rho_I",
     "-1", "non-negative")
case(g, "beam3d-rhoI-nan", lambda: _beam3d(rho_I=(1.0, nan, 1.0)), ModelError, "'shaft'", "rho_I", "nan")
case(g, "beam3d-rhoA-string", lambda: _beam3d(rho_A="2.7"), ModelError, "'shaft'", "rho_A", "'2.7'")
case(g, "point-mass-nan", lambda: bars().add_point_mass(2, nan), ModelError, "node 2", "mass", "nan")
case(g, "point-mass-negative", lambda: bars().add_point_mass(2, -1.0), ModelError, "node 2", "mass", "-1")
case(g, "point-mass-inertia-inf", lambda: beam().add_point_mass(2, 1.0, inf), ModelError, "node 2", "inertia",
     "inf")
case(g, "point-mass-string", lambda: bars().add_point_mass(2, "2"), ModelError, "node 2", "mass", "'2'")
case(g, "body-mass-zero", lambda: fm.Model(dim=2).add_rigid_body([0.0, 0.0], 0.0, 1.0, name="crank"),
     ModelError, "'crank'", "mass", "0", "> 0")
case(g, "body-mass-nan", lambda: fm.Model(dim=2).add_rigid_body([0.0, 0.0], nan, 1.0, name="crank"),
     ModelError, "'crank'", "mass", "nan")
case(g, "body-inertia-negative-2d", lambda: fm.Model(dim=2).add_rigid_body([0.0, 0.0], 1.0, -0.5, name="crank"),
     ModelError, "'crank'", "inertia", "-0.5")
case(g, "body-position-nan", lambda: fm.Model(dim=2).add_rigid_body([nan, 0.0], 1.0, 1.0, name="crank"),
     ModelError, "'crank'", "position", "nan")
case(g, "load-nan", lambda: bars().add_load(2, "ux", nan), ModelError, "load", "node 2", "ux", "nan")
case(g, "load-inf", lambda: bars().add_load(2, "uy", -inf), ModelError, "load", "node 2", "uy", "inf")
case(g, "load-string", lambda: bars().add_load(2, "ux", "10"), ModelError, "load", "node 2", "ux", "'10'")
case(g, "load-vector-on-one-dof", lambda: bars().add_load(2, "ux", [1.0, 2.0]), ModelError, "load", "node 2",
     "ux", "[1.0, 2.0]")
case(g, "prescribed-nan", lambda: bars().prescribe(2, "ux", nan), ModelError, "prescribe", "node 2", "ux", "nan")
case(g, "gravity-nan", lambda: bars().set_gravity([0.0, nan]), ModelError, "gravity", "nan")
case(g, "gravity-inf-3d", lambda: shaft().set_gravity([0.0, 0.0, -inf]), ModelError, "gravity", "inf")
case(g, "follower-force-nan", lambda: shaft().add_follower_force(2, [0.0, nan, 1.0]), ModelError,
     "follower-force", "node 2", "nan")
case(g, "section-shape-negative", lambda: bars().groups[0].set_section_shape("box", width=-0.1, height=0.1),
     ModelError, "bars", "width=-0.1")

# inertia tensors that no body can have
g = "inertia"


def _body3d(inertia):
    return fm.Model(dim=3).add_rigid_body([0.0, 0.0, 0.0], 1.0, inertia, name="rotor")


_R = np.linalg.qr(np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0], [1.0, 0.0, 1.0]]))[0]
case(g, "not-symmetric", lambda: _body3d([[1.0, 0.2, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), ModelError,
     "'rotor'", "symmetric")
case(g, "negative-principal-moment", lambda: _body3d([-1.0, 1.0, 1.0]), ModelError, "'rotor'", "-1")
case(g, "triangle-diagonal", lambda: _body3d([1.0, 1.0, 3.0]), ModelError, "'rotor'", "triangle", "3")
case(g, "triangle-rotated", lambda: _body3d(_R @ np.diag([0.5, 1.0, 2.0]) @ _R.T), ModelError,
     "'rotor'", "triangle", "2")
case(g, "nan", lambda: _body3d([1.0, nan, 1.0]), ModelError, "'rotor'", "inertia", "nan")
case(g, "wrong-shape-3d", lambda: _body3d([[1.0, 0.0], [0.0, 1.0]]), ModelError, "'rotor'", "(2, 2)")
case(g, "tensor-in-2d", lambda: fm.Model(dim=2).add_rigid_body([0.0, 0.0], 1.0, np.eye(3), name="rotor"),
     ModelError, "'rotor'", "a number", "(3, 3)")
case(g, "point-mass-inertia-string", lambda: beam().add_point_mass(2, 1.0, "0.1"), ModelError, "node 2",
     "inertia", "'0.1'")

# node and element indices: integers only
g = "indices"
case(g, "fix-float", lambda: bars().fix(1.0), ModelError, "fix", "node 1.0", "integer")
case(g, "fix-bool", lambda: bars().fix(True), ModelError, "fix", "node True", "integer")
case(g, "fix-string", lambda: bars().fix("1"), ModelError, "fix", "node '1'", "integer")
case(g, "load-numpy-float", lambda: bars().add_load(np.float64(2.0), "ux", 1.0), ModelError, "add_load",
     "node 2.0", "integer")
case(g, "point-mass-fraction", lambda: bars().add_point_mass(1.5, 1.0), ModelError, "add_point_mass", "node 1.5")
case(g, "prescribe-none", lambda: bars().prescribe(None, "ux", 0.0), ModelError, "prescribe", "node None")
case(g, "fix-out-of-range", lambda: bars().fix(7), ModelError, "fix", "node 7", "3 nodes")
case(g, "load-negative-node", lambda: bars().add_load(-1, "ux", 1.0), ModelError, "add_load", "node -1")
case(g, "connectivity-float", lambda: model2d().add_truss([[0.0, 1.0]], EA=1.0, name="bars"), ModelError,
     "'bars'", "connectivity", "integer", "float")
case(g, "connectivity-numpy-float", lambda: model2d().add_truss(np.array([[0.0, 1.0], [1.0, 2.0]]), EA=1.0,
                                                                name="bars"),
     ModelError, "'bars'", "connectivity", "float")
case(g, "connectivity-bool", lambda: model2d().add_truss([[True, False]], EA=1.0, name="bars"), ModelError,
     "'bars'", "connectivity", "bool")
case(g, "connectivity-string", lambda: model2d().add_truss([["0", "1"]], EA=1.0, name="bars"), ModelError,
     "'bars'", "connectivity")
case(g, "connectivity-three-nodes", lambda: model2d().add_truss([[0, 1, 2]], EA=1.0, name="bars"), ModelError,
     "'bars'", "connectivity", "(n_el, 2)", "(1, 3)")
case(g, "connectivity-out-of-range", lambda: model2d().add_truss([[0, 2], [1, 8]], EA=1.0, name="bars"),
     ModelError, "element 1", "'bars'", "[1, 8]")
case(g, "connectivity-negative", lambda: model2d().add_beam2d([[-1, 0]], EA=1.0, EI=1.0, name="beam"),
     ModelError, "element 0", "'beam'", "[-1, 0]")
case(g, "element-zero-length", lambda: model2d().add_truss([[1, 1]], EA=1.0, name="bars"), ModelError,
     "element 0", "'bars'", "zero length")
case(g, "dof-index-float", lambda: fm.Assembly(bars()).dofs.index(1.0, "ux"), ModelError, "node 1.0", "integer")
case(g, "dof-index-out-of-range", lambda: fm.Assembly(bars()).dofs.index(7, "ux"), ModelError, "node 7",
     "3 nodes")
case(g, "dof-index-bool", lambda: fm.Assembly(bars()).dofs.index(True, "uy"), ModelError, "node True")
case(g, "dof-name-of-truss-node", lambda: fm.Assembly(bars()).dofs.index(2, "rz"), ModelError, "node 2",
     "'rz'")
case(g, "attach-float-node", lambda: (lambda m: m.attach(1.0, m.bodies[0]))(
    with_(pendulum(), lambda m: m.add_node([2.0, 0.0]))), ModelError, "attach", "node 1.0")
case(g, "joint-side-float", lambda: model2d().add_joint("revolute", 0, 1.0, name="hinge"), ModelError,
     "'hinge'", "node 1.0")
case(g, "joint-side-string", lambda: model2d().add_joint("revolute", "ground", 1, name="hinge"), ModelError,
     "'hinge'", "'ground'")
case(g, "joint-same-side", lambda: model2d().add_joint("revolute", 1, 1, name="hinge"), ModelError,
     "'hinge'", "different")
case(g, "unknown-dof-name", lambda: bars().add_load(1, "uz", 1.0), ModelError, "node 1", "'uz'", "ux, uy, rz")

# the same element twice in a group, one group twice in a model
g = "duplicates"
case(g, "truss-twice", lambda: model2d().add_truss([[0, 1], [1, 2], [0, 1]], EA=1.0, name="bars"), ModelError,
     "'bars'", "elements 0 and 2", "[0, 1]")
case(g, "truss-reversed", lambda: model2d().add_truss([[0, 1], [1, 0]], EA=1.0, name="bars"), ModelError,
     "'bars'", "elements 0 and 1", "[1, 0]")
case(g, "beam2d-twice", lambda: model2d().add_beam2d([[1, 2], [1, 2]], EA=1.0, EI=1.0, name="beam"),
     ModelError, "'beam'", "elements 0 and 1", "[1, 2]")
case(g, "beam3d-reversed", lambda: model3d().add_beam3d([[0, 1], [1, 2], [2, 1]], EA=1.0, GJ=1.0, EI_y=1.0,
                                                        EI_z=1.0, name="shaft"),
     ModelError, "'shaft'", "elements 1 and 2", "[2, 1]")
case(g, "group-added-twice", lambda: (lambda m: m.add_group(m.groups[0]))(bars()), ModelError,
     "'bars'", "already")
case(g, "joint-twice", lambda: one_step(with_(pendulum(), lambda m: m.add_joint(
    "revolute", None, m.bodies[0], at=[0.0, 0.0], name="pivot again"))), ModelError, "redundant", "pivot")

# bodies from another model
g = "other-model"
case(g, "joint-body-a", lambda: pendulum().add_joint("revolute", other_body(), 0, at=[0.0, 0.0], name="hinge"),
     ModelError, "'hinge'", "'stranger'", "another model")
case(g, "joint-body-b", lambda: pendulum().add_joint("revolute", None, other_body(), at=[0.0, 0.0], name="hinge"),
     ModelError, "'hinge'", "'stranger'", "another model")
case(g, "attach-to-body", lambda: bars().attach(2, other_body()), ModelError, "attach", "'stranger'",
     "another model")
case(g, "joint-body-3d", lambda: top().add_joint("spherical", other_body3d(), 0, at=[0.0, 0.0, 1.0], name="ball"),
     ModelError, "'ball'", "'stranger'", "another model")
case(g, "joint-node-out-of-range", lambda: pendulum().add_joint("revolute", None, 5, at=[0.0, 0.0], name="hinge"),
     ModelError, "'hinge'", "node 5", "1 nodes")

# directions that must not be zero, non-finite or of the wrong size
g = "directions"
case(g, "axis-zero", lambda: top(axis=[0.0, 0.0, 0.0]), ModelError, "'pin'", "axis", "[0.0, 0.0, 0.0]")
case(g, "axis-nan", lambda: top(axis=[0.0, nan, 1.0]), ModelError, "'pin'", "axis", "nan")
case(g, "axis-inf", lambda: top(axis=[inf, 0.0, 1.0]), ModelError, "'pin'", "axis", "inf")
case(g, "axis-two-components", lambda: top(axis=[0.0, 1.0]), ModelError, "'pin'", "axis", "(3,)")
case(g, "x-axis-zero-3d", lambda: top(kind="universal", x_axis=[0.0, 0.0, 0.0]), ModelError, "'pin'", "x_axis",
     "non-zero")
case(g, "x-axis-parallel-3d", lambda: top(axis=[0.0, 0.0, 2.0], x_axis=[0.0, 0.0, 1.0]), ModelError, "'pin'",
     "x_axis", "parallel")
case(g, "x-axis-nan-3d", lambda: top(x_axis=[nan, 1.0, 0.0]), ModelError, "'pin'", "x_axis", "nan")
case(g, "x-axis-zero-2d", lambda: pendulum(x_axis=[0.0, 0.0]), ModelError, "'pivot'", "x_axis", "non-zero")
case(g, "x-axis-nan-2d", lambda: pendulum(x_axis=[nan, 1.0]), ModelError, "'pivot'", "x_axis", "nan")
case(g, "x-axis-3-components-2d", lambda: pendulum(x_axis=[1.0, 0.0, 0.0]), ModelError, "'pivot'", "x_axis",
     "(2,)")
case(g, "axis-in-2d", lambda: pendulum(axis=[0.0, 1.0, 0.0]), ModelError, "'pivot'", "axis", "3D")
case(g, "joint-point-nan", lambda: model2d().add_joint("revolute", 0, 1, at=[nan, 0.0], name="hinge"),
     ModelError, "'hinge'", "joint point", "nan")
case(g, "joint-point-shape", lambda: model2d().add_joint("revolute", 0, 1, at=[0.0, 0.0, 0.0], name="hinge"),
     ModelError, "'hinge'", "2 coordinates")
case(g, "y-axis-zero", lambda: _beam3d(y_axis=[0.0, 0.0, 0.0]), ModelError, "'shaft'", "y_axis", "non-zero")
case(g, "y-axis-nan", lambda: _beam3d(y_axis=[0.0, nan, 1.0]), ModelError, "'shaft'", "y_axis", "nan")
case(g, "y-axis-two-components", lambda: _beam3d(y_axis=[0.0, 1.0]), ModelError, "'shaft'", "y_axis", "(3,)")
case(g, "y-axis-along-element", lambda: _beam3d(y_axis=[2.0, 0.0, 0.0]), ModelError, "'shaft'", "y_axis",
     "element 0", "parallel")
case(g, "y-axis-per-element-zero", lambda: model3d().add_beam3d(
    [[0, 1], [1, 2]], EA=1.0, GJ=1.0, EI_y=1.0, EI_z=1.0, y_axis=[[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], name="shaft"),
     ModelError, "'shaft'", "y_axis", "element 1", "non-zero")

# wrong shapes and types of the model's arguments
g = "shapes"
case(g, "nodes-3d-array", lambda: fm.Model(dim=2).add_nodes(np.zeros((2, 2, 2))), ModelError, "node positions",
     "(n, 2)", "(2, 2, 2)")
case(g, "nodes-wrong-width", lambda: fm.Model(dim=2).add_node([0.0, 1.0, 2.0]), ModelError, "node 0",
     "2 coordinates", "(3,)")
case(g, "gravity-length", lambda: bars().set_gravity([0.0, -9.81, 0.0]), ModelError, "gravity",
     "2 components", "[0.0, -9.81, 0.0]")
case(g, "gravity-scalar", lambda: bars().set_gravity(-9.81), ModelError, "gravity", "2 components", "-9.81")
case(g, "follower-shape", lambda: shaft().add_follower_force(2, [1.0, 0.0]), ModelError, "follower-force",
     "node 2", "3 components")
case(g, "follower-in-2d", lambda: beam().add_follower_force(2, [1.0, 0.0, 0.0]), ModelError, "follower-force",
     "node 2", "3D")
case(g, "EA-per-element-length", lambda: model2d().add_truss([[0, 1], [1, 2]], EA=[1.0, 2.0, 3.0], name="bars"),
     ModelError, "'bars'", "EA", "(3,)", "2")
case(g, "rhoI-shape-3d", lambda: _beam3d(rho_I=(1.0, 1.0)), ModelError, "'shaft'", "rho_I", "(2,)")
case(g, "model-dim-float", lambda: fm.Model(dim=2.0), ModelError, "dim", "2.0")
case(g, "model-dim-one", lambda: fm.Model(dim=1), ModelError, "dim", "2 or 3", "1")
case(g, "mass-kind", lambda: model2d().add_truss([[0, 1]], EA=1.0, mass="Lumped", name="bars"), ModelError,
     "'bars'", "mass", "'Lumped'", "'lumped'")
case(g, "joint-kind", lambda: model2d().add_joint("hinge", 0, 1, name="j"), ModelError, "'j'", "'hinge'",
     "revolute")
case(g, "beam2d-in-3d", lambda: model3d().add_beam2d([[0, 1]], EA=1.0, EI=1.0), ModelError, "add_beam2d", "3D")
case(g, "beam3d-in-2d", lambda: model2d().add_beam3d([[0, 1]], EA=1.0, GJ=1.0, EI_y=1.0, EI_z=1.0),
     ModelError, "add_beam3d", "2D")

# unknown keyword arguments say which keywords exist
g = "keywords"
case(g, "beam3d-rhoA", lambda: _beam3d(rhoA=1.0), ModelError, "add_beam3d", "'rhoA'", "'rho_A'", "GA_ky")
case(g, "beam3d-y-axes", lambda: _beam3d(y_axes=[0.0, 1.0, 0.0]), ModelError, "add_beam3d", "'y_axes'",
     "'y_axis'")
case(g, "truss-rhoA", lambda: model2d().add_truss([[0, 1]], EA=1.0, rhoA=1.0), ModelError, "add_truss",
     "'rhoA'", "rho_A")
case(g, "beam2d-second-order", lambda: model2d().add_beam2d([[0, 1]], EA=1.0, EI=1.0, secondorder=True),
     ModelError, "add_beam2d", "'secondorder'", "second_order")
case(g, "joint-axes", lambda: top(axes=[0.0, 0.0, 1.0]), ModelError, "add_joint", "'axes'", "'axis'")
case(g, "point-mass-J", lambda: beam().add_point_mass(2, 1.0, J=0.1), ModelError, "add_point_mass", "'J'",
     "inertia")
case(g, "integrate-dtmax", lambda: fm.integrate(bars(), 0.01, 0.01, dtmax=0.1), TypeError, "'dtmax'")

# numbers given to the analyses
g = "analysis-arguments"
case(g, "dt-nan", lambda: fm.integrate(bars(), nan, 1.0), ModelError, "dt", "nan")
case(g, "dt-negative", lambda: fm.integrate(bars(), -0.1, 1.0), ModelError, "dt", "-0.1", "> 0")
case(g, "dt-string", lambda: fm.integrate(bars(), "0.1", 1.0), ModelError, "dt", "'0.1'")
case(g, "t-end-inf", lambda: fm.integrate(bars(), 0.1, inf), ModelError, "t_end", "inf")
case(g, "t-end-before-t0", lambda: fm.integrate(bars(), 0.1, 1.0, t0=2.0), ModelError, "t_end", "1",
     "t0 = 2")
case(g, "t0-nan", lambda: fm.integrate(bars(), 0.1, 1.0, t0=nan), ModelError, "t0", "nan")
case(g, "t-end-not-whole-steps", lambda: fm.integrate(bars(), 0.3, 1.0), ModelError, "1",
     "not a whole number of steps", "dt = 0.3")
case(g, "u0-nan", lambda: (lambda a: fm.integrate(a, 0.01, 0.01, u0=np.r_[np.zeros(a.n_dof - 1), nan]))(
    fm.Assembly(bars())), ModelError, "u0", "node 2 uy", "nan")
case(g, "v0-inf", lambda: (lambda a: fm.integrate(a, 0.01, 0.01, v0=np.r_[np.zeros(a.n_dof - 2), inf, 0.0]))(
    fm.Assembly(bars())), ModelError, "v0", "node 2 ux", "inf")
case(g, "u0-shape", lambda: fm.integrate(bars(), 0.1, 1.0, u0=np.zeros(5)), ModelError, "u0", "(6,)", "(5,)")
case(g, "newton-dict", lambda: fm.integrate(bars(), 0.01, 0.01, newton={"residual_tol": 1e-8}), ModelError,
     "newton", "NewtonSettings", "dict")
case(g, "newton-tol-negative", lambda: fm.NewtonSettings(residual_tol=-1e-8), ModelError, "residual_tol",
     "-1e-08", ">= 0")
case(g, "newton-tol-nan", lambda: fm.NewtonSettings(increment_tol=nan), ModelError, "increment_tol", "nan")
case(g, "newton-iterations-zero", lambda: fm.NewtonSettings(max_iterations=0), ModelError, "max_iterations",
     ">= 1", "0")
case(g, "newton-iterations-float", lambda: fm.NewtonSettings(max_iterations=2.5), ModelError,
     "max_iterations", "2.5")
case(g, "scheme-unknown", lambda: fm.integrate(bars(), 0.1, 1.0, scheme="rk4"), ModelError, "'rk4'",
     "mid-point", "newmark")
case(g, "load-factors-nan", lambda: fm.load_control(loaded_beam(), [0.5, nan]), ModelError, "load factor",
     "nan")
case(g, "load-factors-empty", lambda: fm.load_control(loaded_beam(), []), ModelError, "load_control",
     "at least one", "[]")
case(g, "load-control-u0-shape", lambda: fm.load_control(loaded_beam(), 1, u0=np.zeros(4)), ModelError,
     "load_control", "u0", "(9,)", "(4,)")
case(g, "arc-length-increment-nan", lambda: fm.arc_length(loaded_beam(), nan), ModelError, "arc_length",
     "increment", "nan")
case(g, "arc-length-psi-nan", lambda: fm.arc_length(loaded_beam(), 0.1, psi=nan), ModelError, "arc_length",
     "psi", "nan")
case(g, "arc-length-max-load-factor-nan", lambda: fm.arc_length(loaded_beam(), 0.1, max_load_factor=nan),
     ModelError, "arc_length", "max_load_factor", "nan")
case(g, "arc-length-max-displacement-zero", lambda: fm.arc_length(loaded_beam(), 0.1, max_displacement=0.0),
     ModelError, "arc_length", "max_displacement", "> 0")
case(g, "arc-length-dof-scale-shape", lambda: fm.arc_length(loaded_beam(), 0.1, dof_scale=np.ones(3)),
     ModelError, "arc_length", "dof_scale", "(9,)", "(3,)")
case(g, "arc-length-u0-nan", lambda: fm.arc_length(loaded_beam(), 0.1, u0=np.full(9, nan)), ModelError,
     "arc_length", "u0", "nan")
case(g, "buckling-pre-load-nan", lambda: fm.linear_buckling(loaded_beam(), load_factor=nan), ModelError,
     "linear_buckling", "load_factor", "nan")
case(g, "buckling-u-pre-inf", lambda: fm.linear_buckling(loaded_beam(), u_pre=np.full(9, inf)), ModelError,
     "linear_buckling", "u_pre", "inf")
case(g, "initial-state-t0-nan", lambda: fm.consistent_initial_state(fm.Assembly(pendulum()), t0=nan),
     ModelError, "consistent_initial_state", "t0", "nan")
case(g, "initial-state-u0-shape", lambda: fm.consistent_initial_state(fm.Assembly(pendulum()), u0=np.zeros(2)),
     ModelError, "consistent_initial_state", "u0", "(3,)", "(2,)")

# counts: integers in range
g = "counts"
case(g, "output-every-zero", lambda: fm.integrate(bars(), 0.01, 0.02, output_every=0), ModelError,
     "output_every", "0", ">= 1")
case(g, "output-every-float", lambda: fm.integrate(bars(), 0.01, 0.02, output_every=1.5), ModelError,
     "output_every", "1.5")
case(g, "max-cutbacks-negative", lambda: fm.integrate(bars(), 0.01, 0.02, max_cutbacks=-1), ModelError,
     "max_cutbacks", "-1")
case(g, "max-cutbacks-huge", lambda: fm.integrate(bars(), 0.01, 0.02, max_cutbacks=100), ModelError,
     "max_cutbacks", "100", "30")
case(g, "load-steps-zero", lambda: fm.load_control(loaded_beam(), 0), ModelError, "load_control", "0", ">= 1")
case(g, "load-steps-negative", lambda: fm.load_control(loaded_beam(), -3), ModelError, "load_control", "-3")
case(g, "load-steps-float", lambda: fm.load_control(loaded_beam(), 2.5), ModelError, "load_control", "2.5")
case(g, "load-steps-bool", lambda: fm.load_control(loaded_beam(), True), ModelError, "load_control", "True")
case(g, "load-control-cutbacks-float", lambda: fm.load_control(loaded_beam(), 1, max_cutbacks=1.0), ModelError,
     "load_control", "max_cutbacks", "1.0")
case(g, "arc-length-steps-zero", lambda: fm.arc_length(loaded_beam(), 0.1, n_steps=0), ModelError,
     "arc_length", "n_steps", "0")
case(g, "arc-length-steps-float", lambda: fm.arc_length(loaded_beam(), 0.1, n_steps=10.0), ModelError,
     "arc_length", "n_steps", "10.0")
case(g, "buckling-modes-zero", lambda: fm.linear_buckling(loaded_beam(), n_modes=0), ModelError,
     "linear_buckling", "n_modes", "0", ">= 1")
case(g, "buckling-modes-float", lambda: fm.linear_buckling(loaded_beam(), n_modes=2.0), ModelError,
     "linear_buckling", "n_modes", "2.0")
case(g, "buckling-dense-limit-negative", lambda: fm.linear_buckling(loaded_beam(), dense_limit=-1), ModelError,
     "linear_buckling", "dense_limit", "-1")
case(g, "initial-state-iterations-zero", lambda: fm.consistent_initial_state(fm.Assembly(pendulum()), iterations=0),
     ModelError, "consistent_initial_state", "iterations", "0")

# step counts far beyond reason: refused before the first step, with the count
g = "step-limit"
case(g, "dt-in-wrong-unit", lambda: fm.integrate(bars(), 1e-7, 1.0), ModelError, "10000000 time steps",
     "units", "max_steps")
case(g, "hour-in-seconds", lambda: fm.integrate(bars(), 1.0, 3.6e6), ModelError, "3600000 time steps",
     "max_steps")
case(g, "max-steps-given", lambda: fm.integrate(bars(), 0.1, 1.0, max_steps=5), ModelError, "10 time steps",
     "max_steps = 5")
case(g, "load-steps-huge", lambda: fm.load_control(loaded_beam(), 10**7), ModelError, "load_control",
     "10000000", "load factors")
case(g, "arc-length-steps-huge", lambda: fm.arc_length(loaded_beam(), 0.1, n_steps=10**7), ModelError,
     "arc_length", "n_steps", "10000000")

# DOFs without mass (and without stiffness or joint) in dynamics
g = "massless"


def _free_disc():
    m = fm.Model(dim=2)
    m.add_rigid_body([0.0, 0.0], 2.0, 0.0, name="disc")
    m.set_gravity([0.0, -9.81])
    return m


def _ball_on_socket():
    m = fm.Model(dim=3)
    ball = m.add_rigid_body([0.0, 0.0, 1.0], 1.0, [0.0, 0.0, 0.0], name="ball")
    m.add_joint("spherical", None, ball, name="socket")
    return m


def _massless_middle():
    m = bars(rho_A=0.0)
    m.add_point_mass(2, 1.0)
    return m


case(g, "body-without-inertia", lambda: one_step(_free_disc()), ModelError, "node 0 rz", "no mass")
case(g, "3d-body-without-inertia", lambda: one_step(_ball_on_socket()), ModelError, "node 0 rx", "no mass")
case(g, "massless-node-of-straight-bars", lambda: one_step(_massless_middle()), ModelError, "node 1 uy",
     "no mass")


def _bare_node_on_a_line():
    """Node 1 held only by a point-on-line joint: the joint leaves it free along the line."""
    m = pendulum()
    m.add_node([1.5, 0.0])
    m.add_joint("point-on-line", m.bodies[0], 1, at=[1.5, 0.0], x_axis=[1.0, 0.0], name="slot")
    return m


case(g, "joint-only-node-left-free", lambda: one_step(_bare_node_on_a_line()), ModelError, "node 1",
     "held only by joints", "1 of its 2 DOFs", "Add the joint between the bodies directly", "add_point_mass")

# loads at points of bodies
g = "body loads"
case(g, "body-load-on-plain-node", lambda: model2d().add_body_load(0, force=[1.0, 0.0], name="push"), ModelError,
     "'push'", "node 0 has no rotations", "add_load")
case(g, "body-load-on-ground", lambda: pendulum().add_body_load(None, force=[1.0, 0.0]), ModelError,
     "body load 'body load 0'", "ground")
case(g, "body-load-force-nan", lambda: pendulum().add_body_load(pendulum().bodies[0].node, force=[nan, 0.0]),
     ModelError, "force (N)", "nan")
case(g, "body-load-3d-force-in-2d", lambda: pendulum().add_body_load(0, force=[1.0, 0.0, 0.0]), ModelError,
     "force (N)", "2")
case(g, "body-load-point-string", lambda: pendulum().add_body_load(0, force=[1.0, 0.0], at="tip"), ModelError,
     "at (m)", "'tip'")
case(g, "body-load-nothing", lambda: pendulum().add_body_load(0), ModelError, "give a force", "moment")
case(g, "body-load-function-wrong-size", lambda: pendulum().add_body_load(0, force=lambda t: [1.0], name="gust"),
     UserFunctionError, "'gust'", "force (N)", "2 numbers")
case(g, "body-load-function-two-arguments", lambda: pendulum().add_body_load(0, force=lambda t, x: [1.0, 0.0]),
     ModelError, "force", "one argument")
case(g, "body-load-moment-3-in-2d", lambda: pendulum().add_body_load(0, moment=[0.0, 0.0, 1.0]), ModelError,
     "moment (N m)", "1")

# loads on fixed DOFs: a warning (the load goes into the reaction)
g = "warnings"
case(g, "load-on-clamped-node", lambda: fm.load_control(with_(loaded_beam(), lambda m: m.add_load(0, "uy", 5.0)), 1),
     FlexmbWarning, "node 0", "uy", "fixed")
case(g, "load-before-fix", lambda: fm.load_control(with_(loaded_beam(), lambda m: (
    m.add_load(1, "ux", 5.0), m.fix(1, "ux"))), 1), FlexmbWarning, "node 1", "ux", "fixed")
case(g, "load-on-prescribed-dof", lambda: one_step(with_(bars(), lambda m: (
    m.prescribe(2, "uy", lambda t: 0.1 * t), m.add_load(2, "uy", 1.0)))), FlexmbWarning, "node 2", "uy",
     "prescribed")
case(g, "load-on-fixed-dof-in-dynamics", lambda: one_step(with_(bars(), lambda m: m.add_load(0, "ux", 1.0))),
     FlexmbWarning, "node 0", "ux", "fixed")

# user functions: an exception, a non-finite or a wrong-shaped value names the load or joint
g = "user-functions"
case(g, "load-raises", lambda: one_step(with_(bars(), lambda m: m.add_load(2, "ux", boom))), UserFunctionError,
     "load on node 2 ux", "t = ", "ZeroDivisionError", cause=ZeroDivisionError)
case(g, "load-returns-nan", lambda: one_step(with_(bars(), lambda m: m.add_load(2, "ux", lambda t: nan))),
     UserFunctionError, "load on node 2 ux", "t = ", "returned nan")
case(g, "load-returns-pair", lambda: one_step(with_(bars(), lambda m: m.add_load(2, "ux", lambda t: [t, t]))),
     UserFunctionError, "load on node 2 ux", "returned [0", "one number")
case(g, "load-returns-none", lambda: one_step(with_(bars(), lambda m: m.add_load(2, "uy", lambda t: None))),
     UserFunctionError, "load on node 2 uy", "returned None")
case(g, "load-returns-string", lambda: one_step(with_(bars(), lambda m: m.add_load(2, "uy", lambda t: "1"))),
     UserFunctionError, "load on node 2 uy", "returned '1'")
case(g, "load-without-argument", lambda: bars().add_load(2, "ux", lambda: 1.0), ModelError, "load on node 2 ux",
     "one argument")
case(g, "statics-load-nan", lambda: fm.load_control(with_(beam(), lambda m: m.add_load(2, "uy", lambda lam: nan)), 1),
     UserFunctionError, "load on node 2 uy", "load factor", "returned nan")
case(g, "statics-load-raises", lambda: fm.load_control(with_(beam(), lambda m: m.add_load(2, "uy", boom)), 1),
     UserFunctionError, "load on node 2 uy", "load factor", "ZeroDivisionError", cause=ZeroDivisionError)
case(g, "prescribed-raises", lambda: one_step(with_(bars(), lambda m: m.prescribe(2, "ux", boom))),
     UserFunctionError, "prescribed node 2 ux", "t = ", "ZeroDivisionError", cause=ZeroDivisionError)
case(g, "prescribed-returns-inf", lambda: one_step(with_(bars(), lambda m: m.prescribe(2, "uy", lambda t: inf))),
     UserFunctionError, "prescribed node 2 uy", "returned inf")
case(g, "prescribed-two-arguments", lambda: bars().prescribe(2, "uy", lambda t, s: 0.0), ModelError,
     "prescribe", "node 2 uy", "one argument")
case(g, "statics-prescribed-raises", lambda: fm.load_control(with_(loaded_beam(), lambda m: m.prescribe(
    2, "ux", boom)), 1), UserFunctionError, "prescribed node 2 ux", "load factor", cause=ZeroDivisionError)
case(g, "drive-raises", lambda: one_step(pendulum(drive=boom)), UserFunctionError, "drive of joint 'pivot'",
     "t = ", "ZeroDivisionError", cause=ZeroDivisionError)
case(g, "drive-returns-nan", lambda: one_step(pendulum(drive=lambda t: nan)), UserFunctionError,
     "drive of joint 'pivot'", "returned nan")
case(g, "drive-returns-array", lambda: one_step(pendulum(drive=lambda t: np.array([t, t]))), UserFunctionError,
     "drive of joint 'pivot'", "one number")
case(g, "drive-3d-raises", lambda: one_step(top(drive=boom)), UserFunctionError, "drive of joint 'pin'",
     "ZeroDivisionError", cause=ZeroDivisionError)
case(g, "drive-not-callable", lambda: pendulum(drive=0.5), ModelError, "'pivot'", "drive", "0.5", "function")
case(g, "drive-without-argument", lambda: pendulum(drive=lambda: 0.0), ModelError, "drive of joint 'pivot'",
     "one argument")
case(g, "follower-returns-pair", lambda: fm.load_control(with_(shaft(), lambda m: m.add_follower_force(
    2, lambda lam: [0.0, lam])), 1), UserFunctionError, "follower-force load on node 2", "load factor",
     "3 numbers")
case(g, "follower-moment-raises", lambda: fm.linear_buckling(with_(shaft(), lambda m: m.add_follower_moment(
    2, boom))), UserFunctionError, "follower-moment load on node 2", "ZeroDivisionError", cause=ZeroDivisionError)
case(g, "follower-returns-nan", lambda: fm.load_control(with_(shaft(), lambda m: m.add_semi_tangential_moment(
    2, lambda lam: [nan, 0.0, 0.0])), 1), UserFunctionError, "semi-tangential-moment load on node 2", "nan")
case(g, "initial-state-drive-raises", lambda: fm.consistent_initial_state(fm.Assembly(pendulum(drive=boom))),
     UserFunctionError, "drive of joint 'pivot'", cause=ZeroDivisionError)

# a model changed after its Assembly was built
g = "stale-assembly"


def _stale(change: Callable[[fm.Model], object]) -> fm.Assembly:
    asm = fm.Assembly(loaded_beam())
    change(asm.model)
    return asm


case(g, "load-added", lambda: fm.load_control(_stale(lambda m: m.add_load(1, "uy", 1.0)), 1), ModelError,
     "changed after", "Assembly")
case(g, "gravity-set", lambda: one_step(_stale(lambda m: m.set_gravity([0.0, -9.81]))), ModelError,
     "changed after", "Assembly")
case(g, "node-added", lambda: fm.linear_buckling(_stale(lambda m: m.add_node([5.0, 5.0]))), ModelError,
     "changed after", "Assembly")


# an empty or half-built model, or something else where a model belongs: named at the numbering of
# the DOFs (every analysis builds its Assembly there), not an index error inside the assembly
g = "empty-model"
case(g, "assembly-no-nodes", lambda: fm.Assembly(fm.Model(dim=2)), ModelError, "no nodes", "add_nodes",
     "add_truss")
case(g, "integrate-no-nodes", lambda: one_step(fm.Model(dim=2)), ModelError, "no nodes", "add_nodes")
case(g, "load-control-no-nodes", lambda: fm.load_control(fm.Model(dim=3), 1), ModelError, "no nodes", "add_shell")
case(g, "arc-length-no-nodes", lambda: fm.arc_length(fm.Model(dim=2), 0.1), ModelError, "no nodes")
case(g, "modes-no-nodes", lambda: fm.natural_modes(fm.Model(dim=2), 1), ModelError, "no nodes")
case(g, "buckling-no-nodes", lambda: fm.linear_buckling(fm.Model(dim=3)), ModelError, "no nodes")
case(g, "nodes-without-elements", lambda: one_step(model2d()), ModelError, "3 nodes", "no element",
     "add_point_mass")
case(g, "two-unconnected-nodes", lambda: fm.load_control(with_(loaded_beam(), lambda m: m.add_nodes(
    [[5.0, 5.0], [6.0, 5.0]])), 1), ModelError, "node 3", "not connected", "2 such node(s): 3, 4")
case(g, "buckling-all-fixed", lambda: fm.linear_buckling(with_(beam(), lambda m: (
    m.add_load(2, "ux", -1.0), m.fix(1), m.fix(2)))), ModelError, "linear_buckling", "no free DOF", "9 DOFs")
case(g, "arc-length-all-fixed", lambda: fm.arc_length(with_(bars(), lambda m: (m.fix(1), m.fix(2))), 0.1),
     ModelError, "arc_length", "no free DOF")
case(g, "modes-all-fixed", lambda: fm.natural_modes(with_(beam(), lambda m: (m.fix(1), m.fix(2))), 1),
     ModelError, "natural_modes", "no free DOF")
case(g, "statics-nothing-loads", lambda: fm.load_control(beam(), 2), FlexmbWarning, "load_control",
     "nothing loads the model", "u = 0")
case(g, "assembly-of-none", lambda: fm.Assembly(None), ModelError, "flexmb.Model", "None")
case(g, "integrate-a-mesh-file", lambda: fm.integrate("frame.msh", 0.1, 1.0), ModelError, "flexmb.Model",
     "'frame.msh'", "build_model")
case(g, "modes-of-a-list", lambda: fm.natural_modes([beam()], 1), ModelError, "flexmb.Model", "(list)")
case(g, "load-control-of-none", lambda: fm.load_control(None, 1), ModelError, "flexmb.Model", "None")
case(g, "buckling-of-a-result-file", lambda: fm.linear_buckling("run.h5"), ModelError, "flexmb.Model", "'run.h5'",
     "load_result")

# strings, None, lists and complex numbers where numbers or names belong
g = "types"
case(g, "nodes-strings", lambda: fm.Model(dim=2).add_nodes([["0", "0"], ["1", "0"]]), ModelError,
     "node positions", "'0'")
case(g, "nodes-ragged", lambda: fm.Model(dim=2).add_nodes([[0.0, 0.0], [1.0]]), ModelError, "node positions",
     "[[0.0, 0.0], [1.0]]")
case(g, "node-none", lambda: fm.Model(dim=2).add_node(None), ModelError, "node 0", "None")
case(g, "node-complex", lambda: fm.Model(dim=2).add_node([1 + 2j, 0.0]), ModelError, "node 0", "(1+2j)")
case(g, "EA-list-of-strings", lambda: model2d().add_truss([[0, 1], [1, 2]], EA=["1e3", "2e3"], name="bars"),
     ModelError, "'bars'", "EA", "'1e3'")
case(g, "EA-none", lambda: model2d().add_truss([[0, 1]], EA=None, name="bars"), ModelError, "'bars'", "EA",
     "None")
case(g, "group-name-number", lambda: model2d().add_truss([[0, 1]], EA=1.0, name=5), ModelError, "group name",
     "string", "5")
case(g, "body-name-number", lambda: fm.Model(dim=2).add_rigid_body([0.0, 0.0], 1.0, 1.0, name=3), ModelError,
     "add_rigid_body", "name", "3")
case(g, "joint-name-number", lambda: model2d().add_joint("revolute", 0, 1, name=1), ModelError, "add_joint",
     "name", "1")
case(g, "spring-name-list", lambda: bars().add_spring(1, 2, k=1.0, name=["s"]), ModelError, "add_spring",
     "name", "['s']")
case(g, "gravity-strings", lambda: bars().set_gravity(["0", "-9.81"]), ModelError, "gravity", "'-9.81'")
case(g, "gravity-none", lambda: bars().set_gravity(None), ModelError, "gravity", "None")
case(g, "body-mass-string", lambda: fm.Model(dim=2).add_rigid_body([0.0, 0.0], "1", 1.0, name="crank"),
     ModelError, "'crank'", "mass", "'1'")
case(g, "joint-point-strings", lambda: model2d().add_joint("revolute", 0, 1, at=["0", "0"], name="hinge"),
     ModelError, "'hinge'", "joint point", "'0'")
case(g, "joint-kind-capital", lambda: model2d().add_joint("Revolute", 0, 1, name="hinge"), ModelError,
     "'hinge'", "'Revolute'", "revolute")
case(g, "fix-dofs-number", lambda: bars().fix(1, 0), ModelError, "fix", "node 1", "dofs", "0")
case(g, "fix-dofs-unknown-in-list", lambda: bars().fix(1, ["ux", "uq"]), ModelError, "node 1", "'uq'", "ux, uy")
case(g, "dof-name-capital", lambda: bars().add_load(1, "UX", 1.0), ModelError, "node 1", "'UX'", "ux")
case(g, "load-none", lambda: bars().add_load(2, "ux", None), ModelError, "load on node 2 ux", "None")
case(g, "load-one-element-array", lambda: bars().add_load(2, "ux", np.array([1.0])), ModelError,
     "load on node 2 ux", "[1.0]")
case(g, "point-mass-inertia-tensor", lambda: shaft().add_point_mass(2, 1.0, np.eye(3)), ModelError, "node 2",
     "inertia", "a number")
case(g, "model-dim-string", lambda: fm.Model(dim="3"), ModelError, "dim", "'3'")
case(g, "u0-strings", lambda: fm.integrate(bars(), 0.1, 0.1, u0=["0"] * 6), ModelError, "u0", "'0'")
case(g, "scheme-none", lambda: fm.integrate(bars(), 0.01, 0.01, scheme=None), ModelError, "scheme", "None",
     "mid-point")
case(g, "scheme-capital", lambda: fm.integrate(bars(), 0.1, 0.1, scheme="Newmark"), ModelError, "'Newmark'",
     "newmark")
case(g, "t-end-string", lambda: fm.integrate(bars(), 0.1, "1"), ModelError, "t_end", "'1'")
case(g, "load-factors-strings", lambda: fm.load_control(loaded_beam(), ["0.5", "1.0"]), ModelError,
     "load_control", "'0.5'")
case(g, "load-factors-nested", lambda: fm.load_control(loaded_beam(), [[0.5, 1.0]]), ModelError,
     "load_control", "load_factors", "[[0.5, 1.0]]")
case(g, "modes-count-string", lambda: fm.natural_modes(beam(), "3"), ModelError, "natural_modes", "n_modes",
     "'3'")


def _shell(**kw):
    """One Shell3 triangle "plate" in a 3D model with the given properties replacing the defaults."""
    props = dict(E=7e10, nu=0.3, thickness=0.01, name="plate")
    props.update(kw)
    m = model3d()
    m.add_node([0.0, 1.0, 0.0])
    return m.add_shell([[0, 1, 3]], **props)


# elements, supports and loads a model cannot have
g = "model"
case(g, "connectivity-empty", lambda: model2d().add_truss([], EA=1.0, name="bars"), ModelError, "'bars'",
     "connectivity is empty", "at least one element")
case(g, "truss-mass-cubic", lambda: model2d().add_truss([[0, 1]], EA=1.0, mass="cubic", name="bars"),
     ModelError, "'bars'", "mass", "'cubic'", "'lumped'")
case(g, "rhoA-per-element-length", lambda: model2d().add_beam2d([[0, 1], [1, 2]], EA=1.0, EI=1.0,
                                                                 rho_A=[1.0, 2.0, 3.0], name="beam"),
     ModelError, "'beam'", "rho_A", "(3,)", "(2)")
case(g, "beam3d-three-nodes", lambda: model3d().add_beam3d([[0, 1, 2]], EA=1.0, GJ=1.0, EI_y=1.0, EI_z=1.0,
                                                           name="shaft"),
     ModelError, "'shaft'", "connectivity", "(n_el, 2)", "(1, 3)")
case(g, "shell-nu-half", lambda: _shell(nu=0.5), ModelError, "'plate'", "nu", "0.5", "(-1, 0.5)")
case(g, "shell-nu-minus-one", lambda: _shell(nu=-1.0), ModelError, "'plate'", "nu", "-1.0")
case(g, "shell-thickness-zero", lambda: _shell(thickness=0.0), ModelError, "'plate'", "thickness", "positive")
case(g, "shell-E-negative", lambda: _shell(E=-7e10), ModelError, "'plate'", "E of element 0", "-7", "positive")
case(g, "shell-rho-negative", lambda: _shell(rho=-1.0), ModelError, "'plate'", "rho", "-1.0")
case(g, "shell-membrane-unknown", lambda: _shell(membrane="dkt"), ModelError, "'plate'", "membrane", "'dkt'",
     "'opt'")
case(g, "shell-two-nodes", lambda: model3d().add_shell([[0, 1]], E=1.0, nu=0.3, thickness=0.1, name="plate"),
     ModelError, "'plate'", "connectivity", "(n_el, 3)")
case(g, "shell-in-2d", lambda: model2d().add_shell([[0, 1, 2]], E=1.0, nu=0.3, thickness=0.1), ModelError,
     "add_shell", "3D")
case(g, "prescribe-3d-rotation", lambda: shaft().prescribe(2, "rx", lambda t: 0.1 * t), ModelError,
     "prescribe", "node 2 rx", "only be fixed", "drive")
case(g, "fix-rotation-of-truss-node", lambda: fm.Assembly(with_(bars(), lambda m: m.fix(2, "rz"))), ModelError,
     "prescribed node 2 rz", "fix", "no DOF 'rz'", "ux, uy")
case(g, "load-rotation-of-truss-node", lambda: fm.load_control(with_(bars(), lambda m: m.add_load(2, "rz", 1.0)),
                                                                1),
     ModelError, "load on node 2 rz", "add_load", "no DOF 'rz'")
case(g, "point-mass-out-of-range", lambda: bars().add_point_mass(3, 1.0), ModelError, "add_point_mass",
     "node 3", "3 nodes")
case(g, "joint-both-ground", lambda: model2d().add_joint("revolute", None, None, name="hinge"), ModelError,
     "'hinge'", "side b")
case(g, "drive-on-spherical", lambda: top(kind="spherical", drive=lambda t: t), ModelError, "'pin'", "driven",
     "revolute")
case(g, "attach-body-to-itself", lambda: (lambda m: m.attach(m.bodies[0].node, m.bodies[0]))(pendulum()),
     ModelError, "attach node 0", "different")
case(g, "edge-load-not-an-edge", lambda: bars().add_edge_load([0, 2], [0.0, -1.0]), ModelError, "add_edge_load",
     "nodes 0 and 2", "not joined")
case(g, "edge-load-3-components-in-2d", lambda: bars().add_edge_load([0, 1], [0.0, -1.0, 0.0]), ModelError,
     "add_edge_load", "force_per_length", "(2,)", "(3,)")
case(g, "edge-load-float-nodes", lambda: bars().add_edge_load([0.0, 1.0], [0.0, -1.0]), ModelError,
     "add_edge_load", "node indices", "[0.0, 1.0]")
case(g, "modal-body-from-a-file-name", lambda: fm.Model(dim=2).add_modal_body("blade.h5", name="blade"),
     ModelError, "'blade'", "ModalBodyData", "str")

# springs, dampers, bushings, damping and user forces
g = "force-elements"
case(g, "spring-k-negative", lambda: bars().add_spring(1, 2, k=-5.0, name="s"), ModelError, "'s'", "k (N/m)", "-5")
case(g, "spring-k-nan", lambda: bars().add_spring(1, 2, k=nan, name="s"), ModelError, "'s'", "k (N/m)", "nan")
case(g, "spring-rest-length-negative", lambda: bars().add_spring(1, 2, k=1.0, rest_length=-1.0, name="s"),
     ModelError, "'s'", "rest_length", "-1")
case(g, "spring-one-node", lambda: bars().add_spring(1, 1, k=1.0, name="s"), ModelError, "'s'", "coincide")
case(g, "spring-node-missing", lambda: bars().add_spring(1, 9, k=1.0, name="s"), ModelError, "'s'", "node 9",
     "3 nodes")
case(g, "spring-to-ground-without-point", lambda: bars().add_spring(None, 2, k=1.0, name="s"), ModelError, "'s'",
     "ground", "at_a")
case(g, "spring-k-and-curve", lambda: bars().add_spring(1, 2, k=1.0, curve=lambda l: l, name="s"), ModelError,
     "spring 's'", "either k")
case(g, "damper-c-negative", lambda: bars().add_damper(1, 2, c=-0.1, name="d"), ModelError, "'d'", "c (N s/m)",
     "-0.1")
case(g, "damper-c-string", lambda: bars().add_damper(1, 2, c="0.1", name="d"), ModelError, "'d'", "c (N s/m)",
     "'0.1'")
case(g, "bushing-k-negative", lambda: (lambda m: m.add_bushing(None, m.bodies[0], k=[-1.0, 1.0], k_rot=1.0,
                                                               name="b"))(pendulum()),
     ModelError, "'b'", "k (N/m)", "-1.0", ">= 0")
case(g, "bushing-k-3-in-2d", lambda: (lambda m: m.add_bushing(None, m.bodies[0], k=[1.0, 1.0, 1.0], k_rot=1.0,
                                                              name="b"))(pendulum()),
     ModelError, "'b'", "k (N/m)", "2 (one per axis)", "(3,)")
case(g, "rayleigh-alpha-negative", lambda: bars().set_rayleigh_damping("bars", alpha=-1.0), ModelError,
     "'bars'", "alpha", "-1")
case(g, "rayleigh-unknown-group", lambda: bars().set_rayleigh_damping("beam", beta=1e-3), ModelError,
     "'beam'", "'bars'")
case(g, "user-force-not-callable", lambda: bars().add_user_force([2], force=1.0, name="drag"), ModelError,
     "'drag'", "functions of (t, x, v)", "1.0")
case(g, "user-force-on-nothing", lambda: bars().add_user_force([], force=lambda t, x, v: 0.0 * x, name="drag"),
     ModelError, "'drag'", "on must list", "[]")
case(g, "joint-spring-on-a-name", lambda: pendulum().add_joint_spring_damper("pivot", k=1.0), ModelError,
     "add_joint_spring_damper", "'pivot'", "not a joint")

# sensors on items that do not exist, or with options they do not take
g = "sensors"
case(g, "quantity-typo", lambda: bars().add_sensor("postion", 2), ModelError, "'postion'",
     "did you mean 'position'")
case(g, "node-missing", lambda: bars().add_sensor("position", 9), ModelError, "node 9", "0..2")
case(g, "node-float", lambda: bars().add_sensor("position", 2.0), ModelError, "node index", "2.0")
case(g, "angle-in-3d", lambda: shaft().add_sensor("angle", 2), ModelError, "'angle'", "2D", "cardan")
case(g, "offset-3-in-2d", lambda: pendulum().add_sensor("position", 0, offset=[0.1, 0.0, 0.0]), ModelError,
     "offset", "2 finite numbers", "[0.1, 0.0, 0.0]")
case(g, "offset-nan", lambda: pendulum().add_sensor("position", 0, offset=[nan, 0.0]), ModelError, "offset",
     "nan")
case(g, "joint-missing", lambda: pendulum().add_sensor("joint_coordinate", "hinge"), ModelError, "'hinge'",
     "'pivot'")
case(g, "element-missing", lambda: bars().add_sensor("element_output", "bars", element=5, output="N"),
     ModelError, "element 5", "'bars'", "0..1")
case(g, "element-float", lambda: bars().add_sensor("element_output", "bars", element=1.0, output="N"),
     ModelError, "element 1.0", "'bars'")
case(g, "output-unknown", lambda: bars().add_sensor("element_output", "bars", element=0, output="M"),
     ModelError, "'bars'", "'M'", "N, axial_strain")
case(g, "group-missing", lambda: bars().add_sensor("element_output", "beam", element=0, output="N"),
     ModelError, "'beam'", "0: bars")
case(g, "name-twice", lambda: with_(bars(), lambda m: m.add_sensor("position", 2, name="tip")).add_sensor(
    "velocity", 2, name="tip"), ModelError, "'tip'", "already")
case(g, "name-with-space", lambda: bars().add_sensor("position", 2, name="tip x"), ModelError, "'tip x'",
     "letters, digits")
case(g, "body-of-another-model", lambda: pendulum().add_sensor("position", other_body()), ModelError,
     "'stranger'", "another model")
case(g, "angle-of-truss-node", lambda: one_step(with_(bars(), lambda m: m.add_sensor("angle", 2))), ModelError,
     "angle of node 2", "no rotation")
case(g, "component-of-scalar-output", lambda: one_step(with_(bars(), lambda m: m.add_sensor(
    "element_output", "bars", element=0, output="N", component=2))), ModelError, "'N'", "one value", "component 2")
case(g, "option-of-another-quantity", lambda: bars().add_sensor("position", 2, output="N"), ModelError,
     "output='N'", "offset")

# mesh files that are missing or are not meshes, and models built from them with bad choices
g = "mesh-files"
_FOLDER = tempfile.TemporaryDirectory()          # removed at exit
_FILES = Path(_FOLDER.name)
(_FILES / "notes.txt").write_text("these are my notes, not a mesh\n")
(_FILES / "notes.msh").write_text("these are my notes, not a mesh\n")
(_FILES / "empty.msh").write_text("")


def _mesh() -> Mesh:
    """Three points on the x axis, the line set "bars" and the point set "base" (point 0)."""
    return Mesh(Path("frame.msh"), np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]),
                {"bars": np.array([[0, 1], [1, 2]])}, {"bars": np.array([0, 1, 2]), "base": np.array([0])})


_BARS = {"bars": {"element": "truss", "EA": 1.0}}
case(g, "missing", lambda: read_mesh(_FILES / "frame.msh"), FileNotFoundError, "frame.msh", "does not exist")
case(g, "text-file", lambda: read_mesh(_FILES / "notes.txt"), ValueError, "notes.txt", "cannot read")
case(g, "text-in-a-msh-file", lambda: read_mesh(_FILES / "notes.msh"), ModelError, "notes.msh", "cannot read",
     "gmsh")
case(g, "empty-file", lambda: read_mesh(_FILES / "empty.msh"), ModelError, "empty.msh", "empty")
case(g, "folder", lambda: read_mesh(_FILES), ModelError, _FOLDER.name, "folder")
case(g, "path-none", lambda: read_mesh(None), ModelError, "read_mesh", "None")
case(g, "build-missing-file", lambda: build_model(_FILES / "frame.msh", 2, _BARS), FileNotFoundError, "frame.msh")
case(g, "build-dim-4", lambda: build_model(_mesh(), 4, _BARS), ModelError, "dim", "4")
case(g, "build-spec-string", lambda: build_model(_mesh(), 2, {"bars": "truss"}), ModelError, "'bars'", "'truss'",
     "dict")
case(g, "build-groups-list", lambda: build_model(_mesh(), 2, ["bars"]), ModelError, "groups", "dict", "['bars']")
case(g, "build-set-missing", lambda: build_model(_mesh(), 2, {"beams": {"element": "truss", "EA": 1.0}}),
     ModelError, "'beams'", "bars (2 lines)")
case(g, "build-EA-missing", lambda: build_model(_mesh(), 2, {"bars": {"element": "truss"}}), ModelError,
     "'bars'", "EA")
case(g, "build-EA-negative", lambda: build_model(_mesh(), 2, {"bars": {"element": "truss", "EA": -1.0}}),
     ModelError, "'bars'", "EA", "-1")
case(g, "build-element-unknown", lambda: build_model(_mesh(), 2, {"bars": {"element": "beam", "EA": 1.0}}),
     ModelError, "'bars'", "'beam'", "beam2d")
case(g, "build-shells-of-lines", lambda: build_model(_mesh(), 3, {"bars": {"element": "shell", "E": 1.0, "nu": 0.3,
                                                                           "thickness": 0.1}}),
     ModelError, "'bars'", "no triangles")
case(g, "build-support-dof", lambda: build_model(_mesh(), 2, _BARS, supports={"base": "uz"}), ModelError,
     "'base'", "'uz'")
case(g, "build-support-missing", lambda: build_model(_mesh(), 2, _BARS, supports={"ground": "all"}), ModelError,
     "'ground'", "base (1 points)")
case(g, "build-supports-list", lambda: build_model(_mesh(), 2, _BARS, supports=["base"]), ModelError,
     "supports", "dict", "['base']")

# pictures and plots of results: refused before a window is opened
g = "pictures"
_RESULTS_DRAWN: dict[str, fm.Result] = {}


def _run() -> fm.TimeHistory:
    """One time step of bars(), computed once for all picture cases."""
    if "run" not in _RESULTS_DRAWN:
        _RESULTS_DRAWN["run"] = one_step(bars())
    return _RESULTS_DRAWN["run"]


case(g, "render-step-range", lambda: scene.render(_run(), step=5), IndexError, "step 5", "2 steps")
case(g, "render-step-string", lambda: scene.render(_run(), step="last"), ModelError, "step", "'last'", "integer")
case(g, "render-colour-unknown", lambda: scene.render(_run(), color="M"), ValueError, "'M'", "N, axial_strain")
case(g, "render-window-zero", lambda: scene.render(_run(), window_size=(0, 600)), ModelError, "window_size",
     "(0, 600)")
case(g, "render-window-scalar", lambda: scene.render(_run(), window_size=800), ModelError, "window_size",
     "(width, height)", "800")
case(g, "render-scale-string", lambda: scene.render(_run(), scale="big"), ModelError, "scale", "'big'")
case(g, "render-none", lambda: scene.render(None), ModelError, "render", "flexmb result", "None")
case(g, "render-a-file-name", lambda: scene.render("run.h5"), ModelError, "render", "'run.h5'", "load_result")
case(g, "animate-every-zero", lambda: scene.animate(_run(), _FILES / "run.gif", every=0), ValueError, "every",
     "0")
case(g, "animate-fps-zero", lambda: scene.animate(_run(), _FILES / "run.gif", fps=0), ModelError, "fps", "> 0",
     "0")
case(g, "animate-suffix", lambda: scene.animate(_run(), _FILES / "run.avi"), ValueError, "run.avi", ".gif")
case(g, "render-modes-of-a-run", lambda: scene.render_modes(_run(), _FILES / "modes.png"), ValueError,
     "render_modes", "'dynamic'")
case(g, "plot-a-string", lambda: plots.plot_history(_run(), "uy@2"), ModelError, "plot_history", "list",
     "['uy@2']")
case(g, "plot-a-file-name", lambda: plots.plot_history("run.h5", ["uy@2"]), ModelError, "plot_history",
     "'run.h5'")
case(g, "plot-nothing", lambda: plots.plot_history(_run(), []), ValueError, "plot_history", "at least one")

# asking results, the DOF map and the analyses for what is not there
g = "asking"
case(g, "result-dof-node-missing", lambda: _run().dof(9, "ux"), ModelError, "node 9", "0..2")
case(g, "result-dof-rotation-of-truss", lambda: _run().dof(2, "rz"), ModelError, "node 2", "'rz'", "ux, uy")
case(g, "result-group-missing", lambda: _run().element("beam", "N"), ModelError, "'beam'", "bars")
case(g, "result-output-missing", lambda: _run().element("bars", "M"), ModelError, "'M'", "N, axial_strain")
case(g, "result-sensor-missing", lambda: _run().sensor("tip"), ModelError, "'tip'", "add_sensor")
case(g, "result-time-outside", lambda: _run().step_at(5.0), ModelError, "t = 5 s", "0 .. 0.01")
case(g, "result-file-missing", lambda: fm.load_result(_FILES / "run.h5"), FileNotFoundError, "run.h5",
     "does not exist")
case(g, "result-file-not-hdf5", lambda: fm.load_result(_FILES / "notes.txt"), ValueError, "notes.txt", "HDF5")
case(g, "dof-label-out-of-range", lambda: fm.Assembly(bars()).dofs.label(99), ModelError, "DOF 99", "6 DOFs")
case(g, "modes-zero", lambda: fm.natural_modes(beam(), 0), ModelError, "natural_modes", "n_modes", ">= 1")
case(g, "modes-fraction", lambda: fm.natural_modes(beam(), 2.5), ModelError, "natural_modes", "n_modes", "2.5")
case(g, "modes-more-than-dofs", lambda: fm.natural_modes(beam(), 50), ModelError, "natural_modes", "50",
     "6 free DOFs")
case(g, "modes-without-mass", lambda: fm.natural_modes(with_(model2d(), lambda m: (
    m.add_beam2d([[0, 1], [1, 2]], EA=1.0, EI=1.0), m.fix(0))), 2), ModelError, "natural_modes", "no mass")
case(g, "buckling-without-load", lambda: fm.linear_buckling(beam()), ModelError, "linear_buckling", "no load")
case(g, "arc-length-without-load", lambda: fm.arc_length(beam(), 0.1), ModelError, "arc_length",
     "reference load", "zero")
case(g, "initial-state-of-a-string", lambda: fm.consistent_initial_state("pendulum"), ModelError,
     "consistent_initial_state", "flexmb.Assembly", "(str)")
case(g, "linearize-u-shape", lambda: fm.linearize(beam(), u=np.zeros(3)), ModelError, "linearize", "(9,)",
     "(3,)")


# ------------------------------------------------------------------ running the table
def outcome(c: Case) -> tuple[str, str]:
    """('clear' | 'vague' | 'silent', what happened) for one case."""
    if issubclass(c.error, Warning):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                c.call()
            except Exception as exc:
                return "vague", f"raised {type(exc).__name__} instead of warning: {exc}"
        hits = [str(w.message) for w in caught if issubclass(w.category, c.error)]
        if not hits:
            return "silent", "no warning"
        message = next((h for h in hits if all(n in h for n in c.needles)), hits[0])
        missing = [n for n in c.needles if n not in message]
        return ("vague", f"warning lacks {missing}: {message}") if missing else ("clear", message)
    try:
        c.call()
    except Exception as exc:
        message = str(exc)
        if not isinstance(exc, c.error):
            return "vague", f"{type(exc).__name__} instead of {c.error.__name__}: {message}"
        missing = [n for n in c.needles if n not in message]
        if missing:
            return "vague", f"message lacks {missing}: {message}"
        if c.cause is not None and not isinstance(exc.__cause__, c.cause):
            return "vague", f"__cause__ is {exc.__cause__!r}, expected {c.cause.__name__}: {message}"
        return "clear", message
    return "silent", "no error"


_RESULTS: dict[str, str] = {}


@pytest.mark.parametrize("c", CASES, ids=[f"{c.group}:{c.id}" for c in CASES])
def test_bad_input_gives_a_clear_error_naming_the_item(c: Case):
    status, what = outcome(c)
    _RESULTS[f"{c.group}:{c.id}"] = status
    assert status == "clear", f"{c.group}:{c.id} is {status}: {what}"


def test_case_ids_are_unique_and_there_are_at_least_100():
    ids = [f"{c.group}:{c.id}" for c in CASES]
    assert len(set(ids)) == len(ids), f"duplicate ids: {sorted({i for i in ids if ids.count(i) > 1})}"
    assert len(ids) >= 100, f"only {len(ids)} cases"


def test_valid_inputs_that_look_like_the_bad_ones_are_accepted():
    """numpy integers as indices, tuples as positions, inf shear stiffness, a plate-like inertia
    (J3 = J1 + J2), a slender-rod inertia (J1 = 0), a massless but stiff beam in dynamics."""
    m = fm.Model(dim=3)
    n = m.add_nodes(((0.0, 0.0, 0.0), (1.0, 0.0, 0.0)))
    m.add_beam3d(np.c_[n[:-1], n[1:]], EA=1.0, GJ=1.0, EI_y=1.0, EI_z=1.0, GA_ky=np.inf, y_axis=(0, 2, 0))
    m.fix(n[0])
    m.add_load(n[1], "uz", np.float32(-1e-3))
    m.add_rigid_body((0.0, 0.0, 2.0), 1, [1.0, 2.0, 3.0], name="plate")
    m.add_rigid_body((0.0, 0.0, 3.0), 1.0, np.diag([0.0, 1.0, 1.0]), name="rod")
    assert len(m.bodies) == 2 and m.n_nodes == 4, "valid bodies were not added"
    stiff = fm.Model(dim=2)
    stiff.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    stiff.add_beam2d(np.array([[0, 1]], dtype=np.int32), EA=1e3, EI=1.0, second_order=np.bool_(True))
    stiff.fix(np.int64(0))
    stiff.add_load(1, "uy", lambda t: -1.0)
    h = fm.integrate(stiff, 0.01, 0.02, output_every=np.int64(1))
    assert np.all(np.isfinite(h.u)), "the massless, stiff beam gave non-finite displacements"


def test_a_fully_prescribed_model_is_not_an_empty_one():
    """A bar with every DOF fixed or prescribed has nothing free, yet statics and dynamics run and
    give its force as reactions: statics EA delta / L, mid-point dynamics at constant stretching
    speed w (no inertia) the step's mid-point force EA w (t_end - dt / 2) / L; no warning."""
    EA, L, delta, w, dt = 1e3, 1.0, 1e-3, 0.1, 0.01

    def bar(stretch) -> fm.Model:
        m = fm.Model(dim=2)
        m.add_nodes([[0.0, 0.0], [L, 0.0]])
        m.add_truss([[0, 1]], EA=EA, rho_A=1.0)
        m.fix(0)
        m.fix(1, "uy")
        m.prescribe(1, "ux", stretch)
        return m

    with warnings.catch_warnings():
        warnings.simplefilter("error", FlexmbWarning)
        path = fm.load_control(bar(delta), 2)
        history = fm.integrate(bar(lambda t: w * t), dt, 10 * dt)
    pulled = path.reactions[-1][path.layout.index(1, "ux")]
    assert abs(pulled - EA * delta / L) < 1e-12 * EA, f"static reaction {pulled} N, expected {EA * delta / L} N"
    expected = EA * w * (history.t[-1] - 0.5 * dt) / L
    pulled = history.reactions[-1][history.layout.index(1, "ux")]
    assert abs(pulled - expected) < 1e-12 * EA, f"dynamic reaction {pulled} N, expected {expected} N"


def test_summary_of_clear_cases(capsys):
    """Prints 'bad input: N of M cases give a clear error naming the item' (runs the cases that
    did not run in this session, e.g. under -k)."""
    for c in CASES:
        key = f"{c.group}:{c.id}"
        if key not in _RESULTS:
            _RESULTS[key] = outcome(c)[0]
    clear = sum(status == "clear" for status in _RESULTS.values())
    with capsys.disabled():
        print(f"\nbad input: {clear} of {len(CASES)} cases give a clear error naming the item")
    assert clear == len(CASES), f"{len(CASES) - clear} cases are not clear: " + ", ".join(
        k for k, s in _RESULTS.items() if s != "clear")
