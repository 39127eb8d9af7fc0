"""Design variables and eigen-sensitivities: Fox-Kapoor on the full model and CMS shares with T
frozen, each checked against finite differences of a re-analysis of the *changed model* (not of
the derivative matrices under test), the sum rules, the ranking table and chart, bad input."""
from __future__ import annotations

import warnings

import matplotlib
import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from flexmb.analysis.modes import natural_modes
from flexmb.cms import (components_from_groups, density_scale, eigen_sensitivity, free_interface, point_mass,
                        section_property, spring, stiffness_scale, synthesize)
from flexmb.cms.reduction import shifted_eigh

matplotlib.use("Agg")

N_EL = 6                     # elements per column
MODES = [0, 1, 2, 3]              # the fourth is the axial mode of the right column
#: the portal's parameters: columns (EA N, EI N m^2, rho_A kg/m, rho_I kg m), springs (N/m), tip mass (kg)
BASE = dict(EA_L=1e3, EI_L=2.0, rhoA_L=1.0, rhoI_L=1e-3, EA_R=300.0, EI_R=3.0, rhoA_R=0.8, rhoI_R=2e-3,
            link=40.0, ground=25.0, tip_mass=0.5)
#: components and their elastic modes kept (the link is a bar: its residual flexibility carries it)
COMPONENTS = {"L": ["left"], "R": ["right"], "link": ["link"]}
KEPT = {"L": 4, "R": 4, "link": 0}


def portal(ground_truss: bool = True, **change: float) -> tuple[fm.Model, int, int]:
    """Two clamped columns (x = 0 and x = 1, height 1 m, Beam2D with Hermitian mass) joined at the
    top by a truss "link" (a spring ux between the tops, k = EA / 1 m), the right top held by a
    horizontal truss "ground" to a fixed node (a grounded spring ux), a point mass on the left top.
    Returns the model and the top nodes (left, right). Without ``ground_truss`` (CMS: its free
    anchor node would be a mechanism of a free-free component) the right top has no spring."""
    p = {**BASE, **change}
    m = fm.Model(dim=2)
    y = np.linspace(0.0, 1.0, N_EL + 1)
    left = m.add_nodes(np.c_[np.zeros_like(y), y])
    right = m.add_nodes(np.c_[np.ones_like(y), y])
    m.add_beam2d(np.c_[left[:-1], left[1:]], EA=p["EA_L"], EI=p["EI_L"], rho_A=p["rhoA_L"], rho_I=p["rhoI_L"],
                 mass="cubic", name="left")
    m.add_beam2d(np.c_[right[:-1], right[1:]], EA=p["EA_R"], EI=p["EI_R"], rho_A=p["rhoA_R"], rho_I=p["rhoI_R"],
                 mass="cubic", name="right")
    m.add_truss([[left[-1], right[-1]]], EA=p["link"], rho_A=0.1, mass="consistent", name="link")
    m.add_point_mass(left[-1], p["tip_mass"])
    m.fix(left[0])
    m.fix(right[0])
    if ground_truss:
        anchor = m.add_node([2.0, 1.0])
        m.add_truss([[right[-1], anchor]], EA=p["ground"], rho_A=0.05, mass="consistent", name="ground")
        m.fix(anchor)
    return m, int(left[-1]), int(right[-1])


