"""Build pevpm's compiled engine core (pevpm.vm.fastcore) with Cython.

Everything else lives in pyproject.toml.  The extension is optional: if it
cannot be compiled, pevpm installs without it and runs the pure-Python
engine (``pevpm predict`` says so in a ``note:`` line).
"""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(ext_modules=cythonize(
    [Extension("pevpm.vm.fastcore", ["src/pevpm/vm/fastcore.pyx"], optional=True)],
    compiler_directives={"language_level": 3}, quiet=True))
