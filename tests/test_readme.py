"""Every ```python block of README.md and of the documentation's Markdown pages (docs/*.md) runs,
and prints what its comments say.

The blocks follow two rules, which this test enforces:

* A block is self-contained: it has its own imports and model and runs in a fresh namespace,
  in an empty working folder holding a copy of the repository's ``meshes/`` (as when run from
  the repository root), so the files it writes land there.
* Every ``print(...)`` prints one line and ends with a comment that starts with that line: its
  words as printed, and each number either rounded to the digits that matter (the printed
  value must round to it: within half a unit of its last digit) or as a bound ``< X`` / ``> X``.
  What follows the printed line in the comment is explanation, e.g.
  ``print(f"{err:.1e}")   # < 1e-10  (Newton's tolerance)``.

The ```bash block right after the results block (docs/results.md) runs too: its ``flexmb``
commands act on the ``run.h5`` that block writes.
"""
from __future__ import annotations

import ast
import contextlib
import io
import re
import shlex
import shutil
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: the Markdown files whose blocks run: the README and the documentation's pages (the build's
#: output and the generated gallery are not sources)
SOURCES = [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))
#: a fenced block: its language (or MyST directive, "{include}") and its text
FENCE = re.compile(r"^```(\w*|\{[\w-]+\}[^\n]*)\n(.*?)^```", re.S | re.M)
NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
#: a printed line, and a comment, as chunks: numbers (in a comment with a bound) and the text between
PRINTED = re.compile(rf"(?P<number>{NUMBER})|(?P<text>[^\d+\-.]+|.)")
COMMENT = re.compile(rf"(?P<bound>[<>])?\s*(?P<number>{NUMBER})|(?P<text>[^\d<>+\-.]+|.)")


