"""`make demo-claude`: three public agent files (the plugin's, plugin/agents/) do a piece of work in turn
through the `claude-code` runner, on a fresh SQLite board: a competitive analyst researches, a technical
writer writes from the research, a code reviewer reviews the writing. Each signal waits for the one before
(`--after`), so its prompt carries that one's result; one `blackboard worker --once` per agent runs Claude
Code on it. Then the results and what each run cost, and `blackboard solve` on a problem when that command
exists.

It calls a real model, so it needs ANTHROPIC_API_KEY or a signed-in Claude Code, and says so at once (exit 2)
without either. ANTHROPIC_BASE_URL points it elsewhere (tests/plugin/test_demo_claude.py: a stand-in).
`make demo` stays offline; this is its counterpart with a model.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
AGENTS_DIR = ROOT / "plugin" / "agents"
PINNED_CLAUDE = ROOT / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude"
WORK = Path(".blackboard") / "demo-claude"
DB = WORK / "board.db"
BOARD = "ps-demo-claude"
BLACKBOARD = str(Path(sys.executable).parent / "blackboard")
RUN_TIMEOUT = 900  # seconds for one agent's run, start to end
BUDGET_USD = "0.50"  # what one signal's run may spend (post --budget-usd)
TEAM = "a Python web team of four"
STEPS = (
    # (agent, signal type, topic, instructions)
    (
        "competitive-analyst",
        "RESEARCH",
        "Python task queues compared",
        f"Compare Celery, RQ and Dramatiq for {TEAM} picking a background task queue: setup effort, "
        "reliability (retries, acknowledgement), monitoring, and who maintains each. Answer from what you "
        "know, without browsing or reading files; at most 200 words.",
    ),
    (
        "technical-writer",
        "SYNTHESIS",
        "a one-page recommendation",
        "From the research result above, write a one-page recommendation for the team: the pick, why, and "
        "the first three steps to adopt it. Give it as your final message (do not write files); at most "
        "250 words.",
    ),
    (
        "code-reviewer",
        "REVIEW",
        "review the recommendation",
        "Review the recommendation above for accuracy and clarity, as you would review a design document: "
        "at most five concrete fixes, most important first, then a one-line verdict. Do not read or change "
        "files.",
    ),
)


def say(text: str = "") -> None:
    print(text, flush=True)


def stop(message: str, code: int = 2) -> None:
    print(f"make demo-claude: {message}", file=sys.stderr, flush=True)
    raise SystemExit(code)


def claude() -> str | None:
    """The `claude` the runner will start: BLACKBOARD_CLAUDE, else `claude` on PATH, else the pinned one
    `make tools` puts in .tools/claude-code."""
    named = os.environ.get("BLACKBOARD_CLAUDE")
    found = shutil.which(named) if named else shutil.which("claude")
    if found is None and not named and os.access(PINNED_CLAUDE, os.X_OK):
        found = str(PINNED_CLAUDE)
    return found


INSTALL_CLAUDE = (
    "Claude Code's `claude`: run `make tools` (it installs the pinned version into .tools/claude-code), "
    "or install it (npm install -g @anthropic-ai/claude-code), or set BLACKBOARD_CLAUDE to its path"
)


def credentials(executable: str | None) -> str:
    """How the runs reach the model: the API key, else the signed-in Claude Code; or stop at once."""
    if os.environ.get("ANTHROPIC_API_KEY"):
        return "ANTHROPIC_API_KEY (each run is `claude -p --bare`: the key is its only credential)"
    signed_in = False
    if executable is not None:
        try:
            status = subprocess.run(
                [executable, "auth", "status", "--json"], capture_output=True, text=True, timeout=60
            )
            signed_in = status.returncode == 0 and json.loads(status.stdout).get("loggedIn") is True
        except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError):
            signed_in = False
    if not signed_in:
        stop(
            "set ANTHROPIC_API_KEY (an Anthropic API key: ANTHROPIC_API_KEY=sk-ant-... make demo-claude), "
            "or sign Claude Code in (`claude auth login`); this demo calls a real model, a few cents' worth, "
            "and `make demo` runs offline."
            + ("" if executable is not None else f" It also needs {INSTALL_CLAUDE}.")
        )
    return "the signed-in Claude Code (`claude auth status`)"


def environment(executable: str) -> dict[str, str]:
    """The board's settings, the demo's own: a fresh file, the plugin's agents, Claude Code's path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    env.update(
        BLACKBOARD_DB=f"sqlite:///{DB.resolve()}",
        BLACKBOARD_AGENTS_DIR=str(AGENTS_DIR),
        BLACKBOARD_ARTIFACTS_DIR=str((WORK / "artifacts").resolve()),
        BLACKBOARD_CLAUDE=executable,
        BLACKBOARD_POST_TIMEOUT="3600",  # a signal waits while the ones before it run
        BLACKBOARD_JSON="",
    )
    if "BLACKBOARD_MODEL" in os.environ:  # the one setting of the user's kept: the model for `inherit`
        env["BLACKBOARD_MODEL"] = os.environ["BLACKBOARD_MODEL"]
    return env


