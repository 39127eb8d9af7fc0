"""Pictures of results with pyvista, off-screen (:func:`show` opens a window where a display
exists): the deformed structure coloured by a quantity, mode shapes, and animations (GIF, MP4).

Beams are drawn as their section (box or tube) swept along the smooth deformed centreline of
:mod:`flexmb.viz.geometry`, trusses as straight tubes, shells as their deformed mid-surface,
solids as their deformed boundary surface (faces of one element only), point masses as spheres
(``point_mass_scale`` scales them, 0 hides them), rigid bodies as their shapes moving with their
node (a shape given to ``add_rigid_body``, else a link through the
body's joint points, see :mod:`flexmb.multibody.body_shapes`), modal bodies as their recovered
FE mesh (``scale`` magnifies their frame motion and modal coordinates like any DOF). Colour
quantities (:func:`quantities`): any element output of the result's groups (``N``, ``My1``, ``axial_strain``, ... constant on each
element; elements of groups without it are grey; a modal body's mesh takes its body's value, such
as ``q1``), a component k of a vector output as ``name[k]`` (a shell's ``membrane_forces[0]`` is
N_xx, ``[1]`` N_yy, ``[2]`` N_xy, likewise ``bending_moments``, in the element's co-rotated axes),
and the nodal magnitudes ``displacement`` (m, from the reference configuration) and ``velocity``
(m/s, dynamic results), interpolated along the elements and over the shell and solid surfaces
(a modal body's mesh: at its FE nodes).

Every picture carries an axes triad (x red, y green, z blue, lower left) and marks the supports
(grey cones under nodes with prescribed DOFs and at joints to the ground, pointing at the node
along +y in 2D and +z in 3D) and the joints (orange spheres at the joint points). Colour maps:
one diverging map (:data:`DIVERGING_MAP`, range symmetric about zero) for signed data, that is
element outputs with values of both signs beyond :data:`SIGNED_FRACTION` of the largest, and a
sequential one (:data:`SEQUENTIAL_MAP`) otherwise and for magnitudes; ``cmap="diverging"`` or
``"sequential"`` chooses, any other name is a matplotlib colour map over the data range.

The camera is fixed, not fitted by pyvista: a parallel projection (isometric in 3D, looking
along -z in 2D) that frames a given box, so :func:`animate` can frame the whole motion once and
keep it, with one colour range for all frames.

pyvista is imported by the functions here, never by ``import flexmb``; :func:`_pyvista` chooses
off-screen EGL rendering on a Linux machine without a display.
"""
from __future__ import annotations

import ctypes.util
import importlib.util
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import numpy as np

from flexmb.checks import ModelError, integer, real
from flexmb.results import ModelLayout, Result
from flexmb.viz.geometry import centrelines, lift, modal_mesh_outlines, structure_surface

if TYPE_CHECKING:
    import pyvista

#: file suffixes of :func:`render` / :func:`render_modes` and of :func:`animate`
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
MOVIE_SUFFIXES = (".gif", ".mp4")
#: named views: direction from the focal point to the camera, and the up direction
VIEWS = {"iso": ((1.0, 1.0, 1.0), (0.0, 0.0, 1.0)), "xy": ((0.0, 0.0, 1.0), (0.0, 1.0, 0.0)),
         "xz": ((0.0, -1.0, 0.0), (0.0, 0.0, 1.0)), "yz": ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0))}
BACKGROUND = "white"
SURFACE_COLOR = "lightsteelblue"
NAN_COLOR = "lightgrey"
REFERENCE_COLOR = "grey"
SUPPORT_COLOR = "dimgrey"
JOINT_COLOR = "darkorange"
#: size of support and joint markers, as a fraction of the model size
MARKER_FRACTION = 0.035
#: where the axes triad is drawn: (xmin, ymin, xmax, ymax) as fractions of the renderer
TRIAD_VIEWPORT = (0.0, 0.0, 0.1, 0.16)
DIVERGING_MAP = "coolwarm"
SEQUENTIAL_MAP = "viridis"
#: values count as signed when both signs reach this fraction of the largest magnitude (round-off
#: of a quantity of one sign does not switch to the diverging map)
SIGNED_FRACTION = 1e-2

#: how a picture is coloured: colour-bar title, value range, colour map name
Colour = tuple[str, tuple[float, float], str]


def _pyvista():
    """pyvista, set up for off-screen rendering (the one place that does it).

    On Linux without an X display, VTK would first try X, warn, then fall back; choosing the
    EGL render window (when libEGL exists) before VTK creates its first window avoids that.
    """
    if (sys.platform.startswith("linux") and not os.environ.get("DISPLAY")
            and "VTK_DEFAULT_OPENGL_WINDOW" not in os.environ and ctypes.util.find_library("EGL")):
        os.environ["VTK_DEFAULT_OPENGL_WINDOW"] = "vtkEGLRenderWindow"
    import pyvista

    return pyvista


# ------------------------------------------------------------------ result access
def _result(result: Any, what: str) -> Result:
    """``result`` as a :class:`~flexmb.results.Result` to draw: a result of natural modes,
    buckling or CMS gives its mode shapes; anything else (None, a file name) raises ModelError."""
    if not isinstance(result, Result) and hasattr(result, "mode_shapes"):
        result = result.mode_shapes()
    if not isinstance(result, Result):
        hint = "; read a result file with flexmb.load_result(path)" if isinstance(result, (str, Path)) else ""
        raise ModelError(f"{what} needs a flexmb result (of integrate, load_control, arc_length, natural_modes, "
                         f"linear_buckling or flexmb.load_result), got {result!r:.80} "
                         f"({type(result).__name__}){hint}")
    return result


