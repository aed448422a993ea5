/* gate/config/toml_scalar.c: TOML's strings (basic, literal, multi-line, escapes) and numbers
 * (integers in four bases, floats, inf and nan; dates refused) for toml_parse.c. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
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

/* What a number's text says. */
struct number {
	bool neg, sign, is_float;
	double f;
	int64_t n;
};

/* inf or nan, after the sign if any. */
static int number_special(struct parser *ps, struct number *num)
{
	int c = cur_c(ps);
	char d[48];

	if (!match_word(ps, "inf") && !match_word(ps, "nan"))
		return toml_fail_at(ps, here(ps), "expected a number, inf or nan, found %s",
		                    toml_word(ps, d, sizeof(d)));
	num->f = c == 'i' ? (num->neg ? -INFINITY : INFINITY) : (num->neg ? -NAN : NAN);
	adv_n(ps, 3);
	num->is_float = true;
	return 0;
}

/* At 0x, 0o or 0b: an unsigned integer in that base (its digits go to b). */
static int number_based(struct parser *ps, struct toml_pos pos, struct buf *b, struct number *num)
{
	int base = peek_at(ps, 1) == 'x' ? 16 : peek_at(ps, 1) == 'o' ? 8 : 2;
	const char *what = base == 16  ? "a hex digit after 0x"
	                   : base == 8 ? "an octal digit after 0o"
	                               : "a binary digit after 0b";
	uint64_t u = 0;

	if (num->sign)
		return toml_fail_at(ps, pos,
		                    "a sign is not allowed on hex, octal or binary integers");
	adv_n(ps, 2);
	if (parse_digits(ps, b, base, what) < 0)
		return -1;
	for (size_t i = 0; i < b->len; i++) {
		int dv = b->p[i] <= '9' ? b->p[i] - '0' : (b->p[i] | 0x20) - 'a' + 10;
		if (u > ((uint64_t)INT64_MAX - (uint64_t)dv) / (uint64_t)base)
			return toml_fail_at(ps, pos,
			                    "integer out of range: TOML integers are 64-bit, at "
			                    "most 9223372036854775807 (0x7fffffffffffffff)");
		u = u * (uint64_t)base + (uint64_t)dv;
	}
	num->n = (int64_t)u;
	return 0;
}

/* The text in b (the sign, digits, a fraction, an exponent) as a float or a 64-bit integer. */
static int number_value(struct parser *ps, struct toml_pos pos, const struct buf *b,
                        struct number *num)
{
	if (num->is_float) {
		num->f = strtod(b->p, NULL);
		if (isinf(num->f))
			return toml_fail_at(ps, pos,
			                    "float out of range: its magnitude is above 1.8e308");
		return 0;
	}
	uint64_t u = 0, limit = num->neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (size_t i = num->sign ? 1 : 0; i < b->len; i++) {
		uint64_t dv = (uint64_t)(b->p[i] - '0');
		if (u > (limit - dv) / 10)
			return toml_fail_at(ps, pos,
			                    "integer out of range: TOML integers are 64-bit, from "
			                    "-9223372036854775808 to 9223372036854775807");
		u = u * 10 + dv;
	}
	num->n = num->neg ? (int64_t)(0 - u) : (int64_t)u;
	return 0;
}

/* Decimal digits, then maybe a fraction and an exponent (into b, after the sign). */
static int number_decimal(struct parser *ps, struct toml_pos pos, struct buf *b, struct number *num)
{
	int c = cur_c(ps);
	char d[48];

	if (!is_digit(c, 10))
		return toml_fail_at(ps, here(ps), "expected a digit after the sign, found %s",
		                    toml_describe(ps, d, sizeof(d)));
	if (c == '0' && (is_digit(peek_at(ps, 1), 10) || peek_at(ps, 1) == '_'))
		return toml_fail_at(ps, pos, "leading zeros are not allowed in a number");
	if (parse_digits(ps, b, 10, "a digit") < 0)
		return -1;
	if (cur_c(ps) == '.') {
		num->is_float = true;
		if (toml_buf_add(ps, b, ".", 1) < 0)
			return -1;
		adv(ps);
		if (parse_digits(ps, b, 10, "a digit after the decimal point") < 0)
			return -1;
	}
	if (cur_c(ps) == 'e' || cur_c(ps) == 'E') {
		num->is_float = true;
		if (toml_buf_add(ps, b, "e", 1) < 0)
			return -1;
		adv(ps);
		if ((cur_c(ps) == '+' || cur_c(ps) == '-') && toml_buf_add(ps, b, ps->p, 1) < 0)
			return -1;
		if (cur_c(ps) == '+' || cur_c(ps) == '-')
			adv(ps);
		if (parse_digits(ps, b, 10, "a digit in the exponent") < 0)
			return -1;
	}
	return number_value(ps, pos, b, num);
}

int toml_parse_number(struct parser *ps, struct toml_value **out)
{
	struct toml_pos pos = here(ps);
	struct buf b = {0};
	struct number num = {0};
	struct toml_value *v;
	int rc = -1, c = cur_c(ps);

	if (looks_like_date(ps))
		return toml_fail_at(ps, pos,
		                    "dates are not supported here; write it as a string, e.g. "
		                    "\"1979-05-27\"");
	if (c == '+' || c == '-') {
		num.neg = c == '-';
		num.sign = true;
		if (toml_buf_add(ps, &b, ps->p, 1) < 0)
			goto out;
		adv(ps);
		c = cur_c(ps);
	}
	if (c == 'i' || c == 'n')
		rc = number_special(ps, &num);
	else if (c == '0' &&
	         (peek_at(ps, 1) == 'x' || peek_at(ps, 1) == 'o' || peek_at(ps, 1) == 'b'))
		rc = number_based(ps, pos, &b, &num);
	else
		rc = number_decimal(ps, pos, &b, &num);
	if (rc < 0 || !(v = toml_value_new(ps, num.is_float ? TOML_FLOAT : TOML_INTEGER, pos))) {
		rc = -1;
		goto out;
	}
	if (num.is_float)
		v->u.flt = num.f;
	else
		v->u.integer = num.n;
	*out = v;
out:
	toml_mem_free(b.p);
	return rc;
}
