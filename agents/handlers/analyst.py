"""ps-analyst's handler: breaks the signal's prompt into requirements, questions and statements, and weighs
the inputs (offline)."""

from __future__ import annotations

import re
import sys

from handler_kit import Job, Report, context_lines, key_terms, main, sentences, upstream_lines

REQUIREMENT = re.compile(r"\b(must|shall|should|need|needs|required?|only|never|always)\b", re.IGNORECASE)


def classify(sentence: str) -> str:
    if sentence.endswith("?"):
        return "question"
    return "requirement" if REQUIREMENT.search(sentence) else "statement"


def build(job: Job) -> Report:
    parts = [(s, classify(s)) for s in sentences(job.prompt)] or [(job.topic, "statement")]
    by_kind = {k: [s for s, kind in parts if kind == k] for k in ("requirement", "question", "statement")}
    failed = [up.signal_id for up in job.upstream if up.error]
    rows = "\n".join(f"| {i} | {kind} | {s.replace('|', '/')} |" for i, (s, kind) in enumerate(parts, 1))
    assessment = [
        f"- {len(by_kind['requirement'])} requirement(s) to satisfy, {len(by_kind['question'])} question(s) open, "
        f"{len(by_kind['statement'])} statement(s) taken as given.",
        f"- {len(job.context)} context fact(s) and {len(job.upstream)} upstream result(s) inform the analysis.",
        f"- Main themes: {', '.join(key_terms(job.topic + ' ' + job.prompt, 5)) or 'none'}.",
    ]
    if failed:
        assessment.append(f"- Inputs that failed and cannot be relied on: {', '.join(failed)}.")
    if by_kind["question"]:
        assessment.append("- Open before deciding: " + "; ".join(by_kind["question"]))
    checklist = "\n".join(f"- [ ] {r}" for r in by_kind["requirement"]) or "_No explicit requirements._"
    return Report(
        title=f"Analysis: {job.topic}",
        sections=[
            ("Statement", job.prompt or f"_No prompt was given; analysing the topic: {job.topic}._"),
            ("Breakdown", "| # | kind | text |\n|---|---|---|\n" + rows),
            ("Inputs", context_lines(job.context)),
            ("Upstream results", upstream_lines(job.upstream)),
            ("Assessment", "\n".join(assessment)),
            ("Requirements checklist", checklist),
        ],
        knowledge_items=[
            f"Analysis of '{job.topic}': {len(by_kind['requirement'])} requirement(s), "
            f"{len(by_kind['question'])} open question(s), {len(job.context)} context fact(s)",
            *[f"Requirement: {r}" for r in by_kind["requirement"]],
        ],
    )


if __name__ == "__main__":
    sys.exit(main(build, "ps-analyst"))
