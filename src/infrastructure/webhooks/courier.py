"""The courier: announces gates to the URLs of BLACKBOARD_WEBHOOKS from whichever board process runs.

A round (`deliver`) finds the gates owed an announcement (open gates some URL was not told of; gates told
open that have ended since), records a delivery per announcement and URL in the outbox, then takes the due
deliveries and sends each once, recording the answer: received, tried again later (the wait doubling from
BLACKBOARD_WEBHOOK_RETRY), or given up once BLACKBOARD_WEBHOOK_GIVE_UP has passed since it was made.

Each process that writes the board pokes its courier after a commit that may touch a gate (the dispatcher
calls `poke`), and the courier's own thread runs a round then, and goes on for the process's life: a round at
each poke, whenever a try falls due, and every IDLE seconds (`worker` and `ui` start it when they start). A
CLI command waits for its round at most BLACKBOARD_WEBHOOK_TIMEOUT and a second once its output is printed
(`flush_poked`), so a receiver that is slow or down never fails it and delays its exit by that at most; what
is left is taken by the next round anywhere.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from blackboard.application.ports import Clock
from blackboard.domain.events import (
    AgentSignalApproved,
    AgentSignalCancelled,
    AgentSignalCompleted,
    AgentSignalExpired,
    AgentSignalPosted,
    AgentSignalRejected,
    BlackboardEvent,
)
from blackboard.domain.webhooks import DELIVERED, GATE_OPENED, GIVEN_UP, PENDING, next_try
from blackboard.infrastructure.documents.webhooks import gate_call
from blackboard.infrastructure.persistence.webhooks import Announcement, Delivery, SqlWebhookOutbox
from blackboard.infrastructure.webhooks.sending import Answer, post

logger = logging.getLogger(__name__)

# what may open or end a gate: a post (a gate, or its upstreams'), a completion (an upstream's), a decision,
# an expiry, a cancel; a `--not-before` coming opens one with no event (the thread's rounds find it)
POKED_BY: tuple[type[BlackboardEvent], ...] = (
    AgentSignalPosted,
    AgentSignalCompleted,
    AgentSignalApproved,
    AgentSignalRejected,
    AgentSignalExpired,
    AgentSignalCancelled,
)
IDLE = 10.0  # seconds between a long-lived courier's rounds with nothing due (gates a not_before opens)
PAUSE = 0.1  # seconds at least between two rounds of a process: a busy worker's commits share rounds
_POKED: list[Courier] = []  # the couriers of this process that were poked, for `flush_poked`

Send = Callable[[str, bytes, str, dict[str, str], float], Answer]


@dataclass(frozen=True, slots=True)
class Round:
    """What one round did: deliveries made, received, failed (to be tried again) and given up."""

    made: int = 0
    received: int = 0
    failed: int = 0
    given_up: int = 0


@dataclass(frozen=True, slots=True)
class Setup:
    """The webhooks' settings (BLACKBOARD_WEBHOOKS, _SECRET, BLACKBOARD_UI_URL, _TIMEOUT, _RETRY, _GIVE_UP)."""

    urls: tuple[str, ...]
    secret: str
    ui_url: str
    timeout: float  # seconds a POST may take
    first_wait: float  # seconds before the first retry; doubled after each failure
    give_up_after: float  # seconds from a delivery's making to its last try


