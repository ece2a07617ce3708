// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The kernel side of the ABI, driven with raw uverbs commands (no
 * provider), so that what a broken or hostile provider sends is refused.
 */
#include <dirent.h>
#include <fcntl.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/xiw-abi.h>

#include "kselftest_harness.h"
#include "xiw_util.h"

#define DEV "xiwraw0"

/* Open the uverbs character device of ib device 'name'. */
static int open_uverbs(const char *name)
{
	char path[300], buf[64];
	struct dirent *d;
	int fd = -1;
	DIR *dir;

	dir = opendir("/sys/class/infiniband_verbs");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, "uverbs", 6))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband_verbs/%s/ibdev", d->d_name);
		if (read_text(path, buf, sizeof(buf)) > 0 && !strcmp(buf, name)) {
			snprintf(path, sizeof(path), "/dev/infiniband/%s",
				 d->d_name);
			fd = open(path, O_RDWR | O_CLOEXEC);
			break;
		}
	}
	closedir(dir);
	return fd;
}

struct get_context_req {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_get_context cmd;
};

struct get_context_out {
	struct ib_uverbs_get_context_resp core;
	struct xiw_alloc_ucontext_resp drv;
};

/* Legacy write() command; out_bytes of response room. */
static int get_context(int fd, struct get_context_out *out, size_t out_bytes)
{
	struct get_context_req req = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_GET_CONTEXT,
			.in_words = sizeof(req) / 4,
			.out_words = out_bytes / 4,
		},
		.cmd.response = (uintptr_t)out,
	};

	return write(fd, &req, sizeof(req)) == sizeof(req) ? 0 : -errno;
}

FIXTURE(uverbs) {
	int fd;
};

FIXTURE_SETUP(uverbs)
{
	ASSERT_EQ(0, sh("modprobe xiw"));
	ASSERT_EQ(0, dummy_add("xr0", "02:00:00:00:30:01"));
	ASSERT_EQ(0, sh("rdma link add " DEV " type xiw netdev xr0"));
	self->fd = open_uverbs(DEV);
	ASSERT_LE(0, self->fd) TH_LOG("no uverbs device for " DEV);
}

FIXTURE_TEARDOWN(uverbs)
{
	if (self->fd >= 0)
		close(self->fd);
	sh("rdma link delete " DEV " 2>/dev/null; ip link del xr0 2>/dev/null");
}

TEST_F(uverbs, get_context_returns_abi_version)
{
	struct get_context_out out;

	memset(&out, 0xa5, sizeof(out));
	ASSERT_EQ(0, get_context(self->fd, &out, sizeof(out)));
	EXPECT_EQ(XIW_ABI_VERSION, out.drv.abi_version);
	EXPECT_EQ(0, out.drv.reserved);
	close(out.core.async_fd);
}

TEST_F(uverbs, get_context_without_room_for_driver_data)
{
	struct get_context_out out;

	EXPECT_EQ(-EINVAL, get_context(self->fd, &out, sizeof(out.core)));
	/* The failed attempt left no context behind: a proper one works. */
	ASSERT_EQ(0, get_context(self->fd, &out, sizeof(out)));
	close(out.core.async_fd);
}

struct ex_query_req {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex;
	struct ib_uverbs_ex_query_device cmd;
	__u64 drv[1];
};

static int ex_query_device(int fd, int provider_in_words)
{
	struct ib_uverbs_ex_query_device_resp resp;
	struct ex_query_req req = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_FLAG_EXTENDED |
				   IB_USER_VERBS_EX_CMD_QUERY_DEVICE,
			.in_words = sizeof(req.cmd) / 8,
			.out_words = sizeof(resp) / 8,
		},
		.ex = {
			.response = (uintptr_t)&resp,
			.provider_in_words = provider_in_words,
		},
	};
	size_t len = sizeof(req) - sizeof(req.drv) + provider_in_words * 8;

	return write(fd, &req, len) == (ssize_t)len ? 0 : -errno;
}

TEST_F(uverbs, query_device_refuses_driver_data)
{
	struct get_context_out out;

	ASSERT_EQ(0, get_context(self->fd, &out, sizeof(out)));
	EXPECT_EQ(0, ex_query_device(self->fd, 0));
	EXPECT_EQ(-EINVAL, ex_query_device(self->fd, 1));
	close(out.core.async_fd);
}

TEST_HARNESS_MAIN
