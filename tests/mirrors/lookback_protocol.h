// The two-level look-back of kernels_cu/tile_state.cuh (tile_carry and what it calls), simulated on
// the CPU for every mirror in this folder, so that the kernels that share the protocol share one
// simulation of it too.
//
// Built by the host C++ compiler against the kernels' own headers: the affine pair and its combine
// (affine.cuh), the warp scan's round test and the look-back's positions (indexing.cuh) and the
// sequence layout (seq_layout.cuh) are the code NVRTC builds into the kernels. What this file adds
// is their execution: a warp as an array of lanes, the workspace's descriptors as arrays, and a
// chosen pattern of which segments the look-back sees finished, so that the determinism argument
// can be checked: every pattern must give the same bits.
//
// A mirror describes its block as a function of one tile and hands it to run_launch, which runs
// the tiles and joins them as the kernels do. The template arguments are those of tile_carry:
// DEPTH (look-back depth), LANES (lanes that walk: 32, or 1 for the serial walk of the seed's
// one-level look-back) and SEGMENT (tiles per segment; 1 is the one-level look-back).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "affine.cuh"
#include "indexing.cuh"
#include "seq_layout.cuh"

namespace rtscan_mirror {

using rtscan::affine_identity;
using rtscan::apply;
using rtscan::compose;
using Map = rtscan::Affine<float>;
constexpr int WARP = rtscan::WARP_SIZE;

// A value the kernel would never have: a descriptor not published in this launch (it would wait
// for it forever) or shared memory not written in this tile (it would read garbage). Reading NaN
// makes a broken twin that reaches for one fail instead of hanging or crashing.
constexpr float NOT_PUBLISHED = std::numeric_limits<float>::quiet_NaN();
constexpr Map NO_MAP = {NOT_PUBLISHED, NOT_PUBLISHED};

// warp_inclusive_scan (warp_scan.cuh): every lane reads its partner's map from before the round,
// as one shuffle instruction does for the whole warp.
inline void warp_inclusive_scan(Map (&lanes)[WARP]) {
    for (int offset = 1; offset < WARP; offset <<= 1) {
        Map before[WARP];
        std::copy(lanes, lanes + WARP, before);
        for (int lane = 0; lane < WARP; ++lane)
            if (rtscan::scan_round_takes(unsigned(lane), unsigned(offset)))
                lanes[lane] = compose(before[lane], before[lane - offset]);
    }
}

// shfl semantics: a source lane outside the warp is taken modulo the warp size.
inline Map shuffle(const Map (&lanes)[WARP], int source_lane) { return lanes[source_lane & (WARP - 1)]; }

// The descriptors of one launch, all sequences, as the workspace holds them: tile aggregates by
// ticket, segment descriptors by segment index. A word not published in this launch reads as NaN
// (see NOT_PUBLISHED), and so does a segment index outside the arrays.
struct Descriptors {
    std::vector<Map> tile_aggregate;
    std::vector<char> tile_published;
    std::vector<float> segment_inclusive;
    std::vector<Map> segment_aggregate;
    std::vector<char> segment_aggregated;
    std::vector<char> segment_finished;  // its inclusive state is visible to the look-back
    std::vector<int> segment_writers;    // tiles that publish into the slot

    explicit Descriptors(long long capacity)
        : tile_aggregate(capacity), tile_published(capacity, 0), segment_inclusive(capacity),
          segment_aggregate(capacity), segment_aggregated(capacity, 0), segment_finished(capacity, 0),
          segment_writers(capacity, 0) {}

    bool segment_in_range(long long entry) const { return entry >= 0 && entry < (long long)segment_aggregated.size(); }

    void publish_tile(long long tile, Map aggregate) {
        tile_aggregate[tile] = aggregate;
        tile_published[tile] = 1;
    }

