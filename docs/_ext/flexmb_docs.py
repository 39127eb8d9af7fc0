"""Sphinx extension of flexmb's documentation: the table of validation cases, and properties read
as prose.

The directive ``validation-cases`` writes a table of every case script in the repository's
``validation/`` folder with its ``CASE`` (the name on the command line), ``TITLE`` and ``SOURCE``,
read by importing each script (:func:`flexmb.validation.registry.load_module`), which defines the
case and runs nothing: a case runs only when its ``run`` is called. The table therefore follows
the scripts, with no hand-kept copy to drift from them.

flexmb's property and attribute docstrings are prose that often has a colon in its first line
("Size of every DOF (n_dof,): the largest extent ..."). Napoleon reads such a first line as
"type: description" (Google style), moves the part before the colon into a ``:type:`` field and
looks its words up as cross-references. :func:`prose_attribute_docstrings` marks the first line as
having no type, so the docstring is shown as written. In the same way the entries of their
numpy-style sections are written ``name : description`` (shapes and units in the description,
where numpydoc puts a type): :func:`described_entries` hands them to napoleon as a name with its
description on the next line, so the description is not set as a type.
"""
from __future__ import annotations

import inspect
import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

#: the numpy-style sections whose entries are ``name : description``
_ENTRY_SECTIONS = {"parameters", "other parameters", "attributes", "returns", "yields", "raises"}
#: an entry's first line: names (one, or several separated by commas), " : ", its description
_ENTRY = re.compile(r"^(?P<indent>\s*)(?P<names>[*\w]+(?:\s*,\s*[*\w]+)*) : (?P<text>.+)$")


def case_rows(cases_dir: Path | None = None) -> list[tuple[str, str, str, str, str]]:
    """(case, title, source, script file name, docstring) of every validation case, sorted by case
    name."""
    from flexmb.validation.registry import discover_cases, load_module

    rows = []
    for case, path in discover_cases(cases_dir).items():
        module = load_module(path)
        rows.append((case, str(module.TITLE), str(module.SOURCE), path.name, inspect.cleandoc(module.__doc__ or "")))
    return rows


def _row(cells: list[list[nodes.Node]]) -> nodes.row:
    row = nodes.row()
    for content in cells:
        row += nodes.entry("", nodes.paragraph("", "", *content))
    return row


class ValidationCases(SphinxDirective):
    """``validation-cases``: a table of the case scripts' CASE, TITLE and SOURCE (built as docutils
    nodes, so that it is the same table in a Markdown page and in an RST one)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        cases_dir = Path(self.env.srcdir).parent / "validation"
        rows = case_rows(cases_dir)
        for *_, script, _ in rows:
            self.env.note_dependency(str(cases_dir / script))
        group = nodes.tgroup(cols=3)
        for width in (22, 48, 30):
            group += nodes.colspec(colwidth=width)
        group += nodes.thead("", _row([[nodes.Text("case")], [nodes.Text("what is checked")],
                                       [nodes.Text("source")]]))
        body = nodes.tbody()
        for case, title, source, script, _ in rows:
            body += _row([[nodes.literal(case, case)],
                          [nodes.Text(f"{title} ("), nodes.literal(script, f"validation/{script}"), nodes.Text(")")],
                          [nodes.Text(source)]])
        group += body
        # each script's docstring as written (what it checks, against what, with which tolerance):
        # plain text, since the scripts' docstrings are not written as reStructuredText
        details: list[nodes.Node] = [nodes.rubric("", "What each case checks (the scripts' docstrings)")]
        for case, _, _, script, doc in rows:
            details += [nodes.rubric("", "", nodes.literal(case, case), nodes.Text(f" (validation/{script})")),
                        nodes.literal_block(doc, doc, language="text")]
        return [nodes.table("", group), *details]


def prose_attribute_docstrings(app: Sphinx, what: str, name: str, obj: object, options: object,
                               lines: list[str]) -> None:
    """Before napoleon: an empty type in front of a property's or attribute's first line."""
    if what in ("attribute", "data", "property") and lines and ":" in lines[0]:
        lines[0] = ": " + lines[0]


def described_entries(app: Sphinx, what: str, name: str, obj: object, options: object,
                       lines: list[str]) -> None:
    """Before napoleon: ``name : description`` entries of the numpy-style sections as ``name``
    followed by the description indented below it; prose after such a section (a paragraph at the
    section's indentation that is no entry, e.g. "Returns a :class:`NaturalModes`. Raises ...")
    under a "Notes" header, since napoleon would read it as one more entry."""
    out: list[str] = []
    section_indent = None                                  # indentation of the current section's header
    for i, line in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else ""
        indent = len(line) - len(line.lstrip())
        if following.strip() and set(following.strip()) == {"-"} and line.strip().lower() in _ENTRY_SECTIONS:
            section_indent = indent
        elif section_indent is not None and line.strip() and indent < section_indent:
            section_indent = None
        elif (section_indent is not None and line.strip() and indent == section_indent and i > 0
              and not lines[i - 1].strip() and not _ENTRY.match(line) and not set(line.strip()) <= {"-"}
              and len(following) - len(following.lstrip()) <= section_indent):
            out += [" " * indent + "Notes", " " * indent + "-----"]
            section_indent = None
        match = _ENTRY.match(line) if section_indent is not None else None
        if match and len(match["indent"]) == section_indent:
            out += [match["indent"] + match["names"], match["indent"] + "    " + match["text"]]
        else:
            out.append(line)
    lines[:] = out


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("validation-cases", ValidationCases)
    # napoleon handles autodoc-process-docstring at the default priority, 500: run before it
    app.connect("autodoc-process-docstring", prose_attribute_docstrings, priority=400)
    app.connect("autodoc-process-docstring", described_entries, priority=400)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
