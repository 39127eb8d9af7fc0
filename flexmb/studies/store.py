"""The study file ``DIR/study.h5``: written one variant at a time, read back into a table.

It is written the way result files are (:mod:`flexmb.io.result_file`): HDF5 in SWMR mode
through the :class:`~flexmb.io.guarded_file.FaultGuard`, every dataset created when the file is
made and only appended to afterwards, every record *committed* by a second flush of the counts
in ``/committed``, Fletcher32 checksums on every dataset. So:

* a study killed at any moment (SIGKILL, also while a record or the close is written) leaves a
  file that holds every committed variant, and ``resume`` continues from it;
* a write that fails (disk full, file size limit) leaves the file at its last committed record
  with status ``failed`` and ends the run with :class:`StudyFileError`, naming the file and the
  variants it keeps;
* a file is made complete, under a temporary name beside it, and renamed into place: a new run,
  and a resumed one (which copies the intact records of the old file into a new one), never
  leaves a half-made ``study.h5``, and the old file stays as it was until the new one is ready;
* every record has a CRC-32 of its own, so damaged bytes (a disk, a copy) name the variants they
  hit; their neighbours in the same HDF5 chunk still load. :func:`read_study` refuses a file with
  damaged records, naming them; a resumed study computes them again.

Layout, format version 2 (n = committed records)::

    /             attrs: format = "flexmb-study", format_version, name, description,
                  parameters (JSON list), kind (of the space), flexmb_version, created,
                  units (JSON object: name -> unit; absent in files written before it)
    /status       (1,) bytes: "running" while written (and if the run was killed), "finished",
                  "failed" (an error ended the run, or the file could not be written)
    /committed    (3,) int64: records, value floats and text bytes written completely
    /space        values (n_variants, n_parameters), ids (n_variants,) S12: the space of the run
    /records      one row per record, in the order the variants finished:
      id          (>= n,) S12 the variant's id
      end         (>= n, 2) int64: record i's text is text[end[i-1, 0]:end[i, 0]], its values
                  values[end[i-1, 1]:end[i, 1]]
      text        (>= n_chars,) uint8: per record a JSON object, UTF-8: id, parameters, seconds,
                  worker, error ("" when it ran), quantities ([name, shape] in run's order)
      values      (>= n_values,) float64: the quantities' values, flattened one after the other
      checksum    (>= n,) uint32: CRC-32 of the record's end row, text and values

A variant's last record counts: a failed variant run again gets a new record. Version 1 files
(one HDF5 group per variant, written in place) are still read, and resumed into version 2.
"""
from __future__ import annotations

import datetime
import json
import os
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from flexmb.checks import FlexmbWarning, ModelError
from flexmb.io.guarded_file import FaultGuard, clear_open_flags, lock_for_writing
from flexmb.io.result_file import failure_reason, growable_dataset, h5py_module, open_for_reading
from flexmb.studies.space import Space

FILE_NAME = "study.h5"
LOCK_NAME = "study.lock"
FORMAT = "flexmb-study"
FORMAT_VERSION = 2
FORMAT_V1 = "flexmb-study-1"
STATUSES = ("running", "finished", "failed")
#: rows (bytes, floats) of one HDF5 chunk of the growing datasets
_ROWS, _TEXT_CHUNK, _VALUE_CHUNK = 64, 4096, 512
_ID, _STATUS = "S12", "S16"


