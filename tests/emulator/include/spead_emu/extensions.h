/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
/*
 * What the emulated NIC offers beyond the verbs API, for tests only.
 *
 * A NIC counts what it drops (mlx5's out_of_buffer counter, for one); these functions
 * read the emulator's equivalents. They are exported by the stand-in libibverbs in its
 * own version node (SPEAD_EMU_PRIVATE_1), so a program linked against the real
 * rdma-core finds them with dlsym at run time, and finds nothing when it runs on real
 * hardware: spead_emu_find() returns false there.
 */
#ifndef SPEAD_EMU_EXTENSIONS_H
#define SPEAD_EMU_EXTENSIONS_H

#include <dlfcn.h>
#include <stdint.h>

#ifdef __cplusplus
#include <ostream>
#endif

struct ibv_context;
struct ibv_device;
struct ibv_qp;

#ifdef __cplusplus
extern "C" {
#endif

/* Frame counters of one QP, or of a device's port (every QP of this process on it). */
struct spead_emu_counters {
    /* Frames written into a posted receive (successful completions). */
    uint64_t rx_frames_delivered;
    /* Matched a flow of a QP in RTR/RTS with no receive posted: dropped, as a NIC does
     * (mlx5 counts these as out_of_buffer). */
    uint64_t rx_frames_dropped_no_receive;
    /* Matched a flow while the QP was in RESET, INIT or ERR: dropped. */
    uint64_t rx_frames_dropped_qp_not_ready;
    /* Longer than the netdev MTU allows, so no NIC would have received them (usually
     * GRO/GSO merged kernel segments; turn offloads off). */
    uint64_t rx_frames_dropped_oversize;
    /* The emulator's own AF_PACKET socket overflowed: the emulator fell behind. Not NIC
     * behaviour; a test seeing it is too fast for the emulator. */
    uint64_t rx_frames_dropped_socket_overflow;
    /* Frames transmitted on the netdev. */
    uint64_t tx_frames_sent;
    /* Frames completed as sent that never reached the wire: the link was down (as on
     * hardware), or the kernel kept refusing them (ENOBUFS) and the emulator gave up
     * after retrying for a second, saying so on stderr. */
    uint64_t tx_frames_lost;
    /* Completions with an error status other than IBV_WC_WR_FLUSH_ERR. */
    uint64_t error_completions;
};

/* Verbs objects of one device context that exist now: a program that has released
 * everything it made shows zeros (the context itself belongs to rdma_cm). */
struct spead_emu_live_objects {
    int protection_domains;
    int completion_channels;
    int completion_queues;
    int queue_pairs;
    int memory_regions;
    int flows;
    int counters;
};

/* 0, or an errno value. */
typedef int (*spead_emu_query_qp_counters_fn)(struct ibv_qp* qp,
                                              struct spead_emu_counters* counters);
typedef int (*spead_emu_query_port_counters_fn)(struct ibv_context* context,
                                                struct spead_emu_counters* counters);
/* The netdev an emulated device stands on ("veth0"), or NULL. */
typedef const char* (*spead_emu_device_netdev_fn)(struct ibv_device* device);
typedef int (*spead_emu_query_live_objects_fn)(struct ibv_context* context,
                                               struct spead_emu_live_objects* objects);

#ifdef __cplusplus
} /* extern "C" */

/* The extension functions of the emulator loaded in this process. */
struct spead_emu_api {
    spead_emu_query_qp_counters_fn query_qp_counters = nullptr;
    spead_emu_query_port_counters_fn query_port_counters = nullptr;
    spead_emu_device_netdev_fn device_netdev = nullptr;
    spead_emu_query_live_objects_fn query_live_objects = nullptr;

    /* False when the process runs on the real rdma-core. */
    bool find()
    {
        query_qp_counters = reinterpret_cast<spead_emu_query_qp_counters_fn>(
            dlsym(RTLD_DEFAULT, "spead_emu_query_qp_counters"));
        query_port_counters = reinterpret_cast<spead_emu_query_port_counters_fn>(
            dlsym(RTLD_DEFAULT, "spead_emu_query_port_counters"));
        device_netdev = reinterpret_cast<spead_emu_device_netdev_fn>(
            dlsym(RTLD_DEFAULT, "spead_emu_device_netdev"));
        query_live_objects = reinterpret_cast<spead_emu_query_live_objects_fn>(
            dlsym(RTLD_DEFAULT, "spead_emu_query_live_objects"));
        return query_qp_counters && query_port_counters && device_netdev &&
               query_live_objects;
    }
};

/* Live counts compare and print whole, so a test states them in one expectation. */
inline bool operator==(const spead_emu_live_objects& a, const spead_emu_live_objects& b)
{
    return a.protection_domains == b.protection_domains &&
           a.completion_channels == b.completion_channels &&
           a.completion_queues == b.completion_queues && a.queue_pairs == b.queue_pairs &&
           a.memory_regions == b.memory_regions && a.flows == b.flows &&
           a.counters == b.counters;
}
inline std::ostream& operator<<(std::ostream& out, const spead_emu_live_objects& live)
{
    return out << "{ protection_domains " << live.protection_domains
               << ", completion_channels " << live.completion_channels
               << ", completion_queues " << live.completion_queues << ", queue_pairs "
               << live.queue_pairs << ", memory_regions " << live.memory_regions
               << ", flows " << live.flows << ", counters " << live.counters << " }";
}
#endif

#endif
