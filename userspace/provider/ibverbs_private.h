// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The private libibverbs ABI (symbol version IBVERBS_PRIVATE_34), as far as
 * this provider uses it.
 *
 * Debian installs libibverbs's public <infiniband/verbs.h> but not the
 * headers in-tree providers are built against, so every provider built out
 * of tree has to declare these layouts itself. This header is the only place
 * that does so. The layouts are those of rdma-core v36.0 to v56.x on 64-bit
 * Linux; the build refuses any other libibverbs (rdma_core_version.h). Every
 * size and offset that libibverbs or the provider relies on is asserted at
 * the end, and tests/abi_layout_test.cpp checks the verbs_context_ops slot
 * order against the libibverbs installed on the build machine.
 *
 * Names follow libibverbs's, so that each declaration can be compared with
 * rdma-core's libibverbs/driver.h and kern-abi.h line by line.
 */
#ifndef XIW_IBVERBS_PRIVATE_H
#define XIW_IBVERBS_PRIVATE_H

#include <cstddef>
#include <cstdint>
#include <ctime>

#include <linux/types.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>

// The structures below mirror C declarations, C arrays included.
// NOLINTBEGIN(modernize-avoid-c-arrays,cppcoreguidelines-avoid-c-arrays)
extern "C" {

/* ccan's struct list_node: libibverbs links devices and drivers with it. */
struct verbs_list_node {
	verbs_list_node *next;
	verbs_list_node *prev;
};

/* ---- Device discovery and matching ------------------------------------ */

enum verbs_match_kind : std::uint8_t {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		std::uint64_t driver_id;
	} u;
	std::uint16_t vendor;
	std::uint16_t device;
	std::uint8_t kind; /* enum verbs_match_kind */
};

/* One RDMA device found in sysfs or over netlink, before a provider claims it. */
struct verbs_sysfs_dev {
	verbs_list_node entry;
	void *provider_data;
	const verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX]; /* uverbsN */
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX]; /* /sys/class/infiniband/<ibdev> */
	char modalias[512];
	std::uint64_t node_guid;
	std::uint32_t driver_id; /* enum rdma_driver_id */
	ibv_node_type node_type;
	int ibdev_idx;
	std::uint32_t num_ports;
	std::uint32_t abi_ver; /* the kernel's uverbs_abi_ver */
	std::timespec time_created;
};

struct verbs_device;

struct verbs_device_ops {
	const char *name;
	std::uint32_t match_min_abi_version;
	std::uint32_t match_max_abi_version;
	const verbs_match_ent *match_table;
	const verbs_device_ops **static_providers;
	bool (*match_device)(verbs_sysfs_dev *sysfs_dev);
	verbs_context *(*alloc_context)(ibv_device *device, int cmd_fd,
					void *private_data);
	verbs_context *(*import_context)(ibv_device *device, int cmd_fd);
	verbs_device *(*alloc_device)(verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(verbs_device *device);
};

struct verbs_device {
	ibv_device device; /* must be first: libibverbs converts by cast */
	const verbs_device_ops *ops;
	int refcount; /* a C11 atomic_int that only libibverbs touches */
	verbs_list_node entry;
	verbs_sysfs_dev *sysfs;
	std::uint64_t core_support;
};

/* ---- Objects whose libibverbs wrappers appear in the ops ---------------- */

enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	ibv_mr_type mr_type;
	int access;
};

struct verbs_xrcd; /* only ever pointed to */

/*
 * libibverbs takes any ibv_qp for the first member of one of these:
 * ibv_qp_to_qp_ex() reads comp_mask, which must therefore exist (and be
 * zero) behind every QP a provider hands out, even one made by the plain
 * ibv_cmd_create_qp(), which does not touch it.
 */
enum verbs_qp_mask : std::uint32_t {
	VERBS_QP_XRCD = 1U << 0,
	VERBS_QP_EX = 1U << 1,
};

struct verbs_qp {
	union {
		ibv_qp qp;
		ibv_qp_ex qp_ex;
	};
	std::uint32_t comp_mask; /* enum verbs_qp_mask */
	verbs_xrcd *xrcd;
};

/*
 * ---- The provider's operations -----------------------------------------
 *
 * One slot per operation, sorted by name, as libibverbs declares them.
 * verbs_set_ops() copies the non-null slots; an unset one answers
 * EOPNOTSUPP (or ENOSYS). Adding, removing or reordering a slot breaks
 * every caller: never edit this list except to follow libibverbs.
 */
