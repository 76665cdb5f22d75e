"""The CI scripts of ``.ci/``."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_sanitizer_step_lets_a_report_reach_the_log():
    # pytest's output capture swallows an AddressSanitizer report when the
    # process aborts: the sanitizer step runs it with capture off
    script = (ROOT / ".ci" / "sanitize").read_text()
    command = script[script.index("python -m pytest"):]
    assert re.search(r"(?:^|\s)(?:-s|--capture=no)(?:\s|$)", command)