def _window(window_size: Any) -> tuple[int, int]:
    """``window_size`` (width, height) as two whole numbers of pixels >= 1, else ModelError."""
    size = np.asarray(window_size) if isinstance(window_size, (list, tuple, np.ndarray)) else None
    if size is None or size.shape != (2,) or size.dtype.kind not in "iu" or np.any(size < 1):
        raise ModelError("window_size must be (width, height) in pixels, two whole numbers >= 1, got "
                         f"{window_size!r}")
    return int(size[0]), int(size[1])


def _glyph_scale(point_mass_scale: Any) -> float:
    """``point_mass_scale`` a finite number >= 0 (0 hides the point masses), else ModelError."""
    return real(point_mass_scale, "point_mass_scale (sphere radius factor, 0 hides point masses)", low=0.0)


def _checked_scale(scale: Any) -> float | None:
    """``scale`` None or a finite number (m for modes, a magnification otherwise), else ModelError."""
    return None if scale is None else real(scale, "scale")


def _layout(result: Result) -> ModelLayout:
    if getattr(result, "layout", None) is None:
        raise ModelError("this result carries no model layout, so it cannot be drawn "
                         "(results of flexmb's analyses and result files have one)")
    return result.layout


def _step(result: Result, step: int) -> int:
    """Index of ``step`` (negative counts from the end) checked against the result."""
    integer(step, "step" if result.kind != "modes" else "mode index")
    n = result.n_steps
    if not -n <= step < n:
        what = "modes" if result.kind == "modes" else "steps"
        raise IndexError(f"step {step} is out of range: the {result.kind} result has {n} {what} "
                         f"(0..{n - 1}, or -1..-{n} from the end)")
    return step % n


def _check_suffix(out: str | Path, allowed: tuple[str, ...]) -> Path:
    path = Path(out)
    if path.suffix.lower() not in allowed:
        raise ValueError(f"{path}: unknown output suffix {path.suffix!r}; use one of {', '.join(allowed)}")
    return path


def _mode_scale(result: Result, scale: float | None) -> float:
    return result.drawn_scale() if scale is None else float(scale)


def _state(result: Result, k: int, scale: float | None) -> np.ndarray:
    """DOF vector (n_dof,) drawn for step k: modes the reference moved by ``scale`` m along mode
    k; other results their DOFs (displacements and rotations) times ``scale`` (None: 1)."""
    if result.kind == "modes":
        return result.shape_state(k, _mode_scale(result, scale))
    u = np.asarray(result.u[k], dtype=float)
    return u if scale is None else float(scale) * u


def _reference_state(result: Result) -> np.ndarray:
    """DOF vector (n_dof,) of the reference drawn as wireframe: the undeformed structure, or the
    state the modes are taken about."""
    reference = getattr(result, "reference", None)
    return np.zeros(_layout(result).n_dof) if reference is None else np.asarray(reference, dtype=float)


def default_title(result: Result, step: int) -> str:
    """Picture title of a step: ``t = 0.1 s``, ``load factor 0.5``, ``mode 2: critical load
    factor 1.23`` (modes numbered from 1)."""
    k = _step(result, step)
    value = float(result.parameter[k])
    if result.kind == "dynamic":
        return f"t = {value:.4g} s"
    if result.kind == "static":
        return f"load factor {value:.4g}"
    if result.kind == "modes":
        return f"mode {k + 1}: {result.meta.get('what', 'value')} {value:.4g}"
    return f"{result.parameter_name} = {value:.4g}"


# ------------------------------------------------------------------------ colours
def quantities(result: Result) -> dict[str, str]:
    """Colour quantities of a result, name -> unit: element outputs (``name[k]`` for each
    component k of a vector output), ``displacement`` and, in dynamics, ``velocity``."""
    layout = _layout(result)
    names: dict[str, str] = {}
    if result.kind != "modes":                     # modes carry zero placeholders, nothing to show
        for g, store in zip(layout.groups, result.elements):
            for name, unit in g.outputs.items():
                recorded = store.get(name)
                size = np.shape(recorded[0])[1] if recorded and np.ndim(recorded[0]) == 2 else 0
                for label in [f"{name}[{k}]" for k in range(size)] or [name]:
                    names.setdefault(label, unit)
    names["displacement"] = "m"
    if hasattr(result, "v"):
        names["velocity"] = "m/s"
    return names


def _check_colour(result: Result, color: str) -> None:
    """ValueError unless ``color`` is one of the result's colour :func:`quantities`."""
    available = quantities(result)
    if color not in available:
        raise ValueError(f"unknown colour quantity {color!r}; this {result.kind} result has: "
                         + ", ".join(available))


