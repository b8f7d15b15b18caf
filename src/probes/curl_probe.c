/* One libcurl transfer per probe run, shared by the http and docker kinds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lbagent/core/text.h"
#include "lbagent/sys/log.h"
#include "lbagent/sys/worker.h"
#include "curl_probe.h"
#include "json_body.h"

/* Across runs of one probe: the failure whose libcurl text we last logged. */
struct curl_probe_keep {
	CURLcode	last;
};

static size_t
curl_probe_write(char *data, size_t size, size_t n, void *arg)
{
	struct curl_probe	*cp = arg;
	size_t			 len = size * n, cap;
	char			*p;

	if (!cp->keep_body) {
		/* Read, not kept, and not for ever: an endless body ends here. */
		if (len > CURL_PROBE_BODY_MAX - cp->seen) {
			cp->enough = true;
			return 0;
		}
		cp->seen += len;
		return len;
	}
	if (len > CURL_PROBE_BODY_MAX - cp->len) {
		cp->too_big = true;
		return 0;	/* libcurl stops with CURLE_WRITE_ERROR */
	}
	if (cp->len + len > cp->cap) {
		for (cap = cp->cap ? cp->cap : 4096; cap < cp->len + len;)
			cap *= 2;
		if (cap > CURL_PROBE_BODY_MAX)
			cap = CURL_PROBE_BODY_MAX;
		if ((p = realloc(cp->body, cap)) == NULL) {
			cp->no_memory = true;
			return 0;
		}
		cp->body = p;
		cp->cap = cap;
	}
	memcpy(cp->body + cp->len, data, len);
	cp->len += len;
	return len;
}

/* Counts the response's header bytes; past the bound, stops the transfer. */
static size_t
curl_probe_header(char *data, size_t size, size_t n, void *arg)
{
	struct curl_probe	*cp = arg;
	size_t			 len = size * n;

	(void)data;
	if (len > CURL_PROBE_HEADERS_MAX - cp->header_len) {
		cp->headers_too_big = true;
		return 0;	/* libcurl stops with CURLE_WRITE_ERROR */
	}
	cp->header_len += len;
	return len;
}

/*
 * libcurl's socket, made here: libcurl keeps no errno of a failed
 * socket(), and without one lbagent's own shortage of descriptors would
 * read as the server's failure to answer.
 */
static curl_socket_t
curl_probe_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct curl_probe	*cp = arg;
	int			 fd;

	(void)purpose;
	fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
	if (fd == -1) {
		cp->socket_errno = errno;
		return CURL_SOCKET_BAD;
	}
	return fd;
}

struct curl_probe *
curl_probe_new(struct probe_run *run, const char *url, bool keep_body)
{
	struct curl_probe	*cp;
	CURL			*e;

	if (run->keep == NULL)
		run->keep = calloc(1, sizeof(struct curl_probe_keep));
	if ((cp = calloc(1, sizeof(*cp))) == NULL)
		return NULL;
	cp->run = run;
	cp->keep_body = keep_body;
	if ((cp->easy = e = curl_easy_init()) == NULL) {
		free(cp);
		return NULL;
	}
	/* Only out of memory fails these; the transfer would then fail. */
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_PROXY, "");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
	curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "lbagent/" LBAGENT_VERSION);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, cp->errbuf);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, curl_probe_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, cp);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, curl_probe_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, cp);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, curl_probe_socket);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, cp);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(e, CURLOPT_PROTOCOLS,
	    (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	/*
	 * The scheduler owns the timeout and says "timed out after 2s"; this
	 * is only a backstop, a second later, so that the reason of a timed
	 * out run does not depend on which timer fired first.
	 */
	if (run->timeout_ms > 0)
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
		    (long)run->timeout_ms + 1000);
	return cp;
}

void
curl_probe_free(struct curl_probe *cp)
{
	if (cp == NULL)
		return;
	worker_free(cp->work);
	curl_easy_cleanup(cp->easy);
	free(cp->body);
	free(cp);
}

int
curl_probe_start(struct curl_probe *cp, curl_loop_done_fn done)
{
	if (cp->run->env == NULL || cp->run->env->curl == NULL)
		return -1;
	if (curl_loop_add(cp->run->env->curl, cp->easy, done, cp) == -1)
		return -1;
	cp->run->data = cp;
	return 0;
}

int
curl_probe_offload(struct curl_probe *cp, void (*fn)(void *),
    void (*done)(void *), void (*release)(void *), void *arg)
{
	json_body_init();	/* on the loop, before any thread parses */
	cp->work = worker_start(cp->run->env->base, fn, done, release, arg);
	if (cp->work == NULL)
		return -1;
	cp->run->data = cp;
	return 0;
}

void
curl_probe_thread_failed(int err, char *reason, size_t size,
    enum probe_result *result)
{
	const char	*local = probe_errno_local(err);

	if (local != NULL)
		snprintf(reason, size, "cannot start a thread: %s (%s)",
		    strerror(err), local);
	else
		snprintf(reason, size, "cannot start a thread: %s",
		    strerror(err));
	*result = local != NULL ? PROBE_UNKNOWN : PROBE_CRIT;
}

void
curl_probe_cancel(struct probe_run *run)
{
	struct curl_probe	*cp = run->data;

	if (cp == NULL)
		return;
	/* Judging the body: the transfer is over, the thread abandoned. */
	if (cp->work == NULL)
		curl_loop_remove(run->env->curl, cp->easy);
	curl_probe_free(cp);
	run->data = NULL;
}

void
curl_probe_keep_free(void *keep)
{
	free(keep);
}

