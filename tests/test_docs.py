"""The API reference (docs/api/*.rst) documents every public name, by the name users import it by.

Public names are those of ``flexmb.__all__`` (``fm.X``) and of the ``__all__`` of every subpackage
that declares one (``flexmb.cms``, ``flexmb.studies``, ...; a subpackage that gains an ``__all__``
is covered from then on). A name counts as documented when an API page lists it under that
package, in an ``autosummary`` table, an ``auto...`` directive or a ``data`` directive after ``.. currentmodule::
PACKAGE``. The pages are read as text: the test needs no Sphinx (the build itself, with
``-W``, is ``.ci/docs``).
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import flexmb

API = Path(__file__).resolve().parents[1] / "docs" / "api"
DIRECTIVE = re.compile(r"^\.\. (currentmodule|auto\w+|autosummary|data)::\s*(\S*)")


def documented_names(pages: list[Path]) -> dict[str, set[str]]:
    """Qualified name ``package.Name`` -> the API pages that list it."""
    found: dict[str, set[str]] = {}
    for page in pages:
        module, in_summary = "", False
        for line in page.read_text(encoding="utf-8").splitlines():
            match = DIRECTIVE.match(line)
            if match:
                kind, target = match.groups()
                in_summary = kind == "autosummary"
                if kind == "currentmodule":
                    module = target
                elif (kind.startswith("auto") or kind == "data") and target:
                    found.setdefault(f"{module}.{target}", set()).add(page.name)
            elif in_summary and re.match(r"^   [A-Za-z_]\w*$", line):
                found.setdefault(f"{module}.{line.strip()}", set()).add(page.name)
            elif in_summary and line and not line.startswith(" "):
                in_summary = False
    return found


def public_names() -> list[str]:
    """``flexmb.X`` for X in flexmb.__all__, and ``flexmb.sub.X`` for every subpackage's __all__."""
    names = [f"flexmb.{name}" for name in flexmb.__all__]
    for info in pkgutil.iter_modules(flexmb.__path__, "flexmb."):
        if info.ispkg:
            package = importlib.import_module(info.name)
            names += [f"{info.name}.{name}" for name in getattr(package, "__all__", ())]
    return names


def test_every_public_name_is_in_the_api_reference():
    documented = documented_names(sorted(API.glob("*.rst")))
    names = public_names()
    assert len(names) > 100, f"only {len(names)} public names found: is the package import broken?"
    missing = sorted(name for name in names if name not in documented)
    assert not missing, (f"{len(missing)} public name(s) missing from docs/api/*.rst (add them to the page of "
                         f"their package): {', '.join(missing)}")


def test_every_documented_name_exists():
    """A name renamed or removed in the code must leave the API pages too (the build would warn)."""
    for name, pages in documented_names(sorted(API.glob("*.rst"))).items():
        module, _, attribute = name.rpartition(".")
        assert hasattr(importlib.import_module(module), attribute), \
            f"{', '.join(sorted(pages))}: {name} is documented but {module} has no {attribute}"


def test_the_checker_sees_a_missing_name(tmp_path):
    """The reader of the pages: a name dropped from a page is reported missing, one listed counts."""
    page = tmp_path / "page.rst"
    page.write_text(".. currentmodule:: flexmb\n\n.. autosummary::\n\n   Model\n   integrate\n\n"
                    ".. autofunction:: natural_modes\n\nText that names Assembly is no entry.\n")
    documented = documented_names([page])
    assert {"flexmb.Model", "flexmb.integrate", "flexmb.natural_modes"} <= set(documented)
    assert "flexmb.Assembly" not in documented
