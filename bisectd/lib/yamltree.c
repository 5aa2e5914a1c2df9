/*
 * yamltree: libyaml's event stream folded into a tree of positioned nodes.
 * libyaml's errors are translated here, once, into "NAME:LINE:COL: ...".
 */
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "err.h"
#include "util.h"
#include "yamltree.h"

/* A config is a few levels deep; the bound keeps a hostile file off the stack. */
#define MAX_DEPTH 64

struct builder {
	yaml_parser_t parser;
	const char *name;
	const char *text;
	size_t len;
};

/* libyaml marks are 0-based; people count from 1. */
static int mark_line(const yaml_mark_t *m)
{
	return (int)m->line + 1;
}

static int mark_col(const yaml_mark_t *m)
{
	return (int)m->column + 1;
}

/* Reader errors carry a byte offset only: turn it into a line and column. */
static void offset_pos(int *line, int *col, const struct builder *b, size_t off)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < b->len; i++) {
		if (b->text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)b->text[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

static int parser_error(struct builder *b)
{
	const yaml_parser_t *p = &b->parser;
	const char *problem = p->problem ? p->problem : "malformed YAML";
	int line, col;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return err_set(ERR_FAIL, "%s: out of memory while parsing YAML", b->name);
	case YAML_READER_ERROR:
		offset_pos(&line, &col, b, p->problem_offset);
		if (p->problem_value != -1)
			return err_set(ERR_INVALID, "%s:%d:%d: %s (byte 0x%02x)", b->name, line, col,
				       problem, (unsigned)p->problem_value & 0xff);
		return err_set(ERR_INVALID, "%s:%d:%d: %s", b->name, line, col, problem);
	default:
		break;
	}
	if (p->context)
		return err_set(ERR_INVALID, "%s:%d:%d: %s (%s at line %d column %d)", b->name,
			       mark_line(&p->problem_mark), mark_col(&p->problem_mark), problem,
			       p->context, mark_line(&p->context_mark), mark_col(&p->context_mark));
	return err_set(ERR_INVALID, "%s:%d:%d: %s", b->name, mark_line(&p->problem_mark),
		       mark_col(&p->problem_mark), problem);
}

static int next_event(struct builder *b, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&b->parser, ev))
		return parser_error(b);
	return 0;
}

static int error_at(const struct builder *b, const yaml_event_t *ev, const char *what)
{
	return err_set(ERR_INVALID, "%s:%d:%d: %s", b->name, mark_line(&ev->start_mark),
		       mark_col(&ev->start_mark), what);
}

static struct ynode *ynode_new(enum ynode_kind kind, const yaml_event_t *ev)
{
	struct ynode *n = xcalloc(1, sizeof(*n));

	n->kind = kind;
	n->line = mark_line(&ev->start_mark);
	n->col = mark_col(&ev->start_mark);
	return n;
}

static void push(struct ynode ***v, size_t nr, struct ynode *n)
{
	/* Grows at powers of two: nr is the count before this push. */
	if ((nr & (nr - 1)) == 0)
		*v = xrealloc(*v, (nr ? 2 * nr : 1) * sizeof(**v));
	(*v)[nr] = n;
}

/*
 * The keys of a mapping being built, hashed, so that the duplicate check
 * costs O(1) a key rather than a scan of the keys before it (a config of
 * 50k keys took seconds). slot[i] is 1 + the key's index in map->keys, 0
 * when empty; open addressing, linear probing, at most half full.
 */
struct keyset {
	size_t *slot;
	size_t cap;             /* a power of two, or 0 */
};

