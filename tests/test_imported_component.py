"""Components from external matrices (flexmb.cms.imported): round trip through Matrix Market files,
synthesis with flexmb's own components, design variables, modal bodies, Abaqus coordinate format,
and the errors for bad files."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import flexmb as fm
from flexmb.checks import FlexmbWarning, ModelError
from flexmb.cms import Component, components_from_groups, craig_bampton, free_interface, synthesize
from flexmb.cms.design import density_scale, stiffness_scale
from flexmb.cms.imported import (
    MatrixGroup,
    imported_component,
    imported_modal_body,
    read_abaqus_component,
    read_component,
    write_component,
)
from flexmb.cms.modal_body import ModalBodyData
from flexmb.cms.modification import reanalyse
from flexmb.cms.sensitivity import eigen_sensitivity

E, RHO, SIDE, LENGTH = 2.1e11, 7850.0, 0.03, 2.0       # Pa, kg/m^3, m, m
A, I = SIDE ** 2, SIDE ** 4 / 12.0


def cantilever(dim: int = 2, per: int = 4, parts: int = 3, clamped: bool = True) -> fm.Model:
    """A steel beam along x in ``parts`` element groups ``part 1`` ... of ``per`` elements."""
    n = per * parts
    model = fm.Model(dim)
    x = np.linspace(0.0, LENGTH, n + 1)
    model.add_nodes(np.c_[x, np.zeros((n + 1, dim - 1))])
    for k in range(parts):
        first = np.arange(k * per, (k + 1) * per)
        conn = np.c_[first, first + 1]
        if dim == 2:
            model.add_beam2d(conn, E * A, E * I, RHO * A, RHO * I, mass="consistent", name=f"part {k + 1}")
        else:
            model.add_beam3d(conn, E * A, 0.8e11 * 2.25 * I, E * I, E * I, rho_A=RHO * A,
                             rho_I=(2 * RHO * I, RHO * I, RHO * I), mass="consistent", name=f"part {k + 1}")
    if clamped:
        model.fix(0)
    return model


def split(model: fm.Model) -> list[Component]:
    return components_from_groups(model, {g.name: [g.name] for g in model.groups})


def round_trip(components, tmp_path, parent):
    return [read_component(write_component(c, tmp_path / c.name.replace(" ", "_")), parent=parent)
            for c in components]


def relative(A, B) -> float:
    return float(abs(A - B).max() / abs(A).max())


@pytest.mark.parametrize("dim", [2, 3])
def test_round_trip_keeps_matrices_and_cms_frequencies(tmp_path, dim):
    model = cantilever(dim, clamped=dim == 2)
    own = split(model)
    back = round_trip(own, tmp_path, model)
    for a, b in zip(own, back):
        assert relative(a.K, b.K) <= 1e-14 and relative(a.M, b.M) <= 1e-14, f"component {a.name}"
        assert np.array_equal(a.interface_dofs, b.interface_dofs) and np.array_equal(a.grounded, b.grounded)
        assert np.array_equal(a.global_dofs, b.global_dofs)
    kept = 3 if dim == 2 else 6
    for reduce in (lambda c: free_interface(c, n_elastic_modes=kept), lambda c: craig_bampton(c, n_modes=kept)):
        f_own = synthesize([reduce(c) for c in own]).modes(8).frequencies_hz
        for parts in (back, own[:1] + back[1:]):                  # all imported, or beside flexmb's own
            f = synthesize([reduce(c) for c in parts]).modes(8).frequencies_hz
            elastic = f_own > 1e-6 * f_own.max()
            error = np.abs(f[elastic] / f_own[elastic] - 1.0).max()
            assert error <= 1e-10, f"CMS frequencies differ by {error:.2e} relative"
            assert np.abs(f[~elastic]).max(initial=0.0) <= 1e-6 * f_own.max()


def test_row_order_of_the_files_is_free(tmp_path):
    """Rows in any order: the DOF map puts them back (a wrong permutation changes the frequencies)."""
    model = cantilever()
    own = split(model)
    comp = own[1]
    order = np.random.default_rng(3).permutation(comp.n_dof)
    dofs = [(int(comp.dof_nodes[i]), str(comp.dof_names[i])) for i in order]
    K, M = comp.K[order][:, order], comp.M[order][:, order]
    shuffled = imported_component(K, M, comp.model.coordinates, dofs, comp.interface_nodes, nodes=comp.nodes,
                                  name=comp.name, parent=model)
    assert relative(comp.K, shuffled.K) <= 1e-14 and relative(comp.M, shuffled.M) <= 1e-14
    f_own = synthesize([free_interface(c, n_elastic_modes=2) for c in own]).modes(4).frequencies_hz
    f = synthesize([free_interface(c, n_elastic_modes=2) for c in [own[0], shuffled, own[2]]]).modes(4).frequencies_hz
    np.testing.assert_allclose(f, f_own, rtol=1e-10)


def test_companion_file_documents_every_row(tmp_path):
    comp = split(cantilever())[0]
    folder = write_component(comp, tmp_path / "c")
    info = json.loads((folder / "component.json").read_text())
    assert len(info["dofs"]) == scipy.io.mmread(str(folder / "K.mtx")).shape[0] == comp.n_dof
    assert info["grounded"] == [[0, "ux"], [0, "uy"], [0, "rz"]]
    assert info["interface"] == [4]                      # node 0 is grounded, not shared


def test_whole_component_scales_in_sensitivity_and_reanalysis(tmp_path):
    """Euler's theorem: normalised stiffness shares of all components sum to +1, density shares to -1;
    scaling every component's stiffness by 1.21 scales every frequency by 1.1."""
    model = cantilever()
    back = round_trip(split(model), tmp_path, model)
    cms = synthesize([free_interface(c, n_elastic_modes=3) for c in back])
    stiff = [stiffness_scale(c.name) for c in back]
    dense = [density_scale(c.name) for c in back]
    s = eigen_sensitivity(cms, stiff + dense).normalised[:4]            # (modes, variables)
    np.testing.assert_allclose(s[:, :3].sum(axis=1), 1.0, atol=1e-9)
    np.testing.assert_allclose(s[:, 3:].sum(axis=1), -1.0, atol=1e-9)
    f0 = cms.modes(4).frequencies_hz
    f1 = reanalyse(cms, {v: 0.21 for v in stiff}, n_modes=4).frequencies_hz
    np.testing.assert_allclose(f1 / f0, 1.1, rtol=1e-9)


