"""No import circle of flexmb spans two folders (issue 30: a layering without circles).

Each folder is a layer and imports only downward (the element groups, modal bodies' included, below
the model; the model, DOF map and assembly below the schemes and analyses; the result files in
``io/`` below the results that write them; ``cms/`` above the model it reduces). Modules of one
folder may import each other both ways, but a circle of imports that leaves a folder and comes back
means a lower layer reaches up. The checker reads every module of
``flexmb/`` with :mod:`ast` (nothing is imported) and builds the graph "module -> flexmb module it
imports at run time"; its strongly connected components (Tarjan) are the import circles. A folder is
a subpackage of ``flexmb/`` (``flexmb/cms/``, ``flexmb/io/``, ...); the top-level files of ``flexmb/``
(``model.py``, ``assembly.py``, ``flexmb/__init__.py`` ...) are one folder, ``flexmb``.

What counts as an import (each edge keeps its kind and line, for the failure message):

* ``module``: an ``import``/``from ... import`` at module level, also inside ``if``/``try`` blocks.
* ``function``: the same inside a function or method body. It runs when the function is first
  called, and then it closes the circle as surely as a module-level one, so it counts: moving an
  import into a function hides a circle from Python's import order, not from the layering.
* ``package``: importing ``flexmb.a.b`` runs ``flexmb/a/__init__.py`` first, so the importer also
  depends on the package ``flexmb.a`` (unless the importer lives in ``flexmb.a`` itself, which is
  then already imported). ``from flexmb.a import b`` names the submodule ``flexmb.a.b`` when ``b``
  is a module file, otherwise the package.
* ``lazy``: ``flexmb/__init__.py`` and the ``__init__`` of ``analysis/``, ``cms/`` and
  ``integrators/`` export names lazily (:mod:`flexmb.lazy_exports`, PEP 562): the provider tables
  are *not* edges from the package, since the package imports a provider only when one of its
  names is looked up. The look-up is the import, so it is charged to the module that makes it:
  ``from flexmb.cms import ModalBodyData`` is an edge to ``flexmb.cms`` (its ``__init__`` runs) and
  one to ``flexmb.cms.modal_body``; ``fm.Model`` after ``import flexmb as fm`` one to
  ``flexmb.model`` (the provider tables are read with ``ast`` from the ``lazy_exports(__name__,
  {...})`` call). A name looked up by a string at run time (``getattr(fm, name)``) is not seen;
  flexmb's own modules make no such look-ups.
* ``type-checking``: an import inside ``if TYPE_CHECKING:`` never runs (the modules use
  ``from __future__ import annotations``, so the hints are strings); it creates no run-time circle
  and does **not** count. Such imports are listed separately in the failure message when they
  join the modules of a failing component, and :func:`test_type_checking_imports_run_nowhere`
  checks that each module using them defers its annotations, so the exemption stays honest.

Run ``python tests/test_layering.py`` to print every component with more than one module.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "flexmb"
RUNTIME_KINDS = ("module", "function", "package", "lazy")


@dataclass(frozen=True)
class Edge:
    """One import: ``source`` imports ``target`` at ``path:line`` (``kind``: see the module docstring)."""

    source: str
    target: str
    kind: str
    path: str
    line: int


def _module_files(root: Path = PACKAGE_DIR) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under ``root`` (a package is its ``__init__``)."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = (root.name,) + path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def folder(module: str, modules: dict[str, Path]) -> str:
    """The folder of ``module``: its subpackage of flexmb, or ``flexmb`` for the top-level files."""
    parts = module.split(".")
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2 and modules[module].name != "__init__.py":
        return parts[0]
    return parts[1]


def _lazy_providers(modules: dict[str, Path], trees: dict[str, ast.Module]) -> dict[str, dict[str, str]]:
    """Package -> {public name: providing module} from its ``lazy_exports(__name__, table)`` call."""
    providers: dict[str, dict[str, str]] = {}
    for module, tree in trees.items():
        if modules[module].name != "__init__.py":
            continue
        assigned = {t.id: node.value for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    if isinstance(t, ast.Name) and node.value is not None}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "lazy_exports" and len(node.args) == 2):
                table = node.args[1]
                if isinstance(table, ast.Name):
                    table = assigned[table.id]
                names = ast.literal_eval(table)
                providers[module] = {name: provider for provider, exported in names.items()
                                     for name in exported}
    return providers


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


class _ImportCollector(ast.NodeVisitor):
    """All flexmb imports of one module, each with its kind (module, function, type-checking ...)."""

    def __init__(self, module: str, path: Path, modules: dict[str, Path],
                 providers: dict[str, dict[str, str]]) -> None:
        self.module, self.path, self.modules, self.providers = module, path, modules, providers
        self.is_package = path.name == "__init__.py"
        self.edges: list[Edge] = []
        self.context: list[str] = []          # "function" / "type-checking", innermost last
        self.aliases: dict[str, str] = {}     # local name -> flexmb package it is bound to

    def _kind(self) -> str:
        if "type-checking" in self.context:
            return "type-checking"
        return "function" if "function" in self.context else "module"

    def _add(self, target: str, line: int, kind: str | None = None) -> None:
        if target == self.module or self.module.startswith(target + "."):
            return                            # itself, or a package of its own: imported before it
        kind = kind or self._kind()
        self.edges.append(Edge(self.module, target, kind, str(self.path), line))
        # the packages above ``target`` run first, unless the importer sits inside them already
        parts = target.split(".")
        for n in range(2, len(parts)):
            package = ".".join(parts[:n])
            if not (self.module == package or self.module.startswith(package + ".")):
                self.edges.append(Edge(self.module, package, "type-checking" if kind == "type-checking"
                                       else "package", str(self.path), line))

    def _absolute(self, node: ast.ImportFrom) -> str:
        if node.level == 0:
            return node.module or ""
        base = self.module.split(".")
        if not self.is_package:
            base = base[:-1]
        base = base[:len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self.context.append("function")
        self.generic_visit(node)
        self.context.pop()

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            self.context.append("type-checking")
            for child in node.body:
                self.visit(child)
            self.context.pop()
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] != "flexmb":
                continue
            self._add(alias.name, node.lineno)
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                self.aliases["flexmb"] = "flexmb"

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = self._absolute(node)
        if source.split(".")[0] != "flexmb":
            return
        for alias in node.names:
            submodule = f"{source}.{alias.name}"
            if submodule in self.modules:
                self._add(submodule, node.lineno)
                self.aliases[alias.asname or alias.name] = submodule
            elif alias.name in self.providers.get(source, {}):
                # the package's __init__ runs, then its look-up imports the provider
                self._add(source, node.lineno, "type-checking" if self._kind() == "type-checking" else "package")
                self._add(self.providers[source][alias.name], node.lineno,
                          "type-checking" if self._kind() == "type-checking" else "lazy")
            else:
                self._add(source, node.lineno)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        """``fm.Model`` after ``import flexmb as fm`` imports flexmb.model on that look-up."""
        package = self._module_of(node.value)
        if package is not None and node.attr in self.providers.get(package, {}):
            self._add(self.providers[package][node.attr], node.lineno,
                      "type-checking" if self._kind() == "type-checking" else "lazy")
        elif package is not None and f"{package}.{node.attr}" in self.modules:
            self._add(f"{package}.{node.attr}", node.lineno,
                      "type-checking" if self._kind() == "type-checking" else "lazy")
        self.generic_visit(node)

    def _module_of(self, expr: ast.expr) -> str | None:
        """The flexmb module an expression like ``fm`` or ``fm.cms`` names, if any."""
        if isinstance(expr, ast.Name):
            return self.aliases.get(expr.id)
        if isinstance(expr, ast.Attribute):
            package = self._module_of(expr.value)
            if package is not None and f"{package}.{expr.attr}" in self.modules:
                return f"{package}.{expr.attr}"
        return None


def collect_edges(root: Path = PACKAGE_DIR) -> tuple[dict[str, Path], list[Edge]]:
    """Every module of the package under ``root`` and every flexmb import it makes."""
    modules = _module_files(root)
    trees = {module: ast.parse(path.read_text(encoding="utf-8"), str(path)) for module, path in modules.items()}
    providers = _lazy_providers(modules, trees)
    edges = []
    for module, tree in trees.items():
        collector = _ImportCollector(module, modules[module].relative_to(root.parent), modules, providers)
        collector.visit(tree)
        edges += [e for e in collector.edges if e.target in modules]
    return modules, edges


def strongly_connected(nodes: list[str], edges: list[Edge]) -> list[list[str]]:
    """Tarjan's strongly connected components of the graph (iterative: no recursion limit)."""
    successors: dict[str, list[str]] = defaultdict(list)
    for e in edges:
        successors[e.source].append(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(successors[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors[child])))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def import_circles(root: Path = PACKAGE_DIR) -> tuple[dict[str, Path], list[Edge], list[list[str]]]:
    """Modules, all edges, and the run-time components with more than one module."""
    modules, edges = collect_edges(root)
    runtime = [e for e in edges if e.kind in RUNTIME_KINDS]
    components = [c for c in strongly_connected(sorted(modules), runtime) if len(c) > 1]
    return modules, edges, components


