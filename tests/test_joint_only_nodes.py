"""A node held only by joints (no element, no mass): accepted where the joints determine it,
refused with a remedy where they leave it free."""
import numpy as np
import pytest

import flexmb as fm


def double_pendulum(through_node: bool) -> fm.Model:
    """Two rods on a pivot, joined at (1, 0) directly or through a bare node with two revolute joints."""
    m = fm.Model(dim=2)
    upper = m.add_rigid_body([0.5, 0.0], 1.0, 1.0 / 12)
    lower = m.add_rigid_body([1.5, 0.0], 2.0, 2.0 / 12)
    m.add_joint("revolute", None, upper, at=[0.0, 0.0])
    if through_node:
        node = int(np.atleast_1d(m.add_nodes([[1.0, 0.0]]))[0])
        m.add_joint("revolute", upper, node, at=[1.0, 0.0])
        m.add_joint("revolute", node, lower, at=[1.0, 0.0])
    else:
        m.add_joint("revolute", upper, lower, at=[1.0, 0.0])
    m.set_gravity([0.0, -9.81])
    return m


def test_bodies_joined_through_a_bare_node_move_as_with_the_direct_joint():
    newton = fm.NewtonSettings(residual_tol=1e-13)
    direct = fm.integrate(double_pendulum(False), 0.01, 1.0, newton=newton)
    through = fm.integrate(double_pendulum(True), 0.01, 1.0, newton=newton)
    u1, u2 = np.array(direct.u), np.array(through.u)
    assert np.abs(u1).max() > 0.5, "the pendulum hardly moved: the comparison would prove nothing"
    diff = np.abs(u1 - u2[:, :6]).max()
    assert diff < 1e-10, f"the bodies' motion differs by {diff:.2e} through the bare node"
    # the node rides on the joint point of the upper rod: (1, 0) turned by its angle
    th = u1[:, 2]
    joint_point = np.stack([np.cos(th) - 1.0, np.sin(th)], axis=1)
    miss = np.abs(u2[:, 6:8] - joint_point).max()
    assert miss < 1e-10, f"the bare node leaves the joint point by {miss:.2e} m"


def test_a_bare_node_the_joints_leave_free_is_refused_with_the_remedy():
    m = fm.Model(dim=2)
    body = m.add_rigid_body([0.5, 0.0], 1.0, 1.0 / 12)
    m.add_joint("revolute", None, body, at=[0.0, 0.0])
    node = int(np.atleast_1d(m.add_nodes([[1.0, 0.0]]))[0])
    m.add_joint("point-on-line", body, node, at=[1.0, 0.0], x_axis=[1.0, 0.0])
    with pytest.raises(fm.ModelError, match=rf"node {node} is held only by joints.*1 of its 2 DOFs.*add_point_mass"):
        fm.integrate(m, 0.01, 0.1)
