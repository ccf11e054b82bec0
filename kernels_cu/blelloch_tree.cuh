// The balanced tree of blelloch.cu's in-tile scan, shared with its CPU mirror: NVRTC builds this
// file into the kernel and the host C++ compiler into tests/mirrors/blelloch_mirror.cpp, so the
// mirror runs these very formulas. tests/test_blelloch_mirror.py mutates this file and must see
// every mutation fail.
//
// The tree has LEAVES = tree_leaves(TILE) leaves, a power of two: leaf n is tile step n, and
// leaves past the tile (or past the sequence's end) hold the identity map. It lives in place in
// shared memory, one array of multipliers and one of offsets (Tree), as in Blelloch's "Prefix Sums
// and Their Applications" (1990) and the GPU formulation of Harris, Sengupta and Owens (GPU Gems
// 3, ch. 39):
//
//   up-sweep, level 0 .. LEVELS - 1: node k of the level combines the two subtrees of 2^level
//     leaves that end at sweep_left and sweep_right, and leaves the result at sweep_right. The
//     left subtree's steps come first, so it is the map that acts first. Afterwards the root
//     (tree_root) holds the whole tile's map.
//   down-sweep, level LEVELS - 1 .. 0, after the root is set to the identity: a node holds the
//     map of every step of the tile before its subtree. Its left child inherits it; its right
//     child gets it followed by the left subtree's map. Afterwards leaf n holds the exclusive
//     prefix of step n: the composition of steps 0 .. n-1.
//
// Within a level the nodes touch disjoint slots, so any number of threads may run a level at
// once in any order and get the same bits; only consecutive levels must be separated by a
// barrier. The mirror therefore runs a level thread after thread.
#pragma once

#include "affine.cuh"

namespace rtscan {

// The smallest power of two at least `tile`: a balanced tree needs one, and a tile that is not
// one gets identity leaves at its end.
RTSCAN_HOST_DEVICE constexpr int tree_leaves(int tile) {
    int leaves = 1;
    while (leaves < tile) leaves *= 2;
    return leaves;
}

// Levels of the sweeps: log2(leaves).
RTSCAN_HOST_DEVICE constexpr int tree_levels(int leaves) {
    int levels = 0;
    while ((1 << levels) < leaves) ++levels;
    return levels;
}

// Shared memory serves 32 banks of 4-byte words; word w is in bank w % 32. At level l the nodes
// a warp combines lie 2^(l+1) words apart, so without padding every lane of a high level hits
// the same bank. One padding word after each 32 tree slots shifts successive rows by one bank,
// which makes the lower levels and the striped leaf accesses conflict-free but leaves levels
// with a stride of 64 and more 2- to 16-way conflicted; a second word after each 1024 shifts the
// stride's multiples of 1024 too, and with it every level of every tree that fits in shared
// memory is conflict-free (checked up to 32768 leaves; the mirror counts its shapes' conflicts).
// Groups of four leaves are no longer 16-byte aligned, so the tree is accessed a word at a time.
constexpr int TREE_BANK_BITS = 5;

// Where node (leaf index) `node` is kept in each of the tree's two arrays.
RTSCAN_HOST_DEVICE constexpr int tree_slot(int node) {
    return node + (node >> TREE_BANK_BITS) + (node >> (2 * TREE_BANK_BITS));
}

// The length of each of the tree's arrays: one past the last leaf's slot. The launch passes
// 2 * 4 * tree_slots(tree_leaves(BLOCK_THREADS * ITEMS)) bytes of dynamic shared memory.
RTSCAN_HOST_DEVICE constexpr int tree_slots(int leaves) {
    return tree_slot(leaves - 1) + 1;
}

// The root, kept where the last leaf was: the up-sweep leaves the tile's map there.
RTSCAN_HOST_DEVICE constexpr int tree_root(int leaves) {
    return leaves - 1;
}

// Nodes combined at `level`: one per pair of subtrees of 2^level leaves.
RTSCAN_HOST_DEVICE int sweep_nodes(int leaves, int level) {
    return leaves >> (level + 1);
}

// The last leaf of node `node`'s left subtree at `level`, which holds that subtree's map.
RTSCAN_HOST_DEVICE int sweep_left(int level, int node) {
    return ((2 * node + 1) << level) - 1;
}

// The last leaf of its right subtree, where the node itself is kept.
RTSCAN_HOST_DEVICE int sweep_right(int level, int node) {
    return ((2 * node + 2) << level) - 1;
}

// The node `thread` combines in its `round`-th turn at a level (when below sweep_nodes):
// consecutive threads take consecutive nodes, the spacing tree_slot is padded for.
template <int BLOCK_THREADS>
RTSCAN_HOST_DEVICE int sweep_node(int thread, int round) {
    return round * BLOCK_THREADS + thread;
}

// Turns a thread takes at a level: every node of the level is some thread's.
template <int BLOCK_THREADS>
RTSCAN_HOST_DEVICE int sweep_rounds(int nodes) {
    return (nodes + BLOCK_THREADS - 1) / BLOCK_THREADS;
}

// The tree's two arrays, multipliers and offsets, each tree_slots(leaves) long.
struct Tree {
    float* a;
    float* b;

