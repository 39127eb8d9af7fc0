"""A 3D modal body in the multibody assembly and its time integration (issue 16, items 1-4 in 3D).

References: the mid-point scheme's exact discrete energy balance (the modal body's chart-wise
Gonzalez discrete gradient, :mod:`flexmb.cms.floating_frame3d`) and exact linear momentum; the 2D
modal body (planar motion of the 3D body must reproduce it); the analytic spin matrices of
:meth:`~flexmb.cms.modal_body.ModalBodyData.spin_frequencies` (linearization in the assembly about a
steady spin must reproduce them); the trapezoidal rule's convergence to the mid-point solution.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.cms import ModalBody
from flexmb.cms.modal_body import ModalBodyData
from flexmb.model import ModelError

LENGTH = 1.0                                      # m
N_FE = 6                                          # Beam3D / Beam2D elements of the body's FE model
EI, EI_FLAP, EA, GJ, RHO_A = 2.0, 3.0, 2e3, 1.5, 0.5      # N m^2, N m^2, N, N m^2, kg/m


def _beam3d_data(n_modes: int = 4) -> ModalBodyData:
    """A uniform cantilever along x, frame at the root: lag (in the xy plane, EI_z = EI) and flap (along z,
    EI_y = EI_FLAP) apart, so that every mode is one or the other."""
    body = fm.Model(dim=3)
    x = np.linspace(0.0, LENGTH, N_FE + 1)
    nodes = body.add_nodes(np.c_[x, np.zeros_like(x), np.zeros_like(x)])
    body.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=EA, GJ=GJ, EI_y=EI_FLAP, EI_z=EI, rho_A=RHO_A,
                    rho_I=(1e-4, 0.0, 0.0), mass="consistent", y_axis=(0.0, 1.0, 0.0))
    return ModalBodyData.from_model(body, frame_node=int(nodes[0]), n_modes=n_modes, name="blade")


def _beam2d_data(n_modes: int) -> ModalBodyData:
    body = fm.Model(dim=2)
    x = np.linspace(0.0, LENGTH, N_FE + 1)
    nodes = body.add_nodes(np.c_[x, np.zeros_like(x)])
    body.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=EA, EI=EI, rho_A=RHO_A, rho_I=0.0, mass="consistent")
    return ModalBodyData.from_model(body, frame_node=int(nodes[0]), n_modes=n_modes, name="blade")


@pytest.fixture(scope="module")
def data3d() -> ModalBodyData:
    return _beam3d_data()


def _free_body(data: ModalBodyData, stiffening: bool) -> tuple[fm.Assembly, ModalBody]:
    model = fm.Model(dim=3)
    body = model.add_modal_body(data, stiffening=stiffening, name="blade")
    return fm.Assembly(model), body


def _linear_momentum(asm: fm.Assembly, body: ModalBody, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The body's linear momentum (3,), kg m/s, from its kernels."""
    kernels = dict(asm.configuration_masses)[next(i for i, g in enumerate(asm.groups) if g is body)]
    ed = asm.dofs.element_dofs(body)
    return kernels.momentum(u[ed], v[ed])[0, :3]


@pytest.mark.parametrize("stiffening", [True, False])
def test_tumbling_body_conserves_energy_and_linear_momentum(data3d: ModalBodyData, stiffening: bool) -> None:
    """A free body tumbling about all three axes while it vibrates: the mid-point scheme keeps the
    total energy to the Newton tolerance (issue 16: 1e-8) and the linear momentum exactly; the
    angular momentum drifts slowly (the correction is not rotation-invariant)."""
    asm, body = _free_body(data3d, stiffening)
    v0 = np.zeros(asm.n_dof)
    frame = asm.dofs.first[body.connectivity[0, 0]]
    v0[frame:frame + 3] = (0.3, -0.2, 0.1)
    v0[frame + 3:frame + 6] = (1.5, -2.0, 4.0)                   # rad/s, spatial
    q = asm.dofs.internal_dofs(body)
    v0[q] = 0.05 * np.arange(1, q.size + 1)
    h = fm.integrate(asm, 0.01, 2.0, v0=v0, progress=False)
    assert h.energy_error().max() < 1e-8
    P = np.array([_linear_momentum(asm, body, u, v) for u, v in zip(h.u, h.v)])
    assert np.abs(P - P[0]).max() < 1e-10 * np.abs(P[0]).max()
    assert h.angular_momentum_error().max() < 1e-2
    # it did tumble and vibrate
    psi = np.asarray(h.u)[:, frame + 3:frame + 6]
    assert np.linalg.norm(psi, axis=1).max() > 2.0
    assert np.abs(np.asarray(h.u)[:, q]).max() > 1e-3


def test_revolute_joint_with_gravity_conserves_energy(data3d: ModalBodyData) -> None:
    """The body hinged at its frame node about a tilted axis, swinging under gravity: energy (K + V,
    the weight's work included) to 1e-8 with the joint's reactions doing no work."""
    model = fm.Model(dim=3)
    body = model.add_modal_body(data3d, name="blade")
    frame = int(body.connectivity[0, 0])
    model.add_joint("revolute", None, frame, axis=(0.3, 1.0, 0.2))
    model.set_gravity((0.0, 0.0, -9.81))
    asm = fm.Assembly(model)
    h = fm.integrate(asm, 0.01, 1.5, progress=False)
    assert h.energy_error().max() < 1e-8
    tip = asm.dofs.internal_dofs(body)
    assert np.abs(np.asarray(h.u)[:, tip]).max() > 1e-4            # the blade bends as it swings
    assert float(np.max(np.abs(h.kinetic))) > 0.1


