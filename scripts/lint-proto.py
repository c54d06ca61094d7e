#!/usr/bin/env python3
"""Lint of the Wayfinder .proto files, in the spirit of `buf lint` (which
Debian does not package): naming, comments and reserved numbers.

usage: lint-proto.py [--no-history] [--git-dir DIR] FILE.proto...

Rules (each violation is printed as FILE:LINE: RULE: message; exit 1 if any):
  naming     messages, enums and services PascalCase; rpcs PascalCase;
             fields and oneofs lower_snake_case; enum values UPPER_SNAKE_CASE,
             the zero value named <ENUM_NAME_IN_UPPER_SNAKE>_UNSPECIFIED.
             Other values may go without the enum's prefix: that is the
             established style of wayfinder.v1 (GRID, FOUND, ...), which
             protoc keeps unique within the package.
  comments   a comment on every message, enum, service, rpc, field, oneof and
             enum value: // lines right above it, or a // comment at the end
             of its line.
  numbers    no field number used twice in a message, none inside that
             message's reserved ranges, no field named like a reserved name.
  reserved   (with git history, unless --no-history) a field or enum value
             that existed in any committed version of the file and is gone
             now must have its number and its name reserved; a number that
             now carries another name is a rename, which the contract forbids.

This is a small parser for the proto3 subset these files use (messages,
nested messages and enums, oneofs, maps, services, options), not a general
one: something it cannot read is reported as a parse error rather than
skipped.
"""

import argparse
import os
import re
import subprocess
import sys

PASCAL = re.compile(r"^[A-Z][A-Za-z0-9]*$")
LOWER_SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
UPPER_SNAKE = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$")


def upper_snake(pascal):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", pascal).upper()


class Element:
    """One declaration: kind is message, enum, service, rpc, field, oneof,
    enum_value; scope is the dotted path of the enclosing message/enum."""

    def __init__(self, kind, name, line, scope, commented, number=None):
        self.kind, self.name, self.line = kind, name, line
        self.scope, self.commented, self.number = scope, commented, number


class Block:
    def __init__(self, kind, name, scope):
        self.kind, self.name, self.scope = kind, name, scope
        self.reserved_numbers = []  # (lo, hi) inclusive
        self.reserved_names = set()
        self.fields = []  # Elements (fields or enum values)


class ParseError(Exception):
    pass


def parse(text):
    """Returns (elements, blocks): blocks keyed by dotted scope."""
    lines = text.split("\n")
    elements, blocks = [], {}
    stack = []  # Blocks (oneof blocks are transparent for field scope)
    pending_comment = False  # // lines right above the current line
    in_block_comment = False
    statement = ""  # a statement spread over several lines
    statement_line = 0
    statement_commented = False

    def scope_name():
        return ".".join(b.name for b in stack if b.kind in ("message", "enum", "service"))

    def owner():
        for b in reversed(stack):
            if b.kind in ("message", "enum"):
                return b
        return None

    for number, raw in enumerate(lines, 1):
        line = raw
        if in_block_comment:
            if "*/" in line:
                in_block_comment = False
                line = line.split("*/", 1)[1]
                pending_comment = True
            else:
                continue
        stripped = line.strip()
        if stripped.startswith("/*"):
            if "*/" not in stripped:
                in_block_comment = True
                continue
            stripped = stripped.split("*/", 1)[1].strip()
            pending_comment = True
        if stripped.startswith("//"):
            pending_comment = True
            continue
        if not stripped:
            pending_comment = False
            continue
        trailing = "//" in stripped and not _in_string(stripped, stripped.index("//"))
        code = stripped.split("//", 1)[0].strip() if trailing else stripped
        commented = pending_comment or trailing
        pending_comment = False
        if statement:
            statement += " " + code
            statement_commented = statement_commented or trailing
        else:
            statement, statement_line, statement_commented = code, number, commented
        # A statement ends at ';', '{' or '}' (an option's value may span lines).
        while statement:
            m = re.match(r"^([^;{}]*)([;{}])(.*)$", statement)
            if not m:
                break
            head, sep, rest = m.group(1).strip(), m.group(2), m.group(3).strip()
            _statement(head, sep, statement_line, statement_commented, stack, elements,
                       blocks, scope_name, owner)
            statement = rest
            statement_commented = False
    if stack:
        raise ParseError(f"unclosed {stack[-1].kind} {stack[-1].name}")
    return elements, blocks