struct verbs_context_ops {
	int (*advise_mr)(ibv_pd *pd, ibv_advise_mr_advice advice,
			 std::uint32_t flags, ibv_sge *sg_list,
			 std::uint32_t num_sges);
	ibv_dm *(*alloc_dm)(ibv_context *context, ibv_alloc_dm_attr *attr);
	ibv_mw *(*alloc_mw)(ibv_pd *pd, ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(ibv_pd *pd);
	ibv_pd *(*alloc_parent_domain)(ibv_context *context,
				       ibv_parent_domain_init_attr *attr);
	ibv_pd *(*alloc_pd)(ibv_context *context);
	ibv_td *(*alloc_td)(ibv_context *context,
			    ibv_td_init_attr *init_attr);
	void (*async_event)(ibv_context *context, ibv_async_event *event);
	int (*attach_counters_point_flow)(ibv_counters *counters,
					  ibv_counter_attach_attr *attr,
					  ibv_flow *flow);
	int (*attach_mcast)(ibv_qp *qp, const ibv_gid *gid, std::uint16_t lid);
	int (*bind_mw)(ibv_qp *qp, ibv_mw *mw, ibv_mw_bind *mw_bind);
	int (*close_xrcd)(ibv_xrcd *xrcd);
	void (*cq_event)(ibv_cq *cq);
	ibv_ah *(*create_ah)(ibv_pd *pd, ibv_ah_attr *attr);
	ibv_counters *(*create_counters)(ibv_context *context,
					 ibv_counters_init_attr *init_attr);
	ibv_cq *(*create_cq)(ibv_context *context, int cqe,
			     ibv_comp_channel *channel, int comp_vector);
	ibv_cq_ex *(*create_cq_ex)(ibv_context *context,
				   ibv_cq_init_attr_ex *init_attr);
	ibv_flow *(*create_flow)(ibv_qp *qp, ibv_flow_attr *flow_attr);
	ibv_flow_action *(*create_flow_action_esp)(
		ibv_context *context, ibv_flow_action_esp_attr *attr);
	ibv_qp *(*create_qp)(ibv_pd *pd, ibv_qp_init_attr *attr);
	ibv_qp *(*create_qp_ex)(ibv_context *context,
				ibv_qp_init_attr_ex *qp_init_attr_ex);
	ibv_rwq_ind_table *(*create_rwq_ind_table)(
		ibv_context *context, ibv_rwq_ind_table_init_attr *init_attr);
	ibv_srq *(*create_srq)(ibv_pd *pd, ibv_srq_init_attr *srq_init_attr);
	ibv_srq *(*create_srq_ex)(ibv_context *context,
				  ibv_srq_init_attr_ex *srq_init_attr_ex);
	ibv_wq *(*create_wq)(ibv_context *context,
			     ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_mw)(ibv_mw *mw);
	int (*dealloc_pd)(ibv_pd *pd);
	int (*dealloc_td)(ibv_td *td);
	int (*dereg_mr)(verbs_mr *vmr);
	int (*destroy_ah)(ibv_ah *ah);
	int (*destroy_counters)(ibv_counters *counters);
	int (*destroy_cq)(ibv_cq *cq);
	int (*destroy_flow)(ibv_flow *flow);
	int (*destroy_flow_action)(ibv_flow_action *action);
	int (*destroy_qp)(ibv_qp *qp);
	int (*destroy_rwq_ind_table)(ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(ibv_srq *srq);
	int (*destroy_wq)(ibv_wq *wq);
	int (*detach_mcast)(ibv_qp *qp, const ibv_gid *gid, std::uint16_t lid);
	void (*free_context)(ibv_context *context);
	int (*free_dm)(ibv_dm *dm);
	int (*get_srq_num)(ibv_srq *srq, std::uint32_t *srq_num);
	ibv_dm *(*import_dm)(ibv_context *context, std::uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(ibv_pd *pd, std::uint32_t mr_handle);
	ibv_pd *(*import_pd)(ibv_context *context, std::uint32_t pd_handle);
	int (*modify_cq)(ibv_cq *cq, ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(ibv_flow_action *action,
				      ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask);
	int (*modify_qp_rate_limit)(ibv_qp *qp, ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(ibv_srq *srq, ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(ibv_wq *wq, ibv_wq_attr *wq_attr);
	ibv_qp *(*open_qp)(ibv_context *context, ibv_qp_open_attr *attr);
	ibv_xrcd *(*open_xrcd)(ibv_context *context,
			       ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(ibv_cq *cq, int num_entries, ibv_wc *wc);
	int (*post_recv)(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr);
	int (*post_send)(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr);
	int (*post_srq_ops)(ibv_srq *srq, ibv_ops_wr *op, ibv_ops_wr **bad_op);
	int (*post_srq_recv)(ibv_srq *srq, ibv_recv_wr *recv_wr,
			     ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(ibv_context *context,
			       const ibv_query_device_ex_input *input,
			       ibv_device_attr_ex *attr, std::size_t attr_size);
	int (*query_ece)(ibv_qp *qp, ibv_ece *ece);
	int (*query_port)(ibv_context *context, std::uint8_t port_num,
			  ibv_port_attr *port_attr);
	int (*query_qp)(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask,
			ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(ibv_qp *qp, ibv_wr_opcode op,
				      std::uint32_t flags);
	int (*query_rt_values)(ibv_context *context, ibv_values_ex *values);
	int (*query_srq)(ibv_srq *srq, ibv_srq_attr *srq_attr);
	int (*read_counters)(ibv_counters *counters,
			     std::uint64_t *counters_value,
			     std::uint32_t ncounters, std::uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(ibv_pd *pd, ibv_dm *dm,
				    std::uint64_t dm_offset, std::size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(ibv_pd *pd, std::uint64_t offset,
					std::size_t length, std::uint64_t iova,
					int fd, int access);
	struct ibv_mr *(*reg_mr)(ibv_pd *pd, void *addr, std::size_t length,
				 std::uint64_t hca_va, int access);
	int (*req_notify_cq)(ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(verbs_mr *vmr, int flags, ibv_pd *pd, void *addr,
			std::size_t length, int access);
	int (*resize_cq)(ibv_cq *cq, int cqe);
	int (*set_ece)(ibv_qp *qp, ibv_ece *ece);
	void (*unimport_dm)(ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(ibv_pd *pd);
};

/*
 * ---- Legacy (write()) command layouts ----------------------------------
 *
 * The ibv_cmd_*() helpers take the command as the uverbs header followed by
 * the kernel's struct ib_uverbs_<verb>, with the driver's own request data
 * straight after it, and the response as the kernel's
 * struct ib_uverbs_<verb>_resp followed by the driver's response. The
 * kernel structs end in flexible array members, which C++ cannot embed in
 * another struct, so the fixed parts are spelled out here and checked
 * against the kernel's own declarations below.
 *
 * Several of these share a name with a verbs.h function (ibv_alloc_pd,
 * ibv_query_port): refer to them as "struct ibv_alloc_pd".
 */
struct ibv_get_context {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
};

struct ibv_get_context_resp {
	__u32 async_fd;
	__u32 num_comp_vectors;
};

struct ibv_query_port {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u8 port_num;
	__u8 reserved[7];
};

struct ibv_alloc_pd {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
};

struct ibv_alloc_pd_resp {
	__u32 pd_handle;
};

struct ibv_reg_mr {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 start;
	__aligned_u64 length;
	__aligned_u64 hca_va;
	__u32 pd_handle;
	__u32 access_flags;
};

struct ibv_reg_mr_resp {
	__u32 mr_handle;
	__u32 lkey;
	__u32 rkey;
};

struct ibv_rereg_mr {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 mr_handle;
	__u32 flags;
	__aligned_u64 start;
	__aligned_u64 length;
	__aligned_u64 hca_va;
	__u32 pd_handle;
	__u32 access_flags;
};

struct ibv_rereg_mr_resp {
	__u32 lkey;
	__u32 rkey;
};

struct ibv_alloc_mw {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 pd_handle;
	__u8 mw_type;
	__u8 reserved[3];
};

struct ibv_resize_cq {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 cq_handle;
	__u32 cqe;
};

/* ib_uverbs_resize_cq_resp without its flexible array. */
struct ibv_resize_cq_resp {
	__u32 cqe;
	__u32 reserved;
};

struct ibv_create_cq {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 user_handle;
	__u32 cqe;
	__u32 comp_vector;
	__s32 comp_channel;
	__u32 reserved;
};

struct ibv_create_cq_resp {
	__u32 cq_handle;
	__u32 cqe;
};

/* The extended commands' two headers (rdma-core's struct ex_hdr). */
struct ibv_ex_hdr {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_ex_cmd_hdr ex_hdr;
};

struct ibv_create_cq_ex {
	ibv_ex_hdr hdr;
	ib_uverbs_ex_create_cq core_payload;
};

/* ib_uverbs_ex_create_cq_resp, without the zero-length array. */
struct ibv_ex_create_cq_resp {
	ibv_create_cq_resp base;
	__u32 comp_mask;
	__u32 response_length;
};

/* libibverbs' struct verbs_cq: either view of the same CQ. */
union verbs_cq {
	ibv_cq cq;
	ibv_cq_ex cq_ex;
};

struct ibv_create_qp {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 user_handle;
	__u32 pd_handle;
	__u32 send_cq_handle;
	__u32 recv_cq_handle;
	__u32 srq_handle;
	__u32 max_send_wr;
	__u32 max_recv_wr;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_inline_data;
	__u8 sq_sig_all;
	__u8 qp_type;
	__u8 is_srq;
	__u8 reserved;
};

struct ibv_create_qp_resp {
	__u32 qp_handle;
	__u32 qpn;
	__u32 max_send_wr;
	__u32 max_recv_wr;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_inline_data;
	__u32 reserved;
};

/* No response: libibverbs sends it with out_words 0. */
struct ibv_modify_qp {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_qp_dest dest;
	ib_uverbs_qp_dest alt_dest;
	__u32 qp_handle;
	__u32 attr_mask;
	__u32 qkey;
	__u32 rq_psn;
	__u32 sq_psn;
	__u32 dest_qp_num;
	__u32 qp_access_flags;
	__u16 pkey_index;
	__u16 alt_pkey_index;
	__u8 qp_state;
	__u8 cur_qp_state;
	__u8 path_mtu;
	__u8 path_mig_state;
	__u8 en_sqd_async_notify;
	__u8 max_rd_atomic;
	__u8 max_dest_rd_atomic;
	__u8 min_rnr_timer;
	__u8 port_num;
	__u8 timeout;
	__u8 retry_cnt;
	__u8 rnr_retry;
	__u8 alt_port_num;
	__u8 alt_timeout;
	__u8 reserved[2];
};

/* libibverbs supplies the response buffer (ib_uverbs_query_qp_resp). */
struct ibv_query_qp {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 qp_handle;
	__u32 attr_mask;
};

struct ibv_create_srq {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 user_handle;
	__u32 pd_handle;
	__u32 max_wr;
	__u32 max_sge;
	__u32 srq_limit;
};

struct ibv_create_srq_resp {
	__u32 srq_handle;
	__u32 max_wr;
	__u32 max_sge;
	__u32 srqn;
};

/* No response. */
struct ibv_modify_srq {
	ib_uverbs_cmd_hdr hdr;
	__u32 srq_handle;
	__u32 attr_mask;
	__u32 max_wr;
	__u32 srq_limit;
};

/* libibverbs supplies the response buffer (ib_uverbs_query_srq_resp). */
struct ibv_query_srq {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 srq_handle;
	__u32 reserved;
};

/*
 * POST_SEND and POST_RECV are never sent through libibverbs: xiw writes
 * them itself, with no work requests attached, as doorbells (qp.cpp). Only
 * the fixed part is ever used; the response is the kernel's
 * ib_uverbs_post_send_resp or ib_uverbs_post_recv_resp.
 */
struct ibv_post_send {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 qp_handle;
	__u32 wr_count;
	__u32 sge_count;
	__u32 wqe_size;
};

struct ibv_post_recv {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 qp_handle;
	__u32 wr_count;
	__u32 sge_count;
	__u32 wqe_size;
};

/* ---- Exported helpers (all bound to IBVERBS_PRIVATE_34) ---------------- */

/*
 * The suffix is the PABI version: a provider built for another PABI fails
 * to load instead of misbehaving.
 */
void verbs_register_driver_34(const verbs_device_ops *ops);

/*
 * calloc()s alloc_size bytes, initialises the verbs_context that lies
 * (std::uintptr_t)context_offset bytes into them and takes ownership of
 * cmd_fd: on failure it has closed cmd_fd and set errno. Release with
 * verbs_uninit_context() and then free().
 */
// The name is libibverbs's.
// NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
void *_verbs_init_and_alloc_context(ibv_device *device, int cmd_fd,
				    std::size_t alloc_size,
				    verbs_context *context_offset,
				    std::uint32_t driver_id);
void verbs_uninit_context(verbs_context *context);
void verbs_set_ops(verbs_context *vctx, const verbs_context_ops *ops);

/* Reads <sysfs_dev->ibdev_path>/<formatted name>; returns its length or -1. */
int ibv_read_ibdev_sysfs_file(char *buf, std::size_t size,
			      verbs_sysfs_dev *sysfs_dev, const char *fnfmt,
			      ...) __attribute__((format(printf, 4, 5)));

enum verbs_log_level : std::uint32_t {
	VERBS_LOG_LEVEL_NONE,
	VERBS_LOG_ERR,
	VERBS_LOG_WARN,
	VERBS_LOG_INFO,
	VERBS_LOG_DEBUG,
};

/*
 * libibverbs's log (VERBS_LOG_LEVEL, VERBS_LOG_FILE). Exported from rdma-core
 * v37 on; referenced weakly so that the provider still loads into v36, where
 * it is null.
 */
// The name is libibverbs's.
// NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
void __verbs_log(verbs_context *ctx, std::uint32_t level, const char *fmt,
		 ...) __attribute__((weak, format(printf, 3, 4)));

/* The commands; each returns 0 or a positive errno value. */
int ibv_cmd_get_context(verbs_context *context, struct ibv_get_context *cmd,
			std::size_t cmd_size, ibv_get_context_resp *resp,
			std::size_t resp_size);
int ibv_cmd_query_device_any(ibv_context *context,
			     const ibv_query_device_ex_input *input,
			     ibv_device_attr_ex *attr, std::size_t attr_size,
			     ib_uverbs_ex_query_device_resp *resp,
			     std::size_t *resp_size);
int ibv_cmd_query_port(ibv_context *context, std::uint8_t port_num,
		       ibv_port_attr *port_attr, struct ibv_query_port *cmd,
		       std::size_t cmd_size);
int ibv_cmd_alloc_pd(ibv_context *context, ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, std::size_t cmd_size,
		     ibv_alloc_pd_resp *resp, std::size_t resp_size);
int ibv_cmd_dealloc_pd(ibv_pd *pd);

/*
 * Memory regions. On success ibv_cmd_reg_mr() has filled in vmr's handle,
 * keys, context, type and access; the caller of the op fills in the rest.
 */
int ibv_cmd_reg_mr(ibv_pd *pd, void *addr, std::size_t length,
		   std::uint64_t hca_va, int access, verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, std::size_t cmd_size,
		   ibv_reg_mr_resp *resp, std::size_t resp_size);
int ibv_cmd_dereg_mr(verbs_mr *vmr);
/*
 * Memory windows. On success ibv_cmd_alloc_mw() has filled in mw's
 * context, PD, handle, rkey and type.
 */
int ibv_cmd_alloc_mw(ibv_pd *pd, ibv_mw_type type, ibv_mw *mw,
		     struct ibv_alloc_mw *cmd, std::size_t cmd_size,
		     ib_uverbs_alloc_mw_resp *resp, std::size_t resp_size);
int ibv_cmd_dealloc_mw(ibv_mw *mw);
/*
 * ibv_rereg_mr(): flags are IBV_REREG_MR_CHANGE_*; on success vmr has the
 * new keys (and the new PD's context); libibverbs updates pd, addr and
 * length itself.
 */
int ibv_cmd_rereg_mr(verbs_mr *vmr, std::uint32_t flags, void *addr,
		     std::size_t length, std::uint64_t hca_va, int access,
		     ibv_pd *pd, struct ibv_rereg_mr *cmd, std::size_t cmd_sz,
		     ibv_rereg_mr_resp *resp, std::size_t resp_sz);

/*
 * Queues. The create commands fill in the handle (and the QP number, the
 * CQ's cqe, the granted capabilities in attr) of the object they are given;
 * the destroy commands wait for the events the kernel reported for it.
 */
int ibv_cmd_create_cq(ibv_context *context, int cqe, ibv_comp_channel *channel,
		      int comp_vector, ibv_cq *cq, struct ibv_create_cq *cmd,
		      std::size_t cmd_size, ibv_create_cq_resp *resp,
		      std::size_t resp_size);
int ibv_cmd_destroy_cq(ibv_cq *cq);
/* On success cq->cqe is the new size. */
int ibv_cmd_resize_cq(ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      std::size_t cmd_size, ibv_resize_cq_resp *resp,
		      std::size_t resp_size);
/* In every rdma-core from 36 to at least 56, with this signature. */
int ibv_cmd_create_cq_ex(ibv_context *context,
			 const ibv_cq_init_attr_ex *cq_attr, verbs_cq *cq,
			 struct ibv_create_cq_ex *cmd, std::size_t cmd_size,
			 ibv_ex_create_cq_resp *resp, std::size_t resp_size,
			 std::uint32_t cmd_flags);
int ibv_cmd_create_qp(ibv_pd *pd, ibv_qp *qp, ibv_qp_init_attr *attr,
		      struct ibv_create_qp *cmd, std::size_t cmd_size,
		      ibv_create_qp_resp *resp, std::size_t resp_size);
/*
 * The same command for ibv_create_qp_ex(); comp_mask may hold only PD,
 * XRCD and SEND_OPS_FLAGS. It fills the ibv_qp of qp, sets qp's comp_mask
 * to 0 (VERBS_QP_XRCD with an XRCD) and updates attr_ex->cap.
 */
int ibv_cmd_create_qp_ex(ibv_context *context, verbs_qp *qp,
			 ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, std::size_t cmd_size,
			 ibv_create_qp_resp *resp, std::size_t resp_size);
int ibv_cmd_modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask,
		      struct ibv_modify_qp *cmd, std::size_t cmd_size);
int ibv_cmd_query_qp(ibv_qp *qp, ibv_qp_attr *qp_attr, int attr_mask,
		     ibv_qp_init_attr *qp_init_attr, struct ibv_query_qp *cmd,
		     std::size_t cmd_size);
int ibv_cmd_destroy_qp(ibv_qp *qp);
int ibv_cmd_create_srq(ibv_pd *pd, ibv_srq *srq, ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, std::size_t cmd_size,
		       ibv_create_srq_resp *resp, std::size_t resp_size);
int ibv_cmd_modify_srq(ibv_srq *srq, ibv_srq_attr *srq_attr, int srq_attr_mask,
		       struct ibv_modify_srq *cmd, std::size_t cmd_size);
int ibv_cmd_query_srq(ibv_srq *srq, ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, std::size_t cmd_size);
int ibv_cmd_destroy_srq(ibv_srq *srq);

} // extern "C"
// NOLINTEND(modernize-avoid-c-arrays,cppcoreguidelines-avoid-c-arrays)

/* ---- Layout checks (x86_64 and other LP64 targets) ---------------------- */

namespace xiw::abi_check {

constexpr std::size_t kPtr = sizeof(void *);
static_assert(kPtr == 8, "the layouts below are those of LP64 Linux");

/* Public verbs.h structures the private ones embed. */
static_assert(sizeof(ibv_device) == 664);
static_assert(sizeof(ibv_context) == 328);
static_assert(sizeof(verbs_context) == 648);
static_assert(offsetof(verbs_context, context) == 320);
static_assert(sizeof(ibv_mr) == 48);

static_assert(sizeof(verbs_list_node) == 2 * kPtr);

static_assert(sizeof(verbs_match_ent) == 24);
static_assert(offsetof(verbs_match_ent, u) == 8);
static_assert(offsetof(verbs_match_ent, vendor) == 16);
static_assert(offsetof(verbs_match_ent, device) == 18);
static_assert(offsetof(verbs_match_ent, kind) == 20);

static_assert(sizeof(verbs_sysfs_dev) == 992);
static_assert(offsetof(verbs_sysfs_dev, provider_data) == 16);
static_assert(offsetof(verbs_sysfs_dev, match) == 24);
static_assert(offsetof(verbs_sysfs_dev, flags) == 32);
static_assert(offsetof(verbs_sysfs_dev, sysfs_name) == 36);
static_assert(offsetof(verbs_sysfs_dev, sysfs_cdev) == 104);
static_assert(offsetof(verbs_sysfs_dev, ibdev_name) == 112);
static_assert(offsetof(verbs_sysfs_dev, ibdev_path) == 176);
static_assert(offsetof(verbs_sysfs_dev, modalias) == 432);
static_assert(offsetof(verbs_sysfs_dev, node_guid) == 944);
static_assert(offsetof(verbs_sysfs_dev, driver_id) == 952);
static_assert(offsetof(verbs_sysfs_dev, node_type) == 956);
static_assert(offsetof(verbs_sysfs_dev, ibdev_idx) == 960);
static_assert(offsetof(verbs_sysfs_dev, num_ports) == 964);
static_assert(offsetof(verbs_sysfs_dev, abi_ver) == 968);
static_assert(offsetof(verbs_sysfs_dev, time_created) == 976);

static_assert(sizeof(verbs_device_ops) == 72);
static_assert(offsetof(verbs_device_ops, match_min_abi_version) == 8);
static_assert(offsetof(verbs_device_ops, match_max_abi_version) == 12);
static_assert(offsetof(verbs_device_ops, match_table) == 16);
static_assert(offsetof(verbs_device_ops, static_providers) == 24);
static_assert(offsetof(verbs_device_ops, match_device) == 32);
static_assert(offsetof(verbs_device_ops, alloc_context) == 40);
static_assert(offsetof(verbs_device_ops, import_context) == 48);
static_assert(offsetof(verbs_device_ops, alloc_device) == 56);
static_assert(offsetof(verbs_device_ops, uninit_device) == 64);

static_assert(sizeof(verbs_device) == 712);
static_assert(offsetof(verbs_device, device) == 0);
static_assert(offsetof(verbs_device, ops) == 664);
static_assert(offsetof(verbs_device, refcount) == 672);
static_assert(offsetof(verbs_device, entry) == 680);
static_assert(offsetof(verbs_device, sysfs) == 696);
static_assert(offsetof(verbs_device, core_support) == 704);

static_assert(sizeof(verbs_mr) == 56);
static_assert(offsetof(verbs_mr, mr_type) == 48);
static_assert(offsetof(verbs_mr, access) == 52);

static_assert(offsetof(verbs_qp, qp) == 0);
static_assert(offsetof(verbs_qp, qp_ex) == 0);
static_assert(offsetof(ibv_qp_ex, qp_base) == 0);
static_assert(offsetof(verbs_qp, comp_mask) == sizeof(ibv_qp_ex));
static_assert(offsetof(verbs_qp, xrcd) == sizeof(ibv_qp_ex) + kPtr);

/* 76 slots; spot-check both ends and the slots this provider fills. */
constexpr std::size_t kContextOpsSlots = 76;
static_assert(sizeof(verbs_context_ops) == kContextOpsSlots * kPtr);
static_assert(offsetof(verbs_context_ops, advise_mr) == 0 * kPtr);
static_assert(offsetof(verbs_context_ops, alloc_pd) == 5 * kPtr);
static_assert(offsetof(verbs_context_ops, dealloc_pd) == 26 * kPtr);
static_assert(offsetof(verbs_context_ops, free_context) == 39 * kPtr);
static_assert(offsetof(verbs_context_ops, import_dm) == 42 * kPtr);
static_assert(offsetof(verbs_context_ops, poll_cq) == 53 * kPtr);
static_assert(offsetof(verbs_context_ops, query_device_ex) == 58 * kPtr);
static_assert(offsetof(verbs_context_ops, query_port) == 60 * kPtr);
static_assert(offsetof(verbs_context_ops, query_qp_data_in_order) ==
	      62 * kPtr);
static_assert(offsetof(verbs_context_ops, unimport_pd) == 75 * kPtr);
static_assert(offsetof(verbs_context_ops, create_cq) == 15 * kPtr);
static_assert(offsetof(verbs_context_ops, create_qp) == 19 * kPtr);
static_assert(offsetof(verbs_context_ops, create_srq) == 22 * kPtr);
static_assert(offsetof(verbs_context_ops, dereg_mr) == 28 * kPtr);
static_assert(offsetof(verbs_context_ops, destroy_cq) == 31 * kPtr);
static_assert(offsetof(verbs_context_ops, destroy_qp) == 34 * kPtr);
static_assert(offsetof(verbs_context_ops, destroy_srq) == 36 * kPtr);
static_assert(offsetof(verbs_context_ops, modify_qp) == 47 * kPtr);
static_assert(offsetof(verbs_context_ops, modify_srq) == 49 * kPtr);
static_assert(offsetof(verbs_context_ops, post_recv) == 54 * kPtr);
static_assert(offsetof(verbs_context_ops, post_send) == 55 * kPtr);
static_assert(offsetof(verbs_context_ops, post_srq_recv) == 57 * kPtr);
static_assert(offsetof(verbs_context_ops, query_qp) == 61 * kPtr);
static_assert(offsetof(verbs_context_ops, query_srq) == 64 * kPtr);
static_assert(offsetof(verbs_context_ops, reg_mr) == 68 * kPtr);
static_assert(offsetof(verbs_context_ops, req_notify_cq) == 69 * kPtr);

/* Commands: the uverbs header, then exactly the kernel's fixed part. */
static_assert(sizeof(ib_uverbs_cmd_hdr) == 8);

static_assert(sizeof(ibv_get_context) == 16);
static_assert(sizeof(ibv_get_context) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_get_context));
static_assert(offsetof(ibv_get_context, response) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_get_context, response));

static_assert(sizeof(ibv_get_context_resp) == 8);
static_assert(sizeof(ibv_get_context_resp) ==
	      sizeof(ib_uverbs_get_context_resp));
static_assert(offsetof(ibv_get_context_resp, async_fd) ==
	      offsetof(ib_uverbs_get_context_resp, async_fd));
static_assert(offsetof(ibv_get_context_resp, num_comp_vectors) ==
	      offsetof(ib_uverbs_get_context_resp, num_comp_vectors));

static_assert(sizeof(struct ibv_query_port) == 24);
static_assert(sizeof(struct ibv_query_port) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_query_port));
static_assert(offsetof(struct ibv_query_port, response) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_query_port, response));
static_assert(offsetof(struct ibv_query_port, port_num) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_query_port, port_num));
static_assert(offsetof(struct ibv_query_port, reserved) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_query_port, reserved));

static_assert(sizeof(struct ibv_alloc_pd) == 16);
static_assert(sizeof(struct ibv_alloc_pd) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_alloc_pd));
static_assert(offsetof(struct ibv_alloc_pd, response) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_alloc_pd, response));

static_assert(sizeof(ibv_alloc_pd_resp) == 4);
static_assert(sizeof(ibv_alloc_pd_resp) == sizeof(ib_uverbs_alloc_pd_resp));

static_assert(sizeof(struct ibv_reg_mr) == 48);
static_assert(sizeof(struct ibv_reg_mr) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_reg_mr));
static_assert(offsetof(struct ibv_reg_mr, response) ==
	      sizeof(ib_uverbs_cmd_hdr) + offsetof(ib_uverbs_reg_mr, response));
static_assert(offsetof(struct ibv_reg_mr, start) ==
	      sizeof(ib_uverbs_cmd_hdr) + offsetof(ib_uverbs_reg_mr, start));
static_assert(offsetof(struct ibv_reg_mr, length) ==
	      sizeof(ib_uverbs_cmd_hdr) + offsetof(ib_uverbs_reg_mr, length));
static_assert(offsetof(struct ibv_reg_mr, hca_va) ==
	      sizeof(ib_uverbs_cmd_hdr) + offsetof(ib_uverbs_reg_mr, hca_va));
static_assert(offsetof(struct ibv_reg_mr, pd_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_reg_mr, pd_handle));
static_assert(offsetof(struct ibv_reg_mr, access_flags) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_reg_mr, access_flags));
static_assert(sizeof(ibv_reg_mr_resp) == 12);

static_assert(sizeof(struct ibv_rereg_mr) == 56);
static_assert(sizeof(struct ibv_rereg_mr) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_rereg_mr));
static_assert(offsetof(struct ibv_rereg_mr, mr_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_rereg_mr, mr_handle));
static_assert(offsetof(struct ibv_rereg_mr, hca_va) ==
	      sizeof(ib_uverbs_cmd_hdr) + offsetof(ib_uverbs_rereg_mr, hca_va));
static_assert(offsetof(struct ibv_rereg_mr, access_flags) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_rereg_mr, access_flags));
static_assert(sizeof(ibv_rereg_mr_resp) == sizeof(ib_uverbs_rereg_mr_resp));
static_assert(sizeof(ibv_reg_mr_resp) == sizeof(ib_uverbs_reg_mr_resp));
static_assert(offsetof(ibv_reg_mr_resp, mr_handle) ==
	      offsetof(ib_uverbs_reg_mr_resp, mr_handle));