class StudyFileError(OSError):
    """A study file could not be written: ``path`` is the file, ``records_on_disk`` the variant
    records it keeps intact (None if it was not made), ``cause`` the operating system's error."""

    def __init__(self, message: str, path: str | Path, records_on_disk: int | None = None,
                 cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.path = Path(path)
        self.records_on_disk = records_on_disk
        self.cause = cause


@dataclass
class StoredStudy:
    """What a study file holds: its description, last space and every recorded variant."""

    path: Path
    name: str
    description: str
    space: Space | None           # None only when read with damaged="drop" and /space is damaged
    records: dict                 # variant id -> {"parameters", "values", "seconds", "worker", "error"}
    status: str = "finished"
    #: damaged records (their ids, or "record i" when the id itself is unreadable), see read_study
    damaged: list[str] = field(default_factory=list)
    #: unit of each parameter and quantity by name ({} when the study gave none)
    units: dict[str, str] = field(default_factory=dict)


# ------------------------------------------------------------------------ writing
class StudyWriter:
    """Writes ``study.h5`` (see the module docstring): made complete under a temporary name with
    ``records`` (variant id -> record) and renamed over ``path``, then one record per
    :meth:`append`; :meth:`close` stores the status."""

    def __init__(self, path: Path, name: str, description: str, space: Space, records: dict,
                 units: dict[str, str] | None = None) -> None:
        from flexmb import __version__

        h5py = h5py_module()
        self.path = Path(path)
        self._n = self._n_values = self._n_chars = 0
        self._closed = False
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            fd = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o666)
        except OSError as exc:
            raise StudyFileError(f"study file {self.path}: cannot create {temporary.name} beside it "
                                 f"({exc.strerror})", self.path, cause=exc) from None
        self._guard = FaultGuard(fd)
        self._guard.creating = True
        try:
            lock_for_writing(fd, self.path)
            self._f = f = h5py.File(self._guard, "w", libver="latest")
            f.attrs.update({"format": FORMAT, "format_version": FORMAT_VERSION, "name": name,
                            "description": description, "parameters": json.dumps(list(space.names)),
                            "kind": space.kind, "flexmb_version": __version__,
                            "created": datetime.datetime.now().isoformat(timespec="seconds"),
                            "units": json.dumps(units or {})})
            self._status = f.create_dataset("status", data=np.array([b"running"], dtype=_STATUS), chunks=(1,),
                                            maxshape=(1,), fletcher32=True)
            self._committed = f.create_dataset("committed", data=np.zeros(3, dtype=np.int64), chunks=(3,),
                                               maxshape=(3,), fletcher32=True)
            g = f.create_group("space")
            growable_dataset(g, "values", space.values)
            growable_dataset(g, "ids", np.array(space.ids, dtype=_ID), dtype=_ID)
            g = f.create_group("records")
            self._ds = {"id": growable_dataset(g, "id", shape=(), dtype=_ID, rows=_ROWS),
                        "end": growable_dataset(g, "end", shape=(2,), dtype=np.int64, rows=_ROWS),
                        "text": growable_dataset(g, "text", shape=(), dtype=np.uint8, rows=_TEXT_CHUNK),
                        "values": growable_dataset(g, "values", shape=(), rows=_VALUE_CHUNK),
                        "checksum": growable_dataset(g, "checksum", shape=(), dtype=np.uint32, rows=_ROWS)}
            f.swmr_mode = True
            self._guard.creating = False
            info = self._status.id.get_chunk_info(0)
            self._guard.in_place = (int(info.byte_offset), int(info.size))   # status: also after a fault
            self._flush()
            self._write([dict(record, id=vid) for vid, record in records.items()])
        except StudyFileError as exc:
            _remove(temporary)
            raise StudyFileError(self._not_made(exc.cause), self.path, cause=exc.cause) from None
        except BaseException:
            self._abandon()
            _remove(temporary)
            raise
        try:
            os.replace(temporary, self.path)
        except OSError as exc:
            self._abandon()
            _remove(temporary)
            raise StudyFileError(self._not_made(exc), self.path, cause=exc) from None

    def append(self, vid: str, record: dict) -> None:
        """Write and commit one variant's record (``parameters``, ``values``, ``seconds``,
        ``worker``, ``error``)."""
        if self._closed:
            raise StudyFileError(f"study file {self.path} is closed", self.path, self._n)
        self._write([dict(record, id=vid)])

    def close(self, status: str = "finished") -> None:
        """Store ``status`` ("finished", or "failed" when an error ended the run) and close."""
        if self._closed:
            return
        if status not in STATUSES:
            raise ValueError(f"status {status!r}; allowed: {', '.join(STATUSES)}")
        try:
            self._status[0] = status.encode()
            self._flush()
        except OSError as exc:
            if isinstance(exc, StudyFileError):
                raise
            self._fault(exc)
        self._shut()

    def _write(self, records: list[dict]) -> None:
        """Append ``records`` (each with its ``id``) and commit them: their rows are flushed, then
        the counts that make them part of the file."""
        if not records:
            return
        h5s = h5py_module().h5s
        texts, values, ends, sums = [], [], [], []
        n_chars, n_values = self._n_chars, self._n_values
        for r in records:
            quantities = {q: np.asarray(v, dtype=float) for q, v in r["values"].items()}
            text = json.dumps({"id": r["id"], "parameters": r["parameters"], "seconds": r["seconds"],
                               "worker": r["worker"], "error": r["error"],
                               "quantities": [[q, list(v.shape)] for q, v in quantities.items()]}).encode()
            flat = np.concatenate([v.ravel() for v in quantities.values()]) if quantities else np.zeros(0)
            n_chars, n_values = n_chars + len(text), n_values + flat.size
            end = np.array([n_chars, n_values], dtype=np.int64)
            texts.append(text)
            values.append(flat)
            ends.append(end)
            sums.append(_checksum(end, text, flat))
        blocks = {"id": np.array([r["id"] for r in records], dtype=_ID), "end": np.array(ends),
                  "text": np.frombuffer(b"".join(texts), dtype=np.uint8), "values": np.concatenate(values),
                  "checksum": np.array(sums, dtype=np.uint32)}
        starts = {"id": self._n, "end": self._n, "text": self._n_chars, "values": self._n_values,
                  "checksum": self._n}
        try:
            for name, block in blocks.items():
                if block.size == 0:
                    continue
                # h5py's low-level calls, as the result writer: its resize and slicing cost 0.3 ms per call
                dsid, k = self._ds[name].id, starts[name]
                dsid.set_extent((k + len(block), *block.shape[1:]))
                rows = dsid.get_space()
                rows.select_hyperslab((k,) + (0,) * (block.ndim - 1), block.shape)
                dsid.write(h5s.create_simple(block.shape), rows, np.ascontiguousarray(block))
            self._flush()                                     # the rows, then the counts that commit them
            counts = np.array([self._n + len(records), n_values, n_chars], dtype=np.int64)
            self._committed.id.write(h5s.ALL, h5s.ALL, counts)
            self._flush()
        except OSError as exc:
            if isinstance(exc, StudyFileError):
                raise
            self._fault(exc)                                  # from h5py: an error HDF5 met itself
        self._n, self._n_values, self._n_chars = self._n + len(records), n_values, n_chars

    def _flush(self) -> None:
        self._f.flush()
        if self._guard.fault is not None:
            self._fault(self._guard.fault)

    def _fault(self, cause: OSError) -> None:
        """A write failed: the disk keeps the last committed record; mark the file failed, close, raise."""
        status_stored = False
        try:
            self._guard.fault = self._guard.fault or cause    # nothing more reaches the disk but the status
            self._status[0] = b"failed"
            self._f.flush()
            info = self._status.id.get_chunk_info(0)
            status_stored = os.pread(self._guard.fd, 16, int(info.byte_offset)).rstrip(b"\0") == b"failed"
        except Exception:                                     # noqa: BLE001  the cause is the error to report
            pass
        self._closed = True
        try:
            if self._f.id.valid:
                self._f.close()
        finally:
            try:
                clear_open_flags(self._guard.fd)
            except (OSError, ValueError):
                pass                                          # SWMR readers still open it
            os.close(self._guard.fd)
        n = self._n
        raise StudyFileError(f"study file {self.path}: writing failed: {failure_reason(cause)}; the file keeps the {n} "
                             f"variant record{'' if n == 1 else 's'} written before"
                             f"{', status failed' if status_stored else ''} (resume the study once there is room)",
                             self.path, records_on_disk=n, cause=cause)

    def _not_made(self, cause: BaseException | None) -> str:
        before = (f"{self.path} is as it was before" if self.path.exists() else "no study file was made")
        return f"study file {self.path}: cannot write it: {failure_reason(cause)}; {before}"

    def _shut(self) -> None:
        self._closed = True
        try:
            if self._f.id.valid:
                self._f.close()
        finally:
            os.close(self._guard.fd)

    def _abandon(self) -> None:
        """Close after an error while the file was made (it is removed)."""
        self._closed = True
        f = getattr(self, "_f", None)
        try:
            if f is not None and f.id.valid:
                f.close()
        except Exception:                                     # noqa: BLE001  the first error is the one to report
            pass
        finally:
            os.close(self._guard.fd)


