"""State-space models of a linearized system and their frequency response functions.

A :class:`~flexmb.analysis.linearized.LinearizedSystem` ``M x'' + C x' + K x = 0`` on the reduced
coordinates x (dq = basis x, module :mod:`flexmb.analysis.linearized`) driven by named loads
``f = F w`` (w (n_in,) the input amplitudes, N or N m) and observed by named outputs

    M x'' + C x' + K x = P w,          P = basis^T F                 (n_red, n_in)
    y = S_u dq + S_v dq' + S_a dq''                                  (n_out,)

is written in first order with the state z = (x, x') (2 n_red,):

    z' = A z + B w,    A = [[0, I], [-M^-1 K, -M^-1 C]],    B = [[0], [M^-1 P]],
    y  = C z + D w,    C = [O_u - O_a M^-1 K, O_v - O_a M^-1 C],    D = O_a M^-1 P,

with O_k = S_k basis the output rows on the reduced coordinates; only acceleration outputs have a
D term. The frequency response at angular frequency w = 2 pi f (rad/s) is solved directly from the
second-order equations, not through A:

    (-w^2 M + i w C + K) X = P,     H(w) = (O_u + i w O_v - w^2 O_a) X        (n_out, n_in),

so the response to the input ``Re(w_hat e^{i w t})`` is ``Re(H w_hat e^{i w t})`` (magnitude ``|H|``,
phase arg H: positive leads the input).

Inputs, named as a user knows them: a force or moment on a node's DOF, ``(node, "uy")`` or its
label ``"node 12 uy"``; on a rigid body, ``(body, "rz")`` with the :class:`RigidBody` or its name
(in global axes, at the body's centre of mass). A joint's drive acceleration is not an input here:
a driven joint's coordinate is eliminated by the constraint basis, so it would need the drive's
Jacobian column (the inhomogeneous part of the constraints), which the linearization does not keep.
Outputs: a node DOF's (or a rigid body's) displacement, velocity or acceleration, ``(node, "uy")`` or
``(node, "uy", "velocity")`` (or its label, or the body in place of the node), and the model's sensors by name or object, linearized by
central differences of their value (one row per component). Sensors that read velocities or
accelerations are linear only about a state at rest: they are refused about a moving state (a spin or
a given v, a).

With a spin (the rotating frame of :func:`~flexmb.linearize`) inputs and DOF outputs are the
perturbations seen in the rotating frame: a force input turns with the frame, and velocities and
accelerations are rates relative to it.

Massless coordinates (a singular M, e.g. a massless rotation) are refused with a message naming
the DOF: the first-order form needs M^-1, and a static condensation would turn loads on those DOFs
into D terms of displacement outputs, not done here.

The matrices are dense (2 n_red)^2: meant for reduced models and models of up to a few thousand
coordinates, as a control design or system identification tool takes them.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexmb.checks import ModelError, methods_keywords_listed
from flexmb.multibody.joints import RigidBody
from flexmb.sensors import Sensor, Snapshot, sensor_components

#: output kinds and the derivative each reads
KINDS = {"displacement": 0, "velocity": 1, "acceleration": 2}
#: a coordinate is massless if its mass is below MASSLESS times the largest diagonal mass
MASSLESS = 1e-12
#: central-difference step of sensor linearization: rad at rotations, times the model's characteristic
#: length at translations and modal coordinates (truncation ~1e-12, round-off of a value at 1e4 lengths
#: from the origin ~1e-6 relative)
SENSOR_STEP = 1e-6


@methods_keywords_listed
@dataclass
class FrequencyResponse:
    """Complex frequency response H (n_freq, n_out, n_in) at ``frequencies_hz`` (n_freq,), Hz; output
    per unit input in the units of each (m/N, m/s/N, rad/(N m), ...). ``inputs``, ``outputs``: labels."""

    frequencies_hz: np.ndarray
    values: np.ndarray
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]

    @property
    def magnitude(self) -> np.ndarray:
        """The magnitude ``|H|`` (n_freq, n_out, n_in)."""
        return np.abs(self.values)

    @property
    def phase_deg(self) -> np.ndarray:
        """arg H (n_freq, n_out, n_in) in degrees, in (-180, 180]; positive: the output leads."""
        return np.degrees(np.angle(self.values))

    def plot(self, axes: Any = None, pairs: Sequence[tuple[int, int]] | None = None) -> Any:
        """Bode plot: magnitude (log scale) and phase (degrees) against frequency (Hz), one line per
        (output, input) index pair of ``pairs`` (default all). ``axes``: two matplotlib axes (magnitude,
        phase) or None for a new figure. Returns the two axes."""
        from flexmb.viz.plots import COMPUTED_ALPHA, legend_outside

        n_out, n_in = self.values.shape[1:]
        pairs = [(i, j) for i in range(n_out) for j in range(n_in)] if pairs is None else list(pairs)
        for i, j in pairs:
            if not (0 <= i < n_out and 0 <= j < n_in):
                raise ModelError(f"FrequencyResponse.plot: pair ({i}, {j}) does not exist; there are {n_out} "
                                 f"outputs and {n_in} inputs")
        if axes is None:
            import matplotlib.pyplot as plt

            _, axes = plt.subplots(2, 1, sharex=True, figsize=(6.0, 5.5))
        ax_mag, ax_ph = axes
        for i, j in pairs:
            label = f"{self.outputs[i]} / {self.inputs[j]}"
            ax_mag.loglog(self.frequencies_hz, self.magnitude[:, i, j], label=label, alpha=COMPUTED_ALPHA)
            ax_ph.semilogx(self.frequencies_hz, self.phase_deg[:, i, j], alpha=COMPUTED_ALPHA)
        ax_mag.set_ylabel("|H| (output unit / input unit)")
        ax_ph.set_ylabel("phase (deg)")
        ax_ph.set_xlabel("frequency (Hz)")
        ax_ph.set_yticks([-180, -90, 0, 90, 180])
        for ax in axes:
            ax.grid(True, which="both", alpha=0.3)
        handles, labels = ax_mag.get_legend_handles_labels()
        legend_outside(ax_ph, 7, handles=handles, labels=labels)
        return axes


@methods_keywords_listed
@dataclass
class StateSpaceModel:
    """z' = A z + B w, y = C z + D w with z = (x, x') on the reduced coordinates (module docstring).

    A (2 n_red, 2 n_red) 1/s and 1/s^2; B (2 n_red, n_in); C (n_out, 2 n_red); D (n_out, n_in);
    inputs, outputs : labels, e.g. ``"node 12 uy"``, ``"node 4 ux velocity"``, ``"tip[y]"``.
    M, Cd, K : the second-order matrices (n_red, n_red); P (n_red, n_in) the input matrix; O (3, n_out,
    n_red) the displacement, velocity and acceleration output rows, kept for the direct FRF.
    """

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    M: Any
    Cd: Any
    K: Any
    P: np.ndarray
    O: np.ndarray

    def to_scipy(self) -> Any:
        """The model as a continuous-time :class:`scipy.signal.StateSpace`."""
        from scipy.signal import StateSpace

        return StateSpace(self.A, self.B, self.C, self.D)

    def frequency_response(self, frequencies_hz: Any) -> FrequencyResponse:
        """H (n_freq, n_out, n_in) at ``frequencies_hz`` (n_freq,), Hz, from (-w^2 M + i w C + K) X = P
        (sparse LU per frequency, or dense) and H = (O_u + i w O_v - w^2 O_a) X."""
        f = np.atleast_1d(np.asarray(frequencies_hz, dtype=float))
        if f.ndim != 1 or f.size == 0 or not np.all(np.isfinite(f)) or np.any(f < 0.0):
            raise ModelError(f"frequency_response: frequencies must be one or more finite numbers >= 0 (Hz), got "
                             f"{frequencies_hz!r}")
        H = np.zeros((f.size, self.C.shape[0], self.B.shape[1]), dtype=complex)
        for k, w in enumerate(2.0 * np.pi * f):
            Z = -w**2 * self.M + 1j * w * self.Cd + self.K                  # (n_red, n_red) complex
            try:
                X = (spla.splu(sp.csc_matrix(Z)).solve(self.P.astype(complex)) if sp.issparse(Z)
                     else np.linalg.solve(Z, self.P))                      # (n_red, n_in)
            except (RuntimeError, np.linalg.LinAlgError) as err:
                raise ModelError(f"frequency_response: the dynamic stiffness is singular at {f[k]:.6g} Hz (an "
                                 "undamped resonance, or a rigid-body mode at 0 Hz)") from err
            H[k] = (self.O[0] + 1j * w * self.O[1] - w**2 * self.O[2]) @ X
        return FrequencyResponse(f, H, self.inputs, self.outputs)


def state_space(system: Any, inputs: Sequence[Any], outputs: Sequence[Any]) -> StateSpaceModel:
    """State-space model of ``system`` (a :class:`~flexmb.analysis.linearized.LinearizedSystem` from
    :func:`flexmb.linearize`) for the named ``inputs`` and ``outputs`` (module docstring)."""
    asm = system.assembly
    if asm is None:
        raise ModelError("state_space: the linearized system does not know its model (build it with "
                         "flexmb.linearize(model, ...))")
    inputs, outputs = list(inputs), list(outputs)
    if not inputs or not outputs:
        raise ModelError(f"state_space: give at least one input and one output, got {len(inputs)} inputs and "
                         f"{len(outputs)} outputs")
    basis = system.basis
    n = system.M.shape[0]
    if n == 0:
        raise ModelError("state_space: the linearized system has no free coordinates")
    F = np.zeros((asm.n_dof, len(inputs)))
    in_labels = []
    for j, item in enumerate(inputs):
        dof, label = _input_dof(asm, item)
        if asm.dofs.free_position[dof] < 0:
            raise ModelError(f"state_space: input {label} is on a fixed or prescribed DOF: the support takes the "
                             "load, nothing moves")
        F[dof, j] = 1.0
        in_labels.append(label)
    P = np.asarray(basis.T @ F)                                         # (n_red, n_in)
    rows, out_labels = [], []
    for item in outputs:
        block, labels = _output_rows(asm, system, item)                 # (3, k, n_dof), k labels
        rows.append(block)
        out_labels += labels
    S = np.concatenate(rows, axis=1)                                    # (3, n_out, n_dof)
    O = np.stack([np.asarray((basis.T @ S[k].T).T) for k in range(3)])   # (3, n_out, n_red)
    M, Cd, K = system.M, system.C, system.K
    _check_mass(asm, M, basis)
    Md = M.toarray() if sp.issparse(M) else np.asarray(M)
    lu = sla.lu_factor(Md)
    MiK = sla.lu_solve(lu, K.toarray() if sp.issparse(K) else np.asarray(K))    # (n_red, n_red)
    MiC = sla.lu_solve(lu, Cd.toarray() if sp.issparse(Cd) else np.asarray(Cd))
    MiP = sla.lu_solve(lu, P)                                           # (n_red, n_in)
    A = np.block([[np.zeros((n, n)), np.eye(n)], [-MiK, -MiC]])
    B = np.vstack([np.zeros_like(P), MiP])
    C = np.hstack([O[0] - O[2] @ MiK, O[1] - O[2] @ MiC])
    D = O[2] @ MiP
    return StateSpaceModel(A, B, C, D, tuple(in_labels), tuple(out_labels), M, Cd, K, P, O)


def _check_mass(asm: Any, M: Any, basis: Any) -> None:
    """Refuse a singular M (massless coordinates), naming the DOF that carries the massless direction."""
    Md = M.toarray() if sp.issparse(M) else np.asarray(M)
    sym = 0.5 * (Md + Md.T)
    values, vectors = np.linalg.eigh(sym)
    top = max(float(np.abs(values).max()), 1e-300)
    if values[0] > MASSLESS * top:
        return
    shape = np.asarray(basis @ vectors[:, 0]).ravel()                   # (n_dof,)
    dof = int(np.argmax(np.abs(shape)))
    raise ModelError(f"state_space: the mass matrix is singular (a massless coordinate, mostly "
                     f"{asm.dofs.label(dof)}: mass {values[0]:.3g} against {top:.3g}); give it mass (a rotary "
                     "inertia, a point mass) or fix it: the first-order form needs M^-1 (static condensation of "
                     "massless DOFs is not done)")


def _node_dof(asm: Any, node: Any, dof: Any, what: str) -> int:
    model = asm.model
    if not isinstance(node, (int, np.integer)) or isinstance(node, bool) or not 0 <= node < model.n_nodes:
        raise ModelError(f"state_space: {what}: node {node!r} does not exist (the model has nodes "
                         f"0..{model.n_nodes - 1})")
    if not isinstance(dof, str):
        raise ModelError(f"state_space: {what}: the DOF must be a name such as 'uy', got {dof!r}")
    return asm.dofs.index(int(node), dof)


def _parse_label(text: str, what: str) -> tuple[int, str, str | None]:
    """``"node 12 uy"`` or ``"node 12 uy velocity"`` -> (12, "uy", kind or None)."""
    parts = text.split()
    if len(parts) in (3, 4) and parts[0] == "node" and parts[1].lstrip("-").isdigit():
        return int(parts[1]), parts[2], parts[3] if len(parts) == 4 else None
    raise ModelError(f"state_space: {what} {text!r} is not understood; write (node, 'uy'), 'node 12 uy', "
                     "(body, 'rz') or a sensor's name")


def _body(asm: Any, on: Any, what: str) -> RigidBody:
    for body in asm.model.bodies:
        if body is on or (isinstance(on, str) and body.name == on):
            return body
    names = ", ".join(repr(b.name) for b in asm.model.bodies) or "none"
    raise ModelError(f"state_space: {what}: {on!r} is not a rigid body of this model (its bodies: {names})")


def _input_dof(asm: Any, item: Any) -> tuple[int, str]:
    """Global DOF index and label of one input: (node, dof), "node 12 uy", (body or its name, dof)."""
    if isinstance(item, str):
        node, dof, kind = _parse_label(item, "input")
        if kind is not None:
            raise ModelError(f"state_space: input {item!r}: an input is a force or moment, not a {kind}")
        i = _node_dof(asm, node, dof, f"input {item!r}")
        return i, asm.dofs.label(i)
    if not isinstance(item, (tuple, list)) or len(item) != 2:
        raise ModelError(f"state_space: input {item!r} is not understood; write (node, 'uy'), 'node 12 uy' or "
                         "(body, 'rz')")
    on, dof = item
    if isinstance(on, (RigidBody, str)):
        body = _body(asm, on, f"input {item!r}")
        i = _node_dof(asm, body.node, dof, f"input on body {body.name!r}")
        return i, f"body {body.name!r} {dof}"
    i = _node_dof(asm, on, dof, f"input {item!r}")
    return i, asm.dofs.label(i)


def _output_rows(asm: Any, system: Any, item: Any) -> tuple[np.ndarray, list[str]]:
    """S (3, k, n_dof): the displacement, velocity and acceleration rows of one output, and its k labels."""
    sensor = _sensor(asm, item)
    if sensor is not None:
        return _sensor_rows(asm, system, sensor)
    name = None
    if isinstance(item, str):
        node, dof, kind = _parse_label(item, "output")
    elif isinstance(item, (tuple, list)) and len(item) in (2, 3):
        node, dof, kind = item[0], item[1], item[2] if len(item) == 3 else None
        if isinstance(node, (RigidBody, str)):
            body = _body(asm, node, f"output {item!r}")
            node, name = body.node, f"body {body.name!r} {dof}"
    else:
        raise ModelError(f"state_space: output {item!r} is not understood; write (node, 'uy'), (node, 'uy', "
                         "'velocity'), 'node 12 uy' or a sensor (its name)")
    kind = "displacement" if kind is None else kind
    if kind not in KINDS:
        raise ModelError(f"state_space: output {item!r}: kind {kind!r} is not one of {', '.join(KINDS)}")
    i = _node_dof(asm, node, dof, f"output {item!r}")
    S = np.zeros((3, 1, asm.n_dof))
    S[KINDS[kind], 0, i] = 1.0
    label = (name or asm.dofs.label(i)) + ("" if kind == "displacement" else f" {kind}")
    return S, [label]


def _sensor(asm: Any, item: Any) -> Sensor | None:
    """The model's sensor named or given by ``item``; None if ``item`` names no sensor and looks like a DOF."""
    sensors = asm.model.sensors
    if isinstance(item, Sensor):
        if item not in sensors:
            raise ModelError(f"state_space: sensor {item.name!r} is not a sensor of this model")
        return item
    if isinstance(item, str):
        hits = [s for s in sensors if s.name == item]
        if hits:
            return hits[0]
        if not item.startswith("node "):
            names = ", ".join(repr(s.name) for s in sensors) or "none"
            raise ModelError(f"state_space: output {item!r} is no sensor of this model (its sensors: {names}) "
                             "and no DOF label such as 'node 12 uy'")
    return None


