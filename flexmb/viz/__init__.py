"""Pictures: matplotlib plots of histories (:mod:`~flexmb.viz.plots`) and off-screen pyvista
scenes, mode shapes and animations (:mod:`~flexmb.viz.scene`, geometry in
:mod:`~flexmb.viz.geometry`). Imported lazily: ``import flexmb`` loads neither matplotlib nor pyvista.
"""
