"""``flexmb compile`` and the first-run notice (issue 31), in fresh processes whose numba cache
(``NUMBA_CACHE_DIR``) starts as an empty temporary folder, as after installing flexmb.

Compiling every kernel set takes minutes, so the command is run on the truss set only; the notice
is checked on a one-step truss run (a few kernels to compile).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from flexmb.compiled import FIRST_RUN_MESSAGE

#: a short 2D truss run: the kernels of a truss, the assembly and Newton
TRUSS_RUN = """
import numpy as np
import flexmb as fm
model = fm.Model(dim=2)
nodes = model.add_nodes(np.array([[0.0, 0.0], [1.0, 0.5], [2.0, 0.0]]))
model.add_truss([[nodes[0], nodes[1]], [nodes[1], nodes[2]]], EA=1e5, rho_A=1.0)
model.fix(int(nodes[0])); model.fix(int(nodes[2]))
model.set_gravity([0.0, -9.81])
fm.integrate(model, 1e-3, 1e-3, progress=False)
print("ran")
"""


def _run(args: list[str], cache: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    env.pop("NUMBA_DISABLE_JIT", None)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=600)


def _set_line(stdout: str, name: str) -> tuple[int, int]:
    """(compiled, loaded) from the command's line of kernel set ``name``."""
    found = re.search(rf"^{name}\s+(\d+) kernels compiled,\s+(\d+) loaded from the cache", stdout, re.M)
    assert found, f"no line for the {name} set in:\n{stdout}"
    return int(found[1]), int(found[2])


@pytest.fixture(scope="module")
def filled_cache(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """A numba cache filled by ``flexmb compile --only truss`` from empty, and that run."""
    cache = tmp_path_factory.mktemp("numba_cache")
    return cache, _run(["-m", "flexmb.cli", "compile", "--only", "truss"], cache)


def test_compile_fills_the_cache_and_a_second_call_finds_it(filled_cache):
    cache, first = filled_cache
    assert first.returncode == 0, first.stderr
    compiled, _ = _set_line(first.stdout, "truss")
    assert compiled > 0, first.stdout
    assert str(cache) in first.stdout, "the command says where numba's cache is"
    assert any(cache.rglob("*.nbi")), "numba's index files are in NUMBA_CACHE_DIR"
    assert FIRST_RUN_MESSAGE not in first.stderr, "the command reports the compilation itself"
    second = _run(["-m", "flexmb.cli", "compile", "--only", "truss"], cache)
    assert second.returncode == 0, second.stderr
    again, loaded = _set_line(second.stdout, "truss")
    assert again == 0 and loaded > 0, second.stdout
    assert "everything was cached already" in second.stdout


def test_unknown_kernel_set_is_a_usage_error(tmp_path):
    done = _run(["-m", "flexmb.cli", "compile", "--only", "beam4d"], tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().startswith("flexmb compile: --only beam4d: unknown kernel set")


def test_first_run_notice_once_when_compiling_none_when_cached(filled_cache, tmp_path):
    cache, _ = filled_cache
    cold = _run(["-c", TRUSS_RUN], tmp_path / "empty")
    assert cold.returncode == 0 and cold.stdout.strip() == "ran", cold.stderr
    assert cold.stderr.count(FIRST_RUN_MESSAGE) == 1, cold.stderr
    cached = _run(["-c", TRUSS_RUN], cache)
    assert cached.returncode == 0 and cached.stdout.strip() == "ran", cached.stderr
    assert FIRST_RUN_MESSAGE not in cached.stderr, cached.stderr


def test_a_changed_source_drops_the_kernel_cache(tmp_path):
    """numba keys a cached kernel on its own file: a kernel calling a function of another module
    kept that function's old machine code when only the other module changed (a development
    tree, an editable install after ``git pull``). The package's fingerprint of all its sources
    drops the cache then, and only then."""
    from flexmb.compiled import FINGERPRINT_FILE, drop_stale_cache

    sources, cache = tmp_path / "sources", tmp_path / "cache"
    sources.mkdir()
    cache.mkdir()
    (sources / "caller.py").write_text("def f(): return g()\n")
    (sources / "callee.py").write_text("def g(): return 1\n")

    def cached_kernels() -> set[str]:
        for name in ("caller.f-1.py311.nbi", "caller.f-1.py311.1.nbc"):
            (cache / name).touch()
        return {p.name for p in cache.iterdir()}

    assert drop_stale_cache(sources, cache), "a cache without a fingerprint was kept"
    before = cached_kernels()
    assert not drop_stale_cache(sources, cache) and {p.name for p in cache.iterdir()} == before
    (sources / "callee.py").write_text("def g(): return 2\n")            # only the other module
    assert drop_stale_cache(sources, cache)
    assert {p.name for p in cache.iterdir()} == {FINGERPRINT_FILE}
    assert not drop_stale_cache(sources, cache)
