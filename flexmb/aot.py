"""Ahead-of-time compiled kernels: a run whose kernels were all compiled ahead of time imports no numba.

numba costs a small run about 0.5 s of its process (issue 31): its import 0.12 s, its first cached
kernel load 0.3 s (it fills its lowering registries and imports scipy.linalg), its exit 0.15 s. So
``flexmb compile`` also builds, when a C compiler is there, one CPython extension module of the
kernels (numba's ``numba.pycc``) with the argument types its warm-up runs called them with from
Python; a process that finds that module loads the kernels from it, numpy alone at run time.

Where it lives: in the folder numba caches this package's kernels in (:func:`candidate_folders`),
named ``flexmb_kernels_<fingerprint>`` after the sources it was made from
(:func:`flexmb.compiled.sources_fingerprint`): after an edit of any module of the package the name
no longer matches and the module is ignored (and removed with numba's stale cache, see
:func:`flexmb.compiled.drop_stale_cache`). Beside it, ``<name>.json`` lists the kernels and the
argument types of each of its functions.

How the package uses it (:func:`install`): the kernel modules import ``numba`` and decorate their
kernels with ``numba.njit``. With the module found, they are imported with a stand-in for that one
name (:class:`_NumbaStandIn`), whose ``njit`` makes each kernel a :class:`Kernel`: a call whose
argument types (numba's ``typeof`` for the kinds the kernels take, checked by :func:`type_check`)
the module has goes to its function; any other call (other types, keywords) imports numba, turns
every kernel of the package into its numba dispatcher (:func:`use_jit`, which also renews the
stale-cache guard and the first-compilation notice of :mod:`flexmb.compiled`) and goes there.
Module constants are those of the kernel modules, which run as usual. A call through a
:class:`Kernel` checks its argument types in Python: about 0.15 us an argument more than numba's
dispatch (a 55-argument step kernel: 33 us a call instead of 25 us).

How it is built (:func:`build`): each exported function calls the kernel's numba dispatcher, so the
module is compiled (for this machine's CPU) from the LLVM code numba made for the kernel with the
kernel's own options (its error model, ...); the results are those of the jitted kernels bit for
bit (tests/test_aot_kernels.py). ``numba.pycc`` is pending deprecation in numba (since 0.57, no
replacement yet): where a numba lacks it, or there is no C compiler, nothing is built and the
kernels run with numba as before.

``FLEXMB_AOT=0`` in the environment turns the module off (the JIT path, as without it), and so
does ``NUMBA_DISABLE_JIT=1`` (the kernels as plain Python).
"""
from __future__ import annotations

import builtins
import functools
import hashlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import json
import logging
import os
import shutil
import sys
import tempfile
import time
import types
import warnings
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

#: the name of the extension module, before the first 16 hex digits of the sources' fingerprint
PREFIX = "flexmb_kernels_"
#: the environment variable that turns the ahead-of-time module off when it is "0"
SWITCH = "FLEXMB_AOT"
#: the layout of the module's list (``<name>.json``); a list of another layout is ignored
FORMAT = 2
_SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]      # e.g. .cpython-311-x86_64-linux-gnu.so


def module_name(fingerprint: str) -> str:
    """The extension module's name for the sources whose fingerprint (SHA-256, hex) is given."""
    return PREFIX + fingerprint[:16]


def candidate_folders(package: Path) -> list[Path]:
    """The folders numba may cache the kernels of ``package`` in, in the order numba tries them
    (``numba.core.caching``'s locators: ``NUMBA_CACHE_DIR``; else ``__pycache__`` beside the sources
    where it can write; else its user cache folder), found without importing numba."""
    source = os.path.abspath(package)
    subfolder = f"{os.path.basename(source)}_{hashlib.sha1(source.encode()).hexdigest()}"
    if os.environ.get("NUMBA_CACHE_DIR"):
        return [Path(os.environ["NUMBA_CACHE_DIR"]) / subfolder]
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path("~/.cache").expanduser()) / "numba" / subfolder
    return [Path(source) / "__pycache__", user]


