"""The architecture on the page is the architecture in the code.

`docs/architecture.md` holds one ```toml block: the parts (path globs), the arrows between
them and the size limit. This test reads that block and, from the AST of every module
under the checked folders, checks that every module is on exactly one part, that every
import from one part into another follows an arrow (or a chain of arrows: a part may use
what the parts it points at stand on), that no modules import each other in a circle and
that no module outgrows the limit. Every import counts: those under ``if TYPE_CHECKING:``,
inside functions and `importlib.import_module("literal")` calls (a type-only arrow is an
arrow: it ties the two files together for every reader and every type checker).

The checker itself is tested on small fake trees, so a rule that silently stopped
checking would fail here too.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "architecture.md"


@dataclass(frozen=True)
class Facade:
    """Modules on ``clients`` import ``package`` only as ``from <module> import <a name in
    its __all__>``: the narrow face the package shows them."""

    package: str  # dotted, e.g. "core.noma"
    module: str  # dotted, the facade module, e.g. "core.noma.api"
    clients: tuple[str, ...]  # path globs


@dataclass(frozen=True)
class Rules:
    """The machine-readable half of docs/architecture.md."""

    checked: tuple[str, ...]  # folders whose every .py module is checked
    roots: tuple[str, ...]  # folders an absolute import is resolved from, in order
    parts: dict[str, tuple[str, ...]]  # part -> path globs (relative to the repository)
    arrows: dict[str, tuple[str, ...]]  # part -> the parts it may import
    max_module_lines: int
    facades: tuple[Facade, ...] = ()


def read_rules(markdown: str) -> Rules:
    blocks = re.findall(r"^```toml\n(.*?)^```", markdown, flags=re.S | re.M)
    assert len(blocks) == 1, f"expected one ```toml block on the page, found {len(blocks)}"
    data = tomllib.loads(blocks[0])
    parts = {name: tuple(globs) for name, globs in data["parts"].items()}
    arrows = {name: tuple(targets) for name, targets in data["arrows"].items()}
    for source, targets in arrows.items():
        unknown = {source, *targets} - parts.keys()
        assert not unknown, f"arrows name parts that are not declared: {sorted(unknown)}"
    return Rules(
        checked=tuple(data["checked"]),
        roots=tuple(data["roots"]),
        parts=parts,
        arrows=arrows,
        max_module_lines=int(data["limits"]["max_module_lines"]),
        facades=tuple(
            Facade(package, str(row["module"]), tuple(row["clients"]))
            for package, row in data.get("facades", {}).items()
        ),
    )


def glob_pattern(glob: str) -> re.Pattern[str]:
    """``*`` stays inside one folder, ``**`` crosses folders; the rest is literal."""
    out = ""
    for piece in re.split(r"(\*\*|\*)", glob):
        out += ".*" if piece == "**" else "[^/]*" if piece == "*" else re.escape(piece)
    return re.compile(out)


def parts_of(rel: str, rules: Rules) -> list[str]:
    return [
        part
        for part, globs in rules.parts.items()
        if any(glob_pattern(glob).fullmatch(rel) for glob in globs)
    ]


def reachable(rules: Rules, source: str) -> set[str]:
    """The parts ``source`` may import: itself and whatever its arrows lead to."""
    seen = {source}
    todo = [source]
    while todo:
        for target in rules.arrows.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def modules(root: Path, rules: Rules) -> list[str]:
    found: list[str] = []
    for folder in rules.checked:
        base = root / folder
        if base.is_dir():
            found += [p.relative_to(root).as_posix() for p in base.rglob("*.py")]
        elif base.is_file():
            found.append(folder)
    return sorted(set(found))


def module_file(base: Path, dotted: list[str]) -> Path | None:
    target = base.joinpath(*dotted) if dotted else base
    if dotted and target.with_name(target.name + ".py").is_file():
        return target.with_name(target.name + ".py")
    if (target / "__init__.py").is_file():
        return target / "__init__.py"
    return None


def resolve(bases: list[Path], dotted: str, *, relative: bool = False) -> Path | None:
    """The repository file ``dotted`` names, the longest prefix that is one (``a.b.C``
    where C is a class names ``a/b.py``; ``from . import C``, the package itself), or None
    (the standard library, a dependency)."""
    names = [n for n in dotted.split(".") if n and n != "*"]
    for cut in range(len(names), -1 if relative else 0, -1):
        for base in bases:
            found = module_file(base, names[:cut])
            if found is not None:
                return found
    return None


LITERAL_IMPORT = re.compile(r"""(?:import_module|__import__)\(\s*["']([\w.]+)["']""")


def statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, nested ones too (in functions, classes, ifs, trys, withs, matches):
    imports are statements, and walking only these is several times faster than
    `ast.walk` over every expression."""
    for node in body:
        yield node
        for name in ("body", "orelse", "finalbody"):
            yield from statements(getattr(node, name, []))
        for handler in getattr(node, "handlers", []):
            yield from statements(handler.body)
        for case in getattr(node, "cases", []):
            yield from statements(case.body)


def imported_names(source: str, rel: str) -> Iterator[tuple[int, str]]:
    """(level, dotted name) of every import anywhere in the module. ``from X import a``
    yields ``X.a`` (a submodule when there is one, else X itself); an
    `importlib.import_module` of a literal name counts as an import of it."""
    for node in statements(ast.parse(source, filename=rel).body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield 0, alias.name
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                yield node.level, f"{node.module or ''}.{alias.name}"
    for match in LITERAL_IMPORT.finditer(source):
        yield 0, match.group(1)


def import_graph(root: Path, rules: Rules) -> tuple[dict[str, set[str]], list[str]]:
    """Module -> the repository modules it imports, and the imports of repository files
    that are on no checked folder."""
    graph: dict[str, set[str]] = {}
    stray: list[str] = []
    known = set(modules(root, rules))
    roots = [root / r for r in rules.roots]
    for rel in sorted(known):
        path = root / rel
        edges: set[str] = set()
        for level, dotted in imported_names(path.read_text(encoding="utf-8"), rel):
            if level:
                base = path.parent
                for _ in range(level - 1):
                    base = base.parent
                target = resolve([base], dotted, relative=True)
            else:
                target = resolve(roots, dotted)
            if target is None:
                continue
            name = target.relative_to(root).as_posix()
            if name not in known:
                stray.append(f"{rel} imports {name}, which is on no checked folder")
            elif name != rel:
                edges.add(name)
        graph[rel] = edges
    return graph, stray


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative: a deep import chain must not hit the recursion limit.
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def problems(root: Path, rules: Rules) -> list[str]:
    """Every way the tree under ``root`` breaks ``rules``, one line each."""
    out: list[str] = []
    graph, stray = import_graph(root, rules)
    out += stray
    part: dict[str, str] = {}
    for rel in graph:
        on = parts_of(rel, rules)
        if len(on) != 1:
            out.append(f"{rel} is on {len(on)} parts {on}, not exactly one")
        else:
            part[rel] = on[0]
        lines = len((root / rel).read_text(encoding="utf-8").splitlines())
        if lines > rules.max_module_lines:
            out.append(f"{rel} has {lines} lines (limit {rules.max_module_lines})")
    for rel, targets in sorted(graph.items()):
        for target in sorted(targets):
            if rel not in part or target not in part:
                continue
            if part[target] not in reachable(rules, part[rel]):
                out.append(f"{rel} ({part[rel]}) imports {target} ({part[target]}): no arrow")
    out += [f"import circle among {len(c)} modules: {', '.join(c)}" for c in cycles(graph)]
    out += facade_problems(root, rules, sorted(graph))
    return out


def exported(root: Path, rules: Rules, module: str) -> set[str]:
    """The names a module's literal ``__all__`` lists (none when it has no such list)."""
    path = resolve([root / r for r in rules.roots], module)
    if path is None:
        return set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return {e.value for e in ast.walk(node.value) if isinstance(e, ast.Constant)}
    return set()


def facade_problems(root: Path, rules: Rules, rels: list[str]) -> list[str]:
    """Every import by a facade's client that reaches behind the facade, one line each."""
    out: list[str] = []
    for facade in rules.facades:
        names = exported(root, rules, facade.module)
        inside = (facade.package, facade.package + ".")
        for rel in rels:
            if not any(glob_pattern(g).fullmatch(rel) for g in facade.clients):
                continue
            source = (root / rel).read_text(encoding="utf-8")
            for level, dotted in imported_names(source, rel):
                if level or not (dotted == facade.package or dotted.startswith(inside[1])):
                    continue
                module, _, name = dotted.rpartition(".")
                if module != facade.module:
                    out.append(f"{rel} imports {dotted}: use {facade.module}")
                elif name not in names:
                    out.append(f"{rel} imports {dotted}: not in {facade.module}.__all__")
    return out


# -- the repository -------------------------------------------------------------------------


def test_the_repository_follows_its_architecture_page() -> None:
    rules = read_rules(PAGE.read_text(encoding="utf-8"))
    found = problems(REPO, rules)
    assert found == [], "\n".join(found)


def test_the_page_declares_every_checked_folder_and_every_part_holds_a_module() -> None:
    rules = read_rules(PAGE.read_text(encoding="utf-8"))
    on_disk = modules(REPO, rules)
    assert len(on_disk) > 250  # the checker really walks the tree (271 modules today)
    used = {p for rel in on_disk for p in parts_of(rel, rules)}
    python_parts = set(rules.parts) - {"build"}  # the build part is scripts, not modules
    assert python_parts <= used, f"parts without a module: {sorted(python_parts - used)}"


# -- the checker, on fake trees ---------------------------------------------------------------

FAKE_RULES = Rules(
    checked=("app", "lib", "guest"),
    roots=(".", "guest"),
    parts={
        "app": ("app/**",),
        "lib": ("lib/**",),
        "guest": ("guest/**",),
    },
    arrows={"app": ("lib",), "lib": ()},
    max_module_lines=20,
)


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


CLEAN = {
    "app/__init__.py": "",
    "app/main.py": "from lib.store import Store\nfrom . import view\n",
    "app/view.py": "import json\nfrom lib import store\n",
    "lib/__init__.py": "",
    "lib/store.py": "class Store: ...\n",
    "guest/runtime/__init__.py": "",
    "guest/task.py": "from runtime import x\n",
}


def test_a_clean_fake_tree_has_no_problems(tmp_path: Path) -> None:
    root = write(tmp_path, CLEAN)
    assert problems(root, FAKE_RULES) == []
    graph, _ = import_graph(root, FAKE_RULES)
    assert graph["app/main.py"] == {"lib/store.py", "app/view.py"}
    assert graph["guest/task.py"] == {"guest/runtime/__init__.py"}


def test_a_type_only_import_back_up_is_a_wrong_arrow_and_a_circle(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            **CLEAN,
            "lib/store.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from app.main import App\n"
            ),
        },
    )
    found = problems(root, FAKE_RULES)
    assert "lib/store.py (lib) imports app/main.py (app): no arrow" in found
    assert "import circle among 3 modules: app/main.py, app/view.py, lib/store.py" in found


