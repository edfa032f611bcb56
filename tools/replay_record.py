#!/usr/bin/env python3
"""Replays a real-JAX capture record (scripts/device-capture.sh's JSON) through `shardscope run` and reports,
per file, which cells print what real JAX printed, with a diff for each that differs. A developer's tool for
records that are not (or not yet) part of the test suite; tests/app/real_jax_record_test.cpp applies the
same normalisations to the committed ones.

Usage: tools/replay_record.py RECORD.json [--binary build/app/shardscope] [--devices cpu:8]
                              [--jax-version 0.11.2] [--only SUBSTRING] [--quiet]
"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile

MARKER = "@@shardscope-replay-cell@@"
FILTER_NOTE = re.compile(r"--------------------\nFor simplicity, JAX has removed its internal frames from the traceback of the "
                         r"following exception\. Set JAX_TRACEBACK_FILTERING=off to include these\.\n")


def mask(text):
    return re.sub(r"object id [0-9]+", "object id ...", re.sub(r"0x[0-9a-fA-F]+", "0x...", text))


def single_newline(text):
    text = text.rstrip("\n")
    return text + "\n" if text else text


def recorded_text(cell):
    text = cell["stdout"]
    if text and not text.endswith("\n"):
        text += "\n"
    if isinstance(cell.get("result"), str):
        text += cell["result"] + "\n"
    return single_newline(mask(FILTER_NOTE.sub("", text)))


def without_frames(text):
    kept, in_frames = [], False
    for line in text.split("\n"):
        if line == "Traceback (most recent call last):":
            in_frames = True
            continue
        if in_frames and (line.startswith("  ") or line == ""):
            continue
        in_frames = False
        kept.append(line)
    return "\n".join(kept)


def as_captured(code):
    """The capture tool drops IPython magics and shell lines and shows the last expression even after a `;`."""
    lines = [ln for ln in code.splitlines() if not ln.lstrip().startswith(("!", "%"))]
    while lines and not lines[-1].strip():
        lines.pop()
    if lines and lines[-1].rstrip().endswith(";") and not lines[-1].startswith((" ", "\t")):
        lines[-1] = lines[-1].rstrip()[:-1]
    # The capture tool keeps a cell's leading blank lines, which count in line numbers; `# %%` cells drop them.
    leading = 0
    while leading < len(lines) and not lines[leading].strip():
        lines[leading] = "pass"
        leading += 1
    return "\n".join(lines)


def replay(binary, cells, devices, version):
    script = "".join(f"# %%\nprint('{MARKER}')\n# %%\n{as_captured(c['code'])}\n" for c in cells)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(script)
    try:
        run = subprocess.run([binary, "run", f.name, "--devices", devices, "--jax-version", version],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ, SHARDSCOPE_DISPLAY="repr"), timeout=600)
    finally:
        os.unlink(f.name)
    produced = []
    # The capture tool records stdout and the exception only: logging records go to stderr there.
    stdout = re.sub(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:.*\n", "", run.stdout, flags=re.M)
    # So do Python's warnings ("file:line: SomeWarning: message" and the source line under it).
    stdout = re.sub(r"^[^\n:]+:[0-9]+: \w*Warning: .*\n(  .*\n)?", "", stdout, flags=re.M)
    for line in stdout.split("\n"):
        if line == MARKER:
            produced.append("")
        elif produced:
            produced[-1] += line + "\n"
    return produced


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("record")
    ap.add_argument("--binary", default="build/app/shardscope")
    ap.add_argument("--devices", default="cpu:8")
    ap.add_argument("--jax-version", default="0.11.2")
    ap.add_argument("--only", default="")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    record = json.load(open(args.record))
    total = matched = 0
    for path, cells in record["files"].items():
        if args.only not in path:
            continue
        outputs = replay(args.binary, cells, args.devices, args.jax_version)
        file_matched = 0
        for i, cell in enumerate(cells):
            want = recorded_text(cell)
            got = single_newline(mask(re.sub(r"<cell [0-9]+>", "<cell>", without_frames(outputs[i])))) if i < len(outputs) else "<no output: the run stopped>\n"
            if got == want:
                file_matched += 1
            elif not args.quiet:
                print(f"== {path} cell {cell['cell']}")
                print("".join(list(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "real", "shardscope", n=1))[2:])[:3000])
        total += len(cells)
        matched += file_matched
        print(f"{path}: {file_matched} of {len(cells)} cells match")
    print(f"total: {matched} of {total}")


if __name__ == "__main__":
    sys.exit(main())