static_assert(offsetof(ibv_reg_mr_resp, lkey) ==
	      offsetof(ib_uverbs_reg_mr_resp, lkey));
static_assert(offsetof(ibv_reg_mr_resp, rkey) ==
	      offsetof(ib_uverbs_reg_mr_resp, rkey));

static_assert(sizeof(struct ibv_alloc_mw) == 24);
static_assert(sizeof(struct ibv_alloc_mw) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_alloc_mw));
static_assert(offsetof(struct ibv_alloc_mw, pd_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_alloc_mw, pd_handle));
static_assert(offsetof(struct ibv_alloc_mw, mw_type) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_alloc_mw, mw_type));

static_assert(sizeof(struct ibv_resize_cq) == 24);
static_assert(sizeof(struct ibv_resize_cq) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_resize_cq));
static_assert(offsetof(struct ibv_resize_cq, response) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_resize_cq, response));
static_assert(offsetof(struct ibv_resize_cq, cq_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_resize_cq, cq_handle));
static_assert(offsetof(struct ibv_resize_cq, cqe) ==
	      sizeof(ib_uverbs_cmd_hdr) + offsetof(ib_uverbs_resize_cq, cqe));
static_assert(sizeof(ibv_resize_cq_resp) == 8);
static_assert(sizeof(ibv_resize_cq_resp) == sizeof(ib_uverbs_resize_cq_resp));
static_assert(offsetof(ibv_resize_cq_resp, cqe) ==
	      offsetof(ib_uverbs_resize_cq_resp, cqe));

