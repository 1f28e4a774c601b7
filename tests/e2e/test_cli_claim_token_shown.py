"""A claim's token is its claimer's proof: the log shows that there was one, never what it is, while
`export` keeps it so an import can restore the claim as it was."""

from __future__ import annotations

import json


def test_events_hide_a_claim_token_and_export_keeps_it(cli, tmp_path):
    signal = cli.post(type="RESEARCH", ps="ps-t", entry="e-1", topic="t")
    cli.ok("claim", signal["signal_id"], "--agent", "ps-researcher", "--token", "secret-1")

    claimed = [e for e in cli.ok("events", "--all") if e["event_type"] == "AgentSignalClaimed"]
    assert [e["data"]["token"] for e in claimed] == ["(hidden)"]

    cli.ok("export", "ps-t", "--output", str(tmp_path / "ps-t.json"))
    exported = json.loads((tmp_path / "ps-t.json").read_text())
    assert "secret-1" in json.dumps(exported)
