@knowledge
Feature: A lead hands a sub-agent only the keys its work needs
  As a lead agent splitting a problem into signals
  I want to name, on each signal, the entry keys its claimer may read and write
  So that a sub-agent working on it cannot read or overwrite anything else on the board, nor act once its claim is over

  Background:
    Given an agent "ps-researcher" able to do "RESEARCH" at 0.9
    And an agent "ps-analyst" able to do "RESEARCH" at 0.8
    And "ps-lead" has written "compare the stores" under "brief"
    And "ps-lead" has posted a research signal that may read "brief" and write "draft/*"
    And "ps-researcher" has claimed it with the token "t-1"

  Scenario: The claimer writes a key that its write keys cover
    When "ps-researcher" writes "logs win" under "draft/storage" for the signal with the token "t-1"
    Then the write is accepted
    And "draft/storage" reads "logs win"

  Scenario: The claimer reads the brief it was given
    When "ps-researcher" reads "brief" for the signal with the token "t-1"
    Then it reads "compare the stores"

  Scenario: A key outside its lists is refused, and nothing is written
    When "ps-researcher" writes "my plan" under "plan/outline" for the signal with the token "t-1"
    Then it is refused because "plan/outline is not in its write keys"
    And nothing is written under "plan/outline"

  Scenario: Another agent cannot use the signal's permissions
    When "ps-analyst" writes "my view" under "draft/storage" for the signal with the token "t-1"
    Then it is refused because "only its claimer ps-researcher may"
    And nothing is written under "draft/storage"

  Scenario: Without the claim's token the claimer is refused
    When "ps-researcher" writes "logs win" under "draft/storage" for the signal with the token "forged"
    Then it is refused because "the token is not the claim's"

  Scenario: Once the work is handed back, the permissions end with the claim
    Given "ps-researcher" has completed it with the token "t-1"
    When "ps-researcher" writes "one more thing" under "draft/late" for the signal with the token "t-1"
    Then it is refused because "the signal is COMPLETED"
    And nothing is written under "draft/late"

  Scenario: A claim that outlived its claim timeout is lost, even before anyone expires it
    Given the claim timeout has passed without a renewal
    When "ps-researcher" reads "brief" for the signal with the token "t-1"
    Then it is refused because "ran past its claim timeout"
