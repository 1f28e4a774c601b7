"""Time and ids: the clock and the id generator."""

from __future__ import annotations

import abc
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

# ---------------------------------------------------------------- time


class Clock(abc.ABC):
    @abc.abstractmethod
    def now(self) -> datetime:
        """The current time, timezone-aware."""


class IdGenerator(abc.ABC):
    @abc.abstractmethod
    def new_signal_id(self) -> str:
        """A fresh `sig-` + 8 hex id."""
