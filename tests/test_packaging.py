"""Packaging: the version, and a wheel that carries the validation cases, examples and meshes.

pyproject.toml maps the repository's validation/, examples/ and meshes/ to flexmb/share/ in the
wheel. These tests lay out the mapped files as an installation would (copied by that mapping into a
temporary site folder) and check that the cases are found and find their examples and meshes there;
.ci/wheel builds and installs the real wheel.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import flexmb
from flexmb.cli import main
from flexmb.validation import discover_cases, find_cases_dir, registry
from flexmb.validation.registry import load_module

try:
    import tomllib
except ModuleNotFoundError:                                 # Python 3.10: pytest depends on tomli there
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
DATA_FOLDERS = ("validation", "examples", "meshes")


def _setuptools() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _repository_cases() -> set[str]:
    return {line.split("=", 1)[1].strip().strip("\"'") for path in (REPO / "validation").glob("*.py")
            for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("CASE = ")}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site folder holding what the wheel installs from the mapped folders (each mapped package's
    modules and package-data files, as setuptools' build_py picks them); returns site/flexmb."""
    site = tmp_path_factory.mktemp("site-packages")
    tool = _setuptools()
    for package, folder in tool["package-dir"].items():
        target = site.joinpath(*package.split("."))
        target.mkdir(parents=True)
        for pattern in ["*.py", *tool.get("package-data", {}).get(package, [])]:
            for path in (REPO / folder).glob(pattern):
                shutil.copy2(path, target)
    return site / "flexmb"


@pytest.fixture
def outside_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder and no FLEXMB_VALIDATION_DIR: only the package's folders can hold cases."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("FLEXMB_VALIDATION_DIR", raising=False)
    return work


# ------------------------------------------------------------------ version
def test_version_is_the_distributions_and_the_command_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert flexmb.__version__ == importlib.metadata.version("flexmb")
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"flexmb {flexmb.__version__}\n"


def test_version_of_a_source_tree_without_metadata_is_pyprojects(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert flexmb._version() == project["version"]


def test_import_flexmb_leaves_the_version_lookup_for_first_use() -> None:
    # importing importlib.metadata would take ten times as long as importing flexmb
    code = ("import sys, flexmb; before = 'importlib.metadata' in sys.modules; version = flexmb.__version__; "
            "print(before, 'importlib.metadata' in sys.modules, version)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", flexmb.__version__]


# ------------------------------------------------------------------ what the wheel carries
def test_the_wheel_lists_every_package_of_flexmb() -> None:
    listed = set(_setuptools()["packages"])
    in_tree = {".".join(folder.relative_to(REPO).parts) for folder in (REPO / "flexmb").rglob("*")
               if folder.is_dir() and folder.name != "__pycache__" and any(folder.glob("*.py"))}
    in_tree.add("flexmb")
    assert in_tree - listed == set(), "package folders of flexmb/ missing from [tool.setuptools] packages"
    assert {p for p in listed if not p.startswith("flexmb.share.")} - in_tree == set(), "listed, not in flexmb/"


def test_the_data_folders_keep_their_layout_under_flexmb_share() -> None:
    """Every folder of validation/, examples/ and meshes/ that holds files maps to flexmb/share/<the
    same path>, so paths between them (../examples, ../meshes) hold when installed; every mesh goes."""
    tool = _setuptools()
    wanted = {}
    for top in DATA_FOLDERS:
        for folder in [REPO / top, *(REPO / top).rglob("*")]:
            if folder.is_dir() and folder.name != "__pycache__" and any(p.is_file() for p in folder.iterdir()):
                rel = folder.relative_to(REPO)
                wanted["flexmb.share." + ".".join(rel.parts)] = rel.as_posix()
    assert tool["package-dir"] == wanted
    assert set(wanted) <= set(tool["packages"])
    patterns = tool["package-data"]["flexmb.share.meshes"]
    unpacked = [p.name for p in (REPO / "meshes").iterdir()
                if p.is_file() and p.suffix != ".py" and not any(p.match(pattern) for pattern in patterns)]
    assert unpacked == [], "files of meshes/ the wheel would leave out"


# ------------------------------------------------------------------ finding the cases
def test_cases_are_found_in_the_installed_package(installed: Path, outside_checkout: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # site-packages may hold another distribution's folder named validation, even with a CASE line
    stray = installed.parent / "validation"
    stray.mkdir()
    (stray / "other.py").write_text('"""Not flexmb\'s."""\nCASE = "other"\n', encoding="utf-8")
    monkeypatch.setattr(registry, "PACKAGE_DIR", installed)
    assert find_cases_dir() == installed / "share" / "validation"
    assert set(discover_cases()) == _repository_cases()
    assert len(_repository_cases()) == len(list((REPO / "validation").glob("*.py")))


def test_cases_are_found_in_a_checkout_from_any_folder(outside_checkout: Path) -> None:
    """A checkout or an editable install has no share/ folder: the cases beside the package."""
    assert not (registry.PACKAGE_DIR / "share").exists()
    assert find_cases_dir() == REPO / "validation"


def test_working_folder_cases_come_before_the_installed_ones(installed: Path, outside_checkout: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    own = outside_checkout / "validation"
    own.mkdir()
    shutil.copy2(REPO / "validation" / "slider_crank_a.py", own)
    monkeypatch.setattr(registry, "PACKAGE_DIR", installed)
    assert list(discover_cases()) == ["slider-crank-a"]


# ------------------------------------------------------------------ cases and examples read their files there
def _load_example(path: Path) -> ModuleType:
    """Import an example script by path (examples define no CASE, which registry.load_module wants)."""
    spec = importlib.util.spec_from_file_location(f"flexmb_test_example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("case", "loader", "example"), [
    ("four_bar_flexible.py", "example", "four_bar_flexible.py"),
    ("pendulum_chain_dissipation.py", "_example", "pendulum_chain.py"),
])
def test_an_installed_case_loads_the_installed_example(installed: Path, case: str, loader: str,
                                                       example: str) -> None:
    module = load_module(installed / "share" / "validation" / case)
    loaded = getattr(module, loader)()
    assert Path(loaded.__file__) == installed / "share" / "examples" / example
    assert callable(loaded.build)


def test_an_installed_example_reads_the_installed_mesh(installed: Path) -> None:
    """The portal frame of examples/frame_buckling.py, built from meshes/portal_frame_3d.msh."""
    example = _load_example(installed / "share" / "examples" / "frame_buckling.py")
    assert example.MESH == installed / "share" / "meshes" / "portal_frame_3d.msh"
    model, roof = example.build()
    # the mesh's "roof" set: the four corners of the 4 m x 3 m plan at the frame's height
    corners = model.coordinates[roof]
    assert corners[:, 2] == pytest.approx([example.H] * 4, abs=1e-9 * example.H)
    assert sorted(map(tuple, corners[:, :2].round(9))) == [(0, 0), (0, 3), (4, 0), (4, 3)]
