"""One vocabulary across the public API (issue 30, item 2).

The one name of each concept, its unit, and the spellings it replaces. An old spelling keeps
working for one release with a ``FutureWarning`` naming the new one (FutureWarning rather than
DeprecationWarning: Python shows it by default, also when the old name is used inside a user's own
modules, and the old names go in the next release).

========================  ========================================  ==========  ========================================
concept                   the one name                              unit        old spellings (deprecated)
========================  ========================================  ==========  ========================================
angular frequency of a    ``omega`` (damped modes: ``|Im s|``)      rad/s       ``LinearModes.damped_frequencies``;
mode                                                                            ``ModalBodyData.frequencies`` and
                                                                                ``.spin_frequencies()`` ->
                                                                                ``spin_omega()`` (pending)
frequency of a mode       ``frequencies_hz``                        Hz          --
squared angular           ``eigenvalues`` (K, M problems)           rad^2/s^2   --
frequency
complex eigenvalue s      ``eigenvalues`` (LinearModes,             1/s         --
                          CampbellDiagram)
modes computed or         ``n_modes`` (rigid-body modes count)      --          --
returned
elastic modes of a        ``n_elastic_modes`` (the rigid-body       --          ``free_interface(n_modes=)``
free-interface reduction  modes come on top)
load factor of a state    ``load_factor``                           --          ``linear_buckling(load_factor_pre=)``,
                                                                                ``BucklingResult.load_factor_pre``;
                                                                                ``StaticPath.record(lam)``
start load factor of a    ``load_factor0`` (as ``u0``, ``t0``)      --          ``arc_length(lam0=)``
path
load factors of a path,   ``load_factors``                          --          --
critical ones
joint (Lagrange)          ``multipliers``                           N, N m      ``linearize(lam=)``,
multipliers                                                                     ``LinearizedSystem.lam``
steady spin               ``spin=(axis, speed, centre)``; in        rad/s, m    ``campbell(spin_axis=, centre=)``
                          ``campbell``, whose ``speeds`` sweep the
                          speed, ``spin=(axis, centre)``
spin speeds of a sweep    ``speeds``                                rad/s       --
energies of a time        the series ``kinetic``, ``strain``,       J           ``TimeHistory.dissipated_energy``,
history                   ``work``, ``potential``, ``dissipated``,              ``.total_energy``, ``.joint_work_done``
                          ``joint_work``, ``total``
end time, start time,     ``t_end``, ``t0``, ``dt``                 s           never ``tend``, ``t_final``, ``tmax``
step
output stride             ``output_every``                          --          ``record_every`` (partitioned,
                                                                                closing and Taylor runs)
the model an analysis     ``model``: a Model or its Assembly        --          ``system_matrices(asm=)``,
takes                                                                           ``consistent_initial_state(asm=)``
design change             ``changes``: variable -> the amount       the         --
                          alpha added to its value, p -> p + alpha  variable's
                          (a multiplier's baseline is 1: "E x 0.5"  unit
                          is -0.5); ``InverseModification.alpha``
                          the same amounts, ``.changes`` the dict
target frequencies        ``target_hz`` (argument), ``targets_hz``  Hz          --
                          (result)
========================  ========================================  ==========  ========================================

Unknown keywords: every public function and the public methods of the analysis and result classes
raise :class:`flexmb.checks.KeywordError` (a ModelError and a TypeError) naming the closest keyword,
e.g. ``integrate() got an unexpected keyword 'tend'; did you mean 't_end'?``.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import flexmb as fm
import flexmb.cms as cms
from flexmb.checks import KeywordError

#: parameter names that are a second spelling of a concept in the table (or a generic stray)
OLD_PARAMETERS = {"lam": "multipliers or load_factor", "lam0": "load_factor0", "load_factor_pre": "load_factor",
                  "spin_axis": "spin", "centre": "spin", "tend": "t_end", "t_final": "t_end", "tfinal": "t_end",
                  "tmax": "t_end", "t_max": "t_end", "t_stop": "t_end", "tstart": "t0", "t_start": "t0",
                  "record_every": "output_every"}
#: attribute names that are a second spelling of a concept in the table
OLD_ATTRIBUTES = {"damped_frequencies": "omega", "natural_frequencies": "omega", "frequencies": "omega",
                  "load_factor_pre": "load_factor", "lam": "multipliers", "dissipated_energy": "dissipated",
                  "total_energy": "total", "joint_work_done": "joint_work"}

#: the result and analysis classes whose public attributes and methods the vocabulary covers
RESULT_CLASSES = {
    "flexmb": ("BucklingResult", "CampbellDiagram", "Equilibrium", "LinearModes", "LinearizedSystem", "ModeShapes",
               "NaturalModes", "PartitionedRun", "Result", "StaticPath", "TimeHistory"),
    "flexmb.cms": ("CmsModel", "CmsModes", "InverseModification", "ModalBodyData", "ModificationStudy",
                   "ModifiedModes", "ReducedBasis", "Sensitivity"),
}
#: classes that hold modes: each gives omega (rad/s) and frequencies_hz (Hz)
MODAL_RESULTS = ("NaturalModes", "LinearModes", "CampbellDiagram", "CmsModes", "ReducedBasis", "ModifiedModes",
                 "Sensitivity", "ModalBodyData")

def _namespaces():
    return {"flexmb": fm, "flexmb.cms": cms}


def _public_functions():
    for package, namespace in _namespaces().items():
        for name in namespace.__all__:
            value = getattr(namespace, name)
            if inspect.isfunction(value):
                yield name, value


def _result_classes():
    for package, names in RESULT_CLASSES.items():
        for name in names:
            yield name, getattr(_namespaces()[package], name)


def _is_alias(cls: type, name: str) -> bool:
    """A deprecation shim (flexmb.checks.deprecated_alias or deprecated_method)."""
    attr = inspect.getattr_static(cls, name, None)
    return hasattr(attr.fget if isinstance(attr, property) else attr, "renamed_to")


def _attributes(cls: type) -> set[str]:
    names = {n for n in dir(cls) if not n.startswith("_") and not _is_alias(cls, n)}
    names |= set(getattr(cls, "__dataclass_fields__", {}))
    names |= set(getattr(cls, "SERIES", ()))                    # result series read as attributes
    return {n for n in names if not n.startswith("_")}


def _methods(cls: type):
    for name in dir(cls):
        if name.startswith("_") or _is_alias(cls, name):
            continue
        static = inspect.getattr_static(cls, name)
        if isinstance(static, (classmethod, staticmethod)):
            yield name, static.__func__
        elif inspect.isfunction(static):
            yield name, static


def _parameters(fn) -> list[str]:
    return [p.name for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in ("self", "cls")]


# ------------------------------------------------------------------ one spelling per concept
def test_public_functions_use_one_keyword_per_concept():
    wrong = []
    for name, fn in _public_functions():
        for p in _parameters(fn):
            if p in OLD_PARAMETERS:
                wrong.append(f"{name}({p}=): use {OLD_PARAMETERS[p]}")
        first = _parameters(fn)[:1]
        if first == ["asm"]:
            wrong.append(f"{name}(asm): the model argument is 'model' (a Model or its Assembly)")
    assert not wrong, "second spellings in public signatures:\n" + "\n".join(wrong)


def test_result_classes_use_one_name_per_concept():
    wrong = []
    for cname, cls in _result_classes():
        for a in _attributes(cls):
            generic = a == "frequencies" or a.endswith("_frequencies")      # rad/s is omega, Hz is *_hz
            if a in OLD_ATTRIBUTES or generic:
                wrong.append(f"{cname}.{a}: use {OLD_ATTRIBUTES.get(a, 'omega (rad/s) or frequencies_hz (Hz)')}")
        for mname, fn in _methods(cls):
            for p in _parameters(fn):
                if p in OLD_PARAMETERS:
                    wrong.append(f"{cname}.{mname}({p}=): use {OLD_PARAMETERS[p]}")
    assert not wrong, "second spellings on result classes:\n" + "\n".join(wrong)


def test_every_modal_result_gives_omega_and_frequencies_hz():
    missing = [f"{cname}.{a}" for cname, cls in _result_classes() if cname in MODAL_RESULTS
               for a in ("omega", "frequencies_hz") if a not in _attributes(cls)]
    assert not missing, f"modal results without their frequencies: {missing}"


def test_every_top_level_function_takes_a_model_or_its_assembly():
    """consistent_initial_state failed with an AttributeError on a Model; every analysis takes both."""
    model = _pendulum()
    asm = fm.Assembly(model)
    u_model, v_model = fm.consistent_initial_state(model, hold={(0, "rz"): 2.0})
    u_asm, v_asm = fm.consistent_initial_state(asm, hold={(0, "rz"): 2.0})
    np.testing.assert_allclose(v_model, v_asm, rtol=0.0, atol=1e-14 * np.abs(v_asm).max())
    # the revolute joint at the origin holds the body at (0, -L): its velocity is L w along x
    assert v_model[0] == pytest.approx(2.0 * LENGTH, rel=1e-12)
    takes_model = [name for name, fn in _public_functions()
                   if _parameters(fn)[:1] == ["model"]]
    analyses = {"arc_length", "campbell", "consistent_initial_state", "equilibrium", "integrate",
                "linear_buckling", "linear_static", "linearize", "load_control", "natural_modes",
                "relative_equilibrium", "system_matrices"}
    assert analyses <= set(takes_model) | {"campbell"}, sorted(analyses - set(takes_model))


# ------------------------------------------------------------------ "did you mean"
def test_integrate_typo_names_the_keyword_it_meant():
    with pytest.raises(TypeError, match=r"integrate\(\) got an unexpected keyword 'tend'; did you mean 't_end'\?"):
        fm.integrate(fm.Model(2), tend=1.0)
    with pytest.raises(fm.ModelError, match="did you mean 't_end'"):       # a ModelError too
        fm.integrate(fm.Model(2), 0.1, tend=1.0)


def _typo(name: str) -> str:
    """A keyword with its last letter typed twice."""
    return name + name[-1]


def _suggestion(name: str) -> str:
    """What the error must say for the typo of ``name`` (a one-letter name such as ``a`` has
    longer neighbours as close as itself: only the unknown keyword is named then)."""
    return f"did you mean {name!r}" if len(name) > 1 else f"unexpected keyword {_typo(name)!r}"


def test_every_public_function_suggests_the_keyword_it_meant():
    unchecked = []
    for name, fn in _public_functions():
        if not hasattr(fn, "renamed_keywords"):
            unchecked.append(name)
            continue
        for p in _parameters(fn):
            with pytest.raises(KeywordError, match=_suggestion(p)):
                fn(**{_typo(p): 1.0})
    assert not unchecked, f"public functions without the keyword check: {unchecked}"


def test_every_result_method_suggests_the_keyword_it_meant():
    unchecked = []
    classes = list(_result_classes()) + [("Model", fm.Model)]
    for cname, cls in classes:
        for mname, fn in _methods(cls):
            if not hasattr(fn, "renamed_keywords"):
                unchecked.append(f"{cname}.{mname}")
                continue
            for p in _parameters(fn):
                with pytest.raises(KeywordError, match=_suggestion(p)):
                    fn(None, **{_typo(p): 1.0})
    assert not unchecked, f"public methods without the keyword check: {unchecked}"


# ------------------------------------------------------------------ a clean namespace
def test_dir_flexmb_shows_the_public_api_and_subpackages_only():
    shown = {n for n in dir(fm) if not n.startswith("__")}
    assert {"annotations", "lazy_exports", "_PROVIDERS"}.isdisjoint(shown)
    subpackages = {"analysis", "cms", "elements", "integrators", "io", "multibody", "viz"}
    assert subpackages <= shown
    extra = shown - set(fm.__all__)
    for name in extra:                           # what is not an exported name is a subpackage
        assert hasattr(getattr(fm, name), "__path__"), f"dir(flexmb) shows {name!r}, neither API nor subpackage"


# ------------------------------------------------------------------ the shims
LENGTH, G = 2.0, 9.81


def _pendulum() -> fm.Model:
    """A point-like body of 1 kg hanging at (0, -L) from a revolute joint at the origin."""
    m = fm.Model(2)
    body = m.add_rigid_body([0.0, -LENGTH], mass=1.0, inertia=1e-9)
    m.add_joint("revolute", None, body, at=[0.0, 0.0])
    m.set_gravity([0.0, -G])
    return m


def _jeffcott(kx: float = 100.0, ky: float = 400.0) -> fm.Model:
    """A 1 kg point mass held by two orthogonal bars of stiffness kx, ky (omega 10 and 20 rad/s)."""
    m = fm.Model(2)
    c, a, b = m.add_node([0.0, 0.0]), m.add_node([1.0, 0.0]), m.add_node([0.0, 1.0])
    m.add_truss([[c, a]], EA=kx)
    m.add_truss([[c, b]], EA=ky)
    m.add_point_mass(c, 1.0)
    m.fix(a)
    m.fix(b)
    return m


def _column(n: int = 8, length: float = 1.0, EI: float = 2.0) -> fm.Model:
    """A cantilever column under a unit tip compression: Euler load pi^2 EI / (4 L^2)."""
    m = fm.Model(2)
    nodes = m.add_nodes(np.c_[np.zeros(n + 1), np.linspace(0.0, length, n + 1)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=EI, rho_A=1.0, second_order=True)
    m.fix(int(nodes[0]))
    m.add_load(int(nodes[-1]), "uy", -1.0)
    return m


def _old(call, new_spelling: str):
    """Run ``call`` expecting exactly one FutureWarning that names ``new_spelling``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = call()
    future = [w for w in caught if issubclass(w.category, FutureWarning)]
    assert len(future) == 1, [str(w.message) for w in caught]
    assert new_spelling in str(future[0].message), str(future[0].message)
    assert future[0].filename == __file__, "the warning must point at the caller's line"
    return value