def numba_type_key(numba_type: Any) -> Hashable:
    """The key of a numba type in the module's list: an array (dtype's kind and size, ndim, layout,
    read-only), "float64", "int64", "bool", ("tuple", keys); None where a call from Python never has
    that type or no function is made for it (literals, omitted arguments, unaligned arrays, other
    scalars)."""
    from numba.core import types

    if isinstance(numba_type, types.Array):
        if not (numba_type.aligned and isinstance(numba_type.dtype, (types.Boolean, types.Number))):
            return None
        dtype = np.dtype(str(numba_type.dtype))
        return (dtype.kind, dtype.itemsize, numba_type.ndim, numba_type.layout, not numba_type.mutable)
    if isinstance(numba_type, types.BaseTuple) and not isinstance(numba_type, types.BaseNamedTuple):
        keys = tuple(map(numba_type_key, numba_type.types))
        return None if None in keys else ("tuple", keys)
    return str(numba_type) if numba_type in (types.float64, types.int64, types.boolean) else None


def _hashable(key: Any) -> Hashable:
    """A key read back from JSON (lists) as :func:`numba_type_key` makes it (tuples)."""
    if isinstance(key, list):
        return tuple(map(_hashable, key))
    return key


#: ndarray.flags.num bits: C-contiguous, F-contiguous, aligned, writeable
_C, _F, _ALIGNED, _WRITEABLE = 0x1, 0x2, 0x100, 0x400
#: (layout, read-only) -> (mask, bits) of ``flags.num`` for numba's type: layout "C" if C-contiguous,
#: else "F" if F-contiguous, else "A"; aligned; writeable unless read-only
_LAYOUT_FLAGS = {(layout, readonly): (mask | _ALIGNED | _WRITEABLE, bits | _ALIGNED | (0 if readonly else _WRITEABLE))
                 for layout, mask, bits in (("C", _C, _C), ("F", _C | _F, _F), ("A", _C | _F, 0))
                 for readonly in (False, True)}
_INT64 = (-2**63, 2**63 - 1)


def type_check(expression: str, key: Hashable, names: dict[str, Any]) -> str:
    """A Python expression that is true when the value of ``expression`` has numba's type whose
    :func:`numba_type_key` is ``key`` (``typeof``: an array's dtype, ndim, layout, read-only; a
    Python or numpy float, int, bool; a tuple of these); the objects it names (``_aot_*``) are put in
    ``names``. (A subclass of ndarray fails: numba then takes the call.)"""
    if key == "float64":
        names.update(_aot_float=float, _aot_float64=np.float64)
        return f"(type({expression}) is _aot_float or type({expression}) is _aot_float64)"
    if key == "int64":
        names.update(_aot_int=int, _aot_int64=np.int64)
        return (f"(type({expression}) is _aot_int and {_INT64[0]} <= {expression} <= {_INT64[1]} "
                f"or type({expression}) is _aot_int64)")
    if key == "bool":
        names.update(_aot_bool=bool, _aot_bool_=np.bool_)
        return f"(type({expression}) is _aot_bool or type({expression}) is _aot_bool_)"
    if key[0] == "tuple":
        names.update(_aot_tuple=tuple)
        items = [type_check(f"{expression}[{k}]", item, names) for k, item in enumerate(key[1])]
        items = [f"type({expression}) is _aot_tuple", f"len({expression}) == {len(items)}", *items]
        return "(" + " and ".join(items) + ")"
    kind, size, ndim, layout, readonly = key
    dtype = f"_aot_{kind}{size}"
    names.update({"_aot_ndarray": np.ndarray, dtype: np.dtype(f"{kind}{size}")})
    mask, bits = _LAYOUT_FLAGS[layout, readonly]
    return (f"(type({expression}) is _aot_ndarray and {expression}.dtype == {dtype} "
            f"and {expression}.ndim == {ndim} and {expression}.flags.num & {mask} == {bits})")


#: the code of a kernel's stand-in until its first call, which puts the code made for its types in
#: its place (:meth:`Kernel.first_call`): a module imports its kernels for the price of a function each
_FIRST_CALL = compile("def first(*args, **kwargs):\n    return _aot_first(*args, **kwargs)\n", "<flexmb.aot>",
                      "exec").co_consts[0]


