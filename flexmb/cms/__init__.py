"""Component mode synthesis (Hutton & Smith 1993): components, reductions, synthesis.

* :mod:`flexmb.cms.component` -- :class:`Component` (a free sub-model with its interface DOFs)
  and :func:`components_from_groups`, :func:`components_by_region` (cut by :class:`Box`,
  :class:`HalfSpace`, :class:`NodeSet`, :class:`ElementSet` or groups);
* :mod:`flexmb.cms.imported` -- components from external K and M (Matrix Market files with a DOF map,
  Abaqus matrix output): :func:`read_component`, :func:`write_component`,
  :func:`imported_component`, :func:`imported_modal_body`; Nastran OP4 files and DMIG cards with
  :func:`read_nastran_component` (from :mod:`flexmb.io.nastran`);
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
  floating frame (inertia invariants, unit-load geometric stiffness, stiffened spin frequencies),
  reduced from the body's FE model;
* :mod:`flexmb.cms.stress_recovery` -- :func:`modal_stresses` (:class:`ModalStresses`: the stresses of each
  column of a basis) and their recovery along q (:class:`RecoveredStresses`, :func:`recover_modal_body`,
  :func:`steady_spin_scalars`);
* :class:`ModalBody`, the modal body as an element group of the assembly
  (:meth:`flexmb.Model.add_modal_body`): energy-consistent inertia with geometric stiffening. An
  element group like the others, it lives in :mod:`flexmb.elements.floating_frame` (with
  :mod:`~flexmb.elements.floating_frame3d`, :mod:`~flexmb.elements.velocity_fields` and the data it
  reads, :mod:`~flexmb.elements.modal_body_data`), below the model; ``flexmb.cms.floating_frame``,
  ``floating_frame3d`` and ``velocity_fields`` import it from there for older scripts.

The names below are imported on first use (:mod:`flexmb.lazy_exports`): a model with a modal
body loads its floating frame, not the synthesis and modification modules.
"""
from flexmb.lazy_exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "flexmb.cms.component": ("Box", "Component", "ElementSet", "HalfSpace", "NodeSet", "components_by_region",
                             "components_from_groups"),
    "flexmb.cms.imported": ("MatrixGroup", "imported_component", "imported_modal_body", "read_abaqus_component",
                            "read_component", "write_component"),
    "flexmb.io.nastran": ("read_nastran_component",),
    "flexmb.cms.reduction": ("ReducedBasis", "craig_bampton", "free_interface"),
    "flexmb.cms.synthesis": ("CmsModel", "CmsModes", "synthesize"),
    "flexmb.cms.design": ("DesignVariable", "density_scale", "point_mass", "section_property", "spring",
                          "stiffness_scale"),
    "flexmb.cms.sensitivity": ("Sensitivity", "eigen_sensitivity"),
    "flexmb.cms.modification": ("InverseModification", "ModifiedModes", "forward_modification",
                                "inverse_modification", "reanalyse"),
    "flexmb.cms.study": ("ModificationStudy", "run_study", "write_study"),
    "flexmb.cms.modal_body": ("ModalBodyData",),
    "flexmb.cms.stress_recovery": ("ModalStresses", "RecoveredStresses", "modal_stresses", "recover_modal_body",
                                   "steady_spin_scalars"),
    "flexmb.elements.floating_frame": ("ModalBody",),
})
