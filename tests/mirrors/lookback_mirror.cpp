// CPU mirror of kernels_cu/lookback.cu and the two-level look-back of kernels_cu/tile_state.cuh.
//
// Built by the host C++ compiler against the kernels' own headers: the affine pair and its combine
// function (affine.cuh), the index arithmetic (indexing.cuh) and the sequence layout
// (seq_layout.cuh) are the very code NVRTC builds into the kernel. What this file adds is the
// block's execution simulated step for step: lanes, warps and shuffles as arrays, each warp's
// running scan over its chunks and the scan of the warps' maps. The look-back that joins the
// tiles is simulated by lookback_protocol.h, against a chosen pattern of which segments have
// published their end state: every pattern must give the same bits (the determinism argument).
//
// tests/test_mirrors.py compiles this file, checks it against the float64 reference, and
// compiles it again against mutated headers (broken twins), each of which must be caught.
#include "lookback_protocol.h"

namespace {

using namespace rtscan_mirror;

Map exclusive_of(const Map (&inclusive)[WARP], int lane) {
    return lane == 0 ? affine_identity<float>() : inclusive[lane - 1];
}

// PROTOCOL_WARP: the kernel's finish with a protocol warp and no runs (lookback.cu): each step's map
// is composed onto its lane's prefix of the piece during the wait, then applied to the warp's start
// state; otherwise the prefix is applied to that state and then each step of the lane's piece, one
// at a time. A piece is what the warp scans at once: a chunk, or with RUN > 1 (lookback.cu's
// RUN_CHUNKS) each of the REGISTER_CHUNKS register chunks and then each run of RUN staged chunks,
// read lane by lane.
template <int BLOCK_THREADS, int ITEMS, int VEC, int DEPTH, int LANES = WARP, int SEGMENT = rtscan::SEGMENT_TILES,
          bool PROTOCOL_WARP = false, bool CHUNKS_FIRST = false, int RUN = 1, int REGISTER_CHUNKS = 0>
void mirror_scan(const float* a, const float* b, float* out, const float* h0, const rtscan::SeqLayout& layout,
                 double finished_probability, std::uint64_t seed) {
    constexpr int WARPS = BLOCK_THREADS / WARP;
    constexpr int CHUNKS = ITEMS / VEC;
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    constexpr int PIECES = RUN > 1 ? REGISTER_CHUNKS + (CHUNKS - REGISTER_CHUNKS) / RUN : CHUNKS;
    constexpr int PIECE_VECTORS = RUN > 1 ? RUN : 1;  // at most: register chunks have one
    // The first step of each of a lane's vectors of piece p, in order; returns how many.
    const auto piece_vectors = [](int warp_first, int p, int lane, int (&firsts)[PIECE_VECTORS]) {
        if (RUN == 1 || p < REGISTER_CHUNKS) {
            firsts[0] = rtscan::first_step<VEC>(warp_first, p, lane);
            return 1;
        }
        for (int j = 0; j < RUN; ++j)
            firsts[j] = rtscan::run_step<VEC, RUN>(warp_first, REGISTER_CHUNKS + (p - REGISTER_CHUNKS) * RUN, lane, j);
        return RUN;
    };
    const auto block = [&](const TileSteps& steps, auto carry_into) {
        Map lane_prefix[WARPS][PIECES][WARP];
        Map warp_aggregate[WARP];
        for (int lane = 0; lane < WARP; ++lane) warp_aggregate[lane] = affine_identity<float>();
        for (int warp = 0; warp < WARPS; ++warp) {
            const int warp_first = rtscan::warp_span_start<ITEMS>(warp);
            Map running = affine_identity<float>();
            for (int p = 0; p < PIECES; ++p) {
                Map lanes[WARP];
                for (int lane = 0; lane < WARP; ++lane) {
                    int firsts[PIECE_VECTORS];
                    const int vectors = piece_vectors(warp_first, p, lane, firsts);
                    Map lane_map = affine_identity<float>();
                    for (int j = 0; j < vectors; ++j)
                        for (int v = 0; v < VEC; ++v) lane_map = compose(steps.map(firsts[j] + v), lane_map);
                    lanes[lane] = lane_map;
                }
                warp_inclusive_scan(lanes);
                for (int lane = 0; lane < WARP; ++lane)
                    lane_prefix[warp][p][lane] = compose(exclusive_of(lanes, lane), running);
                running = compose(lanes[WARP - 1], running);
            }
            warp_aggregate[warp] = running;
        }
        Map warps_inclusive[WARP];
        for (int lane = 0; lane < WARP; ++lane) warps_inclusive[lane] = warp_aggregate[lane];
        warp_inclusive_scan(warps_inclusive);
        const float carry = carry_into(warps_inclusive[WARPS - 1]);

        for (int warp = 0; warp < WARPS; ++warp) {
            const float warp_start_state = apply(exclusive_of(warps_inclusive, warp), carry);
            const int warp_first = rtscan::warp_span_start<ITEMS>(warp);
            for (int p = 0; p < PIECES; ++p)
                for (int lane = 0; lane < WARP; ++lane) {
                    int firsts[PIECE_VECTORS];
                    const int vectors = piece_vectors(warp_first, p, lane, firsts);
                    Map through = lane_prefix[warp][p][lane];
                    float state = apply(through, warp_start_state);
                    for (int j = 0; j < vectors; ++j)
                        for (int v = 0; v < VEC; ++v) {
                            const int step = firsts[j] + v;
                            if (step >= steps.valid) continue;
                            if (PROTOCOL_WARP && RUN == 1) {
                                through = compose(steps.map(step), through);
                                state = apply(through, warp_start_state);
                            } else {
                                state = apply(steps.map(step), state);
                            }
                            steps.store(step, state);
                        }
                }
        }
    };
    run_launch<DEPTH, LANES, SEGMENT, CHUNKS_FIRST>(a, b, out, h0, layout, TILE, finished_probability, seed, block);
}

}  // namespace

