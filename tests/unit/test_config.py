"""Settings from flags and the environment: BLACKBOARD_POOL_PRE_PING, a yes/no flag that is off by default."""

from __future__ import annotations

import pytest

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure import config
from blackboard.infrastructure.container import Container
from blackboard.infrastructure.persistence.engine import make_engine

PG_URL = "postgresql+psycopg://nobody@127.0.0.1:1/x"  # never connected to: an engine connects on first use


@pytest.mark.parametrize(("raw", "expected"), [
    ("1", True), ("true", True), ("yes", True), ("TRUE", True), (" Yes ", True),
    ("0", False), ("false", False), ("no", False), ("No", False),
])
def test_pool_pre_ping_accepts_yes_and_no_words(raw, expected):
    assert config.load({}, env={"BLACKBOARD_POOL_PRE_PING": raw})["pool_pre_ping"] is expected


@pytest.mark.parametrize("env", [{}, {"BLACKBOARD_POOL_PRE_PING": ""}])
def test_pool_pre_ping_is_off_by_default(env):
    assert config.load({}, env=env)["pool_pre_ping"] is False


@pytest.mark.parametrize("raw", ["maybe", "2", "on", "y"])
def test_any_other_pool_pre_ping_value_is_refused_naming_the_variable_and_the_rule(raw):
    with pytest.raises(InvalidInput) as refused:
        config.load({}, env={"BLACKBOARD_POOL_PRE_PING": raw})

    assert refused.value.field == "BLACKBOARD_POOL_PRE_PING"
    assert str(refused.value) == f"BLACKBOARD_POOL_PRE_PING: must be 1, true, yes, 0, false or no, got {raw!r}"


@pytest.mark.parametrize(("raw", "expected"), [(None, False), ("yes", True), ("0", False)])
def test_the_setting_reaches_the_postgresql_engine_s_pool(raw, expected):
    env = {"BLACKBOARD_DB": PG_URL, **({"BLACKBOARD_POOL_PRE_PING": raw} if raw is not None else {})}
    container = Container()
    container.config.from_dict(config.load({}, env=env))

    settings = container.store_settings()
    engine = make_engine(settings)

    assert settings.url == PG_URL and settings.pool_pre_ping is expected
    assert engine.pool._pre_ping is expected
    engine.dispose()
