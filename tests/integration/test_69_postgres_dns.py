"""The postgres probe resolves host names itself, without blocking (evdns),
and hands libpq the addresses (hostaddr), so libpq never resolves one.

The test has a mount namespace of its own (lbagent inherits it) where
/etc/resolv.conf names a small DNS server of the test's on 127.0.0.53 (in
the test's own network namespace, tests/isolated) and /etc/hosts holds one
name; a real PostgreSQL (as test_65 starts one) listens on 127.0.0.1:

- a name from the DNS server and one from /etc/hosts: ok;
- a name the DNS server never answers: the probe's own timeout ("timed out
  after 800ms"), replies keep coming meanwhile, and the DNS server did get
  lbagent's question; before, libpq's blocking getaddrinfo() held the loop
  and then said "could not translate host name";
- a name that does not exist: "cannot resolve nx.test: ...";
- a refused port behind a name: the address it resolved to, as libpq
  names it;
- `lbagent -c` says nothing of a host name."""

import ctypes
import errno
import os
import socket
import struct
import sys
import threading

sys.dont_write_bytecode = True
import harness as h  # noqa: E402
import test_65_postgres as pg65  # noqa: E402

CLONE_NEWNS = 0x00020000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
DNS_ADDR = "127.0.0.53"


class DnsServer:
    """A names: pg-dns.test -> 127.0.0.1 (no AAAA), stall.test never
    answered, anything else NXDOMAIN; counts the questions per name."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((DNS_ADDR, 53))
        self.asked = {}
        self.lock = threading.Lock()
        h.env().register(self)
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                q, peer = self.sock.recvfrom(512)
            except OSError:
                return
            try:
                self.answer(q, peer)
            except (IndexError, struct.error):
                continue

    def answer(self, q, peer):
        qid, flags = struct.unpack("!HH", q[:4])
        i, labels = 12, []
        while q[i]:
            labels.append(q[i + 1:i + 1 + q[i]].decode(errors="replace"))
            i += 1 + q[i]
        qtype = struct.unpack("!H", q[i + 1:i + 3])[0]
        question = q[12:i + 5]
        name = ".".join(labels).lower()
        with self.lock:
            self.asked[name] = self.asked.get(name, 0) + 1
        if name == "stall.test":
            return
        rd = flags & 0x0100
        if name == "pg-dns.test":
            answers = b""
            if qtype == 1:
                answers = (b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 30, 4) +
                           socket.inet_aton("127.0.0.1"))
            head = struct.pack("!HHHHHH", qid, 0x8400 | rd, 1, 1 if answers else 0, 0, 0)
        else:
            head = struct.pack("!HHHHHH", qid, 0x8403 | rd, 1, 0, 0, 0)
            answers = b""
        self.sock.sendto(head + question + answers, peer)

    def count(self, name):
        with self.lock:
            return self.asked.get(name, 0)

    def diagnostics(self):
        return f"== DNS server: questions {self.asked}"

    def close(self):
        self.sock.close()


def own_resolver():
    """This process's own /etc/resolv.conf and /etc/hosts, bind-mounted in a
    mount namespace of its own; or a skip where that cannot be."""
    if os.geteuid() != 0:
        raise h.Skip("a mount namespace needs root")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                           ctypes.c_ulong, ctypes.c_char_p]
    if libc.unshare(CLONE_NEWNS) != 0:
        raise h.Skip(f"a mount namespace: {os.strerror(ctypes.get_errno())}")
    top = "/etc"
    while not os.path.ismount(top):
        top = os.path.dirname(top)
    if libc.mount(None, top.encode(), None, MS_REC | MS_PRIVATE, None) != 0 \
            and ctypes.get_errno() != errno.EINVAL:
        raise h.TestFailure(f"making {top} private: {os.strerror(ctypes.get_errno())}")
    files = {"/etc/resolv.conf": f"nameserver {DNS_ADDR}\noptions timeout:1 attempts:1\n",
             "/etc/hosts": "127.0.0.1 localhost\n127.0.0.1 pg-hosts.test\n"}
    for target, text in files.items():
        src = h.env().path(os.path.basename(target))
        with open(src, "w") as f:
            f.write(text)
        os.chmod(src, 0o644)
        if libc.mount(src.encode(), target.encode(), None, MS_BIND, None) != 0:
            raise h.TestFailure(f"bind-mounting {target}: {os.strerror(ctypes.get_errno())}")


def main():
    h.require_kinds("postgres")
    bindir, user = pg65.pg_bin(), pg65.pg_user()
    own_resolver()
    dns = DnsServer()
    os.chmod(h.tmpdir(), 0o755)
    port, closed = h.free_port(), h.free_port()
    pg = pg65.PgServer("dns", port, user, bindir)

    h.section("lbagent -c: a host name is no warning")
    rc, out, path = h.check_config("[probe p]\ntype = postgres\n"
                                   "conninfo = host=pg-dns.test dbname=postgres\n")
    h.expect(rc == 0 and "warning" not in out, f"a host name: exit 0, no warning:\n{out}")

    def named(host, p=port):
        return pg65.tcp(p).replace("host=127.0.0.1", f"host={host}")

    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "http": {"listen": f"unix:{h.tmpdir()}/http.sock"},
        "probe by_dns": pg65.probe(named("pg-dns.test")),
        "probe by_hosts": pg65.probe(named("pg-hosts.test")),
        "probe stall": pg65.probe(named("stall.test")),
        "probe nx": pg65.probe(named("nx.test")),
        "probe refused": pg65.probe(named("pg-dns.test", closed)),
    })

    h.section("names from DNS and from /etc/hosts")
    pg65.wait_probe(lb, "by_dns", "ok", "query ok in ")
    pg65.wait_probe(lb, "by_hosts", "ok", "query ok in ")
    h.expect(dns.count("pg-dns.test") > 0, "lbagent asked the DNS server for pg-dns.test")

    h.section("a DNS server that never answers: the probe's timeout, replies go on")
    pg65.wait_probe(lb, "stall", "crit", "timed out after 800ms")
    h.expect(dns.count("stall.test") > 0, "lbagent asked the DNS server for stall.test")
    for _ in range(10):
        h.expect(h.well_formed(lb.ask()), "a well-formed reply while stall.test goes "
                 "unanswered")

    h.section("a name that does not exist; a refused port behind a name")
    pg65.wait_probe(lb, "nx", "crit", "cannot resolve nx.test: ")
    pg65.wait_probe(lb, "refused", "crit", "cannot connect: Connection refused "
                    f"(127.0.0.1:{closed})")
    lb.stop()
    pg.stop()


if __name__ == "__main__":
    h.run(main)
