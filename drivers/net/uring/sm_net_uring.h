/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_NET_URING_H
#define SM_NET_URING_H

/*
 * The io_uring network driver: kernel sockets driven through one io_uring
 * per shard. Registers itself under the name "uring".
 */
int
sm_net_uring_register(void);

#endif /* SM_NET_URING_H */
