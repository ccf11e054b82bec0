"""rtscan/model.py: the bytes each variant's passes move and the time they predict."""

from __future__ import annotations

import pytest

from rtscan import model, registry


@pytest.mark.parametrize("name", list(registry.VARIANTS))
@pytest.mark.parametrize("num_seqs,length", [(1, 2**28), (8192, 4096), (3, 1000)])
def test_single_pass_variants_move_each_array_once(name, num_seqs, length):
    variant = registry.resolve(name)
    shape = variant.launch_shape("sm_90", "float32", 4, length)
    passes = model.passes(variant, shape, num_seqs, length, 4)
    assert [p.name for p in passes] == ["scan"]
    assert passes[0].read_bytes == 8 * num_seqs * length and passes[0].written_bytes == 4 * num_seqs * length
    assert passes[0].descriptor_bytes > 0
    if shape.tile >= 4096:  # with tiles of thousands of steps the look-back's words are noise
        assert passes[0].descriptor_bytes <= 0.05 * passes[0].memory_bytes


def test_a_single_tile_per_sequence_needs_only_the_ticket():
    variant = registry.resolve("auto")
    shape = variant.launch_shape("sm_90", "float32", 4, 100)
    assert model.passes(variant, shape, 5, 100, 4)[0].descriptor_bytes == 5 * model.WORD


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