def test_modal_body_from_imported_matrices_equals_the_beams_own(tmp_path):
    body = cantilever(per=6, parts=1, clamped=False)
    own = ModalBodyData.from_model(body, frame_node=0, n_modes=3)
    imported = read_component(write_component(Component.from_model(body, [0], name="beam"), tmp_path / "b"))
    with pytest.warns(FlexmbWarning, match="no geometric stiffening"):
        data = imported_modal_body(imported, frame_node=0, n_modes=3)
    for field in ("basis", "modal_stiffness", "modal_mass", "mass", "inertia0", "inertia2", "rotation_coupling1"):
        assert np.array_equal(getattr(own, field), getattr(data, field)), field
    assert np.abs(own.geometric_stiffness).max() > 0.0
    assert not np.any(data.geometric_stiffness)


def test_matrix_group_splits_its_matrices_exactly_and_conserves_energy():
    """The superelement is kept sparse, one element per coupled node pair ([i, i] the diagonal
    block, [i, j] the off-diagonal ones): scattered back its element matrices give K and M to the
    bit, its element energies sum to u.K u / 2, and the mid-point force does exactly the work of
    the energy change. Nodes 0 and 3 are not coupled (their blocks are zero), node 4 to nothing."""
    rng = np.random.default_rng(0)
    n_nodes, per = 5, 2
    B = rng.standard_normal((10, 10))
    K = B @ B.T
    K[0:2, 6:8] = K[6:8, 0:2] = 0.0
    K[8:10, :] = K[:, 8:10] = 0.0
    K[8:10, 8:10] = np.eye(2)
    M = np.diag(rng.uniform(1.0, 2.0, 10))
    group = MatrixGroup(K, M, n_nodes, 2, False, "m")
    assert [0, 3] not in group.connectivity.tolist() and [4, 4] in group.connectivity.tolist()
    dofs = (group.connectivity[:, :, None] * per + np.arange(per)).reshape(group.n_elements, -1)   # (n_el, 4)
    X = np.zeros((group.n_elements, 2, 2))
    for name, matrix, elements in (("K", K, group.force_and_tangent(X, np.zeros((group.n_elements, 4)))[1]),
                                   ("M", M, group.mass_matrix(X))):
        assembled = np.zeros((10, 10))
        np.add.at(assembled, (dofs[:, :, None], dofs[:, None, :]), elements)
        assert np.array_equal(assembled, matrix), name
    u0, u1 = rng.standard_normal(10), rng.standard_normal(10)
    energy = group.strain_energy(X, u1[dofs]).sum()
    np.testing.assert_allclose(energy, 0.5 * u1 @ K @ u1, rtol=1e-13)
    work = np.einsum("ei,ei->", group.mid_point_force(X, u0[dofs], u1[dofs]), (u1 - u0)[dofs])
    change = energy - group.strain_energy(X, u0[dofs]).sum()
    np.testing.assert_allclose(work, change, rtol=1e-12)


