#!/usr/bin/env bash
# Records every output a restructuring must keep byte for byte: `cells` (csv, json, arrow), `audit` (text and
# --json) and `compare --json` on the demo, the mixed-format root and every fixture, and the `/api/*` bodies
# of a served demo and mixed root (timings removed). Usage: golden.sh <cellscope binary> <output dir>;
# then `diff -r` two output dirs.
set -u
bin=$(realpath "$1"); out=$2
cd "$(dirname "$0")/../.."
mkdir -p "$out"
roots=(data/demo data/demo-mixed data/fixtures/*/ data/fixtures/formats/*/)
for root in "${roots[@]}"; do
  root=${root%/}
  name=$(echo "$root" | tr '/' '_')
  for fmt in csv json arrow; do
    "$bin" cells "$root" --format "$fmt" --no-cache >"$out/$name.cells.$fmt" 2>"$out/$name.cells.$fmt.err"
    echo "exit $?" >>"$out/$name.cells.$fmt.err"
  done
  "$bin" audit "$root" --no-cache >"$out/$name.audit.txt" 2>"$out/$name.audit.err"; echo "exit $?" >>"$out/$name.audit.err"
  "$bin" audit "$root" --json --no-cache >"$out/$name.audit.json" 2>/dev/null
done
for spec in "data/demo --a sglang --b vllm" "data/demo --a sglang --b vllm --phase scaling" \
            "data/demo --by model --a llama3.2-1b --b llama3.2-3b --per workload" \
            "data/demo-mixed --a sglang --b vllm" "data/demo --a VLLM --b sglang"; do
  name=$(echo "$spec" | tr ' /' '__')
  "$bin" compare $spec --no-cache >"$out/cmp$name.txt" 2>"$out/cmp$name.err"; echo "exit $?" >>"$out/cmp$name.err"
  "$bin" compare $spec --json --no-cache >"$out/cmp$name.json" 2>/dev/null
done
port=18931
for root in data/demo data/demo-mixed; do
  name=$(echo "$root" | tr '/' '_')
  "$bin" serve "$root" --addr 127.0.0.1:$port --no-cache >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/api/index" 2>/dev/null | grep -q '"complete":true' && break
    sleep 0.3
  done
  i=0
  while read -r path; do
    i=$((i + 1))
    curl -s -o "$out/$name.api.$i.body" -w '%{http_code} %{content_type}\n' "http://127.0.0.1:$port$path" \
      >"$out/$name.api.$i.status"
    echo "$path" >>"$out/$name.api.$i.status"
  done <<'URLS'
/api/index
/api/cells
/api/cells?format=csv
/api/cells?format=json
/api/cells?format=csv&status=ok&backend=vllm
/api/cells?format=csv&lineage=replaced
/api/cells?format=csv&bogus=1
/api/cells?format=csv&n=4
/api/provenance
/api/compare?by=backend&a=sglang&b=vllm
/api/compare?by=backend&a=sglang&b=vllm&phase=scaling&metric=p95_ttft_ms
/api/compare?by=backend&a=sglang&b=vllm&include=refilled
/api/compare?by=backend&a=sglang&b=vllm&omit=excluded
/api/compare?a=VLLM&b=sglang
/api/requests?run=20260531_120428_552237&phase=scaling&model=llama3.2-1b&workload=balanced_2k&n=1&rep=0
/api/requests?run=20260531_120428_552237&phase=scaling&model=llama3.2-1b&workload=balanced_2k&n=1&rep=0&format=csv
/api/requests?run=20260531_120428_552237&phase=scaling
/api/requests?run=nope&phase=scaling&model=x&workload=y&n=1&rep=0
/api/nothing
/api
URLS
  kill $pid; wait $pid 2>/dev/null
  # Timings and the indexing clock differ run to run.
  for f in "$out/$name".api.*.body; do
    if head -c1 "$f" | grep -q '{'; then
      sed -E -i 's/"(indexed_at_unix_ms|index_ms|elapsed_ms|read_ms)":[0-9.]+/"\1":0/g' "$f"
    fi
  done
done