def _colour_values(result: Result, k: int, u: np.ndarray, color: str
                   ) -> np.ndarray | list[np.ndarray]:
    """Values of ``color`` at step k drawn with DOF vector u: (n_nodes,) nodal magnitudes, or a
    list over groups of (n_el,) element values (NaN in groups without that output)."""
    layout = _layout(result)
    _check_colour(result, color)
    # nodal magnitudes: the model's nodes, then the modal bodies' FE nodes
    if color == "displacement":
        moved = [layout.positions(u) - layout.coordinates]
        moved += [x - x0 for x, x0 in zip(layout.modal_mesh_positions(u), layout.modal_mesh_positions(0.0 * u))]
        return np.linalg.norm(np.concatenate(moved), axis=1)
    if color == "velocity":
        v = np.asarray(result.v[k], dtype=float)
        return np.linalg.norm(np.concatenate([v[layout.translations()], *layout.modal_mesh_velocities(u, v)]), axis=1)
    name, _, component = color.partition("[")
    values = []
    for store, g in zip(result.elements, layout.groups):
        v = np.asarray(store[name][k], dtype=float) if name in store else np.full(g.n_elements, np.nan)
        values.append(v[:, int(component[:-1])] if component and v.ndim == 2 else v)
    return values


def _colour_scale(samples: Sequence[np.ndarray | list[np.ndarray]], name: str, cmap: str | None = None
                  ) -> tuple[tuple[float, float], str]:
    """Colour range and map for the values of all frames: ``cmap`` None chooses the diverging
    map with a range symmetric about zero for signed element outputs (tension and compression,
    see :data:`SIGNED_FRACTION`), else the sequential map over the finite range; "diverging" and
    "sequential" choose; another name is a matplotlib colour map over the range."""
    flat = [np.ravel(np.concatenate(v) if isinstance(v, list) else v) for v in samples]
    finite = np.concatenate(flat)[np.isfinite(np.concatenate(flat))] if flat else np.zeros(0)
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    largest = max(-lo, hi)
    if cmap is None:
        signed = min(-lo, hi) > SIGNED_FRACTION * largest and name not in ("displacement", "velocity")
        cmap = "diverging" if signed else "sequential"
    if cmap not in ("diverging", "sequential"):
        import matplotlib

        if cmap not in matplotlib.colormaps:
            raise ValueError(f"unknown colour map {cmap!r}; use 'diverging', 'sequential' or a matplotlib colour "
                             f"map name such as {DIVERGING_MAP!r} or {SEQUENTIAL_MAP!r}")
    if cmap == "diverging" or cmap == DIVERGING_MAP:
        m = largest if largest > 0 else 1.0
        return (-m, m), DIVERGING_MAP
    if hi - lo <= 1e-12 * max(abs(lo), abs(hi)):   # constant values: a range around them
        pad = 0.05 * abs(lo) if lo != 0.0 else 1.0
        lo, hi = lo - pad, hi + pad
    return (lo, hi), SEQUENTIAL_MAP if cmap == "sequential" else cmap


def _label(result: Result, color: str) -> str:
    return f"{color} ({quantities(result)[color]})"


# ------------------------------------------------------------------------- meshes
def structure_mesh(layout: ModelLayout, u: np.ndarray, values: np.ndarray | list[np.ndarray] | None = None,
                   n_sub: int = 8, point_mass_scale: float = 1.0) -> "pyvista.PolyData":
    """pyvista PolyData of the structure at the DOF vector u (n_dof,), points in m (2D models in
    the plane z = 0): beams as their section swept along the interpolated centreline with
    ``n_sub`` sections per element, trusses as straight tubes, shells and solids as their
    surfaces, point masses as spheres (radii times ``point_mass_scale``, 0 hides them), rigid
    bodies as their shapes.

    ``values``: a list with one (n_el,) array per group (NaN allowed), stored as cell data
    ``"values"`` (point masses and rigid bodies NaN); or a (n_nodes + n_modal_points,) array (the modal bodies' FE
    nodes last), stored as point data ``"values"`` interpolated linearly along each element.
    """
    pv = _pyvista()
    surface = structure_surface(layout, np.asarray(u, dtype=float), n_sub, point_mass_scale)
    mesh = pv.PolyData(surface.points, surface.faces)
    if values is None:
        return mesh
    if isinstance(values, np.ndarray) and values.ndim == 1:
        n_points = layout.n_nodes + layout.n_modal_points
        if len(values) != n_points:
            raise ValueError(f"nodal values have {len(values)} entries, the model has {n_points} nodes "
                             f"({layout.n_modal_points} of them in modal bodies' FE meshes)")
        mesh.point_data["values"] = surface.point_values(values)
        return mesh
    if len(values) != len(layout.groups) or any(np.shape(v) != (g.n_elements,)
                                                for v, g in zip(values, layout.groups)):
        raise ValueError("element values must be one (n_el,) array per group: expected shapes "
                         f"{[(g.n_elements,) for g in layout.groups]}, got {[np.shape(v) for v in values]}")
    mesh.cell_data["values"] = surface.cell_values(values)
    return mesh


def reference_lines(layout: ModelLayout, u: np.ndarray, n_sub: int = 8) -> "pyvista.PolyData":
    """Centrelines of the structure at u (n_dof,) as a line mesh (one polyline per element), m."""
    pv = _pyvista()
    u = np.asarray(u, dtype=float)
    lines = [lift(c) for c in centrelines(layout, u, n_sub)] + modal_mesh_outlines(layout, u)
    points = np.concatenate([c.reshape(-1, 3) for c in lines]) if lines else np.zeros((0, 3))
    cells, start = [], 0
    for c in lines:                                 # one block per group, each vectorised
        n_el, n_s = c.shape[:2]
        idx = start + np.arange(n_el * n_s).reshape(n_el, n_s)
        cells.append(np.hstack([np.full((n_el, 1), n_s), idx]).ravel())
        start += n_el * n_s
    return pv.PolyData(points, lines=np.concatenate(cells) if cells else np.zeros(0, np.int64))


