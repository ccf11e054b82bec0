// CPU mirror of kernels_cu/blelloch.cu: the Blelloch tree scan of each tile, joined by the
// two-level look-back of kernels_cu/tile_state.cuh.
//
// Built by the host C++ compiler against the kernels' own headers: the affine pair and its combine
// function (affine.cuh), which thread owns which step and the look-back's index arithmetic
// (indexing.cuh), the sequence layout (seq_layout.cuh) and the tree (blelloch_tree.cuh: its slots
// and padding, the nodes of each level, the combine at each node, the final step) are the very
// code NVRTC builds into the kernel. What this file adds is the GPU's execution: the block's
// threads run one after the other within a level, which gives the kernel's bits because the nodes
// of a level are disjoint (blelloch_tree.cuh). The tree lives in a buffer laid out as the kernel's
// shared memory, with NaN in every slot nobody has written and in guard words around it, so that a
// broken twin that reads outside the tree or a slot it never filled produces NaN instead of
// touching other memory.
//
// The look-back over segments, and the in-segment scan of the segment mates' aggregates, are
// simulated as tests/mirrors/lookback_mirror.cpp and hillis_steele_mirror.cpp simulate them (the
// same protocol, tile_carry in blelloch.cu): against a chosen pattern of which segments have
// published their end state, and every pattern must give the same bits (the determinism argument).
//
// tests/test_blelloch_mirror.py compiles this file, checks it against the float64 reference, and
// compiles it again against mutated headers (broken twins), each of which must be caught.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "affine.cuh"
#include "blelloch_tree.cuh"
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
// for it forever) or a tree slot not written in this tile (it would read garbage). Reading NaN
// makes a broken twin that reaches for one fail instead of hanging or crashing.
constexpr float NOT_PUBLISHED = std::numeric_limits<float>::quiet_NaN();
constexpr Map NO_MAP = {NOT_PUBLISHED, NOT_PUBLISHED};

// ---- the tile ----------------------------------------------------------------------------------

// The block's dynamic shared memory: the tree's two arrays as the kernel lays them out (tree_in),
// between guards of `leaves` words on either side.
class TreeMemory {
  public:
    explicit TreeMemory(int leaves)
        : guard_(leaves), words_(2 * std::size_t(rtscan::tree_slots(leaves)) + 2 * std::size_t(leaves)) {
        clear();
        tree = rtscan::tree_in(words_.data() + guard_, leaves);
    }
    // Shared memory holds whatever the block before left there: nothing a tile reads may come
    // from a slot it did not write.
    void clear() { std::fill(words_.begin(), words_.end(), NOT_PUBLISHED); }

    rtscan::Tree tree;

  private:
    int guard_;
    std::vector<float> words_;
};

// The steps of one sequence as one tile sees them: its maps, identity past the sequence's end.
struct TileSteps {
    const float* a;
    const float* b;
    long long first_offset;  // element offset of the tile's step 0
    long long time_stride;
    int valid;               // steps of the tile that exist

    Map map(int step) const {
        const long long offset = first_offset + step * time_stride;
        return step < valid ? Map{a[offset], b[offset]} : affine_identity<float>();
    }
};

// f(step) for each step of the tile, in the kernel's assignment: lane `lane` of warp `warp` owns
// VEC consecutive steps of each chunk of its warp's span (indexing.cuh).
template <int BLOCK_THREADS, int ITEMS, int VEC, typename F>
void for_each_owned_step(F f) {
    for (int thread = 0; thread < BLOCK_THREADS; ++thread) {
        const int warp = thread / WARP, lane = thread % WARP;
        const int warp_first = rtscan::warp_span_start<ITEMS>(warp);
        for (int c = 0; c < ITEMS / VEC; ++c)
            for (int v = 0; v < VEC; ++v) f(rtscan::first_step<VEC>(warp_first, c, lane) + v);
    }
}

// The in-tile part of the kernel up to the root: leaves, then the up-sweep. Returns the tile's map.
template <int BLOCK_THREADS, int ITEMS, int VEC>
Map up_sweep_tile(const rtscan::Tree& tree, const TileSteps& steps) {
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    constexpr int LEAVES = rtscan::tree_leaves(TILE);
    for_each_owned_step<BLOCK_THREADS, ITEMS, VEC>([&](int step) { tree.store(step, steps.map(step)); });
    for (int thread = 0; thread < BLOCK_THREADS; ++thread)
        for (int leaf = TILE + thread; leaf < LEAVES; leaf += BLOCK_THREADS) tree.store(leaf, affine_identity<float>());
    // Every thread runs every level: the levels that the kernel gives to warp 0 alone have no
    // node for the other threads.
    for (int level = 0; level < rtscan::tree_levels(LEAVES); ++level)
        for (int thread = 0; thread < BLOCK_THREADS; ++thread)
            rtscan::up_sweep_level<LEAVES, BLOCK_THREADS>(tree, level, thread);
    return tree.load(rtscan::tree_root(LEAVES));
}