/* Connecting failed: what the connect(2) said. */
static const char *
connect_error(CURL *easy)
{
	long	err = 0;

	curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &err);
	switch (err) {
	case ECONNREFUSED:	return "connection refused";
	case EHOSTUNREACH:	return "host unreachable";
	case ENETUNREACH:	return "network unreachable";
	case ETIMEDOUT:		return "timed out";
	case EACCES:		return "permission denied";
	case ENOENT:		return "no such socket";
	default:		return "cannot connect";
	}
}

/*
 * When lbagent cannot make a descriptor now (EMFILE, ENFILE), what
 * probe_errno_local says of it; NULL when it can.
 */
static const char *
out_of_descriptors(void)
{
	int	fd, err;

	if ((fd = eventfd(0, EFD_CLOEXEC)) >= 0) {
		close(fd);
		return NULL;
	}
	err = errno;
	return err == EMFILE || err == ENFILE ? probe_errno_local(err) : NULL;
}

const char *
curl_probe_local(struct curl_probe *cp, CURLcode rc)
{
	const char	*local;

	if (rc == CURLE_OUT_OF_MEMORY ||
	    (rc == CURLE_WRITE_ERROR && cp->no_memory))
		return probe_errno_local(ENOMEM);
	if (cp->socket_errno != 0 &&
	    (local = probe_errno_local(cp->socket_errno)) != NULL) {
		snprintf(cp->local, sizeof(cp->local), "socket: %s (%s)",
		    strerror(cp->socket_errno), local);
		return cp->local;
	}
	if (rc != CURLE_COULDNT_RESOLVE_HOST)
		return NULL;
	/*
	 * A resolver without descriptors (for its socketpair, or for the
	 * getaddrinfo in its thread: /etc/hosts, a DNS socket) fails as if the
	 * name did not exist; libcurl 8.22 says only "Could not resolve host".
	 * Whether lbagent has a descriptor left is what tells them apart.
	 */
	if ((local = out_of_descriptors()) != NULL) {
		snprintf(cp->local, sizeof(cp->local), "cannot resolve host (%s)",
		    local);
		return cp->local;
	}
	/* Older libcurl says when its resolver thread could not start. */
	if (strstr(cp->errbuf, "thread failed to start") != NULL)
		return "cannot start a resolver thread (lbagent out of "
		    "descriptors or threads)";
	return NULL;
}

/*
 * The short reason for rc; *detail when libcurl's own text may say more
 * than it (then worth logging at info, else at debug).
 */
static const char *
error_reason(const struct curl_probe *cp, CURLcode rc, bool *detail)
{
	const char	*reason;

	*detail = false;
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		reason = connect_error(cp->easy);
		break;
	case CURLE_OPERATION_TIMEDOUT:
		reason = "timed out";
		break;
	case CURLE_COULDNT_RESOLVE_HOST:
		reason = "cannot resolve host";
		break;
	case CURLE_PEER_FAILED_VERIFICATION:
		reason = "TLS: certificate verify failed";
		*detail = true;
		break;
	case CURLE_SSL_CONNECT_ERROR:
		reason = "TLS: handshake failed";
		*detail = true;
		break;
	case CURLE_SSL_CACERT_BADFILE:	/* ca-certificates not installed */
		reason = "TLS: no CA certificates to verify with";
		*detail = true;
		break;
	case CURLE_GOT_NOTHING:
		reason = "empty reply";
		break;
	case CURLE_PARTIAL_FILE:
		reason = "connection closed mid-response";
		break;
	case CURLE_RECV_ERROR:
		reason = "receive failed";
		*detail = true;
		break;
	case CURLE_SEND_ERROR:
		reason = "send failed";
		*detail = true;
		break;
	case CURLE_WEIRD_SERVER_REPLY:
	case CURLE_UNSUPPORTED_PROTOCOL:	/* an HTTP/0.9 answer */
		reason = "not an HTTP reply";
		break;
	case CURLE_OUT_OF_MEMORY:
		reason = "out of memory";
		break;
	case CURLE_WRITE_ERROR:
		if (cp->headers_too_big) {
			reason = "headers larger than " CURL_PROBE_HEADERS_TEXT;
			break;
		}
		if (cp->too_big) {
			reason = "body larger than " CURL_PROBE_BODY_TEXT;
			break;
		}
		if (cp->no_memory) {
			reason = "out of memory";
			break;
		}
		/* FALLTHROUGH */
	default:
		/* libcurl's static text names no host, user or header. */
		reason = curl_easy_strerror(rc);
		*detail = true;
		break;
	}
	return reason;
}

const char *
curl_probe_error(struct curl_probe *cp, CURLcode rc)
{
	struct curl_probe_keep	*keep = cp->run->keep;
	const char		*reason;
	bool			 detail;
	char			 esc[4 * CURL_ERROR_SIZE + 1];

	reason = error_reason(cp, rc, &detail);
	if (keep != NULL && keep->last != rc && cp->errbuf[0] != '\0') {
		text_escape(esc, cp->errbuf, strnlen(cp->errbuf,
		    sizeof(cp->errbuf)));
		/*
		 * The URL given to libcurl carries no userinfo and no header
		 * reaches its messages, so its text is safe to log.
		 */
		if (detail)
			log_info("probe %s: libcurl: %s", cp->run->name, esc);
		else
			log_debug("probe %s: libcurl: %s", cp->run->name, esc);
	}
	if (keep != NULL)
		keep->last = rc;
	return reason;
}

void
curl_probe_answered(struct curl_probe *cp)
{
	struct curl_probe_keep	*keep = cp->run->keep;

	if (keep != NULL)
		keep->last = CURLE_OK;
}

CURLcode
curl_probe_result(const struct curl_probe *cp, CURLcode rc)
{
	return rc == CURLE_WRITE_ERROR && cp->enough ? CURLE_OK : rc;
}