def test_linearized_shims_warn_and_give_the_same_values():
    lin = fm.linearize(_pendulum())
    # the joint carries the weight: m g = 9.81 N
    assert np.abs(lin.multipliers).max() == pytest.approx(G, rel=1e-9)
    modes = lin.eigen()
    swinging = modes.omega[modes.omega > 1e-6]
    assert swinging[0] == pytest.approx(np.sqrt(G / LENGTH), rel=1e-6)
    np.testing.assert_array_equal(_old(lambda: modes.damped_frequencies, "LinearModes.omega"), modes.omega)
    np.testing.assert_array_equal(_old(lambda: lin.lam, "LinearizedSystem.multipliers"), lin.multipliers)
    old = _old(lambda: fm.linearize(_pendulum(), lam=lin.multipliers), "linearize(multipliers=)")
    np.testing.assert_array_equal(old.eigen().eigenvalues, fm.linearize(_pendulum(), multipliers=lin.multipliers)
                                  .eigen().eigenvalues)
    with pytest.raises(KeywordError, match="both 'multipliers' and its old spelling 'lam'"):
        fm.linearize(_pendulum(), lam=lin.multipliers, multipliers=lin.multipliers)


def test_campbell_spin_shim_and_omega():
    speeds = [0.0, 3.0]
    new = fm.campbell(_jeffcott(), speeds, n_modes=2, spin=(None, (0.0, 0.0)))
    old = _old(lambda: fm.campbell(_jeffcott(), speeds, n_modes=2, spin_axis=None, centre=(0.0, 0.0)),
               "campbell(spin=(spin_axis, centre))")
    np.testing.assert_array_equal(old.eigenvalues, new.eigenvalues)
    np.testing.assert_allclose(np.sort(new.omega[0]), [10.0, 20.0], rtol=1e-9)
    np.testing.assert_allclose(new.frequencies_hz, new.omega / (2.0 * np.pi), rtol=1e-15)
    # the supports turn with the hub: in the rotating frame the mass sees kx, ky and the spin W
    W = 3.0
    wx2, wy2 = 100.0, 400.0
    roots = np.roots([1.0, wx2 + wy2 + 2.0 * W**2, (wx2 - W**2) * (wy2 - W**2)])
    np.testing.assert_allclose(np.sort(new.omega[1]), np.sort(np.sqrt(-roots.real)), rtol=1e-8)
    with pytest.raises(fm.ModelError, match="campbell: spin must be"):
        fm.campbell(_jeffcott(), speeds, spin=(None, 3.0, (0.0, 0.0)))


