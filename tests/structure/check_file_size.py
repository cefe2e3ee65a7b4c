#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fails when a source file of the library, the apps or the Python package is longer
than the limit (600 lines): one job per file, a file you can describe in one line.

usage: check_file_size.py SOURCE_DIR [--limit N]
Checks every .cc, .h and .py file below SOURCE_DIR's lib/, apps/ and python/spead/
(python/spead/bindings included), and lists every offender with its line count,
longest first.
"""
import argparse
import os
import sys

CHECKED_DIRS = ("lib", "apps", os.path.join("python", "spead"))
SUFFIXES = (".cc", ".h", ".py")


def sources(top):
    for checked in CHECKED_DIRS:
        for root, dirs, files in os.walk(os.path.join(top, checked)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(SUFFIXES):
                    yield os.path.join(root, name)


def line_count(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source_dir")
    parser.add_argument("--limit", type=int, default=600)
    args = parser.parse_args()
    top = os.path.abspath(args.source_dir)
    checked = list(sources(top))
    if not checked:
        print(f"FAIL: no .cc, .h or .py file under {top}/{{{','.join(CHECKED_DIRS)}}}: "
              "give the source directory")
        return 1
    counts = sorted(((line_count(p), os.path.relpath(p, top)) for p in checked),
                    reverse=True)
    over = [f"FAIL: {path}: {n} lines, over the limit of {args.limit}: split it by job"
            for n, path in counts if n > args.limit]
    summary = (f"{len(over)} of {len(checked)} files over {args.limit} lines" if over
               else f"ok: {len(checked)} files, none over {args.limit} lines")
    print("\n".join(over + [summary]))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
