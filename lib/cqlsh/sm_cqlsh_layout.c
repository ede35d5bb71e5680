/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Result pages laid out as cqlsh does: print_formatted_result() (the
 * table), print_formatted_result_vertically() (EXPAND ON), and Python's
 * cmd.Cmd.columnize() (DESCRIBE KEYSPACES and TABLES). Widths are display
 * columns, per page, as cqlsh measures them.
 */

#include <errno.h>
#include <string.h>

#include "sm_core.h"
#include "sm_cqlsh.h"

/*
 * A column name as format_value_default() shows it: backslashes doubled,
 * code points U+0000..U+001F and U+007F..U+00FF as escapes; its width is
 * its length in code points (cqlsh does not use wcwidth for names).
 */
static int
format_name(struct sm_cqlsh_cell *cell, const char *name)
{
	const unsigned char *p = (const unsigned char *)name;
	struct sm_cqlsh_str s;
	size_t width = 0;
	char esc[8];

	sm_cqlsh_str_init(&s);
	while (*p != '\0') {
		uint32_t c = *p;
		unsigned n = c < 0x80 ? 0 : c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
		const unsigned char *start = p++;
		unsigned k;

		for (k = 0; k < n && (*p & 0xc0) == 0x80; k++)
			c = (k == 0 ? c & (0x3fu >> n) : c) << 6 | (*p++ & 0x3fu);
		if (c == '\\') {
			sm_cqlsh_str_puts(&s, "\\\\");
			width += 2;
		} else if (c == '\n' || c == '\t' || c == '\r') {
			sm_cqlsh_str_puts(&s, c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r");
			width += 2;
		} else if (c < 0x20 || (c >= 0x7f && c <= 0xff)) {
			snprintf(esc, sizeof(esc), "\\x%02x", c);
			sm_cqlsh_str_puts(&s, esc);
			width += 4;
		} else {
			sm_cqlsh_str_putn(&s, (const char *)start, (size_t)(p - start));
			width++;
		}
	}
	sm_cqlsh_str_putn(&s, "", 0);
	if (s.err != 0 || (s.p == NULL && (s.p = sm_calloc(1, 1)) == NULL)) {
		sm_cqlsh_str_release(&s);
		return -ENOMEM;
	}
	cell->text = s.p;
	cell->width = width;
	return 0;
}

int
sm_cqlsh_page_build(struct sm_cqlsh_page *pg, const struct sm_cqlsh_result *r,
		    const struct sm_cqlsh_fmt *f)
{
	uint64_t n = (uint64_t)r->nrows * r->ncols, k;
	struct sm_cqlsh_str s;
	uint32_t c;

	memset(pg, 0, sizeof(*pg));
	pg->ncols = r->ncols;
	pg->nrows = r->nrows;
	pg->names = sm_calloc(r->ncols ? r->ncols : 1, sizeof(*pg->names));
	pg->cells = sm_calloc(n ? n : 1, sizeof(*pg->cells));
	if (pg->names == NULL || pg->cells == NULL)
		goto nomem;
	for (c = 0; c < r->ncols; c++)
		if (format_name(&pg->names[c], r->cols[c].name) < 0)
			goto nomem;
	for (k = 0; k < n; k++) {
		sm_cqlsh_str_init(&s);
		pg->cells[k].width =
			sm_cqlsh_format_value(&s, r->cols[k % r->ncols].type, r->cells[k], false, f);
		sm_cqlsh_str_putn(&s, "", 0);
		if (s.err != 0 || s.p == NULL) {
			sm_cqlsh_str_release(&s);
			goto nomem;
		}
		pg->cells[k].text = s.p;
	}
	return 0;
nomem:
	sm_cqlsh_page_release(pg);
	return -ENOMEM;
}

void
sm_cqlsh_page_release(struct sm_cqlsh_page *pg)
{
	uint64_t n = (uint64_t)pg->nrows * pg->ncols, k;
	uint32_t c;

	for (c = 0; pg->names != NULL && c < pg->ncols; c++)
		sm_free(pg->names[c].text);
	for (k = 0; pg->cells != NULL && k < n; k++)
		sm_free(pg->cells[k].text);
	sm_free(pg->names);
	sm_free(pg->cells);
	memset(pg, 0, sizeof(*pg));
}

static void
pad(FILE *f, size_t n, char ch)
{
	while (n-- > 0)
		fputc(ch, f);
}

void
sm_cqlsh_print_table(FILE *f, const struct sm_cqlsh_page *pg, bool header, bool tty)
{
	size_t *w = sm_calloc(pg->ncols ? pg->ncols : 1, sizeof(*w));
	uint32_t c, row;

	if (w == NULL)
		return;
	for (c = 0; c < pg->ncols; c++) {
		w[c] = pg->names[c].width;
		for (row = 0; row < pg->nrows; row++)
			w[c] = SM_MAX(w[c], pg->cells[(uint64_t)row * pg->ncols + c].width);
	}
	if (header) {
		/* Names left-aligned; the line loses its trailing blanks (rstrip). */
		fputc(' ', f);
		for (c = 0; c < pg->ncols; c++) {
			if (c > 0)
				fputs(" | ", f);
			fputs(pg->names[c].text, f);
			if (c + 1 < pg->ncols)
				pad(f, w[c] - pg->names[c].width, ' ');
		}
		fputc('\n', f);
		fputc('-', f);
		for (c = 0; c < pg->ncols; c++) {
			if (c > 0)
				fputs("-+-", f);
			pad(f, w[c], '-');
		}
		fputs("-\n", f);
	}
	if (pg->nrows == 0) {
		fputc('\n', f);
		sm_free(w);
		return;
	}
	for (row = 0; row < pg->nrows; row++) {
		fputc(' ', f);
		for (c = 0; c < pg->ncols; c++) {
			const struct sm_cqlsh_cell *cell = &pg->cells[(uint64_t)row * pg->ncols + c];

			if (c > 0)
				fputs(" | ", f);
			pad(f, w[c] - cell->width, ' ');
			fputs(cell->text, f);
		}
		fputc('\n', f);
	}
	if (tty)
		fputc('\n', f);
	sm_free(w);
}

void
sm_cqlsh_print_vertical(FILE *f, const struct sm_cqlsh_page *pg, uint64_t first_row)
{
	size_t wn = 0, wv = 0;
	uint64_t k, n = (uint64_t)pg->nrows * pg->ncols;
	uint32_t c, row;

	for (c = 0; c < pg->ncols; c++)
		wn = SM_MAX(wn, pg->names[c].width);
	for (k = 0; k < n; k++)
		wv = SM_MAX(wv, pg->cells[k].width);
	for (row = 0; row < pg->nrows; row++) {
		fprintf(f, "@ Row %llu\n", (unsigned long long)(first_row + row + 1));
		fputc('-', f);
		pad(f, wn, '-');
		fputs("-+-", f);
		pad(f, wv, '-');
		fputs("-\n", f);
		for (c = 0; c < pg->ncols; c++) {
			fputc(' ', f);
			fputs(pg->names[c].text, f);
			pad(f, wn - pg->names[c].width, ' ');
			fputs(" | ", f);
			fputs(pg->cells[(uint64_t)row * pg->ncols + c].text, f);
			fputc('\n', f);
		}
		fputc('\n', f);
	}
}

void
sm_cqlsh_columnize(FILE *f, const char *const *words, size_t n, size_t width)
{
	size_t nrows, ncols = 1, row, col, i, total;
	size_t *cw = sm_calloc(n ? n : 1, sizeof(*cw));

	if (n == 0) {
		fputs("<empty>\n", f);
		sm_free(cw);
		return;
	}
	if (cw == NULL)
		return;
	if (n == 1) {
		fprintf(f, "%s\n", words[0]);
		sm_free(cw);
		return;
	}
	/* The fewest rows whose columns, two blanks apart, fit in @width. */
	for (nrows = 1; nrows < n; nrows++) {
		ncols = (n + nrows - 1) / nrows;
		total = 0;
		for (col = 0; col < ncols; col++) {
			size_t w = 0;

			for (row = 0; row < nrows && row + nrows * col < n; row++)
				w = SM_MAX(w, sm_cqlsh_display_width(words[row + nrows * col],
								     strlen(words[row + nrows * col])));
			cw[col] = w;
			total += w + 2;
			if (total - 2 > width)
				break;
		}
		if (total - 2 <= width)
			break;
	}
	if (nrows == n) {
		ncols = 1;
		cw[0] = 0;
	}
	for (row = 0; row < nrows; row++) {
		size_t last = 0;

		/* Trailing empty cells are dropped; every other cell is padded, the last one too. */
		for (col = 0; col < ncols; col++)
			if (row + nrows * col < n)
				last = col + 1;
		for (col = 0; col < last; col++) {
			i = row + nrows * col;
			if (col > 0)
				fputs("  ", f);
			fputs(words[i], f);
			pad(f, cw[col] - SM_MIN(cw[col], sm_cqlsh_display_width(words[i], strlen(words[i]))),
			    ' ');
		}
		fputc('\n', f);
	}
	sm_free(cw);
}