def test_buckling_load_factor_shim():
    model = _column()
    path = fm.load_control(model, [0.5])
    new = fm.linear_buckling(model, 2, u_pre=path.u[-1], load_factor=0.5)
    old = _old(lambda: fm.linear_buckling(model, 2, u_pre=path.u[-1], load_factor_pre=0.5),
               "linear_buckling(load_factor=)")
    np.testing.assert_array_equal(old.load_factors, new.load_factors)
    assert new.load_factor == 0.5
    assert _old(lambda: new.load_factor_pre, "BucklingResult.load_factor") == 0.5
    euler = np.pi**2 * 2.0 / 4.0
    assert new.critical == pytest.approx(euler, rel=2e-3), f"{new.critical} vs Euler {euler}"


def test_arc_length_load_factor0_shim():
    model = _column()
    start = fm.load_control(model, [0.2])
    new = fm.arc_length(model, 0.01, n_steps=3, u0=start.u[-1], load_factor0=0.2)
    old = _old(lambda: fm.arc_length(model, 0.01, n_steps=3, u0=start.u[-1], lam0=0.2), "arc_length(load_factor0=)")
    np.testing.assert_array_equal(old.load_factors, new.load_factors)
    assert new.load_factors[0] > 0.2                           # the path goes on from the start


def test_model_keyword_shims():
    asm = fm.Assembly(_jeffcott())
    new = fm.system_matrices(model=asm)
    old = _old(lambda: fm.system_matrices(asm=asm), "system_matrices(model=)")
    np.testing.assert_array_equal(old.K.toarray(), new.K.toarray())
    u_old, v_old = _old(lambda: fm.consistent_initial_state(asm=asm), "consistent_initial_state(model=)")
    u_new, v_new = fm.consistent_initial_state(model=asm)
    np.testing.assert_array_equal(u_old, u_new)
    np.testing.assert_array_equal(v_old, v_new)


