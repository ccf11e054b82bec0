"""NVRTC: CUDA C++ from kernels_cu/ straight to CUBIN for one exact sm_XY, with an on-disk cache.

Templates are instantiated through NVRTC name expressions; their lowered (mangled) names are kept
beside the cubin, because a cache hit needs them without running NVRTC again.

Cache entries live in $RTSCAN_CACHE_DIR, else $XDG_CACHE_HOME/rtscan, else ~/.cache/rtscan, in a
subfolder per key schema. The key is a SHA-256 over labelled fields: key schema, rtscan version,
a hash of every file under kernels_cu/, the NVRTC version, the exact option bytes, the arch and the
name expressions. Entries are written to a temporary file and renamed into place; an entry that
is corrupt or unreadable is a miss, and a cache folder that cannot be created or written means
compiling in memory.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .errors import CompileError

KEY_SCHEMA = 1
_ENTRY_MAGIC = b"RTSCAN-CUBIN-1\n"
_ARCH_PATTERN = re.compile(r"^sm_(\d+)(a|f)?$")  # exact SASS targets, e.g. sm_90, sm_90a, sm_100f


def kernels_dir() -> Path:
    """kernels_cu/: inside the installed package, or beside it in a source checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "kernels_cu", here.parent / "kernels_cu"):
        if (candidate / "affine.cuh").is_file():
            return candidate
    raise FileNotFoundError(f"kernels_cu/ not found next to {here}")


@dataclass(frozen=True)
class CompileOptions:
    """What NVRTC is asked to do; `arguments()` gives the exact option strings (part of the key)."""

    arch: str                                  # exact target, e.g. "sm_90"
    std: str = "c++17"
    defines: tuple[tuple[str, str], ...] = ()  # extra -D NAME=VALUE, e.g. test-only perturbations
    line_info: bool = True                     # source lines in SASS for Nsight; no runtime cost

    def __post_init__(self) -> None:
        if not _ARCH_PATTERN.match(self.arch):
            raise ValueError(f"arch must look like 'sm_90', got {self.arch!r}")

    def arguments(self, include_dirs: tuple[str, ...]) -> tuple[str, ...]:
        args = [f"-arch={self.arch}", f"-std={self.std}", "-default-device"]
        if self.line_info:
            args.append("-lineinfo")
        args += [f"-D{name}={value}" for name, value in self.defines]
        args += [f"-I{path}" for path in include_dirs]
        return tuple(args)


@dataclass(frozen=True)
class CompiledModule:
    cubin: bytes
    lowered_names: dict[str, str] = field(hash=False)  # name expression -> mangled symbol
    from_cache: bool = False


def nvrtc_version() -> tuple[int, int]:
    from cuda.bindings import nvrtc

    result = nvrtc.nvrtcVersion()
    _check_nvrtc(result[0], "nvrtcVersion")
    return int(result[1]), int(result[2])


def _check_nvrtc(err, call: str) -> None:
    if int(err) != 0:
        raise CompileError(f"{call} failed: {err!r}", log="", options=(), arch="?")


def _include_dirs() -> tuple[str, ...]:
    dirs = [str(kernels_dir())]
    try:  # CUDA's own headers (cuda_fp16.h and friends), from the nvidia-cuda-runtime wheel
        from cuda.pathfinder import find_nvidia_header_directory

        cuda_include = find_nvidia_header_directory("cudart")
        if cuda_include:
            dirs.append(str(cuda_include))
    except Exception:  # headers are optional while no kernel includes them
        pass
    return tuple(dirs)


def kernels_hash() -> str:
    """SHA-256 over the names and bytes of every file under kernels_cu/ (read each time: a few
    files, hashed once per variant and architecture per process)."""
    root = kernels_dir()
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_dir() -> Path:
    if os.environ.get("RTSCAN_CACHE_DIR"):
        base = Path(os.environ["RTSCAN_CACHE_DIR"])
    elif os.environ.get("XDG_CACHE_HOME"):
        base = Path(os.environ["XDG_CACHE_HOME"]) / "rtscan"
    else:
        base = Path.home() / ".cache" / "rtscan"
    return base / f"v{KEY_SCHEMA}"


def cache_key(source: str, name_expressions: tuple[str, ...], options: tuple[str, ...], arch: str) -> str:
    major, minor = nvrtc_version()
    fields = [
        ("key_schema", str(KEY_SCHEMA)),
        ("rtscan", __version__),
        ("kernels_cu", kernels_hash()),
        ("nvrtc", f"{major}.{minor}"),
        ("options", json.dumps(list(options))),
        ("arch", arch),
        ("source", source),
        ("name_expressions", json.dumps(list(name_expressions))),
    ]
    digest = hashlib.sha256()
    for label, value in fields:
        digest.update(f"{label}={value}\n".encode())
    return digest.hexdigest()


def _entry_checksum(cubin: bytes, lowered_names: dict) -> str:
    """SHA-256 over the cubin and its lowered names: both must come back exactly as written."""
    return hashlib.sha256(cubin + b"\0" + json.dumps(lowered_names, sort_keys=True).encode()).hexdigest()


def _read_entry(path: Path, name_expressions: tuple[str, ...]) -> CompiledModule | None:
    """A well-formed entry, or None for anything missing, unreadable or corrupt."""
    try:
        raw = path.read_bytes()
        if not raw.startswith(_ENTRY_MAGIC):
            return None
        header_line, cubin = raw[len(_ENTRY_MAGIC):].split(b"\n", 1)
        header = json.loads(header_line)
        if not isinstance(header, dict):
            return None
        lowered = header.get("lowered_names")
        if (not isinstance(lowered, dict) or set(lowered) != set(name_expressions)
                or not all(isinstance(name, str) for name in lowered.values())):
            return None
        if header.get("sha256") != _entry_checksum(cubin, lowered):
            return None
        return CompiledModule(cubin=cubin, lowered_names=dict(lowered), from_cache=True)
    except (OSError, ValueError, TypeError):
        return None


