# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reads the dynamic exports and version definitions of a shared library with readelf.

Shared by generate_abi.py (which builds the stand-in libraries from the installed
rdma-core) and check_abi.py (which compares the built stand-ins with rdma-core).
"""

import re
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class Export:
    name: str
    version: str
    is_default: bool  # name@@version (what new links bind to) or name@version (compat)
    kind: str  # FUNC or OBJECT
    size: int


@dataclass(frozen=True)
class VersionNode:
    name: str
    parent: str  # '' when the node has no parent


def _run(readelf, args, library):
    return subprocess.run([readelf, *args, library], check=True, capture_output=True,
                          text=True).stdout


def read_exports(readelf, library):
    """Every versioned symbol the library defines, in readelf's order."""
    exports = []
    for line in _run(readelf, ["--dyn-syms", "--wide"], library).splitlines():
        fields = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(fields) < 8 or not fields[0].endswith(":"):
            continue
        size, kind, bind, ndx, symbol = fields[2], fields[3], fields[4], fields[6], fields[7]
        if ndx in ("UND", "ABS") or bind not in ("GLOBAL", "WEAK"):
            continue  # imports and the version-node marker symbols
        if kind not in ("FUNC", "OBJECT"):
            continue
        match = re.fullmatch(r"([^@]+)(@@?)(.+)", symbol)
        if not match:
            raise SystemExit(f"{library}: unversioned export {symbol}; rdma-core versions all")
        exports.append(Export(match.group(1), match.group(3), match.group(2) == "@@", kind,
                              int(size, 0)))
    return exports


def read_version_nodes(readelf, library):
    """The version definitions in order, with their parents (IBVERBS_1.1 -> IBVERBS_1.0)."""
    text = _run(readelf, ["--version-info", "--wide"], library)
    section = text.split("Version definition section", 1)
    if len(section) < 2:
        raise SystemExit(f"{library}: no version definitions")
    section = section[1].split("Version needs section", 1)[0]
    nodes = []
    for line in section.splitlines():
        definition = re.search(r"Flags: (\S+)\s+Index: \d+\s+Cnt: \d+\s+Name: (\S+)", line)
        if definition:
            flags, name = definition.groups()
            if flags != "BASE":  # the BASE entry is the soname itself
                nodes.append([name, ""])
            continue
        parent = re.search(r"Parent 1: (\S+)", line)
        if parent and nodes:
            nodes[-1][1] = parent.group(1)
    return [VersionNode(name, parent) for name, parent in nodes]


def read_soname(readelf, library):
    match = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]",
                      _run(readelf, ["--dynamic"], library))
    if not match:
        raise SystemExit(f"{library}: no SONAME")
    return match.group(1)
