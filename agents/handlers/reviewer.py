"""ps-reviewer's handler: checks every upstream result of the signal and writes a review with a verdict (offline)."""

from __future__ import annotations

import sys

from handler_kit import Job, Report, Upstream, context_lines, main, upstream_lines


def checks(up: Upstream, job: Job) -> list[tuple[str, bool]]:
    """(what was checked, passed) for one upstream result."""
    if up.error:  # nothing else of a failed result is worth checking
        return [(f"completed without error (it failed: {up.error})", False)]
    text = (up.artifact_text or "").lower()
    topic = (up.topic or job.topic).lower()
    found = [
        ("completed without error", not up.error),
        ("names an artifact", bool(up.artifact_path)),
        ("the artifact can be read", up.artifact_text is not None),
        ("the artifact is not empty", bool(text.strip())),
        ("the artifact mentions its topic", bool(text) and topic in text),
        ("hands back knowledge items", bool(up.knowledge_items)),
    ]
    criteria = job.context.get("criteria") or []
    for word in criteria if isinstance(criteria, list) else [criteria]:
        found.append((f"the artifact covers '{word}'", str(word).lower() in text))
    return found


def build(job: Job) -> Report:
    results = {up.signal_id: checks(up, job) for up in job.upstream}
    passed = [sid for sid, found in results.items() if all(ok for _, ok in found)]
    verdict = (
        "NOTHING TO REVIEW"
        if not results
        else "APPROVED"
        if len(passed) == len(results)
        else "CHANGES REQUESTED"
    )
    blocks = []
    for sid, found in results.items():
        lines = [f"- [{'x' if ok else ' '}] {what}" for what, ok in found]
        blocks.append(f"### {sid}: {'pass' if sid in passed else 'needs work'}\n" + "\n".join(lines))
    failing = {
        sid: [what for what, ok in found if not ok] for sid, found in results.items() if sid not in passed
    }
    requests = [f"- {sid} fails: {', '.join(whats)}" for sid, whats in failing.items()]
    return Report(
        title=f"Review: {job.topic}",
        sections=[
            (
                "Verdict",
                f"**{verdict}**: {len(passed)} of {len(results)} upstream result(s) pass every check.",
            ),
            (
                "What was asked",
                job.prompt or "_No prompt; reviewing the upstream results against the topic._",
            ),
            (
                "Checks",
                "\n\n".join(blocks) or "_The signal has no upstream results (payload.context.upstream)._",
            ),
            ("Changes requested", "\n".join(requests) or "_None._"),
            ("Context", context_lines(job.context)),
            ("Reviewed inputs", upstream_lines(job.upstream)),
        ],
        knowledge_items=[
            f"Review of '{job.topic}': {verdict} ({len(passed)} of {len(results)} upstream results pass every check)",
            *[f"Review of '{job.topic}': {r[2:]}" for r in requests],
        ],
    )


if __name__ == "__main__":
    sys.exit(main(build, "ps-reviewer"))
