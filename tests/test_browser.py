"""The headless-Chromium harness (tests/browser.py) on small fixture pages.

Without Chromium these tests skip, saying how to install it; with
FAIRDECIDE_REQUIRE_BROWSER=1 (set by .ci/run) they fail instead. The tests that start
Chromium (2-5 s each) are in the slow run, beside the only tests that use the harness
(tests/test_report_browser.py); how the browser is found stays in the default run.
"""

from __future__ import annotations

import struct
import time
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from tests import browser
from tests.browser import chromium_path, render_in_chromium, require_chromium

FIXTURES = Path(__file__).parent / "fixtures"
RED = (0xD6, 0x27, 0x28)  # the two rectangles of report_ok.html's SVG
BLUE = (0x1F, 0x77, 0xB4)


@pytest.fixture(scope="module")
def chromium() -> str:
    return require_chromium()


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from the IHDR chunk, which a valid PNG starts with."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def pixels(path: Path) -> np.ndarray:
    """The image as uint8 RGB rows."""
    image = imread(path)  # floats in [0, 1] for a PNG
    return np.round(image[..., :3] * 255).astype(np.uint8)


def has_colour(image: np.ndarray, rgb: tuple[int, int, int], tol: int = 3) -> np.ndarray:
    return np.all(np.abs(image.astype(int) - np.array(rgb)) <= tol, axis=-1)


@pytest.mark.slow
def test_self_contained_page_renders_its_table_and_figure(chromium, tmp_path):
    out = tmp_path / "shot.png"
    rendered = render_in_chromium(FIXTURES / "report_ok.html", out, width=1000)

    assert rendered.console_errors == [], rendered.summary()
    assert rendered.network_requests == [], rendered.summary()
    # One table in the source, one built by the script: counted in the browser.
    assert rendered.n_tables == 2, rendered.summary()
    assert rendered.n_figures == 1, rendered.summary()
    assert 'id="script-table"' in rendered.dom and "added by script" in rendered.dom

    assert rendered.screenshot == out
    width, height = png_size(out)
    assert width == 1000
    # The whole page, not the 800-pixel viewport: the SVG sits below a 1200 px spacer.
    assert height == rendered.page_size[1] > 1200
    image = pixels(out)
    assert image.shape[:2] == (height, width)
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 1, "the screenshot is one colour"
    red_rows = np.nonzero(has_colour(image, RED).any(axis=1))[0]
    assert has_colour(image, RED).sum() > 100 * 80, "the SVG's red rectangle was not painted"
    assert has_colour(image, BLUE).sum() > 100 * 50, "the SVG's blue rectangle was not painted"
    assert red_rows.min() > 1200, "the figure should be below the spacer"


@pytest.mark.slow
def test_uncaught_exceptions_are_console_errors(chromium, tmp_path):
    rendered = render_in_chromium(FIXTURES / "js_error.html", tmp_path / "shot.png")
    errors = "\n".join(rendered.console_errors)
    assert len(rendered.console_errors) == 2, errors
    assert "ReferenceError: undefinedFunctionForTheHarness is not defined" in errors
    assert "(in promise)" in errors and "fixture rejection nobody handles" in errors
    assert "js_error.html:8" in errors  # where it was thrown
    assert rendered.n_tables == 1  # the page still rendered around the error
    assert rendered.network_requests == []


@pytest.mark.slow
def test_console_error_and_failed_assert_are_reported(chromium, tmp_path):
    out = tmp_path / "shot.png"
    rendered = render_in_chromium(FIXTURES / "console_error.html", out, width=640, height=480)
    assert rendered.console_errors == [
        "console.error: fixture console error 42",
        "console.assert: fixture assertion",
    ]  # console.log, console.warn and a holding assertion are not errors
    assert png_size(out) == (640, 480)  # a fixed viewport when a height is given


