"""A hash of each kernel's machine code (its cubin's .text section), as NVRTC builds it here, no GPU
needed: run it on two trees and compare, and a kernel whose hash did not move has the same code,
so a change that claims to leave it alone needs no GPU run to show that it did.

By default every launch shape is compiled as the runtime compiles it, one program a shape;
--whole compiles a variant's shapes as one program (how rtscan compiled them before the
seventeenth session, and how the ptxas spill checks of tests/_mirrors.py once did): ptxas can give
one kernel different code in the two forms (profiling/NOTES.md, item 80).

Usage, from a source checkout:
    PYTHONPATH=. python3 profiling/kernel_code.py [--arch sm_90] [--whole] VARIANT [VARIANT ...]
Each line: variant, kernel (mangled name), bytes of code, the first 16 hex digits of its SHA-256.
"""

from __future__ import annotations

import argparse
import hashlib
import struct
from collections.abc import Iterator


def sections(cubin: bytes) -> Iterator[tuple[str, int, int]]:
    """(name, file offset, size) of each of the ELF's sections; a section that takes no room in the
    file (NOBITS: .nv.shared.*) has a size but no bytes at its offset."""
    section_offset, = struct.unpack_from("<Q", cubin, 0x28)
    entry_size, count, names_index = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, section_offset + i * entry_size) for i in range(count)]
    names_at = headers[names_index][4]
    for name_offset, _, _, _, offset, size, *_ in headers:
        yield cubin[names_at + name_offset:cubin.index(b"\0", names_at + name_offset)].decode(), offset, size


def text_sections(cubin: bytes) -> dict[str, bytes]:
    """The ELF's code sections: {kernel's mangled name: its .text bytes}."""
    return {name[len(".text."):]: cubin[offset:offset + size]
            for name, offset, size in sections(cubin) if name.startswith(".text.")}


def static_shared_bytes(cubin: bytes) -> dict[str, int]:
    """{kernel's mangled name: bytes of its static shared variables}, for the kernels that have
    some: where its dynamic shared memory starts, unless that asks for a coarser alignment."""
    return {name[len(".nv.shared."):]: size for name, _, size in sections(cubin)
            if name.startswith(".nv.shared.") and not name.startswith(".nv.shared.reserved")}


def kernel_code(variant_name: str, arch: str, whole: bool = False) -> dict[str, bytes]:
    """{mangled name: code} of every kernel of the variant's launch shapes for `arch`."""
    from rtscan import _compile, _kernels, registry

    variant = registry.resolve(variant_name)
    if whole:
        shapes = _kernels.shapes_for(variant, arch)
        modules = [_compile.nvrtc_compile(variant.source, variant.expressions(shapes),
                                          _compile.CompileOptions(arch=arch))]
    else:
        modules = list(_kernels.compile_variants((variant,), arch).values())
    code = {}
    for module in modules:
        code.update(text_sections(module.cubin))
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--whole", action="store_true", help="one program a variant, not one a shape")
    args = parser.parse_args(argv)
    for name in args.variants:
        for kernel, code in sorted(kernel_code(name, args.arch, args.whole).items()):
            print(f"{name} {kernel} {len(code)} {hashlib.sha256(code).hexdigest()[:16]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
