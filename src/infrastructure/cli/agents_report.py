"""`blackboard agents`: every file the registry looked at, loaded or left out with the reason and the fix.

Text: one line per loaded agent (its warnings under it), then the files left out, then
"N of M files loaded". JSON: `documents.agents`, the document the Python API returns too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from blackboard.infrastructure import documents
from blackboard.infrastructure.cli.signal_text import Output

if TYPE_CHECKING:
    from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry


def report(registry: FrontmatterAgentRegistry) -> Output:
    data = documents.jsonable(documents.agents(registry))
    return Output(data, "\n".join(_lines(data)))


def _lines(data: dict[str, Any]) -> list[str]:
    lines = []
    for a in data["agents"]:
        capabilities = " ".join(f"{c['type']}={c['score']:g}" for c in a["capabilities"])
        runs = f"  runner {a['runner']}" if a["runner"] else ""
        if not a["runnable"]:
            runs += f"  not runnable ({a['missing']})"
        lines.append(f"{a['name']:<20} {capabilities}  (threshold {a['threshold']:g}){runs}  {a['file']}")
        lines += [f"    warning: {_said(w)}" for w in a["warnings"]]
    if data["left_out"]:
        lines.append("left out:")
        for item in data["left_out"]:
            lines += [f"  {item['file']}: {_said(p)}" for p in item["problems"]]
    where = ", ".join(_folder(f) for f in data["folders"])
    lines.append(f"{data['loaded']} of {data['files']} files loaded from {where}")
    return lines


def _folder(f: dict[str, Any]) -> str:
    if f["glob"] is not None and not f["exists"]:
        return f"{f['folder']} (a glob that matches no folder)"
    if f["glob"] is not None:
        return f"{f['folder']} (from {f['glob']})"
    return f["folder"] + ("" if f["exists"] else " (does not exist)")


def _said(p: dict[str, str]) -> str:
    return p["message"] + (f" (fix: {p['fix']})" if p["fix"] else "")
