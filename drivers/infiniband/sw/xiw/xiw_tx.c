// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Transmit path (placeholder until the wire lands).
 */
#include "xiw.h"

void xiw_tx_kick(struct xiw_qp *qp)
{
}
