"""Pictures: matplotlib plots of histories and Campbell diagrams (:mod:`~flexmb.viz.plots`) and
off-screen pyvista scenes, mode shapes and animations, or an interactive window where a display
exists (:mod:`~flexmb.viz.scene`, geometry in :mod:`~flexmb.viz.geometry`), recovered stresses of
reduced components and modal bodies (:mod:`~flexmb.viz.stresses`). Imported lazily:
``import flexmb`` loads neither matplotlib nor pyvista.
"""
