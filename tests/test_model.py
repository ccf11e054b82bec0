"""rtscan/model.py: the bytes each variant's passes move and the time they predict."""

from __future__ import annotations

import pytest

from rtscan import model, registry


SINGLE_PASS = [name for name, variant in registry.VARIANTS.items() if variant.passes == 1]
THREE_PASS = [name for name, variant in registry.VARIANTS.items() if variant.passes == 3]


@pytest.mark.parametrize("name", SINGLE_PASS)
@pytest.mark.parametrize("num_seqs,length", [(1, 2**28), (8192, 4096), (3, 1000)])
def test_single_pass_variants_move_each_array_once(name, num_seqs, length):
    variant = registry.resolve(name)
    shape = variant.launch_shape("sm_90", "float32", 4, length)
    passes = model.passes(variant, shape, num_seqs, length, 4)
    assert [p.name for p in passes] == ["scan"]
    assert passes[0].read_bytes == 8 * num_seqs * length and passes[0].written_bytes == 4 * num_seqs * length
    assert passes[0].descriptor_bytes > 0
    if shape.steps_per_sequence >= 4096:  # with tiles of thousands of steps a sequence the
        # look-back's words are noise
        assert passes[0].descriptor_bytes <= 0.05 * passes[0].memory_bytes


def test_every_variant_has_a_model():
    for variant in registry.VARIANTS.values():
        shape = variant.launch_shape("sm_90", "float32", 4, 2**20)
        assert len(model.passes(variant, shape, 1, 2**20, 4)) == variant.passes, variant.name


def bytes_per_element(name, num_seqs, length, vec=4):
    variant = registry.resolve(name)
    shape = variant.launch_shape("sm_90", "float32", vec, length)
    passes = model.passes(variant, shape, num_seqs, length, 4)
    return passes, sum(p.memory_bytes for p in passes) / (num_seqs * length)


@pytest.mark.parametrize("num_seqs,length", [(1, 2**28), (8192, 4096), (3, 1000), (2, 4097)])
@pytest.mark.parametrize("vec", [4, 1])
def test_three_pass_forms_move_28_and_20_bytes_per_float32_step(num_seqs, length, vec):
    """three_pass: 8 read + 8 written (pass 1), 8 read + 4 written (pass 3); three_pass_reduce:
    8 read (pass 1), 8 read + 4 written (pass 3); pass 2 moves only per-tile words."""
    pairs, pairs_bytes = bytes_per_element("three_pass", num_seqs, length, vec)
    reduce, reduce_bytes = bytes_per_element("three_pass_reduce", num_seqs, length, vec)
    assert pairs_bytes == 28 and reduce_bytes == 20 and pairs_bytes != reduce_bytes
    elements = num_seqs * length
    assert [(p.read_bytes, p.written_bytes) for p in pairs] == [(8 * elements, 8 * elements), (0, 0),
                                                                (8 * elements, 4 * elements)]
    assert [(p.read_bytes, p.written_bytes) for p in reduce] == [(8 * elements, 0), (0, 0),
                                                                 (8 * elements, 4 * elements)]


@pytest.mark.parametrize("name", THREE_PASS)
def test_three_pass_passes_are_the_launches(name):
    """One Pass per launch, named as its NVTX range; the per-tile words (aggregates, carries) are
    a few per tile: noise beside the steps' bytes at any tile of thousands of steps."""
    variant = registry.resolve(name)
    passes, _ = bytes_per_element(name, 1, 2**28)
    assert [p.name for p in passes] == [k.range_name for k in variant.pass_kernels]
    tiles = -(-2**28 // variant.launch_shape("sm_90", "float32", 4, 2**28).tile)  # the last tile may be part-full
    assert passes[1].descriptor_bytes == 3 * 4 * tiles + 4  # aggregates read, carries written, h0
    assert sum(p.descriptor_bytes for p in passes) <= 0.01 * sum(p.memory_bytes for p in passes)


def test_three_pass_prediction_is_its_bytes_over_the_copy():
    """At the copy's bandwidth, three_pass takes 28/12 and three_pass_reduce 20/12 of a copy of
    the minimal 12 bytes a step."""
    for name, ratio in (("three_pass", 28 / 12), ("three_pass_reduce", 20 / 12)):
        passes, _ = bytes_per_element(name, 1, 2**24)
        assert model.predicted_us(passes, copy_bytes=12 * 2**24, copy_us=100.0) == pytest.approx(100.0 * ratio)


def test_a_single_tile_per_sequence_needs_only_the_ticket():
    variant = registry.resolve("auto")
    shape = variant.launch_shape("sm_90", "float32", 4, 100)
    assert model.passes(variant, shape, 5, 100, 4)[0].descriptor_bytes == 5 * model.WORD


def test_a_row_head_counts_the_tiles_it_adds_not_bytes():
    """Rows scanned from their lines (P196): a row of one short tile with a head of 3 takes two
    tiles, so the look-back's words appear; its bytes stay the caller's steps."""
    variant = registry.resolve("auto")
    shape = variant.launch_shape("sm_90", "float32", 4, 100)
    one, two = (model.passes(variant, shape, 5, shape.tile, 4, head)[0] for head in (0, 3))
    assert one.descriptor_bytes == 5 * model.WORD < two.descriptor_bytes
    assert (one.read_bytes, one.written_bytes) == (two.read_bytes, two.written_bytes)
    assert (one.read_bytes, one.written_bytes) == (40 * shape.tile, 20 * shape.tile)


def test_prediction_scales_the_copy_by_bytes():
    passes = [model.Pass("scan", 800, 400, 0)]
    assert model.predicted_us(passes, copy_bytes=1200, copy_us=10.0) == pytest.approx(10.0)
    assert model.predicted_us(passes, copy_bytes=600, copy_us=10.0) == pytest.approx(20.0)


def test_bench_accepts_model_without_a_gpu(capsys):
    from rtscan import __main__, gpu_available

    if gpu_available():
        pytest.skip("a GPU is present: the bench would run")
    assert __main__.main(["bench", "--model", "--max-log2", "16"]) == 2
    assert "needs an NVIDIA GPU" in capsys.readouterr().err
