"""Fill numba's kernel cache ahead of time: the ``flexmb compile`` command.

The compiled kernels (:mod:`flexmb.compiled`, ``cache=True``) are compiled on their first call
for the argument types of that call and then stored in numba's cache (where: see
:mod:`flexmb.compiled`). The cache is keyed by those types, so the kernels are compiled here the
way a run calls them: by running tiny models (two or three elements, two steps) through every
time-integration scheme, a load-controlled static step and the natural modes, one kernel set at a
time. A kernel found in the cache is loaded, not compiled, so a second call is quick.

Each set's function builds its models and runs them; nothing is checked but that they run.

Then, where a C compiler is there, :func:`build_ahead_of_time` compiles the kernels with the argument
types these runs called them with from Python into one extension module (:mod:`flexmb.aot`), which
later processes use without importing numba.
"""
from __future__ import annotations

import functools
import hashlib
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb import aot
from flexmb.checks import FlexmbWarning
from flexmb.rotations import cayley

#: the schemes every dynamic warm-up model runs through (flexmb.integrate's ``scheme``)
SCHEMES = ("mid-point", "composed-mid-point", "newmark", "generalized-alpha", "energy-decaying",
           "energy-decaying-velocity")
DT, STEPS = 1e-3, 2


def _dynamics(model: fm.Model, schemes: Iterable[str] = SCHEMES) -> None:
    """Two steps of ``model`` with each scheme that takes it (one assembly; each run starts from
    rest). A scheme that refuses the model (a :class:`~flexmb.model.ModelError` before its first
    step, e.g. the velocity-dissipative one with a cubic mass) has no kernels to compile for it."""
    asm = fm.Assembly(model)
    for scheme in schemes:
        try:
            fm.integrate(asm, DT, STEPS * DT, scheme=scheme, progress=False, max_cutbacks=0)
        except fm.ModelError:
            continue


def _hub_angle(t: float) -> float:
    """A hub's prescribed rotation (rad) at time t (s): a spin-up."""
    return 0.5 * t**2


def _statics(model: fm.Model) -> None:
    """One load-controlled step and the lowest natural modes of ``model`` (statics' kernels)."""
    asm = fm.Assembly(model)
    fm.load_control(asm, 1, progress=False)
    fm.natural_modes(asm, 2)


def _cantilever(dim: int, n_el: int = 2, clamped: bool = True) -> tuple[fm.Model, np.ndarray]:
    """A model with ``n_el + 1`` nodes along x (1 m); ``clamped``: the first node clamped and
    gravity on."""
    model = fm.Model(dim=dim)
    x = np.linspace(0.0, 1.0, n_el + 1)
    nodes = model.add_nodes(np.c_[x, np.zeros((n_el + 1, dim - 1))])
    if clamped:
        model.fix(int(nodes[0]))
        model.set_gravity([0.0, -9.81] + [0.0] * (dim - 2))
    return model, nodes


def _truss() -> None:
    for dim in (2, 3):
        for mass in ("lumped", "consistent"):
            model = fm.Model(dim=dim)
            # a two-bar truss (a V), its apex pulled up (no snap-through)
            nodes = model.add_nodes(np.array([[0.0, 0.0, 0.0], [1.0, 0.5, 0.0], [2.0, 0.0, 0.0]])[:, :dim])
            model.add_truss([[nodes[0], nodes[1]], [nodes[1], nodes[2]]], EA=1e5, rho_A=1.0, mass=mass)
            for node in (nodes[0], nodes[2]):
                model.fix(int(node))
            if dim == 3:
                model.fix(int(nodes[1]), "uz")
            model.add_load(int(nodes[1]), "uy", 1.0)
            model.set_rayleigh_damping("truss", alpha=0.1, beta=1e-4)
            _dynamics(model)
            _statics(model)


def _adjoint(model: fm.Model, nodes: np.ndarray) -> None:
    """The adjoint gradient of two mid-point steps of ``model`` (its Beam2D group "beam2d" on the first
    three of ``nodes``) with respect to the group's section properties: the compiled reverse solves of
    planar beams (:mod:`flexmb.sensitivity.adjoint`)."""
    from flexmb import sensitivity as fs

    params = [fs.parameter(fm.cms.section_property("beam2d", p)) for p in ("EA", "EI", "rho_A", "rho_I")]
    sag = fs.chord_deflection(model, *(int(n) for n in nodes[:3]))
    fs.transient_sensitivity(model, params, {"end": functools.partial(fs.final, sag)}, dt=DT, t_end=STEPS * DT)


