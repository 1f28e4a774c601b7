"""`blackboard nudge`: a person's word to a running agent, given to it at its next turn (docs/agents.md, "Nudges")."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from dependency_injector.wiring import Provide, inject

from blackboard.application.commands import NudgeSignal
from blackboard.infrastructure.cli import render
from blackboard.infrastructure.cli.render import Output
from blackboard.infrastructure.composition.container import Container

Lazy = Callable[[], Any]  # a provider: called only once the input has been validated


@inject
def nudge(args: argparse.Namespace, service: Lazy = Provide[Container.service.provider]) -> Output:
    command = NudgeSignal(signal_id=args.signal_id, nudged_by=args.by, text=args.text)
    return render.signal(service().nudge_signal(command))
