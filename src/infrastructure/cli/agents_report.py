"""`blackboard agents`: every file the registry looked at, loaded or left out with the reason and the fix.

Text: one line per loaded agent (its warnings under it), then the files left out, then
"N of M files loaded". JSON: an object, `agents` (loaded, with their fields), `left_out` (file and
problems), `folders` (each named folder and whether it exists) and the two counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from blackboard.infrastructure.cli.render import Output

if TYPE_CHECKING:
    from blackboard.infrastructure.agents.parsing import AgentDefinition, AgentFileProblem
    from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry


def problem(p: AgentFileProblem) -> dict[str, str]:
    return {"message": p.message, "fix": p.fix}


def agent_document(d: AgentDefinition, default_threshold: float) -> dict[str, Any]:
    return {
        "name": d.name,
        "description": d.description,
        "capabilities": [c.model_dump() for c in d.profile.capabilities],
        "threshold": d.profile.threshold_or(default_threshold),
        "runnable": d.runnable,
        "command": d.command,
        "entrypoint": d.entrypoint,
        "timeout": d.timeout,
        "model": d.model,
        "tools": list(d.tools),
        "file": str(d.path),
        "warnings": [problem(w) for w in d.warnings],
    }


def report(registry: FrontmatterAgentRegistry) -> Output:
    files = registry.files()
    loaded = sorted((f.agent for f in files if f.agent), key=lambda d: d.name)
    left_out: dict[str, list[AgentFileProblem]] = {}
    for p in registry.problems():  # files, and folders that could not be walked
        left_out.setdefault(str(p.path), []).append(p)
    folders = [{"folder": str(f), "exists": f.is_dir()} for f in registry.agents_dirs]
    data = {
        "agents": [agent_document(d, registry.default_threshold) for d in loaded],
        "left_out": [{"file": path, "problems": [problem(p) for p in found]} for path, found in left_out.items()],
        "folders": folders,
        "loaded": len(loaded),
        "files": len(files),
    }
    return Output(data, "\n".join(_lines(data)))


def _lines(data: dict[str, Any]) -> list[str]:
    lines = []
    for a in data["agents"]:
        capabilities = " ".join(f"{c['type']}={c['score']:g}" for c in a["capabilities"])
        runs = "" if a["runnable"] else "  not runnable (no command or entrypoint)"
        lines.append(f"{a['name']:<20} {capabilities}  (threshold {a['threshold']:g}){runs}  {a['file']}")
        lines += [f"    warning: {_said(w)}" for w in a["warnings"]]
    if data["left_out"]:
        lines.append("left out:")
        for item in data["left_out"]:
            lines += [f"  {item['file']}: {_said(p)}" for p in item["problems"]]
    where = ", ".join(f["folder"] + ("" if f["exists"] else " (does not exist)") for f in data["folders"])
    lines.append(f"{data['loaded']} of {data['files']} files loaded from {where}")
    return lines


def _said(p: dict[str, str]) -> str:
    return p["message"] + (f" (fix: {p['fix']})" if p["fix"] else "")
