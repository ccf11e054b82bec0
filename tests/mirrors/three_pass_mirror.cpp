// CPU mirror of kernels_cu/three_pass.cu, both three-pass forms, and of kernels_cu/columns.cu, the
// third form (its own passes 1 and 3, three_pass.cu's pass 2), pass by pass.
//
// Built by the host C++ compiler against the kernels' own headers: where the passes keep and find
// the pairs, aggregates and carries, and the formulas that hand the carry on (three_pass_index.cuh),
// the affine pair and its combine (affine.cuh), which thread owns which step and the warp scan's
// rounds (indexing.cuh) and the sequence layout (seq_layout.cuh) are the code NVRTC builds into
// the kernels. What this file adds is their execution: the blocks of a pass one after the other
// (they never wait for each other, so any order gives the kernels' bits), a block's threads as
// arrays, and block_scan.cuh's scan in the same association (warp scans as
// lookback_protocol.h simulates them).
//
// The scratch is an array per field of ThreePassScratch, sized as the host sizes it and filled with
// NaN: a pass that reads a word no earlier pass wrote, or a slot outside the arrays, reads NaN, and
// a write outside the arrays is dropped, so a broken twin's index shows as a wrong or NaN output
// instead of touching other memory.
//
// tests/test_three_pass_mirror.py compiles this file, checks it against the float64 reference, and
// compiles it again against mutated headers (broken twins), each of which must be caught.
#include <algorithm>
#include <vector>

#include "columns_index.cuh"
#include "lookback_protocol.h"
#include "three_pass_index.cuh"

namespace {

using namespace rtscan_mirror;

// One array of the scratch (see the file comment).
class ScratchArray {
  public:
    explicit ScratchArray(long long words) : words_(std::size_t(std::max(words, 0LL)), NOT_PUBLISHED) {}
    float read(long long index) const { return inside(index) ? words_[std::size_t(index)] : NOT_PUBLISHED; }
    void write(long long index, float value) {
        if (inside(index)) words_[std::size_t(index)] = value;
    }

