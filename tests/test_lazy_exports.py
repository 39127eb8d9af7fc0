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


#: the issue's two small runs (issue 31), whole: Simo's spin-up (2 cubic-mass Beam2D, composed mid-point,
#: dt = 0.25 s to 20 s) and slider-crank A (2 elements, mid-point, 120 steps per 8 rad, 2.5 rad); both are
#: solved densely (compiled LU). Prints the scipy modules loaded after ``import flexmb`` and after the runs,
#: and each run's checked quantity
SMALL_DENSE_RUNS = f"""
import sys
sys.path.insert(0, {str(REPO / "validation")!r})
SPARSE = ("scipy.sparse", "scipy.sparse.linalg", "scipy.sparse.csgraph")
import numpy as np
import flexmb as fm
print([m for m in SPARSE if m in sys.modules])
from flexmb.validation.spin_up import T_END, build, extreme, tip_deflection
from flexmb.validation.slider_crank import CRANK_TURN, build as build_crank, first_maximum, midspan_deflection
from slider_crank_a import PARAMETERS as crank
from spin_up_simo import PARAMETERS as beam

asm, nodes = build(beam, 2, "cubic")
h = fm.integrate(asm, 0.25, T_END, scheme="composed-mid-point", progress=False, max_cutbacks=0)
t = np.asarray(h.t)
spin_up = extreme(t, tip_deflection(beam, t, h.positions()[:, nodes[-1]]))[1]
asm, v0, _ = build_crank(2, crank.omega, crank.slider_mass, "cubic")
dt = crank.t_end / 120
h = fm.integrate(asm, dt, round(120 * 2.5 / CRANK_TURN) * dt, v0=v0, progress=False, max_cutbacks=0)
slider_crank = first_maximum(crank.omega * np.asarray(h.t), midspan_deflection(h.positions()))[1]
print([m for m in SPARSE if m in sys.modules])
print(spin_up, slider_crank)
"""


def test_small_dense_runs_import_no_sparse_linear_algebra():
    """``import flexmb`` imports no scipy; the issue's two small runs, solved densely, never load
    scipy.sparse.linalg nor scipy.sparse.csgraph (start-up: 0.02-0.05 s of a 0.8 s process), and give
    the extremes the time-to-accuracy benchmarks found for these configurations."""
    after_import, after_runs, values = _run(SMALL_DENSE_RUNS).splitlines()[-3:]
    assert after_import == "[]"
    assert after_runs == "['scipy.sparse']", f"a small dense run imported {after_runs}"
    spin_up, slider_crank = map(float, values.split())
    # within 1 % of the converged values -0.57384 m and 0.009762 (benchmarks/time_to_accuracy_*.py)
    assert abs(spin_up / -0.57384 - 1) < 1e-2, f"spin-up extreme {spin_up} m misses -0.57384 m by more than 1 %"
    assert abs(slider_crank / 0.009762 - 1) < 1e-2, \
        f"slider-crank first maximum {slider_crank} misses 0.009762 by more than 1 %"
