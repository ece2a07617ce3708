# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# What the scripts share, in one place: the host preamble (set-up, build,
# the guest's module tree), the guest's set-up (install xiw and its
# provider, load modules, load siw), the kernel-log verdict (the report
# patterns and the one known foreign report), and the rerun policy of the
# listen race. Every entry point in scripts/ and every guest payload in
# scripts/guest/ sources it:
#
#   . "$(dirname "$0")/lib.sh"          (scripts/*.sh)
#   . "$(dirname "$0")/../lib.sh"       (scripts/guest/*.sh)
#
# It is also a command, for the selftests' C code and for the host test
# of the log verdict (scripts/lib-test.sh):
#
#   scripts/lib.sh listen-race ATTEMPT WHAT -- COMMAND [ARG...]
#   scripts/lib.sh klog-scan < LOG     (klog-check: the callers' view)
#
# Sourcing it defines names only (xiw_*, XIW_*) and sets no shell option.

XIW_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# ---- host entry points ----

# The Debian packages of the list that are not installed, one per line.
xiw_missing_packages() {	# xiw_missing_packages PACKAGE...
	local p st
	for p in "$@"; do
		st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[ "$st" = "install ok installed" ] || echo "$p"
	done
}

# Install those of the packages that are missing (apt-get, as root); WHO
# prefixes the messages on stderr. Fails without root if any is missing.
xiw_install_packages() {	# xiw_install_packages WHO PACKAGE...
	local who=$1 missing
	shift
	mapfile -t missing < <(xiw_missing_packages "$@")
	[ ${#missing[@]} -gt 0 ] || return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "$who: missing packages: ${missing[*]}; run this as root" >&2
		return 1
	fi
	echo "$who: installing: ${missing[*]}" >&2
	# The VM boots kernels with its own tiny initramfs; skip Debian's.
	DEBIAN_FRONTEND=noninteractive INITRD=No apt-get update -q >&2 &&
		DEBIAN_FRONTEND=noninteractive INITRD=No apt-get install -y -q \
			--no-install-recommends "${missing[@]}" >&2
}

# Set up the machine (scripts/setup.sh), build everything, and index the
# module tree the stock guest installs from. Sets ksrc and krel.
xiw_prepare() {
	cd "$XIW_REPO" || return
	echo "== set-up (scripts/setup.sh)"
	ksrc=$(scripts/setup.sh | tail -n 1) || return
	krel=$(scripts/kernel-release.sh) || return
	echo "== build"
	make -s KSRC="$ksrc" KREL="$krel" all || return
	scripts/vm-modules.sh "$krel" build/vm/modroot
}

# As xiw_prepare, and build this kernel's siw.ko (the measuring commands
# compare xiw with it), and start OUTDIR empty.
xiw_prepare_vs_siw() {	# xiw_prepare_vs_siw OUTDIR
	xiw_prepare || return
	scripts/siw-build.sh "$krel" > /dev/null || return
	rm -rf "$1" && mkdir -p "$1"
}

# Run COMMAND in a guest (scripts/vm-run.sh -n NAME -t SECS), show the
# lines of its output that match RE, then one line: "NAME: passed, OK" or
# "NAME: FAILED (...)". Returns vm-run.sh's status. (make fuzz, make soak)
xiw_vm_campaign() {	# xiw_vm_campaign NAME SECS RE OK -- COMMAND...
	local name=$1 secs=$2 re=$3 ok=$4 rc=0
	shift 5
	scripts/vm-run.sh -n "$name" -t "$secs" -- "$@" || rc=$?
	grep -E "$re" "build/vm/$name/output.log" || true
	case $rc in
	0) echo "$name: passed, $ok" ;;
	*) echo "$name: FAILED (vm-run.sh exit $rc; logs in build/vm/$name)" ;;
	esac
	return $rc
}

# ---- guest payloads ----

# Refuse to run outside the test VM (scripts/vm-run.sh sets XIW_IN_VM).
xiw_guest_only() {	# xiw_guest_only WHO ENTRY-POINT
	[ -n "${XIW_IN_VM:-}" ] && return 0
	echo "$1: runs inside the test VM; use $2" >&2
	exit 2
}

