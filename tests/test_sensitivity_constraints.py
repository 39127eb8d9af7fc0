"""The joints' terms of a step differentiated w.r.t. its start state, time and drive amplitudes
(:mod:`flexmb.sensitivity.constraints`): the symmetry of the mid-point constraint force in the step's
ends, its start derivative against central differences of ``ConstraintSystem.evaluate`` in u_n (a
planar flexible-rigid double pendulum, a 3D two-body mechanism with spherical, revolute and
cylindrical joints, driven and not), dPhi/du_n = 0, the end-point form, dPhi/dt and the drive
amplitude's derivatives against central differences, and the whole augmented mid-point residual's
start derivative (force, inertia and joint terms together)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.integrators.schemes import MidPoint, Newmark, State
from flexmb.sensitivity.constraints import ConstraintStartDerivatives, drive_amplitude
from flexmb.sensitivity.inertia import InertiaDerivatives
from flexmb.sensitivity.matrices import StartDerivatives
from flexmb.sensitivity.transient import record, step_jacobian, sub_steps
from test_sensitivity_matrices import start_central_difference

T0, DT = 0.3, 0.01                          # s: the step's start and size


def _pendulum_2d(drive=None) -> fm.Model:
    """A flexible upper link (two Beam2D elements, consistent mass) hinged to the ground, and a rigid
    lower link hinged to its tip 0.5 m from the body's centre, under gravity; the elbow optionally
    driven by ``drive``."""
    m = fm.Model(dim=2)
    a = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 3), np.zeros(3)])
    m.add_beam2d(np.c_[a[:-1], a[1:]], EA=1e5, EI=2e2, rho_A=2.0, rho_I=1e-3, mass="consistent", name="upper")
    body = m.add_rigid_body([1.5, 0.2], 1.5, 0.05, name="lower")
    m.add_joint("revolute", None, int(a[0]), at=[0.0, 0.0], name="pivot")
    m.add_joint("revolute", int(a[-1]), body, at=[1.0, 0.0], name="elbow", drive=drive)
    m.set_gravity([0.0, -9.81])
    return m


def _mechanism_3d(drive=None) -> fm.Model:
    """Two rigid bodies: A on a spherical joint to the ground away from its centre, B on a revolute
    joint to A (optionally driven) and on a cylindrical joint to the ground (the equations are only
    evaluated at random states here, never solved)."""
    m = fm.Model(dim=3)
    A = m.add_rigid_body([0.4, 0.1, 0.0], 2.0, [0.02, 0.03, 0.04], name="A")
    B = m.add_rigid_body([0.9, 0.2, 0.1], 1.0, [0.01, 0.015, 0.02], name="B")
    m.add_joint("spherical", None, A, at=[0.0, 0.0, 0.0], name="ball")
    m.add_joint("revolute", A, B, at=[0.7, 0.15, 0.05], axis=[0.0, 0.3, 1.0], name="hinge", drive=drive)
    m.add_joint("cylindrical", None, B, at=[1.2, 0.2, 0.1], axis=[1.0, 0.0, 0.2], name="sleeve")
    return m


def _quadratic(t):
    return 0.3 * t**2 + 0.1 * np.sin(2.0 * t)


MODELS = {"pendulum 2D": lambda: _pendulum_2d(), "pendulum 2D driven": lambda: _pendulum_2d(_quadratic),
          "mechanism 3D": lambda: _mechanism_3d(), "mechanism 3D driven": lambda: _mechanism_3d(_quadratic)}


def _setup(model: fm.Model, seed: int = 0):
    """Assembly, a step u0 -> u1 (displacements 0.05 m, rotations 0.3 rad, steps of about 0.5 rad at
    3D rotations composed as spins) and multipliers of about 10 N (N m)."""
    asm = fm.Assembly(model)
    rng = np.random.default_rng(seed)
    u0, d = rng.normal(0.0, 0.05, asm.n_dof), rng.normal(0.0, 0.05, asm.n_dof)
    for rot in (asm.rotation_dofs.ravel(), asm.planar_rotations):
        u0[rot], d[rot] = rng.normal(0.0, 0.3, rot.size), rng.normal(0.0, 0.3, rot.size)
    return asm, u0, asm.update(u0, d), rng.normal(0.0, 10.0, asm.constraints.n)


def _mid_point_terms(asm: fm.Assembly, u0: np.ndarray, u1: np.ndarray, lam: np.ndarray):
    return asm.constraints.evaluate(u1, T0 + DT, lam, u0=u0, d=asm.cayley_increment(u0, u1), t0=T0)


@pytest.mark.parametrize("name", MODELS)
def test_the_mid_point_constraint_force_is_symmetric_in_the_steps_ends(name):
    """G_m^T lambda of the step u0 -> u1 equals that of the reversed step u1 -> u0 (times and increment
    swapped) to round-off: the identity the start derivative rests on."""
    asm, u0, u1, lam = _setup(MODELS[name]())
    force = _mid_point_terms(asm, u0, u1, lam).force
    swapped = ConstraintStartDerivatives(asm).reversed_terms(u0, u1, lam, T0, T0 + DT).force
    assert np.abs(force).max() > 0.1
    assert np.abs(swapped - force).max() < 1e-14 * np.abs(force).max()


@pytest.mark.parametrize("name", MODELS)
def test_start_derivative_of_the_constraint_force_against_central_differences(name):
    """d(G_m^T lambda)/du_n agrees with central differences of ConstraintSystem.evaluate in u_n to 1e-7
    of its largest entry (best of a step study); dPhi/du_n is zero; the forward step's own K (the
    derivative w.r.t. u_{n+1}) does not pass, so the check sees a wrong derivative."""
    asm, u0, u1, lam = _setup(MODELS[name]())
    D = ConstraintStartDerivatives(asm).force(u0, u1, lam, T0, T0 + DT).matrix().toarray()
    scale = np.abs(D).max()
    assert scale > 0.1

    def force(u):
        return _mid_point_terms(asm, u, u1, lam).force

    errors = {h: np.abs(start_central_difference(force, asm, u0, h) - D).max() / scale for h in (1e-4, 1e-5, 1e-6)}
    assert min(errors.values()) < 1e-7, f"{name}: start derivative off central differences by {errors}"
    phi = start_central_difference(lambda u: _mid_point_terms(asm, u, u1, lam).phi, asm, u0, 1e-5)
    assert not np.any(phi)
    forward_K = _mid_point_terms(asm, u0, u1, lam).K.toarray()
    assert np.abs(start_central_difference(force, asm, u0, 1e-5) - forward_K).max() > 1e-3 * scale


def test_the_start_derivative_applies_to_vectors_as_its_matrix():
    asm, u0, u1, lam = _setup(_mechanism_3d(_quadratic), seed=3)
    D = ConstraintStartDerivatives(asm).force(u0, u1, lam, T0, T0 + DT)
    x = np.random.default_rng(1).normal(size=(asm.n_dof, 2))
    M = D.matrix()
    assert np.allclose(D.matvec(x), M @ x, rtol=0, atol=1e-13 * np.abs(M @ x).max())
    assert np.allclose(D.rmatvec(x), M.T @ x, rtol=0, atol=1e-13 * np.abs(M.T @ x).max())


@pytest.mark.parametrize("name", ["pendulum 2D driven", "mechanism 3D driven"])
def test_the_end_point_form_has_no_start_derivative_and_its_terms_at_the_start(name):
    """Newmark's C(u_{n+1})^T lambda and Phi do not change with the start state; the end-point terms'
    derivative (generalized-alpha's start term) against central differences in u (spins)."""
    asm, u0, u1, lam = _setup(MODELS[name]())
    scheme = Newmark(asm)
    n = asm.n_dof

    def terms(u):
        s = State(T0, u, np.zeros(n), np.zeros(n), np.zeros(n), lam=lam)
        return scheme.constraint_terms(s, DT, u1, lam)

    base, moved = terms(u0), terms(asm.update(u0, np.full(n, 0.1)))
    assert np.array_equal(base.force, moved.force) and np.array_equal(base.phi, moved.phi)
    K, ct = ConstraintStartDerivatives(asm).end_point(u0, T0, lam)
    D = K.matrix().toarray()
    FD = start_central_difference(lambda u: asm.constraints.evaluate(u, T0, lam).force, asm, u0, 1e-5)
    assert np.abs(FD - D).max() < 1e-7 * np.abs(D).max()
    assert np.allclose(ct.force, ct.C.T @ lam, rtol=0, atol=1e-14 * np.abs(ct.force).max())


@pytest.mark.parametrize("name", ["pendulum 2D driven", "mechanism 3D driven"])
def test_time_derivative_of_driven_joints(name):
    """dPhi/dt by complex steps in t against the central difference of ConstraintSystem.time_derivative
    (its error ~1e-10), non-zero on the driven rows only; a drive of real time only (math.sin) falls
    back to the central difference."""
    asm, u0, u1, lam = _setup(MODELS[name]())
    csd = ConstraintStartDerivatives(asm)
    exact = csd.time_derivative(u1, T0)
    fd = asm.constraints.time_derivative(u1, T0, h=1e-5)
    assert np.abs(exact).max() > 0.05
    assert np.abs(exact - fd).max() < 1e-8 * np.abs(exact).max()
    rows = asm.constraints.joint_rows[1]
    assert not np.any(np.delete(exact, np.arange(rows.start, rows.stop)))
    real_only = (_pendulum_2d if "2D" in name else _mechanism_3d)(lambda t: 0.3 * t**2 + 0.1 * math.sin(2.0 * t))
    fallback = ConstraintStartDerivatives(fm.Assembly(real_only)).time_derivative(u1, T0)
    assert np.abs(fallback - exact).max() < 1e-8 * np.abs(exact).max()


@pytest.mark.parametrize("name", ["pendulum 2D driven", "mechanism 3D driven"])
def test_drive_amplitude_derivatives_against_central_differences(name):
    """dPhi/dp and the mid-point and end-point d(G^T lambda)/dp of the drive's multiplier against central
    differences of re-built models (apply), relative 1e-7; the force does not depend on a 2D drive
    (a right-hand side) and does on a 3D revolute drive (its scales)."""
    model = MODELS[name]()
    asm, u0, u1, lam = _setup(model)
    p = drive_amplitude("hinge" if "3D" in name else "elbow")
    assert p.value(model) == 1.0
    d = asm.cayley_increment(u0, u1)
    t1 = T0 + DT

    def terms(value, mid=True):
        cs = fm.Assembly(p.apply(model, value)).constraints
        return cs.evaluate(u1, t1, lam, u0=u0, d=d, t0=T0) if mid else cs.evaluate(u1, t1, lam)

    h = 1e-4                                # the force's FD round-off branch: 2e-9 at 1e-5
    plus, minus = terms(1.0 + h), terms(1.0 - h)
    dphi = p.constraint_derivative(asm, u1, t1)
    assert np.abs(dphi).max() > 0.01
    assert np.abs((plus.phi - minus.phi) / (2 * h) - dphi).max() < 1e-7 * np.abs(dphi).max()
    dforce = p.force_derivative(asm, u1, t1, lam, u0=u0, d=d, t0=T0)
    fd_force = (plus.force - minus.force) / (2 * h)
    if "2D" in name:
        assert not np.any(dforce) and np.abs(fd_force).max() < 1e-9
    else:
        assert np.abs(dforce).max() > 0.01
        assert np.abs(fd_force - dforce).max() < 1e-7 * np.abs(dforce).max()
        end = p.force_derivative(asm, u1, t1, lam)
        fd_end = (terms(1.0 + h, False).force - terms(1.0 - h, False).force) / (2 * h)
        assert np.abs(fd_end - end).max() < 1e-7 * np.abs(end).max()
    assert np.abs(fm.Assembly(p.apply(model, 1.0)).constraints.evaluate(u1, t1, lam).phi
                  - asm.constraints.evaluate(u1, t1, lam).phi).max() == 0.0


def test_prescribed_motion_amplitude_and_refusals():
    """A prescribed motion's multiplier: du_p/dp = f(t) at its DOF (the values of a re-built model are
    p f(t)); refusals name the parameter."""
    m = _pendulum_2d()
    node = m.add_nodes(np.array([[2.0, 0.0]]))[0]
    m.add_point_mass(int(node), 1.0)
    m.prescribe(int(node), "uy", lambda t: 0.2 * np.sin(3.0 * t))
    asm = fm.Assembly(m)
    p = drive_amplitude(node=int(node), dof="uy")
    du = p.prescribed_derivative(asm, 0.4)
    k = asm.dofs.index(int(node), "uy")
    assert du[k] == pytest.approx(0.2 * np.sin(1.2), rel=1e-15) and np.count_nonzero(du) == 1
    scaled = fm.Assembly(p.apply(m, 2.5))
    assert np.allclose(scaled.prescribed_values(0.4), 2.5 * asm.prescribed_values(0.4), rtol=1e-15, atol=0)
    with pytest.raises(ModelError, match="not driven"):
        drive_amplitude("pivot").value(m)
    with pytest.raises(ModelError, match="no joint 'knee'"):
        drive_amplitude("knee").value(m)
    with pytest.raises(ModelError, match="not prescribed"):
        drive_amplitude(node=0, dof="ux").value(m)
    with pytest.raises(ModelError, match="no constraint rows"):
        p.constraint_derivative(asm, np.zeros(asm.n_dof), 0.0)
    with pytest.raises(ModelError, match="no joints"):
        ConstraintStartDerivatives(fm.Assembly(_free_beam()))


def _free_beam() -> fm.Model:
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 3), np.zeros(3)])
    m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e6, EI=2e2, rho_A=2.0, rho_I=1e-3)
    return m


