// CPU mirror of kernels_cu/hillis_steele.cu, with the two-level look-back of tile_state.cuh.
//
// Built by the host C++ compiler against the kernels' own headers: the affine pair and its combine
// (affine.cuh), the in-warp round test and the look-back positions (indexing.cuh), the cross-warp
// rounds (hillis_steele_rounds.cuh) and the sequence layout (seq_layout.cuh) are the code NVRTC
// builds into the kernel. This file adds the GPU's execution simulated step by step: lanes and
// warps as arrays, shuffles that update every lane of a round together, shared memory as two
// buffers of running maps that the warps read and write between barriers, and the look-back run
// against a chosen pattern of which segments have published their end state, so that the
// determinism argument can be checked: every pattern must give the same bits.
//
// tests/test_hillis_steele_mirror.py compiles this file, checks it against the float64 reference,
// and compiles it again against mutated headers (broken twins), each of which must be caught.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "affine.cuh"
#include "hillis_steele_rounds.cuh"
#include "indexing.cuh"
#include "seq_layout.cuh"

namespace {

using rtscan::Affine;
using rtscan::affine_identity;
using rtscan::apply;
using rtscan::compose;
using Map = Affine<float>;
constexpr int WARP = rtscan::WARP_SIZE;

// A value the kernel would never have: a descriptor not published in this launch (it would wait
// for it forever) or shared memory not written in this tile (it would read garbage). Reading NaN
// makes a broken twin that reaches for one fail instead of hanging or crashing.
constexpr float NOT_PUBLISHED = std::numeric_limits<float>::quiet_NaN();
constexpr Map NO_MAP = {NOT_PUBLISHED, NOT_PUBLISHED};

// ---- the tile scan -------------------------------------------------------------------------

// warp_inclusive_scan (warp_scan.cuh): every lane reads its partner's map from before the round,
// as one shuffle instruction does for the whole warp.
void warp_inclusive_scan(Map (&lanes)[WARP]) {
    for (int offset = 1; offset < WARP; offset <<= 1) {
        Map before[WARP];
        std::copy(lanes, lanes + WARP, before);
        for (int lane = 0; lane < WARP; ++lane)
            if (rtscan::scan_round_takes(unsigned(lane), unsigned(offset)))
                lanes[lane] = compose(before[lane], before[lane - offset]);
    }
}

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

// ---- the look-back (as tests/mirrors/lookback_mirror.cpp simulates it) ----------------------

// The descriptors of one launch, all sequences, as the workspace holds them: tile aggregates by
// ticket, segment descriptors by segment index. The mirror runs the tiles in ticket order, each to
// completion, which is one schedule the kernel allows.
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

    // Each slot is written by one tile per launch, which claims it first. Two tiles that publish
    // into one slot race on the GPU; here, where they run one after the other, the second one's
    // words poison the slot instead.
    void claim(long long segment) { ++segment_writers[segment]; }
    void publish_aggregate(long long segment, Map aggregate) {
        segment_aggregate[segment] = segment_writers[segment] == 1 ? aggregate : NO_MAP;
        segment_aggregated[segment] = 1;
    }
    void publish_inclusive(long long segment, float state, bool visible) {
        segment_inclusive[segment] = segment_writers[segment] == 1 ? state : NOT_PUBLISHED;
        segment_finished[segment] = visible;
    }

    bool aggregated(long long segment) const { return segment_in_range(segment) && segment_aggregated[segment]; }
    bool finished(long long segment) const { return segment_in_range(segment) && segment_finished[segment]; }
    Map aggregate(long long segment) const { return aggregated(segment) ? segment_aggregate[segment] : NO_MAP; }
    float inclusive(long long segment) const { return finished(segment) ? segment_inclusive[segment] : NOT_PUBLISHED; }
};

// The aggregate of the tile at `mate` in its sequence, as segment_prefix reads it for the tile at
// `chunk` (`first_tile` = the ticket of the sequence's tile 0): only an earlier tile of the same
// segment is one the kernel may wait for.
Map mate_aggregate(const Descriptors& published, long long first_tile, long long chunk, long long mate) {
    const bool readable = mate >= 0 && mate < chunk && rtscan::segment_of(mate) == rtscan::segment_of(chunk) &&
                          published.tile_published[first_tile + mate];
    return readable ? published.tile_aggregate[first_tile + mate] : NO_MAP;
}

struct SegmentPrefix {
    Map before;   // the segment's tiles before this one
    Map through;  // and this one too
};

// segment_prefix: lanes below `position` hold the segment mates' aggregates, lane `position` the
// tile's own map, the rest the identity; one warp scan composes them.
SegmentPrefix segment_prefix(const Descriptors& published, long long first_tile, long long chunk, int position,
                             Map own) {
    Map lanes[WARP];
    for (int lane = 0; lane < WARP; ++lane)
        lanes[lane] = lane < position    ? mate_aggregate(published, first_tile, chunk, chunk - position + lane)
                      : lane == position ? own
                                         : affine_identity<float>();
    warp_inclusive_scan(lanes);
    return {position == 0 ? affine_identity<float>() : lanes[position - 1], lanes[position]};
}

