"""Sensitivities of static responses and of linearized eigenvalues (flexmb.sensitivity.static):
direct against adjoint, against central differences of re-solved statics and re-analysed
eigenvalues (step studies), scaling identities, and a spring-mass eigenvalue in closed form."""
import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.cms import design
from flexmb.sensitivity import parameters as P
from flexmb.sensitivity import static as S

STEPS = 5


def _cantilever(load=-2e3, joint=False):
    """A 2 m planar cantilever (8 co-rotational Beam2D elements) under a large tip load (tip
    deflection 0.5 m, rotation 0.38 rad: geometrically nonlinear) and its weight; clamped by a
    support, or by a fixed joint to the ground (multipliers)."""
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[np.linspace(0.0, 2.0, 9), np.zeros(9)])
    m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e7, EI=1e4, rho_A=5.0, rho_I=0.01, name="beam")
    if joint:
        m.add_joint("fixed", None, n[0], at=[0.0, 0.0])
    else:
        m.fix(n[0])
    m.add_load(n[-1], "uy", load)
    m.set_gravity([0.0, -9.81])
    params = [P.parameter(design.section_property("beam", "EI")), P.parameter(design.section_property("beam", "EA")),
              P.parameter(design.density_scale("beam"))]
    return m, n[-1], params


def _responses(m, tip):
    asm = fm.Assembly(m)
    w = np.zeros(asm.n_dof)                              # the tip's distance travelled along (1, -1)
    w[asm.dofs.index(tip, "ux")], w[asm.dofs.index(tip, "uy")] = 1.0, -1.0
    return [(tip, "uy"), (tip, "ux"), (tip, "rz"), w]


def _fd(m, params, responses, h):
    """Central differences (n_r, n_p) of the responses of re-solved load-control runs, relative step h."""
    asm = fm.Assembly(m)
    W = np.array([np.eye(asm.n_dof)[asm.dofs.index(*r)] if isinstance(r, tuple) else r for r in responses])
    cols = []
    for p in params:
        up = fm.load_control(p.apply(m, 1.0 + h), STEPS).u[-1]
        down = fm.load_control(p.apply(m, 1.0 - h), STEPS).u[-1]
        cols.append(W @ (up - down) / (2.0 * h))
    return np.array(cols).T


@pytest.mark.parametrize("joint", [False, True])
def test_static_direct_equals_adjoint(joint):
    m, tip, params = _cantilever(joint=joint)
    params.append(S.load_scale())
    path = fm.load_control(m, STEPS)
    resp = _responses(m, tip)
    direct = S.static_sensitivity(m, path, params, resp)
    adjoint = S.static_sensitivity(m, path, params, resp, method="adjoint")
    scale = np.abs(direct.gradient).max()
    err = np.abs(direct.gradient - adjoint.gradient).max() / scale
    assert err < 1e-10, f"direct and adjoint differ by {err:.2e} (relative)"
    assert adjoint.du_dp is None and direct.du_dp.shape == (fm.Assembly(m).n_dof, len(params))
    assert np.allclose(direct.values, [path.u[-1][fm.Assembly(m).dofs.index(tip, d)] for d in ("uy", "ux", "rz")]
                       + [direct.values[3]], rtol=0, atol=1e-15)


def test_static_matches_central_differences_with_step_study():
    m, tip, params = _cantilever()
    path = fm.load_control(m, STEPS)
    resp = _responses(m, tip)
    sens = S.static_sensitivity(m, path, params, resp).gradient
    scale = np.abs(sens).max()
    err = {h: np.abs(_fd(m, params, resp, h) - sens).max() / scale for h in (1e-2, 1e-3, 1e-5, 1e-8)}
    assert err[1e-5] < 1e-6, f"FD at h = 1e-5 misses by {err[1e-5]:.2e} (relative)"
    # truncation branch: O(h^2), a factor ~100 per decade; round-off branch: worse again at tiny h
    assert 30.0 < err[1e-2] / err[1e-3] < 300.0, f"truncation ratio {err[1e-2] / err[1e-3]:.3g}, expected ~100"
    assert err[1e-8] > err[1e-5], f"no round-off branch: {err[1e-8]:.2e} at 1e-8 vs {err[1e-5]:.2e} at 1e-5"


def test_joint_multipliers_derivative_matches_central_differences():
    m, tip, params = _cantilever(joint=True)
    path = fm.load_control(m, STEPS)
    sens = S.static_sensitivity(m, path, params, [(tip, "uy")])
    h = 1e-5
    for j, p in enumerate(params):
        up, down = fm.load_control(p.apply(m, 1.0 + h), STEPS), fm.load_control(p.apply(m, 1.0 - h), STEPS)
        fd = (up.multipliers[-1] - down.multipliers[-1]) / (2.0 * h)
        err = np.abs(fd - sens.multipliers_dp[:, j]).max() / np.abs(path.multipliers[-1]).max()
        assert err < 1e-7, f"{p.name}: multipliers' derivative misses FD by {err:.2e} (of the multipliers)"


