/*
 * yamltree: YAML text (libyaml) as a small tree of scalars, sequences and
 * mappings, each node keeping its 1-based line and column, so that the
 * config reader can point at the exact place of a mistake.
 *
 * Only what a config file needs: one document, scalar mapping keys, no
 * anchors or aliases, no duplicate keys.
 */
#ifndef BISECT_YAMLTREE_H
#define BISECT_YAMLTREE_H

#include <stddef.h>

enum ynode_kind { YNODE_SCALAR, YNODE_SEQ, YNODE_MAP };

struct ynode {
	enum ynode_kind kind;
	int line, col;          /* 1-based position of the node's first character */
	/* YNODE_SCALAR */
	char *str;              /* NUL-terminated text */
	size_t len;
	int plain;              /* 1 when written without quotes (so "~" is a string, ~ is null) */
	/* YNODE_SEQ: items; YNODE_MAP: values in file order, keys[i] is the key of items[i] */
	struct ynode **items;
	struct ynode **keys;    /* YNODE_MAP only; every key is a scalar */
	size_t nr;
};

/*
 * Parses text (len bytes, need not be NUL-terminated) into *root, owned by
 * the caller (ynode_free). An empty document gives *root == NULL. On error
 * *root is NULL and the ERR_INVALID message is "NAME:LINE:COL: problem".
 */
int ytree_parse(struct ynode **root, const char *name, const char *text, size_t len);
void ynode_free(struct ynode *n);

/* The value of key in a mapping; NULL when absent or n is not a mapping. Borrowed. */
struct ynode *ynode_get(const struct ynode *n, const char *key);
/* 1 for a plain scalar that YAML reads as null: "", "~", "null", "Null", "NULL". */
int ynode_is_null(const struct ynode *n);
/* "a scalar", "a sequence", "a mapping": for messages. */
const char *ynode_kind_name(enum ynode_kind kind);

#endif