_, TOP_L, TOP_R = portal()
#: (design variable, how the model's parameters change with it: t -> overrides, step h)
CASES = [
    (stiffness_scale("left"), lambda t: dict(EA_L=BASE["EA_L"] * (1 + t), EI_L=BASE["EI_L"] * (1 + t)), 1e-3),
    (density_scale("right"), lambda t: dict(rhoA_R=BASE["rhoA_R"] * (1 + t), rhoI_R=BASE["rhoI_R"] * (1 + t)), 1e-3),
    (section_property("left", "EI"), lambda t: dict(EI_L=BASE["EI_L"] * (1 + t)), 1e-3),
    (section_property("right", "EA"), lambda t: dict(EA_R=BASE["EA_R"] * (1 + t)), 1e-3),
    (section_property("left", "rho_A"), lambda t: dict(rhoA_L=BASE["rhoA_L"] * (1 + t)), 1e-3),
    (section_property("right", "rho_I"), lambda t: dict(rhoI_R=BASE["rhoI_R"] * (1 + t)), 1e-3),
    (section_property("link", "EA"), lambda t: dict(link=BASE["link"] * (1 + t)), 1e-3),
    (point_mass(TOP_L, BASE["tip_mass"]), lambda t: dict(tip_mass=BASE["tip_mass"] + t), 1e-3),
    (spring(TOP_L, "ux", other=TOP_R), lambda t: dict(link=BASE["link"] + t), 1e-2),
    (spring(TOP_R, "ux"), lambda t: dict(ground=BASE["ground"] + t), 1e-2),
]
IDS = [v.name for v, _, _ in CASES]


def richardson(f, h: float) -> np.ndarray:
    """d f/dt at 0 by Richardson-extrapolated central differences (error O(h^4))."""
    d1 = (f(h) - f(-h)) / (2.0 * h)
    d2 = (f(2.0 * h) - f(-2.0 * h)) / (4.0 * h)
    return (4.0 * d1 - d2) / 3.0


def relative_error(analytic: np.ndarray, fd: np.ndarray) -> float:
    """max |analytic - fd| / max |fd| over the modes checked."""
    return float(np.max(np.abs(analytic - fd)) / np.max(np.abs(fd)))


@pytest.fixture(scope="module")
def full():
    model, _, _ = portal()
    asm = fm.Assembly(model)
    return asm, natural_modes(asm, 8)


@pytest.fixture(scope="module")
def cms():
    model, _, _ = portal(ground_truss=False)
    comps = components_from_groups(model, COMPONENTS)
    return synthesize([free_interface(c, n_elastic_modes=KEPT[c.name]) for c in comps])


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_full_model_sensitivity_matches_finite_differences(case, full) -> None:
    variable, overrides, h = case
    asm, modes = full
    analytic = eigen_sensitivity(modes, variable, MODES, assembly=asm).derivatives[:, 0]

    def eigenvalues(t: float) -> np.ndarray:
        return natural_modes(portal(**overrides(t))[0], 4).eigenvalues[MODES]

    fd = richardson(eigenvalues, h)
    err = relative_error(analytic, fd)
    assert err < 1e-6, f"{variable.name}: Fox-Kapoor {analytic} vs FD {fd}: off by {err:.2e}"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cms_sensitivity_matches_finite_differences_with_T_frozen(case, cms) -> None:
    variable, overrides, h = case
    analytic = eigen_sensitivity(cms, variable, MODES).derivatives[:, 0]
    sigma = float(cms.modes(1).eigenvalues[0])

    def eigenvalues(t: float) -> np.ndarray:
        # the changed model's component matrices on the baseline T (T frozen); the grounded
        # spring (a truss to a fixed anchor in the full model) is added to component R by hand
        comps = components_from_groups(portal(False, **overrides(t))[0], COMPONENTS)
        if variable.kind == "spring" and variable.other is None:
            i = comps[1].local_dof(variable.node, variable.dof)
            comps[1].K = comps[1].K + t * sp.csc_matrix(([1.0], ([i], [i])), shape=comps[1].K.shape)
        K = sum(cms.T[cms.component_rows(j)].T @ (c.K @ cms.T[cms.component_rows(j)]) for j, c in enumerate(comps))
        M = sum(cms.T[cms.component_rows(j)].T @ (c.M @ cms.T[cms.component_rows(j)]) for j, c in enumerate(comps))
        return shifted_eigh(0.5 * (K + K.T), 0.5 * (M + M.T), sigma)[0][MODES]

    fd = richardson(eigenvalues, h)
    err = relative_error(analytic, fd)
    assert err < 1e-6, f"{variable.name}: CMS (T frozen) {analytic} vs FD {fd}: off by {err:.2e}"


