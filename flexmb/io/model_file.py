"""Model files: a :class:`~flexmb.model.Model` saved to HDF5 and rebuilt (:meth:`Model.save
<flexmb.model.Model.save>`, :func:`load_model`).

The file holds the model's object graph as it is, walked generically (as
:mod:`flexmb.model_digest` walks it), so a part added to flexmb later is saved without new code:

* an object is an HDF5 group with its class (``.class = "module:qualname"``) and its attributes
  (``__dict__`` and ``__slots__``, private ones included: they are caches a method may expect;
  but names beginning with ``_kept_``, values a method recomputes when they are missing, such as a
  solid group's stiffness kept for its last geometry: :data:`TRANSIENT_PREFIX`);
  it is rebuilt with ``cls.__new__`` and its attributes set, without calling ``__init__``. Only
  classes of flexmb are rebuilt so (numpy's scalars and arrays are data, below; scipy's sparse
  matrices are stored as their index arrays: the one kind of object with code of its own here);
  any other object is refused at save time, naming the part that holds it. Nothing is pickled:
  loading a file runs no code but flexmb's and the imports of the functions it names (below);
* an array is a dataset (its dtype, shape, bytes and, if set, its Fortran order and read-only
  flag), a scalar or string an attribute, typed in the group's ``.types`` (JSON), so that a Python
  ``int`` comes back an ``int`` and an ``np.float32`` an ``np.float32``;
* lists, tuples, sets and dicts are groups of numbered members (a dict: ``keys`` and ``values``,
  so keys may be tuples or numbers);
  an object or container met a second time is a ``.kind = "ref"`` group naming the first one's
  path, so shared parts stay shared (a sensor on a joint, a tie's body) and cycles close; a
  long list of objects of one class with the same attributes (a pressure's nodal shares) is a
  ``.kind = "table"`` group instead, one JSON text dataset per attribute (``[tag, value]`` per row,
  or ``["object", k]`` into ``<attribute>.objects``): a group per row costs about 1 ms; so is a
  long sequence of numbers, strings or tuples of them (``.json``: one JSON text per item, in
  ``items``);
* a function (a load of t, a joint's drive, a user force) is stored as the importable reference
  ``"module:qualname"`` and imported again on load (a ``functools.partial`` of one as that
  reference and its fixed arguments). A lambda, a function defined inside another
  one (a closure), a function of ``__main__`` (a script run directly) or a bound method has no such
  reference: saving refuses it with a :class:`~flexmb.checks.ModelError` that names the part and
  says how to make it savable.

Layout, model format version 1::

    /                 attrs: format = "flexmb-model", flexmb_version (model files only; a result
                      file keeps its own root, :mod:`flexmb.io.result_file`)
    /saved_model      the Model object group; attrs model_format_version, flexmb_version

A result file carries its model in the same ``/saved_model`` group (written by
:class:`~flexmb.io.result_file.ResultWriter` when the model is savable), so :func:`load_model`
rebuilds the model of a run from its result file.
"""
from __future__ import annotations

import functools
import importlib
import json
import os
import types
from pathlib import Path
from typing import Any

import numpy as np

from flexmb.checks import ModelError, keywords_listed

#: the version of the layout above; a file of a newer version is refused by name
MODEL_FORMAT_VERSION = 1
#: the root ``format`` attribute of a model file
MODEL_FORMAT = "flexmb-model"
#: the group that holds the model, in model files and result files
MODEL_GROUP = "saved_model"
#: lists of at least this many objects of one class are written as tables (one dataset per attribute)
TABLE_ROWS = 16
#: the class of the object in ``/saved_model`` (named, not imported: the model module imports this one)
MODEL_CLASS = "flexmb.model:Model"
#: how the parts of a model are named in messages (attribute -> one item of it)
_ITEM_WORDS = {"groups": "element group", "loads": "load", "vector_loads": "vector load", "bodies": "rigid body",
               "joints": "joint", "ties": "tie", "sensors": "sensor", "prescribed": "prescribed motion",
               "point_masses": "point mass", "body_shapes": "body shape"}