class StudyStore:
    """The records of one study run in ``DIR/study.h5``, and the folder's lock.

    A new file is made unless ``resume`` (over an existing one only if it holds no variant yet);
    with ``resume`` an existing file must belong to the same study (name and parameter names): its
    intact records are copied into the new file, and :attr:`done` lists its completed variants
    (a damaged record is computed again, with a :class:`~flexmb.checks.FlexmbWarning`). The
    store holds the folder's lock (``study.lock``) until :meth:`close`; as a context manager it
    closes the file with status "failed" when the run raised.
    """

    def __init__(self, folder: Path, name: str, description: str, space: Space, resume: bool,
                 units: dict[str, str] | None = None) -> None:
        self.path = Path(folder) / FILE_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = _lock(self.path.with_name(LOCK_NAME), self.path)
        self._writer: StudyWriter | None = None
        try:
            for stale in self.path.parent.glob(f".{FILE_NAME}.*.tmp"):   # of a run killed while it made one
                _remove(stale)
            records: dict = {}
            if self.path.exists():
                stored = read_study(self.path, damaged="drop")
                if not resume and (stored.records or stored.damaged):
                    raise ModelError(f"{self.path} exists: resume the study (resume=True, --resume) or choose "
                                     "another output folder")
                if resume:
                    _check_same_study(stored, name, space)
                    records = stored.records
                    if stored.damaged:
                        warnings.warn(f"study file {self.path}: the records of {_listed(stored.damaged)} are "
                                      "damaged (their checksums fail); those variants are computed again",
                                      FlexmbWarning, stacklevel=3)
            self._shapes: dict[str, tuple] = {}                     # quantity -> shape of its first value
            self.done: set[str] = set()
            for vid, record in records.items():
                if not record["error"]:
                    self._add_done(vid, record)
            self._writer = StudyWriter(self.path, name, description, space, records, units)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> "StudyStore":
        return self

    def __exit__(self, kind, value, traceback) -> None:
        self.close("finished" if kind is None else "failed")

    def close(self, status: str = "finished") -> None:
        """Close the file with ``status`` and release the folder's lock."""
        try:
            if self._writer is not None:
                writer, self._writer = self._writer, None
                writer.close(status)
        finally:
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
        """Write one variant's record (a later record of a variant replaces its earlier one)."""
        if self._writer is None:
            raise StudyFileError(f"study file {self.path} is closed", self.path)
        try:
            self._writer.append(vid, {**record, "parameters": params})
        except StudyFileError:
            self._writer = None                               # a failed write has closed the file
            raise
        if not record["error"]:
            self._add_done(vid, record)

    def _add_done(self, vid: str, record: dict) -> None:
        self.done.add(vid)
        for quantity, value in record["values"].items():
            self._shapes.setdefault(quantity, np.shape(value))


