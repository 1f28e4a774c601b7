"""FrontmatterAgentRegistry: the agents declared by the Markdown files of the agents folders, re-read as they change."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from blackboard.application.ports import AgentRegistry
from blackboard.domain.capabilities import DEFAULT_THRESHOLD, AgentProfile
from blackboard.domain.rates import RateLimit
from blackboard.infrastructure.agents.parsing import (
    AgentDefinition,
    AgentFileInvalid,
    AgentFileProblem,
    read_agent_file,
)
from blackboard.infrastructure.agents.scan import FileKey, Scan, is_glob, matches, scan
from blackboard.infrastructure.agents.text_index import AgentText, TextIndex
from blackboard.infrastructure.composition.prices import resolved_model, unpriced_model

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FileReport:
    """One file the registry looked at: the agent it loaded, or why it was left out; and its warnings."""

    path: Path
    agent: AgentDefinition | None
    problems: tuple[AgentFileProblem, ...] = ()  # why it was left out (none when it loaded)

    @property
    def warnings(self) -> tuple[AgentFileProblem, ...]:
        return self.agent.warnings if self.agent else ()


@dataclass(frozen=True, slots=True)
class _Snapshot:
    scan: Scan
    agents: dict[str, AgentDefinition]  # by agent name
    reports: tuple[FileReport, ...]  # every file looked at, in walk order
    problems: tuple[AgentFileProblem, ...]  # what was left out, and why


class FrontmatterAgentRegistry(AgentRegistry):
    """Agents from the `*.md` files under the agents folders (docs/agents.md): each folder is
    walked recursively, dot-files and README.md aside (scan.py).

    Every call looks at the folders again (a walk and a stat per file, globs matched again), so an
    added, changed or removed file counts from the next call on, without a restart; a file whose
    (path, mtime_ns, size, inode) is unchanged is not parsed again. A missing folder is an empty one.

    A bad file never stops the others from loading: it is left out and reported by `problems()` (and
    `files()`). Folders are read in the order given, files in path order within each; when two files
    declare the same name, the first one keeps it and each later one is reported as a duplicate.
    """

    def __init__(
        self,
        agents_dirs: Path | Sequence[Path],
        default_threshold: float = DEFAULT_THRESHOLD,
        artifacts_dirs: Sequence[Path] = (),
        default_model: str | None = None,
        rate_limits: Mapping[str, RateLimit] | None = None,
    ) -> None:
        given = [agents_dirs] if isinstance(agents_dirs, (str, Path)) else list(agents_dirs)
        self.agents_dirs = tuple(Path(folder) for folder in given)  # as given: a glob stays a glob
        self.artifacts_dirs = tuple(Path(folder) for folder in artifacts_dirs)  # never read as agents
        self.default_threshold = default_threshold
        self._parsed: dict[str, tuple[FileKey, AgentDefinition | AgentFileInvalid]] = {}
        self._snapshot = _Snapshot(Scan((), (), ()), {}, (), ())
        self._index: tuple[_Snapshot, TextIndex] | None = None  # built on the first text score, per load
        self._read_once = False
        self._lock = threading.Lock()  # a worker may read the registry from several threads
        # how the agents are run here (a worker's --runner and --model): what a claim decides their runs
        # may spend with (is their model priced?)
        self._runner: str | None = None
        self._model = default_model
        self._rate_limits = dict(rate_limits or {})  # configured per model: for files that name none

    def use_run_options(self, runner: str | None, model: str | None) -> None:
        """How this process runs the agents (a worker's `--runner`, `--model`), from now on: the model their
        claims are decided with (a USD budget refuses one its runner cannot price) is the one their runs call."""
        with self._lock:
            self._runner, self._model = runner, model or self._model
            self._snapshot = _Snapshot(Scan((), (), ()), {}, (), ())  # assembled again on the next call

    @property
    def agents_dir(self) -> Path:
        """The first folder (the one new agent files go to)."""
        return self.agents_dirs[0]

    def folders(self) -> list[tuple[Path, list[Path] | None]]:
        """Each folder as given, with the folders it matches now when it is a glob (None when it is not)."""
        return [(folder, matches(folder) if is_glob(folder) else None) for folder in self.agents_dirs]

    # -- the AgentRegistry port ---------------------------------------------------------------
    def get_all(self) -> list[AgentProfile]:
        return [d.profile for d in self.definitions()]

    def get(self, agent_id: str) -> AgentProfile | None:
        found = self._refresh().agents.get(agent_id)
        return found.profile if found else None

    def text_scores(self, text: str) -> dict[str, float]:
        """BM25F relevance of each agent's name, capabilities, description and body to `text`, in 0..1
        (docs/matching.md), for the agents as the folder was last read (`get_all`, `get` and `definitions`
        read it: a caller scores the very agents it just got, and a large folder is not scanned twice).
        The index is built once per load of the folder: a changed file rebuilds it."""
        with self._lock:
            snapshot = self._snapshot if self._read_once else None
        snapshot = snapshot or self._refresh()
        with self._lock:
            if self._index is None or self._index[0] is not snapshot:
                agents = sorted(snapshot.agents.values(), key=lambda d: d.name)
                self._index = (snapshot, TextIndex([_text_of(d) for d in agents]))
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
        """Why each left-out file or folder was left out, in walk order."""
        return list(self._refresh().problems)

    def files(self) -> list[FileReport]:
        """Every file looked at, loaded or left out: those read in walk order, then those that could not
        be (a link loop ...). Folders that could not be walked are in `problems()` only."""
        return list(self._refresh().reports)

    # -- reading the folders ------------------------------------------------------------------
    def _refresh(self) -> _Snapshot:
        with self._lock:
            found = scan(self.agents_dirs, self.artifacts_dirs)
            if found != self._snapshot.scan:
                self._snapshot = self._assemble(found)
            self._read_once = True
            return self._snapshot

    def _assemble(self, found: Scan) -> _Snapshot:
        parsed: dict[str, tuple[FileKey, AgentDefinition | AgentFileInvalid]] = {}
        for name, key in found.files:
            cached = self._parsed.get(name)
            parsed[name] = cached if cached and cached[0] == key else (key, self._read(Path(name)))
        self._parsed = parsed  # files that disappeared are forgotten here
        agents: dict[str, AgentDefinition] = {}
        reports: list[FileReport] = []
        for name, (_, outcome) in parsed.items():
            if isinstance(outcome, AgentFileInvalid):
                reports.append(FileReport(Path(name), None, tuple(outcome.problems)))
            elif outcome.name in agents:
                first = agents[outcome.name].path
                message = f"name: {outcome.name!r} is already declared by {first}, which is kept; this file is left out"
                reports.append(
                    FileReport(
                        outcome.path, None, (AgentFileProblem(outcome.path, message, "rename one of them"),)
                    )
                )
            else:
                agents[outcome.name] = self._rate_limited(self._priced(outcome))
                reports.append(FileReport(outcome.path, outcome))
        reports += [FileReport(p.path, None, (p,)) for p in found.bad_files]
        problems = (*found.problems, *(p for r in reports for p in r.problems))
        for problem in problems:  # info, not warning: callers report problems() in their own words
            logger.info("agent file left out: %s", problem)
        return _Snapshot(found, agents, tuple(reports), problems)

    def _rate_limited(self, agent: AgentDefinition) -> AgentDefinition:
        """The agent under the rate limit configured for the model its runner calls (`rate_limits`), when its
        file names none; as it is otherwise (a handler's, a file's own limit, a model not configured)."""
        if not self._rate_limits or agent.profile.rate_limit is not None or agent.profile.spending is None:
            return agent
        runner = self._runner or agent.runner_name
        model = resolved_model("openai" if runner == "openai" else "anthropic", agent.model, self._model)
        limit = self._rate_limits.get(model) if model is not None else None
        if limit is None:
            return agent
        return replace(agent, profile=agent.profile.model_copy(update={"rate_limit": limit}))

    def _priced(self, agent: AgentDefinition) -> AgentDefinition:
        """The agent with the model its runner cannot price, if any, in its profile's spending: known once
        the prices and how it runs here are (runners/usage.py)."""
        spending = agent.profile.spending
        if spending is None:
            return agent
        unpriced = unpriced_model(self._runner or agent.runner_name, agent.model, self._model)
        if unpriced == spending.unpriced_model:
            return agent
        profile = agent.profile.model_copy(update={"spending": replace(spending, unpriced_model=unpriced)})
        return replace(agent, profile=profile)

    @staticmethod
    def _read(path: Path) -> AgentDefinition | AgentFileInvalid:
        try:
            return read_agent_file(path)
        except AgentFileInvalid as invalid:
            return invalid
        except OSError as exc:  # unreadable, or removed between the scan and the read
            fix = "make it readable (chmod a+r)" if isinstance(exc, PermissionError) else ""
            return AgentFileInvalid(path, [(f"file: cannot be read ({exc.strerror or exc})", fix)])


def _text_of(agent: AgentDefinition) -> AgentText:
    capabilities = tuple(c.type for c in agent.profile.capabilities)
    return AgentText(agent.name, agent.description, capabilities, agent.instructions)
