/*
 * lbagentctl's text output, the parts its formatters share (fmt.c):
 * format.c (status), why.c (status --short, why), replies.c (what the
 * load balancers get after a marker change). Every string of a status
 * document is untrusted (probe reasons, agent-send texts): fmt_clean makes
 * it printable, so that nothing can drive the terminal, and a column is a
 * byte.
 */
#ifndef LBAGENT_CTL_FMT_H
#define LBAGENT_CTL_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#define HISTORY_SHOWN	10
#define LABEL_W		14	/* "  reply         value" */
#define NAME_COL	24	/* widest name column of the tables */
#define TEXT_MAX	1024	/* longer strings are cut: status, not a dump */

/* Where the text goes, and in how many columns. */
struct fmt_out {
	FILE		*fp;
	unsigned	 width;
};

/* A string member, "" when missing (ctl_json_str). */
const char	*fmt_str(const json_t *obj, const char *key);

/* A finite number member into *v; false when missing or not one. */
bool		 fmt_num(const json_t *obj, const char *key, double *v);

/* Untrusted text made printable, at most TEXT_MAX bytes. */
void		 fmt_clean(char *dst, size_t size, const char *src);

/* Seconds from the status, in the house format of elapsed times. */
void		 fmt_age(char *buf, size_t size, double s);

/* "2026-11-29T10:02:11Z" as "2026-11-29 10:02:11 UTC"; anything else as is. */
void		 fmt_time(char *buf, size_t size, const char *iso);

/* A measured value: whole numbers as such, others with two decimals. */
void		 fmt_value(char *buf, size_t size, double v);

/* "up", "up 50%", "down", "drain", "maint". */
void		 fmt_state_words(char *buf, size_t size, const json_t *obj);

/*
 * Writes indent spaces, head, then text right after it, wrapped at the
 * width with every further line indented by hang columns.
 */
void		 fmt_para(struct fmt_out *, unsigned indent,
		    const char *head, unsigned hang, const char *text);

/* A formatted paragraph. */
void		 fmt_paraf(struct fmt_out *, unsigned indent,
		    const char *head, unsigned hang, const char *fmt, ...)
		    __attribute__((format(printf, 5, 6)));

/* "  label       " + value, wrapped under the value's column. */
void		 fmt_field(struct fmt_out *, const char *label,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * A service's capacity weight and maxconn, each by its reason ("capacity
 * 125%: 180 req/s at 0.60 = ..."): as fields (status) or paragraphs (why).
 */
void		 fmt_capacity(struct fmt_out *, const json_t *svc, bool why);

#endif