def test_a_function_local_relative_import_closes_a_circle(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {**CLEAN, "app/view.py": "def later():\n    from .main import run\n"},
    )
    assert problems(root, FAKE_RULES) == ["import circle among 2 modules: app/main.py, app/view.py"]


def test_a_literal_import_module_counts(tmp_path: Path) -> None:
    root = write(
        tmp_path, {**CLEAN, "lib/store.py": "import importlib\nimportlib.import_module('app')\n"}
    )
    assert problems(root, FAKE_RULES) == [
        "lib/store.py (lib) imports app/__init__.py (app): no arrow"
    ]


def test_a_module_on_no_part_or_two_parts_is_reported(tmp_path: Path) -> None:
    rules = Rules(
        checked=("app", "lib", "extra.py"),
        roots=(".",),
        parts={"app": ("app/*.py",), "lib": ("lib/**", "app/view.py")},
        arrows={"app": ("lib",)},
        max_module_lines=20,
    )
    root = write(tmp_path, {**CLEAN, "extra.py": "", "app/deep/x.py": ""})
    found = problems(root, rules)
    assert "extra.py is on 0 parts [], not exactly one" in found
    assert "app/deep/x.py is on 0 parts [], not exactly one" in found  # `*` stays in a folder
    assert "app/view.py is on 2 parts ['app', 'lib'], not exactly one" in found