@pytest.mark.parametrize("drive", [None, _quadratic])
def test_the_whole_augmented_mid_point_residual_start_derivative(drive):
    """R(u_n) = [(g + G_m^T lambda)_free; Phi] of MidPoint for the jointed pendulum at fixed v_n, u_{n+1}
    and lambda: dR/du_n = [(forces + inertia + joints)[free]; 0] with the force terms of
    StartDerivatives, the inertia of InertiaDerivatives and the joints' of ConstraintStartDerivatives,
    against central differences of the scheme's residual and constraint terms, to 1e-7 of the largest
    entry; leaving out the joints' terms misses by 1e4 times that."""
    asm, u0, u1, lam = _setup(_pendulum_2d(drive), seed=5)
    lam = 100.0 * lam                       # reactions of 1 kN: the joints' share is 1e-3 of the stiffness
    scheme = MidPoint(asm)
    n, free = asm.n_dof, asm.dofs.free
    v0 = np.random.default_rng(7).normal(0.0, 0.5, n)

    def residual(u):
        s = State(T0, u, v0, np.zeros(n), np.zeros(n), lam=lam)
        res = scheme.residual(s, DT, u1.copy())
        ct = scheme.constraint_terms(s, DT, u1, lam, res)
        return np.concatenate([(res.g + ct.force)[free], ct.phi])

    D = (StartDerivatives(asm).residual(u0, u1, DT) + InertiaDerivatives(asm).residual(u0, u1, v0, None, DT).u
         + ConstraintStartDerivatives(asm).force(u0, u1, lam, T0, T0 + DT)).matrix().toarray()
    expected = np.vstack([D[free], np.zeros((asm.constraints.n, n))])
    scale = np.abs(expected).max()
    errors = {h: np.abs(start_central_difference(residual, asm, u0, h) - expected).max() / scale
              for h in (1e-4, 1e-5, 1e-6)}
    assert min(errors.values()) < 1e-7, errors
    joints = ConstraintStartDerivatives(asm).force(u0, u1, lam, T0, T0 + DT).matrix().toarray()[free]
    assert np.abs(joints).max() > 1e-3 * scale


