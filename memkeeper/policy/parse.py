"""`.memkeeper.yaml` → `Policy`: validation with an error naming FILE:LINE:COL for every mistake.

Loaded with ruamel.yaml's round-trip loader (which knows where every node is); each rule's
gitignore-style glob is compiled on its own with pathspec, so the first matching rule wins.
"""

from __future__ import annotations

import difflib
import re
import string
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NoReturn, cast

import pathspec
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from memkeeper.errors import PolicyInvalid
from memkeeper.policy import eventkeys, meetingkeys, workkeys
from memkeeper.policy.idlekeys import idle_settings
from memkeeper.policy.leases import lease_settings
from memkeeper.policy.model import (
    ENTRY_FIELDS,
    FILE_CLASSES,
    GIT_FORMS,
    FileClass,
    FileRule,
    GitForm,
    Policy,
    SectionRule,
)
from memkeeper.policy.semantic import semantic_threshold
from memkeeper.policy.storeurl import (
    CREDENTIALS_TODO,
    SPELLING,
    STORE_TODO,
    names_credentials,
    parse_store_url,
    policy_store,
)
from memkeeper.policy.values import show
from memkeeper.regions.templates import SOURCES, TemplateError, parse_template

_TOP_KEYS = ("version", "files", "leases", "templates", "store", "signatures", "semantic")
_SIGNATURES = ("required", "optional")
_RULE_KEYS = ("path", "class", "strict", "sections", "entry_template", "git")
_SECTION_KEYS = ("owners", "strict")


def round_trip_yaml() -> YAML:
    """The ruamel.yaml settings under which an unedited policy dumps back byte-identical."""
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.preserve_quotes = True
    return yaml


def parse(data: bytes, source: str) -> Policy:
    """Parse and validate a policy file's bytes; raises `Invalid` naming FILE:LINE:COL."""
    return _Parser(source).policy(data)


