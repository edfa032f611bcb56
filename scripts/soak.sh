#!/usr/bin/env bash
# The window soak: SECONDS (default 600) of seeded random input under Xvfb, then RSS growth after the first 60 s.
# Builds nothing: run it after building build/app/shardscope. Fails when the window crashed or growth >= 10 %.
set -u
seconds="${1:-600}"
seed="${SOAK_SEED:-1}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
stats="$work/soak.json"
start="$(date -u +%FT%TZ)"
xvfb-run -a "$root/build/app/shardscope" gui "$root/scenes/default.py" --run-all --soak "$seconds" \
  --soak-seed "$seed" --stats "$stats" --config-dir "$work/config" --timeout 600 >"$work/out.txt" 2>&1
status=$?
echo "started $start, ended $(date -u +%FT%TZ), exit status $status, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$status" -ne 0 ] || [ ! -s "$stats" ]; then
  echo "soak: the window failed (status $status); its output:" >&2
  tail -20 "$work/out.txt" >&2
  exit 1
fi
python3 - "$stats" <<'PY'
import json, sys
soak = json.load(open(sys.argv[1]))["soak"]
rss = soak["rss_kb"]
print("actions:", ", ".join(f"{k} {v}" for k, v in sorted(soak["actions"].items())),
      f"(total {sum(soak['actions'].values())}, skipped while busy {soak['skipped_busy']})")
print(f"cells run {soak['cells_run']}, failed {soak['cells_failed']}; quits cancelled {soak['quits_cancelled']}")
warmup = 60
if len(rss) <= warmup:
    print(f"only {len(rss)} RSS samples: no growth after a {warmup} s warm-up to report")
    sys.exit(0)
base, end, peak = rss[warmup - 1], rss[-1], max(rss[warmup:])
growth = 100.0 * (peak - base) / base
print(f"RSS: {base} kB after warm-up ({warmup} s), {end} kB at the end, max after warm-up {peak} kB: growth {growth:.1f} %")
sys.exit(1 if growth >= 10 else 0)
PY
