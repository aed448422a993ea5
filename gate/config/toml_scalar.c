/* gate/config/toml_scalar.c: TOML's strings (basic, literal, multi-line, escapes) and numbers
 * (integers in four bases, floats, inf and nan; dates refused) for toml.c. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ci/utf8.h"
#include "gate/config/toml.h"
#include "gate/config/toml_internal.h"

/* At a backslash inside a basic string. */
static int parse_escape(struct parser *ps, struct buf *b, bool multiline)
{
	struct toml_pos at = here(ps);
	char d[48], ch;
	int c;

	adv(ps);
	c = cur_c(ps);
	if (multiline && (c == ' ' || c == '\t' || at_newline(ps))) {
		/* line-ending backslash: drops the newline and the blanks and newlines after it */
		skip_ws(ps);
		if (!at_newline(ps))
			return toml_fail_at(
			        ps, at,
			        "invalid escape: a backslash followed by blanks must end the "
			        "line; remove the blanks after it or escape it as \\\\");
		while (cur_c(ps) == ' ' || cur_c(ps) == '\t' || at_newline(ps)) {
			if (at_newline(ps))
				skip_newline(ps);
			else
				adv(ps);
		}
		return 0;
	}
	switch (c) {
	case 'b': ch = '\b'; break;
	case 't': ch = '\t'; break;
	case 'n': ch = '\n'; break;
	case 'f': ch = '\f'; break;
	case 'r': ch = '\r'; break;
	case '"': ch = '"'; break;
	case '\\': ch = '\\'; break;
	case 'u':
	case 'U': {
		int digits = c == 'u' ? 4 : 8;
		uint32_t cp = 0;
		char u[4];
		adv(ps);
		for (int i = 0; i < digits; i++) {
			int h = cur_c(ps), v;
			if (h >= '0' && h <= '9')
				v = h - '0';
			else if (h >= 'a' && h <= 'f')
				v = h - 'a' + 10;
			else if (h >= 'A' && h <= 'F')
				v = h - 'A' + 10;
			else
				return toml_fail_at(
				        ps, at,
				        "invalid escape: \\%c needs %d hex digits, found %s", c,
				        digits, toml_describe(ps, d, sizeof(d)));
			cp = cp * 16 + (uint32_t)v;
			adv(ps);
		}
		if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
			return toml_fail_at(
			        ps, at,
			        "invalid escape: \\%c%0*X is not a Unicode scalar value "
			        "(0 to D7FF or E000 to 10FFFF)",
			        c, digits, (unsigned)cp);
		return toml_buf_add(ps, b, u, utf8_put(u, cp));
	}
	default:
		if (c > 0x20 && c < 0x7f)
			return toml_fail_at(
			        ps, at,
			        "invalid escape \\%c; expected one of \\b \\t \\n \\f \\r \\\" "
			        "\\\\ \\uXXXX \\UXXXXXXXX",
			        c);
		return toml_fail_at(
		        ps, at,
		        "invalid escape: a backslash followed by %s; expected one of \\b \\t "
		        "\\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX",
		        toml_describe(ps, d, sizeof(d)));
	}
	adv(ps);
	return toml_buf_add(ps, b, &ch, 1);
}

static int ctl_in_string(struct parser *ps)
{
	char d[48];
	return toml_fail_at(
	        ps, here(ps),
	        "%s in a string; write it as an escape such as \\u%04X in a \"...\" string",
	        toml_describe(ps, d, sizeof(d)), (unsigned)cur_c(ps));
}

/* "..." or '...' on one line. */
int toml_parse_line_string(struct parser *ps, struct buf *b)
{
	struct toml_pos open = here(ps);
	int quote = cur_c(ps);

	adv(ps);
	for (;;) {
		int c = cur_c(ps);
		if (c < 0 || at_newline(ps))
			return toml_fail_at(
			        ps, here(ps),
			        "unterminated string (opened at %d:%d): expected %s before the "
			        "end of the %s",
			        open.line, open.col, quote == '"' ? "'\"'" : "\"'\"",
			        c < 0 ? "input" : "line");
		if (c == quote) {
			adv(ps);
			return toml_buf_add(ps, b, "", 0);
		}
		if (c == '\\' && quote == '"') {
			if (parse_escape(ps, b, false) < 0)
				return -1;
			continue;
		}
		if (is_ctl(c))
			return ctl_in_string(ps);
		if (toml_buf_add(ps, b, ps->p, 1) < 0)
			return -1;
		adv(ps);
	}
}

