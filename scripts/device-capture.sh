#!/usr/bin/env bash
# Records what real JAX prints for the project's probe programs, seeds, scenes and the oracle corpus, on 8
# forced CPU devices and on the machine's GPU. Meant for a lent device machine with real JAX; expects the
# capture tool in .capture/ (copied from ../shared/tools) and the corpus as .capture/nb/*.ipynb.
# Each file runs in its own process with its own timeout, so one slow file costs only itself.
# With an argument, the list of "mode path" lines (mode cpu8 or gpu) is read from that file instead of the
# default list; records are merged per group (the file name's first part) into $OUT.
set -u
list=${1:-}
out=${OUT:?OUT must name the folder results go to}
work=/tmp/capture-parts
mkdir -p "$work/cpu8" "$work/gpu"
export PYTHONUNBUFFERED=1
python3 -c "import jax, jaxlib, flax, optax; print('jax', jax.__version__, 'jaxlib', jaxlib.__version__, 'flax', flax.__version__, 'optax', optax.__version__)" 2>&1 | tee "$out/versions.txt"
nvidia-smi -L >> "$out/versions.txt" 2>&1

capture_one() {  # mode file
  local mode=$1 file=$2 tag
  tag=$(echo "$file" | tr '/.' '__')
  if [ "$mode" = cpu8 ]; then
    JAX_PLATFORMS=cpu XLA_FLAGS=--xla_force_host_platform_device_count=8 \
      timeout "${CPU_TIMEOUT:-150}" python3 .capture/real_jax_capture.py --out "$work/$mode/$tag.json" "$file" 2>&1 | tail -3
  else
    XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 120 python3 .capture/real_jax_capture.py --out "$work/$mode/$tag.json" "$file" 2>&1 | tail -3
  fi
  echo "[$mode] $file rc=${PIPESTATUS[0]}"
}
export -f capture_one
export work

start=$(date +%s)
{
  if [ -n "$list" ]; then cat "$list"; else
    for f in tests/data/real_jax/probes/p*.py tests/seeds/*.py scenes/*.py .capture/nb/*.ipynb; do echo "cpu8 $f"; done
    for f in tests/data/real_jax/probes/gpu_probe.py tests/seeds/*.py; do echo "gpu $f"; done
  fi
} | xargs -P "${CAPTURE_JOBS:-6}" -L 1 bash -c 'capture_one "$0" "$1"' 2>&1 | tee "$out/log.txt"
echo "captured in $(( $(date +%s) - start )) s" | tee -a "$out/log.txt"

# Merge the per-file records into one file per group (the device tool brings back at most 8 files).
python3 - "$work" "$out" <<'PY'
import glob, json, os, sys
work, out = sys.argv[1], sys.argv[2]
groups = {"probes_cpu8": ("cpu8", "tests_data_real_jax_probes"), "seeds_cpu8": ("cpu8", ("tests_seeds", "scenes", "examples")),
          "oracle_cpu8": ("cpu8", "_capture_nb"), "docs_cpu8": ("cpu8", "_capture_docs"), "gpu": ("gpu", "")}
for name, (mode, prefix) in groups.items():
    merged = None
    for p in sorted(glob.glob(f"{work}/{mode}/*.json")):
        if not os.path.basename(p).startswith(prefix):
            continue
        rec = json.load(open(p))
        if merged is None:
            merged = {k: v for k, v in rec.items() if k != "files"} | {"files": {}}
        merged["files"].update(rec["files"])
    if merged:
        json.dump(merged, open(f"{out}/{name}.json", "w"), indent=1)
        print(name, len(merged["files"]), "files")
PY
