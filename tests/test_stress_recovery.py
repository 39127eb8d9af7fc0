"""Stress recovery in reduced components and modal bodies (issue 32, item 3): modal stresses of a
basis, recovery along q, the centrifugal pre-stress of a modal body, VTU/XDMF output, a picture."""
from __future__ import annotations

import meshio
import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.cms import (Component, ModalBodyData, ModalStresses, components_from_groups, craig_bampton,
                        free_interface, imported_component, modal_stresses, recover_modal_body)
from flexmb.io.export import write_stress_vtu_series, write_stress_xdmf, xdmf_heavy_data_path
from flexmb.io.solid_mesh import box

E, RHO = 2.1e11, 7850.0
L, B, H, P = 1.0, 0.05, 0.05, 1000.0          # tet10 cantilever: L/H = 20, tip force P (N)


def cantilever() -> tuple[fm.Model, np.ndarray, np.ndarray, np.ndarray]:
    """A tet10 cantilever along x, 10 x 1 x 1 cells, nu = 0 (no clamping singularity), clamped at x = 0,
    a tip force P along z spread over the tip nodes; returns model, coordinates, root and tip nodes."""
    x, cells = box(L, B, H, 10, 1, 1, "tet10")
    model = fm.Model(dim=3)
    model.add_nodes(x)
    model.add_solid(cells, E=E, nu=0.0, rho=RHO, name="blade")
    root = np.flatnonzero(x[:, 0] < 1e-12)
    tip = np.flatnonzero(np.abs(x[:, 0] - L) < 1e-12)
    for i in root:
        model.fix(int(i))
    for i in tip:
        model.add_load(int(i), "uz", P / tip.size)
    return model, x, root, tip


def test_tet10_reduced_static_root_stress_matches_full_model():
    model, x, root, tip = cantilever()
    u_full = np.asarray(fm.linear_static(model).u, dtype=float).reshape(-1)
    comp = Component.from_model(model, [], name="blade")
    f = np.zeros(comp.n_dof)
    f[comp.assembly.dofs.translations()[tip, 2]] = P / tip.size
    Phi = craig_bampton(comp, n_modes=16).vectors[:, comp.interface_dofs.size:]   # root held: normal modes
    q = np.linalg.solve(Phi.T @ (comp.K @ Phi), Phi.T @ f)                          # the reduced static solve
    reduced = modal_stresses(comp, Phi).recover(q)
    full = modal_stresses(comp, u_full[:, None]).recover(np.ones(1))
    s_red, s_full = reduced.node_stress[0, root], full.node_stress[0, root]       # (n_root, 6)
    miss = np.abs(s_red - s_full).max() / np.abs(s_full[:, 0]).max()
    assert miss < 1e-2, f"root stresses of 16 modes miss the full model's by {miss:.2%} of the peak (1 %)"
    # the full model's own element kernel (Solid.element_outputs) in the root elements
    groups = fm.Assembly(model).element_outputs(u_full)[0]
    at_root = np.flatnonzero(np.isin(model.groups[0].connectivity, root).any(axis=1))
    for name in ("s_xx", "von_mises"):
        ref = groups[name][at_root]
        miss = np.abs(reduced.element("blade", name)[0, at_root] - ref).max() / np.abs(ref).max()
        assert miss < 2e-2, f"root element {name} of 16 modes misses Solid.element_outputs by {miss:.2%} (2 %)"
    # and beam theory at the root's top and bottom fibres: s_xx = -/+ P L (H/2) / I (nu = 0)
    bending = P * L * (H / 2) / (B * H**3 / 12)
    for side, sign in ((H, -1.0), (0.0, 1.0)):
        fibre = root[np.abs(x[root, 2] - side) < 1e-12]
        s = s_full[np.isin(root, fibre), 0].mean()
        assert abs(s / (sign * bending) - 1) < 5e-2, f"root fibre stress {s:.4g} Pa vs beam theory {sign * bending:.4g}"
    # von Mises of the recovered tensor (uniaxial near the fibres: |s_xx|), not of summed modal von Mises
    assert np.allclose(reduced.von_mises[0], fm.elements.solid.von_mises(reduced.node_stress[0]), equal_nan=True)


