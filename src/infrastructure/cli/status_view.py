"""How `status` looks: a rich table of the boards and one of the live workers, and `--watch`, which
keeps them on screen and redraws them whenever the log moves (woken by the log notifier: LISTEN/NOTIFY
on PostgreSQL) or, to age the waiting times and catch up with the beats, every `--interval` seconds.
With `--json`, `--watch` prints the overview as one JSON line each time it changes instead."""

from __future__ import annotations

import io
import json
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from blackboard.application.ports import EventStore, LogNotifier
from blackboard.application.ports.reading import STALLED_LISTED
from blackboard.application.status import BoardStatus
from blackboard.domain.presence import WorkerPresence
from blackboard.domain.rates import waiting_for_rate_limit
from blackboard.domain.signals import SignalStatus
from blackboard.infrastructure import documents
from blackboard.infrastructure.interfaces.waiting import WORKER_THAT_FITS

INTERVAL = 2.0  # seconds between two redraws when nothing happens (the ages move on)
SPACING = 0.25  # at least this long between two redraws, however busy the log is


def table(boards: Sequence[BoardStatus], workers: Sequence[WorkerPresence] = ()) -> Any:
    """The boards' table, and under it the live workers' (each with what it runs), when any beat."""
    from rich.console import Group

    shown = [t for t in (_boards_table(boards) if boards else None, _workers_table(workers)) if t is not None]
    return Group(*shown)


def _workers_table(workers: Sequence[WorkerPresence]) -> Any:
    if not workers:
        return None
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from blackboard.infrastructure.cli import terminal_safe

    now = max(w.last_beat for w in workers)  # ages as the freshest beat sees them: no clock read here
    grid = Table(title="live workers", title_justify="left", box=box.SIMPLE_HEAD)
    for column in ("agent", "host:pid", "boards", "up", "last beat", "running"):
        grid.add_column(column, no_wrap=column != "running")
    for w in workers:
        grid.add_row(
            Text(terminal_safe(w.agent_id)),
            Text(terminal_safe(f"{w.host}:{w.pid}")),
            Text(terminal_safe(", ".join(w.boards) or "all")),
            _age((now - w.started_at).total_seconds()),
            _age((now - w.last_beat).total_seconds()) + " ago",
            Text(terminal_safe(", ".join(f"{s} ({b})" for s, b in w.running) or "-")),
        )
    return grid


def _boards_table(boards: Sequence[BoardStatus]) -> Any:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from blackboard.infrastructure.cli import terminal_safe

    statuses = [str(s) for s in SignalStatus]
    grid = Table(
        title="blackboard status", title_justify="left", box=box.SIMPLE_HEAD, show_footer=len(boards) > 1
    )
    grid.add_column("board", footer="all", no_wrap=True)
    for status in statuses:
        grid.add_column(
            status.lower(), justify="right", footer=str(sum(b.signals.get(status, 0) for b in boards))
        )
    oldest = max((b.waiting_seconds for b in boards if b.waiting_seconds is not None), default=None)
    grid.add_column("oldest waiting", justify="right", footer=_age(oldest))
    grid.add_column("entries", justify="right", footer=str(sum(b.entries for b in boards)))
    grid.add_column("conflicts", justify="right", footer=str(sum(b.open_conflicts for b in boards)))
    grid.add_column("live workers", footer=str(len({w for b in boards for w in b.live_workers})))
    for b in boards:  # names as plain text: no rich markup, no terminal control characters
        grid.add_row(
            Text(terminal_safe(b.blackboard_id)),
            *(str(b.signals.get(s, 0)) for s in statuses),
            _age(b.waiting_seconds),
            str(b.entries),
            str(b.open_conflicts),
            Text(terminal_safe(", ".join(b.live_workers) or "-")),
        )
    return grid


