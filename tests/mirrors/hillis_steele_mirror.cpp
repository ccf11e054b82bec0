// CPU mirror of kernels_cu/hillis_steele.cu, with the two-level look-back of tile_state.cuh.
//
// Built by the host C++ compiler against the kernels' own headers: the affine pair and its combine
// (affine.cuh), the in-warp round test and the look-back positions (indexing.cuh), the cross-warp
// rounds (hillis_steele_rounds.cuh) and the sequence layout (seq_layout.cuh) are the code NVRTC
// builds into the kernel. This file adds the block's execution simulated step by step: lanes and
// warps as arrays, shuffles that update every lane of a round together, and shared memory as two
// buffers of running maps that the warps read and write between barriers. The look-back that
// joins the tiles (tile_carry in hillis_steele.cu) is simulated by lookback_protocol.h, against a
// chosen pattern of which segments have published their end state: every pattern must give the
// same bits (the determinism argument).
//
// tests/test_hillis_steele_mirror.py compiles this file, checks it against the float64 reference,
// and compiles it again against mutated headers (broken twins), each of which must be caught.
#include <algorithm>

#include "hillis_steele_rounds.cuh"
#include "lookback_protocol.h"

namespace {

using namespace rtscan_mirror;

// ---- the tile scan -------------------------------------------------------------------------

// One buffer of the warps' running maps in shared memory; a warp index outside the tile reads
// as unwritten.
template <int WARPS>
Map read_running(const Map (&buffer)[WARPS], int warp) {
    return warp >= 0 && warp < WARPS ? buffer[warp] : NO_MAP;
}

// The kernel's tile scan. On entry steps[w][l] holds the map of the step of warp w, lane l; on
// return it holds that step's inclusive map within the tile, and the tile's map is returned.
template <int WARPS>
Map scan_tile(Map (&steps)[WARPS][WARP]) {
    constexpr int ROUNDS = rtscan::cross_warp_rounds(WARPS);
    Map running[WARPS];
    for (int warp = 0; warp < WARPS; ++warp) {
        warp_inclusive_scan(steps[warp]);
        running[warp] = steps[warp][WARP - 1];
    }
    Map shared[2][WARPS];
    std::fill(&shared[0][0], &shared[0][0] + 2 * WARPS, NO_MAP);
    for (int warp = 0; warp < WARPS; ++warp) shared[rtscan::round_source_buffer(0)][warp] = running[warp];
    // Between two barriers the warps run in any order. The mirror runs them one at a time, lowest
    // first, each reading its partner and then writing its own map: one order the GPU allows, and
    // one in which a round that read the buffer it writes would see a partner's map of this round.
    for (int round = 0; round < ROUNDS; ++round)
        for (int warp = 0; warp < WARPS; ++warp) {
            if (rtscan::round_takes(warp, round))
                running[warp] = rtscan::round_combine(
                    running[warp],
                    read_running(shared[rtscan::round_source_buffer(round)], rtscan::round_partner(warp, round)));
            shared[rtscan::round_target_buffer(round)][warp] = running[warp];
        }
    const Map(&warps_through)[WARPS] = shared[rtscan::round_source_buffer(ROUNDS)];
    for (int warp = 1; warp < WARPS; ++warp)
        for (int lane = 0; lane < WARP; ++lane)
            steps[warp][lane] = compose(steps[warp][lane], read_running(warps_through, rtscan::warps_before(warp)));
    return read_running(warps_through, WARPS - 1);
}

// ---- the kernel ------------------------------------------------------------------------------

template <int BLOCK_THREADS, int DEPTH>
void mirror_scan(const float* a, const float* b, float* out, const float* h0, const rtscan::SeqLayout& layout,
                 double finished_probability, std::uint64_t seed) {
    constexpr int WARPS = BLOCK_THREADS / WARP;
    // Thread t = 32 w + l owns step t of the tile.
    const auto block = [](const TileSteps& tile, auto carry_into) {
        Map steps[WARPS][WARP];
        for (int step = 0; step < BLOCK_THREADS; ++step) steps[step / WARP][step % WARP] = tile.map(step);
        const float carry = carry_into(scan_tile(steps));
        for (int step = 0; step < tile.valid; ++step) tile.store(step, apply(steps[step / WARP][step % WARP], carry));
    };
    run_launch<DEPTH>(a, b, out, h0, layout, BLOCK_THREADS, finished_probability, seed, block);
}

}  // namespace

// Launch shapes the tests use, as (threads per block = steps per tile, look-back depth): 0-2 the
// kernel's sizes with 32, 16 and 8 warps (5, 4 and 3 cross-warp rounds); 3 and 4 have 3 and 5
// warps, so the last round is partly idle; 5 (2 warps) and 6 (1 warp, no cross-warp round) have
// tiles so small that short inputs span dozens of segments and the look-back crosses windows.
extern "C" int rtscan_hillis_steele_mirror(int shape, const float* a, const float* b, float* out, const float* h0,
                                           const rtscan::SeqLayout* layout, double finished_probability,
                                           unsigned long long seed) {
    switch (shape) {
        case 0: mirror_scan<1024, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 1: mirror_scan<512, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 2: mirror_scan<256, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 3: mirror_scan<96, 2>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 4: mirror_scan<160, 4>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 5: mirror_scan<64, 2>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 6: mirror_scan<32, 4>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        default: return 1;
    }
}
