from pytest_bdd import scenarios

scenarios("post_signal.feature")
