#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the test VM for make bench (scripts/bench.sh): sets up xiw0 on
# dummy netdev d0 (10.99.0.1) and siw0 on d1 (10.99.1.1), then runs perftest
# server and client in this guest on each device, and iperf3 over d0, a few
# rounds, xiw and siw interleaved. Raw outputs and results.tsv go to OUTDIR
# (a directory the host can read: the VM's shared output directory).
#
#   scripts/guest/bench.sh OUTDIR
#
# Environment: BENCH_RUNS (rounds, default 3), BENCH_DEVICES (default
# "xiw xiwnc siw siwcrc"; xiwnc is xiw with MPA CRC off, siwcrc is siw
# built with MPA CRC required), BENCH_DURATION (seconds per bandwidth run, >= 3, default 4),
# BENCH_LAT_ITERS (iterations per latency run, default 1000),
# BENCH_CONNS (connections per cmtime run, default 1024, made in batches
# of BENCH_CONN_BATCH, default 64),
# BENCH_MEM_CONNS (connections for the memory rows, default 1000, in
# processes of BENCH_MEM_PER_PROC, default 16),
# BENCH_TESTS (subset of test names, default all),
# BENCH_XIW_PARAMS (xiw module parameters to set before any run, as
# "NAME=VALUE ...", for example "tx_post_bytes=65536"; not mpa_crc, which
# the xiw and xiwnc devices set for each run).
set -u
. "$(dirname "$0")/../lib.sh"
xiw_guest_only bench.sh "make bench"
repo=$XIW_REPO
out=${1:?usage: bench.sh OUTDIR}
runs=${BENCH_RUNS:-3}
devices=${BENCH_DEVICES:-xiw xiwnc siw siwcrc}
duration=${BENCH_DURATION:-4}
lat_iters=${BENCH_LAT_ITERS:-1000}
conns=${BENCH_CONNS:-1024}
conn_batch=${BENCH_CONN_BATCH:-64}
mem_conns=${BENCH_MEM_CONNS:-1000}
mem_per_proc=${BENCH_MEM_PER_PROC:-16}
connscale=$repo/build/userspace/tools/xiw-connscale
[ "$duration" -ge 3 ] || { echo "bench: BENCH_DURATION must be >= 3" >&2; exit 2; }
# A run whose clock calibration failed (see bench-report.py) is repeated
# up to this many extra times; a run that lost the listen race, as
# scripts/lib.sh's policy allows; a run that fails otherwise is not.
retries=2
report=$repo/scripts/bench-report.py
raw=$out/raw
mkdir -p "$raw"
tsv=$out/results.tsv
printf 'round\tdevice\ttest\tmetric\tunit\tvalue\tstatus\tattempts\tseconds\tlog\n' > "$tsv"

# name  program  metric  extra perftest arguments
TESTS=(
	"ib_write_bw_64k ib_write_bw bw -s 65536"
	"ib_write_bw_4k  ib_write_bw bw -s 4096"
	"ib_write_bw_64k_q8  ib_write_bw bw -s 65536 -q 8"
	"ib_write_bw_4k_q8   ib_write_bw bw -s 4096 -q 8"
	"ib_write_bw_64k_q64 ib_write_bw bw -s 65536 -q 64"
	"ib_write_bw_4k_q64  ib_write_bw bw -s 4096 -q 64"
	"ib_read_bw_64k  ib_read_bw  bw -s 65536"
	"ib_read_bw_4k   ib_read_bw  bw -s 4096"
	"ib_read_bw_64k_o1 ib_read_bw bw -s 65536 -o 1"
	"ib_read_bw_4k_o1  ib_read_bw bw -s 4096 -o 1"
	"ib_send_bw_64k  ib_send_bw  bw -s 65536"
	"ib_send_bw_4k   ib_send_bw  bw -s 4096"
	"ib_write_lat    ib_write_lat lat -s 64"
	"ib_send_lat     ib_send_lat  lat -s 64"
	"ib_send_lat_inline ib_send_lat lat -s 64 -I 64"
	"ib_read_lat     ib_read_lat  lat -s 64"
	"ib_atomic_lat   ib_atomic_lat lat"
	"ib_atomic_rate  ib_atomic_bw rate"
)
# Tests a device cannot run: recorded n/a, not run (siw has no atomics).
not_for() {	# not_for DEVICE NAME
	case $1 in siw | siwcrc) case $2 in ib_atomic_*) return 0 ;; esac ;; esac
	return 1
}
selected() {	# selected NAME: is NAME in BENCH_TESTS (or is that unset)?
	[ -z "${BENCH_TESTS:-}" ] && return 0
	case " $BENCH_TESTS " in *" $1 "*) return 0 ;; esac
	return 1
}

