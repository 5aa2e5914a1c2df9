/*
 * token: the API's bearer tokens as strings (GnuTLS for randomness and
 * the keyed hash): making one, its public prefix, its hash, comparing
 * hashes in constant time, and token files (one token, mode 0600).
 *
 * A token reads "bd_PPPPPPPP_SSSS...": "bd_", a prefix of 8 hex digits
 * that names it (public: lists, logs), "_", and a secret of 32 hex digits
 * (128 random bits). The store keeps HMAC-SHA256(key, token), never it.
 */
#ifndef BISECT_TOKEN_H
#define BISECT_TOKEN_H

#include <stddef.h>

#define TOKEN_PREFIX_LEN 8
#define TOKEN_SECRET_LEN 32
#define TOKEN_LEN (3 + TOKEN_PREFIX_LEN + 1 + TOKEN_SECRET_LEN)
#define TOKEN_HASH_LEN 64       /* hex of 32 bytes */
#define TOKEN_KEY_LEN 32        /* bytes of the server's key */

/* A fresh random token into out (TOKEN_LEN + 1 bytes). ERR_FAIL when GnuTLS has no randomness. */
int token_generate(char *out);
/*
 * Checks that s has the form above and copies its prefix into prefix
 * (TOKEN_PREFIX_LEN + 1 bytes). ERR_INVALID (message set) otherwise.
 */
int token_parse(char *prefix, const char *s);
/* HMAC-SHA256 of token with key (keylen bytes), as hex into out (TOKEN_HASH_LEN + 1 bytes). */
int token_hash(char *out, const unsigned char *key, size_t keylen, const char *token);
/* 1 when a and b (n bytes each) are equal; the time taken does not depend on where they differ. */
int token_equal(const void *a, const void *b, size_t n);
/* Fills key with TOKEN_KEY_LEN random bytes. */
int token_random(unsigned char *key, size_t len);

/*
 * Reads a token file: its first line, blanks around it trimmed, into
 * *out (caller frees). ERR_NOTFOUND when the file does not exist,
 * ERR_INVALID when it holds no token, ERR_FAIL when it cannot be read.
 */
int token_read_file(char **out, const char *path);
/* Writes data to path atomically with mode 0600 (owner only). */
int token_write_file(const char *path, const void *data, size_t len);

#endif