// lookback_carry<DEPTH, WARP_SIZE> over the segment descriptors, for segment `segment` at
// `position` > 0 in its sequence.
template <int DEPTH>
float lookback_carry(const Descriptors& published, long long segment, long long position) {
    constexpr int SPAN = WARP * DEPTH;
    for (long long window = 0;; ++window) {
        // Past the sequence's first segment with nothing found: only a broken twin gets here.
        if (rtscan::lookback_distance<DEPTH>(0, 0, window) > position) return NOT_PUBLISHED;
        // As the kernel's ballots: the lowest lane with a finished segment, at the lowest such depth.
        int first_finished = SPAN;
        for (int d = DEPTH - 1; d >= 0; --d)
            for (int lane = 0; lane < WARP; ++lane) {
                const long long distance = rtscan::lookback_distance<DEPTH>(lane, d, window);
                if (distance <= position && published.finished(segment - distance)) {
                    first_finished = rtscan::window_position(d, lane);
                    break;
                }
            }
        if (first_finished == SPAN) continue;
        // Fold forward from the finished segment, nearest last, one fma per segment passed over.
        const auto predecessor = [&](int lane, int d, long long in_window) {
            return segment - rtscan::lookback_distance<DEPTH>(lane, d, in_window);
        };
        float state = published.inclusive(predecessor(first_finished % WARP, first_finished / WARP, window));
        for (long long nearer = window; nearer >= 0; --nearer) {
            const int start = nearer == window ? first_finished - 1 : SPAN - 1;
            for (int d = DEPTH - 1; d >= 0; --d)
                for (int source = WARP - 1; source >= 0; --source)
                    if (rtscan::window_position(d, source) <= start)
                        state = apply(published.aggregate(predecessor(source, d, nearer)), state);
        }
        return state;
    }
}

// The carry into the tile at `chunk` of sequence `seq` whose own map is `tile_map`, with the
// kernel's publications and reads in its order (tile_carry in hillis_steele.cu).
template <int DEPTH>
float tile_carry(Descriptors& published, const float* h0, long long seq, long long chunk, long long tiles_per_seq,
                 Map tile_map, std::bernoulli_distribution& finished_now, std::mt19937_64& random) {
    const long long first_tile = seq * tiles_per_seq;
    const int position = rtscan::place_in_segment(chunk);
    const long long segment_position = rtscan::segment_of(chunk);
    const long long segment = seq * rtscan::segments_per_sequence(tiles_per_seq) + segment_position;
    const bool has_successor = chunk + 1 < tiles_per_seq;
    const bool ends_segment = position == rtscan::SEGMENT_TILES - 1;
    // A segment index past the arrays would be a broken twin's write out of bounds: dropped, so its
    // readers see NaN.
    const bool publishes_segment = has_successor && ends_segment && published.segment_in_range(segment);
    if (publishes_segment) published.claim(segment);
    if (has_successor && !ends_segment) published.publish_tile(first_tile + chunk, tile_map);
    const SegmentPrefix prefix = segment_prefix(published, first_tile, chunk, position, tile_map);
    if (publishes_segment && segment_position > 0) published.publish_aggregate(segment, prefix.through);
    const float segment_carry = segment_position == 0 ? (h0 != nullptr ? h0[seq] : 0.0f)
                                                      : lookback_carry<DEPTH>(published, segment, segment_position);
    // Segment 0 never looks back, and the look-back counts on finding its end state (the walk ends
    // there at the latest); any other segment may or may not be seen finished yet.
    if (publishes_segment)
        published.publish_inclusive(segment, apply(prefix.through, segment_carry),
                                    segment_position == 0 || finished_now(random));
    return position == 0 ? segment_carry : apply(prefix.before, segment_carry);
}

// ---- the kernel ------------------------------------------------------------------------------

template <int BLOCK_THREADS, int DEPTH>
void mirror_scan(const float* a, const float* b, float* out, const float* h0, const rtscan::SeqLayout& layout,
                 double finished_probability, std::uint64_t seed) {
    constexpr int WARPS = BLOCK_THREADS / WARP;
    constexpr int TILE = BLOCK_THREADS;
    std::mt19937_64 random(seed);
    std::bernoulli_distribution finished_now(finished_probability);
    const long long tiles_per_seq = (layout.length + TILE - 1) / TILE;
    // The host sizes the workspace for at least every tile of the launch, the segments below them.
    Descriptors published(layout.num_seqs * tiles_per_seq);

    for (long long seq = 0; seq < layout.num_seqs; ++seq) {
        long long in_origin, out_origin;
        rtscan::sequence_origins(layout, seq, in_origin, out_origin);
        for (long long chunk = 0; chunk < tiles_per_seq; ++chunk) {
            // Thread t = 32 w + l owns step t of the tile; steps past the end are the identity.
            const long long tile_first = chunk * TILE;
            const auto exists = [&](int step) { return tile_first + step < layout.length; };
            Map steps[WARPS][WARP];
            for (int step = 0; step < TILE; ++step) {
                const long long offset = in_origin + (tile_first + step) * layout.in_time_stride;
                steps[step / WARP][step % WARP] = exists(step) ? Map{a[offset], b[offset]} : affine_identity<float>();
            }
            const Map tile_map = scan_tile(steps);
            const float carry =
                tile_carry<DEPTH>(published, h0, seq, chunk, tiles_per_seq, tile_map, finished_now, random);
            for (int step = 0; step < TILE; ++step)
                if (exists(step))
                    out[out_origin + (tile_first + step) * layout.out_time_stride] =
                        apply(steps[step / WARP][step % WARP], carry);
        }
    }
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