# Inside the guest, for the commands that compare xiw with siw in one
# guest: install xiw, put xiw0 on dummy netdev d0 (10.99.0.1) with its
# MPA CRC off, as siw has it by default, and siw0 (this kernel's siw.ko,
# from scripts/siw-build.sh) on d1 (10.99.1.1). With "crc", xiw keeps
# its CRC on and siw0 comes from the siw build that requires CRC, so
# that CRC-on is compared with CRC-on. Says what failed on stdout.
xiw_guest_xiw_siw() {	# xiw_guest_xiw_siw [crc]
	local i ko
	ko=$XIW_REPO/build/siw/$(uname -r)/siw.ko
	xiw_guest_install ib_core ib_uverbs iw_cm rdma_ucm dummy libcrc32c ||
		return 1
	for i in 0 1; do
		ip link add d$i type dummy && ip addr add 10.99.$i.1/24 dev d$i &&
			ip link set d$i up || { echo "netdev d$i failed"; return 1; }
	done
	rdma link add xiw0 type xiw netdev d0 ||
		{ echo "rdma link add xiw0 failed"; return 1; }
	if [ "${1:-}" = crc ]; then
		ko=$XIW_REPO/build/siw/$(uname -r)-crc/siw.ko
	else
		echo 0 > /sys/module/xiw/parameters/mpa_crc ||
			{ echo "mpa_crc=0 failed"; return 1; }
	fi
	insmod "$ko" && rdma link add siw0 type siw netdev d1 ||
		{ echo "siw0 failed"; return 1; }
}

# Until nothing listens on any TCP PORT (the last server's listener
# gone), for up to 5 s.
xiw_port_free() {	# xiw_port_free PORT...
	local i p f="sport = :$1"
	shift
	for p in "$@"; do
		f="$f or sport = :$p"
	done
	for i in $(seq 50); do
		[ -z "$(ss -Hltn "( $f )" 2>/dev/null)" ] && return 0
		sleep 0.1
	done
	return 1
}

# Wait until something listens on TCP PORT (the iWARP listener of an
# rdma_cm server is a kernel TCP socket), or PID exits, or ~5 s pass.
xiw_wait_listen() {	# xiw_wait_listen PORT PID
	local i
	for i in $(seq 50); do
		kill -0 "$2" 2>/dev/null || return 1
		[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ] && return 0
		sleep 0.1
	done
	return 0
}

# Stop a server we started (a timeout(1) wrapper): TERM, then KILL its
# child and itself if it lingers, then reap it.
xiw_stop_server() {	# xiw_stop_server PID
	local i
	kill -TERM "$1" 2>/dev/null
	for i in $(seq 30); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$1" 2>/dev/null; then
		pkill -KILL -P "$1" 2>/dev/null
		kill -KILL "$1" 2>/dev/null
	fi
	wait "$1" 2>/dev/null
}

# The module tree scripts/vm-modules.sh prepared for the running kernel:
# the debug kernel's (XIW_VM_KDIR) or the stock one's.
xiw_modroot() {
	if [ -n "${XIW_VM_KDIR:-}" ]; then
		echo "$XIW_REPO/build/debug/modroot"
	else
		echo "$XIW_REPO/build/vm/modroot"
	fi
}

# Is KO built for kernel release KREL? If not, say why on stdout and
# return 1. The guest's module tree links the tree's last build
# (scripts/vm-modules.sh), which a build for another kernel (make bench:
# 6.12) replaces: better said once than as an "Exec format error" in
# every test.
xiw_ko_for() {	# xiw_ko_for KO KREL
	local vm
	vm=$(modinfo -F vermagic "$1" 2>/dev/null) || vm=
	case $vm in
	"$2 "*) return 0 ;;
	"")	echo "no xiw.ko with a vermagic at $1" ;;
	*)	echo "xiw.ko is built for ${vm%% *}, not $2: rebuild it for $2 (make module KREL=$2, or make module-debug)" ;;
	esac
	return 1
}