declare -A rdev addr ready
# xiwnc is xiw0 again, its connections made with MPA CRC off (mpa_crc=0
# on both ends): the configuration siw runs with by default.
addr[xiw]=10.99.0.1
addr[xiwnc]=10.99.0.1
# siwcrc is siw0 again, from the siw build with MPA CRC required
# (scripts/siw-build.sh KREL crc): the two builds are one module, siw,
# so use_siw swaps them when a run needs the other.
addr[siw]=10.99.1.1
addr[siwcrc]=10.99.1.1
rdev[xiw]=xiw0
rdev[xiwnc]=xiw0
rdev[siw]=siw0
rdev[siwcrc]=siw0
declare -A siw_ko
siw_ko[siw]=$XIW_REPO/build/siw/$(uname -r)/siw.ko
siw_ko[siwcrc]=$XIW_REPO/build/siw/$(uname -r)-crc/siw.ko
siw_loaded=
xiw_up=0

log() { echo "bench: $*"; }

setup() {
	local i
	xiw_guest_install ib_core ib_uverbs iw_cm rdma_ucm dummy ||
		{ log "installing xiw or the base modules failed"; return 1; }
	for i in 0 1; do
		if ! { ip link add d$i type dummy &&
		       ip addr add 10.99.$i.1/24 dev d$i &&
		       ip link set d$i up; }; then
			log "netdev d$i failed"
			return 1
		fi
	done
	xiw_params || return 1
	for dev in $devices; do
		ready[$dev]=0
		case $dev in
		xiw|xiwnc)
			if [ $xiw_up = 0 ]; then
				rdma link add xiw0 type xiw netdev d0 && xiw_up=1
			fi
			ready[$dev]=$xiw_up ;;
		siw | siwcrc)
			modprobe -a ib_core libcrc32c && [ -f "${siw_ko[$dev]}" ] &&
				ready[$dev]=1 ;;
		*) log "unknown device $dev (known: xiw xiwnc siw siwcrc)" ;;
		esac
		[ "${ready[$dev]}" = 1 ] || log "setting up $dev failed: its runs fail"
	done
	rdma link show
	ibv_devices
	# Which crc32c the crypto API picks (siw's): under TCG even the
	# CPU's crc32 instruction is emulated, so its cost here says little
	# about real hardware.
	awk '/^name/ { n = $3 } /^driver/ { d = $3 }
	     /^priority/ && n == "crc32c" { print "crc32c: " d " (priority " $3 ")" }' \
		/proc/crypto | tee "$out/crc32c.txt"
	# and which of them xiw uses (crc_impl, admin-guide.rst): siw
	# always takes the crypto API's
	mountpoint -q /sys/kernel/debug ||
		mount -t debugfs none /sys/kernel/debug 2> /dev/null
	if [ -r /sys/kernel/debug/xiw/crc32c ]; then
		awk '{ v[$1] = $2 }
		     END { print "xiw crc_impl " v["mode"] ": using " v["using"] \
			   " (ns per 4 KiB: crypto " v["crypto_ns"] ", generic " \
			   v["generic_ns"] ")" }' /sys/kernel/debug/xiw/crc32c |
			tee -a "$out/crc32c.txt"
	fi
}