_HOW = ("define it with def at module level in an importable module (not in a script run as __main__, "
        "not inside another function, not a lambda; functools.partial(function, numbers) fixes parameters), "
        "or give numbers instead of a function")


def _allowed_class(module: str) -> bool:
    """Objects are rebuilt only for classes of flexmb (no arbitrary code on load; numpy's arrays
    and scalars and scipy's sparse matrices are data of their own kinds)."""
    return module.split(".")[0] == "flexmb"


# ------------------------------------------------------------------ saving
@keywords_listed
def save_model(model: Any, path: str | Path, overwrite: bool = False) -> Path:
    """Write ``model`` (a :class:`~flexmb.model.Model`) to the HDF5 model file ``path``; returns the
    path. The file is written under a temporary name and renamed when complete, so a model that
    cannot be saved (a lambda load, see the module docstring) leaves no file. An existing file is
    refused unless ``overwrite``."""
    h5py = _h5py()
    from flexmb import __version__

    path = Path(path)
    if path.exists() and not overwrite:
        raise FileExistsError(f"model file {path} exists; pass overwrite=True to replace it")
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with h5py.File(temporary, "w") as f:
            f.attrs.update({"format": MODEL_FORMAT, "flexmb_version": __version__})
            write_model(f, model)
        os.replace(temporary, path)
    finally:
        if temporary.exists():
            temporary.unlink()
    return path


def write_model(f: Any, model: Any) -> None:
    """Write ``model`` into the group ``/saved_model`` of the open h5py file ``f``. ModelError
    (naming the part) for a model that cannot be saved; the group is then removed again."""
    from flexmb import __version__

    try:
        writer = _Writer(model)
        writer.write(f, MODEL_GROUP, model, ())
        for group, tags in writer.tags.items():
            f[group].attrs[".types"] = json.dumps(tags)
    except BaseException:
        if MODEL_GROUP in f:
            del f[MODEL_GROUP]
        raise
    f[MODEL_GROUP].attrs.update({"model_format_version": MODEL_FORMAT_VERSION, "flexmb_version": __version__})


