"""When a process traces (infrastructure/tracing/switch.py: OTEL_* variables, read without importing OpenTelemetry),
and the ids a trace is joined by (infrastructure/tracing/otel.py): a correlation id's trace, a causation id's span."""

from __future__ import annotations

import hashlib
import uuid

import pytest

from blackboard.infrastructure.tracing.otel import post_context, span_id_of, trace_id_of
from blackboard.infrastructure.tracing.switch import configured


@pytest.mark.parametrize(
    ("env", "traces"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, False),
        ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_SERVICE_NAME": "mine"}, False),  # naming the service asks for no traces
        ({"BLACKBOARD_TRACES_FILE": "/tmp/spans.jsonl"}, True),
    ],
)
def test_traces_are_on_only_when_the_standard_variables_ask_for_them(env, traces):
    assert configured(env) is traces


def test_a_uuid_correlation_id_is_the_trace_id_and_any_other_id_is_hashed_to_one():
    correlation = uuid.uuid4()

    assert trace_id_of(str(correlation)) == correlation.int
    assert trace_id_of("job-7") == int(hashlib.sha256(b"job-7").hexdigest()[:32], 16)
    post = post_context({"correlation_id": str(correlation), "causation_id": "c-1"})
    assert (post.trace_id, post.span_id, post.is_remote) == (correlation.int, span_id_of("c-1"), True)
    assert 0 < span_id_of("c-1") < 2**64 and span_id_of("c-1") != span_id_of("c-2")
