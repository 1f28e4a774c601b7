"""(t) `match` for signals targeting `auto` (BM25 text scores, docs/matching.md) over folders of agent files:
a few dozen against 1,000, after the registry is loaded. The registry is loaded and the index built by
the first call (timed apart); then every measured call matches a signal of its own, with text of its
own, so no score comes from the index's cache of recent texts. `match` of a signal targeting a declared
capability, on the same folder, is measured beside it."""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path
from typing import Any

from bench.common import Config, bench_container, progress, temp_dir
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


def _case(folder: Path, agents: int, reps: int) -> dict[str, Any]:
    rng = random.Random(agents)
    folder.mkdir()
    for i in range(agents):
        (folder / f"agent-{i:04d}.md").write_text(agent_file(i, rng), encoding="utf-8")
    container = bench_container(
        f"sqlite:///{folder.parent / f'm{agents}.db'}", agents_dir=folder, post_timeout=86_400
    )
    service, queries = container.service(), container.queries()

    def post(i: int, targets: tuple[str, ...]) -> str:
        topic, prompt = request(rng)
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

    measured = {
        "match_auto_ms": median_ms_of(queries, auto_ids),
        "match_declared_ms": median_ms_of(queries, declared_ids),
    }
    best = queries.match(GetSignalById(signal_id=first))[0]
    container.engine().dispose()
    return {
        "agents": agents,
        "load_and_index_ms": round(load_ms, 1),
        **measured,
        "best_fit_of_first": f"{best.agent.agent_id} {best.score:.2f}",
    }


def median_ms_of(queries: Any, ids: list[str]) -> float:
    times = []
    for signal_id in ids:
        begun = time.perf_counter()
        queries.match(GetSignalById(signal_id=signal_id))
        times.append((time.perf_counter() - begun) * 1000)
    return round(statistics.median(times), 2)


def run(config: Config) -> dict[str, Any]:
    reps = config["BENCH_MATCH_REPS"]
    cases = {}
    with temp_dir("match") as where:
        for agents in (25, config["BENCH_MATCH_AGENTS"]):
            progress(f"(t) match over {agents} agent files")
            cases[str(agents)] = _case(where / f"agents-{agents}", agents, reps)
    big = cases[str(config["BENCH_MATCH_AGENTS"])]
    return {
        "reps": reps,
        "cases": cases,
        "target_ms": TARGET_MS,
        "pass": big["match_auto_ms"] <= TARGET_MS and big["agents"] >= 1000,
    }