def describe(component: list[str], edges: list[Edge]) -> str:
    """The modules of a component and the import lines that join them (type-checking ones apart)."""
    members = set(component)
    inside = sorted({(e.kind == "type-checking", e.path, e.line, e.source, e.target, e.kind) for e in edges
                     if e.source in members and e.target in members})
    lines = [f"  {m}" for m in component]
    for type_only, path, line, source, target, kind in inside:
        note = " (not counted)" if type_only else ""
        lines.append(f"    {path}:{line}: {source} -> {target} [{kind}]{note}")
    return "\n".join(lines)


def test_no_import_circle_spans_two_folders():
    modules, edges, components = import_circles()
    crossing = [c for c in components if len({folder(m, modules) for m in c}) > 1]
    message = "\n\n".join(
        f"import circle across folders {sorted({folder(m, modules) for m in c})}:\n{describe(c, edges)}"
        for c in crossing)
    assert not crossing, message


def test_type_checking_imports_run_nowhere():
    """Type-checking imports are exempt only where annotations are strings (PEP 563)."""
    modules, edges = collect_edges()
    for source in sorted({e.source for e in edges if e.kind == "type-checking"}):
        tree = ast.parse(modules[source].read_text(encoding="utf-8"))
        deferred = any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
                       and any(a.name == "annotations" for a in n.names) for n in tree.body)
        assert deferred, f"{source} imports under TYPE_CHECKING without 'from __future__ import annotations'"