def support_nodes(layout: ModelLayout) -> np.ndarray:
    """Nodes with at least one prescribed (fixed or driven) DOF, sorted."""
    return np.unique(layout.node_of_dof(np.asarray(layout.prescribed, dtype=np.int64)))


def marker_meshes(layout: ModelLayout, u: np.ndarray) -> dict[str, "pyvista.PolyData"]:
    """Markers at the DOF vector u (n_dof,), m: ``"supports"`` a cone under each supported node
    and each joint to the ground, its tip at the point, pointing along +y (2D) or +z (3D);
    ``"joints"`` a sphere at each joint point (attachments of FE nodes to bodies left out).
    Empty kinds are left out. Rigid bodies' shapes must not hide their joints: in 2D the markers
    sit at the front (largest z) of the shapes, in 3D a joint sphere is at least 0.6 times the
    thinnest extent of the shapes of the bodies it holds."""
    pv = _pyvista()
    size = MARKER_FRACTION * layout.characteristic_length
    up = np.eye(3)[1 if layout.dim == 2 else 2]
    x = lift(layout.positions(np.asarray(u, dtype=float)))
    joints = lift(layout.joint_positions(np.asarray(u, dtype=float))) if len(layout.joint_points) else np.zeros((0, 3))
    if layout.dim == 2 and layout.bodies:
        # a 2D picture looks along -z: markers in front of the bodies' shapes, else the links hide their pins
        front = max(float(b.shape.points[:, 2].max()) for b in layout.bodies)
        x[:, 2] = joints[:, 2] = max(front, 0.0)
    drawn = np.array([kind != "attach" for kind in layout.joint_kinds], dtype=bool)
    grounded = drawn & np.any(layout.joint_sides < 0, axis=1) if drawn.size else drawn
    tips = np.concatenate([x[support_nodes(layout)], joints[grounded]])
    meshes = {}
    if len(tips):
        meshes["supports"] = pv.merge([pv.Cone(center=p - 0.5 * size * up, direction=up, height=size,
                                               radius=0.6 * size, resolution=12) for p in tips])
    if drawn.any():
        radii = np.full(len(joints), 0.3 * size)
        if layout.dim == 3 and layout.bodies:
            # a pin shows through its links: at least 0.6 times the thinnest extent of the bodies it holds
            thinnest = {b.node: _thinnest_extent(b.shape.points) for b in layout.bodies}
            for j, sides in enumerate(layout.joint_sides):
                radii[j] = max([radii[j]] + [0.6 * thinnest[n] for n in sides if n in thinnest])
        meshes["joints"] = pv.merge([pv.Sphere(radius=r, center=p, theta_resolution=12, phi_resolution=12)
                                     for p, r in zip(joints[drawn], radii[drawn])])
    return meshes


def _thinnest_extent(points: np.ndarray) -> float:
    """Extent (m) of points (n, 3) along their thinnest principal direction (a bar's width)."""
    centred = points - points.mean(axis=0)
    return float(np.ptp(centred @ np.linalg.svd(centred, full_matrices=False)[2][-1]))


def _add_markers(plotter: "pyvista.Plotter", meshes: dict[str, "pyvista.PolyData"]) -> None:
    """Support and joint markers (named actors: drawing again replaces them) and, once per
    renderer, the axes triad in the lower left corner."""
    colours = {"supports": SUPPORT_COLOR, "joints": JOINT_COLOR}
    for name, mesh in meshes.items():
        plotter.add_mesh(mesh, color=colours[name], name=name, smooth_shading=True, ambient=0.3, render=False)
    if getattr(plotter.renderer, "axes_widget", None) is None:
        plotter.add_axes(interactive=False, line_width=2, color="black", viewport=TRIAD_VIEWPORT)


def _bounds(*meshes: "pyvista.PolyData") -> np.ndarray:
    """(6,) box xmin, xmax, ymin, ymax, zmin, zmax around the points of all meshes, m."""
    points = np.concatenate([np.asarray(m.points) for m in meshes if m.n_points])
    return np.ravel(np.c_[points.min(0), points.max(0)])


def _motion_bounds(layout: ModelLayout, states: Iterator[np.ndarray], point_mass_scale: float = 1.0) -> np.ndarray:
    """(6,) box around the drawn structure in all the states (DOF vectors), m; one state's
    surface in memory at a time."""
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for u in states:
        points = structure_surface(layout, u, point_mass_scale=point_mass_scale).points
        lo, hi = np.minimum(lo, points.min(0)), np.maximum(hi, points.max(0))
    return np.ravel(np.c_[lo, hi])


# ------------------------------------------------------------------------- drawing
def _plotter(window_size: Sequence[int], shape: tuple[int, int] = (1, 1)) -> "pyvista.Plotter":
    pv = _pyvista()
    plotter = pv.Plotter(off_screen=True, window_size=[int(window_size[0]), int(window_size[1])],
                         shape=shape, border=False)
    plotter.set_background(BACKGROUND)
    return plotter