class _Writer:
    """One walk over a model: remembers where each object went (shared parts, cycles)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.written: dict[int, str] = {}            # id(obj) -> path of its group or dataset
        self.tags: dict[str, dict[str, str]] = {}    # group path -> its scalar attributes' types
        self.kept: list[Any] = []                    # the objects in ``written`` (temporary key lists too)

    def write(self, parent: Any, key: str, obj: Any, where: tuple, labels: list | None = None) -> None:
        """Write ``obj`` as member ``key`` of the HDF5 group ``parent``; ``where`` is the chain of
        attribute names and indices from the model (messages), ``labels`` what a sequence's items
        are called there (a dict's values: its keys; default their indices)."""
        scalar = _scalar(obj)
        if scalar is not None:
            tag, value = scalar
            parent.attrs[key] = value
            self.tags.setdefault(parent.name, {})[key] = tag
            return
        if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, np.ufunc, type)):
            self.write(parent, key, _Reference(_reference(obj, self._name(where))), where)
            return
        if id(obj) in self.written:
            g = parent.create_group(key)
            g.attrs.update({".kind": "ref", ".target": self.written[id(obj)]})
            return
        if isinstance(obj, np.ndarray) and type(obj) is np.ndarray and not obj.dtype.hasobject:
            self.written[id(obj)] = _write_array(parent, key, obj, self._name(where)).name
            self.kept.append(obj)
            return
        g = parent.create_group(key)
        if not isinstance(obj, tuple):               # immutable: nothing to share, no cycle through it
            self.written[id(obj)] = g.name
            self.kept.append(obj)                    # its id stays its own while the walk runs
        if type(obj) is list and (names := self._table_of(obj)) is not None:
            self._write_table(g, obj, names, where, labels or range(len(obj)))
        elif isinstance(obj, (list, tuple, set, frozenset)) and len(obj) >= TABLE_ROWS and (rows := _json_rows(obj)):
            g.attrs.update({".kind": type(obj).__name__, ".json": True})     # e.g. point masses, clamped nodes
            g.create_dataset("items", data=np.array(rows, dtype=object), dtype=_h5py().string_dtype())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            g.attrs[".kind"] = type(obj).__name__
            for i, item in enumerate(obj):
                self.write(g, str(i), item, where + ((labels[i] if labels else i),))
        elif isinstance(obj, dict) and type(obj) is dict:
            g.attrs[".kind"] = "dict"
            self.write(g, "keys", list(obj), where + ("keys",))
            self.write(g, "values", list(obj.values()), where, labels=list(obj))
        elif isinstance(obj, np.ndarray) and type(obj) is np.ndarray:     # objects: item by item
            g.attrs.update({".kind": "object-array", ".shape": obj.shape})
            self.write(g, "items", obj.ravel().tolist(), where)
        elif type(obj) is functools.partial:        # a module-level function with some arguments fixed
            g.attrs.update({".kind": "partial", ".order": json.dumps(["func", "args", "keywords"])})
            self.write(g, "func", obj.func, where)
            self.write(g, "args", obj.args, where + ("args",))
            self.write(g, "keywords", obj.keywords, where + ("keywords",))
        elif _is_sparse(obj):                        # compressed formats as they are (entry order kept)
            g.attrs.update({".kind": "sparse", ".class": _class_path(type(obj)), ".shape": obj.shape})
            stored = obj if obj.format in ("csr", "csc") else obj.tocoo()
            for name in ("indices", "indptr", "data") if obj.format in ("csr", "csc") else ("row", "col", "data"):
                _write_array(g, name, getattr(stored, name), self._name(where))
        elif _allowed_class(type(obj).__module__):
            cls = type(obj)
            if _resolve(_class_path(cls)) is not cls:
                raise ModelError(f"{self._name(where)}: its class {cls.__qualname__} cannot be imported again "
                                 "by name, so the model cannot be saved")
            state = _state(obj)
            g.attrs.update({".kind": "object", ".class": _class_path(cls), ".order": json.dumps(list(state))})
            for name, value in state.items():
                self.write(g, name, value, where + (name,))
        else:
            raise ModelError(f"{self._name(where)} is a {_kind_of(obj)}, which a model file cannot hold (it "
                             "stores numbers, strings, arrays, flexmb objects and functions by reference); "
                             + ("use a plain function of module level instead" if callable(obj)
                                else "give it as numbers or arrays"))

    def _table_of(self, items: list) -> list[str] | None:
        """The attribute names of a long list of objects of one flexmb class that share them (the
        nodal shares of a pressure, say), which is written as a table; None for any other list."""
        if len(items) < TABLE_ROWS:
            return None
        cls = type(items[0])
        if not _allowed_class(cls.__module__) or _resolve(_class_path(cls)) is not cls:
            return None
        names = list(_state(items[0]))
        if any(type(item) is not cls or id(item) in self.written or list(_state(item)) != names for item in items):
            return None
        return names

    def _write_table(self, g: Any, items: list, names: list[str], where: tuple, labels: Any) -> None:
        """A list of objects of one class as columns: one JSON text dataset per attribute, a row's
        entry ``[tag, value]`` for a scalar or a function reference and ``["object", k]`` for the
        k-th distinct object of that attribute, written (in the ordinary way) in ``<name>.objects``.
        Row i is ``<group>#i`` for references to it. One dataset per attribute instead of a group
        per row: the 1681 pressure shares of a 40 x 40 shell save in 0.2 s instead of 1.6 s."""
        cls = type(items[0])
        g.attrs.update({".kind": "table", ".class": _class_path(cls), ".order": json.dumps(names),
                        ".rows": len(items)})
        for i, item in enumerate(items):
            self.written[id(item)] = f"{g.name}#{i}"
            self.kept.append(item)
        for name in names:
            column, objects, index = [], [], {}
            for i, item in enumerate(items):
                value = _state(item)[name]
                if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, np.ufunc, type)):
                    value = _Reference(_reference(value, self._name(where + (labels[i], name))))
                entry = _json_scalar(value)
                if entry is None:
                    if id(value) not in index:
                        index[id(value)] = len(objects)
                        objects.append(value)
                    entry = ["object", index[id(value)]]
                column.append(json.dumps(entry))
            if objects:
                self.write(g, f"{name}.objects", objects, where + (labels[0], name))
            g.create_dataset(name, data=np.array(column, dtype=object), dtype=_h5py().string_dtype())

    def _name(self, where: tuple) -> str:
        """A part of the model in words: ``joint 2 ('crank')'s drive``, ``element group 0 ('beam')'s
        rayleigh.alpha``, ``the model's gravity``."""
        if not where:
            return "the model"
        head, rest = where[0], list(where[1:])
        obj = getattr(self.model, head, None) if isinstance(head, str) else None
        if head in _ITEM_WORDS and rest:
            index = rest.pop(0)
            words = f"{_ITEM_WORDS[head]} {index!r}" if not isinstance(index, int) else f"{_ITEM_WORDS[head]} {index}"
            try:
                item = obj[index]
            except (LookupError, TypeError):
                item = None
            name = getattr(item, "name", None)
            if isinstance(name, str):
                words += f" ({name!r})"
        else:
            words = f"the model's {head}"
        if rest and rest[-1] == "function" and len(rest) > 1:   # a checked wrapper around the user's function
            rest.pop()
        return words + ("'s " + ".".join(str(r) for r in rest) if rest else "")