/* """...""" or '''...'''. */
int toml_parse_ml_string(struct parser *ps, struct buf *b)
{
	struct toml_pos open = here(ps);
	int quote = cur_c(ps);
	const char *delim = quote == '"' ? "\"\"\"" : "'''";

	adv_n(ps, 3);
	if (at_newline(ps))
		skip_newline(ps); /* a newline right after the opening quotes is not part of it */
	for (;;) {
		int c = cur_c(ps);
		if (c < 0)
			return toml_fail_at(
			        ps, here(ps),
			        "unterminated multi-line string (opened at %d:%d): expected %s",
			        open.line, open.col, delim);
		if (c == quote) {
			size_t n = 0;
			while (peek_at(ps, n) == quote)
				n++;
			if (n >= 3) {
				/* the last three close it; up to two more belong to the text */
				if (n > 5) {
					adv_n(ps, 5);
					return toml_fail_at(
					        ps, here(ps),
					        "too many quotes: at most two may come right "
					        "before the closing %s; escape them",
					        delim);
				}
				if (toml_buf_add(ps, b, delim, n - 3) < 0)
					return -1;
				adv_n(ps, n);
				return toml_buf_add(ps, b, "", 0);
			}
			if (toml_buf_add(ps, b, delim, n) < 0)
				return -1;
			adv_n(ps, n);
			continue;
		}
		if (c == '\\' && quote == '"') {
			if (parse_escape(ps, b, true) < 0)
				return -1;
			continue;
		}
		if (at_newline(ps)) {
			skip_newline(ps);
			if (toml_buf_add(ps, b, "\n", 1) < 0)
				return -1;
			continue;
		}
		if (is_ctl(c))
			return ctl_in_string(ps);
		if (toml_buf_add(ps, b, ps->p, 1) < 0)
			return -1;
		adv(ps);
	}
}

/* Digits of base with single underscores between them; copies the digits to b. */
static int parse_digits(struct parser *ps, struct buf *b, int base, const char *what)
{
	char d[48];

	if (!is_digit(cur_c(ps), base))
		return toml_fail_at(ps, here(ps), "expected %s, found %s", what,
		                    toml_describe(ps, d, sizeof(d)));
	for (;;) {
		int c = cur_c(ps);
		if (is_digit(c, base)) {
			if (toml_buf_add(ps, b, ps->p, 1) < 0)
				return -1;
			adv(ps);
		} else if (c == '_') {
			adv(ps);
			if (!is_digit(cur_c(ps), base))
				return toml_fail_at(
				        ps, here(ps),
				        "expected a digit after '_' (an underscore must sit "
				        "between digits), found %s",
				        toml_describe(ps, d, sizeof(d)));
		} else {
			return 0;
		}
	}
}

static bool looks_like_date(const struct parser *ps)
{
	for (int i = 0; i < 4; i++)
		if (!is_digit(peek_at(ps, (size_t)i), 10))
			return i == 2 && peek_at(ps, 2) == ':';
	return peek_at(ps, 4) == '-' || peek_at(ps, 2) == ':';
}

