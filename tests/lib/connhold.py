#!/usr/bin/env python3
"""connhold.py: many connections to bisectd at once, for t0011.

  connhold.py hold HOST PORT N ADDR...
      opens N TCP connections, round robin from the source addresses ADDR
      (127.0.0.2 ...), sends nothing, and after a second prints
      "held H closed C" (C: closed by the server at once, e.g. by the
      per-address limit; F: connects that failed); then keeps them open
      until it is killed.
  connhold.py claims HOST PORT N WAIT
      registers agents c0..c(N-1) (labels [lab]) and sends each one's
      claim?wait=WAIT at once on its own connection; prints "sent N" when
      all are out, then "status S count K" for each status once every
      claim answered (or WAIT + 30 s passed: "status none count K").

Writes carry "Authorization: Bearer $BISECTD_TOKEN" when that is set.
"""
import os
import selectors
import signal
import socket
import sys
import time


def headers():
    tok = os.environ.get("BISECTD_TOKEN")
    return "Authorization: Bearer %s\r\n" % tok if tok else ""


def hold(host, port, n, addrs):
    socks, failed = [], 0
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind((addrs[i % len(addrs)], 0))
            s.connect((host, port))
        except OSError:
            failed += 1
            s.close()
            continue
        socks.append(s)
    time.sleep(1.0)
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_READ)
    closed = 0
    for key, _ in sel.select(timeout=0.5):
        try:
            data = key.fileobj.recv(1)
        except OSError:
            data = b""
        if not data:
            closed += 1
    print("held %d closed %d failed %d" % (len(socks) - closed, closed, failed), flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        time.sleep(60)


def request(host, port, path, body=b""):
    s = socket.create_connection((host, port))
    s.sendall(("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%s"
               "Content-Length: %d\r\nConnection: close\r\n\r\n" %
               (path, host, headers(), len(body))).encode() + body)
    return s


def status_of(data):
    line = data.split(b"\r\n", 1)[0].split()
    return line[1].decode() if len(line) > 1 else "none"


def claims(host, port, n, wait):
    for i in range(n):
        s = request(host, port, "/api/v1/agents/register",
                    b'{"name": "c%d", "labels": ["lab"]}' % i)
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        s.close()
        if status_of(data) != "200":
            print("register c%d: %s" % (i, data[:200]), file=sys.stderr)
            sys.exit(1)
    sel = selectors.DefaultSelector()
    bufs = {}
    for i in range(n):
        s = request(host, port, "/api/v1/agents/c%d/claim?wait=%d" % (i, wait))
        bufs[s] = b""
        sel.register(s, selectors.EVENT_READ)
    print("sent %d" % n, flush=True)
    counts = {}
    deadline = time.monotonic() + wait + 30
    while bufs and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=1):
            s = key.fileobj
            chunk = s.recv(65536)
            if chunk:
                bufs[s] += chunk
                continue
            st = status_of(bufs.pop(s))
            counts[st] = counts.get(st, 0) + 1
            sel.unregister(s)
            s.close()
    if bufs:
        counts["none"] = len(bufs)
    for st in sorted(counts):
        print("status %s count %d" % (st, counts[st]), flush=True)


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "hold":
        hold(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:] or ["127.0.0.1"])
    elif len(sys.argv) == 6 and sys.argv[1] == "claims":
        claims(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
