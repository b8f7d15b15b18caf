"""The peer guard's sources as written in [haproxy] and [peers], against
a real lbagent and a real HAProxy (its stats page's CSV):

1. `lbagent -c` refuses a load balancer given twice, credentials aside
   (`http://a:x@H/stats;csv` and `http://b:y@H/stats;csv`), and an agent
   given twice (`http://H:P` and `http://H:P/` ask the same /status): the
   error is file:line and names the source with its credentials redacted;
   no password is printed; the same in the deprecated [peers] haproxy,
   which lbagent -c still reads with a warning naming its new place;
2. a reload (SIGHUP) from `http://a:x@H/stats;csv` to that pair is refused
   the same way, in the log and /status, and lbagent runs on with the
   source it had (the
   reload used to match the new sources to the old by their shown text,
   credentials redacted, and gave the old CSV to the first while leaving
   the second "answered" without one: SIGSEGV)."""

import os
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402
import peer_cluster as pc  # noqa: E402

def refused_twice():
    csv = "http://127.0.0.1:8404/stats;csv"
    rest = csv[len("http://"):]
    twice = "given twice (items 1 and 2: the same address, credentials aside)"
    cases = [
        ("haproxy", "sources",
         [f"http://alice:s3cret-a@{rest}", f"http://bob:s3cret-b@{rest}"],
         f"sources: http://***@{rest} {twice}"),
        ("haproxy", "sources", [csv, f"http://bob:s3cret-b@{rest}"],
         f"sources: http://***@{rest} {twice}"),
        ("peers", "agents", ["http://127.0.0.1:9506", "http://carol:s3cret-c@127.0.0.1:9506/"],
         f"agents: http://***@127.0.0.1:9506/ {twice}"),
        ("old", "haproxy", [csv, f"http://bob:s3cret-b@{rest}"],
         f"haproxy: http://***@{rest} {twice}"),
    ]
    for where, key, items, msg in cases:
        sections = {"agent": {"listen": "127.0.0.1:1"},
                    "peers": {"agents": ["http://127.0.0.1:9506"]}}
        if where == "old":
            sections["peers"].update({"haproxy": items, "backend": "be"})
        else:
            sections["haproxy"] = {"sources": [csv], "backend": "be"}
            sections[where][key] = items
        text = h.ini_text(sections)
        rc, out, path = h.check_config(text)
        line = next(i for i, ln in enumerate(text.splitlines(), 1)
                    if ln.startswith(f"{key} ="))
        print(f"   {key} = {', '.join(items)}\n   -> {out.strip()}", flush=True)
        h.expect(rc != 0, f"lbagent -c accepted {key} given twice:\n{out}")
        h.expect(f"{path}:{line}: {msg}" in out, f"the error as file:line naming the "
                 f"source redacted (want {msg!r}):\n{out}")
        h.expect("s3cret" not in out, f"lbagent -c printed a password:\n{out}")
        if where == "old":
            want = (f"{path}:{line}: warning: [peers] haproxy is deprecated: "
                    f"write it as sources in [haproxy]")
            h.expect(want in out, f"the deprecation warned (want {want!r}):\n{out}")

    h.section("the deprecated [peers] haproxy still works, warned")
    text = h.ini_text({"agent": {"listen": "127.0.0.1:1"},
                       "peers": {"agents": ["http://127.0.0.1:9506"], "haproxy": [csv],
                                 "backend": "be"}})
    rc, out, path = h.check_config(text)
    h.expect(rc == 0 and "configuration OK" in out and
             "warning: [peers] haproxy is deprecated" in out and
             "warning: [peers] backend is deprecated: write it as backend in [haproxy]"
             in out, f"accepted with two warnings (rc {rc}):\n{out}")


def reload_to_twice():
    # n2 is judged by n1, with the load balancer's CSV, as soon as a
    # reload has moved what was learned.
    c = pc.Cluster(names=("n1", "n2"), sources=("http",))
    csv = c.hap.stats_csv_url()
    rest = csv[len("http://"):]
    alice = f"http://alice:s3cret-a@{rest}"
    c.haproxy_over = {"sources": [alice]}
    try:
        c.start()
        n1, n2 = c["n1"], c["n2"]

        def answered(doc):
            rows = pc.lb_rows(doc)
            return (len(rows) == 1 and pc.lb_ok(rows[0]) and
                    pc.this_node(rows[0]).get("found") and
                    pc.peer_serving(pc.peer_row(doc, n2.url())))

        h.section("the one source answers; n1 sees n2 serving through it")
        pc.wait_doc(n1, answered, pc.ROUND_S + 5, "the load balancer answered, n2 serving")

        h.section("a reload to the same load balancer twice, credentials aside, is refused")
        with open(n1.lb.config_path) as f:
            text = f.read()
        line = next(i for i, ln in enumerate(text.splitlines(), 1)
                    if ln.startswith("sources ="))
        text = text.replace(f"sources = {alice}\n",
                            f"sources = {alice}, http://bob:s3cret-b@{rest}\n")
        h.expect("s3cret-b" in text, "the new sources line is written")
        with open(n1.lb.config_path, "w") as f:
            f.write(text)
        mark = n1.lb.log_mark()
        os.kill(n1.lb.pid, 1)

        def reloaded():
            if not n1.lb.alive():
                raise h.TestFailure(f"lbagent died on the reload:\n{n1.lb.log_tail()}")
            return n1.detail()

        doc = h.wait_until(reloaded, 10, "the reload counted in the detail /status",
                           ok=lambda d: d.get("reloads") == 1, describe=pc.short)
        want = (f"{n1.lb.config_path}:{line}: sources: http://***@{rest} given twice "
                f"(items 1 and 2: the same address, credentials aside)")
        h.expect(doc["last_reload"]["ok"] is False and
                 doc["last_reload"]["errors"] == [want],
                 f"the reload is refused with the error as file:line: "
                 f"{doc['last_reload']} (want {want!r})")
        log = n1.lb.log_since(mark)
        h.expect(want in log, f"the log has the error:\n{log}")
        h.expect("s3cret" not in log and "s3cret" not in pc.short(doc, 100000),
                 f"a password in the log or the status:\n{log}")

        def still_answered():
            h.expect(n1.lb.alive(), f"lbagent alive after the reload:\n{n1.lb.log_tail()}")
            doc = n1.detail()
            return answered(doc) and pc.lb_rows(doc)[0]["source"] == f"http://***@{rest}"

        h.hold_for(still_answered, pc.ROUND_S, "the running source still answered, "
                   "round after round, after the refused reload")
        h.wait_reply(n1.lb, b"up\n", "still `up` after the reload", timeout_s=pc.PROBE_S)
    finally:
        c.close()


SCENARIOS = [
    ("1. lbagent -c refuses a source given twice, credentials aside", refused_twice),
    ("2. a reload to a load balancer given twice is refused; lbagent runs on", reload_to_twice),
]

h.run(lambda: pc.run_scenarios(SCENARIOS))
