"""Headless Chromium for the report tests: installed when missing (Debian's package), driven
through the DevTools protocol over a pipe (--remote-debugging-pipe: commands on fd 3, replies
on fd 4, each a JSON message ending in a NUL byte)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_binary() -> str:
    """Path of chromium; installs Debian's package (as root) when it is missing."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    if os.geteuid() != 0:
        raise RuntimeError("chromium is not installed and the tests are not root: apt-get install chromium")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, capture_output=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True, env=env, capture_output=True)
    return shutil.which("chromium")


def _pipe_fds(read_fd: int, write_fd: int) -> None:
    """In the child: the command pipe on fd 3, the reply pipe on fd 4 (via spare copies, so
    that neither overwrites the other)."""
    a, b = os.dup(read_fd), os.dup(write_fd)
    os.dup2(a, 3)
    os.dup2(b, 4)


class DevTools:
    """A headless Chromium with a fresh profile, one page attached in flat session mode."""

    def __init__(self, binary: str, timeout: float = 60.0):
        self.profile = tempfile.mkdtemp(prefix="dynid-chromium-")
        cmd_r, cmd_w = os.pipe()  # we write commands, chromium reads fd 3
        out_r, out_w = os.pipe()  # chromium writes fd 4, we read
        self.timeout = timeout
        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-pipe", "about:blank"],
            pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=lambda: _pipe_fds(cmd_r, out_w))
        os.close(cmd_r)
        os.close(out_w)
        self.w, self.r = os.fdopen(cmd_w, "wb", buffering=0), os.fdopen(out_r, "rb", buffering=0)
        self.next_id, self.buffer, self.events = 0, b"", []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]

    def _read(self) -> dict:
        while b"\0" not in self.buffer:
            chunk = self.r.read(65536)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buffer += chunk
        msg, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, session: bool = False, **params) -> dict:
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self.w.write(json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            reply = self._read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)
        raise TimeoutError(method)

    def wait_for(self, method: str) -> dict:
        deadline = time.monotonic() + self.timeout
        for event in self.events:
            if event.get("method") == method:
                return event
        while time.monotonic() < deadline:
            event = self._read()
            self.events.append(event)
            if event.get("method") == method:
                return event
        raise TimeoutError(method)

    def load(self, url: str) -> None:
        """Navigate with console, log and exception reporting on, and wait for the load event
        (events of an earlier page are dropped)."""
        self.events = []
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            self.call(domain, session=True)
        self.call("Page.navigate", session=True, url=url)
        self.wait_for("Page.loadEventFired")
        self.call("Runtime.evaluate", session=True, expression="1")  # flush pending events

    def evaluate(self, expression: str):
        out = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        return out["result"].get("value")

    def problems(self) -> list[str]:
        """Console messages, log entries of level warning/error and uncaught exceptions so far."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled":
                out.append(f"console.{p['type']}: " + " ".join(str(a.get("value", a.get("description")))
                                                              for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                out.append("exception: " + p["exceptionDetails"].get("exception", {}).get("description", "")
                           or p["exceptionDetails"].get("text", ""))
            elif m == "Log.entryAdded" and p["entry"]["level"] in ("warning", "error"):
                out.append(f"log {p['entry']['level']}: {p['entry']['text']} {p['entry'].get('url', '')}")
        return out

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def screenshot(binary: str, url: str, path: Path, size: str = "1280,4000") -> None:
    """A full-window PNG of ``url`` (fresh profile)."""
    profile = tempfile.mkdtemp(prefix="dynid-chromium-")
    try:
        subprocess.run([binary, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={path}",
                        f"--window-size={size}", url], check=True, capture_output=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
