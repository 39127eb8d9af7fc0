"""Eigenvalue sensitivities to design variables, with per-component shares (Hutton & Smith 1993).

For a mass-normalised mode phi (phi^T M phi = 1) of ``K phi = lambda M phi`` (lambda = omega^2),
the derivative with respect to a design variable p is (Fox & Kapoor 1968; Hutton & Smith eq. for
d lambda / d r)

    d lambda/dp = phi^T (dK/dp - lambda dM/dp) phi.

* Full model (:class:`~flexmb.analysis.modes.NaturalModes` base): phi is the mode on the free
  DOFs. With joints the modes lie in the null space of the constraint Jacobian, phi = B y, so the
  formula on the free DOFs equals the one on the null space, y^T B^T (dK - lambda dM) B y.
* Component mode synthesis (:class:`~flexmb.cms.synthesis.CmsModel` base), T held fixed: with the
  reduced mode xi (xi^T T^T M T xi = 1) the derivative is a sum of component shares

      d lambda/dp = sum_j xi^T T_j^T (dK_j/dp - lambda dM_j/dp) T_j xi,

  T_j the rows of T of component j. It is the exact derivative of the CMS eigenvalue with T
  frozen (not of the full model's eigenvalue: a change of a component also changes its modes).

Normalised sensitivity (dimensionless) ``s = (p / lambda) d lambda/dp``. By Euler's theorem for
homogeneous functions, lambda is of degree +1 in the stiffness and -1 in the mass: scaling all
stiffness by (1 + a) scales lambda by (1 + a), so the normalised stiffness shares of a partition
of all stiffness sum to +1 and the density shares of a partition of all mass to -1.

Repeated eigenvalues: the modes of a degenerate pair are any basis of their plane and their
sensitivities are not unique (the derivatives of the pair are the eigenvalues of the 2x2 matrix
of the formula); they are reported with a :class:`~flexmb.checks.FlexmbWarning`.

References
----------
Fox, R. L. and Kapoor, M. P. (1968). Rates of change of eigenvalues and eigenvectors. AIAA J. 6.
Hutton, S. G. and Smith, K. S. (1993). Component mode synthesis and structural modification.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from flexmb.assembly import Assembly
from flexmb.checks import FlexmbWarning, ModelError, keywords_listed, methods_keywords_listed
from flexmb.cms.design import DesignVariable

#: two eigenvalues within this relative distance are treated as repeated
DEGENERATE_RTOL = 1e-6


@dataclass
class ModalPart:
    """One part of a modal base whose matrices a design variable changes: the full model, or one
    component of a CMS model. ``projection`` (n_free_part, n_red) maps the base's coordinates
    (free DOFs of the full model, or the CMS coordinates) to the part's free DOFs."""

    name: str
    assembly: Assembly
    nodes: np.ndarray | None
    projection: Any                     # sparse identity (full model) or T_j (n_j, n_red) ndarray