def test_direct_differentiation_of_the_driven_pendulum_against_re_runs():
    """The pieces in a direct differentiation of a mid-point run of the pendulum with a driven elbow
    (f = 0.3 t^2: the start state does not depend on the amplitude p): per step ``A Y = -(R_u X_u +
    R_v X_v + R_p)`` with A the step Jacobian at the solution (flexmb.sensitivity.transient), R_u the
    force, inertia and joint start derivatives, R_v the inertia's, R_p = (0, dPhi/dp), then
    ``X_v <- 2 (X_u' - X_u) / dt - X_v``. du_N/dp and the multipliers' d lambda_N/dp against central
    differences of re-runs of re-built models (step 1e-3, in the round-off branch already: 4e-11 and 6e-8
    relative; without the joints' start derivative 8e-4 and 2e-2)."""
    model = _pendulum_2d(lambda t: 0.3 * t**2)
    asm = fm.Assembly(model)
    p = drive_amplitude("elbow")
    dt, t_end = 0.01, 0.2
    run = record(asm, dt, t_end)
    n, free, nf = asm.n_dof, asm.dofs.free, asm.n_free
    forces, inertia, joints = StartDerivatives(asm), InertiaDerivatives(asm), ConstraintStartDerivatives(asm)
    X_u, X_v = np.zeros(n), np.zeros(n)
    for k, step in enumerate(run.steps):
        [(start, size, end)] = sub_steps(run.stepper, run.states[k], step, run.settings)
        u0, u1, t1 = start.u, end.u, start.t + size
        jac = step_jacobian(run.stepper, start, size, end)
        mass = inertia.residual(u0, u1, start.v, None, size)
        R_u = forces.residual(u0, u1, size) + mass.u + joints.force(u0, u1, end.lam, start.t, t1)
        g = R_u.matvec(X_u) + mass.v.matvec(X_v) + p.force_derivative(asm, u1, t1, end.lam, u0=u0,
                                                                      d=asm.cayley_increment(u0, u1), t0=start.t)
        Y = jac.solve(-np.concatenate([g[free], p.constraint_derivative(asm, u1, t1)]))
        new = np.zeros(n)
        new[free] = Y[:nf]
        X_v, X_u, X_lam = 2.0 * (new - X_u) / size - X_v, new, Y[nf:]
    h = 1e-3
    ends = [record(fm.Assembly(p.apply(model, 1.0 + sign * h)), dt, t_end).final for sign in (1.0, -1.0)]
    fd_u, fd_lam = (ends[0].u - ends[1].u) / (2 * h), (ends[0].lam - ends[1].lam) / (2 * h)
    assert np.abs(X_u).max() > 1e-3
    assert np.abs(fd_u - X_u).max() < 1e-8 * np.abs(X_u).max()
    assert np.abs(fd_lam - X_lam).max() < 1e-6 * np.abs(X_lam).max()
