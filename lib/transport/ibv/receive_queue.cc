/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// make_receive_queue(): the multi-packet receive queue where the device offers one,
// else (or when setting it up fails) the slot ring.

#include "mlx5_direct.h"
#include "receive_queue.h"
#include "slot_receive_queue.h"
#include "striding_receive_queue.h"
#include <system_error>

namespace gr {
namespace spead {
namespace ibv {

std::unique_ptr<receive_queue> make_receive_queue(const device_binding& device,
                                                  const receive_queue_params& params,
                                                  gr::logger& logger,
                                                  std::string& why_slots)
{
    std::string clamped;
    std::unique_ptr<receive_queue> queue;
    const striding_rq_support support = query_striding_rq(device.context());
    why_slots = support.reason;
    if (support.usable) {
        try {
            queue = std::make_unique<striding_receive_queue>(
                device, support, params, clamped);
        } catch (const std::system_error& e) {
            // The device said it could; fixed slots still work.
            why_slots = e.what();
            logger.warn("the device offers a multi-packet receive queue, but setting "
                        "one up failed ({}); using fixed slots of max_size + 42 bytes",
                        e.what());
        }
    }
    if (!queue)
        queue = std::make_unique<slot_receive_queue>(device, params, clamped);
    if (!clamped.empty())
        logger.warn("buffer_size: {} bytes is more than device {} allows ({}); using {} "
                    "bytes",
                    params.buffer_size,
                    device.device_name(),
                    clamped,
                    queue->buffer_size());
    return queue;
}

} // namespace ibv
} // namespace spead
} // namespace gr
