"""A board's LangGraph checkpoints as their events leave them: what time travel reads (`at`), and what the
read model's tables hold (persistence/checkpoints.py folds the same rules into rows)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from blackboard.domain.events import (
    CheckpointEvent,
    CheckpointSaved,
    CheckpointsPruned,
    CheckpointThreadDeleted,
    CheckpointWrite,
    CheckpointWritesSaved,
)

# (thread, namespace, checkpoint id)
Key = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class StoredWrite:
    task_id: str
    task_path: str
    write: CheckpointWrite


@dataclass
class Checkpoints:
    """The checkpoints that reads see, and each one's pending writes by (task_id, idx)."""

    saved: dict[Key, CheckpointSaved] = field(default_factory=dict)
    writes: dict[Key, dict[tuple[str, int], StoredWrite]] = field(default_factory=dict)

    def apply(self, event: CheckpointEvent) -> None:
        if isinstance(event, CheckpointSaved):
            self.saved[(event.thread_id, event.checkpoint_ns, event.checkpoint_id)] = event
        elif isinstance(event, CheckpointWritesSaved):
            held = self.writes.setdefault((event.thread_id, event.checkpoint_ns, event.checkpoint_id), {})
            for write in event.writes:
                if keeps(write.idx) and (event.task_id, write.idx) in held:
                    continue
                held[(event.task_id, write.idx)] = StoredWrite(event.task_id, event.task_path, write)
        elif isinstance(event, CheckpointThreadDeleted):
            for table in (self.saved, self.writes):
                for key in [k for k in table if k[0] == event.thread_id]:
                    del table[key]
        elif isinstance(event, CheckpointsPruned):
            for ref in event.checkpoints:
                key = (event.thread_id, ref.checkpoint_ns, ref.checkpoint_id)
                self.saved.pop(key, None)
                self.writes.pop(key, None)

    def ordered_writes(self, key: Key) -> list[StoredWrite]:
        """LangGraph's order (`writes_sort_key`): task path, task id, idx."""
        return sorted(self.writes.get(key, {}).values(), key=lambda w: (w.task_path, w.task_id, w.write.idx))


def keeps(idx: int) -> bool:
    """A write at an (task_id, idx) stored already stays as it was; a special channel's (negative idx:
    ERROR, INTERRUPT, ...) replaces it, as LangGraph's savers do."""
    return idx >= 0


def fold(events: Iterable[CheckpointEvent]) -> Checkpoints:
    state = Checkpoints()
    for event in events:
        state.apply(event)
    return state
