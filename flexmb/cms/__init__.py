"""Component mode synthesis (Hutton & Smith 1993): components, reductions, synthesis.

* :mod:`flexmb.cms.component` -- :class:`Component` (a free sub-model with its interface DOFs)
  and :func:`components_from_groups`;
* :mod:`flexmb.cms.reduction` -- :func:`free_interface` (free-interface modes with residual
  flexibility) and :func:`craig_bampton`, each returning a :class:`ReducedBasis`;
* :mod:`flexmb.cms.synthesis` -- :func:`synthesize` giving a :class:`CmsModel` (T, S, reduced
  K and M, modes and their recovery on the parent model).
* :mod:`flexmb.cms.design` -- design variables (:func:`stiffness_scale`, :func:`density_scale`,
  :func:`section_property`, :func:`point_mass`, :func:`spring`) with exact dK/dp, dM/dp;
* :mod:`flexmb.cms.sensitivity` -- :func:`eigen_sensitivity` (Fox-Kapoor, or CMS with T frozen,
  with per-component and normalised shares);
* :mod:`flexmb.cms.modification` -- :func:`forward_modification`, :func:`reanalyse` and
  :func:`inverse_modification`;
* :mod:`flexmb.cms.study` -- :func:`run_study` and :func:`write_study`, a modification study with
  tables, pictures, an HDF5 file and a report page;
* :mod:`flexmb.cms.modal_body` -- :class:`ModalBodyData`, the precomputed data of a modal body on a
  floating frame (inertia invariants, unit-load geometric stiffness, stiffened spin frequencies);
* :mod:`flexmb.cms.floating_frame` -- :class:`ModalBody`, the modal body as an element group of the
  assembly (:meth:`flexmb.Model.add_modal_body`): energy-consistent inertia with geometric stiffening;
* :mod:`flexmb.cms.velocity_fields` -- :class:`BodyVelocityFields`, the modal body's velocity fields
  and their Gram matrix (its kinetic energy, computed once per body).
"""
from flexmb.cms.component import Component, components_from_groups
from flexmb.cms.reduction import ReducedBasis, craig_bampton, free_interface
from flexmb.cms.synthesis import CmsModel, CmsModes, synthesize
from flexmb.cms.design import (DesignVariable, density_scale, point_mass, section_property, spring,
                               stiffness_scale)
from flexmb.cms.sensitivity import Sensitivity, eigen_sensitivity
from flexmb.cms.modification import (InverseModification, ModifiedModes, forward_modification,
                                     inverse_modification, reanalyse)
from flexmb.cms.study import ModificationStudy, run_study, write_study
from flexmb.cms.modal_body import ModalBodyData
from flexmb.cms.floating_frame import ModalBody

__all__ = ["CmsModel", "CmsModes", "Component", "DesignVariable", "InverseModification",
           "ModalBody", "ModalBodyData", "ModificationStudy", "ModifiedModes", "ReducedBasis", "Sensitivity",
           "components_from_groups", "craig_bampton", "density_scale", "eigen_sensitivity",
           "forward_modification", "free_interface", "inverse_modification", "point_mass",
           "reanalyse", "run_study", "section_property", "spring", "stiffness_scale", "synthesize",
           "write_study"]
