"""Input checks at the door: the error and warning types, and the argument checks of the analyses.

Every check raises :class:`ModelError` (a ``ValueError``) whose message names the offending
item, the value it got and what is allowed, so that a mistake is reported where it is made
and not as a NaN, a singular matrix or a hang many steps later. User functions (time- or
load-factor-dependent loads, prescribed values and joint drives) are checked when they are
called: an exception, a non-finite value or a wrong shape raises :class:`UserFunctionError`
naming the load or joint, the time or load factor and what the function returned or raised.

This module sits below the model and the analyses (it imports nothing of flexmb at module
level), so that every layer can use it.
"""
from __future__ import annotations

import difflib
import functools
import inspect
import math
import numbers
import warnings
from typing import Any, Callable, Iterable

import numpy as np

#: a requested number of time steps, load steps or arc-length steps above this is refused as
#: a likely unit mistake (dt in ms given as s, ...); ``integrate(..., max_steps=N)`` raises it
MAX_STEPS = 1_000_000

#: cut-backs halve a step; beyond this many halvings dt / 2^k reaches round-off of the time
MAX_CUTBACKS = 30


class ModelError(ValueError):
    """Raised for invalid model or argument input; the message names the offending item."""


class UserFunctionError(ModelError):
    """A user function (load, prescribed value, joint drive) raised or returned an invalid value.

    The message names the load or joint, the time or load factor and what the function returned
    or raised; a raised exception is kept as ``__cause__``. A subclass of :class:`ModelError`
    (the function is part of the model the user gave), and deliberately not a ``RuntimeError``:
    the solvers treat runtime failures as a reason to cut the step back, while a broken user
    function fails the same way at any step size and must end the run at once.
    """


class FlexmbWarning(UserWarning):
    """Input that flexmb can run but that is probably not what was meant (e.g. a load on a
    fixed DOF, which goes into the support reaction)."""


# ------------------------------------------------------------------ scalars
def is_real(value: Any) -> bool:
    """A real number: Python or numpy int/float (0-d arrays included), not a bool or a string."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def real(value: Any, what: str, low: float | None = None, high: float | None = None,
         low_open: bool = False) -> float:
    """``value`` as a float, or ModelError: it must be a finite real number in [low, high]
    ((low, high] with ``low_open``)."""
    allowed = _range_text(low, high, low_open)
    if not is_real(value):
        raise ModelError(f"{what} must be a number{allowed}, got {_show(value)} ({type(value).__name__})")
    x = float(value)
    if not math.isfinite(x):
        raise ModelError(f"{what} must be a finite number{allowed}, got {x}")
    if (low is not None and (x < low or (low_open and x == low))) or (high is not None and x > high):
        raise ModelError(f"{what} must be {allowed.lstrip()}, got {x:g}")
    return x


def _range_text(low: float | None, high: float | None, low_open: bool) -> str:
    if low is not None and high is not None:
        return f" in {'(' if low_open else '['}{low:g}, {high:g}]"
    if low is not None:
        return f" {'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f" <= {high:g}"
    return ""


def _shown(value: Any) -> str:
    """A value as the user wrote it: strings quoted, numbers (numpy ones too) plain."""
    return repr(value) if isinstance(value, (str, bytes)) else str(value)


def integer(value: Any, what: str, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an int, or ModelError: a Python or numpy integer (not a bool, not a float
    such as 2.0) in [low, high]."""
    allowed = _range_text(low, high, False)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise ModelError(f"{what} must be an integer{allowed}, got {_shown(value)} ({type(value).__name__})")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ModelError(f"{what} must be an integer{allowed}, got {int(value)}")
    return int(value)


def node_index(node: Any, n_nodes: int, what: str) -> int:
    """An existing node's index, or ModelError naming ``what`` (e.g. ``"fix"``) and the node."""
    if isinstance(node, np.ndarray) and node.ndim == 0:
        node = node[()]
    if not isinstance(node, (int, np.integer)) or isinstance(node, (bool, np.bool_)):
        raise ModelError(f"{what}: node {_shown(node)} is not a node index; node indices are integers "
                         f"(int or numpy integer), got {type(node).__name__}")
    if not 0 <= node < n_nodes:
        raise ModelError(f"{what}: node {int(node)} does not exist (model has {n_nodes} nodes)")
    return int(node)


