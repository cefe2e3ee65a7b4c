/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The GID table of an emulated RoCE v2 port: the netdev's IPv4 addresses as
// IPv4-mapped GIDs (::ffff:a.b.c.d) first, then its IPv6 addresses, as the kernel
// fills the table from the interface's addresses. An RC QP's peer is found from a GID.
#ifndef SPEAD_EMU_GID_TABLE_H
#define SPEAD_EMU_GID_TABLE_H

#include <infiniband/verbs.h>
#include <netinet/in.h>

#include <string>
#include <vector>

namespace spead_emu {

// The port's GIDs, index order, read from the interface's current addresses.
std::vector<ibv_gid> gid_table_of(const std::string& netdev);

// The IPv4 address of an IPv4-mapped GID; false for any other GID.
bool ipv4_of_gid(const ibv_gid& gid, in_addr& address);

} // namespace spead_emu

#endif
