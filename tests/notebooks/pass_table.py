#!/usr/bin/env python3
"""Writes the notebook corpus pass table (README.md here) from a test run's results.

Usage: tests/notebooks/pass_table.py BUILD_DIR/tests/notebook_results > tests/notebooks/README.md
"""
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent


def main(results_dir):
    manifest = json.loads((HERE / 'manifest.json').read_text())['notebooks']
    rows, failures = [], []
    totals = {'pass': 0, 'xfail': 0, 'FAIL': 0, 'xpass': 0}
    for name, settings in sorted(manifest.items()):
        path = pathlib.Path(results_dir) / f'{name}.tsv'
        verdicts = [line.split('\t', 2) for line in path.read_text().splitlines()] if path.exists() else []
        counts = {key: sum(1 for v in verdicts if v[1] == key) for key in totals}
        for key in totals:
            totals[key] += counts[key]
        passed = counts['pass'] + counts['xpass']
        rows.append(f"| {name} | {settings['jax_version']} | {settings['devices']} | {len(verdicts)} | {passed} | "
                    f"{counts['xfail'] + counts['FAIL']} |")
        for index, status, reason in verdicts:
            if status in ('xfail', 'FAIL'):
                failures.append(f'| {name} | {index} | {reason or "(not yet explained)"} |')
    eligible = sum(totals.values())
    passed = totals['pass'] + totals['xpass']
    print('# Notebook corpus: pass table\n')
    print('The JAX notebooks of the oracle corpus (`*.json` here, copied from `shared/oracle/notebooks`) replayed by')
    print('`tests/app/notebook_corpus_test.cpp` under the profile and devices each was recorded with')
    print('(`manifest.json`). Eligible cells have outputs and are neither skip-recommended (stale, missing,')
    print('hand-edited, compiler-dependent, Pallas) nor random-dependent (flagged random, or listed in the Random')
    print('column of `shared/reference/notebook_corpus.md`) nor timings. Outputs are compared byte for')
    print('byte, colour codes included. Regenerate with `tests/notebooks/pass_table.py BUILD/tests/notebook_results`.\n')
    print(f'**{passed} of {eligible} eligible cells match ({100.0 * passed / max(eligible, 1):.1f} %).**\n')
    print('| notebook | JAX profile | devices | eligible | match | differ |')
    print('|---|---|---|---|---|---|')
    print('\n'.join(rows))
    print('\n## Cells that differ, and why\n')
    print('| notebook | cell | why |')
    print('|---|---|---|')
    print('\n'.join(failures))


if __name__ == '__main__':
    main(sys.argv[1])
