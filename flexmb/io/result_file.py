"""The flexmb result file: one HDF5 file per run, written step by step (h5py).

HDF5 rather than compressed ``.npz``: an ``.npz`` is a zip archive that can only be rewritten
as a whole, while an HDF5 dataset grows in place, so output steps are appended and flushed to
disk while the run goes on. The files open in any HDF5 tool (h5py, h5dump, HDFView, MATLAB's
``h5read``).

When a run ends with an error (a failed step, an exception in a user's load function, Ctrl-C)
the file is completed with every computed step before the error propagates. Steps are written
in blocks at most ``FLUSH_INTERVAL`` seconds (wall clock) apart, so a process killed outright
(SIGKILL, power loss) loses at most that much of its last computation; the environment
variable ``FLEXMB_FLUSH_INTERVAL`` changes it (0: write and flush every step, which costs
about 0.1 ms per dataset and step).

Layout (arrays are float64 unless stated; n = number of steps written)::

    /                   attrs: format = "flexmb-result", format_version, kind ("dynamic",
                        "static", "modes"), flexmb_version, created, meta (JSON: scheme, dt, ...),
                        cutbacks, status ("running" while written and if the run was killed,
                        "finished", or "failed" when an error ended it)
    /model              attrs: dim
      coordinates       (n_nodes, dim) reference positions, m
      has_rotations     (n_nodes,) uint8: the node carries rotation DOFs
      point_masses      (n_pm, 2) node, mass (kg)
      prescribed        (n_p,) int64 global indices of prescribed DOFs
      groups/<i>        attrs: name, kind (element class), section (JSON), outputs (JSON name -> unit)
        connectivity    (n_el, 2) int64
        frames          (n_el, 3, 3) reference section frames (3D beams only)
    /steps
      <series>          (n, ...) the result's series, e.g. t, u, v, reactions, kinetic, ...
      elements/<i>/<name>  (n, n_el) element output of group i
    /log                at (n_events,), kind and message (n_events,) strings
    /reference          (n_dof,) state the modes are taken about (kind "modes" only)

DOF numbering is node by node as in :class:`~flexmb.dofs.DofMap`: translations, then the
rotations of nodes that have them. A run that ended abruptly may have one series a step longer
than the others; :func:`read_result` keeps the steps that every series holds.
"""
from __future__ import annotations

import datetime
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from flexmb.results import RESULT_KINDS, Event, GroupLayout, ModelLayout, Result

if TYPE_CHECKING:
    import h5py

FORMAT = "flexmb-result"
FORMAT_VERSION = 1
#: seconds of wall-clock time between block writes of the computed steps
FLUSH_INTERVAL = 0.2
_CHUNK_BYTES = 1 << 20


def _h5py():
    try:
        import h5py
    except ImportError as exc:                                   # a dependency, but say what to do
        raise ImportError("flexmb result files need h5py: pip install h5py") from exc
    return h5py


