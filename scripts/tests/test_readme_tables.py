"""Tests of bench/common/run_bench.sh and scripts/readme_tables.py on a throw-away repository: a run recorded by the
wrapper renders into a table (README.md or docs/*.md) with its device, date and commit; every way the tables, the
result, its run record or the manifest can disagree makes the check fail, and so does a result whose benchmark's
code changed in a later commit (stale) until the benchmark is rerun."""
import contextlib
import glob
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import readme_tables  # noqa: E402

RESULT = {"rows": [{"impl": "fast", "points": 1, "us": 12.345}, {"impl": "slow", "points": 1, "us": 99.0},
                   {"impl": "fast", "points": 8, "us": 20.0}]}


def git(cwd, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


class ReadmeTables(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="readme_tables_")
        self.addCleanup(shutil.rmtree, self.root)
        git(self.root, "init", "-q")
        with open(os.path.join(self.root, "README.md"), "w") as f:
            f.write("# demo\n\ntext\n\n<!-- BEGIN generated: speed -->\n<!-- END generated -->\n\nmore text\n")
        os.makedirs(os.path.join(self.root, "src"))
        for name in ("kernel.cu", "notes.txt"):
            with open(os.path.join(self.root, "src", name), "w") as f:
                f.write("v1\n")
        git(self.root, "add", "README.md", "src")
        git(self.root, "commit", "-q", "-m", "start")
        self.commit = git(self.root, "rev-parse", "HEAD").strip()
        self.bench_run()
        self.manifest = {
            "sources": {"demo": {"file": "bench/results/demo/result.json", "meta": "bench/results/demo/run.meta.json",
                                 "code": ["src", "!src/notes.txt"]}},
            "tables": [{"name": "speed", "columns": [{"header": "impl", "value": "{label}"},
                                                     {"header": "us", "value": "{us:.1f}", "align": "right"}],
                        "rows": [{"source": "demo", "list": "rows", "where": {"impl": "fast", "points": 1},
                                  "label": "fast one"}]}]}
        self.write_manifest()

    def bench_run(self, result=RESULT):
        """A run through the wrapper: it writes bench/results/demo/run.meta.json beside the result."""
        out = os.path.join(self.root, "bench/results/demo")
        code = f"import json; json.dump({result!r}, open('{out}/result.json', 'w'))"
        r = subprocess.run(["bash", os.path.join(REPO, "bench/common/run_bench.sh"), "bench/results/demo/run", "--",
                            sys.executable, "-c", code], cwd=self.root, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def commit_change(self, path, text):
        with open(os.path.join(self.root, path), "w") as f:
            f.write(text)
        git(self.root, "add", path)
        git(self.root, "commit", "-q", "-m", f"change {path}")

    def write_manifest(self):
        with open(os.path.join(self.root, "manifest.json"), "w") as f:
            json.dump(self.manifest, f)

    def set_accepted(self, accepted):
        path = os.path.join(self.root, "manifest.json")
        with open(path) as f:
            m = json.load(f)
        m.pop("stale_accepted", None)
        if accepted is not None:
            m["stale_accepted"] = accepted
        with open(path, "w") as f:
            json.dump(m, f)

    def run_tool(self, command):
        self.out, self.err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(self.out), contextlib.redirect_stderr(self.err):
            return readme_tables.main([command, "--root", self.root, "--manifest", "manifest.json"])

    def readme(self):
        with open(os.path.join(self.root, "README.md")) as f:
            return f.read()

    def edit(self, path, old, new):
        full = os.path.join(self.root, path)
        with open(full) as f:
            text = f.read()
        self.assertIn(old, text)
        with open(full, "w") as f:
            f.write(text.replace(old, new))

    def meta(self):
        with open(os.path.join(self.root, "bench/results/demo/run.meta.json")) as f:
            return json.load(f)

    def set_meta(self, **fields):
        m = self.meta()
        m.update(fields)
        with open(os.path.join(self.root, "bench/results/demo/run.meta.json"), "w") as f:
            json.dump(m, f)

    def test_run_record(self):
        m = self.meta()
        self.assertEqual(m["commit"], self.commit)
        self.assertEqual(m["exit_status"], 0)
        self.assertEqual(m["uncommitted_changes"], [])
        self.assertEqual([o["path"] for o in m["outputs"]], ["bench/results/demo/result.json"])
        self.assertTrue(m["device"])
        self.assertEqual(m["command"][0], sys.executable)

    def test_wrapper_keeps_exit_status(self):
        r = subprocess.run(["bash", os.path.join(REPO, "bench/common/run_bench.sh"), "bench/results/demo/bad", "--",
                            "sh", "-c", "exit 7"], cwd=self.root, capture_output=True, text=True)
        self.assertEqual(r.returncode, 7)
        with open(os.path.join(self.root, "bench/results/demo/bad.meta.json")) as f:
            self.assertEqual(json.load(f)["exit_status"], 7)

    def test_render_then_check(self):
        self.assertEqual(self.run_tool("check"), 1)  # empty block: differs
        self.assertEqual(self.run_tool("render"), 0)
        text = self.readme()
        self.assertIn(f"| fast one | 12.3 | {self.meta()['device']} | {self.meta()['finished_utc'][:10]} | "
                      f"{self.commit[:7]} |", text)
        self.assertTrue(text.startswith("# demo\n\ntext\n\n") and text.endswith("\n\nmore text\n"))
        self.assertEqual(self.run_tool("check"), 0)
        self.assertEqual(self.run_tool("render"), 0)
        self.assertEqual(self.readme(), text)  # idempotent

    def test_hand_edited_number_fails(self):
        self.run_tool("render")
        self.edit("README.md", "| 12.3 |", "| 11.0 |")
        self.assertEqual(self.run_tool("check"), 1)

    def test_result_changed_after_its_run_fails(self):
        self.run_tool("render")
        self.edit("bench/results/demo/result.json", "12.345", "12.346")
        self.assertEqual(self.run_tool("check"), 1)

    def test_missing_result_or_record_fails(self):
        self.run_tool("render")
        os.remove(os.path.join(self.root, "bench/results/demo/run.meta.json"))
        self.assertEqual(self.run_tool("check"), 1)
        self.setUp()
        self.run_tool("render")
        os.remove(os.path.join(self.root, "bench/results/demo/result.json"))
        self.assertEqual(self.run_tool("check"), 1)

    def test_failed_or_uncommitted_run_fails(self):
        self.run_tool("render")
        self.set_meta(exit_status=1)
        self.assertEqual(self.run_tool("check"), 1)
        self.set_meta(exit_status=0, uncommitted_changes=["src/kernel.cu"])
        self.assertEqual(self.run_tool("check"), 1)
        # Uncommitted changes outside the benchmark's code (another result, the docs) do not matter.
        self.set_meta(uncommitted_changes=["src/notes.txt", "README.md", "bench/results/other/run.json"])
        self.assertEqual(self.run_tool("check"), 0)
        self.set_meta(uncommitted_changes=["src/kernel.cu"])
        self.manifest["sources"]["demo"]["allow_uncommitted"] = "only the README changed"
        self.write_manifest()
        self.assertEqual(self.run_tool("check"), 0)

    def test_record_not_found_once_fails(self):
        self.run_tool("render")
        for where in ({"impl": "fast"}, {"impl": "none"}):
            self.manifest["tables"][0]["rows"][0]["where"] = where
            self.write_manifest()
            with self.assertRaises(readme_tables.SourceError):
                readme_tables.render_readme(self.root, "manifest.json", "README.md")

    def test_missing_field_fails(self):
        self.manifest["tables"][0]["columns"][1]["value"] = "{gflops:.1f}"
        self.write_manifest()
        self.assertEqual(self.run_tool("render"), 1)

    def test_markers_must_match_tables(self):
        self.edit("README.md", "<!-- BEGIN generated: speed -->", "<!-- BEGIN generated: other -->")
        self.assertEqual(self.run_tool("check"), 1)  # a block without a table, a table without a block
        self.edit("README.md", "<!-- BEGIN generated: other -->", "<!-- BEGIN generated: speed -->")
        self.edit("README.md", "<!-- END generated -->", "")
        self.assertEqual(self.run_tool("check"), 1)  # unbalanced


    def test_stale_source_fails_until_rerun(self):
        self.assertEqual(self.run_tool("render"), 0)
        self.assertEqual(self.run_tool("check"), 0)
        self.commit_change("src/notes.txt", "v2\n")  # excluded from the source's code: still current
        self.assertEqual(self.run_tool("check"), 0)
        self.commit_change("README.md", self.readme() + "\nprose\n")  # not code either
        self.assertEqual(self.run_tool("check"), 0)
        self.commit_change("src/kernel.cu", "v2\n")  # the benchmark's code changed after its run
        self.assertEqual(self.run_tool("check"), 1)
        self.assertIn("source demo is stale", self.err.getvalue())
        self.assertIn("src/kernel.cu", self.err.getvalue())
        self.assertEqual(self.run_tool("stale"), 1)
        self.assertIn("changed since: src/kernel.cu", self.out.getvalue())
        # Accepted in the manifest, with a reason: a warning, not a failure; taken back, a failure again.
        self.set_accepted({"demo": "rerun pending"})
        self.assertEqual(self.run_tool("check"), 0)
        self.assertIn("WARNING: source demo is stale", self.err.getvalue())
        self.assertIn("rerun pending", self.err.getvalue())
        self.set_accepted({"other": "not this one"})
        self.assertEqual(self.run_tool("check"), 1)
        self.set_accepted(None)
        # The way back: rerun the benchmark on the new commit, render, and the check passes again.
        self.bench_run(dict(RESULT, rows=[dict(RESULT["rows"][0], us=10.0)] + RESULT["rows"][1:]))
        self.assertEqual(self.run_tool("check"), 1)  # the table still shows the old run
        self.assertEqual(self.run_tool("render"), 0)
        self.assertIn("| fast one | 10.0 |", self.readme())
        self.assertEqual(self.run_tool("check"), 0)
        self.assertEqual(self.run_tool("stale"), 0)

    def test_code_paths_as_git_reads_them(self):
        code = ["src", "!src/notes.txt", "!src/split_*", "lib/a.cu"]
        for path, inside in [("src/kernel.cu", True), ("src/sub/x.hpp", True), ("src/notes.txt", False),
                             ("src/split_gpu.cu", False), ("srcx/kernel.cu", False), ("lib/a.cu", True),
                             ("lib/b.cu", False), ("README.md", False)]:
            self.assertEqual(readme_tables.in_code(path, code), inside, path)
        # git agrees: a wildcard exclusion keeps a change out of the staleness check.
        self.manifest["sources"]["demo"]["code"] = ["src", "!src/split_*"]
        self.write_manifest()
        self.run_tool("render")
        self.commit_change("src/split_new.cu", "v1\n")
        self.assertEqual(self.run_tool("check"), 0)
        self.commit_change("src/new_kernel.cu", "v1\n")  # a new file in a code folder counts
        self.assertEqual(self.run_tool("check"), 1)

    def test_unknown_run_commit_or_no_code_paths_fails(self):
        self.run_tool("render")
        self.set_meta(commit="0123456789abcdef")
        self.assertEqual(self.run_tool("check"), 1)
        self.assertIn("git cannot compare", self.err.getvalue())
        self.setUp()
        self.run_tool("render")
        self.manifest["sources"]["demo"]["code"] = ["!src/notes.txt"]
        self.write_manifest()
        self.assertEqual(self.run_tool("check"), 1)
        self.assertIn("no code paths", self.err.getvalue())

    def test_pending_source_waits_for_its_first_run(self):
        # A second table reads a new benchmark that has no committed run yet: without "pending" that fails.
        self.edit("README.md", "more text\n", "<!-- BEGIN generated: fresh -->\n<!-- END generated -->\n")
        self.manifest["sources"]["new"] = {"file": "bench/results/new/result.json",
                                           "meta": "bench/results/new/run.meta.json", "code": ["src"]}
        self.manifest["tables"].append({"name": "fresh", "columns": [{"header": "us", "value": "{us:.1f}"}],
                                        "rows": [{"source": "new", "list": "rows", "where": {"impl": "fast", "points": 8}}]})
        self.write_manifest()
        self.assertEqual(self.run_tool("render"), 1)
        self.assertIn("bench/results/new/run.meta.json is missing", self.err.getvalue())
        # Marked pending: its table says so, the other table renders, check passes with a warning, stale names it.
        self.manifest["sources"]["new"]["pending"] = "first run on the next GPU host"
        self.write_manifest()
        self.assertEqual(self.run_tool("render"), 0)
        self.assertIn("<!-- BEGIN generated: fresh -->\nPending: no committed run of new yet (bash "
                      "bench/common/publish_results.sh BUILD_DIR new, then python3 scripts/readme_tables.py render)."
                      "\n<!-- END generated -->", self.readme())
        self.assertIn("| fast one | 12.3 |", self.readme())
        self.assertEqual(self.run_tool("check"), 0)
        self.assertIn("WARNING: source new is pending", self.err.getvalue())
        self.assertEqual(self.run_tool("stale"), 0)
        self.assertIn("new: pending", self.out.getvalue())
        # Half a run (a result without its run record) is an error even when pending.
        os.makedirs(os.path.join(self.root, "bench/results/new"))
        with open(os.path.join(self.root, "bench/results/new/result.json"), "w") as f:
            json.dump(RESULT, f)
        self.assertEqual(self.run_tool("check"), 1)
        self.assertIn("run record bench/results/new/run.meta.json is missing", self.err.getvalue())
        os.remove(os.path.join(self.root, "bench/results/new/result.json"))
        # The first run arrives: the table fills in, and the check warns that the mark can go.
        out = os.path.join(self.root, "bench/results/new")
        code = f"import json; json.dump({RESULT!r}, open('{out}/result.json', 'w'))"
        r = subprocess.run(["bash", os.path.join(REPO, "bench/common/run_bench.sh"), "bench/results/new/run", "--",
                            sys.executable, "-c", code], cwd=self.root, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.run_tool("check"), 1)  # the table still says pending
        self.assertEqual(self.run_tool("render"), 0)
        self.assertIn("<!-- BEGIN generated: fresh -->\n| us | device |", self.readme())
        self.assertIn("| 20.0 |", self.readme())
        self.assertEqual(self.run_tool("check"), 0)
        self.assertIn("source new has its committed run: remove its 'pending'", self.err.getvalue())

    def test_tables_in_docs(self):
        self.edit("README.md", "<!-- BEGIN generated: speed -->\n<!-- END generated -->\n", "see docs\n")
        os.makedirs(os.path.join(self.root, "docs/guide"))
        page = "# perf\n\n<!-- BEGIN generated: speed (do not edit) -->\nold\n<!-- END generated -->\n"
        with open(os.path.join(self.root, "docs/guide/perf.md"), "w") as f:
            f.write(page)
        with open(os.path.join(self.root, "docs/other.md"), "w") as f:
            f.write("# no tables here\n")
        self.assertEqual(self.run_tool("check"), 1)
        self.assertEqual(self.run_tool("render"), 0)
        with open(os.path.join(self.root, "docs/guide/perf.md")) as f:
            self.assertIn("| fast one | 12.3 |", f.read())
        self.assertEqual(self.readme(), "# demo\n\ntext\n\nsee docs\n\nmore text\n")
        self.assertEqual(self.run_tool("check"), 0)
        with open(os.path.join(self.root, "docs/other.md"), "w") as f:  # the same table twice
            f.write(page)
        self.assertEqual(self.run_tool("check"), 1)
        self.assertIn("appears twice", self.err.getvalue())


class RepositoryTables(unittest.TestCase):
    def test_every_source_has_a_matching_run_record(self):
        manifest = readme_tables.load_json(REPO, readme_tables.MANIFEST, "manifest")
        for name, src in manifest["sources"].items():
            if not readme_tables.pending(REPO, src):  # a pending source has no run yet
                readme_tables.load_source(REPO, name, src)
            self.assertTrue(src.get("code"), f"source {name} lists no code paths")
            for p in src["code"]:  # every included path names something (a typo would silently narrow the list)
                if not p.startswith("!"):
                    self.assertTrue(glob.glob(os.path.join(REPO, p)), f"source {name}: nothing is {p}")

    def test_committed_tables_match_the_results(self):
        # Staleness needs the history and is checked by 'readme_tables.py check' (scripts/run_tests.sh).
        rendered = readme_tables.render_files(REPO, readme_tables.MANIFEST, readme_tables.markdown_files(REPO))
        for path, (old, new) in rendered.items():
            self.assertEqual(old, new, f"{path}: run 'python3 scripts/readme_tables.py render'")


if __name__ == "__main__":
    unittest.main()
