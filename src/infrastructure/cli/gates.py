"""`blackboard approve` and `blackboard reject`: a person decides a gate (docs/control.md, "Gates")."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from blackboard.application.commands import ApproveGate, RejectGate
from blackboard.domain.errors import AgentsCannotDecide
from blackboard.infrastructure.cli import render
from blackboard.infrastructure.cli.render import Output
from blackboard.infrastructure.container import Container
from blackboard.infrastructure.injection import Provide, inject

Lazy = Callable[[], Any]  # a provider: called only once the input has been validated
IN_A_RUN = "BLACKBOARD_AGENT"  # set for a handler's or a runner's process (agents/handler.py)


@inject
def approve(args: argparse.Namespace, service: Lazy = Provide[Container.service.provider]) -> Output:
    command = ApproveGate(signal_id=args.signal_id, approved_by=args.by, note=args.note)
    _refuse_an_agent("approve")
    return render.signal(service().approve_gate(command))


@inject
def reject(args: argparse.Namespace, service: Lazy = Provide[Container.service.provider]) -> Output:
    command = RejectGate(signal_id=args.signal_id, rejected_by=args.by, reason=args.reason)
    _refuse_an_agent("reject")
    return render.signal(service().reject_gate(command))


def _refuse_an_agent(action: str) -> None:
    """A handler's or a runner's process runs with its agent's name in the environment: an agent's call,
    which a gate refuses (exit 3); a person's shell has none."""
    if agent := os.environ.get(IN_A_RUN):
        raise AgentsCannotDecide(f"agent {agent}'s run ({IN_A_RUN} is set)", action)