int toml_parse_number(struct parser *ps, struct toml_value **out)
{
	struct toml_pos pos = here(ps);
	struct buf b = {0};
	struct toml_value *v = NULL;
	bool neg = false, sign = false, is_float = false;
	double f = 0;
	int64_t n = 0;
	int rc = -1, c = cur_c(ps);
	char d[48];

	if (looks_like_date(ps)) {
		toml_fail_at(ps, pos,
		             "dates are not supported here; write it as a string, e.g. "
		             "\"1979-05-27\"");
		goto out;
	}
	if (c == '+' || c == '-') {
		neg = c == '-';
		sign = true;
		if (toml_buf_add(ps, &b, ps->p, 1) < 0)
			goto out;
		adv(ps);
		c = cur_c(ps);
	}
	if (c == 'i' || c == 'n') {
		if (!match_word(ps, "inf") && !match_word(ps, "nan")) {
			toml_fail_at(ps, here(ps), "expected a number, inf or nan, found %s",
			             toml_word(ps, d, sizeof(d)));
			goto out;
		}
		f = c == 'i' ? (neg ? -INFINITY : INFINITY) : (neg ? -NAN : NAN);
		adv_n(ps, 3);
		is_float = true;
		goto make;
	}
	if (c == '0' && (peek_at(ps, 1) == 'x' || peek_at(ps, 1) == 'o' || peek_at(ps, 1) == 'b')) {
		int base = peek_at(ps, 1) == 'x' ? 16 : peek_at(ps, 1) == 'o' ? 8 : 2;
		const char *what = base == 16  ? "a hex digit after 0x"
		                   : base == 8 ? "an octal digit after 0o"
		                               : "a binary digit after 0b";
		uint64_t u = 0;
		if (sign) {
			toml_fail_at(ps, pos,
			             "a sign is not allowed on hex, octal or binary integers");
			goto out;
		}
		adv_n(ps, 2);
		if (parse_digits(ps, &b, base, what) < 0)
			goto out;
		for (size_t i = 0; i < b.len; i++) {
			int dv = b.p[i] <= '9' ? b.p[i] - '0' : (b.p[i] | 0x20) - 'a' + 10;
			if (u > ((uint64_t)INT64_MAX - (uint64_t)dv) / (uint64_t)base) {
				toml_fail_at(ps, pos,
				             "integer out of range: TOML integers are 64-bit, at "
				             "most 9223372036854775807 (0x7fffffffffffffff)");
				goto out;
			}
			u = u * (uint64_t)base + (uint64_t)dv;
		}
		n = (int64_t)u;
		goto make;
	}
	if (!is_digit(c, 10)) {
		toml_fail_at(ps, here(ps), "expected a digit after the sign, found %s",
		             toml_describe(ps, d, sizeof(d)));
		goto out;
	}
	if (c == '0' && (is_digit(peek_at(ps, 1), 10) || peek_at(ps, 1) == '_')) {
		toml_fail_at(ps, pos, "leading zeros are not allowed in a number");
		goto out;
	}
	if (parse_digits(ps, &b, 10, "a digit") < 0)
		goto out;
	if (cur_c(ps) == '.') {
		is_float = true;
		if (toml_buf_add(ps, &b, ".", 1) < 0)
			goto out;
		adv(ps);
		if (parse_digits(ps, &b, 10, "a digit after the decimal point") < 0)
			goto out;
	}
	if (cur_c(ps) == 'e' || cur_c(ps) == 'E') {
		is_float = true;
		if (toml_buf_add(ps, &b, "e", 1) < 0)
			goto out;
		adv(ps);
		if (cur_c(ps) == '+' || cur_c(ps) == '-') {
			if (toml_buf_add(ps, &b, ps->p, 1) < 0)
				goto out;
			adv(ps);
		}
		if (parse_digits(ps, &b, 10, "a digit in the exponent") < 0)
			goto out;
	}
	if (is_float) {
		f = strtod(b.p, NULL);
		if (isinf(f)) {
			toml_fail_at(ps, pos, "float out of range: its magnitude is above 1.8e308");
			goto out;
		}
	} else {
		uint64_t u = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
		for (size_t i = sign ? 1 : 0; i < b.len; i++) {
			uint64_t dv = (uint64_t)(b.p[i] - '0');
			if (u > (limit - dv) / 10) {
				toml_fail_at(ps, pos,
				             "integer out of range: TOML integers are 64-bit, from "
				             "-9223372036854775808 to 9223372036854775807");
				goto out;
			}
			u = u * 10 + dv;
		}
		n = neg ? (int64_t)(0 - u) : (int64_t)u;
	}
make:
	v = toml_value_new(ps, is_float ? TOML_FLOAT : TOML_INTEGER, pos);
	if (!v)
		goto out;
	if (is_float)
		v->u.flt = f;
	else
		v->u.integer = n;
	*out = v;
	rc = 0;
out:
	toml_mem_free(b.p);
	return rc;
}
