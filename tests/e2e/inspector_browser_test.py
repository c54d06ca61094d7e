#!/usr/bin/env python3
"""The web inspector in a real browser: headless Chromium driven over the
DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages ended by
NUL, fd 3 into Chromium, fd 4 out of it), Python's standard library only.

Starts wayfinder-server with --http_listen on free loopback ports and a
temporary data directory, uploads maps with POST /v1/PutMap, and drives the
page through real input events (mouse clicks, drags and wheel at canvas
coordinates) and form changes:
  - a path clicked on the canvas shows the same length as POST /v1/FindPath
    for the same cells (and it is > 0);
  - a wall painted and an obstacle dropped in one page show up as a new
    #map-version in another page (Server-Sent Events), within a bound;
  - a 4096 x 4096 grid pans and zooms with the 95th percentile of frame
    times (requestAnimationFrame deltas, measured in the page) under a bound.
Screenshots (1000 x 700 PNG) go to --screenshots. Exit 77 (ctest's skip)
only when there is no Chromium.

  usage: inspector_browser_test.py --server BIN --map rooms.map
             [--screenshots DIR] [--chromium BIN] [--budget SECONDS]
"""

import argparse
import base64
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

SKIP = 77
WIDTH, HEIGHT = 1000, 700


class Fail(Exception):
    pass


class Deadline:
    """The whole test's time budget; every wait is bounded by it too."""

    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self, at_most):
        left = self.end - time.monotonic()
        if left <= 0:
            raise Fail("the test's time budget ran out")
        return min(at_most, left)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port, rpc, body, timeout=60):
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/{rpc}", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return json.loads(reply.read())
    except urllib.error.HTTPError as e:
        raise Fail(f"POST /v1/{rpc}: HTTP {e.code}: {e.read()[:300]!r}") from None


# ------------------------------------------------------------------ server

class Server:
    def __init__(self, binary, work, deadline):
        self.http_port = free_port()
        self.log_path = os.path.join(work, "server.log")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [binary, f"--listen=127.0.0.1:{free_port()}", f"--http_listen=127.0.0.1:{self.http_port}",
             f"--data_dir={os.path.join(work, 'data')}", "--workers=2"],
            stdout=self.log, stderr=subprocess.STDOUT)
        self._wait_ready(deadline)

    def _wait_ready(self, deadline):
        end = time.monotonic() + deadline.left(20)
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise Fail(f"wayfinder-server exited at start ({self.proc.returncode})")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        raise Fail("the HTTP port did not answer within 20 s")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.log.close()

    def tail(self):
        with open(self.log_path, "rb") as f:
            return f.read()[-3000:].decode(errors="replace")


# ------------------------------------------------------------------ browser