def test_cms_component_shares_add_up_and_name_their_component(cms) -> None:
    s = eigen_sensitivity(cms, [stiffness_scale(["left", "right"]), point_mass(TOP_L, 0.5)], MODES)
    assert s.parts == ["L", "R", "link"]
    np.testing.assert_allclose(s.part_derivatives.sum(axis=2), s.derivatives, rtol=1e-14)
    E = s.part_derivatives[:, 0]
    assert np.all(E[:, :2] != 0.0) and np.all(E[:, 2:] == 0.0), "E scale of left+right must act on L and R only"
    assert np.count_nonzero(s.part_derivatives[:, 1]) == len(MODES), "a point mass goes to one component"


@pytest.mark.parametrize("base", ["full", "cms"])
def test_sum_rules(base, full, cms) -> None:
    """Euler homogeneity: normalised shares of a partition of all stiffness sum to +1, of all mass to -1."""
    groups = ("left", "right", "link", "ground") if base == "full" else ("left", "right", "link")
    stiffness = [stiffness_scale(g) for g in groups]
    mass = [density_scale(g) for g in groups] + [point_mass(TOP_L, BASE["tip_mass"])]
    if base == "full":
        s = eigen_sensitivity(full[1], stiffness + mass, MODES, assembly=full[0])
    else:
        s = eigen_sensitivity(cms, stiffness + mass, MODES)
    n = s.normalised
    k = len(groups)
    np.testing.assert_allclose(n[:, :k].sum(axis=1), 1.0, atol=1e-9, err_msg="stiffness shares")
    np.testing.assert_allclose(n[:, k:].sum(axis=1), -1.0, atol=1e-9, err_msg="mass shares")
    f = s.frequencies_hz
    np.testing.assert_allclose(s.frequency_derivatives, s.derivatives / (8 * np.pi**2 * f[:, None]), rtol=1e-14)


def test_section_properties_add_up_to_the_group(full) -> None:
    asm, _ = full
    K = stiffness_scale("left").matrices(asm)[0]
    parts = section_property("left", "EA").matrices(asm)[0] + section_property("left", "EI").matrices(asm)[0]
    assert abs(K - parts).max() <= 1e-12 * abs(K).max()
    M = density_scale("left").matrices(asm)[1]
    mparts = section_property("left", "rho_A").matrices(asm)[1] + section_property("left", "rho_I").matrices(asm)[1]
    assert abs(M - mparts).max() <= 1e-12 * abs(M).max()


def test_3d_beam_variables_match_the_assembled_matrices() -> None:
    """Beam3D: the section parts (EA, GJ, EI_y, EI_z; rho_A, rho_I incl. nodal rotary inertia) add
    up to the assembly's stiffness and mass, and sensitivities of GJ and rho_I match FD."""
    def tower(GJ: float = 30.0, rho_I: float = 1e-3) -> fm.Model:
        m = fm.Model(dim=3)
        n = m.add_nodes(np.c_[np.zeros(6), np.zeros(6), np.linspace(0, 1, 6)])
        m.add_beam3d(np.c_[n[:-1], n[1:]], EA=1e4, GJ=GJ, EI_y=40.0, EI_z=60.0, rho_A=1.0,
                     rho_I=(2 * rho_I, rho_I, rho_I), mass="consistent", name="tower")
        m.add_point_mass(n[-1], 0.3, inertia=0.01)
        m.fix(n[0])
        return m

    asm = fm.Assembly(tower())
    K = asm.free_matrix(asm.force_and_tangent(np.zeros(asm.n_dof))[1])
    M = asm.free_matrix(asm.mass_data_at())
    Kp = sum(section_property("tower", p).matrices(asm)[0] for p in ("EA", "GJ", "EI_y", "EI_z"))
    Mp = density_scale("tower").matrices(asm)[1] + 0.3 * point_mass(5, 0.3).matrices(asm)[1]
    assert abs(K - Kp).max() <= 1e-12 * abs(K).max()
    inertia = np.zeros(asm.n_free)
    inertia[asm.dofs.free_position[asm.dofs.first[5] + np.arange(3, 6)]] = 0.01   # the point mass's rotary inertia
    assert abs(M - Mp).max() - 0.01 <= 1e-12 and abs((M - Mp).diagonal() - inertia).max() <= 1e-12
    modes = natural_modes(asm, 6)
    for variable, change in ((section_property("tower", "GJ"), lambda t: dict(GJ=30.0 * (1 + t))),
                             (section_property("tower", "rho_I"), lambda t: dict(rho_I=1e-3 * (1 + t)))):
        analytic = eigen_sensitivity(modes, variable, list(range(6)), assembly=asm).derivatives[:, 0]
        fd = richardson(lambda t: natural_modes(tower(**change(t)), 6).eigenvalues, 1e-3)
        err = relative_error(analytic, fd)
        assert err < 1e-6, f"{variable.name}: {analytic} vs FD {fd}: off by {err:.2e}"