def _draw(plotter: "pyvista.Plotter", mesh: "pyvista.PolyData", title: str, colour: Colour | None,
          reference: "pyvista.PolyData | None", font_size: int) -> None:
    """Add the structure (coloured by ``colour`` = (bar title, range, map), else one colour),
    the reference wireframe and the title to the plotter's current renderer; named actors, so
    drawing again replaces them."""
    # flat box faces keep sharp edges, 12-sided tubes and spheres look round; some ambient
    # light so faces turned away from the light kit (thin strips seen obliquely) are not black;
    # no render per added actor, :func:`_snapshot` renders once
    style = dict(smooth_shading=True, split_sharp_edges=True, name="structure", ambient=0.3, diffuse=0.75,
                 specular=0.2, render=False)
    if colour is None:
        plotter.add_mesh(mesh, color=SURFACE_COLOR, **style)
    else:
        bar_title, clim, cmap = colour
        plotter.add_mesh(mesh, scalars="values", clim=clim, cmap=cmap, nan_color=NAN_COLOR,
                         scalar_bar_args=dict(title=bar_title, color="black", fmt="%.3g", n_labels=5,
                                              vertical=True, position_x=0.86, position_y=0.15,
                                              width=0.06, height=0.7, title_font_size=font_size,
                                              label_font_size=font_size - 2, unconstrained_font_size=True),
                         **style)
        # keep the bar's title clear of its top label
        plotter.scalar_bars[bar_title].SetVerticalTitleSeparation(font_size)
    if reference is not None:
        plotter.add_mesh(reference, color=REFERENCE_COLOR, line_width=1.5, name="reference", render=False)
    plotter.add_text(title, position="upper_edge", font_size=font_size, color="black", name="title",
                     render=False)


def _frame(plotter: "pyvista.Plotter", bounds: np.ndarray, aspect: float, dim: int,
           camera: str | Sequence | None, bar: bool) -> None:
    """Parallel-projection camera of the current renderer framing the box ``bounds`` (6,):
    ``camera`` a view name of :data:`VIEWS` (default "iso" in 3D, "xy" in 2D) or a pyvista
    camera position (position, focal point, view up) of which the direction is used. ``aspect``
    is the renderer's width / height; room is kept for the title and a colour bar (on the right)."""
    if camera is None:
        camera = "xy" if dim == 2 else "iso"
    if isinstance(camera, str):
        if camera not in VIEWS:
            raise ValueError(f"unknown camera {camera!r}; use one of {', '.join(VIEWS)} or "
                             "a (position, focal point, view up) triple")
        direction, up = (np.array(v, dtype=float) for v in VIEWS[camera])
    else:
        position, focal, up = (np.asarray(v, dtype=float) for v in camera)
        direction = position - focal
    d = direction / np.linalg.norm(direction)
    up = up - (up @ d) * d
    up /= np.linalg.norm(up)
    right = np.cross(up, d)
    lo, hi = np.asarray(bounds[0::2], dtype=float), np.asarray(bounds[1::2], dtype=float)
    centre = 0.5 * (lo + hi)
    corners = np.stack(np.meshgrid(*zip(lo, hi), indexing="ij"), -1).reshape(-1, 3) - centre
    half_up, half_right = np.abs(corners @ up).max(), np.abs(corners @ right).max()
    # the free band of the viewport (fractions of its width and height from the lower left)
    # (the axes triad sits left of ``left``, in the lower left corner: TRIAD_VIEWPORT)
    left, right_edge, bottom, top = TRIAD_VIEWPORT[2], (0.80 if bar else 0.96), 0.05, 0.88
    diag = float(np.linalg.norm(hi - lo))
    scale = max(half_up / (top - bottom), half_right / ((right_edge - left) * aspect), 1e-6 * max(diag, 1.0))
    # the drawing sits in the middle of the free band, not of the whole viewport
    focal = centre - (bottom + top - 1.0) * scale * up - (left + right_edge - 1.0) * scale * aspect * right
    cam = plotter.camera
    cam.focal_point = focal
    cam.position = focal + d * max(2.0 * diag, 1.0)
    cam.up = up
    cam.parallel_projection = True
    cam.parallel_scale = scale
    plotter.renderer.ResetCameraClippingRange(*bounds)


def _picture(plotter: "pyvista.Plotter", result: Result, u: np.ndarray, title: str,
             colour_values: np.ndarray | list[np.ndarray] | None, colour: Colour | None,
             reference: "pyvista.PolyData | None", bounds: np.ndarray | None, camera: str | Sequence | None,
             aspect: float, font_size: int, point_mass_scale: float = 1.0) -> None:
    """Draw one state into the current renderer and frame it (``bounds`` None: the drawing's own)."""
    layout = _layout(result)
    mesh = structure_mesh(layout, u, colour_values, point_mass_scale=point_mass_scale)
    _draw(plotter, mesh, title, colour, reference, font_size)
    _add_markers(plotter, marker_meshes(layout, u))
    if bounds is None:
        bounds = _bounds(mesh, *(() if reference is None else (reference,)))
    _frame(plotter, bounds, aspect, layout.dim, camera, colour is not None)