def _in_string(s, pos):
    return s[:pos].count('"') % 2 == 1


def _statement(head, sep, line, commented, stack, elements, blocks, scope_name, owner):
    if sep == "}":
        if head:
            raise ParseError(f"line {line}: unexpected '{head}' before '}}'")
        if not stack:
            raise ParseError(f"line {line}: unbalanced '}}'")
        stack.pop()
        return
    if sep == "{":
        m = re.match(r"^(message|enum|service|oneof)\s+(\w+)$", head)
        if m:
            kind, name = m.groups()
            outer = scope_name()
            block = Block(kind, name, outer)
            stack.append(block)
            if kind != "oneof":
                blocks[scope_name()] = block
            elements.append(Element(kind, name, line, outer, commented))
            return
        m = re.match(r"^rpc\s+(\w+)\s*\(.*\)\s*returns\s*\(.*\)$", head)
        if m:
            elements.append(Element("rpc", m.group(1), line, scope_name(), commented))
            stack.append(Block("rpc_body", m.group(1), scope_name()))
            return
        if head.startswith("option") or head.startswith("extend"):
            stack.append(Block("other", "", scope_name()))
            return
        raise ParseError(f"line {line}: cannot read '{head} {{'")
    # sep == ';'
    if not head:
        return
    if re.match(r"^(syntax|package|import|option)\b", head):
        return
    inner = stack[-1] if stack else None
    if inner is not None and inner.kind in ("rpc_body", "other"):
        return
    m = re.match(r"^rpc\s+(\w+)\s*\(.*\)\s*returns\s*\(.*\)$", head)
    if m:
        elements.append(Element("rpc", m.group(1), line, scope_name(), commented))
        return
    if head.startswith("reserved"):
        block = owner()
        if block is None:
            raise ParseError(f"line {line}: reserved outside a message or enum")
        body = head[len("reserved"):].strip()
        for part in (p.strip() for p in body.split(",")):
            if part.startswith('"'):
                block.reserved_names.add(part.strip('"'))
            else:
                r = re.match(r"^(\d+)(?:\s+to\s+(\d+|max))?$", part)
                if not r:
                    raise ParseError(f"line {line}: cannot read reserved '{part}'")
                lo = int(r.group(1))
                hi = lo if r.group(2) is None else (
                    1 << 29 if r.group(2) == "max" else int(r.group(2)))
                block.reserved_numbers.append((lo, hi))
        return
    block = owner()
    if block is None:
        raise ParseError(f"line {line}: cannot read '{head};'")
    if block.kind == "enum":
        m = re.match(r"^(\w+)\s*=\s*(-?\d+)\s*(\[.*\])?$", head)
        if not m:
            raise ParseError(f"line {line}: cannot read enum value '{head}'")
        e = Element("enum_value", m.group(1), line, scope_name(), commented, int(m.group(2)))
    else:
        m = re.match(r"^(?:(?:repeated|optional)\s+)?(map\s*<[^>]*>|[\w.]+)\s+(\w+)\s*=\s*(\d+)"
                     r"\s*(\[.*\])?$", head)
        if not m:
            raise ParseError(f"line {line}: cannot read field '{head}'")
        e = Element("field", m.group(2), line, scope_name(), commented, int(m.group(3)))
    elements.append(e)
    block.fields.append(e)


