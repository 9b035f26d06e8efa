"""The policy: `.memkeeper.yaml` parsed into a frozen, typed `Policy` (contract §2).

Imported only when the policy must be (re)parsed: it pulls ruamel.yaml and pathspec. Every
mistake in the file is an `Invalid` naming `FILE:LINE:COL`, the offending value and the fix.
Globs are gitignore-style, each rule compiled on its own so the first matching rule wins.
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, NoReturn, cast, get_args

import pathspec
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from memkeeper.errors import Invalid

FileClass = Literal["section-owned", "append-only", "generated", "private"]
FILE_CLASSES: tuple[str, ...] = get_args(FileClass)
DEFAULT_TTL = 120
MAX_TTL = 3600
ENTRY_FIELDS = ("date", "time", "agent", "text")
# Never descended into by `managed_files`, whatever the globs say.
SKIP_DIRS = frozenset({".git", ".memkeeper", ".venv", "node_modules", "__pycache__"})
# Dot-directories walked by default because the ecosystem keeps instructions there; any other
# dot-directory is walked only when a rule's glob names it (`.clinerules/**`).
DOT_DIRS = frozenset({".github", ".cursor", ".claude"})

_TOP_KEYS = ("version", "files", "leases", "templates")
_RULE_KEYS = ("path", "class", "strict", "sections", "entry_template")
_SECTION_KEYS = ("owners", "strict")
_LEASE_KEYS = ("default_ttl", "max_ttl")


@dataclass(frozen=True, slots=True)
class SectionRule:
    owners: tuple[str, ...] | None  # None: anyone may patch
    strict: bool


@dataclass(frozen=True, slots=True)
class FileRule:
    index: int
    path: str
    file_class: FileClass
    strict: bool
    sections: Mapping[str, SectionRule]
    entry_template: str | None
    regex: re.Pattern[str] = field(repr=False, compare=False)

    def matches(self, relpath: str) -> bool:
        return self.regex.search(relpath) is not None

    def section_rule(self, key: str) -> SectionRule | None:
        """The rule for section `key`: the exact key first, else one named by its last segment."""
        exact = self.sections.get(key)
        return exact if exact is not None else self.sections.get(key.rsplit("/", 1)[-1])


@dataclass(frozen=True, slots=True)
class Policy:
    rules: tuple[FileRule, ...]
    default_ttl: int = DEFAULT_TTL
    max_ttl: int = MAX_TTL
    templates: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def classify(self, relpath: str) -> FileRule | None:
        """The first rule matching a root-relative POSIX path; None means unmanaged.

        memkeeper's own state and git's are never managed, whatever a glob like `**` says.
        """
        path = relpath.removeprefix("./")
        if path.split("/", 1)[0] in (".git", ".memkeeper"):
            return None
        return next((rule for rule in self.rules if rule.matches(path)), None)

    def managed_globs(self) -> tuple[str, ...]:
        """The rules' globs in rule order, as written."""
        return tuple(rule.path for rule in self.rules)

    def named_dirs(self) -> frozenset[str]:
        """Every literal directory name the globs mention (lets a walk enter `.clinerules/`)."""
        return frozenset(seg for rule in self.rules for seg in rule.path.split("/") if seg)


def empty_policy() -> Policy:
    """The policy when no `.memkeeper.yaml` exists: nothing is managed."""
    return Policy(rules=())


def round_trip_yaml() -> YAML:
    """The ruamel.yaml settings under which an unedited policy dumps back byte-identical."""
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.preserve_quotes = True
    return yaml


def load_policy(data: bytes, source: str = ".memkeeper.yaml") -> Policy:
    """Parse and validate a policy file's bytes; raises `Invalid` naming FILE:LINE:COL."""
    return _Parser(source).policy(data)


def root_policy(root: str | os.PathLike[str]) -> Policy:
    """The policy of a memory root: its `.memkeeper.yaml`, or the empty policy without one."""
    try:
        data = Path(root, ".memkeeper.yaml").read_bytes()
    except FileNotFoundError:
        return empty_policy()
    return load_policy(data)


