"""Results of an analysis (a package since issue 30: :mod:`~flexmb.results.base`,
:mod:`~flexmb.results.time_history`, :mod:`~flexmb.results.static_path`, :mod:`~flexmb.results.modes`;
the layout records in :mod:`flexmb.io.records`): histories over output steps, with what post-processing needs of the model.

Every analysis returns a :class:`Result`: :class:`TimeHistory` (dynamics, steps in time),
:class:`StaticPath` (statics, steps in load factor) or :class:`ModeShapes` (buckling or
natural modes, one "step" per mode). A result holds, per output step, the DOF vector ``u``
(n_dof,), the support reactions, and per element group the element outputs of
:meth:`~flexmb.elements.base.ElementGroup.element_outputs` (section forces and strains), plus
the series of its kind (velocities and energies in dynamics). Each series reads as a numpy
array with one row per output step (``history.u`` (n_steps, n_dof), ``history.kinetic``
(n_steps,)), stacked on first use after a step is recorded and read-only (copy it to change
it); :meth:`Result.arrays` gives them all. The :class:`ModelLayout` (nodes, DOF
numbering, element connectivity, section shapes, the FE meshes of modal bodies as
:class:`ModalMesh`) travels with the result, so a saved result can be plotted, rendered and
exported without the script that made it.

A result attached to a file (``integrate(..., save_to=...)``, :meth:`Result.attach_file`) writes
every step as it is recorded (HDF5, see :mod:`flexmb.io.result_file`); :func:`load_result` reads
it back, also while another process is still writing it. An existing file is replaced only with
``overwrite=True``; a file that cannot be written (disk full, no permission) ends the run with a
:class:`ResultFileError` and keeps every step written before.

Quantity names used by :meth:`Result.series`, the ``flexmb plot`` command and plots:

* ``uy@12``: DOF ``uy`` of node 12 (any DOF name: ``ux uy uz rx ry rz``);
  ``vel:uy@12`` its velocity, ``reac:uy@0`` the support reaction on it;
* ``kinetic``, ``strain``, ``work``, ``potential`` = strain - work (the potential energy when
  loads are conservative, gravity included), ``total`` = kinetic + potential (energies, J),
  ``Lz`` / ``Lx`` ... (angular
  momentum), ``newton_iterations``, ``parameter`` (t or the load factor);
* ``N@beams:4``: element output ``N`` of element 4 of the group named ``beams`` (or group
  index ``N@0:4``); component k of a vector output as ``membrane_forces[k]@plate:4``;
* ``tip[y]`` or ``tip[1]``: a component of the sensor named ``tip`` (``tip`` alone for a scalar
  sensor; plots take ``tip`` for all its components), see :mod:`flexmb.sensors`.
"""
from flexmb.io.guarded_file import ResultFileError
from flexmb.io.records import Event, GroupLayout, ModalMesh, ModelLayout
from flexmb.results.base import Result
from flexmb.results.loading import RESULT_KINDS, load_result
from flexmb.results.modes import ModeShapes
from flexmb.results.static_path import PathPoint, StaticPath
from flexmb.results.time_history import TimeHistory

__all__ = ["RESULT_KINDS", "Event", "GroupLayout", "ModalMesh", "ModeShapes", "ModelLayout", "PathPoint",
           "Result", "ResultFileError", "StaticPath", "TimeHistory", "load_result"]