static_assert(sizeof(struct ibv_create_cq) == 40);
static_assert(sizeof(struct ibv_create_cq) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_create_cq));
static_assert(offsetof(struct ibv_create_cq, response) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_cq, response));
static_assert(offsetof(struct ibv_create_cq, user_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_cq, user_handle));
static_assert(offsetof(struct ibv_create_cq, cqe) ==
	      sizeof(ib_uverbs_cmd_hdr) + offsetof(ib_uverbs_create_cq, cqe));
static_assert(offsetof(struct ibv_create_cq, comp_vector) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_cq, comp_vector));
static_assert(offsetof(struct ibv_create_cq, comp_channel) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_cq, comp_channel));
static_assert(offsetof(struct ibv_create_cq, reserved) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_cq, reserved));
static_assert(sizeof(ibv_create_cq_resp) == 8);
static_assert(sizeof(ibv_create_cq_resp) ==
	      sizeof(ib_uverbs_create_cq_resp));
static_assert(offsetof(ibv_create_cq_resp, cq_handle) ==
	      offsetof(ib_uverbs_create_cq_resp, cq_handle));
static_assert(offsetof(ibv_create_cq_resp, cqe) ==
	      offsetof(ib_uverbs_create_cq_resp, cqe));

static_assert(sizeof(ibv_ex_hdr) == 24);
static_assert(sizeof(struct ibv_create_cq_ex) == 56);
static_assert(offsetof(struct ibv_create_cq_ex, core_payload) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_ex_cmd_hdr));
static_assert(sizeof(verbs_cq) == sizeof(ibv_cq_ex));
static_assert(offsetof(ibv_cq_ex, async_events_completed) ==
	      offsetof(ibv_cq, async_events_completed));
