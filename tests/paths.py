"""Where the tests find the repository's own files: the contracts' texts (fixtures kept in the repository,
tests/fixtures/contract/PROVENANCE.md) and the schemas the package ships."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the repository
CONTRACTS = ROOT / "tests" / "fixtures" / "contract"  # the contracts' texts the tests hold the board to
SIGNAL_SCHEMA = CONTRACTS / "agent-signal.schema.json"
SCHEMAS = ROOT / "src" / "infrastructure" / "schemas"  # generated from the models (tools/schemas.py)