def item_name(name: Any, default: str, what: str) -> str:
    """An item's name (results, files and messages look items up by it): a non-empty string, or
    ``default`` for None; else ModelError."""
    if name is None:
        return default
    if not isinstance(name, str) or not name:
        raise ModelError(f"{what}: name must be a non-empty string, got {_shown(name)} ({type(name).__name__})")
    return name


def flag(value: Any, what: str) -> bool:
    """A bool (Python or numpy), or ModelError: a string such as "no" would be true."""
    if not isinstance(value, (bool, np.bool_)):
        raise ModelError(f"{what} must be True or False, got {_shown(value)} ({type(value).__name__})")
    return bool(value)


# ------------------------------------------------------------------ arrays
def float_array(value: Any, what: str) -> np.ndarray:
    """``value`` as a float array, or ModelError if it holds anything but numbers (a string
    such as "1e3" would otherwise be converted silently)."""
    try:
        arr = np.asarray(value)
    except ValueError:                                    # ragged nested sequences
        raise ModelError(f"{what} must be an array of numbers, got {_show(value)}") from None
    if arr.dtype.kind not in "iuf" and not (arr.dtype == object and all(is_real(v) for v in arr.flat)):
        raise ModelError(f"{what} must be numbers, got {_show(value)} ({arr.dtype})")
    return arr.astype(float)