def _lock(lock_path: Path, path: Path) -> int | None:
    """Hold an advisory lock on ``lock_path`` for the run, so that two runs never write ``path``
    together; None without fcntl."""
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
    names = _parameter_names(stored)
    if names != space.names:
        raise ModelError(f"{stored.path} holds study {name!r} with parameters {list(names)}, "
                         f"the space now has {list(space.names)}: a changed space needs another output folder")


def _parameter_names(stored: StoredStudy) -> tuple[str, ...]:
    if stored.space is not None:
        return stored.space.names
    return tuple(next(iter(stored.records.values()))["parameters"]) if stored.records else ()


# ------------------------------------------------------------------------ reading
def read_study(path: Path | str, damaged: str = "raise") -> StoredStudy:
    """Everything a study file holds, also while a run writes it or after its run was killed
    (the committed records). Errors name the file. Records whose checksum fails are refused
    (``damaged="raise"``: a :class:`~flexmb.checks.ModelError` naming their variants) or left
    out and listed in :attr:`StoredStudy.damaged` (``"drop"``, as a resumed study reads it)."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"study file {path} does not exist")
    try:
        f = open_for_reading(path)
    except OSError as exc:
        raise ModelError(f"cannot read study file {path}: {exc}; move it away to start the study anew") from None
    try:
        with f:
            fmt = f.attrs.get("format")
            if fmt == FORMAT_V1:
                return _read_v1(f, path)
            if fmt != FORMAT:
                raise ModelError(f"{path} is not a flexmb study file (format {fmt!r})")
            if int(f.attrs["format_version"]) > FORMAT_VERSION:
                raise ModelError(f"{path} has study format version {f.attrs['format_version']}; this flexmb reads "
                                 f"up to {FORMAT_VERSION} (update flexmb)")
            stored = _read_v2(f, path, damaged, h5py_module())
    except (OSError, KeyError) as exc:                        # damaged HDF5 structure, a missing part
        raise ModelError(f"cannot read study file {path}: it is damaged ({exc}); move it away to start the "
                         "study anew") from None
    if stored.damaged and damaged == "raise":
        raise ModelError(f"study file {path}: the records of {_listed(stored.damaged)} are damaged (their "
                         "checksums fail); resume the study (resume=True, --resume) to compute them again")
    return stored


def _read_v2(f, path: Path, damaged: str, h5py) -> StoredStudy:
    names = tuple(json.loads(f.attrs["parameters"]))
    try:
        space = Space(names, f["space/values"][()], str(f.attrs["kind"]))
    except OSError:
        if damaged == "raise":
            raise ModelError(f"study file {path}: dataset /space is damaged (its checksum fails); resume the "
                             "study (resume=True, --resume) to write it again") from None
        space = None
    n, n_values, n_chars = (int(x) for x in f["committed"][()])
    status = f["status"][0].decode(errors="replace").rstrip("\0")
    g = f["records"]
    ids, bad_ids = _read_checked(g["id"], n)
    ends, bad_ends = _read_checked(g["end"], n)
    text, _ = _read_checked(g["text"], n_chars)
    values, _ = _read_checked(g["values"], n_values)
    sums, _ = _read_checked(g["checksum"], n)
    text = text.tobytes()
    records: dict = {}
    lost: dict[str, None] = {}                                 # damaged, in file order
    start = np.zeros(2, dtype=np.int64)
    for i in range(n):
        end = ends[i]
        t0, v0 = (int(x) for x in start)
        t1, v1 = (int(x) for x in end)
        intact = (0 <= t0 <= t1 <= n_chars and 0 <= v0 <= v1 <= n_values
                  and _checksum(end, text[t0:t1], values[v0:v1]) == int(sums[i]))
        record = json.loads(text[t0:t1]) if intact else None
        vid = record["id"] if intact else (ids[i].decode(errors="replace") if not bad_ids[i] else f"record {i}")
        if intact:
            flat, k = values[v0:v1], 0
            quantities = {}
            for q, shape in record["quantities"]:
                size = int(np.prod(shape))
                quantities[q] = float(flat[k]) if not shape else flat[k:k + size].reshape(shape).copy()
                k += size
            records[vid] = {"parameters": record["parameters"], "values": quantities,
                            "seconds": float(record["seconds"]), "worker": record["worker"], "error": record["error"]}
            lost.pop(vid, None)
        else:
            records.pop(vid, None)
            lost[vid] = None
        if not bad_ends[i]:
            start = end
    return StoredStudy(path, str(f.attrs["name"]), str(f.attrs["description"]), space, records, status, list(lost),
                       json.loads(f.attrs.get("units", "{}")))


def _read_checked(ds, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` rows of ``ds`` and a mask (n,) of the rows in chunks whose Fletcher32
    checksum failed: those rows are read as stored, unchecked (the records' own checksums tell
    which are damaged), or as zeros when even the chunk's place in the file is unreadable."""
    try:
        return ds[:n], np.zeros(n, dtype=bool)
    except OSError:
        pass
    out = np.zeros((n, *ds.shape[1:]), dtype=ds.dtype)
    bad = np.zeros(n, dtype=bool)
    rows = ds.chunks[0]
    for k in range(0, n, rows):
        stop = min(k + rows, n)
        try:
            out[k:stop] = ds[k:stop]
            continue
        except OSError:
            bad[k:stop] = True
        try:
            _, raw = ds.id.read_direct_chunk((k,) + (0,) * (ds.ndim - 1))
            chunk = np.frombuffer(raw[:-4], dtype=ds.dtype).reshape((-1, *ds.shape[1:]))   # 4 bytes: Fletcher32
            out[k:stop] = chunk[:stop - k]
        except (OSError, ValueError):
            pass
    return out, bad


