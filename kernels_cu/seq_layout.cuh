// Where sequence s, step t lives in memory: the strided view the kernels read and write.
//
// The Python side moves the scanned axis last, merges batch axes that are contiguous with each
// other, and fills this struct (rtscan/_layout.py mirrors it field for field with ctypes). All
// counts and strides are 64-bit and in elements, so no index wraps past 2^31.
#pragma once

#include "affine.cuh"  // RTSCAN_HOST_DEVICE: the CPU mirror builds this file too

namespace rtscan {

constexpr int MAX_BATCH_RANK = 4;

struct SeqLayout {
    long long length;                     // steps per sequence (L)
    long long num_seqs;                   // independent sequences (S), the product of batch_size
    int batch_rank;                       // how many batch axes remain after merging
    // 0, or the boundary, in elements (32: a 128-byte line; 4: 16 bytes), from which lookback.cu
    // scans each sequence: from the last one at or before its step 0, the steps between (its row
    // head, which differs from row to row where rows are not a boundary long) being the identity,
    // never written. The host sets it (only for lookback.cu) where a, b and out start every
    // sequence equally far past such a boundary and some sequence starts off it, so that every
    // tile's 16-byte loads and stores are aligned, and counts the tiles from the longest row head
    // (rtscan/_scan.py; P67, P196).
    short head;
    // With a head, the longest row head, as the host counted it (_scan._row_heads: rows start the
    // origin's distance past the boundary plus multiples of the common divisor of the boundary and
    // the batch strides): lookback.cu's packed rows give each row the lanes its length and this take.
    // Passed rather than found in the kernel, where every packed thread spent 38 warp instructions a
    // warp on it (P230, P233). head and this share the int beside batch_rank: the struct keeps its
    // size, and the kernels at their register limit keep their allocation (a wider struct made
    // hillis_steele 768x1 spill on sm_100).
    short longest_head;
    long long batch_size[MAX_BATCH_RANK];
    long long in_batch_stride[MAX_BATCH_RANK];   // shared by a and b
    long long out_batch_stride[MAX_BATCH_RANK];
    long long in_time_stride;             // may be negative: reverse=True walks memory backwards
    long long out_time_stride;
    long long in_origin;                  // element offset of step 0 of sequence 0
    long long out_origin;
};

// Element offsets of step 0 of sequence `seq`, with the batch axes in C order (last axis fastest),
// the same order in which h0 holds one state per sequence.
RTSCAN_HOST_DEVICE void sequence_origins(const SeqLayout& layout, long long seq, long long& in_offset,
                                         long long& out_offset) {
    in_offset = layout.in_origin;
    out_offset = layout.out_origin;
    for (int axis = int(layout.batch_rank) - 1; axis >= 0; --axis) {
        const long long size = layout.batch_size[axis];
        const long long index = seq % size;
        seq /= size;
        in_offset += index * layout.in_batch_stride[axis];
        out_offset += index * layout.out_batch_stride[axis];
    }
}

// The tile (seq * tiles_per_seq + chunk) that the block holding `ticket` scans (the three-pass
// forms pass their grid index, which needs no order but gains the same locality). Where a sequence's
// steps are adjacent in memory (time stride +1 or -1), tickets run along each sequence in turn, so
// the tiles in flight read one stretch of memory. Where they are strided, as in time-major batches
// (a 32-byte sector then holds steps of up to 8 sequences), every sequence's chunk c comes before
// any sequence's chunk c + 1: the tiles in flight are neighbouring sequences over the same steps,
// which share their sectors through L2 instead of fetching them again later (P96). `chunks_first`
// takes that order for adjacent steps too: a tile's predecessor was then drawn num_seqs tickets
// earlier and has mostly finished, which the batch shape's short tiles need (P114-P116). In every
// order each earlier tile of a sequence holds an earlier ticket, which is all the look-back's
// forward-progress argument needs (tile_state.cuh).
RTSCAN_HOST_DEVICE long long tile_of_ticket(const SeqLayout& layout, long long ticket, long long tiles_per_seq,
                                            bool chunks_first = false) {
    if (!chunks_first && (layout.in_time_stride == 1 || layout.in_time_stride == -1)) return ticket;
    const long long chunk = ticket / layout.num_seqs;
    return (ticket - chunk * layout.num_seqs) * tiles_per_seq + chunk;
}

}  // namespace rtscan
