"""The co-rotational shell in the energy-conserving mid-point scheme, through the public Model API.

A free square plate of eight triangles, tumbling (spin about an oblique axis) and vibrating (a
transverse and in-plane velocity field on top): the mid-point scheme with the shell's discrete
gradient (:meth:`Shell3.mid_point_force`) and the nodal rotary inertia conserves the energy and
the angular momentum to the Newton tolerance, while the plate deforms and turns by about a radian.
"""
from __future__ import annotations

import numpy as np

import flexmb
from flexmb.integrators import NewtonSettings


def test_tumbling_vibrating_plate_conserves_energy_and_angular_momentum():
    xy = np.array([[i, j] for j in (0.0, 0.5, 1.0) for i in (0.0, 0.5, 1.0)])
    tri = []
    for qi, qj in ((0, 0), (1, 0), (0, 1), (1, 1)):
        a, b = 3 * qj + qi, 3 * qj + qi + 1
        tri += [[a, b, b + 3], [a, b + 3, a + 3]]
    model = flexmb.Model(dim=3)
    nodes = model.add_nodes(np.c_[xy, np.zeros(len(xy))])
    group = model.add_shell(nodes[np.array(tri)], E=1e6, nu=0.3, thickness=0.02, rho=1000.0)
    asm = flexmb.Assembly(model)
    X = model.coordinates
    W = np.array([0.3, -0.5, 1.2])                                     # rad/s
    v0 = np.zeros(asm.n_dof)
    trans = asm.dofs.translations()                                    # (n_nodes, 3)
    v0[trans] = np.cross(W, X - X.mean(axis=0))
    v0[trans[:, 2]] += 0.4 * np.sin(np.pi * X[:, 0]) * np.sin(np.pi * X[:, 1]) - 0.1   # transverse
    v0[trans[:, 0]] += 0.2 * (X[:, 1] - 0.5)                                          # in-plane shear
    v0[asm.rotation_dofs] = W
    h = flexmb.integrate(asm, 0.01, 0.8, v0=v0, newton=NewtonSettings(residual_tol=1e-12))
    energy, momentum = h.energy_error().max(), h.angular_momentum_error().max()
    assert energy < 1e-9, f"tumbling plate: relative energy error {energy:.2e} > 1e-9"
    assert momentum < 1e-9, f"tumbling plate: relative angular momentum error {momentum:.2e} > 1e-9"
    strain = max(float(group.strain_energy(X[group.connectivity], asm.gather(u)[0]).sum()) for u in h.u)
    assert strain > 1e-6, f"the plate hardly deforms (strain energy up to {strain:.2e} J)"
