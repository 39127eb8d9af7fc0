"""Helpers of the shell validation cases (flexmb.validation.shell_cases) that need no element."""
import numpy as np
import pytest

from flexmb.io import shell_mesh
from flexmb.validation.shell_cases import cylinder_octant, edge_weights, node_at, response_at_levels


def test_response_at_levels_follows_load_control_through_a_snap():
    # a path that rises to lam = 0.5, snaps back to 0.3 and rises again: displacement = arc index
    lam = np.array([0.2, 0.4, 0.5, 0.45, 0.3, 0.35, 0.55, 0.8, 1.05])
    disp = np.arange(1.0, 10.0)[:, None] * np.array([[1.0, -2.0]])          # (9, 2)
    out = response_at_levels(lam, disp, [0.1, 0.45, 0.52, 1.0, 1.2])
    assert out[0] == pytest.approx([0.5, -1.0])                             # between the start and point 1
    assert out[1, 0] == pytest.approx(2.5)                                  # first branch, before the limit
    # 0.52 is above the limit load 0.5: load control meets it after the snap, between 0.35 and 0.55
    assert out[2, 0] == pytest.approx(6.0 + (0.52 - 0.35) / 0.2)
    assert out[3, 0] == pytest.approx(8.0 + 0.2 / 0.25)
    assert np.all(np.isnan(out[4])), "a level the path never reaches has no response"


def test_edge_weights_are_the_consistent_shares_of_a_uniform_edge_load():
    X = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 3.0, 0.0], [0.0, 4.0, 0.0]])
    assert edge_weights(X, np.arange(4)) == pytest.approx(np.array([0.5, 1.5, 1.5, 0.5]) / 4.0)


def test_cylinder_octant_points_and_node_lookup():
    X, T = cylinder_octant(2.0, 3.0, 4, 2)
    assert np.allclose(np.hypot(X[:, 1], X[:, 2]), 2.0) and X[:, 0].min() == 0.0 and X[:, 0].max() == 3.0
    assert X[:, 1].min() > -1e-12 and X[:, 2].min() > -1e-12, "theta in [0, pi/2]: the positive quadrant"
    a = node_at(X, (0.0, 0.0, 2.0), "A")
    assert np.allclose(X[a], [0.0, 0.0, 2.0])
    assert len(shell_mesh.nodes_at(X, y=0.0)) == 3 and len(shell_mesh.nodes_at(X, z=0.0)) == 3
    with pytest.raises(ValueError, match="B: no node at"):
        node_at(X, (0.0, 1.0, 1.0), "B")
