"""Kernels compiled ahead of time, so that the first search after installing compiles nothing.

Numba compiles a kernel on its first call and caches the machine code on disk, so without this
the first search after an install spends seconds compiling. The kernels a search calls from
Python (the compiled Flash; the Python traversal's node properties and roll-up source; the
batched evaluator of the exhaustive and level searches; KL divergence's sums; the risk models'
suppression; the checker's group-by, ``explore``'s figures, anatomy's buckets and the DP
releases' noise, sums and order statistics) declare explicit signatures (:func:`ahead_of_time`,
beside their definitions); building the package (``setup.py``, :func:`build`) compiles them
with Numba's ahead-of-time compiler (``numba.pycc``) into the extension modules :data:`PARTS`
(two processes compile their halves side by side: one process compiling all of it took 3.5
minutes on the 2-core box), for a portable instruction-set baseline (on x86-64 the psABI level
:data:`X86_BASELINE`, any AVX2 machine; elsewhere the building machine's CPU); and when a
kernel's module is imported its compiled forms are attached to its dispatcher, so that a call
with a declared signature runs them and any other call compiles as before.

The extension is used only where it matches: built from the same kernel sources (a digest of
the packages in :data:`PACKAGES`, which hold every compiled function these kernels call), by
the same Numba, on a CPU with every feature of the baseline.  Otherwise (a source edited
since the build, a CPU without them, no C compiler at build time, ``GPUPPDP_AOT=0`` when
building or running) the kernels compile on first use, and :func:`status` says why.  In a
development install, ``pip install --no-deps -e .`` rebuilds it after a kernel is edited.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import multiprocessing
import os
import platform
import tempfile
from pathlib import Path

__all__ = ["CODE_TYPES", "ahead_of_time", "attached", "attached_forms", "status",
           "source_digest", "build"]

#: the code dtypes of an encoded table (``engine.codes.smallest_int_dtype`` up to int32)
CODE_TYPES = ("int8", "int16", "int32")
#: the modules whose kernels are compiled ahead of time (imported by :func:`build`)
MODULES = ("gpuppdp.kernels.groupby", "gpuppdp.kernels.grouping", "gpuppdp.kernels.segsum",
           "gpuppdp.kernels.subsets",
           "gpuppdp.kernels.histograms", "gpuppdp.kernels.sortedruns", "gpuppdp.engine.metrics",
           "gpuppdp.engine.metric_kl",
           "gpuppdp.engine.solution_space", "gpuppdp.engine.evaluate",
           "gpuppdp.engine.prior_bound",
           "gpuppdp.engine.search.flash_kernels", "gpuppdp.engine.search.levels",
           "gpuppdp.engine.search.packed_walk",
           "gpuppdp.kernels.swap", "gpuppdp.kernels.dp_noise", "gpuppdp.kernels.dp_gaussian",
           "gpuppdp.kernels.dp_sums",
           "gpuppdp.models.base", "gpuppdp.models.risk", "gpuppdp.kernels.uniqueness",
           "gpuppdp.tradeoff.exploration", "gpuppdp.algorithms.anatomy")
#: the packages whose sources the digest covers
PACKAGES = ("gpuppdp.kernels", "gpuppdp.core", "gpuppdp.engine", "gpuppdp.engine.search",
            "gpuppdp.models", "gpuppdp.tradeoff", "gpuppdp.algorithms")
#: the x86-64 instruction-set level the extension is compiled for (the psABI's level 3:
#: Intel Haswell and AMD Excavator, 2013-2015, and later) and its features, as LLVM names them
X86_BASELINE = "x86-64-v3"
X86_BASELINE_FEATURES = ("cmov", "cx8", "fxsr", "mmx", "sse", "sse2", "cx16", "popcnt", "sahf",
                         "sse3", "ssse3", "sse4.1", "sse4.2", "avx", "avx2", "bmi", "bmi2",
                         "f16c", "fma", "lzcnt", "movbe", "xsave")
#: the extension's modules in ``gpuppdp.kernels``, compiled in parallel, each holding every
#: other declared signature (:func:`_parts_of`); the first also holds the metadata
PARTS = ("_aot", "_aot_1")
METADATA = "metadata"  # the first part's function returning the extension's metadata (JSON)

#: "module.kernel" -> (dispatcher, declared signatures)
_DECLARED: dict[str, tuple] = {}
#: dispatcher -> the argument types of its attached forms
_ATTACHED: dict = {}
_loaded: tuple | None = None  # (the extension's modules or None, metadata or why not used)


def _key(dispatcher) -> str:
    return f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__name__}"


def ahead_of_time(dispatcher, signatures) -> None:
    """Declare ``signatures`` (Numba signature strings, return type included) of the
    ``@njit`` ``dispatcher`` for compiling ahead of time, and attach the compiled forms the
    extension holds for them (nothing when it is absent or does not match)."""
    if not hasattr(dispatcher, "py_func"):  # NUMBA_DISABLE_JIT: a plain Python function
        return
    global _loaded
    _DECLARED[_key(dispatcher)] = (dispatcher, list(signatures))
    modules, meta = _load()
    if modules is None:
        return
    from numba.core import sigutils  # deferred: Numba's internals, only with the extension

    forms = _ATTACHED.setdefault(dispatcher, set())
    try:
        for export, signature, part in meta["exports"].get(_key(dispatcher), ()):
            args, _ = sigutils.normalize_signature(signature)
            # the dispatcher's own table of compiled forms (Dispatcher.add_overload's call)
            dispatcher._insert([a._code for a in args], getattr(modules[part], export), False)
            forms.add(tuple(args))
    except Exception as exc:  # noqa: BLE001 - another Numba's internals: compile on first use
        _loaded = (None, f"cannot be attached ({type(exc).__name__}: {exc})")


def attached(dispatcher, args) -> bool:
    """Whether a compiled form of ``dispatcher`` for argument types ``args`` is attached."""
    return tuple(args) in _ATTACHED.get(dispatcher, ())


def attached_forms(dispatcher) -> set:
    """The argument types (tuples of Numba types) of ``dispatcher``'s attached forms."""
    return set(_ATTACHED.get(dispatcher, ()))