def test_an_import_of_an_unchecked_repository_file_is_reported(tmp_path: Path) -> None:
    root = write(
        tmp_path, {**CLEAN, "tests/helpers.py": "", "app/view.py": "import tests.helpers\n"}
    )
    assert problems(root, FAKE_RULES) == [
        "app/view.py imports tests/helpers.py, which is on no checked folder"
    ]


def test_arrows_chain_but_never_run_back(tmp_path: Path) -> None:
    rules = Rules(
        checked=("a", "b", "c"),
        roots=(".",),
        parts={"a": ("a/**",), "b": ("b/**",), "c": ("c/**",)},
        arrows={"a": ("b",), "b": ("c",)},
        max_module_lines=20,
    )
    root = write(tmp_path, {"a/x.py": "import c.z\n", "b/y.py": "", "c/z.py": "import b.y\n"})
    assert problems(root, rules) == ["c/z.py (c) imports b/y.py (b): no arrow"]


def test_a_client_reaches_the_package_only_through_its_facade(tmp_path: Path) -> None:
    rules = Rules(
        checked=FAKE_RULES.checked,
        roots=FAKE_RULES.roots,
        parts=FAKE_RULES.parts,
        arrows=FAKE_RULES.arrows,
        max_module_lines=20,
        facades=(Facade("lib", "lib.api", ("app/**",)),),
    )
    api = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .store import Store\n"
    files = {**CLEAN, "lib/api.py": api + "__all__ = ['Store']\n"}
    clean = {**files, "app/main.py": "from lib.api import Store\n", "app/view.py": ""}
    assert problems(write(tmp_path / "clean", clean), rules) == []
    bad = {
        **files,
        "app/main.py": "from lib.api import Other\nfrom lib import store\n",
        "app/view.py": "def later():\n    import lib.store\n",
    }
    assert problems(write(tmp_path / "bad", bad), rules) == [
        "app/main.py imports lib.api.Other: not in lib.api.__all__",
        "app/main.py imports lib.store: use lib.api",
        "app/view.py imports lib.store: use lib.api",
    ]


