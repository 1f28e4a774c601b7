"""For the web view's tests: `blackboard ui` as a real subprocess on a free port, plain HTTP to it,
and headless Chromium driven by Selenium (Debian's chromium and chromedriver, which `make tools` installs)."""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.e2e.conftest import Cli, start_blackboard

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


SETTLES_WITHIN = 30.0  # a bound for what the page shows, never reached when things work


def settled(driver, condition, within: float = SETTLES_WITHIN):
    """Waits until `condition(driver)` holds and returns what it returned. The page redraws what changes, so
    an element found a moment ago may be gone (stale): the condition is read afresh, never failed on that."""
    return WebDriverWait(
        driver,
        within,
        poll_frequency=0.05,
        ignored_exceptions=(NoSuchElementException, StaleElementReferenceException),
    ).until(condition)


def click(driver, css: str, inside: str | None = None) -> None:
    """Clicks the element `css` names (inside the one `inside` names), found afresh if the page redrew it."""

    def clicked(d) -> bool:
        scope = d.find_element(By.CSS_SELECTOR, inside) if inside else d
        scope.find_element(By.CSS_SELECTOR, css).click()
        return True

    settled(driver, clicked)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class UiServer:
    def __init__(self, cli: Cli, *args: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.log = cli.cwd / f"ui-{self.port}.err"
        with self.log.open("w") as err:
            self.proc = start_blackboard(
                ["ui", "--port", str(self.port), *args],
                cli.environment(env),
                cli.cwd,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        self.url = f"http://127.0.0.1:{self.port}"

    def wait_ready(self, headers: dict[str, str] | None = None, limit: float = 30.0) -> UiServer:
        """Until it answers (or it ended: the test then sees why in `stderr`)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if self.get("/api/boards", headers)[0] in (200, 401):
                    return self
            except OSError:
                time.sleep(0.05)
        assert self.proc.poll() is None, f"blackboard ui ended with {self.proc.returncode}:\n{self.stderr()}"
        raise AssertionError(f"blackboard ui did not answer within {limit}s:\n{self.stderr()}")

    def get(
        self, path: str, headers: dict[str, str] | None = None, method: str = "GET"
    ) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request(method, path, headers=headers or {})
            response = connection.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            connection.close()

    def post(self, path: str, body: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request(
                "POST", path, body=body.encode(), headers={"Content-Type": "application/json", **headers}
            )
            response = connection.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            connection.close()

    def stderr(self) -> str:
        return self.log.read_text()

    def stop(self) -> str:
        """Ctrl-C, as a person stops it; what it printed (never a traceback)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"blackboard ui did not stop on Ctrl-C:\n{self.stderr()}") from None
        printed = self.stderr()
        assert "Traceback" not in printed, printed
        return printed


@pytest.fixture
def browser() -> Iterator[object]:
    driver = chromium()
    try:
        yield driver
    finally:
        driver.quit()


def chromium():
    """Headless Chromium driven by Selenium, as the browser tests give it (the bench's sections web and
    graph drive one too)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1300",
        "--no-first-run",
        "--disable-extensions",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # console: a CSP refusal shows there
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def artifact(name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name


DOC_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "img"


def screenshot(driver, name: str, panel: str | None = None) -> Path:
    """Saves what the browser shows (the element `panel` names, else the window) as test-artifacts/NAME; with
    BLACKBOARD_DOC_SCREENSHOTS=1 (`make screenshots`) also as docs/img/NAME, the picture docs/web.md shows, so
    each picture there is one a test took of the page it checked."""
    shot = artifact(name)
    if panel:
        driver.find_element(By.CSS_SELECTOR, panel).screenshot(str(shot))
    else:
        driver.save_screenshot(str(shot))
    if os.environ.get("BLACKBOARD_DOC_SCREENSHOTS") == "1":
        DOC_IMAGES.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOC_IMAGES / name)
    return shot
