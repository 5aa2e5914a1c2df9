/*
 * csv: fields of RFC 4180 CSV, for the samples a job exports. A field is
 * quoted only when it must be (a comma, a quote, CR or LF in it, or
 * space at either end), its quotes doubled; numbers are written so that
 * they read back as the same double.
 */
#ifndef BISECT_CSV_H
#define BISECT_CSV_H

struct sbuf;

/* Appends s (NULL: an empty field) to sb as one field, quoted when it must be. */
void csv_field(struct sbuf *sb, const char *s);
/* Appends v in the fewest digits that read back as v (%.15g, else %.17g); "" when not finite. */
void csv_double(struct sbuf *sb, double v);

#endif
