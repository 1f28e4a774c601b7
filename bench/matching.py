"""(t) `match` for signals targeting `auto` (BM25F text scores, docs/matching.md) over folders of agent files:
a few dozen against 1,000, after the registry is loaded. The registry is loaded and the index built by
the first call (timed apart); then every measured call matches a signal of its own, with text of its
own, so no score comes from the index's cache of recent texts. `match` of a signal targeting a declared
capability, on the same folder, is measured beside it.

Two folders of 1,000: generated files whose body is one line, and the 109 public files of the labelled set
(tests/fixtures/matching) copied over and over under names of their own (bodies of 130 to 2,400 words, 860 in
the middle), asked the set's requests: the target is for both."""

from __future__ import annotations

import random
import re
import statistics
import time
from pathlib import Path
from typing import Any

from bench.common import Config, bench_container, progress, temp_dir
from bench.matching_set import AGENTS, load
from blackboard.application.commands import GetSignalById, PostSignal

TARGET_MS = 50.0  # match over 1,000 agent files, after the registry is loaded
AREAS = (
    "python",
    "rust",
    "sql",
    "react",
    "kubernetes",
    "terraform",
    "security",
    "docs",
    "testing",
    "api",
    "ml",
    "data",
    "mobile",
    "css",
    "graphql",
    "kafka",
    "spark",
    "postgres",
    "redis",
    "docker",
    "ci",
    "ios",
    "android",
    "accessibility",
    "performance",
    "logging",
    "billing",
    "search",
    "auth",
    "payments",
)
VERBS = (
    "reviews",
    "writes",
    "debugs",
    "optimizes",
    "designs",
    "migrates",
    "audits",
    "documents",
    "tests",
    "deploys",
    "refactors",
    "monitors",
    "profiles",
    "secures",
    "scales",
)
THINGS = (
    "queries",
    "services",
    "pipelines",
    "components",
    "schemas",
    "endpoints",
    "clusters",
    "models",
    "reports",
    "dashboards",
    "releases",
    "indexes",
    "workflows",
    "modules",
    "caches",
    "incidents",
    "contracts",
    "builds",
)


def agent_file(i: int, rng: random.Random) -> str:
    areas = rng.sample(AREAS, 3)
    words = " ".join(f"{rng.choice(VERBS)} {a} {rng.choice(THINGS)}," for a in areas)
    name = f"{areas[0]}-{rng.choice(('pro', 'expert', 'engineer', 'reviewer', 'architect'))}-{i:04d}"
    description = f"Specialist who {words} and explains trade-offs. Use proactively for {areas[0]} work."
    return (
        f'---\nname: {name}\ndescription: "{description}"\ncapabilities: {{{areas[0].upper()}: 0.9}}\n'
        f"tools: Read, Write, Bash\nmodel: sonnet\n---\nYou are {name}.\n"
    )


def request(rng: random.Random) -> tuple[str, str]:
    a, b = rng.sample(AREAS, 2)
    return (
        f"{rng.choice(VERBS)} the {a} {rng.choice(THINGS)}",
        f"Please look at the {a} {rng.choice(THINGS)} and the {b} {rng.choice(THINGS)}; they are slow and flaky.",
    )


def public_files(folder: Path, agents: int) -> None:
    """`agents` copies of the labelled set's public files, each under a name of its own."""
    files = sorted(AGENTS.rglob("*.md"))
    for i in range(agents):
        text = files[i % len(files)].read_text(encoding="utf-8")
        text = re.sub(r"^name: *(\S+)", lambda m: f"name: {m.group(1)}-{i:04d}", text, count=1, flags=re.M)
        (folder / f"agent-{i:04d}.md").write_text(text, encoding="utf-8")


def _case(folder: Path, agents: int, reps: int, public: bool = False) -> dict[str, Any]:
    rng = random.Random(agents)
    folder.mkdir()
    if public:
        public_files(folder, agents)
    else:
        for i in range(agents):
            (folder / f"agent-{i:04d}.md").write_text(agent_file(i, rng), encoding="utf-8")
    asked = [t.text for t in load().tasks]
    container = bench_container(
        f"sqlite:///{folder.parent / f'{folder.name}.db'}", agents_dir=folder, post_timeout=86_400
    )
    service, queries = container.service(), container.queries()

    def post(i: int, targets: tuple[str, ...]) -> str:
        topic, prompt = (f"request {i}", asked[i % len(asked)]) if public else request(rng)
        return service.post_signal(
            PostSignal(
                signal_type="RESEARCH",
                ps_id="ps-m",
                entry_id=f"e-{i}",
                topic=topic,
                prompt=prompt,
                target_capabilities=targets,
            )
        ).signal_id

    # posting scores the signal (is anybody able to take it?): that first call loads the registry and builds the index
    started = time.perf_counter()
    first = post(0, ("auto",))
    load_ms = (time.perf_counter() - started) * 1000
    auto_ids = [post(i, ("auto",)) for i in range(1, reps + 1)]
    declared_ids = [post(i, ("PYTHON",)) for i in range(reps + 1, 2 * reps + 1)]

    registry = container.agent_registry()
    texts = [f"{request(rng)[1]} ({i})" for i in range(reps)]  # each its own: none from the cache
    measured = {
        "match_auto_ms": median_ms_of(queries, auto_ids),
        "match_declared_ms": median_ms_of(queries, declared_ids),
        "match_auto_cpu_ms": median_ms_of(queries, auto_ids, cpu=True),
        "text_scores_ms": median_ms(registry.text_scores, texts),
    }
    best = queries.match(GetSignalById(signal_id=first))[0]
    container.engine().dispose()
    return {
        "agents": agents,
        "files": "public, copied" if public else "generated",
        "load_and_index_ms": round(load_ms, 1),
        **measured,
        "best_fit_of_first": f"{best.agent.agent_id} {best.score:.2f}",
    }


def median_ms(score: Any, texts: list[str]) -> float:
    """The text scores alone, without the look at the folder that every `match` starts with."""
    times = []
    for text in texts:
        begun = time.perf_counter()
        score(text)
        times.append((time.perf_counter() - begun) * 1000)
    return round(statistics.median(times), 2)


def median_ms_of(queries: Any, ids: list[str], cpu: bool = False) -> float:
    """The median wall time of `match` (its CPU time with `cpu`: on a loaded machine, what the call itself costs)."""
    clock = time.process_time if cpu else time.perf_counter
    times = []
    for signal_id in ids:
        begun = clock()
        queries.match(GetSignalById(signal_id=signal_id))
        times.append((clock() - begun) * 1000)
    return round(statistics.median(times), 2)


def run(config: Config) -> dict[str, Any]:
    reps = config["BENCH_MATCH_REPS"]
    cases = {}
    big = config["BENCH_MATCH_AGENTS"]
    with temp_dir("match") as where:
        for label, agents, public in (
            ("25", 25, False),
            (str(big), big, False),
            (f"{big} public", big, True),
        ):
            progress(f"(t) match over {agents} agent files ({'public' if public else 'generated'})")
            cases[label] = _case(where / f"agents-{label.replace(' ', '-')}", agents, reps, public)
    large = [c for c in cases.values() if c["agents"] == big]
    return {
        "reps": reps,
        "cases": cases,
        "target_ms": TARGET_MS,
        "pass": big >= 1000 and all(c["match_auto_ms"] <= TARGET_MS for c in large),
    }
