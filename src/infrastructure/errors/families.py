"""The error families: one table from each family of `BlackboardError` to its name and exit code.

Every interface reads it and none keeps a copy: the CLI exits with the family's code (cli/exits.py), an
MCP tool error names the family and that code (mcp/server.py), the Python API raises the family's class
under the family's name in CamelCase (`refused` is `blackboard.Refused`), and the web view answers with
the family's HTTP status. docs/cli.md's "Exit codes" table is held to it by a test. An error belongs to
exactly one family; one of none is `UNEXPECTED`. Light on purpose: the CLI's parser imports it before
the arguments are known.
"""

from __future__ import annotations

from dataclasses import dataclass

from blackboard.application.errors import TimedOut, Unavailable, UpgradeNeeded
from blackboard.domain.errors import InvalidInput, NotFound, RuleViolation


@dataclass(frozen=True, slots=True)
class Family:
    kind: type[Exception]
    name: str  # an MCP tool error's `family`; in CamelCase, the Python API's exception
    exit_code: int
    http_status: int  # the web view's answer

    @property
    def api_name(self) -> str:
        """The Python API's name for the family's class: `invalid_input` is `InvalidInput`."""
        return "".join(part.capitalize() for part in self.name.split("_"))


FAMILIES: tuple[Family, ...] = (
    Family(Unavailable, "unavailable", 1, 503),  # nothing was written; trying again may work
    Family(InvalidInput, "invalid_input", 2, 400),  # argparse's usage errors exit 2 too
    Family(RuleViolation, "refused", 3, 409),
    Family(NotFound, "not_found", 4, 404),
    Family(TimedOut, "timed_out", 5, 504),
    Family(UpgradeNeeded, "upgrade_needed", 6, 501),  # older than the log or database it reads; it stopped
)
NAMED = {family.name: family for family in FAMILIES}
UNEXPECTED = Family(Exception, "unexpected", 1, 500)  # of no family: a bug, a broken install


def family_of(error: BaseException) -> Family:
    """The family `error` belongs to; UNEXPECTED when it belongs to none (a `BlackboardError` too)."""
    return next((family for family in FAMILIES if isinstance(error, family.kind)), UNEXPECTED)
