"""Where the tests find the repository's own files: the schemas the package ships, generated from its models
(the documents the board prints are checked against these), and the contracts' texts (fixtures kept in the
repository, tests/fixtures/contract/PROVENANCE.md), which the generated signal schema must refine. Nothing here
reads a file outside the repository."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the repository
SCHEMAS = ROOT / "src" / "infrastructure" / "schemas"  # generated from the models (tools/schemas.py)
SIGNAL_SCHEMA = SCHEMAS / "agent-signal.schema.json"  # what every signal document must validate against
CONTRACTS = ROOT / "tests" / "fixtures" / "contract"  # the contracts' texts the tests hold the board to
CONTRACT_SIGNAL_SCHEMA = CONTRACTS / "agent-signal.schema.json"  # SIGNAL_SCHEMA refines it (test_schemas.py)
