"""One home per concept: the helper, writer or identity lives in one module and every other
module uses it (a second copy is how wording, escaping and identities drift apart)."""

from __future__ import annotations

import ast
import sys
from importlib import resources
from pathlib import Path

import click
import pytest

import dlt_contract_ops
from dlt_contract_ops.core.columns import DLT_COLUMNS, DLT_PREFIX, free_name
from dlt_contract_ops.dlt_private import NEEDED
from dlt_contract_ops.errors import ConfigError, did_you_mean
from dlt_contract_ops.model.findings import DriftFinding, finding_id
from dlt_contract_ops.settings.values import FRACTION, NON_NEGATIVE, WHOLE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PACKAGE = Path(dlt_contract_ops.__file__).parent
ROOT = PACKAGE.parent


def _modules() -> dict[str, ast.Module]:
    return {
        path.relative_to(PACKAGE).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


MODULES = _modules()


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the string constants that are docstrings (their examples may name anything)."""
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
            body[0].value, ast.Constant
        ):
            out.add(id(body[0].value))
    return out


#: each module's nodes and docstring ids, walked once for all the checks below
NODES = {name: (list(ast.walk(tree)), _docstrings(tree)) for name, tree in MODULES.items()}


def _where(predicate: object) -> list[str]:
    """The modules with a node for which `predicate(node, tree)` holds."""
    hits = []
    for name, (nodes, docs) in NODES.items():
        if any(
            predicate(node, docs)  # type: ignore[operator]  # a callable, typed loosely here
            for node in nodes
        ):
            hits.append(name)
    return hits


def _imports(module: str) -> object:
    def check(node: ast.AST, _: set[int]) -> bool:
        if isinstance(node, ast.Import):
            return any(a.name == module or a.name.startswith(module + ".") for a in node.names)
        if isinstance(node, ast.ImportFrom):
            return node.module is not None and (
                node.module == module or node.module.startswith(module + ".")
            )
        return False

    return check


def _defines(name: str) -> object:
    def check(node: ast.AST, _: set[int]) -> bool:
        return isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name

    return check


def _literal(*values: str) -> object:
    def check(node: ast.AST, docs: set[int]) -> bool:
        return isinstance(node, ast.Constant) and node.value in values and id(node) not in docs

    return check


#: dlt's private members the package uses (`dlt_private.NEEDED`, and the instance attributes
#: it reads by name)
DLT_PRIVATE = frozenset({m.name for m in NEEDED if m.name.startswith("_") and m.name != "__init__"}
                        | {"_hints", "_pipe", "_schema_storage_config", "_sqlite_dataset_filename",
                           "_curr_pass"})


def _dlt_private(node: ast.AST, docs: set[int]) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in DLT_PRIVATE
    return isinstance(node, ast.Constant) and node.value in DLT_PRIVATE and id(node) not in docs


def _formats_load_ids(node: ast.AST, _: set[int]) -> bool:
    """An f-string with a `.7f` field: an epoch written as `_dlt_load_id` text."""
    return isinstance(node, ast.FormattedValue) and isinstance(node.format_spec, ast.JoinedStr) \
        and any(isinstance(v, ast.Constant) and v.value == ".7f" for v in node.format_spec.values)


def _named(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else \
        node.attr if isinstance(node, ast.Attribute) else ""


def _parses_load_ids(node: ast.AST, _: set[int]) -> bool:
    """`float(<a load id>)`, or `fromtimestamp(float(...))`: a load id read as a time."""
    if not isinstance(node, ast.Call):
        return False
    if _named(node.func) == "float":
        return any("load" in _named(a) for a in node.args)
    return _named(node.func) == "fromtimestamp" and any(
        isinstance(a, ast.Call) and _named(a.func) == "float" for a in node.args)


def _window_arithmetic(node: ast.AST, _: set[int]) -> bool:
    """A moment plus or minus removal's window settings (`Windows` does that sum)."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub) and any(
        isinstance(side, ast.Attribute) and side.attr in ("recent_window", "baseline_window")
        for side in (node.left, node.right))


def _run_clock(node: ast.AST, _: set[int]) -> bool:
    """`<ctx>.now or datetime.now(...)`, `... if <ctx>.now else time.time()`: the run's
    clock read by hand (`SourceInput.clock` reads it)."""
    if isinstance(node, ast.IfExp):
        return isinstance(node.test, ast.Attribute) and node.test.attr == "now"
    return isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) \
        and isinstance(node.values[0], ast.Attribute) and node.values[0].attr == "now"


