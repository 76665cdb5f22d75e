"""Sphinx configuration of the skbudget documentation.

Build (from the repository root, after ``pip install -e ".[doc]"``)::

    sphinx-build -W -b html doc doc/_build/html

``-W`` turns every warning into an error: a broken reference, a public
docstring that fails numpydoc validation, or a gallery example that raises.
"""

import os
import re
import sys
import warnings

import skbudget

# the user guide's capability tables, generated from the estimators'
# declarations (doc/sphinxext/capability_tables.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "sphinxext"))

project = "skbudget"
author = "the skbudget developers"
copyright = "the skbudget developers, BSD-3-Clause"
release = skbudget.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "capability_tables",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_templates", "examples", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.json",
                    "auto_examples/*.md5", "sg_execution_times.rst"]
templates_path = ["_templates"]
default_role = "literal"
nitpicky = False

# -- API reference ---------------------------------------------------------
autosummary_generate = True
numpydoc_show_class_members = False   # the class template lists the methods
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
# every public docstring of skbudget is validated; the build fails on any
# failure.  Not required on every method and function: an extended summary
# (ES01), a See Also section (SA01) and an Examples section (EX01).  Not
# checked, as in scikit-learn: named return values (RT02, ``self : object``)
# and one-line summaries (SS06: a summary naming a paper's rule may take two).
numpydoc_validation_checks = {"all", "ES01", "SA01", "EX01", "RT02", "SS06"}


def skip_member(app, what, name, obj, skip, options):
    """Leave out of the class pages the metadata-routing methods scikit-learn
    adds to every estimator (documented by scikit-learn), the methods river's
    base classes add to the river adapter (documented by river), the methods
    scikit-learn's mixins add to a transformer (documented by scikit-learn)
    and the fitted attributes written as properties (each class's
    Attributes section documents them)."""
    if name == "get_metadata_routing" or re.fullmatch(r"set_\w+_request", name):
        return True
    if name.endswith("_") and not name.startswith("_"):
        return True
    if (getattr(obj, "__module__", None) or "").startswith("river."):   # river's bases
        return True
    if (getattr(obj, "__module__", None) or "").startswith("sklearn."):
        return True         # scikit-learn's mixins' (LandmarkNystroem's fit_transform)
    return skip


def setup(app):
    app.connect("autodoc-skip-member", skip_member)

# -- gallery -----------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "doc_module": ("skbudget",),
    "backreferences_dir": None,
    # a failing example fails the build
    "only_warn_on_example_error": False,
    "abort_on_example_error": True,
    "show_memory": False,
    "min_reported_time": 1,
    "write_computation_times": False,
}
# matplotlib without a display, and no warning about it
os.environ.setdefault("MPLBACKEND", "Agg")
warnings.filterwarnings("ignore", category=UserWarning,
                        message="Matplotlib is currently using agg")

# -- cross-references --------------------------------------------------------
intersphinx_mapping = {}   # no network at build time: links are written out
myst_heading_anchors = 3
suppress_warnings = []

# -- HTML --------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skbudget {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "footer_start": ["copyright"],
    "footer_end": [],
    # the wide tables need the page's full width
    "secondary_sidebar_items": {"user_guide/choosing": [], "**": ["page-toc"]},
}
html_static_path = []
html_show_sourcelink = False
