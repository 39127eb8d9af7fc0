"""The package namespaces import their names on first use (flexmb.lazy_exports, PEP 562)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_flexmb_imports_no_other_flexmb_module_nor_numpy():
    loaded = _run("import sys, flexmb; print(sorted(m for m in sys.modules if m.startswith(('flexmb', 'numpy'))))")
    assert loaded == "['flexmb', 'flexmb.lazy_exports']"


@pytest.mark.parametrize("package", ["flexmb", "flexmb.analysis", "flexmb.cms"])
def test_every_public_name_resolves_to_what_its_module_defines(package):
    import importlib

    namespace = importlib.import_module(package)
    assert namespace.__all__ == sorted(set(namespace.__all__))
    for name in namespace.__all__:
        value = getattr(namespace, name)
        assert name in dir(namespace)
        assert not isinstance(value, type(sys)), f"{package}.{name} is a module, not the name it provides"
        assert getattr(sys.modules[value.__module__], name) is value


def test_unknown_name_is_an_attribute_error_naming_it():
    import flexmb

    with pytest.raises(AttributeError, match="module 'flexmb' has no attribute 'Beam4D'"):
        flexmb.Beam4D
    with pytest.raises(ImportError, match="Beam4D"):
        exec("from flexmb import Beam4D", {})


def test_submodules_are_attributes_without_an_import():
    assert _run("import flexmb; print(flexmb.results.ResultFileError.__name__, flexmb.io.__name__)") \
        == "ResultFileError flexmb.io"


def test_arc_length_names_the_function_even_after_its_module_is_imported_first():
    assert _run("import flexmb.analysis.arc_length, flexmb; print(callable(flexmb.analysis.arc_length), "
                "flexmb.arc_length is flexmb.analysis.arc_length)") == "True True"


def test_planar_dynamics_loads_neither_eigen_nor_component_mode_modules():
    code = f"""
import sys
sys.path.insert(0, {str(REPO / "tests")!r})
import flexmb as fm
from models import pendulum_chain
fm.integrate(pendulum_chain(2), 1e-2, 5e-2, progress=False)
print(sorted(m for m in ('flexmb.analysis.linearized', 'flexmb.analysis.modes', 'flexmb.analysis.buckling',
                         'flexmb.cms.synthesis', 'flexmb.cms.modification', 'flexmb.multibody.taylor_reactions',
                         'flexmb.integrators.partitioned') if m in sys.modules))
"""
    assert _run(code) == "[]"
