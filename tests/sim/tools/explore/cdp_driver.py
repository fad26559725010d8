#!/usr/bin/env python3
"""Drives a page in headless Chromium over the DevTools protocol, for the explorer's tests.

Python 3 standard library only: the protocol runs over --remote-debugging-pipe (the browser
reads commands on its fd 3 and writes replies and events on its fd 4, one JSON message per
NUL-terminated chunk), so no websocket client is needed.

    cdp_driver.py --chromium BIN --page PAGE.html --script ACTIONS.json --out RESULT.json
                  [--downloads DIR] [--timeout SECONDS] [--width PX] [--height PX]

ACTIONS.json is a list of actions run in order; RESULT.json gets {"results": [one per
action], "console_errors": [...], "exceptions": [...], "network": [...], "fatal": null or
text}. The test (test_explore_page_browser.cpp) makes the assertions; this script only acts
and observes. Actions:

  {"op": "wait_ready", "timeout": s}        waits for body[data-ready]; result: its value
  {"op": "wait", "expr": js, "timeout": s}  waits until the expression is truthy; result: its value
  {"op": "eval", "expr": js}                result: the value (promises awaited)
  {"op": "click", "selector": css}          a real mouse click (Input.dispatchMouseEvent) at the
                                            centre of the element, scrolled into view; fails when
                                            another element is on top there
  {"op": "key", "selector": css, "key": k}  focuses the element and presses k (e.g. "ArrowRight")
  {"op": "attrs", "selector": css, "names": [...]}  result: {name: value or null}, null if no element
  {"op": "text", "selector": css}           result: textContent, null if no element
  {"op": "count", "selector": css}          result: the number of matching elements
  {"op": "screenshot", "path": p, "selector": css?, "viewport": bool?}
                                            PNG of the whole page, of one element, or of the viewport
  {"op": "wait_downloads", "count": n, "timeout": s} result: [{"name", "state"}] of finished downloads

Exit status 0 when every action ran, 1 otherwise ("fatal" says why), 2 for bad arguments.
"""
import argparse
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time


class Fatal(Exception):
    pass


class Browser:
    def __init__(self, chromium, width, height, deadline, log_path):
        self.deadline = deadline
        self.next_id = 1
        self.buffer = b""
        self.events = []
        self.home = tempfile.mkdtemp(prefix="tilesim-cdp-")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def child_fds():
            # The pipe ends go to fds 3 and 4 of the browser, via fds >= 10 so that dup2 cannot
            # overwrite one end with the other. dup2 leaves the targets inheritable.
            r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        env = dict(os.environ, HOME=self.home)
        args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
                "--user-data-dir=" + os.path.join(self.home, "profile"), "--remote-debugging-pipe",
                "--window-size=%d,%d" % (width, height), "about:blank"]
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, env=env,
                                     preexec_fn=child_fds, close_fds=False)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.session = None

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.to_browser, self.from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log.close()
        shutil.rmtree(self.home, ignore_errors=True)

    def _read_message(self, until):
        while b"\0" not in self.buffer:
            left = min(until, self.deadline) - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise Fatal("chromium closed the DevTools pipe (exit status %s); see its log" % self.proc.poll())
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=True, timeout=30):
        """Sends a command and returns its result; events that arrive meanwhile are queued."""
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        self.next_id += 1
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        until = time.monotonic() + timeout
        while True:
            reply = self._read_message(until)
            if reply is None:
                raise Fatal("no reply to %s within %ss" % (method, timeout))
            if reply.get("id") == msg["id"]:
                if "error" in reply:
                    raise Fatal("%s failed: %s" % (method, reply["error"].get("message")))
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def pump(self, seconds):
        """Collects events for up to `seconds`."""
        until = time.monotonic() + seconds
        while True:
            m = self._read_message(until)
            if m is None:
                return
            if "method" in m:
                self.events.append(m)


