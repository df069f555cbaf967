#!/usr/bin/env python3
"""Reports every function body in the tracked C++ files that is longer than the limit.

Usage: scripts/check-function-length.py [--limit N] [FILE...]
Without FILE, checks every tracked *.cpp and *.h file (git ls-files). Prints one line per
finding, `file:line: function NAME is N lines (limit 80)`, and exits 1 when there is any.

A function is counted from the line of its opening brace to the line of its closing brace.
Only bodies at namespace or class scope count: free functions, member functions defined in
a class or out of it, and gtest bodies (TEST, TEST_F, TEST_P). A lambda or a local class
belongs to the function around it; namespace, class, struct, union and enum bodies and
brace initialisers are no functions.
"""
import argparse
import os
import re
import signal
import subprocess
import sys

LIMIT = 80
IDENT = re.compile(r"[A-Za-z0-9_]")
RAW_STRING = re.compile(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(')
# What may follow a parameter list before the body: cv/ref qualifiers, specifiers.
TRAILING_WORDS = re.compile(r"(?:\s*(?:const|volatile|override|final|noexcept|mutable|&&|&))+\s*$")
NOEXCEPT_EXPR = re.compile(r"\bnoexcept\s*\([^()]*\)\s*$")
TRAILING_RETURN = re.compile(r"->[^()]*$")
SCOPE_HEAD = re.compile(r"^(?:inline\s+)?namespace\b|^extern\s*$|\b(?:class|struct|union|enum)\b")


def blank(text):
    """The text with every character but newlines replaced by a space (keeps line numbers)."""
    return re.sub(r"[^\n]", " ", text)


def strip_code(src):
    """Comments, string and character literals, raw strings and preprocessor lines blanked."""
    out = []
    i, n = 0, len(src)
    at_line_start = True
    while i < n:
        c = src[i]
        if at_line_start and c == "#":
            j = i
            while True:  # a directive ends at a newline not escaped by a backslash
                j = src.find("\n", j)
                if j < 0:
                    j = n
                    break
                if src[j - 1] != "\\":
                    break
                j += 1
            out.append(blank(src[i:j]))
            i = j
            continue
        if c == "\n":
            at_line_start = True
        elif not c.isspace():
            at_line_start = False
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(src[i:j]))
            i = j
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(blank(src[i:j]))
            i = j
            continue
        raw = RAW_STRING.match(src, i)
        if raw and (i == 0 or not IDENT.match(src[i - 1])):
            end = ")" + raw.group(1) + '"'
            j = src.find(end, raw.end())
            j = n if j < 0 else j + len(end)
            out.append(blank(src[i:j]))
            i = j
            continue
        if c == "'" and i > 0 and IDENT.match(src[i - 1]):
            # A digit separator (1'000) is no character literal; a prefix (u8'a') is.
            k = i
            while k > 0 and IDENT.match(src[k - 1]):
                k -= 1
            if src[k].isdigit():
                out.append(c)
                i += 1
                continue
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(blank(src[i:j]))
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def parens_balanced(text):
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def has_top_level_assignment(text):
    """Whether text has an `=` outside parentheses that is no comparison nor operator name."""
    text = re.sub(r"\boperator\s*[^\s(]+", "operator_", text)
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "=" and depth == 0:
            before = text[i - 1] if i > 0 else ""
            after = text[i + 1] if i + 1 < len(text) else ""
            if after != "=" and before not in "=!<>":
                return True
    return False


def drop_template_prefix(head):
    """head without a leading `template <...>`."""
    m = re.match(r"\s*template\s*<", head)
    if not m:
        return head
    depth, i = 1, m.end()
    while i < len(head) and depth:
        depth += {"<": 1, ">": -1}.get(head[i], 0)
        i += 1
    return drop_template_prefix(head[i:])


def classify(head):
    """'scope', 'function' or 'other' for the text before a `{` at namespace or class scope."""
    head = drop_template_prefix(head).strip()
    if not parens_balanced(head) or has_top_level_assignment(head):
        return "other"  # a brace inside an argument list, or an initialiser
    signature = head.split("(", 1)[0]
    if SCOPE_HEAD.search(signature):
        return "scope"
    if "(" not in head:
        return "other"  # a brace initialiser such as `int n_{0}` or `kTable{`
    tail = TRAILING_RETURN.sub("", head).rstrip()
    while True:
        shorter = NOEXCEPT_EXPR.sub("", TRAILING_WORDS.sub("", tail)).rstrip()
        if shorter == tail:
            break
        tail = shorter
    # `)` ends a parameter list or a member initialiser; `}` ends a braced member initialiser.
    return "function" if tail.endswith((")", "}")) else "other"


def parameter_list_start(head):
    """Index of the `(` that opens the parameter list: the first one outside `<...>`."""
    angle = 0
    for i, ch in enumerate(head):
        if head.startswith("()", i) and re.search(r"\boperator\s*$", head[:i]):
            continue  # the name of operator(), not its parameters
        if ch == ")" and re.search(r"\boperator\s*\($", head[: i]):
            continue
        if ch == "<" and not head.startswith("operator", max(0, i - 8)):
            angle += 1
        elif ch == ">" and angle and head[i - 1] != "-":
            angle -= 1
        elif ch == "(" and angle == 0:
            return i
    return head.find("(")


def function_name(head):
    head = " ".join(drop_template_prefix(head).split())
    start = parameter_list_start(head)
    name = re.search(r"([\w:~]*\boperator\b.*|[\w:~]+)\s*$", head[:start])
    name = name.group(1) if name else head[:start].strip()
    if re.fullmatch(r"[A-Z_]*TEST[A-Z0-9_]*", name):  # gtest's TEST_F(Suite, Name)
        end = head.find(")", start)
        return name + head[start : end + 1]
    return name


def long_functions(path, limit):
    with open(path, encoding="utf-8", errors="replace") as f:
        code = strip_code(f.read())
    findings = []
    # One entry per open brace: (kind, offset of the brace, offset where its head starts).
    stack = []
    head_start = 0  # where the declaration before the next brace at this scope begins
    for i, ch in enumerate(code):
        in_body = stack and stack[-1][0] != "scope"
        if ch == "{":
            if in_body:
                stack.append(("other", i, head_start))
                continue
            head = code[head_start:i]
            kind = classify(head)
            stack.append((kind, i, head_start))
            if kind == "scope":
                head_start = i + 1
        elif ch == "}" and stack:
            kind, opened, start = stack.pop()
            if kind == "function":
                lines = code.count("\n", opened, i) + 1
                if lines > limit:
                    head = code[start:opened]
                    first = start + len(head) - len(head.lstrip())
                    findings.append((code.count("\n", 0, first) + 1, function_name(head), lines))
            if kind in ("function", "scope"):
                head_start = i + 1
            elif not (stack and stack[-1][0] != "scope"):
                head_start = start  # a brace initialiser stays part of its declaration
        elif ch == ";" and not in_body:
            head_start = i + 1
        elif ch == ":" and not in_body and re.search(r"\b(?:public|private|protected)\s*$", code[head_start:i]):
            head_start = i + 1  # an access specifier is no part of the next declaration
    return findings


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the listing quietly
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=LIMIT)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    files = args.files
    if not files:
        os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        files = subprocess.check_output(["git", "ls-files", "*.cpp", "*.h"], text=True).split()
    count = 0
    for path in files:
        for line, name, lines in long_functions(path, args.limit):
            print(f"{path}:{line}: function {name} is {lines} lines (limit {args.limit})")
            count += 1
    return 1 if count else 0


if __name__ == "__main__":
    sys.exit(main())
