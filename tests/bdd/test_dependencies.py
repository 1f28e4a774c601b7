from pytest_bdd import scenarios

scenarios("dependencies.feature")
