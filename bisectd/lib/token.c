/* token: making, hashing and comparing API tokens (GnuTLS), and token files. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "err.h"
#include "token.h"
#include "util.h"

static void hex(char *out, const unsigned char *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

int token_random(unsigned char *key, size_t len)
{
	if (gnutls_rnd(GNUTLS_RND_KEY, key, len) < 0)
		return err_set(ERR_FAIL, "GnuTLS could not make random bytes");
	return 0;
}

int token_generate(char *out)
{
	unsigned char b[TOKEN_PREFIX_LEN / 2 + TOKEN_SECRET_LEN / 2];
	int rc;

	if ((rc = token_random(b, sizeof(b))))
		return rc;
	memcpy(out, "bd_", 3);
	hex(out + 3, b, TOKEN_PREFIX_LEN / 2);
	out[3 + TOKEN_PREFIX_LEN] = '_';
	hex(out + 4 + TOKEN_PREFIX_LEN, b + TOKEN_PREFIX_LEN / 2, TOKEN_SECRET_LEN / 2);
	gnutls_memset(b, 0, sizeof(b));
	return 0;
}

static int all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
			return 0;
	return 1;
}

int token_parse(char *prefix, const char *s)
{
	prefix[0] = '\0';
	if (strlen(s) != TOKEN_LEN || strncmp(s, "bd_", 3) || s[3 + TOKEN_PREFIX_LEN] != '_' ||
	    !all_hex(s + 3, TOKEN_PREFIX_LEN) || !all_hex(s + 4 + TOKEN_PREFIX_LEN, TOKEN_SECRET_LEN))
		return err_set(ERR_INVALID, "not a bisectd token (they read bd_ + 8 hex digits + _ + 32 hex digits)");
	memcpy(prefix, s + 3, TOKEN_PREFIX_LEN);
	prefix[TOKEN_PREFIX_LEN] = '\0';
	return 0;
}

int token_hash(char *out, const unsigned char *key, size_t keylen, const char *token)
{
	unsigned char mac[32];

	if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, key, keylen, token, strlen(token), mac) < 0)
		return err_set(ERR_FAIL, "GnuTLS could not compute an HMAC-SHA256");
	hex(out, mac, sizeof(mac));
	return 0;
}

int token_equal(const void *a, const void *b, size_t n)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(x[i] ^ y[i]);
	return d == 0;
}

int token_read_file(char **out, const char *path)
{
	char *text = NULL, *p, *end;
	size_t len;
	int rc;

	*out = NULL;
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return err_set(ERR_NOTFOUND, "token file %s does not exist", path);
	if ((rc = file_read(&text, &len, path, 4096)) < 0)
		return rc;
	for (p = text; *p && isspace((unsigned char)*p); p++)
		;
	for (end = p; *end && !isspace((unsigned char)*end); end++)
		;
	if (end == p) {
		free(text);
		return err_set(ERR_INVALID, "token file %s is empty", path);
	}
	*out = xstrndup(p, (size_t)(end - p));
	free(text);
	return 0;
}

int token_write_file(const char *path, const void *data, size_t len)
{
	return file_write_atomic_mode(path, data, len, 0600);
}
