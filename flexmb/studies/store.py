"""The study file ``DIR/study.h5``: written one variant at a time, read back into a table.

Layout (HDF5, h5py)::

    /             attrs: format, name, description, parameters (JSON list), kind (of the space)
    /space        values (n_variants, n_parameters), ids (n_variants,): the space of the last run
    /variants/ID  attrs: parameters (JSON), seconds, worker, error ("" when it ran);
                  one dataset per quantity (0-d: a number, 1-D: an array)

Every variant is written by opening, writing and closing the file, so a study that is killed
loses only the variants that were running; a failed variant's group is replaced when it is run
again. A variant counts as done when its group has no error.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from flexmb.checks import ModelError
from flexmb.studies.space import Space

FILE_NAME = "study.h5"
LOCK_NAME = "study.lock"
FORMAT = "flexmb-study-1"


@dataclass
class StoredStudy:
    """What a study file holds: its description, last space and every recorded variant."""

    path: Path
    name: str
    description: str
    space: Space
    records: dict          # variant id -> {"parameters", "values", "seconds", "worker", "error"}


class StudyStore:
    """Appends the records of one study run to ``DIR/study.h5``.

    A new file is made unless ``resume`` (over an existing one only if it holds no variant yet); with ``resume`` an existing file must belong to the
    same study (name and parameter names), and :attr:`done` lists its completed variants. The
    store holds the folder's lock (``study.lock``) until :meth:`close`.
    """

    def __init__(self, folder: Path, name: str, description: str, space: Space, resume: bool) -> None:
        import h5py

        self.path = Path(folder) / FILE_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = _lock(self.path.with_name(LOCK_NAME), self.path)
        try:
            self.done: set[str] = set()
            self._shapes: dict[str, tuple] = {}                     # quantity -> shape of its first value
            if self.path.exists():
                stored = read_study(self.path)
                if not resume and stored.records:
                    raise ModelError(f"{self.path} exists: resume the study (resume=True, --resume) or choose "
                                     "another output folder")
                if not resume:                                  # a run that stopped before its first variant
                    self.path.unlink()
                else:
                    _check_same_study(stored, name, space)
                    for vid, record in stored.records.items():
                        if not record["error"]:
                            self.done.add(vid)
                            for quantity, value in record["values"].items():
                                self._shapes.setdefault(quantity, np.shape(value))
            with h5py.File(self.path, "a") as f:
                f.attrs.update({"format": FORMAT, "name": name, "description": description,
                                "parameters": json.dumps(list(space.names)), "kind": space.kind})
                if "space" in f:
                    del f["space"]
                group = f.create_group("space")
                group["values"] = space.values
                group["ids"] = np.array(space.ids, dtype="S12")
                f.require_group("variants")
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Release the folder's lock (the file is closed after every write)."""
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def check_shapes(self, values: dict) -> str:
        """An error text if a quantity's shape differs from earlier variants' (else "")."""
        for quantity, value in values.items():
            shape = self._shapes.get(quantity)
            if shape is not None and shape != np.shape(value):
                return (f"quantity {quantity!r} has shape {np.shape(value)}, earlier variants {shape}: "
                        "a quantity must have the same length in every variant")
        return ""

    def append(self, vid: str, params: dict, record: dict) -> None:
        """Write one variant's record (replacing an earlier failed one) and close the file."""
        import h5py

        with h5py.File(self.path, "a") as f:
            variants = f["variants"]
            if vid in variants:
                del variants[vid]
            group = variants.create_group(vid, track_order=True)   # quantities in run's order
            group.attrs.update({"parameters": json.dumps(params), "seconds": record["seconds"],
                                "worker": record["worker"], "error": record["error"]})
            for quantity, value in record["values"].items():
                group[quantity] = value
        if not record["error"]:
            self.done.add(vid)
            for quantity, value in record["values"].items():
                self._shapes.setdefault(quantity, np.shape(value))


def _lock(lock_path: Path, path: Path) -> int | None:
    """Hold an advisory lock on ``lock_path`` for the run, so that two runs never write ``path``
    together (HDF5 locks a file only while it is open, between variants); None without fcntl."""
    try:
        import fcntl
    except ImportError:                                         # Windows: no advisory locks
        return None
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ModelError(f"{path} is being written by another study run (it holds {lock_path.name}); wait for "
                         "it to end or choose another output folder") from None
    return fd


def _check_same_study(stored: StoredStudy, name: str, space: Space) -> None:
    if stored.name != name:
        raise ModelError(f"{stored.path} holds the study {stored.name!r}, not {name!r}: choose another output "
                         "folder, or give the study its old name")
    if stored.space.names != space.names:
        raise ModelError(f"{stored.path} holds study {name!r} with parameters {list(stored.space.names)}, "
                         f"the space now has {list(space.names)}: a changed space needs another output folder")


def read_study(path: Path | str) -> StoredStudy:
    """Everything a study file holds (errors name the file)."""
    import h5py

    path = Path(path)
    if not path.is_file():
        raise ModelError(f"study file {path} does not exist")
    try:
        with h5py.File(path, "r") as f:
            if f.attrs.get("format") != FORMAT:
                raise ModelError(f"{path} is not a flexmb study file (format {f.attrs.get('format')!r})")
            names = json.loads(f.attrs["parameters"])
            space = Space(names, f["space/values"][()], str(f.attrs["kind"]))
            records = {}
            for vid, group in f["variants"].items():
                values = {q: (float(d[()]) if d.ndim == 0 else d[()]) for q, d in group.items()}
                records[vid] = {"parameters": json.loads(group.attrs["parameters"]), "values": values,
                                "seconds": float(group.attrs["seconds"]), "worker": str(group.attrs["worker"]),
                                "error": str(group.attrs["error"])}
            return StoredStudy(path, str(f.attrs["name"]), str(f.attrs["description"]), space, records)
    except OSError as exc:
        raise ModelError(f"cannot read study file {path}: {exc}") from None
