"""Design studies: parameter sweeps and Monte Carlo runs of a pure function, serially or on Dask.

    from flexmb.studies import Study, grid, latin_hypercube, random_samples, variants, load_study

A :class:`Study` pairs ``run(params) -> {quantity: value}`` with a parameter space and computes
the variants serially or as tasks on a ``dask.distributed`` cluster (a local one by default, or a
running scheduler), writing each to ``DIR/study.h5`` as it completes so that a stopped study
resumes where it stopped. ``flexmb study SCRIPT.py`` runs the ``STUDY`` a script defines and
writes a summary and plots. Dask and pandas are imported only when a study runs or is read.
"""
from flexmb.studies.result import StudyResult, load_study
from flexmb.studies.script import load_study_script
from flexmb.studies.space import (
           Space,
           grid,
           latin_hypercube,
           random_samples,
           variant_id,
           variants,
)
from flexmb.studies.store import StudyFileError
from flexmb.studies.study import Study

__all__ = ["Space", "Study", "StudyFileError", "StudyResult", "grid", "latin_hypercube", "load_study", "load_study_script",
           "random_samples", "variant_id", "variants"]
