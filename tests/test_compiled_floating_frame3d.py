"""The compiled kernels of the 3D modal body (:mod:`flexmb.compiled.floating_frame3d`, issue 31 item 4)
against their numpy specification (``FloatingFrameMass3D.reference_*``, the numpy implementation they
replaced) and finite differences; a tumbling run with the compiled kernels against the same run with
the numpy ones.

References: the numpy methods to 1e-12 relative on random large states (rotations ~1 rad, |q| ~ 0.1
kg^1/2 m, both stiffened and linear bodies); central finite differences of the compiled force (step
1e-6, relative error < 1e-6); the exact discrete energy balance of the mid-point scheme (1e-8) and the
angular-momentum drift of the numpy run. The hand-derived tangents of the mid-point and end-point
inertia (issue 31) also against the complex-step reference and central differences at states far from
the others (rotations up to pi, 1.6 rad per step, spin of 10-30 rad/s, |q| up to 0.5 kg^1/2 m), and the
derivatives of the chart's rotation blocks the mid-point tangent is built from against central
differences of the blocks.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from models import cantilever_body_3d
from flexmb.cms.modal_body import ModalBodyData
from flexmb.elements.floating_frame3d import FloatingFrameMass3D
from flexmb.elements.velocity_fields import BodyVelocityFields
from flexmb.rotations import cayley, cayley_compose

N_EL, N_MODES = 5, 3
X_FRAME = np.array([[[0.3, -0.2, 0.5], [1.0, 0.4, -0.7]]]).reshape(2, 1, 3)   # m, two elements
DT = 0.05                                                                       # s
FD_STEP = 1e-6
G_FIELD = np.array([0.4, -9.81, 1.3])                                         # m/s^2


@pytest.fixture(scope="module")
def data() -> ModalBodyData:
    """A cantilever along x with unequal bending stiffnesses and rotary inertia, frame at the root."""
    return cantilever_body_3d(N_EL, N_MODES)


@pytest.fixture(scope="module", params=[False, True], ids=["linear", "stiffened"])
def kernels(request, data: ModalBodyData) -> FloatingFrameMass3D:
    return FloatingFrameMass3D(BodyVelocityFields(data, request.param), X_FRAME)


def _states(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Random large states u0, u1 (rotations up to ~1 rad apart), velocities v0 and accelerations a
    (2, n_x) each."""
    rng = np.random.default_rng(seed)
    nx = 6 + N_MODES
    u0, v0, a = rng.normal(size=(2, nx)), rng.normal(size=(2, nx)), rng.normal(size=(2, nx))
    u0[:, 6:] *= 0.1
    v0[:, 6:] *= 0.5
    u1 = u0 + rng.normal(size=(2, nx))
    u1[:, 3:6] = cayley_compose(rng.uniform(-0.6, 0.6, (2, 3)), u0[:, 3:6])
    u1[:, 6:] = u0[:, 6:] + 0.1 * rng.normal(size=(2, N_MODES))
    return u0, u1, v0, a


def _close(a: np.ndarray, b: np.ndarray, rel: float, what: str) -> None:
    err = np.abs(a - b).max() / np.abs(b).max()
    assert err < rel, f"{what}: relative error {err:.2e} > {rel:.0e}"