    RTSCAN_HOST_DEVICE Affine<float> load(int node) const {
        const int slot = tree_slot(node);
        return {a[slot], b[slot]};
    }
    RTSCAN_HOST_DEVICE void store(int node, Affine<float> map) const {
        const int slot = tree_slot(node);
        a[slot] = map.a;
        b[slot] = map.b;
    }
};

// The tree in `storage` (2 * tree_slots(leaves) floats): the offsets follow the multipliers.
RTSCAN_HOST_DEVICE Tree tree_in(float* storage, int leaves) {
    return {storage, storage + tree_slots(leaves)};
}

// One node of the up-sweep: the right subtree acts after the left one.
RTSCAN_HOST_DEVICE void up_sweep_node(const Tree& tree, int level, int node) {
    const int left = sweep_left(level, node), right = sweep_right(level, node);
    tree.store(right, compose(tree.load(right), tree.load(left)));
}

// One node of the down-sweep. `before` is what acts before the node's subtree; the left child's
// slot still holds the left subtree's own map from the up-sweep, which acts after `before` and
// before the right subtree.
RTSCAN_HOST_DEVICE void down_sweep_node(const Tree& tree, int level, int node) {
    const int left = sweep_left(level, node), right = sweep_right(level, node);
    const Affine<float> before = tree.load(right);
    const Affine<float> left_map = tree.load(left);
    tree.store(left, before);
    tree.store(right, compose(left_map, before));
}

// One thread's share of a level: its nodes, in turn.
template <int LEAVES, int BLOCK_THREADS>
RTSCAN_HOST_DEVICE void up_sweep_level(const Tree& tree, int level, int thread) {
    const int nodes = sweep_nodes(LEAVES, level);
    for (int round = 0; round < sweep_rounds<BLOCK_THREADS>(nodes); ++round) {
        const int node = sweep_node<BLOCK_THREADS>(thread, round);
        if (node < nodes) up_sweep_node(tree, level, node);
    }
}

template <int LEAVES, int BLOCK_THREADS>
RTSCAN_HOST_DEVICE void down_sweep_level(const Tree& tree, int level, int thread) {
    const int nodes = sweep_nodes(LEAVES, level);
    for (int round = 0; round < sweep_rounds<BLOCK_THREADS>(nodes); ++round) {
        const int node = sweep_node<BLOCK_THREADS>(thread, round);
        if (node < nodes) down_sweep_node(tree, level, node);
    }
}

// The state after a step: its exclusive prefix in the tile takes the tile's carry-in to the
// state just before the step, and then the step's own map acts. Two roundings, in this order.
RTSCAN_HOST_DEVICE float step_state(Affine<float> prefix, Affine<float> own, float carry) {
    return apply(own, apply(prefix, carry));
}

}  // namespace rtscan
