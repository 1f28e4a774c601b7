"""Settings: one model holds every knob; flags beat variables beat defaults; bad values are refused by name."""

from __future__ import annotations

import dataclasses
import re
from datetime import timedelta
from pathlib import Path

import pytest

from blackboard.application.service import Settings
from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.cli.parser import build_parser
from blackboard.infrastructure.composition import prices, rate_limits, settings
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.composition.settings import KNOBS, BlackboardSettings, worker_options
from blackboard.infrastructure.persistence.engine import StoreSettings, make_engine

PG_URL = "postgresql+psycopg://nobody@127.0.0.1:1/x"  # never connected to: an engine connects on first use
README = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def shown(value: object) -> str:
    if isinstance(value, prices.PriceTable | rate_limits.RateLimitTable):
        return str(value)
    if value is None:  # a setting that is off unless set (the post timeout)
        return "off"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, tuple):  # labels: none by default
        return ",".join(value) or "none"
    return value if isinstance(value, str) else format(value, "g")


def readme_configuration() -> list[tuple[list[str], list[str], list[str]]]:
    """(flags, variables, defaults) of each row of docs/cli.md's "### Configuration" table."""
    section = README.read_text().split("## Configuration", 1)[1].split("\n#", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = line.split("|")[1:-1]
        if len(cells) != 4 or not (variables := re.findall(r"`(BLACKBOARD_[A-Z_]+)", cells[2])):
            continue
        flags = re.findall(r"`(--[a-z-]+)", cells[1])
        rows.append((flags, variables, re.findall(r"`([^`]+)`", cells[3])[: len(variables)]))
    return rows


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", True),
        ("true", True),
        ("yes", True),
        ("TRUE", True),
        (" Yes ", True),
        ("0", False),
        ("false", False),
        ("no", False),
        ("No", False),
    ],
)
def test_pool_pre_ping_accepts_yes_and_no_words(raw, expected):
    assert settings.load({}, env={"BLACKBOARD_POOL_PRE_PING": raw}).pool_pre_ping is expected


@pytest.mark.parametrize("env", [{}, {"BLACKBOARD_POOL_PRE_PING": ""}])
def test_pool_pre_ping_is_off_by_default(env):
    assert settings.load({}, env=env).pool_pre_ping is False


@pytest.mark.parametrize("raw", ["maybe", "2", "on", "y"])
def test_any_other_pool_pre_ping_value_is_refused_naming_the_variable_and_the_rule(raw):
    with pytest.raises(InvalidInput) as refused:
        settings.load({}, env={"BLACKBOARD_POOL_PRE_PING": raw})

    assert refused.value.field == "BLACKBOARD_POOL_PRE_PING"
    assert (
        str(refused.value) == f"BLACKBOARD_POOL_PRE_PING: must be 1, true, yes, 0, false or no, got {raw!r}"
    )


@pytest.mark.parametrize(
    ("variable", "raw", "rule"),
    [
        ("BLACKBOARD_CLAIM_THRESHOLD", "abc", "a number from 0 to 1"),
        ("BLACKBOARD_CLAIM_THRESHOLD", "1.5", "a number from 0 to 1"),
        ("BLACKBOARD_POST_TIMEOUT", "-1", "seconds, above 0 and at most 1e+09"),
        ("BLACKBOARD_CLAIM_TIMEOUT", "0", "seconds, above 0 and at most 1e+09"),
        ("BLACKBOARD_SQLITE_SYNCHRONOUS", "SOMETIMES", "OFF or NORMAL or FULL or EXTRA"),
        ("BLACKBOARD_POOL_SIZE", "2.5", "a whole number from 1 to 10000"),
        ("BLACKBOARD_MAX_OVERFLOW", "-1", "a whole number from 0 to 10000"),
        ("BLACKBOARD_POLL_INTERVAL", "soon", "seconds, above 0 and at most 1e+09"),
    ],
)
def test_a_bad_variable_is_refused_naming_it_and_its_rule(variable, raw, rule):
    with pytest.raises(InvalidInput) as refused:
        settings.load({}, env={variable: raw})

    assert str(refused.value) == f"{variable}: must be {rule}, got {raw!r}"


