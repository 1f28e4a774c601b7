"""The agents' documents: the agent files a folder holds, and the problems found in them."""

from typing import TYPE_CHECKING, Any

from blackboard.infrastructure.documents.base import Document, Number

if TYPE_CHECKING:
    from blackboard.infrastructure.agents.parsing import AgentDefinition, AgentFileProblem
    from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry

# ---------------------------------------------------------------- agents


class FileProblem(Document):
    message: str
    fix: str


class Agent(Document):
    name: str
    description: str | None
    capabilities: list[dict[str, Any]]
    threshold: Number
    runnable: bool
    runner: str | None = None  # who runs a file with no handler; None for a command or an entrypoint
    missing: str | None = None  # what that runner lacks to start, and how to get it
    command: str | None
    entrypoint: str | None
    timeout: Number | None
    stall_timeout: Number | None = None  # as the file says (None: the default for a runner; 0: never)
    model: str | None
    tools: list[str]
    file: str
    warnings: list[FileProblem]


class LeftOut(Document):
    file: str
    problems: list[FileProblem]


class Folder(Document):
    folder: str
    exists: bool
    glob: str | None = None  # the --agents-dir glob it came from


class Agents(Document):
    """Every file the registry looked at: the agents that loaded, the files left out and why."""

    agents: list[Agent]
    left_out: list[LeftOut]
    folders: list[Folder]
    loaded: int
    files: int


def agents(registry: "FrontmatterAgentRegistry") -> Agents:
    """Every file the registry looked at: `agents` (loaded, with their fields), `left_out` (file and
    problems, each with its fix), `folders` (each folder read, whether it exists, and the glob it came
    from), and the counts."""
    files = registry.files()
    loaded = sorted((f.agent for f in files if f.agent), key=lambda d: d.name)
    left_out: dict[str, list[AgentFileProblem]] = {}
    for p in registry.problems():  # files, and folders that could not be walked
        left_out.setdefault(str(p.path), []).append(p)
    return Agents(
        agents=[_agent(d, registry.default_threshold) for d in loaded],
        left_out=[
            LeftOut(file=path, problems=[_problem(p) for p in found]) for path, found in left_out.items()
        ],
        folders=_folders(registry),
        loaded=len(loaded),
        files=len(files),
    )


def _folders(registry: "FrontmatterAgentRegistry") -> list[Folder]:
    """Each folder read, with the glob it came from (`glob`, null for a folder named as it is); a glob
    that matches nothing is listed as itself, a folder that does not exist."""
    listed: list[Folder] = []
    for given, matched in registry.folders():
        if matched is None:
            listed.append(Folder(folder=str(given), exists=given.is_dir(), glob=None))
        else:
            found = [Folder(folder=str(f), exists=True, glob=str(given)) for f in matched]
            listed += found or [Folder(folder=str(given), exists=False, glob=str(given))]
    return listed


def _problem(p: "AgentFileProblem") -> FileProblem:
    return FileProblem(message=p.message, fix=p.fix)


def _agent(d: "AgentDefinition", default_threshold: float) -> Agent:
    return Agent(
        name=d.name,
        description=d.description,
        capabilities=[c.model_dump() for c in d.profile.capabilities],
        threshold=d.profile.threshold_or(default_threshold),
        runnable=d.runnable,
        runner=d.runner_name,
        missing=d.runner_missing,
        command=d.command,
        entrypoint=d.entrypoint,
        timeout=d.timeout,
        stall_timeout=d.stall_timeout,
        model=d.model,
        tools=list(d.tools),
        file=str(d.path),
        warnings=[_problem(w) for w in d.warnings],
    )