Pos = tuple[int, int]  # 0-based line, column, as ruamel reports them


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, pos: Pos, what: str, todo: str) -> NoReturn:
        line, column = pos[0] + 1, pos[1] + 1
        message = f"{self.source}:{line}:{column}: {what} — {todo}"
        raise Invalid(message, path=self.source, line=line, column=column)

    def policy(self, data: bytes) -> Policy:
        top = self.document(data)
        self.known_keys(top, _TOP_KEYS, "at the top level")
        self.version(top)
        default_ttl, max_ttl = self.leases(top)
        return Policy(self.files(top), default_ttl, max_ttl, self.templates(top))

    def document(self, data: bytes) -> CommentedMap:
        try:
            doc = round_trip_yaml().load(data.decode("utf-8-sig"))
        except UnicodeDecodeError as err:
            line = data[: err.start].count(b"\n")
            self.fail((line, 0), "the file is not UTF-8", "save it as UTF-8")
        except MarkedYAMLError as err:
            self.yaml_error(err)
        except YAMLError as err:
            self.fail((0, 0), f"bad YAML: {err}", "fix the YAML syntax")
        if not isinstance(doc, CommentedMap):
            got = "an empty file" if doc is None else _show(doc)
            self.fail(_pos(doc), f"the policy must be a mapping, not {got}", _START)
        return doc

    def yaml_error(self, err: MarkedYAMLError) -> NoReturn:
        mark = err.problem_mark or err.context_mark
        pos = (mark.line, mark.column) if mark is not None else (0, 0)
        problem = " ".join(part for part in (err.context, err.problem) if part)
        self.fail(pos, f"bad YAML: {problem}", "fix the YAML syntax")

    def known_keys(self, node: CommentedMap, allowed: tuple[str, ...], where: str) -> None:
        for key in node:
            if key not in allowed:
                hint = _did_you_mean(key, allowed)
                todo = f"{hint}valid keys are {', '.join(allowed)}"
                self.fail(node.lc.key(key), f"unknown key {_show(key)} {where}", todo)

    def version(self, top: CommentedMap) -> None:
        if "version" not in top:
            self.fail(_pos(top), "`version` is missing", "add `version: 1` at the top")
        value = top["version"]
        if type(value) is not int or value != 1:
            where = top.lc.value("version")
            self.fail(where, f"unsupported version {_show(value)}", "write `version: 1`")

    def files(self, top: CommentedMap) -> tuple[FileRule, ...]:
        rules = top.get("files")
        if rules is None:
            return ()
        if not isinstance(rules, CommentedSeq):
            where = top.lc.value("files")
            self.fail(where, f"`files` must be a list, not {_show(rules)}", _RULE_TODO)
        return tuple(self.rule(rules, index) for index in range(len(rules)))

    def rule(self, rules: CommentedSeq, index: int) -> FileRule:
        node = rules[index]
        where = rules.lc.item(index)
        if not isinstance(node, CommentedMap):
            self.fail(where, f"files rule {index + 1} is {_show(node)}, not a mapping", _RULE_TODO)
        self.known_keys(node, _RULE_KEYS, "in a files rule")
        for key in ("path", "class"):
            if key not in node:
                self.fail(where, f"files rule {index + 1} has no `{key}`", _RULE_TODO)
        glob, file_class = self.glob(node), self.file_class(node)
        sections = self.sections(node, file_class)
        template = self.entry_template(node, file_class)
        strict = self.flag(node, "strict")
        return FileRule(index, glob[0], file_class, strict, sections, template, glob[1])

    def glob(self, node: CommentedMap) -> tuple[str, re.Pattern[str]]:
        value, where = node["path"], node.lc.value("path")
        if not isinstance(value, str) or not value.strip():
            what = f"empty or non-text glob {_show(value)}"
            self.fail(where, what, "write a gitignore-style pattern like memory/**")
        if value.startswith("!"):
            todo = "a rule selects files; give the exceptions an earlier rule (first match wins)"
            self.fail(where, f"negated glob {_show(value)} is not supported", todo)
        try:
            regex = _compile_glob(value)
        except (ValueError, re.error) as err:
            self.fail(where, f"bad glob {_show(value)} ({err})", _GLOB_TODO)
        if regex is None:
            self.fail(where, f"glob {_show(value)} matches nothing", _GLOB_TODO)
        return value, regex

    def file_class(self, node: CommentedMap) -> FileClass:
        value = node["class"]
        if not isinstance(value, str) or value not in FILE_CLASSES:
            todo = f"use one of {', '.join(FILE_CLASSES)}"
            self.fail(node.lc.value("class"), f"unknown class {_show(value)}", todo)
        return cast("FileClass", value)

    def flag(self, node: CommentedMap, key: str) -> bool:
        value = node.get(key, False)
        if not isinstance(value, bool):
            what = f"`{key}` must be true or false, not {_show(value)}"
            self.fail(node.lc.value(key), what, _BOOL)
        return value

    def sections(self, node: CommentedMap, file_class: FileClass) -> Mapping[str, SectionRule]:
        value = node.get("sections")
        if value is None:
            return MappingProxyType({})
        where = node.lc.value("sections")
        if not isinstance(value, CommentedMap):
            self.fail(where, f"`sections` must be a mapping, not {_show(value)}", _SECTIONS_TODO)
        if file_class in ("append-only", "private"):
            todo = "remove `sections` (only section-owned and generated files are patched)"
            self.fail(where, f"section rules on a {file_class} file", todo)
        return MappingProxyType({self.section_key(value, k): self.section(value, k) for k in value})

    def section_key(self, sections: CommentedMap, key: Any) -> str:
        if not isinstance(key, str) or not key or any(ch.isspace() for ch in key):
            todo = "use the section's key, e.g. release-process or project/build (quote numbers)"
            self.fail(sections.lc.key(key), f"bad section key {_show(key)}", todo)
        return key

    def section(self, sections: CommentedMap, key: str) -> SectionRule:
        node = sections[key]
        if node is None:
            return SectionRule(owners=None, strict=False)
        if not isinstance(node, CommentedMap):
            where = sections.lc.value(key)
            self.fail(where, f"section rule {_show(key)} is {_show(node)}", _SECTIONS_TODO)
        self.known_keys(node, _SECTION_KEYS, f"in section rule {_show(key)}")
        return SectionRule(owners=self.owners(node), strict=self.flag(node, "strict"))

    def owners(self, node: CommentedMap) -> tuple[str, ...] | None:
        value = node.get("owners")
        if value is None:
            return None
        where = node.lc.value("owners")
        if not isinstance(value, CommentedSeq):
            todo = f"write a list of agent ids, e.g. owners: [{value}]"
            self.fail(where, f"`owners` must be a list, not {_show(value)}", todo)
        for index, owner in enumerate(value):
            if not isinstance(owner, str) or not owner:
                todo = "each owner is an agent id, as `--agent` gives it"
                self.fail(value.lc.item(index), f"owner {_show(owner)} is not text", todo)
        return tuple(value)

    def entry_template(self, node: CommentedMap, file_class: FileClass) -> str | None:
        value = node.get("entry_template")
        if value is None:
            return None
        where = node.lc.value("entry_template")
        if file_class != "append-only":
            todo = "remove it, or make the rule `class: append-only`"
            self.fail(where, f"`entry_template` on a {file_class} file", todo)
        problem = _template_problem(value)
        if problem:
            self.fail(where, f"bad entry_template {_show(value)}: {problem}", _TEMPLATE_TODO)
        return str(value)

    def leases(self, top: CommentedMap) -> tuple[int, int]:
        node = top.get("leases")
        if node is None:
            return DEFAULT_TTL, MAX_TTL
        if not isinstance(node, CommentedMap):
            todo = "write `leases:` with `default_ttl:` and `max_ttl:` under it"
            what = f"`leases` must be a mapping, not {_show(node)}"
            self.fail(top.lc.value("leases"), what, todo)
        self.known_keys(node, _LEASE_KEYS, "in leases")
        default_ttl, max_ttl = self.ttl(node, "default_ttl"), self.ttl(node, "max_ttl")
        if default_ttl > max_ttl:
            what = f"leases.default_ttl {default_ttl} is greater than leases.max_ttl {max_ttl}"
            self.fail(node.lc.value("default_ttl"), what, "lower default_ttl or raise max_ttl")
        return default_ttl, max_ttl

    def ttl(self, node: CommentedMap, key: str) -> int:
        fallback = DEFAULT_TTL if key == "default_ttl" else MAX_TTL
        value = node.get(key, fallback)
        if type(value) is not int or value <= 0:
            what = f"leases.{key} must be a positive whole number of seconds, not {_show(value)}"
            self.fail(node.lc.value(key), what, f"write e.g. `{key}: {fallback}`")
        return value

    def templates(self, top: CommentedMap) -> Mapping[str, str]:
        node = top.get("templates")
        if node is None:
            return MappingProxyType({})
        if not isinstance(node, CommentedMap):
            what = f"`templates` must map names to template text, not {_show(node)}"
            self.fail(top.lc.value("templates"), what, "write `NAME: |` and the template below")
        for name, text in node.items():
            if not isinstance(name, str) or not isinstance(text, str):
                what = f"template {_show(name)} must be named text, not {_show(text)}"
                self.fail(node.lc.value(name), what, "quote it, or write it as a `|` block")
            self.region_template(node, name, text)
        return MappingProxyType(dict(node))

    def region_template(self, node: CommentedMap, name: str, text: str) -> None:
        """A template for generated regions: a usable source name and valid syntax."""
        from memkeeper.templates import SOURCES, TemplateError, parse_template

        if name in SOURCES or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
            what = f"template name {_show(name)} is built in or not a source name"
            todo = "use letters, digits, '_', '.', '-', and not claims, events or reconciliations"
            self.fail(node.lc.key(name), what, todo)
        try:
            parse_template(text)
        except TemplateError as err:
            what, _, todo = str(err).partition(" — ")
            self.fail(node.lc.value(name), f"template {_show(name)}: {what}", todo)


