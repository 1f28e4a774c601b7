"""Real time and real ids: the production adapters of the Clock and IdGenerator ports."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

from blackboard.application.ports import Clock, IdGenerator


class SystemClock(Clock):
    def now(self) -> datetime:
        return datetime.now(UTC)


class RandomSignalIds(IdGenerator):
    def new_signal_id(self) -> str:
        return f"sig-{secrets.token_hex(4)}"
