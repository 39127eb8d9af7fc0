"""Component mode synthesis: components, reductions (free-interface + residual flexibility,
Craig-Bampton) and synthesis, checked against full-model natural modes."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import flexmb as fm
from flexmb.cms import (CmsModel, Component, ReducedBasis, components_from_groups, craig_bampton, free_interface,
                        synthesize)
from flexmb.cms.synthesis import _orthonormal_basis

# steel bar, 20 mm square, 1 m long (SI)
E, RHO, B, LENGTH = 2.1e11, 7800.0, 0.02, 1.0
AREA, INERTIA = B * B, B ** 4 / 12


def split_beam(parts: int = 4, per_part: int = 5, clamped: bool = True, mass: str = "consistent") -> fm.Model:
    """A 2D beam along x of ``parts`` element groups ``b0, b1, ...`` of ``per_part`` elements."""
    n = parts * per_part
    m = fm.Model(2)
    m.add_nodes(np.c_[np.linspace(0.0, LENGTH, n + 1), np.zeros(n + 1)])
    for k in range(parts):
        first = np.arange(k * per_part, (k + 1) * per_part)
        m.add_beam2d(np.c_[first, first + 1], E * AREA, E * INERTIA, RHO * AREA, RHO * INERTIA, mass=mass,
                     name=f"b{k}")
    if clamped:
        m.fix(0)
    return m


def by_group(model: fm.Model) -> dict[str, list[str]]:
    return {f"c{k}": [g.name] for k, g in enumerate(model.groups)}


def relative_errors(cms_values: np.ndarray, full_values: np.ndarray) -> np.ndarray:
    return cms_values / full_values - 1.0


def test_compatibility_S_T_is_zero_for_every_kind():
    model = split_beam()
    comps = components_from_groups(model, by_group(model))
    for bases in ([free_interface(c, n_elastic_modes=2) for c in comps], [craig_bampton(c, n_modes=2) for c in comps],
                  [free_interface(c, n_elastic_modes=2, residual=False) for c in comps],
                  [free_interface(comps[0], n_elastic_modes=2), craig_bampton(comps[1], n_modes=2),
                   free_interface(comps[2], n_elastic_modes=3), craig_bampton(comps[3], n_modes=1)]):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cms = synthesize(bases)
        # the inner components keep 5 free-interface modes without residual flexibility for 6 interface DOFs
        locked = any(b.residual_flexibility is None and b.kind == "free-interface" for b in bases)
        assert [str(w.message).count("keeps 5 modes for 6 interface DOFs") for w in caught] == ([3] if locked else [])
        defect = np.abs(cms.S @ cms.T).max() / np.abs(cms.T).max()
        assert defect < 1e-12, f"S T / |T| = {defect:.2e} for kinds {[b.kind for b in bases]}"
    # one row per shared DOF pair (3 junctions x 3 DOFs) and 3 grounded DOFs at the clamp
    assert cms.S.shape[0] == 3 * 3 + 3


def test_free_interface_upper_bound_and_convergence():
    model = split_beam()
    full = fm.natural_modes(model, 8).eigenvalues
    comps = components_from_groups(model, by_group(model))
    previous = None
    for n_modes in (1, 2, 3, 5):
        values = synthesize([free_interface(c, n_elastic_modes=n_modes) for c in comps]).modes(8).eigenvalues
        err = relative_errors(values, full)
        # Rayleigh-Ritz: upper bounds (round-off of the eigen solvers about 1e-11)
        assert np.all(err > -1e-9), f"{n_modes} modes: CMS below the full FE eigenvalues by {err.min():.2e}"
        if previous is not None:          # the subspaces are nested: errors never grow
            assert np.all(err[:5] <= previous[:5] + 1e-9), f"{n_modes} modes: errors {err[:5]} grew from {previous[:5]}"
        previous = err
    assert previous[:5].max() < 1e-6, f"5 modes per component: modes 1-5 off by {previous[:5].max():.2e}"


def test_craig_bampton_upper_bound_and_convergence():
    model = split_beam()
    full = fm.natural_modes(model, 6).eigenvalues
    comps = components_from_groups(model, by_group(model))
    errors = []
    for n_modes in (0, 2, 4):
        cms = synthesize([craig_bampton(c, n_modes=n_modes) for c in comps])
        assert cms.size == 9 + 4 * n_modes      # junction DOFs (the clamp is grounded) + fixed-interface modes
        err = relative_errors(cms.modes(6).eigenvalues, full)
        assert np.all(err > -1e-9), f"Craig-Bampton below the FE eigenvalues by {err.min():.2e}"
        errors.append(err)
    assert np.all(np.diff(np.array(errors), axis=0) <= 1e-9), f"Craig-Bampton errors grew: {errors}"


def test_recovered_modes_match_full_modes():
    model = split_beam()
    full = fm.natural_modes(model, 5)
    comps = components_from_groups(model, by_group(model))
    modes = synthesize([free_interface(c, n_elastic_modes=3) for c in comps]).modes(5)
    recovered = modes.full_modes()
    assert recovered.shape == full.modes.shape
    asm = fm.Assembly(model)
    M = asm.free_matrix(asm.mass_data_at())
    free = asm.dofs.free
    gram = recovered[:, free] @ (M @ recovered[:, free].T)
    assert np.allclose(gram, np.eye(5), atol=1e-9), "recovered modes are not mass-normalised on the parent model"
    assert np.all(recovered[:, asm.dofs.prescribed] == 0.0)
    for k in range(5):
        a, b = recovered[k], full.modes[k]
        difference = np.abs(a * np.sign(a @ b) - b).max() / np.abs(b).max()
        assert difference < 2e-3, f"mode {k + 1}: recovered shape differs by {difference:.2e}"
    shapes = modes.mode_shapes()
    assert np.allclose(shapes.values, modes.frequencies_hz)


@pytest.mark.parametrize("mass", ["consistent", "lumped"])
def test_free_free_split_beam_2d_has_three_rigid_modes(mass):
    model = split_beam(clamped=False, mass=mass)
    comps = components_from_groups(model, by_group(model))
    modes = synthesize([free_interface(c, n_elastic_modes=3) for c in comps]).modes(8)
    assert modes.rigid.sum() == 3 and np.all(modes.eigenvalues[:3] == 0.0)
    full = fm.natural_modes(model, 8).eigenvalues
    err = relative_errors(modes.eigenvalues[3:], full[3:])
    assert np.all(err > -1e-9) and err[:3].max() < 1e-5, f"elastic free-free modes off by {err}"
    # every rigid mode is a rigid motion: no strain energy
    assert np.allclose(modes.vectors[:, :3].T @ synthesize(
        [free_interface(c, n_elastic_modes=3) for c in comps]).K @ modes.vectors[:, :3], 0.0, atol=1e-6 * full[3])


def frame_3d(clamped: bool = True) -> fm.Model:
    """A 3D portal frame: two 1.5 m columns (groups "left", "right") and a 2 m girder ("girder"),
    4 Beam3D elements each, the column bases clamped."""
    m = fm.Model(3)
    z = np.linspace(0.0, 1.5, 5)
    left = m.add_nodes(np.c_[np.zeros(5), np.zeros(5), z])
    right = m.add_nodes(np.c_[2.0 * np.ones(5), np.zeros(5), z])
    inner = m.add_nodes(np.c_[np.linspace(0.0, 2.0, 5)[1:-1], np.zeros(3), 1.5 * np.ones(3)])
    girder = np.r_[left[-1], inner, right[-1]]
    section = dict(EA=E * AREA, GJ=0.8e11 * 2.25 * INERTIA, EI_y=E * INERTIA, EI_z=2 * E * INERTIA,
                   rho_A=RHO * AREA, rho_I=(2 * RHO * INERTIA, RHO * INERTIA, RHO * INERTIA), mass="consistent")
    m.add_beam3d(np.c_[left[:-1], left[1:]], name="left", y_axis=[0.0, 1.0, 0.0], **section)
    m.add_beam3d(np.c_[right[:-1], right[1:]], name="right", y_axis=[0.0, 1.0, 0.0], **section)
    m.add_beam3d(np.c_[girder[:-1], girder[1:]], name="girder", y_axis=[0.0, 1.0, 0.0], **section)
    if clamped:
        m.fix(left[0])
        m.fix(right[0])
    return m


def test_3d_frame_split_into_components():
    model = frame_3d()
    full = fm.natural_modes(model, 6)
    comps = components_from_groups(model, {"left": ["left"], "right": ["right"], "girder": ["girder"]})
    assert [c.interface_nodes.tolist() for c in comps] == [[4], [9], [4, 9]]
    assert comps[0].grounded.size == 6 and comps[2].grounded.size == 0
    modes = synthesize([free_interface(c, n_elastic_modes=6) for c in comps]).modes(6)
    err = relative_errors(modes.eigenvalues, full.eigenvalues)
    assert np.all(err > -1e-9) and err.max() < 1e-6, f"3D frame modes off by {err}"
    recovered = modes.full_modes()
    mac = [(a @ b) ** 2 / ((a @ a) * (b @ b)) for a, b in zip(recovered, full.modes)]
    assert min(mac) > 1 - 1e-6, f"MAC of the recovered 3D frame modes {mac}"


def test_free_free_3d_frame_has_six_rigid_modes():
    model = frame_3d(clamped=False)
    comps = components_from_groups(model, {"left": ["left"], "right": ["right"], "girder": ["girder"]})
    modes = synthesize([free_interface(c, n_elastic_modes=4) for c in comps]).modes(9)
    assert modes.rigid.sum() == 6 and np.all(modes.eigenvalues[:6] == 0.0) and modes.eigenvalues[6] > 0.0
    full = fm.natural_modes(model, 9).eigenvalues
    err = relative_errors(modes.eigenvalues[6:], full[6:])
    assert np.all(err > -1e-9) and err.max() < 1e-7, f"free 3D frame elastic modes off by {err}"


def test_truss_meets_beam_couples_translations_only():
    """A cantilever column (beam) braced by a two-bar truss: the truss node shared with the beam
    has no rotation in the truss component, so only ux, uy are coupled there."""
    m = fm.Model(2)
    column = m.add_nodes(np.c_[np.zeros(7), np.linspace(0.0, 1.2, 7)])
    m.add_beam2d(np.c_[column[:-1], column[1:]], E * AREA, E * INERTIA, RHO * AREA, RHO * INERTIA,
                 mass="consistent", name="column")
    anchor = m.add_node([0.8, 0.0])
    m.add_truss([[anchor, column[6]], [anchor, column[3]]], E * AREA / 10, RHO * AREA, mass="consistent",
                name="braces")
    m.add_point_mass(column[6], 0.5)
    m.fix(column[0])
    m.fix(anchor)
    comps = components_from_groups(m, {"column": ["column"], "braces": [m.groups[1]]})
    beam, truss = comps
    assert sorted(truss.dof_names[truss.interface_dofs].tolist()) == ["ux", "ux", "ux", "uy", "uy", "uy"]
    assert "rz" not in beam.dof_names[beam.interface_dofs].tolist()[3:]          # the clamp's rz only
    assert truss.M.sum() > 0 and beam.M.diagonal().max() > 0
    full = fm.natural_modes(m, 5).eigenvalues
    # the braces have no interior DOF (Guyan = exact) and, free, are a mechanism (a hinge at the anchor)
    with pytest.raises(fm.ModelError, match="component 'braces'.*mechanism"):
        free_interface(truss, n_elastic_modes=1)
    values = synthesize([free_interface(beam, n_elastic_modes=4), craig_bampton(truss, n_modes=0)]).modes(5).eigenvalues
    err = relative_errors(values, full)
    # mode 5 moves the braces' own (consistent) mass, which the Guyan braces only approximate
    assert np.all(err > -1e-9) and err[:4].max() < 1e-4, f"braced column modes off by {err}"


def test_supported_node_shared_by_two_components_is_grounded_once():
    """A two-span beam on a middle support that is the interface node of the two spans."""
    model = split_beam(parts=2, per_part=6)
    model.fix(6, ["ux", "uy"])
    comps = components_from_groups(model, by_group(model))
    assert comps[0].grounded.size == 5 and comps[1].grounded.size == 2
    cms = synthesize([free_interface(c, n_elastic_modes=4) for c in comps])
    assert cms.S.shape[0] == 3 + 3 + 2            # junction pairs, clamp, middle support once
    err = relative_errors(cms.modes(4).eigenvalues, fm.natural_modes(model, 4).eigenvalues)
    assert np.all(err > -1e-9) and err.max() < 1e-6, f"two-span beam modes off by {err}"


def test_point_mass_goes_to_the_first_component_holding_the_node():
    model = split_beam(parts=2, per_part=5)
    model.add_point_mass(5, 0.7)                 # the interface node
    model.add_point_mass(10, 0.3)
    comps = components_from_groups(model, by_group(model))
    assert [len(c.model.point_masses) for c in comps] == [1, 1]
    err = relative_errors(synthesize([free_interface(c, n_elastic_modes=4) for c in comps]).modes(4).eigenvalues,
                          fm.natural_modes(model, 4).eigenvalues)
    assert np.all(err > -1e-9) and err.max() < 1e-6, f"beam with point masses off by {err}"


def test_component_from_model_with_explicit_node_mapping():
    parent = split_beam(parts=2, per_part=5)
    halves = []
    for k, name in enumerate(("root", "tip")):
        sub = fm.Model(2)
        sub.add_nodes(parent.coordinates[5 * k:5 * k + 6])
        g = parent.groups[k]
        sub.add_beam2d(g.connectivity - 5 * k, g.EA, g.EI, g.rho_A, g.rho_I, mass="consistent", name=g.name)
        if k == 0:
            sub.fix(0)
        halves.append(Component.from_model(sub, interface_nodes=[5] if k == 0 else [0], name=name,
                                           nodes=np.arange(5 * k, 5 * k + 6), parent=parent))
    assert halves[0].grounded.size == 3 and halves[1].local_node(5) == 0
    assert halves[1].local_dof(6, "rz") == 5 and halves[1].global_dofs[5] == fm.DofMap(parent).index(6, "rz")
    with pytest.raises(fm.ModelError, match="node 3 is not in component 'tip'"):
        halves[1].local_dof(3, "uy")
    from_groups = components_from_groups(parent, by_group(parent))
    a = synthesize([free_interface(c, n_elastic_modes=3) for c in halves]).modes(5)
    b = synthesize([free_interface(c, n_elastic_modes=3) for c in from_groups]).modes(5)
    assert np.allclose(a.eigenvalues, b.eigenvalues, rtol=1e-10)
    assert np.allclose(np.abs(a.full_modes()), np.abs(b.full_modes()), atol=1e-8 * np.abs(b.full_modes()).max())


def test_stand_alone_components_without_parent_synthesise_but_cannot_recover():
    subs = []
    for k in range(2):
        sub = fm.Model(2)
        sub.add_nodes(np.c_[np.linspace(0.5 * k, 0.5 * k + 0.5, 6), np.zeros(6)])
        sub.add_beam2d(np.c_[np.arange(5), np.arange(1, 6)], E * AREA, E * INERTIA, RHO * AREA, RHO * INERTIA,
                       mass="consistent")
        subs.append(Component.from_model(sub, [5 * (1 - k)], name=f"part {k}", nodes=np.arange(5 * k, 5 * k + 6)))
    cms = synthesize([free_interface(c, n_elastic_modes=3) for c in subs])
    modes = cms.modes(6)
    assert modes.rigid.sum() == 3
    with pytest.raises(fm.ModelError, match="no model to recover"):
        modes.full_modes()


def test_orthonormal_basis_drops_a_repeated_column():
    rng = np.random.default_rng(3)
    T = rng.standard_normal((10, 4))
    Q = _orthonormal_basis(np.hstack([T, 2.0 * T[:, [1]]]))
    assert Q.shape == (10, 4) and np.allclose(Q.T @ Q, np.eye(4), atol=1e-12)
    assert np.allclose(Q @ (Q.T @ T), T, atol=1e-12), "the basis does not span the columns"


def test_reduced_basis_sizes_and_cutoff():
    model = split_beam()
    comp = components_from_groups(model, by_group(model))[1]
    full = free_interface(comp, n_elastic_modes=6)
    assert isinstance(full, ReducedBasis) and full.n_rigid == 3 and full.size == 9
    assert full.residual_flexibility.shape == (comp.n_dof, comp.interface_dofs.size)
    phi = full.vectors
    assert np.allclose(phi.T @ (comp.M @ phi), np.eye(9), atol=1e-10)
    cut = 0.5 * (full.frequencies_hz[5] + full.frequencies_hz[6])      # between elastic modes 3 and 4
    assert free_interface(comp, cutoff_hz=cut).size == 3 + 3
    assert free_interface(comp, n_elastic_modes=2, cutoff_hz=cut).size == 3 + 2
    # the residual flexibility is what the kept modes miss: zero when all modes are kept
    every = free_interface(comp, n_elastic_modes=comp.n_dof - 3)
    assert np.abs(every.residual_flexibility).max() < 1e-9 * np.abs(full.residual_flexibility).max()


def test_all_modes_kept_everywhere_make_the_synthesis_exact():
    """Components that keep all their modes have no residual flexibility (what free_interface
    computes for them is round-off, whose S G S^T used to be called singular at a DOF that changed
    with the BLAS kernel): the synthesis is then exact, the full model's frequencies to round-off."""
    model = split_beam(parts=2, per_part=2)
    comps = components_from_groups(model, by_group(model))
    cms = synthesize([free_interface(c, n_elastic_modes=c.n_dof - 3) for c in comps])
    full = fm.natural_modes(model, 5)
    np.testing.assert_allclose(cms.modes(5).frequencies_hz, full.frequencies_hz, rtol=1e-9)


