"""Late agent-send text on a connection that outlived a reload.

An address that has sent agent-send text once makes lbagent wait briefly
for it, then answer early and read what still comes. Such a connection,
open on a service's own port, can outlive a reload (SIGHUP) that removes
the service or moves it to another place in the configuration. The text
that then arrives must go to the service of that name, or nowhere when it
is gone: never to an index the reload invalidated (that read past the
services' array, and crashed lbagent).

- removed: [service web] goes; late text on its connection is dropped,
  lbagent stays up and answers;
- moved: [service web] is kept but a service is added before it; the late
  text files the drain web's reply claimed under web's (address, text) key,
  so that web's `ready` reaches that key when the drain ends."""

import os
import signal
import socket
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

SRC = "127.0.11.7"


def config(port, web_port, first=None):
    ok = os.path.join(h.tmpdir(), "ok")
    h.write_atomic(ok, "ok\n")
    probe = {"type": "file", "path": ok, "interval": "1s", "timeout": "500ms"}
    sections = {"agent": {**h.IMMEDIATE, "listen": f"127.0.0.1:{port}"}}
    if first:
        sections[f"probe {first}"] = probe
        sections[f"service {first}"] = {"probes": first}
    sections["probe webf"] = probe
    sections["service web"] = {"probes": "webf", "listen": f"127.0.0.1:{web_port}"}
    return sections


def open_early(port):
    """Connects from SRC and reads the early reply (sends nothing)."""
    s = socket.socket()
    s.settimeout(5)
    s.bind((SRC, 0))
    s.connect(("127.0.0.1", port))
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = s.recv(4096)
        if not chunk:
            break
        reply += chunk
    return s, reply


def finish(s, text):
    s.sendall(text)
    out = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        out += chunk
    s.close()
    return out


def reload_to(lb, sections):
    text = lb._render(sections)
    with open(lb.config_path, "w") as f:
        f.write(text)
    mark = lb.log_mark()
    os.kill(lb.pid, signal.SIGHUP)
    h.wait_until(lambda: lb.log_since(mark), 5, "the reload to finish",
                 ok=lambda t: "reloaded " in t or "reload failed" in t)


def main():
    h.require_source(SRC)
    port, web_port = h.free_port(), h.free_port()

    h.section("removed: late text for a service the reload took away")
    lb = h.Lbagent(config(port, web_port), port=port)
    # Teaches lbagent that SRC sends text: from now on it waits for it.
    h.expect_equal(lb.ask(send=b"hello\n", source=SRC, port=web_port), b"up\n",
                   "a check that sends text")
    s, early = open_early(web_port)
    h.expect_equal(early, b"up\n", "the early reply on web's port")
    reload_to(lb, {"agent": {**h.IMMEDIATE, "listen": f"127.0.0.1:{port}"}})
    finish(s, b"late\n")
    time.sleep(0.2)
    h.expect(lb.alive(), "lbagent died on late text for a removed service")
    h.expect_equal(lb.ask(), b"up\n", "a check after the late text")
    lb.stop()

    h.section("moved: late text follows the service by name")
    port, web_port = h.free_port(), h.free_port()
    lb = h.Lbagent(config(port, web_port), port=port)
    h.expect_equal(lb.ask(send=b"hello\n", source=SRC, port=web_port), b"up\n",
                   "a check that sends text")
    drain = os.path.join(lb.state_dir, "web", "drain")
    h.write_atomic(drain, "web drained")
    h.wait_until(lambda: lb.ask(port=web_port), h.marker_bound_s(), "web drained",
                 ok=lambda r: r.startswith(b"drain"))
    s, early = open_early(web_port)
    h.expect_equal(early, b"drain up #web drained\n", "the early reply on web's port")
    # A service before web: web's place in the configuration moves.
    reload_to(lb, config(port, web_port, first="api"))
    finish(s, b"moved\n")
    os.unlink(drain)
    # Another address first: the key must not see the drain again.
    h.wait_until(lambda: lb.ask(port=web_port), h.marker_bound_s(), "the drain's end",
                 ok=lambda r: r == b"ready up\n")
    h.expect_equal(lb.ask(send=b"moved\n", source=SRC, port=web_port), b"ready up\n",
                   "web's first check from (SRC, moved) after the drain")
    h.expect(lb.alive(), "lbagent died")


if __name__ == "__main__":
    h.run(main)
