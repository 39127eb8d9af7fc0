"""Pictures of recovered stresses (:class:`~flexmb.cms.stress_recovery.RecoveredStresses`): the solids'
outer surface, deformed, coloured by the nodal von Mises stress, rendered off-screen with pyvista
(set up by :func:`flexmb.viz.scene._pyvista`, imported here on use, never by ``import flexmb``)."""
from __future__ import annotations

from collections.abc import Sequence
from inspect import signature
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from flexmb.checks import ModelError, keywords_listed
from flexmb.io.export import stress_mesh

if TYPE_CHECKING:
    from flexmb.cms.stress_recovery import RecoveredStresses

__all__ = ["render_stresses"]

#: VTK cell type of each meshio solid cell name
_VTK_CELL = {"tetra": 10, "tetra10": 24, "hexahedron": 12, "hexahedron20": 25, "wedge": 13, "wedge15": 26}


@keywords_listed
def render_stresses(recovered: RecoveredStresses, out: str | Path, step: int = -1, scale: float | None = None,
                    window_size: Sequence[int] = (1024, 768)) -> Path:
    """PNG ``out`` of the solids of ``recovered`` at ``step``: their outer surface moved by ``scale``
    times the recovered ``displacement`` (default: the largest translation drawn as 5 % of the model
    size; a modal body's in its body frame) and coloured by the nodal von Mises stress (Pa); returns
    the path. ModelError for a component without solids (no nodal stress to draw)."""
    from flexmb.viz.scene import _pyvista

    name = recovered.component.name
    out = Path(out)
    if out.suffix.lower() != ".png":
        raise ModelError(f"{name}: the stress picture is a .png file, got {out}")
    if not -recovered.n_steps <= step < recovered.n_steps:
        raise IndexError(f"step {step} does not exist ({recovered.n_steps} recovered steps)")
    if not np.isfinite(recovered.von_mises).any():
        raise ModelError(f"{name}: no solid elements, no nodal von Mises stress to draw")
    points, cells, point_data, _ = stress_mesh(recovered, step)
    biggest = float(np.abs(point_data["displacement"]).max())
    if scale is None:
        scale = 0.05 * recovered.component.model.characteristic_length / biggest if biggest > 0 else 0.0
    pv = _pyvista()
    grid = pv.UnstructuredGrid({_VTK_CELL[kind]: conn for kind, conn in cells if kind in _VTK_CELL},
                               points + scale * point_data["displacement"])
    grid.point_data["von Mises (Pa)"] = point_data["von_mises"]
    # pyvista >= 0.47 asks for the algorithm; the data-set surface filter draws curved tet10 faces
    given = {"algorithm": "dataset_surface"} if "algorithm" in signature(grid.extract_surface).parameters else {}
    surface = grid.extract_surface(**given)
    plotter = pv.Plotter(off_screen=True, window_size=[int(window_size[0]), int(window_size[1])])
    try:
        plotter.set_background("white")
        plotter.add_mesh(surface, scalars="von Mises (Pa)", cmap="viridis", nan_color="lightgrey",
                         scalar_bar_args={"color": "black", "position_x": 0.15, "width": 0.7, "fmt": "%.3g"})
        when = "" if recovered.times is None else f", t = {recovered.times[step]:.4g} s"
        plotter.add_text(f"{name}: von Mises, displacement x {scale:.3g}{when}", font_size=10, color="black")
        plotter.view_isometric()
        plotter.screenshot(str(out))
    finally:
        plotter.close()
    return out
