"""Helpers shared by the benchmark scripts."""

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def write_json(path, payload):
    """Write ``payload`` as indented JSON (creating the folder) and say so."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        json.dump(payload, fh, indent=1)
    print(f"wrote {path}")
