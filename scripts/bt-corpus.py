#!/usr/bin/env python3
"""Measures `utilityctl import-bt` on other people's BehaviorTree.CPP trees.

Usage: scripts/bt-corpus.py BTCPP_CHECKOUT [UTILITYCTL] [--list]

BTCPP_CHECKOUT is a clone of BehaviorTree.CPP 4 (a work tree or a bare git
directory; nothing is fetched here). Every tree written in BT.CPP's format 4
under its examples/ and tests/ is collected: each XML file with
BTCPP_format="4" and each raw string literal in the C++ sources that holds
a <root ... BTCPP_format="4"> document. Each is written to a scratch folder
and imported as written; one refused only for having several trees and no
main_tree_to_execute (and more than one tree no other tree uses) is
imported again with --main naming its first tree; one from a C++ string that
uses a <SubTree ID> no tree of its own defines is imported again with the
other strings of its C++ file beside it (`import-bt TREE.xml MORE.xml...`),
as BT.CPP's tests register several strings in one factory.
XML files are written where they lie in the checkout, so their <include>s
resolve. Prints how many import, and the refusals grouped by reason, as the tables
of docs/TREES.md ("Real trees"); --list prints each tree's outcome as well.
The trees stay in the scratch folder: nothing of BT.CPP enters the project.
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

RAW = re.compile(r'R"([^(\s]{0,16})\((.*?)\)\1"', re.S)
FORMAT4 = re.compile(r'<root\b[^>]*BTCPP_format\s*=\s*"4"')
NOTE = re.compile(r'^(?P<file>[^:]+\.xml):(?P<line>\d+): (?P<text>.*)$')


def sources(checkout):
    """(path, text) of every file under examples/ and tests/."""
    bare = not os.path.isdir(os.path.join(checkout, "examples"))
    if bare:
        names = subprocess.run(
            ["git", "--git-dir", checkout, "ls-tree", "-r", "--name-only",
             "HEAD", "examples", "tests"],
            check=True, capture_output=True, text=True).stdout.split()
    else:
        names = []
        for top in ("examples", "tests"):
            for d, _, files in os.walk(os.path.join(checkout, top)):
                names += [os.path.relpath(os.path.join(d, f), checkout)
                          for f in files]
    for name in sorted(names):
        if not name.endswith((".xml", ".cpp", ".cc", ".h", ".hpp")):
            continue
        if bare:
            text = subprocess.run(
                ["git", "--git-dir", checkout, "show", "HEAD:" + name],
                capture_output=True, text=True, errors="replace").stdout
        else:
            with open(os.path.join(checkout, name), errors="replace") as f:
                text = f.read()
        yield name, text


def trees(checkout, others):
    """(label, xml) of every format 4 tree; the other XML files (which
    an <include> may name) are appended to `others` as (name, text)."""
    for name, text in sources(checkout):
        if name.endswith(".xml"):
            if FORMAT4.search(text):
                yield name, text
            else:
                others.append((name, text))
            continue
        k = 0
        for m in RAW.finditer(text):
            body = m.group(2)
            if FORMAT4.search(body):
                k += 1
                line = text.count("\n", 0, m.start()) + 1
                yield f"{name}:{line}", body.strip() + "\n"


def reason(text):
    """A refusal's reason, as the tables group it."""
    if re.search(r"strings are not supported|'\.\.' joins strings|"
                 r"not strings", text):
        return "strings in a script or SetBlackboard"
    m = re.match(r'(_\w+|code)="[^"]*" at \d+:\d+: (.*)', text)
    if m:
        return f"script {m.group(1)}: {m.group(2)[:40]}"
    m = re.match(r'(?:tree|subtrees\[\d+\]\.tree)[\w.\[\]]*: (.*)', text)
    if m:  # the set's validation, placed at the element
        return re.sub(r', got \d+$|"[^"]*"', "", m.group(1))[:60]
    if re.match(r'<Loop\w+ queue="\{', text):
        return "a loop over a blackboard queue"
    if re.match(r'<LoopString>', text):
        return "strings in a script or SetBlackboard"
    m = re.match(r'<(\w+)>(?: is a custom (\w+(?: \w+)*?)[:,])?', text)
    if m:
        return f"custom {m.group(2)}" if m.group(2) else m.group(1)
    m = re.match(r'<SubTree ID=', text)
    if m:
        return "unknown SubTree ID"
    m = re.match(r'(_\w+)=', text)
    if m:
        return m.group(1)
    m = re.match(r'(\w+) (?:for ever|of -?\d+ ms|with then_skip|needs)', text)
    if m:
        return m.group(1)
    m = re.match(r'\w+="[^"]*": (a literal|utilityd switches)', text)
    if m:
        return "literal port" if m.group(1) == "a literal" else "switch case"
    m = re.match(r'"[^"]*": a condition imports', text)
    if m:
        return "ScriptCondition other than factor OP number"
    return text.split(":")[0][:60]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        sys.exit(__doc__)
    ctl = args[1] if len(args) > 1 else "build/ctl/utilityctl"
    listing = "--list" in sys.argv
    others = []
    found = list(trees(args[0], others))
    outcome = collections.Counter()
    reasons = collections.Counter()       # trees refused, by reason
    elements = collections.Counter()      # refused elements, by reason
    unplaced = []                         # refusals without an element line
    with tempfile.TemporaryDirectory() as tmp:
        # XML files keep their place in the checkout, so that the files an
        # <include path="..."> names are where it looks; trees from C++
        # strings are written one to a file.
        paths = []
        for name, text in others:
            path = os.path.join(tmp, "files", name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        for i, (label, xml) in enumerate(found):
            if label.endswith(".xml"):
                path = os.path.join(tmp, "files", label)
                os.makedirs(os.path.dirname(path), exist_ok=True)
            else:
                path = os.path.join(tmp, f"t{i:03}.xml")
            with open(path, "w") as f:
                f.write(xml)
            paths.append(path)
        for i, (label, xml) in enumerate(found):
            path = paths[i]
            r = subprocess.run([ctl, "import-bt", path, "--out", os.devnull],
                               capture_output=True, text=True)
            how = "as written"
            if r.returncode != 0 and "name one with --main" in r.stderr:
                first = re.search(r'<BehaviorTree\s[^>]*ID="([^"]+)"', xml)
                r = subprocess.run([ctl, "import-bt", path, "--main",
                                    first.group(1), "--out", os.devnull],
                                   capture_output=True, text=True)
                how = "with --main"
            if r.returncode != 0 and "no <BehaviorTree> has that ID" in r.stderr \
                    and not label.endswith(".xml"):
                # BT.CPP's tests register several strings in one factory:
                # the strings of the same C++ file that define the trees it
                # lacks, given beside it (as many rounds as they lack more).
                source = label.rsplit(":", 1)[0]
                beside, again = [], r
                for _ in range(3):
                    missing = re.findall(r'<SubTree ID="([^"]+)">: no '
                                         r'<BehaviorTree> has that ID',
                                         again.stderr)
                    # One string for each tree it lacks, defining none of
                    # the trees it has.
                    ids = lambda t: set(re.findall(
                        r'<BehaviorTree\s[^>]*ID="([^"]+)"', t))
                    have = ids(xml).union(*(ids(open(b).read())
                                            for b in beside))
                    more = []
                    for m in missing:
                        for j, (other, text) in enumerate(found):
                            if (j != i and paths[j] not in beside + more and
                                    other.rsplit(":", 1)[0] == source and
                                    m in ids(text) and not ids(text) & have):
                                more.append(paths[j])
                                have |= ids(text)
                                break
                    if not more:
                        break
                    beside += more
                    again = subprocess.run(
                        [ctl, "import-bt", path] + beside +
                        ["--out", os.devnull], capture_output=True, text=True)
                    if again.returncode == 0:
                        how = "with its C++ file's other trees"
                        break
                if beside:
                    r = again  # refused, it says why with the trees given
            if r.returncode == 0:
                outcome[f"imports {how}"] += 1
                if listing:
                    print(f"ok      {label} ({how})")
                continue
            outcome["refused"] += 1
            why = set()
            for line in r.stderr.splitlines():
                m = NOTE.match(line)
                if m is None:
                    if "nothing written" not in line:
                        why.add("error: " + line.split(": ", 1)[-1][:70])
                        unplaced.append(f"{label}: {line}")
                    continue
                key = reason(m.group("text"))
                why.add(key)
                elements[key] += 1
            for key in why:
                reasons[key] += 1
            if listing:
                print(f"refused {label}: {'; '.join(sorted(why))}")
    total = len(found)
    print(f"{total} trees in BTCPP_format 4")
    for k, v in sorted(outcome.items()):
        print(f"  {k}: {v} ({100.0 * v / total:.0f}%)")
    print("\n| reason | trees | elements |\n|---|---|---|")
    for k, v in reasons.most_common():
        print(f"| {k} | {v} | {elements.get(k, '')} |")
    if unplaced:
        print("\nRefusals that name no element and line:")
        for u in unplaced:
            print("  " + u)


if __name__ == "__main__":
    main()
