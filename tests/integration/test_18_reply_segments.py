"""The reply line and lbagent's FIN travel in one TCP segment. A check
costs both ends (and, on loopback, the CPU that sends it) a packet and its
acknowledgement less than a write followed by a separate FIN: this is most
of what an agent port does, for every load balancer, every agent-inter.

Counted by the checker's kernel (TCP_INFO's tcpi_segs_in), for each way a
reply ends: closed at once (an address that never sends agent-send text),
after the text (lbagent then reads until the checker closes), and answered
before text that comes late."""

import socket
import struct
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

SRC = "127.0.18.2"
LATE = "127.0.18.3"
# struct tcp_info (linux/tcp.h): tcpi_segs_in, a __u32, at byte 140.
SEGS_IN_OFFSET = 140


def check(port, send=b"", source="127.0.0.1", send_after_s=None):
    """One check: the reply read to EOF, and how many segments came in.
    send_after_s: send the text only after the reply has come."""
    with socket.socket() as s:
        s.settimeout(5)
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        if send and send_after_s is None:
            s.sendall(send)
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
        if send_after_s is not None:
            time.sleep(send_after_s)
            s.sendall(send)
        rest = h.read_to_eof(s)
        info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
        segs_in = struct.unpack_from("I", info, SEGS_IN_OFFSET)[0]
        return reply + rest, segs_in


def main():
    h.require_source(SRC)
    h.require_source(LATE)
    lb = h.Lbagent()

    h.section("closed at once: SYN-ACK, then the reply with the FIN")
    # The first check from an address files its key: read until it closes.
    h.expect_equal(h.ask(lb.port), b"up\n", "the first check")
    reply, segs = check(lb.port)
    h.expect_equal(reply, b"up\n", "reply to a check without text")
    h.expect(segs <= 2, f"{segs} segments came in for a check closed at once:"
             " the reply and the FIN should share one (SYN-ACK + 1)")

    h.section("after agent-send text: SYN-ACK, the text's ACK, the reply with the FIN")
    # The first text from an address teaches lbagent to wait for it.
    h.expect_equal(h.ask(lb.port, send=b"web\n", source=SRC), b"up\n",
                   "the first check with text")
    reply, segs = check(lb.port, send=b"web\n", source=SRC)
    h.expect_equal(reply, b"up\n", "reply to a check with text")
    h.expect(segs <= 3, f"{segs} segments came in for a check with text:"
             " the reply and the FIN should share one (SYN-ACK + ACK + 1)")

    h.section("answered before the text: the text comes after the FIN")
    reply, segs = check(lb.port, send=b"late\n", source=LATE, send_after_s=0.1)
    h.expect_equal(reply, b"up\n", "reply before the text")
    h.expect(segs <= 3, f"{segs} segments came in: the reply and the FIN"
             " should share one (SYN-ACK + 1, and the late text's ACK)")
    lb.stop()


h.run(main)
