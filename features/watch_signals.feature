@watching
Feature: Agents waiting downstream learn when the work they wait for is done
  As an agent whose work depends on another agent's result
  I want to hear of each completion of the kind of work I wait for
  So that I can fetch the result and carry on

  Background:
    Given an agent "ps-researcher" able to do "RESEARCH" at 0.9
    And an agent "ps-reviewer" able to do "REVIEW" at 0.9
    And a "RESEARCH" signal has been posted
    And "ps-researcher" has claimed the signal

  Scenario: A watcher of research completions is notified when the research completes
    Given a watcher listens for "RESEARCH" completions
    When "ps-researcher" completes the signal with artifact "docs/research/e-1.md"
    Then the watcher is notified of the signal
    And the watcher can read the result "docs/research/e-1.md"

  Scenario: A watcher of reviews is not told about research
    Given a watcher listens for "REVIEW" completions
    When "ps-researcher" completes the signal with artifact "docs/research/e-1.md"
    Then the completion succeeds
    And the watcher is not notified

  Scenario: A watcher that asks for completions sees each one once
    Given the watcher has caught up on "RESEARCH" completions
    And "ps-researcher" has completed the signal with artifact "docs/research/e-1.md"
    When the watcher asks for "RESEARCH" completions since its position
    Then the watch returns the signal, COMPLETED with artifact "docs/research/e-1.md"
    When the watcher asks for "RESEARCH" completions again from the position it was given
    Then the second watch returns nothing new

  Scenario: A watcher asking for reviews gets nothing from a research completion
    Given the watcher has caught up on "REVIEW" completions
    And "ps-researcher" has completed the signal with artifact "docs/research/e-1.md"
    When the watcher asks for "REVIEW" completions since its position
    Then the watch returns nothing
