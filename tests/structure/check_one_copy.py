#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fails when an executable defines code of the library's layers itself.

Every layer (protocol, transports, streams, mapping, blocks) lives once, in
libgnuradio-spead; the apps and the tests link it. The functions the library's object
files define out of line (global, strong: nm type T) are its own code; inline functions
and templates (weak) may be emitted in any binary that uses them. An executable that
defines one of the library's own functions carries a second copy.

usage: check_one_copy.py LIBRARY_OBJECT_DIR DIRECTORY...
Checks every executable (and the Python extension module) found below the
directories, except the emulated NIC's stand-in libraries and the libFuzzer
target (which compiles lib/protocol with its own instrumentation on purpose).
"""
import os
import subprocess
import sys

SKIPPED = ("/emulator/", "/fuzz/", "/CMakeFiles/")


def binaries(directories):
    """ELF executables and Python extension modules below the directories."""
    for top in directories:
        for root, _, files in os.walk(top):
            for name in files:
                path = os.path.join(root, name)
                if any(part in path + "/" for part in SKIPPED) or os.path.islink(path):
                    continue
                module = name.startswith("spead_python") and name.endswith(".so")
                if not module and (".so" in name or not os.access(path, os.X_OK)):
                    continue
                with open(path, "rb") as f:
                    if f.read(4) == b"\x7fELF":
                        yield path


def functions(paths, types):
    """Demangled names of the functions the files define with an nm type in types."""
    out = subprocess.run(["nm", "-C", "--defined-only", *paths], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in types:
            name = parts[2].split("(")[0].replace(" [clone .cold]", "")
            if not name.endswith("::"):  # an anonymous namespace: local by design
                names.add(name)
    return names


def main():
    objects = [os.path.join(root, name) for root, _, files in os.walk(sys.argv[1])
               for name in files if name.endswith(".o")]
    executables = sorted(binaries(sys.argv[2:]))
    if len(executables) < 3:
        print(f"found only {executables} below {sys.argv[2:]}: wrong directories?")
        return 1
    ours = {n for n in functions(objects, ("T",)) if n.startswith("gr::spead::")}
    if len(ours) < 200:
        print(f"{sys.argv[1]}: only {len(ours)} gr::spead functions: not the library's objects?")
        return 1
    failed = False
    for exe in executables:
        copies = sorted(functions([exe], ("T", "t")) & ours)
        print(f"{exe}: {len(copies)} of the library's {len(ours)} functions defined again")
        for name in copies[:20]:
            print(f"  {name}")
        failed |= bool(copies)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