class _Reference(str):
    """An importable ``module:qualname`` (written as a tagged string attribute)."""


def _scalar(obj: Any) -> tuple[str, Any] | None:
    """(type tag, value to store as an attribute) of a scalar or string, None for anything else."""
    if obj is None:
        return "none", ""
    if isinstance(obj, _Reference):
        return "reference", str(obj)
    if type(obj) in (bool, str, float, complex):
        return type(obj).__name__, obj
    if type(obj) is int:
        return ("int", obj) if -2**63 <= obj < 2**63 else ("bigint", str(obj))
    if type(obj) is bytes:
        return "bytes", np.void(obj)
    if isinstance(obj, np.generic) and obj.dtype.kind in "biufc":
        return f"numpy:{obj.dtype.str}", np.asarray(obj)
    return None


def _json_scalar(obj: Any) -> list | None:
    """``[tag, value]`` of a scalar in JSON (exact: floats by their shortest repr), None for
    anything else."""
    scalar = _scalar(obj)
    if scalar is None:
        return None
    tag, value = scalar
    if tag == "none":
        return [tag, None]
    if tag.startswith("numpy:") or tag == "complex":
        item = complex(obj) if tag == "complex" else obj.item()
        return [tag, [item.real, item.imag] if isinstance(item, complex) else item]
    if tag == "bytes":
        return [tag, bytes(obj).hex()]
    return [tag, value]


def _json_rows(items: Any) -> list[str] | None:
    """One JSON text per item of a long sequence of scalars and tuples of scalars (a dataset
    instead of a group per tuple), None if an item is anything else."""
    rows = []
    for item in items:
        entry = ["tuple", [_json_scalar(x) for x in item]] if type(item) is tuple else _json_scalar(item)
        if entry is None or (entry[0] == "tuple" and None in entry[1]):
            return None
        rows.append(json.dumps(entry))
    return rows


def _from_json_row(text: Any) -> Any:
    tag, value = json.loads(_text(text))
    return tuple(_from_json(*entry) for entry in value) if tag == "tuple" else _from_json(tag, value)


