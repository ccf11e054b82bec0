// CPU mirror of kernels_cu/columns_lookback.cu and its look-back with one sequence a lane
// (lane_lookback.cuh).
//
// Built by the host C++ compiler against the kernels' own headers: where each tile, lane and step
// is, where a lane's descriptors live and which predecessors a window reads
// (columns_lookback_index.cuh), the affine pair and its combine (affine.cuh) and the sequence
// layout (seq_layout.cuh) are the code NVRTC builds into the kernel. What this file adds is the
// execution: tiles one after the other in ticket order (one schedule the kernel allows), a tile's
// warps and lanes as loops, the descriptors as arrays, and a chosen pattern of which end states the
// look-back sees published, so that the determinism argument can be checked: every pattern must
// give the same bits.
//
// A descriptor not published in this launch, or an entry outside the arrays (which the host sizes
// at one a tile and sequence), reads NaN, and a write outside them is dropped, so a broken twin's index shows as
// a wrong or NaN output instead of touching other memory.
//
// tests/test_columns_lookback_mirror.py compiles this file, checks it against the float64
// reference, and compiles it again against mutated headers (broken twins), each of which must be
// caught.
#include <algorithm>
#include <vector>

#include "columns_lookback_index.cuh"
#include "lookback_protocol.h"

namespace {

using namespace rtscan_mirror;

// The one-level descriptor arrays of tile_state.cuh as columns_lookback uses them, an entry per
// (tile, lane).
class LaneDescriptors {
  public:
    explicit LaneDescriptors(long long entries)
        : aggregate_(std::size_t(entries), NO_MAP), inclusive_(std::size_t(entries), NOT_PUBLISHED),
          aggregated_(std::size_t(entries), 0), finished_(std::size_t(entries), 0) {}

    void publish_aggregate(long long slot, Map aggregate) {
        if (!inside(slot)) return;
        aggregate_[std::size_t(slot)] = aggregated_[std::size_t(slot)] ? NO_MAP : aggregate;  // two writers: poison
        aggregated_[std::size_t(slot)] = 1;
    }
    void publish_inclusive(long long slot, float state, bool visible) {
        if (!inside(slot)) return;
        inclusive_[std::size_t(slot)] = finished_[std::size_t(slot)] ? NOT_PUBLISHED : state;
        finished_[std::size_t(slot)] = visible ? 1 : 2;  // 2: published, not yet seen by the look-back
    }
    bool finished(long long slot) const { return inside(slot) && finished_[std::size_t(slot)] == 1; }
    Map aggregate(long long slot) const { return inside(slot) ? aggregate_[std::size_t(slot)] : NO_MAP; }
    float inclusive(long long slot) const { return finished(slot) ? inclusive_[std::size_t(slot)] : NOT_PUBLISHED; }

