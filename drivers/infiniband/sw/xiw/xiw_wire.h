/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The iWARP wire format: MPA start-up frames (RFC 5044 section 7.1,
 * RFC 6581 section 6 and 9), FPDU framing (RFC 5044 section 4), DDP
 * headers (RFC 5041 section 4) and RDMAP headers (RFC 5040 section 4).
 * Every multi-byte field is big-endian on the wire, except the MPA CRC,
 * which travels as the little-endian form of the CRC32c value.
 */
#ifndef XIW_WIRE_H
#define XIW_WIRE_H

#include <linux/types.h>

/* MPA start-up (MPA-01, E-01) */
#define MPA_KEY_LEN		16
#define MPA_KEY_REQ		"MPA ID Req Frame"
#define MPA_KEY_REP		"MPA ID Rep Frame"
#define MPA_MAX_PD		512	/* RFC 5044 section 7.1 */

#define MPA_FLAG_M		0x80	/* markers wanted */
#define MPA_FLAG_C		0x40	/* CRC wanted */
#define MPA_FLAG_R		0x20	/* reject (reply only) */
#define MPA_FLAG_S		0x10	/* RFC 6581 data leads the PD */

struct mpa_frame {
	u8 key[MPA_KEY_LEN];
	u8 flags;
	u8 rev;
	__be16 pd_len;
} __packed;

/* RFC 6581 section 9: |A|B| IRD(14) |C|D| ORD(14) */
#define MPA_V2_P2P		0x8000	/* A, in the IRD word */
#define MPA_V2_RTR_SEND		0x4000	/* B, in the IRD word */
#define MPA_V2_RTR_WRITE	0x8000	/* C, in the ORD word */
#define MPA_V2_RTR_READ		0x4000	/* D, in the ORD word */
#define MPA_V2_DEPTH		0x3fff
#define MPA_V2_NO_NEGOTIATE	0x3fff	/* E-05 */

struct mpa_v2_data {
	__be16 ird;
	__be16 ord;
} __packed;

/*
 * FPDU (MPA-20): ULPDU_Length, the ULPDU (a DDP segment), zero padding
 * to a multiple of four, CRC32c. Bytes around the ULPDU: 2 before, at
 * most 3 + 4 after.
 */
#define MPA_HDR_LEN		2
#define MPA_CRC_LEN		4
#define MPA_MIN_MULPDU		128	/* MPA-23 */

/*
 * Markers (RFC 5044 sections 4.2, 4.3; MPA-30/31): four bytes at every
 * 512th byte of one direction's stream, counted from the first byte of
 * full operation. FPDUPTR is the distance back from the marker to the
 * ULPDU_Length field of the FPDU holding it, 0 for a marker just before
 * an FPDU (which then belongs to that FPDU, CRC included).
 */
#define MPA_MARKER_LEN		4
#define MPA_MARKER_INTERVAL	512

struct mpa_marker {
	__be16 rsvd;		/* zero on transmit, ignored on receive */
	__be16 fpduptr;		/* low two bits treated as zero */
} __packed;

/* DDP control byte (DDP-01) and the RDMAP control byte after it. */
#define DDP_FLAG_TAGGED		0x80
#define DDP_FLAG_LAST		0x40
#define DDP_VERSION		0x01
#define DDP_VERSION_MASK	0x03
#define RDMAP_VERSION		0x40
#define RDMAP_VERSION_MASK	0xc0
#define RDMAP_OPCODE_MASK	0x0f

enum rdmap_opcode {
	RDMAP_WRITE = 0,
	RDMAP_READ_REQ = 1,
	RDMAP_READ_RESP = 2,
	RDMAP_SEND = 3,
	RDMAP_SEND_INV = 4,
	RDMAP_SEND_SE = 5,
	RDMAP_SEND_SE_INV = 6,
	RDMAP_TERMINATE = 7,
	RDMAP_IMMDT = 8,	/* RFC 7306 Immediate Data */
	RDMAP_IMMDT_SE = 9,
	RDMAP_ATOMIC_REQ = 10,	/* RFC 7306 section 5.2 */
	RDMAP_ATOMIC_RESP = 11,
};

