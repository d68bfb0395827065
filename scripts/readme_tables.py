#!/usr/bin/env python3
"""readme_tables.py -- the documentation's measured tables, generated from committed benchmark results.

    python3 scripts/readme_tables.py check    # CI: exit 1 when a table differs from what the results give,
                                              # or a result is stale (its benchmark's code changed since its run)
    python3 scripts/readme_tables.py render   # rewrite the generated blocks
    python3 scripts/readme_tables.py stale    # each source: current, or which of its code paths changed since

bench/results/README_SOURCES.json (the manifest) names the sources -- a committed result file and the sidecar
NAME.meta.json that bench/common/run_bench.sh wrote beside it (command, device, date, commit, sha256 of each output),
and the paths of the code the benchmark exercises -- and the tables: for each row, which record of which source
and which fields fill the columns. Every row ends with the device, date and commit of its run. The markdown
files that hold tables (README.md and docs/**/*.md) hold each between
    <!-- BEGIN generated: NAME ... -->  and  <!-- END generated -->
and nothing else of them is touched. Anything missing or inconsistent fails loudly: a source or sidecar that is
not there, a result whose sha256 is not the one its sidecar recorded (a result replaced without its run record),
a run that failed or ran on uncommitted changes to its code, a run whose code paths changed in a later commit
(stale: rerun it, bench/common/publish_results.sh), a record that is not found exactly once, a field that is not in it,
a table without markers or markers without a table. One exception: a source that the manifest marks "pending" (a new
benchmark whose first run is not committed yet) and that has neither its result nor its run record makes each table
that reads it render as one line saying so, and has no staleness to check; once its run is committed the source is
read like any other (the check then warns that the "pending" can go). Python 3 standard library only.
"""
import argparse
import difflib
import fnmatch
import glob
import hashlib
import json
import os
import re
import subprocess
import sys

MANIFEST = "bench/results/README_SOURCES.json"
DOCS = ("README.md", "docs/**/*.md")  # the markdown files searched for generated blocks
BLOCK = re.compile(r"<!-- BEGIN generated: (?P<name>[\w.-]+)[^\n]*?-->\n(?P<body>.*?)<!-- END generated -->",
                   re.S)


class SourceError(Exception):
    """A problem with the manifest, a result, a sidecar or the README markers."""


def load_json(root, path, what):
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        raise SourceError(f"{what} {path} is missing")
    try:
        with open(full, encoding="utf-8") as f:
            return json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise SourceError(f"{what} {path} is not valid JSON: {e}") from e


