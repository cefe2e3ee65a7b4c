#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Helpers for placement callbacks written with numba (as spead2.numba)."""

import numba.extending
from numba import types


@numba.extending.intrinsic
def intp_to_voidptr(typingctx, src):
    """Converts an integer (intp or uintp) to a void pointer: numba records cannot
    hold pointers, so chunk_place_data carries them as integers; follow with
    numba.carray to index them."""
    if src not in (types.intp, types.uintp):
        return None

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

    return types.voidptr(src), codegen
