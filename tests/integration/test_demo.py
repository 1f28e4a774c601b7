"""`make demo` on a fresh directory: real CLI processes, a visible lost claim, an unblocked reviewer."""

import subprocess
import sys


def test_the_demo_tells_its_story_and_its_rebuild_matches(tmp_path):
    done = subprocess.run([sys.executable, "-m", "infrastructure.demo"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert "Traceback" not in done.stderr
    assert "ps-researcher (0.95) won the claim" in done.stdout
    assert "ps-analyst (0.85) lost (exit 3)" in done.stdout and "CLAIMED by ps-researcher" in done.stdout
    assert "The waiting reviewer unblocks (exit 0)" in done.stdout
    assert done.stdout.count("AgentSignalCompleted") == 3
    assert "identical to the live one" in done.stdout
    assert len(list((tmp_path / ".blackboard" / "artifacts").glob("*.md"))) == 3
