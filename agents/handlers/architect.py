"""ps-architect's handler: a decision record (DECISION) or a synthesis (SYNTHESIS) built from the upstream
results (offline)."""

from __future__ import annotations

import sys

from handler_kit import Job, Report, context_lines, main, upstream_lines


def options_of(job: Job) -> list[str]:
    given = job.context.get("options") or []
    return [str(o) for o in given] if isinstance(given, list) else [str(given)]


def choose(options: list[str], evidence: str) -> tuple[str, dict[str, int]]:
    """The option the inputs mention most; ties go to the one listed first."""
    mentions = {o: evidence.count(o.lower()) for o in options}
    return max(options, key=lambda o: mentions[o]), mentions


def build(job: Job) -> Report:
    usable = [up for up in job.upstream if not up.error]
    items = list(dict.fromkeys(i for up in usable for i in up.knowledge_items))
    evidence = " ".join(items + [up.artifact_text or "" for up in usable]).lower()
    concerns = [i for i in items if "changes requested" in i.lower()]
    concerns += [f"{up.signal_id} failed: {up.error}" for up in job.upstream if up.error]
    options = options_of(job)
    if options:
        chosen, mentions = choose(options, evidence)
        decision = f"Adopt **{chosen}**."
        weighing = "\n".join(f"- {o}: mentioned {n} time(s) by the inputs" for o, n in mentions.items())
    else:
        chosen, decision = None, f"Proceed on the basis of the {len(items)} finding(s) below."
        weighing = "_No options were given (payload.context.options); the inputs are merged as they are._"
    is_decision = job.signal_type != "SYNTHESIS"
    sections = [
        ("Status", "Proposed" + (", with open concerns" if concerns else "")),
        ("Context", (job.prompt or job.topic) + "\n\n" + context_lines(job.context)),
        ("Inputs", upstream_lines(job.upstream)),
        ("Merged findings", "\n".join(f"- {i}" for i in items) or "_No upstream knowledge items._"),
        ("Options", weighing),
        ("Decision" if is_decision else "Synthesis", decision),
        (
            "Consequences",
            "\n".join(f"- Resolve first: {c}" for c in concerns)
            or "- No input raised a concern; the next step can start from this record.",
        ),
    ]
    summary = chosen or f"{len(items)} findings merged from {len(usable)} inputs"
    return Report(
        title=f"{'Decision record' if is_decision else 'Synthesis'}: {job.topic}",
        sections=sections,
        knowledge_items=[
            f"{'Decision' if is_decision else 'Synthesis'} on '{job.topic}': {summary}",
            *[f"Open concern: {c}" for c in concerns],
        ],
    )


if __name__ == "__main__":
    sys.exit(main(build, "ps-architect"))
