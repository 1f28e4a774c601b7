"""The real Claude Code CLI the runner tests drive, and what they look for in /proc while it runs.

`tests.tools.claude_executable` finds it: the pinned version that `make tools` (run by `make test`)
provisions. A test that needs it and finds it missing fails, naming that command.
"""

from __future__ import annotations

from pathlib import Path

from tests.tools import claude_executable  # the one place that finds it (make tools provisions it)


def claude_env(api_url: str, home: Path) -> dict[str, str]:
    """What a worker needs to run Claude Code against the stand-in: no real credentials, no real home,
    no traffic but the model calls."""
    return {
        "BLACKBOARD_CLAUDE": claude_executable(),
        "ANTHROPIC_BASE_URL": api_url,
        "ANTHROPIC_API_KEY": "sk-ant-dummy",
        "HOME": str(home),
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def processes() -> dict[int, tuple[str, int, str]]:
    """pid -> (command line, process group, state) of every process there is."""
    found = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        found[int(entry.name)] = (cmdline, int(fields[2]), fields[0])
    return found


def live_in_group(pgid: int) -> list[int]:
    """The processes of a group that are still alive (a zombie waiting for its parent is not)."""
    return [pid for pid, (_, group, state) in processes().items() if group == pgid and state != "Z"]


def environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0") if "=" in item)


# The board's MCP tools a run's session gets (bound to its claim): all but claim, complete, fail and cancel, and
# search (on its run's board), which an agent's own server leaves out
BOUND_TOOLS = frozenset(
    {
        "blackboard_post_signal",
        "blackboard_show",
        "blackboard_signals",
        "blackboard_match",
        "blackboard_wait",
        "blackboard_write",
        "blackboard_read",
        "blackboard_list",
        "blackboard_search",
        "blackboard_resolve",
        "blackboard_topic",
        "blackboard_summary",
    }
)
# What a server started for a person or an agent (not bound to a claim) offers besides
SERVER_TOOLS = (BOUND_TOOLS - {"blackboard_search"}) | {
    "blackboard_claim",
    "blackboard_complete",
    "blackboard_fail",
    "blackboard_cancel",
    "blackboard_cancel_all",
}
