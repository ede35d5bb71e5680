/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_TCPIP_H
#define SM_TCPIP_H

/*
 * lib/tcpip: a per-shard userspace Ethernet / ARP / IPv4 / ICMP echo / TCP
 * stack. One struct sm_tcpip per shard and no global state, no locks, no
 * clocks and no randomness of its own: frames come in through
 * sm_tcpip_input(), go out through the caller's tx callback, and the caller
 * supplies the time (nanoseconds, any monotonic origin) on every call. The
 * same packets and times always give the same output, so the stack is
 * tested byte by byte from packet vectors and back to back in memory.
 *
 * Frames are contiguous Ethernet II frames without the FCS and without VLAN
 * tags. A frame passed to tx() is only valid during the call (the stack
 * reuses one transmit buffer), so the driver copies it or sends it at once.
 *
 * Receive is zero-copy when the driver can keep frames alive: it inputs a
 * frame with sm_tcpip_input_ref() and a reference of its own (an mbuf), and
 * in-order payload that finds nothing undelivered before it goes to
 * recv_ref() as a view of that frame instead of through the connection's
 * receive ring. Only out-of-order data, and data behind it, is copied.
 *
 * Addresses and ports in this API are in host byte order.
 *
 * Callbacks run from inside sm_tcpip_input(), sm_tcpip_poll() and the TCP
 * calls; they may call back into the stack (send, consume, close, abort,
 * connect) for any connection.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sm_tcpip;
struct sm_tcp_conn;

/* The NIC verified IPv4 header and TCP/ICMP checksums of received frames. */
#define SM_TCPIP_OFFLOAD_RX_CSUM (1u << 0)
/*
 * The NIC fills in checksums on transmit: the stack leaves the IPv4 header
 * checksum 0 and puts the pseudo-header sum in the TCP checksum field, as
 * DPDK's RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM expect.
 */
#define SM_TCPIP_OFFLOAD_TX_CSUM (1u << 1)

/*
 * Events of the stack. @ctx is sm_tcpip_config.ctx. Every callback but tx
 * may be NULL.
 */
struct sm_tcpip_ops {
	/* Transmit one frame; <0 counts as a lost frame (TCP retransmits). */
	int (*tx)(void *ctx, const void *frame, size_t len);
	/*
	 * A passive open completed (three-way handshake done) on a listening
	 * port. Return 0 to keep the connection (set its user pointer with
	 * sm_tcp_set_user()), or <0 to refuse it (the stack resets it).
	 */
	int (*accepted)(void *ctx, struct sm_tcp_conn *c);
	/*
	 * An active open finished: @err is 0 (established), -ECONNREFUSED
	 * (the peer reset the SYN) or -ETIMEDOUT. After an error the
	 * connection is gone when this returns.
	 */
	void (*connected)(void *ctx, struct sm_tcp_conn *c, int err);
	/*
	 * In-order bytes arrived. @data is a view into the connection's
	 * receive buffer, valid until the application consumes those bytes
	 * with sm_tcp_consume() (or the connection is closed); unconsumed
	 * bytes shrink the advertised window. A wrapping range comes as two
	 * calls. @len == 0 means the peer sent FIN: no more data will come.
	 */
	void (*recv)(void *ctx, struct sm_tcp_conn *c, const void *data, size_t len);
	/*
	 * Optional zero-copy delivery: in-order bytes at @data inside the
	 * frame that sm_tcpip_input_ref() is processing, whose caller passed
	 * @ref. To keep the bytes past the call, take a reference on @ref
	 * (the stack does not). Otherwise exactly like recv() with len > 0:
	 * the bytes count against the receive window until sm_tcp_consume(),
	 * and recv() and recv_ref() calls together deliver the stream in order.
	 */
	void (*recv_ref)(void *ctx, struct sm_tcp_conn *c, const void *data, size_t len, void *ref);
	/* Send-buffer space freed after an sm_tcp_send() accepted less than asked. */
	void (*writable)(void *ctx, struct sm_tcp_conn *c);
	/*
	 * The connection is finished for the application: 0 after an orderly
	 * close of both directions (the stack may still hold it in
	 * TIME_WAIT, invisibly), -ECONNRESET when the peer reset it,
	 * -ETIMEDOUT when retransmissions gave up. @c is invalid once this
	 * returns. Not called for sm_tcp_abort() nor after a failed connect.
	 */
	void (*closed)(void *ctx, struct sm_tcp_conn *c, int err);
};