def _write_entry(path: Path, module: CompiledModule) -> bool:
    """Atomically store an entry; False (and no exception) when the folder is not writable."""
    header = json.dumps({"sha256": _entry_checksum(module.cubin, module.lowered_names),
                         "lowered_names": module.lowered_names})
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".cubin")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(_ENTRY_MAGIC + header.encode() + b"\n" + module.cubin)
            os.replace(temporary, path)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise
        return True
    except OSError:
        return False


def nvrtc_compile(source: str, name_expressions: tuple[str, ...], options: CompileOptions,
                  text: bytes | None = None) -> CompiledModule:
    """Compile kernels_cu/<source> with NVRTC, no cache involved. `text` replaces the file's text
    (profiling/timeline.py compiles an instrumented copy); includes still resolve in kernels_cu/."""
    from cuda.bindings import nvrtc

    with _nvrtc_program(source, name_expressions, options.arguments(_include_dirs()), options.arch, text) as program:
        err, size = nvrtc.nvrtcGetCUBINSize(program)
        _check_nvrtc(err, "nvrtcGetCUBINSize")
        cubin = bytearray(size)  # NVRTC writes into it: never a bytes object (see _nvrtc_program's log)
        (err,) = nvrtc.nvrtcGetCUBIN(program, cubin)
        _check_nvrtc(err, "nvrtcGetCUBIN")
        return CompiledModule(cubin=bytes(cubin), lowered_names=_lowered_names(program, name_expressions))


def nvrtc_ptx(source: str, name_expressions: tuple[str, ...], options: CompileOptions) -> tuple[str, dict[str, str]]:
    """The PTX NVRTC makes of kernels_cu/<source> for the virtual architecture of options.arch
    (compute_XY), and each name expression's lowered name: what tests read to check the code NVVM
    generated before ptxas (tests/test_vector_stores.py)."""
    from cuda.bindings import nvrtc

    arguments = tuple(a.replace("-arch=sm_", "-arch=compute_", 1) for a in options.arguments(_include_dirs()))
    with _nvrtc_program(source, name_expressions, arguments, options.arch, None) as program:
        err, size = nvrtc.nvrtcGetPTXSize(program)
        _check_nvrtc(err, "nvrtcGetPTXSize")
        ptx = bytearray(size)
        (err,) = nvrtc.nvrtcGetPTX(program, ptx)
        _check_nvrtc(err, "nvrtcGetPTX")
        return bytes(ptx).rstrip(b"\0 ").decode(), _lowered_names(program, name_expressions)


@contextlib.contextmanager
def _nvrtc_program(source: str, name_expressions: tuple[str, ...], arguments: tuple[str, ...], arch: str,
                   text: bytes | None):
    """A compiled NVRTC program of kernels_cu/<source> (or `text`), destroyed on exit; a failed
    compile raises CompileError with NVRTC's log."""
    from cuda.bindings import nvrtc

    if text is None:
        text = (kernels_dir() / source).read_bytes()
    err, program = nvrtc.nvrtcCreateProgram(text, source.encode(), 0, [], [])
    _check_nvrtc(err, "nvrtcCreateProgram")
    try:
        for expression in name_expressions:
            (err,) = nvrtc.nvrtcAddNameExpression(program, expression.encode())
            _check_nvrtc(err, "nvrtcAddNameExpression")
        (compile_err,) = nvrtc.nvrtcCompileProgram(program, len(arguments), [a.encode() for a in arguments])
        err, log_size = nvrtc.nvrtcGetProgramLogSize(program)
        # A fresh, mutable buffer: NVRTC writes into it. An empty log is one byte, and b" " * 1 is
        # CPython's shared b" " itself; writing its NUL there made every b" " in the process, and
        # " ".encode(), a NUL byte, and a later `import torch` failed parsing an operator schema.
        log_buffer = bytearray(log_size)
        nvrtc.nvrtcGetProgramLog(program, log_buffer)
        log = bytes(log_buffer).rstrip(b"\0 ").decode(errors="replace")
        if int(compile_err) != 0:
            raise CompileError(f"NVRTC could not compile {source}: {compile_err!r}", log=log,
                               options=arguments, arch=arch)
        yield program
    finally:
        nvrtc.nvrtcDestroyProgram(program)


def _lowered_names(program, name_expressions: tuple[str, ...]) -> dict[str, str]:
    from cuda.bindings import nvrtc

    lowered = {}
    for expression in name_expressions:
        err, name = nvrtc.nvrtcGetLoweredName(program, expression.encode())
        _check_nvrtc(err, "nvrtcGetLoweredName")
        lowered[expression] = name.decode()
    return lowered


def cache_path(source: str, name_expressions: tuple[str, ...], options: CompileOptions) -> Path:
    """Where the cache entry for these kernels lives (whether or not it exists yet)."""
    key = cache_key(source, name_expressions, options.arguments(_include_dirs()), options.arch)
    return cache_dir() / f"{key}.cubin"


def compile_cached(source: str, name_expressions: tuple[str, ...], options: CompileOptions) -> CompiledModule:
    """The cubin for these kernels: from the cache when a valid entry exists, else from NVRTC."""
    path = cache_path(source, name_expressions, options)
    cached = _read_entry(path, name_expressions)
    if cached is not None:
        return cached
    module = nvrtc_compile(source, name_expressions, options)
    _write_entry(path, module)
    return module
