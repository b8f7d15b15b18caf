#!/usr/bin/python3
"""tests/sizes.py: no room too big. Every C file under src/ and include/
(sources and headers) at most MAX_FILE lines, every function at most
MAX_FUNCTION lines, counted from the line of its opening brace to the line
of its closing brace, both included (the project's style puts both at the
start of a line: see the existing code).

Prints the largest file and the largest function with their sizes, then one
line per room over a limit, and exits 1 if there is any.
usage: tests/sizes.py [--top N]   (--top: the N largest of each as well)"""
import os
import re
import sys

MAX_FILE = 800
MAX_FUNCTION = 80

root = os.environ.get("SOURCE_ROOT") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")
os.chdir(root)

# A definition: the name and its opening parenthesis at the start of a line
# (the return type is on the line above), then a brace alone on a line.
NAME = re.compile(r"^([A-Za-z_]\w*)\s*\(")


def sources():
    for top in ("src", "include"):
        for d, _, fs in os.walk(top):
            for f in sorted(fs):
                if f.endswith((".c", ".h")):
                    yield os.path.join(d, f)


files, functions = [], []
for path in sorted(sources()):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    files.append((len(lines), path))
    name, start = None, None
    for n, line in enumerate(lines, 1):
        m = NAME.match(line)
        if m and start is None:
            name = m.group(1)
        elif line.startswith("{") and name and start is None:
            start = n
        elif line.startswith("}") and start is not None:
            functions.append((n - start + 1, f"{path}:{start}", name))
            name, start = None, None
        elif line and not line[0].isspace() and start is None and not m \
                and not line.startswith(("(", ")", "/*", " *", "#")):
            # A line at the margin that is neither a continuation of the
            # parameter list nor a brace: whatever came before was no
            # definition (a prototype, a macro, a declaration).
            if not line.rstrip().endswith((",", "(")):
                name = None

files.sort(reverse=True)
functions.sort(reverse=True)
top = 1
if "--top" in sys.argv:
    top = int(sys.argv[sys.argv.index("--top") + 1])
for size, path in files[:top]:
    print(f"largest file: {path}: {size} lines (at most {MAX_FILE})")
for size, where, name in functions[:top]:
    print(f"largest function: {where}: {name}(): {size} lines "
          f"(at most {MAX_FUNCTION})")
bad = [f"{path}: {size} lines, over {MAX_FILE}"
       for size, path in files if size > MAX_FILE]
bad += [f"{where}: {name}() is {size} lines, over {MAX_FUNCTION}"
        for size, where, name in functions if size > MAX_FUNCTION]
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
