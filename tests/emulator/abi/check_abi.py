#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks that a stand-in library is a drop-in for the installed rdma-core library.

Same soname, same version nodes with the same parents, every export under the same
version with the same default-ness; the only additions are in SPEAD_EMU_* nodes. With
--compare-strings, the enum-to-text helpers must answer as rdma-core's do. Each
--emulated NAME@NODE must be a real implementation in the stand-in that exports it, not
one of the generated stubs that abort (a provider library's constructor, for instance,
calls verbs_register_driver_34@IBVERBS_PRIVATE_34 just by being loaded).
"""

import argparse
import ctypes
import subprocess
import sys

from elf_exports import read_exports, read_soname, read_version_nodes

PRIVATE_PREFIX = "SPEAD_EMU_"


def compare(readelf, real, stand_in):
    problems = []
    if read_soname(readelf, real) != read_soname(readelf, stand_in):
        problems.append(f"soname {read_soname(readelf, stand_in)} differs from "
                        f"{read_soname(readelf, real)}")
    real_nodes = read_version_nodes(readelf, real)
    stand_in_nodes = [n for n in read_version_nodes(readelf, stand_in)
                      if not n.name.startswith(PRIVATE_PREFIX)]
    if real_nodes != stand_in_nodes:
        problems.append(f"version nodes differ:\n  real     {real_nodes}\n  stand-in "
                        f"{stand_in_nodes}")

    def key(export):
        return (export.name, export.version, export.is_default, export.kind)

    real_exports = {key(e) for e in read_exports(readelf, real)}
    stand_in_exports = {key(e) for e in read_exports(readelf, stand_in)
                        if not e.version.startswith(PRIVATE_PREFIX)}
    for name, version, is_default, kind in sorted(real_exports - stand_in_exports):
        problems.append(f"missing {kind} {name}{'@@' if is_default else '@'}{version}")
    for name, version, is_default, kind in sorted(stand_in_exports - real_exports):
        problems.append(f"extra {kind} {name}{'@@' if is_default else '@'}{version}")
    return problems, len(real_exports)


def stub_symbols(readelf, library):
    """The generated aborting stubs the library contains (its full symbol table)."""
    names = set()
    for line in subprocess.run([readelf, "--syms", "--wide", library], check=True,
                               capture_output=True, text=True).stdout.splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[7].startswith("spead_emu_stub__"):
            names.add(fields[7].split("@")[0])
    return names


def check_emulated(readelf, stand_in, required):
    """Problems for each NAME@NODE the stand-in exports only as a stub, and those found."""
    problems = []
    found = set()
    exports = {(e.name, e.version) for e in read_exports(readelf, stand_in)}
    stubs = stub_symbols(readelf, stand_in)
    for symbol in required:
        name, node = symbol.split("@", 1)
        if (name, node) not in exports:
            continue  # another library's symbol
        found.add(symbol)
        if f"spead_emu_stub__{name}__{node.replace('.', '_')}" in stubs:
            problems.append(f"{symbol} is an aborting stub; it must be emulated")
        else:
            print(f"{stand_in}: {symbol} is emulated")
    return problems, found


def compare_strings(real, stand_in):
    problems = []
    libraries = {"real": ctypes.CDLL(real), "stand-in": ctypes.CDLL(stand_in)}
    for function, values in (("ibv_wc_status_str", range(-1, 30)),
                             ("ibv_port_state_str", range(-1, 8)),
                             ("ibv_node_type_str", range(-2, 10)),
                             ("ibv_event_type_str", range(-1, 24))):
        answers = {}
        for label, library in libraries.items():
            call = getattr(library, function)
            call.restype = ctypes.c_char_p
            call.argtypes = [ctypes.c_int]
            answers[label] = [call(v) for v in values]
        for value, real_text, stand_in_text in zip(values, answers["real"],
                                                    answers["stand-in"]):
            if real_text != stand_in_text:
                problems.append(f"{function}({value}): {stand_in_text!r}, rdma-core says "
                                f"{real_text!r}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--readelf", required=True)
    parser.add_argument("--compare-strings", action="store_true")
    parser.add_argument("--emulated", action="append", default=[], metavar="NAME@NODE")
    parser.add_argument("pairs", nargs="+", metavar="REAL=STAND_IN")
    args = parser.parse_args()
    failed = False
    checked = set()
    for pair in args.pairs:
        real, stand_in = pair.split("=", 1)
        problems, count = compare(args.readelf, real, stand_in)
        if args.compare_strings and "ibverbs" in real:
            problems += compare_strings(real, stand_in)
        emulated_problems, found = check_emulated(args.readelf, stand_in, args.emulated)
        problems += emulated_problems
        checked |= found
        for problem in problems:
            print(f"{stand_in}: {problem}")
        if problems:
            failed = True
        else:
            print(f"{stand_in}: same soname, version nodes and {count} exports as {real}")
    for symbol in sorted(set(args.emulated) - checked):
        print(f"{symbol}: exported by none of the stand-ins")
        failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