# Install xiw.ko and the provider into the guest's RAM overlay, then load
# the modules given. Says what failed on stdout.
xiw_guest_install() {	# xiw_guest_install MODULE...
	xiw_ko_for "$(xiw_modroot)/lib/modules/$(uname -r)/updates/xiw.ko" \
		"$(uname -r)" || return 1
	"$XIW_REPO/scripts/install.sh" --prepared "$(xiw_modroot)" ||
		{ echo "install failed"; return 1; }
	[ $# -eq 0 ] || modprobe -a "$@" ||
		{ echo "modprobe $* failed"; return 1; }
}

# The siw.ko the guest uses as the reference peer: the debug kernel's own,
# or the one scripts/siw-build.sh built for the stock kernel booted. The
# selftests find it through XIW_SIW_KO.
xiw_siw_ko() {
	if [ -n "${XIW_VM_KDIR:-}" ]; then
		echo "$XIW_VM_KDIR/root/lib/modules/$(uname -r)/kernel/drivers/infiniband/sw/siw/siw.ko"
	else
		echo "$XIW_REPO/build/siw/$(uname -r)/siw.ko"
	fi
}

xiw_guest_siw() {	# load siw (and what it needs)
	modprobe -a ib_core libcrc32c && insmod "$(xiw_siw_ko)" ||
		{ echo "siw.ko: scripts/siw-build.sh builds it"; return 1; }
}

# ---- the kernel log ----

# A line matching XIW_KLOG_BAD (and not XIW_KLOG_IGNORE) means the kernel
# is unhealthy, whatever the tests said: warnings, oopses, hung tasks, and
# the debug kernel's reports (lockdep, most of which start with "WARNING:"
# too, ODEBUG, kmemleak after a scan, KASAN, UBSAN).
XIW_KLOG_BAD='WARNING:|BUG:|Oops|general protection|refcount_t|list_del corruption|list_add corruption|INFO: task .* blocked|Kernel panic|UBSAN|KASAN|rcu: .*stall|unregister_netdevice: waiting for|possible circular locking dependency|possible recursive locking|inconsistent lock state|suspicious RCU usage|ODEBUG|kmemleak: .* new suspected'
# A user process's fault is logged as "traps: NAME[PID] general protection
# fault ip:...": the program's failure, which its test reports, not the
# kernel's.
XIW_KLOG_IGNORE='\] traps: [^ ]+\[[0-9]+\] general protection fault ip:'

# The one report that is not xiw's and is known: the kernel's own siw
# (the reference peer of xiw_interop and xiw_tools) read-locks
# sk_callback_lock with softirqs on in its data_ready callbacks, which
# TCP also runs from process context (__release_sock, when a socket's
# owner lets go of it). Lockdep reports that in one of two forms,
# whichever siw path comes first in a boot:
#  - an irq lock inversion, the lock that "just changed the state" taken
#    at siw_cm_llp_data_ready (siw's accept work, inet_accept);
#  - an inconsistent lock state, {IN-SOFTIRQ-W} -> {SOFTIRQ-ON-R}, the
#    lock the task "takes:" at siw_qp_llp_data_ready (siw_post_send's
#    tcp_sendmsg; siw_rtr_data_ready write-locks it in softirq).
# A report is recognised only whole: its first line, that lock line with
# no xiw_ function in it or the line before, and its end (the stack
# trace's </TASK>). Any other report, and a second one, still fails.
# Lockdep is off for the rest of the boot after it (make check-debug runs
# siw's programs each in a boot of their own, after the others).
XIW_KLOG_KNOWN_SIW="siw's own lockdep report (sk_callback_lock read-locked with softirqs on in siw's data_ready callbacks)"

# Read a kernel log on stdin. Prints "known: REASON" for each known
# foreign report, then, if any line is a report of another kind, "bad:"
# and the first such report (its first line and what follows, 40 lines).
# Returns 1 if there is such a report, else 0.
xiw_klog_scan() {
	# (ENVIRON, not -v: awk would take the backslashes of -v values as
	# escapes.)
	XIW_KLOG_BAD=$XIW_KLOG_BAD XIW_KLOG_IGNORE=$XIW_KLOG_IGNORE \
	XIW_KLOG_KNOWN_SIW=$XIW_KLOG_KNOWN_SIW awk '
	BEGIN {
		bad = ENVIRON["XIW_KLOG_BAD"]
		ign = ENVIRON["XIW_KLOG_IGNORE"]
		known = ENVIRON["XIW_KLOG_KNOWN_SIW"]
	}
	{ sub(/\r$/, ""); l[NR] = $0 }
	# The end of the siw report starting at line i, or 0 if the report
	# is not exactly that one.
	function siw_report(i,   j, state, trace, head, at, usage) {
		if (l[i] ~ /WARNING: possible irq lock inversion dependency detected/) {
			head = "just changed the state of lock:$"
			at = "siw_cm_llp_data_ready"
		} else if (l[i] ~ /WARNING: inconsistent lock state/) {
			head = " takes:$"
			at = "siw_qp_llp_data_ready"
		} else {
			return 0
		}
		state = 0
		usage = 0
		for (j = i + 1; j <= NR && j <= i + 6; j++) {
			if (l[j] ~ /inconsistent \{IN-SOFTIRQ-W\} -> \{SOFTIRQ-ON-R\} usage\./)
				usage = 1
			if (l[j] ~ head) {
				state = j
				break
			}
		}
		if (!state || state + 1 > NR)
			return 0
		if (at == "siw_qp_llp_data_ready" && !usage)
			return 0
		if (l[state] ~ /xiw_/ || l[state + 1] ~ /xiw_/ ||
		    l[state + 1] !~ (" at: " at "\\+0x[0-9a-f]+/0x[0-9a-f]+ \\[siw\\]$"))
			return 0
		trace = 0
		for (j = state + 2; j <= NR; j++) {
			if (l[j] ~ /stack backtrace:/)
				trace = 1
			else if (trace && l[j] ~ /<\/TASK>/)
				return j
			else if (j > state + 2 && l[j] ~ bad && l[j] !~ ign)
				return 0	# another report inside it
		}
		return 0
	}
	END {
		for (i = 1; i <= NR; i++) {
			if (l[i] !~ bad || l[i] ~ ign)
				continue
			if (!seen_siw && (e = siw_report(i))) {
				print "known: " known
				seen_siw = 1
				i = e
				continue
			}
			print "bad:"
			for (j = i; j <= NR && j < i + 40; j++)
				print l[j]
			exit 1
		}
	}'
}

# The verdict on a kernel log on stdin, for the callers: sets klog_known
# (the known report's reason, or empty) and klog_bad (the first other
# report and what follows it, or empty). Returns 1 if klog_bad is set.
xiw_klog_check() {
	local v
	v=$(xiw_klog_scan) || true
	klog_known=$(sed -n 's/^known: //p' <<< "$v" | head -n 1)
	klog_bad=$(sed -n '/^bad:$/,$p' <<< "$v" | tail -n +2)
	[ -z "$klog_bad" ]
}

# ---- the listen race and its rerun ----

# perftest -R and qperf both have a listen race of their own: the server
# stops listening between the connections of one run (perftest destroys
# its first listener after the control connection and listens again after
# a parameter exchange the client also finishes; qperf's server sends the
# client its port before it listens), and a client that connects at once
# finds no listener. Its SYN is answered by a reset, which an asynchronous
# iWARP connect reports as a rejection (perftest: RDMA_CM_EVENT_REJECTED,
# -111, and Debian 12's perftest 4.5-0.17 then crashes instead of
# retrying; qperf: "Event rejected"). A rejection by the peer's MPA layer
# (xiw's own MPA Reject, say) prints the same words, so the signature is
# both: the client failed with those words, and TCP counted a connection
# attempt that failed in SYN-SENT (TcpAttemptFails: a reset to the SYN)
# while it ran. That failure, and only it, earns XIW_LISTEN_RACE_RERUNS
# more runs, each announced by a "# RERUN: WHAT: ..." line that
# scripts/check.sh counts and names in its summary.
XIW_LISTEN_RACE_RERUNS=1
XIW_LISTEN_RACE_EXIT=75		# "run it again", from the listen-race command

xiw_tcp_attempt_fails() {
	awk '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++)
				     if ($i == "AttemptFails") c = i; h = 1 }
		       else print $c }' /proc/net/snmp
}