static size_t key_hash(const char *s, size_t len)
{
	size_t h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* The key of map equal to s, or NULL. */
static const struct ynode *keyset_find(const struct keyset *ks, const struct ynode *map,
				       const char *s, size_t len)
{
	if (!ks->cap)
		return NULL;
	for (size_t i = key_hash(s, len) & (ks->cap - 1); ks->slot[i]; i = (i + 1) & (ks->cap - 1)) {
		const struct ynode *k = map->keys[ks->slot[i] - 1];

		if (k->len == len && !memcmp(k->str, s, len))
			return k;
	}
	return NULL;
}

/* Records map->keys[idx] (not in the set yet); nr keys are in it so far. */
static void keyset_add(struct keyset *ks, const struct ynode *map, size_t idx, size_t nr)
{
	const struct ynode *k = map->keys[idx];
	size_t i;

	if (2 * (nr + 1) > ks->cap) {
		struct keyset big = { NULL, ks->cap ? 2 * ks->cap : 16 };

		big.slot = xcalloc(big.cap, sizeof(*big.slot));
		for (size_t j = 0; j < ks->cap; j++) {
			const struct ynode *o;

			if (!ks->slot[j])
				continue;
			o = map->keys[ks->slot[j] - 1];
			for (i = key_hash(o->str, o->len) & (big.cap - 1); big.slot[i]; i = (i + 1) & (big.cap - 1))
				;
			big.slot[i] = ks->slot[j];
		}
		free(ks->slot);
		*ks = big;
	}
	for (i = key_hash(k->str, k->len) & (ks->cap - 1); ks->slot[i]; i = (i + 1) & (ks->cap - 1))
		;
	ks->slot[i] = idx + 1;
}

static int build_node(struct ynode **out, struct builder *b, const yaml_event_t *start, int depth);

/* Reads items up to the end event of a sequence or mapping opened by start. */
static int build_items(struct ynode *n, struct builder *b, int depth, struct keyset *keys)
{
	yaml_event_t ev;
	yaml_event_type_t end = n->kind == YNODE_SEQ ? YAML_SEQUENCE_END_EVENT : YAML_MAPPING_END_EVENT;
	int rc;

	for (;;) {
		struct ynode *key = NULL, *val = NULL;

		if ((rc = next_event(b, &ev)) < 0)
			return rc;
		if (ev.type == end) {
			yaml_event_delete(&ev);
			return 0;
		}
		if (n->kind == YNODE_MAP) {
			const struct ynode *dup;

			if (ev.type != YAML_SCALAR_EVENT) {
				rc = ev.type == YAML_ALIAS_EVENT ? build_node(&key, b, &ev, depth + 1)
					: error_at(b, &ev, "mapping keys must be plain strings");
				yaml_event_delete(&ev);
				return rc;
			}
			rc = build_node(&key, b, &ev, depth + 1);
			yaml_event_delete(&ev);
			if (rc < 0)
				return rc;
			dup = keyset_find(keys, n, key->str, key->len);
			if (dup) {
				rc = err_set(ERR_INVALID, "%s:%d:%d: duplicate key '%s' (first at line %d column %d)",
					     b->name, key->line, key->col, key->str, dup->line, dup->col);
				ynode_free(key);
				return rc;
			}
			if ((rc = next_event(b, &ev)) < 0) {
				ynode_free(key);
				return rc;
			}
		}
		rc = build_node(&val, b, &ev, depth + 1);
		yaml_event_delete(&ev);
		if (rc < 0) {
			ynode_free(key);
			return rc;
		}
		if (key) {
			push(&n->keys, n->nr, key);
			keyset_add(keys, n, n->nr, n->nr);
		}
		push(&n->items, n->nr, val);
		n->nr++;
	}
}

static int build_children(struct ynode *n, struct builder *b, int depth)
{
	struct keyset keys = { NULL, 0 };
	int rc = build_items(n, b, depth, &keys);

	free(keys.slot);
	return rc;
}

/* Builds the node that start opens; start stays the caller's to delete. */
static int build_node(struct ynode **out, struct builder *b, const yaml_event_t *start, int depth)
{
	struct ynode *n = NULL;
	const yaml_char_t *anchor = NULL;
	int rc = 0;

	*out = NULL;
	if (depth > MAX_DEPTH)
		return error_at(b, start, "nesting is too deep");
	switch (start->type) {
	case YAML_ALIAS_EVENT:
		return error_at(b, start, "aliases (*name) are not supported: write the value out");
	case YAML_SCALAR_EVENT:
		anchor = start->data.scalar.anchor;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = start->data.sequence_start.anchor;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = start->data.mapping_start.anchor;
		break;
	default:
		return error_at(b, start, "unexpected YAML event");
	}
	if (anchor)
		return error_at(b, start, "anchors (&name) are not supported: write the value out");

	if (start->type == YAML_SCALAR_EVENT) {
		n = ynode_new(YNODE_SCALAR, start);
		n->str = xstrndup((const char *)start->data.scalar.value, start->data.scalar.length);
		n->len = start->data.scalar.length;
		n->plain = start->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		goto out;
	}
	n = ynode_new(start->type == YAML_SEQUENCE_START_EVENT ? YNODE_SEQ : YNODE_MAP, start);
	rc = build_children(n, b, depth);
out:
	if (rc < 0)
		ynode_free(n);
	else
		*out = n;
	return rc;
}

int ytree_parse(struct ynode **root, const char *name, const char *text, size_t len)
{
	struct builder b;
	yaml_event_t ev;
	struct ynode *n = NULL;
	int rc, have_event = 0;

	*root = NULL;
	memset(&b, 0, sizeof(b));
	b.name = name;
	b.text = text;
	b.len = len;
	if (!yaml_parser_initialize(&b.parser))
		return err_set(ERR_FAIL, "%s: cannot initialise the YAML parser", name);
	yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, len);

	if ((rc = next_event(&b, &ev)) < 0) /* stream start */
		goto out;
	yaml_event_delete(&ev);
	if ((rc = next_event(&b, &ev)) < 0)
		goto out;
	have_event = 1;
	if (ev.type == YAML_STREAM_END_EVENT)
		goto out; /* nothing but comments */
	yaml_event_delete(&ev);
	have_event = 0;

	if ((rc = next_event(&b, &ev)) < 0)
		goto out;
	have_event = 1;
	if ((rc = build_node(&n, &b, &ev, 0)) < 0)
		goto out;
	yaml_event_delete(&ev);
	have_event = 0;

	if ((rc = next_event(&b, &ev)) < 0) /* document end */
		goto out;
	yaml_event_delete(&ev);
	if ((rc = next_event(&b, &ev)) < 0)
		goto out;
	have_event = 1;
	if (ev.type != YAML_STREAM_END_EVENT) {
		rc = error_at(&b, &ev, "only one YAML document is allowed");
		goto out;
	}
out:
	if (have_event)
		yaml_event_delete(&ev);
	yaml_parser_delete(&b.parser);
	if (rc < 0)
		ynode_free(n);
	else
		*root = n;
	return rc;
}

void ynode_free(struct ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nr; i++) {
		ynode_free(n->items[i]);
		if (n->keys)
			ynode_free(n->keys[i]);
	}
	free(n->items);
	free(n->keys);
	free(n->str);
	free(n);
}

struct ynode *ynode_get(const struct ynode *n, const char *key)
{
	size_t len = strlen(key);

	if (!n || n->kind != YNODE_MAP)
		return NULL;
	for (size_t i = 0; i < n->nr; i++)
		if (n->keys[i]->len == len && !memcmp(n->keys[i]->str, key, len))
			return n->items[i];
	return NULL;
}

int ynode_is_null(const struct ynode *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };

	if (!n || n->kind != YNODE_SCALAR || !n->plain)
		return 0;
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		if (!strcmp(n->str, nulls[i]))
			return 1;
	return 0;
}

const char *ynode_kind_name(enum ynode_kind kind)
{
	switch (kind) {
	case YNODE_SCALAR: return "a scalar";
	case YNODE_SEQ: return "a sequence";
	case YNODE_MAP: return "a mapping";
	}
	return "a node";
}