def status() -> str:
    """``"attached"`` when the extension is in use, else why it is not."""
    modules, meta = _load()
    return "attached" if modules is not None else meta


def _host() -> dict:
    # deferred: LLVM's CPU probe, only when the extension is opened
    from llvmlite import binding as ll
    from numba.core import config

    # Numba's config sets its attributes at run time (from the environment)
    return {"cpu": config.CPU_NAME or ll.get_host_cpu_name(),  # type: ignore[attr-defined]
            "features": (config.CPU_FEATURES  # type: ignore[attr-defined]
                         or ll.get_host_cpu_features().flatten())}


def _enabled(features: str) -> set[str]:
    """The names of the features an LLVM feature string (``+avx2,-avx512f,...``) turns on."""
    return {f[1:] for f in features.split(",") if f.startswith("+")}


def baseline() -> dict:
    """The CPU the extension is compiled for and the features it needs of the running CPU:
    the x86-64 baseline on x86-64, elsewhere the building machine's CPU and all its
    features."""
    if platform.machine().lower() in ("x86_64", "amd64"):
        return {"cpu": X86_BASELINE, "requires": list(X86_BASELINE_FEATURES)}
    host = _host()
    return {"cpu": host["cpu"], "requires": sorted(_enabled(host["features"]))}


def _package_dir(name: str) -> Path:
    """The folder of package ``name`` (one of ``gpuppdp``'s), found from this file's place:
    not imported (the extension opens while a kernel module is being imported, and importing
    a package half-way through another's import can close an import circle)."""
    root, *parts = name.split(".")
    top = Path(__file__).resolve().parent.parent
    assert root == top.name and top.joinpath(*parts, "__init__.py").is_file(), name
    return top.joinpath(*parts)


