"""Compiled kernels (numba, ``nopython``, ``cache=True``): the hot loops of flexmb.

Every kernel here loops over the elements (or nodes, joints, sparse entries) of a batch inside
one compiled function, so a Newton iteration makes a handful of calls instead of hundreds of
numpy calls. Each kernel has one specification: the numpy implementation next to the element or
assembly code that uses it (its name starts with ``reference_``), against which the tests check
the kernel to 1e-12 relative, and whose tangent they check against finite differences.

numba is imported only here, and these modules are imported on first use, so ``import flexmb``
stays light. The first call of a kernel after installation compiles it and stores the machine
code in numba's cache; later processes load it from there. Where the cache goes is numba's
choice, in this order: the folder ``NUMBA_CACHE_DIR`` names (if set), else ``__pycache__`` next to
the module (where the package folder is writable, e.g. an editable install), else numba's user
cache folder (``$XDG_CACHE_HOME/numba`` or ``~/.cache/numba`` on Linux, for a read-only installed
package). ``flexmb compile`` (:mod:`flexmb.warm_up`) fills the cache ahead of time and, where a
C compiler is there, builds the ahead-of-time module of the kernels (:mod:`flexmb.aot`) beside
it: a process that finds the module made from these sources serves the kernels from it and
imports numba only when a call needs an argument type the module lacks (then
:func:`start_numba` runs).

The first time a process is about to compile one of these kernels (it is not in the cache), one
line on the ``flexmb.compiled`` logger (level WARNING, so Python shows it on stderr by default)
says so and how long it takes; a process that finds every kernel it calls in the cache prints
nothing and pays nothing for the check (numba signals only a compilation, not a cache load).

numba keys a kernel's cached machine code on its own source file only. A kernel that calls a
function of another module keeps the old code of that function when only the other file changed
(an editable install after ``git pull``, a development tree): a silently stale result. So the
package keeps a fingerprint of all its modules' sources next to the cache
(:func:`drop_stale_cache`, at its import: about 1 ms); when the sources differ from those the cache
was made with, the cached kernels (and the ahead-of-time modules there) are removed and compile
again.
"""
from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

import numpy as np

from flexmb import aot

#: the duration said is that of a typical script's first run on the 2-core CI machine (2026-11-29):
#: 7.5 s for a small cubic-mass Beam2D run (``benchmarks/bench_import.py``), 6-17 s per validation
#: script (issue 31); compiling every kernel set (``flexmb compile``) took 100 s of CPU
FIRST_RUN_MESSAGE = ("flexmb: compiling the numerical kernels for this machine (first run, about 10 s; "
                     "`flexmb compile` does it ahead of time)")

logger = logging.getLogger(__name__)


class _FirstCompileNotice:
    """Logs :data:`FIRST_RUN_MESSAGE` once per process, when numba starts compiling a flexmb kernel
    (numba raises the ``numba:compile`` event only on a cache miss, just before it compiles);
    :func:`start_numba` registers it with numba."""

    def __init__(self) -> None:
        self.enabled = True

    def on_start(self, ev: Any) -> None:
        function = getattr((ev.data or {}).get("dispatcher"), "py_func", None)
        if self.enabled and getattr(function, "__module__", "").startswith(__name__ + "."):
            self.enabled = False
            logger.warning(FIRST_RUN_MESSAGE)

    def on_end(self, ev: Any) -> None:
        pass


#: the process's notice; :mod:`flexmb.warm_up` sets ``first_compile_notice.enabled = False`` (it
#: reports the compilation itself)
first_compile_notice = _FirstCompileNotice()


def kernel_array(a: np.ndarray) -> np.ndarray:
    """``a`` as the kernels take their float arrays: writable, C-contiguous float64 -- ``a`` itself
    where it is, else a copy (the same values). numba compiles a kernel once per argument type, and a
    read-only array (a kept value, e.g. a time function's or the step's dead loads) is another type
    than a writable one: passed as it is, it would compile the kernel a second time."""
    return np.require(a, dtype=np.float64, requirements=("C", "W"))


#: the file next to the cached kernels holding the fingerprint of the sources they were made from
FINGERPRINT_FILE = "flexmb-compiled-sources.sha256"


def sources_fingerprint(folder: Path) -> str:
    """SHA-256 of the Python sources of the package folder (names and contents, in name order)."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def drop_stale_cache(folder: Path, cache: Path) -> bool:
    """Remove the cached kernels (``*.nbi``, ``*.nbc``, the ahead-of-time modules) in ``cache`` when
    the sources of ``folder`` differ from the fingerprint stored there (:data:`FINGERPRINT_FILE`),
    and store the new one; returns whether the cache was dropped. Folders that cannot be written are left alone."""
    fingerprint = sources_fingerprint(folder)
    marker = cache / FINGERPRINT_FILE
    try:
        if marker.read_text() == fingerprint:
            return False
    except OSError:
        pass
    try:
        for path in [*cache.glob("*.nbi"), *cache.glob("*.nbc"), *cache.glob(aot.PREFIX + "*")]:
            path.unlink(missing_ok=True)
        marker.write_text(fingerprint)
    except OSError:
        logger.debug("flexmb.compiled: could not renew the kernel cache in %s", cache)
        return False
    return True


def _cache_folder() -> Path | None:
    """Where numba caches this package's kernels: the cache folder numba chooses for a function
    of this module (the same for every module of the package, see the module docstring; made on
    decoration, nothing is compiled), or None if it has none or its internals changed."""
    import numba

    def probe() -> None:
        """Never called: numba's cache object for a function of this folder."""

    try:
        return Path(numba.njit(cache=True)(probe)._cache._cache_path)
    except Exception as exc:          # a numba version without these internals: no guard, say why
        logger.debug("flexmb.compiled: no kernel cache folder found (%s)", exc)
    return None


def start_numba() -> None:
    """Set numba up for the package, once per process: register :data:`first_compile_notice` and
    drop a stale kernel cache (:func:`drop_stale_cache`). Runs at the package's import, or, where the
    ahead-of-time module serves the kernels, when a call first needs numba (:func:`flexmb.aot.use_jit`)."""
    global _CACHE
    if _CACHE is not False:
        return
    from numba.core import event

    class Notice(event.Listener):
        """numba's listener for :data:`first_compile_notice`."""

        def on_start(self, ev: event.Event) -> None:
            first_compile_notice.on_start(ev)

        def on_end(self, ev: event.Event) -> None:
            pass

    event.register("numba:compile", Notice())
    _CACHE = _cache_folder()
    if _CACHE is not None:
        drop_stale_cache(Path(__file__).parent, _CACHE)


#: numba's cache folder of the package once :func:`start_numba` ran (None if it has none); False before
_CACHE: Path | None | bool = False
#: the ahead-of-time module serving the kernels (:mod:`flexmb.aot`), or None: numba from the start
AOT_MODULE = aot.install(__name__, Path(__file__).parent, sources_fingerprint(Path(__file__).parent), start_numba)
if AOT_MODULE is None:
    start_numba()
