#!/usr/bin/env python3
"""test_summary.py -- an honest summary of a ctest run, from its JUnit file (ctest --output-junit FILE).

    python3 scripts/test_summary.py FILE [--check NAME=STATUS ...] [--slowest N]

ctest's own line ("100% tests passed") counts skipped tests as passed. This prints N passed, N skipped -- each
distinct skip reason once, with its count -- and N failed, naming every failure; --check adds the result of
a step that is not a ctest test (NAME passed when STATUS is 0); --slowest N lists the N longest tests with their
seconds (what to shorten when the suite grows slow). Exit status 1 when anything failed, when no
test ran, or when the file is missing or unreadable.

A skip is what ctest reports for SKIP_REGULAR_EXPRESSION or SKIP_RETURN_CODE; its reason is the text after
"qmmm-skip: " (tests/core/gpu_test.hpp) or "SKIPPED: " (the VMC checks) in the test's output. A test that
did not run for any other reason (its program missing, say) is a failure, as ctest counts it.
"""
import argparse
import collections
import re
import sys
import xml.etree.ElementTree as ET

REASON = re.compile(r"(?:qmmm-skip|SKIPPED): (.+)")


def classify(case):
    """(outcome, detail) of one <testcase>: passed, skipped (reason), failed (how), disabled."""
    status = case.get("status", "")
    out = case.findtext("system-out") or ""
    if status == "run":
        return "passed", ""
    if status == "disabled":
        return "disabled", ""
    skipped = case.find("skipped")
    if status == "notrun" and skipped is not None and skipped.get("message", "").startswith("SKIP_"):
        m = REASON.search(out)
        return "skipped", m.group(1).strip() if m else f"no reason printed ({skipped.get('message')})"
    if status == "notrun":
        return "failed", "not run: " + (skipped.get("message", "") if skipped is not None else "")
    failure = case.find("failure")
    message = failure.get("message", "") if failure is not None else ""
    return "failed", message or "failed"


def summarize(junit, checks, slowest=0):
    try:
        cases = ET.parse(junit).getroot().iter("testcase")
    except (OSError, ET.ParseError) as e:
        return [f"test summary: cannot read {junit}: {e}"], 1
    counts = collections.Counter()
    reasons = collections.Counter()
    failures = []
    times = []
    for case in cases:
        try:
            times.append((float(case.get("time", "0")), case.get("name")))
        except ValueError:
            pass
        outcome, detail = classify(case)
        counts[outcome] += 1
        if outcome == "skipped":
            reasons[detail] += 1
        elif outcome == "failed":
            failures.append(f"{case.get('name')} ({detail})")
    for name, status in checks:
        if status == 0:
            counts["passed"] += 1
        else:
            counts["failed"] += 1
            failures.append(f"{name} (exit status {status})")
    lines = ["==== test summary ====",
             f"{counts['passed']} passed, {counts['skipped']} skipped, {counts['failed']} failed"
             + (f", {counts['disabled']} disabled" if counts["disabled"] else "")
             + (f" (including {len(checks)} checks outside ctest)" if checks else "")]
    if reasons:
        lines.append("skipped, by reason:")
        lines += [f"  {n:4d}  {r}" for r, n in sorted(reasons.items(), key=lambda x: (-x[1], x[0]))]
    if failures:
        lines.append("failed:")
        lines += [f"  {f}" for f in failures]
    if slowest > 0 and times:
        lines.append(f"longest {min(slowest, len(times))} tests (seconds):")
        lines += [f"  {t:8.1f}  {n}" for t, n in sorted(times, key=lambda x: (-x[0], x[1]))[:slowest]]
    ran = counts["passed"] + counts["failed"] + counts["skipped"]
    if ran == 0:
        lines.append("no test ran")
    return lines, 1 if counts["failed"] or ran == 0 else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("junit")
    ap.add_argument("--check", action="append", default=[], metavar="NAME=STATUS")
    ap.add_argument("--slowest", type=int, default=0, metavar="N", help="list the N longest tests")
    a = ap.parse_args(argv)
    checks = []
    for c in a.check:
        name, _, status = c.rpartition("=")
        if not name or not status.lstrip("-").isdigit():
            ap.error(f"--check {c}: want NAME=STATUS")
        checks.append((name, int(status)))
    lines, status = summarize(a.junit, checks, a.slowest)
    print("\n".join(lines))
    return status


if __name__ == "__main__":
    sys.exit(main())