def source_digest() -> str:
    """SHA-256 of the Python sources of :data:`PACKAGES` (names and contents)."""
    h = hashlib.sha256()
    for package in PACKAGES:
        for path in sorted(_package_dir(package).glob("*.py")):
            h.update(f"{package}.{path.stem}\0".encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def _load() -> tuple:
    global _loaded
    if _loaded is None:
        try:
            _loaded = _open()
        except Exception as exc:  # noqa: BLE001 - never fail an import because of it
            _loaded = (None, f"cannot be used ({type(exc).__name__}: {exc})")
    return _loaded


def _open() -> tuple:
    """The extension's modules (:data:`PARTS`, in order) and its metadata, or ``(None, why
    it is not used)``."""
    if os.environ.get("GPUPPDP_AOT", "1") == "0":
        return None, "off (GPUPPDP_AOT=0)"
    modules = []
    for part in PARTS:
        module_name = f"{__package__}.{part}"
        try:
            modules.append(importlib.import_module(module_name))
        except ImportError as exc:
            absent = isinstance(exc, ModuleNotFoundError) and exc.name == module_name
            return None, ("not built (kernels compile on first use)" if absent and not modules
                          else f"cannot be loaded ({exc})")
    import numba  # deferred: the version, only when the extension is opened

    meta = json.loads(getattr(modules[0], METADATA)())
    if meta.get("numba") != numba.__version__:
        return None, f"built by Numba {meta.get('numba')}, running {numba.__version__}"
    host = _host()
    missing = sorted(set(meta.get("requires", ["?"])) - _enabled(host["features"]))
    if missing:
        return None, (f"built for {meta.get('cpu')}, which this CPU ({host['cpu']}) does not "
                      f"support (it lacks {', '.join(missing[:6])})")
    if meta.get("digest") != source_digest():
        return None, "kernel sources changed since the build"
    return tuple(modules), meta


def build(targets) -> dict:
    """Compile every declared signature into the extension's modules at ``targets`` (file
    paths, one per part of :data:`PARTS` in order, e.g.
    ``.../gpuppdp/kernels/_aot.cpython-311-x86_64-linux-gnu.so``), the metadata (Numba
    version, CPU, source digest, exports) into the first; returns the metadata.  Needs Numba,
    NumPy and a C compiler."""
    global _loaded
    if len(targets) != len(PARTS):
        raise ValueError(f"targets: one path for each of {PARTS}, got {list(targets)}")
    _loaded = (None, "building")  # attach nothing of the extension about to be replaced
    saved = os.environ.get("NUMBA_CACHE_DIR")
    with tempfile.TemporaryDirectory() as scratch:
        if saved is None:  # the JIT caches of the build's imports (read if Numba starts here)
            os.environ["NUMBA_CACHE_DIR"] = scratch
        try:
            return _build([os.path.abspath(t) for t in targets])
        finally:
            if saved is None:
                del os.environ["NUMBA_CACHE_DIR"]


def _parts_of() -> dict[str, list]:
    """Each declared signature's export name and part: the declared kernels in order of their
    names and signatures, every other one to the next part (the compiled Flash's forms, half
    of the compiling, so fall to both)."""
    exports: dict[str, list] = {}
    n = 0
    for key, (_, signatures) in sorted(_DECLARED.items()):
        for i, signature in enumerate(signatures):
            exports.setdefault(key, []).append((f"{key.replace('.', '_')}_{i}", signature,
                                                n % len(PARTS)))
            n += 1
    return exports


def _build(targets: list[str]) -> dict:
    """:func:`build`'s work, in the build's scratch cache."""
    import numba  # deferred: its version, only when the package is built

    for name in MODULES:
        importlib.import_module(name)
    built_for = baseline()
    exports = _parts_of()
    meta = {"numba": numba.__version__, **built_for, "digest": source_digest(),
            "exports": exports}
    # the other parts in forked processes (they inherit the declarations), the first here;
    # where processes cannot be forked, one after another
    fork = "fork" in multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork") if fork else None
    others = []
    for part in range(1, len(PARTS)):
        if context is None:
            _compile_part(part, targets[part], built_for["cpu"], exports)
            continue
        child = context.Process(target=_compile_part,
                                args=(part, targets[part], built_for["cpu"], exports))
        child.start()
        others.append(child)
    try:
        _compile_part(0, targets[0], built_for["cpu"], exports, meta)
    finally:
        for child in others:
            child.join()
    failed = [PARTS[i + 1] for i, child in enumerate(others) if child.exitcode != 0]
    if failed:
        raise RuntimeError(f"the extension's part(s) {', '.join(failed)} did not compile "
                           "(their traceback is above)")
    return meta


def _compile_part(part: int, target: str, cpu: str, exports: dict, meta=None) -> None:
    """Compile the declared signatures of part ``part`` (:func:`_parts_of`) into the
    extension module ``target`` for ``cpu`` (with ``meta``, its :data:`METADATA` function)."""
    # deferred: the ahead-of-time compiler, only when the package is built
    from numba.pycc import CC
    from numba.pycc import compiler as pycc_compiler

    class ReleasingGil(pycc_compiler.Flags):
        """The exports release the GIL, as the ``nogil`` kernels do under the JIT (the
        roll-up and the group-by run as tasks on threads)."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.release_gil = True

    cc = CC(PARTS[part])
    cc.output_dir = os.path.dirname(target)
    cc.output_file = os.path.basename(target)
    cc.target_cpu = cpu
    for key, entries in exports.items():
        dispatcher = _DECLARED[key][0]
        for export, signature, at in entries:
            if at == part:
                cc.export(export, signature)(dispatcher.py_func)
    if meta is not None:
        cc.export(METADATA, "unicode_type()")(_constant(json.dumps(meta)))
    flags, compile_extra = pycc_compiler.Flags, pycc_compiler.compile_extra
    no_refcount = {d.py_func for d, _ in _DECLARED.values()
                   if d.targetoptions.get("_nrt") is False}

    def compile_export(typing, target, function, args, returns, export_flags, *rest, **named):
        """An export declared without reference counting (``_nrt=False``) compiled so, as the
        JIT compiles it (pycc compiles every export with the runtime's counting on)."""
        if function in no_refcount:
            export_flags = export_flags.copy()
            export_flags.nrt = False
        return compile_extra(typing, target, function, args, returns, export_flags, *rest,
                             **named)

    # patched for the build only: pycc's compiler flags, with the GIL released, and its
    # compiler, honouring an export's own reference counting
    pycc_compiler.Flags = ReleasingGil  # type: ignore[misc]
    pycc_compiler.compile_extra = compile_export  # type: ignore[assignment]
    try:
        cc.compile()
    finally:
        pycc_compiler.Flags = flags  # type: ignore[misc]
        pycc_compiler.compile_extra = compile_extra  # type: ignore[assignment]


def _constant(text: str):
    """A function returning ``text`` (compiled into the extension: its metadata travel with
    it, as the build's one output file)."""
    def constant():
        return text
    return constant
