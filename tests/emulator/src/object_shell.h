/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef SPEAD_EMU_OBJECT_SHELL_H
#define SPEAD_EMU_OBJECT_SHELL_H

#include <pthread.h>

#include <type_traits>
#include <cstdint>

namespace spead_emu {

// The rdma-core struct an application holds (ibv_qp, ibv_cq, ...) followed by a pointer
// back to the emulator object that owns it. Header-inline verbs read the struct's
// fields (qp->context->ops, cq->channel); the emulator finds itself from the pointer.
template <typename Verbs, typename Owner>
struct object_shell {
    // Declared in the owner as `m_shell{ this }`.
    explicit object_shell(Owner* owner_object) : owner(owner_object) {}

    Verbs verbs{};
    Owner* owner;

    static Owner* owner_of(const Verbs* verbs)
    {
        static_assert(std::is_standard_layout_v<object_shell>,
                      "the verbs struct must be at offset 0");
        return verbs == nullptr ? nullptr
                                : reinterpret_cast<const object_shell*>(verbs)->owner;
    }
};

// An object_shell whose verbs struct carries the mutex and condition variable that
// rdma-core's own calls use (ibv_ack_cq_events, ibv_ack_async_event on an ibv_cq, ibv_qp
// or ibv_wq): made with the shell and destroyed with it. (ibv_create_wq, an inline
// verb, initialises them again; mlx5dv_create_wq does not.)
template <typename Verbs, typename Owner>
struct synchronised_shell : object_shell<Verbs, Owner> {
    explicit synchronised_shell(Owner* owner_object)
        : object_shell<Verbs, Owner>(owner_object)
    {
        pthread_mutex_init(&this->verbs.mutex, nullptr);
        pthread_cond_init(&this->verbs.cond, nullptr);
    }
    ~synchronised_shell()
    {
        pthread_cond_destroy(&this->verbs.cond);
        pthread_mutex_destroy(&this->verbs.mutex);
    }
    synchronised_shell(const synchronised_shell&) = delete;
    synchronised_shell& operator=(const synchronised_shell&) = delete;
};

// As rdma-core acknowledges events: adds \p n to one of the struct's acknowledged
// counts under its mutex and wakes the destroy call that waits for it.
template <typename Verbs>
void acknowledge_events(Verbs& verbs, uint32_t Verbs::*acknowledged, uint32_t n)
{
    pthread_mutex_lock(&verbs.mutex);
    verbs.*acknowledged += n;
    pthread_cond_signal(&verbs.cond);
    pthread_mutex_unlock(&verbs.mutex);
}

} // namespace spead_emu

#endif