@pytest.mark.parametrize(
    ("flag", "name", "value", "message"),
    [
        ("--concurrency", "concurrency", 0, "--concurrency: must be a whole number from 1 to 10000, got 0"),
        ("--grace", "grace", -1.0, "--grace: must be 0 or more seconds, at most 1e+09, got -1"),
        (
            "--head-start",
            "head_start",
            -0.5,
            "--head-start: must be 0 or more seconds, at most 1e+09, got -0.5",
        ),
    ],
)
def test_a_bad_worker_option_is_refused_naming_the_flag_and_its_rule(flag, name, value, message):
    with pytest.raises(InvalidInput, match=re.escape(message)):
        settings.load({name: value}, env={})


def test_a_flag_beats_its_variable_which_beats_the_default():
    env = {"BLACKBOARD_DB": "sqlite:///from-env.db", "BLACKBOARD_AGENTS_DIR": "env-agents"}

    loaded = settings.load({"db": "sqlite:///from-flag.db", "agents_dir": None}, env=env)

    assert loaded.db == f"sqlite:///{Path('from-flag.db').absolute()}" and loaded.agents_dir == "env-agents"
    assert loaded.claim_timeout == 300.0


def test_a_setting_without_a_variable_is_not_read_from_the_environment():
    assert (
        settings.load({}, env={"BLACKBOARD_MAX_ATTEMPTS": "3", "BLACKBOARD_GRACE": "1"})
        == settings.load({}, env={})
        == dataclasses.replace(
            BlackboardSettings(),
            db=f"sqlite:///{Path('.blackboard/blackboard.db').absolute()}",
            artifacts_dir=str(Path("artifacts").absolute()),
        )
    )


def test_json_output_is_on_for_a_yes_word_off_for_a_no_word():
    assert settings.load({}, env={"BLACKBOARD_JSON": "yes"}).json is True
    assert settings.load({}, env={"BLACKBOARD_JSON": "no"}).json is False
    assert settings.load({"json": True}, env={}).json is True
    with pytest.raises(
        InvalidInput, match="BLACKBOARD_JSON: must be 1, true, yes, 0, false or no, got 'off'"
    ):
        settings.load({}, env={"BLACKBOARD_JSON": "off"})


def test_settings_built_in_code_are_checked_too():
    with pytest.raises(InvalidInput, match="must be a number from 0 to 1, got 2"):
        BlackboardSettings(claim_threshold=2)


def test_readme_configuration_table_names_every_variable_its_flag_and_default():
    by_variable = {knob.env: (name, knob) for name, knob in KNOBS.items() if knob.env}
    defaults = BlackboardSettings()
    listed = [variable for _, variables, _ in readme_configuration() for variable in variables]

    assert sorted(listed) == sorted(by_variable)
    for flags, variables, row_defaults in readme_configuration():
        for variable, default in zip(variables, row_defaults, strict=True):
            name, knob = by_variable[variable]
            assert default == shown(getattr(defaults, name)), variable
            assert flags == ([knob.flag] if knob.flag and len(variables) == 1 else []), variable


def test_the_help_names_the_default_of_every_option_that_is_a_setting():
    defaults = BlackboardSettings()
    parser = build_parser()
    helps = {
        option: action.help
        for sub in [parser, *parser._subparsers._group_actions[0].choices.values()]
        for action in sub._actions
        for option in action.option_strings
    }

    for name, knob in KNOBS.items():
        if knob.flag and knob.flag != "--json":
            assert f"default {shown(getattr(defaults, name))})" in helps[knob.flag], knob.flag