# Set BENCH_XIW_PARAMS's xiw module parameters. A name that is not a
# parameter xiw has, or a value the module refuses, fails the set-up, so
# a run never measures a configuration other than the one asked for.
xiw_params() {
	local p name
	[ -z "${BENCH_XIW_PARAMS:-}" ] || modprobe xiw ||
		{ log "BENCH_XIW_PARAMS: loading xiw failed"; return 1; }
	for p in ${BENCH_XIW_PARAMS:-}; do
		name=${p%%=*}
		if [ "$name" = "$p" ] || [ "$name" = mpa_crc ] ||
		   ! [[ $name =~ ^[a-z0-9_]+$ ]] ||
		   [ ! -w "/sys/module/xiw/parameters/$name" ]; then
			log "BENCH_XIW_PARAMS: $p: not NAME=VALUE of a writable xiw parameter other than mpa_crc"
			return 1
		fi
		if ! echo "${p#*=}" > "/sys/module/xiw/parameters/$name"; then
			log "BENCH_XIW_PARAMS: $p: refused"
			return 1
		fi
		log "xiw parameter $name=$(cat "/sys/module/xiw/parameters/$name")"
	done
}

# siw0 from the build DEVICE (siw or siwcrc) names, loading it in place
# of the other if need be.
use_siw() {	# use_siw DEVICE
	[ "$siw_loaded" = "$1" ] && return 0
	if [ -n "$siw_loaded" ]; then
		rdma link delete siw0 && rmmod siw || return 1
		siw_loaded=
	fi
	insmod "${siw_ko[$1]}" && rdma link add siw0 type siw netdev d1 ||
		return 1
	siw_loaded=$1
}

# Put DEVICE in the configuration its next run measures: xiw's MPA CRC
# setting, or which siw build is loaded. A siw that cannot be loaded
# marks the device not ready, which fails its runs.
configure() {	# configure DEVICE
	case $1 in
	xiw) echo 1 > /sys/module/xiw/parameters/mpa_crc ;;
	xiwnc) echo 0 > /sys/module/xiw/parameters/mpa_crc ;;
	siw | siwcrc) use_siw "$1" || ready[$1]=0 ;;
	esac
}

# One line of results.tsv; "seconds" is the wall time since run_start.
record() {	# record ROUND DEVICE TEST METRIC UNIT VALUE STATUS ATTEMPTS LOG
	local IFS=$'\t'
	set -- "${@:1:8}" $((SECONDS - run_start)) "$9"
	echo "$*" >> "$tsv"
	log "$*"
}