def test_table_ranks_and_chart(cms) -> None:
    variables = [stiffness_scale(g) for g in ("left", "right")] + [density_scale(g) for g in ("left", "right")]
    s = eigen_sensitivity(cms, variables, MODES)
    rows = s.ranking(0)
    shares = [abs(r["normalised"]) for r in rows]
    assert shares == sorted(shares, reverse=True) and len(rows) == 4
    text = s.table(0)
    assert rows[0]["variable"] in text.splitlines()[3] and "CMS, T frozen" in text
    md = s.table(1, markdown=True)
    assert md.count("\n|") == 2 + len(s.ranking(1))
    fig = s.bar_chart()
    assert len(fig.axes[0].patches) == len(variables) * len(MODES)
    with pytest.raises(fm.ModelError, match="mode 7 was not analysed"):
        s.table(7)


def test_repeated_eigenvalues_are_reported() -> None:
    m = fm.Model(dim=3)
    n = m.add_nodes(np.c_[np.zeros(6), np.zeros(6), np.linspace(0, 1, 6)])
    m.add_beam3d(np.c_[n[:-1], n[1:]], EA=1e4, GJ=30.0, EI_y=50.0, EI_z=50.0, rho_A=1.0, mass="consistent", name="t")
    m.fix(n[0])
    asm = fm.Assembly(m)
    modes = natural_modes(asm, 4)
    with pytest.warns(fm.FlexmbWarning, match="repeated eigenvalues, modes 0 and 1"):
        s = eigen_sensitivity(modes, stiffness_scale("t"), [0, 1], assembly=asm)
    assert (0, 1) in s.degenerate
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # a uniform scaling is unique even for the pair
        np.testing.assert_allclose(s.normalised[:, 0], 1.0, rtol=1e-9)


