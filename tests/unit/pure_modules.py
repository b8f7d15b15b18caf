#!/usr/bin/python3
"""
The pure modules stay pure: their headers, and everything those include,
pull in no libevent or libcurl header, and their sources neither log nor
read the clock (they take now_ms and hand notes back to the caller).

Run by meson with the C compiler's command line first, then "--", then
the source root: python3 pure_modules.py cc [args...] -- ROOT.
"""
import os
import re
import subprocess
import sys

# Headers under include/lbagent/ that must not reach event2/ or curl/.
PURE_HEADERS = [
    "decision", "guard", "hastats", "history", "lbkeys", "markers",
    "peer_view", "probe_result", "redact", "reply", "rules", "text",
    "transition", "units",
]
# Sources under src/ that neither log nor read the clock themselves.
PURE_SOURCES = [
    "decision", "guard", "hastats", "history", "lbkeys", "peer_view",
    "redact", "reply", "rules", "text", "transition", "transition_json",
    "units",
]

FORBIDDEN_INCLUDE = re.compile(r'^#\s*\d+\s+"([^"]*/(event2|curl)/[^"]*)"')
# A call of the log API or a clock read, outside comments and strings.
FORBIDDEN_CALL = re.compile(r'\b(log_[a-z_]+|fatalx|clock_[a-z_]+|time|'
                            r'gettimeofday)\s*\(')
FORBIDDEN_OWN = re.compile(r'#\s*include\s+"lbagent/(log|clock)\.h"')


def preprocess(cc, root, path):
    out = subprocess.run(cc + ["-E", "-D_GNU_SOURCE", "-I",
                               os.path.join(root, "include"), "-x", "c",
                               path], capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr
    return out.stdout, None


def strip_comments_and_strings(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def main():
    sep = sys.argv.index("--")
    cc, root = sys.argv[1:sep], sys.argv[sep + 1]
    bad = []
    for name in PURE_HEADERS:
        path = os.path.join(root, "include", "lbagent", name + ".h")
        if not os.path.exists(path):
            bad.append("%s: missing" % path)
            continue
        text, err = preprocess(cc, root, path)
        if text is None:
            bad.append("%s: does not preprocess: %s" % (path, err.strip()))
            continue
        hits = sorted({m.group(1) for line in text.splitlines()
                       for m in [FORBIDDEN_INCLUDE.match(line)] if m})
        if hits:
            bad.append("%s reaches %s" % (path, ", ".join(hits)))
    for name in PURE_SOURCES:
        path = os.path.join(root, "src", name + ".c")
        if not os.path.exists(path):
            bad.append("%s: missing" % path)
            continue
        with open(path) as f:
            source = f.read()
        for m in FORBIDDEN_OWN.finditer(source):
            bad.append("%s includes %s" % (path, m.group(0)))
        code = strip_comments_and_strings(source)
        for m in FORBIDDEN_CALL.finditer(code):
            bad.append("%s calls %s()" % (path, m.group(1)))
        text, err = preprocess(cc, root, path)
        if text is None:
            bad.append("%s: does not preprocess: %s" % (path, err.strip()))
        elif any(FORBIDDEN_INCLUDE.match(line) for line in
                 text.splitlines()):
            bad.append("%s reaches libevent or libcurl headers" % path)
    for line in bad:
        print(line)
    print("%d problem(s) in %d headers and %d sources" %
          (len(bad), len(PURE_HEADERS), len(PURE_SOURCES)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