class Chromium:
    """One browser; call() sends a DevTools command and waits for its answer."""

    def __init__(self, binary, work):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        # Chromium's ends above 9, so that putting them on 3 and 4 clobbers neither.
        to_chrome_r, from_chrome_w = (self._above_9(fd) for fd in (to_chrome_r, from_chrome_w))
        flags = ["--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={work}/profile",
                 "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check",
                 "--disable-extensions", "--disable-background-networking", "--disable-dev-shm-usage",
                 "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                 "--disable-backgrounding-occluded-windows", "--hide-scrollbars", "--mute-audio",
                 f"--window-size={WIDTH},{HEIGHT}", "about:blank"]
        # A trampoline puts the pipe ends on fds 3 and 4, where Chromium wants
        # them (sh cannot: dash names fds 0-9 only), then becomes Chromium.
        trampoline = ("import os, sys; a, b = int(sys.argv[1]), int(sys.argv[2]); os.dup2(a, 3); os.dup2(b, 4);"
                      " os.close(a); os.close(b); os.execv(sys.argv[3], sys.argv[3:])")
        self.log = open(os.path.join(work, "chromium.log"), "wb")
        self.proc = subprocess.Popen([sys.executable, "-c", trampoline, str(to_chrome_r), str(from_chrome_w),
                                      binary] + flags, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     pass_fds=(to_chrome_r, from_chrome_w), start_new_session=True)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.next_id = 0
        self.replies = {}
        self.events = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    @staticmethod
    def _above_9(fd):
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(fd)
        return high

    def _read(self):
        buffer = b""
        while True:
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                break
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            with self.cond:
                for m in messages:
                    msg = json.loads(m)
                    if "id" in msg:
                        self.replies[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                self.cond.notify_all()
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def call(self, method, params=None, session=None, timeout=15):
        self.next_id += 1
        msg_id = self.next_id
        msg = {"id": msg_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        end = time.monotonic() + timeout
        with self.cond:
            while msg_id not in self.replies:
                left = end - time.monotonic()
                if left <= 0 or getattr(self, "closed", False):
                    raise Fail(f"Chromium did not answer {method} within {timeout:.0f} s")
                self.cond.wait(left)
            reply = self.replies.pop(msg_id)
        if "error" in reply:
            raise Fail(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def page_errors(self):
        with self.cond:
            return [e for e in self.events if e.get("method") == "Runtime.exceptionThrown"]

    def close(self):
        try:
            if self.proc.poll() is None:
                self.call("Browser.close", timeout=5)
                self.proc.wait(timeout=5)
        except (Fail, OSError, subprocess.TimeoutExpired):
            pass
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=5)
        os.close(self.to_chrome)
        self.log.close()


class Page:
    """One tab, driven through input events like a person would."""

    def __init__(self, browser, url, deadline):
        self.browser = browser
        self.deadline = deadline
        target = browser.call("Target.createTarget", {"url": "about:blank"})
        self.target = target["targetId"]
        self.session = browser.call("Target.attachToTarget", {"targetId": self.target, "flatten": True})["sessionId"]
        self.call("Runtime.enable")
        self.call("Page.enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
        self.call("Page.navigate", {"url": url})
        self.wait_for("window.inspector !== undefined && document.readyState === 'complete'", "the page")
        self.eval("inspector.ready.then(() => true)", await_promise=True)

    def call(self, method, params=None, timeout=15):
        return self.browser.call(method, params, self.session, self.deadline.left(timeout))

    def eval(self, expression, await_promise=False, timeout=30):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": await_promise}, timeout)
        if "exceptionDetails" in result:
            raise Fail(f"in the page: {expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression, what, timeout=20):
        end = time.monotonic() + self.deadline.left(timeout)
        value = None
        while time.monotonic() < end:
            value = self.eval(expression)
            if value:
                return value
            time.sleep(0.05)
        raise Fail(f"timed out after {timeout} s waiting for {what} ({expression} = {value!r})")

    def text(self, element_id):
        return self.eval(f"document.getElementById('{element_id}').textContent")

    def choose(self, element_id, value):
        """A form change: the select's value, then the change event the page listens for."""
        self.eval(f"(() => {{ const s = document.getElementById('{element_id}'); s.value = {json.dumps(value)};"
                  f" s.dispatchEvent(new Event('change')); return s.value; }})()")

    def mouse(self, kind, x, y, buttons=0, **extra):
        params = {"type": kind, "x": x, "y": y, "buttons": buttons, **extra}
        if kind in ("mousePressed", "mouseReleased"):
            params.update(button="left", clickCount=1)
        self.call("Input.dispatchMouseEvent", params)

    def click(self, x, y):
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, buttons=1)
        self.mouse("mouseReleased", x, y)

    def click_element(self, selector):
        r = self.eval(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                      f" e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect();"
                      f" return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
        self.click(*r)

    def drag(self, points):
        self.mouse("mouseMoved", *points[0])
        self.mouse("mousePressed", *points[0], buttons=1)
        for p in points[1:]:
            self.mouse("mouseMoved", *p, buttons=1)
        self.mouse("mouseReleased", *points[-1])

    def wheel(self, x, y, delta):
        self.mouse("mouseWheel", x, y, deltaX=0, deltaY=delta)

    def canvas_rect(self):
        return self.eval("(() => { const r = document.getElementById('view').getBoundingClientRect();"
                         " return [r.x, r.y, r.width, r.height]; })()")

    def select_map(self, name, version):
        self.choose("map-select", name)
        self.wait_for(f"document.getElementById('view').dataset.version === '{version}' &&"
                      f" document.getElementById('view').dataset.map === '{name}'", f"map {name} v{version}", 60)

    def screenshot(self, path):
        if not path:
            return
        self.eval("document.getElementById('panel').scrollTop = 0")
        time.sleep(0.1)
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        print(f"screenshot {path} ({os.path.getsize(path)} bytes)")


# ------------------------------------------------------------------ maps

def read_movingai(path):
    with open(path) as f:
        lines = f.read().split("\n")
    height = int(lines[1].split()[1])
    width = int(lines[2].split()[1])
    rows = [row[:width] for row in lines[4:4 + height]]
    free = [[c in ".G" for c in row] for row in rows]
    return "\n".join(lines), width, height, free


def big_grid(n):
    """n x n cells: walls every 64 columns and rows with doors, cost bands."""
    cells = bytearray(n * n)
    wall_row = bytearray([255]) * n
    for d in range(0, n, 64):
        wall_row[d + 28:d + 36] = bytes(8)  # doors in horizontal walls
    for y in range(n):
        if y % 64 == 63:
            cells[y * n:(y + 1) * n] = wall_row
            continue
        row = memoryview(cells)[y * n:(y + 1) * n]
        if (y // 256) % 2 == 1:
            row[:] = bytes([1 + (y % 256) // 2]) * n  # a band of cell costs
        if y % 64 not in range(28, 36):
            for x in range(63, n, 64):
                row[x] = 255
    return bytes(cells)


def to_canvas(rect, map_w, map_h, x, y):
    """The canvas pixel of world point (x, y) when the page fits the map (96%, centred)."""
    left, top, w, h = rect
    scale = min(w / map_w, h / map_h) * 0.96
    return left + w / 2 + (x - map_w / 2) * scale, top + h / 2 + (y - map_h / 2) * scale


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# ------------------------------------------------------------------ the test

def check_path(page, port, name):
    """The path the page shows against POST /v1/FindPath between the points it shows."""
    page.wait_for("!['–', ''].includes(document.getElementById('path-length').textContent)", "#path-length")
    shown = {k: page.text(f"path-{k}") for k in ("start", "goal", "status", "length", "expansions", "time")}
    print(f"page: {shown}")
    start, goal = ([float(v) for v in shown[k].split(",")] for k in ("start", "goal"))
    api = post(port, "FindPath", {"map": name, "start": {"x": start[0], "y": start[1]},
                                  "goal": {"x": goal[0], "y": goal[1]}})
    length = api.get("length", 0)
    print(f"API:  status {api.get('status')} length {length:.6f} expansions {api.get('stats', {}).get('expansions')}")
    if not length > 0:
        raise Fail(f"FindPath length {length} is not > 0")
    if abs(float(shown["length"]) - length) > 0.0005 + 1e-9:
        raise Fail(f"the page shows length {shown['length']}, FindPath says {length:.6f}")
    return shown, api


def test_path(page, port, rooms, shots):
    _, width, height, free = rooms
    page.select_map("rooms", 1)
    cells = [(x, y) for y in range(height) for x in range(width) if free[y][x]]
    start, goal = cells[0], cells[-1]
    rect = page.canvas_rect()
    for cell in (start, goal):
        page.click(*to_canvas(rect, width, height, cell[0] + 0.5, cell[1] + 0.5))
    shown, api = check_path(page, port, "rooms")
    want_start = f"{start[0] + 0.5}, {start[1] + 0.5}"
    want_goal = f"{goal[0] + 0.5}, {goal[1] + 0.5}"
    if (shown["start"], shown["goal"]) != (want_start, want_goal):
        raise Fail(f"clicked cells {want_start} and {want_goal}, the page shows {shown['start']} and {shown['goal']}")
    page.click_element("#overlay-NAVMESH-1")
    page.wait_for("document.getElementById('overlay-NAVMESH-1').checked", "the navmesh overlay")
    time.sleep(0.5)  # the overlay's GetGraph, then a frame
    page.screenshot(shots and os.path.join(shots, "inspector-path.png"))
    return api


def test_flow(page, rooms, shots):
    _, width, height, free = rooms
    page.click_element("#overlay-NAVMESH-1")
    page.choose("tool", "flow")
    goal = next((x, y) for y in range(height // 2, height) for x in range(width // 2, width) if free[y][x])
    page.click(*to_canvas(page.canvas_rect(), width, height, goal[0] + 0.5, goal[1] + 0.5))
    page.wait_for("document.getElementById('flow-reachable').textContent !== '–'", "#flow-reachable")
    print(f"flow field: {page.text('flow-reachable')}, {page.text('flow-time')}")
    page.screenshot(shots and os.path.join(shots, "inspector-flow.png"))
    page.click_element("#flow-clear")


def wait_version(pages, version, what):
    t0 = time.monotonic()
    for page in pages:
        page.wait_for(f"document.getElementById('map-version').textContent === '{version}'",
                      f"#map-version {version} after {what}", 10)
    return time.monotonic() - t0


def test_live_edits(page1, page2, port, rooms, path):
    _, width, height, _ = rooms
    page2.select_map("rooms", 1)
    # Page one paints a wall on a cell of the path; page two follows.
    middle = path["waypoints"][len(path["waypoints"]) // 2]
    page1.choose("tool", "wall")
    page1.click(*to_canvas(page1.canvas_rect(), width, height, middle["x"], middle["y"]))
    seconds = wait_version([page1, page2], 2, "painting a wall")
    print(f"wall painted in page 1: page 2 shows version 2 within {seconds:.2f} s")
    # Page two drops an obstacle; page one follows and can remove it.
    page2.choose("tool", "obstacle")
    rect = page2.canvas_rect()
    a = to_canvas(rect, width, height, 2.2, 2.2)
    b = to_canvas(rect, width, height, 6.8, 5.8)
    page2.drag([a, ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2), b])
    seconds = wait_version([page2, page1], 3, "dropping an obstacle")
    info = post(port, "GetMap", {"name": "rooms"})
    if info.get("obstacles") != ["crate-1"]:
        raise Fail(f"after the obstacle drag GetMap says obstacles {info.get('obstacles')}")
    print(f"obstacle crate-1 dropped in page 2: page 1 shows version 3 within {seconds:.2f} s")
    page1.wait_for("document.getElementById('obstacle-list').value === 'crate-1'", "crate-1 in page 1's list")
    page1.click_element("#obstacle-remove")
    wait_version([page1, page2], 4, "removing the obstacle")
    if post(port, "GetMap", {"name": "rooms"}).get("obstacles"):
        raise Fail("the obstacle is still there after its removal")


def canvas_pixel(page, x, y):
    """The canvas's RGB at page point (x, y)."""
    return page.eval(f"(() => {{ const c = document.getElementById('view'); const r = c.getBoundingClientRect();"
                     f" const k = c.width / r.width; return Array.from(c.getContext('2d').getImageData("
                     f"Math.round(({x} - r.x) * k), Math.round(({y} - r.y) * k), 1, 1).data.slice(0, 3)); }})()")


def test_links(page, port, rooms, path, version, shots):
    """Links added by UpdateMap show on the map and in the path the page shows; removing them clears both."""
    _, width, height, free = rooms
    start, goal = path["waypoints"][0], path["waypoints"][-1]
    # The second link starts on the free cell farthest from the straight start-goal line the path
    # takes through the first link, so nothing else is drawn over its entry dot.
    sx, sy, gx, gy = start["x"], start["y"], goal["x"], goal["y"]
    far = max(((x + 0.5, y + 0.5) for y in range(height) for x in range(width) if free[y][x]),
              key=lambda p: abs((gx - sx) * (p[1] - sy) - (gy - sy) * (p[0] - sx)))
    near = next((x + 0.5, y + 0.5) for r in range(1, max(width, height)) for y in range(height)
                for x in range(width) if free[y][x] and 0 < abs(x + 0.5 - far[0]) + abs(y + 0.5 - far[1]) <= r)
    ladder = {"id": "ladder-1", "start": start, "end": goal, "cost": 1}
    door = {"id": "door-2", "start": {"x": far[0], "y": far[1]}, "end": {"x": near[0], "y": near[1]},
            "cost": 2, "bidirectional": True}
    post(port, "UpdateMap", {"map": "rooms", "edits": [{"addLink": ladder}, {"addLink": door}]})
    wait_version([page], version + 1, "adding two links")
    page.wait_for("document.getElementById('view').dataset.links === 'ladder-1,door-2'", "the links in the page")
    page.wait_for("document.getElementById('path-links').textContent === 'ladder-1'", "#path-links ladder-1")
    api = post(port, "FindPath", {"map": "rooms", "start": start, "goal": goal})
    if api.get("linksUsed") != ["ladder-1"] or abs(float(page.text("path-length")) - api["length"]) > 0.0005:
        raise Fail(f"FindPath says links {api.get('linksUsed')} length {api.get('length')}, the page shows "
                   f"{page.text('path-links')} length {page.text('path-length')}")
    if page.text("map-links") != "2":
        raise Fail(f"#map-links shows {page.text('map-links')}, want 2")
    # Hidden tabs get no animation frames: bring this one forward, then let two frames pass (the
    # draw the reload asked for runs in the first).
    page.call("Target.activateTarget", {"targetId": page.target})
    page.eval("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))",
              await_promise=True)
    page.screenshot(shots and os.path.join(shots, "inspector-links.png"))
    rgb = canvas_pixel(page, *to_canvas(page.canvas_rect(), width, height, *far))
    if max(abs(a - b) for a, b in zip(rgb, (0xb5, 0x17, 0x9e))) > 24:
        raise Fail(f"door-2's entry at {far} is drawn {rgb}, not the links' colour")
    print(f"links ladder-1 (taken, length {api['length']:.3f}) and door-2 (entry drawn {rgb}) shown")
    # A flow field towards ladder-1's end: its start cell's move is the link (direction 253), drawn
    # as a ring; an exception in drawing shows in the page errors checked at the end.
    tool = page.eval("document.getElementById('tool').value")
    page.choose("tool", "flow")
    page.click(*to_canvas(page.canvas_rect(), width, height, goal["x"], goal["y"]))
    page.wait_for("document.getElementById('flow-reachable').textContent !== '–'", "#flow-reachable with links")
    page.eval("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))",
              await_promise=True)
    page.click_element("#flow-clear")
    page.choose("tool", tool)
    post(port, "UpdateMap", {"map": "rooms", "edits": [{"removeLink": "ladder-1"}, {"removeLink": "door-2"}]})
    wait_version([page], version + 2, "removing the links")
    page.wait_for("document.getElementById('view').dataset.links === ''", "no links in the page")
    page.wait_for("document.getElementById('path-links').textContent === 'none'", "#path-links none")


def test_large_map(page, port, shots, bound_ms):
    n = 4096
    t0 = time.monotonic()
    put = post(port, "PutMap", {"map": {"name": "big", "grid": {"width": n, "height": n,
                                "cells": base64.b64encode(big_grid(n)).decode()}, "build": {"graphs": ["GRID"]}}},
               timeout=page.deadline.left(60))
    print(f"4096 x 4096 grid stored (version {put['version']}) in {time.monotonic() - t0:.1f} s")
    page.choose("tool", "path")
    t0 = time.monotonic()
    page.wait_for("[...document.getElementById('map-select').options].some(o => o.value === 'big')",
                  "the new map in the list")
    page.select_map("big", put["version"])
    print(f"page loaded and tiled it in {time.monotonic() - t0:.1f} s")
    page.call("Target.activateTarget", {"targetId": page.target})
    # A path across four rooms of the cost-free band (room interiors: a
    # pixel of the fitted view spans about 6 cells).
    rect = page.canvas_rect()
    for world in ((100, 30), (1000, 200)):
        page.click(*to_canvas(rect, n, n, *world))
    check_path(page, port, "big")
    x, y, w, h = rect
    cx, cy = x + w / 2, y + h / 2
    # The path in the middle of the view, zoomed in: the picture.
    middle = to_canvas(rect, n, n, 550, 110)
    page.drag([middle, ((middle[0] + cx) / 2, (middle[1] + cy) / 2), (cx, cy)])
    for _ in range(8):
        page.wheel(cx, cy, -120)
    time.sleep(0.2)
    page.screenshot(shots and os.path.join(shots, "inspector-large.png"))
    page.eval("inspector.resetFrameTimes()")
    for _ in range(2):
        page.drag([(cx + 200 * t / 40, cy + 120 * t / 40) for t in range(41)])       # pan the whole map
        for _ in range(15):
            page.wheel(cx, cy, -120)                                                   # zoom in
        page.drag([(cx - 250 * t / 40, cy - 150 * t / 40) for t in range(41)])       # pan zoomed in
        for _ in range(12):
            page.wheel(cx, cy, 120)                                                    # zoom out
    frames = page.eval("inspector.frameTimes()")
    deltas, draws = frames["deltas"], frames["drawMs"]
    if len(deltas) < 30:
        raise Fail(f"only {len(deltas)} frames measured while panning and zooming")
    p50, p95, worst = percentile(deltas, 0.5), percentile(deltas, 0.95), max(deltas)
    print(f"4096 x 4096 pan/zoom: {len(deltas)} frames, rAF delta p50 {p50:.1f} ms, p95 {p95:.1f} ms, "
          f"max {worst:.1f} ms; draw p50 {percentile(draws, 0.5):.2f} ms, p95 {percentile(draws, 0.95):.2f} ms")
    if p95 > bound_ms:
        raise Fail(f"frame time p95 {p95:.1f} ms is above {bound_ms} ms")


def run(args, work, deadline):
    server = Server(args.server, work, deadline)
    browser = None
    try:
        rooms = read_movingai(args.map)
        post(server.http_port, "PutMap", {"map": {"name": "rooms", "movingai": rooms[0],
                                                  "build": {"navmesh": {"agentRadii": [0, 1]}}}})
        browser = Chromium(args.chromium, work)
        url = f"http://127.0.0.1:{server.http_port}/"
        page1 = Page(browser, url, deadline)
        path = test_path(page1, server.http_port, rooms, args.screenshots)
        test_flow(page1, rooms, args.screenshots)
        page2 = Page(browser, url, deadline)
        test_live_edits(page1, page2, server.http_port, rooms, path)
        test_links(page1, server.http_port, rooms, path, 4, args.screenshots)
        test_large_map(page1, server.http_port, args.screenshots, args.frame_bound_ms)
        errors = browser.page_errors()
        if errors:
            raise Fail(f"uncaught exceptions in the page: {errors[:3]}")
    except Fail:
        print("--- server log (tail) ---\n" + server.tail(), file=sys.stderr)
        raise
    finally:
        if browser:
            browser.close()
        server.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--map", required=True, help="a Moving AI map (examples/maps/rooms.map)")
    parser.add_argument("--screenshots", default="", help="directory for inspector-*.png")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "")
    parser.add_argument("--budget", type=float, default=120, help="seconds for the whole test")
    parser.add_argument("--frame_bound_ms", type=float, default=100)
    args = parser.parse_args()
    if not args.chromium or not os.access(args.chromium, os.X_OK):
        print("SKIP: no chromium (apt-get install chromium, or make deps)")
        return SKIP
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix="wayfinder-inspector-")
    try:
        run(args, work, Deadline(args.budget))
    except Fail as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"PASS in {time.monotonic() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