def _read_v1(f, path: Path) -> StoredStudy:
    """A study file of format 1 (flexmb before version 2: one group per variant, no checksums)."""
    names = json.loads(f.attrs["parameters"])
    space = Space(names, f["space/values"][()], str(f.attrs["kind"]))
    records = {}
    for vid, group in f["variants"].items():
        values = {q: (float(d[()]) if d.ndim == 0 else d[()]) for q, d in group.items()}
        records[vid] = {"parameters": json.loads(group.attrs["parameters"]), "values": values,
                        "seconds": float(group.attrs["seconds"]), "worker": str(group.attrs["worker"]),
                        "error": str(group.attrs["error"])}
    return StoredStudy(path, str(f.attrs["name"]), str(f.attrs["description"]), space, records)


# ------------------------------------------------------------------------ helpers
def _checksum(end: np.ndarray, text: bytes, values: np.ndarray) -> int:
    """CRC-32 of a record: its end row (2,) int64, its text and its values (float64)."""
    crc = zlib.crc32(np.ascontiguousarray(end, dtype="<i8").tobytes())
    crc = zlib.crc32(text, crc)
    return zlib.crc32(np.ascontiguousarray(values, dtype="<f8").tobytes(), crc)


def _listed(ids: list[str], at_most: int = 6) -> str:
    shown = ", ".join(ids[:at_most]) + (f" and {len(ids) - at_most} more" if len(ids) > at_most else "")
    return f"variant{'s' if len(ids) > 1 else ''} {shown}"


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
