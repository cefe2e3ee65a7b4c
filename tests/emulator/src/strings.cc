/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The enum-to-text helpers, with rdma-core's wording so logs read the same on hardware.
// (check_abi.py compares them with the installed library.)
#include "enum_names.h"

#include <infiniband/verbs.h>

extern "C" {

const char* ibv_wc_status_str(ibv_wc_status status)
{
    static const char* const names[] = {
        "success",
        "local length error",
        "local QP operation error",
        "local EE context operation error",
        "local protection error",
        "Work Request Flushed Error",
        "memory management operation error",
        "bad response error",
        "local access error",
        "remote invalid request error",
        "remote access error",
        "remote operation error",
        "transport retry counter exceeded",
        "RNR retry counter exceeded",
        "local RDD violation error",
        "remote invalid RD request",
        "aborted error",
        "invalid EE context number",
        "invalid EE context state",
        "fatal error",
        "response timeout error",
        "general error",
        "TM error",
        "TM software rendezvous",
    };
    return spead_emu::enum_name(names, status, "unknown");
}

const char* ibv_port_state_str(ibv_port_state state)
{
    static const char* const names[] = {
        "no state change (NOP)", "down", "init", "armed", "active", "active defer",
    };
    return spead_emu::enum_name(names, state, "unknown");
}

const char* ibv_node_type_str(ibv_node_type type)
{
    static const char* const names[] = {
        "InfiniBand channel adapter", // IBV_NODE_CA = 1
        "InfiniBand switch",
        "InfiniBand router",
        "iWARP NIC",
        "usNIC",
        "usNIC UDP",
        "unspecified",
    };
    return spead_emu::enum_name(names, type, "unknown", IBV_NODE_CA);
}

const char* ibv_event_type_str(ibv_event_type event)
{
    static const char* const names[] = {
        "CQ error",
        "local work queue catastrophic error",
        "invalid request local work queue error",
        "local access violation work queue error",
        "communication established",
        "send queue drained",
        "path migrated",
        "path migration request error",
        "local catastrophic error",
        "port active",
        "port error",
        "LID change",
        "P_Key change",
        "SM change",
        "SRQ catastrophic error",
        "SRQ limit reached",
        "last WQE reached",
        "client reregistration",
        "GID table change",
        "WQ fatal",
    };
    return spead_emu::enum_name(names, event, "unknown");
}

} // extern "C"
