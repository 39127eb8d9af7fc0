"""Fresh processes timed as a user's run: with the bytecode of flexmb's modules on disk.

pip writes the bytecode (``.pyc``) of an installed flexmb at install time. The development tree
gets it on the first import, except where ``PYTHONDONTWRITEBYTECODE`` is set (some sandboxes and CI
images): then every process compiles flexmb's modules from source, which measured 0.2-0.4 s more
per process on the 2-core CI machine (2026-11-28; a spin-up run of 1.3 s took 1.8 s). The
benchmarks that time whole processes call :func:`write_bytecode` first (Python reads ``.pyc``
files whether or not it may write them).
"""
from __future__ import annotations

import compileall
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def write_bytecode() -> None:
    """Compile flexmb, the validation cases and the benchmarks to ``__pycache__`` (skips what is
    up to date)."""
    for folder in ("flexmb", "validation", "benchmarks"):
        compileall.compile_dir(REPO / folder, quiet=1)