def cli(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([BLACKBOARD, *args], env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        stop(f"`blackboard {' '.join(args)}` failed ({done.returncode}): {done.stderr.strip()}", 1)
    return done


def data(env: dict[str, str], *args: str) -> Any:
    return json.loads(cli(env, "--json", *args).stdout)


def shown(text: str, limit: int = 40) -> str:
    lines = text.rstrip().splitlines()
    cut = lines[:limit] + ([f"... ({len(lines) - limit} more lines)"] if len(lines) > limit else [])
    return "\n".join("   | " + line for line in cut)


def usage_line(usage: dict[str, Any] | None) -> str:
    if not usage:
        return "no usage recorded"
    cost = f"${usage['cost_usd']:.4f}" if usage.get("cost_usd") is not None else "cost unknown"
    return (
        f"{usage.get('model') or '?'}, {usage['turns']} turn(s), {usage['input_tokens']} tokens in, "
        f"{usage['output_tokens']} out, {cost}, {usage['duration_ms'] / 1000:.1f} s"
    )


def run_pipeline(env: dict[str, str]) -> list[dict[str, Any]]:
    posted: list[str] = []
    say("\n2. The work is posted: each step waits for the one before (--after), each targets its agent.")
    for number, (agent, kind, topic, prompt) in enumerate(STEPS, start=1):
        args = ["post", "--type", kind, "--ps-id", BOARD, "--entry-id", f"e-{number}", "--topic", topic]
        args += ["--prompt", prompt, "--capability", agent, "--budget-usd", BUDGET_USD]
        args += ["--key", f"{BOARD}/e-{number}", "--posted-by", "demo-claude"]
        for before in posted[-1:]:
            args += ["--after", before]
        signal = data(env, *args)
        posted.append(signal["signal_id"])
        after = f", after {posted[-2]}" if len(posted) > 1 else ""
        say(f"   {signal['signal_id']}  {kind:<9} for {agent:<19} {topic!r}{after}")

    say(
        "\n3. One `blackboard worker --agent NAME --once` per agent, in turn: Claude Code runs the agent file."
    )
    work = (WORK / "work").resolve()
    work.mkdir(parents=True, exist_ok=True)
    done: list[dict[str, Any]] = []
    for (agent, _, _, _), signal_id in zip(STEPS, posted, strict=True):
        say(f"\n   {agent} works on {signal_id} ...")
        worker = [BLACKBOARD, "worker", "--agent", agent, "--once", "--workdir", str(work)]
        try:
            subprocess.run(worker, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            stop(f"{agent}'s worker did not finish {signal_id} within {RUN_TIMEOUT} s", 1)
        signal = data(env, "show", signal_id)
        done.append(signal)
        result = signal.get("result") or {}
        say(f"   {signal['status']} by {signal.get('claimed_by') or '-'}: {usage_line(signal.get('usage'))}")
        if signal["status"] != "COMPLETED":
            stop(
                f"{signal_id} ended {signal['status']}: {result.get('error') or 'no error given'} "
                f"(its transcript: blackboard show {signal_id} --transcript)",
                1,
            )
        say(shown("\n\n".join(result.get("knowledge_items") or ["(no result text)"])))
    return done


def solve(env: dict[str, str]) -> None:
    """`blackboard solve`, the controller, on the same problem, when this version has the command."""
    has_solve = subprocess.run(
        [BLACKBOARD, "solve", "--help"], env=env, capture_output=True, text=True, timeout=60
    )
    if has_solve.returncode != 0:
        say("\n5. `blackboard solve` (the controller) is not in this version: skipped.")
        return
    say("\n5. `blackboard solve`: a controller agent picks the next specialist until the problem is solved.")
    args = [
        "solve",
        f"Recommend a background task queue (Celery, RQ or Dramatiq) for {TEAM}, with the reasons.",
    ]
    args += ["--blackboard", f"{BOARD}-solve", "--max-iterations", "6", "--start-workers"]
    args += ["--step-timeout", str(RUN_TIMEOUT)]
    done = subprocess.run(
        [BLACKBOARD, *args], env=env, capture_output=True, text=True, timeout=3 * RUN_TIMEOUT
    )
    say(shown(done.stdout or done.stderr, limit=60))
    if done.returncode != 0:
        stop(f"`blackboard {' '.join(args[:1])} ...` exited {done.returncode}: {done.stderr.strip()}", 1)


def main() -> None:
    executable = claude()
    how = credentials(executable)  # first: without a way to the model, nothing else is worth doing
    if executable is None:
        stop(f"needs {INSTALL_CLAUDE}")
    if DB.parent.exists():
        shutil.rmtree(DB.parent)
    WORK.mkdir(parents=True)
    env = environment(executable)
    say(f"A fresh blackboard: the SQLite file {DB}. The model is reached through {how}.")
    cli(env, "db", "upgrade")
    say(f"\n1. The agents: public agent files, as their authors wrote them ({AGENTS_DIR}/):")
    say(shown(cli(env, "agents").stdout))
    run_pipeline(env)
    say("\n4. What the runs cost, per agent and for the board (`blackboard status`):")
    say(shown(cli(env, "status", "--blackboard", BOARD).stdout, limit=60))
    solve(env)
    say(
        f"\nThe board stays in {DB}: `blackboard --db sqlite:///{DB} events --blackboard {BOARD}` replays it."
    )


if __name__ == "__main__":
    main()
