"""Lists of documents as one JSON array each, and JSON of any document or list."""

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Generic

from pydantic import (
    BaseModel,
    ConfigDict,
    RootModel,
)

from blackboard.infrastructure.documents.base import T
from blackboard.infrastructure.documents.entries import Entry, HistoryVersion, SearchHit
from blackboard.infrastructure.documents.log import Event
from blackboard.infrastructure.documents.signals import Match, Signal

if TYPE_CHECKING:
    pass

# ---------------------------------------------------------------- lists, and JSON


class Listing(RootModel[list[T]], Generic[T]):
    """A list of documents: iterate it, index it, take its `len`; it dumps as the CLI's JSON array."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    def __iter__(self) -> Iterator[T]:  # type: ignore[override] - the items, not the model's fields
        return iter(self.root)

    def __len__(self) -> int:
        return len(self.root)

    def __getitem__(self, index: int) -> T:
        return self.root[index]


Signals = Listing[Signal]
Entries = Listing[Entry]
SearchHits = Listing[SearchHit]
History = Listing[HistoryVersion]
Ranking = Listing[Match]
Events = Listing[Event]


def jsonable(document: Any) -> Any:
    """A document, or a list or object holding documents, as the JSON value the CLI prints and the MCP
    tools return (any other value as it is)."""
    if isinstance(document, BaseModel):
        return document.model_dump(mode="json")
    if isinstance(document, list | tuple):
        return [jsonable(d) for d in document]
    if isinstance(document, dict):
        return {k: jsonable(v) for k, v in document.items()}
    return document
