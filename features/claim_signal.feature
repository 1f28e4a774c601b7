@claiming
Feature: Agents claim the signals they are able to do
  As an agent
  I want to claim a signal only when my score for it is above my threshold
  So that each piece of work is done once, by an agent that fits it

  Background:
    Given an agent "ps-researcher" able to do "RESEARCH" at 0.9
    And an agent "ps-investigator" able to do "RESEARCH" at 0.85
    And a "RESEARCH" signal has been posted

  Scenario: The researcher weighs up a research signal and claims it
    When "ps-researcher" weighs up the signal
    Then its score is 0.9, above its threshold of 0.8
    When "ps-researcher" claims the signal
    Then the claim succeeds
    And the signal is CLAIMED by "ps-researcher"
    And the recorded events are AgentSignalPosted, AgentSignalClaimed

  Scenario: A second claim is refused and names the first claimer
    Given "ps-researcher" has claimed the signal
    When "ps-investigator" claims the signal
    Then the claim is refused with AlreadyClaimed
    And the refusal says "is CLAIMED by ps-researcher"
    And the signal is CLAIMED by "ps-researcher"
    And the recorded events are AgentSignalPosted, AgentSignalClaimed

  Scenario: An agent scoring below the threshold is refused
    Given an agent "ps-junior" able to do "RESEARCH" at 0.7
    When "ps-junior" claims the signal
    Then the claim is refused with BelowThreshold
    And the refusal says "ps-junior scores 0.70"
    And the refusal says "above its threshold 0.80"
    And the signal is POSTED

  Scenario: A score equal to the threshold is not enough
    Given an agent "ps-borderline" able to do "RESEARCH" at 0.8
    When "ps-borderline" claims the signal
    Then the claim is refused with BelowThreshold
    And the signal is POSTED

  Scenario: An agent with its own lower threshold may claim what the default would refuse
    Given an agent "ps-junior" able to do "RESEARCH" at 0.7 with its own threshold 0.6
    When "ps-junior" claims the signal
    Then the claim succeeds
    And the signal is CLAIMED by "ps-junior"

  Scenario: An agent the registry does not know cannot claim
    When "ps-stranger" claims the signal
    Then the claim is refused with AgentNotFound
    And the refusal says "no agent named ps-stranger"
    And the signal is POSTED

  Scenario: A signal no live worker fits waits for one by default
    Given 3600 seconds pass
    When the overdue signals are expired
    Then no signal was expired
    And the signal is POSTED

  Scenario: With a post timeout, a signal nobody claims in time expires
    Given the post timeout is 30 seconds
    And 31 seconds pass
    When the overdue signals are expired
    Then the signal is EXPIRED
    And the signal's reason begins "not claimed within 30s of becoming claimable; no live worker fits it"
    And the recorded events are AgentSignalPosted, AgentSignalExpired

  Scenario: A signal waits while a worker that fits it is live
    Given the post timeout is 30 seconds
    And a worker of "ps-investigator" beats
    And 31 seconds pass
    And the worker beats again
    When the overdue signals are expired
    Then no signal was expired
    And the signal is POSTED

  Scenario: Once the worker that fits it has stopped, the signal's post timeout runs out
    Given the post timeout is 30 seconds
    And a worker of "ps-investigator" beats
    And 10 seconds pass
    And the worker stops
    And 31 seconds pass
    When the overdue signals are expired
    Then the signal is EXPIRED
    And the signal's reason begins "not claimed within 30s of becoming claimable; the last worker that fits it, ps-investigator on bdd-host:4242, stopped at"

  Scenario: A signal still within its claim window is left alone
    Given the post timeout is 30 seconds
    And 10 seconds pass
    When the overdue signals are expired
    Then no signal was expired
    And the signal is POSTED