def blocks(language: str, path: Path) -> list[tuple[str, int, str]]:
    """(title of the section, line number in the file, code) of every block in ``language``."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        if match.group(1) == language:
            line = text.count("\n", 0, match.start()) + 2
            headings = re.findall(r"^#+ (.+)$", FENCE.sub("", text[:match.start()]), re.M)
            found.append((headings[-1] if headings else "top", line, match.group(2)))
    return found


#: (file relative to the repository, section title, line, code) of every python block
PYTHON_BLOCKS = [(path.relative_to(REPO).as_posix(), title, line, code)
                 for path in SOURCES for title, line, code in blocks("python", path)]


def chunks(text: str, pattern: re.Pattern) -> list[tuple[str, str]]:
    """('number', '0.53'), ('<', '1e-10'), ('>', '100') or ('text', 'words') pieces of a line,
    text with its white space collapsed."""
    out: list[tuple[str, str]] = []
    for m in pattern.finditer(text):
        if m.group("number") is not None:
            bound = m.groupdict().get("bound")
            out.append((bound or "number", m.group("number")))
        elif out and out[-1][0] == "text":
            out[-1] = ("text", out[-1][1] + m.group(0))
        else:
            out.append(("text", m.group(0)))
    return [(kind, " ".join(value.split()) if kind == "text" else value) for kind, value in out
            if kind != "text" or value.strip()]


def half_unit(number: str) -> float:
    """Half a unit of the last digit written: '0.53' -> 0.005, '51' -> 0.5, '1.5e-3' -> 5e-5."""
    mantissa, _, exponent = number.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 0.5 * 10.0 ** (int(exponent or 0) - decimals)


def mismatch(printed: str, comment: str) -> str | None:
    """Why the comment does not start with the printed line, or None if it does."""
    got, said = chunks(printed, PRINTED), chunks(comment, COMMENT)
    if len(said) < len(got):
        return "the comment states less than is printed"
    for i, ((kind, value), (claim_kind, claim)) in enumerate(zip(got, said)):
        if kind == "text":
            last = i == len(got) - 1                        # explanation may follow the printed words
            if claim_kind != "text" or not (value == claim or last and claim.startswith(value)):
                return f"printed {value!r}, the comment says {claim!r}"
            continue
        if claim_kind == "text":
            return f"printed the number {value}, the comment says {claim!r}"
        x, c = float(value), float(claim)
        if claim_kind == "<" and not x < c or claim_kind == ">" and not x > c:
            return f"printed {value}, the comment says {claim_kind} {claim}"
        if claim_kind == "number" and not abs(x - c) <= half_unit(claim) * (1 + 1e-9):
            return f"printed {value}, which does not round to the comment's {claim}"
    return None


def print_comments(code: str) -> list[tuple[int, str | None]]:
    """(line, comment text or None) of every print(...) call of a block, in order."""
    comments = {tok.start[0]: tok.string.lstrip("#").strip()
                for tok in tokenize.generate_tokens(io.StringIO(code).readline) if tok.type == tokenize.COMMENT}
    calls = [node for node in ast.walk(ast.parse(code))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"]
    return [(call.end_lineno, comments.get(call.end_lineno)) for call in sorted(calls, key=lambda c: c.lineno)]


@pytest.fixture
def readme_folder(tmp_path, monkeypatch) -> Path:
    """An empty working folder with a copy of meshes/, as the blocks expect."""
    shutil.copytree(REPO / "meshes", tmp_path / "meshes")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FLEXMB_PROGRESS", "0")
    return tmp_path


def run_block(code: str, where: str) -> None:
    """Run one block and compare what each print(...) printed with its comment."""
    prints = print_comments(code)
    for line, comment in prints:
        assert comment, f"{where}, line {line}: a print(...) without a comment saying what it prints"
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(code, where, "exec"), {"__name__": "__readme__"})
    lines = output.getvalue().splitlines()
    assert len(lines) == len(prints), \
        f"{where}: {len(prints)} print(...) calls printed {len(lines)} lines:\n{output.getvalue()}"
    for (line, comment), printed in zip(prints, lines):
        why = mismatch(printed, comment)
        assert why is None, f"{where}, line {line}: {why}\n  printed: {printed}\n  comment: # {comment}"


def test_every_block_shows_what_it_computes():
    assert len(SOURCES) >= 10, "the documentation's Markdown pages are missing"
    assert len(PYTHON_BLOCKS) >= 20
    assert any(name == "README.md" for name, *_ in PYTHON_BLOCKS), "the README shows no example"
    for name, title, line, code in PYTHON_BLOCKS:
        assert "print(" in code, f"{name} block at line {line} ({title}) prints nothing to check"


@pytest.mark.parametrize("name, title, line, code", PYTHON_BLOCKS,
                         ids=[f"{Path(name).stem}-line{line}-{re.sub(r'[^a-z]+', '-', title.lower()).strip('-')}"
                              for name, title, line, _ in PYTHON_BLOCKS])
def test_python_block(name, title, line, code, readme_folder):
    run_block(code, f"{name} block at line {line} ({title})")


def test_results_block_and_its_commands(readme_folder, capsys):
    """The results block writes run.h5; the flexmb commands shown after it work on that file."""
    from flexmb.cli import main

    writers = [block for block in PYTHON_BLOCKS if 'save_to="run.h5"' in block[3]]
    assert len(writers) == 1, "one block writes run.h5"
    name, title, line, code = writers[0]
    run_block(code, f"{name} block at line {line} ({title})")
    fences = list(FENCE.finditer((REPO / name).read_text(encoding="utf-8")))
    following = [fences[i + 1] for i, m in enumerate(fences[:-1]) if m.group(2) == code]
    commands = following[0] if following else None
    assert commands and commands.group(1) == "bash", "a ```bash block of flexmb commands follows the results block"
    lines = [text.split("#")[0].strip() for text in commands.group(2).splitlines()]
    lines = [text for text in lines if text]
    assert lines and all(text.startswith("flexmb ") for text in lines), lines
    for text in lines:
        assert main(shlex.split(text)[1:]) == 0, f"{text}: {capsys.readouterr().err}"
        for word in shlex.split(text):
            if Path(word).suffix in (".png", ".gif", ".xdmf"):
                assert Path(word).stat().st_size > 1000, f"{text}: {word} is (nearly) empty"
    assert (readme_folder / "run.xdmf.h5").is_file() and (readme_folder / "vtu" / "run.pvd").is_file()


# ------------------------------------------------------------------ the checker itself
@pytest.mark.parametrize("printed, comment", [
    ("51", "51  (t = 0, 0.01, ..., 0.5 s)"), ("-1.2251", "-1.225 m"), ("(51, 3)", "(51, 3)"),
    ("energy error 1.1e-11", "energy error < 1e-10  (Newton's tolerance)"), ("51 finished", "51 finished: done"),
    ("['columns', 'beams']", "['columns', 'beams']"), ("3.5e+04", "> 100")])
def test_comment_check_accepts(printed, comment):
    assert mismatch(printed, comment) is None


@pytest.mark.parametrize("printed, comment", [
    ("51", "50"), ("-1.2256", "-1.225"), ("(51, 3)", "(51, 4)"), ("energy 1e-9", "energy < 1e-10"),
    ("51 failed", "51 finished"), ("32.3", "about 32.3"), ("1.0 2.0", "1.0"), ("3.5e+04", "< 100")])
def test_comment_check_refuses(printed, comment):
    assert mismatch(printed, comment) is not None
