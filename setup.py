"""Build the compiled engine: every ``skbudget/*.pyx`` is one extension."""
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = [
    Extension(f"skbudget.{path.stem}", [str(path)], extra_compile_args=["-O3"],
              include_dirs=["skbudget", numpy.get_include()],   # _vector_loops.h; NumPy's ufunc loops
              define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")])
    for path in sorted(Path("skbudget").glob("*.pyx"))
]

setup(ext_modules=cythonize(extensions, language_level=3))
