"""What every document shares: the base model, times, keys, a listing, and JSON of any of them."""

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
)

from blackboard.domain.knowledge.entries import KEY_PATTERN

if TYPE_CHECKING:
    pass


DATE_TIME = {"type": "string", "format": "date-time"}
TEXTS = {"type": "array", "items": {"type": "string"}}
TEXT = {"type": "string"}
Time = Annotated[
    datetime,
    PlainSerializer(lambda value: value.isoformat(), return_type=str, when_used="json"),
    WithJsonSchema(DATE_TIME),
]
Number = int | float  # as written: a file's `timeout: 60` stays 60, as the CLI prints it
Key = Annotated[str, Field(pattern=f"^{KEY_PATTERN.pattern}$")]
T = TypeVar("T", bound=BaseModel)


def _absent(value: Any) -> bool:
    """For a field left out of the document when it has no value (its schema: the value's type alone)."""
    return value is None


class Document(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow", defer_build=True)
