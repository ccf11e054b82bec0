// The cross-warp rounds of the Hillis-Steele (Kogge-Stone) tile scan of hillis_steele.cu, shared
// with its CPU mirror: NVRTC builds this file into the kernel and the host C++ compiler into
// tests/mirrors/hillis_steele_mirror.cpp, so the mirror runs these very formulas.
// tests/test_hillis_steele_mirror.py mutates this file and must see every mutation fail.
//
// After the in-warp rounds (warp_inclusive_scan, warp_scan.cuh) every warp holds its running map:
// the composition of its own 32 steps. The cross-warp rounds double the reach exactly as the
// in-warp rounds do, one warp standing in for one lane: in round r a warp that has a partner
// 2^r warps before it composes that partner's running map before its own. After
// cross_warp_rounds(WARPS) rounds warp w's running map covers warps 0..w of the tile, and the
// running map of warps_before(w) covers everything before warp w.
//
// Running maps cross warps through two shared-memory buffers. Round r reads one and writes the
// other, so a warp that is still reading its partner's map can never see a warp that has already
// moved on overwrite it: a single barrier at the end of each round then orders both what that
// round wrote before the next round's reads and what it read before the next round's writes.
#pragma once

#include "affine.cuh"
#include "indexing.cuh"

namespace rtscan {

// How far back a warp reaches in round `round`: 1, 2, 4, ... warps.
RTSCAN_HOST_DEVICE constexpr int round_distance(int round) {
    return 1 << round;
}

// Rounds until the reach covers every earlier warp of a tile of `warps` warps: ceil(log2(warps)).
// Any number of warps works; when it is not a power of two the last round is partly idle.
RTSCAN_HOST_DEVICE constexpr int cross_warp_rounds(int warps) {
    int rounds = 0;
    while (round_distance(rounds) < warps) ++rounds;
    return rounds;
}

// Whether `warp` has a partner in round `round`: the same test as a lane in the in-warp rounds.
RTSCAN_HOST_DEVICE bool round_takes(int warp, int round) {
    return scan_round_takes(unsigned(warp), unsigned(round_distance(round)));
}

// The warp whose running map `warp` composes in round `round`, when round_takes says it has one.
RTSCAN_HOST_DEVICE int round_partner(int warp, int round) {
    return warp - round_distance(round);
}

// A warp's running map after a round: the partner's warps come earlier in the tile, so they act
// first.
RTSCAN_HOST_DEVICE Affine<float> round_combine(Affine<float> own, Affine<float> partner) {
    return compose(own, partner);
}

// The buffer round `round` reads the partners' maps from, and the one it writes its own maps
// into. Round 0 reads what the warps wrote after their in-warp rounds, and the maps after the
// last round are read from round_source_buffer(cross_warp_rounds(warps)).
RTSCAN_HOST_DEVICE int round_source_buffer(int round) {
    return round & 1;
}

RTSCAN_HOST_DEVICE int round_target_buffer(int round) {
    return (round + 1) & 1;
}

// The warp (for `warp` > 0) whose final running map covers exactly the warps before `warp`.
RTSCAN_HOST_DEVICE int warps_before(int warp) {
    return warp - 1;
}

}  // namespace rtscan
