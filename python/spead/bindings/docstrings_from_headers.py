#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Fills docstrings/<block>_pydoc_template.h from the doxygen comments of
include/gnuradio/spead/<block>.h, so help(spead.source) and GRC's documentation tab
show the C++ documentation without building doxygen (GNU Radio's update_pydoc.py
needs doxygen's XML; this reads the few comment forms our block headers use).

    python3 docstrings_from_headers.py source sink      # rewrite the templates
    python3 docstrings_from_headers.py --check source sink   # fail if out of date
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE = os.path.join(HERE, "..", "..", "..", "include", "gnuradio", "spead")


def comment_before(text, pattern):
    """The /*! ... */ comment that ends right before the first match of pattern."""
    match = re.search(pattern, text)
    if not match:
        raise SystemExit(f"not found in header: {pattern}")
    head = text[:match.start()].rstrip()
    if not head.endswith("*/"):
        return ""
    start = head.rfind("/*!")
    lines = head[start + 3:-2].splitlines()
    return "\n".join(re.sub(r"^\s*\* ?", "", line) for line in lines).strip()


def to_text(doxygen):
    """Doxygen markup as plain text: \\brief/\\details dropped, \\p x -> x, \\param
    blocks as an 'Args:' list."""
    out, args = [], []
    for line in doxygen.splitlines():
        line = re.sub(r"\\p (\w+)", r"\1", line)
        param = re.match(r"\\param (\w+) ?(.*)", line)
        if param:
            args.append(f"    {param.group(1)}: {param.group(2)}")
        elif args and line.startswith("       "):
            args.append("        " + line.strip())
        else:
            line = re.sub(r"\\(brief|details|ingroup \w+) ?", "", line)
            if line.strip() or (out and out[-1]):
                out.append(line)
            if line.strip().startswith("\\throws"):
                out[-1] = line.replace("\\throws", "Raises")
    text = "\n".join(out).strip()
    if args:
        text += "\n\nArgs:\n" + "\n".join(args)
    return text


def template(block):
    with open(os.path.join(INCLUDE, f"{block}.h")) as f:
        header = f.read()
    docs = {
        "": comment_before(header, rf"class SPEAD_API {block}\b"),
        "make": comment_before(header, r"static sptr make\("),
    }
    for method in re.findall(r"virtual [^;(]+?\b(\w+)\([^)]*\) const = 0;", header):
        docs[method] = comment_before(header, rf"virtual [^;(]+?\b{method}\(")
    lines = ["/*",
             " * Copyright 2026 Free Software Foundation, Inc.",
             " *",
             " * This file is part of GNU Radio",
             " *",
             " * SPDX-License-Identifier: GPL-3.0-or-later",
             " *",
             " */",
             '#include "pydoc_macros.h"',
             "#define D(...) DOC(gr, spead, __VA_ARGS__)",
             "/*",
             f"  Docstrings of the {block} bindings, written by",
             f"  python/spead/bindings/docstrings_from_headers.py from the doxygen comments",
             f"  of include/gnuradio/spead/{block}.h (qa_block_python_api checks they are",
             "  current). Edit the header, then run that script.",
             " */",
             ""]
    names = {"": f"__doc_gr_spead_{block}",
             "make": f"__doc_gr_spead_{block}_make"}
    for ctor in (0, 1):
        lines += [f'static const char* __doc_gr_spead_{block}_{block}_{ctor} = R"doc()doc";',
                  ""]
    for key, doc in docs.items():
        name = names.get(key, f"__doc_gr_spead_{block}_{key}")
        lines += [f'static const char* {name} = R"doc({to_text(doc)})doc";', ""]
    return "\n".join(lines)


def main(argv):
    check = "--check" in argv
    stale = []
    for block in (a for a in argv if not a.startswith("--")):
        path = os.path.join(HERE, "docstrings", f"{block}_pydoc_template.h")
        text = template(block)
        with open(path) as f:
            current = f.read()
        if current != text:
            if check:
                stale.append(path)
            else:
                with open(path, "w") as f:
                    f.write(text)
    if stale:
        print("out of date (run docstrings_from_headers.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
