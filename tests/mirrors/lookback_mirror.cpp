// CPU mirror of kernels_cu/lookback.cu and the two-level look-back of kernels_cu/tile_state.cuh.
//
// Built by the host C++ compiler against the kernels' own headers: the affine pair and its combine
// function (affine.cuh), the index arithmetic (indexing.cuh) and the sequence layout
// (seq_layout.cuh) are the very code NVRTC builds into the kernel. What this file adds is the
// GPU's execution simulated step for step: lanes, warps and shuffles as arrays, the in-segment
// warp scan of the segment mates' aggregates, and the look-back over segments run against a
// chosen pattern of which segments have published their end state, so that the determinism
// argument can be checked: every pattern must give the same bits.
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

// shfl semantics: a source lane outside the warp is taken modulo the warp size.
Map shuffle(const Map (&lanes)[WARP], int source_lane) {
    return lanes[source_lane & (WARP - 1)];
}

constexpr float NOT_PUBLISHED = std::numeric_limits<float>::quiet_NaN();

// The descriptors of one launch, all sequences, as the workspace holds them: tile aggregates by
// ticket, segment descriptors by segment index. The mirror runs the tiles in ticket order, each to
// completion, which is one schedule the kernel allows. A word not published in this launch is one
// the kernel would wait for forever (or, past the arrays, not have at all); the mirror reads it as
// NaN, so a broken twin that reaches for one fails instead of hanging or crashing.
struct Descriptors {
    std::vector<Map> tile_aggregate;
    std::vector<char> tile_published;
    std::vector<float> segment_inclusive;
    std::vector<Map> segment_aggregate;
    std::vector<char> segment_aggregated;
    std::vector<char> segment_finished;  // its inclusive state is visible to the look-back
    std::vector<int> segment_writers;    // tiles that published into the slot

    explicit Descriptors(long long capacity)
        : tile_aggregate(capacity), tile_published(capacity, 0), segment_inclusive(capacity),
          segment_aggregate(capacity), segment_aggregated(capacity, 0), segment_finished(capacity, 0),
          segment_writers(capacity, 0) {}

    bool segment_in_range(long long entry) const { return entry >= 0 && entry < (long long)segment_aggregated.size(); }

    void publish_tile(long long tile, Map aggregate) {
        tile_aggregate[tile] = aggregate;
        tile_published[tile] = 1;
    }

    // Each slot is written once per launch (the look-back's re-reads rely on it). Two tiles that
    // publish into one slot, as colliding segment indices of two sequences would, race on the
    // GPU; here, where they run one after the other, the second write poisons the slot instead.
    void publish_aggregate(long long segment, Map aggregate) {
        const bool once = ++segment_writers[segment] == 1;
        segment_aggregate[segment] = once ? aggregate : Map{NOT_PUBLISHED, NOT_PUBLISHED};
        segment_aggregated[segment] = 1;
    }
    void publish_inclusive(long long segment, float state, bool visible) {
        segment_inclusive[segment] = segment_writers[segment] == 1 ? state : NOT_PUBLISHED;
        segment_finished[segment] = visible;
    }

    bool aggregated(long long segment) const { return segment_in_range(segment) && segment_aggregated[segment]; }
    bool finished(long long segment) const { return segment_in_range(segment) && segment_finished[segment]; }
    Map aggregate(long long segment) const {
        return aggregated(segment) ? segment_aggregate[segment] : Map{NOT_PUBLISHED, NOT_PUBLISHED};
    }
    float inclusive(long long segment) const { return finished(segment) ? segment_inclusive[segment] : NOT_PUBLISHED; }
};

// The aggregate of the tile at `mate` in its sequence, as segment_prefix reads it for the tile at
// `chunk` (`first_tile` = the ticket of the sequence's tile 0). Only an earlier tile of the same
// segment is one the kernel may wait for; anything else is a broken twin's read.
template <int SEGMENT>
Map mate_aggregate(const Descriptors& published, long long first_tile, long long chunk, long long mate) {
    const bool readable = mate >= 0 && mate < chunk &&
                          rtscan::segment_of<SEGMENT>(mate) == rtscan::segment_of<SEGMENT>(chunk) &&
                          published.tile_published[first_tile + mate];
    return readable ? published.tile_aggregate[first_tile + mate] : Map{NOT_PUBLISHED, NOT_PUBLISHED};
}

struct SegmentPrefix {
    Map before;   // the segment's tiles before this one
    Map through;  // and this one too
};

// segment_prefix: lanes below `position` hold the segment mates' aggregates, lane `position` the
// tile's own map, the rest the identity; one warp scan composes them.
template <int SEGMENT>
SegmentPrefix segment_prefix(const Descriptors& published, long long first_tile, long long chunk, int position,
                             Map own) {
    Map lanes[WARP];
    for (int lane = 0; lane < WARP; ++lane)
        lanes[lane] = lane < position ? mate_aggregate<SEGMENT>(published, first_tile, chunk, chunk - position + lane)
                      : lane == position ? own
                                         : affine_identity<float>();
    warp_inclusive_scan(lanes);
    return {position == 0 ? affine_identity<float>() : shuffle(lanes, position - 1), shuffle(lanes, position)};
}