@pytest.mark.parametrize("groups, message", [
    ({"a": ["b0", "b1"], "b": ["b2", "nope"]}, "component 'b': unknown element group 'nope'"),
    ({"a": ["b0", "b1"], "b": ["b1", "b2", "b3"]}, "'b1' is in two components, 'a' and 'b'"),
    ({"a": ["b0", "b1"], "b": ["b2"]}, "'b3' belong to no component"),
    ({}, "non-empty dict"),
    ({"a": ["b0", "b1", "b2", "b3"], "b": []}, "component 'b': give a name .* non-empty list"),
])
def test_bad_groups(groups, message):
    with pytest.raises(fm.ModelError, match=message):
        components_from_groups(split_beam(), groups)


def test_bad_models():
    model = split_beam()
    model.prescribe(20, "uy", 0.01)
    with pytest.raises(fm.ModelError, match="prescribed node 20 uy has a non-zero"):
        components_from_groups(model, by_group(model))
    model = split_beam()
    model.add_joint("revolute", None, 20)
    with pytest.raises(fm.ModelError, match="joint 'revolute 0'"):
        components_from_groups(model, by_group(model))


def test_bad_component_requests():
    model = split_beam()
    comp = components_from_groups(model, by_group(model))[2]
    with pytest.raises(fm.ModelError, match="component 'c2': 40 elastic free-interface modes requested, "
                                            "the component has only 15"):
        free_interface(comp, n_elastic_modes=40)
    with pytest.raises(fm.ModelError, match="component 'c2': no elastic free-interface mode below the cut-off"):
        free_interface(comp, cutoff_hz=1.0)
    with pytest.raises(fm.ModelError, match="component 'c2': no fixed-interface mode below the cut-off"):
        craig_bampton(comp, cutoff_hz=1.0)
    with pytest.raises(fm.ModelError, match="component 'c2': 13 fixed-interface modes requested, .* only 12"):
        craig_bampton(comp, n_modes=13)
    with pytest.raises(fm.ModelError, match="component 'c2': give n_elastic_modes"):
        free_interface(comp)
    with pytest.raises(fm.ModelError, match="node 0 is not in component 'c2'"):
        comp.local_node(0)