@pytest.mark.slow
def test_external_resources_are_network_requests(chromium, tmp_path):
    page = FIXTURES / "external.html"
    rendered = render_in_chromium(page, tmp_path / "shot.png")
    assert sorted(rendered.network_requests) == sorted(
        [
            "http://example.invalid/x.css",
            "https://example.invalid/y.png",
            (FIXTURES / "missing-figure.png").as_uri(),
        ]
    )  # not the page itself, not the data: image
    errors = "\n".join(rendered.console_errors)
    for url in rendered.network_requests:
        assert url in errors, f"{url} failed to load but no error says so:\n{errors}"
    # Only the inline data: pixel is a rendered figure; the two that failed are not.
    assert rendered.n_figures == 1


@pytest.mark.slow
def test_figures_without_size_are_not_counted(chromium, tmp_path):
    rendered = render_in_chromium(FIXTURES / "zero_size.html", tmp_path / "shot.png")
    assert rendered.dom.count("<svg") == 3  # present in the DOM ...
    assert rendered.n_figures == 0  # ... but none has a rendered size
    assert rendered.n_tables == 1
    assert rendered.console_errors == []


@pytest.mark.slow
def test_a_page_that_never_loads_times_out_and_the_browser_is_killed(
    chromium, tmp_path, monkeypatch
):
    started: list[tuple[int, str]] = []
    real_start = browser.Chromium.start

    def spy(self: browser.Chromium) -> None:
        real_start(self)
        started.append((self.process.pid, self.profile))

    monkeypatch.setattr(browser.Chromium, "start", spy)
    t0 = time.monotonic()
    with pytest.raises(TimeoutError, match=r"hangs\.html did not finish rendering"):
        render_in_chromium(FIXTURES / "hangs.html", tmp_path / "shot.png", timeout=2)
    assert time.monotonic() - t0 < 10
    [(pid, profile)] = started
    assert browser.group_members(pid) == [], "Chromium processes outlived the call"
    assert not Path(profile).exists(), "the temporary profile was not removed"
    assert not (tmp_path / "shot.png").exists()


@pytest.mark.slow
def test_command_line_prints_counts_and_writes_the_png(chromium, tmp_path, capsys):
    out = tmp_path / "cli.png"
    status = browser.main([str(FIXTURES / "js_error.html"), str(out), "--width", "800"])
    printed = capsys.readouterr().out
    assert status == 1  # the page logged errors
    assert "tables:    1" in printed and "figures:   0" in printed
    assert "ReferenceError" in printed
    assert png_size(out)[0] == 800


# -- finding the browser (no browser needed) --------------------------------------------


def fake_binary(folder: Path, name: str) -> str:
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return str(path)


def test_chromium_path_order(tmp_path, monkeypatch):
    monkeypatch.delenv("FAIRDECIDE_CHROMIUM", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert chromium_path() is None
    google = fake_binary(tmp_path, "google-chrome")
    assert chromium_path() == google
    browser_ = fake_binary(tmp_path, "chromium-browser")
    assert chromium_path() == browser_
    plain = fake_binary(tmp_path, "chromium")
    assert chromium_path() == plain
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    chosen = fake_binary(elsewhere, "my-chrome")
    monkeypatch.setenv("FAIRDECIDE_CHROMIUM", chosen)
    assert chromium_path() == chosen
    # A wrong FAIRDECIDE_CHROMIUM is not silently replaced by another browser.
    monkeypatch.setenv("FAIRDECIDE_CHROMIUM", str(tmp_path / "nonexistent"))
    assert chromium_path() is None


def test_missing_chromium_skips_unless_required(tmp_path, monkeypatch):
    monkeypatch.delenv("FAIRDECIDE_CHROMIUM", raising=False)
    monkeypatch.delenv("FAIRDECIDE_REQUIRE_BROWSER", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.skip.Exception, match="install Debian's `chromium` package"):
        require_chromium()
    monkeypatch.setenv("FAIRDECIDE_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="FAIRDECIDE_REQUIRE_BROWSER=1"):
        require_chromium()
    monkeypatch.setenv("FAIRDECIDE_REQUIRE_BROWSER", "0")  # only "1" requires
    with pytest.raises(pytest.skip.Exception):
        require_chromium()
