// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rdma-core's own test suite (pyverbs, Debian's python3-pyverbs, whose
 * tests are under /usr/share/doc/rdma-core/tests) against the device
 * under test, as a user would run it: one TAP result per pyverbs test,
 * named "pyverbs.<module>.<class>.<test>".
 *
 * A pyverbs skip is a TAP skip with pyverbs' reason: scripts/check.sh
 * accepts only the ones scripts/expected-skips lists (each with why a
 * software iWARP device has it; Documentation/testing.rst), so a test
 * that starts skipping fails make check. A failure or an error is a
 * failed result with its traceback as "# " lines; the suite's own output
 * goes to a log whose end is shown when something failed.
 *
 * The tests are copied and unpacked (Debian compresses most of them)
 * into a directory of our own, and run by a small driver (below) that
 * loads them as run_tests.py does and reports each result as TAP on a
 * descriptor of its own. The plan comes last: it is only known once
 * every class has run (a class that skips as a whole is one result).
 *
 * XIW_TEST_LINK_TYPE selects the device type as for xiw_rdma ("xiw" by
 * default, "siw" to compare).
 */
#include <stdlib.h>

#include "xiw_rdma_util.h"

#define TESTS_DIR	"/usr/share/doc/rdma-core/tests"
/*
 * The whole suite's time limit, seconds: under the 900 s run_vm.sh gives a
 * program, so that a hang is reported here, with the log.
 */
#define SUITE_S		840

/*
 * The driver: argv[1] the directory holding "tests", argv[2] the device.
 * TAP goes to descriptor 3; what the tests print goes to stdout/stderr.
 */
static const char driver[] =
"import os, sys, traceback, unittest\n"
"root, dev = sys.argv[1], sys.argv[2]\n"
"tap = os.fdopen(3, 'w', buffering=1)\n"
"sys.path[:0] = [os.path.join(root, 'tests'), root]\n"
"sys.argv = ['run_tests.py', '--dev', dev]\n"
"from args_parser import parser\n"
"parser.parse_args()\n"
"import tests\n"
"class Tap(unittest.TestResult):\n"
"    n = 0\n"
"    bad = 0\n"
"    def emit(self, ok, test, extra='', err=None):\n"
"        self.n += 1\n"
"        name = test.id()\n"
"        if name.startswith('tests.'):\n"
"            name = name[6:]\n"
"        name = name.replace('#', '_').replace('\\n', ' ')\n"
"        if err is not None:\n"
"            self.bad += 1\n"
"            for l in ''.join(traceback.format_exception(*err)).splitlines():\n"
"                tap.write('# ' + l + '\\n')\n"
"        tap.write('%s %d pyverbs.%s%s\\n' % ('ok' if ok else 'not ok',\n"
"                                           self.n, name, extra))\n"
"    def addSuccess(self, t):\n"
"        self.emit(True, t)\n"
"    def addSkip(self, t, why):\n"
"        why = ' '.join(str(why).replace('#', '_').split())\n"
"        self.emit(True, t, ' # SKIP ' + why)\n"
"    def addFailure(self, t, err):\n"
"        self.emit(False, t, err=err)\n"
"    def addError(self, t, err):\n"
"        self.emit(False, t, err=err)\n"
"    def addExpectedFailure(self, t, err):\n"
"        self.emit(True, t)\n"
"    def addUnexpectedSuccess(self, t):\n"
"        self.bad += 1\n"
"        self.emit(False, t, ' unexpected success')\n"
"    def addSubTest(self, t, sub, err):\n"
"        if err is not None:\n"
"            self.emit(False, sub, err=err)\n"
"result = Tap()\n"
"unittest.defaultTestLoader.loadTestsFromModule(tests).run(result)\n"
"tap.write('1..%d\\n' % result.n)\n"
"sys.exit(1 if result.bad or not result.n else 0)\n";

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int rv;

	if (!f)
		return -1;
	rv = fputs(text, f) < 0 ? -1 : 0;
	if (fclose(f))
		rv = -1;
	return rv;
}

int main(void)
{
	char dir[] = "/tmp/xiw_pyverbs.XXXXXX";
	char path[128];
	struct xr_link link;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (!path_exists(TESTS_DIR "/run_tests.py")) {
		/* An unexpected skip: make check installs python3-pyverbs. */
		printf("ok 1 pyverbs # SKIP python3-pyverbs is not installed\n");
		printf("1..1\n");
		return 4;
	}
	if (xr_link_add(&link)) {
		printf("Bail out! cannot create %s on %s\n", link.ibdev,
		       link.netdev);
		return 1;
	}
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/driver.py", dir);
	if (sh("cp -r " TESTS_DIR " %s/tests && gunzip -f %s/tests/*.gz",
	       dir, dir) || write_file(path, driver)) {
		printf("Bail out! cannot unpack %s into %s\n", TESTS_DIR, dir);
		return 1;
	}
	printf("# pyverbs from %s on %s (%s), log %s/log\n", TESTS_DIR,
	       link.ibdev, link.netdev, dir);
	rc = sh("cd %s && timeout -k 10 %d /usr/bin/python3 %s %s %s 3>&1 >log 2>&1",
		dir, SUITE_S, path, dir, link.ibdev);
	if (rc) {
		printf("# driver exit %d; the end of its log:\n", rc);
		sh("tail -n 40 %s/log | sed 's/^/# /'", dir);
		if (rc == 124)
			printf("Bail out! the suite ran past %d s\n", SUITE_S);
	} else {
		sh("rm -rf %s", dir);
	}
	xr_link_purge();
	return rc ? 1 : 0;
}
