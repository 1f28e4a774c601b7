"""The command line's grammar: every command, its options, and one example each (argparse only).

Options that are settings have no argparse default: `settings.load` gives the default when one is
not given (the help texts name it; a test holds them to `settings.BlackboardSettings`)."""

from __future__ import annotations

import argparse
from typing import Any

from blackboard.domain.signal_kinds import SignalStatus, SignalType
from blackboard.infrastructure.cli import exits
from blackboard.infrastructure.cli.next_parser import add_next_command
from blackboard.infrastructure.cli.runner_options import add_runner_flags
from blackboard.infrastructure.cli.solve.parser import add_solve_command
from blackboard.infrastructure.cli.suggest import LazyVersion, SuggestingParser
from blackboard.infrastructure.cli.ui_parser import add_ui_command
from blackboard.infrastructure.interfaces.names import cli_aliases, option
from blackboard.infrastructure.persistence import DEFAULT_URL

SIGNAL_TYPES = tuple(t.value for t in SignalType)  # the domain's, named in the help and offered by completion
STATUSES = tuple(s.value for s in SignalStatus)
PAGE = 100  # what `signals` and `events` print without --limit or --all


def whole(raw: str) -> int:
    """An argparse type: a whole number that fits in 64 bits, as log positions, versions and limits are
    stored (a larger one is a usage error, exit 2, naming the option)."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {raw[:40]!r}") from None
    if not -(2**63) <= value < 2**63:
        raise argparse.ArgumentTypeError(f"must fit in 64 bits (at most {2**63 - 1}), got {raw[:40]}")
    return value


def priority(raw: str) -> int | str:
    """An argparse type: P0..P4, as issue trackers write it, is 0..4; any other text goes to the command
    model as typed, which holds the rule (0 to 4) on every interface."""
    text = raw.strip().upper()
    return int(text[1:]) if text[:1] == "P" and text[1:].isdigit() else raw


def one_of(names: tuple[str, ...]) -> Any:
    """Shell completion of an option whose values the command model checks (so the model's rule and its
    message hold on the command line as everywhere, rather than argparse's `choices`)."""
    return lambda **_: names


def _command(commands, name: str, summary: str, example: str, run: str) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        name,
        help=summary,
        description=summary[0].upper() + summary[1:] + ".",
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    parser.set_defaults(run=run)
    return parser


class Named(argparse.Action):
    """An option that has former names (interfaces/names.py, ALIASES), or one of those: stores, or appends, as the
    option does, and keeps the name typed (`spelled`), so an error about the value names the option as the
    user typed it. One field by two of its names is a usage error (exit 2) naming both."""

    def __init__(self, option_strings: list[str], dest: str, append: bool = False, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.append = append

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        spelled = getattr(namespace, "spelled", {})
        if spelled.get(self.dest, option_string) != option_string:
            parser.error(f"{option_string}: give {spelled[self.dest]} or {option_string}, not both")
        if self.append:
            values = [*(getattr(namespace, self.dest, None) or []), values]
        setattr(namespace, self.dest, values)
        namespace.spelled = {**spelled, self.dest: option_string}


def _option(parser: Any, command: str, name: str, **kwargs: Any) -> Any:
    """An option, and each former name of it (interfaces/names.py, ALIASES) as a hidden option of the same meaning:
    accepted, never shown in help, usage or completion."""
    former = [old for old, new in cli_aliases(command).items() if new == name]
    if not former:
        return parser.add_argument(name, **kwargs)
    dest = kwargs.pop("dest", name.lstrip("-").replace("-", "_"))
    append = kwargs.pop("action", None) == "append"
    made = parser.add_argument(name, action=Named, append=append, dest=dest, **kwargs)
    same = {key: kwargs[key] for key in ("metavar", "type") if key in kwargs}
    for old in former:
        parser.add_argument(
            old,
            action=Named,
            append=append,
            dest=dest,
            default=argparse.SUPPRESS,
            help=argparse.SUPPRESS,
            **same,
        )
    return made


def build_parser() -> argparse.ArgumentParser:
    """The whole grammar."""
    parser = SuggestingParser(
        prog="blackboard",
        description="Event-sourced coordination for AI agents: post signals, let agents claim and finish them.",
        epilog=exits.help_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--db", metavar="URL", help=f"event store URL (env BLACKBOARD_DB; default {DEFAULT_URL})"
    )
    parser.add_argument(
        "--agents-dir",
        metavar="DIR",
        action="append",
        help="folder of agent .md files, read recursively; repeatable; ./.claude/agents when ./agents "
        "does not exist (env BLACKBOARD_AGENTS_DIR, folders separated by os.pathsep; default ./agents)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (env BLACKBOARD_JSON=1)")
    parser.add_argument("--version", action=LazyVersion)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    db = commands.add_parser("db", help="the database schema").add_subparsers(
        dest="db_command", required=True, metavar="ACTION"
    )
    _command(
        db,
        "upgrade",
        "create or upgrade the schema (alembic)",
        "blackboard --db sqlite:///board.db db upgrade",
        "db_upgrade",
    )

    post = _command(
        commands,
        "post",
        "post a signal for an agent to claim",
        'blackboard post --capability SQL --blackboard ps-42 --topic "the orders query is slow"',
        "post",
    )
    post.add_argument(
        "--type",
        dest="signal_type",
        metavar="TYPE",
        help="the kind of work, one of " + ", ".join(SIGNAL_TYPES) + " (targeted by default; may be left "
        "out when --capability says whom it is for: it is then RESEARCH)",
    ).completer = one_of(SIGNAL_TYPES)
    post.add_argument("--ps-id", help="the problem statement this work belongs to (default: the board)")
    post.add_argument("--entry-id", help="the PS entry, e-N (default: the board's next e-N)")
    post.add_argument("--topic", required=True, help="what the work is about (1..200 characters)")
    post.add_argument("--prompt", default="", help="instructions for the agent")
    post.add_argument("--context", metavar="JSON", help="a JSON object handed to the agent")
    post.add_argument(
        "--capability",
        action="append",
        default=[],
        metavar="CAP",
        dest="capabilities",
        help="a capability the signal targets, an agent file's name for what it can do (repeatable; "
        "default: its type)",
    )
    post.add_argument("--posted-by", help="who posts (default ps-skill; inside an agent's run, that agent)")
    post.add_argument("--blackboard", help="the board (default: the PS id; give one of the two)")
    post.add_argument(
        "--after",
        action="append",
        default=[],
        metavar="SIG",
        help="claimable only once this signal completed (repeatable)",
    )
    post.add_argument(
        "--key", help="dedupe key: posting again with it on the same board returns the first signal"
    )
    post.add_argument("--correlation-id", help="ties the events to the caller's own run")
    post.add_argument("-q", "--quiet", action="store_true", help="print only the new signal's id")
    post.add_argument(
        "--read-key",
        action="append",
        default=[],
        metavar="K",
        dest="read_keys",
        help="an entry key its claimer may read while it holds the claim; a trailing * matches a prefix (repeatable)",
    )
    post.add_argument(
        "--write-key",
        action="append",
        default=[],
        metavar="K",
        dest="write_keys",
        help="an entry key its claimer may write while it holds the claim; a trailing * matches a prefix (repeatable)",
    )
    post.add_argument(
        "--priority",
        type=priority,
        metavar="P",
        help="how urgent: 0 (P0, most urgent) to 4; a worker claims the most urgent signal it fits first "
        "(default 2)",
    )
    post.add_argument(
        "--not-before",
        metavar="WHEN",
        help="not claimable before then: an ISO 8601 time, or a duration from now (90s, 10m, 2h, 1d); "
        "its post timeout counts from then",
    )
    post.add_argument(
        "--max-attempts",
        metavar="N",
        help="how many attempts it gets, whoever claims it: a failed attempt with attempts left is posted "
        "again after the claimer's backoff (default: the claiming agent's retries, else 1)",
    )
    post.add_argument(
        "--gate",
        action="store_true",
        help="a gate: no agent claims it, a person approves or rejects it (blackboard approve / reject)",
    )
    _option(
        post,
        "post",
        "--timeout-s",
        metavar="DURATION",
        help="its own timeout (seconds, or 90s, 10m, 2h, 1d): a gate expires if no one decides it within "
        "this long after it opens; another signal once it has waited this long with no live worker that "
        "fits it (default: BLACKBOARD_POST_TIMEOUT, off unless set: it waits for a worker that fits)",
    )
    _labels(
        post,
        "a label to find it by (repeatable, at most 20): lowercase letters and digits, then also . _ : / -, "
        "at most 64 characters",
    )
    post.add_argument(
        "--budget-usd",
        metavar="USD",
        help="the most a runner's run of it may spend, in US dollars (the agent file's max_budget_usd, "
        "if smaller, wins)",
    )

    claim = _command(
        commands,
        "claim",
        "claim a signal for an agent of the registry",
        "blackboard claim sig-1a2b3c4d --agent ps-researcher",
        "claim",
    )
    claim.add_argument("signal_id", metavar="SIG")
    claim.add_argument("--agent", required=True, help="the agent's name in the agents folder")
    claim.add_argument(
        "--token", help="a token of yours: completing, failing or renewing this claim will need it"
    )

    complete = _command(
        commands,
        "complete",
        "complete a claimed signal with its result",
        "blackboard complete sig-1a2b3c4d --agent ps-researcher --artifact-path docs/findings.md",
        "complete",
    )
    complete.add_argument("signal_id", metavar="SIG")
    complete.add_argument("--agent", required=True, help="the claimer")
    _option(complete, "complete", "--artifact-path", metavar="PATH", help="path of what the agent produced")
    _option(
        complete,
        "complete",
        "--knowledge-item",
        dest="knowledge_items",
        action="append",
        default=[],
        metavar="TEXT",
        help="a finding (repeatable)",
    )
    complete.add_argument("--token", help="the claim's token, required when the claim has one")

    fail = _command(
        commands,
        "fail",
        "report that a claimed signal could not be done",
        'blackboard fail sig-1a2b3c4d --agent ps-researcher --error "no sources found"',
        "fail",
    )
    fail.add_argument("signal_id", metavar="SIG")
    fail.add_argument("--agent", required=True, help="the claimer")
    fail.add_argument("--error", required=True, help="what went wrong")
    fail.add_argument("--token", help="the claim's token, required when the claim has one")
    fail.add_argument(
        "--retry-after",
        metavar="SECONDS",
        help="with attempts left, post it again after this long instead of the backoff's wait",
    )

    retry = _command(
        commands,
        "retry",
        "post a FAILED, EXPIRED or CANCELLED signal's work again, as a new signal (retry_of names the old),"
        " or a flow's failed steps",
        "blackboard retry sig-1a2b3c4d",
        "retry",
    )
    retry.add_argument("signal_id", metavar="SIG", nargs="?", help="the signal (or give --flow)")
    retry.add_argument("--posted-by", default="ps-skill", help="who posts the retry (default ps-skill)")
    retry.add_argument("-q", "--quiet", action="store_true", help="print only the new signal's id")
    retry.add_argument(
        "--flow",
        metavar="FLOW",
        help="without SIG: each step of this flow (on --blackboard) that ended FAILED, EXPIRED or CANCELLED, in "
        "step order, each after the retries of the steps it comes after",
    )
    retry.add_argument(
        "--blackboard", metavar="ID", help="the flow's board (with SIG: the signal's, found by itself)"
    )

    cancel = _command(
        commands,
        "cancel",
        "cancel a signal that is not final (CANCELLED, with what waits on it; its run is stopped), "
        "or in bulk every open signal of a board, of a correlation id or of a flow",
        'blackboard cancel sig-1a2b3c4d --reason "not needed any more"',
        "cancel",
    )
    cancel.add_argument("signal_id", metavar="SIG", nargs="?", help="the signal (or give --blackboard)")
    cancel.add_argument("--reason", help="why, kept in its result and its event (default: no reason given)")
    cancel.add_argument("--by", metavar="NAME", default="ps-skill", help="who cancels (default ps-skill)")
    cancel.add_argument("--blackboard", metavar="ID", help="without SIG: every open signal of this board")
    cancel.add_argument(
        "--correlation-id",
        metavar="ID",
        help="without SIG: every open signal posted with this correlation id (on --blackboard, if given)",
    )
    cancel.add_argument(
        "--flow", metavar="FLOW", help="without SIG: every open step of this flow (on --blackboard)"
    )

    approve = _command(
        commands,
        "approve",
        "approve an open gate as a person: it is COMPLETED, and what waits on it may run",
        'blackboard approve sig-1a2b3c4d --by alice --note "looks right"',
        "approve",
    )
    approve.add_argument("signal_id", metavar="SIG")
    approve.add_argument("--by", metavar="NAME", required=True, help="who approves (kept in its event)")
    approve.add_argument("--note", metavar="TEXT", help="a note kept with the approval")

    reject = _command(
        commands,
        "reject",
        "reject an open gate as a person: it is FAILED, and what waits on it expires",
        'blackboard reject sig-1a2b3c4d --by alice --reason "the plan is wrong"',
        "reject",
    )
    reject.add_argument("signal_id", metavar="SIG")
    reject.add_argument("--by", metavar="NAME", required=True, help="who rejects (kept in its event)")
    reject.add_argument(
        "--reason", metavar="TEXT", required=True, help="why, kept in its result and its event"
    )

    nudge = _command(
        commands,
        "nudge",
        "a person's word to the agent running a CLAIMED signal, given to it at its next turn (a runner's run only)",
        'blackboard nudge sig-1a2b3c4d "look at the tests first" --by alice',
        "nudge",
    )
    nudge.add_argument("signal_id", metavar="SIG")
    nudge.add_argument("text", metavar="TEXT", help="what the agent reads, as a user message")
    nudge.add_argument("--by", metavar="NAME", required=True, help="who nudges (kept in its event)")

    worker = _command(
        commands,
        "worker",
        "run an agent: claim the signals it fits best, run its handler, complete or fail them",
        "blackboard worker --agent ps-researcher --concurrency 2",
        "worker",
    )
    worker.add_argument("--agent", required=True, help="the agent's name in the agents folder")
    worker.add_argument("--once", action="store_true", help="handle at most one signal, then exit")
    worker.add_argument("--concurrency", type=int, metavar="N", help="handlers run at once (default 1)")
    worker.add_argument("--board", metavar="ID", help="only signals of this board")
    worker.add_argument(
        "--grace",
        type=float,
        metavar="SECONDS",
        help="on SIGINT/SIGTERM, how long running handlers may finish before their signals fail (default 30)",
    )
    worker.add_argument(
        "--head-start",
        type=float,
        metavar="SECONDS",
        help="seconds per point of score an agent waits when another fits the signal better, "
        "so the best fit usually wins (default 0.1)",
    )
    add_runner_flags(worker)

    show = _command(commands, "show", "show one signal", "blackboard show sig-1a2b3c4d", "show")
    show.add_argument("signal_id", metavar="SIG")
    show.add_argument("--at", metavar="POSITION", help="as the signal was right after this log position")
    show.add_argument(
        "--transcript",
        action="store_true",
        help="the transcript of the runner's run of it (Claude Code's messages, or the API's), one line per step",
    )
    show.add_argument(
        "--follow",
        action="store_true",
        help="print the run's output as it comes (a runner's transcript a step a line, a handler's stdout and "
        "stderr), then the outcome; exit codes as wait",
    )
    show.add_argument(
        "--after",
        metavar="CURSOR",
        help="with --follow: only the output after this ATTEMPT:SEQUENCE (its --json lines' cursor)",
    )
    show.add_argument("--timeout", metavar="SECONDS", help="with --follow: give up after this long (exit 5)")

    signals = _command(
        commands,
        "signals",
        "list signals from the read model, oldest first",
        "blackboard signals --status POSTED --capability RESEARCH",
        "signals",
    )
    signals.add_argument("--status", metavar="S", help="one of " + ", ".join(STATUSES)).completer = one_of(
        STATUSES
    )
    signals.add_argument("--type", dest="signal_type", metavar="T", help="a signal type").completer = one_of(
        SIGNAL_TYPES
    )
    signals.add_argument(
        "--capability",
        action="append",
        default=[],
        metavar="C",
        dest="capabilities",
        help="signals targeting this capability (repeatable: any of them)",
    )
    signals.add_argument("--blackboard", metavar="ID", help="signals of this board")
    _add_paging(signals, "signals")
    signals.add_argument("--at", metavar="POSITION", help="as the boards were right after this log position")

    match = _command(
        commands, "match", "rank the registry's agents for a signal", "blackboard match sig-1a2b3c4d", "match"
    )
    match.add_argument("signal_id", metavar="SIG")

    _command(
        commands,
        "agents",
        "every agent file: the agents loaded, the files left out and why, N of M loaded",
        "blackboard --agents-dir ./agents agents",
        "agents",
    )

    watch = _command(
        commands,
        "watch",
        "block until a signal of these types completes (--type), or an entry is "
        "published to a topic (--topic), then print it and the log position to pass as --since next",
        "blackboard watch --type RESEARCH --blackboard ps-42 --timeout 600",
        "watch",
    )
    watch.add_argument(
        "--type",
        action="append",
        dest="signal_types",
        metavar="T",
        help="a signal type (repeatable); give --type or --topic",
    ).completer = one_of(SIGNAL_TYPES)
    watch.add_argument("--topic", metavar="T", help="entries published to this topic (needs --blackboard)")
    watch.add_argument(
        "--follow",
        action="store_true",
        help="with --topic: keep printing entries, one JSON object a line, until interrupted or --timeout",
    )
    watch.add_argument("--blackboard", metavar="ID", help="only completions (entries) on this board")
    watch.add_argument(
        "--timeout",
        metavar="SECONDS",
        help="give up after this long (exit 5); with --follow, stop then (exit 0)",
    )
    watch.add_argument(
        "--since",
        metavar="POSITION",
        help="count what happens after this log position (default: from now)",
    )

    wait = _command(
        commands,
        "wait",
        "block until a signal is COMPLETED, FAILED, EXPIRED, UNCLAIMED or CANCELLED",
        "blackboard wait sig-1a2b3c4d --timeout 300",
        "wait",
    )
    wait.add_argument("signal_id", metavar="SIG")
    wait.add_argument("--timeout", metavar="SECONDS", help="give up after this long (exit 5)")

    _command(
        commands, "expire", "expire signals past their timeouts and print them", "blackboard expire", "expire"
    )

    events = _command(
        commands,
        "events",
        "print the event log in order, with global positions",
        "blackboard events --blackboard ps-42 --since 120",
        "events",
    )
    events.add_argument("--blackboard", metavar="ID", help="only this board's events")
    events.add_argument("--since", metavar="POSITION", help="only events after this position (default 0)")
    _add_paging(events, "events")
    events.add_argument(
        "--jsonl", action="store_true", help="one JSON object a line, streamed (any number of events)"
    )

    from blackboard.infrastructure.cli.knowledge.parser import add_knowledge_commands

    add_knowledge_commands(commands, _command)
    from blackboard.infrastructure.cli.habits_parser import add_habit_commands

    add_habit_commands(commands, _command)
    from blackboard.infrastructure.cli.mcp_parser import add_mcp_command

    add_mcp_command(commands, _command)
    from blackboard.infrastructure.cli.skill_parser import add_skill_command

    add_skill_command(commands, _command)
    add_ui_command(commands, _command)
    add_next_command(commands, _command)
    from blackboard.infrastructure.cli.budget_parser import add_budget_command

    add_budget_command(commands, _command)
    from blackboard.infrastructure.cli.webhooks_parser import add_webhooks_command

    add_webhooks_command(commands, _command)
    add_solve_command(commands, _command, whole)
    from blackboard.infrastructure.cli.flows.parser import add_flow_commands

    add_flow_commands(commands, _command)

    projection = commands.add_parser("projection", help="the signal read model").add_subparsers(
        dest="projection_command", required=True, metavar="ACTION"
    )
    rebuild = _command(
        projection,
        "rebuild",
        "rebuild the read model by replaying every event",
        "blackboard projection rebuild",
        "projection_rebuild",
    )
    rebuild.add_argument("--resume", action="store_true", help="continue an interrupted rebuild")
    for name, what in LABEL_FILTERS.items():  # a signal's labels (`post --label`) narrow what these show
        _labels(commands.choices[name], f"{what} carrying this label (repeatable: every one of them)")
    return parser


# The commands a signal's labels filter, and what each then shows
LABEL_FILTERS = {
    "signals": "signals",
    "next": "only signals",
    "status": "count only signals (on the boards holding one)",
    "watch": "with --type: only completions of signals",
}


def _labels(parser: argparse.ArgumentParser, text: str) -> None:
    """A signal's labels, one a `--label` (repeatable): the field `labels`, by its public option."""
    parser.add_argument(option("labels"), action="append", default=[], metavar="L", dest="labels", help=text)


def _add_paging(parser: argparse.ArgumentParser, what: str) -> None:
    """A list that prints a page by default and says on stderr when more remain."""
    page = parser.add_mutually_exclusive_group()
    page.add_argument("--limit", metavar="N", help=f"at most N {what} (default {PAGE})")
    page.add_argument("--all", action="store_true", help=f"every {what[:-1]}, however many")
