"""A tool: its name, what it does, its argument model, and the function that runs a call.

`run(session, arguments, progress)` gets the arguments validated (as the tool's fields, the
command's defaults left to the command model) and returns the JSON document the CLI prints with
`--json`. A tool that `waits` runs in a worker thread, so the server serves other calls meanwhile;
the others are one short transaction each and run on the event loop (a hop to a thread and back
cost more than the post itself on a busy machine).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

from pydantic import BaseModel

from blackboard.application.callers import Act, Caller, refusal
from blackboard.application.errors import NotPermitted
from blackboard.infrastructure.interfaces.names import accepted as former_names
from blackboard.infrastructure.mcp.schemas import accepted, compact
from blackboard.infrastructure.mcp.session import Progress, Session


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    arguments: type[BaseModel]
    run: Callable[[Session, dict[str, Any], Progress], Any]
    waits: bool = False

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        return compact(self.arguments.model_json_schema())

    def call(self, session: Session, arguments: dict[str, Any], progress: Progress) -> Any:
        given = former_names(self.name.removeprefix("blackboard_").removesuffix("_signal"), arguments)
        return self.run(session, session.admit(self.name, accepted(self.arguments, given)), progress)


CLAIM_TOOLS = frozenset({"blackboard_claim", "blackboard_complete", "blackboard_fail"})
# A run works on its claim: it ends other signals neither one by one nor in bulk (a person or a lead does)
CANCEL_TOOLS = frozenset({"blackboard_cancel", "blackboard_cancel_all"})
# A person decides a gate and nudges a run: a person's server's only (started without --agent, not a run's)
GATE_TOOLS = frozenset({"blackboard_approve", "blackboard_reject", "blackboard_nudge"})
# A person's tools, left out of an agent's server and a run's session: a call to one is refused by the table
PERSON_ACTS = {
    "blackboard_approve": (Act.DECIDE, "approve a gate"),
    "blackboard_reject": (Act.DECIDE, "reject a gate"),
    "blackboard_budget": (Act.LIMITS, "set a board's budget"),
    "blackboard_nudge": (Act.NUDGE, "nudge a running agent"),
}
# A person's server's and a run's bound session's (its board's): an agent's own server's tool list is at its
# cap of characters of JSON (MAX_TOOLS_JSON), where a bound session's, with no claim, complete, fail or
# cancel, has room for it
SEARCH_TOOLS = frozenset({"blackboard_search"})
# characters of an agent's tool list, as a model is sent it with every request (12,000 until labels on
# post and signals made it 12,258)
MAX_TOOLS_JSON = 12_500
FLOW_TOOLS = frozenset({"blackboard_flow_run", "blackboard_flow_status"})
FOLLOW_TOOLS = frozenset({"blackboard_follow"})  # a person's server's, as the flow tools


def not_offered(caller: Caller, name: str) -> NotPermitted:
    """The refusal of a person's tool (PERSON_ACTS) where it is not offered: the table's words for the caller."""
    act, verb = PERSON_ACTS[name]
    return refusal(caller, act, verb) or NotPermitted(caller.who, verb, "this server does not offer it")


@cache  # the tools hold no state: built once per process, their schemas with them (a runner's run each)
def every_tool(with_agent: bool, bound: bool = False) -> dict[str, Tool]:
    """The contract's tools, by name. A server with an agent writes, posts and resolves as it; one
    without takes the `author` (`posted_by`) each call names. A session bound to a claim (a runner's run)
    offers no claim, complete or fail (its final answer is the outcome) and no cancel. Only a person's
    server (no agent, not bound) offers approve, reject and budget: agents cannot decide gates or budgets.
    Search is a person's server's and a bound session's (on its run's board); an agent's own server's
    tools are at their cap (MAX_TOOLS_JSON), and the flow tools and follow are a person's server's."""
    from blackboard.infrastructure.mcp.flow_tools import flow_tools
    from blackboard.infrastructure.mcp.follow_tools import follow_tools
    from blackboard.infrastructure.mcp.knowledge_tools import knowledge_tools, search_tools
    from blackboard.infrastructure.mcp.limit_tools import limit_tools
    from blackboard.infrastructure.mcp.signal_tools import gate_tools, signal_tools

    person = not with_agent and not bound
    tools = (
        *signal_tools(with_agent),
        *knowledge_tools(with_agent),
        *(gate_tools() if person else ()),
        *(search_tools(bound) if person or bound else ()),  # SEARCH_TOOLS
        *(flow_tools() if person else ()),  # FLOW_TOOLS
        *(follow_tools() if person else ()),  # FOLLOW_TOOLS
        *limit_tools(not person),
    )
    return {tool.name: tool for tool in tools if not (bound and tool.name in CLAIM_TOOLS | CANCEL_TOOLS)}
