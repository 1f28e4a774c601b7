"""FrontmatterAgentRegistry: the agents declared by the Markdown files of one folder, re-read as they change."""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from blackboard.application.ports import AgentRegistry
from blackboard.domain.capabilities import DEFAULT_THRESHOLD, AgentProfile
from blackboard.infrastructure.agents.parsing import (
    AgentDefinition,
    AgentFileInvalid,
    AgentFileProblem,
    read_agent_file,
)
from blackboard.infrastructure.agents.text_index import TextIndex, agent_text

logger = logging.getLogger(__name__)

FileKey = tuple[int, int, int]  # (mtime_ns, size, inode): a file whose key is unchanged is not re-read


@dataclass(frozen=True, slots=True)
class _Snapshot:
    keys: tuple[tuple[str, FileKey], ...]
    agents: dict[str, AgentDefinition]  # by agent name
    problems: tuple[AgentFileProblem, ...]


class FrontmatterAgentRegistry(AgentRegistry):
    """Agents from the `*.md` files directly inside `agents_dir`, dot-files aside (contracts/agent-file.md).

    Every call looks at the folder again (one scandir and a stat per file), so an added, changed or
    removed file counts from the next call on, without a restart; a file whose (path, mtime_ns, size,
    inode) is unchanged is not parsed again. A missing folder is an empty registry.

    A bad file never stops the others from loading: it is left out and reported by `problems()`.
    Files are read in file-name order; when two files declare the same name, the first one keeps it
    and each later one is reported as a duplicate and left out.
    """

    def __init__(self, agents_dir: Path, default_threshold: float = DEFAULT_THRESHOLD) -> None:
        self.agents_dir = Path(agents_dir)
        self.default_threshold = default_threshold
        self._parsed: dict[str, tuple[FileKey, AgentDefinition | AgentFileInvalid]] = {}
        self._snapshot = _Snapshot((), {}, ())
        self._index: tuple[_Snapshot, TextIndex] | None = None  # built on the first text score, per load
        self._read_once = False
        self._lock = threading.Lock()  # a worker may read the registry from several threads

    # -- the AgentRegistry port ---------------------------------------------------------------
    def get_all(self) -> list[AgentProfile]:
        return [d.profile for d in self.definitions()]

    def get(self, agent_id: str) -> AgentProfile | None:
        found = self._refresh().agents.get(agent_id)
        return found.profile if found else None

    def text_scores(self, text: str) -> dict[str, float]:
        """BM25 relevance of each agent's name, description and capabilities to `text`, in 0..1
        (docs/matching.md), for the agents as the folder was last read (`get_all`, `get` and `definitions`
        read it: a caller scores the very agents it just got, and a large folder is not scanned twice).
        The index is built once per load of the folder: a changed file rebuilds it."""
        with self._lock:
            snapshot = self._snapshot if self._read_once else None
        snapshot = snapshot or self._refresh()
        with self._lock:
            if self._index is None or self._index[0] is not snapshot:
                agents = sorted(snapshot.agents.values(), key=lambda d: d.name)
                texts = [agent_text(d.name, d.description, [c.type for c in d.profile.capabilities]) for d in agents]
                self._index = (snapshot, TextIndex([d.name for d in agents], texts))
            index = self._index[1]
        return index.scores(text)

    def can_run(self, agent_id: str) -> bool:
        found = self.definition(agent_id)
        return found is not None and found.runnable

    # -- what the CLI and the worker need besides profiles ------------------------------------
    def definitions(self) -> list[AgentDefinition]:
        """Every valid agent, ordered by name."""
        return sorted(self._refresh().agents.values(), key=lambda d: d.name)

    def definition(self, agent_id: str) -> AgentDefinition | None:
        return self._refresh().agents.get(agent_id)

    def problems(self) -> list[AgentFileProblem]:
        """Every rule broken by a file of the folder, in file-name order."""
        return list(self._refresh().problems)

    # -- reading the folder -------------------------------------------------------------------
    def _refresh(self) -> _Snapshot:
        with self._lock:
            keys = self._scan()
            if keys != self._snapshot.keys:
                self._snapshot = self._assemble(keys)
            self._read_once = True
            return self._snapshot

    def _scan(self) -> tuple[tuple[str, FileKey], ...]:
        try:
            with os.scandir(self.agents_dir) as entries:
                found = []
                for entry in entries:
                    # dot-files are editors' swap and backup files, not agents
                    if entry.name.endswith(".md") and not entry.name.startswith(".") and entry.is_file():
                        st = entry.stat()
                        found.append((entry.name, (st.st_mtime_ns, st.st_size, st.st_ino)))
        except FileNotFoundError:
            return ()
        except NotADirectoryError:
            logger.warning("agents folder %s is not a folder; no agents loaded", self.agents_dir)
            return ()
        return tuple(sorted(found))

    def _assemble(self, keys: tuple[tuple[str, FileKey], ...]) -> _Snapshot:
        parsed: dict[str, tuple[FileKey, AgentDefinition | AgentFileInvalid]] = {}
        for name, key in keys:
            cached = self._parsed.get(name)
            parsed[name] = cached if cached and cached[0] == key else (key, self._read(self.agents_dir / name))
        self._parsed = parsed  # files that disappeared are forgotten here
        agents: dict[str, AgentDefinition] = {}
        problems: list[AgentFileProblem] = []
        for name, (_, outcome) in parsed.items():
            if isinstance(outcome, AgentFileInvalid):
                problems.extend(outcome.problems)
            elif outcome.name in agents:
                first = agents[outcome.name].path
                message = f"name: {outcome.name!r} is already declared by {first}; this file is ignored"
                problems.append(AgentFileProblem(outcome.path, message))
            else:
                agents[outcome.name] = outcome
        for problem in problems:  # info, not warning: callers report problems() in their own words
            logger.info("agent file left out: %s", problem)
        return _Snapshot(keys, agents, tuple(problems))

    @staticmethod
    def _read(path: Path) -> AgentDefinition | AgentFileInvalid:
        try:
            return read_agent_file(path)
        except AgentFileInvalid as invalid:
            return invalid
        except OSError as exc:  # removed or unreadable between the scan and the read
            return AgentFileInvalid(path, [f"file: cannot be read ({exc.strerror or exc})"])