class Kernel:
    """A kernel of the package while the ahead-of-time module serves it. Its stand-in in the kernel
    module (:attr:`function`) checks the arguments' types against each of the module's functions
    for it (:func:`type_check`, code made on its first call with the kernel's parameters) and calls
    the one that fits; any other call goes to the numba dispatcher (:func:`use_jit`)."""

    def __init__(self, py_func: Callable, options: dict[str, Any], compiled: list[tuple[list, Callable]]) -> None:
        self.py_func = py_func
        self.options = options          # numba.njit's, for the dispatcher
        self.compiled = compiled        # [(argument types, the module's function)]
        self.dispatcher: Callable | None = None
        self.names: dict[str, Any] = {"_aot_first": self.first_call, "_aot_jit": self.jit_call}
        self.function = functools.update_wrapper(types.FunctionType(_FIRST_CALL, self.names), py_func)
        del self.function.__wrapped__                    # not py_func: inspect.signature stays the stand-in's
        self.function.__flexmb_kernel__ = self

    def first_call(self, *args: Any, **kwargs: Any) -> Any:
        """Make the stand-in's code for the kernel's types, put it in place and make the call."""
        code, py_func = self.py_func.__code__, self.py_func
        plain = not (py_func.__defaults__ or py_func.__kwdefaults__ or code.co_kwonlyargcount
                     or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))
        if plain:
            params = ", ".join(code.co_varnames[:code.co_argcount])
            lines = [f"def stand_in({params}):"]
            for k, (keys, function) in enumerate(self.compiled):
                if len(keys) == code.co_argcount:
                    self.names[f"_aot_{k}"] = function
                    fits = " and ".join(type_check(p, key, self.names)
                                        for p, key in zip(code.co_varnames, keys)) or "True"
                    lines += [f"    if {fits}:", f"        return _aot_{k}({params})"]
            lines.append(f"    return _aot_jit({params})")
            exec("\n".join(lines), self.names)              # made from the kernel's types, nothing else
            self.function.__code__ = self.names["stand_in"].__code__
        else:                                              # defaults, keywords only: numba's
            self.names["_aot_first"] = self.jit_call
        return self.function(*args, **kwargs)

    def jit_call(self, *args: Any, **kwargs: Any) -> Any:
        """The call by numba's dispatcher (numba set up for the package first)."""
        if self.dispatcher is None:
            use_jit()
        return self.dispatcher(*args, **kwargs)


class _NumbaStandIn:
    """What ``import numba`` gives a kernel module while the ahead-of-time module serves the
    package: ``numba.njit`` makes a :class:`Kernel`; any other name imports numba (:func:`use_jit`)."""

    def njit(self, *args: Any, **options: Any) -> Any:
        if args and not callable(args[0]):          # explicit signatures: numba's own
            return self.__getattr__("njit")(*args, **options)
        if args:
            return _kernel(args[0], options)
        return lambda function: _kernel(function, options)

    def __getattr__(self, name: str) -> Any:
        use_jit()
        return getattr(__import__("numba"), name)


_table: dict[str, list[tuple[list, Callable]]] | None = None    # kernel -> [(argument types, function)]
_kernels: list[Kernel] = []
_jit = False
_package = ""                                   # the kernels' package, e.g. flexmb.compiled
_start_numba: Callable[[], None] = lambda: None  # its set-up of numba (flexmb.compiled.start_numba)


def _kernel(py_func: Callable, options: dict[str, Any]) -> Any:
    """``numba.njit(**options)(py_func)`` in a kernel module: a :class:`Kernel`'s function, or the
    dispatcher once numba runs the package."""
    if _jit:
        import numba

        return numba.njit(**options)(py_func)
    kernel = Kernel(py_func, options, _table.get(f"{py_func.__module__}.{py_func.__qualname__}", []))
    _kernels.append(kernel)
    return kernel.function


_STAND_IN = _NumbaStandIn()


def _import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
    """``__import__`` of the kernel modules: ``numba`` is the stand-in until numba runs the
    package; any of numba's submodules starts numba for the package first (its guard and notice)."""
    if level == 0 and not _jit and (name == "numba" or name.startswith("numba.")):
        if name == "numba":
            return _STAND_IN
        use_jit()
    return builtins.__import__(name, globals, locals, fromlist, level)


_BUILTINS = dict(vars(builtins), __import__=_import)


