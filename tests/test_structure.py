"""The code's structure, redrawn from the code, against docs/ARCHITECTURE.md.

- No product source file (C, and the Python package's) over 1,000 lines.
- No circle: no two files call each other, directly or round a longer loop
  (the call graph between files, from the functions each file defines and
  the names each calls, comments and strings left out).
- No include runs up the floors of ARCHITECTURE.md's table.
- Every figure kind in plot/kinds/ is listed in plot/kinds/list.h, and
  every line there has its file.
"""

import os
import re
import sys
import tempfile
import unittest

import pyunit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ["core", "results", "presets", "calib", "learn", "pareto", "sweep", "cluster", "serve", "plot",
           "cli", "python"]
MAX_LINES = 1000


def product_files(root, exts=(".c", ".h")):
    """Every product source file under root's folders (build outputs left out)."""
    out = []
    for folder in FOLDERS:
        for base, dirs, files in os.walk(os.path.join(root, folder)):
            dirs[:] = [d for d in dirs if d != "build"]
            out += [os.path.join(base, f) for f in sorted(files) if f.endswith(exts)]
    return out


def strip_c(text):
    """C text without comments, string and character literals (newlines kept)."""
    pat = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pat.sub(lambda m: "\n" * m.group(0).count("\n") if m.group(0).startswith("/") else '""',
                   text)


DEF = re.compile(r"^(?!static\b)(?:[A-Za-z_][\w \t\*]*?[\s\*])([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\{",
                 re.M)
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def call_graph(paths):
    """{file: {file it calls: sorted names}} between the given C files."""
    text = {p: strip_c(read(p)) for p in paths}
    defined = {}
    for p, t in text.items():
        for m in DEF.finditer(t):
            defined.setdefault(m.group(1), set()).add(p)
    edges = {p: {} for p in paths}
    for p, t in text.items():
        for name in set(CALL.findall(t)):
            for q in defined.get(name, ()):
                if q != p:
                    edges[p].setdefault(q, set()).add(name)
    return {p: {q: sorted(n) for q, n in e.items()} for p, e in edges.items()}


def circles(edges):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def describe(comp, edges, root):
    rel = lambda p: os.path.relpath(p, root)
    lines = [" <-> ".join(rel(p) for p in comp)]
    for a in comp:
        for b in comp:
            if b in edges[a]:
                lines.append(f"  {rel(a)} calls {rel(b)}: {', '.join(edges[a][b][:6])}")
    return "\n".join(lines)


def floors(doc_text):
    """{folder: floor} from ARCHITECTURE.md's table ("| 3 | `presets/` | ...")."""
    out = {}
    for m in re.finditer(r"^\| (\d+) \| ([^|]+)\|", doc_text, re.M):
        for folder in re.findall(r"`(\w+)/`", m.group(2)):
            out[folder] = int(m.group(1))
    return out


class DetectorTest(unittest.TestCase):
    """The detector itself finds a circle it is shown, and none where there is none."""

    def write(self, d, name, text):
        path = os.path.join(d, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_finds_a_three_file_circle(self):
        with tempfile.TemporaryDirectory() as d:
            a = self.write(d, "a.c", "int wl_a(int x)\n{\n    return wl_b(x);\n}\n")
            b = self.write(d, "b.c", "int wl_b(int x)\n{\n    return wl_c(x) + 1;\n}\n")
            c = self.write(d, "c.c", "static int helper(void) { return 0; }\n"
                                     "int wl_c(int x)\n{\n    return x ? wl_a(x - 1) : helper();\n}\n")
            self.assertEqual(circles(call_graph([a, b, c])), [sorted([a, b, c])])

    def test_comments_strings_and_statics_are_no_calls(self):
        with tempfile.TemporaryDirectory() as d:
            a = self.write(d, "a.c", "int wl_a(void)\n{\n    return wl_b();\n}\n")
            b = self.write(d, "b.c", "/* wl_a(x) calls us */\nint wl_b(void)\n{\n"
                                     "    puts(\"wl_a(\");\n    return 0;\n}\n"
                                     "static int wl_a2(void) { return 0; }\n")
            self.assertEqual(circles(call_graph([a, b])), [])


class StructureTest(unittest.TestCase):
    def test_no_file_over_1000_lines(self):
        long = []
        for p in product_files(ROOT, (".c", ".h", ".py")):
            with open(p, encoding="utf-8") as f:
                n = sum(1 for _ in f)
            if n > MAX_LINES:
                long.append(f"{os.path.relpath(p, ROOT)}: {n} lines")
        if long:
            self.fail("split these along their seams (docs/ARCHITECTURE.md):\n" + "\n".join(long))

    def test_no_circle(self):
        edges = call_graph(product_files(ROOT, (".c",)))
        found = circles(edges)
        if found:
            self.fail("files that call each other:\n" +
                      "\n".join(describe(c, edges, ROOT) for c in found))

    def test_includes_go_down_the_floors(self):
        with open(os.path.join(ROOT, "docs", "ARCHITECTURE.md"), encoding="utf-8") as f:
            fl = floors(f.read())
        self.assertEqual(sorted(fl), sorted(FOLDERS), "ARCHITECTURE.md's floor table")
        up = []
        for p in product_files(ROOT):
            own = os.path.relpath(p, ROOT).split(os.sep)[0]
            with open(p, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    m = re.match(r'\s*#\s*include\s+"(?:\.\./)+(\w+)/', line)
                    if m and m.group(1) in fl and fl[m.group(1)] > fl[own]:
                        up.append(f"{os.path.relpath(p, ROOT)}:{n} includes {m.group(1)}/ "
                                  f"(floor {fl[m.group(1)]}) from floor {fl[own]}")
        if up:
            self.fail("includes that run up the floors:\n" + "\n".join(up))

    def test_every_figure_kind_is_listed(self):
        kinds = os.path.join(ROOT, "plot", "kinds")
        files = sorted(f[:-2] for f in os.listdir(kinds) if f.endswith(".c"))
        with open(os.path.join(kinds, "list.h"), encoding="utf-8") as f:
            listed = re.findall(r"^WL_PLOT_KIND\((\w+)\)", f.read(), re.M)
        self.assertEqual(len(listed), len(set(listed)), "a kind listed twice")
        self.assertEqual(sorted(listed), files)
        for k in files:
            with open(os.path.join(kinds, k + ".c"), encoding="utf-8") as f:
                self.assertIn(f"const wl_plot_kind wl_plot_kind_{k} = {{", f.read(),
                              f"plot/kinds/{k}.c defines its descriptor")


if __name__ == "__main__":
    sys.exit(pyunit.main())
