#!/usr/bin/env bash
# Compares genform with OpenTofu on the catalog-scale figures, side by side
# on this machine: the same shapes of configuration (genform images against
# OpenTofu terraform_data resources), medians of RUNS runs, the two tools
# alternated run by run so both see the same machine.
#
#   scripts/compare-opentofu.sh /path/to/tofu [RUNS]
#
# COMPARE_ROWS picks rows by number (default "1 2 3 4 5", in the order of
# the list below). Row 3 is long: OpenTofu 1.12.6 took 23 minutes to apply
# the 5,000 for_each instances on a 2-core machine, and a no-op plan of them
# had not finished after 7 minutes.
#
# It builds and runs nothing without an OpenTofu binary: OpenTofu is not
# built here (build it from source, or take a release, and pass its path).
# genform is built from this checkout. Everything happens in a temporary
# directory, removed at the end; no network is used (terraform_data is
# built into OpenTofu, and genform applies against its own simulator).
#
# Figures (wall time, and peak resident memory from /usr/bin/time):
#   no-op plan of 10,000 blocks        both
#   plan of 5,000 new blocks           both (printing the plan included)
#   no-op plan of 5,000 for_each       both
#   no-op plan of 100,000 blocks       genform (OpenTofu takes hours to apply it)
#   apply of 5,000 new                 both; genform against its simulator at 1 ms per job
set -euo pipefail

tofu=${1:-${OPENTOFU:-}}
runs=${2:-5}
# COMPARE_SCALE=N divides every size by N, to try the script itself quickly.
scale=${COMPARE_SCALE:-1}
rows=" ${COMPARE_ROWS:-1 2 3 4 5} "
want() { [[ $rows == *" $1 "* ]]; }
n() { echo $(( $1 / scale )); }
if [ -z "$tofu" ]; then
	echo "usage: $0 /path/to/tofu [RUNS]   (or OPENTOFU=/path/to/tofu $0)" >&2
	echo "Nothing was built or run: the comparison needs an OpenTofu binary." >&2
	exit 2
fi
if ! "$tofu" version >/dev/null 2>&1; then
	echo "$tofu does not run as OpenTofu ('$tofu version' failed); nothing was built or run." >&2
	exit 2