def test_planar_motion_matches_the_2d_body() -> None:
    """Spun up in its plane about z by a driven revolute joint, the 3D body (lag and flap modes) moves
    as the 2D body of the same beam (lag modes); the flap modes stay at rest (symmetry). The two
    mid-point schemes differ at O(dt^2) (the 3D frame rotation steps by its Cayley parameter, 2 tan(dtheta/2),
    the planar one by dtheta), so the lag coordinates agree to O(dt^2): the difference drops by 4 when
    dt is halved."""
    data3 = _beam3d_data(n_modes=4)
    data2 = _beam2d_data(n_modes=2)
    tr3 = data3.component.assembly.dofs.translations()
    tr2 = data2.component.assembly.dofs.translations()
    lag3 = [k for k in range(4) if np.abs(data3.basis[tr3[:, 1], k]).max() > np.abs(data3.basis[tr3[:, 2], k]).max()]
    flap3 = [k for k in range(4) if k not in lag3]
    assert len(lag3) == 2
    np.testing.assert_allclose(data3.omega[lag3], data2.omega, rtol=1e-9)
    # mode signs may differ between the two eigen-solutions: compare up to sign
    sign = np.sign(data3.basis[tr3[-1, 1], lag3] * data2.basis[tr2[-1, 1], :])

    def angle(t: float) -> float:
        return 0.5 * t**3 if t < 1.0 else 0.5 + 1.5 * (t - 1.0)

    def modal_coordinates(dim: int, dt: float) -> np.ndarray:
        model = fm.Model(dim=dim)
        body = model.add_modal_body(data3 if dim == 3 else data2, stiffening=False)
        model.add_joint("revolute", None, int(body.connectivity[0, 0]), drive=angle,
                        **({"axis": (0.0, 0.0, 1.0)} if dim == 3 else {}))
        asm = fm.Assembly(model)
        return np.asarray(fm.integrate(asm, dt, 1.5, progress=False).u)[:, asm.dofs.internal_dofs(body)]

    misses = []
    for dt in (0.02, 0.01):
        q3, q2 = modal_coordinates(3, dt), modal_coordinates(2, dt)
        assert np.abs(q2).max() > 1e-3
        assert np.abs(q3[:, flap3]).max() < 1e-12 * np.abs(q2).max()
        misses.append(np.abs(q3[:, lag3] * sign - q2).max() / np.abs(q2).max())
    assert misses[0] < 1e-3
    assert misses[1] < 0.3 * misses[0]


def test_linearized_spin_matches_the_spin_matrices(data3d: ModalBodyData) -> None:
    """linearize() of the assembly about a steady spin (driven revolute joint, relative equilibrium)
    gives the modal body's analytic spin frequencies (ModalBodyData.spin_frequencies), stiffened."""
    speed = 3.0
    model = fm.Model(dim=3)
    body = model.add_modal_body(data3d, name="blade")
    model.add_joint("revolute", None, int(body.connectivity[0, 0]), axis=(0.0, 0.0, 1.0),
                    drive=lambda t: speed * t)
    spin = ((0.0, 0.0, 1.0), speed)
    u = fm.relative_equilibrium(model, spin)
    modes = fm.linearize(model, u=u, spin=spin).eigen()
    expected = np.sort(data3d.spin_omega(np.array([0.0, 0.0, speed]), stiffening=True))
    got = np.sort(modes.omega[modes.omega > 1e-6])[:expected.size]
    # the assembly linearizes about the stretched state u (second order in Omega^2 L / frequency^2)
    np.testing.assert_allclose(got, expected, rtol=2e-3)


def test_newmark_converges_to_the_mid_point_solution(data3d: ModalBodyData) -> None:
    """The trapezoidal baseline with a 3D modal body (end-point Lagrange inertia) approaches the
    mid-point solution at second order."""
    def run(scheme: str, dt: float) -> np.ndarray:
        asm, body = _free_body(data3d, True)
        v0 = np.zeros(asm.n_dof)
        frame = asm.dofs.first[body.connectivity[0, 0]]
        v0[frame + 3:frame + 6] = (0.5, 1.0, 2.0)
        v0[asm.dofs.internal_dofs(body)] = 0.05
        return np.asarray(fm.integrate(asm, dt, 0.4, scheme=scheme, v0=v0, progress=False).u)[-1]

    ref = run("mid-point", 0.0025)
    errors = [np.abs(run("newmark", dt) - ref).max() for dt in (0.02, 0.01)]
    assert errors[1] < 0.35 * errors[0]


def test_rotary_inertia_at_the_frame_node_is_refused(data3d: ModalBodyData) -> None:
    model = fm.Model(dim=3)
    body = model.add_modal_body(data3d, name="blade")
    model.add_point_mass(int(body.connectivity[0, 0]), 1.0, 0.1)
    with pytest.raises(ModelError, match=r"node 0: .*frame of the 3D modal body 'blade'"):
        fm.Assembly(model)
