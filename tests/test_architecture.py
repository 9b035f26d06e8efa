"""The tree is the map: imports flow one way, from the shell down to the pure core.

Every import in the package counts — module level, inside functions, and under
``TYPE_CHECKING`` — because a tool that follows imports (or a reader) sees them all. Two
rules: no import cycle anywhere (modules or subpackages), and no module imports a layer
above its own. The pure layers (the base records, ``markdown``, ``regions``, ``policy``,
``claims``, ``shell``, and the pure modules of ``gate`` and ``daemon``) import nothing that
touches the world. docs/architecture.md draws the same picture. And the two state stores
implement ``store/protocol.py``, each domain in a module of its own: checked by name and
signature here, and by mypy on the assignments of ``declared_as_protocols``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Protocol

import pytest

from memkeeper.store import protocol
from memkeeper.store.etcd import EtcdStore
from memkeeper.store.sqlite import Store

PACKAGE = Path(__file__).resolve().parent.parent / "memkeeper"

# Lowest first. A module may import its own layer and those below it, never one above.
LAYERS: tuple[tuple[str, ...], ...] = (
    # the base
    (
        "errors",
        "records",
        "coordination",
        "clock",
        "events",
        "checkpoints",
        "names",
        "limits",
        "stamps",
    ),
    ("markdown", "regions", "policy", "claims", "shell", "identity", "mail", "meetings", "work"),
    ("fs", "store"),  # the shell's bottom: the disk and the state store
    ("ops",),  # one module per operation, on a Workspace
    # Memory, the façade, its sub-façades, and one Memory per thread for the servers
    ("api", "mailbox", "claimbook", "meetingroom", "workqueue", "memories"),
    # the long-running and per-agent shells, and the installer of the agents' configuration
    ("daemon", "gate", "install", "mcpserver", "dashboard", "doctor"),
    ("cli",),  # argparse and the exit boundary
    ("__init__", "__main__"),  # the package's own entry points
)
# Modules of mixed packages that are pure too: they may import only pure layers.
PURE_MODULES = frozenset(
    {
        "memkeeper.gate.payload",
        "memkeeper.gate.facts",
        "memkeeper.gate.decide",
        "memkeeper.gate.messages",
        "memkeeper.gate.applypatch",
        "memkeeper.gate.agents",
        "memkeeper.gate.agents.base",
        "memkeeper.gate.agents.claude_code",
        "memkeeper.gate.agents.codex",
        "memkeeper.gate.agents.gemini",
        "memkeeper.gate.agents.copilot",
        "memkeeper.gate.agents.cursor",
        "memkeeper.gate.agents.cline",
        "memkeeper.gate.jsonc",
        "memkeeper.install.jsonedit",
        "memkeeper.install.tomledit",
        "memkeeper.install.command",
        "memkeeper.daemon.plan",
        "memkeeper.fs.indexfile",
        "memkeeper.doctor.judge",
    }
)
PURE_LAYERS = 2  # the first two entries of LAYERS
# What the gate decides with: the agents' installers (``install``) never import it.
DECISION = frozenset(
    {
        "memkeeper.gate.decide",
        "memkeeper.gate.facts",
        "memkeeper.gate.messages",
        "memkeeper.gate.hook",
    }
)
# Imported by the tests alone (tree-sitter-bash, the shell analyser's oracle): never at run time.
TEST_ONLY = ("tree_sitter", "tree_sitter_bash")

Graph = Mapping[str, frozenset[str]]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, known: Iterable[str]) -> frozenset[str]:
    """The package's modules that ``path`` imports, wherever in the file the import is."""
    modules = set(known)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                found.add(dotted if dotted in modules else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return frozenset(name for name in found if name in modules)


def package_graph() -> dict[str, frozenset[str]]:
    files = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: imports_of(path, files) - {name} for name, path in files.items()}