def _from_json(tag: str, value: Any) -> Any:
    if tag == "bytes":
        return bytes.fromhex(value)
    if isinstance(value, list):                      # complex, as [real, imag]
        value = complex(*value)
    return _typed(tag, value)


def _write_array(parent: Any, key: str, a: np.ndarray, what: str) -> Any:
    if a.dtype.kind == "U":                          # HDF5 has no UCS-4 strings: UTF-8 text, dtype kept
        d = parent.create_dataset(key, data=np.array([s.encode() for s in a.ravel()], dtype=object).reshape(a.shape),
                                  dtype=_h5py().string_dtype())
    elif a.dtype.kind in "biufc" and not a.dtype.fields:
        d = parent.create_dataset(key, data=np.ascontiguousarray(a))
    else:
        raise ModelError(f"{what}: an array of dtype {a.dtype} cannot be saved in a model file")
    d.attrs[".dtype"] = a.dtype.str
    if a.flags.f_contiguous and not a.flags.c_contiguous:
        d.attrs[".order"] = "F"
    if not a.flags.writeable:
        d.attrs[".readonly"] = True
    return d


#: attributes named so are kept values their object recomputes when missing: not saved
TRANSIENT_PREFIX = "_kept_"


def _state(obj: Any) -> dict[str, Any]:
    """An object's attributes: its ``__dict__`` (less the transient ones, :data:`TRANSIENT_PREFIX`)
    and the ``__slots__`` it has set."""
    state = ({name: value for name, value in vars(obj).items() if not name.startswith(TRANSIENT_PREFIX)}
             if hasattr(obj, "__dict__") else {})
    for cls in type(obj).__mro__:
        for name in _slots(cls):
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                state[name] = getattr(obj, name)
    return state


def _reference(f: Any, what: str) -> str:
    """``"module:qualname"`` of a function or class that importing gives back, else ModelError."""
    module = getattr(f, "__module__", None)
    qualname = getattr(f, "__qualname__", None) or getattr(f, "__name__", None)
    if isinstance(f, np.ufunc):
        module = module or "numpy"
    why = None
    if not module or not qualname:
        why = "it has no module and name to import it by"
    elif qualname == "<lambda>" or qualname.endswith(".<lambda>"):
        why = "it is a lambda"
    elif "<locals>" in qualname:
        why = "it is defined inside another function"
    elif module == "__main__":
        why = "it is defined in the script run as __main__, which a later process cannot import"
    elif _resolve(f"{module}:{qualname}") is not f:
        why = f"importing {module}:{qualname} does not give it back"
    if why:
        raise ModelError(f"{what} is the function {qualname or f!r}, which a model file cannot store: {why}; "
                         f"{_HOW}")
    return f"{module}:{qualname}"


def _resolve(reference: str) -> Any:
    """The object ``"module:qualname"`` names, None if it cannot be imported."""
    module, _, qualname = reference.partition(":")
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    return obj


def _class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _is_sparse(obj: Any) -> bool:
    return type(obj).__module__.startswith("scipy.sparse") and hasattr(obj, "tocoo") and hasattr(obj, "format")


def _kind_of(obj: Any) -> str:
    if isinstance(obj, types.MethodType):
        return f"bound method {obj.__qualname__}"
    return f"{type(obj).__module__}.{type(obj).__qualname__} object"