def test_bad_interfaces_and_synthesis_requests():
    sub = split_beam(parts=1)
    with pytest.raises(fm.ModelError, match="interface node 9 is not in component 'arm'"):
        Component.from_model(sub, interface_nodes=[9], name="arm")
    model = split_beam()
    comps = components_from_groups(model, by_group(model))
    free_free = components_from_groups(split_beam(clamped=False), by_group(model))
    with pytest.raises(fm.ModelError, match="different parent models"):
        synthesize([free_interface(comps[0], n_elastic_modes=1), free_interface(free_free[1], n_elastic_modes=1)])
    with pytest.raises(fm.ModelError, match="'c0' appears twice"):
        synthesize([free_interface(comps[0], n_elastic_modes=1), free_interface(comps[0], n_elastic_modes=2)])
    with pytest.raises(fm.ModelError, match="non-empty list of ReducedBasis"):
        synthesize([])
    cms = synthesize([free_interface(c, n_elastic_modes=1) for c in comps])
    assert isinstance(cms, CmsModel)
    with pytest.raises(fm.ModelError, match="from 1 to the reduced size 16"):
        cms.modes(17)
    with pytest.raises(fm.ModelError, match="unknown component 'c9'"):
        cms.component_index("c9")
    with pytest.raises(fm.ModelError, match="component index 4 does not exist"):
        cms.component_rows(4)
    # a node shared by stand-alone components that only one declares as interface
    parts = []
    for k in range(2):
        sub = fm.Model(2)
        sub.add_nodes(np.c_[[0.5 * k, 0.5 * k + 0.5], [0.0, 0.0]])
        sub.add_beam2d([[0, 1]], 1.0, 1.0, 1.0, 1.0)
        parts.append(Component.from_model(sub, [1] if k == 0 else [], name=f"p{k}", nodes=[k, k + 1]))
    with pytest.raises(fm.ModelError, match="node 1 is in components 'p0' and 'p1' but is not an interface node "
                                            "of 'p1'"):
        synthesize([free_interface(c, n_elastic_modes=1) for c in parts])