_START = "start with `version: 1` and a `files:` list"
_RULE_TODO = "write each rule as `- path: GLOB` with `class: CLASS` under it"
_BOOL = "write true or false"
_GLOB_TODO = "fix the gitignore-style pattern (git help gitignore)"
_SECTIONS_TODO = "write `sections:` then `KEY: {owners: [AGENT], strict: true}`"
_TEMPLATE_TODO = "use only {date} {time} {agent} {text}, include {text}, and write {{ }} for braces"


def _compile_glob(glob: str) -> re.Pattern[str] | None:
    """The rule's regex as pathspec translates it; None for a pattern git would ignore."""
    pattern = pathspec.GitIgnoreSpec.from_lines([glob]).patterns[0]
    regex = getattr(pattern, "regex", None)
    if pattern.include is not True or not isinstance(regex, re.Pattern):
        return None
    return regex


def _template_problem(value: object) -> str | None:
    if not isinstance(value, str):
        return "it is not text"
    try:
        fields = [f for f in string.Formatter().parse(value) if f[1] is not None]
    except ValueError as err:
        return str(err)
    for _, name, spec, conversion in fields:
        if name not in ENTRY_FIELDS:
            return f"unknown placeholder {{{name}}}"
        if spec or conversion:
            return f"placeholder {{{name}}} takes no format spec or conversion"
    return None if any(f[1] == "text" for f in fields) else "it has no {text}"


