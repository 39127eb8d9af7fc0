"""The flexmb result file: one HDF5 file per run, written step by step (h5py).

HDF5 rather than compressed ``.npz``: an ``.npz`` is a zip archive that can only be rewritten
as a whole, while an HDF5 dataset grows in place, so output steps are appended and flushed to
disk while the run goes on. The files open in any HDF5 tool (h5py, h5dump, HDFView, MATLAB's
``h5read``; a file whose writer is still running or was killed opens in SWMR mode, e.g.
``h5dump --swmr`` or ``h5py.File(path, "r", swmr=True)``, or after ``h5clear --status``).

Writing
-------
Steps are written in blocks at most ``FLUSH_INTERVAL`` seconds (wall clock) apart, and the first
step at once; the environment variable ``FLEXMB_FLUSH_INTERVAL`` changes the interval (0: write
every step as it is computed). A block is *committed* in two flushes: first its rows and log
entries, then the counts in ``/committed``. A reader takes those counts as the truth, not the
datasets' lengths: a block cut off between two datasets leaves them with different lengths, and
HDF5 2.0 was seen to store a grown extent before the data that fills it when a write failed.

The file is written in HDF5's SWMR mode (single writer, multiple readers; ``libver="latest"``),
switched on once every dataset exists, at the first step: HDF5 then orders its writes so that the
file on disk is consistent after every write, and :func:`read_result` opens a file that another
process is writing (``flexmb info``/``plot`` on a running job) or that a killed process left
behind. SWMR forbids new datasets and attributes afterwards, so everything that changes during a
run (status, counts, the run log) is a dataset created at the start.

Every dataset carries a Fletcher32 checksum (HDF5 filter, chunked storage); all HDF5 metadata
(object headers, chunk indexes, superblock) has its own checksums in this format. A flipped bit
is reported on load with the file and the dataset named.

What is guaranteed
------------------
* An existing file is never replaced unless asked (``overwrite=True``; CLI ``--force``), never
  while another process writes it (an advisory ``flock`` held by the writer), and never while
  it is open through h5py in the same process (an input of the run).
* A run that ends with an error (a failed step, an exception in a user's load function, Ctrl-C)
  completes the file with every computed step and status ``failed`` before the error propagates.
* A process killed outright (SIGKILL, power loss of the process, not of the disk) leaves a file
  with every committed block: at most the last ``FLUSH_INTERVAL`` seconds of computation are
  lost (nothing with ``FLEXMB_FLUSH_INTERVAL=0``); its status stays ``running``.
* A write that fails (disk full ``ENOSPC``, file size limit ``EFBIG``, quota, I/O error): HDF5
  writes through a guard (:class:`~flexmb.io.guarded_file.FaultGuard`) that stops passing writes to the disk at the first
  failure, so the file on disk is exactly the consistent state of the last committed block (plus
  pieces of the failed block that nothing references). The writer then stores status ``failed``
  (an in-place overwrite of its 16-byte chunk, which succeeds on a full disk) and clears the
  superblock's "open for writing" flags in place, and the run ends with
  :class:`~flexmb.results.ResultFileError`: one line naming the file, the cause and the steps the
  file holds. Those steps load with :func:`read_result`. Not guaranteed: a disk that corrupts
  data already written, and durability against power loss (no fsync per block).
* A file whose first write (the model and the datasets, before any step) fails is not left
  behind: a new file is removed, and a file that ``overwrite=True`` replaces is written under a
  temporary name and renamed over the old one only once that write is complete, so the old file
  stays as it was; the error says so. :func:`save_result` (``Result.save`` and the ``save`` of
  modes) writes the whole file under a temporary name and renames it when complete: a saved file
  is whole or not there.
* A restart (``integrate(..., restart_from=path)``, :meth:`ResultWriter.reopen`) appends to the
  file from its last committed step; the rows past it (an interrupted block) are dropped.

Cost of writing, 1200-DOF planar beam, 15 datasets per step (``benchmarks/bench_result_file.py``):
1.4 ms per step written and flushed one by one (``FLEXMB_FLUSH_INTERVAL=0``; 0.09 ms per dataset),
0.3 ms per step in blocks of 10 steps, 0.2 ms in one block (format 1 without checksums, SWMR
and the guard: 6.3, 0.7 and 0.1 ms). Chunks are at most 16 KiB and 64 steps long: a flush
rewrites and checksums the chunks it touches, so small chunks keep step-by-step writing cheap.

Layout, format version 2 (arrays are float64 unless stated; n = committed steps)::

    /                   attrs: format = "flexmb-result", format_version, kind ("dynamic",
                        "static", "modes"), flexmb_version, created, meta (JSON: scheme, dt, t0, ...)
    /status             (1,) bytes: "running" while written (and if the writer was killed),
                        "finished", or "failed" when an error ended the run
    /committed          (3,) int64: steps, log events and cut-backs written completely
    /model              attrs: dim, joints (JSON list of names), sensors (JSON list of the
                        sensor definitions, :class:`~flexmb.sensors.Sensor`; absent: none),
                        joint_kinds (JSON list; with joints only), digest (JSON: part -> hash of
                        the model's data, :mod:`flexmb.model_digest`; older files lack it)
      coordinates       (n_nodes, dim) reference positions, m
      has_rotations     (n_nodes,) uint8: the node carries rotation DOFs
      point_masses      (n_pm, 2) node, mass (kg)
      prescribed        (n_p,) int64 global indices of prescribed DOFs
      joint_points      (n_joints, 3) reference joint points, m (with joints only; for pictures)
      joint_sides       (n_joints, 2) int64 nodes of sides A and B, -1 the ground
      bodies            rigid bodies (older files lack them): attrs names (JSON list), given (JSON
                        list: user shape or default link); nodes (n_b,) int64, masses (n_b,) kg,
                        inertia (n_b, 3, 3) kg m^2, shape_points (sum n_v, 3) m in body axes,
                        shape_faces VTK polygon arrays one after the other, shape_ends (n_b, 2)
                        int64 where each body's points and faces end
                        (the model's attrs also hold damping: JSON group name -> description
                        of its damping, {} undamped; older files lack it)
      groups/<i>        attrs: name, kind (element class), section (JSON), outputs (JSON name -> unit)
        connectivity    (n_el, 2) int64, (n_el, 3) for shells
        frames          (n_el, 3, 3) reference section frames (3D beams only)
        thickness       (n_el,) m (shells only)
        modal_mesh      modal bodies only (:class:`~flexmb.results.ModalMesh`; older files lack it):
                        attrs frame_node, section (JSON); dofs (n_m,) int64 global indices of q,
                        positions (n_b, dim) m, basis (n_b, dim, n_m), lines (n_l, 2) and
                        triangles (n_t, 3) int64, frames (n_l, 3, 3) the lines' reference
                        section frames (3D only; older files lack them)
    /saved_model        the whole model (:mod:`flexmb.io.model_file`; ``fm.load_model(path)`` rebuilds it),
                        as it was when the file was created; absent when a part of it cannot be saved
                        (a lambda load: a FlexmbWarning says so), for a result read from a file and
                        saved again, and in older files
    /steps
      <series>          (>= n, ...) the result's series, e.g. t, u, v, a, reactions, kinetic, ...
                        (series empty for this model, such as multipliers without joints, are left out)
      elements/<i>/<name>  (>= n, n_el) element output of group i, (>= n, n_el, k) for vector
                        outputs (a shell's membrane_forces, bending_moments)
      sensors/<name>    (>= n, k) the values of a sensor (k = 1 for a scalar)
    /log                the run log, >= committed events rows:
      at                (n_events,) time or load factor
      kind              (n_events,) bytes (16): "cutback", "warning", "error", "restart", ...
      end               (n_events,) int64: event i's message is text[end[i-1]:end[i]]
      text              (n_chars,) uint8: the messages, UTF-8, one after the other
    /reference          (n_dof,) state the modes are taken about (kind "modes" only)

Version 1 files (flexmb before this layout: status and cut-backs as root attributes, the log as
variable-length strings, no ``/committed``, no checksums) are read as before; they cannot be
restarted (they lack the accelerations). DOF numbering is node by node as in
:class:`~flexmb.dofs.DofMap`: translations, then the rotations of nodes that have them.
"""
from __future__ import annotations

