"""Shells in the model: Model.add_shell, dead pressure and edge loads, and every analysis a user
reaches with triangles (statics, modes, buckling, dynamics, result files, design variables).

The physics checks are closed forms that a shell model must reproduce: a strip clamped at one
end and loaded at the other bends like a cantilever (P L^3 / 3 E I, Kirchhoff, nu = 0); loads
and reactions balance exactly; a free plate has six rigid-body modes; a simply supported square
plate under uniaxial compression buckles at k = 4 (sigma_cr = k pi^2 D / (b^2 h)).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import flexmb as fm
from flexmb.cms.design import density_scale, stiffness_scale
from flexmb.io import shell_mesh

E, NU, H, RHO = 1e9, 0.3, 0.01, 1000.0          # Pa, -, m, kg/m^3


def plate_model(a: float = 1.0, b: float = 0.5, nx: int = 4, ny: int = 2, nu: float = NU,
                pattern: str = "right") -> tuple[fm.Model, fm.Shell3, np.ndarray]:
    """A flat plate [0, a] x [0, b] of one shell group; returns the model, the group, the nodes' X."""
    X, T = shell_mesh.rectangle(a, b, nx, ny, pattern)
    model = fm.Model(dim=3)
    model.add_nodes(X)
    return model, model.add_shell(T, E=E, nu=nu, thickness=H, rho=RHO, name="plate"), X


def total_load(model: fm.Model, t: float = 1.0, statics: bool = False) -> np.ndarray:
    """Sum of all nodal forces (3,) N of the model's loads at t."""
    asm = fm.Assembly(model)
    return asm.external_force(t, statics)[asm.dofs.translations()].sum(axis=0)


# ------------------------------------------------------------------ statics
def test_cantilever_strip_bends_like_a_beam_and_reactions_balance_the_load():
    L, b, P = 1.0, 0.2, 1.0
    model, _, X = plate_model(L, b, 10, 2, nu=0.0)
    for node in shell_mesh.nodes_at(X, x=0.0):
        model.fix(int(node))
    tip = shell_mesh.nodes_at(X, x=L)
    model.add_edge_load(tip, [0.0, 0.0, P / b])
    path = fm.load_control(model, 1)
    w = np.array([path.dof(int(n), "uz")[-1] for n in tip])
    beam = P * L**3 / (3 * E * b * H**3 / 12)
    assert np.allclose(w, beam, rtol=1e-3), f"tip deflection {w} vs beam theory {beam:.6g} m"
    reaction = np.array(path.reactions[-1])[path.layout.translations()].sum(axis=0)
    np.testing.assert_allclose(reaction, [0.0, 0.0, -P], atol=1e-9)


def test_pressure_on_a_clamped_plate_is_carried_by_the_supports_without_warnings(recwarn):
    model, plate, X = plate_model()
    for node in shell_mesh.nodes_at(X, x=0.0):
        model.fix(int(node))
    model.add_pressure(plate, 200.0)
    path = fm.load_control(model, 2)
    assert not [w for w in recwarn if issubclass(w.category, fm.FlexmbWarning)]
    reaction = np.array(path.reactions[-1])[path.layout.translations()].sum(axis=0)
    np.testing.assert_allclose(reaction, [0.0, 0.0, -200.0 * 0.5], rtol=1e-12, atol=1e-9)
    assert path.element("plate", "membrane_forces").shape == (2, plate.n_elements, 3)
    assert path.series("bending_moments[0]@plate:0").shape == (2,)
    assert path.dof(int(shell_mesh.nodes_at(X, x=1.0, y=0.5)[0]), "uz")[-1] > 0.0


