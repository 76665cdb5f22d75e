# Makes the project root importable in tests (pytest inserts this folder
# into sys.path), so `tests/` can share its oracle implementations.

import importlib.util

# skbudget.onnx needs the optional extra (pip install skbudget[onnx]): its
# doctests are collected only where skl2onnx and onnxruntime are installed
collect_ignore = [] if all(importlib.util.find_spec(name) for name in ("skl2onnx", "onnxruntime")) \
    else ["skbudget/onnx.py"]
# skbudget.river needs the optional extra (pip install skbudget[river])
if importlib.util.find_spec("river") is None:
    collect_ignore.append("skbudget/river.py")