class ResultWriter:
    """Appends the steps of a :class:`~flexmb.results.Result` to an HDF5 file in timed blocks."""

    def __init__(self, path: str | Path, result: Result, flush_interval: float | None = None) -> None:
        from flexmb import __version__

        h5py = _h5py()
        self.path = Path(path)
        if self.path.suffix.lower() == ".npz":
            raise ValueError(f"{self.path}: flexmb result files are HDF5; use the suffix .h5")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = h5py.File(self.path, "w")
        f = self._f
        f.attrs.update({"format": FORMAT, "format_version": FORMAT_VERSION, "kind": result.kind,
                        "flexmb_version": __version__, "meta": json.dumps(result.meta),
                        "created": datetime.datetime.now().isoformat(timespec="seconds"),
                        "cutbacks": 0, "status": "running"})
        if result.layout is not None:
            _write_layout(f.create_group("model"), result.layout)
        reference = getattr(result, "reference", None)
        if reference is not None:
            f["reference"] = np.asarray(reference, dtype=float)
        f.create_group("steps")
        log = f.create_group("log")
        text = h5py.string_dtype()
        log.create_dataset("at", (0,), maxshape=(None,), dtype=float, chunks=(256,))
        log.create_dataset("kind", (0,), maxshape=(None,), dtype=text, chunks=(256,))
        log.create_dataset("message", (0,), maxshape=(None,), dtype=text, chunks=(256,))
        self._n = 0
        self._pending: list[dict[str, np.ndarray]] = []
        if flush_interval is None:
            flush_interval = float(os.environ.get("FLEXMB_FLUSH_INTERVAL", FLUSH_INTERVAL))
        self.flush_interval = flush_interval
        self._last_write = time.perf_counter()
        f.flush()

    def append(self, record: dict[str, np.ndarray]) -> None:
        """Add one step: ``record`` maps series names (``elements/<i>/<name>`` for element
        outputs) to the step's values; written with the next block."""
        self._pending.append(record)
        if time.perf_counter() - self._last_write >= self.flush_interval:
            self.write_pending()

    def write_pending(self) -> None:
        """Write the steps added since the last block and flush the file."""
        if self._pending:
            steps = self._f["steps"]
            k, m = self._n, len(self._pending)
            for name in self._pending[0]:
                block = np.array([r[name] for r in self._pending], dtype=float)   # (m, ...)
                if block[0].size == 0:          # e.g. no multipliers without joints: read back empty
                    continue
                if name not in steps:
                    shape = block.shape[1:]
                    rows = max(1, min(256, _CHUNK_BYTES // max(block[0].nbytes, 1)))
                    steps.create_dataset(name, (0, *shape), maxshape=(None, *shape), dtype=float,
                                         chunks=(rows, *shape))
                ds = steps[name]
                ds.resize(k + m, axis=0)
                ds[k:k + m] = block
            self._n += m
            self._pending = []
        self._f.flush()
        self._last_write = time.perf_counter()

    def event(self, event: Event) -> None:
        """Enter an event in the log and write everything pending (events are rare and matter)."""
        log = self._f["log"]
        k = log["at"].shape[0]
        for name, value in (("at", event.at), ("kind", event.kind), ("message", event.message)):
            log[name].resize(k + 1, axis=0)
            log[name][k] = value
        self.write_pending()

    def close(self, cutbacks: int = 0, status: str = "finished") -> None:
        if self._f.id.valid:
            self.write_pending()
            self._f.attrs["cutbacks"] = int(cutbacks)
            self._f.attrs["status"] = status
            self._f.close()


def _write_layout(g: h5py.Group, layout: ModelLayout) -> None:
    g.attrs["dim"] = layout.dim
    g["coordinates"] = layout.coordinates
    g["has_rotations"] = layout.has_rotations.astype(np.uint8)
    g["point_masses"] = layout.point_masses.reshape(-1, 2)
    g["prescribed"] = layout.prescribed.astype(np.int64)
    g.attrs["joints"] = json.dumps(layout.joints)
    groups = g.create_group("groups")
    for i, grp in enumerate(layout.groups):
        h = groups.create_group(str(i))
        h.attrs.update({"name": grp.name, "kind": grp.kind, "section": json.dumps(grp.section),
                        "outputs": json.dumps(grp.outputs)})
        h["connectivity"] = grp.connectivity.astype(np.int64)
        if grp.frames is not None:
            h["frames"] = grp.frames


def _read_layout(g: h5py.Group) -> ModelLayout:
    groups = []
    for i in range(len(g["groups"])):
        h = g["groups"][str(i)]
        groups.append(GroupLayout(str(h.attrs["name"]), str(h.attrs["kind"]), h["connectivity"][()],
                                  json.loads(h.attrs["section"]),
                                  h["frames"][()] if "frames" in h else None,
                                  json.loads(h.attrs["outputs"])))
    return ModelLayout(int(g.attrs["dim"]), g["coordinates"][()], g["has_rotations"][()].astype(bool),
                       groups, g["point_masses"][()], g["prescribed"][()], json.loads(g.attrs.get("joints", "[]")))


def read_result(path: str | Path) -> Result:
    """Load a result file written by :class:`ResultWriter` (complete or cut short)."""
    h5py = _h5py()
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"result file {path} does not exist")
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise ValueError(f"{path} is not a readable HDF5 result file: {exc}") from None
    with f:
        if f.attrs.get("format") != FORMAT:
            raise ValueError(f"{path} is not a flexmb result file (format attribute "
                             f"{f.attrs.get('format')!r})")
        kind = str(f.attrs["kind"])
        cls = RESULT_KINDS.get(kind)
        if cls is None:
            raise ValueError(f"{path}: unknown result kind {kind!r}")
        meta = json.loads(f.attrs["meta"])
        layout = _read_layout(f["model"]) if "model" in f else None
        result = cls.__new__(cls)
        Result.__init__(result, layout, **meta)
        for key, value in meta.items():                     # scheme, dt, ...
            setattr(result, key, value)
        if kind == "modes":
            result.reference = f["reference"][()] if "reference" in f else None
        steps = f["steps"]
        names = []
        steps.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
        n = min((steps[name].shape[0] for name in names), default=0)
        for name in result.SERIES:
            data = steps[name][:n] if name in steps else np.zeros((n, 0))
            setattr(result, name, [row.copy() if row.ndim else float(row) for row in data])
        # element outputs as written: none for modes, or for steps recorded without them
        result.elements = [{name: list(steps[f"elements/{gi}/{name}"][:n]) for name in store
                            if f"elements/{gi}/{name}" in steps} for gi, store in enumerate(result.elements)]
        log = f["log"]
        result.events = [Event(float(a), _text(k), _text(m))
                         for a, k, m in zip(log["at"][()], log["kind"][()], log["message"][()])]
        result.cutbacks = int(f.attrs.get("cutbacks", 0))
        result.meta["status"] = str(f.attrs.get("status", "running"))
        result.meta["file"] = str(path)
    return result


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