def usage_table(boards: Sequence[BoardStatus]) -> Any:
    """What runners' runs cost, per board and agent; None when nothing ran on these boards."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from blackboard.infrastructure.cli import terminal_safe

    rows = [(b.blackboard_id, agent, t) for b in boards for agent, t in sorted(b.usage.items())]
    if not rows:
        return None
    grid = Table(title="runner usage", title_justify="left", box=box.SIMPLE_HEAD)
    for name in ("board", "agent"):
        grid.add_column(name, no_wrap=True)
    for name in ("runs", "tokens in", "tokens out", "cost", "turns", "time"):
        grid.add_column(name, justify="right")
    for board, agent, t in rows:
        grid.add_row(
            Text(terminal_safe(board)),
            Text(terminal_safe(agent)),
            str(t.runs),
            f"{t.input_tokens:,}",
            f"{t.output_tokens:,}",
            cost_text(t.known_cost_usd, t.unpriced_runs),
            str(t.turns),
            _age(t.duration_ms / 1000),
        )
    return grid


def gates_table(boards: Sequence[BoardStatus]) -> Any:
    """The gates waiting for a person (`blackboard approve SIG --by NAME`, or `reject`); None when none waits."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from blackboard.infrastructure.cli import terminal_safe

    rows = [(b.blackboard_id, g) for b in boards for g in b.open_gates]
    if not rows:
        return None
    grid = Table(
        title="open gates (blackboard approve SIG --by NAME, or reject)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    for name in ("board", "gate", "topic", "open since"):
        grid.add_column(name, no_wrap=name != "topic")
    for board, gate in rows:
        since = gate.claimable_since
        grid.add_row(
            Text(terminal_safe(board)),
            gate.signal_id,
            Text(terminal_safe(gate.payload.topic)),
            "-" if since is None else f"{since:%Y-%m-%d %H:%M:%S}",
        )
    return grid


def stalls_table(boards: Sequence[BoardStatus]) -> Any:
    """The boards where runs stalled (no progress for their `stall_timeout`: stopped, a failed attempt), and
    which signals, the most recent first (`blackboard show SIG` says which attempt); None when none stalled."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from blackboard.infrastructure.cli import terminal_safe

    stalled = [b for b in boards if b.stalls]
    if not stalled:
        return None
    grid = Table(
        title="stalled runs (stopped, each a failed attempt)", title_justify="left", box=box.SIMPLE_HEAD
    )
    for name in ("board", "stalls", "signals"):
        grid.add_column(name, no_wrap=name != "signals", justify="right" if name == "stalls" else "left")
    for b in stalled:
        more = b.stalls - len(
            b.stalled
        )  # a signal may stall on several attempts: "..." only for a longer list
        listed = ", ".join(b.stalled) + (" ..." if len(b.stalled) >= STALLED_LISTED and more > 0 else "")
        grid.add_row(Text(terminal_safe(b.blackboard_id)), str(b.stalls), listed)
    return grid


def waiting_table(boards: Sequence[BoardStatus]) -> Any:
    """The claimable signals no live worker fits, by board and target: each is waiting for a worker that
    fits (`blackboard worker --agent NAME` starts one); None when every one has a live worker."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from blackboard.infrastructure.cli import terminal_safe

    rows = [(b.blackboard_id, t, n) for b in boards for t, n in sorted(b.waiting_for_workers.items())]
    if not rows:
        return None
    grid = Table(
        title=f"waiting for {WORKER_THAT_FITS} (none is live)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        min_width=len(WORKER_THAT_FITS) + 30,  # the title on one line
    )
    for name in ("board", "targets", "signals"):
        grid.add_column(name, no_wrap=name != "targets", justify="right" if name == "signals" else "left")
    for board, targets, count in rows:
        grid.add_row(Text(terminal_safe(board)), Text(terminal_safe(targets)), str(count))
    return grid


def rate_limits_table(boards: Sequence[BoardStatus]) -> Any:
    """The signals rate limits hold, by board and key (`waiting: rate limit K`); None when none does."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from blackboard.infrastructure.cli import terminal_safe

    rows = [(b.blackboard_id, k, n) for b in boards for k, n in sorted(b.rate_limited.items())]
    if not rows:
        return None
    grid = Table(title="waiting for a rate limit", title_justify="left", box=box.SIMPLE_HEAD)
    for name in ("board", "wait", "signals"):
        grid.add_column(name, no_wrap=True, justify="right" if name == "signals" else "left")
    for board, key, count in rows:
        grid.add_row(Text(terminal_safe(board)), Text(terminal_safe(waiting_for_rate_limit(key))), str(count))
    return grid


def flows_table(boards: Sequence[BoardStatus]) -> Any:
    """Each board's running flows and the last that ended (`blackboard flow status FLOW` shows one step by
    step); None when no board has a flow."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from blackboard.infrastructure.cli import terminal_safe

    rows = [(b.blackboard_id, f) for b in boards for f in b.flows]
    if not rows:
        return None
    grid = Table(
        title="flows (blackboard flow status FLOW --blackboard ID)", title_justify="left", box=box.SIMPLE_HEAD
    )
    for name in ("board", "flow", "state", "steps", "started"):
        grid.add_column(name, no_wrap=name != "steps")
    for board, f in rows:
        grid.add_row(
            Text(terminal_safe(board)),
            Text(terminal_safe(f.flow_id)),
            f.state,
            ", ".join(f"{n} {status.lower()}" for status, n in f.counts.items()),
            "-" if f.started_at is None else f"{f.started_at:%Y-%m-%d %H:%M:%S}",
        )
    return grid


