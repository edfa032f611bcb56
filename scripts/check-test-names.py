#!/usr/bin/env python3
"""Fails on a doctest TEST_CASE name CTest cannot run: doctest_discover_tests registers each case by name, and CTest
splits a name at ';' into a list, so the registered test's --test-case filter matches no case and it passes
having run nothing. A repeated name in one binary would likewise run both cases under one test."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CASE = re.compile(r'TEST_CASE\(\s*"((?:[^"\\]|\\.)*)"')


def main():
    problems = []
    seen = {}
    for path in sorted((ROOT / "tests").rglob("*.cpp")):
        for name in CASE.findall(path.read_text(encoding="utf-8")):
            where = path.relative_to(ROOT)
            if ";" in name:
                problems.append(f"{where}: TEST_CASE name has ';', which CTest splits, so the case never runs: {name}")
            seen.setdefault(name, []).append(str(where))
    for name, files in seen.items():
        for where in sorted(set(files)):
            if files.count(where) > 1:
                problems.append(f"{where}: TEST_CASE name used {files.count(where)} times in one file: {name}")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
