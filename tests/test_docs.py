"""The documentation builds with no warning: ``sphinx-build -W`` on a copy of
``doc/`` (so the build leaves the source tree as it was), which runs every
gallery example and validates every public docstring with numpydoc."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

for module in ("sphinx", "numpydoc", "sphinx_gallery", "pydata_sphinx_theme", "myst_parser",
               "matplotlib"):
    pytest.importorskip(module, reason=f"{module} is not installed (pip install -e '.[doc]')")

DOC = Path(__file__).resolve().parents[1] / "doc"
BUILD_OUTPUTS = ("_build", "generated", "auto_examples", "sg_execution_times.rst")


def test_documentation_builds_without_warnings(tmp_path):
    source = tmp_path / "doc"
    shutil.copytree(DOC, source, ignore=shutil.ignore_patterns(*BUILD_OUTPUTS))
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(source), str(tmp_path / "html")],
        capture_output=True, text=True, timeout=900,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert result.returncode == 0, (
        f"sphinx-build -W failed:\n{result.stderr[-20000:]}\n{result.stdout[-5000:]}")
    assert (tmp_path / "html" / "index.html").exists()
    assert (tmp_path / "html" / "auto_examples" / "index.html").exists()
