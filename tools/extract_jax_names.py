#!/usr/bin/env python3
"""Writes tests/data/jax_public_names.json: the public names of JAX's user-facing modules at one release.

The list is the reference that tools/api_coverage.py measures the simulated `jax` package against. It is read
from a git checkout of github.com/jax-ml/jax (a bare clone is enough) without importing JAX:

    python3 tools/extract_jax_names.py --git-dir /path/to/jax.git --rev jax-v0.11.0

A public name is one a module binds unconditionally at top level (an `import ... as` re-export, a def, a class
or an assignment), is not underscored and is not deleted later; where a module declares `__all__`, that list
is the answer. Names behind `if` blocks are left out: in JAX those are deprecation shims (`TYPE_CHECKING`
aliases with a `__getattr__` that warns) rather than API.
"""
import argparse
import ast
import json
import pathlib
import re
import subprocess

# Module -> its source file in the JAX tree.
MODULE_FILES = {
    "jax": "jax/__init__.py",
    "jax.numpy": "jax/numpy/__init__.py",
    "jax.lax": "jax/lax/__init__.py",
    "jax.random": "jax/random.py",
    "jax.nn": "jax/nn/__init__.py",
    "jax.sharding": "jax/sharding.py",
    "jax.tree_util": "jax/tree_util.py",
    "jax.tree": "jax/tree.py",
    "jax.debug": "jax/debug.py",
}


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True,
                          text=True).stdout


def bound_names(statements):
    """Names bound and deleted, in order, by top-level statements (try bodies included, if blocks not)."""
    events = []
    for node in statements:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    events.append(("bind", alias.asname or alias.name))
        elif isinstance(node, ast.Import):
            # `import a.b` binds `a`; only `import a.b as c` names something new.
            for alias in node.names:
                events.append(("bind", alias.asname or alias.name.split(".")[0]))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            events.append(("bind", node.name))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        events.append(("bind", leaf.id))
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    events.append(("del", target.id))
        elif isinstance(node, ast.Try):
            events.extend(bound_names(node.body))
    return events


def declared_all(tree):
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return None


def public_names(source):
    tree = ast.parse(source)
    exported = declared_all(tree)
    if exported is not None:
        return sorted(set(exported))
    names = set()
    for event, name in bound_names(tree.body):
        if event == "bind":
            names.add(name)
        else:
            names.discard(name)
    return sorted(name for name in names if not name.startswith("_"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", required=True, help="a (bare) git clone of github.com/jax-ml/jax")
    parser.add_argument("--rev", default="jax-v0.11.0", help="tag or commit to read (default: jax-v0.11.0)")
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" /
                                             "jax_public_names.json"))
    args = parser.parse_args()
    commit = git(args.git_dir, "rev-parse", args.rev + "^{commit}").strip()
    version_source = git(args.git_dir, "show", f"{commit}:jax/version.py")
    version = re.search(r'^_version\s*=\s*"([^"]+)"', version_source, re.MULTILINE).group(1)
    modules = {module: public_names(git(args.git_dir, "show", f"{commit}:{path}"))
               for module, path in MODULE_FILES.items()}
    facts = {
        "jax_version": version,
        "source": {"repository": "https://github.com/jax-ml/jax", "rev": args.rev, "commit": commit},
        "modules": modules,
    }
    with open(args.out, "w", encoding="utf-8") as out:
        json.dump(facts, out, indent=1)
        out.write("\n")
    for module, names in modules.items():
        print(f"{module}: {len(names)} names")


if __name__ == "__main__":
    main()
