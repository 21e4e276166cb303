#!/usr/bin/env python3
"""Every relative link in the project's Markdown documentation leads somewhere.

Checked: README.md, CHANGELOG.md, docs/*.md, docs/engine/*.md and every README.md of the source
tree (build trees left out). A link [text](target) whose target is not a URL must name a file or
folder that exists, relative to the page; a #fragment must be a heading of the page it names (as
GitHub makes anchors: lower case, punctuation dropped, spaces to hyphens). Links inside code
(`...` spans and ``` blocks) are text, not links.

    links_test.py SOURCE_DIR
"""

import pathlib
import re
import sys

PAGES = ["README.md", "CHANGELOG.md", "docs/*.md", "docs/engine/*.md", "**/README.md"]
LINK = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"`[^`]*`")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def anchor(heading):
    """GitHub's anchor of a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
    text = text.lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found, fence = set(), False
        for line in path.read_text(errors="replace").splitlines():
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            match = None if fence else HEADING.match(line)
            if match:
                found.add(anchor(match.group(1)))
        cache[path] = found
    return cache[path]


def links(path):
    fence = False
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        for match in LINK.finditer(CODE_SPAN.sub("", line)):
            yield number, match.group(1)


def pages(root):
    found = set()
    for pattern in PAGES:
        for path in root.glob(pattern):
            relative = path.relative_to(root)
            if relative.parts[0].startswith("build") or relative.parts[0].startswith("."):
                continue
            found.add(path)
    return sorted(found)


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(argv[0]).resolve()
    problems, count = [], 0
    checked = pages(root)
    for page in checked:
        for number, target in links(page):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
                continue
            count += 1
            file_part, _, fragment = target.partition("#")
            destination = (page.parent / file_part).resolve() if file_part else page
            where = f"{page.relative_to(root)}:{number}"
            if not destination.exists():
                problems.append(f"{where}: {target}: no such file or folder")
            elif fragment and destination.suffix == ".md" and fragment not in anchors(destination):
                problems.append(f"{where}: {target}: no heading #{fragment} in {destination.relative_to(root)}")
    for line in problems:
        print(line)
    if problems:
        print(f"links_test: {len(problems)} broken link(s)", file=sys.stderr)
        return 1
    print(f"links_test: {count} relative link(s) in {len(checked)} page(s) lead somewhere")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
