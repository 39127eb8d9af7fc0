"""A fingerprint of a model's data, part by part, so that a restart can tell whether its model
is the one that wrote the result file.

:func:`model_digest` hashes (BLAKE2b, 8 bytes) each part of a :class:`~flexmb.model.Model`: the
node coordinates, every element group (its properties: stiffness, mass, sections, springs,
damping, ...), the point masses, rigid bodies, supports, prescribed motions, loads, gravity,
joints and ties; any other public attribute of the model becomes a part of its own. A part is
walked through its public attributes (names without a leading ``_``: those are caches derived
from the public ones), lists, dicts, sets and arrays (dtype, shape and bytes). A function (a
load of time, a drive, a force curve) counts by its name, its code and constants, its default
arguments and the values of its closure; the values it reads from module globals do not count.
The sensors are not part of it (the result file stores them itself), nor are the drawn sections
of the groups (pictures only), nor the time a user force or body load was last evaluated at.

The digest is a dict part -> hex string, stored with the model's layout in result files;
:func:`changed_parts` names the parts in which two digests differ.
"""
from __future__ import annotations

import functools
import hashlib
import types
from typing import Any

import numpy as np

#: model attributes that are not its mechanical data: outputs, bookkeeping, the group index map,
#: the bodies' drawn shapes
_NOT_DATA = {"sensors", "revision", "force_groups", "body_shapes"}
#: attributes of the parts' objects that do not change the mechanics: drawn sections, and the time
#: a user force or a body load is evaluated at (``UserForce.time``, ``BodyPointLoad.time``: run
#: state the assembly sets, which made a restart on the same model object refuse it as changed)
_NOT_MECHANICS = {"section_shape", "time"}
#: how the parts are named in messages
_WORDS = {"dim": "the dimension", "coordinates": "node coordinates", "point_masses": "point masses",
          "bodies": "rigid bodies", "clamped": "supports", "prescribed": "prescribed motions", "loads": "loads",
          "vector_loads": "follower and semi-tangential loads", "gravity": "gravity", "joints": "joints",
          "ties": "ties"}
#: objects nested deeper than this (in an attribute of an attribute of ...) are hashed by type alone
_MAX_DEPTH = 12


def model_digest(model: Any) -> dict[str, str]:
    """Per part of ``model`` (a :class:`~flexmb.model.Model`) a 16-hex-digit hash of its data:
    ``"coordinates"``, ``"groups/<i>"`` for element group i, ``"point_masses"``, ...
    (see the module docstring)."""
    parts: dict[str, Any] = {}
    for name, value in sorted(vars(model).items()):
        if name.startswith("_") or name in _NOT_DATA:
            continue
        if name == "groups":
            parts.update({f"groups/{i}": group for i, group in enumerate(value)})
        else:
            parts[name] = value
    return {name: _hash(value) for name, value in parts.items()}


def changed_parts(stored: dict[str, str], current: dict[str, str], group_names: list[str]) -> list[str]:
    """The parts whose hashes differ between two digests, in words ("point masses", "element
    group 1 ('links')"); ``group_names`` names the current model's groups."""
    changed = []
    for part in sorted(set(stored) | set(current), key=_order):
        if stored.get(part) == current.get(part):
            continue
        if part.startswith("groups/"):
            i = int(part.split("/")[1])
            name = f" ({group_names[i]!r})" if i < len(group_names) else ""
            changed.append(f"element group {i}{name}")
        else:
            changed.append(_WORDS.get(part, part))
    return changed


def _order(part: str) -> tuple:
    """Parts in the order of the model's vocabulary: nodes, groups, then the rest by name."""
    if part.startswith("groups/"):
        return (1, int(part.split("/")[1]), "")
    return (0 if part in ("dim", "coordinates") else 2, 0, part)


def _hash(value: Any) -> str:
    h = hashlib.blake2b(digest_size=8)
    _feed(h, value, 0, set())
    return h.hexdigest()


