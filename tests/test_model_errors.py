"""Invalid input raises :class:`flexmb.ModelError` with a message that names the offending item."""
from __future__ import annotations

import re

import numpy as np
import pytest

import flexmb as fm


def chain_model() -> fm.Model:
    """Three nodes on a line joined by two bars (nodes 0, 1, 2; no rotational DOFs)."""
    m = fm.Model(dim=2)
    m.add_nodes([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    m.add_truss([[0, 1], [1, 2]], EA=1e3, rho_A=1.0)
    m.fix(0)
    return m


def raises_naming(*items: str):
    """pytest.raises(ModelError) whose message contains every item, in this order."""
    return pytest.raises(fm.ModelError, match=".*".join(re.escape(i) for i in items))


# ------------------------------------------------------------- DOF names
@pytest.mark.parametrize("call, name", [
    (lambda m: m.add_load(1, "uz", 1.0), "uz"),
    (lambda m: m.prescribe(1, "phi", 0.1), "phi"),
    (lambda m: m.fix(1, ["ux", "UY"]), "UY"),
    (lambda m: m.fix(1, "rx"), "rx"),
])
def test_unknown_dof_name_is_named(call, name):
    with raises_naming("node 1", repr(name)) as info:
        call(chain_model())
    assert "ux, uy, rz" in str(info.value), f"message does not list the valid names: {info.value}"


def test_load_on_rotation_of_node_without_rotations():
    m = chain_model()
    m.add_load(2, "rz", 5.0)                      # a valid 2D name, but node 2 only has bars
    with raises_naming("node 2", "'rz'"):
        fm.Assembly(m)


def test_prescribed_rotation_of_truss_node():
    m = chain_model()
    m.prescribe(1, "rz", 0.1)
    with raises_naming("node 1", "'rz'"):
        fm.Assembly(m)


# --------------------------------------------------------------- node indices
@pytest.mark.parametrize("call, what, node", [
    (lambda m: m.fix(7), "fix", "node 7"),
    (lambda m: m.fix(3, "ux"), "fix", "node 3"),
    (lambda m: m.add_load(5, "ux", 1.0), "add_load", "node 5"),
    (lambda m: m.add_load(-1, "uy", 1.0), "add_load", "node -1"),
    (lambda m: m.prescribe(9, "ux", 0.0), "prescribe", "node 9"),
    (lambda m: m.add_point_mass(4, 1.0), "add_point_mass", "node 4"),
])
def test_nonexistent_node_is_named(call, what, node):
    with raises_naming(what, node, "does not exist", "3 nodes"):
        call(chain_model())


def test_element_on_nonexistent_node_is_named():
    with raises_naming("element 1", "'truss'", "[1, 8]"):
        chain_model().add_truss([[0, 2], [1, 8]], EA=1.0)


def test_unconnected_node_is_named_when_building_assembly():
    m = chain_model()
    m.add_node([5.0, 5.0])                        # node 3, no element, no point mass
    with raises_naming("node 3", "not connected"):
        fm.Assembly(m)


def test_node_with_only_a_point_mass_is_accepted():
    m = chain_model()
    n = m.add_node([5.0, 5.0])
    m.add_point_mass(n, 1.0)
    assert fm.Assembly(m).n_dof == 8


# ----------------------------------------------------------------- integrate
def test_wrong_u0_shape_is_reported_with_expected_shape():
    asm = fm.Assembly(chain_model())
    with raises_naming("u0", f"({asm.n_dof},)", "(5,)"):
        fm.integrate(asm, 0.1, 1.0, u0=np.zeros(5))


def test_wrong_v0_shape_is_reported():
    asm = fm.Assembly(chain_model())
    with raises_naming("v0", f"({asm.n_dof},)", "(3, 2)"):
        fm.integrate(asm, 0.1, 1.0, v0=np.zeros((3, 2)))


@pytest.mark.parametrize("dt, t_end", [(0.3, 1.0), (0.1, 0.25)])
def test_t_end_not_a_whole_number_of_steps(dt, t_end):
    with raises_naming(f"{t_end}", "not a whole number of steps", f"dt = {dt}"):
        fm.integrate(chain_model(), dt, t_end)


def test_t_end_a_whole_number_of_steps_despite_round_off():
    h = fm.integrate(chain_model(), 0.1, 0.3)     # 0.3 / 0.1 = 2.9999999999999996
    assert len(h.t) == 4 and abs(h.t[-1] - 0.3) < 1e-15, f"output times {h.t}"


@pytest.mark.parametrize("dt, t_end, items", [(0.0, 1.0, ("dt", "> 0", "got 0")),
                                               (-0.1, 1.0, ("dt", "> 0", "got -0.1")),
                                               (0.1, 0.0, ("t_end", "> t0 = 0 s", "got 0 s"))])
def test_non_positive_step_or_span(dt, t_end, items):
    with raises_naming(*items):
        fm.integrate(chain_model(), dt, t_end)


@pytest.mark.parametrize("scheme", ["rk4", "midpoint", "Newmark"])
def test_unknown_scheme_is_named_with_the_choices(scheme):
    with raises_naming(repr(scheme), "mid-point", "newmark"):
        fm.integrate(chain_model(), 0.1, 1.0, scheme=scheme)


# --------------------------------------------------------------- other input
def test_gravity_with_wrong_dimension():
    with raises_naming("2 components", "[0.0, -9.81, 0.0]"):
        chain_model().set_gravity([0.0, -9.81, 0.0])


def test_node_with_wrong_number_of_coordinates():
    with raises_naming("node 0", "2 coordinates", "(3,)"):
        fm.Model(dim=2).add_node([0.0, 1.0, 2.0])
    with raises_naming("node positions", "(n, 2)", "(4, 3)"):
        fm.Model(dim=2).add_nodes(np.zeros((4, 3)))


def test_beam_in_3d_model():
    m = fm.Model(dim=3)
    m.add_nodes([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    with raises_naming("add_beam2d", "2D", "3D"):
        m.add_beam2d([[0, 1]], EA=1.0, EI=1.0)


def test_fix_all_before_the_beam_exists_clamps_the_rotation():
    m = fm.Model(dim=2)
    m.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    m.fix(0)                                      # before the beam: node 0 has no rotation yet
    m.add_beam2d([[0, 1]], EA=1e3, EI=1.0)
    dofs = fm.Assembly(m).dofs
    assert dofs.index(0, "rz") in dofs.prescribed, "fix(node) did not clamp the rotation added later"