# ------------------------------------------------------------------ loads
def test_pressure_total_force_is_p_times_area_along_the_normal():
    model, plate, _ = plate_model(2.0, 1.0, 3, 2, pattern="union-jack")
    model.add_pressure(plate, 5.0)
    np.testing.assert_allclose(total_load(model), [0.0, 0.0, 10.0], rtol=1e-13)
    # on the facets of a closed cylinder the pressures cancel; on half of it they sum to p L 2R
    Xc, Tc = shell_mesh.cylinder(1.5, 2.0, 2 * np.pi, 12, 3, axis="z")
    cylinder = fm.Model(dim=3)
    cylinder.add_nodes(Xc)
    tube = cylinder.add_shell(Tc, E=E, nu=NU, thickness=H)
    cylinder.add_pressure(tube, 7.0)
    np.testing.assert_allclose(total_load(cylinder), 0.0, atol=1e-12)
    half = np.flatnonzero(Xc[Tc].mean(axis=1)[:, 1] > 0.0)
    panel = fm.Model(dim=3)
    panel.add_nodes(Xc)
    panel.add_pressure(panel.add_shell(Tc, E=E, nu=NU, thickness=H, name="tube"), 7.0, elements=half)
    np.testing.assert_allclose(total_load(panel), [0.0, 7.0 * 2.0 * 2 * 1.5, 0.0], rtol=1e-12, atol=1e-12)


def test_pressure_on_oppositely_oriented_neighbours_is_refused_naming_them():
    """Two of twelve triangles numbered the other way round: their pressure would push the other
    way (the plate's net load 2/3 of p A instead of p A). add_pressure names the first pair; oriented by
    shell_mesh.orient, the same mesh takes the full load."""
    X, T = shell_mesh.rectangle(1.0, 1.0, 3, 2, "union-jack")
    T[[4, 8]] = T[[4, 8]][:, [0, 2, 1]]
    model = fm.Model(dim=3)
    model.add_nodes(X)
    model.add_shell(T, E=E, nu=NU, thickness=H, name="skin")
    with pytest.raises(fm.ModelError, match=r"pressure on group 'skin': elements 3 and 8 are oriented oppositely "
                                            r"\(both run their shared edge from node \d+ to node \d+\).*\(4 such "
                                            r"pair\(s\) of neighbours\).*shell_mesh.orient\(triangles\)"):
        model.add_pressure("skin", 1.0)
    assert not model.loads, "a refused pressure must leave no load behind"
    # the loaded elements are what must agree: a selection without the reversed triangles is fine
    model.add_pressure("skin", 1.0, elements=[0, 1, 2, 3, 5, 6, 7, 9, 10, 11])
    repaired = fm.Model(dim=3)
    repaired.add_nodes(X)
    repaired.add_pressure(repaired.add_shell(shell_mesh.orient(T), E=E, nu=NU, thickness=H), 1.0)
    np.testing.assert_allclose(total_load(repaired), [0.0, 0.0, 1.0], rtol=1e-13, atol=1e-15)