// The rest: the down-sweep from the identity at the root, then each existing step's state.
template <int BLOCK_THREADS, int ITEMS, int VEC>
void finish_tile(const rtscan::Tree& tree, const TileSteps& steps, float carry, float* out_tile,
                 long long out_time_stride) {
    constexpr int LEAVES = rtscan::tree_leaves(BLOCK_THREADS * ITEMS);
    tree.store(rtscan::tree_root(LEAVES), affine_identity<float>());
    for (int level = rtscan::tree_levels(LEAVES) - 1; level >= 0; --level)
        for (int thread = 0; thread < BLOCK_THREADS; ++thread)
            rtscan::down_sweep_level<LEAVES, BLOCK_THREADS>(tree, level, thread);
    for_each_owned_step<BLOCK_THREADS, ITEMS, VEC>([&](int step) {
        if (step < steps.valid)
            out_tile[step * out_time_stride] = rtscan::step_state(tree.load(step), steps.map(step), carry);
    });
}

// ---- the look-back -----------------------------------------------------------------------------

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
    // rely on it). Two tiles that publish into one slot race on the GPU; here, where they run one
    // after the other, the second one's words poison the slot instead.
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
    const auto predecessor = [&](int lane, int d, long long window) {
        return segment - rtscan::lookback_distance<DEPTH>(lane, d, window);
    };
    for (long long window = 0;; ++window) {
        // Past the sequence's first segment with nothing found: only a broken twin gets here (the
        // kernel would spin forever).
        if (rtscan::lookback_distance<DEPTH>(0, 0, window) > position) return NOT_PUBLISHED;
        // As the kernel's ballots: the lowest lane with a finished segment, at the lowest such depth.
        int first_finished = SPAN;
        for (int d = DEPTH - 1; d >= 0; --d)
            for (int lane = 0; lane < WARP; ++lane)
                if (rtscan::lookback_distance<DEPTH>(lane, d, window) <= position &&
                    published.finished(predecessor(lane, d, window))) {
                    first_finished = rtscan::window_position(d, lane);
                    break;
                }
        if (first_finished == SPAN) continue;
        // Fold forward from the finished segment, nearest last, one fma per segment passed over.
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
// kernel's publications and reads in its order (tile_carry in blelloch.cu); `visible` says whether
// a segment's published end state is seen by later look-backs.
template <int DEPTH, typename Visible>
float tile_carry(Descriptors& published, const float* h0, long long seq, long long chunk, long long tiles_per_seq,
                 Map tile_map, Visible visible) {
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
                                    segment_position == 0 || visible());
    return position == 0 ? segment_carry : apply(prefix.before, segment_carry);
}

// ---- the kernel --------------------------------------------------------------------------------

template <int BLOCK_THREADS, int ITEMS, int VEC, int DEPTH>
void mirror_scan(const float* a, const float* b, float* out, const float* h0, const rtscan::SeqLayout& layout,
                 double finished_probability, std::uint64_t seed) {
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    std::mt19937_64 random(seed);
    std::bernoulli_distribution finished_now(finished_probability);
    const auto visible = [&] { return finished_now(random); };
    const long long tiles_per_seq = (layout.length + TILE - 1) / TILE;
    // The host sizes the workspace for at least every tile of the launch, the segments below them.
    Descriptors published(layout.num_seqs * tiles_per_seq);
    TreeMemory memory(rtscan::tree_leaves(TILE));

    for (long long seq = 0; seq < layout.num_seqs; ++seq) {
        long long in_origin, out_origin;
        rtscan::sequence_origins(layout, seq, in_origin, out_origin);
        for (long long chunk = 0; chunk < tiles_per_seq; ++chunk) {
            const long long tile_first = chunk * TILE;
            const TileSteps steps = {a, b, in_origin + tile_first * layout.in_time_stride, layout.in_time_stride,
                                     int(std::min<long long>(TILE, layout.length - tile_first))};
            memory.clear();
            const Map tile_map = up_sweep_tile<BLOCK_THREADS, ITEMS, VEC>(memory.tree, steps);
            const float carry = tile_carry<DEPTH>(published, h0, seq, chunk, tiles_per_seq, tile_map, visible);
            finish_tile<BLOCK_THREADS, ITEMS, VEC>(memory.tree, steps, carry,
                                                   out + out_origin + tile_first * layout.out_time_stride,
                                                   layout.out_time_stride);
        }
    }
}

// ---- bank conflicts ---------------------------------------------------------------------------

// Shared-memory wavefronts one warp-wide access of 4-byte words needs: the most distinct words
// that fall into one of the 32 banks (lanes reading one word share it).
int access_wavefronts(const std::vector<int>& words) {
    std::map<int, std::set<int>> banks;
    for (int word : words) banks[((word % WARP) + WARP) % WARP].insert(word);
    std::size_t most = 0;
    for (const auto& bank : banks) most = std::max(most, bank.second.size());
    return int(most);
}

