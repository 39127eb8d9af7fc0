"""integrate_partitioned with massless coordinates: it works from the reduced mass D M D^T
(regular when the joints carry the massless DOFs) and names them when it is singular."""
import numpy as np
import pytest

import flexmb as fm
from flexmb.multibody.constrained_system import ConstrainedSystem
from flexmb.multibody.partitioning import tangent_gram
from test_joint_only_nodes import double_pendulum


def test_partitioned_run_with_a_massless_joint_node_matches_the_mid_point_scheme():
    """The double pendulum through a bare node (the case that gave LinAlgError: Singular matrix
    from tangent_gram): the partitioned DOP853 run (rtol 1e-10) is the exact motion for the
    mid-point scheme's second order: its error falls by ~4 per halved step."""
    system = ConstrainedSystem.from_assembly(fm.Assembly(double_pendulum(True)))
    times = np.linspace(0.0, 1.0, 6)
    run = fm.integrate_partitioned(system, np.zeros(system.n), np.zeros(system.n), 1.0, t_eval=times)
    exact = np.array(run.q)
    assert not {"node 2 ux", "node 2 uy"} & {system.names[i] for i in np.array(run.independent)[-1]}, \
        "a massless coordinate was chosen independent"
    errors = []
    for dt in (0.004, 0.002):
        h = fm.integrate(double_pendulum(True), dt, 1.0)
        every = round(0.2 / dt)
        errors.append(np.abs(np.array(h.u)[::every] - exact).max())
    assert errors[1] < 2e-4, f"partitioned and mid-point runs differ by {errors[1]:.2e} at dt = 0.002 s"
    assert 3.5 < errors[0] / errors[1] < 4.5, f"error ratio {errors[0] / errors[1]:.2f} per halved step (2nd order: 4)"


def test_a_singular_reduced_mass_names_the_massless_coordinates():
    M = np.diag([1.0, 1.0, 0.0])                         # q2 massless, and no constraint holds it
    D = np.eye(3)[[1, 2]]                                # tangent basis: q1 and q2 free
    with pytest.raises(fm.ModelError, match=r"reduced mass .* singular.*massless: c\)"):
        tangent_gram(M, D, ["a", "b", "c"])