def test_the_file_layer_loads_without_the_results():
    """The results build on the I/O layer: importing the result file modules loads no results module
    (the result classes reach :func:`~flexmb.io.result_file.read_result` as an argument)."""
    code = ("import sys, flexmb.io.result_file, flexmb.io.guarded_file, flexmb.io.records; "
            "print(sorted(m for m in sys.modules if m.startswith(('flexmb.results', 'flexmb.cms'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(PACKAGE_DIR.parent)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_old_import_paths_name_the_moved_objects():
    """Scripts written before the move keep working: the old modules name the same objects."""
    import flexmb.cms as cms
    import flexmb.cms.floating_frame as old_frame
    import flexmb.cms.floating_frame3d as old_frame3d
    import flexmb.cms.modal_body as old_data
    import flexmb.cms.velocity_fields as old_fields
    import flexmb.elements.floating_frame as frame
    import flexmb.elements.floating_frame3d as frame3d
    import flexmb.elements.modal_body_data as data
    import flexmb.elements.velocity_fields as fields
    import flexmb.results as results
    from flexmb.io import guarded_file, records, result_file

    assert old_frame.ModalBody is frame.ModalBody is cms.ModalBody
    assert old_frame.FloatingFrameMass is frame.FloatingFrameMass
    assert old_frame3d.FloatingFrameMass3D is frame3d.FloatingFrameMass3D
    assert old_fields.BodyVelocityFields is fields.BodyVelocityFields
    assert old_data.interface_geometric_stiffness is data.interface_geometric_stiffness
    assert issubclass(cms.ModalBodyData, data.ModalBodyArrays)
    for name in ("GroupLayout", "ModalMesh", "ModelLayout", "Event"):
        assert getattr(results, name) is getattr(records, name)
    assert results.ResultFileError is guarded_file.ResultFileError
    assert result_file.ResultFileError is results.ResultFileError
    # every public name of the single results module before issue 30
    before = {"GroupLayout", "ModalMesh", "ModelLayout", "Event", "ResultFileError", "Result", "TimeHistory",
              "StaticPath", "PathPoint", "ModeShapes", "RESULT_KINDS", "load_result"}
    assert before <= set(results.__all__)
    assert {kind: cls.__name__ for kind, cls in results.RESULT_KINDS.items()} \
        == {"dynamic": "TimeHistory", "static": "StaticPath", "modes": "ModeShapes"}


def _write_package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "flexmb" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "flexmb"


def test_checker_finds_a_circle_closed_inside_a_function(tmp_path):
    """The checker itself: a function-level import across folders closes a circle it reports."""
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "model.py": "from flexmb.cms.body import Body\n",
        "cms/__init__.py": "",
        "cms/body.py": "def build():\n    from flexmb import model\n    return model\n",
        "io/__init__.py": "",
        "io/files.py": "if TYPE_CHECKING:\n    from flexmb.model import Model\n",
    })
    modules, edges, components = import_circles(package)
    assert components == [["flexmb.cms.body", "flexmb.model"]]
    assert {folder(m, modules) for m in components[0]} == {"cms", "flexmb"}
    assert {(e.source, e.target, e.kind) for e in edges if e.source == "flexmb.cms.body"} \
        == {("flexmb.cms.body", "flexmb.model", "function")}
    # the type-only import is recorded but makes no edge of the run-time graph
    assert ("flexmb.io.files", "flexmb.model", "type-checking") in {(e.source, e.target, e.kind) for e in edges}