# ------------------------------------------------------------------ loading
@keywords_listed
def load_model(path: str | Path) -> Any:
    """The :class:`~flexmb.model.Model` saved in ``path``: a model file (:meth:`Model.save
    <flexmb.model.Model.save>`) or a result file whose run could save its model. Functions are
    imported again by their ``module:qualname``. ModelError for a file that is not a model or
    result file, a result file that carries no model, or a newer format version;
    FileNotFoundError for a missing file."""
    h5py = _h5py()
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"model file {path} does not exist" if not path.exists()
                                else f"model file {path} is not a file")
    if not h5py.is_hdf5(path):
        raise ModelError(f"{path} is not a flexmb model file (not HDF5); save a model with Model.save")
    with h5py.File(path, "r") as f:
        kind = _text(f.attrs.get("format", ""))
        if MODEL_GROUP not in f:
            if kind == "flexmb-result":
                raise ModelError(f"result file {path} carries no model: its model could not be saved when the "
                                 "run wrote it (see the warning the run gave), or an older flexmb wrote it")
            raise ModelError(f"{path} is not a flexmb model file (HDF5 without a /{MODEL_GROUP} group, format "
                             f"{kind or 'not given'!r}); save a model with Model.save")
        g = f[MODEL_GROUP]
        version = int(g.attrs.get("model_format_version", -1))
        if version != MODEL_FORMAT_VERSION:
            raise ModelError(f"{path}: model format version {version}, which this flexmb does not read (it reads "
                             f"version {MODEL_FORMAT_VERSION}; the file was written by flexmb "
                             f"{_text(g.attrs.get('flexmb_version', 'unknown'))})")
        if _text(g.attrs.get(".class", "")) != MODEL_CLASS:
            raise ModelError(f"{path}: /{MODEL_GROUP} holds a {_text(g.attrs.get('.class', 'nothing'))}, "
                             f"not a {MODEL_CLASS}")
        return _Reader(path).read(g)


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.made: dict[str, Any] = {}                # HDF5 path -> the object rebuilt from it

    def read(self, node: Any) -> Any:
        """The object the group or dataset ``node`` holds."""
        h5py = _h5py()
        if isinstance(node, h5py.Dataset):
            value = self._array(node)
            self.made[node.name] = value
            return value
        kind = _text(node.attrs.get(".kind", ""))
        if kind == "ref":
            target = _text(node.attrs[".target"])
            if target not in self.made:
                raise ModelError(f"{self.path}: {node.name} refers to {target}, which is not built before it")
            return self.made[target]
        if kind in ("list", "set", "frozenset", "tuple"):
            items: list = []
            if kind == "list":
                self.made[node.name] = items
            if node.attrs.get(".json", False):
                items.extend(_from_json_row(text) for text in node["items"][()])
            else:
                items.extend(self._members(node).values())
            value = items if kind == "list" else {"set": set, "frozenset": frozenset, "tuple": tuple}[kind](items)
        elif kind == "table":
            value = self._table(node)
        elif kind == "partial":
            parts = self._members(node)
            value = functools.partial(parts["func"], *parts["args"], **parts["keywords"])
        elif kind == "dict":
            value = {}
            self.made[node.name] = value
            keys, values = self.read(node["keys"]), self.read(node["values"])
            value.update(zip(keys, values))
        elif kind == "object-array":
            items = self.read(node["items"])
            value = np.empty(len(items), dtype=object)
            value[:] = items
            value = value.reshape(tuple(node.attrs[".shape"]))
        elif kind == "sparse":
            cls = self._class(node, sparse=True)
            shape = tuple(int(n) for n in node.attrs[".shape"])
            if "indptr" in node:
                value = cls(tuple(self._array(node[name]) for name in ("data", "indices", "indptr")), shape=shape)
            else:
                row, col, data = (self._array(node[name]) for name in ("row", "col", "data"))
                coo = _resolve("scipy.sparse:coo_array" if "array" in cls.__name__ else "scipy.sparse:coo_matrix")
                value = cls(coo((data, (row, col)), shape=shape))
        elif kind == "object":
            cls = self._class(node)
            value = cls.__new__(cls)
            self.made[node.name] = value
            for name, member in self._members(node).items():
                _set(value, name, member)
        else:
            raise ModelError(f"{self.path}: {node.name} is not a part of a saved model (kind {kind!r})")
        self.made[node.name] = value
        return value

    def _table(self, node: Any) -> list:
        """The objects of a table (see ``_Writer._write_table``): rows made and registered first,
        so that the objects of the columns may refer to them."""
        cls = self._class(node)
        rows = [cls.__new__(cls) for _ in range(int(node.attrs[".rows"]))]
        self.made[node.name] = rows
        self.made.update({f"{node.name}#{i}": row for i, row in enumerate(rows)})
        for name in json.loads(_text(node.attrs[".order"])):
            objects = self.read(node[f"{name}.objects"]) if f"{name}.objects" in node else []
            for row, text in zip(rows, node[name][()]):
                tag, value = json.loads(_text(text))
                _set(row, name, objects[value] if tag == "object" else _from_json(tag, value))
        return rows

    def _members(self, g: Any) -> dict[str, Any]:
        """The members of a group by name, read in the order they were written (an object's
        ``.order``, a sequence's indices), so that a reference finds its target built: attributes
        (typed by ``.types``) and child groups and datasets."""
        types_ = json.loads(_text(g.attrs.get(".types", "{}")))
        order = g.attrs.get(".order")
        names = json.loads(_text(order)) if order is not None else [str(i) for i in range(len(types_) + len(g))]
        return {name: _typed(types_[name], g.attrs[name]) if name in types_ else self.read(g[name])
                for name in names}

    def _class(self, node: Any, sparse: bool = False) -> type:
        path = _text(node.attrs[".class"])
        module = path.partition(":")[0]
        if not (module.startswith("scipy.sparse") if sparse else _allowed_class(module)):
            raise ModelError(f"{self.path}: {node.name} names the class {path}; a model file rebuilds only "
                             "flexmb's classes, so it is not loaded")
        cls = _resolve(path)
        if not isinstance(cls, type):
            raise ModelError(f"{self.path}: {node.name} names the class {path}, which this flexmb does not have")
        return cls

    def _array(self, d: Any) -> np.ndarray:
        dtype = np.dtype(_text(d.attrs[".dtype"]))
        if dtype.kind == "U":
            a = np.array([_text(s) for s in d[()].ravel()], dtype=dtype).reshape(d.shape)
        else:
            a = np.array(d[()], dtype=dtype).reshape(d.shape)
        if _text(d.attrs.get(".order", "C")) == "F":
            a = np.asfortranarray(a)
        if d.attrs.get(".readonly", False):
            a.flags.writeable = False
        return a


