/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// How the verbs calls that make and destroy objects of a device context begin and end:
// the handle check, the context's control mutex and its live counts.
#ifndef SPEAD_EMU_VERBS_LIFECYCLE_H
#define SPEAD_EMU_VERBS_LIFECYCLE_H

#include "device_context.h"

#include <cerrno>
#include <mutex>

namespace spead_emu {

// The emulator object behind \p verbs, when it is one and \p argument is given; else
// nullptr with errno EINVAL.
template <typename Owner, typename Verbs, typename Argument>
Owner* owner_given(Verbs* verbs, const Argument* argument)
{
    Owner* owner = Owner::from(verbs);
    if (owner == nullptr || argument == nullptr) {
        errno = EINVAL;
        return nullptr;
    }
    return owner;
}

// A create call on \p verbs: nullptr with errno EINVAL for a context the emulator did
// not open; else, under its control mutex, \p make(context) gives the new object (or
// nullptr with errno set), which is counted in \p live and returned as its verbs struct.
template <typename Make>
auto create_in_context(ibv_context* verbs, int device_context::*live, Make make)
    -> decltype(make(std::declval<device_context&>())->verbs())
{
    device_context* context = device_context::from(verbs);
    if (context == nullptr) {
        errno = EINVAL;
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(context->control_mutex());
    auto* object = make(*context);
    if (object == nullptr)
        return nullptr;
    (context->*live)++;
    return object->verbs();
}

// A destroy call on \p verbs: EINVAL for an object the emulator did not make; else,
// under its context's control mutex, \p release(object, context) returns an error
// (EBUSY while something still uses the object) or 0, and then the object is deleted
// and uncounted from \p live.
template <typename Owner, typename Verbs, typename Release>
int destroy_in_context(Verbs* verbs, int device_context::*live, Release release)
{
    Owner* object = Owner::from(verbs);
    if (object == nullptr)
        return EINVAL;
    device_context& context = object->context();
    std::lock_guard<std::mutex> lock(context.control_mutex());
    if (const int error = release(*object, context))
        return error;
    (context.*live)--;
    delete object;
    return 0;
}

} // namespace spead_emu

#endif