# One perftest measurement: server and client on DEVICE in this guest.
perftest_run() {	# perftest_run ROUND DEVICE NAME PROGRAM METRIC ARGS...
	local round=$1 dev=$2 name=$3 prog=$4 metric=$5
	shift 5
	local unit=Gb/s limit args window=() attempt base st value sp
	local race=1 invalid=0
	[ "$metric" = lat ] && unit=usec
	[ "$metric" = rate ] && unit=Mop/s
	if not_for "$dev" "$name"; then
		run_start=$SECONDS
		record "$round" "$dev" "$name" "$metric" "$unit" - n/a 0 -
		return
	fi
	if [ "$metric" != lat ]; then
		# perftest samples between its 1 s warm-up and 1 s cool-down
		# margins; bench-report.py divides by that window itself.
		args=(-D "$duration" -f 1 --report_gbits)
		window=($((duration - 2)))
		limit=$((duration + 40))
	else
		args=(-n "$lat_iters")
		limit=60
	fi
	args+=(-d "${rdev[$dev]}" -R -F "$@")
	configure "$dev"
	run_start=$SECONDS
	# perftest -R's listen race (scripts/lib.sh) is run again as lib.sh
	# allows, a failed calibration up to $retries times; the attempts
	# column counts both.
	for ((attempt = 1; ; attempt++)); do
		base=$raw/$dev-$name-r$round-a$attempt
		if [ "${ready[$dev]:-0}" != 1 ]; then
			echo "device not set up" > "$base.client"
			record "$round" "$dev" "$name" "$metric" "$unit" fail \
				"fail(setup)" "$attempt" "${base##*/}"
			return
		fi
		timeout -k 5 "$limit" "$prog" "${args[@]}" > "$base.server" 2>&1 &
		sp=$!
		xiw_wait_listen 18515 "$sp"
		xiw_listen_race_client "$race" "$dev $name round $round" -- \
			timeout -k 5 "$limit" "$prog" "${args[@]}" "${addr[$dev]}" \
			> "$base.client" 2>&1
		st=$?
		xiw_stop_server "$sp"
		if [ "$st" -eq 124 ] || [ "$st" -eq 137 ]; then
			record "$round" "$dev" "$name" "$metric" "$unit" fail \
				timeout "$attempt" "${base##*/}"
			return
		fi
		if [ "$st" -eq "$XIW_LISTEN_RACE_EXIT" ]; then
			log "$(tail -n 1 "$base.client")"
			race=$((race + 1))
			continue
		fi
		if [ "$st" -ne 0 ]; then
			record "$round" "$dev" "$name" "$metric" "$unit" fail \
				"fail(rc=$st)" "$attempt" "${base##*/}"
			return
		fi
		if value=$(python3 "$report" perftest "$metric" "$base.client" \
				"${window[@]}" 2> "$base.parse"); then
			rm -f "$base.parse"
			record "$round" "$dev" "$name" "$metric" "$unit" "$value" \
				ok "$attempt" "${base##*/}"
			# A latency run's fastest round trip too: steady where
			# the typical one follows the host's speed.
			[ "$metric" = lat ] || return
			if value=$(python3 "$report" perftest lat_min \
					"$base.client" 2> "$base.parse"); then
				rm -f "$base.parse"
				record "$round" "$dev" "${name}_min" "$metric" \
					"$unit" "$value" ok "$attempt" "${base##*/}"
			else
				record "$round" "$dev" "${name}_min" "$metric" \
					"$unit" fail invalid "$attempt" "${base##*/}"
			fi
			return
		fi
		log "$dev $name round $round attempt $attempt: $(cat "$base.parse")"
		[ $((invalid += 1)) -le "$retries" ] || break
	done
	record "$round" "$dev" "$name" "$metric" "$unit" fail invalid \
		"$attempt" "${base##*/}"
}

# One row of a run that has ended: its exit status ST ("setup": the
# device was not ready) or else the value bench-report.py finds with
# REPORT-ARGS; BASE names the run's raw files.
record_parsed() {	# record_parsed ROUND DEVICE TEST METRIC UNIT ST BASE REPORT-ARGS...
	local round=$1 dev=$2 test=$3 metric=$4 unit=$5 st=$6 base=$7 value
	shift 7
	if [ "$st" = setup ]; then
		record "$round" "$dev" "$test" "$metric" "$unit" fail \
			"fail(setup)" 1 "${base##*/}"
	elif [ "$st" -ne 0 ]; then
		record "$round" "$dev" "$test" "$metric" "$unit" fail \
			"fail(rc=$st)" 1 "${base##*/}"
	elif value=$(python3 "$report" "$@" 2> "$base.parse"); then
		record "$round" "$dev" "$test" "$metric" "$unit" "$value" ok 1 \
			"${base##*/}"
	else
		log "$dev $test round $round: $(cat "$base.parse")"
		record "$round" "$dev" "$test" "$metric" "$unit" fail invalid 1 \
			"${base##*/}"
	fi
	rm -f "$base.parse"
}