def _set(obj: Any, name: str, value: Any) -> None:
    """Set an attribute as restoring state does: into ``__dict__`` (past frozen dataclasses and
    properties), or into a slot."""
    if hasattr(obj, "__dict__") and not any(name in _slots(c) for c in type(obj).__mro__):
        obj.__dict__[name] = value
    else:
        object.__setattr__(obj, name, value)


def _slots(cls: type) -> tuple[str, ...]:
    slots = cls.__dict__.get("__slots__", ())
    return (slots,) if isinstance(slots, str) else tuple(slots)


def _typed(tag: str, value: Any) -> Any:
    """The Python or numpy scalar of type ``tag`` from an attribute value."""
    if tag == "none":
        return None
    if tag == "reference":
        found = _resolve(_text(value))
        if found is None:
            raise ModelError(f"the model file refers to the function {_text(value)}, which cannot be imported "
                             "here (is its module on the Python path?)")
        return found
    if tag.startswith("numpy:"):
        return np.asarray(value, dtype=np.dtype(tag[6:]))[()]
    if tag == "bytes":
        return bytes(value.tobytes())
    if tag == "bigint":
        return int(_text(value))
    if tag == "str":
        return _text(value)
    return {"bool": bool, "int": int, "float": float, "complex": complex}[tag](value)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _h5py() -> Any:
    """h5py, imported on first use (``import flexmb`` stays light)."""
    try:
        import h5py
    except ImportError as exc:                       # a dependency, but say what to do
        raise ImportError("flexmb model files need h5py: pip install h5py") from exc
    return h5py
