/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The cx5 model (SPEAD_EMU_MODEL=cx5): mlx5dv striding RQs behind an RX-hash QP, read
// through an extended CQ, as a multi-packet receiver (spead2's) uses them: WQEs written
// into the ring that mlx5dv_init_obj describes, offsets tracked from the strides each
// completion reports. Linked against rdma-core's libmlx5; run over the stand-ins.
#include "verbs_test_support.h"

#include <endian.h>
#include <infiniband/mlx5dv.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace verbs_test;

namespace {

constexpr uint32_t stride_log = 6;  // 64-byte strides
constexpr uint32_t strides_log = 9; // 512 strides: 32 KiB per WQE
constexpr uint32_t stride = 1u << stride_log;
constexpr uint32_t strides_per_wqe = 1u << strides_log;
constexpr uint32_t wqe_bytes = stride * strides_per_wqe;
constexpr uint32_t filler = 0x80000000u;

struct cq_ex_destroyer {
    void operator()(ibv_cq_ex* cq) const { ibv_destroy_cq(ibv_cq_ex_to_cq(cq)); }
};
using cq_ex_ptr = std::unique_ptr<ibv_cq_ex, cq_ex_destroyer>;

struct completion {
    ibv_wc_status status;
    uint32_t byte_len; // mlx5's packed field
    uint32_t qp_num;
};

cq_ex_ptr make_cq_ex(ibv_context* context, uint32_t cqe, uint64_t wc_flags)
{
    ibv_cq_init_attr_ex attr{};
    attr.cqe = cqe;
    attr.wc_flags = wc_flags;
    attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
    attr.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
    return cq_ex_ptr(ibv_create_cq_ex(context, &attr));
}

// The receive side of a multi-packet receiver on loopback port `port`.
struct striding_receiver {
    context_ptr context;
    pd_ptr pd;
    cq_ex_ptr cq;
    wq_ptr wq;
    rwq_ind_table_ptr table;
    qp_ptr qp;
    flow_ptr flow;
    registered_buffer buffer;
    mlx5dv_rwq ring{};
    uint32_t posted = 0;

    explicit striding_receiver(uint16_t port,
                               uint32_t wqes = 4,
                               bool two_byte_shift = false)
    {
        context = open_loopback_device();
        pd.reset(ibv_alloc_pd(context.get()));
        cq = make_cq_ex(context.get(),
                        wqes * strides_per_wqe,
                        IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM);
        EXPECT_NE(cq, nullptr) << strerror(errno);
        ibv_wq_init_attr wq_attr{};
        wq_attr.wq_type = IBV_WQT_RQ;
        wq_attr.max_wr = wqes;
        wq_attr.max_sge = 1;
        wq_attr.pd = pd.get();
        wq_attr.cq = ibv_cq_ex_to_cq(cq.get());
        mlx5dv_wq_init_attr mlx5_attr{};
        mlx5_attr.comp_mask = MLX5DV_WQ_INIT_ATTR_MASK_STRIDING_RQ;
        mlx5_attr.striding_rq_attrs.single_stride_log_num_of_bytes = stride_log;
        mlx5_attr.striding_rq_attrs.single_wqe_log_num_of_strides = strides_log;
        mlx5_attr.striding_rq_attrs.two_byte_shift_en = two_byte_shift;
        wq.reset(mlx5dv_create_wq(context.get(), &wq_attr, &mlx5_attr));
        EXPECT_NE(wq, nullptr) << strerror(errno);
        mlx5dv_obj obj{};
        obj.rwq.in = wq.get();
        obj.rwq.out = &ring;
        EXPECT_EQ(mlx5dv_init_obj(&obj, MLX5DV_OBJ_RWQ), 0);
        ibv_wq* entries[1] = { wq.get() };
        ibv_rwq_ind_table_init_attr table_attr{};
        table_attr.log_ind_tbl_size = 0;
        table_attr.ind_tbl = entries;
        table.reset(ibv_create_rwq_ind_table(context.get(), &table_attr));
        EXPECT_NE(table, nullptr) << strerror(errno);
        qp = make_rx_hash_qp(pd.get(), table.get());
        EXPECT_NE(qp, nullptr) << strerror(errno);
        flow = steer_loopback_udp(qp.get(), port);
        buffer = register_buffer(pd.get(), size_t{ wqes } * wqe_bytes);
    }

    static qp_ptr make_rx_hash_qp(ibv_pd* pd, ibv_rwq_ind_table* table)
    {
        static uint8_t key[40] = {};
        ibv_qp_init_attr_ex attr{};
        attr.qp_type = IBV_QPT_RAW_PACKET;
        attr.comp_mask =
            IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH;
        attr.pd = pd;
        attr.rwq_ind_tbl = table;
        attr.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
        attr.rx_hash_conf.rx_hash_key_len = sizeof(key);
        attr.rx_hash_conf.rx_hash_key = key;
        return qp_ptr(ibv_create_qp_ex(pd->context, &attr));
    }

    void ready()
    {
        ibv_wq_attr attr{};
        attr.attr_mask = IBV_WQ_ATTR_STATE;
        attr.wq_state = IBV_WQS_RDY;
        ASSERT_EQ(ibv_modify_wq(wq.get(), &attr), 0);
        posted = 0; // the provider started the ring over
    }

    // Writes WQE `index` of the buffer into the ring and rings the doorbell record.
    void post(uint32_t index)
    {
        auto* wqe = static_cast<mlx5_mprq_wqe*>(ring.buf) + (posted & (ring.wqe_cnt - 1));
        memset(&wqe->nseg, 0, sizeof(wqe->nseg));
        wqe->dseg.byte_count = htobe32(wqe_bytes);
        wqe->dseg.lkey = htobe32(buffer.mr->lkey);
        wqe->dseg.addr = htobe64(reinterpret_cast<uintptr_t>(buffer.bytes.data()) +
                                 size_t{ index } * wqe_bytes);
        posted++;
        reinterpret_cast<std::atomic<uint32_t>*>(ring.dbrec)
            ->store(htobe32(posted & 0xffff), std::memory_order_release);
    }

    std::vector<completion>
    poll(size_t wanted, std::chrono::milliseconds limit = std::chrono::seconds(3))
    {
        std::vector<completion> got;
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (got.size() < wanted && std::chrono::steady_clock::now() < deadline) {
            ibv_poll_cq_attr attr{};
            int status = ibv_start_poll(cq.get(), &attr);
            if (status == ENOENT) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                continue;
            }
            EXPECT_EQ(status, 0);
            while (status == 0) {
                got.push_back({ cq->status,
                                ibv_wc_read_byte_len(cq.get()),
                                ibv_wc_read_qp_num(cq.get()) });
                status = ibv_next_poll(cq.get());
            }
            ibv_end_poll(cq.get());
        }
        return got;
    }

    const uint8_t* at(uint32_t wqe, uint32_t strides) const
    {
        return buffer.bytes.data() + size_t{ wqe } * wqe_bytes +
               size_t{ strides } * stride;
    }
};

// A frame of exactly `frame_bytes` on the wire (Ethernet + IPv4 + UDP + payload),
// its payload filled with `fill`.
void send_frame_of(size_t frame_bytes, uint16_t port, char fill)
{
    send_kernel_datagram(std::string(frame_bytes - udp_frame_overhead, fill), port);
}

uint32_t packed(uint32_t strides, uint32_t bytes) { return strides << 16 | bytes; }

uint64_t dropped_no_receive(ibv_qp* qp)
{
    spead_emu_counters counters{};
    EXPECT_EQ(emulator().query_qp_counters(qp, &counters), 0);
    return counters.rx_frames_dropped_no_receive;
}

} // namespace

TEST(Cx5Device, MlxDirectVerbsAreSupported)
{
    context_ptr context = open_loopback_device();
    EXPECT_TRUE(mlx5dv_is_supported(context->device));
}

TEST(Cx5Device, QueryDeviceReportsStridingRqCapsWhenAsked)
{
    context_ptr context = open_loopback_device();
    mlx5dv_context attrs{};
    attrs.comp_mask =
        MLX5DV_CONTEXT_MASK_STRIDING_RQ | MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE;
    ASSERT_EQ(mlx5dv_query_device(context.get(), &attrs), 0);
    EXPECT_EQ(attrs.comp_mask, uint64_t{ MLX5DV_CONTEXT_MASK_STRIDING_RQ });
    EXPECT_TRUE(attrs.flags & MLX5DV_CONTEXT_FLAGS_MPW_ALLOWED);
    EXPECT_EQ(attrs.striding_rq_caps.min_single_stride_log_num_of_bytes, 6u);
    EXPECT_EQ(attrs.striding_rq_caps.max_single_stride_log_num_of_bytes, 13u);
    EXPECT_EQ(attrs.striding_rq_caps.min_single_wqe_log_num_of_strides, 9u);
    EXPECT_EQ(attrs.striding_rq_caps.max_single_wqe_log_num_of_strides, 16u);
    EXPECT_TRUE(
        ibv_is_qpt_supported(attrs.striding_rq_caps.supported_qpts, IBV_QPT_RAW_PACKET));

    mlx5dv_context unasked{};
    ASSERT_EQ(mlx5dv_query_device(context.get(), &unasked), 0);
    EXPECT_EQ(unasked.comp_mask, 0u);
    EXPECT_EQ(unasked.striding_rq_caps.max_single_wqe_log_num_of_strides, 0u);
}

TEST(Cx5Device, StridingAttributesOutsideTheCapsAreRefused)
{
    context_ptr context = open_loopback_device();
    pd_ptr pd(ibv_alloc_pd(context.get()));
    cq_ex_ptr cq = make_cq_ex(context.get(), 64, IBV_WC_EX_WITH_BYTE_LEN);
    ibv_wq_init_attr attr{};
    attr.wq_type = IBV_WQT_RQ;
    attr.max_wr = 2;
    attr.max_sge = 1;
    attr.pd = pd.get();
    attr.cq = ibv_cq_ex_to_cq(cq.get());
    mlx5dv_wq_init_attr mlx5_attr{};
    mlx5_attr.comp_mask = MLX5DV_WQ_INIT_ATTR_MASK_STRIDING_RQ;
    mlx5_attr.striding_rq_attrs.single_stride_log_num_of_bytes = 5; // below 6
    mlx5_attr.striding_rq_attrs.single_wqe_log_num_of_strides = 9;
    EXPECT_EQ(mlx5dv_create_wq(context.get(), &attr, &mlx5_attr), nullptr);
    EXPECT_EQ(errno, EINVAL);
    mlx5_attr.striding_rq_attrs.single_stride_log_num_of_bytes = 6;
    mlx5_attr.striding_rq_attrs.single_wqe_log_num_of_strides = 17; // above 16
    EXPECT_EQ(mlx5dv_create_wq(context.get(), &attr, &mlx5_attr), nullptr);
    EXPECT_EQ(errno, EINVAL);
}

TEST(Cx5Device, TheRingIsLaidOutAsMlx5Does)
{
    striding_receiver receiver(7001, 3);
    EXPECT_EQ(receiver.ring.stride, sizeof(mlx5_mprq_wqe)); // what spead2 checks
    EXPECT_EQ(receiver.ring.wqe_cnt, 4u); // max_wr rounded up to a power of two
    EXPECT_NE(receiver.ring.buf, nullptr);
    EXPECT_NE(receiver.ring.dbrec, nullptr);
}

TEST(ExtendedCq, ReadFunctionsExistOnlyForTheFieldsAskedFor)
{
    context_ptr context = open_loopback_device();
    cq_ex_ptr cq = make_cq_ex(context.get(), 16, IBV_WC_EX_WITH_BYTE_LEN);
    ASSERT_NE(cq, nullptr);
    EXPECT_NE(cq->read_byte_len, nullptr);
    EXPECT_NE(cq->read_opcode, nullptr);
    EXPECT_EQ(cq->read_qp_num, nullptr);
    EXPECT_EQ(cq->cqe, 31); // rounded up as mlx5 does
    ibv_poll_cq_attr attr{};
    EXPECT_EQ(ibv_start_poll(cq.get(), &attr), ENOENT);
}

TEST(ExtendedCq, CompletionTimestampsAreNotModelled)
{
    context_ptr context = open_loopback_device();
    EXPECT_EQ(make_cq_ex(context.get(), 16, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP),
              nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
}

TEST(StridingRq, APacketTakesWholeStridesAndTheCompletionPacksByteCountAndStrides)
{
    striding_receiver receiver(7002);
    receiver.ready();
    receiver.post(0);
    send_frame_of(142, 7002, 'a'); // 3 strides
    send_frame_of(64, 7002, 'b');  // exactly 1
    send_frame_of(65, 7002, 'c');  // 2
    const auto got = receiver.poll(3);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].byte_len, packed(3, 142));
    EXPECT_EQ(got[1].byte_len, packed(1, 64));
    EXPECT_EQ(got[2].byte_len, packed(2, 65));
    EXPECT_EQ(got[0].qp_num, receiver.qp->qp_num);
    for (const auto& c : got)
        EXPECT_EQ(c.status, IBV_WC_SUCCESS);
    // Consecutive strides: frame k starts where the strides of frame k-1 end.
    EXPECT_EQ(receiver.at(0, 0)[udp_frame_overhead], 'a');
    EXPECT_EQ(receiver.at(0, 3)[udp_frame_overhead], 'b');
    EXPECT_EQ(receiver.at(0, 4)[udp_frame_overhead], 'c');
    EXPECT_EQ(receiver.at(0, 4)[64], 'c'); // its last byte, in its second stride
}

TEST(StridingRq, APacketNeverSpansTwoWqesAFillerConsumesTheRest)
{
    striding_receiver receiver(7003);
    receiver.ready();
    receiver.post(0);
    receiver.post(1);
    // 8042 bytes take 126 strides: four fill 504 of 512, the fifth does not fit.
    for (int i = 0; i < 5; i++)
        send_frame_of(8042, 7003, static_cast<char>('0' + i));
    const auto got = receiver.poll(6);
    ASSERT_EQ(got.size(), 6u);
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(got[i].byte_len, packed(126, 8042));
    EXPECT_EQ(got[4].byte_len, filler | packed(8, 0));
    EXPECT_EQ(got[5].byte_len, packed(126, 8042));
    EXPECT_EQ(receiver.at(0, 378)[udp_frame_overhead], '3');
    EXPECT_EQ(receiver.at(1, 0)[udp_frame_overhead], '4');
}

TEST(StridingRq, AWqeIsDoneWhenItsStridesAreUsedUpWithoutFiller)
{
    striding_receiver receiver(7004);
    receiver.ready();
    receiver.post(0);
    receiver.post(1);
    for (int i = 0; i < 9; i++) // 64 strides each: eight fill the WQE exactly
        send_frame_of(4096, 7004, static_cast<char>('a' + i));
    const auto got = receiver.poll(9);
    ASSERT_EQ(got.size(), 9u);
    for (const auto& c : got)
        EXPECT_EQ(c.byte_len, packed(64, 4096));
    EXPECT_EQ(receiver.at(1, 0)[udp_frame_overhead], 'i');
}

TEST(StridingRq, TwoByteShiftPlacesFramesTwoBytesInAndCountsThem)
{
    striding_receiver receiver(7005, 4, true);
    receiver.ready();
    receiver.post(0);
    send_frame_of(62, 7005, 'x'); // 64 with the shift: one stride
    send_frame_of(63, 7005, 'y'); // 65: two
    const auto got = receiver.poll(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].byte_len, packed(1, 64));
    EXPECT_EQ(got[1].byte_len, packed(2, 65));
    EXPECT_EQ(receiver.at(0, 0)[2 + 12], 0x08); // the ethertype, two bytes later
    EXPECT_EQ(receiver.at(0, 1)[2 + udp_frame_overhead], 'y');
}

TEST(StridingRq, FramesFindingNoWqeAreDroppedAndCounted)
{
    striding_receiver receiver(7006);
    receiver.ready();
    send_frame_of(100, 7006, 'a');
    EXPECT_TRUE(receiver.poll(1, std::chrono::milliseconds(300)).empty());
    EXPECT_EQ(dropped_no_receive(receiver.qp.get()), 1u);
    receiver.post(0);
    send_frame_of(100, 7006, 'b');
    const auto got = receiver.poll(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(receiver.at(0, 0)[udp_frame_overhead], 'b');
}

TEST(StridingRq, FramesWhileTheWqIsNotReadyAreDroppedAndCounted)
{
    striding_receiver receiver(7007);
    receiver.post(0); // posted, but the WQ is still in RESET
    send_frame_of(100, 7007, 'a');
    EXPECT_TRUE(receiver.poll(1, std::chrono::milliseconds(300)).empty());
    spead_emu_counters counters{};
    ASSERT_EQ(emulator().query_qp_counters(receiver.qp.get(), &counters), 0);
    EXPECT_EQ(counters.rx_frames_dropped_qp_not_ready, 1u);
}

TEST(StridingRq, WqesPostedBeforeTheWqIsReadyAreLostAsOnMlx5)
{
    striding_receiver receiver(7010);
    receiver.post(0); // in RESET: leaving it zeroes the doorbell record
    receiver.ready();
    EXPECT_EQ(be32toh(*receiver.ring.dbrec), 0u);
    send_frame_of(100, 7010, 'a');
    EXPECT_TRUE(receiver.poll(1, std::chrono::milliseconds(300)).empty());
    EXPECT_EQ(dropped_no_receive(receiver.qp.get()), 1u);
}

TEST(StridingRq, PostWqRecvFillsTheRingAsTheProviderDoes)
{
    striding_receiver receiver(7008);
    receiver.ready();
    ibv_sge sge = receiver.buffer.sge(wqe_bytes, wqe_bytes); // the second WQE's memory
    ibv_recv_wr wr{};
    wr.wr_id = 42;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_wq_recv(receiver.wq.get(), &wr, &bad), 0);
    EXPECT_EQ(be32toh(*receiver.ring.dbrec), 1u);
    send_frame_of(100, 7008, 'p');
    ASSERT_EQ(receiver.poll(1).size(), 1u);
    EXPECT_EQ(receiver.at(1, 0)[udp_frame_overhead], 'p');
}

TEST(StridingRq, ObjectsInUseAreNotDestroyed)
{
    striding_receiver receiver(7009);
    EXPECT_EQ(ibv_destroy_wq(receiver.wq.get()), EBUSY);               // in a table
    EXPECT_EQ(ibv_destroy_rwq_ind_table(receiver.table.get()), EBUSY); // under a QP
    EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(receiver.cq.get())), EBUSY);
}