def test_a_module_over_the_limit_is_reported(tmp_path: Path) -> None:
    root = write(tmp_path, {**CLEAN, "lib/store.py": "x = 1\n" * 21})
    assert problems(root, FAKE_RULES) == ["lib/store.py has 21 lines (limit 20)"]


def test_the_page_block_is_read_and_checked(tmp_path: Path) -> None:
    page = (
        "text\n\n```toml\nchecked = ['a']\nroots = ['.']\n"
        "[parts]\na = ['a/**']\n[arrows]\na = ['nowhere']\n[limits]\nmax_module_lines = 5\n```\n"
    )
    with pytest.raises(AssertionError, match="nowhere"):
        read_rules(page)
    with pytest.raises(AssertionError, match="found 0"):
        read_rules("no block here\n")


@pytest.mark.parametrize(
    "nested",
    [
        "class C:\n    import lib.store\n",
        "try:\n    pass\nexcept ImportError:\n    import lib.store\n",
        "try:\n    pass\nfinally:\n    import lib.store\n",
        "with open('x') as f:\n    import lib.store\n",
        "match 1:\n    case 1:\n        import lib.store\n",
        "for _ in ():\n    pass\nelse:\n    import lib.store\n",
        "async def f():\n    from lib import store\n",
    ],
)
def test_imports_nested_anywhere_are_found(tmp_path: Path, nested: str) -> None:
    root = write(tmp_path, {**CLEAN, "app/view.py": nested})
    graph, _ = import_graph(root, FAKE_RULES)
    assert graph["app/view.py"] == {"lib/store.py"}
