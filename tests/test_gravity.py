"""Gravity on every mass kind, including the configuration-dependent cubic mass of Beam2D.

Regression (2026-11-23): the weight was built from the constant mass matrix only, which holds no
translational mass for ``Beam2D(mass="cubic")``, so such beams weighed 0 N in statics and dynamics.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.elements.hermite_mass2d import HermiteMass2D

L, EI, RHO_A, G = 2.0, 1.0e5, 3.0, 9.81          # m, N m^2, kg/m, m/s^2 (tip deflection 5.9e-4 m: linear)
GREENHILL = 7.8373                              # q_cr L^3 / EI of a heavy column (Timoshenko & Gere 1961, sec. 2.13)


def cantilever(n_el: int, mass: str, length: float = L, EI: float = EI) -> tuple[fm.Model, np.ndarray]:
    """Horizontal cantilever clamped at x = 0 under gravity -y."""
    m = fm.Model(dim=2)
    x = np.linspace(0.0, length, n_el + 1)
    nodes = m.add_nodes(np.c_[x, np.zeros_like(x)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e8, EI=EI, rho_A=RHO_A, rho_I=1e-4, mass=mass)
    m.fix(nodes[0])
    m.set_gravity([0.0, -G])
    return m, nodes


def static_tip(n_el: int, mass: str) -> float:
    m, nodes = cantilever(n_el, mass)
    return -float(fm.load_control(m, 1, progress=False).dof(nodes[-1], "uy")[-1])


# ------------------------------------------------------------------ weight reaches the supports
@pytest.mark.parametrize("mass", ["lumped", "consistent", "cubic"])
def test_beam2d_weight_equals_its_mass_times_g(mass):
    m, nodes = cantilever(3, mass)
    path = fm.load_control(m, 1, progress=False)
    support = path.reaction(nodes[0], "uy")[-1]
    weight = RHO_A * L * G
    assert support == pytest.approx(weight, rel=1e-9), f"{mass}: support carries {support} N of {weight} N"


def test_weight_of_trusses_point_masses_bodies_and_3d_beams():
    m = fm.Model(dim=3)
    nodes = m.add_nodes([[0, 0, 0], [1, 0, 0], [2, 0, 0]])
    m.add_beam3d([[0, 1]], EA=1e7, GJ=1e3, EI_y=1e3, EI_z=1e3, rho_A=2.0, rho_I=[1e-3, 5e-4, 5e-4], mass="lumped")
    m.add_beam3d([[1, 2]], EA=1e7, GJ=1e3, EI_y=1e3, EI_z=1e3, rho_A=4.0, rho_I=[1e-3, 5e-4, 5e-4],
                 mass="consistent")
    tip = m.add_node([2.0, 0.0, -1.0])
    m.add_truss([[nodes[2], tip]], EA=1e7, rho_A=1.5)
    m.add_point_mass(tip, 0.7)
    body = m.add_rigid_body([0.0, 0.0, 1.0], mass=5.0, inertia=[1.0, 1.0, 1.0])
    m.attach(nodes[0], body)
    m.set_gravity([0.0, 0.0, -G])
    asm = fm.Assembly(m)
    f = asm.external_force(0.0, u=np.zeros(asm.n_dof))
    total = f[asm.dofs.translations()[:, 2]].sum()
    mass = 2.0 + 4.0 + 1.5 + 0.7 + 5.0
    assert total == pytest.approx(-mass * G, rel=1e-12), f"weight {total} N, expected {-mass * G} N"


# ------------------------------------------------------- cantilever against the closed form
def test_cubic_mass_cantilever_matches_closed_form_and_other_masses():
    exact = RHO_A * G * L**4 / (8.0 * EI)                       # rho A g L^4 / (8 EI)
    # the cubic mass's weight is the consistent load of the Hermite beam: exact nodal values
    for n in (1, 2, 4):
        tip = static_tip(n, "cubic")
        assert abs(tip / exact - 1.0) < 1e-5, f"cubic, {n} el.: tip {tip:.6e} m vs {exact:.6e} m"
    # lumped and linear consistent mass put the weight at the nodes: O(h^2), 0.13 % with 16 elements
    for mass in ("lumped", "consistent"):
        tip = static_tip(16, mass)
        assert abs(tip / exact - 1.0) < 5e-3, f"{mass}, 16 el.: tip {tip:.6e} m vs {exact:.6e} m"
        assert abs(tip / static_tip(16, "cubic") - 1.0) < 5e-3


# ------------------------------------------------------------------------ kernel derivatives
@pytest.fixture
def hermite(rng) -> tuple[HermiteMass2D, np.ndarray, np.ndarray, np.ndarray]:
    X = rng.normal(size=(5, 2, 2))
    kernels = HermiteMass2D(X, rng.uniform(0.5, 2.0, size=5))
    u0 = rng.normal(scale=0.3, size=(5, 6))
    u1 = u0 + rng.normal(scale=0.4, size=(5, 6))
    return kernels, u0, u1, np.array([0.3, -9.81])


def test_gravity_force_is_minus_the_gradient_of_the_potential(hermite, central_fd, relative_error):
    kernels, u0, _, g = hermite
    F, dF = kernels.gravity_force(u0, g)
    grad = central_fd(lambda u: kernels.gravity_potential(u, g)[:, None], u0, 1e-6)[:, 0, :]
    assert relative_error(F, -grad).max() < 1e-8
    assert relative_error(dF, central_fd(lambda u: kernels.gravity_force(u, g)[0], u0, 1e-6)).max() < 1e-6


def test_mid_point_gravity_is_an_exact_discrete_gradient(hermite, central_fd, relative_error):
    kernels, u0, u1, g = hermite
    F, dF = kernels.mid_point_gravity(u0, u1, g)
    work = np.einsum("ej,ej->e", F, u1 - u0)
    drop = kernels.gravity_potential(u0, g) - kernels.gravity_potential(u1, g)
    assert np.abs(work - drop).max() < 1e-12 * np.abs(drop).max(), "work of the step is not -dV"
    fd = central_fd(lambda u: kernels.mid_point_gravity(u0, u, g)[0], u1, 1e-6)
    assert relative_error(dF, fd).max() < 1e-6
    # consistent: the discrete gradient tends to the gradient as u1 -> u0
    near = u0 + 1e-7 * (u1 - u0)
    assert relative_error(kernels.mid_point_gravity(u0, near, g)[0], kernels.gravity_force(u0, g)[0]).max() < 1e-6


# ---------------------------------------------------------------------------------- dynamics
def test_cubic_mass_cantilever_released_under_gravity():
    """Released undeformed, the tip swings between 0 and twice the static deflection about it;
    the mid-point scheme keeps K + U - W_gravity constant at a step of a fifth of the period."""
    m, nodes = cantilever(4, "cubic")
    period = 2.0 * np.pi / (1.8751**2 * np.sqrt(EI / (RHO_A * L**4)))          # first bending period, s
    exact = RHO_A * G * L**4 / (8.0 * EI)
    for scheme, steps_per_period in (("mid-point", 5), ("mid-point", 40), ("newmark", 40)):
        dt = period / steps_per_period
        h = fm.integrate(m, dt, 20 * dt * steps_per_period / 5, scheme=scheme, progress=False)
        tip = -h.dof(nodes[-1], "uy")
        work = h.work[-1]
        assert work > 0.0, f"{scheme}: gravity did no work"
        if scheme == "mid-point":
            err = h.energy_error().max()
            assert err < 1e-9, f"mid-point dt = T/{steps_per_period}: energy error {err:.2e}"
        if steps_per_period == 40:
            # the first mode dominates: the largest deflection is about twice the static one
            assert 1.9 < tip.max() / exact < 2.15, f"{scheme}: largest tip {tip.max() / exact:.3f} x static"


# ------------------------------------------------------------- buckling under its own weight
def test_heavy_column_buckles_at_greenhills_load():
    """A column clamped at its foot buckles under its own weight at q L^3 / EI = 7.837. The cubic
    mass's weight turns with the nodes and its load stiffness enters the buckling problem; with
    the Hermite field and the exact potential of the weight this is a Rayleigh-Ritz
    discretisation, so the critical loads are upper bounds that converge at second order
    (measured +3.2, +0.80, +0.20 % with 4, 8, 16 elements; the load stiffness with the wrong
    sign gives values below the exact one)."""
    errors = []
    for n in (4, 8, 16):
        m = fm.Model(dim=2)
        y = np.linspace(0.0, 1.0, n + 1)
        nodes = m.add_nodes(np.c_[np.zeros_like(y), y])
        m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=1.0, rho_A=1.0, mass="cubic")
        m.fix(nodes[0])
        m.set_gravity([0.0, -1.0])
        errors.append(fm.linear_buckling(m, n_modes=1).critical / GREENHILL - 1.0)
    assert all(e > 0.0 for e in errors), f"not upper bounds of Greenhill's load: {errors}"
    assert errors[-1] < 5e-3, f"16 elements: {errors[-1]:.2e} from Greenhill's value"
    order = np.log2(errors[1] / errors[2])
    assert 1.7 < order < 2.5, f"convergence order {order:.2f}, errors {errors}"