import datetime
import errno
import json
import os
import time
import warnings
from pathlib import Path
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from flexmb.checks import FlexmbWarning
from flexmb.io.guarded_file import FaultGuard, ResultFileError, clear_open_flags, lock_for_writing
from flexmb.io.records import Event, GroupLayout, ModalMesh, ModelLayout
from flexmb.multibody.body_shapes import BodyLayout, BodyShape
from flexmb.sensors import Sensor

if TYPE_CHECKING:
    import h5py

    from flexmb.results.base import Result

FORMAT = "flexmb-result"
FORMAT_VERSION = 2
#: seconds of wall-clock time between block writes of the computed steps
FLUSH_INTERVAL = 0.2
#: largest chunk of a step series: bytes and steps (see "Cost of writing" above)
_CHUNK_BYTES = 1 << 14
_MAX_CHUNK_ROWS = 64
_STATUS_DTYPE = "S16"
STATUSES = ("running", "finished", "failed")


def h5py_module():
    """h5py, imported on first use (result and study files), with what to do if it is missing."""
    try:
        import h5py
    except ImportError as exc:                                   # a dependency, but say what to do
        raise ImportError("flexmb result files need h5py: pip install h5py") from exc
    return h5py


# ------------------------------------------------------------------------ opening
def _refuse_open_input(path: Path) -> None:
    """Refuse to write to a file that h5py holds open in this process (an input of the run)."""
    h5py = h5py_module()
    target = os.stat(path)
    for fid in h5py.h5f.get_obj_ids(types=h5py.h5f.OBJ_FILE):
        try:
            st = os.stat(os.fsdecode(h5py.h5f.get_name(fid)))
        except (OSError, ValueError):
            continue                                          # a file object or an in-memory file
        if (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino):
            raise ResultFileError(f"result file {path} is open for reading in this process (an input of "
                                  "this run); write the result to another file", path)