def test_abaqus_coordinate_format(tmp_path):
    """A component written in Abaqus' coordinate format (1-based node labels, DOFs 1, 2, 6, upper
    triangle) reads back to the same CMS frequencies."""
    model = cantilever()
    own = split(model)
    abaqus_dof = {"ux": 1, "uy": 2, "rz": 6}
    back = []
    for comp in own:
        paths = []
        for key, matrix in (("STIF", comp.K), ("MASS", comp.M)):
            upper = sp.triu(matrix).tocoo()
            lines = ["** flexmb test", *(f"{comp.dof_nodes[i] + 1}, {abaqus_dof[comp.dof_names[i]]}, "
                                         f"{comp.dof_nodes[j] + 1}, {abaqus_dof[comp.dof_names[j]]}, {float(v)!r}"
                                         for i, j, v in zip(upper.row, upper.col, upper.data))]
            path = tmp_path / f"{comp.name.replace(' ', '_')}_{key}1.mtx"
            path.write_text("\n".join(lines) + "\n")
            paths.append(path)
        back.append(read_abaqus_component(*paths, comp.model.coordinates, comp.interface_nodes + 1,
                                          nodes=comp.nodes + 1, name=comp.name))
    f_own = synthesize([craig_bampton(c, n_modes=2) for c in own]).modes(4).frequencies_hz
    # the labels are shifted by one, and the clamp is not in the Abaqus matrices: ground node 1 again
    grounded = [imported_component(b.K, b.M, b.model.coordinates,
                                   list(zip(b.dof_nodes.tolist(), b.dof_names.tolist())), b.interface_nodes,
                                   nodes=b.nodes, name=b.name,
                                   grounded=[(1, d) for d in ("ux", "uy", "rz")] if 1 in b.nodes else ())
                for b in back]
    f = synthesize([craig_bampton(c, n_modes=2) for c in grounded]).modes(4).frequencies_hz
    np.testing.assert_allclose(f, f_own, rtol=1e-10)


# ---------------------------------------------------------------------------- errors
def test_missing_file_is_named(tmp_path):
    folder = write_component(split(cantilever())[0], tmp_path / "c")
    (folder / "M.mtx").unlink()
    with pytest.raises(ModelError, match="M.mtx.*does not exist"):
        read_component(folder)


def test_mismatched_sizes(tmp_path):
    folder = write_component(split(cantilever())[0], tmp_path / "c")
    M = scipy.io.mmread(str(folder / "M.mtx")).tocsr()[:-3, :-3]
    scipy.io.mmwrite(str(folder / "M.mtx"), M, symmetry="symmetric")
    with pytest.raises(ModelError, match=r"K is 15 x 15 but M is 12 x 12"):
        read_component(folder)


def test_non_symmetric_stiffness(tmp_path):
    folder = write_component(split(cantilever())[0], tmp_path / "c")
    K = scipy.io.mmread(str(folder / "K.mtx")).tolil()
    K[4, 1] = K[4, 1] * (1.0 + 1e-6) + 1.0
    scipy.io.mmwrite(str(folder / "K.mtx"), K.tocoo())                 # general: both triangles
    with pytest.raises(ModelError, match=r"K is not symmetric: K\[(1, 4|4, 1)\]"):
        read_component(folder)


@pytest.mark.parametrize("edit, message", [
    (lambda info: info["dofs"].__setitem__(3, [99, "ux"]), "row 3 names node 99"),
    (lambda info: info["dofs"].__setitem__(3, [1, "uz"]), "row 3 names DOF 'uz'"),
    (lambda info: info["dofs"].__setitem__(3, [0, "ux"]), "node 0 DOF ux is given twice"),
    (lambda info: info["dofs"].append([1, "ux"]), "the DOF map names 16 rows but the matrices have 15"),
    (lambda info: info["interface"].append(42), "interface node 42 is not a node"),
])
def test_bad_dof_map(tmp_path, edit, message):
    folder = write_component(split(cantilever())[0], tmp_path / "c")
    path = folder / "component.json"
    info = json.loads(path.read_text())
    edit(info)
    path.write_text(json.dumps(info))
    with pytest.raises(ModelError, match=message):
        read_component(folder)


def test_nodes_must_carry_the_same_dofs():
    K = np.eye(5)
    with pytest.raises(ModelError, match="some nodes carry rotations and some do not"):
        imported_component(K, K, [[0.0, 0.0], [1.0, 0.0]], [(0, "ux"), (0, "uy"), (0, "rz"), (1, "ux"), (1, "uy")],
                           [0], name="mixed")
    with pytest.raises(ModelError, match=r"node 1 has DOFs \['ux'\]"):
        imported_component(np.eye(3), np.eye(3), [[0.0, 0.0], [1.0, 0.0]], [(0, "ux"), (0, "uy"), (1, "ux")],
                           [0], name="partial")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        comp = imported_component(np.eye(4), np.eye(4), [[0.0, 0.0], [1.0, 0.0]],
                                  [(0, "ux"), (0, "uy"), (1, "ux"), (1, "uy")], [0], name="translations")
    assert comp.n_dof == 4 and comp.interface_dofs.tolist() == [0, 1]
