# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
#   make          build xiw.ko (W=1), the provider and the selftests
#   make install  install them into this machine (root)
#   make check    set-up, build, lint, host tests, VM selftests
#   make check-debug  every VM selftest on the debug kernel (KASAN,
#                 lockdep, kmemleak; the kernel is built once)
#   make module-debug  xiw.ko for the debug kernel, in build/debug/
#   make module-at  xiw.ko for another kernel (AT_KDIR), in AT_OUT
#   make run      set-up, build, boot a VM and show xiw0 at work
#   make bench    set-up, build, perftest xiw vs siw vs TCP in a VM
#   make bench-ab BASE=REV  make bench on REV and on this tree in turn,
#                 then the two compared
#   make fuzz    the long hostile-input campaign against xiw in a VM
#   make soak    teardown under traffic, 100 rounds each, on the debug
#                 kernel (it must be built: make check-debug)
#   make fuzz-codec  libFuzzer on the wire codec of xiw-wirepeer (clang)
#   make deb      Debian packages xiw-dkms and ibverbs-provider-xiw in
#                 build/deb (dpkg-buildpackage, dh-dkms), lintian on them
#   make check-deb  make deb, then install, use and purge them in VMs
#                 on 6.1 and on 6.12
#
# KDIR (kernel build tree) and KREL (its release) can be overridden; by
# default they are the newest installed Debian kernel with headers.

KREL ?= $(shell scripts/kernel-release.sh)
KDIR ?= /lib/modules/$(KREL)/build
BUILD := $(CURDIR)/build
# Unpacked kernel source parts (kselftest harness, checkpatch), see setup.sh.
KSRC ?= /var/cache/xiw/linux-source-$(shell dpkg-query -W -f='$${Version}' linux-source-6.1 2>/dev/null)