def _open_for_writing(path: Path, overwrite: bool) -> tuple[int, Path | None]:
    """File descriptor of a new result file for ``path``, locked, and checks the overwrite
    policy: ``path`` itself, made (atomically refusing an existing file), or with ``overwrite``
    of an existing file a temporary file beside it (returned too, else None) that the writer
    renames over ``path`` once its first write is complete, so that the old file stays whole if
    that write fails."""
    if path.suffix.lower() == ".npz":
        raise ValueError(f"{path}: flexmb result files are HDF5; use the suffix .h5")
    if path.is_dir():
        raise IsADirectoryError(f"result file {path} is a directory")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResultFileError(f"result file {path}: cannot create its folder {path.parent} ({exc.strerror})", path,
                              cause=exc) from None
    target, temporary = path, None
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)     # atomic: refuses an existing file
    except FileExistsError:
        if not overwrite:
            raise FileExistsError(f"result file {path} exists; pass overwrite=True to replace it "
                                  "(flexmb command line: --force)") from None
        _refuse_open_input(path)
        try:
            existing = os.open(path, os.O_RDONLY)
        except OSError as exc:
            raise ResultFileError(f"result file {path}: cannot open it for writing ({exc.strerror})", path,
                                  cause=exc) from None
        try:
            lock_for_writing(existing, path)                  # refuses a file that another run writes
        finally:
            os.close(existing)
        target = temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            fd = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o666)
        except OSError as exc:
            raise ResultFileError(f"result file {path}: cannot create {temporary.name} beside it ({exc.strerror})",
                                  path, cause=exc) from None
    except OSError as exc:
        if isinstance(exc, ResultFileError):
            raise
        raise ResultFileError(f"result file {path}: cannot create it ({exc.strerror})", path, cause=exc) from None
    try:
        lock_for_writing(fd, path)
    except BaseException:
        os.close(fd)
        _remove(target)
        raise
    return fd, temporary


# ------------------------------------------------------------------------ writing
def growable_dataset(group: h5py.Group, name: str, data: Any = None, *, shape: tuple[int, ...] | None = None,
                     dtype: Any = float, rows: int | None = None) -> h5py.Dataset:
    """A chunked dataset with a Fletcher32 checksum, growable along its first axis.

    ``data`` fills it; otherwise it starts empty with rows of ``shape``. ``rows`` is the chunk
    length along the first axis (default: the data's length).
    """
    if data is not None:
        data = np.asarray(data, dtype=dtype)
        shape = data.shape[1:]
        length = data.shape[0]
    else:
        length = 0
    chunk_rows = max(1, length if rows is None else rows)
    return group.create_dataset(name, (length, *shape), maxshape=(None, *shape), dtype=dtype, data=data,
                                chunks=(chunk_rows, *(max(1, s) for s in shape)), fletcher32=True)


