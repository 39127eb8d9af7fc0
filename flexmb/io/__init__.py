"""Files: result files (HDF5), meshes in and results out through meshio, structured shell meshes.

The submodules import h5py and meshio when they are used, never on ``import flexmb``.
"""
