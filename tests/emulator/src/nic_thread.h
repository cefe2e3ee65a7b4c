/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The hardware side of one QP: an AF_PACKET socket on the netdev (the wire) and a thread
// (the NIC's engine) that transmits posted sends, reading the frame from registered
// memory at transmit time, and steers received frames into posted receives.
#ifndef SPEAD_EMU_NIC_THREAD_H
#define SPEAD_EMU_NIC_THREAD_H

#include "queue_pair.h"
#include "unique_fd.h"

#include <infiniband/verbs.h>

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace spead_emu {

class nic_thread
{
public:
    // Opens the packet socket on the interface: 0, or the errno (EPERM without
    // CAP_NET_RAW, ENODEV if the interface is gone).
    static int open(int ifindex, int mtu, std::unique_ptr<nic_thread>& nic);
    ~nic_thread();

    void start(queue_pair& qp);
    // Joins the thread; afterwards the QP is no longer touched.
    void stop();
    // Wakes the thread: new sends, new receives to flush, a state change.
    void ring_doorbell();

    // Largest frame the interface can carry (MTU plus Ethernet header).
    size_t max_frame_size() const { return m_max_frame_size; }

private:
    nic_thread(unique_fd socket, unique_fd doorbell, int ifindex, int mtu);
    void run();
    void receive_burst();
    void transmit_pending();
    ibv_wc_status transmit_frame(size_t length);
    void collect_socket_drops();
    void handle_socket_error();

    queue_pair* m_qp = nullptr;
    unique_fd m_socket;
    unique_fd m_doorbell;
    int m_ifindex;
    size_t m_max_frame_size;
    std::atomic<bool> m_stopping{ false };
    std::thread m_thread;

    // Preallocated so the data path allocates nothing per frame.
    static constexpr unsigned receive_batch = 16;
    std::vector<uint8_t> m_receive_buffers;
    std::vector<mmsghdr> m_receive_headers;
    std::vector<iovec> m_receive_iovecs;
    std::vector<uint8_t> m_receive_controls;
    std::vector<uint8_t> m_transmit_frame;
    send_work m_work;
    bool m_warned_oversize = false;
    bool m_warned_socket_drops = false;
    bool m_warned_interface_gone = false;
};

} // namespace spead_emu

#endif
