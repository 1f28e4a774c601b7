"""docs/permissions.md holds the table of who may do what as application/callers.py's TABLE says it: the page's
table is rendered from the code here, so the two cannot drift (a change to either fails this test, which
prints the table the code gives)."""

from __future__ import annotations

from blackboard.application.callers import NO, TABLE, Kind
from tests.docs.examples import ROOT


def rendered() -> str:
    header = ["act", *(kind.value for kind in Kind), "why an agent may not"]
    rows = [header, ["---"] * len(header)]
    rows += [[rule.act.value, *rule.cells, rule.why] for rule in TABLE]
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def test_the_permissions_page_holds_the_table_the_code_decides_by():
    page = (ROOT / "docs" / "permissions.md").read_text(encoding="utf-8")
    table = rendered()
    assert table in page, f"docs/permissions.md must hold the table as the code gives it:\n\n{table}\n"
    assert NO in table
