@posting
Feature: The PS skill posts work for agents to pick up
  As the PS skill
  I want to post a signal for each exploration entry that needs an agent
  So that an agent able to do the work hears about it at once

  Background:
    Given an agent "ps-researcher" able to do "RESEARCH" at 0.9
    And an agent "ps-analyst" able to do "ANALYSIS" at 0.85

  Scenario: Posting a research signal notifies the researcher
    Given "ps-researcher" listens for posted signals it is able to do
    And "ps-analyst" listens for posted signals it is able to do
    And the PS skill has created exploration entry "e-1" of type "RESEARCH"
    When the PS skill posts a signal for the entry
    Then the signal is POSTED
    And the recorded events are AgentSignalPosted
    And "ps-researcher" is notified of the signal
    And "ps-analyst" is not notified

  Scenario: A signal nobody is able to take is marked unclaimed at once
    Given an agent "ps-intern" able to do "DECISION" at 0.4
    And the PS skill has created exploration entry "e-2" of type "DECISION"
    When the PS skill posts a signal for the entry
    Then the signal is UNCLAIMED
    And the signal's reason is "no registered agent scores above its threshold for DECISION; best was ps-intern at 0.40"
    And the recorded events are AgentSignalPosted, AgentSignalUnclaimed

  Scenario: Posting the same entry again with its dedupe key gives back the first signal
    Given the PS skill has created exploration entry "e-3" of type "RESEARCH" with dedupe key "PROJ-001/e-3/research"
    And the PS skill has posted a signal for the entry
    When the PS skill posts a signal for the entry again
    Then the same signal comes back
    And the recorded events are AgentSignalPosted

  Scenario: Posting the same entry again without a dedupe key makes a second signal
    Given the PS skill has created exploration entry "e-4" of type "RESEARCH"
    And the PS skill has posted a signal for the entry
    When the PS skill posts a signal for the entry again
    Then a different signal comes back
    And the recorded events are AgentSignalPosted, AgentSignalPosted