class _KernelLoader(importlib.machinery.SourceFileLoader):
    """Runs a kernel module with :func:`_import` as its ``__import__``."""

    def exec_module(self, module: Any) -> None:
        module.__builtins__ = _BUILTINS
        super().exec_module(module)


class _KernelFinder:
    """Finds the package's kernel modules (``flexmb.compiled.*``) for :class:`_KernelLoader` while
    the ahead-of-time module serves the package."""

    def __init__(self, package: str) -> None:
        self.prefix = package + "."

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if _jit or not fullname.startswith(self.prefix):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and type(spec.loader) is importlib.machinery.SourceFileLoader:
            spec.loader = _KernelLoader(spec.loader.name, spec.loader.path)
        return spec

    def invalidate_caches(self) -> None:
        pass


def find(package: Path, fingerprint: str) -> Path | None:
    """The ahead-of-time module for these sources (its ``.so`` path), or None."""
    name = module_name(fingerprint)
    for folder in candidate_folders(package):
        library = folder / (name + _SUFFIX)
        if library.is_file() and (folder / (name + ".json")).is_file():
            return library
    return None


def install(package_name: str, package: Path, fingerprint: str,
            start_numba: Callable[[], None]) -> Path | None:
    """Serve the kernel modules of ``package_name`` (folder ``package``) from the ahead-of-time
    module made from sources with this fingerprint, if there is one, ``FLEXMB_AOT`` is not "0" and
    ``NUMBA_DISABLE_JIT`` does not ask for the kernels as plain Python; returns its path, or None
    (numba's path). ``start_numba`` sets numba up for the package when a call first needs it
    (:func:`use_jit`)."""
    global _table, _package, _start_numba
    off = os.environ.get(SWITCH) == "0" or os.environ.get("NUMBA_DISABLE_JIT", "0").strip() not in ("", "0")
    library = None if off else find(package, fingerprint)
    if library is None:
        return None
    name = module_name(fingerprint)
    try:
        manifest = json.loads(library.with_name(name + ".json").read_text())
        if manifest.get("format") != FORMAT or manifest.get("fingerprint") != fingerprint:
            raise ValueError("its list is of another version")
        spec = importlib.util.spec_from_file_location(name, library)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _table = {kernel: [([_hashable(t) for t in types], getattr(module, export)) for export, types in entries]
                  for kernel, entries in manifest["kernels"].items()}
    except (ImportError, OSError, ValueError, KeyError, AttributeError) as exc:
        logger.warning("flexmb: the ahead-of-time kernels in %s cannot be used (%s); numba compiles them",
                       library, exc)
        _table = None
        return None
    _package, _start_numba = package_name, start_numba
    sys.meta_path.insert(0, _KernelFinder(package_name))
    return library


def use_jit() -> None:
    """From now on numba runs the package's kernels: import numba, set it up for the package (the
    stale-cache guard and the first-compilation notice, :func:`flexmb.compiled.start_numba`) and
    make every kernel imported so far its numba dispatcher, in the kernel modules and behind its
    :class:`Kernel`. Nothing to do without an ahead-of-time module or a second time."""
    global _jit
    if _jit or _table is None:
        return
    _jit = True
    import numba

    _start_numba()
    for kernel in _kernels:
        kernel.dispatcher = numba.njit(**kernel.options)(kernel.py_func)
    prefix = _package + "."
    for name, module in list(sys.modules.items()):
        if name.startswith(prefix):
            names = vars(module)
            for key, value in list(names.items()):
                kernel = getattr(value, "__flexmb_kernel__", None)
                if isinstance(kernel, Kernel):
                    names[key] = kernel.dispatcher


def _entry(dispatcher: Any, n_args: int) -> Callable:
    """A function of ``n_args`` arguments that calls ``dispatcher`` (the exported function: the
    kernel itself is linked in as numba compiled it, with its own options, e.g. its error model)."""
    names = ", ".join(f"a{k}" for k in range(n_args))
    namespace = {"kernel": dispatcher}
    exec(f"def entry({names}):\n    return kernel({names})\n", namespace)       # a fixed text, n_args names
    return namespace["entry"]


