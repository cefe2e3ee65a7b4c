/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Finding the RDMA device of an interface the way the product does it.
#ifndef SPEAD_EMU_VERBS_DEVICE_H
#define SPEAD_EMU_VERBS_DEVICE_H

#include "program_support.h"

#include <verbs_owners.h>

#include <string>

namespace emu_programs {

// rdma_create_id + rdma_bind_addr(interface address): the context and port of the
// device that owns the address. Returns exit_ok, or exit_no_rdma_device after saying
// why on stderr, after the program's name (no device at all, or none for this
// interface).
int open_device_of(const interface_info& interface,
                   verbs_owners::cm_id_ptr& id,
                   const char* program);

// ibv_create_qp, then INIT on \p port: the QP, or nullptr with errno set and \p failed
// naming the step that failed.
verbs_owners::qp_ptr
create_qp_at_init(ibv_pd* pd, ibv_qp_init_attr& attr, uint8_t port, const char*& failed);

// ibv_poll_cq in a bounded wait for one completion.
bool wait_for_send_completion(ibv_cq* cq, ibv_wc& wc, std::chrono::milliseconds limit);

} // namespace emu_programs

#endif
