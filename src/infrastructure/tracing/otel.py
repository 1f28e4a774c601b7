"""Traces with OpenTelemetry (the `otel` extra; docs/operate.md, "Traces"): one trace per correlation id,
across processes.

Every event carries its command's `correlation_id` and `causation_id`. A post's span takes its trace id
from the correlation id (a UUID's 128 bits; any other id, the first 128 bits of its SHA-256) and its
span id from the post's causation id, so another process can name it as a parent knowing only the post's
metadata: a claim looks the post up in the log (one statement: the signal's row names its post's event,
read by the events' unique index; remembered for the rest of the signal's life in this process) and becomes
its child, the worker's run the claim's child, and the completion or failure
the run's (or the claim's, or the post's, whichever this process saw last). Spans are made after the fact,
with the command's or run's real start and end, so a refused command leaves none. A tracer never fails
the work: a span that cannot be made is logged and dropped."""

from __future__ import annotations

import atexit
import contextvars
import hashlib
import json
import logging
import os
import sys
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.trace import (
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    set_span_in_context,
)

from blackboard.application.commands import (
    ClaimSignal,
    ClaimSignals,
    CompleteSignal,
    FailSignal,
    PostSignal,
    RecordOutcomes,
)
from blackboard.application.ports import Tracer
from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure.tracing.switch import TRACES_FILE

logger = logging.getLogger("blackboard.traces")
TRACED = (PostSignal, ClaimSignal, ClaimSignals, CompleteSignal, FailSignal, RecordOutcomes)
REMEMBERED = 10_000  # signals whose last span this process keeps, for their next span's parent
PostMetadata = Callable[[str, str], Mapping[str, Any] | None]


def trace_id_of(correlation_id: str) -> int:
    try:
        found = uuid.UUID(correlation_id).int
    except ValueError:  # a caller's own id (`--correlation-id my-job`)
        found = int.from_bytes(hashlib.sha256(correlation_id.encode()).digest()[:16], "big")
    return found or 1  # 0 is no trace id


def span_id_of(causation_id: str) -> int:
    return int.from_bytes(hashlib.sha256(causation_id.encode()).digest()[:8], "big") or 1


def post_context(metadata: Mapping[str, Any]) -> SpanContext:
    """The span of the post these metadata are of, as any process derives it."""
    return SpanContext(
        trace_id_of(str(metadata["correlation_id"])),
        span_id_of(str(metadata["causation_id"])),
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )


class DerivedIds(RandomIdGenerator):
    """Random ids, but for the span being started under `given`: the post's derived ones."""

    def __init__(self) -> None:
        self.given: contextvars.ContextVar[tuple[int, int] | None] = contextvars.ContextVar(
            "ids", default=None
        )

    def generate_trace_id(self) -> int:
        given = self.given.get()
        return given[0] if given else super().generate_trace_id()

    def generate_span_id(self) -> int:
        given = self.given.get()
        return given[1] if given else super().generate_span_id()