def _state_path(node: ast.AST, _: set[int]) -> bool:
    """`<a path> / "contract_ops"`: a path built under dlt's data dir by hand."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) \
        and isinstance(node.right, ast.Constant) and node.right.value == "contract_ops"


def _project_slug(node: ast.AST, _: set[int]) -> bool:
    """A project folder's name made safe for a file name (`statefile.project_key`)."""
    return isinstance(node, ast.Constant) and node.value == "[^A-Za-z0-9_.-]+"


def test_the_sweep_sees_the_package() -> None:
    # the scans below cannot pass by scanning nothing
    assert "errors.py" in MODULES
    assert "output/junit.py" in MODULES
    assert len(MODULES) > 100


@pytest.mark.parametrize(
    ("what", "predicate", "home"),
    [
        # errors.py: did you mean; suggest/found.py: the model patch's unified diff
        ("difflib (did you mean)", _imports("difflib"), ["errors.py", "suggest/found.py"]),
        ("a did-you-mean helper", _defines("did_you_mean"), ["errors.py"]),
        ("a closest-match helper", _defines("closest"), ["errors.py"]),
        ("dlt's column names", _literal(*DLT_COLUMNS, DLT_PREFIX), ["core/columns.py"]),
        ("a free alias", _defines("free_name"), ["core/columns.py"]),
        ("the old free alias", _defines("_free"), []),
        ("an XML writer (JUnit)", _imports("xml.etree"), ["output/junit.py"]),
        ("a JUnit root", _literal("testsuites"), ["output/junit.py"]),
        ("a workflow-command escape", _literal("%0A"), ["output/github.py"]),
        ("a finding identity", _defines("finding_id"), ["model/identity.py"]),
        ("a hand-written HTML escaper", _defines("esc"), []),
        ("html.escape", _imports("html"), []),
        ("a hand-checked fraction", _defines("as_fraction"), []),
        ("a hand-checked whole number", _defines("_positive_int"), []),
        ("dlt's private members", _dlt_private, ["dlt_private.py"]),
        ("dlt's normalizer", _imports("dlt.normalize"), ["dlt_private.py"]),
        ("dlt's script reader", _imports("dlt.reflection"), ["dlt_private.py"]),
        ("dlt's pipe iterator", _imports("dlt.extract.pipe_iterator"), ["dlt_private.py"]),
        ("an epoch written as a load id", _formats_load_ids, ["core/timeaxis.py"]),
        ("a load id read as a time", _parses_load_ids, ["core/timeaxis.py"]),
        ("removal's window bounds", _window_arithmetic, []),
        ("the run's clock", _run_clock, ["detection/source_input.py"]),
        ("the folder under dlt's data dir", _state_path, ["statefile.py"]),
        ("a project's file name there", _project_slug, ["statefile.py"]),
        # the alert lifecycle and the report's "resolved since the last sweep" ask one rule
        ("what a sweep resolves", _defines("resolves"), ["sinks/lifecycle.py"]),
        ("the sweep a finding is compared with", _defines("last_looked"), ["core/history.py"]),
    ],
)
def test_one_home(what: str, predicate: object, home: list[str]) -> None:
    assert _where(predicate) == home, what


def test_one_formats_tuple() -> None:
    """Only `output/__init__.py` spells out the output formats."""

    def spelled(node: ast.AST, _: set[int]) -> bool:
        return isinstance(node, ast.Tuple) and {"junit", "github"} <= {
            e.value for e in node.elts if isinstance(e, ast.Constant)
        }

    assert _where(spelled) == ["output/__init__.py"]


# -- the homes behave ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "choices", "kwargs", "expected"),
    [
        ("sentri", ["logging", "sentry"], {}, " Did you mean `sentry`?"),
        ("sentri", ("sentry",), {"show": lambda n: f"'{n}'"}, " Did you mean 'sentry'?"),
        ("github_sorce", {"github_source", "issues"}, {"show": lambda n: f"`m:{n}`"},
         " Did you mean `m:github_source`?"),
        ("zzz", ["sentry"], {}, ""),
        ("sentri", [], {}, ""),
        ("Europe/Berln", ["Europe/Berlin"], {"cutoff": 0.99}, ""),  # a strict cutoff
    ],
)
def test_did_you_mean(word: str, choices: object, kwargs: dict[str, object],
                      expected: str) -> None:
    assert did_you_mean(word, choices, **kwargs) == expected  # type: ignore[arg-type]