class ResultWriter:
    """Appends the steps of a :class:`~flexmb.results.Result` to an HDF5 file in timed blocks.

    Use :class:`ResultWriter` (a new file) or :meth:`reopen` (continue a file for a restart);
    :meth:`append` adds steps, :meth:`event` log entries, :meth:`close` completes the file. Any
    failed write raises :class:`~flexmb.results.ResultFileError` and closes the file.
    """

    def __init__(self, path: str | Path, result: Result, flush_interval: float | None = None,
                 overwrite: bool = False) -> None:
        from flexmb import __version__

        h5py = h5py_module()
        self.path = Path(path)
        self._result = result
        fd, self._temporary = _open_for_writing(self.path, overwrite)
        self._guard = FaultGuard(fd)
        self._guard.creating = True
        self._made = False                                    # the first write is complete (and in place)
        try:
            self._f = h5py.File(self._guard, "w", libver="latest")
            f = self._f
            meta = {k: v for k, v in result.meta.items() if k not in ("status", "file")}
            f.attrs.update({"format": FORMAT, "format_version": FORMAT_VERSION, "kind": result.kind,
                            "flexmb_version": __version__, "meta": json.dumps(meta),
                            "created": datetime.datetime.now().isoformat(timespec="seconds")})
            self._status = f.create_dataset("status", data=np.array([b"running"], dtype=_STATUS_DTYPE),
                                            chunks=(1,), maxshape=(1,), fletcher32=True)
            self._committed = f.create_dataset("committed", data=np.zeros(3, dtype=np.int64), chunks=(3,),
                                               maxshape=(3,), fletcher32=True)
            if result.layout is not None:
                _write_layout(f.create_group("model"), result.layout)
                _write_saved_model(f, result.layout, self.path)
            reference = getattr(result, "reference", None)
            if reference is not None:
                growable_dataset(f, "reference", np.asarray(reference, dtype=float))
            f.create_group("steps")
            self._steps: dict[str, h5py.Dataset] | None = None    # created with the first step
            log = f.create_group("log")
            growable_dataset(log, "at", shape=(), rows=64)
            growable_dataset(log, "kind", shape=(), dtype=_STATUS_DTYPE, rows=64)
            growable_dataset(log, "end", shape=(), dtype=np.int64, rows=64)
            growable_dataset(log, "text", shape=(), dtype=np.uint8, rows=4096)
            self._start(flush_interval, n_steps=0, n_events=0, n_chars=0)
            self._flush()
            if self._temporary is not None:
                os.replace(self._temporary, self.path)
            self._made = True
        except ResultFileError:
            raise
        except BaseException:
            self._abandon()
            _remove(self._temporary or self.path)
            raise

    @classmethod
    def reopen(cls, path: str | Path, result: Result, flush_interval: float | None = None) -> "ResultWriter":
        """Continue the file ``result`` was loaded from: keep its first ``result.n_steps`` steps and
        ``len(result.events)`` log entries (rows past them are dropped) and append from there."""
        h5py = h5py_module()
        self = cls.__new__(cls)
        self.path = Path(path)
        self._result = result
        self._made, self._temporary = True, None
        try:
            fd = os.open(self.path, os.O_RDWR)
        except OSError as exc:
            raise ResultFileError(f"result file {self.path}: cannot open it for appending ({exc.strerror})",
                                  self.path, cause=exc) from None
        try:
            lock_for_writing(fd, self.path)
            _refuse_open_input(self.path)
            clear_open_flags(fd)
        except BaseException:
            os.close(fd)
            raise
        self._guard = FaultGuard(fd)
        self._guard.creating = True
        try:
            self._f = f = h5py.File(self._guard, "r+", libver="latest")
            if f.attrs.get("format") != FORMAT or int(f.attrs.get("format_version", 1)) < 2:
                raise ValueError(f"{self.path} is not a flexmb result file of format version {FORMAT_VERSION} "
                                 "(older files cannot be continued)")
            self._status, self._committed = f["status"], f["committed"]
            n, n_events = result.n_steps, len(result.events)
            steps_written, events_written, _ = (int(x) for x in self._committed[()])
            if n > steps_written or n_events > events_written:
                raise ValueError(f"{self.path} holds {steps_written} steps and {events_written} log entries, "
                                 f"fewer than the {n} and {n_events} to continue from")
            names: list[str] = []
            f["steps"].visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
            self._steps = {name: f["steps"][name] for name in names} or None
            for ds in (self._steps or {}).values():
                ds.resize(n, axis=0)
            log = f["log"]
            n_chars = int(log["end"][n_events - 1]) if n_events else 0
            for name, length in (("at", n_events), ("kind", n_events), ("end", n_events), ("text", n_chars)):
                log[name].resize(length, axis=0)
            self._status[0] = b"running"
            self._start(flush_interval, n_steps=n, n_events=n_events, n_chars=n_chars)
            self._commit()
            if self._steps:
                self._start_swmr()
        except ResultFileError:
            raise
        except BaseException:
            self._abandon()
            raise
        return self

    def _start(self, flush_interval: float | None, n_steps: int, n_events: int, n_chars: int) -> None:
        if flush_interval is None:
            flush_interval = float(os.environ.get("FLEXMB_FLUSH_INTERVAL", FLUSH_INTERVAL))
        self.flush_interval = flush_interval
        self._n, self._n_events, self._n_chars = n_steps, n_events, n_chars
        self._pending: list[dict[str, np.ndarray]] = []
        self._pending_events: list[Event] = []
        self._last_write = time.perf_counter()
        self._closed = False
        # the status chunk is overwritten in place, also after a fault (see FaultGuard)
        info = self._status.id.get_chunk_info(0)
        self._guard.in_place = (int(info.byte_offset), int(info.size))

    # ------------------------------------------------------------ appending
    @property
    def steps_written(self) -> int:
        """Steps committed to the file."""
        return self._n

    def append(self, record: dict[str, np.ndarray]) -> None:
        """Add one step: ``record`` maps series names (``elements/<i>/<name>`` for element
        outputs) to the step's values; written with the next block (the very first step at once)."""
        self._check_open()
        self._pending.append(record)
        if self._steps is None or time.perf_counter() - self._last_write >= self.flush_interval:
            self.write_pending()

    def event(self, event: Event) -> None:
        """Enter an event in the log and write everything pending (events are rare and matter)."""
        self._check_open()
        self._pending_events.append(event)
        self.write_pending()

    def write_pending(self) -> None:
        """Write and commit the steps and events added since the last block."""
        if not (self._pending or self._pending_events):
            return
        try:
            if self._pending:
                if self._steps is None:
                    self._create_steps(self._pending[0])
                self._write_steps()
            if self._pending_events:
                self._write_events()
            self._flush()                                     # the rows, then the counts that commit them
            self._commit()
        except ResultFileError:
            raise
        except OSError as exc:                                # from h5py: an error HDF5 met itself
            self._fault(exc)
        self._last_write = time.perf_counter()

    def _create_steps(self, first: dict[str, np.ndarray]) -> None:
        steps = self._f["steps"]
        self._steps = {}
        for name, value in first.items():
            value = np.asarray(value, dtype=float)
            if value.size == 0:                               # e.g. no multipliers without joints: read back empty
                continue
            rows = min(_MAX_CHUNK_ROWS, max(1, _CHUNK_BYTES // value.nbytes))
            self._steps[name] = growable_dataset(steps, name, shape=value.shape, rows=rows)
        self._start_swmr()

    def _start_swmr(self) -> None:
        """Switch to SWMR writing (every dataset exists now): readers may open the file from here."""
        self._f.swmr_mode = True
        self._guard.creating = False

    def _write_steps(self) -> None:
        k, m = self._n, len(self._pending)
        expected = set(self._steps)
        for record in self._pending:
            given = {name for name, v in record.items() if np.size(v)}
            if given != expected:
                raise ValueError(f"{self.path}: a step has the series {sorted(given)}, the file {sorted(expected)}")
        from h5py import h5s

        for name, ds in self._steps.items():
            # h5py's low-level calls: its Dataset.resize and slicing cost 0.3 ms per call here
            block = np.ascontiguousarray([r[name] for r in self._pending], dtype=float)   # (m, ...)
            dsid = ds.id
            dsid.set_extent((k + m, *block.shape[1:]))
            rows = dsid.get_space()
            rows.select_hyperslab((k,) + (0,) * (block.ndim - 1), block.shape)
            dsid.write(h5s.create_simple(block.shape), rows, block)

    def _write_events(self) -> None:
        log = self._f["log"]
        k, m = self._n_events, len(self._pending_events)
        texts = [e.message.encode() for e in self._pending_events]
        ends = self._n_chars + np.cumsum([len(t) for t in texts], dtype=np.int64)
        for name, values in (("at", np.array([e.at for e in self._pending_events], dtype=float)),
                             ("kind", np.array([e.kind.encode() for e in self._pending_events], dtype=_STATUS_DTYPE)),
                             ("end", ends)):
            log[name].resize(k + m, axis=0)
            log[name][k:k + m] = values
        text = np.frombuffer(b"".join(texts), dtype=np.uint8)
        if text.size:
            log["text"].resize(int(ends[-1]), axis=0)
            log["text"][self._n_chars:] = text

    def _commit(self) -> None:
        n = self._n + len(self._pending)
        n_events = self._n_events + len(self._pending_events)
        n_chars = self._n_chars + sum(len(e.message.encode()) for e in self._pending_events)
        counts = np.array([n, n_events, self._result.cutbacks], dtype=np.int64)
        self._committed.id.write(h5py_module().h5s.ALL, h5py_module().h5s.ALL, counts)
        self._flush()
        self._n, self._n_events, self._n_chars = n, n_events, n_chars
        self._pending, self._pending_events = [], []

    def _flush(self) -> None:
        self._f.flush()
        if self._guard.fault is not None:
            self._fault(self._guard.fault)

    # ------------------------------------------------------------ ending
    def close(self, status: str = "finished") -> None:
        """Write what is pending, store ``status`` ("finished" or "failed") and close the file."""
        if self._closed:
            return
        if status not in STATUSES:
            raise ValueError(f"status {status!r}; allowed: {', '.join(STATUSES)}")
        self.write_pending()
        try:
            self._status[0] = status.encode()
            self._commit()                                    # the final cut-back count with it
        except ResultFileError:
            raise
        except OSError as exc:
            self._fault(exc)
        self._shut()

    def _fault(self, cause: OSError) -> None:
        """A write failed: keep the disk at the last committed block, mark it failed, close, raise."""
        self._pending, self._pending_events = [], []
        status_stored = False
        try:
            self._guard.fault = self._guard.fault or cause    # nothing more reaches the disk but the status
            self._status[0] = b"failed"
            self._f.flush()
            status_stored = self._read_back_status() == b"failed"
        except Exception:                                     # the cause is the error to report
            pass
        self._shut(clear_flags=True)
        reason = failure_reason(cause)
        if not self._made:                                    # the file never held a complete write
            _remove(self._temporary or self.path)
            before = (f"{self.path} is as it was before" if self._temporary is not None
                      else "no file was made")
            raise ResultFileError(f"result file {self.path}: cannot write it: {reason}; {before}", self.path,
                                  cause=cause) from None
        holds = f"the file keeps the {self._n} step{'' if self._n == 1 else 's'} written before"
        if self._n:
            holds += f" (up to {self._result.parameter_name} = {self._result.parameter[self._n - 1]:.6g})"
        holds += ", status 'failed'" if status_stored else ", status not updated"
        raise ResultFileError(f"result file {self.path}: writing step {self._n} failed: {reason}; {holds}",
                              self.path, steps_on_disk=self._n, cause=cause) from None

    def _read_back_status(self) -> bytes:
        info = self._status.id.get_chunk_info(0)
        return os.pread(self._guard.fd, 16, int(info.byte_offset)).rstrip(b"\0")

    def _shut(self, clear_flags: bool = False) -> None:
        """Close HDF5 and the file (with ``clear_flags``: clear the superblock's open flags, which a
        guarded close after a fault never wrote)."""
        self._closed = True
        self._guard.creating = False
        try:
            if self._f.id.valid:
                self._f.close()
        finally:
            if clear_flags:
                try:
                    clear_open_flags(self._guard.fd)
                except (OSError, ValueError):
                    pass                                      # SWMR readers still open it
            os.close(self._guard.fd)

    def _abandon(self) -> None:
        """Close after an error during set-up (the file is incomplete)."""
        f = getattr(self, "_f", None)
        self._closed = True
        self._guard.creating = False
        try:
            if f is not None and f.id.valid:
                f.close()
        finally:
            os.close(self._guard.fd)

    def _check_open(self) -> None:
        if self._closed:
            raise ResultFileError(f"result file {self.path} is closed", self.path, steps_on_disk=self._n)


def failure_reason(cause: BaseException | None) -> str:
    """The operating system's words for a failed write, with its errno name: "File too large [EFBIG]"."""
    if cause is None:
        return "unknown error"
    name = errno.errorcode.get(getattr(cause, "errno", None) or -1, "")
    return (getattr(cause, "strerror", None) or str(cause)) + (f" [{name}]" if name else "")


def save_result(result: Result, path: str | Path, overwrite: bool = False) -> Path:
    """Write the whole of ``result`` to the result file ``path`` at once (:meth:`Result.save
    <flexmb.results.Result.save>`), or nothing: the file is written under a temporary name beside
    ``path`` and renamed over it when complete, so a failed write (disk full, file size limit)
    leaves no partial file and an existing ``path`` as it was; the error names ``path``."""
    path = Path(path)
    if path.suffix.lower() == ".npz":
        raise ValueError(f"{path}: flexmb result files are HDF5; use the suffix .h5")
    if path.is_dir():
        raise IsADirectoryError(f"result file {path} is a directory")
    if path.exists():
        if not overwrite:
            raise FileExistsError(f"result file {path} exists; pass overwrite=True to replace it "
                                  "(flexmb command line: --force)")
        _refuse_open_input(path)
        fd = os.open(path, os.O_RDONLY)
        try:
            lock_for_writing(fd, path)                        # refuses a file that another run writes
        finally:
            os.close(fd)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        writer = ResultWriter(temporary, result, flush_interval=float("inf"), overwrite=True)
        for k in range(result.n_steps):
            writer.append(result._step_record(k))
        for event in result.events:
            writer.event(event)
        writer.close()
        os.replace(temporary, path)
    except ResultFileError as exc:
        _remove(temporary)
        kept = f"{path} is as it was before" if path.exists() else "no file was made"
        raise ResultFileError(f"result file {path}: writing failed: {failure_reason(exc.cause or exc)}; {kept}",
                              path, cause=exc.cause) from None
    except BaseException:
        _remove(temporary)
        raise
    return path


def _write_saved_model(f: h5py.File, layout: ModelLayout, path: Path) -> None:
    """The run's model in ``/saved_model`` (:mod:`flexmb.io.model_file`), as it is when the file
    is created (a run's file: before its first step), so that ``fm.load_model(path)`` rebuilds it.
    A layout that does not know its model (read from a file, made by hand) stores nothing; a model
    with a part that cannot be saved stores nothing (the file works as before) and a FlexmbWarning
    says why, once per model."""
    from flexmb.io.model_file import write_model

    model = layout.model
    if model is None:
        return
    try:
        write_model(f, model)
        return
    except OSError:                                   # the disk: the writer's own failure handling
        raise
    except Exception as exc:                          # a part that cannot be saved: the results still can
        why = str(exc)
    if id(model) not in _UNSAVED_WARNED:
        _UNSAVED_WARNED.add(id(model))
        warnings.warn(f"result file {path}: the model is not stored in it, so flexmb.load_model cannot rebuild it "
                      f"from the file (the results are complete): {why}", FlexmbWarning, stacklevel=4)


#: ids of the models whose result files were told they cannot carry them (one warning per model)
_UNSAVED_WARNED: set[int] = set()


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _write_layout(g: h5py.Group, layout: ModelLayout) -> None:
    g.attrs["dim"] = layout.dim
    g.attrs["joints"] = json.dumps(layout.joints)
    g.attrs["n_internal"] = layout.n_internal
    if layout.model_digest():
        g.attrs["digest"] = json.dumps(layout.digest)
    if layout.sensors:
        g.attrs["sensors"] = json.dumps([sensor.to_dict() for sensor in layout.sensors])
    if layout.damping is not None:
        g.attrs["damping"] = json.dumps(layout.damping)
    if layout.bodies:
        _write_bodies(g.create_group("bodies"), layout.bodies)
    if len(layout.joint_points):
        g.attrs["joint_kinds"] = json.dumps(layout.joint_kinds)
        growable_dataset(g, "joint_points", layout.joint_points)
        growable_dataset(g, "joint_sides", layout.joint_sides, dtype=np.int64)
    growable_dataset(g, "coordinates", layout.coordinates)
    growable_dataset(g, "has_rotations", layout.has_rotations, dtype=np.uint8)
    growable_dataset(g, "point_masses", layout.point_masses.reshape(-1, 2))
    growable_dataset(g, "prescribed", layout.prescribed, dtype=np.int64)
    groups = g.create_group("groups")
    for i, grp in enumerate(layout.groups):
        h = groups.create_group(str(i))
        h.attrs.update({"name": grp.name, "kind": grp.kind, "section": json.dumps(grp.section),
                        "outputs": json.dumps(grp.outputs)})
        growable_dataset(h, "connectivity", grp.connectivity, dtype=np.int64)
        if grp.frames is not None:
            growable_dataset(h, "frames", grp.frames)
        if grp.thickness is not None:
            growable_dataset(h, "thickness", grp.thickness)
        if grp.modal_mesh is not None:
            mesh = grp.modal_mesh
            m = h.create_group("modal_mesh")
            m.attrs.update({"frame_node": mesh.frame_node, "section": json.dumps(mesh.section)})
            growable_dataset(m, "dofs", mesh.dofs, dtype=np.int64)
            growable_dataset(m, "positions", mesh.positions)
            growable_dataset(m, "basis", mesh.basis)
            growable_dataset(m, "lines", mesh.lines, dtype=np.int64)
            growable_dataset(m, "triangles", mesh.triangles, dtype=np.int64)
            if mesh.frames is not None:
                growable_dataset(m, "frames", mesh.frames)


# ------------------------------------------------------------------------ reading
class _Reader:
    """Reads datasets of one open file, turning HDF5's errors into messages that name them."""

    def __init__(self, f: h5py.File, path: Path) -> None:
        self.f, self.path = f, path

    def __call__(self, name: str, stop: int | None = None) -> np.ndarray:
        try:
            ds = self.f[name]
            return ds[()] if ds.shape == () else ds[:stop]
        except KeyError:
            raise ValueError(f"{self.path}: dataset /{name} is missing (the file is incomplete)") from None
        except OSError as exc:
            detail = str(exc).split("(")[-1].rstrip(")") if "(" in str(exc) else str(exc)
            raise ValueError(f"{self.path}: dataset /{name} is corrupted: {detail} (its checksum or "
                             "HDF5's structure does not match the stored bytes)") from None


def read_result(path: str | Path, kinds: Mapping[str, type[Result]]) -> Result:
    """Load a result file written by :class:`ResultWriter`: complete, cut short, or still being
    written by another process (the steps committed so far).

    ``kinds``: the result class of each kind a file can hold (``flexmb.results.RESULT_KINDS``; passed
    in, so that this layer does not import the results built on it); each makes its empty result
    with ``empty(layout, meta)``. Users read files with :func:`flexmb.results.load_result`."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"result file {path} does not exist")
    try:
        f = open_for_reading(path)
    except OSError as exc:
        if "not already open for SWMR writing" in str(exc):
            raise ValueError(f"{path} is being created by another process (no step written yet), or that "
                             "process was killed before its first step") from None
        raise ValueError(f"{path} is not a readable HDF5 result file: {exc}") from None
    with f:
        try:
            return _read_open_file(f, path, kinds)
        except KeyError as exc:                              # a group or attribute is missing
            raise ValueError(f"{path} is incomplete: {exc.args[0] if exc.args else exc}") from None
        except OSError as exc:                               # HDF5 met damaged metadata
            raise ValueError(f"{path} is damaged: {exc}") from None


def _read_open_file(f: h5py.File, path: Path, kinds: Mapping[str, type[Result]]) -> Result:
    """The result in the open file ``f`` (``path`` names it in errors)."""
    h5py = h5py_module()
    if f.attrs.get("format") != FORMAT:
        raise ValueError(f"{path} is not a flexmb result file (format attribute "
                         f"{f.attrs.get('format')!r})")
    version = int(f.attrs.get("format_version", 1))
    if version > FORMAT_VERSION:
        raise ValueError(f"{path} has format version {version}; this flexmb reads up to "
                         f"{FORMAT_VERSION} (update flexmb)")
    read = _Reader(f, path)
    kind = str(f.attrs["kind"])
    cls = kinds.get(kind)
    if cls is None:
        raise ValueError(f"{path}: unknown result kind {kind!r}")
    meta = json.loads(f.attrs["meta"])
    layout = _read_layout(f["model"], read, "model") if "model" in f else None
    result = cls.empty(layout, meta)
    for key, value in meta.items():                         # scheme, dt, t0, ...
        setattr(result, key, value)
    if kind == "modes":
        result.reference = read("reference") if "reference" in f else None
    steps = f["steps"]
    names: list[str] = []
    steps.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
    n = min((steps[name].shape[0] for name in names), default=0)
    if version >= 2:
        n_steps, n_events, cutbacks = (int(x) for x in read("committed"))
        n = min(n, n_steps)
        status = read("status")[0].decode(errors="replace").rstrip("\0")
        if status not in STATUSES:
            raise ValueError(f"{path}: dataset /status holds {status!r}, not one of {', '.join(STATUSES)}")
    else:
        cutbacks, status = int(f.attrs.get("cutbacks", 0)), str(f.attrs.get("status", "running"))
    for name in result.SERIES:
        data = read(f"steps/{name}", n) if name in steps else np.zeros((n, 0))
        setattr(result, name, [row.copy() if row.ndim else float(row) for row in data])
    # element outputs as written: none for modes, or for steps recorded without them
    result.elements = [{name: list(read(f"steps/elements/{gi}/{name}", n)) for name in store
                        if f"elements/{gi}/{name}" in steps} for gi, store in enumerate(result.elements)]
    # sensors as written: those that need velocities are not recorded in statics
    result.sensor_values = {name: list(read(f"steps/sensors/{name}", n)) for name in result.sensor_values
                            if f"sensors/{name}" in steps}
    if version >= 2:
        at, kinds = read("log/at", n_events), read("log/kind", n_events)
        ends = read("log/end", n_events)
        text = read("log/text", int(ends[-1]) if n_events else 0).tobytes()
        starts = np.concatenate([[0], ends[:-1]]).astype(int)
        result.events = [Event(float(a), _text(k), text[s:e].decode(errors="replace"))
                         for a, k, s, e in zip(at, kinds, starts, ends)]
    else:
        result.events = [Event(float(a), _text(k), _text(m)) for a, k, m in
                         zip(read("log/at"), read("log/kind"), read("log/message"))]
    result.cutbacks = cutbacks
    result.meta["status"] = status
    result.meta["file"] = str(path)
    return result


def open_for_reading(path: Path) -> h5py.File:
    """The file opened read-only without taking a lock (a live writer must not block readers).

    A file marked "open for writing" (its writer runs, or was killed) is opened for SWMR
    reading, consistent at every moment of the writer's work; any other file normally, since a
    SWMR reader retries damaged metadata for minutes before it gives up.
    """
    h5py = h5py_module()
    try:
        return h5py.File(path, "r", locking=False)
    except OSError as exc:
        if "already open for write" not in str(exc):
            raise
    return h5py.File(path, "r", swmr=True, locking=False)


def _read_layout(g: h5py.Group, read: _Reader, where: str) -> ModelLayout:
    groups = []
    for i in range(len(g["groups"])):
        h = g["groups"][str(i)]
        base = f"{where}/groups/{i}"
        groups.append(GroupLayout(str(h.attrs["name"]), str(h.attrs["kind"]), read(f"{base}/connectivity"),
                                  json.loads(h.attrs["section"]),
                                  read(f"{base}/frames") if "frames" in h else None,
                                  json.loads(h.attrs["outputs"]),
                                  read(f"{base}/thickness") if "thickness" in h else None,
                                  _read_modal_mesh(h, read, base) if "modal_mesh" in h else None))
    layout = ModelLayout(int(g.attrs["dim"]), read(f"{where}/coordinates"),
                         read(f"{where}/has_rotations").astype(bool), groups, read(f"{where}/point_masses"),
                         read(f"{where}/prescribed"), json.loads(g.attrs.get("joints", "[]")),
                         [Sensor.from_dict(d) for d in json.loads(g.attrs.get("sensors", "[]"))],
                         n_internal=int(g.attrs.get("n_internal", 0)),
                         digest=json.loads(g.attrs.get("digest", "{}")))
    if "joint_points" in g:                                  # files before the joint markers have none
        layout.joint_points, layout.joint_sides = read(f"{where}/joint_points"), read(f"{where}/joint_sides")
        layout.joint_kinds = json.loads(g.attrs["joint_kinds"])
    layout.damping = json.loads(g.attrs["damping"]) if "damping" in g.attrs else None   # older files: not known
    if "bodies" in g:                                        # files before the drawn bodies have none
        layout.bodies = _read_bodies(g["bodies"], read, f"{where}/bodies")
    return layout


def _write_bodies(g: h5py.Group, bodies: list[BodyLayout]) -> None:
    """The rigid bodies of a layout (see the format above)."""
    g.attrs["names"] = json.dumps([b.name for b in bodies])
    g.attrs["given"] = json.dumps([b.given for b in bodies])
    growable_dataset(g, "nodes", [b.node for b in bodies], dtype=np.int64)
    growable_dataset(g, "masses", [b.mass for b in bodies])
    growable_dataset(g, "inertia", np.array([b.inertia for b in bodies]))
    faces = [b.shape.flat_faces() for b in bodies]
    growable_dataset(g, "shape_points", np.concatenate([b.shape.points for b in bodies]))
    growable_dataset(g, "shape_faces", np.concatenate(faces), dtype=np.int64)
    ends = np.c_[np.cumsum([len(b.shape.points) for b in bodies]), np.cumsum([len(f) for f in faces])]
    growable_dataset(g, "shape_ends", ends, dtype=np.int64)


def _read_bodies(g: h5py.Group, read: _Reader, where: str) -> list[BodyLayout]:
    names, given = json.loads(g.attrs["names"]), json.loads(g.attrs["given"])
    points, faces, ends = read(f"{where}/shape_points"), read(f"{where}/shape_faces"), read(f"{where}/shape_ends")
    starts = np.vstack([[0, 0], ends[:-1]])
    return [BodyLayout(name, int(node), float(mass), J,
                       BodyShape.from_flat(points[s[0]:e[0]], faces[s[1]:e[1]], f"{where}: body {name!r}"), bool(mine))
            for name, node, mass, J, mine, s, e in zip(names, read(f"{where}/nodes"), read(f"{where}/masses"),
                                                       read(f"{where}/inertia"), given, starts, ends)]


def _read_modal_mesh(h: h5py.Group, read: _Reader, base: str) -> ModalMesh:
    """A modal body's FE mesh (files before modal meshes were stored have none: its group is then
    drawn and exported as the frame node alone)."""
    m, where = h["modal_mesh"], f"{base}/modal_mesh"
    return ModalMesh(int(m.attrs["frame_node"]), read(f"{where}/dofs"), read(f"{where}/positions"),
                     read(f"{where}/basis"), read(f"{where}/lines"), read(f"{where}/triangles"),
                     json.loads(m.attrs["section"]), read(f"{where}/frames") if "frames" in m else None)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