def test_pressure_across_edges_of_more_than_two_triangles_warns():
    """A web standing on the middle line y = 0.5 of a plate: the pressure on plate and web together
    cannot be checked across the junction (warning); on the plate alone nothing is said."""
    X, T = shell_mesh.rectangle(1.0, 1.0, 2, 2, "right")
    line = shell_mesh.nodes_at(X, y=0.5)                                # nodes 3, 4, 5
    model = fm.Model(dim=3)
    model.add_nodes(X)
    top = model.add_nodes(X[line] + [0.0, 0.0, 0.3])                    # nodes 9, 10, 11
    web = np.vstack([np.column_stack([line[:-1], line[1:], top[1:]]), np.column_stack([line[:-1], top[1:], top[:-1]])])
    stiffened = model.add_shell(np.vstack([T, web]), E=E, nu=NU, thickness=H, name="stiffened")
    with pytest.warns(fm.FlexmbWarning, match=r"pressure on group 'stiffened': 2 edge\(s\) are shared by more than "
                                              r"two loaded triangles \(first: nodes 3, 4\)"):
        model.add_pressure(stiffened, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.add_pressure(stiffened, 1.0, elements=np.arange(len(T)))


def test_pressure_per_element_and_as_a_function_of_time():
    model, plate, _ = plate_model(1.0, 1.0, 2, 2)
    per_element = np.arange(plate.n_elements, dtype=float)
    model.add_pressure("plate", per_element)
    np.testing.assert_allclose(total_load(model)[2], per_element.sum() * 0.125, rtol=1e-13)

    calls = []

    def p(t):
        calls.append(t)
        return 3.0 * t

    timed, plate, _ = plate_model(1.0, 1.0, 2, 2)
    timed.add_pressure(plate, p)
    asm = fm.Assembly(timed)
    calls.clear()
    f = asm.external_force(2.0)[asm.dofs.translations()]
    np.testing.assert_allclose(f.sum(axis=0), [0.0, 0.0, 6.0], rtol=1e-13)
    assert calls == [2.0], "the pressure function must be called once per time, not once per node"
    # statics: the function gets the load factor
    np.testing.assert_allclose(asm.external_force(0.5, statics=True)[asm.dofs.translations()].sum(axis=0),
                               [0.0, 0.0, 1.5], rtol=1e-13)


def test_edge_load_is_shared_trapezoidally():
    model, _, X = plate_model(1.0, 0.6, 2, 3)
    edge = shell_mesh.nodes_at(X, x=1.0)                             # 4 nodes, segments of 0.2 m
    model.add_edge_load(edge, [0.0, 10.0, 0.0])
    asm = fm.Assembly(model)
    f = asm.external_force(1.0)[asm.dofs.translations()]
    np.testing.assert_allclose(f[edge, 1], [1.0, 2.0, 2.0, 1.0], rtol=1e-12)
    np.testing.assert_allclose(f.sum(axis=0), [0.0, 6.0, 0.0], rtol=1e-12)
    # a ring (closed edge, the first node repeated) of a closed cylinder: f times the perimeter
    Xc, Tc = shell_mesh.cylinder(1.0, 1.0, 2 * np.pi, 8, 1, axis="z")
    ring_model = fm.Model(dim=3)
    ring_model.add_nodes(Xc)
    ring_model.add_shell(Tc, E=E, nu=NU, thickness=H)
    ring = shell_mesh.nodes_at(Xc, z=1.0)
    ring_model.add_edge_load(np.r_[ring, ring[0]], [0.0, 0.0, 3.0])
    np.testing.assert_allclose(total_load(ring_model), [0.0, 0.0, 3.0 * 8 * 2 * np.sin(np.pi / 8)], rtol=1e-12)
    # a function of time gives the same shares
    timed, _, _ = plate_model(1.0, 0.6, 2, 3)
    timed.add_edge_load(edge, lambda t: [0.0, 10.0 * t, 0.0])
    asm = fm.Assembly(timed)
    np.testing.assert_allclose(asm.external_force(0.5)[asm.dofs.translations()][edge, 1], [0.5, 1.0, 1.0, 0.5])


# ------------------------------------------------------------------ analyses
def test_free_plate_has_six_rigid_modes_then_elastic_ones():
    model, _, _ = plate_model(1.0, 0.6, 4, 3)
    modes = fm.natural_modes(model, 8)
    assert modes.rigid.tolist() == [True] * 6 + [False] * 2
    assert modes.eigenvalues[6] > 1e3 * max(abs(modes.eigenvalues[:6]).max(), 1e-12)
    assert modes.total_mass == pytest.approx(RHO * H * 0.6, rel=1e-12)
    shapes = modes.mode_shapes()
    assert shapes.layout.groups[0].is_surface and shapes.n_steps == 8


def test_simply_supported_plate_buckles_at_k_4():
    a, n = 1.0, 6
    model, _, X = plate_model(a, a, n, n)
    on_edge = np.flatnonzero(np.isclose(X[:, 0], 0) | np.isclose(X[:, 0], a) | np.isclose(X[:, 1], 0)
                             | np.isclose(X[:, 1], a))
    for node in on_edge:
        model.fix(int(node), "uz")
    model.fix(0, ["ux", "uy"])
    model.fix(int(shell_mesh.nodes_at(X, x=0.0, y=a)[0]), "ux")
    model.add_edge_load(shell_mesh.nodes_at(X, x=a), [-1.0, 0.0, 0.0])
    model.add_edge_load(shell_mesh.nodes_at(X, x=0.0), [1.0, 0.0, 0.0])
    critical = fm.linear_buckling(model, 1).critical
    k = critical / (np.pi**2 * E * H**3 / (12 * (1 - NU**2)) / a**2)
    assert k == pytest.approx(4.0, rel=0.05), f"buckling coefficient {k:.4f}, closed form 4"


def test_mid_point_dynamics_of_a_free_plate_keeps_energy():
    model, plate, _ = plate_model(1.0, 0.5, 2, 2)
    model.add_pressure(plate, lambda t: 50.0 if t < 2e-3 else 0.0)
    history = fm.integrate(model, 1e-3, 6e-3)
    after = np.array(history.t) >= 2e-3 + 1e-12
    total = history.total[after]
    assert np.ptp(total) < 1e-8 * history.kinetic[-1]
    assert history.kinetic[-1] > 0.0


def test_shells_and_beams_share_nodes():
    model, _, X = plate_model(1.0, 0.5, 4, 2)
    edge = shell_mesh.nodes_at(X, y=0.0)
    model.add_beam3d(np.column_stack([edge[:-1], edge[1:]]), EA=1e7, GJ=1e3, EI_y=1e3, EI_z=1e3, rho_A=1.0)
    asm = fm.Assembly(model)
    assert asm.n_dof == 6 * model.n_nodes
    stiffened = fm.natural_modes(model, 7).eigenvalues[6]
    assert stiffened > fm.natural_modes(plate_model(1.0, 0.5, 4, 2)[0], 7).eigenvalues[6] * 0.5


def test_result_file_keeps_triangles_thickness_and_vector_outputs(tmp_path):
    model, plate, X = plate_model()
    for node in shell_mesh.nodes_at(X, x=0.0):
        model.fix(int(node))
    model.add_pressure(plate, 100.0)
    path = fm.load_control(model, 2, save_to=tmp_path / "plate.h5")
    loaded = fm.load_result(tmp_path / "plate.h5")
    group = loaded.layout.groups[0]
    assert group.kind == "Shell3" and group.connectivity.shape == (plate.n_elements, 3)
    np.testing.assert_array_equal(group.thickness, np.full(plate.n_elements, H))
    np.testing.assert_array_equal(loaded.element("plate", "bending_moments"), path.element("plate", "bending_moments"))
    assert loaded.label("membrane_forces[1]@plate:2") == "membrane_forces[1]@plate:2 (N/m)"
    with pytest.raises(fm.ModelError, match=r"has 3 components; name one as membrane_forces\[0\]"):
        loaded.series("membrane_forces@plate:2")
    with pytest.raises(fm.ModelError, match=r"components 0\.\.2"):
        loaded.series("membrane_forces[3]@plate:2")


def test_design_variables_of_a_shell_group_are_its_stiffness_and_mass():
    model, plate, X = plate_model(1.0, 0.5, 2, 2)
    for node in shell_mesh.nodes_at(X, x=0.0):
        model.fix(int(node))
    asm = fm.Assembly(model)
    K = asm.free_matrix(asm.force_and_tangent(np.zeros(asm.n_dof))[1]).toarray()
    dK, dM0 = stiffness_scale(plate).matrices(asm)
    np.testing.assert_allclose(dK.toarray(), K, rtol=1e-10, atol=1e-10 * np.abs(K).max())
    assert dM0.nnz == 0
    dK0, dM = density_scale("plate").matrices(asm)
    assert dK0.nnz == 0
    free = asm.dofs.free
    M = asm.mass[free][:, free].toarray()
    rot = np.isin(free, asm.rotation_dofs)
    # the translational mass, and the nodal rotary inertia on the rotations
    np.testing.assert_allclose(dM.toarray()[~rot][:, ~rot], M[~rot][:, ~rot], rtol=1e-12)
    assert np.all(np.diag(dM.toarray())[rot] > 0.0)


# ------------------------------------------------------------------ errors
def test_bad_shell_input_is_named():
    X, T = shell_mesh.rectangle(1.0, 1.0, 1, 1)
    model = fm.Model(dim=3)
    model.add_nodes(X)
    with pytest.raises(fm.ModelError, match=r"'skin': connectivity must be an integer array of shape \(n_el, 3\)"):
        model.add_shell(T[:, :2], E=E, nu=NU, thickness=H, name="skin")
    with pytest.raises(fm.ModelError, match=r"element 1 of group 'skin' refers to node\(s\) \[0, 3, 9\]"):
        model.add_shell(np.array([[0, 1, 3], [0, 3, 9]]), E=E, nu=NU, thickness=H, name="skin")
    with pytest.raises(fm.ModelError, match=r"element 0 of group 'flat' has zero area"):
        line = fm.Model(dim=3)
        line.add_nodes([[0.0, 0, 0], [1, 0, 0], [2, 0, 0]])
        line.add_shell([[0, 1, 2]], E=E, nu=NU, thickness=H, name="flat")
    with pytest.raises(fm.ModelError, match="add_shell needs a 3D model, this one is 2D"):
        planar = fm.Model(dim=2)
        planar.add_nodes(X[:, :2])
        planar.add_shell(T, E=E, nu=NU, thickness=H)
    with pytest.raises(fm.ModelError, match=r"'skin': thickness of element 1 is -0.01"):
        model.add_shell(T, E=E, nu=NU, thickness=[H, -H], name="skin")
    assert not model.groups


def test_bad_loads_are_named():
    model, plate, X = plate_model(1.0, 1.0, 2, 2)
    beam = model.add_beam3d([[0, 1]], EA=1.0, GJ=1.0, EI_y=1.0, EI_z=1.0, name="rib")
    with pytest.raises(fm.ModelError, match=r"add_pressure: 'wing' is not a shell group of this model; its shell "
                                            r"groups: 'plate'"):
        model.add_pressure("wing", 1.0)
    with pytest.raises(fm.ModelError, match=r"add_pressure: Beam3D 'rib' is not a shell group"):
        model.add_pressure(beam, 1.0)
    with pytest.raises(fm.ModelError, match=r"pressure on group 'plate': elements: element 8 does not exist"):
        model.add_pressure(plate, 1.0, elements=[0, 8])
    with pytest.raises(fm.ModelError, match=r"pressure on group 'plate': p \(Pa\) must be a number, one value per "
                                            r"element \(8\)"):
        model.add_pressure(plate, [1.0, 2.0])
    with pytest.raises(fm.ModelError, match=r"nodes 2 and 3 \(positions 1 and 2 of nodes_along_edge\) are not "
                                            r"joined by the side of an element"):
        model.add_edge_load([1, 2, 3], [1.0, 0.0, 0.0])          # 2 ends the first row, 3 starts the second
    with pytest.raises(fm.ModelError, match=r"add_edge_load: nodes_along_edge: node 99 does not exist"):
        model.add_edge_load([0, 99], [1.0, 0.0, 0.0])
    with pytest.raises(fm.ModelError, match=r"force_per_length"):
        model.add_edge_load([0, 1], [1.0, 0.0])
    bad = fm.Model(dim=3)
    bad.add_nodes(X)
    bad.add_shell(plate.connectivity, E=E, nu=NU, thickness=H)
    bad.add_pressure("shell", lambda t: "high")
    bad.fix(0)
    with pytest.raises(fm.UserFunctionError, match=r"pressure on group 'shell': the function <lambda> returned "
                                                   r"'high'"):
        fm.load_control(bad, 1)


def test_plate_welded_to_a_hub_on_a_revolute_joint_turns_with_it():
    model, _, X = plate_model(1.0, 0.5, 2, 2)
    hub = model.add_rigid_body([0.0, 0.0, 0.0], 10.0, [1.0, 1.0, 1.0])
    model.attach(0, hub)
    model.add_joint("revolute", None, hub, axis=[0.0, 0.0, 1.0])
    corner = int(shell_mesh.nodes_at(X, x=1.0, y=0.0)[0])
    model.add_load(corner, "uy", 10.0)
    history = fm.integrate(model, 2e-3, 2e-2)
    # the welded shell node turns with the hub about the joint axis, and only about it
    turned = history.dof(hub.node, "rz")[-1]
    assert turned > 0.0 and history.constraint_residual[-1] < 1e-10
    np.testing.assert_allclose([history.dof(0, d)[-1] for d in ("rx", "ry", "rz")], [0.0, 0.0, turned],
                               atol=1e-9 * turned)
    assert history.dof(corner, "uy")[-1] > 0.0