def test_free_interface_rigid_modes_carry_no_stress():
    x, cells = box(L, B, H, 4, 1, 1, "tet10")
    model = fm.Model(dim=3)
    model.add_nodes(x)
    model.add_solid(cells, E=E, nu=0.3, rho=RHO, name="blade")
    comp = Component.from_model(model, np.flatnonzero(x[:, 0] < 1e-12).tolist(), name="free")
    reduced = free_interface(comp, n_elastic_modes=3)
    stresses = ModalStresses.of_reduced(reduced)
    assert stresses.n_modes == reduced.size + reduced.residual_flexibility.shape[1]
    elastic = np.abs(stresses.node_stress[reduced.n_rigid:reduced.size]).max()
    rigid = np.abs(stresses.node_stress[:reduced.n_rigid]).max()
    assert reduced.n_rigid == 6 and rigid < 1e-9 * elastic, f"rigid modes stress {rigid:.3e} vs {elastic:.3e} Pa"


def beam_model() -> fm.Model:
    """A 2D beam of two groups ``a`` (clamped end) and ``b`` of 6 elements each."""
    m = fm.Model(2)
    m.add_nodes(np.c_[np.linspace(0.0, 1.2, 13), np.zeros(13)])
    m.add_beam2d(np.c_[np.arange(6), np.arange(1, 7)], 2e6, 40.0, 1.5, 1e-3, mass="consistent", name="a")
    m.add_beam2d(np.c_[np.arange(6, 12), np.arange(7, 13)], 2e6, 40.0, 1.5, 1e-3, mass="consistent", name="b")
    m.fix(0)
    return m


def test_beam_component_section_forces_equal_full_model_in_the_span():
    model = beam_model()
    comp = components_from_groups(model, {"ca": ["a"], "cb": ["b"]})[0]
    Phi = craig_bampton(comp, n_modes=4).vectors
    q = np.random.default_rng(3).normal(size=Phi.shape[1])
    recovered = modal_stresses(comp, Phi).recover(q)
    # the full model's co-rotational outputs at +-eps Phi q (odd part: linear in u up to eps^2 terms)
    u = np.zeros(fm.Assembly(model).n_dof)
    u[comp.global_dofs] = Phi @ q
    eps = 1e-5 / np.abs(u).max()
    asm = fm.Assembly(model)
    plus, minus = asm.element_outputs(eps * u)[0], asm.element_outputs(-eps * u)[0]
    for name in ("N", "M1", "M2"):
        full = (plus[name] - minus[name]) / (2 * eps)
        miss = np.abs(recovered.element("a", name)[0] - full).max() / np.abs(full).max()
        assert miss < 1e-10, f"{name} recovered on component 'ca' misses the full model's by {miss:.2e}"
    assert np.isnan(recovered.von_mises).all()                                 # no solids: no nodal stress


def test_recovery_is_linear_in_q_and_von_mises_is_not_summed():
    model, *_ = cantilever()
    comp = Component.from_model(model, [], name="blade")
    stresses = modal_stresses(comp, craig_bampton(comp, n_modes=3).vectors[:, comp.interface_dofs.size:])
    q1, q2, a, b = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.7, -1.1]), 2.5, -0.75
    r1, r2, r12 = (stresses.recover(q) for q in (q1, q2, a * q1 + b * q2))
    solid = stresses.solid_nodes
    scale = np.abs(r1.node_stress[0, solid]).max()
    assert np.abs(r12.node_stress[0, solid] - a * r1.node_stress[0, solid] - b * r2.node_stress[0, solid]).max() \
        < 1e-12 * scale
    both = stresses.recover(np.stack([q1, q2]))                               # two steps at once
    assert np.array_equal(both.node_stress[1, solid], r2.node_stress[0, solid])
    for name in ("s_xx", "s_xz"):
        lin = a * r1.element(0, name) + b * r2.element(0, name)
        assert np.abs(r12.element(0, name) - lin).max() < 1e-12 * np.abs(r1.element(0, "s_xx")).max()
    summed = a * r1.von_mises + b * r2.von_mises
    assert np.abs(r12.von_mises[0, solid] - summed[0, solid]).max() > 1e-3 * np.nanmax(r12.von_mises)
    assert np.all(r12.von_mises[0, solid] >= 0.0)


def spun_blade() -> ModalBodyData:
    """A 2D beam blade along x (frame node 0 at the hub axis), 2 bending modes."""
    blade = fm.Model(dim=2)
    x = np.linspace(0.0, 1.0, 21)
    nodes = blade.add_nodes(np.c_[x, np.zeros_like(x)])
    blade.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e7, EI=50.0, rho_A=2.0, mass="consistent", name="blade")
    return ModalBodyData.from_model(blade, frame_node=0, n_modes=2, name="blade")


