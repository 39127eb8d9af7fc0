"""Files: result files (HDF5), meshes in and results out through meshio.

The submodules import h5py and meshio when they are used, never on ``import flexmb``.
"""