class ModalBase:
    """A baseline modal model seen the same way for a full model and a CMS model.

    Attributes
    ----------
    kind : ``"full"`` or ``"cms"``.
    eigenvalues : (n,) omega^2 of the available modes, rad^2/s^2, ascending.
    vectors : (n_red, n) the modes in the base's coordinates, mass-normalised.
    rigid : (n,) bool, rigid-body (zero-frequency) modes.
    parts : the :class:`ModalPart` list.
    """

    def __init__(self, base: Any, n_modes: int | None = None, assembly: Assembly | None = None) -> None:
        from flexmb.cms.synthesis import CmsModel
        from flexmb.results import ModeShapes

        if isinstance(base, ModeShapes):
            base = _read_back(base, assembly)
        self.base = base
        if isinstance(base, CmsModel):
            self.kind = "cms"
            modes = base.modes(min(n_modes, base.size)) if n_modes is not None else base.modes()
            self.cms_modes = modes
            self.eigenvalues = np.asarray(modes.eigenvalues, dtype=float)
            self.vectors = np.asarray(modes.vectors, dtype=float)
            scale = max(float(np.abs(self.eigenvalues).max(initial=0.0)), 1e-300)
            self.rigid = np.asarray(getattr(modes, "rigid", np.abs(self.eigenvalues) <= 1e-8 * scale), dtype=bool)
            self.parts = []
            for j, basis in enumerate(base.bases):
                comp = basis.component
                self.parts.append(ModalPart(comp.name, comp.assembly, np.asarray(comp.nodes),
                                            np.asarray(base.T[base.component_rows(j)])))
            self.K_reduced, self.M_reduced = np.asarray(base.K), np.asarray(base.M)
            return
        if not hasattr(base, "eigenvalues") or not hasattr(base, "modes") or not hasattr(base, "rigid"):
            raise ModelError(f"modal base: expected NaturalModes, natural modes read from a file (ModeShapes) or "
                             f"a CmsModel, got {type(base).__name__}")
        self.kind = "full"
        asm = assembly if assembly is not None else getattr(base, "assembly", None)
        if not isinstance(asm, Assembly):
            raise ModelError("modal base: these NaturalModes carry no Assembly (read from a file?); pass "
                             "assembly= (the one the modes were computed on)")
        if asm.model.revision != asm.dofs.model_revision:
            raise ModelError("modal base: the model changed after its Assembly was built; rebuild both")
        u_pre = getattr(base, "u_pre", None)
        if (u_pre is not None and np.any(u_pre)) or getattr(base, "load_factor", 0.0):
            raise ModelError("modal base: design derivatives are about the reference state; modes about a "
                             "pre-stressed state (u_pre, load_factor) are not supported")
        modes = np.asarray(base.modes, dtype=float)
        if modes.ndim != 2 or modes.shape[1] != asm.n_dof:
            raise ModelError(f"modal base: the modes have shape {modes.shape}, the Assembly has {asm.n_dof} DOFs")
        self.assembly = asm
        self.eigenvalues = np.asarray(base.eigenvalues, dtype=float)
        self.vectors = modes[:, asm.dofs.free].T                       # (n_free, n)
        self.rigid = np.asarray(base.rigid, dtype=bool)
        n = asm.dofs.free.size
        self.parts = [ModalPart("model", asm, None, sp.identity(n, format="csc"))]

    @property
    def n(self) -> int:
        return self.eigenvalues.size

    def check_modes(self, modes: int | Sequence[int] | None, what: str, allow_rigid: bool = False) -> np.ndarray:
        """Mode indices (0-based) as an array; default all elastic modes; ModelError naming a bad one."""
        if modes is None:
            return np.flatnonzero(~self.rigid)
        idx = np.atleast_1d(np.asarray(modes))
        if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
            raise ModelError(f"{what}: modes must be integer mode indices (0-based), got {modes!r}")
        for k in idx:
            if k < 0 or k >= self.n:
                raise ModelError(f"{what}: mode {int(k)} does not exist (the base has modes 0..{self.n - 1})")
            if self.rigid[k] and not allow_rigid:
                raise ModelError(f"{what}: mode {int(k)} is a rigid-body mode (zero frequency)")
        return idx.astype(np.int64)

    def part_matrices(self, variable: DesignVariable) -> list[tuple[int, sp.csc_matrix, sp.csc_matrix]]:
        """(part index, dK/dp, dM/dp) of every part the variable acts on; a point mass or grounded
        spring at a node shared by several components goes to the first of them. ModelError when
        it acts on none."""
        if not isinstance(variable, DesignVariable):
            raise ModelError(f"design variable expected (stiffness_scale, density_scale, ...), got {variable!r}")
        out = []
        for j, part in enumerate(self.parts):
            if variable.applies_to(part.assembly, part.nodes):
                dK, dM = variable.matrices(part.assembly, part.nodes)
                out.append((j, dK, dM))
                if not variable.groups:
                    break
        if not out:
            if self.kind == "full":                                   # raises the precise error
                variable.matrices(self.parts[0].assembly, None)
            raise ModelError(f"design variable {variable.name!r} acts on no component of the CMS model "
                             f"(components: {', '.join(p.name for p in self.parts)})")
        return out

    def reduced_matrices(self, variable: DesignVariable) -> tuple[np.ndarray, np.ndarray]:
        """dK/dp and dM/dp in the base's coordinates: sum_j P_j^T dK_j P_j (n_red, n_red)."""
        n = self.vectors.shape[0]
        dK, dM = np.zeros((n, n)), np.zeros((n, n))
        for j, dKj, dMj in self.part_matrices(variable):
            P = self.parts[j].projection
            dK += np.asarray(P.T @ (dKj @ P).toarray() if sp.issparse(P) else P.T @ (dKj @ P))
            dM += np.asarray(P.T @ (dMj @ P).toarray() if sp.issparse(P) else P.T @ (dMj @ P))
        return dK, dM

    def degenerate_modes(self, modes: np.ndarray) -> list[tuple[int, int]]:
        """Pairs (k, i) of a requested mode k and another mode i with a repeated eigenvalue."""
        pairs = []
        lam = self.eigenvalues
        for k in modes:
            for i in range(self.n):
                if i != k and not self.rigid[i] and abs(lam[i] - lam[k]) <= DEGENERATE_RTOL * abs(lam[k]):
                    pairs.append((int(k), i))
        return pairs