class Courier:
    """One process's announcer of gates: its rounds (`deliver`), and the thread that runs them (`poke`)."""

    def __init__(self, outbox: SqlWebhookOutbox, setup: Setup, clock: Clock, send: Send = post) -> None:
        self._outbox = outbox
        self._setup = setup
        self._clock = clock
        self._send = send
        self._lease = timedelta(seconds=setup.timeout + 30.0)  # a try's send ends well before its lease
        self._turn = threading.Lock()  # one round at a time in a process
        self._changed = threading.Condition()
        self._asked = 0  # pokes so far
        self._done = 0  # the pokes the finished rounds answered
        self._thread: threading.Thread | None = None
        self._stopped = False

    def poke(self, event: BlackboardEvent | None = None) -> None:
        """Something may have opened or ended a gate: a round soon (the thread's, started at the first poke)."""
        with self._changed:
            self._asked += 1
            if self._asked == 1:
                _POKED.append(self)
            self._changed.notify_all()
        self.start()

    def start(self) -> None:
        """The courier's thread: a round at each poke and whenever a try falls due (a daemon: the process's
        end stops it; a try it was sending is taken again once its lease ends)."""
        with self._changed:
            if self._thread is None and not self._stopped:
                self._thread = threading.Thread(target=self._run, name="blackboard-webhooks", daemon=True)
                self._thread.start()

    def flush(self, limit: float | None = None) -> bool:
        """Wait until the rounds asked for so far are done, at most `limit` seconds (by default the timeout
        of a POST and a second to record its answer); True if they are."""
        wanted = self._asked
        with self._changed:
            return self._changed.wait_for(
                lambda: self._done >= wanted, self._setup.timeout + 1.0 if limit is None else limit
            )

    def stop(self) -> None:
        """Once the rounds asked for are done (at most the timeout and a second), no more: a closed Python API."""
        self.flush()
        with self._changed:
            self._stopped = True
            self._changed.notify_all()

    def deliver(self) -> Round:
        """One round, in the caller's thread (`webhooks --deliver`, and the courier's own thread)."""
        with self._turn:
            made = self._announce()
            start = self._clock.now()  # after the announcements: what they made is due in this round
            received = failed = given_up = 0
            # due by the round's start: a try this round failed is due later, so it is not sent twice in it
            while taken := self._outbox.take_due(self._clock.now(), self._lease, start):
                for delivery in taken:
                    status = self._try(delivery)
                    received += status == DELIVERED
                    failed += status == PENDING
                    given_up += status == GIVEN_UP
            return Round(made, received, failed, given_up)

    def _announce(self) -> int:
        at = self._clock.now()
        owed = self._outbox.owed(self._setup.urls, at)
        if not owed:
            return 0
        bodies = [self._body(a, at) for a in owed]
        return self._outbox.add(owed, bodies, at)

    def _body(self, announced: Announcement, at: datetime) -> str:
        if announced.event is None:
            return ""
        gate = announced.gate
        when = (gate.claimable_since if announced.event == GATE_OPENED else gate.completed_at) or at
        call = gate_call(announced.event, gate, list(announced.waiting), self._setup.ui_url, when)
        return json.dumps(call.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))

    def _try(self, delivery: Delivery) -> str:
        headers = {
            "X-Blackboard-Event": delivery.event,
            "X-Blackboard-Delivery": str(delivery.delivery_id),
        }
        answer = self._send(
            delivery.url, delivery.body.encode(), self._setup.secret, headers, self._setup.timeout
        )
        if answer.received:
            self._outbox.record(delivery, DELIVERED, answer.status, None, None)
            return DELIVERED
        at = self._clock.now()
        again = next_try(
            delivery.attempts,
            delivery.created_at,
            at,
            timedelta(seconds=self._setup.first_wait),
            timedelta(seconds=self._setup.give_up_after),
        )
        status = PENDING if again is not None else GIVEN_UP
        self._outbox.record(delivery, status, answer.status, answer.error, again)
        logger.info("webhook %s to %s failed (%s): %s", delivery.event, delivery.url, answer.error, status)
        return status

    def _run(self) -> None:
        while True:
            with self._changed:
                if self._stopped:
                    return
                asked = self._asked
            try:
                self.deliver()
            except Exception as exc:  # noqa: BLE001 - a database down: the next round tries again
                logger.warning("webhooks: a round failed: %s", exc)
            with self._changed:
                self._done = max(self._done, asked)
                self._changed.notify_all()
            pause = self._until_due()
            with self._changed:
                self._changed.wait_for(lambda: self._asked > self._done or self._stopped, pause)
            time.sleep(PAUSE)  # the commits of the next tenth of a second share the next round

    def _until_due(self) -> float:
        try:
            due = self._outbox.next_due()
        except Exception:  # noqa: BLE001 - a database down: look again after a while
            return IDLE
        if due is None:
            return IDLE
        return min(IDLE, max(0.05, (due - self._clock.now()).total_seconds()))


def flush_poked(limit: float | None = None) -> None:
    """Wait for the rounds this process's commits asked for (each courier at most its timeout): the CLI, once a
    command's output is printed."""
    for courier in list(_POKED):
        courier.flush(limit)