def _beam2d() -> None:
    for mass in ("lumped", "consistent", "cubic"):
        for second_order in (False, True):
            model, nodes = _cantilever(2)
            model.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=1e2, rho_A=1.0, rho_I=1e-4, mass=mass,
                             second_order=second_order)
            _dynamics(model)
            _statics(model)
            model.set_rayleigh_damping("beam2d", alpha=0.1, beta=1e-4)
            _dynamics(model)
        # without gravity (which makes a cubic mass's weight configuration-dependent) and driven at its
        # hub: the one-call solves and the compiled step loop of every mass (mechanisms, spin-ups)
        model, nodes = _cantilever(2, clamped=False)
        model.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=1e2, rho_A=1.0, rho_I=1e-4, mass=mass,
                         second_order=True)
        model.fix(int(nodes[0]), ["ux", "uy"])
        model.prescribe(int(nodes[0]), "rz", _hub_angle)
        _dynamics(model, ("mid-point", "composed-mid-point"))           # a spin-up: no load
        _adjoint(model, nodes)
        model.add_load(int(nodes[-1]), "uy", 1.0)
        _dynamics(model, ("mid-point", "generalized-alpha"))
        # a pendulum (pinned by a joint): the beam group's mid-point and generalized-alpha steps with
        # constraints (the one-call residuals inside newton_solve)
        model, nodes = _cantilever(2, clamped=False)
        model.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=1e2, rho_A=1.0, rho_I=1e-4, mass=mass)
        model.add_joint("revolute", None, int(nodes[0]))
        model.set_gravity([0.0, -9.81])
        _dynamics(model, ("mid-point", "generalized-alpha"))
    asm = fm.Assembly(model)                    # the element-by-element mid-point kernel (fused otherwise)
    u = np.zeros(asm.n_dof)
    asm.mid_point_force(u, u)
    asm.mid_point_force_and_tangent(u, u)


def _beam3d() -> None:
    for mass in ("lumped", "consistent"):
        for second_order in (False, True):
            model, nodes = _cantilever(3)
            model.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, GJ=50.0, EI_y=1e2, EI_z=2e2, rho_A=1.0,
                             rho_I=(2e-4, 1e-4, 1e-4), mass=mass, second_order=second_order)
            _dynamics(model)
            _statics(model)
            model.set_rayleigh_damping("beam3d", alpha=0.1, beta=1e-4)
            _dynamics(model)


def _shell() -> None:
    for membrane in ("opt", "cst"):
        for mass in ("lumped", "consistent"):
            model = fm.Model(dim=3)
            # a 1 m square plate of two triangles, clamped along x = 0, under gravity
            nodes = model.add_nodes(np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]]))
            model.add_shell([[nodes[0], nodes[1], nodes[2]], [nodes[0], nodes[2], nodes[3]]], E=1e7, nu=0.3,
                            thickness=0.01, rho=100.0, membrane=membrane, mass=mass)
            for node in (nodes[0], nodes[3]):
                model.fix(int(node))
            model.set_gravity([0.0, 0.0, -9.81])
            _dynamics(model)
            _statics(model)
            model.set_rayleigh_damping("shell", alpha=0.1, beta=1e-4)
            _dynamics(model)


