// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Queue pairs: creation with validated capabilities, references,
 * query and destroy. The state machine behind modify_qp and the
 * flushing of work queues are in xiw_qp_state.c, the posts of kernel
 * consumers in xiw_qp_post.c; xiw_qp.h is what these files share.
 */
#include <linux/log2.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_user_verbs.h>

#include "xiw_fault.h"
#include "xiw_qp.h"

static u32 xiw_ring_num(u32 wanted)
{
	return roundup_pow_of_two(max_t(u32, wanted, 1));
}

int xiw_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		  struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xdev(ibqp->device);
	struct xiw_qp *qp = to_xqp(ibqp);
	struct xiw_create_qp_resp resp = {
		.rq_key = XIW_INVALID_MMAP_KEY,
		.max_inline = XIW_MAX_INLINE,
	};
	struct ib_qp_cap *cap = &attr->cap;
	u32 id;
	int rv;

	if (attr->qp_type != IB_QPT_RC || attr->create_flags)
		return -EOPNOTSUPP;
	if (cap->max_send_wr > XIW_MAX_QP_WR || cap->max_send_sge > XIW_MAX_SGE ||
	    cap->max_inline_data > XIW_MAX_INLINE)
		return -EINVAL;
	if (!attr->srq && (cap->max_recv_wr > XIW_MAX_QP_WR ||
			   cap->max_recv_sge > XIW_MAX_RECV_SGE))
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (!xiw_count_get(&xdev->num_qp, XIW_MAX_QP))
		return -ENOMEM;

	qp->xdev = xdev;
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	mutex_init(&qp->state_lock);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	INIT_WORK(&qp->err_work, xiw_qp_err_work);
	qp->err_ev = XIW_NO_EVENT;
	qp->scq = to_xcq(attr->send_cq);
	qp->rcq = to_xcq(attr->recv_cq);
	qp->sig_all = attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	/* Same rings without udata, only not mapped: we post into them. */
	qp->kernel = !udata;

	rv = xiw_ring_alloc(&qp->sq, xiw_ring_num(cap->max_send_wr),
			    sizeof(struct xiw_sqe), udata, &resp.sq_key);
	if (rv)
		goto err_count;
	if (attr->srq) {
		qp->srq = to_xsrq(attr->srq);
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	} else {
		rv = xiw_ring_alloc(&qp->rq, xiw_ring_num(cap->max_recv_wr),
				    sizeof(struct xiw_rqe), udata, &resp.rq_key);
		if (rv)
			goto err_sq;
		cap->max_recv_wr = qp->rq.num;
	}
	cap->max_send_wr = qp->sq.num;
	cap->max_inline_data = XIW_MAX_INLINE;
	qp->cap = *cap;
	/*
	 * A new QP is in iWARP's Idle state, which verbs call INIT on an
	 * RNIC: receives may be posted, and a connection brings it to RTS.
	 * Nothing maps the rings yet, so plain stores publish the state.
	 */
	qp->state = IB_QPS_INIT;
	qp->sq.ctrl->qp_state = IB_QPS_INIT;
	if (qp->rq.mem)
		qp->rq.ctrl->qp_state = IB_QPS_INIT;

	spin_lock_init(&qp->wire.lock);
	qp->sq_pend = xiw_fault(XIW_FAULT_QP_SQ_PEND) ? NULL :
		kvcalloc(qp->sq.num, sizeof(*qp->sq_pend), GFP_KERNEL);
	rv = qp->sq_pend ? xiw_tx_create(qp) : -ENOMEM;
	if (!rv)
		rv = xiw_rx_create(qp);
	if (rv)
		goto err_wire;

	rv = xiw_fault(XIW_FAULT_QP_ID) ? -ENOMEM :
		xa_alloc_cyclic(&xdev->qp_xa, &id, qp, XIW_ID_LIMIT,
				&xdev->qp_next, GFP_KERNEL);
	if (rv < 0)
		goto err_wire;
	ibqp->qp_num = id;

	if (udata) {
		resp.qp_id = id;
		resp.num_sqe = qp->sq.num;
		resp.num_rqe = qp->rq.num;
		rv = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (rv)
			goto err_id;
	}
	xiw_tx_own_pages_hold();
	return 0;

err_id:
	xa_erase(&xdev->qp_xa, id);
err_wire:
	xiw_rx_destroy(qp);
	xiw_tx_destroy(qp);
	kfree(qp->wire.orq);
	kfree(qp->wire.irq);
	kvfree(qp->sq_pend);
	if (qp->rq.mem)
		xiw_ring_free(&qp->rq);
err_sq:
	xiw_ring_free(&qp->sq);
err_count:
	atomic_dec(&xdev->num_qp);
	return rv;
}

void xiw_qp_get(struct xiw_qp *qp)
{
	refcount_inc(&qp->ref);
}

void xiw_qp_put(struct xiw_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

void xiw_qp_add_ref(struct ib_qp *ibqp)
{
	xiw_qp_get(to_xqp(ibqp));
}

void xiw_qp_rem_ref(struct ib_qp *ibqp)
{
	xiw_qp_put(to_xqp(ibqp));
}

/* For the iWARP CM, which takes its own reference with iw_add_ref. */
struct ib_qp *xiw_get_qp(struct ib_device *ibdev, int qpn)
{
	struct xiw_qp *qp = xa_load(&to_xdev(ibdev)->qp_xa, qpn);

	return qp ? &qp->ibqp : NULL;
}

int xiw_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct xiw_qp *qp = to_xqp(ibqp);
	struct xiw_conn *conn = NULL;

	xa_erase(&qp->xdev->qp_xa, ibqp->qp_num);
	/*
	 * The CM and a connection may still hold references; they let go
	 * once the connection is closed. Entering ERR aborts it, here and
	 * now, so what is left to wait for is the iw_cm's reference.
	 */
	mutex_lock(&qp->state_lock);
	if (qp->state != IB_QPS_ERR && qp->state != IB_QPS_RESET)
		conn = xiw_qp_verb_set_state(qp, IB_QPS_ERR);
	mutex_unlock(&qp->state_lock);
	xiw_qp_closing_finish(qp, conn);
	xiw_qp_put(qp);
	wait_for_completion(&qp->released);
	xiw_rx_destroy(qp);
	xiw_tx_destroy(qp);
	kfree(qp->wire.orq);
	kfree(qp->wire.irq);
	kvfree(qp->sq_pend);
	if (qp->rq.mem)
		xiw_ring_free(&qp->rq);
	xiw_ring_free(&qp->sq);
	atomic_dec(&qp->xdev->num_qp);
	xiw_tx_own_pages_release();
	return 0;
}

int xiw_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init)
{
	struct xiw_qp *qp = to_xqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	mutex_lock(&qp->state_lock);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->qp_access_flags = qp->access;
	attr->max_rd_atomic = qp->ord;
	attr->max_dest_rd_atomic = qp->ird;
	mutex_unlock(&qp->state_lock);
	attr->cap = qp->cap;
	attr->port_num = 1;
	attr->path_mtu = ib_mtu_int_to_enum(READ_ONCE(qp->xdev->netdev->mtu));

	init->qp_type = IB_QPT_RC;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = qp->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}
