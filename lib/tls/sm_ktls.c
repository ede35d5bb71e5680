/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A TLS session's write state in the form Linux's kernel TLS takes it
 * (Documentation/networking/tls.rst; include/uapi/linux/tls.h).
 */

#include <errno.h>
#include <string.h>

#include <linux/tls.h>

#include "tls_priv.h"

int
sm_ktls_info_make(struct sm_ktls_info *out, bool tls13, int cipher, const uint8_t *key,
		  size_t keylen, const uint8_t *iv, size_t ivlen, const uint8_t seq[8])
{
	uint16_t version = tls13 ? TLS_1_3_VERSION : TLS_1_2_VERSION;

	memset(out, 0, sizeof(*out));
	if ((cipher == 128 || cipher == 256) && keylen == (size_t)cipher / 8) {
		/* The two GCM layouts differ only in the key's length. */
		struct tls12_crypto_info_aes_gcm_256 g;
		unsigned char *k = g.key, *salt, *piv, *rec;
		size_t sz;

		if (cipher == 128) {
			struct tls12_crypto_info_aes_gcm_128 *g128 = (void *)&g;

			piv = g128->iv;
			k = g128->key;
			salt = g128->salt;
			rec = g128->rec_seq;
			sz = sizeof(*g128);
			g128->info.version = version;
			g128->info.cipher_type = TLS_CIPHER_AES_GCM_128;
		} else {
			piv = g.iv;
			salt = g.salt;
			rec = g.rec_seq;
			sz = sizeof(g);
			g.info.version = version;
			g.info.cipher_type = TLS_CIPHER_AES_GCM_256;
		}
		if (tls13 ? ivlen != 12 : ivlen < 4)
			return -ENOTSUP;
		memcpy(k, key, keylen);
		memcpy(salt, iv, 4);
		/* TLS 1.3: the rest of the static IV; 1.2: the explicit nonce is the sequence. */
		memcpy(piv, tls13 ? iv + 4 : seq, 8);
		memcpy(rec, seq, 8);
		memcpy(out->bytes, &g, sz);
		out->len = (unsigned)sz;
		return 0;
	}
	if (cipher == 20 && keylen == 32 && ivlen == 12) {
		struct tls12_crypto_info_chacha20_poly1305 c;

		memset(&c, 0, sizeof(c));
		c.info.version = version;
		c.info.cipher_type = TLS_CIPHER_CHACHA20_POLY1305;
		memcpy(c.key, key, 32);
		memcpy(c.iv, iv, 12);
		memcpy(c.rec_seq, seq, 8);
		memcpy(out->bytes, &c, sizeof(c));
		out->len = sizeof(c);
		return 0;
	}
	return -ENOTSUP;
}