def test_free_name_takes_the_name_it_returns() -> None:
    taken = {"_co_rows", "id"}
    assert [free_name("_co_rows", taken), free_name("_co_rows", taken)] == [
        "__co_rows", "___co_rows"
    ]
    assert free_name("x", taken) == "x"
    assert "x" in taken


def test_the_finding_id_is_the_one_acks_wrote() -> None:
    finding = DriftFinding(drift_type="additive", source="shop", resource="Orders",
                           table="orders", columns=["b", "a"])
    assert finding.id == finding_id("shop", "orders", "additive", ["a", "b"]) == "98d0d03472bc"
    assert not hasattr(finding, "key")


@pytest.mark.parametrize(
    ("typed", "value", "expected"),
    [
        (FRACTION, 0.2, 0.2),
        (FRACTION, "0.5", 0.5),
        (FRACTION, 1, 1.0),
        (FRACTION, 1.5, "`k` = 1.5 must be a fraction between 0 and 1, e.g. 0.2."),
        (FRACTION, True, "`k` = True must be a fraction between 0 and 1, e.g. 0.2."),
        (FRACTION, "nan", "`k` = 'nan' must be a fraction between 0 and 1, e.g. 0.2."),
        (FRACTION, "half", "`k` = 'half' must be a fraction between 0 and 1, e.g. 0.2."),
        (NON_NEGATIVE, 3, 3.0),
        (NON_NEGATIVE, -1, "`k` must be a number >= 0, got -1."),
        (NON_NEGATIVE, float("inf"), "`k` must be a number >= 0, got inf."),
        (NON_NEGATIVE, False, "`k` must be a number >= 0, got False."),
        (WHOLE, 5, 5),
        (WHOLE, 0, "`k` must be a whole number >= 1, got 0."),
        (WHOLE, 5.0, "`k` must be a whole number >= 1, got 5.0."),
        (WHOLE, "5", "`k` must be a whole number >= 1, got '5'."),
        (WHOLE, True, "`k` must be a whole number >= 1, got True."),
    ],
)
def test_typed_settings(typed: object, value: object, expected: object) -> None:
    if isinstance(expected, str):
        with pytest.raises(ConfigError) as info:
            typed.read(value, "`k`")  # type: ignore[attr-defined]
        assert str(info.value) == expected
    else:
        assert typed.read(value, "`k`") == expected  # type: ignore[attr-defined]


def test_the_html_templates_ship_as_package_data() -> None:
    templates = resources.files("dlt_contract_ops.output") / "templates"
    names = sorted(p.name for p in templates.iterdir() if p.name.endswith(".j2"))
    assert names == ["chart.html.j2", "filter.js.j2", "finding.html.j2", "report.html.j2"]
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = pyproject["tool"]["setuptools"]["package-data"]["dlt_contract_ops"]
    assert "output/templates/*.html.j2" in shipped
    assert "output/templates/*.js.j2" in shipped
    declared = " ".join(pyproject["project"]["dependencies"])
    assert "jinja2" in declared
    assert "tomlkit" in declared


def _source_options() -> dict[str, click.Option]:
    """Every command's `-s/--source` option, by the command's path (`gate check`)."""
    from dlt_contract_ops.commands import main

    found: dict[str, click.Option] = {}

    def walk(command: click.Command, path: str) -> None:
        for p in command.params:
            if isinstance(p, click.Option) and "-s" in p.opts:
                found[path] = p
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, f"{path} {name}".strip())

    walk(main, "")
    return found


def test_the_source_option_says_what_it_takes_in_one_wording() -> None:
    """`-s NAME` of a one-table command (`profile`, `gate check`) and of a sweep (repeatable)
    reads one shared text each (`commands.common`), so the commands cannot drift apart."""
    from dlt_contract_ops.commands.common import ONE_SOURCE_HELP, SOURCES_HELP

    options = _source_options()
    one = sorted(path for path, o in options.items() if not o.multiple)
    assert one == ["contract check", "contract lint", "contract snapshot", "gate check",
                   "gate finish", "profile", "profiles rebuild"]
    for path, option in options.items():
        assert option.help == (SOURCES_HELP if option.multiple else ONE_SOURCE_HELP), path
