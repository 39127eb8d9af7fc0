"""Study scripts: a Python file that defines ``STUDY = Study(...)`` at module level.

The script is loaded as a module of its own (not ``__main__``) and registered with cloudpickle
to be pickled by value, so that its ``run`` function, and the helpers and constants it uses,
reach Dask workers that cannot import the script.
"""
from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

from flexmb.checks import ModelError
from flexmb.studies.study import Study

#: the name a study script gives its study
STUDY_NAME = "STUDY"


def load_study_script(path: str | Path) -> Study:
    """The ``STUDY`` defined by the script at ``path`` (errors name the file)."""
    import cloudpickle

    path = Path(path)
    if not path.is_file():
        raise ModelError(f"study script {path} does not exist" if not path.exists() else
                         f"study script {path} is not a file")
    # a module name of its own per file, so two scripts with the same stem do not collide
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]
    name = f"flexmb_study_{path.stem if path.stem.isidentifier() else 'script'}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ModelError(f"study script {path} cannot be loaded as Python (does it end in .py?)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module                 # cloudpickle's by-value registry needs it there
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    study = getattr(module, STUDY_NAME, None)
    if study is None:
        raise ModelError(f"study script {path} defines no {STUDY_NAME} (write STUDY = Study(...) at module level)")
    if not isinstance(study, Study):
        raise ModelError(f"study script {path}: {STUDY_NAME} is a {type(study).__name__}, not a flexmb.studies.Study")
    cloudpickle.register_pickle_by_value(module)
    return study
