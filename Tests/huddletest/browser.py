"""A phone's browser for the tests of the web page (docs/WEB.md): Debian's headless Chromium,
driven through Selenium 4, with the viewport, pixel ratio, touch and user agent of a phone.

    with phone() as driver:
        driver.get(url)
        screenshot(driver, "paired")

`phone()` is a context manager; a pytest fixture is `with phone() as driver: yield driver`. A
machine without Chromium, its driver or Selenium cannot run these tests: they fail naming what to
install, or are skipped if the run said so (`HUDDLE_TEST_WITHOUT=browser`; huddletest.skips).
A fixture wider than one test (one browser for a module) calls `require_browser()` from a
per-test fixture as well, so that each test's line names that test, not the first one.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from huddletest import ROOT
from huddletest.skips import cannot_run_here

if TYPE_CHECKING:
    from selenium.webdriver import Chrome

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
INSTALL = "Scripts/bootstrap --test installs them: apt-get install chromium chromium-driver, pip install 'selenium>=4.20'"

#: A phone: 390 x 844 CSS pixels at 3 device pixels each, touch, and Chrome on Android's agent.
WIDTH, HEIGHT, PIXEL_RATIO = 390, 844, 3.0
USER_AGENT = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
              "Chrome/126.0.0.0 Mobile Safari/537.36")

#: Where screenshot() writes, unless HUDDLE_SCREENSHOTS says elsewhere (the default is gitignored).
DEFAULT_SCREENSHOTS = ROOT / "Tests" / "e2e" / "screenshots"


def missing() -> list[str]:
    """What this machine lacks to run the browser: [] if nothing."""
    lacking = []
    if not (os.access(CHROMIUM, os.X_OK) or shutil.which("chromium")):
        lacking.append("chromium")
    if not (os.access(CHROMEDRIVER, os.X_OK) or shutil.which("chromedriver")):
        lacking.append("chromedriver")
    if importlib.util.find_spec("selenium") is None:
        lacking.append("selenium (Python)")
    return lacking


def _executable(path: str, name: str) -> str:
    return path if os.access(path, os.X_OK) else shutil.which(name)  # type: ignore[return-value]


def require_browser() -> None:
    """Fails the calling test, naming what to install, if the browser cannot run here (or skips
    it: HUDDLE_TEST_WITHOUT=browser)."""
    lacking = missing()
    if lacking:
        cannot_run_here(f"needs {' and '.join(lacking)} for the phone's page ({INSTALL})", "browser")


@contextlib.contextmanager
def phone() -> Iterator[Chrome]:
    """A headless Chromium emulating a phone; quits it on the way out."""
    require_browser()

    # Imported here, not at the top: a test module that imports this one must still import
    # (Scripts/test's empty-environment check) where Selenium is not installed.
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = _executable(CHROMIUM, "chromium")
    options.add_argument("--headless=new")
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")   # Chromium's sandbox refuses to run as root
    options.add_argument("--disable-dev-shm-usage")  # containers' /dev/shm is small
    options.add_argument("--disable-gpu")
    options.add_argument("--no-first-run")
    options.add_argument("--disable-extensions")
    options.add_argument(f"--window-size={WIDTH},{HEIGHT}")
    options.add_experimental_option("mobileEmulation", {
        "deviceMetrics": {"width": WIDTH, "height": HEIGHT, "pixelRatio": PIXEL_RATIO, "touch": True, "mobile": True},
        "userAgent": USER_AGENT,
    })
    # The driver is the distribution's, named outright: Selenium Manager must not go looking for
    # (or downloading) another.
    service = Service(executable_path=_executable(CHROMEDRIVER, "chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        driver.set_script_timeout(30)
        driver.set_page_load_timeout(30)
        yield driver
    finally:
        driver.quit()


def screenshots_dir() -> Path:
    """HUDDLE_SCREENSHOTS, or Tests/e2e/screenshots; made if missing."""
    path = Path(os.environ.get("HUDDLE_SCREENSHOTS") or DEFAULT_SCREENSHOTS)
    path.mkdir(parents=True, exist_ok=True)
    return path


def screenshot(driver, name: str) -> Path:
    """Saves what the phone shows as NAME.png (NAME made safe for a file name); returns the path."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "screenshot"
    path = screenshots_dir() / f"{safe}.png"
    if not driver.save_screenshot(str(path)):
        raise RuntimeError(f"the browser did not save a screenshot to {path}")
    return path
