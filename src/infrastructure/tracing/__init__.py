"""Traces (docs/operate.md, "Traces"): whether this process traces (switch.py, reading the environment alone)
and OpenTelemetry's adapter (otel.py, imported only when it does)."""
