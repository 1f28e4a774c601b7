"""Who may do what: the callers of the board's use cases, the acts they ask for, and the one table between them.

A caller is a person (the CLI, a person's MCP server, the Python API, outside any run), an agent's MCP
server (`blackboard mcp --agent A`), an agent's run (a command handler, an entrypoint, a runner's run, and
whatever they call: the CLI or the Python API inside the run), a session bound to a run's claim (`blackboard
mcp --agent A --signal S`, an API runner's tools), or the web view. Every use case asks `Authority.check`
before it writes (application/authority.py), and TABLE decides; docs/permissions.md is TABLE, rendered (a test
holds the two together).

A run says who it is by presenting its agent, its signal and its claim's token; the check reads that claim as
the board stores it (CLAIMED, by that agent, under that token, its lease live), so a run whose claim is over
may do nothing that writes, and naming another agent gets a run nothing: the table is for its kind of caller.
Where a caller comes from (its process's environment, its ancestors', the worker's context) is the
interfaces' business (infrastructure/keeper/identity.py); what it may do is this module's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from blackboard.application.errors import NotPermitted


class Kind(Enum):
    """A kind of caller, in the words the table's columns use."""

    PERSON = "a person"
    AGENT = "an agent's MCP server"
    RUN = "an agent's run"
    SESSION = "a bound MCP session"
    WEB = "the web view, with its token"
    WEB_READ = "the web view, without a token"


class Act(Enum):
    """What a caller asks to do; the value is the verb a refusal says."""

    READ = "read the board"
    POST = "post a signal"
    FLOW = "run a flow"
    WRITE = "write or resolve an entry"
    CHECKPOINT = "save or delete LangGraph checkpoints"
    AS_ANOTHER = "write or post as another author"
    CLAIM = "claim a signal"
    FINISH = "complete, fail or renew a claim"
    CANCEL = "cancel a signal"
    RETRY = "retry a signal"
    DECIDE = "approve or reject a gate"
    LIMITS = "set a board's budget or rate limits"
    IMPORT = "import a board"
    REBUILD = "rebuild the read model"
    EXPIRE = "expire signals past their deadlines"
    NUDGE = "nudge a running agent"


NO = "no"  # a cell that refuses: the act's `why` says why
WEB_WHY = (
    "the web view reads the board and, with its token, approves and rejects gates, nudges and cancels runs; "
    "nothing else"
)
# why the web view without its token may not do what it does with one (a person's acts on the page)
WEB_WITHOUT_TOKEN = (
    "the web view approves and rejects gates, nudges and cancels runs only when it runs with a token"
)


@dataclass(frozen=True, slots=True)
class Rule:
    """One act's row: a cell per Kind (in Kind's order): `yes`, `no`, or the limit it is allowed within (each
    limit kept by the use case that names it); and why an agent is refused it."""

    act: Act
    cells: tuple[str, ...]
    why: str = ""

    def cell(self, kind: Kind) -> str:
        return self.cells[list(Kind).index(kind)]


