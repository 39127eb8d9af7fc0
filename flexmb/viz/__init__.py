"""Pictures: matplotlib plots of histories and Campbell diagrams (:mod:`~flexmb.viz.plots`) and
off-screen pyvista scenes, mode shapes and animations, or an interactive window where a display
exists (:mod:`~flexmb.viz.scene`, geometry in :mod:`~flexmb.viz.geometry`). Imported lazily:
``import flexmb`` loads neither matplotlib nor pyvista.
"""
