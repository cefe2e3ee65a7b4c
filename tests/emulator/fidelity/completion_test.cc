/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Completion queues and completion channels: events, acknowledgements, overrun.
#include "verbs_test_support.h"

#include <fcntl.h>
#include <poll.h>

using namespace verbs_test;

namespace {

bool readable_within(int fd, int milliseconds)
{
    pollfd wait{ fd, POLLIN, 0 };
    return poll(&wait, 1, milliseconds) == 1 && (wait.revents & POLLIN);
}

raw_queue_pair receiver_with_channel(uint16_t port, int cq_entries = 64)
{
    queue_pair_options options;
    options.with_channel = true;
    options.cq_entries = cq_entries;
    raw_queue_pair made = make_loopback_receiver(port, options);
    // As a receiver does: poll() the channel fd with a timeout.
    const int flags = fcntl(made.channel->fd, F_GETFL);
    fcntl(made.channel->fd, F_SETFL, flags | O_NONBLOCK);
    return made;
}

// Arms the receive CQ, posts one receive into \p buffer and sends it a datagram: the
// channel then holds one unread event.
void raise_one_event(raw_queue_pair& made, const registered_buffer& buffer, uint16_t port)
{
    ASSERT_EQ(post_one_receive(made.qp.get(), 1, buffer.sge()), 0);
    ASSERT_EQ(ibv_req_notify_cq(made.receive_cq.get(), 0), 0);
    send_kernel_datagram("event", port);
    ASSERT_TRUE(readable_within(made.channel->fd, 3000));
}

} // namespace

TEST(CompletionChannel, ArmedCqRaisesOneEventThatMustBeReadAndAcknowledged)
{
    raw_queue_pair made = receiver_with_channel(7301);
    registered_buffer buffer = register_buffer(made.pd.get(), 4096);
    for (uint64_t i = 0; i < 3; i++)
        ASSERT_EQ(post_one_receive(made.qp.get(), i, buffer.sge(i * 1024, 1024)), 0);
    made.receive_cq->cq_context = &made;

    send_kernel_datagram("before arming", 7301);
    ASSERT_EQ(poll_completions(made.receive_cq.get(), 1).size(), 1u);
    EXPECT_FALSE(readable_within(made.channel->fd, 100))
        << "an unarmed CQ raises no event";

    ASSERT_EQ(ibv_req_notify_cq(made.receive_cq.get(), 0), 0);
    send_kernel_datagram("armed", 7301);
    send_kernel_datagram("armed once only", 7301);
    ASSERT_TRUE(readable_within(made.channel->fd, 3000));
    ibv_cq* cq = nullptr;
    void* cq_context = nullptr;
    ASSERT_EQ(ibv_get_cq_event(made.channel.get(), &cq, &cq_context), 0);
    EXPECT_EQ(cq, made.receive_cq.get());
    EXPECT_EQ(cq_context, &made);
    ASSERT_EQ(poll_completions(made.receive_cq.get(), 2).size(), 2u);
    EXPECT_EQ(ibv_get_cq_event(made.channel.get(), &cq, &cq_context), -1)
        << "one event per arming";
    EXPECT_EQ(errno, EAGAIN);
    ibv_ack_cq_events(made.receive_cq.get(), 1);
}

TEST(CompletionChannel, EmptyNonBlockingChannelReturnsEagain)
{
    raw_queue_pair made = receiver_with_channel(7302);
    ibv_cq* cq = nullptr;
    void* cq_context = nullptr;
    EXPECT_EQ(ibv_get_cq_event(made.channel.get(), &cq, &cq_context), -1);
    EXPECT_EQ(errno, EAGAIN);
}

