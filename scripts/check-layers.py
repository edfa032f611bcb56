#!/usr/bin/env python3
"""Fails when an include goes against the layering: app -> ui -> core, app/python -> core, core's folders in order.

core/'s folders are listed lowest first; a file may include its own folder and any folder listed before it.
Includes known to go against the order are listed in KNOWN_UPWARD with the reason they remain: the check fails on
any other upward include, and on a listed one that no longer exists (so the list only shrinks).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORE_ORDER = ["base", "compat", "device", "mesh", "sharding", "array", "ir", "viz", "io", "random", "spmd", "ops",
              "propagation", "explicit", "trace", "transforms", "exec", "cost", "api"]
# (including file, included header): upward includes still to be removed.
KNOWN_UPWARD = {
    ("core/ops/program_primitives.cpp", "exec/interpreter.h"): "nested jit's kernel evaluates its body",
    ("core/ops/control_flow_loops.cpp", "exec/interpreter.h"): "loop bodies are evaluated by the interpreter",
    ("core/ops/control_flow_loops.cpp", "exec/cancellation.h"): "long loops stop on Ctrl-C",
    ("core/ops/control_flow_spmd.cpp", "exec/interpreter.h"): "loop bodies are evaluated by the interpreter",
    ("core/ops/control_flow_spmd.cpp", "exec/cancellation.h"): "long loops stop on Ctrl-C",
    ("core/random/random_primitives.cpp", "ops/elementwise_common.h"): "random primitives registered from random/",
    ("core/random/random_primitives.cpp", "ops/ops.h"): "random primitives registered from random/",
    ("core/transforms/transpose_rules_mapped.cpp", "exec/shard_map.h"): "shard_map specs live in exec",
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path: pathlib.Path):
    parts = path.relative_to(ROOT).parts
    if parts[0] == "core" and len(parts) > 2:
        return ("core", parts[1])
    if parts[0] == "app" and len(parts) > 1 and parts[1] == "python":
        return ("app/python", None)
    return (parts[0], None)


def target_of(header: str):
    first = header.split("/")[0]
    if first in CORE_ORDER:
        return ("core", first)
    if first in ("ui", "app", "python", "gui", "cli", "model", "panels"):
        return (first, None)
    return None


def main() -> int:
    problems = []
    seen_known = set()
    for path in sorted(ROOT.glob("core/**/*")) + sorted(ROOT.glob("ui/**/*")) + sorted(ROOT.glob("app/python/*")):
        if path.suffix not in (".h", ".cpp") or not path.is_file():
            continue
        rel = str(path.relative_to(ROOT))
        source = layer_of(path)
        for header in INCLUDE.findall(path.read_text(encoding="utf-8", errors="replace")):
            target = target_of(header)
            if target is None:
                continue
            if source[0] == "core" and target[0] != "core":
                problems.append(f"{rel}: core includes {header} (core never includes ui, app or bindings)")
            elif source[0] == "ui" and header.split("/")[0] in ("app", "python", "gui", "cli"):
                problems.append(f"{rel}: ui includes {header} (ui sits below app)")
            elif source[0] == "core" and target[0] == "core":
                if CORE_ORDER.index(target[1]) > CORE_ORDER.index(source[1]):
                    if (rel, header) in KNOWN_UPWARD:
                        seen_known.add((rel, header))
                    else:
                        problems.append(f"{rel}: {source[1]}/ includes {header}, a folder above it "
                                        f"(order, lowest first: {' '.join(CORE_ORDER)})")
    for stale in sorted(set(KNOWN_UPWARD) - seen_known):
        problems.append(f"scripts/check-layers.py: {stale[0]} no longer includes {stale[1]}; remove it from KNOWN_UPWARD")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
