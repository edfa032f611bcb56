# Writes docs/api-coverage.md: which of JAX 0.11's public names the simulated `jax` package provides.
#
# Runs inside shardscope, against the jax package embedded in the binary; from the repository root:
#     build/app/shardscope run tools/api_coverage.py
# or, rebuilding shardscope first: cmake --build build --target api_coverage
# SHARDSCOPE_API_NAMES (default tests/data/jax_public_names.json) and SHARDSCOPE_API_COVERAGE_OUT (default
# docs/api-coverage.md) override the paths; tests/app/api_coverage_test.cpp uses them to check the committed table.
import importlib
import json
import os
import warnings

SIMULATED = "simulated"
NOT_SIMULATED = "not simulated"
MISSING = "missing"
OTHER_ERROR = "other error"

# Order of the columns and sections; descriptions say what each status means to a reader.
STATUS_HEADINGS = {
    SIMULATED: "simulated",
    NOT_SIMULATED: "not simulated (raises NotImplementedError)",
    MISSING: "missing (raises AttributeError or ImportError)",
    OTHER_ERROR: "other error on access",
}


def classify(module, name):
    """One name's status: whether `module.name` resolves, and if not, how it fails."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecation notices are not coverage
            getattr(module, name)
    except NotImplementedError:
        return NOT_SIMULATED
    except (AttributeError, ImportError):
        return MISSING
    except Exception as error:  # noqa: BLE001 - any other failure is reported, not fatal
        return f"{OTHER_ERROR}: {type(error).__name__}"
    return SIMULATED


def classify_module(module_name, names):
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return {name: MISSING for name in names}
    except NotImplementedError:
        return {name: NOT_SIMULATED for name in names}
    return {name: classify(module, name) for name in names}


def status_group(status):
    return OTHER_ERROR if status.startswith(OTHER_ERROR) else status


def percent(part, whole):
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def render(reference, results):
    source = reference["source"]
    lines = [
        "# Simulated JAX API coverage",
        "",
        f"Which public names of JAX {reference['jax_version']} (`{source['rev']}`, commit "
        f"`{source['commit'][:12]}`) shardscope's simulated `jax` package provides. A name is *simulated* when "
        "the attribute resolves (for a callable, that is all this table checks); *not simulated* when accessing "
        "it raises `NotImplementedError` naming it; *missing* when it raises `AttributeError` or `ImportError`, "
        "which the project treats as a defect.",
        "",
        "Generated, do not edit: regenerate with `cmake --build build --target api_coverage` (rebuilds "
        "`shardscope`, then runs `build/app/shardscope run tools/api_coverage.py` in the repository root). "
        "The reference list is "
        "`tests/data/jax_public_names.json` (written by `tools/extract_jax_names.py`); the "
        "`app_api_coverage_tests` test fails when this file is stale.",
        "",
        "| module | names | simulated | not simulated | missing | other error | simulated % |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    totals = {status: 0 for status in STATUS_HEADINGS}
    for module_name, statuses in results.items():
        counts = {status: 0 for status in STATUS_HEADINGS}
        for status in statuses.values():
            counts[status_group(status)] += 1
        for status, count in counts.items():
            totals[status] += count
        lines.append(f"| `{module_name}` | {len(statuses)} | " + " | ".join(str(counts[s]) for s in STATUS_HEADINGS) +
                     f" | {percent(counts[SIMULATED], len(statuses))} |")
    all_names = sum(totals.values())
    lines.append(f"| **total** | {all_names} | " + " | ".join(str(totals[s]) for s in STATUS_HEADINGS) +
                 f" | {percent(totals[SIMULATED], all_names)} |")
    for module_name, statuses in results.items():
        lines += ["", f"## `{module_name}`"]
        for status, heading in STATUS_HEADINGS.items():
            names = sorted(name for name, got in statuses.items() if status_group(got) == status)
            if not names:
                continue
            if status == OTHER_ERROR:
                listed = ", ".join(f"`{name}` ({statuses[name][len(OTHER_ERROR) + 2:]})" for name in names)
            else:
                listed = ", ".join(f"`{name}`" for name in names)
            lines += ["", f"**{heading}** ({len(names)}): {listed}"]
    return "\n".join(lines) + "\n"


def main():
    names_path = os.environ.get("SHARDSCOPE_API_NAMES", "tests/data/jax_public_names.json")
    out_path = os.environ.get("SHARDSCOPE_API_COVERAGE_OUT", "docs/api-coverage.md")
    if not os.path.exists(names_path):
        raise FileNotFoundError(f"{names_path} not found: run this from the repository root, or set "
                                "SHARDSCOPE_API_NAMES to the reference list")
    with open(names_path, encoding="utf-8") as names_file:
        reference = json.load(names_file)
    results = {module_name: classify_module(module_name, names)
               for module_name, names in sorted(reference["modules"].items())}
    if os.path.dirname(out_path):
        os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w", encoding="utf-8", newline="\n") as out:
        out.write(render(reference, results))
    print(f"wrote {out_path}")


main()
