"""The ahead-of-time compiled kernels (:mod:`flexmb.aot`, issue 31): a process that finds the
extension module made from the package's sources serves the kernels from it, imports no numba and
gets the jitted kernels' numbers bit for bit; a call with argument types the module lacks goes to
numba, transparently; a module of other sources is ignored; without a C compiler nothing is built
and the kernels run with numba, with one line saying why.

The module built here is small (the kernels a short truss run calls, and two of
:mod:`flexmb.compiled.sparse_ops`), once for the file (about 10 s), in a temporary
``NUMBA_CACHE_DIR``; ``flexmb compile`` builds the full one (tests/test_compile_command.py runs it on
the truss set).
"""
from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import flexmb.compiled
from flexmb import aot

PACKAGE = Path(flexmb.compiled.__file__).parent

#: a short 2D truss run (a V of two bars falling under gravity, two steps)
TRUSS = """
import sys
import numpy as np
import flexmb as fm
model = fm.Model(dim=2)
nodes = model.add_nodes(np.array([[0.0, 0.0], [1.0, 0.5], [2.0, 0.0]]))
model.add_truss([[nodes[0], nodes[1]], [nodes[1], nodes[2]]], EA=1e5, rho_A=1.0)
model.fix(int(nodes[0])); model.fix(int(nodes[2]))
model.set_gravity([0.0, -9.81])
h = fm.integrate(model, 1e-3, 2e-3, progress=False)
"""
#: the run in a process of its own: saves its positions to the .npy file argv[1], prints whether
#: numba was imported
TRUSS_RUN = TRUSS + """
np.save(sys.argv[1], h.positions())
print("numba" in sys.modules)
"""

#: calls of sparse_ops.dot and free_norm with the types the module has (the first two and the last)
#: and with types it lacks (float32, a non-contiguous view); saves the five results to argv[1],
#: prints whether numba was imported after the first two calls and after all
KERNEL_CALLS = """
import sys
import numpy as np
from flexmb.compiled.sparse_ops import dot, free_norm
x = np.linspace(-1.0, 2.0, 7) ** 3
free = np.array([0, 2, 3, 6])
first = [dot(x, x[::-1].copy()), free_norm(x, free)]
import pickle
assert pickle.loads(pickle.dumps(dot)) is dot, "a kernel pickles by name (study workers)"
before = "numba" in sys.modules
other = [dot(x.astype(np.float32), x.astype(np.float32)), dot(x[:6:2], x[1::2].copy())]
again = dot(x, x[::-1].copy())
np.save(sys.argv[1], np.array(first + other + [again]))
print(before, "numba" in sys.modules)
"""


def _kernel_calls_jit() -> np.ndarray:
    """:data:`KERNEL_CALLS`'s five results in this process (numba's dispatchers)."""
    aot.use_jit()
    from flexmb.compiled.sparse_ops import dot, free_norm

    x = np.linspace(-1.0, 2.0, 7) ** 3
    return np.array([dot(x, x[::-1].copy()), free_norm(x, np.array([0, 2, 3, 6])),
                     dot(x.astype(np.float32), x.astype(np.float32)), dot(x[:6:2], x[1::2].copy()),
                     dot(x, x[::-1].copy())])


def _run(code: str, cache: Path, out: Path, **env: str) -> list[str]:
    """Run ``code`` in a fresh process whose numba cache is ``cache``; its printed words."""
    environment = dict(os.environ, NUMBA_CACHE_DIR=str(cache), **{aot.SWITCH: "1"})
    environment.pop("NUMBA_DISABLE_JIT", None)
    environment.update(env)
    done = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True,
                          env=environment, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


#: builds the module in a process of its own (its dispatchers hold only the types of this run's calls
#: from Python): argv[1] the folder to write it in
BUILD = TRUSS + """
from pathlib import Path
import flexmb.compiled
from flexmb import aot
from flexmb.compiled.sparse_ops import dot, free_norm
from flexmb.warm_up import _dispatchers
x = np.ones(3)
dot(x, x), free_norm(x, np.array([0, 2]))
fingerprint = flexmb.compiled.sources_fingerprint(Path(flexmb.compiled.__file__).parent)
print(aot.build_and_say([d for d in _dispatchers() if d.signatures], Path(sys.argv[1]), fingerprint, ["test"])[1])
"""


@pytest.fixture(scope="module")
def aot_cache(tmp_path_factory) -> Path:
    """A numba cache folder holding the module for these sources, and their fingerprint (so that a
    process that falls back to numba keeps the module)."""
    cache = tmp_path_factory.mktemp("aot_cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NUMBA_CACHE_DIR", str(cache))
        folder = aot.candidate_folders(PACKAGE)[0]
    folder.mkdir(parents=True)
    (folder / flexmb.compiled.FINGERPRINT_FILE).write_text(flexmb.compiled.sources_fingerprint(PACKAGE))
    done = subprocess.run([sys.executable, "-c", BUILD, str(folder)], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, **{aot.SWITCH: "0"}))    # this session's numba cache
    assert done.returncode == 0 and "functions compiled" in done.stdout, done.stdout + done.stderr
    return cache