XIW_KO := drivers/infiniband/sw/xiw/xiw.ko
DRIVER_SRCS := $(wildcard drivers/infiniband/sw/xiw/*.[ch]) include/uapi/rdma/xiw-abi.h

SELFTESTS := $(patsubst selftests/%.c,$(BUILD)/selftests/%,$(wildcard selftests/xiw_*.c))
SELFTEST_CFLAGS := -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	-isystem $(KSRC)/tools/testing/selftests -Iinclude/uapi
SELFTEST_LIBS := -libverbs -lrdmacm -lpthread
# xiw_fabric drives the device through libfabric (libfabric-dev).
$(BUILD)/selftests/xiw_fabric: SELFTEST_LIBS += -lfabric

.PHONY: all module provider selftests install check run bench bench-ab tcg-prof lat-trace tcg-prof-plugin clean setup fuzz fuzz-codec \
	check-debug module-debug module-at deb check-deb soak

all: module provider selftests

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

provider:
	cmake -S userspace -B $(BUILD)/userspace -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD)/userspace -j2

selftests: $(SELFTESTS)

$(BUILD)/selftests/%: selftests/%.c selftests/xiw_util.h selftests/xiw_rdma_util.h selftests/xiw_mpa_util.h selftests/xiw_wire_checks.h selftests/xiw_bulk.h selftests/xiw_fault_util.h include/uapi/rdma/xiw-abi.h
	@test -e $(KSRC)/tools/testing/selftests/kselftest_harness.h || \
		{ echo "kselftest harness missing: run scripts/setup.sh (make check does)"; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(SELFTEST_CFLAGS) -o $@ $< $(SELFTEST_LIBS)

# xiw.ko for another kernel than KREL's, into OUT/xiw.ko, built from a
# copy of the sources in OUT/xiw-src: kbuild writes its objects next to
# the sources, and building in the tree would replace KREL's xiw.ko and
# its objects. cp -p keeps the times, so an unchanged file is not rebuilt.
#   make module-at AT_KDIR=<kernel build tree> AT_OUT=<directory>
# make check builds its 6.12 lane's module this way, make module-debug
# the debug kernel's (scripts/debug-kernel.sh; DEBUG_KDIR is its
# directory). siw needs no such build there: the debug kernel builds its
# own (CONFIG_RDMA_SIW=m).
module-at:
	@test -n "$(AT_KDIR)" && test -n "$(AT_OUT)" || \
		{ echo "usage: make module-at AT_KDIR=DIR AT_OUT=DIR"; exit 1; }
	@mkdir -p $(AT_OUT)/xiw-src/drivers/infiniband/sw/xiw $(AT_OUT)/xiw-src/include/uapi/rdma
	@cp -p Kbuild $(AT_OUT)/xiw-src/
	@cp -p drivers/infiniband/sw/xiw/Makefile $(wildcard drivers/infiniband/sw/xiw/*.[ch]) \
		$(AT_OUT)/xiw-src/drivers/infiniband/sw/xiw/
	@cp -p include/uapi/rdma/*.h $(AT_OUT)/xiw-src/include/uapi/rdma/
	$(MAKE) -C $(AT_KDIR) M=$(abspath $(AT_OUT))/xiw-src W=1 modules
	cp $(AT_OUT)/xiw-src/drivers/infiniband/sw/xiw/xiw.ko $(AT_OUT)/xiw.ko

DEBUG_KDIR ?= $(shell scripts/debug-kernel.sh --cached)
module-debug:
	@test -n "$(DEBUG_KDIR)" || \
		{ echo "no debug kernel built: make check-debug builds it"; exit 1; }
	$(MAKE) module-at AT_KDIR=$(DEBUG_KDIR)/build AT_OUT=$(BUILD)/debug

install: all
	scripts/install.sh $(KREL)

setup:
	scripts/setup.sh >/dev/null

check:
	scripts/check.sh

check-debug:
	scripts/check.sh --debug

run:
	scripts/run.sh

bench:
	scripts/bench.sh

# A change against BASE, make bench on each in turn (scripts/bench-ab.sh).
bench-ab:
	scripts/bench-ab.sh "$(BASE)"

# Instructions per latency round trip, xiw against siw (a TCG plugin).
tcg-prof:
	scripts/tcg-prof.sh

# Where the time of a latency round trip goes, xiw against siw (ftrace).
lat-trace:
	scripts/lat-trace.sh

# The QEMU plugin tcg-prof loads, and the libraries it preloads into
# cmtime and into perftest's latency clients (make check builds them).
tcg-prof-plugin:
	mkdir -p $(BUILD)
	cc -O2 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden \
		-o $(BUILD)/tbprof.so scripts/tcg-prof/tbprof.c -lpthread
	cc -O2 -Wall -Wextra -Werror -shared -fPIC \
		-o $(BUILD)/cmtime-steps.so scripts/tcg-prof/cmtime-steps.c -ldl
	cc -O2 -Wall -Wextra -Werror -shared -fPIC \
		-o $(BUILD)/lat-window.so scripts/tcg-prof/lat-window.c -ldl

fuzz:
	scripts/fuzz.sh

deb:
	scripts/deb.sh

check-deb:
	scripts/deb.sh --check

soak:
	scripts/soak.sh

# The deframer and header decoders under ASan/UBSan; crashes land in
# build/fuzz. FUZZ_RUNS=-1 runs until stopped.
FUZZ_RUNS ?= 1000000
FUZZ_SEED ?= 1
fuzz-codec: provider
	@test -x $(BUILD)/userspace/peer/fuzz_codec || \
		{ echo "fuzz_codec not built: clang++ missing?"; exit 1; }
	@mkdir -p $(BUILD)/fuzz
	cd $(BUILD)/fuzz && $(BUILD)/userspace/peer/fuzz_codec \
		-seed=$(FUZZ_SEED) -runs=$(FUZZ_RUNS) -max_len=4096

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf $(BUILD)
