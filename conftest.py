# Makes the project root importable in tests (pytest inserts this folder
# into sys.path), so `tests/` can share its oracle implementations.
