"""Plots (matplotlib) and, later, pyvista scenes. Imported lazily: ``import flexmb`` stays light."""
