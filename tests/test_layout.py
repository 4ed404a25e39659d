"""The house rules of the package, read off its sources (README, "Architecture"):

* layers import downward only (a module imports from its own layer or below), with no import
  cycle among the package's modules -- imports inside functions count, those under
  ``if TYPE_CHECKING:`` do not;
* an import inside a function says why it is deferred (``# deferred: ...`` on its line or the
  line above): a heavy optional dependency, or the command line's start-up;
* no module over 800 lines, no function over 100 lines unless it is one compiled kernel loop
  (its docstring says "kernel loop").
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "gpuppdp"

#: the layers, bottom to top: a module belongs to the layer of its longest matching prefix
LAYERS = [
    ("bottom", ["gpuppdp.errors", "gpuppdp.validation", "gpuppdp.backend", "gpuppdp.progress",
                "gpuppdp.display", "gpuppdp.words", "gpuppdp.stops", "gpuppdp.kernels",
                "gpuppdp.core", "gpuppdp.io", "gpuppdp.hierarchy", "gpuppdp.builders"]),
    ("engine", ["gpuppdp.engine"]),
    ("models", ["gpuppdp.models"]),
    ("analysis", ["gpuppdp.analysis", "gpuppdp.dp", "gpuppdp.attacks", "gpuppdp.queries",
                  "gpuppdp.perturb"]),
    ("algorithms", ["gpuppdp.algorithms"]),
    ("api", ["gpuppdp", "gpuppdp.anonymizer", "gpuppdp.cluster", "gpuppdp.notebook",
             "gpuppdp.datasets", "gpuppdp.census", "gpuppdp.testing", "gpuppdp.data",
             "gpuppdp.device_frames", "gpuppdp.testing_cudf"]),
    ("report", ["gpuppdp.report", "gpuppdp.tradeoff"]),
    ("cli", ["gpuppdp.cli"]),
]


def _modules() -> dict[str, Path]:
    mods = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts)
        mods[name.removesuffix(".__init__")] = path
    return mods


MODULES = _modules()


def _layer(module: str) -> int:
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    assert rank is not None, f"{module} belongs to no layer: add it to LAYERS and the README"
    return rank


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    hidden = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden.update(id(x) for x in ast.walk(node))
    return hidden


def _function_nodes(tree: ast.AST) -> set[int]:
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside.update(id(x) for x in ast.walk(node) if x is not node)
    return inside


def _imports(module: str, path: Path):
    """(imported package module, line, inside a function) for every import of ``module``."""
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    hidden, inside = _type_checking_nodes(tree), _function_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        targets = []
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                for candidate in (f"{base}.{alias.name}", base):
                    if candidate in MODULES:
                        targets.append(candidate)
                        break
                else:
                    targets.append(base)
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        for target in targets:
            yield target, node.lineno, id(node) in inside


def _graph() -> dict[str, dict[str, int]]:
    edges: dict[str, dict[str, int]] = {m: {} for m in MODULES}
    for module, path in MODULES.items():
        for target, line, _ in _imports(module, path):
            if target in MODULES and target != module and not module.startswith(target + "."):
                edges[module].setdefault(target, line)
    return edges


def test_no_import_cycle():
    edges = _graph()
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def connect(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in MODULES:
        if module not in index:
            connect(module)
    assert not cycles, f"import cycles: {cycles}"


def test_layers_import_downward():
    upward = [f"{m} ({MODULES[m].relative_to(PACKAGE.parent)}:{line}) imports {t}"
              for m, targets in _graph().items() for t, line in targets.items()
              if _layer(t) > _layer(m)]
    assert not upward, "imports up the layers:\n" + "\n".join(upward)


def _import_lines(path: Path) -> set[int]:
    """The lines of every import statement of ``path`` (continuation lines included)."""
    return {n for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for n in range(node.lineno, node.end_lineno + 1)}


def test_imports_in_functions_say_why():
    """The reason may stand on any line of the block of imports, or on the line above it."""
    unexplained = []
    for module, path in MODULES.items():
        lines = path.read_text().splitlines()
        imports = _import_lines(path)
        for target, line, in_function in _imports(module, path):
            if not in_function or target.split(".")[0] in sys.stdlib_module_names:
                continue
            first, last = line, line  # the block: imports, blank lines between them
            while first - 1 in imports or (first - 2 in imports and not lines[first - 2].strip()):
                first -= 1
            while last + 1 in imports or (last + 2 in imports and not lines[last].strip()):
                last += 1
            block = lines[max(first - 2, 0):last]  # the block and the line above it
            if not any("deferred:" in text for text in block):
                unexplained.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert not unexplained, ("imports inside functions without a '# deferred: reason':\n"
                             + "\n".join(unexplained))


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_module_and_function_sizes(path):
    text = path.read_text()
    assert text.count("\n") <= 800, f"{path.name}: {text.count(chr(10))} lines (at most 800)"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            doc = (ast.get_docstring(node) or "").lower()
            assert length <= 100 or "kernel loop" in doc, (
                f"{path.name}:{node.lineno} {node.name} has {length} lines (at most 100, unless "
                "its docstring says it is one compiled kernel loop)")


def test_kernels_live_inside_the_package():
    assert (PACKAGE / "kernels" / "__init__.py").is_file()
    assert not (PACKAGE.parent / "kernels").exists()


def test_the_build_declares_the_extensions_parts():
    """``setup.py`` names the extension's modules without importing the package: the names of
    :data:`~gpuppdp.kernels.aot.PARTS` (in the source tree only: not a test of the installed
    wheel's smoke tier)."""
    from gpuppdp.kernels import aot

    setup_py = PACKAGE.parent / "setup.py"
    tree = ast.parse(setup_py.read_text())
    parts = [node.value for node in tree.body if isinstance(node, ast.Assign)
             and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["PARTS"]]
    assert len(parts) == 1 and ast.literal_eval(parts[0]) == aot.PARTS
