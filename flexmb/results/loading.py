"""The kinds of result a file can hold, and :func:`load_result`."""
from __future__ import annotations

from pathlib import Path

from flexmb.checks import keywords_listed
from flexmb.results.base import Result
from flexmb.results.modes import ModeShapes
from flexmb.results.static_path import StaticPath
from flexmb.results.time_history import TimeHistory


RESULT_KINDS: dict[str, type[Result]] = {cls.kind: cls for cls in (TimeHistory, StaticPath, ModeShapes)}


@keywords_listed
def load_result(path: str | Path) -> Result:
    """Read a result file written by flexmb (see :mod:`flexmb.io.result_file`)."""
    from flexmb.io.result_file import read_result

    return read_result(path, RESULT_KINDS)