def budget_table(boards: Sequence[BoardStatus]) -> Any:
    """The boards with a budget (`blackboard budget`): the limits, what was spent, and whether their
    signals wait for a higher one; None when no board has one."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from blackboard.infrastructure.cli import terminal_safe

    limited = [b for b in boards if b.budget.is_set]
    if not limited:
        return None
    grid = Table(title="budgets", title_justify="left", box=box.SIMPLE_HEAD)
    for name in ("board", "usd", "tokens", "spent", "reserved", "claims"):
        grid.add_column(name, no_wrap=name != "claims")
    for b in limited:
        spent, waits = b.usage_total, b.over_budget or b.fully_reserved
        grid.add_row(
            Text(terminal_safe(b.blackboard_id)),
            "-" if b.budget.usd is None else f"${b.budget.usd:g}",
            "-" if b.budget.tokens is None else f"{b.budget.tokens:,}",
            f"${spent.cost_usd:.4f}, {spent.input_tokens + spent.output_tokens:,} tokens",
            f"${b.reserved.usd:.4f}, {b.reserved.tokens:,} tokens",
            f"wait: {waits}" if waits else "go on",
        )
    return grid


def cost_text(cost: float | None, unpriced: int) -> str:
    """$0.0123, and how many runs had no price (their cost is not in the sum); `cost unknown` when none had."""
    if cost is None:
        return f"cost unknown ({unpriced} unpriced)"
    return f"${cost:.4f}" + (f" (+{unpriced} unpriced)" if unpriced else "")


def text(boards: Sequence[BoardStatus], workers: Sequence[WorkerPresence] = ()) -> str:
    empty = "no boards: the store holds no signal and no entry"
    if not boards and not workers:
        return empty
    from rich.console import Console

    width = (
        shutil.get_terminal_size().columns if sys.stdout.isatty() else 1000
    )  # a pipe gets every column whole
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None)
    console.print(table(boards, workers))
    extras = (
        usage_table(boards),
        gates_table(boards),
        waiting_table(boards),
        flows_table(boards),
        budget_table(boards),
        stalls_table(boards),
        rate_limits_table(boards),
    )
    for extra in extras:
        if extra is not None:
            console.print(extra)
    shown = "\n".join(line.rstrip() for line in out.getvalue().splitlines()).strip("\n")
    return shown if boards else f"{empty}\n\n{shown}"


class Watch:
    """Redraws the overview: `position` is the log's end as the overview on screen last read it."""

    def __init__(
        self,
        overview: Callable[[], list[BoardStatus]],
        store: EventStore,
        notifier: LogNotifier,
        position: int,
        interval: float | None,
        workers: Callable[[], list[WorkerPresence]] = list,
    ) -> None:
        self._overview = overview
        self._workers = workers  # beats are no events: the table catches up with them every interval
        self._store = store
        self._notifier = notifier
        self._position = position
        self._interval = interval or INTERVAL

    def run(self, boards: list[BoardStatus], as_json: bool) -> None:
        try:
            self._lines(boards) if as_json else self._table(boards)
        except KeyboardInterrupt:  # how a watch ends: exit 0
            pass

    def _table(self, boards: list[BoardStatus]) -> None:
        from rich.live import Live

        with Live(_screen(boards, self._workers()), auto_refresh=False, redirect_stdout=False) as live:
            while True:
                live.update(_screen(self._next(), self._workers()), refresh=True)

    def _lines(self, boards: list[BoardStatus]) -> None:
        shown = None
        while True:
            shown_now = documents.jsonable([documents.status(b) for b in boards])
            if (state := [_changeable(d) for d in shown_now]) != shown:  # a change, not an age or a beat
                print(json.dumps(shown_now), flush=True)
                shown = state
            boards = self._next()

    def _next(self) -> list[BoardStatus]:
        """The overview once the log moves past what the last one read, or `interval` seconds passed."""
        started = time.monotonic()
        self._notifier.wait(self._position, self._interval)
        time.sleep(max(0.0, SPACING - (time.monotonic() - started)))  # a busy log redraws 4 times a second
        self._position = self._store.last_position()  # before reading: an append after it wakes the next wait
        return self._overview()


def _changeable(board: dict[str, Any]) -> dict[str, Any]:
    """What of a board's document counts as a change: not its ages, nor its workers' beats."""
    workers = [{**w, "last_beat_at": None} for w in board.get("workers", ())]
    return {**board, "oldest_waiting_seconds": None, "workers": workers}


def _screen(boards: Sequence[BoardStatus], workers: Sequence[WorkerPresence] = ()) -> Any:
    from rich.console import Group

    tables = (
        usage_table(boards),
        waiting_table(boards),
        flows_table(boards),
        budget_table(boards),
        stalls_table(boards),
        rate_limits_table(boards),
    )
    extras = [t for t in tables if t is not None]
    return Group(table(boards, workers), *extras) if extras else table(boards, workers)


def _age(seconds: float | None) -> str:
    """3s, 4m05s, 2h07m, 3d04h: two units at most; - for none."""
    if seconds is None:
        return "-"
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"
