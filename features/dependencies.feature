@dependencies
Feature: A signal can wait for the signals it comes after
  As the PS skill
  I want to post a review that comes after its research
  So that nobody reviews research that is not done, and no review waits for research that failed

  Background:
    Given an agent "ps-researcher" able to do "RESEARCH" at 0.9
    And an agent "ps-reviewer" able to do "REVIEW" at 0.9
    And a "RESEARCH" signal has been posted
    And a "REVIEW" signal has been posted after the "RESEARCH" signal

  Scenario: A review cannot be claimed while its research is unfinished
    Given "ps-researcher" has claimed the "RESEARCH" signal
    When "ps-reviewer" claims the "REVIEW" signal
    Then the claim is refused with DependenciesPending
    And the refusal names the "RESEARCH" signal as the one it waits for
    And the "REVIEW" signal is POSTED

  Scenario: The review can be claimed once the research completes
    Given "ps-researcher" has claimed the "RESEARCH" signal
    And "ps-researcher" has completed the "RESEARCH" signal
    When "ps-reviewer" claims the "REVIEW" signal
    Then the claim succeeds
    And the "REVIEW" signal is CLAIMED by "ps-reviewer"

  Scenario: When the research fails the review expires, naming the research
    Given "ps-researcher" has claimed the "RESEARCH" signal
    When "ps-researcher" fails the "RESEARCH" signal because "no sources found"
    Then the "RESEARCH" signal is FAILED
    And the "REVIEW" signal expired because the "RESEARCH" signal ended FAILED with "no sources found"
    And the recorded events are AgentSignalPosted, AgentSignalPosted, AgentSignalClaimed, AgentSignalFailed, AgentSignalExpired

  Scenario: A review waiting for research in progress does not time out
    Given "ps-researcher" has claimed the "RESEARCH" signal
    And 60 seconds pass
    When the overdue signals are expired
    Then no signal was expired
    And the "REVIEW" signal is POSTED

  Scenario: Work posted after research that already failed expires at once
    Given an agent "ps-synthesizer" able to do "SYNTHESIS" at 0.9
    And "ps-researcher" has claimed the "RESEARCH" signal
    And "ps-researcher" has failed the "RESEARCH" signal because "no sources found"
    When a "SYNTHESIS" signal is posted after the "RESEARCH" signal
    Then the post succeeds
    And the "SYNTHESIS" signal expired because the "RESEARCH" signal ended FAILED with "no sources found"

  Scenario: A signal cannot wait for a signal that is not on its board
    Given an agent "ps-synthesizer" able to do "SYNTHESIS" at 0.9
    When a "SYNTHESIS" signal is posted after "sig-0000abcd"
    Then the post is refused with UnknownDependency
    And the refusal says "sig-0000abcd is not a signal of blackboard PROJ-001"
