"""The on-disk cubin cache of rtscan/_compile.py: hits and misses, corrupt entries, unwritable
folders, what the key covers, where the cache lives, and atomic writes. No GPU needed."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import threading
from pathlib import Path

import pytest

from rtscan import _compile, _kernels
from rtscan.registry import resolve

TINY = """\
#include "affine.cuh"
template <int N>
__global__ void tiny_kernel(float* out) { out[threadIdx.x] = rtscan::multiply_add(float(N), 2.0f, 3.0f); }
"""
TINY_EXPRESSIONS = ("tiny_kernel<1>", "tiny_kernel<2>")
ENTRY_NAME = re.compile(r"^[0-9a-f]{64}\.cubin$")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder of this test's own."""
    monkeypatch.setenv("RTSCAN_CACHE_DIR", str(tmp_path / "cache"))
    return _compile.cache_dir()


@pytest.fixture
def kernels_copy(tmp_path, monkeypatch):
    folder = tmp_path / "kernels_cu"
    shutil.copytree(_compile.kernels_dir(), folder)
    (folder / "tiny.cu").write_text(TINY)
    monkeypatch.setattr(_compile, "kernels_dir", lambda: folder)
    return folder


def tiny(arch="sm_90", **options):
    return _compile.compile_cached("tiny.cu", TINY_EXPRESSIONS, _compile.CompileOptions(arch=arch, **options))


def entries(folder: Path) -> list[Path]:
    return sorted(folder.iterdir()) if folder.is_dir() else []