static_assert(sizeof(ibv_ex_create_cq_resp) == 16);
static_assert(offsetof(ibv_ex_create_cq_resp, comp_mask) ==
	      offsetof(ib_uverbs_ex_create_cq_resp, comp_mask));
static_assert(offsetof(ibv_ex_create_cq_resp, response_length) ==
	      offsetof(ib_uverbs_ex_create_cq_resp, response_length));

static_assert(sizeof(struct ibv_create_qp) == 64);
static_assert(sizeof(struct ibv_create_qp) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_create_qp));
static_assert(offsetof(struct ibv_create_qp, response) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_qp, response));
static_assert(offsetof(struct ibv_create_qp, user_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_qp, user_handle));
static_assert(offsetof(struct ibv_create_qp, pd_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_qp, pd_handle));
static_assert(offsetof(struct ibv_create_qp, srq_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_qp, srq_handle));
static_assert(offsetof(struct ibv_create_qp, max_inline_data) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_qp, max_inline_data));
static_assert(offsetof(struct ibv_create_qp, sq_sig_all) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_qp, sq_sig_all));
static_assert(offsetof(struct ibv_create_qp, qp_type) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_qp, qp_type));
static_assert(offsetof(struct ibv_create_qp, is_srq) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_qp, is_srq));
static_assert(offsetof(struct ibv_create_qp, reserved) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_qp, reserved));
static_assert(sizeof(ibv_create_qp_resp) == 32);
static_assert(sizeof(ibv_create_qp_resp) ==
	      sizeof(ib_uverbs_create_qp_resp));
