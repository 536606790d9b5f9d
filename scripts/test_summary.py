#!/usr/bin/env python3
"""Count test cases from Bazel's per-test XML and print 'N passed, N failed'.

Usage: test_summary.py --targets FILE LABEL=TESTLOGS_DIR [...]
                       [--extra-failed N] [--extra-passed N]

FILE lists the Bazel test labels that ran (one per line, //pkg:name); only
their logs are read, so logs of deleted targets never count.

Each test.xml under a testlogs directory is either Criterion's JUnit report
(one <testcase> per Criterion test, status PASSED/FAILED/CRASHED/...) or the
report Bazel writes itself when the test binary produced none (one
<testcase> per target, failed when it has <failure>/<error>).  A target
whose test.log says the binary failed after its report was written counts
one extra failure, so a sanitizer report at exit is never lost.
"""
import os
import sys
import xml.etree.ElementTree as ET


def case_failed(case):
    status = (case.get("status") or "").upper()
    if status in ("FAILED", "CRASHED", "TIMED_OUT", "ERROR"):
        return True
    return case.find("failure") is not None or case.find("error") is not None


def scan(label, root, targets, failures):
    passed = failed = 0
    for target in targets:
        dirpath = os.path.join(root, target.lstrip("/").replace(":", "/"))
        path = os.path.join(dirpath, "test.xml")
        if not os.path.exists(path):
            failed += 1
            failures.append(f"{label}: {target}: did not run (no test.xml)")
            continue
        try:
            tree = ET.parse(path)
        except ET.ParseError as e:
            failed += 1
            failures.append(f"{label}: {target}: unreadable test.xml ({e})")
            continue
        cases = list(tree.iter("testcase"))
        target_failed = 0
        for case in cases:
            if case_failed(case):
                target_failed += 1
                failures.append(f"{label}: {target}: {case.get('name')}")
            else:
                passed += 1
        # Bazel marks the target failed in test.cache_status / the log even
        # when Criterion's report looked clean (e.g. LSan at exit).
        status_file = os.path.join(dirpath, "test.log")
        if target_failed == 0 and os.path.exists(status_file):
            with open(status_file, errors="replace") as f:
                log = f.read()
            if ("ERROR: AddressSanitizer" in log or "ERROR: LeakSanitizer" in log
                    or "WARNING: ThreadSanitizer" in log
                    or "runtime error:" in log):
                target_failed += 1
                failures.append(f"{label}: {target}: sanitizer report in test.log")
        if not cases and target_failed == 0:
            target_failed += 1
            failures.append(f"{label}: {target}: no test cases recorded")
        failed += target_failed
    return passed, failed


def main(argv):
    total_p = total_f = 0
    failures = []
    extra_failed = extra_passed = 0
    targets = []
    args = iter(argv[1:])
    for a in args:
        if a == "--targets":
            with open(next(args)) as f:
                targets = [t.strip() for t in f if t.strip().startswith("//")]
        elif a == "--extra-failed":
            extra_failed += int(next(args))
        elif a == "--extra-passed":
            extra_passed += int(next(args))
        else:
            label, _, root = a.partition("=")
            p, f = scan(label, root, targets, failures)
            print(f"{label}: {p} passed, {f} failed", file=sys.stderr)
            total_p += p
            total_f += f
    total_p += extra_passed
    total_f += extra_failed
    for line in failures:
        print("FAILED " + line, file=sys.stderr)
    print(f"{total_p} passed, {total_f} failed")
    return 1 if total_f else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
