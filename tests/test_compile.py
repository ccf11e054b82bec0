"""NVRTC compilation (rtscan/_compile.py, rtscan/_kernels.py) with no GPU: every variant for every
supported architecture, CompileError for broken sources, CompileOptions."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys

import pytest

from _profiling import load_script
from rtscan import CompileError, RtscanError, _compile, _kernels
from rtscan.registry import VARIANTS

ARCHES = ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100"]
EM_CUDA = 190  # ELF e_machine of NVIDIA CUDA objects


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_compile_every_variant(name, arch):
    variant = VARIANTS[name]
    modules = _kernels.compile_variants((variant,), arch)
    shapes = _kernels.shapes_for(variant, arch)
    assert list(modules) == [(name, shape) for shape in shapes]  # one program per shape, in order
    assert any(shape.vec == 1 for shape in shapes), "every variant needs a scalar shape for strided input"
    for shape in shapes:
        module = modules[(name, shape)]
        cubin = module.cubin
        assert len(cubin) > 64 and cubin[:4] == b"\x7fELF"
        assert cubin[4] == 2, "a 64-bit ELF"
        assert struct.unpack_from("<H", cubin, 18)[0] == EM_CUDA
        # the target SM is in e_flags (bits 8-15 in current cubins, bits 0-7 in older ones)
        flags = struct.unpack_from("<I", cubin, 48)[0]
        assert int(arch[3:]) in ((flags >> 8) & 0xFF, flags & 0xFF), hex(flags)
        expressions = variant.name_expressions(shape)
        assert len(expressions) == variant.passes, "one kernel per pass"
        assert set(module.lowered_names) == set(expressions)
        for expression in expressions:
            lowered = module.lowered_names[expression]
            assert lowered.startswith("_Z"), lowered  # a mangled C++ symbol
            assert lowered.encode() in cubin, f"{lowered} is not a symbol of the cubin"
        assert len(set(module.lowered_names.values())) == len(expressions)


@pytest.mark.parametrize("arch", ARCHES)
def test_dynamic_shared_memory_starts_on_a_128_byte_boundary(arch):
    """A kernel's dynamic shared memory starts after its static shared variables. 16 bytes short of
    a 128-byte boundary, the tiles' 16-byte copies and reads ran up to 14 % slower on an H200 (P200,
    P201; profiling/NOTES.md, item 121), so every kernel that takes dynamic shared memory declares it
    __align__(128), which rounds its static bytes up to a multiple of 128 (read from its cubin)."""
    kernel_code = load_script("kernel_code")
    sources = set()
    for name, variant in sorted(VARIANTS.items()):
        for (_, shape), module in _kernels.compile_variants((variant,), arch).items():
            if not variant.shared_bytes(shape):
                continue
            static = kernel_code.static_shared_bytes(module.cubin)
            for kernel in module.lowered_names.values():
                assert kernel in static, (name, shape, kernel, sorted(static))  # every such kernel has some
                assert static[kernel] % 128 == 0, (name, shape, static[kernel])
            sources.add(variant.source)
    assert sources >= {"lookback.cu", "blelloch.cu", "columns_lookback.cu"}


def test_compiled_shapes_are_memoised():
    variants = [VARIANTS["lookback_warp"], VARIANTS["blelloch"]]
    first = _kernels.compile_variants(variants, "sm_90")
    again = _kernels.compile_variants(variants, "sm_90")
    assert len(first) == sum(len(_kernels.shapes_for(v, "sm_90")) for v in variants)
    assert all(again[key] is module for key, module in first.items())
    variant, shape = variants[1], _kernels.shapes_for(variants[1], "sm_90")[0]
    assert _kernels.compile_shape(variant, "sm_90", shape) is first[(variant.name, shape)]


def test_a_compile_error_in_one_shape_reaches_the_caller(kernels_copy, monkeypatch):
    """Shapes compile in worker threads; a failure in one is raised by compile_variants."""
    (kernels_copy / "blelloch.cu").write_text(BROKEN)
    monkeypatch.setattr(_kernels, "_modules", {})  # not earlier tests' modules of the real blelloch.cu
    with pytest.raises(CompileError, match="blelloch.cu"):
        _kernels.compile_variants((VARIANTS["blelloch"],), "sm_89")


@pytest.fixture
def kernels_copy(tmp_path, monkeypatch):
    """A private copy of kernels_cu/ that rtscan compiles from; tests may add and edit files."""
    folder = tmp_path / "kernels_cu"
    shutil.copytree(_compile.kernels_dir(), folder)
    monkeypatch.setattr(_compile, "kernels_dir", lambda: folder)
    return folder


BROKEN = """\
#include "affine.cuh"
__global__ void broken_kernel(float* out) {
    out[0] = rtscan::multiply_add(1.0f, 2.0f 3.0f);
}
"""

TINY = """\
#include "affine.cuh"
template <int N>
__global__ void tiny_kernel(float* out) { out[threadIdx.x] = rtscan::multiply_add(float(N), 2.0f, 3.0f); }
"""


def test_broken_source_raises_compile_error_with_log(kernels_copy):
    (kernels_copy / "broken.cu").write_text(BROKEN)
    options = _compile.CompileOptions(arch="sm_90")
    with pytest.raises(CompileError) as info:
        _compile.nvrtc_compile("broken.cu", ("broken_kernel",), options)
    error = info.value
    assert isinstance(error, RtscanError)
    assert "broken.cu" in error.log and "error" in error.log
    assert "expected" in error.log  # NVRTC's words for the missing comma
    assert error.arch == "sm_90"
    assert "-arch=sm_90" in error.options and f"-I{kernels_copy}" in error.options
    assert error.log in str(error) and "sm_90" in str(error)


def test_unknown_name_expression_raises_compile_error(kernels_copy):
    (kernels_copy / "tiny.cu").write_text(TINY)
    with pytest.raises(CompileError) as info:
        _compile.nvrtc_compile("tiny.cu", ("no_such_kernel<1>",), _compile.CompileOptions(arch="sm_80"))
    assert "no_such_kernel" in info.value.log and info.value.arch == "sm_80"


def test_a_compile_leaves_python_s_shared_bytes_alone():
    """NVRTC writes its log into the buffer it is given. An empty log is one byte, and b" " * 1 is
    CPython's one shared b" ": a compile whose log was empty once turned every b" " in the process,
    and " ".encode(), into a NUL, and `import torch` after it failed. Run in a child process, so a
    regression cannot corrupt this one."""
    script = ("from rtscan import _compile, registry\n"
              "v = registry.resolve('columns')\n"
              "_compile.nvrtc_compile(v.source, v.expressions(v.launch_shapes('sm_90', 'float32')),"
              " _compile.CompileOptions(arch='sm_90'))\n"
              "print(b' '[0], ' '.encode()[0], b'x'.join([b'a', b' ']))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                            env=dict(os.environ, RTSCAN_SKIP_IMPORT_COMPILE="1"))
    assert result.stdout.split() == ["32", "32", "b'ax", "'"], result.stdout


def test_tiny_kernel_compiles_with_its_lowered_names(kernels_copy):
    (kernels_copy / "tiny.cu").write_text(TINY)
    module = _compile.nvrtc_compile("tiny.cu", ("tiny_kernel<1>", "tiny_kernel<7>"),
                                    _compile.CompileOptions(arch="sm_86"))
    assert module.cubin[:4] == b"\x7fELF" and not module.from_cache
    assert module.lowered_names["tiny_kernel<1>"] != module.lowered_names["tiny_kernel<7>"]
    assert all(name.encode() in module.cubin for name in module.lowered_names.values())


def test_defines_reach_the_compiler(kernels_copy):
    (kernels_copy / "defined.cu").write_text(
        "#if RTSCAN_TEST_FLAG != 3\n#error the define did not arrive\n#endif\n"
        "__global__ void defined_kernel(float* out) { out[0] = 1.0f; }\n")
    options = _compile.CompileOptions(arch="sm_90", defines=(("RTSCAN_TEST_FLAG", "3"),))
    assert _compile.nvrtc_compile("defined.cu", ("defined_kernel",), options).cubin[:4] == b"\x7fELF"
    with pytest.raises(CompileError, match="the define did not arrive"):
        _compile.nvrtc_compile("defined.cu", ("defined_kernel",), _compile.CompileOptions(arch="sm_90"))


@pytest.mark.parametrize("arch", ["sm90", "compute_90", "90", "sm_", "SM_90", "sm_90 ", "sm_x90", "", "sm_90ab", "sm_9x"])
def test_compile_options_reject_bad_arch(arch):
    with pytest.raises(ValueError, match="arch"):
        _compile.CompileOptions(arch=arch)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a", "sm_100", "sm_120"])
def test_compile_options_accept_arch(arch):
    assert f"-arch={arch}" in _compile.CompileOptions(arch=arch).arguments(())


def test_compile_options_arguments():
    options = _compile.CompileOptions(arch="sm_89", defines=(("A", "1"), ("B", "x")), line_info=False)
    arguments = options.arguments(("/inc/one", "/inc/two"))
    assert arguments[0] == "-arch=sm_89"
    assert "-std=c++17" in arguments and "-lineinfo" not in arguments
    assert "-DA=1" in arguments and "-DB=x" in arguments
    assert arguments[-2:] == ("-I/inc/one", "-I/inc/two")
    assert "-lineinfo" in _compile.CompileOptions(arch="sm_89").arguments(())


def test_kernels_dir_holds_the_sources():
    folder = _compile.kernels_dir()
    assert (folder / "affine.cuh").is_file()
    for variant in VARIANTS.values():
        assert (folder / variant.source).is_file()


def test_nvrtc_version():
    major, minor = _compile.nvrtc_version()
    assert major >= 12 and minor >= 0


def test_perturbed_build_compiles_apart_from_the_normal_one():
    """kernels_cu/perturb.cuh's test-only sleeps compile, and their module is kept apart."""
    variant = VARIANTS["lookback_warp"]
    shape = _kernels.shapes_for(variant, "sm_90")[0]
    normal = _kernels.compile_shape(variant, "sm_90", shape)
    with _kernels.compiled_with((("RTSCAN_PERTURB_SEED", "5"),)):
        perturbed = _kernels.compile_shape(variant, "sm_90", shape)
        in_parallel = _kernels.compile_variants((variant,), "sm_90")[(variant.name, shape)]
    assert perturbed.cubin != normal.cubin
    assert in_parallel is perturbed  # the workers compile with the caller's defines
    assert _kernels.compile_shape(variant, "sm_90", shape) is normal  # the normal build again outside the block