def test_centrifugal_prestress_from_the_residual_static_field():
    data = spun_blade()
    stresses = data.modal_stresses
    assert stresses is data.modal_stresses                                    # computed once, kept
    omega = 6.0
    scalars = fm.cms.steady_spin_scalars(data, [0.0, 0.0, omega])
    # at a steady spin the modes sit at their quasi-static response K_e q = Phi^T f
    f = -(data.component.M @ _centrifugal_field(data)) * omega**2
    q = np.linalg.solve(data.modal_stiffness, data.basis.T @ f)
    with_load = stresses.recover(q, load_scalars=scalars).element("blade", "N")[0]
    alone = stresses.recover(q).element("blade", "N")[0]
    x_mid = 0.025 + 0.05 * np.arange(20)
    exact = 2.0 * omega**2 * (1.0 - x_mid**2) / 2.0                          # rho A Omega^2 (L^2 - x^2) / 2
    miss = np.abs(with_load - exact).max() / exact.max()
    assert miss < 2e-3, f"centrifugal normal force misses rho A Omega^2 (L^2 - x^2)/2 by {miss:.2e}"
    assert np.abs(alone).max() < 1e-2 * exact.max(), "the bending modes alone should carry no stretch"
    assert stresses.static_node_stress.shape[0] == len(data.load_cases) == stresses.static_basis.shape[1]
    # an angular acceleration loads the blade across: the modes carry most of the bending, the
    # residual the rest, and their sum (no part counted twice) is the full static response
    comp = data.component
    f = comp.M @ _tangential_field(data)                                       # -M a, a = alpha x X, alpha = -1
    free = np.arange(3, comp.n_dof)                                           # frame node 0 clamped
    u = np.zeros(comp.n_dof)
    u[free] = np.linalg.solve(comp.K.toarray()[np.ix_(free, free)], f[free])
    full = modal_stresses(comp, u[:, None]).recover(np.ones(1)).element("blade", "M1")[0]
    q = np.linalg.solve(data.modal_stiffness, data.basis.T @ f)
    both = stresses.recover(q, load_scalars={"alpha_z": -1.0}).element("blade", "M1")[0]
    miss = np.abs(both - full).max() / np.abs(full).max()
    assert miss < 1e-8, f"modes + residual miss the full static bending moment by {miss:.2e}"
    root = 2.0 * 1.0 / 3.0                                                    # rho A alpha L^3 / 3 (N m)
    assert abs(abs(full[0]) / root - 1) < 2e-2, f"root moment {full[0]:.5g} N m vs rho A alpha L^3/3 = {root:.5g}"
    modes_only = stresses.recover(q).element("blade", "M1")[0]
    assert np.abs(modes_only - full).max() > 1e-4 * np.abs(full).max()        # the residual is not nothing
    with pytest.raises(ModelError, match="unknown load case"):
        stresses.recover(q, load_scalars={"ww_xx": 1.0})


def _centrifugal_field(data: ModalBodyData) -> np.ndarray:
    """Nodal acceleration field (n_dof,) of a unit spin about z: -X_i on the translations."""
    comp = data.component
    a = np.zeros(comp.n_dof)
    trans = comp.assembly.dofs.translations()                                  # (n_nodes, 2)
    a[trans] = -data.positions[:, :2]
    return a


def _tangential_field(data: ModalBodyData) -> np.ndarray:
    """Nodal acceleration field (n_dof,) of a unit angular acceleration about z: e_z x X_i."""
    comp = data.component
    a = np.zeros(comp.n_dof)
    trans = comp.assembly.dofs.translations()
    a[trans[:, 0]], a[trans[:, 1]] = -data.positions[:, 1], data.positions[:, 0]
    return a


