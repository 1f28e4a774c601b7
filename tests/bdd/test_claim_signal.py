from pytest_bdd import scenarios

scenarios("claim_signal.feature")