def _sensor_rows(asm: Any, system: Any, sensor: Sensor) -> tuple[np.ndarray, list[str]]:
    """Central-difference derivatives of a sensor's value with respect to u, v, a along every free DOF
    (3, k, n_dof); u perturbed by spins at 3D rotations (as Newton's corrections)."""
    from flexmb.io.records import ModelLayout

    needs = sensor.definition.needs
    if sensor.quantity == "element_output":
        raise ModelError(f"state_space: sensor {sensor.name!r} (element_output) is not linearized; use node DOF "
                         "outputs")
    moving = system.spin is not None or np.any(system.v) or np.any(system.a)
    if needs != "u" and moving:
        rates = "velocities" if needs == "v" else "accelerations"
        raise ModelError(f"state_space: sensor {sensor.name!r} reads {rates}, which are not linear in the "
                         "perturbation about a moving state (a spin or a given v, a); use node DOF velocity or "
                         "acceleration outputs (rates in the linearized coordinates)")
    layout = ModelLayout.from_assembly(asm)
    u0 = system.u
    v0 = np.zeros(asm.n_dof) if system.v is None else system.v
    a0 = np.zeros(asm.n_dof) if system.a is None else system.a
    h = np.full(asm.n_dof, SENSOR_STEP)                                 # (n_dof,) rad at rotations
    h[asm.dofs.translations().ravel()] *= asm.model.characteristic_length
    h[asm.dofs.n_node_dofs:] *= asm.model.characteristic_length

    def value(u: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        return np.atleast_1d(np.asarray(sensor.definition.evaluate(sensor, Snapshot(layout, u, v, a)), dtype=float))

    k = value(u0, v0, a0).size
    S = np.zeros((3, k, asm.n_dof))
    for i in asm.dofs.free:
        e = np.zeros(asm.n_dof)
        e[i] = h[i]
        S[0, :, i] = (value(asm.update(u0, e), v0, a0) - value(asm.update(u0, -e), v0, a0)) / (2.0 * h[i])
        if needs in ("v", "a"):
            S[1, :, i] = (value(u0, v0 + e, a0) - value(u0, v0 - e, a0)) / (2.0 * h[i])
        if needs == "a":
            S[2, :, i] = (value(u0, v0, a0 + e) - value(u0, v0, a0 - e)) / (2.0 * h[i])
    names = sensor_components(sensor, asm.model.dim)
    labels = [f"{sensor.name}[{c}]" for c in names] if names else [sensor.name]
    return S, labels
