"""profiling/kernel_code.py without a GPU: one code section a kernel, and the same code from the
same source whichever way it is asked for."""

from __future__ import annotations

import pytest

from _profiling import load_script
from rtscan import _kernels, registry


@pytest.fixture(scope="module")
def kernel_code():
    return load_script("kernel_code")


def test_every_kernel_of_a_variant_has_its_code(kernel_code):
    variant = registry.resolve("blelloch")
    code = kernel_code.kernel_code("blelloch", "sm_90")
    modules = _kernels.compile_variants((variant,), "sm_90").values()
    lowered = {name for module in modules for name in module.lowered_names.values()}
    assert set(code) == lowered and all(len(text) > 0 and len(text) % 16 == 0 for text in code.values())


def test_a_single_shape_variant_has_the_same_code_either_way(kernel_code, capsys):
    """hillis_steele has one launch shape, so one program a shape and one program a variant are
    the same program: the same code. main prints one line a kernel."""
    per_shape = kernel_code.kernel_code("hillis_steele", "sm_90")
    assert per_shape == kernel_code.kernel_code("hillis_steele", "sm_90", whole=True)
    assert kernel_code.main(["hillis_steele"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(per_shape)
