"""Claude Code's session files, for a claude-code run that continues an earlier attempt's session instead of
starting afresh (docs/agents.md, "Resume instead of restart").

Claude Code keeps each session as `<config>/projects/<its workdir's folder>/<session id>.jsonl`, `<config>`
being CLAUDE_CONFIG_DIR or `~/.claude`, and `claude --resume ID` finds it in any of those folders. A run is
given its session id (`--session-id`, `application.runners.session_of`), so the next attempt knows which
session to look for even when the worker died without recording anything. It is reachable when its file is
under the run's own config, or in `BLACKBOARD_CLAUDE_SESSIONS=DIR`, a folder the hosts share: a run copies
its session's file there as it grows (at most once a second, and at its end), and a run on another host
copies it from there into its own config (`projects/blackboard-sessions/`) before resuming it.

A resumed session's `total_cost_usd` counts the earlier attempts' cost too (Claude Code carries it over from
the session's last `cost-state` line): `Resume.spent_usd` is that part, which this attempt's cost leaves out.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from blackboard.application.runners import EarlierRun

SHARED = "BLACKBOARD_CLAUDE_SESSIONS"  # a folder the hosts share, where the runs' session files are kept
BROUGHT = "blackboard-sessions"  # the folder of the config's projects a session brought from SHARED goes to
KEEP_EVERY = 1.0  # seconds between copies of a growing session file to SHARED
COST_STATE = '"cost-state"'  # the type of the line where Claude Code keeps a session's running cost


@dataclass(frozen=True, slots=True)
class Resume:
    """An earlier attempt's session a run continues, and what Claude Code counts it to have cost so far."""

    session_id: str
    spent_usd: float = 0.0


class SessionFiles:
    """Where Claude Code keeps the sessions of runs in `env` (the run's environment), and the shared folder."""

    def __init__(self, env: Mapping[str, str]) -> None:
        config = env.get("CLAUDE_CONFIG_DIR") or str(Path(env.get("HOME") or Path.home()) / ".claude")
        self.projects = Path(config) / "projects"
        self.shared = Path(env[SHARED]) if env.get(SHARED) else None
        self._kept_at = 0.0
        self._kept_size = -1
        self._kept: Path | None = None  # the run's session file, once found: not looked for every second

    def resume(self, earlier: Sequence[EarlierRun]) -> Resume | None:
        """The latest earlier run whose session is reachable, brought under this config if it was shared
        only; None when none is (the run starts afresh)."""
        for run in earlier:
            found = self.local(run.session_id) or self._bring(run.session_id)
            if found is not None:
                return Resume(run.session_id, spent_in(found))
        return None

    def local(self, session_id: str) -> Path | None:
        """The session's file under this config, if there is one."""
        if not self.projects.is_dir():
            return None
        return next(iter(sorted(self.projects.glob(f"*/{session_id}.jsonl"))), None)

    def keep(self, session_id: str | None, now: bool = False) -> None:
        """The session's file copied to the shared folder, when there is one and the file grew: at most once
        each KEEP_EVERY seconds unless `now` (the run's end). Never raises: a copy that fails is tried again."""
        if self.shared is None or session_id is None:
            return
        if not now and time.monotonic() - self._kept_at < KEEP_EVERY:
            return
        self._kept_at = time.monotonic()
        try:
            found = self._kept = self._kept or self.local(session_id)
            if found is None or (size := found.stat().st_size) == self._kept_size:
                return
            self.shared.mkdir(parents=True, exist_ok=True)
            _copy(found, self.shared / found.name)
            self._kept_size = size
        except OSError:
            pass

    def _bring(self, session_id: str) -> Path | None:
        if self.shared is None or not (shared := self.shared / f"{session_id}.jsonl").is_file():
            return None
        try:
            (self.projects / BROUGHT).mkdir(parents=True, exist_ok=True)
            return _copy(shared, self.projects / BROUGHT / shared.name)
        except OSError:
            return None


def spent_in(session: Path) -> float:
    """What Claude Code counts a session to have cost so far: its last `cost-state` line's totalCostUSD (0
    without one: a session whose process was killed before it said)."""
    spent = 0.0
    try:
        with session.open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if COST_STATE not in line:
                    continue
                try:
                    said = json.loads(line).get("totalCostUSD")
                except (ValueError, AttributeError):
                    continue
                if isinstance(said, int | float) and not isinstance(said, bool) and said >= 0:
                    spent = float(said)
    except OSError:
        return 0.0
    return spent


def _copy(source: Path, target: Path) -> Path:
    """`source` to `target` whole: written beside it, then renamed, so a reader never sees half a copy."""
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    shutil.copyfile(source, partial)
    os.replace(partial, target)
    return target