def sha256(root, path):
    with open(os.path.join(root, path), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def in_code(path, code):
    """Whether a path is one of the code paths, as git reads them as pathspecs: '!path' excludes, a folder holds
    what is below it, '*' '?' '[' are wildcards ('*' also across '/'). A source without a code list counts every
    path."""
    def under(p, spec):
        spec = spec.rstrip("/")
        if any(ch in spec for ch in "*?["):
            return fnmatch.fnmatchcase(p, spec)
        return p == spec or p.startswith(spec + "/")
    if not code:
        return True
    return (any(under(path, c) for c in code if not c.startswith("!"))
            and not any(under(path, c[1:]) for c in code if c.startswith("!")))


def pending(root, src):
    """Whether a source waits for its first run: the manifest marks it "pending" and neither its result nor its run
    record is there (one without the other is an error, as for any source)."""
    return bool(src.get("pending")) and not any(os.path.exists(os.path.join(root, src.get(k, ""))) for k in ("file", "meta")
                                                  if src.get(k))


def load_source(root, name, src):
    """The source's result JSON and its run record, after checking that they belong together."""
    for key in ("file", "meta"):
        if key not in src:
            raise SourceError(f"source {name}: no '{key}' in the manifest")
    meta = load_json(root, src["meta"], f"source {name}: run record")
    data = load_json(root, src["file"], f"source {name}: result")
    for key in ("commit", "finished_utc", "device", "exit_status", "outputs"):
        if key not in meta:
            raise SourceError(f"source {name}: run record {src['meta']} has no '{key}'")
    recorded = {o.get("path"): o.get("sha256") for o in meta["outputs"]}
    if src["file"] not in recorded:
        raise SourceError(f"source {name}: {src['file']} is not among the outputs of run record {src['meta']}")
    actual = sha256(root, src["file"])
    if recorded[src["file"]] != actual:
        raise SourceError(f"source {name}: {src['file']} has sha256 {actual}, its run record says "
                          f"{recorded[src['file']]}: the result changed after its run was recorded")
    if meta["exit_status"] != 0:
        raise SourceError(f"source {name}: the run exited with status {meta['exit_status']}")
    dirty = [p for p in meta.get("uncommitted_changes") or [] if in_code(p, src.get("code", []))]
    if dirty and not src.get("allow_uncommitted"):
        raise SourceError(f"source {name}: ran with uncommitted changes to {', '.join(dirty)}, which its benchmark "
                          "exercises (say why in the manifest's allow_uncommitted to use it anyway)")
    if not re.fullmatch(r"[0-9a-f]{7,40}", str(meta["commit"])):
        raise SourceError(f"source {name}: run record commit '{meta['commit']}' is not a git hash")
    return data, meta


def select(data, row, where_text):
    """The one record of the result that the row names."""
    records = data
    for part in filter(None, row.get("list", "").split(".")):
        if not isinstance(records, dict) or part not in records:
            raise SourceError(f"{where_text}: the result has no '{row.get('list')}'")
        records = records[part]
    if isinstance(records, dict):
        records = [records]
    want = row.get("where", {})
    hits = [r for r in records if isinstance(r, dict) and all(k in r and r[k] == v for k, v in want.items())]
    if len(hits) != 1:
        raise SourceError(f"{where_text}: {len(hits)} records match {json.dumps(want)} (need exactly one)")
    return hits[0]


def cell(template, values, where_text):
    try:
        return template.format(**values)
    except KeyError as e:
        raise SourceError(f"{where_text}: no field {e} (fields: {', '.join(sorted(values))})") from e
    except (ValueError, TypeError) as e:
        raise SourceError(f"{where_text}: cannot format '{template}': {e}") from e


def render_table(root, manifest, table, cache):
    name = table.get("name", "?")
    columns = table.get("columns")
    if not columns or not table.get("rows"):
        raise SourceError(f"table {name}: no columns or no rows in the manifest")
    headers = [c["header"] for c in columns] + ["device", "date", "commit"]
    lines = ["| " + " | ".join(headers) + " |",
             "| " + " | ".join("---:" if c.get("align") == "right" else "---" for c in columns) + " | --- | --- | --- |"]
    for i, row in enumerate(table["rows"]):
        if row.get("source") not in manifest.get("sources", {}):
            raise SourceError(f"table {name}, row {i + 1}: source '{row.get('source')}' is not in the manifest's sources")
    waiting = []
    for row in table["rows"]:
        if row["source"] not in waiting and pending(root, manifest["sources"][row["source"]]):
            waiting.append(row["source"])
    if waiting:
        return (f"Pending: no committed run of {', '.join(waiting)} yet (bash bench/common/publish_results.sh BUILD_DIR "
                f"{' '.join(waiting)}, then python3 scripts/readme_tables.py render).\n")
    used = []
    for i, row in enumerate(table["rows"]):
        where_text = f"table {name}, row {i + 1}"
        src_name = row.get("source")
        if src_name not in cache:
            cache[src_name] = load_source(root, src_name, manifest["sources"][src_name])
        data, meta = cache[src_name]
        values = dict(select(data, row, where_text))
        values.update({k: v for k, v in row.items() if k not in ("source", "list", "where")})
        device = meta.get("cpu") if row.get("device") == "cpu" else meta["device"]
        if not device:
            raise SourceError(f"{where_text}: run record {manifest['sources'][src_name]['meta']} names no "
                              f"{'cpu' if row.get('device') == 'cpu' else 'device'}")
        cells = [cell(c["value"], values, f"{where_text}, column '{c['header']}'") for c in columns]
        cells += [device, meta["finished_utc"][:10], str(meta["commit"])[:7]]
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
        if src_name not in used:
            used.append(src_name)
    files = ", ".join(f"`{manifest['sources'][s]['file']}`" for s in used)
    lines.append("")
    lines.append(f"From {files}" + (f"; {table['note']}" if table.get("note") else "") + ".")
    return "\n".join(lines) + "\n"


def markdown_files(root, patterns=DOCS):
    """The markdown files (relative to root) that the patterns name, in a fixed order."""
    found = []
    for pat in patterns:
        for full in sorted(glob.glob(os.path.join(root, pat), recursive=True)):
            rel = os.path.relpath(full, root)
            if os.path.isfile(full) and rel not in found:
                found.append(rel)
    return found


def render_files(root, manifest_path, files):
    """{file: (text, text with every generated block filled from the results)} for the files that hold blocks;
    every table of the manifest must have exactly one block among them."""
    manifest = load_json(root, manifest_path, "manifest")
    tables = {t.get("name"): t for t in manifest.get("tables", [])}
    where = {}
    texts = {}
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        begins, ends = text.count("<!-- BEGIN generated:"), text.count("<!-- END generated -->")
        blocks = list(BLOCK.finditer(text))
        if begins != ends or begins != len(blocks):
            raise SourceError(f"{path}: {begins} BEGIN and {ends} END markers, {len(blocks)} well-formed blocks")
        if not blocks:
            continue
        for b in blocks:
            n = b["name"]
            if n not in tables:
                raise SourceError(f"{path}: generated block '{n}' has no table in {manifest_path}")
            if n in where:
                raise SourceError(f"generated block '{n}' appears twice ({where[n]} and {path})")
            where[n] = path
        texts[path] = (text, blocks)
    for n in tables:
        if n not in where:
            raise SourceError(f"table '{n}' of {manifest_path} has no place in {', '.join(files) or 'any file'} "
                              f"(add <!-- BEGIN generated: {n} --> and <!-- END generated -->)")
    cache = {}
    result = {}
    for path, (text, blocks) in texts.items():
        out, pos = [], 0
        for b in blocks:
            out.append(text[pos:b.start("body")])
            out.append(render_table(root, manifest, tables[b["name"]], cache))
            out.append(text[b.end("body"):b.end()])
            pos = b.end()
        out.append(text[pos:])
        result[path] = (text, "".join(out))
    return result


def render_readme(root, manifest_path, readme_path):
    """One file's text and its rendering (the file must hold every table of the manifest)."""
    return render_files(root, manifest_path, [readme_path])[readme_path]


def pathspecs(paths):
    """The manifest's code paths as git pathspecs: '!path' excludes."""
    return [f":(exclude){p[1:]}" if p.startswith("!") else p for p in paths]


def staleness(root, manifest_path):
    """[(source, commit, problem or None, changed paths)]: the paths of each source's 'code' list that commits
    after the one it ran on changed (up to HEAD); a pending source (no run yet) has commit None. A source without code paths, or whose run commit git does not
    know, is a problem: its staleness cannot be decided."""
    manifest = load_json(root, manifest_path, "manifest")
    out = []
    for name, src in manifest.get("sources", {}).items():
        if pending(root, src):
            out.append((name, None, None, []))  # no run yet: nothing to be stale
            continue
        meta = load_json(root, src["meta"], f"source {name}: run record")
        commit = str(meta.get("commit", ""))
        paths = src.get("code", [])
        if not [p for p in paths if not p.startswith("!")]:
            out.append((name, commit, "no code paths in the manifest", []))
            continue
        r = subprocess.run(["git", "-C", root, "diff", "--name-only", f"{commit}^{{commit}}", "HEAD", "--",
                            *pathspecs(paths)], capture_output=True, text=True)
        if r.returncode != 0:
            out.append((name, commit, f"git cannot compare its run's commit '{commit[:12]}' with HEAD "
                                      f"({r.stderr.strip().splitlines()[0] if r.stderr.strip() else 'no output'}; "
                                      "a shallow clone or a copy without history?)", []))
        else:
            out.append((name, commit, None, r.stdout.split()))
    return out


def stale(root, manifest_path):
    """Prints every source's state; returns the number of sources that are stale or undecidable."""
    bad = 0
    for name, commit, problem, changed in staleness(root, manifest_path):
        if problem:
            print(f"{name}: {problem}")
        elif commit is None:
            print(f"{name}: pending (no committed run yet)")
        elif changed:
            print(f"{name} (run on {commit[:7]}): changed since: {', '.join(changed)}")
        else:
            print(f"{name} (run on {commit[:7]}): current")
        bad += bool(problem or changed)
    return bad


def stale_errors(root, manifest_path, warnings=None):
    """One message for each stale or undecidable source. A stale source that the manifest's "stale_accepted" names
    (with the reason: what changed and why it was not rerun) is reported to `warnings` instead: a published table may
    lag the code only where a commit says so, and every row still names the commit it ran on. A pending source (no run
    yet) and a "pending" mark left on a source that has its run are warnings too."""
    manifest = load_json(root, manifest_path, "manifest")
    accepted = manifest.get("stale_accepted", {})
    msgs = []
    for name, commit, problem, changed in staleness(root, manifest_path):
        if commit is None:
            if warnings is not None:
                warnings.append(f"source {name} is pending: no committed run yet (bash bench/common/publish_results.sh "
                                f"BUILD_DIR {name}, render and commit); its tables say so")
            continue
        if manifest["sources"][name].get("pending") and warnings is not None:
            warnings.append(f"source {name} has its committed run: remove its 'pending' from the manifest")
        if problem:
            msgs.append(f"source {name}: {problem}")
        elif changed:
            shown = ", ".join(changed[:6]) + (f" and {len(changed) - 6} more" if len(changed) > 6 else "")
            msg = (f"source {name} is stale: its run (commit {commit[:7]}) predates changes to {shown}; "
                   f"rerun it (bash bench/common/publish_results.sh BUILD_DIR {name}), render and commit")
            if name in accepted and warnings is not None:
                warnings.append(f"{msg} (accepted for now: {accepted[name]})")
            else:
                msgs.append(msg)
    return msgs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["check", "render", "stale"])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--manifest", default=MANIFEST)
    ap.add_argument("--file", action="append", dest="files",
                    help="a markdown file to render or check (repeatable; default: README.md and docs/**/*.md)")
    a = ap.parse_args(argv)
    try:
        if a.command == "stale":
            return 1 if stale(a.root, a.manifest) else 0
        files = a.files or markdown_files(a.root)
        rendered = render_files(a.root, a.manifest, files)
    except SourceError as e:
        print(f"readme_tables: ERROR: {e}", file=sys.stderr)
        return 1
    changed = [p for p, (old, new) in rendered.items() if new != old]
    if a.command == "render":
        for p in changed:
            with open(os.path.join(a.root, p), "w", encoding="utf-8") as f:
                f.write(rendered[p][1])
        print(f"readme_tables: {', '.join(changed) + ' rewritten' if changed else 'already up to date'}")
        return 0
    status = 0
    for p in changed:
        old, new = rendered[p]
        sys.stderr.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                   f"{p} (committed)", f"{p} (from the results)"))
        print(f"readme_tables: ERROR: {p}'s generated tables differ from the committed results; run "
              f"'python3 scripts/readme_tables.py render' and commit", file=sys.stderr)
        status = 1
    try:
        warnings = []
        for msg in stale_errors(a.root, a.manifest, warnings):
            print(f"readme_tables: ERROR: {msg}", file=sys.stderr)
            status = 1
        for msg in warnings:
            print(f"readme_tables: WARNING: {msg}", file=sys.stderr)
    except SourceError as e:
        print(f"readme_tables: ERROR: {e}", file=sys.stderr)
        status = 1
    if status == 0:
        print(f"readme_tables: {', '.join(rendered)} match the committed results; "
              + (f"{len(warnings)} warning(s) above (stale results accepted, pending sources)" if warnings
                 else "every result is current"))
    return status


if __name__ == "__main__":
    sys.exit(main())