def _beam_components():
    m = fm.Model(2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 2.0, 9), np.zeros(9)])
    m.add_beam2d(np.c_[nodes[:4], nodes[1:5]], EA=1e4, EI=10.0, rho_A=1.0, mass="consistent", name="left")
    m.add_beam2d(np.c_[nodes[4:-1], nodes[5:]], EA=1e4, EI=10.0, rho_A=1.0, mass="consistent", name="right")
    return cms.components_from_groups(m, {"left": ["left"], "right": ["right"]})


def test_free_interface_elastic_mode_count_shim_and_omega():
    comp = _beam_components()[0]
    new = cms.free_interface(comp, n_elastic_modes=2)
    old = _old(lambda: cms.free_interface(comp, n_modes=2), "free_interface(n_elastic_modes=)")
    np.testing.assert_array_equal(old.eigenvalues, new.eigenvalues)
    assert new.size == 3 + 2 and new.n_rigid == 3                 # the rigid-body modes come on top
    np.testing.assert_allclose(new.omega**2, new.eigenvalues, rtol=1e-12)
    np.testing.assert_allclose(new.frequencies_hz, new.omega / (2.0 * np.pi), rtol=1e-15)
    synthesized = cms.synthesize([cms.free_interface(c, n_elastic_modes=4) for c in _beam_components()])
    modes = synthesized.modes(6)
    modified = cms.forward_modification(synthesized, {cms.density_scale("left"): 0.0})
    # a zero change leaves the modes: the same omega as the synthesized baseline
    np.testing.assert_allclose(modified.omega[:6], modes.omega, rtol=1e-9, atol=1e-9 * modes.omega.max())
    np.testing.assert_allclose(modified.frequencies_hz, modified.omega / (2.0 * np.pi), rtol=1e-15)


