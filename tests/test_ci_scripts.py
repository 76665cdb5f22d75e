"""The CI scripts of ``.ci/``."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_sanitizer_step_lets_a_report_reach_the_log():
    # pytest's output capture swallows an AddressSanitizer report when the
    # process aborts: the sanitizer step runs it with capture off
    script = (ROOT / ".ci" / "sanitize").read_text()
    command = script[script.index("python -m pytest"):]
    assert re.search(r"(?:^|\s)(?:-s|--capture=no)(?:\s|$)", command)


def _sanitizer_exclusions(script):
    """The ``EXCLUDED`` array of ``.ci/sanitize``: (file, reason) pairs."""
    block = script[script.index("EXCLUDED=(\n"):]
    block = block[:block.index("\n)\n")]
    entries = [line.partition("#") for line in block.splitlines()[1:]]
    return [(path.strip(), reason.strip()) for path, _, reason in entries]


def test_sanitizer_step_runs_every_test_file_but_its_exclusions():
    # a new family's test file runs on the sanitizer build without an edit;
    # a file left out is named there with its reason
    script = (ROOT / ".ci" / "sanitize").read_text()
    exclusions = _sanitizer_exclusions(script)
    files = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "tests").glob("test_*.py"))
    for path, reason in exclusions:
        assert path in files, f".ci/sanitize excludes {path}, which does not exist"
        assert reason, f".ci/sanitize excludes {path} without a reason"
    selection_code = script[script.index("EXCLUDED=(\n"):script.index('echo "== oracle')]
    selected = subprocess.run(["bash", "-c", selection_code + '\nprintf "%s\\n" "${TESTS[@]}"'],
                              cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    excluded = {path for path, _ in exclusions}
    assert [s for s in selected if "::" not in s] == [f for f in files if f not in excluded]
    assert '"${TESTS[@]}"' in script[script.index("python -m pytest"):]
