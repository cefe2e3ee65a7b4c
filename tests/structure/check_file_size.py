#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fails when a unit of the library, the apps or the Python package is longer than the
limit (600 lines): one job per file, a file you can describe in one line.

usage: check_file_size.py SOURCE_DIR [--limit N]
A unit is a .cc counted together with its header, the .h of the same stem beside it
(lib/x/foo.cc with lib/x/foo.h) or, when there is none, its public header
(include/gnuradio/spead/foo.h): splitting a class between a long header and a long .cc
does not make it one job. A header without a .cc, and a .py, count alone. Checks every
unit below SOURCE_DIR's lib/, apps/ and python/spead/ (python/spead/bindings included),
and lists every offender with its line count, longest first.
"""
import argparse
import os
import sys

CHECKED_DIRS = ("lib", "apps", os.path.join("python", "spead"))
PUBLIC_HEADERS = os.path.join("include", "gnuradio", "spead")
SUFFIXES = (".cc", ".h", ".py")


def sources(top):
    for checked in CHECKED_DIRS:
        for root, dirs, files in os.walk(os.path.join(top, checked)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(SUFFIXES):
                    yield os.path.join(root, name)


def units(top, paths):
    """Yields (paths of one unit): a .cc with its header, or a file alone."""
    paired = set()
    pairs = []
    for path in paths:
        stem, suffix = os.path.splitext(path)
        if suffix != ".cc":
            continue
        header = stem + ".h"
        if not os.path.exists(header):
            header = os.path.join(top, PUBLIC_HEADERS, os.path.basename(stem) + ".h")
        if os.path.exists(header):
            paired.add(header)
            pairs.append((path, header))
        else:
            pairs.append((path,))
    return pairs + [(p,) for p in paths if not p.endswith(".cc") and p not in paired]


def line_count(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source_dir")
    parser.add_argument("--limit", type=int, default=600)
    args = parser.parse_args()
    top = os.path.abspath(args.source_dir)
    checked = units(top, list(sources(top)))
    if not checked:
        print(f"FAIL: no .cc, .h or .py file under {top}/{{{','.join(CHECKED_DIRS)}}}: "
              "give the source directory")
        return 1
    counts = sorted(((sum(line_count(p) for p in unit),
                      " + ".join(os.path.relpath(p, top) for p in unit))
                     for unit in checked), reverse=True)
    over = [f"FAIL: {name}: {n} lines, over the limit of {args.limit}: split it by job"
            for n, name in counts if n > args.limit]
    summary = (f"{len(over)} of {len(checked)} units over {args.limit} lines" if over
               else f"ok: {len(checked)} units (a .cc with its header), "
                    f"none over {args.limit} lines")
    print("\n".join(over + [summary]))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
