/*
 * The pieces every text lbagentctl shows is made of: strings of a status
 * document (untrusted) made printable, numbers, ages and times in the
 * house format, and paragraphs wrapped to the width. format.c (status),
 * why.c (status --short, why) and replies.c (after a marker change) write
 * with them.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/units.h"
#include "lbagent/ctl/fmt.h"
#include "lbagent/ctl/term.h"
#include "fmt.h"

const char *
ctl_json_str(const json_t *obj, const char *key)
{
	const char	*s = json_string_value(json_object_get(obj, key));

	return s != NULL ? s : "";
}

const char *
fmt_str(const json_t *obj, const char *key)
{
	return ctl_json_str(obj, key);
}

bool
fmt_num(const json_t *obj, const char *key, double *v)
{
	const json_t	*j = json_object_get(obj, key);

	if (!json_is_number(j))
		return false;
	*v = json_number_value(j);
	return isfinite(*v);
}

void
ctl_printable(char *dst, size_t size, const char *src)
{
	ctl_term_text(dst, size, src);
}

/* Untrusted text made printable, at most TEXT_MAX bytes. */
void
fmt_clean(char *dst, size_t size, const char *src)
{
	ctl_printable(dst, size < TEXT_MAX + 1 ? size : TEXT_MAX + 1, src);
}

/* Seconds from the status, in the house format of elapsed times. */
void
fmt_age(char *buf, size_t size, double s)
{
	if (!isfinite(s) || s < 0)
		s = 0;
	if (s > 1e15)
		s = 1e15;
	units_format_age((uint64_t)llround(s * 1000), buf, size);
}

/* "2026-11-29T10:02:11Z" as "2026-11-29 10:02:11 UTC"; anything else as is. */
void
fmt_time(char *buf, size_t size, const char *iso)
{
	char	c[64];

	fmt_clean(c, sizeof(c), iso);
	if (strlen(c) >= 19 && c[10] == 'T' && c[strlen(c) - 1] == 'Z')
		snprintf(buf, size, "%.10s %.8s UTC", c, c + 11);
	else if (size > 0)
		snprintf(buf, size, "%.*s", (int)(size - 1), c);
}

/* A measured value: whole numbers as such, others with two decimals. */
void
fmt_value(char *buf, size_t size, double v)
{
	if (fabs(v) < 1e15 && v == floor(v))
		snprintf(buf, size, "%.0f", v);
	else if (fabs(v) < 1)		/* 0.65, a plugin's 0.000164 s */
		snprintf(buf, size, "%.3g", v);
	else if (fabs(v) < 1e15)
		snprintf(buf, size, "%.2f", v);
	else
		snprintf(buf, size, "%.3g", v);
}

/* "up", "up 50%", "down", "drain", "maint". */
void
fmt_state_words(char *buf, size_t size, const json_t *obj)
{
	char	 st[32];
	double	 w;

	fmt_clean(st, sizeof(st), fmt_str(obj, "state"));
	if (strcmp(st, "up") == 0 && fmt_num(obj, "weight", &w) && w < 100)
		snprintf(buf, size, "up %.0f%%", w);
	else
		snprintf(buf, size, "%s", st[0] != '\0' ? st : "?");
}

/*
 * Writes indent spaces, head, then text right after it, wrapped at the
 * width with every further line indented by hang columns. A word too long
 * for a line is cut where the line ends.
 */
void
fmt_para(struct fmt_out *o, unsigned indent, const char *head, unsigned hang,
    const char *text)
{
	const char	*p = text;
	unsigned	 col;
	size_t		 wlen, room;
	bool		 first = true;

	if (hang + 10 > o->width)
		hang = 0;
	fprintf(o->fp, "%*s%s", (int)indent, "", head);
	col = indent + (unsigned)strlen(head);
	for (;;) {
		p += strspn(p, " ");
		if (*p == '\0')
			break;
		wlen = strcspn(p, " ");
		if (!first) {
			if (col + 1 + wlen > o->width) {
				fprintf(o->fp, "\n%*s", (int)hang, "");
				col = hang;
			} else {
				fputc(' ', o->fp);
				col++;
			}
		}
		while (col + wlen > o->width) {
			room = o->width > col ? o->width - col : 0;
			/* Not inside a character (escapes are ASCII). */
			while (room > 0 && room < wlen &&
			    ((unsigned char)p[room] & 0xc0) == 0x80)
				room--;
			fwrite(p, 1, room, o->fp);
			p += room;
			wlen -= room;
			fprintf(o->fp, "\n%*s", (int)hang, "");
			col = hang;
		}
		fwrite(p, 1, wlen, o->fp);
		col += (unsigned)wlen;
		p += wlen;
		first = false;
	}
	fputc('\n', o->fp);
}

/* A formatted paragraph. */
void
fmt_paraf(struct fmt_out *o, unsigned indent, const char *head, unsigned hang,
    const char *fmt, ...)
{
	char	buf[4 * TEXT_MAX];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fmt_para(o, indent, head, hang, buf);
}

/* "  label       " + value, wrapped under the value's column. */
void
fmt_field(struct fmt_out *o, const char *label, const char *fmt, ...)
{
	char	head[LABEL_W + 1], buf[4 * TEXT_MAX];
	va_list	ap;

	snprintf(head, sizeof(head), "%-*s ", LABEL_W - 3, label);
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fmt_para(o, 2, head, LABEL_W, buf);
}

const json_t *
ctl_service(const json_t *root, const char *name)
{
	const json_t	*services = json_object_get(root, "services");
	const json_t	*s;
	size_t		 i;

	json_array_foreach(services, i, s)
		if (json_is_object(s) && strcmp(fmt_str(s, "name"), name) == 0)
			return s;
	return NULL;
}

const char *
ctl_service_label(const char *name)
{
	return name[0] == '\0' ? "(default)" : name;
}

void
fmt_capacity(struct fmt_out *o, const json_t *svc, bool why)
{
	const char	*keys[2] = { "capacity_weight", "maxconn" };
	const char	*labels[2] = { "capacity", "maxconn" };
	char		 reason[TEXT_MAX];
	size_t		 i;

	for (i = 0; i < 2; i++) {
		const json_t *c = json_object_get(svc, keys[i]);

		if (!json_is_object(c))
			continue;
		fmt_clean(reason, sizeof(reason), fmt_str(c, "reason"));
		if (why)
			fmt_paraf(o, 2, "", 4, "%s", reason);
		else
			fmt_field(o, labels[i], "%s", reason);
	}
}
