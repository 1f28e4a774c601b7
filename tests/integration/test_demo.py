"""`make demo` runs its story on a fresh SQLite file and ends with a rebuild identical to the live model."""

import subprocess
import sys


def test_the_demo_tells_its_story_and_its_rebuild_matches(tmp_path):
    done = subprocess.run([sys.executable, "-m", "infrastructure.demo"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)

    assert done.returncode == 0, done.stderr
    assert "already" not in done.stderr and "Traceback" not in done.stderr
    assert "is CLAIMED by ps-researcher" in done.stdout
    assert done.stdout.count("AgentSignalCompleted") == 2
    assert "identical to the live one" in done.stdout
    assert (tmp_path / ".blackboard" / "demo.db").exists()
