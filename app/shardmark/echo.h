/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_APP_ECHO_H
#define SM_APP_ECHO_H

#include <stdint.h>

#include "sm_net.h"

/*
 * The length-prefixed echo service: a request is a 4-byte big-endian length
 * N and N bytes; the reply is the identical frame. Requests may be
 * pipelined. A length above the limit gets the error frame 0xFFFFFFFF, a
 * 4-byte big-endian message length and a UTF-8 message, then the server
 * closes the connection.
 */

#define SM_ECHO_ERROR_MARK 0xFFFFFFFFu

struct sm_echo_service {
	uint32_t max_frame; /* largest payload accepted */
};

/* Protocol ops for sm_net_listen(); the listen ctx is a sm_echo_service. */
extern const struct sm_proto_ops sm_echo_proto;

/* Free the calling shard's echo state; after its connections are closed. */
void
sm_echo_shard_fini(void);

#endif /* SM_APP_ECHO_H */
