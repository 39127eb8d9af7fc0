"""A structural modification study on a component model, in the order Hutton & Smith (1993) ran theirs.

A thin workflow over :mod:`flexmb.analysis.modes` and the rest of :mod:`flexmb.cms`: it calls
their functions in turn, keeps what they return, and writes tables, pictures, an HDF5 file and a
report page. No mechanics is computed here.

:func:`run_study` takes a model, its components (named sets of element groups), a reduction
setting, the studied mode, a target frequency and design variables, and does:

1. **baseline**: the natural modes of the full model (:func:`~flexmb.analysis.modes.natural_modes`)
   and of the component model (:func:`~flexmb.cms.component.components_from_groups`, one
   reduction per component, :func:`~flexmb.cms.synthesis.synthesize`), with the relative CMS
   error ``f_CMS / f_full - 1`` of each mode (>= 0: the CMS model is a Rayleigh-Ritz
   approximation) and the modal assurance criterion (MAC) of the recovered CMS mode shapes;
2. **sensitivity** of the studied mode to every design variable
   (:func:`~flexmb.cms.sensitivity.eigen_sensitivity`): from the CMS model with T frozen (the
   per-component shares of Hutton & Smith) and, as the reference, from the full model
   (Fox-Kapoor); normalised ``(p / lambda) d lambda / dp`` and ranked;
3. **forward modification** (:func:`~flexmb.cms.modification.forward_modification`, the
   linear-equivalent method on the baseline CMS modes) compared with a CMS re-analysis and a full
   re-analysis (:func:`~flexmb.cms.modification.reanalyse`); modes are matched by the baseline
   mode they follow;
4. **inverse modification** (:func:`~flexmb.cms.modification.inverse_modification`) for each
   given set of variables: the change that puts the studied mode at the target, refined by CMS
   re-analysis, then checked by a full re-analysis of the changed model.

:func:`write_study` writes into a folder: ``components.png`` (the structure coloured by
component), ``baseline_modes.png`` (the first full-model modes), ``sensitivity.png`` (bar chart),
``mode_change.png`` (the studied mode before and after the first inverse modification, both from
full analyses), ``overview.png`` (components and mode change side by side), the mode result
files ``full_modes.h5``, ``cms_modes.h5`` and ``modified_modes.h5`` (kind "modes", for
``flexmb render``), all numbers in ``study.h5``, and the report ``report.md`` /
``report.html`` with relative picture links.

Modes are indexed from 0 in the arguments (as in :mod:`flexmb.cms`) and numbered from 1 in
tables and pictures.

References
----------
Hutton, S. G. and Smith, K. S. (1993). Component mode synthesis and structural modification.
"""
from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from flexmb.analysis.modes import NaturalModes, natural_modes
from flexmb.assembly import Assembly
from flexmb.checks import ModelError, keywords_listed, methods_keywords_listed
from flexmb.cms.component import Component, components_from_groups
from flexmb.cms.design import DesignVariable
from flexmb.cms.modification import (InverseModification, ModifiedModes, forward_modification,
                                     inverse_modification, reanalyse)
from flexmb.cms.reduction import craig_bampton, free_interface
from flexmb.cms.sensitivity import Sensitivity, eigen_sensitivity
from flexmb.cms.synthesis import CmsModel, CmsModes, synthesize
from flexmb.model import Model

REDUCTIONS = {"free-interface": free_interface, "craig-bampton": craig_bampton}