static_assert(offsetof(ibv_create_qp_resp, qp_handle) ==
	      offsetof(ib_uverbs_create_qp_resp, qp_handle));
static_assert(offsetof(ibv_create_qp_resp, qpn) ==
	      offsetof(ib_uverbs_create_qp_resp, qpn));
static_assert(offsetof(ibv_create_qp_resp, max_inline_data) ==
	      offsetof(ib_uverbs_create_qp_resp, max_inline_data));
static_assert(offsetof(ibv_create_qp_resp, reserved) ==
	      offsetof(ib_uverbs_create_qp_resp, reserved));

static_assert(sizeof(struct ibv_modify_qp) == 120);
static_assert(sizeof(struct ibv_modify_qp) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_modify_qp));
static_assert(offsetof(struct ibv_modify_qp, alt_dest) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_modify_qp, alt_dest));
static_assert(offsetof(struct ibv_modify_qp, qp_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_modify_qp, qp_handle));
static_assert(offsetof(struct ibv_modify_qp, attr_mask) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_modify_qp, attr_mask));
static_assert(offsetof(struct ibv_modify_qp, pkey_index) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_modify_qp, pkey_index));
static_assert(offsetof(struct ibv_modify_qp, qp_state) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_modify_qp, qp_state));
static_assert(offsetof(struct ibv_modify_qp, alt_timeout) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_modify_qp, alt_timeout));
static_assert(offsetof(struct ibv_modify_qp, reserved) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_modify_qp, reserved));

