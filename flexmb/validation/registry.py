"""Finding and loading the validation case scripts.

The scripts live in the repository's ``validation/`` folder (one per benchmark). An installed
wheel carries them as data of the package, in ``flexmb/share/validation`` beside
``flexmb/share/examples`` and ``flexmb/share/meshes`` (pyproject.toml maps the three top-level
folders there), so a script finds ``../examples`` and ``../meshes`` in a checkout and in an
installation alike. The folder is taken from, in order: the ``cases_dir`` argument, the
``FLEXMB_VALIDATION_DIR`` environment variable, ``./validation`` in the working directory, the
installed package's ``share/validation``, and the ``validation/`` folder beside the package
(source checkouts and editable installs).
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

#: the folder of the flexmb package (site-packages/flexmb, or flexmb/ in a checkout)
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def _has_cases(folder: Path) -> bool:
    return folder.is_dir() and any(_defines_case(p) for p in folder.glob("*.py"))


def _defines_case(path: Path) -> bool:
    try:
        return "\nCASE = " in path.read_text(encoding="utf-8")
    except OSError:
        return False


def find_cases_dir(cases_dir: str | Path | None = None) -> Path:
    """The folder holding the case scripts; raises FileNotFoundError naming where it looked. A
    folder given explicitly must hold cases (no fall-back to another folder's cases)."""
    if cases_dir:
        folder = Path(cases_dir)
        if not _has_cases(folder):
            raise FileNotFoundError(f"cases folder {folder}: "
                                    + ("holds no validation case scripts (files defining CASE = ...)"
                                       if folder.is_dir() else "no such folder"))
        return folder
    candidates = []
    if os.environ.get("FLEXMB_VALIDATION_DIR"):
        candidates.append(Path(os.environ["FLEXMB_VALIDATION_DIR"]))
    # the installed data before the checkout's folder: beside an installed package lies
    # site-packages, where a folder named validation may belong to another distribution
    candidates += [Path.cwd() / "validation", PACKAGE_DIR / "share" / "validation", PACKAGE_DIR.parent / "validation"]
    for folder in candidates:
        if _has_cases(folder):
            return folder
    raise FileNotFoundError("no validation case scripts found; looked in "
                            + ", ".join(str(c) for c in candidates)
                            + " (run from the repository root or pass --cases-dir)")


def load_module(path: Path) -> ModuleType:
    """Import a case script by file path."""
    spec = importlib.util.spec_from_file_location(f"flexmb_case_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import validation script {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for attr in ("CASE", "TITLE", "SOURCE", "run"):
        if not hasattr(module, attr):
            raise ImportError(f"validation script {path} does not define {attr}")
    return module


def discover_cases(cases_dir: str | Path | None = None) -> dict[str, Path]:
    """Case name -> script path, sorted by name."""
    folder = find_cases_dir(cases_dir)
    found: dict[str, Path] = {}
    for path in sorted(folder.glob("*.py")):
        if not _defines_case(path):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("CASE = "):
                found[line.split("=", 1)[1].strip().strip("\"'")] = path
                break
    return dict(sorted(found.items()))
