/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Queue pairs: what xiw_qp.c, xiw_qp_state.c and xiw_qp_post.c share.
 */
#ifndef XIW_QP_H
#define XIW_QP_H

#include "xiw.h"

/* xiw_qp_state.c */
void xiw_sq_drain(struct xiw_qp *qp, bool complete);
void xiw_rq_drain(struct xiw_qp *qp, bool complete);
bool xiw_qp_flush_posts(const struct xiw_qp *qp);
void xiw_qp_set_state(struct xiw_qp *qp, enum ib_qp_state state);
struct xiw_conn *xiw_qp_verb_set_state(struct xiw_qp *qp,
				       enum ib_qp_state state);
void xiw_qp_closing_finish(struct xiw_qp *qp, struct xiw_conn *conn);
void xiw_qp_err_work(struct work_struct *work);

#endif /* XIW_QP_H */