def _snapshot(plotter: "pyvista.Plotter") -> np.ndarray:
    """The plotter's picture (height, width, 3) uint8, rendered once now."""
    plotter.render()                # no-op before the first screenshot, which renders itself
    return np.array(plotter.screenshot(return_img=True))


def _photograph(window_size: Sequence[int], draw: Callable[["pyvista.Plotter"], None],
                out: Path | None, shape: tuple[int, int] = (1, 1)) -> np.ndarray:
    """Draw into a fresh off-screen plotter, take its picture (height, width, 3) uint8, close the
    plotter, and save the picture to ``out`` if given."""
    plotter = _plotter(window_size, shape)
    try:
        draw(plotter)
        image = _snapshot(plotter)
    finally:
        plotter.close()
    if out is not None:
        from PIL import Image

        Image.fromarray(image).save(out)
    return image


def render(result: Result, out: str | Path | None = None, step: int = -1, color: str | None = None,
           window_size: Sequence[int] = (1200, 800), scale: float | None = None,
           show_reference: bool = False, title: str | None = None, camera: str | Sequence | None = None,
           plotter_bounds: Sequence[float] | None = None, clim: Sequence[float] | None = None,
           cmap: str | None = None, point_mass_scale: float = 1.0) -> np.ndarray:
    """Picture of the structure at one step, rendered off-screen; returns the image
    (height, width, 3) uint8 and writes it to ``out`` (.png, .jpg) if given.

    ``color``: None (one colour) or a quantity of :func:`quantities` (an element output such as
    ``"N"``, ``"My1"``, ``"axial_strain"``, a shell's ``"bending_moments[0]"`` (M_xx);
    ``"displacement"`` in m; ``"velocity"`` in m/s),
    with a colour bar titled with its name and unit; ``clim`` fixes the colour range; ``cmap``
    None (a diverging map for signed element outputs, else sequential), "diverging",
    "sequential" or a matplotlib colour map name. ``window_size`` is (width, height) in pixels. For modes, ``step`` is the mode index and
    ``scale`` the largest drawn mode translation in m (default 10 % of the model size); for
    other results ``scale`` magnifies the drawn displacements and rotations (default 1, the
    true deformation; colours by ``displacement`` stay the true values).
    ``show_reference`` adds the undeformed centrelines and the outlines of shell triangles and of
    solids' boundary faces (modes: the reference state) as a thin grey wireframe. ``title``
    defaults to :func:`default_title`. ``camera``: "iso" (3D default), "xy" (2D default), "xz",
    "yz" or a pyvista camera position; the picture frames ``plotter_bounds`` (xmin, xmax, ymin,
    ymax, zmin, zmax in m) if given, else the drawing.
    Supports, joints and an axes triad are marked (see the module docstring).
    ``point_mass_scale`` multiplies the point masses' sphere radii (0 hides them; rigid bodies are
    drawn as their shapes whatever it is).
    """
    if out is not None:
        out = _check_suffix(out, IMAGE_SUFFIXES)
    # the arguments checked before the off-screen window is opened (draw_scene checks them again)
    result, window_size = _result(result, "render"), _window(window_size)
    _layout(result)
    _step(result, step)
    _checked_scale(scale)
    _glyph_scale(point_mass_scale)
    if color is not None:
        _check_colour(result, color)
    return _photograph(window_size, lambda plotter: draw_scene(
        plotter, result, step, color, scale, show_reference, title, camera, plotter_bounds, clim, cmap,
        point_mass_scale), out)


def draw_scene(plotter: "pyvista.Plotter", result: Result, step: int = -1, color: str | None = None,
               scale: float | None = None, show_reference: bool = False, title: str | None = None,
               camera: str | Sequence | None = None, plotter_bounds: Sequence[float] | None = None,
               clim: Sequence[float] | None = None, cmap: str | None = None, point_mass_scale: float = 1.0) -> None:
    """Draw one step of a result into the current renderer of a pyvista ``plotter`` (the picture
    of :func:`render`, same arguments), to add your own items before taking the screenshot.
    Named actors: ``structure``, ``supports``, ``joints`` (when there are any), ``reference``,
    ``title``; the axes triad is the renderer's ``axes_actor``."""
    result = _result(result, "draw_scene")
    layout = _layout(result)
    k = _step(result, step)
    u = _state(result, k, _checked_scale(scale))
    values = colour = None
    if color is not None:
        values = _colour_values(result, k, u if result.kind == "modes" else _state(result, k, None), color)
        limits, colour_map = _colour_scale([values], color, cmap)
        colour = (_label(result, color), limits if clim is None else tuple(clim), colour_map)
    reference = reference_lines(layout, _reference_state(result)) if show_reference else None
    bounds = None if plotter_bounds is None else np.asarray(plotter_bounds, dtype=float)
    width, height = plotter.window_size
    _picture(plotter, result, u, default_title(result, k) if title is None else title, values, colour, reference,
             bounds, camera, width / height, 14, _glyph_scale(point_mass_scale))


def has_display() -> bool:
    """Whether an interactive window can open: not with pyvista's ``OFF_SCREEN`` set, nor on a
    Linux machine without an X or Wayland display (macOS and Windows always have one)."""
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False
    return not getattr(_pyvista(), "OFF_SCREEN", False)