struct sm_tcpip_config {
	uint8_t mac[6];
	uint32_t ip, netmask, gateway; /* gateway 0: no route off the subnet */
	uint16_t mtu;		       /* IP MTU, 0 = 1500; at least 576 */
	unsigned offloads;	       /* SM_TCPIP_OFFLOAD_* */
	const struct sm_tcpip_ops *ops;
	void *ctx;
	/*
	 * Per-stack secret for RFC 6528 initial sequence numbers, ephemeral
	 * ports and connection-table hashing; the caller seeds it (e.g. from
	 * getrandom()), so tests are reproducible.
	 */
	uint8_t secret[16];
	/* Limits and timers; 0 takes the default in brackets. */
	unsigned max_conns;	   /* connections incl. SYN_RCVD, TIME_WAIT [4096] */
	unsigned syn_backlog;	   /* SYN_RCVD per listener [128] */
	uint32_t snd_buf, rcv_buf; /* bytes per connection, power of two [128 KiB] */
	uint64_t rto_min_ns;	   /* RFC 6298 lower bound [1 s] */
	uint64_t rto_max_ns;	   /* [60 s] */
	uint64_t rto_init_ns;	   /* before the first RTT sample [1 s] */
	uint64_t delack_ns;	   /* delayed-ACK timeout [40 ms] */
	uint64_t time_wait_ns;	   /* 2 MSL [60 s] */
	unsigned max_retries;	   /* RTO expiries before giving up [12] */
	unsigned syn_retries;	   /* SYN / SYN-ACK retransmissions [5] */
};

/* Counters; plain fields, read them with sm_tcpip_stats(). */
struct sm_tcpip_stats {
	uint64_t rx_frames, tx_frames, tx_errors;
	uint64_t rx_drop_eth, rx_drop_ip, rx_bad_csum, rx_frags;
	uint64_t arp_requests_sent, arp_replies_sent, arp_pending_dropped;
	uint64_t icmp_echo_replies;
	uint64_t tcp_segs_in, tcp_segs_out, tcp_rst_sent, tcp_rst_rcvd;
	uint64_t tcp_retransmits, tcp_fast_retransmits, tcp_timeouts;
	uint64_t tcp_challenge_acks, tcp_ooo_segs, tcp_dup_segs;
	uint64_t tcp_window_probes, tcp_syn_dropped, tcp_delayed_acks;
	uint64_t tcp_passive_opens, tcp_active_opens, tcp_conns;
	uint64_t tcp_rx_zerocopy_bytes; /* payload delivered by recv_ref() */
};

/*
 * Create a stack for one shard from @cfg (copied). Returns 0 and sets
 * *@out, -EINVAL for a bad configuration (mtu below 576 or above 9000,
 * buffers not powers of two, no tx callback), -ENOMEM.
 */
int
sm_tcpip_create(const struct sm_tcpip_config *cfg, struct sm_tcpip **out);

/* Free the stack and every connection, without sending anything or calling back. */
void
sm_tcpip_destroy(struct sm_tcpip *s);

/*
 * Process one received frame at time @now_ns. Frames not for us, malformed
 * frames and bad checksums are dropped and counted; nothing here fails.
 */
void
sm_tcpip_input(struct sm_tcpip *s, const void *frame, size_t len, uint64_t now_ns);

/*
 * sm_tcpip_input() for a frame the caller can keep alive: @ref (not NULL)
 * names it, and in-order TCP payload may be delivered through recv_ref()
 * as a view into @frame with @ref, uncopied.
 */
void
sm_tcpip_input_ref(struct sm_tcpip *s, const void *frame, size_t len, uint64_t now_ns, void *ref);

/* Run the timers due at @now_ns: retransmission, delayed ACK, persist, TIME_WAIT, ARP. */
void
sm_tcpip_poll(struct sm_tcpip *s, uint64_t now_ns);

/* The earliest time sm_tcpip_poll() has work, UINT64_MAX when no timer is armed. */
uint64_t
sm_tcpip_next_timer(const struct sm_tcpip *s);

