from pytest_bdd import scenarios

scenarios("complete_signal.feature")
