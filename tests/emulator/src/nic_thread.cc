/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "nic_thread.h"

#include "device.h"
#include "device_context.h"
#include "frame.h"
#include "log.h"
#include "queue_pair.h"

#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace spead_emu {
namespace {

// Big enough to absorb a test's burst while the thread is busy elsewhere.
constexpr int socket_buffer_bytes = 16 << 20;
constexpr int idle_poll_ms = 100;
// How long a frame the kernel keeps refusing (ENOBUFS) is retried before it is lost.
constexpr int transmit_retry_ms = 1000;

} // namespace

nic_thread::nic_thread(unique_fd socket, unique_fd doorbell, int ifindex, int mtu)
    : m_socket(std::move(socket)),
      m_doorbell(std::move(doorbell)),
      m_ifindex(ifindex),
      m_max_frame_size(static_cast<size_t>(mtu) + ETH_HLEN),
      m_receive_buffers(receive_batch * (m_max_frame_size + 1)),
      m_receive_headers(receive_batch),
      m_receive_iovecs(receive_batch),
      m_receive_controls(receive_batch * CMSG_SPACE(sizeof(tpacket_auxdata))),
      // Room for anything the kernel might accept, so that frames over the MTU fail in
      // send() (EMSGSIZE), as they would on a real link, rather than here.
      m_transmit_frame(65536 + ETH_HLEN)
{
    m_work.sges.reserve(device_limits::max_sge);
    m_work.inline_data.reserve(device_limits::max_inline_data);
}