fi
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
sim_pid=
cleanup() {
	[ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

echo "building genform from $root" >&2
(cd "$root" && go build -o "$work/genform" .)
genform=$work/genform
# An empty CLI configuration: without one OpenTofu warns on every command.
: >"$work/tofurc"
export TF_CLI_CONFIG_FILE="$work/tofurc"
export NO_COLOR=1 TF_IN_AUTOMATION=1 TF_CLI_ARGS_plan="-no-color" TF_CLI_ARGS_apply="-no-color"

# A simulator at 1 ms per job, with budgets that never throttle.
port=$(( 20000 + RANDOM % 20000 ))
"$genform" sim -addr="127.0.0.1:$port" -latency=1ms -rpm=100000000 -max-concurrent=100000 >"$work/sim.log" 2>&1 &
sim_pid=$!
export GENFORM_BASE_URL="http://127.0.0.1:$port" GENFORM_TOKEN=compare
for _ in $(seq 50); do
	curl -fs "http://127.0.0.1:$port/_sim/jobs" >/dev/null 2>&1 && break
	sleep 0.1
done

service_block='service {
  parallelism         = 64
  requests_per_minute = 1000000
  poll_interval       = "50ms"
}
'

# genform_blocks DIR N / tofu_blocks DIR N: N independent resources.
genform_blocks() {
	mkdir -p "$1"
	printf '%s' "$service_block" >"$1/service.gen.hcl"
	awk -v n="$2" 'BEGIN { for (i = 0; i < n; i++) printf "image \"i%06d\" {\n  prompt       = \"picture number %d\"\n  image_number = 1\n}\n\n", i, i }' >"$1/main.gen.hcl"
}
tofu_blocks() {
	mkdir -p "$1"
	awk -v n="$2" 'BEGIN { for (i = 0; i < n; i++) printf "resource \"terraform_data\" \"i%06d\" {\n  input = \"picture number %d\"\n}\n\n", i, i }' >"$1/main.tf"
}
# genform_foreach DIR N / tofu_foreach DIR N: one resource, for_each over N keys.
genform_foreach() {
	mkdir -p "$1"
	printf '%s' "$service_block" >"$1/service.gen.hcl"
	{
		printf 'locals {\n  keys = [\n'
		awk -v n="$2" 'BEGIN { for (i = 0; i < n; i++) printf "    \"k%06d\",\n", i }'
		printf '  ]\n}\n\nimage "tile" {\n  for_each     = toset(local.keys)\n  prompt       = "tile ${each.key}"\n  image_number = 1\n}\n'
	} >"$1/main.gen.hcl"
}
tofu_foreach() {
	mkdir -p "$1"
	{
		printf 'locals {\n  keys = [\n'
		awk -v n="$2" 'BEGIN { for (i = 0; i < n; i++) printf "    \"k%06d\",\n", i }'
		printf '  ]\n}\n\nresource "terraform_data" "tile" {\n  for_each = toset(local.keys)\n  input    = "tile ${each.key}"\n}\n'
	} >"$1/main.tf"
}

# measure OUT DIR CMD...: one run; appends "seconds kib" to OUT.
measure() {
	local out=$1 dir=$2
	shift 2
	local start end
	start=$(date +%s%N)
	(cd "$dir" && /usr/bin/time -f '%M' -o "$work/time.$$" "$@" >/dev/null 2>"$work/stderr.$$") || {
		echo "failed in $dir: $*" >&2
		cat "$work/stderr.$$" >&2
		exit 1
	}
	end=$(date +%s%N)
	echo "$(( (end - start) / 1000000 )) $(cat "$work/time.$$")" | awk '{ printf "%.3f %s\n", $1 / 1000, $2 }' >>"$out"
}

# median FILE COLUMN
median() {
	sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { m = v[int((NR + 1) / 2)]; if (c == 2) printf "%.0f MiB", m / 1024; else printf "%.3f s", m }'
}

# compare NAME SETUP_G SETUP_T CMD_G CMD_T: alternated runs, a table row.
row() {
	local name=$1 gdir=$2 tdir=$3 gcmd=$4 tcmd=$5
	: >"$work/g" && : >"$work/t"
	for _ in $(seq "$runs"); do
		measure "$work/g" "$gdir" $gcmd
		[ -n "$tdir" ] && measure "$work/t" "$tdir" $tcmd
	done
	local gt gm tt tm ratio
	gt=$(median "$work/g" 1) gm=$(median "$work/g" 2)
	if [ -n "$tdir" ]; then
		tt=$(median "$work/t" 1) tm=$(median "$work/t" 2)
		ratio=$(awk -v a="${gt% s}" -v b="${tt% s}" 'BEGIN { printf "%.0f×", b / a }')
	else
		tt="—" tm="" ratio="—"
	fi
	printf '| %s | %s, %s | %s%s | %s |\n' "$name" "$gt" "$gm" "$tt" "${tm:+, $tm}" "$ratio"
}

tofu_init() { (cd "$1" && "$tofu" init -input=false >/dev/null); }
tofu_apply() { (cd "$1" && "$tofu" apply -auto-approve -input=false -parallelism=64 >/dev/null); }
genform_apply() { (cd "$1" && "$genform" apply -auto-approve >/dev/null); }

echo "OpenTofu: $("$tofu" version | grep -m1 OpenTofu); genform: $("$genform" version | head -1); $runs runs each" >&2
echo "| figure | genform | OpenTofu | OpenTofu ÷ genform |"
echo "|---|---|---|---|"

# noop_row NAME SHAPE N: both tools apply N instances of SHAPE (blocks or
# foreach), then their no-op plans are timed.
noop_row() {
	echo "setting up: $1, applied" >&2
	"genform_$2" "$work/g$2" "$(n "$3")" && genform_apply "$work/g$2"
	"tofu_$2" "$work/t$2" "$(n "$3")" && tofu_init "$work/t$2" && tofu_apply "$work/t$2"
	row "no-op plan, $1" "$work/g$2" "$work/t$2" "$genform plan" "$tofu plan -input=false"
}

want 1 && noop_row "10,000 blocks" blocks 10000

if want 2; then
	echo "setting up: 5,000 new blocks" >&2
	genform_blocks "$work/g5k" "$(n 5000)"
	tofu_blocks "$work/t5k" "$(n 5000)" && tofu_init "$work/t5k"
	row "plan of 5,000 new blocks" "$work/g5k" "$work/t5k" "$genform plan" "$tofu plan -input=false"
fi

want 3 && noop_row "5,000 for_each" foreach 5000

if want 4; then
	echo "setting up: 100,000 blocks, applied (genform only)" >&2
	genform_blocks "$work/g100k" "$(n 100000)" && genform_apply "$work/g100k"
	row "no-op plan, 100,000 blocks" "$work/g100k" "" "$genform plan" ""
fi

if want 5; then
	if [ ! -d "$work/g5k" ]; then
		genform_blocks "$work/g5k" "$(n 5000)"
		tofu_blocks "$work/t5k" "$(n 5000)" && tofu_init "$work/t5k"
	fi
	echo "apply of 5,000 new blocks, state removed before each run" >&2
	: >"$work/g" && : >"$work/t"
	for _ in $(seq "$runs"); do
		rm -rf "$work/g5k/.genform" "$work/g5k/generated"
		measure "$work/g" "$work/g5k" "$genform" apply -auto-approve
		rm -f "$work/t5k/terraform.tfstate" "$work/t5k/terraform.tfstate.backup"
		measure "$work/t" "$work/t5k" "$tofu" apply -auto-approve -input=false -parallelism=64
	done
	printf '| apply of 5,000 new (genform: simulator at 1 ms per job) | %s, %s | %s, %s | %s |\n' \
		"$(median "$work/g" 1)" "$(median "$work/g" 2)" "$(median "$work/t" 1)" "$(median "$work/t" 2)" \
		"$(awk -v a="$(median "$work/g" 1 | cut -d' ' -f1)" -v b="$(median "$work/t" 1 | cut -d' ' -f1)" 'BEGIN { printf "%.1f×", b / a }')"
fi
