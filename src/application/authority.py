"""Authority: the table of application/callers.py applied to whoever calls now, a run's claim checked as stored."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from blackboard.application.callers import PERSON, RULES, Act, Caller, refusal
from blackboard.application.errors import NotPermitted
from blackboard.application.ports import Clock, SignalReadModel
from blackboard.domain.knowledge.permissions import lease_live
from blackboard.domain.signals import AgentSignal, SignalStatus

M = TypeVar("M")


class Authority:
    """The table applied to the caller at hand (`caller()`, asked at each check: an entrypoint's run is the
    caller only while its function runs). A run's writes also need its claim live, read as stored."""

    def __init__(
        self,
        caller: Callable[[], Caller] = lambda: PERSON,
        signals: SignalReadModel | None = None,
        clock: Clock | None = None,
        claim_timeout: timedelta | None = None,
    ) -> None:
        self._caller = caller
        self._signals = signals
        self._clock = clock
        self._claim_timeout = claim_timeout or timedelta.max

    def acting(self, caller: Caller) -> Authority:
        """The same authority for one caller, whoever the process is (an MCP session, the web view)."""
        return Authority(lambda: caller, self._signals, self._clock, self._claim_timeout)

    def caller(self) -> Caller:
        return self._caller()

    def check(self, act: Act, verb: str | None = None) -> Caller:
        """The caller, if TABLE lets it do `act`; else NotPermitted. A run (or a bound session) asking to
        write must hold its claim: `held` checks it. `verb` says the act in a refusal's words."""
        caller = self._caller()
        if (refused := refusal(caller, act, verb)) is not None:
            raise refused
        if caller.holds_a_claim and act is not Act.READ:
            self.held(caller, verb or act.value)
        return caller

    def reach(self, board: str | None) -> str | None:
        """The board a call may reach: the one it names, if the caller is confined to none or to that one;
        for a call naming none, the caller's own board (None, every board, when it is confined to none).
        A board the caller is not confined to: NotPermitted, nothing read or written."""
        caller = self._caller()
        confined = caller.confined_to
        if confined is None or board is None:
            return board if confined is None else confined
        if board != confined:
            raise NotPermitted(caller.who, f"reach board {board}", f"it is confined to board {confined}")
        return board

    def checkpoint(self, board: str) -> Caller:
        """The caller, if it may save or delete LangGraph checkpoints on `board` (the table's CHECKPOINT row):
        a run on its own signal's board only, while its claim holds; a confined caller on its board only."""
        caller = self.check(Act.CHECKPOINT)
        self.reach(board)
        if caller.holds_a_claim and caller.board is not None and caller.board != board:
            raise NotPermitted(
                caller.who, f"save checkpoints on board {board}", f"its signal is of board {caller.board}"
            )
        return caller

    def held(self, caller: Caller, verb: str, stored: AgentSignal | None = None) -> AgentSignal:
        """The run's signal, if its claim is live as stored (`stored`, as a transaction holds it, else read):
        CLAIMED by its agent under its token, its lease not run out; else NotPermitted saying why."""
        if not (caller.agent and caller.signal_id and caller.token):
            missing = [
                name
                for name, value in (
                    ("agent", caller.agent),
                    ("signal", caller.signal_id),
                    ("token", caller.token),
                )
                if not value
            ]
            why = f"it presents no claim the board can check (no {', '.join(missing)})"
            raise NotPermitted(caller.who, verb, why)
        signal = stored
        if signal is None and self._signals is not None:
            signal = self._signals.get(caller.signal_id)
        if signal is None:
            raise NotPermitted(caller.who, verb, f"the board has no signal {caller.signal_id}")
        if signal.status is not SignalStatus.CLAIMED:
            raise NotPermitted(caller.who, verb, f"its claim is over: {signal.signal_id} is {signal.status}")
        if not signal.held_by_claim(caller.agent, caller.token):
            raise NotPermitted(
                caller.who, verb, f"its claim is over: {signal.signal_id} is held by another claim"
            )
        if self._clock is not None and not lease_live(signal, self._clock.now(), self._claim_timeout):
            raise NotPermitted(caller.who, verb, "its claim is over: it ran past its claim timeout")
        return signal

    def named(self, caller: Caller, command: M, field_name: str, verb: str) -> M:
        """An agent's command under its own name: a name the caller gave (`field_name` set) must be its
        agent's, else NotPermitted; one left to its default becomes its agent's. A person's as given."""
        if not caller.is_agent:
            return command
        given = getattr(command, field_name)
        if field_name in getattr(command, "model_fields_set", ()) and given != caller.agent:
            raise NotPermitted(caller.who, f"{verb} as {given}", RULES[Act.AS_ANOTHER].why)
        return command if given == caller.agent else _with(command, field_name, caller.agent)

    def own_claim(self, caller: Caller, signal_id: str, agent_id: str, verb: str) -> None:
        """An agent ends (or renews) only its own claims; a run only its own signal."""
        if not caller.is_agent:
            return
        if agent_id != caller.agent:
            raise NotPermitted(caller.who, f"{verb} as {agent_id}", RULES[Act.AS_ANOTHER].why)
        if caller.holds_a_claim and signal_id != caller.signal_id:
            raise NotPermitted(caller.who, f"{verb} {signal_id}", RULES[Act.FINISH].why)


def _with(command: Any, field_name: str, value: str) -> Any:
    return command.model_copy(update={field_name: value})
