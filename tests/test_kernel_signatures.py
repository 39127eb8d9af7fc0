"""Each compiled kernel a run calls is compiled once per model structure, not once per caller.

numba compiles a kernel for every new tuple of argument types, and on a fresh install a second
specialisation of a large kernel costs as much as the first (tens of seconds for the spatial
one-call step): a read-only array (a kept time function value or dead-load vector) is another type
than a writable one, an F-ordered array another than a C-ordered one, a literal ``True`` argument
in a compiled caller (``Literal[bool](True)``) another than the ``bool`` a Python caller passes.
Here a small 3D model (a modal body on a driven revolute joint, a rigid tip body on a spherical
joint) and two planar beam models (cubic and lumped mass: the same kernels, another director
layout) run through their compiled paths and the Python calls of the same kernels, in a fresh
process (the test session's other tests call kernels with arguments of their own), and every
flexmb kernel must then hold exactly one signature (a few hold two for a structural reason:
:data:`GENUINE`). A kernel loaded from numba's cache does not type the kernels it calls, so the
process then runs numba's type inference (its pipeline up to that pass) on every signature: the
calls' argument types, a cold cache's compilations, at a warm cache's cost (about 10 s).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import flexmb as fm

TESTS = Path(__file__).resolve().parent

#: what the fresh process runs; it prints {kernel: [signatures]} of every flexmb kernel it called
SCRIPT = r"""
import json
import sys

import numpy as np

import flexmb as fm
from flexmb.integrators.schemes import MidPoint
from models import cantilever_body_3d, modal_blade_on_hub

DT = 0.01

# 3D: the one-call spatial step (compiled step loop and Newton solve), its Python residual call with
# and without the Jacobian, the joints' terms, values and reactions (timed, read-only values)
asm = modal_blade_on_hub(cantilever_body_3d(3, 2), lambda t: 3.0 * t**2, tip_at=[1.2, 0.0, 0.0])
h = fm.integrate(asm, DT, 3 * DT, progress=False)
scheme = MidPoint(asm)
s = scheme.initial_state(h.t[-1], h.u[-1], h.v[-1])
s.lam = np.array(h.multipliers[-1])
u1 = scheme.predict(s, DT)
for tangent in (True, False):
    scheme._joint_residual(s, DT, u1, s.lam, 1.0, 1.0, tangent)
scheme.constraint_terms(s, DT, u1, s.lam)
asm.constraints.values(u1, s.t + DT)

# planar: a spun-up cantilever of cubic and of lumped mass, the compiled step loop and the
# scheme's residual (the Python call of the same kernel)
for mass in ("cubic", "lumped"):
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 3.0, 4), np.zeros(4)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=2.8e7, EI=1.4e4, rho_A=1.2, rho_I=2e-3, mass=mass)
    m.fix(int(nodes[0]), ["ux", "uy"])
    m.prescribe(int(nodes[0]), "rz", lambda t: 0.4 * t**2)
    m.set_gravity([0.0, -9.81])
    planar = fm.Assembly(m)
    h = fm.integrate(planar, DT, 3 * DT, progress=False)
    scheme = MidPoint(planar)
    s = scheme.initial_state(h.t[-1], h.u[-1], h.v[-1])
    s.stretch = h.stretch[-1].copy() if np.size(h.stretch[-1]) else None
    for tangent in (True, False):
        scheme.residual(s, DT, scheme.predict(s, DT), tangent)

from numba.core import compiler
from numba.core.registry import CPUDispatcher
from numba.core.target_extension import target_override
from numba.core.typed_passes import NopythonTypeInference


class TypeInferenceOnly(compiler.CompilerBase):
    # numba's nopython pipeline up to its type inference, which compiles (or loads from the cache)
    # the kernels a kernel calls, for the argument types of the calls

    def define_pipelines(self):
        pm = compiler.DefaultPassBuilder.define_nopython_pipeline(self.state)
        del pm.passes[[p for p, _ in pm.passes].index(NopythonTypeInference) + 1:]
        pm.finalize()
        return [pm]


def dispatchers():
    return [obj for name, module in list(sys.modules.items()) if name.startswith("flexmb.compiled.")
            for obj in vars(module).values() if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == name]


# a kernel loaded from the cache does not type the kernels it calls: type every signature's calls
# (a new callee signature is typed in its turn), so a warm cache shows what a cold one compiles
flags = compiler.Flags()
flags.no_cpython_wrapper = flags.nrt = True
typed = set()
while todo := [(d, sig) for d in dispatchers() for sig in d.signatures if (d, sig) not in typed]:
    for d, sig in todo:
        typed.add((d, sig))
        d.typingctx.refresh()
        d.targetctx.refresh()
        try:
            with target_override("cpu"):
                compiler.compile_extra(d.typingctx, d.targetctx, d.py_func, sig, None, flags, {},
                                       pipeline_class=TypeInferenceOnly)
        except AttributeError as exc:          # the truncated pipeline leaves no compile result
            if str(exc) != "cr":
                raise

kernels = {f"{d.py_func.__module__}.{d.py_func.__name__}": [str(sig) for sig in d.signatures]
           for d in dispatchers() if d.signatures}
print(json.dumps(kernels))
"""


#: kernels whose callers differ in the model's structure, not in how they pass the same thing:
#: kernel -> why it holds two signatures after SCRIPT
GENUINE = {
    "corotational.chord": "DOFs per node: a literal 3 in Beam2D's kernels, 6 in Beam3D's",
    "beam3d._add_chord_pairs": "its two call sites' literal block offsets (translations, rotations)",
    "dense_lu.lu_solve": "one right-hand side (n,) or several (n, k)",
    "floating_frame3d._add_hat": "a contiguous vector or a strided column of a matrix in the callers",
}


def _kernel_signatures() -> dict[str, list[str]]:
    """{kernel: its signatures} after SCRIPT, run in a fresh process on this flexmb and numba cache."""
    package_root = str(Path(fm.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([package_root, str(TESTS), env.get("PYTHONPATH", "")])
    env["FLEXMB_AOT"] = "0"          # numba's kernels, not an ahead-of-time module's fixed types (flexmb.aot)
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=TESTS,
                          timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_kernel_of_a_3d_and_a_planar_run_has_one_signature():
    kernels = _kernel_signatures()
    # the run went through the one-call paths it is meant to guard
    # (_body_forces only by a compiled caller: a warm cache's type inference found it)
    for kernel in ("spatial_group.spatial_mid_point_newton", "spatial_group.spatial_joint_residual",
                   "spatial_group._body_forces",
                   "spatial_step_loop.spatial_mid_point_steps", "constraints.evaluate",
                   "mid_point_group.beam2d_mid_point_residual", "step_loop.mid_point_steps"):
        assert f"flexmb.compiled.{kernel}" in kernels, f"{kernel} was not called"
    several = {name: signatures for name, signatures in kernels.items()
               if len(signatures) > 1 and not (name.removeprefix("flexmb.compiled.") in GENUINE
                                               and len(signatures) == 2)}
    assert not several, (f"{len(several)} of {len(kernels)} kernels compiled more than once (differing argument "
                         "types of their callers): " + json.dumps(several, indent=1))
