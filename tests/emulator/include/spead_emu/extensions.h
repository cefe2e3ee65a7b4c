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
    /* Injected faults (spead_emu_inject_fault, spead_emu_set_frame_faults), counted
     * for frames a flow of the QP matched: lost because the port was down; dropped,
     * delivered twice, or held back behind the next frame. */
    uint64_t rx_frames_dropped_port_down;
    uint64_t rx_frames_dropped_injected;
    uint64_t rx_frames_duplicated_injected;
    uint64_t rx_frames_reordered_injected;
};

/* Faults a test injects into an emulated device (spead_emu_inject_fault), each what a
 * real NIC reports on the contexts' async fds (see docs/testing.md, "NIC faults"). */
enum spead_emu_fault {
    /* IBV_EVENT_PORT_ERR; frames arriving are lost (rx_frames_dropped_port_down),
     * frames sent are lost on the wire (tx_frames_lost); ibv_query_port says DOWN. */
    SPEAD_EMU_FAULT_PORT_DOWN = 1,
    /* IBV_EVENT_PORT_ACTIVE; frames flow again. */
    SPEAD_EMU_FAULT_PORT_UP = 2,
    /* Every RAW_PACKET QP with its own state goes to ERR (outstanding WRs flush with
     * IBV_WC_WR_FLUSH_ERR) and IBV_EVENT_QP_FATAL names it. */
    SPEAD_EMU_FAULT_QP_FATAL = 3,
    /* Every CQ with QPs overruns: IBV_EVENT_CQ_ERR names it, its QPs go to ERR, and
     * ibv_poll_cq fails (-1) once what it holds is drained. */
    SPEAD_EMU_FAULT_CQ_OVERRUN = 4,
    /* IBV_EVENT_DEVICE_FATAL; every QP goes to ERR and flushes; from then on verbs
     * that create, modify or post fail with EIO (destroy calls succeed). */
    SPEAD_EMU_FAULT_DEVICE_FATAL = 5,
    /* DEVICE_FATAL, and ibv_get_device_list no longer lists the device. */
    SPEAD_EMU_FAULT_DEVICE_REMOVED = 6
};

/* 0, or ENODEV (no such emulated device), EINVAL (unknown fault), ENOENT (nothing the
 * fault applies to: no QP, no CQ). device_name: "emu_eth0". */
typedef int (*spead_emu_inject_fault_fn)(const char* device_name, int fault);
/* The port counters of the device named \p device_name (as
 * spead_emu_query_port_counters), for a test that holds no context (Python's ctypes).
 * 0, or ENODEV. */
typedef int (*spead_emu_query_device_counters_fn)(const char* device_name,
                                                  struct spead_emu_counters* counters);
/* Received frames a flow matches are dropped, duplicated or held back behind the next
 * frame (reordered) with these probabilities (0 to 1, drawn per frame in that order;
 * all 0 turns it off). 0, or ENODEV/EINVAL. */
typedef int (*spead_emu_set_frame_faults_fn)(const char* device_name,
                                             double drop,
                                             double duplicate,
                                             double reorder);

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
    spead_emu_inject_fault_fn inject_fault = nullptr;
    spead_emu_set_frame_faults_fn set_frame_faults = nullptr;
    spead_emu_query_device_counters_fn query_device_counters = nullptr;

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
        inject_fault = reinterpret_cast<spead_emu_inject_fault_fn>(
            dlsym(RTLD_DEFAULT, "spead_emu_inject_fault"));
        set_frame_faults = reinterpret_cast<spead_emu_set_frame_faults_fn>(
            dlsym(RTLD_DEFAULT, "spead_emu_set_frame_faults"));
        query_device_counters = reinterpret_cast<spead_emu_query_device_counters_fn>(
            dlsym(RTLD_DEFAULT, "spead_emu_query_device_counters"));
        return query_qp_counters && query_port_counters && device_netdev &&
               query_live_objects && inject_fault && set_frame_faults &&
               query_device_counters;
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
