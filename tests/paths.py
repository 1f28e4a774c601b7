"""Where the shared contracts are: `shared/` beside the repository (as in CI), else this workplace's copy."""

from __future__ import annotations

import os
from pathlib import Path

_CANDIDATES = [
    Path(os.environ["BLACKBOARD_CONTRACTS"]) if os.environ.get("BLACKBOARD_CONTRACTS") else None,
    Path(__file__).resolve().parents[1].parent / "shared" / "contracts",
    Path("/work/shared/contracts"),
]
CONTRACTS = next(
    (p for p in _CANDIDATES if p is not None and (p / "agent-signal.schema.json").exists()), _CANDIDATES[1]
)
SIGNAL_SCHEMA = CONTRACTS / "agent-signal.schema.json"
ROOT = Path(__file__).resolve().parents[1]  # the repository
SCHEMAS = ROOT / "src" / "infrastructure" / "schemas"  # generated from the models (tools/schemas.py)
