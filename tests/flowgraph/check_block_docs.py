#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The GRC documentation of each block names its fields as GRC labels them.

A sentence of the `documentation:` text that starts with a capitalised name and a
colon ("Buffer: ...", "ibverbs Max Poll: ...") explains a field: that name must start
the label of one of the block's parameters, so a user finds the field it describes.

    check_block_docs.py BLOCK.block.yml...
"""

import re
import sys

import yaml

# Capitalised words before a colon that are not fields: a variable, a value.
NOT_FIELDS = {"Environment", "Empty"}


def main():
    failures = 0
    for path in sys.argv[1:]:
        with open(path) as f:
            block = yaml.safe_load(f)
        labels = [p["label"] for p in block["parameters"]]
        named = re.findall(r"(?:^|[.;] |\n)((?:[A-Za-z]+ )*[A-Z][A-Za-z]*):",
                           block["documentation"])
        for name in sorted(set(named)):
            if name.isupper() or name in NOT_FIELDS:  # section titles: TRANSPORT
                continue
            for field in name.split(" and "):  # "Item Type and Vector Length:"
                if not any(label == field or label.startswith(field + " ")
                           for label in labels):
                    print(f"FAIL: {path}: the documentation explains '{field}:', but "
                          f"no field is labelled so; labels: {labels}")
                    failures += 1
        print(f"{path}: {len(set(named))} names checked")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
