"""Build the compiled engine: every ``skbudget/*.pyx`` is one extension."""
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = [
    Extension(f"skbudget.{path.stem}", [str(path)], extra_compile_args=["-O3"])
    for path in sorted(Path("skbudget").glob("*.pyx"))
]

setup(ext_modules=cythonize(extensions, language_level=3))