def no_nvrtc(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("NVRTC ran although the cache held a valid entry")

    monkeypatch.setattr(_compile, "nvrtc_compile", refuse)


def test_miss_then_hit_for_the_real_kernels(cache, monkeypatch):
    variant = resolve("auto")
    expressions = tuple(variant.name_expression(s) for s in _kernels.shapes_for(variant, "sm_90"))
    options = _compile.CompileOptions(arch="sm_90")
    first = _compile.compile_cached(variant.source, expressions, options)
    assert not first.from_cache
    assert [p.name for p in entries(cache) if ENTRY_NAME.match(p.name)] and len(entries(cache)) == 1
    no_nvrtc(monkeypatch)
    second = _compile.compile_cached(variant.source, expressions, options)
    assert second.from_cache
    assert second.cubin == first.cubin
    assert second.lowered_names == first.lowered_names and set(second.lowered_names) == set(expressions)


def test_entry_format(cache, kernels_copy):
    module = tiny()
    (path,) = entries(cache)
    raw = path.read_bytes()
    assert raw.startswith(_compile._ENTRY_MAGIC)
    header, cubin = raw[len(_compile._ENTRY_MAGIC):].split(b"\n", 1)
    assert cubin == module.cubin
    header = json.loads(header)
    assert header["lowered_names"] == module.lowered_names
    names = json.dumps(module.lowered_names, sort_keys=True).encode()
    assert header["sha256"] == hashlib.sha256(cubin + b"\0" + names).hexdigest()


def _truncate_half(raw: bytes) -> bytes:
    return raw[: len(raw) // 2]


def _flip_last_cubin_byte(raw: bytes) -> bytes:
    return raw[:-1] + bytes([raw[-1] ^ 0x01])


def _flip_middle_cubin_byte(raw: bytes) -> bytes:
    middle = len(raw) - 1000
    return raw[:middle] + bytes([raw[middle] ^ 0x80]) + raw[middle + 1:]


def _replace_header(new_header: bytes):
    def damage(raw: bytes) -> bytes:
        header, cubin = raw[len(_compile._ENTRY_MAGIC):].split(b"\n", 1)
        return _compile._ENTRY_MAGIC + new_header + b"\n" + cubin
    return damage


def _edit_header(edit):
    def damage(raw: bytes) -> bytes:
        header, cubin = raw[len(_compile._ENTRY_MAGIC):].split(b"\n", 1)
        fields = json.loads(header)
        edit(fields)
        return _compile._ENTRY_MAGIC + json.dumps(fields).encode() + b"\n" + cubin
    return damage


CORRUPTIONS = {
    "empty": lambda raw: b"",
    "truncated_half": _truncate_half,
    "truncated_in_header": lambda raw: raw[: len(_compile._ENTRY_MAGIC) + 10],
    "truncated_one_byte": lambda raw: raw[:-1],
    "flipped_last_cubin_byte": _flip_last_cubin_byte,
    "flipped_cubin_byte": _flip_middle_cubin_byte,
    "bad_magic": lambda raw: b"X" + raw[1:],
    "garbage_header": _replace_header(b"{this is not json"),
    "binary_garbage": lambda raw: os.urandom(len(raw)),
    "garbage_after_magic": lambda raw: _compile._ENTRY_MAGIC + os.urandom(200),
    "header_a_list": _replace_header(b"[1, 2, 3]"),
    "header_a_number": _replace_header(b"42"),
    "wrong_sha": _edit_header(lambda f: f.update(sha256="0" * 64)),
    "no_sha": _edit_header(lambda f: f.pop("sha256")),
    "lowered_names_missing_one": _edit_header(lambda f: f["lowered_names"].pop(TINY_EXPRESSIONS[0])),
    "lowered_names_not_a_dict": _edit_header(lambda f: f.update(lowered_names=["x", "y"])),
    "no_lowered_names": _edit_header(lambda f: f.pop("lowered_names")),
    "lowered_names_not_strings": _edit_header(lambda f: f.update(lowered_names={e: 7 for e in TINY_EXPRESSIONS})),
    "lowered_name_altered": _edit_header(
        lambda f: f["lowered_names"].update({TINY_EXPRESSIONS[0]: f["lowered_names"][TINY_EXPRESSIONS[0]] + "x"})),
    "appended_bytes": lambda raw: raw + b"\0\0\0\0",
}


# Known rtscan bugs: _read_entry catches no AttributeError (a JSON header that is not an object
# crashes it), and it trusts the lowered names without checking them (the sha256 covers only the
# cubin), so a damaged name is a "hit" that fails later in cuModuleGetFunction.
@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_corrupt_entry_is_a_miss_and_is_rewritten(cache, kernels_copy, monkeypatch, corruption):
    original = tiny()
    (path,) = entries(cache)
    good = path.read_bytes()
    path.write_bytes(CORRUPTIONS[corruption](good))
    assert path.read_bytes() != good

    again = tiny()
    assert not again.from_cache
    assert again.cubin == original.cubin and again.lowered_names == original.lowered_names
    assert entries(cache) == [path] and path.read_bytes() == good  # rewritten whole, no temp files

    no_nvrtc(monkeypatch)
    assert tiny().from_cache


def test_entry_path_is_a_folder(cache, kernels_copy):
    original = tiny()
    (path,) = entries(cache)
    path.unlink()
    (path / "inside").mkdir(parents=True)
    again = tiny()  # unreadable, and cannot be replaced: compiled in memory
    assert not again.from_cache and again.cubin == original.cubin
    assert entries(cache) == [path] and path.is_dir()  # and no temporary file left behind


def test_unreadable_entry_is_a_miss(cache, kernels_copy):
    if os.geteuid() == 0:
        pytest.skip("root reads files whatever their mode")
    tiny()
    (path,) = entries(cache)
    path.chmod(0)
    try:
        assert not tiny().from_cache
    finally:
        path.chmod(0o644)


def test_cache_folder_cannot_be_created(tmp_path, monkeypatch, kernels_copy):
    # a regular file where a folder of the path should be: mkdir fails even for root
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("RTSCAN_CACHE_DIR", str(blocker / "sub"))
    first = tiny()
    assert not first.from_cache and first.cubin[:4] == b"\x7fELF"
    assert set(first.lowered_names) == set(TINY_EXPRESSIONS)
    assert not tiny().from_cache  # nothing could be stored
    assert blocker.read_text() == "not a folder"


def test_read_only_cache_folder(cache, kernels_copy):
    if os.geteuid() == 0:
        pytest.skip("root writes into mode 0o555 folders; test_cache_folder_cannot_be_created covers this")
    cache.mkdir(parents=True)
    cache.chmod(0o555)
    try:
        assert not tiny().from_cache
        assert not tiny().from_cache
        assert entries(cache) == []
    finally:
        cache.chmod(0o755)


def test_no_temporary_files_after_writes(cache, kernels_copy):
    for arch in ("sm_80", "sm_90"):
        tiny(arch)
        tiny(arch, line_info=False)
    names = [p.name for p in entries(cache)]
    assert len(names) == 4 and all(ENTRY_NAME.match(n) for n in names), names


def test_concurrent_compiles_of_one_key(cache, kernels_copy):
    results, errors = [], []

    def work():
        try:
            results.append(tiny())
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len({r.cubin for r in results}) == 1
    (path,) = entries(cache)
    assert ENTRY_NAME.match(path.name) and tiny().from_cache


def test_different_options_are_different_entries(cache, kernels_copy, monkeypatch):
    plain = tiny()
    defined = tiny(defines=(("RTSCAN_TEST_FLAG", "1"),))
    other_arch = tiny("sm_80")
    assert not defined.from_cache and not other_arch.from_cache
    assert len(entries(cache)) == 3
    assert other_arch.cubin != plain.cubin


# ---- the key ------------------------------------------------------------------------------------

def key(source="tiny.cu", expressions=TINY_EXPRESSIONS, options=None, arch="sm_90"):
    options = options if options is not None else _compile.CompileOptions(arch=arch).arguments(("/inc",))
    return _compile.cache_key(source, expressions, options, arch)


def test_key_is_stable(kernels_copy):
    assert key() == key()
    assert re.fullmatch(r"[0-9a-f]{64}", key())


@pytest.mark.parametrize("change", [
    {"arch": "sm_80"},
    {"options": _compile.CompileOptions(arch="sm_90", defines=(("X", "1"),)).arguments(("/inc",))},
    {"options": _compile.CompileOptions(arch="sm_90", line_info=False).arguments(("/inc",))},
    {"options": _compile.CompileOptions(arch="sm_90").arguments(("/other",))},
    {"options": _compile.CompileOptions(arch="sm_90", std="c++20").arguments(("/inc",))},
    {"expressions": ("tiny_kernel<1>",)},
    {"expressions": ("tiny_kernel<2>", "tiny_kernel<1>")},
    {"expressions": ("tiny_kernel<1>", "tiny_kernel<3>")},
    {"source": "lookback.cu"},
])
def test_key_changes_with_each_field(kernels_copy, change):
    assert key(**change) != key()


def test_key_changes_with_kernel_sources(kernels_copy):
    before = key()
    with open(kernels_copy / "affine.cuh", "a") as handle:
        handle.write("\n// an edit\n")
    edited = key()
    assert edited != before
    (kernels_copy / "new_header.cuh").write_text("#pragma once\n")  # a new file counts too
    assert key() != edited


def test_key_changes_with_nvrtc_and_rtscan_versions(kernels_copy, monkeypatch):
    before = key()
    real_nvrtc_version = _compile.nvrtc_version
    monkeypatch.setattr(_compile, "nvrtc_version", lambda: (99, 1))
    assert key() != before
    monkeypatch.setattr(_compile, "nvrtc_version", real_nvrtc_version)
    assert key() == before
    monkeypatch.setattr(_compile, "__version__", "999.0")
    assert key() != before


def test_edited_kernel_source_is_a_miss(cache, kernels_copy):
    first = tiny()
    assert tiny().from_cache
    (kernels_copy / "tiny.cu").write_text(TINY.replace("2.0f", "5.0f"))
    edited = tiny()
    assert not edited.from_cache and edited.cubin != first.cubin
    assert len(entries(cache)) == 2


# ---- where the cache lives ------------------------------------------------------------------------

def test_cache_dir_honours_rtscan_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RTSCAN_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _compile.cache_dir() == tmp_path / "mine" / f"v{_compile.KEY_SCHEMA}"


@pytest.mark.parametrize("rtscan_value", [None, ""])
def test_cache_dir_falls_back_to_xdg(tmp_path, monkeypatch, rtscan_value):
    if rtscan_value is None:
        monkeypatch.delenv("RTSCAN_CACHE_DIR", raising=False)
    else:
        monkeypatch.setenv("RTSCAN_CACHE_DIR", rtscan_value)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _compile.cache_dir() == tmp_path / "xdg" / "rtscan" / f"v{_compile.KEY_SCHEMA}"


def test_cache_dir_falls_back_to_home(tmp_path, monkeypatch):
    monkeypatch.delenv("RTSCAN_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _compile.cache_dir() == tmp_path / "home" / ".cache" / "rtscan" / f"v{_compile.KEY_SCHEMA}"


def test_compile_writes_where_cache_dir_says(tmp_path, monkeypatch, kernels_copy):
    monkeypatch.delenv("RTSCAN_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    tiny()
    folder = tmp_path / "xdg" / "rtscan" / f"v{_compile.KEY_SCHEMA}"
    assert len(entries(folder)) == 1 and ENTRY_NAME.match(entries(folder)[0].name)


def test_session_uses_a_temporary_cache():
    """conftest.py points the whole session at a temporary folder, never ~/.cache."""
    assert os.environ["RTSCAN_CACHE_DIR"]
    assert Path.home() / ".cache" not in _compile.cache_dir().parents
