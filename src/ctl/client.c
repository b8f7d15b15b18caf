/*
 * lbagentctl's way to the daemon: the HTTP API on a unix socket or a
 * loopback port, one blocking libcurl request at a time, each bounded by
 * CTL_REQUEST_TIMEOUT_MS. Never through a proxy: the token must not leave
 * the host, and the API is local.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "lbagent/core/addr.h"
#include "lbagent/ctl/args.h"
#include "lbagent/ctl/client.h"
#include "lbagent/daemon/http_api.h"

#define BODY_MAX	(16u << 20)	/* a status document is far smaller */

static bool
digits(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* "unix:/path" (s, len bytes) into a. */
static int
addr_unix(const char *s, size_t len, struct ctl_addr *a, const char **why)
{
	if (s[5] != '/') {
		*why = "expected unix:/absolute/path";
		return -1;
	}
	if (len - 5 >= sizeof(a->unix_path)) {
		*why = "socket path too long";
		return -1;
	}
	memcpy(a->unix_path, s + 5, len - 5 + 1);
	snprintf(a->url, sizeof(a->url), "http://localhost");
	return 0;
}

/*
 * "HOST:PORT" or "[IPv6]:PORT" (rest, after any http://) into a's URL; a
 * wildcard host becomes its loopback one.
 */
static int
addr_host_port(const char *rest, struct ctl_addr *a, const char **why)
{
	char		 host[128], port[8];
	const char	*colon, *pend;
	size_t		 hlen, plen;
	long		 p;

	if (rest[0] == '[') {
		const char *rb = strchr(rest, ']');

		if (rb == NULL || rb[1] != ':') {
			*why = "expected [IPv6]:PORT";
			return -1;
		}
		colon = rb + 1;
	} else if ((colon = strrchr(rest, ':')) == NULL ||
	    memchr(rest, ':', (size_t)(colon - rest)) != NULL) {
		*why = "expected HOST:PORT, [IPv6]:PORT or unix:/PATH";
		return -1;
	}
	hlen = (size_t)(colon - rest);
	if (hlen >= sizeof(host)) {
		*why = "host too long";
		return -1;
	}
	memcpy(host, rest, hlen);
	host[hlen] = '\0';
	/* A trailing slash of a URL is fine; a path is not ours to choose. */
	pend = colon + 1 + strcspn(colon + 1, "/");
	plen = (size_t)(pend - (colon + 1));
	if (*pend == '/' && pend[1] != '\0') {
		*why = "expected HOST:PORT, without a path";
		return -1;
	}
	if (plen >= sizeof(port))
		plen = 0;
	memcpy(port, colon + 1, plen);
	port[plen] = '\0';
	p = digits(port) ? strtol(port, NULL, 10) : 0;
	if (p < 1 || p > 65535) {
		*why = "the port must be 1-65535";
		return -1;
	}
	if (strchr(host, '/') != NULL || strchr(host, '@') != NULL ||
	    strchr(host, '?') != NULL || strchr(host, '#') != NULL) {
		*why = "expected HOST:PORT";
		return -1;
	}
	/* What a listener binds to every address of is reached on loopback. */
	if (host[0] == '\0' || strcmp(host, "*") == 0 ||
	    strcmp(host, "0.0.0.0") == 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	else if (strcmp(host, "[::]") == 0)
		snprintf(host, sizeof(host), "[::1]");
	snprintf(a->url, sizeof(a->url), "http://%s:%s", host, port);
	return 0;
}

int
ctl_addr_parse(const char *s, struct ctl_addr *a, const char **why)
{
	size_t	len;

	memset(a, 0, sizeof(*a));
	/*
	 * memcpy, not snprintf "%s": gcc's -fsanitize=undefined at -O2 sees
	 * a NULL s in its format checks (false, but -Werror).
	 */
	if ((len = strlen(s)) >= sizeof(a->text)) {
		*why = "too long";
		return -1;
	}
	memcpy(a->text, s, len + 1);
	if (strncmp(s, "unix:", 5) == 0)
		return addr_unix(s, len, a, why);
	if (strncmp(s, "https://", 8) == 0) {
		*why = "lbagent's API is plain HTTP (http://HOST:PORT)";
		return -1;
	}
	return addr_host_port(strncmp(s, "http://", 7) == 0 ? s + 7 : s, a,
	    why);
}

bool
ctl_addr_is_local(const struct ctl_addr *a)
{
	struct addr	 u;
	const char	*why;

	if (a->unix_path[0] != '\0')
		return true;
	return addr_parse(a->url, &u, &why) == 0 && addr_host_loopback(u.host);
}

int
ctl_addr_list(const char *const *entries, size_t n, struct ctl_addr *out,
    size_t max, const char **bad, const char **why)
{
	struct ctl_addr	a;
	size_t		i, count = 0;
	int		pass;

	/* Two passes keep the config's order within unix and within TCP. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			if (ctl_addr_parse(entries[i], &a, why) == -1) {
				*bad = entries[i];
				return -1;
			}
			if ((a.unix_path[0] != '\0') != (pass == 0))
				continue;
			if (count < max)
				out[count++] = a;
		}
	}
	return (int)count;
}

struct body {
	char	*buf;
	size_t	 len;
	bool	 too_big;
};

static size_t
body_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct body	*b = arg;
	size_t		 n = size * nmemb;
	char		*nbuf;

	if (b->len + n > BODY_MAX) {
		b->too_big = true;
		return 0;
	}
	if ((nbuf = realloc(b->buf, b->len + n + 1)) == NULL)
		return 0;
	b->buf = nbuf;
	memcpy(b->buf + b->len, data, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return n;
}

/* Why connecting to a unix socket failed, from what is at its path. */
static enum ctl_http_result
unix_failure(const struct ctl_addr *a, char *err, size_t errsize)
{
	struct stat	st;

	if (stat(a->unix_path, &st) == -1) {
		snprintf(err, errsize, "no socket at %s", a->unix_path);
		return errno == EACCES ? CTL_HTTP_DENIED : CTL_HTTP_NOT_RUNNING;
	}
	if (access(a->unix_path, W_OK) == -1 && errno == EACCES) {
		snprintf(err, errsize, "%s: permission denied", a->unix_path);
		return CTL_HTTP_DENIED;
	}
	snprintf(err, errsize, "nothing accepts on %s", a->unix_path);
	return CTL_HTTP_NOT_RUNNING;
}

/* The handle's options: the URL, bounds, never a proxy, HTTP only. */
static void
easy_setup(CURL *e, const struct ctl_addr *a, const char *url, bool post,
    char *errbuf, struct body *b)
{
	curl_easy_setopt(e, CURLOPT_URL, url);
	if (post) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, 0L);
	}
	if (a->unix_path[0] != '\0')
		curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, a->unix_path);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_PROXY, "");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)CTL_REQUEST_TIMEOUT_MS);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)CTL_REQUEST_TIMEOUT_MS);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "lbagentctl/" LBAGENT_VERSION);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, body_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, b);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http");