def _end_of_chart(u0: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The DOF vector at the chart point z about u0 (rotation cay(w) exp(hat(psi0)))."""
    u = u0 + z
    u[:, 3:6] = cayley_compose(z[:, 3:6], u0[:, 3:6])
    return u


def _central_differences(force, x: np.ndarray) -> np.ndarray:
    """d force / dx (n_el, n_x, n_x) by central differences, force (n_el, n_x) of x (n_el, n_x)."""
    out = np.empty(x.shape + (x.shape[1],))
    for j in range(x.shape[1]):
        dx = np.zeros_like(x)
        dx[:, j] = FD_STEP
        out[:, :, j] = (force(x + dx) - force(x - dx)) / (2.0 * FD_STEP)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mid_point_inertia_equals_the_numpy_specification(kernels: FloatingFrameMass3D, seed: int) -> None:
    u0, u1, v0, _ = _states(seed)
    F, J = kernels.mid_point_inertia(u0, u1, v0, None, DT)
    F_ref, J_ref = kernels.reference_mid_point_inertia(u0, u1, v0, DT)
    _close(F, F_ref, 1e-12, "mid-point inertia force")
    _close(J, J_ref, 1e-12, "mid-point inertia tangent")
    F_alone, none = kernels.mid_point_inertia(u0, u1, v0, None, DT, tangent=False)
    assert none is None
    _close(F_alone, F_ref, 1e-12, "mid-point inertia force without tangent")


@pytest.mark.parametrize("seed", [1, 2])
def test_mid_point_force_of_the_tangent_pass_without_its_tangent(kernels: FloatingFrameMass3D, seed: int) -> None:
    """From the start momenta taken apart, the force of the tangent's pass without the tangent (a
    Newton pass that converges) is the one with it bit for bit, and the tangent the same; the value
    alone's force only to round-off (another order of sums)."""
    from flexmb.compiled import floating_frame3d as compiled

    u0, u1, v0, _ = _states(seed)
    F, J = kernels.mid_point_inertia(u0, u1, v0, None, DT)
    G, (entry_z, entry_w), after = kernels.fields.G, kernels._terms[2:], kernels._entry_products
    p0 = np.empty(u0.shape)
    compiled.start_momenta(G, entry_z, entry_w, u0, v0, *after[:3], after[-1], p0)
    for jacobian in (True, False):
        F_pass, J_pass = np.empty(u0.shape), np.empty(J.shape if jacobian else (0,) + J.shape[1:])
        compiled.mid_point_inertia_from(G, entry_z, entry_w, kernels.weights, kernels._correction_floor, u0, u1, v0,
                                        p0, DT, F_pass, J_pass, True, jacobian, *after)
        assert np.array_equal(F_pass, F), f"force of the tangent's pass (jacobian={jacobian})"
        if jacobian:
            assert np.array_equal(J_pass, J)
    F_alone = kernels.mid_point_inertia(u0, u1, v0, None, DT, tangent=False)[0]
    _close(F_alone, F, 1e-12, "mid-point inertia force without tangent")


def test_mid_point_inertia_at_rest_start_is_the_numpy_one(kernels: FloatingFrameMass3D) -> None:
    """A first step from rest and a zero increment (the Gonzalez correction below its floor)."""
    u0, u1, _, _ = _states(4)
    for end, v0 in ((u1, np.zeros_like(u0)), (u0.copy(), np.ones_like(u0))):
        F, J = kernels.mid_point_inertia(u0, end, v0, None, DT)
        F_ref, J_ref = kernels.reference_mid_point_inertia(u0, end, v0, DT)
        _close(F, F_ref, 1e-12, "mid-point inertia force")
        _close(J, J_ref, 1e-12, "mid-point inertia tangent")


@pytest.mark.parametrize("dv_du, da_du", [(0.0, 0.0), (40.0, 1600.0)])
def test_end_point_inertia_equals_the_numpy_specification(kernels: FloatingFrameMass3D, dv_du: float,
                                                          da_du: float) -> None:
    u, _, v, a = _states(5)
    F, J = kernels.end_point_inertia(u, v, a, dv_du, da_du)
    F_ref, J_ref = kernels.reference_end_point_inertia(u, v, a, dv_du, da_du)
    _close(F, F_ref, 1e-12, "end-point inertia force")
    _close(J, J_ref, 1e-12, "end-point inertia tangent")
    F_alone, none = kernels.end_point_inertia(u, v, a, dv_du, da_du, tangent=False)
    assert none is None
    _close(F_alone, F_ref, 1e-12, "end-point inertia force without tangent")


def test_mid_point_tangent_equals_central_differences(kernels: FloatingFrameMass3D) -> None:
    u0, u1, v0, _ = _states(6)
    _, J = kernels.mid_point_inertia(u0, u1, v0, None, DT)
    fd = _central_differences(
        lambda z: kernels.mid_point_inertia(u0, _end_of_chart(u0, z), v0, None, DT, False)[0],
        kernels.chart_increment(u0, u1))
    _close(J, fd, 1e-6, "mid-point inertia tangent against central differences")


