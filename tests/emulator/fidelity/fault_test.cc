/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Injected NIC faults (spead_emu_inject_fault): each reported on the async fd as
// rdma-core reports it, and the device then behaves as a real one would.
#include "verbs_test_support.h"

#include <poll.h>

#include <thread>

using namespace verbs_test;

namespace {

constexpr const char* device = "emu_lo";

/*! The next async event, read within 3 s and acknowledged. */
ibv_async_event next_event(ibv_context* context)
{
    ibv_async_event event{};
    pollfd readable{ context->async_fd, POLLIN, 0 };
    EXPECT_EQ(poll(&readable, 1, 3000), 1) << "no async event";
    EXPECT_EQ(ibv_get_async_event(context, &event), 0);
    ibv_async_event copy = event;
    ibv_ack_async_event(&event);
    return copy;
}

spead_emu_counters qp_counters_after(ibv_qp* qp, bool (*done)(const spead_emu_counters&))
{
    spead_emu_counters counters{};
    for (int tries = 0; tries < 300; tries++) {
        EXPECT_EQ(emulator().query_qp_counters(qp, &counters), 0);
        if (done(counters))
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return counters;
}

} // namespace

TEST(Faults, PortDownRaisesPortErrLosesFramesAndPortUpRestoresThem)
{
    raw_queue_pair made = make_loopback_receiver(7401);
    registered_buffer buffer = register_buffer(made.pd.get(), 2048);
    ASSERT_EQ(post_one_receive(made.qp.get(), 1, buffer.sge(0, 2048)), 0);
    ASSERT_EQ(emulator().inject_fault(device, SPEAD_EMU_FAULT_PORT_DOWN), 0);
    ibv_async_event event = next_event(made.context.get());
    EXPECT_EQ(event.event_type, IBV_EVENT_PORT_ERR);
    EXPECT_EQ(event.element.port_num, 1);
    ibv_port_attr port{};
    ASSERT_EQ(ibv_query_port(made.context.get(), 1, &port), 0);
    EXPECT_EQ(port.state, IBV_PORT_DOWN);
    EXPECT_NE(current_state(made.qp.get()), IBV_QPS_ERR) << "a link loss keeps QPs";

    send_kernel_datagram("lost on the wire", 7401);
    const auto lost = qp_counters_after(made.qp.get(), [](const spead_emu_counters& c) {
        return c.rx_frames_dropped_port_down >= 1;
    });
    EXPECT_EQ(lost.rx_frames_dropped_port_down, 1u);
    EXPECT_EQ(lost.rx_frames_delivered, 0u);

    ASSERT_EQ(emulator().inject_fault(device, SPEAD_EMU_FAULT_PORT_UP), 0);
    event = next_event(made.context.get());
    EXPECT_EQ(event.event_type, IBV_EVENT_PORT_ACTIVE);
    EXPECT_EQ(event.element.port_num, 1);
    send_kernel_datagram("arrives", 7401);
    const auto wcs = poll_completions(made.receive_cq.get(), 1);
    ASSERT_EQ(wcs.size(), 1u);
    EXPECT_EQ(wcs[0].status, IBV_WC_SUCCESS);
}

TEST(Faults, QpFatalMovesTheQpToErrAndFlushesItsReceives)
{
    raw_queue_pair made = make_loopback_receiver(7402);
    registered_buffer buffer = register_buffer(made.pd.get(), 2048);
    ASSERT_EQ(post_one_receive(made.qp.get(), 7, buffer.sge(0, 2048)), 0);
    ASSERT_EQ(emulator().inject_fault(device, SPEAD_EMU_FAULT_QP_FATAL), 0);
    const ibv_async_event event = next_event(made.context.get());
    EXPECT_EQ(event.event_type, IBV_EVENT_QP_FATAL);
    EXPECT_EQ(event.element.qp, made.qp.get());
    const auto wcs = poll_completions(made.receive_cq.get(), 1);
    ASSERT_EQ(wcs.size(), 1u);
    EXPECT_EQ(wcs[0].wr_id, 7u);
    EXPECT_EQ(wcs[0].status, IBV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(current_state(made.qp.get()), IBV_QPS_ERR);
    // RESET and up again: it receives.
    ibv_qp_attr reset{};
    reset.qp_state = IBV_QPS_RESET;
    ASSERT_EQ(ibv_modify_qp(made.qp.get(), &reset, IBV_QP_STATE), 0);
    bring_up(made.qp.get(), IBV_QPS_RTR);
    ASSERT_EQ(post_one_receive(made.qp.get(), 8, buffer.sge(0, 2048)), 0);
    send_kernel_datagram("after the reset", 7402);
    const auto after = poll_completions(made.receive_cq.get(), 1);
    ASSERT_EQ(after.size(), 1u);
    EXPECT_EQ(after[0].status, IBV_WC_SUCCESS);
}

TEST(Faults, CqOverrunRaisesCqErrAndPollFailsOnceDrained)
{
    raw_queue_pair made = make_loopback_receiver(7403);
    ASSERT_EQ(emulator().inject_fault(device, SPEAD_EMU_FAULT_CQ_OVERRUN), 0);
    const ibv_async_event event = next_event(made.context.get());
    EXPECT_EQ(event.event_type, IBV_EVENT_CQ_ERR);
    EXPECT_TRUE(event.element.cq == made.receive_cq.get() ||
                event.element.cq == made.send_cq.get());
    ibv_wc wc[4];
    EXPECT_LT(ibv_poll_cq(made.receive_cq.get(), 4, wc), 0);
    EXPECT_EQ(current_state(made.qp.get()), IBV_QPS_ERR);
}

TEST(Faults, DeviceFatalRaisesItsEventAndVerbsFailWithEioButDestroysWork)
{
    raw_queue_pair made = make_loopback_receiver(7404);
    registered_buffer buffer = register_buffer(made.pd.get(), 2048);
    ASSERT_EQ(post_one_receive(made.qp.get(), 3, buffer.sge(0, 2048)), 0);
    ASSERT_EQ(emulator().inject_fault(device, SPEAD_EMU_FAULT_DEVICE_FATAL), 0);
    EXPECT_EQ(next_event(made.context.get()).event_type, IBV_EVENT_DEVICE_FATAL);
    const auto wcs = poll_completions(made.receive_cq.get(), 1);
    ASSERT_EQ(wcs.size(), 1u);
    EXPECT_EQ(wcs[0].status, IBV_WC_WR_FLUSH_ERR);
    ibv_sge sge = buffer.sge(0, 2048);
    ibv_recv_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    EXPECT_EQ(ibv_post_recv(made.qp.get(), &wr, &bad), EIO);
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RESET;
    EXPECT_EQ(ibv_modify_qp(made.qp.get(), &attr, IBV_QP_STATE), EIO);
    errno = 0;
    EXPECT_EQ(ibv_create_cq(made.context.get(), 4, nullptr, nullptr, 0), nullptr);
    EXPECT_EQ(errno, EIO);
    // Still listed (it failed, it was not removed); raw_queue_pair's destructors tear
    // everything down and would fail the test on an error.
    int count = 0;
    ibv_free_device_list(ibv_get_device_list(&count));
    EXPECT_EQ(count, 1);
}

TEST(Faults, DeviceRemovedIsNoLongerListed)
{
    raw_queue_pair made = make_loopback_receiver(7405);
    ASSERT_EQ(emulator().inject_fault(device, SPEAD_EMU_FAULT_DEVICE_REMOVED), 0);
    EXPECT_EQ(next_event(made.context.get()).event_type, IBV_EVENT_DEVICE_FATAL);
    int count = -1;
    ibv_free_device_list(ibv_get_device_list(&count));
    EXPECT_EQ(count, 0);
    EXPECT_EQ(emulator().inject_fault(device, SPEAD_EMU_FAULT_PORT_DOWN), ENODEV);
}

TEST(Faults, FrameFaultsDropDuplicateAndReorderAtTheirRates)
{
    raw_queue_pair made = make_loopback_receiver(7406, { 16, 256, 2, 1, 1024 });
    registered_buffer buffer = register_buffer(made.pd.get(), 256 * 2048);
    for (uint64_t i = 0; i < 256; i++)
        ASSERT_EQ(post_one_receive(made.qp.get(), i, buffer.sge(i * 2048, 2048)), 0);
    EXPECT_EQ(emulator().set_frame_faults(device, 1.5, 0, 0), EINVAL);
    ASSERT_EQ(emulator().set_frame_faults(device, 0.1, 0.1, 0.1), 0);
    constexpr int sent = 200;
    for (int i = 0; i < sent; i++)
        send_kernel_datagram("frame " + std::to_string(i), 7406);
    const auto c = qp_counters_after(made.qp.get(), [](const spead_emu_counters& c) {
        return c.rx_frames_delivered + c.rx_frames_dropped_injected ==
               sent + c.rx_frames_duplicated_injected;
    });
    EXPECT_EQ(c.rx_frames_delivered + c.rx_frames_dropped_injected,
              sent + c.rx_frames_duplicated_injected);
    EXPECT_GT(c.rx_frames_dropped_injected, 5u);
    EXPECT_GT(c.rx_frames_duplicated_injected, 5u);
    EXPECT_GT(c.rx_frames_reordered_injected, 5u);
    ASSERT_EQ(emulator().set_frame_faults(device, 0, 0, 0), 0);
}