// Launch shapes the tests use: 0 and 1 are the sm_90 short shape (VEC 4 and 1), 5 its long shape
// before P42 (where the steps are held does not change the arithmetic, so register_items has no
// twin); 2 and 3 are small tiles (512 steps) with look-back depths 2 and 4, so short inputs span
// many tiles; 4 has tiny tiles (64 steps, segments of 2048), so short inputs span many segments and
// the look-back over segments crosses windows. 6 and 7 are the seed's one-level look-backs (one
// step per thread, segments of one tile) walked serially and by a warp, on 64-step tiles; 8 and 9
// the same on the 256-step tiles of the lookback_serial and lookback_warp tuning entries. 10 is the
// sm_90 large shape before P161, which has a protocol warp; 11 has one on small scalar tiles (lanes
// whose steps run past the sequence's end in the middle of a chunk). 12 is the sm_90 long tile before
// runs, which has a protocol warp too. 13 is 10 with the one-level look-back over tiles (P48). 14 is the
// sm_90 batch shape, whose tickets take chunk c of every sequence first; 15 the same order on tiny
// tiles, so short batches span many segments; 16 the batch tile in sequence order (sm_90's many);
// 17 the short tile chunks first (sm_90's short_batch). 18 is 13 with tickets chunks first (sm_90's
// large shape from P130 to P161), 19 is 12 with them (sm_90's long_batch before runs, P133). 20-22
// are the long tile with runs of 2, 4 and 8 staged chunks (RUN_CHUNKS), 23 runs of 4 chunks first.
// 24 is sm_90's large and mid_batch shape since P161: the long tile with runs of 2, the one-level
// look-back and tickets chunks first. 25-33 are tiles for short rows (P213, P215): one warp of 4 steps
// (25), 128 threads of 8 and 16 (26, 27), one warp of 8, 12, 16 and 24 (28-31), two of 16 and 24
// (32, 33); 34-38 the tiles for small launches (P217), 4 steps a lane on 64, 256, 512, 1024 and
// 128 threads; 39 rows_3072's 128 x 24 (P216); 40 rows_6144's 256 x 24 (P235); 41 rows_8192's 256 x 32
// (P238); 42 rows_12288's 512 x 24 (P239).
extern "C" int rtscan_mirror_scan(int shape, const float* a, const float* b, float* out, const float* h0,
                                  const rtscan::SeqLayout* layout, double finished_probability,
                                  unsigned long long seed) {
    switch (shape) {
        case 0: mirror_scan<256, 16, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 1: mirror_scan<256, 16, 1, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 2: mirror_scan<64, 8, 4, 2>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 3: mirror_scan<64, 8, 1, 4>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 4: mirror_scan<32, 2, 1, 2>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 5: mirror_scan<384, 44, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 6: mirror_scan<64, 1, 1, 1, 1, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 7: mirror_scan<64, 1, 1, 2, 32, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 8: mirror_scan<256, 1, 1, 1, 1, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 9: mirror_scan<256, 1, 1, 1, 32, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 10: mirror_scan<352, 56, 4, 1, 32, 32, true>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 11: mirror_scan<64, 8, 1, 2, 32, 32, true>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 12: mirror_scan<352, 48, 4, 1, 32, 32, true>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 13: mirror_scan<352, 56, 4, 1, 32, 1, true>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 14:
            mirror_scan<256, 32, 4, 1, 32, 32, false, true>(a, b, out, h0, *layout, finished_probability, seed);
            return 0;
        case 15:
            mirror_scan<32, 2, 1, 2, 32, 32, false, true>(a, b, out, h0, *layout, finished_probability, seed);
            return 0;
        case 16: mirror_scan<256, 32, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 17:
            mirror_scan<256, 16, 4, 1, 32, 32, false, true>(a, b, out, h0, *layout, finished_probability, seed);
            return 0;
        case 18:
            mirror_scan<352, 56, 4, 1, 32, 1, true, true>(a, b, out, h0, *layout, finished_probability, seed);
            return 0;
        case 19:
            mirror_scan<352, 48, 4, 1, 32, 32, true, true>(a, b, out, h0, *layout, finished_probability, seed);
            return 0;
        case 20:
            mirror_scan<352, 48, 4, 1, 32, 32, true, false, 2, 4>(a, b, out, h0, *layout, finished_probability, seed);
            return 0;
        case 21:
            mirror_scan<352, 48, 4, 1, 32, 32, true, false, 4, 4>(a, b, out, h0, *layout, finished_probability, seed);
            return 0;
        case 22:
            mirror_scan<352, 48, 4, 1, 32, 32, true, false, 8, 4>(a, b, out, h0, *layout, finished_probability, seed);
            return 0;
        case 23:
            mirror_scan<352, 48, 4, 1, 32, 32, true, true, 4, 4>(a, b, out, h0, *layout, finished_probability, seed);
            return 0;
        case 24:
            mirror_scan<352, 48, 4, 1, 32, 1, true, true, 2, 4>(a, b, out, h0, *layout, finished_probability, seed);
            return 0;
        case 25: mirror_scan<32, 4, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 26: mirror_scan<128, 8, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 27: mirror_scan<128, 16, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 28: mirror_scan<32, 8, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 29: mirror_scan<32, 12, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 30: mirror_scan<32, 16, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 31: mirror_scan<32, 24, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 32: mirror_scan<64, 16, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 33: mirror_scan<64, 24, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 34: mirror_scan<64, 4, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 35: mirror_scan<256, 4, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 36: mirror_scan<512, 4, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 37: mirror_scan<1024, 4, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 38: mirror_scan<128, 4, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 39: mirror_scan<128, 24, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 40: mirror_scan<256, 24, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 41: mirror_scan<256, 32, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 42: mirror_scan<512, 24, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        default: return 1;
    }
}

// indexing.cuh's staged_vector_slot for runs of `run` chunks (1, 2, 4 or 8; else -1), for the
// test that its layout is a permutation without bank conflicts (tests/test_mirrors.py).
extern "C" int rtscan_mirror_staged_vector_slot(int run, int q) {
    switch (run) {
        case 1: return rtscan::staged_vector_slot<1>(q);
        case 2: return rtscan::staged_vector_slot<2>(q);
        case 4: return rtscan::staged_vector_slot<4>(q);
        case 8: return rtscan::staged_vector_slot<8>(q);
        default: return -1;
    }
}
