"""Tests of linear buckling (:func:`flexmb.analysis.buckling.linear_buckling`) against Euler loads.

Columns of 8 elements, compressed by a unit end load, so that the critical load factor is the
critical load in N:

* clamped-free: P_cr = pi^2 EI / (4 L^2); pinned-pinned: P_cr = pi^2 EI / L^2;
* with shear deformation (Engesser): P_cr = P_E / (1 + P_E / GA_k).

Measured 2026-11-21 (8 elements, clamped-free, relative to the formula): Beam3D first-order
strains +0.32 % (the geometric stiffness comes from the chord rotation only), second-order
strains +2e-6 (their e3^2 ... terms are the consistent geometric stiffness), Beam2D +0.32 %.
Pinned-pinned with first-order strains is +1.29 % (a half wave over 8 elements), so that case
is checked with second-order strains only (+3e-5).
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb
from flexmb.analysis.buckling import linear_buckling

N = 8
EI_Y, EI_Z, GA_K = 10.0, 25.0, 1e4          # N m^2, N m^2, N: the weak axis is y
AXIS = np.array([0.48, -0.6, 0.64])          # unit vector, deliberately not a coordinate axis
Y_HINT = np.array([0.3, 0.9, 0.2])


def _column3d(L: float = 2.0, second_order: bool = True, shear: bool = False, load: float = -1.0,
              support: str = "clamped-free"):
    """Beam3D column of N elements with an axial end load (N, negative = compression).

    clamped-free: along AXIS, clamped at node 0. pinned-pinned: along global z (so that the
    torsional rigid rotation can be fixed by one global DOF), node 0 held in x, y, z and about
    z, node N held in x and y. Returns (model, nodes, section frame E (3, 3)).
    """
    model = flexmb.Model(dim=3)
    axis = AXIS if support == "clamped-free" else np.array([0.0, 0.0, 1.0])
    y_hint = Y_HINT if support == "clamped-free" else np.array([0.6, 0.8, 0.0])
    nodes = model.add_nodes(np.linspace(0.0, L, N + 1)[:, None] * axis[None, :])
    group = model.add_beam3d(np.stack([nodes[:-1], nodes[1:]], axis=1), EA=1e6, GJ=8.0, EI_y=EI_Y, EI_z=EI_Z,
                             GA_ky=GA_K if shear else np.inf, GA_kz=GA_K if shear else np.inf,
                             y_axis=y_hint, second_order=second_order)
    top = int(nodes[-1])
    if support == "clamped-free":
        model.fix(int(nodes[0]))
    else:
        model.fix(int(nodes[0]), ["ux", "uy", "uz", "rz"])
        model.fix(top, ["ux", "uy"])
    for name, value in zip(("ux", "uy", "uz"), load * axis):
        model.add_load(top, name, value)
    E = group.section_frames(model.coordinates[group.connectivity])[0]
    return model, nodes, E


def _column2d(L: float = 2.0, EI: float = 10.0, load: float = -1.0, angle: float = 0.6):
    """Beam2D cantilever column of N elements along ``angle``, clamped at node 0, end load along it."""
    model = flexmb.Model(dim=2)
    d = np.array([np.cos(angle), np.sin(angle)])
    nodes = model.add_nodes(np.linspace(0.0, L, N + 1)[:, None] * d[None, :])
    model.add_beam2d(np.stack([nodes[:-1], nodes[1:]], axis=1), EA=1e6, EI=EI)
    model.fix(int(nodes[0]))
    model.add_load(int(nodes[-1]), "ux", load * d[0])
    model.add_load(int(nodes[-1]), "uy", load * d[1])
    return model, nodes, d


def _euler(EI: float, L: float, support: str, GA: float = np.inf) -> float:
    P = np.pi**2 * EI / ((2.0 * L) ** 2 if support == "clamped-free" else L**2)
    return P / (1.0 + P / GA)


def _miss(got: float, expected: float) -> float:
    return got / expected - 1.0


# ----------------------------------------------------------------------------- Beam3D
@pytest.mark.parametrize("second_order", [False, True])
@pytest.mark.parametrize("shear", [False, True])
def test_clamped_free_beam3d_column_buckles_about_its_weak_axis(second_order, shear):
    L = 2.0
    model, nodes, E = _column3d(L, second_order, shear)
    result = linear_buckling(model)
    asm = flexmb.Assembly(model)
    GA = GA_K if shear else np.inf
    weak, strong = _euler(EI_Y, L, "clamped-free", GA), _euler(EI_Z, L, "clamped-free", GA)
    miss = _miss(result.critical, weak)
    assert abs(miss) < 5e-3, (f"second_order={second_order}, shear={shear}: P_cr {result.critical:.6g} N vs "
                              f"{weak:.6g} N ({miss:+.3%})")
    # the next one is the first buckling mode about the strong axis
    miss2 = _miss(result.load_factors[1], strong)
    assert abs(miss2) < 5e-3, \
        f"second load factor {result.load_factors[1]:.6g} vs strong-axis {strong:.6g} ({miss2:+.3%})"
    # bending about e_y: the axis deflects along e_z, the sections turn about e_y, nothing else
    mode = result.modes[0]
    d = mode[asm.dofs.translations()] @ E                              # (n_nodes, 3) in the section frame
    r = mode[asm.rotation_dofs] @ E
    out = max(np.abs(d[:, :2]).max() / np.abs(d[:, 2]).max(), np.abs(r[:, [0, 2]]).max() / np.abs(r[:, 1]).max())
    assert out < 1e-6, f"buckling mode leaves the weak bending plane: out-of-plane part {out:.2e} of the in-plane one"
    tip = d[-1, 2] / np.abs(d[:, 2]).max()
    assert abs(abs(tip) - 1.0) < 1e-12, \
        f"clamped-free mode is largest at the free end, got {abs(tip):.6f} of its maximum"


def test_pinned_pinned_beam3d_column():
    L = 3.0
    model, _, _ = _column3d(L, support="pinned-pinned")
    result = linear_buckling(model)
    for k, EI in enumerate((EI_Y, EI_Z)):
        expected = _euler(EI, L, "pinned-pinned")
        miss = _miss(result.load_factors[k], expected)
        assert abs(miss) < 5e-3, \
            f"pinned-pinned mode {k}: {result.load_factors[k]:.6g} N vs {expected:.6g} N ({miss:+.3%})"


def test_sparse_eigensolver_agrees_with_dense():
    model, _, _ = _column3d()
    dense = linear_buckling(model, n_modes=3)
    sparse = linear_buckling(model, n_modes=3, dense_limit=0)         # ARPACK shift-invert path
    k = min(dense.load_factors.size, sparse.load_factors.size)
    assert k == 3, f"expected 3 load factors from both solvers, got {dense.load_factors} and {sparse.load_factors}"
    err = np.abs(sparse.load_factors / dense.load_factors - 1.0).max()
    assert err < 1e-9, f"ARPACK load factors {sparse.load_factors} differ from dense {dense.load_factors} by {err:.2e}"


# ------------------------------------------------------------------------- 2D models
def test_clamped_free_beam2d_column():
    L, EI = 2.0, 10.0
    model, nodes, d = _column2d(L, EI)
    result = linear_buckling(model)
    expected = _euler(EI, L, "clamped-free")
    miss = _miss(result.critical, expected)
    assert abs(miss) < 5e-3, f"Beam2D column: P_cr {result.critical:.6g} N vs {expected:.6g} N ({miss:+.3%})"
    asm = flexmb.Assembly(model)
    shape = result.modes[0][asm.dofs.translations()]                  # (n_nodes, 2)
    axial = np.abs(shape @ d).max() / np.abs(shape @ [-d[1], d[0]]).max()
    assert axial < 1e-6, f"Beam2D buckling mode has an axial part {axial:.2e} of its lateral one"


@pytest.mark.parametrize("angle", [0.0, 0.7])
def test_truss_strut_with_lateral_spring(angle):
    """A pinned strut of length L held at its top by a horizontal bar of stiffness k = EA_s / L_s
    buckles at P_cr = k L exactly (the bar's geometric stiffness N / L is exact)."""
    L, L_s, EA_s = 2.0, 1.5, 300.0
    c, s = np.cos(angle), np.sin(angle)
    R = np.array([[c, -s], [s, c]])
    model = flexmb.Model(dim=2)
    base, top, anchor = model.add_nodes(np.array([[0.0, 0.0], [0.0, L], [L_s, L]]) @ R.T)
    model.add_truss([[base, top], [top, anchor]], EA=[1e5, EA_s])
    model.fix(int(base))
    model.fix(int(anchor))
    load = R @ [0.0, -1.0]
    model.add_load(int(top), "ux", load[0])
    model.add_load(int(top), "uy", load[1])
    result = linear_buckling(model)
    expected = EA_s / L_s * L
    miss = _miss(result.critical, expected)
    assert abs(miss) < 1e-9, \
        f"strut at {angle} rad: P_cr {result.critical:.10g} N vs k L = {expected:.10g} N ({miss:+.2e})"
    asm = flexmb.Assembly(model)
    mode = result.modes[0][asm.dofs.translations()[top]]
    along = abs(mode @ (R @ [0.0, 1.0])) / np.linalg.norm(mode)
    assert along < 1e-9, f"strut mode moves the top along the strut ({along:.2e} of its norm)"


# ------------------------------------------------------------------------ pre-loaded
@pytest.mark.parametrize("kind", ["beam3d", "beam2d"])
def test_pre_loaded_column_has_the_same_critical_load(kind):
    """Before buckling the column is only shortened, which changes P_cr by about N / EA (~1e-6);
    measured relative changes 5e-7 at lam_p = 0.5 and 5.5e-6 at lam_p = 0.9 P_cr (Beam3D)."""
    model = _column3d()[0] if kind == "beam3d" else _column2d()[0]
    reference = linear_buckling(model)
    for lam_p in (0.5, 0.9 * reference.critical):
        u_pre = flexmb.load_control(model, [lam_p]).u[-1]
        pre = linear_buckling(model, u_pre=u_pre, load_factor=lam_p)
        miss = _miss(pre.critical, reference.critical)
        assert abs(miss) < 1e-4, (f"{kind}: P_cr from the state pre-loaded to {lam_p:.4g} is {pre.critical:.8g}, "
                                  f"from the reference state {reference.critical:.8g} ({miss:+.2e})")
        assert pre.load_factor == lam_p
        np.testing.assert_array_equal(pre.u_pre, u_pre)


@pytest.mark.parametrize("kind", ["beam3d", "beam2d"])
def test_column_in_tension_does_not_buckle(kind):
    model = _column3d(load=1.0)[0] if kind == "beam3d" else _column2d(load=1.0)[0]
    result = linear_buckling(model)
    assert result.critical == np.inf, f"{kind} column in tension reports critical load factors {result.load_factors}"
    assert result.load_factors.size == 0 and result.modes.shape[0] == 0


# ---------------------------------------------------------------------------- errors
def test_model_without_loads_is_refused():
    model, _, _ = _column3d(load=0.0)
    with pytest.raises(flexmb.ModelError, match="no load on its free DOFs"):
        linear_buckling(model)


def test_load_on_supported_dofs_only_is_refused():
    model, nodes, _ = _column3d(load=0.0)
    model.add_load(int(nodes[0]), "uz", -1.0)                          # the clamped node
    with pytest.raises(flexmb.ModelError, match="no load on its free DOFs"), \
            pytest.warns(flexmb.FlexmbWarning, match="node 0 uz acts on a fixed DOF"):
        linear_buckling(model)


def test_wrong_pre_load_state_shape_is_refused():
    model, _, _ = _column3d()
    with pytest.raises(flexmb.ModelError, match=r"u_pre must have shape"):
        linear_buckling(model, u_pre=np.zeros(5), load_factor=0.5)


def _unsupported(model: flexmb.Model) -> flexmb.Model:
    model.clamped.clear()
    model.prescribed.clear()
    return model


def test_unsupported_axis_aligned_column_is_refused():
    """Along a coordinate axis the rigid modes give an exactly zero pivot."""
    model = _unsupported(_column3d(support="pinned-pinned")[0])
    with pytest.raises(flexmb.ModelError, match="singular"):
        linear_buckling(model)


@pytest.mark.parametrize("kind", ["beam3d", "beam2d"])
def test_unsupported_inclined_column_is_refused(kind):
    model = _unsupported(_column3d()[0] if kind == "beam3d" else _column2d(angle=1.1)[0])
    with pytest.raises(flexmb.ModelError, match="singular"):
        linear_buckling(model)