def real_array(value: Any, what: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``value`` as a float array of ``shape`` (None: any), all entries finite, or ModelError
    naming the first bad entry."""
    arr = float_array(value, what)
    if shape is not None and arr.shape != shape:
        raise ModelError(f"{what} must have shape {shape}, got {arr.shape}: {_show(value)}")
    bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        index = f" (entry {where[0] if len(where) == 1 else list(where)})" if where else ""
        raise ModelError(f"{what} must be finite, got {arr[where]}{index}: {_show(value)}")
    return arr


def direction(value: Any, what: str, size: int) -> np.ndarray:
    """A non-zero, finite vector of ``size`` components (not normalised), or ModelError."""
    v = real_array(value, what, (size,))
    if not np.any(v):
        raise ModelError(f"{what} must be a non-zero direction, got {v.tolist()}")
    return v


def _show(value: Any, limit: int = 80) -> str:
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


class KeywordError(ModelError, TypeError):
    """An unknown keyword argument: a :class:`ModelError` that is also the ``TypeError`` Python raises
    for one, so ``except TypeError`` around a call keeps working."""


def check_keywords(given: Iterable[str], allowed: Iterable[str], what: str) -> None:
    """KeywordError for a keyword not in ``allowed``, naming the closest one and listing them all."""
    allowed = list(allowed)
    unknown = [k for k in given if k not in allowed]
    if unknown:
        hint = difflib.get_close_matches(unknown[0], allowed, n=1)
        raise KeywordError(f"{what}() got an unexpected keyword {unknown[0]!r}"
                           + (f"; did you mean {hint[0]!r}?" if hint else "")
                           + f" (its keywords: {', '.join(allowed)})")


def deprecated(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that spelling ``old`` is retired in favour of ``new`` (both written as the user writes
    them). A FutureWarning, not a DeprecationWarning: Python shows it by default also when the old
    name is used inside the user's own modules, and the old names go in the next release."""
    warnings.warn(f"{old} is deprecated and will be removed in the next release; use {new}",
                  FutureWarning, stacklevel=stacklevel)


def keywords_listed(method: Callable | None = None, *, renamed: dict[str, str] | None = None) -> Callable:
    """Decorator: an unknown keyword argument raises :class:`KeywordError` naming the closest keyword
    the function takes (difflib) and listing them all (Python's TypeError names only the unknown one).

    ``renamed`` maps retired keywords to the one that replaces them: a retired keyword still works for
    one release, with a FutureWarning naming the new spelling. Several retired keywords renamed to the
    same new one are its parts, passed as a tuple in the order listed (None for a part not given).
    Use bare (``@keywords_listed``) or with the renames (``@keywords_listed(renamed={...})``).
    """
    renamed = dict(renamed or {})

    def decorate(function: Callable) -> Callable:
        parameters = inspect.signature(function).parameters.values()
        if any(p.kind == p.VAR_KEYWORD for p in parameters):
            raise TypeError(f"keywords_listed: {function.__qualname__} takes **kwargs, any keyword is its own")
        allowed = [p.name for p in parameters if p.name not in ("self", "cls")
                   and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        allowed_set = frozenset(allowed)
        parts = {new: [o for o, n in renamed.items() if n == new] for new in set(renamed.values())}
        name = function.__qualname__

        @functools.wraps(function)
        def checked(*args: Any, **kwargs: Any) -> Any:
            if not kwargs.keys() <= allowed_set:
                old = [k for k in kwargs if k in renamed]
                check_keywords([k for k in kwargs if k not in renamed], allowed, name)
                for new in dict.fromkeys(renamed[k] for k in old):
                    olds = parts[new]
                    if new in kwargs:
                        raise KeywordError(f"{name}() got both {new!r} and its old spelling "
                                           f"{', '.join(repr(o) for o in olds if o in kwargs)}; give {new!r}")
                    values = [kwargs.pop(o, None) for o in olds]
                    kwargs[new] = values[0] if len(olds) == 1 else tuple(values)
                    spelling = f"{new}=" + ("" if len(olds) == 1 else f"({', '.join(olds)})")
                    deprecated(f"{name}({', '.join(o + '=' for o in olds)})", f"{name}({spelling})")
            return function(*args, **kwargs)
        checked.renamed_keywords = renamed                 # read by the vocabulary test
        return checked
    return decorate if method is None else decorate(method)


def methods_keywords_listed(cls: type) -> type:
    """Class decorator: :func:`keywords_listed` on every public method the class defines (the
    constructor, inherited methods and :func:`deprecated_method` shims as they are)."""
    for name, value in list(vars(cls).items()):
        if name.startswith("_") or hasattr(value, "renamed_to"):
            continue
        if inspect.isfunction(value) and not hasattr(value, "renamed_keywords"):
            setattr(cls, name, keywords_listed(value))
        elif isinstance(value, (classmethod, staticmethod)) and not hasattr(value.__func__, "renamed_keywords"):
            setattr(cls, name, type(value)(keywords_listed(value.__func__)))
    return cls


def deprecated_alias(new: str, what: str) -> property:
    """A read-only property ``old`` returning attribute ``new`` with a FutureWarning; ``what`` is the
    old spelling as the user writes it (e.g. ``"LinearModes.damped_frequencies"``)."""
    def get(self: Any) -> Any:
        deprecated(what, f"{type(self).__name__}.{new}")
        return getattr(self, new)
    prop = property(get, doc=f"Deprecated spelling of :attr:`{new}` (FutureWarning).")
    prop.fget.renamed_to = new                          # read by the vocabulary test
    return prop


def deprecated_method(new: str, what: str) -> Callable:
    """A method that calls method ``new`` with the same arguments, with a FutureWarning; ``what`` is
    the old spelling as the user writes it (e.g. ``"ModalBodyData.spin_frequencies()"``)."""
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        deprecated(what, f"{type(self).__name__}.{new}()")
        return getattr(self, new)(*args, **kwargs)
    call.__doc__ = f"Deprecated spelling of :meth:`{new}` (FutureWarning)."
    call.renamed_to = new                               # read by the vocabulary test
    return call


# ---------------------------------------------------------- user functions
def one_argument_function(value: Callable, what: str) -> Callable:
    """Check once, where the function is given, that it can be called with one argument."""
    try:
        inspect.signature(value).bind(0.0)
    except TypeError:
        raise ModelError(f"{what}: a function value must take one argument (t, the time in "
                         f"dynamics or the load factor in statics), got {_name(value)} with signature "
                         f"{inspect.signature(value)}") from None
    except ValueError:                           # no signature to inspect (some builtins): accept
        pass
    return value


def _name(fn: Callable) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def _at(x: float, statics: bool) -> str:
    return f"at load factor {x:.6g}" if statics else f"at t = {x:.6g} s"


def _call(fn: Callable, x: float, statics: bool, what: str) -> Any:
    """``fn(x)``; UserFunctionError naming ``what`` and x if it raises (the exception as cause)."""
    try:
        return fn(x)
    except Exception as exc:
        raise UserFunctionError(f"{what}: the function {_name(fn)} raised {type(exc).__name__} "
                                f"{_at(x, statics)}: {exc}") from exc


def evaluate_scalar(fn: Callable, x: float, statics: bool, what: str) -> float:
    """``fn(x)`` as a float; UserFunctionError if it raises or returns a non-finite or non-scalar."""
    value = _call(fn, x, statics, what)
    try:
        out = float(value)
    except (TypeError, ValueError):
        out = None
    if out is None or isinstance(value, (str, bytes)):
        raise UserFunctionError(f"{what}: the function {_name(fn)} returned {_show(value)} "
                                f"({type(value).__name__}) {_at(x, statics)}; it must return one number")
    if not math.isfinite(out):
        raise UserFunctionError(f"{what}: the function {_name(fn)} returned {out} {_at(x, statics)}; "
                                "it must return a finite number")
    return out


def evaluate_vector(fn: Callable, x: float, statics: bool, what: str, size: int) -> np.ndarray:
    """``fn(x)`` as a float array (size,); UserFunctionError otherwise."""
    value = _call(fn, x, statics, what)
    try:
        out = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        out = None
    if out is None or out.shape != (size,):
        raise UserFunctionError(f"{what}: the function {_name(fn)} returned {_show(value)} "
                                f"{_at(x, statics)}; it must return {size} numbers")
    if not np.all(np.isfinite(out)):
        raise UserFunctionError(f"{what}: the function {_name(fn)} returned {out.tolist()} "
                                f"{_at(x, statics)}; it must return finite numbers")
    return out


class CheckedFunction:
    """A user's scalar function of time, wrapped so that a failure names ``what`` (a joint's
    drive); called like the function itself."""

    __slots__ = ("function", "what")

    def __init__(self, function: Callable[[float], float], what: str) -> None:
        self.function = one_argument_function(function, what)
        self.what = what

    def __call__(self, t: float) -> float:
        return evaluate_scalar(self.function, t, False, self.what)


# ------------------------------------------------------------------ the model
def check_model_contents(model: Any, used: np.ndarray) -> None:
    """ModelError for a model that cannot be numbered: no nodes at all, nodes but nothing on them
    (no element, point mass or rigid body), or nodes outside everything. ``model`` is a
    :class:`~flexmb.model.Model` (duck-typed: this module stays below it), ``used`` (n_nodes,)
    whether each node is in an element, a point mass, a body or a tie. Called where the DOFs
    are numbered (:class:`~flexmb.dofs.DofMap`, so ``Assembly`` and every analysis), before an
    empty model can fail as an index error deep inside the assembly."""
    elements = "add_truss, add_beam2d" if model.dim == 2 else "add_truss, add_beam3d, add_shell"
    if model.n_nodes == 0:
        raise ModelError(f"the model has no nodes (a {model.dim}D Model as created), so there is nothing to "
                         f"number or solve; add nodes with Model.add_nodes and elements on them ({elements}), "
                         "or rigid bodies with Model.add_rigid_body")
    unused = np.flatnonzero(~used)
    if unused.size == model.n_nodes:
        raise ModelError(f"the model has {model.n_nodes} nodes but no element, point mass or rigid body on them, "
                         f"so nothing gives them stiffness or mass; add elements ({elements}) or point masses "
                         "(add_point_mass) on the nodes")
    if unused.size:
        listed = ", ".join(str(int(n)) for n in unused[:6]) + (", ..." if unused.size > 6 else "")
        raise ModelError(f"node {int(unused[0])} is not connected to any element, point mass or rigid body "
                         f"({unused.size} such node(s): {listed}); it would have no stiffness and no mass: connect "
                         "it (an element, a point mass, or joints that determine it), or leave it out of the model")


def check_joint_only_nodes(asm: Any) -> None:
    """ModelError for a node held only by joints (no element, no mass) whose free DOFs the joints
    do not determine: with no mass and no stiffness on them, every step's and every static
    Newton matrix would be singular. Determined means: the constraint Jacobian at the reference
    configuration has full column rank on those DOFs (rank by SVD, relative tolerance 1e-10).
    ``asm`` is a :class:`~flexmb.assembly.Assembly` (duck-typed)."""
    dofs = asm.dofs
    if not dofs.joint_only_nodes.size:           # (a joint-only node implies joints, so constraints below)
        return
    C = asm.constraints.evaluate(np.zeros(asm.n_dof), 0.0, np.zeros(asm.constraints.n)).C.tocsc()
    for node in dofs.joint_only_nodes:
        own = dofs.first[node] + np.arange(len(asm.model.dof_names(bool(dofs.has_rotations[node]))))
        columns = own[np.isin(own, dofs.free)]
        if not columns.size:
            continue
        block = C[:, columns].toarray()                           # (n_c, n_node_dofs)
        sv = np.linalg.svd(block, compute_uv=False)
        scale = max(float(sv.max(initial=0.0)), 1.0)
        loose = len(columns) - int(np.sum(sv > 1e-10 * scale))
        if loose:
            names = ", ".join(dofs.label(int(i)) for i in columns)
            raise ModelError(f"node {int(node)} is held only by joints (no element, point mass or rigid body on it) "
                             f"and they leave {loose} of its {columns.size} DOFs ({names}) undetermined, with no mass and no "
                             "stiffness: the equations of motion would be singular. Add the joint between the "
                             "bodies directly, attach the node to a body (Model.attach), or give it a point mass "
                             "(Model.add_point_mass)")


def _require_free_dofs(asm: Any, what: str) -> None:
    """ModelError if every DOF is fixed or prescribed: nothing is left to deform, buckle or trace."""
    if asm.dofs.free.size == 0:
        raise ModelError(f"{what}: the model has no free DOF (all {asm.n_dof} DOFs are fixed or prescribed), so "
                         "there is nothing to solve for; free some DOFs (Model.fix and Model.prescribe hold them)")


# --------------------------------------------------------- analysis arguments
# The analyses call one of these right after building their Assembly (``asm``: an
# :class:`~flexmb.assembly.Assembly`, used duck-typed so that this module stays below it).
def check_integrate(asm: Any, dt: Any, t_end: Any, t0: Any, u0: Any, v0: Any, newton: Any,
                    max_cutbacks: Any, output_every: Any, max_steps: Any, rtol: Any = None, dt_min: Any = None,
                    dt_max: Any = None) -> None:
    """Arguments of :func:`~flexmb.integrators.time_stepping.integrate`; also refuses DOFs that
    have no mass, no stiffness and no joint (their motion is undetermined). Fixed steps (``dt``
    given, ``rtol`` None) must divide t_end - t0; error-controlled steps (``dt`` None or ``rtol``
    given) take ``dt`` as their first step and need dt_min <= dt <= dt_max."""
    what = "integrate"
    _check_assembly(asm, what)
    if t_end is None:
        raise ModelError(f"{what}: t_end (s), the end of the run, is required: integrate(model, dt, t_end) "
                         "or integrate(model, t_end=..., rtol=...) for error-controlled steps")
    adaptive = dt is None or rtol is not None
    if dt is not None:
        dt = real(dt, f"{what}: dt (s)", low=0.0, low_open=True)
    t0 = real(t0, f"{what}: t0 (s)")
    t_end = real(t_end, f"{what}: t_end (s)")
    if not t_end > t0:
        raise ModelError(f"{what}: t_end must be > t0 = {t0:g} s, got {t_end:g} s")
    limit = MAX_STEPS if max_steps is None else integer(max_steps, f"{what}: max_steps", low=1)
    if adaptive:
        _check_step_control(dt, t_end - t0, rtol, dt_min, dt_max, what)
    else:
        for name, value in (("dt_min", dt_min), ("dt_max", dt_max)):
            if value is not None:
                raise ModelError(f"{what}: {name} bounds error-controlled steps; with fixed steps dt = {dt:g} s "
                                 f"leave it out, or pass rtol (dt is then the first step)")
        steps = (t_end - t0) / dt                                    # inf for a denormal dt
        if not steps < limit + 0.5:
            raise ModelError(f"{what}: dt = {dt:g} s from t0 = {t0:g} s to t_end = {t_end:g} s is {steps:.0f} time "
                             f"steps, more than max_steps = {limit}; check the units of dt and t_end (seconds)"
                             + (f", or pass max_steps={steps:.0f} to run them" if math.isfinite(steps) else ""))
        if abs(round(steps) * dt - (t_end - t0)) > 1e-9 * (t_end - t0):
            raise ModelError(f"{what}: t_end - t0 = {t_end - t0} is not a whole number of steps dt = {dt}")
    _check_newton(newton, what)
    integer(max_cutbacks, f"{what}: max_cutbacks", 0, MAX_CUTBACKS)
    integer(output_every, f"{what}: output_every", low=1)
    u = _state_vector(asm, u0, f"{what}: u0")
    _state_vector(asm, v0, f"{what}: v0")
    _warn_loads_on_fixed_dofs(asm)
    refuse_reference_masses(asm, what)
    _check_masses(asm, u, t0, what)


#: rtol of error-controlled steps (:mod:`flexmb.integrators.step_control`) must lie in this range:
#: below it, Newton's own error (its tolerance 1e-10) is what the step-doubling estimate measures
RTOL_RANGE = (1e-8, 0.1)


def _check_step_control(dt: float | None, span: float, rtol: Any, dt_min: Any, dt_max: Any, what: str) -> None:
    """rtol in RTOL_RANGE; dt_min <= dt (the first step) <= dt_max <= span (all in s)."""
    if rtol is not None:
        real(rtol, f"{what}: rtol", low=RTOL_RANGE[0], high=RTOL_RANGE[1])
    low = None if dt_min is None else real(dt_min, f"{what}: dt_min (s)", low=0.0, low_open=True)
    high = None if dt_max is None else real(dt_max, f"{what}: dt_max (s)", low=0.0, low_open=True)
    if high is not None and high > span:
        raise ModelError(f"{what}: dt_max = {high:g} s is longer than the run, t_end - t0 = {span:g} s")
    if low is not None and high is not None and low > high:
        raise ModelError(f"{what}: dt_min = {low:g} s is larger than dt_max = {high:g} s")
    if dt is not None and ((low is not None and dt < low) or (high is not None and dt > high) or dt > span):
        raise ModelError(f"{what}: the first step dt = {dt:g} s must lie within dt_min .. dt_max "
                         f"({low if low is not None else 0:g} .. {high if high is not None else span:g} s)")


def refuse_reference_masses(asm: Any, what: str) -> None:
    """ModelError if a group has a mass valid only about the reference configuration (the
    Hermitian ``mass="cubic"`` of Beam3D): dynamics needs a mass that turns with the body."""
    for g in asm.groups:
        if g.dim == 3 and g.has_rotations and getattr(g, "mass", None) == "cubic":
            raise ModelError(f"{what}: element group {g.name!r} has mass='cubic', the Beam3D Hermitian mass of the "
                             "reference configuration, for natural modes, CMS and sensitivities only; use "
                             "mass='lumped' or 'consistent' for dynamics")


def check_load_control(asm: Any, load_factors: Any, newton: Any, max_cutbacks: Any, u0: Any) -> None:
    """Arguments of :func:`~flexmb.analysis.statics.load_control`."""
    what = "load_control"
    _check_assembly(asm, what)
    if isinstance(load_factors, (int, np.integer, bool, np.bool_)):
        steps = integer(load_factors, f"{what}: the number of load steps", low=1)
        if steps > MAX_STEPS:
            raise ModelError(f"{what}: {steps} load steps are more than {MAX_STEPS}; pass the load "
                             "factors as an array to go beyond")
    else:
        lams = float_array(load_factors, f"{what}: load_factors")
        if lams.ndim != 1:
            raise ModelError(f"{what}: load_factors must be a number of steps (an integer >= 1) or a "
                             f"sequence of load factors, got {_show(load_factors)}")
        if lams.size == 0:
            raise ModelError(f"{what} needs at least one load factor, got {_show(load_factors)}")
        bad = np.flatnonzero(~np.isfinite(lams))
        if bad.size:
            raise ModelError(f"{what}: load factor {int(bad[0])} is {lams[bad[0]]}; load factors must be finite")
    _check_newton(newton, what)
    integer(max_cutbacks, f"{what}: max_cutbacks", 0, MAX_CUTBACKS)
    _state_vector(asm, u0, f"{what}: u0")
    _warn_loads_on_fixed_dofs(asm)
    if u0 is None:
        _warn_nothing_loads(asm, what)


def _warn_nothing_loads(asm: Any, what: str) -> None:
    """FlexmbWarning when statics from the reference state has nothing to do: no function
    values (they may load at other load factors), no follower loads, no gravity, every constant
    load and prescribed value zero, and no force in the reference state (a preloaded spring's
    reactions are worth computing). Constant values scale with the load factor, so then every
    step is u = 0 with zero reactions."""
    model = asm.model
    if (model.vector_loads or np.any(model.gravity) or asm.constraints is not None
            or any(g.time_dependent for g in asm.groups)
            or any(callable(item.value) for item in (*model.loads, *model.prescribed.values()))):
        return
    if (np.any(asm.external_force(1.0, statics=True)) or np.any(asm.prescribed_values(1.0, statics=True))
            or np.any(asm.internal_force(np.zeros(asm.n_dof)))):
        return
    warnings.warn(f"{what}: nothing loads the model: no load, no gravity, no prescribed displacement and no "
                  "preload, so every step gives u = 0; add loads (Model.add_load, set_gravity, ...) or prescribe "
                  "displacements", FlexmbWarning, stacklevel=4)


def check_arc_length(asm: Any, increment: Any, n_steps: Any, max_load_factor: Any, max_displacement: Any,
                     newton: Any, max_cutbacks: Any, u0: Any, load_factor0: Any, psi: Any,
                     dof_scale: Any) -> None:
    """Arguments of :func:`~flexmb.analysis.arc_length.arc_length`."""
    what = "arc_length"
    _check_assembly(asm, what)
    _require_free_dofs(asm, what)
    real(increment, f"{what}: increment (m)", low=0.0, low_open=True)
    steps = integer(n_steps, f"{what}: n_steps", low=1)
    if steps > MAX_STEPS:
        raise ModelError(f"{what}: n_steps = {steps} is more than {MAX_STEPS} steps; stop the path with "
                         "max_load_factor or max_displacement instead")
    if max_load_factor is not None:
        real(max_load_factor, f"{what}: max_load_factor", low=0.0, low_open=True)
    if max_displacement is not None:
        real(max_displacement, f"{what}: max_displacement (m)", low=0.0, low_open=True)
    _check_newton(newton, what)
    integer(max_cutbacks, f"{what}: max_cutbacks", 0, MAX_CUTBACKS)
    _state_vector(asm, u0, f"{what}: u0")
    real(load_factor0, f"{what}: load_factor0")
    real(psi, f"{what}: psi (m/N)", low=0.0)
    if dof_scale is not None:
        scale = real_array(dof_scale, f"{what}: dof_scale")
        if scale.shape != (asm.n_dof,):
            raise ModelError(f"{what}: dof_scale must have shape ({asm.n_dof},), got {scale.shape}")
        bad = np.flatnonzero(scale <= 0.0)
        if bad.size:
            raise ModelError(f"{what}: dof_scale at {asm.dofs.label(int(bad[0]))} is {scale[bad[0]]:g}; "
                             "the factors must be positive")
    _warn_loads_on_fixed_dofs(asm)


def check_linear_buckling(asm: Any, n_modes: Any, u_pre: Any, load_factor: Any, dense_limit: Any) -> None:
    """Arguments of :func:`~flexmb.analysis.buckling.linear_buckling`."""
    what = "linear_buckling"
    _check_assembly(asm, what)
    _require_free_dofs(asm, what)
    integer(n_modes, f"{what}: n_modes", low=1)
    _state_vector(asm, u_pre, f"{what}: u_pre")
    real(load_factor, f"{what}: load_factor")
    integer(dense_limit, f"{what}: dense_limit", low=0)
    _warn_loads_on_fixed_dofs(asm)


def check_consistent_initial_state(asm: Any, u0: Any, v0: Any, t0: Any, iterations: Any) -> None:
    """Arguments of :func:`~flexmb.multibody.initial.consistent_initial_state`."""
    what = "consistent_initial_state"
    _check_assembly(asm, what)
    _state_vector(asm, u0, f"{what}: u0")
    _state_vector(asm, v0, f"{what}: v0")
    real(t0, f"{what}: t0 (s)")
    integer(iterations, f"{what}: iterations", low=1)


def _check_assembly(asm: Any, what: str) -> None:
    """The Assembly must describe the model as it is now (it copies loads, masses, supports and
    the DOF layout when it is built)."""
    if not hasattr(asm, "dofs"):                # duck-typed: this module stays below the Assembly
        raise ModelError(f"{what} needs a flexmb.Model or its flexmb.Assembly, got {asm!r:.80} "
                         f"({type(asm).__name__})")
    model = asm.model
    if asm.dofs.model_revision != model.revision:
        raise ModelError(f"{what}: the model was changed after its Assembly was built (nodes, elements, "
                         "supports, masses, loads, joints or gravity added or set since); build a new "
                         "flexmb.Assembly(model), or pass the model itself")


def _check_newton(newton: Any, what: str) -> None:
    # isinstance(newton, NewtonSettings) by the class's name: this module stays below flexmb.integrators
    # (issue 30: no import circle), and a subclass still passes
    is_settings = any(c.__name__ == "NewtonSettings" and c.__module__ == "flexmb.integrators.newton"
                      for c in type(newton).__mro__)
    if newton is not None and not is_settings:
        raise ModelError(f"{what}: newton must be a flexmb.NewtonSettings (e.g. NewtonSettings(residual_tol="
                         f"1e-8)) or None, got {_show(newton)} ({type(newton).__name__})")


def _state_vector(asm: Any, value: Any, what: str) -> np.ndarray | None:
    """A DOF vector (n_dof,) of finite numbers, the bad entry named by its DOF; None passes."""
    if value is None:
        return None
    arr = float_array(value, what)
    if arr.shape != (asm.n_dof,):
        raise ModelError(f"{what} must have shape ({asm.n_dof},) (one value per DOF), got {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        i = int(bad[0])
        raise ModelError(f"{what} is {arr[i]} at {asm.dofs.label(i)} (DOF {i}); it must be finite")
    return arr


def _warn_loads_on_fixed_dofs(asm: Any) -> None:
    """FlexmbWarning for each load on a fixed or prescribed DOF: it goes into the reaction."""
    model, dofs = asm.model, asm.dofs
    held = np.zeros(asm.n_dof, dtype=bool)
    held[dofs.prescribed] = True
    for load in model.loads:
        if load.distributed is not None:        # a pressure's share on a supported edge is normal
            continue
        if held[dofs.index(load.node, load.dof)] and (callable(load.value) or load.value != 0.0):
            given = model.prescribed.get((load.node, load.dof))
            moving = given is not None and (callable(given.value) or given.value != 0.0)
            warnings.warn(f"{load.label} acts on a {'prescribed' if moving else 'fixed'} DOF: it goes into "
                          "the support reaction and does not load the model", FlexmbWarning, stacklevel=4)
    for load in model.vector_loads:
        rows = dofs.translations()[load.node] if load.kind == "follower-force" else \
            dofs.first[load.node] + model.dim + np.arange(3)
        if held[rows].all():
            warnings.warn(f"{load.kind} load on node {load.node} acts on fixed DOFs only: it goes into the "
                          "support reaction and does not load the model", FlexmbWarning, stacklevel=4)


def _check_masses(asm: Any, u: np.ndarray | None, t0: float, what: str) -> None:
    """ModelError naming the free DOFs that have no mass, no stiffness and no joint at the start:
    nothing determines their motion (a rigid body without inertia and free to turn, a massless
    node between bars in a line). Massless DOFs with stiffness (a massless slider on a rod) are fine."""
    free = asm.dofs.free
    u = np.zeros(asm.n_dof) if u is None else u
    mass = np.abs(asm.mass.diagonal())                                          # (n_dof,)
    if asm.rotation_nodes.size:
        mass[asm.rotation_dofs] += np.abs(np.diagonal(asm.rotary_inertia, axis1=1, axis2=2))
    candidates = free[mass[free] == 0.0]
    if candidates.size and asm.configuration_masses:      # it only adds inertia: asked when DOFs lack it
        mass[free] += np.abs(asm.free_matrix(asm.configuration_mass_data(u)).diagonal())
        candidates = free[mass[free] == 0.0]
    if not candidates.size:
        return
    position = asm.dofs.free_position
    stiffness = np.abs(asm.free_matrix(asm.force_and_tangent(u)[1]).diagonal())   # (n_free,)
    held = stiffness[position[candidates]] > 0.0
    if asm.constraints is not None:
        C = asm.constraints.evaluate(u, t0, np.zeros(asm.constraints.n)).C.tocsc()
        held |= np.asarray(abs(C[:, candidates]).sum(axis=0)).ravel() > 0.0
    loose = candidates[~held]
    if loose.size:
        names = ", ".join(asm.dofs.label(int(i)) for i in loose[:6]) + (", ..." if loose.size > 6 else "")
        raise ModelError(f"{what}: {loose.size} DOF(s) have no mass, no stiffness and no joint at the start, so "
                         f"nothing determines their motion: {names}; give the node or body a mass or "
                         "inertia, connect it, or fix the DOF")
