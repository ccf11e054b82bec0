// CPU mirror of kernels_cu/lookback.cu and the look-back of kernels_cu/tile_state.cuh.
//
// Built by the host C++ compiler against the kernels' own headers: the affine pair and its combine
// function (affine.cuh), the index arithmetic (indexing.cuh) and the sequence layout
// (seq_layout.cuh) are the very code NVRTC builds into the kernel. What this file adds is the
// GPU's execution simulated step for step: lanes, warps and shuffles as arrays, and the look-back
// run against a chosen pattern of which predecessors have published their inclusive state, so
// that the determinism argument can be checked: every pattern must give the same bits.
//
// tests/test_mirrors.py compiles this file, checks it against the float64 reference, and
// compiles it again against mutated headers (broken twins), each of which must be caught.
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "affine.cuh"
#include "indexing.cuh"
#include "seq_layout.cuh"

namespace {

using rtscan::Affine;
using rtscan::affine_identity;
using rtscan::apply;
using rtscan::compose;
using Map = Affine<float>;
constexpr int WARP = rtscan::WARP_SIZE;

// A warp's Kogge-Stone inclusive scan, all lanes updated together as the shuffles do.
void warp_inclusive_scan(Map (&lanes)[WARP]) {
    for (int offset = 1; offset < WARP; offset <<= 1) {
        Map before[WARP];
        for (int lane = 0; lane < WARP; ++lane) before[lane] = lanes[lane];
        for (int lane = 0; lane < WARP; ++lane)
            if (rtscan::scan_round_takes(unsigned(lane), unsigned(offset)))
                lanes[lane] = compose(before[lane], before[lane - offset]);
    }
}

Map exclusive_of(const Map (&inclusive)[WARP], int lane) {
    return lane == 0 ? affine_identity<float>() : inclusive[lane - 1];
}

struct Published {
    std::vector<float> inclusive;  // state at the end of each tile of the current sequence
    std::vector<Map> aggregate;    // each tile's own map
    std::vector<char> finished;    // whether its inclusive state is visible to the look-back
};

// The look-back of tile `chunk` (> 0) of one sequence, as lookback_carry<DEPTH> runs it.
template <int DEPTH>
float lookback_carry(const Published& seen, long long chunk) {
    constexpr int SPAN = WARP * DEPTH;
    for (long long window = 0;; ++window) {
        // Past the sequence's first tile with nothing found: only a broken twin gets here (the
        // kernel would spin forever); NaN makes it fail instead of hang.
        if (rtscan::lookback_distance<DEPTH>(0, 0, window) > chunk) return std::numeric_limits<float>::quiet_NaN();
        // As the kernel's ballots: the lowest lane with a finished tile, at the lowest such depth.
        int first_finished = SPAN;
        for (int d = DEPTH - 1; d >= 0; --d)
            for (int lane = 0; lane < WARP; ++lane) {
                const long long distance = rtscan::lookback_distance<DEPTH>(lane, d, window);
                if (distance <= chunk && seen.finished[chunk - distance]) {
                    first_finished = rtscan::window_position(d, lane);
                    break;
                }
            }
        if (first_finished == SPAN) continue;
        const int finished_depth = first_finished / WARP, finished_lane = first_finished % WARP;
        float state = seen.inclusive[chunk - rtscan::lookback_distance<DEPTH>(finished_lane, finished_depth, window)];
        for (long long nearer = window; nearer >= 0; --nearer) {
            const int start = nearer == window ? first_finished - 1 : SPAN - 1;
            for (int d = DEPTH - 1; d >= 0; --d) {
                if (rtscan::window_position(d, 0) > start) continue;
                for (int source = WARP - 1; source >= 0; --source)
                    if (rtscan::window_position(d, source) <= start)
                        state = apply(seen.aggregate[chunk - rtscan::lookback_distance<DEPTH>(source, d, nearer)], state);
            }
        }
        return state;
    }
}

template <int BLOCK_THREADS, int ITEMS, int VEC, int DEPTH>
void mirror_scan(const float* a, const float* b, float* out, const float* h0, const rtscan::SeqLayout& layout,
                 double finished_probability, std::uint64_t seed) {
    constexpr int WARPS = BLOCK_THREADS / WARP;
    constexpr int CHUNKS = ITEMS / VEC;
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    std::mt19937_64 random(seed);
    std::bernoulli_distribution finished_now(finished_probability);
    const long long tiles_per_seq = (layout.length + TILE - 1) / TILE;

    for (long long seq = 0; seq < layout.num_seqs; ++seq) {
        long long in_origin, out_origin;
        rtscan::sequence_origins(layout, seq, in_origin, out_origin);
        Published seen{std::vector<float>(tiles_per_seq), std::vector<Map>(tiles_per_seq),
                       std::vector<char>(tiles_per_seq, 0)};
        for (long long chunk = 0; chunk < tiles_per_seq; ++chunk) {
            const long long tile_first = chunk * TILE;
            const int valid = int(std::min<long long>(TILE, layout.length - tile_first));
            auto step_map = [&](int step) {
                const long long offset = in_origin + (tile_first + step) * layout.in_time_stride;
                return step < valid ? Map{a[offset], b[offset]} : affine_identity<float>();
            };

            Map lane_prefix[WARPS][CHUNKS][WARP];
            Map warp_aggregate[WARP];
            for (int lane = 0; lane < WARP; ++lane) warp_aggregate[lane] = affine_identity<float>();
            for (int warp = 0; warp < WARPS; ++warp) {
                const int warp_first = rtscan::warp_span_start<ITEMS>(warp);
                Map running = affine_identity<float>();
                for (int c = 0; c < CHUNKS; ++c) {
                    Map lanes[WARP];
                    for (int lane = 0; lane < WARP; ++lane) {
                        const int first = rtscan::first_step<VEC>(warp_first, c, lane);
                        Map lane_map = affine_identity<float>();
                        for (int v = 0; v < VEC; ++v) lane_map = compose(step_map(first + v), lane_map);
                        lanes[lane] = lane_map;
                    }
                    warp_inclusive_scan(lanes);
                    for (int lane = 0; lane < WARP; ++lane)
                        lane_prefix[warp][c][lane] = compose(exclusive_of(lanes, lane), running);
                    running = compose(lanes[WARP - 1], running);
                }
                warp_aggregate[warp] = running;
            }
            Map warps_inclusive[WARP];
            for (int lane = 0; lane < WARP; ++lane) warps_inclusive[lane] = warp_aggregate[lane];
            warp_inclusive_scan(warps_inclusive);
            const Map tile_map = warps_inclusive[WARPS - 1];

            const float carry = chunk == 0 ? (h0 != nullptr ? h0[seq] : 0.0f) : lookback_carry<DEPTH>(seen, chunk);
            seen.inclusive[chunk] = apply(tile_map, carry);
            seen.aggregate[chunk] = tile_map;
            // Tile 0 always publishes its state; any other may or may not be seen as finished yet.
            seen.finished[chunk] = chunk == 0 || finished_now(random);

            for (int warp = 0; warp < WARPS; ++warp) {
                const float warp_start_state = apply(exclusive_of(warps_inclusive, warp), carry);
                const int warp_first = rtscan::warp_span_start<ITEMS>(warp);
                for (int c = 0; c < CHUNKS; ++c)
                    for (int lane = 0; lane < WARP; ++lane) {
                        const int first = rtscan::first_step<VEC>(warp_first, c, lane);
                        float state = apply(lane_prefix[warp][c][lane], warp_start_state);
                        for (int v = 0; v < VEC; ++v) {
                            const int step = first + v;
                            if (step >= valid) continue;
                            state = apply(step_map(step), state);
                            out[out_origin + (tile_first + step) * layout.out_time_stride] = state;
                        }
                    }
            }
        }
    }
}

}  // namespace

// Launch shapes the tests use: index 0 and 1 are the sm_90 tuning entry (VEC 4 and 1); 2 and 3
// are small tiles (512 steps) with look-back depths 2 and 4, so short inputs span many tiles.
extern "C" int rtscan_mirror_scan(int shape, const float* a, const float* b, float* out, const float* h0,
                                  const rtscan::SeqLayout* layout, double finished_probability,
                                  unsigned long long seed) {
    switch (shape) {
        case 0: mirror_scan<256, 16, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 1: mirror_scan<256, 16, 1, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 2: mirror_scan<64, 8, 4, 2>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 3: mirror_scan<64, 8, 1, 4>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        default: return 1;
    }
}
