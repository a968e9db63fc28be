#!/usr/bin/env python3
"""bats-lint: find lines of a bats test that look like checks but check nothing.

bats runs each @test under `set -e`, and bash's `set -e` ignores the status of
  - a command negated with `!` (`! grep -q x f` never stops the test), and
  - every command of an `a && b` list except the last (`[ a ] && [ b ]` goes
    on when `[ a ]` fails).
Both still decide the test when they are its very last command (its status is
the test's status), so only the last command of an @test is exempt.

A line is flagged when it is not the last command of its @test and it is
  - a command that starts with `! `, or
  - an `&&` list of checks only ([ ], [[ ]], test, (( )), grep, cmp, diff,
    negated or not).
A line with `||` is left alone: `! a || false` and `a && b || false` are
deliberate ways to make it count.

Usage: tools/bats-lint.py FILE.bats...   Prints FILE:LINE: what and the fix,
exits 1 when anything is flagged, 2 on a usage error.  tests/run.sh runs it over
tests/**/*.bats.
"""
import re
import sys

CHECK = re.compile(r"(?:!\s+)?(?:\[\[?|test|\(\(|grep|cmp|diff)(?:\s|$)")
TEST_START = re.compile(r"\s*@test\s.*\{\s*$")
HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")


class Scan:
    """Shell lexing just deep enough to find where a command ends: quotes,
    $( ) and ` ` nesting, backslash escapes, comments and here-documents."""

    def __init__(self):
        self.quote = None      # None, "'" or '"'
        self.depth = 0         # open $( ( or ` not yet closed
        self.saved = []        # (quote, depth) of a "..." a $( opened in
        self.heredocs = []     # (strip_tabs, word) pending after this line
        self.unterminated = None   # a here-document's word never found

    def line(self, text):
        """Consume one physical line; return (continues, [&&-parts] or None).
        The parts are the line's top-level `&&` operands (None when the line
        has a top-level `||`); continues is True when the command goes on
        on the next line."""
        parts, cur, i, has_or = [], "", 0, False
        while i < len(text):
            c = text[i]
            if self.quote == "'":
                if c == "'":
                    self.quote = None
                cur += c
                i += 1
                continue
            if c == "\\":
                if i + 1 == len(text):       # line continuation
                    return True, self._finish(parts, cur, has_or)
                cur += text[i:i + 2]
                i += 2
                continue
            if self.quote == '"':
                if c == '"':
                    self.quote = None
                elif text.startswith("$(", i):
                    # a command substitution inside "...": its quotes are
                    # its own; the "..." resumes at its closing )
                    self.saved.append((self.quote, self.depth))
                    self.quote = None
                    self.depth += 1
                    cur += "$("
                    i += 2
                    continue
                cur += c
                i += 1
                continue
            if c in "'\"":
                self.quote = c
            elif c == "#" and (not cur or cur[-1] in " \t;(|&"):
                break                        # a comment ends the line
            elif text.startswith("$(", i):
                self.depth += 1
                cur += "$("
                i += 2
                continue
            elif c == "(" and self.depth:
                self.depth += 1
            elif c == ")" and self.depth:
                self.depth -= 1
                if self.saved and self.saved[-1][1] == self.depth:
                    self.quote = self.saved.pop()[0]   # back inside its "..."
            elif self.depth == 0 and text.startswith("<<", i) and not text.startswith("<<<", i):
                m = HEREDOC.match(text, i)
                if m:
                    self.heredocs.append((m.group(1) == "-", m.group(3)))
            elif self.depth == 0 and text.startswith("&&", i):
                parts.append(cur)
                cur = ""
                i += 2
                continue
            elif self.depth == 0 and text.startswith("||", i):
                has_or = True
            cur += c
            i += 1
        cont = self.quote is not None or self.depth > 0 or \
            re.search(r"(&&|\|\||\|)\s*$", cur) is not None
        return cont, self._finish(parts, cur, has_or)

    @staticmethod
    def _finish(parts, cur, has_or):
        return None if has_or else parts + [cur]


def test_body(lines, i, scan):
    """The commands of the @test whose body starts at lines[i] (0-based), up
    to the `}` in column 0 that ends it: a list of (lineno, text, parts),
    here-document bodies and comments left out, and the index of that `}`
    (len(lines) when there is none).  A `}` inside a here-document or a
    quoted string does not end the test, as it does not for bash."""
    cmds = []
    while i < len(lines):
        text = lines[i]
        i += 1
        if scan.quote is None and scan.depth == 0:
            if re.match(r"\}\s*$", text):
                return cmds, i - 1
            if not text.strip() or text.lstrip().startswith("#"):
                continue
        start, joined, parts = i, text, []
        while True:
            cont, p = scan.line(text)
            if p is None or parts is None:
                parts = None
            elif not parts:
                parts = p
            else:                # the line goes on with the list's last part
                parts = parts[:-1] + [parts[-1] + "\n" + p[0]] + p[1:]
            # here-document bodies follow the line that opened them
            while scan.heredocs:
                strip, word = scan.heredocs.pop(0)
                while True:
                    if i >= len(lines):
                        scan.unterminated = word
                        break
                    t = lines[i]
                    i += 1
                    if (t.lstrip("\t") if strip else t) == word:
                        break
            if not cont or i >= len(lines):
                break
            text = lines[i]
            i += 1
            joined += "\n" + text
        cmds.append((start, joined, parts))
    return cmds, len(lines)


def lint(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        print(f"{path}: cannot read: {e.strerror}")
        return 1
    found = 0
    i = 0
    while i < len(lines):
        if not TEST_START.match(lines[i]):
            i += 1
            continue
        head = i + 1
        scan = Scan()
        cmds, i = test_body(lines, i + 1, scan)
        if i >= len(lines):
            what = (f"inside a {scan.quote} quote" if scan.quote else
                    "inside a $( or (" if scan.depth else
                    f"inside the here-document {scan.unterminated}" if scan.unterminated else
                    "without a `}` in column 0")
            print(f"{path}:{head}: this @test ends {what}: cannot check it")
            return found + 1
        for n, text, parts in cmds[:-1]:
            first = text.splitlines()[0].strip()
            if parts is None:
                continue                 # `x || false`: made to count
            if re.match(r"!\s", first):
                print(f"{path}:{n}: `!` checks nothing unless it is the test's last command: "
                      f"{first}  (write `run ! cmd`, or test $status)")
                found += 1
            elif len(parts) > 1 and all(CHECK.match(p.strip()) for p in parts):
                print(f"{path}:{n}: only the last check of this && list counts: "
                      f"{first}  (write one check per line)")
                found += 1
        i += 1
    return found


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 2
    found = sum(lint(p) for p in argv)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