def test_recovery_along_a_modal_body_history_and_files(tmp_path):
    data = spun_blade()
    model = fm.Model(dim=2)
    hub = model.add_node([0.0, 0.0])
    model.add_modal_body(data, node=hub, name="arm")
    model.fix(hub, ["ux", "uy"])
    model.prescribe(hub, "rz", lambda t: 2.0 * t**2)
    history = fm.integrate(fm.Assembly(model), 0.01, 0.1)
    recovered = recover_modal_body(history, "arm", data)
    q = np.stack([history.element("arm", f"q{k + 1}")[:, 0] for k in range(data.n_modes)], axis=1)
    assert np.array_equal(recovered.q, q) and recovered.n_steps == history.n_steps
    M1 = recovered.element("blade", "M1")
    # the body's FE model at its last deformation Phi q: the odd part of its co-rotational outputs
    fe = data.component.assembly
    u = data.basis @ q[-1]
    eps = 1e-5 / np.abs(u).max()
    full = (fe.element_outputs(eps * u)[0]["M1"] - fe.element_outputs(-eps * u)[0]["M1"]) / (2 * eps)
    miss = np.abs(M1[-1] - full).max() / np.abs(full).max()
    assert miss < 1e-8, f"recovered M1 misses the body's FE model by {miss:.2e}"   # the eps^2 of the check itself
    assert np.allclose(recovered.times, history.parameter)

    pvd = write_stress_vtu_series(recovered, tmp_path, name="arm")
    assert pvd.exists()
    last = meshio.read(tmp_path / f"arm_{recovered.n_steps - 1:05d}.vtu")
    ref = data.component.model.coordinates
    disp = recovered.displacement[-1]
    assert np.allclose(last.point_data["displacement"], disp, rtol=1e-12, atol=1e-15)
    assert np.allclose(last.points[:, :2], ref + disp[:, :2], rtol=1e-12, atol=1e-12)
    M1_file = np.concatenate(last.cell_data["M1"])
    assert np.allclose(M1_file, M1[-1], rtol=1e-12, atol=1e-12 * np.abs(M1[-1]).max())


def test_solid_stresses_in_vtu_and_xdmf_files(tmp_path):
    model, *_ = cantilever()
    comp = Component.from_model(model, [], name="blade")
    stresses = modal_stresses(comp, craig_bampton(comp, n_modes=2).vectors[:, comp.interface_dofs.size:])
    recovered = stresses.recover(np.array([[1.0, 0.0], [0.5, 0.2], [0.0, -1.0]]), times=[0.0, 0.1, 0.2])
    write_stress_vtu_series(recovered, tmp_path, name="blade")
    tol = 1e-12 * np.nanmax(np.abs(recovered.node_stress))
    for k in range(3):
        mesh = meshio.read(tmp_path / f"blade_{k:05d}.vtu")
        assert np.abs(mesh.point_data["stress"] - recovered.node_stress[k]).max() < tol
        assert np.abs(mesh.point_data["von_mises"] - recovered.von_mises[k]).max() < tol
        assert np.abs(np.concatenate(mesh.cell_data["s_xx"]) - recovered.element("blade", "s_xx")[k]).max() < tol
    path = write_stress_xdmf(recovered, tmp_path / "blade.xdmf")
    assert xdmf_heavy_data_path(path).exists()
    with meshio.xdmf.TimeSeriesReader(path) as reader:
        points, _ = reader.read_points_cells()
        assert np.allclose(points, comp.model.coordinates)
        for k in range(reader.num_steps):
            t, point_data, _ = reader.read_data(k)
            assert abs(t - 0.1 * k) < 1e-12
            assert np.abs(point_data["von_mises"] - recovered.von_mises[k]).max() < tol
    with pytest.raises(FileExistsError):
        write_stress_xdmf(recovered, path)


def test_picture_colours_von_mises(tmp_path):
    model, *_ = cantilever()
    comp = Component.from_model(model, [], name="blade")
    stresses = modal_stresses(comp, craig_bampton(comp, n_modes=1).vectors[:, comp.interface_dofs.size:])
    from PIL import Image

    from flexmb.viz.stresses import render_stresses

    out = render_stresses(stresses.recover(np.ones(1)), tmp_path / "blade.png", window_size=(320, 240))

    image = np.asarray(Image.open(out).convert("RGB"), dtype=float)
    assert image.shape[:2] == (240, 320)
    assert np.ptp(image.reshape(-1, 3), axis=0).max() > 50, "the picture is blank"


def test_imported_matrices_have_no_modal_stresses_and_bad_input():
    K = np.kron(np.array([[2.0, -1.0], [-1.0, 2.0]]), np.eye(2))
    comp = imported_component(K, np.eye(4), [[0.0, 0.0], [1.0, 0.0]], [(0, "ux"), (0, "uy"), (1, "ux"), (1, "uy")],
                              [0], name="imp")
    assert modal_stresses(comp, np.eye(4)) is None
    model, *_ = cantilever()
    solid = Component.from_model(model, [], name="blade")
    with pytest.raises(ModelError, match="blade.*basis must have shape"):
        modal_stresses(solid, np.ones((5, 2)))
    stresses = modal_stresses(solid, np.zeros((solid.n_dof, 2)))
    with pytest.raises(ModelError, match="q must have shape"):
        stresses.recover(np.ones(3))
    with pytest.raises(ModelError, match="load_scalars need"):
        stresses.recover(np.ones(2), load_scalars={"ww_zz": 1.0})