@dataclass
class Table:
    """A table of the report: a title, column heads and rows of formatted cells."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    note: str = ""

    def markdown(self) -> str:
        lines = [f"**{self.title}**", "", "| " + " | ".join(self.columns) + " |", "|" + "---|" * len(self.columns)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in self.rows]
        return "\n".join(lines + ([""] + [self.note] if self.note else []))

    def html(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in self.rows)
        note = f"<p>{html.escape(self.note)}</p>" if self.note else ""
        return f"<p><b>{html.escape(self.title)}</b></p><table><tr>{head}</tr>{body}</table>{note}"


@dataclass
class InverseCheck:
    """One inverse modification and the full re-analysis of the change it found."""

    result: InverseModification
    full: ModifiedModes
    full_hz: float                       # re-analysed frequency of the studied mode (full model), Hz

    @property
    def full_error(self) -> float:
        """Relative miss of the target by the full re-analysis, f_full / f_target - 1."""
        return self.full_hz / float(self.result.targets_hz[0]) - 1.0


@methods_keywords_listed
@dataclass
class ModificationStudy:
    """Everything :func:`run_study` computed (see the module docstring).

    Attributes
    ----------
    title : the report's title.
    model, assembly : the structure and the Assembly its full-model modes were computed on.
    components : the :class:`~flexmb.cms.component.Component` list, in the order given.
    reduction : ``"free-interface"`` or ``"craig-bampton"``.
    mode, target_hz : the studied mode (0-based) and its wanted frequency (Hz).
    full : baseline :class:`~flexmb.analysis.modes.NaturalModes` of the full model.
    cms, cms_modes : the synthesised :class:`~flexmb.cms.synthesis.CmsModel` and its modes.
    sensitivity, sensitivity_full : of the studied mode, CMS with T frozen and full model.
    changes : the forward modification (variable -> change alpha).
    forward, forward_cms, forward_full : its linear-equivalent prediction, CMS re-analysis and
        full re-analysis (:class:`~flexmb.cms.modification.ModifiedModes`).
    inverse : one :class:`InverseCheck` per inverse modification.
    timings : wall time (s) of each step.
    """

    title: str
    model: Model
    assembly: Assembly
    components: list[Component]
    reduction: str
    mode: int
    target_hz: float
    full: NaturalModes
    cms: CmsModel
    cms_modes: CmsModes
    sensitivity: Sensitivity
    sensitivity_full: Sensitivity
    changes: dict[DesignVariable, float]
    forward: ModifiedModes
    forward_cms: ModifiedModes
    forward_full: ModifiedModes
    inverse: list[InverseCheck]
    timings: dict[str, float] = field(default_factory=dict)

    # ------------------------------------------------------------- numbers
    @property
    def cms_errors(self) -> np.ndarray:
        """(n,) relative CMS frequency errors f_CMS / f_full - 1 of the baseline modes."""
        return self.cms_modes.frequencies_hz / self.full.frequencies_hz - 1.0

    @property
    def mac(self) -> np.ndarray:
        """(n,) MAC of each recovered CMS mode with the full-model mode of the same number."""
        return _mac(self.cms_modes.full_modes(), self.full.modes)

    def forward_rows(self) -> list[tuple[int, float, float, float, float]]:
        """Per baseline mode k: (k, baseline Hz, forward Hz, CMS re-analysis Hz, full re-analysis
        Hz), each modified mode found by the baseline mode it follows (NaN if none does)."""
        out = []
        for k in range(self.full.eigenvalues.size):
            out.append((k, float(self.full.frequencies_hz[k]), _following(self.forward, k),
                        _following(self.forward_cms, k), _following(self.forward_full, k)))
        return out

    def summary(self) -> dict[str, float]:
        """Scalars of the study (for tests and the printed summary): sizes (``n_dof``, ``n_reduced``),
        the studied mode's frequencies (``f_full_hz``, ``f_cms_hz``), the range of the CMS errors
        and the smallest MAC of the baseline modes, the forward modification of the studied mode
        (``forward_hz``, ``forward_cms_hz``, ``forward_full_hz`` and the relative differences
        ``forward_vs_full``, ``forward_vs_cms``) and per inverse modification i its first change
        ``inverse{i}_alpha``, the CMS and full re-analysed frequencies and ``inverse{i}_full_error``."""
        k = self.mode
        fw = self.forward_rows()[k]
        out = {"n_dof": float(self.assembly.n_free), "n_reduced": float(self.cms.size),
               "f_full_hz": float(self.full.frequencies_hz[k]), "f_cms_hz": float(self.cms_modes.frequencies_hz[k]),
               "max_cms_error": float(self.cms_errors.max()), "min_cms_error": float(self.cms_errors.min()),
               "min_mac": float(self.mac.min()),
               "forward_hz": fw[2], "forward_cms_hz": fw[3], "forward_full_hz": fw[4],
               "forward_vs_full": fw[2] / fw[4] - 1.0, "forward_vs_cms": fw[2] / fw[3] - 1.0}
        for i, check in enumerate(self.inverse):
            out[f"inverse{i}_alpha"] = float(check.result.alpha[0])
            out[f"inverse{i}_cms_hz"] = float(check.result.achieved_hz[0])
            out[f"inverse{i}_full_hz"] = check.full_hz
            out[f"inverse{i}_full_error"] = check.full_error
        return out

    # -------------------------------------------------------------- tables
    def component_table(self) -> Table:
        rows = []
        for basis, comp in zip(self.cms.bases, self.components):
            kept = basis.frequencies_hz[basis.frequencies_hz > 0]
            rows.append([comp.name, ", ".join(g.name for g in comp.model.groups),
                         str(sum(g.n_elements for g in comp.model.groups)), str(comp.n_dof),
                         str(comp.interface_dofs.size), str(comp.grounded.size), str(basis.size),
                         f"{kept.max():.4g}" if kept.size else "-"])
        return Table(f"Components ({self.reduction} reduction): {self.assembly.n_free} free DOFs reduced to "
                     f"{self.cms.size}",
                     ["component", "element groups", "elements", "DOFs", "interface DOFs", "of which grounded",
                      "basis vectors", "highest kept mode (Hz)"], rows)

    def mode_table(self) -> Table:
        rows = [[str(k + 1), f"{f:.6g}", f"{c:.6g}", f"{e:.3e}", f"{m:.6f}"]
                for k, (f, c, e, m) in enumerate(zip(self.full.frequencies_hz, self.cms_modes.frequencies_hz,
                                                     self.cms_errors, self.mac))]
        return Table("Baseline natural modes: full FE model and component mode synthesis",
                     ["mode", "full model (Hz)", "CMS (Hz)", "CMS error f_CMS/f_full - 1", "MAC"], rows,
                     "The CMS model is a Rayleigh-Ritz approximation of the full one: its frequencies are upper "
                     "bounds (errors >= 0).")

    def sensitivity_table(self) -> Table:
        s, sf = self.sensitivity, self.sensitivity_full
        full_of = dict(zip((v.name for v in sf.variables), sf.normalised[0]))
        rows = [[str(r + 1), row["variable"], row["part"], f"{row['value']:.4g}", f"{row['df_dp_hz']:.4g}",
                 f"{row['normalised']:+.5f}", f"{full_of[row['variable']]:+.5f}"]
                for r, row in enumerate(s.ranking(self.mode))]
        stiffness = sum(float(x) for v, x in zip(s.variables, s.normalised[0]) if v.kind == "stiffness scale")
        mass = sum(float(x) for v, x in zip(s.variables, s.normalised[0])
                   if v.kind in ("density scale", "point mass"))
        return Table(f"Sensitivity of mode {self.mode + 1} ({s.frequencies_hz[0]:.5g} Hz), ranked",
                     ["rank", "design variable", "component", "p", "df/dp (Hz)", "(p/lambda) dlambda/dp, CMS",
                      "whole variable, full model (Fox-Kapoor)"], rows,
                     f"Sums of the normalised CMS sensitivities: stiffness scales {stiffness:+.6f}, density scales "
                     f"and point masses {mass:+.6f} (+1 and -1 when they cover all stiffness and all mass).")

    def forward_table(self) -> Table:
        changes = ", ".join(f"{v.name} {a:+.4g}" for v, a in self.changes.items())
        rows = [[str(k + 1), f"{b:.6g}", f"{f:.6g}", f"{c:.6g}", f"{r:.6g}", f"{f / r - 1.0:+.3e}"]
                for k, b, f, c, r in self.forward_rows()]
        return Table(f"Forward modification ({changes})",
                     ["mode", "baseline (Hz)", "linear equivalent on CMS modes (Hz)", "CMS re-analysis (Hz)",
                      "full re-analysis (Hz)", "forward / full - 1"], rows,
                     "Linear equivalent: the baseline reduced modes held (T frozen). A density change of whole "
                     "components leaves T exact; a stiffness change does not, hence the difference.")

    def inverse_table(self) -> Table:
        rows = []
        for check in self.inverse:
            r = check.result
            names = ", ".join(v.name for v in r.variables)
            rows.append([names, ", ".join(f"{a:+.5g}" for a in r.alpha_linear),
                         ", ".join(f"{a:+.5g}" for a in r.alpha), ", ".join(f"{p:.5g}" for p in r.new_values),
                         f"{r.linear_check_hz[0]:.6g}",
                         f"{r.achieved_hz[0]:.6g}", f"{check.full_hz:.6g}", f"{check.full_error:+.2e}"])
        baseline = self.full.frequencies_hz[self.mode]
        return Table(f"Inverse modification: mode {self.mode + 1} from {baseline:.5g} Hz to {self.target_hz:.5g} Hz",
                     ["design variables", "one-shot alpha", "refined alpha", "new p",
                      "CMS re-analysis at one-shot (Hz)", "CMS re-analysis at refined (Hz)", "full re-analysis (Hz)",
                      "full / target - 1"], rows,
                     "One-shot: the linear-equivalent change on the baseline modes; refined: Newton on the CMS "
                     "re-analysis; the last columns re-analyse the full FE model with the refined change.")

    def timing_table(self) -> Table:
        return Table("Wall time of the steps", ["step", "s"], [[k, f"{v:.3f}"] for k, v in self.timings.items()])

    def tables(self) -> list[Table]:
        return [self.component_table(), self.mode_table(), self.sensitivity_table(), self.forward_table(),
                self.inverse_table(), self.timing_table()]


@keywords_listed
def run_study(model: Model, components: dict[str, list[str]], variables: Sequence[DesignVariable], mode: int,
              target_hz: float, changes: dict[DesignVariable, float],
              inverse_variables: Sequence[DesignVariable | Sequence[DesignVariable]],
              reduction: str = "free-interface", component_modes: int | None = 12, cutoff_hz: float | None = None,
              n_modes: int = 6, title: str = "Structural modification study") -> ModificationStudy:
    """Run the study of the module docstring.

    Parameters
    ----------
    model : the structure (element groups, point masses, supports; no joints).
    components : component name -> its element groups (every group in exactly one component).
    variables : design variables of the sensitivity table (:mod:`flexmb.cms.design`).
    mode : the studied mode, 0-based.
    target_hz : the wanted frequency of that mode (Hz).
    changes : design variable -> change alpha of the forward modification (added to its value).
    inverse_variables : the inverse modifications to run (at least one), each one variable or a
        list of them (a list is solved for the minimum-norm change).
    reduction : ``"free-interface"`` (with residual flexibility) or ``"craig-bampton"``.
    component_modes, cutoff_hz : elastic modes kept per component (number and/or cut-off, Hz).
    n_modes : baseline modes computed and tabulated (more than ``mode``).
    """
    if reduction not in REDUCTIONS:
        raise ModelError(f"run_study: unknown reduction {reduction!r}; use one of {', '.join(REDUCTIONS)}")
    if isinstance(mode, bool) or not isinstance(mode, (int, np.integer)) or not 0 <= mode < n_modes:
        raise ModelError(f"run_study: mode must be a mode index from 0 to n_modes - 1 = {n_modes - 1}, got {mode!r}")
    inverse_variables = list(inverse_variables)
    if not inverse_variables:
        raise ModelError("run_study: inverse_variables is empty; give at least one design variable (or a list of "
                         "them) for the inverse modification")
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(step: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[step] = now - clock
        clock = now

    asm = Assembly(model)
    full = natural_modes(asm, n_modes)
    lap("full model: natural modes")
    parts = components_from_groups(model, components)
    reduce = REDUCTIONS[reduction]
    cms = synthesize([reduce(c, component_modes, cutoff_hz=cutoff_hz) for c in parts])
    cms_modes = cms.modes(n_modes)
    lap("CMS: components, reduction, synthesis, modes")
    sensitivity = eigen_sensitivity(cms, list(variables), modes=[mode])
    lap("sensitivity (CMS, T frozen)")
    sensitivity_full = eigen_sensitivity(full, list(variables), modes=[mode], assembly=asm)
    lap("sensitivity (full model, Fox-Kapoor)")
    forward = forward_modification(cms, changes, n_modes=n_modes)
    lap("forward modification (linear equivalent)")
    forward_cms = reanalyse(cms, changes, n_modes=n_modes)
    lap("forward: CMS re-analysis")
    forward_full = reanalyse(full, changes, n_modes=n_modes, assembly=asm)
    lap("forward: full re-analysis")
    inverse = []
    for item in inverse_variables:
        result = inverse_modification(cms, item, mode, target_hz)
        names = ", ".join(v.name for v in result.variables)
        lap(f"inverse modification ({names})")
        check = reanalyse(full, dict(zip(result.variables, result.alpha)), n_modes=n_modes, assembly=asm)
        if _following_index(check, mode) < 0:
            raise ModelError(f"run_study: no mode of the full re-analysis after the inverse modification with "
                             f"{', '.join(v.name for v in result.variables)} follows mode {mode + 1}")
        inverse.append(InverseCheck(result, check, _following(check, mode)))
        lap(f"inverse: full re-analysis ({names})")
    return ModificationStudy(title, model, asm, parts, reduction, int(mode), float(target_hz), full, cms, cms_modes,
                             sensitivity, sensitivity_full, dict(changes), forward, forward_cms, forward_full,
                             inverse, timings)


@keywords_listed
def write_study(study: ModificationStudy, out_dir: str | Path, window_size: Sequence[int] = (1400, 900),
                dpi: int = 110) -> dict[str, Path]:
    """Write the pictures, mode files, ``study.h5`` and ``report.md`` / ``report.html`` into
    ``out_dir`` (created); returns the paths by name. ``window_size`` (width, height, pixels) is
    that of the mode grid; the other pictures are scaled from it."""
    from PIL import Image

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {"components": out / "components.png", "baseline_modes": out / "baseline_modes.png",
             "sensitivity": out / "sensitivity.png", "mode_change": out / "mode_change.png",
             "overview": out / "overview.png",
             "full_modes": out / "full_modes.h5", "cms_modes": out / "cms_modes.h5",
             "modified_modes": out / "modified_modes.h5", "numbers": out / "study.h5"}
    width, height = int(window_size[0]), int(window_size[1])
    components = render_components(study, files["components"], (height * 2 // 3, height))
    _render_mode_grid(study, files["baseline_modes"], (width, height))
    _save_figure(study.sensitivity.bar_chart([study.mode]), files["sensitivity"], dpi)
    change = render_mode_change(study, files["mode_change"], (height * 2 // 3, height))
    # 256 colours are plenty for these renders and make the file a third of the size (web pages)
    overview = Image.fromarray(np.hstack([components, change])).quantize(256, method=Image.Quantize.MEDIANCUT)
    overview.save(files["overview"], optimize=True)
    study.full.save(files["full_modes"], overwrite=True)
    study.cms_modes.mode_shapes().save(files["cms_modes"], overwrite=True)
    _modified_shapes(study).save(files["modified_modes"], overwrite=True)
    write_numbers(study, files["numbers"])
    files["report_md"], files["report_html"] = write_report(study, out, files)
    return files


# ------------------------------------------------------------------ pictures
def render_components(study: ModificationStudy, out: str | Path, window_size: Sequence[int] = (600, 900)) -> np.ndarray:
    """The undeformed structure coloured by component, with a legend; writes ``out`` (.png) and
    returns the image (height, width, 3) uint8."""
    from flexmb.results import ModelLayout
    from flexmb.viz.scene import structure_mesh

    owner = {g.name: j for j, c in enumerate(study.components) for g in c.model.groups}
    values = [np.full(g.n_elements, float(owner[g.name])) for g in study.model.groups]
    mesh = structure_mesh(ModelLayout.from_assembly(study.assembly), np.zeros(study.assembly.n_dof), values)
    import pyvista as pv              # after structure_mesh, which chose the off-screen window

    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
    n = len(study.components)
    colours = [palette[j % len(palette)] for j in range(n)]
    width, height = int(window_size[0]), int(window_size[1])
    plotter = pv.Plotter(off_screen=True, window_size=[width, height])
    try:
        plotter.set_background("white")
        # point masses have no component (NaN): grey
        plotter.add_mesh(mesh, scalars="values", cmap=colours, clim=(-0.5, n - 0.5), n_colors=n, nan_color="grey",
                         show_scalar_bar=False, smooth_shading=True, ambient=0.3, diffuse=0.75)
        plotter.add_text("components", position="upper_edge", font_size=14, color="black")
        for j, comp in enumerate(study.components):                  # legend, bottom left
            plotter.add_text(f"- {comp.name}", position=(10, 10 + 26 * (n - 1 - j)), font_size=12, color=colours[j])
        _isometric_camera(plotter, np.asarray(mesh.points), width / height)
        image = np.array(plotter.screenshot(str(out), return_img=True))
    finally:
        plotter.close()
    return image


def _isometric_camera(plotter: Any, points: np.ndarray, aspect: float) -> None:
    """Parallel projection along (1, 1, 1), z up, framing ``points`` (n, 3) with room for a
    title at the top and a legend at the bottom; ``aspect`` = width / height."""
    direction = np.ones(3) / np.sqrt(3.0)
    up = np.array([0.0, 0.0, 1.0]) - direction / np.sqrt(3.0)
    up /= np.linalg.norm(up)
    right = np.cross(up, direction)
    centre = 0.5 * (points.min(axis=0) + points.max(axis=0))
    half_up = np.abs((points - centre) @ up).max()
    half_right = np.abs((points - centre) @ right).max()
    camera = plotter.camera
    camera.focal_point = centre
    camera.position = centre + direction * 4.0 * max(half_up, half_right)
    camera.up = up
    camera.parallel_projection = True
    camera.parallel_scale = 1.25 * max(half_up, half_right / aspect)
    plotter.renderer.ResetCameraClippingRange()


def render_mode_change(study: ModificationStudy, out: str | Path, window_size: Sequence[int] = (600, 900)
                       ) -> np.ndarray:
    """The studied mode before (baseline, full model) and after the first inverse modification
    (full re-analysis), side by side; each picture ``window_size``; writes ``out``, returns the image."""
    from PIL import Image

    from flexmb.viz.scene import render

    shapes = _modified_shapes(study)
    after = study.inverse[0]
    names = ", ".join(f"{v.name} x{p:.3g}" if v.is_multiplier else f"{v.name} = {p:.4g}"
                      for v, p in zip(after.result.variables, after.result.new_values))
    titles = [f"mode {study.mode + 1}: {shapes.parameter[0]:.3f} Hz\n(baseline)",
              f"mode {study.mode + 1}: {shapes.parameter[1]:.3f} Hz\n({names})"]
    images = [render(shapes, None, step=k, title=t, show_reference=True, window_size=window_size)
              for k, t in enumerate(titles)]
    image = np.hstack(images)
    Image.fromarray(image).save(out)
    return image


def _render_mode_grid(study: ModificationStudy, out: Path, window_size: Sequence[int]) -> None:
    from flexmb.viz.scene import render_modes

    render_modes(study.full.mode_shapes(), out, n=min(4, study.full.eigenvalues.size), window_size=window_size)


def _modified_shapes(study: ModificationStudy):
    """ModeShapes of the studied mode: baseline, then after each inverse modification (full model)."""
    from flexmb.results import ModeShapes

    k = study.mode
    values = [study.full.frequencies_hz[k]] + [c.full_hz for c in study.inverse]
    before = study.full.modes[k]
    modes = [before]
    for check in study.inverse:
        after = check.full.modes[_following_index(check.full, k)]
        modes.append(after if after @ before >= 0.0 else -after)       # same sign as the baseline mode
    return ModeShapes.from_modes(study.full.layout, np.array(values), np.array(modes),
                                 np.zeros(study.assembly.n_dof), "frequency (Hz)")


def _save_figure(fig: Any, path: Path, dpi: int) -> None:
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=dpi)
    plt.close(fig)


# ------------------------------------------------------------------ numbers
def write_numbers(study: ModificationStudy, path: str | Path) -> Path:
    """All numbers of the study in an HDF5 file (frequencies in Hz, sensitivities, changes)."""
    import h5py

    s, sf = study.sensitivity, study.sensitivity_full
    forward = np.array(study.forward_rows())
    with h5py.File(path, "w") as f:
        f.attrs.update({"title": study.title, "reduction": study.reduction, "mode": study.mode,
                        "target_hz": study.target_hz, "n_free": study.assembly.n_free, "n_reduced": study.cms.size})
        g = f.create_group("modes")
        g["full_hz"] = study.full.frequencies_hz
        g["cms_hz"] = study.cms_modes.frequencies_hz
        g["cms_error"] = study.cms_errors
        g["mac"] = study.mac
        g = f.create_group("components")
        g["names"] = [c.name for c in study.components]
        g["n_dof"] = [c.n_dof for c in study.components]
        g["interface_dofs"] = [c.interface_dofs.size for c in study.components]
        g["basis_size"] = [b.size for b in study.cms.bases]
        g = f.create_group("sensitivity")
        g["variables"] = [v.name for v in s.variables]
        g["kinds"] = [v.kind for v in s.variables]
        g["values"] = s.values
        g["parts"] = s.parts
        g["cms_dlambda_dp"] = s.derivatives[0]
        g["cms_normalised"] = s.normalised[0]
        g["cms_normalised_parts"] = s.normalised_parts[0]
        g["full_dlambda_dp"] = sf.derivatives[0]
        g["full_normalised"] = sf.normalised[0]
        g = f.create_group("forward")
        g["variables"] = [v.name for v in study.changes]
        g["changes"] = np.array(list(study.changes.values()), dtype=float)
        for name, col in (("baseline_hz", 1), ("linear_equivalent_hz", 2), ("cms_reanalysis_hz", 3),
                          ("full_reanalysis_hz", 4)):
            g[name] = forward[:, col]
        for i, check in enumerate(study.inverse):
            r = check.result
            g = f.create_group(f"inverse/{i}")
            g["variables"] = [v.name for v in r.variables]
            g["alpha_linear"] = r.alpha_linear
            g["alpha"] = r.alpha
            g["new_values"] = r.new_values
            g["cms_hz_at_linear"] = r.linear_check_hz
            g["cms_hz"] = r.achieved_hz
            g.attrs.update({"target_hz": float(r.targets_hz[0]), "full_hz": check.full_hz, "rule": r.rule})
        g = f.create_group("timings")
        g.attrs.update(study.timings)
    return Path(path)


# ------------------------------------------------------------------- report
#: picture of the report shown after the table at this position, and its caption
_FIGURES = {0: ("components", "The structure and its components"),
            1: ("baseline_modes", "The first natural modes of the full model"),
            2: ("sensitivity", "Normalised sensitivities of the studied mode (CMS, T frozen)"),
            4: ("mode_change", "The studied mode before and after the inverse modification (full re-analyses)")}
_DATA = ("full_modes", "cms_modes", "modified_modes", "numbers")


def write_report(study: ModificationStudy, out_dir: str | Path, files: dict[str, Path]) -> tuple[Path, Path]:
    """``report.md`` and ``report.html`` in ``out_dir``: the tables, the pictures and the data
    files of ``files`` (as :func:`write_study` names them; linked by relative paths, so the folder
    can be moved as a whole); returns both paths."""
    out = Path(out_dir)
    link = {name: Path(path).relative_to(out).as_posix() for name, path in files.items()}
    md = [f"# {study.title}", "", _intro(study), ""]
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
             f"<title>{html.escape(study.title)}</title><style>body{{font-family:sans-serif;max-width:1200px;"
             "margin:auto}table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
             "font-size:90%}img{max-width:100%}</style></head><body>",
             f"<h1>{html.escape(study.title)}</h1><p>{html.escape(_intro(study))}</p>"]
    for i, table in enumerate(study.tables()):
        md += [table.markdown(), ""]
        parts.append(table.html())
        if i in _FIGURES and _FIGURES[i][0] in link:
            name, caption = _FIGURES[i]
            md += [f"![{caption}]({link[name]})", ""]
            parts.append(f"<p><img src='{html.escape(link[name])}' alt='{html.escape(caption)}'></p>")
    data = [name for name in _DATA if name in link]
    md.append("Data: " + ", ".join(f"`{link[n]}`" for n in data)
              + " (mode files render with `flexmb render FILE`; all numbers in `study.h5`).")
    parts.append("<p>Data: " + ", ".join(f"<a href='{html.escape(link[n])}'>{html.escape(link[n])}</a>" for n in data)
                 + "</p></body></html>")
    md_path, html_path = out / "report.md", out / "report.html"
    md_path.write_text("\n".join(md) + "\n", encoding="utf-8")
    html_path.write_text("\n".join(parts), encoding="utf-8")
    return md_path, html_path


def _intro(study: ModificationStudy) -> str:
    k = study.mode
    return (f"Mode {k + 1} of the structure is at {study.full.frequencies_hz[k]:.5g} Hz (full model, "
            f"{study.assembly.n_free} free DOFs; component mode synthesis with {len(study.components)} components, "
            f"{study.cms.size} reduced coordinates: {study.cms_modes.frequencies_hz[k]:.5g} Hz). Target: "
            f"{study.target_hz:.5g} Hz.")


# ------------------------------------------------------------------- helpers
def _mac(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """MAC of row k of a (n, d) with row k of b."""
    return np.einsum("ij,ij->i", a, b) ** 2 / (np.einsum("ij,ij->i", a, a) * np.einsum("ij,ij->i", b, b))


def _following_index(modes: ModifiedModes, k: int) -> int:
    """Index of the lowest modified mode that follows baseline mode k, -1 if none does."""
    hits = np.flatnonzero(modes.tracking == k)
    return int(hits[0]) if hits.size else -1


def _following(modes: ModifiedModes, k: int) -> float:
    """Frequency (Hz) of the modified mode following baseline mode k, NaN if none does."""
    i = _following_index(modes, k)
    return float(modes.frequencies_hz[i]) if i >= 0 else float("nan")