def test_checker_charges_lazy_look_ups_and_package_inits(tmp_path):
    """A lazy name looked up on the package is an import of its provider; a submodule import runs
    the package's ``__init__``; the provider table alone is no edge."""
    package = _write_package(tmp_path, {
        "__init__.py": "from flexmb.lazy_exports import lazy_exports\n"
                       "_P = {'flexmb.model': ('Model',)}\n"
                       "__getattr__, __dir__, __all__ = lazy_exports(__name__, _P)\n",
        "lazy_exports.py": "",
        "model.py": "from flexmb.viz.scene import draw\n",
        "viz/__init__.py": "from flexmb.viz.scene import draw\n",
        "viz/scene.py": "import flexmb as fm\n\ndef draw():\n    return fm.Model\n",
        "io/__init__.py": "from flexmb.io import helpers\n",
        "io/helpers.py": "",
        "analysis/__init__.py": "",
        "analysis/run.py": "from flexmb.io.helpers import x\n",
    })
    modules, edges, components = import_circles(package)
    assert components == [["flexmb.model", "flexmb.viz", "flexmb.viz.scene"]]
    kinds = {(e.source, e.target, e.kind) for e in edges}
    assert ("flexmb.viz.scene", "flexmb.model", "lazy") in kinds
    assert ("flexmb.model", "flexmb.viz", "package") in kinds
    assert ("flexmb.analysis.run", "flexmb.io", "package") in kinds
    assert not any(e.source == "flexmb" and e.target == "flexmb.model" for e in edges)


if __name__ == "__main__":
    found_modules, found_edges, found = import_circles()
    for comp in found:
        print(f"{len(comp)} modules in folders {sorted({folder(m, found_modules) for m in comp})}:")
        print(describe(comp, found_edges), end="\n\n")