def cycles(graph: Graph) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def package_of(module: str) -> str:
    """``memkeeper.ops.patch`` → ``ops``; ``memkeeper.errors`` → ``errors``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer_of(module: str) -> int:
    top = package_of(module)
    if module == "memkeeper.__main__":
        top = "__main__"
    return next(i for i, names in enumerate(LAYERS) if top in names)


def is_pure(module: str) -> bool:
    return layer_of(module) < PURE_LAYERS or module in PURE_MODULES


def layer_violations(graph: Graph) -> list[str]:
    """Each import that climbs a layer, or leaves the pure core from a pure module."""
    found = []
    for module, imported in sorted(graph.items()):
        for target in sorted(imported):
            if layer_of(target) > layer_of(module):
                found.append(f"{module} imports {target}, a layer above it")
            elif is_pure(module) and not is_pure(target):
                found.append(f"{module} is pure but imports {target}, which touches the world")
    return found


def boundary_violations(graph: Graph) -> list[str]:
    """Each import across the gate's three packages the wrong way: shell analysis reaching
    outside the pure layers, or an installer importing the decision."""
    found = []
    for module, imported in sorted(graph.items()):
        for target in sorted(imported):
            if package_of(module) == "shell" and layer_of(target) >= PURE_LAYERS:
                found.append(f"{module} analyses shell commands but imports {target}")
            elif package_of(module) == "install" and target in DECISION:
                found.append(f"{module} installs agents' configuration but imports {target}")
    return found


def foreign_imports(path: Path, names: Iterable[str]) -> list[str]:
    """The imports in ``path`` of the top-level packages ``names``, wherever they are."""
    tops = set(names)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            spelled = [node.module]
        elif isinstance(node, ast.Import):
            spelled = [alias.name for alias in node.names]
        else:
            continue
        found += [name for name in spelled if name.split(".")[0] in tops]
    return found


def collapsed(graph: Graph) -> dict[str, frozenset[str]]:
    """The graph between subpackages (a module's edges count for its package)."""
    out: dict[str, set[str]] = {}
    for module, imported in graph.items():
        here = package_of(module)
        out.setdefault(here, set()).update(package_of(t) for t in imported)
    return {name: frozenset(targets - {name}) for name, targets in out.items()}


# -- the package -------------------------------------------------------------------------------


def test_every_module_belongs_to_a_layer() -> None:
    for module in package_graph():
        assert layer_of(module) >= 0, module


def test_no_module_is_on_an_import_cycle() -> None:
    assert cycles(package_graph()) == []


def test_no_subpackage_is_on_an_import_cycle() -> None:
    assert cycles(collapsed(package_graph())) == []


def test_imports_flow_down_the_layers_and_the_pure_core_touches_nothing() -> None:
    assert layer_violations(package_graph()) == []


def test_the_operations_do_not_reach_back_into_the_public_facade() -> None:
    graph = package_graph()
    for module, imported in graph.items():
        if package_of(module) == "ops":
            assert "memkeeper.api" not in imported, module


def test_shell_analysis_stays_pure_and_the_installers_leave_the_decision_alone() -> None:
    assert boundary_violations(package_graph()) == []


def test_no_module_imports_the_tests_shell_oracle() -> None:
    found = {module_name(path): foreign_imports(path, TEST_ONLY) for path in PACKAGE.rglob("*.py")}
    assert {module: names for module, names in found.items() if names} == {}


# -- the checker itself fails on what it guards against ----------------------------------------


def test_the_checker_finds_a_reintroduced_cycle() -> None:
    graph = {**package_graph()}
    graph["memkeeper.ops.workspace"] = graph["memkeeper.ops.workspace"] | {"memkeeper.ops.patch"}
    found = cycles(graph)
    assert any({"memkeeper.ops.patch", "memkeeper.ops.workspace"} <= set(c) for c in found)


def test_the_checker_finds_a_pure_module_importing_the_shell() -> None:
    graph = {**package_graph()}
    graph["memkeeper.markdown.sections"] |= {"memkeeper.store.sqlite"}
    graph["memkeeper.gate.decide"] |= {"memkeeper.fs.files"}
    assert layer_violations(graph) == [
        "memkeeper.gate.decide is pure but imports memkeeper.fs.files, which touches the world",
        "memkeeper.markdown.sections imports memkeeper.store.sqlite, a layer above it",
    ]


def test_the_boundary_check_finds_impure_shell_analysis_and_a_deciding_installer() -> None:
    graph = {**package_graph()}
    graph["memkeeper.shell.walk"] |= {"memkeeper.fs.root"}
    graph["memkeeper.shell.parse"] |= {"memkeeper.gate.payload"}
    graph["memkeeper.install.hooks"] |= {"memkeeper.gate.decide", "memkeeper.gate.agents"}
    graph["memkeeper.install.mcp"] |= {"memkeeper.gate.hook"}
    assert boundary_violations(graph) == [
        "memkeeper.install.hooks installs agents' configuration but imports memkeeper.gate.decide",
        "memkeeper.install.mcp installs agents' configuration but imports memkeeper.gate.hook",
        "memkeeper.shell.parse analyses shell commands but imports memkeeper.gate.payload",
        "memkeeper.shell.walk analyses shell commands but imports memkeeper.fs.root",
    ]


def test_the_oracle_check_finds_tree_sitter_imported_anywhere_in_a_module(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text(
        "import json\n"
        "def parse() -> None:\n"
        "    import tree_sitter_bash as tsb\n"
        "    from tree_sitter import Language, Parser\n"
        "    from memkeeper.shell import parse\n"
    )
    assert foreign_imports(source, TEST_ONLY) == ["tree_sitter_bash", "tree_sitter"]


def test_the_checker_sees_imports_inside_functions_and_type_checking_blocks(
    tmp_path: Path,
) -> None:
    source = tmp_path / "probe.py"
    source.write_text(
        "TYPE_CHECKING = False\n"
        "if TYPE_CHECKING:\n"
        "    from memkeeper.api import Memory\n"
        "def late() -> None:\n"
        "    from memkeeper.ops import patch\n"
        "    import memkeeper.store.sqlite\n"
    )
    known = package_graph()
    assert imports_of(source, known) == {
        "memkeeper.api",
        "memkeeper.ops.patch",
        "memkeeper.store.sqlite",
    }


@pytest.mark.parametrize("name", [n for layer in LAYERS[:-1] for n in layer])
def test_each_layer_named_exists(name: str) -> None:
    assert (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file(), name


def untested_modules(package: Path, tests: Path) -> list[str]:
    """The modules of ``package`` without their own test file (``tests/<pkg>/test_<mod>.py``
    for ``memkeeper/<pkg>/<mod>.py``); a package's ``__init__`` and ``__main__`` need none."""
    return sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path.name not in ("__init__.py", "__main__.py")
        and not (tests / path.relative_to(package).parent / f"test_{path.name}").is_file()
    )


def test_every_module_has_its_own_test_file() -> None:
    assert untested_modules(PACKAGE, PACKAGE.parent / "tests") == []


def test_the_mirror_check_finds_a_module_without_tests(tmp_path: Path) -> None:
    for name in ("pkg/__init__.py", "pkg/done.py", "pkg/new.py", "top.py"):
        (tmp_path / "memkeeper" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "memkeeper" / name).write_text("")
    (tmp_path / "tests" / "pkg").mkdir(parents=True)
    (tmp_path / "tests" / "pkg" / "test_done.py").write_text("")
    found = untested_modules(tmp_path / "memkeeper", tmp_path / "tests")
    assert found == ["pkg/new.py", "top.py"]


# -- the store backends implement the store's protocols ----------------------------------------

BACKENDS: dict[str, type[object]] = {"sqlite": Store, "etcd": EtcdStore}


def declared_as_protocols(sqlite: Store, etcd: EtcdStore) -> list[protocol.StateStore]:
    """Each backend as each protocol, in assignments mypy checks (``--strict`` covers the
    tests): a backend that lacks a method, or whose signature differs, fails the type check."""
    files: list[protocol.FileStore] = [sqlite, etcd]
    events: list[protocol.EventStore] = [sqlite, etcd]
    claims: list[protocol.ClaimStore] = [sqlite, etcd]
    proposals: list[protocol.ProposalStore] = [sqlite.proposals, etcd.proposals]
    reconciliations: list[protocol.ReconciliationStore] = [
        sqlite.reconciliations,
        etcd.reconciliations,
    ]
    pending: list[protocol.PendingStore] = [sqlite, etcd]
    assert len({len(files), len(events), len(claims), len(proposals)}) == 1
    assert len({len(reconciliations), len(pending)}) == 1
    return [sqlite, etcd]


def protocol_methods(proto: type[object]) -> dict[str, inspect.Signature]:
    """The methods ``proto`` declares, with those of the protocols it extends."""
    found: dict[str, inspect.Signature] = {}
    for klass in reversed(proto.__mro__):
        if not getattr(klass, "_is_protocol", False) or klass is Protocol:
            continue
        for name, value in vars(klass).items():
            if inspect.isfunction(value) and not name.startswith("_"):
                found[name] = inspect.signature(value)
    return found


def agrees(want: inspect.Signature, got: inspect.Signature) -> bool:
    """Each parameter's name, kind, annotation and default (a declared ``...``: any default)
    and the return annotation (a declared context manager: the ``Iterator`` of a
    ``contextlib.contextmanager`` generator) are the same."""
    wanted, offered = list(want.parameters.values()), list(got.parameters.values())
    kinds = [[(p.name, p.kind, p.annotation, p.default is p.empty) for p in ps] for ps in (
        wanted, offered
    )]  # fmt: skip
    if kinds[0] != kinds[1]:
        return False
    pairs = zip(wanted, offered, strict=True)
    if any(w.default is not ... and w.default != o.default for w, o in pairs):
        return False
    returns = want.return_annotation
    if isinstance(returns, str) and returns.startswith("AbstractContextManager["):
        returns = "Iterator[" + returns.removeprefix("AbstractContextManager[")
    return bool(returns == got.return_annotation)


def implementer(backend: type[object], proto: type[object]) -> type[object]:
    """What implements ``proto`` in ``backend``: the backend itself, or — for a domain loaded on
    first use, an attribute of ``StateStore`` named after its module — the class of that
    attribute, found in the backend's module of the domain by the name its annotation gives."""
    for module, domain in protocol.DOMAINS.items():
        if domain is not proto or not isinstance(vars(protocol.StateStore).get(module), property):
            continue
        made = inspect.getattr_static(backend, module, None)
        if not isinstance(made, property) or made.fget is None:
            raise AssertionError(f"{backend.__name__}.{module} is not a {proto.__name__}")
        getter = made.fget
        package = importlib.import_module(f"{getter.__module__}.{module}")
        found: type[object] = getattr(package, getter.__annotations__["return"])
        return found
    return backend


def unimplemented(proto: type[object], backend: type[object]) -> list[str]:
    """Each method of ``proto`` that ``backend`` lacks or offers with another signature."""
    found = []
    for name, want in protocol_methods(proto).items():
        method = getattr(backend, name, None)
        if not callable(method):
            found.append(f"{backend.__name__} lacks {proto.__name__}.{name}")
        elif not agrees(want, inspect.signature(method)):
            got = inspect.signature(method)
            found.append(f"{backend.__name__}.{name}{got} is not {proto.__name__}.{name}{want}")
    return found


def misplaced(backend: type[object], package: str) -> list[str]:
    """Each protocol method of ``backend`` not defined in its domain's module of the backend's
    package (``store.protocol.DOMAINS``; ``StateStore``'s own: ``core``)."""
    own = [n for n, v in vars(protocol.StateStore).items() if inspect.isfunction(v) and n[0] != "_"]
    where = dict.fromkeys(own, "core")
    for module, proto in protocol.DOMAINS.items():
        where.update(dict.fromkeys(protocol_methods(proto), module))
    found = []
    holders = {module: implementer(backend, proto) for module, proto in protocol.DOMAINS.items()}
    for name, module in sorted(where.items()):
        home = getattr(getattr(holders.get(module, backend), name, None), "__module__", None)
        if home != f"memkeeper.store.{package}.{module}":
            found.append(f"{backend.__name__}.{name} is in {home}, not {package}.{module}")
    return found


@pytest.mark.parametrize("backend", BACKENDS.values(), ids=BACKENDS.keys())
@pytest.mark.parametrize("proto", [protocol.StateStore, *protocol.DOMAINS.values()])
def test_each_store_backend_implements_each_protocol(
    backend: type[object], proto: type[object]
) -> None:
    assert unimplemented(proto, implementer(backend, proto)) == []


@pytest.mark.parametrize("package", BACKENDS)
def test_each_backend_holds_each_domain_in_its_own_module(package: str) -> None:
    assert misplaced(BACKENDS[package], package) == []


def test_the_protocol_check_finds_a_missing_method_or_another_signature() -> None:
    methods = {name: getattr(Store, name) for name in protocol_methods(protocol.StateStore)}
    del methods["body_at"]

    def sections(self: object, path: str) -> list[object]:  # no with_absent
        raise NotImplementedError

    def writing(self: object, *, durable: bool = False) -> Iterator[None]:  # another default
        raise NotImplementedError

    methods.update(sections=sections, writing=writing)
    fake = type("Fake", (), methods)
    assert unimplemented(protocol.EventStore, fake) == []
    assert [line.split("(")[0] for line in unimplemented(protocol.StateStore, fake)] == [
        "Fake.sections",
        "Fake lacks StateStore.body_at",
        "Fake.writing",
    ]


def test_the_layout_check_finds_a_method_outside_its_domains_module() -> None:
    class Patched(Store):
        def tally(self, kind: str, at: float, keep_s: float = 3600.0) -> None:
            raise NotImplementedError

    assert misplaced(Patched, "sqlite") == [
        "Patched.tally is in tests.test_architecture, not sqlite.events"
    ]


MAX_LINES = 400


def long_modules(package: Path, limit: int = MAX_LINES) -> list[str]:
    """The modules of ``package`` longer than ``limit`` lines, with their length."""
    return sorted(
        f"{path.relative_to(package.parent)}: {count} lines"
        for path in package.rglob("*.py")
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > limit
    )


def test_no_module_is_longer_than_400_lines() -> None:
    assert long_modules(PACKAGE) == []


def test_the_length_check_finds_a_long_module(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "pkg" / "small.py").write_text("x = 1\n")
    assert long_modules(tmp_path / "pkg") == [f"pkg/big.py: {MAX_LINES + 1} lines"]