int nic_thread::open(int ifindex, int mtu, std::unique_ptr<nic_thread>& nic)
{
    // Protocol 0: nothing is queued until bind() picks the interface.
    unique_fd socket(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
    if (!socket)
        return errno;
    sockaddr_ll address{};
    address.sll_family = AF_PACKET;
    address.sll_protocol = htons(ETH_P_ALL);
    address.sll_ifindex = ifindex;
    // Our own transmissions would otherwise come back as received frames (and on
    // loopback every frame would be seen twice).
    const int one = 1;
    if (setsockopt(socket.get(), SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) !=
            0 ||
        setsockopt(socket.get(), SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)) != 0)
        return errno;
    // Beyond net.core.[rw]mem_max when allowed (CAP_NET_ADMIN), else up to it.
    for (const auto& [forced, capped] : { std::pair{ SO_RCVBUFFORCE, SO_RCVBUF },
                                          std::pair{ SO_SNDBUFFORCE, SO_SNDBUF } }) {
        const int* bytes = &socket_buffer_bytes;
        if (setsockopt(socket.get(), SOL_SOCKET, forced, bytes, sizeof(int)) != 0)
            setsockopt(socket.get(), SOL_SOCKET, capped, bytes, sizeof(int));
    }
    if (bind(socket.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0)
        return errno;
    unique_fd doorbell(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!doorbell)
        return errno;
    nic.reset(new nic_thread(std::move(socket), std::move(doorbell), ifindex, mtu));
    return 0;
}

nic_thread::~nic_thread() { stop(); }

void nic_thread::start(queue_pair& qp)
{
    m_qp = &qp;
    for (unsigned i = 0; i < receive_batch; i++) {
        m_receive_iovecs[i].iov_base = &m_receive_buffers[i * (m_max_frame_size + 1)];
        m_receive_iovecs[i].iov_len = m_max_frame_size + 1; // one more reveals oversize
    }
    m_thread = std::thread([this] { run(); });
    char name[16];
    snprintf(name, sizeof(name), "emu-nic-%x", qp.verbs()->qp_num);
    pthread_setname_np(m_thread.native_handle(), name);
}

void nic_thread::stop()
{
    if (!m_thread.joinable())
        return;
    m_stopping = true;
    ring_doorbell();
    m_thread.join();
}

void nic_thread::ring_doorbell()
{
    const uint64_t one = 1;
    // An eventfd write only fails if the counter would overflow: it is already ringing.
    (void)!write(m_doorbell.get(), &one, sizeof(one));
}

void nic_thread::run()
{
    while (!m_stopping) {
        pollfd waits[2] = { { m_socket.get(), POLLIN, 0 },
                            { m_doorbell.get(), POLLIN, 0 } };
        if (poll(waits, 2, idle_poll_ms) < 0 && errno != EINTR) {
            warn("NIC thread of QP 0x%x: poll failed: %s",
                 m_qp->verbs()->qp_num,
                 strerror(errno));
            break;
        }
        if (waits[1].revents & POLLIN) {
            uint64_t rings;
            (void)!read(m_doorbell.get(), &rings, sizeof(rings));
        }
        if (m_stopping)
            break;
        m_qp->flush_if_in_error();
        transmit_pending();
        if (waits[0].revents & POLLIN)
            receive_burst();
        else
            m_qp->release_held_frame(); // the wire is idle

        if (waits[0].revents & POLLERR)
            handle_socket_error();
        collect_socket_drops();
    }
}

void nic_thread::receive_burst()
{
    for (unsigned i = 0; i < receive_batch; i++) {
        msghdr& header = m_receive_headers[i].msg_hdr;
        header = msghdr{};
        header.msg_iov = &m_receive_iovecs[i];
        header.msg_iovlen = 1;
        header.msg_control = &m_receive_controls[i * CMSG_SPACE(sizeof(tpacket_auxdata))];
        header.msg_controllen = CMSG_SPACE(sizeof(tpacket_auxdata));
    }
    const int received = recvmmsg(m_socket.get(),
                                  m_receive_headers.data(),
                                  receive_batch,
                                  MSG_DONTWAIT | MSG_TRUNC,
                                  nullptr);
    frame_counters& port = m_qp->context().device().port_counters();
    for (int i = 0; i < received; i++) {
        msghdr& header = m_receive_headers[i].msg_hdr;
        const size_t length = m_receive_headers[i].msg_len;
        if (length > m_max_frame_size) {
            count(&frame_counters::rx_frames_dropped_oversize, m_qp->counters(), port);
            if (!m_warned_oversize) {
                m_warned_oversize = true;
                warn(
                    "a %zu-byte frame arrived on an interface whose MTU allows %zu: a "
                    "real NIC never sees it. GRO/GSO offloads are probably on; turn them "
                    "off (ethtool -K <dev> gro off gso off tso off).",
                    length,
                    m_max_frame_size);
            }
            continue;
        }
        // The kernel reports locally generated frames whose L4 checksum it left for
        // the (virtual) hardware to fill in.
        bool l4_left_to_hardware = false;
        for (cmsghdr* control = CMSG_FIRSTHDR(&header); control != nullptr;
             control = CMSG_NXTHDR(&header, control)) {
            if (control->cmsg_level == SOL_PACKET &&
                control->cmsg_type == PACKET_AUXDATA) {
                tpacket_auxdata auxiliary;
                memcpy(&auxiliary, CMSG_DATA(control), sizeof(auxiliary));
                l4_left_to_hardware =
                    auxiliary.tp_status & (TP_STATUS_CSUMNOTREADY | TP_STATUS_CSUM_VALID);
            }
        }
        m_qp->deliver_frame(static_cast<const uint8_t*>(m_receive_iovecs[i].iov_base),
                            length,
                            l4_left_to_hardware);
    }
    if (received > 0)
        m_qp->context().device().publish_port_counters();
}

void nic_thread::transmit_pending()
{
    send_work& work = m_work;
    while (m_qp->take_next_send(work)) {
        size_t length = 0;
        // The frame is read from registered memory now, at transmit time, as DMA does.
        ibv_wc_status status =
            m_qp->gather(work, m_transmit_frame.data(), m_transmit_frame.size(), length);
        if (status == IBV_WC_SUCCESS && length < ETH_HLEN)
            status = IBV_WC_LOC_LEN_ERR;
        if (status == IBV_WC_SUCCESS) {
            // A NIC without the offload leaves the headers as the application built
            // them, whatever the WR asks.
            if (work.offload_checksums && features().ip_checksum_offload)
                fill_offloaded_checksums(m_transmit_frame.data(), length);
            status = transmit_frame(length);
        }
        m_qp->finish_send(work, status);
    }
}

ibv_wc_status nic_thread::transmit_frame(size_t length)
{
    frame_counters& port = m_qp->context().device().port_counters();
    if (m_qp->context().device().faults().port_down()) {
        // An injected link failure: the frame goes nowhere, and completes as sent.
        count(&frame_counters::tx_frames_lost, m_qp->counters(), port);
        return IBV_WC_SUCCESS;
    }
    for (int waited_ms = 0;; waited_ms += 10) {
        if (send(m_socket.get(), m_transmit_frame.data(), length, MSG_DONTWAIT) >= 0) {
            count(&frame_counters::tx_frames_sent, m_qp->counters(), port);
            return IBV_WC_SUCCESS;
        }
        const int error = errno;
        if ((error == ENOBUFS || error == EAGAIN) && waited_ms < transmit_retry_ms &&
            !m_stopping) {
            // The kernel's queue (a veth peer's backlog, say) is full. A wire would just
            // be busy, so wait and send again rather than lose the frame.
            pollfd writable{ m_socket.get(), POLLOUT, 0 };
            poll(&writable, 1, 10);
            continue;
        }
        if (error == EMSGSIZE) {
            // Longer than the link carries: fail the WR loudly (and so break the QP)
            // rather than let a test pass with frames no network would deliver.
            warn("QP 0x%x: a %zu-byte frame exceeds the MTU of the interface (frames "
                 "may be at most %zu bytes); completed with IBV_WC_LOC_LEN_ERR",
                 m_qp->verbs()->qp_num,
                 length,
                 m_max_frame_size);
            return IBV_WC_LOC_LEN_ERR;
        }
        count(&frame_counters::tx_frames_lost, m_qp->counters(), port);
        if (error == ENETDOWN || error == ENXIO) {
            trace("QP 0x%x: link down, frame lost", m_qp->verbs()->qp_num);
        } else {
            warn("QP 0x%x: a %zu-byte frame could not be transmitted (%s); it is lost",
                 m_qp->verbs()->qp_num,
                 length,
                 strerror(error));
        }
        // As on hardware, a frame lost on the wire still completes successfully.
        return IBV_WC_SUCCESS;
    }
}

void nic_thread::handle_socket_error()
{
    // The link went down or the interface went away: the kernel reports it once as a
    // socket error, which reading SO_ERROR clears. A vanished interface keeps reporting,
    // so back off rather than spin.
    int error = 0;
    socklen_t size = sizeof(error);
    getsockopt(m_socket.get(), SOL_SOCKET, SO_ERROR, &error, &size);
    if (error == 0)
        return;
    trace("QP 0x%x: the interface reported %s", m_qp->verbs()->qp_num, strerror(error));
    if (error == ENODEV || error == ENXIO) {
        if (!m_warned_interface_gone) {
            m_warned_interface_gone = true;
            warn("QP 0x%x: its interface is gone (%s); the QP receives nothing more",
                 m_qp->verbs()->qp_num,
                 strerror(error));
        }
        pollfd doorbell{ m_doorbell.get(), POLLIN, 0 };
        poll(&doorbell, 1, idle_poll_ms);
    }
}

void nic_thread::collect_socket_drops()
{
    tpacket_stats statistics{};
    socklen_t size = sizeof(statistics);
    // Reading the statistics also resets them.
    if (getsockopt(m_socket.get(), SOL_PACKET, PACKET_STATISTICS, &statistics, &size) !=
            0 ||
        statistics.tp_drops == 0)
        return;
    count(&frame_counters::rx_frames_dropped_socket_overflow,
          m_qp->counters(),
          m_qp->context().device().port_counters(),
          statistics.tp_drops);
    if (!m_warned_socket_drops) {
        m_warned_socket_drops = true;
        warn("QP 0x%x: the emulator's packet socket dropped %u frame(s): the emulator "
             "cannot keep up with this traffic. A real NIC would not drop these; slow "
             "the test down.",
             m_qp->verbs()->qp_num,
             statistics.tp_drops);
    }
}

} // namespace spead_emu