def show(result: Result, step: int = -1, fallback: str | Path | None = "flexmb-show.png",
         window_size: Sequence[int] = (1200, 800), **options: Any) -> Path | None:
    """One step of a result in an interactive pyvista window (turn, pan and zoom with the mouse;
    close the window to go on), drawn as :func:`render` draws it (``options``: ``color``,
    ``scale``, ``show_reference``, ``title``, ``camera``, ``plotter_bounds``, ``clim``, ``cmap``,
    ``point_mass_scale``); returns None.

    Without a display (:func:`has_display`: a Linux machine without X or Wayland, pyvista's
    OFF_SCREEN, the tests) it saves the picture of :func:`render` to ``fallback`` (.png, .jpg),
    warns (:class:`~flexmb.checks.FlexmbWarning`) naming the file and returns its path;
    ``fallback=None`` raises RuntimeError there instead.
    """
    result, window_size = _result(result, "show"), _window(window_size)
    if not has_display():
        if fallback is None:
            raise RuntimeError("show: no display to open a window on (no DISPLAY or WAYLAND_DISPLAY, or "
                               "pyvista.OFF_SCREEN); use flexmb.viz.scene.render(result, 'picture.png')")
        import warnings

        from flexmb.checks import FlexmbWarning

        out = _check_suffix(fallback, IMAGE_SUFFIXES)
        render(result, out, step=step, window_size=window_size, **options)
        warnings.warn(f"show: no display, so the picture was saved to {out} instead of shown", FlexmbWarning,
                      stacklevel=2)
        return out
    plotter = _pyvista().Plotter(window_size=list(window_size))
    plotter.set_background(BACKGROUND)
    draw_scene(plotter, result, step, **options)
    plotter.show()
    return None


def render_sequence(result: Result, out: str | Path | None = None, steps: Sequence[int] | None = None,
                    color: str | None = None, window_size: Sequence[int] = (1200, 800),
                    title: str | None = None, camera: str | Sequence | None = None,
                    cmap: str | None = None, point_mass_scale: float = 1.0) -> np.ndarray:
    """Several steps in one picture (a stroboscopic view of a motion or a load path, as in the
    figures of the classic papers); returns the image (height, width, 3) uint8 and writes it to
    ``out`` if given.

    ``steps`` default: about ten steps evenly over the result. ``color``, ``cmap`` and
    ``point_mass_scale`` as in :func:`render`, with one colour range over all drawn steps.
    """
    point_mass_scale = _glyph_scale(point_mass_scale)
    result, window_size = _result(result, "render_sequence"), _window(window_size)
    pv = _pyvista()
    layout = _layout(result)
    if out is not None:
        out = _check_suffix(out, IMAGE_SUFFIXES)
    if steps is None:
        steps = frame_steps(result.n_steps, 1, 10)
    ks = [_step(result, int(k)) for k in steps]
    if not ks:
        raise ValueError("render_sequence: no steps to draw")
    states = [_state(result, k, None) for k in ks]
    values = [_colour_values(result, k, u, color) for k, u in zip(ks, states)] if color is not None \
        else [None] * len(ks)
    mesh = pv.merge([structure_mesh(layout, u, v, point_mass_scale=point_mass_scale) for u, v in zip(states, values)])
    colour = None
    if color is not None:
        limits, colour_map = _colour_scale(values, color, cmap)
        colour = (_label(result, color), limits, colour_map)
    if title is None:
        first, last = default_title(result, ks[0]), default_title(result, ks[-1])
        title = f"{first} to {last.split('= ')[-1] if result.kind == 'dynamic' else last} ({len(ks)} steps)"

    markers: dict[str, list] = {}
    for u in states:
        for name, m in marker_meshes(layout, u).items():
            markers.setdefault(name, []).append(m)

    def draw(plotter: "pyvista.Plotter") -> None:
        _draw(plotter, mesh, title, colour, None, 14)
        _add_markers(plotter, {name: pv.merge(ms) for name, ms in markers.items()})
        _frame(plotter, _bounds(mesh), window_size[0] / window_size[1], layout.dim, camera, colour is not None)

    return _photograph(window_size, draw, out)


# ---------------------------------------------------------------------- animation
def frame_steps(n_steps: int, every: int = 1, max_frames: int = 200) -> np.ndarray:
    """Steps drawn by :func:`animate`: every ``every``-th step from 0, thinned evenly to at most
    ``max_frames`` (keeping the first and the last of them)."""
    every, max_frames = integer(every, "every (steps)", low=1), integer(max_frames, "max_frames", low=1)
    steps = np.arange(0, n_steps, every)
    if len(steps) > max_frames:
        steps = steps[np.unique(np.round(np.linspace(0, len(steps) - 1, max_frames)).astype(int))]
    return steps