def _bodies() -> None:
    # 2D: a pendulum of two rigid links (revolute joints) and a slider (prismatic)
    model = fm.Model(dim=2)
    link = model.add_rigid_body([0.5, 0.0], 1.0, 0.1)
    second = model.add_rigid_body([1.5, 0.0], 1.0, 0.1)
    model.add_joint("revolute", None, link, at=[0.0, 0.0])
    model.add_joint("revolute", link, second, at=[1.0, 0.0])
    slider = model.add_rigid_body([2.0, 0.0], 1.0, 0.1)
    model.add_joint("revolute", second, slider, at=[2.0, 0.0])
    model.add_joint("prismatic", None, slider, x_axis=[1.0, 0.0])
    model.set_gravity([0.0, -9.81])
    _dynamics(model)
    # 3D: a spinning top on a spherical joint, a link on a revolute and a universal joint
    model = fm.Model(dim=3)
    top = model.add_rigid_body([0.0, 0.0, 0.5], 1.0, [0.02, 0.02, 0.04])
    model.add_joint("spherical", None, top, at=[0.0, 0.0, 0.0])
    arm = model.add_rigid_body([1.0, 0.0, 0.0], 1.0, [0.01, 0.05, 0.05])
    model.add_joint("revolute", None, arm, at=[0.5, 0.0, 0.0], axis=[0.0, 0.0, 1.0])
    hand = model.add_rigid_body([2.0, 0.0, 0.0], 1.0, [0.01, 0.05, 0.05])
    model.add_joint("universal", arm, hand, at=[1.5, 0.0, 0.0], axis=[0.0, 0.0, 1.0], x_axis=[0.0, 1.0, 0.0])
    model.set_gravity([0.0, -9.81, 0.0])
    _dynamics(model)
    # a free body (no joints, no multipliers): the compiled spatial step loop's other kind
    model = fm.Model(dim=3)
    model.add_rigid_body([0.0, 0.0, 0.0], 1.0, [0.02, 0.03, 0.04])
    model.set_gravity([0.0, -9.81, 0.0])
    _dynamics(model, ("mid-point",))
    cayley(np.zeros((1, 3)))                    # the bushings' relative rotation (flexmb.elements.bushing)


def _modal() -> None:
    from flexmb.cms import ModalBodyData

    for dim in (2, 3):
        body, nodes = _cantilever(dim, n_el=3, clamped=False)
        if dim == 2:
            body.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=1e2, rho_A=1.0, rho_I=1e-4, mass="consistent")
        else:
            body.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, GJ=50.0, EI_y=1e2, EI_z=2e2, rho_A=1.0,
                            rho_I=(2e-4, 1e-4, 1e-4), mass="consistent")
        data = ModalBodyData.from_model(body, frame_node=int(nodes[0]), n_modes=2)
        for stiffening in (True, False):
            model = fm.Model(dim=dim)
            frame = model.add_node(np.zeros(dim))
            model.add_modal_body(data, node=frame, stiffening=stiffening)
            model.add_joint("revolute", None, frame, **({"axis": [0.0, 0.0, 1.0]} if dim == 3 else {}))
            model.set_gravity([0.0, -9.81] + [0.0] * (dim - 2))
            _dynamics(model)
    # without weight on a driven joint: the one-call spatial mid-point step (flexmb.compiled.spatial_group)
    # and its compiled step loop (the second step: the first scales the multipliers in Python), and its
    # augmented residual alone
    model = fm.Model(dim=3)
    frame = model.add_node(np.zeros(3))
    model.add_modal_body(data, node=frame)
    model.add_joint("revolute", None, frame, axis=[0.0, 0.0, 1.0], drive=lambda t: t**2)
    _dynamics(model, ("mid-point",))
    _spatial_joint_residual(fm.Assembly(model))


def _spatial_joint_residual(asm: fm.Assembly) -> None:
    """The augmented residual of the one-call spatial step at rest, with and without its Jacobian."""
    from flexmb.integrators.schemes import MidPoint

    scheme = MidPoint(asm)
    s = scheme.initial_state(0.0, np.zeros(asm.n_dof), np.zeros(asm.n_dof))
    for tangent in (True, False):
        scheme._joint_residual(s, DT, np.zeros(asm.n_dof), np.zeros(asm.constraints.n), 1.0, 1.0, tangent)


#: kernel set -> (what it runs, its warm-up); ``flexmb compile --only SET`` runs one
KERNEL_SETS: dict[str, tuple[str, Callable[[], None]]] = {
    "truss": ("2D and 3D trusses, lumped and consistent mass", _truss),
    "beam2d": ("Beam2D, lumped, consistent and cubic mass, with and without second-order strains", _beam2d),
    "beam3d": ("Beam3D, lumped and consistent mass, with and without second-order strains", _beam3d),
    "shell": ("Shell3, optimal and constant-strain membrane, lumped and consistent mass", _shell),
    "bodies": ("rigid bodies and joints, 2D and 3D", _bodies),
    "modal": ("modal bodies, 2D and 3D, with and without stiffening", _modal),
}


