/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef SPEAD_EMU_OBJECT_SHELL_H
#define SPEAD_EMU_OBJECT_SHELL_H

#include <type_traits>

namespace spead_emu {

// The rdma-core struct an application holds (ibv_qp, ibv_cq, ...) followed by a pointer
// back to the emulator object that owns it. Header-inline verbs read the struct's
// fields (qp->context->ops, cq->channel); the emulator finds itself from the pointer.
template <typename Verbs, typename Owner>
struct object_shell {
    Verbs verbs{};
    Owner* owner = nullptr;

    static Owner* owner_of(const Verbs* verbs)
    {
        static_assert(std::is_standard_layout_v<object_shell>,
                      "the verbs struct must be at offset 0");
        return verbs == nullptr ? nullptr
                                : reinterpret_cast<const object_shell*>(verbs)->owner;
    }
};

} // namespace spead_emu

#endif