class OtelTracer(Tracer):
    def __init__(self, provider: TracerProvider, ids: DerivedIds, post_metadata: PostMetadata) -> None:
        self._provider = provider
        self._tracer = provider.get_tracer("blackboard")
        self._ids = ids
        self._post_metadata = post_metadata
        self._last: OrderedDict[str, SpanContext] = OrderedDict()  # signal -> its last span in this process
        self._posts: OrderedDict[str, SpanContext] = OrderedDict()  # signal -> its post's span
        self._lock = threading.Lock()

    @classmethod
    def from_environment(cls, post_metadata: PostMetadata) -> OtelTracer:
        ids = DerivedIds()
        named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get(
            "OTEL_RESOURCE_ATTRIBUTES", ""
        )
        provider = TracerProvider(
            resource=Resource.create({} if named else {"service.name": "blackboard"}), id_generator=ids
        )
        for processor in processors(os.environ):
            provider.add_span_processor(processor)
        return cls(provider, ids, post_metadata)

    def command(self, cmd: Any, metadata: Mapping[str, Any], outcome: Any, started_ns: int) -> None:
        if isinstance(cmd, TRACED):
            self._safely(self._command, cmd, metadata, outcome, started_ns, time.time_ns())

    def ran(self, signal: AgentSignal, agent_id: str, started_ns: int, succeeded: bool) -> None:
        self._safely(self._ran, signal, agent_id, started_ns, time.time_ns(), succeeded)

    def shutdown(self) -> None:
        """Export what is batched and stop (the provider also does so at exit)."""
        self._provider.shutdown()

    def _safely(self, make: Callable[..., None], *args: Any) -> None:
        try:
            make(*args)
        except Exception as exc:  # noqa: BLE001 - a trace is never worth a failed command: logged, dropped
            logger.warning("could not trace %s: %s: %s", type(args[0]).__name__, type(exc).__name__, exc)

    def _ran(self, signal: AgentSignal, agent: str, started_ns: int, ended_ns: int, succeeded: bool) -> None:
        parent = self._parent(signal.blackboard_id, signal.signal_id, {})
        attributes = {"blackboard.agent": agent}
        context = self._span(
            "blackboard.run", parent, (started_ns, ended_ns), signal, attributes, succeeded=succeeded
        )
        self._remember(self._last, signal.signal_id, context)

    def _command(
        self, cmd: Any, metadata: Mapping[str, Any], outcome: Any, started_ns: int, ended_ns: int
    ) -> None:
        took = (started_ns, ended_ns)
        ids = {
            "blackboard.correlation_id": metadata["correlation_id"],
            "blackboard.causation_id": metadata["causation_id"],
        }
        if isinstance(cmd, PostSignal) and isinstance(outcome, AgentSignal):
            post = post_context(metadata)
            token = self._ids.given.set((post.trace_id, post.span_id))
            try:
                context = self._span("blackboard.post", None, took, outcome, ids, kind=SpanKind.PRODUCER)
            finally:
                self._ids.given.reset(token)
            self._remember(self._posts, outcome.signal_id, context)
            self._remember(self._last, outcome.signal_id, context)
        elif isinstance(cmd, ClaimSignal | ClaimSignals):
            claimed = [outcome] if isinstance(outcome, AgentSignal) else list(outcome.claimed)
            for signal in claimed:
                parent = self._post(signal.blackboard_id, signal.signal_id, metadata)
                attributes = {**ids, "blackboard.agent": str(signal.claimed_by)}
                context = self._span(
                    "blackboard.claim", parent, took, signal, attributes, kind=SpanKind.CONSUMER
                )
                self._remember(self._last, signal.signal_id, context)
        elif isinstance(cmd, CompleteSignal | FailSignal | RecordOutcomes):
            asked: Sequence[Any] = cmd.outcomes if isinstance(cmd, RecordOutcomes) else (cmd,)
            results = outcome if isinstance(outcome, list) else [outcome]
            for one, result in zip(asked, results, strict=False):
                if not isinstance(result, AgentSignal):
                    continue  # refused: nothing happened to it
                name = "blackboard.complete" if isinstance(one, CompleteSignal) else "blackboard.fail"
                parent = self._parent(result.blackboard_id, result.signal_id, metadata)
                self._span(
                    name,
                    parent,
                    took,
                    result,
                    {**ids, "blackboard.agent": one.agent_id},
                    succeeded=isinstance(one, CompleteSignal),
                )
                with self._lock:
                    self._last.pop(result.signal_id, None)
                    self._posts.pop(result.signal_id, None)

    def _parent(self, board: str, signal_id: str, metadata: Mapping[str, Any]) -> SpanContext | None:
        """The signal's last span in this process (its run, its claim), else its post's."""
        with self._lock:
            last = self._last.get(signal_id)
        return last or self._post(board, signal_id, metadata)

    def _post(self, board: str, signal_id: str, metadata: Mapping[str, Any]) -> SpanContext | None:
        with self._lock:
            known = self._posts.get(signal_id)
        if known is not None:
            return known
        found = self._post_metadata(board, signal_id)
        if found is None:  # no post of it in the log (a retry's new signal): a trace of this command's own
            return None
        context = post_context(found)
        self._remember(self._posts, signal_id, context)
        return context

    def _span(
        self,
        name: str,
        parent: SpanContext | None,
        took: tuple[int, int],
        signal: AgentSignal,
        attributes: Mapping[str, Any],
        kind: SpanKind = SpanKind.INTERNAL,
        succeeded: bool = True,
    ) -> SpanContext:
        context = set_span_in_context(NonRecordingSpan(parent)) if parent is not None else Context()
        span = self._tracer.start_span(
            name,
            context=context,
            kind=kind,
            start_time=took[0],
            attributes={
                "blackboard.signal_id": signal.signal_id,
                "blackboard.board": signal.blackboard_id,
                "blackboard.status": str(signal.status),
                **attributes,
            },
        )
        if not succeeded:
            span.set_status(Status(StatusCode.ERROR))
        span.end(end_time=took[1])
        return span.get_span_context()

    def _remember(self, kept: OrderedDict[str, SpanContext], signal_id: str, context: SpanContext) -> None:
        with self._lock:
            kept[signal_id] = context
            kept.move_to_end(signal_id)
            while len(kept) > REMEMBERED:
                kept.popitem(last=False)


def processors(env: Mapping[str, str]) -> list[Any]:
    """The exporters OTEL_TRACES_EXPORTER names (`otlp` by default, `console`), each batched; the OTLP
    exporter reads its endpoint, headers and timeout from OTEL_EXPORTER_OTLP_* itself."""
    found: list[Any] = []
    if path := env.get(TRACES_FILE):
        found.append(SimpleSpanProcessor(FileAtExit(path)))
    names = [n.strip().lower() for n in env.get("OTEL_TRACES_EXPORTER", "").split(",") if n.strip()]
    if not names and not path:
        names = ["otlp"]
    for name in names:
        if name == "otlp":
            protocol = (
                env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                or "http/protobuf"
            )
            if protocol == "grpc":
                from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
            else:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # type: ignore[assignment]
            found.append(BatchSpanProcessor(OTLPSpanExporter()))
        elif name == "console":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            found.append(BatchSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))  # stdout is the command's
        elif name != "none":
            logger.warning(
                "OTEL_TRACES_EXPORTER: %s is not an exporter blackboard knows (otlp, console, none)", name
            )
    return found


class FileAtExit(SpanExporter):
    """For tests: spans kept in memory, appended to a file as JSON lines when the process exits (one
    write, so the processes of a test append whole lines)."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._spans: list[ReadableSpan] = []
        atexit.register(self._dump)

    def export(self, spans: Sequence[ReadableSpan]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        self._spans.extend(spans)
        return SpanExportResult.SUCCESS

    def _dump(self) -> None:
        lines = [json.dumps(_line(span)) + "\n" for span in self._spans]
        if lines:
            with open(self._path, "a", encoding="utf-8") as out:
                out.write("".join(lines))


def _line(span: ReadableSpan) -> dict[str, Any]:
    context, parent = span.get_span_context(), span.parent
    return {
        "name": span.name,
        "trace_id": f"{context.trace_id:032x}",
        "span_id": f"{context.span_id:016x}",
        "parent_id": f"{parent.span_id:016x}" if parent is not None else None,
        "start": span.start_time,
        "end": span.end_time,
        "pid": os.getpid(),
        "status": span.status.status_code.name,
        "attributes": dict(span.attributes or {}),
    }