def test_method_shim_calls_the_new_method_and_is_left_unwrapped():
    """deprecated_method (for renamed methods, e.g. ModalBodyData.spin_frequencies -> spin_omega)."""
    from flexmb.checks import deprecated_method, methods_keywords_listed

    @methods_keywords_listed
    class Spring:
        def omega(self, stiffness: float, mass: float = 1.0) -> float:
            return float(np.sqrt(stiffness / mass))

        frequencies = deprecated_method("omega", "Spring.frequencies()")

    spring = Spring()
    assert _old(lambda: spring.frequencies(400.0, mass=4.0), "Spring.omega()") == 10.0
    assert _is_alias(Spring, "frequencies") and not _is_alias(Spring, "omega")
    with pytest.raises(KeywordError, match="did you mean 'mass'"):
        spring.omega(400.0, masss=4.0)


def _cantilever_body() -> cms.ModalBodyData:
    """A steel-like cantilever of 1 m (EI = 1, rho_A = 1, 10 Beam2D) reduced to 2 frame-clamped modes:
    omega_1 = 3.516 sqrt(EI / (rho_A L^4)) rad/s (Euler-Bernoulli)."""
    m = fm.Model(2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 11), np.zeros(11)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e4, EI=1.0, rho_A=1.0, mass="consistent")
    return cms.ModalBodyData.from_model(m, int(nodes[0]), 2, basis="free-interface")