class Page:
    def __init__(self, browser, downloads):
        self.b = browser
        self.console_errors, self.exceptions, self.network, self.downloads = [], [], [], {}
        targets = []
        until = time.monotonic() + 20
        while not targets:
            targets = [t for t in self.b.send("Target.getTargets", session=False)["targetInfos"] if t["type"] == "page"]
            if not targets:
                if time.monotonic() > until:
                    raise Fatal("chromium opened no page")
                time.sleep(0.1)
        attached = self.b.send("Target.attachToTarget", {"targetId": targets[0]["targetId"], "flatten": True},
                               session=False)
        self.b.session = attached["sessionId"]
        if downloads:
            self.b.send("Browser.setDownloadBehavior",
                        {"behavior": "allow", "downloadPath": os.path.abspath(downloads), "eventsEnabled": True},
                        session=False)
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.b.send(domain + ".enable")

    def navigate(self, url):
        self.b.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired", 60)

    def drain(self):
        """Sorts the queued events into errors, requests and downloads."""
        for e in self.b.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                text = d.get("exception", {}).get("description") or d.get("text")
                self.exceptions.append("%s (line %s)" % (text, d.get("lineNumber")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                self.console_errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                self.console_errors.append("%s: %s" % (p["entry"].get("source"), p["entry"].get("text")))
            elif m == "Network.requestWillBeSent":
                url = p["request"]["url"]
                if not url.startswith(("file:", "data:", "blob:", "about:")):
                    self.network.append(url)
            elif m == "Browser.downloadWillBegin":
                self.downloads[p["guid"]] = {"name": p["suggestedFilename"], "state": "started"}
            elif m == "Browser.downloadProgress" and p["guid"] in self.downloads:
                self.downloads[p["guid"]]["state"] = p["state"]
        self.b.events = []

    def wait_event(self, method, timeout):
        until = time.monotonic() + timeout
        while True:
            for e in self.b.events:
                if e["method"] == method:
                    self.drain()
                    return
            left = until - time.monotonic()
            if left <= 0:
                raise Fatal("no %s within %ss" % (method, timeout))
            self.b.pump(min(left, 0.2))

    def eval(self, expr):
        r = self.b.send("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        self.drain()
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise Fatal("evaluating %r threw: %s" % (expr[:120], d.get("exception", {}).get("description") or d.get("text")))
        return r["result"].get("value")

    def wait_for(self, expr, timeout):
        until = time.monotonic() + timeout
        while True:
            value = self.eval(expr)
            if value:
                return value
            if time.monotonic() > until:
                raise Fatal("timed out after %ss waiting for %s" % (timeout, expr[:200]))
            self.b.pump(0.05)
            self.drain()

    def element_js(self, selector, body):
        return "(() => { const el = document.querySelector(%s); if (!el) return null; %s })()" % (json.dumps(selector), body)

    def click(self, selector):
        box = self.eval(self.element_js(selector, """
            el.scrollIntoView({block: 'center', inline: 'center'});
            const r = el.getBoundingClientRect();
            const x = r.left + r.width / 2, y = r.top + r.height / 2;
            const top = document.elementFromPoint(x, y);
            return {x, y, w: r.width, h: r.height, covered: !(top === el || el.contains(top)),
                    top: top ? top.tagName + (top.id ? '#' + top.id : '') : null, disabled: !!el.disabled};"""))
        if box is None:
            raise Fatal("click: no element matches %s" % selector)
        if box["w"] <= 0 or box["h"] <= 0:
            raise Fatal("click: %s has an empty box" % selector)
        if box["covered"]:
            raise Fatal("click: %s is covered by %s at its centre" % (selector, box["top"]))
        if box["disabled"]:
            raise Fatal("click: %s is disabled" % selector)
        common = {"x": box["x"], "y": box["y"], "button": "left", "clickCount": 1}
        self.b.send("Input.dispatchMouseEvent", dict(common, type="mouseMoved", button="none", clickCount=0))
        self.b.send("Input.dispatchMouseEvent", dict(common, type="mousePressed", buttons=1))
        self.b.send("Input.dispatchMouseEvent", dict(common, type="mouseReleased", buttons=0))
        self.drain()
        return {"x": box["x"], "y": box["y"]}

    def key(self, selector, key):
        if self.eval(self.element_js(selector, "el.focus(); return document.activeElement === el;")) is not True:
            raise Fatal("key: cannot focus %s" % selector)
        codes = {"ArrowRight": 39, "ArrowLeft": 37, "ArrowUp": 38, "ArrowDown": 40, "Home": 36, "End": 35}
        for kind in ("rawKeyDown", "keyUp"):
            self.b.send("Input.dispatchKeyEvent", {"type": kind, "key": key, "code": key,
                                                   "windowsVirtualKeyCode": codes.get(key, 0)})
        self.drain()

    def screenshot(self, path, selector, viewport):
        params = {"format": "png", "captureBeyondViewport": not viewport}
        # From the top, so that sticky elements sit where a reader first sees them.
        self.eval("window.scrollTo(0, 0)")
        if viewport:
            pass
        elif selector:
            box = self.eval(self.element_js(selector, """
                const r = el.getBoundingClientRect();
                return {x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height};"""))
            if box is None:
                raise Fatal("screenshot: no element matches %s" % selector)
            params["clip"] = dict(box, scale=1)
        else:
            size = self.eval("({width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight})")
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        data = self.b.send("Page.captureScreenshot", params, timeout=60)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def wait_downloads(self, count, timeout):
        until = time.monotonic() + timeout
        while True:
            self.drain()
            done = [d for d in self.downloads.values() if d["state"] in ("completed", "canceled")]
            if len(done) >= count:
                return sorted(done, key=lambda d: d["name"])
            if time.monotonic() > until:
                raise Fatal("timed out waiting for %d downloads: %s" % (count, list(self.downloads.values())))
            self.b.pump(0.1)


def run_action(page, a):
    op = a["op"]
    if op == "wait_ready":
        return page.wait_for("document.body && document.body.dataset.ready", a.get("timeout", 30))
    if op == "wait":
        return page.wait_for(a["expr"], a.get("timeout", 10))
    if op == "eval":
        return page.eval(a["expr"])
    if op == "click":
        return page.click(a["selector"])
    if op == "key":
        return page.key(a["selector"], a["key"])
    if op == "attrs":
        return page.eval(page.element_js(a["selector"], "const o = {}; for (const n of %s) o[n] = el.getAttribute(n); return o;"
                                         % json.dumps(a["names"])))
    if op == "text":
        return page.eval(page.element_js(a["selector"], "return el.textContent;"))
    if op == "count":
        return page.eval("document.querySelectorAll(%s).length" % json.dumps(a["selector"]))
    if op == "screenshot":
        return page.screenshot(a["path"], a.get("selector"), a.get("viewport", False))
    if op == "wait_downloads":
        return page.wait_downloads(a.get("count", 1), a.get("timeout", 10))
    raise Fatal("unknown action %r" % op)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--page", required=True)
    ap.add_argument("--script", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--downloads")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=1000)
    args = ap.parse_args()
    with open(args.script) as f:
        actions = json.load(f)
    out = {"results": [], "console_errors": [], "exceptions": [], "network": [], "fatal": None}
    deadline = time.monotonic() + args.timeout
    browser = None
    page = None
    try:
        browser = Browser(args.chromium, args.width, args.height, deadline, args.out + ".chromium.log")
        page = Page(browser, args.downloads)
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": args.width, "height": args.height, "deviceScaleFactor": 1, "mobile": False})
        page.navigate("file://" + os.path.abspath(args.page))
        for i, a in enumerate(actions):
            try:
                out["results"].append(run_action(page, a))
            except Fatal as e:
                raise Fatal("action %d (%s): %s" % (i, json.dumps(a)[:200], e))
        # Let late errors (timers, promise rejections) arrive before judging the console.
        browser.pump(0.3)
        page.drain()
    except (Fatal, OSError, ValueError) as e:
        out["fatal"] = str(e)
    finally:
        if page:
            out["console_errors"], out["exceptions"], out["network"] = page.console_errors, page.exceptions, page.network
        if browser:
            browser.close()
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    return 1 if out["fatal"] else 0


if __name__ == "__main__":
    sys.exit(main())