def test_a_small_run_with_the_module_imports_no_numba_and_matches_the_jit_bit_for_bit(aot_cache, tmp_path):
    assert _run(TRUSS_RUN, aot_cache, tmp_path / "aot.npy") == ["False"], "the run imported numba"
    assert _run(TRUSS_RUN, aot_cache, tmp_path / "jit.npy", **{aot.SWITCH: "0"}) == ["True"]
    served, jitted = np.load(tmp_path / "aot.npy"), np.load(tmp_path / "jit.npy")
    assert served.shape == jitted.shape == (3, 3, 2)
    assert np.abs(jitted[-1] - jitted[0]).max() > 1e-6, "the truss did not move: nothing compared"
    assert np.array_equal(served, jitted), f"max difference {np.abs(served - jitted).max():.3g} m"


def test_other_argument_types_go_to_numba_with_the_same_numbers(aot_cache, tmp_path):
    words = _run(KERNEL_CALLS, aot_cache, tmp_path / "calls.npy")
    assert words == ["False", "True"], "the module's types need no numba, the others import it"
    words = _run(KERNEL_CALLS, aot_cache, tmp_path / "python.npy", NUMBA_DISABLE_JIT="1")
    assert words == ["True", "True"], "the kernels as plain Python (NUMBA_DISABLE_JIT) are numba's"
    served, jitted = np.load(tmp_path / "calls.npy"), _kernel_calls_jit()
    assert np.array_equal(served, jitted), f"differences {served - jitted}"


def test_a_module_of_other_sources_is_ignored(aot_cache, tmp_path):
    fingerprint = flexmb.compiled.sources_fingerprint(PACKAGE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NUMBA_CACHE_DIR", str(aot_cache))
        assert aot.find(PACKAGE, fingerprint) is not None
        assert aot.find(PACKAGE, "0" * 64) is None, "a module of other sources was found"
    # the module renamed as if made from other sources (an edited kernel file): its list says
    # which sources it was made from, and it is not used
    stale = tmp_path / "stale"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NUMBA_CACHE_DIR", str(stale))
        folder = aot.candidate_folders(PACKAGE)[0]
    folder.mkdir(parents=True)
    for path in aot_cache.rglob(aot.module_name(fingerprint) + "*"):
        (folder / path.name).write_bytes(path.read_bytes())
    manifest = folder / (aot.module_name(fingerprint) + ".json")
    manifest.write_text(manifest.read_text().replace(fingerprint, "0" * 64))
    words = _run(KERNEL_CALLS, stale, tmp_path / "calls.npy")
    assert words == ["True", "True"], "a module whose list names other sources was used"


def test_a_stale_cache_drop_removes_the_module(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    module = cache / (aot.module_name("1" * 64) + ".cpython-311-x86_64-linux-gnu.so")
    module.write_bytes(b"")
    (cache / (aot.module_name("1" * 64) + ".json")).write_text("{}")
    assert flexmb.compiled.drop_stale_cache(PACKAGE, cache)
    assert {p.name for p in cache.iterdir()} == {flexmb.compiled.FINGERPRINT_FILE}


def test_without_a_compiler_nothing_is_built_and_one_line_says_why(tmp_path, monkeypatch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # numba.pycc's pending deprecation
        from numba.pycc import platform
    aot.use_jit()
    from flexmb.compiled.sparse_ops import dot

    dot(np.ones(2), np.ones(2))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    platform.external_compiler_works.cache_clear()          # it remembers its answer per process
    try:
        built, line = aot.build_and_say([dot], tmp_path, "2" * 64)
    finally:
        platform.external_compiler_works.cache_clear()
    assert not built and "\n" not in line
    assert line.startswith("no ahead-of-time kernels (RuntimeError: no working C compiler"), line
    assert line.endswith("numba compiles them as before"), line
    assert list(tmp_path.iterdir()) == [], "something was written"


def test_the_type_checks_are_numbas():
    """A call goes to the module's function whose argument types it has: its check must say what
    numba's ``typeof`` says, or a function would read memory as another type. It may refuse more
    (numba then takes the call), never accept more."""
    import pickle

    import numba

    x = np.arange(12.0).reshape(3, 4)
    readonly = x.copy()
    readonly.flags.writeable = False
    values = [x, x.T, x[:, ::2], x[0], x[:, 0], readonly, readonly.T, readonly[:, ::2], np.arange(3),
              np.arange(3, dtype=np.int32), np.zeros(2, bool), np.zeros((2, 2, 2)), np.zeros((1, 3)),
              np.zeros((3, 1)).T, 1.5, np.float64(2.0), 3, np.int64(4), -2**63, True, np.bool_(False),
              (x, x.T), (np.arange(2), 1.0, True), (1.0, 2.0), (1.0,),
              pickle.loads(pickle.dumps(x)), np.zeros(3, [("a", "f8"), ("b", "i8")])["b"]]   # dtypes of other objects
    refused = [np.frombuffer(b"\0" * 65, dtype=np.float64, offset=1), x.astype(">f8"), x.view(np.matrix),
               np.float32(1.0), 2**63, 1 + 2j, "text", None, [1.0, 2.0], (x, "text")]
    keys = {aot.numba_type_key(numba.typeof(value)) for value in values}
    assert None not in keys and len(keys) > 15
    for key in keys:
        names: dict = {}
        check = eval(f"lambda value: {aot.type_check('value', key, names)}", names)       # generated text
        for value in values:
            assert check(value) == (aot.numba_type_key(numba.typeof(value)) == key), (key, value)
        for value in refused:
            assert not check(value), (key, value)


def test_the_module_is_looked_for_where_numba_caches_the_kernels():
    aot.use_jit()
    flexmb.compiled.start_numba()
    assert flexmb.compiled._CACHE in aot.candidate_folders(PACKAGE)
