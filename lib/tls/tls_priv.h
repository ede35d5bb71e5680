/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_TLS_PRIV_H
#define SM_TLS_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Linux's struct tls12_crypto_info_* for one direction, as bytes for setsockopt. */
struct sm_ktls_info {
	unsigned char bytes[64];
	unsigned len;
};

/*
 * The kernel's crypto info for a session's one direction: @cipher is 128
 * (AES-128-GCM), 256 (AES-256-GCM) or 20 (ChaCha20-Poly1305); @key, @iv and
 * @seq as gnutls_record_get_state() gives them (TLS 1.2 GCM: a 4-byte
 * implicit IV, the sequence number is the explicit nonce; TLS 1.3 and
 * ChaCha20: the 12-byte IV). Returns 0, or -ENOTSUP for another cipher or
 * key size.
 */
int
sm_ktls_info_make(struct sm_ktls_info *out, bool tls13, int cipher, const uint8_t *key,
		  size_t keylen, const uint8_t *iv, size_t ivlen, const uint8_t seq[8]);

#endif /* SM_TLS_PRIV_H */