def _violent_states(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """u0, u1, v0 (2, n_x) far from rest: rotations of up to pi, a step turning the frame by up to 1.6 rad,
    spin of 10-30 rad/s, modal amplitudes up to 0.5 kg^1/2 m and modal rates of 5 kg^1/2 m/s."""
    rng = np.random.default_rng(seed)
    nx = 6 + N_MODES
    u0, v0 = rng.normal(size=(2, nx)), rng.normal(size=(2, nx))
    axis = rng.normal(size=(2, 3))
    u0[:, 3:6] = axis / np.linalg.norm(axis, axis=1)[:, None] * rng.uniform(2.0, 3.1, (2, 1))
    u0[:, 6:] = rng.uniform(-0.5, 0.5, (2, N_MODES))
    spin = rng.normal(size=(2, 3))
    v0[:, 3:6] = spin / np.linalg.norm(spin, axis=1)[:, None] * rng.uniform(10.0, 30.0, (2, 1))   # rad/s
    v0[:, 6:] *= 5.0
    u1 = u0 + rng.normal(size=(2, nx))
    w = rng.normal(size=(2, 3))
    w *= 2.0 * np.tan(0.5 * rng.uniform(1.0, 1.6, (2, 1))) / np.linalg.norm(w, axis=1)[:, None]   # turns by 1-1.6 rad
    u1[:, 3:6] = cayley_compose(w, u0[:, 3:6])
    u1[:, 6:] = u0[:, 6:] + rng.uniform(-0.3, 0.3, (2, N_MODES))
    return u0, u1, v0


@pytest.mark.parametrize("seed", [11, 12])
def test_exact_mid_point_tangent_far_from_rest(kernels: FloatingFrameMass3D, seed: int) -> None:
    """The hand-derived tangent equals the complex-step one of the numpy specification to round-off,
    and central differences of the compiled force, with and without Gonzalez's correction active."""
    u0, u1, v0 = _violent_states(seed)
    for dt in (DT, 0.002):
        F, J = kernels.mid_point_inertia(u0, u1, v0, None, dt)
        F_ref, J_ref = kernels.reference_mid_point_inertia(u0, u1, v0, dt)
        _close(F, F_ref, 1e-12, f"mid-point inertia force (dt = {dt})")
        _close(J, J_ref, 1e-12, f"mid-point inertia tangent against complex steps (dt = {dt})")
        fd = _central_differences(
            lambda z: kernels.mid_point_inertia(u0, _end_of_chart(u0, z), v0, None, dt, False)[0],
            kernels.chart_increment(u0, u1))
        _close(J, fd, 1e-6, f"mid-point inertia tangent against central differences (dt = {dt})")


@pytest.mark.parametrize("dv_du, da_du", [(0.0, 0.0), (40.0, 1600.0)])           # Newmark: 2/dt, 4/dt^2
def test_exact_end_point_tangent_far_from_rest(kernels: FloatingFrameMass3D, dv_du: float, da_du: float) -> None:
    """The same for the end-point (Lagrange) inertia, alone and along Newmark's kinematics, with
    accelerations of 100 rad/s^2 and 100 m/s^2."""
    u, _, v = _violent_states(13)
    a = 100.0 * np.random.default_rng(14).normal(size=u.shape)
    F, J = kernels.end_point_inertia(u, v, a, dv_du, da_du)
    F_ref, J_ref = kernels.reference_end_point_inertia(u, v, a, dv_du, da_du)
    _close(F, F_ref, 1e-12, "end-point inertia force")
    _close(J, J_ref, 1e-12, "end-point inertia tangent against complex steps")

    def force(z: np.ndarray) -> np.ndarray:
        return kernels.end_point_inertia(_end_of_chart(u, z), v + dv_du * z, a + da_du * z, tangent=False)[0]

    _close(J, _central_differences(force, np.zeros_like(u)), 1e-6, "end-point inertia tangent against central "
           "differences")


def test_chart_block_derivatives_equal_central_differences() -> None:
    """A = R^T, B = R^T D of P(z) at the Cayley parameters w: their first and second derivatives w.r.t.
    w (the compiled mid-point tangent's building blocks) against central differences."""
    from flexmb.compiled.floating_frame3d import _chart_blocks

    R0 = cayley(np.array([[0.7, -1.2, 0.4]]))[0]
    w, h = np.array([0.9, 1.4, -0.8]), 1e-6
    A, B, Aj, Bj, Aij, Bij = _chart_blocks(w, R0, True)
    _close(A, (cayley(w[None])[0] @ R0).T, 1e-15, "A = R^T")
    for j, e in enumerate(np.eye(3)):
        plus, minus = _chart_blocks(w + h * e, R0, True), _chart_blocks(w - h * e, R0, True)
        for k, what in ((0, "A_j"), (1, "B_j"), (2, "A_ij"), (3, "B_ij")):
            exact = (Aj, Bj, Aij[:, j], Bij[:, j])[k]
            _close(exact if k > 1 else exact[j], (plus[k] - minus[k]) / (2.0 * h), 1e-8,
                   f"{what} by central differences, direction {j}")


def test_end_point_tangent_equals_central_differences(kernels: FloatingFrameMass3D) -> None:
    """dF/du + dv_du dF/dv + da_du dF/da, the rotation columns along a spin: psi moves so that
    exp(hat(psi)) = exp(hat(eta)) R, checked by the Cayley chart (same first order)."""
    u, _, v, a = _states(7)
    dv_du, da_du = 40.0, 1600.0
    _, J = kernels.end_point_inertia(u, v, a, dv_du, da_du)

    def force(z: np.ndarray) -> np.ndarray:
        return kernels.end_point_inertia(_end_of_chart(u, z), v + dv_du * z, a + da_du * z, tangent=False)[0]

    _close(J, _central_differences(force, np.zeros_like(u)), 1e-6, "end-point inertia tangent against central "
           "differences")


def test_tumbling_run_matches_the_numpy_kernels(data: ModalBodyData, monkeypatch) -> None:
    """A free stiffened body tumbling about all three axes while it vibrates: the run with the
    compiled kernels keeps the energy to the Newton tolerance, and its trajectory and angular
    momentum are those of the same run with the numpy kernels."""

    def run() -> fm.TimeHistory:
        model = fm.Model(dim=3)
        body = model.add_modal_body(data, name="blade")
        asm = fm.Assembly(model)
        v0 = np.zeros(asm.n_dof)
        frame = asm.dofs.first[body.connectivity[0, 0]]
        v0[frame:frame + 3] = (0.3, -0.2, 0.1)
        v0[frame + 3:frame + 6] = (1.5, -2.0, 4.0)                                 # rad/s, spatial
        v0[asm.dofs.internal_dofs(body)] = 0.05 * np.arange(1, N_MODES + 1)
        return fm.integrate(asm, 0.02, 0.6, v0=v0, progress=False)

    compiled = run()
    monkeypatch.setattr(FloatingFrameMass3D, "mid_point_inertia",
                        lambda self, u0, u1, v0, stretch0, dt, tangent=True:
                        self.reference_mid_point_inertia(u0, u1, v0, dt, tangent))
    reference = run()
    assert compiled.energy_error().max() < 1e-8
    u, u_ref = np.asarray(compiled.u), np.asarray(reference.u)
    assert np.linalg.norm(u[-1, 3:6]) > 1.0, "the body did not tumble"
    _close(u, u_ref, 1e-9, "tumbling trajectory")
    _close(compiled.angular_momentum_error(), reference.angular_momentum_error() + 1e-300, 1e-6,
           "angular-momentum drift")


def test_energy_and_angular_momentum_equal_the_numpy_specification(kernels: FloatingFrameMass3D) -> None:
    u, _, v, _ = _states(8)
    T, L = kernels.energy_and_angular_momentum(u, v)
    T_ref, L_ref = kernels.reference_energy_and_angular_momentum(u, v)
    assert abs(T - T_ref) < 1e-12 * abs(T_ref), f"kinetic energy {T} against {T_ref}"
    _close(L, L_ref, 1e-12, "angular momentum")


def test_gravity_equals_the_numpy_specification(kernels: FloatingFrameMass3D) -> None:
    u0, u1, _, _ = _states(9)
    for F, F_ref in zip(kernels.gravity_force(u0, G_FIELD), kernels.reference_gravity_force(u0, G_FIELD)):
        _close(F, F_ref, 1e-12, "gravity force and tangent")
    mid_point = kernels.mid_point_gravity(u0, u1, G_FIELD)
    for F, F_ref in zip(mid_point, kernels.reference_mid_point_gravity(u0, u1, G_FIELD)):
        _close(F, F_ref, 1e-12, "mid-point gravity force and tangent")


def test_gravity_tangents_equal_central_differences(kernels: FloatingFrameMass3D) -> None:
    u0, u1, _, _ = _states(10)
    _, J = kernels.mid_point_gravity(u0, u1, G_FIELD)
    fd = _central_differences(lambda z: kernels.mid_point_gravity(u0, _end_of_chart(u0, z), G_FIELD)[0],
                              kernels.chart_increment(u0, u1))
    _close(J, fd, 1e-6, "mid-point gravity tangent against central differences")
    _, J = kernels.gravity_force(u0, G_FIELD)
    fd = _central_differences(lambda z: kernels.gravity_force(_end_of_chart(u0, z), G_FIELD)[0], np.zeros_like(u0))
    _close(J, fd, 1e-6, "gravity tangent against central differences")


MANY_MODES = 9


@pytest.fixture(scope="module", params=[False, True], ids=["linear", "stiffened"])
def many_modes(request) -> FloatingFrameMass3D:
    """A body with three times as many modes as the others (bending, torsion and axial modes of a
    10-element cantilever): the compiled mid-point inertia's set-up products span more modes and columns."""
    return FloatingFrameMass3D(BodyVelocityFields(cantilever_body_3d(10, MANY_MODES), request.param), X_FRAME)


def test_entry_products_reproduce_e_and_its_gram_rows(many_modes: FloatingFrameMass3D) -> None:
    """The compiled mid-point inertia's constants (E on its nonzero entries as polynomials in q, E's
    coefficients times G on the columns where E depends on q) give E(q), dE/dq_k and E^T G of the numpy
    coefficients at a random q, to round-off."""
    from flexmb.compiled.floating_frame3d import _entry_values, _gram_of_modes

    fields = many_modes.fields
    entry_z, entry_w = many_modes._terms[2:]
    P0, P1, P2, EtG0, E1tG, E2tG, cols1, cols2, quadratic_from = many_modes._entry_products
    q = 0.3 * np.random.default_rng(21).normal(size=MANY_MODES)
    E = many_modes._coefficients(q[None])[0]                                      # (n_z, n_x)
    dE = fields.E1 + np.einsum("l,klzw->kzw", q, fields.E2 + np.transpose(fields.E2, (1, 0, 2, 3)))
    values, rates = _entry_values(P0, P1, P2, quadratic_from, q, True)
    dense = np.zeros_like(E)
    dense[entry_z, entry_w] = values
    _close(dense, E, 1e-14, "E(q) from its entries' polynomials")
    _close(rates, dE[:, entry_z, entry_w], 1e-14, "dE/dq_k on E's entries")
    off_entries = np.delete(dE.reshape(MANY_MODES, -1), np.ravel_multi_index((entry_z, entry_w), E.shape), axis=1)
    assert not np.any(off_entries), "dE/dq_k is not zero off E's nonzero entries"
    EtG, D2 = _gram_of_modes(EtG0, E1tG, E2tG, cols1, cols2, q)
    _close(EtG, E.T @ fields.G, 1e-13, "E^T G from the set-up products")
    for k in range(MANY_MODES):                                                   # dE_k^T G = E1tG[k] + D2[k]
        rows = np.zeros((E.shape[1], E.shape[0]))
        rows[cols1] += E1tG[k]
        rows[cols2] += D2[k]
        _close(rows, dE[k].T @ fields.G, 1e-13, f"dE/dq_{k}^T G from the set-up products")


@pytest.mark.parametrize("seed", [31, 32])
def test_mid_point_inertia_with_many_modes(many_modes: FloatingFrameMass3D, seed: int) -> None:
    """Force and exact tangent against the numpy specification (complex steps) and central differences,
    at states far from rest, with and without the tangent."""
    rng = np.random.default_rng(seed)
    nx = 6 + MANY_MODES
    u0, v0 = rng.normal(size=(2, nx)), rng.normal(size=(2, nx))
    u0[:, 6:] *= 0.2
    v0[:, 3:6] *= 10.0                                                            # rad/s
    u1 = u0 + rng.normal(size=(2, nx))
    u1[:, 3:6] = cayley_compose(rng.uniform(-1.0, 1.0, (2, 3)), u0[:, 3:6])
    u1[:, 6:] = u0[:, 6:] + 0.2 * rng.normal(size=(2, MANY_MODES))
    F, J = many_modes.mid_point_inertia(u0, u1, v0, None, DT)
    F_ref, J_ref = many_modes.reference_mid_point_inertia(u0, u1, v0, DT)
    _close(F, F_ref, 1e-12, "mid-point inertia force")
    _close(J, J_ref, 1e-12, "mid-point inertia tangent against complex steps")
    _close(many_modes.mid_point_inertia(u0, u1, v0, None, DT, tangent=False)[0], F_ref, 1e-12,
           "mid-point inertia force without tangent")
    fd = _central_differences(
        lambda z: many_modes.mid_point_inertia(u0, _end_of_chart(u0, z), v0, None, DT, False)[0],
        many_modes.chart_increment(u0, u1))
    _close(J, fd, 1e-6, "mid-point inertia tangent against central differences")


@pytest.mark.parametrize("n_modes", [1, 6, 20])
def test_mid_point_inertia_of_a_turned_moved_fast_spinning_body(n_modes: int) -> None:
    """1, 6 and 20 stiffened modes (the kernel's E on its entries, its quadratic entries and its constant
    products span 1 to 20 modes) of a body whose frame is turned by up to 3 rad and moved by 10-100 m,
    spinning at 40-60 rad/s and turning by 0.5-1 rad in the step: force and exact tangent against the
    numpy specification (complex steps) and central differences."""
    kernels = FloatingFrameMass3D(BodyVelocityFields(cantilever_body_3d(10, n_modes), True), X_FRAME)
    rng = np.random.default_rng(40 + n_modes)
    nx = 6 + n_modes
    u0, v0 = rng.normal(size=(2, nx)), rng.normal(size=(2, nx))
    u0[:, :3] = rng.uniform(10.0, 100.0, (2, 3)) * rng.choice([-1.0, 1.0], (2, 3))          # m
    axis = rng.normal(size=(2, 3))
    u0[:, 3:6] = axis / np.linalg.norm(axis, axis=1)[:, None] * rng.uniform(2.0, 3.0, (2, 1))
    u0[:, 6:] = rng.uniform(-0.2, 0.2, (2, n_modes))
    spin = rng.normal(size=(2, 3))
    v0[:, 3:6] = spin / np.linalg.norm(spin, axis=1)[:, None] * rng.uniform(40.0, 60.0, (2, 1))   # rad/s
    v0[:, 6:] *= 3.0
    u1 = u0 + 0.01 * rng.normal(size=(2, nx))
    w = rng.normal(size=(2, 3))
    w *= 2.0 * np.tan(0.5 * rng.uniform(0.5, 1.0, (2, 1))) / np.linalg.norm(w, axis=1)[:, None]
    u1[:, 3:6] = cayley_compose(w, u0[:, 3:6])
    u1[:, 6:] = u0[:, 6:] + rng.uniform(-0.1, 0.1, (2, n_modes))
    dt = 0.02
    F, J = kernels.mid_point_inertia(u0, u1, v0, None, dt)
    F_ref, J_ref = kernels.reference_mid_point_inertia(u0, u1, v0, dt)
    _close(F, F_ref, 1e-12, f"mid-point inertia force, {n_modes} modes")
    _close(J, J_ref, 1e-12, f"mid-point inertia tangent against complex steps, {n_modes} modes")
    _close(kernels.mid_point_inertia(u0, u1, v0, None, dt, tangent=False)[0], F_ref, 1e-12,
           f"mid-point inertia force without tangent, {n_modes} modes")
    fd = _central_differences(
        lambda z: kernels.mid_point_inertia(u0, _end_of_chart(u0, z), v0, None, dt, False)[0],
        kernels.chart_increment(u0, u1))
    _close(J, fd, 1e-6, f"mid-point inertia tangent against central differences, {n_modes} modes")
