"""Compiled kernels (numba, ``nopython``, ``cache=True``): the hot loops of flexmb.

Every kernel here loops over the elements (or nodes, joints, sparse entries) of a batch inside
one compiled function, so a Newton iteration makes a handful of calls instead of hundreds of
numpy calls. Each kernel has one specification: the numpy implementation next to the element or
assembly code that uses it (its name starts with ``reference_``), against which the tests check
the kernel to 1e-12 relative, and whose tangent they check against finite differences.

numba is imported only here, and these modules are imported on first use, so ``import flexmb``
stays light. The first call of a kernel after installation compiles it (the machine code is
cached next to the module, in ``__pycache__``); later processes load it from there.
"""