def test_bad_input(full, cms) -> None:
    asm, modes = full
    with pytest.raises(fm.ModelError, match="group\\(s\\) 'roof' not in this model"):
        eigen_sensitivity(modes, stiffness_scale("roof"), assembly=asm)
    with pytest.raises(fm.ModelError, match="acts on no component of the CMS model"):
        eigen_sensitivity(cms, density_scale("roof"))
    with pytest.raises(fm.ModelError, match="node 99 is not in this model"):
        eigen_sensitivity(modes, point_mass(99), assembly=asm)
    with pytest.raises(fm.ModelError, match="node 0 has no DOF 'uz'"):
        eigen_sensitivity(modes, spring(0, "uz"), assembly=asm)
    with pytest.raises(fm.ModelError, match="unknown DOF 'uq'"):
        spring(0, "uq")
    with pytest.raises(fm.ModelError, match="baseline stiffness 5.0 refused"):
        spring(3, "ux", stiffness=5.0)
    with pytest.raises(fm.ModelError, match="the analysed model has 0.5 kg there"):
        eigen_sensitivity(modes, point_mass(TOP_L), assembly=asm)
    with pytest.raises(fm.ModelError, match="unknown property 'EJ'"):
        section_property("left", "EJ")
    with pytest.raises(fm.ModelError, match="not a property of group 'link'"):
        eigen_sensitivity(modes, section_property("link", "EI"), assembly=asm)
    with pytest.raises(fm.ModelError, match="mode 8 does not exist"):
        eigen_sensitivity(modes, stiffness_scale("left"), [8], assembly=asm)
    with pytest.raises(fm.ModelError, match="the modes have shape \\(8, 44\\), the Assembly has 42 DOFs"):
        eigen_sensitivity(modes, stiffness_scale("left"), assembly=fm.Assembly(portal(ground_truss=False)[0]))
    with pytest.raises(fm.ModelError, match="no design variables"):
        eigen_sensitivity(modes, [], assembly=asm)
    with pytest.raises(fm.ModelError, match="two-node|node must be a non-negative integer"):
        point_mass(-1)
    m = fm.Model(dim=3)
    n = m.add_nodes(np.c_[np.zeros(3), np.zeros(3), np.linspace(0, 1, 3)])
    m.add_beam3d(np.c_[n[:-1], n[1:]], EA=1e4, GJ=30.0, EI_y=50.0, EI_z=60.0, GA_kz=1e4, rho_A=1.0, name="s")
    with pytest.raises(fm.ModelError, match="finite shear stiffness"):
        section_property("s", "EI_y").matrices(fm.Assembly(m))


def test_rigid_modes_are_refused() -> None:
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[np.linspace(0, 1, 5), np.zeros(5)])
    m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e3, EI=1.0, rho_A=1.0, mass="cubic", name="free")
    asm = fm.Assembly(m)
    modes = natural_modes(asm, 5)
    s = eigen_sensitivity(modes, stiffness_scale("free"), assembly=asm)
    assert s.modes.tolist() == [3, 4]                  # the elastic ones by default
    with pytest.raises(fm.ModelError, match="mode 0 is a rigid-body mode"):
        eigen_sensitivity(modes, stiffness_scale("free"), [0], assembly=asm)


def test_model_with_joints_uses_the_constraint_null_space() -> None:
    """A Beam2D hanging from a revolute joint with a rigid body welded to its end: Fox-Kapoor on
    modes that satisfy the linearised joints equals FD of the re-analysed model."""
    def hanging(E: float = 1.0, tip: float = 0.2) -> tuple[fm.Model, np.ndarray]:
        m = fm.Model(dim=2)
        nodes = m.add_nodes(np.c_[np.zeros(9), -np.linspace(0.0, 1.0, 9)])
        m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e4 * E, EI=2.0 * E, rho_A=1.0, rho_I=1e-3, mass="cubic",
                     name="rod")
        m.add_joint("revolute", None, int(nodes[0]), at=[0.0, 0.0])
        m.attach(int(nodes[-1]), m.add_rigid_body([0.3, -1.0], 1.0, 0.01))
        m.add_point_mass(int(nodes[4]), tip)
        return m, nodes

    model, nodes = hanging()
    modes = natural_modes(model, 5)
    assert modes.n_rigid == 1
    elastic = [1, 2, 3, 4]
    for variable, change in ((stiffness_scale("rod"), lambda t: dict(E=1 + t)),
                             (point_mass(int(nodes[4]), 0.2), lambda t: dict(tip=0.2 + t))):
        analytic = eigen_sensitivity(modes, variable, elastic).derivatives[:, 0]
        fd = richardson(lambda t: natural_modes(hanging(**change(t))[0], 5).eigenvalues[elastic], 1e-3)
        err = relative_error(analytic, fd)
        assert err < 1e-6, f"{variable.name} with joints: {analytic} vs FD {fd}: off by {err:.2e}"
