"""`make demo` on a fresh directory: real worker processes, a visible lost claim, a dependency released."""

import subprocess
import sys


def test_the_demo_tells_its_story_and_its_rebuild_matches(tmp_path):
    done = subprocess.run([sys.executable, "-m", "infrastructure.demo"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert "Traceback" not in done.stderr
    assert " went to " in done.stdout  # a lost claim, visibly (the better fit wins unless the machine stalls)
    assert "unblocks (exit 0)" in done.stdout
    assert "The review waited for the research" in done.stdout
    assert done.stdout.count("AgentSignalCompleted") == 3
    assert "identical to the live one" in done.stdout
    assert len(list((tmp_path / ".blackboard" / "artifacts").glob("*.md"))) == 3