  private:
    bool inside(long long index) const { return index >= 0 && index < (long long)words_.size(); }
    std::vector<float> words_;
};

struct Scratch {
    ScratchArray pair_a, pair_b, aggregate_a, aggregate_b, carry;
};

// The step that thread `thread` holds as its chunk c, item v (indexing.cuh, as three_pass.cu's
// load_tile).
template <int ITEMS, int VEC>
int owned_step(int thread, int c, int v) {
    return rtscan::first_step<VEC>(rtscan::warp_span_start<ITEMS>(thread / WARP), c, thread % WARP) + v;
}

// block_scan.cuh's block_exclusive_scan for the whole block: maps[(thread * CHUNKS + c) * VEC + v]
// in, prefix[thread * CHUNKS + c] out, the span's map returned.
template <int BLOCK_THREADS, int CHUNKS, int VEC>
Map block_exclusive_scan(const std::vector<Map>& maps, std::vector<Map>& prefix) {
    constexpr int WARPS = BLOCK_THREADS / WARP;
    prefix.assign(std::size_t(BLOCK_THREADS * CHUNKS), NO_MAP);
    Map warp_totals[WARP];
    for (int warp = 0; warp < WARPS; ++warp) {
        Map running = affine_identity<float>();
        for (int c = 0; c < CHUNKS; ++c) {
            Map lanes[WARP];
            for (int lane = 0; lane < WARP; ++lane) {
                Map lane_map = affine_identity<float>();
                for (int v = 0; v < VEC; ++v)
                    lane_map = compose(maps[std::size_t(((warp * WARP + lane) * CHUNKS + c) * VEC + v)], lane_map);
                lanes[lane] = lane_map;
            }
            warp_inclusive_scan(lanes);
            for (int lane = 0; lane < WARP; ++lane) {
                const Map exclusive = lane == 0 ? affine_identity<float>() : lanes[lane - 1];
                prefix[std::size_t((warp * WARP + lane) * CHUNKS + c)] = compose(exclusive, running);
            }
            running = compose(shuffle(lanes, WARP - 1), running);
        }
        warp_totals[warp] = running;
    }
    Map warps[WARP];
    for (int lane = 0; lane < WARP; ++lane) warps[lane] = lane < WARPS ? warp_totals[lane] : affine_identity<float>();
    warp_inclusive_scan(warps);
    for (int thread = WARP; thread < BLOCK_THREADS; ++thread)
        for (int c = 0; c < CHUNKS; ++c) {
            Map& entry = prefix[std::size_t(thread * CHUNKS + c)];
            entry = compose(entry, shuffle(warps, thread / WARP - 1));
        }
    return shuffle(warps, WARPS - 1);
}

// The steps of one tile, as three_pass.cu's place_tile and TileSteps find them (its grid index
// names the tile through tile_of_ticket; the passes never wait, so the mirror takes tiles in order).
TileSteps place_tile(const float* a, const float* b, float* out, const rtscan::SeqLayout& layout, long long tile,
                     long long tiles_per_seq, int tile_steps) {
    const long long seq = tile / tiles_per_seq;
    const long long chunk = tile - seq * tiles_per_seq;
    long long in_origin, out_origin;
    rtscan::sequence_origins(layout, seq, in_origin, out_origin);
    const long long first = chunk * tile_steps;
    return {a, b, out, in_origin + first * layout.in_time_stride, out_origin + first * layout.out_time_stride,
            layout.in_time_stride, layout.out_time_stride,
            int(std::min<long long>(tile_steps, layout.length - first))};
}

template <int BLOCK_THREADS, int ITEMS, int VEC>
std::vector<Map> load_tile(const TileSteps& steps) {
    std::vector<Map> maps(static_cast<std::size_t>(BLOCK_THREADS * ITEMS));
    for (int thread = 0; thread < BLOCK_THREADS; ++thread)
        for (int c = 0; c < ITEMS / VEC; ++c)
            for (int v = 0; v < VEC; ++v)
                maps[std::size_t((thread * (ITEMS / VEC) + c) * VEC + v)] =
                    steps.map(owned_step<ITEMS, VEC>(thread, c, v));
    return maps;
}

// Pass 1, both forms (scan_tile_from_identity).
template <int BLOCK_THREADS, int ITEMS, int VEC, bool PAIRS>
void scan_tile_from_identity(const TileSteps& steps, long long tile, Scratch& scratch) {
    constexpr int CHUNKS = ITEMS / VEC;
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    const std::vector<Map> maps = load_tile<BLOCK_THREADS, ITEMS, VEC>(steps);
    std::vector<Map> prefix;
    const Map tile_map = block_exclusive_scan<BLOCK_THREADS, CHUNKS, VEC>(maps, prefix);
    scratch.aggregate_a.write(rtscan::aggregate_slot(tile), tile_map.a);
    scratch.aggregate_b.write(rtscan::aggregate_slot(tile), tile_map.b);
    if (!PAIRS) return;
    const long long pairs = rtscan::pair_slot<TILE>(tile);
    for (int thread = 0; thread < BLOCK_THREADS; ++thread)
        for (int c = 0; c < CHUNKS; ++c) {
            Map through = prefix[std::size_t(thread * CHUNKS + c)];
            for (int v = 0; v < VEC; ++v) {
                through = compose(maps[std::size_t((thread * CHUNKS + c) * VEC + v)], through);
                const int step = owned_step<ITEMS, VEC>(thread, c, v);
                if (step < steps.valid) {
                    scratch.pair_a.write(pairs + step, through.a);
                    scratch.pair_b.write(pairs + step, through.b);
                }
            }
        }
}

// Pass 2 (three_pass_carries), one sequence.
template <int BLOCK_THREADS, int ITEMS>
void carries(const float* h0, long long seq, long long tiles_per_seq, Scratch& scratch) {
    constexpr int CHUNK = BLOCK_THREADS * ITEMS;
    const long long first = rtscan::sequence_slots(seq, tiles_per_seq);
    float running = rtscan::first_tile_carry(h0, seq);
    for (long long chunk_start = 0; chunk_start < tiles_per_seq; chunk_start += CHUNK) {
        const int valid = int(std::min<long long>(CHUNK, tiles_per_seq - chunk_start));
        std::vector<Map> maps(static_cast<std::size_t>(CHUNK));
        for (int thread = 0; thread < BLOCK_THREADS; ++thread)
            for (int i = 0; i < ITEMS; ++i) {
                const int k = owned_step<ITEMS, 1>(thread, i, 0);
                const long long slot = first + chunk_start + k;
                maps[std::size_t(thread * ITEMS + i)] =
                    k < valid ? Map{scratch.aggregate_a.read(slot), scratch.aggregate_b.read(slot)}
                              : affine_identity<float>();
            }
        std::vector<Map> before;
        const Map chunk_map = block_exclusive_scan<BLOCK_THREADS, ITEMS, 1>(maps, before);
        for (int thread = 0; thread < BLOCK_THREADS; ++thread)
            for (int i = 0; i < ITEMS; ++i) {
                const int k = owned_step<ITEMS, 1>(thread, i, 0);
                if (k < valid)
                    scratch.carry.write(first + chunk_start + k,
                                        rtscan::carry_after(before[std::size_t(thread * ITEMS + i)], running));
            }
        running = rtscan::carry_after(chunk_map, running);
    }
}

// Pass 3 of three_pass (three_pass_apply_pairs).
template <int BLOCK_THREADS, int ITEMS, int VEC>
void apply_pairs(const TileSteps& steps, long long tile, const Scratch& scratch) {
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    const float carry = scratch.carry.read(rtscan::carry_slot(tile));
    const long long pairs = rtscan::pair_slot<TILE>(tile);
    for (int thread = 0; thread < BLOCK_THREADS; ++thread)
        for (int c = 0; c < ITEMS / VEC; ++c)
            for (int v = 0; v < VEC; ++v) {
                const int step = owned_step<ITEMS, VEC>(thread, c, v);
                if (step >= steps.valid) continue;
                const Map through = {scratch.pair_a.read(pairs + step), scratch.pair_b.read(pairs + step)};
                steps.store(step, rtscan::state_from_pair(through, carry));
            }
}

// Pass 3 of three_pass_reduce (three_pass_rescan).
template <int BLOCK_THREADS, int ITEMS, int VEC>
void rescan(const TileSteps& steps, long long tile, const Scratch& scratch) {
    constexpr int CHUNKS = ITEMS / VEC;
    const std::vector<Map> maps = load_tile<BLOCK_THREADS, ITEMS, VEC>(steps);
    const float carry = scratch.carry.read(rtscan::carry_slot(tile));
    std::vector<Map> prefix;
    block_exclusive_scan<BLOCK_THREADS, CHUNKS, VEC>(maps, prefix);
    for (int thread = 0; thread < BLOCK_THREADS; ++thread)
        for (int c = 0; c < CHUNKS; ++c) {
            float state = rtscan::state_before(prefix[std::size_t(thread * CHUNKS + c)], carry);
            for (int v = 0; v < VEC; ++v) {
                state = apply(maps[std::size_t((thread * CHUNKS + c) * VEC + v)], state);
                const int step = owned_step<ITEMS, VEC>(thread, c, v);
                if (step < steps.valid) steps.store(step, state);
            }
        }
}

// One call: the three launches in order, each over its whole grid.
template <int BLOCK_THREADS, int ITEMS, int VEC, bool PAIRS>
void mirror_scan(const float* a, const float* b, float* out, const float* h0, const rtscan::SeqLayout& layout) {
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    const long long tiles_per_seq = (layout.length + TILE - 1) / TILE;
    const long long num_tiles = tiles_per_seq * layout.num_seqs;
    const long long pair_words = PAIRS ? num_tiles * TILE : 0;
    Scratch scratch = {ScratchArray(pair_words), ScratchArray(pair_words), ScratchArray(num_tiles),
                       ScratchArray(num_tiles), ScratchArray(num_tiles)};
    for (long long tile = 0; tile < num_tiles; ++tile)
        scan_tile_from_identity<BLOCK_THREADS, ITEMS, VEC, PAIRS>(
            place_tile(a, b, out, layout, tile, tiles_per_seq, TILE), tile, scratch);
    for (long long seq = 0; seq < layout.num_seqs; ++seq)
        carries<BLOCK_THREADS, ITEMS>(h0, seq, tiles_per_seq, scratch);
    for (long long tile = 0; tile < num_tiles; ++tile) {
        const TileSteps steps = place_tile(a, b, out, layout, tile, tiles_per_seq, TILE);
        if (PAIRS)
            apply_pairs<BLOCK_THREADS, ITEMS, VEC>(steps, tile, scratch);
        else
            rescan<BLOCK_THREADS, ITEMS, VEC>(steps, tile, scratch);
    }
}

// The columns form (columns.cu): passes 1 and 3 run every block across and along the sequences,
// each thread its sequence's chunk one step at a time, placed by columns_index.cuh; pass 2 is
// three_pass_carries over the chunks' aggregates, CARRY_THREADS x CARRY_ITEMS a round (the shape's
// own, or the wider one of rtscan/tuning.py's columns long shape).
template <int BLOCK_THREADS, int ITEMS, int CARRY_THREADS, int CARRY_ITEMS>
void columns_scan(const float* a, const float* b, float* out, const float* h0, const rtscan::SeqLayout& layout) {
    constexpr int CHUNK = BLOCK_THREADS * ITEMS;
    const long long tiles_per_seq = (layout.length + CHUNK - 1) / CHUNK;
    const long long num_tiles = tiles_per_seq * layout.num_seqs;
    Scratch scratch = {ScratchArray(0), ScratchArray(0), ScratchArray(num_tiles), ScratchArray(num_tiles),
                       ScratchArray(num_tiles)};
    const long long grid = rtscan::column_blocks(layout.num_seqs, BLOCK_THREADS) * tiles_per_seq;
    // Each thread of the grid with a sequence: its tile (seq * tiles_per_seq + chunk) and steps.
    const auto each_thread = [&](auto&& work) {
        for (long long grid_index = 0; grid_index < grid; ++grid_index)
            for (int thread = 0; thread < BLOCK_THREADS; ++thread) {
                const rtscan::ColumnPlace place =
                    rtscan::column_place(grid_index, thread, BLOCK_THREADS, layout.num_seqs);
                if (place.seq >= layout.num_seqs) continue;
                const long long tile = place.seq * tiles_per_seq + place.chunk;
                work(tile, place_tile(a, b, out, layout, tile, tiles_per_seq, CHUNK));
            }
    };
    each_thread([&](long long tile, const TileSteps& steps) {  // pass 1, columns_aggregates
        Map running = affine_identity<float>();
        for (int step = 0; step < steps.valid; ++step) running = compose(steps.map(step), running);
        scratch.aggregate_a.write(rtscan::aggregate_slot(tile), running.a);
        scratch.aggregate_b.write(rtscan::aggregate_slot(tile), running.b);
    });
    for (long long seq = 0; seq < layout.num_seqs; ++seq)
        carries<CARRY_THREADS, CARRY_ITEMS>(h0, seq, tiles_per_seq, scratch);
    each_thread([&](long long tile, const TileSteps& steps) {  // pass 3, columns_rescan
        float state = scratch.carry.read(rtscan::carry_slot(tile));
        for (int step = 0; step < steps.valid; ++step) {
            state = apply(steps.map(step), state);
            steps.store(step, state);
        }
    });
}

}  // namespace