// The look-back of segment `segment`, at `position` > 0 in its sequence, as lookback_carry<DEPTH,
// LANES> runs it over the segment descriptors (LANES lanes read: 32, or 1 for the serial walk).
template <int DEPTH, int LANES>
float lookback_carry(const Descriptors& published, long long segment, long long position) {
    constexpr int SPAN = LANES * DEPTH;
    for (long long window = 0;; ++window) {
        // Past the sequence's first segment with nothing found: only a broken twin gets here (the
        // kernel would spin forever); NaN makes it fail instead of hang.
        if (rtscan::lookback_distance<DEPTH, LANES>(0, 0, window) > position) return NOT_PUBLISHED;
        // As the kernel's ballots: the lowest lane with a finished segment, at the lowest such depth.
        int first_finished = SPAN;
        for (int d = DEPTH - 1; d >= 0; --d)
            for (int lane = 0; lane < LANES; ++lane) {
                const long long distance = rtscan::lookback_distance<DEPTH, LANES>(lane, d, window);
                if (distance <= position && published.finished(segment - distance)) {
                    first_finished = rtscan::window_position<LANES>(d, lane);
                    break;
                }
            }
        if (first_finished == SPAN) continue;
        const int finished_depth = first_finished / LANES, finished_lane = first_finished % LANES;
        const long long finished =
            segment - rtscan::lookback_distance<DEPTH, LANES>(finished_lane, finished_depth, window);
        float state = published.inclusive(finished);
        for (long long nearer = window; nearer >= 0; --nearer) {
            const int start = nearer == window ? first_finished - 1 : SPAN - 1;
            for (int d = DEPTH - 1; d >= 0; --d) {
                if (rtscan::window_position<LANES>(d, 0) > start) continue;
                for (int source = LANES - 1; source >= 0; --source)
                    if (rtscan::window_position<LANES>(d, source) <= start) {
                        const long long passed = segment - rtscan::lookback_distance<DEPTH, LANES>(source, d, nearer);
                        state = apply(published.aggregate(passed), state);
                    }
            }
        }
        return state;
    }
}

template <int BLOCK_THREADS, int ITEMS, int VEC, int DEPTH, int LANES = WARP, int SEGMENT = rtscan::SEGMENT_TILES>
void mirror_scan(const float* a, const float* b, float* out, const float* h0, const rtscan::SeqLayout& layout,
                 double finished_probability, std::uint64_t seed) {
    constexpr int WARPS = BLOCK_THREADS / WARP;
    constexpr int CHUNKS = ITEMS / VEC;
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    std::mt19937_64 random(seed);
    std::bernoulli_distribution finished_now(finished_probability);
    const long long tiles_per_seq = (layout.length + TILE - 1) / TILE;
    // The host sizes the workspace for at least every tile of the launch, the segments below them.
    Descriptors published(layout.num_seqs * tiles_per_seq);

    for (long long seq = 0; seq < layout.num_seqs; ++seq) {
        long long in_origin, out_origin;
        rtscan::sequence_origins(layout, seq, in_origin, out_origin);
        const long long first_tile = seq * tiles_per_seq;
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

            // The two-level carry, in the kernel's order of publications and reads.
            const int position = rtscan::place_in_segment<SEGMENT>(chunk);
            const long long segment_position = rtscan::segment_of<SEGMENT>(chunk);
            const long long segment = seq * rtscan::segments_per_sequence<SEGMENT>(tiles_per_seq) + segment_position;
            const bool has_successor = chunk + 1 < tiles_per_seq;
            const bool ends_segment = position == SEGMENT - 1;
            // A segment index past the arrays would be a broken twin's write out of bounds: dropped,
            // so its readers see NaN.
            const bool publishes_segment = has_successor && ends_segment && published.segment_in_range(segment);
            if (has_successor && !ends_segment) published.publish_tile(first_tile + chunk, tile_map);
            const SegmentPrefix prefix = segment_prefix<SEGMENT>(published, first_tile, chunk, position, tile_map);
            if (publishes_segment) published.publish_aggregate(segment, prefix.through);
            const float segment_carry = segment_position == 0
                                            ? (h0 != nullptr ? h0[seq] : 0.0f)
                                            : lookback_carry<DEPTH, LANES>(published, segment, segment_position);
            // Segment 0 never looks back, and the look-back counts on finding its end state (the walk
            // ends there at the latest); any other segment may or may not be seen finished yet.
            if (publishes_segment)
                published.publish_inclusive(segment, apply(prefix.through, segment_carry),
                                            segment_position == 0 || finished_now(random));
            const float carry = position == 0 ? segment_carry : apply(prefix.before, segment_carry);

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

// Launch shapes the tests use: 0 and 1 are the sm_90 short shape (VEC 4 and 1), 5 its long shape
// (where the steps are held does not change the arithmetic, so register_items has no twin); 2 and 3
// are small tiles (512 steps) with look-back depths 2 and 4, so short inputs span many tiles; 4
// has tiny tiles (64 steps, segments of 2048), so short inputs span many segments and the
// look-back over segments crosses windows. 6 and 7 are the seed's one-level look-backs (one step
// per thread, segments of one tile) walked serially and by a warp, on 64-step tiles; 8 and 9 the
// same on the 256-step tiles of the lookback_serial and lookback_warp tuning entries.
extern "C" int rtscan_mirror_scan(int shape, const float* a, const float* b, float* out, const float* h0,
                                  const rtscan::SeqLayout* layout, double finished_probability,
                                  unsigned long long seed) {
    switch (shape) {
        case 0: mirror_scan<256, 16, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 1: mirror_scan<256, 16, 1, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 2: mirror_scan<64, 8, 4, 2>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 3: mirror_scan<64, 8, 1, 4>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 4: mirror_scan<32, 2, 1, 2>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 5: mirror_scan<256, 48, 4, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 6: mirror_scan<64, 1, 1, 1, 1, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 7: mirror_scan<64, 1, 1, 2, 32, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 8: mirror_scan<256, 1, 1, 1, 1, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        case 9: mirror_scan<256, 1, 1, 1, 32, 1>(a, b, out, h0, *layout, finished_probability, seed); return 0;
        default: return 1;
    }
}