# Was this failed client run (status RC, output LOG) the listen race,
# given TcpAttemptFails BEFORE it ran?
xiw_listen_race() {	# xiw_listen_race RC LOG BEFORE
	[ "$1" -ne 0 ] || return 1
	grep -q -E 'RDMA_CM_EVENT_REJECTED; error: -111|unexpected event from RDMA CM: Event rejected' "$2" ||
		return 1
	[ "$(xiw_tcp_attempt_fails)" -gt "$3" ]
}

# May run number ATTEMPT (1 the first) be run again after the race? If so,
# say so (the line scripts/check.sh counts).
xiw_rerun() {	# xiw_rerun ATTEMPT WHAT
	[ "$1" -le "$XIW_LISTEN_RACE_RERUNS" ] || return 1
	echo "# RERUN: $2: refused while its server did not listen (the listen race), run $(($1 + 1))"
}

# Run a client, its output to stdout; exit with its status, or with
# XIW_LISTEN_RACE_EXIT after a "# RERUN:" line when it lost the listen
# race and may run again (the caller restarts its server and calls again
# with ATTEMPT + 1).
xiw_listen_race_client() {	# xiw_listen_race_client ATTEMPT WHAT -- COMMAND...
	local attempt=$1 what=$2 before rc log
	shift 3
	log=$(mktemp)
	before=$(xiw_tcp_attempt_fails)
	"$@" > "$log" 2>&1
	rc=$?
	cat "$log"
	if xiw_listen_race "$rc" "$log" "$before" &&
	   xiw_rerun "$attempt" "$what"; then
		rc=$XIW_LISTEN_RACE_EXIT
	fi
	rm -f "$log"
	return "$rc"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case ${1:-} in
	listen-race)
		shift
		[ $# -ge 4 ] && [ "$3" = -- ] ||
			{ echo "usage: $0 listen-race ATTEMPT WHAT -- COMMAND..." >&2; exit 2; }
		xiw_listen_race_client "$@"
		exit ;;
	klog-scan)
		xiw_klog_scan
		exit ;;
	klog-check)
		xiw_klog_check
		rc=$?
		echo "known: $klog_known"
		echo "bad: $klog_bad"
		exit $rc ;;
	*)
		echo "usage: $0 listen-race ATTEMPT WHAT -- COMMAND... | klog-scan < LOG" >&2
		exit 2 ;;
	esac
fi
