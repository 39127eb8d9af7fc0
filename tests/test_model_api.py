"""The modelling API is discoverable: explicit keyword parameters, each documented, and the
class docstring lists the whole vocabulary."""
import inspect
import re

import numpy as np
import pytest

import flexmb as fm

#: the modelling methods that are not add_*
OTHER_VOCABULARY = ("fix", "prescribe", "attach", "set_gravity")


def modelling_methods():
    return sorted(name for name, member in inspect.getmembers(fm.Model, inspect.isfunction)
                  if name.startswith("add_") or name in OTHER_VOCABULARY)


@pytest.mark.parametrize("name", modelling_methods())
def test_every_modelling_method_has_explicit_documented_parameters(name):
    method = getattr(fm.Model, name)
    signature = inspect.signature(method)
    hidden = [p.name for p in signature.parameters.values() if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    assert not hidden, f"Model.{name} hides parameters behind {hidden}"
    doc = inspect.getdoc(method) or ""
    missing = [p for p in signature.parameters if p != "self" and not re.search(rf"\b{re.escape(p)}\b", doc)]
    assert not missing, f"Model.{name}'s docstring does not mention {missing}"


def test_class_docstring_lists_the_whole_vocabulary():
    doc = inspect.getdoc(fm.Model)
    missing = [name for name in modelling_methods() if f":meth:`{name}`" not in doc]
    assert not missing, f"help(fm.Model) does not list {missing}"


def test_add_beam3d_keywords_are_explicit_and_unknown_ones_named():
    m = fm.Model(dim=3)
    m.add_nodes([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    g = m.add_beam3d([[0, 1]], EA=1.0, GJ=2.0, EI_y=3.0, EI_z=4.0, GA_ky=5.0, rho_A=6.0, rho_I=[1.0, 2.0, 3.0],
                     y_axis=[0.0, 0.0, 1.0], second_order=False, mass="consistent", name="frame")
    assert (g.GA_ky[0], g.GA_kz[0], g.rho_A[0], g.second_order, g.mass, g.name) == (5.0, np.inf, 6.0, False,
                                                                                     "consistent", "frame")
    assert np.array_equal(g.rho_I, [[1.0, 2.0, 3.0]]) and np.array_equal(g.y_axis, [[0.0, 0.0, 1.0]])
    with pytest.raises(fm.ModelError, match="add_beam3d.*'GA_y'.*GA_ky"):
        m.add_beam3d([[0, 1]], EA=1.0, GJ=2.0, EI_y=3.0, EI_z=4.0, GA_y=1.0)
