"""ps-researcher's handler: research notes on a topic, from the signal's prompt, context and upstream results
(offline)."""

from __future__ import annotations

import sys

from handler_kit import Job, Report, context_lines, key_terms, main, sentences, upstream_lines


def build(job: Job) -> Report:
    text = " ".join([job.topic, job.prompt, *map(str, job.context.values())])
    terms = key_terms(text)
    asked = [s for s in sentences(job.prompt) if s.endswith("?")]
    questions = asked + [
        f"What prior work or existing practice covers {job.topic}?",
        f"Which constraints in the context ({', '.join(sorted(job.context)) or 'none given'}) limit the options?",
        "What evidence would change the conclusion?",
    ]
    known = [item for up in job.upstream for item in up.knowledge_items]
    findings = [f"The signal states: {s}" for s in sentences(job.prompt) if not s.endswith("?")]
    findings += [f"Given: {key} = {value}" for key, value in sorted(job.context.items())]
    findings += [f"Earlier work found: {item}" for item in known]
    sections = [
        ("Question", job.prompt or f"_No prompt was given; the topic is the question: {job.topic}._"),
        ("What is already known", context_lines(job.context)),
        ("Upstream results", upstream_lines(job.upstream)),
        ("Key terms", "\n".join(f"- {t}" for t in terms) or "_none_"),
        ("Findings", "\n".join(f"- {f}" for f in findings) or "_The signal carries no facts yet._"),
        ("Questions to answer next", "\n".join(f"{i}. {q}" for i, q in enumerate(questions, 1))),
        (
            "Method",
            "Offline example handler: no web search and no model; every finding above is taken "
            "from the signal itself, so a reviewer can trace each one.",
        ),
    ]
    return Report(
        title=f"Research notes: {job.topic}",
        sections=sections,
        knowledge_items=[
            f"Research on '{job.topic}': key terms {', '.join(terms[:5]) or 'none'}",
            f"Research on '{job.topic}': {len(findings)} finding(s), {len(questions)} open question(s)",
        ],
    )


if __name__ == "__main__":
    sys.exit(main(build, "ps-researcher"))