void
sm_tcpip_stats(const struct sm_tcpip *s, struct sm_tcpip_stats *out);

/* Add or replace a permanent ARP entry (static neighbours, tests). */
int
sm_tcpip_arp_add(struct sm_tcpip *s, uint32_t ip, const uint8_t mac[6]);

/* Copy the cached MAC of @ip into @mac; false when not resolved. */
bool
sm_tcpip_arp_lookup(const struct sm_tcpip *s, uint32_t ip, uint8_t mac[6]);

/*
 * Accept connections on @port. Returns 0, -EADDRINUSE when already
 * listening, -ENOSPC past the listener table.
 */
int
sm_tcp_listen(struct sm_tcpip *s, uint16_t port);

/* Stop accepting on @port; established connections stay. */
int
sm_tcp_unlisten(struct sm_tcpip *s, uint16_t port);

/*
 * Open a connection to @ip:@port from local port @sport (0 picks an
 * ephemeral port) at time @now_ns, with @user as its user pointer. Sets
 * *@out; the outcome comes through the connected callback. Returns 0,
 * -EADDRINUSE (the 4-tuple exists), -EADDRNOTAVAIL (no free port),
 * -ENETUNREACH (off-subnet without a gateway), -ENOMEM, -ENFILE
 * (max_conns).
 */
int
sm_tcp_connect(struct sm_tcpip *s, uint32_t ip, uint16_t port, uint16_t sport, void *user,
	       uint64_t now_ns, struct sm_tcp_conn **out);

/*
 * Copy up to @len bytes of @data into the send buffer and transmit what
 * the windows allow. Returns the bytes accepted (0 when the buffer is full;
 * the writable callback follows when space frees), -ENOTCONN before
 * establishment or after close, -EPIPE after sm_tcp_close().
 */
long
sm_tcp_send(struct sm_tcp_conn *c, const void *data, size_t len, uint64_t now_ns);

/*
 * The application is done with the next @len delivered bytes; their
 * buffer space returns to the receive window, and a window update goes out
 * when the window grew enough to matter (receiver-side silly-window
 * avoidance, RFC 1122 4.2.3.3).
 */
void
sm_tcp_consume(struct sm_tcp_conn *c, size_t len, uint64_t now_ns);

/*
 * Orderly close: send FIN after the buffered data. Received data is still
 * delivered (and consumed automatically) until the peer's FIN; the closed
 * callback follows. Returns 0 or -ENOTCONN when already closing.
 */
int
sm_tcp_close(struct sm_tcp_conn *c, uint64_t now_ns);

/* Send RST and free the connection now; no callback. @c is invalid afterwards. */
void
sm_tcp_abort(struct sm_tcp_conn *c, uint64_t now_ns);

void
sm_tcp_set_user(struct sm_tcp_conn *c, void *user);
void *
sm_tcp_user(const struct sm_tcp_conn *c);

/* Bytes that sm_tcp_send() would accept now. */
size_t
sm_tcp_send_space(const struct sm_tcp_conn *c);

/* Delivered but not yet consumed bytes. */
size_t
sm_tcp_unconsumed(const struct sm_tcp_conn *c);

/* Addresses of @c (host order); any pointer may be NULL. */
void
sm_tcp_tuple(const struct sm_tcp_conn *c, uint32_t *lip, uint16_t *lport, uint32_t *rip,
	     uint16_t *rport);

/* The RFC 9293 state name of @c ("ESTABLISHED", "TIME_WAIT", ...). */
const char *
sm_tcp_state_name(const struct sm_tcp_conn *c);

/*
 * Internet checksum helpers (RFC 1071), exported for drivers and tests.
 * sm_inet_csum_partial() adds @buf to a running 64-bit sum (any alignment
 * and length); sm_inet_csum_fold() folds it and returns the one's
 * complement in the same byte order as the data, ready to memcpy() into
 * a header.
 */
uint64_t
sm_inet_csum_partial(const void *buf, size_t len, uint64_t sum);
uint16_t
sm_inet_csum_fold(uint64_t sum);
/* The checksum of @buf[0..len) as it is stored in a header (network order in memory). */
uint16_t
sm_inet_csum(const void *buf, size_t len);

#endif /* SM_TCPIP_H */
