"""The docker probe against a small fake Docker Engine API on a unix socket
(any path ending in /containers/NAME/json, answered with recorded-style
`docker inspect` JSON):

- running (no HEALTHCHECK) -> `up`; running and healthy -> `up`;
- unhealthy, exited (ExitCode 137), restarting -> crit with the state in
  the reason; a container the daemon does not know (404) -> crit;
- the socket gone -> `down #web: docker daemon unreachable`; back -> `up`.
The container is given by name; a second probe names another by id."""

import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

INTERVAL_MS = 500
TIMEOUT_MS = 400
BOUND_S = h.probe_bound_s(INTERVAL_MS, TIMEOUT_MS)
WEB_ID = "9c2e51a0d7f4b3e8c1a2d5f6e7b8a9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6"


def probe(sock, container, **keys):
    base = {"type": "docker", "container": container, "socket": sock,
            "interval": f"{INTERVAL_MS}ms", "timeout": f"{TIMEOUT_MS}ms"}
    base.update(keys)
    return base


def main():
    h.require_kinds("docker")
    api = h.DockerStub()
    api.set_container("web", h.docker_inspect("web"))
    api.set_container(WEB_ID[:12], h.docker_inspect("worker", health="healthy", cid=WEB_ID))
    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "probe web": probe(api.path, "web"),
        "probe byid": probe(api.path, WEB_ID[:12]),
    })

    h.section("running, no health check -> up; by id, running and healthy -> up")
    h.wait_reply(lb, b"up\n", "`up` with both containers running", timeout_s=BOUND_S)
    # "up" is also the reply before the first runs: wait for both to ask.
    paths = h.wait_until(lambda: {p for _, p, _ in api.requests()}, BOUND_S,
                         "the probes asking for /containers/NAME/json",
                         ok=lambda paths: any(p.endswith("/containers/web/json")
                                              for p in paths) and
                         any(p.endswith(f"/containers/{WEB_ID[:12]}/json") for p in paths))
    print(f"   paths asked: {sorted(paths)}", flush=True)

    h.section("running and healthy -> up")
    api.set_container("web", h.docker_inspect("web", health="healthy"))
    n0 = api.count()
    h.hold_for(lambda: lb.ask(), 1.0, "`up` for running and healthy",
               ok=lambda r: r == b"up\n", until=lambda: api.count() >= n0 + 4,
               until_what="two runs of each probe against the healthy answer")

    states = [
        ("unhealthy", h.docker_inspect("web", health="unhealthy"), 200, b"unhealthy"),
        ("exited with 137", h.docker_inspect("web", status="exited", exit_code=137), 200,
         b"exited"),
        ("restarting", h.docker_inspect("web", status="restarting", exit_code=1), 200,
         b"restarting"),
        ("dead", h.docker_inspect("web", status="dead", exit_code=0), 200, b"dead"),
        ("missing (404)", {"message": "No such container: web"}, 404, None),
    ]
    for what, obj, status, word in states:
        h.section(f"{what} -> down")
        api.set_container("web", obj, status=status)
        r = h.wait_reply(lb, h.starts(b"down #web: "), f"`down #web: ...` for {what}",
                         timeout_s=BOUND_S)
        print(f"   {what}: {r!r}", flush=True)
        if word is not None:
            h.expect(word in h.reply_reason(r), f"the reason for {what} names the state "
                     f"({word.decode()!r}): {r!r}")
        api.set_container("web", h.docker_inspect("web", health="healthy"))
        h.wait_reply(lb, b"up\n", f"`up` after {what}", timeout_s=BOUND_S)

    h.section("the Docker socket gone -> docker daemon unreachable")
    # The path goes first, so every new connection fails at once, while the
    # ones already queued are still answered (closing a listening socket
    # would reset them: another reason, and a failing probe keeps its first).
    api.remove_path()
    h.wait_reply(lb, b"down #web: docker daemon unreachable; byid: docker daemon unreachable\n",
                 "`down #web: docker daemon unreachable; byid: ...`", timeout_s=BOUND_S)
    api.stop()
    api.start()
    h.wait_reply(lb, b"up\n", "`up` once the API answers again", timeout_s=BOUND_S)
    h.expect(lb.alive(), "lbagent still running")


h.run(main)
