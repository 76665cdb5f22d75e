"""Build the compiled engine: every ``skbudget/*.pyx`` is one extension.

The Cython directives that trade safety for speed (``boundscheck``,
``wraparound``, ``initializedcheck``) are set here, not in the ``.pyx``
headers (a header's directives would override these): off in the normal
build.  ``SKBUDGET_SANITIZE=1`` builds the sanitizer variant instead (see
doc/contributing.rst): every index checked by Cython, and the C compiled
with AddressSanitizer and UndefinedBehaviorSanitizer (``-O1 -g``, aborting
on the first report) and with every uninitialised local variable filled
with a pattern (``-ftrivial-auto-var-init=pattern``), so that a read of one
indexes far out of bounds instead of wherever the stack left it.  Python
must then load the ASan runtime first:
``LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0``.
"""
import os
import re
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

SANITIZE = os.environ.get("SKBUDGET_SANITIZE", "0") not in ("", "0")

if SANITIZE:
    SANITIZERS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    COMPILE_ARGS = ["-O1", "-g", "-fno-omit-frame-pointer", "-ftrivial-auto-var-init=pattern",
                    *SANITIZERS]
    LINK_ARGS = SANITIZERS
    DIRECTIVES = dict(boundscheck=True, wraparound=False, initializedcheck=True)
else:
    COMPILE_ARGS, LINK_ARGS = ["-O3"], []
    DIRECTIVES = dict(boundscheck=False, wraparound=False, initializedcheck=True)

SOURCES = sorted(Path("skbudget").glob("*.pyx"))
# a header that sets these would silently override the sanitizer build's checks
_UNSAFE_HEADER = re.compile(r"^#\s*cython:.*\b(boundscheck|wraparound|initializedcheck)\b")
for path in SOURCES:
    with open(path, encoding="utf-8") as source:
        for line in source:
            if not line.startswith("#"):
                break
            if _UNSAFE_HEADER.match(line):
                raise SystemExit(f"{path}: set boundscheck / wraparound / initializedcheck in "
                                 f"setup.py, not in the file's header")

# which variant the generated .c files are: switching variants regenerates them all
_STAMP = Path("build") / "skbudget-cython-variant"
VARIANT = "sanitize" if SANITIZE else "release"
_previous = _STAMP.read_text().strip() if _STAMP.exists() else None
_STAMP.parent.mkdir(exist_ok=True)
_STAMP.write_text(VARIANT)

extensions = [
    Extension(f"skbudget.{path.stem}", [str(path)], extra_compile_args=COMPILE_ARGS,
              extra_link_args=LINK_ARGS,
              include_dirs=["skbudget", numpy.get_include()],   # _vector_loops.h; NumPy's ufunc loops
              define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")])
    for path in SOURCES
]

setup(ext_modules=cythonize(extensions, language_level=3, compiler_directives=DIRECTIVES,
                            force=_previous not in (None, VARIANT)))