def test_scaling_identities():
    # nonlinear path: stiffness times a and loads times s enter as s / a (exact)
    m, tip, params = _cantilever()
    stiffness = params[:2] + [S.load_scale()]
    path = fm.load_control(m, STEPS)
    g = S.static_sensitivity(m, path, stiffness, _responses(m, tip)).gradient
    err = np.abs(g[:, 0] + g[:, 1] + g[:, 2]).max() / np.abs(g).max()
    assert err < 1e-12, f"sum a dF/da + s dF/ds = {err:.2e} (relative), expected 0"
    # nearly linear elastic (a small dead load, no weight): sum over all stiffness scales of p dF/dp = -F
    m, tip, params = _cantilever(load=-1e-3)
    m.set_gravity([0.0, 0.0])
    sens = S.static_sensitivity(m, fm.load_control(m, 1), params[:2], [(tip, "uy")])
    total = float(sens.normalised.sum())
    assert abs(total + 1.0) < 1e-6, f"sum of normalised stiffness sensitivities {total:.9f}, expected -1"
    # on the large-load path the response is not linear in the load: the identity -F fails there
    big = S.static_sensitivity(_cantilever()[0], path, params[:2], [(tip, "uy")])
    assert abs(float(big.normalised.sum()) + 1.0) > 1e-2


def test_point_of_the_path_and_refusals():
    m, tip, params = _cantilever()
    path = fm.load_control(m, [0.3, 0.6, 1.0])
    # an inner point: the weight's derivative (density scale) carries the load factor 0.6
    mid = S.static_sensitivity(m, path, params, [(tip, "uy")], load_factor=0.6)
    row = fm.Assembly(m).dofs.index(tip, "uy")
    assert mid.load_factor == 0.6 and mid.values[0] == path.u[1][row]
    h = 1e-5
    for j, p in enumerate(params):
        fd = [fm.load_control(p.apply(m, 1 + s * h), [0.3, 0.6]).u[-1][row] for s in (1, -1)]
        fd = (fd[0] - fd[1]) / (2 * h)
        assert abs(fd - mid.gradient[0, j]) < 1e-7 * abs(fd), \
            f"{p.name} at load factor 0.6: {mid.gradient[0, j]} vs FD {fd}"
    with pytest.raises(ModelError, match="not a computed point"):
        S.static_sensitivity(m, path, params, [(tip, "uy")], load_factor=0.5)
    with pytest.raises(ModelError, match="method"):
        S.static_sensitivity(m, path, params, [(tip, "uy")], method="reverse")
    with pytest.raises(ModelError, match="response 0"):
        S.static_sensitivity(m, path, params, [np.ones(3)])


def test_spatial_frame_and_a_fine_translated_mesh():
    # a 3D cantilever (Beam3D, spatial rotations corrected by spins) under bending and torsion
    m = fm.Model(dim=3)
    n = m.add_nodes(np.c_[np.linspace(0.0, 2.0, 7), np.zeros(7), np.zeros(7)])
    m.add_beam3d(np.c_[n[:-1], n[1:]], EA=1e7, GJ=5e3, EI_y=1e4, EI_z=2e4, rho_A=5.0, rho_I=[0.02, 0.01, 0.01],
                 name="beam")
    m.fix(n[0])
    m.add_load(n[-1], "uy", -3e3)
    m.add_load(n[-1], "uz", 2e3)
    m.add_load(n[-1], "rx", 500.0)
    params = [P.parameter(design.section_property("beam", p)) for p in ("EI_y", "EI_z", "GJ", "EA")]
    path = fm.load_control(m, STEPS)
    resp = [(n[-1], "ux"), (n[-1], "uy"), (n[-1], "uz")]
    sens = S.static_sensitivity(m, path, params + [S.load_scale()], resp).gradient
    scale = np.abs(sens).max()
    err = np.abs(_fd(m, params, resp, 1e-5) - sens[:, :4]).max() / scale
    assert err < 1e-6, f"3D: FD at h = 1e-5 misses by {err:.2e} (relative)"
    assert np.abs(sens.sum(axis=1)).max() < 1e-12 * scale, "3D: stiffness and load scales do not cancel"
    # 256 elements, the model 1e4 m from the origin: direct == adjoint and the identity hold there too
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[1e4 + np.linspace(0.0, 2.0, 257), 1e4 + np.zeros(257)])
    m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e7, EI=1e4, rho_A=5.0, rho_I=0.01, name="beam")
    m.fix(n[0])
    m.add_load(n[-1], "uy", -2e3)
    params = [P.parameter(design.section_property("beam", p)) for p in ("EI", "EA")] + [S.load_scale()]
    path = fm.load_control(m, STEPS)
    direct = S.static_sensitivity(m, path, params, [(n[-1], "uy"), (n[128], "ux")]).gradient
    adjoint = S.static_sensitivity(m, path, params, [(n[-1], "uy"), (n[128], "ux")], method="adjoint").gradient
    scale = np.abs(direct).max()
    assert np.abs(direct - adjoint).max() < 1e-10 * scale
    assert np.abs(direct.sum(axis=1)).max() < 1e-10 * scale