def everything_but_the_defaults() -> BlackboardSettings:
    return BlackboardSettings(
        db=PG_URL,
        agents_dir="elsewhere",
        json=True,
        claim_threshold=0.6,
        post_timeout=12.0,
        claim_timeout=90.0,
        sqlite_synchronous="NORMAL",
        sqlite_busy_timeout=4.0,
        pool_size=3,
        max_overflow=0,
        pool_timeout=7.0,
        pool_pre_ping=True,
        poll_interval=0.5,
        beat_interval=0.75,
        projection_page=500,
        mcp_max_line=8192,
        echo=True,
        artifacts_dir="/srv/artifacts",
        concurrency=4,
        grace=2.0,
        head_start=0.0,
        prices=prices.parse('{"my-model": [1, 2]}'),
        rate_limits=rate_limits.parse('{"my-model": {"key": "api", "requests_per_minute": 5}}'),
        metric_labels=("bug", "team:core"),
        webhooks=("https://hooks.example/gates",),
        webhook_secret="s3cret",
        ui_url="https://board.example",
        webhook_timeout=1.0,
        webhook_retry=0.5,
        webhook_give_up=60.0,
    )


def test_the_container_builds_the_store_s_and_the_service_s_settings_from_every_value():
    config = everything_but_the_defaults()
    assert all(
        getattr(config, f.name) != getattr(BlackboardSettings(), f.name) for f in dataclasses.fields(config)
    ), "every value differs from its default"
    container = Container(config=config)

    store, service = container.store_settings(), container.settings()

    assert store == StoreSettings(
        url=PG_URL,
        synchronous="NORMAL",
        busy_timeout=4.0,
        pool_size=3,
        max_overflow=0,
        pool_timeout=7.0,
        pool_pre_ping=True,
        echo=True,
    )
    assert service == Settings(
        claim_threshold=0.6, post_timeout=timedelta(seconds=12), claim_timeout=timedelta(seconds=90)
    )


@pytest.mark.parametrize(("raw", "expected"), [(None, False), ("yes", True), ("0", False)])
def test_the_setting_reaches_the_postgresql_engine_s_pool(raw, expected):
    env = {"BLACKBOARD_DB": PG_URL, **({"BLACKBOARD_POOL_PRE_PING": raw} if raw is not None else {})}
    container = Container(config=settings.load({}, env=env))

    store_settings = container.store_settings()
    engine = make_engine(store_settings)

    assert store_settings.url == PG_URL and store_settings.pool_pre_ping is expected
    assert engine.pool._pre_ping is expected
    engine.dispose()


@pytest.mark.parametrize(
    ("post", "claim", "sweep", "renew"),
    [
        (None, 300.0, 10.0, 100.0),  # the defaults: a sweep every 10 s at most, a renewal every 100 s
        (30.0, 300.0, 10.0, 100.0),  # seed 003's post timeout: the same
        (3.0, 9.0, 1.0, 3.0),  # a third of the shorter timeout; a third of the claim timeout
        (0.6, 0.9, 0.5, 0.5),  # never more often than every half second
    ],
)
def test_a_worker_sweeps_and_renews_every_third_of_the_timeouts(post, claim, sweep, renew):
    config = BlackboardSettings(
        post_timeout=post, claim_timeout=claim, concurrency=3, grace=5.0, head_start=0.2
    )

    options = worker_options(config, "ps-researcher", once=False, blackboard_id="ps-1")

    assert (options.sweep_every, options.renew_every) == pytest.approx((sweep, renew))
    assert (options.agent, options.concurrency, options.grace, options.head_start, options.blackboard_id) == (
        "ps-researcher",
        3,
        5.0,
        0.2,
        "ps-1",
    )


@pytest.mark.parametrize("post_timeout", [None, 12.0], ids=["off", "12s"])
def test_the_board_s_settings_as_variables_give_a_child_process_the_same_post_timeout(post_timeout):
    """A worker hands its runs (and `solve` its workers) the board's settings as variables: the post timeout
    off (the default) must read as off there, not as a value a child refuses."""
    config = BlackboardSettings(post_timeout=post_timeout, claim_timeout=90.0)

    child = settings.load({}, env=dict(settings.board_environment(config)))

    assert (child.post_timeout, child.claim_timeout) == (post_timeout, 90.0)
