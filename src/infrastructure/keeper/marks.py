"""What a run's processes carry in their environment: its agent, signal, claim token and board.

The claim token is that claim's own (a fresh secret for every claim), so a run's processes hold the proof of
their own claim and of no other, not even a sibling run's of the same worker; neither the worker nor its keeper
ever logs it.

Every run's root process (a command handler, Claude Code) gets these, and whatever it starts inherits them: the
CLI, the MCP server and the Python API a run calls read them to know it is that agent acting on that claim, and
the keeper finds a run's processes by them, also one that left the run's process group and its parent.
"""

from __future__ import annotations

AGENT = "BLACKBOARD_AGENT"
SIGNAL = "BLACKBOARD_SIGNAL_ID"
TOKEN = "BLACKBOARD_CLAIM_TOKEN"
BOARD = "BLACKBOARD_BOARD"


def identity(agent: str, signal_id: str, token: str, board: str) -> dict[str, str]:
    """The variables a run's root process gets: who runs, on which claim of which board."""
    return {AGENT: agent, SIGNAL: signal_id, TOKEN: token, BOARD: board}


def marks(signal_id: str, token: str) -> dict[str, str]:
    """What only this run's processes carry: its claim's token (its own, no other run's) and its signal."""
    return {TOKEN: token, SIGNAL: signal_id}