def _oscillator(k=400.0, c=3.0, mass=2.0):
    m = fm.Model(dim=2)
    node = m.add_nodes(np.array([[1.0, 0.0]]))[0]
    spring = m.add_spring_damper(None, node, k=k, c=c, at_a=[0.0, 0.0])
    m.add_point_mass(node, mass)
    m.fix(node, ["uy"])
    return m, [P.spring_rate(spring), P.damper_rate(spring), P.parameter(design.point_mass(node, mass))]


def test_eigenvalue_of_a_damped_oscillator_in_closed_form():
    k, c, mass = 400.0, 3.0, 2.0
    m, params = _oscillator(k, c, mass)
    sens = S.linearized_eigen_sensitivity(m, params)
    s = -c / (2 * mass) + 1j * np.sqrt(k / mass - (c / (2 * mass)) ** 2)
    # m s^2 + c s + k = 0: ds = -(s^2 dm + s dc + dk) / (2 m s + c)
    exact = -np.array([1.0, s, s * s]) / (2 * mass * s + c)
    assert abs(sens.eigenvalues[0] - s) < 1e-12 * abs(s)
    err = np.abs(sens.derivatives[0] - exact) / np.abs(exact)
    assert err.max() < 1e-10, f"ds/d(k, c, m) off the closed form by {err} (relative)"
    assert sens.matrices.startswith("exact")


def _blade():
    """A clamped planar blade (6 second-order Beam2D elements, 1 m) spinning at 20 rad/s about
    its root: centrifugal stiffening of the lead-lag modes."""
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 7), np.zeros(7)])
    m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e6, EI=50.0, rho_A=2.0, rho_I=1e-4, name="blade", second_order=True)
    m.fix(n[0])
    params = [P.parameter(design.section_property("blade", p)) for p in ("EI", "EA")]
    return m, params + [P.parameter(design.density_scale("blade"))]


def test_rotating_blade_eigenvalues_match_re_analyses():
    m, params = _blade()
    spin = (None, 20.0, [0.0, 0.0])
    sens = S.linearized_eigen_sensitivity(m, params, modes=[0, 1, 2], spin=spin)

    def eigenvalues(model):
        u = fm.relative_equilibrium(model, spin, tolerance=1e-13)
        return fm.linearize(model, u=u, spin=spin).eigen().eigenvalues[:3]

    h = 1e-4
    fd = np.array([(eigenvalues(p.apply(m, 1 + h)) - eigenvalues(p.apply(m, 1 - h))) / (2 * h) for p in params]).T
    err = np.abs(fd - sens.derivatives).max() / np.abs(sens.derivatives).max()
    assert err < 1e-6, f"ds/dp misses central differences of re-analyses by {err:.2e} (relative)"
    # all stiffness and all mass scaled together leave the spinning blade's eigenvalues unchanged
    identity = np.abs(sens.derivatives.sum(axis=1)) / np.abs(sens.eigenvalues)
    assert identity.max() < 1e-7, f"EI + EA + density sensitivities sum to {identity.max():.2e} of s"
    # the stiffening is felt: EA (which carries no bending) moves the lead-lag eigenvalues through the state
    assert np.all(np.abs(sens.derivatives[:, 1].imag) > 1e-4 * np.abs(sens.eigenvalues))


def test_repeated_eigenvalue_refused():
    m = fm.Model(dim=2)
    node = m.add_nodes(np.array([[1.0, 0.0]]))[0]
    m.add_point_mass(node, 2.0)
    sx = m.add_spring_damper(None, node, k=400.0, c=0.0, at_a=[0.0, 0.0])
    m.add_spring_damper(None, node, k=400.0, c=0.0, at_a=[1.0, -1.0])
    with pytest.raises(ModelError, match="repeated"):
        S.linearized_eigen_sensitivity(m, [P.spring_rate(sx)])
