"""One racing process: `python -m tests.faults.actor SEED OPERATIONS [--settle]` does random posts (some
keyed, some after another signal), claims, completions, failures (some by an agent that is not the claimer), expiry
sweeps, retries and entry writes on three shared boards, through the real container configured from the
environment (BLACKBOARD_DB, BLACKBOARD_AGENTS_DIR, short timeouts so signals do expire meanwhile).

With `--settle`, after its operations it posts one more signal and sweeps until that signal has expired, so
the race holds an expiry however fast it ran (the timeouts are seconds; a fast machine can finish the
operations inside them); counted apart, as `settle:posted`.

A refusal (a rule or a missing signal) is part of the race. Anything else is printed with its traceback
on stderr and ends the process with 1. On stdout: one JSON line counting what it did, per operation and
outcome. Killing it at any point must leave a sound store (tests/faults/invariants.py)."""

from __future__ import annotations

import json
import random
import sys
import time
from collections import Counter

from blackboard.application.commands import (
    ClaimSignal,
    CompleteSignal,
    ExpireSignals,
    FailSignal,
    PostSignal,
    RetrySignal,
)
from blackboard.application.knowledge.commands import WriteEntry
from blackboard.application.ports import SignalFilter
from blackboard.domain.errors import NotFound, RuleViolation
from blackboard.domain.signals import SignalStatus
from blackboard.infrastructure.composition import settings
from blackboard.infrastructure.composition.container import Container

BOARDS = ("ps-f1", "ps-f2", "ps-f3")
AGENTS = ("ps-researcher", "ps-analyst")
OPERATIONS = {  # weight of each operation in the mix
    "post": 25,
    "claim": 25,
    "complete": 15,
    "fail": 7,
    "wrong_claimer": 3,
    "expire": 5,
    "retry": 5,
    "entry": 15,
}


class Actor:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        container = Container(config=settings.load({}))
        self.service, self.read_model = container.service(), container.read_model()
        self.knowledge = container.knowledge()
        self.done: Counter[str] = Counter()
        self.serial = 0

    def pick(self, status: SignalStatus, board: str):
        found = self.read_model.find(SignalFilter(status=status, blackboard_id=board, limit=30))
        return self.rng.choice(found) if found else None

    def step(self) -> None:
        operation = self.rng.choices(list(OPERATIONS), weights=list(OPERATIONS.values()))[0]
        try:
            outcome = getattr(self, operation)(self.rng.choice(BOARDS)) or "ok"
        except (RuleViolation, NotFound) as refused:
            outcome = f"refused:{type(refused).__name__}"
        self.done[f"{operation}:{outcome}"] += 1

    def post(self, board: str) -> str:
        self.serial += 1
        upstream = self.pick(self.rng.choice((SignalStatus.POSTED, SignalStatus.CLAIMED)), board)
        after = (upstream.signal_id,) if upstream and self.rng.random() < 0.3 else ()
        key = f"k-{self.rng.randrange(40)}" if self.rng.random() < 0.2 else None
        self.service.post_signal(
            PostSignal(
                signal_type=self.rng.choice(("RESEARCH", "ANALYSIS")),
                ps_id=board,
                entry_id=f"e-{self.seed}{self.serial:06d}",
                topic="race",
                after=after,
                dedupe_key=key,
            )
        )
        return "ok"

    def claim(self, board: str) -> str | None:
        if (signal := self.pick(SignalStatus.POSTED, board)) is None:
            return "none"
        self.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id=self.rng.choice(AGENTS)))
        return None

    def complete(self, board: str) -> str | None:
        if (signal := self.pick(SignalStatus.CLAIMED, board)) is None:
            return "none"
        self.service.complete_signal(
            CompleteSignal(
                signal_id=signal.signal_id,
                agent_id=signal.claimed_by,
                knowledge_items=("found",) if self.rng.random() < 0.3 else (),
            )
        )
        return None

    def fail(self, board: str) -> str | None:
        if (signal := self.pick(SignalStatus.CLAIMED, board)) is None:
            return "none"
        self.service.fail_signal(
            FailSignal(signal_id=signal.signal_id, agent_id=signal.claimed_by, error="no")
        )
        return None

    def wrong_claimer(self, board: str) -> str | None:
        """A completion by an agent that did not claim the signal: always refused."""
        if (signal := self.pick(SignalStatus.CLAIMED, board)) is None:
            return "none"
        other = next(a for a in AGENTS if a != signal.claimed_by)
        self.service.complete_signal(CompleteSignal(signal_id=signal.signal_id, agent_id=other))
        return "accepted"  # never reached unless the rule broke: the invariants then say so too

    def expire(self, board: str) -> str:
        return f"ended {len(self.service.expire_signals(ExpireSignals(blackboard_id=board)))}"

    def retry(self, board: str) -> str | None:
        if (signal := self.pick(self.rng.choice((SignalStatus.FAILED, SignalStatus.EXPIRED)), board)) is None:
            return "none"
        self.service.retry_signal(RetrySignal(signal_id=signal.signal_id))
        return None

    def entry(self, board: str) -> None:
        self.knowledge.write(
            WriteEntry(
                blackboard_id=board,
                key=f"notes/{self.rng.randrange(6)}",
                value={"by": self.seed, "n": self.serial},
                author=self.rng.choice(AGENTS),
            )
        )

    def settle(self, within: float = 120.0) -> int:
        """Post a signal and sweep its board until that signal has expired (by this sweep or another
        actor's; one the others complete meanwhile is replaced by a new one); returns the signals posted."""
        board, posted = self.rng.choice(BOARDS), 0
        give_up = time.monotonic() + within
        signal = None
        while signal is None or signal.status is not SignalStatus.EXPIRED:
            if time.monotonic() > give_up:
                raise TimeoutError(f"no expiry on {board} within {within} s")
            if signal is None or signal.status.is_final:
                self.serial += 1
                entry = f"e-{self.seed}{self.serial:06d}"
                signal = self.service.post_signal(
                    PostSignal(signal_type="RESEARCH", ps_id=board, entry_id=entry, topic="race")
                )
                posted += 1
            else:
                time.sleep(0.1)
            self.service.expire_signals(ExpireSignals(blackboard_id=board))
            signal = self.read_model.get(signal.signal_id)
        return posted


def main() -> None:
    seed, operations = int(sys.argv[1]), int(sys.argv[2])
    actor = Actor(seed)
    for _ in range(operations):
        actor.step()
        if actor.done.total() % 25 == 0:  # progress, for a test that kills it mid-run
            print(json.dumps({"progress": actor.done.total()}), flush=True)
    done = dict(actor.done)
    if "--settle" in sys.argv[3:]:
        done["settle:posted"] = actor.settle()
    print(json.dumps(done), flush=True)


if __name__ == "__main__":
    main()