static_assert(sizeof(struct ibv_query_qp) == 24);
static_assert(sizeof(struct ibv_query_qp) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_query_qp));
static_assert(offsetof(struct ibv_query_qp, response) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_query_qp, response));
static_assert(offsetof(struct ibv_query_qp, qp_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_query_qp, qp_handle));
static_assert(offsetof(struct ibv_query_qp, attr_mask) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_query_qp, attr_mask));

static_assert(sizeof(struct ibv_create_srq) == 40);
static_assert(sizeof(struct ibv_create_srq) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_create_srq));
static_assert(offsetof(struct ibv_create_srq, response) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_srq, response));
static_assert(offsetof(struct ibv_create_srq, user_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_srq, user_handle));
static_assert(offsetof(struct ibv_create_srq, pd_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_srq, pd_handle));
static_assert(offsetof(struct ibv_create_srq, max_wr) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_srq, max_wr));
static_assert(offsetof(struct ibv_create_srq, max_sge) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_srq, max_sge));
static_assert(offsetof(struct ibv_create_srq, srq_limit) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_create_srq, srq_limit));
static_assert(sizeof(ibv_create_srq_resp) == 16);
static_assert(sizeof(ibv_create_srq_resp) ==
	      sizeof(ib_uverbs_create_srq_resp));
