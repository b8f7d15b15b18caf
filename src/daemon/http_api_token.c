/* The HTTP API's bearer token: its file read, and compared. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "lbagent/daemon/http_api_token.h"

bool
http_api_token_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	unsigned char	diff = alen != blen;
	size_t		i;

	/* Over the presented token's bytes, whatever they hold. */
	for (i = 0; i < alen; i++)
		diff |= (unsigned char)a[i] ^ (unsigned char)(i < blen ? b[i] : 0);
	return diff == 0 && blen > 0;
}

ssize_t
http_api_token_read(const char *path, char *out, const char **why)
{
	char	buf[HTTP_TOKEN_MAX + 2], *start, *end;
	ssize_t	n;
	size_t	len;
	int	fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK)) == -1) {
		*why = strerror(errno);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n == -1) {
		*why = strerror(errno);
		return -1;
	}
	buf[n] = '\0';
	start = buf + strspn(buf, " \t");
	end = start + strcspn(start, "\r\n");
	while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	len = (size_t)(end - start);
	if (len == 0)
		*why = "empty";
	else if (len > HTTP_TOKEN_MAX)
		*why = "longer than " HTTP_TOKEN_MAX_TEXT " bytes";
	else {
		memcpy(out, start, len);
		out[len] = '\0';
	}
	explicit_bzero(buf, sizeof(buf));
	return len == 0 || len > HTTP_TOKEN_MAX ? -1 : (ssize_t)len;
}
