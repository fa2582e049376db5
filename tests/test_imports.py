"""The packages' import graph, read from the source (lazy imports inside functions and
TYPE_CHECKING blocks included): no cycle anywhere, mcts/ and nets/ never import gomoku/, the
layers of ``LAYERS`` import only downwards, and no module imports another's private name."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("gomoku", "mcts", "nets")
# The layers, lowest first: a module may import its own layer's modules and those of the layers
# below, never a layer above, nor a neighbour in its own tuple (they are independent). A name is
# a module or a package (with all its modules; ``gomoku`` alone is the package's __init__). The
# scripts, wrappers of the commands, sit on top of all (outside this graph).
LAYERS = [
    ("mcts", "nets"),  # the libraries: the search and the nets, independent of each other
    ("gomoku.tactics",),  # five-in-a-row knowledge: geometry, threats, the rules the search takes
    ("gomoku.game",),  # the board, and nothing above it
    ("gomoku",),  # the package's __init__: re-exports the Board
    ("gomoku.players",),  # anything that picks a move, built from a spec
    ("gomoku.matches",),  # games and matches between players
    ("gomoku.training",),  # the training loop and its backends
    ("gomoku.pbrain", "gomoku.ui", "gomoku.web"),  # the front ends: the engine, the window, the page
    ("gomoku.lab",),  # the lab tools: benchmarks (of the page's exports too) and experiments
    ("gomoku.cli",),  # the commands (scripts/NAME.py runs gomoku/cli/NAME.py's main)
]


def module_files() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            modules[name.removesuffix(".__init__")] = path
    return modules


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_in_the_packages():
    graph = import_graph()
    assert len(graph) > 60
    assert cycles(graph) == []
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]  # the check works


def test_the_libraries_never_import_gomoku():
    for name, imported in import_graph().items():
        if name.startswith(("mcts", "nets")):
            assert not [m for m in imported if m.startswith("gomoku")], name
        if name.startswith("mcts"):
            assert not [m for m in imported if m.startswith("nets")], name


def layer_of(module: str) -> tuple[int, str]:
    """(the layer's index in LAYERS, its name) of ``module``: the longest name that holds it."""
    found = [(len(name), index, name) for index, names in enumerate(LAYERS) for name in names
             if module == name or (name != "gomoku" and module.startswith(name + "."))]
    if not found:
        raise AssertionError(f"{module} is in no layer of LAYERS: place it there")
    _, index, name = max(found)
    return index, name


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module of a higher layer, or of a neighbour in the same layer."""
    found = []
    for module, imported in sorted(graph.items()):
        index, name = layer_of(module)
        for other in sorted(imported):
            other_index, other_name = layer_of(other)
            if other_index > index or (other_index == index and other_name != name):
                found.append(f"{module} -> {other}")
    return found


def test_the_layers_import_only_downwards():
    graph = import_graph()
    assert upward_imports(graph) == []
    every = {layer_of(module)[1] for module in graph}  # every module has its layer (layer_of raises)
    assert {"gomoku.game", "gomoku.players", "gomoku.matches", "gomoku.training"} <= every
    assert not [m for m in graph if m.startswith("gomoku.game.") and m != "gomoku.game.board"]  # the board alone
    # the check works: an arrow back up, and one between neighbours, are found; one down is not
    assert upward_imports({"gomoku.game.board": {"gomoku.matches.arena"}, "gomoku.ui.app": {"gomoku.web.export"},
                           "gomoku.matches.arena": {"gomoku.players.classical"}}) == [
        "gomoku.game.board -> gomoku.matches.arena", "gomoku.ui.app -> gomoku.web.export"]


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(module: str, source: str, modules: set[str]) -> list[str]:
    """The private names (one leading underscore) of another module of ours that ``module``'s
    ``source`` uses: ``from X import _name``, or ``X._name`` on a module X it imported."""
    package = module if module in {m.rsplit(".", 1)[0] for m in modules if "." in m} else module.rpartition(".")[0]
    bound: dict[str, str] = {}  # a local name -> the module of ours it names
    found = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, up level - 1
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            if base not in modules:
                continue
            for alias in node.names:
                if is_private(alias.name) and base != module:
                    found.append(f"{base}.{alias.name}")
                if f"{base}.{alias.name}" in modules:
                    bound[alias.asname or alias.name] = f"{base}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    bound[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            chain, value = [], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                target = ".".join([bound[value.id], *reversed(chain)])
                if target in modules and target != module:
                    found.append(f"{target}.{node.attr}")
    return found


def test_no_module_uses_another_modules_private_names():
    modules = module_files()
    names = set(modules)
    found = {name: uses for name, path in modules.items() if (uses := private_uses(name, path.read_text(), names))}
    assert found == {}
    # the check works: an imported private name and a private attribute of an imported module are found
    sample = ("import gomoku.tactics.compiled as kernels\nimport gomoku.players.minimax\n"
              "from gomoku.tactics import threats\nfrom gomoku.players.classical import _secret, Player\n"
              "kernels._tables, threats.__doc__, gomoku.players.minimax._hidden, threats.NO_MOVE\n")
    assert private_uses("gomoku.x", sample, names) == ["gomoku.players.classical._secret",
                                                       "gomoku.tactics.compiled._tables",
                                                       "gomoku.players.minimax._hidden"]