/* Untagged queues (DDP-04) */
enum ddp_queue {
	DDP_QN_SEND = 0,
	DDP_QN_READ_REQ = 1,
	DDP_QN_TERMINATE = 2,
	DDP_QN_ATOMIC_RESP = 3,	/* RFC 7306 section 5.2.2 */
	DDP_NUM_QN = 4,
};

/* What every FPDU starts with: MPA length, DDP and RDMAP control. */
struct iwarp_ctrl {
	__be16 mpa_len;
	u8 ddp;
	u8 rdmap;
} __packed;

/* DDP-02 */
struct iwarp_tagged {
	struct iwarp_ctrl ctrl;
	__be32 stag;
	__be64 to;
} __packed;

/* DDP-03; 'inval' is RDMAP's use of the 32 reserved bits. */
struct iwarp_untagged {
	struct iwarp_ctrl ctrl;
	__be32 inval;
	__be32 qn;
	__be32 msn;
	__be32 mo;
} __packed;

/* RFC 5040 section 4.4 */
struct iwarp_read_req {
	struct iwarp_untagged hdr;
	__be32 sink_stag;
	__be64 sink_to;
	__be32 size;
	__be32 src_stag;
	__be64 src_to;
} __packed;

/* RFC 7306 section 6: an Immediate Data message carries 8 bytes. */
#define RDMAP_IMMDT_LEN		8

/*
 * RFC 7306 section 5.2.1: the Atomic Request header, after an untagged
 * DDP header on QN 1 (DDP's payload: one segment of 52 bytes). The top
 * 28 bits of 'aopcode' are reserved: zero on transmit, ignored. The
 * AOpCodes are in xiw_atomic.h.
 */
struct rdmap_atomic_req {
	__be32 aopcode;
	__be32 req_id;
	__be32 stag;
	__be64 to;
	__be64 add_swap;
	__be64 add_swap_mask;
	__be64 compare;
	__be64 compare_mask;
} __packed;

/* RFC 7306 section 5.2.2, Figure 6: the Atomic Response, 12 bytes on QN 3. */
struct rdmap_atomic_resp {
	__be32 req_id;
	__be64 value;
} __packed;

/* RFC 5040 section 4.8: layer(4) etype(4) code(8) M D R, 13 reserved */
#define TERM_FLAG_M		0x8000	/* segment length valid */
#define TERM_FLAG_D		0x4000	/* DDP header included */
#define TERM_FLAG_R		0x2000	/* Read Request header included */

struct iwarp_terminate {
	struct iwarp_untagged hdr;
	u8 layer_etype;
	u8 ecode;
	__be16 flags;
	__be16 seg_len;
	/* then the terminated DDP header and the Read Request, if any */
} __packed;

/* Terminate layers and error types (TERM-04), as layer << 4 | etype */
#define TERM_RDMAP_LOCAL	0x00
#define TERM_RDMAP_PROT		0x01
#define TERM_RDMAP_OP		0x02
#define TERM_DDP_TAGGED		0x11
#define TERM_DDP_UNTAGGED	0x12
#define TERM_LLP_MPA		0x20

/* RFC 6581 section 8: the MPA error codes of an enhanced start-up */
#define MPA_TERM_LOCAL_CATASTROPHIC	0x05	/* E-08 */
#define MPA_TERM_IRD_SHORT		0x06	/* E-04 */
#define MPA_TERM_NO_RTR			0x07	/* E-06 */

/* Largest header an FPDU can start with, and a Terminate's largest. */
#define IWARP_MAX_HDR		sizeof(struct iwarp_read_req)
#define IWARP_TERM_MAX		(sizeof(struct iwarp_terminate) + \
				 sizeof(struct iwarp_read_req))

#endif /* XIW_WIRE_H */