# Connection set-up and tear-down rate: rdmacm-utils' cmtime, server and
# client on DEVICE in this guest. One server; clients one after the
# other, each making $conn_batch connections at once and then
# disconnecting them at once, until $conns were made. Each client reports
# each step's wall time per connection; cm_connect and cm_disconnect are
# the means over the batches. Batches, because siw fails create_qp
# (EINVAL) past about 70 connections in one process.
cmtime_run() {	# cmtime_run ROUND DEVICE
	local round=$1 dev=$2 base sp st=0 step b files=()
	base=$raw/$dev-cmtime-r$round
	run_start=$SECONDS
	configure "$dev"
	if [ "${ready[$dev]:-0}" != 1 ]; then
		echo "device not set up" > "$base.client"
		for step in connect disconnect; do
			record "$round" "$dev" "cm_$step" conn us/conn fail \
				"fail(setup)" 1 "${base##*/}"
		done
		return
	fi
	timeout -k 5 600 cmtime -b "${addr[$dev]}" -p 7471 > "$base.server" 2>&1 &
	sp=$!
	xiw_wait_listen 7471 "$sp"
	for ((b = 0; b * conn_batch < conns; b++)); do
		timeout -k 5 120 cmtime -s "${addr[$dev]}" -p 7471 \
			-c "$conn_batch" > "$base.b$b.client" 2>&1
		st=$?
		files+=("$base.b$b.client")
		[ "$st" -eq 0 ] || break
	done
	xiw_stop_server "$sp"
	for step in connect disconnect; do
		record_parsed "$round" "$dev" "cm_$step" conn us/conn "$st" \
			"$base" cmtime "$step" "${files[@]}"
	done
}

# Kernel memory per connection: xiw-connscale makes $mem_conns
# connections on DEVICE (both ends in this guest, in processes of
# $mem_per_proc), has each move a 4 KiB Write and Send, and reports
# /proc/meminfo's Slab and VmallocUsed growth per connection, both ends
# counted, with the connections idle. Rows: conn_slab, conn_vmalloc and
# their sum conn_kmem, KiB per connection.
connmem_run() {	# connmem_run ROUND DEVICE
	local round=$1 dev=$2 base st=0 row
	base=$raw/$dev-connscale-r$round
	run_start=$SECONDS
	configure "$dev"
	if [ "${ready[$dev]:-0}" != 1 ]; then
		echo "device not set up" > "$base.client"
		st=setup
	else
		timeout -k 5 600 "$connscale" -a "${addr[$dev]}" -n "$mem_conns" \
			-p "$mem_per_proc" > "$base.client" 2>&1
		st=$?
	fi
	for row in slab vmalloc kmem; do
		record_parsed "$round" "$dev" "conn_$row" mem KiB/conn "$st" \
			"$base" connscale "${row}_per_conn_kib" "$base.client"
	done
}

# TCP baseline over d0, the path xiw's connections take.
iperf3_run() {	# iperf3_run ROUND
	local round=$1 base=$raw/tcp-r$1 sp st value
	run_start=$SECONDS
	timeout -k 5 60 iperf3 -s -1 -B 10.99.0.1 > "$base.server" 2>&1 &
	sp=$!
	xiw_wait_listen 5201 "$sp"
	timeout -k 5 60 iperf3 -c 10.99.0.1 -t "$duration" -O 1 -J \
		> "$base.client" 2>&1
	st=$?
	xiw_stop_server "$sp"
	if [ "$st" -ne 0 ]; then
		record "$round" tcp tcp bw Gb/s fail "fail(rc=$st)" 1 "${base##*/}"
	elif value=$(python3 "$report" iperf3 "$base.client" 2> "$base.parse"); then
		rm -f "$base.parse"
		record "$round" tcp tcp bw Gb/s "$value" ok 1 "${base##*/}"
	else
		record "$round" tcp tcp bw Gb/s fail invalid 1 "${base##*/}"
	fi
}

setup || exit 1
start=$(date +%s)
for round in $(seq "$runs"); do
	# Alternate which device goes first, so that neither always runs
	# right after the other's (or iperf3's) run.
	order=$devices
	[ $((round % 2)) -eq 0 ] && order=$(echo "$devices" | tr ' ' '\n' | tac | tr '\n' ' ')
	for t in "${TESTS[@]}"; do
		# shellcheck disable=SC2086
		set -- $t
		selected "$1" || continue
		for dev in $order; do
			perftest_run "$round" "$dev" "$@"
		done
	done
	if selected cm_connect || selected cm_disconnect; then
		for dev in $order; do
			cmtime_run "$round" "$dev"
		done
	fi
	if selected conn_slab || selected conn_vmalloc || selected conn_kmem; then
		for dev in $order; do
			connmem_run "$round" "$dev"
		done
	fi
	selected tcp && iperf3_run "$round"
done
log "measured in $(( $(date +%s) - start )) s"
exit 0