def test_modal_body_data_omega_and_spin_omega_shims():
    data = _cantilever_body()
    assert data.omega[0] == pytest.approx(3.516, rel=2e-3)
    np.testing.assert_allclose(data.frequencies_hz, data.omega / (2.0 * np.pi), rtol=1e-15)
    np.testing.assert_array_equal(_old(lambda: data.frequencies, "ModalBodyData.omega"), data.omega)
    spin = np.array([0.0, 0.0, 2.0])
    new = data.spin_omega(spin)
    np.testing.assert_array_equal(_old(lambda: data.spin_frequencies(spin), "ModalBodyData.spin_omega()"), new)
    np.testing.assert_array_equal(_old(lambda: data.spin_omega(omega=spin), "spin_omega(angular_velocity=)"), new)
    assert new[0] > data.omega[0]                        # a spinning cantilever stiffens (flap)
    with pytest.raises(KeywordError, match="did you mean 'stiffening'"):
        data.spin_omega(spin, stifening=False)


def test_time_history_energy_shims():
    model = _pendulum()
    u0, v0 = fm.consistent_initial_state(model, hold={(0, "rz"): 1.0})
    h = fm.integrate(model, 0.01, 0.2, u0=u0, v0=v0, progress=False)
    total = np.array(h.kinetic) + np.array(h.strain) + h.dissipated - np.array(h.work)
    np.testing.assert_array_equal(h.total, total)
    assert np.abs(h.total - h.total[0]).max() < 1e-8 * np.abs(h.kinetic).max()
    np.testing.assert_array_equal(_old(lambda: h.total_energy, "TimeHistory.total"), h.total)
    np.testing.assert_array_equal(_old(lambda: h.dissipated_energy, "TimeHistory.dissipated"), h.dissipated)
    np.testing.assert_array_equal(_old(lambda: h.joint_work_done, "TimeHistory.joint_work"), h.joint_work)
    with pytest.raises(KeywordError, match="did you mean 'since'"):
        h.energy_error(sinse=0.0)


def test_static_path_record_and_output_stride_shims():
    model = _column()
    asm = fm.Assembly(model)
    path = fm.load_control(asm, [0.5])
    again = fm.StaticPath(path.layout)
    _old(lambda: again.record(asm, lam=0.5, u=path.u[-1], reaction=path.reactions[-1]), "record(load_factor=)")
    assert again.load_factors[-1] == 0.5
    np.testing.assert_array_equal(again.u[-1], path.u[-1])
    from flexmb.multibody.constrained_system import ConstrainedSystem

    system = ConstrainedSystem.from_assembly(fm.Assembly(_pendulum()))
    q0, qd0 = np.zeros(3), np.array([LENGTH, 0.0, 1.0])      # turning at 1 rad/s about the pivot
    new = fm.integrate_partitioned(system, q0, qd0, 0.2, output_every=5)
    old = _old(lambda: fm.integrate_partitioned(system, q0, qd0, 0.2, record_every=5), "output_every=")
    np.testing.assert_array_equal(np.asarray(old.t), np.asarray(new.t))
