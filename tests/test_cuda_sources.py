"""What the CUDA compiler refuses and Numba's simulator takes, read off the kernels' sources.

``cuda.local.array`` and ``cuda.shared.array`` need their shape as a compile-time constant: an
integer literal or a module-level name (Numba freezes globals).  An expression such as
``16 * LANES`` types as a run-time ``int64``; the simulator allocates it anyway, the device's
compiler stops with ``No implementation of function local.array (int64, ...)`` -- the
eighteenth session's H200 run found one such kernel that every simulator test had passed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

KERNELS = Path(__file__).resolve().parents[1] / "gpuppdp" / "kernels"


def _module_names(tree: ast.Module) -> set[str]:
    """Names bound at a module's top level (assignments and imports)."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _array_shapes(tree: ast.Module):
    """``(line, shape node)`` of every ``cuda.local.array`` / ``cuda.shared.array`` call."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "array" and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr in ("local", "shared") and node.args):
            yield node.lineno, node.args[0]


def _constant_shape(shape: ast.expr, module_names: set[str]) -> bool:
    if isinstance(shape, ast.Constant):
        return isinstance(shape.value, int)
    if isinstance(shape, ast.Name):
        return shape.id in module_names
    return False


SOURCES = sorted(KERNELS.glob("*.py"))


def test_the_kernels_allocate_device_arrays():
    """The check below reads real calls (a renamed API would leave it checking nothing)."""
    found = sum(len(list(_array_shapes(ast.parse(p.read_text())))) for p in SOURCES)
    assert found >= 20


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_local_and_shared_array_shapes_are_compile_time_constants(path):
    tree = ast.parse(path.read_text())
    names = _module_names(tree)
    bad = [f"{path.name}:{line}: {ast.unparse(shape)}" for line, shape in _array_shapes(tree)
           if not _constant_shape(shape, names)]
    assert not bad, ("a device array's shape must be an int literal or a module-level "
                     "constant: " + ", ".join(bad))


def test_the_check_refuses_an_expression():
    tree = ast.parse("from numba import cuda\nN = 4\n"
                     "def k():\n    a = cuda.local.array(16 * N, 'u4')\n"
                     "    b = cuda.shared.array(N, 'u4')\n")
    names = _module_names(tree)
    verdicts = [_constant_shape(shape, names) for _, shape in _array_shapes(tree)]
    assert verdicts == [False, True]