    // Each slot is written by one tile per launch, which claims it first (the look-back's re-reads
    // rely on it). Two tiles that publish into one slot, as colliding segment indices of two
    // sequences would, race on the GPU; here, where they run one after the other, the second
    // one's words poison the slot instead.
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
// segment is one the kernel may wait for; anything else is a broken twin's read.
template <int SEGMENT>
Map mate_aggregate(const Descriptors& published, long long first_tile, long long chunk, long long mate) {
    const bool readable = mate >= 0 && mate < chunk &&
                          rtscan::segment_of<SEGMENT>(mate) == rtscan::segment_of<SEGMENT>(chunk) &&
                          published.tile_published[first_tile + mate];
    return readable ? published.tile_aggregate[first_tile + mate] : NO_MAP;
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

// lookback_carry<DEPTH, LANES> over the segment descriptors, for segment `segment` at `position`
// > 0 in its sequence.
template <int DEPTH, int LANES>
float lookback_carry(const Descriptors& published, long long segment, long long position) {
    constexpr int SPAN = LANES * DEPTH;
    const auto predecessor = [&](int lane, int d, long long window) {
        return segment - rtscan::lookback_distance<DEPTH, LANES>(lane, d, window);
    };
    for (long long window = 0;; ++window) {
        // Past the sequence's first segment with nothing found: only a broken twin gets here (the
        // kernel would spin forever).
        if (rtscan::lookback_distance<DEPTH, LANES>(0, 0, window) > position) return NOT_PUBLISHED;
        // As the kernel's ballots: the lowest lane with a finished segment, at the lowest such depth.
        int first_finished = SPAN;
        for (int d = DEPTH - 1; d >= 0; --d)
            for (int lane = 0; lane < LANES; ++lane)
                if (rtscan::lookback_distance<DEPTH, LANES>(lane, d, window) <= position &&
                    published.finished(predecessor(lane, d, window))) {
                    first_finished = rtscan::window_position<LANES>(d, lane);
                    break;
                }
        if (first_finished == SPAN) continue;
        // Fold forward from the finished segment, nearest last, one fma per segment passed over.
        float state = published.inclusive(predecessor(first_finished % LANES, first_finished / LANES, window));
        for (long long nearer = window; nearer >= 0; --nearer) {
            const int start = nearer == window ? first_finished - 1 : SPAN - 1;
            for (int d = DEPTH - 1; d >= 0; --d)
                for (int source = LANES - 1; source >= 0; --source)
                    if (rtscan::window_position<LANES>(d, source) <= start)
                        state = apply(published.aggregate(predecessor(source, d, nearer)), state);
        }
        return state;
    }
}

// The carry into the tile at `chunk` of sequence `seq` whose own map is `tile_map`, with the
// kernel's publications and reads in tile_carry's order; `visible()` says whether a segment's
// published end state is seen by later look-backs.
template <int DEPTH, int LANES, int SEGMENT, typename Visible>
float tile_carry(Descriptors& published, const float* h0, long long seq, long long chunk, long long tiles_per_seq,
                 Map tile_map, Visible& visible) {
    const long long first_tile = seq * tiles_per_seq;
    const int position = rtscan::place_in_segment<SEGMENT>(chunk);
    const long long segment_position = rtscan::segment_of<SEGMENT>(chunk);
    const long long segment = seq * rtscan::segments_per_sequence<SEGMENT>(tiles_per_seq) + segment_position;
    const bool has_successor = chunk + 1 < tiles_per_seq;
    const bool ends_segment = position == SEGMENT - 1;
    // A segment index past the arrays would be a broken twin's write out of bounds: dropped, so its
    // readers see NaN.
    const bool publishes_segment = has_successor && ends_segment && published.segment_in_range(segment);
    if (publishes_segment) published.claim(segment);
    if (has_successor && !ends_segment) published.publish_tile(first_tile + chunk, tile_map);
    const SegmentPrefix prefix = segment_prefix<SEGMENT>(published, first_tile, chunk, position, tile_map);
    // As in the kernels, a sequence's first segment publishes no aggregate: a look-back that
    // reaches for it is broken and reads NaN.
    if (publishes_segment && segment_position > 0) published.publish_aggregate(segment, prefix.through);
    const float segment_carry = segment_position == 0
                                    ? (h0 != nullptr ? h0[seq] : 0.0f)
                                    : lookback_carry<DEPTH, LANES>(published, segment, segment_position);
    // Segment 0 never looks back, and the look-back counts on finding its end state (the walk ends
    // there at the latest); any other segment may or may not be seen finished yet.
    if (publishes_segment)
        published.publish_inclusive(segment, apply(prefix.through, segment_carry),
                                    segment_position == 0 || visible());
    return position == 0 ? segment_carry : apply(prefix.before, segment_carry);
}

// The steps of one sequence that one tile covers: their maps (the identity before the sequence's
// start, in its row head, and past its end, as the kernels make them) and where their states go.
struct TileSteps {
    const float* a;
    const float* b;
    float* out;
    long long in_first, out_first;  // element offsets of the tile's step 0
    long long in_stride, out_stride;
    int valid;     // steps of the tile before the sequence's end
    int head = 0;  // steps of the tile before the sequence's start (its row head, in its first tile)

    Map map(int step) const {
        const long long offset = in_first + step * in_stride;
        return head <= step && step < valid ? Map{a[offset], b[offset]} : affine_identity<float>();
    }
    void store(int step, float state) const {
        if (step >= head) out[out_first + step * out_stride] = state;
    }
};

// seq_layout.cuh's head: the kernels scan each row from the boundary at or before its step 0, which
// they find from its address; the mirror takes a and out to start on a boundary, so a row's head is
// its origin's distance past one. The host counts the tiles from the longest head a layout can
// have (rtscan/_scan.py's _row_heads): the boundary less the common divisor of the batch strides
// and the boundary, plus the origin's distance past that divisor.
inline int row_head(const rtscan::SeqLayout& layout, long long in_origin) {
    return layout.head ? int(in_origin & (layout.head - 1)) : 0;
}

inline long long longest_head(const rtscan::SeqLayout& layout) {
    if (!layout.head) return 0;
    long long divisor = layout.head;
    for (int axis = 0; axis < layout.batch_rank; ++axis) divisor = std::gcd(divisor, layout.in_batch_stride[axis]);
    return layout.head - divisor + layout.in_origin % divisor;
}

// One launch over `layout` in tiles of `tile_steps` steps. The tiles run in ticket order (the
// kernels' tile_of_ticket, chunks first with CHUNKS_FIRST), each to completion, which is one schedule the kernels allow: a tile run
// before a word it reads was published would read NaN. `block(steps, carry_into)` is the mirror's
// block: it scans its tile, calls carry_into(tile map) for the state just before the tile
// (tile_carry), and stores the states of the steps that exist. Each segment that publishes its end
// state is seen finished with probability `finished_probability`, drawn from `seed`.
template <int DEPTH, int LANES = WARP, int SEGMENT = rtscan::SEGMENT_TILES, bool CHUNKS_FIRST = false,
          typename Block>
void run_launch(const float* a, const float* b, float* out, const float* h0, const rtscan::SeqLayout& layout,
                int tile_steps, double finished_probability, std::uint64_t seed, Block block) {
    std::mt19937_64 random(seed);
    std::bernoulli_distribution finished_now(finished_probability);
    auto visible = [&] { return finished_now(random); };
    const long long tiles_per_seq = (layout.length + longest_head(layout) + tile_steps - 1) / tile_steps;
    const long long num_tiles = layout.num_seqs * tiles_per_seq;
    // The host sizes the workspace for at least every tile of the launch, the segments below them.
    Descriptors published(num_tiles);

    for (long long ticket = 0; ticket < num_tiles; ++ticket) {
        const long long tile = rtscan::tile_of_ticket(layout, ticket, tiles_per_seq, CHUNKS_FIRST);
        const long long seq = tile / tiles_per_seq, chunk = tile % tiles_per_seq;
        long long in_origin, out_origin;
        rtscan::sequence_origins(layout, seq, in_origin, out_origin);
        const int head = row_head(layout, in_origin);
        const long long tile_first = chunk * tile_steps - head;
        const TileSteps steps = {a,
                                 b,
                                 out,
                                 in_origin + tile_first * layout.in_time_stride,
                                 out_origin + tile_first * layout.out_time_stride,
                                 layout.in_time_stride,
                                 layout.out_time_stride,
                                 int(std::min<long long>(tile_steps, layout.length - tile_first)),
                                 chunk == 0 ? head : 0};
        const auto carry_into = [&](Map tile_map) {
            return tile_carry<DEPTH, LANES, SEGMENT>(published, h0, seq, chunk, tiles_per_seq, tile_map, visible);
        };
        block(steps, carry_into);
    }
}

}  // namespace rtscan_mirror
