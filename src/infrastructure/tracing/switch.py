"""Whether this process traces (docs/operate.md, "Traces"): only when OpenTelemetry's standard variables
ask for it and the `otel` extra is installed. Deciding reads the environment alone: a process that does
not trace never imports opentelemetry (infrastructure/tracing/otel.py)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from blackboard.application.ports import Tracer
    from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore

# For tests only: spans kept in memory and appended to this file, one JSON object a line, at exit
TRACES_FILE = "BLACKBOARD_TRACES_FILE"


def configured(env: Mapping[str, str] = os.environ) -> bool:
    """OTEL_TRACES_EXPORTER names an exporter other than `none`, or an OTLP endpoint is given (the
    exporter then defaults to `otlp`); OTEL_SDK_DISABLED=true turns everything off."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if env.get(TRACES_FILE):
        return True
    exporters = {
        name.strip().lower() for name in env.get("OTEL_TRACES_EXPORTER", "").split(",") if name.strip()
    }
    if exporters:
        return exporters != {"none"}
    return bool(env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def configured_tracer(store: SqlAlchemyEventStore) -> Tracer | None:
    """OpenTelemetry's tracer when configured and installed; None otherwise (the service's own tracer,
    which does nothing). Configured without the extra installed: no traces, as documented."""
    if not configured():
        return None
    try:
        from blackboard.infrastructure.tracing.otel import OtelTracer

        return OtelTracer.from_environment(store.post_metadata)
    except ImportError:  # the otel extra is not installed (or not its exporters: the SDK alone)
        return None
