"""`blackboard approve` and `blackboard reject`: a person decides a gate (docs/control.md, "Gates")."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from dependency_injector.wiring import Provide, inject

from blackboard.application.commands import ApproveGate, RejectGate
from blackboard.infrastructure.cli import render
from blackboard.infrastructure.cli.render import Output
from blackboard.infrastructure.composition.container import Container

Lazy = Callable[[], Any]  # a provider: called only once the input has been validated


@inject
def approve(args: argparse.Namespace, service: Lazy = Provide[Container.service.provider]) -> Output:
    command = ApproveGate(signal_id=args.signal_id, approved_by=args.by, note=args.note)
    return render.signal(service().approve_gate(command))


@inject
def reject(args: argparse.Namespace, service: Lazy = Provide[Container.service.provider]) -> Output:
    command = RejectGate(signal_id=args.signal_id, rejected_by=args.by, reason=args.reason)
    return render.signal(service().reject_gate(command))