// Launch shapes the tests use, (form: 1 = three_pass, 0 = three_pass_reduce; block threads, items,
// vec; 2 = columns, whose kernels take no vec; then pass 2's block threads and items): 0/10 and
// 1/11 are the tuning table's 256 x 16 on the 16-byte and the scalar path; 2/12/22 have 64-step
// tiles and 64-aggregate chunks in pass 2, so short inputs take pass 2 through many chunks;
// 3/13/23 have three warps (384-step tiles), 4/14/24 two chunks of four steps per lane; 25 and 26
// are the columns form's tuned long and short shapes: 32 x 4 with pass 2 in 256 x 8 (2048
// aggregates a round) and in its own 32 x 4 (128 a round).
#define RTSCAN_THREE_PASS_SHAPES(X)   \
    X(0, 1, 256, 16, 4, 256, 16)      \
    X(1, 1, 256, 16, 1, 256, 16)      \
    X(2, 1, 32, 2, 1, 32, 2)          \
    X(3, 1, 96, 4, 4, 96, 4)          \
    X(4, 1, 64, 8, 4, 64, 8)          \
    X(10, 0, 256, 16, 4, 256, 16)     \
    X(11, 0, 256, 16, 1, 256, 16)     \
    X(12, 0, 32, 2, 1, 32, 2)         \
    X(13, 0, 96, 4, 4, 96, 4)         \
    X(14, 0, 64, 8, 4, 64, 8)         \
    X(20, 2, 256, 16, 1, 256, 16)     \
    X(21, 2, 256, 16, 1, 256, 16)     \
    X(22, 2, 32, 2, 1, 32, 2)         \
    X(23, 2, 96, 4, 1, 96, 4)         \
    X(24, 2, 64, 8, 1, 64, 8)         \
    X(25, 2, 32, 4, 1, 256, 8)        \
    X(26, 2, 32, 4, 1, 32, 4)

// The signature every mirror shares (tests/_mirrors.py); with no look-back, `finished` and `seed`
// change nothing.
extern "C" int rtscan_three_pass_mirror(int shape, const float* a, const float* b, float* out, const float* h0,
                                        const rtscan::SeqLayout* layout, double finished, unsigned long long seed) {
    (void)finished;
    (void)seed;
#define RTSCAN_SCAN_CASE(id, form, threads, items, vec, carry_threads, carry_items) \
    case id:                                                                          \
        if (form == 2)                                                                \
            columns_scan<threads, items, carry_threads, carry_items>(a, b, out, h0, *layout); \
        else                                                                          \
            mirror_scan<threads, items, vec, form == 1>(a, b, out, h0, *layout);      \
        return 0;
    switch (shape) {
        RTSCAN_THREE_PASS_SHAPES(RTSCAN_SCAN_CASE)
        default: return 1;
    }
#undef RTSCAN_SCAN_CASE
}