def animate(result: Result, out: str | Path, every: int = 1, fps: float = 15, color: str | None = None,
            window_size: Sequence[int] = (800, 600), max_frames: int = 200, mode: int = 0,
            scale: float | None = None, camera: str | Sequence | None = None, cmap: str | None = None,
            point_mass_scale: float = 1.0) -> Path:
    """Animation of a result written to ``out``: ``.gif`` (pillow) or ``.mp4`` (needs imageio
    and imageio-ffmpeg); returns the path.

    Frames are the steps of :func:`frame_steps` (``every``, ``max_frames``); for modes, mode
    ``mode`` oscillating as ``scale * sin`` over one period of at most ``max_frames`` frames
    (``scale`` as in :func:`render`). The camera frames the motion of all frames and the colour
    range (``color`` and ``cmap`` as in :func:`render`) covers them all, so the picture does not jump;
    ``point_mass_scale`` as in :func:`render`.
    A GIF stores consecutive identical frames once, with their durations added.
    """
    out = _check_suffix(out, MOVIE_SUFFIXES)
    result, window_size = _result(result, "animate"), _window(window_size)
    fps = real(fps, "animate: fps (frames per second)", low=0.0, low_open=True)
    scale, point_mass_scale = _checked_scale(scale), _glyph_scale(point_mass_scale)
    if out.suffix.lower() == ".mp4":
        _require_mp4_writer()
    layout = _layout(result)
    if result.kind == "modes":
        k = _step(result, mode)
        n = max(2, min(max_frames, int(round(2 * fps))))        # one period of about 2 s
        amplitude = _mode_scale(result, scale) * np.sin(2.0 * np.pi * np.arange(n) / n)
        frames = [(k, result.shape_state(k, a)) for a in amplitude]
    else:
        frames = [(k, np.asarray(result.u[k], dtype=float)) for k in frame_steps(result.n_steps, every, max_frames)]
    values = [_colour_values(result, k, u, color) for k, u in frames] if color is not None else [None] * len(frames)
    # first pass: the box of the whole motion and the colour range of all frames
    bounds = _motion_bounds(layout, (u for _, u in frames), point_mass_scale)
    colour = None
    if color is not None:
        limits, colour_map = _colour_scale(values, color, cmap)
        colour = (_label(result, color), limits, colour_map)
    plotter = _plotter(window_size)
    aspect = window_size[0] / window_size[1]

    def images() -> Iterator[np.ndarray]:
        for (k, u), v in zip(frames, values):
            _picture(plotter, result, u, default_title(result, k), v, colour, None, bounds, camera, aspect, 12,
                     point_mass_scale)
            yield _snapshot(plotter)

    try:
        if out.suffix.lower() == ".gif":
            _write_gif(images(), out, fps)
        else:
            _write_mp4(images(), out, fps)
    finally:
        plotter.close()
    return out


def _write_gif(images: Iterator[np.ndarray], out: Path, fps: float) -> None:
    """GIF with pillow, frames converted as they are rendered, each to its own 256-colour
    palette (fast octree: a few ms a frame, against about 30 for pillow's default median cut)."""
    from PIL import Image

    frames = (Image.fromarray(image).quantize(256, method=Image.Quantize.FASTOCTREE) for image in images)
    first = next(frames)
    first.save(out, save_all=True, append_images=frames, duration=int(round(1000.0 / fps)), loop=0)


def _require_mp4_writer() -> None:
    missing = [name for name in ("imageio", "imageio_ffmpeg") if importlib.util.find_spec(name) is None]
    if missing:
        raise ImportError("writing MP4 needs imageio and imageio-ffmpeg (missing: "
                          f"{', '.join(missing)}): pip install imageio imageio-ffmpeg")


def _write_mp4(images: Iterator[np.ndarray], out: Path, fps: float) -> None:
    import imageio.v2 as imageio

    # H.264 in yuv420p needs even sizes: odd ones get a copy of their last row or column
    with imageio.get_writer(out, fps=fps, codec="libx264", macro_block_size=2) as writer:
        for image in images:
            writer.append_data(np.pad(image, ((0, image.shape[0] % 2), (0, image.shape[1] % 2), (0, 0)), mode="edge"))


# -------------------------------------------------------------------------- modes
def render_modes(modes: Any, out: str | Path, n: int = 4, scale: float | None = None,
                 window_size: Sequence[int] = (1400, 900)) -> np.ndarray:
    """Grid of the first ``n`` mode shapes, one subplot each titled with its mode value, with the
    reference state as grey wireframe; writes ``out`` (.png, .jpg) and returns the image
    (height, width, 3) uint8.

    ``modes``: a result of kind "modes" (:class:`~flexmb.results.ModeShapes`) or an object with
    a ``mode_shapes()`` method such as :class:`~flexmb.analysis.buckling.BucklingResult`.
    ``scale`` as in :func:`render`.
    """
    if hasattr(modes, "mode_shapes"):
        modes = modes.mode_shapes()
    if getattr(modes, "kind", None) != "modes":
        raise ValueError(f"render_modes needs mode shapes (a result of kind 'modes'), got "
                         f"{getattr(modes, 'kind', type(modes).__name__)!r}")
    out = _check_suffix(out, IMAGE_SUFFIXES)
    window_size, scale = _window(window_size), _checked_scale(scale)
    layout = _layout(modes)
    n = min(int(n), modes.n_steps)
    if n < 1:
        raise ValueError(f"nothing to draw: n = {n} and the result has {modes.n_steps} modes")
    cols = int(np.ceil(np.sqrt(n)))
    rows = int(np.ceil(n / cols))
    reference = reference_lines(layout, _reference_state(modes))
    aspect = (window_size[0] / cols) / (window_size[1] / rows)

    def draw(plotter: "pyvista.Plotter") -> None:
        for k in range(n):
            plotter.subplot(k // cols, k % cols)
            _picture(plotter, modes, _state(modes, k, scale), default_title(modes, k), None, None,
                     reference, None, None, aspect, 12)

    return _photograph(window_size, draw, out, shape=(rows, cols))