def _pos(node: object) -> Pos:
    lc = getattr(node, "lc", None)
    return (lc.line, lc.col) if lc is not None else (0, 0)


def _show(value: object) -> str:
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return str(value)


def _did_you_mean(key: object, allowed: tuple[str, ...]) -> str:
    import difflib

    close = difflib.get_close_matches(str(key), allowed, n=1)
    return f"did you mean '{close[0]}'? " if close else ""


def _presets_dir() -> Path:
    here = Path(__file__).parent
    installed = here / "policies"
    return installed if installed.is_dir() else here.parent / "policies"


def preset_names() -> list[str]:
    """The presets shipped with memkeeper, by name (`default`, `cline-memory-bank`, …)."""
    return sorted(path.stem for path in _presets_dir().glob("*.yaml"))


def preset_bytes(name: str) -> bytes:
    """A preset's file, verbatim (comments kept) for `memkeeper init --preset NAME`."""
    names = preset_names()
    if name not in names:
        message = f"unknown preset '{name}' — choose one of: {', '.join(names)}"
        raise Invalid(message, preset=name, presets=names)
    return (_presets_dir() / f"{name}.yaml").read_bytes()


def managed_files(policy: Policy, root: Path) -> list[tuple[str, FileRule]]:
    """Every regular file (not symlink) under `root` that a rule matches, sorted by path."""
    found = []
    for relpath in _walk(root, "", policy.named_dirs()):
        rule = policy.classify(relpath)
        if rule is not None:
            found.append((relpath, rule))
    return sorted(found, key=lambda pair: pair[0])


def _walk(root: Path, prefix: str, named: frozenset[str]) -> Iterator[str]:
    try:
        with os.scandir(root / prefix) as scan:
            entries = list(scan)
    except OSError:  # a directory removed or unreadable mid-walk holds nothing to manage
        return
    for entry in entries:
        relpath = f"{prefix}{entry.name}"
        if entry.is_file(follow_symlinks=False):
            yield relpath
        elif entry.is_dir(follow_symlinks=False) and _walkable(entry.name, named):
            yield from _walk(root, relpath + "/", named)


def _walkable(name: str, named: frozenset[str]) -> bool:
    if name in SKIP_DIRS:
        return False
    return not name.startswith(".") or name in DOT_DIRS or name in named
