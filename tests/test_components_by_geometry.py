"""Cutting a model into components by geometry (box, half-space), by named node and element sets
and by groups: element counts, interface nodes, invariance under a rigid placement, CMS of the
pieces against the whole, and the errors that name the region."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.cms import components_from_groups, craig_bampton, free_interface, synthesize
from flexmb.cms.component import Box, ElementSet, HalfSpace, NodeSet, components_by_region
from flexmb.io.solid_mesh import box

E, NU, RHO = 200e9, 0.3, 7800.0
BIG = 1e3                                   # m, far beyond every mesh here


def solid_block(kind: str = "hex8", placement=None) -> tuple[fm.Model, np.ndarray]:
    """The brick [0, 4] x [0, 1] x [0, 1] m in 4 x 2 x 2 cells, clamped at x = 0; with
    ``placement = (R, c)`` its nodes are moved to R x + c."""
    x, cells = box(4.0, 1.0, 1.0, 4, 2, 2, kind)
    model = fm.Model(dim=3)
    model.add_nodes(x if placement is None else x @ placement[0].T + placement[1])
    model.add_solid(cells, E=E, nu=NU, rho=RHO, name="block")
    for i in np.flatnonzero(x[:, 0] < 1e-12):
        model.fix(int(i))
    return model, x


def test_box_cut_counts_and_interface_nodes():
    model, x = solid_block("hex8")
    parts = components_by_region(model, {"root": Box((-BIG, -BIG, -BIG), (2.0, BIG, BIG)),
                                         "tip": Box((2.0, -BIG, -BIG), (BIG, BIG, BIG))})
    assert [c.model.groups[0].n_elements for c in parts] == [8, 8]
    plane = np.flatnonzero(np.abs(x[:, 0] - 2.0) < 1e-12)                # 3 x 3 grid points at x = 2
    for c in parts:
        assert np.array_equal(c.interface_nodes, plane)
        assert c.model.groups[0].name == "block"
    assert parts[0].grounded.size == 27 and parts[1].grounded.size == 0   # 9 clamped nodes, 3 DOFs each
    # the pieces of the split group keep their elements' material: scattered back onto the parent's
    # DOFs, their K and M add up to the whole model's (free-free)
    whole = components_from_groups(model, {"all": ["block"]})[0]
    for matrix in ("K", "M"):
        summed = np.zeros((whole.n_dof, whole.n_dof))
        for c in parts:
            summed[np.ix_(c.global_dofs, c.global_dofs)] += getattr(c, matrix).toarray()
        order = np.argsort(whole.global_dofs)
        reference = getattr(whole, matrix).toarray()[np.ix_(order, order)]
        err = np.abs(summed - reference).max() / np.abs(reference).max()
        assert err < 1e-12, f"{matrix} of the pieces vs the whole: {err:.1e} (relative)"


@pytest.mark.parametrize("kind", ["tet4", "tet10"])
def test_half_space_cut_holds_centroids(kind):
    model, x = solid_block(kind)
    normal = np.array([1.0, 0.3, -0.2])
    point = np.array([1.7, 0.5, 0.5])
    parts = components_by_region(model, {"low": HalfSpace(tuple(point), tuple(-normal)),
                                         "high": HalfSpace(tuple(point), tuple(normal))})
    cells = model.groups[0].connectivity
    side = (x[cells].mean(axis=1) - point) @ normal
    assert not np.any(side == 0.0)
    assert [c.model.groups[0].n_elements for c in parts] == [int((side < 0).sum()), int((side > 0).sum())]
    shared = np.intersect1d(np.unique(cells[side < 0]), np.unique(cells[side > 0]))
    for c in parts:
        assert np.array_equal(c.interface_nodes, shared)


def test_named_sets_and_groups():
    model, x = solid_block("hex8")
    cells = model.groups[0].connectivity
    left_nodes = np.flatnonzero(x[:, 0] <= 1.0 + 1e-12)                  # a named node set: x <= 1
    middle = np.flatnonzero(np.abs(x[cells].mean(axis=1)[:, 0] - 1.5) < 0.1)
    parts = components_by_region(model, {"left": NodeSet(tuple(left_nodes)),
                                         "middle": ElementSet({"block": tuple(middle)}),
                                         "rest": Box((2.0, -BIG, -BIG), (BIG, BIG, BIG))})
    assert [c.model.groups[0].n_elements for c in parts] == [4, 4, 8]
    assert np.array_equal(parts[0].interface_nodes, np.flatnonzero(np.abs(x[:, 0] - 1.0) < 1e-12))
    assert np.array_equal(parts[1].interface_nodes, np.flatnonzero(np.isin(np.round(x[:, 0], 9), (1.0, 2.0))))
    # whole groups as regions give what components_from_groups gives
    by_groups = components_from_groups(model, {"all": ["block"]})[0]
    by_region = components_by_region(model, {"all": "block"})[0]
    assert (abs(by_region.K - by_groups.K)).max() == 0.0 and (abs(by_region.M - by_groups.M)).max() == 0.0


def beam_model(placement=None) -> fm.Model:
    """A 3D cantilever of 12 Beam3D elements along x (2 m), clamped at x = 0."""
    n = 12
    x = np.c_[np.linspace(0.0, 2.0, n + 1), np.zeros((n + 1, 2))]
    model = fm.Model(dim=3)
    model.add_nodes(x if placement is None else x @ placement[0].T + placement[1])
    A, I = 9e-4, 6.75e-8
    y_axis = (0.0, 1.0, 0.0) if placement is None else tuple(placement[0] @ [0.0, 1.0, 0.0])
    model.add_beam3d(np.c_[np.arange(n), np.arange(1, n + 1)], E * A, 8e10 * 2.25 * I, E * I, E * I,
                     rho_A=RHO * A, rho_I=(2 * RHO * I, RHO * I, RHO * I), mass="consistent", y_axis=y_axis,
                     name="beam")
    model.fix(0)
    return model


def test_beam_cut_by_boxes_matches_the_whole():
    model = beam_model()
    regions = {f"part {k}": Box((0.5 * k, -1.0, -1.0), (0.5 * (k + 1), 1.0, 1.0)) for k in range(4)}
    parts = components_by_region(model, regions)
    assert [c.model.groups[0].n_elements for c in parts] == [3, 3, 3, 3]
    assert [c.interface_nodes.tolist() for c in parts] == [[3], [3, 6], [6, 9], [9]]
    full = fm.natural_modes(model, 5).frequencies_hz
    for reduce in (lambda c: free_interface(c, n_elastic_modes=6), lambda c: craig_bampton(c, n_modes=6)):
        cms = synthesize([reduce(c) for c in parts]).modes(5).frequencies_hz
        err = np.abs(cms / full - 1).max()
        assert err < 1e-3, f"CMS of the box-cut beam {cms} Hz vs full {full} Hz: {err:.2e}"


def rotation(angle: float, axis) -> np.ndarray:
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    W = np.cross(np.eye(3), a)
    return np.eye(3) + np.sin(angle) * W + (1 - np.cos(angle)) * (W @ W)


def test_moved_copy_cut_by_moved_regions_gives_the_same_frequencies():
    R, c = rotation(0.9, (1.0, -2.0, 0.7)), np.array([1e4, -3e3, 2e3])
    values = []
    for placement in (None, (R, c)):
        model, _ = solid_block("hex8", placement)
        point, normal = np.array([2.0, 0.5, 0.5]), np.array([1.0, 0.0, 0.0])
        if placement is not None:
            point, normal = R @ point + c, R @ normal
        parts = components_by_region(model, {"root": HalfSpace(tuple(point), tuple(-normal)),
                                             "tip": HalfSpace(tuple(point), tuple(normal))})
        assert [p.model.groups[0].n_elements for p in parts] == [8, 8]
        for reduce in (lambda p: free_interface(p, n_elastic_modes=3), lambda p: craig_bampton(p, n_modes=6)):
            values.append(synthesize([reduce(p) for p in parts]).modes(4).frequencies_hz)
    for moved, placed in zip(values[2:], values[:2]):
        assert np.allclose(moved, placed, rtol=1e-7), f"{moved} vs {placed} Hz"


def test_errors_name_the_region():
    model, _ = solid_block("hex8")
    everything = Box((-BIG,) * 3, (BIG,) * 3)
    with pytest.raises(ModelError, match="component 'empty': its region .* holds no element"):
        components_by_region(model, {"all": everything, "empty": Box((10.0, 10.0, 10.0), (11.0, 11.0, 11.0))})
    with pytest.raises(ModelError, match="components 'all' and 'root' overlap: both hold element 0 of group "
                                         "'block'"):
        components_by_region(model, {"all": everything, "root": Box((-1.0,) * 3, (1.0, 2.0, 2.0))})
    with pytest.raises(ModelError, match="element 8 of group 'block' .* lies in no region \\(8 element"):
        components_by_region(model, {"root": Box((-1.0,) * 3, (2.0, 2.0, 2.0))})
    with pytest.raises(ModelError, match="Box.*: upper must be 3 finite numbers"):
        components_by_region(model, {"all": Box((0.0, 0.0, 0.0), (1.0, 1.0))})
    with pytest.raises(ModelError, match="HalfSpace.*: the normal must be non-zero"):
        components_by_region(model, {"all": HalfSpace((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))})
    with pytest.raises(ModelError, match="component 'set': elements of group 'block' are indices 0..15"):
        components_by_region(model, {"set": ElementSet({"block": (3, 16)})})
    with pytest.raises(ModelError, match="component 'set': unknown element group 'blok'"):
        components_by_region(model, {"set": ElementSet({"blok": (3,)})})
    with pytest.raises(ModelError, match="component 'nodes': a NodeSet holds node numbers"):
        components_by_region(model, {"nodes": NodeSet((0, 1, 10_000))})
    with pytest.raises(ModelError, match="component 'odd': a region is a Box"):
        components_by_region(model, {"odd": 3.0})