// The worst access of the kernel's tree, in wavefronts (1 = conflict-free): each warp's leaf
// stores and reads (one per chunk and step of the chunk) and, at every level and turn, the reads
// of the left and right children, where the writes go too. Only the multipliers' array is
// counted; the offsets' array is the same pattern shifted by whole words.
template <int BLOCK_THREADS, int ITEMS, int VEC>
int worst_wavefronts() {
    constexpr int LEAVES = rtscan::tree_leaves(BLOCK_THREADS * ITEMS);
    int worst = 0;
    for (int warp = 0; warp < BLOCK_THREADS / WARP; ++warp) {
        const int warp_first = rtscan::warp_span_start<ITEMS>(warp);
        for (int c = 0; c < ITEMS / VEC; ++c)
            for (int v = 0; v < VEC; ++v) {
                std::vector<int> words;
                for (int lane = 0; lane < WARP; ++lane)
                    words.push_back(rtscan::tree_slot(rtscan::first_step<VEC>(warp_first, c, lane) + v));
                worst = std::max(worst, access_wavefronts(words));
            }
    }
    for (int level = 0; level < rtscan::tree_levels(LEAVES); ++level) {
        const int nodes = rtscan::sweep_nodes(LEAVES, level);
        for (int round = 0; round < rtscan::sweep_rounds<BLOCK_THREADS>(nodes); ++round)
            for (int warp = 0; warp < BLOCK_THREADS / WARP; ++warp) {
                std::vector<int> left, right;
                for (int lane = 0; lane < WARP; ++lane) {
                    const int node = rtscan::sweep_node<BLOCK_THREADS>(warp * WARP + lane, round);
                    if (node >= nodes) continue;
                    left.push_back(rtscan::tree_slot(rtscan::sweep_left(level, node)));
                    right.push_back(rtscan::tree_slot(rtscan::sweep_right(level, node)));
                }
                worst = std::max({worst, access_wavefronts(left), access_wavefronts(right)});
            }
    }
    return worst;
}

}  // namespace

// Launch shapes the tests use, (block threads, items, vec, look-back depth): 0-2 have the 2048-step
// tiles of the kernel's compile checks, with 16-byte and scalar steps; 3 has 384-step tiles, so
// its tree has 128 identity leaves past the tile and a level's nodes do not divide evenly among
// 96 threads; 4 has tiny tiles (64 steps, segments of 2048), so short inputs span many segments
// and the look-back crosses windows; 5 and 6 have the biggest trees (16384 leaves) and are there
// for the bank-conflict count.
#define RTSCAN_BLELLOCH_SHAPES(X) \
    X(0, 256, 8, 4, 1)            \
    X(1, 256, 8, 1, 1)            \
    X(2, 128, 16, 4, 2)           \
    X(3, 96, 4, 1, 4)             \
    X(4, 32, 2, 1, 2)             \
    X(5, 256, 48, 4, 1)           \
    X(6, 1024, 16, 4, 1)

// `finished`: the probability that the look-back sees a given segment finished.
extern "C" int rtscan_blelloch_mirror(int shape, const float* a, const float* b, float* out, const float* h0,
                                      const rtscan::SeqLayout* layout, double finished, unsigned long long seed) {
#define RTSCAN_SCAN_CASE(id, threads, items, vec, depth) \
    case id: mirror_scan<threads, items, vec, depth>(a, b, out, h0, *layout, finished, seed); return 0;
    switch (shape) {
        RTSCAN_BLELLOCH_SHAPES(RTSCAN_SCAN_CASE)
        default: return 1;
    }
#undef RTSCAN_SCAN_CASE
}

// The worst shared-memory access of the shape's tree in wavefronts (1 = no bank conflict); -1 for
// an unknown shape.
extern "C" int rtscan_blelloch_bank_conflicts(int shape) {
#define RTSCAN_CONFLICT_CASE(id, threads, items, vec, depth) \
    case id: return worst_wavefronts<threads, items, vec>();
    switch (shape) {
        RTSCAN_BLELLOCH_SHAPES(RTSCAN_CONFLICT_CASE)
        default: return -1;
    }
#undef RTSCAN_CONFLICT_CASE
}

// The dynamic shared memory the kernel needs for the shape, in bytes, from the header's formula
// (the test compares it with the one blelloch.cu documents for the host); -1 for an unknown shape.
extern "C" long long rtscan_blelloch_shared_bytes(int shape) {
#define RTSCAN_BYTES_CASE(id, threads, items, vec, depth) \
    case id: return 2LL * (long long)sizeof(float) * rtscan::tree_slots(rtscan::tree_leaves(threads * items));
    switch (shape) {
        RTSCAN_BLELLOCH_SHAPES(RTSCAN_BYTES_CASE)
        default: return -1;
    }
#undef RTSCAN_BYTES_CASE
}
