#!/usr/bin/env python3
"""Drives a page in headless Chromium through the DevTools protocol, as a user would: waits for
what the page shows and clicks with the mouse (Input.dispatchMouseEvent at an element's centre),
types into fields. Standard library only (a minimal WebSocket client). Used by the service page's
test (service_page_test.cpp); each step is one argument:

    wait:JS          until the expression is true (10 s at most; fails otherwise)
    click:CSS        a mouse click at the centre of the first element matching CSS
    type:TEXT@CSS    focus the field, select all, type TEXT
    print:JS         print the expression's value (JSON) on a line of its own

    page_clicker.py CHROMIUM URL STEP...    exit 0 if every step passed, 1 naming the failed step
"""
import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request


class WebSocket:
    def __init__(self, url):
        host_port, path = url[len("ws://"):].split("/", 1)
        host, port = host_port.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /{path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise RuntimeError("the DevTools WebSocket closed during its handshake")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError("no WebSocket: " + head.decode(errors="replace"))

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                  bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else
                                  bytes([0x80 | 127]) + struct.pack(">Q", n))
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exact(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise RuntimeError("the DevTools WebSocket closed")
            out += chunk
        return out

    def receive(self):
        message = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(n)
            message += payload
            if b0 & 0x80:  # FIN
                return message.decode()


class Page:
    def __init__(self, ws):
        self.ws = ws
        self.next_id = 1

    def call(self, method, **params):
        id = self.next_id
        self.next_id += 1
        self.ws.send(json.dumps({"id": id, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.receive())
            if m.get("id") == id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})

    def eval(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails'].get('text')}")
        return r["result"].get("value")

    def wait(self, expression, seconds=10):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                if self.eval(f"!!({expression})"):
                    return True
            except RuntimeError:
                pass
            time.sleep(0.1)
        return False

    def centre(self, css):
        rect = self.eval(f"(() => {{ const e = document.querySelector({json.dumps(css)}); if (!e) return null; "
                         "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); "
                         "return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        if not rect:
            raise RuntimeError(f"nothing matches {css}")
        return rect

    def click(self, css):
        x, y = self.centre(css)
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def type(self, css, text):
        self.click(css)
        self.eval(f"document.querySelector({json.dumps(css)}).select()")
        self.call("Input.insertText", text=text)


def main():
    chromium, url, steps = sys.argv[1], sys.argv[2], sys.argv[3:]
    profile = tempfile.mkdtemp(prefix="page_clicker_")
    browser = subprocess.Popen([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                "--remote-debugging-port=0", f"--user-data-dir={profile}", "--window-size=1400,900",
                                "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        for _ in range(300):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.1)
        port = open(port_file).read().split()[0]
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        page = Page(WebSocket(next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")))
        page.call("Page.navigate", url=url)
        for step in steps:
            kind, arg = step.split(":", 1)
            try:
                if kind == "wait":
                    if not page.wait(arg):
                        raise RuntimeError("not true within 10 s")
                elif kind == "click":
                    page.click(arg)
                elif kind == "type":
                    text, css = arg.split("@", 1)
                    page.type(css, text)
                elif kind == "print":
                    print(json.dumps(page.eval(arg)), flush=True)
                else:
                    raise RuntimeError("unknown step")
            except RuntimeError as e:
                print(f"step '{step}' failed: {e}", flush=True)
                print("page: " + json.dumps(page.eval("document.body.innerText")), flush=True)
                return 1
            print(f"ok: {step}", flush=True)
        return 0
    finally:
        browser.kill()
        browser.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
