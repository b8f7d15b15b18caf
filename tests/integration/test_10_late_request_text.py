"""agent-send text that arrives after the reply. lbagent answers at once
when it has no reason to wait (nothing to select, an address that never sent
text), so a load balancer whose text comes late is first answered as
(address, ""). What that reply claimed must follow the text to its real key:
otherwise, after the drain is released, the checks that send the text would
never get their `ready`, and HAProxy would keep the server drained forever.
Also: once an address has sent text, lbagent waits for it from then on."""

import socket
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

SRC2 = "127.0.200.9"
SRC = "127.0.100.205"   # three-digit octets: the address formatting


def late_ask(lb, text, delay_s):
    """Connects from SRC, reads the reply, and only then sends text."""
    with socket.socket() as s:
        s.settimeout(5)
        s.bind((SRC, 0))
        s.connect(("127.0.0.1", lb.port))
        time.sleep(delay_s)
        reply = b""
        s.settimeout(0.2)
        try:
            while not reply.endswith(b"\n"):
                chunk = s.recv(4096)
                if not chunk:
                    break
                reply += chunk
        except socket.timeout:
            pass
        s.settimeout(5)
        s.sendall(text)
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return reply
            reply += chunk


def main():
    h.require_source(SRC)
    lb = h.Lbagent()
    lb.set_marker("drain", "late text")
    h.wait_until(lb.ask, h.marker_bound_s(), "drain in effect",
                 ok=lambda r: r.startswith(b"drain"))

    h.section("first contact: answered before the text arrives")
    reply = late_ask(lb, b"web\n", 0.3)
    h.expect_equal(reply, b"drain up #late text\n", "reply to the late sender")
    state = h.wait_until(lambda: open(lb.state_dir + "/state.json").read(), 5,
                         "state.json to file the drain under (127.0.100.205, web)",
                         ok=lambda t: '"send": "web"' in t and SRC in t)
    h.expect('"send": ""' not in state.split(SRC, 1)[1].split("}", 1)[0],
             f"the provisional (127.0.100.205, \"\") key should be gone: {state}")

    h.section("released: the text's key gets its ready")
    lb.clear_marker("drain")
    h.wait_until(lambda: lb.ask(send=b"web\n", source=SRC), h.marker_bound_s(),
                 "ready to (127.0.100.205, web)", ok=lambda r: r == b"ready up\n")

    h.section("from now on lbagent waits for this address's text")
    # Sent 100 ms after connecting: within the 250 ms lbagent now waits.
    with socket.socket() as s:
        s.settimeout(5)
        s.bind((SRC, 0))
        s.connect(("127.0.0.1", lb.port))
        time.sleep(0.1)
        s.sendall(b"other\n")
        out = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            out += chunk
    h.expect_equal(out, b"up\n", "reply to text sent 100 ms late")
    h.wait_until(lambda: open(lb.state_dir + "/state.json").read(), 5,
                 "a key (127.0.100.205, other)", ok=lambda t: '"send": "other"' in t)

    h.section("late text without a newline, ended by the client's shutdown")
    with socket.socket() as s:
        s.settimeout(5)
        s.bind((SRC2, 0))
        s.connect(("127.0.0.1", lb.port))
        time.sleep(0.3)
        s.sendall(b"nonl")
        s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            out += chunk
    h.expect_equal(out, b"up\n", "reply to the client that never sent a newline")
    h.wait_until(lambda: open(lb.state_dir + "/state.json").read(), 5,
                 f"a key ({SRC2}, nonl)", ok=lambda t: '"send": "nonl"' in t)
    lb.stop()


h.run(main)
