from pytest_bdd import scenarios

scenarios("watch_signals.feature")