static_assert(offsetof(ibv_create_srq_resp, srq_handle) ==
	      offsetof(ib_uverbs_create_srq_resp, srq_handle));
static_assert(offsetof(ibv_create_srq_resp, max_wr) ==
	      offsetof(ib_uverbs_create_srq_resp, max_wr));
static_assert(offsetof(ibv_create_srq_resp, max_sge) ==
	      offsetof(ib_uverbs_create_srq_resp, max_sge));
static_assert(offsetof(ibv_create_srq_resp, srqn) ==
	      offsetof(ib_uverbs_create_srq_resp, srqn));

static_assert(sizeof(struct ibv_modify_srq) == 24);
static_assert(sizeof(struct ibv_modify_srq) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_modify_srq));
static_assert(offsetof(struct ibv_modify_srq, srq_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_modify_srq, srq_handle));
static_assert(offsetof(struct ibv_modify_srq, attr_mask) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_modify_srq, attr_mask));
static_assert(offsetof(struct ibv_modify_srq, max_wr) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_modify_srq, max_wr));
static_assert(offsetof(struct ibv_modify_srq, srq_limit) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_modify_srq, srq_limit));

static_assert(sizeof(struct ibv_query_srq) == 24);
static_assert(sizeof(struct ibv_query_srq) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_query_srq));
static_assert(offsetof(struct ibv_query_srq, response) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_query_srq, response));
static_assert(offsetof(struct ibv_query_srq, srq_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_query_srq, srq_handle));
static_assert(offsetof(struct ibv_query_srq, reserved) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_query_srq, reserved));

static_assert(sizeof(struct ibv_post_send) == 32);
static_assert(sizeof(struct ibv_post_send) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_post_send));
static_assert(offsetof(struct ibv_post_send, response) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_post_send, response));
static_assert(offsetof(struct ibv_post_send, qp_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_post_send, qp_handle));
static_assert(offsetof(struct ibv_post_send, wr_count) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_post_send, wr_count));
static_assert(offsetof(struct ibv_post_send, sge_count) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_post_send, sge_count));
static_assert(offsetof(struct ibv_post_send, wqe_size) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_post_send, wqe_size));
static_assert(sizeof(ib_uverbs_post_send_resp) == 4);

static_assert(sizeof(struct ibv_post_recv) == 32);
static_assert(sizeof(struct ibv_post_recv) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_post_recv));
static_assert(offsetof(struct ibv_post_recv, response) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_post_recv, response));
static_assert(offsetof(struct ibv_post_recv, qp_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_post_recv, qp_handle));
static_assert(offsetof(struct ibv_post_recv, wr_count) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_post_recv, wr_count));
static_assert(offsetof(struct ibv_post_recv, sge_count) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_post_recv, sge_count));
static_assert(offsetof(struct ibv_post_recv, wqe_size) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_post_recv, wqe_size));
static_assert(sizeof(ib_uverbs_post_recv_resp) == 4);


/*
 * The extended query-device response comes from the kernel header
 * unchanged; libibverbs reads only what response_length says was written.
 */
static_assert(offsetof(ib_uverbs_ex_query_device_resp, base) == 0);
static_assert(offsetof(ib_uverbs_ex_query_device_resp, comp_mask) ==
	      sizeof(ib_uverbs_query_device_resp));
static_assert(offsetof(ib_uverbs_ex_query_device_resp, response_length) ==
	      sizeof(ib_uverbs_query_device_resp) + 4);

} // namespace xiw::abi_check

#endif // XIW_IBVERBS_PRIVATE_H