def lint(path, text, history):
    problems = []

    def report(line, rule, message):
        problems.append(f"{path}:{line}: {rule}: {message}")

    try:
        elements, blocks = parse(text)
    except ParseError as e:
        return [f"{path}: parse error: {e}"]

    for e in elements:
        what = f"{e.kind.replace('_', ' ')} {e.scope + '.' if e.scope else ''}{e.name}"
        if e.kind in ("message", "enum", "service", "rpc") and not PASCAL.match(e.name):
            report(e.line, "naming", f"{what}: not PascalCase")
        if e.kind in ("field", "oneof") and not LOWER_SNAKE.match(e.name):
            report(e.line, "naming", f"{what}: not lower_snake_case")
        if e.kind == "enum_value" and not UPPER_SNAKE.match(e.name):
            report(e.line, "naming", f"{what}: not UPPER_SNAKE_CASE")
        if not e.commented:
            report(e.line, "comments", f"{what}: no comment (// above it or at the end of its line)")

    for scope, block in blocks.items():
        if block.kind == "enum":
            zero = [v for v in block.fields if v.number == 0]
            want = upper_snake(block.name) + "_UNSPECIFIED"
            if not zero:
                report(0, "naming", f"enum {scope}: no zero value ({want})")
            elif zero[0].name != want:
                report(zero[0].line, "naming",
                       f"enum {scope}: zero value {zero[0].name}, expected {want}")
        if block.kind not in ("message", "enum"):
            continue
        seen = {}
        for f in block.fields:
            if f.number in seen and block.kind == "message":
                report(f.line, "numbers", f"{scope}.{f.name}: number {f.number} already used by "
                       f"{seen[f.number]}")
            seen.setdefault(f.number, f.name)
            if any(lo <= f.number <= hi for lo, hi in block.reserved_numbers):
                report(f.line, "numbers", f"{scope}.{f.name}: number {f.number} is reserved")
            if f.name in block.reserved_names:
                report(f.line, "numbers", f"{scope}.{f.name}: the name is reserved")

    for rev, old_text in history:
        try:
            _, old_blocks = parse(old_text)
        except ParseError:
            continue  # a version this parser cannot read: nothing to compare
        for scope, old in old_blocks.items():
            new = blocks.get(scope)
            if new is None or new.kind != old.kind or old.kind not in ("message", "enum"):
                continue  # a removed message/enum takes its numbers with it
            by_number = {f.number: f for f in new.fields}
            for f in old.fields:
                now = by_number.get(f.number)
                if now is not None:
                    if now.name != f.name:
                        report(now.line, "reserved",
                               f"{scope}.{now.name}: number {f.number} was {f.name} in {rev[:10]}"
                               " (a rename; add a new field instead)")
                    continue
                if old.kind == "enum" and any(v.name == f.name for v in new.fields):
                    continue
                number_ok = any(lo <= f.number <= hi for lo, hi in new.reserved_numbers)
                name_ok = f.name in new.reserved_names
                if not (number_ok and name_ok):
                    report(0, "reserved",
                           f"{scope}.{f.name} = {f.number} (in {rev[:10]}) was removed without "
                           f"`reserved {f.number};` and `reserved \"{f.name}\";`")
    return problems


def git_history(path, git_dir):
    """Every committed version of `path` (newest first) as (rev, text)."""
    try:
        top = subprocess.run(["git", "-C", git_dir, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=True).stdout.strip()
        rel = os.path.relpath(os.path.realpath(path), os.path.realpath(top))
        revs = subprocess.run(["git", "-C", top, "log", "--first-parent", "--format=%H", "--", rel],
                              capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None
    out = []
    for rev in revs:
        shown = subprocess.run(["git", "-C", top, "show", f"{rev}:{rel}"],
                               capture_output=True, text=True)
        if shown.returncode == 0:
            out.append((rev, shown.stdout))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--no-history", action="store_true",
                    help="skip the check of removed fields against git history")
    ap.add_argument("--git-dir", default=None, help="a directory inside the repository")
    args = ap.parse_args()
    problems = []
    for path in args.files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        history = []
        if not args.no_history:
            history = git_history(path, args.git_dir or os.path.dirname(os.path.abspath(path)))
            if history is None:
                print(f"{path}: not in a git checkout; the removed-fields check is skipped")
                history = []
        problems += lint(path, text, history)
    for p in problems:
        print(p)
    if problems:
        print(f"lint-proto: {len(problems)} problem(s)")
        return 1
    print(f"lint-proto: {len(args.files)} file(s) clean")
    return 0


if __name__ == "__main__":
    sys.exit(main())
