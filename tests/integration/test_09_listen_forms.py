"""The listen forms: `*:PORT` answers on every IPv4 and IPv6 address,
`127.0.0.1:PORT` and `[::1]:PORT` on those alone, and a comma-separated list
on each of its addresses. A load balancer checking over IPv6 is a key of its
own, so a drain released is still restored to it."""

import socket
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402


def have_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def ask(host, port, send=b""):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect((host, port))
        if send:
            s.sendall(send)
        out = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return out
            out += chunk


def refused(host, port):
    try:
        ask(host, port)
    except ConnectionRefusedError:
        return True
    return False


def main():
    v6 = have_ipv6_loopback()
    print(f"   IPv6 loopback: {'yes' if v6 else 'no (IPv6 parts not run)'}", flush=True)

    h.section("*:PORT answers on IPv4 and IPv6")
    port = h.free_port()
    lb = h.Lbagent({"listen": f"*:{port}"}, port=port)
    h.expect_equal(ask("127.0.0.1", port), b"up\n", "reply over IPv4 to *:PORT")
    if v6:
        h.expect_equal(ask("::1", port), b"up\n", "reply over IPv6 to *:PORT")
        h.section("an IPv6 load balancer gets its ready")
        lb.set_marker("drain", "v6 test")
        h.wait_until(lambda: ask("::1", port, b"v6\n"), h.marker_bound_s(), "drain over IPv6",
                     ok=lambda r: r == b"drain up #v6 test\n")
        lb.clear_marker("drain")
        h.wait_until(lambda: ask("::1", port, b"v6\n"), h.marker_bound_s(),
                     "ready over IPv6 once the marker is gone",
                     ok=lambda r: r == b"ready up\n")
        h.expect('"::1"' in open(lb.state_dir + "/state.json").read(),
                 "state.json names the IPv6 load balancer ::1")
    lb.stop()

    h.section("a list: 127.0.0.1:P1 and [::1]:P2, nothing else")
    p1, p2 = h.free_port(), h.free_port()
    listen = f"127.0.0.1:{p1}" + (f", [::1]:{p2}" if v6 else "")
    lb2 = h.Lbagent({"listen": listen}, port=p1)
    h.expect_equal(ask("127.0.0.1", p1), b"up\n", "reply on 127.0.0.1:P1")
    if v6:
        h.expect_equal(ask("::1", p2), b"up\n", "reply on [::1]:P2")
        h.expect(refused("::1", p1), "[::1]:P1 must not be listened on")
        h.expect(refused("127.0.0.1", p2), "127.0.0.1:P2 must not be listened on")
    lb2.stop()


h.run(main)