WHILE_HELD = "while its claim holds"
TABLE: tuple[Rule, ...] = (
    # kinds:     person, agent's server, run, bound session, web view with token, without
    Rule(Act.READ, ("yes", "yes", "yes", "under its signal's key permissions", "yes", "yes")),
    Rule(Act.POST, ("yes", "as itself", f"as itself, {WHILE_HELD}", f"as itself, {WHILE_HELD}", NO, NO)),
    # a flow is its steps' posts, in one transaction: as posting them one by one
    Rule(Act.FLOW, ("yes", "as itself", f"as itself, {WHILE_HELD}", f"as itself, {WHILE_HELD}", NO, NO)),
    Rule(
        Act.WRITE,
        (
            "yes",
            "as itself, within its claims' write keys",
            f"as itself, within its claim's write keys (if it has any), {WHILE_HELD}",
            f"as itself, within its signal's write keys (if it has any), {WHILE_HELD}",
            NO,
            NO,
        ),
    ),
    Rule(
        Act.CHECKPOINT,
        ("yes", "yes", f"on its signal's board, {WHILE_HELD}", NO, NO, NO),
        "a bound session has no checkpoints, nor has the web view",
    ),
    Rule(Act.AS_ANOTHER, ("yes", NO, NO, NO, NO, NO), "an agent writes and posts under its own name only"),
    Rule(Act.CLAIM, ("yes", "yes", NO, NO, NO, NO), "a run works on the claim it holds; workers claim"),
    Rule(
        Act.FINISH,
        ("with the claim's token", "its own claims", f"its own signal, {WHILE_HELD}", NO, NO, NO),
        "a run ends its own signal only, and a bound session by its final answer",
    ),
    Rule(
        Act.CANCEL,
        ("yes", "yes", NO, NO, "yes", NO),
        "a run ends no other work (a person or a lead cancels), and its own by its outcome",
    ),
    Rule(Act.RETRY, ("yes", NO, NO, NO, NO, NO), "a person retries ended work"),
    Rule(Act.DECIDE, ("yes", NO, NO, NO, "yes", NO), "only a person decides"),
    Rule(Act.LIMITS, ("yes", NO, NO, NO, NO, NO), "only a person sets a board's limits"),
    Rule(Act.IMPORT, ("yes", NO, NO, NO, NO, NO), "only a person imports a board"),
    Rule(Act.REBUILD, ("yes", NO, NO, NO, NO, NO), "only a person rebuilds the read model"),
    Rule(Act.EXPIRE, ("yes", "yes", WHILE_HELD, WHILE_HELD, NO, NO)),
    Rule(Act.NUDGE, ("yes", NO, NO, NO, "yes", NO), "a person steers a run; an agent's work is its own"),
)
RULES = {rule.act: rule for rule in TABLE}


@dataclass(frozen=True, slots=True)
class Caller:
    """Who asks: its kind and, for an agent, its name; for a run (or a session bound to one), the claim it
    says it holds: its signal, the claim's token and the signal's board. `confined_to`: the one board it
    may reach, reading or writing (None: every board the table lets it): a bound session's is its signal's
    board, an agent's MCP server's its `--blackboard`, a person's server's its `--blackboard` with
    `--confine` (Authority.reach keeps it, for every use case)."""

    kind: Kind
    agent: str | None = None
    signal_id: str | None = None
    token: str | None = field(default=None, repr=False)  # the claimer's proof: never in a message
    board: str | None = None
    confined_to: str | None = None

    @property
    def is_agent(self) -> bool:
        """An agent's caller: it acts under its own name only."""
        return self.kind in (Kind.AGENT, Kind.RUN, Kind.SESSION)

    @property
    def holds_a_claim(self) -> bool:
        return self.kind in (Kind.RUN, Kind.SESSION)

    @property
    def who(self) -> str:
        agent = f"agent {self.agent}" if self.agent else "an agent"
        if self.kind is Kind.RUN:
            return f"{agent}'s run" + (f" of {self.signal_id}" if self.signal_id else "")
        if self.kind is Kind.SESSION:
            return f"{agent}'s session bound to {self.signal_id}"
        if self.kind is Kind.AGENT:
            return f"{agent}'s MCP server"
        if self.kind is Kind.PERSON and self.confined_to is not None:
            return "a person's server"
        return self.kind.value


PERSON = Caller(Kind.PERSON)


def refusal(caller: Caller, act: Act, verb: str | None = None) -> NotPermitted | None:
    """The refusal TABLE gives this caller for this act, or None when its cell allows it (within its limit)."""
    rule = RULES[act]
    if rule.cell(caller.kind) != NO:
        return None
    why = rule.why
    if caller.kind in (Kind.WEB, Kind.WEB_READ):  # what the web view may not do, or not without its token
        why = WEB_WHY if rule.cell(Kind.WEB) == NO else WEB_WITHOUT_TOKEN
    return NotPermitted(caller.who, verb or act.value, why)
