"""docbot's four phases (flows/docbot.md), offline: research the agents folder, plan a page from the findings,
write it from the approved plan, and present it. `python3 handlers/docbot.py PHASE`, PHASE one of research,
plan, write, interact; each phase ends when its agent completes its signal, and the next phase's signal is
claimable then (a flow's step waits for the steps it names).

What it documents is the folder it runs in (a worker runs a handler in its agent file's folder): the agent
files there and their handlers. Standard library only, no model, no network.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from handler_kit import Job, Report, main, upstream_lines

MAX_FINDINGS = 12
FIELD = re.compile(r"^(name|description|command|entrypoint|runner|capabilities):\s*(.*)$")
SAID = re.compile(r"^(?P<name>\S+) \((?P<file>[^)]+)\): (?P<what>.*)$")


def agent_files(folder: Path) -> list[dict[str, str]]:
    """The agent files of the folder (its *.md with front matter), each with the keys a reader needs first."""
    found = []
    for path in sorted(folder.glob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if not text.startswith("---"):
            continue
        head = text.split("---", 2)[1] if text.count("---") >= 2 else ""
        fields = {"file": path.name}
        for line in head.splitlines():
            if matched := FIELD.match(line):
                fields[matched[1]] = matched[2].strip().strip("'\"")
        if "name" in fields:
            found.append(fields)
    return found


def research(job: Job) -> Report:
    """Research phase: discover the agents and record one finding for each (what it does, how it runs)."""
    agents = agent_files(Path.cwd())
    findings = [
        f"{a['name']} ({a['file']}): {a.get('description') or 'no description'}"
        + (f" Runs `{how}`." if (how := a.get("command") or a.get("entrypoint") or a.get("runner")) else "")
        for a in agents
    ][:MAX_FINDINGS]
    lines = "\n".join(f"- {f}" for f in findings) or "_No agent file found._"
    return Report(
        title=f"Findings: {job.topic}",
        sections=[
            ("What the folder holds", f"{len(agents)} agent file(s) in `{Path.cwd().name}/`."),
            ("Findings", lines),
        ],
        knowledge_items=findings or ["no agent file found"],
    )


def plan(job: Job) -> Report:
    """Planning phase: an outline whose sections each reference the findings they are written from."""
    findings = [item for up in job.upstream for item in up.knowledge_items]
    sections = ["Overview", *(f.split(" (", 1)[0] for f in findings), "Running them"]
    outline = "\n".join(f"{n}. {s}" for n, s in enumerate(sections, 1))
    referenced = "\n".join(f"- {f}" for f in findings) or "_no findings_"
    return Report(
        title=f"Plan: {job.topic}",
        sections=[("Outline", outline), ("Findings it references", referenced)],
        knowledge_items=[f"plan: {len(sections)} sections: {', '.join(sections)}"],
    )


def write(job: Job) -> Report:
    """Writing phase: the page, section by section, from the approved plan and the findings it names."""
    plan_text = next(
        (up.artifact_text for up in job.upstream if up.artifact_text and "## Outline" in up.artifact_text), ""
    )
    findings = re.findall(r"^- (.+)$", plan_text.split("## Findings it references", 1)[-1], flags=re.M)
    body = [
        (
            "Overview",
            f"This page documents {len(findings)} agent(s), as the plan approved before it was written.",
        )
    ]
    for finding in findings:
        if found := SAID.match(finding):  # `name (file): what it does. Runs ...`, as research words it
            body.append((found["name"], f"{found['what']} (`{found['file']}`)"))
        else:
            body.append((finding.split(" ", 1)[0], finding))
    body.append(("Running them", "Start one worker per agent: `blackboard worker --agent NAME`."))
    words = sum(len(text.split()) for _, text in body)
    return Report(
        title=job.topic,
        sections=body,
        knowledge_items=[f"page written: {len(body)} sections, {words} words"],
    )


def interact(job: Job) -> Report:
    """Interaction phase: present what was written to the user, and end the flow."""
    page = next((up for up in job.upstream if up.artifact_path), None)
    headings = re.findall(r"^## (.+)$", page.artifact_text or "", flags=re.M) if page else []
    where = page.artifact_path if page else "nowhere"
    told = f"Your documentation is ready: {len(headings)} sections ({', '.join(headings)}), at {where}"
    return Report(
        title=f"Presented: {job.topic}",
        sections=[("Told the user", told), ("From", upstream_lines(job.upstream))],
        knowledge_items=[told],
    )


PHASES = {"research": research, "plan": plan, "write": write, "interact": interact}

if __name__ == "__main__":
    phase = sys.argv[1] if len(sys.argv) > 1 else ""
    if phase not in PHASES:
        print(f"docbot: give a phase, one of {', '.join(PHASES)}", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(PHASES[phase], f"docbot-{phase}"))
