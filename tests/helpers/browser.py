"""Headless Chromium for tests that look at the HTML report the way a reader does.

The browser is Debian's ``chromium`` (``/usr/bin/chromium``, installed by ``nox -s tests`` when it
can), driven by Playwright for Python. Playwright never downloads a browser here: it is pointed at
that executable, with a fresh profile directory per launch and every background-network feature
off, so a run is offline and leaves nothing behind.

A missing browser is a failure with instructions, never a silent skip; only an explicit
``ORACLE_NO_BROWSER=1`` turns the browser tests into skips (with that reason shown).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

CHROMIUM = Path("/usr/bin/chromium")
NO_BROWSER = "ORACLE_NO_BROWSER"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
LAPTOP = {"width": 1280, "height": 800}
INSTALL_HINT = (
    "install Debian's browser with `sudo apt-get install chromium chromium-driver` (nox -s tests does "
    f"it when run as root), or set {NO_BROWSER}=1 to skip the browser tests explicitly"
)


def require_browser() -> None:
    """Skip when ``ORACLE_NO_BROWSER=1``; fail, saying how to fix it, when Chromium or Playwright
    is missing."""
    if os.environ.get(NO_BROWSER) == "1":
        pytest.skip(f"{NO_BROWSER}=1: the report is not checked in a browser")
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} not found: {INSTALL_HINT}", pytrace=False)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        pytest.fail(f"Playwright for Python is missing ({exc}): pip install -e '.[test]'", pytrace=False)


@contextmanager
def chromium_page(viewport: dict[str, int] = LAPTOP) -> Iterator[Page]:
    """A page of a freshly launched headless Chromium (own profile, clipboard allowed); closed,
    and its profile removed, on exit."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="oracle-chromium-") as profile, sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            headless=True,
            args=list(FLAGS),
            viewport=viewport,
            permissions=["clipboard-read", "clipboard-write"],
        )
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()