Pos = tuple[int, int]  # 0-based line, column, as ruamel reports them


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, pos: Pos, what: str, todo: str) -> NoReturn:
        line, column = pos[0] + 1, pos[1] + 1
        raise PolicyInvalid(self.source, line, column, what, todo)

    def policy(self, data: bytes) -> Policy:
        top = self.document(data)
        self.no_credentials(top)
        self.known_keys(top, (*_TOP_KEYS, "meetings", "work", "events"), "at the top level")
        self.version(top)
        default_ttl, max_ttl, grace, timeout = lease_settings(top, self.fail, self.known_keys)
        meet, deadline, keep_days, keep = meetingkeys.meetings(top, self.fail, self.known_keys)
        event_keep_days, event_keep = eventkeys.events(top, self.fail, self.known_keys)
        idle, idle_release = idle_settings(top, self.fail)
        work_keep_days, work_keep = workkeys.work(top, self.fail, self.known_keys)
        store, threshold = self.store(top, data), semantic_threshold(top, self.fail)
        self.signatures(top)
        files, templates = self.files(top), self.templates(top)
        return Policy(
            files, default_ttl, max_ttl, templates, store, threshold, takeover_grace=grace,
            verify_timeout=timeout, meet_on_overlap=meet, meeting_deadline=deadline,
            idle_after=idle, idle_release_after=idle_release,
            meeting_keep_days=keep_days, meeting_keep=keep,
            work_keep_days=work_keep_days, work_keep=work_keep,
            event_keep_days=event_keep_days, event_keep=event_keep,
        )  # fmt: skip

    def store(self, top: CommentedMap, data: bytes) -> str | None:
        """``store: etcd://…`` (reference §12), on one line of its own at the top level:
        commands find it with ``storeurl.policy_store``, without this parser."""
        if "store" not in top:
            return None
        value = top["store"]
        pos = top.lc.value("store")
        if not isinstance(value, str):
            self.fail(pos, f"'store' must be {SPELLING}, not {show(value)}", STORE_TODO)
        try:
            parse_store_url(value)
        except ValueError as err:
            self.fail(pos, f"'store': {err}", STORE_TODO)
        if policy_store(data) != value:
            self.fail(
                pos,
                "'store' must be written on one line of its own: store: etcd://…",
                "write the URL on the key's line, plain or quoted",
            )
        return value

    def signatures(self, top: CommentedMap) -> None:
        """``signatures: required`` (every write needs a trusted key) or ``optional``; read
        on the write path by ``identity.signers.required_by``, without this parser."""
        if "signatures" not in top:
            return
        value = top["signatures"]
        if value not in _SIGNATURES or top.lc.value("signatures")[0] != top.lc.key("signatures")[0]:
            self.fail(
                top.lc.value("signatures"),
                f"'signatures' must be required or optional, on the key's line, not {show(value)}",
                "write signatures: required (writes need a key .memkeeper-signers trusts) or "
                "remove the key",
            )

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
            got = "an empty file" if doc is None else show(doc)
            self.fail(_pos(doc), f"the policy must be a mapping, not {got}", _START)
        return doc

    def yaml_error(self, err: MarkedYAMLError) -> NoReturn:
        mark = err.problem_mark or err.context_mark
        pos = (mark.line, mark.column) if mark is not None else (0, 0)
        problem = " ".join(part for part in (err.context, err.problem) if part)
        self.fail(pos, f"bad YAML: {problem}", "fix the YAML syntax")

    def no_credentials(self, top: CommentedMap) -> None:
        """A top-level key (or a key of ``store:``) that would hold a password, a user or a
        certificate: refused, by its name alone (the value is never repeated)."""
        store = top.get("store")
        for node in (top, store) if isinstance(store, CommentedMap) else (top,):
            for key in node:
                if key not in _TOP_KEYS and names_credentials(str(key)):
                    self.fail(
                        node.lc.key(key),
                        f"{show(key)}: the policy file never holds etcd credentials (it is "
                        "committed)",
                        CREDENTIALS_TODO + " (reference §12)",
                    )

    def known_keys(self, node: CommentedMap, allowed: tuple[str, ...], where: str) -> None:
        for key in node:
            if key not in allowed:
                hint = _did_you_mean(key, allowed)
                todo = f"{hint}valid keys are {', '.join(allowed)}"
                self.fail(node.lc.key(key), f"unknown key {show(key)} {where}", todo)

    def version(self, top: CommentedMap) -> None:
        if "version" not in top:
            self.fail(_pos(top), "`version` is missing", "add `version: 1` at the top")
        value = top["version"]
        if type(value) is not int or value != 1:
            where = top.lc.value("version")
            self.fail(where, f"unsupported version {show(value)}", "write `version: 1`")

    def files(self, top: CommentedMap) -> tuple[FileRule, ...]:
        rules = top.get("files")
        if rules is None:
            return ()
        if not isinstance(rules, CommentedSeq):
            where = top.lc.value("files")
            self.fail(where, f"`files` must be a list, not {show(rules)}", _RULE_TODO)
        return tuple(self.rule(rules, index) for index in range(len(rules)))

    def rule(self, rules: CommentedSeq, index: int) -> FileRule:
        node = rules[index]
        where = rules.lc.item(index)
        if not isinstance(node, CommentedMap):
            self.fail(where, f"files rule {index + 1} is {show(node)}, not a mapping", _RULE_TODO)
        self.known_keys(node, _RULE_KEYS, "in a files rule")
        for key in ("path", "class"):
            if key not in node:
                self.fail(where, f"files rule {index + 1} has no `{key}`", _RULE_TODO)
        glob, file_class = self.glob(node), self.file_class(node)
        sections = self.sections(node, file_class)
        template = self.entry_template(node, file_class)
        strict = self.flag(node, "strict")
        git = self.git_form(node, file_class)
        return FileRule(index, glob[0], file_class, strict, sections, template, glob[1], git)

    def glob(self, node: CommentedMap) -> tuple[str, re.Pattern[str]]:
        value, where = node["path"], node.lc.value("path")
        if not isinstance(value, str) or not value.strip():
            what = f"empty or non-text glob {show(value)}"
            self.fail(where, what, "write a gitignore-style pattern like memory/**")
        if value.startswith("!"):
            todo = "a rule selects files; give the exceptions an earlier rule (first match wins)"
            self.fail(where, f"negated glob {show(value)} is not supported", todo)
        try:
            regex = _compile_glob(value)
        except (ValueError, re.error) as err:
            self.fail(where, f"bad glob {show(value)} ({err})", _GLOB_TODO)
        if regex is None:
            self.fail(where, f"glob {show(value)} matches nothing", _GLOB_TODO)
        return value, regex

    def file_class(self, node: CommentedMap) -> FileClass:
        value = node["class"]
        if not isinstance(value, str) or value not in FILE_CLASSES:
            todo = f"use one of {', '.join(FILE_CLASSES)}"
            self.fail(node.lc.value("class"), f"unknown class {show(value)}", todo)
        return cast("FileClass", value)

    def flag(self, node: CommentedMap, key: str) -> bool:
        value = node.get(key, False)
        if not isinstance(value, bool):
            what = f"`{key}` must be true or false, not {show(value)}"
            self.fail(node.lc.value(key), what, _BOOL)
        return value

    def sections(self, node: CommentedMap, file_class: FileClass) -> Mapping[str, SectionRule]:
        value = node.get("sections")
        if value is None:
            return MappingProxyType({})
        where = node.lc.value("sections")
        if not isinstance(value, CommentedMap):
            self.fail(where, f"`sections` must be a mapping, not {show(value)}", _SECTIONS_TODO)
        if file_class in ("append-only", "private"):
            todo = "remove `sections` (only section-owned and generated files are patched)"
            self.fail(where, f"section rules on a {file_class} file", todo)
        return MappingProxyType({self.section_key(value, k): self.section(value, k) for k in value})

    def section_key(self, sections: CommentedMap, key: Any) -> str:
        if not isinstance(key, str) or not key or any(ch.isspace() for ch in key):
            todo = "use the section's key, e.g. release-process or project/build (quote numbers)"
            self.fail(sections.lc.key(key), f"bad section key {show(key)}", todo)
        return key

    def section(self, sections: CommentedMap, key: str) -> SectionRule:
        node = sections[key]
        if node is None:
            return SectionRule(owners=None, strict=False)
        if not isinstance(node, CommentedMap):
            where = sections.lc.value(key)
            self.fail(where, f"section rule {show(key)} is {show(node)}", _SECTIONS_TODO)
        self.known_keys(node, _SECTION_KEYS, f"in section rule {show(key)}")
        return SectionRule(owners=self.owners(node), strict=self.flag(node, "strict"))

    def owners(self, node: CommentedMap) -> tuple[str, ...] | None:
        value = node.get("owners")
        if value is None:
            return None
        where = node.lc.value("owners")
        if not isinstance(value, CommentedSeq):
            todo = f"write a list of agent ids, e.g. owners: [{value}]"
            self.fail(where, f"`owners` must be a list, not {show(value)}", todo)
        for index, owner in enumerate(value):
            if not isinstance(owner, str) or not owner:
                todo = "each owner is an agent id, as `--agent` gives it"
                self.fail(value.lc.item(index), f"owner {show(owner)} is not text", todo)
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
            self.fail(where, f"bad entry_template {show(value)}: {problem}", _TEMPLATE_TODO)
        return str(value)

    def git_form(self, node: CommentedMap, file_class: FileClass) -> GitForm:
        """``git: placeholder | snapshot``: what git stores of a generated page's regions."""
        if "git" not in node:
            return "placeholder"
        value, where = node["git"], node.lc.value("git")
        if file_class != "generated":
            todo = "remove it: only generated files have live regions for git to store"
            self.fail(where, f"`git` on a {file_class} file", todo)
        if not isinstance(value, str) or value not in GIT_FORMS:
            todo = (
                "write `git: placeholder` (git stores a placeholder line for each live region) "
                "or `git: snapshot` (git stores the regions as rendered)"
            )
            self.fail(where, f"unknown git form {show(value)}", todo)
        return cast("GitForm", value)

    def templates(self, top: CommentedMap) -> Mapping[str, str]:
        node = top.get("templates")
        if node is None:
            return MappingProxyType({})
        if not isinstance(node, CommentedMap):
            what = f"`templates` must map names to template text, not {show(node)}"
            self.fail(top.lc.value("templates"), what, "write `NAME: |` and the template below")
        for name, text in node.items():
            if not isinstance(name, str) or not isinstance(text, str):
                what = f"template {show(name)} must be named text, not {show(text)}"
                self.fail(node.lc.value(name), what, "quote it, or write it as a `|` block")
            self.region_template(node, name, text)
        return MappingProxyType(dict(node))

    def region_template(self, node: CommentedMap, name: str, text: str) -> None:
        """A template for generated regions: a usable source name and valid syntax."""

        if name in SOURCES or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
            what = f"template name {show(name)} is built in or not a source name"
            todo = "use letters, digits, '_', '.', '-', and not claims, events or reconciliations"
            self.fail(node.lc.key(name), what, todo)
        try:
            parse_template(text)
        except TemplateError as err:
            what, _, todo = str(err).partition(" — ")
            self.fail(node.lc.value(name), f"template {show(name)}: {what}", todo)


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


def _did_you_mean(key: object, allowed: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(str(key), allowed, n=1)
    return f"did you mean '{close[0]}'? " if close else ""
