"""Package namespaces whose names are imported on first use (PEP 562).

A package's ``__init__`` lists which module provides each public name; ``import flexmb`` (or
``flexmb.analysis``, ``flexmb.cms``, ...) then imports none of them, and a script pays start-up
only for the modules it uses: a planar dynamics run skips the eigen-, buckling, arc-length,
reaction and component-mode modules and the scipy parts behind them.
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterable, Mapping


def lazy_exports(package: str, providers: Mapping[str, Iterable[str]]
                 ) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package``.

    ``providers`` maps a module (absolute name) to the public names it defines. Any other name
    that is a child module of the package is imported as the attribute (``fm.results`` without
    ``import flexmb.results``), as when the package imported its modules eagerly.

    ``dir(package)`` lists the public API only: the provided names (and any other the package puts
    in its ``__all__``), the public subpackages and the dunder attributes (``__version__``, ...);
    the names the package's own code binds (``annotations``, ``lazy_exports``, private tables) and
    its plain modules stay out of it (they remain importable attributes).
    """
    module_of = {name: module for module, names in providers.items() for name in names}
    namespace = importlib.import_module(package).__dict__
    children = {child.name for child in pkgutil.iter_modules(namespace.get("__path__", []))
                if child.ispkg and not child.name.startswith("_")}

    def __getattr__(name: str) -> object:
        if name in module_of:
            value = getattr(importlib.import_module(module_of[name]), name)
        elif not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}") is not None:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value                    # later look-ups do not come here
        return value

    def __dir__() -> list[str]:
        dunders = {name for name in namespace if name.startswith("__") and name.endswith("__")}
        return sorted(dunders | set(module_of) | set(namespace.get("__all__", ())) | children)

    return __getattr__, __dir__, sorted(module_of)