def test_craig_bampton_needs_a_holding_interface():
    """A free-free 2D truss component held at one node only can spin about it."""
    m = fm.Model(2)
    n = m.add_nodes([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    m.add_truss([[0, 1], [1, 2], [0, 2]], 1e6, 1.0)
    comp = Component.from_model(m, [0], name="triangle")
    with pytest.raises(fm.ModelError, match="component 'triangle': its interface DOFs do not hold it"):
        craig_bampton(comp, n_modes=1)
    assert free_interface(comp, n_elastic_modes=3).n_rigid == 3 and n.size == 3


def test_mechanism_is_named():
    m = fm.Model(2)
    m.add_nodes([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    m.add_truss([[0, 1], [1, 2]], 1e6, 1.0)                  # a straight two-bar chain: node 1 swings
    with pytest.raises(fm.ModelError, match="component 'chain'.*mechanism"):
        free_interface(Component.from_model(m, [0], name="chain"), n_elastic_modes=1)


@pytest.mark.parametrize("mass", ["consistent", "lumped"])
def test_sparse_eigen_path_matches_the_dense_one(mass):
    model = split_beam(parts=2, per_part=20, mass=mass)
    comp = components_from_groups(model, by_group(model))[1]
    for reduce, request in ((free_interface, dict(n_elastic_modes=4)), (free_interface, dict(cutoff_hz=500.0)),
                            (craig_bampton, dict(n_modes=4)), (craig_bampton, dict(cutoff_hz=3000.0))):
        dense, sparse = reduce(comp, **request), reduce(comp, dense_limit=0, **request)
        assert dense.size == sparse.size and dense.n_rigid == sparse.n_rigid
        assert np.allclose(sparse.eigenvalues, dense.eigenvalues, rtol=1e-9, atol=0.0), \
            f"{reduce.__name__} {request}: {sparse.eigenvalues} vs {dense.eigenvalues}"
        if dense.residual_flexibility is not None:
            G = dense.residual_flexibility
            assert np.abs(sparse.residual_flexibility - G).max() < 1e-9 * np.abs(G).max()


def test_cms_modes_save_as_a_mode_result(tmp_path):
    model = split_beam()
    modes = synthesize([free_interface(c, n_elastic_modes=2) for c in components_from_groups(model, by_group(model))]
                       ).modes(3)
    path = modes.save(tmp_path / "cms.h5")
    loaded = fm.load_result(path)
    assert loaded.kind == "modes" and np.allclose(loaded.values, modes.frequencies_hz)