TEST(CompletionQueue, DestroyingItWithUnacknowledgedEventsIsRefused)
{
    raw_queue_pair made = receiver_with_channel(7303);
    registered_buffer buffer = register_buffer(made.pd.get(), 1024);
    ASSERT_NO_FATAL_FAILURE(raise_one_event(made, buffer, 7303));
    ibv_cq* cq = nullptr;
    void* cq_context = nullptr;
    ASSERT_EQ(ibv_get_cq_event(made.channel.get(), &cq, &cq_context), 0);
    ASSERT_EQ(poll_completions(made.receive_cq.get(), 1).size(), 1u);
    ASSERT_EQ(ibv_destroy_flow(made.flow.release()), 0);
    ASSERT_EQ(ibv_destroy_qp(made.qp.release()), 0);

    // On hardware this call would block forever.
    EXPECT_EQ(ibv_destroy_cq(made.receive_cq.get()), EBUSY);
    ibv_ack_cq_events(made.receive_cq.get(), 1);
    EXPECT_EQ(ibv_destroy_cq(made.receive_cq.release()), 0);
}

TEST(CompletionQueue, UnreadEventsDoNotBlockDestruction)
{
    raw_queue_pair made = receiver_with_channel(7304);
    registered_buffer buffer = register_buffer(made.pd.get(), 1024);
    ASSERT_NO_FATAL_FAILURE(raise_one_event(made, buffer, 7304));
    ASSERT_EQ(ibv_destroy_flow(made.flow.release()), 0);
    ASSERT_EQ(ibv_destroy_qp(made.qp.release()), 0);
    EXPECT_EQ(ibv_destroy_cq(made.receive_cq.release()), 0)
        << "the kernel drops unread events";
    EXPECT_FALSE(readable_within(made.channel->fd, 0));
}

TEST(CompletionQueue, OverrunIsReportedByAnAsyncEventAndAFailingPoll)
{
    raw_queue_pair made = receiver_with_channel(7305, 1);
    ASSERT_EQ(made.receive_cq->cqe, 1);
    registered_buffer buffer = register_buffer(made.pd.get(), 3 * 1024);
    for (uint64_t i = 0; i < 3; i++)
        ASSERT_EQ(post_one_receive(made.qp.get(), i, buffer.sge(i * 1024, 1024)), 0);
    send_kernel_datagram("fits", 7305);
    send_kernel_datagram("overruns", 7305);

    ASSERT_TRUE(readable_within(made.context->async_fd, 3000));
    ibv_async_event event{};
    ASSERT_EQ(ibv_get_async_event(made.context.get(), &event), 0);
    EXPECT_EQ(event.event_type, IBV_EVENT_CQ_ERR);
    EXPECT_EQ(event.element.cq, made.receive_cq.get());
    ibv_ack_async_event(&event);

    ibv_wc wc[4];
    EXPECT_EQ(ibv_poll_cq(made.receive_cq.get(), 4, wc), 1);
    EXPECT_EQ(wc[0].wr_id, 0u);
    EXPECT_LT(ibv_poll_cq(made.receive_cq.get(), 4, wc), 0);
    EXPECT_EQ(current_state(made.qp.get()), IBV_QPS_ERR);
}

TEST(CompletionQueue, SizeIsRoundedUpAsTheNicDoes)
{
    context_ptr context = open_loopback_device();
    cq_ptr cq(ibv_create_cq(context.get(), 100, nullptr, nullptr, 0));
    ASSERT_NE(cq, nullptr);
    EXPECT_EQ(cq->cqe, 127);
}

TEST(CompletionQueue, CompletionVectorBeyondTheDevicesFailsWithEinval)
{
    context_ptr context = open_loopback_device();
    cq_ptr last(
        ibv_create_cq(context.get(), 8, nullptr, nullptr, context->num_comp_vectors - 1));
    EXPECT_NE(last, nullptr);
    errno = 0;
    cq_ptr beyond(
        ibv_create_cq(context.get(), 8, nullptr, nullptr, context->num_comp_vectors));
    EXPECT_EQ(beyond, nullptr);
    EXPECT_EQ(errno, EINVAL);
}
