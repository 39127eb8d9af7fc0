"""What the validation case ``solid-modal-body`` relies on (validation/solid_modal_body.py): its slab
section forces of a solid (from nodal stresses and from displacements) and of a Beam3D model give
the section forces of statics, and its root spider clamps the root face of the modal body's basis."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from flexmb.cms.modal_body import ModalBodyData

CASE_FILE = Path(__file__).resolve().parents[1] / "validation" / "solid_modal_body.py"


@pytest.fixture(scope="module")
def case():
    spec = importlib.util.spec_from_file_location("solid_modal_body_case", CASE_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def statics(F: np.ndarray, x: float, length: float) -> np.ndarray:
    """[N, M_y, M_z] at x of a cantilever along x with the force F (3,) at its tip on the axis:
    the moment (L - x) e_x x F of the force about the section's centre."""
    return np.array([F[0], -(length - x) * F[2], (length - x) * F[1]])


def test_solid_slab_section_forces_are_those_of_statics(case):
    """The case's tet10 blade, its root face fixed, a force at the centre of the tip face: each slab's
    averages equal N = F_x, M_y = -(L - x) F_z, M_z = (L - x) F_y at its middle x, to round-off
    (the slab average is the stresses' work on a virtual ramp of the mesh: equilibrium, no St-Venant
    disturbance even at the clamp)."""
    model, _ = case.blade_model((8, 2, 1))
    X = model.coordinates
    for i in np.flatnonzero(X[:, 0] < 1e-12):
        model.fix(int(i))
    tip = int(np.argmin(np.linalg.norm(X - [case.LENGTH, 0.0, 0.0], axis=1)))
    assert np.linalg.norm(X[tip] - [case.LENGTH, 0.0, 0.0]) < 1e-12
    F = np.array([0.3, -0.2, 0.1])                                              # N
    for dof, f in zip(("ux", "uy", "uz"), F):
        model.add_load(tip, dof, float(f))
    asm = fm.Assembly(model)
    u = fm.linear_static(asm).u[asm.dofs.translations()]                        # (n_nodes, 3)
    group = model.groups[0]
    scale = np.linalg.norm(F) * case.LENGTH
    for lo, hi in ((0.0, 0.125), (0.25, 0.375), (0.25, 0.625)):
        got = case.Slab.of(group, X, lo, hi).from_displacements(group, X, u[None])[0]
        want = statics(F, 0.5 * (lo + hi), case.LENGTH)
        assert np.abs(got - want).max() < 1e-9 * scale, f"slab ({lo}, {hi}): {got} against statics {want}"
    # a rigid translation and a rigid rotation about the axis: no section forces
    rigid = np.stack([np.broadcast_to([1e-3, 2e-3, -1e-3], X.shape), 1e-3 * np.c_[np.zeros(len(X)), -X[:, 2], X[:, 1]]])
    assert np.abs(case.Slab.of(group, X, 0.0, 0.125).from_displacements(group, X, rigid)).max() < 1e-12 * scale


def test_solid_slab_section_forces_of_nodal_stresses(case):
    """A nodal s_xx linear over the section, a + b z + c y (Pa), interpolated by the tet10 shape
    functions and integrated by the stiffness rule: exactly N = a A, M_y = b I_y, M_z = -c I_z."""
    model, _ = case.blade_model((4, 2, 1))
    X, group = model.coordinates, model.groups[0]
    a, b, c = 2.0e3, -5.0e4, 3.0e4
    s_xx = np.stack([a + b * X[:, 2] + c * X[:, 1], np.full(len(X), a)])        # (2, n_nodes) Pa
    got = case.Slab.of(group, X, 0.25, 0.5).from_nodes(group, s_xx)
    want = np.array([[a * case.AREA, b * case.I_FLAP, -c * case.I_LAG], [a * case.AREA, 0.0, 0.0]])
    assert np.abs(got - want).max() < 1e-12 * np.abs(want).max(), f"{got} against {want}"


def test_beam_slab_section_forces_are_those_of_statics(case):
    """The case's Beam3D blade (root on its joint, drive held) under an axial and then a small
    transverse tip force: the mean of the elements' N and mid-element moments in a slab, with the
    signs of ``beam_sections``, equal statics to 1e-6 (the transverse case's N, of second order in the
    rotations at the linear solution, is not compared)."""
    n = 8
    for F, compared in ((np.array([3.0, 0.0, 0.0]), [0, 1, 2]), (1e-5 * np.array([0.0, -2.0, 1.0]), [1, 2])):
        model, nodes = case.beam_model(n, "consistent", lambda t: 0.0)
        for dof, f in zip(("ux", "uy", "uz"), F):
            model.add_load(int(nodes[-1]), dof, float(f))
        asm = fm.Assembly(model)
        outputs = asm.element_outputs(fm.linear_static(asm).u)[0]
        scale = np.linalg.norm(F) * case.LENGTH
        for lo, hi in ((0.0, 0.125), (0.25, 0.5)):
            got = case.beam_sections(outputs, lo, hi, n)[compared]
            want = statics(F, 0.5 * (lo + hi), case.LENGTH)[compared]
            assert np.abs(got - want).max() < 1e-6 * scale, f"F = {F}, slab ({lo}, {hi}): {got} against {want}"


def test_root_spider_clamps_the_root_face(case):
    """The modal body's frame node, clamped in the basis, holds the whole root face through the stiff
    spider: its frequencies are those of the solid with every root-face node fixed (measured 3e-7)."""
    model, centre = case.blade_model((10, 1, 1))
    data = ModalBodyData.from_model(model, frame_node=centre, n_modes=4)
    fixed = fm.Model(dim=3)
    X = fixed.add_nodes(model.coordinates)
    fixed.add_solid(model.groups[0].connectivity, E=case.E, nu=case.NU, rho=case.RHO)
    for i in np.flatnonzero(model.coordinates[X, 0] < 1e-12):
        fixed.fix(int(i))
    clamped = fm.natural_modes(fixed, 4).omega
    assert np.abs(data.omega / clamped - 1.0).max() < 1e-5, f"{data.omega} against {clamped}"
