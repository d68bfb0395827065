"""Every relative link in README.md, CHANGELOG.md and docs/**/*.md names a file or folder of the repository,
and every #anchor into a markdown file names one of its headings (GitHub's slugs)."""
import glob
import os
import re
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGES = ("README.md", "CHANGELOG.md", "docs/**/*.md")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def pages(root=REPO):
    found = []
    for pat in PAGES:
        found += sorted(glob.glob(os.path.join(root, pat), recursive=True))
    return found


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)  # GitHub: drop punctuation (backticks, dots, colons...), keep - and _
    return s.replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        text = FENCE.sub("", f.read())
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, re.M)}


def broken_links(path):
    """[(link, why)] for the links of one markdown file that do not resolve."""
    with open(path, encoding="utf-8") as f:
        text = FENCE.sub("", f.read())
    bad = []
    for m in LINK.finditer(text):
        target = m.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ...
            continue
        file_part, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        if not os.path.exists(dest):
            bad.append((target, "no such file"))
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            bad.append((target, f"no heading '#{anchor}' in {os.path.relpath(dest, REPO)}"))
    return bad


class DocLinks(unittest.TestCase):
    def test_pages_exist(self):
        names = [os.path.relpath(p, REPO) for p in pages()]
        self.assertIn("README.md", names)
        self.assertIn("docs/index.md", names)

    def test_every_link_resolves(self):
        for path in pages():
            with self.subTest(page=os.path.relpath(path, REPO)):
                self.assertEqual(broken_links(path), [])

    def test_the_checker_sees_a_broken_link(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            page = os.path.join(d, "p.md")
            with open(page, "w") as f:
                f.write("# Title here\n\n[ok](p.md#title-here) [gone](missing.md) [bad](p.md#nowhere) "
                        "[web](https://example.org)\n\n```\n[in code](not-a-link.md)\n```\n")
            self.assertEqual([t for t, _ in broken_links(page)], ["missing.md", "p.md#nowhere"])


if __name__ == "__main__":
    unittest.main()
