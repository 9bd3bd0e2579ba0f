"""Build pevpm's compiled engine core (pevpm.vm.kernel.fastcore), incremental max-min
network (pevpm.vm.kernel.fastflows) and OTF2 reader (pevpm.trace.otf2.fastread) with Cython.

Everything else lives in pyproject.toml.  The extension is optional: if it
cannot be compiled, pevpm installs without it and runs the pure-Python
engine (``pevpm predict`` says so in a ``note:`` line).
"""

from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

# The core draws with numpy's own samplers (numpy/random/distributions.h),
# linked from the static library numpy ships for extensions like this one.
NPYRANDOM = Path(np.__file__).parent / "random" / "lib"

setup(ext_modules=cythonize(
    [Extension("pevpm.vm.kernel.fastcore", ["src/pevpm/vm/kernel/fastcore.pyx"], optional=True,
               include_dirs=[np.get_include()], library_dirs=[str(NPYRANDOM)],
               libraries=["npyrandom"]),
     Extension("pevpm.vm.kernel.fastflows", ["src/pevpm/vm/kernel/fastflows.pyx"], optional=True),
     Extension("pevpm.trace.replay.fastconvert", ["src/pevpm/trace/replay/fastconvert.pyx"],
               optional=True, include_dirs=[np.get_include()]),
     Extension("pevpm.trace.otf2.fastread", ["src/pevpm/trace/otf2/fastread.pyx"], optional=True,
               include_dirs=[np.get_include()])],
    compiler_directives={"language_level": 3}, quiet=True))
