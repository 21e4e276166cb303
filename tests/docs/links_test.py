#!/usr/bin/env python3
"""Every relative link in the project's Markdown documentation leads somewhere.

Checked: README.md, CHANGELOG.md, docs/*.md, docs/engine/*.md and every README.md of the source
tree (build trees left out). A link [text](target) whose target is not a URL must name a file or
folder that exists, relative to the page; a #fragment must be a heading of the page it names (as
GitHub makes anchors: lower case, punctuation dropped, spaces to hyphens). Links inside code
(`...` spans and ``` blocks) are text, not links.

Also checked: a reference in any source file to a page's section, written `<page>.md, "<Section>"`
(a comment's way to say where the reason is written down), names a page that exists (from the
project's root, or from the file's folder) and a heading or lead-in of that page that begins with
the section's words (or, for five words or more, a passage of the page that holds them).

    links_test.py SOURCE_DIR
"""

import os
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


SECTION_REFERENCE = re.compile(r'([A-Za-z0-9_./-]+\.md), "([^"]+)"')
SKIPPED = ("build", ".git", "docs/results", "docs/plots", "tests/docs/history_sample.md")


def skipped(root, path):
    relative = path.relative_to(root).as_posix()
    return any(relative == s or relative.startswith(s) for s in SKIPPED)


def source_files(root):
    for folder, folders, files in os.walk(root):
        folder = pathlib.Path(folder)
        folders[:] = sorted(f for f in folders if not skipped(root, folder / f))  # not into build trees
        for name in sorted(files):
            path = folder / name
            if skipped(root, path) or path.is_symlink() or path.stat().st_size > 1_000_000:
                continue
            try:
                yield path, path.read_text()
            except (UnicodeDecodeError, OSError):
                continue


def section_titles(path, cache={}):
    """The lower-case text of every heading and bold or italic lead-in of a page, no backticks."""
    if path not in cache:
        text = path.read_text(errors="replace")
        titles = [m.group(1) for m in map(HEADING.match, text.splitlines()) if m]
        titles += re.findall(r"\*\*?([^*]+)\*", text)  # bold or italic, possibly over lines
        cache[path] = [" ".join(t.replace("`", "").lower().split()) for t in titles]
    return cache[path]


def page_words(path, cache={}):
    """A page's text in lower case, emphasis and backticks dropped, white space collapsed."""
    if path not in cache:
        cache[path] = " ".join(re.sub(r"[*`]", "", path.read_text(errors="replace")).lower().split())
    return cache[path]


def section_problems(root):
    problems, count = [], 0
    for path, text in source_files(root):
        for match in SECTION_REFERENCE.finditer(text):
            page, section = match.groups()
            # A reference wrapped over comment lines: "# ", "// ", " * " or "-- " start each.
            section = re.sub(r"\s*\n\s*(#|//|\*|--)?\s*", " ", section).replace("`", "").lower()
            number = text.count("\n", 0, match.start()) + 1
            where = f"{path.relative_to(root)}:{number}"
            near = [path.parent / page] if "/" not in page else []
            target = next((c for c in near + [root / page] if c.is_file()), None)
            count += 1
            if target is None:
                problems.append(f"{where}: {page}: no such page")
            elif not any(title.startswith(section) for title in section_titles(target)) and \
                    (len(section.split()) < 5 or section not in page_words(target)):
                problems.append(f'{where}: {page}, "{section}": no such heading or lead-in there')
    return problems, count


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
    references, reference_count = section_problems(root)
    problems += references
    for line in problems:
        print(line)
    if problems:
        print(f"links_test: {len(problems)} broken link(s) or section reference(s)", file=sys.stderr)
        return 1
    print(f"links_test: {count} relative link(s) in {len(checked)} page(s) and {reference_count} "
          "section reference(s) in the sources lead somewhere")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
