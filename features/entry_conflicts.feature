@knowledge
Feature: Agents share what they know, and a disagreement is kept until someone settles it
  As agents working on one problem
  I want to write our findings under keys we agree on, and to see when we disagree
  So that no finding is ever overwritten silently, and a lead can settle each disagreement

  Background:
    Given "ps-researcher" has written "append-only log" under "findings/store"

  Scenario: An agent refines its own finding
    When "ps-researcher" writes "append-only log with snapshots" under "findings/store"
    Then the write is accepted as version 2
    And "findings/store" reads "append-only log with snapshots"

  Scenario: A second agent who agrees adds a version, not a conflict
    When "ps-analyst" writes "append-only log" under "findings/store"
    Then the write is accepted as version 2
    And "findings/store" is not in conflict

  Scenario: A second agent who disagrees puts the key in conflict
    When "ps-analyst" writes "document store" under "findings/store"
    Then the write is refused because "findings/store is held by ps-researcher"
    And "findings/store" reads "append-only log"
    And the candidates for "findings/store" are "append-only log" by "ps-researcher" and "document store" by "ps-analyst"

  Scenario: While the key is in conflict, every further write becomes another candidate
    Given "ps-analyst" has written "document store" under "findings/store"
    When "ps-researcher" writes "event store" under "findings/store"
    Then the write is refused because "kept as candidate version 3"
    And "findings/store" has 3 candidates

  Scenario: A lead settles the conflict by picking one candidate
    Given "ps-analyst" has written "document store" under "findings/store"
    When "ps-lead" picks version 2 of "findings/store" because "it cites benchmarks"
    Then "findings/store" reads "document store"
    And "findings/store" is not in conflict
    And the last version of "findings/store" was written by "ps-lead" because "it cites benchmarks"

  Scenario: A lead settles the conflict with a merged value
    Given "ps-analyst" has written "document store" under "findings/store"
    When "ps-lead" merges "findings/store" into "log first, documents as a view" because "both are right"
    Then "findings/store" reads "log first, documents as a view"
    And "findings/store" is not in conflict

  Scenario: A write that replaces a version that is no longer current writes nothing
    Given "ps-researcher" has written "append-only log, again" under "findings/store"
    When "ps-analyst" replaces version 1 of "findings/store" with "document store"
    Then the write is refused because "at version 2, not 1"
    And "findings/store" has 2 versions

  Scenario: A completed signal's findings land on the board
    Given an agent "ps-researcher" able to do "RESEARCH" at 0.9
    And a "RESEARCH" signal has been posted
    And "ps-researcher" has claimed the signal
    When "ps-researcher" completes the signal with the finding "WAL is enough"
    Then the board holds the finding "WAL is enough" by "ps-researcher", linked to the signal
