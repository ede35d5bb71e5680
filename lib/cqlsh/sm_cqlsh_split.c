/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Input lines to statements, as cqlsh's cql_split_statements() and
 * strip_comment_blocks() do (pylib/cqlshlib/cqlhandling.py, bin/cqlsh.py).
 *
 * One pass over every byte: the lexer state (inside a string, a quoted
 * name, a $$ string or a block comment) survives the end of a line, so a
 * statement of many lines costs what its bytes cost. Comments are dropped
 * from the text (a block comment becomes one blank, so it still separates
 * words); the text keeps its newlines, so the server's error positions
 * ("line 2:10") match what was typed.
 */

#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "sm_core.h"
#include "sm_cqlsh.h"

enum lex_state {
	LEX_NORMAL,
	LEX_SQUOTE, /* '...' with '' inside */
	LEX_DQUOTE, /* "..." with "" inside */
	LEX_DOLLAR, /* $$...$$ */
	LEX_BLOCK,  /* a block comment */
};

/* cqlsh's commands_end_with_newline (cqlshhandling.my_commands_ending_with_newline). */
static const char *const line_commands[] = {
	"help",	   "?",	       "consistency", "serial", "describe", "desc",	"show",
	"source",  "capture",  "login",	      "debug",	"tracing",  "expand",	"paging",
	"exit",	   "quit",     "clear",	      "cls",	"history",
};

void
sm_cqlsh_splitter_init(struct sm_cqlsh_splitter *sp)
{
	memset(sp, 0, sizeof(*sp));
	sm_cqlsh_str_init(&sp->text);
	sm_cqlsh_str_init(&sp->pending);
	sp->state = LEX_NORMAL;
}

void
sm_cqlsh_splitter_release(struct sm_cqlsh_splitter *sp)
{
	sm_cqlsh_str_release(&sp->text);
	sm_cqlsh_str_release(&sp->pending);
	memset(sp, 0, sizeof(*sp));
}

static void
statement_reset(struct sm_cqlsh_splitter *sp)
{
	sm_cqlsh_str_reset(&sp->text);
	sp->first_word = false;
	sp->line_ended = false;
	sp->word_len = 0;
	sp->word_done = false;
}

void
sm_cqlsh_splitter_cancel(struct sm_cqlsh_splitter *sp)
{
	statement_reset(sp);
	sp->state = LEX_NORMAL;
}

/* The statement read so far is complete: queue it unless it is empty. */
static void
statement_end(struct sm_cqlsh_splitter *sp)
{
	const char *s = sm_cqlsh_str_get(&sp->text);
	size_t len = sp->text.len;

	while (len > 0 && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		len--;
	if (len > 0) {
		sm_cqlsh_str_putn(&sp->pending, s, len);
		sm_cqlsh_str_putn(&sp->pending, "", 1);
		sp->npending++;
	}
	statement_reset(sp);
}

/* Follow the first word of the statement to learn whether the line ends it. */
static void
track_word(struct sm_cqlsh_splitter *sp, char c)
{
	size_t i;

	if (sp->word_done)
		return;
	if (!sp->first_word) {
		if (isspace((unsigned char)c))
			return;
		sp->first_word = true;
		if (c == '?') {
			sp->word[0] = '?';
			sp->word_len = 1;
			sp->word_done = true;
			goto check;
		}
	}
	if ((isalnum((unsigned char)c) || c == '_') && sp->word_len + 1 < sizeof(sp->word)) {
		sp->word[sp->word_len++] = (char)tolower((unsigned char)c);
		return;
	}
	sp->word_done = true;
	if (isalnum((unsigned char)c) || c == '_')
		return; /* longer than any command */
check:
	sp->word[sp->word_len] = '\0';
	for (i = 0; i < SM_ARRAY_SIZE(line_commands); i++)
		if (strcmp(sp->word, line_commands[i]) == 0)
			sp->line_ended = true;
}

int
sm_cqlsh_splitter_line(struct sm_cqlsh_splitter *sp, const char *line, size_t len)
{
	size_t i;

	/* The line and its newline, one byte at a time; @next looks one ahead. */
	for (i = 0; i <= len; i++) {
		char c = i < len ? line[i] : '\n';
		char next = i + 1 < len ? line[i + 1] : i + 1 == len ? '\n' : '\0';

		switch (sp->state) {
		case LEX_SQUOTE:
		case LEX_DQUOTE: {
			char q = sp->state == LEX_SQUOTE ? '\'' : '"';

			sm_cqlsh_str_putn(&sp->text, &c, 1);
			if (c == q && next == q) {
				sm_cqlsh_str_putn(&sp->text, &next, 1);
				i++;
			} else if (c == q) {
				sp->state = LEX_NORMAL;
			}
			continue;
		}
		case LEX_DOLLAR:
			sm_cqlsh_str_putn(&sp->text, &c, 1);
			if (c == '$' && next == '$') {
				sm_cqlsh_str_putn(&sp->text, &next, 1);
				i++;
				sp->state = LEX_NORMAL;
			}
			continue;
		case LEX_BLOCK:
			if (c == '*' && next == '/') {
				i++;
				sp->state = LEX_NORMAL;
				sm_cqlsh_str_putn(&sp->text, " ", 1);
			} else if (c == '\n') {
				sm_cqlsh_str_putn(&sp->text, "\n", 1);
			}
			continue;
		default:
			break;
		}
		if ((c == '-' && next == '-') || (c == '/' && next == '/')) {
			/* A line comment: the rest of the line goes, its newline stays. */
			i = len - 1;
			continue;
		}
		if (c == '/' && next == '*') {
			track_word(sp, ' ');
			sp->state = LEX_BLOCK;
			i++;
			continue;
		}
		if (c == ';') {
			track_word(sp, ' ');
			statement_end(sp);
			continue;
		}
		if (c == '\n') {
			track_word(sp, ' ');
			if (sp->line_ended)
				statement_end(sp);
			else if (sp->first_word)
				sm_cqlsh_str_putn(&sp->text, "\n", 1);
			continue;
		}
		track_word(sp, c);
		sm_cqlsh_str_putn(&sp->text, &c, 1);
		if (c == '\'')
			sp->state = LEX_SQUOTE;
		else if (c == '"')
			sp->state = LEX_DQUOTE;
		else if (c == '$' && next == '$') {
			sm_cqlsh_str_putn(&sp->text, &next, 1);
			i++;
			sp->state = LEX_DOLLAR;
		}
	}
	return sp->text.err != 0 || sp->pending.err != 0 ? -ENOMEM : 0;
}

const char *
sm_cqlsh_splitter_next(struct sm_cqlsh_splitter *sp)
{
	const char *s;

	if (sp->npending == 0) {
		sm_cqlsh_str_reset(&sp->pending);
		sp->pending_pos = 0;
		return NULL;
	}
	s = sm_cqlsh_str_get(&sp->pending) + sp->pending_pos;
	sp->pending_pos += strlen(s) + 1;
	sp->npending--;
	return s;
}

bool
sm_cqlsh_splitter_partial(const struct sm_cqlsh_splitter *sp)
{
	/* first_word: something but blanks and comments was read. */
	return sp->first_word || sp->state == LEX_SQUOTE || sp->state == LEX_DQUOTE ||
	       sp->state == LEX_DOLLAR;
}