#else
	curl_easy_setopt(e, CURLOPT_PROTOCOLS, (long)CURLPROTO_HTTP);
#endif
}

/*
 * "Authorization: Bearer token" on the handle: 0, or -1 out of memory.
 * *auth and *headers are the caller's to free (auth wiped first).
 */
static int
easy_token(CURL *e, const char *token, char **auth,
    struct curl_slist **headers)
{
	size_t	n = strlen(token) + sizeof("Authorization: Bearer ");

	if ((*auth = malloc(n)) == NULL)
		return -1;
	snprintf(*auth, n, "Authorization: Bearer %s", token);
	if ((*headers = curl_slist_append(NULL, *auth)) == NULL)
		return -1;
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, *headers);
	return 0;
}

/* What came of curl_easy_perform: the answer taken, or err set. */
static enum ctl_http_result
outcome(CURL *e, CURLcode rc, const struct ctl_addr *a, struct body *b,
    const char *errbuf, long *status, char **body, char *err,
    size_t errsize)
{
	enum ctl_http_result	r;

	switch (rc) {
	case CURLE_OK:
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
		*body = b->buf != NULL ? b->buf : strdup("");
		b->buf = NULL;
		r = *body != NULL ? CTL_HTTP_OK : CTL_HTTP_ERROR;
		if (r != CTL_HTTP_OK)
			snprintf(err, errsize, "out of memory");
		return r;
	case CURLE_COULDNT_CONNECT:
		if (a->unix_path[0] != '\0')
			return unix_failure(a, err, errsize);
		snprintf(err, errsize, "connection refused");
		return CTL_HTTP_NOT_RUNNING;
	case CURLE_OPERATION_TIMEDOUT:
		snprintf(err, errsize, "no answer within %d ms",
		    CTL_REQUEST_TIMEOUT_MS);
		return CTL_HTTP_TIMEOUT;
	default:
		snprintf(err, errsize, "%s", b->too_big ? "answer too large" :
		    errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc));
		return CTL_HTTP_ERROR;
	}
}

/* One request, GET or POST (without a body). */
static enum ctl_http_result
request(const struct ctl_addr *a, const char *token, bool post,
    const char *path, long *status, char **body, char *err, size_t errsize)
{
	char			 url[256], errbuf[CURL_ERROR_SIZE];
	char			*auth = NULL;
	struct curl_slist	*headers = NULL;
	struct body		 b = { NULL, 0, false };
	enum ctl_http_result	 r = CTL_HTTP_ERROR;
	CURL			*e;

	*body = NULL;
	*status = 0;
	errbuf[0] = '\0';
	snprintf(url, sizeof(url), "%s%s", a->url, path);
	if ((e = curl_easy_init()) == NULL) {
		snprintf(err, errsize, "cannot start libcurl");
		return CTL_HTTP_ERROR;
	}
	easy_setup(e, a, url, post, errbuf, &b);
	if (token != NULL && easy_token(e, token, &auth, &headers) == -1)
		snprintf(err, errsize, "out of memory");
	else
		r = outcome(e, curl_easy_perform(e), a, &b, errbuf, status,
		    body, err, errsize);
	curl_slist_free_all(headers);
	if (auth != NULL) {
		/* The token is a secret: do not leave it in freed memory. */
		memset(auth, 0, strlen(auth));
		free(auth);
	}
	free(b.buf);
	curl_easy_cleanup(e);
	return r;
}

enum ctl_http_result
ctl_http_get(const struct ctl_addr *a, const char *token, const char *path,
    long *status, char **body, char *err, size_t errsize)
{
	return request(a, token, false, path, status, body, err, errsize);
}

enum ctl_http_result
ctl_http_post(const struct ctl_addr *a, const char *token, const char *path,
    long *status, char **body, char *err, size_t errsize)
{
	return request(a, token, true, path, status, body, err, errsize);
}

char *
ctl_read_token(const char *path, const char **why)
{
	char	 buf[HTTP_TOKEN_MAX + 1], *tok;

	/* The daemon reads it the same way, or the two would not agree. */
	if (http_api_token_read(path, buf, why) == -1)
		return NULL;
	tok = strdup(buf);
	explicit_bzero(buf, sizeof(buf));
	if (tok == NULL)
		*why = "out of memory";
	return tok;
}