def top_level_signatures(dispatchers: Iterable[Any]) -> dict[str, list[tuple[str, Any, list[Hashable]]]]:
    """The kernels' signatures a module can export: kernel (module.name) -> [(export name, numba
    signature, argument keys)], for every signature the dispatchers have whose argument types a
    call from Python can have."""
    exports: dict[str, list[tuple[str, Any, list[Hashable]]]] = {}
    for dispatcher in dispatchers:
        function = dispatcher.py_func
        for args, result in dispatcher.overloads.items():
            keys = [numba_type_key(a) for a in args]
            if None not in keys:                # named by its types: a list never names a function of other types
                types = hashlib.sha1(repr(keys).encode()).hexdigest()[:12]
                export = f"{function.__module__.rsplit('.', 1)[-1]}__{function.__name__}__{types}"
                exports.setdefault(f"{function.__module__}.{function.__qualname__}", []).append(
                    (export, result.signature, keys))
    return exports


def built(folder: Path, fingerprint: str) -> dict[str, Any]:
    """The list of the module for ``fingerprint`` in ``folder`` (its kernel sets, ``sets``, and
    the fingerprint of the warm-ups that made it, ``recipe``), or {} if there is none."""
    try:
        made = json.loads((folder / (module_name(fingerprint) + ".json")).read_text())
    except (OSError, ValueError):
        return {}
    return made if isinstance(made, dict) and (folder / (module_name(fingerprint) + _SUFFIX)).is_file() else {}


def build(dispatchers: Iterable[Any], folder: Path, fingerprint: str, sets: Iterable[str] = (),
          recipe: str = "") -> tuple[Path, int]:
    """Compile the signatures of ``dispatchers`` (the kernels called from Python, each with the
    signatures it was called with, by the warm-ups of ``sets``, whose source has the fingerprint
    ``recipe``) into the extension module for ``fingerprint`` in ``folder``, with its list beside
    it; returns its path and the number of functions. Raises what numba.pycc or the C compiler
    raise (RuntimeError without a compiler)."""
    dispatchers = list(dispatchers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                     # numba.pycc's pending deprecation
        from numba.pycc import CC
        from numba.pycc.platform import external_compiler_works

    if not external_compiler_works():
        raise RuntimeError("no working C compiler (the one the CC environment variable names, else cc)")

    name = module_name(fingerprint)
    exports = top_level_signatures(dispatchers)
    by_name = {f"{d.py_func.__module__}.{d.py_func.__qualname__}": d for d in dispatchers}
    with tempfile.TemporaryDirectory() as scratch:
        cc = CC(name)
        cc.output_dir = scratch
        cc.target_cpu = "host"                   # the machine numba's cache is for
        for kernel, entries in exports.items():
            for export, signature, _ in entries:
                cc.export(export, signature)(_entry(by_name[kernel], len(signature.args)))
        cc.compile()
        folder.mkdir(parents=True, exist_ok=True)
        library = folder / (name + _SUFFIX)
        library.with_name(name + ".json").unlink(missing_ok=True)      # no list of another build meanwhile
        shutil.move(os.path.join(scratch, os.path.basename(cc.output_file)), library)
    manifest = {"format": FORMAT, "fingerprint": fingerprint, "sets": list(sets), "recipe": recipe,
                "kernels": {kernel: [[export, keys] for export, _, keys in entries]
                            for kernel, entries in exports.items()}}
    library.with_name(name + ".json").write_text(json.dumps(manifest, indent=0))    # last: the module is there
    return library, sum(map(len, exports.values()))


def build_and_say(dispatchers: Iterable[Any], folder: Path, fingerprint: str, sets: Iterable[str] = (),
                  recipe: str = "") -> tuple[bool, str]:
    """:func:`build`, and one line saying what it built and how long it took, or why it built
    nothing (then the kernels run with numba as before); returns whether it built the module."""
    start = time.perf_counter()
    sets = list(sets)
    try:
        library, count = build(dispatchers, folder, fingerprint, sets, recipe)
    except Exception as exc:            # no compiler, a kernel numba.pycc cannot export, ...
        reason = (str(exc).strip().splitlines() or [""])[0]
        return False, f"no ahead-of-time kernels ({type(exc).__name__}: {reason}); numba compiles them as before"
    return True, (f"ahead-of-time kernels{' (' + ', '.join(sets) + ')' if sets else ''}: {count} functions "
                  f"compiled in {time.perf_counter() - start:.0f} s into {library}")
