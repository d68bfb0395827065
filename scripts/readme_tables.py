#!/usr/bin/env python3
"""readme_tables.py -- the README's measured tables, generated from committed benchmark results.

    python3 scripts/readme_tables.py check    # CI: exit 1 when README.md differs from what the results give
    python3 scripts/readme_tables.py render   # rewrite the generated blocks of README.md
    python3 scripts/readme_tables.py stale    # sources whose code changed since their run (information)

bench/results/README_SOURCES.json (the manifest) names the sources -- a committed result file and the sidecar
NAME.meta.json that bench/run_bench.sh wrote beside it (command, device, date, commit, sha256 of each output)
-- and the tables: for each row, which record of which source and which fields fill the columns. Every row
ends with the device, date and commit of its run. README.md holds each table between
    <!-- BEGIN generated: NAME ... -->  and  <!-- END generated -->
and nothing else of README.md is touched. Anything missing or inconsistent fails loudly: a source or sidecar
that is not there, a result whose sha256 is not the one its sidecar recorded (a result replaced without its
run record), a run that failed or ran on uncommitted code, a record that is not found exactly once, a field
that is not in it, a table without markers or markers without a table. Python 3 standard library only.
"""
import argparse
import difflib
import hashlib
import json
import os
import re
import subprocess
import sys

MANIFEST = "bench/results/README_SOURCES.json"
README = "README.md"
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
    if meta.get("uncommitted_changes") and not src.get("allow_uncommitted"):
        raise SourceError(f"source {name}: ran with uncommitted changes to {', '.join(meta['uncommitted_changes'])} "
                          "(say why in the manifest's allow_uncommitted to use it anyway)")
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
    used = []
    for i, row in enumerate(table["rows"]):
        where_text = f"table {name}, row {i + 1}"
        src_name = row.get("source")
        if src_name not in manifest.get("sources", {}):
            raise SourceError(f"{where_text}: source '{src_name}' is not in the manifest's sources")
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


def render_readme(root, manifest_path, readme_path):
    """README.md's text with every generated block filled from the results."""
    manifest = load_json(root, manifest_path, "manifest")
    with open(os.path.join(root, readme_path), encoding="utf-8") as f:
        text = f.read()
    tables = {t.get("name"): t for t in manifest.get("tables", [])}
    begins, ends = text.count("<!-- BEGIN generated:"), text.count("<!-- END generated -->")
    blocks = list(BLOCK.finditer(text))
    if begins != ends or begins != len(blocks):
        raise SourceError(f"{readme_path}: {begins} BEGIN and {ends} END markers, {len(blocks)} well-formed blocks")
    names = [b["name"] for b in blocks]
    for n in names:
        if n not in tables:
            raise SourceError(f"{readme_path}: generated block '{n}' has no table in {manifest_path}")
        if names.count(n) > 1:
            raise SourceError(f"{readme_path}: generated block '{n}' appears {names.count(n)} times")
    for n in tables:
        if n not in names:
            raise SourceError(f"table '{n}' of {manifest_path} has no place in {readme_path} "
                              f"(add <!-- BEGIN generated: {n} --> and <!-- END generated -->)")
    cache = {}
    out, pos = [], 0
    for b in blocks:
        out.append(text[pos:b.start("body")])
        out.append(render_table(root, manifest, tables[b["name"]], cache))
        out.append(text[b.end("body"):b.end()])
        pos = b.end()
    out.append(text[pos:])
    return text, "".join(out)


def stale(root, manifest_path):
    """Sources whose code paths changed in commits after the one they ran on (needs the git history)."""
    manifest = load_json(root, manifest_path, "manifest")
    for name, src in manifest.get("sources", {}).items():
        meta = load_json(root, src["meta"], f"source {name}: run record")
        paths = src.get("code", [])
        if not paths:
            print(f"{name}: no code paths in the manifest")
            continue
        r = subprocess.run(["git", "-C", root, "diff", "--name-only", meta["commit"], "HEAD", "--", *paths],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{name}: cannot compare with {meta['commit'][:7]}: {r.stderr.strip()}")
        elif r.stdout.strip():
            print(f"{name} (run on {meta['commit'][:7]}): changed since: {', '.join(r.stdout.split())}")
        else:
            print(f"{name} (run on {meta['commit'][:7]}): current")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["check", "render", "stale"])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--manifest", default=MANIFEST)
    ap.add_argument("--readme", default=README)
    a = ap.parse_args(argv)
    try:
        if a.command == "stale":
            stale(a.root, a.manifest)
            return 0
        old, new = render_readme(a.root, a.manifest, a.readme)
    except SourceError as e:
        print(f"readme_tables: ERROR: {e}", file=sys.stderr)
        return 1
    if a.command == "render":
        if new != old:
            with open(os.path.join(a.root, a.readme), "w", encoding="utf-8") as f:
                f.write(new)
        print(f"readme_tables: {a.readme} {'rewritten' if new != old else 'already up to date'}")
        return 0
    if new != old:
        sys.stderr.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                   f"{a.readme} (committed)", f"{a.readme} (from the results)"))
        print(f"readme_tables: ERROR: {a.readme}'s generated tables differ from the committed results; run "
              f"'python3 scripts/readme_tables.py render' and commit", file=sys.stderr)
        return 1
    print(f"readme_tables: {a.readme} matches the committed results")
    return 0


if __name__ == "__main__":
    sys.exit(main())