@dataclass
class _ReadModes:
    """Natural modes read back from a result file, as ModalBase reads NaturalModes (see :func:`_read_back`)."""

    eigenvalues: np.ndarray
    modes: np.ndarray
    rigid: np.ndarray
    u_pre: np.ndarray
    load_factor: float
    assembly: Assembly


def _read_back(shapes: Any, assembly: Assembly | None) -> _ReadModes:
    """Natural modes from a :class:`~flexmb.results.ModeShapes` (a result file of kind "modes"):
    omega^2 = (2 pi f)^2 from the frequencies (Hz; a negative one, an unstable mode, gives
    -omega^2), the shapes (stored with a largest translation of 1) mass-normalised again with the
    mass of ``assembly`` at the modes' reference state, rigid where f = 0 (natural_modes writes
    rigid-body frequencies as exact zeros). The file keeps the load factor of the modes
    (``NaturalModes.save``); a file without it is taken as load factor 0."""
    what = shapes.meta.get("what")
    if what != "frequency (Hz)":
        raise ModelError(f"modal base: these modes are {what!r} (buckling modes?), not natural modes with "
                         "frequencies (Hz)")
    if not isinstance(assembly, Assembly):
        raise ModelError("modal base: natural modes read from a file carry no Assembly; pass assembly= (the one "
                         "the modes were computed on, or an Assembly of the same model)")
    u = np.asarray(shapes.u, dtype=float)
    if u.ndim != 2 or u.shape[1] != assembly.n_dof:
        raise ModelError(f"modal base: the modes read back have shape {u.shape}, the Assembly has {assembly.n_dof} "
                         "DOFs (an Assembly of another model?)")
    reference = shapes.reference if shapes.reference is not None else np.zeros(assembly.n_dof)
    free = assembly.dofs.free
    M = assembly.free_matrix(assembly.mass_data_at(np.asarray(reference, dtype=float)))
    phi = u[:, free]
    modes = u / np.sqrt(np.einsum("ki,ki->k", phi, (M @ phi.T).T))[:, None]
    f = np.asarray(shapes.values, dtype=float)
    return _ReadModes(np.sign(f) * (2.0 * np.pi * f) ** 2, modes, f == 0.0, np.asarray(reference, dtype=float),
                      float(shapes.meta.get("load_factor", 0.0)), assembly)


