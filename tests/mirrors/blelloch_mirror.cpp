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
// The look-back that joins the tiles (tile_carry in blelloch.cu) is simulated by
// lookback_protocol.h, against a chosen pattern of which segments have published their end state:
// every pattern must give the same bits (the determinism argument).
//
// tests/test_blelloch_mirror.py compiles this file, checks it against the float64 reference, and
// compiles it again against mutated headers (broken twins), each of which must be caught.
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "blelloch_tree.cuh"
#include "lookback_protocol.h"

namespace {

using namespace rtscan_mirror;

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
void finish_tile(const rtscan::Tree& tree, const TileSteps& steps, float carry) {
    constexpr int LEAVES = rtscan::tree_leaves(BLOCK_THREADS * ITEMS);
    tree.store(rtscan::tree_root(LEAVES), affine_identity<float>());
    for (int level = rtscan::tree_levels(LEAVES) - 1; level >= 0; --level)
        for (int thread = 0; thread < BLOCK_THREADS; ++thread)
            rtscan::down_sweep_level<LEAVES, BLOCK_THREADS>(tree, level, thread);
    for_each_owned_step<BLOCK_THREADS, ITEMS, VEC>([&](int step) {
        if (step < steps.valid) steps.store(step, rtscan::step_state(tree.load(step), steps.map(step), carry));
    });
}

// ---- the kernel --------------------------------------------------------------------------------

template <int BLOCK_THREADS, int ITEMS, int VEC, int DEPTH>
void mirror_scan(const float* a, const float* b, float* out, const float* h0, const rtscan::SeqLayout& layout,
                 double finished_probability, std::uint64_t seed) {
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    TreeMemory memory(rtscan::tree_leaves(TILE));
    run_launch<DEPTH>(a, b, out, h0, layout, TILE, finished_probability, seed,
                      [&](const TileSteps& steps, auto carry_into) {
                          memory.clear();
                          const float carry = carry_into(up_sweep_tile<BLOCK_THREADS, ITEMS, VEC>(memory.tree, steps));
                          finish_tile<BLOCK_THREADS, ITEMS, VEC>(memory.tree, steps, carry);
                      });
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
