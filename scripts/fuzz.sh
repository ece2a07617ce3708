#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make fuzz: the long hostile-input campaign against the kernel. Set up,
# build, boot one VM (panic_on_warn=1) and run selftests/xiw_peer with
# XIW_FUZZ_FRAMES (default 100000) frames from seed XIW_FUZZ_SEED
# (default 20261130): xiw-wirepeer connects to an xiw listener, negotiates
# MPA validly, then sends valid and mutated FPDUs (5 % mutated: lengths,
# pad, CRC, DDP and RDMAP fields, truncation, floods of Read Requests),
# reconnecting after every Terminate. The run fails on any kernel warning,
# a connection that does not end, or TCP sockets not given back. The
# other xiw_peer rows run too. Output: build/vm/fuzz/output.log.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
frames=${XIW_FUZZ_FRAMES:-100000}
seed=${XIW_FUZZ_SEED:-20261130}
xiw_prepare
echo "== campaign: seed $seed, $frames frames (QEMU, panic_on_warn=1)"
xiw_vm_campaign fuzz "${XIW_FUZZ_VM_TIMEOUT:-7200}" \
	"fuzz (start|done)|TCP slab|^(ok|not ok) " \
	"kernel log clean (seed $seed, $frames frames)" -- \
	env XIW_FUZZ_FRAMES="$frames" XIW_FUZZ_SEED="$seed" \
	scripts/guest/run_vm.sh build/selftests/xiw_peer
