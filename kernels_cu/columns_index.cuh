// Where the columns kernels (columns.cu) put each thread, shared with their CPU mirror
// (tests/mirrors/columns_mirror.cpp). A block covers BLOCK_THREADS neighbouring sequences over
// one chunk of the time axis, one thread a sequence; the grid runs chunk-major (every block of
// chunk c before any of chunk c + 1), as tile_of_ticket orders the tiles of strided sequences.
// A thread's (sequence, chunk) is three_pass_index.cuh's tile seq * tiles_per_seq + chunk, so
// the three-pass scratch slots and pass 2 (three_pass_carries) serve unchanged.
#pragma once

#include "affine.cuh"  // RTSCAN_HOST_DEVICE

namespace rtscan {

// Blocks across the sequences: the grid of passes 1 and 3 is this times tiles_per_seq.
RTSCAN_HOST_DEVICE long long column_blocks(long long num_seqs, int block_threads) {
    return (num_seqs + block_threads - 1) / block_threads;
}

struct ColumnPlace {
    long long seq;    // may be num_seqs or more in the last block across: that thread has no work
    long long chunk;  // the chunk of the time axis, tiles_per_seq of them per sequence
};

RTSCAN_HOST_DEVICE ColumnPlace column_place(long long grid_index, int thread, int block_threads, long long num_seqs) {
    const long long blocks = column_blocks(num_seqs, block_threads);
    const long long chunk = grid_index / blocks;
    return {(grid_index - chunk * blocks) * block_threads + thread, chunk};
}

}  // namespace rtscan
