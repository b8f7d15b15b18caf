/* Credentials kept out of everything lbagent shows: logs, status, replies. */
#ifndef LBAGENT_REDACT_H
#define LBAGENT_REDACT_H

#include <stddef.h>

/*
 * Copies url into buf (always NUL-terminated when size > 0, cut to fit)
 * with the userinfo of its authority ("user@" or "user:password@", up to
 * the last '@' before the first '/', '?' or '#') replaced by "***@".
 * Everything else stays as written, the query string included: a token
 * belongs in a header, whose values are never shown. Text without
 * "scheme://" is read as starting with the authority. Returns the length
 * of the whole result, as snprintf does.
 */
size_t	redact_url(const char *url, char *buf, size_t size);

#endif
