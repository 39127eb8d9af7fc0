"""Sphinx configuration of flexmb's documentation site.

Build (from the repository root; ``-W`` turns every warning into an error):

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The pages are Markdown (MyST), so the chapters keep the README's executable ``python`` blocks,
which ``tests/test_readme.py`` runs. The API reference is generated from the docstrings
(autodoc, numpy-style sections through napoleon); the validation table from the case scripts'
``CASE``, ``TITLE`` and ``SOURCE`` (``_ext/flexmb_docs.py``: the cases are imported, never run);
the gallery from ``examples/`` by sphinx-gallery without executing them (the test suite runs every
example; executing them here would add minutes to a build that takes well under one).
"""
from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

import flexmb  # noqa: E402  (after the path set-up, as Sphinx reads this file top to bottom)

project = "flexmb"
author = "the flexmb developers"
copyright = "the flexmb developers"
release = flexmb.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "flexmb_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**/GALLERY_HEADER.rst", "gallery/**/*.ipynb", "gallery/**/*.py",
                    "gallery/**/*.zip", "gallery/**/*.json"]

# MyST: headings get anchors so that chapters can link to each other's sections
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

# autodoc: the public names are documented under their import name (flexmb.X, flexmb.cms.X),
# in the order of the source
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
python_maximum_signature_line_length = 100
autodoc_preserve_defaults = True
autosummary_generate = False
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
# parameters as one field list, their types as text: the docstrings' types are shapes and units,
# "(n_dof,) array", whose words Sphinx would otherwise try to resolve as cross-references
napoleon_use_param = False

# sphinx-gallery: examples/ (and examples/studies/) as a gallery of their code and docstrings,
# not executed at build time (plot_gallery False): tests/test_examples.py runs them
sphinx_gallery_conf = {
    "examples_dirs": [str(DOCS.parent / "examples")],
    "gallery_dirs": ["gallery"],
    "filename_pattern": r"\.py$",
    "ignore_pattern": r"__init__\.py",
    "plot_gallery": False,
    "download_all_examples": False,
    "write_computation_times": False,
    "within_subsection_order": "FileNameSortKey",
}

html_theme = "pydata_sphinx_theme"
html_title = f"flexmb {release}"
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
