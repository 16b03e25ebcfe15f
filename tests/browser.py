"""Open an HTML file in headless Chromium: screenshot, rendered tables and figures, errors.

A test harness for fairdecide's self-contained HTML reports. It drives Chromium over the
DevTools protocol through a pipe (``--remote-debugging-pipe``: the browser reads
NUL-terminated JSON commands on its file descriptor 3 and writes replies and events on
4), so it needs no Python package beyond the standard library, only a Chromium binary.

What one call does (:func:`render_in_chromium`):

1. starts ``chromium --headless=new --no-sandbox`` with a fresh temporary profile;
2. enables the Runtime, Log, Network and Page domains *before* navigating, and blocks
   every http(s)/ws(s)/ftp request (so a test never waits on the network, and a page that
   is not self-contained still shows each attempt in ``network_requests``);
3. opens ``file://PAGE``, waits for the load event, two animation frames and a short
   settling time (so scripts that draw after load have run);
4. counts, in the browser, the ``<table>`` elements and the outermost ``<svg>`` and
   loaded ``<img>`` elements whose ``getBoundingClientRect()`` has a non-zero width and
   height (``display: none``, ``width="0"`` and broken images count nothing);
5. serialises ``document.documentElement.outerHTML`` and captures a PNG of the whole
   page (or of the viewport when ``height`` is given), at device scale 1, so the PNG is
   exactly ``width`` pixels wide;
6. closes the browser and, whatever happened, kills its process group and removes the
   profile.

Console errors (``Rendered.console_errors``) collect, as one line each:

- ``console.error(...)`` and failed ``console.assert(...)`` (``Runtime.consoleAPICalled``);
- uncaught exceptions and unhandled promise rejections (``Runtime.exceptionThrown``);
- browser log entries of level ``error`` (``Log.entryAdded``: failed resource loads,
  refused local files, CSP violations, ...);
- requests that failed (``Network.loadingFailed``) and are not already reported above.

Screenshot of any HTML file from the command line (render_report_screenshot)
----------------------------------------------------------------------------
From the repository root::

    .venv/bin/python -m tests.browser PAGE.html OUT.png
    .venv/bin/python -m tests.browser PAGE.html OUT.png --width 1024 --height 768

prints the number of rendered tables and figures, the console errors and the network
requests, writes the full-page PNG to ``OUT.png``, and exits with status 1 when the page
logged an error or tried to reach the network (0 otherwise). In Python::

    from tests.browser import render_in_chromium
    rendered = render_in_chromium("report.html", "report.png")
    assert rendered.n_tables and rendered.n_figures
    assert not rendered.console_errors and not rendered.network_requests

The binary is found by :func:`chromium_path`: the environment variable
``FAIRDECIDE_CHROMIUM``, then ``chromium``, ``chromium-browser``, ``google-chrome`` on
``PATH``. On Debian: ``apt-get install chromium``. Tests call :func:`require_chromium`,
which skips them, saying why, when there is no browser (the README's test command passes
on a machine with only Python), and fails them when ``FAIRDECIDE_REQUIRE_BROWSER=1``
(``.ci/run`` sets it after installing Chromium, so CI can never skip them). A missing
browser never lets a browser test pass.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "BrowserError",
    "Chromium",
    "Rendered",
    "chromium_path",
    "group_members",
    "main",
    "render_in_chromium",
    "require_chromium",
]

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
INSTALL_HINT = (
    "headless Chromium is needed for the browser tests: install Debian's `chromium` "
    "package (apt-get install chromium) or set FAIRDECIDE_CHROMIUM to a Chromium/Chrome "
    "binary"
)
PROFILE_PREFIX = "fairdecide-chromium-"
BLOCKED_SCHEMES = ("http", "https", "ws", "wss", "ftp")
NOT_NETWORK = ("data:", "blob:", "about:", "chrome:", "devtools:")

# Counted in the page: an element is rendered when its box has a non-zero area.
_COUNT_JS = """
(() => {
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0
      && getComputedStyle(el).visibility !== "hidden";
  };
  const tables = [...document.querySelectorAll("table")].filter(shown);
  const svgs = [...document.querySelectorAll("svg")]
    .filter((el) => !el.ownerSVGElement && shown(el));
  const imgs = [...document.querySelectorAll("img")]
    .filter((el) => el.complete && el.naturalWidth > 0 && shown(el));
  const root = document.documentElement;
  return {
    n_tables: tables.length,
    n_figures: svgs.length + imgs.length,
    width: Math.max(root.scrollWidth, document.body ? document.body.scrollWidth : 0),
    height: Math.max(root.scrollHeight, document.body ? document.body.scrollHeight : 0),
  };
})()
"""

# Resolves after two animation frames and `ms` milliseconds (fonts loaded first).
_SETTLE_JS = """
new Promise((resolve) => {
  const done = () => requestAnimationFrame(() => requestAnimationFrame(
    () => setTimeout(resolve, %d)));
  (document.fonts ? document.fonts.ready : Promise.resolve()).then(done, done);
})
"""


class BrowserError(RuntimeError):
    """Chromium could not be started, died, or answered a command with an error."""


@dataclass
class Rendered:
    """What Chromium made of a page; see the module docstring for each field."""

    dom: str
    console_errors: list[str]
    screenshot: Path
    n_tables: int
    n_figures: int
    network_requests: list[str] = field(default_factory=list)
    url: str = ""
    page_size: tuple[int, int] = (0, 0)

    def summary(self) -> str:
        """A few lines for a terminal or an assertion message."""
        lines = [
            f"page:      {self.url}",
            f"size:      {self.page_size[0]} x {self.page_size[1]} CSS px",
            f"tables:    {self.n_tables}",
            f"figures:   {self.n_figures}",
            f"screenshot: {self.screenshot}",
            f"console errors ({len(self.console_errors)}):",
            *(f"  {e}" for e in self.console_errors),
            f"network requests ({len(self.network_requests)}):",
            *(f"  {u}" for u in self.network_requests),
        ]
        return "\n".join(lines)


def chromium_path() -> str | None:
    """The Chromium binary to use, or None.

    ``FAIRDECIDE_CHROMIUM`` wins when set (a path or a name on ``PATH``; None when it does
    not name an executable, rather than silently using another browser); otherwise the
    first of ``chromium``, ``chromium-browser``, ``google-chrome`` found on ``PATH``.
    """
    env = os.environ.get("FAIRDECIDE_CHROMIUM")
    if env:
        return shutil.which(env)
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def require_chromium() -> str:
    """The Chromium binary for a test; skips the test (saying why and how to install it)
    if absent, or fails it when ``FAIRDECIDE_REQUIRE_BROWSER=1`` (CI). A missing browser
    never lets a browser test pass.
    """
    import pytest

    found = chromium_path()
    if found is not None:
        return found
    env = os.environ.get("FAIRDECIDE_CHROMIUM")
    why = f"FAIRDECIDE_CHROMIUM={env!r} is not an executable; " if env else ""
    if os.environ.get("FAIRDECIDE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{why}no Chromium found and FAIRDECIDE_REQUIRE_BROWSER=1. "
                    f"{INSTALL_HINT}", pytrace=False)
    pytest.skip(f"{why}no Chromium found: {INSTALL_HINT}")


class Chromium:
    """One headless Chromium process spoken to over the DevTools pipe.

    A context manager: ``with Chromium() as browser: session = browser.new_page()``.
    Leaving it closes the browser, kills its process group and deletes the profile.
    """

    def __init__(self, binary: str | None = None, *, width: int = 1280, height: int = 800):
        self.binary = binary or chromium_path()
        if self.binary is None:
            raise BrowserError(f"no Chromium found. {INSTALL_HINT}")
        self.width, self.height = width, height
        self.process: subprocess.Popen | None = None
        self.profile: str | None = None
        self._log: Any = None
        self._to_browser: int | None = None
        self._from_browser: int | None = None
        self._messages: queue.Queue = queue.Queue()
        self._events: list[dict] = []
        self._next_id = 0

    # -- lifetime ------------------------------------------------------------------

    def __enter__(self) -> Chromium:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        self.profile = tempfile.mkdtemp(prefix=PROFILE_PREFIX)
        self._log = tempfile.TemporaryFile(mode="w+b")
        # Browser reads commands on its fd 3 and writes on fd 4. Copies numbered >= 10 so
        # that the dup2 onto 3 and 4 in the child cannot overwrite one another.
        cmd_read, cmd_write = os.pipe()
        out_read, out_write = os.pipe()
        child_in = fcntl.fcntl(cmd_read, fcntl.F_DUPFD_CLOEXEC, 10)
        child_out = fcntl.fcntl(out_write, fcntl.F_DUPFD_CLOEXEC, 10)

        def wire() -> None:  # runs in the child between fork and exec
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        args = [
            self.binary,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--remote-debugging-pipe",
            f"--user-data-dir={self.profile}",
            f"--window-size={self.width},{self.height}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-component-extensions-with-background-pages",
            "--disable-background-networking",
            "--disable-sync",
            "--disable-default-apps",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--mute-audio",
            "--force-color-profile=srgb",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "about:blank",
        ]
        try:
            self.process = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=self._log,
                pass_fds=(3, 4),
                preexec_fn=wire,
                start_new_session=True,
            )
        finally:
            for fd in (cmd_read, out_write, child_in, child_out):
                os.close(fd)
        self._to_browser, self._from_browser = cmd_write, out_read
        threading.Thread(target=self._read, daemon=True, name="chromium-pipe").start()

    def close(self) -> None:
        proc, self.process = self.process, None
        try:
            if proc is not None:
                if proc.poll() is None:
                    with contextlib.suppress(Exception):
                        self._send("Browser.close")
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(timeout=3)
                _kill_group(proc)
        finally:
            for fd in (self._to_browser, self._from_browser):
                if fd is not None:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            self._to_browser = self._from_browser = None
            if self._log is not None:
                self._log.close()
                self._log = None
            if self.profile is not None:
                shutil.rmtree(self.profile, ignore_errors=True)
                self.profile = None

    def stderr_tail(self, n: int = 2000) -> str:
        """The last characters Chromium wrote to stdout/stderr (for error messages)."""
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-n:]

    # -- protocol ------------------------------------------------------------------

    def _read(self) -> None:
        buf = b""
        fd = self._from_browser
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                self._messages.put(None)
                return
            buf += chunk
            *complete, buf = buf.split(b"\0")
            for raw in complete:
                with contextlib.suppress(ValueError):
                    self._messages.put(json.loads(raw))

    def _send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method}
        if params:
            message["params"] = params
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._to_browser, data) :]
        return self._next_id

    def _next(self, deadline: float) -> dict:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("still waiting for Chromium")
        try:
            message = self._messages.get(timeout=left)
        except queue.Empty:
            raise TimeoutError("still waiting for Chromium") from None
        if message is None:
            self._messages.put(None)  # stays closed for later readers
            raise BrowserError(f"Chromium closed the pipe; its output:\n{self.stderr_tail()}")
        return message

    def call(
        self,
        method: str,
        params: dict | None = None,
        *,
        session: str | None = None,
        deadline: float,
    ) -> dict:
        """Send one command and wait for its reply; events met meanwhile are kept."""
        wanted = self._send(method, params, session)
        while True:
            message = self._next(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise BrowserError(f"{method} failed: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self._events.append(message)

    def wait_for(self, method: str, *, session: str | None, deadline: float) -> dict:
        """Wait for an event (one already received counts)."""
        for event in self._events:
            if event["method"] == method and event.get("sessionId") == session:
                return event
        while True:
            message = self._next(deadline)
            if "method" in message:
                self._events.append(message)
                if message["method"] == method and message.get("sessionId") == session:
                    return message

    def drain(self) -> None:
        """Keep every event already written by the browser."""
        while True:
            try:
                message = self._messages.get_nowait()
            except queue.Empty:
                return
            if message is None:
                self._messages.put(None)
                return
            if "method" in message:
                self._events.append(message)

    def events(self, session: str | None = None) -> list[dict]:
        return [e for e in self._events if e.get("sessionId") == session]


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the browser's process group (it leads its own session) and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    # Helpers (zygote, renderer, GPU) were in the group too; wait until none runs. They
    # were reparented, so they may stay zombies until init reaps them: those are dead.
    for _ in range(100):
        if not group_members(proc.pid):
            return
        time.sleep(0.02)


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of process group ``pgid``; Linux reads /proc."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return []
        return [pgid]
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # state, ppid, pgrp, ...
        if fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def render_in_chromium(
    html_path: str | os.PathLike,
    screenshot_path: str | os.PathLike,
    *,
    width: int = 1280,
    height: int | None = None,
    timeout: float = 60,
    settle: float = 0.2,
) -> Rendered:
    """Load ``html_path`` in headless Chromium; return what rendered and what went wrong.

    ``height=None`` lays the page out in a viewport ``width`` wide and 800 high and
    screenshots the whole page (at least 800 pixels high); a number fixes the viewport and
    the PNG to ``width`` x ``height``. The PNG is at device scale 1: ``width`` pixels wide.
    ``timeout`` (seconds) bounds the whole call, start-up included: past it a
    :class:`TimeoutError` is raised and the browser killed. ``settle`` (seconds) is waited
    after the load event and two animation frames, for scripts that draw late.
    """
    page = Path(html_path).resolve()
    if not page.is_file():
        raise FileNotFoundError(page)
    out = Path(screenshot_path)
    url = page.as_uri()
    deadline = time.monotonic() + timeout
    view_height = height or 800

    with Chromium(width=width, height=view_height) as browser:
        try:
            target = browser.call(
                "Target.createTarget", {"url": "about:blank"}, deadline=deadline
            )["targetId"]
            session = browser.call(
                "Target.attachToTarget",
                {"targetId": target, "flatten": True},
                deadline=deadline,
            )["sessionId"]

            def call(method: str, params: dict | None = None) -> dict:
                return browser.call(method, params, session=session, deadline=deadline)

            for domain in ("Page", "Runtime", "Log", "Network"):
                call(f"{domain}.enable")
            call("Network.setBlockedURLs", {"urls": [f"{s}://*" for s in BLOCKED_SCHEMES]})
            call("Network.setCacheDisabled", {"cacheDisabled": True})
            call(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": view_height, "deviceScaleFactor": 1, "mobile": False},
            )
            nav = call("Page.navigate", {"url": url})
            if nav.get("errorText"):
                raise BrowserError(f"could not open {url}: {nav['errorText']}")
            browser.wait_for("Page.loadEventFired", session=session, deadline=deadline)
            call(
                "Runtime.evaluate",
                {"expression": _SETTLE_JS % round(1000 * settle), "awaitPromise": True},
            )
            counts = _value(
                call("Runtime.evaluate", {"expression": _COUNT_JS, "returnByValue": True})
            )
            dom = _value(
                call(
                    "Runtime.evaluate",
                    {
                        "expression": "document.documentElement.outerHTML",
                        "returnByValue": True,
                    },
                )
            )
            shot: dict[str, Any] = {"format": "png", "fromSurface": True}
            if height is None:
                full = max(1, int(counts["height"]))
                shot |= {
                    "captureBeyondViewport": True,
                    "clip": {"x": 0, "y": 0, "width": width, "height": full, "scale": 1},
                }
            png = base64.b64decode(call("Page.captureScreenshot", shot)["data"])
            browser.drain()
        except TimeoutError as exc:
            raise TimeoutError(
                f"{page} did not finish rendering within {timeout} s ({exc}); "
                f"Chromium's output:\n{browser.stderr_tail()}"
            ) from None
        events = browser.events(session)

    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(png)
    errors, requests = _problems(events, url)
    return Rendered(
        dom=dom,
        console_errors=errors,
        screenshot=out,
        n_tables=int(counts["n_tables"]),
        n_figures=int(counts["n_figures"]),
        network_requests=requests,
        url=url,
        page_size=(int(counts["width"]), int(counts["height"])),
    )


def _value(result: dict) -> Any:
    if "exceptionDetails" in result:
        raise BrowserError(f"evaluation failed: {_exception_text(result['exceptionDetails'])}")
    return result["result"].get("value")


def _exception_text(details: dict) -> str:
    label = details.get("text") or "Uncaught"  # "Uncaught", "Uncaught (in promise)"
    exc = details.get("exception") or {}
    description = (exc.get("description") or exc.get("value") or "").strip()
    text = f"{label} {str(description).splitlines()[0]}" if description else label
    where = details.get("url") or ""
    if where:
        where = f" ({where}:{details.get('lineNumber', 0) + 1})"
    return f"{text}{where}"


def _remote_object_text(arg: dict) -> str:
    if "value" in arg:
        value = arg["value"]
        return value if isinstance(value, str) else json.dumps(value)
    return arg.get("description") or arg.get("unserializableValue") or arg.get("type", "")


def _problems(events: list[dict], page_url: str) -> tuple[list[str], list[str]]:
    """Console errors and network requests, in the order the browser reported them."""
    errors: list[str] = []
    requests: list[str] = []
    failed: list[tuple[str, str]] = []
    urls: dict[str, str] = {}
    for event in events:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            text = " ".join(_remote_object_text(a) for a in params.get("args", []))
            errors.append(f"console.{params['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            errors.append(f"exception: {_exception_text(params.get('exceptionDetails', {}))}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            where = f" ({entry['url']})" if entry.get("url") else ""
            errors.append(f"{entry.get('source', 'log')}: {entry.get('text', '')}{where}")
        elif method == "Network.requestWillBeSent":
            request_url = params["request"]["url"]
            urls[params["requestId"]] = request_url
            if request_url.split("#")[0] != page_url and not request_url.startswith(NOT_NETWORK):
                requests.append(request_url)
        elif method == "Network.loadingFailed":
            reason = params.get("errorText", "failed")
            if params.get("blockedReason") == "inspector":
                reason = "blocked: the harness allows no network"
            elif params.get("blockedReason"):
                reason = f"blocked: {params['blockedReason']}"
            failed.append((urls.get(params["requestId"], "?"), reason))
    for request_url, reason in failed:
        if not any(request_url in e for e in errors):
            errors.append(f"failed to load: {request_url} ({reason})")
    return errors, list(dict.fromkeys(requests))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.browser",
        description="Screenshot an HTML file in headless Chromium; report what rendered.",
    )
    parser.add_argument("page", type=Path, help="the HTML file")
    parser.add_argument("out", type=Path, help="where to write the PNG")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument(
        "--height", type=int, default=None, help="viewport height; default: the whole page"
    )
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args(argv)
    if chromium_path() is None:
        print(f"error: no Chromium found. {INSTALL_HINT}", file=sys.stderr)
        return 2
    rendered = render_in_chromium(
        args.page, args.out, width=args.width, height=args.height, timeout=args.timeout
    )
    print(rendered.summary())
    return 1 if rendered.console_errors or rendered.network_requests else 0


if __name__ == "__main__":
    sys.exit(main())
