@completing
Feature: The claimer hands back its result, or reports that it failed
  As an agent that claimed a signal
  I want to complete it with my artifact, or fail it with the reason
  So that the PS and the agents downstream know how the work ended

  Background:
    Given an agent "ps-researcher" able to do "RESEARCH" at 0.9
    And an agent "ps-analyst" able to do "ANALYSIS" at 0.9
    And a "RESEARCH" signal has been posted
    And "ps-researcher" has claimed the signal

  Scenario: The claimer completes the signal with its artifact
    When "ps-researcher" completes the signal with artifact "docs/research/e-1.md"
    Then the completion succeeds
    And the signal is COMPLETED
    And the signal's artifact is "docs/research/e-1.md"
    And the recorded events are AgentSignalPosted, AgentSignalClaimed, AgentSignalCompleted

  Scenario: Only the claimer may complete the signal
    When "ps-analyst" completes the signal with artifact "docs/analysis/e-1.md"
    Then the completion is refused with NotTheClaimer
    And the refusal says "is CLAIMED by ps-researcher, not ps-analyst"
    And the signal is CLAIMED by "ps-researcher"
    And the recorded events are AgentSignalPosted, AgentSignalClaimed

  Scenario: The claimer fails the signal and the error is kept
    When "ps-researcher" fails the signal because "the source archive was unreachable"
    Then the failure succeeds
    And the signal is FAILED
    And the signal's reason is "the source archive was unreachable"
    And the recorded events are AgentSignalPosted, AgentSignalClaimed, AgentSignalFailed

  Scenario: A completed signal cannot be completed again
    Given "ps-researcher" has completed the signal with artifact "docs/research/e-1.md"
    When "ps-researcher" completes the signal with artifact "docs/research/e-1-v2.md"
    Then the completion is refused with InvalidTransition
    And the refusal says "is COMPLETED; only CLAIMED signals can be completed"
    And the signal's artifact is "docs/research/e-1.md"

  Scenario: A claimer that does not finish in time loses the signal
    Given 301 seconds pass
    When the overdue signals are expired
    Then the signal is EXPIRED
    And the signal's reason is "ps-researcher did not finish within the claim timeout of 300s"
    And the recorded events are AgentSignalPosted, AgentSignalClaimed, AgentSignalExpired