@methods_keywords_listed
@dataclass
class Sensitivity:
    """Eigenvalue sensitivities of modes to design variables.

    Attributes
    ----------
    variables : the design variables (n_v).
    modes : (n_m,) mode indices (0-based, of the base's modes).
    eigenvalues : (n_m,) baseline omega^2 of these modes, rad^2/s^2.
    derivatives : (n_m, n_v) d lambda/dp (rad^2/s^2 per unit of p).
    parts : names of the parts (components of a CMS model, or ``"model"``), (n_c).
    part_derivatives : (n_m, n_v, n_c) each part's share of d lambda/dp (they sum to derivatives).
    degenerate : (mode, other mode) pairs with repeated eigenvalues (sensitivities not unique).
    method : ``"Fox-Kapoor (full model)"`` or ``"CMS, T frozen"``.
    """

    variables: list[DesignVariable]
    modes: np.ndarray
    eigenvalues: np.ndarray
    derivatives: np.ndarray
    parts: list[str]
    part_derivatives: np.ndarray
    degenerate: list[tuple[int, int]]
    method: str

    @property
    def omega(self) -> np.ndarray:
        """(n_m,) baseline angular frequencies sqrt(lambda), rad/s."""
        return np.sqrt(np.maximum(self.eigenvalues, 0.0))

    @property
    def frequencies_hz(self) -> np.ndarray:
        """(n_m,) baseline frequencies f = sqrt(lambda) / 2 pi, Hz."""
        return self.omega / (2.0 * np.pi)

    @property
    def frequency_derivatives(self) -> np.ndarray:
        """(n_m, n_v) d f/dp in Hz per unit of p: d lambda = 8 pi^2 f df."""
        return self.derivatives / (8.0 * np.pi**2 * self.frequencies_hz[:, None])

    @property
    def values(self) -> np.ndarray:
        """(n_v,) baseline values p of the variables."""
        return np.array([v.value for v in self.variables])

    @property
    def normalised(self) -> np.ndarray:
        """(n_m, n_v) normalised sensitivities (p / lambda) d lambda/dp (dimensionless)."""
        return self.values[None, :] * self.derivatives / self.eigenvalues[:, None]

    @property
    def normalised_parts(self) -> np.ndarray:
        """(n_m, n_v, n_c) each part's share of the normalised sensitivity."""
        return self.values[None, :, None] * self.part_derivatives / self.eigenvalues[:, None, None]

    def _row(self, mode: int) -> int:
        hits = np.flatnonzero(self.modes == mode)
        if not hits.size:
            raise ModelError(f"sensitivity: mode {mode} was not analysed (modes {self.modes.tolist()})")
        return int(hits[0])

    def ranking(self, mode: int) -> list[dict[str, Any]]:
        """Rows (variable, part) with a non-zero share for ``mode``, ranked by ``|normalised share|``
        (then by ``|d f/dp|`` for variables with a zero baseline): which variable of which component
        to modify to move the mode."""
        r = self._row(mode)
        f = self.frequencies_hz[r]
        rows = []
        for i, var in enumerate(self.variables):
            for c, part in enumerate(self.parts):
                d = self.part_derivatives[r, i, c]
                if d == 0.0:
                    continue
                rows.append({"variable": var.name, "kind": var.kind, "part": part, "value": var.value,
                             "dlambda_dp": d, "df_dp_hz": d / (8.0 * np.pi**2 * f),
                             "normalised": var.value * d / self.eigenvalues[r]})
        rows.sort(key=lambda row: (-abs(row["normalised"]), -abs(row["df_dp_hz"])))
        return rows

    def table(self, mode: int, markdown: bool = False) -> str:
        """The ranking of :meth:`ranking` as a text (or markdown) table."""
        r = self._row(mode)
        head = ["rank", "variable", "component", "p", "dlambda/dp", "df/dp (Hz)", "(p/lambda) dlambda/dp"]
        body = [[str(k + 1), row["variable"], row["part"], f"{row['value']:.4g}", f"{row['dlambda_dp']:.5g}",
                 f"{row['df_dp_hz']:.5g}", f"{row['normalised']:+.5f}"] for k, row in enumerate(self.ranking(mode))]
        title = (f"mode {mode + 1} (index {mode}), f = {self.frequencies_hz[r]:.6g} Hz, {self.method}"
                 + ("; REPEATED eigenvalue: shares not unique" if any(k == mode for k, _ in self.degenerate) else ""))
        if markdown:
            lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            lines += ["| " + " | ".join(row) + " |" for row in body]
            return f"**{title}**\n\n" + "\n".join(lines)
        widths = [max(len(x) for x in col) for col in zip(head, *body)]

        def fmt(row: list[str]) -> str:                   # names left-aligned, numbers right-aligned
            return "  ".join(x.ljust(w) if k in (1, 2) else x.rjust(w) for k, (x, w) in enumerate(zip(row, widths)))

        return "\n".join([title, fmt(head), "  ".join("-" * w for w in widths)] + [fmt(row) for row in body])

    def bar_chart(self, modes: Sequence[int] | None = None, by_part: bool = True):
        """Bar chart of the normalised shares (per variable, split by part with ``by_part``) of the
        given modes (default all analysed); returns the matplotlib Figure."""
        import matplotlib.pyplot as plt

        modes = list(self.modes) if modes is None else [int(m) for m in np.atleast_1d(modes)]
        rows = [self._row(m) for m in modes]
        labels, values = [], []
        for i, var in enumerate(self.variables):
            parts = [c for c in range(len(self.parts)) if np.any(self.part_derivatives[rows, i, c])]
            if by_part and len(parts) > 1:
                for c in parts:
                    labels.append(f"{var.name}\n[{self.parts[c]}]")
                    values.append(self.normalised_parts[rows, i, c])
            else:
                labels.append(var.name)
                values.append(self.normalised[rows, i])
        values = np.array(values)                                        # (n_bars, n_modes)
        fig, ax = plt.subplots(figsize=(max(6.0, 0.7 * len(labels) + 2.0), 4.0))
        width = 0.8 / len(rows)
        x = np.arange(len(labels))
        for k, r in enumerate(rows):
            ax.bar(x + (k - (len(rows) - 1) / 2) * width, values[:, k], width,
                   label=f"mode {self.modes[r] + 1} ({self.frequencies_hz[r]:.4g} Hz)")
        ax.axhline(0.0, color="0.4", lw=0.6)
        ax.set_xticks(x, labels, fontsize=7, rotation=30, ha="right")
        ax.set_ylabel("(p / lambda) d lambda / dp")
        ax.set_title(f"Normalised eigenvalue sensitivities ({self.method})", fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        return fig


@keywords_listed
def eigen_sensitivity(base: Any, variables: DesignVariable | Sequence[DesignVariable],
                      modes: int | Sequence[int] | None = None, assembly: Assembly | None = None) -> Sensitivity:
    """Derivatives d lambda/dp of modes of ``base`` with respect to design variables.

    Parameters
    ----------
    base : :class:`~flexmb.analysis.modes.NaturalModes` (full model, Fox-Kapoor), the same read
        back from a result file (:class:`~flexmb.results.ModeShapes` of ``fm.load_result``; needs
        ``assembly``), or :class:`~flexmb.cms.synthesis.CmsModel` (CMS with T frozen, shares per
        component).
    variables : design variables (:mod:`flexmb.cms.design`).
    modes : mode indices (0-based); default every elastic mode of a NaturalModes, or every elastic
        mode among the first 10 of a CmsModel.
    assembly : the Assembly a NaturalModes base was computed on; default the one it carries
        (``NaturalModes.assembly``); modes read from a file carry none and need it.

    Returns
    -------
    :class:`Sensitivity` (d lambda/dp, d f/dp, normalised and per-component shares, table, chart).
    """
    variables = [variables] if isinstance(variables, DesignVariable) else list(variables)
    if not variables:
        raise ModelError("eigen_sensitivity: no design variables given")
    n_cms = None
    if modes is not None and np.size(modes):
        n_cms = int(np.max(modes)) + 2            # one more mode to see a repeated eigenvalue
    elif modes is None:
        n_cms = 10
    mb = _modal_base(base, n_cms, assembly)
    idx = mb.check_modes(modes, "eigen_sensitivity")
    lam = mb.eigenvalues[idx]
    X = mb.vectors[:, idx]                                              # (n_red, n_m)
    n_m, n_v, n_c = idx.size, len(variables), len(mb.parts)
    parts = np.zeros((n_m, n_v, n_c))
    for i, var in enumerate(variables):
        for j, dK, dM in mb.part_matrices(var):
            P = mb.parts[j].projection
            Y = np.asarray(P @ X)                                       # (n_j, n_m) T_j xi
            kyy = np.einsum("im,im->m", Y, dK @ Y)
            myy = np.einsum("im,im->m", Y, dM @ Y)
            parts[:, i, j] = kyy - lam * myy
    degenerate = mb.degenerate_modes(idx)
    if degenerate:
        warnings.warn("eigen_sensitivity: repeated eigenvalues, modes "
                      + ", ".join(f"{k} and {i}" for k, i in degenerate)
                      + ": their sensitivities are not unique (any combination of the pair is a mode)",
                      FlexmbWarning, stacklevel=2)
    method = "CMS, T frozen" if mb.kind == "cms" else "Fox-Kapoor (full model)"
    return Sensitivity(variables, idx, lam, parts.sum(axis=2), [p.name for p in mb.parts], parts,
                       degenerate, method)


def _modal_base(base: Any, n_modes: int | None, assembly: Assembly | None) -> ModalBase:
    if isinstance(base, ModalBase):
        return base
    return ModalBase(base, n_modes, assembly)
