"""Fault proxies: a small TCP relay on 127.0.0.1 in front of one thing an
lbagent talks to (its dependency, one peer's HTTP API, one load
balancer's stats), whose behaviour the scenario sets at any moment:

  pass       relay both ways
  refuse     close new connections at once (and the open ones)
  blackhole  accept, never answer: nothing is relayed either way and the
             open connections go silent too (a hung dependency)
  delay      relay, each chunk held `delay_ms` first
  drop_up    relay only what the upstream sends back: what the client
             sends is dropped (so requests never arrive)
  drop_down  relay only what the client sends: the answers are dropped

The mode is read for every chunk, so a change acts on connections that
are already open (libcurl keeps its connection to the dependency)."""

import socket
import threading
import time

MODES = ("pass", "refuse", "blackhole", "delay", "drop_up", "drop_down")
_TICK_S = 0.05


class FaultProxy:
    def __init__(self, name, upstream_port, upstream_host="127.0.0.1", log=None):
        self.name = name
        self.upstream = (upstream_host, upstream_port)
        self.mode = "pass"
        self.delay_ms = 0
        self._log = log             # log(event dict): the scenario's timeline
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._conns = set()
        self.accepted = 0
        self.sock = listen_socket()
        self.sock.settimeout(_TICK_S * 4)
        self.port = self.sock.getsockname()[1]
        self._thread = threading.Thread(target=self._accept, daemon=True,
                                        name=f"proxy-{name}")
        self._thread.start()

    def __repr__(self):
        return f"<FaultProxy {self.name} :{self.port} -> {self.upstream[1]} {self.mode}>"

    def set(self, mode, delay_ms=0):
        if mode not in MODES:
            raise ValueError(f"fault mode {mode!r}: one of {', '.join(MODES)}")
        self.mode, self.delay_ms = mode, delay_ms
        if self._log:
            self._log({"kind": "fault", "proxy": self.name, "mode": mode,
                       **({"delay_ms": delay_ms} if mode == "delay" else {})})
        if mode == "refuse":
            with self._lock:
                conns = list(self._conns)
            for c in conns:
                _close(c)

    def _accept(self):
        while not self._stop.is_set():
            try:
                client, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.accepted += 1
            if self.mode == "refuse":
                _close(client)
                continue
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _track(self, *socks):
        with self._lock:
            self._conns.update(socks)

    def _untrack(self, *socks):
        with self._lock:
            self._conns.difference_update(socks)
        for s in socks:
            _close(s)

    def _serve(self, client):
        self._track(client)
        # Black-holed from the start: never even connect upstream, and
        # read what the client sends until it gives up or the mode changes.
        while self.mode == "blackhole" and not self._stop.is_set():
            client.settimeout(_TICK_S)
            try:
                if not client.recv(65536):
                    self._untrack(client)
                    return
            except socket.timeout:
                continue
            except OSError:
                self._untrack(client)
                return
        if self.mode == "refuse":
            self._untrack(client)
            return
        try:
            up = socket.create_connection(self.upstream, timeout=2.0)
        except OSError:
            self._untrack(client)
            return
        self._track(up)
        done = threading.Event()
        a = threading.Thread(target=self._pump, args=(client, up, "up", done), daemon=True)
        b = threading.Thread(target=self._pump, args=(up, client, "down", done), daemon=True)
        a.start()
        b.start()
        a.join()
        b.join()
        self._untrack(client, up)

    def _pump(self, src, dst, direction, done):
        try:
            src.settimeout(_TICK_S)
        except OSError:
            # Closed before this thread ran (refuse, or the proxy closing).
            done.set()
            return
        while not done.is_set() and not self._stop.is_set():
            try:
                data = src.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                break
            if not data:
                # Half-close, as a real connection would: the other side
                # may still answer (HTTP/1.0 clients, agent checks).
                try:
                    dst.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                if direction == "down":
                    break
                # The client finished sending: keep the other direction.
                return
            mode = self.mode
            if mode == "refuse":
                break
            if mode == "blackhole" or mode == f"drop_{direction}":
                continue
            if mode == "delay" and self.delay_ms > 0:
                time.sleep(self.delay_ms / 1000.0)
            try:
                dst.sendall(data)
            except OSError:
                break
        done.set()

    def close(self):
        self._stop.set()
        _close(self.sock)
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            _close(c)
        self._thread.join(timeout=2)

    def diagnostics(self):
        return f"== {self!r}: {self.accepted} connections"


def listen_socket(reserved=None):
    """A listening socket on a loopback port that the harness has not
    handed out: the kernel may pick for port 0 a port that free_port()
    reserved for an lbagent not started yet (nothing holds it meanwhile).
    The port is then marked handed out, so free_port() never gives it."""
    import harness as h
    taken = h.env()._ports if reserved is None else reserved
    held = []
    try:
        for _ in range(100):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            if port in taken:
                held.append(s)
                continue
            taken.add(port)
            s.listen(128)
            return s
        raise RuntimeError("no loopback port free of the harness's reservations")
    finally:
        for s in held:
            s.close()


def _close(s):
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass
