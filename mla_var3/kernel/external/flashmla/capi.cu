// A torch-free C ABI over FlashMLA's SM90 dense MLA decode (ours; FlashMLA's sources are built
// beside it by build.py and never copied into this repository).
//
// It replaces FlashMLA's torch binding (csrc/api/dense_decode.h at 9241ae3): the same params
// setup for the absorbed MLA form (one KV head), on raw device pointers that the caller
// allocates, so the library can be loaded with ctypes next to any torch build. Every entry point
// returns 0 on success, else a non-zero code with a one-line message in flashmla_last_error().
// FlashMLA's own CUDA checks still call exit(1) on a CUDA error (csrc/utils.h).

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>

#include <cutlass/bfloat16.h>
#include <cutlass/half.h>

#include "params.h"
#include "sm90/decode/dense/splitkv_mla.h"
#include "smxx/decode/combine/combine.h"
#include "smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.h"

namespace {

constexpr int kAbiVersion = 1;
constexpr int kPageBlockSize = 64;  // FlashMLA SM90: "Currently page_block_size must be 64"
constexpr int kHeadDimK = 576;
constexpr int kHeadDimV = 512;
constexpr int kBlockSizeM = 64;     // query rows per CTA (sm90/decode/dense/config.h)
constexpr int kBlockSizeN = 64;     // the scheduler's block size (dense_decode.h)
constexpr int kFixedOverheadBlocks = 5;

thread_local std::string g_last_error;

int fail(const std::string &message) {
    g_last_error = message;
    return 1;
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace

extern "C" {

// Pointers and sizes of one decode call. Tensors are contiguous:
//   q [b, s_q, h_q, d_qk], kcache [num_blocks, page_block_size, 1, d_qk], block_table
//   [b, max_blocks_per_seq] int32, seqlens_k [b] int32, out [b, s_q, h_q, d_v] (dtype of q),
//   lse [b, s_q, h_q] fp32, sched_meta [num_sm_parts, flashmla_sched_meta_ints()] int32,
//   num_splits [b + 1] int32, lse_accum [b + num_sm_parts, s_q * h_q] fp32, o_accum
//   [b + num_sm_parts, s_q * h_q, d_v] fp32.
typedef struct {
    int b, s_q, h_q, d_qk, d_v;
    int num_blocks, page_block_size, max_blocks_per_seq;
    int is_causal;
    int is_fp16;  // 0: bf16, 1: fp16
    float softmax_scale;
    int num_sm_parts;
    void *q;
    void *kcache;
    int *block_table;
    int *seqlens_k;
    void *out;
    float *lse;
    int *sched_meta;
    int *num_splits;
    float *lse_accum;
    float *o_accum;
    void *stream;
} FlashMlaDecodeArgs;

int flashmla_abi_version(void) { return kAbiVersion; }

const char *flashmla_last_error(void) { return g_last_error.c_str(); }

int flashmla_sched_meta_ints(void) { return DecodingSchedMetaSize / static_cast<int>(sizeof(int)); }

// dense_decode.h: max(num_sms / h_k / ceil_div(s_q * h_q / h_k, 64), 1) with h_k = 1.
int flashmla_num_sm_parts(int num_sms, int s_q, int h_q) {
    return std::max(num_sms / ceil_div(s_q * h_q, kBlockSizeM), 1);
}

int flashmla_get_sched_meta(int b, int s_q, int *seqlens_k, int *sched_meta, int *num_splits, int num_sm_parts,
                            void *stream) {
    if (b <= 0 || s_q <= 0 || num_sm_parts <= 0) return fail("flashmla_get_sched_meta: b, s_q and num_sm_parts must be positive");
    GetDecodeSchedMetaParams params = {
        b, s_q, kBlockSizeN, kFixedOverheadBlocks, -1, -1, nullptr, nullptr, seqlens_k,
        reinterpret_cast<DecodingSchedMeta *>(sched_meta), num_splits, num_sm_parts,
        static_cast<cudaStream_t>(stream),
    };
    try {
        smxx::decode::run_get_decoding_sched_meta_kernel(params);
    } catch (const std::exception &error) {
        return fail(error.what());
    }
    return 0;
}

int flashmla_dense_decode(const FlashMlaDecodeArgs *a) {
    if (a->page_block_size != kPageBlockSize)
        return fail("FlashMLA SM90 dense decode takes page size 64 only, got " + std::to_string(a->page_block_size));
    if (a->d_qk != kHeadDimK || a->d_v != kHeadDimV)
        return fail("FlashMLA SM90 dense decode takes d_qk 576 and d_v 512 only");
    if (a->b <= 0 || a->s_q <= 0 || a->h_q <= 0) return fail("flashmla_dense_decode: b, s_q and h_q must be positive");

    const int q_seq_per_hk = a->s_q * a->h_q;  // one KV head: every query row shares it
    const cudaStream_t stream = static_cast<cudaStream_t>(a->stream);

    DenseAttnDecodeParams p{};
    p.b = a->b;
    p.s_q = a->s_q;
    p.q_seq_per_hk = q_seq_per_hk;
    p.seqlens_k_ptr = a->seqlens_k;
    p.h_q = a->h_q;
    p.h_k = 1;
    p.num_blocks = a->num_blocks;
    p.q_head_per_hk = a->h_q;
    p.is_causal = a->s_q > 1 && a->is_causal != 0;  // dense_decode.h: s_q == 1 is never causal
    p.d = a->d_qk;
    p.d_v = a->d_v;
    p.scale_softmax = a->softmax_scale;
    p.scale_softmax_log2 = static_cast<float>(a->softmax_scale * M_LOG2E);
    p.q_ptr = a->q;
    p.k_ptr = a->kcache;
    p.o_ptr = a->out;
    p.softmax_lse_ptr = a->lse;
    // Strides in elements, as dense_decode.h takes them from q [b, q_seq_per_hk, 1, d],
    // kcache [num_blocks, page, 1, d] and out [b, 1, q_seq_per_hk, d_v].
    p.q_batch_stride = static_cast<int64_t>(q_seq_per_hk) * a->d_qk;
    p.q_row_stride = a->d_qk;
    p.q_head_stride = a->d_qk;
    p.k_batch_stride = static_cast<int64_t>(a->page_block_size) * a->d_qk;
    p.k_row_stride = a->d_qk;
    p.k_head_stride = a->d_qk;
    p.o_batch_stride = static_cast<int64_t>(q_seq_per_hk) * a->d_v;
    p.o_row_stride = a->d_v;
    p.o_head_stride = static_cast<int64_t>(q_seq_per_hk) * a->d_v;
    p.block_table = a->block_table;
    p.block_table_batch_stride = a->max_blocks_per_seq;
    p.page_block_size = a->page_block_size;
    p.tile_scheduler_metadata_ptr = reinterpret_cast<DecodingSchedMeta *>(a->sched_meta);
    p.num_sm_parts = a->num_sm_parts;
    p.num_splits_ptr = a->num_splits;
    p.total_num_splits = a->b + a->num_sm_parts;
    p.softmax_lseaccum_ptr = a->lse_accum;
    p.oaccum_ptr = a->o_accum;
    p.stream = stream;

    CombineParams c = {
        a->b, a->s_q, a->h_q, a->d_v,
        a->lse, a->out,
        q_seq_per_hk, a->h_q,
        a->h_q * a->s_q * a->d_v, a->h_q * a->d_v, a->d_v,
        a->lse_accum, a->o_accum,
        q_seq_per_hk, a->h_q,
        a->h_q * a->s_q * a->d_v, a->h_q * a->d_v, a->d_v,
        p.tile_scheduler_metadata_ptr, a->num_splits, a->num_sm_parts,
        nullptr, stream,
    };
    try {
        if (a->is_fp16) {
            sm90::run_flash_splitkv_mla_kernel<cutlass::half_t>(p);
            smxx::decode::run_flash_mla_combine_kernel<cutlass::half_t>(c);
        } else {
            sm90::run_flash_splitkv_mla_kernel<cutlass::bfloat16_t>(p);
            smxx::decode::run_flash_mla_combine_kernel<cutlass::bfloat16_t>(c);
        }
    } catch (const std::exception &error) {
        return fail(error.what());
    }
    return 0;
}

}  // extern "C"
