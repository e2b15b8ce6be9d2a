"""``key = value`` languages read by their grammar: TOML and HCL (Terraform), where each value is found.

A credential in a Telegraf TOML inline table (``auth = { token = "x" }``) or a Terraform variable's
default (``variable "db_password" { default = "x" }``) is judged by the name it stands under, and
the name of a Terraform variable is its label, not ``default``. A regex over the blob reads neither:
the name is a line or a brace away from the value. So the text is scanned as the grammar has it:
tables, blocks with their labels, attributes, inline tables and objects, arrays, strings (basic,
literal, multi-line, heredoc) and bare expressions, and every value is returned as a
:class:`Setting`: the span of its text and the name it is judged under.

TOML is first parsed by :mod:`tomllib` (the text is TOML only if the maintained parser says so);
HCL has no parser among our dependencies, and its attribute grammar is small enough to scan here
(python-hcl2 would add a parser generator for the one thing this needs: where each value is).
Anything the scan does not expect ends it with :class:`NotThisGrammar`, and the text is judged as it
was before (never less safe). The scan is linear: each character is read once, nesting is bounded.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from typing import Final

from kubevec.inference.redaction.names import is_credential_name, name_words
from kubevec.inference.redaction.vocabulary import REFERENCE_WORDS


@dataclasses.dataclass(frozen=True, kw_only=True)
class Setting:
    """One value of a config text: ``text[start:end]`` (quotes excluded), judged under ``key``.

    ``credential`` says the grammar itself puts a credential here, whatever the key (the second field
    of a pgbouncer userlist line, a value inside ``auth = { ... }``): such a value is dropped."""

    key: str
    start: int
    end: int
    credential: bool = False


class NotThisGrammar(ValueError):
    """The text does not follow the grammar tried: it is judged some other way."""


#: Nesting a scan follows (objects in arrays in objects): deeper text is not config anyone writes.
MAX_NESTING: Final = 32

_KEY: Final = re.compile(r"[A-Za-z0-9_-]+|\"(?:[^\"\\\n]|\\.){0,256}\"|'[^'\n]{0,256}'")
_SPACE: Final = re.compile(r"[ \t]*")
_BLANK: Final = re.compile(r"(?:[ \t\r\n]+|(?:#|//)[^\n]*|/\*(?:[^*]|\*(?!/))*\*/)*")
_LABEL: Final = re.compile(r"[ \t]*(\"(?:[^\"\\\n]|\\.){0,256}\"|[A-Za-z_][\w-]{0,127})")
_HEADER: Final = re.compile(r"\[\[?[ \t]*([^\]\n]{1,512}?)[ \t]*\]\]?[ \t]*(?:#[^\n]*)?(?=\n|\Z)")
_HEREDOC: Final = re.compile(r"<<-?([A-Za-z_]\w{0,63})[ \t]*\n")
_BARE_STOP: Final = frozenset(",}]\n#")


def toml_settings(text: str) -> list[Setting]:
    """Every value of a TOML document; :class:`NotThisGrammar` when :mod:`tomllib` refuses the text."""
    if "=" not in text:
        raise NotThisGrammar("no assignment")
    try:
        tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise NotThisGrammar("not TOML") from exc
    return _Scanner(text, hcl=False).document()


def toml_like_settings(text: str) -> list[Setting]:
    """TOML that :mod:`tomllib` refuses but our scan reads whole (an inline table over several lines,
    as Telegraf's parser takes, or a key twice): tried after every stricter grammar."""
    if "=" not in text:
        raise NotThisGrammar("no assignment")
    return _Scanner(text, hcl=False).document()


def hcl_settings(text: str) -> list[Setting]:
    """Every value of an HCL body that has at least one block (``variable "x" { ... }``)."""
    scanner = _Scanner(text, hcl=True)
    settings = scanner.document()
    if not scanner.blocks:
        raise NotThisGrammar("no block")
    return settings


def under_credential(key: str) -> bool:
    """Whether the values inside a table, object or block called ``key`` are credentials.

    The values inside ``auth = { ... }`` or ``credentials { ... }`` are, except those whose own name
    points at a credential instead of holding one (``secretName``, ``tokenUrl``)."""
    return is_credential_name(key)


def refers(key: str) -> bool:
    words = name_words(key)
    return bool(words) and words[-1] in REFERENCE_WORDS


class _Scanner:
    """One pass over the text; ``settings`` grows as values are found."""

    def __init__(self, text: str, *, hcl: bool) -> None:
        self.text = text
        self.hcl = hcl
        self.at = 0
        self.blocks = 0
        self.settings: list[Setting] = []

    def document(self) -> list[Setting]:
        table = ""
        while True:
            self._blank()
            if self.at >= len(self.text):
                return self.settings
            if not self.hcl and self.text[self.at] == "[":
                header = _HEADER.match(self.text, self.at)
                if header is None:
                    raise NotThisGrammar("table header")
                table = header.group(1).rsplit(".", 1)[-1].strip("\"'")
                self.at = header.end()
                continue
            self._item(parent=table if under_credential(table) else "", depth=0)

    def _blank(self) -> None:
        match = _BLANK.match(self.text, self.at)
        self.at = match.end() if match else self.at

    def _spaces(self) -> None:
        match = _SPACE.match(self.text, self.at)
        self.at = match.end() if match else self.at

    def _key(self) -> str:
        parts = []
        while True:
            match = _KEY.match(self.text, self.at)
            if match is None:
                raise NotThisGrammar(f"a key at {self.at}")
            parts.append(match.group(0).strip("\"'"))
            self.at = match.end()
            self._spaces()
            if self.text.startswith(".", self.at) and not self.hcl:
                self.at += 1
                self._spaces()
                continue
            return parts[-1]

    def _item(self, *, parent: str, depth: int, label: str = "") -> None:
        """An attribute (``key = value``) or, in HCL, a block (``type "label" ... { body }``)."""
        key = self._key()
        if self.text.startswith("=", self.at) or (self.hcl and depth and self.text.startswith(":", self.at)):
            self.at += 1
            self._spaces()
            judged_as = label if key == "default" and label else key  # a Terraform variable's default
            self._value(key=judged_as, parent=parent, depth=depth)
            return
        if not self.hcl:
            raise NotThisGrammar(f"'=' at {self.at}")
        labels = []
        while not self.text.startswith("{", self.at):
            match = _LABEL.match(self.text, self.at)
            if match is None:
                raise NotThisGrammar(f"a block at {self.at}")
            labels.append(match.group(1).strip('"'))
            self.at = match.end()
            self._spaces()
        self.at += 1
        self.blocks += 1
        variable = labels[-1] if key == "variable" and labels else ""
        self._body(parent=key if under_credential(key) else parent, depth=depth + 1, label=variable)

    def _body(self, *, parent: str, depth: int, label: str = "") -> None:
        if depth > MAX_NESTING:
            raise NotThisGrammar("nested too deep")
        while True:
            self._blank()
            if self.at >= len(self.text):
                raise NotThisGrammar("a block without its end")
            if self.text[self.at] == "}":
                self.at += 1
                return
            self._item(parent=parent, depth=depth, label=label)
            self._spaces()
            if self.text.startswith(",", self.at):
                self.at += 1

    def _value(self, *, key: str, parent: str, depth: int) -> None:
        if depth > MAX_NESTING:
            raise NotThisGrammar("nested too deep")
        text, at = self.text, self.at
        if text.startswith(('"""', "'''"), at):
            end = text.find(text[at : at + 3], at + 3)
            if end < 0:
                raise NotThisGrammar("a string without its end")
            self._found(key=key, parent=parent, start=at + 3, end=end)
            self.at = end + 3
        elif at < len(text) and text[at] in "\"'":
            self.at = self._string_end(at)
            self._found(key=key, parent=parent, start=at + 1, end=self.at - 1)
        elif text.startswith("{", at):
            self.at += 1
            inner = key if under_credential(key) else parent
            self._body(parent=inner, depth=depth + 1)
        elif text.startswith("[", at):
            self._array(key=key, parent=parent, depth=depth + 1)
        elif self.hcl and (heredoc := _HEREDOC.match(text, at)) is not None:
            close = re.compile(rf"(?m)^[ \t]*{re.escape(heredoc.group(1))}[ \t]*$").search(text, heredoc.end())
            if close is None:
                raise NotThisGrammar("a heredoc without its end")
            self._found(key=key, parent=parent, start=heredoc.end(), end=close.start())
            self.at = close.end()
        else:
            self._bare(key=key, parent=parent)

    def _string_end(self, at: int) -> int:
        """Where the string opened at ``at`` ends (after its closing quote); a basic string may escape."""
        quote, text = self.text[at], self.text
        index = at + 1
        while index < len(text):
            char = text[index]
            if char == "\\" and quote == '"':
                index += 2
                continue
            if char == quote:
                return index + 1
            if char == "\n":
                break
            index += 1
        raise NotThisGrammar("a string without its end")

    def _array(self, *, key: str, parent: str, depth: int) -> None:
        self.at += 1
        while True:
            self._blank()
            if self.at >= len(self.text):
                raise NotThisGrammar("an array without its end")
            if self.text[self.at] == "]":
                self.at += 1
                return
            self._value(key=key, parent=parent, depth=depth)
            self._blank()
            if self.text.startswith(",", self.at):
                self.at += 1

    def _bare(self, *, key: str, parent: str) -> None:
        """A number, boolean, date, or an HCL expression (``var.region``, ``file("x")``) up to its end."""
        text, start, depth = self.text, self.at, 0
        index = start
        while index < len(text):
            char = text[index]
            if char in "([":
                depth += 1
            elif char in ")]" and depth:
                depth -= 1
            elif char in "\"'" and depth:
                index = self._string_end(index)
                continue
            elif depth == 0 and char in _BARE_STOP:
                break
            index += 1
        end = len(text[start:index].rstrip())
        if end == 0:
            raise NotThisGrammar(f"a value at {start}")
        self.at = index
        self._found(key=key, parent=parent, start=start, end=start + end)

    def _found(self, *, key: str, parent: str, start: int, end: int) -> None:
        if start < end:
            credential = bool(parent) and not refers(key)
            self.settings.append(Setting(key=key, start=start, end=end, credential=credential))