  private:
    bool inside(long long slot) const { return slot >= 0 && slot < (long long)aggregate_.size(); }
    std::vector<Map> aggregate_;
    std::vector<float> inclusive_;
    std::vector<char> aggregated_, finished_;
};

// lane_lookback_carry<DEPTH, SEQUENCES> for the lane whose tile entry is `slot`, at `chunk` > 0 of its
// sequence.
template <int DEPTH, int SEQUENCES>
float lane_lookback_carry(const LaneDescriptors& published, long long slot, long long chunk) {
    const auto predecessor = [&](long long w, int k) {
        return rtscan::predecessor_slot<SEQUENCES>(slot, rtscan::lane_lookback_distance<DEPTH>(w, k));
    };
    // A window past the sequence's first chunk, or more windows than chunks before this one, with
    // nothing found: only a broken twin gets there (the kernel would spin forever).
    for (long long window = 0; window < chunk; ++window) {
        if (rtscan::lane_lookback_distance<DEPTH>(window, 0) > chunk) return NOT_PUBLISHED;
        int first_finished = DEPTH;
        for (int k = 0; k < DEPTH && first_finished == DEPTH; ++k) {
            if (rtscan::lane_lookback_distance<DEPTH>(window, k) <= chunk && published.finished(predecessor(window, k)))
                first_finished = k;
        }
        if (first_finished == DEPTH) continue;
        float state = published.inclusive(predecessor(window, first_finished));
        for (int k = first_finished - 1; k >= 0; --k) state = apply(published.aggregate(predecessor(window, k)), state);
        for (long long nearer = window - 1; nearer >= 0; --nearer)
            for (int k = DEPTH - 1; k >= 0; --k) state = apply(published.aggregate(predecessor(nearer, k)), state);
        return state;
    }
    return NOT_PUBLISHED;
}

template <int BLOCK_THREADS, int ITEMS, int DEPTH, int SEQUENCES>
void columns_lookback_scan(const float* a, const float* b, float* out, const float* h0,
                           const rtscan::SeqLayout& layout, double finished_probability, std::uint64_t seed) {
    constexpr int WARPS = BLOCK_THREADS / WARP;
    constexpr int PARTS = WARP / SEQUENCES;
    constexpr int SPANS = WARPS * PARTS;
    constexpr long long STEPS = SPANS * ITEMS;
    std::mt19937_64 random(seed);
    std::bernoulli_distribution seen_now(finished_probability);
    const long long tiles_per_seq = (layout.length + STEPS - 1) / STEPS;
    const long long groups = rtscan::lane_groups<SEQUENCES>(layout.num_seqs);
    const long long num_tiles = tiles_per_seq * groups;
    LaneDescriptors published(num_tiles * SEQUENCES);  // as the host sizes the workspace

    // A thread's steps (the identity past its sequence's end, as the kernel loads them) and the
    // map of its span, by (span, the tile's sequence).
    std::vector<Map> held(std::size_t(SPANS * SEQUENCES * ITEMS));
    std::vector<Map> span_maps(std::size_t(SPANS * SEQUENCES));
    const auto at = [](int span, int column) { return std::size_t(span * SEQUENCES + column); };
    for (long long ticket = 0; ticket < num_tiles; ++ticket) {
        const rtscan::LaneTile tile = rtscan::lane_tile_of_ticket(ticket, groups);
        const bool has_successor = tile.chunk + 1 < tiles_per_seq;
        // Every thread's loads and its span's map.
        for (int warp = 0; warp < WARPS; ++warp) {
            for (int lane = 0; lane < WARP; ++lane) {
                const long long seq = rtscan::lane_sequence<SEQUENCES>(tile, lane);
                const int span = rtscan::lane_span<SEQUENCES>(warp, lane);
                if (seq < 0 || seq >= layout.num_seqs || span < 0 || span >= SPANS) continue;  // the lane idles
                long long in_origin, out_origin;
                rtscan::sequence_origins(layout, seq, in_origin, out_origin);
                const long long first = rtscan::lane_first_step<ITEMS, SPANS>(tile.chunk, span);
                Map running = affine_identity<float>();
                for (int i = 0; i < ITEMS; ++i) {
                    const long long step = first + i;
                    const bool exists = step >= 0 && step < layout.length;
                    const long long offset = in_origin + step * layout.in_time_stride;
                    const Map map = exists ? Map{a[offset], b[offset]} : affine_identity<float>();
                    held[at(span, lane % SEQUENCES) * ITEMS + std::size_t(i)] = map;
                    running = compose(map, running);
                }
                span_maps[at(span, lane % SEQUENCES)] = running;
            }
        }
        // Warp 0: each sequence's aggregate (runs of WARPS spans joined in order), look-back, carry.
        float carries[SEQUENCES];
        for (int column = 0; column < SEQUENCES; ++column) {
            const long long seq = rtscan::lane_sequence<SEQUENCES>(tile, column);
            if (seq < 0 || seq >= layout.num_seqs) continue;
            Map aggregate = affine_identity<float>();
            for (int part = 0; part < PARTS; ++part) {
                Map run = affine_identity<float>();
                for (int w = 0; w < WARPS; ++w) run = compose(span_maps[at(part * WARPS + w, column)], run);
                aggregate = part == 0 ? run : compose(run, aggregate);
            }
            const long long slot = rtscan::lane_slot<SEQUENCES>(tile, tiles_per_seq, column);
            float carry;
            if (tile.chunk == 0) {
                carry = rtscan::lane_first_carry(h0, seq);
            } else {
                if (has_successor) published.publish_aggregate(slot, aggregate);
                carry = lane_lookback_carry<DEPTH, SEQUENCES>(published, slot, tile.chunk);
            }
            // A chunk 0's end state is always seen: the walk stops there at the latest.
            if (has_successor) published.publish_inclusive(slot, apply(aggregate, carry), tile.chunk == 0 || seen_now(random));
            carries[column] = carry;
        }
        // Every thread: the earlier spans' maps applied to the carry, then its steps.
        for (int warp = 0; warp < WARPS; ++warp) {
            for (int lane = 0; lane < WARP; ++lane) {
                const long long seq = rtscan::lane_sequence<SEQUENCES>(tile, lane);
                const int span = rtscan::lane_span<SEQUENCES>(warp, lane);
                if (seq < 0 || seq >= layout.num_seqs || span < 0 || span >= SPANS) continue;
                long long in_origin, out_origin;
                rtscan::sequence_origins(layout, seq, in_origin, out_origin);
                const int column = lane % SEQUENCES;
                float state = carries[column];
                for (int s = 0; s < span; ++s) state = apply(span_maps[at(s, column)], state);
                const long long first = rtscan::lane_first_step<ITEMS, SPANS>(tile.chunk, span);
                for (int i = 0; i < ITEMS; ++i) {
                    const long long step = first + i;
                    if (step < 0 || step >= layout.length) continue;
                    state = apply(held[at(span, column) * ITEMS + std::size_t(i)], state);
                    out[out_origin + step * layout.out_time_stride] = state;
                }
            }
        }
    }
}

}  // namespace