@dataclass
class SetReport:
    """What warming up one kernel set did: kernels (signatures) compiled and loaded from the cache."""

    name: str
    compiled: int
    loaded: int
    seconds: float


def _dispatchers() -> list:
    """Every numba dispatcher of the flexmb.compiled modules imported so far."""
    import sys

    from numba.core.registry import CPUDispatcher

    return [obj for name, module in list(sys.modules.items()) if name.startswith("flexmb.compiled.")
            for obj in vars(module).values()
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == name]


def _counts() -> tuple[int, int]:
    """(compilations, cache loads) of flexmb's kernels in this process so far."""
    misses = hits = 0
    for dispatcher in _dispatchers():
        stats = dispatcher.stats
        misses += sum(stats.cache_misses.values())
        hits += sum(stats.cache_hits.values())
    return misses, hits


def compile_kernels(only: Iterable[str] | None = None,
                    report: Callable[[SetReport], None] | None = None) -> list[SetReport]:
    """Compile (or load from numba's cache) the kernels of the sets ``only`` (default: all of
    :data:`KERNEL_SETS`); ``report`` is called with each set's :class:`SetReport` when it is done."""
    import flexmb.compiled

    aot.use_jit()                                # the dispatchers record and cache what runs
    names = list(KERNEL_SETS) if only is None else list(only)
    unknown = [n for n in names if n not in KERNEL_SETS]
    if unknown:
        raise ValueError(f"unknown kernel set {unknown[0]!r}; choose from {', '.join(KERNEL_SETS)}")
    flexmb.compiled.first_compile_notice.enabled = False       # this reports the compilation itself
    reports = []
    for name in names:
        before, start = _counts(), time.perf_counter()
        with warnings.catch_warnings():                     # about the tiny models, not the user's
            warnings.simplefilter("ignore", FlexmbWarning)
            KERNEL_SETS[name][1]()
        after = _counts()
        reports.append(SetReport(name, after[0] - before[0], after[1] - before[1], time.perf_counter() - start))
        if report is not None:
            report(reports[-1])
    return reports


def cache_folders() -> list[str]:
    """The folders numba stores flexmb's compiled kernels in (one per module folder: one)."""
    return sorted({d.stats.cache_path for d in _dispatchers()})


def build_ahead_of_time(only: Iterable[str] | None = None) -> tuple[bool, str]:
    """Build the ahead-of-time module of the kernels (:mod:`flexmb.aot`) for the sets ``only``
    (default: all) and those the module for these sources had already, from numba's cache (run
    :func:`compile_kernels` first); nothing to do if the module has these sets, made by these
    warm-ups. Runs in a fresh process, in which the warm-ups load each kernel
    called from Python, and only those, from the cache, with the types of those calls. Returns
    whether the module was built and one line saying where, or why not (no C compiler, ...)."""
    import subprocess

    names = list(KERNEL_SETS) if only is None else list(only)
    done = subprocess.run([sys.executable, "-m", "flexmb.warm_up", *names], capture_output=True, text=True,
                          env=dict(os.environ, **{aot.SWITCH: "0"}))
    said = done.stdout.strip() or done.stderr.strip() or "no ahead-of-time kernels: the build said nothing"
    return done.returncode == 0, said.splitlines()[-1]


def _build_main(names: list[str]) -> int:
    """``python -m flexmb.warm_up SET ...``: :func:`build_ahead_of_time`'s process; prints one line."""
    import flexmb.compiled

    folder = flexmb.compiled._CACHE
    if folder is None:
        print("no ahead-of-time kernels: numba has no cache folder for flexmb")
        return 1
    fingerprint = flexmb.compiled.sources_fingerprint(Path(flexmb.compiled.__file__).parent)
    made, recipe = aot.built(folder, fingerprint), hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    if made.get("recipe") == recipe and set(names) <= set(made.get("sets", ())):
        print(f"ahead-of-time kernels ({', '.join(made['sets'])}): up to date in {folder}")
        return 0
    names = [name for name in KERNEL_SETS if name in {*names, *made.get("sets", ())}]
    compile_kernels(names)
    built, line = aot.build_and_say([d for d in _dispatchers() if d.signatures], folder, fingerprint, names,
                                    recipe)
    print(line)
    return 0 if built else 1


if __name__ == "__main__":
    raise SystemExit(_build_main(sys.argv[1:]))