def _feed(h: Any, obj: Any, depth: int, seen: set[int]) -> None:
    """Add ``obj`` to the hash ``h`` in a form that depends on its data only (not on ids, set or
    dict order, or the process)."""
    if obj is None or isinstance(obj, (bool, np.bool_)):
        h.update(f"{obj!r};".encode())
    elif isinstance(obj, (int, np.integer)):
        h.update(f"i{int(obj)};".encode())
    elif isinstance(obj, (float, np.floating)):
        h.update(f"f{float(obj).hex()};".encode())
    elif isinstance(obj, (complex, np.complexfloating)):
        h.update(f"c{complex(obj)!r};".encode())
    elif isinstance(obj, (str, bytes)):
        h.update(f"{type(obj).__name__}{len(obj)}:".encode())
        h.update(obj.encode() if isinstance(obj, str) else obj)
    elif isinstance(obj, np.ndarray):
        h.update(f"array{obj.dtype.str}{obj.shape}:".encode())
        if obj.dtype.hasobject:
            for item in obj.flat:
                _feed(h, item, depth + 1, seen)
        else:
            h.update(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, (list, tuple)):
        h.update(f"{type(obj).__name__}{len(obj)}[".encode())
        for item in obj:
            _feed(h, item, depth + 1, seen)
        h.update(b"]")
    elif isinstance(obj, (set, frozenset)):
        h.update(f"set{len(obj)}[".encode())
        for digest in sorted(_hash_in(item, depth, seen) for item in obj):
            h.update(digest.encode())
        h.update(b"]")
    elif isinstance(obj, dict):
        h.update(f"dict{len(obj)}[".encode())
        for key, value in sorted(((_hash_in(k, depth, seen), v) for k, v in obj.items()), key=lambda kv: kv[0]):
            h.update(key.encode())
            _feed(h, value, depth + 1, seen)
        h.update(b"]")
    elif depth >= _MAX_DEPTH or id(obj) in seen:
        h.update(f"<{type(obj).__qualname__}>;".encode())
    else:
        seen = seen | {id(obj)}
        if isinstance(obj, (type, types.ModuleType)):
            h.update(f"<{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', obj.__name__)}>;".encode())
        elif isinstance(obj, types.FunctionType):
            _feed_function(h, obj, depth, seen)
        elif isinstance(obj, functools.partial):
            h.update(b"partial:")
            _feed(h, (obj.func, obj.args, obj.keywords), depth + 1, seen)
        elif isinstance(obj, types.MethodType):
            h.update(b"method:")
            _feed(h, (obj.__func__, obj.__self__), depth + 1, seen)
        elif hasattr(obj, "__dict__"):
            h.update(f"{type(obj).__module__}.{type(obj).__qualname__}{{".encode())
            for name, value in sorted(vars(obj).items()):
                if not name.startswith("_") and name not in _NOT_MECHANICS:
                    h.update(f"{name}=".encode())
                    _feed(h, value, depth + 1, seen)
            h.update(b"}")
        else:                                    # a builtin or compiled function, a ufunc, ...
            name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or ""
            h.update(f"<{type(obj).__qualname__} {getattr(obj, '__module__', '')}.{name}>;".encode())


def _feed_function(h: Any, f: types.FunctionType, depth: int, seen: set[int]) -> None:
    """A Python function: its name, code (bytecode, constants, names), defaults and closure."""
    h.update(f"function {f.__module__}.{f.__qualname__}:".encode())
    _feed_code(h, f.__code__)
    _feed(h, (f.__defaults__, f.__kwdefaults__), depth + 1, seen)
    for cell in f.__closure__ or ():
        try:
            contents = cell.cell_contents
        except ValueError:                       # a cell not filled yet
            contents = None
        _feed(h, contents, depth + 1, seen)


def _feed_code(h: Any, code: types.CodeType) -> None:
    h.update(code.co_code)
    h.update(repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _feed_code(h, const)                 # a nested function or comprehension
        else:
            _feed(h, const, 0, set())


def _hash_in(obj: Any, depth: int, seen: set[int]) -> str:
    h = hashlib.blake2b(digest_size=8)
    _feed(h, obj, depth + 1, seen)
    return h.hexdigest()
