"""Order of accuracy of the mid-point scheme on a free, tumbling 3D modal body.

A free body whose modes span 7 to 45 rad/s, tumbling about a non-principal axis (0.3, 0.5, 1.0)
rad/s with modal velocities, over 0.15 s (the test; 0.3 s in the numbers below). Differences of the final frame rotation matrix and
modal coordinates between successive step halvings shrink by 4 (second order) once the fastest
mode is resolved; at dt = 10 to 1.25 ms (omega_max dt = 0.45 to 0.06) the phase error of the
45 rad/s mode over 13 radians is still pre-asymptotic (differences shrinking by 1, 2, 3: measured
2.1e-3, 2.2e-3, 1.0e-3, 3.1e-4), which looked like non-convergence; from dt = 0.625 ms the
ratios are 3.98 and 4.02 (measured).
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.cms.modal_body import ModalBodyData
from flexmb.rotations import exp_map


def test_free_tumbling_modal_body_is_second_order() -> None:
    body = fm.Model(dim=3)
    x = np.linspace(0.0, 1.0, 6)
    nodes = body.add_nodes(np.c_[x, 0.0 * x, 0.0 * x])
    body.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=2e3, GJ=1.5, EI_y=2.0, EI_z=3.0, rho_A=0.5,
                    rho_I=(1e-3, 5e-4, 5e-4), mass="consistent", y_axis=(0.0, 1.0, 0.0))
    data = ModalBodyData.from_model(body, frame_node=int(nodes[0]), n_modes=3, name="beam")
    ends = []
    for dt in (6.25e-4, 3.125e-4, 1.5625e-4):
        m = fm.Model(dim=3)
        m.add_modal_body(data, stiffening=True)
        asm = fm.Assembly(m)
        v0 = np.zeros(asm.n_dof)
        v0[3:6] = [0.3, 0.5, 1.0]                              # rad/s, spatial
        v0[6:9] = [0.05, -0.03, 0.02]                          # modal rates
        h = fm.integrate(asm, dt, 0.15, v0=v0, progress=False, newton=fm.NewtonSettings(residual_tol=1e-13))
        u = np.array(h.u[-1])
        assert h.energy_error().max() < 1e-9
        ends.append(np.concatenate([exp_map(u[3:6][None])[0].ravel(), u[6:9], u[:3]]))
    first, second = np.abs(ends[1] - ends[0]).max(), np.abs(ends[2] - ends[1]).max()
    assert first / second > 3.0, (first, second)              # second order: 4
