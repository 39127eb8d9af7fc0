"""The base of every result, :class:`Result` (module docstring of :mod:`flexmb.results`)."""
from __future__ import annotations

import logging
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from flexmb.checks import ModelError, methods_keywords_listed
from flexmb.io.guarded_file import ResultFileError
from flexmb.io.records import Event, ModelLayout
from flexmb.sensors import Snapshot, evaluate_sensors, sensor_components, sensor_unit

logger = logging.getLogger("flexmb")

if TYPE_CHECKING:
    from flexmb.integrators.newton import NewtonLog
    from flexmb.results.time_history import Deferred


@methods_keywords_listed
class Result:
    """Base of all results: per-step series named in ``SERIES`` (numpy arrays, one row per
    output step), element outputs and a run log."""

    kind = "result"
    #: name of the step parameter series (time, load factor, ...)
    parameter_name = "parameter"
    #: per-step series kept as list attributes
    SERIES: tuple[str, ...] = ("u", "reactions")

    def __init__(self, layout: ModelLayout | None = None, **meta: Any) -> None:
        self.layout = layout
        self.meta: dict[str, Any] = dict(meta)
        # each series is recorded into a list (cheap appends while a run goes on) and read as
        # one array, stacked once per change (see __getattr__)
        self._series: dict[str, list] = {name: [] for name in self.SERIES}
        self._stacked: dict[str, np.ndarray] = {}
        #: per group: output name -> list of (n_el,) arrays ((n_el, k) for vector outputs)
        self.elements = [{name: [] for name in g.outputs} for g in layout.groups] if layout is not None else []
        #: steps recorded with some series and element outputs left to compute from their stored
        #: states when first read (see :meth:`_complete`), or None
        self._deferred: Deferred | None = None
        #: sensor name -> list of (k,) values per step (see :mod:`flexmb.sensors`)
        self.sensor_values: dict[str, list[np.ndarray]] = {
            sensor.name: [] for sensor in layout.sensors} if layout is not None else {}
        self.events: list[Event] = []
        self.cutbacks = 0
        self.newton_logs: list[NewtonLog] = []
        self._file = None
        #: (path, status) of the file this result last wrote and closed, for the repr
        self._closed_file: tuple[str, str] | None = None

    @classmethod
    def empty(cls, layout: ModelLayout | None, meta: dict[str, Any]) -> Result:
        """A result of this kind with no steps and the run's ``meta`` (the file layer fills in the
        steps it reads: :func:`flexmb.io.result_file.read_result`); the subclass's own
        ``__init__``, which takes a run's arguments, is skipped."""
        result = cls.__new__(cls)
        Result.__init__(result, layout, **meta)
        return result

    # ------------------------------------------------------------- series
    def __getattr__(self, name: str) -> np.ndarray:
        """A series (see ``SERIES``) as an array (n_steps, ...), read-only."""
        series = self.__dict__.get("_series")
        if series is None or name not in series:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        deferred = self.__dict__.get("_deferred")
        if deferred is not None and name in deferred.series:
            self._complete()
        stacked = self._stacked.get(name)
        if stacked is None:
            stacked = np.array(series[name]) if series[name] else np.zeros(0)
            stacked.setflags(write=False)
            self._stacked[name] = stacked
        return stacked

    def __setattr__(self, name: str, value: Any) -> None:
        series = self.__dict__.get("_series")
        if series is not None and name in series:            # a whole series replaced (file reader)
            self._complete()                                 # the deferred values are those of the run
            series[name] = list(value)
            self._stacked.pop(name, None)
        else:
            super().__setattr__(name, value)

    @property
    def elements(self) -> list[dict[str, list[np.ndarray]]]:
        """Per group: output name -> list of (n_el,) arrays, one per step ((n_el, k) for vector
        outputs)."""
        self._complete()
        return self._elements

    @elements.setter
    def elements(self, value: list[dict[str, list[np.ndarray]]]) -> None:
        self._complete()
        self._elements = value

    def _complete(self) -> None:
        """Compute the values that steps were recorded without (see ``Deferred`` in
        :mod:`flexmb.results.time_history`), once."""
        deferred = self.__dict__.get("_deferred")
        if deferred is not None:
            deferred.fill(self._series, self._elements)
            for name in deferred.series:
                self._stacked.pop(name, None)
            self._deferred = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled and copied complete: the deferred values computed, the run's assembly not kept."""
        self._complete()
        return self.__dict__.copy()

    # ------------------------------------------------------------ recording
    def _append(self, values: dict[str, Any], element_outputs: list[dict[str, np.ndarray]] | None,
                sensor_values: dict[str, np.ndarray] | None = None) -> None:
        for name, value in (sensor_values or {}).items():
            self.sensor_values[name].append(value)
        for name in self.SERIES:
            v = values[name]
            self._series[name].append(v.copy() if isinstance(v, np.ndarray) else v)
        self._stacked.clear()                               # every series has a new row
        if element_outputs is not None and self.layout is not None:
            for store, out in zip(self._elements, element_outputs):
                for name, lst in store.items():             # None: a deferred group's, computed when read
                    lst.append(None if out is None else np.asarray(out[name], dtype=float))
        if self._file is not None:
            self._to_file(self._file.append, self._step_record(self.n_steps - 1))

    def _step_record(self, k: int) -> dict[str, np.ndarray]:
        self._complete()
        rec = {name: np.asarray(self._series[name][k], dtype=float) for name in self.SERIES}
        for gi, store in enumerate(self.elements):
            for name, lst in store.items():
                if len(lst) > k:
                    rec[f"elements/{gi}/{name}"] = lst[k]
        for name, lst in self.sensor_values.items():
            if len(lst) > k:
                rec[f"sensors/{name}"] = lst[k]
        return rec

    def _sensor_values(self, snapshot: Snapshot) -> dict[str, np.ndarray]:
        """The layout's sensors at one step, continuing angles from the steps recorded so far."""
        if self.layout is None or not self.layout.sensors:
            return {}
        return evaluate_sensors(self.layout, snapshot, self.sensor_values)

    def log_event(self, at: float, kind: str, message: str) -> None:
        """Add an entry to the run log (written to the result file at once)."""
        event = Event(float(at), kind, message)
        self.events.append(event)
        if self._file is not None:
            self._to_file(self._file.event, event)

    def note_round_off(self, at: float, log: NewtonLog) -> None:
        """Enter in the run log the first solve that ended at the residual's round-off floor
        (:meth:`flexmb.integrators.newton.NewtonLog.round_off_note`); later ones are not logged."""
        if log.criterion in ("round-off", "stagnation") and not any(e.kind == "round-off" for e in self.events):
            self.log_event(at, "round-off", log.round_off_note())

    def format_log(self) -> str:
        """The run log as text, one line per event."""
        if not self.events:
            return "(no events)"
        return "\n".join(f"{self.parameter_name} = {e.at:.6g}: {e.kind}: {e.message}" for e in self.events)

    # ----------------------------------------------------------------- file
    def attach_file(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the result to ``path`` (HDF5) now and every step recorded from now on.

        An existing file is refused unless ``overwrite`` is true, and a file that another run is
        writing or that this process has open for reading is always refused.
        """
        from flexmb.io.result_file import ResultWriter

        self.close_file()
        self._file = ResultWriter(path, self, overwrite=overwrite)
        for k in range(self.n_steps):
            self._to_file(self._file.append, self._step_record(k))
        for event in self.events:
            self._to_file(self._file.event, event)
        return self._file.path

    def resume_file(self, path: str | Path) -> Path:
        """Continue the file this result was loaded from (:func:`load_result`): its steps past
        ``n_steps`` and log entries past ``events`` are dropped, and steps recorded from now on are
        appended."""
        from flexmb.io.result_file import ResultWriter

        self.close_file()
        self._file = ResultWriter.reopen(path, self)
        self.meta.pop("status", None)                    # the loaded status no longer describes the file
        return self._file.path

    def close_file(self, status: str = "finished") -> None:
        """Finish the attached file; ``status`` ("finished" or "failed") is stored in it."""
        if self._file is not None:
            writer, self._file = self._file, None
            writer.close(status)
            self._closed_file = (str(writer.path), status)

    def _to_file(self, write: Callable[..., None], *args: Any) -> None:
        """Call a writer method; a write that failed has closed the file, so detach it."""
        try:
            write(*args)
        except ResultFileError:
            self._file = None
            raise

    @contextmanager
    def recording(self, path: str | Path | None, overwrite: bool = False,
                  resume: bool = False) -> Iterator["Result"]:
        """Context of a run writing to ``path`` (nothing if None): the file receives every step
        recorded inside and is completed with status "finished", or "failed" when the run
        raises, after an "error" event naming the exception (unless the run logged its own).

        ``overwrite`` allows replacing an existing file; ``resume`` continues the file this result
        was loaded from instead (:meth:`resume_file`). A :class:`ResultFileError` (the file could
        not be written) carries this result in its ``result``.
        """
        if path is not None:
            if resume:
                self.resume_file(path)
            else:
                self.attach_file(path, overwrite)
        try:
            yield self
        except BaseException as exc:
            if isinstance(exc, ResultFileError):
                exc.result = self
            if not self.events or self.events[-1].kind != "error":
                at = float(self.parameter[-1]) if self.n_steps else float("nan")
                try:
                    self.log_event(at, "error", f"run stopped by {type(exc).__name__}: {exc}")
                except ResultFileError as file_error:    # exc is the error to report; say this one too
                    logger.error("%s", file_error)
            try:
                self.close_file("failed")
            except ResultFileError as file_error:
                logger.error("%s", file_error)
            raise
        try:
            self.close_file()
        except ResultFileError as exc:
            exc.result = self
            raise

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the whole result to one HDF5 file (see :mod:`flexmb.io.result_file`); an existing
        file is replaced only with ``overwrite=True``. The file is complete or not there: a
        failed write (disk full) raises :class:`ResultFileError` and leaves an existing file as it was."""
        from flexmb.io.result_file import save_result

        written = save_result(self, path, overwrite)
        self._closed_file = (str(written), "finished")
        return written

    # ------------------------------------------------------------ accessors
    @property
    def n_steps(self) -> int:
        return len(self._series[self.SERIES[0]])

    @property
    def parameter(self) -> np.ndarray:
        """(n_steps,) the step parameter (time in s, load factor, ...)."""
        return np.array(self._series[self.SERIES[0]], dtype=float)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every per-step series stacked, (n_steps, ...) (copies)."""
        return {name: np.array(getattr(self, name)) for name in self.SERIES}

    def __repr__(self) -> str:
        """What is in it: kind, steps and their range, model size, series, run status."""
        lines = [f"{type(self).__name__}: {self._summary()}"]
        if self.layout is not None:
            layout = self.layout
            groups = ", ".join(f"{g.name} ({g.kind}, {g.n_elements} el.)" for g in layout.groups) or "none"
            lines.append(f"  model: {layout.dim}D, {layout.n_nodes} nodes, {layout.n_dof} DOFs; groups: {groups}"
                         + (f"; joints: {', '.join(layout.joints)}" if layout.joints else ""))
        present = [name for name in self.SERIES if any(np.size(x) for x in self._series[name])]
        lines.append(f"  series: {', '.join(present) or 'none'}")
        outputs = [f"{g.name}: {', '.join(store)}" for g, store in
                   zip(self.layout.groups if self.layout is not None else [], self.elements) if store]
        if outputs:
            lines.append(f"  element outputs: {'; '.join(outputs)}")
        if self._file is not None:
            status = f"running, writing to {self._file.path}"
        elif self._closed_file is not None:
            status = f"{self._closed_file[1]}, written to {self._closed_file[0]}"
        elif "status" in self.meta:
            status = f"{self.meta['status']}, read from {self.meta.get('file', 'a file')}"
        else:
            status = "in memory"
        lines.append(f"  status: {status}; {self.cutbacks} cut-back(s), {len(self.events)} event(s)"
                     + (f", last: {self.events[-1].kind}: {self.events[-1].message[:80]}" if self.events else ""))
        return "\n".join(lines)

    def _summary(self) -> str:
        """The first line of the repr: the steps and their range."""
        p = self.parameter
        span = f", {self.parameter_name} = {p[0]:.6g} .. {p[-1]:.6g}" if p.size else ""
        return f"{self.n_steps} step(s){span}"

    def _layout(self) -> ModelLayout:
        if self.layout is None:
            raise ModelError("this result carries no model layout (it was built by hand)")
        return self.layout

    def dof(self, node: int, dof: str) -> np.ndarray:
        """(n_steps,) history of one DOF (m or rad)."""
        return np.array(self.u)[:, self._layout().index(node, dof)]

    def reaction(self, node: int, dof: str) -> np.ndarray:
        """(n_steps,) support reaction on one DOF (N or N m); zero at free DOFs."""
        return np.array(self.reactions)[:, self._layout().index(node, dof)]

    def positions(self, step: int | None = None) -> np.ndarray:
        """Nodal positions (n_steps, n_nodes, dim), or (n_nodes, dim) at one step, m."""
        u = np.array(self.u) if step is None else np.asarray(self.u[step])
        return self._layout().positions(u)

    def element(self, group: str | int, name: str) -> np.ndarray:
        """(n_steps, n_el) history of element output ``name`` (e.g. ``"N"``) of a group,
        (n_steps, n_el, k) for a vector output (a shell's ``"membrane_forces"``)."""
        gi = self._layout().group(group)
        store = self.elements[gi]
        if name not in store:
            raise ModelError(f"group {self.layout.groups[gi].name!r} has no element output {name!r}; "
                             f"it has {', '.join(store)}")
        return np.array(store[name])

    def series(self, spec: str) -> np.ndarray:
        """(n_steps,) history named by ``spec`` (see the module docstring for the names)."""
        spec = spec.strip()
        if spec == "parameter":
            return self.parameter
        sensor, component = self._sensor_spec(spec)
        if sensor is not None:
            values = self.sensor(sensor)
            return values if component is None else values[:, component]
        if "@" in spec:
            what, where = spec.split("@", 1)
            if ":" in where:                                         # element output
                group, el = where.rsplit(":", 1)
                name, component = _component(what, spec)
                values = self.element(group, name)
                if not el.isdigit() or int(el) >= values.shape[1]:
                    raise ModelError(f"{spec!r}: element {el} does not exist in group {group!r} "
                                     f"({values.shape[1]} elements)")
                values = values[:, int(el)]
                if (component is None) != (values.ndim == 1):
                    size = values.shape[1] if values.ndim == 2 else 0
                    raise ModelError(f"{spec!r}: element output {name!r} has " + (
                        f"{size} components; name one as {name}[0]..{name}[{size - 1}]" if size
                        else "one value per element; give it without [component]"))
                if component is not None:
                    if component >= values.shape[1]:
                        raise ModelError(f"{spec!r}: element output {name!r} has components 0..{values.shape[1] - 1}")
                    values = values[:, component]
                return values
            if not where.isdigit():
                raise ModelError(f"{spec!r}: expected a node number after '@'")
            prefix, _, dof = what.rpartition(":")
            source = {"": "u", "vel": "v", "reac": "reactions"}.get(prefix)
            if source is None or not hasattr(self, source):
                raise ModelError(f"{spec!r}: unknown prefix {prefix!r} for this {self.kind} result "
                                 "(use none, 'vel:' in dynamics, or 'reac:')")
            return np.array(getattr(self, source))[:, self._layout().index(int(where), dof)]
        derived = self._derived_series()
        if spec in derived:
            return derived[spec]
        raise ModelError(f"unknown quantity {spec!r}; this result has: "
                         + ", ".join(list(derived) + ["DOF@node", "vel:DOF@node", "reac:DOF@node",
                                                      "output@group:element"]))

    def _derived_series(self) -> dict[str, np.ndarray]:
        return {}

    def sensor(self, name: str) -> np.ndarray:
        """(n_steps,) history of a scalar sensor, (n_steps, k) of a vector one (a position, a
        rotation matrix row by row); see :mod:`flexmb.sensors`."""
        layout = self._layout()
        sensor = next((s for s in layout.sensors if s.name == name), None)
        if sensor is None:
            raise ModelError(f"no sensor named {name!r}; sensors: " + (", ".join(s.name for s in layout.sensors)
                                                                      or "none (model.add_sensor adds one)"))
        values = self.sensor_values.get(name, [])
        if len(values) != self.n_steps:
            raise ModelError(f"sensor {name!r} ({sensor.quantity}) was not recorded in this {self.kind} result "
                             "(velocities and accelerations exist in dynamics only)")
        values = np.array(values, dtype=float).reshape(self.n_steps, -1)
        return values if sensor_components(sensor, layout.dim) else values[:, 0]

    def sensor_quantities(self, spec: str) -> list[str]:
        """A sensor name expanded to one quantity name per component (``tip`` -> ``tip[x]``,
        ``tip[y]``); any other name as it is."""
        if self.layout is not None:
            sensor = next((s for s in self.layout.sensors if s.name == spec.strip()), None)
            if sensor is not None:
                return [f"{sensor.name}[{c}]" for c in sensor_components(sensor, self.layout.dim)] or [sensor.name]
        return [spec]

    def _sensor_spec(self, spec: str) -> tuple[str | None, int | None]:
        """(sensor name, component index or None) of a quantity name, (None, None) if it names no sensor."""
        if self.layout is None or not self.layout.sensors:
            return None, None
        name, _, index = spec[:-1].partition("[") if spec.endswith("]") else (spec, "", "")
        sensor = next((s for s in self.layout.sensors if s.name == name), None)
        if sensor is None:
            return None, None
        components = sensor_components(sensor, self.layout.dim)
        if not index:
            if components:
                raise ModelError(f"{spec!r}: sensor {name!r} has components {', '.join(components)}; name one as "
                                 f"{name}[{components[0]}] or {name}[0]")
            return name, None
        k = int(index) if index.isdigit() else components.index(index) if index in components else None
        if k is None or k >= len(components):
            raise ModelError(f"{spec!r}: sensor {name!r} has " + (f"components {', '.join(components)} "
                             f"(0..{len(components) - 1})" if components else "one value; give it without [component]"))
        return name, k

    def label(self, spec: str) -> str:
        """Axis label with unit for a quantity name."""
        units = {"kinetic": "J", "strain": "J", "work": "J", "potential": "J", "dissipated": "J", "joint_work": "J", "total": "J", "newton_iterations": "-"}
        sensor = self._sensor_spec(spec)[0]
        if sensor is not None:
            return f"{spec} ({sensor_unit(next(s for s in self.layout.sensors if s.name == sensor), self.layout)})"
        what = spec.split("@", 1)[0]
        if what in units:
            return f"{spec} ({units[what]})"
        if "@" in spec and ":" in spec.split("@", 1)[1] and self.layout is not None:
            group = spec.split("@", 1)[1].rsplit(":", 1)[0]
            unit = self.layout.groups[self.layout.group(group)].outputs.get(what.split("[", 1)[0], "")
            return f"{spec} ({unit})"
        dof = what.rpartition(":")[2]
        if dof in ("ux", "uy", "uz"):
            return f"{spec} ({'m/s' if what.startswith('vel:') else 'N' if what.startswith('reac:') else 'm'})"
        if dof in ("rx", "ry", "rz"):
            return f"{spec} ({'rad/s' if what.startswith('vel:') else 'N m' if what.startswith('reac:') else 'rad'})"
        return spec


def _component(what: str, spec: str) -> tuple[str, int | None]:
    """Split an element output name ``membrane_forces[1]`` into the name and the component."""
    if not what.endswith("]"):
        return what, None
    name, _, index = what[:-1].partition("[")
    if not index.isdigit():
        raise ModelError(f"{spec!r}: a component is a number in brackets, e.g. {name}[0]")
    return name, int(index)


def _reference(initial: float, largest: float) -> float:
    """Normalising value: the initial one, else (a start at rest, or at round-off level, as a
    prescribed motion's difference-quotient velocity gives) the largest, else 1 (all zero)."""
    if initial > 1e-8 * largest:
        return initial
    return largest if largest > 0 else 1.0