// Launch shapes the tests use (block threads, items, depth, sequences a tile; where a thread's steps
// wait, registers or shared memory, changes no bit): 0 and 1 are the tuning table's sm_90 shapes,
// 512 x 64 at depth 2 and 256 x 32 at depth 1, and 5 and 6 its shapes for 16 and 8 sequences; 2-4
// have chunks of 4, 9 and 5 steps, so short inputs take many chunks and the look-back many windows,
// at depths 1, 3 and 2; 7 and 8 are short chunks of 16 and 8 sequences (spans of 3 and 2 steps).
#define RTSCAN_COLUMNS_LOOKBACK_SHAPES(X) \
    X(0, 512, 64, 2, 32)                  \
    X(1, 256, 32, 1, 32)                  \
    X(2, 64, 2, 1, 32)                    \
    X(3, 96, 3, 3, 32)                    \
    X(4, 32, 5, 2, 32)                    \
    X(5, 512, 64, 2, 16)                  \
    X(6, 256, 64, 2, 8)                   \
    X(7, 64, 3, 2, 16)                    \
    X(8, 96, 2, 1, 8)

// The signature every mirror shares (tests/_mirrors.py): `finished` is the chance that the look-back
// sees a published end state, drawn from `seed`.
extern "C" int rtscan_columns_lookback_mirror(int shape, const float* a, const float* b, float* out, const float* h0,
                                              const rtscan::SeqLayout* layout, double finished,
                                              unsigned long long seed) {
#define RTSCAN_SCAN_CASE(id, threads, items, depth, sequences)                                           \
    case id:                                                                                             \
        columns_lookback_scan<threads, items, depth, sequences>(a, b, out, h0, *layout, finished, seed); \
        return 0;
    switch (shape) {
        RTSCAN_COLUMNS_LOOKBACK_SHAPES(RTSCAN_SCAN_CASE)
        default: return 1;
    }
#undef RTSCAN_SCAN_CASE
}
